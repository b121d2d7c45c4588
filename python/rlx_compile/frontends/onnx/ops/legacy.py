"""Converters of definitions older than opset 13 that onnx's version converter cannot
upgrade (``frontends.onnx.upgrade`` keeps these nodes at their opset).

- ``Scan``-8: every operand carries a batch axis first (the scan axis is axis 1) and
  ``sequence_lens`` may give each batch entry its length. The converter's Scan 8->9
  adapter drops the batch dim from the value types and moves no data, so the upgraded
  graph no longer accepts the model's inputs. Here each batch entry is scanned as a
  Scan-9 and the results stacked on the batch axis.
- ``BatchNormalization`` 6-8 with ``spatial=0``: the statistics, scale and bias hold one
  value per element of a sample (shape ``[C, D1, ...]``) instead of one per channel; the
  adapter refuses it.

And one the converter upgrades only knowing the input's rank, which here is the type the
input has (upgraded, it would take onnx shape inference over the whole model):

- ``Softmax``, ``LogSoftmax`` and ``Hardmax`` before 13 work on the input coerced to 2-D
  at ``axis`` (default 1): rows ``a_0 * ... * a_(axis-1)``, each normalised over the rest.
  As the converter does it: unless ``axis`` is the last one, a reshape to 2-D before the
  op along its last axis and a reshape back after.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import element_count
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    axis_of,
    legacy_converter,
)
from rlx_compile.frontends.onnx.ops.misc import UnrolledBody, unrolled_scan
from rlx_compile.frontends.onnx.ops.nn import as_dtype, hardmax_along
from rlx_compile.frontends.onnx.ops.shape import reshape, select, stack, unsqueeze


@legacy_converter("Scan", since=(8,))
def scan_8(ctx: NodeContext) -> ConverterResult:
    body = UnrolledBody(ctx, "body")
    m = ctx.attr("num_scan_inputs")
    n = ctx.num_inputs - 1 - m
    k = len(body.body.output) - n
    directions = list(ctx.attr("directions", [0] * m))
    if len(body.body.input) != n + m or m < 1:
        raise Unsupported(f"a body of {len(body.body.input)} inputs for {n} states and {m} scans")
    states = [ctx.x(1 + i) for i in range(n)]
    scans = [ctx.x(1 + n + i) for i in range(m)]
    batch, steps = type_of(scans[0]).shape[:2]
    if not isinstance(batch, int) or not isinstance(steps, int):
        raise Unsupported("a symbolic batch or sequence length (the scan is unrolled)")
    if ctx.has(0):
        lengths = ctx.const(0, "Scan's sequence_lens").reshape(-1)
        if any(int(v) != steps for v in lengths):
            raise Unsupported(f"sequence_lens {lengths.tolist()} shorter than the {steps} steps")
    layout = ([0] * m, directions, [0] * k, [0] * k)
    per_batch: list[list[SSAValue]] = []
    for i in range(batch):
        per_batch.append(
            unrolled_scan(
                ctx,
                body,
                [select(ctx, s, 0, i) for s in states],
                [select(ctx, x, 0, i) for x in scans],
                layout,
                tag=f"{i}/",
            )
        )
    return [stack(ctx, [outs[j] for outs in per_batch], 0) for j in range(n + k)]


def _per_element(node: onnx.NodeProto) -> bool:
    return any(a.name == "spatial" and a.i == 0 for a in node.attribute)


@legacy_converter("BatchNormalization", since=(6, 7), applies=_per_element)
def batch_norm_per_element(ctx: NodeContext) -> ConverterResult:
    """``(x - mean) / sqrt(var + epsilon) * scale + bias``, the operands broadcast over
    the batch axis (inference: the running statistics)."""
    ctx.attr("spatial")
    ctx.attr("momentum")
    if ctx.attr("is_test", 1) == 0 or any(ctx.output_used(i) for i in range(1, 5)):
        raise Unsupported("training mode (statistics outputs)")
    b = ctx.b
    x = ctx.x(0)
    dtype = type_of(x).dtype
    scale, bias, mean, var = (
        unsqueeze(ctx, as_dtype(ctx, ctx.x(i), dtype), [0]) for i in range(1, 5)
    )
    inv = b.div(scale, b.sqrt(b.add(var, ctx.attr("epsilon", 1e-5))))
    return b.add(b.mul(b.sub(x, mean), inv), bias)


@legacy_converter("Softmax", since=(1, 11))
@legacy_converter("LogSoftmax", since=(1, 11))
@legacy_converter("Hardmax", since=(1, 11))
def on_2d(ctx: NodeContext) -> ConverterResult:
    def along(flat: SSAValue, last: int) -> SSAValue:
        if ctx.op_type == "Hardmax":
            return hardmax_along(ctx, flat, last)
        op = mir.SoftmaxOp if ctx.op_type == "Softmax" else mir.LogSoftmaxOp
        return ctx.b.emit(op(flat, last)).results[0]

    return coerced_2d(ctx, ctx.x(0), ctx.attr("axis", 1), along)


def coerced_2d(
    ctx: NodeContext, x: SSAValue, axis: int, along: Callable[[SSAValue, int], SSAValue]
) -> SSAValue:
    """``along(x2, last)`` on ``x`` coerced to 2-D at ``axis`` (an op of the pre-13
    definitions along its last axis ``last``), in ``x``'s shape."""
    shape = type_of(x).shape
    axis = axis_of(axis, len(shape))
    last = len(shape) - 1
    flat = x
    if axis != last:
        flat = reshape(ctx, x, [element_count(shape[:axis]), element_count(shape[axis:])])
        last = 1
    return reshape(ctx, along(flat, last), shape)
