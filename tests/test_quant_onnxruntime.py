"""PTQ int8 side by side with onnxruntime's quantize_static, and AMP error, on the real ONNX
models of examples/models (imported with the frontend) and on the builder models (small
sizes; the full table is bench/quant.py).

Ours must reach 0.99 cosine on every held-out batch and be at least as good as the peer:
- against quantize_static's defaults ("default": it also quantises residual adds,
  softmax, gathers and the outputs of Conv/MatMul/Gemm, logits included), strictly;
- against the peer restricted to our sites ("matched"), whose scales and zero points
  must equal ours (activations and every weight channel), within MARGIN on the mean.
  With identical sites and parameters two differences remain. onnxruntime makes every
  reader of a quantised tensor read it dequantised (a ResNet's residual adds read the
  int8 skip connection; we keep float there, which helps us: +9e-5 mean cosine on
  ResNet-18). And the f32 values differ by ulps (onnxruntime's kernels; calibrated
  ranges, so scales a few ulps apart), which moves a value across a rounding boundary
  now and then; the flipped steps propagate through later quantisers. Measured on the
  models without skip readers over 16 held-out batches (ViT, Llama, symmetric and
  asymmetric): per-batch differences within 1e-9 except one Llama batch at -3.3e-7 and
  one ViT batch at -4.2e-5, where the peer's own QDQ model run by our executor scores
  exactly ours (bench/quant.py prints that as 'on rlx'). MARGIN = 2e-5 on a 4-batch
  mean admits two batches like the ViT one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.testing.ptq_peer import (
    PeerResult,
    compare,
    compare_onnx_model,
    init_params,
    model_batches,
    random_batches,
    small_cnn,
    small_transformer,
)

MODELS = Path(__file__).resolve().parents[1] / "examples" / "models"
MARGIN = 2e-5


def check(r: PeerResult) -> None:
    assert r.ort_f32_max_diff < 1e-5  # both sides start from the same model
    assert min(r.ours) >= 0.99
    assert r.qparams_match  # same sites, same scales and zero points as the matched peer
    assert np.mean(r.ours) > np.mean(r.peers["default"])
    assert np.mean(r.ours) >= np.mean(r.peers["matched"]) - MARGIN


@pytest.mark.parametrize(
    ("name", "symmetric"), [("resnet18", True), ("resnet18", False), ("llama", True)]
)
def test_int8_imported_model_against_onnxruntime(name: str, symmetric: bool) -> None:
    model = onnx.load(str(MODELS / f"{name}.onnx"))
    r = compare_onnx_model(
        model, model_batches(model, 8, 1), model_batches(model, 4, 999), symmetric=symmetric
    )
    check(r)
    # Every MatMul/Conv/Gemm input is quantised (weights too: params stay Q/DQ pairs).
    sites = {"resnet18": 18 + 21, "llama": 17 + 9}[name]
    assert r.quantize_ops == sites


@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize(
    "build", [lambda: small_cnn(size=16), lambda: small_transformer(seq=8, embed=32)],
    ids=["cnn", "transformer"],
)  # fmt: skip
def test_int8_builder_model_against_onnxruntime(build, symmetric: bool) -> None:  # type: ignore[no-untyped-def]
    module = build()
    params = init_params(module, 0)
    r = compare(
        "model", module, params, random_batches(module, 32, 1), random_batches(module, 4, 999),
        symmetric=symmetric,
    )  # fmt: skip
    check(r)


@pytest.mark.parametrize("name", ["resnet18", "llama"])
def test_amp_imported_model(name: str) -> None:
    """f16/bf16 outputs within 4 units of the low type's precision (2^-10, 2^-7) of the
    output's scale (measured: 1.1e-3 and 8.8e-3 relative on ResNet-18)."""
    model = onnx.load(str(MODELS / f"{name}.onnx"))
    module = import_model(model)
    params = param_values(model, module)
    feeds = model_batches(model, 1, 5)[0]
    want = CompilePipeline(target="cpu").compile(module).run(feeds, params)["logits"]
    for dtype, eps in (("f16", 2.0**-10), ("bf16", 2.0**-7)):
        low = CompilePipeline(target="cpu", precision=dtype).compile(module)
        got = low.run(feeds, params)["logits"]
        assert got.dtype == np.float32  # outputs keep their declared type
        err = float(np.abs(got.astype(np.float64) - want).max())
        assert 0.0 < err <= 4 * eps * float(np.abs(want).max()), (dtype, err)
