"""Precision and quantisation benchmark. Headline numbers come from the real ONNX models of
``examples/models`` (ResNet-18/50, MobileNetV2, ViT, Llama), imported with the ONNX
frontend and compiled by ``CompilePipeline``:

(a) auto-mixed-precision (f16, bf16) error against f32, on the imported models and on the
    builder examples (decoder block, small CNN);
(b) PTQ int8 of the imported models, ours (``CompilePipeline(quantize="int8")``) against
    onnxruntime's ``quantize_static`` on the same .onnx file and the same 32 calibration
    batches, in two peer configurations (``default``: quantize_static's own op list,
    which also quantises residual adds, softmax, gathers and the outputs of
    Conv/MatMul/Gemm; ``matched``: Conv/MatMul/Gemm inputs and weights only, the sites
    quant-insert taps) - output cosine vs f32 on 16 held-out batches;
(c) the same comparison on the builder CNN and transformer, exported to ONNX;
(d) imported models with weights as params against weights bound at compile time
    (quant-propagate folds them into int8 constants): Q/DQ ops and output agreement;
(e) scaled fp8 quality and (f) Q/DQ ops before and after quant-propagate (builder models);
(g) calibration time.

    python bench/quant.py            # every committed model, 32 calibration batches
    python bench/quant.py --quick    # ResNet-18 and Llama, 8 calibration batches

Quality numbers are deterministic (seeded batches; the models' weights are in the
files); times are not.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.build_examples import decoder_block
from examples.build_examples import small_cnn as example_cnn
from rlx_compile import CompilePipeline
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.quant import calibrate, use_calibration
from rlx_compile.testing.ptq_peer import (
    PeerResult,
    bake_params,
    compare,
    compare_onnx_model,
    cosine,
    init_params,
    model_batches,
    quantize_imported,
    quantize_ours,
    random_batches,
    small_cnn,
    small_transformer,
)

MODELS_DIR = Path(__file__).resolve().parents[1] / "examples" / "models"
MODELS = ["resnet18", "resnet50", "mobilenetv2", "vit", "llama"]
QUICK_MODELS = ["resnet18", "llama"]


def apply(module, pipeline: str):  # type: ignore[no-untyped-def]
    out = module.clone()
    PassManager(parse_pipeline(pipeline)).run(out)
    return out


def load(name: str) -> onnx.ModelProto:
    return onnx.load(str(MODELS_DIR / f"{name}.onnx"))


def imported(name: str):  # type: ignore[no-untyped-def]
    """The model, its import, the params to bind and its output name."""
    model = load(name)
    module = import_model(model)
    return model, module, param_values(model, module), model.graph.output[0].name


def count(module, kind: type) -> int:  # type: ignore[no-untyped-def]
    return sum(isinstance(op, kind) for op in module.walk())


def amp_row(label: str, dtype: str, err: float, rel: float, casts: int) -> None:
    print(f"  {label:<24}{dtype:<7}{err:>10.2e}{rel:>11.2e}{casts:>7}")


def amp_table(models: list[str]) -> None:
    print("(a) auto-mixed-precision (policy=compute) vs f32, 4 random input batches;")
    print("    relative = max-abs / max |f32 output|")
    print(f"  {'model':<24}{'dtype':<7}{'max-abs':>10}{'relative':>11}{'casts':>7}")
    for name in models:
        model, module, params, out = imported(name)
        batches = model_batches(model, 4, 5)
        f32 = CompilePipeline(target="cpu").compile(module)
        wants = [f32.run(feeds, params)[out] for feeds in batches]
        for dtype in ("f16", "bf16"):
            low = CompilePipeline(target="cpu", precision=dtype).compile(module)
            diffs = [
                float(np.abs(low.run(feeds, params)[out].astype(np.float64) - want).max())
                for feeds, want in zip(batches, wants, strict=True)
            ]
            rel = max(d / float(np.abs(w).max()) for d, w in zip(diffs, wants, strict=True))
            casts = count(low.stage("auto-mixed-precision"), mir.CastOp)
            amp_row(f"{name} (onnx)", dtype, max(diffs), rel, casts)
    for label, build in (("decoder_block direct", lambda: decoder_block()),
                         ("decoder_block fusable", lambda: decoder_block(policy="fusable")),
                         ("small_cnn direct", lambda: example_cnn()),
                         ("small_cnn fusable", lambda: example_cnn(policy="fusable"))):  # fmt: skip
        module = apply(build(), "lower-hir-to-mir,canonicalize,cse,dce")
        params = init_params(module, 0)
        batches = random_batches(module, 4, 5)
        for dtype in ("f16", "bf16"):
            low = apply(module, f"auto-mixed-precision{{dtype={dtype}}}")
            err = rel = 0.0
            for feeds in batches:
                want = next(iter(run(module, feeds, params).values()))
                got = next(iter(run(low, feeds, params).values()))
                diff = float(np.abs(got.astype(np.float64) - want).max())
                err = max(err, diff)
                rel = max(rel, diff / float(np.abs(want).max()))
            amp_row(label, dtype, err, rel, count(low, mir.CastOp))


def ptq_header() -> None:
    print(f"  {'model':<13}{'activations':<12}{'ours min':>10}{'mean':>10}"
          f"{'matched min':>13}{'mean':>10}{'default min':>13}{'mean':>10}"
          f"{'on rlx':>10}{'Q ops':>7}{'qparams=ORT':>13}{'ORT f32 diff':>14}")  # fmt: skip


def ptq_row(r: PeerResult) -> None:
    matched, default = r.peers["matched"], r.peers["default"]
    same = {None: "-", True: "yes", False: "NO"}[r.qparams_match]
    on_rlx = "-" if r.matched_on_rlx is None else f"{np.mean(r.matched_on_rlx):.6f}"
    print(f"  {r.model:<13}{r.activations:<12}{min(r.ours):>10.6f}{np.mean(r.ours):>10.6f}"
          f"{min(matched):>13.6f}{np.mean(matched):>10.6f}"
          f"{min(default):>13.6f}{np.mean(default):>10.6f}{on_rlx:>10}"
          f"{r.quantize_ops:>7}{same:>13}{r.ort_f32_max_diff:>14.1e}")  # fmt: skip


def ptq_imported(models: list[str], calibration_batches: int, held_out_batches: int) -> None:
    print(f"\n(b) int8 PTQ of the imported ONNX models, {calibration_batches} calibration "
          f"batches, {held_out_batches} held-out\n    batches: output cosine vs f32")  # fmt: skip
    print("    ours: CompilePipeline(quantize='int8'); ORT: quantize_static (QDQ, int8, weights")
    print("    per channel, MinMax), 'matched' = Conv/MatMul/Gemm inputs and weights only,")
    print("    'default' = its own op list; 'min' is the worst held-out batch; 'on rlx' = mean")
    print("    of the matched peer's QDQ model imported and run by our executor (its model,")
    print("    our arithmetic); qparams=ORT: our activation scales and zero points and our")
    print("    per-channel weight scales equal the matched peer's")
    ptq_header()
    for name in models:
        model = load(name)
        calibration = model_batches(model, calibration_batches, 1)
        held_out = model_batches(model, held_out_batches, 999)
        for symmetric in (True, False):
            r = compare_onnx_model(model, calibration, held_out, symmetric=symmetric, name=name)
            ptq_row(r)


def ptq_builder(quick: bool) -> None:
    print("\n(c) int8 PTQ of the builder models (exported to ONNX for the peer), 32 calibration")
    print("    batches, 16 held-out batches; ours: quant-insert,quant-propagate")
    sizes = {
        "cnn": (small_cnn, {} if quick else {"size": 64, "width": 32}),
        "transformer": (small_transformer, {} if quick else
                        {"seq": 64, "embed": 128, "heads": 8, "ffn": 512}),
    }  # fmt: skip
    ptq_header()
    for name, (build, kw) in sizes.items():
        module = build(**kw)  # type: ignore[operator]
        params = init_params(module, 0)
        calibration = random_batches(module, 32, 1)
        held_out = random_batches(module, 16, 999)
        for symmetric in (True, False):
            ptq_row(compare(name, module, params, calibration, held_out, symmetric=symmetric))


def bound_weights(models: list[str]) -> None:
    print("\n(d) imported models, weights as params vs bound at compile time (param_bindings):")
    print("    quantize/dequantize ops and int8 constants after quant-propagate, and the")
    print("    largest output difference between the two compiles on 4 batches")
    print(f"  {'model':<13}{'params Q/DQ':>13}{'bound Q/DQ':>12}{'int8 consts':>13}"
          f"{'max diff':>10}")  # fmt: skip
    for name in models:
        model, module, params, out = imported(name)
        calibration = model_batches(model, 8, 1)
        as_params = quantize_imported(module, params, calibration, symmetric=True)
        bound = quantize_imported(module, params, calibration, symmetric=True, bind_weights=True)
        a, b = as_params.stage("quant-propagate"), bound.stage("quant-propagate")
        int8 = sum(
            isinstance(op, mir.ConstantOp) and op.tensor_type.dtype is DType.I8 for op in b.walk()
        )
        diff = max(
            float(np.abs(as_params.run(f, params)[out] - bound.run(f, {})[out]).max())
            for f in model_batches(model, 4, 999)
        )
        print(f"  {name:<13}{count(a, mir.QuantizeOp):>7}/{count(a, mir.DequantizeOp):<5}"
              f"{count(b, mir.QuantizeOp):>6}/{count(b, mir.DequantizeOp):<5}"
              f"{int8:>13}{diff:>10.1e}")  # fmt: skip


def fp8_and_pairs(models: list[str]) -> None:
    print("\n(e) scaled fp8 (dynamic amax): worst cosine vs f32 over 4 held-out batches")
    for name in models:
        model, module, params, out = imported(name)
        f32 = CompilePipeline(target="cpu").compile(module)
        fp8 = CompilePipeline(target="cpu", quantize="fp8").compile(module)
        worst = min(
            cosine(fp8.run(f, params)[out], f32.run(f, params)[out])
            for f in model_batches(model, 4, 999)
        )
        print(f"  {name + ' (onnx)':<20}f8e4m3   {worst:.5f}")
    for name, module in (("cnn", small_cnn()), ("transformer", small_transformer())):
        params = init_params(module, 0)
        held_out = random_batches(module, 4, 999)
        for dtype in ("f8e4m3", "f8e5m2"):
            fp8 = apply(module, f"scaled-quant-insert{{dtype={dtype}}}")
            worst = min(
                cosine(next(iter(run(fp8, f, params).values())),
                       next(iter(run(module, f, params).values())))
                for f in held_out
            )  # fmt: skip
            print(f"  {name:<20}{dtype:<8} {worst:.5f}")
    print("\n(f) builder models: quantize/dequantize ops after quant-insert, after quant-propagate")
    for name, module in (("cnn", small_cnn()), ("transformer", small_transformer())):
        params = init_params(module, 0)
        variants = (("params", module, params), ("baked weights", bake_params(module, params), {}))
        for label, graph, weights in variants:
            stats = calibrate(graph, random_batches(graph, 4, 1), weights)
            with use_calibration(stats):
                inserted = apply(graph, "quant-insert")
            propagated = apply(inserted, "quant-propagate")
            print(f"  {name:<13}{label:<14} {count(inserted, mir.QuantizeOp)}/"
                  f"{count(inserted, mir.DequantizeOp)} -> {count(propagated, mir.QuantizeOp)}/"
                  f"{count(propagated, mir.DequantizeOp)}")  # fmt: skip


def calibration_time() -> None:
    module = small_transformer()
    params = init_params(module, 0)
    batches = random_batches(module, 32, 1)
    start = time.perf_counter()
    quantize_ours(module, params, batches, symmetric=True)
    plain = time.perf_counter()
    for b in batches:
        run(module, b, params)
    end = time.perf_counter()
    print(
        f"\n(g) calibrate + quant-insert on 32 transformer batches: {plain - start:.2f} s; "
        f"32 plain executor runs: {end - plain:.2f} s (ratio {(plain - start) / (end - plain):.2f})"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    # quantize_static logs a pre-processing hint on every call (the models need none).
    logging.getLogger().setLevel(logging.ERROR)
    models = QUICK_MODELS if args.quick else MODELS
    amp_table(models)
    if args.quick:
        ptq_imported(models, 8, 4)
    else:
        ptq_imported(models, 32, 16)
    ptq_builder(args.quick)
    bound_weights(models)
    fp8_and_pairs(models)
    calibration_time()
    return 0


if __name__ == "__main__":
    sys.exit(main())
