"""``quant-to-integer{target=T}``: quantised matmuls and convolutions as integer kernels.

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
  operand dequantized per column (or per tensor: an attention's two activations) into
  ``mir.integer_matmul``;
- ``quantize(integer op)`` (per tensor, the integer op's only reader) into the integer
  op producing the quantised values directly: requantisation.

The integer ops accumulate exactly, where the dequantised form rounds every product and
sum in f32: results differ by that rounding (and a value on a quantisation step's edge
may round to the other step). The f32 form stays the reference they are checked against.
Ops left unused are erased.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from rlx_compile.dialects import mir
from rlx_compile.dialects.common import Activation
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.fusion.base import sole_user
from rlx_compile.ir import erase_unused, graph_block, mir_graphs
from rlx_compile.targets import get_target

_INPUT_TYPES = (DType.I8, DType.U8)


def _constant(v: SSAValue | None) -> np.ndarray | None:
    if isinstance(v, OpResult) and isinstance(v.op, mir.ConstantOp):
        return v.op.to_numpy()
    return None


def _type(v: SSAValue) -> TensorType:
    return cast(TensorType, v.type)


@dataclass
class _Input:
    """A per-tensor dequantized integer input: its integers, scale and zero point."""

    q: SSAValue
    scale: float
    zero_point: int


def _input(v: SSAValue) -> _Input | None:
    if not isinstance(v, OpResult) or not isinstance(v.op, mir.DequantizeOp):
        return None
    dq = v.op
    if dq.props().opt_int("axis") is not None or _type(dq.input).dtype not in _INPUT_TYPES:
        return None
    scale = _constant(dq.scale)
    if scale is None or scale.dtype != np.float32:
        return None
    zero = 0
    if dq.zero_point is not None:
        z = _constant(dq.zero_point)
        if z is None:
            return None
        zero = int(z.reshape(-1)[0])
    return _Input(dq.input, float(scale.reshape(-1)[0]), zero)


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
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mir.DenseOp):
            return
        fused = isinstance(op, mir.FusedMatmulBiasActOp)
        lhs, rhs, bias = mir.dense_operands(op)
        if _type(rhs).rank < 2 or _type(lhs).rank < 2:
            return
        x = _input(lhs)
        w = _weight(rhs, _type(rhs).rank - 1)
        if x is None or w is None or _type(op.result).dtype is not DType.F32:
            return
        if bias is not None and (_type(bias).dtype is not DType.F32 or _type(bias).rank != 1):
            return
        scale = _combined_scale(x, w[1])
        act = op.props().enum("activation") if fused else Activation.NONE
        separate = act in SEPARATE_ACTIVATIONS
        new = mir.IntegerMatmulOp(
            x.q, w[0], scale.result, bias, input_zero_point=x.zero_point,
            activation="none" if separate else act.value,
        )  # fmt: skip
        new.location = op.location
        if separate:
            _with_tail(rewriter, op, scale, new, None, act)
        else:
            _replace(rewriter, op, scale, new)


class Requantize(RewritePattern):
    """quantize(integer op) -> the integer op with an output scale."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.QuantizeOp, rewriter: PatternRewriter) -> None:
        src = op.input
        if not isinstance(src, OpResult) or not isinstance(src.op, mir.IntegerLinearOp):
            return
        linear = src.op
        p = linear.props()
        if p.opt_float("out_scale") is not None or sole_user(src) is not op:
            return  # another reader needs the f32 values
        out = _type(op.result).dtype
        if out not in _INPUT_TYPES or op.props().opt_int("axis") is not None:
            return
        scale = _constant(op.scale)
        if scale is None or scale.dtype != np.float32:
            return
        zero = 0
        if op.zero_point is not None:
            z = _constant(op.zero_point)
            if z is None:
                return
            zero = int(z.reshape(-1)[0])
        common = {
            "input_zero_point": p.int("input_zero_point"),
            "activation": p.enum("activation").value,
            "out_scale": float(scale.reshape(-1)[0]),
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
                linear.input, linear.weight, linear.scale, linear.bias, **common
            )
        new.location = linear.location
        rewriter.insert(new, InsertPoint.before(op))
        rewriter.replace(op, [], [new.results[0]])
        rewriter.erase(linear)


@dataclass(frozen=True)
class QuantToIntegerPass(ModulePass):
    """Quantised matmuls/convs as integer kernels (targets claiming them), requantised
    where a quantize reads them."""

    name = "quant-to-integer"

    target: str = "cpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = get_target(self.target)
        if not all(target.claims_op(o.name) for o in (mir.IntegerMatmulOp, mir.IntegerConvOp)):
            return
        for graph in mir_graphs(op, self.name):
            block = graph_block(graph)
            # What these rewrites leave unused goes; dead code that was there stays.
            before = {id(o) for o in block.ops if not all(r.first_use is None for r in o.results)}
            PatternRewriteWalker(
                GreedyRewritePatternApplier(
                    [IntegerConv(), IntegerMatmul(), Requantize()], dce_enabled=False
                ),
                apply_recursively=True,
            ).rewrite_region(graph.body)
            erase_unused(
                [
                    o for o in block.ops
                    if id(o) in before and isinstance(o, mir.DequantizeOp | mir.ConstantOp)
                ]
            )  # fmt: skip
