"""``fuse-conv-bias-act``: conv → add(per-channel bias) → [add(residual)] → [activation]
as one ``mir.fused_conv_bias_act``.

The bias operand must broadcast along the channel axis only (``[C, 1, 1]`` as the
fusable HIR lowering emits it, ``[1, C, 1, 1]``, ...); the fused op takes it as a ``[C]``
vector. A following add of a full-shape tensor folds in as the residual. The target's
fused conv kernel decides which convs qualify (spatial rank, window size, groups) and
which activations fold (``FusionLimits``); each link of the chain must have one reader.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import GraphBuilder, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import Activation
from rlx_compile.fusion.base import (
    FoldActivation,
    FusionPass,
    FusionPattern,
    Match,
    Miss,
    channel_bias,
    describe_uses,
    epilogue,
    fold_activation,
    operand_from,
    producer,
    sole_user,
)
from rlx_compile.targets.base import Target

FUSED = mir.FusedConvBiasActOp.name


def as_channel_vector(b: GraphBuilder, bias: SSAValue) -> SSAValue:
    """The [C] vector behind a channel-broadcast bias (the reshape's input when the bias
    is a reshape or expand of one, else a new reshape)."""
    channels = [d for d in type_of(bias).shape if d != 1] or [1]
    source = bias
    while (p := producer(source, mir.ReshapeOp) or producer(source, mir.ExpandOp)) is not None:
        source = p.input
        if type_of(source).shape == tuple(channels):
            return source
    return b.reshape(bias, channels)


def conv_rule_miss(conv: mir.ConvOp, target: Target) -> Miss | None:
    """Why the target's fused conv kernel does not take this conv (None: it does)."""
    limits, target_name = target.limits, target.name
    w = type_of(conv.weight)
    spatial = w.rank - 2
    if spatial not in limits.conv_spatial_dims:
        return Miss(
            f"a {spatial}-D conv is not fused on target {target_name}",
            f"its fused conv kernel handles {list(limits.conv_spatial_dims)}-D convs",
        )
    kernel = [int(d) for d in w.shape[2:]]
    if min(kernel) < limits.conv_min_kernel:
        return Miss(
            f"a {'x'.join(map(str, kernel))} conv window is not fused on target {target_name}",
            f"its fused conv kernel needs every window dim >= {limits.conv_min_kernel}",
        )
    if conv.props().int("groups") != 1 and not limits.conv_grouped:
        return Miss(
            f"a grouped conv is not fused on target {target_name}",
            "its fused conv kernel handles groups = 1 only",
        )
    return None


@dataclass
class ConvBiasAct(Match):
    conv: mir.ConvOp
    bias: SSAValue
    residual: SSAValue | None
    act: Activation


class FuseConvBiasAct(FusionPattern):
    name = "conv_bias_act"
    roots = (mir.AddOp, mir.FusedConvBiasActOp)

    def match(self, op: Operation) -> Match | Miss | None:
        if isinstance(op, mir.FusedConvBiasActOp):
            return fold_activation(op, self.target, conv=True)
        assert isinstance(op, mir.AddOp)
        found = operand_from(op, mir.ConvOp)
        if found is None:
            return None
        conv, bias = found
        out = type_of(conv.result)
        if type_of(op.result) != out or not channel_bias(type_of(bias), out):
            return None
        if sole_user(conv.result) is not op:
            return Miss(
                describe_uses(conv.result, "the conv result"),
                "fusion needs a single-consumer chain: the conv output is read elsewhere",
            )
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        if (miss := conv_rule_miss(conv, self.target)) is not None:
            return miss
        absorbed: list[Operation] = [conv, op]
        last: SSAValue = op.result
        residual = None
        nxt = sole_user(last)
        if isinstance(nxt, mir.AddOp):
            other = nxt.rhs if nxt.lhs is last else nxt.lhs
            if other is not last and type_of(other) == out and type_of(nxt.result) == out:
                residual = other
                absorbed.append(nxt)
                last = nxt.result
        act = Activation.NONE
        ep = epilogue(last, self.target, conv=True)
        if isinstance(ep, tuple):
            absorbed.append(ep[0])
            act = ep[1]
        return ConvBiasAct(absorbed[-1], absorbed, conv, bias, residual, act)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(m.root)
        if isinstance(m, ConvBiasAct):
            conv, bias, residual, act = m.conv, as_channel_vector(b, m.bias), m.residual, m.act
            x, w, props = conv.input, conv.weight, conv.props()
        else:
            assert isinstance(m, FoldActivation)
            fused = m.absorbed[0]
            assert isinstance(fused, mir.FusedConvBiasActOp)
            x, w, bias, residual, props = (
                fused.input, fused.weight, fused.bias, fused.residual, fused.props()
            )  # fmt: skip
            act = m.act
        y = b.fused_conv_bias_act(
            x, w, bias, residual, strides=props.ints("strides"), pads=props.ints("pads"),
            dilations=props.ints("dilations"), groups=props.int("groups"), act=act.value,
        )  # fmt: skip
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseConvBiasActPass(FusionPass):
    """Fuse conv -> add(channel bias) -> [add(residual)] -> activation."""

    name = "fuse-conv-bias-act"
    PATTERNS = (FuseConvBiasAct,)
