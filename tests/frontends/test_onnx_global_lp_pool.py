"""ONNX GlobalLpPool: the p-norm over the spatial dims, (Σ |x|^p)^(1/p), as one L2 or L1
reduction for p = 2 (the default) and 1 (onnxruntime runs one kernel), as the chain for
other p; onnxruntime's values natively, 1-D to 3-D images."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model
from rlx_compile.pipeline import CompilePipeline

RNG = np.random.default_rng(31)
LEAVES = ("mir.input", "mir.param", "mir.constant")


def _model(shape: list[int], **attrs: Any) -> onnx.ModelProto:
    out = shape[:2] + [1] * (len(shape) - 2)
    graph = helper.make_graph(
        [helper.make_node("GlobalLpPool", ["x"], ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize(
    ("shape", "attrs", "kinds"),
    [
        ([2, 3, 5, 4], {}, ["mir.reduce_l2"]),
        ([2, 3, 7], {"p": 1}, ["mir.reduce_l1"]),
        ([1, 2, 3, 4, 2], {"p": 2}, ["mir.reduce_l2"]),
        ([2, 3, 5, 4], {"p": 3}, None),
    ],
    ids=["p2-2d", "p1-1d", "p2-3d", "p3-chain"],
)
def test_onnxruntimes_values(shape: list[int], attrs: dict[str, Any], kinds: Any) -> None:
    model = _model(shape, **attrs)
    lir = CompilePipeline(target="cpu").compile(import_model(model)).lir
    compute = [
        op.name for op in lir.body.block.ops if op.name.startswith("mir.") and op.name not in LEAVES
    ]
    if kinds is not None:
        assert compute == kinds
    x = RNG.standard_normal(shape).astype(np.float32)
    (got,) = backend.prepare(model).run({"x": x})
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(got, session.run(None, {"x": x})[0], rtol=2e-6, atol=1e-6)
