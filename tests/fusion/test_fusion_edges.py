"""Edge cases of the fusion patterns: element types, symbolic dims, repeated operands."""

from __future__ import annotations

import numpy as np

from rlx_compile import CompilePipeline, ModuleBuilder
from rlx_compile.interpreter import run
from tests.fusion.helpers import apply, assert_exact, op_names


def test_integer_matmul_keeps_its_relu() -> None:
    """Fused epilogues are float-only: an i32 matmul fuses its bias, not its relu."""
    with ModuleBuilder("i") as m:
        x, w, b = (
            m.input("x", (2, 3), "i32"),
            m.param("w", (3, 4), "i32"),
            m.param("b", (4,), "i32"),
        )
        m.output(m.relu(m.add(m.matmul(x, w), b)))
    fused, _ = apply(m.module, "fuse{target=cpu}")
    assert op_names(fused)[-2:] == ["mir.fused_matmul_bias_act", "mir.relu"]
    rng = np.random.default_rng(0)
    feeds = {"x": rng.integers(-5, 5, (2, 3), dtype=np.int32)}
    params = {"w": rng.integers(-5, 5, (3, 4), dtype=np.int32),
              "b": rng.integers(-5, 5, 4, dtype=np.int32)}  # fmt: skip
    assert_exact(run(fused, feeds, params), run(m.module, feeds, params))


def test_symbolic_widths_do_not_fuse_into_swiglu() -> None:
    with ModuleBuilder("s") as m:
        x = m.input("x", (2, 3))
        wu, wg = m.input("wu", (3, "n")), m.input("wg", (3, "n"))
        m.output(m.mul(m.matmul(x, wu), m.silu(m.matmul(x, wg))))
    fused, _ = apply(m.module, "fuse-swiglu")
    assert "mir.fused_swiglu" not in op_names(fused)


def test_half_precision_fusions_are_exact() -> None:
    """The fused ops round like their chains (once per primitive) in f16 too."""
    with ModuleBuilder("h") as m:
        x = m.input("x", (3, 8), "f16")
        w, b, g = m.param("w", (8, 8), "f16"), m.param("b", (8,), "f16"), m.param("g", (8,), "f16")
        h = m.silu(m.add(m.matmul(x, w), b))
        s = m.add(h, x)
        m.output(m.rms_norm(s, g), m.tanh(m.neg(s)))
    fused, _ = apply(m.module, "fuse{target=cpu},fuse{target=cuda}")
    names = op_names(fused)
    assert "mir.fused_matmul_bias_act" in names and "mir.fused_residual_rms_norm" in names
    assert "mir.elementwise_region" in names  # cuda: neg -> tanh
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((3, 8)).astype(np.float16)}
    params = {k: rng.standard_normal(s).astype(np.float16)
              for k, s in (("w", (8, 8)), ("b", (8,)), ("g", (8,)))}  # fmt: skip
    assert_exact(run(fused, feeds, params), run(m.module, feeds, params))


def test_symbolic_dims_compile_for_a_region_target() -> None:
    """Regions made over symbolic shapes are re-typed by specialize-dims like any op."""
    with ModuleBuilder("dyn") as m:
        x = m.input("x", ("batch", "seq", 16))
        h = m.matmul(x, m.param("w", (16, 8)))
        m.output(m.sigmoid(m.relu(m.tanh(h))), names=["y"])
    result = CompilePipeline(target="cuda", dim_bindings={"batch": 1, "seq": 4}).compile(m.module)
    assert "mir.elementwise_region" in result.text()
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 4, 16)).astype(np.float32)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    assert_exact(result.run({"x": x}, {"w": w}), run(m.module, {"x": x}, {"w": w}))


def test_square_of_a_value_stays_in_one_region() -> None:
    """mul(x, x): both uses of x are by one region member, so x's producer joins."""
    with ModuleBuilder("sq") as m:
        t = m.tanh(m.input("x", (4,)))
        m.output(m.exp(m.mul(t, t)))
    fused, _ = apply(m.module, "mark-elementwise-regions{target=cuda}")
    assert op_names(fused) == ["mir.input", "mir.elementwise_region"]


def test_stage_order_lets_the_attention_block_claim_its_projections() -> None:
    """q/k/v projections with biases: run alone first, the matmul+bias fusion would take
    them and the attention block could no longer match; ``fuse`` stages the block first."""
    b, s, e, h, d = 1, 4, 16, 2, 8
    with ModuleBuilder("attn") as m:
        x = m.input("x", (b, s, e))

        def proj(name: str) -> object:
            y = m.add(m.matmul(x, m.param(f"w{name}", (e, h * d))), m.param(f"b{name}", (h * d,)))
            return m.split_heads(y, h, d)

        q, k, v = proj("q"), proj("k"), proj("v")
        a = m.merge_heads(m.attention(q, k, v, causal=True))  # type: ignore[arg-type]
        m.output(m.matmul(a, m.param("wo", (h * d, e))))
    greedy, _ = apply(m.module, "fuse-matmul-bias-act,fuse-attention-block")
    assert "mir.fused_attention_block" not in op_names(greedy)
    assert op_names(greedy).count("mir.fused_matmul_bias_act") == 3
    staged, _ = apply(m.module, "fuse{target=cpu}")
    assert "mir.fused_attention_block" in op_names(staged)
    assert "mir.fused_matmul_bias_act" not in op_names(staged)
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((b, s, e)).astype(np.float32)}
    params = {
        op.tensor_name.data: rng.standard_normal(tuple(op.result.type.shape)).astype(np.float32)
        for op in m.module.walk()
        if op.name == "mir.param"
    }
    want = run(m.module, feeds, params)["output0"]
    got = run(staged, feeds, params)["output0"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_mixed_precision_keeps_regions_as_they_are() -> None:
    """AMP runs after fusion: fused ops take the low precision, a region keeps its body's
    types (its operands are cast back), and the compile still runs."""
    from examples.build_examples import small_cnn
    from tests.transforms.test_lowering_numeric import random_feeds

    module = small_cnn(policy="fusable")
    result = CompilePipeline(target="tpu", precision="bf16").compile(module)
    text = result.text()
    assert "mir.elementwise_region" in text and "bf16" in text
    inputs, params = random_feeds(module)
    got = result.run(inputs, params)["logits"]
    want = run(module, inputs, params)["logits"]
    assert float(np.abs(got - want).max()) < 0.02 * float(np.abs(want).max())


def test_run_time_row_bias_fuses_as_it_is() -> None:
    """A [1, N] bias computed per run (here a column sum) is the fused op's bias without
    a reshape, and computes what the unfused graph does, in the executor and compiled."""
    with ModuleBuilder("row") as m:
        x = m.input("x", (3, 5))
        w = m.param("w", (5, 4))
        h = m.input("h", (6, 4))
        row = m.reduce("sum", h, axes=[0], keepdims=True)  # [1, 4], per run
        m.output(m.relu(m.add(m.matmul(x, w), row)), names=["y"])
    fused, _ = apply(m.module, "fuse{target=cpu}")
    names = op_names(fused)
    assert "mir.fused_matmul_bias_act" in names and "mir.reshape" not in names
    (op,) = [o for o in fused.walk() if o.name == "mir.fused_matmul_bias_act"]
    assert op.operands[2].type.shape == (1, 4)
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((3, 5)).astype(np.float32),
             "h": rng.standard_normal((6, 4)).astype(np.float32)}  # fmt: skip
    params = {"w": rng.standard_normal((5, 4)).astype(np.float32)}
    assert_exact(run(fused, feeds, params), run(m.module, feeds, params))
    compiled = CompilePipeline(target="cpu", keep_stages=False).compile(m.module)
    assert_exact(compiled.run(feeds, params), run(m.module, feeds, params))


def test_column_operand_is_not_a_bias() -> None:
    """matmul [4, 4] + [4, 1] adds per row: it stays an add (it once reshaped the column
    as a row vector, which did not verify) and compiles to the unfused graph's values."""
    with ModuleBuilder("col") as m:
        x = m.input("x", (4, 8))
        w = m.param("w", (8, 4))
        c = m.input("c", (4, 1))
        m.output(m.add(m.matmul(x, w), c), names=["y"])
    fused, _ = apply(m.module, "fuse{target=cpu}")
    assert "mir.fused_matmul_bias_act" not in op_names(fused)
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((4, 8)).astype(np.float32),
             "c": rng.standard_normal((4, 1)).astype(np.float32)}  # fmt: skip
    params = {"w": rng.standard_normal((8, 4)).astype(np.float32)}
    compiled = CompilePipeline(target="cpu", keep_stages=False).compile(m.module)
    assert_exact(compiled.run(feeds, params), run(m.module, feeds, params))
