"""onnxruntime's QDQ format on a target with integer kernels: the model's quantised convs
and matmuls become ``mir.integer_conv`` / ``mir.integer_matmul`` (requantised where a
QuantizeLinear follows), and reshapes, transposes and concats between a DequantizeLinear
and a QuantizeLinear of the same parameters move the integers themselves. Models are
made by onnxruntime's own ``quantize_static`` (per tensor and per channel, u8 and s8
activations). A target without integer kernels (cuda) computes in f32 on the weights
dequantized at compile time: the model's QDQ semantics, which the integer kernels match
within a step of the output's scale (they accumulate exactly where f32 rounds).
onnxruntime runs the model as QLinearConv, QLinearAdd, a lookup-table QLinearSigmoid...,
in fixed point: a value on a step's edge rounds the other way, and the next layers carry
that on, so both are within two steps of it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_static,
)
from tests.frontends.test_onnx_qoperator import (
    Batches,
    assert_within_a_step,
    check_quantized_softmax,
    float_cnn,
)

from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model

U8, I8, F = TensorProto.UINT8, TensorProto.INT8, TensorProto.FLOAT
FLOAT_KERNELS = {"mir.conv", "mir.fused_conv_bias_act", "mir.matmul", "mir.fused_matmul_bias_act"}


def qdq_model(tmp_path: Path, activations: QuantType, weights: QuantType, per_channel: bool):
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(float_cnn(), src)
    # reduce_range: 7-bit weights, as onnxruntime advises on AVX2 without VNNI (see
    # test_onnx_qoperator.gemm_model)
    quantize_static(str(src), str(dst), Batches(8), quant_format=QuantFormat.QDQ,
                    activation_type=activations, weight_type=weights, per_channel=per_channel,
                    reduce_range=True)  # fmt: skip
    return dst


def compiled_kinds(path: Path, target: str) -> tuple[Counter[str], np.ndarray]:
    """The op kinds of the compiled module and its y; no weight may be left dequantized
    at run time (a dequantize of a constant)."""
    result = CompilePipeline(target=target).compile(import_model(path))
    kinds = Counter(op.name for op in result.module.walk())
    for op in result.module.walk():
        if op.name == "mir.dequantize":
            assert op.operands[0].owner.name != "mir.constant", op
    feeds = {"x": np.random.default_rng(4).standard_normal([1, 3, 8, 8]).astype(np.float32)}
    return kinds, result.run(feeds)["y"]


def onnxruntime_output(path: Path) -> tuple[np.ndarray, float]:
    """onnxruntime's y and the scale of the last DequantizeLinear (y's step)."""
    m = onnx.load(path)
    feeds = {"x": np.random.default_rng(4).standard_normal([1, 3, 8, 8]).astype(np.float32)}
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    last = next(node for node in m.graph.node if node.output[0] == "y")
    assert last.op_type == "DequantizeLinear"
    scale = next(t for t in m.graph.initializer if t.name == last.input[1])
    return want, float(numpy_helper.to_array(scale))


def assert_within_steps(got: np.ndarray, want: np.ndarray, step: float, steps: int) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64)) / step
    assert diff.max(initial=0.0) <= steps + 1e-5, diff


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("activations", [QuantType.QUInt8, QuantType.QInt8])
def test_qdq_convs_and_matmuls_run_on_integers(
    tmp_path: Path, activations: QuantType, per_channel: bool
) -> None:
    path = qdq_model(tmp_path, activations, QuantType.QInt8, per_channel)
    want, step = onnxruntime_output(path)
    kinds, got = compiled_kinds(path, "cpu")
    # the three convs and the gemm (its transB weight transposed as integers)
    assert kinds["mir.integer_conv"] == 3 and kinds["mir.integer_matmul"] == 1, kinds
    assert not FLOAT_KERNELS & set(kinds), kinds
    _, f32 = compiled_kinds(path, "cuda")
    assert_within_a_step(got, f32, step)
    assert_within_steps(got, want, step, 2)


@pytest.mark.parametrize("per_channel", [False, True])
def test_qdq_on_a_target_without_integer_kernels(tmp_path: Path, per_channel: bool) -> None:
    """cuda claims no integer kernels: f32 convs on the weights dequantized at compile
    time (no dequantize of a weight is left to run)."""
    path = qdq_model(tmp_path, QuantType.QUInt8, QuantType.QInt8, per_channel)
    want, step = onnxruntime_output(path)
    kinds, got = compiled_kinds(path, "cuda")
    assert not {"mir.integer_conv", "mir.integer_matmul"} & set(kinds), kinds
    assert kinds["mir.fused_conv_bias_act"] + kinds["mir.conv"] == 3, kinds
    assert_within_steps(got, want, step, 2)


def test_asymmetric_weights_stay_float(tmp_path: Path) -> None:
    """u8 weights with a zero point: the integer conv takes symmetric i8 weights only,
    so the convs stay f32 on weights dequantized at compile time, and agree as well;
    the gemm's per-tensor u8 weight is an integer matmul's, with its zero point.
    The average pool keeps its input's scale here: a 2x2 mean is a tie (k + 1/2 steps)
    in a quarter of the windows, which mir.quantized_avg_pool rounds to even where the
    f32 chain (and onnxruntime) round it by their f32 errors; the gemm after the pools
    carries such a step to a third one from onnxruntime on one output (the f32 chain is
    two from it, the op a step from the chain)."""
    path = qdq_model(tmp_path, QuantType.QUInt8, QuantType.QUInt8, per_channel=False)
    want, step = onnxruntime_output(path)
    kinds, got = compiled_kinds(path, "cpu")
    assert "mir.integer_conv" not in kinds and kinds["mir.integer_matmul"] == 1, kinds
    _, f32 = compiled_kinds(path, "cuda")
    assert_within_steps(got, f32, step, 1)
    assert_within_steps(got, want, step, 3)


# ---------------------------------------------------------------------------------
# Quantised elementwise chains: one table lookup
# ---------------------------------------------------------------------------------

Q_PARAMS = {U8: (0.05, 128), I8: (0.04, -5)}


def float_io_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, list[int]],
    y_shape: list[int],
    params: dict[str, Any],
) -> onnx.ModelProto:
    """An opset-17 model of ``nodes``: f32 ``inputs`` (by name, with their shapes), one f32
    output y, the initializers ``params``."""
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(k, F, shape) for k, shape in inputs.items()],
        [helper.make_tensor_value_info("y", F, y_shape)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in params.items()],
    )  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def chain_model(dtype: int, body: list[onnx.NodeProto], extra: dict[str, np.ndarray] | None = None):
    """x -> QuantizeLinear -> DequantizeLinear -> ``body`` (from 'xd' to 'f') ->
    QuantizeLinear -> DequantizeLinear -> y, per tensor, in ``dtype``."""
    scale, zero = Q_PARAMS[dtype]
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "s", "z"], ["xq"]),
        n("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
        *body,
        n("QuantizeLinear", ["f", "s2", "z"], ["fq"]),
        n("DequantizeLinear", ["fq", "s2", "z"], ["y"]),
    ]
    inits = {"s": np.float32(scale), "s2": np.float32(scale / 2), "z": np.array(zero, np_type),
             **(extra or {})}  # fmt: skip
    return float_io_model(nodes, {"x": [2, 3, 4, 5]}, [2, 3, 4, 5], inits)


def silu(dtype: int) -> list[onnx.NodeProto]:
    """x * sigmoid(x), the sigmoid quantized between the two (as quantize_static writes)."""
    n = helper.make_node
    return [
        n("Sigmoid", ["xd"], ["g"]),
        n("QuantizeLinear", ["g", "s3", "z3"], ["gq"]),
        n("DequantizeLinear", ["gq", "s3", "z3"], ["gd"]),
        n("Mul", ["xd", "gd"], ["f"]),
    ]


CHAINS = {
    "sigmoid": lambda t: ([helper.make_node("Sigmoid", ["xd"], ["f"])], {}),
    "leaky_relu": lambda t: ([helper.make_node("LeakyRelu", ["xd"], ["f"], alpha=0.1)], {}),
    "hard_swish": lambda t: ([helper.make_node("HardSwish", ["xd"], ["f"])], {}),
    "tanh_plus_one": lambda t: (
        [helper.make_node("Tanh", ["xd"], ["h"]), helper.make_node("Add", ["h", "one"], ["f"])],
        {"one": np.float32(1.0)},
    ),
    "silu": lambda t: (silu(t), {"s3": np.float32(1 / 255), "z3": np.array(0, np.uint8)}),
}


@pytest.mark.parametrize("dtype", [U8, I8])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_quantised_chain_is_one_lookup(chain: str, dtype: int) -> None:
    body, extra = CHAINS[chain](dtype)
    m = chain_model(dtype, body, extra)
    feeds = {"x": np.random.default_rng(5).standard_normal([2, 3, 4, 5]).astype(np.float32) * 4}
    got = {}
    for target in ("cpu", "cuda"):
        result = CompilePipeline(target=target).compile(import_model(m))
        got[target] = (Counter(op.name for op in result.module.walk()), result.run(feeds)["y"])
    kinds, y = got["cpu"]
    # quantize x, the lookup, dequantize y: the chain's float ops are gone
    assert kinds["mir.gather"] == 1 and kinds["mir.quantize"] == 1, kinds
    assert kinds["mir.dequantize"] == 1, kinds
    assert not {"mir.sigmoid", "mir.leaky_relu", "mir.hard_swish", "mir.tanh", "mir.mul"} & set(
        kinds
    )
    # the table is the chain's reference result at every input: the same integers
    np.testing.assert_array_equal(y, got["cuda"][1])
    assert "mir.gather" not in got["cuda"][0]
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    assert_within_a_step(y, want, Q_PARAMS[dtype][0] / 2)


@pytest.mark.parametrize("dtype", [U8, I8])
def test_gelu_of_a_biased_sum_is_one_lookup(dtype: int) -> None:
    """A GELU (div, erf, + 1, times x, / 2, the erf quantized between) of a quantized sum
    with a bias vector (a dense layer's, as in a QDQ transformer): the sum is a function
    of more than one tensor, so the GELU's chain starts at its dequantize -- one lookup,
    the same integers as the f32 chain."""
    n = helper.make_node
    scale = Q_PARAMS[dtype][0]
    body = [
        n("Add", ["xd", "bias"], ["a"]),
        n("QuantizeLinear", ["a", "s", "z"], ["aq"]),
        n("DequantizeLinear", ["aq", "s", "z"], ["ad"]),
        n("Div", ["ad", "root2"], ["dv"]),
        n("Erf", ["dv"], ["e"]),
        n("QuantizeLinear", ["e", "s", "z"], ["eq"]),
        n("DequantizeLinear", ["eq", "s", "z"], ["ed"]),
        n("Add", ["ed", "one"], ["p"]),
        n("Mul", ["ad", "p"], ["m"]),
        n("Mul", ["m", "half"], ["f"]),
    ]
    extra = {"bias": np.linspace(-1, 1, 5).astype(np.float32), "root2": np.float32(2**0.5),
             "one": np.float32(1.0), "half": np.float32(0.5)}  # fmt: skip
    m = chain_model(dtype, body, extra)
    feeds = {"x": np.random.default_rng(8).standard_normal([2, 3, 4, 5]).astype(np.float32) * 4}
    result = CompilePipeline().compile(import_model(m))
    kinds = Counter(op.name for op in result.module.walk())
    assert kinds["mir.gather"] == 1 and not {"mir.erf", "mir.mul", "mir.div"} & set(kinds), kinds
    y = result.run(feeds)["y"]
    np.testing.assert_array_equal(
        y, CompilePipeline(target="cuda").compile(import_model(m)).run(feeds)["y"]
    )
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert_within_a_step(y, session.run(None, feeds)[0], scale / 2)


def test_function_of_two_tensors_is_not_tabulated() -> None:
    """An add of two quantized tensors, a product with a per-channel vector: not a
    function of one 8-bit value, so no table; a product of x dequantized twice (other
    scales) is one, and is tabulated, as is a product with a vector of one value."""
    n = helper.make_node
    splat = numpy_helper.from_array(np.full(5, 1.5, dtype=np.float32))
    for body, extra, tabulated in (
        ([n("Add", ["xd", "x2d"], ["f"])], {}, False),
        ([n("Mul", ["xd", "v"], ["f"])], {"v": np.arange(5, dtype=np.float32)}, False),
        ([n("Mul", ["xd", "xd2"], ["f"])], {}, True),
        ([n("Constant", [], ["v"], value=splat), n("Mul", ["xd", "v"], ["f"])], {}, True),
    ):
        m = chain_model(U8, body, extra)
        m.graph.node.insert(2, n("DequantizeLinear", ["xq", "s2", "z"], ["xd2"]))
        m.graph.node.insert(2, n("DequantizeLinear", ["x2q", "s", "z"], ["x2d"]))
        m.graph.node.insert(2, n("QuantizeLinear", ["x2", "s", "z"], ["x2q"]))
        m.graph.input.append(helper.make_tensor_value_info("x2", F, [2, 3, 4, 5]))
        result = CompilePipeline().compile(import_model(m))
        kinds = Counter(op.name for op in result.module.walk())
        assert ("mir.gather" in kinds) == tabulated, kinds
        rng = np.random.default_rng(6)
        feeds = {k: rng.standard_normal([2, 3, 4, 5]).astype(np.float32) for k in ("x", "x2")}
        want = CompilePipeline(target="cuda").compile(import_model(m)).run(feeds)["y"]
        np.testing.assert_array_equal(result.run(feeds)["y"], want)


@pytest.mark.parametrize("dtype", [U8, I8])
def test_max_pool_and_reshape_run_on_integers(dtype: int) -> None:
    """A max pool and a reshape between a DequantizeLinear and a QuantizeLinear of the
    same parameters: the integers pooled and moved, the same as in f32."""
    n = helper.make_node
    body = [
        n("MaxPool", ["xd"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("QuantizeLinear", ["p", "s", "z"], ["pq"]),
        n("DequantizeLinear", ["pq", "s", "z"], ["pd"]),
        n("Reshape", ["pd", "shape"], ["f"]),
    ]
    m = chain_model(dtype, body, {"shape": np.array([2, 3, 4, 5])})
    # the last QuantizeLinear takes s too (not s2): the reshape moves integers as well
    for node in m.graph.node[-2:]:
        node.input[1] = "s"
    feeds = {"x": np.random.default_rng(7).standard_normal([2, 3, 4, 5]).astype(np.float32) * 3}
    result = CompilePipeline().compile(import_model(m))
    kinds = Counter(op.name for op in result.module.walk())
    assert kinds["mir.quantize"] == 1 and kinds["mir.dequantize"] == 1, kinds
    pool = next(op for op in result.module.walk() if op.name == "mir.max_pool")
    assert pool.operands[0].type.dtype.value == ("u8" if dtype == U8 else "i8")
    want = CompilePipeline(target="cuda").compile(import_model(m)).run(feeds)["y"]
    np.testing.assert_array_equal(result.run(feeds)["y"], want)


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("types", [(U8, U8, U8), (I8, U8, I8), (I8, I8, U8)])
def test_quantized_add_is_one_op(types: tuple[int, int, int], relu: bool) -> None:
    """quantize(add(dequantize(a), dequantize(b))) (a residual add as quantize_static
    writes it, with a relu after it or not): one mir.quantized_add on cpu, the same
    integers as the four ops (cuda runs those), within a step of onnxruntime's
    QLinearAdd."""
    n = helper.make_node
    ta, tb, ty = types
    params = {
        "sa": np.float32(0.031), "za": np.array(Q_PARAMS[ta][1], _np(ta)),
        "sb": np.float32(0.047), "zb": np.array(Q_PARAMS[tb][1], _np(tb)),
        "sy": np.float32(0.06), "zy": np.array(Q_PARAMS[ty][1] // 3, _np(ty)),
    }  # fmt: skip
    nodes = [
        n("QuantizeLinear", ["a", "sa", "za"], ["aq"]),
        n("DequantizeLinear", ["aq", "sa", "za"], ["ad"]),
        n("QuantizeLinear", ["b", "sb", "zb"], ["bq"]),
        n("DequantizeLinear", ["bq", "sb", "zb"], ["bd"]),
        n("Add", ["ad", "bd"], ["s" if relu else "t"]),
        *([n("Relu", ["s"], ["t"])] if relu else []),
        n("QuantizeLinear", ["t", "sy", "zy"], ["tq"]),
        n("DequantizeLinear", ["tq", "sy", "zy"], ["y"]),
    ]
    m = float_io_model(nodes, {"a": [2, 3, 8], "b": [2, 3, 8]}, [2, 3, 8], params)
    rng = np.random.default_rng(8)
    feeds = {k: rng.standard_normal([2, 3, 8]).astype(np.float32) * 3 for k in "ab"}
    kinds = _check_on_integers(m, feeds, {"mir.quantized_add": 1, "mir.add": 0}, 0.06)
    assert kinds["mir.dequantize"] == 1 and "mir.relu" not in kinds, kinds


def _check_on_integers(
    m: onnx.ModelProto, feeds: dict[str, np.ndarray], kinds_wanted: dict[str, int],
    step: float, chain: str | None = "exact",
) -> Counter[str]:  # fmt: skip
    """``m`` compiles for cpu to the integer ops ``kinds_wanted`` (kind: count; count 0:
    none of that kind), which give the reference's values natively, within a step of
    onnxruntime; ``chain``: against the f32 ops they stand for (cuda runs those) --
    "exact" (the same integers) or "step" (within a step: an exact integer sum). The op
    kinds of the compiled module."""
    result = CompilePipeline().compile(import_model(m))
    kinds = Counter(op.name for op in result.module.walk())
    assert all(kinds[k] == count for k, count in kinds_wanted.items()), kinds
    got = result.run(feeds)["y"]
    np.testing.assert_array_equal(got, result.build().run(feeds)["y"])  # the C kernel
    if chain is not None:
        want = CompilePipeline(target="cuda").compile(import_model(m)).run(feeds)["y"]
        if chain == "exact":
            np.testing.assert_array_equal(got, want)
        else:
            assert_within_a_step(got, want, step)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert_within_a_step(got, session.run(None, feeds)[0], step)
    return kinds


@pytest.mark.parametrize("types", [(U8, I8, U8), (I8, I8, I8)])
def test_quantized_bias_and_mask_adds_are_one_op(types: tuple[int, int, int]) -> None:
    """A quantized bias vector (a constant: onnxruntime's QLinearAdd with a constant
    side) and a mask over the heads (a tensor) added to quantized scores, as a QDQ
    transformer writes them: one mir.quantized_add each, broadcasting; the same integers
    as the ops (cuda runs those) and the C kernel, within a step of onnxruntime."""
    n = helper.make_node
    ta, tb, ty = types
    params = {
        "sa": np.float32(0.031), "za": np.array(Q_PARAMS[ta][1], _np(ta)),
        "sb": np.float32(0.02), "zb": np.array(0, _np(tb)),
        "bias": np.array([3, -7, 11, 0, -128, 127, 5, -1], _np(tb)),
        "sy": np.float32(0.06), "zy": np.array(Q_PARAMS[ty][1] // 3, _np(ty)),
    }  # fmt: skip
    nodes = [
        n("QuantizeLinear", ["a", "sa", "za"], ["aq"]),
        n("DequantizeLinear", ["aq", "sa", "za"], ["ad"]),
        n("DequantizeLinear", ["bias", "sb", "zb"], ["bd"]),
        n("Add", ["ad", "bd"], ["t"]),
        n("QuantizeLinear", ["t", "sy", "zy"], ["tq"]),
        n("DequantizeLinear", ["tq", "sy", "zy"], ["td"]),
        n("QuantizeLinear", ["mask", "sa", "za"], ["mq"]),
        n("DequantizeLinear", ["mq", "sa", "za"], ["md"]),
        n("Add", ["md", "td"], ["u"]),
        n("QuantizeLinear", ["u", "sy", "zy"], ["uq"]),
        n("DequantizeLinear", ["uq", "sy", "zy"], ["y"]),
    ]
    m = float_io_model(nodes, {"a": [2, 3, 8], "mask": [1, 3, 1]}, [2, 3, 8], params)
    rng = np.random.default_rng(9)
    feeds = {
        "a": rng.standard_normal([2, 3, 8]).astype(np.float32) * 3,
        "mask": rng.standard_normal([1, 3, 1]).astype(np.float32),
    }
    _check_on_integers(m, feeds, {"mir.quantized_add": 2, "mir.add": 0}, 0.06)


@pytest.mark.parametrize("types", [(U8, U8), (I8, U8), (U8, I8)])
def test_attention_product_of_activations_is_one_integer_matmul(
    types: tuple[int, int],
) -> None:
    """Q · K^T of two quantized activations (zero points on both, the transpose between
    its own Q/DQ, as quantize_static writes an attention's scores): a transpose of the
    integers and one mir.integer_matmul with a weight zero point,
    requantised, on cpu; the integers of the f32 chain within a step (the op sums
    exactly), natively the reference's, within a step of onnxruntime."""
    n = helper.make_node
    ta, tb = types
    params = {
        "sa": np.float32(0.031), "za": np.array(Q_PARAMS[ta][1] // 2, _np(ta)),
        "sb": np.float32(0.047), "zb": np.array(Q_PARAMS[tb][1] // 3 + 1, _np(tb)),
        "sy": np.float32(0.09), "zy": np.array(Q_PARAMS[U8][1], _np(U8)),
    }  # fmt: skip
    nodes = [
        n("QuantizeLinear", ["a", "sa", "za"], ["aq"]),
        n("DequantizeLinear", ["aq", "sa", "za"], ["ad"]),
        n("QuantizeLinear", ["b", "sb", "zb"], ["bq"]),
        n("DequantizeLinear", ["bq", "sb", "zb"], ["bd"]),
        n("Transpose", ["bd"], ["bt"], perm=[0, 2, 1]),
        n("QuantizeLinear", ["bt", "sb", "zb"], ["btq"]),
        n("DequantizeLinear", ["btq", "sb", "zb"], ["btd"]),
        n("MatMul", ["ad", "btd"], ["t"]),
        n("QuantizeLinear", ["t", "sy", "zy"], ["tq"]),
        n("DequantizeLinear", ["tq", "sy", "zy"], ["y"]),
    ]
    m = float_io_model(nodes, {"a": [2, 5, 8], "b": [2, 6, 8]}, [2, 5, 6], params)
    rng = np.random.default_rng(10)
    feeds = {k: rng.standard_normal(shape).astype(np.float32) for k, shape in
             (("a", [2, 5, 8]), ("b", [2, 6, 8]))}  # fmt: skip
    wanted = {"mir.integer_matmul": 1, "mir.matmul": 0}
    _check_on_integers(m, feeds, wanted, 0.09, chain="step")


def test_qlinear_matmul_of_two_inputs_is_one_integer_matmul() -> None:
    """A QOperator model's QLinearMatMul of two u8 inputs with zero points: one
    mir.integer_matmul (its weight zero point the b input's), natively the reference's,
    within a step of onnxruntime."""
    n = helper.make_node
    params = {
        "sa": np.float32(0.02), "za": np.array(120, np.uint8),
        "sb": np.float32(0.03), "zb": np.array(135, np.uint8),
        "sy": np.float32(0.05), "zy": np.array(128, np.uint8),
    }  # fmt: skip
    nodes = [
        n("QuantizeLinear", ["a", "sa", "za"], ["aq"]),
        n("QuantizeLinear", ["b", "sb", "zb"], ["bq"]),
        n("QLinearMatMul", ["aq", "sa", "za", "bq", "sb", "zb", "sy", "zy"], ["yq"]),
        n("DequantizeLinear", ["yq", "sy", "zy"], ["y"]),
    ]
    m = float_io_model(nodes, {"a": [3, 7, 9], "b": [3, 9, 4]}, [3, 7, 4], params)
    rng = np.random.default_rng(11)
    feeds = {k: rng.standard_normal(shape).astype(np.float32) for k, shape in
             (("a", [3, 7, 9]), ("b", [3, 9, 4]))}  # fmt: skip
    wanted = {"mir.integer_matmul": 1, "mir.matmul_integer": 0}
    _check_on_integers(m, feeds, wanted, 0.05, chain=None)


def _np(dtype: int) -> np.dtype:
    return helper.tensor_dtype_to_np_dtype(dtype)


def test_concat_of_other_scales_and_nearest_resize_run_on_integers() -> None:
    """A concat of two tensors quantised with other scales than its output's (the second
    requantised by a table, as QLinearConcat does) and a nearest resize: integers only
    between the first quantize and the last dequantize, the same as in f32."""
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "s", "z"], ["aq"]),
        n("DequantizeLinear", ["aq", "s", "z"], ["ad"]),
        n("QuantizeLinear", ["x", "s2", "z"], ["bq"]),
        n("DequantizeLinear", ["bq", "s2", "z"], ["bd"]),
        n("Concat", ["ad", "bd"], ["c"], axis=1),
        n("QuantizeLinear", ["c", "s", "z"], ["cq"]),
        n("DequantizeLinear", ["cq", "s", "z"], ["cd"]),
        n("Resize", ["cd", "", "scales"], ["r"], mode="nearest"),
        n("QuantizeLinear", ["r", "s", "z"], ["rq"]),
        n("DequantizeLinear", ["rq", "s", "z"], ["y"]),
    ]
    params = {"s": np.float32(0.05), "s2": np.float32(0.03), "z": np.uint8(120),
              "scales": np.array([1, 1, 2, 2], np.float32)}  # fmt: skip
    m = float_io_model(nodes, {"x": [1, 2, 3, 3]}, [1, 4, 6, 6], params)
    feeds = {"x": np.random.default_rng(9).standard_normal([1, 2, 3, 3]).astype(np.float32)}
    result = CompilePipeline().compile(import_model(m))
    kinds = Counter(op.name for op in result.module.walk())
    assert kinds["mir.quantize"] == 2 and kinds["mir.dequantize"] == 1, kinds
    want = CompilePipeline(target="cuda").compile(import_model(m)).run(feeds)["y"]
    np.testing.assert_array_equal(result.run(feeds)["y"], want)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert_within_a_step(result.run(feeds)["y"], session.run(None, feeds)[0], 0.05)


def test_concat_input_of_a_conv_is_requantised_by_the_conv() -> None:
    """A concat of a conv's output quantised with another scale than the concat's (a
    ShuffleNet unit's branch): the conv looks its requantised integers up in the table of
    that requantisation itself (QLinearConv and QLinearConcat's requantisation in one
    op): here the same integers as the Q/DQ chain computes in f32 (cuda); the graph input's
    requantisation is still a gather."""
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "s", "z"], ["xq"]),
        n("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
        n("DequantizeLinear", ["wq", "ws"], ["w"]),
        n("Conv", ["xd", "w"], ["conv"], pads=[1, 1, 1, 1]),
        n("QuantizeLinear", ["conv", "s1", "z"], ["cq"]),
        n("DequantizeLinear", ["cq", "s1", "z"], ["cd"]),
        n("QuantizeLinear", ["x", "s2", "z"], ["bq"]),
        n("DequantizeLinear", ["bq", "s2", "z"], ["bd"]),
        n("Concat", ["cd", "bd"], ["c"], axis=1),
        n("QuantizeLinear", ["c", "s", "z"], ["yq"]),
        n("DequantizeLinear", ["yq", "s", "z"], ["y"]),
    ]
    rng = np.random.default_rng(5)
    params = {
        "s": np.float32(0.05), "s1": np.float32(0.07), "s2": np.float32(0.03),
        "z": np.uint8(120), "ws": np.float32(0.02),
        "wq": rng.integers(-60, 60, [4, 2, 3, 3]).astype(np.int8),
    }  # fmt: skip
    m = float_io_model(nodes, {"x": [1, 2, 5, 5]}, [1, 6, 5, 5], params)
    feeds = {"x": rng.standard_normal([1, 2, 5, 5]).astype(np.float32)}
    result = CompilePipeline().compile(import_model(m))
    kinds = Counter(op.name for op in result.module.walk())
    (conv,) = (op for op in result.module.walk() if op.name == "mir.integer_conv")
    assert conv.props().get("table") is not None, conv
    assert kinds["mir.gather"] == 1 and "mir.conv" not in kinds, kinds  # x's table alone
    got = result.run(feeds)["y"]
    np.testing.assert_array_equal(got, result.build().run(feeds)["y"])  # the C kernels
    chain = CompilePipeline(target="cuda").compile(import_model(m)).run(feeds)["y"]
    np.testing.assert_array_equal(got, chain)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    steps = np.rint((got.astype(np.float64) - session.run(None, feeds)[0]) / np.float32(0.05))
    assert np.abs(steps).max() <= 1, steps


# ---------------------------------------------------------------------------------
# Quantised average pools: one mir.quantized_avg_pool each
# ---------------------------------------------------------------------------------

POOLS_SHAPE = [2, 6, 11, 10]


class PoolBatches(CalibrationDataReader):
    def __init__(self, count: int) -> None:
        rng = np.random.default_rng(5)
        self.batches = iter(
            [{"x": rng.standard_normal(POOLS_SHAPE).astype(np.float32)} for _ in range(count)]
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def pools_model(tmp_path: Path, fmt: QuantFormat, activations: QuantType, **pool: Any) -> Path:
    """conv -> AveragePool (``pool``) -> GlobalAveragePool, the pool's output read by a
    relu too (its dequantize has other readers), quantised by quantize_static in
    ``fmt``; outputs: the pool p, the global pool g, the relu r."""
    n = helper.make_node
    w = (np.random.default_rng(6).standard_normal([8, 6, 3, 3]) * 0.2).astype(np.float32)
    nodes = [
        n("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        n("AveragePool", ["c"], ["p"], **pool),
        n("GlobalAveragePool", ["p"], ["g"]),
        n("Relu", ["p"], ["r"]),
    ]
    graph = helper.make_graph(
        nodes, "pools", [helper.make_tensor_value_info("x", F, POOLS_SHAPE)],
        [helper.make_tensor_value_info(k, F, None) for k in "pgr"],
        [numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(m, src)
    quantize_static(str(src), str(dst), PoolBatches(8), quant_format=fmt,
                    activation_type=activations, weight_type=QuantType.QInt8,
                    reduce_range=True)  # fmt: skip
    return dst


def output_params(path: Path) -> dict[str, tuple[float, np.ndarray]]:
    """The pools' outputs' steps and zero points: those of the DequantizeLinear writing
    each."""
    m = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    return {
        node.output[0]: (float(inits[node.input[1]]), inits[node.input[2]])
        for node in m.graph.node
        if node.op_type == "DequantizeLinear" and node.output[0] in ("p", "g")
    }


def assert_steps(got: np.ndarray, want: np.ndarray, step: float, steps: float) -> float:
    """No element of ``got`` more than ``steps`` steps from ``want``; the most it is."""
    assert got.shape == want.shape
    worst = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / step
    assert worst <= steps + 1e-5, worst
    return worst


@pytest.mark.parametrize(
    "pool",
    [
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "count_include_pad": 1},
        {"kernel_shape": [2, 3], "strides": [2, 2], "ceil_mode": 1},
    ],
)
@pytest.mark.parametrize("activations", [QuantType.QUInt8, QuantType.QInt8])
@pytest.mark.parametrize("fmt", [QuantFormat.QDQ, QuantFormat.QOperator])
def test_quantized_pools_are_one_op(
    tmp_path: Path, fmt: QuantFormat, activations: QuantType, pool: dict[str, Any]
) -> None:
    """quantize_static's AveragePool and GlobalAveragePool (QDQ: dequantize, pool,
    quantize; QOperator: QLinearAveragePool, QLinearGlobalAveragePool): one
    mir.quantized_avg_pool each on cpu, natively the reference's integers, and the op
    lowered for cuda gives them too. The pool is within a step of the f32 chain (cuda)
    and of onnxruntime (the conv before it may round a step apart in either: the pool's
    mean moves by less); the global pool is within half a step of the exact mean of the
    pool's output (more from them: its step is smaller than the pool's, which a pool's
    step apart moves by several)."""
    path = pools_model(tmp_path, fmt, activations, **pool)
    feeds = {"x": np.random.default_rng(7).standard_normal(POOLS_SHAPE).astype(np.float32)}
    result = CompilePipeline().compile(import_model(path))
    kinds = Counter(op.name for op in result.module.walk())
    assert kinds["mir.quantized_avg_pool"] == 2, kinds
    assert not {"mir.avg_pool", "mir.reduce_mean"} & set(kinds), kinds
    got = result.run(feeds)
    native = result.build().run(feeds)
    # the cpu's module (the op made), compiled for cuda: the op lowered
    made = result.stage("quant-to-integer")
    assert any(op.name == "mir.quantized_avg_pool" for op in made.walk())
    lowered = CompilePipeline(target="cuda").compile(made)
    assert not any(op.name == "mir.quantized_avg_pool" for op in lowered.module.walk())
    lowered_out = lowered.run(feeds)
    chain = CompilePipeline(target="cuda").compile(import_model(path)).run(feeds)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    want = dict(zip(names, session.run(None, feeds), strict=True))
    params = output_params(path)
    for name in params:
        np.testing.assert_array_equal(native[name], got[name], err_msg=name)
        np.testing.assert_array_equal(lowered_out[name], got[name], err_msg=name)
    step = params["p"][0]
    assert_steps(got["p"], chain["p"], step, 1)
    assert_steps(got["p"], want["p"], step, 1)
    step, zero = params["g"]
    info = np.iinfo(zero.dtype)
    exact = got["p"].astype(np.float64).mean(axis=(2, 3), keepdims=True)
    saturated = np.clip(exact, (info.min - int(zero)) * step, (info.max - int(zero)) * step)
    assert_steps(got["g"], saturated, step, 0.5)


@pytest.mark.parametrize("same_scale", [True, False])
@pytest.mark.parametrize(
    "pool",
    [
        helper.make_node("AveragePool", ["xd"], ["f"], kernel_shape=[3, 2], pads=[1, 1, 1, 0]),
        helper.make_node("AveragePool", ["xd"], ["f"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1], count_include_pad=1),
        helper.make_node("AveragePool", ["xd"], ["f"], kernel_shape=[2, 3], strides=[2, 2],
                         ceil_mode=1),
        helper.make_node("GlobalAveragePool", ["xd"], ["f"]),
    ],
    ids=["avg", "avg_incpad", "avg_ceil", "global"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [U8, I8])
def test_quantized_pool_within_a_step_of_onnxruntime(
    dtype: int, pool: onnx.NodeProto, same_scale: bool
) -> None:
    """One pool between Q/DQ pairs (onnxruntime runs its QLinearAveragePool): one
    mir.quantized_avg_pool, at most a step from onnxruntime on the same integers. With
    one scale, an average is a tie (k + 1/2 steps) in up to 1 of n windows: the op
    rounds it to even, f32 arithmetic either way. (Not ceil_mode with count_include_pad:
    there onnxruntime's QLinearAveragePool counts a ceil-mode window's extra cells, as
    its f32 AveragePool and ONNX do not.)"""
    m = chain_model(dtype, [pool])
    m.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", F, None))  # pooled
    if same_scale:
        for node in m.graph.node[-2:]:
            node.input[1] = "s"
    rng = np.random.default_rng(9)
    feeds = {"x": rng.standard_normal([2, 3, 4, 5]).astype(np.float32) * 3}
    result = CompilePipeline().compile(import_model(m))
    kinds = Counter(op.name for op in result.module.walk())
    assert kinds["mir.quantized_avg_pool"] == 1 and kinds["mir.dequantize"] == 1, kinds
    got = result.run(feeds)["y"]
    np.testing.assert_array_equal(result.build().run(feeds)["y"], got)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    step = Q_PARAMS[dtype][0] / (1 if same_scale else 2)
    assert_steps(got, session.run(None, feeds)[0], step, 1)


# ---------------------------------------------------------------------------------
# Quantised softmax: one mir.quantized_softmax
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("out", [U8, I8])
@pytest.mark.parametrize("dtype", [U8, I8])
@pytest.mark.parametrize(("axis", "shape"), [(-1, [2, 3, 4, 5]), (1, [2, 3, 4, 5]), (-1, [2, 300])])
def test_quantized_softmax_is_one_op(dtype: int, out: int, axis: int, shape: list[int]) -> None:
    """A softmax between Q/DQ pairs, its output of the input's 8-bit type or the other,
    at a probability's scale (1/256, the type's lowest zero point): one
    mir.quantized_softmax (see ``check_quantized_softmax``)."""
    scale, zero = Q_PARAMS[dtype]
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "s", "z"], ["xq"]),
        n("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
        n("Softmax", ["xd"], ["f"], axis=axis),
        n("QuantizeLinear", ["f", "so", "zo"], ["fq"]),
        n("DequantizeLinear", ["fq", "so", "zo"], ["y"]),
    ]
    inits = {"s": np.float32(scale), "z": np.array(zero, _np(dtype)), "so": np.float32(1 / 256),
             "zo": np.array(np.iinfo(_np(out)).min, _np(out))}  # fmt: skip
    m = float_io_model(nodes, {"x": shape}, shape, inits)
    for seed in range(3):
        feeds = {"x": np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 2}
        check_quantized_softmax(m, feeds, 1 / 256)
