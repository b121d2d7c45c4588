"""ONNX models with open dims import once, symbolically, and the one MIR module runs at
every size: shape arithmetic on symbolic dims (Shape/Gather/Concat/Reshape, Range, Slice on
a symbolic axis, sizes used as data) checked against onnxruntime at several sizes, through
the MIR executor and through ``rlx_compile.backend`` with no dims given (one symbolic
compile, a plan per shape fed)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile.dialects.dim_expr import DimExpr
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, main_graph

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _i64(name: str, values: list[int]) -> onnx.TensorProto:
    return helper.make_tensor(name, I64, [len(values)], values)


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[str],
    inits: list[onnx.TensorProto] = (),  # type: ignore[assignment]
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        inputs,
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        list(inits),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(
    model: onnx.ModelProto, feeds_list: list[dict[str, np.ndarray]], tol: float = 1e-6
) -> None:
    module = import_model(model)
    shapes = [v.type.shape for v in graph_inputs(main_graph(module))]
    assert any(not isinstance(d, int) for s in shapes for d in s), "expected open dims"
    params = param_values(model, module)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rep = backend.prepare(model)
    compiled = rep.compiled
    assert compiled is not None and compiled.symbolic_error is None, "not compiled symbolically"
    for feeds in feeds_list:
        expected = sess.run(None, feeds)
        got = run(module, feeds, params)
        from_backend = rep.run(feeds)
        for i, (name, want) in enumerate(zip(rep.output_names, expected, strict=True)):
            np.testing.assert_allclose(got[name], want, rtol=tol, atol=tol, err_msg=name)
            back_tol = max(tol, 1e-5)
            np.testing.assert_allclose(
                from_backend[i], want, rtol=back_tol, atol=back_tol, err_msg=name
            )
    signatures = {tuple(sorted((k, v.shape) for k, v in f.items())) for f in feeds_list}
    assert len(compiled.cached_shapes) == len(signatures)


def _x(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def test_size_of_batch_reshapes_and_feeds_data() -> None:
    # y = x.reshape(x.size(0), -1); n = x.size(1) * x.size(2) as data; r = arange(x.size(1))
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),  # scalar index
        helper.make_node("Unsqueeze", ["b", "ax0"], ["b1"]),
        helper.make_node("Concat", ["b1", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
        helper.make_node("Gather", ["s", "one"], ["t"], axis=0),
        helper.make_node("Gather", ["s", "two"], ["f"], axis=0),
        helper.make_node("Mul", ["t", "f"], ["n"]),
        helper.make_node("Range", ["zero", "t", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=F),
        helper.make_node("ReduceSum", ["y", "ax1"], ["ys"], keepdims=0),
        helper.make_node("Cast", ["n"], ["nf"], to=F),
        helper.make_node("Div", ["ys", "nf"], ["mean"]),
    ]
    inits = [
        helper.make_tensor("zero", I64, [], [0]),
        helper.make_tensor("one", I64, [], [1]),
        helper.make_tensor("two", I64, [], [2]),
        _i64("ax0", [0]),
        _i64("ax1", [1]),
        _i64("minus1", [-1]),
    ]
    x = helper.make_tensor_value_info("x", F, ["batch", "seq", 4])
    model = _model(nodes, [x], ["y", "n", "rf", "mean"], inits)
    _check(model, [{"x": _x(2, 3, 4)}, {"x": _x(5, 1, 4)}, {"x": _x(1, 7, 4)}])


def test_slices_of_a_symbolic_axis() -> None:
    # x[:, 1:], x[:, -1:], x[:, :-2], x[:, ::2] and the flatten of [batch, seq]
    nodes = [
        helper.make_node("Slice", ["x", "s1", "big", "a1"], ["tail"]),
        helper.make_node("Slice", ["x", "m1", "big", "a1"], ["last"]),
        helper.make_node("Slice", ["x", "zero1", "m2", "a1"], ["head"]),
        helper.make_node("Slice", ["x", "zero1", "big", "a1", "two1"], ["even"]),
        helper.make_node("Flatten", ["x"], ["flat"], axis=2),
        helper.make_node("Pad", ["x", "pads"], ["padded"]),
    ]
    inits = [
        _i64("s1", [1]),
        _i64("m1", [-1]),
        _i64("m2", [-2]),
        _i64("zero1", [0]),
        _i64("two1", [2]),
        _i64("a1", [1]),
        _i64("big", [2**63 - 1]),
        _i64("pads", [0, 1, 0, 0, 2, 0]),
    ]
    x = helper.make_tensor_value_info("x", F, ["batch", "seq", 3])
    model = _model(nodes, [x], ["tail", "last", "head", "even", "flat", "padded"], inits)
    _check(model, [{"x": _x(2, 5, 3)}, {"x": _x(1, 8, 3)}, {"x": _x(3, 3, 3)}])


def test_conv_and_pool_with_symbolic_spatial_dims() -> None:
    w = helper.make_tensor(
        "w", F, [4, 2, 3, 3], np.random.default_rng(0).standard_normal(72).astype(np.float32)
    )
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
    ]
    x = helper.make_tensor_value_info("x", F, ["n", 2, "h", "w_"])
    model = _model(nodes, [x], ["c", "p", "g"], [w])
    _check(model, [{"x": _x(1, 2, 9, 7)}, {"x": _x(2, 2, 16, 16)}, {"x": _x(1, 2, 5, 12)}])


def test_symbolic_types_name_the_arithmetic() -> None:
    nodes = [helper.make_node("Slice", ["x", "s1", "big", "a1"], ["tail"])]
    inits = [_i64("s1", [1]), _i64("a1", [1]), _i64("big", [2**63 - 1])]
    x = helper.make_tensor_value_info("x", F, ["batch", "seq"])
    module = import_model(_model(nodes, [x], ["tail"], inits))
    out = main_graph(module).function_type.outputs.data[0]
    assert str(out) == "!rlx.tensor<[batch, seq - 1], f32>"
    assert isinstance(out.shape[1], DimExpr)


@pytest.mark.parametrize("seq", [1, 4])
def test_expand_to_a_computed_shape(seq: int) -> None:
    # The exporters' expand(-1) idiom: Where(Equal(shape, -1), 1, shape) decided at import.
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Concat", ["two1", "s"], ["want"], axis=0),
        helper.make_node("Equal", ["want", "m1x3"], ["is_m1"]),
        helper.make_node("Where", ["is_m1", "ones3", "want"], ["target"]),
        helper.make_node("Expand", ["x", "target"], ["y"]),
    ]
    inits = [_i64("two1", [2]), _i64("m1x3", [-1, -1, -1]), _i64("ones3", [1, 1, 1])]
    x = helper.make_tensor_value_info("x", F, ["a", "b"])
    model = _model(nodes, [x], ["y"], inits)
    _check(model, [{"x": _x(seq, 3)}])


def test_conv_transpose_with_a_symbolic_batch_and_spatial_dims() -> None:
    w = helper.make_tensor(
        "w", F, [2, 3, 3, 3], np.random.default_rng(1).standard_normal(54).astype(np.float32)
    )
    nodes = [
        helper.make_node(
            "ConvTranspose",
            ["x", "w"],
            ["y"],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
            output_padding=[1, 1],
        ),
    ]
    x = helper.make_tensor_value_info("x", F, ["batch_size", 2, "h", 5])
    model = _model(nodes, [x], ["y"], [w])
    _check(model, [{"x": _x(1, 2, 5, 5)}, {"x": _x(3, 2, 4, 5)}])


def test_flatten_and_reshape_minus_one_beside_a_symbol() -> None:
    # flatten of [batch, seq] at each axis
    nodes = [
        helper.make_node("Flatten", ["x"], ["flat0"], axis=0),
        helper.make_node("Flatten", ["x"], ["flat1"], axis=1),
    ]
    x = helper.make_tensor_value_info("x", F, ["batch", "seq"])
    model = _model(nodes, [x], ["flat0", "flat1"])
    _check(model, [{"x": _x(2, 6)}, {"x": _x(1, 3)}])
    # x.reshape(x.shape[:1] + (-1, 3)) and reshape [0, -1]: -1 beside a symbol
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Slice", ["s", "zero1", "one1", "zero1"], ["b"]),
        helper.make_node("Concat", ["b", "minus1", "three1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
        helper.make_node("Reshape", ["x", "keep_rest"], ["z"]),
    ]
    inits = [
        _i64("zero1", [0]),
        _i64("one1", [1]),
        _i64("minus1", [-1]),
        _i64("three1", [3]),
        _i64("keep_rest", [0, -1]),
    ]
    x = helper.make_tensor_value_info("x", F, ["batch", "seq", 6])
    model = _model(nodes, [x], ["y", "z"], inits)
    _check(model, [{"x": _x(2, 5, 6)}, {"x": _x(1, 3, 6)}, {"x": _x(4, 1, 6)}])
