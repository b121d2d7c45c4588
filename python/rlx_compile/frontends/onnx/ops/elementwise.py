"""Elementwise ONNX ops: one MIR op each where MIR has it, short chains otherwise."""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import RecurrentActivation
from rlx_compile.dialects.types import DType
from rlx_compile.folding import FoldingBuilder
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    converter,
    dtype_of,
)
from rlx_compile.interpreter.recurrent import activation
from rlx_compile.legalization.patterns import prelu_chain

_UNARY: dict[str, type[mir.UnaryOp]] = {
    "Abs": mir.AbsOp,
    "Neg": mir.NegOp,
    "Relu": mir.ReluOp,
    "Sign": mir.SignOp,
    "Not": mir.NotOp,
    "Exp": mir.ExpOp,
    "Log": mir.LogOp,
    "Sqrt": mir.SqrtOp,
    "Reciprocal": mir.ReciprocalOp,
    "Tanh": mir.TanhOp,
    "Sigmoid": mir.SigmoidOp,
    "Erf": mir.ErfOp,
    "Sin": mir.SinOp,
    "Cos": mir.CosOp,
    "Tan": mir.TanOp,
    "Asin": mir.AsinOp,
    "Acos": mir.AcosOp,
    "Atan": mir.AtanOp,
    "Sinh": mir.SinhOp,
    "Cosh": mir.CoshOp,
    "Asinh": mir.AsinhOp,
    "Acosh": mir.AcoshOp,
    "Atanh": mir.AtanhOp,
    "Floor": mir.FloorOp,
    "Ceil": mir.CeilOp,
    "Round": mir.RoundOp,
    "Softplus": mir.SoftplusOp,
    "BitwiseNot": mir.BitwiseNotOp,
}


@converter(*_UNARY)
def unary(ctx: NodeContext) -> ConverterResult:
    return ctx.b.unary(_UNARY[ctx.op_type], ctx.x(0))


@converter("Identity")
def identity(ctx: NodeContext) -> ConverterResult:
    return ctx.any(0)  # tensors, and sequences or optionals as they are


_BINARY: dict[str, type[mir.BinaryOp]] = {
    "Add": mir.AddOp,
    "Sub": mir.SubOp,
    "Mul": mir.MulOp,
    "Div": mir.DivOp,
    "And": mir.AndOp,
    "Or": mir.OrOp,
    "Xor": mir.XorOp,
    "BitwiseAnd": mir.BitwiseAndOp,
    "BitwiseOr": mir.BitwiseOrOp,
    "BitwiseXor": mir.BitwiseXorOp,
}


@converter(*_BINARY)
def binary(ctx: NodeContext) -> ConverterResult:
    return ctx.b.binary(_BINARY[ctx.op_type], ctx.x(0), ctx.x(1))


_COMPARE = {
    "Equal": "eq",
    "Greater": "gt",
    "GreaterOrEqual": "ge",
    "Less": "lt",
    "LessOrEqual": "le",
}


@converter(*_COMPARE)
def compare(ctx: NodeContext) -> ConverterResult:
    return ctx.b.compare(_COMPARE[ctx.op_type], ctx.x(0), ctx.x(1))


@converter("Where")
def where(ctx: NodeContext) -> ConverterResult:
    return ctx.b.where(ctx.x(0), ctx.x(1), ctx.x(2))


@converter("Pow")
def pow_(ctx: NodeContext) -> ConverterResult:
    x, y = ctx.x(0), ctx.x(1)
    tx, ty = type_of(x).dtype, type_of(y).dtype
    if tx is ty:
        return ctx.b.pow(x, y)
    if not tx.is_float and ty.is_float:
        # An integer raised to a float power: computed in float64 and truncated back,
        # as the ONNX reference does.
        wide = ctx.b.pow(ctx.b.cast(x, DType.F64), ctx.b.cast(y, DType.F64))
        return ctx.b.cast(wide, tx)
    return ctx.b.pow(x, ctx.b.cast(y, tx))


@converter("Mod")
def mod(ctx: NodeContext) -> ConverterResult:
    x, y = ctx.x(0), ctx.x(1)
    fmod = ctx.attr("fmod", 0)
    return ctx.b.binary(mir.FmodOp if fmod else mir.ModOp, x, y)


@converter("BitShift")
def bit_shift(ctx: NodeContext) -> ConverterResult:
    direction = ctx.check_attr("direction", ("LEFT", "RIGHT"), None)
    op = mir.ShiftLeftOp if direction == "LEFT" else mir.ShiftRightOp
    return ctx.b.binary(op, ctx.x(0), ctx.x(1))


@converter("Sum")
def sum_(ctx: NodeContext) -> ConverterResult:
    return ctx.b.variadic(mir.AddNOp, ctx.inputs())


@converter("Mean")
def mean(ctx: NodeContext) -> ConverterResult:
    return ctx.b.variadic(mir.MeanNOp, ctx.inputs())


@converter("Max")
def max_(ctx: NodeContext) -> ConverterResult:
    return ctx.b.variadic(mir.MaxNOp, ctx.inputs())


@converter("Min")
def min_(ctx: NodeContext) -> ConverterResult:
    return ctx.b.variadic(mir.MinNOp, ctx.inputs())


# ---------------------------------------------------------------------------------
# Cast
# ---------------------------------------------------------------------------------

_SATURATING = (DType.F8E4M3, DType.F8E5M2, DType.F8E4M3FNUZ, DType.F8E5M2FNUZ)
_SUBBYTE_INTS = (DType.I4, DType.U4, DType.I2, DType.U2)


def cast_to(ctx: NodeContext, x: SSAValue, to: DType) -> SSAValue:
    """ONNX Cast: like mir.cast, except that float8 targets saturate by default and
    floats wrap into 4- and 2-bit integers (the reference's conversion) where mir.cast
    saturates."""
    saturate = ctx.attr("saturate", 1)
    src = type_of(x).dtype
    if to in _SATURATING and saturate and src.is_float:
        limit = float(ml_dtypes.finfo(to.numpy).max)
        x = ctx.b.minimum(ctx.b.maximum(x, -limit), limit)
    if to in _SUBBYTE_INTS and src.is_float:
        x = ctx.b.cast(x, DType.I32)
    return ctx.b.cast(x, to)


@converter("Cast")
def cast(ctx: NodeContext) -> ConverterResult:
    ctx.check_attr("round_mode", ("up",), "up")
    return cast_to(ctx, ctx.x(0), dtype_of(ctx.attr("to")))


@converter("CastLike")
def cast_like(ctx: NodeContext) -> ConverterResult:
    ctx.check_attr("round_mode", ("up",), "up")
    return cast_to(ctx, ctx.x(0), type_of(ctx.x(1)).dtype)


# ---------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------


RECURRENT_ACTIVATIONS: dict[str, tuple[RecurrentActivation, int, int]] = {
    "Sigmoid": (RecurrentActivation.SIGMOID, 0, 0),
    "Tanh": (RecurrentActivation.TANH, 0, 0),
    "Relu": (RecurrentActivation.RELU, 0, 0),
    "Softsign": (RecurrentActivation.SOFTSIGN, 0, 0),
    "Softplus": (RecurrentActivation.SOFTPLUS, 0, 0),
    "LeakyRelu": (RecurrentActivation.LEAKY_RELU, 1, 0),
    "ThresholdedRelu": (RecurrentActivation.THRESHOLDED_RELU, 1, 0),
    "Elu": (RecurrentActivation.ELU, 1, 0),
    "HardSigmoid": (RecurrentActivation.HARD_SIGMOID, 1, 1),
    "ScaledTanh": (RecurrentActivation.SCALED_TANH, 1, 1),  # left ONNX at opset 10
    "Affine": (RecurrentActivation.AFFINE, 1, 1),
}
"""ONNX's activations by name (RNN/GRU/LSTM's ``activations`` take these names): the
recurrent activation, and how many alpha / beta values each reads."""


def activation_fn(
    b: FoldingBuilder, name: str, alpha: float, beta: float
) -> Callable[[SSAValue], SSAValue]:
    """An ONNX activation by name (``RECURRENT_ACTIVATIONS``), with its alpha/beta."""
    if name not in RECURRENT_ACTIVATIONS:
        raise Unsupported(f"activation {name!r}")
    return activation(b, RECURRENT_ACTIVATIONS[name][0], alpha, beta)


ACTIVATION_DEFAULTS: dict[str, tuple[float, float]] = {
    "LeakyRelu": (0.01, 0.0),
    "ThresholdedRelu": (1.0, 0.0),
    "Elu": (1.0, 0.0),
    "HardSigmoid": (0.2, 0.5),
}
"""(alpha, beta) of the activations that take them, where ONNX gives a default."""


@converter("LeakyRelu", "ThresholdedRelu", "Elu", "HardSigmoid")
def parametric_activation(ctx: NodeContext) -> ConverterResult:
    alpha, beta = ACTIVATION_DEFAULTS[ctx.op_type]
    beta = ctx.attr("beta", beta) if ctx.op_type == "HardSigmoid" else beta
    return activation_fn(ctx.b, ctx.op_type, ctx.attr("alpha", alpha), beta)(ctx.x(0))


@converter("Softsign")
def softsign(ctx: NodeContext) -> ConverterResult:
    return activation_fn(ctx.b, "Softsign", 0.0, 0.0)(ctx.x(0))


@converter("PRelu")
def prelu(ctx: NodeContext) -> ConverterResult:
    x, slope = ctx.x(0), ctx.x(1)
    if type_of(x).dtype.is_float:
        return ctx.b.prelu(x, slope)
    return prelu_chain(ctx.b, x, slope)  # integers: mir.prelu is a float kernel


@converter("Selu")
def selu(ctx: NodeContext) -> ConverterResult:
    alpha = ctx.attr("alpha", 1.67326319217681884765625)
    return ctx.b.elu(ctx.x(0), alpha, ctx.attr("gamma", 1.05070102214813232421875))


@converter("Celu")
def celu(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    alpha = ctx.attr("alpha", 1.0)
    if alpha == 1.0:  # the default: Elu itself
        return ctx.b.elu(x, 1.0)
    neg = ctx.b.mul(ctx.b.sub(ctx.b.exp(ctx.b.div(x, alpha)), 1), alpha)
    return ctx.b.add(ctx.b.maximum(x, 0), ctx.b.minimum(neg, 0))


@converter("HardSwish")
def hard_swish(ctx: NodeContext) -> ConverterResult:
    return ctx.b.hard_swish(ctx.x(0))


@converter("Mish")
def mish(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    return ctx.b.mul(x, ctx.b.tanh(ctx.b.unary(mir.SoftplusOp, x)))


@converter("Swish")
def swish(ctx: NodeContext) -> ConverterResult:
    return scaled_silu(ctx.b, ctx.x(0), ctx.attr("alpha", 1.0))


def scaled_silu(b: FoldingBuilder, x: SSAValue, alpha: float) -> SSAValue:
    """x · sigmoid(alpha · x): ``mir.swish`` (``mir.silu`` for alpha 1)."""
    return b.swish(x, alpha)


@converter("Gelu")
def gelu(ctx: NodeContext) -> ConverterResult:
    approximate = ctx.check_attr("approximate", ("none", "tanh"), "none")
    return ctx.b.gelu(ctx.x(0), approximate)


@converter("Shrink")
def shrink(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    bias, lambd = ctx.attr("bias", 0.0), ctx.attr("lambd", 0.5)
    dtype = type_of(x).dtype
    if not dtype.is_float and (bias != int(bias) or lambd != int(lambd)):
        raise Unsupported("non-integral bias/lambd on an integer tensor")
    if not dtype.is_float:
        bias, lambd = int(bias), int(lambd)
    low = ctx.b.where(ctx.b.compare("lt", x, -lambd), ctx.b.add(x, bias), 0)
    return ctx.b.where(ctx.b.compare("gt", x, lambd), ctx.b.sub(x, bias), low)


def _scalar_bound(ctx: NodeContext, i: int) -> float | None:
    """Input ``i`` as a Python float when it is a one-element constant."""
    arr = ctx.known(i)
    return float(arr.reshape(-1)[0]) if arr is not None and arr.size == 1 else None


@converter("Clip")
def clip(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    low, high = _scalar_bound(ctx, 1), _scalar_bound(ctx, 2)
    if type_of(x).dtype.is_float and low is not None and high is not None:
        return ctx.b.clip(x, low, high)
    lo, hi = ctx.opt(1), ctx.opt(2)
    if lo is not None:
        x = ctx.b.maximum(x, lo)
    if hi is not None:
        x = ctx.b.minimum(x, hi)
    return x


@converter("IsNaN")
def is_nan(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    return ctx.b.compare("ne", x, x)


@converter("IsInf")
def is_inf(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    neg, pos = ctx.attr("detect_negative", 1), ctx.attr("detect_positive", 1)
    if not type_of(x).dtype.is_float:
        raise Unsupported("IsInf of a non-float tensor")
    terms = []
    if pos:
        terms.append(ctx.b.compare("eq", x, float("inf")))
    if neg:
        terms.append(ctx.b.compare("eq", x, float("-inf")))
    if not terms:
        return ctx.full(type_of(x).shape, False, DType.BOOL)
    return terms[0] if len(terms) == 1 else ctx.b.binary(mir.OrOp, *terms)
