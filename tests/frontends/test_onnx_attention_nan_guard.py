"""PyTorch's exporter writes scaled dot-product attention with a NaN guard between the
softmax and ·v, ``Where(IsNaN(p), 0, p)``, so that a query masked from every key gives
0: the attention still fuses (``mir.attention`` with ``zero_nan``). Natively, and lowered
back to its chain for a target without an attention kernel (cortex-m), it gives
onnxruntime's values, the fully masked query's zeros included."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.pipeline import CompilePipeline

B, H, S, D = 1, 2, 4, 8


def _model() -> onnx.ModelProto:
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Mul", ["q", "c"], ["qs"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("Mul", ["kt", "c"], ["ks"]),
        helper.make_node("MatMul", ["qs", "ks"], ["s"]),
        helper.make_node("Where", ["keep", "zero", "ninf"], ["bias"]),
        helper.make_node("Add", ["s", "bias"], ["sm"]),
        helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", "zero", "p"], ["g"]),
        helper.make_node("MatMul", ["g", "v"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("q", f, [B, H, S, D]),
         helper.make_tensor_value_info("k", f, [B, H, S, D]),
         helper.make_tensor_value_info("v", f, [B, H, S, D]),
         helper.make_tensor_value_info("keep", TensorProto.BOOL, [B, 1, S, S])],
        [helper.make_tensor_value_info("y", f, [B, H, S, D])],
        [numpy_helper.from_array(np.array(D ** -0.25, np.float32), "c"),
         numpy_helper.from_array(np.array([0.0], np.float32), "zero"),
         numpy_helper.from_array(np.array([-np.inf], np.float32), "ninf")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _kinds(module: Any) -> list[str]:
    leaves = ("mir.input", "mir.param", "mir.constant")
    return [op.name for op in module.walk() if op.name.startswith("mir.") and op.name not in leaves]


def test_the_guarded_attention_fuses_with_onnxruntimes_values() -> None:
    model = _model()
    module = import_model(model)
    kinds = _kinds(CompilePipeline(target="cpu").compile(module).lir)
    assert kinds.count("mir.attention") == 1 and "mir.softmax" not in kinds, kinds
    rng = np.random.default_rng(47)
    feeds = {n: rng.standard_normal((B, H, S, D)).astype(np.float32) for n in "qkv"}
    keep = np.tril(np.ones((S, S), bool))[None, None].copy()
    keep[..., 2, :] = False  # the third query attends nowhere: 0 under the guard
    feeds["keep"] = keep
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    assert np.all(want[:, :, 2] == 0)
    (got,) = backend.prepare(model).run(feeds)
    # The fused op lowered back to its chain where a target has no attention kernel.
    fused = CompilePipeline(target="cpu", plan_memory=False).compile(module).module
    assert "mir.attention" in _kinds(fused)
    PassManager(parse_pipeline("legalize{target=cortex-m}")).run(fused)
    assert "mir.attention" not in _kinds(fused) and "mir.compare" in _kinds(fused)
    (chain,) = run(fused, feeds, param_values(model, module)).values()
    for y in (got, chain):
        assert not np.isnan(y).any()
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
