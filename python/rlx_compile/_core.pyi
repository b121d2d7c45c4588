"""Types of the pybind11 module ``rlx_compile._core`` (csrc/bindings.cpp).

Written from ``pybind11-stubgen rlx_compile._core`` with the tuple and array element types
read from the C++ (every integer array the core returns is int64, every float array
float64); tests/test_package.py checks that the names and the parameter names match
the built module.
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "PLACEMENT_DEFAULT_BUDGET",
    "PLACEMENT_PORTFOLIO_LIMIT",
    "PLACEMENT_STRATEGIES",
    "SHARD_MAX_PIECES",
    "liveness_intervals",
    "peak_live_bytes",
    "place_intervals",
    "plan_tensors",
    "schedule_memory",
    "shard_search",
]

# py::array parameters: any NumPy array, converted to int64 (bounds-checked) in C++
_Array = NDArray[Any]
_I64 = NDArray[np.int64]
_F64 = NDArray[np.float64]

PLACEMENT_DEFAULT_BUDGET: int
PLACEMENT_PORTFOLIO_LIMIT: int
PLACEMENT_STRATEGIES: tuple[str, ...]
SHARD_MAX_PIECES: int

def liveness_intervals(
    producer_step: _Array,
    consumer_offsets: _Array,
    consumer_steps: _Array,
    is_output: _Array,
    num_steps: int,
) -> tuple[_I64, _I64]:
    """Closed live intervals (birth, death) of every tensor from a schedule in CSR form."""

def peak_live_bytes(sizes: _Array, births: _Array, deaths: _Array) -> int:
    """Peak over time of the summed sizes of live buffers."""

def place_intervals(
    sizes: _Array,
    births: _Array,
    deaths: _Array,
    alignment: int,
    strategy: str,
    budget: int,
) -> tuple[_I64, int, int, str]:
    """Arena offsets for closed live intervals: (offsets, arena_size, steps, winner)."""

def plan_tensors(
    step: _Array,
    size: _Array,
    kind: _Array,
    alloc: _Array,
    view_parent: _Array,
    view_offset: _Array,
    dep_offsets: _Array,
    deps: _Array,
    is_output: _Array,
    inplace_ok: _Array,
    embed_into: _Array,
    embed_offset: _Array,
    num_steps: int,
    leaves_live_whole: bool,
    inputs_live_whole: bool,
    pin_output_ancestors: bool,
    inplace: bool,
    concat_inplace: bool,
    alignment: int,
    strategy: str,
    budget: int,
) -> dict[str, Any]:
    """Views, in-place reuse, concat operands in place, liveness and arena placement."""

def schedule_memory(
    step: _Array,
    size: _Array,
    kind: _Array,
    alloc: _Array,
    view_parent: _Array,
    view_offset: _Array,
    dep_offsets: _Array,
    deps: _Array,
    is_output: _Array,
    inplace_ok: _Array,
    embed_into: _Array,
    embed_offset: _Array,
    num_steps: int,
    leaves_live_whole: bool,
    inputs_live_whole: bool,
    pin_output_ancestors: bool,
    inplace: bool,
    concat_inplace: bool,
    alignment: int,
) -> dict[str, Any]:
    """A topological order of the ops with a lower peak of live bytes."""

def shard_search(
    op_offsets: _Array,
    piece_offsets: _Array,
    piece_elems: _Array,
    sliced_bytes: _Array,
    shared_bytes: _Array,
    out_bytes: _Array,
    op_cost: ArrayLike,
    worker_offsets: _Array,
    worker_rates: ArrayLike,
    worker_rankable: _Array,
    bandwidth: ArrayLike,
    latency: ArrayLike,
    resident: _Array,
    local_rate: ArrayLike,
) -> tuple[int, _I64, _I64, _F64, _F64, _F64, _F64]:
    """Best cut and worker assignment per (op, configuration), op-major:
    (max_pieces, best, assign, compute, transfer, total, local)."""
