"""``mark-elementwise-regions``: maximal chains of elementwise ops as one
``mir.elementwise_region`` each.

Walking the graph bottom-up, an elementwise op not yet in a region becomes the tail of a
new one, which then absorbs, repeatedly, every elementwise producer of a region input
whose result is read by the region alone (so a region is a tree of ops whose
intermediates nobody else reads; the tail may have any readers). Growth stops at the
target's limits (``max_region_steps`` ops, ``max_region_inputs`` distinct inputs); a
producer left out starts a region of its own. Single ops stay as they are. The region's
body holds the same ops in the same order, so values are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block, Operation, OpResult, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.dialects.traits import Elementwise
from rlx_compile.fusion.base import (
    FusionContext,
    FusionPattern,
    Match,
    Miss,
    fusible_here,
    sole_user,
    users,
)
from rlx_compile.fusion.stage import FusionPass


def fusable(op: Operation) -> bool:
    return (
        op.has_trait(Elementwise)
        and not isinstance(op, mir.ElementwiseRegionOp)
        and len(op.results) == 1
        and fusible_here(op)
    )


@dataclass
class Region_(Match):
    inputs: list[SSAValue]
    """External inputs in first-use order of the body."""


def _topological(tail: Operation, members: list[Operation]) -> list[Operation]:
    """Members in an order where every producer precedes its readers (post-order DFS
    from the tail, operands in order: deterministic)."""
    inside = {id(m) for m in members}
    out: list[Operation] = []
    seen: set[int] = set()

    def visit(op: Operation) -> None:
        if id(op) in seen:
            return
        seen.add(id(op))
        for v in op.operands:
            if isinstance(v, OpResult) and id(v.op) in inside:
                visit(v.op)
        out.append(op)

    visit(tail)
    return out


def _external_inputs(ordered: list[Operation]) -> list[SSAValue]:
    produced = {id(r) for op in ordered for r in op.results}
    out: list[SSAValue] = []
    for op in ordered:
        for v in op.operands:
            if id(v) not in produced and not any(v is o for o in out):
                out.append(v)
    return out


class MarkElementwiseRegion(FusionPattern):
    name = "elementwise_region"
    roots = (ShapedOp,)

    def __init__(self, ctx: FusionContext, enabled: bool | None = None):
        """``enabled``: mark regions (default: when the target keeps regions)."""
        super().__init__(ctx)
        limits = ctx.target.limits
        self.max_steps = limits.max_region_steps
        self.max_inputs = limits.max_region_inputs
        on = limits.keep_regions if enabled is None else enabled
        self.enabled = on and self.max_steps >= 2

    @property
    def active(self) -> bool:
        return self.enabled

    def match(self, op: Operation) -> Match | Miss | None:
        if not self.enabled:
            return None
        if isinstance(op, mir.ElementwiseRegionOp):
            return self._split_miss(op)
        if not fusable(op):
            return None
        members = [op]
        grown = True
        while grown:
            grown = False
            ordered = _topological(op, members)
            inputs = _external_inputs(ordered)
            for v in inputs:
                p = v.op if isinstance(v, OpResult) else None
                if p is None or not fusable(p) or any(p is m for m in members):
                    continue
                if p.parent is not op.parent:  # a value from outside a region's block
                    continue
                readers = users(v)
                if not all(any(r is m for m in members) for r in readers):
                    continue
                trial = _external_inputs(_topological(op, [*members, p]))
                if len(members) + 1 > self.max_steps or len(trial) > self.max_inputs:
                    continue
                members.append(p)
                grown = True
                break
        if len(members) < 2:
            return None
        ordered = _topological(op, members)
        return Region_(op, ordered, _external_inputs(ordered))

    def _split_miss(self, region: mir.ElementwiseRegionOp) -> Miss | None:
        for v in region.inputs:
            p = v.op if isinstance(v, OpResult) else None
            chained = p is not None and (fusable(p) or isinstance(p, mir.ElementwiseRegionOp))
            if chained and sole_user(v) is region:
                return Miss(
                    f"the chain is split at the target's limits ({self.max_steps} ops, "
                    f"{self.max_inputs} inputs per region)",
                    "a longer chain runs as several fused kernels",
                )
        return None

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, Region_)
        block = Block(arg_types=[v.type for v in m.inputs])
        mapping: dict[SSAValue, SSAValue] = dict(zip(m.inputs, block.args, strict=True))
        for value, arg in zip(m.inputs, block.args, strict=True):
            if value.name_hint:
                arg.name_hint = value.name_hint
        for op in m.absorbed:
            clone = op.clone(value_mapper=mapping)
            block.add_op(clone)
        tail_value = mapping[m.root.results[0]]
        block.add_op(mir.YieldOp([tail_value]))
        region = mir.ElementwiseRegionOp(m.inputs, Region(block), type_of(m.root.results[0]))
        region.location = m.root.location
        self.replace(rewriter, m, [region], region.results)


@dataclass(frozen=True)
class MarkElementwiseRegionsPass(FusionPass):
    """Mark maximal chains of elementwise ops as mir.elementwise_region ops."""

    name = "mark-elementwise-regions"
    PATTERNS = (MarkElementwiseRegion,)
    WALK_REVERSE = True

    def patterns(self, ctx: FusionContext) -> list[FusionPattern]:
        return [MarkElementwiseRegion(ctx, enabled=True)]  # asked for by name: mark
