"""The ops the ONNX frontend needs beyond the RLX vocabulary (trigonometric and
hyperbolic functions, fmod, bitwise ops, shifts, cumsum/cumprod, topk, scatter_nd,
bitcast) against independent references: Python's ``math`` per element, Python
integers, sorting in Python, and explicit loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
from interp_testlib import bits_equal, run1, run_op

from rlx_compile.dialects import mir
from rlx_compile.interpreter import ExecutionError

F32, F64 = np.float32, np.float64


def per_element(fn, x: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = []
    for v in x.ravel():
        try:
            out.append(fn(float(v)))
        except (ValueError, OverflowError):
            out.append(math.nan)
    return np.array(out, F64).reshape(x.shape).astype(x.dtype)


def ulp_diff(a: np.ndarray, b: np.ndarray) -> float:
    both_nan = np.isnan(a) & np.isnan(b)
    b64 = b.astype(F64)
    diff = np.abs(a.astype(F64) - b64) / np.spacing(np.abs(b).astype(b.dtype)).astype(F64)
    return float(np.where(both_nan | (a == b), 0, diff).max())


MATH = [
    (mir.TanOp, math.tan, (-1.5, 1.5)),
    (mir.AsinOp, math.asin, (-1.2, 1.2)),
    (mir.AcosOp, math.acos, (-1.2, 1.2)),
    (mir.AtanOp, math.atan, (-50, 50)),
    (mir.SinhOp, math.sinh, (-10, 10)),
    (mir.CoshOp, math.cosh, (-10, 10)),
    (mir.AsinhOp, math.asinh, (-50, 50)),
    (mir.AcoshOp, math.acosh, (0.5, 50)),
    (mir.AtanhOp, math.atanh, (-1.2, 1.2)),
]


@pytest.mark.parametrize(("op", "ref", "domain"), MATH, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("dtype", [F32, F64])
def test_math_ops_match_python(op, ref, domain, dtype) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(1).uniform(*domain, size=300).astype(dtype)
    got = run1(lambda a: [op(a)], x)
    want = per_element(ref, x)
    # Outside the domain (|x| > 1 for asin, x < 1 for acosh...) both are NaN.
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert ulp_diff(got, want) <= 4


def test_atanh_at_one_is_infinite() -> None:
    got = run1(lambda a: [mir.AtanhOp(a)], np.array([1.0, -1.0], F32))
    np.testing.assert_array_equal(got, [np.inf, -np.inf])


def test_fmod_takes_the_sign_of_the_dividend() -> None:
    a = np.array([7.5, -7.5, 7.5, -7.5, 5.0, 0.1], F64)
    b = np.array([2.0, 2.0, -2.0, -2.0, 2.5, 0.03], F64)
    got = run1(lambda x, y: [mir.FmodOp(x, y)], a, b)
    np.testing.assert_array_equal(got, [math.fmod(x, y) for x, y in zip(a, b, strict=True)])
    ai = np.array([7, -7, 7, -7, -128], np.int8)
    bi = np.array([3, 3, -3, -3, 3], np.int8)
    goti = run1(lambda x, y: [mir.FmodOp(x, y)], ai, bi)
    assert bits_equal(goti, np.array([1, -1, 1, -1, -2], np.int8))  # C's %
    modi = run1(lambda x, y: [mir.ModOp(x, y)], ai, bi)
    assert bits_equal(modi, np.array([1, 2, -2, -1, 1], np.int8))  # Python's %


def test_integer_fmod_by_zero_raises() -> None:
    a = np.array([1, 2], np.int32)
    with pytest.raises(ExecutionError, match="modulo by zero"):
        run1(lambda x, y: [mir.FmodOp(x, y)], a, np.array([1, 0], np.int32))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64])
def test_bitwise_ops_match_python_ints(dtype) -> None:  # type: ignore[no-untyped-def]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(2)
    a = rng.integers(info.min, info.max, size=50, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, size=50, dtype=dtype, endpoint=True)
    bits = info.bits

    def wrap(v: int) -> int:  # Python int -> the dtype's two's-complement value
        v &= (1 << bits) - 1
        return v - (1 << bits) if info.min < 0 and v >> (bits - 1) else v

    pairs = zip(a.tolist(), b.tolist(), strict=True)
    cases = [
        (mir.BitwiseAndOp, [wrap(x & y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]),
        (mir.BitwiseOrOp, [wrap(x | y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]),
        (mir.BitwiseXorOp, [wrap(x ^ y) for x, y in pairs]),
    ]
    for op, want in cases:
        got = run1(lambda x, y, op=op: [op(x, y)], a, b)
        assert bits_equal(got, np.array(want, dtype)), op.name
    got = run1(lambda x: [mir.BitwiseNotOp(x)], a)
    assert bits_equal(got, np.array([wrap(~x) for x in a.tolist()], dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint32, np.int64])
def test_shifts_every_amount(dtype) -> None:  # type: ignore[no-untyped-def]
    info = np.iinfo(dtype)
    bits = info.bits
    values = [info.min, -5 if info.min < 0 else 5, 0, 1, 3, info.max]
    amounts = list(range(-2, bits + 3))
    a = np.array([v for v in values for _ in amounts], dtype)
    # Negative amounts of an unsigned type are huge ones: out of range as well.
    wrap = (1 << bits) if info.min == 0 else 0
    s = np.array([k % wrap if wrap else k for _ in values for k in amounts], dtype)

    def as_signed(v: int) -> int:
        v &= (1 << bits) - 1
        return v - (1 << bits) if info.min < 0 and v >> (bits - 1) else v

    left, right = [], []
    for v, k in zip(a.tolist(), s.astype(np.int64).tolist(), strict=True):
        inside = 0 <= k < bits
        left.append(as_signed(v << k) if inside else 0)
        # Python's >> on ints is arithmetic (floor); unsigned values are non-negative.
        right.append(v >> k if inside else (-1 if v < 0 else 0))
    assert bits_equal(run1(lambda x, y: [mir.ShiftLeftOp(x, y)], a, s), np.array(left, dtype))
    assert bits_equal(run1(lambda x, y: [mir.ShiftRightOp(x, y)], a, s), np.array(right, dtype))


def _cumsum_loop(
    x: np.ndarray, axis: int, exclusive: bool, reverse: bool, prod: bool = False
) -> np.ndarray:
    out = np.zeros_like(x)
    moved = np.moveaxis(x, axis, -1)
    res = np.moveaxis(out, axis, -1)
    n = moved.shape[-1]
    for idx in np.ndindex(moved.shape[:-1]):
        order = range(n - 1, -1, -1) if reverse else range(n)
        acc = x.dtype.type(1 if prod else 0)
        for i in order:
            v = moved[(*idx, i)]
            nxt = x.dtype.type(acc * v if prod else acc + v)
            res[(*idx, i)] = acc if exclusive else nxt
            acc = nxt
    return out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cumsum_matches_a_loop(axis: int, exclusive: bool, reverse: bool) -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-100, 100, size=(3, 4, 5)).astype(np.int32)
    got = run1(lambda a: [mir.CumsumOp(a, axis, exclusive, reverse)], x)
    assert bits_equal(got, _cumsum_loop(x, axis, exclusive, reverse))
    # Floats accumulate in index order: with integers-valued f64 the sums are exact.
    xf = x.astype(F64)
    gotf = run1(lambda a: [mir.CumsumOp(a, axis, exclusive, reverse)], xf)
    assert bits_equal(gotf, _cumsum_loop(xf, axis, exclusive, reverse))


def test_cumsum_integers_wrap_and_half_accumulates_in_f32() -> None:
    x = np.array([100, 100, 100], np.int8)
    got = run1(lambda a: [mir.CumsumOp(a, 0)], x)
    assert bits_equal(got, np.array([100, -56, 44], np.int8))
    h = np.full(3000, 1.0, np.float16)  # 2049 is not an f16: an f16 running sum sticks at 2048
    goth = run1(lambda a: [mir.CumsumOp(a, 0)], h)
    assert goth[-1] == np.float16(3000)


def test_cumsum_of_an_empty_axis() -> None:
    x = np.zeros((2, 0), F32)
    got = run1(lambda a: [mir.CumsumOp(a, 1, exclusive=True)], x)
    assert got.shape == (2, 0)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_matches_a_loop(exclusive: bool, reverse: bool) -> None:
    x = np.random.default_rng(4).integers(-3, 4, size=(3, 6)).astype(np.int64)
    for axis in (0, 1):
        got = run1(lambda a, axis=axis: [mir.CumprodOp(a, axis, exclusive, reverse)], x)
        assert bits_equal(got, _cumsum_loop(x, axis, exclusive, reverse, prod=True))


def _topk_reference(row: list[float], k: int, smallest: bool) -> list[int]:
    """Indices by (value, index) in Python: NaN above every number, ties by index."""

    def key(i: int) -> tuple[int, float, int]:
        v = row[i]
        nan = math.isnan(v)
        if smallest:
            return (1 if nan else 0, 0.0 if nan else v, i)
        return (0 if nan else 1, 0.0 if nan else -v, i)

    return sorted(range(len(row)), key=key)[:k]


@pytest.mark.parametrize("smallest", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_topk_orders_values_and_breaks_ties_by_index(smallest: bool, axis: int) -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(-3, 4, size=(6, 7)).astype(F32)  # many ties
    x[2, 3] = np.nan
    x[4, 1] = np.inf
    k = 4
    values, indices = run_op(lambda a: [*mir.TopKOp(a, k, axis, smallest).results], x)
    moved = np.moveaxis(x, axis, -1)
    want_idx = np.array([_topk_reference(r.tolist(), k, smallest) for r in moved])
    np.testing.assert_array_equal(np.moveaxis(indices, axis, -1), want_idx)
    np.testing.assert_array_equal(values, np.take_along_axis(x, indices, axis))
    assert indices.dtype == np.int64


def test_topk_of_integers_at_the_type_limits() -> None:
    x = np.array([[-128, 127, 0, -128, 127]], np.int8)
    values, indices = run_op(lambda a: [*mir.TopKOp(a, 3, 1).results], x)
    np.testing.assert_array_equal(indices, [[1, 4, 2]])
    np.testing.assert_array_equal(values, [[127, 127, 0]])


def _scatter_loop(data, idx, upd, reduction):  # type: ignore[no-untyped-def]
    out = data.copy()
    q = idx.shape[-1]
    flat_idx = idx.reshape(-1, q)
    flat_upd = upd.reshape(len(flat_idx), *data.shape[q:])
    for i, at in enumerate(flat_idx):
        at = tuple(int(a) % data.shape[d] for d, a in enumerate(at))
        if reduction == "none":
            out[at] = flat_upd[i]
        elif reduction == "add":
            out[at] = out[at] + flat_upd[i]
        elif reduction == "mul":
            out[at] = out[at] * flat_upd[i]
        elif reduction == "max":
            out[at] = np.maximum(out[at], flat_upd[i])
        else:
            out[at] = np.minimum(out[at], flat_upd[i])
    return out


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd_applies_updates_in_order(reduction: str) -> None:
    rng = np.random.default_rng(6)
    data = rng.integers(-5, 5, size=(4, 3, 2)).astype(np.int32)
    idx = np.array([[[1, 0], [-1, 2]], [[1, 0], [0, 1]]], np.int64)  # a repeated target
    upd = rng.integers(-5, 5, size=(2, 2, 2)).astype(np.int32)
    got = run1(lambda d, i, u: [mir.ScatterNdOp(d, i, u, reduction)], data, idx, upd)
    assert bits_equal(got, _scatter_loop(data, idx, upd, reduction))


def test_scatter_nd_whole_slices_and_range_errors() -> None:
    data = np.zeros((3, 4), F32)
    idx = np.array([[2], [0]], np.int32)
    upd = np.arange(8, dtype=F32).reshape(2, 4)
    got = run1(lambda d, i, u: [mir.ScatterNdOp(d, i, u)], data, idx, upd)
    np.testing.assert_array_equal(got, [[4, 5, 6, 7], [0, 0, 0, 0], [0, 1, 2, 3]])
    with pytest.raises(ExecutionError, match="out of range"):
        run1(lambda d, i, u: [mir.ScatterNdOp(d, i, u)], data, np.array([[3], [0]], np.int32), upd)


def test_bitcast_reinterprets_bytes() -> None:
    x = np.array([1.0, -2.5, np.inf], F32)
    got = run1(lambda a: [mir.BitcastOp(a, "i32")], x)
    assert bits_equal(got, x.view(np.int32))
    back = run1(lambda a: [mir.BitcastOp(a, "f32")], got)
    assert bits_equal(back, x)
