"""Arena placement: an offset for every buffer so that buffers live at the same time
never share bytes. The C++ core does the work; ``plan_intervals_py`` in
``rlx_compile.testing.twins`` is the pure-Python twin of the ``rlx`` strategy used to
cross-check it.

Lifetimes are CLOSED intervals ``[birth, death]`` over the schedule's steps: a
buffer read at step ``s`` and one written at step ``s`` are both live at ``s``, so
they never share bytes (there is no in-place reuse at this level). Byte ranges are
half-open, ``[offset, offset + size)``. A buffer's offset is a multiple of
``slot_alignment(size, alignment)``: the largest power of two dividing the buffer's size
(its natural alignment), at most ``alignment`` (a power of two). Buffers pack as tightly
as their sizes allow, as a count of raw bytes assumes, yet their elements stay aligned,
and so does every vector access, up to ``alignment`` wide, whose width divides the size:
a buffer whose size is a multiple of ``alignment`` is aligned to it. The arena size is
the highest ``offset + size``, not rounded up.

Strategies (``STRATEGIES``):

* ``rlx``: RLX's rule exactly (spec 5.8): stable sort by size, descending, then
  each buffer at the lowest aligned offset free of every placed buffer whose
  interval intersects its own. No leaf tail guard: a caller wanting RLX's guard
  adds it to the size it passes.
* ``best-fit``: the same order, smallest fitting gap (the gap below the lowest
  live block included), ties to the lowest offset.
* ``greedy-conflicts`` (TVM USMP), ``greedy-breadth`` (TFLite),
  ``greedy-lifetime``: other orders, lowest offset.
* ``best`` (default): buffers live over the whole span stacked at the bottom, a
  portfolio of six orders x (first fit, best fit), skyline (lowest-segment-first)
  constructions with seeded restarts, then a seeded hill climb over the order, all
  within ``budget`` steps; the smallest arena wins and RLX's own plan is
  a candidate, so ``best`` is never larger than ``rlx`` (unless RLX's plan alone
  would cost more than the budget, which takes many whole-span buffers in a huge
  graph). Above ``PORTFOLIO_LIMIT`` buffers only size order x both fits run. The
  search stops early at a plan within ``min(alignment - 1, 0.1%)`` bytes of a lower
  bound that counts alignment (every live buffer but the topmost takes its size rounded
  up to the smallest alignment among them): with alignment 1, only at the bound itself.
  From a plan within 0.1% of the bound it looks only a little further (16 idle
  restarts, the hill climb's short walk): the rest of the budget could win at most that.

A step is one placed block examined while searching for an offset, so the budget,
and therefore the plan, does not depend on the machine's speed.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rlx_compile import _core

Int64Array = NDArray[np.int64]

STRATEGIES: tuple[str, ...] = tuple(_core.PLACEMENT_STRATEGIES)
DEFAULT_BUDGET: int = int(_core.PLACEMENT_DEFAULT_BUDGET)
PORTFOLIO_LIMIT: int = int(_core.PLACEMENT_PORTFOLIO_LIMIT)


def as_int64_array(a: ArrayLike, name: str) -> Int64Array:
    """``a`` as a contiguous 1-D int64 array; a non-integer dtype is a ValueError
    (silently truncating 1.5 bytes to 1 would plan the wrong sizes)."""
    arr = np.asarray(a)
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iub":
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got rank {arr.ndim}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy = {strategy!r} is unknown; expected one of {STRATEGIES}")


def plan_intervals(
    sizes: ArrayLike,
    births: ArrayLike,
    deaths: ArrayLike,
    alignment: int = 64,
    strategy: str = "best",
    budget: int = DEFAULT_BUDGET,
) -> tuple[Int64Array, int]:
    """Offsets (int64, one per buffer) and the arena size, computed by the C++ core.

    Raises ValueError for mismatched lengths, a negative size, ``death < birth``, a
    non-power-of-two alignment, an unknown strategy or a negative budget, naming the
    argument and index.
    """
    offsets, arena, _steps, _winner = plan_intervals_info(
        sizes, births, deaths, alignment, strategy, budget
    )
    return offsets, arena


def plan_intervals_info(
    sizes: ArrayLike,
    births: ArrayLike,
    deaths: ArrayLike,
    alignment: int = 64,
    strategy: str = "best",
    budget: int = DEFAULT_BUDGET,
) -> tuple[Int64Array, int, int, str]:
    """:func:`plan_intervals` plus the work spent (steps) and, for ``best``, the
    name of the candidate that won (for reports and benchmarks)."""
    _check_strategy(strategy)
    offsets, arena, steps, winner = _core.place_intervals(
        as_int64_array(sizes, "sizes"),
        as_int64_array(births, "births"),
        as_int64_array(deaths, "deaths"),
        operator.index(alignment),
        strategy,
        operator.index(budget),
    )
    return offsets, int(arena), int(steps), str(winner)


def slot_alignment(size: int, alignment: int) -> int:
    """The alignment of the offset of a buffer of ``size`` bytes in a plan made with
    ``alignment``: the largest power of two dividing both (``alignment`` for an empty
    buffer)."""
    return int(_core.slot_alignment(operator.index(size), operator.index(alignment)))


def peak_live_bytes(sizes: ArrayLike, births: ArrayLike, deaths: ArrayLike) -> int:
    """Lower bound on any arena for these intervals: the peak over time of the summed
    sizes of the buffers live at that time (alignment ignored)."""
    return int(
        _core.peak_live_bytes(
            as_int64_array(sizes, "sizes"),
            as_int64_array(births, "births"),
            as_int64_array(deaths, "deaths"),
        )
    )
