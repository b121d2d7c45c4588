"""A chain of Adds whose partial sums nothing else reads is one ``mir.add_n`` on cpu when
its later terms are small or weights (a k-means distance as skl2onnx writes it), with
onnxruntime's values natively; a chain of full-size activations stays a chain, so the
arena holds no more than the chain needs."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model
from rlx_compile.memory.report import memory_report
from rlx_compile.pipeline import CompilePipeline

LEAVES = ("mir.input", "mir.param", "mir.constant")
RNG = np.random.default_rng(43)


def _compute_kinds(module: Any) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("mir.") and op.name not in LEAVES]


def _run_both(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for got, want in zip(backend.prepare(model).run(feeds), session.run(None, feeds), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_distance_is_one_sum() -> None:
    """‖x‖² - 2x·c + ‖c‖²: the product, then a row term and a centroid term."""
    c = RNG.standard_normal((4, 6)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("ReduceSumSquare", ["x"], ["xx"], axes=[1], keepdims=1),
         helper.make_node("Gemm", ["x", "c"], ["p"], alpha=-2.0, transB=1),
         helper.make_node("Add", ["p", "xx"], ["s"]),
         helper.make_node("Add", ["cc", "s"], ["d"]),
         helper.make_node("ArgMin", ["d"], ["label"], axis=1, keepdims=0)],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 6])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("d", TensorProto.FLOAT, [3, 4])],
        [numpy_helper.from_array(c, "c"),
         numpy_helper.from_array((c * c).sum(1).astype(np.float32), "cc")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    kinds = _compute_kinds(CompilePipeline(target="cpu").compile(import_model(model)).lir)
    assert kinds.count("mir.add_n") == 1 and "mir.add" not in kinds, kinds
    _run_both(model, {"x": RNG.standard_normal((3, 6)).astype(np.float32)})


def test_full_size_terms_stay_a_chain() -> None:
    """Three feature maps computed one after another and summed as they come: as one
    add_n all three would be live at once."""
    shape = [1, 8, 16, 16]
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Sigmoid", ["x"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["ab"]), helper.make_node("Tanh", ["x"], ["t"]),
             helper.make_node("Add", ["ab", "t"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    module = import_model(model)
    lir = CompilePipeline(target="cpu").compile(module).lir
    assert lir is not None
    assert _compute_kinds(lir).count("mir.add") == 2
    chain = CompilePipeline(target="cpu", fuse_skip=("fuse-add-chain",)).compile(module).lir
    assert chain is not None
    assert memory_report(lir).arena == memory_report(chain).arena
    _run_both(model, {"x": RNG.standard_normal(shape).astype(np.float32)})
