"""Quantisation ops: QuantizeLinear / DequantizeLinear (per tensor, per axis, blocked),
DynamicQuantizeLinear, and the integer products (MatMulInteger, ConvInteger,
QLinearMatMul, QLinearConv); onnxruntime's fused ones (com.microsoft
DynamicQuantizeMatMul, MatMulIntegerToFloat), which models saved after its graph
optimisation hold; and the rest of its QOperator format (com.microsoft QLinearAdd,
QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
QLinearAveragePool, QLinearSoftmax, QLinearConcat, QLinearWhere,
QGemm), which its ``quantize_static`` writes."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import Dim, DType, fmt_shape
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    axis_of,
    converter,
    dtype_of,
)
from rlx_compile.frontends.onnx.ops.elementwise import activation_fn
from rlx_compile.frontends.onnx.ops.legacy import coerced_2d
from rlx_compile.frontends.onnx.ops.microsoft import MS
from rlx_compile.frontends.onnx.ops.nn import average_pool_of, conv_geometry
from rlx_compile.frontends.onnx.ops.shape import reshape
from rlx_compile.legalization.quant import centered, integer_conv


def _param_layout(
    ctx: NodeContext, x: SSAValue, scale: SSAValue, block_size: int
) -> tuple[int | None, SSAValue | None]:
    """How a scale (or zero point) applies: (axis for a per-axis vector or None for one
    element, None) -- or, for blocked quantisation, (None, a gather index that repeats
    every block's parameter over the block along the axis)."""
    rank = type_of(x).rank
    axis_attr = ctx.attr("axis", 1)
    if not block_size and (type_of(scale).rank == 0 or type_of(scale).num_elements() == 1):
        return None, None  # per tensor: the axis does not matter
    axis = axis_of(axis_attr, rank)
    if block_size:
        length = type_of(x).shape[axis]
        if not isinstance(length, int):
            raise Unsupported("blocked quantisation along a symbolic axis")
        return axis, ctx.constant(np.arange(length, dtype=np.int64) // block_size)
    return axis, None


def _full(ctx: NodeContext, p: SSAValue, axis: int, index: SSAValue) -> SSAValue:
    """A blocked parameter repeated over every element of its block."""
    return ctx.b.gather(p, index, axis)


def _per_tensor(
    ctx: NodeContext, axis: int | None, scale: SSAValue, zp: SSAValue | None
) -> tuple[SSAValue, SSAValue | None]:
    """Per-tensor parameters as the rank-0 values mir's (de)quantize take; per-axis ones
    unchanged."""
    if axis is not None:
        return scale, zp

    def scalar(p: SSAValue) -> SSAValue:
        return p if type_of(p).rank == 0 else reshape(ctx, p, [])

    return scalar(scale), None if zp is None else scalar(zp)


@converter("QuantizeLinear")
def quantize_linear(ctx: NodeContext) -> ConverterResult:
    x, scale, zp = ctx.x(0), ctx.x(1), ctx.opt(2)
    ctx.check_attr("precision", (0,), 0)
    saturate = ctx.attr("saturate", 1)
    block = ctx.attr("block_size", 0)
    declared = ctx.attr("output_dtype", 0)
    out = DType.U8 if not declared else dtype_of(declared)
    if zp is not None:
        out = type_of(zp).dtype
    if not out.is_quantized:
        raise Unsupported(f"quantisation to {out.value}")
    if out.is_narrow_float and not saturate:
        raise Unsupported("non-saturating float8 quantisation")
    axis, index = _param_layout(ctx, x, scale, block)
    b = ctx.b
    if index is None:
        scale, zp = _per_tensor(ctx, axis, scale, zp)
        return b.emit(mir.QuantizeOp(x, scale, zp, dtype=out, axis=axis)).results[0]
    # Blocked: the quantize formula elementwise with the repeated parameters.
    assert axis is not None
    if out.is_narrow_float:
        raise Unsupported("blocked float8 quantisation")
    sc = _full(ctx, scale, axis, index)
    q = b.unary(mir.RoundOp, b.div(x, sc if type_of(sc).dtype is type_of(x).dtype
                                   else b.cast(sc, type_of(x).dtype)))  # fmt: skip
    if zp is not None:
        q = b.add(q, b.cast(_full(ctx, zp, axis, index), type_of(q).dtype))
    lo, hi = out.int_range
    q = b.minimum(b.maximum(q, float(lo)), float(hi))
    return b.cast(q, out)


@converter("DequantizeLinear")
def dequantize_linear(ctx: NodeContext) -> ConverterResult:
    x, scale, zp = ctx.x(0), ctx.x(1), ctx.opt(2)
    block = ctx.attr("block_size", 0)
    declared = ctx.attr("output_dtype", 0)
    axis, index = _param_layout(ctx, x, scale, block)
    b = ctx.b
    if index is None:
        scale, zp = _per_tensor(ctx, axis, scale, zp)
        y: SSAValue = b.emit(mir.DequantizeOp(x, scale, zp, axis=axis)).results[0]
    else:
        assert axis is not None
        sc = _full(ctx, scale, axis, index)
        diff = b.cast(x, DType.F64)
        if zp is not None:
            diff = b.sub(diff, b.cast(_full(ctx, zp, axis, index), DType.F64))
        y = b.mul(b.cast(diff, type_of(sc).dtype), sc)
    if declared and dtype_of(declared) is not type_of(y).dtype:
        y = b.cast(y, dtype_of(declared))
    return y


@converter("DynamicQuantizeLinear")
def dynamic_quantize_linear(ctx: NodeContext) -> ConverterResult:
    return list(ctx.b.emit(mir.DynamicQuantizeLinearOp(ctx.x(0))).results)


def _zero_point(ctx: NodeContext, i: int) -> SSAValue | None:
    """Input ``i``, an optional zero point, as the integer ops take it: rank ≤ 1."""
    zp = ctx.opt(i)
    if zp is None or type_of(zp).rank <= 1:
        return zp
    if type_of(zp).num_elements() != 1:
        raise Unsupported(f"a zero point of shape {fmt_shape(type_of(zp).shape)}")
    return reshape(ctx, zp, [])


@converter("MatMulInteger")
def matmul_integer(ctx: NodeContext) -> ConverterResult:
    # Zero points: per row of A (axis -2), per column of B (axis -1).
    op = mir.MatmulIntegerOp(ctx.x(0), ctx.x(1), _zero_point(ctx, 2), _zero_point(ctx, 3))
    return ctx.b.emit(op).results[0]


@converter("DynamicQuantizeMatMul", domain="com.microsoft")
def dynamic_quantize_matmul(ctx: NodeContext) -> ConverterResult:
    # A, B, b_scale, b_zero_point?, bias?
    op = mir.DynamicQuantizeMatmulOp(ctx.x(0), ctx.x(1), ctx.x(2), _zero_point(ctx, 3), ctx.opt(4))
    return ctx.b.emit(op).results[0]


@converter("MatMulIntegerToFloat", domain="com.microsoft")
def matmul_integer_to_float(ctx: NodeContext) -> ConverterResult:
    """A already quantised: the chain onnxruntime fused, cast(MatMulInteger) · (a_scale ·
    b_scale) + bias (``fuse-dynamic-quantize-matmul`` makes it one op again where A is a
    DynamicQuantizeLinear's)."""
    # A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?
    b = ctx.b
    acc = b.emit(
        mir.MatmulIntegerOp(ctx.x(0), ctx.x(1), _zero_point(ctx, 4), _zero_point(ctx, 5))
    ).results[0]
    y = b.mul(b.cast(acc, DType.F32), b.mul(ctx.x(2), ctx.x(3)))
    bias = ctx.opt(6)
    return y if bias is None else b.add(y, bias)


@converter("ConvInteger")
def conv_integer(ctx: NodeContext) -> ConverterResult:
    w = ctx.x(1)
    strides, pads, dilations, groups = conv_geometry(ctx, w)
    op = mir.ConvIntegerOp(
        ctx.x(0), w, _zero_point(ctx, 2), _zero_point(ctx, 3),
        strides=strides, pads=pads, dilations=dilations, groups=groups,
    )  # fmt: skip
    return ctx.b.emit(op).results[0]


def _requantize(
    ctx: NodeContext,
    acc: SSAValue,
    scales: tuple[SSAValue, SSAValue, SSAValue],
    y_zp: SSAValue | None,
    out: DType,
    scale_axis: int | None = None,
) -> SSAValue:
    """round(acc · (s_a · s_b / s_y) + zp_y), clamped to the output type (the ONNX
    reference's order of operations)."""
    b = ctx.b
    sa, sb, sy = scales
    if scale_axis is not None and type_of(sb).rank == 1 and type_of(sb).shape[0] != 1:
        rank = type_of(acc).rank
        shape: list[Dim] = [1] * rank
        shape[scale_axis] = type_of(sb).shape[0]
        sb = reshape(ctx, sb, shape)
    factor = b.div(b.mul(sa, sb), sy)
    y = b.mul(b.cast(acc, type_of(factor).dtype), factor)
    if y_zp is not None:
        y = b.add(y, b.cast(y_zp, type_of(y).dtype))
    lo, hi = out.int_range
    y = b.unary(mir.RoundOp, b.minimum(b.maximum(y, float(lo)), float(hi)))
    return b.cast(y, out)


def _eight_bit(ctx: NodeContext, *inputs: int) -> bool:
    """Whether the inputs are all i8 or u8 (what MatMulInteger and ConvInteger take)."""
    return all(type_of(ctx.x(i)).dtype in (DType.I8, DType.U8) for i in inputs)


def _exact_product(ctx: NodeContext, a: SSAValue, b: SSAValue) -> SSAValue:
    """``(a - zero point 2) · (b - zero point 5)`` in int32, a and b being inputs 0 and 3
    (transposed or not; the layout QLinearMatMul and QGemm share): MatMulInteger's product,
    one op for 8-bit operands."""
    if _eight_bit(ctx, 0, 3):
        op = mir.MatmulIntegerOp(a, b, _zero_point(ctx, 2), _zero_point(ctx, 5))
        return ctx.b.emit(op).results[0]
    return ctx.b.matmul(centered(ctx.b, a, ctx.opt(2), -2), centered(ctx.b, b, ctx.opt(5), -1))


_OUTPUT_AND_BIAS = {"conv": (6, 7, 8), "matmul": (6, 7, None), "gemm": (7, 8, 6)}
"""Per node kind: the inputs of y's scale, y's zero point and the int32 bias (inputs 0-5
are x, its scale and zero point, the weight, its scale and zero point)."""


def _integer_kernel(ctx: NodeContext, kind: str, w: SSAValue) -> SSAValue | None:
    """QLinearConv / QLinearMatMul / QGemm (of weight ``w``, transposed as B' for a QGemm)
    as one ``mir.integer_conv`` / ``mir.integer_matmul`` where that op takes it: an 8-bit
    input and an output of per-tensor parameters (or an f32 output: a QGemm without
    y_scale), an i8 weight without a zero point (symmetric, as onnxruntime's
    quantize_static writes them) of per-tensor or per-output-channel scales, all known;
    a matmul's weight may also be u8 or i8 with one zero point (an activation).
    The integer sums are exact, as ONNX defines them; the requantisation is the op's f32
    epilogue (``f32(acc) · (s_x · s_w) + bias``, then ``/ s_y``) where ONNX scales
    ``acc + bias`` by ``s_x · s_w / s_y`` at once: a value on a step's edge may round to
    its neighbour. None where the op does not take it."""
    x = ctx.x(0)
    eight_bit = (DType.I8, DType.U8)
    if type_of(x).dtype not in eight_bit or type_of(w).dtype not in eight_bit:
        return None
    if kind == "gemm" and ctx.attr("transA", 0):
        return None
    at_sy, at_zy, at_bias = _OUTPUT_AND_BIAS[kind]
    known = {i: ctx.known(i) for i in (1, 2, 4, 5, at_sy, at_zy, at_bias) if i is not None}
    if any(ctx.has(i) and value is None for i, value in known.items()):
        return None  # a parameter known only at run time
    sx, zx, sw, zw, sy, zy = (known[i] for i in (1, 2, 4, 5, at_sy, at_zy))
    bias_i32 = known.get(at_bias) if at_bias is not None else None
    if sx is None or sw is None or sx.size != 1 or (sy is not None and sy.size != 1):
        return None
    if sy is None and kind != "gemm":
        return None
    w_zero = 0
    if zw is not None and np.any(zw):
        if kind != "matmul" or zw.size != 1:
            return None  # (a conv's and a QGemm's weight are symmetric)
        w_zero = int(zw.reshape(-1)[0])
    elif type_of(w).dtype is not DType.I8 and kind != "matmul":
        return None
    channels = type_of(w).shape[0 if kind == "conv" else -1]
    scales = [p for p in (sx, sw, sy) if p is not None]
    if sw.size not in (1, channels) or any(p.dtype != np.float32 for p in scales):
        return None
    if bias_i32 is not None and bias_i32.size != channels:
        return None
    out = (
        DType.F32
        if sy is None
        else DType.from_numpy(zy.dtype)
        if zy is not None
        else type_of(x).dtype
    )
    if out not in (DType.F32, DType.I8, DType.U8):
        return None
    alpha = np.float32(ctx.attr("alpha", 1.0)) if kind == "gemm" else np.float32(1.0)
    scale = np.float32(sx.reshape(())) * alpha * sw.reshape(-1).astype(np.float32)
    b = ctx.b
    bias = None
    if bias_i32 is not None:  # dequantized with the product's scale, as a QDQ bias is
        bias = b.constant((bias_i32.reshape(-1).astype(np.float32) * scale).astype(np.float32))
    x_zero = int(zx.reshape(-1)[0]) if zx is not None else 0
    y_scale = None if sy is None else float(sy.reshape(()))
    y_zero = int(zy.reshape(-1)[0]) if zy is not None else 0
    op: mir.IntegerLinearOp
    if kind != "conv":
        op = mir.IntegerMatmulOp(
            x, w, b.constant(scale), bias, input_zero_point=x_zero, weight_zero_point=w_zero,
            out_scale=y_scale, out_zero_point=y_zero, out_dtype=out,
        )  # fmt: skip
        return b.emit(op).results[0]
    strides, pads, dilations, groups = conv_geometry(ctx, w)
    op = mir.IntegerConvOp(
        x, w, b.constant(scale), bias, strides=strides, pads=pads, dilations=dilations,
        groups=groups, input_zero_point=x_zero, out_scale=y_scale, out_zero_point=y_zero,
        out_dtype=out,
    )  # fmt: skip
    return b.emit(op).results[0]


@converter("QLinearMatMul")
def qlinear_matmul(ctx: NodeContext) -> ConverterResult:
    """One requantised integer matmul (``_integer_kernel``), else the exact int32
    product, requantised."""
    kernel = _integer_kernel(ctx, "matmul", ctx.x(3))
    if kernel is not None:
        return kernel
    acc = _exact_product(ctx, ctx.x(0), ctx.x(3))
    y_zp = ctx.opt(7)
    out = type_of(y_zp).dtype if y_zp is not None else type_of(ctx.x(0)).dtype
    return _requantize(ctx, acc, (ctx.x(1), ctx.x(4), ctx.x(6)), y_zp, out, scale_axis=-1)


@converter("QLinearConv")
def qlinear_conv(ctx: NodeContext) -> ConverterResult:
    """One requantised integer conv (``_integer_kernel``), else the exact int32
    convolution (ConvInteger's, one op for 8-bit operands), plus the int32 bias,
    requantised."""
    kernel = _integer_kernel(ctx, "conv", ctx.x(3))
    if kernel is not None:
        return kernel
    w = ctx.x(3)
    strides, pads, dilations, groups = conv_geometry(ctx, w)
    acc: SSAValue
    if _eight_bit(ctx, 0, 3):
        op = mir.ConvIntegerOp(
            ctx.x(0), w, _zero_point(ctx, 2), _zero_point(ctx, 5),
            strides=strides, pads=pads, dilations=dilations, groups=groups,
        )  # fmt: skip
        acc = ctx.b.emit(op).results[0]
    else:
        x = centered(ctx.b, ctx.x(0), ctx.opt(2), 1)
        acc = integer_conv(
            ctx.b, x, centered(ctx.b, w, ctx.opt(5), 0), (strides, pads, dilations, groups)
        )
    bias = ctx.opt(8)
    if bias is not None:
        rank = type_of(acc).rank
        acc = ctx.b.add(acc, reshape(ctx, bias, [type_of(bias).shape[0], *([1] * (rank - 2))]))
    y_zp = ctx.opt(7)
    out = type_of(y_zp).dtype if y_zp is not None else type_of(ctx.x(0)).dtype
    return _requantize(ctx, acc, (ctx.x(1), ctx.x(4), ctx.x(6)), y_zp, out, scale_axis=1)


# ---------------------------------------------------------------------------------
# onnxruntime's QOperator ops (com.microsoft)
# ---------------------------------------------------------------------------------
# What onnxruntime's quantize_static writes in the QOperator format (and the int8 models
# of the ONNX model zoo hold) besides the standard QLinearConv and QLinearMatMul: each is
# "dequantize the inputs, the float op, quantize the result" with per-tensor parameters
# (onnxruntime's kernels compute the same in fixed point or with a lookup table; a value
# on a quantisation step's edge may round to the neighbouring step).


def _scalar_param(ctx: NodeContext, p: SSAValue, what: str) -> SSAValue:
    if type_of(p).num_elements() != 1:
        raise Unsupported(f"a {what} of shape {fmt_shape(type_of(p).shape)} (per tensor only)")
    return p if type_of(p).rank == 0 else reshape(ctx, p, [])


def _dequantized(ctx: NodeContext, at: int) -> tuple[SSAValue, DType]:
    """The quantised input at ``at`` (its scale and zero point follow it) as f32, and
    its integer type."""
    x, zp = ctx.x(at), ctx.opt(at + 2)
    scale = _scalar_param(ctx, ctx.x(at + 1), "scale")
    zp = None if zp is None else _scalar_param(ctx, zp, "zero point")
    return ctx.b.emit(mir.DequantizeOp(x, scale, zp)).results[0], type_of(x).dtype


def _quantized(ctx: NodeContext, y: SSAValue, at: int, dtype: DType) -> SSAValue:
    """``y`` quantised with the scale at ``at`` and the optional zero point after it (whose
    type, when given, is the result's)."""
    scale = _scalar_param(ctx, ctx.x(at), "scale")
    zp = ctx.opt(at + 1)
    if zp is not None:
        dtype = type_of(zp).dtype
        zp = _scalar_param(ctx, zp, "zero point")
    return ctx.b.emit(mir.QuantizeOp(y, scale, zp, dtype=dtype)).results[0]


@converter("QLinearAdd", "QLinearMul", domain=MS)
def qlinear_binary(ctx: NodeContext) -> ConverterResult:
    # A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale, C_zero_point?
    a, dtype = _dequantized(ctx, 0)
    b, _ = _dequantized(ctx, 3)
    y = ctx.b.add(a, b) if ctx.op_type == "QLinearAdd" else ctx.b.mul(a, b)
    return _quantized(ctx, y, 6, dtype)


@converter("QLinearSigmoid", "QLinearLeakyRelu", domain=MS)
def qlinear_activation(ctx: NodeContext) -> ConverterResult:
    # X, X_scale, X_zero_point?, Y_scale, Y_zero_point?
    x, dtype = _dequantized(ctx, 0)
    if ctx.op_type == "QLinearSigmoid":
        y = ctx.b.sigmoid(x)
    else:
        y = activation_fn(ctx.b, "LeakyRelu", ctx.attr("alpha", 0.01), 0.0)(x)
    return _quantized(ctx, y, 3, dtype)


def _spatial_axes(ctx: NodeContext, rank: int) -> list[int]:
    """The spatial axes of an N, C, D1... input, or of N, D1..., C with channels_last."""
    if ctx.attr("channels_last", 0):
        return list(range(1, rank - 1))
    return list(range(2, rank))


@converter("QLinearGlobalAveragePool", domain=MS)
def qlinear_global_average_pool(ctx: NodeContext) -> ConverterResult:
    # X, x_scale, x_zero_point, y_scale, y_zero_point
    x, dtype = _dequantized(ctx, 0)
    y = ctx.b.reduce("mean", x, _spatial_axes(ctx, type_of(x).rank), keepdims=True)
    return _quantized(ctx, y, 3, dtype)


@converter("QLinearAveragePool", domain=MS)
def qlinear_average_pool(ctx: NodeContext) -> ConverterResult:
    # X, x_scale, x_zero_point?, y_scale, y_zero_point?
    if ctx.attr("channels_last", 0):
        raise Unsupported("channels_last=1 (an NHWC input)")
    x, dtype = _dequantized(ctx, 0)
    y = average_pool_of(ctx, x)
    return _quantized(ctx, y, 3, dtype)


@converter("QLinearSoftmax", domain=MS)
def qlinear_softmax(ctx: NodeContext) -> ConverterResult:
    """The Softmax of opset ``opset``: before 13, over the input coerced to 2-D at
    ``axis`` (default 1); from 13, along ``axis`` (default -1)."""
    # X, X_scale, x_zero_point?, y_scale, y_zero_point
    x, dtype = _dequantized(ctx, 0)
    b = ctx.b

    def along(v: SSAValue, axis: int) -> SSAValue:
        return b.emit(mir.SoftmaxOp(v, axis)).results[0]

    opset = ctx.attr("opset")
    if opset is None:
        raise Unsupported("the required attribute 'opset' is missing")
    if opset < 13:
        y = coerced_2d(ctx, x, ctx.attr("axis", 1), along)
    else:
        y = along(x, axis_of(ctx.attr("axis", -1), type_of(x).rank))
    return _quantized(ctx, y, 3, dtype)


@converter("QLinearConcat", domain=MS)
def qlinear_concat(ctx: NodeContext) -> ConverterResult:
    # Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) for each input
    if ctx.num_inputs < 5 or (ctx.num_inputs - 2) % 3:
        raise Unsupported(
            f"{ctx.num_inputs} inputs: Y_scale, Y_zero_point and then (tensor, scale, "
            "zero point) for each input"
        )
    parts = [_dequantized(ctx, at) for at in range(2, ctx.num_inputs, 3)]
    rank = type_of(parts[0][0]).rank
    y = ctx.b.concat([v for v, _ in parts], axis_of(ctx.attr("axis"), rank))
    return _quantized(ctx, y, 0, parts[0][1])


@converter("QLinearWhere", domain=MS)
def qlinear_where(ctx: NodeContext) -> ConverterResult:
    # condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point
    x, dtype = _dequantized(ctx, 1)
    y, _ = _dequantized(ctx, 4)
    return _quantized(ctx, ctx.b.where(ctx.x(0), x, y), 7, dtype)


@converter("QGemm", domain=MS)
def qgemm(ctx: NodeContext) -> ConverterResult:
    """alpha · a_scale · b_scale · ((A - a_zero_point)' (B - b_zero_point)' + C): one
    integer matmul where it takes it (``_integer_kernel``), else the product exact in
    int32 as QLinearMatMul's; C is int32 in the product's scale. With y_scale the result
    is quantised (the requantisation of QLinearMatMul), else f32. B's scale and zero point
    may be per column."""
    # A, a_scale, a_zero_point, B, b_scale, b_zero_point?, C?, y_scale?, y_zero_point?
    b = ctx.b
    a_q, b_q = ctx.x(0), ctx.x(3)
    if ctx.attr("transA", 0):
        a_q = b.transpose(a_q, [1, 0])
    if ctx.attr("transB", 0):
        b_q = b.transpose(b_q, [1, 0])
    kernel = _integer_kernel(ctx, "gemm", b_q)
    if kernel is not None:
        return kernel
    acc = _exact_product(ctx, a_q, b_q)
    c = ctx.opt(6)
    if c is not None:
        acc = b.add(acc, b.cast(c, DType.I32))
    a_scale = _scalar_param(ctx, ctx.x(1), "scale")
    alpha = ctx.attr("alpha", 1.0)
    if alpha != 1.0:
        a_scale = b.mul(a_scale, alpha)
    b_scale = ctx.x(4)
    if not ctx.has(7):
        return b.mul(b.cast(acc, DType.F32), b.mul(a_scale, b_scale))
    y_zp = ctx.opt(8)
    out = type_of(y_zp).dtype if y_zp is not None else type_of(a_q).dtype
    y_scale = _scalar_param(ctx, ctx.x(7), "scale")
    return _requantize(ctx, acc, (a_scale, b_scale, y_scale), y_zp, out, scale_axis=-1)
