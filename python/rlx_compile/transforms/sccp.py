"""``sccp{max-elements=N}``: sparse conditional constant propagation through ``mir.where``.

One forward sweep over each graph (a DAG in topological order, so no worklist) keeps,
per value, either its compile-time array or "unknown". Constants seed it; foldable ops
over known operands are evaluated with the reference semantics (any dtype, so a bool
``mir.compare`` of constants can decide a where). A ``mir.where`` whose condition is
known and uniform takes one arm:

- all true -> the ``on_true`` arm, all false -> ``on_false``; an arm narrower than the
  result (broadcast) is forwarded through a ``mir.expand`` to the result's shape;
- a mixed condition folds only when both arms are known.

Then every value found known becomes a ``mir.constant`` (at most ``max-elements``
elements) and the values that only fed an untaken arm -- unreachable now -- are removed,
params and constants included (``mir.input`` stays: it is the signature). Dead code that
was there before is left to dce. An ``mir.if`` whose condition is found known is replaced
by its taken branch during the sweep, the branch's ops then propagating like the block's
own; the regions of control-flow ops left are swept as blocks of their own. A block
without ``mir.where`` or ``mir.if`` is not touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.ir import Block, Operation, SSAValue

from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import is_leaf
from rlx_compile.dialects.types import TensorType
from rlx_compile.folding import (
    KnownValues,
    KnownValuesPass,
    UnusedBefore,
    inline_taken_branch,
    materialize,
    result_elements,
)

_DECIDED = (mir.WhereOp, mir.IfOp)
"""The ops sccp decides; a block without them is left as it is."""


@dataclass(frozen=True)
class SCCPPass(KnownValuesPass):
    """Decide mir.where ops whose condition is known; fold and prune what follows."""

    name = "sccp"
    REPORTS_CHANGES: ClassVar[bool] = True
    PURE: ClassVar[bool] = True
    ACTS_ON: ClassVar[tuple[type[Operation], ...]] = _DECIDED

    def run_block(self, block: Block) -> bool:
        return propagate_block(block, self.known_values())


def _taken_arm(condition: np.ndarray) -> int | None:
    """The operand index of the arm a uniform condition selects."""
    if bool(np.all(condition)):
        return 1
    if not bool(np.any(condition)):
        return 2
    return None


def propagate_block(block: Block, known: KnownValues) -> bool:
    """Run SCCP on one block (``known`` empty, with the sweep's options); returns whether
    it changed anything."""
    op = block.first_op
    while op is not None and not isinstance(op, _DECIDED):
        op = op.next_op
    if op is None:
        return False
    unused = UnusedBefore(block)
    max_elements = known.max_elements
    taken: list[tuple[mir.WhereOp, int]] = []
    inlined = False
    op = block.first_op
    while op is not None:
        following = op.next_op
        if isinstance(op, mir.IfOp) and (condition := known.get(op.condition)) is not None:
            unused.changing()
            moved = inline_taken_branch(op, mir.IfOp.taken(condition))
            inlined = True
            op = moved[0] if moved else following  # the branch's ops propagate in turn
            continue
        _visit(op, known, taken, max_elements)
        op = following

    changed = inlined
    for op, index in taken:
        if not op.result.uses:
            continue
        unused.changing()
        # Read the arm now: an earlier where it came from may have been forwarded.
        arm = op.operands[index]
        if arm.type != op.result.type:
            if known.get(op.result) is not None:
                continue  # a broadcast constant: materialised below
            expand = mir.ExpandOp(arm, _type(op.result).shape)
            expand.location = op.location
            expand.result.name_hint = op.result.name_hint
            block.insert_op_before(expand, op)
            arm = expand.result
        op.result.replace_all_uses_with(arm)
        changed = True
    for op in list(block.ops):
        if is_leaf(op):
            continue
        for value in op.results:
            array = known.get(value)
            if array is not None and value.uses:
                unused.changing()
                const = materialize(np.ascontiguousarray(array), value)
                block.insert_op_before(const, op)
                value.replace_all_uses_with(const.result)
                changed = True
    if changed:
        unused.erase_newly_dead()
    return changed


def _visit(
    op: Operation,
    known: KnownValues,
    taken: list[tuple[mir.WhereOp, int]],
    max_elements: int,
) -> None:
    """One op of the sweep: a where with a known uniform condition takes its arm (its
    value is known when the arm's is), any other op folds if it can."""
    if isinstance(op, mir.WhereOp):
        condition = known.get(op.condition)
        index = None if condition is None else _taken_arm(condition)
        if index is not None:
            taken.append((op, index))
            arm_value = known.get(op.operands[index])
            result = _type(op.result)
            if arm_value is not None and result.is_static and result_elements(op) <= max_elements:
                shape = tuple(int(d) for d in result.shape)
                known.set(op.result, np.broadcast_to(arm_value, shape))
            return
    known.evaluate(op)


def _type(value: SSAValue) -> TensorType:
    t = value.type
    assert isinstance(t, TensorType)
    return t
