"""How one op becomes kernel calls: the lowering registry, the per-op emitter it gets,
and the shape arithmetic (broadcast strides, dim collapsing) lowerings share.

A lowering is ``f(e: OpEmitter) -> None`` registered for op classes with ``@lowers``;
it reads ``e.args``/``e.outs`` (each a tensor at a ``Ptr``), appends calls with
``e.call``, takes per-op scratch with ``e.tmp``/``e.scratch`` and refuses what it cannot
run with ``e.unsupported(why)`` (the build then fails naming the op).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn, TypeVar

from xdsl.ir import Operation

from rlx_compile.conversion.lir_to_c.program import ALIGN, Arg, Call, Ptr, align_up
from rlx_compile.dialects.types import DType, TensorType

SUFFIX: dict[DType, str] = {
    DType.F32: "f32", DType.F64: "f64", DType.F16: "f16", DType.BF16: "bf16",
    DType.I8: "i8", DType.I16: "i16", DType.I32: "i32", DType.I64: "i64",
    DType.U8: "u8", DType.U16: "u16", DType.U32: "u32", DType.U64: "u64",
    DType.BOOL: "b",
}  # fmt: skip
"""The kernel library's type suffixes; other element types have no kernels."""
FLOATS = frozenset({DType.F32, DType.F64, DType.F16, DType.BF16})
INTS = frozenset(
    {DType.I8, DType.I16, DType.I32, DType.I64, DType.U8, DType.U16, DType.U32, DType.U64}
)
NUMERIC = FLOATS | INTS
ALL = NUMERIC | {DType.BOOL}
DTYPE_CODE = {d: i for i, d in enumerate(SUFFIX)}
"""A dtype's position in RLX_ALL_TYPES (for kernels that switch on it)."""
INDEX_KIND = {
    d: i
    for i, d in enumerate(
        (DType.I8, DType.I16, DType.I32, DType.I64, DType.U8, DType.U16, DType.U32, DType.U64)
    )
}


class Unsupported(Exception):
    """This op (in this form) has no native kernel."""


@dataclass(frozen=True)
class Operand:
    """A tensor at an address."""

    loc: Ptr
    type: TensorType

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.type.shape)

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def rank(self) -> int:
        return len(self.shape)

    def overlaps(self, other: Operand) -> bool:
        """Whether the two tensors share bytes (the planner wrote one over the other)."""
        x, y = self.loc, other.loc
        return (
            (x.base, x.index) == (y.base, y.index)
            and x.offset < y.offset + other.nbytes
            and y.offset < x.offset + self.nbytes
        )


@dataclass(frozen=True)
class EmitOptions:
    """What the kernel set may use on this target."""

    im2col: bool = True
    """Convolutions may unfold their input into a taps x positions scratch matrix for a
    GEMM; without it they run direct (microcontrollers, where RAM is the arena). Row-sized
    scratch (pooling accumulators) is always allowed."""


@dataclass
class OpEmitter:
    op: Operation
    args: list[Operand]
    outs: list[Operand]
    step: int
    options: EmitOptions
    calls: list[Call] = field(default_factory=list)
    scratch_used: int = 0

    def call(self, kernel: str, *args: Arg) -> None:
        self.calls.append(Call(kernel, tuple(args), self.step))

    def scratch(self, nbytes: int) -> Ptr:
        """Fresh scratch bytes, alive until this op ends."""
        ptr = Ptr("scratch", self.scratch_used)
        self.scratch_used += align_up(max(nbytes, 1), ALIGN)
        return ptr

    def tmp(self, t: TensorType) -> Operand:
        nbytes = t.nbytes()
        assert nbytes is not None
        return Operand(self.scratch(nbytes), t)

    def unsupported(self, why: str) -> NoReturn:
        raise Unsupported(why)

    def suffix(self, t: TensorType | Operand, allowed: frozenset[DType] = ALL) -> str:
        """The kernel suffix of a tensor's element type, if the kernels take it."""
        dtype = t.dtype
        if dtype not in allowed or dtype not in SUFFIX:
            self.unsupported(f"{dtype.value} tensors")
        return SUFFIX[dtype]


Lowering = Callable[[OpEmitter], None]
LOWERINGS: dict[type[Operation], Lowering] = {}
L = TypeVar("L", bound=Lowering)


def lowers(*ops: type[Operation]) -> Callable[[L], L]:
    def register(fn: L) -> L:
        for op in ops:
            if op in LOWERINGS:
                raise ValueError(f"a native lowering of {op.name} exists")
            LOWERINGS[op] = fn
        return fn

    return register


# ---------------------------------------------------------------------------------
# Shape arithmetic
# ---------------------------------------------------------------------------------


def dense_strides(shape: Sequence[int]) -> list[int]:
    """Row-major element strides."""
    strides = [0] * len(shape)
    step = 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = step
        step *= shape[d]
    return strides


def broadcast_strides(shape: Sequence[int], out: Sequence[int]) -> list[int]:
    """Element strides reading a ``shape`` tensor over the ``out`` index space (NumPy
    broadcasting: 0 along broadcast dims)."""
    pad = len(out) - len(shape)
    dense = dense_strides(shape)
    strides = []
    for d, n in enumerate(out):
        k = d - pad
        strides.append(0 if k < 0 or shape[k] == 1 or n == 1 else dense[k])
    return strides


def collapse(shape: Sequence[int], *strides: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims and merge neighbours every stride set walks as one dim."""
    dims = [d for d, n in enumerate(shape) if n != 1]
    out_shape: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides]
    for d in dims:
        n = shape[d]
        if out_shape and all(
            s[-1] == st[d] * n for s, st in zip(out_strides, strides, strict=True)
        ):
            out_shape[-1] *= n
            for s, st in zip(out_strides, strides, strict=True):
                s[-1] = st[d]
            continue
        out_shape.append(n)
        for s, st in zip(out_strides, strides, strict=True):
            s.append(st[d])
    if 0 in shape:
        return [0], [[0] for _ in strides]
    return out_shape, out_strides


def split_axis(shape: Sequence[int], axis: int) -> tuple[int, int, int]:
    """(outer, n, inner) of a tensor viewed around one axis."""
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
