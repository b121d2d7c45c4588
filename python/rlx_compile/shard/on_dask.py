"""Running shard choices on Dask distributed workers.

``run_on_dask(module_or_op, choice, client, inputs)`` executes a chosen split for real:

- every piece's sliced operands are scattered to the worker that runs it, and only
  there (``client.scatter(slice, workers=[address])``), so no worker ever sees another
  piece's data;
- a shared operand is sent to each chosen worker with its slices (once per worker, as
  the cost model counts it), or taken from ``resident`` (a future every chosen worker
  already holds, checked with ``who_has``: a missing copy is an error, not a silent
  transfer). Dask's active memory manager drops "extra" replicas of a broadcast within
  seconds, so a cluster that keeps weights resident runs with
  ``distributed.scheduler.active-memory-manager.start: false``;
- each piece is submitted pinned to its worker (``allow_other_workers=False``, no
  retries) with the text of its one-op module; the worker parses it and runs it with
  the reference executor, timing the run;
- results are gathered and concatenated only when every piece arrived with the shape
  it should have. A worker that leaves the cluster, a lost or cancelled piece, a worker
  exception or the timeout raises ``ShardExecutionError`` naming the op, piece and
  worker; the pending work is cancelled. There is no partial result. The timeout covers
  sending the operands, the pieces and the gather: a frozen or unreachable worker is
  named when it runs out, and the client stays usable;
- a worker that did not answer before a run's timeout is *unresponsive* on that client
  (``unresponsive_workers(client)``): later runs move its pieces to the client's other
  workers (spare ones first, then those of the choice with the fewest pieces) or, when
  none is left, fail at once naming it, and ``calibrate_workers`` leaves it out. One
  probe to it (a ``ping`` straight to the worker) is kept in flight, and a run whose
  choice names it waits up to ``PROBE_WAIT_S`` for that probe: the worker is used again
  from the first run after it answers. An operand transfer the run gave up on is not
  cancelled (what reached the worker would stay there, unknown to the scheduler) but
  released when it ends; the pieces are cancelled.

Worker names in a choice are Dask worker addresses: build the ``WorkerCost`` list with
``calibrate_workers(client)``. Workers need rlx_compile installed (they import
``rlx_compile.shard.on_dask`` to run a piece). ``distributed`` is imported lazily, so the
rest of ``rlx_compile.shard`` works without it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import threading
import time
import weakref
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from rlx_compile.builder import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter.core import coerce
from rlx_compile.ir import graph_inputs, graph_name, main_graph, parse_module, print_module
from rlx_compile.shard.cost import CostCalibration, LinkCost, ShardChoice, WorkerCost
from rlx_compile.shard.options import ShardError
from rlx_compile.shard.pieces import (
    check_option_for,
    concat_pieces,
    execute_with,
    op_module,
    piece_args,
    piece_texts,
    timed_run,
)
from rlx_compile.shard.report import OpRun, ShardReport

if TYPE_CHECKING:
    from distributed import Client, Future

T = TypeVar("T")


class ShardExecutionError(RuntimeError):
    """A sharded run could not produce the whole result (worker died, piece lost or
    failed, timeout). The message names the op, the piece and the worker."""


# ---------------------------------------------------------------------------------
# Worker-side functions (imported by reference on the workers)
# ---------------------------------------------------------------------------------


def _worker_piece(text: str, *args: np.ndarray) -> tuple[np.ndarray, float]:
    """Run one piece; return its result and the seconds the executor took."""
    return timed_run(text, args)


def _worker_echo(array: np.ndarray) -> np.ndarray:
    return array.copy()


# ---------------------------------------------------------------------------------
# Calibration
# ---------------------------------------------------------------------------------


def probe_seconds(text: str, seed: int, repeats: int) -> float:
    """Median time of ``repeats`` runs of a one-op module on random operands drawn from
    ``seed`` (made where it runs, so only the text travels). The median, not the best:
    a prediction is for a run under the machine's usual load."""
    module = parse_module(text, "<probe>")
    rng = np.random.default_rng(seed)
    args = []
    for leaf in graph_inputs(main_graph(module)):
        shape = [int(d) for d in leaf.type.shape]
        dtype = leaf.type.dtype
        if dtype.is_bool:
            args.append(rng.standard_normal(shape) > 0)
        elif dtype.is_int:  # non-zero, so that a division has a defined result
            args.append(rng.integers(1, 8, size=shape).astype(dtype.numpy))
        else:
            args.append((rng.standard_normal(shape) * 0.5).astype(dtype.numpy))
    return float(np.median([timed_run(text, args)[1] for _ in range(max(1, repeats))]))


def _default_probe() -> Operation:
    with ModuleBuilder("probe") as m:
        m.output(m.matmul(m.input("a", (256, 256)), m.input("b", (256, 256))))
    return next(op for op in m.module.walk() if isinstance(op, mir.MatmulOp))


def _probe_text(probe: Operation | None) -> tuple[str, int]:
    op = _default_probe() if probe is None else probe
    out = op.results[0].type
    if not isinstance(out, TensorType) or not out.is_static:
        raise ShardError(f"cannot time {op.name}: its result shape is not static")
    return print_module(op_module(op)), cast(int, out.num_elements())


def measure_local_rate(probe: Operation | None = None, *, repeats: int = 3, seed: int = 0) -> float:
    """Output elements per second of ``probe`` run whole in this process (the
    ``local_rate`` of ``choose``), timed like ``calibrate_workers`` times a worker."""
    text, elems = _probe_text(probe)
    return elems / probe_seconds(text, seed, repeats)


def calibrate_workers(
    client: Client,
    probe: Operation | None = None,
    *,
    repeats: int = 3,
    seed: int = 0,
    timeout: float = 60.0,
) -> list[WorkerCost]:
    """Time a probe kernel on every worker: one ``WorkerCost`` per worker (sorted by
    address), ``calibration=MEASURED``, ``name`` = the address, ``rate`` = output
    elements per second of ``probe`` (probe the op you are about to shard; the default,
    a 256x256x256 f32 matmul, gives rates whose x256 is multiply-adds per second).
    A worker unresponsive on this client (``unresponsive_workers``) is left out, so a
    team built after a timeout does not name it."""
    from distributed import wait

    text, elems = _probe_text(probe)
    addrs = responsive_addresses(client)
    # A pinned task per worker: the probe runs in the worker's task threads, as pieces do.
    futures = [
        client.submit(probe_seconds, text, seed, repeats, workers=[a], pure=False) for a in addrs
    ]
    try:
        wait(futures, timeout=timeout)
        seconds = client.gather(futures)
    except Exception as err:
        client.cancel(futures, force=True)
        raise ShardExecutionError(
            f"calibrating the workers failed: {type(err).__name__}: {err}"
        ) from err
    return [
        WorkerCost(elems / s, CostCalibration.MEASURED, a)
        for a, s in zip(addrs, seconds, strict=True)
    ]


def calibrate_link(
    client: Client,
    workers: Sequence[str] | None = None,
    *,
    small: int = 1 << 10,
    large: int = 8 << 20,
    repeats: int = 5,
) -> LinkCost:
    """The alpha-beta link as a sharded run sees it, timed the way ``run_on_dask`` moves
    data: ``nbytes`` split over ``workers`` (default: all), one scatter per worker, a
    pinned task per worker that returns what it got, gathered and concatenated here, so
    ``2 * nbytes`` cross (in and out, like slices and outputs). Each size is the median
    of ``repeats``: latency = t(small), bandwidth = 2 * (large - small) / (t(large) -
    t(small)). Unresponsive workers are left out of the default."""
    if not 0 < small < large:
        raise ShardError(f"calibrate_link needs 0 < small < large, got {small}, {large}")
    addrs = list(workers) if workers is not None else responsive_addresses(client)
    if not addrs:
        raise ShardError("calibrate_link needs at least one worker")

    def round_trip(nbytes: int) -> float:
        parts = np.array_split(np.zeros(nbytes, dtype=np.uint8), len(addrs))
        times = []
        for _ in range(max(1, repeats)):
            start = time.perf_counter()
            futures = [
                client.scatter([p], workers=[a], hash=False, direct=True)[0]
                for p, a in zip(parts, addrs, strict=True)
            ]
            echoes = [
                client.submit(_worker_echo, f, workers=[a], pure=False)
                for f, a in zip(futures, addrs, strict=True)
            ]
            np.concatenate(client.gather(echoes))
            times.append(time.perf_counter() - start)
            client.cancel(futures + echoes)
        return float(np.median(times))

    t_small, t_large = round_trip(small), round_trip(large)
    per_byte = max(t_large - t_small, 1e-12) / (2 * (large - small))
    return LinkCost(1.0 / per_byte, t_small)


# ---------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DaskRun:
    """Outputs of a sharded run (``{"result": array}`` for one op; the graph's outputs
    by name for a module) and what each sharded op cost."""

    outputs: dict[str, np.ndarray]
    runs: tuple[OpRun, ...]

    @property
    def value(self) -> np.ndarray:
        if len(self.outputs) != 1:
            raise ValueError(f"the run has {len(self.outputs)} outputs; index .outputs")
        return next(iter(self.outputs.values()))

    def report(self) -> ShardReport:
        return ShardReport.from_runs(self.runs)


_RUN_IDS = itertools.count()


def worker_addresses(client: Client) -> list[str]:
    """The addresses of the workers the scheduler knows now, sorted. Asked directly:
    ``client.scheduler_info()`` returns a cache that the client's periodic refresh
    overwrites with a worker-less summary, which would read as every worker gone."""
    identity = client.sync(client.scheduler.identity, n_workers=-1)
    return sorted(identity["workers"])


def _alive(client: Client) -> set[str]:
    return set(worker_addresses(client))


def _check_workers(client: Client, choice: ShardChoice) -> set[str]:
    """The cluster's workers, once the choice's are known to be among them."""
    alive = _alive(client)
    for i, name in enumerate(choice.worker_names):
        if not name:
            raise ShardError(
                f"{choice.option.label}: piece {i}'s worker has no name; build the workers "
                "with calibrate_workers(client) so that names are worker addresses"
            )
        if name not in alive:
            raise ShardExecutionError(
                f"{choice.option.label}: worker {name} (piece {i}) is not in the cluster"
            )
    if len(set(choice.worker_names)) != len(choice.worker_names):
        raise ShardError(f"{choice.option.label}: a worker is assigned two pieces")
    return alive


# ---------------------------------------------------------------------------------
# Unresponsive workers
# ---------------------------------------------------------------------------------

PROBE_WAIT_S = 2.0
"""How long a run whose choice names an unresponsive worker waits for its probe (out
of the run's timeout) before moving its pieces."""


@dataclass
class _Unresponsive:
    """A worker that did not answer before a run's timeout, as one client sees it."""

    reason: str
    probe: concurrent.futures.Future[Any] | None = None


_UNRESPONSIVE: weakref.WeakKeyDictionary[Client, dict[str, _Unresponsive]] = (
    weakref.WeakKeyDictionary()
)
_UNRESPONSIVE_LOCK = threading.Lock()


def _mark_unresponsive(client: Client, addr: str, reason: str) -> None:
    with _UNRESPONSIVE_LOCK:
        record = _UNRESPONSIVE.setdefault(client, {})
        record.setdefault(addr, _Unresponsive(reason)).reason = reason


async def _ping(client: Client, addr: str) -> Any:
    """The probe: a call straight to the worker, which only a running worker answers
    (the scheduler answers for a frozen one)."""
    return await client.rpc(addr).ping()


def _settle(client: Client, alive: set[str]) -> tuple[dict[str, str], dict[str, Any]]:
    """One pass over the client's unresponsive workers: forget those that left the
    cluster, re-admit those whose probe answered, start a probe where none is in
    flight. Returns the remaining ones (address -> reason) and their probes."""
    with _UNRESPONSIVE_LOCK:
        record = _UNRESPONSIVE.get(client)
        if not record:
            return {}, {}
        for addr in list(record):
            entry = record[addr]
            if addr not in alive or (entry.probe is not None and _succeeded(entry.probe)):
                del record[addr]
                continue
            if entry.probe is None or entry.probe.done():  # none yet, or it failed
                entry.probe = _start(client, _ping(client, addr))
        return (
            {a: e.reason for a, e in sorted(record.items())},
            {a: e.probe for a, e in record.items()},
        )


def _refresh(
    client: Client, alive: set[str], wait_for: Sequence[str], wait: float
) -> dict[str, str]:
    """The client's unresponsive workers after waiting up to ``wait`` seconds for the
    probes of those among ``wait_for``."""
    unresponsive, probes = _settle(client, alive)
    pending = [probes[a] for a in wait_for if a in probes]
    if pending and wait > 0:
        concurrent.futures.wait(pending, timeout=wait)
        unresponsive, _ = _settle(client, alive)
    return unresponsive


def unresponsive_workers(client: Client) -> dict[str, str]:
    """The workers of ``client`` that did not answer before a run's timeout and have
    not answered a probe since, by address, with the error that named each. Later runs
    move their pieces to other workers; a worker is used again once it answers."""
    return _refresh(client, _alive(client), (), 0.0)


def responsive_addresses(client: Client) -> list[str]:
    """``worker_addresses`` without the unresponsive workers."""
    alive = worker_addresses(client)
    unresponsive = _refresh(client, set(alive), (), 0.0)
    return [a for a in alive if a not in unresponsive]


Moved = tuple[tuple[int, str, str], ...]
"""(piece, unresponsive worker, worker it ran on instead)."""


def _avoid_unresponsive(
    client: Client, choice: ShardChoice, alive: set[str], deadline: float
) -> tuple[ShardChoice, Moved]:
    """The choice with each piece of an unresponsive worker moved to a responsive one
    (a spare first, then the one with the fewest pieces, by address), or an error at
    once when no worker answers."""
    names = list(choice.worker_names)
    unresponsive = _refresh(client, alive, names, min(PROBE_WAIT_S, _left(deadline)))
    stuck = [i for i, a in enumerate(names) if a in unresponsive]
    if not stuck:
        return choice, ()
    healthy = sorted(a for a in alive if a not in unresponsive)
    if not healthy:
        raise ShardExecutionError(
            f"{_describe_piece(choice, stuck[0])}: the worker did not answer before an "
            "earlier run's timeout nor since, and no other worker of the client answers "
            f"(unresponsive: {', '.join(unresponsive)})"
        )
    load = {a: names.count(a) for a in healthy}
    moved = []
    for i in stuck:
        to = min(healthy, key=lambda a: (load[a], a))
        moved.append((i, names[i], to))
        names[i] = to
        load[to] += 1
    return replace(choice, worker_names=tuple(names)), tuple(moved)


def _resident_futures(
    client: Client, choice: ShardChoice, resident: Mapping[str, Future]
) -> dict[int, Future]:
    """Futures of the shared operands given as resident (every chosen worker must hold
    each); the other shared operands are sent with each piece's slices."""
    option = choice.option
    workers = list(choice.worker_names)
    out: dict[int, Future] = {}
    for s in option.shared:
        fut = resident.get(s.name, resident.get(s.value))
        if fut is not None:
            holders = set(client.who_has([fut]).get(fut.key, ()))
            missing = [w for w in workers if w not in holders]
            if missing:
                raise ShardError(
                    f"{option.label}: operand {s.name} ({s.value}) is given as resident but "
                    f"{', '.join(missing)} does not hold it (Dask's active memory manager "
                    "drops extra replicas unless distributed.scheduler.active-memory-manager"
                    ".start is false)"
                )
            out[s.index] = fut
        elif choice.resident:
            raise ShardError(
                f"{option.label}: the choice assumed shared operand {s.name} ({s.value}) "
                f"resident; pass resident={{'{s.name}': future}} (client.scatter(..., "
                "broadcast=True))"
            )
    return out


def _left(deadline: float) -> float:
    return max(deadline - time.perf_counter(), 0.0)


def _start(client: Client, awaitable: Awaitable[T]) -> concurrent.futures.Future[T]:
    """Run ``awaitable`` on the client's event loop; the caller waits on the returned
    future with its own timeout. Dask's own timeouts (``scatter(timeout=)``,
    ``Future.result(timeout=)``) do not bound the transfer to a frozen worker, and
    cancelling one waits for the cancelled transfer to end; abandoning this future
    (``cancel()``) does not, so the loop and the client stay usable."""

    async def run() -> T:
        return await awaitable

    from tornado.platform.asyncio import BaseAsyncIOLoop

    loop = client.loop
    assert isinstance(loop, BaseAsyncIOLoop)  # what distributed runs on
    return asyncio.run_coroutine_threadsafe(run(), loop.asyncio_loop)


def _wait_each(
    calls: Sequence[concurrent.futures.Future[T]], deadline: float, cancel: bool = True
) -> tuple[list[T] | None, list[int]]:
    """The results of ``calls`` in order if all finish by ``deadline``, else
    ``(None, late)`` with ``late`` the ones still running, in order (all are then
    cancelled, if ``cancel``). A call's own exception is raised."""
    done, _ = concurrent.futures.wait(
        calls, timeout=_left(deadline), return_when=concurrent.futures.FIRST_EXCEPTION
    )
    late = [i for i, c in enumerate(calls) if not c.done()]
    failed = next((c for c in calls if c in done and c.exception() is not None), None)
    if cancel and (failed is not None or late):
        for c in calls:
            c.cancel()
    if failed is not None:
        return [failed.result()], []  # raises its exception
    return (None, late) if late else ([c.result() for c in calls], [])


def _failed(call: concurrent.futures.Future[Any]) -> bool:
    return call.done() and not call.cancelled() and call.exception() is not None


def _succeeded(call: concurrent.futures.Future[Any]) -> bool:
    return call.done() and not call.cancelled() and call.exception() is None


def _release_scattered(call: concurrent.futures.Future[dict[str, Future]]) -> None:
    """Release the futures of a transfer the run gave up on, once it ends."""
    if _succeeded(call):
        for future in call.result().values():
            future.release()


def _scatter_operands(
    client: Client,
    choice: ShardChoice,
    args: Sequence[np.ndarray],
    resident: Mapping[int, Future],
    owned: list[Future],
    deadline: float,
    key: str,
) -> list[list[Future]]:
    """Each piece's operand futures, in operand order: the resident ones as given, the
    others (its slices and the shared operands, each worker receiving its own copy, as
    the cost model counts them) sent straight to its worker, every worker at once, as
    keys ``{key}-{piece}-operand{k}``."""
    option = choice.option
    sends: list[dict[str, int]] = []
    calls = []
    for i, addr in enumerate(choice.worker_names):
        pieces = piece_args(option, args, i)
        send = {f"{key}-{i}-operand{k}": k for k in range(len(pieces)) if k not in resident}
        sends.append(send)
        calls.append(_start(client, client.scatter(
            {name: pieces[k] for name, k in send.items()}, workers=[addr], hash=False,
            direct=True, asynchronous=True,
        )))  # fmt: skip
    try:
        sent, late = _wait_each(calls, deadline, cancel=False)
    except Exception as err:
        bad = next(i for i, c in enumerate(calls) if _failed(c))
        raise ShardExecutionError(
            f"{_describe_piece(choice, bad)}: sending its operands failed: {_one_line(err)}"
        ) from err
    finally:
        for c in calls:
            if not c.done():
                # Cancelling a transfer in flight would leave on the worker what
                # reaches it later, unknown to the scheduler: let it finish and free it.
                c.add_done_callback(_release_scattered)
            elif _succeeded(c):  # released with the run's other futures
                owned.extend(c.result().values())
    if sent is None:
        raise ShardExecutionError(
            _timed_out(client, choice, late, "its operands were not received before the timeout")
        )
    out = []
    for send, futs in zip(sends, sent, strict=True):
        by_index: dict[int, Future] = dict(resident)
        by_index.update((send[name], f) for name, f in futs.items())
        out.append([by_index[k] for k in range(len(by_index))])
    return out


_LEFT_OUT = (
    " (the worker is frozen or unreachable; later runs on this client leave it out until "
    "it answers)"
)


def _timed_out(client: Client, choice: ShardChoice, late: Sequence[int], message: str) -> str:
    """Mark the workers of the ``late`` pieces unresponsive; the error for the first."""
    for i in late:
        _mark_unresponsive(
            client, choice.worker_names[i], f"{_describe_piece(choice, i)}: {message}"
        )
    return f"{_describe_piece(choice, late[0])}: {message}{_LEFT_OUT}"


def _describe_piece(choice: ShardChoice, i: int) -> str:
    start, size = choice.option.ranges[i]
    return (
        f"piece {i} ({choice.option.cut} {start}:{start + size}) of {choice.option.label} "
        f"on worker {choice.worker_names[i]}"
    )


def _one_line(err: BaseException) -> str:
    return f"{type(err).__name__}: {' '.join(str(err).split())}"


def _failure(client: Client, choice: ShardChoice, futures: Sequence[Future]) -> str | None:
    """Why the run cannot complete, or None while it still can. A piece's own error
    comes first, then a worker that left (the cause of any cancellation), then a piece
    Dask cancelled or lost."""
    # The statuses are read before the workers are asked for: they change on the
    # client's event loop, and the scheduler removes a dead worker before it cancels
    # the pieces that needed its data, so a cancellation seen here is explained by
    # the worker list read after it.
    statuses = [f.status for f in futures]
    for i, f in enumerate(futures):
        if statuses[i] == "error":
            return f"{_describe_piece(choice, i)} failed: {_one_line(f.exception())}"
    alive = _alive(client)
    for i, name in enumerate(choice.worker_names):
        if name not in alive:
            return f"{_describe_piece(choice, i)}: the worker left the cluster mid-run"
    for i, status in enumerate(statuses):
        if status in ("cancelled", "lost"):
            return f"{_describe_piece(choice, i)} was {status}"
    return None


def _await_pieces(
    client: Client, choice: ShardChoice, futures: Sequence[Future], deadline: float
) -> list[tuple[np.ndarray, float]]:
    """Wait for every piece while watching its worker; raise on the first failure.
    A worker that dies after finishing takes its result with it, so liveness is checked
    until the results are gathered."""
    from distributed import wait

    while True:
        reason = _failure(client, choice, futures)
        if reason is not None:
            raise ShardExecutionError(reason)
        if all(f.status == "finished" for f in futures):
            # One bounded gather per piece: a frozen holder is named, not waited for.
            calls = [_start(client, client.gather(f, asynchronous=True)) for f in futures]
            try:
                results, late = _wait_each(calls, deadline)
            except Exception as err:
                reason = _failure(client, choice, futures)
                raise ShardExecutionError(
                    reason
                    or f"{choice.option.label}: gathering the pieces failed: {_one_line(err)}"
                ) from err
            if results is None:
                message = "its result did not arrive before the timeout"
                raise ShardExecutionError(_timed_out(client, choice, late, message))
            return [(np.asarray(r), float(sec)) for r, sec in results]
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            late = [i for i, f in enumerate(futures) if f.status != "finished"]
            message = "no result before the timeout"
            raise ShardExecutionError(_timed_out(client, choice, late, message))
        try:
            wait(list(futures), timeout=min(0.1, remaining))
        except TimeoutError:
            pass
        except Exception as err:  # a cancelled piece: the next check says why
            if _failure(client, choice, futures) is None:
                raise ShardExecutionError(f"{choice.option.label}: {_one_line(err)}") from err


def _run_op(
    client: Client,
    op: Operation,
    choice: ShardChoice,
    args: Sequence[np.ndarray],
    resident: Mapping[str, Future],
    timeout: float,
) -> tuple[np.ndarray, OpRun]:
    option = choice.option
    check_option_for(op, option)
    if len(choice.worker_names) != option.n:
        raise ShardError(f"{option.label}: the choice names {len(choice.worker_names)} workers")
    alive = _check_workers(client, choice)
    texts = piece_texts(op, option)
    key = f"rlx-shard-{next(_RUN_IDS)}-{option.label.lstrip('%')}"
    owned: list[Future] = []
    start = time.perf_counter()
    deadline = start + timeout  # covers sending the operands, the pieces and the gather
    choice, moved = _avoid_unresponsive(client, choice, alive, deadline)
    try:
        operands = _scatter_operands(
            client, choice, args, _resident_futures(client, choice, resident), owned,
            deadline, key,
        )  # fmt: skip
        futures = []
        for i, addr in enumerate(choice.worker_names):
            fut = client.submit(
                _worker_piece, texts[i], *operands[i], key=f"{key}-{i}",
                workers=[addr], allow_other_workers=False, pure=False, retries=0,
            )  # fmt: skip
            futures.append(fut)
            owned.append(fut)
        results = _await_pieces(client, choice, futures, deadline)
        value = concat_pieces(option, [r for r, _ in results])
    except (ShardError, ShardExecutionError):
        _cancel(client, owned)
        raise
    except Exception as err:  # a transport failure is as fatal as a worker's death
        _cancel(client, owned)
        raise ShardExecutionError(f"{option.label}: {_one_line(err)}") from err
    wall = time.perf_counter() - start
    client.cancel(owned)
    return value, OpRun(choice, tuple(s for _, s in results), wall, moved)


def _cancel(client: Client, futures: Sequence[Future]) -> None:
    """Cancel a failed run's futures, waiting a few seconds at most: the scheduler
    answers even while a worker is frozen, but nothing here may hang on it."""
    call = _start(client, client.cancel(list(futures), force=True, asynchronous=True))
    concurrent.futures.wait([call], timeout=5.0)


def run_on_dask(
    module_or_op: Operation,
    choice: ShardChoice | Sequence[ShardChoice],
    client: Client,
    inputs: Sequence[ArrayLike] | Mapping[str, ArrayLike],
    params: Mapping[str, ArrayLike] | None = None,
    *,
    resident: Mapping[str, Future] | None = None,
    timeout: float = 60.0,
) -> DaskRun:
    """Execute shard choices on a Dask cluster.

    - an op: ``inputs`` are its operand arrays in order; ``choice`` is one choice for it;
      the result is ``outputs["result"]``;
    - a module: its main graph runs on the reference executor here, except the ops named
      by ``choice`` (one or several, from ``choose`` or ``plan_module``), which run on the
      workers; ``inputs``/``params`` feed the graph's leaves like ``interpreter.run``.

    ``resident`` maps a shared operand's name (``"rhs"``) or tensor (``"w"``) to a future
    every chosen worker already holds. ``timeout`` bounds each sharded op, in seconds; a
    worker it runs out on is unresponsive for later runs on ``client`` (see the module's
    notes and ``unresponsive_workers``): its pieces run elsewhere until it answers, and
    each ``OpRun.moved`` says where.
    """
    choices = [choice] if isinstance(choice, ShardChoice) else list(choice)
    resident = dict(resident or {})
    if isinstance(module_or_op, ModuleOp):
        if not isinstance(inputs, Mapping):
            raise ShardError("a module's inputs are a mapping from input name to array")
        outputs, runs = _run_graph(module_or_op, choices, client, inputs, params, resident, timeout)
        return DaskRun(outputs, tuple(runs))
    if len(choices) != 1:
        raise ShardError(f"an op takes one choice, got {len(choices)}")
    if isinstance(inputs, Mapping):
        raise ShardError("an op's inputs are its operand arrays, in order")
    op = module_or_op
    args = [
        coerce(a, cast(TensorType, v.type), f"operand #{k} of {op.name}")
        for k, (a, v) in enumerate(zip(inputs, op.operands, strict=False))
    ]
    if len(args) != len(op.operands):
        raise ShardError(f"{op.name} takes {len(op.operands)} operands, got {len(inputs)}")
    value, run = _run_op(client, op, choices[0], args, resident, timeout)
    return DaskRun({"result": value}, (run,))


def _run_graph(
    module: ModuleOp,
    choices: Sequence[ShardChoice],
    client: Client,
    inputs: Mapping[str, ArrayLike],
    params: Mapping[str, ArrayLike] | None,
    resident: Mapping[str, Future],
    timeout: float,
) -> tuple[dict[str, np.ndarray], list[OpRun]]:
    name = graph_name(main_graph(module))
    by_index: dict[int, ShardChoice] = {}
    for c in choices:
        if c.option.graph != name:
            raise ShardError(f"{c.option.label} belongs to @{c.option.graph}, not @{name}")
        if c.option.index in by_index:
            raise ShardError(f"two choices for {c.option.label}")
        by_index[c.option.index] = c
    runs: list[OpRun] = []

    def on_workers(index: int, op: Operation, args: list[np.ndarray]) -> list[np.ndarray] | None:
        chosen = by_index.pop(index, None)
        if chosen is None:
            return None
        value, run = _run_op(client, op, chosen, args, resident, timeout)
        runs.append(run)
        return [value]

    result = execute_with(module, inputs, params, on_workers)
    if by_index:
        missing = ", ".join(c.option.label for c in by_index.values())
        raise ShardError(f"no op of @{name} matches the choice for {missing}")
    return result.outputs, runs


__all__ = [
    "PROBE_WAIT_S",
    "DaskRun",
    "ShardExecutionError",
    "calibrate_link",
    "calibrate_workers",
    "measure_local_rate",
    "probe_seconds",
    "run_on_dask",
    "unresponsive_workers",
    "worker_addresses",
]
