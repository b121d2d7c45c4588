"""Shard benchmark: the C++ cost search against its Python twin, and end-to-end runs on a
local 2-worker Dask cluster with predicted vs measured times.

    python bench/shard.py            # 10,000 ops x 8 worker configurations, Dask regimes
    python bench/shard.py --quick    # 1,000 ops, smaller Dask cases

(a) Times ``decide_many`` (one C++ call) and the C++ search alone (arrays packed once)
    against ``decide_many_py`` on the same ops and configurations, all in this process,
    and checks that both decide identically.
(b) Starts a LocalCluster (2 worker processes, 1 thread each, loopback only), calibrates
    the workers on the op itself (``calibrate_workers``), the link (``calibrate_link``)
    and this process (``measure_local_rate``), asks ``decide`` what to do, and runs the op
    both ways: whole here, and split with ``run_on_dask``. This process is limited to
    one BLAS thread before NumPy loads, so "local" is one core, like each worker.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy: local = one core

import argparse
import dataclasses
import logging
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

import dask
import numpy as np
from distributed import Client, LocalCluster
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from rlx_compile import ModuleBuilder
from rlx_compile.interpreter import evaluate_op
from rlx_compile.ir import print_module
from rlx_compile.shard import (
    CostCalibration,
    LinkCost,
    Residency,
    ShardChoice,
    ShardOption,
    WorkerConfig,
    WorkerCost,
    calibrate_link,
    calibrate_workers,
    decide,
    decide_many,
    measure_local_rate,
    run_on_dask,
    shardings,
)
from rlx_compile.shard.cost import pack_configs, pack_options, search
from rlx_compile.shard.pieces import op_module, timed_run
from rlx_compile.testing.twins import decide_many_py, search_py

T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


# ---------------------------------------------------------------------------------
# (a) C++ search vs the Python twin
# ---------------------------------------------------------------------------------


def op_pool(count: int, seed: int) -> list[tuple[list[ShardOption], float]]:
    """``count`` distinct random ops (matmul, grouped conv, broadcast add), each with its
    options for 2, 4 or 8 pieces and its multiply-adds per output element."""
    rng = np.random.default_rng(seed)
    pool = []
    while len(pool) < count:
        n = int(rng.choice([2, 4, 8]))
        d = [int(x) for x in rng.integers(8, 129, size=4)]
        kind = len(pool) % 3
        with ModuleBuilder("op") as m:
            if kind == 0:
                y = m.matmul(m.input("x", (d[0], d[1])), m.input("w", (d[1], d[2])))
                cost = d[1]
            elif kind == 1:
                x = m.input("x", (d[0] // 8 + 1, 4 * (d[1] // 4 + 1), 14, 14))
                w = m.input("w", (8 * (d[2] // 8 + 1), d[1] // 4 + 1, 3, 3))
                y = m.conv(x, w, groups=4, pads=[1] * 4)
                cost = (d[1] // 4 + 1) * 9
            else:
                y = m.add(m.input("x", (d[0], d[1], d[2])), m.input("b", (d[2],)))
                cost = 1
            m.output(y)
        options = shardings(m.module, y.owner, n)  # type: ignore[arg-type]
        if options:
            pool.append((options, float(cost)))
    return pool


def configs(seed: int) -> list[WorkerConfig]:
    """8 settings: 2 to 16 workers with spread rates (some uncalibrated), links from
    100 MB/s to 25 GB/s, with and without resident weights. Rates in multiply-adds/s."""
    rng = np.random.default_rng(seed)
    out = []
    cal = [CostCalibration.MEASURED, CostCalibration.ARCH_DEFAULT, CostCalibration.UNCALIBRATED]
    for i, count in enumerate([2, 4, 8, 16, 2, 4, 8, 16]):
        workers = tuple(
            WorkerCost(float(10 ** rng.uniform(9, 11)), cal[int(rng.choice(3, p=[0.5, 0.4, 0.1]))])
            for _ in range(count)
        )
        link = LinkCost(float(10 ** rng.uniform(8, 10.4)), float(rng.choice([1e-5, 1e-4, 1e-3])))
        out.append(
            WorkerConfig(workers, link, Residency(i >= 4), float(10 ** rng.uniform(9.5, 11)))
        )
    return out


def bench_twin(n_ops: int) -> None:
    print(f"(a) cost search: {n_ops:,} ops x 8 worker configurations, C++ vs the Python twin")
    pool = op_pool(min(n_ops, 600), seed=1)
    picks = np.random.default_rng(2).integers(0, len(pool), size=n_ops)
    ops = [pool[int(i)][0] for i in picks]
    costs = [pool[int(i)][1] for i in picks]
    cfgs = configs(seed=3)
    options = sum(len(o) for o in ops)
    print(f"    {len(pool)} distinct ops, {options:,} options, {options * 8:,} option-configs")
    packed_o, packed_c = pack_options(ops, costs), pack_configs(cfgs)
    reps = 5
    _, core_s = timed(lambda: [search(packed_o, packed_c) for _ in range(reps)])
    core_s /= reps
    cpp, cpp_s = timed(lambda: decide_many(ops, cfgs, costs))
    py, py_s = timed(lambda: decide_many_py(ops, cfgs, costs))
    _, py_search_s = timed(
        lambda: [search_py(o, c, k) for o, k in zip(ops, costs, strict=True) for c in cfgs]
    )
    split = sum(d.choice is not None for row in cpp for d in row)
    print(f"    {'path':<44}{'time':>11}")
    print(f"    {'C++ search alone (packed arrays)':<44}{core_s * 1e3:>9.2f}ms")
    print(f"    {'Python twin search alone (same loop)':<44}{py_search_s * 1e3:>9.2f}ms")
    print(f"    {'C++ decide_many (pack, search, Decisions)':<44}{cpp_s * 1e3:>9.2f}ms")
    print(f"    {'Python twin decide_many_py (search, Decisions)':<44}{py_s * 1e3:>9.2f}ms")
    print(
        f"    search: twin / C++ = {py_search_s / core_s:,.1f}x; whole API: "
        f"{py_s / cpp_s:,.1f}x (building {n_ops * 8:,} Decision objects costs the same in both)"
    )
    print(f"    identical decisions: {cpp == py}; {split:,} of {n_ops * 8:,} op-configs split\n")


# ---------------------------------------------------------------------------------
# (b) end to end on Dask
# ---------------------------------------------------------------------------------


def forced(
    option: ShardOption,
    team: Sequence[WorkerCost],
    link: LinkCost,
    residency: Residency,
    local: float,
) -> ShardChoice:
    """The prediction for ``option`` even if it loses (to run and measure it anyway)."""
    d = decide([option], team, link, residency, local * 1e-9)
    assert d.choice is not None
    # Put the real local time back, so that the report compares against it.
    return dataclasses.replace(d.choice, local_s=option.out_elems / local)


def regime(
    client: Client,
    title: str,
    op: Operation,
    options: list[ShardOption],
    args: list[np.ndarray],
    link: LinkCost,
    reps: int,
    residency: Residency,
) -> None:
    held = " (shared operands resident on the workers)" if residency.shared_resident else ""
    print(f"  {title}: {op.name} {[list(a.shape) for a in args]}{held}")
    team = calibrate_workers(client, op, repeats=3)
    local_rate = measure_local_rate(op, repeats=3)
    decision = decide(options, team, link, residency, local_rate)
    # Timed like a worker times its piece: the parsed one-op module on the executor.
    text = print_module(op_module(op))
    whole = evaluate_op(op, args)[0]
    rates = ", ".join(f"{w.rate:.3g}" for w in team)
    print(f"    worker rates {rates} out/s; local {local_rate:.3g} out/s")
    print(f"    chooser: {decision.reason}", end="")
    choice = decision.choice
    if choice is None:
        best = min(
            (forced(o, team, link, residency, local_rate) for o in options),
            key=lambda c: c.total_s,
        )
        predicted = f"{best.total_s * 1e3:.1f} ms vs local {best.local_s * 1e3:.1f} ms"
        print(f" (best split predicted {predicted})")
        choice = best
    else:
        print(f": {choice.option.describe()}, predicted speed-up {choice.speedup:.2f}x")
    resident = {}
    if residency.shared_resident:  # placed before timing: that is what resident means
        for s in choice.option.shared:
            [resident[s.name]] = client.scatter([args[s.index]], broadcast=True, hash=False)
    run_on_dask(op, choice, client, args, resident=resident)  # warm-up: imports, parsing
    # Alternate whole and split runs so that both see the same background load.
    runs, local_times = [], []
    for _ in range(reps):
        local_times.append(timed_run(text, args)[1])
        runs.append(run_on_dask(op, choice, client, args, resident=resident))
    local_s = statistics.median(local_times)
    middle = sorted(runs, key=lambda r: r.runs[0].wall_s)[len(runs) // 2]
    got = middle.value
    same = (
        got.tobytes() == whole.tobytes()
        if choice.option.exact
        else float(np.abs(got - whole).max())
    )
    print("    " + middle.report().render().replace("\n", "\n    "))
    shard_s = middle.runs[0].wall_s
    verdict = "split wins" if shard_s < local_s else "whole wins"
    print(
        f"    predicted: split {choice.total_s * 1e3:.1f} ms vs whole "
        f"{choice.local_s * 1e3:.1f} ms; "
        f"measured: split {shard_s * 1e3:.1f} ms vs whole {local_s * 1e3:.1f} ms "
        f"(median of {reps}) -> {verdict}; result check: {same}\n"
    )


def conv_case(rng: np.random.Generator, batch: int) -> tuple[ModuleOp, Operation, list[np.ndarray]]:
    """A 3x3 conv, 512 -> 512 channels on 7x7 (a ResNet stage-4 layer: 4608
    multiply-adds per output, batched GEMMs), so compute dominates the bytes."""
    with ModuleBuilder("conv") as m:
        x = m.input("x", (batch, 512, 7, 7))
        y = m.conv(x, m.input("w", (512, 512, 3, 3)), pads=[1, 1, 1, 1])
        m.output(y)
    args = [
        rng.standard_normal((batch, 512, 7, 7)).astype(np.float32),
        (rng.standard_normal((512, 512, 3, 3)) / 68).astype(np.float32),
    ]
    return m.module, cast(Operation, y.owner), args


def matmul_case(
    rng: np.random.Generator, size: int
) -> tuple[ModuleOp, Operation, list[np.ndarray]]:
    """A square matmul: the reference computes it row by row (row-invariant), reading
    the whole weight once per row, so two workers share one memory bus."""
    with ModuleBuilder("matmul") as m:
        y = m.matmul(m.input("x", (size, size)), m.input("w", (size, size)))
        m.output(y)
    args = [
        (rng.standard_normal((size, size)) / math.sqrt(size)).astype(np.float32),
        rng.standard_normal((size, size)).astype(np.float32),
    ]
    return m.module, cast(Operation, y.owner), args


def add_case(rng: np.random.Generator, rows: int) -> tuple[ModuleOp, Operation, list[np.ndarray]]:
    """An add of two [rows, 1024] tensors: one flop per 12 bytes moved."""
    with ModuleBuilder("add") as m:
        y = m.add(m.input("a", (rows, 1024)), m.input("b", (rows, 1024)))
        m.output(y)
    args = [rng.standard_normal((rows, 1024)).astype(np.float32) for _ in range(2)]
    return m.module, cast(Operation, y.owner), args


def bench_dask(quick: bool, reps: int) -> None:
    print("(b) end to end on a LocalCluster: 2 worker processes x 1 thread, loopback")
    # Resident weights must stay replicated: no active memory manager.
    keep_replicas = {"distributed.scheduler.active-memory-manager.start": False}
    with dask.config.set(keep_replicas), LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
    ) as cluster, Client(cluster) as client:  # fmt: skip
        link = calibrate_link(client, small=1 << 10, large=16 << 20, repeats=5)
        print(
            f"    link: {link.bytes_per_sec / 1e6:.0f} MB/s, latency {link.latency_s * 1e3:.1f} ms "
            "(median round trip: scatter, task, result)\n"
        )
        rng = np.random.default_rng(0)
        conv = conv_case(rng, 32 if quick else 64)
        cases = [
            ("compute-bound conv", conv, Residency(False)),
            ("data-parallel conv", conv, Residency(True)),
            ("row-by-row matmul", matmul_case(rng, 1024 if quick else 2048), Residency(False)),
            ("bandwidth-bound add", add_case(rng, 2048 if quick else 4096), Residency(False)),
        ]
        for title, (module, op, args), residency in cases:
            regime(client, title, op, shardings(module, op, 2), args, link, reps, residency)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"  machine load average (1, 5, 15 min) at the end: {load} on {os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--reps", type=int, default=5, help="Dask runs per regime")
    parser.add_argument("--skip-dask", action="store_true", help="only the search benchmark")
    args = parser.parse_args()
    bench_twin(1_000 if args.quick else 10_000)
    if not args.skip_dask:
        bench_dask(args.quick, args.reps)


if __name__ == "__main__":
    main()
