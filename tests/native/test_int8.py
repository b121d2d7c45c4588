"""int8 natively: a ``quantize="int8"`` compile runs its quantised matmuls and convs as
integer kernels (int8 x int8 -> int32, per-channel weight scales, requantised where a
quantize reads them), natively as the reference executor defines them, and as accurately
as the f32 computation on dequantised values (the oracle) that PTQ is checked with."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp

from rlx_compile import CompilePipeline
from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.testing.ptq_peer import (
    cosine,
    init_params,
    model_batches,
    random_batches,
    small_cnn,
    small_transformer,
)

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def _models() -> dict[str, tuple[ModuleOp, dict, list, list]]:
    out = {}
    for name, build in (("cnn", small_cnn), ("transformer", small_transformer)):
        module = build()
        out[name] = (module, init_params(module), random_batches(module, 8, 0),
                     random_batches(module, 3, 100))  # fmt: skip
    for name in ("resnet18", "mobilenetv2", "vit"):  # mobilenetv2: relu6 as clip
        model = onnx.load(str(MODELS / f"{name}.onnx"))
        module = import_model(model)
        out[name] = (module, param_values(model, module), model_batches(model, 8, 0),
                     model_batches(model, 3, 100))  # fmt: skip
    return out


MODELS_UNDER_TEST = _models()


def _compile(module: ModuleOp, params: dict, batches: list, integer: bool):
    pipe = CompilePipeline(
        target="cpu", quantize="int8", calibration=batches, calibration_params=params,
        weights_in_arena=False, keep_stages=False,
    )  # fmt: skip
    if not integer:  # the oracle: f32 on the dequantised values
        spec = pipe.pipeline.replace("quant-to-integer{target=cpu},", "")
        assert spec != pipe.pipeline
        pipe = CompilePipeline(
            pipeline=spec, options=pipe.options, calibration=batches, calibration_params=params
        )
    return pipe.compile(module)


@pytest.mark.parametrize("name", sorted(MODELS_UNDER_TEST))
def test_int8_runs_integer_kernels_as_accurately_as_the_oracle(name: str) -> None:
    module, params, calibration, held_out = MODELS_UNDER_TEST[name]
    result = _compile(module, params, calibration, integer=True)
    kinds = Counter(op.name for op in result.lir.walk())
    float_compute = {
        "mir.conv",
        "mir.fused_conv_bias_act",
        "mir.matmul",
        "mir.fused_matmul_bias_act",
    }
    assert kinds["mir.integer_conv"] + kinds["mir.integer_matmul"] > 0
    # no quantised conv/matmul is left computing in f32 on dequantised values
    for op in result.lir.walk():
        if op.name in float_compute:
            assert not any(isinstance(v.owner, mir.DequantizeOp) for v in op.operands[:2]), op
    oracle = _compile(module, params, calibration, integer=False)
    f32 = CompilePipeline(target="cpu", keep_stages=False).compile(module)
    native = result.build()
    for feeds in held_out:
        got = native.run(feeds, params, poison=True)
        reference = result.run(feeds, params)
        want = oracle.run(feeds, params)
        exact = f32.run(feeds, params)
        for key in got:
            scale = float(np.abs(reference[key]).max())
            # native == the integer ops' definition (f32 epilogues: libm's last bits)
            assert float(np.abs(got[key] - reference[key]).max()) <= 1e-5 * scale
            # integer and dequantised f32 differ by f32 rounding, and the steps it flips
            assert cosine(got[key], want[key]) >= 0.999
            # as accurate as the PTQ tests ask of the dequantised form
            assert cosine(got[key], exact[key]) >= 0.99
            assert cosine(got[key], exact[key]) >= cosine(want[key], exact[key]) - 2e-3


def test_requantised_integer_ops() -> None:
    """A quantize reading an integer op's result becomes that op's output scale."""
    module, params, calibration, _ = MODELS_UNDER_TEST["transformer"]
    result = _compile(module, params, calibration, integer=True)
    requantised = [
        op for op in result.lir.walk()
        if isinstance(op, mir.IntegerLinearOp) and op.props().opt_float("out_scale") is not None
    ]  # fmt: skip
    assert requantised and all(op.result.type.dtype.is_int for op in requantised)
