"""The identities that forward ``x`` past a constant of any shape (x + 0, x - 0, x · 1,
x / 1 with scalar or broadcast constants; min(x, +inf), max(x, -inf)) change no value,
NaN, infinities and signed zeros included, and an ONNX Clip with a run-time lower bound
and no upper one compiles to one max."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from rlx_compile import ModuleBuilder
from rlx_compile.frontends.onnx import import_model
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -3.5, 7.25], np.float32)


def _kinds(module: object) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("mir.")]  # type: ignore[attr-defined]


def _simplified(module: object) -> object:
    out = module.clone()  # type: ignore[attr-defined]
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(out)
    return out


def _imported_and_simplified(graph: onnx.GraphProto) -> tuple[onnx.ModelProto, object]:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    module = import_model(model)
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(module)
    return model, module


def test_broadcast_identities_and_unbounded_min_max_are_bit_exact() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (3, 8))
        lo = m.input("lo", ())
        y = m.sub(x, m.constant(0.0))  # a scalar zero
        y = m.mul(m.constant(np.ones((1, 8), np.float32)), y)  # a broadcast one
        y = m.div(y, m.constant(1.0))
        y = m.add(y, m.constant(np.zeros((3, 1), np.float32)))
        y = m.minimum(m.maximum(y, lo), m.constant(np.inf))
        z = m.maximum(m.constant(-np.inf), x)
        m.output(y, z, names=["y", "z"])
    simplified = _simplified(m.module)
    assert [k for k in _kinds(simplified) if k not in ("mir.input", "mir.constant")] == ["mir.max"]
    rng = np.random.default_rng(3)
    x = np.concatenate([SPECIALS, rng.standard_normal(16).astype(np.float32)]).reshape(3, 8)
    for lo in (np.float32(-1.0), np.float32(np.nan), np.float32(-np.inf)):
        want = run(m.module, {"x": x, "lo": lo})
        got = run(simplified, {"x": x, "lo": lo})
        for name in ("y", "z"):  # bit for bit (x + 0 keeps a -0 where IEEE gives +0)
            w, g = want[name], got[name]
            same = (w == g) | (np.isnan(w) & np.isnan(g))
            assert same.all(), name


def test_identities_kept_where_they_change_a_value_or_shape() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (4,))
        n = m.input("n", (1,))
        a = m.maximum(x, m.constant(np.inf))  # +inf everywhere, not x
        b = m.minimum(x, m.constant(np.float32(3e38)))  # a finite bound
        c = m.add(n, m.constant(np.zeros(4, np.float32)))  # broadcasts n
        m.output(a, b, c, names=["a", "b", "c"])
    simplified = _simplified(m.module)
    assert sorted(k for k in _kinds(simplified) if k in ("mir.max", "mir.min", "mir.add")) == [
        "mir.add", "mir.max", "mir.min"
    ]  # fmt: skip


def test_clip_with_a_runtime_min_is_one_max() -> None:
    import onnxruntime as ort

    nodes = [
        helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
        helper.make_node("Sub", ["m", "eighty"], ["lo"]),
        helper.make_node("Clip", ["x", "lo", ""], ["y"]),
        helper.make_node("Sub", ["y", "zero"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor("eighty", TensorProto.FLOAT, [], [80.0]),
         helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])],
    )  # fmt: skip
    model, module = _imported_and_simplified(graph)
    kinds = _kinds(module)
    assert kinds.count("mir.max") == 1 and "mir.min" not in kinds
    assert kinds.count("mir.sub") == 1  # m - 80; y - 0 is y
    x = (np.random.default_rng(4).standard_normal((2, 16)) * 60).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(run(module, {"x": x})["out"], session.run(None, {"x": x})[0])


def test_an_unsqueezed_value_expanded_is_one_expand() -> None:
    """Unsqueeze(axis 1) of a [1, C] value then Expand to [1, T, C] (a speaker embedding
    broadcast over time) is one expand of the value: onnxruntime's result bit for bit; an
    Unsqueeze into the middle of a [N, C] value stays, as x broadcast directly would not
    line up."""
    import onnxruntime as ort

    nodes = [
        helper.make_node("Unsqueeze", ["v", "one"], ["u"]),
        helper.make_node("Expand", ["u", "time"], ["e"]),
        helper.make_node("Unsqueeze", ["w", "one"], ["uw"]),
        helper.make_node("Expand", ["uw", "wide"], ["ew"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 5, 8]),
         helper.make_tensor_value_info("ew", TensorProto.FLOAT, [3, 2, 8])],
        [helper.make_tensor("one", TensorProto.INT64, [1], [1]),
         helper.make_tensor("time", TensorProto.INT64, [3], [1, 5, 8]),
         helper.make_tensor("wide", TensorProto.INT64, [3], [3, 2, 8])],
    )  # fmt: skip
    model, module = _imported_and_simplified(graph)
    assert _kinds(module).count("mir.reshape") == 1 and _kinds(module).count("mir.expand") == 2
    rng = np.random.default_rng(8)
    feeds = {"v": rng.standard_normal((1, 8)).astype(np.float32),
             "w": rng.standard_normal((3, 8)).astype(np.float32)}  # fmt: skip
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = run(module, feeds)
    for name, want in zip(("e", "ew"), session.run(None, feeds), strict=True):
        np.testing.assert_array_equal(got[name], want)


def _check_native_and_reference(model: onnx.ModelProto, module: object, feeds: dict) -> None:
    """The simplified module (reference executor) and the model compiled for cpu and run
    natively both give onnxruntime's outputs."""
    import onnxruntime as ort

    import rlx_compile.backend as backend

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    ref = list(run(module, feeds).values())
    native = backend.prepare(model).run(feeds)
    for w, r, n in zip(want, ref, native, strict=True):
        np.testing.assert_allclose(r, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(n, w, rtol=1e-5, atol=1e-6)


def test_a_zero_pad_is_the_padding_of_the_conv_or_average_pool_reading_it() -> None:
    """TensorFlow's "SAME" padding as tf2onnx writes it (an asymmetric Pad, then a Conv
    with a bias and a stride: one fused conv op) and a ZeroPad2d before an AveragePool:
    the pads join the op's own, as onnxruntime's PadFusion does, and the values stay
    onnxruntime's. A pad before a max pool stays (it pads with -inf)."""
    nodes = [
        helper.make_node("Pad", ["x", "same"], ["xs"]),
        helper.make_node("Conv", ["xs", "w", "b"], ["conv"], strides=[2, 2], pads=[0, 1, 0, 0]),
        helper.make_node("Pad", ["x", "ring"], ["xr"]),
        helper.make_node("AveragePool", ["xr"], ["avg"], kernel_shape=[3, 3]),
        helper.make_node("AveragePool", ["xr"], ["counted"], kernel_shape=[3, 3],
                         pads=[1, 0, 0, 1], count_include_pad=1),
        helper.make_node("MaxPool", ["xr"], ["max"], kernel_shape=[2, 2]),
    ]  # fmt: skip
    rng = np.random.default_rng(11)
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 9, 8])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n, shape in
         (("conv", [2, 4, 5, 4]), ("avg", [2, 3, 9, 8]), ("counted", [2, 3, 10, 9]),
          ("max", [2, 3, 10, 9]))],
        [helper.make_tensor("same", TensorProto.INT64, [8], [0, 0, 1, 0, 0, 0, 1, 1]),
         helper.make_tensor("ring", TensorProto.INT64, [8], [0, 0, 1, 1, 0, 0, 1, 1]),
         helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3],
                            rng.standard_normal(108).astype(np.float32)),
         helper.make_tensor("b", TensorProto.FLOAT, [4],
                            rng.standard_normal(4).astype(np.float32))],
    )  # fmt: skip
    model, module = _imported_and_simplified(graph)
    pads = [
        (op.name, list(op.props().ints("pads")))  # type: ignore[attr-defined]
        for op in module.walk()  # type: ignore[attr-defined]
        if op.name in ("mir.fused_conv_bias_act", "mir.avg_pool")
    ]
    assert _kinds(module).count("mir.pad") == 1  # the max pool's
    assert pads == [
        ("mir.fused_conv_bias_act", [1, 1, 1, 1]), ("mir.avg_pool", [1, 1, 1, 1]),
        ("mir.avg_pool", [2, 1, 1, 2]),
    ]  # fmt: skip
    feeds = {"x": rng.standard_normal((2, 3, 9, 8)).astype(np.float32)}
    _check_native_and_reference(model, module, feeds)


def test_where_of_a_negated_condition_swaps_its_branches() -> None:
    """And a where choosing between one value twice is that value."""
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["c"]),
        helper.make_node("Not", ["c"], ["n"]),
        helper.make_node("Where", ["n", "x", "y"], ["out"]),
        helper.make_node("Where", ["c", "x", "x"], ["same"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [3, 8]),
         helper.make_tensor_value_info("same", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])],
    )  # fmt: skip
    model, module = _imported_and_simplified(graph)
    kinds = _kinds(module)
    assert "mir.not" not in kinds and kinds.count("mir.where") == 1
    rng = np.random.default_rng(12)
    feeds = {"x": rng.standard_normal((3, 8)).astype(np.float32),
             "y": rng.standard_normal(8).astype(np.float32)}  # fmt: skip
    _check_native_and_reference(model, module, feeds)


def test_split_parts_concatenated_in_order_are_the_input() -> None:
    """A Split's parts concatenated back in order are the input, and its second and third
    parts one slice of it; parts out of order stay a concat of slices."""
    nodes = [
        helper.make_node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1),
        helper.make_node("Relu", ["a"], ["ra"]),
        helper.make_node("Concat", ["a", "b", "c"], ["whole"], axis=1),
        helper.make_node("Concat", ["ra", "b", "c"], ["tail"], axis=1),
        helper.make_node("Concat", ["c", "a"], ["swapped"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 10])],
        [helper.make_tensor_value_info("whole", TensorProto.FLOAT, [3, 10]),
         helper.make_tensor_value_info("tail", TensorProto.FLOAT, [3, 10]),
         helper.make_tensor_value_info("swapped", TensorProto.FLOAT, [3, 6])],
        [helper.make_tensor("sizes", TensorProto.INT64, [3], [2, 5, 3])],
    )  # fmt: skip
    model, module = _imported_and_simplified(graph)
    concats = [op for op in module.walk() if op.name == "mir.concat"]  # type: ignore[attr-defined]
    assert [len(op.operands) for op in concats] == [2, 2]  # tail: relu(a), x[:, 2:]; swapped
    feeds = {"x": np.random.default_rng(13).standard_normal((3, 10)).astype(np.float32)}
    _check_native_and_reference(model, module, feeds)
