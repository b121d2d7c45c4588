"""Splicing a sub-graph into its user: a ``hir.region``'s body (the lowering's escape
hatch, also inlined by the ``inline`` pass) or the body of a ``func.func`` at a
``func.call``. Shared by ``lower-hir-to-mir`` and ``inline``.

A called graph's leaves keep their meaning when spliced: the executor feeds a callee's
``mir.input``/``mir.param`` from the same name space as the caller's, so they are copied
as they are (cse later merges a param declared in both).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from rlx_compile.dialects import hir


class InlineRegion(RewritePattern):
    """Splice a ``hir.region``'s body in place of the op; its yield gives the results."""

    roots = (hir.RegionOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hir.RegionOp, rewriter: PatternRewriter) -> None:
        block = op.body.block
        term = block.last_op
        assert isinstance(term, hir.YieldOp)
        results = list(term.operands)
        rewriter.erase(term)
        rewriter.inline_block(block, InsertPoint.before(op), list(op.inputs))
        rewriter.replace(op, [], results)


def inline_call(call: func.CallOp, callee: func.FuncOp) -> list[Operation]:
    """Replace ``call`` by a copy of ``callee``'s body (the verifier has matched the call's
    types with the callee's); returns the ops inserted."""
    block = callee.body.block
    terminator = block.last_op
    assert terminator is not None
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, call.operands, strict=True))
    parent = call.parent_block()
    assert parent is not None
    inserted: list[Operation] = []
    for op in block.ops:
        if op is terminator:
            break
        new = op.clone(value_mapper=mapping)
        parent.insert_op_before(new, call)
        inserted.append(new)
    for old, value in zip(call.results, terminator.operands, strict=True):
        old.replace_all_uses_with(mapping.get(value, value))
    parent.erase_op(call)
    return inserted
