"""Legalization: per-target conversion patterns, the driver that applies them, and the
kernel dispatch report.

This is MIR -> MIR target legalization (MLIR's ``ConversionTarget`` + patterns applied
within one dialect), not a dialect conversion: those live in ``rlx_compile.conversion``
(``XToY`` in MLIR's sense). It is a library beside ``fusion/``, as the fusion machinery
is: the pass that drives it is ``transforms/legalize.py``.

    module, report = prepare_graph_for_backend_with_report(module, "wgpu")
    print(report)            # native / common-ir / rewritten / unsupported per op kind
    assert report.compile_ready
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp

from rlx_compile.legalization.dispatch import (
    DispatchPolicy,
    KernelDispatchReport,
    parse_policy,
    resolve_policy,
)
from rlx_compile.legalization.driver import MAX_ROUNDS, convert

if TYPE_CHECKING:
    from rlx_compile.targets.base import Target


def prepare_graph_for_backend_with_report(
    module: ModuleOp,
    target: str | Target,
    *,
    claims: Iterable[str] | None = None,
    policy: str | DispatchPolicy | None = None,
) -> tuple[ModuleOp, KernelDispatchReport]:
    """Legalize a copy of ``module`` for ``target`` the way compilation does (``claims``
    replaces the target's claim set); return the copy and its dispatch report. Illegal
    leftovers do not raise here: ``report.compile_ready`` is False and the report lists
    them."""
    from rlx_compile.targets import resolve_target  # targets import the patterns of this package

    t = resolve_target(target, claims)
    p = policy if isinstance(policy, DispatchPolicy) else resolve_policy(policy)
    work = module.clone()
    return work, convert(work, t, p)


__all__ = [
    "MAX_ROUNDS",
    "DispatchPolicy",
    "KernelDispatchReport",
    "convert",
    "parse_policy",
    "prepare_graph_for_backend_with_report",
    "resolve_policy",
]
