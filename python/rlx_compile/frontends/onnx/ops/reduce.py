"""Reductions: the Reduce* family, ArgMax/ArgMin and CumSum."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    axis_of,
    converter,
)

_REDUCE = {
    "ReduceSum": "sum",
    "ReduceMean": "mean",
    "ReduceMax": "max",
    "ReduceMin": "min",
    "ReduceProd": "prod",
    "ReduceL1": "l1",
    "ReduceL2": "l2",
    "ReduceLogSum": "logsum",
    "ReduceLogSumExp": "logsumexp",
    "ReduceSumSquare": "sumsquare",
}


def _empty_value(kind: str, dtype: DType) -> float | int | bool:
    """The value of a reduction over no elements."""
    if kind in ("sum", "l1", "l2", "sumsquare"):
        return 0
    if kind == "prod":
        return 1
    if kind in ("logsum", "logsumexp"):
        return float("-inf")
    if kind == "mean":
        return float("nan")
    lowest = kind == "max"
    if dtype.is_float:
        return float("-inf") if lowest else float("inf")
    if dtype.is_bool:
        return not lowest
    lo, hi = dtype.int_range
    return lo if lowest else hi


@converter(*_REDUCE)
def reduce(ctx: NodeContext) -> ConverterResult:
    kind = _REDUCE[ctx.op_type]
    x = ctx.x(0)
    shape = type_of(x).shape
    rank = len(shape)
    keepdims = bool(ctx.attr("keepdims", 1))
    axes_from_input = ctx.op_type == "ReduceSum" or ctx.since >= 18
    if axes_from_input:
        noop = bool(ctx.attr("noop_with_empty_axes", 0))
        axes = ctx.static_ints(1, f"{ctx.op_type}'s axes") if ctx.has(1) else []
    else:
        noop = False
        axes = ctx.attr("axes", [])
    if not axes:
        if noop:
            return x
        axes = list(range(rank))
    norm = sorted({axis_of(a, rank) for a in axes})
    out_shape = (
        [1 if i in norm else d for i, d in enumerate(shape)]
        if keepdims
        else [d for i, d in enumerate(shape) if i not in norm]
    )
    if any(shape[a] == 0 for a in norm):
        if not all(isinstance(d, int) for d in out_shape):
            raise Unsupported("an empty reduction with symbolic dims")
        dtype = type_of(x).dtype
        fill = np.full([int(d) for d in out_shape], _empty_value(kind, dtype), dtype.numpy)
        return ctx.constant(fill)
    return reduce_value(ctx, kind, x, norm, keepdims)


_CHAIN = {"l1": "l1", "l2": "l2", "sumsquare": "sum_square", "logsum": "log_sum"}


def reduce_value(
    ctx: NodeContext, kind: str, x: SSAValue, axes: list[int], keepdims: bool
) -> SSAValue:
    b = ctx.b
    if kind in ("sum", "mean", "prod"):
        return b.reduce(kind, x, axes, keepdims)
    if kind in ("max", "min"):
        dtype = type_of(x).dtype
        if dtype.is_bool:  # bool max/min: any/all, on an exact u8 copy
            return b.cast(b.reduce(kind, b.cast(x, DType.U8), axes, keepdims), DType.BOOL)
        return b.reduce(kind, x, axes, keepdims)
    # One op each (the chain they mean: sum(abs), sqrt(sum(mul)), sum(mul), log(sum));
    # l2 and logsum floats only, as sqrt and log are.
    if kind in _CHAIN:
        return b.reduce(_CHAIN[kind], x, axes, keepdims)
    # log Σ exp(x), shifted by the max so that large inputs do not overflow (floats only:
    # the op refuses other element types, as exp does).
    return b.log_sum_exp(x, axes, keepdims)


@converter("ArgMax", "ArgMin")
def arg_reduce(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    shape = type_of(x).shape
    axis = axis_of(ctx.attr("axis", 0), len(shape))
    keepdims = bool(ctx.attr("keepdims", 1))
    op = mir.ArgMaxOp if ctx.op_type == "ArgMax" else mir.ArgMinOp
    if not ctx.attr("select_last_index", 0):
        return ctx.b.emit(op(x, axis, keepdims)).results[0]
    # The last extreme: the first one of the reversed axis, mapped back.
    n = shape[axis]
    if not isinstance(n, int):
        raise Unsupported("select_last_index along a symbolic axis")
    starts = [n - 1 if i == axis else 0 for i in range(len(shape))]
    steps = [-1 if i == axis else 1 for i in range(len(shape))]
    flipped = ctx.b.emit(mir.SliceOp(x, starts, steps, list(shape))).results[0]
    index = ctx.b.emit(op(flipped, axis, keepdims)).results[0]
    return ctx.b.sub(n - 1, index)


@converter("CumSum", "CumProd")
def cumulative(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    axis = axis_of(ctx.int_operand(1, f"{ctx.op_type}'s axis"), type_of(x).rank)
    exclusive = bool(ctx.attr("exclusive", 0))
    reverse = bool(ctx.attr("reverse", 0))
    op = mir.CumsumOp if ctx.op_type == "CumSum" else mir.CumprodOp
    return ctx.b.emit(op(x, axis, exclusive, reverse)).results[0]


@converter("TopK")
def topk(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    axis = axis_of(ctx.attr("axis", -1), type_of(x).rank)
    k = ctx.int_operand(1, "TopK's K")
    smallest = not ctx.attr("largest", 1)
    ctx.attr("sorted", 1)  # always sorted: a valid order for sorted=0 as well
    op = ctx.b.emit(mir.TopKOp(x, k, axis, smallest))
    return list(op.results)
