"""Memory planning: liveness and arena placement (C++ core with Python twins)."""

from rlx_compile.memory.liveness import liveness_intervals, liveness_intervals_py

__all__ = ["liveness_intervals", "liveness_intervals_py"]
