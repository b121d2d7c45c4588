"""Cortex-M4F: a planned graph's C built with arm-none-eabi-gcc (newlib-nano, no heap)
for QEMU's ``mps2-an386``, weights in flash, the arena in RAM, run through semihosting.

``mcu_files(program, blob)`` is the bundle (``rlx-compile --target cortex-m --emit c``
writes it); ``build_elf`` links it against the kernel library compiled once per
toolchain (a static archive, cached like the host builds, unused kernels dropped by
``--gc-sections``); ``run_qemu`` feeds the inputs as files, reads the outputs back and
the runner's figures (the stack's high-water mark, painted at reset); ``image_size`` is
the image's flash and RAM.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.conversion.lir_to_c import Program
from rlx_compile.conversion.lir_to_c.c_source import c_sources, weights_c
from rlx_compile.dialects import lir
from rlx_compile.native.toolchain import (
    LIBRARY_HEADERS,
    LIBRARY_SOURCES,
    NativeBuildError,
    _publish,
    _run,
    cache_root,
    kernel_dir,
)

if TYPE_CHECKING:
    from rlx_compile.pipeline import CompileResult

CC = "arm-none-eabi-gcc"
QEMU = "qemu-system-arm"
MACHINE = "mps2-an386"
CPU_FLAGS = ("-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard", "-mthumb")
CFLAGS = (*CPU_FLAGS, "-O2", "-std=c99", "-ffp-contract=off", "-ffunction-sections",
          "-fdata-sections")  # fmt: skip
LDFLAGS = (*CPU_FLAGS, "--specs=nano.specs", "--specs=nosys.specs", "-nostartfiles",
           "-Wl,--gc-sections")  # fmt: skip
TEMPLATES = ("startup.c", "mps2_an386.ld", "main.c.in", "Makefile.in")


def missing_tools() -> str | None:
    """Why Cortex-M images cannot be built and run here (None: they can)."""
    absent = [t for t in (CC, QEMU, f"{CC[:-3]}size") if shutil.which(t) is None]
    if not absent and not _has_newlib_nano():
        absent.append("newlib-nano")
    if absent:
        return (
            f"{', '.join(absent)} not installed (apt-get install gcc-arm-none-eabi "
            "libnewlib-arm-none-eabi qemu-system-arm)"
        )
    return None


def _has_newlib_nano() -> bool:
    """gcc prints a bare name for a library it cannot find, a path for one it can."""
    found = subprocess.run([CC, *CPU_FLAGS, "-print-file-name=libc_nano.a"],
                           capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    return Path(found).is_absolute() and Path(found).is_file()


def _template(name: str) -> str:
    from importlib import resources

    return (resources.files("rlx_compile.native") / "templates" / "cortex_m" / name).read_text()


def mcu_files(program: Program, blob: bytes) -> dict[str, bytes]:
    """The Cortex-M bundle: model, weights as a const array, runner, startup, linker
    script, Makefile and the kernel library's sources."""
    sources = c_sources(program)
    name = sources.name
    files = {k: v.encode() for k, v in sources.files.items()}
    files["weights.c"] = weights_c(name, blob).encode()
    for t in TEMPLATES:
        text = _template(t).replace("@NAME@", name).replace("@UPPER@", name.upper())
        files[t.removesuffix(".in")] = text.encode()
    for src in LIBRARY_SOURCES + LIBRARY_HEADERS:
        files[f"runtime/{src}"] = (kernel_dir() / src).read_bytes()
    return files


def _identity() -> str:
    out = subprocess.run([CC, "--version"], capture_output=True, text=True)
    return out.stdout


def runtime_archive() -> Path:
    """The kernel library compiled for the Cortex-M4F, once (a cached static archive)."""
    h = hashlib.blake2b(digest_size=12)
    h.update(repr(CFLAGS).encode() + _identity().encode())
    for src in LIBRARY_SOURCES + LIBRARY_HEADERS:
        h.update(src.encode() + (kernel_dir() / src).read_bytes())
    root = cache_root() / "native"
    final = root / f"cortex-m-runtime-{h.hexdigest()}"
    archive = final / "librlx_runtime.a"
    if archive.exists():
        return archive
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="cortex-m-runtime-", dir=root))
    try:
        objects = []
        for src in LIBRARY_SOURCES:
            obj = tmp / src.replace(".c", ".o")
            _run([CC, *CFLAGS, f"-I{kernel_dir()}", "-c", str(kernel_dir() / src), "-o", str(obj)],
                 "the kernel library for cortex-m")  # fmt: skip
            objects.append(str(obj))
        _run([f"{CC[:-3]}ar", "rcs", str(tmp / "librlx_runtime.a"), *objects], "the archive")
        _publish(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return archive


def build_elf(files: Mapping[str, bytes], directory: Path) -> Path:
    """Write the bundle into ``directory`` and link its image against the cached kernel
    library (what ``make`` in the bundle does, the library compiled once)."""
    archive = runtime_archive()
    directory.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    name = next(f for f in files if f.startswith("rlx_") and f.endswith(".c"))
    elf = directory / (name.removeprefix("rlx_").removesuffix(".c") + ".elf")
    objects = []
    for src in (name, "weights.c", "main.c", "startup.c"):
        obj = directory / src.replace(".c", ".o")
        _run([CC, *CFLAGS, f"-I{kernel_dir()}", f"-I{directory}", "-c", str(directory / src),
              "-o", str(obj)], f"{src} for cortex-m")  # fmt: skip
        objects.append(str(obj))
    _run([CC, *LDFLAGS, "-T", str(directory / "mps2_an386.ld"), "-o", str(elf), *objects,
          str(archive), "-lm"], "the cortex-m image")  # fmt: skip
    return elf


@dataclass
class ImageSize:
    text: int
    data: int
    bss: int

    @property
    def flash(self) -> int:
        """Code, constants and the weights, plus the initial values of .data."""
        return self.text + self.data

    @property
    def static_ram(self) -> int:
        return self.data + self.bss


def image_size(elf: Path, stack_reserved: int = 0x10000) -> ImageSize:
    """The Berkeley sizes of an image (bss without the reserved stack)."""
    out = subprocess.run([f"{CC[:-3]}size", str(elf)], capture_output=True, text=True, check=True)
    text, data, bss = (int(v) for v in out.stdout.splitlines()[1].split()[:3])
    return ImageSize(text, data, bss - stack_reserved)


@dataclass
class QemuRun:
    outputs: dict[str, np.ndarray]
    stack_bytes: int
    """The stack's high-water mark."""
    line: str


def run_qemu(
    elf: Path, program: Program, inputs: Mapping[str, np.ndarray], timeout: float = 600
) -> QemuRun:
    """Run an image under QEMU in a scratch directory: inputs as input<i>.bin files, the
    outputs read back from <name>.bin."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for i, t in enumerate(program.inputs):
            arr = np.ascontiguousarray(inputs[t.name], dtype=t.dtype.numpy)
            (d / f"input{i}.bin").write_bytes(arr.tobytes())
        cmd = [QEMU, "-M", MACHINE, "-nographic", "-monitor", "none", "-serial", "none",
               "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)]  # fmt: skip
        try:
            run = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise NativeBuildError(f"{elf.name} did not finish under QEMU in {timeout} s") from None
        # semihosting's console output arrives on QEMU's stderr
        lines = [ln for ln in (run.stdout + run.stderr).splitlines() if "rlx: " in ln]
        line = lines[-1][lines[-1].index("rlx: ") :].strip() if lines else ""
        if run.returncode != 0 or not line.startswith("rlx: ok"):
            raise NativeBuildError(
                f"{elf.name} failed under QEMU (status {run.returncode}): "
                f"{line or run.stderr.strip()}"
            )
        outputs = {}
        for t in program.outputs:
            data = (d / f"{t.name}.bin").read_bytes()
            outputs[t.name] = np.frombuffer(data, dtype=t.dtype.numpy).reshape(t.shape).copy()
    stack = int(line.split(" stack ")[1].split()[0])
    return QemuRun(outputs, stack, line)


@dataclass
class McuRun:
    """One compiled graph on the Cortex-M4F: its outputs and memory."""

    outputs: dict[str, np.ndarray]
    size: ImageSize
    program: Program
    stack_bytes: int

    @property
    def ram_bytes(self) -> int:
        """Static RAM (.data + .bss: the arena, the IO buffers) plus the stack used."""
        return self.size.static_ram + self.stack_bytes


def run_on_cortex_m(
    graph: lir.GraphOp, params: Mapping[str, np.ndarray], inputs: Mapping[str, np.ndarray]
) -> McuRun:
    """Build a planned graph for the Cortex-M4F (its kernel program for cortex-m, the
    weights in flash) and run it once under QEMU."""
    from rlx_compile.native import program_of
    from rlx_compile.native.model import pack_weights

    program = program_of(graph, "cortex-m")
    blob = pack_weights(program, params).tobytes()
    with tempfile.TemporaryDirectory() as tmp:
        elf = build_elf(mcu_files(program, blob), Path(tmp))
        run = run_qemu(elf, program, inputs)
        size = image_size(elf)
    return McuRun(run.outputs, size, program, run.stack_bytes)


def random_weights_compile(
    module: ModuleOp, *, quantize: bool, seed: int = 0
) -> tuple[CompileResult, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """A model compiled for cortex-m with random weights (std 0.3) and one random input
    (int8: calibrated on 8 random batches): the result, its params and feeds."""
    from rlx_compile.ir import graph_inputs, graph_params, main_graph
    from rlx_compile.pipeline import CompilePipeline

    rng = np.random.default_rng(seed)
    graph = main_graph(module)
    params = {
        leaf.name: (rng.standard_normal(leaf.type.static_shape()) * 0.3).astype(np.float32)
        for leaf in graph_params(graph)
    }

    def feeds() -> dict[str, np.ndarray]:
        return {
            leaf.name: rng.standard_normal(leaf.type.static_shape()).astype(np.float32)
            for leaf in graph_inputs(graph)
        }

    inputs = feeds()
    extra: dict[str, object] = {}
    if quantize:
        batches = [feeds() for _ in range(8)]
        extra = {"quantize": "int8", "calibration": batches, "calibration_params": params}
    result = CompilePipeline(target="cortex-m", weights_in_arena=False, **extra).compile(module)  # type: ignore[arg-type]
    return result, dict(result.kept_params(params) or {}), inputs


__all__ = [
    "ImageSize",
    "McuRun",
    "QemuRun",
    "build_elf",
    "image_size",
    "mcu_files",
    "missing_tools",
    "random_weights_compile",
    "run_on_cortex_m",
    "run_qemu",
    "runtime_archive",
]
