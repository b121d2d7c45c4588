"""``fuse-matmul-bias-act``: matmul → add(bias) → [activation] as one
``mir.fused_matmul_bias_act``.

The matmul must be read by the add alone; the bias must broadcast as a vector over the
last dim (N or 1 elements, any leading dims 1: a ``[1, N]`` param or constant becomes
``[N]``, which folds; a bias computed per run is taken as it is). The
activation folds in when the biased sum is read by it alone and the target's fused
kernel applies it (``FusionLimits.matmul_epilogues``);
otherwise the fused op has no activation and the activation stays an op. The same
epilogue rule folds an activation into an existing fused op without one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import is_weight_leaf
from rlx_compile.fusion.base import (
    Epilogue,
    FusionPattern,
    Match,
    Miss,
    describe_uses,
    epilogue,
    fold_activation,
    operand_from,
    sole_user,
)
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.FusedMatmulBiasActOp.name


@dataclass
class MatmulBiasAct(Match):
    x: SSAValue
    w: SSAValue
    bias: SSAValue
    epilogue: Epilogue | None


class FuseMatmulBiasAct(FusionPattern):
    name = "matmul_bias_act"
    roots = (mir.AddOp, mir.FusedMatmulBiasActOp)
    needs = (mir.MatmulOp, mir.FusedMatmulBiasActOp)

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
        if not mir.is_row_bias(bias_t, out):
            return None  # a residual, a column ([M, 1]) or other operand, not a row bias
        if sole_user(mm.result) is not op:
            return Miss(
                describe_uses(mm.result, "the matmul result"),
                "fusion needs a single-consumer chain: the product is read elsewhere",
            )
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        absorbed: list[Operation] = [mm, op]
        ep = epilogue(op.result, self.target)
        if isinstance(ep, Epilogue):
            absorbed.append(ep.op)
        ep = ep if isinstance(ep, Epilogue) else None
        return MatmulBiasAct(absorbed[-1], absorbed, mm.lhs, mm.rhs, bias, ep)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(m.root)
        assert isinstance(m, MatmulBiasAct)
        ep, bias = m.epilogue, m.bias
        if type_of(bias).rank > 1 and _is_weight(bias):
            # [1, ..., N] known before any input: the vector it broadcasts as, which folds
            # (a bias computed per run is taken as it is: a reshape would be an op per run)
            bias = b.reshape(bias, [type_of(bias).shape[-1]])
        y = b.fused_matmul_bias_act(
            m.x, m.w, bias, ep.act.value if ep else "none", ep.params if ep else ()
        )
        self.replace(rewriter, m, ops, [y])


def _is_weight(value: SSAValue) -> bool:
    return isinstance(value, OpResult) and is_weight_leaf(value.op)


@dataclass(frozen=True)
class FuseMatmulBiasActPass(FusionPass):
    """Fuse matmul -> add(bias) -> activation into mir.fused_matmul_bias_act."""

    name = "fuse-matmul-bias-act"
    PATTERNS = (FuseMatmulBiasAct,)
