"""``schedule-memory``: reorder each graph's ops, within their dependencies, to lower the
peak of live bytes. The C++ core tries the source order, depth-first orders that finish
one branch before the next and a greedy list schedule, and keeps the lowest peak (the
source order on ties), measured with the same views, in-place and concat-in-place rules
as plan-memory.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlx_compile.ir import func_graphs, graph_block, graph_outputs
from rlx_compile.memory.graph_plan import PlanningError, PlanOptions, memory_order, plannable_ops


@dataclass(frozen=True)
class ScheduleMemoryPass(ModulePass):
    """Reorder ops to lower the peak of live bytes (leaves first, source order on ties)."""

    name = "schedule-memory"

    inplace: bool = True
    concat_inplace: bool = True
    alignment: int = 64
    """The plan's alignment: a concat operand embeds only at an aligned offset."""
    width: str = "native"
    report: bool = False
    """Print the peak of every candidate order to stderr."""

    def __post_init__(self) -> None:
        self.options()  # validates the options at pipeline-parse time

    def options(self) -> PlanOptions:
        return PlanOptions(
            inplace=self.inplace, concat_inplace=self.concat_inplace, alignment=self.alignment,
            width=self.width,
        )  # fmt: skip

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        opts = self.options()
        for graph in func_graphs(op):
            try:
                ops = plannable_ops(graph)
                order, peaks = memory_order(ops, graph_outputs(graph), opts)
            except PlanningError as err:
                raise PassFailedException(
                    f"schedule-memory: @{graph.sym_name.data}: {err}"
                ) from None
            block = graph_block(graph)
            terminator = block.last_op
            assert terminator is not None
            for o in order:
                o.detach()
                block.insert_op_before(o, terminator)
            if self.report:
                shown = ", ".join(f"{k} {v}" for k, v in peaks.items() if k != "winner")
                sys.stderr.write(f"schedule-memory @{graph.sym_name.data}: peak bytes {shown}\n")
