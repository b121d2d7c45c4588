"""Attention and rotary embeddings against naive per-query / per-pair Python loops."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from interp_testlib import run1

from rlx_compile.dialects import mir

F32, F64 = np.float32, np.float64
BF16 = ml_dtypes.bfloat16


def naive_attention(q, k, v, mask=None, kind="none", scale=None, softcap=None):  # type: ignore[no-untyped-def]
    b, h, sq, d = q.shape
    hk, sk, dv = k.shape[1], k.shape[2], v.shape[3]
    scale = 1 / math.sqrt(d) if scale is None else scale
    if mask is not None:
        mask = np.broadcast_to(mask, (b, h, sq, sk))
    out = np.zeros((b, h, sq, dv))
    for bi in range(b):
        kb = 0 if k.shape[0] == 1 else bi
        for hi in range(h):
            kh = hi // (h // hk)  # grouped-query: query head -> its key/value head
            for i in range(sq):
                scores = []
                for j in range(sk):
                    s = math.fsum(float(q[bi, hi, i, t]) * float(k[kb, kh, j, t]) for t in range(d))
                    s *= scale
                    if softcap is not None:
                        s = softcap * math.tanh(s / softcap)
                    if kind == "causal" and j > i:
                        s = -math.inf
                    if mask is not None:
                        m = mask[bi, hi, i, j]
                        s = (s if m else -math.inf) if mask.dtype == np.bool_ else s + float(m)
                    scores.append(s)
                top = max(scores)
                weights = [math.exp(s - top) for s in scores]
                total = math.fsum(weights)
                for e in range(dv):
                    out[bi, hi, i, e] = math.fsum(
                        w / total * float(v[kb, kh, j, e]) for j, w in enumerate(weights)
                    )
    return out


def attention(q, k, v, mask=None, **kw):  # type: ignore[no-untyped-def]
    if mask is None:
        return run1(lambda a, b, c: [mir.AttentionOp(a, b, c, **kw)], q, k, v)
    return run1(lambda a, b, c, m: [mir.AttentionOp(a, b, c, m, **kw)], q, k, v, mask)


def rnd(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).normal(size=shape)


def test_multi_head_default_scale() -> None:
    q, k, v = rnd(2, 3, 4, 8), rnd(2, 3, 5, 8, seed=1), rnd(2, 3, 5, 8, seed=2)
    np.testing.assert_allclose(attention(q, k, v), naive_attention(q, k, v), rtol=1e-12)


def test_grouped_query_causal_upper_left() -> None:
    # Sq = 3 < Sk = 5: upper-left alignment, query i sees keys 0..i only.
    q, k, v = rnd(1, 4, 3, 4), rnd(1, 2, 5, 4, seed=1), rnd(1, 2, 5, 6, seed=2)
    got = attention(q, k, v, mask_kind="causal")
    want = naive_attention(q, k, v, kind="causal")
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # Query 0 sees key 0 only: its output is that key's value row, of its kv head.
    np.testing.assert_allclose(got[0, 1, 0], v[0, 0, 0], rtol=1e-12)
    np.testing.assert_allclose(got[0, 2, 0], v[0, 1, 0], rtol=1e-12)


def test_bool_mask_broadcasts() -> None:
    q, k, v = rnd(2, 2, 3, 4), rnd(2, 2, 4, 4, seed=1), rnd(2, 2, 4, 4, seed=2)
    mask = np.random.default_rng(9).random((2, 1, 3, 4)) > 0.4
    mask[..., 0] = True  # no fully masked row
    got = attention(q, k, v, mask)
    np.testing.assert_allclose(got, naive_attention(q, k, v, mask), rtol=1e-12)


def test_additive_mask_scale_and_softcap() -> None:
    q, k, v = rnd(1, 2, 3, 4), rnd(1, 2, 3, 4, seed=1), rnd(1, 2, 3, 4, seed=2)
    bias = rnd(3, 3, seed=3) * 2
    got = attention(q * 4, k, v, bias, scale=0.3, softcap=2.0)
    want = naive_attention(q * 4, k, v, bias, scale=0.3, softcap=2.0)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # The softcap changes the result (scores reach |s| > 2 here).
    uncapped = attention(q * 4, k, v, bias, scale=0.3)
    assert np.abs(got - uncapped).max() > 1e-3


def test_key_value_batch_broadcasts() -> None:
    q, k, v = rnd(3, 2, 2, 4), rnd(1, 2, 3, 4, seed=1), rnd(1, 2, 3, 4, seed=2)
    np.testing.assert_allclose(attention(q, k, v), naive_attention(q, k, v), rtol=1e-12)


def test_fully_masked_row_is_nan() -> None:
    q, k, v = rnd(1, 1, 2, 2), rnd(1, 1, 2, 2, seed=1), rnd(1, 1, 2, 2, seed=2)
    mask = np.array([[True, True], [False, False]])
    got = attention(q, k, v, mask)
    assert np.isfinite(got[0, 0, 0]).all() and np.isnan(got[0, 0, 1]).all()


def test_bf16_attention_rounds_once() -> None:
    q, k, v = (rnd(1, 2, 4, 16, seed=s).astype(BF16) for s in range(3))
    got = attention(q, k, v, mask_kind="causal")
    want = naive_attention(*(t.astype(F64) for t in (q, k, v)), kind="causal")
    # f32 internals, one rounding to bf16: within one bf16 ulp of the exact value.
    step = (np.abs(got).view(np.uint16) + 1).view(BF16).astype(F64) - np.abs(got).astype(F64)
    assert (np.abs(got.astype(F64) - want) <= step).all()


# ---------------------------------------------------------------------------------
# Rope
# ---------------------------------------------------------------------------------


def naive_rope(x, cos, sin, rotary_dim=None, interleaved=False):  # type: ignore[no-untyped-def]
    d = x.shape[-1]
    r = d if rotary_dim is None else rotary_dim
    half = r // 2
    cos = np.broadcast_to(cos, (*x.shape[:-1], half))
    sin = np.broadcast_to(sin, (*x.shape[:-1], half))
    out = np.array(x, dtype=F64)
    for idx in np.ndindex(*x.shape[:-1]):
        for i in range(half):
            a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
            c, s = float(cos[(*idx, i)]), float(sin[(*idx, i)])
            xa, xb = float(x[(*idx, a)]), float(x[(*idx, b)])
            out[(*idx, a)] = xa * c - xb * s
            out[(*idx, b)] = xb * c + xa * s
    return out


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("rotary_dim", [None, 4])
def test_rope_matches_loops(interleaved: bool, rotary_dim: int | None) -> None:
    x = rnd(2, 3, 5, 8)  # [B, H, S, D]
    r = 8 if rotary_dim is None else rotary_dim
    angles = np.arange(5)[:, None] * (10000.0 ** (-np.arange(r // 2) / (r // 2)))[None]
    cos, sin = np.cos(angles), np.sin(angles)  # [S, r/2], broadcast over B and H
    got = run1(
        lambda a, c, s: [mir.RopeOp(a, c, s, rotary_dim=rotary_dim, interleaved=interleaved)],
        x,
        cos,
        sin,
    )
    want = naive_rope(x, cos, sin, rotary_dim, interleaved)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    if rotary_dim is not None:
        np.testing.assert_array_equal(got[..., rotary_dim:], x[..., rotary_dim:])
    # A rotation: the norm of every rotated pair is kept.
    np.testing.assert_allclose(
        np.linalg.norm(got[..., :r], axis=-1), np.linalg.norm(x[..., :r], axis=-1), rtol=1e-12
    )


def test_rope_neox_and_interleaved_differ() -> None:
    x = rnd(1, 4, 4)
    cos, sin = np.cos(rnd(4, 2)), np.sin(rnd(4, 2))
    neox = run1(lambda a, c, s: [mir.RopeOp(a, c, s)], x, cos, sin)
    inter = run1(lambda a, c, s: [mir.RopeOp(a, c, s, interleaved=True)], x, cos, sin)
    assert np.abs(neox - inter).max() > 1e-3


def test_rope_low_precision_rounds_once() -> None:
    x = rnd(1, 6, 8).astype(BF16)
    ang = rnd(6, 4, seed=5)
    cos, sin = np.cos(ang).astype(BF16), np.sin(ang).astype(BF16)
    got = run1(lambda a, c, s: [mir.RopeOp(a, c, s)], x, cos, sin)
    want = naive_rope(x.astype(F64), cos.astype(F64), sin.astype(F64))
    assert np.array_equal(got, want.astype(F32).astype(BF16))
