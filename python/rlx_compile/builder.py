"""Building HIR and MIR from Python.

``GraphBuilder`` emits ops through an insertion callback: ``ModuleBuilder`` appends them
to a new graph function, and rewrite patterns pass ``rewriter.insert_op`` so lowerings
build IR with the same calls users do. Every method infers result types through the op
definitions, so a builder can never produce an op its verifier would reject silently.

    with ModuleBuilder("layer") as m:
        x = m.input("x", (2, 128))
        w = m.param("w", (128, 128))
        m.output(m.linear(x, w, act="gelu"))
    module = m.module
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects import hir, mir
from rlx_compile.dialects.common import Activation
from rlx_compile.dialects.types import Dim, DType, TensorType, normalize_axis
from rlx_compile.ir import set_output_names, sync_function_type

Value = SSAValue
ScalarOrValue = SSAValue | float | int | bool


def type_of(v: SSAValue) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType):
        raise TypeError(f"expected an !rlx.tensor value, got {t}")
    return t


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+")
_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9_]")


def named(value: SSAValue, name: str) -> SSAValue:
    """Give a value a readable SSA name (``%w_q``) derived from a tensor name."""
    hint = name if _PLAIN_NAME.fullmatch(name) else _NOT_NAME_CHAR.sub("_", name)
    if not hint or hint[0].isdigit():
        hint = f"v_{hint}"
    # What the name_hint setter stores, without its checks (most of naming a value):
    # a hint of [A-Za-z0-9_] not starting with a digit is valid, and the setter drops a
    # trailing _<digits>.
    stem = hint.rstrip("0123456789")
    value._name = stem[:-1] if len(stem) < len(hint) and stem.endswith("_") else hint
    return value


UNROLL_MAX_ITERATIONS = 64
"""Static loops (ONNX's Loop and Scan, recurrent layers) of at most this many
iterations are unrolled; longer ones become one ``mir.loop`` (RLX's
``scan_unroll_max_length``)."""


class GraphBuilder:
    """Emits verified HIR/MIR ops through ``insert`` and returns their results."""

    def __init__(self, insert: Callable[[Operation], Any], location: Any = None):
        self._insert = insert
        self._location = location

    def emit(self, op: Operation) -> Operation:
        if self._location is not None:
            op.location = self._location
        self._insert(op)
        return op

    def _one(self, op: Operation) -> SSAValue:
        return self.emit(op).results[0]

    # -- leaves -----------------------------------------------------------------------
    def input(self, name: str, shape: Sequence[Dim], dtype: DType | str = "f32") -> SSAValue:
        return named(self._one(mir.InputOp(name, TensorType(shape, dtype))), name)

    def param(self, name: str, shape: Sequence[Dim], dtype: DType | str = "f32") -> SSAValue:
        return named(self._one(mir.ParamOp(name, TensorType(shape, dtype))), name)

    def constant(
        self,
        value: np.ndarray | float | int | bool | Sequence[Any],
        dtype: DType | str | None = None,
        shape: Sequence[int] | None = None,
    ) -> SSAValue:
        arr = np.asarray(value)
        if dtype is None:
            dtype = DType.from_numpy(arr.dtype) if arr.dtype != np.float64 else DType.F32
        if shape is None:
            shape = arr.shape
        return self._one(mir.ConstantOp(arr, TensorType(shape, dtype)))

    def iota(self, n: Dim, dtype: DType, max_constant: int | None = None) -> SSAValue:
        """[0, 1, ..., n - 1]: a constant for a static n (of at most ``max_constant``
        elements), else an exclusive running sum of ones."""
        if isinstance(n, int) and (max_constant is None or n <= max_constant):
            return self.constant(np.arange(n).astype(dtype.numpy), dtype, (n,))
        ones = self.expand(self.constant(np.array(1), dtype, ()), [n])
        return self._one(mir.CumsumOp(ones, 0, exclusive=True))

    def dim(self, d: Dim) -> SSAValue:
        """A dim as an i64 scalar: a constant, or a symbolic one's value (``mir.dims``)."""
        if isinstance(d, int):
            return self.constant(np.array(d, np.int64), DType.I64, ())
        return self.reshape(self._one(mir.DimsOp([d])), [])

    def scalar_like(self, value: float | int | bool, like: SSAValue) -> SSAValue:
        """A rank-0 constant with the element type of ``like``."""
        return self.constant(value, type_of(like).dtype, ())

    def _value(self, v: ScalarOrValue, like: SSAValue) -> SSAValue:
        return v if isinstance(v, SSAValue) else self.scalar_like(v, like)

    # -- elementwise --------------------------------------------------------------------
    def unary(self, op_type: type[mir.UnaryOp], x: SSAValue) -> SSAValue:
        return self._one(op_type(x))

    def binary(self, op_type: type[mir.BinaryOp], a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        if not isinstance(a, SSAValue):
            if not isinstance(b, SSAValue):
                raise TypeError("at least one operand must be a value")
            a = self.scalar_like(a, b)
        b = self._value(b, a)
        return self._one(op_type(a, b))

    def add(self, a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        return self.binary(mir.AddOp, a, b)

    def sub(self, a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        return self.binary(mir.SubOp, a, b)

    def mul(self, a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        return self.binary(mir.MulOp, a, b)

    def div(self, a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        return self.binary(mir.DivOp, a, b)

    def pow(self, a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        return self.binary(mir.PowOp, a, b)

    def maximum(self, a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        return self.binary(mir.MaxOp, a, b)

    def minimum(self, a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        return self.binary(mir.MinOp, a, b)

    def prelu(self, x: SSAValue, slope: ScalarOrValue) -> SSAValue:
        return self.binary(mir.PReluOp, x, slope)

    def neg(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.NegOp, x)

    def abs(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.AbsOp, x)

    def exp(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.ExpOp, x)

    def log(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.LogOp, x)

    def sqrt(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.SqrtOp, x)

    def rsqrt(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.RsqrtOp, x)

    def tanh(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.TanhOp, x)

    def sigmoid(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.SigmoidOp, x)

    def relu(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.ReluOp, x)

    def silu(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.SiluOp, x)

    def erf(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.ErfOp, x)

    def softplus(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.SoftplusOp, x)

    def round(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.RoundOp, x)

    def gelu(self, x: SSAValue, approximate: str = "none") -> SSAValue:
        return self._one(mir.GeluOp(x, approximate))

    def clip(self, x: SSAValue, lo: float, hi: float) -> SSAValue:
        return self._one(mir.ClipOp(x, lo, hi))

    def hard_sigmoid(self, x: SSAValue, alpha: float, beta: float) -> SSAValue:
        return self._one(mir.HardSigmoidOp(x, alpha, beta))

    def hard_swish(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.HardSwishOp, x)

    def leaky_relu(self, x: SSAValue, alpha: float) -> SSAValue:
        return self._one(mir.LeakyReluOp(x, alpha))

    def variadic(self, op_type: type[mir.VariadicOp], values: Sequence[SSAValue]) -> SSAValue:
        """``op_type`` of ``values`` (three or more: fewer are its chain)."""
        if len(values) < op_type.MIN_OPERANDS:
            return self.variadic_chain(op_type, values)
        return self._one(op_type(list(values)))

    def variadic_chain(self, op_type: type[mir.VariadicOp], values: Sequence[SSAValue]) -> SSAValue:
        """What ``op_type`` of ``values`` computes, in primitives: its binary op left to
        right, a mean's division by the count last."""
        acc = values[0]
        for v in values[1:]:
            acc = self.binary(op_type.BINARY, acc, v)
        return self.div(acc, len(values)) if op_type.MEAN else acc

    def elu(self, x: SSAValue, alpha: float, scale: float = 1.0) -> SSAValue:
        return self._one(mir.EluOp(x, alpha, scale))

    def swish(self, x: SSAValue, alpha: float) -> SSAValue:
        """x · sigmoid(alpha·x): ``mir.silu`` for alpha 1."""
        return self.silu(x) if alpha == 1.0 else self._one(mir.SwishOp(x, alpha))

    def thresholded_relu(self, x: SSAValue, alpha: float) -> SSAValue:
        return self._one(mir.ThresholdedReluOp(x, alpha))

    def softsign(self, x: SSAValue) -> SSAValue:
        return self.unary(mir.SoftsignOp, x)

    def activation(
        self, x: SSAValue, act: str | Activation | None, params: Sequence[float] = ()
    ) -> SSAValue:
        """Apply one of the fused-op activations as its op (identity for none)."""
        kind = Activation(act or Activation.NONE)
        match kind:
            case Activation.CLIP:
                return self.clip(x, *params)
            case Activation.HARD_SIGMOID:
                return self.hard_sigmoid(x, *params)
            case Activation.HARD_SWISH:
                return self.hard_swish(x)
            case Activation.LEAKY_RELU:
                return self.leaky_relu(x, *params)
            case Activation.NONE:
                return x
            case Activation.RELU:
                return self.relu(x)
            case Activation.GELU:
                return self.gelu(x)
            case Activation.GELU_TANH:
                return self.gelu(x, "tanh")
            case Activation.SILU:
                return self.silu(x)
            case Activation.SIGMOID:
                return self.sigmoid(x)
            case Activation.TANH:
                return self.tanh(x)

    def compare(self, predicate: str, a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        if not isinstance(a, SSAValue):
            assert isinstance(b, SSAValue)
            a = self.scalar_like(a, b)
        return self._one(mir.CompareOp(predicate, a, self._value(b, a)))

    def where(self, cond: SSAValue, a: ScalarOrValue, b: ScalarOrValue) -> SSAValue:
        if not isinstance(a, SSAValue):
            assert isinstance(b, SSAValue)
            a = self.scalar_like(a, b)
        return self._one(mir.WhereOp(cond, a, self._value(b, a)))

    def cast(self, x: SSAValue, dtype: DType | str) -> SSAValue:
        return self._one(mir.CastOp(x, dtype))

    # -- linear algebra, reductions, normalisations ---------------------------------------
    def matmul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._one(mir.MatmulOp(a, b))

    def _axes(self, x: SSAValue, axes: int | Sequence[int] | None) -> list[int]:
        rank = type_of(x).rank
        if axes is None:
            return list(range(rank))
        if isinstance(axes, int):
            axes = [axes]
        return sorted({normalize_axis(a, rank) for a in axes})

    def reduce(
        self,
        kind: str,
        x: SSAValue,
        axes: int | Sequence[int] | None = None,
        keepdims: bool = False,
    ) -> SSAValue:
        op_type = {
            "sum": mir.ReduceSumOp,
            "mean": mir.ReduceMeanOp,
            "max": mir.ReduceMaxOp,
            "min": mir.ReduceMinOp,
            "prod": mir.ReduceProdOp,
            "log_sum_exp": mir.ReduceLogSumExpOp,
            "sum_square": mir.ReduceSumSquareOp,
            "l2": mir.ReduceL2Op,
            "l1": mir.ReduceL1Op,
            "log_sum": mir.ReduceLogSumOp,
        }[kind]
        return self._one(op_type(x, self._axes(x, axes), keepdims))

    def sum(self, x: SSAValue, axes: int | Sequence[int] | None = None, keepdims: bool = False):
        return self.reduce("sum", x, axes, keepdims)

    def mean(self, x: SSAValue, axes: int | Sequence[int] | None = None, keepdims: bool = False):
        return self.reduce("mean", x, axes, keepdims)

    def log_sum_exp(
        self, x: SSAValue, axes: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> SSAValue:
        """log Σ exp(x) over ``axes``, shifted by the max (``mir.reduce_log_sum_exp``)."""
        return self.reduce("log_sum_exp", x, axes, keepdims)

    def softmax(self, x: SSAValue, axis: int = -1) -> SSAValue:
        return self._one(mir.SoftmaxOp(x, normalize_axis(axis, type_of(x).rank)))

    def layer_norm(
        self,
        x: SSAValue,
        scale: SSAValue,
        bias: SSAValue | None = None,
        axis: int = -1,
        eps: float = 1e-5,
    ) -> SSAValue:
        axis = normalize_axis(axis, type_of(x).rank)
        return self._one(mir.LayerNormOp(x, scale, bias, axis=axis, epsilon=eps))

    def rms_norm(
        self,
        x: SSAValue,
        scale: SSAValue,
        bias: SSAValue | None = None,
        axis: int = -1,
        eps: float = 1e-6,
    ) -> SSAValue:
        axis = normalize_axis(axis, type_of(x).rank)
        return self._one(mir.RmsNormOp(x, scale, bias, axis=axis, epsilon=eps))

    def group_norm(
        self, x: SSAValue, scale: SSAValue, bias: SSAValue, groups: int, eps: float = 1e-5
    ) -> SSAValue:
        return self._one(mir.GroupNormOp(x, scale, bias, groups=groups, epsilon=eps))

    def batch_norm(
        self,
        x: SSAValue,
        scale: SSAValue,
        bias: SSAValue,
        mean: SSAValue,
        var: SSAValue,
        eps: float = 1e-5,
    ) -> SSAValue:
        return self._one(mir.BatchNormOp(x, scale, bias, mean, var, epsilon=eps))

    # -- data movement --------------------------------------------------------------------
    def reshape(self, x: SSAValue, shape: Sequence[Dim]) -> SSAValue:
        """Reshape; one ``-1`` entry is inferred from the element count."""
        shape = list(shape)
        if shape.count(-1) > 1:
            raise ValueError("at most one -1 in a reshape target")
        if -1 in shape:
            total = type_of(x).num_elements()
            known = math.prod(d for d in shape if isinstance(d, int) and d != -1)
            if total is None or known == 0 or total % known:
                raise ValueError(f"cannot infer -1 in {shape} for {type_of(x)}")
            shape[shape.index(-1)] = total // known
        return self._one(mir.ReshapeOp(x, shape))

    def transpose(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        return self._one(mir.TransposeOp(x, perm))

    def narrow(self, x: SSAValue, axis: int, start: Dim, length: Dim) -> SSAValue:
        axis = normalize_axis(axis, type_of(x).rank)
        return self._one(mir.NarrowOp(x, axis, start, length))

    def concat(self, xs: Sequence[SSAValue], axis: int) -> SSAValue:
        axis = normalize_axis(axis, type_of(xs[0]).rank)
        return self._one(mir.ConcatOp(list(xs), axis))

    def expand(self, x: SSAValue, shape: Sequence[Dim]) -> SSAValue:
        return self._one(mir.ExpandOp(x, shape))

    def gather(self, table: SSAValue, indices: SSAValue, axis: int = 0) -> SSAValue:
        axis = normalize_axis(axis, type_of(table).rank)
        return self._one(mir.GatherOp(table, indices, axis))

    def gather_axes(
        self, x: SSAValue, indices: Sequence[SSAValue], axes: Sequence[int]
    ) -> SSAValue:
        """``x`` indexed along each of ``axes`` by its 1-D i64 index vector
        (``mir.gather_axes``: the per-axis gathers as one op)."""
        rank = type_of(x).rank
        return self._one(mir.GatherAxesOp(x, indices, [normalize_axis(a, rank) for a in axes]))

    def gather_elements(self, x: SSAValue, indices: SSAValue, axis: int) -> SSAValue:
        """``x`` indexed along ``axis`` element by element by i64 ``indices`` of its rank
        (``mir.gather_elements``: ONNX GatherElements, NumPy ``take_along_axis``)."""
        return self._one(mir.GatherElementsOp(x, indices, normalize_axis(axis, type_of(x).rank)))

    def pad(
        self, x: SSAValue, pads: Sequence[int], mode: str = "constant", value: float = 0.0
    ) -> SSAValue:
        return self._one(mir.PadOp(x, pads, mode, value))

    # -- convolution, pooling, attention ------------------------------------------------------
    def conv(
        self,
        x: SSAValue,
        w: SSAValue,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        groups: int = 1,
    ) -> SSAValue:
        return self._one(
            mir.ConvOp(x, w, strides=strides, pads=pads, dilations=dilations, groups=groups)
        )

    def max_pool(
        self,
        x: SSAValue,
        kernel: Sequence[int],
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
    ) -> SSAValue:
        return self._one(mir.MaxPoolOp(x, kernel, strides=strides, pads=pads))

    def avg_pool(
        self,
        x: SSAValue,
        kernel: Sequence[int],
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        count_include_pad: bool = False,
    ) -> SSAValue:
        return self._one(
            mir.AvgPoolOp(
                x, kernel, strides=strides, pads=pads, count_include_pad=count_include_pad
            )
        )

    def attention(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        mask: SSAValue | None = None,
        *,
        causal: bool = False,
        scale: float | None = None,
    ) -> SSAValue:
        kind = "explicit" if mask is not None else ("causal" if causal else "none")
        return self._one(mir.AttentionOp(q, k, v, mask, mask_kind=kind, scale=scale))

    def rope(self, x: SSAValue, cos: SSAValue, sin: SSAValue, rotary_dim: int | None = None):
        return self._one(mir.RopeOp(x, cos, sin, rotary_dim=rotary_dim))

    def channel_view(self, v: SSAValue, rank: int) -> SSAValue:
        """A [C] vector reshaped to [C, 1, ...] so that it broadcasts along axis 1 of a
        rank-``rank`` tensor (a per-channel bias or scale of an NCHW tensor)."""
        return self.reshape(v, (type_of(v).shape[0], *([1] * (rank - 2))))

    def split_heads(self, x: SSAValue, heads: int, head_dim: int) -> SSAValue:
        """[B, S, heads·D] -> reshape [B, S, heads, D] -> transpose [B, heads, S, D]."""
        bsz, seq, _ = type_of(x).shape
        return self.transpose(self.reshape(x, (bsz, seq, heads, head_dim)), (0, 2, 1, 3))

    def merge_heads(self, x: SSAValue) -> SSAValue:
        """[B, H, S, D] -> transpose [B, S, H, D] -> reshape [B, S, H·D]."""
        bsz, heads, seq, head_dim = type_of(x).shape
        return self.reshape(self.transpose(x, (0, 2, 1, 3)), (bsz, seq, heads * head_dim))

    # -- quantisation ------------------------------------------------------------------------
    def quantize(
        self,
        x: SSAValue,
        scale: SSAValue,
        zero_point: SSAValue | None = None,
        *,
        dtype: DType | str = DType.I8,
        axis: int | None = None,
    ) -> SSAValue:
        return self._one(mir.QuantizeOp(x, scale, zero_point, dtype=dtype, axis=axis))

    def dequantize(
        self,
        q: SSAValue,
        scale: SSAValue,
        zero_point: SSAValue | None = None,
        *,
        axis: int | None = None,
    ) -> SSAValue:
        return self._one(mir.DequantizeOp(q, scale, zero_point, axis=axis))

    # -- fused MIR ops -----------------------------------------------------------------------
    def fused_matmul_bias_act(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue,
        act: str = "none",
        act_params: Sequence[float] = (),
    ) -> SSAValue:
        return self._one(mir.FusedMatmulBiasActOp(x, w, bias, act, act_params))

    def fused_reshape_transpose(
        self, x: SSAValue, split: Sequence[int], perm: Sequence[int], shape: Sequence[int]
    ) -> SSAValue:
        return self._one(mir.FusedReshapeTransposeOp(x, split, perm, shape))

    def fused_transposed_matmul(
        self, lhs: SSAValue, rhs: SSAValue, transpose_lhs: bool, transpose_rhs: bool
    ) -> SSAValue:
        return self._one(mir.FusedTransposedMatmulOp(lhs, rhs, transpose_lhs, transpose_rhs))

    def scaled_matmul(
        self, lhs: SSAValue, rhs: SSAValue, scale: float, divide: bool = False
    ) -> SSAValue:
        return self._one(mir.ScaledMatmulOp(lhs, rhs, scale, divide))

    def fused_two_sided_matmul(
        self, lhs: SSAValue, x: SSAValue, rhs: SSAValue, rhs_first: bool = False
    ) -> SSAValue:
        return self._one(mir.FusedTwoSidedMatmulOp(lhs, x, rhs, rhs_first))

    def fused_swiglu(self, x: SSAValue, gate_first: bool = False) -> SSAValue:
        return self._one(mir.FusedSwigluOp(x, gate_first))

    def fused_residual_rms_norm(
        self,
        x: SSAValue,
        residual: SSAValue,
        scale: SSAValue,
        bias: SSAValue | None = None,
        eps: float = 1e-6,
    ) -> tuple[SSAValue, SSAValue]:
        """(rms_norm(x + residual) over the last dim, x + residual)."""
        axis = type_of(x).rank - 1
        op = self.emit(mir.FusedResidualRmsNormOp(x, residual, scale, bias, axis=axis, epsilon=eps))
        return op.results[0], op.results[1]

    def fused_attention_block(
        self,
        hidden: SSAValue,
        qkv_weight: SSAValue,
        out_weight: SSAValue,
        *,
        num_heads: int,
        num_kv_heads: int,
        head_dim: int,
        mask_kind: str = "none",
        mask: SSAValue | None = None,
        cos: SSAValue | None = None,
        sin: SSAValue | None = None,
        qkv_bias: SSAValue | None = None,
        out_bias: SSAValue | None = None,
    ) -> SSAValue:
        return self._one(
            mir.FusedAttentionBlockOp(
                hidden, qkv_weight, out_weight, num_heads=num_heads, num_kv_heads=num_kv_heads,
                head_dim=head_dim, qkv_bias=qkv_bias, out_bias=out_bias, mask=mask, cos=cos,
                sin=sin, mask_kind=mask_kind,
            )
        )  # fmt: skip

    def fused_conv_bias_act(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue,
        residual: SSAValue | None = None,
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        groups: int = 1,
        act: str = "none",
        act_params: Sequence[float] = (),
    ) -> SSAValue:
        return self._one(
            mir.FusedConvBiasActOp(
                x, w, bias, residual, strides=strides, pads=pads, dilations=dilations,
                groups=groups, activation=act, act_params=act_params,
            )
        )  # fmt: skip

    def fused_scale_shift_act(
        self,
        x: SSAValue,
        scale: SSAValue,
        shift: SSAValue,
        act: str = "none",
        act_params: Sequence[float] = (),
    ) -> SSAValue:
        return self._one(mir.FusedScaleShiftActOp(x, scale, shift, act, act_params))

    def fused_lstm_cell(
        self, gates: SSAValue, prev_cell: SSAValue, gate_order: Sequence[int] = (0, 1, 2, 3)
    ) -> tuple[SSAValue, SSAValue]:
        """(hidden, cell) of one LSTM step on its pre-activation gates."""
        op = self.emit(mir.FusedLstmCellOp(gates, prev_cell, gate_order))
        return op.results[0], op.results[1]

    def fused_gru_cell(
        self, gx: SSAValue, gh: SSAValue, prev: SSAValue, gate_order: Sequence[int] = (0, 1, 2)
    ) -> SSAValue:
        """The hidden state of one GRU step on its input and recurrent projections."""
        return self._one(mir.FusedGruCellOp(gx, gh, prev, gate_order))

    # -- HIR blocks ------------------------------------------------------------------------
    def linear(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue | None = None,
        act: str | None = None,
        policy: str | None = None,
    ) -> SSAValue:
        return self._one(hir.LinearOp(x, w, bias, activation=act or "none", policy=policy))

    def swiglu(
        self,
        x: SSAValue,
        up: SSAValue,
        gate: SSAValue,
        down: SSAValue,
        policy: str | None = None,
    ) -> SSAValue:
        return self._one(hir.SwigluOp(x, up, gate, down, policy=policy))

    def residual_rms_norm(
        self,
        x: SSAValue,
        residual: SSAValue,
        scale: SSAValue,
        eps: float = 1e-6,
        policy: str | None = None,
    ) -> tuple[SSAValue, SSAValue]:
        op = self.emit(hir.ResidualRmsNormOp(x, residual, scale, epsilon=eps, policy=policy))
        return op.results[0], op.results[1]

    def shared_linear_pair(
        self, x: SSAValue, w1: SSAValue, w2: SSAValue, policy: str | None = None
    ) -> tuple[SSAValue, SSAValue]:
        op = self.emit(hir.SharedLinearPairOp(x, w1, w2, policy=policy))
        return op.results[0], op.results[1]

    def attention_block(
        self,
        x: SSAValue,
        wq: SSAValue,
        wk: SSAValue,
        wv: SSAValue,
        wo: SSAValue,
        *,
        num_heads: int,
        head_dim: int,
        num_kv_heads: int | None = None,
        mask: SSAValue | None = None,
        rope: tuple[SSAValue, SSAValue] | None = None,
        causal: bool = False,
        policy: str | None = None,
    ) -> SSAValue:
        cos, sin = rope if rope is not None else (None, None)
        kind = "explicit" if mask is not None else ("causal" if causal else "none")
        return self._one(
            hir.AttentionBlockOp(
                x, wq, wk, wv, wo,
                num_heads=num_heads, num_kv_heads=num_kv_heads, head_dim=head_dim,
                mask=mask, cos=cos, sin=sin, mask_kind=kind, policy=policy,
            )
        )  # fmt: skip

    def decoder_block(
        self,
        x: SSAValue,
        *,
        ln1: SSAValue,
        wq: SSAValue,
        wk: SSAValue,
        wv: SSAValue,
        wo: SSAValue,
        ln2: SSAValue,
        gate: SSAValue,
        up: SSAValue,
        down: SSAValue,
        cos: SSAValue,
        sin: SSAValue,
        num_heads: int,
        head_dim: int,
        num_kv_heads: int | None = None,
        eps: float = 1e-6,
        causal: bool = True,
        policy: str | None = None,
    ) -> SSAValue:
        return self._one(
            hir.DecoderBlockOp(
                x, ln1=ln1, wq=wq, wk=wk, wv=wv, wo=wo, ln2=ln2, gate=gate, up=up, down=down,
                cos=cos, sin=sin, num_heads=num_heads, num_kv_heads=num_kv_heads,
                head_dim=head_dim, epsilon=eps, mask_kind="causal" if causal else "none",
                policy=policy,
            )
        )  # fmt: skip

    def conv_block(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        groups: int = 1,
        act: str | None = None,
        policy: str | None = None,
    ) -> SSAValue:
        return self._one(
            hir.ConvBlockOp(
                x, w, bias, strides=strides, pads=pads, dilations=dilations, groups=groups,
                activation=act or "none", policy=policy,
            )
        )  # fmt: skip

    # -- control flow -------------------------------------------------------------------
    @contextmanager
    def building(self, block: Block) -> Iterator[GraphBuilder]:
        """Emit into ``block`` inside the ``with`` (MLIR's insertion guard): a region's
        body is built by the builder of the graph around it, whose values it may use. If
        the body raises, its ops are discarded (they would count as uses of the graph's
        values)."""
        saved = self._insert
        self._insert = block.add_op
        try:
            yield self
        except BaseException:
            discard_block(block)
            raise
        finally:
            self._insert = saved

    def if_(
        self,
        condition: SSAValue,
        then_body: Callable[[], Sequence[SSAValue]],
        else_body: Callable[[], Sequence[SSAValue]],
    ) -> list[SSAValue]:
        """``mir.if``: each body emits its region's ops through this builder and returns
        the values its region yields."""
        blocks: list[Block] = []
        yielded: list[list[SSAValue]] = []
        for body in (then_body, else_body):
            block = Block()
            with self.building(block):
                values = list(body())
                self.emit(mir.YieldOp(values))
            blocks.append(block)
            yielded.append(values)
        types = [type_of(v) for v in yielded[0]]
        op = self.emit(mir.IfOp(condition, Region(blocks[0]), Region(blocks[1]), types))
        return list(op.results)

    def loop(
        self,
        trip_count: SSAValue | None,
        condition: SSAValue | None,
        inits: Sequence[SSAValue],
        body: Callable[
            [SSAValue, SSAValue, list[SSAValue]],
            tuple[SSAValue, Sequence[SSAValue], Sequence[SSAValue]],
        ],
        scan_length: Dim | None = None,
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """``mir.loop``: ``body(iteration, condition, carried)`` emits one iteration
        through this builder and returns (next condition, next carried values, scan
        elements). Returns (the final carried values, the scan results), the scan results
        ``scan_length`` long (the number of iterations: a fresh symbol when only the run
        knows it)."""
        block = Block(arg_types=[mir.I64_SCALAR, mir.BOOL_SCALAR, *(type_of(v) for v in inits)])
        i, cond, *carried = block.args
        with self.building(block):
            next_cond, next_carried, elements = body(i, cond, list(carried))
            self.emit(mir.YieldOp([next_cond, *next_carried, *elements]))
        scan_types: list[TensorType] = []
        if elements:
            if scan_length is None:
                raise ValueError("a loop with scan elements needs their scan_length")
            scan_types = [
                TensorType((scan_length, *type_of(e).shape), type_of(e).dtype) for e in elements
            ]
        op = self.emit(
            mir.LoopOp(
                trip_count, condition, inits, Region(block), [*map(type_of, inits), *scan_types]
            )
        )
        n = len(inits)
        return list(op.results[:n]), list(op.results[n:])

    def region(
        self,
        inputs: Sequence[SSAValue],
        body: Callable[[GraphBuilder, list[SSAValue]], Sequence[SSAValue]],
    ) -> list[SSAValue]:
        """The ``hir.region`` escape hatch: ``body`` builds MIR from the block arguments."""
        block = Block(arg_types=[v.type for v in inputs])
        inner = GraphBuilder(block.add_op)
        results = list(body(inner, list(block.args)))
        block.add_op(hir.YieldOp(results))
        op = self.emit(hir.RegionOp(inputs, Region(block), [r.type for r in results]))
        return list(op.results)


def discard_block(block: Block) -> None:
    """Erase a block's ops, last first, so that a region abandoned while it was being
    built holds no uses of the values around it."""
    for op in reversed(list(block.ops)):
        block.erase_op(op, safe_erase=False)


class ModuleBuilder(GraphBuilder):
    """Builds one graph function in a new module; use as a context manager.

    On a clean exit the graph gets its ``func.return`` and output names and the module is
    verified, so a finished builder always holds a valid module.
    """

    def __init__(self, name: str = "main", *, policy: str | None = None):
        self.name = name
        self.policy = policy
        self._block = Block()
        self._outputs: list[tuple[str, SSAValue]] = []
        self._module: ModuleOp | None = None
        super().__init__(self._block.add_op)

    def __enter__(self) -> ModuleBuilder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.finish()

    # HIR blocks built through a ModuleBuilder default to its policy.
    def _with_policy(self, policy: str | None) -> str | None:
        return policy if policy is not None else self.policy

    def linear(self, x, w, bias=None, act=None, policy=None):
        return super().linear(x, w, bias, act, self._with_policy(policy))

    def swiglu(self, x, up, gate, down, policy=None):
        return super().swiglu(x, up, gate, down, self._with_policy(policy))

    def residual_rms_norm(self, x, residual, scale, eps=1e-6, policy=None):
        return super().residual_rms_norm(x, residual, scale, eps, self._with_policy(policy))

    def shared_linear_pair(self, x, w1, w2, policy=None):
        return super().shared_linear_pair(x, w1, w2, self._with_policy(policy))

    def attention_block(self, x, wq, wk, wv, wo, *, policy=None, **kw):
        return super().attention_block(x, wq, wk, wv, wo, policy=self._with_policy(policy), **kw)

    def decoder_block(self, x, *, policy=None, **kw):
        return super().decoder_block(x, policy=self._with_policy(policy), **kw)

    def conv_block(self, x, w, bias=None, *, policy=None, **kw):
        return super().conv_block(x, w, bias, policy=self._with_policy(policy), **kw)

    def output(self, *values: SSAValue, names: Sequence[str] | None = None) -> None:
        """Mark graph outputs (in order); names default to ``output{i}``."""
        if names is not None and len(names) != len(values):
            raise ValueError("give one name per output")
        for i, v in enumerate(values):
            name = names[i] if names is not None else f"output{len(self._outputs)}"
            self._outputs.append((name, v))

    def finish(self) -> ModuleOp:
        if self._module is not None:
            return self._module
        if not self._outputs:
            raise ValueError(f"graph @{self.name} has no outputs: call output(...)")
        values = [v for _, v in self._outputs]
        self._block.add_op(func.ReturnOp(*values))
        graph = func.FuncOp(self.name, ([], [v.type for v in values]), Region(self._block))
        sync_function_type(graph)
        set_output_names(graph, [n for n, _ in self._outputs])
        module = ModuleOp([graph])
        try:
            module.verify()
        except VerifyException as e:
            raise ValueError(f"the built graph does not verify: {e}") from None
        self._module = module
        return module

    @property
    def module(self) -> ModuleOp:
        return self.finish()


class ReplacingPattern(RewritePattern):
    """Rewrite-pattern plumbing: build the replacement ops of ``op`` with the builder
    users use (located at ``op``), then replace ``op`` by them."""

    @staticmethod
    def builder(op: Operation) -> tuple[GraphBuilder, list[Operation]]:
        ops: list[Operation] = []
        return GraphBuilder(ops.append, location=op.location), ops

    @staticmethod
    def commit(
        rewriter: PatternRewriter,
        op: Operation,
        ops: list[Operation],
        results: Sequence[SSAValue | None],
    ) -> None:
        """Replace ``op`` by ``ops``, its results by ``results`` (None: a result with no
        uses)."""
        rewriter.replace(op, ops, list(results))


def is_hir(module: ModuleOp) -> bool:
    """Whether a module still holds HIR block ops."""
    return any(op.dialect_name() == "hir" for op in module.walk())


__all__ = [
    "GraphBuilder",
    "ModuleBuilder",
    "ReplacingPattern",
    "discard_block",
    "is_hir",
    "type_of",
]
