"""The kernel program: a planned graph as a straight list of kernel calls.

``emit_program`` turns a ``lir.graph`` into a ``Program``: every tensor at a byte
address (``Ptr``: the arena at its planned slot, the weights blob, a caller's input or
output buffer, or the per-op scratch region after the planned arena), every op one or
more calls of the C kernel library with constant shapes and strides. The program is
target-neutral data: ``c_source`` prints it as one C translation unit, and
``rlx_compile.native`` runs it either compiled or call by call from Python. Another
emitter (CUDA C, Metal) is another printer of the same program and kernel set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from xdsl.ir import Operation

from rlx_compile.diagnostics import RlxError
from rlx_compile.dialects.types import DType, TensorType

Base = Literal["arena", "scratch", "weights", "input", "output"]

ALIGN = 64
"""Alignment of every weight entry and scratch buffer (the planner's default slot
alignment: enough for any vector load)."""


def align_up(n: int, alignment: int = ALIGN) -> int:
    return -(-n // alignment) * alignment


@dataclass(frozen=True)
class Ptr:
    """A byte address: ``base`` (+ ``index``: which input or output) + ``offset``."""

    base: Base
    offset: int = 0
    index: int = 0

    def at(self, offset: int) -> Ptr:
        return Ptr(self.base, self.offset + offset, self.index)


@dataclass(frozen=True)
class Ptrs:
    """Addresses passed as an array of pointers (a variadic kernel's operands)."""

    values: tuple[Ptr, ...]


@dataclass(frozen=True)
class Ints:
    """A constant int64 array (shapes, strides, geometry), passed by pointer."""

    values: tuple[int, ...]


@dataclass(frozen=True)
class Floats:
    """A constant double array (a classic-ML model's table), passed by pointer."""

    values: tuple[float, ...]


@dataclass(frozen=True)
class Bytes:
    """Constant bytes passed by pointer (a pad's fill element)."""

    data: bytes


Arg = Ptr | Ptrs | Ints | Floats | Bytes | int | float | None
"""A kernel argument: an address, addresses, a constant array, an int64, a double, or
NULL."""


@dataclass(frozen=True)
class Call:
    kernel: str
    args: tuple[Arg, ...]
    step: int
    """Index of the op (in ``Program.steps``) this call implements, for error messages."""


@dataclass(frozen=True)
class Tensor:
    """A graph input or output as the caller sees it."""

    name: str
    type: TensorType
    arena_offset: int | None = None
    """Where it lives in the arena (inputs are copied there; outputs copied out)."""

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.type.shape)

    @property
    def nbytes(self) -> int:
        n = self.type.nbytes()
        assert n is not None
        return n


WeightKind = Literal["param", "constant", "pack"]


@dataclass(frozen=True)
class WeightEntry:
    """One tensor of the weights blob: a param (fed by the caller), a constant (from the
    IR) or a weight pack (computed from those by ``op`` when the blob is packed)."""

    kind: WeightKind
    name: str
    type: TensorType
    offset: int | None
    """Where it is in the blob; None for what no run reads (a param only packs read)."""
    op: Operation
    """The op holding it: its param, its constant, or the op computing the pack."""
    result: int = 0

    @property
    def nbytes(self) -> int:
        n = self.type.nbytes()
        assert n is not None
        return n


@dataclass
class Program:
    graph: str
    """The graph's symbol name."""
    planned_arena: int
    """The arena the memory plan placed every tensor in."""
    alignment: int
    scratch: int = 0
    """Bytes of per-op scratch after the planned arena (the largest any op needs)."""
    inputs: list[Tensor] = field(default_factory=list)
    outputs: list[Tensor] = field(default_factory=list)
    weights: list[WeightEntry] = field(default_factory=list)
    weights_bytes: int = 0
    calls: list[Call] = field(default_factory=list)
    steps: list[Operation] = field(default_factory=list)
    """The op of each step, for naming the op a kernel error came from."""
    static_ops: list[Operation] = field(default_factory=list)
    """Params, constants and the ops computing weight packs (views included), in
    schedule order: what packing the weights blob evaluates."""

    @property
    def scratch_offset(self) -> int:
        return align_up(self.planned_arena)

    @property
    def arena_bytes(self) -> int:
        """The whole working memory of a run: the planned arena, then the scratch."""
        return self.scratch_offset + self.scratch if self.scratch else self.planned_arena

    @property
    def params(self) -> list[WeightEntry]:
        return [w for w in self.weights if w.kind == "param"]

    @property
    def kernels(self) -> list[str]:
        """The kernel functions the program calls, sorted."""
        return sorted({c.kernel for c in self.calls})


class NativeUnsupportedError(RlxError):
    """Ops of a graph that have no native kernel (each kind named with one location)."""

    def __init__(self, problems: list[tuple[str, str, str | None]]):
        self.problems = problems
        kinds: dict[tuple[str, str], list[str | None]] = {}
        for name, why, loc in problems:
            kinds.setdefault((name, why), []).append(loc)
        parts = []
        for (name, why), locs in sorted(kinds.items()):
            where = next((loc for loc in locs if loc), None)
            count = f" x{len(locs)}" if len(locs) > 1 else ""
            parts.append(f"{name}{count} ({why}{f', at {where}' if where else ''})")
        super().__init__("no native kernel for " + "; ".join(parts))

    @property
    def op_names(self) -> list[str]:
        return sorted({name for name, _, _ in self.problems})


ERROR_MESSAGES = {
    1: "integer division or modulo by zero",
    2: "index out of range",
    3: "integer zero raised to a negative power",
    4: "reduction over an empty axis has no value",
    5: "pad wider than its axis (reflect) or of an empty axis",
    6: "a kernel called outside its limits (an internal error of the emitter)",
}
"""The kernel library's RLX_ERR_* codes (rlx_runtime.h)."""


def split_status(status: int) -> tuple[int, int]:
    """A run's return value -> (step, kernel error code): ``(step + 1) << 8 | code``."""
    return (status >> 8) - 1, status & 0xFF
