"""bench/peers.py's timing harness: what a timed run is charged with."""

from __future__ import annotations

import sys
import weakref
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class _Cyclic:
    """A result only Python's collector frees (as our IR is: ops, values and uses form
    reference cycles)."""

    def __init__(self) -> None:
        self.me = self


def test_best_of_runs_each_time_with_the_previous_result_freed() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import peers
    finally:
        sys.path.remove(str(ROOT / "bench"))
    made: list[weakref.ref[_Cyclic]] = []
    alive_at_start: list[int] = []

    def run() -> _Cyclic:
        alive_at_start.append(sum(r() is not None for r in made))
        result = _Cyclic()
        made.append(weakref.ref(result))
        return result

    out: Any
    out, seconds = peers.best_of(3, run)
    assert alive_at_start == [0, 0, 0]
    assert out is made[-1]() and seconds >= 0


def test_the_compilers_runs_are_interleaved_each_with_every_earlier_result_freed() -> None:
    """Nothing of an earlier run is alive during a timed one: an onnxruntime session left
    alive keeps its thread pool, whose spinning the next compile's process time counts."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import peers
    finally:
        sys.path.remove(str(ROOT / "bench"))
    made: list[weakref.ref[_Cyclic]] = []
    order: list[tuple[str, int]] = []  # (which, earlier results alive)

    def runner(which: str) -> Any:
        def run() -> _Cyclic:
            order.append((which, sum(r() is not None for r in made)))
            result = _Cyclic()
            made.append(weakref.ref(result))
            return result

        return run

    times, last = peers.best_of_each(3, {"a": runner("a"), "b": runner("b")})
    assert order == [("a", 0), ("b", 0), ("b", 0), ("a", 0), ("a", 0), ("b", 0)]
    assert last is made[-1]() and set(times) == {"a", "b"}
    assert all(seconds >= 0 for seconds in times.values())


def test_times_from_several_processes_are_their_medians() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import peers
    finally:
        sys.path.remove(str(ROOT / "bench"))
    runs = [
        {"rlx_s": 3.0, "ort_s": 1.0, "slim_s": None, "ops": 5},
        {"rlx_s": 1.0, "ort_s": 2.0, "slim_s": None, "ops": 5},
        {"rlx_s": 2.0, "ort_s": 4.0, "slim_s": None, "ops": 5},
    ]
    merged = peers.merge_processes(runs)
    assert merged == {"rlx_s": 2.0, "ort_s": 2.0, "slim_s": None, "ops": 5}
    assert runs[0]["rlx_s"] == 3.0  # the processes' own results are left as they were
