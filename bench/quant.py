"""Precision and quantisation benchmark: (a) auto-mixed-precision error on the example
models, (b) PTQ int8 quality, ours against onnxruntime's ``quantize_static`` on the same
models, weights and 32 calibration batches, (c) scaled fp8 quality, (d) Q/DQ pairs
before and after quant-propagate, (e) calibration time.

    python bench/quant.py            # full sizes
    python bench/quant.py --quick    # the sizes the tests use

Quality numbers are deterministic (seeded weights and batches); times are not.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.build_examples import decoder_block
from examples.build_examples import small_cnn as example_cnn
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.quant import calibrate, use_calibration
from rlx_compile.testing.ptq_peer import (
    bake_params,
    compare,
    cosine,
    init_params,
    quantize_ours,
    random_batches,
    small_cnn,
    small_transformer,
)


def apply(module, pipeline: str):  # type: ignore[no-untyped-def]
    out = module.clone()
    PassManager(parse_pipeline(pipeline)).run(out)
    return out


def amp_table() -> None:
    print("(a) auto-mixed-precision (policy=compute) vs f32, 4 random input batches")
    print(f"  {'model':<22}{'dtype':<7}{'max-abs':>10}{'relative':>11}{'casts':>7}")
    for label, build in (("decoder_block direct", lambda: decoder_block()),
                         ("decoder_block fusable", lambda: decoder_block(policy="fusable")),
                         ("small_cnn direct", lambda: example_cnn()),
                         ("small_cnn fusable", lambda: example_cnn(policy="fusable"))):  # fmt: skip
        module = apply(build(), "lower-hir-to-mir,canonicalize,cse,dce")
        params = init_params(module, 0)
        batches = random_batches(module, 4, 5)
        for dtype in ("f16", "bf16"):
            low = apply(module, f"auto-mixed-precision{{dtype={dtype}}}")
            casts = sum(isinstance(op, mir.CastOp) for op in low.walk())
            err = rel = 0.0
            for feeds in batches:
                want = next(iter(run(module, feeds, params).values()))
                got = next(iter(run(low, feeds, params).values()))
                diff = float(np.abs(got.astype(np.float64) - want).max())
                err = max(err, diff)
                rel = max(rel, diff / float(np.abs(want).max()))
            print(f"  {label:<22}{dtype:<7}{err:>10.2e}{rel:>11.2e}{casts:>7}")


def ptq_table(quick: bool) -> None:
    print("\n(b) int8 PTQ, 32 calibration batches, 16 held-out batches: output cosine vs f32")
    print("    (QDQ, weights per channel, min/max; 'min' is the worst held-out batch)")
    sizes = {
        "cnn": (small_cnn, {} if quick else {"size": 64, "width": 32}),
        "transformer": (small_transformer, {} if quick else
                        {"seq": 64, "embed": 128, "heads": 8, "ffn": 512}),
    }  # fmt: skip
    print(f"  {'model':<13}{'activations':<12}{'ours min':>10}{'ours mean':>11}"
          f"{'ORT min':>10}{'ORT mean':>10}{'ORT f32 diff':>14}")  # fmt: skip
    for name, (build, kw) in sizes.items():
        module = build(**kw)  # type: ignore[operator]
        params = init_params(module, 0)
        calibration = random_batches(module, 32, 1)
        held_out = random_batches(module, 16, 999)
        for symmetric in (True, False):
            r = compare(name, module, params, calibration, held_out, symmetric=symmetric)
            print(f"  {name:<13}{r.activations:<12}{min(r.ours):>10.5f}{np.mean(r.ours):>11.5f}"
                  f"{min(r.onnxruntime):>10.5f}{np.mean(r.onnxruntime):>10.5f}"
                  f"{r.ort_f32_max_diff:>14.1e}")  # fmt: skip


def fp8_and_pairs() -> None:
    print("\n(c) scaled fp8 (dynamic amax) and (d) Q/DQ ops before/after quant-propagate")
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
            print(f"  {name:<13}{dtype:<8} worst cosine {worst:.5f}")
        variants = (("params", module, params), ("baked weights", bake_params(module, params), {}))
        for label, graph, weights in variants:
            stats = calibrate(graph, random_batches(graph, 4, 1), weights)
            with use_calibration(stats):
                inserted = apply(graph, "quant-insert")
            propagated = apply(inserted, "quant-propagate")
            q = lambda m: sum(isinstance(o, mir.QuantizeOp) for o in m.walk())  # noqa: E731
            dq = lambda m: sum(isinstance(o, mir.DequantizeOp) for o in m.walk())  # noqa: E731
            print(f"  {name:<13}{label:<14} quantize/dequantize ops after quant-insert "
                  f"{q(inserted)}/{dq(inserted)}, after quant-propagate "
                  f"{q(propagated)}/{dq(propagated)}")  # fmt: skip


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
        f"\n(e) calibrate + quant-insert on 32 transformer batches: {plain - start:.2f} s; "
        f"32 plain executor runs: {end - plain:.2f} s (ratio {(plain - start) / (end - plain):.2f})"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    amp_table()
    ptq_table(args.quick)
    fp8_and_pairs()
    calibration_time()
    return 0


if __name__ == "__main__":
    sys.exit(main())
