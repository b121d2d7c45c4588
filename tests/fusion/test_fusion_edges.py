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
