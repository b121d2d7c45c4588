"""``constant-fold{max-elements=N}``: replace every op whose operands are all constants by
one ``mir.constant`` holding its value.

Values come from the reference executor (``rlx_compile.folding``), so folding is exact
for every dtype and op the executor knows -- broadcasting, f16/bf16 rounding, integer
wrapping, exact GELU. Chains fold in one forward sweep; an ``mir.if`` whose condition is a
constant is replaced by its taken branch, whose ops then fold too (the regions of other
control-flow ops are folded as blocks of their own). Ops that are not pure (calls, side
effects, randomness), that hold regions, have symbolic result dims, or have no defined
value for their operands (integer division by zero...) are left for run time.

``max-elements`` caps the size of a folded result so that weights are not duplicated (a
transpose of a large constant weight stays a transpose). Producers that a fold leaves
without users (the folded constants themselves, usually) are erased; dead code that was
there before is dce's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.ir import Block

from rlx_compile.dialects import mir
from rlx_compile.folding import (
    KnownValues,
    KnownValuesPass,
    erase_newly_dead,
    inline_taken_branch,
    materialize,
    unused_ops,
)


@dataclass(frozen=True)
class ConstantFoldPass(KnownValuesPass):
    """Evaluate all-constant subgraphs at compile time (reference semantics)."""

    name = "constant-fold"
    REPORTS_CHANGES: ClassVar[bool] = True

    def run_block(self, block: Block) -> bool:
        return fold_block(block, self.max_elements) > 0


def fold_block(block: Block, max_elements: int) -> int:
    """Fold ``block`` in one forward sweep; returns the number of ops folded (an if on a
    constant condition, replaced by its taken branch, counts as one)."""
    before = unused_ops(block)
    known = KnownValues(max_elements)
    folded = 0
    op = block.first_op
    while op is not None:
        following = op.next_op
        if isinstance(op, mir.IfOp) and (condition := known.get(op.condition)) is not None:
            moved = inline_taken_branch(op, bool(condition))
            folded += 1
            op = moved[0] if moved else following  # the branch's ops fold in turn
            continue
        results = known.evaluate(op)
        if results is not None:
            for value, array in zip(op.results, results, strict=True):
                if value.uses:
                    const = materialize(array, value)
                    block.insert_op_before(const, op)
                    value.replace_all_uses_with(const.result)
            folded += 1
        op = following
    if folded:
        erase_newly_dead(block, before)
    return folded
