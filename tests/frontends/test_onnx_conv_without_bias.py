"""A Conv without a bias read only by an activation (Keras exports write them) is one
``mir.fused_conv_bias_act`` with a zero bias on cpu, as onnxruntime's FusedConv takes a
conv without one; natively it gives onnxruntime's values."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model
from rlx_compile.pipeline import CompilePipeline

LEAVES = ("mir.input", "mir.param", "mir.constant", "lir.return")


@pytest.mark.parametrize("act", ["Relu", "Sigmoid", "LeakyRelu"])
def test_one_fused_conv_with_onnxruntimes_values(act: str) -> None:
    rng = np.random.default_rng(53)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node(act, ["c"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    lir = CompilePipeline(target="cpu").compile(import_model(model)).lir
    assert lir is not None
    assert [op.name for op in lir.body.block.ops if op.name not in LEAVES] == [
        "mir.fused_conv_bias_act"
    ]
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    (got,) = backend.prepare(model).run({"x": x})
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(got, session.run(None, {"x": x})[0], rtol=1e-5, atol=1e-6)
