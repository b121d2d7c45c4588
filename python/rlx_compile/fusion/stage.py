"""The base of the fusion passes: one fusion stage, with its target, claims and
patterns (``rlx_compile.fusion.base``: the patterns' driver and the fusion context).

A module of its own: the build compiles ``fusion.base`` with mypyc
(``rlx_compile._compiled``), which a pass class cannot be part of.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.fusion.base import (
    FusionContext,
    FusionPattern,
    findable,
    fusion_context,
    run_patterns,
    scan,
)
from rlx_compile.targets import TargetPass


@dataclass(frozen=True)
class FusionPass(TargetPass):
    """One fusion stage. ``target`` picks the claim set and fused-kernel limits;
    ``claims`` (MIR op names) replaces the claim set."""

    PATTERNS: ClassVar[tuple[type[FusionPattern], ...]] = ()
    WALK_REVERSE: ClassVar[bool] = False

    def patterns(self, ctx: FusionContext) -> list[FusionPattern]:
        return [p(ctx) for p in self.PATTERNS]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with fusion_context(self.resolved(), op) as (fctx, owner):
            if not owner:
                self.run(op, fctx)
                return
            run_patterns(op, self.patterns(fctx), self.WALK_REVERSE)
            scan(op, fctx, self.PATTERNS)

    def run(self, module: ModuleOp, fctx: FusionContext) -> None:
        """The stage within an active fusion context, whose owner scans for near misses
        (``fuse`` runs its stages so, without a context entered per stage)."""
        if findable(module, self.PATTERNS):  # else run_patterns finds no op to try
            run_patterns(module, self.patterns(fctx), self.WALK_REVERSE)
