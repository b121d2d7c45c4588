"""Op sharding: decompose one op, price the bytes it moves, choose where to run it.

    from rlx_compile.shard import choose, shardings, LinkCost, Residency, WorkerCost

    options = shardings(module, op, 4)                   # ways to cut it
    pick = choose(options, workers, link, Residency(shared_resident=True), local_rate)

- ``shardings`` (``options``): every legal cut into n independent pieces, with its
  ranges (checked contiguous, disjoint, covering), sliced/shared/output bytes and
  whether it is expected bit-identical;
- ``choose`` / ``decide`` (``cost``): the slowest piece's compute plus the transfer
  against running whole, searched in the C++ core (its Python twin is in
  ``rlx_compile.testing.twins``);
- ``plan_module`` / ``annotate`` (``plan``) and the ``shard`` pass: one decision per op;
- ``run_option`` (``pieces``): every piece run on only its slice, recombined;
- ``run_on_dask``, ``calibrate_workers``, ``calibrate_link`` (``on_dask``): the same on
  Dask distributed workers, with predicted vs measured times in the report.

The module performs no graph surgery: an option names operands, axes and ranges, and
the caller ships the slices (or emits narrows and a concat).
"""

from rlx_compile.shard.cost import (
    CostCalibration,
    Decision,
    LinkCost,
    Residency,
    ShardChoice,
    WorkerConfig,
    WorkerCost,
    choose,
    decide,
    decide_many,
)
from rlx_compile.shard.options import (
    Cut,
    OperandSlice,
    ShardError,
    ShardOption,
    SharedOperand,
    check_ranges,
    even_ranges,
    flops_per_output_elem,
    shardings,
)
from rlx_compile.shard.pieces import piece_args, piece_module, run_option
from rlx_compile.shard.plan import OpPlan, ShardPlan, annotate, plan_module
from rlx_compile.shard.report import OpRun, ShardReport, ShardRow


def __getattr__(name: str) -> object:
    # The Dask executor imports lazily: `distributed` is only needed to run on a cluster.
    if name in _DASK_NAMES:
        from rlx_compile.shard import on_dask

        return getattr(on_dask, name)
    raise AttributeError(f"module 'rlx_compile.shard' has no attribute {name!r}")


_DASK_NAMES = (
    "PROBE_WAIT_S",
    "DaskRun",
    "ShardExecutionError",
    "calibrate_link",
    "calibrate_workers",
    "measure_local_rate",
    "run_on_dask",
    "unresponsive_workers",
    "worker_addresses",
)

__all__ = [
    "PROBE_WAIT_S",
    "CostCalibration",
    "Cut",
    "DaskRun",
    "Decision",
    "LinkCost",
    "OpPlan",
    "OpRun",
    "OperandSlice",
    "Residency",
    "ShardChoice",
    "ShardError",
    "ShardExecutionError",
    "ShardOption",
    "ShardPlan",
    "ShardReport",
    "ShardRow",
    "SharedOperand",
    "WorkerConfig",
    "WorkerCost",
    "annotate",
    "calibrate_link",
    "calibrate_workers",
    "check_ranges",
    "choose",
    "decide",
    "decide_many",
    "even_ranges",
    "flops_per_output_elem",
    "measure_local_rate",
    "piece_args",
    "piece_module",
    "plan_module",
    "run_on_dask",
    "run_option",
    "shardings",
    "unresponsive_workers",
    "worker_addresses",
]
