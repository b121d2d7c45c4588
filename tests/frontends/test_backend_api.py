"""rlx_compile.backend as a backend module: devices, prepare/run, run_model, run_node, and
models whose shape operands come from graph inputs (compiled per value, on first run)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend

F = TensorProto.FLOAT


def test_devices() -> None:
    assert backend.supports_device("CPU") and backend.supports_device("cpu")
    assert not backend.supports_device("CUDA")
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, [2])],
                              [helper.make_tensor_value_info("y", F, [2])])  # fmt: skip
    with pytest.raises(ValueError, match="device 'CUDA' is not supported"):
        backend.prepare(helper.make_model(graph), "CUDA")


def test_run_node_and_run_model() -> None:
    a = np.array([[1.0, -2.0], [3.0, -4.0]], np.float32)
    b = np.array([10.0, 20.0], np.float32)
    (y,) = backend.run_node(helper.make_node("Add", ["a", "b"], ["y"]), [a, b])
    np.testing.assert_array_equal(y, a + b)
    (m,) = backend.run_node(helper.make_node("ReduceMax", ["a"], ["m"], keepdims=0), [a])
    np.testing.assert_array_equal(m, a.max())
    node = helper.make_node("Gemm", ["a", "w"], ["y"], transB=1)
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node], "g", [vi("a", F, [2, 2])], [vi("y", F, [2, 3])],
        [helper.make_tensor("w", F, [3, 2], np.arange(6, dtype=np.float32))],
    )  # fmt: skip
    outputs = backend.run_model(helper.make_model(graph), [a])
    np.testing.assert_allclose(outputs.y, a @ np.arange(6, dtype=np.float32).reshape(3, 2).T)


def test_shape_inputs_compile_once_per_value() -> None:
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "g",
        [vi("x", F, [2, 6]), vi("shape", TensorProto.INT64, [2])], [vi("y", F, None)],
    )  # fmt: skip
    rep = backend.prepare(helper.make_model(graph))
    assert rep.compiled is None and rep.needs_values == ("shape",)
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for target in ([3, 4], [6, 2], [3, 4]):
        (y,) = rep.run([x, np.array(target, np.int64)])
        np.testing.assert_array_equal(y, x.reshape(target))
    assert len(rep._by_value) == 2
    with pytest.raises(ValueError, match=r"inputs \['shape'\] are needed"):
        rep.run({"x": x})
