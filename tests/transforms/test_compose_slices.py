"""Chains of narrows and strided slices compose into one op (algebraic-simplify) that
reads the same elements, and a unit-step slice legalized for a target without a slice
kernel (cortex-m) as narrows reads them too: bit for bit through the reference executor
on random chains."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline


def _random_chain(
    rng: np.random.Generator, m: ModuleBuilder, x: object, shape: list[int]
) -> object:
    """Two to four narrows or slices (steps of either sign) of ``x``."""
    v = x
    for _ in range(int(rng.integers(2, 5))):
        if rng.random() < 0.5:
            axis = int(rng.integers(len(shape)))
            n = int(rng.integers(1, shape[axis] + 1))
            start = int(rng.integers(0, shape[axis] - n + 1))
            v = m.emit(mir.NarrowOp(v, axis, start, n)).results[0]  # type: ignore[arg-type]
            shape[axis] = n
        else:
            starts, steps, lengths = [], [], []
            for d in shape:
                step = int(rng.choice([1, 2, -1, -2, 3]))
                start = int(rng.integers(d)) if step < 0 else int(rng.integers(max(1, d // 2)))
                room = start + 1 if step < 0 else d - start
                n = int(rng.integers(1, (room - 1) // abs(step) + 2))
                starts.append(start)
                steps.append(step)
                lengths.append(n)
            v = m.emit(mir.SliceOp(v, starts, steps, lengths)).results[0]  # type: ignore[arg-type]
            shape[:] = lengths
    return v


@pytest.mark.parametrize("seed", range(12))
def test_composed_slices_read_the_same_elements(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [int(d) for d in rng.integers(2, 9, size=int(rng.integers(1, 4)))]
    with ModuleBuilder("g") as m:
        x = m.input("x", tuple(shape))
        m.output(_random_chain(rng, m, x, list(shape)), names=["y"])
    simplified = m.module.clone()
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(simplified)
    kinds = [op for op in simplified.walk() if isinstance(op, mir.NarrowOp | mir.SliceOp)]
    assert len(kinds) <= 1
    data = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(
        run(simplified, {"x": data})["y"], run(m.module, {"x": data})["y"]
    )


def test_unit_step_slice_on_cortex_m_is_narrows() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (2, 258, 5))
        a = m.narrow(x, 1, 129, 129)
        m.output(m.narrow(a, 2, 1, 4), names=["y"])
    composed = m.module.clone()
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(composed)
    assert [op.name for op in composed.walk() if op.name in ("mir.narrow", "mir.slice")] == [
        "mir.slice"
    ]
    legal = composed.clone()
    PassManager(parse_pipeline("legalize{target=cortex-m}")).run(legal)
    assert [op.name for op in legal.walk() if op.name in ("mir.narrow", "mir.slice")] == [
        "mir.narrow", "mir.narrow"
    ]  # fmt: skip
    data = np.random.default_rng(1).standard_normal((2, 258, 5)).astype(np.float32)
    want = run(m.module, {"x": data})["y"]
    for module in (composed, legal):
        np.testing.assert_array_equal(run(module, {"x": data})["y"], want)
