"""Memory planning: liveness and arena placement (C++ core with Python twins)."""

from rlx_compile.memory.interval_check import check_interval_plan
from rlx_compile.memory.liveness import liveness_intervals, liveness_intervals_py
from rlx_compile.memory.placement import (
    DEFAULT_BUDGET,
    PORTFOLIO_LIMIT,
    STRATEGIES,
    peak_live_bytes,
    plan_intervals,
    plan_intervals_info,
    plan_intervals_py,
)

__all__ = [
    "DEFAULT_BUDGET",
    "PORTFOLIO_LIMIT",
    "STRATEGIES",
    "check_interval_plan",
    "liveness_intervals",
    "liveness_intervals_py",
    "peak_live_bytes",
    "plan_intervals",
    "plan_intervals_info",
    "plan_intervals_py",
]
