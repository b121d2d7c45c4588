"""``fuse-residual-norm``: add(x, residual) → rms_norm / layer_norm as one
``mir.fused_residual_rms_norm`` / ``mir.fused_residual_layer_norm``.

Unlike RLX, the fused residual norms return two results, the norm and the sum, so the
fusion fires even when the sum has other readers (the next residual connection of a
transformer always reads it, and the sum may be a graph output): the sum's readers read
the fused op's second result. RLX's fused op returns the norm only, so RLX must leave a
multi-reader (or output) sum unfused.

The fused op is placed where both results are available to every reader: at the add
when the norm's scale and bias already exist there, else at the norm when nothing reads
the sum before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import FusionPattern, Match, Miss, defined_before, producer, users
from rlx_compile.fusion.stage import FusionPass
from rlx_compile.ir import is_before


@dataclass
class ResidualNorm(Match):
    add: mir.AddOp
    norm: mir.NormOp
    anchor: Operation
    """The op the fused op is inserted before."""


class _FuseResidualNorm(FusionPattern):
    fused: ClassVar[type[mir.FusedResidualNormOp]]

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.NormOp)
        add = producer(op.input, mir.AddOp)
        if add is None:
            return None
        if (miss := self.ctx.unclaimed(self.fused.name)) is not None:
            return miss
        p = op.props()
        try:
            self.fused.infer(
                p, input=type_of(add.lhs), residual=type_of(add.rhs), scale=type_of(op.scale),
                bias=None if op.bias is None else type_of(op.bias),
            )  # fmt: skip
        except VerifyException:
            return None
        affine = [op.scale] if op.bias is None else [op.scale, op.bias]
        if all(defined_before(v, add) for v in affine):
            anchor: Operation = add
        elif all(u is op or is_before(op, u) for u in users(add.result)):
            anchor = op
        else:
            return Miss(
                "the sum is read before the norm, whose scale is computed after the sum",
                "compute the norm's scale and bias before the residual add",
            )
        return ResidualNorm(op, [add, op], add, op, anchor)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, ResidualNorm)
        add, norm = m.add, m.norm
        p = norm.props()
        fused = self.fused(
            add.lhs, add.rhs, norm.scale, norm.bias, axis=p.int("axis"), epsilon=p.float("epsilon")
        )
        fused.location = norm.location
        rewriter.insert(fused, InsertPoint.before(m.anchor))
        rewriter.replace_all_uses_with(add.result, fused.results[1])
        rewriter.replace(norm, [], [fused.results[0]])
        rewriter.erase(add)


class FuseResidualRmsNorm(_FuseResidualNorm):
    name = "residual_rms_norm"
    roots = (mir.RmsNormOp,)
    fused = mir.FusedResidualRmsNormOp


class FuseResidualLayerNorm(_FuseResidualNorm):
    name = "residual_layer_norm"
    roots = (mir.LayerNormOp,)
    fused = mir.FusedResidualLayerNormOp


@dataclass(frozen=True)
class FuseResidualNormPass(FusionPass):
    """Fuse add -> rms_norm / layer_norm into the two-result fused residual norms."""

    name = "fuse-residual-norm"
    PATTERNS = (FuseResidualRmsNorm, FuseResidualLayerNorm)
