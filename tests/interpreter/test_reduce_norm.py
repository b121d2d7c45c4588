"""Matmul, reductions, arg-reductions, softmax and the normalisations against naive
Python references (loops over elements, ``math.fsum``)."""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest
from interp_testlib import bits_equal, run1

from rlx_compile.dialects import mir
from rlx_compile.interpreter import ExecutionError

F32, F64, F16 = np.float32, np.float64, np.float16
BF16 = ml_dtypes.bfloat16


def naive_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched [.., M, K] x [.., K, N] by explicit loops, batch dims broadcast."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, (*batch, *a.shape[-2:]))
    b = np.broadcast_to(b, (*batch, *b.shape[-2:]))
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    out = np.zeros((*batch, m, n))
    for idx in itertools.product(*(range(d) for d in batch)):
        for i in range(m):
            for j in range(n):
                out[(*idx, i, j)] = math.fsum(
                    float(a[(*idx, i, t)]) * float(b[(*idx, t, j)]) for t in range(k)
                )
    return out


def test_matmul_broadcasts_batch_dims() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 1, 3, 4)).astype(F64)
    b = rng.normal(size=(5, 4, 2)).astype(F64)
    got = run1(lambda x, y: [mir.MatmulOp(x, y)], a, b)
    assert got.shape == (2, 5, 3, 2)
    np.testing.assert_allclose(got, naive_matmul(a, b), rtol=1e-13, atol=1e-13)


def test_matmul_promotes_vectors() -> None:
    v = np.array([1, 2, 3, 4], F32)
    m = np.arange(12, dtype=F32).reshape(4, 3)
    np.testing.assert_array_equal(run1(lambda x, y: [mir.MatmulOp(x, y)], v, m), [60, 70, 80])
    np.testing.assert_array_equal(
        run1(lambda x, y: [mir.MatmulOp(x, y)], m.T.copy(), v), [60, 70, 80]
    )
    dot = run1(lambda x, y: [mir.MatmulOp(x, y)], v, v)
    assert dot.shape == () and dot == 30


@pytest.mark.parametrize("dtype", [F32, F64, BF16])
def test_matmul_rows_do_not_depend_on_their_neighbours(dtype: type) -> None:
    # BLAS GEMM blocks by M, so a plain np.matmul of a row block differs from the same
    # rows of the whole product in the last bits (checked: it does for these shapes);
    # the reference matmul computes each row alone, which shard's row cuts rely on.
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 37, 300)).astype(dtype)
    b = rng.normal(size=(300, 45)).astype(dtype)
    whole = run1(lambda x, y: [mir.MatmulOp(x, y)], a, b)
    for lo, hi in [(0, 1), (1, 17), (17, 37), (5, 6)]:
        part = run1(lambda x, y: [mir.MatmulOp(x, y)], a[:, lo:hi].copy(), b)
        assert bits_equal(part, whole[:, lo:hi])
    np.testing.assert_allclose(
        whole.astype(F64), naive_matmul(a.astype(F64), b.astype(F64)), rtol=2e-2, atol=0.5
    )


def test_integer_matmul_wraps() -> None:
    a = np.full((1, 3), 100, np.int8)
    b = np.full((3, 1), 2, np.int8)
    assert bits_equal(run1(lambda x, y: [mir.MatmulOp(x, y)], a, b), np.array([[88]], np.int8))


def test_f16_matmul_accumulates_in_f32() -> None:
    # Accumulating in f16 stalls at 2048 (2048 + 1 rounds back to 2048).
    a = np.ones((1, 3000), F16)
    b = np.ones((3000, 1), F16)
    assert run1(lambda x, y: [mir.MatmulOp(x, y)], a, b)[0, 0] == 3000


def test_bf16_matmul_rounds_once() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 64)).astype(BF16)
    b = rng.normal(size=(64, 5)).astype(BF16)
    got = run1(lambda x, y: [mir.MatmulOp(x, y)], a, b)
    exact = naive_matmul(a.astype(F64), b.astype(F64))
    # One rounding of a near-exact f32 sum: within one bf16 ulp of the exact value.
    spacing = (got.view(np.uint16) + 1).view(BF16).astype(F64) - got.astype(F64)
    assert (np.abs(got.astype(F64) - exact) <= np.abs(spacing)).all()


# ---------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------


def naive_reduce(x: np.ndarray, axes: tuple[int, ...], fn) -> np.ndarray:  # type: ignore[no-untyped-def]
    keep = [i for i in range(x.ndim) if i not in axes]
    out = np.zeros([x.shape[i] for i in keep])
    for idx in itertools.product(*(range(x.shape[i]) for i in keep)):
        values = []
        for red in itertools.product(*(range(x.shape[a]) for a in axes)):
            full = [0] * x.ndim
            for i, v in zip(keep, idx, strict=True):
                full[i] = v
            for a, v in zip(axes, red, strict=True):
                full[a] = v
            values.append(float(x[tuple(full)]))
        out[idx] = fn(values)
    return out


REDUCERS = {
    mir.ReduceSumOp: math.fsum,
    mir.ReduceMeanOp: lambda v: math.fsum(v) / len(v),
    mir.ReduceMaxOp: max,
    mir.ReduceMinOp: min,
    mir.ReduceProdOp: math.prod,
}


@pytest.mark.parametrize("op", list(REDUCERS), ids=lambda o: o.name)
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 2), (0, 1, 2)])
def test_reductions_match_loops(op, axes) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 1.5, size=(3, 4, 5)).astype(F64)
    got = run1(lambda a: [op(a, axes)], x)
    np.testing.assert_allclose(got, naive_reduce(x, axes, REDUCERS[op]), rtol=1e-13)
    kept = run1(lambda a: [op(a, axes, keepdims=True)], x)
    assert kept.shape == tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    np.testing.assert_array_equal(kept.reshape(got.shape), got)


def test_reduce_over_no_axes_is_the_identity() -> None:
    x = np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_array_equal(run1(lambda a: [mir.ReduceSumOp(a, [])], x), x)


def test_integer_reductions() -> None:
    x = np.array([[100, 100, 100], [-3, -4, 0]], np.int8)
    assert bits_equal(run1(lambda a: [mir.ReduceSumOp(a, [1])], x), np.array([44, -7], np.int8))
    # Mean: the exact sum divided by the count, truncated toward zero (-7/3 -> -2).
    assert bits_equal(run1(lambda a: [mir.ReduceMeanOp(a, [1])], x), np.array([100, -2], np.int8))
    assert bits_equal(run1(lambda a: [mir.ReduceProdOp(a, [1])], x), np.array([64, 0], np.int8))
    assert bits_equal(run1(lambda a: [mir.ReduceMaxOp(a, [1])], x), np.array([100, 0], np.int8))


def test_bf16_sum_accumulates_in_f32() -> None:
    # In bf16 the running sum would stall at 256 (256 + 1 rounds back).
    x = np.ones(1000, BF16)
    assert run1(lambda a: [mir.ReduceSumOp(a, [0])], x) == 1000


def test_reductions_over_an_empty_axis() -> None:
    x = np.zeros((2, 0), F32)
    np.testing.assert_array_equal(run1(lambda a: [mir.ReduceSumOp(a, [1])], x), [0, 0])
    np.testing.assert_array_equal(run1(lambda a: [mir.ReduceProdOp(a, [1])], x), [1, 1])
    np.testing.assert_array_equal(run1(lambda a: [mir.ReduceMeanOp(a, [1])], x), [np.nan] * 2)
    with pytest.raises(ExecutionError, match=r"mir.reduce_max.*empty axis"):
        run1(lambda a: [mir.ReduceMaxOp(a, [1])], x)
    with pytest.raises(ExecutionError, match=r"mir.argmin.*empty axis"):
        run1(lambda a: [mir.ArgMinOp(a, 1)], x)
    with pytest.raises(ExecutionError, match="integer reduce_mean over an empty axis"):
        run1(lambda a: [mir.ReduceMeanOp(a, [1])], np.zeros((2, 0), np.int32))


def test_reduce_max_min_propagate_nan() -> None:
    x = np.array([[1, np.nan, 3], [1, 2, 3]], F32)
    np.testing.assert_array_equal(run1(lambda a: [mir.ReduceMaxOp(a, [1])], x), [np.nan, 3])
    np.testing.assert_array_equal(run1(lambda a: [mir.ReduceMinOp(a, [1])], x), [np.nan, 1])


def test_argmax_argmin() -> None:
    x = np.array([[1, 5, 5, 0], [2, 2, 1, 1], [0, np.nan, 9, np.nan]], F32)
    amax = run1(lambda a: [mir.ArgMaxOp(a, 1)], x)
    assert amax.dtype == np.int64
    np.testing.assert_array_equal(amax, [1, 0, 1])  # ties: first; NaN counts as the max
    np.testing.assert_array_equal(run1(lambda a: [mir.ArgMinOp(a, 1)], x), [3, 2, 1])
    kept = run1(lambda a: [mir.ArgMaxOp(a, 0, keepdims=True)], x[:2])
    np.testing.assert_array_equal(kept, [[1, 0, 0, 1]])


# ---------------------------------------------------------------------------------
# Softmax
# ---------------------------------------------------------------------------------


def naive_softmax(x: np.ndarray, axis: int, log: bool = False) -> np.ndarray:
    moved = np.moveaxis(x.astype(F64), axis, -1)
    out = np.empty_like(moved)
    for idx in itertools.product(*(range(d) for d in moved.shape[:-1])):
        row = [float(v) for v in moved[idx]]
        m = max(row)
        total = math.fsum(math.exp(v - m) for v in row)
        out[idx] = [(v - m - math.log(total)) if log else math.exp(v - m) / total for v in row]
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_matches_loops(axis: int, log: bool) -> None:
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(2, 3, 4)) * 5).astype(F32)
    x[0, 0, 0] = 1000  # stable: the max is subtracted first
    op = mir.LogSoftmaxOp if log else mir.SoftmaxOp
    got = run1(lambda a: [op(a, axis)], x)
    np.testing.assert_allclose(got, naive_softmax(x, axis, log), rtol=2e-6, atol=1e-6)


def test_softmax_of_a_fully_masked_row_is_nan() -> None:
    x = np.array([[-np.inf, -np.inf], [0, -np.inf]], F32)
    got = run1(lambda a: [mir.SoftmaxOp(a, 1)], x)
    np.testing.assert_array_equal(got, [[np.nan, np.nan], [1, 0]])


def test_bf16_softmax_rounds_once() -> None:
    x = np.linspace(-4, 4, 40).astype(BF16).reshape(4, 10)
    got = run1(lambda a: [mir.SoftmaxOp(a, 1)], x)
    want = naive_softmax(x.astype(F64), 1)
    assert (np.abs(got.astype(F64) - want) <= 2.0**-8 * np.abs(want) * 1.01).all()


# ---------------------------------------------------------------------------------
# Normalisations
# ---------------------------------------------------------------------------------


def _normalise(values: list[float], eps: float, rms: bool) -> list[float]:
    n = len(values)
    if rms:
        denom = math.sqrt(math.fsum(v * v for v in values) / n + eps)
        return [v / denom for v in values]
    mean = math.fsum(values) / n
    var = math.fsum((v - mean) ** 2 for v in values) / n
    return [(v - mean) / math.sqrt(var + eps) for v in values]


def naive_norm(x, scale, bias, axis: int, eps: float, rms: bool) -> np.ndarray:  # type: ignore[no-untyped-def]
    lead, tail = x.shape[:axis], x.shape[axis:]
    flat = x.astype(F64).reshape(math.prod(lead), math.prod(tail))
    s = np.broadcast_to(scale.astype(F64), tail).reshape(-1)
    b = np.zeros(flat.shape[1]) if bias is None else np.broadcast_to(bias, tail).reshape(-1)
    out = np.array([_normalise(list(map(float, row)), eps, rms) for row in flat])
    return (out * s + b).reshape(x.shape)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("axis", [1, 2])
@pytest.mark.parametrize("with_bias", [False, True])
def test_layer_and_rms_norm(rms: bool, axis: int, with_bias: bool) -> None:
    rng = np.random.default_rng(4)
    x = (rng.normal(size=(2, 3, 4)) * 3 + 1).astype(F64)
    tail = x.shape[axis:]
    scale = rng.normal(size=tail[-1:]).astype(F64)  # broadcasts over the normalised dims
    bias = rng.normal(size=tail).astype(F64) if with_bias else None
    op = mir.RmsNormOp if rms else mir.LayerNormOp
    arrays = [x, scale] + ([bias] if bias is not None else [])

    def body(a, s, b=None):  # type: ignore[no-untyped-def]
        return [op(a, s, b, axis=axis, epsilon=1e-3)]

    got = run1(body, *arrays)
    np.testing.assert_allclose(got, naive_norm(x, scale, bias, axis, 1e-3, rms), rtol=1e-12)


def test_bf16_layer_norm_rounds_once() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 64)).astype(BF16)
    scale = np.ones(64, BF16)
    got = run1(lambda a, s: [mir.LayerNormOp(a, s, axis=1, epsilon=1e-5)], x, scale)
    want = naive_norm(x.astype(F64), scale.astype(F64), None, 1, 1e-5, False)
    assert (np.abs(got.astype(F64) - want) <= 2.0**-8 * np.abs(want) * 1.01 + 1e-30).all()


def test_group_norm() -> None:
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 6, 3, 2)).astype(F64)
    scale, bias = rng.normal(size=6), rng.normal(size=6)
    got = run1(lambda a, s, b: [mir.GroupNormOp(a, s, b, groups=3, epsilon=1e-5)], x, scale, bias)
    want = np.empty_like(x)
    for n in range(2):
        for g in range(3):
            chans = range(2 * g, 2 * g + 2)
            values = [float(x[n, c, i, j]) for c in chans for i in range(3) for j in range(2)]
            normed = iter(_normalise(values, 1e-5, False))
            for c in chans:
                for i in range(3):
                    for j in range(2):
                        want[n, c, i, j] = next(normed) * scale[c] + bias[c]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_batch_norm() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3, 4)).astype(F32)
    scale, bias, mean = (rng.normal(size=3).astype(F32) for _ in range(3))
    var = rng.uniform(0.5, 2, size=3).astype(F32)
    got = run1(
        lambda a, s, b, m, v: [mir.BatchNormOp(a, s, b, m, v, epsilon=1e-3)],
        x, scale, bias, mean, var,
    )  # fmt: skip
    want = np.empty(x.shape)
    for n, c, i in itertools.product(range(2), range(3), range(4)):
        normed = (float(x[n, c, i]) - float(mean[c])) / math.sqrt(float(var[c]) + 1e-3)
        want[n, c, i] = normed * float(scale[c]) + float(bias[c])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
