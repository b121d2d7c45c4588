"""ONNX DepthToSpace (DCR and CRD) and SpaceToDepth import as reshape -> transpose ->
reshape, which the cpu target's fusion makes one ``mir.fused_reshape_transpose``: one
op, as onnxruntime runs one, with onnxruntime's result bit for bit, natively."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model

F = TensorProto.FLOAT


@pytest.mark.parametrize(
    ("op", "mode", "shape"),
    [("DepthToSpace", "DCR", (2, 8, 3, 5)), ("DepthToSpace", "CRD", (1, 12, 4, 2)),
     ("SpaceToDepth", "DCR", (2, 3, 6, 4))],
)  # fmt: skip
def test_depth_and_space_moves_are_one_op(op: str, mode: str, shape: tuple[int, ...]) -> None:
    attrs = {"blocksize": 2, **({"mode": mode} if op == "DepthToSpace" else {})}
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", F, list(shape))],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    compiled = CompilePipeline(target="cpu").compile(import_model(model))
    kinds = [o.name for o in compiled.module.walk() if o.name.startswith("mir.")]
    assert kinds.count("mir.fused_reshape_transpose") == 1 and "mir.transpose" not in kinds
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    (got,) = backend.prepare(model).run({"x": x})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("op", "mode"), [("DepthToSpace", "DCR"), ("DepthToSpace", "CRD"),
                                          ("SpaceToDepth", "DCR")])  # fmt: skip
def test_open_batch_and_spatial_dims_import(op: str, mode: str) -> None:
    """Only the channels need a size (PyTorch exports PixelShuffle with open batch, height
    and width); the moves match onnxruntime at two sizes of one imported graph."""
    attrs = {"blocksize": 2, **({"mode": mode} if op == "DepthToSpace" else {})}
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", F, ["n", 8, "h", "w"])],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    import_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    prepared = backend.prepare(model)
    for shape in ((1, 8, 4, 6), (3, 8, 2, 4)):
        x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        (got,) = prepared.run({"x": x})
        np.testing.assert_array_equal(got, want)
