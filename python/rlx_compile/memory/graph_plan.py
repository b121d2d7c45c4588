"""Memory planning of a MIR graph: export it to flat arrays, plan it in the C++ core,
and build the ``lir.graph`` that carries the plan.

Views (``contiguous_view_offset``) alias their operand's bytes; elementwise ops
(the ``Elementwise`` trait) may write over a same-size operand that dies at them; the operands of
an op that lays them end to end (``contiguous_operand_offsets``: a concat whose dims
before the axis are 1) may be produced at their place inside its result; leaves are
preloaded and live for the whole run; graph outputs live to the end. Sizes follow a
width policy: ``native`` (true bytes), ``f32-uniform`` (every tensor but non-f32 params at
least 4 bytes per element, as f32-typed GPU arenas need) or ``hybrid`` (f16/bf16
activations and non-f32 params native, the rest f32-wide).

A range plan (``dim_ranges``) plans a graph with symbolic dims once for every size in
the ranges: each tensor's slot is sized at its upper bound, so the offsets hold at every
size (TVM Relax plans dynamic shapes the same way, from ``tir_var_upper_bound``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.traits import IsolatedFromAbove

from rlx_compile import _core
from rlx_compile.dialects import lir, mir
from rlx_compile.dialects.common import ShapedOp, share_inference_records
from rlx_compile.dialects.dim_expr import upper_bound
from rlx_compile.dialects.lir import DimRanges
from rlx_compile.dialects.traits import Elementwise
from rlx_compile.dialects.types import DType, TensorType, element_count
from rlx_compile.ir import (
    graph_block,
    graph_name,
    graph_outputs,
    ops_without_terminator,
    output_names,
    weight_values,
)
from rlx_compile.memory.placement import DEFAULT_BUDGET, STRATEGIES

WIDTH_POLICIES = ("native", "f32-uniform", "hybrid")
# The values of the planner's ``kind`` array, as the C++ core defines them.
KIND_COMPUTE = int(_core.TensorKind.COMPUTE)
KIND_INPUT = int(_core.TensorKind.INPUT)
KIND_PARAM = int(_core.TensorKind.PARAM)
KIND_CONSTANT = int(_core.TensorKind.CONSTANT)


class PlanningError(ValueError):
    """The graph cannot be planned (symbolic dims, nested graphs, ...)."""


@dataclass(frozen=True)
class PlanOptions:
    alignment: int = 64
    strategy: str = "best"
    budget: int = DEFAULT_BUDGET
    inplace: bool = True
    concat_inplace: bool = True
    """Produce a concat's operands that die at it inside its slot, at their offset."""
    pin_output_ancestors: bool = False
    reuse_inputs: bool = False
    """Inputs die after their last read (their slots reused): sound when every run loads
    the inputs afresh, as the arena executor does; False keeps them for the whole run."""
    allocate_inputs: bool = True
    allocate_params: bool = True
    allocate_constants: bool = True
    width: str = "native"
    dim_ranges: tuple[tuple[str, int, int], ...] = ()
    """``(symbol, lo, hi)``: plan for every size in these ranges (a range plan)."""

    @property
    def ranges(self) -> dict[str, tuple[int, int]]:
        return {name: (lo, hi) for name, lo, hi in self.dim_ranges}

    def __post_init__(self) -> None:
        if self.alignment <= 0 or self.alignment & (self.alignment - 1):
            raise ValueError(f"alignment {self.alignment} is not a power of two")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy '{self.strategy}' (known: {', '.join(STRATEGIES)})")
        if self.width not in WIDTH_POLICIES:
            raise ValueError(f"unknown width '{self.width}' (known: {', '.join(WIDTH_POLICIES)})")

    def core(self) -> _core.PlanOptions:
        """The options the C++ planner reads (leaves always live for the whole run)."""
        return _core.PlanOptions(
            leaves_live_whole=True, inputs_live_whole=not self.reuse_inputs,
            pin_output_ancestors=self.pin_output_ancestors, inplace=self.inplace,
            concat_inplace=self.concat_inplace, alignment=self.alignment,
            strategy=self.strategy, budget=self.budget,
        )  # fmt: skip


def slot_bytes(
    t: TensorType, kind: int, width: str, alignment: int, ranges: DimRanges | None = None
) -> int:
    """Bytes a tensor's slot needs under a width policy (symbolic dims at their largest
    size in ``ranges``)."""
    n = t.num_elements()
    if n is None:
        n = upper_bound(element_count(t.shape), ranges or {})
        if n is None:
            raise PlanningError(f"{t} has no upper bound in the ranges {dict(ranges or {})}")
    native = n * t.dtype.itemsize
    if kind != KIND_COMPUTE and native == 0:
        return max(alignment, 1)  # an empty leaf (e.g. a [1, 0, 8] past-KV) still gets a slot
    if width == "native" or (kind == KIND_PARAM and t.dtype is not DType.F32):
        return native
    if width == "hybrid" and t.dtype in (DType.F16, DType.BF16):
        return native
    return max(native, n * 4)


@dataclass
class TensorGraphArrays:
    """The flat-array form of a scheduled graph, one entry per op result."""

    ops: list[Operation]
    tensors: list[SSAValue | None]
    """The value of each row (None for a control-flow op's scratch)."""
    arrays: dict[str, np.ndarray]
    num_steps: int
    index: dict[SSAValue, int] = field(default_factory=dict)
    scratch_index: dict[Operation, int] = field(default_factory=dict)
    """The row of each control-flow op's scratch (a pseudo-tensor of the op's step)."""

    def core(self) -> _core.TensorGraph:
        """The graph as the C++ planner takes it (checked there)."""
        return _core.TensorGraph(num_steps=self.num_steps, **self.arrays)


def _kind(op: Operation) -> int:
    if isinstance(op, mir.InputOp):
        return KIND_INPUT
    if isinstance(op, mir.ParamOp):
        return KIND_PARAM
    if isinstance(op, mir.ConstantOp):
        return KIND_CONSTANT
    return KIND_COMPUTE


def export_graph(
    ops: list[Operation],
    outputs: list[SSAValue],
    opts: PlanOptions,
    scratch: Mapping[Operation, int] | None = None,
    *,
    region: bool = False,
) -> TensorGraphArrays:
    """Flat arrays for the C++ planner; ``ops`` in execution order (leaves included).

    ``scratch`` gives each control-flow op the bytes its regions need (``region_plan``):
    one more tensor, born and dead at the op's step, so it overlaps nothing live there.
    A control-flow op reads the values its regions capture. With ``region``, ``ops`` are
    a region's body: values from outside it (block arguments, captured values) live
    elsewhere and are not this plan's."""
    scratch = scratch or {}
    tensors: list[SSAValue | None] = []
    index: dict[SSAValue, int] = {}
    scratch_index: dict[Operation, int] = {}
    cols: dict[str, list[int]] = {k: [] for k in _core.TensorGraph.PER_TENSOR}
    dep_offsets, deps = [0], []
    output_set = set(outputs)
    allocate = {
        KIND_COMPUTE: True,
        KIND_INPUT: opts.allocate_inputs,
        KIND_PARAM: opts.allocate_params,
        KIND_CONSTANT: opts.allocate_constants,
    }
    # Weight packs -- values computed from params and constants only (a fused op's
    # concatenated weights, a transposed weight) -- are weights too: they live where the
    # params live, so with params outside the arena they stay outside it as well.
    static = weight_values(ops)
    ranges = opts.ranges
    for step, op in enumerate(ops):
        kind = _kind(op)
        reads = mir.read_values(op)
        view = op.contiguous_view_offset() if isinstance(op, ShapedOp) else None
        if view and _symbolic(op):
            # An offset into a tensor whose size varies is only safe at 0 (no op gives
            # another one today): plan anything else as a copy.
            view = None
        if view is not None and op.operands[0] not in index:
            view = None  # a view of a value from outside the region: a copy here
        for result in op.results:
            t = cast(TensorType, result.type)
            unranged = set(t.symbols()) - ranges.keys()
            if unranged:
                raise PlanningError(
                    f"{op.name} produces {t}: memory planning needs static shapes (bind "
                    f"the symbolic dims {sorted(unranged)} first, or give them ranges)"
                )
            index[result] = len(tensors)
            tensors.append(result)
            cols["step"].append(step)
            cols["size"].append(slot_bytes(t, kind, opts.width, opts.alignment, ranges))
            cols["kind"].append(kind)
            weight_pack = result in static and kind == KIND_COMPUTE
            cols["alloc"].append(int(opts.allocate_params if weight_pack else allocate[kind]))
            parent = index[op.operands[0]] if view is not None else -1
            cols["view_parent"].append(parent)
            cols["view_offset"].append(view or 0)
            cols["is_output"].append(int(result in output_set))
            cols["inplace_ok"].append(int(op.has_trait(Elementwise)))
            cols["embed_into"].append(-1)
            cols["embed_offset"].append(0)
            for operand in reads:
                if operand in index:
                    deps.append(index[operand])
                elif not region:
                    raise PlanningError(f"{op.name} reads {_foreign(operand)}")
            dep_offsets.append(len(deps))
        if scratch.get(op, 0) > 0:  # regions without tensors need no scratch
            scratch_index[op] = len(tensors)
            tensors.append(None)
            for col, value in (("step", step), ("size", scratch[op]), ("kind", KIND_COMPUTE),
                               ("alloc", 1), ("view_parent", -1), ("view_offset", 0),
                               ("is_output", 0), ("inplace_ok", 0), ("embed_into", -1),
                               ("embed_offset", 0)):  # fmt: skip
                cols[col].append(value)
            dep_offsets.append(len(deps))
        embed = op.contiguous_operand_offsets() if isinstance(op, ShapedOp) else None
        if embed is not None and all(v in index for v in op.operands):
            _embed_candidates(op, embed, index, cols)
    if not region:
        for returned in outputs:
            if returned not in index:
                raise PlanningError(f"the graph returns {_foreign(returned)}")
    arrays = {k: np.asarray(v, dtype=np.int64) for k, v in cols.items()}
    # A view's slot size is its own (possibly f32-widened) size; keep it within its parent.
    for i, parent in enumerate(arrays["view_parent"]):
        if parent >= 0:
            arrays["size"][i] = min(
                arrays["size"][i], arrays["size"][parent] - arrays["view_offset"][i]
            )
    arrays["dep_offsets"] = np.asarray(dep_offsets, dtype=np.int64)
    arrays["deps"] = np.asarray(deps, dtype=np.int64)
    return TensorGraphArrays(ops, tensors, arrays, len(ops), index, scratch_index)


def _foreign(value: SSAValue) -> str:
    """A value a graph uses but does not produce, for an error."""
    if isinstance(value, BlockArgument):
        return (
            "a value not produced by this graph (an argument of the function: a graph "
            "takes its inputs as mir.input ops)"
        )
    return "a value not produced by this graph"


def _symbolic(op: Operation) -> bool:
    return any(not cast(TensorType, v.type).is_static for v in (*op.operands, *op.results))


def _embed_candidates(
    op: Operation, offsets: list[int], index: dict[SSAValue, int], cols: dict[str, list[int]]
) -> None:
    """Mark ``op``'s operands as candidates to be produced inside its result at
    ``offsets`` (the C++ planner decides which are safe). A later concat reading the same
    tensor replaces the mark: only the last reader can be where the tensor dies. Only
    slots of the tensor's true size qualify: a widened slot would spill over the next
    operand's bytes."""
    into = index[op.results[0]]
    if cols["size"][into] != cast(TensorType, op.results[0].type).nbytes():
        return
    for operand, offset in zip(op.operands, offsets, strict=True):
        t = index[operand]
        if cols["size"][t] == cast(TensorType, operand.type).nbytes():
            cols["embed_into"][t] = into
            cols["embed_offset"][t] = offset


@dataclass
class TensorPlan:
    """The C++ planner's answer for an exported graph."""

    graph: TensorGraphArrays
    offset: np.ndarray
    root: np.ndarray
    root_offset: np.ndarray
    buffer: np.ndarray
    arena_size: int
    peak: int
    inplace_count: int
    embedded_count: int
    """Concat operands produced inside their concat's slot."""


def plan_exported(g: TensorGraphArrays, opts: PlanOptions) -> TensorPlan:
    out = _core.plan_tensors(g.core(), opts.core())
    return TensorPlan(
        g, out["offset"], out["root"], out["root_offset"], out["buffer"],
        int(out["arena_size"]), int(out["peak"]), int(out["inplace_count"]),
        int(out["embedded_count"]),
    )  # fmt: skip


def memory_order(
    ops: list[Operation], outputs: list[SSAValue], opts: PlanOptions
) -> tuple[list[Operation], dict[str, int]]:
    """A reordering of ``ops`` with a lower peak of live bytes (leaves stay first), and
    the peaks measured for each candidate order."""
    g = export_graph(ops, outputs, opts)
    out = _core.schedule_memory(g.core(), opts.core())
    names = _core.SCHEDULE_CANDIDATES
    peaks = {names[i]: int(p) for i, p in enumerate(out["candidate_peaks"])}
    peaks["winner"] = int(out["winner"])
    return [ops[int(i)] for i in out["order"]], peaks


ControlFlowBuilder = Callable[[Operation, dict[SSAValue, SSAValue], int], Operation]
"""``f(op, mapping, scratch_offset) -> planned op``: a control-flow op rebuilt with its
regions planned inside its scratch slot (``region_plan``)."""


def build_lir(
    graph: func.FuncOp,
    ops: list[Operation],
    plan: TensorPlan,
    opts: PlanOptions,
    control_flow: ControlFlowBuilder | None = None,
) -> lir.GraphOp:
    """The ``lir.graph`` for ``graph`` with ``ops`` in schedule order and ``plan``'s slots."""
    block = Block()
    mapping: dict[SSAValue, SSAValue] = {}
    add_planned_ops(block, ops, plan, mapping, 0, control_flow)
    outputs = graph_outputs(graph)
    block.add_op(lir.ReturnOp([mapping[v] for v in outputs]))
    inputs = [op.tensor_name.data for op in ops if isinstance(op, mir.InputOp)]
    params = [op.tensor_name.data for op in ops if isinstance(op, mir.ParamOp)]
    return lir.GraphOp(
        graph_name(graph), Region(block), arena_size=plan.arena_size,
        alignment=opts.alignment, inputs=inputs, params=params, outputs=output_names(graph),
        reuse_inputs=opts.reuse_inputs, dim_ranges=opts.ranges,
    )  # fmt: skip


def add_planned_ops(
    block: Block,
    ops: list[Operation],
    plan: TensorPlan,
    mapping: dict[SSAValue, SSAValue],
    base: int,
    control_flow: ControlFlowBuilder | None = None,
) -> None:
    """Append ``ops`` to ``block`` as ``plan`` places them, ``base`` bytes into the arena:
    views become ``lir.view``s of their root, every other op carries its result slots;
    ``mapping`` maps old values to new ones (and grows)."""
    g = plan.graph
    for op in ops:
        first = g.index[op.results[0]] if op.results else None
        if first is not None and g.arrays["view_parent"][first] >= 0:
            root = g.tensors[int(plan.root[first])]
            assert root is not None
            view = lir.ViewOp(
                mapping[root], int(plan.root_offset[first]), cast(TensorType, op.results[0].type)
            )
            view.location = op.location
            view.results[0].name_hint = op.results[0].name_hint
            block.add_op(view)
            mapping[op.results[0]] = view.results[0]
            continue
        if isinstance(op, mir.ControlFlowOp):
            if control_flow is None:
                raise PlanningError(f"{op.name}: no planner for its regions")
            row = g.scratch_index.get(op)
            new = control_flow(op, mapping, base + (0 if row is None else int(plan.offset[row])))
        else:
            new = op.clone(value_mapper=mapping)
            share_inference_records(op, new)  # the verify after the pass need not infer again
        for old, fresh in zip(op.results, new.results, strict=True):
            mapping[old] = fresh
        slots: list[lir.SlotAttr | None] = []
        for result in op.results:
            t = g.index[result]
            offset = int(plan.offset[t])
            size = int(g.arrays["size"][t])
            slots.append(None if offset < 0 else lir.SlotAttr(base + offset, size))
        lir.set_result_slots(new, slots)
        block.add_op(new)


def plannable_ops(graph: Operation) -> list[Operation]:
    """The ops of a graph function in block order, without the terminator; PlanningError
    if one holds a region the planner cannot treat as one kernel or a sub-plan."""
    ops = ops_without_terminator(graph_block(graph))
    for op in ops:
        # An op whose region reads only its own arguments (an elementwise region) is one
        # kernel: its body's values live in registers, not in the arena. Control-flow ops'
        # regions are planned as sub-plans (``region_plan``).
        plain = op.has_trait(IsolatedFromAbove) or isinstance(op, mir.ControlFlowOp)
        if op.regions and not plain:
            raise PlanningError(f"{op.name} holds a region: inline or lower it before planning")
    return ops
