"""fold-conv-affine computes the folded weight and bias of constant parameters at once
(``Eager``): bit for bit what the same functions give as ops on the reference executor,
which is what folding those ops would store."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile.builder import ModuleBuilder
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter import run
from rlx_compile.interpreter.eager import Eager
from rlx_compile.transforms.fold_conv_affine import channel_array, folded_bias, folded_weight

C = 5


@pytest.mark.parametrize("dtype", [DType.F32, DType.F16])
@pytest.mark.parametrize("kind", ["mul", "div", "add", "sub"])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("factor_shape", [(1,), (1, C, 1, 1)])
def test_eager_fold_matches_the_ops(
    dtype: DType, kind: str, with_bias: bool, factor_shape: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(11)
    arrays = {
        "weight": rng.standard_normal((C, 3, 3, 3)),
        "factor": rng.uniform(0.5, 2.0, factor_shape),  # a divisor away from 0
        "bias": rng.standard_normal((C,)),
    }
    if not with_bias:
        del arrays["bias"]
    arrays = {k: v.astype(dtype.numpy) for k, v in arrays.items()}
    scales = kind in ("mul", "div")
    eager = Eager()
    factor = channel_array(eager, arrays["factor"], C)
    want = {}
    if scales:
        want["weight"] = folded_weight(eager, kind, arrays["weight"], factor)
    if not scales or with_bias:
        want["bias"] = folded_bias(eager, kind, factor, arrays.get("bias"))
    with ModuleBuilder() as m:
        v = {name: m.input(name, list(a.shape), dtype) for name, a in arrays.items()}
        f = m.expand(m.reshape(v["factor"], [1]), [C]) if factor_shape == (1,) else None
        f = f if f is not None else m.reshape(v["factor"], [C])
        outs, names = [], []
        if scales:
            outs.append(folded_weight(m, kind, v["weight"], f))
            names.append("weight")
        if not scales or with_bias:
            outs.append(folded_bias(m, kind, f, v.get("bias")))
            names.append("bias")
        m.output(*outs, names=names)
    got = run(m.module, arrays)
    assert set(got) == set(want)
    for name, value in want.items():
        assert value.dtype == dtype.numpy
        np.testing.assert_array_equal(got[name], value, strict=True)
