"""ONNX ReduceLogSumExp imports as one ``mir.reduce_log_sum_exp`` and computes what
onnxruntime computes: opset 13 (axes an attribute) and 18 (axes an input), keepdims 0
and 1, one axis, several, negative ones, none (every axis); on the reference executor
and compiled for the cpu target."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from tests.reduce_cases import onnx_reduce

from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model
from rlx_compile.interpreter import run


def model(axes: list[int] | None, keepdims: int, opset: int, dtype: int) -> onnx.ModelProto:
    return onnx_reduce("ReduceLogSumExp", axes, keepdims, opset, dtype)


def feed(dtype: np.dtype) -> np.ndarray:
    x = np.random.default_rng(1).standard_normal((2, 3, 4)) * 5
    x[0, 1] = [100.0, 101.0, 99.0, -50.0]  # exp overflows f32 without the shift
    x[1, 2, 1] = -np.inf
    return x.astype(dtype)


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("axes", [[2], [0, 2], [-1, -2], [1], None], ids=str)
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.DOUBLE], ids=["f32", "f64"])
def test_matches_onnxruntime(axes: list[int] | None, keepdims: int, opset: int, dtype: int) -> None:
    m = model(axes, keepdims, opset, dtype)
    x = feed(helper.tensor_dtype_to_np_dtype(dtype))
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    module = import_model(m)
    names = [op.name for op in module.walk() if op.name.startswith("mir.")]
    assert names == ["mir.input", "mir.reduce_log_sum_exp"]
    tol = 1e-6 if dtype == TensorProto.FLOAT else 1e-13
    got = run(module, {"x": x})["y"]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    compiled = CompilePipeline(target="cpu").compile(module).run({"x": x})["y"]
    np.testing.assert_array_equal(compiled, got)


def test_an_integer_input_is_refused_by_name() -> None:
    with pytest.raises(Exception, match="float element type, got i32"):
        import_model(model([1], 1, 18, TensorProto.INT32))
