"""``quant-to-integer{target=T}``: quantised matmuls, convolutions and elementwise chains
as integer kernels.

After ``quant-insert`` and ``quant-propagate`` a quantised conv reads
``dequantize(x_q, s_x [, z_x])`` and ``dequantize(w_q, s_w axis 0)`` and computes in f32
on the dequantised values. For a target that claims ``mir.integer_conv`` /
``mir.integer_matmul`` (cpu, cortex-m) this pass rewrites

- ``conv`` / ``fused_conv_bias_act`` of a per-tensor dequantized i8/u8 input and a
  symmetric i8 weight dequantized per output channel (or per tensor) into
  ``mir.integer_conv`` (scale ``s_x · s_w``, the bias and activation kept; a residual
  add and the activation after it stay f32 ops, as do the parameterised activations --
  clip, hard sigmoid/swish, leaky relu -- that the integer epilogue does not take);
- ``matmul`` / ``fused_matmul_bias_act`` of such an input and a [.., K, N] symmetric i8
  operand dequantized per column (or per tensor), or a per-tensor dequantized i8/u8
  operand with a zero point (an attention's second activation: ``weight_zero_point``),
  into ``mir.integer_matmul``;
- ``quantize(integer op)`` (per tensor, the integer op's only reader) into the integer
  op producing the quantised values directly: requantisation;
- ``transpose(dequantize(constant))`` into the dequantize of the transposed constant (a
  Gemm's ``transB`` weight), so the matmul above finds its integer operand;
- ``quantize(op(dequantize(x)))`` of an op that only moves elements (reshape, transpose,
  slice, concat...) or selects them (max pool), with one type, scale and zero point
  throughout, into the op on the integers;
- ``quantize(add(dequantize(a), dequantize(b)))`` (and a relu after the add), a and b
  of one shape or broadcast (a quantized bias vector, a mask), into
  ``mir.quantized_add`` (for targets claiming it);
- ``quantize(avg_pool(dequantize(x)))`` (or of a global average pool's reduce_mean)
  into ``mir.quantized_avg_pool`` (for targets claiming it);
- ``quantize(softmax(dequantize(x)))`` into ``mir.quantized_softmax`` (for targets
  claiming it);
- ``quantize(f(dequantize(x)))``, ``f`` any chain of elementwise ops of the one 8-bit
  tensor x and of constants of one value (a sigmoid, a SiLU with its inner quantize, a
  leaky relu, an add of a zero bias...), into a ``mir.gather`` from the table of f's
  256 results (for targets claiming the gather), or x itself where that table is x's;
  a concat's input of other parameters is requantised by such a table;
- a table lookup of an integer op's requantised result that nothing else reads into
  that op's own ``table``: the conv and the function after it in one op.

It runs on ``quantize=int8``'s quantisation and, in the default pipeline of a target
that claims the integer kernels, on a quantised model's own (a QDQ model's), after
fusion: the cleanup before fusion keeps the dequantizes of 8-bit weights and addends
(``keep-dequantize``) for it, and the cleanup after it folds those it left.

The integer ops accumulate exactly, where the dequantised form rounds every product and
sum in f32: results differ by that rounding (and a value on a quantisation step's edge
may round to the other step). The f32 form stays the reference they are checked against.
Ops left unused are erased.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import Pure

from rlx_compile.diagnostics import change_listener, note_changed, note_removed
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import Activation
from rlx_compile.dialects.traits import Elementwise
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.folding import evaluate
from rlx_compile.fusion.base import sole_user
from rlx_compile.ir import erase_unused, graph_block, mir_graphs
from rlx_compile.rewriting import apply_greedily
from rlx_compile.targets import get_target

_INPUT_TYPES = (DType.I8, DType.U8)


def _constant(v: SSAValue | None) -> np.ndarray | None:
    if isinstance(v, OpResult) and isinstance(v.op, mir.ConstantOp):
        return v.op.to_numpy()
    return None


def _splat(v: SSAValue) -> np.ndarray | None:
    """A constant of one value in every element (a zero bias, a scale shared by every
    channel), or a per-tensor dequantize of one, as that value in an array of its rank
    and one element: what it is in an elementwise chain, whatever dims it broadcasts
    over."""
    owner = v.owner
    if isinstance(owner, mir.DequantizeOp):
        if _splat(owner.input) is None or not _is_quant(owner):
            return None
        args = [_constant(p) for p in owner.operands]
        result = evaluate(owner, cast(list[np.ndarray], args))
        arr = None if result is None else result[0]
    else:
        arr = _constant(v)
    if arr is None or arr.size == 0:
        return None
    first = arr.reshape(-1)[:1]
    if arr.size > 1 and not np.array_equal(arr, np.broadcast_to(first, arr.shape)):
        return None
    return first.reshape((1,) * arr.ndim)


def _type(v: SSAValue) -> TensorType:
    return cast(TensorType, v.type)


@dataclass
class _Input:
    """A per-tensor dequantized integer input: its integers, scale and zero point."""

    q: SSAValue
    scale: float
    zero_point: int


def _input(v: SSAValue) -> _Input | None:
    dq = v.owner
    if not isinstance(dq, mir.DequantizeOp) or _type(dq.scale).dtype is not DType.F32:
        return None
    params = _qparams(dq)
    if params is None or params[0] not in _INPUT_TYPES:
        return None
    return _Input(dq.input, params[1], params[2])


def _weight(v: SSAValue, axis: int) -> tuple[SSAValue, np.ndarray] | None:
    """A symmetric i8 weight dequantized along ``axis`` (or per tensor): its integers and
    per-channel f32 scales."""
    if not isinstance(v, OpResult) or not isinstance(v.op, mir.DequantizeOp):
        return None
    dq = v.op
    if _type(dq.input).dtype is not DType.I8:
        return None
    if dq.zero_point is not None:
        z = _constant(dq.zero_point)
        if z is None or np.any(z):
            return None
    scale = _constant(dq.scale)
    if scale is None or scale.dtype != np.float32:
        return None
    w_axis = dq.props().opt_int("axis")
    if w_axis is not None and w_axis != axis:
        return None
    n = _type(dq.input).shape[axis]
    return dq.input, np.broadcast_to(scale.reshape(-1), (int(n),)).astype(np.float32)


def _matmul_weight(v: SSAValue, axis: int) -> tuple[SSAValue, np.ndarray, int] | None:
    """``_weight``, or a per-tensor dequantized i8/u8 operand with a zero point (an
    attention's other activation): its integers, per-column f32 scales and zero point."""
    w = _weight(v, axis)
    if w is not None:
        return w[0], w[1], 0
    operand = _input(v)  # (dequantized as a matmul's input is)
    n = _type(v).shape[axis]
    if operand is None or not isinstance(n, int):
        return None  # (its scale is given per column)
    return operand.q, np.full((n,), operand.scale, np.float32), operand.zero_point


def _combined_scale(x: _Input, w_scales: np.ndarray) -> mir.ConstantOp:
    """s_x · s_w per channel, rounded to f32 once (the integer op's ``scale``)."""
    return mir.ConstantOp(np.float32(x.scale) * w_scales)


SEPARATE_ACTIVATIONS = frozenset({
    Activation.CLIP, Activation.HARD_SIGMOID, Activation.HARD_SWISH, Activation.LEAKY_RELU,
})  # fmt: skip
"""Activations an integer op's epilogue does not apply: their own f32 op follows it."""


def _activation_op(act: Activation, params: tuple[float, ...], x: SSAValue) -> Operation:
    """The unary op of a fused epilogue's activation (``params``: its act_params)."""
    if act in (Activation.GELU, Activation.GELU_TANH):
        return mir.GeluOp(x, "tanh" if act is Activation.GELU_TANH else "none")
    if act is Activation.CLIP:
        return mir.ClipOp(x, *params)
    if act is Activation.HARD_SIGMOID:
        return mir.HardSigmoidOp(x, *params)
    if act is Activation.LEAKY_RELU:
        return mir.LeakyReluOp(x, *params)
    return {
        Activation.RELU: mir.ReluOp, Activation.SILU: mir.SiluOp,
        Activation.SIGMOID: mir.SigmoidOp, Activation.TANH: mir.TanhOp,
        Activation.HARD_SWISH: mir.HardSwishOp,
    }[act](x)  # fmt: skip


def _with_tail(
    rewriter: PatternRewriter,
    op: Operation,
    scale: mir.ConstantOp,
    new: Operation,
    residual: SSAValue | None,
    act: Activation,
) -> None:
    """``op`` replaced by ``new``, then (f32) the residual add and the activation."""
    rewriter.insert(scale, InsertPoint.before(op))
    tail: list[Operation] = [new]
    if residual is not None:
        tail.append(mir.AddOp(new.results[0], residual))
    if act is not Activation.NONE:
        params = tuple(op.props().floats("act_params"))  # type: ignore[attr-defined]
        tail.append(_activation_op(act, params, tail[-1].results[0]))
    for t in tail:
        t.location = op.location
    rewriter.replace(op, tail, [tail[-1].results[0]])


def _replace(
    rewriter: PatternRewriter, op: Operation, scale: mir.ConstantOp, new: Operation
) -> None:
    rewriter.insert(scale, InsertPoint.before(op))
    rewriter.replace(op, [new], list(new.results))


class IntegerConv(RewritePattern):
    roots = (mir.ConvOp, mir.FusedConvBiasActOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mir.ConvOp | mir.FusedConvBiasActOp):
            return
        fused = op if isinstance(op, mir.FusedConvBiasActOp) else None
        x = _input(op.input)
        w = _weight(op.weight, 0)
        if x is None or w is None or _type(op.result).dtype is not DType.F32:
            return
        if fused is not None and _type(fused.bias).dtype is not DType.F32:
            return
        p = op.props()
        scale = _combined_scale(x, w[1])
        residual = fused.residual if fused is not None else None
        act = p.enum("activation") if fused is not None else Activation.NONE
        # act((conv + bias) + residual): the residual add and the activation follow
        separate = residual is not None or act in SEPARATE_ACTIVATIONS
        new = mir.IntegerConvOp(
            x.q, w[0], scale.result, fused.bias if fused is not None else None,
            strides=p.ints("strides"), pads=p.ints("pads"), dilations=p.ints("dilations"),
            groups=p.int("groups"), input_zero_point=x.zero_point,
            activation="none" if separate else act.value,
        )  # fmt: skip
        new.location = op.location
        if separate:
            _with_tail(rewriter, op, scale, new, residual, act)
        else:
            _replace(rewriter, op, scale, new)


class IntegerMatmul(RewritePattern):
    roots = (mir.MatmulOp, mir.FusedMatmulBiasActOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mir.DenseOp):
            return
        fused = isinstance(op, mir.FusedMatmulBiasActOp)
        lhs, rhs, bias = mir.dense_operands(op)
        if _type(rhs).rank < 2 or _type(lhs).rank < 2:
            return
        x = _input(lhs)
        w = _matmul_weight(rhs, _type(rhs).rank - 1)
        if x is None or w is None or _type(op.result).dtype is not DType.F32:
            return
        if bias is not None and (_type(bias).dtype is not DType.F32 or _type(bias).rank != 1):
            return
        scale = _combined_scale(x, w[1])
        act = op.props().enum("activation") if fused else Activation.NONE
        separate = act in SEPARATE_ACTIVATIONS
        new = mir.IntegerMatmulOp(
            x.q, w[0], scale.result, bias, input_zero_point=x.zero_point,
            weight_zero_point=w[2], activation="none" if separate else act.value,
        )  # fmt: skip
        new.location = op.location
        if separate:
            _with_tail(rewriter, op, scale, new, None, act)
        else:
            _replace(rewriter, op, scale, new)


class TransposedWeight(RewritePattern):
    """transpose(dequantize(c)) -> dequantize(c transposed), the axis moved with it: a
    Gemm's ``transB`` weight, dequantized, as the [K, N] operand ``IntegerMatmul`` reads
    (the same values: a dequantize is elementwise)."""

    roots = (mir.TransposeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.TransposeOp, rewriter: PatternRewriter) -> None:
        dq = op.input.owner
        if not isinstance(dq, mir.DequantizeOp) or sole_user(dq.result) is not op:
            return
        q = _constant(dq.input)
        if q is None:
            return
        perm = op.props().ints("perm")
        axis = dq.props().opt_int("axis")
        moved = mir.ConstantOp(np.ascontiguousarray(np.transpose(q, perm)))
        new = mir.DequantizeOp(
            moved.result, dq.scale, dq.zero_point,
            axis=None if axis is None else list(perm).index(axis % len(perm)),
        )  # fmt: skip
        moved.location = new.location = op.location
        rewriter.replace(op, [moved, new], [new.result])


def _qparams(op: mir.QuantizeOp | mir.DequantizeOp) -> tuple[DType, float, int] | None:
    """A per-tensor (de)quantize's integer type, scale and zero point, when known."""
    q = op.result if isinstance(op, mir.QuantizeOp) else op.input
    if op.props().opt_int("axis") is not None:
        return None
    scale = _constant(op.scale)
    if scale is None or scale.size != 1:
        return None
    zero = 0
    if op.zero_point is not None:
        z = _constant(op.zero_point)
        if z is None or z.size != 1:
            return None
        zero = int(z.reshape(-1)[0])
    return _type(q).dtype, float(scale.reshape(-1)[0]), zero


MOVES_BYTES = (
    mir.ReshapeOp, mir.TransposeOp, mir.FusedReshapeTransposeOp, mir.NarrowOp, mir.SliceOp,
    mir.ConcatOp, mir.ExpandOp, mir.GatherOp, mir.GatherAxesOp,
)  # fmt: skip
"""Ops that only move their elements, whatever their type (their kernels copy bytes)."""
SELECTS = (mir.MaxPoolOp,)
"""Ops that select one of their elements by order: the max of dequantized values is the
dequantized max where the scale is positive (their kernels take 8-bit integers)."""


class IntegerDataMovement(RewritePattern):
    """quantize(op(dequantize(x)...)) -> op(x...) for an op that only moves or selects
    elements (a max pool: for a positive scale), every dequantize and the quantize per
    tensor with one type, scale and zero point: the same integers (quantize inverts
    dequantize exactly), without the f32 tensor between -- onnxruntime's QDQ handling of
    Reshape, Transpose, Slice, Gather, Resize, MaxPool... A concat's input of other
    parameters is requantised by a table lookup first (its QLinearConcat)."""

    roots = (mir.QuantizeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.QuantizeOp, rewriter: PatternRewriter) -> None:
        mover = op.input.owner
        if not isinstance(mover, MOVES_BYTES + SELECTS) or sole_user(op.input) is not op:
            return
        if _type(op.input).dtype is not DType.F32:
            return  # (then its f32 operands are the dequantized data, others indices)
        params = _qparams(op)
        if params is None or (isinstance(mover, SELECTS) and params[1] <= 0):
            return
        operands: list[SSAValue] = []
        requantised: list[Operation] = []
        for v in mover.operands:
            if _type(v).dtype is not DType.F32:
                operands.append(v)  # an index or shape operand
                continue
            dq = v.owner
            if not isinstance(dq, mir.DequantizeOp):
                return
            own = _qparams(dq)
            if own is None or own[0] not in _INPUT_TYPES:
                return
            if own == params:
                operands.append(dq.input)
                continue
            if not isinstance(mover, mir.ConcatOp):
                return
            # A concat input of other parameters: its integers requantised first (by a
            # table, which ``tabulate_elementwise`` makes), as QLinearConcat does inside.
            requantise = mir.QuantizeOp(dq.result, op.scale, op.zero_point, dtype=params[0])
            requantised.append(requantise)
            operands.append(requantise.result)
        new = type(mover).create(
            operands=operands,
            result_types=[_type(op.result)],
            properties=dict(mover.properties),
            attributes=dict(mover.attributes),
        )
        for o in (*requantised, new):
            o.location = mover.location
        rewriter.replace(op, [*requantised, new], [new.results[0]])
        rewriter.erase(mover)


class QuantizedAdd(RewritePattern):
    """quantize([relu](add(dequantize(a), dequantize(b)))), all per tensor, a and b of
    one shape or broadcast (a quantized bias vector, a mask) -> ``mir.quantized_add``
    (onnxruntime's QLinearAdd), which computes just that: the same integers, in one op
    instead of four."""

    roots = (mir.QuantizeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.QuantizeOp, rewriter: PatternRewriter) -> None:
        out = _qparams(op)
        if out is None or out[0] not in _INPUT_TYPES:
            return
        top, act = op.input.owner, "none"
        reader: Operation = op
        if isinstance(top, mir.ReluOp) and sole_user(top.result) is op:
            reader, act = top, "relu"
            top = top.input.owner
        if not isinstance(top, mir.AddOp) or sole_user(top.result) is not reader:
            return
        sides: list[tuple[SSAValue, tuple[DType, float, int]]] = []
        if _type(top.result).dtype is not DType.F32 or not out[1] > 0:
            return  # the op computes in f32, its scales positive
        for v in top.operands:  # (the add's operands broadcast as the op's do)
            dq = v.owner
            if not isinstance(dq, mir.DequantizeOp) or _type(v).dtype is not DType.F32:
                return
            if _splat(v) is not None:
                return  # a function of the other side alone: a table (tabulate_elementwise)
            params = _qparams(dq)
            if params is None or params[0] not in _INPUT_TYPES or not params[1] > 0:
                return
            sides.append((dq.input, params))
        (a, pa), (b, pb) = sides
        new = mir.QuantizedAddOp(
            a, b, (pa[1], pb[1], out[1]), (pa[2], pb[2], out[2]), out[0], activation=act
        )
        new.location = op.location
        rewriter.replace(op, [new], [new.result])


def _window(pool: mir.AvgPoolOp | mir.ReduceMeanOp) -> dict[str, Any] | None:
    """The window of an average pool (its geometry) or of a global one (a reduce_mean
    keeping dims over all the static spatial dims of an [N, C, spatial...] tensor), as
    ``mir.quantized_avg_pool`` takes it: 1 to 3 spatial dims (its C kernel's), at most
    ``QUANTIZED_POOL_TAPS`` taps (its sum exact in f32). None for any other."""
    p = pool.props()
    t = _type(pool.input)
    if not 3 <= t.rank <= 5:
        return None
    if isinstance(pool, mir.AvgPoolOp):
        window: dict[str, Any] = {
            "kernel": p.ints("kernel"), "strides": p.ints("strides"), "pads": p.ints("pads"),
            "dilations": p.ints("dilations"), "ceil_mode": p.flag("ceil_mode"),
            "count_include_pad": p.flag("count_include_pad"),
        }  # fmt: skip
    else:
        spatial = t.shape[2:]
        if list(p.ints("axes")) != list(range(2, t.rank)) or not p.flag("keepdims"):
            return None  # (channels last, or the dims dropped)
        if not all(isinstance(d, int) and d > 0 for d in spatial):
            return None
        window = {"kernel": [int(d) for d in spatial]}
    if math.prod(window["kernel"]) > mir.QUANTIZED_POOL_TAPS:
        return None
    return window


QParams = tuple[DType, float, int]
"""A per-tensor (de)quantize's integer type, scale and zero point (``_qparams``)."""


def _requantized(
    op: mir.QuantizeOp, kinds: tuple[type[Operation], ...]
) -> tuple[Operation, mir.DequantizeOp, QParams, QParams] | None:
    """``op = quantize(f(dequantize(x)))``, ``f`` an op of ``kinds`` on one f32 operand
    that only ``op`` reads, the dequantize and ``op`` per tensor with constant positive
    scales and 8-bit integers (what the one-op kernels of such chains take): ``f``, the
    dequantize, its parameters and ``op``'s. None for any other."""
    f = op.input.owner
    if not isinstance(f, kinds):
        return None
    if sole_user(f.results[0]) is not op or _type(f.results[0]).dtype is not DType.F32:
        return None
    dq = f.operands[0].owner
    if not isinstance(dq, mir.DequantizeOp):
        return None
    out, own = _qparams(op), _qparams(dq)
    if out is None or own is None or out[0] not in _INPUT_TYPES or own[0] not in _INPUT_TYPES:
        return None
    if not (out[1] > 0 and own[1] > 0):
        return None  # the kernels' scales are positive
    return f, dq, own, out


class QuantizedAvgPool(RewritePattern):
    """quantize(avg_pool(dequantize(x))), or of a global average pool (a reduce_mean over
    the spatial dims), per tensor, x and the result of one 8-bit type ->
    ``mir.quantized_avg_pool`` (onnxruntime's QLinearAveragePool and
    QLinearGlobalAveragePool, and its QDQ handling of the pools): one op instead of three,
    the window's sum exact, within a step of them. A dequantize other ops read stays for
    them; a pool other ops read stays whole."""

    roots = (mir.QuantizeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.QuantizeOp, rewriter: PatternRewriter) -> None:
        chain = _requantized(op, (mir.AvgPoolOp, mir.ReduceMeanOp))
        if chain is None:
            return
        pool, dq, own, out = chain
        assert isinstance(pool, mir.AvgPoolOp | mir.ReduceMeanOp)
        if own[0] != out[0]:
            return  # the pool's result is of its input's type
        window = _window(pool)
        if window is None:
            return
        new = mir.QuantizedAvgPoolOp(
            dq.input, window.pop("kernel"), (own[1], out[1]), (own[2], out[2]), **window
        )
        new.location = op.location
        rewriter.replace(op, [new], [new.result])


class QuantizedSoftmax(RewritePattern):
    """quantize(softmax(dequantize(x))), per tensor, x and the result 8-bit (of one type
    or not) -> ``mir.quantized_softmax`` along the softmax's axis (onnxruntime's
    QLinearSoftmax, and its QDQ handling of a softmax): one op instead of three, within a
    step of them. A dequantize other ops read stays for them; a softmax other ops read
    stays whole."""

    roots = (mir.QuantizeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.QuantizeOp, rewriter: PatternRewriter) -> None:
        chain = _requantized(op, (mir.SoftmaxOp,))
        if chain is None:
            return
        softmax, dq, own, out = chain
        assert isinstance(softmax, mir.SoftmaxOp)
        axis = softmax.props().int("axis")
        new = mir.QuantizedSoftmaxOp(dq.input, axis, (own[1], out[1]), out[2], out[0])
        new.location = op.location
        rewriter.replace(op, [new], [new.result])


TABLE_REACH = 16
"""Most ops a tabulated chain holds (a gelu or a hard swish with its Q/DQ is a handful)."""


def _is_quant(op: Operation) -> bool:
    """A per-tensor quantize or dequantize of constant parameters (elementwise, then)."""
    return isinstance(op, mir.QuantizeOp | mir.DequantizeOp) and _qparams(op) is not None


def _inner(dq: mir.DequantizeOp) -> bool:
    """Whether a chain goes on through ``dq``: it dequantizes a quantize of an elementwise
    result that nothing else reads (a SiLU's sigmoid, quantized between its two ops);
    else ``dq`` is where the chain starts."""
    q = dq.input.owner
    if not isinstance(q, mir.QuantizeOp) or not _is_quant(q) or sole_user(q.result) is not dq:
        return False
    src = q.input.owner
    return isinstance(src, Operation) and (src.has_trait(Elementwise) or _is_quant(src))


def _elementwise_cone(
    top: Operation,
) -> tuple[list[Operation], list[mir.DequantizeOp], dict[SSAValue, np.ndarray]] | None:
    """The ops computing ``top``'s operand elementwise from one 8-bit tensor, producers
    first, and a dequantize of that tensor: every op elementwise (a per-tensor quantize or
    dequantize counts) with one result of the tensor's shape that only the chain reads;
    the chain starts at dequantizes of the one tensor (per tensor, constant parameters)
    and at constants of one value, dequantized or not (``_splat``). None for anything
    else. Returns the chain, its dequantizes of the tensor and the values of the splats
    it reads. A dequantize the chain could go on through (``_inner``) starts it where
    going on through it finds no such chain (a GELU's input, the quantized sum of a
    matmul and its bias)."""
    root = top.operands[0]
    shape = _type(root).shape
    chain: list[Operation] = []
    leaves: list[mir.DequantizeOp] = []
    splats: dict[SSAValue, np.ndarray] = {}
    inside = {id(top)}

    def start_at(dq: mir.DequantizeOp) -> bool:
        if not _is_quant(dq) or _type(dq.input).dtype not in _INPUT_TYPES:
            return False
        if leaves and leaves[0].input is not dq.input:
            return False  # a function of two tensors
        if _type(dq.result).shape != shape:
            return False
        leaves.append(dq)
        inside.add(id(dq))
        return True

    def through(op: Operation) -> bool:
        elementwise = op.has_trait(Elementwise) or _is_quant(op)
        if not elementwise or len(op.results) != 1 or _type(op.results[0]).shape != shape:
            return False
        if len(chain) == TABLE_REACH:
            return False
        chain.append(op)
        inside.add(id(op))
        return all(reach(v) for v in op.operands)

    def reach(v: SSAValue) -> bool:
        op = v.owner
        if not isinstance(op, Operation) or id(op) in inside:
            return True
        if isinstance(op, mir.ConstantOp) or (
            isinstance(op, mir.DequantizeOp) and isinstance(op.input.owner, mir.ConstantOp)
        ):
            arr = _splat(v)
            if arr is None:
                return False  # a vector of values: not one tensor's function
            splats[v] = arr
            return True
        if isinstance(op, mir.DequantizeOp):
            if _inner(op):
                kept = (len(chain), len(leaves), set(inside))
                if through(op):
                    return True
                del chain[kept[0] :], leaves[kept[1] :]
                inside.intersection_update(kept[2])
            return start_at(op)
        return through(op)

    if not reach(root) or not leaves:
        return None
    # Every result the chain computes is read by the chain alone (or, the last, by top).
    for op in chain:
        if any(id(u.operation) not in inside for u in op.results[0].uses):
            return None
    return _producers_first(chain), leaves, splats


def _producers_first(ops: list[Operation]) -> list[Operation]:
    """``ops`` with each producer before its readers (a post-order walk from the readers
    of none of them; a scan of the block would cost a block per chain)."""
    members = {id(o) for o in ops}
    read = {id(v.owner) for o in ops for v in o.operands if id(v.owner) in members}
    out: list[Operation] = []
    seen: set[int] = set()

    def visit(op: Operation) -> None:
        seen.add(id(op))
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and id(owner) in members and id(owner) not in seen:
                visit(owner)
        out.append(op)

    for op in ops:
        if id(op) not in read and id(op) not in seen:
            visit(op)
    return out


def tabulate_elementwise(block: Block) -> None:
    """Every quantize(f(dequantize(x))) of ``block``, ``f`` elementwise and x one 8-bit
    tensor, as a gather from f's 256 results: one op, as onnxruntime's QLinearSigmoid and
    QLinearLeakyRelu lookup tables, for any chain (a SiLU with the quantize between its
    two ops included). The table is the reference executor's chain at every value of x,
    so the gather gives its integers exactly; an i8 x indexes from the end when negative,
    so the table starts at 0. Last quantize first: the longest chain is taken before a
    quantize inside it makes it a function of two tensors. The chain's ops are left for
    the caller to erase."""
    copies = _TableOps()
    try:
        op = block.last_op
        while op is not None:
            above = op.prev_op
            if isinstance(op, mir.QuantizeOp) and op.result.first_use is not None:
                _tabulate_one(op, copies)
            op = above
    finally:
        copies.release()


def _tabulate_one(op: mir.QuantizeOp, copies: _TableOps) -> None:
    if _type(op.result).dtype not in _INPUT_TYPES or _qparams(op) is None:
        return
    cone = _elementwise_cone(op)
    if cone is None:
        return
    chain, leaves, splats = cone
    x = leaves[0].input
    table = _tabulate([*leaves, *chain, op], x, splats, copies)
    if table is None:
        return
    lo, hi = _type(x).dtype.int_range
    readers = [u.operation for u in op.result.uses]
    if _type(x) == _type(op.result) and np.array_equal(table, np.arange(lo, hi + 1)):
        op.result.replace_all_uses_with(x)  # quantize(dequantize(x)) of x's parameters
        note_changed(*readers)
        _erase(op)
        return
    constant = mir.ConstantOp(np.roll(table, lo))  # index v of x holds f(v), v < 0 wrapping
    gather = mir.GatherOp(constant.result, x, 0)
    constant.location = gather.location = op.location
    Rewriter.insert_op([constant, gather], InsertPoint.before(op))
    op.result.replace_all_uses_with(gather.result)
    note_changed(constant, gather, *readers)
    _erase(op)


def look_up_in_integer_ops(block: Block) -> None:
    """Every table lookup (``tabulate_elementwise``'s gather) of the requantised result of
    an integer matmul or conv that nothing else reads, done by the op itself (its
    ``table``): a quantised conv and the activation or requantisation after it as one
    op, with the same integers -- onnxruntime's QLinearConv and QLinearSigmoid, say, in
    one pass over the result."""
    for gather in [o for o in block.ops if isinstance(o, mir.GatherOp)]:
        table, src = gather.operands
        const = table.owner
        if not isinstance(const, mir.ConstantOp) or gather.props().int("axis") != 0:
            continue
        if not isinstance(src, OpResult) or not isinstance(src.op, mir.IntegerLinearOp):
            continue
        linear = src.op
        p = linear.props()
        if p.opt_float("out_scale") is None or p.get("table") is not None:
            continue
        if sole_user(src) is not gather or _type(table) != TensorType([256], _type(src).dtype):
            continue
        new = type(linear).create(
            operands=list(linear.operands),
            result_types=[_type(gather.results[0])],
            properties={**linear.properties, "table": const.value},
            attributes=dict(linear.attributes),
        )
        new.location = linear.location
        readers = [u.operation for u in gather.results[0].uses]
        Rewriter.insert_op(new, InsertPoint.before(gather))
        gather.results[0].replace_all_uses_with(new.results[0])
        note_changed(new, *readers)
        _erase(gather)
        _erase(linear)
        if const.result.first_use is None:
            _erase(const)


class _TableOps:
    """The copies of chain ops that ``_tabulate`` evaluates, one per kind, operand and
    result types, properties and attributes: all the reference executor reads of an op
    (its operands' values come in as arguments). A model's chains repeat a few such ops
    (a SiLU's dequantize, sigmoid, mul and quantize differ in their parameters, which are
    operands), so most tables reuse copies made for earlier ones."""

    def __init__(self) -> None:
        self.made: dict[tuple[object, ...], Operation] = {}

    def of(self, op: Operation, types: list[TensorType], result: TensorType) -> Operation:
        key = (
            type(op), tuple(types), result,
            tuple(op.properties.items()), tuple(op.attributes.items()),
        )  # fmt: skip
        copy = self.made.get(key)
        if copy is None:
            # The copy reads arguments of a scratch block: the executor takes the values
            # from its arguments, and only the operand types from the IR.
            copy = self.made[key] = type(op).create(
                operands=Block(arg_types=types).args,
                result_types=[result],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
        return copy

    def release(self) -> None:
        for copy in reversed(self.made.values()):
            copy.drop_all_references()
        self.made.clear()


def _tabulate(
    ops: list[Operation], x: SSAValue, splats: dict[SSAValue, np.ndarray], copies: _TableOps
) -> np.ndarray | None:
    """``ops`` (producers first) evaluated by the reference executor with the 8-bit ``x``
    set to each value of its type in turn: copies of them of shape [1, .., 1, 256].
    ``splats``: the values of the splats the chain reads (``_elementwise_cone``'s); the
    leaves' and the last quantize's parameters are read here."""
    dtype = _type(x).dtype
    lo, hi = dtype.int_range
    rank = max(_type(x).rank, 1)
    shape = (*([1] * (rank - 1)), hi - lo + 1)
    values = dict(splats)
    values[x] = np.arange(lo, hi + 1).astype(dtype.numpy).reshape(shape)
    for op in ops:
        args: list[np.ndarray] = []
        for v in op.operands:
            arr = values.get(v)
            if arr is None:
                arr = _splat(v)
                assert arr is not None  # the leaves' and the last quantize's parameters
            args.append(arr)
        types = [_type(v).with_shape(a.shape) for v, a in zip(op.operands, args, strict=True)]
        copy = copies.of(op, types, _type(op.results[0]).with_shape(shape))
        result = evaluate(copy, args)
        if result is None:
            return None
        values[op.results[0]] = result[0]
    return values[ops[-1].results[0]].reshape(-1)


class Requantize(RewritePattern):
    """quantize(integer op) -> the integer op with an output scale."""

    roots = (mir.QuantizeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.QuantizeOp, rewriter: PatternRewriter) -> None:
        src = op.input
        if not isinstance(src, OpResult) or not isinstance(src.op, mir.IntegerLinearOp):
            return
        linear = src.op
        p = linear.props()
        if p.opt_float("out_scale") is not None or sole_user(src) is not op:
            return  # another reader needs the f32 values
        params = _qparams(op)
        if params is None or params[0] not in _INPUT_TYPES:
            return
        if _type(op.scale).dtype is not DType.F32:
            return
        out, out_scale, zero = params
        common: dict[str, Any] = {
            "input_zero_point": p.int("input_zero_point"),
            "activation": p.enum("activation").value,
            "out_scale": out_scale,
            "out_zero_point": zero,
            "out_dtype": out,
        }
        if isinstance(linear, mir.IntegerConvOp):
            new: Operation = mir.IntegerConvOp(
                linear.input, linear.weight, linear.scale, linear.bias,
                strides=p.ints("strides"), pads=p.ints("pads"), dilations=p.ints("dilations"),
                groups=p.int("groups"), **common,
            )  # fmt: skip
        else:
            new = mir.IntegerMatmulOp(
                linear.input, linear.weight, linear.scale, linear.bias,
                weight_zero_point=p.int("weight_zero_point"), **common,
            )  # fmt: skip
        new.location = linear.location
        rewriter.insert(new, InsertPoint.before(op))
        rewriter.replace(op, [], [new.results[0]])
        rewriter.erase(linear)


def _erasable(op: Operation) -> bool:
    """What a rewrite may leave unused and this pass then erases: pure ops but the
    graph's signature (inputs, params)."""
    return op.has_trait(Pure) and not isinstance(op, mir.InputOp | mir.ParamOp)


def _erase(op: Operation) -> None:
    note_removed(op)
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class QuantToIntegerPass(ModulePass):
    """Quantised matmuls/convs as integer kernels (targets claiming them), requantised
    where a quantize reads them."""

    name = "quant-to-integer"
    REPORTS_CHANGES: ClassVar[bool] = True
    ACTS_ON: ClassVar[tuple[type[Operation], ...]] = (mir.DequantizeOp,)

    target: str = "cpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = get_target(self.target)
        if not target.runs_integer_kernels:
            return
        patterns: list[RewritePattern] = [
            TransposedWeight(), IntegerConv(), IntegerMatmul(), Requantize(),
            IntegerDataMovement(),
        ]  # fmt: skip
        if target.claims_op(mir.QuantizedAddOp.name):
            patterns.append(QuantizedAdd())
        if target.claims_op(mir.QuantizedAvgPoolOp.name):
            patterns.append(QuantizedAvgPool())
        if target.claims_op(mir.QuantizedSoftmaxOp.name):
            patterns.append(QuantizedSoftmax())
        for graph in mir_graphs(op, self.name):
            block = graph_block(graph)
            if not any(isinstance(o, self.ACTS_ON) for o in graph.walk()):
                continue  # nothing quantised (most models): no walk
            # What these rewrites leave unused goes; dead code that was there stays.
            dead = {id(o) for o in block.ops if all(r.first_use is None for r in o.results)}
            apply_greedily(graph.body, patterns, change_listener())
            if target.claims_op(mir.GatherOp.name):
                tabulate_elementwise(block)
            erase_unused(
                [o for o in block.ops if id(o) not in dead and _erasable(o)], _erase
            )  # fmt: skip
            if target.claims_op(mir.GatherOp.name):  # the tabulated chains' ops are gone
                look_up_in_integer_ops(block)
