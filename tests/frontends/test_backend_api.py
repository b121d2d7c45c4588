"""rlx_compile.backend as a backend module: devices, prepare/run, run_model, run_node, and
models whose shape operands come from graph inputs (compiled per value, on first run)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model
from rlx_compile.frontends.onnx.importer import OnnxImportError

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
    # The cache keeps the most recently used compiles only.
    targets = [[a, b] for a in (-1, 1, 2, 3, 4, 6, 12) for b in (-1, 1, 2, 3, 4, 6, 12)
               if a * b == 12 or (-1 in (a, b) and a * b != 1)]  # fmt: skip
    assert len(targets) > backend.CACHED_VALUES
    for target in targets:
        (y,) = rep.run([x, np.array(target, np.int64)])
        np.testing.assert_array_equal(y, x.reshape(target))
    assert len(rep._by_value) == backend.CACHED_VALUES
    with pytest.raises(ValueError, match=r"inputs \['shape'\] are needed"):
        rep.run({"x": x})


def test_value_dependent_shapes_specialise_on_the_deciding_values() -> None:
    # Compress's output length is decided by its condition: the backend compiles once
    # per distinct condition. NonZero of a computed tensor needs the graph input behind
    # it: import_model says which, the backend specialises on its value.
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Compress", ["x", "keep"], ["y"], axis=0)], "g",
        [vi("x", F, [4, 2]), vi("keep", TensorProto.BOOL, [4])], [vi("y", F, None)],
    )  # fmt: skip
    rep = backend.prepare(helper.make_model(graph))
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    for keep in ([True, False, True, True], [False, True, False, False]):
        (y,) = rep.run([x, np.array(keep)])
        np.testing.assert_array_equal(y, x[np.array(keep)])
    computed = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("NonZero", ["r"], ["nz"])],
        "g", [vi("x", F, [3])], [vi("nz", TensorProto.INT64, None)],
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"NonZero's input 'r' must be known at compile "
                       r"time \(operands needed at compile time depend on the graph inputs "
                       r"\['x'\]\)"):  # fmt: skip
        import_model(helper.make_model(computed))
    (nz,) = backend.prepare(helper.make_model(computed)).run([np.array([1, 0, 2], np.float32)])
    np.testing.assert_array_equal(nz, [[0, 2]])
