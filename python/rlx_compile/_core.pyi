"""Types of the pybind11 module ``rlx_compile._core`` (csrc/bindings.cpp).

Written from ``pybind11-stubgen rlx_compile._core`` with the tuple and array element types
read from the C++ (every integer array the core returns is int64, every float array
float64); tests/test_package.py checks that the names and the parameter names match
the built module.
"""

import enum
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "PLACEMENT_DEFAULT_BUDGET",
    "PLACEMENT_PORTFOLIO_LIMIT",
    "PLACEMENT_STRATEGIES",
    "SCHEDULE_CANDIDATES",
    "SHARD_MAX_PIECES",
    "PlanOptions",
    "TensorGraph",
    "TensorKind",
    "liveness_intervals",
    "peak_live_bytes",
    "place_intervals",
    "plan_tensors",
    "schedule_memory",
    "shard_search",
    "slot_alignment",
]

# py::array parameters: any NumPy array, converted to int64 (bounds-checked) in C++
_Array = NDArray[Any]
_I64 = NDArray[np.int64]
_F64 = NDArray[np.float64]

PLACEMENT_DEFAULT_BUDGET: int
PLACEMENT_PORTFOLIO_LIMIT: int
PLACEMENT_STRATEGIES: tuple[str, ...]
SCHEDULE_CANDIDATES: tuple[str, ...]
SHARD_MAX_PIECES: int

class TensorKind(enum.IntEnum):
    """The kind array's values."""

    COMPUTE = 0
    INPUT = 1
    PARAM = 2
    CONSTANT = 3

class TensorGraph:
    """A scheduled tensor graph, one entry per tensor, as flat int64 arrays; checked when
    built. Every array is passed by keyword (``PER_TENSOR`` and ``EDGES`` name them)."""

    PER_TENSOR: ClassVar[tuple[str, ...]]
    EDGES: ClassVar[tuple[str, ...]]
    def __init__(
        self,
        num_steps: int,
        *,
        step: _Array,
        size: _Array,
        kind: _Array,
        alloc: _Array,
        view_parent: _Array,
        view_offset: _Array,
        is_output: _Array,
        inplace_ok: _Array,
        embed_into: _Array,
        embed_offset: _Array,
        dep_offsets: _Array,
        deps: _Array,
    ) -> None: ...
    def __len__(self) -> int: ...
    @property
    def num_steps(self) -> int: ...
    @property
    def step(self) -> _I64: ...
    @property
    def size(self) -> _I64: ...
    @property
    def kind(self) -> _I64: ...
    @property
    def alloc(self) -> _I64: ...
    @property
    def view_parent(self) -> _I64: ...
    @property
    def view_offset(self) -> _I64: ...
    @property
    def is_output(self) -> _I64: ...
    @property
    def inplace_ok(self) -> _I64: ...
    @property
    def embed_into(self) -> _I64: ...
    @property
    def embed_offset(self) -> _I64: ...
    @property
    def dep_offsets(self) -> _I64: ...
    @property
    def deps(self) -> _I64: ...

class PlanOptions:
    """The options of plan_tensors and schedule_memory, checked when built."""

    def __init__(
        self,
        *,
        leaves_live_whole: bool = True,
        inputs_live_whole: bool = True,
        pin_output_ancestors: bool = False,
        inplace: bool = True,
        concat_inplace: bool = True,
        alignment: int = 64,
        strategy: str = "best",
        budget: int = ...,
    ) -> None: ...
    @property
    def leaves_live_whole(self) -> bool: ...
    @property
    def inputs_live_whole(self) -> bool: ...
    @property
    def pin_output_ancestors(self) -> bool: ...
    @property
    def inplace(self) -> bool: ...
    @property
    def concat_inplace(self) -> bool: ...
    @property
    def alignment(self) -> int: ...
    @property
    def strategy(self) -> str: ...
    @property
    def budget(self) -> int: ...

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

def slot_alignment(size: int, alignment: int) -> int:
    """The alignment of a slot of `size` bytes under the plan's `alignment`."""

def place_intervals(
    sizes: _Array,
    births: _Array,
    deaths: _Array,
    alignment: int,
    strategy: str,
    budget: int,
) -> tuple[_I64, int, int, str]:
    """Arena offsets for closed live intervals: (offsets, arena_size, steps, winner)."""

def plan_tensors(graph: TensorGraph, options: PlanOptions) -> dict[str, Any]:
    """Views, in-place reuse, concat operands in place, liveness and arena placement."""

def schedule_memory(graph: TensorGraph, options: PlanOptions) -> dict[str, Any]:
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
