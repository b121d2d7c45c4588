"""Passes, one per file. ``RLX_PASSES`` maps pipeline names to lazy pass factories."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _lower_hir_to_mir() -> type[ModulePass]:
    from rlx_compile.transforms.lower_hir_to_mir import LowerHirToMirPass

    return LowerHirToMirPass


RLX_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "lower-hir-to-mir": _lower_hir_to_mir,
}
