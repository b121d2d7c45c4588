"""PTQ int8 side by side with onnxruntime's quantize_static (small sizes; the full table
is bench/quant.py): same model, weights and 32 calibration batches; output cosine vs f32
on held-out batches must reach 0.99 and be at least onnxruntime's."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile.testing.ptq_peer import (
    compare,
    init_params,
    random_batches,
    small_cnn,
    small_transformer,
)


@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize(
    "build", [lambda: small_cnn(size=16), lambda: small_transformer(seq=8, embed=32)],
    ids=["cnn", "transformer"],
)  # fmt: skip
def test_int8_against_onnxruntime(build, symmetric: bool) -> None:  # type: ignore[no-untyped-def]
    module = build()
    params = init_params(module, 0)
    r = compare(
        "model", module, params, random_batches(module, 32, 1), random_batches(module, 6, 999),
        symmetric=symmetric,
    )  # fmt: skip
    assert r.ort_f32_max_diff < 1e-5  # the exported model is the same model
    assert min(r.ours) >= 0.99
    # At least as good: per batch within noise, and on average.
    assert np.mean(r.ours) >= np.mean(r.onnxruntime) - 1e-4
