"""``fuse-shared-input-matmul``: two or more matmuls of one input against rank-2 weights
become one wider matmul against the concatenated weights, plus one narrow per original
product (starts at the running sum of the widths): the input is read once.

The fused matmul goes where the first of them was, so every weight must already exist
there; a matmul whose weight is computed later stays on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import (
    FusionPass,
    FusionPattern,
    Match,
    Miss,
    defined_before,
    users,
)
from rlx_compile.ir import in_block_order


def _candidate(op: Operation) -> bool:
    if not isinstance(op, mir.MatmulOp):
        return False
    w = type_of(op.rhs)
    return w.rank == 2 and isinstance(w.shape[1], int) and type_of(op.lhs).rank >= 1


@dataclass
class SharedInput(Match):
    members: list[mir.MatmulOp]


class FuseSharedInputMatmul(FusionPattern):
    name = "shared_input_matmul"
    roots = (mir.MatmulOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MatmulOp)
        if not _candidate(op):
            return None
        group = in_block_order(
            [
                u
                for u in users(op.lhs)
                if isinstance(u, mir.MatmulOp) and _candidate(u) and u.parent is op.parent
            ]
        )
        group = [u for u in group if u.lhs is op.lhs]
        if len(group) < 2 or group[0] is not op:
            return None  # not shared, or op is not the first: the first one fuses
        members = [op] + [u for u in group[1:] if defined_before(u.rhs, op)]
        if len(members) < 2:
            return Miss(
                f"the weights of {len(group) - 1} other matmul(s) of this input are "
                "computed after this one",
                "compute the weights before the first matmul reading the input",
            )
        if (miss := self.ctx.unclaimed(mir.ConcatOp.name, mir.NarrowOp.name)) is not None:
            return miss
        return SharedInput(op, list(members), members)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, SharedInput)
        first = m.members[0]
        b, ops = self.builder(first)
        wide = b.matmul(first.lhs, b.concat([mm.rhs for mm in m.members], axis=1))
        axis = type_of(wide).rank - 1
        parts, start = [], 0
        for mm in m.members:
            width = type_of(mm.rhs).shape[1]
            assert isinstance(width, int)
            parts.append(b.narrow(wide, axis, start, width))
            start += width
        rewriter.replace(first, ops, [parts[0]])
        for mm, part in zip(m.members[1:], parts[1:], strict=True):
            rewriter.replace(mm, [], [part])


@dataclass(frozen=True)
class FuseSharedInputMatmulPass(FusionPass):
    """Fuse matmuls of one input into one wider matmul plus narrows."""

    name = "fuse-shared-input-matmul"
    PATTERNS = (FuseSharedInputMatmul,)
