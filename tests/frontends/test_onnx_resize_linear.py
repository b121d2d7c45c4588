"""ONNX Resize in linear mode over the two spatial axes of NCHW (a bilinear upsample or
downsample) imports as one interpolation matrix product per axis, which the cpu
target's fusion makes one ``mir.fused_two_sided_matmul``: one op, as onnxruntime runs
one Resize, computing what onnxruntime computes natively."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model

F = TensorProto.FLOAT


@pytest.mark.parametrize("coord", ["half_pixel", "align_corners", "pytorch_half_pixel"])
@pytest.mark.parametrize("scales", [(2.0, 2.0), (0.5, 1.5)])
def test_a_bilinear_resize_is_one_op(coord: str, scales: tuple[float, float]) -> None:
    node = helper.make_node(
        "Resize", ["x", "", "scales"], ["y"], mode="linear", coordinate_transformation_mode=coord
    )
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", F, [2, 3, 8, 6])],
        [helper.make_tensor_value_info("y", F, None)],
        [helper.make_tensor("scales", F, [4], [1.0, 1.0, *scales])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    compiled = CompilePipeline(target="cpu").compile(import_model(model))
    kinds = [op.name for op in compiled.module.walk() if op.name.startswith("mir.")]
    assert kinds.count("mir.fused_two_sided_matmul") == 1 and "mir.matmul" not in kinds
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 6)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    (got,) = backend.prepare(model).run({"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
