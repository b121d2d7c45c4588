"""fuse-gelu keeps the numbers: the exported erf and tanh decompositions and the
mir.gelu they become agree to a few ulp on random inputs, in every association it
recognises."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline


def decomposition(spelling: str):  # type: ignore[no-untyped-def]
    with ModuleBuilder("g") as m:
        x = m.input("x", (3, 64))
        if spelling == "torch":  # x * (0.5 * (erf(x / sqrt2) + 1))
            y = m.mul(x, m.mul(0.5, m.add(m.erf(m.div(x, math.sqrt(2.0))), 1.0)))
        elif spelling == "half_first":  # (0.5 * x) * (1 + erf(x * 1/sqrt2))
            y = m.mul(m.mul(0.5, x), m.add(1.0, m.erf(m.mul(x, math.sqrt(0.5)))))
        elif spelling == "half_last":  # (x * (erf(x / sqrt2) + 1)) * 0.5
            y = m.mul(m.mul(x, m.add(m.erf(m.div(x, math.sqrt(2.0))), 1.0)), 0.5)
        else:  # GPT-2's gelu_new, x³ as pow or as x · x · x
            cube = m.pow(x, 3.0) if spelling == "tanh_pow" else m.mul(m.mul(x, x), x)
            inner = m.mul(math.sqrt(2.0 / math.pi), m.add(x, m.mul(0.044715, cube)))
            y = m.mul(m.mul(0.5, x), m.add(1.0, m.tanh(inner)))
        m.output(y, names=["y"])
    return m.module


@pytest.mark.parametrize("spelling", ["torch", "half_first", "half_last", "tanh_pow", "tanh_mul"])
def test_fused_gelu_matches_the_decomposition(spelling: str) -> None:
    module = decomposition(spelling)
    fused = module.clone()
    PassManager(parse_pipeline("fuse-gelu")).run(fused)
    ops = [op for op in fused.walk() if isinstance(op, mir.ShapedOp)]
    # The scalar constants are left for dce.
    kinds = [type(op) for op in ops if not isinstance(op, mir.InputOp | mir.ConstantOp)]
    assert kinds == [mir.GeluOp]
    x = np.random.default_rng(0).standard_normal((3, 64)).astype(np.float32) * 3
    want = run(module, {"x": x})["y"]
    got = run(fused, {"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
