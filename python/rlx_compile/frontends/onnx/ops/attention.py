"""Transformer ops of recent opsets: Attention (23+), RotaryEmbedding (23), SwiGLU,
LinearAttention (27)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import Dim, DType
from rlx_compile.folding import constant_value
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    converter,
)
from rlx_compile.frontends.onnx.ops.control import (
    UNROLL_MAX_ITERATIONS,
    move_leading,
    trip_count_of,
)
from rlx_compile.frontends.onnx.ops.shape import reshape, select, stack


def _split_heads(ctx: NodeContext, x: SSAValue, heads: Dim) -> SSAValue:
    """[B, S, heads·D] -> [B, heads, S, D]."""
    b, s, hidden = type_of(x).shape
    if not isinstance(hidden, int) or hidden % heads:
        raise Unsupported(f"hidden size {hidden} does not split into {heads} heads")
    return ctx.b.transpose(reshape(ctx, x, [b, s, heads, hidden // heads]), [0, 2, 1, 3])


def _window_bias(
    q_len: int, kv_len: int, offset: int, causal: bool, left: int, right: int
) -> np.ndarray | None:
    """The additive bias of the causal frontier and the sliding window, both aligned so
    that query i sits at key position i + offset (offset = the past length)."""
    i = np.arange(q_len).reshape(q_len, 1) + offset
    j = np.arange(kv_len).reshape(1, kv_len)
    allowed = np.ones((q_len, kv_len), bool)
    if causal:
        allowed &= j <= i
    if left >= 0:
        allowed &= i - j <= left
    if right >= 0:
        allowed &= j - i <= right
    if allowed.all():
        return None
    return np.where(allowed, 0.0, -np.inf)


def _padded_window_bias(
    ctx: NodeContext,
    q: SSAValue,
    nonpad: SSAValue,
    q_len: int,
    kv_len: int,
    causal: bool,
    left: int,
    right: int,
) -> SSAValue:
    """The bias of an external KV cache [B, 1, q_len, kv_len]: batch b holds nonpad[b]
    valid keys, and its queries are the last q_len of them (offset nonpad[b] - q_len)."""
    b = ctx.b
    n = b.cast(nonpad, DType.I64) if type_of(nonpad).dtype is not DType.I64 else nonpad
    n = reshape(ctx, n, [type_of(n).shape[0], 1, 1, 1])
    j = ctx.constant(np.arange(kv_len, dtype=np.int64).reshape(1, 1, 1, kv_len))
    i = ctx.constant(np.arange(q_len, dtype=np.int64).reshape(1, 1, q_len, 1))
    pos = b.add(i, b.sub(n, q_len))  # each query's key position
    allowed = b.compare("lt", j, n)
    if causal:
        allowed = b.binary(mir.AndOp, allowed, b.compare("le", j, pos))
    if left >= 0:
        allowed = b.binary(mir.AndOp, allowed, b.compare("le", b.sub(pos, j), left))
    if right >= 0:
        allowed = b.binary(mir.AndOp, allowed, b.compare("le", b.sub(j, pos), right))
    return b.where(allowed, ctx.const_like(0.0, q), ctx.const_like(-math.inf, q))


@converter("Attention")
def attention(ctx: NodeContext) -> ConverterResult:
    q, k, v = ctx.x(0), ctx.x(1), ctx.x(2)
    mask, past_k, past_v = ctx.opt(3), ctx.opt(4), ctx.opt(5)
    nonpad = ctx.opt(6)
    dtype = type_of(q).dtype
    rank = type_of(q).rank
    q_heads, kv_heads = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    if rank == 3:
        if q_heads is None or kv_heads is None:
            raise Unsupported("3-D inputs need q_num_heads and kv_num_heads")
        q, k, v = (_split_heads(ctx, t, h) for t, h in ((q, q_heads), (k, kv_heads), (v, kv_heads)))
    elif rank != 4:
        raise Unsupported(f"rank-{rank} inputs")
    scale = ctx.attr("scale")
    softcap = ctx.attr("softcap", 0.0)
    causal = bool(ctx.attr("is_causal", 0))
    ctx.attr("softmax_precision")  # softmax runs in f32 or wider whatever the input type
    left, right = ctx.attr("left_window_size", -1), ctx.attr("right_window_size", -1)
    mode = ctx.check_attr("qk_matmul_output_mode", (0, 1, 2, 3), 0)
    if (past_k is None) != (past_v is None):
        raise Unsupported("past_key without past_value")
    past: Dim = 0
    if past_k is not None and past_v is not None:
        past = type_of(past_k).shape[2]
        k = ctx.b.concat([past_k, k], 2)
        v = ctx.b.concat([past_v, v], 2)
    present_k, present_v = k, v
    q_len, kv_len = type_of(q).shape[2], type_of(k).shape[2]
    if not isinstance(q_len, int) or not isinstance(kv_len, int) or not isinstance(past, int):
        raise Unsupported("symbolic sequence lengths")

    # Everything that masks scores becomes one additive bias [.., q_len, kv_len].
    bias: SSAValue | None = None
    if mask is not None:
        if type_of(mask).dtype is DType.BOOL:
            mask = ctx.b.where(mask, ctx.const_like(0.0, q), ctx.const_like(-np.inf, q))
        width = type_of(mask).shape[-1]
        if isinstance(width, int) and width < kv_len:
            mrank = type_of(mask).rank
            pads = [0] * (2 * mrank)
            pads[2 * mrank - 1] = kv_len - width
            mask = ctx.b.pad(mask, pads, value=-math.inf)
        bias = mask
    if nonpad is None:
        window = _window_bias(q_len, kv_len, past, causal, left, right)
        wbias = None if window is None else ctx.constant(window.astype(dtype.numpy))
    else:
        if past_k is not None:
            raise Unsupported("nonpad_kv_seqlen with past_key")
        wbias = _padded_window_bias(ctx, q, nonpad, q_len, kv_len, causal, left, right)
    if wbias is not None:
        bias = wbias if bias is None else ctx.b.add(bias, wbias)
    if mode == 0 and not ctx.output_used(3):
        kind = "explicit" if bias is not None else "none"
        op = mir.AttentionOp(q, k, v, bias, mask_kind=kind, scale=scale, softcap=softcap or None)
        y = _zero_dead_rows(ctx, ctx.b.emit(op).results[0], bias)
        qk_out = None
    else:
        y, qk_out = _spelled_out(ctx, q, k, v, bias, scale, softcap, mode)
    if rank == 3:
        b, _, s, _ = type_of(y).shape
        y = reshape(ctx, ctx.b.transpose(y, [0, 2, 1, 3]), [b, s, -1])
    return [y, present_k, present_v, qk_out]


def _zero_dead_rows(ctx: NodeContext, y: SSAValue, bias: SSAValue | None) -> SSAValue:
    """Rows whose every score is masked give 0 (ONNX), where softmax alone gives 0/0."""
    if bias is None:
        return y
    known = constant_value(bias)
    if known is not None and not np.isneginf(known.max(axis=-1)).any():
        return y
    row_max = ctx.b.reduce("max", bias, [type_of(bias).rank - 1], keepdims=True)
    return ctx.b.where(ctx.b.compare("eq", row_max, -math.inf), ctx.const_like(0.0, y), y)


def _spelled_out(
    ctx: NodeContext,
    q: SSAValue,
    k: SSAValue,
    v: SSAValue,
    bias: SSAValue | None,
    scale: float | None,
    softcap: float,
    mode: int,
) -> tuple[SSAValue, SSAValue]:
    """Attention as primitive ops, for when the scores are an output too: mode 0/1 the
    (soft-capped) scaled scores, 2 with the bias added, 3 the probabilities."""
    b = ctx.b
    heads, kv_heads = type_of(q).shape[1], type_of(k).shape[1]
    if heads != kv_heads:
        assert isinstance(heads, int) and isinstance(kv_heads, int)
        idx = ctx.constant(np.repeat(np.arange(kv_heads, dtype=np.int64), heads // kv_heads))
        k, v = b.gather(k, idx, 1), b.gather(v, idx, 1)
    d = type_of(q).shape[-1]
    s = (1.0 / math.sqrt(int(d))) if scale is None else scale
    scores = b.mul(b.matmul(q, b.transpose(k, [0, 1, 3, 2])), s)
    if softcap:
        scores = b.mul(b.tanh(b.div(scores, softcap)), softcap)
    biased = scores if bias is None else b.add(scores, bias)
    probs = _zero_dead_rows(ctx, b.softmax(biased, -1), bias)
    qk = {0: scores, 1: scores, 2: biased, 3: probs}[mode]
    return b.matmul(probs, v), qk


@converter("RotaryEmbedding")
def rotary_embedding(ctx: NodeContext) -> ConverterResult:
    x, cos, sin = ctx.x(0), ctx.x(1), ctx.x(2)
    interleaved = bool(ctx.attr("interleaved", 0))
    rotary_dim = ctx.attr("rotary_embedding_dim", 0) or None
    heads = ctx.attr("num_heads")
    shape = type_of(x).shape
    if ctx.has(3):
        pos = ctx.x(3)
        cos, sin = ctx.b.gather(cos, pos, 0), ctx.b.gather(sin, pos, 0)  # [B, S, r/2]
    b, r2 = type_of(cos).shape[0], type_of(cos).shape[-1]
    if len(shape) == 4:  # [B, H, S, D]: angles broadcast over the heads
        s = shape[2]
        cos, sin = (reshape(ctx, t, [b, 1, s, r2]) for t in (cos, sin))
        return ctx.b.emit(
            mir.RopeOp(x, cos, sin, rotary_dim=rotary_dim, interleaved=interleaved)
        ).results[0]
    if len(shape) != 3 or heads is None:
        raise Unsupported("3-D inputs need num_heads")
    bb, s, hidden = shape
    if not isinstance(hidden, int) or hidden % heads:
        raise Unsupported(f"hidden size {hidden} does not split into {heads} heads")
    x4 = reshape(ctx, x, [bb, s, heads, hidden // heads])  # [B, S, H, D]
    cos, sin = (reshape(ctx, t, [b, s, 1, r2]) for t in (cos, sin))
    y = ctx.b.emit(
        mir.RopeOp(x4, cos, sin, rotary_dim=rotary_dim, interleaved=interleaved)
    ).results[0]
    return reshape(ctx, y, list(shape))


@converter("SwiGLU")
def swiglu(ctx: NodeContext) -> ConverterResult:
    a, b = ctx.x(0), ctx.x(1)
    alpha = ctx.attr("alpha", 1.0)
    gate = ctx.b.silu(a) if alpha == 1.0 else ctx.b.mul(a, ctx.b.sigmoid(ctx.b.mul(a, alpha)))
    return ctx.b.mul(gate, b)


@converter("LinearAttention")
def linear_attention(ctx: NodeContext) -> ConverterResult:
    """The recurrence over the (static) token axis -- unrolled up to
    ``UNROLL_MAX_ITERATIONS`` tokens, one ``mir.loop`` beyond -- in f32 like ONNX's
    reference: S = exp(g)·S (gated), v = β·(v - Sᵀk) (delta), S += k ⊗ v, o = scale·qᵀS,
    each query head reading the state of its key/value head (GQA)."""
    b = ctx.b
    rule = ctx.check_attr("update_rule", ("linear", "gated", "delta", "gated_delta"), "gated_delta")
    ctx.attr("chunk_size")  # a tuning hint of chunked kernels: no effect on the result
    q_heads, kv_heads = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    if not q_heads or not kv_heads or q_heads % kv_heads:
        raise Unsupported(f"q_num_heads {q_heads} is not a multiple of kv_num_heads {kv_heads}")
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    decay, beta, past = ctx.opt(4), ctx.opt(5), ctx.opt(3)
    if gating != (decay is not None) or delta != (beta is not None):
        raise Unsupported(
            f"update_rule {rule!r} with decay {decay is not None}, beta {beta is not None}"
        )
    shape = ctx.static_shape(0)
    batch, steps = shape[0], shape[1]
    f32 = DType.F32

    def heads(x: SSAValue, n: Dim) -> SSAValue:  # [B, T, n·D] -> [B, n, T, D] in f32
        return _split_heads(ctx, b.cast(x, f32) if type_of(x).dtype != f32 else x, n)

    q, k, v = heads(ctx.x(0), q_heads), heads(ctx.x(1), kv_heads), heads(ctx.x(2), kv_heads)
    d_k, d_v = type_of(k).shape[3], type_of(v).shape[3]
    group = q_heads // kv_heads
    scale = ctx.attr("scale", 0.0) or 1.0 / math.sqrt(int(type_of(q).shape[3]))
    if decay is not None:
        per_head = type_of(decay).shape[-1] == kv_heads
        decay = heads(decay, kv_heads)  # [B, H, T, 1] or [B, H, T, d_k]
    if beta is not None:
        beta = heads(beta, type_of(beta).shape[-1])  # [B, H or 1, T, 1]

    state = b.cast(past, f32) if past is not None and type_of(past).dtype != f32 else past
    if state is None:
        state = ctx.full([batch, kv_heads, d_k, d_v], 0.0, f32)

    def step(t: int | SSAValue, state: SSAValue) -> tuple[SSAValue, SSAValue]:
        """Token t (static when unrolled, the iteration number in a loop): the new state
        and the token's output [B, H_q·d_v]."""

        def at(x: SSAValue) -> SSAValue:
            return select(ctx, x, 2, t) if isinstance(t, int) else b.gather(x, t, 2)

        k_t, v_t = at(k), at(v)
        if decay is not None:
            g = b.exp(at(decay))
            state = b.mul(state, b.reshape(g, [batch, kv_heads, 1 if per_head else d_k, 1]))
        if beta is not None:
            retrieved = b.matmul(b.reshape(k_t, [batch, kv_heads, 1, d_k]), state)
            v_t = b.mul(at(beta), b.sub(v_t, b.reshape(retrieved, [batch, kv_heads, d_v])))
        outer = b.mul(
            b.reshape(k_t, [batch, kv_heads, d_k, 1]), b.reshape(v_t, [batch, kv_heads, 1, d_v])
        )
        state = b.add(state, outer)
        q_t = b.reshape(at(q), [batch, kv_heads, group, d_k])
        o_t = b.mul(b.matmul(q_t, state), float(scale))  # [B, H_kv, group, d_v]
        return state, b.reshape(o_t, [batch, q_heads * d_v])

    if steps <= UNROLL_MAX_ITERATIONS:
        outputs = []
        for t in range(steps):
            state, o = step(t, state)
            outputs.append(o)
        out = stack(ctx, outputs, 1)  # [B, T, H_q·d_v]
    else:  # one loop over the tokens: the import does not grow with them

        def body(
            i: SSAValue, cond: SSAValue, carried: list[SSAValue]
        ) -> tuple[SSAValue, list[SSAValue], list[SSAValue]]:
            new, o = step(i, carried[0])
            return cond, [new], [o]

        (state,), (outs,) = b.loop(trip_count_of(ctx, steps), None, [state], body, steps)
        out = move_leading(ctx, outs, 1)
    out_type = ctx.type(0).dtype
    state_type = ctx.type(3).dtype if past is not None else out_type
    return [
        b.cast(out, out_type) if out_type != f32 else out,
        b.cast(state, state_type) if state_type != f32 else state,
    ]
