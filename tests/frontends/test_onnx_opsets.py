"""Models written against opsets 7-12 (``frontends.onnx.upgrade``): onnx's version
converter brings them to opset 13, our repairs fix what it gets wrong, and the
definitions it cannot express have converters of their own. Every case runs the old
model through ``rlx_compile.backend`` and through onnxruntime (which implements the old
definitions) on the same inputs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import OnnxImportError, import_model
from rlx_compile.frontends.onnx import upgrade as upgrade_module
from rlx_compile.frontends.onnx.importer import legacy, upgrade
from rlx_compile.frontends.onnx.upgrade import (
    COMPATIBLE_STEPS,
    _adapt_natively,
    _named_copy,
    upgrade_with_converter,
    walk,
)
from rlx_compile.ir import print_module

F, F16, F64, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT64
RNG = np.random.default_rng(0)


def model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, tuple[int, list[int]]],
    outputs: list[str],
    opset: int,
    initializers: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def feeds_for(m: onnx.ModelProto) -> dict[str, np.ndarray]:
    out = {}
    for vi in m.graph.input:
        tt = vi.type.tensor_type
        shape = [d.dim_value for d in tt.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        out[vi.name] = RNG.standard_normal(shape).astype(dtype)
    return out


def assert_matches_onnxruntime(m: onnx.ModelProto, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    feeds = feeds_for(m)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)
    got = backend.prepare(m).run(feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def _node(
    op: str, inputs: list[str], outputs: list[str] | None = None, **attrs: Any
) -> onnx.NodeProto:
    return helper.make_node(op, inputs, outputs or ["y"], **attrs)


def _upsample(opset: int, mode: str, scales: list[float]) -> onnx.ModelProto:
    x = {"x": (F, [1, 2, 3, 4])}
    if opset < 9:
        attrs = {"mode": mode, "scales": [float(v) for v in scales]}
        return model([_node("Upsample", ["x"], **attrs)], x, ["y"], opset)
    s = np.array(scales, np.float32)
    op = "Upsample" if opset == 9 else "Resize"
    return model([_node(op, ["x", "s"], mode=mode)], x, ["y"], opset, {"s": s})


UPSAMPLE = [
    (opset, mode, scales)
    for opset in (7, 9, 10)
    for mode in ("nearest", "linear")
    for scales in ([1, 1, 2, 3], [1, 1, 1.5, 2.5], [1, 1, 4 / 3, 1.7])
] + [
    (10, mode, scales)
    for mode in ("nearest", "linear")
    for scales in ([1, 1, 0.5, 0.75], [1, 1, 0.6, 2.5], [1, 1, 1.7, 0.4])
]


@pytest.mark.parametrize(("opset", "mode", "scales"), UPSAMPLE)
def test_upsample_and_resize_10(opset: int, mode: str, scales: list[float]) -> None:
    """The converter's Resize keeps opset 11's half_pixel / round_prefer_floor defaults
    (linear is off by up to 0.26); the old ops sample at x / scale, nearest truncating
    when growing and rounding up when shrinking (onnxruntime's Resize-10)."""
    assert_matches_onnxruntime(_upsample(opset, mode, scales))


PADS = [0, 0, 1, 2, 0, 0, 2, 1]


@pytest.mark.parametrize("elem", [F, F64, F16])
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_2(elem: int, mode: str) -> None:
    """The converter's constant value is float32 whatever the data's type: a float16 or
    float64 Pad no longer type-checks in onnxruntime."""
    attrs: dict[str, Any] = {"pads": PADS, "mode": mode}
    if mode == "constant":
        attrs["value"] = 1.5
    m = model([_node("Pad", ["x"], **attrs)], {"x": (elem, [1, 2, 3, 3])}, ["y"], 9)
    assert_matches_onnxruntime(m)


@pytest.mark.parametrize("bounds", [{"min": -0.5, "max": 0.7}, {"max": 0.7}, {"min": -0.2}])
@pytest.mark.parametrize("elem", [F, F16])  # onnxruntime has no float64 Clip-6
def test_clip_6(elem: int, bounds: dict[str, float]) -> None:
    m = model([_node("Clip", ["x"], **bounds)], {"x": (elem, [2, 3])}, ["y"], 9)
    assert_matches_onnxruntime(m)


@pytest.mark.parametrize("directions", [[0, 0], [1, 0]])
def test_scan_8(directions: list[int]) -> None:
    """Scan-8 scans axis 1 of batched operands; the converter's adapter drops the batch
    dim from the types and moves no data (onnxruntime then rejects the inputs)."""
    body = helper.make_graph(
        [_node("Add", ["s_in", "a"], ["s_out"]), _node("Mul", ["s_out", "b"], ["o"])],
        "body",
        [helper.make_tensor_value_info(n, F, [2]) for n in ("s_in", "a", "b")],
        [helper.make_tensor_value_info(n, F, [2]) for n in ("s_out", "o")],
    )
    scan = _node("Scan", ["", "init", "xa", "xb"], ["final", "ys"], body=body,
                 num_scan_inputs=2, directions=directions)  # fmt: skip
    inputs = {"init": (F, [3, 2]), "xa": (F, [3, 4, 2]), "xb": (F, [3, 4, 2])}
    assert_matches_onnxruntime(model([scan], inputs, ["final", "ys"], 8))


@pytest.mark.parametrize("opset", [7, 8])
@pytest.mark.parametrize("spatial", [0, 1])
def test_batch_norm_spatial(opset: int, spatial: int) -> None:
    """spatial=0 normalises each element of a sample with its own statistics (shape
    [C, D1, ...]); the converter refuses it, a converter of ours takes it."""
    shape = [3, 4, 5] if spatial == 0 else [3]
    stats = {n: RNG.standard_normal(shape).astype(np.float32) for n in ("s", "b", "mean")}
    stats["var"] = RNG.random(shape).astype(np.float32) + 0.5
    bn = _node("BatchNormalization", ["x", "s", "b", "mean", "var"], spatial=spatial, epsilon=1e-3)
    assert_matches_onnxruntime(model([bn], {"x": (F, [2, 3, 4, 5])}, ["y"], opset, stats))


OLD_FORMS = {
    "softmax-11 axis 1 of 3-D": ([_node("Softmax", ["x"], axis=1)], {"x": (F, [2, 3, 4])}, 11),
    "logsoftmax-9 default axis": ([_node("LogSoftmax", ["x"])], {"x": (F, [2, 3, 4])}, 9),
    "hardmax-11 axis 0": ([_node("Hardmax", ["x"], axis=0)], {"x": (F, [2, 3, 4])}, 11),
    "hardmax-11 axis 1": ([_node("Hardmax", ["x"], axis=1)], {"x": (F, [2, 3, 4])}, 11),
    "hardmax-11 last axis": ([_node("Hardmax", ["x"], axis=-1)], {"x": (F, [2, 3, 4])}, 11),
    "split-2 split attribute": (
        [_node("Split", ["x"], ["a", "b"], axis=1, split=[1, 3])], {"x": (F, [2, 4])}, 9),
    "slice-1 attributes": (
        [_node("Slice", ["x"], starts=[1, 0], ends=[3, -1], axes=[0, 2])], {"x": (F, [4, 3, 5])}, 9
    ),
    "topk-1 k attribute": ([_node("TopK", ["x"], ["v", "i"], k=2)], {"x": (F, [3, 5])}, 9),
    "reducesum-11 axes attribute": (
        [_node("ReduceSum", ["x"], axes=[0, 2], keepdims=0)], {"x": (F, [2, 3, 4])}, 11),
    "squeeze/unsqueeze-11": (
        [_node("Squeeze", ["x"], ["s"], axes=[1]), _node("Unsqueeze", ["s"], axes=[0, 3])],
        {"x": (F, [2, 1, 3])}, 11),
    "gemm-7 broadcast C": (
        [_node("Gemm", ["a", "b", "c"], alpha=0.5, beta=2.0, transB=1)],
        {"a": (F, [2, 3]), "b": (F, [4, 3]), "c": (F, [4])}, 7),
    "maxpool-8 indices": (
        [_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2])],
        {"x": (F, [1, 2, 4, 4])}, 8),
    "averagepool-7 count_include_pad": (
        [_node("AveragePool", ["x"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)],
        {"x": (F, [1, 2, 4, 4])}, 7),
    "dropout-10 ratio": ([_node("Dropout", ["x"], ratio=0.3)], {"x": (F, [2, 3])}, 10),
    "flatten-9 axis 2": ([_node("Flatten", ["x"], axis=2)], {"x": (F, [2, 3, 4])}, 9),
    "cast-6 to double": ([_node("Cast", ["x"], to=F64)], {"x": (F, [2, 3])}, 7),
    "concat-4 axis": (
        [_node("Concat", ["a", "b"], axis=1)], {"a": (F, [2, 1]), "b": (F, [2, 3])}, 7),
    "upsample-7 into a conv": (
        [_node("Upsample", ["x"], ["u"], scales=[1.0, 1.0, 2.0, 2.0]),
         _node("Conv", ["u", "w"], pads=[1, 1, 1, 1])],
        {"x": (F, [1, 2, 3, 3]), "w": (F, [4, 2, 3, 3])}, 8),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(OLD_FORMS))
def test_old_forms(case: str) -> None:
    """Definitions the converter upgrades right (attributes become inputs, axis
    semantics change): the upgraded model computes what onnxruntime computes."""
    nodes, inputs, opset = OLD_FORMS[case]
    outputs = [o for n in nodes for o in n.output if o not in {i for m in nodes for i in m.input}]
    assert_matches_onnxruntime(model(nodes, inputs, outputs, opset))


def test_prelu_before_7_is_per_channel() -> None:
    """PRelu-6 applies a 1-D slope along axis 1 (from 7 on it broadcasts from the last
    axis, and the converter's adapter changes nothing). onnxruntime has no PRelu-6:
    checked against the definition."""
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    slope = np.array([0.1, 0.2, 0.3], np.float32)
    m = model([_node("PRelu", ["x", "slope"])], {"x": (F, [2, 3, 4])}, ["y"], 6, {"slope": slope})
    (y,) = backend.prepare(m).run([x])
    np.testing.assert_allclose(y, np.where(x < 0, x * slope[None, :, None], x), rtol=1e-6)


@pytest.mark.parametrize("opset", [7, 9])
def test_dropout_mask_keeps_the_input_type(opset: int) -> None:
    """Dropout 7-9 returns its mask in the input's type (10 on: bool); in inference every
    element is kept, so the mask is ones -- as onnx's reference computes it (onnxruntime
    returns zeros for Dropout 7-10, an empty mask)."""
    m = model([_node("Dropout", ["x"], ["y", "mask"], ratio=0.3)], {"x": (F, [2, 3])},
              ["y", "mask"], opset)  # fmt: skip
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    y, mask = backend.prepare(m).run([x])
    np.testing.assert_array_equal(y, x)
    assert mask.dtype == np.float32
    np.testing.assert_array_equal(mask, np.ones_like(x))


def test_a_missing_adapter_costs_one_node() -> None:
    """And-1 (opset 6) has no adapter to And-7, so the whole-model conversion fails:
    every other node is still upgraded on its own (the Upsample becomes a repaired
    Resize), and only the And is reported, with the converter's reason."""
    nodes = [
        _node("And", ["a", "b"], ["c"], name="and"),
        _node(
            "Upsample", ["x"], ["u"], name="up", height_scale=2.0, width_scale=2.0, mode="bilinear"
        ),
        _node("Relu", ["u"], ["r"], name="relu"),
    ]
    inputs = {"a": (TensorProto.BOOL, [2]), "b": (TensorProto.BOOL, [2]), "x": (F, [1, 1, 2, 2])}
    m = model(nodes, inputs, ["c", "r"], 6)
    upgraded = upgrade(m)
    assert upgraded.node_opsets == {"and": 6}
    assert upgraded.failures == {"and": "No Adapter For And"}
    ops = {n.name: n for n in walk(upgraded.model.graph)}
    assert ops["up"].op_type == "Resize"
    assert (
        helper.get_attribute_value(
            next(a for a in ops["up"].attribute if a.name == "coordinate_transformation_mode")
        )
        == b"asymmetric"
    )
    with pytest.raises(OnnxImportError) as info:
        import_model(m)
    message = str(info.value)
    assert message == (
        "cannot import the ONNX model: And node 'and': the definition of opset 1 predates "
        "opset 13 and onnx's version converter cannot upgrade it: No Adapter For And"
    )


def test_weights_stay_out_of_the_converter() -> None:
    """The converter runs on a typed skeleton; the upgraded model holds the very
    initializers of the original (nothing moved into inputs, nothing re-encoded)."""
    w = RNG.standard_normal((64, 64)).astype(np.float32)
    c = np.zeros(64, np.float32)
    m = model([_node("Gemm", ["x", "w", "c"], transB=1)], {"x": (F, [2, 64])}, ["y"], 7,
              {"w": w, "c": c})  # fmt: skip
    upgraded = upgrade(m).model
    assert [vi.name for vi in upgraded.graph.input] == ["x"]
    assert [t.SerializeToString() for t in upgraded.graph.initializer] == [
        t.SerializeToString() for t in m.graph.initializer
    ]
    assert upgraded.opset_import[0].version == 13
    assert_matches_onnxruntime(m, rtol=1e-4, atol=1e-5)


def test_nodes_keep_their_names() -> None:
    """Locations and errors name the nodes of the model as given: unnamed ones as
    ``<OpType>_<index>`` of the original graph, even where the converter inserted nodes
    before them."""
    nodes = [
        _node("Upsample", ["x"], ["u"], scales=[1.0, 1.0, 2.0, 2.0]),
        _node("Relu", ["u"], ["y"], some_flag=1),
    ]
    m = model(nodes, {"x": (F, [1, 1, 2, 2])}, ["y"], 7)
    with pytest.raises(OnnxImportError, match="Relu node 'Relu_1': unsupported attribute"):
        import_model(m)
    names = [n.name for n in upgrade(m).model.graph.node]
    assert names[-2:] == ["Upsample_0", "Relu_1"]
    assert all(n.startswith("Upsample_0/") for n in names[:-2])


def test_an_opset_13_model_is_not_touched() -> None:
    m = model([_node("Relu", ["x"])], {"x": (F, [2])}, ["y"], 13)
    assert upgrade(m).model is m
    old_but_same = model([_node("Relu", ["x"])], {"x": (F, [2])}, ["y"], 12)
    assert upgrade(old_but_same).model is not old_but_same  # Relu-6 -> Relu-13 (types)
    same = model([_node("And", ["a", "b"])], {"a": (TensorProto.BOOL, [2]),
                                              "b": (TensorProto.BOOL, [2])}, ["y"], 7)  # fmt: skip
    assert upgrade(same).model is same  # And-7 is And at 13


def test_the_compatible_steps_are_the_converters() -> None:
    """``COMPATIBLE_STEPS`` lists the steps up to opset 13 that the installed onnx's
    version converter registers a ``CompatibleAdapter`` for (it leaves the node as is)."""
    header = Path(onnx.__file__).parent / "version_converter" / "convert.h"
    if not header.exists():
        pytest.skip("this onnx package ships no version_converter/convert.h")
    registered: dict[int, set[str]] = {}
    pattern = r'CompatibleAdapter>\("(\w+)", OpSetID\((\d+)\), OpSetID\((\d+)\)\)'
    for op, start, end in re.findall(pattern, header.read_text()):
        if int(end) == int(start) + 1 <= 13:
            registered.setdefault(int(end), set()).add(op)
    assert {v: set(ops) for v, ops in COMPATIBLE_STEPS.items()} == registered


def _light(name: str) -> onnx.ModelProto:
    return onnx.load(str(Path(onnx.__file__).parent / "backend/test/data/light" / f"{name}.onnx"))


NATIVE = {
    "squeeze/unsqueeze/reducesum-11": model(
        [_node("Squeeze", ["x"], ["s"], axes=[1]), _node("Unsqueeze", ["s"], ["u"], axes=[0, 3]),
         _node("ReduceSum", ["u"], axes=[0, 2], keepdims=0)], {"x": (F, [2, 1, 3])}, ["y"], 11),
    "dropout-7 ratio and mask": model(
        [_node("Dropout", ["x"], ["d", "mask"], ratio=0.3), _node("Dropout", ["d"])],
        {"x": (F, [2, 3])}, ["y", "mask"], 9),
    "softmax-11 axis 1 of 3-D": model(
        [_node("Softmax", ["x"], ["s"], axis=1), _node("Relu", ["s"])], {"x": (F, [2, 3, 4])},
        ["y"], 11),
    "logsoftmax-9 last axis": model(
        [_node("LogSoftmax", ["x"], axis=-1)], {"x": (F, [2, 3, 4])}, ["y"], 9),
    "softmax-11 last axis, reshaped by an input": model(
        [_node("Reshape", ["x", "shape"], ["r"]), _node("Softmax", ["r"], axis=-1)],
        {"x": (F, [2, 3, 4]), "shape": (I64, [2])}, ["y"], 11),
    "batchnorm-7 spatial 1": model(
        [_node("BatchNormalization", ["x", "s", "b", "m", "v"], spatial=1, epsilon=1e-3)],
        {"x": (F, [2, 3, 4])}, ["y"], 7,
        {k: RNG.random(3).astype(np.float32) + 0.5 for k in ("s", "b", "m", "v")}),
    "batchnorm-8 default spatial": model(
        [_node("BatchNormalization", ["x", "s", "b", "m", "v"])], {"x": (F, [2, 3, 4])}, ["y"], 8,
        {k: RNG.random(3).astype(np.float32) + 0.5 for k in ("s", "b", "m", "v")}),
    "pad-2 constant value": model(
        [_node("Pad", ["x"], pads=[0, 1, 2, 0, 2, 1], value=1.5)], {"x": (F, [2, 3, 4])}, ["y"], 9),
    "pad-2 default value": model(
        [_node("Pad", ["x"], pads=[1, 0, 0, 1])], {"x": (F, [3, 4])}, ["y"], 10),
    "pad-2 reflect": model(
        [_node("Pad", ["x"], mode="reflect", pads=[0, 1, 0, 2])], {"x": (F, [3, 4])}, ["y"], 8),
    "pad-2 float64 edge and value": model(
        [_node("Pad", ["x"], ["p"], mode="edge", pads=[1, 1, 1, 1]),
         _node("Pad", ["p"], pads=[0, 2, 0, 0], value=-3.0)], {"x": (F64, [2, 2])}, ["y"], 7),
    "resize-10 nearest, up": model(
        [_node("Resize", ["x", "s"], mode="nearest")], {"x": (F, [1, 2, 3, 4])}, ["y"], 10,
        {"s": np.array([1, 1, 2, 1.5], np.float32)}),
    "resize-10 nearest, up and down": model(
        [_node("Resize", ["x", "s"], mode="nearest")], {"x": (F, [1, 2, 6, 4])}, ["y"], 10,
        {"s": np.array([1, 1, 0.5, 2], np.float32)}),
    "resize-10 linear": model(
        [_node("Resize", ["x", "s"], mode="linear")], {"x": (F, [1, 2, 3, 4])}, ["y"], 10,
        {"s": np.array([1, 1, 2, 2], np.float32)}),
    "slice-1 with axes": model(
        [_node("Slice", ["x"], ["s"], starts=[1, -3], ends=[2**63 - 1, -1], axes=[2, 1]),
         _node("Relu", ["s"])], {"x": (F, [2, 5, 4])}, ["y"], 9),
    "slice-1 without axes": model(
        [_node("Slice", ["x"], starts=[0, 1], ends=[1, 3])], {"x": (F, [3, 4])}, ["y"], 8),
    "slice-9 starts and ends": model(
        [_node("Slice", ["x"], ["s"], starts=[1, 0], ends=[3, -1]), _node("Relu", ["s"])],
        {"x": (F, [4, 5])}, ["y"], 9),
    "slice-1 with axes, twice": model(
        [_node("Slice", ["x"], ["s"], starts=[1], ends=[100], axes=[-1]),
         _node("Slice", ["s"], axes=[0, 2], starts=[0, 1], ends=[1, 3])],
        {"x": (F, [2, 3, 4])}, ["y"], 7),
    "densenet121 (unsqueeze-1)": _light("light_densenet121"),
    "squeezenet (dropout-7, softmax-1 on a 4-D input)": _light("light_squeezenet"),
}  # fmt: skip


def _keep_legacy(node: onnx.NodeProto, opset: int) -> bool:
    """The importer's ``keep``: a node with a converter of its own at its opset."""
    return legacy(node, opset) is not None


@pytest.mark.parametrize("case", sorted(NATIVE))
def test_native_upgrade_imports_as_the_converter(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The steps done without the version converter (``COMPATIBLE_STEPS``, ``ADAPTERS``)
    give the module the converter gives, locations and SSA names included."""
    m = NATIVE[case]
    work, inner = _named_copy(m)
    keep = _keep_legacy
    assert _adapt_natively(work, inner, m.opset_import[0].version, 13, keep) is not None
    with_converter = upgrade_with_converter(m, _named_copy(m)[0], 13, keep)
    assert [n.op_type for n in walk(upgrade(m).model.graph)] == [
        n.op_type for n in walk(with_converter.model.graph) if n.op_type != "Constant"
    ]
    native = print_module(import_model(m, input_values=_values_for(m)), debuginfo=True)
    monkeypatch.setattr(upgrade_module, "_adapt_natively", lambda *args: None)
    converted = print_module(import_model(m, input_values=_values_for(m)), debuginfo=True)
    assert native == converted


def test_a_slice_with_a_function_attribute_reference_goes_to_the_converter() -> None:
    """A Slice-1 whose starts names a function attribute is left to the version
    converter, as is any Slice-1 the native step does not take."""
    node = _node("Slice", ["x"], ends=[2])
    node.attribute.append(onnx.AttributeProto(name="starts", type=onnx.AttributeProto.INTS,
                                              ref_attr_name="s"))  # fmt: skip
    m = model([node], {"x": (F, [4])}, ["y"], 9)
    work, inner = _named_copy(m)
    assert _adapt_natively(work, inner, 9, 13, _keep_legacy) is None


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
def test_an_old_softmax_needs_no_shape_inference(op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Softmax, LogSoftmax and Hardmax before 13 keep their opset (a converter of their
    own reads the input's rank from its type) rather than have the version converter's
    step infer the rank over the whole model (``test_old_forms`` checks their values)."""
    m = model([_node(op, ["x"], ["s"], axis=1), _node("Relu", ["s"])], {"x": (F, [2, 3, 4])},
              ["y"], 11)  # fmt: skip

    def no_inference(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("shape inference ran for the upgrade")

    monkeypatch.setattr(upgrade_module, "_value_types", no_inference)
    kept = upgrade(m)
    assert [n.op_type for n in kept.model.graph.node] == [op, "Relu"]
    assert list(kept.node_opsets.values()) == [11]
    ops = [op.name for op in import_model(m).walk()]
    assert ops.count("mir.reshape") == 2  # to [2, 12] and back


def _values_for(m: onnx.ModelProto) -> dict[str, np.ndarray]:
    return (
        {"shape": np.array([6, 4], np.int64)} if "shape" in {i.name for i in m.graph.input} else {}
    )


def test_a_model_needing_the_converter_goes_to_it() -> None:
    """A step without an adapter here (Upsample 9 -> 10) sends the whole model to the
    version converter."""
    m = _upsample(9, "nearest", [1, 1, 2, 2])
    work, inner = _named_copy(m)
    assert _adapt_natively(work, inner, 9, 13, _keep_legacy) is None
    assert [n.op_type for n in upgrade(m).model.graph.node] == ["Constant", "Resize"]


@pytest.mark.parametrize("case", sorted(NATIVE))
def test_an_owned_model_upgrades_in_place_as_a_copy_would(case: str) -> None:
    """A model the import parsed itself is upgraded in place (no copy of its weights);
    from a file it imports as the same model given as a ``ModelProto`` does, which is
    copied and left as it was. A model one of whose repairs reads the values' types
    (Pad-2, Dropout-7's mask) is copied all the same."""
    m = NATIVE[case]
    given = m.SerializeToString()
    as_given = print_module(import_model(m, input_values=_values_for(m)), debuginfo=True)
    assert m.SerializeToString() == given
    parsed = print_module(import_model(given, input_values=_values_for(m)), debuginfo=True)
    assert parsed == as_given
    owned = onnx.ModelProto.FromString(given)
    upgraded = upgrade(owned, in_place=True)
    typed = any(
        n.op_type == "Pad" or (n.op_type == "Dropout" and len(n.output) > 1 and n.output[1])
        for n in m.graph.node
    )
    assert upgraded.in_place is (not typed)
    assert (upgraded.model is owned) is (not typed)
    assert (owned.SerializeToString() == given) is typed


def test_a_failed_native_upgrade_leaves_the_model_as_it_was() -> None:
    """The native steps change nothing until every node has adapted: a Squeeze-11 that
    adapts, then an Upsample-9 that needs the converter, leave the model unchanged (the
    converter, taking over, starts from it)."""
    up = _upsample(9, "nearest", [1, 1, 2, 2])
    squeeze = _node("Squeeze", ["x"], ["sq"], axes=[0])
    up.graph.node[-1].input[0] = "sq"
    up.graph.node.insert(0, squeeze)
    x = up.graph.input[0].type.tensor_type.shape
    x.dim.insert(0, onnx.TensorShapeProto.Dimension(dim_value=1))
    work, inner = _named_copy(up)
    before = work.SerializeToString()
    assert _adapt_natively(work, inner, 9, 13, _keep_legacy) is None
    assert work.SerializeToString() == before
    owned = onnx.ModelProto.FromString(up.SerializeToString())
    upgraded = upgrade(owned, in_place=True)
    assert not upgraded.in_place and upgraded.model is not owned
    kinds = [n.op_type for n in upgraded.model.graph.node if n.op_type != "Constant"]
    assert kinds == ["Squeeze", "Resize"]
    assert_matches_onnxruntime(up)


def test_nodes_an_upgrade_in_place_leaves_as_they_were_are_known_kept() -> None:
    """Nodes whose steps are all compatible are left as they were, unnamed ones too (what
    the import read of them before the upgrade still holds); the import reads again the
    ones a step changes. An unnamed node the upgrade keeps at its opset is found by the
    name the import gives it."""
    relu = _node("Relu", ["x"], ["r"], name="relu")
    conv = _node("Conv", ["r", "w"], name="conv")
    m = model([relu, conv], {"x": (F, [1, 2, 5, 5])}, ["y"], 11,
              {"w": RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)})  # fmt: skip
    unnamed = model([_node("Relu", ["x"])], {"x": (F, [2, 3])}, ["y"], 11)
    squeezed = model([_node("Relu", ["x"], ["r"]), _node("Squeeze", ["r"], axes=[0]),
                      _node("Unsqueeze", ["y"], ["u"], axes=[1])],
                     {"x": (F, [1, 3])}, ["u"], 11)  # fmt: skip
    results = {}
    for case, given in (("kept", m), ("unnamed", unnamed), ("squeezed", squeezed)):
        owned = onnx.ModelProto.FromString(given.SerializeToString())
        upgraded = upgrade(owned, in_place=True)
        assert upgraded.in_place and upgraded.model is owned
        results[case] = upgraded.changed
        from_file = print_module(import_model(given.SerializeToString()), debuginfo=True)
        assert from_file == print_module(import_model(given), debuginfo=True)
    assert results == {"kept": (), "unnamed": (), "squeezed": (1, 2)}
    assert_matches_onnxruntime(m)
    assert_matches_onnxruntime(squeezed)
    softmax = model([_node("Relu", ["x"], ["r"]), _node("Softmax", ["r"], axis=1)],
                    {"x": (F, [2, 3, 4])}, ["y"], 11)  # fmt: skip
    owned = onnx.ModelProto.FromString(softmax.SerializeToString())
    upgraded = upgrade(owned, in_place=True)
    assert upgraded.in_place and upgraded.node_opsets == {"Softmax_1": 11}
    assert not owned.graph.node[1].name
    module = import_model(softmax.SerializeToString())
    assert sum(op.name == "mir.reshape" for op in module.walk()) == 2  # Softmax-11's 2-D view
    assert_matches_onnxruntime(softmax)
