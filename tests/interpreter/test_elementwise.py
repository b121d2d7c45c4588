"""Elementwise ops, compare/where and cast against independent references: Python's
``math`` evaluated per element, hand-computed cases, and exact rational arithmetic for
the rounding of casts."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from interp_testlib import bits_equal, run1

from rlx_compile.dialects import mir
from rlx_compile.interpreter import ExecutionError
from rlx_compile.interpreter.special import erf_erfc

F32, F64, F16 = np.float32, np.float64, np.float16
BF16 = ml_dtypes.bfloat16
E4M3 = ml_dtypes.float8_e4m3fn


def ulp_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in units of b's last place (in b's dtype)."""
    b64 = b.astype(F64)
    return np.abs(a.astype(F64) - b64) / np.spacing(np.abs(b).astype(b.dtype)).astype(F64)


def per_element(fn, x: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The reference: ``fn`` on each element as a Python float, rounded to x's dtype."""
    return np.array([fn(float(v)) for v in x.ravel()], dtype=F64).reshape(x.shape).astype(x.dtype)


def _sigmoid(v: float) -> float:
    return 1 / (1 + math.exp(-v)) if v >= 0 else math.exp(v) / (1 + math.exp(v))


def _softplus(v: float) -> float:
    return v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))


MATH_REFERENCES = [
    (mir.ExpOp, math.exp),
    (mir.LogOp, math.log),
    (mir.SqrtOp, math.sqrt),
    (mir.RsqrtOp, lambda v: 1 / math.sqrt(v)),
    (mir.ReciprocalOp, lambda v: 1 / v),
    (mir.TanhOp, math.tanh),
    (mir.SigmoidOp, _sigmoid),
    (mir.SiluOp, lambda v: v * _sigmoid(v)),
    (mir.SinOp, math.sin),
    (mir.CosOp, math.cos),
    (mir.SoftplusOp, _softplus),
    (mir.ErfOp, math.erf),
]


@pytest.mark.parametrize(("op", "ref"), MATH_REFERENCES, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("dtype", [F32, F64])
def test_unary_float_ops_match_math(op, ref, dtype) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    x = rng.uniform(-6, 6, size=200).astype(dtype)
    if op in (mir.LogOp, mir.SqrtOp, mir.RsqrtOp):
        x = np.abs(x) + dtype(0.01)
    got = run1(lambda a: [op(a)], x)
    assert got.dtype == dtype
    # NumPy's exp/sin/... are not correctly rounded, math's are (nearly): allow 2 ulp;
    # the series/continued-fraction erf is within 5 ulp in float64.
    assert ulp_diff(got, per_element(ref, x)).max() <= (5 if op is mir.ErfOp else 2)


def test_integer_unary_ops_wrap() -> None:
    x = np.array([-128, -1, 0, 5, 127], np.int8)
    assert bits_equal(run1(lambda a: [mir.NegOp(a)], x), np.array([-128, 1, 0, -5, -127], np.int8))
    assert bits_equal(run1(lambda a: [mir.AbsOp(a)], x), np.array([-128, 1, 0, 5, 127], np.int8))
    assert bits_equal(run1(lambda a: [mir.ReluOp(a)], x), np.array([0, 0, 0, 5, 127], np.int8))
    assert bits_equal(run1(lambda a: [mir.SignOp(a)], x), np.array([-1, -1, 0, 1, 1], np.int8))
    u = np.array([0, 1, 255], np.uint8)
    assert bits_equal(run1(lambda a: [mir.NegOp(a)], u), np.array([0, 255, 1], np.uint8))


def test_float_unary_special_values() -> None:
    x = np.array([np.nan, -np.inf, np.inf, -2.0, 0.0], F32)
    relu = run1(lambda a: [mir.ReluOp(a)], x)
    np.testing.assert_array_equal(relu, [np.nan, 0, np.inf, 0, 0])
    sign = run1(lambda a: [mir.SignOp(a)], x)
    np.testing.assert_array_equal(sign, [np.nan, -1, 1, -1, 0])
    silu = run1(lambda a: [mir.SiluOp(a)], x)
    np.testing.assert_array_equal(silu[1:3], [0, np.inf])  # the limits, not -inf * 0
    sig = run1(lambda a: [mir.SigmoidOp(a)], np.array([-100, 100, -np.inf], F32))
    np.testing.assert_array_equal(sig[1:], [1, 0])
    assert sig[0] > 0 and abs(sig[0] / F32(math.exp(-100)) - 1) < 1e-3  # subnormal, not 0


def test_not() -> None:
    x = np.array([True, False])
    np.testing.assert_array_equal(run1(lambda a: [mir.NotOp(a)], x), [False, True])


def test_floor_ceil_round_half_even() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.4999, -1.2, 3.7], F32)
    np.testing.assert_array_equal(
        run1(lambda a: [mir.RoundOp(a)], x), [0, 2, 2, -0.0, -2, 2, -1, 4]
    )
    np.testing.assert_array_equal(run1(lambda a: [mir.FloorOp(a)], x), [0, 1, 2, -1, -3, 2, -2, 3])
    np.testing.assert_array_equal(run1(lambda a: [mir.CeilOp(a)], x), [1, 2, 3, -0.0, -2, 3, -1, 4])


def test_softplus_does_not_overflow() -> None:
    x = np.array([1000, -1000, 0, 30, 88.8, -88.8], F32)
    got = run1(lambda a: [mir.SoftplusOp(a)], x)
    assert np.isfinite(got).all()
    assert ulp_diff(got, per_element(_softplus, x)).max() <= 1
    assert got[0] == 1000 and got[1] == 0


# ---------------------------------------------------------------------------------
# erf and gelu
# ---------------------------------------------------------------------------------


def test_erf_erfc_float64_accuracy() -> None:
    x = np.concatenate([np.linspace(-27, 27, 20001), np.geomspace(1e-300, 1, 200)])
    erf, erfc = erf_erfc(x)
    ref_erf = per_element(math.erf, x)
    ref_erfc = per_element(math.erfc, x)
    assert ulp_diff(erf, ref_erf).max() <= 5
    assert ulp_diff(erfc, ref_erfc).max() <= 20
    edge_erf, edge_erfc = erf_erfc(np.array([np.inf, -np.inf, np.nan, -0.0, 40.0]))
    np.testing.assert_array_equal(edge_erf, [1, -1, np.nan, -0.0, 1])
    np.testing.assert_array_equal(edge_erfc, [0, 2, np.nan, 1, 0])
    assert math.copysign(1, edge_erf[3]) == -1


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_erf_op_is_math_erf_rounded_once(dtype) -> None:  # type: ignore[no-untyped-def]
    x = np.linspace(-4, 4, 801).astype(dtype)
    got = run1(lambda a: [mir.ErfOp(a)], x)
    # math.erf -> f32 (the compute type) -> op dtype, the one rounding path of the spec
    want = np.array([math.erf(float(v)) for v in x], F64).astype(F32).astype(dtype)
    assert bits_equal(got, want)


def _gelu_ref(v: float) -> float:
    return 0.5 * v * (1 + math.erf(v / math.sqrt(2)))


def test_gelu_exact_matches_math_erf() -> None:
    x = np.linspace(-5, 5, 2001).astype(F32)
    got = run1(lambda a: [mir.GeluOp(a)], x)
    assert ulp_diff(got, per_element(_gelu_ref, x)).max() <= 1


def test_gelu_exact_keeps_the_negative_tail() -> None:
    # 1 + erf(x/√2) cancels to 0 in float64 here; the value itself is a normal f32.
    x = np.array([-10.0, -12.0], F32)
    got = run1(lambda a: [mir.GeluOp(a)], x)
    want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(F64)])
    np.testing.assert_allclose(got, want.astype(F32), rtol=1e-6)
    assert (got < 0).all()


def test_gelu_special_values() -> None:
    x = np.array([-np.inf, np.inf, np.nan, 0.0], F32)
    for approximate in ("none", "tanh"):
        got = run1(lambda a, approximate=approximate: [mir.GeluOp(a, approximate)], x)
        np.testing.assert_array_equal(got, [0, np.inf, np.nan, 0])


def test_gelu_tanh_form() -> None:
    x = np.linspace(-6, 6, 1201).astype(F32)
    got = run1(lambda a: [mir.GeluOp(a, "tanh")], x)
    k = math.sqrt(2 / math.pi)

    def ref(v: float) -> float:
        return 0.5 * v * (1 + math.tanh(k * (v + 0.044715 * v**3)))

    want = per_element(ref, x)
    core = x >= -1
    assert ulp_diff(got[core], want[core]).max() <= 4
    # The tail is computed, not cancelled to -0 (as 1 + tanh(u) would be in f32); its
    # error grows with |u| because u itself is rounded to f32 (condition number ~2|u|).
    np.testing.assert_allclose(got[~core], want[~core], rtol=1e-5)
    assert (got[~core] < 0).all()
    # And it is the approximation, not the exact form (they differ by up to ~1e-3).
    exact = run1(lambda a: [mir.GeluOp(a)], x)
    assert 1e-4 < np.abs(got - exact).max() < 1e-2


# ---------------------------------------------------------------------------------
# Low precision: compute in f32, round once
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F16, BF16, E4M3])
def test_low_precision_unary_rounds_the_f32_result_once(dtype) -> None:  # type: ignore[no-untyped-def]
    x = np.linspace(-3, 3, 97).astype(dtype)
    for op, fn in ((mir.ExpOp, np.exp), (mir.TanhOp, np.tanh)):
        got = run1(lambda a, op=op: [op(a)], x)
        assert bits_equal(got, fn(x.astype(F32)).astype(dtype))


def test_low_precision_gelu_tanh_is_one_rounding_not_many() -> None:
    x = np.linspace(-3, 3, 601).astype(BF16)
    got = run1(lambda a: [mir.GeluOp(a, "tanh")], x)
    xf = x.astype(F64)
    ref = 0.5 * xf * (1 + np.tanh(math.sqrt(2 / math.pi) * (xf + 0.044715 * xf**3)))
    # One rounding of an (almost exact) f32 value: within half a bf16 ulp + f32 noise.
    assert ulp_diff(got, ref.astype(BF16)).max() <= 1
    assert (np.abs(got.astype(F64) - ref) <= np.spacing(np.abs(got)).astype(F64) * 0.51).all()


def test_low_precision_binary_ops() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=64).astype(BF16)
    b = rng.normal(size=64).astype(BF16)
    for op, fn in ((mir.AddOp, np.add), (mir.MulOp, np.multiply), (mir.DivOp, np.divide)):
        got = run1(lambda x, y, op=op: [op(x, y)], a, b)
        assert bits_equal(got, fn(a.astype(F32), b.astype(F32)).astype(BF16))


# ---------------------------------------------------------------------------------
# Binary ops
# ---------------------------------------------------------------------------------


def binop(op, a: np.ndarray, b: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    return run1(lambda x, y: [op(x, y)], a, b)


def test_broadcasting() -> None:
    a = np.arange(6, dtype=F32).reshape(2, 1, 3)
    b = np.arange(4, dtype=F32).reshape(4, 1)
    got = binop(mir.SubOp, a, b)
    assert got.shape == (2, 4, 3)
    np.testing.assert_array_equal(got, a - b)


def test_integer_arithmetic_wraps() -> None:
    a = np.array([100, -100, 127], np.int8)
    b = np.array([100, -100, 1], np.int8)
    assert bits_equal(binop(mir.AddOp, a, b), np.array([-56, 56, -128], np.int8))
    assert bits_equal(binop(mir.MulOp, a, b), np.array([16, 16, 127], np.int8))
    u = np.array([0, 1], np.uint8)
    assert bits_equal(
        binop(mir.SubOp, u, np.array([1, 2], np.uint8)), np.array([255, 255], np.uint8)
    )


def test_integer_division_truncates_toward_zero() -> None:
    a = np.array([7, -7, 7, -7, 6, -1, -128], np.int8)
    b = np.array([2, 2, -2, -2, 3, 5, -1], np.int8)
    # -128 / -1 = 128 wraps to -128, as on two's-complement hardware.
    want = np.array([3, -3, -3, 3, 2, 0, -128], np.int8)
    assert bits_equal(binop(mir.DivOp, a, b), want)
    u = np.array([7, 200], np.uint8)
    assert bits_equal(binop(mir.DivOp, u, np.array([2, 3], np.uint8)), np.array([3, 66], np.uint8))


def test_mod_takes_the_sign_of_the_divisor() -> None:
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    assert bits_equal(binop(mir.ModOp, a, b), np.array([1, 1, -1, -1], np.int32))
    fa = np.array([5.5, -5.5, 5.5, -5.5], F32)
    fb = np.array([2, 2, -2, -2], F32)
    np.testing.assert_array_equal(binop(mir.ModOp, fa, fb), [1.5, 0.5, -0.5, -1.5])
    np.testing.assert_array_equal(binop(mir.ModOp, fa[:1], F32([0])), [np.nan])


@pytest.mark.parametrize("op", [mir.DivOp, mir.ModOp])
def test_integer_division_by_zero_is_an_error(op) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ExecutionError, match=rf"{op.name}.*by zero"):
        binop(op, np.array([1, 2], np.int32), np.array([1, 0], np.int32))


def test_float_division_by_zero_is_ieee() -> None:
    got = binop(mir.DivOp, F32([1, -1, 0]), F32([0, 0, 0]))
    np.testing.assert_array_equal(got, [np.inf, -np.inf, np.nan])


def test_pow() -> None:
    got = binop(mir.PowOp, F32([2, 4, -8, 0]), F32([10, 0.5, 1 / 3, 0]))
    np.testing.assert_array_equal(got[[0, 1, 3]], [1024, 2, 1])
    assert np.isnan(got[2])  # negative base, fractional exponent
    a = np.array([2, 1, -1, -1, 3, 2, -3], np.int32)
    b = np.array([-1, -5, -3, -2, 2, 0, 3], np.int32)
    # a^-n = 1/a^n truncated toward zero: only ±1 survive.
    assert bits_equal(binop(mir.PowOp, a, b), np.array([0, 1, -1, 1, 9, 1, -27], np.int32))
    assert bits_equal(
        binop(mir.PowOp, np.array([2], np.int8), np.array([7], np.int8)), np.array([-128], np.int8)
    )
    with pytest.raises(ExecutionError, match="zero raised to a negative power"):
        binop(mir.PowOp, np.array([0], np.int32), np.array([-1], np.int32))


def test_max_min_propagate_nan() -> None:
    a = F32([np.nan, 1, 3, -0.0])
    b = F32([1, np.nan, 2, 5])
    np.testing.assert_array_equal(binop(mir.MaxOp, a, b), [np.nan, np.nan, 3, 5])
    np.testing.assert_array_equal(binop(mir.MinOp, a, b), [np.nan, np.nan, 2, -0.0])
    np.testing.assert_array_equal(binop(mir.MaxOp, b, a), [np.nan, np.nan, 3, 5])


def test_logical_ops() -> None:
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    np.testing.assert_array_equal(binop(mir.AndOp, a, b), [0, 0, 0, 1])
    np.testing.assert_array_equal(binop(mir.OrOp, a, b), [0, 1, 1, 1])
    np.testing.assert_array_equal(binop(mir.XorOp, a, b), [0, 1, 1, 0])


@pytest.mark.parametrize(
    ("predicate", "want"),
    [
        ("eq", [0, 1, 0, 0]),
        ("ne", [1, 0, 1, 1]),
        ("lt", [1, 0, 0, 0]),
        ("le", [1, 1, 0, 0]),
        ("gt", [0, 0, 1, 0]),
        ("ge", [0, 1, 1, 0]),
    ],
)
@pytest.mark.parametrize("dtype", [F32, BF16, np.int16])
def test_compare(predicate: str, want: list[int], dtype) -> None:  # type: ignore[no-untyped-def]
    a = np.array([1, 2, 3, 0], F32)
    b = np.array([2, 2, 2, np.nan], F32)
    if np.dtype(dtype).kind == "i":
        b[3] = 7
        want = [
            *want[:3],
            {"eq": 0, "ne": 1, "lt": 1, "le": 1, "gt": 0, "ge": 0}[predicate],
        ]
    got = run1(lambda x, y: [mir.CompareOp(predicate, x, y)], a.astype(dtype), b.astype(dtype))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, np.array(want, bool))


def test_where_broadcasts() -> None:
    cond = np.array([[True], [False]])
    t = np.arange(3, dtype=np.int64)
    f = np.array(-1, np.int64)
    got = run1(lambda c, x, y: [mir.WhereOp(c, x, y)], cond, t, f)
    np.testing.assert_array_equal(got, [[0, 1, 2], [-1, -1, -1]])


# ---------------------------------------------------------------------------------
# Cast
# ---------------------------------------------------------------------------------


def cast(x: np.ndarray, dtype: str) -> np.ndarray:
    return run1(lambda a: [mir.CastOp(a, dtype)], x)


def test_cast_float_to_int_truncates_and_saturates() -> None:
    x = F32([2.7, -2.7, 0.5, -0.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 127.9, -128.9])
    want = [2, -2, 0, 0, 127, -128, 0, 127, -128, 127, -128]
    assert bits_equal(cast(x, "i8"), np.array(want, np.int8))
    assert bits_equal(cast(F32([-5, 300, 255.5, -0.9]), "u8"), np.array([0, 255, 255, 0], np.uint8))
    big = F64([2.0**63, -(2.0**63), 9.2e18, -9.3e18, 2.0**64])
    i64 = np.iinfo(np.int64)
    assert bits_equal(
        cast(big, "i64"), np.array([i64.max, i64.min, 9200000000000000000, i64.min, i64.max])
    )
    assert bits_equal(cast(F64([2.0**64, 2.0**63]), "u64"), np.array([2**64 - 1, 2**63], np.uint64))


def test_cast_to_and_from_bool() -> None:
    np.testing.assert_array_equal(cast(F32([0, -0.0, np.nan, 2, -1e-30]), "bool"), [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(cast(np.array([0, 3, -1], np.int32), "bool"), [0, 1, 1])
    assert bits_equal(cast(np.array([True, False]), "f32"), F32([1, 0]))
    assert bits_equal(cast(np.array([True, False]), "i64"), np.array([1, 0], np.int64))


def test_cast_int_to_int_wraps() -> None:
    assert bits_equal(
        cast(np.array([300, -129, 127], np.int32), "i8"), np.array([44, 127, 127], np.int8)
    )
    assert bits_equal(cast(np.array([-1], np.int8), "u16"), np.array([65535], np.uint16))


def test_cast_float_rounds_half_to_even() -> None:
    one = 1.0
    x = F32([one + 2**-8, one + 3 * 2**-8, -(one + 2**-8)])
    assert bits_equal(cast(x, "bf16"), np.array([1, 1 + 2**-6, -1], BF16))


def _nearest_by_fractions(x: float, bits: np.ndarray, dtype) -> float:  # type: ignore[no-untyped-def]
    """Round x to ``dtype`` by exact rational arithmetic over the neighbours of a first
    guess; ties go to the even bit pattern."""
    cands = [bits - 1, bits, bits + 1]
    best = None
    for c in cands:
        v = np.array([c], bits.dtype).view(dtype)[0]
        if not np.isfinite(float(v)):
            continue
        d = abs(Fraction(float(v)) - Fraction(x))
        key = (d, int(c) & 1)
        if best is None or key < best[0]:
            best = (key, float(v))
    assert best is not None
    return best[1]


@pytest.mark.parametrize(("dtype", "uint"), [(BF16, np.uint16), (E4M3, np.uint8)])
def test_cast_from_f64_rounds_once(dtype, uint) -> None:  # type: ignore[no-untyped-def]
    # Ties of the target type nudged by far less than a float32 ulp: rounding through
    # float32 first (what ml_dtypes does) would see an exact tie and round to even.
    rng = np.random.default_rng(2)
    base_t = rng.uniform(0.1, 100, 300).astype(dtype)
    base = base_t.astype(F64)
    spacing = (base_t.view(uint) + 1).view(dtype).astype(F64) - base
    x = np.concatenate([base + spacing / 2 * (1 + 2.0**-30), base + spacing / 2 * (1 - 2.0**-30)])
    got = cast(x, "bf16" if dtype is BF16 else "f8e4m3")
    guess = x.astype(F32).astype(dtype).view(uint)
    want = np.array(
        [_nearest_by_fractions(float(v), g, dtype) for v, g in zip(x, guess, strict=True)]
    )
    np.testing.assert_array_equal(got.astype(F64), want)
    assert (got.astype(F64) != x.astype(F32).astype(dtype).astype(F64)).any()


def test_cast_int_to_float() -> None:
    assert bits_equal(cast(np.array([3, -7, 2**24 + 1], np.int64), "f32"), F32([3, -7, 2**24]))
    assert bits_equal(cast(np.array([257, 259], np.uint16), "bf16"), np.array([256, 260], BF16))


def test_cast_overflow_to_f8() -> None:
    # e5m2 has infinities; e4m3 (the "fn" variant) has none, so overflow is NaN there.
    x = F32([1e6, -1e6, 448, 464, 200.0])
    e5 = cast(x, "f8e5m2").astype(F32)
    np.testing.assert_array_equal(e5, [np.inf, -np.inf, 448, 448, 192])
    e4 = cast(x, "f8e4m3").astype(F32)
    assert np.isnan(e4[:2]).all()
    np.testing.assert_array_equal(e4[2:], [448, 448, 192])  # 464 is the tie: to even


def test_cast_to_e8m0_rounds_the_magnitude_up_to_a_power_of_two() -> None:
    # ONNX's default round mode "up"; every f32 binade edge, its neighbours and subnormals.
    powers = [2.0**e for e in range(-149, 128)]
    near = [np.nextafter(F32(p), F32(np.inf)) for p in powers[:-1]]
    x = F32([*powers, *near, 0.0, -0.0, -3.0, 0.3, 1.1, 2.0**-127 * 1.5, np.nan, np.inf])
    got = cast(x, "f8e8m0").astype(F64)

    def smallest_power_at_least(v: float) -> float:
        if not math.isfinite(v):
            return math.nan
        e = max(-127, math.ceil(math.log2(abs(v)))) if v else -127
        e = e if abs(v) <= 2.0**e else e + 1  # log2 rounding
        return 2.0 ** min(e, 127)

    want = np.array([smallest_power_at_least(float(v)) for v in x])
    np.testing.assert_array_equal(got, want)


def test_cast_narrow_floats_without_infinity() -> None:
    x = F32([1e6, -1e6, np.inf, 240, 0.1, -0.0])
    fnuz = cast(x, "f8e4m3fnuz").astype(F32)
    assert np.isnan(fnuz[:3]).all()  # no inf: overflow is NaN (fnuz's only NaN)
    assert fnuz[3] == 240 and fnuz[4] == F32(0.1015625)
    assert not np.signbit(fnuz[5])  # fnuz has no -0
    f4 = cast(x, "f4e2m1").astype(F32)
    np.testing.assert_array_equal(f4, [6, -6, 6, 6, 0, -0.0])  # neither inf nor NaN: saturates


def test_cast_subbyte_ints() -> None:
    # float -> int truncates and saturates, int -> int wraps: the rules of the wider types.
    x = F32([-9.5, -8, 7.9, 8, np.nan])
    assert cast(x, "i4").astype(np.int8).tolist() == [-8, -8, 7, 7, 0]
    assert cast(x, "u2").astype(np.int8).tolist() == [0, 0, 3, 3, 0]
    wide = np.arange(-9, 16, dtype=np.int8)
    assert cast(wide, "i4").astype(np.int8).tolist() == [((v + 8) % 16) - 8 for v in wide]
    i4 = np.arange(-8, 8, dtype=np.int8).astype(ml_dtypes.int4)
    assert cast(i4, "u2").astype(np.int8).tolist() == [v % 4 for v in range(-8, 8)]
    # f4e2m1 holds 0, ±0.5, ±1, ±1.5, ±2, ±3, ±4, ±6: 5 ties to 4 (even), 7 saturates.
    want = [-6, -6, -6, -4, -4, -3, -2, -1, 0, 1, 2, 3, 4, 4, 6, 6]
    assert cast(i4, "f4e2m1").astype(F32).tolist() == want


@pytest.mark.parametrize("kind", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("dtype", [F32, F64, F16, BF16])
def test_exact_binary_ops_broadcast_in_place(kind: str, dtype: type) -> None:
    """add, sub, mul and div on operands broadcast in place (``kernels.binary``) give the
    bits of the contiguous copies ``elementwise`` makes, on strided operands and special
    values too, and a C-contiguous result."""
    from rlx_compile.interpreter import kernels

    rng = np.random.default_rng(7)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 65504.0, -3.5])
    a = rng.standard_normal((4, 5, 6)) * 1e3
    a.reshape(-1)[: specials.size] = specials
    a = a.astype(dtype)
    per_row = rng.standard_normal((5, 1)).astype(dtype)
    scalar = np.asarray(rng.standard_normal(), dtype=dtype)
    last = specials[:6][::-1].astype(dtype)
    strided = rng.standard_normal((6, 5, 4)).astype(dtype).transpose(2, 1, 0)
    swapped = a.transpose(0, 2, 1)  # [4, 6, 5]
    pairs = [(a, per_row), (per_row, a), (a, scalar), (scalar, a), (a, last), (last, a),
             (a, strided), (strided, a), (swapped, per_row.reshape(5)),
             (swapped, strided[:, :1, :5])]  # fmt: skip
    for x, y in pairs:
        with np.errstate(all="ignore"):
            got = kernels.binary(kind, x, y)
            want = kernels.elementwise(kernels._binary_fn(kind, False), x, y)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.flags.c_contiguous
        assert bits_equal(got, want)
