"""The tree ops' verifier finds out-of-range table entries by two reductions first
(``_first_outside``): the same position as the elementwise test it stands in for."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile.dialects.mir import _first_bad, _first_outside


@pytest.mark.parametrize("seed", range(30))
def test_first_outside_finds_what_the_elementwise_test_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(-6, 12, rng.integers(0, 20)).astype(np.int64)
    low, high = sorted(int(v) for v in rng.integers(-8, 14, 2))
    expected = _first_bad((values < low) | (values >= high))
    assert _first_outside(values, low, high) == expected
