"""``cse``: common subexpression elimination over every graph function
(``rlx_compile.common_subexpressions``: which ops merge). Planned ``lir.graph``s are left
alone: their ops carry arena slots.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from rlx_compile.common_subexpressions import cse_block
from rlx_compile.diagnostics import note_block_changed
from rlx_compile.ir import func_graphs


@dataclass(frozen=True)
class CSEPass(ModulePass):
    """Merge ops computing the same value (same op, operands in order, equal attributes)."""

    name = "cse"
    REPORTS_CHANGES: ClassVar[bool] = True
    PURE: ClassVar[bool] = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in func_graphs(op):
            if cse_block(graph.body.block):
                note_block_changed(graph.body.block)
