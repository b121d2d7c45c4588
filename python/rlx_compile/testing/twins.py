"""Pure-Python twins of the C++ core: the same rules written plainly, the references the
C++ results are tested against (exactly, floats included) and the benchmarks' baselines.
They are not part of the public API: the package's ``memory`` and ``shard`` functions
are what compilation uses.

- ``liveness_intervals_py``: ``memory.liveness_intervals``;
- ``plan_intervals_py``: the ``rlx`` strategy of ``memory.plan_intervals``;
- ``search_py``, ``decide_py``, ``decide_many_py``: ``shard.decide`` / ``decide_many``
  (the search of csrc/shard.cpp; the Decision is built by the same code as the C++
  path's).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from rlx_compile.memory.placement import Int64Array, as_int64_array
from rlx_compile.shard.cost import (
    Decision,
    LinkCost,
    Residency,
    WorkerConfig,
    WorkerCost,
    check_same_op,
    finish_decision,
    option_bytes_moved,
    resolve_op_costs,
)
from rlx_compile.shard.options import ShardOption

# -- memory ------------------------------------------------------------------------------


def liveness_intervals_py(
    producer_step: ArrayLike,
    consumer_offsets: ArrayLike,
    consumer_steps: ArrayLike,
    is_output: ArrayLike,
    num_steps: int,
) -> tuple[Int64Array, Int64Array]:
    """The pure-Python twin of ``memory.liveness_intervals`` (the same rule, written plainly)."""
    producer = [int(s) for s in np.asarray(producer_step, dtype=np.int64)]
    offsets = [int(o) for o in np.asarray(consumer_offsets, dtype=np.int64)]
    consumers = [int(s) for s in np.asarray(consumer_steps, dtype=np.int64)]
    outputs = [bool(o) for o in np.asarray(is_output, dtype=np.int64)]
    birth = list(producer)
    death = list(producer)
    for t in range(len(producer)):
        for s in consumers[offsets[t] : offsets[t + 1]]:
            death[t] = max(death[t], s)
        if outputs[t]:
            death[t] = max(death[t], int(num_steps))
    return np.array(birth, dtype=np.int64), np.array(death, dtype=np.int64)


def _validate_py(sizes: list[int], births: list[int], deaths: list[int], alignment: int) -> None:
    if len(births) != len(sizes):
        raise ValueError(f"births has length {len(births)}, expected len(sizes) = {len(sizes)}")
    if len(deaths) != len(sizes):
        raise ValueError(f"deaths has length {len(deaths)}, expected len(sizes) = {len(sizes)}")
    for i, (s, b, d) in enumerate(zip(sizes, births, deaths, strict=True)):
        if s < 0:
            raise ValueError(f"sizes[{i}] = {s} is negative")
        if d < b:
            raise ValueError(f"deaths[{i}] = {d} is before births[{i}] = {b}")
    if alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"alignment = {alignment} is not a positive power of two")


def plan_intervals_py(
    sizes: ArrayLike, births: ArrayLike, deaths: ArrayLike, alignment: int = 64
) -> tuple[Int64Array, int]:
    """The ``rlx`` strategy written plainly from the spec's pseudocode (O(n^2)): the
    reference the C++ core is tested against and the benchmark's baseline."""
    size = [int(s) for s in as_int64_array(sizes, "sizes")]
    birth = [int(b) for b in as_int64_array(births, "births")]
    death = [int(d) for d in as_int64_array(deaths, "deaths")]
    align = operator.index(alignment)
    _validate_py(size, birth, death, align)

    def align_up(x: int, size: int) -> int:
        a = math.gcd(size, align)  # the largest power of two dividing both
        return (x + a - 1) // a * a

    # Python's sort is stable: equal sizes keep node (input) order.
    buffers = sorted(range(len(size)), key=lambda i: -size[i])
    placed: list[tuple[int, int, int, int]] = []  # (offset, size, birth, death)
    offsets = [0] * len(size)
    arena = 0
    for i in buffers:
        psize = size[i]
        occ = sorted((o, o + ps) for (o, ps, b, d) in placed if birth[i] <= d and death[i] >= b)
        cursor = 0
        off = None
        for s, e in occ:
            a = align_up(cursor, psize)
            if a + psize <= s:
                off = a
                break
            cursor = max(cursor, e)
        if off is None:
            off = align_up(cursor, psize)
        offsets[i] = off
        placed.append((off, psize, birth[i], death[i]))
        arena = max(arena, off + psize)
    return np.array(offsets, dtype=np.int64), arena


# -- shard -------------------------------------------------------------------------------


def search_py(
    options: Sequence[ShardOption], config: WorkerConfig, op_cost: float
) -> tuple[int, list[int], float, float, float, float | None]:
    """(best option or -1, assignment, compute, transfer, total, local): the same
    arithmetic, in the same order, as ``shard_search`` in csrc/shard.cpp."""
    if not options:
        return -1, [], 0.0, 0.0, math.nan, None
    rates = [w.rate for w in config.workers]
    ranked = sorted(
        (i for i, w in enumerate(config.workers) if w.calibration.is_rankable()),
        key=lambda i: -rates[i],
    )  # sorted() is stable: equal rates keep index order, like std::stable_sort
    local = float(options[0].out_elems) * op_cost / config.local_rate
    best, best_total = -1, local
    best_assign: list[int] = []
    best_compute = best_transfer = 0.0
    for k, opt in enumerate(options):
        n = opt.n
        if n > len(ranked):
            continue
        elems = opt.piece_out_elems
        order = sorted(range(n), key=lambda p: -elems[p])
        compute = 0.0
        for r in range(n):
            t = float(elems[order[r]]) * op_cost / rates[ranked[r]]
            if t > compute:
                compute = t
        moved = option_bytes_moved(opt, config.residency.shared_resident)
        transfer = float(moved) / config.link.bytes_per_sec + config.link.latency_s
        total = compute + transfer
        if total < best_total:
            best, best_total = k, total
            best_compute, best_transfer = compute, transfer
            best_assign = [0] * n
            for r in range(n):
                best_assign[order[r]] = ranked[r]
    return best, best_assign, best_compute, best_transfer, best_total, local


def decide_py(
    options: Sequence[ShardOption],
    workers: Sequence[WorkerCost],
    link: LinkCost,
    residency: Residency,
    local_rate: float,
    *,
    op_cost: float = 1.0,
) -> Decision:
    """The pure-Python twin of ``shard.decide`` (the reference the C++ core is tested
    against, and the benchmark's baseline)."""
    check_same_op(options)
    config = WorkerConfig(tuple(workers), link, residency, local_rate)
    return finish_decision(options, config, *search_py(options, config, op_cost), op_cost)


def decide_many_py(
    ops: Sequence[Sequence[ShardOption]],
    configs: Sequence[WorkerConfig],
    op_costs: Sequence[float] | None = None,
) -> list[list[Decision]]:
    """The twin of ``shard.decide_many``."""
    costs = resolve_op_costs(ops, op_costs)
    for options in ops:
        check_same_op(options)
    return [
        [finish_decision(options, c, *search_py(options, c, cost), cost) for c in configs]
        for options, cost in zip(ops, costs, strict=True)
    ]
