"""``fuse{target=T}``: every fusion stage the target claims, in order, as one pass, and
the FusionReport of the whole run (what fused, and every near miss with its reason).

Options: ``target``; ``claims`` (MIR op names) replaces the target's claim set, as
``fusion_passes_for_supported`` does; ``regions`` = ``target`` (the target's policy),
``keep`` (mark elementwise regions) or ``unfuse``; ``skip`` names stages to leave out
(``skip=fuse-attention`` keeps exported attention as matmuls, which int8 quantisation
then quantises as onnxruntime's ``quantize_static`` does).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from rlx_compile.fusion import _select, fusion_pattern_types
from rlx_compile.fusion.base import fusion_context, scan, sharing_kinds
from rlx_compile.fusion.stage import FusionPass
from rlx_compile.targets import Target, TargetPass
from rlx_compile.transforms import RLX_PASSES
from rlx_compile.transforms.dce import DCEPass
from rlx_compile.transforms.mark_elementwise_regions import (
    MarkElementwiseRegion,
    MarkElementwiseRegionsPass,
)
from rlx_compile.transforms.unfuse_elementwise_regions import UnfuseElementwiseRegionsPass

REGION_STAGES = (MarkElementwiseRegionsPass, UnfuseElementwiseRegionsPass)
SHARING_STAGES = (FusionPass, UnfuseElementwiseRegionsPass, DCEPass)


@dataclass(frozen=True)
class _Plan:
    """What ``fuse`` runs for one set of options: the stages, the patterns whose near
    misses it reports (those of the skipped stages left out), and whether every stage
    keeps ``sharing_kinds`` up to date."""

    passes: tuple[ModulePass, ...]
    chains: tuple[type, ...]
    """Every pattern but the regions' (``fusion_pattern_types`` order)."""
    shared: bool


@lru_cache(maxsize=64)
def _plan(
    t: Target, target: str, claims: tuple[str, ...], regions: str, skip: tuple[str, ...]
) -> _Plan:
    """The plan of a ``fuse`` pass, made once per set of options (the pipeline makes a
    ``fuse`` pass per compile; its stages are frozen and hold nothing but the options)."""
    passes = tuple(_select(t, target, claims, regions, skip))
    # Skipped stages report no near misses either: leaving them out was the point.
    skipped = {p for name in skip for p in getattr(RLX_PASSES[name](), "PATTERNS", ())}
    kinds = [k for k in fusion_pattern_types() if k not in skipped]
    return _Plan(
        passes,
        tuple(k for k in kinds if k is not MarkElementwiseRegion),
        all(isinstance(p, SHARING_STAGES) for p in passes),
    )


@dataclass(frozen=True)
class FusePass(TargetPass):
    """Run the target's fusion stages and report what fused and what nearly did."""

    name = "fuse"

    regions: str = "target"
    skip: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.plan()  # bad targets, op names and modes fail when the pipeline is parsed

    def plan(self) -> _Plan:
        return _plan(
            self.resolved(), self.target, tuple(self.claims), self.regions, tuple(self.skip)
        )

    def passes(self) -> list[ModulePass]:
        return list(self.plan().passes)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plan = self.plan()
        # Stages that add ops only through run_patterns (dce only erases) keep what op
        # kinds the module holds up to date, so a stage with nothing to try skips its walk.
        with (
            fusion_context(self.resolved(), op) as (fctx, owner),
            sharing_kinds(op) if plan.shared else nullcontext(),
        ):
            scanned = False
            for p in plan.passes:
                if owner and not scanned and isinstance(p, REGION_STAGES):
                    # Near misses are looked for before regions absorb elementwise ops
                    # (a region would hide the silu * up of an unfused SwiGLU, say).
                    scan(op, fctx, plan.chains)
                    scanned = True
                if isinstance(p, FusionPass):
                    p.run(op, fctx)  # in this context: its target is the stage's
                else:
                    p.apply(ctx, op)
            if owner:
                if not scanned:
                    scan(op, fctx, plan.chains)
                scan(op, fctx, [MarkElementwiseRegion])
