"""``fuse-scaled-matmul``: a matmul whose product is read only by a multiplication or a
division by a one-element float constant becomes one ``mir.scaled_matmul``, as
onnxruntime's FusedMatMul takes the scale into its alpha: attention scores ``q · kᵀ / √d``
that no attention fusion took, a Gemm's alpha on run-time operands. It runs after the
fusions that take such a scale away entirely (fuse-attention, and fuse-scale-shift's fold
into a static weight), and after those that read a plain matmul. A product with another
reader is a near miss.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import FusionPattern, Match, Miss, chain_miss, scalar_constant
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.ScaledMatmulOp.name
HINT = "the scale fuses into the matmul only when nothing else reads the product"


@dataclass
class Scaled(Match):
    scale: float
    divide: bool


def _scaling(op: Operation, product: SSAValue) -> tuple[float, bool] | None:
    """The scale ``op`` applies to ``product`` (and whether it divides by it): a
    multiplication by a one-element constant on either side, or a division by one, that
    leaves the product's type as it is."""
    if isinstance(op, mir.MulOp):
        other = op.rhs if op.lhs is product else op.lhs
        divide = False
    elif isinstance(op, mir.DivOp) and op.lhs is product:
        other, divide = op.rhs, True
    else:
        return None
    if other is product or op.result.type != product.type:
        return None  # a square, or a constant of higher rank that broadcasts the product
    scale = scalar_constant(other)
    return None if scale is None else (scale, divide)


class FuseScaledMatmul(FusionPattern):
    name = "scaled_matmul"
    roots = (mir.MulOp, mir.DivOp)
    needs = (mir.MatmulOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MulOp | mir.DivOp)
        for product in (op.lhs, op.rhs):
            mm = product.owner
            if not isinstance(mm, mir.MatmulOp) or not type_of(product).dtype.is_float:
                continue
            scaling = _scaling(op, product)
            if scaling is None:
                continue
            if (miss := chain_miss([(product, op, "the matmul's product")], HINT)) is not None:
                return miss
            return self.ctx.unclaimed(FUSED) or Scaled(op, [mm, op], *scaling)
        return None

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, Scaled)
        mm = m.absorbed[0]
        assert isinstance(mm, mir.MatmulOp)
        b, ops = self.builder(m.root)
        y = b.scaled_matmul(mm.lhs, mm.rhs, m.scale, m.divide)
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseScaledMatmulPass(FusionPass):
    """Fuse a matmul's scaling by a one-element constant into it (mir.scaled_matmul)."""

    name = "fuse-scaled-matmul"
    PATTERNS = (FuseScaledMatmul,)
