"""Compile-time scaling: the whole ``rlx-compile`` (ONNX import, the default cpu pipeline,
memory planning, plan check, the reports and pictures) on generated branchy ONNX graphs of
2k to 50k nodes, each size in a fresh process so its peak RSS is its own.

    python bench/scale.py                       # 2k, 5k, 10k, 20k, 50k nodes
    python bench/scale.py --sizes 2000 5000     # chosen sizes
    python bench/scale.py --profile 20000       # cProfile of one size (top 30, cumulative)

The graph repeats a residual block of ten nodes over a [4, 16] activation: a MatMul and
bias Add, three parallel branches (Relu; Sigmoid times the input, as SiLU is written;
Tanh), their sum, the residual Add, and every fourth block a ReduceMean/Sub/Mul
normalisation whose mean is also kept as a graph output, so values stay live across
blocks and the memory plan has long and short lifetimes. Weights are shared per eight
blocks to keep the file small. The growth exponent is the least-squares slope of
log(time) over log(nodes).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

WIDTH = 16
BLOCK_NODES = 10


def branchy_model(nodes: int, seed: int = 0) -> bytes:
    """A serialized ONNX model of about ``nodes`` nodes (see the module docstring)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits = []
    for i in range(8):
        w = rng.standard_normal((WIDTH, WIDTH)).astype(np.float32) * 0.2
        b = rng.standard_normal(WIDTH).astype(np.float32) * 0.1
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "axes"))
    graph_nodes = []
    outputs = []
    x = "x"
    for k in range(max(1, nodes // BLOCK_NODES)):
        p = f"k{k}_"
        w, b = f"w{k % 8}", f"b{k % 8}"
        graph_nodes += [
            helper.make_node("MatMul", [x, w], [p + "mm"]),
            helper.make_node("Add", [p + "mm", b], [p + "h"]),
            helper.make_node("Relu", [p + "h"], [p + "r"]),
            helper.make_node("Sigmoid", [p + "h"], [p + "s"]),
            helper.make_node("Mul", [p + "h", p + "s"], [p + "silu"]),
            helper.make_node("Tanh", [p + "h"], [p + "t"]),
            helper.make_node("Add", [p + "r", p + "silu"], [p + "a1"]),
            helper.make_node("Add", [p + "a1", p + "t"], [p + "a2"]),
        ]
        if k % 4 == 3:
            graph_nodes += [
                helper.make_node("ReduceMean", [p + "a2", "axes"], [p + "mean"], keepdims=1),
                helper.make_node("Sub", [p + "a2", p + "mean"], [p + "y"]),
            ]
            outputs.append(p + "mean")
        else:
            graph_nodes += [
                helper.make_node("Mul", [p + "a2", x], [p + "g"]),
                helper.make_node("Add", [p + "g", x], [p + "y"]),
            ]
        x = p + "y"
    outputs.append(x)
    graph = helper.make_graph(
        graph_nodes,
        "branchy",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (4, WIDTH))],
        [
            helper.make_tensor_value_info(
                o, TensorProto.FLOAT, (4, 1) if o.endswith("mean") else (4, WIDTH)
            )
            for o in outputs
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return onnx.shape_inference.infer_shapes(model).SerializeToString()


def _child(nodes: int, profile: bool) -> None:
    """Compile one size in this process and print one JSON line."""
    import contextlib
    import io
    import resource
    import time

    from rlx_compile.tools.compile import run

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"branchy{nodes}.onnx"
        path.write_bytes(branchy_model(nodes))
        argv = [str(path), "--target", "cpu", "--out", str(Path(tmp) / "out"), "--json"]
        start, cpu_start = time.perf_counter(), time.process_time()
        if profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            with contextlib.redirect_stdout(io.StringIO()):
                prof.runcall(run, argv)
            pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
        else:
            with contextlib.redirect_stdout(io.StringIO()):
                run(argv)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"nodes": nodes, "seconds": seconds, "cpu": cpu, "peak_rss_mib": rss_mib}))


def growth_exponent(rows: list[dict[str, float]]) -> float:
    """The least-squares slope of log(cpu seconds) over log(nodes)."""
    xs = np.log([r["nodes"] for r in rows])
    ys = np.log([r["cpu"] for r in rows])
    return float(np.polyfit(xs, ys, 1)[0]) if len(rows) > 1 else math.nan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000, 20000, 50000])
    ap.add_argument("--profile", type=int, metavar="NODES", help="profile one size")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        _child(args.child, profile=False)
        return
    if args.profile is not None:
        _child(args.profile, profile=True)
        return
    rows = []
    print(f"{'nodes':>7} {'wall s':>8} {'cpu s':>8} {'cpu s/1k':>9} {'peak RSS MiB':>13}")
    for n in args.sizes:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(n)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            sys.exit(f"size {n} failed:\n{proc.stderr}")
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(
            f"{n:>7} {row['seconds']:>8.2f} {row['cpu']:>8.2f} {1000 * row['cpu'] / n:>9.3f} "
            f"{row['peak_rss_mib']:>13.0f}",
            flush=True,
        )
    print(f"growth exponent (cpu time ~ nodes^k): k = {growth_exponent(rows):.2f}")


if __name__ == "__main__":
    main()
