"""Pricing shard options and choosing where to run them.

The cost model (times in seconds; rates in output elements per second):

- a piece of ``e`` output elements on a worker of rate ``r`` takes ``e / r``; the pieces
  run in parallel, so the compute time is the slowest piece's;
- bytes moved = every sliced operand once in total (each slice goes to one worker)
  + the output once (gathered back) + every shared operand once per worker, unless
  ``Residency(shared_resident=True)`` says the workers already hold it;
- the link is one alpha-beta hop shared by all transfers (the local device sends every byte):
  transfer = bytes / bandwidth + latency, latency charged once per sharded run;
- a split costs compute + transfer and is taken only when strictly faster than the
  whole op run locally, ``out_elems / local_rate``; ties between options keep the
  earlier one (shardings lists exact cuts first).

Workers are matched to pieces largest piece to fastest worker (ties by index), which
minimises the slowest piece's time over all assignments of pieces to distinct workers
(swapping any inverted pair never increases the maximum). Workers whose calibration is
not rankable are excluded and reported; the remaining must be at least as many as the
pieces. The search runs in the C++ core (``_core.shard_search``); ``decide_py`` in
``rlx_compile.testing.twins`` is its pure-Python twin and must agree with it exactly,
floats included.

With ``op_costs`` (batch API, the ``shard`` pass) rates are in work units per second and
op ``j``'s elements cost ``op_costs[j]`` units each (multiply-adds per output element).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.utils.str_enum import StrEnum

from rlx_compile import _core
from rlx_compile.shard.options import ShardError, ShardOption

MAX_PIECES: int = int(_core.SHARD_MAX_PIECES)


class CostCalibration(StrEnum):
    """Where a cost model's numbers come from."""

    MEASURED = "measured"  # benchmarked on this machine: comparisons are meaningful
    ARCH_DEFAULT = "arch-default"  # per-architecture defaults: indicative
    UNCALIBRATED = "uncalibrated"  # a placeholder: must not be used to rank

    def is_rankable(self) -> bool:
        return self is not CostCalibration.UNCALIBRATED


def _positive(value: float, what: str, *, allow_inf: bool = False) -> None:
    if not (value > 0 and (allow_inf or math.isfinite(value))):
        raise ShardError(f"{what} must be {'> 0' if allow_inf else 'finite and > 0'}, got {value}")


@dataclass(frozen=True)
class LinkCost:
    """One hop between the local device and a worker: alpha (latency) and 1/beta (bandwidth)."""

    bytes_per_sec: float
    latency_s: float = 0.0

    def __post_init__(self) -> None:
        _positive(self.bytes_per_sec, "LinkCost.bytes_per_sec", allow_inf=True)
        if not (self.latency_s >= 0 and math.isfinite(self.latency_s)):
            raise ShardError(f"LinkCost.latency_s must be finite and >= 0, got {self.latency_s}")


@dataclass(frozen=True)
class WorkerCost:
    """A worker's speed for the op at hand and how far that number can be trusted.
    ``name`` identifies the worker to an executor (a Dask worker address)."""

    rate: float
    calibration: CostCalibration = CostCalibration.MEASURED
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "calibration", CostCalibration(self.calibration))
        if self.calibration.is_rankable():
            _positive(self.rate, f"WorkerCost.rate of {self.name or 'a worker'}")


@dataclass(frozen=True)
class Residency:
    """``shared_resident``: the shared operands (typically weights) already live on every
    worker, as in data-parallel serving, so they cost no transfer."""

    shared_resident: bool = False


@dataclass(frozen=True)
class ShardChoice:
    """A split that beats running the op whole: piece ``i`` runs on
    ``workers[assignment[i]]`` of the list given to ``choose``."""

    option: ShardOption
    assignment: tuple[int, ...]
    worker_names: tuple[str, ...]
    piece_compute_s: tuple[float, ...]
    compute_s: float
    transfer_s: float
    total_s: float
    local_s: float
    bytes_moved: int
    resident: bool
    excluded: tuple[int, ...] = ()

    @property
    def speedup(self) -> float:
        return self.local_s / self.total_s if self.total_s > 0 else math.inf


@dataclass(frozen=True)
class Decision:
    """What ``choose`` decided and why: ``choice`` is None when the op stays whole."""

    choice: ShardChoice | None
    local_s: float | None  # None when there was no option (nothing to time)
    excluded: tuple[int, ...]  # workers left out: their calibration is not rankable
    reason: str


@dataclass(frozen=True)
class WorkerConfig:
    """One setting for the batch search: workers, link, residency and local speed."""

    workers: tuple[WorkerCost, ...]
    link: LinkCost
    residency: Residency = field(default_factory=Residency)
    local_rate: float = 1.0

    excluded: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """Workers whose calibration is not rankable (derived)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "workers", tuple(self.workers))
        _positive(self.local_rate, "local_rate")
        excluded = tuple(i for i, w in enumerate(self.workers) if not w.calibration.is_rankable())
        object.__setattr__(self, "excluded", excluded)


# ---------------------------------------------------------------------------------
# Shared pieces of both implementations (the Python twin, rlx_compile.testing.twins,
# uses them too)
# ---------------------------------------------------------------------------------


def option_bytes_moved(option: ShardOption, resident: bool) -> int:
    shared = 0 if resident else option.shared_in_bytes * option.n
    return option.sliced_in_bytes + option.out_bytes + shared


def check_same_op(options: Sequence[ShardOption]) -> None:
    if not options:
        return
    first = options[0]
    for o in options:
        if (o.graph, o.index, o.out_elems) != (first.graph, first.index, first.out_elems):
            raise ShardError(
                f"options of one choice must cut the same op: {o.label} vs {first.label}"
            )
        if o.n > MAX_PIECES:
            raise ShardError(f"{o.label}: {o.n} pieces exceed the limit of {MAX_PIECES}")


def finish_decision(
    options: Sequence[ShardOption],
    config: WorkerConfig,
    best: int,
    assignment: Sequence[int],
    compute: float,
    transfer: float,
    total: float,
    local: float | None,
    op_cost: float,
) -> Decision:
    """Build the Decision (and its reason) from a search result; shared by the C++ path
    and the twin so that both report identically."""
    workers = config.workers
    excluded = config.excluded
    rankable = len(workers) - len(excluded)
    if not options:
        return Decision(None, None, excluded, "no way to cut this op")
    if not workers:
        return Decision(None, local, excluded, "no workers")
    if rankable == 0:
        return Decision(None, local, excluded, "no worker has a rankable cost model")
    if best < 0:
        if min(o.n for o in options) > rankable:
            reason = f"{rankable} rankable worker(s), fewer than any option's pieces"
        else:
            reason = "running whole is fastest"
        return Decision(None, local, excluded, reason)
    assert local is not None
    opt = options[best]
    piece_s = tuple(
        float(e) * op_cost / workers[w].rate
        for e, w in zip(opt.piece_out_elems, assignment, strict=True)
    )
    resident = config.residency.shared_resident
    choice = ShardChoice(
        option=opt, assignment=tuple(assignment),
        worker_names=tuple(workers[w].name for w in assignment), piece_compute_s=piece_s,
        compute_s=compute, transfer_s=transfer, total_s=total, local_s=local,
        bytes_moved=option_bytes_moved(opt, resident), resident=resident, excluded=excluded,
    )  # fmt: skip
    return Decision(choice, local, excluded, "the split beats running whole")


# ---------------------------------------------------------------------------------
# The C++ search
# ---------------------------------------------------------------------------------


def resolve_op_costs(
    ops: Sequence[Sequence[ShardOption]], op_costs: Sequence[float] | None
) -> list[float]:
    if op_costs is None:
        return [1.0] * len(ops)
    if len(op_costs) != len(ops):
        raise ShardError(f"op_costs has {len(op_costs)} entries for {len(ops)} ops")
    costs = [float(c) for c in op_costs]
    for j, c in enumerate(costs):
        _positive(c, f"op_costs[{j}]")
    return costs


@dataclass(frozen=True)
class PackedOptions:
    """Options of many ops as the flat arrays ``_core.shard_search`` reads."""

    op_offsets: np.ndarray
    piece_offsets: np.ndarray
    piece_elems: np.ndarray
    sliced_bytes: np.ndarray
    shared_bytes: np.ndarray
    out_bytes: np.ndarray
    op_costs: np.ndarray


def pack_options(
    ops: Sequence[Sequence[ShardOption]], op_costs: Sequence[float] | None = None
) -> PackedOptions:
    costs = resolve_op_costs(ops, op_costs)
    op_offsets, piece_offsets = [0], [0]
    elems: list[int] = []
    sliced, shared, out = [], [], []
    for options in ops:
        check_same_op(options)
        for o in options:
            elems.extend(o.piece_out_elems)
            piece_offsets.append(len(elems))
            sliced.append(o.sliced_in_bytes)
            shared.append(o.shared_in_bytes)
            out.append(o.out_bytes)
        op_offsets.append(len(sliced))

    def i64(v: list[int]) -> np.ndarray:
        return np.asarray(v, dtype=np.int64)

    return PackedOptions(
        i64(op_offsets), i64(piece_offsets), i64(elems), i64(sliced), i64(shared), i64(out),
        np.asarray(costs, dtype=np.float64),
    )  # fmt: skip


@dataclass(frozen=True)
class PackedConfigs:
    worker_offsets: np.ndarray
    worker_rates: np.ndarray
    worker_rankable: np.ndarray
    bandwidth: np.ndarray
    latency: np.ndarray
    resident: np.ndarray
    local_rate: np.ndarray


def pack_configs(configs: Sequence[WorkerConfig]) -> PackedConfigs:
    offsets, rates, rankable = [0], [], []
    for c in configs:
        for w in c.workers:
            ok = w.calibration.is_rankable()
            rates.append(float(w.rate) if ok else 0.0)
            rankable.append(int(ok))
        offsets.append(len(rates))
    return PackedConfigs(
        np.asarray(offsets, dtype=np.int64),
        np.asarray(rates, dtype=np.float64),
        np.asarray(rankable, dtype=np.int64),
        np.asarray([c.link.bytes_per_sec for c in configs], dtype=np.float64),
        np.asarray([c.link.latency_s for c in configs], dtype=np.float64),
        np.asarray([int(c.residency.shared_resident) for c in configs], dtype=np.int64),
        np.asarray([c.local_rate for c in configs], dtype=np.float64),
    )


@dataclass(frozen=True)
class SearchResult:
    """Raw output of the C++ search, op-major: entry ``j * n_configs + c``."""

    max_pieces: int
    best: np.ndarray  # global option index, -1 = whole
    assign: np.ndarray  # [entries, max_pieces]
    compute: np.ndarray
    transfer: np.ndarray
    total: np.ndarray
    local: np.ndarray


def search(options: PackedOptions, configs: PackedConfigs) -> SearchResult:
    """Run the C++ search on packed arrays (the benchmark times this alone)."""
    width, best, assign, compute, transfer, total, local = _core.shard_search(
        options.op_offsets, options.piece_offsets, options.piece_elems,
        options.sliced_bytes, options.shared_bytes, options.out_bytes, options.op_costs,
        configs.worker_offsets, configs.worker_rates, configs.worker_rankable,
        configs.bandwidth, configs.latency, configs.resident, configs.local_rate,
    )  # fmt: skip
    return SearchResult(
        int(width), best, assign.reshape(len(best), int(width)), compute, transfer, total, local
    )


def decide_many(
    ops: Sequence[Sequence[ShardOption]],
    configs: Sequence[WorkerConfig],
    op_costs: Sequence[float] | None = None,
) -> list[list[Decision]]:
    """``decide`` for every op under every configuration in one C++ call:
    ``result[j][c]`` is op ``j``'s decision under ``configs[c]``."""
    configs = list(configs)
    packed = pack_options(ops, op_costs)
    raw = search(packed, pack_configs(configs))
    out: list[list[Decision]] = []
    # Python lists: indexing NumPy arrays element by element is several times slower.
    offsets, costs = packed.op_offsets.tolist(), packed.op_costs.tolist()
    bests, locals_ = raw.best.tolist(), raw.local.tolist()
    for j, options in enumerate(ops):
        first, cost = offsets[j], costs[j]
        row = []
        for c, config in enumerate(configs):
            k = j * len(configs) + c
            best = bests[k]
            local = locals_[k] if options else None
            if best < 0:
                row.append(
                    finish_decision(options, config, -1, [], 0.0, 0.0, math.nan, local, cost)
                )
                continue
            n = options[best - first].n
            assignment = raw.assign[k, :n].tolist()
            row.append(
                finish_decision(
                    options,
                    config,
                    best - first,
                    assignment,
                    float(raw.compute[k]),
                    float(raw.transfer[k]),
                    float(raw.total[k]),
                    local,
                    cost,
                )
            )
        out.append(row)
    return out


def decide(
    options: Sequence[ShardOption],
    workers: Sequence[WorkerCost],
    link: LinkCost,
    residency: Residency,
    local_rate: float,
    *,
    op_cost: float = 1.0,
) -> Decision:
    """Choose a split of one op (C++ search) and say why; see the module docstring."""
    config = WorkerConfig(tuple(workers), link, residency, local_rate)
    return decide_many([list(options)], [config], [op_cost])[0][0]


def choose(
    options: Sequence[ShardOption],
    workers: Sequence[WorkerCost],
    link: LinkCost,
    residency: Residency,
    local_rate: float,
) -> ShardChoice | None:
    """The best split of one op, or None to run it whole: no options, no (rankable)
    workers, or no split strictly faster than ``out_elems / local_rate``. Workers whose
    calibration is not rankable are excluded (``ShardChoice.excluded``; ``decide`` also
    reports them when nothing is chosen)."""
    return decide(options, workers, link, residency, local_rate).choice
