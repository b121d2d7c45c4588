"""Sequences and optionals, resolved at import.

A sequence is an import-time list of MIR values (``SequenceValue``): every op on it must
know its positions when the model is imported, so a position computed at run time is
an error naming the node (a position fed by a graph input is baked in by the backend,
as shape operands are). An optional is a value or nothing (``OptionalValue``). Nothing
of either reaches MIR but the tensors they hold.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    axis_of,
    converter,
)
from rlx_compile.frontends.onnx.ops.shape import reshape, stack
from rlx_compile.frontends.onnx.structured import (
    OptionalValue,
    SequenceValue,
    StackedSequence,
    Structured,
)


def sequence(ctx: NodeContext, i: int) -> SequenceValue:
    value = ctx.any(i)
    if not isinstance(value, SequenceValue):
        kind = value.kind if not isinstance(value, SSAValue) else "a tensor"
        raise Unsupported(f"input #{i} is {kind}, not a sequence")
    return value


def _normalise(pos: int, length: int) -> int:
    return pos + length if pos < 0 else pos


@converter("SequenceEmpty")
def sequence_empty(ctx: NodeContext) -> ConverterResult:
    return SequenceValue((), int(ctx.attr("dtype", 1)))


@converter("SequenceConstruct")
def sequence_construct(ctx: NodeContext) -> ConverterResult:
    items = ctx.inputs()
    dtypes = {type_of(v).dtype for v in items}
    if len(dtypes) > 1:
        raise Unsupported(f"items of types {sorted(d.value for d in dtypes)}")
    return SequenceValue(tuple(items))


@converter("SequenceInsert")
def sequence_insert(ctx: NodeContext) -> ConverterResult:
    seq = sequence(ctx, 0)
    item = ctx.x(1)
    items = list(seq.items)
    at = len(items)
    if ctx.has(2):
        at = _checked(ctx, 2, len(items), insert=True)
    items.insert(at, item)
    return SequenceValue(tuple(items), seq.elem_type)


@converter("SequenceErase")
def sequence_erase(ctx: NodeContext) -> ConverterResult:
    seq = sequence(ctx, 0)
    items = list(seq.items)
    if not items:
        raise Unsupported("erase from an empty sequence")
    at = _checked(ctx, 1, len(items)) if ctx.has(1) else len(items) - 1
    del items[at]
    return SequenceValue(tuple(items), seq.elem_type)


@converter("SequenceAt")
def sequence_at(ctx: NodeContext) -> ConverterResult:
    seq = sequence(ctx, 0)
    return seq.items[_checked(ctx, 1, len(seq.items))]


@converter("SequenceLength")
def sequence_length(ctx: NodeContext) -> ConverterResult:
    held = ctx.any(0)
    if isinstance(held, StackedSequence):
        return ctx.dim(type_of(held.stacked).shape[0])
    return ctx.constant(np.array(len(sequence(ctx, 0).items), np.int64))


def _checked(ctx: NodeContext, i: int, length: int, *, insert: bool = False) -> int:
    """Position operand ``i`` as an index into (or, for an insert, up to the end of) a
    sequence of ``length``."""
    values = ctx.ints(i, "position")
    if len(values) != 1 or isinstance(values[0], str):
        raise Unsupported(f"position must be one integer, got {values}")
    pos = int(values[0])
    high = length if insert else length - 1
    if not -length <= pos <= high:
        raise Unsupported(f"position {pos} is out of range for a sequence of {length}")
    return _normalise(pos, length)


@converter("SplitToSequence")
def split_to_sequence(ctx: NodeContext) -> ConverterResult:
    """Pieces along ``axis``: of the given sizes, of one size (the last may be shorter),
    or (no split) every index, its axis dropped unless keepdims."""
    x = ctx.x(0)
    shape = list(type_of(x).shape)
    axis = axis_of(ctx.attr("axis", 0), len(shape))
    keepdims = bool(ctx.attr("keepdims", 1))
    n = shape[axis]
    if not ctx.has(1):
        if not isinstance(n, int):
            raise Unsupported(f"splitting symbolic dim {n!r} by 1: the sequence length is open")
        pieces = [ctx.b.narrow(x, axis, i, 1) for i in range(n)]
        if not keepdims:
            shape_out = shape[:axis] + shape[axis + 1 :]
            pieces = [reshape(ctx, p, shape_out) for p in pieces]
        return SequenceValue(tuple(pieces))
    split = ctx.const(1, "split")
    if split.ndim == 0:
        size = int(split)
        if size <= 0 or not isinstance(n, int):
            raise Unsupported(f"split size {size} of a dim of {n!r}")
        sizes = [min(size, n - s) for s in range(0, n, size)]
    else:
        sizes = [int(v) for v in split.reshape(-1)]
        if any(s < 0 for s in sizes) or (isinstance(n, int) and sum(sizes) != n):
            raise Unsupported(f"split sizes {sizes} do not cover the {n} of axis {axis}")
    pieces, start = [], 0
    for size in sizes:
        pieces.append(ctx.b.narrow(x, axis, start, size))
        start += size
    return SequenceValue(tuple(pieces))


@converter("ConcatFromSequence")
def concat_from_sequence(ctx: NodeContext) -> ConverterResult:
    new_axis = bool(ctx.attr("new_axis", 0))
    axis = ctx.attr("axis")
    if axis is None:
        raise Unsupported("attribute 'axis' is required")
    held = ctx.any(0)
    if isinstance(held, StackedSequence):
        return _concat_stacked(ctx, held.stacked, int(axis), new_axis)
    seq = sequence(ctx, 0)
    if not seq.items:
        raise Unsupported("concatenating an empty sequence")
    items = list(seq.items)
    if any(not isinstance(v, SSAValue) for v in items):
        raise Unsupported("a sequence of non-tensors")
    if new_axis:
        return stack(ctx, items, int(axis))
    axis = axis_of(int(axis), type_of(items[0]).rank)
    return ctx.b.concat(items, axis) if len(items) > 1 else items[0]


def _concat_stacked(ctx: NodeContext, stacked: SSAValue, axis: int, new_axis: bool) -> SSAValue:
    """ConcatFromSequence of a loop's appended items ([n, *item]): the new axis 0 moved
    to ``axis`` (a stack), or merged into the item's ``axis`` (a concat)."""
    shape = list(type_of(stacked).shape)
    rank = len(shape) - 1
    axis = axis_of(axis, rank + 1 if new_axis else rank)
    if axis:
        perm = [*range(1, axis + 1), 0, *range(axis + 1, rank + 1)]
        stacked = ctx.b.transpose(stacked, perm)
    if new_axis:
        return stacked
    merged = [*shape[1 : axis + 1], shape[0] * shape[axis + 1], *shape[axis + 2 :]]
    return reshape(ctx, stacked, merged)


# ---------------------------------------------------------------------------------
# Optional
# ---------------------------------------------------------------------------------


@converter("Optional")
def optional(ctx: NodeContext) -> ConverterResult:
    ctx.attr("type")  # the type of an empty optional: nothing to build
    return OptionalValue(ctx.any(0) if ctx.has(0) else None)


def _held(ctx: NodeContext) -> SSAValue | Structured | None:
    """What an optional input holds (a plain tensor or sequence holds itself)."""
    if not ctx.has(0):
        return None
    value = ctx.any(0)
    return value.item if isinstance(value, OptionalValue) else value


@converter("OptionalHasElement")
def optional_has_element(ctx: NodeContext) -> ConverterResult:
    return ctx.constant(np.array(_held(ctx) is not None))


@converter("OptionalGetElement")
def optional_get_element(ctx: NodeContext) -> ConverterResult:
    value = _held(ctx)
    if value is None:
        raise Unsupported("the optional is empty: it has no element to get")
    return value


@converter("SequenceMap")
def sequence_map(ctx: NodeContext) -> ConverterResult:
    """The body applied to every position of the input sequence (unrolled: the length
    is known), each additional input a sequence of the same length or a tensor given
    to every step; each body output collects into a sequence."""
    from rlx_compile.frontends.onnx.ops.misc import UnrolledBody

    seq = sequence(ctx, 0)
    extra = [ctx.any(i) for i in range(1, ctx.num_inputs)]
    length = len(seq.items)
    for value in extra:
        if isinstance(value, SequenceValue) and len(value.items) != length:
            raise Unsupported(f"sequences of lengths {length} and {len(value.items)}")
    body = UnrolledBody(ctx, "body")
    outputs: list[list[object]] = [[] for _ in body.body.output]
    for t in range(length):
        step_inputs = [seq.items[t]] + [
            v.items[t] if isinstance(v, SequenceValue) else v for v in extra
        ]
        for collected, value in zip(outputs, body.step(t, step_inputs), strict=True):
            collected.append(value)
    return [SequenceValue(tuple(items)) for items in outputs]
