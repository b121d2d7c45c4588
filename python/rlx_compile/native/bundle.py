"""A C bundle: everything a user builds and ships without Python.

``write_bundle(graph, directory, params)`` writes the model's translation unit and
header, the weights blob (``weights.bin``; ``weights.c`` as a ``const`` array with
``embed_weights``), the kernel library's sources (``runtime/``), a standalone runner
(``main.c``) and a Makefile; for cortex-m the weights array, a semihosting runner,
startup code, a linker script and a cross Makefile (``rlx_compile.native.cortex_m``).
The directory appears complete or not at all.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from rlx_compile.conversion.lir_to_c import Program
from rlx_compile.conversion.lir_to_c.c_source import c_sources, weights_c
from rlx_compile.dialects import lir
from rlx_compile.native import program_of
from rlx_compile.native.model import pack_weights
from rlx_compile.native.toolchain import LIBRARY_HEADERS, LIBRARY_SOURCES, kernel_dir


def template(name: str, model: str) -> str:
    text = (resources.files("rlx_compile.native") / "templates" / name).read_text()
    return text.replace("@NAME@", model).replace("@UPPER@", model.upper())


def bundle_files(
    program: Program, params: Mapping[str, Any], *, embed_weights: bool = False
) -> dict[str, bytes]:
    """The bundle's files by relative path."""
    sources = c_sources(program)
    blob = pack_weights(program, params).tobytes()
    files = {name: text.encode() for name, text in sources.files.items()}
    files["weights.bin"] = blob
    if embed_weights:
        files["weights.c"] = weights_c(sources.name, blob).encode()
    files["main.c"] = template("main.c.in", sources.name).encode()
    files["Makefile"] = template("Makefile.in", sources.name).encode()
    for name in LIBRARY_SOURCES + LIBRARY_HEADERS:
        files[f"runtime/{name}"] = (kernel_dir() / name).read_bytes()
    return files


def write_files(directory: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` as ``directory`` (replacing it) through a sibling temporary
    directory renamed into place."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}-", dir=directory.parent))
    try:
        for rel, data in files.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        mode = 0o777 & ~_umask()
        for root, dirs, names in os.walk(tmp):
            os.chmod(root, mode)
            for name in names:
                os.chmod(os.path.join(root, name), mode & 0o666)
            del dirs  # walked anyway
        if directory.exists():
            shutil.rmtree(directory)
        os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bundle(
    graph: lir.GraphOp,
    directory: Path,
    params: Mapping[str, Any],
    *,
    target: str = "cpu",
    embed_weights: bool = False,
) -> Program:
    """Write the C bundle of a planned graph; returns its kernel program."""
    program = program_of(graph, target)
    if target == "cortex-m":  # weights in flash: always the const array
        from rlx_compile.native.cortex_m import mcu_files

        files = mcu_files(program, pack_weights(program, params).tobytes())
    else:
        files = bundle_files(program, params, embed_weights=embed_weights)
    write_files(directory, files)
    return program
