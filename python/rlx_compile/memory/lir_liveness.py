"""Storage and lifetimes re-derived from a ``lir.graph`` alone (its op order is the
schedule). The plan checker and the memory report use this, never the planner's own
liveness, so a liveness bug in the planner cannot cancel itself out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from rlx_compile.dialects import lir, mir
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.dialects.traits import is_leaf, is_weight_leaf
from rlx_compile.ir import graph_block, ops_without_terminator


@dataclass(slots=True)
class Storage:
    """One slot-holding value (a non-view result) and its lifetime."""

    value: SSAValue
    op: Operation
    step: int
    offset: int
    size: int
    leaf: bool
    birth: int
    death: int
    writable: bool = True
    """May be overwritten once dead (compute tensors; inputs of a reuse_inputs graph)."""
    output: bool = False
    read_steps: list[int] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.offset + self.size

    label_text: str = ""

    def label(self) -> str:
        return self.label_text or value_label(self.value)


def value_label(value: SSAValue) -> str:
    """``%name`` for named values, else ``%<op>`` (see ``printed_labels`` for numbers)."""
    if value.name_hint:
        return f"%{value.name_hint}"
    if isinstance(value, OpResult):
        return f"%<{value.owner.name}>"
    assert isinstance(value, BlockArgument)  # an SSA value is a result or an argument
    return f"%<arg{value.index}>"


def printed_labels(ops: list[Operation]) -> dict[SSAValue, str]:
    """The names values print with, assigned as xDSL's printer does: a name hint, with
    ``_1``, ``_2``... on its later repeats (xDSL drops such suffixes from hints, so
    imported names like ``relu_1`` repeat as ``relu``), else ``%N`` numbered in order."""
    labels: dict[SSAValue, str] = {}
    counter = 0
    seen: dict[str, int] = {}
    for op in ops:
        for r in op.results:
            hint = r.name_hint
            if hint:
                n = seen.get(hint, 0)
                seen[hint] = n + 1
                labels[r] = f"%{hint}_{n}" if n else f"%{hint}"
            else:
                labels[r] = f"%{counter}"
                counter += 1
    return labels


@dataclass(frozen=True)
class Scratch:
    """The scratch range of a control-flow op: in use during its step only."""

    op: Operation
    step: int
    offset: int
    size: int
    label: str

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass
class LirLiveness:
    graph: lir.GraphOp
    ops: list[Operation]
    storages: list[Storage]
    root_of: dict[SSAValue, tuple[SSAValue, int]]
    """view -> (storage value, byte offset); any other value is its own storage."""
    storage_of: dict[SSAValue, Storage]
    num_steps: int
    labels: dict[SSAValue, str] = field(default_factory=dict)
    scratch: list[Scratch] = field(default_factory=list)


def derive(graph: lir.GraphOp) -> LirLiveness:
    """The lifetimes of the graph's own block (its control-flow ops' regions apart: see
    ``derive_region``)."""
    return derive_region(graph, graph_block(graph), {}, [])


def derive_region(
    graph: lir.GraphOp,
    block: Block,
    outer_roots: dict[SSAValue, tuple[SSAValue, int]],
    args: Sequence[tuple[SSAValue, lir.SlotAttr]],
) -> LirLiveness:
    """The lifetimes of a block of ``graph`` in its own steps (the graph's, or a
    control-flow region's: the values it yields live to its end, a loop body's arguments
    -- ``args``, with their slots -- for the whole of it; values from outside it, whose
    roots ``outer_roots`` gives, are not its)."""
    ops = ops_without_terminator(block)
    terminator = block.last_op
    assert terminator is not None
    root_of: dict[SSAValue, tuple[SSAValue, int]] = dict(outer_roots)
    storage_of: dict[SSAValue, Storage] = {}
    # The storage each value of this block reads as, by id(value) (an SSAValue hashes by
    # id, through a Python __hash__): its own, or for a view its root's once that is
    # known. A value not in it is looked up through root_of and storage_of at its read.
    read_as: dict[int, Storage] = {}
    storages: list[Storage] = []
    scratch: list[Scratch] = []
    num_steps = len(ops)
    reuse_inputs = "reuse_inputs" in graph.properties
    labels = printed_labels(ops)
    for arg, arg_slot in args:
        s = Storage(arg, block.parent_op() or graph, -1, arg_slot.offset, arg_slot.size, False,
                    birth=0, death=num_steps, writable=False)  # fmt: skip
        storages.append(s)
        storage_of[arg] = s
        read_as[id(arg)] = s
    for step, op in enumerate(ops):
        results = op.results
        view_op, leaf, weight = _op_kind(op)
        attributes = op.attributes
        if view_op:
            view = cast(lir.ViewOp, op)
            root, base = root_of.get(view.root, (view.root, 0))
            root_of[view.result] = (root, base + view.offset)
            rooted = storage_of.get(root)
            if rooted is not None:
                read_as[id(view.result)] = rooted
        elif lir.SLOT_ATTR in attributes:
            # A reusable input is loaded before step 0 and dies at its last read.
            whole = leaf and not (reuse_inputs and not weight)
            birth = 0 if leaf else step
            death = num_steps if whole else birth
            writable = not leaf or not whole
            attr = attributes[lir.SLOT_ATTR]
            if type(attr) is lir.SlotAttr and len(results) == 1:
                (result,) = results
                pairs: Iterable[tuple[OpResult, lir.SlotAttr | None]] = ((result, attr),)
            else:
                pairs = zip(results, lir.result_slots(op), strict=True)
            for result, slot in pairs:
                if slot is None:
                    continue
                s = Storage(
                    result, op, step, slot.offset, slot.size, leaf, birth, death, writable
                )  # fmt: skip
                storages.append(s)
                storage_of[result] = s
                read_as[id(result)] = s
        slot = lir.scratch_slot(op) if lir.SCRATCH_ATTR in attributes else None
        if slot is not None:
            scratch.append(Scratch(op, step, slot.offset, slot.size, f"scratch of {op.name}"))
        # A control-flow op (an op with regions) also reads what its regions capture.
        for operand in mir.read_values(op) if op.regions else op._operands:
            read = read_as.get(id(operand))
            if read is None:
                rooted_at = root_of.get(operand)
                read = storage_of.get(operand if rooted_at is None else rooted_at[0])
            if read is not None:
                read.read_steps.append(step)
                if step > read.death:
                    read.death = step
    for value in terminator.operands:
        root, _ = root_of.get(value, (value, 0))
        if root in storage_of:
            storage_of[root].output = True
            storage_of[root].death = num_steps
    for k, (arg, _) in enumerate(args):
        labels[arg] = f"%{arg.name_hint}" if arg.name_hint else f"%<argument #{k}>"
    for s in storages:
        s.label_text = labels[s.value]
    return LirLiveness(graph, ops, storages, root_of, storage_of, num_steps, labels, scratch)


_VIEW_TYPES: dict[type[Operation], bool] = {}
_OP_KINDS: dict[type[Operation], tuple[bool, bool, bool]] = {}


def _op_kind(op: Operation) -> tuple[bool, bool, bool]:
    """``is_view(op)``, ``is_leaf(op)`` and ``is_weight_leaf(op)``, by class."""
    kind = _OP_KINDS.get(type(op))
    if kind is None:
        kind = _OP_KINDS[type(op)] = (is_view(op), is_leaf(op), is_weight_leaf(op))
    return kind


def is_view(op: Operation) -> bool:
    """isinstance(op, lir.ViewOp), by class: an isinstance against a dialect's abstract
    op classes costs more than the rest of an op's liveness."""
    view = _VIEW_TYPES.get(type(op))
    if view is None:
        view = _VIEW_TYPES[type(op)] = isinstance(op, lir.ViewOp)
    return view


OperandOffsets = dict[Operation, dict[SSAValue, int | None]]
"""Per op, ``operand_offset_in_result`` of each of its operands."""


def operand_offset_in_result(
    op: Operation, value: SSAValue, known: OperandOffsets | None = None
) -> int | None:
    """Where ``op`` copies ``value``'s bytes into its result, when it lays its operands
    end to end (``contiguous_operand_offsets``, a contiguous concat) and reads ``value``
    exactly once; None otherwise. ``known`` keeps each op's answers between calls."""
    answers = None if known is None else known.get(op)
    if answers is None:
        answers = {}
        offsets = op.contiguous_operand_offsets() if isinstance(op, ShapedOp) else None
        if offsets is not None:
            for operand, offset in zip(op.operands, offsets, strict=True):
                answers[operand] = None if operand in answers else offset  # read twice: None
        if known is not None:
            known[op] = answers
    return answers.get(value)
