"""HIR blocks executed directly (their reference semantics) agree with their lowering,
under both fusion policies, through canonicalize/cse/dce."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from examples.build_examples import decoder_block, small_cnn
from rlx_compile import ModuleBuilder
from rlx_compile.builder import is_hir
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, graph_params, main_graph
from rlx_compile.passmanager import PassManager, parse_pipeline


def random_feeds(module: ModuleOp, seed: int = 0) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    g = main_graph(module)

    def draw(t):  # type: ignore[no-untyped-def]
        shape = [int(d) for d in t.shape]
        return (rng.standard_normal(shape) * 0.5).astype(t.dtype.numpy)

    return ({x.name: draw(x.type) for x in graph_inputs(g)},
            {p.name: draw(p.type) for p in graph_params(g)})  # fmt: skip


def lowered(module: ModuleOp, policy: str) -> ModuleOp:
    out = module.clone()
    PassManager(parse_pipeline(f"lower-hir-to-mir{{policy={policy}}},canonicalize,cse,dce")).run(
        out
    )
    assert not is_hir(out)
    return out


def assert_same(hir_module: ModuleOp, policy: str, exact: bool) -> None:
    inputs, params = random_feeds(hir_module)
    want = run(hir_module, inputs, params)
    got = run(lowered(hir_module, policy), inputs, params)
    for name, w in want.items():
        if exact:
            np.testing.assert_array_equal(got[name], w)
        else:
            np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-5 * np.abs(w).max())


@pytest.mark.parametrize("policy", ["direct", "fusable"])
@pytest.mark.parametrize("build", [decoder_block, small_cnn], ids=["decoder_block", "small_cnn"])
def test_examples(build, policy: str) -> None:  # type: ignore[no-untyped-def]
    # Concatenating weights into one matmul may change BLAS blocking (last-bit
    # differences); the primitive chains are the HIR definitions and agree exactly.
    assert_same(build(), policy, exact=policy == "fusable")


def _decoder_op(policy: str) -> ModuleOp:
    b, s, e, h, kv, d, f = 2, 5, 32, 4, 2, 8, 48
    with ModuleBuilder("llama_layer") as m:
        x = m.input("x", (b, s, e))

        def p(n: str, shape: tuple[int, ...]):  # type: ignore[no-untyped-def]
            return m.param(n, shape)

        y = m.decoder_block(
            x, ln1=p("ln1", (e,)), wq=p("wq", (e, h * d)), wk=p("wk", (e, kv * d)),
            wv=p("wv", (e, kv * d)), wo=p("wo", (h * d, e)), ln2=p("ln2", (e,)),
            gate=p("gate", (e, f)), up=p("up", (e, f)), down=p("down", (f, e)),
            cos=p("cos", (s, d // 2)), sin=p("sin", (s, d // 2)),
            num_heads=h, num_kv_heads=kv, head_dim=d, policy=policy,
        )  # fmt: skip
        m.output(y, names=["y"])
    return m.module


@pytest.mark.parametrize("policy", ["direct", "fusable"])
def test_decoder_block_op(policy: str) -> None:
    assert_same(_decoder_op(policy), policy, exact=policy == "fusable")


@pytest.mark.parametrize("policy", ["direct", "fusable"])
def test_every_block_kind(policy: str) -> None:
    with ModuleBuilder("blocks") as m:
        x = m.input("x", (3, 8))
        w, b = m.param("w", (8, 8)), m.param("b", (8,))
        w6 = m.param("w6", (8, 6))
        g = m.param("g", (8,))
        h = m.linear(x, w, b, act="silu", policy=policy)
        h2 = m.linear(h, w, act="tanh", policy=policy)
        up, gate, down = m.param("up", (8, 16)), m.param("gate", (8, 16)), m.param("down", (16, 8))
        s = m.swiglu(h2, up, gate, down, policy=policy)
        n, total = m.residual_rms_norm(s, x, g, policy=policy)
        a, c = m.shared_linear_pair(n, w, w6, policy=policy)
        (r,) = m.region([a, total], lambda bb, v: [bb.mul(bb.sigmoid(v[0]), v[1])])
        m.output(r, c, names=["r", "c"])
        img = m.input("img", (1, 3, 6, 6))
        cw, cb = m.param("cw", (4, 3, 3, 3)), m.param("cb", (4,))
        m.output(m.conv_block(img, cw, cb, pads=(1, 1, 1, 1), act="relu", policy=policy),
                 names=["conv"])  # fmt: skip
    assert_same(m.module, policy, exact=policy == "fusable")
