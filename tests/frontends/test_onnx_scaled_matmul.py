"""A MatMul whose product is only divided or multiplied by a one-element constant (the
scores ``q · kᵀ / √d`` of an attention no attention fusion takes) is one
``mir.scaled_matmul`` on cpu, as onnxruntime's FusedMatMul takes the scale into its
alpha. Natively it gives onnxruntime's values, and in every float type the values of the
unfused chain on the reference executor, bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.builder import ModuleBuilder
from rlx_compile.dialects.types import DType
from rlx_compile.frontends.onnx import import_model
from rlx_compile.interpreter import run
from rlx_compile.native import build
from rlx_compile.pipeline import CompilePipeline

LEAVES = ("mir.input", "mir.param", "mir.constant")


def _model(elem: int) -> onnx.ModelProto:
    """Scores over √8 through a mask add, and a product times 1/3 (the constant on the
    left): neither reaches a softmax, so no attention fusion takes them."""
    np_type = helper.tensor_dtype_to_np_dtype(elem)
    nodes = [
        helper.make_node("MatMul", ["q", "k"], ["s"]),
        helper.make_node("Div", ["s", "d"], ["sd"]),
        helper.make_node("Add", ["sd", "m"], ["y"]),
        helper.make_node("MatMul", ["q", "w"], ["p"]),
        helper.make_node("Mul", ["third", "p"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("q", elem, [2, 4, 8]),
         helper.make_tensor_value_info("k", elem, [2, 8, 4]),
         helper.make_tensor_value_info("m", elem, [2, 4, 4]),
         helper.make_tensor_value_info("w", elem, [8, 5])],
        [helper.make_tensor_value_info("y", elem, [2, 4, 4]),
         helper.make_tensor_value_info("z", elem, [2, 4, 5])],
        [numpy_helper.from_array(np.array(np.sqrt(8.0), np_type), "d"),
         numpy_helper.from_array(np.array(1 / 3, np_type), "third")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _compute_kinds(module: Any) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("mir.") and op.name not in LEAVES]


def _feeds(elem: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(31)
    shapes = {"q": (2, 4, 8), "k": (2, 8, 4), "m": (2, 4, 4), "w": (8, 5)}
    np_type = helper.tensor_dtype_to_np_dtype(elem)
    return {n: rng.standard_normal(s).astype(np_type) for n, s in shapes.items()}


def test_one_op_with_onnxruntimes_values() -> None:
    model = _model(TensorProto.FLOAT)
    kinds = _compute_kinds(CompilePipeline(target="cpu").compile(import_model(model)).lir)
    assert sorted(kinds) == ["mir.add", "mir.scaled_matmul", "mir.scaled_matmul"]
    feeds = _feeds(TensorProto.FLOAT)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for got, want in zip(backend.prepare(model).run(feeds), session.run(None, feeds), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("elem", [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16])
def test_native_values_are_the_chains(elem: int) -> None:
    """The native kernel rounds the scale to the element type, as the chain's constant
    is (1/3 and √8 are not exact in any of them), and applies it to the rounded product:
    the unfused chain's values natively, bit for bit (the same product kernel), and the
    reference executor's within a product's rounding."""
    module = import_model(_model(elem))
    fused = CompilePipeline(target="cpu").compile(module).lir
    chain = CompilePipeline(target="cpu", fuse_skip=("fuse-scaled-matmul",)).compile(module).lir
    assert fused is not None and chain is not None
    assert _compute_kinds(fused).count("mir.scaled_matmul") == 2
    assert "mir.scaled_matmul" not in _compute_kinds(chain)
    feeds = _feeds(elem)
    got = build(fused, mode="direct").run(feeds)
    want = build(chain, mode="direct").run(feeds)
    reference = run(chain, feeds)
    tol = 1e-2 if elem == TensorProto.FLOAT16 else 1e-5
    for name in ("y", "z"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        np.testing.assert_allclose(got[name], reference[name], rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("dtype", [DType.F16, DType.BF16, DType.F32])
def test_a_scale_the_type_cannot_hold_is_rounded_to_it(dtype: DType) -> None:
    """An op written with a scale of 1/3 (not what a fusion makes: its scale comes from
    a constant of the element type) computes as the chain with that constant."""

    def compiled(body: Any) -> Any:
        with ModuleBuilder("g") as m:
            a, b = m.input("a", (3, 16), dtype), m.input("b", (16, 5), dtype)
            m.output(body(m, a, b), names=["y"])
        skip = ("fuse-scaled-matmul",)
        return CompilePipeline(target="cpu", fuse_skip=skip).compile(m.module).lir

    scaled = compiled(lambda m, a, b: m.scaled_matmul(a, b, 1 / 3))
    chain = compiled(lambda m, a, b: m.mul(m.matmul(a, b), m.scalar_like(1 / 3, a)))
    assert "mir.scaled_matmul" in _compute_kinds(scaled)
    rng = np.random.default_rng(33)
    feeds = {
        "a": rng.standard_normal((3, 16)).astype(dtype.numpy),
        "b": rng.standard_normal((16, 5)).astype(dtype.numpy),
    }
    got = build(scaled, mode="direct").run(feeds)["y"]
    np.testing.assert_array_equal(got, build(chain, mode="direct").run(feeds)["y"])
