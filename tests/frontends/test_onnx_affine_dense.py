"""A lone per-channel scale, division or shift next to a dense layer folds into the
layer's weight and bias (TVM's FoldScaleAxis), so scikit-learn's PCA whitening --
``(x - mean) @ components / std``, three ops in onnxruntime -- and a scaler before a
linear model are each one dense layer, with onnxruntime's values; a scaler alone,
``(x - mean) / scale`` (two ops in onnxruntime), is one scale-shift."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model
from rlx_compile.pipeline import CompilePipeline

RNG = np.random.default_rng(29)
LEAVES = ("mir.input", "mir.param", "mir.constant")


def _model(nodes: list[onnx.NodeProto], inits: dict[str, np.ndarray], out: int,
           dtype: Any = np.float32) -> onnx.ModelProto:  # fmt: skip
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", elem, [5, 6])],
        [helper.make_tensor_value_info("y", elem, [5, out])],
        [numpy_helper.from_array(v.astype(dtype), k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _per_run_kinds(lir: Any) -> list[str]:
    """The ops that read a graph input, at any distance (those on the weights alone are
    computed once: ``param-hoist``)."""
    per_run: set[Any] = set()
    kinds = []
    for op in lir.body.block.ops:
        if op.name == "mir.input" or any(v in per_run for v in op.operands):
            per_run.update(op.results)
            if op.name not in LEAVES and op.name.startswith("mir."):
                kinds.append(op.name)
    return kinds


def _check(model: onnx.ModelProto, kinds: list[str], dtype: Any = np.float32) -> None:
    lir = CompilePipeline(target="cpu").compile(import_model(model)).lir
    assert _per_run_kinds(lir) == kinds
    x = (RNG.standard_normal((5, 6)) * 3).astype(dtype)
    (got,) = backend.prepare(model).run({"x": x})
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * float(np.abs(want).max()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pca_whitening_is_one_dense_layer(dtype: Any) -> None:
    model = _model(
        [helper.make_node("Sub", ["x", "mean"], ["c"]),
         helper.make_node("MatMul", ["c", "components"], ["p"]),
         helper.make_node("Div", ["p", "std"], ["y"])],
        {"mean": RNG.standard_normal(6), "components": RNG.standard_normal((6, 3)),
         "std": RNG.uniform(0.5, 2.0, 3)},
        3, dtype,
    )  # fmt: skip
    _check(model, ["mir.fused_matmul_bias_act"], dtype)


def test_a_scaler_before_a_linear_model_is_one_dense_layer() -> None:
    model = _model(
        [helper.make_node("Sub", ["x", "offset"], ["c"]),
         helper.make_node("Mul", ["c", "scale"], ["s"]),
         helper.make_node("Gemm", ["s", "coef", "intercept"], ["y"])],
        {"offset": RNG.standard_normal(6), "scale": RNG.uniform(0.5, 2.0, 6),
         "coef": RNG.standard_normal((6, 2)), "intercept": RNG.standard_normal(2)},
        2,
    )  # fmt: skip
    _check(model, ["mir.fused_matmul_bias_act"])


def test_a_scale_after_a_plain_matmul_stays_a_plain_matmul() -> None:
    model = _model(
        [helper.make_node("MatMul", ["x", "w"], ["p"]), helper.make_node("Mul", ["p", "s"], ["y"])],
        {"w": RNG.standard_normal((6, 4)), "s": RNG.uniform(-2.0, 2.0, 4)},
        4,
    )
    _check(model, ["mir.matmul"])


def test_a_scalar_factor_the_weight_cannot_take_exactly_stays_apart() -> None:
    """It scales the product instead (fuse-scaled-matmul: the chain's numbers)."""
    model = _model(
        [helper.make_node("MatMul", ["x", "w"], ["p"]), helper.make_node("Mul", ["p", "s"], ["y"])],
        {"w": RNG.standard_normal((6, 4)), "s": np.array(0.3)},
        4,
    )
    _check(model, ["mir.scaled_matmul"])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale_op", ["Div", "Mul"])
def test_a_standard_scaler_is_one_scale_shift(dtype: Any, scale_op: str) -> None:
    model = _model(
        [helper.make_node("Sub", ["x", "mean"], ["c"]),
         helper.make_node(scale_op, ["c", "scale"], ["y"])],
        {"mean": RNG.standard_normal(6), "scale": RNG.uniform(0.5, 2.0, 6)},
        6, dtype,
    )  # fmt: skip
    _check(model, ["mir.fused_scale_shift_act"], dtype)
