"""Reference implementations of the MIR ops: thin adapters from an op's properties and
declared types to the kernels in ``interpreter.kernels``.

Fused ops are *defined by composition*: each calls the kernels of its primitive chain
in the chain's order, with the same intermediate rounding, so a fused op is
bit-identical to the unfused ops it replaces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import StringAttr

from rlx_compile.dialects import mir
from rlx_compile.dialects.common import ComparePredicate, MaskKind, RawDataAttr
from rlx_compile.dialects.dim_expr import DimError, evaluate
from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter import kernels as K
from rlx_compile.interpreter import ml as ML
from rlx_compile.interpreter import recurrent
from rlx_compile.interpreter.core import (
    Env,
    ExecutionError,
    describe,
    execute_block,
    execute_graph,
    impl,
)

Arrays = list[np.ndarray]


def _result_type(op: Any, index: int = 0) -> TensorType:
    t = op.results[index].type
    assert isinstance(t, TensorType)
    return t


def _np_dtype(op: Any, index: int = 0) -> np.dtype:
    return _result_type(op, index).dtype.numpy


def _leaf_name(op: mir.InputOp | mir.ParamOp) -> str:
    name = op.tensor_name
    assert isinstance(name, StringAttr)
    return name.data


def _optional_args(op: Any, args: Arrays, names: Sequence[str]) -> dict[str, np.ndarray | None]:
    """Map args to operand names: an absent optional operand contributes no arg, so the
    args are matched against the operands the op actually has, in definition order."""
    out: dict[str, np.ndarray | None] = {}
    it = iter(args)
    for name in names:
        out[name] = None if getattr(op, name) is None else next(it)
    return out


# ---------------------------------------------------------------------------------
# Leaves
# ---------------------------------------------------------------------------------


@impl(mir.InputOp)
def _input(op: mir.InputOp, args: Arrays, env: Env) -> Arrays:
    name = _leaf_name(op)
    if name not in env.inputs:
        raise ExecutionError(f"input '{name}' of type {_result_type(op)} is not bound")
    return [env.inputs[name]]


@impl(mir.DimsOp)
def _dims(op: mir.DimsOp, args: Arrays, env: Env) -> Arrays:
    sizes = []
    for d in op.dims:
        try:
            sizes.append(evaluate(d, env.bindings))
        except DimError as err:
            raise ExecutionError(f"mir.dims: {err}") from None
    return [np.asarray(sizes, np.int64)]


@impl(mir.ParamOp)
def _param(op: mir.ParamOp, args: Arrays, env: Env) -> Arrays:
    name = _leaf_name(op)
    if name not in env.params:
        raise ExecutionError(f"param '{name}' of type {_result_type(op)} is not bound")
    return [env.params[name]]


@impl(mir.ConstantOp)
def _constant(op: mir.ConstantOp, args: Arrays, env: Env) -> Arrays:
    return [op.to_numpy()]


# ---------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------

_UNARY: dict[type[mir.UnaryOp], str] = {
    mir.NegOp: "neg",
    mir.AbsOp: "abs",
    mir.ReluOp: "relu",
    mir.SignOp: "sign",
    mir.NotOp: "not",
    mir.ExpOp: "exp",
    mir.LogOp: "log",
    mir.SqrtOp: "sqrt",
    mir.RsqrtOp: "rsqrt",
    mir.ReciprocalOp: "reciprocal",
    mir.TanhOp: "tanh",
    mir.SigmoidOp: "sigmoid",
    mir.SiluOp: "silu",
    mir.ErfOp: "erf",
    mir.SinOp: "sin",
    mir.CosOp: "cos",
    mir.FloorOp: "floor",
    mir.CeilOp: "ceil",
    mir.RoundOp: "round",
    mir.SoftplusOp: "softplus",
    mir.SoftsignOp: "softsign",
    mir.TanOp: "tan",
    mir.AsinOp: "asin",
    mir.AcosOp: "acos",
    mir.AtanOp: "atan",
    mir.SinhOp: "sinh",
    mir.CoshOp: "cosh",
    mir.AsinhOp: "asinh",
    mir.AcoshOp: "acosh",
    mir.AtanhOp: "atanh",
    mir.BitwiseNotOp: "bitwise_not",
}


@impl(*_UNARY)
def _unary(op: mir.UnaryOp, args: Arrays, env: Env) -> Arrays:
    return [K.unary(_UNARY[type(op)], args[0])]


@impl(mir.ClipOp)
def _clip(op: mir.ClipOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return [K.unary("clip", args[0], (p.float("min"), p.float("max")))]


@impl(mir.HardSigmoidOp)
def _hard_sigmoid(op: mir.HardSigmoidOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return [K.unary("hard_sigmoid", args[0], (p.float("alpha"), p.float("beta")))]


@impl(mir.HardSwishOp)
def _hard_swish(op: mir.HardSwishOp, args: Arrays, env: Env) -> Arrays:
    return [K.unary("hard_swish", args[0])]


@impl(mir.LeakyReluOp)
def _leaky_relu(op: mir.LeakyReluOp, args: Arrays, env: Env) -> Arrays:
    return [K.unary("leaky_relu", args[0], (op.props().float("alpha"),))]


@impl(mir.EluOp)
def _elu(op: mir.EluOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return [K.unary("elu", args[0], (p.float("alpha"), p.float("scale")))]


@impl(mir.SwishOp)
def _swish(op: mir.SwishOp, args: Arrays, env: Env) -> Arrays:
    return [K.unary("swish", args[0], (op.props().float("alpha"),))]


@impl(mir.ThresholdedReluOp)
def _thresholded_relu(op: mir.ThresholdedReluOp, args: Arrays, env: Env) -> Arrays:
    return [K.unary("thresholded_relu", args[0], (op.props().float("alpha"),))]


@impl(mir.GeluOp)
def _gelu(op: mir.GeluOp, args: Arrays, env: Env) -> Arrays:
    approximate = op.props().enum("approximate").value
    return [K.unary("gelu" if approximate == "none" else "gelu_tanh", args[0])]


_BINARY: dict[type[mir.BinaryOp], str] = {
    mir.AddOp: "add",
    mir.SubOp: "sub",
    mir.MulOp: "mul",
    mir.DivOp: "div",
    mir.PowOp: "pow",
    mir.MaxOp: "max",
    mir.MinOp: "min",
    mir.PReluOp: "prelu",
    mir.ModOp: "mod",
    mir.AndOp: "and",
    mir.OrOp: "or",
    mir.XorOp: "xor",
    mir.FmodOp: "fmod",
    mir.BitwiseAndOp: "bitwise_and",
    mir.BitwiseOrOp: "bitwise_or",
    mir.BitwiseXorOp: "bitwise_xor",
    mir.ShiftLeftOp: "shift_left",
    mir.ShiftRightOp: "shift_right",
}


@impl(*_BINARY)
def _binary(op: mir.BinaryOp, args: Arrays, env: Env) -> Arrays:
    return [K.binary(_BINARY[type(op)], args[0], args[1])]


@impl(mir.AddNOp, mir.MeanNOp, mir.MaxNOp, mir.MinNOp)
def _variadic(op: mir.VariadicOp, args: Arrays, env: Env) -> Arrays:
    kind = _BINARY[op.BINARY]
    acc = args[0]
    for x in args[1:]:
        acc = K.binary(kind, acc, x)
    if op.MEAN:
        acc = K.binary("div", acc, np.asarray(len(args), acc.dtype))
    return [acc]


@impl(mir.CompareOp)
def _compare(op: mir.CompareOp, args: Arrays, env: Env) -> Arrays:
    return [K.compare(op.props().enum("predicate"), args[0], args[1])]


@impl(mir.WhereOp)
def _where(op: mir.WhereOp, args: Arrays, env: Env) -> Arrays:
    cond, on_true, on_false = args
    return [K.where(cond, on_true, on_false)]


@impl(mir.CastOp)
def _cast(op: mir.CastOp, args: Arrays, env: Env) -> Arrays:
    return [K.cast(args[0], _np_dtype(op))]


# ---------------------------------------------------------------------------------
# Linear algebra, reductions, normalisation
# ---------------------------------------------------------------------------------


@impl(mir.MatmulOp)
def _matmul(op: mir.MatmulOp, args: Arrays, env: Env) -> Arrays:
    return [K.matmul(args[0], args[1])]


_REDUCE: dict[type[mir.ReduceOp], str] = {
    mir.ReduceSumOp: "sum",
    mir.ReduceMeanOp: "mean",
    mir.ReduceMaxOp: "max",
    mir.ReduceMinOp: "min",
    mir.ReduceProdOp: "prod",
}


@impl(*_REDUCE)
def _reduce(op: mir.ReduceOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return [K.reduce(_REDUCE[type(op)], args[0], p.ints("axes"), p.flag("keepdims"))]


@impl(mir.ReduceLogSumExpOp)
def _reduce_log_sum_exp(op: mir.ReduceLogSumExpOp, args: Arrays, env: Env) -> Arrays:
    """The chain it means, kernel by kernel: m = reduce_max (kept dims), where(|m| == inf,
    0, m), log(reduce_sum(exp(x - m))) + m, reshaped without keepdims."""
    x = args[0]
    p = op.props()
    axes = p.ints("axes")
    m = K.reduce("max", x, axes, True)
    inf, zero = np.full((), np.inf, x.dtype), np.zeros((), x.dtype)
    finite = K.where(K.compare(ComparePredicate.EQ, K.unary("abs", m), inf), zero, m)
    total = K.reduce("sum", K.unary("exp", K.binary("sub", x, finite)), axes, True)
    y = K.binary("add", K.unary("log", total), finite)
    if not p.flag("keepdims"):
        y = K.reshape(y, [d for i, d in enumerate(x.shape) if i not in axes])
    return [y]


@impl(mir.ReduceSumSquareOp, mir.ReduceL2Op, mir.ReduceL1Op, mir.ReduceLogSumOp)
def _reduce_chain(op: mir.ReduceChainOp, args: Arrays, env: Env) -> Arrays:
    """The chain it means, kernel by kernel: mul or abs, reduce_sum, sqrt or log."""
    x = args[0]
    p = op.props()
    axes, keepdims = p.ints("axes"), p.flag("keepdims")
    if isinstance(op, mir.ReduceL1Op):
        return [K.reduce("sum", K.unary("abs", x), axes, keepdims)]
    if isinstance(op, mir.ReduceLogSumOp):
        return [K.unary("log", K.reduce("sum", x, axes, keepdims))]
    total = K.reduce("sum", K.binary("mul", x, x), axes, keepdims)
    return [K.unary("sqrt", total) if isinstance(op, mir.ReduceL2Op) else total]


@impl(mir.CumsumOp, mir.CumprodOp)
def _cumulative(op: mir.ScanOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    kind = "sum" if isinstance(op, mir.CumsumOp) else "prod"
    return [K.cumulative(kind, args[0], p.int("axis"), p.flag("exclusive"), p.flag("reverse"))]


@impl(mir.TopKOp)
def _topk(op: mir.TopKOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return list(K.topk(args[0], p.int("k"), p.int("axis"), p.flag("smallest")))


@impl(mir.PairwiseCouplingOp)
def _pairwise_coupling(op: mir.PairwiseCouplingOp, args: Arrays, env: Env) -> Arrays:
    return [K.pairwise_coupling(args[0])]


@impl(mir.TreeEnsembleOp)
def _tree_ensemble(op: mir.TreeEnsembleOp, args: Arrays, env: Env) -> Arrays:
    p, out = op.props(), _result_type(op)
    y = ML.tree_ensemble(
        args[0], op.forest(), int(out.shape[1]), out.dtype.numpy, p.enum("aggregate"),
        p.array("base_values"), p.float("fill"), p.enum("post_transform"),
    )  # fmt: skip
    return [y]


@impl(mir.TreeEnsembleClassifierOp)
def _tree_ensemble_classifier(op: mir.TreeEnsembleClassifierOp, args: Arrays, env: Env) -> Arrays:
    p, out = op.props(), _result_type(op, 1)
    labels = p.array("class_labels") if p.get("class_labels") is not None else None
    return list(ML.tree_ensemble_classifier(
        args[0], op.forest(), int(out.shape[1]), out.dtype.numpy, p.array("base_values"),
        p.enum("post_transform"), labels,
    ))  # fmt: skip


def _svm_kernel(op: mir.SvmOp, x: np.ndarray) -> np.ndarray:
    p = op.props()
    return ML.svm_kernel(
        x, p.array("support_vectors"), p.enum("kernel"), p.float("gamma"), p.float("coef0"),
        p.float("degree"),
    )  # fmt: skip


@impl(mir.SvmRegressorOp)
def _svm_regressor(op: mir.SvmRegressorOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    k = _svm_kernel(op, args[0])
    return [ML.svm_regressor(k, p.array("coefficients"), p.float("rho"), p.flag("one_class"))]


def _opt_array(p: Any, name: str) -> np.ndarray | None:
    return p.array(name) if p.get(name) is not None else None


@impl(mir.SvmClassifierOp)
def _svm_classifier(op: mir.SvmClassifierOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    k = _svm_kernel(op, args[0])
    return list(ML.svm_classifier(
        k, p.array("coefficients"), p.array("rho"), _opt_array(p, "prob_a"),
        _opt_array(p, "prob_b"), p.enum("post_transform"), _opt_array(p, "class_labels"),
    ))  # fmt: skip


@impl(mir.LinearClassifierOp)
def _linear_classifier(op: mir.LinearClassifierOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return list(ML.linear_classifier(
        args[0], p.array("coefficients"), _opt_array(p, "intercepts"), p.enum("post_transform"),
        _opt_array(p, "class_labels"),
    ))  # fmt: skip


@impl(mir.NormalizerOp)
def _normalizer(op: mir.NormalizerOp, args: Arrays, env: Env) -> Arrays:
    return [ML.normalizer(args[0], op.props().enum("norm"))]


@impl(mir.LabelEncoderOp)
def _label_encoder(op: mir.LabelEncoderOp, args: Arrays, env: Env) -> Arrays:
    keys, values = op.tables()
    nan_matches = op.props().flag("nan_matches")
    return [ML.label_encoder(args[0], keys, values, nan_matches, _np_dtype(op))]


@impl(mir.ScalerOp)
def _scaler(op: mir.ScalerOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return [ML.scaler(args[0], p.array("offset"), p.array("scale"))]


@impl(mir.BinarizerOp)
def _binarizer(op: mir.BinarizerOp, args: Arrays, env: Env) -> Arrays:
    return [ML.binarizer(args[0], op.props().float("threshold"))]


@impl(mir.ImputerOp)
def _imputer(op: mir.ImputerOp, args: Arrays, env: Env) -> Arrays:
    return [ML.imputer(args[0], op.props().array("imputed"), op.replaced_value())]


@impl(mir.OneHotEncoderOp)
def _one_hot_encoder(op: mir.OneHotEncoderOp, args: Arrays, env: Env) -> Arrays:
    columns = None if op.props().get("column_starts") is None else op.category_columns()
    return [ML.one_hot_encoder(args[0], op.props().array("categories"), op.answering(), columns)]


@impl(mir.ScatterNdOp)
def _scatter_nd(op: mir.ScatterNdOp, args: Arrays, env: Env) -> Arrays:
    data, indices, updates = args
    return [K.scatter_nd(data, indices, updates, op.props().enum("reduction").value)]


@impl(mir.BitcastOp)
def _bitcast(op: mir.BitcastOp, args: Arrays, env: Env) -> Arrays:
    (x,) = args
    return [np.ascontiguousarray(x).view(_np_dtype(op))]


@impl(mir.ArgMaxOp, mir.ArgMinOp)
def _arg_reduce(op: mir.ArgReduceOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    kind = "max" if isinstance(op, mir.ArgMaxOp) else "min"
    return [K.arg_reduce(kind, args[0], p.int("axis"), p.flag("keepdims"))]


@impl(mir.SoftmaxOp)
def _softmax(op: mir.SoftmaxOp, args: Arrays, env: Env) -> Arrays:
    return [K.softmax(args[0], op.props().int("axis"))]


@impl(mir.LogSoftmaxOp)
def _log_softmax(op: mir.LogSoftmaxOp, args: Arrays, env: Env) -> Arrays:
    return [K.log_softmax(args[0], op.props().int("axis"))]


@impl(mir.LayerNormOp, mir.RmsNormOp)
def _norm(op: mir.NormOp, args: Arrays, env: Env) -> Arrays:
    a = _optional_args(op, args, ("input", "scale", "bias"))
    p = op.props()
    kernel = K.layer_norm if isinstance(op, mir.LayerNormOp) else K.rms_norm
    x, scale = a["input"], a["scale"]
    assert x is not None and scale is not None
    return [kernel(x, scale, a["bias"], p.int("axis"), p.float("epsilon"))]


@impl(mir.GroupNormOp)
def _group_norm(op: mir.GroupNormOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    x, scale, bias = args
    return [K.group_norm(x, scale, bias, p.int("groups"), p.float("epsilon"))]


@impl(mir.BatchNormOp)
def _batch_norm(op: mir.BatchNormOp, args: Arrays, env: Env) -> Arrays:
    x, scale, bias, mean, variance = args
    return [K.batch_norm(x, scale, bias, mean, variance, op.props().float("epsilon"))]


# ---------------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------------


@impl(mir.ReshapeOp)
def _reshape(op: mir.ReshapeOp, args: Arrays, env: Env) -> Arrays:
    return [K.reshape(args[0], env.shape(op.result.type))]


@impl(mir.TransposeOp)
def _transpose(op: mir.TransposeOp, args: Arrays, env: Env) -> Arrays:
    return [K.transpose(args[0], op.props().ints("perm"))]


@impl(mir.NarrowOp)
def _narrow(op: mir.NarrowOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    axis = p.int("axis")
    length = env.shape(op.result.type)[axis]
    return [K.narrow(args[0], axis, evaluate(op.start_dim, env.bindings), length)]


@impl(mir.SliceOp)
def _slice(op: mir.SliceOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return [K.slice_(args[0], p.ints("starts"), p.ints("steps"), env.shape(op.result.type))]


@impl(mir.ConcatOp)
def _concat(op: mir.ConcatOp, args: Arrays, env: Env) -> Arrays:
    return [K.concat(args, op.props().int("axis"))]


@impl(mir.ExpandOp)
def _expand(op: mir.ExpandOp, args: Arrays, env: Env) -> Arrays:
    return [K.expand(args[0], env.shape(op.result.type))]


@impl(mir.GatherOp)
def _gather(op: mir.GatherOp, args: Arrays, env: Env) -> Arrays:
    return [K.gather(args[0], args[1], op.props().int("axis"))]


@impl(mir.GatherAxesOp)
def _gather_axes(op: mir.GatherAxesOp, args: Arrays, env: Env) -> Arrays:
    """The chain it means: one gather per axis, in axis order."""
    y = args[0]
    for axis, indices in zip(op.props().ints("axes"), args[1:], strict=True):
        y = K.gather(y, indices, axis)
    return [y]


@impl(mir.GatherElementsOp)
def _gather_elements(op: mir.GatherElementsOp, args: Arrays, env: Env) -> Arrays:
    return [K.gather_elements(args[0], args[1], op.props().int("axis"))]


@impl(mir.PadOp)
def _pad(op: mir.PadOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return [K.pad(args[0], p.ints("pads"), p.enum("mode"), p.float("value"))]


# ---------------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------------


def _conv_props(
    op: mir.ConvOp | mir.FusedConvBiasActOp | mir.IntegerConvOp | mir.ConvIntegerOp,
) -> dict[str, Any]:
    p = op.props()
    return {
        "strides": p.ints("strides"),
        "pads": p.ints("pads"),
        "dilations": p.ints("dilations"),
        "groups": p.int("groups"),
    }


@impl(mir.ConvOp)
def _conv(op: mir.ConvOp, args: Arrays, env: Env) -> Arrays:
    return [K.conv(args[0], args[1], **_conv_props(op))]


@impl(mir.ConvTransposeOp)
def _conv_transpose(op: mir.ConvTransposeOp, args: Arrays, env: Env) -> Arrays:
    a = _optional_args(op, args, ("input", "weight", "bias"))
    x, w = a["input"], a["weight"]
    assert x is not None and w is not None
    p = op.props()
    return [
        K.conv_transpose(
            x, w, a["bias"], p.ints("strides"), p.ints("pads"), p.ints("dilations"),
            p.ints("output_padding"), p.int("groups"),
        )
    ]  # fmt: skip


@impl(mir.LrnOp)
def _lrn(op: mir.LrnOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    return [K.lrn(args[0], p.int("size"), p.float("alpha"), p.float("beta"), p.float("bias"))]


def _pool_props(op: mir.PoolOp) -> dict[str, Any]:
    p = op.props()
    return {
        "kernel": p.ints("kernel"),
        "strides": p.ints("strides"),
        "pads": p.ints("pads"),
        "dilations": p.ints("dilations"),
        "ceil_mode": p.flag("ceil_mode"),
    }


@impl(mir.MaxPoolOp)
def _max_pool(op: mir.MaxPoolOp, args: Arrays, env: Env) -> Arrays:
    return [K.max_pool(args[0], **_pool_props(op))]


@impl(mir.AvgPoolOp)
def _avg_pool(op: mir.AvgPoolOp, args: Arrays, env: Env) -> Arrays:
    count_include_pad = op.props().flag("count_include_pad")
    return [K.avg_pool(args[0], **_pool_props(op), count_include_pad=count_include_pad)]


# ---------------------------------------------------------------------------------
# Attention, rope
# ---------------------------------------------------------------------------------


@impl(mir.AttentionOp)
def _attention(op: mir.AttentionOp, args: Arrays, env: Env) -> Arrays:
    a = _optional_args(op, args, ("query", "key", "value", "mask"))
    p = op.props()
    q, k, v = a["query"], a["key"], a["value"]
    assert q is not None and k is not None and v is not None
    out = K.attention(
        q, k, v, a["mask"], p.enum("mask_kind"), p.opt_float("scale"), p.opt_float("softcap"),
        zero_nan=p.flag("zero_nan"),
    )  # fmt: skip
    return [out]


@impl(mir.RopeOp)
def _rope(op: mir.RopeOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    x, cos, sin = args
    return [K.rope(x, cos, sin, p.opt_int("rotary_dim"), p.flag("interleaved"))]


# ---------------------------------------------------------------------------------
# Quantisation
# ---------------------------------------------------------------------------------


@impl(mir.QuantizeOp)
def _quantize(op: mir.QuantizeOp, args: Arrays, env: Env) -> Arrays:
    a = _optional_args(op, args, ("input", "scale", "zero_point"))
    x, scale = a["input"], a["scale"]
    assert x is not None and scale is not None
    return [K.quantize(x, scale, a["zero_point"], op.props().opt_int("axis"), _np_dtype(op))]


@impl(mir.DequantizeOp)
def _dequantize(op: mir.DequantizeOp, args: Arrays, env: Env) -> Arrays:
    a = _optional_args(op, args, ("input", "scale", "zero_point"))
    q, scale = a["input"], a["scale"]
    assert q is not None and scale is not None
    return [K.dequantize(q, scale, a["zero_point"], op.props().opt_int("axis"))]


@impl(mir.DynamicQuantizeLinearOp)
def _dynamic_quantize_linear(op: mir.DynamicQuantizeLinearOp, args: Arrays, env: Env) -> Arrays:
    return list(K.dynamic_quantize_linear(args[0]))


@impl(mir.MatmulIntegerOp)
def _matmul_integer(op: mir.MatmulIntegerOp, args: Arrays, env: Env) -> Arrays:
    a = _optional_args(op, args, ("lhs", "rhs", "lhs_zero_point", "rhs_zero_point"))
    lhs, rhs = a["lhs"], a["rhs"]
    assert lhs is not None and rhs is not None
    return [K.matmul_integer(lhs, rhs, a["lhs_zero_point"], a["rhs_zero_point"])]


@impl(mir.DynamicQuantizeMatmulOp)
def _dynamic_quantize_matmul(op: mir.DynamicQuantizeMatmulOp, args: Arrays, env: Env) -> Arrays:
    names = ("input", "weight", "weight_scale", "weight_zero_point", "bias")
    a = _optional_args(op, args, names)
    x, w, scale = a["input"], a["weight"], a["weight_scale"]
    assert x is not None and w is not None and scale is not None
    return [K.dynamic_quantize_matmul(x, w, scale, a["weight_zero_point"], a["bias"])]


@impl(mir.ConvIntegerOp)
def _conv_integer(op: mir.ConvIntegerOp, args: Arrays, env: Env) -> Arrays:
    a = _optional_args(op, args, ("input", "weight", "input_zero_point", "weight_zero_point"))
    x, w = a["input"], a["weight"]
    assert x is not None and w is not None
    return [K.conv_integer(x, w, a["input_zero_point"], a["weight_zero_point"], **_conv_props(op))]


@impl(mir.FakeQuantizeOp)
def _fake_quantize(op: mir.FakeQuantizeOp, args: Arrays, env: Env) -> Arrays:
    p = op.props()
    x, scale, zp = args
    return [
        K.fake_quantize(x, scale, zp, p.opt_int("axis"), p.int("quant_min"), p.int("quant_max"))
    ]


# ---------------------------------------------------------------------------------
# Fused ops: the primitive chain, kernel by kernel
# ---------------------------------------------------------------------------------


@impl(mir.FusedMatmulBiasActOp)
def _fused_matmul_bias_act(op: mir.FusedMatmulBiasActOp, args: Arrays, env: Env) -> Arrays:
    """matmul -> add bias -> activation."""
    x, w, bias = args
    y = K.binary("add", K.matmul(x, w), bias)
    return [K.activation(y, op.props().enum("activation"), op.props().floats("act_params"))]


@impl(mir.FusedReshapeTransposeOp)
def _fused_reshape_transpose(op: mir.FusedReshapeTransposeOp, args: Arrays, env: Env) -> Arrays:
    """reshape to split -> transpose by perm -> reshape to the result."""
    (x,) = args
    p = op.props()
    out = op.result.type
    assert isinstance(out, TensorType)
    moved = K.transpose(K.reshape(x, p.ints("split")), p.ints("perm"))
    return [K.reshape(moved, out.static_shape())]


@impl(mir.FusedTwoSidedMatmulOp)
def _fused_two_sided_matmul(op: mir.FusedTwoSidedMatmulOp, args: Arrays, env: Env) -> Arrays:
    """matmul by lhs, then by rhs (or rhs first), each product as mir.matmul's."""
    lhs, x, rhs = args
    if op.props().flag("rhs_first"):
        return [K.matmul(lhs, K.matmul(x, rhs))]
    return [K.matmul(K.matmul(lhs, x), rhs)]


@impl(mir.ScaledMatmulOp)
def _scaled_matmul(op: mir.ScaledMatmulOp, args: Arrays, env: Env) -> Arrays:
    """mir.matmul's product, then mir.mul (mir.div) by the scale as an element."""
    p = op.props()
    y = K.matmul(args[0], args[1])
    scale = np.asarray(p.float("scale"), y.dtype)
    return [K.binary("div" if p.flag("divide") else "mul", y, scale)]


@impl(mir.FusedTransposedMatmulOp)
def _fused_transposed_matmul(op: mir.FusedTransposedMatmulOp, args: Arrays, env: Env) -> Arrays:
    """The operands' last two dims swapped as the flags say, then mir.matmul's product."""
    p = op.props()
    lhs, rhs = args
    if p.flag("transpose_lhs"):
        lhs = np.swapaxes(lhs, -1, -2)
    if p.flag("transpose_rhs"):
        rhs = np.swapaxes(rhs, -1, -2)
    return [K.matmul(lhs, rhs)]


@impl(mir.FusedSwigluOp)
def _fused_swiglu(op: mir.FusedSwigluOp, args: Arrays, env: Env) -> Arrays:
    """narrow the two halves -> silu(gate) -> mul by up."""
    (x,) = args
    n = x.shape[-1] // 2
    first, second = K.narrow(x, x.ndim - 1, 0, n), K.narrow(x, x.ndim - 1, n, n)
    gate, up = (first, second) if op.props().flag("gate_first") else (second, first)
    return [K.binary("mul", K.unary("silu", gate), up)]


@impl(mir.FusedResidualRmsNormOp, mir.FusedResidualLayerNormOp)
def _fused_residual_norm(op: mir.FusedResidualNormOp, args: Arrays, env: Env) -> Arrays:
    """add -> norm; both the norm and the sum are results."""
    a = _optional_args(op, args, ("input", "residual", "scale", "bias"))
    x, residual, scale = a["input"], a["residual"], a["scale"]
    assert x is not None and residual is not None and scale is not None
    p = op.props()
    total = K.binary("add", x, residual)
    kernel = K.rms_norm if isinstance(op, mir.FusedResidualRmsNormOp) else K.layer_norm
    return [kernel(total, scale, a["bias"], p.int("axis"), p.float("epsilon")), total]


@impl(mir.FusedConvBiasActOp)
def _fused_conv_bias_act(op: mir.FusedConvBiasActOp, args: Arrays, env: Env) -> Arrays:
    """conv -> add bias reshaped to [C_out, 1, ...] -> add residual -> activation."""
    a = _optional_args(op, args, ("input", "weight", "bias", "residual"))
    x, w, bias = a["input"], a["weight"], a["bias"]
    assert x is not None and w is not None and bias is not None
    y = K.conv(x, w, **_conv_props(op))
    y = K.binary("add", y, K.reshape(bias, (bias.shape[0], *([1] * (y.ndim - 2)))))
    if a["residual"] is not None:
        y = K.binary("add", y, a["residual"])
    return [K.activation(y, op.props().enum("activation"), op.props().floats("act_params"))]


@impl(mir.FusedScaleShiftActOp)
def _fused_scale_shift_act(op: mir.FusedScaleShiftActOp, args: Arrays, env: Env) -> Arrays:
    """mul by scale reshaped to [C, 1, ...] -> add shift so reshaped -> activation."""
    x, scale, shift = args
    view = (x.shape[1], *([1] * (x.ndim - 2)))
    y = K.binary("add", K.binary("mul", x, K.reshape(scale, view)), K.reshape(shift, view))
    return [K.activation(y, op.props().enum("activation"), op.props().floats("act_params"))]


@impl(mir.FusedLstmCellOp)
def _fused_lstm_cell(op: mir.FusedLstmCellOp, args: Arrays, env: Env) -> Arrays:
    """narrow the gate blocks -> sigmoid (i, f, o) / tanh (g) -> f·c + i·g -> o·tanh."""
    gates, prev = args
    h, axis, block = prev.shape[-1], gates.ndim - 1, op.gate_blocks()

    def gate(name: str, fn: str) -> np.ndarray:
        return K.unary(fn, K.narrow(gates, axis, block[name] * h, h))

    i, f = gate("input", "sigmoid"), gate("forget", "sigmoid")
    cell = K.binary("add", K.binary("mul", f, prev), K.binary("mul", i, gate("cell", "tanh")))
    return [K.binary("mul", gate("output", "sigmoid"), K.unary("tanh", cell)), cell]


@impl(mir.FusedGruCellOp)
def _fused_gru_cell(op: mir.FusedGruCellOp, args: Arrays, env: Env) -> Arrays:
    """narrow the gate blocks of gx and gh -> r, z = sigmoid(x + h) -> n = tanh(x_n + r·h_n)
    -> (1 - z)·n + z·prev."""
    gx, gh, prev = args
    h, axis, block = prev.shape[-1], gx.ndim - 1, op.gate_blocks()

    def gate(v: np.ndarray, name: str) -> np.ndarray:
        return K.narrow(v, axis, block[name] * h, h)

    def sigmoid(name: str) -> np.ndarray:
        return K.unary("sigmoid", K.binary("add", gate(gx, name), gate(gh, name)))

    r, z = sigmoid("reset"), sigmoid("update")
    n = K.unary("tanh", K.binary("add", gate(gx, "new"), K.binary("mul", r, gate(gh, "new"))))
    one = np.ones((), prev.dtype)
    keep = K.binary("mul", z, prev)
    return [K.binary("add", K.binary("mul", K.binary("sub", one, z), n), keep)]


@impl(*mir.RECURRENT_OPS)
def _recurrent(op: mir.RecurrentOp, args: Arrays, env: Env) -> Arrays:
    """Step by step, each step's ops as their own kernels compute them (the definition,
    shared with the lowering to steps: ``interpreter.recurrent``)."""
    return recurrent.reference(op, args)


def _split_heads(x: np.ndarray, heads: int, head_dim: int) -> np.ndarray:
    """[B, S, heads·D] -> reshape [B, S, heads, D] -> transpose [B, heads, S, D]."""
    b, s = x.shape[:2]
    return K.transpose(K.reshape(x, (b, s, heads, head_dim)), (0, 2, 1, 3))


@impl(mir.FusedAttentionBlockOp)
def _fused_attention_block(op: mir.FusedAttentionBlockOp, args: Arrays, env: Env) -> Arrays:
    """qkv matmul -> add qkv_bias -> narrow q|k|v -> reshape/transpose to heads -> rope on
    q and k -> attention -> transpose/reshape back -> out matmul -> add out_bias."""
    names = ("hidden", "qkv_weight", "out_weight", "qkv_bias", "out_bias", "mask", "cos", "sin")
    a = _optional_args(op, args, names)
    hidden, qkv_w, out_w = a["hidden"], a["qkv_weight"], a["out_weight"]
    assert hidden is not None and qkv_w is not None and out_w is not None
    p = op.props()
    h, hk, d = p.int("num_heads"), p.int("num_kv_heads"), p.int("head_dim")
    qkv = K.matmul(hidden, qkv_w)
    if a["qkv_bias"] is not None:
        qkv = K.binary("add", qkv, a["qkv_bias"])
    q = _split_heads(K.narrow(qkv, 2, 0, h * d), h, d)
    k = _split_heads(K.narrow(qkv, 2, h * d, hk * d), hk, d)
    v = _split_heads(K.narrow(qkv, 2, (h + hk) * d, hk * d), hk, d)
    cos, sin = a["cos"], a["sin"]
    if cos is not None and sin is not None:
        q = K.rope(q, cos, sin, None, False)
        k = K.rope(k, cos, sin, None, False)
    mask_kind: MaskKind = p.enum("mask_kind")
    attn = K.attention(
        q, k, v, a["mask"], mask_kind, p.opt_float("scale"), None, zero_nan=p.flag("zero_nan")
    )
    b, s = hidden.shape[:2]
    merged = K.reshape(K.transpose(attn, (0, 2, 1, 3)), (b, s, h * d))
    out = K.matmul(merged, out_w)
    if a["out_bias"] is not None:
        out = K.binary("add", out, a["out_bias"])
    return [out]


# ---------------------------------------------------------------------------------
# Integer kernels
# ---------------------------------------------------------------------------------


def _integer_epilogue(op: mir.IntegerLinearOp, acc: np.ndarray, args: Arrays, axis: int) -> Arrays:
    """f32(acc) · scale (+ bias) -> activation (-> requantise), channels along ``axis``;
    ``acc`` holds exact integer sums (in float64)."""
    a = _optional_args(op, args, ("input", "weight", "scale", "bias"))
    scale, bias = a["scale"], a["bias"]
    assert scale is not None
    p = op.props()
    shape = [1] * acc.ndim
    shape[axis] = -1
    y = K.binary("mul", acc.astype(np.float32), scale.reshape(shape))
    if bias is not None:
        y = K.binary("add", y, bias.reshape(shape))
    y = K.activation(y, p.enum("activation"))
    out_scale = p.opt_float("out_scale")
    if out_scale is None:
        return [y]
    dtype = _np_dtype(op)
    zero = np.asarray(p.int("out_zero_point"), dtype=dtype).reshape(1)
    q = K.quantize(y, np.asarray([out_scale], np.float32), zero, None, dtype)
    table = p.get("table")
    if table is None:
        return [q]
    lookup = np.frombuffer(cast(RawDataAttr, table).data, dtype)
    return [lookup[q.view(np.uint8)]]  # table[q mod 256]


@impl(mir.IntegerMatmulOp)
def _integer_matmul(op: mir.IntegerMatmulOp, args: Arrays, env: Env) -> Arrays:
    """The exact integer sums: integers below 2^53 are exact in float64, whatever the
    summation order."""
    x, w = args[0], args[1]
    p = op.props()
    acc = K.matmul(
        x.astype(np.float64) - p.int("input_zero_point"),
        w.astype(np.float64) - p.int("weight_zero_point"),
    )
    return _integer_epilogue(op, acc, args, acc.ndim - 1)


@impl(mir.IntegerConvOp)
def _integer_conv(op: mir.IntegerConvOp, args: Arrays, env: Env) -> Arrays:
    """Padding adds zeros to (input - zero point), as the dequantised input pads 0.0."""
    x, w = args[0], args[1]
    zero = op.props().int("input_zero_point")
    acc = K.conv(x.astype(np.float64) - zero, w.astype(np.float64), **_conv_props(op))
    return _integer_epilogue(op, acc, args, 1)


@impl(mir.QuantizedAddOp)
def _quantized_add(op: mir.QuantizedAddOp, args: Arrays, env: Env) -> Arrays:
    """The ops it stands for, with their kernels: dequantize each side, add, the
    activation, quantize."""
    p = op.props()

    def params(side: str) -> tuple[np.ndarray, np.ndarray]:
        scale = np.array(p.float(f"{side}_scale"), np.float32)
        return scale, np.array(p.int(f"{side}_zero_point"))

    lhs, rhs = (
        K.dequantize(x, *params(side), None) for x, side in zip(args, ("lhs", "rhs"), strict=True)
    )
    total = K.activation(K.binary("add", lhs, rhs), p.enum("activation"))
    out = op.result.type
    assert isinstance(out, TensorType)
    return [K.quantize(total, *params("out"), None, out.dtype.numpy)]


@impl(mir.QuantizedAvgPoolOp)
def _quantized_avg_pool(op: mir.QuantizedAvgPoolOp, args: Arrays, env: Env) -> Arrays:
    """Each window's exact integer sum of x - x_zero_point and its count, then the f32
    epilogue: the mean (one f32 division of exact values), times f32(x_scale / y_scale),
    quantized with scale 1 (round half to even, y's zero point, saturation)."""
    p = op.props()
    diff = args[0].astype(np.int64) - p.int("x_zero_point")
    flag = p.flag("count_include_pad")
    total, count = K.window_sums(diff, **_pool_props(op), count_include_pad=flag)
    mean = total.astype(np.float32) / count.astype(np.float32)
    v = mean * np.float32(p.float("x_scale") / p.float("y_scale"))
    one, zero = np.array(1.0, np.float32), np.array(p.int("y_zero_point"))
    return [K.quantize(v, one, zero, None, args[0].dtype)]


@impl(mir.QuantizedSoftmaxOp)
def _quantized_softmax(op: mir.QuantizedSoftmaxOp, args: Arrays, env: Env) -> Arrays:
    """The table's exponentials of each row's max(x) - x and their exact int64 sum, then
    one f32 division each, quantized (y_scale, y's zero point)."""
    p = op.props()
    x, axis = args[0].astype(np.int64), p.int("axis")
    out = op.result.type
    assert isinstance(out, TensorType)
    if x.shape[axis] == 0:
        return [np.zeros(x.shape, out.dtype.numpy)]
    e = mir.softmax_table(p.float("x_scale"))[np.max(x, axis=axis, keepdims=True) - x]
    total = np.sum(e, axis=axis, keepdims=True)  # exact in int64, in any order
    v = e.astype(np.float32) / total.astype(np.float32)
    scale, zero = np.array(p.float("y_scale"), np.float32), np.array(p.int("y_zero_point"))
    return [K.quantize(v, scale, zero, None, out.dtype.numpy)]


# ---------------------------------------------------------------------------------
# Elementwise regions: the body, op by op
# ---------------------------------------------------------------------------------


@impl(mir.ElementwiseRegionOp)
def _elementwise_region(op: mir.ElementwiseRegionOp, args: Arrays, env: Env) -> Arrays:
    """A region means its body: the same kernels in the same order, so marking a chain
    as a region (and unfusing it again) never changes a value."""
    return execute_graph(op, args, env)


# ---------------------------------------------------------------------------------
# Control flow: regions run on the values of the graph around them
# ---------------------------------------------------------------------------------


@impl(mir.IfOp)
def _if(op: mir.IfOp, args: Arrays, env: Env) -> Arrays:
    """The taken region's yields; the other region does not run."""
    taken = mir.IfOp.taken(args[0])
    what = f"the {'then' if taken else 'else'} region of {describe(op)}"
    return execute_block(op.branch(taken), [], env, what)


LoopBody = Callable[[np.ndarray, np.ndarray, Arrays], Arrays]
"""``body(iteration, condition, carried) -> yielded``: one run of a loop's body."""


def run_loop(op: mir.LoopOp, args: Arrays, body: LoopBody, env: Env) -> Arrays:
    """What ``mir.loop`` computes, given a way to run its body once: the carried values
    after the last iteration, then the scan results (every iteration's elements stacked;
    empty when no iteration ran). Every executor runs loops through this function, so
    they agree on when a loop stops. Symbols bound inside the body (by a nested loop)
    belong to one iteration."""
    a = _optional_args(op, args, ("trip_count", "condition"))
    rest = args[len(args) - len(op.inits) :]
    trips = None if a["trip_count"] is None else int(a["trip_count"])
    keep_going = True if a["condition"] is None else bool(a["condition"])
    carried, n = list(rest), len(op.inits)
    elements: list[Arrays] = [[] for _ in op.scan_results]
    snapshot = env.scoped_bindings()
    i = 0
    while keep_going and (trips is None or i < trips):
        yielded = body(np.array(i, np.int64), np.array(keep_going), carried)
        env.restore_bindings(snapshot)
        if a["condition"] is not None:
            keep_going = bool(yielded[0])
        carried = list(yielded[1 : 1 + n])
        for j, element in enumerate(yielded[1 + n :]):
            elements[j].append(element)
        i += 1
    terminator = op.body.block.last_op
    assert terminator is not None
    scans: Arrays = []
    for j, value in enumerate(terminator.operands[1 + n :]):
        if elements[j]:
            scans.append(np.stack(elements[j]))
        else:
            t = value.type
            assert isinstance(t, TensorType)
            scans.append(np.empty((0, *env.shape(t)), t.dtype.numpy))
    return [*carried, *scans]


@impl(mir.LoopOp)
def _loop(op: mir.LoopOp, args: Arrays, env: Env) -> Arrays:
    block, what = op.body.block, f"the body of {describe(op)}"

    def body(i: np.ndarray, cond: np.ndarray, carried: Arrays) -> Arrays:
        return execute_block(block, [i, cond, *carried], env, what)

    return run_loop(op, args, body, env)
