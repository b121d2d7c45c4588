"""Training losses used at inference (evaluation graphs): NegativeLogLikelihoodLoss and
SoftmaxCrossEntropyLoss."""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    converter,
)
from rlx_compile.frontends.onnx.ops.shape import reshape, take_along_axis, unsqueeze


def nll_loss(ctx: NodeContext, log_prob: SSAValue, target: SSAValue) -> SSAValue:
    """-log_prob[n, target[n, d...], d...], weighted by weight[target] (input 2), with
    ``ignore_index`` targets contributing 0; reduced by ``reduction``."""
    b = ctx.b
    reduction = ctx.check_attr("reduction", ("none", "sum", "mean"), "mean")
    ignore = ctx.attr("ignore_index")
    weight = ctx.opt(2)
    if type_of(log_prob).rank < 2:
        raise Unsupported("input of rank < 2")
    if not type_of(log_prob).is_static:
        raise Unsupported("symbolic dims")
    t = b.cast(target, DType.I64) if type_of(target).dtype is not DType.I64 else target
    ignored = b.compare("eq", t, ignore) if ignore is not None else None
    safe = t if ignored is None else b.where(ignored, 0, t)  # any valid class index
    picked = take_along_axis(ctx, log_prob, unsqueeze(ctx, safe, [1]), 1)
    loss = b.neg(reshape(ctx, picked, list(type_of(t).shape)))
    w = None
    if weight is not None:
        w = b.gather(weight, safe, 0)
    elif ignored is not None:
        w = b.where(ignored, ctx.const_like(0.0, loss), ctx.const_like(1.0, loss))
    if w is not None and ignored is not None and weight is not None:
        w = b.where(ignored, ctx.const_like(0.0, w), w)
    if w is not None:
        loss = b.mul(loss, w)
    if reduction == "none":
        return loss
    total = b.sum(loss)
    if reduction == "sum":
        return total
    if w is not None:
        return b.div(total, b.sum(w))
    return b.mean(loss)


@converter("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(ctx: NodeContext) -> ConverterResult:
    return nll_loss(ctx, ctx.x(0), ctx.x(1))


@converter("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(ctx: NodeContext) -> ConverterResult:
    log_prob = ctx.b.emit(mir.LogSoftmaxOp(ctx.x(0), 1)).results[0]
    return [nll_loss(ctx, log_prob, ctx.x(1)), log_prob]
