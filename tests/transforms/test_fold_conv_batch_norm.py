"""fold-conv-batch-norm computes the folded weight and shift of constant parameters at
once (``Eager``): bit for bit what the same formula gives as ops on the reference
executor, which is what folding those ops would store."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile.builder import ModuleBuilder
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter import run
from rlx_compile.interpreter.eager import Eager
from rlx_compile.transforms.fold_conv_batch_norm import folded_parameters


@pytest.mark.parametrize("dtype", [DType.F32, DType.F16])
@pytest.mark.parametrize("conv_bias", [False, True])
def test_eager_fold_matches_the_ops(dtype: DType, conv_bias: bool) -> None:
    rng = np.random.default_rng(7)
    c, eps = 6, 1e-3
    shapes = {"scale": (c,), "bias": (c,), "mean": (c,), "variance": (c,),
              "weight": (c, 3, 3, 3), "conv_bias": (c,)}  # fmt: skip
    if not conv_bias:
        del shapes["conv_bias"]
    arrays = {
        name: (rng.uniform(0.01, 2.0, s) if name == "variance" else rng.standard_normal(s)).astype(
            dtype.numpy
        )
        for name, s in shapes.items()
    }
    with ModuleBuilder() as m:
        values = [m.input(name, list(s), dtype) for name, s in shapes.items()]
        weight, shift = folded_parameters(m, eps, *values)
        m.output(weight, shift, names=["weight", "shift"])
    got = run(m.module, arrays)
    want_weight, want_shift = folded_parameters(Eager(), eps, *arrays.values())
    assert want_weight.dtype == dtype.numpy and want_shift.dtype == dtype.numpy
    np.testing.assert_array_equal(got["weight"], want_weight, strict=True)
    np.testing.assert_array_equal(got["shift"], want_shift, strict=True)
