"""Memory planning: liveness and arena placement (the C++ core; its Python twins, the
tests' references, are in ``rlx_compile.testing.twins``)."""

from rlx_compile.memory.interval_check import check_interval_plan
from rlx_compile.memory.liveness import liveness_intervals
from rlx_compile.memory.placement import (
    DEFAULT_BUDGET,
    PORTFOLIO_LIMIT,
    STRATEGIES,
    peak_live_bytes,
    plan_intervals,
    plan_intervals_info,
    slot_alignment,
)

__all__ = [
    "DEFAULT_BUDGET",
    "PORTFOLIO_LIMIT",
    "STRATEGIES",
    "check_interval_plan",
    "liveness_intervals",
    "peak_live_bytes",
    "plan_intervals",
    "plan_intervals_info",
    "slot_alignment",
]
