"""run_on_dask on a real 2-worker LocalCluster (separate processes, loopback): every cut
comes back as on the executor, shared operands are scattered once or used resident,
calibration measures the workers, and failures (a worker dying mid-run, a piece raising,
an unknown worker) are errors, never partial results."""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dask
import numpy as np
import pytest
from distributed import Client, LocalCluster
from shard_testlib import OneOp, matmul_case, one_op

from rlx_compile import ModuleBuilder
from rlx_compile.interpreter import evaluate_op, run
from rlx_compile.shard import (
    PROBE_WAIT_S,
    CostCalibration,
    Cut,
    LinkCost,
    Residency,
    ShardChoice,
    ShardError,
    ShardExecutionError,
    ShardOption,
    WorkerCost,
    calibrate_link,
    calibrate_workers,
    choose,
    plan_module,
    run_on_dask,
    shardings,
    worker_addresses,
)

CLUSTER_CONFIG = {
    # Keep broadcast replicas: the memory manager would drop "extra" resident copies.
    "distributed.scheduler.active-memory-manager.start": False,
    "distributed.comm.timeouts.connect": "5s",
    "distributed.comm.timeouts.tcp": "15s",
    "distributed.scheduler.worker-ttl": "10s",
}


def start_cluster() -> tuple[LocalCluster, Client]:
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
    )  # fmt: skip
    return cluster, Client(cluster, timeout="10s")


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with dask.config.set(CLUSTER_CONFIG):
        cluster, c = start_cluster()
        try:
            yield c
        finally:
            c.close()
            cluster.close()


def addresses(client: Client) -> list[str]:
    return worker_addresses(client)


def force(option: ShardOption, client: Client, resident: bool = False) -> ShardChoice:
    """A choice for ``option`` on the cluster's workers (free link, slow local)."""
    team = [WorkerCost(1e9, CostCalibration.MEASURED, a) for a in addresses(client)]
    choice = choose([option], team, LinkCost(math.inf, 0.0), Residency(resident), 1e-9)
    assert choice is not None
    return choice


CASES: dict[str, Callable[[], OneOp]] = {
    "matmul": lambda: matmul_case((13, 40), (40, 21)),
    "fused_matmul": lambda: one_op(
        [(4, 6, 40), (40, 20), (20,)],
        lambda m, v: m.fused_matmul_bias_act(v[0], v[1], v[2], "gelu"),
    ),
    "conv_g1": lambda: one_op(
        [(3, 4, 9, 9), (10, 4, 3, 3)], lambda m, v: m.conv(v[0], v[1], pads=[1, 1, 1, 1])
    ),
    "conv_g3": lambda: one_op(
        [(3, 6, 7, 7), (9, 2, 3, 3)], lambda m, v: m.conv(v[0], v[1], groups=3)
    ),
    "where": lambda: one_op(
        [(6, 5), (6, 5), (1, 5)],
        lambda m, v: m.where(m.compare("gt", v[0], v[1]), v[0], v[2]),
    ),
}


def test_every_cut_on_the_cluster_matches_the_executor(client: Client) -> None:
    seen = set()
    for name, make in CASES.items():
        case = make()
        whole = evaluate_op(case.op, case.args)[0]
        for option in shardings(case.module, case.op, 2):
            result = run_on_dask(case.op, force(option, client), client, case.args)
            got = result.value
            seen.add(option.cut)
            if option.exact:
                assert got.tobytes() == whole.tobytes(), f"{name} {option.describe()}"
            else:
                assert np.abs(got - whole).max() <= 1e-6, f"{name} {option.describe()}"
            (op_run,) = result.runs
            assert len(op_run.piece_seconds) == 2 and all(s > 0 for s in op_run.piece_seconds)
    assert seen == set(Cut)


def test_resident_weights_are_used_where_they_are(client: Client) -> None:
    case = matmul_case((8, 32), (32, 16))
    rows = shardings(case.module, case.op, 2)[0]
    whole = evaluate_op(case.op, case.args)[0]
    [weight] = client.scatter([case.args[1]], broadcast=True, hash=False)
    choice = force(rows, client, resident=True)
    got = run_on_dask(case.op, choice, client, case.args, resident={"rhs": weight}).value
    assert got.tobytes() == whole.tobytes()
    assert weight.status == "finished"  # the caller's resident copy is left alone
    # Keyed by tensor name works too (the leaf "a1").
    got = run_on_dask(case.op, choice, client, case.args, resident={"a1": weight}).value
    assert got.tobytes() == whole.tobytes()
    with pytest.raises(ShardError, match="assumed shared operand rhs \\(a1\\) resident"):
        run_on_dask(case.op, choice, client, case.args)
    [only_one] = client.scatter([case.args[1]], workers=addresses(client)[:1], hash=False)
    with pytest.raises(ShardError, match="does not hold it"):
        run_on_dask(case.op, choice, client, case.args, resident={"rhs": only_one})


def test_a_module_runs_with_its_planned_ops_on_the_workers(client: Client) -> None:
    with ModuleBuilder("mlp") as m:
        x = m.input("x", (64, 32))
        h = m.fused_matmul_bias_act(x, m.param("w1", (32, 48)), m.param("b1", (48,)), "relu")
        y = m.matmul(h, m.param("w2", (48, 16)))
        m.output(m.add(y, m.param("b2", (16,))), names=["y"])
    rng = np.random.default_rng(1)
    inputs = {"x": rng.standard_normal((64, 32)).astype(np.float32)}
    params = {
        "w1": (rng.standard_normal((32, 48)) / 6).astype(np.float32),
        "b1": rng.standard_normal(48).astype(np.float32),
        "w2": (rng.standard_normal((48, 16)) / 7).astype(np.float32),
        "b2": rng.standard_normal(16).astype(np.float32),
    }
    team = [WorkerCost(1e9, CostCalibration.MEASURED, a) for a in addresses(client)]
    plan = plan_module(m.module, team, LinkCost(1e12, 0.0), Residency(False), 1e6)
    assert [c.option.op for c in plan.choices] == [
        "mir.fused_matmul_bias_act", "mir.matmul", "mir.add",
    ]  # fmt: skip
    result = run_on_dask(m.module, plan.choices, client, inputs, params)
    want = run(m.module, inputs, params)["y"]
    exact = all(c.option.exact for c in plan.choices)
    if exact:
        assert result.outputs["y"].tobytes() == want.tobytes()
    else:
        assert np.abs(result.outputs["y"] - want).max() <= 1e-5
    report = result.report().render()
    assert report.splitlines()[0] == "# shard report: 3 op(s), 3 split, 0 whole"
    assert all(r.measured_s is not None and r.measured_s > 0 for r in result.report().rows)


def test_calibration_measures_every_worker(client: Client) -> None:
    case = matmul_case((64, 64), (64, 64))
    team = calibrate_workers(client, case.op, repeats=1)
    assert [w.name for w in team] == addresses(client)
    assert all(w.calibration is CostCalibration.MEASURED and w.rate > 0 for w in team)
    default = calibrate_workers(client, repeats=1)
    assert len(default) == 2 and all(w.rate > 0 for w in default)
    link = calibrate_link(client, small=1 << 10, large=1 << 20, repeats=3)
    assert link.bytes_per_sec > 0 and link.latency_s > 0


def test_unknown_or_unnamed_workers_are_errors(client: Client) -> None:
    case = matmul_case((8, 16), (16, 8))
    rows = shardings(case.module, case.op, 2)[0]
    ghost = [WorkerCost(1e9, CostCalibration.MEASURED, "tcp://127.0.0.1:1"), *(
        WorkerCost(1e9, CostCalibration.MEASURED, a) for a in addresses(client)[:1]
    )]  # fmt: skip
    choice = choose([rows], ghost, LinkCost(math.inf), Residency(), 1e-9)
    assert choice is not None
    with pytest.raises(
        ShardExecutionError, match=r"worker tcp://127\.0\.0\.1:1 \(piece 0\) is not in the cluster"
    ):
        run_on_dask(case.op, choice, client, case.args)
    nameless = choose(
        [rows], [WorkerCost(1e9), WorkerCost(1e9)], LinkCost(math.inf), Residency(), 1e-9
    )
    assert nameless is not None
    with pytest.raises(ShardError, match="has no name"):
        run_on_dask(case.op, nameless, client, case.args)


def test_a_piece_that_raises_on_its_worker_is_an_error(client: Client) -> None:
    case = one_op([(4, 3), (4, 3)], lambda m, v: m.div(v[0], v[1]), dtype="i32")
    numerators = np.ones((4, 3), np.int32)
    divisors = np.ones((4, 3), np.int32)
    divisors[3, 1] = 0  # only the second piece divides by zero
    option = shardings(case.module, case.op, 2)[0]
    with pytest.raises(
        ShardExecutionError, match=r"piece 1 \(batch 2:4\) of .* failed: ExecutionError: .*zero"
    ):
        run_on_dask(case.op, force(option, client), client, [numerators, divisors])


def test_a_worker_dying_mid_run_is_an_error() -> None:
    with dask.config.set(CLUSTER_CONFIG):
        cluster, client = start_cluster()
        try:
            case = matmul_case((8, 16), (16, 8))
            choice = force(shardings(case.module, case.op, 2)[0], client)
            victim = choice.worker_names[1]
            pid = client.run(os.getpid, workers=[victim])[victim]
            submit = client.submit

            def submit_then_kill(*args: Any, **kwargs: Any) -> Any:
                future = submit(*args, **kwargs)
                if kwargs.get("workers") == [victim]:
                    os.kill(pid, signal.SIGKILL)  # after its slice arrived and its piece was sent
                return future

            client.submit = submit_then_kill  # type: ignore[method-assign]
            message = rf"piece 1 \(rows 4:8\) of .* on worker {victim}: the worker left"
            with pytest.raises(ShardExecutionError, match=message):
                run_on_dask(case.op, choice, client, case.args, timeout=20.0)
        finally:
            client.close()
            cluster.close()


def test_a_stale_scheduler_info_is_not_read_as_dead_workers(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client's periodic refresh leaves a worker-less summary in scheduler_info();
    # liveness must come from the scheduler itself or a run fails for no reason.
    monkeypatch.setattr(client, "scheduler_info", lambda *a, **k: {"workers": {}})
    case = matmul_case((8, 16), (16, 8))
    choice = force(shardings(case.module, case.op, 2)[0], client)
    got = run_on_dask(case.op, choice, client, case.args).value
    assert got.tobytes() == evaluate_op(case.op, case.args)[0].tobytes()


def test_a_frozen_worker_is_an_error_within_the_timeout_then_left_out() -> None:
    # A SIGSTOPped worker accepts connections and never answers: the scatter to it used
    # to outlast the timeout (23 s for timeout=5, once > 210 s, the client hung after),
    # and later runs chose it again. The scenario (frozen_worker.py) runs in its own
    # process group, so a hang here is bounded: the workers are resumed and the whole
    # group killed.
    script = Path(__file__).with_name("frozen_worker.py")
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=420)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGCONT)
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the frozen-worker run did not end: {out[-400:]} {err[-800:]}")
    assert proc.returncode == 0, err[-2000:]
    report = json.loads(out.strip().splitlines()[-1])
    a, b = report["a"], report["b"]
    timeout, slack = 6.0, 4.0  # the script's TIMEOUT; scheduling slack
    # 1. The frozen worker is named within the timeout, and left out from then on.
    error = report["frozen_error"]
    assert error is not None and f"piece 0 (rows 0:4) of mir.matmul#2 on worker {a}" in error
    assert "before the timeout" in error and "leave it out" in error, error
    assert report["frozen_seconds"] < timeout + slack
    assert report["unresponsive"] == [a]
    # 2. The next run, A still frozen, completes on B (it cannot while it waits on A).
    assert report["moved_error"] is None and report["moved_ok"]
    assert report["moved"] == [[0, a, b]]
    assert f"piece 0 moved off unresponsive {a} to {b}" in report["moved_report"]
    # 3. B frozen too: both pieces were on B, named within the timeout.
    error = report["both_error"]
    assert error is not None and f"piece 0 (rows 0:4) of mir.matmul#2 on worker {b}" in error
    assert report["both_seconds"] < timeout + slack
    # 4. No worker answers: an error at once (the probe wait), not after the timeout.
    error = report["none_error"]
    assert error is not None and f"on worker {a}: the worker did not answer" in error, error
    assert "no other worker of the client answers" in error and b in error, error
    assert report["none_seconds"] < PROBE_WAIT_S + slack
    # 5. Resumed, every run is right and A is used again.
    assert all(report["after"]) and report["used_again"], report["after"]
    assert report["unresponsive_after"] == []
    # 6. Nothing of any run (an abandoned transfer's operands included) stays behind.
    assert report["held"] == {a: [], b: []}
