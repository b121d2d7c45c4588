"""``unfuse-elementwise-regions``: every ``mir.elementwise_region`` back to its body's ops,
in place (for targets that run elementwise ops one kernel at a time)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from rlx_compile.fusion.base import run_patterns
from rlx_compile.legalization.patterns import UnfuseElementwiseRegion


@dataclass(frozen=True)
class UnfuseElementwiseRegionsPass(ModulePass):
    """Inline every mir.elementwise_region's body in place of the region."""

    name = "unfuse-elementwise-regions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_patterns(op, [UnfuseElementwiseRegion()], reverse=False)
