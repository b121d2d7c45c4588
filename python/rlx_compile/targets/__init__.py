"""Compilation targets, one file each; this registry is the single list of their names.

from rlx_compile.targets import get_target, TARGET_NAMES
wgpu = get_target("wgpu")
wgpu.is_legal(op), wgpu.claims, wgpu.limits, wgpu.patterns
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.passes import ModulePass

from rlx_compile.targets import cortex_m, cpu, cuda, metal, mlx, rocm, tpu, wgpu
from rlx_compile.targets.base import Target

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        cpu.TARGET,
        cuda.TARGET,
        rocm.TARGET,
        metal.TARGET,
        mlx.TARGET,
        wgpu.TARGET,
        tpu.TARGET,
        cortex_m.TARGET,
    )
}
TARGET_NAMES: tuple[str, ...] = tuple(TARGETS)


class UnknownTargetError(ValueError):
    pass


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise UnknownTargetError(
            f"unknown target '{name}' (known: {', '.join(TARGET_NAMES)})"
        ) from None


def resolve_target(target: str | Target, claims: Iterable[str] | None = None) -> Target:
    """A target by name (or as given), with its claim set replaced when ``claims`` is
    non-empty."""
    t = get_target(target) if isinstance(target, str) else target
    claim_list = list(claims or ())
    return t.with_claims(claim_list) if claim_list else t


@dataclass(frozen=True)
class TargetPass(ModulePass):
    """Options of the passes that work for a target: ``target`` names it; ``claims`` (MIR
    op names) replaces its claim set. Bad names fail when the pipeline is parsed."""

    target: str = "cpu"
    claims: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.resolved()

    def resolved(self) -> Target:
        return resolve_target(self.target, self.claims)


__all__ = [
    "TARGETS",
    "TARGET_NAMES",
    "Target",
    "TargetPass",
    "UnknownTargetError",
    "get_target",
    "resolve_target",
]
