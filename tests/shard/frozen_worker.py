"""The frozen-worker scenario of test_dask.py, run as its own process so that the test
can bound it from outside. On a 2-worker LocalCluster, after a warm-up run of a 2-piece
split:

1. piece 0's worker A is SIGSTOPped: ``run_on_dask(..., timeout=TIMEOUT)`` must raise
   ``ShardExecutionError`` naming that piece and worker within the timeout, and A is
   then unresponsive on the client;
2. the same run, A still frozen, completes on the other worker B (piece 0 moved);
3. B is SIGSTOPped too: the run (both pieces on B now) times out naming B;
4. the next run fails at once: no worker of the client answers;
5. both are resumed: runs complete, and A is used again after a run or two;
6. no data of any run stays on a worker.

Prints ``victim <pid>`` as soon as it stops a worker (the parent resumes the process
group if this process is killed), then one JSON line with what happened."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import dask
import numpy as np
from distributed import Client, LocalCluster

sys.path.insert(0, str(Path(__file__).parent))

from shard_testlib import matmul_case

from rlx_compile.shard import (
    CostCalibration,
    LinkCost,
    Residency,
    ShardExecutionError,
    WorkerCost,
    choose,
    run_on_dask,
    shardings,
    unresponsive_workers,
    worker_addresses,
)

TIMEOUT = 6.0
PATIENT = 120.0  # for runs that must not time out, however loaded the machine

CONFIG = {
    "distributed.scheduler.active-memory-manager.start": False,
    "distributed.comm.timeouts.connect": "5s",
    # The stop must not outlive the scheduler's patience: the workers stay in the cluster.
    "distributed.scheduler.worker-ttl": "300s",
}


def held_keys(dask_worker: Any) -> list[str]:
    return sorted(str(k) for k in dask_worker.data if str(k).startswith("rlx-shard-"))


def timed(report: dict[str, object], name: str, call: Any) -> Any:
    """Run ``call``; record its error (or None) and seconds under ``name``."""
    start = time.perf_counter()
    result = None
    try:
        result = call()
        report[f"{name}_error"] = None
    except ShardExecutionError as err:
        report[f"{name}_error"] = str(err)
    report[f"{name}_seconds"] = time.perf_counter() - start
    return result


def main() -> None:
    report: dict[str, object] = {}
    with dask.config.set(CONFIG):
        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL,
        )  # fmt: skip
        client = Client(cluster, timeout="30s")
        try:
            case = matmul_case((8, 16), (16, 8))
            team = [WorkerCost(1e9, CostCalibration.MEASURED, a) for a in worker_addresses(client)]
            option = shardings(case.module, case.op, 2)[0]
            choice = choose([option], team, LinkCost(float("inf"), 0.0), Residency(False), 1e-9)
            assert choice is not None
            want = case.args[0] @ case.args[1]

            def run(timeout: float) -> Any:
                return run_on_dask(case.op, choice, client, case.args, timeout=timeout)

            run(PATIENT)  # warm up: both workers have imported what a piece needs
            a, b = choice.worker_names
            pids = {w: client.run(os.getpid, workers=[w])[w] for w in (a, b)}
            report["a"], report["b"] = a, b
            stopped = []
            try:
                os.kill(pids[a], signal.SIGSTOP)
                stopped.append(pids[a])
                print(f"victim {pids[a]}", flush=True)
                timed(report, "frozen", lambda: run(TIMEOUT))
                report["unresponsive"] = sorted(unresponsive_workers(client))
                moved = timed(report, "moved", lambda: run(PATIENT))
                if moved is not None:
                    report["moved_ok"] = bool(np.allclose(moved.value, want, atol=1e-5))
                    report["moved"] = [list(m) for m in moved.runs[0].moved]
                    report["moved_report"] = moved.report().render()
                os.kill(pids[b], signal.SIGSTOP)
                stopped.append(pids[b])
                print(f"victim {pids[b]}", flush=True)
                timed(report, "both", lambda: run(TIMEOUT))
                timed(report, "none", lambda: run(PATIENT))
            finally:
                for pid in stopped:
                    os.kill(pid, signal.SIGCONT)
            # Resumed: A answers its probe and is used again within a few runs.
            after = []
            for _ in range(10):
                again = run(PATIENT)
                after.append(bool(np.allclose(again.value, want, atol=1e-5)))
                if not again.runs[0].moved:
                    break
            report["after"] = after
            report["used_again"] = not again.runs[0].moved
            report["unresponsive_after"] = sorted(unresponsive_workers(client))
            # Nothing of any run stays on a worker (the release reaches it shortly).
            give_up = time.perf_counter() + 60.0
            held = client.run(held_keys)
            while any(held.values()) and time.perf_counter() < give_up:
                time.sleep(0.5)
                held = client.run(held_keys)
            report["held"] = held
        finally:
            client.close()
            cluster.close()
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
