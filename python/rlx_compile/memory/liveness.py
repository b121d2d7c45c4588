"""Liveness intervals over a fixed schedule, computed by the C++ core (its pure-Python twin
is ``rlx_compile.testing.twins.liveness_intervals_py``).

A schedule is given as flat arrays: ``producer_step[t]`` is the step writing tensor
``t``; the steps reading it are ``consumer_steps[consumer_offsets[t]:consumer_offsets[t+1]]``
(CSR). Intervals are closed: a tensor is live from the step that writes it to the last
step that reads it, and a graph output stays live until ``num_steps``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rlx_compile import _core

Int64Array = NDArray[np.int64]


def _as_i64(a: ArrayLike) -> Int64Array:
    return np.ascontiguousarray(np.asarray(a, dtype=np.int64))


def liveness_intervals(
    producer_step: ArrayLike,
    consumer_offsets: ArrayLike,
    consumer_steps: ArrayLike,
    is_output: ArrayLike,
    num_steps: int,
) -> tuple[Int64Array, Int64Array]:
    """Closed live intervals ``(birth, death)`` computed by the C++ core."""
    return _core.liveness_intervals(
        _as_i64(producer_step),
        _as_i64(consumer_offsets),
        _as_i64(consumer_steps),
        _as_i64(is_output),
        int(num_steps),
    )
