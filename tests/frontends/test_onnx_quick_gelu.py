"""x · sigmoid(c·x) -- CLIP's quick_gelu as PyTorch exports it (c = 1.702), ONNX Swish
and com.microsoft QuickGelu -- is one ``mir.swish``, as onnxruntime fuses it into one
QuickGelu kernel, instead of a mul, a sigmoid and a mul. Natively it gives
onnxruntime's values; a target without it runs the chain; the gate read elsewhere, or
in f16, stays as written."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run
from rlx_compile.pipeline import CompilePipeline

RNG = np.random.default_rng(17)
LEAVES = ("mir.input", "mir.param", "mir.constant")


def _model(nodes: list[onnx.NodeProto], outputs: list[str], elem: int = TensorProto.FLOAT,
           opset: int = 17, ms: bool = False) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", elem, [4, 16])],
        [helper.make_tensor_value_info(o, elem, [4, 16]) for o in outputs],
        [numpy_helper.from_array(np.array(1.702, helper.tensor_dtype_to_np_dtype(elem)), "c")],
    )  # fmt: skip
    opsets = [helper.make_opsetid("", opset)] + (
        [helper.make_opsetid("com.microsoft", 1)] if ms else []
    )
    return helper.make_model(graph, opset_imports=opsets)


def _compute_kinds(module: Any) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("mir.") and op.name not in LEAVES]


EXPORTED = [helper.make_node("Mul", ["x", "c"], ["t"]), helper.make_node("Sigmoid", ["t"], ["s"]),
            helper.make_node("Mul", ["x", "s"], ["y"])]  # fmt: skip
FORMS = {
    "exported": _model(EXPORTED, ["y"]),
    "swish": _model([helper.make_node("Swish", ["x"], ["y"], alpha=1.702)], ["y"], opset=24),
    "com.microsoft": _model(
        [helper.make_node("QuickGelu", ["x"], ["y"], domain="com.microsoft", alpha=1.702)],
        ["y"],
        ms=True,
    ),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_one_op_with_onnxruntimes_values(form: str) -> None:
    model = FORMS[form]
    module = import_model(model)
    assert _compute_kinds(CompilePipeline(target="cpu").compile(module).lir) == ["mir.swish"]
    x = np.concatenate([[np.inf, -np.inf, 0.0, -0.0, 30.0, -30.0],
                        RNG.standard_normal(58) * 4]).astype(np.float32).reshape(4, 16)  # fmt: skip
    (got,) = backend.prepare(model).run({"x": x})
    cortex = CompilePipeline(target="cortex-m", plan_memory=False).compile(module)
    assert "mir.swish" not in _compute_kinds(cortex.module)
    (chain,) = run(cortex.module, {"x": x}, param_values(model, module)).values()
    if form != "swish":  # onnxruntime has no Swish kernel (opset 24) yet
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        np.testing.assert_allclose(got, session.run(None, {"x": x})[0], rtol=1e-6, atol=1e-6)
    with np.errstate(invalid="ignore"):  # -inf · 0 at -inf, as the product is written
        want = x * (1 / (1 + np.exp(-1.702 * x.astype(np.float64))))
    for y in (got, chain):
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "model",
    [_model(EXPORTED, ["y", "s"]), _model(EXPORTED, ["y"], elem=TensorProto.FLOAT16)],
    ids=["gate-read-elsewhere", "f16"],
)
def test_a_gate_read_elsewhere_or_in_f16_stays_as_written(model: onnx.ModelProto) -> None:
    lir = CompilePipeline(target="cpu").compile(import_model(model)).lir
    assert "mir.sigmoid" in _compute_kinds(lir)
    assert "mir.swish" not in _compute_kinds(lir)
