"""Fused ops are defined by composition: each must be bit-identical to its primitive
chain built by hand, in f32 and in bf16 (where every intermediate rounding shows). One
independent float64 check per op guards against the chain itself being wrong."""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from interp_testlib import bits_equal, build, ttype
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter import run

F32, F64 = np.float32, np.float64
BF16 = ml_dtypes.bfloat16
DTYPES = [F32, BF16]


def run_both(fused: Callable, chain: Callable, arrays: dict[str, np.ndarray]) -> tuple[list, list]:  # type: ignore[type-arg]
    """Build and run the fused and the chain form over the same named inputs."""
    types = {name: ttype(a) for name, a in arrays.items()}
    outs = []
    for body in (fused, chain):
        module = build(types, body)
        outs.append(list(run(module, arrays).values()))
    return outs[0], outs[1]


def assert_bit_identical(fused: list[np.ndarray], chain: list[np.ndarray]) -> None:
    assert len(fused) == len(chain)
    for f, c in zip(fused, chain, strict=True):
        assert bits_equal(f, c), np.abs(f.astype(F64) - c.astype(F64)).max()


def rnd(shape: tuple[int, ...], dtype, seed: int, scale: float = 1.0) -> np.ndarray:  # type: ignore[no-untyped-def]
    return (np.random.default_rng(seed).normal(size=shape) * scale).astype(dtype)


ACTIVATIONS: dict[str, Callable[[SSAValue], mir.UnaryOp | mir.GeluOp] | None] = {
    "none": None,
    "relu": mir.ReluOp,
    "gelu": lambda x: mir.GeluOp(x),
    "gelu_tanh": lambda x: mir.GeluOp(x, "tanh"),
    "silu": mir.SiluOp,
    "sigmoid": mir.SigmoidOp,
    "tanh": mir.TanhOp,
}


def apply_act(act: str, x: SSAValue) -> SSAValue:
    make = ACTIVATIONS[act]
    return x if make is None else make(x).result


@pytest.mark.parametrize("act", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias_shape", [(6,), (1,), ()])
def test_fused_matmul_bias_act(act: str, dtype, bias_shape) -> None:  # type: ignore[no-untyped-def]
    arrays = {
        "x": rnd((2, 3, 5), dtype, 0),
        "w": rnd((5, 6), dtype, 1),
        "b": rnd(bias_shape, dtype, 2),
    }
    fused, chain = run_both(
        lambda x, w, b: [mir.FusedMatmulBiasActOp(x, w, b, act)],
        lambda x, w, b: [apply_act(act, mir.AddOp(mir.MatmulOp(x, w).result, b).result)],
        arrays,
    )
    assert_bit_identical(fused, chain)
    if act == "relu" and dtype is F32:
        ref = np.maximum(arrays["x"].astype(F64) @ arrays["w"] + arrays["b"], 0)
        np.testing.assert_allclose(fused[0], ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("gate_first", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_swiglu(gate_first: bool, dtype) -> None:  # type: ignore[no-untyped-def]
    n = 4
    arrays = {"x": rnd((2, 3, 2 * n), dtype, 3, 3.0)}

    def chain(x: SSAValue) -> list[SSAValue]:
        first = mir.NarrowOp(x, 2, 0, n).result
        second = mir.NarrowOp(x, 2, n, n).result
        gate, up = (first, second) if gate_first else (second, first)
        return [mir.MulOp(mir.SiluOp(gate).result, up).result]

    fused, ch = run_both(lambda x: [mir.FusedSwigluOp(x, gate_first)], chain, arrays)
    assert_bit_identical(fused, ch)
    x = arrays["x"].astype(F64)
    gate, up = (x[..., :n], x[..., n:]) if gate_first else (x[..., n:], x[..., :n])
    ref = gate / (1 + np.exp(-gate)) * up
    np.testing.assert_allclose(fused[0].astype(F64), ref, rtol=2e-2 if dtype is BF16 else 1e-5)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_residual_norm(rms: bool, with_bias: bool, dtype) -> None:  # type: ignore[no-untyped-def]
    arrays = {
        "x": rnd((2, 3, 8), dtype, 4),
        "r": rnd((2, 3, 8), dtype, 5),
        "g": rnd((8,), dtype, 6),
    }
    if with_bias:
        arrays["b"] = rnd((8,), dtype, 7)
    fused_cls = mir.FusedResidualRmsNormOp if rms else mir.FusedResidualLayerNormOp
    norm_cls = mir.RmsNormOp if rms else mir.LayerNormOp

    def fused(x, r, g, b=None):  # type: ignore[no-untyped-def]
        op = fused_cls(x, r, g, b, axis=2, epsilon=1e-5)
        return [op.results[0], op.results[1]]

    def chain(x, r, g, b=None):  # type: ignore[no-untyped-def]
        total = mir.AddOp(x, r).result
        return [norm_cls(total, g, b, axis=2, epsilon=1e-5).result, total]

    f, c = run_both(fused, chain, arrays)
    assert_bit_identical(f, c)
    total = arrays["x"].astype(F64) + arrays["r"].astype(F64)
    np.testing.assert_allclose(f[1].astype(F64), total, rtol=1e-2 if dtype is BF16 else 1e-6)


@pytest.mark.parametrize("act", ["none", "relu", "silu", "gelu"])
@pytest.mark.parametrize("with_residual", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_conv_bias_act(act: str, with_residual: bool, dtype) -> None:  # type: ignore[no-untyped-def]
    conv_kw = {"strides": [2, 1], "pads": [1, 0, 1, 1], "dilations": [1, 2], "groups": 2}
    arrays = {
        "x": rnd((2, 4, 7, 6), dtype, 8),
        "w": rnd((6, 2, 3, 2), dtype, 9),
        "b": rnd((6,), dtype, 10),
    }
    out_type = mir.ConvOp(
        mir.InputOp("x", ttype(arrays["x"])).result,
        mir.InputOp("w", ttype(arrays["w"])).result,
        **conv_kw,
    ).result.type
    assert isinstance(out_type, TensorType)
    if with_residual:
        arrays["res"] = rnd(tuple(int(d) for d in out_type.shape), dtype, 11)

    def fused(x, w, b, res=None):  # type: ignore[no-untyped-def]
        return [mir.FusedConvBiasActOp(x, w, b, res, activation=act, **conv_kw)]

    def chain(x, w, b, res=None):  # type: ignore[no-untyped-def]
        y = mir.ConvOp(x, w, **conv_kw).result
        y = mir.AddOp(y, mir.ReshapeOp(b, [6, 1, 1]).result).result
        if res is not None:
            y = mir.AddOp(y, res).result
        return [apply_act(act, y)]

    f, c = run_both(fused, chain, arrays)
    assert_bit_identical(f, c)


# ---------------------------------------------------------------------------------
# Attention block
# ---------------------------------------------------------------------------------

B, S, E, H, HK, D, EO = 2, 5, 12, 4, 2, 4, 10


def _attention_block_arrays(dtype, with_bias: bool, with_rope: bool, mask: str):  # type: ignore[no-untyped-def]
    cols = (H + 2 * HK) * D
    arrays = {
        "hidden": rnd((B, S, E), dtype, 12),
        "qkv_w": rnd((E, cols), dtype, 13, 0.4),
        "out_w": rnd((H * D, EO), dtype, 14, 0.4),
    }
    if with_bias:
        arrays["qkv_b"] = rnd((cols,), dtype, 15)
        arrays["out_b"] = rnd((EO,), dtype, 16)
    if mask == "explicit":
        arrays["mask"] = np.random.default_rng(17).random((B, 1, S, S)) > 0.3
        arrays["mask"][..., 0] = True
    if with_rope:
        ang = np.arange(S)[:, None] * 0.5 ** np.arange(D // 2)[None]
        arrays["cos"] = np.cos(ang).astype(dtype)
        arrays["sin"] = np.sin(ang).astype(dtype)
    return arrays


def _attention_block_forms(names: list[str], mask_kind: str, scale: float | None):  # type: ignore[no-untyped-def]
    def fused(*vals: SSAValue) -> list[SSAValue]:
        v = dict(zip(names, vals, strict=True))
        op = mir.FusedAttentionBlockOp(
            v["hidden"], v["qkv_w"], v["out_w"],
            num_heads=H, num_kv_heads=HK, head_dim=D,
            qkv_bias=v.get("qkv_b"), out_bias=v.get("out_b"), mask=v.get("mask"),
            cos=v.get("cos"), sin=v.get("sin"), mask_kind=mask_kind, scale=scale,
        )  # fmt: skip
        return [op.result]

    def heads(x: SSAValue, start: int, n: int) -> SSAValue:
        part = mir.NarrowOp(x, 2, start, n * D).result
        split = mir.ReshapeOp(part, [B, S, n, D]).result
        return mir.TransposeOp(split, [0, 2, 1, 3]).result

    def chain(*vals: SSAValue) -> list[SSAValue]:
        v = dict(zip(names, vals, strict=True))
        qkv = mir.MatmulOp(v["hidden"], v["qkv_w"]).result
        if "qkv_b" in v:
            qkv = mir.AddOp(qkv, v["qkv_b"]).result
        q, k, vv = heads(qkv, 0, H), heads(qkv, H * D, HK), heads(qkv, (H + HK) * D, HK)
        if "cos" in v:
            q = mir.RopeOp(q, v["cos"], v["sin"]).result
            k = mir.RopeOp(k, v["cos"], v["sin"]).result
        a = mir.AttentionOp(q, k, vv, v.get("mask"), mask_kind=mask_kind, scale=scale).result
        merged = mir.ReshapeOp(mir.TransposeOp(a, [0, 2, 1, 3]).result, [B, S, H * D]).result
        out = mir.MatmulOp(merged, v["out_w"]).result
        if "out_b" in v:
            out = mir.AddOp(out, v["out_b"]).result
        return [out]

    return fused, chain


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("with_bias", "with_rope", "mask", "scale"),
    [
        (True, True, "causal", None),
        (False, False, "none", 0.7),
        (True, False, "explicit", None),
        (False, True, "explicit", 0.25),
    ],
)
def test_fused_attention_block(dtype, with_bias, with_rope, mask, scale) -> None:  # type: ignore[no-untyped-def]
    arrays = _attention_block_arrays(dtype, with_bias, with_rope, mask)
    fused, chain = _attention_block_forms(list(arrays), mask, scale)
    f, c = run_both(fused, chain, arrays)
    assert_bit_identical(f, c)
    if dtype is F32:
        want = _attention_block_f64(arrays, mask, scale)
        np.testing.assert_allclose(f[0], want, rtol=1e-4, atol=1e-5)


def _attention_block_f64(a: dict[str, np.ndarray], mask: str, scale: float | None) -> np.ndarray:
    """The block written directly in float64 NumPy, independent of the kernels."""
    x = {k: (v.astype(F64) if v.dtype != np.bool_ else v) for k, v in a.items()}
    qkv = x["hidden"] @ x["qkv_w"] + x.get("qkv_b", 0.0)

    def heads(start: int, n: int) -> np.ndarray:
        return qkv[..., start : start + n * D].reshape(B, S, n, D).transpose(0, 2, 1, 3)

    q, k, v = heads(0, H), heads(H * D, HK), heads((H + HK) * D, HK)
    if "cos" in x:

        def rope(t: np.ndarray) -> np.ndarray:
            t1, t2 = t[..., : D // 2], t[..., D // 2 :]
            c, s = x["cos"], x["sin"]
            return np.concatenate([t1 * c - t2 * s, t2 * c + t1 * s], axis=-1)

        q, k = rope(q), rope(k)
    k, v = np.repeat(k, H // HK, axis=1), np.repeat(v, H // HK, axis=1)
    scores = q @ k.transpose(0, 1, 3, 2) * (1 / math.sqrt(D) if scale is None else scale)
    if mask == "causal":
        scores = np.where(np.tril(np.ones((S, S), bool)), scores, -np.inf)
    elif mask == "explicit":
        scores = np.where(a["mask"], scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    out = (p / p.sum(-1, keepdims=True)) @ v
    merged = out.transpose(0, 2, 1, 3).reshape(B, S, H * D)
    return merged @ x["out_w"] + x.get("out_b", 0.0)


def test_fused_attention_block_rope_must_fit_the_kv_heads() -> None:
    # cos/sin with one row per query head broadcast to q [B, 4, S, D/2] but not to
    # k [B, 2, S, D/2]: the block could not rotate k, so the verifier rejects it.
    leaf = lambda name, shape: mir.InputOp(name, TensorType(shape, "f32")).result  # noqa: E731
    cos = leaf("cos", [1, H, S, D // 2])
    with pytest.raises(VerifyException, match=r"\[1, 4, 5, 2\], \[2, 2, 5, 2\] do not broadcast"):
        mir.FusedAttentionBlockOp(
            leaf("hidden", [B, S, E]), leaf("qkv_w", [E, (H + 2 * HK) * D]),
            leaf("out_w", [H * D, EO]), num_heads=H, num_kv_heads=HK, head_dim=D,
            cos=cos, sin=cos,
        )  # fmt: skip
