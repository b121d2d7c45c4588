"""The C++ liveness intervals equal the pure-Python twin on thousands of random DAGs."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile.memory import liveness_intervals
from rlx_compile.testing.twins import liveness_intervals_py


def random_schedule(rng: np.random.Generator, n: int):
    """A random DAG in topological order: tensor t is written at step t and read by up to
    four later steps; a few tensors are graph outputs."""
    offsets = [0]
    consumers: list[int] = []
    for t in range(n):
        if t + 1 < n:
            k = int(rng.integers(0, 5))
            readers = sorted(set(rng.integers(t + 1, n, size=k).tolist()))
            consumers.extend(readers)
        offsets.append(len(consumers))
    is_output = (rng.random(n) < 0.1).astype(np.int64)
    return np.arange(n), np.array(offsets), np.array(consumers, dtype=np.int64), is_output


def test_matches_python_twin_on_random_dags() -> None:
    rng = np.random.default_rng(1234)
    for case in range(3000):
        n = int(rng.integers(1, 60))
        producer, offsets, consumers, outputs = random_schedule(rng, n)
        got = liveness_intervals(producer, offsets, consumers, outputs, n)
        want = liveness_intervals_py(producer, offsets, consumers, outputs, n)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), case


def test_closed_intervals_by_hand() -> None:
    # t0 read at steps 1 and 2; t1 read at 2; t2 is an output.
    birth, death = liveness_intervals([0, 1, 2], [0, 2, 3, 3], [1, 2, 2], [0, 0, 1], 3)
    assert birth.tolist() == [0, 1, 2]
    assert death.tolist() == [2, 2, 3]


def test_large_schedule() -> None:
    rng = np.random.default_rng(7)
    producer, offsets, consumers, outputs = random_schedule(rng, 20_000)
    birth, death = liveness_intervals(producer, offsets, consumers, outputs, 20_000)
    assert (death >= birth).all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0, 1], [0, 1], [1], [0, 0], 2), "consumer_offsets has length 2"),
        (([0, 1], [0, 1, 1], [1], [0], 2), "is_output has length 1"),
        (([0, 1], [0, 1, 1], [0], [0, 0], 2), r"consumer_steps\[0\] = 0 of tensor 0"),
        (([0, 5], [0, 0, 0], [], [0, 0], 2), r"producer_step\[1\] = 5"),
        (([0, 1], [0, 2, 1], [1], [0, 0], 2), "not non-decreasing at index 2"),
        (([0, 1], [1, 1, 1], [1], [0, 0], 2), r"consumer_offsets\[0\] must be 0"),
    ],
)
def test_invalid_input_is_a_value_error(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        liveness_intervals(*args)
