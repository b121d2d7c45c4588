"""quantize / dequantize / fake_quantize: hand-computed values, per-element references
for the per-axis forms, and the round-trip bound |dq(q(x)) - x| <= scale/2 in range."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from interp_testlib import bits_equal, run1

from rlx_compile.dialects import mir

F32, F64 = np.float32, np.float64
E4M3, E5M2 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
BF16 = ml_dtypes.bfloat16


def quantize(x, scale, zp=None, *, dtype="i8", axis=None):  # type: ignore[no-untyped-def]
    if zp is None:
        return run1(lambda a, s: [mir.QuantizeOp(a, s, dtype=dtype, axis=axis)], x, scale)
    return run1(lambda a, s, z: [mir.QuantizeOp(a, s, z, dtype=dtype, axis=axis)], x, scale, zp)


def dequantize(q, scale, zp=None, *, axis=None):  # type: ignore[no-untyped-def]
    if zp is None:
        return run1(lambda a, s: [mir.DequantizeOp(a, s, axis=axis)], q, scale)
    return run1(lambda a, s, z: [mir.DequantizeOp(a, s, z, axis=axis)], q, scale, zp)


def fake_quantize(x, scale, zp, qmin=-128, qmax=127, axis=None):  # type: ignore[no-untyped-def]
    return run1(
        lambda a, s, z: [mir.FakeQuantizeOp(a, s, z, quant_min=qmin, quant_max=qmax, axis=axis)],
        x,
        scale,
        zp,
    )


X = F32([0, 0.25, 0.75, -0.25, 1.25, 100, -100, np.nan, np.inf, -1.25])


def test_quantize_rounds_half_to_even_and_saturates() -> None:
    # x / 0.5 = [0, .5, 1.5, -.5, 2.5, 200, -200, nan, inf, -2.5]
    got = quantize(X, F32([0.5]))
    assert bits_equal(got, np.array([0, 0, 2, 0, 2, 127, -128, 0, 127, -2], np.int8))


def test_quantize_with_zero_point() -> None:
    got = quantize(X, F32(0.5), np.array(10, np.int8))
    # -200 + 10 = -190 saturates; the zero point is added before saturation.
    assert bits_equal(got, np.array([10, 10, 12, 10, 12, 127, -128, 0, 127, 8], np.int8))
    u = quantize(X, F32(0.5), np.array(128, np.uint8), dtype="u8")
    assert bits_equal(u, np.array([128, 128, 130, 128, 130, 255, 0, 0, 255, 126], np.uint8))


def test_quantize_per_axis() -> None:
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(F32) * 20
    scale = F32([0.1, 1, 10])
    zp = np.array([0, 3, -5], np.int8)
    got = quantize(x, scale, zp, axis=1)
    for idx in np.ndindex(x.shape):
        c = idx[1]
        q = round(float(x[idx] / scale[c])) + int(zp[c])  # round() is half-to-even
        assert got[idx] == min(max(q, -128), 127), idx


@pytest.mark.parametrize(("dtype", "name"), [(E4M3, "f8e4m3"), (E5M2, "f8e5m2")])
def test_quantize_to_f8_saturates(dtype, name: str) -> None:  # type: ignore[no-untyped-def]
    top = float(ml_dtypes.finfo(dtype).max)
    x = F32([1.0, 3.3, 1e9, -1e9, np.inf, -np.inf, np.nan, 0.0])
    got = quantize(x, F32(2.0), dtype=name)
    assert got.dtype == dtype
    half = (x / 2).astype(F64)
    # In range: the nearest f8 value (ml_dtypes rounds f32 -> f8 to nearest even).
    assert bits_equal(got[:2], half[:2].astype(F32).astype(dtype))
    np.testing.assert_array_equal(got[2:6].astype(F64), [top, -top, top, -top])
    assert np.isnan(got[6].astype(F64)) and got[7] == 0


def test_dequantize() -> None:
    q = np.array([-128, 0, 5, 127], np.int8)
    got = dequantize(q, F32(0.5), np.array(-3, np.int8))
    assert bits_equal(got, F32([-62.5, 1.5, 4, 65]))
    per_axis = dequantize(
        np.array([[1, 2], [3, 4]], np.int8), F32([2, 0.25]), np.array([1, -1], np.int8), axis=1
    )
    assert bits_equal(per_axis, F32([[0, 0.75], [4, 1.25]]))
    # q - zp is taken exactly: both would round to 2^24 as f32 before subtracting.
    big = dequantize(np.array([2**24 + 1], np.int32), F32([1]), np.array([2**24 - 1], np.int32))
    assert big[0] == 2
    assert dequantize(np.array([3], np.int8), F64(0.1)).dtype == F64  # the scale's type


@pytest.mark.parametrize("axis", [None, 1])
def test_round_trip_error_is_at_most_half_a_step(axis: int | None) -> None:
    rng = np.random.default_rng(1)
    scale = F32([0.037]) if axis is None else F32([0.037, 0.5, 3.0])
    zp = np.array([7], np.int8) if axis is None else np.array([7, -20, 0], np.int8)
    s = scale.reshape(1, -1) if axis is not None else scale
    z = zp.astype(F64).reshape(1, -1) if axis is not None else zp.astype(F64)
    lo, hi = (-128 - z) * s, (127 - z) * s
    x = (lo + (hi - lo) * rng.random((4000, scale.size))).astype(F32)
    q = quantize(x, scale, zp, axis=axis)
    back = dequantize(q, scale, zp, axis=axis)
    err = np.abs(back.astype(F64) - x.astype(F64))
    assert (err <= s.astype(F64) / 2 * (1 + 1e-6)).all()
    # Out of range: saturation, so the error is the distance to the range's end.
    far = quantize(np.full_like(x[:1], 1e6), scale, zp, axis=axis)
    assert (far == 127).all()


def test_fake_quantize_equals_dequantize_of_quantize_over_the_full_range() -> None:
    rng = np.random.default_rng(2)
    x = (rng.normal(size=(3, 50)) * 40).astype(F32)
    scale, zp = F32([0.3, 0.05, 2.0]), np.array([4, -9, 0], np.int8)
    fq = fake_quantize(x, scale, zp, axis=0)
    dq = dequantize(quantize(x, scale, zp, axis=0), scale, zp, axis=0)
    assert bits_equal(fq, dq)


def test_fake_quantize_clamps_to_its_range() -> None:
    x = F32([-100, -1.0, -0.3, 0.26, 0.74, 100, np.nan])
    got = fake_quantize(x, F32(0.5), np.array(1, np.int32), qmin=-8, qmax=7)
    # q = clamp(rint(x / .5) + 1, -8, 7) = [-8, -1, 0, 2, 2, 7]; (q - 1) * .5
    np.testing.assert_array_equal(got, F32([-4.5, -1, -0.5, 0.5, 0.5, 3, np.nan]))


def test_bf16_fake_quantize_stays_bf16() -> None:
    x = np.array([0.3, -2.6, 9.0], BF16)
    got = fake_quantize(x, np.array([0.25], BF16), np.array([0], np.int8))
    assert got.dtype == BF16
    np.testing.assert_array_equal(got.astype(F32), [0.25, -2.5, 9.0])
