"""Ways to cut one op into pieces that have no data dependency on each other.

``shardings(module, op, n)`` lists every legal cut of ``op`` into ``n`` pieces, exact cuts
first (so that the chooser, which keeps the earlier option on a tie, prefers them).

- matmul, fused_matmul_bias_act: ``batch`` (output axis 0 of a batched product: the
  operands carrying that batch dim are sliced, a rank-2 rhs and the bias shared),
  ``rows`` (M: lhs sliced, rhs and bias shared), ``cols`` (N: rhs and a length-N bias
  sliced, lhs shared);
- conv, fused_conv_bias_act: ``batch`` (N: input and residual sliced, weight and bias
  shared), ``out_channels`` (C_out in whole groups: weight, bias, residual sliced, and
  with groups > 1 the input channels of those groups too; the input is shared when
  groups = 1);
- elementwise ops: ``batch`` (output axis 0: operands whose axis 0 is the output's are
  sliced, broadcast operands shared).

Never K (a cross-piece sum), never C_in or a spatial axis (halo overlap). Pieces are as
even as possible: with length L, the first L % n pieces get L // n + 1 and the rest
L // n; a cut is offered only when L >= n. Options need static shapes (their bytes are
priced); an op with a symbolic dim anywhere gets none.

"Bit-identical" means the reference executor returns the same bits for the recombined
pieces as for the whole op (its matmul is row-invariant, and batched products and convs
compute each batch element with the same kernel call). Column and out-channel pieces run
the contraction with a different N, which BLAS may block differently: they agree to
~1e-6 relative, not bit for bit.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.irdl import IRDLOperation, OptOperandDef, VarOperandDef
from xdsl.utils.str_enum import StrEnum

from rlx_compile.dialects import mir
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.dialects.traits import Elementwise
from rlx_compile.dialects.types import TensorType
from rlx_compile.ir import graph_name

Range = tuple[int, int]
"""``(start, length)`` along a cut axis."""


class ShardError(ValueError):
    """Bad input to the shard API (an op outside its module, inconsistent ranges, an
    option that does not belong to the op it is applied to)."""


class Cut(StrEnum):
    """Which axis a cut splits."""

    BATCH = "batch"  # leading batch axis (matmul batch, conv N, elementwise outer axis)
    ROWS = "rows"  # matmul M
    COLS = "cols"  # matmul N: the weight is sliced
    OUT_CHANNELS = "out_channels"  # conv C_out: weight and bias are sliced

    @property
    def exact(self) -> bool:
        """Whether this cut is expected bit-identical to the unsplit op."""
        return self in (Cut.BATCH, Cut.ROWS)


def even_ranges(length: int, n: int) -> tuple[Range, ...]:
    """``n`` contiguous pieces covering ``[0, length)``, sizes differing by at most one
    (the first ``length % n`` pieces are the longer ones)."""
    if n < 1 or length < n:
        raise ShardError(f"cannot cut a length of {length} into {n} non-empty pieces")
    base, rem = divmod(length, n)
    out: list[Range] = []
    start = 0
    for i in range(n):
        size = base + (1 if i < rem else 0)
        out.append((start, size))
        start += size
    return tuple(out)


def check_ranges(ranges: Sequence[Range], length: int, what: str) -> None:
    """Ranges must be non-empty, contiguous, disjoint and cover ``[0, length)`` exactly:
    a gap or an overlap would silently drop or double-count rows."""
    cursor = 0
    for i, (start, size) in enumerate(ranges):
        if size <= 0:
            raise ShardError(f"{what}: piece {i} ({start}, {size}) is empty")
        if start != cursor:
            kind = "overlaps the previous piece" if start < cursor else "leaves a gap"
            raise ShardError(f"{what}: piece {i} starts at {start}, {kind} (expected {cursor})")
        cursor = start + size
    if cursor != length:
        raise ShardError(f"{what}: pieces cover [0, {cursor}) but the axis has length {length}")


@dataclass(frozen=True)
class OperandSlice:
    """An operand cut along one of its axes; piece ``i`` receives ``ranges[i]`` of it."""

    index: int  # position among the op's operands
    name: str  # operand name in the op definition ("lhs", "weight", ...)
    value: str  # the tensor: a leaf's name, else its SSA name
    axis: int
    ranges: tuple[Range, ...]
    shape: tuple[int, ...]
    nbytes: int

    def piece_bytes(self, i: int) -> int:
        return self.nbytes // self.shape[self.axis] * self.ranges[i][1]


@dataclass(frozen=True)
class SharedOperand:
    """An operand every piece needs whole (replicated to each worker unless resident)."""

    index: int
    name: str
    value: str
    nbytes: int


@dataclass(frozen=True)
class ShardOption:
    """One way to cut one op into ``n`` independent pieces.

    The output is cut along ``axis`` into ``ranges``; each ``sliced`` operand along its
    own axis (same piece count, ranges scaled for grouped convs); ``shared`` operands go
    whole to every piece. Construction checks every range list and byte count.
    """

    op: str  # op name, e.g. "mir.matmul"
    label: str  # "%y", or "mir.matmul#3" for an unnamed result
    graph: str  # the graph holding the op
    index: int  # position of the op in its graph's block
    cut: Cut
    axis: int  # output axis
    ranges: tuple[Range, ...]
    out_shape: tuple[int, ...]
    sliced: tuple[OperandSlice, ...]
    shared: tuple[SharedOperand, ...]
    piece_out_elems: tuple[int, ...]
    sliced_in_bytes: int
    shared_in_bytes: int
    out_bytes: int
    exact: bool
    piece_groups: tuple[int, ...] = ()  # conv groups of each piece (grouped out-channel cuts)

    def __post_init__(self) -> None:
        what = f"{self.label} {self.cut}"
        if self.n < 2:
            raise ShardError(f"{what}: an option needs at least 2 pieces, got {self.n}")
        if not 0 <= self.axis < len(self.out_shape):
            raise ShardError(f"{what}: axis {self.axis} is outside the output's rank")
        check_ranges(self.ranges, self.out_shape[self.axis], f"{what} output")
        per_index = math.prod(self.out_shape) // self.out_shape[self.axis]
        if self.piece_out_elems != tuple(per_index * size for _, size in self.ranges):
            raise ShardError(f"{what}: piece_out_elems do not match the ranges")
        for s in self.sliced:
            if len(s.ranges) != self.n:
                raise ShardError(f"{what}: operand {s.name} has {len(s.ranges)} pieces")
            check_ranges(s.ranges, s.shape[s.axis], f"{what} operand {s.name}")
        if self.sliced_in_bytes != sum(s.nbytes for s in self.sliced):
            raise ShardError(f"{what}: sliced_in_bytes differs from the sliced operands")
        if self.shared_in_bytes != sum(s.nbytes for s in self.shared):
            raise ShardError(f"{what}: shared_in_bytes differs from the shared operands")
        if self.piece_groups and len(self.piece_groups) != self.n:
            raise ShardError(f"{what}: piece_groups needs one entry per piece")

    @property
    def n(self) -> int:
        return len(self.ranges)

    @property
    def out_elems(self) -> int:
        return sum(self.piece_out_elems)

    def piece_in_bytes(self, i: int) -> int:
        """Bytes of sliced operands that piece ``i`` receives."""
        return sum(s.piece_bytes(i) for s in self.sliced)

    def piece_out_bytes(self, i: int) -> int:
        return self.out_bytes // self.out_elems * self.piece_out_elems[i] if self.out_elems else 0

    def describe(self) -> str:
        """``rows axis 0 [0:4, 4:8]``: the cut in one line (ranges as start:end)."""
        spans = ", ".join(f"{s}:{s + n}" for s, n in self.ranges)
        return f"{self.cut} axis {self.axis} [{spans}]"


# ---------------------------------------------------------------------------------
# Enumeration
# ---------------------------------------------------------------------------------

# (operand index, operand axis, ranges) of each sliced operand
_Slices = list[tuple[int, int, tuple[Range, ...]]]


@dataclass(frozen=True)
class _Cut:
    cut: Cut
    axis: int
    ranges: tuple[Range, ...]
    sliced: _Slices
    piece_groups: tuple[int, ...] = ()


def named_operands(op: Operation) -> list[tuple[str, SSAValue]]:
    """The op's operands in order, each with its name in the op definition."""
    if not isinstance(op, IRDLOperation):
        return [(f"operand{i}", v) for i, v in enumerate(op.operands)]
    out: list[tuple[str, SSAValue]] = []
    for name, odef in type(op).get_irdl_definition().operands:
        value = getattr(op, name)
        if isinstance(odef, VarOperandDef) and not isinstance(odef, OptOperandDef):
            out.extend((f"{name}{i}", v) for i, v in enumerate(value))
        elif value is not None:
            out.append((name, value))
    return out


def value_name(value: SSAValue) -> str:
    """A leaf's tensor name (``w``), else the SSA name (``%h``), else ``%?``."""
    if isinstance(value, OpResult) and isinstance(value.op, mir.InputOp | mir.ParamOp):
        return cast(StringAttr, value.op.properties["tensor_name"]).data
    return f"%{value.name_hint}" if value.name_hint else "%?"


def _axis_ranges(
    types: Sequence[TensorType], out: TensorType, out_axis: int, n: int
) -> tuple[tuple[Range, ...], _Slices] | None:
    """Even ranges along ``out_axis`` and every operand that carries that axis at the
    same right-aligned position with the same length (the others broadcast: shared)."""
    length = cast(int, out.shape[out_axis])
    if length < n:
        return None
    ranges = even_ranges(length, n)
    sliced: _Slices = []
    from_end = out.rank - out_axis
    for i, t in enumerate(types):
        axis = t.rank - from_end
        if axis >= 0 and t.shape[axis] == length:
            sliced.append((i, axis, ranges))
    return ranges, sliced


def _matmul_cuts(types: Sequence[TensorType], out: TensorType, n: int) -> list[_Cut]:
    a, b = types[0], types[1]
    if a.rank == 0 or b.rank == 0:
        return []
    has_m, has_n = a.rank >= 2, b.rank >= 2
    batch_rank = out.rank - int(has_m) - int(has_n)
    cuts: list[_Cut] = []
    if batch_rank >= 1:
        # Only lhs/rhs carry batch dims (a bias runs along N): slice those whose
        # right-aligned batch dims reach output axis 0.
        length = cast(int, out.shape[0])
        if length >= n:
            ranges = even_ranges(length, n)
            sliced: _Slices = []
            for i, t in enumerate((a, b)):
                t_batch = t.rank - 2 if t.rank >= 2 else 0
                if t_batch == batch_rank and t.shape[0] == length:
                    sliced.append((i, 0, ranges))
            cuts.append(_Cut(Cut.BATCH, 0, ranges, sliced))
    if has_m and cast(int, a.shape[-2]) >= n:
        ranges = even_ranges(cast(int, a.shape[-2]), n)
        cuts.append(_Cut(Cut.ROWS, batch_rank, ranges, [(0, a.rank - 2, ranges)]))
    if has_n and cast(int, b.shape[-1]) >= n:
        width = cast(int, b.shape[-1])
        ranges = even_ranges(width, n)
        sliced = [(1, b.rank - 1, ranges)]
        if len(types) > 2 and types[2].rank >= 1 and types[2].shape[-1] == width:
            # a per-column bias ([N] or [1, ..., N]) goes with its columns
            sliced.append((2, types[2].rank - 1, ranges))
        cuts.append(_Cut(Cut.COLS, out.rank - 1, ranges, sliced))
    return cuts


def _conv_cuts(op: ShapedOp, types: Sequence[TensorType], out: TensorType, n: int) -> list[_Cut]:
    names = [name for name, _ in named_operands(op)]
    residual = names.index("residual") if "residual" in names else None
    cuts: list[_Cut] = []
    batch = cast(int, out.shape[0])
    if batch >= n:
        ranges = even_ranges(batch, n)
        sliced: _Slices = [(0, 0, ranges)]
        if residual is not None:
            sliced.append((residual, 0, ranges))
        cuts.append(_Cut(Cut.BATCH, 0, ranges, sliced))
    groups = op.props().int("groups")
    c_out, c_in = cast(int, out.shape[1]), cast(int, types[0].shape[1])
    if groups == 1:
        if c_out < n:
            return cuts
        ranges = even_ranges(c_out, n)
        sliced = [(1, 0, ranges)]
        piece_groups: tuple[int, ...] = ()
    else:
        # Whole groups only: group g reads input channels [g·cg, (g+1)·cg) and writes
        # output channels [g·cog, (g+1)·cog), so a piece gets only its groups' inputs.
        if groups < n:
            return cuts
        by_group = even_ranges(groups, n)
        cog, cg = c_out // groups, c_in // groups
        ranges = tuple((s * cog, k * cog) for s, k in by_group)
        sliced = [(0, 1, tuple((s * cg, k * cg) for s, k in by_group)), (1, 0, ranges)]
        piece_groups = tuple(k for _, k in by_group)
    if "bias" in names:
        sliced.append((names.index("bias"), 0, ranges))
    if residual is not None:
        sliced.append((residual, 1, ranges))
    cuts.append(_Cut(Cut.OUT_CHANNELS, 1, ranges, sliced, piece_groups))
    return cuts


def _elementwise_cuts(types: Sequence[TensorType], out: TensorType, n: int) -> list[_Cut]:
    if out.rank == 0:
        return []
    found = _axis_ranges(types, out, 0, n)
    if found is None:
        return []
    ranges, sliced = found
    return [_Cut(Cut.BATCH, 0, ranges, sliced)]


def cuttable(op: Operation) -> bool:
    """Whether ``shardings`` knows how to cut this kind of op at all."""
    return isinstance(
        op, mir.MatmulOp | mir.FusedMatmulBiasActOp | mir.ConvOp | mir.FusedConvBiasActOp
    ) or op.has_trait(Elementwise)


def _enclosing(module: Operation, op: Operation) -> tuple[Operation, int]:
    """The graph op holding ``op`` directly and ``op``'s position in its block; raises
    when ``op`` is not inside ``module``."""
    block = op.parent_block()
    if block is None or block.parent_op() is None:
        raise ShardError(f"{op.name} is not inside a graph")
    graph = cast(Operation, block.parent_op())
    node: Operation | None = graph
    while node is not None and node is not module:
        node = node.parent_op()
    if node is None:
        raise ShardError(f"{op.name} is not inside the given module")
    return graph, block.get_operation_index(op)


def op_label(op: Operation, index: int) -> str:
    hint = op.results[0].name_hint if op.results else None
    return f"%{hint}" if hint else f"{op.name}#{index}"


def shardings(module: Operation, op: Operation, n: int) -> list[ShardOption]:
    """Every legal cut of ``op`` (inside ``module``) into ``n`` independent pieces.

    Returns ``[]`` when ``n < 2``, the op is not a kind shard can cut, a shape is not
    static, or no axis is at least ``n`` long. Exact cuts (batch, rows) come first.
    """
    n = operator.index(n)
    graph, index = _enclosing(module, op)
    if n < 2 or not cuttable(op) or len(op.results) != 1:
        return []
    operands = named_operands(op)
    types = [v.type for _, v in operands]
    out = op.results[0].type
    if not all(isinstance(t, TensorType) and t.is_static for t in [*types, out]):
        return []
    ttypes = cast(list[TensorType], types)
    tout = cast(TensorType, out)
    if isinstance(op, mir.MatmulOp | mir.FusedMatmulBiasActOp):
        cuts = _matmul_cuts(ttypes, tout, n)
    elif isinstance(op, mir.ConvOp | mir.FusedConvBiasActOp):
        cuts = _conv_cuts(op, ttypes, tout, n)
    else:
        cuts = _elementwise_cuts(ttypes, tout, n)
    label = op_label(op, index)
    return [_option(op, label, graph_name(graph), index, operands, ttypes, tout, c) for c in cuts]


def _option(
    op: Operation,
    label: str,
    graph: str,
    index: int,
    operands: Sequence[tuple[str, SSAValue]],
    types: Sequence[TensorType],
    out: TensorType,
    c: _Cut,
) -> ShardOption:
    nbytes = [cast(int, t.nbytes()) for t in types]
    by_index = {i: (axis, ranges) for i, axis, ranges in c.sliced}
    sliced = tuple(
        OperandSlice(
            i, operands[i][0], value_name(operands[i][1]), by_index[i][0], by_index[i][1],
            cast(tuple[int, ...], types[i].shape), nbytes[i],
        )
        for i in sorted(by_index)
    )  # fmt: skip
    shared = tuple(
        SharedOperand(i, name, value_name(v), nbytes[i])
        for i, (name, v) in enumerate(operands)
        if i not in by_index
    )
    out_shape = cast(tuple[int, ...], out.shape)
    per_index = math.prod(out_shape) // out_shape[c.axis]
    return ShardOption(
        op=op.name, label=label, graph=graph, index=index, cut=c.cut, axis=c.axis,
        ranges=c.ranges, out_shape=out_shape, sliced=sliced, shared=shared,
        piece_out_elems=tuple(per_index * size for _, size in c.ranges),
        sliced_in_bytes=sum(s.nbytes for s in sliced),
        shared_in_bytes=sum(s.nbytes for s in shared),
        out_bytes=cast(int, out.nbytes()), exact=c.cut.exact, piece_groups=c.piece_groups,
    )  # fmt: skip


def flops_per_output_elem(op: Operation) -> int | None:
    """Multiply-adds per output element of the ops shard can cut (matmul: K; conv:
    C_in/groups · kernel taps; elementwise: 1), None for other ops or a dynamic K or
    kernel. Turns a rate in multiply-adds per second into output elements per second."""
    if isinstance(op, mir.MatmulOp | mir.FusedMatmulBiasActOp):
        k = cast(TensorType, op.operands[0].type).shape[-1]
        return k if isinstance(k, int) else None
    if isinstance(op, mir.ConvOp | mir.FusedConvBiasActOp):
        w = cast(TensorType, op.operands[1].type)
        dims = w.shape[1:]
        return math.prod(cast(Sequence[int], dims)) if w.is_static else None
    if op.has_trait(Elementwise):
        return 1
    return None
