"""onnxruntime's contrib ops (com.microsoft) that its CPU graph optimiser writes
(``ops/microsoft.py``): each op in a one-node model runs through ``rlx_compile.backend``
and through onnxruntime on the same random inputs, optional inputs and attributes
included; what the converters refuse is an import error naming the node. Then the
committed example models as onnxruntime's EXTENDED optimisation saves them (FusedConv,
FusedGemm, FusedMatMul, SkipLayerNormalization, QuickGelu) import, compile for the cpu
target and give what onnxruntime gives on the original models."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from tests.frontends.test_onnx_old_opsets import session_feeds
from tests.frontends.test_onnx_opsets import assert_matches_onnxruntime

from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import OnnxImportError, import_model, param_values

F = TensorProto.FLOAT
MS = "com.microsoft"
MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def ms_model(
    op: str,
    inputs: dict[str, list[int]],
    outputs: int | list[str] = 1,
    domain: str = MS,
    initializers: dict[str, np.ndarray] | None = None,
    **attrs: Any,
) -> onnx.ModelProto:
    """One ``op`` node named 'n' reading the float ``inputs`` ('' for an omitted optional
    one: a name with an empty shape list), writing ``outputs`` ('' for an unused one)."""
    names = outputs if isinstance(outputs, list) else [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op, list(inputs), names, name="n", domain=domain, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, F, s) for n, s in inputs.items() if n],
        [helper.make_tensor_value_info(n, F, None) for n in names if n],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 8
    return m


def import_error(m: onnx.ModelProto) -> str:
    with pytest.raises(OnnxImportError) as info:
        import_model(m)
    return str(info.value)


def mir_ops(m: onnx.ModelProto) -> Counter[str]:
    return Counter(op.name for op in import_model(m).walk())


# ---------------------------------------------------------------------------------
# FusedConv
# ---------------------------------------------------------------------------------

CONV_ACTIVATIONS: list[tuple[str | None, list[float]]] = [
    (None, []),
    ("Relu", []),
    ("Tanh", []),
    ("Sigmoid", []),
    ("LeakyRelu", [0.2]),
    ("Clip", [-0.5, 0.7]),
    ("HardSigmoid", [0.3, 0.4]),
]


def fused_conv(act: str | None, params: list[float], bias: bool, z: bool, **geometry: Any):
    inputs = {"x": [2, 4, 7, 7], "w": [6, 4 // geometry.get("group", 1), 3, 3]}
    if bias or z:
        inputs["b" if bias else ""] = [6]
    if z:
        s = geometry.get("strides", [1, 1])[0]
        size = (7 + 2 * geometry.get("pads", [0] * 4)[0] - 3) // s + 1
        inputs["z"] = [2, 6, size, size]
    attrs: dict[str, Any] = dict(geometry)
    if act is not None:
        attrs["activation"] = act
    if params:
        attrs["activation_params"] = params
    return ms_model("FusedConv", inputs, **attrs)


@pytest.mark.parametrize(("act", "params"), CONV_ACTIVATIONS)
@pytest.mark.parametrize(
    ("bias", "z"), [(True, False), (True, True), (False, False), (False, True)]
)
def test_fused_conv(act: str | None, params: list[float], bias: bool, z: bool) -> None:
    """act(conv + B + Z); with a bias it is one mir.fused_conv_bias_act holding Z and the
    activation, without one a conv and the ops after it."""
    m = fused_conv(act, params, bias, z, pads=[1, 1, 1, 1])
    # Outputs near 10 carry f32 rounding near 1e-6 of their sums, which shows absolutely
    # where a sum cancels to near 0 (how each BLAS kernel rounds varies by machine).
    assert_matches_onnxruntime(m, atol=1e-5)
    ops = mir_ops(m)
    assert ops["mir.fused_conv_bias_act"] == int(bias)
    assert ops["mir.add"] == (0 if bias else int(z))


def test_fused_conv_geometry() -> None:
    assert_matches_onnxruntime(
        fused_conv("Relu", [], True, True, strides=[2, 2], group=2, pads=[1, 1, 1, 1])
    )
    m = ms_model("FusedConv", {"x": [1, 3, 9], "w": [5, 3, 2], "b": [5]}, activation="Tanh",
                 dilations=[2], pads=[1, 0])  # fmt: skip
    assert_matches_onnxruntime(m)
    m = ms_model("FusedConv", {"x": [1, 3, 9, 8], "w": [5, 3, 2, 3], "b": [5]},
                 activation="Sigmoid", strides=[2, 2], auto_pad="SAME_UPPER")  # fmt: skip
    assert_matches_onnxruntime(m)


def test_fused_conv_refusals() -> None:
    gelu = fused_conv("Gelu", [], True, False)
    assert "FusedConv node 'n': activation 'Gelu'" in import_error(gelu)
    short = fused_conv("Clip", [0.0], True, False)
    assert "FusedConv node 'n': activation Clip takes 2 activation_params" in import_error(short)


# ---------------------------------------------------------------------------------
# FusedGemm, FusedMatMul
# ---------------------------------------------------------------------------------

GEMM_ACTIVATIONS: list[tuple[str, dict[str, float]]] = [
    ("Relu", {}),
    ("Tanh", {}),
    ("Sigmoid", {}),
    ("Softplus", {}),
    ("Softsign", {}),
    ("LeakyRelu", {"activation_alpha": 0.1}),
    ("Elu", {"activation_alpha": 0.7}),
    ("ThresholdedRelu", {"activation_alpha": 0.3}),
    ("HardSigmoid", {"activation_alpha": 0.3, "activation_beta": 0.4}),
    ("ScaledTanh", {"activation_alpha": 1.5, "activation_beta": 0.5}),
]


@pytest.mark.parametrize(("act", "params"), GEMM_ACTIVATIONS)
def test_fused_gemm(act: str, params: dict[str, float]) -> None:
    m = ms_model("FusedGemm", {"a": [3, 4], "b": [4, 5], "c": [5]}, activation=act, **params)
    assert_matches_onnxruntime(m)


def test_fused_gemm_attributes() -> None:
    m = ms_model("FusedGemm", {"a": [4, 3], "b": [5, 4], "c": [3, 5]}, activation="LeakyRelu",
                 activation_alpha=0.2, transA=1, transB=1, alpha=0.5, beta=2.0)  # fmt: skip
    assert_matches_onnxruntime(m)
    assert_matches_onnxruntime(ms_model("FusedGemm", {"a": [3, 4], "b": [4, 5]}, activation="Relu"))


def test_fused_gemm_refusals() -> None:
    selu = ms_model("FusedGemm", {"a": [3, 4], "b": [4, 5]}, activation="Selu",
                    activation_alpha=1.0, activation_gamma=1.0)  # fmt: skip
    assert "FusedGemm node 'n': activation 'Selu'" in import_error(selu)
    scaled = ms_model("FusedGemm", {"a": [3, 4], "b": [4, 5]}, activation="ScaledTanh")
    assert "FusedGemm node 'n': activation ScaledTanh needs" in import_error(scaled)


MATMULS: list[tuple[list[int], list[int], dict[str, Any]]] = [
    ([3, 4], [4, 5], {}),
    ([2, 3, 4], [2, 5, 4], {"transB": 1, "alpha": 0.5}),
    ([2, 4, 3], [4, 5], {"transA": 1}),
    ([2, 4, 3], [2, 5, 4], {"transA": 1, "transB": 1, "alpha": 2.0}),
    ([4], [2, 4, 5], {"transA": 1}),
    ([2, 3, 4], [5, 4], {"transB": 1}),
    ([3, 2, 4], [2, 4, 5], {"transBatchA": 1}),
    ([3, 2, 4], [4, 2, 5], {"transBatchA": 1, "transBatchB": 1}),
    ([4, 2, 3], [5, 2, 4], {"transBatchA": 1, "transA": 1, "transBatchB": 1, "transB": 1}),
    ([3, 2, 2, 4], [2, 2, 4, 5], {"transBatchA": 1}),
]


@pytest.mark.parametrize(("a", "b", "attrs"), MATMULS)
def test_fused_matmul(a: list[int], b: list[int], attrs: dict[str, Any]) -> None:
    assert_matches_onnxruntime(ms_model("FusedMatMul", {"a": a, "b": b}, **attrs))


def test_fused_matmul_refusals() -> None:
    m = ms_model("FusedMatMul", {"a": [3, 4], "b": [4, 5]}, transBatchA=1)
    assert "FusedMatMul node 'n': transBatchA of a rank-2 A" in import_error(m)


# ---------------------------------------------------------------------------------
# GELU family
# ---------------------------------------------------------------------------------

GELUS: list[tuple[str, dict[str, list[int]], dict[str, Any]]] = [
    ("Gelu", {"x": [2, 3, 8]}, {}),
    ("BiasGelu", {"x": [2, 3, 8], "bias": [8]}, {}),
    ("FastGelu", {"x": [2, 3, 8]}, {}),
    ("FastGelu", {"x": [2, 3, 8], "bias": [8]}, {}),
    ("QuickGelu", {"x": [2, 3, 8]}, {}),
    ("QuickGelu", {"x": [2, 3, 8]}, {"alpha": 1.0}),
    ("QuickGelu", {"x": [2, 3, 8]}, {"alpha": -0.5}),
]


@pytest.mark.parametrize(("op", "inputs", "attrs"), GELUS)
def test_gelu_family(op: str, inputs: dict[str, list[int]], attrs: dict[str, Any]) -> None:
    assert_matches_onnxruntime(ms_model(op, inputs, **attrs))


def test_gelu_refusals() -> None:
    m = ms_model("QuickGelu", {"x": [2, 3]}, alpha=1.0, beta=2.0)
    assert "QuickGelu node 'n': unsupported attribute 'beta'" in import_error(m)


# ---------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------

SKIP_LAYER_NORMS: list[tuple[dict[str, list[int]], list[str], dict[str, Any]]] = [
    ({"x": [2, 3, 8], "s": [2, 3, 8], "g": [8]}, ["y"], {}),
    ({"x": [2, 3, 8], "s": [2, 3, 8], "g": [8], "beta": [8]}, ["y"], {"epsilon": 1e-3}),
    ({"x": [2, 3, 8], "s": [3, 8], "g": [8], "beta": [8], "bias": [8]}, ["y", "", "", "sum"], {}),
    ({"x": [2, 3, 8], "s": [1, 3, 8], "g": [8], "": [], "bias": [8]}, ["y", "m", "v", "sum"], {}),
    ({"x": [4, 8], "s": [4, 8], "g": [8], "beta": [8]}, ["y", "m", "", "sum"], {"epsilon": 0.1}),
]


@pytest.mark.parametrize(("inputs", "outputs", "attrs"), SKIP_LAYER_NORMS)
def test_skip_layer_norm(
    inputs: dict[str, list[int]], outputs: list[str], attrs: dict[str, Any]
) -> None:
    assert_matches_onnxruntime(ms_model("SkipLayerNormalization", inputs, outputs, **attrs))


SKIP_RMS_NORMS: list[tuple[dict[str, list[int]], list[str], dict[str, Any]]] = [
    ({"x": [2, 3, 8], "s": [2, 3, 8], "g": [8]}, ["y"], {"epsilon": 1e-6}),
    ({"x": [2, 3, 8], "s": [3, 8], "g": [8], "bias": [8]}, ["y", "", "", "sum"], {}),
    ({"x": [2, 3, 8], "s": [2, 3, 8], "g": [8], "bias": [8]}, ["y", "", "v", "sum"], {}),
]


@pytest.mark.parametrize(("inputs", "outputs", "attrs"), SKIP_RMS_NORMS)
def test_skip_simplified_layer_norm(
    inputs: dict[str, list[int]], outputs: list[str], attrs: dict[str, Any]
) -> None:
    assert_matches_onnxruntime(
        ms_model("SkipSimplifiedLayerNormalization", inputs, outputs, **attrs)
    )


@pytest.mark.parametrize(
    ("x", "scale", "outputs", "attrs"),
    [
        ([2, 3, 8], [8], ["y"], {}),
        ([2, 3, 8], [8], ["y", "v"], {"epsilon": 1e-3}),
        ([2, 3, 4], [3, 4], ["y", "v"], {"axis": 1}),
    ],
)
def test_simplified_layer_norm(
    x: list[int], scale: list[int], outputs: list[str], attrs: dict[str, Any]
) -> None:
    m = ms_model("SimplifiedLayerNormalization", {"x": x, "g": scale}, outputs, domain="", **attrs)
    assert_matches_onnxruntime(m)


def test_norm_refusals() -> None:
    mean = ms_model("SkipSimplifiedLayerNormalization", {"x": [2, 8], "s": [2, 8], "g": [8]},
                    ["y", "m"])  # fmt: skip
    message = import_error(mean)
    assert "SkipSimplifiedLayerNormalization node 'n': output #1 (mean)" in message
    wide = ms_model("SkipLayerNormalization", {"x": [3, 8], "s": [2, 3, 8], "g": [8]})
    assert "SkipLayerNormalization node 'n': a skip of shape [2, 3, 8]" in import_error(wide)


# ---------------------------------------------------------------------------------
# Models onnxruntime optimised
# ---------------------------------------------------------------------------------

EXAMPLES = {
    "resnet18": {"FusedConv"},
    "resnet50": {"FusedConv"},
    "mobilenetv2": {"FusedConv"},
    "vit": {"FusedMatMul", "SkipLayerNormalization"},
    "bert": {"FusedMatMul", "FusedGemm", "SkipLayerNormalization"},
    "llama": {"FusedMatMul", "QuickGelu"},
}


def ort_optimized(path: Path, tmp: Path) -> onnx.ModelProto:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp / f"{path.stem}_optimized.onnx")
    ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return onnx.load(options.optimized_model_filepath)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_ort_optimized_example_models(tmp_path: Path, name: str) -> None:
    path = MODELS / f"{name}.onnx"
    model = ort_optimized(path, tmp_path)
    contrib = {n.op_type for n in model.graph.node if n.domain == MS}
    assert contrib == EXAMPLES[name]
    module = import_model(model)
    params = param_values(model, module)
    result = CompilePipeline(target="cpu").compile(module)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for seed in range(2):
        feeds = session_feeds(session, seed, vocab=16)
        got = result.run(feeds, params)
        for out, want in zip(session.get_outputs(), session.run(None, feeds), strict=True):
            np.testing.assert_allclose(got[out.name], want, rtol=1e-5, atol=1e-5, err_msg=out.name)
