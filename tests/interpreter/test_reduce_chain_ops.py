"""``mir.reduce_sum_square``, ``mir.reduce_l2``, ``mir.reduce_l1`` and
``mir.reduce_log_sum`` on the reference executor: bit for bit the chain each means
(``decompose``: mul or abs, reduce_sum, sqrt or log), the import ONNX's ReduceSumSquare,
ReduceL2, ReduceL1 and ReduceLogSum had before the ops existed."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from tests.reduce_cases import assert_bits, op_and_chain

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType

FLOATS = [DType.F32, DType.F64, DType.F16, DType.BF16]
INTS = [DType.I8, DType.I32, DType.I64, DType.U8]
OPS = [mir.ReduceSumSquareOp, mir.ReduceL2Op, mir.ReduceL1Op, mir.ReduceLogSumOp]
AXES = [((1,), False), ((0, 2), True), ((1, 2), False), ((0, 1, 2), True), ((), False)]


def floats(dtype: DType) -> np.ndarray:
    """[3, 4, 5] with signed zeros, infinities, a NaN and values whose square overflows
    f16 / bf16 / f32 alike (so the chain's rounding of the square matters)."""
    x = np.random.default_rng(7).standard_normal((3, 4, 5)) * 4
    x[0, 1, :] = [0.0, -0.0, np.inf, -np.inf, 2.0]
    x[1, 2, 3] = np.nan
    x[2, 0, :] = [300.0, -300.0, 1e20, 3e38, 1e200]
    with np.errstate(all="ignore"):
        return x.astype(ml_dtypes.bfloat16 if dtype is DType.BF16 else dtype.numpy)


def ints(dtype: DType) -> np.ndarray:
    """[3, 4, 5] over the whole range (squares and sums wrap, |min| = min)."""
    lo, hi = dtype.int_range
    x = np.random.default_rng(9).integers(lo, hi, size=(3, 4, 5), endpoint=True)
    x[0, 0, 0] = lo
    return x.astype(dtype.numpy)


def both(op: type[mir.ReduceChainOp], x: np.ndarray, axes: tuple[int, ...], keep: bool):
    """The op's result and its chain's, on the executor."""
    return op_and_chain(
        x, op.name,
        lambda m, v: m.emit(op(v, list(axes), keep)).results[0],
        lambda m, v: op.chain(m, v, list(axes), keep),
    )  # fmt: skip


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.value)
@pytest.mark.parametrize(("axes", "keep"), AXES, ids=str)
def test_floats_are_the_chain_bit_for_bit(
    op: type[mir.ReduceChainOp], dtype: DType, axes: tuple[int, ...], keep: bool
) -> None:
    x = floats(dtype)
    if op is mir.ReduceLogSumOp:
        x = np.abs(x)
    assert_bits(*both(op, x, axes, keep))


@pytest.mark.parametrize("op", [mir.ReduceSumSquareOp, mir.ReduceL1Op], ids=lambda o: o.name)
@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.value)
@pytest.mark.parametrize(("axes", "keep"), AXES, ids=str)
def test_integers_are_the_chain_bit_for_bit(
    op: type[mir.ReduceChainOp], dtype: DType, axes: tuple[int, ...], keep: bool
) -> None:
    assert_bits(*both(op, ints(dtype), axes, keep))


@pytest.mark.parametrize("op", [mir.ReduceL2Op, mir.ReduceLogSumOp], ids=lambda o: o.name)
def test_l2_and_log_sum_refuse_integers(op: type[mir.ReduceChainOp]) -> None:
    with pytest.raises(Exception, match="float element type, got i32"), ModuleBuilder("g") as m:
        m.output(m.emit(op(m.input("x", (2, 3), DType.I32), [1], False)).results[0])


def test_values() -> None:
    x = np.array([[3.0, -4.0], [1.0, 2.0]])
    got = {op: both(op, x, (1,), False)[0] for op in OPS}
    np.testing.assert_array_equal(got[mir.ReduceSumSquareOp], [25.0, 5.0])
    np.testing.assert_array_equal(got[mir.ReduceL2Op], [5.0, np.sqrt(5.0)])
    np.testing.assert_array_equal(got[mir.ReduceL1Op], [7.0, 3.0])
    np.testing.assert_array_equal(got[mir.ReduceLogSumOp], [np.nan, np.log(3.0)])  # log(-1)
