"""Memory planning of a MIR graph: export it to flat arrays, plan it in the C++ core,
and build the ``lir.graph`` that carries the plan.

Views (``contiguous_view_offset``) alias their operand's bytes; elementwise ops
(``writes_in_place``: the ``Elementwise`` and ``InPlace`` traits) may write over a
same-size operand that dies at them; the operands of an op that lays them end to end
(``contiguous_operand_offsets``: a concat whose dims before the axis are 1) may be
produced at their place inside its result; leaves are preloaded and live for the whole
run; graph outputs live to the end. Sizes follow a width policy: ``native`` (true
bytes), ``f32-uniform`` (every tensor but non-f32 params at least 4 bytes per element,
as f32-typed GPU arenas need) or ``hybrid`` (f16/bf16 activations and non-f32 params
native, the rest f32-wide).

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
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue, SSAValues
from xdsl.traits import IsolatedFromAbove

from rlx_compile import _core
from rlx_compile.dialects import lir, mir
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.dialects.construct import append_unchecked, copy_name, unlink_unchecked
from rlx_compile.dialects.dim_expr import upper_bound
from rlx_compile.dialects.lir import DimRanges
from rlx_compile.dialects.traits import writes_in_place
from rlx_compile.dialects.types import DType, TensorType, element_count
from rlx_compile.ir import (
    computes_weights,
    graph_block,
    graph_name,
    graph_outputs,
    ops_without_terminator,
    output_names,
)
from rlx_compile.memory.placement import DEFAULT_BUDGET, STRATEGIES, slot_alignment

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
    """The largest slot alignment (``placement.slot_alignment``)."""
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

    def core(self, budget: int | None = None) -> _core.PlanOptions:
        """The options the C++ planner reads (leaves always live for the whole run), with
        ``budget`` for the options' own; each made once (they are immutable)."""
        key = (self, self.budget if budget is None else budget)
        core = _CORE_OPTIONS.get(key)
        if core is None:
            if len(_CORE_OPTIONS) >= 256:
                _CORE_OPTIONS.clear()
            core = _CORE_OPTIONS[key] = _core.PlanOptions(
                leaves_live_whole=True, inputs_live_whole=not self.reuse_inputs,
                pin_output_ancestors=self.pin_output_ancestors, inplace=self.inplace,
                concat_inplace=self.concat_inplace, alignment=self.alignment,
                strategy=self.strategy, budget=key[1],
            )  # fmt: skip
        return core


_CORE_OPTIONS: dict[tuple[PlanOptions, int], _core.PlanOptions] = {}
"""The C++ planner's options of each ``PlanOptions`` and budget, made once."""


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
    return _slot_bytes(n, t.dtype, kind, width, alignment)


_ITEMSIZE = {dtype: dtype.itemsize for dtype in DType}


def _slot_bytes(n: int, dtype: DType, kind: int, width: str, alignment: int) -> int:
    """``slot_bytes`` of ``n`` elements of ``dtype``."""
    native = n * _ITEMSIZE[dtype]
    if kind != KIND_COMPUTE and native == 0:
        return max(alignment, 1)  # an empty leaf (e.g. a [1, 0, 8] past-KV) still gets a slot
    if width == "native" or (kind == KIND_PARAM and dtype is not DType.F32):
        return native
    if width == "hybrid" and dtype in (DType.F16, DType.BF16):
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
    embed_marks: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)
    """Per step of a contiguous concat: the (row, concat's row, offset) marks it makes."""
    # Memos (fields: a compiled build makes this a native class, without a __dict__).
    _rows: dict[int, int] | None = field(default=None, repr=False, compare=False)
    _made: _core.TensorGraph | None = field(default=None, repr=False, compare=False)

    @property
    def rows(self) -> dict[int, int]:
        """``index`` by id(value) (an SSAValue hashes by id, through a Python __hash__)."""
        rows = self._rows
        if rows is None:
            rows = self._rows = {id(v): i for v, i in self.index.items()}
        return rows

    def core(self) -> _core.TensorGraph:
        """The graph as the C++ planner takes it (checked there), made once: the arrays
        are not changed once exported."""
        made = self._made
        if made is None:
            made = self._made = _core.TensorGraph(num_steps=self.num_steps, **self.arrays)
        return made

    def reordered(self, order: list[int]) -> TensorGraphArrays:
        """What ``export_graph`` gives for the ops in ``order`` (steps of this graph, a
        topological order of them, like a schedule), derived from these arrays rather
        than the ops: every row but its step and indices is the same in any such order,
        and a tensor's concat mark is the last concat's in the new order. A graph
        without scratch rows only (its control-flow ops' would be new)."""
        assert not self.scratch_index
        a = self.arrays
        new_steps = np.asarray(order, dtype=np.int64)
        starts = np.searchsorted(a["step"], np.arange(self.num_steps + 1))
        counts = np.diff(starts)[new_steps]
        first = np.cumsum(counts) - counts  # each op's first new row
        rows = np.arange(len(self.tensors)) + np.repeat(starts[new_steps] - first, counts)
        new_row = np.empty_like(rows)
        new_row[rows] = np.arange(len(rows))
        arrays = {k: a[k][rows] for k in _core.TensorGraph.PER_TENSOR}
        arrays["step"] = np.repeat(np.arange(self.num_steps, dtype=np.int64), counts)
        parent = arrays["view_parent"]
        arrays["view_parent"] = np.where(parent >= 0, new_row[parent], -1)
        lengths = np.diff(a["dep_offsets"])[rows]
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        gather = np.arange(offsets[-1]) + np.repeat(a["dep_offsets"][rows] - offsets[:-1], lengths)
        arrays["dep_offsets"] = offsets
        arrays["deps"] = new_row[a["deps"][gather]].astype(np.int64)
        embed_into, embed_offset = arrays["embed_into"], arrays["embed_offset"]
        embed_into[:] = -1
        embed_offset[:] = 0
        marks: dict[int, list[tuple[int, int, int]]] = {}
        new_rows = new_row.tolist()
        for new, step in enumerate(order):
            if step in self.embed_marks:
                marks[new] = [(new_rows[t], new_rows[into], off)
                              for t, into, off in self.embed_marks[step]]  # fmt: skip
                for t, into, off in marks[new]:
                    embed_into[t], embed_offset[t] = into, off
        tensors = [self.tensors[r] for r in rows.tolist()]
        index = {v: i for i, v in enumerate(tensors) if v is not None}
        ops = [self.ops[s] for s in order]
        return TensorGraphArrays(ops, tensors, arrays, self.num_steps, index, {}, marks)

    def with_scratch(self, scratch: Mapping[Operation, int]) -> TensorGraphArrays:
        """What ``export_graph`` gives for these ops with ``scratch`` (a graph exported
        without it), derived from these arrays rather than the ops: a control-flow op's
        scratch is one more row after its results', which moves every later row up."""
        assert not self.scratch_index
        added = [(step, scratch[op]) for step, op in enumerate(self.ops) if scratch.get(op, 0) > 0]
        if not added:
            return self
        a = self.arrays
        steps = np.asarray([step for step, _ in added], dtype=np.int64)
        at = np.searchsorted(a["step"], steps, side="right")  # before these rows
        n, m = len(self.tensors), len(added)
        new_row = np.arange(n) + np.searchsorted(at, np.arange(n), side="right")
        places = at + np.arange(m)  # the scratch rows'
        arrays: dict[str, np.ndarray] = {}
        for k in _core.TensorGraph.PER_TENSOR:
            column = arrays[k] = np.full(n + m, _SCRATCH_ROW[k], dtype=np.int64)
            was = a[k]
            column[new_row] = np.where(was >= 0, new_row[was], -1) if k in _ROW_COLUMNS else was
        arrays["step"][places] = steps
        arrays["size"][places] = [size for _, size in added]
        offsets = arrays["dep_offsets"] = np.zeros(n + m + 1, dtype=np.int64)
        old_offsets = a["dep_offsets"]
        offsets[new_row + 1] = old_offsets[1:]
        offsets[places + 1] = old_offsets[at]  # no deps: where the row before ends
        arrays["deps"] = new_row[a["deps"]]
        rows = new_row.tolist()
        tensors: list[SSAValue | None] = [None] * (n + m)
        for row, value in enumerate(self.tensors):
            tensors[rows[row]] = value
        index = {v: i for i, v in enumerate(tensors) if v is not None}
        scratch_index = {
            self.ops[step]: row for (step, _), row in zip(added, places.tolist(), strict=True)
        }
        marks = {
            step: [(rows[t], rows[into], off) for t, into, off in made]
            for step, made in self.embed_marks.items()
        }
        return TensorGraphArrays(
            self.ops, tensors, arrays, self.num_steps, index, scratch_index, marks
        )


_item = tuple.__getitem__
"""``values[i]`` of SSAValues (a tuple) without its Python ``__getitem__``."""

_SCRATCH_ROW = {
    "step": 0, "size": 0, "kind": KIND_COMPUTE, "alloc": 1, "view_parent": -1,
    "view_offset": 0, "is_output": 0, "inplace_ok": 0, "embed_into": -1, "embed_offset": 0,
}  # fmt: skip
"""A scratch row's values in each per-tensor column (its step and size apart)."""
_ROW_COLUMNS = ("view_parent", "embed_into")
"""The per-tensor columns that hold rows (or -1)."""


_KINDS: dict[type[Operation], tuple[int, bool, bool, bool]] = {}


def _kind_of_type(op: Operation) -> tuple[int, bool, bool, bool]:
    """What the export asks of ``op``, by its class (isinstance against the dialects'
    abstract classes costs more than the rest of a row's export; traits and methods are
    the class's): its kind, whether it writes in place, may be a view (defines
    ``contiguous_view_offset``) and may lay its operands end to end (defines
    ``contiguous_operand_offsets``)."""
    facts = _KINDS.get(type(op))
    if facts is None:
        cls = type(op)
        kind = (
            KIND_INPUT if isinstance(op, mir.InputOp)
            else KIND_PARAM if isinstance(op, mir.ParamOp)
            else KIND_CONSTANT if isinstance(op, mir.ConstantOp)
            else KIND_COMPUTE
        )  # fmt: skip
        view = embed = False
        if isinstance(op, ShapedOp):
            # The base class's methods answer None for every op: an op class that keeps
            # them is never a view nor a contiguous concat, and need not be asked.
            shaped, base = type(op), ShapedOp
            view = shaped.contiguous_view_offset is not base.contiguous_view_offset
            embed = shaped.contiguous_operand_offsets is not base.contiguous_operand_offsets
        facts = (kind, writes_in_place(op), view, embed)
        _KINDS[cls] = facts
    return facts


def _kind(op: Operation) -> int:
    return _kind_of_type(op)[0]


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
    # Rows by id(value) while exporting (an SSAValue hashes by id, through a Python
    # __hash__ that costs more than the lookup); ``index`` is built from ``tensors``.
    rows: dict[int, int] = {}
    scratch_index: dict[Operation, int] = {}
    # One list per column of _core.TensorGraph.PER_TENSOR (this runs per op and result).
    steps: list[int] = []
    sizes: list[int] = []
    kinds: list[int] = []
    alloc: list[int] = []
    view_parent: list[int] = []
    view_offset: list[int] = []
    is_output: list[int] = []
    inplace_ok: list[int] = []
    dep_offsets, deps = [0], []
    views: list[int] = []  # rows that are views
    embeds: list[tuple[int, Operation, list[int]]] = []
    output_ids = {id(v) for v in outputs}
    allocate = {
        KIND_COMPUTE: True,
        KIND_INPUT: opts.allocate_inputs,
        KIND_PARAM: opts.allocate_params,
        KIND_CONSTANT: opts.allocate_constants,
    }
    # Weight packs -- values computed from params and constants only (a fused op's
    # concatenated weights, a transposed weight) -- are weights too: they live where the
    # params live, so with params outside the arena they stay outside it as well. The ids
    # of the weight values so far (``ir.computes_weights``, as the ops go by).
    weights: set[int] = set()
    ranges = opts.ranges
    width, alignment = opts.width, opts.alignment
    native = width == "native"
    empty_leaf = max(alignment, 1)  # an empty leaf (e.g. a [1, 0, 8] past-KV) still gets a slot
    for step, op in enumerate(ops):
        kind, in_place, may_view, may_embed = _kind_of_type(op)
        view = cast(ShapedOp, op).contiguous_view_offset() if may_view else None
        if view and _symbolic(op):
            # An offset into a tensor whose size varies is only safe at 0 (no op gives
            # another one today): plan anything else as a copy.
            view = None
        parent = -1
        if view is not None:
            parent = rows.get(id(_item(op._operands, 0)), -1)
            if parent < 0:
                view = None  # a view of a value from outside the region: a copy here
        results = op.results
        operands = op._operands
        weight = computes_weights(op, weights)
        if weight:
            weights.update(id(r) for r in results)
        alloc_row = int(opts.allocate_params if weight and kind == KIND_COMPUTE else allocate[kind])
        read_rows: list[int] | None = None
        for result in results:
            t = cast(TensorType, result._type)
            n = t.nbytes() if native else t.num_elements()  # both None when symbolic
            if n is not None:
                if native:  # _slot_bytes(n, ...) is the true bytes
                    size = n if n or kind == KIND_COMPUTE else empty_leaf
                else:
                    size = _slot_bytes(n, t.dtype, kind, width, alignment)
            else:
                unranged = set(t.symbols()) - ranges.keys()
                if unranged:
                    raise PlanningError(
                        f"{op.name} produces {t}: memory planning needs static shapes (bind "
                        f"the symbolic dims {sorted(unranged)} first, or give them ranges)"
                    )
                size = slot_bytes(t, kind, width, alignment, ranges)
            row = rows[id(result)] = len(tensors)
            tensors.append(result)
            steps.append(step)
            sizes.append(size)
            kinds.append(kind)
            alloc.append(alloc_row)
            view_parent.append(parent)
            view_offset.append(view or 0)
            if parent >= 0:
                views.append(row)
            is_output.append(int(id(result) in output_ids))
            inplace_ok.append(int(in_place))
            if read_rows is None:
                read_rows = []
                # A control-flow op (an op with regions) also reads what they capture.
                for operand in mir.read_values(op) if op.regions else operands:
                    r = rows.get(id(operand))
                    if r is not None:
                        read_rows.append(r)
                    elif not region:
                        raise PlanningError(f"{op.name} reads {_foreign(operand)}")
            deps += read_rows
            dep_offsets.append(len(deps))
        if scratch and scratch.get(op, 0) > 0:  # regions without tensors need no scratch
            scratch_index[op] = len(tensors)
            tensors.append(None)
            steps.append(step)
            sizes.append(scratch[op])
            kinds.append(KIND_COMPUTE)
            alloc.append(1)
            view_parent.append(-1)
            view_offset.append(0)
            is_output.append(0)
            inplace_ok.append(0)
            dep_offsets.append(len(deps))
        if may_embed:
            embed = cast(ShapedOp, op).contiguous_operand_offsets()
            if embed is not None and all(id(v) in rows for v in operands):
                embeds.append((step, op, embed))
    if not region:
        for returned in outputs:
            if id(returned) not in rows:
                raise PlanningError(f"the graph returns {_foreign(returned)}")
    index: dict[SSAValue, int] = {v: i for i, v in enumerate(tensors) if v is not None}
    n = len(tensors)
    embed_into, embed_offset = [-1] * n, [0] * n
    marks: dict[int, list[tuple[int, int, int]]] = {}
    for step, op, embed in embeds:  # in op order: a later concat's mark replaces an earlier one
        marks[step] = _embed_marks(op, embed, index, sizes)
        for row, into, offset in marks[step]:
            embed_into[row], embed_offset[row] = into, offset
    # A view's slot size is its own (possibly f32-widened) size; keep it within its parent
    # (in row order: a view of a view sees its parent's kept size).
    for i in views:
        sizes[i] = min(sizes[i], sizes[view_parent[i]] - view_offset[i])
    columns = {
        "step": steps, "size": sizes, "kind": kinds, "alloc": alloc,
        "view_parent": view_parent, "view_offset": view_offset, "is_output": is_output,
        "inplace_ok": inplace_ok, "embed_into": embed_into, "embed_offset": embed_offset,
    }  # fmt: skip
    arrays = {k: np.asarray(columns[k], dtype=np.int64) for k in _core.TensorGraph.PER_TENSOR}
    arrays["dep_offsets"] = np.asarray(dep_offsets, dtype=np.int64)
    arrays["deps"] = np.asarray(deps, dtype=np.int64)
    return TensorGraphArrays(
        ops, tensors, arrays, len(ops), index, scratch_index, marks, _rows=rows
    )


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


def _embed_marks(
    op: Operation, offsets: list[int], index: dict[SSAValue, int], sizes: list[int]
) -> list[tuple[int, int, int]]:
    """``op``'s operands as candidates to be produced inside its result at ``offsets``
    (the C++ planner decides which are safe), as (row, op's row, offset). A later concat
    reading the same tensor replaces the mark: only the last reader can be where the
    tensor dies. Only slots of the tensor's true size qualify: a widened slot would spill
    over the next operand's bytes."""
    into = index[op.results[0]]
    if sizes[into] != cast(TensorType, op.results[0].type).nbytes():
        return []
    return [
        (index[operand], into, offset)
        for operand, offset in zip(op.operands, offsets, strict=True)
        if sizes[index[operand]] == cast(TensorType, operand.type).nbytes()
    ]


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

    def max_alignment(self, alignment: int) -> int:
        """The largest ``slot_alignment`` among this plan's slots (1 when it has none):
        where the plan is placed inside another, its base must be a multiple of it."""
        a = self.graph.arrays
        sizes = a["size"][(self.offset >= 0) & (a["view_parent"] < 0) & (a["size"] > 0)]
        return max((slot_alignment(s, alignment) for s in sizes.tolist()), default=1)


SEARCH_STEPS_PER_PAIR = 64
"""The ``best`` placement searches at most this many steps per pair of buffers (within
the budget). Past that a small graph's search only walks a plateau: a scikit-learn
model's 37 buffers took 4 ms of hill climbing to end 4 bytes above the bound, with the
plan a hundredth of that search finds; the graphs that use the whole budget have a
thousand buffers and more."""


def plan_exported(g: TensorGraphArrays, opts: PlanOptions) -> TensorPlan:
    n = len(g.arrays["size"])
    budget = min(opts.budget, SEARCH_STEPS_PER_PAIR * n * n)
    out = _core.plan_tensors(g.core(), opts.core(budget))
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
    order, peaks = memory_schedule(export_graph(ops, outputs, opts), opts)
    return [ops[i] for i in order], peaks


def memory_schedule(g: TensorGraphArrays, opts: PlanOptions) -> tuple[list[int], dict[str, int]]:
    """``memory_order`` of an exported graph: its steps in the new order, and the peaks."""
    out = _core.schedule_memory(g.core(), opts.core())
    names = _core.SCHEDULE_CANDIDATES
    peaks = {names[i]: int(p) for i, p in enumerate(out["candidate_peaks"])}
    peaks["winner"] = int(out["winner"])
    return out["order"].tolist(), peaks


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
    """The ``lir.graph`` for ``graph`` with ``ops`` in schedule order and ``plan``'s slots.
    The ops move from ``graph`` into it: ``graph`` is left to be erased."""
    block = Block()
    mapping: dict[SSAValue, SSAValue] = {}
    add_planned_ops(block, ops, plan, mapping, 0, control_flow)
    outputs = graph_outputs(graph)
    block.add_op(lir.ReturnOp([mapping.get(v, v) for v in outputs]))
    inputs: list[str] = []
    params: list[str] = []
    for op in ops:
        kind = _kind(op)
        if kind == KIND_INPUT:
            inputs.append(op.tensor_name.data)  # type: ignore[attr-defined]
        elif kind == KIND_PARAM:
            params.append(op.tensor_name.data)  # type: ignore[attr-defined]
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
    """Move ``ops`` to ``block`` as ``plan`` places them, ``base`` bytes into the arena:
    views become ``lir.view``s of their root and control-flow ops are rebuilt, each
    taking over the uses of the op it replaces (``mapping`` maps a replaced op's results
    to the new ones, and grows); every other op moves as it is and carries its result
    slots (moving, not cloning: the graph they leave is erased)."""
    g = plan.graph
    slot_attrs: dict[tuple[int, int], lir.SlotAttr] = {}
    view_parent = g.arrays["view_parent"].tolist()
    offsets = plan.offset.tolist()
    sizes = g.arrays["size"].tolist()
    roots = plan.root.tolist()
    root_offsets = plan.root_offset.tolist()
    rows = g.rows

    def slot_of(row: int) -> lir.SlotAttr | None:
        """Tensor ``row``'s slot (None: not placed), each (offset, size) built once and
        shared: an in-place op's slot is its operand's, and building an attribute (its
        verification) is most of the cost of moving an op."""
        offset = offsets[row]
        if offset < 0:
            return None
        key = (base + offset, sizes[row])
        slot = slot_attrs.get(key)
        if slot is None:
            slot = slot_attrs[key] = lir.SlotAttr.of(*key)
        return slot

    add_op = block.add_op
    slot_key = lir.SLOT_ATTR
    for op in ops:
        results = op.results
        # results[0] without SSAValues.__getitem__ (a Python method)
        first = rows[id(_item(results, 0))] if results else -1
        if first >= 0 and view_parent[first] >= 0:
            root = g.tensors[roots[first]]
            assert root is not None
            result = results[0]
            view = lir.ViewOp(
                mapping.get(root, root), root_offsets[first], cast(TensorType, result.type)
            )
            view.location = op.location
            copy_name(result, view.results[0])
            add_op(view)
            _replace(result, view.results[0], mapping)
            continue
        if op.regions and isinstance(op, mir.ControlFlowOp):
            if control_flow is None:
                raise PlanningError(f"{op.name}: no planner for its regions")
            row = g.scratch_index.get(op)
            new = control_flow(op, mapping, base + (0 if row is None else offsets[row]))
            for old, fresh in zip(results, new.results, strict=True):
                _replace(old, fresh, mapping)
        else:
            if op.parent is None:
                op.detach()  # a top-level op: says so
            new = op
        if len(results) == 1:  # lir.set_result_slots of one slot
            slot = slot_of(first)
            if slot is None:
                new.attributes.pop(slot_key, None)
            else:
                new.attributes[slot_key] = slot
            if new is op:
                unlink_unchecked(op)
                append_unchecked(block, op)
            else:
                add_op(new)
        else:
            if new is op:
                op.detach()
            lir.set_result_slots(new, [slot_of(rows[id(result)]) for result in results])
            add_op(new)


def drop_unread_views(graph: Operation) -> None:
    """Erase the ``lir.view``s in ``graph`` (a built ``lir.graph``) that nothing reads.
    A view of a view reads their root directly (``add_planned_ops``), which leaves the
    inner view unread once the graph it was built from is erased (its old ops, the only
    readers, go with it)."""
    for region in graph.regions:
        for block in region.blocks:
            op = block._last_op  # following the links back (xDSL's iterator: calls per op)
            while op is not None:
                before = op._prev_op
                if type(op) is lir.ViewOp and op.results[0].first_use is None:
                    block.erase_op(op)
                elif op.regions:
                    drop_unread_views(op)
                op = before


def _replace(old: SSAValue, new: SSAValue, mapping: dict[SSAValue, SSAValue]) -> None:
    """``new`` takes over ``old``'s uses (those of the ops not moved yet included), as
    ``old.replace_all_uses_with(new)`` does: each use, in order, moves to the head of
    ``new``'s uses and its op reads ``new`` there (without an operand setter per use)."""
    if new is not old:
        use = old.first_use
        old.first_use = None
        while use is not None:
            after = use._next_use
            if after is not None:
                after._prev_use = None
            new.add_use(use)
            user, at = use._operation, use._index
            operands = list(user._operands)
            operands[at] = new
            user._operands = SSAValues(operands)
            use = after
        if new.name_hint is None:
            new.name_hint = old.name_hint
    mapping[old] = new


def plannable_ops(graph: Operation) -> list[Operation]:
    """The ops of a graph function in block order, without the terminator; PlanningError
    if one holds a region the planner cannot treat as one kernel or a sub-plan."""
    ops = ops_without_terminator(graph_block(graph))
    for op in ops:
        # An op whose region reads only its own arguments (an elementwise region) is one
        # kernel: its body's values live in registers, not in the arena. Control-flow ops'
        # regions are planned as sub-plans (``region_plan``).
        if op.regions and not (
            op.has_trait(IsolatedFromAbove) or isinstance(op, mir.ControlFlowOp)
        ):
            raise PlanningError(f"{op.name} holds a region: inline or lower it before planning")
    return ops
