"""Reference semantics of the HIR blocks, written from their docstring formulas with the
MIR kernels, independently of ``lower-hir-to-mir``: running an HIR module and running its
lowering (either policy) must agree, which is how the lowering is checked."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlx_compile.dialects import hir
from rlx_compile.dialects.common import Activation, MaskKind
from rlx_compile.interpreter import kernels as K
from rlx_compile.interpreter.core import Env, execute_graph, impl

Arrays = list[np.ndarray]


def _args(op: Any, args: Arrays, names: tuple[str, ...]) -> dict[str, np.ndarray | None]:
    it = iter(args)
    return {n: (None if getattr(op, n) is None else next(it)) for n in names}


def _linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, act: Activation) -> np.ndarray:
    y = K.matmul(x, w)
    if b is not None:
        y = K.binary("add", y, b)
    return K.activation(y, act)


def _swiglu(x: np.ndarray, up: np.ndarray, gate: np.ndarray, down: np.ndarray) -> np.ndarray:
    gated = K.binary("mul", K.matmul(x, up), K.unary("silu", K.matmul(x, gate)))
    return K.matmul(gated, down)


def _heads(x: np.ndarray, heads: int, head_dim: int) -> np.ndarray:
    b, s, _ = x.shape
    return K.transpose(K.reshape(x, (b, s, heads, head_dim)), (0, 2, 1, 3))


def _attention_block(
    x: np.ndarray,
    wq: np.ndarray,
    wk: np.ndarray,
    wv: np.ndarray,
    wo: np.ndarray,
    *,
    heads: int,
    kv_heads: int,
    head_dim: int,
    kind: MaskKind,
    mask: np.ndarray | None,
    cos: np.ndarray | None,
    sin: np.ndarray | None,
) -> np.ndarray:
    q = _heads(K.matmul(x, wq), heads, head_dim)
    k = _heads(K.matmul(x, wk), kv_heads, head_dim)
    v = _heads(K.matmul(x, wv), kv_heads, head_dim)
    if cos is not None and sin is not None:
        q = K.rope(q, cos, sin, None, False)
        k = K.rope(k, cos, sin, None, False)
    attn = K.attention(q, k, v, mask, kind, None, None)
    b, s = x.shape[:2]
    return K.matmul(K.reshape(K.transpose(attn, (0, 2, 1, 3)), (b, s, heads * head_dim)), wo)


@impl(hir.LinearOp)
def _linear_op(op: hir.LinearOp, args: Arrays, env: Env) -> Arrays:
    a = _args(op, args, ("input", "weight", "bias"))
    assert a["input"] is not None and a["weight"] is not None
    return [_linear(a["input"], a["weight"], a["bias"], op.props().enum("activation"))]


@impl(hir.SwigluOp)
def _swiglu_op(op: hir.SwigluOp, args: Arrays, env: Env) -> Arrays:
    return [_swiglu(*args)]


@impl(hir.ResidualRmsNormOp)
def _residual_rms_norm(op: hir.ResidualRmsNormOp, args: Arrays, env: Env) -> Arrays:
    a = _args(op, args, ("input", "residual", "scale", "bias"))
    assert a["input"] is not None and a["residual"] is not None and a["scale"] is not None
    total = K.binary("add", a["input"], a["residual"])
    eps = op.props().float("epsilon")
    return [K.rms_norm(total, a["scale"], a["bias"], total.ndim - 1, eps), total]


@impl(hir.SharedLinearPairOp)
def _shared_pair(op: hir.SharedLinearPairOp, args: Arrays, env: Env) -> Arrays:
    x, w1, w2 = args
    return [K.matmul(x, w1), K.matmul(x, w2)]


@impl(hir.AttentionBlockOp)
def _attention_op(op: hir.AttentionBlockOp, args: Arrays, env: Env) -> Arrays:
    a = _args(op, args, ("hidden", "wq", "wk", "wv", "wo", "mask", "cos", "sin"))
    p = op.props()
    return [
        _attention_block(
            a["hidden"], a["wq"], a["wk"], a["wv"], a["wo"],  # type: ignore[arg-type]
            heads=p.int("num_heads"), kv_heads=p.int("num_kv_heads"),
            head_dim=p.int("head_dim"), kind=p.enum("mask_kind"),
            mask=a["mask"], cos=a["cos"], sin=a["sin"],
        )
    ]  # fmt: skip


@impl(hir.DecoderBlockOp)
def _decoder(op: hir.DecoderBlockOp, args: Arrays, env: Env) -> Arrays:
    x, ln1, wq, wk, wv, wo, ln2, gate, up, down, cos, sin = args
    p = op.props()
    eps, last = p.float("epsilon"), x.ndim - 1
    attn = _attention_block(
        K.rms_norm(x, ln1, None, last, eps), wq, wk, wv, wo,
        heads=p.int("num_heads"), kv_heads=p.int("num_kv_heads"), head_dim=p.int("head_dim"),
        kind=p.enum("mask_kind"), mask=None, cos=cos, sin=sin,
    )  # fmt: skip
    hidden = K.binary("add", x, attn)
    mlp = _swiglu(K.rms_norm(hidden, ln2, None, last, eps), up, gate, down)
    return [K.binary("add", hidden, mlp)]


@impl(hir.ConvBlockOp)
def _conv_block(op: hir.ConvBlockOp, args: Arrays, env: Env) -> Arrays:
    a = _args(op, args, ("input", "weight", "bias"))
    assert a["input"] is not None and a["weight"] is not None
    p = op.props()
    y = K.conv(
        a["input"], a["weight"], p.ints("strides"), p.ints("pads"), p.ints("dilations"),
        p.int("groups"),
    )  # fmt: skip
    if a["bias"] is not None:
        y = K.binary("add", y, a["bias"].reshape(-1, *([1] * (y.ndim - 2))))
    return [K.activation(y, p.enum("activation"))]


@impl(hir.RegionOp)
def _region(op: hir.RegionOp, args: Arrays, env: Env) -> Arrays:
    return execute_graph(op, args, env)
