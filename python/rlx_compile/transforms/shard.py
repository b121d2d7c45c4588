"""``shard``: decide, for every op shard can cut, whether to split it across workers and
how, and annotate the op with the decision (``rlx.shard``); no graph surgery.

    shard{workers=4 pieces=0 worker-rate=1e10 local-rate=1e10 bandwidth=1e8
          latency=1e-3 resident=false calibration=arch-default report=false}

- ``workers``: identical workers, each ``worker-rate`` multiply-adds per second;
  ``pieces``: cuts per op (0 = one per worker);
- ``local-rate``: multiply-adds per second of the device that otherwise runs the op;
- ``bandwidth`` (bytes/s) and ``latency`` (s): the link, alpha-beta; the default bandwidth is
  Dask's scheduler default (100 MB/s);
- ``resident``: shared operands (weights) already live on every worker;
- ``calibration``: measured, arch-default or uncalibrated; uncalibrated workers are
  never ranked, so nothing is split (the report says so);
- ``report``: print the shard report (``rlx_compile.shard.report``) to stderr.

Every op is annotated ``"<cut> axis <a> [<start>:<end>, ...] workers [<w>, ...]"`` or
``"none"``; the decisions come from one C++ search over the whole module.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from rlx_compile.shard.cost import CostCalibration, LinkCost, Residency, WorkerCost
from rlx_compile.shard.plan import annotate, plan_module

Number = float | int | str


def _number(value: Number, name: str, *, minimum: float, strict: bool) -> float:
    """A numeric option; pipelines spell ``1e9`` as a bare word, so strings are parsed."""
    try:
        x = float(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a number") from None
    ok = (x > minimum if strict else x >= minimum) and math.isfinite(x)
    if not ok:
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        raise ValueError(f"{name}={value} must be finite and {bound}")
    return x


@dataclass(frozen=True)
class ShardPass(ModulePass):
    """Annotate every cuttable op with its shard decision."""

    name = "shard"

    workers: int = 2
    pieces: int = 0
    worker_rate: Number = 1.0e10
    local_rate: Number = 1.0e10
    bandwidth: Number = 1.0e8
    latency: Number = 1.0e-3
    resident: bool = False
    calibration: str = "arch-default"
    report: bool = False

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"workers={self.workers} must be at least 1")
        if self.pieces != 0 and not 2 <= self.pieces <= self.workers:
            raise ValueError(f"pieces={self.pieces} must be 0 (one per worker) or in 2..workers")
        if self.calibration not in tuple(CostCalibration):
            known = ", ".join(c.value for c in CostCalibration)
            raise ValueError(f"unknown calibration '{self.calibration}' (use {known})")
        self._numbers()

    def _numbers(self) -> tuple[float, float, float, float]:
        return (
            _number(self.worker_rate, "worker-rate", minimum=0, strict=True),
            _number(self.local_rate, "local-rate", minimum=0, strict=True),
            _number(self.bandwidth, "bandwidth", minimum=0, strict=True),
            _number(self.latency, "latency", minimum=0, strict=False),
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        worker_rate, local_rate, bandwidth, latency = self._numbers()
        calibration = CostCalibration(self.calibration)
        workers = [WorkerCost(worker_rate, calibration, f"w{i}") for i in range(self.workers)]
        plan = plan_module(
            op, workers, LinkCost(bandwidth, latency), Residency(self.resident), local_rate,
            pieces=self.pieces or max(self.workers, 2),
        )  # fmt: skip
        annotate(plan)
        if self.report:
            sys.stderr.write(plan.report().render() + "\n")
