"""onnxruntime's dynamically quantised matmuls: the chain ``quantize_dynamic`` writes
(DynamicQuantizeLinear, MatMulInteger, Cast, the scales' Mul, the rescale, the bias Add)
fuses into one ``mir.dynamic_quantize_matmul`` per MatMul on the cpu target, which gives
bit for bit what the unfused chain gives through the reference executor, and what
onnxruntime gives; so do onnxruntime's own fused nodes (com.microsoft
DynamicQuantizeMatMul, MatMulIntegerToFloat) of the model it optimised. Models: a tiny
float model (a biased MatMul, a ReLU, a MatMul without bias, two MatMuls reading one
input) quantised by ``quantize_dynamic`` in a tmp dir."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model, param_values

STAGE = "fuse-dynamic-quantize-matmul"
ROWS, K, HIDDEN, N = 3, 8, 6, 5


def float_model(seed: int) -> onnx.ModelProto:
    """x [2, ROWS, K] -> relu(x · w1 + b1) · w2, and x · wa + x · wb (one quantisation of x
    for both: onnxruntime's MatMulIntegerToFloat)."""
    rng = np.random.default_rng(seed)

    def init(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["h2"]),
        helper.make_node("Relu", ["h2"], ["h3"]),
        helper.make_node("MatMul", ["h3", "w2"], ["y"]),
        helper.make_node("MatMul", ["x", "wa"], ["a"]),
        helper.make_node("MatMul", ["x", "wb"], ["b"]),
        helper.make_node("Add", ["a", "b"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, ROWS, K])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "z")],
        [init("w1", K, HIDDEN), init("b1", HIDDEN), init("w2", HIDDEN, N), init("wa", K, N),
         init("wb", K, N)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def quantized(tmp: Path, per_channel: bool, weight_type: QuantType) -> Path:
    src, dst = tmp / "float.onnx", tmp / "quantized.onnx"
    onnx.save(float_model(1), src)
    # reduce_range for s8 weights: onnxruntime's u8 x s8 kernels on AVX2 without VNNI
    # saturate the int16 sum of two products, which full-range weights exceed (its own
    # advice on such machines); RLX is exact either way
    reduce_range = weight_type == QuantType.QInt8
    quantize_dynamic(src, dst, per_channel=per_channel, weight_type=weight_type,
                     reduce_range=reduce_range)  # fmt: skip
    return dst


def feeds(seed: int) -> dict[str, np.ndarray]:
    x = np.random.default_rng(seed).standard_normal((2, ROWS, K)).astype(np.float32) * 3
    return {"x": x}


def compute_kinds(result: object) -> Counter[str]:
    return Counter(op.name for op in result.lir.body.block.ops)  # type: ignore[attr-defined]


CONFIGS = [(False, QuantType.QInt8), (True, QuantType.QInt8), (True, QuantType.QUInt8)]


@pytest.mark.parametrize(("per_channel", "weight_type"), CONFIGS)
def test_fused_model_is_the_unfused_chain(
    tmp_path: Path, per_channel: bool, weight_type: QuantType
) -> None:
    path = quantized(tmp_path, per_channel, weight_type)
    model = onnx.load(path)
    module = import_model(model)
    params = param_values(model, module)
    fused = CompilePipeline(target="cpu").compile(module)
    chain = CompilePipeline(target="cpu", fuse_skip=(STAGE,)).compile(module)
    kinds = compute_kinds(fused)
    assert kinds["mir.dynamic_quantize_matmul"] == 4
    assert not kinds["mir.dynamic_quantize_linear"] and not kinds["mir.matmul_integer"]
    assert compute_kinds(chain)["mir.matmul_integer"] == 4
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for seed in range(3):
        x = feeds(seed)
        got, want = fused.run(x, params), chain.run(x, params)
        ort_y, ort_z = session.run(None, x)
        for name, peer in (("y", ort_y), ("z", ort_z)):
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
            np.testing.assert_allclose(got[name], peer, rtol=1e-5, atol=1e-5, err_msg=name)


def ort_optimized(path: Path, tmp: Path) -> onnx.ModelProto:
    """``path`` as onnxruntime's EXTENDED graph optimisation saves it: x's quantisation,
    shared by three com.microsoft MatMulIntegerToFloat (one with the bias), and a
    DynamicQuantizeMatMul."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp / "optimized.onnx")
    ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return onnx.load(options.optimized_model_filepath)


@pytest.mark.parametrize(("per_channel", "weight_type"), CONFIGS)
def test_onnxruntime_fused_nodes_import(
    tmp_path: Path, per_channel: bool, weight_type: QuantType
) -> None:
    path = quantized(tmp_path, per_channel, weight_type)
    model = ort_optimized(path, tmp_path)
    nodes = Counter(n.op_type for n in model.graph.node if n.domain == "com.microsoft")
    assert nodes["DynamicQuantizeMatMul"] == 1 and nodes["MatMulIntegerToFloat"] == 3
    module = import_model(model)
    params = param_values(model, module)
    result = CompilePipeline(target="cpu").compile(module)
    # The shared quantisation fuses into each MatMulIntegerToFloat's chain; the result is
    # the unfused quantize_dynamic chain's, bit for bit.
    assert compute_kinds(result)["mir.dynamic_quantize_matmul"] == 4
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    unfused = onnx.load(path)
    unfused_module = import_model(unfused)
    unfused_params = param_values(unfused, unfused_module)
    reference = CompilePipeline(target="cpu", fuse_skip=(STAGE,)).compile(unfused_module)
    for seed in range(3):
        x = feeds(seed)
        got, want = result.run(x, params), reference.run(x, unfused_params)
        for name, peer in zip(("y", "z"), session.run(None, x), strict=True):
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
            np.testing.assert_allclose(got[name], peer, rtol=1e-5, atol=1e-5, err_msg=name)
