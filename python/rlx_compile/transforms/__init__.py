"""Passes, one per file. ``RLX_PASSES`` maps pipeline names to lazy pass factories."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _lower_hir_to_mir() -> type[ModulePass]:
    from rlx_compile.transforms.lower_hir_to_mir import LowerHirToMirPass

    return LowerHirToMirPass


def _plan_memory() -> type[ModulePass]:
    from rlx_compile.transforms.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def _schedule_memory() -> type[ModulePass]:
    from rlx_compile.transforms.schedule_memory import ScheduleMemoryPass

    return ScheduleMemoryPass


def _plan_check() -> type[ModulePass]:
    from rlx_compile.transforms.plan_check import PlanCheckPass

    return PlanCheckPass


def _specialize_dims() -> type[ModulePass]:
    from rlx_compile.transforms.specialize_dims import SpecializeDimsPass

    return SpecializeDimsPass


def _shard() -> type[ModulePass]:
    from rlx_compile.transforms.shard import ShardPass

    return ShardPass


def _quant_insert() -> type[ModulePass]:
    from rlx_compile.transforms.quant_insert import QuantInsertPass

    return QuantInsertPass


def _quant_propagate() -> type[ModulePass]:
    from rlx_compile.transforms.quant_propagate import QuantPropagatePass

    return QuantPropagatePass


def _scaled_quant_insert() -> type[ModulePass]:
    from rlx_compile.transforms.scaled_quant_insert import ScaledQuantInsertPass

    return ScaledQuantInsertPass


def _auto_mixed_precision() -> type[ModulePass]:
    from rlx_compile.transforms.auto_mixed_precision import AutoMixedPrecisionPass

    return AutoMixedPrecisionPass


RLX_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "lower-hir-to-mir": _lower_hir_to_mir,
    "plan-memory": _plan_memory,
    "plan-check": _plan_check,
    "schedule-memory": _schedule_memory,
    "shard": _shard,
    "specialize-dims": _specialize_dims,
    "auto-mixed-precision": _auto_mixed_precision,
    "quant-insert": _quant_insert,
    "quant-propagate": _quant_propagate,
    "scaled-quant-insert": _scaled_quant_insert,
}
