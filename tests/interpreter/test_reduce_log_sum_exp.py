"""``mir.reduce_log_sum_exp`` on the reference executor: bit for bit the chain it means
(``mir.log_sum_exp_chain``: reduce_max, abs, compare, where, sub, exp, reduce_sum, log,
add, reshape), the import ONNX's ReduceLogSumExp had before the op existed."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from tests.reduce_cases import assert_bits, op_and_chain

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType

DTYPES = [DType.F32, DType.F64, DType.F16, DType.BF16]


def rows(dtype: DType) -> np.ndarray:
    """[8, 6]: finite rows, all -inf, one -inf, a +inf, two +inf, a NaN, values whose
    exp overflows unshifted, and -inf with +inf."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 6)) * 3
    x[1] = -np.inf
    x[2, 3] = -np.inf
    x[3, 0] = np.inf
    x[4, [1, 4]] = np.inf
    x[5, 2] = np.nan
    x[6] = [90.0, 88.5, -1e4, 87.0, 60.0, 89.0]
    x[7, [0, 5]] = [-np.inf, np.inf]
    return x.astype(ml_dtypes.bfloat16 if dtype is DType.BF16 else dtype.numpy)


def both(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> tuple[np.ndarray, ...]:
    """The op's result and the chain's, on the executor."""
    return op_and_chain(
        x, "mir.reduce_log_sum_exp",
        lambda m, v: m.log_sum_exp(v, axes, keepdims),
        lambda m, v: mir.log_sum_exp_chain(m, v, axes, keepdims),
    )  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.value)
@pytest.mark.parametrize("keepdims", [False, True])
def test_rows_with_infinities_and_nan_are_the_chain_bit_for_bit(
    dtype: DType, keepdims: bool
) -> None:
    got, want = both(rows(dtype), (1,), keepdims)
    assert_bits(got, want)
    g = got.astype(np.float64).reshape(-1)
    assert g[1] == -np.inf and g[3] == np.inf and g[4] == np.inf and np.isnan(g[5])
    assert g[7] == np.inf and np.isfinite(g[6]) and np.isfinite(g[2])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.value)
@pytest.mark.parametrize(
    ("axes", "keepdims"),
    [((0,), False), ((0, 2), True), ((1, 2), False), ((0, 1, 2), True), ((), False)],
)
def test_any_axes_are_the_chain_bit_for_bit(
    dtype: DType, axes: tuple[int, ...], keepdims: bool
) -> None:
    x = np.random.default_rng(5).standard_normal((3, 4, 5)) * 4
    x[0, 1, :] = -np.inf
    x[2, :, 3] = np.inf
    x[1, 2, 2] = np.nan
    got, want = both(
        x.astype(ml_dtypes.bfloat16 if dtype is DType.BF16 else dtype.numpy), axes, keepdims
    )
    assert_bits(got, want)


def test_matches_the_unshifted_formula_where_it_does_not_overflow() -> None:
    x = np.random.default_rng(0).standard_normal((4, 7))
    got, _ = both(x, (1,), False)
    np.testing.assert_allclose(got, np.log(np.exp(x).sum(axis=1)), rtol=1e-14)
