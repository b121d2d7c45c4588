"""run(): graph selection, leaf binding and every error path; evaluate_op; the registry."""

# MIR text spells every type in full, so its lines run long.
# ruff: noqa: E501

from __future__ import annotations

import numpy as np
import pytest
from interp_testlib import build, run1
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xdsl.traits import IsTerminator

from rlx_compile.dialects import mir
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter import (
    Env,
    ExecutionError,
    evaluate_op,
    execute_graph,
    has_impl,
    impl,
    lookup,
    run,
)
from rlx_compile.ir import main_graph, parse_module, set_output_names, sync_function_type

F32 = np.float32

ADD_GRAPH = """
func.func @g() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %y = mir.add %x, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
"""


@pytest.fixture
def add_graph() -> ModuleOp:
    return parse_module(ADD_GRAPH)


def test_run_returns_outputs_by_name(add_graph: ModuleOp) -> None:
    x = np.arange(8, dtype=F32).reshape(2, 4)
    b = np.array([10, 20, 30, 40], dtype=F32)
    out = run(add_graph, {"x": x}, {"b": b})
    assert list(out) == ["y"]
    np.testing.assert_array_equal(out["y"], x + b)
    assert out["y"].dtype == F32


def test_run_accepts_a_graph_op(add_graph: ModuleOp) -> None:
    g = main_graph(add_graph)
    out = run(g, {"x": np.zeros((2, 4), F32)}, {"b": np.ones(4, F32)})
    np.testing.assert_array_equal(out["y"], np.ones((2, 4), F32))


def test_outputs_are_fresh_arrays() -> None:
    # The output is the input itself: the caller must still get its own array.
    x = np.arange(4, dtype=F32)
    m = build({"x": TensorType([4], "f32")}, lambda x: [x])
    out = run(m, {"x": x})["out0"]
    out[0] = 99
    assert x[0] == 0
    assert out.flags.c_contiguous and out.flags.writeable


def test_missing_input_names_it_and_its_type(add_graph: ModuleOp) -> None:
    with pytest.raises(
        ExecutionError, match=r"missing input 'x' of type !rlx.tensor<\[2, 4\], f32>"
    ):
        run(add_graph, {}, {"b": np.ones(4, F32)})


def test_missing_param_names_it_and_its_type(add_graph: ModuleOp) -> None:
    with pytest.raises(ExecutionError, match=r"missing param 'b' of type !rlx.tensor<\[4\], f32>"):
        run(add_graph, {"x": np.ones((2, 4), F32)})


def test_unknown_input_lists_known_ones(add_graph: ModuleOp) -> None:
    with pytest.raises(ExecutionError, match=r"unknown input 'z' \(the graph's inputs: x\)"):
        run(add_graph, {"x": np.ones((2, 4), F32), "z": 1.0}, {"b": np.ones(4, F32)})


def test_unknown_param_lists_known_ones(add_graph: ModuleOp) -> None:
    with pytest.raises(ExecutionError, match=r"unknown param 'w' \(the graph's params: b\)"):
        run(add_graph, {"x": np.ones((2, 4), F32)}, {"b": np.ones(4, F32), "w": np.ones(1)})


def test_wrong_shape(add_graph: ModuleOp) -> None:
    with pytest.raises(ExecutionError, match=r"input 'x' has shape \[4, 2\], expected \[2, 4\]"):
        run(add_graph, {"x": np.ones((4, 2), F32)}, {"b": np.ones(4, F32)})
    with pytest.raises(ExecutionError, match=r"param 'b' has shape \[\], expected \[4\]"):
        run(add_graph, {"x": np.ones((2, 4), F32)}, {"b": np.float32(1)})


def test_numpy_array_of_another_dtype_is_an_error(add_graph: ModuleOp) -> None:
    with pytest.raises(ExecutionError, match=r"input 'x' has dtype float64, expected f32"):
        run(add_graph, {"x": np.ones((2, 4))}, {"b": np.ones(4, F32)})


def test_python_values_are_converted_to_the_declared_dtype(add_graph: ModuleOp) -> None:
    out = run(add_graph, {"x": [[1, 2, 3, 4], [5, 6, 7, 8]]}, {"b": [0.5, 0.5, 0.5, 0.5]})
    assert out["y"].dtype == F32
    np.testing.assert_array_equal(out["y"][1], np.array([5.5, 6.5, 7.5, 8.5], F32))


def test_python_scalar_input() -> None:
    m = build({"x": TensorType([], "i32")}, lambda x: [mir.NegOp(x)])
    out = run(m, {"x": 7})["out0"]
    assert out.dtype == np.int32 and out.shape == () and out == -7


def test_lossy_python_conversion_to_int_is_an_error() -> None:
    m = build({"x": TensorType([2], "i8")}, lambda x: [mir.NegOp(x)])
    with pytest.raises(ExecutionError, match=r"input 'x'.*not exactly representable"):
        run(m, {"x": [1.5, 2.0]})
    with pytest.raises(ExecutionError, match="input 'x': cannot convert list to i8"):
        run(m, {"x": [1000, 2]})
    np.testing.assert_array_equal(run(m, {"x": [1.0, -2]})["out0"], np.array([-1, 2], np.int8))


def test_symbolic_dims_bind_from_inputs_and_resolve_result_types() -> None:
    m = parse_module("""
    func.func @g() -> (!rlx.tensor<[seq, 2, 2], f32> {rlx.name = "r"},
                       !rlx.tensor<[3, seq, 4], f32> {rlx.name = "e"},
                       !rlx.tensor<[seq, 1], f32> {rlx.name = "n"}) {
      %x = mir.input "x" : !rlx.tensor<[seq, 4], f32>
      %r = mir.reshape %x : !rlx.tensor<[seq, 4], f32> -> !rlx.tensor<[seq, 2, 2], f32>
      %e = mir.expand %x : !rlx.tensor<[seq, 4], f32> -> !rlx.tensor<[3, seq, 4], f32>
      %n = mir.narrow %x axis 1 start 2 : !rlx.tensor<[seq, 4], f32> -> !rlx.tensor<[seq, 1], f32>
      func.return %r, %e, %n : !rlx.tensor<[seq, 2, 2], f32>, !rlx.tensor<[3, seq, 4], f32>,
                               !rlx.tensor<[seq, 1], f32>
    }
    """)
    for seq in (1, 5):
        x = np.arange(seq * 4, dtype=F32).reshape(seq, 4)
        out = run(m, {"x": x})
        np.testing.assert_array_equal(out["r"], x.reshape(seq, 2, 2))
        np.testing.assert_array_equal(out["e"], np.broadcast_to(x, (3, seq, 4)))
        np.testing.assert_array_equal(out["n"], x[:, 2:3])


def test_a_symbol_bound_to_two_sizes_is_an_error() -> None:
    t = TensorType(["seq", 4], "f32")
    m = build({"a": t, "b": t}, lambda a, b: [mir.AddOp(a, b)])
    with pytest.raises(
        ExecutionError, match=r"symbolic dim 'seq' is 5 in input 'a' but 7 in input 'b'"
    ):
        run(m, {"a": np.ones((5, 4), F32), "b": np.ones((7, 4), F32)})


def test_graph_selection_by_name() -> None:
    m = parse_module("""
    func.func @double() -> (!rlx.tensor<[2], f32> {rlx.name = "y"}) {
      %x = mir.input "x" : !rlx.tensor<[2], f32>
      %y = mir.add %x, %x : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
      func.return %y : !rlx.tensor<[2], f32>
    }
    func.func @negate() -> (!rlx.tensor<[2], f32> {rlx.name = "y"}) {
      %x = mir.input "x" : !rlx.tensor<[2], f32>
      %y = mir.neg %x : !rlx.tensor<[2], f32>
      func.return %y : !rlx.tensor<[2], f32>
    }
    """)
    x = np.array([1, 2], F32)
    np.testing.assert_array_equal(run(m, {"x": x}, graph="double")["y"], [2, 4])
    np.testing.assert_array_equal(run(m, {"x": x}, graph="negate")["y"], [-1, -2])
    with pytest.raises(ExecutionError, match="several graphs"):
        run(m, {"x": x})
    with pytest.raises(ExecutionError, match="no graph named @nope"):
        run(m, {"x": x}, graph="nope")


CALL_MODULE = """
func.func @affine(%a: !rlx.tensor<[n], f32>, %b: !rlx.tensor<[n], f32>)
    -> (!rlx.tensor<[n], f32>, !rlx.tensor<[n], f32>) {
  %s = mir.param "s" : !rlx.tensor<[], f32>
  %m = mir.mul %a, %s : (!rlx.tensor<[n], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[n], f32>
  %y = mir.add %m, %b : (!rlx.tensor<[n], f32>, !rlx.tensor<[n], f32>) -> !rlx.tensor<[n], f32>
  func.return %y, %m : !rlx.tensor<[n], f32>, !rlx.tensor<[n], f32>
}
func.func @main() -> (!rlx.tensor<[n], f32> {rlx.name = "y"},
                      !rlx.tensor<[n], f32> {rlx.name = "z"}) {
  %x = mir.input "x" : !rlx.tensor<[n], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[1], f32>
  %c = mir.expand %one : !rlx.tensor<[1], f32> -> !rlx.tensor<[n], f32>
  %y, %m = func.call @affine(%x, %c)
      : (!rlx.tensor<[n], f32>, !rlx.tensor<[n], f32>) -> (!rlx.tensor<[n], f32>, !rlx.tensor<[n], f32>)
  %z, %m2 = func.call @affine(%m, %x)
      : (!rlx.tensor<[n], f32>, !rlx.tensor<[n], f32>) -> (!rlx.tensor<[n], f32>, !rlx.tensor<[n], f32>)
  func.return %y, %z : !rlx.tensor<[n], f32>, !rlx.tensor<[n], f32>
}
"""


def test_func_call_binds_block_arguments_and_shares_params() -> None:
    m = parse_module(CALL_MODULE)
    for n in (3, 1):
        x = np.arange(1, n + 1, dtype=F32)
        out = run(m, {"x": x}, {"s": np.float32(10)})
        np.testing.assert_array_equal(out["y"], x * 10 + 1)  # first result of call 1
        np.testing.assert_array_equal(out["z"], x * 100 + x)  # call 2 reads call 1's 2nd
    with pytest.raises(ExecutionError, match="missing param 's'"):
        run(m, {"x": x})


def test_a_graph_with_block_arguments_cannot_be_run_directly() -> None:
    m = parse_module(CALL_MODULE)
    with pytest.raises(ExecutionError, match="takes 2 block arguments"):
        run(m, {}, {"s": 1.0}, graph="affine")


def test_recursive_call_is_an_error() -> None:
    m = parse_module("""
    func.func @f(%a: !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32> {
      %r = func.call @f(%a) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
      func.return %r : !rlx.tensor<[2], f32>
    }
    func.func @main() -> (!rlx.tensor<[2], f32> {rlx.name = "y"}) {
      %x = mir.input "x" : !rlx.tensor<[2], f32>
      %r = func.call @f(%x) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
      func.return %r : !rlx.tensor<[2], f32>
    }
    """)
    with pytest.raises(ExecutionError, match=r"recursive call of @f \(main -> f\)"):
        run(m, {"x": np.ones(2, F32)}, graph="main")


def test_unverifiable_graph_is_rejected() -> None:
    # The add's declared result type disagrees with its shape rule. Parsing does not
    # verify; a pass that forgot to re-infer would leave the same state.
    m = parse_module("""
    func.func @g() -> (!rlx.tensor<[1, 4], f32> {rlx.name = "y"}) {
      %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
      %y = mir.add %x, %x : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[1, 4], f32>
      func.return %y : !rlx.tensor<[1, 4], f32>
    }
    """)
    with pytest.raises(ExecutionError, match="@g does not verify: result type"):
        run(m, {"x": np.ones((2, 4), F32)})


def test_kernel_errors_name_the_op_and_its_location() -> None:
    m = parse_module(
        """
    func.func @g() -> (!rlx.tensor<[2], f32> {rlx.name = "y"}) {
      %t = mir.input "t" : !rlx.tensor<[3], f32>
      %i = mir.input "i" : !rlx.tensor<[2], i32>
      %y = mir.gather %t, %i axis 0 : (!rlx.tensor<[3], f32>, !rlx.tensor<[2], i32>) -> !rlx.tensor<[2], f32>
      func.return %y : !rlx.tensor<[2], f32>
    }
    """,
        filename="model.mlir",
    )
    with pytest.raises(
        ExecutionError,
        match=r"mir.gather %y \(at model.mlir:5:7\): gather index 3 is out of range",
    ):
        run(m, {"t": np.ones(3, F32), "i": np.array([0, 3], np.int32)})


# ---------------------------------------------------------------------------------
# evaluate_op and the registry
# ---------------------------------------------------------------------------------


def test_evaluate_op_on_a_standalone_op() -> None:
    m = parse_module(ADD_GRAPH)
    add = next(op for op in main_graph(m).walk() if isinstance(op, mir.AddOp))
    (y,) = evaluate_op(add, [np.ones((2, 4), F32), np.arange(4, dtype=F32)])
    np.testing.assert_array_equal(y, np.ones((2, 4), F32) + np.arange(4, dtype=F32))
    with pytest.raises(ExecutionError, match=r"operand #1 of mir.add %y.*has shape \[3\]"):
        evaluate_op(add, [np.ones((2, 4), F32), np.ones(3, F32)])
    with pytest.raises(ExecutionError, match="expected 2 operands, got 1"):
        evaluate_op(add, [np.ones((2, 4), F32)])


def test_evaluate_op_leaf_without_a_binding() -> None:
    op = mir.InputOp("x", TensorType([2], "f32"))
    with pytest.raises(ExecutionError, match=r"input 'x' of type .* is not bound"):
        evaluate_op(op, [])
    (x,) = evaluate_op(op, [], Env(inputs={"x": np.ones(2, F32)}))
    np.testing.assert_array_equal(x, [1, 1])


def test_every_mir_op_has_an_implementation() -> None:
    # Terminators (mir.yield) are not executed: the graph walker reads their operands.
    kernels = [op for op in mir.MIR_OPS if not op.has_trait(IsTerminator)]
    assert [op.name for op in kernels if not has_impl(op)] == []
    assert has_impl(func.CallOp)


@irdl_op_definition
class _TwiceOp(ShapedOp):
    """A test-only op from outside MIR, to show the registry is open."""

    name = "test.twice"
    input = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, props, *, input):  # type: ignore[no-untyped-def]
        return (input,)


def test_registry_is_open_and_rejects_duplicates() -> None:
    op_cls = _TwiceOp
    x = mir.InputOp("x", TensorType([3], "f32"))
    twice = op_cls.__new__(op_cls)
    twice._build({"input": x.result})
    with pytest.raises(ExecutionError, match=r"no reference implementation for 'test.twice'"):
        evaluate_op(twice, [np.ones(3, F32)])

    @impl(op_cls)
    def _twice(op, args, env):  # type: ignore[no-untyped-def]
        return [args[0] * 2]

    assert lookup(twice) is _twice
    np.testing.assert_array_equal(evaluate_op(twice, [np.ones(3, F32)])[0], [2, 2, 2])
    with pytest.raises(ValueError, match="exists"):
        impl(op_cls)(_twice)
    with pytest.raises(ValueError, match="exists"):
        impl(mir.AddOp)(_twice)


@irdl_op_definition
class _NamedOp(ShapedOp):
    """A test-only op registered by name rather than by class."""

    name = "test.named_negate"
    input = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, props, *, input):  # type: ignore[no-untyped-def]
        return (input,)


def test_registration_by_op_name() -> None:
    @impl("test.named_negate")
    def _negate(op, args, env):  # type: ignore[no-untyped-def]
        return [-args[0]]

    assert has_impl("test.named_negate") and not has_impl(_NamedOp)
    op = _NamedOp.__new__(_NamedOp)
    op._build({"input": mir.InputOp("x", TensorType([2], "f32")).result})
    assert lookup(op) is _negate
    np.testing.assert_array_equal(evaluate_op(op, [np.array([1, -2], F32)])[0], [-1, 2])


def test_a_kernel_returning_the_wrong_type_is_caught() -> None:
    @irdl_op_definition
    class BadOp(ShapedOp):
        name = "test.bad"
        input = operand_def(TensorType)
        result = result_def(TensorType)

        @classmethod
        def infer(cls, props, *, input):  # type: ignore[no-untyped-def]
            return (input,)

    @impl(BadOp)
    def _bad(op, args, env):  # type: ignore[no-untyped-def]
        return [args[0].astype(np.float64)]

    bad = BadOp.__new__(BadOp)
    bad._build({"input": mir.InputOp("x", TensorType([3], "f32")).result})
    with pytest.raises(ExecutionError, match=r"result #0 of test.bad has dtype float64"):
        evaluate_op(bad, [np.ones(3, F32)])


def test_use_before_definition_is_reported() -> None:
    # Ops out of topological order (a broken pass): the walker names the op.
    x = mir.InputOp("x", TensorType([2], "f32"))
    neg = mir.NegOp(x.result)
    block = Block([neg, x])
    block.add_op(func.ReturnOp(neg.result))
    f = func.FuncOp("g", ([], [neg.result.type]), Region(block))
    sync_function_type(f)
    set_output_names(f, ["y"])
    with pytest.raises(ExecutionError, match=r"mir.neg uses a value that is not defined before it"):
        execute_graph(f, [], Env(inputs={"x": np.ones(2, F32)}))


def test_run1_helper_round_trip() -> None:
    # The helper every other test uses: one op, inputs named a0, a1, ...
    y = run1(lambda a, b: [mir.SubOp(a, b)], np.array([5, 7], F32), np.array([1, 2], F32))
    np.testing.assert_array_equal(y, [4, 5])


def test_results_do_not_depend_on_the_input_memory_layout() -> None:
    # NumPy's summation order follows memory layout (pairwise only along contiguous
    # axes); the oracle must give the same bits for the same values whatever the layout.
    t = TensorType([4, 3000], "f32")
    m = build(
        {"x": t},
        lambda x: [
            mir.ReduceSumOp(x, [1]),
            mir.SoftmaxOp(x, 1),
            mir.LayerNormOp(x, mir.ConstantOp(np.ones(3000, F32)).result, axis=1),
            mir.ExpOp(x),
        ],
    )
    x = np.random.default_rng(0).normal(size=(4, 3000)).astype(F32)
    strided = np.zeros((8, 3000), F32)
    strided[::2] = x
    layouts = [x, np.asfortranarray(x), strided[::2]]
    outs = [run(m, {"x": v}) for v in layouts]
    for other in outs[1:]:
        for name, value in outs[0].items():
            assert value.tobytes() == other[name].tobytes(), name
