"""``fuse-reshape-transpose``: a transpose between reshapes, ``reshape(transpose(
reshape(x)))`` (DepthToSpace and SpaceToDepth as they import, a pixel or channel
shuffle as exporters write it), or with either reshape absent, becomes one
``mir.fused_reshape_transpose``: the one copy the transpose makes, with the views around
it. A transpose that moves no bytes (only unit dims) is left as the view it is, and so
are chains with symbolic shapes. The inner values must have no other reader.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import FusionPattern, Match, Miss, chain_miss, producer, sole_user
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.FusedReshapeTransposeOp.name
HINT = "the chain fuses only when nothing else reads its inner values"


@dataclass
class Chain(Match):
    x: SSAValue
    split: tuple[int, ...]
    perm: tuple[int, ...]
    shape: tuple[int, ...]


def _static(v: SSAValue) -> tuple[int, ...] | None:
    t = type_of(v)
    return t.static_shape() if t.is_static else None


class FuseReshapeTranspose(FusionPattern):
    name = "reshape_transpose"
    roots = (mir.ReshapeOp, mir.TransposeOp)
    needs = (mir.TransposeOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        if isinstance(op, mir.ReshapeOp):
            transpose = producer(op.input, mir.TransposeOp)
            if transpose is None:
                return None
            absorbed: list[Operation] = [transpose, op]
            links: list[tuple[SSAValue, Operation, str]] = [(transpose.result, op, "the transpose")]
        else:
            assert isinstance(op, mir.TransposeOp)
            if isinstance(sole_user(op.result), mir.ReshapeOp):
                return None  # the reshape after it roots the whole chain
            transpose, absorbed, links = op, [op], []
        if transpose.contiguous_view_offset() is not None:
            return None  # a view: no copy to fuse into
        x = transpose.input
        inner = producer(x, mir.ReshapeOp)
        if inner is not None:
            links.append((inner.result, transpose, "the reshaped input"))
            absorbed.insert(0, inner)
            x = inner.input
        if len(absorbed) < 2:
            return None  # a transpose alone
        split, shape = _static(transpose.input), _static(op.results[0])
        if split is None or shape is None or _static(x) is None:
            return None
        if (miss := chain_miss(links, HINT)) is not None:
            return miss
        perm = tuple(transpose.props().ints("perm"))
        return self.ctx.unclaimed(FUSED) or Chain(op, absorbed, x, split, perm, shape)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, Chain)
        b, ops = self.builder(m.root)
        y = b.fused_reshape_transpose(m.x, m.split, m.perm, m.shape)
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseReshapeTransposePass(FusionPass):
    """Fuse a transpose with the reshapes around it (DepthToSpace, SpaceToDepth, pixel
    and channel shuffles) into mir.fused_reshape_transpose."""

    name = "fuse-reshape-transpose"
    PATTERNS = (FuseReshapeTranspose,)
