"""Memory planning of control-flow regions (``mir.if``, ``mir.loop``) inside their
graph's arena.

A control-flow op is one step of its parent's schedule. Each of its regions is planned on
its own (recursively: a region's own control-flow ops are steps of it) and placed in a
*scratch* slot of the parent: a pseudo-tensor born and dead at the op's step, so the
parent's planner keeps it apart from everything live there -- the op's operands and
results and every value its regions capture (which count as read by the op, so they stay
alive across it).

- ``mir.if``: both branches are placed at the start of the scratch, which is as large as
  the larger branch (only one runs).
- ``mir.loop``: the body's arguments (iteration number, condition, carried values) get
  slots of their own at the start of the scratch, the body's sub-plan follows, reused by
  every iteration. The body's yields are outputs of its sub-plan (alive to its end), and
  the executor copies them into the argument slots between iterations and into the
  result slots at the end, so an iteration never reads a value it has overwritten; each
  iteration's scan elements are copied into the scan results.

Constants inside regions are hoisted to the graph first (leaves live for the whole run).
A loop whose scan results have a length known only at run time has no size to plan:
``UnplannableError`` names it (``rlx_compile.backend`` runs such a model on the reference
executor).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects import func
from xdsl.ir import Block, Operation, SSAValue

from rlx_compile.dialects import lir, mir
from rlx_compile.dialects.construct import block_ops, copy_name, walk_list
from rlx_compile.dialects.lir import DimRanges
from rlx_compile.dialects.traits import is_leaf
from rlx_compile.dialects.types import TensorType
from rlx_compile.ir import graph_block
from rlx_compile.memory.graph_plan import (
    KIND_COMPUTE,
    ControlFlowBuilder,
    PlanningError,
    PlanOptions,
    TensorGraphArrays,
    TensorPlan,
    add_planned_ops,
    export_graph,
    plan_exported,
    slot_bytes,
)
from rlx_compile.memory.placement import slot_alignment


class UnplannableError(PlanningError):
    """A control-flow op whose results have a size known only at run time."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op


@dataclass
class BlockPlan:
    """The plan of one block: its ops in order and where each of their tensors goes, in
    bytes from the block's base; its control-flow ops' layouts."""

    ops: list[Operation]
    plan: TensorPlan
    layouts: dict[Operation, RegionLayout] = field(default_factory=dict)

    @property
    def arena_size(self) -> int:
        return self.plan.arena_size


@dataclass
class RegionLayout:
    """A control-flow op's scratch: its size, the sub-plan of each region (placed at
    ``body_offset``) and a loop's argument slots (offset, size), from its start."""

    size: int
    bodies: list[BlockPlan]
    body_offset: int = 0
    arg_slots: list[tuple[int, int]] = field(default_factory=list)


def _align(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def plan_block(
    ops: list[Operation],
    outputs: list[SSAValue],
    opts: PlanOptions,
    *,
    region: bool = False,
    exported: TensorGraphArrays | None = None,
) -> BlockPlan:
    """Plan ``ops`` (a graph's, or a region body's with ``region``) and, first, the
    regions of their control-flow ops. ``exported``: ``export_graph`` of ``ops`` already
    made (without scratch, which is added to it)."""
    layouts: dict[Operation, RegionLayout] = {
        op: _layout(op, opts) for op in ops if op.regions and isinstance(op, mir.ControlFlowOp)
    }
    scratch: dict[Operation, int] = {op: layout.size for op, layout in layouts.items()}
    if exported is None:
        exported = export_graph(ops, outputs, opts, scratch, region=region)
    elif scratch:
        exported = exported.with_scratch(scratch)
    return BlockPlan(ops, plan_exported(exported, opts), layouts)


def _body(block: Block) -> tuple[list[Operation], list[SSAValue]]:
    """A region body's ops and the values it yields (those it computes itself)."""
    terminator = block.last_op
    assert terminator is not None
    ops = [op for op in block.ops if op is not terminator]
    produced = {r for op in ops for r in op.results}
    return ops, [v for v in terminator.operands if v in produced]


def _layout(op: mir.ControlFlowOp, opts: PlanOptions) -> RegionLayout:
    _check_plannable(op, opts.ranges)
    if isinstance(op, mir.IfOp):
        bodies = [
            plan_block(*_body(op.branch(taken)), opts, region=True) for taken in (True, False)
        ]
        need = max(b.plan.max_alignment(opts.alignment) for b in bodies)
        return RegionLayout(_scratch(max(b.arena_size for b in bodies), need), bodies)
    loop = cast(mir.LoopOp, op)
    block = loop.body.block
    offset, slots, need = 0, [], 1
    for arg in block.args:
        t = cast(TensorType, arg.type)
        size = slot_bytes(t, KIND_COMPUTE, opts.width, opts.alignment, opts.ranges)
        align = slot_alignment(size, opts.alignment) if size else 1  # empty: anywhere
        offset = _align(offset, align)
        slots.append((offset, size))
        offset, need = offset + size, max(need, align)
    body = plan_block(*_body(block), opts, region=True)
    body_align = body.plan.max_alignment(opts.alignment)
    offset = _align(offset, body_align)
    need = max(need, body_align)
    return RegionLayout(_scratch(offset + body.arena_size, need), [body], offset, slots)


def _scratch(size: int, need: int) -> int:
    """The size of a scratch whose regions' slots, aligned from its start, need its offset
    to be a multiple of ``need`` (at most the plan's alignment): a multiple of ``need``, so
    that the parent aligns it so (``slot_alignment``)."""
    return _align(size, need)


def check_plannable(graph: func.FuncOp, ranges: DimRanges | None = None) -> None:
    """Raise ``UnplannableError`` for the first control-flow op (nested ones included)
    whose results have a size known only at run time (a symbol without a range)."""
    for op in _in_regions(graph_block(graph)):
        if isinstance(op, mir.ControlFlowOp):
            _check_plannable(op, ranges or {})


def _in_regions(block: Block) -> Iterator[Operation]:
    """The ops of ``block`` that hold regions and every op nested in them, in walk order
    (the others hold no op, and a control-flow op holds regions)."""
    for op in block_ops(block):
        if op.regions:
            yield from walk_list(op)


def _check_plannable(op: mir.ControlFlowOp, ranges: DimRanges) -> None:
    for result in op.results:
        t = cast(TensorType, result.type)
        if set(t.symbols()) - ranges.keys():
            what = (
                "the number of iterations of the loop"
                if isinstance(op, mir.LoopOp) and result in op.scan_results
                else "a size"
            )
            label = f"{op.name} %{result.name_hint}" if result.name_hint else op.name
            raise UnplannableError(
                op,
                f"{label} produces {t}, whose size depends on {what}: it is known only at "
                "run time and has no upper bound to plan for",
            )


def build_control_flow(layouts: dict[Operation, RegionLayout]) -> ControlFlowBuilder:
    """The ``ControlFlowBuilder`` of ``add_planned_ops`` for a block whose control-flow
    ops have ``layouts``: the op rebuilt with its regions' ops at their slots."""

    def build(op: Operation, mapping: dict[SSAValue, SSAValue], scratch: int) -> Operation:
        layout = layouts[op]
        new = op.clone_without_regions(value_mapper=mapping)
        base = scratch + layout.body_offset
        for old_region, new_region, body in zip(
            op.regions, new.regions, layout.bodies, strict=True
        ):
            old_block = old_region.block
            new_block = Block(arg_types=[a.type for a in old_block.args])
            for old_arg, new_arg in zip(old_block.args, new_block.args, strict=True):
                copy_name(old_arg, new_arg)
                old_arg.replace_all_uses_with(new_arg)  # the body's ops move over
                mapping[old_arg] = new_arg
            add_planned_ops(
                new_block, body.ops, body.plan, mapping, base, build_control_flow(body.layouts)
            )
            terminator = old_block.last_op
            assert terminator is not None
            new_block.add_op(terminator.clone(value_mapper=mapping))
            new_region.add_block(new_block)
        args = [lir.SlotAttr.of(scratch + off, size) for off, size in layout.arg_slots]
        lir.set_region_slots(new, lir.SlotAttr.of(scratch, layout.size), args)
        return new

    return build


def hoist_region_constants(graph: func.FuncOp) -> int:
    """Move every ``mir.constant`` of a control-flow region to the top of the graph (a
    leaf, preloaded and live for the whole run, as the graph's own constants); returns
    how many moved."""
    block = graph_block(graph)
    nested = [
        op for op in _in_regions(block) if isinstance(op, mir.ConstantOp) and op.parent is not block
    ]
    anchor = next((op for op in block.ops if not is_leaf(op)), None) if nested else None
    for op in nested:
        op.detach()
        if anchor is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, anchor)
    return len(nested)
