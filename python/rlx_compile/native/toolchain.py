"""Building native code with the system C compiler, cached by fingerprint.

The kernel library (``rlx_compile/native/c``, shipped as package data so that a bundle
and a build read the same files) is compiled once per toolchain into
``librlx_runtime.so``; a model's translation unit is compiled against it into its own
shared library. Both live under ``$RLX_CACHE_DIR/native`` (default: the user cache
directory, ``$XDG_CACHE_HOME/rlx-compile`` or ``~/.cache/rlx-compile``), keyed by a
blake2b of everything that goes into them: the sources, the compiler's identity
(``cc --version``), the flags and the BLAS. Builds write a private directory and rename
it into place, so concurrent builds of the same key never see half a library.

``CC`` and ``CFLAGS`` are respected (default flags ``-O3 -march=native``); the flags the
kernels' semantics need are always added: ``-std=c99 -ffp-contract=off`` (no fused
multiply-adds, so elementwise float ops round like the reference) and ``-fPIC``. BLAS:
``scipy-openblas32`` (the OpenBLAS NumPy's wheels ship), its symbols prefixed
``scipy_``; without it the kernels' portable loops are used.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from rlx_compile import env
from rlx_compile.diagnostics import RlxError

DEFAULT_CFLAGS = ("-O3", "-march=native")
REQUIRED_CFLAGS = ("-std=c99", "-ffp-contract=off", "-fPIC")
LIBRARY_SOURCES = (
    "rlx_convert.c",
    "rlx_ew_float.c",
    "rlx_ew_int.c",
    "rlx_data.c",
    "rlx_ml.c",
    "rlx_reduce.c",
    "rlx_linalg.c",
    "rlx_nn.c",
    "rlx_recurrent.c",
    "rlx_integer.c",
    "rlx_dynamic_quant.c",
)
LIBRARY_HEADERS = ("rlx_runtime.h", "rlx_scalar.h", "rlx_elementwise.h")


class NativeBuildError(RlxError):
    """The C compiler failed (or is missing)."""


def kernel_dir() -> Path:
    """The kernel library's sources (package data)."""
    return Path(str(resources.files("rlx_compile.native") / "c"))


def cache_root() -> Path:
    configured = env.value("CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "rlx-compile"


@dataclass(frozen=True)
class Blas:
    lib_dir: str
    library: str
    prefix: str

    @property
    def defines(self) -> list[str]:
        return ["-DRLX_BLAS", f"-DRLX_BLAS_PREFIX={self.prefix}"]

    @property
    def link(self) -> list[str]:
        return [f"-L{self.lib_dir}", f"-l{self.library}", f"-Wl,-rpath,{self.lib_dir}"]


@cache
def scipy_openblas() -> Blas | None:
    try:
        import scipy_openblas32 as sob
    except ImportError:
        return None
    return Blas(sob.get_lib_dir(), sob.get_library(), "scipy_")


@dataclass(frozen=True)
class Toolchain:
    cc: tuple[str, ...]
    cflags: tuple[str, ...]
    blas: Blas | None
    ldflags: tuple[str, ...] = ()
    identity: str = field(default="", compare=False)
    """``cc --version``, part of every cache key."""

    @property
    def compile_flags(self) -> list[str]:
        defines = self.blas.defines if self.blas else []
        return [*self.cflags, *REQUIRED_CFLAGS, *defines, f"-I{kernel_dir()}"]

    def key(self, *parts: bytes) -> str:
        h = hashlib.blake2b(digest_size=12)
        for piece in (self.cc, self.cflags, self.ldflags, REQUIRED_CFLAGS):
            h.update(repr(piece).encode())
        h.update(repr(self.blas).encode())
        h.update(self.identity.encode())
        for part in parts:
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
        return h.hexdigest()


def host_toolchain(
    cc: str | None = None, cflags: str | None = None, blas: bool = True
) -> Toolchain:
    """The host compiler: ``cc`` (else ``$CC``, else ``cc``), ``cflags`` (else
    ``$CFLAGS``, else -O3 -march=native), scipy-openblas32 when ``blas`` and installed."""
    command = tuple(shlex.split(cc or os.environ.get("CC") or "cc"))
    flags = cflags if cflags is not None else os.environ.get("CFLAGS")
    chosen = tuple(shlex.split(flags)) if flags else DEFAULT_CFLAGS
    return Toolchain(command, chosen, scipy_openblas() if blas else None,
                     identity=_identity(command))  # fmt: skip


@cache
def _identity(cc: tuple[str, ...]) -> str:
    if not cc or shutil.which(cc[0]) is None:
        return ""
    try:
        out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout


def compiler_available(tc: Toolchain | None = None) -> bool:
    tc = tc or host_toolchain()
    return bool(tc.cc) and shutil.which(tc.cc[0]) is not None


def _run(cmd: list[str], what: str) -> None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as err:
        raise NativeBuildError(f"cannot run the C compiler '{cmd[0]}': {err}") from None
    if out.returncode != 0:
        tail = "\n".join((out.stderr or out.stdout).strip().splitlines()[-12:])
        raise NativeBuildError(f"compiling {what} failed ({shlex.join(cmd[:2])} ...):\n{tail}")


def _sources_digest(names: tuple[str, ...]) -> bytes:
    root = kernel_dir()
    return b"".join(name.encode() + (root / name).read_bytes() for name in names)


def _publish(tmp: Path, final: Path) -> None:
    """Move a finished build into place (another process may have won the race)."""
    try:
        os.replace(tmp, final)
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class BuildTimes:
    """Seconds spent in the C compiler (0 for a cache hit)."""

    runtime: float = 0.0
    model: float = 0.0


def build_runtime(tc: Toolchain, times: BuildTimes | None = None) -> Path:
    """``librlx_runtime.so`` for this toolchain (built once, then cached)."""
    if not compiler_available(tc):
        raise NativeBuildError(f"no C compiler: '{tc.cc[0] if tc.cc else ''}' is not on PATH")
    key = tc.key(_sources_digest(LIBRARY_SOURCES + LIBRARY_HEADERS))
    root = cache_root() / "native"
    final = root / f"runtime-{key}"
    lib = final / "librlx_runtime.so"
    if lib.exists():
        return lib
    root.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="runtime-", dir=root))
    try:
        objects = [tmp / name.replace(".c", ".o") for name in LIBRARY_SOURCES]
        cmds = [
            [*tc.cc, *tc.compile_flags, "-c", str(kernel_dir() / src), "-o", str(obj)]
            for src, obj in zip(LIBRARY_SOURCES, objects, strict=True)
        ]
        workers = max(1, min(len(cmds), os.cpu_count() or 1))
        with ThreadPoolExecutor(workers) as pool:
            for future in [pool.submit(_run, cmd, "the kernel library") for cmd in cmds]:
                future.result()
        link = [*tc.cc, "-shared", "-o", str(tmp / "librlx_runtime.so"), *map(str, objects)]
        link += [*(tc.blas.link if tc.blas else []), *tc.ldflags, "-lm"]
        _run(link, "the kernel library")
        _publish(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if times is not None:
        times.runtime = time.perf_counter() - start
    return lib


def build_model(
    files: dict[str, str], name: str, tc: Toolchain, times: BuildTimes | None = None
) -> tuple[Path, Path]:
    """Compile a model's sources (``rlx_<name>.c`` + ``.h``) into a shared library
    linked against the kernel library; returns (library, source directory)."""
    runtime = build_runtime(tc, times)
    key = tc.key(
        str(runtime).encode(), *(n.encode() + t.encode() for n, t in sorted(files.items()))
    )
    root = cache_root() / "native"
    final = root / f"model-{name}-{key}"
    lib = final / f"lib{name}.so"
    if lib.exists():
        return lib, final
    start = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix=f"model-{name}-", dir=root))
    try:
        for fname, text in files.items():
            (tmp / fname).write_text(text)
        cmd = [
            *tc.cc, *tc.compile_flags, "-shared", str(tmp / f"rlx_{name}.c"), "-o",
            str(tmp / f"lib{name}.so"), f"-L{runtime.parent}", "-lrlx_runtime",
            f"-Wl,-rpath,{runtime.parent}", *tc.ldflags, "-lm",
        ]  # fmt: skip
        _run(cmd, f"model {name}")
        _publish(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if times is not None:
        times.model = time.perf_counter() - start
    return lib, final
