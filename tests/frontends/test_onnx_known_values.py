"""Values the importer knows without ops: Constant nodes and static integer shape
arithmetic are kept as arrays and become ``mir.constant`` only where a converter reads
them as data. Checked against onnxruntime and against the module the converters make
when every node is converted as ops (the importer's ``_KNOWN_KINDS`` emptied)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import OnnxImportError, import_model, importer, param_values
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_block, main_graph, print_module

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


def _const(name: str, values: list[int] | list[float], dtype: int = I64) -> onnx.NodeProto:
    shape = [len(values)] if isinstance(values, list) else []
    return helper.make_node(
        "Constant", [], [name], name=f"make_{name}",
        value=helper.make_tensor(f"{name}_value", dtype, shape, values),
    )  # fmt: skip


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[str],
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g", inputs, [helper.make_empty_tensor_value_info(o) for o in outputs]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _as_ops(model: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch) -> str:
    """The module the converters make of ``model`` with no node kept as a known value."""
    with monkeypatch.context() as patch:
        patch.setattr(importer, "_KNOWN_KINDS", frozenset())
        return print_module(import_model(model))


def _import_counting_constants(
    model: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch
) -> tuple[ModuleOp, int]:
    """The imported module, and how many ``mir.constant`` ops the import constructed."""
    built: list[mir.ConstantOp] = []
    make = mir.ConstantOp.__init__

    def counted(op: mir.ConstantOp, *args: Any, **kwargs: Any) -> None:
        built.append(op)
        make(op, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(mir.ConstantOp, "__init__", counted)
        module = import_model(model)
    return module, len(built)


def _matches_onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    module = import_model(model)
    got = run(module, feeds, param_values(model, module))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for out, want in zip(session.get_outputs(), session.run(None, feeds), strict=True):
        np.testing.assert_array_equal(np.asarray(got[out.name]), want, err_msg=out.name)


def _flatten_model() -> onnx.ModelProto:
    # y = x.reshape(x.size(0), -1), as torch exports it: Shape -> Gather -> Unsqueeze ->
    # Concat -> Reshape, with the indices, axes and -1 as Constant nodes.
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        _const("zero", [0]),
        helper.make_node("Squeeze", ["zero", "axes"], ["index"]),
        _const("axes", [0]),
        helper.make_node("Gather", ["shape", "index"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"]),
        _const("rest", [-1]),
        helper.make_node("Concat", ["batch1", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    nodes.insert(2, nodes.pop(3))  # "axes" before its first reader
    return _model(nodes, [helper.make_tensor_value_info("x", F, [2, 3, 4])], ["y"])


def test_shape_arithmetic_read_as_operands_builds_no_constant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = _flatten_model()
    module, built = _import_counting_constants(model, monkeypatch)
    assert built == 0  # not made and erased: never made
    kinds = [op.name for op in graph_block(main_graph(module)).ops]
    assert kinds == ["mir.input", "mir.reshape", "func.return"]
    # The converters made the same module, folding and then erasing the chain.
    assert print_module(module) == _as_ops(model, monkeypatch)
    _matches_onnxruntime(model, {"x": np.arange(24, dtype=np.float32).reshape(2, 3, 4)})


def test_known_values_read_as_data() -> None:
    # A float Constant scales x; the shape arithmetic is also a graph output, and a
    # result of it is added to data: each is a mir.constant where it is read, located
    # at the node that made it.
    nodes = [
        _const("scale", [0.5, 2.0, -1.0, 4.0], F),
        helper.make_node("Mul", ["x", "scale"], ["y"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        _const("one", [1]),
        helper.make_node("Add", ["shape", "one"], ["grown"]),
        helper.make_node("Cast", ["grown"], ["grown_f"], to=F),
        helper.make_node("ReduceSum", ["grown_f"], ["total"], keepdims=0),
        helper.make_node("Add", ["y", "total"], ["z"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [3, 4])], ["z", "shape"])
    module = import_model(model)
    locations = {
        str(op.location)
        for op in graph_block(main_graph(module)).ops
        if isinstance(op, mir.ConstantOp)
    }
    assert any("make_scale" in loc for loc in locations), locations
    feeds = {"x": np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)}
    _matches_onnxruntime(model, feeds)


def test_results_past_the_element_type_wrap_as_the_executor_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 2^30 * 4 does not fit an int32: exact arithmetic would give 2^32, the run wraps to
    # 0. The node is converted as ops and folded by the reference executor.
    nodes = [
        _const("big", [2**30, 3], I32),
        _const("four", [4, 4], I32),
        helper.make_node("Mul", ["big", "four"], ["product"]),
        helper.make_node("Cast", ["product"], ["y"], to=F),
        helper.make_node("Add", ["x", "y"], ["z"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [2])], ["z"])
    module = import_model(model)
    assert print_module(module) == _as_ops(model, monkeypatch)
    x = np.zeros(2, np.float32)
    got = run(module, {"x": x}, {})
    np.testing.assert_array_equal(got["z"], np.asarray([0.0, 12.0], np.float32))


def test_mixed_element_types_are_still_refused() -> None:
    nodes = [
        _const("a", [1, 2], I32),
        _const("b", [3, 4], I64),
        helper.make_node("Add", ["a", "b"], ["c"]),
        helper.make_node("Cast", ["c"], ["y"], to=F),
        helper.make_node("Add", ["x", "y"], ["z"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [2])], ["z"])
    with pytest.raises(OnnxImportError, match="Add"):
        import_model(model)


def test_a_known_value_read_inside_a_region_and_after_it() -> None:
    scale = _const("scale", [1.0, -2.0], F)
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["x", "scale"], ["then_y"])], "then", [],
        [helper.make_tensor_value_info("then_y", F, [2])],
    )  # fmt: skip
    else_branch = helper.make_graph(
        [helper.make_node("Sub", ["x", "scale"], ["else_y"])], "else", [],
        [helper.make_tensor_value_info("else_y", F, [2])],
    )  # fmt: skip
    nodes = [
        scale,
        helper.make_node("If", ["cond"], ["y"], then_branch=then_branch, else_branch=else_branch),
        helper.make_node("Mul", ["y", "scale"], ["z"]),
    ]
    inputs = [
        helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        helper.make_tensor_value_info("x", F, [2]),
    ]
    model = _model(nodes, inputs, ["z"])
    x = np.asarray([3.0, 5.0], np.float32)
    for cond in (True, False):
        _matches_onnxruntime(model, {"cond": np.asarray(cond), "x": x})


def test_a_constant_in_an_unrolled_loop_body() -> None:
    # The body's Constant is bound anew at each step of the unrolled loop, and the name
    # is forgotten afterwards.
    body = helper.make_graph(
        [
            _const("step", [1.5, -0.5], F),
            helper.make_node("Add", ["v_in", "step"], ["v_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", F, [2]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", F, [2]),
        ],
    )
    nodes = [
        _const("trips", [3]),
        helper.make_node("Squeeze", ["trips"], ["trip_count"]),
        helper.make_node("Constant", [], ["go"], value=helper.make_tensor("t", 9, [], [True])),
        helper.make_node("Loop", ["trip_count", "go", "x"], ["y"], body=body),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [2])], ["y"])
    _matches_onnxruntime(model, {"x": np.asarray([1.0, 2.0], np.float32)})


def test_constant_of_shape_and_the_shape_of_a_known_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Exporters' masks and padding: ConstantOfShape of a known shape whose Shape is a
    # Reshape's target (read as an operand only: never made), and a second one read as
    # data (made where Add reads it, located at its node).
    fill = helper.make_tensor("one", F, [1], [1.0])
    nodes = [
        _const("dims", [2, 6]),
        helper.make_node("ConstantOfShape", ["dims"], ["ones"], name="ones", value=fill),
        helper.make_node("Shape", ["ones"], ["target"]),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
        helper.make_node("ConstantOfShape", ["dims"], ["bias"], name="bias", value=fill),
        helper.make_node("Add", ["y", "bias"], ["z"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [3, 4])], ["z"])
    module, built = _import_counting_constants(model, monkeypatch)
    assert built == 1
    (constant,) = [
        op for op in graph_block(main_graph(module)).ops if isinstance(op, mir.ConstantOp)
    ]
    assert '"bias"' in str(constant.location)
    # The converters make the same ops (the constant at its ConstantOfShape node).
    assert sorted(print_module(module).splitlines()) == sorted(
        _as_ops(model, monkeypatch).splitlines()
    )
    _matches_onnxruntime(model, {"x": np.arange(12, dtype=np.float32).reshape(3, 4)})


def test_a_cast_of_known_values_to_a_sub_byte_integer() -> None:
    # The result's range check reads int4's bounds (np.iinfo refuses the type): the
    # import used to fail with "Invalid integer data type 'V'".
    nodes = [
        _const("small", [1, -2]),
        helper.make_node("Cast", ["small"], ["narrow"], to=TensorProto.INT4),
        helper.make_node("Cast", ["narrow"], ["wide"], to=F),
        helper.make_node("Add", ["x", "wide"], ["z"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [2])], ["z"], opset=21)
    got = run(import_model(model), {"x": np.zeros(2, np.float32)}, {})
    np.testing.assert_array_equal(got["z"], np.asarray([1.0, -2.0], np.float32))
