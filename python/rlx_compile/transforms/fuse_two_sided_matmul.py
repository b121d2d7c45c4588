"""``fuse-two-sided-matmul``: a value multiplied by a constant matrix on each side,
``matmul(matmul(A, x), B)`` or ``matmul(A, matmul(x, B))`` with A and B rank-2 weights
(known before any input), becomes one ``mir.fused_two_sided_matmul`` that keeps the
order of the two products. A linear (bilinear) Resize imports so: one interpolation
matrix for the rows, one for the columns. The inner product must have no other reader.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import FusionPattern, Match, Miss, chain_miss, is_static, producer
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.FusedTwoSidedMatmulOp.name
HINT = "the two products fuse only when nothing else reads the first"


def _matrix(v: SSAValue) -> bool:
    """A rank-2 weight: the same matrix for every batch of the product."""
    return type_of(v).rank == 2 and is_static(v)


@dataclass
class TwoSided(Match):
    lhs: SSAValue
    x: SSAValue
    rhs: SSAValue
    rhs_first: bool


class FuseTwoSidedMatmul(FusionPattern):
    name = "two_sided_matmul"
    roots = (mir.MatmulOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MatmulOp)
        inner = producer(op.lhs, mir.MatmulOp)
        if inner is not None and _matrix(inner.lhs) and _matrix(op.rhs):
            found = TwoSided(op, [inner, op], inner.lhs, inner.rhs, op.rhs, rhs_first=False)
        else:
            inner = producer(op.rhs, mir.MatmulOp)
            if inner is None or not (_matrix(op.lhs) and _matrix(inner.rhs)):
                return None
            found = TwoSided(op, [inner, op], op.lhs, inner.lhs, inner.rhs, rhs_first=True)
        if type_of(found.x).rank < 2 or is_static(found.x):
            return None  # a vector, or weights alone: constant-fold's, not a product per run
        links = [(inner.result, op, "the first product")]
        if (miss := chain_miss(links, HINT)) is not None:
            return miss
        return self.ctx.unclaimed(FUSED) or found

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, TwoSided)
        b, ops = self.builder(m.root)
        y = b.fused_two_sided_matmul(m.lhs, m.x, m.rhs, m.rhs_first)
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseTwoSidedMatmulPass(FusionPass):
    """Fuse a value's products by a weight matrix on each side (a linear Resize) into
    mir.fused_two_sided_matmul."""

    name = "fuse-two-sided-matmul"
    PATTERNS = (FuseTwoSidedMatmul,)
