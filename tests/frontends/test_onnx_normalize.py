"""PyTorch's ``F.normalize`` as its exporter writes it -- ReduceL2, Clip(min=eps), an
Expand to x's shape, Div -- is three ops: the division broadcasts the norm itself
(``algebraic-simplify``'s BroadcastInsteadOfExpand), where onnxruntime runs four, and
nothing of x's size is materialised. The values are onnxruntime's, natively and through
the reference executor, with the batch fixed and open."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model
from rlx_compile.interpreter import run
from rlx_compile.pipeline import CompilePipeline

LEAVES = ("mir.input", "mir.param", "mir.constant", "lir.return")


def normalize_model(batch: int | str, channels: int, axis: int, rank: int) -> onnx.ModelProto:
    shape = [batch, channels, *([3] * (rank - 2))]
    nodes = [
        helper.make_node("ReduceL2", ["x"], ["n"], axes=[axis], keepdims=1),
        helper.make_node("Clip", ["n", "eps", ""], ["c"]),
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Expand", ["c", "s"], ["e"]),
        helper.make_node("Div", ["x", "e"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "normalize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(np.array(1e-12, np.float32), "eps")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("channels", "axis", "rank"), [(8, 1, 2), (6, 1, 4), (5, -1, 3)])
def test_normalize_divides_by_the_broadcast_norm(channels: int, axis: int, rank: int) -> None:
    model = normalize_model(2, channels, axis, rank)
    lir = CompilePipeline(target="cpu").compile(import_model(model)).lir
    assert lir is not None
    ops = [op.name for op in lir.body.block.ops if op.name not in LEAVES]
    assert sorted(ops) == ["mir.div", "mir.max", "mir.reduce_l2"], ops
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, channels, *([3] * (rank - 2)))).astype(np.float32)
    x[0] = 0  # a zero row: the eps bound divides it
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    (got,) = backend.prepare(model).run({"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_normalize_with_an_open_batch() -> None:
    model = normalize_model("b", 8, 1, 2)
    module = import_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    compiled = CompilePipeline(target="cpu", plan_memory=False).compile(module).module
    for batch in (1, 5):
        x = np.random.default_rng(batch).standard_normal((batch, 8)).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        np.testing.assert_allclose(run(compiled, {"x": x})["y"], want, rtol=1e-6, atol=1e-7)
    assert not any(op.name == "mir.expand" for op in compiled.walk())
