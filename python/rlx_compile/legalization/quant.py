"""Quantised kernels lowered to primitives, for targets that do not claim them: ONNX's
dynamic quantisation ops as the chains the ONNX importer built before the ops existed
(integer products as int32 operands centred on their zero points; a convolution computed
exactly in f64); the integer matmul/conv, the quantized add, average pool and softmax
as the ops their reference semantics names (an exact integer product and the f32
epilogue; dequantize, add, quantize; the window mean of x - x_zero_point, its product
with x_scale / y_scale, a quantize; the table's exponentials of max(x) - x, their exact
sum, a division, a quantize), so that they give the same bits on every target."""

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from rlx_compile.builder import GraphBuilder, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import RawDataAttr
from rlx_compile.dialects.dim_expr import Dim
from rlx_compile.dialects.types import DType
from rlx_compile.legalization.base import COMMON_IR, ConversionPattern


class LowerDynamicQuantizeLinear(ConversionPattern):
    path = COMMON_IR
    summary = "the range by reductions, scale and zero point elementwise, a quantize"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.DynamicQuantizeLinearOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x = op.input
        hi = b.maximum(b.reduce("max", x), 0.0)
        lo = b.minimum(b.reduce("min", x), 0.0)
        span = b.sub(hi, lo)
        scale = b.where(b.compare("eq", span, 0.0), 1.0, b.div(span, 255.0))
        zp_f = b.unary(mir.RoundOp, b.div(b.neg(lo), scale))
        zp = b.cast(b.minimum(b.maximum(zp_f, 0.0), 255.0), DType.U8)
        y = b.emit(mir.QuantizeOp(x, scale, zp, dtype=DType.U8)).results[0]
        self.commit(rewriter, op, ops, [y, scale, zp])


def centered(b: GraphBuilder, v: SSAValue, zp: SSAValue | None, zp_axis: int) -> SSAValue:
    """v - zero_point in int32; a vector zero point applies along ``zp_axis`` of v."""
    out = b.cast(v, DType.I32)
    if zp is None:
        return out
    z = b.cast(zp, DType.I32)
    if type_of(z).rank == 1 and type_of(z).shape[0] != 1:
        rank = type_of(v).rank
        shape: list[Dim] = [1] * rank
        shape[zp_axis % rank] = type_of(z).shape[0]
        if tuple(shape) != type_of(z).shape:
            z = b.reshape(z, shape)
    return b.sub(out, z)


def integer_conv(
    b: GraphBuilder,
    x: SSAValue,
    w: SSAValue,
    geometry: tuple[list[int], list[int], list[int], int],
) -> SSAValue:
    """Convolution of int32 tensors, computed exactly in float64 (every partial sum of
    8-bit products is far below 2^53) and converted back."""
    y = b.conv(b.cast(x, DType.F64), b.cast(w, DType.F64), *geometry)
    return b.cast(y, DType.I32)


class LowerMatmulInteger(ConversionPattern):
    path = COMMON_IR
    summary = "operands cast to int32 minus their zero points, a matmul"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.MatmulIntegerOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        a = centered(b, op.lhs, op.lhs_zero_point, -2)
        w = centered(b, op.rhs, op.rhs_zero_point, -1)
        self.commit(rewriter, op, ops, [b.matmul(a, w)])


class LowerConvInteger(ConversionPattern):
    path = COMMON_IR
    summary = "operands minus their zero points, a conv in f64, a cast to int32"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ConvIntegerOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        geometry = (
            list(p.ints("strides")), list(p.ints("pads")), list(p.ints("dilations")),
            p.int("groups"),
        )  # fmt: skip
        x = centered(b, op.input, op.input_zero_point, 1)
        w = centered(b, op.weight, op.weight_zero_point, 0)
        self.commit(rewriter, op, ops, [integer_conv(b, x, w, geometry)])


class LowerIntegerLinear(ConversionPattern):
    path = COMMON_IR
    summary = (
        "the exact product (matmul_integer, conv_integer), then f32(acc) · scale + bias, "
        "the activation, the requantisation"
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mir.IntegerLinearOp):
            return
        b, ops = self.builder(op)
        p = op.props()
        dtype = type_of(op.input).dtype
        zero = p.int("input_zero_point")
        zp = b.constant(zero, dtype, []) if zero else None
        if isinstance(op, mir.IntegerConvOp):
            product: Operation = mir.ConvIntegerOp(
                op.input, op.weight, zp, None, strides=p.ints("strides"), pads=p.ints("pads"),
                dilations=p.ints("dilations"), groups=p.int("groups"),
            )  # fmt: skip
            axis = 1
        else:
            w_zero = p.int("weight_zero_point")
            w_zp = b.constant(w_zero, type_of(op.weight).dtype, []) if w_zero else None
            product = mir.MatmulIntegerOp(op.input, op.weight, zp, w_zp)
            axis = type_of(op.result).rank - 1
        acc = b.emit(product).results[0]
        rank = type_of(acc).rank

        def along_axis(v: SSAValue) -> SSAValue:  # a vector (or one element) over axis
            shape: list[Dim] = [1] * rank
            shape[axis] = type_of(v).shape[0]
            return b.reshape(v, shape)

        # The interpreter's epilogue, op by op: the same kernels give the same bits.
        y = b.mul(b.cast(acc, DType.F32), along_axis(op.scale))
        if op.bias is not None:
            y = b.add(y, along_axis(op.bias))
        y = b.activation(y, p.enum("activation"))
        out_scale = p.opt_float("out_scale")
        if out_scale is not None:
            out = type_of(op.result).dtype
            y = b.quantize(
                y, b.constant(out_scale, DType.F32, []),
                b.constant(p.int("out_zero_point"), out, []), dtype=out,
            )  # fmt: skip
            table = p.get("table")
            if table is not None:  # table[q mod 256]: a gather wraps a negative index
                data = np.frombuffer(cast(RawDataAttr, table).data, out.numpy)
                y = b.gather(b.constant(data, out, [256]), y, 0)
        self.commit(rewriter, op, ops, [y])


class LowerQuantizedAdd(ConversionPattern):
    path = COMMON_IR
    summary = "each side dequantized, an add, the activation, a quantize"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.QuantizedAddOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()

        def params(side: str, dtype: DType) -> tuple[SSAValue, SSAValue]:
            scale = b.constant(p.float(f"{side}_scale"), DType.F32, [])
            return scale, b.constant(p.int(f"{side}_zero_point"), dtype, [])

        total = b.add(*(
            b.dequantize(v, *params(side, type_of(v).dtype))
            for v, side in ((op.lhs, "lhs"), (op.rhs, "rhs"))
        ))  # fmt: skip
        out = type_of(op.result).dtype
        y = b.quantize(b.activation(total, p.enum("activation")), *params("out", out), dtype=out)
        self.commit(rewriter, op, ops, [y])


class LowerQuantizedAvgPool(ConversionPattern):
    path = COMMON_IR
    summary = (
        "dequantize(x, 1, x_zero_point) (exact), the f32 average pool, its product with "
        "f32(x_scale / y_scale), quantize(·, 1, y_zero_point)"
    )

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.QuantizedAvgPoolOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        dtype = type_of(op.input).dtype
        one = b.constant(1.0, DType.F32, [])
        # x - x_zero_point, exact in f32; the pool sums it exactly (at most 2**24) and
        # divides once: the op's f32(S) / f32(n)
        centred = b.dequantize(op.input, one, b.constant(p.int("x_zero_point"), dtype, []))
        mean = b.emit(
            mir.AvgPoolOp(
                centred, p.ints("kernel"), strides=p.ints("strides"), pads=p.ints("pads"),
                dilations=p.ints("dilations"), ceil_mode=p.flag("ceil_mode"),
                count_include_pad=p.flag("count_include_pad"),
            )
        ).results[0]  # fmt: skip
        m = b.constant(p.float("x_scale") / p.float("y_scale"), DType.F32, [])
        zero = b.constant(p.int("y_zero_point"), dtype, [])
        self.commit(rewriter, op, ops, [b.quantize(b.mul(mean, m), one, zero, dtype=dtype)])


class LowerQuantizedSoftmax(ConversionPattern):
    path = COMMON_IR
    summary = (
        "max(x) - x (i32), its exponentials gathered from the op's table (i64), their sum "
        "(exact), each over it in f32, quantize(·, y_scale, y_zero_point)"
    )

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.QuantizedSoftmaxOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        axis = p.int("axis")
        x = b.cast(op.input, DType.I32)
        diff = b.sub(b.reduce("max", x, axis, keepdims=True), x)  # 0..255
        table = b.constant(mir.softmax_table(p.float("x_scale")), DType.I64, [256])
        e = b.gather(table, diff, 0)
        total = b.reduce("sum", e, axis, keepdims=True)  # exact in i64, in any order
        v = b.div(b.cast(e, DType.F32), b.cast(total, DType.F32))
        out = type_of(op.result).dtype
        scale = b.constant(p.float("y_scale"), DType.F32, [])
        y = b.quantize(v, scale, b.constant(p.int("y_zero_point"), out, []), dtype=out)
        self.commit(rewriter, op, ops, [y])


QUANT_PATTERNS: tuple[type[ConversionPattern], ...] = (
    LowerIntegerLinear,
    LowerQuantizedAdd,
    LowerQuantizedAvgPool,
    LowerQuantizedSoftmax,
    LowerDynamicQuantizeLinear,
    LowerMatmulInteger,
    LowerConvInteger,
)
