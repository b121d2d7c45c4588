"""Chains of gathers and gather_axes by constant 1-D indices compose into one op
(algebraic-simplify) that picks the same elements: bit for bit through the reference
executor on random chains, negative indices included; what must not compose stays."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline

GATHERS = (mir.GatherOp, mir.GatherAxesOp)


def _simplified(module: ModuleOp) -> ModuleOp:
    out = module.clone()
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(out)
    return out


def _gathers(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if isinstance(op, GATHERS)]


@pytest.mark.parametrize("seed", range(16))
def test_composed_gathers_pick_the_same_elements(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [int(d) for d in rng.integers(2, 7, size=int(rng.integers(1, 4)))]
    with ModuleBuilder("g") as m:
        x = m.input("x", tuple(shape))
        v = x
        cur = list(shape)
        for _ in range(int(rng.integers(2, 5))):
            k = int(rng.integers(1, len(cur) + 1))
            axes = sorted(int(a) for a in rng.choice(len(cur), size=k, replace=False))
            idx = []
            for a in axes:
                n = int(rng.integers(1, 8))
                # Negative indices wrap, as the ops wrap them.
                picked = rng.integers(-cur[a], cur[a], size=n).astype(np.int64)
                idx.append(m.constant(picked))
                cur[a] = n
            if len(axes) == 1 and rng.random() < 0.5:
                v = m.emit(mir.GatherOp(v, idx[0], axes[0])).results[0]
            else:
                v = m.emit(mir.GatherAxesOp(v, idx, axes)).results[0]
        m.output(v, names=["y"])
    simplified = _simplified(m.module)
    assert len(_gathers(simplified)) == 1
    data = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(
        run(simplified, {"x": data})["y"], run(m.module, {"x": data})["y"]
    )


def test_a_shared_or_run_time_inner_gather_stays() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (4, 5))
        i = m.input("i", (3,), dtype="i64")
        shared = m.gather(x, m.constant(np.array([3, 0], np.int64)), 0)
        by_input = m.gather(x, i, 1)
        m.output(
            m.gather(shared, m.constant(np.array([1], np.int64)), 0),
            shared,
            m.gather(by_input, m.constant(np.array([0, 2], np.int64)), 1),
            names=["a", "b", "c"],
        )
    assert len(_gathers(_simplified(m.module))) == 4


def test_an_out_of_range_constant_index_stays() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (4,))
        inner = m.gather(x, m.constant(np.array([0, 1, 2], np.int64)), 0)
        m.output(m.gather(inner, m.constant(np.array([5], np.int64)), 0), names=["y"])
    assert len(_gathers(_simplified(m.module))) == 2
