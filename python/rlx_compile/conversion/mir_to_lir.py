"""``plan-memory``: MIR -> LIR. Liveness, views, in-place reuse and arena placement run in
the C++ core; the result is a ``lir.graph`` whose ops carry their arena slots.

    plan-memory{alignment=64 strategy=best inplace=true concat-inplace=true schedule=source
                width=native dim-ranges="seq=1..512"}

With ``dim-ranges`` the graph keeps its symbolic dims and is planned once for every size
in the ranges (a range plan, see ``dialects.lir``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlx_compile.diagnostics import OpPassFailure
from rlx_compile.dialects.construct import clone_op, walk_list
from rlx_compile.ir import func_graphs, graph_block, graph_outputs
from rlx_compile.memory.graph_plan import (
    PlanningError,
    PlanOptions,
    build_lir,
    drop_unread_views,
    export_graph,
    memory_schedule,
    plannable_ops,
)
from rlx_compile.memory.placement import DEFAULT_BUDGET
from rlx_compile.memory.region_plan import (
    BlockPlan,
    UnplannableError,
    build_control_flow,
    check_plannable,
    hoist_region_constants,
    plan_block,
)
from rlx_compile.memory.report import memory_report
from rlx_compile.transforms.rematerialize import may_rematerialize, rematerialize_block
from rlx_compile.transforms.specialize_dims import parse_ranges

SCHEDULES = ("source", "memory")

_OPTIONS: dict[tuple[object, ...], PlanOptions] = {}
"""The planner options of each pass configuration, made once (they are immutable)."""


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Plan every graph function's memory into one arena and lower it to a lir.graph."""

    name = "plan-memory"

    alignment: int = 64
    """The largest slot alignment: each slot's offset is a multiple of its size's natural
    alignment (the largest power of two dividing it), up to this."""
    strategy: str = "best"
    """Placement: rlx, best-fit, greedy-conflicts, greedy-breadth, greedy-lifetime, best."""
    inplace: bool = True
    """Let elementwise ops write over a same-size operand that dies at them."""
    concat_inplace: bool = True
    """Produce a concat's operands inside its slot, each at its offset, when they die at the
    concat and its dims before the axis are 1 (where that keeps the peak): the concat then
    copies nothing."""
    schedule: str = "source"
    """``source`` keeps the op order; ``memory`` reorders ops to lower the peak first."""
    pin_outputs: bool = False
    """Keep every ancestor of an output alive to the end (for out-of-order executors)."""
    reuse_inputs: bool = False
    """Reuse an input's slot after its last read (every run loads the inputs afresh)."""
    allocate_inputs: bool = True
    allocate_params: bool = True
    allocate_constants: bool = True
    width: str = "native"
    """Slot sizes: native, f32-uniform or hybrid."""
    budget: int = DEFAULT_BUDGET
    """Work budget of the ``best`` strategy, in steps (deterministic, unlike seconds)."""
    report: bool = False
    """Print the memory report of every planned graph to stderr."""
    dim_ranges: str = ""
    """``seq=1..512,batch=1..8``: plan symbolic dims for every size in these ranges."""
    rematerialize: bool = False
    """Also plan a copy of the graph that the ``rematerialize`` pass has changed and keep
    it where its arena is smaller: that pass weighs the source-order peak, which in-place
    reuse, views and the schedule can turn either way."""

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"unknown schedule '{self.schedule}' (use source or memory)")
        self.options()  # validates the remaining options at pipeline-parse time

    def options(self) -> PlanOptions:
        key = (
            self.alignment, self.strategy, self.budget, self.inplace, self.concat_inplace,
            self.pin_outputs, self.reuse_inputs, self.allocate_inputs, self.allocate_params,
            self.allocate_constants, self.width, self.dim_ranges,
        )  # fmt: skip
        opts = _OPTIONS.get(key)
        if opts is None:
            opts = PlanOptions(
                alignment=self.alignment, strategy=self.strategy, budget=self.budget,
                inplace=self.inplace, concat_inplace=self.concat_inplace,
                pin_output_ancestors=self.pin_outputs,
                reuse_inputs=self.reuse_inputs,
                allocate_inputs=self.allocate_inputs, allocate_params=self.allocate_params,
                allocate_constants=self.allocate_constants, width=self.width,
                dim_ranges=tuple(
                    (k, lo, hi) for k, (lo, hi) in parse_ranges(self.dim_ranges).items()
                ),
            )  # fmt: skip
            if len(_OPTIONS) >= 256:
                _OPTIONS.clear()
            _OPTIONS[key] = opts
        return opts

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        opts = self.options()
        graphs = func_graphs(op)
        if any(o.name == "func.call" for g in graphs for o in walk_list(g)):
            raise PassFailedException("plan-memory: inline called graphs first (func.call found)")
        for graph in graphs:
            try:
                check_plannable(graph, opts.ranges)
                hoist_region_constants(graph)
                top = self._plan(graph, opts)
                if self.rematerialize:
                    graph, top = self._rematerialized(graph, top, opts)
            except UnplannableError as err:
                raise OpPassFailure(f"plan-memory: @{graph.sym_name.data}: {err}", err.op) from None
            except (PlanningError, ValueError) as err:
                raise PassFailedException(f"plan-memory: @{graph.sym_name.data}: {err}") from None
            planned = build_lir(graph, top.ops, top.plan, opts, build_control_flow(top.layouts))
            planned.location = graph.location
            op.body.block.insert_op_before(planned, graph)
            graph.detach()
            graph.erase(safe_erase=False)
            drop_unread_views(planned)
            if self.report:
                sys.stderr.write(memory_report(planned).render() + "\n")

    def _plan(self, graph: func.FuncOp, opts: PlanOptions) -> BlockPlan:
        ops = plannable_ops(graph)
        outputs = graph_outputs(graph)
        exported = None
        if self.schedule == "memory":
            exported = export_graph(ops, outputs, opts)
            order, _ = memory_schedule(exported, opts)
            if order != list(range(len(ops))):  # else the arrays are these
                ops = [ops[i] for i in order]
                # The scheduled graph's arrays, without exporting its ops again.
                exported = exported.reordered(order)
        return plan_block(ops, outputs, opts, exported=exported)

    def _rematerialized(
        self, graph: func.FuncOp, top: BlockPlan, opts: PlanOptions
    ) -> tuple[func.FuncOp, BlockPlan]:
        """``graph`` rematerialized, with its plan, in its place where that plans smaller;
        else ``graph`` and ``top`` as they were."""
        if not may_rematerialize(graph_block(graph), graph_outputs(graph)):
            return graph, top
        twin = clone_op(graph)
        if not rematerialize_block(graph_block(twin), graph_outputs(twin)):
            return graph, top
        other = self._plan(twin, opts)
        if other.plan.arena_size >= top.plan.arena_size:
            return graph, top
        block = graph.parent_block()
        assert block is not None
        block.insert_op_before(twin, graph)
        graph.detach()
        graph.erase(safe_erase=False)
        return twin, other
