"""The cleanup acceptance cases of the spec (§9.7, G1-G10), built with the Python API and
checked by op counts, values and the reference executor."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, graph_params, main_graph, print_module
from rlx_compile.params import save_bindings
from rlx_compile.transforms.numeric_lint import lint_numerics
from rlx_compile.transforms.param_hoist import run_prepared
from rlx_compile.transforms.param_specialize import specialize_params
from tests.transforms.cleanup_testlib import apply, assert_same


def build(body: Callable[[ModuleBuilder], None], name: str = "g") -> ModuleOp:
    with ModuleBuilder(name) as m:
        body(m)
    return m.module


def ops(module: ModuleOp) -> list[str]:
    """Op names of the main graph, terminator excluded."""
    return [op.name for op in main_graph(module).regions[0].block.ops][:-1]


def output_op(module: ModuleOp, index: int = 0) -> object:
    return main_graph(module).regions[0].block.last_op.operands[index].owner  # type: ignore[union-attr]


def constant_output(module: ModuleOp, index: int = 0) -> np.ndarray:
    op = output_op(module, index)
    assert isinstance(op, mir.ConstantOp), f"output {index} is {op}"
    return op.to_numpy()


# -- G1 constant-fold -------------------------------------------------------------------------


def test_g1_constant_fold() -> None:
    m = apply(
        "constant-fold", build(lambda m: m.output(m.add(m.constant([2.0]), m.constant([3.0]))))
    )
    np.testing.assert_array_equal(constant_output(m), np.float32([5.0]))
    m = apply(
        "constant-fold", build(lambda m: m.output(m.add(m.input("x", (1,)), m.constant([1.0]))))
    )
    assert "mir.add" in ops(m)
    m = apply(
        "constant-fold",
        build(lambda m: m.output(m.add(m.constant(np.ones((2, 1))), m.constant([1.0, 2.0, 3.0])))),
    )
    np.testing.assert_array_equal(constant_output(m), np.float32([[2, 3, 4], [2, 3, 4]]))


def test_g1_f16_constants_fold_with_their_own_decoding() -> None:
    # RLX keeps an f16 constant and its cast unfolded because its folder read every
    # payload as f32 words; constants here decode by dtype, so the cast folds correctly.
    m = apply(
        "constant-fold", build(lambda m: m.output(m.cast(m.constant([1.5, -2.0], "f16"), "f32")))
    )
    np.testing.assert_array_equal(constant_output(m), np.float32([1.5, -2.0]))


# -- G2 algebraic-simplify --------------------------------------------------------------------


def test_g2_algebraic_simplify() -> None:
    def graph(const: np.ndarray, op: str) -> ModuleOp:
        def body(m: ModuleBuilder) -> None:
            x = m.input("x", (4,))
            m.output(getattr(m, op)(x, m.constant(const)))

        return build(body)

    zeros4, ones4 = np.zeros(4, np.float32), np.ones(4, np.float32)
    # x · zeros[4]: the zeros constant itself (float x · 0 needs assume-finite, see below).
    m = apply("algebraic-simplify{assume-finite=true}", graph(zeros4, "mul"))
    np.testing.assert_array_equal(constant_output(m), zeros4)
    assert isinstance(output_op(apply("algebraic-simplify", graph(zeros4, "add"))), mir.InputOp)
    assert isinstance(output_op(apply("algebraic-simplify", graph(ones4, "mul"))), mir.InputOp)
    # Strict: a [1] zero into a [4] result is left alone.
    m = apply("algebraic-simplify{assume-finite=true}", graph(np.zeros(1, np.float32), "mul"))
    assert "mir.mul" in ops(m)


def test_float_times_zero_keeps_ieee_semantics_by_default() -> None:
    def body(m: ModuleBuilder) -> None:
        m.output(m.mul(m.input("x", (3,)), m.constant(np.zeros(3, np.float32))), names=["y"])

    x = {"x": np.float32([np.inf, np.nan, -2.0])}
    kept = apply("algebraic-simplify", build(body))
    assert "mir.mul" in ops(kept)
    y = run(kept, x)["y"]
    assert np.isnan(y[:2]).all() and y[2] == 0 and np.signbit(y[2])
    finite = apply("algebraic-simplify{assume-finite=true}", build(body))
    np.testing.assert_array_equal(run(finite, x)["y"], np.zeros(3, np.float32))


# -- G3 sccp ------------------------------------------------------------------------------------


def test_g3_sccp_cases() -> None:
    def where(cond: list[bool], a: object, b: object, dtype: str = "f32") -> ModuleOp:
        def body(m: ModuleBuilder) -> None:
            c = m.constant(np.array(cond))
            lhs = m.constant(a, dtype) if a is not None else m.input("x", (len(cond),), dtype)
            rhs = m.constant(b, dtype) if b is not None else m.input("y", (len(cond),), dtype)
            m.output(m.where(c, lhs, rhs))

        return apply("sccp", build(body))

    np.testing.assert_array_equal(constant_output(where([True, True], [5, 5], None)), [5, 5])
    assert isinstance(output_op(where([False, False], [5, 5], None)), mir.InputOp)
    out = output_op(where([False, False], None, None, "i32"))
    assert isinstance(out, mir.InputOp) and out.tensor_name.data == "y"
    mixed = where([True, False, True], [1, 2, 3], [10, 20, 30])
    np.testing.assert_array_equal(constant_output(mixed), [1, 20, 3])

    def relu_of_where(m: ModuleBuilder) -> None:
        w = m.where(m.constant(np.array([True, True])), m.constant([-2.0, 3.0]), m.input("x", (2,)))
        m.output(m.relu(w))

    np.testing.assert_array_equal(constant_output(apply("sccp", build(relu_of_where))), [0, 3])


def test_g3_sccp_leaves_runtime_and_where_free_graphs_alone() -> None:
    def runtime(m: ModuleBuilder) -> None:
        m.output(m.where(m.input("c", (2,), "bool"), m.constant([1.0, 2.0]), m.input("x", (2,))))

    def no_where(m: ModuleBuilder) -> None:
        m.output(m.add(m.constant([1.0, 2.0]), m.constant([3.0, 4.0])))

    for body in (runtime, no_where):
        module = build(body)
        assert print_module(apply("sccp", module.clone())) == print_module(module)


# -- G4 cse, G5 dce -----------------------------------------------------------------------------


def test_g4_cse_merges_transposes_and_matmuls() -> None:
    def body(m: ModuleBuilder) -> None:
        x, w = m.input("x", (4, 3)), m.param("w", (4, 3))
        a = m.matmul(m.transpose(x, (1, 0)), w)
        b = m.matmul(m.transpose(x, (1, 0)), w)
        m.output(a, b)

    module = build(body)
    assert len(ops(module)) == 6  # the spec's 7 nodes count the output node too
    assert len(ops(apply("cse", module))) == 4


def test_g5_dce_removes_the_unused_param() -> None:
    def body(m: ModuleBuilder) -> None:
        x, w = m.input("x", (2, 4)), m.param("w", (4, 3))
        m.param("p", (7,))
        m.output(m.matmul(x, w))

    assert ops(apply("dce", build(body))) == ["mir.input", "mir.param", "mir.matmul"]


# -- G7 promote-params, G8 param-specialize, G9 param-hoist ------------------------------------


def test_g7_promote_params_to_inputs() -> None:
    def body(m: ModuleBuilder) -> None:
        m.output(m.matmul(m.input("x", (2, 4)), m.param("w", (4, 3))))

    before = build(body)
    after = apply("promote-params{params=w,unknown}", before.clone())
    inputs = graph_inputs(main_graph(after))
    assert [(leaf.name, leaf.type) for leaf in inputs][1] == (
        "w",
        graph_params(main_graph(before))[0].type,
    )
    assert graph_params(main_graph(after)) == []
    assert len(ops(after)) == len(ops(before))


def test_g8_param_specialize_then_fold(tmp_path: Path) -> None:
    def body(m: ModuleBuilder) -> None:
        w = m.param("w", (2,))
        m.output(m.add(m.input("x", (2,)), m.mul(w, m.constant([2.0, 2.0]))), names=["y"])

    module = build(body)
    with pytest.raises(ValueError, match=r"param 'w' has shape \[3\], expected"):
        specialize_params(module.clone(), {"w": np.zeros(3, np.float32)})
    path = tmp_path / "w.npz"
    save_bindings(path, {"w": np.float32([1.0, -1.0])})
    folded = apply(f'param-specialize{{bindings="{path}"}},constant-fold', module.clone())
    assert ops(folded) == ["mir.input", "mir.constant", "mir.add"]
    np.testing.assert_array_equal(run(folded, {"x": np.float32([1, 1])})["y"], [3, -1])


def _g9() -> ModuleOp:
    def body(m: ModuleBuilder) -> None:
        x, w, s = m.input("x", (2, 4)), m.param("w", (4, 4)), m.param("s", (1,))
        m.output(m.matmul(x, m.mul(w, s)), names=["y"])

    return build(body, "g9")


def test_g9_param_hoist_splits_the_param_only_closure() -> None:
    module = apply("param-hoist", _g9())
    prepare, main = main_graph(module, "g9_prepare"), main_graph(module)
    assert main.sym_name.data == "g9"  # type: ignore[attr-defined]
    prep_ops = [op.name for op in prepare.walk()]
    main_ops = [op.name for op in main.walk()]
    assert "mir.mul" in prep_ops and "mir.matmul" not in prep_ops
    assert "mir.matmul" in main_ops and "mir.mul" not in main_ops
    assert [leaf.name for leaf in graph_inputs(main)] == ["x", "__rlx_prep_0"]
    assert {leaf.name for leaf in graph_params(prepare)} == {"w", "s"}
    assert graph_params(main) == []

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    params = {"w": rng.standard_normal((4, 4)).astype(np.float32), "s": np.float32([0.5])}
    want = run(_g9(), {"x": x}, params)["y"]
    got = run_prepared(module, {"x": x}, params)["y"]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(run_prepared(module, {"x": x}, params)["y"], got)
    # A new weight goes through prepare again.
    params["w"] = params["w"] * 2
    np.testing.assert_allclose(run_prepared(module, {"x": x}, params)["y"], 2 * want, atol=1e-5)


def test_g9_nothing_to_hoist() -> None:
    def body(m: ModuleBuilder) -> None:
        m.output(m.matmul(m.input("x", (2, 4)), m.param("w", (4, 4))))

    module = build(body)
    assert print_module(apply("param-hoist", module.clone())) == print_module(module)


# -- G10 numeric-lint ---------------------------------------------------------------------------


def test_g10_numeric_lint() -> None:
    def div(a: object, b: object) -> list:  # type: ignore[type-arg]
        def body(m: ModuleBuilder) -> None:
            lhs = m.input("x", (1,)) if a is None else m.constant([a])
            m.output(m.div(lhs, m.constant([b])))

        return lint_numerics(build(body))

    (lint,) = div(1.0, 0.0)
    assert lint.kind == "pos-inf" and lint.op.name == "mir.div" and lint.fix
    assert div(2.0, 4.0) == [] and div(None, 0.0) == []
    (nan,) = lint_numerics(build(lambda m: m.output(m.relu(m.constant([np.nan])))))
    assert nan.kind == "nan" and nan.op.name == "mir.constant"


def test_cleanup_keeps_the_examples_numerically() -> None:
    from examples.build_examples import decoder_block
    from tests.transforms.test_lowering_numeric import random_feeds

    module = apply("lower-hir-to-mir{policy=fusable}", decoder_block())
    inputs, params = random_feeds(module)
    want = run(module, inputs, params)
    cleaned = apply("inline,algebraic-simplify,sccp,cse,dce,constant-fold", module.clone())
    assert_same(run(cleaned, inputs, params), want)
