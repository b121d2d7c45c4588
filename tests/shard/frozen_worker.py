"""The frozen-worker scenario of test_dask.py, run as its own process so that the test
can bound it from outside: a 2-worker LocalCluster, one warm-up run, then piece 0's
worker SIGSTOPped and ``run_on_dask(..., timeout=TIMEOUT)``, which must raise
``ShardExecutionError`` naming that piece and worker within the timeout; after SIGCONT
the same run on the same client completes. Prints ``victim <pid>`` as soon as it
stops the worker (the parent resumes it if this process is killed), then one JSON
line with what happened."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time
from pathlib import Path

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
    worker_addresses,
)

TIMEOUT = 6.0

CONFIG = {
    "distributed.scheduler.active-memory-manager.start": False,
    "distributed.comm.timeouts.connect": "5s",
    # The stop must not outlive the scheduler's patience: the worker stays in the cluster.
    "distributed.scheduler.worker-ttl": "120s",
}


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
            # Warm up: both workers have imported what a piece needs.
            run_on_dask(case.op, choice, client, case.args, timeout=120.0)
            victim = choice.worker_names[0]
            pid = client.run(os.getpid, workers=[victim])[victim]
            report["victim"] = victim
            os.kill(pid, signal.SIGSTOP)
            print(f"victim {pid}", flush=True)
            try:
                start = time.perf_counter()
                try:
                    run_on_dask(case.op, choice, client, case.args, timeout=TIMEOUT)
                    report["error"] = None
                except ShardExecutionError as err:
                    report["error"] = str(err)
                report["seconds"] = time.perf_counter() - start
            finally:
                os.kill(pid, signal.SIGCONT)
            again = run_on_dask(case.op, choice, client, case.args, timeout=120.0)
            report["after"] = bool(np.allclose(again.outputs["result"], want, atol=1e-5))
        finally:
            client.close()
            cluster.close()
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
