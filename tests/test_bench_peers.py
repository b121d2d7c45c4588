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
