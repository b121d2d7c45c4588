"""``fuse-conv-bias-act``: conv → add(per-channel bias) → [add(residual)] → [activation]
as one ``mir.fused_conv_bias_act``.

The bias operand must broadcast along the channel axis only (``[C, 1, 1]`` as the
fusable HIR lowering emits it, ``[1, C, 1, 1]``, ...); the fused op takes it as a ``[C]``
vector. A following add of a full-shape tensor folds in as the residual. A conv without
a bias whose result only an activation reads fuses with a zero bias, as onnxruntime's
FusedConv takes a conv without one. The target's fused conv kernel decides which convs
qualify (spatial rank, window size, groups) and which activations fold
(``FusionLimits``); each link of the chain must have one reader.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import decompose
from rlx_compile.fusion.base import (
    ConvLike,
    Epilogue,
    FusionPattern,
    Match,
    Miss,
    biased_conv,
    channel_bias,
    channel_vector,
    describe_uses,
    epilogue,
    fold_activation,
    fused_conv,
    fused_conv_miss,
    operand_from,
    other_operand,
    sole_user,
)
from rlx_compile.fusion.stage import FusionPass
from rlx_compile.ir import is_before

FUSED = mir.FusedConvBiasActOp.name


@dataclass
class ConvBiasAct(Match):
    conv: ConvLike
    bias: SSAValue | None
    """None: a conv without one (the fused op gets zeros)."""
    residual: SSAValue | None
    epilogue: Epilogue | None


class FuseConvBiasAct(FusionPattern):
    name = "conv_bias_act"
    roots = (mir.AddOp, mir.FusedConvBiasActOp, mir.ConvOp)
    needs = (mir.ConvOp, mir.FusedConvBiasActOp)

    def match(self, op: Operation) -> Match | Miss | None:
        if isinstance(op, mir.FusedConvBiasActOp):
            return fold_activation(op, self.target, conv=True)
        if isinstance(op, mir.ConvOp):
            return self._activated(op)
        assert isinstance(op, mir.AddOp)
        found = operand_from(op, mir.ConvOp)
        if found is None:
            return self._residual(op)
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
        if (miss := fused_conv_miss(conv, self.target)) is not None:
            return miss
        absorbed: list[Operation] = [conv, op]
        last: SSAValue = op.result
        residual = None
        nxt = sole_user(last)
        if isinstance(nxt, mir.AddOp):
            other = other_operand(nxt, last)
            if other is not last and type_of(other) == out and type_of(nxt.result) == out:
                residual = other
                absorbed.append(nxt)
                last = nxt.result
        return self._with_epilogue(absorbed, last, conv, bias, residual)

    def _activated(self, conv: mir.ConvOp) -> Match | None:
        """``conv`` (no bias) when only an activation the kernel applies reads it: the
        fused conv with a zero bias (a conv an addition reads is the add's)."""
        if not isinstance(type_of(conv.result).shape[1], int):
            return None  # the zero bias is a constant of C elements
        ep = epilogue(conv.result, self.target, conv=True)
        if not isinstance(ep, Epilogue) or sole_user(conv.result) is not ep.op:
            return None
        if not self.target.claims_op(FUSED) or fused_conv_miss(conv, self.target) is not None:
            return None
        return ConvBiasAct(ep.op, [conv, ep.op], conv, None, None, ep)

    def _residual(self, add: mir.AddOp) -> Match | None:
        """``add`` as a residual added to a fused conv of a bias alone (an ONNX Conv
        with a bias), with the activation after it: the earlier of two such convs takes
        the other's result, as a walk fusing conv, bias and residual in order would."""
        out = type_of(add.result)
        fused = [
            (conv, other)
            for conv_result, other in ((add.lhs, add.rhs), (add.rhs, add.lhs))
            if (conv := biased_conv(conv_result)) is not None
            and type_of(other) == out
            and type_of(conv.result) == out
            and sole_user(conv.result) is add
        ]
        if not fused or not self.target.claims_op(FUSED):
            return None
        if len(fused) == 2 and is_before(fused[1][0], fused[0][0]):
            fused.reverse()
        conv, residual = fused[0]
        if fused_conv_miss(conv, self.target) is not None:
            return None
        return self._with_epilogue([conv, add], add.result, conv, conv.bias, residual)

    def _with_epilogue(
        self,
        absorbed: list[Operation],
        last: SSAValue,
        conv: ConvLike,
        bias: SSAValue,
        residual: SSAValue | None,
    ) -> ConvBiasAct:
        """The chain ``absorbed`` (ending in ``last``), with the activation reading
        ``last`` when the target's kernel applies it."""
        ep = epilogue(last, self.target, conv=True)
        if isinstance(ep, Epilogue):
            absorbed.append(ep.op)
        ep = ep if isinstance(ep, Epilogue) else None
        return ConvBiasAct(absorbed[-1], absorbed, conv, bias, residual, ep)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, ConvBiasAct)
        b, ops = self.builder(m.root)
        conv = m.conv
        out = type_of(conv.result)
        if m.bias is None:
            channels = out.shape[1]
            assert isinstance(channels, int)  # _activated asks
            bias = b.constant(np.zeros(channels, out.dtype.numpy), out.dtype, (channels,))
        else:
            bias = channel_vector(b, m.bias, out.shape[1])
        y = fused_conv(b, conv, conv.weight, bias, m.residual, m.epilogue)
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseConvBiasActPass(FusionPass):
    """Fuse conv -> add(channel bias) -> [add(residual)] -> activation."""

    name = "fuse-conv-bias-act"
    PATTERNS = (FuseConvBiasAct,)


class SplitConvBias(FusionPattern):
    """A fused conv that the target's fused conv kernel does not take (the target does not
    claim it, or the conv is outside the kernel's limits) back to its conv and bias add,
    as an ONNX Conv with a bias imports as one: the stages after this one fuse what the
    target does take (an elementwise region, another epilogue)."""

    name = "split_conv_bias"
    roots = (mir.FusedConvBiasActOp,)
    needs = (mir.FusedConvBiasActOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.FusedConvBiasActOp)
        if self.target.claims_op(FUSED) and fused_conv_miss(op, self.target) is None:
            return None
        return Match(op, [op])

    def apply(self, m: Match, rewriter: PatternRewriter) -> None:
        # Not a fusion: nothing for the report.
        b, ops = self.builder(m.root)
        self.replace(rewriter, m, ops, decompose(m.root, b))


@dataclass(frozen=True)
class SplitConvBiasPass(FusionPass):
    """Split the fused convs the target's fused conv kernel does not take."""

    name = "split-conv-bias"
    PATTERNS = (SplitConvBias,)
