"""NumPy kernels: the reference arithmetic behind every MIR op.

Kernels take and return arrays of the op's element type and know nothing of the IR, so
fused ops can be *defined* as the same kernels called in the order of their primitive
chain, which makes a fused op bit-identical to its unfused form.

Precision model (what hardware does):
- f64 and f32 ops compute in their own type;
- f16, bf16 and the f8 types compute in f32 and round to the op's type once at the end
  of the op -- for elementwise ops and for accumulating ones (matmul, conv, reductions,
  norms, softmax, attention) alike;
- integer arithmetic wraps modulo 2^bits, like NumPy and two's-complement hardware.

Determinism: NumPy's summation order (pairwise only along contiguous axes) and some of
its SIMD transcendental loops depend on memory layout, so accumulating kernels work on
C-contiguous copies and elementwise float kernels on contiguous, fully broadcast
operands. Results then depend only on values and shapes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rlx_compile.dialects.common import Activation, ComparePredicate, MaskKind, PadMode
from rlx_compile.dialects.types import DType, window_out_size
from rlx_compile.interpreter.core import ExecutionError
from rlx_compile.interpreter.special import erf_erfc

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
F8E8M0 = DType.F8E8M0.numpy
# The 8- and 4-bit floats with a sign (the element types of the dialect that quantize
# produces): quantisation targets, saturated to their largest finite value.
F8_TYPES = tuple(d.numpy for d in DType if d.is_quantized and d.is_float)
LOW_PRECISION = frozenset({np.dtype(np.float16), BF16, F8E8M0, *F8_TYPES})
# ml_dtypes converts float64 to these through float32 (two roundings); round_to fixes it.
_ROUNDED_VIA_F32 = frozenset({BF16, F8E8M0, *F8_TYPES})
# Sub-byte integers (one per byte in memory); numpy sees them as opaque ('V') types.
SUBBYTE_INTS = frozenset(d.numpy for d in DType if d.is_int and d.numpy.kind not in "iu")
_ML_DTYPES = _ROUNDED_VIA_F32 | SUBBYTE_INTS


# ---------------------------------------------------------------------------------
# Precision helpers
# ---------------------------------------------------------------------------------


def is_float(dtype: np.dtype) -> bool:
    return dtype in (F32, F64) or dtype in LOW_PRECISION


def is_int(dtype: np.dtype) -> bool:
    return dtype.kind in "iu" or dtype in SUBBYTE_INTS


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The type an op of element type ``dtype`` computes in."""
    return F32 if dtype in LOW_PRECISION else dtype


def contiguous(x: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """A C-contiguous array (the input itself when it already is one); unlike
    ``np.ascontiguousarray`` it keeps 0-d arrays 0-d."""
    return np.asarray(x, dtype=dtype, order="C")


def widen(x: np.ndarray) -> np.ndarray:
    """A C-contiguous copy (or the array itself) in its compute type."""
    return contiguous(x, compute_dtype(x.dtype))


def round_to(y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round a computed value to the op's type once (round half to even)."""
    y = np.asarray(y)
    if y.dtype == dtype:
        return y
    if y.dtype == F64 and dtype in _ROUNDED_VIA_F32:
        y = _f64_to_f32_round_to_odd(y)
    if dtype == F8E8M0:
        return _to_e8m0(y.astype(F32))
    if y.dtype in _ML_DTYPES:
        # ml_dtypes converts between few of its own types; float32 holds each exactly.
        y = y.astype(F32)
    return y.astype(dtype)


def _to_e8m0(y: np.ndarray) -> np.ndarray:
    """float32 -> f8e8m0 (a bare power-of-two exponent, no sign), ONNX's default: the
    magnitude rounds *up* to the next power of two, saturating at the largest; NaN and
    infinities give NaN; zero and magnitudes up to 2^-127 give the smallest, 2^-127.
    (ml_dtypes rounds to nearest; onnx's reference helper rounds float32 subnormals
    by their bits, sending 2^-127 itself to 2^-126.)"""
    bits = y.view(np.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(np.uint16)
    fraction = bits & 0x7FFFFF
    special = exponent == 0xFF
    # A float32 subnormal is f·2^-149: at most 2^-127 when f <= 2^22.
    round_up = np.where(exponent == 0, fraction > 0x400000, fraction != 0)
    round_up &= ~special & (exponent < 0xFE)
    return (exponent + round_up).astype(np.uint8).view(F8E8M0)


def _f64_to_f32_round_to_odd(y: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding to odd: truncate, then set the last mantissa bit when
    inexact. Rounding that to a type with at least two fewer mantissa bits (bf16, f8)
    equals rounding the float64 value directly, which avoids the double rounding of a
    plain f64 -> f32 -> bf16 conversion."""
    y32 = y.astype(F32)
    back = y32.astype(F64)
    finite = np.isfinite(y) & np.isfinite(back)
    # Step back to the value of smaller magnitude when round-to-nearest went past y.
    overshoot = finite & (np.abs(back) > np.abs(y))
    y32 = np.where(overshoot, np.nextafter(y32, np.float32(0)), y32)
    # Past float32's range: the largest float32 (odd) stands in for the overflow.
    largest = np.copysign(np.finfo(F32).max, y).astype(F32)
    y32 = np.where(np.isinf(y32) & np.isfinite(y), largest, y32)
    inexact = np.isfinite(y) & (y32.astype(F64) != y)
    bits = y32.view(np.uint32) | inexact.astype(np.uint32)
    return bits.view(F32)


def elementwise(fn: Callable[..., np.ndarray], *xs: np.ndarray) -> np.ndarray:
    """Apply ``fn`` in the compute type of ``xs[0]`` and round to that type once."""
    dtype = xs[0].dtype
    ct = compute_dtype(dtype)
    shape = np.broadcast_shapes(*(x.shape for x in xs))
    args = [contiguous(np.broadcast_to(x.astype(ct, copy=False), shape)) for x in xs]
    return round_to(fn(*args), dtype)


# ---------------------------------------------------------------------------------
# Unary elementwise (functions of compute-type arrays)
# ---------------------------------------------------------------------------------


def sigmoid_c(x: np.ndarray) -> np.ndarray:
    # exp of -|x| only: never overflows, and keeps relative accuracy for x << 0.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def silu_c(x: np.ndarray) -> np.ndarray:
    # x * sigmoid(x); at -inf that is -inf * 0 = NaN, the limit is 0.
    return np.where(x == -np.inf, -0.0, x * sigmoid_c(x)).astype(x.dtype)


def softplus_c(x: np.ndarray) -> np.ndarray:
    # log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x.
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def erf_c(x: np.ndarray) -> np.ndarray:
    # Evaluated in float64 (no NumPy erf in float32) and rounded to the compute type.
    return erf_erfc(x.astype(F64))[0].astype(x.dtype)


def gelu_c(x: np.ndarray) -> np.ndarray:
    """Exact GELU, 0.5·x·(1 + erf(x/√2)), written as 0.5·x·erfc(-x/√2) so that the
    negative tail keeps its relative accuracy instead of cancelling to 0."""
    x64 = x.astype(F64)
    y = 0.5 * x64 * erf_erfc(-x64 / math.sqrt(2.0))[1]
    return np.where(x64 == -np.inf, -0.0, y).astype(x.dtype)  # limit at -inf is 0


def gelu_tanh_c(x: np.ndarray) -> np.ndarray:
    """0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³), in the compute type, evaluated
    as the identical x·sigmoid(2u): 1 + tanh(u) cancels to 0 for x << 0 (PyTorch's f32
    kernel returns -0 there), while sigmoid keeps the tail's relative accuracy."""
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))
    y = x * sigmoid_c(2 * inner)
    return np.where(x == -np.inf, -0.0, y).astype(x.dtype)  # limit at -inf is 0


def clip_c(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.minimum(np.maximum(x, lo), hi)  # NaN propagates


def hard_sigmoid_c(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    return np.maximum(np.minimum(x * alpha + beta, 1), 0)


def hard_swish_c(x: np.ndarray) -> np.ndarray:
    return x * hard_sigmoid_c(x, 1 / 6, 0.5)


def leaky_relu_c(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x < 0, x * alpha, x)


def elu_c(x: np.ndarray, alpha: float, scale: float) -> np.ndarray:
    # e^min(x, 0): the exponential of the branch taken only, so no overflow.
    return np.where(x < 0, (np.exp(np.minimum(x, 0)) - 1) * alpha, x) * scale


def swish_c(x: np.ndarray, alpha: float) -> np.ndarray:
    return x * sigmoid_c(x * alpha)


def thresholded_relu_c(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x > alpha, x, 0)  # NaN gives 0


def softsign_c(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.abs(x))


UNARY: dict[str, Callable[..., np.ndarray]] = {
    "neg": np.negative,
    "abs": np.abs,
    "relu": lambda x: np.maximum(x, 0),  # NaN propagates
    "sign": np.sign,
    "not": np.logical_not,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x,
    "tanh": np.tanh,
    "sigmoid": sigmoid_c,
    "silu": silu_c,
    "erf": erf_c,
    "sin": np.sin,
    "cos": np.cos,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.rint,  # half to even
    "softplus": softplus_c,
    "gelu": gelu_c,
    "gelu_tanh": gelu_tanh_c,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "bitwise_not": np.invert,
    "clip": clip_c,
    "hard_sigmoid": hard_sigmoid_c,
    "hard_swish": hard_swish_c,
    "leaky_relu": leaky_relu_c,
    "elu": elu_c,
    "swish": swish_c,
    "thresholded_relu": thresholded_relu_c,
    "softsign": softsign_c,
}
"""Unary kernels on compute-type arrays; clip, hard_sigmoid, leaky_relu, elu, swish
and thresholded_relu take their parameters after the array."""


def unary(kind: str, x: np.ndarray, params: Sequence[float] = ()) -> np.ndarray:
    fn = UNARY[kind]
    return elementwise((lambda c: fn(c, *params)) if params else fn, x)


_ACTIVATIONS: dict[Activation, str] = {
    Activation.RELU: "relu",
    Activation.GELU: "gelu",
    Activation.GELU_TANH: "gelu_tanh",
    Activation.SILU: "silu",
    Activation.SIGMOID: "sigmoid",
    Activation.TANH: "tanh",
    Activation.CLIP: "clip",
    Activation.HARD_SIGMOID: "hard_sigmoid",
    Activation.HARD_SWISH: "hard_swish",
    Activation.LEAKY_RELU: "leaky_relu",
}


def activation(x: np.ndarray, kind: Activation, params: Sequence[float] = ()) -> np.ndarray:
    """The fused ops' activation: exactly the unary op of the same name (none = identity)."""
    if kind is Activation.NONE:
        return x
    return unary(_ACTIVATIONS[kind], x, params)


# ---------------------------------------------------------------------------------
# Binary elementwise
# ---------------------------------------------------------------------------------


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero (NumPy floors)."""
    if np.any(b == 0):
        raise ExecutionError("integer division by zero")
    q = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        q = q + ((np.mod(a, b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)
    return q


def _int_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.any(b == 0):
        raise ExecutionError("integer modulo by zero")
    return np.mod(a, b)


def _int_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a^b wrapping; a negative exponent gives 1/a^|b| truncated toward zero (only
    ±1 survive), consistent with integer division."""
    if b.dtype.kind != "i" or not np.any(b < 0):
        return np.power(a, b)
    neg = b < 0
    if np.any(neg & (a == 0)):
        raise ExecutionError("integer zero raised to a negative power")
    p = np.power(a, np.where(neg, 0, b))
    odd = np.mod(b, 2) == 1
    neg_val = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(neg, neg_val, p).astype(a.dtype)


def _int_fmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.any(b == 0):
        raise ExecutionError("integer modulo by zero")
    return np.fmod(a, b)


def _shift(a: np.ndarray, s: np.ndarray, left: bool) -> np.ndarray:
    """Shifts with a defined result for every amount: out of [0, bits) gives 0 (-1 for a
    right shift of a negative signed value); left shifts wrap, right shifts of signed
    types fill with the sign."""
    bits = a.dtype.itemsize * 8
    inside = (s >= 0) & (s < bits)
    amount = np.where(inside, s, 0).astype(np.uint64)
    unsigned = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    if left:
        shifted = np.left_shift(unsigned, amount.astype(unsigned.dtype)).view(a.dtype)
        return np.where(inside, shifted, a.dtype.type(0))
    shifted = np.right_shift(a, amount.astype(a.dtype))
    outside = np.where(a < 0, a.dtype.type(-1), a.dtype.type(0)) if a.dtype.kind == "i" else 0
    return np.where(inside, shifted, outside).astype(a.dtype)


def _prelu(a: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """ONNX PRelu: a NaN or -0 stays as it is."""
    return np.where(a < 0, a * slope, a)


def _binary_fn(kind: str, integer: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    if integer:
        special = {
            "div": _int_div,
            "mod": _int_mod,
            "pow": _int_pow,
            "fmod": _int_fmod,
            "shift_left": lambda a, s: _shift(a, s, True),
            "shift_right": lambda a, s: _shift(a, s, False),
        }
        if kind in special:
            return special[kind]
    table: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "div": np.divide,
        "pow": np.power,
        "max": np.maximum,  # NaN propagates
        "min": np.minimum,
        "prelu": _prelu,
        "mod": np.mod,  # sign of the divisor, like Python's %
        "and": np.logical_and,
        "or": np.logical_or,
        "xor": np.logical_xor,
        "fmod": np.fmod,  # sign of the dividend, exact
        "bitwise_and": np.bitwise_and,
        "bitwise_or": np.bitwise_or,
        "bitwise_xor": np.bitwise_xor,
    }
    return table[kind]


def binary(kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    integer = a.dtype.kind in "iu"
    exact = None if integer else _CORRECTLY_ROUNDED.get(kind)
    if exact is not None:
        dtype = a.dtype
        ct = compute_dtype(dtype)
        y = exact(a.astype(ct, copy=False), b.astype(ct, copy=False), order="C")
        return round_to(y, dtype)
    return elementwise(_binary_fn(kind, integer), a, b)


_CORRECTLY_ROUNDED: dict[str, np.ufunc] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
}
"""Float ops IEEE 754 rounds correctly in every numpy loop, whatever the strides: on
operands broadcast in place they give the bits ``elementwise``'s contiguous copies give,
without copying the smaller operand out to the result's shape (a per-channel scale of a
conv weight, a scalar)."""


_COMPARE = {
    ComparePredicate.EQ: np.equal,
    ComparePredicate.NE: np.not_equal,
    ComparePredicate.LT: np.less,
    ComparePredicate.LE: np.less_equal,
    ComparePredicate.GT: np.greater,
    ComparePredicate.GE: np.greater_equal,
}


def compare(predicate: ComparePredicate, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # Widening to f32 is exact, so low-precision comparisons are unaffected.
    return _COMPARE[predicate](widen(a), widen(b))


def where(cond: np.ndarray, on_true: np.ndarray, on_false: np.ndarray) -> np.ndarray:
    return np.where(cond, on_true, on_false)


# ---------------------------------------------------------------------------------
# Cast
# ---------------------------------------------------------------------------------


def _float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Truncate toward zero and saturate to the target range; NaN becomes 0. (NumPy
    leaves NaN and out-of-range conversions undefined; these are Rust's ``as``.)"""
    info = ml_dtypes.iinfo(dtype)
    y = np.trunc(x.astype(F64))
    nan = np.isnan(y)
    # Python ints make the bounds exact: float(2**63) is exact, float(2**63 - 1) is not.
    too_big = y >= float(info.max + 1)
    too_small = y < float(info.min)
    safe = np.where(nan | too_big | too_small, 0.0, y)
    out = safe.astype(dtype)
    out = np.where(too_big, dtype.type(info.max), out)
    out = np.where(too_small, dtype.type(info.min), out)
    return out.astype(dtype)


def cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Element type conversion: float -> int truncates (saturating, NaN -> 0), to bool is
    ``!= 0``, int -> int wraps, to float rounds to nearest even."""
    if x.dtype == dtype:
        return x
    if dtype == np.bool_:
        return x != 0
    if is_int(dtype):
        if is_float(x.dtype):
            return _float_to_int(x, dtype)
        if x.dtype in SUBBYTE_INTS or dtype in SUBBYTE_INTS:
            x = x.astype(np.int64)  # ml_dtypes has few direct sub-byte conversions
        return x.astype(dtype)  # int/bool -> int: two's-complement wrap
    if is_int(x.dtype) or x.dtype == np.bool_:
        # Through float64: exact up to 2^53 (larger 64-bit ints round twice), and
        # ml_dtypes has no direct int -> bf16/f8 conversion.
        x = x.astype(F64)
    return round_to(x, dtype)


# ---------------------------------------------------------------------------------
# Linear algebra, reductions, normalisation
# ---------------------------------------------------------------------------------


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NumPy ``matmul`` that is row-invariant: every output row is its own [1, K] x [K, N]
    product, so a row's bits do not depend on how many rows surround it.

    BLAS GEMM picks its blocking (and so its summation order) from M, which makes a plain
    ``np.matmul`` of a row-slice differ from the same rows of the whole product in the last
    bits; shard's row and batch cuts are defined to be bit-identical to the unsplit op, so
    the reference pays the per-row product (about 3x slower than GEMM on large f32 shapes).
    """
    x, y = widen(a), widen(b)
    if x.ndim < 2:
        return round_to(np.matmul(x, y), a.dtype)
    vector_rhs = y.ndim == 1
    if vector_rhs:
        y = y[:, None]
    # [.., M, K] -> [.., M, 1, K] against [.., 1, K, N]: one product per output row.
    out = np.matmul(x[..., :, None, :], y[..., None, :, :])[..., 0, :]
    return round_to(out[..., 0] if vector_rhs else out, a.dtype)


def mean_c(x: np.ndarray, axes: tuple[int, ...], keepdims: bool = True) -> np.ndarray:
    """The mean of every reduction and norm: sum / count in the compute type (0/0 = NaN)."""
    count = math.prod(x.shape[a] for a in axes)
    return np.sum(x, axis=axes, keepdims=keepdims) / x.dtype.type(count)


def reduce(kind: str, x: np.ndarray, axes: Sequence[int], keepdims: bool) -> np.ndarray:
    """sum, mean, max, min, prod over ``axes``; an empty ``axes`` is the identity."""
    ax = tuple(axes)
    dtype = x.dtype
    count = math.prod(x.shape[a] for a in ax)
    if count == 0 and kind in ("max", "min"):
        raise ExecutionError(f"reduce_{kind} over an empty axis has no value")
    if is_float(x.dtype):
        x = widen(x)
        if kind == "mean":
            return round_to(mean_c(x, ax, keepdims), dtype)
    elif kind == "mean":
        # Integer mean: the 64-bit sum divided by the count, truncated toward zero.
        if count == 0:
            raise ExecutionError("integer reduce_mean over an empty axis")
        wide = np.dtype(np.int64) if x.dtype.kind == "i" else np.dtype(np.uint64)
        total = np.asarray(np.sum(x, axis=ax, keepdims=keepdims, dtype=wide))
        return _int_div(total, np.asarray(count, dtype=wide)).astype(dtype)
    # Accumulate in the compute type: f32 for low-precision floats; integers wrap.
    if kind == "sum":
        y = np.sum(x, axis=ax, keepdims=keepdims, dtype=x.dtype)
    elif kind == "prod":
        y = np.prod(x, axis=ax, keepdims=keepdims, dtype=x.dtype)
    elif kind == "max":
        y = np.max(x, axis=ax, keepdims=keepdims)
    else:
        y = np.min(x, axis=ax, keepdims=keepdims)
    return round_to(y, dtype)


def cumulative(kind: str, x: np.ndarray, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """Running sum or product along ``axis`` in index order (from the end with
    ``reverse``), in the compute type; ``exclusive`` shifts by one so that y[0] is the
    identity."""
    dtype = x.dtype
    xc = widen(x) if is_float(dtype) else contiguous(x)
    if reverse:
        xc = np.flip(xc, axis)
    if exclusive:
        # Sum of the elements strictly before: prepend a zero, drop the last element.
        first = np.take(xc, [0], axis=axis) if xc.shape[axis] else xc
        identity = np.zeros_like(first) if kind == "sum" else np.ones_like(first)
        xc = np.concatenate([identity, np.take(xc, range(xc.shape[axis] - 1), axis=axis)], axis)
    scan = np.cumsum if kind == "sum" else np.cumprod
    y = scan(xc, axis=axis, dtype=xc.dtype)
    if reverse:
        y = np.flip(y, axis)
    return round_to(contiguous(y), dtype)


def pairwise_coupling(r: np.ndarray) -> np.ndarray:
    """libsvm's multiclass probabilities from pairwise ones (``mir.pairwise_coupling``):
    every sample iterated in ``r``'s type, the sweeps of a converged sample skipped."""
    *batch, c, _ = r.shape
    dtype = r.dtype.type
    rr = r.reshape(-1, c, c).astype(r.dtype, copy=True)
    eye = np.eye(c, dtype=bool)
    rr[:, eye] = 0
    q = -(rr * np.swapaxes(rr, 1, 2))
    q[:, eye] = (rr * rr).sum(axis=1)
    p = np.full((rr.shape[0], c), dtype(1.0) / dtype(c), r.dtype)
    eps = dtype(0.005) / dtype(c)
    active = np.ones(rr.shape[0], bool)
    one, two = dtype(1), dtype(2)
    for _ in range(100):
        qp = np.einsum("nij,nj->ni", q[active], p[active]).astype(r.dtype)
        pqp = (p[active] * qp).sum(axis=1, dtype=r.dtype)
        done = np.abs(qp - pqp[:, None]).max(axis=1) < eps
        rows = np.flatnonzero(active)
        active[rows[done]] = False
        keep = ~done
        rows, qp, pqp = rows[keep], qp[keep], pqp[keep]
        if not rows.size:
            break
        pa, qa = p[rows], q[rows]
        for i in range(c):
            diff = (pqp - qp[:, i]) / qa[:, i, i]
            pa[:, i] += diff
            grow = one + diff
            pqp = (pqp + diff * (diff * qa[:, i, i] + two * qp[:, i])) / grow / grow
            qp = (qp + diff[:, None] * qa[:, i, :]) / grow[:, None]
            pa /= grow[:, None]
        p[rows] = pa
    return p.reshape(*batch, c)


def topk(x: np.ndarray, k: int, axis: int, smallest: bool) -> tuple[np.ndarray, np.ndarray]:
    """The k largest (smallest) along ``axis`` in order; equal values in index order;
    NaN sorts above every number."""
    xc = widen(x) if is_float(x.dtype) else x
    if smallest:
        order = np.argsort(xc, axis=axis, kind="stable")
    else:
        # A stable ascending sort of the reversed axis, read backwards: values descend
        # and equal values come in ascending original index.
        n = x.shape[axis]
        rev = np.argsort(np.flip(xc, axis), axis=axis, kind="stable")
        order = (n - 1) - np.flip(rev, axis)
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx.astype(np.int64)


def scatter_nd(
    data: np.ndarray, indices: np.ndarray, updates: np.ndarray, reduction: str
) -> np.ndarray:
    """A copy of ``data`` with ``updates`` written (or combined) at ``indices``, in
    row-major order of the updates."""
    out = data.copy()
    q = indices.shape[-1]
    dims = np.asarray(data.shape[:q], dtype=np.int64)
    idx = indices.reshape(-1, q).astype(np.int64)
    bad = (idx >= dims) | (idx < -dims)
    if bad.any():
        first = idx[bad.any(axis=1)][0].tolist()
        raise ExecutionError(f"scatter index {first} is out of range for {list(data.shape[:q])}")
    idx = np.where(idx < 0, idx + dims, idx)
    upd = updates.reshape(idx.shape[0], *data.shape[q:])
    combine = {
        "add": np.add,
        "mul": np.multiply,
        "max": np.maximum,
        "min": np.minimum,
    }.get(reduction)
    for i in range(idx.shape[0]):
        at = tuple(idx[i])
        if combine is None:
            out[at] = upd[i]
        elif is_float(out.dtype):  # combine in the compute type, round once per update
            out[at] = round_to(combine(widen(np.asarray(out[at])), widen(upd[i])), out.dtype)
        else:
            out[at] = combine(out[at], upd[i])
    return out


def arg_reduce(kind: str, x: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    """Index of the first max/min along ``axis`` (a NaN counts as the extreme)."""
    if x.shape[axis] == 0:
        raise ExecutionError(f"arg{kind} over an empty axis has no value")
    fn = np.argmax if kind == "max" else np.argmin
    return fn(widen(x), axis=axis, keepdims=keepdims).astype(np.int64)


def softmax_c(x: np.ndarray, axis: int) -> np.ndarray:
    """Softmax in the compute type; a row of -inf only gives NaN (0/0), as in PyTorch."""
    if x.shape[axis] == 0:
        return x.copy()
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    return round_to(softmax_c(widen(x), axis), x.dtype)


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    xc = widen(x)
    if x.shape[axis] == 0:
        return x.copy()
    shifted = xc - np.max(xc, axis=axis, keepdims=True)
    return round_to(shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True)), x.dtype)


def _affine(y: np.ndarray, scale: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    y = y * widen(scale)
    return y if bias is None else y + widen(bias)


def layer_norm(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None, axis: int, eps: float
) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) · scale + bias over dims axis..rank-1 (biased var)."""
    xc = widen(x)
    axes = tuple(range(axis, x.ndim))
    d = xc - mean_c(xc, axes)
    var = mean_c(d * d, axes)  # two-pass: no E[x²] - E[x]² cancellation
    return round_to(_affine(d / np.sqrt(var + eps), scale, bias), x.dtype)


def rms_norm(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None, axis: int, eps: float
) -> np.ndarray:
    """x / sqrt(mean(x²) + eps) · scale + bias over dims axis..rank-1."""
    xc = widen(x)
    ms = mean_c(xc * xc, tuple(range(axis, x.ndim)))
    return round_to(_affine(xc / np.sqrt(ms + eps), scale, bias), x.dtype)


def _per_channel(v: np.ndarray, rank: int, axis: int = 1) -> np.ndarray:
    """A [C] vector shaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    shape = [1] * rank
    shape[axis] = v.shape[0]
    return widen(v).reshape(shape)


def group_norm(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, groups: int, eps: float
) -> np.ndarray:
    """Layer norm of each of ``groups`` channel groups (with their spatial dims) of an
    [N, C, ...] tensor, then a per-channel affine."""
    n, c = x.shape[:2]
    grouped = widen(x).reshape(n, groups, (c // groups) * math.prod(x.shape[2:]))
    d = grouped - mean_c(grouped, (2,))
    var = mean_c(d * d, (2,))
    y = (d / np.sqrt(var + eps)).reshape(x.shape)
    y = y * _per_channel(scale, x.ndim) + _per_channel(bias, x.ndim)
    return round_to(y, x.dtype)


def batch_norm(
    x: np.ndarray,
    scale: np.ndarray,
    bias: np.ndarray,
    mean: np.ndarray,
    variance: np.ndarray,
    eps: float,
) -> np.ndarray:
    """Inference batch norm over axis 1 with the given running statistics."""
    r = x.ndim
    y = (widen(x) - _per_channel(mean, r)) / np.sqrt(_per_channel(variance, r) + eps)
    y = y * _per_channel(scale, r) + _per_channel(bias, r)
    return round_to(y, x.dtype)


# ---------------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------------


def reshape(x: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    if math.prod(shape) != x.size:
        raise ExecutionError(f"cannot reshape {list(x.shape)} into {list(shape)}")
    return x.reshape(tuple(shape))


def transpose(x: np.ndarray, perm: Sequence[int]) -> np.ndarray:
    return np.transpose(x, tuple(perm))


def narrow(x: np.ndarray, axis: int, start: int, length: int) -> np.ndarray:
    if start < 0 or start + length > x.shape[axis]:
        raise ExecutionError(
            f"narrow [{start}, {start + length}) exceeds axis {axis} of size {x.shape[axis]}"
        )
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, start + length)
    return x[tuple(index)]


def slice_(
    x: np.ndarray, starts: Sequence[int], steps: Sequence[int], lengths: Sequence[int]
) -> np.ndarray:
    """result[i_0, ...] = x[starts[0] + i_0·steps[0], ...]; steps may be negative."""
    out = x
    for axis, (start, step, n) in enumerate(zip(starts, steps, lengths, strict=True)):
        idx = start + step * np.arange(n, dtype=np.int64)
        if n and (idx.min() < 0 or idx.max() >= x.shape[axis]):
            raise ExecutionError(
                f"slice reads indices {start}..{start + (n - 1) * step} of axis {axis}, "
                f"outside [0, {x.shape[axis]})"
            )
        out = np.take(out, idx, axis=axis)
    return out


def concat(xs: Sequence[np.ndarray], axis: int) -> np.ndarray:
    return np.concatenate(list(xs), axis=axis)


def expand(x: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    try:
        return np.broadcast_to(x, tuple(shape))
    except ValueError:
        raise ExecutionError(f"cannot expand {list(x.shape)} to {list(shape)}") from None


def gather(table: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """``table`` indexed along ``axis``; negative indices count from the end."""
    n = table.shape[axis]
    # Compare in the indices' own type: a u64 index >= 2^63 must not wrap negative.
    bad = indices >= n
    if indices.dtype.kind == "i":
        bad |= indices < -n
    if np.any(bad):
        raise ExecutionError(
            f"gather index {indices[bad].flat[0]} is out of range for axis {axis} of size {n}"
        )
    idx = indices.astype(np.int64)
    return np.take(table, np.where(idx < 0, idx + n, idx), axis=axis)


def gather_elements(x: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """``np.take_along_axis`` of the window of ``x`` the indices cover (each of their
    dims but ``axis``'s at most ``x``'s); negative indices count from the end."""
    n = x.shape[axis]
    for d, (have, need) in enumerate(zip(x.shape, indices.shape, strict=True)):
        if d != axis and need > have:
            raise ExecutionError(
                f"gather_elements indices {list(indices.shape)} exceed the input "
                f"{list(x.shape)} along dim {d}"
            )
    bad = (indices >= n) | (indices < -n)
    if np.any(bad):
        raise ExecutionError(
            f"gather_elements index {indices[bad].flat[0]} is out of range for axis {axis} "
            f"of size {n}"
        )
    window = x[
        tuple(slice(None) if d == axis else slice(0, k) for d, k in enumerate(indices.shape))
    ]
    return np.take_along_axis(window, np.where(indices < 0, indices + n, indices), axis)


def pad(x: np.ndarray, pads: Sequence[int], mode: PadMode, value: float) -> np.ndarray:
    """Pad every axis by (pads[i], pads[rank + i]). reflect mirrors without repeating the
    edge (pad < size required), edge repeats it, wrap extends periodically."""
    r = x.ndim
    width = [(pads[i], pads[r + i]) for i in range(r)]
    if mode is PadMode.CONSTANT:
        fill = cast(np.asarray(value, dtype=F64), x.dtype)
        return np.pad(x, width, mode="constant", constant_values=fill)
    for axis, (before, after) in enumerate(width):
        size = x.shape[axis]
        if mode is PadMode.REFLECT and max(before, after) > size - 1:
            raise ExecutionError(
                f"reflect pad ({before}, {after}) of axis {axis} needs pads < its size {size}"
            )
        if (before or after) and size == 0:
            raise ExecutionError(f"{mode.value} pad of the empty axis {axis}")
    if mode is PadMode.REFLECT:
        return np.pad(x, width, mode="reflect")
    if mode is PadMode.EDGE:
        return np.pad(x, width, mode="edge")
    return np.pad(x, width, mode="wrap")


# ---------------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------------


def _windows(
    xp: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    out_sizes: Sequence[int],
) -> np.ndarray:
    """[N, C, *padded] -> [N, C, *out, *kernel]: the (dilated) taps of every window."""
    k = len(kernel)
    spans = [d * (kk - 1) + 1 for kk, d in zip(kernel, dilations, strict=True)]
    w = sliding_window_view(xp, spans, axis=tuple(range(2, 2 + k)))
    positions = [slice(0, (o - 1) * s + 1, s) for o, s in zip(out_sizes, strides, strict=True)]
    taps = [slice(None, None, d) for d in dilations]
    return w[(slice(None), slice(None), *positions, *taps)]


def _window_geometry(
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    ceil_mode: bool,
) -> tuple[list[int], list[tuple[int, int]]]:
    """Output sizes, and per spatial dim the (begin, end) padding that makes every
    window fit (explicit pads plus the extra cells a ceil-mode window may read)."""
    k = len(spatial)
    outs, widths = [], []
    for i in range(k):
        pb, pe = pads[i], pads[k + i]
        # a static size: a number
        o = int(window_out_size(spatial[i], kernel[i], strides[i], pb, pe, dilations[i], ceil_mode))
        needed = (o - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1
        outs.append(o)
        widths.append((pb, max(pe, needed - spatial[i] - pb)))
    return outs, widths


def conv(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int,
) -> np.ndarray:
    """N-d cross-correlation of [N, C_in, ...] with [C_out, C_in/groups, k...], zero
    padding, as one im2col matrix product per group."""
    k = x.ndim - 2
    kernel = w.shape[2:]
    n, c_in = x.shape[:2]
    c_out = w.shape[0]
    cg, cog = c_in // groups, c_out // groups
    outs, widths = _window_geometry(x.shape[2:], kernel, strides, pads, dilations, False)
    xp = np.pad(widen(x), [(0, 0), (0, 0), *widths])
    win = _windows(xp, kernel, strides, dilations, outs)  # [N, C, *O, *K]
    win = win.reshape(n, groups, cg, *outs, *kernel)
    # [N, G, *O, Cg, *K] -> rows are output positions, columns (channel, tap) pairs
    order = (0, 1, *range(3, 3 + k), 2, *range(3 + k, 3 + 2 * k))
    p, taps = math.prod(outs), cg * math.prod(kernel)
    cols = contiguous(win.transpose(order)).reshape(n, groups, p, taps)
    wmat = contiguous(widen(w).reshape(groups, cog, taps).transpose(0, 2, 1))
    y = np.matmul(cols, wmat)  # [N, G, P, Cog]
    y = y.transpose(0, 1, 3, 2).reshape(n, c_out, *outs)
    return round_to(y, x.dtype)


def conv_transpose(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
) -> np.ndarray:
    """Transposed convolution of [N, C_in, ...] with [C_in, C_out/groups, k...]: one matrix
    product per group gives every input element's kernel-weighted columns, which are
    added into the output at stride·i + dilation·tap (col2im), then cropped by ``pads``
    and extended by ``output_padding`` (the bias added everywhere)."""
    k = x.ndim - 2
    kernel = w.shape[2:]
    n, c_in, *spatial = x.shape
    cg, cog = c_in // groups, w.shape[1]
    xs = widen(x).reshape(n, groups, cg, math.prod(spatial))
    wm = widen(w).reshape(groups, cg, cog * math.prod(kernel))
    cols = np.matmul(xs.transpose(0, 1, 3, 2), wm)  # [N, G, P, Cog·K]
    cols = cols.reshape(n, groups, *spatial, cog, *kernel)
    # -> [N, G, Cog, *K, *spatial]
    cols = cols.transpose(0, 1, 2 + k, *range(3 + k, 3 + 2 * k), *range(2, 2 + k))
    full = [(spatial[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 for i in range(k)]
    out = np.zeros((n, groups, cog, *full), dtype=cols.dtype)
    for tap in np.ndindex(*kernel):
        window = tuple(
            slice(
                t * dilations[i], t * dilations[i] + (spatial[i] - 1) * strides[i] + 1, strides[i]
            )
            for i, t in enumerate(tap)
        )
        out[(slice(None), slice(None), slice(None), *window)] += cols[(slice(None),) * 3 + tap]
    out = out.reshape(n, groups * cog, *full)
    crop = tuple(slice(pads[i], full[i] - pads[k + i]) for i in range(k))
    out = np.pad(out[(slice(None), slice(None), *crop)],
                 [(0, 0), (0, 0), *[(0, e) for e in output_padding]])  # fmt: skip
    if bias is not None:
        out = out + widen(bias).reshape(-1, *([1] * k))
    return round_to(out, x.dtype)


def lrn(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """x / (bias + alpha/size · (sum of x² over the channel window))^beta; the window
    around c has (size - 1) // 2 channels before and the rest after."""
    xc = widen(x)
    c = x.shape[1]
    before = (size - 1) // 2
    padded = np.pad(xc * xc, [(0, 0), (before, size - 1 - before), *[(0, 0)] * (x.ndim - 2)])
    total = padded[:, 0:c].copy()
    for j in range(1, size):
        total += padded[:, j : j + c]
    return round_to(xc / (total * (alpha / size) + bias) ** beta, x.dtype)


def max_pool(
    x: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    ceil_mode: bool,
) -> np.ndarray:
    """Max over each window; padding (-inf, an integer type's least value) never wins,
    NaN propagates."""
    k = len(kernel)
    outs, widths = _window_geometry(x.shape[2:], kernel, strides, pads, dilations, ceil_mode)
    wide = widen(x)
    least = -np.inf if wide.dtype.kind == "f" else np.iinfo(wide.dtype).min
    xp = np.pad(wide, [(0, 0), (0, 0), *widths], constant_values=least)
    win = _windows(xp, kernel, strides, dilations, outs)
    return round_to(np.max(win, axis=tuple(range(-k, 0))), x.dtype)


def avg_pool(x: np.ndarray, **window: Any) -> np.ndarray:
    """Window sum / window count (``window_sums``, whose window arguments it takes)."""
    total, count = window_sums(widen(x), **window)
    return round_to(total / count.astype(total.dtype), x.dtype)


def window_sums(
    x: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Each window's sum (in x's type, padding 0) and count. The count is the taps inside
    the input, or with ``count_include_pad`` inside input + explicit pads -- never the
    extra cells of a ceil-mode window (PyTorch's and ONNX's divisor)."""
    k = len(kernel)
    spatial = x.shape[2:]
    outs, widths = _window_geometry(spatial, kernel, strides, pads, dilations, ceil_mode)
    taps_axes = tuple(range(-k, 0))
    xp = np.pad(x, [(0, 0), (0, 0), *widths])
    total = np.sum(contiguous(_windows(xp, kernel, strides, dilations, outs)), taps_axes)
    if count_include_pad:
        inside = np.ones([s + pads[i] + pads[k + i] for i, s in enumerate(spatial)])
        inside_widths = [(0, wid[1] - pads[k + i]) for i, wid in enumerate(widths)]
    else:
        inside = np.ones(spatial)
        inside_widths = widths
    mask = np.pad(inside, inside_widths)[None, None]
    count = np.sum(_windows(mask, kernel, strides, dilations, outs), axis=taps_axes)
    return total, count


# ---------------------------------------------------------------------------------
# Attention and rotary embeddings
# ---------------------------------------------------------------------------------


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None,
    mask_kind: MaskKind,
    scale: float | None,
    softcap: float | None,
    *,
    zero_nan: bool = False,
) -> np.ndarray:
    """softmax(cap(q·kᵀ·scale) masked)·v on [B, H, S, D]; query head h reads key/value
    head h // (H / H_kv); causal is upper-left (query i sees keys j <= i); ``zero_nan``: a
    NaN probability counts as 0 (a row masked entirely)."""
    heads, kv_heads = q.shape[1], k.shape[1]
    qc = widen(q)
    kc = np.repeat(widen(k), heads // kv_heads, axis=1)
    vc = np.repeat(widen(v), heads // kv_heads, axis=1)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    scores = np.matmul(qc, contiguous(kc.swapaxes(-1, -2))) * scale
    if softcap is not None:
        scores = softcap * np.tanh(scores / softcap)
    if mask_kind is MaskKind.CAUSAL:
        sq, sk = scores.shape[-2:]
        scores = np.where(np.tril(np.ones((sq, sk), dtype=bool)), scores, -np.inf)
    elif mask_kind is MaskKind.EXPLICIT:
        assert mask is not None
        # bool: true = attend; float: an additive bias
        bool_mask = mask.dtype == np.bool_
        scores = np.where(mask, scores, -np.inf) if bool_mask else scores + widen(mask)
    probs = softmax_c(scores, -1)
    if zero_nan:
        probs = np.where(np.isnan(probs), 0.0, probs)
    return round_to(np.matmul(contiguous(probs), vc), q.dtype)


def rope(
    x: np.ndarray,
    cos: np.ndarray,
    sin: np.ndarray,
    rotary_dim: int | None,
    interleaved: bool,
) -> np.ndarray:
    """Rotate channel pairs of the last dim by the given angles: (i, i + r/2) NeoX style,
    (2i, 2i + 1) interleaved; channels from ``rotary_dim`` on pass through."""
    xc = widen(x)
    r = x.shape[-1] if rotary_dim is None else rotary_dim
    half = r // 2
    c, s = widen(cos), widen(sin)
    if interleaved:
        x1, x2 = xc[..., 0:r:2], xc[..., 1:r:2]
    else:
        x1, x2 = xc[..., :half], xc[..., half:r]
    o1 = x1 * c - x2 * s
    o2 = x2 * c + x1 * s
    if interleaved:
        rotated = np.stack([o1, o2], axis=-1).reshape(*o1.shape[:-1], r)
    else:
        rotated = np.concatenate([o1, o2], axis=-1)
    return round_to(np.concatenate([rotated, xc[..., r:]], axis=-1), x.dtype)


# ---------------------------------------------------------------------------------
# Quantisation
# ---------------------------------------------------------------------------------


def _qparam(v: np.ndarray, rank: int, axis: int | None, ct: np.dtype) -> np.ndarray:
    """A scale or zero point as a compute-type array broadcasting against the input:
    one element (per tensor) or a vector along ``axis``."""
    if axis is None:
        return v.astype(ct).reshape(())
    shape = [1] * rank
    shape[axis] = v.shape[0]
    return v.astype(ct).reshape(shape)


def _quant_dtype(x: np.ndarray, scale: np.ndarray) -> np.dtype:
    """Quantisation arithmetic runs in f64 if either float operand is f64, else f32."""
    return F64 if F64 in (x.dtype, scale.dtype) else F32


def quantize(
    x: np.ndarray,
    scale: np.ndarray,
    zero_point: np.ndarray | None,
    axis: int | None,
    dtype: np.dtype,
) -> np.ndarray:
    """saturate(round_half_even(x / scale) + zero_point). For f8 results the rounding is
    to the f8 grid and saturation clamps to ±max finite (also for ±inf); for ints NaN
    quantises to 0, like a float -> int cast."""
    ct = _quant_dtype(x, scale)
    v = x.astype(ct) / _qparam(scale, x.ndim, axis, ct)
    if dtype in F8_TYPES:
        if zero_point is not None:
            v = v + _qparam(zero_point, x.ndim, axis, ct)
        limit = float(ml_dtypes.finfo(dtype).max)
        return round_to(np.clip(v, -limit, limit), dtype)
    v = np.rint(v)
    if zero_point is not None:
        v = v + _qparam(zero_point, x.ndim, axis, ct)
    return _float_to_int(v, dtype)  # saturates to the type's range


def dequantize(
    q: np.ndarray,
    scale: np.ndarray,
    zero_point: np.ndarray | None,
    axis: int | None,
) -> np.ndarray:
    """(q - zero_point) · scale in the scale's type; q - zero_point is taken exactly."""
    ct = compute_dtype(scale.dtype)
    diff = q.astype(F64)
    if zero_point is not None:
        diff = diff - _qparam(zero_point, q.ndim, axis, F64)
    y = diff.astype(ct) * _qparam(scale, q.ndim, axis, ct)
    return round_to(y, scale.dtype)


def fake_quantize(
    x: np.ndarray,
    scale: np.ndarray,
    zero_point: np.ndarray,
    axis: int | None,
    quant_min: int,
    quant_max: int,
) -> np.ndarray:
    """(clamp(round_half_even(x / scale) + zp, quant_min, quant_max) - zp) · scale, in
    float throughout (NaN stays NaN). Divides by the scale like ``quantize`` (PyTorch
    multiplies by 1/scale, which can differ at exact ties)."""
    ct = _quant_dtype(x, scale)
    sc = _qparam(scale, x.ndim, axis, ct)
    zp = _qparam(zero_point, x.ndim, axis, ct)
    q = np.clip(np.rint(x.astype(ct) / sc) + zp, quant_min, quant_max)
    return round_to((q - zp) * sc, x.dtype)


def dynamic_quantize_linear(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ONNX DynamicQuantizeLinear, in f32 as onnxruntime: the u8 values, the scale and the
    zero point (see ``mir.dynamic_quantize_linear``)."""
    v = x.astype(F32)
    zero = np.float32(0.0)
    lo = np.minimum(zero, v.min()) if v.size else zero
    hi = np.maximum(zero, v.max()) if v.size else zero
    # onnxruntime's scale for an all-zero input (the ONNX reference divides it by 255)
    scale = np.float32(1.0) if hi == lo else np.float32(hi - lo) / np.float32(255.0)
    zp = np.rint(np.clip(-lo / scale, zero, np.float32(255.0))).astype(np.uint8)
    scale_arr, zp_arr = np.asarray(scale, F32), np.asarray(zp)
    return quantize(v, scale_arr, zp_arr, None, np.dtype(np.uint8)), scale_arr, zp_arr


def _centered(v: np.ndarray, zero_point: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    """v - zero_point exactly (in f64), a vector zero point viewed as ``shape``."""
    out = v.astype(F64)
    if zero_point is None:
        return out
    z = zero_point.astype(F64)
    return out - (z.reshape(()) if z.size == 1 else z.reshape(shape))


def _to_i32(acc: np.ndarray) -> np.ndarray:
    """An exact integer sum held in f64 as i32, wrapping like int32 accumulation."""
    return acc.astype(np.int64).astype(np.int32)


def matmul_integer(
    a: np.ndarray, b: np.ndarray, a_zero_point: np.ndarray | None, b_zero_point: np.ndarray | None
) -> np.ndarray:
    """(a - a_zero_point) · (b - b_zero_point) in i32; vector zero points run along a's
    rows and b's columns. The f64 sums are exact: 8-bit products summed stay below 2^53."""
    x = _centered(a, a_zero_point, (-1, 1))
    w = _centered(b, b_zero_point, (-1,))
    return _to_i32(matmul(x, w))


def dynamic_quantize_matmul(
    x: np.ndarray,
    w: np.ndarray,
    w_scale: np.ndarray,
    w_zero_point: np.ndarray | None,
    bias: np.ndarray | None,
) -> np.ndarray:
    """onnxruntime's DynamicQuantizeMatMul as the chain it fuses computes it, in f32: x
    by ``dynamic_quantize_linear``, its ``matmul_integer`` with w, the sums times scale ·
    w_scale, plus the bias (see ``mir.dynamic_quantize_matmul``)."""
    q, scale, zp = dynamic_quantize_linear(x)
    y = matmul_integer(q, w, zp, w_zero_point).astype(F32) * (scale * w_scale.astype(F32))
    return y if bias is None else y + bias.astype(F32)


def conv_integer(
    x: np.ndarray,
    w: np.ndarray,
    x_zero_point: np.ndarray | None,
    w_zero_point: np.ndarray | None,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int,
) -> np.ndarray:
    """conv(x - x_zero_point, w - w_zero_point) in i32 (padding adds zeros to the
    centred input); a vector weight zero point runs over output channels."""
    xc = _centered(x, x_zero_point, ())
    wc = _centered(w, w_zero_point, (-1, *([1] * (w.ndim - 1))))
    return _to_i32(conv(xc, wc, strides, pads, dilations, groups))
