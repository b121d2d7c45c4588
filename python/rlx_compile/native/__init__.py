"""Native code for planned graphs: build the C kernel program of a ``lir.graph`` with the
system C compiler and run it in its arena (``NativeModel``).

    model = result.build()                  # CompileResult -> NativeModel (compiled C)
    outputs = model.run({"x": x}, params)

``build(graph, mode="direct")`` skips the per-model C compile and calls the kernels one
by one from Python (the ONNX backend's default for small graphs). The C sources of a
compiled model are in ``model.source_dir``; ``rlx-compile --emit c`` writes a bundle
that builds without Python.
"""

from __future__ import annotations

import ctypes
from functools import cache
from pathlib import Path

from rlx_compile.conversion.lir_to_c import (
    EmitOptions,
    NativeUnsupportedError,
    Program,
    emit_program,
)
from rlx_compile.conversion.lir_to_c.c_source import c_sources
from rlx_compile.dialects import lir
from rlx_compile.native.model import NativeModel, _CompiledLauncher, _DirectLauncher, pack_weights
from rlx_compile.native.toolchain import (
    BuildTimes,
    NativeBuildError,
    Toolchain,
    build_model,
    build_runtime,
    cache_root,
    compiler_available,
    host_toolchain,
    kernel_dir,
)
from rlx_compile.targets import get_target

MODES = ("compiled", "direct")
EMIT_OPTIONS = {"cpu": EmitOptions(), "cortex-m": EmitOptions(im2col=False)}
"""The targets with a C emitter (cortex-m: no im2col scratch, convolutions run direct);
the GPU targets are legalization-only."""


class NativeFallbackWarning(UserWarning):
    """A graph runs on the reference executor instead of native code (the message says
    why: an op without a native kernel, or no C compiler)."""


@cache
def _runtime(lib: Path) -> ctypes.CDLL:
    return ctypes.CDLL(str(lib))


def runtime_library(tc: Toolchain | None = None, times: BuildTimes | None = None) -> ctypes.CDLL:
    """The kernel library, built for the host toolchain if needed, loaded once."""
    return _runtime(build_runtime(tc or host_toolchain(), times))


def native_available() -> bool:
    """Whether native runs are possible here: a C compiler is on PATH and the kernel
    library builds with it."""
    if not compiler_available():
        return False
    try:
        runtime_library()
    except NativeBuildError:
        return False
    return True


def program_of(graph: lir.GraphOp, target: str = "cpu") -> Program:
    """The kernel program of a planned graph for ``target``."""
    options = EMIT_OPTIONS.get(target)
    if options is None:
        known = ", ".join(EMIT_OPTIONS)
        raise NativeBuildError(
            f"target {target} has no native code generator (legalization only; native: {known})"
        )
    return emit_program(graph, get_target(target), options)


def build(
    graph: lir.GraphOp,
    *,
    target: str = "cpu",
    mode: str = "compiled",
    threads: int | None = None,
    cc: str | None = None,
    cflags: str | None = None,
    blas: bool = True,
) -> NativeModel:
    """Build a planned graph for the host: ``mode="compiled"`` compiles its C
    translation unit (cached by fingerprint), ``"direct"`` calls the kernels from
    Python. ``threads`` sets the BLAS thread count (process-wide)."""
    if mode not in MODES:
        raise ValueError(f"unknown native mode '{mode}' (known: {', '.join(MODES)})")
    program = program_of(graph, target)
    tc = host_toolchain(cc, cflags, blas)
    times = BuildTimes()
    runtime = _runtime(build_runtime(tc, times))
    if mode == "direct":
        return NativeModel(program, _DirectLauncher(runtime, program), mode=mode,
                           build_times=times, threads=threads, runtime=runtime)  # fmt: skip
    sources = c_sources(program)
    lib, directory = build_model(sources.files, sources.name, tc, times)
    return NativeModel(
        program, _CompiledLauncher(lib, sources.name), mode=mode, source_dir=directory,
        build_times=times, threads=threads, runtime=runtime,
    )  # fmt: skip


__all__ = [
    "EMIT_OPTIONS",
    "MODES",
    "BuildTimes",
    "NativeBuildError",
    "NativeFallbackWarning",
    "NativeModel",
    "NativeUnsupportedError",
    "Toolchain",
    "build",
    "cache_root",
    "compiler_available",
    "host_toolchain",
    "kernel_dir",
    "native_available",
    "pack_weights",
    "program_of",
    "runtime_library",
]
