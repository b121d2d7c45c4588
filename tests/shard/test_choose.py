"""choose(): the decision rule (spec §9.10 S6, S7), residency, excluded workers, the
assignment, and the C++ search against its Python twin."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from shard_testlib import matmul_case, one_op

from rlx_compile import _core
from rlx_compile.shard import (
    CostCalibration,
    Cut,
    LinkCost,
    Residency,
    ShardError,
    ShardOption,
    WorkerConfig,
    WorkerCost,
    choose,
    decide,
    decide_many,
    shardings,
)
from rlx_compile.shard.cost import pack_configs, pack_options
from rlx_compile.testing.twins import decide_many_py, decide_py

M = CostCalibration.MEASURED
FAST = LinkCost(math.inf, 0.0)
NOT_RESIDENT = Residency(False)


def s1_options() -> list[ShardOption]:
    case = matmul_case((8, 16), (16, 32))
    return shardings(case.module, case.op, 2)


def workers(*rates: float, calibration: CostCalibration = M) -> list[WorkerCost]:
    return [WorkerCost(r, calibration, f"w{i}") for i, r in enumerate(rates)]


def test_s7_is_rankable() -> None:
    assert CostCalibration.MEASURED.is_rankable()
    assert CostCalibration.ARCH_DEFAULT.is_rankable()
    assert not CostCalibration.UNCALIBRATED.is_rankable()


def test_s6_nothing_to_choose_from() -> None:
    opts = s1_options()
    assert choose([], workers(1e9, 1e9), FAST, NOT_RESIDENT, 1.0) is None
    assert choose(opts, [], FAST, NOT_RESIDENT, 1.0) is None
    d = decide(opts, [], FAST, NOT_RESIDENT, 1.0)
    assert (d.reason, d.local_s) == ("no workers", 256.0)
    assert decide([], workers(1e9), FAST, NOT_RESIDENT, 1.0).reason == "no way to cut this op"


def test_s6_uncalibrated_workers_are_excluded_and_reported() -> None:
    opts = s1_options()
    guesses = workers(1e9, 1e9, calibration=CostCalibration.UNCALIBRATED)
    d = decide(opts, guesses, FAST, NOT_RESIDENT, 1.0)
    assert d.choice is None and d.excluded == (0, 1)
    assert d.reason == "no worker has a rankable cost model"
    # With two rankable workers beside a guess, the split goes to the rankable ones.
    mixed = [guesses[0], *workers(1e9, 2e9)]
    d = decide(opts, mixed, FAST, NOT_RESIDENT, 1.0)
    assert d.choice is not None and d.excluded == (0,) and d.choice.excluded == (0,)
    assert sorted(d.choice.assignment) == [1, 2]
    # One rankable worker cannot take two pieces.
    d = decide(opts, [guesses[0], *workers(1e9)], FAST, NOT_RESIDENT, 1.0)
    assert d.choice is None and "fewer than any option's pieces" in d.reason


def test_s6_slow_link_keeps_the_op_whole() -> None:
    d = decide(s1_options(), workers(1e12, 1e12), LinkCost(1.0, 0.0), NOT_RESIDENT, 1e6)
    assert d.choice is None and d.reason == "running whole is fastest"
    assert d.local_s == 256 / 1e6


def test_s6_fast_link_takes_rows_and_ties_go_to_the_exact_cut() -> None:
    opts = s1_options()
    # With free transfers rows and cols cost the same: the exact (earlier) cut wins.
    choice = choose(opts, workers(1e9, 1e9), FAST, NOT_RESIDENT, 1e6)
    assert choice is not None and choice.option.cut is Cut.ROWS and choice.option.exact
    assert choice.total_s == choice.compute_s == 128 / 1e9
    # Listed the other way round, the tie goes to cols: the rule is "earlier wins".
    choice = choose(opts[::-1], workers(1e9, 1e9), FAST, NOT_RESIDENT, 1e6)
    assert choice is not None and choice.option.cut is Cut.COLS


def test_the_price_is_compute_plus_bytes_over_bandwidth_plus_latency() -> None:
    rows = s1_options()[0]
    link = LinkCost(1e6, 1e-3)
    choice = choose([rows], workers(1e6, 1e6), link, NOT_RESIDENT, 1e3)
    assert choice is not None
    # Worked by hand: 128 elements per piece at 1e6/s; bytes = x (512, sliced once)
    # + y (1024, gathered once) + w (2048) to each of 2 workers = 5632.
    assert choice.bytes_moved == 5632
    assert choice.compute_s == pytest.approx(128e-6, rel=1e-15)
    assert choice.transfer_s == pytest.approx(5632e-6 + 1e-3, rel=1e-15)
    assert choice.total_s == pytest.approx(128e-6 + 5632e-6 + 1e-3, rel=1e-15)
    assert choice.local_s == pytest.approx(256 / 1e3)
    assert choice.piece_compute_s == (128e-6, 128e-6)
    # Residency drops the weight's two copies.
    res = choose([rows], workers(1e6, 1e6), link, Residency(True), 1e3)
    assert res is not None and res.bytes_moved == 1536 and res.resident


def data_parallel_options() -> list[ShardOption]:
    # 8 samples through a 512 x 2048 weight: the batch cut ships 4 MiB of weight + bias
    # to each worker, the samples themselves are small.
    case = one_op(
        [(8, 4, 512), (512, 2048), (2048,)],
        lambda m, v: m.fused_matmul_bias_act(v[0], v[1], v[2], "relu"),
    )
    return shardings(case.module, case.op, 2)


def test_residency_flips_the_data_parallel_decision() -> None:
    batch = data_parallel_options()[0]
    assert batch.cut is Cut.BATCH and [s.name for s in batch.shared] == ["weight", "bias"]
    # Locally 65536 outputs take 65.5 ms; each worker computes its half in 16.4 ms.
    team = workers(2e6, 2e6)
    link = LinkCost(1e8, 1e-3)  # 100 MB/s: the two weight copies alone take 84 ms
    local = 1e6
    assert choose([batch], team, link, Residency(False), local) is None
    choice = choose([batch], team, link, Residency(True), local)
    assert choice is not None and choice.option.cut is Cut.BATCH
    # Among all cuts, without residency the weight-slicing cols cut wins; with it, the
    # exact batch cut (first among equal-cost exact cuts).
    free = choose(data_parallel_options(), team, link, Residency(False), local)
    held = choose(data_parallel_options(), team, link, Residency(True), local)
    assert free is not None and free.option.cut is Cut.COLS
    assert held is not None and held.option.cut is Cut.BATCH


def test_largest_pieces_go_to_the_fastest_workers() -> None:
    case = matmul_case((8, 16), (16, 4))
    rows = shardings(case.module, case.op, 3)[0]  # 3, 3, 2 rows = 12, 12, 8 elements
    choice = choose([rows], workers(1.0, 3.0, 2.0, 0.5), FAST, NOT_RESIDENT, 0.1)
    assert choice is not None
    assert choice.assignment == (1, 2, 0)
    assert choice.worker_names == ("w1", "w2", "w0")
    assert choice.piece_compute_s == (4.0, 6.0, 8.0)
    assert choice.compute_s == 8.0


def brute_force_compute(elems: tuple[int, ...], rates: list[float]) -> float:
    return min(
        max(e / rates[w] for e, w in zip(elems, perm, strict=True))
        for perm in itertools.permutations(range(len(rates)), len(elems))
    )


@pytest.mark.parametrize("seed", range(20))
def test_the_assignment_is_optimal_for_the_slowest_piece(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    case = matmul_case((int(rng.integers(n, 12)), 8), (8, 3))
    rows = shardings(case.module, case.op, n)[0]
    rates = [float(r) for r in rng.uniform(1, 10, size=int(rng.integers(n, 6)))]
    choice = choose([rows], workers(*rates), FAST, NOT_RESIDENT, 1e-9)
    assert choice is not None
    assert choice.compute_s == pytest.approx(brute_force_compute(rows.piece_out_elems, rates))


def random_config(rng: np.random.Generator) -> WorkerConfig:
    count = int(rng.integers(0, 6))
    cal = [M, CostCalibration.ARCH_DEFAULT, CostCalibration.UNCALIBRATED]
    team = tuple(
        WorkerCost(float(10 ** rng.uniform(5, 9)), cal[int(rng.integers(0, 3))], f"w{i}")
        for i in range(count)
    )
    # Equal rates exercise the tie-breaking of the worker order.
    if count >= 2 and rng.random() < 0.3:
        team = tuple(WorkerCost(team[0].rate, w.calibration, w.name) for w in team)
    link = LinkCost(float(10 ** rng.uniform(5, 11)), float(rng.choice([0.0, 1e-4, 1e-2])))
    return WorkerConfig(
        team, link, Residency(bool(rng.random() < 0.5)), float(10 ** rng.uniform(5, 9))
    )


def random_op_options(rng: np.random.Generator) -> list[ShardOption]:
    n = int(rng.integers(2, 5))
    kind = int(rng.integers(0, 3))
    d = [int(x) for x in rng.integers(1, 40, size=4)]
    if kind == 0:
        case = matmul_case((d[0], d[1] + 1, d[2]), (d[2], d[3]))
    elif kind == 1:
        case = one_op(
            [(d[0], 2 * d[1], 5, 5), (2 * d[2], d[1], 3, 3)],
            lambda m, v: m.conv(v[0], v[1], groups=2),
        )
    else:
        case = one_op([(d[0], d[1]), (d[1],)], lambda m, v: m.mul(v[0], v[1]))
    return shardings(case.module, case.op, n)


def test_cpp_search_equals_the_python_twin() -> None:
    rng = np.random.default_rng(7)
    ops = [random_op_options(rng) for _ in range(60)] + [[]]
    configs = [random_config(rng) for _ in range(12)]
    costs = [float(rng.choice([1.0, 3.0, 512.0])) for _ in ops]
    got = decide_many(ops, configs, costs)
    want = decide_many_py(ops, configs, costs)
    assert got == want  # dataclass equality: options, assignments and floats exactly
    chosen = sum(d.choice is not None for row in got for d in row)
    assert 0 < chosen < len(ops) * len(configs)  # both outcomes are exercised
    for options in ops[:10]:
        for config in configs:
            args = (options, config.workers, config.link, config.residency, config.local_rate)
            assert decide(*args) == decide_py(*args)


@pytest.mark.parametrize(
    "make",
    [
        lambda: LinkCost(0.0),
        lambda: LinkCost(math.nan),
        lambda: LinkCost(1.0, -1e-3),
        lambda: LinkCost(1.0, math.inf),
        lambda: WorkerCost(0.0, M),
        lambda: WorkerCost(math.inf, CostCalibration.ARCH_DEFAULT),
        lambda: WorkerConfig((), FAST, NOT_RESIDENT, 0.0),
    ],
)
def test_bad_cost_models_are_rejected(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShardError):
        make()


def test_an_uncalibrated_worker_may_have_no_rate() -> None:
    assert WorkerCost(0.0, CostCalibration.UNCALIBRATED).rate == 0.0
    assert WorkerCost(1.0, "arch-default").calibration is CostCalibration.ARCH_DEFAULT  # type: ignore[arg-type]


def test_options_of_different_ops_do_not_mix() -> None:
    other = matmul_case((4, 16), (16, 32))
    mixed = [s1_options()[0], shardings(other.module, other.op, 2)[0]]
    with pytest.raises(ShardError, match="must cut the same op"):
        choose(mixed, workers(1e9, 1e9), FAST, NOT_RESIDENT, 1.0)


def core_args(**override: np.ndarray) -> list[np.ndarray]:
    opts = pack_options([s1_options()])
    cfgs = pack_configs([WorkerConfig(tuple(workers(1e6, 1e6)), LinkCost(1e6, 1e-3))])
    args = {
        "op_offsets": opts.op_offsets, "piece_offsets": opts.piece_offsets,
        "piece_elems": opts.piece_elems, "sliced_bytes": opts.sliced_bytes,
        "shared_bytes": opts.shared_bytes, "out_bytes": opts.out_bytes,
        "op_cost": opts.op_costs, "worker_offsets": cfgs.worker_offsets,
        "worker_rates": cfgs.worker_rates, "worker_rankable": cfgs.worker_rankable,
        "bandwidth": cfgs.bandwidth, "latency": cfgs.latency, "resident": cfgs.resident,
        "local_rate": cfgs.local_rate,
    }  # fmt: skip
    args.update(override)
    return list(args.values())


def i64(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


def f64(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float64)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"op_offsets": i64(0, 1)}, "op_offsets must end at len\\(sliced_bytes\\) = 2"),
        ({"op_offsets": i64(1, 2)}, "op_offsets\\[0\\] must be 0"),
        ({"piece_offsets": i64(0, 3, 2)}, "piece_offsets\\[2\\] = 2 is below"),
        ({"piece_offsets": i64(0, 1, 4)}, "option 0 has 1 pieces"),
        ({"piece_elems": i64(128, 128, 128, -1)}, "piece_elems\\[3\\] = -1 is outside"),
        ({"piece_elems": i64(128, 128, 128, 127)}, "option 1 covers 255 output elements"),
        ({"shared_bytes": i64(1)}, "shared_bytes has length 1"),
        ({"out_bytes": i64(0, 1 << 52)}, "out_bytes\\[1\\] = 4503599627370496 is outside"),
        ({"op_cost": f64(0.0)}, "op_cost\\[0\\]"),
        ({"op_cost": f64(1.0, 1.0)}, "op_cost has length 2"),
        ({"worker_rates": f64(1e6, 0.0)}, "worker_rates\\[1\\] = 0.000000 must be finite"),
        ({"worker_rankable": i64(1)}, "worker_rankable has length 1"),
        ({"worker_offsets": i64(0, 3)}, "worker_offsets must end at len\\(worker_rates\\)"),
        ({"bandwidth": f64(-1.0)}, "bandwidth\\[0\\]"),
        ({"latency": f64(math.nan)}, "latency\\[0\\] = nan must be finite"),
        ({"local_rate": f64(math.inf)}, "local_rate\\[0\\]"),
        ({"resident": i64(0, 0)}, "resident has length 2"),
        ({"piece_elems": np.zeros((2, 2), np.int64)}, "piece_elems must be a 1-D array"),
    ],
)
def test_the_binding_checks_every_array(override: dict[str, np.ndarray], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _core.shard_search(*core_args(**override))


def test_an_excluded_workers_rate_is_never_read() -> None:
    args = core_args(worker_rates=f64(1e6, math.nan), worker_rankable=i64(1, 0))
    _, best, *_ = _core.shard_search(*args)
    assert list(best) == [-1]  # one rankable worker cannot take two pieces
