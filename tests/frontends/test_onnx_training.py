"""The ai.onnx.preview.training optimizer steps against onnx's reference evaluator
(onnxruntime has no kernels for them): several tensors per step, the first step (T = 0)
and a later one, regularisation coefficients, both Momentum modes."""

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
