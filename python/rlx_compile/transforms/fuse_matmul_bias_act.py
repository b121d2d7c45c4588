"""``fuse-matmul-bias-act``: matmul → add(bias) → [activation] as one
``mir.fused_matmul_bias_act``.

The matmul must be read by the add alone; the bias must be a vector over the last dim
(rank ≤ 1, N or 1 elements). The activation folds in when the biased sum is read by it
alone and the target's fused kernel applies it (``FusionLimits.matmul_epilogues``);
otherwise the fused op has no activation and the activation stays an op. The same
epilogue rule folds an activation into an existing fused op without one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import Activation
from rlx_compile.fusion.base import (
    FoldActivation,
    FusionPass,
    FusionPattern,
    Match,
    Miss,
    describe_uses,
    epilogue,
    fold_activation,
    operand_from,
    sole_user,
)

FUSED = mir.FusedMatmulBiasActOp.name


@dataclass
class MatmulBiasAct(Match):
    x: SSAValue
    w: SSAValue
    bias: SSAValue
    act: Activation


class FuseMatmulBiasAct(FusionPattern):
    name = "matmul_bias_act"
    roots = (mir.AddOp, mir.FusedMatmulBiasActOp)

    def match(self, op: Operation) -> Match | Miss | None:
        if isinstance(op, mir.FusedMatmulBiasActOp):
            return fold_activation(op, self.target)
        assert isinstance(op, mir.AddOp)
        found = operand_from(op, mir.MatmulOp)
        if found is None:
            return None
        mm, bias = found
        out, bias_t = type_of(mm.result), type_of(bias)
        if type_of(op.result) != out or out.rank == 0:
            return None  # the add broadcasts the product: not a bias
        squeezed = [d for d in bias_t.shape if d != 1]
        if squeezed not in ([], [out.shape[-1]]):
            return None  # a residual or other full-rank operand, not a bias
        if bias_t.rank > 1:
            return Miss(
                f"bias has rank {bias_t.rank}",
                f"reshape the bias to a vector of {out.shape[-1]}",
            )
        if sole_user(mm.result) is not op:
            return Miss(
                describe_uses(mm.result, "the matmul result"),
                "fusion needs a single-consumer chain: the product is read elsewhere",
            )
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        absorbed: list[Operation] = [mm, op]
        act = Activation.NONE
        ep = epilogue(op.result, self.target)
        if isinstance(ep, tuple):
            absorbed.append(ep[0])
            act = ep[1]
        return MatmulBiasAct(absorbed[-1], absorbed, mm.lhs, mm.rhs, bias, act)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(m.root)
        if isinstance(m, FoldActivation):
            fused = m.absorbed[0]
            assert isinstance(fused, mir.FusedMatmulBiasActOp)
            m = MatmulBiasAct(m.root, m.absorbed, fused.input, fused.weight, fused.bias, m.act)
        assert isinstance(m, MatmulBiasAct)
        y = b.fused_matmul_bias_act(m.x, m.w, m.bias, m.act.value)
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseMatmulBiasActPass(FusionPass):
    """Fuse matmul -> add(bias) -> activation into mir.fused_matmul_bias_act."""

    name = "fuse-matmul-bias-act"
    PATTERNS = (FuseMatmulBiasAct,)
