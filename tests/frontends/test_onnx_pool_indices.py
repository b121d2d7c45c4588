"""MaxPool's Indices output, MaxUnpool and Col2Im (against onnxruntime) and DeformConv
(against onnx's reference evaluator) on geometries the node tests leave out: dilations,
ceil_mode, padding, storage_order, groups, 1-D and 3-D, batches and channels > 1."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import OnnxImportError, import_model

F = TensorProto.FLOAT


def check(model, feeds: dict[str, np.ndarray]) -> None:  # type: ignore[no-untyped-def]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


POOLS = [
    ([2, 3, 9, 8], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ([1, 2, 9, 8], dict(kernel_shape=[2, 3], strides=[2, 1], dilations=[2, 2])),
    ([1, 2, 10, 7], dict(kernel_shape=[3, 2], strides=[3, 2], ceil_mode=1)),
    ([1, 2, 6, 5], dict(kernel_shape=[2, 2], storage_order=1, pads=[0, 1, 1, 0])),
    ([2, 2, 11], dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    ([1, 2, 5, 6, 4], dict(kernel_shape=[2, 3, 2], strides=[1, 2, 2])),
]


@pytest.mark.parametrize(("shape", "attrs"), POOLS, ids=[str(a) for _, a in POOLS])
def test_max_pool_indices(shape: list[int], attrs: dict) -> None:
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", F, shape)],
        [helper.make_tensor_value_info("y", F, None),
         helper.make_tensor_value_info("i", TensorProto.INT64, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    check(model, {"x": x})


def pool_unpool_model(shape: list[int], out_shape: list[int] | None):  # type: ignore[no-untyped-def]
    inputs, inits = ["y", "i"], []
    if out_shape is not None:
        inputs.append("shape")
        inits.append(numpy_helper.from_array(np.array(out_shape, np.int64), "shape"))
    nodes = [
        helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MaxUnpool", inputs, ["u"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, shape)],
        [helper.make_tensor_value_info("u", F, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def test_pool_then_unpool() -> None:
    x = np.random.default_rng(5).standard_normal([2, 3, 8, 6]).astype(np.float32)
    check(pool_unpool_model([2, 3, 8, 6], None), {"x": x})


def test_unpool_into_a_larger_output_shape() -> None:
    # ONNX: the indices address the inferred shape, whose values land in the leading
    # corner of output_shape (the reference evaluator and the node test say so;
    # onnxruntime reads them as flat positions of output_shape and fails that test).
    x = np.random.default_rng(6).standard_normal([2, 3, 8, 6]).astype(np.float32)
    model = pool_unpool_model([2, 3, 8, 6], [2, 3, 9, 7])
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = backend.prepare(model).run({"x": x})
    np.testing.assert_array_equal(got, want)


COL2IM = [
    ([5, 6], [2, 3], {}),
    ([7, 8], [3, 3], dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    ([9, 7], [2, 2], dict(dilations=[2, 3], strides=[1, 2])),
]


@pytest.mark.parametrize(("image", "block", "attrs"), COL2IM, ids=[str(c) for c in COL2IM])
def test_col2im(image: list[int], block: list[int], attrs: dict) -> None:
    strides = attrs.get("strides", [1, 1])
    dilations = attrs.get("dilations", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    steps = [(image[d] + pads[d] + pads[2 + d] - dilations[d] * (block[d] - 1) - 1)
             // strides[d] + 1 for d in range(2)]  # fmt: skip
    shape = [2, 3 * block[0] * block[1], steps[0] * steps[1]]
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)
    inits = [numpy_helper.from_array(np.array(image, np.int64), "image"),
             numpy_helper.from_array(np.array(block, np.int64), "block")]  # fmt: skip
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", F, shape)],
        [helper.make_tensor_value_info("y", F, None)], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    check(model, {"x": np.random.default_rng(9).standard_normal(shape).astype(np.float32)})


@pytest.mark.parametrize(
    ("group", "offset_group", "attrs", "with_mask"),
    [
        (1, 1, {}, False),
        (2, 2, dict(strides=[2, 1], pads=[1, 1, 1, 1]), True),
        (1, 3, dict(dilations=[2, 1], pads=[0, 1, 2, 0]), True),
    ],
)
def test_deform_conv_against_the_reference(
    group: int, offset_group: int, attrs: dict, with_mask: bool
) -> None:
    # onnxruntime has no DeformConv kernel: onnx's reference evaluator is the peer.
    rng = np.random.default_rng(group * 10 + offset_group)
    n, c, h, w, out_c, k = 2, 6, 7, 6, 4, 3
    x = rng.standard_normal([n, c, h, w]).astype(np.float32)
    weights = rng.standard_normal([out_c, c // group, k, k]).astype(np.float32)
    bias = rng.standard_normal([out_c]).astype(np.float32)
    strides, dilations = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    out = [(size + pads[d] + pads[d + 2] - dilations[d] * (k - 1) - 1) // strides[d] + 1
           for d, size in enumerate((h, w))]  # fmt: skip
    # Offsets of up to ±3 pixels: some taps land outside the image.
    offset = rng.uniform(-3, 3, [n, offset_group * k * k * 2, *out]).astype(np.float32)
    feeds = {"x": x, "w": weights, "offset": offset, "b": bias}
    inputs = ["x", "w", "offset", "b"]
    if with_mask:
        feeds["mask"] = rng.uniform(0, 1, [n, offset_group * k * k, *out]).astype(np.float32)
        inputs.append("mask")
    node = helper.make_node("DeformConv", inputs, ["y"], group=group,
                            offset_group=offset_group, **attrs)  # fmt: skip
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(i, F, feeds[i].shape) for i in inputs],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    (got,) = backend.prepare(model).run(feeds)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


OVERHANGING = [  # an axis shorter than one window by less than a stride: one clipped window
    ("MaxPool", [1, 3, 1, 20], dict(kernel_shape=[2, 2], strides=[2, 2])),  # aecmos' last pool
    ("MaxPool", [1, 2, 3, 7], dict(kernel_shape=[4, 3], strides=[3, 2], pads=[0, 1, 0, 0])),
    ("AveragePool", [1, 2, 1, 6], dict(kernel_shape=[2, 2], strides=[2, 2])),
    ("LpPool", [1, 2, 2, 5], dict(kernel_shape=[3, 2], strides=[2, 2], p=2)),
]


@pytest.mark.parametrize(("op", "shape", "attrs"), OVERHANGING, ids=[o for o, *_ in OVERHANGING])
def test_a_window_overhanging_the_input_pools_what_it_covers(
    op: str, shape: list[int], attrs: dict
) -> None:
    """onnxruntime sizes an axis one window overhangs by less than a stride as one window
    and pools what the window covers of the input (max, average, Lp norm; MaxPool's
    indices too)."""
    outputs = ["y", "i"] if op == "MaxPool" else ["y"]
    node = helper.make_node(op, ["x"], outputs, **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", F, shape)],
        [helper.make_tensor_value_info(o, TensorProto.INT64 if o == "i" else F, None)
         for o in outputs],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    check(model, {"x": x})


def test_an_average_counting_padding_of_an_overhanging_window_is_refused() -> None:
    node = helper.make_node(
        "AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], count_include_pad=1
    )
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", F, [1, 1, 1, 4])],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(OnnxImportError, match=r"AveragePool node .*window 2 does not fit"):
        import_model(model)
