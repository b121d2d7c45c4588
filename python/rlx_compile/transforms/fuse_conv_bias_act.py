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

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import (
    Epilogue,
    FoldActivation,
    FusionPass,
    FusionPattern,
    Match,
    Miss,
    channel_bias,
    channel_vector,
    describe_uses,
    epilogue,
    fold_activation,
    operand_from,
    sole_user,
)
from rlx_compile.targets.base import Target

FUSED = mir.FusedConvBiasActOp.name


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
    epilogue: Epilogue | None


class FuseConvBiasAct(FusionPattern):
    name = "conv_bias_act"
    roots = (mir.AddOp, mir.FusedConvBiasActOp)
    needs = (mir.ConvOp, mir.FusedConvBiasActOp)

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
        ep = epilogue(last, self.target, conv=True)
        if isinstance(ep, Epilogue):
            absorbed.append(ep.op)
        ep = ep if isinstance(ep, Epilogue) else None
        return ConvBiasAct(absorbed[-1], absorbed, conv, bias, residual, ep)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(m.root)
        if isinstance(m, ConvBiasAct):
            channels = type_of(m.conv.result).shape[1]
            conv, residual, ep = m.conv, m.residual, m.epilogue
            bias = channel_vector(b, m.bias, channels)
            x, w, props = conv.input, conv.weight, conv.props()
        else:
            assert isinstance(m, FoldActivation)
            fused = m.absorbed[0]
            assert isinstance(fused, mir.FusedConvBiasActOp)
            x, w, bias, residual, props = (
                fused.input, fused.weight, fused.bias, fused.residual, fused.props()
            )  # fmt: skip
            ep = m.epilogue
        y = b.fused_conv_bias_act(
            x, w, bias, residual, strides=props.ints("strides"), pads=props.ints("pads"),
            dilations=props.ints("dilations"), groups=props.int("groups"),
            act=ep.act.value if ep else "none", act_params=ep.params if ep else (),
        )  # fmt: skip
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseConvBiasActPass(FusionPass):
    """Fuse conv -> add(channel bias) -> [add(residual)] -> activation."""

    name = "fuse-conv-bias-act"
    PATTERNS = (FuseConvBiasAct,)
