"""A softmax between unit-dim reshapes runs on the original value at the matching dim:
bit for bit the same result through the reference executor, and an opset-11 Softmax
over channels (which the opset-13 upgrade writes as Flatten -> Softmax -> Reshape)
compiles to one softmax that agrees with onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import import_model
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline


def _ops(module: object, kind: type) -> int:
    return sum(isinstance(op, kind) for op in module.walk())  # type: ignore[attr-defined]


def test_softmax_through_unit_reshapes_is_bit_exact() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (3, 1, 7, 1))
        flat = m.reshape(x, (3, 7))
        m.output(m.reshape(m.softmax(flat, axis=1), (3, 1, 7, 1)), names=["y"])
    simplified = m.module.clone()
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(simplified)
    assert _ops(simplified, mir.ReshapeOp) == 0
    assert _ops(simplified, mir.SoftmaxOp) == 1
    x = (np.random.default_rng(5).standard_normal((3, 1, 7, 1)) * 30).astype(np.float32)
    np.testing.assert_array_equal(run(simplified, {"x": x})["y"], run(m.module, {"x": x})["y"])


def test_opset11_softmax_over_channels_is_one_op(tmp_path: object) -> None:
    import onnxruntime as ort

    node = helper.make_node("Softmax", ["x"], ["y"], axis=1)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 10, 1, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10, 1, 1])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 6
    module = import_model(model)
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(module)
    assert _ops(module, mir.ReshapeOp) == 0
    assert _ops(module, mir.SoftmaxOp) == 1
    x = np.random.default_rng(6).standard_normal((2, 10, 1, 1)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(
        run(module, {"x": x})["y"], session.run(None, {"x": x})[0], rtol=1e-6, atol=1e-7
    )
    onnx.checker.check_model(model)


def test_a_reshape_dropping_the_kept_dims_is_the_reduction_without_them() -> None:
    """reduce(keepdims) -> reshape to the shape without the reduced dims is one
    reduction (arg reductions too), bit for bit; a reshape that drops another unit dim
    as well, or a reduction read twice, stays."""
    with ModuleBuilder("g") as m:
        x = m.input("x", (1, 4, 3, 3))
        mean = m.reshape(m.reduce("mean", x, [2, 3], keepdims=True), (1, 4))
        arg = m.reshape(m.emit(mir.ArgMaxOp(x, 1, keepdims=True)).results[0], (1, 3, 3))
        flat = m.reshape(m.reduce("max", x, [2, 3], keepdims=True), (4,))  # drops N too
        kept = m.reduce("sum", x, [3], keepdims=True)
        m.output(mean, arg, flat, m.reshape(kept, (1, 4, 3)), kept, names=list("abcde"))
    simplified = m.module.clone()
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(simplified)
    reduces = [op for op in simplified.walk() if isinstance(op, mir.ReduceOp | mir.ArgReduceOp)]
    assert [op.props().flag("keepdims") for op in reduces] == [False, False, True, True]
    assert _ops(simplified, mir.ReshapeOp) == 2
    x = (np.random.default_rng(7).standard_normal((1, 4, 3, 3)) * 10).astype(np.float32)
    want, got = run(m.module, {"x": x}), run(simplified, {"x": x})
    for name in "abcde":
        np.testing.assert_array_equal(got[name], want[name])


def test_global_average_pool_then_flatten_is_one_op() -> None:
    import onnxruntime as ort

    nodes = [
        helper.make_node("GlobalAveragePool", ["x"], ["p"]),
        helper.make_node("Flatten", ["p"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    module = import_model(model)
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(module)
    assert _ops(module, mir.ReshapeOp) == 0 and _ops(module, mir.ReduceMeanOp) == 1
    x = np.random.default_rng(8).standard_normal((2, 6, 5, 5)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(
        run(module, {"x": x})["y"], session.run(None, {"x": x})[0], rtol=1e-6, atol=1e-7
    )
