"""Storage and lifetimes re-derived from a ``lir.graph`` alone (its op order is the
schedule). The plan checker and the memory report use this, never the planner's own
liveness, so a liveness bug in the planner cannot cancel itself out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from rlx_compile.dialects import lir, mir
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.dialects.traits import is_leaf, is_weight_leaf
from rlx_compile.ir import graph_block, ops_without_terminator


@dataclass
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
            if r.name_hint:
                n = seen.get(r.name_hint, 0)
                seen[r.name_hint] = n + 1
                labels[r] = f"%{r.name_hint}_{n}" if n else f"%{r.name_hint}"
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
    root_of: dict[SSAValue, tuple[SSAValue, int]]  # value -> (storage value, byte offset)
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
    storages: list[Storage] = []
    scratch: list[Scratch] = []
    num_steps = len(ops)
    reuse_inputs = "reuse_inputs" in graph.properties
    for arg, arg_slot in args:
        root_of[arg] = (arg, 0)
        s = Storage(arg, block.parent_op() or graph, -1, arg_slot.offset, arg_slot.size, False,
                    birth=0, death=num_steps, writable=False)  # fmt: skip
        storages.append(s)
        storage_of[arg] = s
    for step, op in enumerate(ops):
        if isinstance(op, lir.ViewOp):
            root, base = root_of.get(op.root, (op.root, 0))
            root_of[op.result] = (root, base + op.offset)
        else:
            leaf = is_leaf(op)
            # A reusable input is loaded before step 0 and dies at its last read.
            whole = leaf and not (reuse_inputs and not is_weight_leaf(op))
            for result, slot in zip(op.results, lir.result_slots(op), strict=True):
                root_of[result] = (result, 0)
                if slot is None:
                    continue
                s = Storage(
                    result, op, step, slot.offset, slot.size, leaf,
                    birth=0 if leaf else step, death=num_steps if whole else (0 if leaf else step),
                    writable=not leaf or not whole,
                )  # fmt: skip
                storages.append(s)
                storage_of[result] = s
        slot = lir.scratch_slot(op)
        if slot is not None:
            scratch.append(Scratch(op, step, slot.offset, slot.size, f"scratch of {op.name}"))
        for operand in mir.read_values(op):  # a control-flow op reads what it captures
            root, _ = root_of.get(operand, (operand, 0))
            if root in storage_of:
                s = storage_of[root]
                s.read_steps.append(step)
                s.death = max(s.death, step)
    for value in terminator.operands:
        root, _ = root_of.get(value, (value, 0))
        if root in storage_of:
            storage_of[root].output = True
            storage_of[root].death = num_steps
    labels = printed_labels(ops)
    for k, (arg, _) in enumerate(args):
        labels[arg] = f"%{arg.name_hint}" if arg.name_hint else f"%<argument #{k}>"
    for s in storages:
        s.label_text = labels[s.value]
    return LirLiveness(graph, ops, storages, root_of, storage_of, num_steps, labels, scratch)


def operand_offset_in_result(op: Operation, value: SSAValue) -> int | None:
    """Where ``op`` copies ``value``'s bytes into its result, when it lays its operands
    end to end (``contiguous_operand_offsets``, a contiguous concat) and reads ``value``
    exactly once; None otherwise."""
    offsets = op.contiguous_operand_offsets() if isinstance(op, ShapedOp) else None
    if offsets is None or list(op.operands).count(value) != 1:
        return None
    return offsets[list(op.operands).index(value)]
