"""onnxruntime's QOperator format: the com.microsoft ops its ``quantize_static`` writes
beside QLinearConv and QLinearMatMul (``ops/quant.py``). Each op in a one-node model, u8
and i8, with and without its optional zero points, runs through ``rlx_compile.backend``
and through onnxruntime on the same inputs; then small float models quantised by
onnxruntime's own ``quantize_static`` in the QOperator format import, compile for the cpu
target and give what onnxruntime gives. The standard QLinearConv and QLinearMatMul hold
their exact integer product as one op; with a symmetric i8 weight the whole node is one
requantised integer kernel.

onnxruntime computes these ops in fixed point or through a lookup table, RLX as
"dequantize, the float op, quantize": a value on the edge of a quantisation step may
round to the neighbouring step, so results are compared in steps: none more than one
apart, and few apart at all."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
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

from rlx_compile import CompilePipeline, backend
from rlx_compile.frontends.onnx import OnnxImportError, import_model

MS = "com.microsoft"
U8, I8, F = TensorProto.UINT8, TensorProto.INT8, TensorProto.FLOAT


def q_model(
    op: str,
    inputs: list[tuple[str, int, list[int]]],
    params: dict[str, Any],
    out_type: int,
    order: list[str],
    **attrs: Any,
) -> onnx.ModelProto:
    """One ``op`` node named 'n' reading ``order`` (graph inputs, then the initializers
    ``params``; '' for an omitted optional input), writing 'y' of ``out_type``."""
    node = helper.make_node(op, order, ["y"], name="n", domain=MS, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("y", out_type, None)],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in params.items()],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 8
    return m


def random_feeds(m: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in m.graph.input:
        t = vi.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        if t.elem_type == TensorProto.BOOL:
            feeds[vi.name] = rng.integers(0, 2, shape).astype(bool)
        elif t.elem_type == F:
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
        else:
            dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
            info = np.iinfo(dtype)
            feeds[vi.name] = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    return feeds


def assert_within_a_step(got: np.ndarray, want: np.ndarray, scale: float = 1.0) -> None:
    """Equal dtype and shape, no element more than one step (``scale``) from
    onnxruntime's, and at most a tenth of them off at all (an average of two integers
    is a half step, which the two round apart)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64)) / scale
    assert diff.max(initial=0.0) <= 1.0 + 1e-6, diff.max()
    assert np.count_nonzero(diff > 1e-6) <= max(1, 0.1 * diff.size)


def assert_same_on_every_target(m: onnx.ModelProto) -> None:
    """The same integers on cpu (its integer kernels) and on cuda and metal (which have
    them lowered)."""
    feeds = random_feeds(m)
    module = import_model(m)
    outputs = [CompilePipeline(target=t).compile(module).run(feeds)["y"]
               for t in ("cpu", "cuda", "metal")]  # fmt: skip
    for other in outputs[1:]:
        np.testing.assert_array_equal(other, outputs[0])


def check(m: onnx.ModelProto) -> None:
    feeds = random_feeds(m)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    (got,) = backend.prepare(m).run(feeds)
    assert_within_a_step(got, want)


def import_error(m: onnx.ModelProto) -> str:
    with pytest.raises(OnnxImportError) as info:
        import_model(m)
    return str(info.value)


def quant_params(dtype: int, name: str, scale: float) -> dict[str, Any]:
    """A per-tensor scale and zero point, in the integer type."""
    zero = 7 if dtype == I8 else 131
    return {
        f"{name}_s": np.float32(scale),
        f"{name}_z": np.array(zero, helper.tensor_dtype_to_np_dtype(dtype)),
    }


def operands(name: str) -> list[str]:
    """An input, its scale and its zero point."""
    return [name, f"{name}_s", f"{name}_z"]


TYPES = [U8, I8]
X_TO_Y = ["x", "x_s", "x_z", "y_s", "y_z"]
"""The operands of a one-input op: x with its scale and zero point, y's."""


# ---------------------------------------------------------------------------------
# One op at a time
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_binary(op: str, dtype: int) -> None:
    """Broadcasting operands, each with its own scale and zero point (onnxruntime's type
    inference refuses the optional zero points left out)."""
    params = {
        **quant_params(dtype, "a", 0.05),
        **quant_params(dtype, "b", 0.03),
        **quant_params(dtype, "c", 0.07 if op == "QLinearAdd" else 0.4),
    }
    inputs = [("a", dtype, [2, 3, 4]), ("b", dtype, [3, 1])]
    order = operands("a") + operands("b") + ["c_s", "c_z"]
    check(q_model(op, inputs, params, dtype, order))


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize(
    ("op", "attrs"), [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.2}),
                      ("QLinearLeakyRelu", {})],
)  # fmt: skip
def test_activation(op: str, attrs: dict[str, Any], dtype: int) -> None:
    params = {**quant_params(dtype, "x", 0.06), **quant_params(dtype, "y", 1 / 255)}
    if op == "QLinearLeakyRelu":
        params.update(quant_params(dtype, "y", 0.05))
    order = X_TO_Y
    check(q_model(op, [("x", dtype, [2, 5, 7])], params, dtype, order, **attrs))


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("channels_last", [0, 1])
def test_global_average_pool(dtype: int, channels_last: int) -> None:
    params = {**quant_params(dtype, "x", 0.06), **quant_params(dtype, "y", 0.02)}
    order = X_TO_Y
    m = q_model("QLinearGlobalAveragePool", [("x", dtype, [2, 3, 5, 4])], params, dtype, order,
                channels_last=channels_last)  # fmt: skip
    check(m)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel_shape": [2, 2], "strides": [2, 2]},
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
        {"kernel_shape": [2, 3], "strides": [2, 2], "ceil_mode": 1},
    ],
)
def test_average_pool(dtype: int, attrs: dict[str, Any]) -> None:
    params = {**quant_params(dtype, "x", 0.06), **quant_params(dtype, "y", 0.05)}
    order = X_TO_Y
    check(q_model("QLinearAveragePool", [("x", dtype, [1, 3, 7, 6])], params, dtype, order,
                  **attrs))  # fmt: skip


@pytest.mark.parametrize("dtype", TYPES)
def test_max_pool_of_integers(dtype: int) -> None:
    """A QOperator model's MaxPool reads and writes 8-bit integers: one mir.max_pool of
    them (no float copy either side), the same integers as onnxruntime's, natively too."""
    x = helper.make_tensor_value_info("x", dtype, [1, 3, 7, 6])
    y = helper.make_tensor_value_info("y", dtype, None)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2],
                            pads=[1, 0, 1, 1])  # fmt: skip
    m = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 12)])  # fmt: skip
    feeds = random_feeds(m)
    result = CompilePipeline().compile(import_model(m))
    kinds = Counter(op.name for op in result.module.walk())
    assert kinds["mir.max_pool"] == 1 and "mir.cast" not in kinds, kinds
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    np.testing.assert_array_equal(result.run(feeds)["y"], want)
    np.testing.assert_array_equal(result.build().run(feeds)["y"], want)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize(("opset", "axis"), [(13, -1), (13, 1), (12, 1), (11, 2)])
def test_softmax(dtype: int, opset: int, axis: int) -> None:
    """From opset 13 along ``axis``; before it, over the input coerced to 2-D there."""
    low = np.array(-128 if dtype == I8 else 0, helper.tensor_dtype_to_np_dtype(dtype))
    params = {**quant_params(dtype, "x", 0.08), "y_s": np.float32(1 / 256), "y_z": low}
    order = X_TO_Y
    check(q_model("QLinearSoftmax", [("x", dtype, [2, 3, 4])], params, dtype, order,
                  opset=opset, axis=axis))  # fmt: skip


def check_quantized_softmax(
    m: onnx.ModelProto, feeds: dict[str, np.ndarray], step: float, ops: int = 1
) -> dict[str, float]:
    """``m``'s softmax (QLinearSoftmax, or a softmax between Q/DQ) is ``ops``
    mir.quantized_softmax on cpu, no float softmax left; natively the reference's
    integers; the op lowered for cuda gives them too; within a step (``step``) of the
    f32 chain (cuda, which does not claim the op) and of onnxruntime. The most steps
    from each."""
    result = CompilePipeline().compile(import_model(m))
    kinds = Counter(op.name for op in result.module.walk())
    assert kinds["mir.quantized_softmax"] == ops and "mir.softmax" not in kinds, kinds
    got = result.run(feeds)["y"]
    np.testing.assert_array_equal(result.build().run(feeds)["y"], got)
    made = result.stage("quant-to-integer")  # the cpu's module, compiled for cuda
    lowered = CompilePipeline(target="cuda").compile(made)
    assert not any(op.name == "mir.quantized_softmax" for op in lowered.module.walk())
    np.testing.assert_array_equal(lowered.run(feeds)["y"], got)
    chain = CompilePipeline(target="cuda").compile(import_model(m)).run(feeds)["y"]
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    worst = {}
    for name, other in (("f32 chain", chain), ("onnxruntime", want)):
        assert got.shape == other.shape
        diff = np.abs(got.astype(np.float64) - other.astype(np.float64)) / step
        assert diff.max() <= 1 + 1e-6, (name, diff.max())
        worst[name] = float(diff.max())
    return worst


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize(
    ("opset", "axis", "shape", "x_scale"),
    [(13, -1, [2, 3, 40], 0.02), (13, 1, [2, 5, 4], 0.08), (13, 0, [3, 2, 4], 0.05),
     (12, 2, [2, 3, 7], 0.1), (13, -1, [4, 1], 0.1), (13, -1, [2, 1000], 0.01)],
)  # fmt: skip
def test_softmax_is_one_op(
    dtype: int, opset: int, axis: int, shape: list[int], x_scale: float
) -> None:
    """QLinearSoftmax along its axis (before opset 13 over the input coerced to 2-D: along
    the last axis, no reshape) is one mir.quantized_softmax (see
    ``check_quantized_softmax``); rows of 1 to 1000."""
    low = np.array(-128 if dtype == I8 else 0, helper.tensor_dtype_to_np_dtype(dtype))
    params = {**quant_params(dtype, "x", x_scale), "y_s": np.float32(1 / 256), "y_z": low}
    m = q_model("QLinearSoftmax", [("x", dtype, shape)], params, dtype, X_TO_Y,
                opset=opset, axis=axis)  # fmt: skip
    for seed in range(3):
        check_quantized_softmax(m, random_feeds(m, seed), 1.0)


@pytest.mark.parametrize("dtype", TYPES)
def test_concat(dtype: int) -> None:
    """Inputs with scales of their own, requantised to the output's."""
    params = {**quant_params(dtype, "y", 0.05), **quant_params(dtype, "a", 0.05),
              **quant_params(dtype, "b", 0.02), **quant_params(dtype, "c", 0.11)}  # fmt: skip
    inputs = [("a", dtype, [2, 3, 4]), ("b", dtype, [2, 1, 4]), ("c", dtype, [2, 2, 4])]
    order = ["y_s", "y_z", *operands("a"), *operands("b"), *operands("c")]
    check(q_model("QLinearConcat", inputs, params, dtype, order, axis=-2))


@pytest.mark.parametrize("dtype", TYPES)
def test_where(dtype: int) -> None:
    params = {**quant_params(dtype, "p", 0.05), **quant_params(dtype, "q", 0.02),
              **quant_params(dtype, "z", 0.04)}  # fmt: skip
    inputs = [("cond", TensorProto.BOOL, [3, 1]), ("p", dtype, [3, 4]), ("q", dtype, [4])]
    order = ["cond", *operands("p"), *operands("q"), "z_s", "z_z"]
    check(q_model("QLinearWhere", inputs, params, dtype, order))


def gemm_model(a_type: int, y_type: int | None, per_column: bool, bias: bool, **attrs: Any):
    rng = np.random.default_rng(1)
    trans_a, trans_b = attrs.get("transA", 0), attrs.get("transB", 0)
    a_shape = [5, 3] if trans_a else [3, 5]
    # |b| < 64: onnxruntime's u8 x s8 kernels on AVX2 without VNNI saturate the int16 sum
    # of two products, which a full-range pair exceeds (exact here)
    b_values = rng.integers(-63, 64, [4, 5] if trans_b else [5, 4]).astype(np.int8)
    params: dict[str, Any] = {
        **quant_params(a_type, "a", 0.05),
        "b": b_values,
        "b_s": (np.linspace(0.01, 0.04, 4) if per_column else np.array(0.02)).astype(np.float32),
        "b_z": np.zeros(4 if per_column else (), np.int8),
    }
    order = [*operands("a"), "b", "b_s", "b_z"]
    if bias:
        params["c"] = rng.integers(-300, 300, [4]).astype(np.int32)
    order.append("c" if bias else "")
    if y_type is not None:
        params.update(quant_params(y_type, "y", 0.5))
        order += ["y_s", "y_z"]
    out = y_type if y_type is not None else F
    return q_model("QGemm", [("a", a_type, a_shape)], params, out, order, **attrs)


@pytest.mark.parametrize("y_type", [None, U8])
@pytest.mark.parametrize(("per_column", "bias"), [(False, False), (True, True), (False, True)])
def test_qgemm(y_type: int | None, per_column: bool, bias: bool) -> None:
    """Quantised out, or f32 when there is no y_scale (then compared as floats). A is u8:
    onnxruntime's CPU kernel takes no other. B is i8 without a zero point: the node is
    one integer matmul, its bias and requantisation included."""
    m = gemm_model(U8, y_type, per_column, bias)
    kinds = Counter(o.name for o in import_model(m).walk())
    assert kinds["mir.integer_matmul"] == 1 and not kinds["mir.matmul"], kinds
    assert not kinds["mir.matmul_integer"] and not kinds["mir.add"], kinds
    if y_type is not None:
        check(m)
        return
    feeds = random_feeds(m)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    (got,) = backend.prepare(m).run(feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "attrs", [{"transA": 1}, {"transB": 1}, {"transA": 1, "transB": 1, "alpha": 0.5}]
)
def test_qgemm_attributes(attrs: dict[str, Any]) -> None:
    check(gemm_model(U8, U8, True, True, **attrs))


def test_refusals() -> None:
    """What the converters do not take names the node and the reason."""
    params = {**quant_params(U8, "x", 0.06), **quant_params(U8, "y", 0.05)}
    order = X_TO_Y
    nhwc = q_model("QLinearAveragePool", [("x", U8, [1, 6, 7, 3])], params, U8, order,
                   kernel_shape=[2, 2], channels_last=1)  # fmt: skip
    assert "QLinearAveragePool node 'n': channels_last=1" in import_error(nhwc)
    per_channel = {**quant_params(U8, "a", 0.05), "b_s": np.full(3, 0.03, np.float32),
                   "b_z": np.uint8(131), **quant_params(U8, "c", 0.07)}  # fmt: skip
    order = [*operands("a"), "b", "b_s", "b_z", "c_s", "c_z"]
    m = q_model("QLinearAdd", [("a", U8, [2, 3]), ("b", U8, [2, 3])], per_channel, U8, order)
    assert "QLinearAdd node 'n': a scale of shape [3] (per tensor only)" in import_error(m)
    no_opset = q_model("QLinearSoftmax", [("x", U8, [2, 3])], params, U8,
                       X_TO_Y)  # fmt: skip
    assert "QLinearSoftmax node 'n'" in import_error(no_opset)


# ---------------------------------------------------------------------------------
# Models quantised by onnxruntime
# ---------------------------------------------------------------------------------


def float_cnn() -> onnx.ModelProto:
    """A small CNN of what quantize_static writes QOperator ops for: convs, a residual
    add, a sigmoid gate (mul), a leaky relu, a concat, pooling, a gemm head."""
    rng = np.random.default_rng(2)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        n("Add", ["c2", "r1"], ["res"]),
        n("Sigmoid", ["res"], ["gate"]),
        n("Mul", ["res", "gate"], ["silu"]),
        n("Conv", ["silu", "w3", "b3"], ["c3"]),
        n("LeakyRelu", ["c3"], ["lr"], alpha=0.1),
        n("Concat", ["lr", "silu"], ["cat"], axis=1),
        n("AveragePool", ["cat"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["ap"], ["gap"]),
        n("Flatten", ["gap"], ["flat"]),
        n("Gemm", ["flat", "wf", "bf"], ["y"], transB=1),
    ]
    inits = {"w1": w(8, 3, 3, 3), "b1": w(8), "w2": w(8, 8, 3, 3), "b2": w(8),
             "w3": w(4, 8, 1, 1), "b3": w(4), "wf": w(5, 12), "bf": w(5)}  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", F, [1, 5])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


class Batches(CalibrationDataReader):
    def __init__(self, count: int) -> None:
        rng = np.random.default_rng(3)
        self.batches: Iterator[dict[str, np.ndarray]] = iter(
            [{"x": rng.standard_normal([1, 3, 8, 8]).astype(np.float32)} for _ in range(count)]
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


@pytest.mark.parametrize("activations", [QuantType.QUInt8, QuantType.QInt8])
def test_quantize_static_qoperator(tmp_path: Path, activations: QuantType) -> None:
    """The model as onnxruntime's quantize_static writes it in the QOperator format, with
    its defaults otherwise: imports, compiles for the cpu target and gives onnxruntime's
    outputs (f32 after the last DequantizeLinear) within a step of the output's scale."""
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(float_cnn(), src)
    # reduce_range: 7-bit weights, as onnxruntime advises on AVX2 without VNNI, where its
    # u8 x s8 kernels saturate on full-range ones (see gemm_model)
    quantize_static(str(src), str(dst), Batches(8), quant_format=QuantFormat.QOperator,
                    activation_type=activations, weight_type=QuantType.QInt8,
                    reduce_range=True)  # fmt: skip
    m = onnx.load(dst)
    kinds = Counter(node.op_type for node in m.graph.node if node.domain == MS)
    assert {"QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearConcat",
            "QLinearAveragePool", "QLinearGlobalAveragePool", "QGemm"} <= set(kinds)  # fmt: skip
    feeds = {"x": np.random.default_rng(4).standard_normal([1, 3, 8, 8]).astype(np.float32)}
    session = ort.InferenceSession(str(dst), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    result = CompilePipeline(target="cpu").compile(import_model(dst))
    got = result.run(feeds)["y"]
    # The output's scale: that of the last quantised tensor, dequantized into y.
    last = next(node for node in m.graph.node if node.output[0] == "y")
    if last.op_type == "DequantizeLinear":
        scale = float(numpy_helper.to_array(
            next(t for t in m.graph.initializer if t.name == last.input[1])))  # fmt: skip
        assert_within_a_step(got, want, scale)
    else:  # QGemm with a float output: a step of its input can move it
        np.testing.assert_allclose(got, want, atol=0.1 * np.abs(want).max())


# ---------------------------------------------------------------------------------
# QLinearConv and QLinearMatMul: the integer product as one op
# ---------------------------------------------------------------------------------


def qlinear_model(
    op: str, a_type: int, w_type: int, per_channel: bool, symmetric: bool = False
) -> onnx.ModelProto:
    """A standard-domain QLinearConv or QLinearMatMul on an 8-bit input and weight, the
    weight's zero points (0 when ``symmetric``) and scales per output channel (or column)
    when ``per_channel``."""
    rng = np.random.default_rng(5)
    w_np = helper.tensor_dtype_to_np_dtype(w_type)
    conv = op == "QLinearConv"
    shape, channels = ([6, 4, 3, 3], 6) if conv else ([8, 6], 6)
    info = np.iinfo(w_np)
    params: dict[str, Any] = {
        **quant_params(a_type, "x", 0.05),
        "w": rng.integers(max(info.min, -63), min(info.max, 63) + 1, shape).astype(w_np),
        "w_s": (np.linspace(0.01, 0.03, channels) if per_channel else np.array(0.02)).astype(
            np.float32
        ),
        "w_z": (rng.integers(0, 9, channels) if per_channel else np.array(3)).astype(w_np)
        * (not symmetric),
        **quant_params(a_type, "y", 0.3 if conv else 0.1),
    }
    order = ["x", "x_s", "x_z", "w", "w_s", "w_z", "y_s", "y_z"]
    if conv:
        params["b"] = rng.integers(-200, 200, channels).astype(np.int32)
        order.append("b")
    x_shape = [1, 4, 7, 7] if conv else [2, 5, 8]
    attrs: dict[str, Any] = {"pads": [1] * 4} if conv else {}
    node = helper.make_node(op, order, ["y"], name="n", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", a_type, x_shape)],
        [helper.make_tensor_value_info("y", a_type, None)],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in params.items()],
    )  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("op", ["QLinearConv", "QLinearMatMul"])
@pytest.mark.parametrize(("a_type", "w_type"), [(U8, I8), (U8, U8), (I8, I8)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_integer_product(op: str, a_type: int, w_type: int, per_channel: bool) -> None:
    """One mir.conv_integer / mir.matmul_integer (zero points included) holds the exact
    product -- a matmul's weight of one zero point makes the whole node one requantised
    mir.integer_matmul; the result is within a step of onnxruntime's, and every target
    computes the same integers (a target without the integer op has it lowered)."""
    m = qlinear_model(op, a_type, w_type, per_channel)
    if op == "QLinearConv":
        integer = "mir.conv_integer"
    else:
        integer = "mir.matmul_integer" if per_channel else "mir.integer_matmul"
    kinds = Counter(o.name for o in import_model(m).walk())
    assert kinds[integer] == 1 and not kinds["mir.conv"] and not kinds["mir.matmul"]
    if a_type == U8 or w_type == I8:  # onnxruntime's CPU kernels take these
        check(m)
    assert_same_on_every_target(m)


@pytest.mark.parametrize("op", ["QLinearConv", "QLinearMatMul"])
@pytest.mark.parametrize("a_type", [U8, I8])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_symmetric_weights_are_one_integer_kernel(
    op: str, a_type: int, per_channel: bool
) -> None:
    """An i8 weight without a zero point (what quantize_static writes): one requantised
    mir.integer_conv / mir.integer_matmul, the whole node; within a step of onnxruntime,
    and the same integers on targets that lower it (cuda, metal) as on cpu."""
    m = qlinear_model(op, a_type, I8, per_channel, symmetric=True)
    kernel = "mir.integer_conv" if op == "QLinearConv" else "mir.integer_matmul"
    kinds = Counter(o.name for o in import_model(m).walk())
    assert kinds[kernel] == 1, kinds
    assert not set(kinds) - {kernel, "mir.input", "mir.constant", "func.func", "func.return",
                             "builtin.module"}  # fmt: skip
    check(m)
    assert_same_on_every_target(m)
