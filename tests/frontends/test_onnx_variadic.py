"""ONNX's variadic Sum, Mean, Max and Min of three or more inputs import as one op each
(``mir.add_n``, ``mir.mean_n``, ``mir.max_n``, ``mir.min_n``), as onnxruntime runs one
kernel, instead of a chain of binary ops (scikit-learn ensembles sum their members'
scores with a 5-input Sum; TensorFlow's AddN converts to Sum). Natively they give
onnxruntime's values, broadcasting included; a target without them runs the chain; two
inputs stay the binary op and one input is itself."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run
from rlx_compile.pipeline import CompilePipeline

RNG = np.random.default_rng(23)
KINDS = {"Sum": "mir.add_n", "Mean": "mir.mean_n", "Max": "mir.max_n", "Min": "mir.min_n"}
LEAVES = ("mir.input", "mir.param", "mir.constant")


def _model(op_type: str, shapes: list[list[int]], out: list[int],
           elem: int = TensorProto.FLOAT) -> onnx.ModelProto:  # fmt: skip
    names = [f"x{i}" for i in range(len(shapes))]
    graph = helper.make_graph(
        [helper.make_node(op_type, names, ["y"])], "g",
        [helper.make_tensor_value_info(n, elem, s) for n, s in zip(names, shapes, strict=True)],
        [helper.make_tensor_value_info("y", elem, out)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _feeds(model: onnx.ModelProto, dtype: Any = np.float32) -> dict[str, np.ndarray]:
    feeds = {}
    for i in model.graph.input:
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        if np.issubdtype(dtype, np.integer):
            feeds[i.name] = RNG.integers(-50, 50, shape).astype(dtype)
        else:
            feeds[i.name] = (RNG.standard_normal(shape) * 3).astype(dtype)
    return feeds


def _onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, feeds)[0])


def _compute_kinds(module: Any) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("mir.") and op.name not in LEAVES]


SHAPES = {
    "same": ([[3, 5]] * 5, [3, 5]),
    "broadcast": ([[5], [3, 1], [3, 5], [1, 5]], [3, 5]),
    "result_over_a_later_operand": ([[3, 1], [1, 5], [3, 5]], [3, 5]),
}


@pytest.mark.parametrize("op_type", sorted(KINDS))
@pytest.mark.parametrize("shapes", sorted(SHAPES))
def test_one_op_with_onnxruntimes_values_natively_and_as_the_chain(
    op_type: str, shapes: str
) -> None:
    model = _model(op_type, *SHAPES[shapes])
    feeds = _feeds(model)
    want = _onnxruntime(model, feeds)
    module = import_model(model)
    assert _compute_kinds(CompilePipeline(target="cpu").compile(module).lir) == [KINDS[op_type]]
    (native,) = backend.prepare(model).run(feeds)
    cortex = CompilePipeline(target="cortex-m", plan_memory=False).compile(module)
    assert KINDS[op_type] not in _compute_kinds(cortex.module)
    (chain,) = run(cortex.module, feeds, param_values(model, module)).values()
    for got in (native, chain):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    if op_type != "Mean":  # the same order of the same operations: the same bits
        assert native.tobytes() == want.tobytes()


@pytest.mark.parametrize("op_type", ["Max", "Min"])
def test_integers_are_exact(op_type: str) -> None:
    model = _model(op_type, [[4, 6]] * 3 + [[6]], [4, 6], TensorProto.INT32)
    assert _compute_kinds(import_model(model)) == [KINDS[op_type]]
    feeds = _feeds(model, np.int32)
    (got,) = backend.prepare(model).run(feeds)
    np.testing.assert_array_equal(got, _onnxruntime(model, feeds))


@pytest.mark.parametrize(("count", "kinds"), [(1, []), (2, ["mir.add"])])
def test_fewer_inputs_are_the_binary_op_or_nothing(count: int, kinds: list[str]) -> None:
    model = _model("Sum", [[2, 3]] * count, [2, 3])
    assert _compute_kinds(import_model(model)) == kinds
    feeds = _feeds(model)
    (got,) = backend.prepare(model).run(feeds)
    np.testing.assert_array_equal(got, _onnxruntime(model, feeds))
