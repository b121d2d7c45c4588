"""RoiAlign against onnxruntime: rois reaching outside the image, several images and
channels, both modes and coordinate modes, spatial scales and sampling ratios."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend

F = TensorProto.FLOAT


@pytest.mark.parametrize(
    ("mode", "coords", "scale", "ratio", "out"),
    [
        ("avg", "half_pixel", 1.0, 2, (3, 4)),
        ("avg", "output_half_pixel", 0.5, 1, (2, 2)),
        ("max", "half_pixel", 0.25, 3, (4, 3)),
        ("max", "output_half_pixel", 1.0, 2, (5, 5)),
    ],
)
def test_against_onnxruntime(
    mode: str, coords: str, scale: float, ratio: int, out: tuple[int, int]
) -> None:
    rng = np.random.default_rng(int(scale * 100) + ratio)
    x = rng.standard_normal([2, 3, 12, 10]).astype(np.float32)
    size = np.array([10, 12, 10, 12]) / scale
    corners = rng.uniform(-0.2, 1.1, [7, 4]) * size  # some rois start or end outside
    rois = np.concatenate(
        [np.minimum(corners[:, :2], corners[:, 2:]), np.maximum(corners[:, :2], corners[:, 2:])], 1
    ).astype(np.float32)
    batch = rng.integers(0, 2, 7).astype(np.int64)
    node = helper.make_node(
        "RoiAlign", ["x", "rois", "batch"], ["y"], mode=mode,
        coordinate_transformation_mode=coords, spatial_scale=scale, sampling_ratio=ratio,
        output_height=out[0], output_width=out[1],
    )  # fmt: skip
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", F, x.shape),
         helper.make_tensor_value_info("rois", F, rois.shape),
         helper.make_tensor_value_info("batch", TensorProto.INT64, batch.shape)],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    # Opset 16: onnxruntime registers no RoiAlign-22 kernel (22 only adds types).
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    feeds = {"x": x, "rois": rois, "batch": batch}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    (got,) = backend.prepare(model).run(feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
