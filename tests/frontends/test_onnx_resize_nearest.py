"""ONNX Resize in nearest mode imports as one ``mir.gather_axes`` over its resized axes
(a plain gather for one axis) and computes what onnxruntime computes, bit for bit:
every nearest_mode and coordinate_transformation_mode, up- and down-sampling, 1, 2 and
3 spatial axes, scales and sizes."""

from __future__ import annotations

import itertools

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run

F = TensorProto.FLOAT
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
COORDS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
          "asymmetric", "tf_crop_and_resize"]  # fmt: skip
SHAPES = {1: (1, 2, 8), 2: (1, 2, 8, 6), 3: (1, 2, 8, 6, 4)}


def _resize(
    shape: tuple[int, ...], coord: str, nearest: str, scales: list[float] | None,
    sizes: list[int] | None,
) -> tuple[list[str], np.ndarray, np.ndarray]:  # fmt: skip
    """The imported graph's op names, rlx's result and onnxruntime's."""
    rank = len(shape)
    inits = []
    roi = ""
    if coord == "tf_crop_and_resize":  # a box reaching past the input: extrapolated
        lo, hi = [0.0, 0.0, *[0.1, -0.2, 0.3][: rank - 2]], [1.0, 1.0, *[0.8, 0.9, 1.3][: rank - 2]]
        inits.append(helper.make_tensor("roi", F, [2 * rank], lo + hi))
        roi = "roi"
    if scales is not None:
        inits.append(helper.make_tensor("scales", F, [rank], [1.0, 1.0, *scales]))
        inputs = ["x", roi, "scales"]
    else:
        assert sizes is not None
        inits.append(helper.make_tensor("sizes", TensorProto.INT64, [rank], [*shape[:2], *sizes]))
        inputs = ["x", roi, "", "sizes"]
    node = helper.make_node(
        "Resize", inputs, ["y"], mode="nearest", coordinate_transformation_mode=coord,
        nearest_mode=nearest, extrapolation_value=-7.0,
    )  # fmt: skip
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", F, shape)],
        [helper.make_tensor_value_info("y", F, None)], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    module = import_model(model)
    names = [op.name for op in module.walk() if op.name.startswith("mir.")]
    got = run(module, {"x": x}, param_values(model, module))["y"]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return names, got, session.run(None, {"x": x})[0]


def _check(names: list[str], got: np.ndarray, want: np.ndarray, axes: int) -> None:
    np.testing.assert_array_equal(got, want)
    gathers = names.count("mir.gather") + names.count("mir.gather_axes")
    assert gathers == 1, names
    assert ("mir.gather_axes" in names) == (axes >= 2), names


@pytest.mark.parametrize(("coord", "nearest"), list(itertools.product(COORDS, NEAREST_MODES)))
def test_every_mode(coord: str, nearest: str) -> None:
    """Two axes, one up- and one down-sampled. (Scales whose output length is short of
    scale · length -- 7 · 0.5 -- differ from onnxruntime in half_pixel_symmetric,
    align_corners and tf_crop_and_resize: the chain of gathers did too.)"""
    _check(*_resize((1, 2, 5, 8), coord, nearest, [2.0, 0.5], None), axes=2)


@pytest.mark.parametrize("axes", [1, 2, 3])
@pytest.mark.parametrize("up", [True, False])
@pytest.mark.parametrize("by", ["scales", "sizes"])
@pytest.mark.parametrize("coord", ["asymmetric", "half_pixel", "tf_crop_and_resize"])
def test_axes_directions_and_sizes(axes: int, up: bool, by: str, coord: str) -> None:
    shape = SHAPES[axes]
    scales = ([2.0, 3.0, 1.5] if up else [0.5, 0.5, 0.25])[:axes]
    spatial = shape[2:]
    sizes = [int(n * s) for n, s in zip(spatial, scales, strict=True)]
    given = (scales, None) if by == "scales" else (None, sizes)
    names, got, want = _resize(shape, coord, "round_prefer_floor", *given)
    assert got.shape == (*shape[:2], *sizes)
    _check(names, got, want, axes)
