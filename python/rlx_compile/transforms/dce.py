"""``dce``: remove ops whose results reach no graph output.

xDSL's region liveness does the work: an op is live when it has effects or a live user;
the graph's ``func.return`` keeps the outputs and their producers alive. Every mir op
except ``mir.input`` is ``Pure``, so unused computations, constants and params go (a
param nobody reads need not be fed), while inputs -- the graph's signature -- and calls
(which are not known to be pure) stay. Nested ``hir.region`` bodies are cleaned too.
Planned ``lir.graph``s are left alone: their IO manifest names their leaves.

A graph whose block holds no regions takes one backward sweep: every user of an op comes
after it in the block, so its liveness is known when the op is reached. That is the
fixpoint region liveness reaches, without its second confirming sweep or the effects
query for ops a live op reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.transforms.dead_code_elimination import region_dce, would_be_trivially_dead

from rlx_compile.diagnostics import change_listener
from rlx_compile.ir import func_graphs


@dataclass(frozen=True)
class DCEPass(ModulePass):
    """Remove ops that no graph output depends on (inputs and calls stay)."""

    name = "dce"
    REPORTS_CHANGES: ClassVar[bool] = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        listener = change_listener()
        for graph in func_graphs(op):
            if not dce_flat_region(graph.body, listener):
                region_dce(graph.body, listener)


def dce_flat_region(region: Region, listener: PatternRewriterListener) -> bool:
    """``region_dce`` for a region of one block without nested regions (erasing the same
    ops in the same order, each reported to ``listener``); False, untouched, for any other
    region."""
    block = region.block if len(region.blocks) == 1 else None
    if block is None or any(op.regions for op in block.ops):
        return False
    live: set[Operation] = set()
    dead: list[Operation] = []
    for op in reversed(block.ops):
        if any(use.operation in live for r in op.results for use in r.uses) or (
            not would_be_trivially_dead(op)
        ):
            live.add(op)
        else:
            dead.append(op)
    for op in dead:  # users before the values they read, as region_dce erases
        listener.handle_operation_removal(op)
        block.erase_op(op, safe_erase=False)
    return True
