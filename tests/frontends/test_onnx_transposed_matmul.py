"""A run-time Transpose of the last two dims read by a MatMul is one
``mir.fused_transposed_matmul`` on cpu (onnxruntime's FusedMatMul): a similarity matrix
``x · yᵀ`` and ``aᵀ · b`` give onnxruntime's values natively."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model
from rlx_compile.pipeline import CompilePipeline


def test_transposed_operands_fuse_into_the_matmul() -> None:
    nodes = [
        helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "yt"], ["s"]),
        helper.make_node("Transpose", ["a"], ["at"], perm=[1, 0]),
        helper.make_node("MatMul", ["at", "b"], ["p"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6, 8]),
         helper.make_tensor_value_info("a", TensorProto.FLOAT, [5, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [5, 7])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 4, 6]),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, [3, 7])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    lir = CompilePipeline(target="cpu").compile(import_model(model)).lir
    kinds = [op.name for op in lir.walk()]
    assert kinds.count("mir.fused_transposed_matmul") == 2
    assert "mir.transpose" not in kinds and "mir.matmul" not in kinds
    rng = np.random.default_rng(21)
    feeds = {
        name: rng.standard_normal(shape).astype(np.float32)
        for name, shape in (("x", (2, 4, 8)), ("y", (2, 6, 8)), ("a", (5, 3)), ("b", (5, 7)))
    }
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for got, want in zip(backend.prepare(model).run(feeds), session.run(None, feeds), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_an_einsum_contraction_is_one_op() -> None:
    """The scores of an attention written as an einsum, and a dense layer with a run-time
    weight: no reshape merging the batch dims, the transpose folded into the matmul;
    each gives onnxruntime's values natively, as do contractions that keep their other
    forms (sum over a shared letter, a permuted right operand)."""
    cases = {
        "bhqd,bhkd->bhqk": ((2, 4, 5, 8), (2, 4, 6, 8), 1),
        "bid,jd->bij": ((2, 3, 8), (5, 8), 1),
        "bij,bjk->bik": ((2, 3, 4), (2, 4, 5), 1),
        "xyz,zyw->xw": ((2, 3, 4), (4, 3, 5), None),
        "bi,bi->b": ((3, 4), (3, 4), None),
    }
    rng = np.random.default_rng(22)
    for equation, (sa, sb, ops) in cases.items():
        graph = helper.make_graph(
            [helper.make_node("Einsum", ["a", "b"], ["y"], equation=equation)], "g",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, sa),
             helper.make_tensor_value_info("b", TensorProto.FLOAT, sb)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        )  # fmt: skip
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
        lir = CompilePipeline(target="cpu").compile(import_model(model)).lir
        kinds = [op.name for op in lir.walk() if op.name.startswith(("mir.", "lir.view"))]
        computed = [k for k in kinds if k not in ("mir.input", "mir.param", "mir.constant")]
        if ops is not None:
            assert len(computed) == ops, (equation, computed)
        feeds = {"a": rng.standard_normal(sa).astype(np.float32),
                 "b": rng.standard_normal(sb).astype(np.float32)}  # fmt: skip
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        (want,) = session.run(None, feeds)
        (got,) = backend.prepare(model).run(feeds)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=equation)
