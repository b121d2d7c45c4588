"""``plan-check``: prove every lir.graph's memory plan safe with the independent checker;
any program-safety finding fails the pass and names the tensors involved."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlx_compile.dialects import lir
from rlx_compile.memory.plan_check import check_plan


@dataclass(frozen=True)
class PlanCheckPass(ModulePass):
    """Re-derive lifetimes from the LIR and fail on any unsafe sharing of arena bytes."""

    name = "plan-check"

    report: bool = False
    """Print the check report of every graph to stderr, clean or not."""

    REPORTS_CHANGES: ClassVar[bool] = True
    CHANGES_NOTHING: ClassVar[bool] = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in [g for g in op.ops if isinstance(g, lir.GraphOp)]:
            result = check_plan(graph)
            if self.report:
                sys.stderr.write(result.render() + "\n")
            if result.findings:
                first = result.findings[0]
                raise PassFailedException(
                    f"@{result.graph}: {len(result.findings)} finding(s), first "
                    f"[{first.kind}] {first.node}"
                    + (f" vs {first.other}" if first.other else "")
                    + f": {first.detail}"
                )
