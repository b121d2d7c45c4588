"""The ai.onnx.preview.training optimizer steps and the ai.onnx.ml tensor ops against
onnx's reference evaluator (onnxruntime has no kernels for the former): several tensors
per step, the first step (T = 0) and a later one, regularisation coefficients, both
Momentum modes; vector and matrix inputs for ArrayFeatureExtractor."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import rlx_compile.backend as backend

F = TensorProto.FLOAT
TRAINING = "ai.onnx.preview.training"
STATES = {"Adagrad": 1, "Momentum": 1, "Adam": 2}


@pytest.mark.parametrize("step", [0, 3])
@pytest.mark.parametrize(
    ("op", "attrs"),
    [
        ("Adagrad", dict(decay_factor=0.1, epsilon=1e-6, norm_coefficient=0.01)),
        ("Momentum", dict(alpha=0.9, beta=0.5, mode="standard", norm_coefficient=0.02)),
        ("Momentum", dict(alpha=0.8, beta=0.7, mode="nesterov", norm_coefficient=0.0)),
        ("Adam", dict(alpha=0.85, beta=0.95, epsilon=1e-7, norm_coefficient=0.01,
                      norm_coefficient_post=0.02)),
    ],
)  # fmt: skip
def test_against_the_reference(op: str, attrs: dict, step: int) -> None:
    rng = np.random.default_rng(step)
    shapes = [[3, 2], [4]]
    groups = ["X", "G"] + [f"S{k}" for k in range(STATES[op])]
    names = [f"{g}{i}" for g in groups for i in range(len(shapes))]
    feeds = {"R": np.array(0.1, np.float32), "T": np.array(step, np.int64)}
    for g in groups:
        for i, shape in enumerate(shapes):
            value = rng.standard_normal(shape)
            feeds[f"{g}{i}"] = (np.abs(value) if g.startswith("S") else value).astype(np.float32)
    outputs = [f"{g}{i}_new" for g in ["X", *groups[2:]] for i in range(len(shapes))]
    node = helper.make_node(op, ["R", "T", *names], outputs, domain=TRAINING, **attrs)
    infos = [helper.make_tensor_value_info("R", F, []),
             helper.make_tensor_value_info("T", TensorProto.INT64, [])]  # fmt: skip
    infos += [helper.make_tensor_value_info(n, F, feeds[n].shape) for n in names]
    graph = helper.make_graph(
        [node], "g", infos, [helper.make_tensor_value_info(o, F, None) for o in outputs]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(TRAINING, 1)])
    want = ReferenceEvaluator(model).run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("x_shape", "indices"), [([5], [[3, 0]]), ([2, 3, 4], [1, 1, 3])])
def test_ml_array_feature_extractor_and_binarizer(x_shape: list[int], indices: list) -> None:
    ml = "ai.onnx.ml"
    idx = np.array(indices, np.int64)
    nodes = [helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain=ml),
             helper.make_node("Binarizer", ["y"], ["z"], domain=ml, threshold=0.2)]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", F, x_shape),
         helper.make_tensor_value_info("i", TensorProto.INT64, idx.shape)],
        [helper.make_tensor_value_info("y", F, None), helper.make_tensor_value_info("z", F, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(ml, 1)])
    feeds = {"x": np.random.default_rng(0).standard_normal(x_shape).astype(np.float32), "i": idx}
    want = ReferenceEvaluator(model).run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)
