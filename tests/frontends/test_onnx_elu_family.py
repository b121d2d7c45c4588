"""ONNX Elu, Selu, Celu (alpha 1), ThresholdedRelu and Softsign import as one op each
(``mir.elu``, ``mir.thresholded_relu``, ``mir.softsign``), as onnxruntime runs one kernel
for each, instead of chains of 2-5 primitives: after a conv (where onnxruntime's fused
conv takes none of them either) and on their own, they give onnxruntime's values
natively, NaN, signed zeros and infinities included; a target without the kernels runs
the chains they stand for."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run
from rlx_compile.pipeline import CompilePipeline

RNG = np.random.default_rng(11)
SPECIALS = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -1e-40, -2.5, 3.0, 0.5], np.float32)

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("Elu", {}, "mir.elu"),
    ("Elu", {"alpha": 0.3}, "mir.elu"),
    ("Selu", {}, "mir.elu"),
    ("Selu", {"alpha": 1.5, "gamma": 0.75}, "mir.elu"),
    ("Celu", {}, "mir.elu"),
    ("ThresholdedRelu", {}, "mir.thresholded_relu"),
    ("ThresholdedRelu", {"alpha": -0.5}, "mir.thresholded_relu"),
    ("Softsign", {}, "mir.softsign"),
]
IDS = [f"{op}-{'-'.join(f'{k}{v}' for k, v in a.items()) or 'default'}" for op, a, _ in CASES]


def _model(nodes: list[onnx.NodeProto], x_shape: list[int], y_shape: list[int],
           inits: list[onnx.TensorProto] = ()) -> onnx.ModelProto:  # type: ignore[assignment]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], list(inits),
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, feeds)[0])


def _compute_kinds(module: Any) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("mir.") and op.name not in (
        "mir.input", "mir.param", "mir.constant")]  # fmt: skip


@pytest.mark.parametrize(("op_type", "attrs", "kind"), CASES, ids=IDS)
def test_one_op_with_onnxruntimes_values_natively_and_as_the_chain(
    op_type: str, attrs: dict[str, Any], kind: str
) -> None:
    model = _model([helper.make_node(op_type, ["x"], ["y"], **attrs)], [4, 9], [4, 9])
    x = np.concatenate([SPECIALS, RNG.standard_normal(27).astype(np.float32) * 3]).reshape(4, 9)
    want = _onnxruntime(model, {"x": x})
    module = import_model(model)
    compiled = CompilePipeline(target="cpu").compile(module)
    assert _compute_kinds(compiled.lir) == [kind]
    (native,) = backend.prepare(model).run({"x": x})
    # cortex-m claims none of them: legalize writes the chains, run by the reference.
    cortex = CompilePipeline(target="cortex-m", plan_memory=False).compile(module)
    assert kind not in _compute_kinds(cortex.module)
    (chain,) = run(cortex.module, {"x": x}, param_values(model, module)).values()
    for got in (native, chain):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    if op_type == "ThresholdedRelu":  # a comparison: the same bits
        assert native.tobytes() == want.tobytes()


def test_elu_after_a_conv_is_two_ops_as_in_onnxruntime() -> None:
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    model = _model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Elu", ["c"], ["y"], alpha=0.5)],
        [2, 3, 8, 8], [2, 4, 8, 8],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )  # fmt: skip
    compiled = CompilePipeline(target="cpu").compile(import_model(model))
    assert sorted(_compute_kinds(compiled.lir)) == ["mir.elu", "mir.fused_conv_bias_act"]
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    (got,) = backend.prepare(model).run({"x": x})
    np.testing.assert_allclose(got, _onnxruntime(model, {"x": x}), rtol=1e-5, atol=1e-5)


def test_celu_with_another_alpha_keeps_its_chain() -> None:
    model = _model([helper.make_node("Celu", ["x"], ["y"], alpha=2.0)], [3, 5], [3, 5])
    assert "mir.elu" not in _compute_kinds(import_model(model))
    x = RNG.standard_normal((3, 5)).astype(np.float32) * 3
    (got,) = backend.prepare(model).run({"x": x})
    np.testing.assert_allclose(got, _onnxruntime(model, {"x": x}), rtol=1e-5, atol=1e-6)
