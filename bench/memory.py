"""Memory planning benchmark: (a) placement speed against the Python twin, (b) scaling,
(c) quality on MiniMalloc's public "challenging" instances, (d) arena against bounds on
models: the example models, a generated 12-layer decoder and, when the ONNX frontend is
installed, the ONNX models under examples/models.

    python bench/memory.py            # full run (a few minutes; 1e6 buffers included)
    python bench/memory.py --quick    # small sizes only

All ratios are measured in the same process. Planning is deterministic (budgets
count steps, not seconds), so the arena numbers repeat exactly; the times do not.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from rlx_compile.memory import (
    check_interval_plan,
    peak_live_bytes,
    plan_intervals,
    plan_intervals_info,
)
from rlx_compile.testing.twins import plan_intervals_py

T = TypeVar("T")
Case = tuple[np.ndarray, np.ndarray, np.ndarray]

MINIMALLOC_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "minimalloc"


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def dnn_like(n: int, seed: int = 0) -> Case:
    """One op per step; outputs mostly die within 1-3 steps (geometric), 5% carry a
    residual-style skip of 5-60 steps, sizes 64 B to 1.5 MiB, and n/1000 buffers live
    the whole graph (inputs, params)."""
    rng = np.random.default_rng(seed)
    births = np.arange(n, dtype=np.int64)
    life = rng.geometric(0.5, n)
    skip = rng.random(n) < 0.05
    life[skip] += rng.integers(5, 60, int(skip.sum()))
    deaths = np.minimum(births + life, n)
    sizes = (2 ** rng.integers(6, 20, n)) * rng.integers(1, 4, n)
    params = max(1, n // 1000)
    births[:params] = 0
    deaths[:params] = n
    return sizes.astype(np.int64), births, deaths


def bench_twin(n: int) -> None:
    print(f"(a) C++ rlx vs the Python twin, {n} DNN-like buffers, alignment 64")
    case = dnn_like(n, seed=1)
    (cpp, cpp_s) = timed(lambda: plan_intervals(*case, alignment=64, strategy="rlx"))
    # Repeat the fast side so the timer resolution does not dominate its number.
    reps = 20
    _, cpp_total = timed(
        lambda: [plan_intervals(*case, alignment=64, strategy="rlx") for _ in range(reps)]
    )
    cpp_s = cpp_total / reps
    (py, py_s) = timed(lambda: plan_intervals_py(*case, alignment=64))
    same = cpp[1] == py[1] and np.array_equal(cpp[0], py[0])
    print(f"    {'impl':<8}{'time':>12}{'arena':>14}")
    print(f"    {'C++':<8}{cpp_s * 1e3:>10.2f}ms{cpp[1]:>14,}")
    print(f"    {'Python':<8}{py_s * 1e3:>10.2f}ms{py[1]:>14,}")
    print(f"    speed-up {py_s / cpp_s:,.0f}x (target >= 100x); identical plans: {same}\n")


def bench_scaling(sizes: list[int], check_up_to: int) -> None:
    print("(b) default strategy ('best') on DNN-like lifetimes, alignment 64")
    head = f"    {'buffers':>9}{'time':>10}{'arena/LB':>10}{'rlx/LB':>9}{'steps':>13}  winner"
    print(head + "   (rlx column: same input, strategy rlx)")
    for n in sizes:
        case = dnn_like(n, seed=2)
        lower = peak_live_bytes(*case)
        (offsets, arena, steps, winner), secs = timed(lambda case=case: plan_intervals_info(*case))
        rlx = "-"
        if n <= 100_000:  # rlx pays O(#whole-span buffers) per query: slow at 1e6
            rlx = f"{plan_intervals(*case, alignment=64, strategy='rlx')[1] / lower:.4f}"
        if n <= check_up_to:
            assert check_interval_plan(*case, offsets, arena, 64) == []
        print(f"    {n:>9,}{secs:>9.3f}s{arena / lower:>10.4f}{rlx:>9}{steps:>13,}  {winner}")
    print("    target: 1e6 buffers < 2 s\n")


def load_minimalloc(path: Path) -> Case:
    with path.open() as f:
        rows = list(csv.DictReader(f))
    sizes = np.array([int(r["size"]) for r in rows], dtype=np.int64)
    births = np.array([int(r["lower"]) for r in rows], dtype=np.int64)
    # MiniMalloc lifetimes are half-open [lower, upper); ours are closed.
    deaths = np.array([int(r["upper"]) - 1 for r in rows], dtype=np.int64)
    return sizes, births, deaths


def bench_minimalloc(directory: Path, limit: int | None) -> None:
    files = sorted(directory.glob("[A-K].*.csv"))[:limit]
    if not files:
        print(f"(c) skipped: no instances under {directory}")
        return
    print("(c) MiniMalloc challenging instances, alignment 1, arena / peak-live LB")
    cols = f"{'inst':<5}{'n':>5}{'LB':>11}{'rlx/LB':>9}{'best':>11}{'best/LB':>9}{'time':>9}"
    print(f"    {cols}  winner")
    best_ratios, rlx_ratios = [], []
    for path in files:
        case = load_minimalloc(path)
        lower = peak_live_bytes(*case)
        (offsets, arena, _steps, winner), secs = timed(
            lambda case=case: plan_intervals_info(*case, alignment=1)
        )
        assert check_interval_plan(*case, offsets, arena, 1) == []
        rlx = plan_intervals(*case, alignment=1, strategy="rlx")[1]
        best_ratios.append(arena / lower)
        rlx_ratios.append(rlx / lower)
        print(
            f"    {path.name[0]:<5}{len(case[0]):>5}{lower:>11,}{rlx / lower:>9.3f}"
            f"{arena:>11,}{arena / lower:>9.3f}{secs:>8.3f}s  {winner}"
        )

    def gm(xs: list[float]) -> float:
        return math.exp(sum(math.log(x) for x in xs) / len(xs))

    print(f"    geometric mean: best {gm(best_ratios):.3f}, rlx {gm(rlx_ratios):.3f}")
    print("    target: best <= 1.15 within 1 s each (simple greedy: 1.29-1.41)\n")


def decoder_stack(layers: int = 12) -> object:
    """A Llama-style decoder stack in HIR (fusable blocks)."""
    from rlx_compile import ModuleBuilder

    b, s, e, h, kv, d, f = 1, 64, 256, 8, 4, 32, 512
    with ModuleBuilder("decoder_stack", policy="fusable") as m:
        x = m.input("x", (b, s, e))
        cos, sin = m.param("cos", (s, d // 2)), m.param("sin", (s, d // 2))
        for i in range(layers):

            def p(n: str, shape: tuple[int, ...], i: int = i) -> object:
                return m.param(f"l{i}.{n}", shape)

            x = m.decoder_block(
                x, ln1=p("ln1", (e,)), wq=p("wq", (e, h * d)), wk=p("wk", (e, kv * d)),
                wv=p("wv", (e, kv * d)), wo=p("wo", (h * d, e)), ln2=p("ln2", (e,)),
                gate=p("gate", (e, f)), up=p("up", (e, f)), down=p("down", (f, e)),
                cos=cos, sin=sin, num_heads=h, num_kv_heads=kv, head_dim=d,
            )  # fmt: skip
        m.output(x, names=["y"])
    return m.module


def model_cases() -> list[tuple[str, object]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the examples package
    from examples.build_examples import decoder_block, dense_cnn, inception_cnn, small_cnn

    cases: list[tuple[str, object]] = [
        ("decoder_block", decoder_block()),
        ("small_cnn", small_cnn()),
        ("inception_cnn", inception_cnn()),
        ("dense_cnn", dense_cnn()),
        ("decoder_x12", decoder_stack(12)),
    ]
    models = Path(__file__).resolve().parents[1] / "examples" / "models"
    try:
        from rlx_compile.frontends.onnx import import_model  # type: ignore[import-not-found]
    except ImportError:
        return cases
    for path in sorted(models.glob("*.onnx")):
        cases.append((path.stem, import_model(path)))
    return cases


def bench_models() -> None:
    """Activation arena against bounds per model (weights -- params and constants -- are
    kept outside the arena here, as runtimes keep initializers apart). `/LB` = arena /
    the peak of the plan's own buffers (what placement alone leaves on the table);
    `/bound` = arena / the source-order peak of the unoptimized graph, every tensor in
    its own buffer (what the whole compile -- cleanup, views, in-place, scheduling,
    placement -- achieved)."""
    from rlx_compile import CompilePipeline
    from rlx_compile.ir import main_graph
    from rlx_compile.memory.report import mir_peak_live_bytes
    from rlx_compile.passmanager import PassManager, parse_pipeline

    off: dict[str, object] = {"concat_inplace": False}
    configs = {
        "plain": {"inplace": False, "schedule": "source", "reuse_inputs": False, **off},
        "+inplace": {"inplace": True, "schedule": "source", "reuse_inputs": False, **off},
        "+schedule": {"inplace": True, "schedule": "memory", "reuse_inputs": False, **off},
        "+reuse inputs": {"inplace": True, "schedule": "memory", "reuse_inputs": True, **off},
        "+concat": {"inplace": True, "schedule": "memory", "reuse_inputs": True},
    }
    print("\n(d) models: arena / bounds (alignment 64)")
    header = f"{'model':<16}{'bound(unopt)':>14}"
    for name in configs:
        header += f"{name + ' arena':>18}{'/LB':>7}{'/bound':>8}"
    print(header + f"{'compile s':>11}")
    ratios: dict[str, list[float]] = {name: [] for name in configs}
    for name, module in model_cases():
        unopt = module.clone()  # type: ignore[attr-defined]
        PassManager(parse_pipeline("lower-hir-to-mir")).run(unopt)
        bound = mir_peak_live_bytes(main_graph(unopt), static_leaves=False)
        row = f"{name:<16}{bound:>14,}"
        seconds = 0.0
        for cfg_name, cfg in configs.items():
            pipeline = CompilePipeline(keep_stages=False, weights_in_arena=False, **cfg)
            result, t = timed(lambda p=pipeline, m=module: p.compile(m))
            seconds = t
            report = result.memory_report
            assert report is not None
            ratios[cfg_name].append(report.arena / bound)
            row += f"{report.arena:>18,}{report.ratio:>7.3f}{report.arena / bound:>8.3f}"
        print(row + f"{seconds:>11.2f}")
    for cfg_name, values in ratios.items():
        gm = math.exp(sum(math.log(v) for v in values) / len(values))
        print(f"geometric mean arena/bound, {cfg_name}: {gm:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument(
        "--minimalloc-dir", type=Path, default=MINIMALLOC_DIR, help="MiniMalloc CSV folder"
    )
    parser.add_argument("--models-only", action="store_true", help="only section (d)")
    args = parser.parse_args()
    if args.models_only:
        bench_models()
        return
    if args.quick:
        bench_twin(2_000)
        bench_scaling([1_000, 10_000, 100_000], check_up_to=100_000)
        bench_minimalloc(args.minimalloc_dir, limit=3)
    else:
        bench_twin(10_000)
        bench_scaling([1_000, 10_000, 100_000, 1_000_000], check_up_to=100_000)
        bench_minimalloc(args.minimalloc_dir, limit=None)
    bench_models()


if __name__ == "__main__":
    main()
