"""x·sigmoid(x) -> silu(x) is bit-exact on finite f32 values (the reference silu is that
very product), and keeps its documented limit at -inf."""

from __future__ import annotations

import numpy as np

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline


def test_sigmoid_gate_becomes_silu_bit_exact() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (4096,))
        m.output(m.mul(m.sigmoid(x), x), names=["y"])
    simplified = m.module.clone()
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(simplified)
    assert any(isinstance(op, mir.SiluOp) for op in simplified.walk())
    assert not any(isinstance(op, mir.SigmoidOp) for op in simplified.walk())
    rng = np.random.default_rng(3)
    x = np.concatenate(
        [rng.standard_normal(4000) * 20, [0.0, -0.0, 1e-30, -1e-30, 88.7, -88.7, 3.4e38, -3.4e38]]
    ).astype(np.float32)
    x = np.resize(x, 4096).astype(np.float32)
    np.testing.assert_array_equal(run(simplified, {"x": x})["y"], run(m.module, {"x": x})["y"])
    # At -inf the product is NaN; silu gives its limit, -0 (the documented exception).
    out = run(simplified, {"x": np.full(4096, -np.inf, np.float32)})["y"]
    assert np.all(out == 0)
