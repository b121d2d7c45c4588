"""Conversion patterns: rewrites that turn an op a target cannot run into ops it can.

Each pattern is an xDSL rewrite pattern on one op kind with a dispatch ``path``:
- ``common-ir``: a *logical kernel* lowered to its definition in primitive ops (layer
  norm as mean/sub/mul/rsqrt, attention as matmul/softmax/matmul, ...). The kernel
  dispatch policy controls these (``native-only`` forbids them, ``common-ir`` applies
  them even to claimed ops);
- ``rewritten``: everything else: fused ops decomposed back into their primitive chain
  (exactly the chain the reference executor defines them by), elementwise regions
  unfused, and ops rewritten into equivalent forms a target supports (a reduction over
  any axes as a transpose plus a last-axis reduction, erf as a polynomial).

Targets list the patterns they use (``Target.patterns``); ``legalize`` applies them to
illegal ops only. A pattern that cannot handle a particular op (say, symbolic dims
where it needs sizes) leaves it alone, and the op is reported as unsupported.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, cast

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from rlx_compile.builder import UNROLL_MAX_ITERATIONS, GraphBuilder, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import MaskKind
from rlx_compile.dialects.traits import Decomposable, decompose, is_fused
from rlx_compile.dialects.types import DType
from rlx_compile.folding import DEFAULT_MAX_ELEMENTS, FoldingBuilder
from rlx_compile.interpreter.eager import batch_norm_scale_shift
from rlx_compile.interpreter.recurrent import Direction, Layer, operands_by_name, run_unrolled
from rlx_compile.legalization.base import COMMON_IR, ConversionPattern
from rlx_compile.legalization.ml import ML_PATTERNS
from rlx_compile.legalization.quant import QUANT_PATTERNS


def _static(shape: Sequence[object]) -> bool:
    return all(isinstance(d, int) for d in shape)


def _scalar(b: GraphBuilder, value: float, like: SSAValue) -> SSAValue:
    return b.scalar_like(value, like)


# =====================================================================================
# Fused ops back to their primitive chains (each op's decomposition)
# =====================================================================================


class Unfuse(ConversionPattern):
    """A fused op back to the primitive chain it stands for: the op's own
    ``decompose`` (the ``Fused`` trait), which the reference executor's kernel for the
    op is tested against."""

    summary = "the op's decomposition"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not is_fused(op):
            return
        b, ops = self.builder(op)
        self.commit(rewriter, op, ops, decompose(op, b))


class UnfuseElementwiseRegion(ConversionPattern):
    summary = "the region's body, op by op"
    roots: ClassVar[tuple[type[Operation], ...]] = (mir.ElementwiseRegionOp,)
    """The ops it rewrites (``run_patterns`` visits only these)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ElementwiseRegionOp, rewriter: PatternRewriter) -> None:
        block = op.body.block
        term = block.last_op
        assert isinstance(term, mir.YieldOp)
        result = term.values[0]
        rewriter.erase(term)
        rewriter.inline_block(block, InsertPoint.before(op), list(op.inputs))
        rewriter.replace(op, [], [result])


UNFUSE_PATTERNS: tuple[type[ConversionPattern], ...] = (Unfuse, UnfuseElementwiseRegion)


# =====================================================================================
# Logical kernels lowered to common IR
# =====================================================================================


def _merge_tail(b: GraphBuilder, x: SSAValue, axis: int) -> tuple[SSAValue, bool] | None:
    """``x`` with dims ``axis..`` merged into one last dim (None if they are symbolic)."""
    shape = type_of(x).shape
    tail = shape[axis:]
    if len(tail) == 1:
        return x, False
    if not _static(tail):
        return None
    return b.reshape(x, (*shape[:axis], math.prod(int(d) for d in tail))), True


def _normalise(
    b: GraphBuilder, x: SSAValue, axis: int, eps: float, centred: bool
) -> SSAValue | None:
    """(x - mean) · rsqrt(var + eps) (layer norm) or x · rsqrt(mean(x²) + eps) (RMS norm)
    over dims ``axis..``, without the affine part."""
    merged = _merge_tail(b, x, axis)
    if merged is None:
        return None
    xr, reshaped = merged
    last = type_of(xr).rank - 1
    if centred:
        xr = b.sub(xr, b.mean(xr, last, keepdims=True))
    ms = b.mean(b.mul(xr, xr), last, keepdims=True)
    y = b.mul(xr, b.rsqrt(b.add(ms, _scalar(b, eps, xr))))
    return b.reshape(y, type_of(x).shape) if reshaped else y


class _LowerNorm(ConversionPattern):
    path = COMMON_IR
    centred: ClassVar[bool]

    def lower(self, op: mir.NormOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        y = _normalise(b, op.input, p.int("axis"), p.float("epsilon"), self.centred)
        if y is None:
            return
        y = b.mul(y, op.scale)
        if op.bias is not None:
            y = b.add(y, op.bias)
        self.commit(rewriter, op, ops, [y])


class LowerLayerNorm(_LowerNorm):
    summary = "mean, sub, mul, rsqrt chain"
    centred = True

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.LayerNormOp, rewriter: PatternRewriter) -> None:
        self.lower(op, rewriter)


class LowerRmsNorm(_LowerNorm):
    summary = "mul, mean, rsqrt chain"
    centred = False

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.RmsNormOp, rewriter: PatternRewriter) -> None:
        self.lower(op, rewriter)


class LowerGroupNorm(ConversionPattern):
    path = COMMON_IR
    summary = "reshape to groups, layer norm, per-channel affine"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.GroupNormOp, rewriter: PatternRewriter) -> None:
        shape = type_of(op.input).shape
        if not _static(shape[1:]):
            return
        p = op.props()
        groups = p.int("groups")
        b, ops = self.builder(op)
        per_group = math.prod(int(d) for d in shape[1:]) // groups
        grouped = b.reshape(op.input, (shape[0], groups, per_group))
        one = _scalar(b, 1.0, grouped)
        normed = b.layer_norm(grouped, one, axis=2, eps=p.float("epsilon"))
        y = b.reshape(normed, shape)
        y = b.add(b.mul(y, b.channel_view(op.scale, len(shape))),
                  b.channel_view(op.bias, len(shape)))  # fmt: skip
        self.commit(rewriter, op, ops, [y])


class LowerBatchNorm(ConversionPattern):
    path = COMMON_IR
    summary = "x * scale' + shift' with per-channel vectors"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.BatchNormOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        rank = type_of(op.input).rank
        eps = op.props().float("epsilon")
        s, shift = batch_norm_scale_shift(b, eps, op.scale, op.bias, op.mean, op.variance)
        y = b.add(b.mul(op.input, b.channel_view(s, rank)), b.channel_view(shift, rank))
        self.commit(rewriter, op, ops, [y])


def _repeat_heads(b: GraphBuilder, x: SSAValue, heads: int) -> SSAValue:
    """[B, H_kv, S, D] -> [B, heads, S, D], query head h reading kv head h // (heads/H_kv)."""
    bsz, kv, seq, d = type_of(x).shape
    assert isinstance(kv, int)
    if kv == heads:
        return x
    group = heads // kv
    x = b.expand(b.reshape(x, (bsz, kv, 1, seq, d)), (bsz, kv, group, seq, d))
    return b.reshape(x, (bsz, heads, seq, d))


class LowerAttention(ConversionPattern):
    path = COMMON_IR
    summary = "q·kᵀ·scale, mask, softmax, ·v"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.AttentionOp, rewriter: PatternRewriter) -> None:
        q_t, k_t = type_of(op.query), type_of(op.key)
        sq, sk = q_t.shape[2], k_t.shape[2]
        p = op.props()
        kind: MaskKind = p.enum("mask_kind")
        if not isinstance(q_t.shape[1], int) or (
            kind is MaskKind.CAUSAL and not (isinstance(sq, int) and isinstance(sk, int))
        ):
            return
        b, ops = self.builder(op)
        heads = q_t.shape[1]
        k = _repeat_heads(b, op.key, heads)
        v = _repeat_heads(b, op.value, heads)
        d = q_t.shape[-1]
        assert isinstance(d, int)
        scale = p.opt_float("scale")
        scores = b.matmul(op.query, b.transpose(k, (0, 1, 3, 2)))
        scores = b.mul(scores, _scalar(b, 1.0 / math.sqrt(d) if scale is None else scale, scores))
        softcap = p.opt_float("softcap")
        if softcap is not None:
            cap = _scalar(b, softcap, scores)
            scores = b.mul(b.tanh(b.div(scores, cap)), cap)
        if kind is MaskKind.CAUSAL:
            assert isinstance(sq, int) and isinstance(sk, int)
            allowed = b.constant(np.tril(np.ones((sq, sk), dtype=bool)), "bool")
            scores = b.where(allowed, scores, _scalar(b, -np.inf, scores))
        elif op.mask is not None:
            if type_of(op.mask).dtype.is_bool:
                scores = b.where(op.mask, scores, _scalar(b, -np.inf, scores))
            else:
                scores = b.add(scores, op.mask)
        probs = b.softmax(scores, -1)
        if p.flag("zero_nan"):
            probs = b.where(b.compare("ne", probs, probs), _scalar(b, 0.0, probs), probs)
        self.commit(rewriter, op, ops, [b.matmul(probs, v)])


class LowerRope(ConversionPattern):
    path = COMMON_IR
    summary = "narrow pairs, x1·cos - x2·sin | x2·cos + x1·sin, concat"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.RopeOp, rewriter: PatternRewriter) -> None:
        shape = type_of(op.input).shape
        d = shape[-1]
        assert isinstance(d, int)
        p = op.props()
        r = p.opt_int("rotary_dim") or d
        half = r // 2
        b, ops = self.builder(op)
        x = op.input
        if p.flag("interleaved"):
            pairs = b.reshape(b.narrow(x, -1, 0, r) if r < d else x, (*shape[:-1], half, 2))
            x1 = b.reshape(b.narrow(pairs, -1, 0, 1), (*shape[:-1], half))
            x2 = b.reshape(b.narrow(pairs, -1, 1, 1), (*shape[:-1], half))
        else:
            x1, x2 = b.narrow(x, -1, 0, half), b.narrow(x, -1, half, half)
        o1 = b.sub(b.mul(x1, op.cos), b.mul(x2, op.sin))
        o2 = b.add(b.mul(x2, op.cos), b.mul(x1, op.sin))
        if p.flag("interleaved"):
            column = (*shape[:-1], half, 1)
            both = b.concat([b.reshape(o1, column), b.reshape(o2, column)], -1)
            rotated = b.reshape(both, (*shape[:-1], r))
        else:
            rotated = b.concat([o1, o2], -1)
        if r < d:
            rotated = b.concat([rotated, b.narrow(x, -1, r, d - r)], -1)
        self.commit(rewriter, op, ops, [rotated])


class LowerGelu(ConversionPattern):
    path = COMMON_IR
    summary = "0.5·x·(1 + erf(x/√2)), or x·sigmoid(2u) for the tanh form"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.GeluOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x = op.input
        if op.props().enum("approximate").value == "tanh":
            cube = b.mul(b.mul(x, x), x)
            inner = b.mul(b.add(x, b.mul(cube, _scalar(b, 0.044715, x))),
                          _scalar(b, math.sqrt(2.0 / math.pi), x))  # fmt: skip
            y = b.mul(x, b.sigmoid(b.mul(inner, _scalar(b, 2.0, x))))
        else:
            erf = b.erf(b.mul(x, _scalar(b, 1.0 / math.sqrt(2.0), x)))
            y = b.mul(b.mul(x, _scalar(b, 0.5, x)), b.add(erf, _scalar(b, 1.0, x)))
        self.commit(rewriter, op, ops, [y])


class LowerSilu(ConversionPattern):
    path = COMMON_IR
    summary = "x · sigmoid(x)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.SiluOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        self.commit(rewriter, op, ops, [b.mul(op.input, b.sigmoid(op.input))])


class LowerClip(ConversionPattern):
    path = COMMON_IR
    summary = "min(max(x, lo), hi)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ClipOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        lo, hi = _scalar(b, p.float("min"), op.input), _scalar(b, p.float("max"), op.input)
        self.commit(rewriter, op, ops, [b.minimum(b.maximum(op.input, lo), hi)])


def _hard_sigmoid(b: GraphBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    y = b.add(b.mul(x, _scalar(b, alpha, x)), _scalar(b, beta, x))
    return b.maximum(b.minimum(y, _scalar(b, 1.0, x)), _scalar(b, 0.0, x))


class LowerHardSigmoid(ConversionPattern):
    path = COMMON_IR
    summary = "max(min(alpha·x + beta, 1), 0)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.HardSigmoidOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        self.commit(
            rewriter, op, ops, [_hard_sigmoid(b, op.input, p.float("alpha"), p.float("beta"))]
        )


class LowerHardSwish(ConversionPattern):
    path = COMMON_IR
    summary = "x · hard_sigmoid(x; 1/6, 1/2)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.HardSwishOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        self.commit(rewriter, op, ops, [b.mul(op.input, _hard_sigmoid(b, op.input, 1 / 6, 0.5))])


def prelu_chain(b: GraphBuilder, x: SSAValue, slope: SSAValue) -> SSAValue:
    """ONNX PRelu in primitives, any numeric type: where(x < 0, x·slope, x)."""
    return b.where(b.compare("lt", x, 0), b.mul(x, slope), x)


class LowerLeakyRelu(ConversionPattern):
    path = COMMON_IR
    summary = "where(x < 0, alpha·x, x)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.LeakyReluOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x = op.input
        scaled = b.mul(x, _scalar(b, op.props().float("alpha"), x))
        self.commit(rewriter, op, ops, [b.where(b.compare("lt", x, 0), scaled, x)])


class LowerPRelu(ConversionPattern):
    path = COMMON_IR
    summary = "where(x < 0, x·slope, x)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.PReluOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        self.commit(rewriter, op, ops, [prelu_chain(b, op.lhs, op.rhs)])


class LowerVariadic(ConversionPattern):
    path = COMMON_IR
    summary = "its binary op, left to right"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.VariadicOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        self.commit(rewriter, op, ops, [b.variadic_chain(type(op), op.operands)])


class LowerElu(ConversionPattern):
    path = COMMON_IR
    summary = "where(x < 0, (exp(x) - 1)·alpha, x)·scale"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.EluOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x, p = op.input, op.props()
        alpha, scale = p.float("alpha"), p.float("scale")
        neg = b.sub(b.exp(x), 1)
        if alpha != 1.0:
            neg = b.mul(neg, alpha)
        y = b.where(b.compare("lt", x, 0), neg, x)
        self.commit(rewriter, op, ops, [y if scale == 1.0 else b.mul(y, scale)])


class LowerSwish(ConversionPattern):
    path = COMMON_IR
    summary = "x · sigmoid(x·alpha)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.SwishOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x = op.input
        self.commit(rewriter, op, ops, [b.mul(x, b.sigmoid(b.mul(x, op.props().float("alpha"))))])


class LowerThresholdedRelu(ConversionPattern):
    path = COMMON_IR
    summary = "where(x > alpha, x, 0)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ThresholdedReluOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x, alpha = op.input, op.props().float("alpha")
        self.commit(rewriter, op, ops, [b.where(b.compare("gt", x, alpha), x, 0)])


class LowerSoftsign(ConversionPattern):
    path = COMMON_IR
    summary = "x / (|x| + 1)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.SoftsignOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        self.commit(rewriter, op, ops, [b.div(op.input, b.add(b.abs(op.input), 1))])


class LowerToChain(ConversionPattern):
    """An op ONNX names as one node and RLX's primitives spell as a short chain (its
    ``decompose``), back to that chain; subclasses name the ops (``roots``) and say what
    the chain is (``summary``)."""

    path = COMMON_IR
    roots: ClassVar[tuple[type[Operation], ...]] = ()
    """The ops it rewrites (``run_patterns`` visits only these)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.roots):
            return
        b, ops = self.builder(op)
        self.commit(rewriter, op, ops, cast(Decomposable, op).decompose(b))


class LowerReduceLogSumExp(LowerToChain):
    """Also the reductions ONNX names as one node (sum of squares, L2, L1, log-sum): each
    back to the chain it means."""

    summary = (
        "log(reduce_sum(exp(x - m))) + m, m the max over the axes (0 where infinite);"
        " reduce_sum of x·x or |x|, then sqrt or log, as the op means"
    )
    roots = (mir.ReduceLogSumExpOp, mir.ReduceChainOp)


class LowerGatherAxes(LowerToChain):
    summary = "one mir.gather per axis, in axis order"
    roots = (mir.GatherAxesOp,)


class LowerGatherElements(LowerToChain):
    summary = "one mir.gather from the flattened input at wrapped index · stride + offsets"
    roots = (mir.GatherElementsOp,)


class LowerLrn(ConversionPattern):
    path = COMMON_IR
    summary = "pad x² along channels, sum of size narrows, divide by (bias + alpha/size·sum)^beta"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.LrnOp, rewriter: PatternRewriter) -> None:
        x = op.input
        shape = type_of(x).shape
        if not isinstance(shape[1], int):
            return  # the channel count must be known to slice the windows
        b, ops = self.builder(op)
        p = op.props()
        size, channels, rank = p.int("size"), shape[1], len(shape)
        pads = [0] * (2 * rank)
        pads[1], pads[rank + 1] = (size - 1) // 2, size - 1 - (size - 1) // 2
        sq = b.pad(b.mul(x, x), pads)
        total = b.narrow(sq, 1, 0, channels)
        for j in range(1, size):
            total = b.add(total, b.narrow(sq, 1, j, channels))
        scaled = b.add(
            b.mul(total, _scalar(b, p.float("alpha") / size, x)), _scalar(b, p.float("bias"), x)
        )
        self.commit(rewriter, op, ops, [b.div(x, b.pow(scaled, _scalar(b, p.float("beta"), x)))])


class LowerConvTranspose(ConversionPattern):
    path = COMMON_IR
    summary = "zeros between input elements, the kernel flipped with its channels swapped, a conv"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ConvTransposeOp, rewriter: PatternRewriter) -> None:
        x_shape, w_shape = type_of(op.input).shape, type_of(op.weight).shape
        if not _static(x_shape):
            return  # zero insertion needs the spatial sizes
        b, ops = self.builder(op)
        p = op.props()
        k = len(x_shape) - 2
        strides, pads, dilations = p.ints("strides"), p.ints("pads"), p.ints("dilations")
        extra, groups = p.ints("output_padding"), p.int("groups")
        kernel = [int(d) for d in w_shape[2:]]
        c_in, c_out_g = int(w_shape[0]), int(w_shape[1])
        cin_g = c_in // groups
        # W [C_in, C_out/g, K] -> [g, C_in/g, C_out/g, K] -> [g, C_out/g, C_in/g, K]
        # -> [C_out, C_in/g, K], then flipped along K
        wt = b.reshape(op.weight, [groups, cin_g, c_out_g, *kernel])
        wt = b.transpose(wt, [0, 2, 1, *range(3, 3 + k)])
        wt = b.reshape(wt, [groups * c_out_g, cin_g, *kernel])
        wt = b.emit(mir.SliceOp(
            wt, [0, 0, *[d - 1 for d in kernel]], [1, 1, *([-1] * k)],
            [groups * c_out_g, cin_g, *kernel],
        )).results[0]  # fmt: skip
        y = _insert_zeros(b, op.input, strides)
        lo = [(kernel[i] - 1) * dilations[i] - pads[i] for i in range(k)]
        hi = [(kernel[i] - 1) * dilations[i] - pads[k + i] + extra[i] for i in range(k)]
        if any(v < 0 for v in lo + hi):  # a crop past the kernel's reach: slice it off
            ys = type_of(y).shape
            starts = [0, 0, *[max(-v, 0) for v in lo]]
            lengths = [
                ys[0],
                ys[1],
                *[ys[2 + i] - max(-lo[i], 0) - max(-hi[i], 0) for i in range(k)],
            ]
            y = b.emit(mir.SliceOp(y, starts, [1] * (2 + k), lengths)).results[0]
        conv_pads = [*[max(v, 0) for v in lo], *[max(v, 0) for v in hi]]
        y = b.conv(y, wt, strides=[1] * k, pads=conv_pads, dilations=dilations, groups=groups)
        if op.bias is not None:
            y = b.add(y, b.channel_view(op.bias, k + 2))
        self.commit(rewriter, op, ops, [y])


def _insert_zeros(b: GraphBuilder, x: SSAValue, strides: Sequence[int]) -> SSAValue:
    """Put s - 1 zeros between neighbours along every spatial dim (stride s)."""
    if all(s == 1 for s in strides):
        return x
    n, c, *spatial = type_of(x).shape
    k = len(spatial)
    # [N, C, H, W] -> [N, C, H, 1, W, 1] -> pad to [N, C, H, s, W, s] -> [N, C, H·s, W·s]
    y = b.reshape(x, [n, c, *[v for d in spatial for v in (d, 1)]])
    pads = [0] * (2 * (2 + 2 * k))
    for i, s in enumerate(strides):
        pads[len(pads) // 2 + 2 + 2 * i + 1] = s - 1
    y = b.reshape(b.pad(y, pads), [n, c, *[d * s for d, s in zip(spatial, strides, strict=True)]])
    lengths = [(d - 1) * s + 1 for d, s in zip(spatial, strides, strict=True)]
    return b.emit(mir.SliceOp(y, [0] * (2 + k), [1] * (2 + k), [n, c, *lengths])).results[0]


class LowerRecurrent(ConversionPattern):
    path = COMMON_IR
    summary = (
        f"the steps, unrolled over at most {UNROLL_MAX_ITERATIONS} static steps, else in a "
        "mir.loop per direction"
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mir.RecurrentOp):
            return
        # Folding as the cleanup after import would (the steps come after it): the
        # weights' transposes and blocks, when they are constants, are constants.
        ops: list[Operation] = []
        b = FoldingBuilder(ops.append, op.location, DEFAULT_MAX_ELEMENTS)
        layer = Layer(op, operands_by_name(op, list(op.operands)), b)
        wanted = [bool(r.uses) for r in op.results]
        if isinstance(layer.seq, int) and layer.seq <= UNROLL_MAX_ITERATIONS:
            results = run_unrolled(layer, layer.seq, wanted)
        else:
            results = _run_looped(layer, b, wanted)
        self.commit(rewriter, op, ops, results)


def _run_looped(
    layer: Layer[SSAValue], b: GraphBuilder, wanted: Sequence[bool]
) -> list[SSAValue | None]:
    """Each direction as one ``mir.loop`` over the steps (backwards for a reverse one),
    the step's projected input gathered at the step."""
    seq = layer.seq
    trips = b.dim(seq)
    ys: list[SSAValue] = []
    finals: list[list[SSAValue]] = [[] for _ in range(layer.op.STATES)]
    for d in layer.directions():

        def body(
            i: SSAValue, cond: SSAValue, carried: list[SSAValue], d: Direction[SSAValue] = d
        ) -> tuple[SSAValue, list[SSAValue], list[SSAValue]]:
            t = b.sub(b.sub(trips, 1), i) if d.backwards else i
            xt = b.gather(d.projected, t, 0)
            new, y = layer.advance(d.step, xt, carried, t, wanted[0])
            return cond, new, [] if y is None else [y]

        states, scanned = b.loop(trips, None, d.initial, body, scan_length=seq)
        if wanted[0]:
            (y,) = scanned
            if d.backwards:  # its outputs came last step first: put them in time order
                y = b.gather(y, b.sub(b.sub(trips, 1), b.iota(seq, DType.I64)), 0)
            ys.append(y)
        for k, state in enumerate(states):
            finals[k].append(state)
    return layer.results(ys, finals, wanted)


LOGICAL_KERNEL_PATTERNS: tuple[type[ConversionPattern], ...] = (
    LowerLayerNorm,
    LowerRmsNorm,
    LowerGroupNorm,
    LowerBatchNorm,
    LowerAttention,
    LowerRope,
    LowerGelu,
    LowerSilu,
    LowerClip,
    LowerHardSigmoid,
    LowerHardSwish,
    LowerLeakyRelu,
    LowerPRelu,
    LowerVariadic,
    LowerElu,
    LowerSwish,
    LowerThresholdedRelu,
    LowerSoftsign,
    LowerReduceLogSumExp,
    LowerGatherAxes,
    LowerGatherElements,
    LowerLrn,
    LowerConvTranspose,
    LowerRecurrent,
    *ML_PATTERNS,
    *QUANT_PATTERNS,
)


# =====================================================================================
# Equivalent forms for targets with narrower kernels
# =====================================================================================


class ReduceToLastAxis(ConversionPattern):
    summary = "transpose the reduced axes last, merge them, reduce the last axis"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ReduceOp, rewriter: PatternRewriter) -> None:
        x_t, out_t = type_of(op.input), type_of(op.result)
        axes = list(op.props().ints("axes"))
        rank = x_t.rank
        if axes == [rank - 1] or (rank == 0 and not axes):
            return
        b, ops = self.builder(op)
        if not axes:  # each element reduced on its own: itself, or its chain's value
            values = (
                op.decompose(b)
                if isinstance(op, mir.ReduceChainOp | mir.ReduceLogSumExpOp)
                else [op.input]
            )
            self.commit(rewriter, op, ops, values)
            return
        reduced = [x_t.shape[a] for a in axes]
        if len(axes) > 1 and not _static(reduced):
            return
        kept = [a for a in range(rank) if a not in axes]
        x = op.input
        if kept + axes != list(range(rank)):
            x = b.transpose(x, kept + axes)
        if len(axes) > 1:
            x = b.reshape(x, (*(x_t.shape[a] for a in kept), math.prod(int(d) for d in reduced)))
        y: SSAValue = b.emit(type(op)(x, [type_of(x).rank - 1])).results[0]
        if type_of(y).shape != out_t.shape:
            y = b.reshape(y, out_t.shape)
        self.commit(rewriter, op, ops, [y])


class AxisToLast(ConversionPattern):
    summary = "transpose the axis last, apply, transpose back"

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: mir.SoftmaxOp | mir.LogSoftmaxOp | mir.ArgMaxOp | mir.ArgMinOp,
        rewriter: PatternRewriter,
    ) -> None:  # fmt: skip
        rank = type_of(op.input).rank
        axis = op.props().int("axis")
        if axis == rank - 1:
            return
        b, ops = self.builder(op)
        perm = [a for a in range(rank) if a != axis] + [axis]
        moved = b.transpose(op.input, perm)
        y: SSAValue
        if isinstance(op, mir.ArgReduceOp):
            keep = op.props().flag("keepdims")
            y = b.emit(type(op)(moved, rank - 1, keep)).results[0]
        else:
            y = b.emit(type(op)(moved, rank - 1)).results[0]
            keep = True
        if keep:
            y = b.transpose(y, [perm.index(a) for a in range(rank)])
        self.commit(rewriter, op, ops, [y])


class SliceAsNarrows(ConversionPattern):
    summary = "a unit-step slice as one narrow per axis it takes part of"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.SliceOp, rewriter: PatternRewriter) -> None:
        shape, out = type_of(op.input).shape, type_of(op.result).shape
        starts, steps = op.props().ints("starts"), op.props().ints("steps")
        if any(step != 1 and n != 1 for step, n in zip(steps, out, strict=True)):
            return
        b, ops = self.builder(op)
        y: SSAValue = op.input
        for axis, (start, n, d) in enumerate(zip(starts, out, shape, strict=True)):
            if start != 0 or n != d:
                y = b.narrow(y, axis, start, n)
        self.commit(rewriter, op, ops, [y])


class NormToLastAxis(ConversionPattern):
    summary = "merge the normalised dims into the last one"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.NormOp, rewriter: PatternRewriter) -> None:
        shape = type_of(op.input).shape
        axis = op.props().int("axis")
        tail = shape[axis:]
        if len(tail) == 1 or not _static(tail):
            return
        b, ops = self.builder(op)
        n = math.prod(int(d) for d in tail)

        def flat(v: SSAValue) -> SSAValue:
            if type_of(v).shape != tail:
                v = b.expand(v, tail)
            return b.reshape(v, (n,))

        x = b.reshape(op.input, (*shape[:axis], n))
        eps = op.props().float("epsilon")
        norm = b.emit(
            type(op)(
                x,
                flat(op.scale),
                None if op.bias is None else flat(op.bias),
                axis=axis,
                epsilon=eps,
            )
        )
        self.commit(rewriter, op, ops, [b.reshape(norm.results[0], shape)])


# Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7 over the whole real line.
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


class ErfPolynomial(ConversionPattern):
    summary = "Abramowitz-Stegun 7.1.26 polynomial (|error| <= 1.5e-7)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ErfOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x = op.input
        ax = b.abs(x)
        t = b.unary(mir.ReciprocalOp, b.add(b.mul(ax, _scalar(b, _ERF_P, x)), _scalar(b, 1.0, x)))
        poly = _scalar(b, _ERF_A[-1], x)
        for a in reversed(_ERF_A[:-1]):
            poly = b.add(b.mul(poly, t), _scalar(b, a, x))
        tail = b.mul(b.mul(poly, t), b.exp(b.neg(b.mul(x, x))))
        y = b.mul(b.unary(mir.SignOp, x), b.sub(_scalar(b, 1.0, x), tail))
        self.commit(rewriter, op, ops, [y])


NARROW_KERNEL_PATTERNS: tuple[type[ConversionPattern], ...] = (
    ReduceToLastAxis,
    AxisToLast,
    NormToLastAxis,
    ErfPolynomial,
    SliceAsNarrows,
)

ALL_PATTERNS: tuple[type[ConversionPattern], ...] = (
    *UNFUSE_PATTERNS,
    *LOGICAL_KERNEL_PATTERNS,
    *NARROW_KERNEL_PATTERNS,
)
