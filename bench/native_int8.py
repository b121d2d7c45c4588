"""int8 natively: accuracy and time of the integer kernels, in one run.

    python bench/native_int8.py            # builder CNN/transformer, ResNet-18, MobileNetV2, ViT
    python bench/native_int8.py --runs 20

For each model, ``CompilePipeline(target="cpu", quantize="int8")`` calibrated on 8
seeded batches (``quant-to-integer``: integer matmul/conv kernels), its f32-on-dequantised
form (the same pipeline without ``quant-to-integer``: the oracle PTQ is checked with) and
the f32 compile, all built natively with one BLAS thread. On 3 held-out batches: the
worst output cosine of int8-native and of the oracle against f32, and the largest
int8-native difference from the reference executor (relative to scale); then median run
times of int8-native and f32-native (alternating, same inputs, weights packed once).
For the ONNX models also onnxruntime's int8: ``quantize_static`` on the same calibration
batches (QDQ, per-channel int8 weights, u8 activations; ORT fuses it into its integer
kernels), one thread, timed in the same alternation (``ort int8 ms``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.testing.ptq_peer import (
    cosine,
    init_params,
    model_batches,
    random_batches,
    small_cnn,
    small_transformer,
)

MODELS = Path(__file__).resolve().parents[1] / "examples" / "models"


def models() -> dict[str, tuple]:
    out = {}
    for name, make in (("cnn", small_cnn), ("transformer", small_transformer)):
        module = make()
        out[name] = (module, init_params(module), random_batches(module, 8, 0),
                     random_batches(module, 3, 100), None)  # fmt: skip
    for name in ("resnet18", "mobilenetv2", "vit"):
        model = onnx.load(str(MODELS / f"{name}.onnx"))
        module = import_model(model)
        out[name] = (module, param_values(model, module), model_batches(model, 8, 0),
                     model_batches(model, 3, 100), model)  # fmt: skip
    return out


class _Batches(CalibrationDataReader):
    def __init__(self, batches: list[dict[str, np.ndarray]]):
        self.batches = iter(batches)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def ort_int8(model: onnx.ModelProto, batches: list[dict[str, np.ndarray]]) -> ort.InferenceSession:
    """onnxruntime's static int8 quantisation of ``model`` on ``batches``, one thread."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "f32.onnx", Path(tmp) / "int8.onnx"
        onnx.save(model, str(src))
        quantize_static(
            str(src), str(dst), _Batches(batches), quant_format=QuantFormat.QDQ,
            per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
        )  # fmt: skip
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        return ort.InferenceSession(str(dst), options, providers=["CPUExecutionProvider"])


def compile_int8(module, params, batches, integer: bool):
    pipe = CompilePipeline(
        target="cpu", quantize="int8", calibration=batches, calibration_params=params,
        weights_in_arena=False, keep_stages=False,
    )  # fmt: skip
    if not integer:
        spec = pipe.pipeline.replace("quant-to-integer{target=cpu},", "")
        pipe = CompilePipeline(
            pipeline=spec, options=pipe.options, calibration=batches, calibration_params=params
        )
    return pipe.compile(module)


def median_ms(runs: int, *fns) -> list[float]:
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for fn, ts in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - start)
    return [1e3 * float(np.median(ts)) for ts in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    print(f"{'model':<12} {'cos int8':>9} {'cos oracle':>10} {'vs ref':>8} "
          f"{'int8 ms':>9} {'f32 ms':>9} {'f32/int8':>8} {'ort int8 ms':>11}")  # fmt: skip
    for name, (module, params, calibration, held_out, model) in models().items():
        result = compile_int8(module, params, calibration, integer=True)
        oracle = compile_int8(module, params, calibration, integer=False)
        f32 = CompilePipeline(target="cpu", weights_in_arena=False, keep_stages=False).compile(
            module
        )
        native, native_f32 = result.build(threads=1), f32.build(threads=1)
        cos_int8 = cos_oracle = 1.0
        err = 0.0
        for feeds in held_out:
            got, ref = native.run(feeds, params), result.run(feeds, params)
            want, exact = oracle.run(feeds, params), f32.run(feeds, params)
            for key in got:
                cos_int8 = min(cos_int8, cosine(got[key], exact[key]))
                cos_oracle = min(cos_oracle, cosine(want[key], exact[key]))
                scale = float(np.abs(ref[key]).max()) or 1.0
                err = max(err, float(np.abs(got[key] - ref[key]).max()) / scale)
        feeds = held_out[0]
        native_f32.run(feeds, params)  # the weights packed once, as a deployment does
        timed = [partial(native.run, feeds), partial(native_f32.run, feeds)]
        if model is not None:
            timed.append(partial(ort_int8(model, calibration).run, None, feeds))
        t_int8, t_f32, *t_ort = median_ms(args.runs, *timed)
        ort_ms = f"{t_ort[0]:>11.3f}" if t_ort else f"{'-':>11}"
        print(f"{name:<12} {cos_int8:>9.5f} {cos_oracle:>10.5f} {err:>8.1e} {t_int8:>9.3f} "
              f"{t_f32:>9.3f} {t_f32 / t_int8:>8.2f} {ort_ms}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
