"""ONNX PRelu imports as one ``mir.prelu`` for floats, as onnxruntime runs one kernel: a
per-channel slope after a conv (insightface's ResNets, ENet) and a run-time slope both
give onnxruntime's values natively; a target without the kernel runs the chain it stands
for (compare, mul, where), and integers import as that chain."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run
from rlx_compile.pipeline import CompilePipeline

RNG = np.random.default_rng(5)
SPECIALS = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -1e-40, -2.5, 3.0], np.float32)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           inits: list[onnx.TensorProto], out: onnx.ValueInfoProto) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(nodes, "g", inputs, [out], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, feeds)[0])


def _kinds(module: object) -> list[str]:
    return [op.name for op in module.walk()]  # type: ignore[attr-defined]


def test_a_per_channel_slope_after_a_conv_is_one_op() -> None:
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    slope = RNG.standard_normal((4, 1, 1)).astype(np.float32)
    model = _model(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("PRelu", ["c", "slope"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(slope, "slope")],
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 8, 8]),
    )  # fmt: skip
    compiled = CompilePipeline(target="cpu").compile(import_model(model))
    kinds = _kinds(compiled.lir)
    assert kinds.count("mir.prelu") == 1
    assert not {"mir.where", "mir.compare"} & set(kinds)
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    (got,) = backend.prepare(model).run({"x": x})
    np.testing.assert_allclose(got, _onnxruntime(model, {"x": x}), rtol=1e-5, atol=1e-6)


def test_a_run_time_slope_gives_onnxruntimes_bits_natively_and_on_a_target_without_it() -> None:
    """NaN, signed zeros and infinities included; cortex-m has no PRelu kernel, so
    legalize writes the chain, which the reference executor runs to the same bits."""
    model = _model(
        [helper.make_node("PRelu", ["x", "slope"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8]),
         helper.make_tensor_value_info("slope", TensorProto.FLOAT, [8])],
        [],
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8]),
    )  # fmt: skip
    x = np.concatenate([SPECIALS, RNG.standard_normal(16).astype(np.float32)]).reshape(3, 8)
    feeds = {"x": x, "slope": RNG.standard_normal(8).astype(np.float32)}
    want = _onnxruntime(model, feeds)
    (native,) = backend.prepare(model).run(feeds)
    module = import_model(model)
    cortex = CompilePipeline(target="cortex-m", plan_memory=False).compile(module)
    assert "mir.prelu" not in _kinds(cortex.module)
    (chain,) = run(cortex.module, feeds, param_values(model, module)).values()
    for got in (native, chain):
        assert got.tobytes() == want.tobytes()


def test_integers_import_as_the_chain() -> None:
    model = _model(
        [helper.make_node("PRelu", ["x", "slope"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.INT32, [2, 5])],
        [numpy_helper.from_array(np.array([2, -3, 0, 1, 4], np.int32), "slope")],
        helper.make_tensor_value_info("y", TensorProto.INT32, [2, 5]),
    )
    module = import_model(model)
    assert "mir.prelu" not in _kinds(module)
    x = RNG.integers(-9, 9, (2, 5)).astype(np.int32)
    (got,) = run(module, {"x": x}, param_values(model, module)).values()
    slope = np.array([2, -3, 0, 1, 4], np.int32)
    np.testing.assert_array_equal(got, np.where(x < 0, x * slope, x))
