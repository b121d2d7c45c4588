"""``dce``: remove ops whose results reach no graph output.

xDSL's region liveness does the work: an op is live when it has effects or a live user;
the graph's ``func.return`` keeps the outputs and their producers alive. Every mir op
except ``mir.input`` is ``Pure``, so unused computations, constants and params go (a
param nobody reads need not be fed), while inputs -- the graph's signature -- and calls
(which are not known to be pure) stay. Nested ``hir.region`` bodies are cleaned too.
Planned ``lir.graph``s are left alone: their IO manifest names their leaves. A graph
whose regions hold one block each takes one backward sweep instead
(``rlx_compile.dead_code``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce

from rlx_compile.dead_code import dce_single_blocks
from rlx_compile.diagnostics import change_listener
from rlx_compile.ir import func_graphs


@dataclass(frozen=True)
class DCEPass(ModulePass):
    """Remove ops that no graph output depends on (inputs and calls stay)."""

    name = "dce"
    REPORTS_CHANGES: ClassVar[bool] = True
    PURE: ClassVar[bool] = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        listener = change_listener()
        for graph in func_graphs(op):
            if not dce_single_blocks(graph.body, listener):
                region_dce(graph.body, listener)
