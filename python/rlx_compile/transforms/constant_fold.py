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

from xdsl.ir import Block, Operation, OpResult
from xdsl.transforms.dead_code_elimination import would_be_trivially_dead

from rlx_compile.diagnostics import note_changed, note_removed
from rlx_compile.dialects import mir
from rlx_compile.folding import (
    ConstantData,
    KnownValues,
    KnownValuesPass,
    UnusedBefore,
    inline_taken_branch,
    materialize,
)


@dataclass(frozen=True)
class ConstantFoldPass(KnownValuesPass):
    """Evaluate all-constant subgraphs at compile time (reference semantics)."""

    name = "constant-fold"
    REPORTS_CHANGES: ClassVar[bool] = True
    PURE: ClassVar[bool] = True

    def run_block(self, block: Block) -> bool:
        if any(op.regions for op in block.ops):
            return fold_block(block, self.known_values()) > 0
        fold_flat_block(block, self.known_values())
        return False  # each change is reported as it is made


def fold_block(block: Block, known: KnownValues) -> int:
    """Fold ``block`` in one forward sweep (``known`` empty, with the sweep's options);
    returns the number of ops folded (an if on a constant condition, replaced by its
    taken branch, counts as one)."""
    unused = UnusedBefore(block)
    folded = 0
    op = block.first_op
    while op is not None:
        following = op.next_op
        if isinstance(op, mir.IfOp) and (condition := known.get(op.condition)) is not None:
            unused.changing()
            moved = inline_taken_branch(op, mir.IfOp.taken(condition))
            folded += 1
            op = moved[0] if moved else following  # the branch's ops fold in turn
            continue
        results = known.evaluate(op)
        if results is not None:
            unused.changing()
            for value, array in zip(op.results, results, strict=True):
                if value.uses:
                    const = materialize(array, value)
                    block.insert_op_before(const, op)
                    value.replace_all_uses_with(const.result)
            folded += 1
        op = following
    if folded:
        unused.erase_newly_dead()
    return folded


def fold_flat_block(block: Block, known: KnownValues) -> int:
    """``fold_block`` for a block whose ops hold no regions, to the same result (and
    count), reporting each op it inserts, modifies and erases.

    An op that folds is replaced by constants only where a value it has is read by an op
    that stays: a value read only by ops that fold in turn gets no constant (``fold_block``
    inserts one and erases it with its readers), and those readers read what the
    constant would hold (``ConstantData``). Then the folded ops go, and the producers they
    alone read (``fold_block`` erases the ops left unused, and no other op loses a reader).
    """
    folded: list[tuple[Operation, list[ConstantData | None]]] = []  # the values read
    count = 0
    for op in block.ops:
        results = known.evaluate(op)
        if results is None:
            continue
        count += 1
        read: list[ConstantData | None] = []
        for value, array in zip(op.results, results, strict=True):
            data = None
            if value.uses:
                data = ConstantData(array)
                known.set(value, data.array)  # what its readers read in its place
            read.append(data)
        if any(data is not None for data in read):
            folded.append((op, read))
    if not folded:
        return count
    replaced = {op for op, _ in folded}
    for op, read in folded:
        for value, data in zip(op.results, read, strict=True):
            if data is None:
                continue
            readers = [u.operation for u in value.uses if u.operation not in replaced]
            if readers:
                const = data.constant(value)
                block.insert_op_before(const, op)
                value.replace_all_uses_with(const.result)
                note_changed(const, *readers)
    producers: dict[Operation, None] = {}
    for op, _ in reversed(folded):  # readers first: each op goes once its readers are gone
        producers.update((v.op, None) for v in op.operands if isinstance(v, OpResult))
        note_removed(op)
        block.erase_op(op)
    left = [p for p in producers if p.parent is block and p not in replaced]
    # As erase_newly_dead: the producers left unused, and ops without results.
    for p in [*left, *(o for o in block.ops if not o.results)]:
        if all(r.first_use is None for r in p.results) and would_be_trivially_dead(p):
            note_removed(p)
            block.erase_op(p)
    return count
