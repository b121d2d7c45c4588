"""``fold-conv-batch-norm``: an inference batch norm after a conv folds into the conv's
weight and bias.

    s  = scale · rsqrt(variance + eps)                   per output channel
    w' = w · s                                           (s over the weight's dim 0)
    b' = bias - mean · s  (+ conv_bias · s)
    y  = conv(x, w') + b'                                (b' as [C, 1, ...])

The chain conv [→ add(channel bias)] → batch_norm, or a fused conv of a bias alone (an
ONNX Conv with a bias) → batch_norm, must have one reader per link. The
new weight and bias are computed by ops on the parameters, which run once per call.
When the parameters are constants they are computed at once instead (``Eager``: the
same formula on the reference kernels, so the same numbers as folding those ops would
give, without building them) and become two constants. The result is the fused conv of
the new bias where the target's fused conv kernel takes the conv (``conv_plus_bias``),
else a conv and a channel bias add. Rounding differs from the unfolded graph (w·s is
rounded before the conv), so results agree to float tolerance, not bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.folding import DEFAULT_MAX_ELEMENTS, constant_values
from rlx_compile.fusion.base import (
    ConvLike,
    FusionPattern,
    Match,
    Miss,
    biased_conv,
    channel_bias,
    conv_plus_bias,
    describe_uses,
    operand_from,
    producer,
    sole_user,
)
from rlx_compile.fusion.stage import FusionPass
from rlx_compile.interpreter.eager import (
    Eager,
    Ops,
    V,
    batch_norm_scale,
    batch_norm_shift,
    shape_of,
)

NEEDED = tuple(op.name for op in (mir.ConvOp, mir.RsqrtOp, mir.MulOp, mir.SubOp, mir.ReshapeOp))


@dataclass
class ConvBatchNorm(Match):
    conv: ConvLike
    conv_bias: SSAValue | None
    bn: mir.BatchNormOp


class FoldConvBatchNorm(FusionPattern):
    name = "conv_batch_norm"
    roots = (mir.BatchNormOp,)
    needs = (mir.ConvOp, mir.FusedConvBiasActOp)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.BatchNormOp)
        chain: list[Operation] = []
        conv_bias = None
        conv: ConvLike | None = producer(op.input, mir.ConvOp)
        if conv is None and (conv := biased_conv(op.input)) is not None:
            conv_bias = conv.bias
        elif conv is None:
            add = producer(op.input, mir.AddOp)
            found = operand_from(add, mir.ConvOp) if add is not None else None
            if add is None or found is None:
                return None
            conv, conv_bias = found
            out = type_of(conv.result)
            if type_of(add.result) != out or not channel_bias(type_of(conv_bias), out):
                return None
            chain.append(add)
        links = [conv, *chain]
        for link, reader in zip(links, [*chain, op], strict=True):
            if sole_user(link.results[0]) is not reader:
                return Miss(
                    describe_uses(link.results[0], f"the {link.name} result"),
                    "folding rewrites the conv's weights: nothing else may read its output",
                )
        if (miss := self.ctx.unclaimed(*NEEDED)) is not None:
            return miss
        return ConvBatchNorm(op, [conv, *chain, op], conv, conv_bias, op)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, ConvBatchNorm)
        b, ops = self.builder(m.root)
        bn, conv = m.bn, m.conv
        operands = [bn.scale, bn.bias, bn.mean, bn.variance, conv.weight]
        if m.conv_bias is not None:
            operands.append(m.conv_bias)
        eps = bn.props().float("epsilon")
        dtype = type_of(conv.weight).dtype
        arrays = constant_values(operands)
        if arrays is not None and arrays[4].size <= DEFAULT_MAX_ELEMENTS:  # folding's cap
            w_array, shift_array = folded_parameters(Eager(), eps, *arrays)
            weight = b.constant(w_array, dtype, w_array.shape)
            shift = b.constant(shift_array, dtype, shift_array.shape)
        else:
            weight, shift = folded_parameters(b, eps, *operands)
        self.replace(rewriter, m, ops, [conv_plus_bias(b, self.target, conv, weight, shift)])


def folded_parameters(
    ops: Ops[V],
    eps: float,
    scale: V,
    bias: V,
    mean: V,
    variance: V,
    weight: V,
    conv_bias: V | None = None,
) -> tuple[V, V]:
    """The conv weight and the per-channel shift (``[C]``) a batch norm folds into."""
    s = batch_norm_scale(ops, eps, scale, variance)
    channels = shape_of(scale)[0]
    weight = ops.mul(weight, ops.reshape(s, (channels, *([1] * (len(shape_of(weight)) - 1)))))
    shift = batch_norm_shift(ops, bias, mean, s)
    if conv_bias is not None:
        if shape_of(conv_bias) != (channels,):  # [C, 1, ...] of an add; a fused conv's is [C]
            conv_bias = ops.reshape(conv_bias, (channels,))
        shift = ops.add(shift, ops.mul(conv_bias, s))
    return weight, shift


@dataclass(frozen=True)
class FoldConvBatchNormPass(FusionPass):
    """Fold conv -> [add(channel bias)] -> batch_norm into the conv's weight and bias."""

    name = "fold-conv-batch-norm"
    PATTERNS = (FoldConvBatchNorm,)
