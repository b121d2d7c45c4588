"""fuse-gelu keeps the numbers: the exported erf decomposition and the mir.gelu it
becomes agree to a few ulp on random inputs, in every association it recognises."""

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
        else:  # (x * (erf(x / sqrt2) + 1)) * 0.5
            y = m.mul(m.mul(x, m.add(m.erf(m.div(x, math.sqrt(2.0))), 1.0)), 0.5)
        m.output(y, names=["y"])
    return m.module


@pytest.mark.parametrize("spelling", ["torch", "half_first", "half_last"])
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
