"""``constant-fold{max-elements=N}``: replace every op whose operands are all constants by
one ``mir.constant`` holding its value.

Values come from the reference executor (``rlx_compile.folding``), so folding is exact
for every dtype and op the executor knows -- broadcasting, f16/bf16 rounding, integer
wrapping, exact GELU. Chains fold in one forward sweep. Ops that are not pure (calls,
side effects, randomness), that hold regions, have symbolic result dims, or have no
defined value for their operands (integer division by zero...) are left for run time.

``max-elements`` caps the size of a folded result so that weights are not duplicated (a
transpose of a large constant weight stays a transpose). Producers that a fold leaves
without users (the folded constants themselves, usually) are erased; dead code that was
there before is dce's business.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass

from rlx_compile.folding import (
    DEFAULT_MAX_ELEMENTS,
    KnownValues,
    check_max_elements,
    erase_newly_dead,
    func_graphs,
    graph_blocks,
    materialize,
    unused_ops,
)


@dataclass(frozen=True)
class ConstantFoldPass(ModulePass):
    """Evaluate all-constant subgraphs at compile time (reference semantics)."""

    name = "constant-fold"

    max_elements: int = DEFAULT_MAX_ELEMENTS
    """Largest folded result, in elements; bigger results stay computed at run time."""

    def __post_init__(self) -> None:
        check_max_elements(self.max_elements)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in func_graphs(op):
            for block in graph_blocks(graph):
                fold_block(block, self.max_elements)


def fold_block(block: Block, max_elements: int) -> int:
    """Fold ``block`` in one forward sweep; returns the number of ops folded."""
    before = unused_ops(block)
    known = KnownValues(max_elements)
    folded = 0
    for op in list(block.ops):
        results = known.evaluate(op)
        if results is None:
            continue
        for value, array in zip(op.results, results, strict=True):
            if value.uses:
                const = materialize(array, value)
                block.insert_op_before(const, op)
                value.replace_all_uses_with(const.result)
        folded += 1
    if folded:
        erase_newly_dead(block, before)
    return folded
