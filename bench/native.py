"""Native code against onnxruntime (one thread) and the reference executor, in one run.

    python bench/native.py                   # full-size models (built with PyTorch first)
    python bench/native.py --small           # the small committed models
    python bench/native.py --models DIR --only bert --runs 50
    python bench/native.py --wild tashkeel_bilstm --wild oww_hey_mycroft   # bench/wild.py's

For each model, same input everywhere, medians of ``--runs`` runs after warm-up (native
and onnxruntime alternate, so they share the machine's load):
- ``native``: ``CompilePipeline(target="cpu", weights_in_arena=False)`` then
  ``CompileResult.build(threads=1)`` (the model's C translation unit against the kernel
  library and scipy-openblas32 with one thread), run through ``NativeModel.run``;
- ``ort``: ``onnxruntime.InferenceSession`` (ORT_ENABLE_ALL, intra_op_num_threads=1);
- ``ref``: the reference arena executor (``CompileResult.run``), fewer runs;
- memory: the arena (planned + per-op scratch) and weights, against the peak RSS (VmHWM)
  of the standalone runner (``main.c`` of ``--emit c``, linked against the built
  libraries: no Python) over one run, which also holds the code, libc, OpenBLAS's
  buffers, the input and output copies;
- times: compile (import + pass pipeline), C build of the model (the kernel library is
  built once per toolchain: reported apart), and the largest difference from
  onnxruntime relative to its scale (over every output).
``--wild NAME`` measures ``bench/wild.py``'s model NAME instead (the static copy and
feeds ``bench/peers.py`` uses; ``--torch-python`` for the exported ones).
The geometric mean of native / ort closes the table.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

from onnx_models import model_input  # bench/ is the script's directory
from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.native import BuildTimes, host_toolchain, kernel_dir, runtime_library
from rlx_compile.native.bundle import template
from rlx_compile.native.toolchain import build_runtime
from wild import rel_error

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["resnet18", "mobilenetv2", "resnet50", "vit", "bert", "llama"]


def median_ms(n: int, *fns: Callable[[], Any]) -> list[float]:
    """Median ms of each function over ``n`` rounds; each round runs every function once,
    in turn, so that they share the machine's load."""
    for fn in fns:
        fn()  # warm-up
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(n):
        for fn, ts in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - start)
    return [float(np.median(ts)) * 1e3 for ts in times]


def runner_peak_rss(native: Any, feeds: dict[str, np.ndarray]) -> float:
    """Peak RSS (MB) of the standalone runner over one run of the built model."""
    assert native.source_dir is not None
    name = native.program.graph.lower()
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    runtime = build_runtime(host_toolchain())
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "main.c").write_text(template("main.c.in", name))
        native.weights_blob().tofile(d / "weights.bin")
        inputs = []
        for i, t in enumerate(native.program.inputs):
            inputs.append(str(d / f"input{i}.npy"))
            np.save(inputs[-1], feeds[t.name])
        exe = d / "runner"
        tc = host_toolchain()
        lib_dir = native.source_dir
        cmd = [
            *tc.cc, *tc.cflags, "-std=c99", f"-I{kernel_dir()}", f"-I{lib_dir}",
            str(d / "main.c"), "-o", str(exe), f"-L{lib_dir}", f"-l{name}",
            f"-Wl,-rpath,{lib_dir}", f"-Wl,-rpath,{runtime.parent}",
        ]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        run = subprocess.run(
            [str(exe), "-w", str(d / "weights.bin"), "-o", str(d), *inputs],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        peak = int(run.stdout.rsplit("peak RSS ", 1)[1].split()[0])  # KiB, VmHWM
    return peak / 1024


def bench(
    path: Path, runs: int, ref_runs: int, feeds: dict[str, np.ndarray] | None = None
) -> dict[str, Any]:
    start = time.perf_counter()
    model = onnx.load(str(path))
    module = import_model(model)
    params = param_values(model, module)
    result = CompilePipeline(target="cpu", weights_in_arena=False, keep_stages=False).compile(
        module
    )
    compile_s = time.perf_counter() - start
    native = result.build(threads=1)
    if feeds is None:
        feeds = dict([model_input(model)])
    got = native.run(feeds, params)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    want = dict(zip(names, session.run(None, feeds), strict=True))
    row: dict[str, Any] = {
        "model": path.stem,
        "compile_s": compile_s,
        "build_s": native.build_times.model,
        "ref_ms": median_ms(ref_runs, lambda: result.run(feeds, params))[0],
        "error": max(rel_error(got[n], w) for n, w in want.items()),
        "arena_mb": native.arena_bytes / 2**20,
        "planned_mb": native.planned_arena_bytes / 2**20,
        "weights_mb": native.weights_bytes / 2**20,
    }
    row["native_ms"], row["ort_ms"] = median_ms(
        runs, lambda: native.run(feeds), lambda: session.run(None, feeds)
    )
    row["rss_mb"] = runner_peak_rss(native, feeds)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="the committed small models")
    ap.add_argument("--models", type=Path, default=ROOT / "bench" / ".models")
    ap.add_argument("--only", action="append", help="only these models")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--ref-runs", type=int, default=3)
    ap.add_argument("--wild", action="append", default=[], help="bench/wild.py's model NAME")
    ap.add_argument("--torch-python", default=os.environ.get("RLX_TORCH_PYTHON", sys.executable))
    args = ap.parse_args()
    directory = ROOT / "examples" / "models" if args.small else args.models
    cases: list[tuple[Path, dict[str, np.ndarray] | None]] = []
    for name in args.wild:
        from peers import wild_model  # bench/ is the script's directory

        path, model_feeds = wild_model(name, args.torch_python)
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        cases.append((path, model_feeds(session)))
    names = [] if args.wild else [n for n in NAMES if not args.only or n in args.only]
    cases += [(directory / f"{n}.onnx", None) for n in names]
    missing = [n for n in names if not (directory / f"{n}.onnx").exists()]
    if missing and not args.small:
        subprocess.run(
            [sys.executable, str(ROOT / "examples/models/make_models.py"), "--full", "--out",
             str(directory), *[a for n in missing for a in ("--only", n)]],
            check=True,
        )  # fmt: skip
    times = BuildTimes()
    runtime_library(times=times)
    print(f"kernel library: built in {times.runtime:.1f} s" if times.runtime else
          "kernel library: cached")  # fmt: skip
    print(f"{os.cpu_count()} cores; native BLAS and onnxruntime with one thread\n")
    header = (
        f"{'model':<24} {'compile s':>9} {'C build s':>9} {'native ms':>10} {'ort ms':>9} "
        f"{'nat/ort':>7} {'ref ms':>9} {'ref/nat':>8} {'arena MB':>9} {'weights MB':>10} "
        f"{'peak RSS MB':>11} {'err':>8}"
    )
    print(header)
    ratios = []
    for path, model_feeds in cases:
        r = bench(path, args.runs, args.ref_runs, model_feeds)
        ratio = r["native_ms"] / r["ort_ms"]
        ratios.append(ratio)
        print(
            f"{r['model']:<24} {r['compile_s']:>9.2f} {r['build_s']:>9.2f} {r['native_ms']:>10.3f} "
            f"{r['ort_ms']:>9.3f} {ratio:>7.2f} {r['ref_ms']:>9.1f} "
            f"{r['ref_ms'] / r['native_ms']:>8.1f} {r['arena_mb']:>9.2f} {r['weights_mb']:>10.2f} "
            f"{r['rss_mb']:>11.1f} {r['error']:>8.1e}",
            flush=True,
        )
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"\ngeometric mean native / onnxruntime (1 thread): {geomean:.2f}x")


if __name__ == "__main__":
    main()
