"""GridSample against onnxruntime beyond the node tests: random grids reaching well
outside [-1, 1] (so every padding mode's far reflections and clamps are hit), batch and
channels > 1, every mode, padding and align_corners, 2-D and 3-D, f32 and f64."""

from __future__ import annotations

import itertools

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import rlx_compile.backend as backend

MODES = ["nearest", "linear", "cubic"]
PADDINGS = ["zeros", "border", "reflection"]


def grid_sample_model(spatial: list[int], out: list[int], dtype: int, **attrs: object):  # type: ignore[no-untyped-def]
    n, c = 2, 3
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("X", dtype, [n, c, *spatial]),
         helper.make_tensor_value_info("grid", dtype, [n, *out, len(spatial)])],
        [helper.make_tensor_value_info("Y", dtype, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def feeds(spatial: list[int], out: list[int], np_dtype: type, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal([2, 3, *spatial]).astype(np_dtype)
    # Mostly inside, some far outside: up to 3.5 image widths away.
    grid = rng.uniform(-1.3, 1.3, [2, *out, len(spatial)])
    grid.reshape(-1)[::7] *= 6.0
    return {"X": x, "grid": grid.astype(np_dtype)}


@pytest.mark.parametrize(
    ("mode", "padding", "align"), list(itertools.product(MODES, PADDINGS, [0, 1]))
)
def test_2d_against_onnxruntime(mode: str, padding: str, align: int) -> None:
    spatial, out = [5, 7], [4, 6]
    model = grid_sample_model(spatial, out, TensorProto.FLOAT, mode=mode,
                              padding_mode=padding, align_corners=align)  # fmt: skip
    data = feeds(spatial, out, np.float32, seed=MODES.index(mode) * 10 + PADDINGS.index(padding))
    if (mode, padding) == ("cubic", "border"):
        # onnxruntime clamps each cubic tap (PyTorch's rule); ONNX's definition clamps
        # the coordinate first, and its reference evaluator is the peer here. (They
        # differ by up to 0.4 on this grid.)
        (expected,) = ReferenceEvaluator(model).run(None, data)
    else:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        (expected,) = session.run(None, data)
    (got,) = backend.prepare(model).run(data)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("mode", "padding"), list(itertools.product(["nearest", "linear"], PADDINGS))
)
def test_3d_against_onnxruntime(mode: str, padding: str) -> None:
    spatial, out = [3, 4, 5], [2, 3, 2]
    model = grid_sample_model(spatial, out, TensorProto.DOUBLE, mode=mode, padding_mode=padding)
    data = feeds(spatial, out, np.float64, seed=3)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, data)
    (got,) = backend.prepare(model).run(data)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
