"""``algebraic-simplify`` lets an op that broadcasts its operands (binary, compare,
where, prelu) read ``x`` instead of ``expand(x)`` where its result type stays the same:
the values are the same bit for bit, NaN, infinities and signed zeros included, with
fixed and symbolic dims; an expand the result's shape needs stays."""

from __future__ import annotations

import numpy as np

from rlx_compile import ModuleBuilder
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -3.5, 7.25], np.float32)


def _simplified(module: object) -> object:
    out = module.clone()  # type: ignore[attr-defined]
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(out)
    return out


def _expands(module: object) -> int:
    return sum(op.name == "mir.expand" for op in module.walk())  # type: ignore[attr-defined]


def _same(want: np.ndarray, got: np.ndarray) -> bool:
    if want.dtype.kind == "f":
        return bool(
            (
                (want == got) & (np.signbit(want) == np.signbit(got))
                | (np.isnan(want) & np.isnan(got))
            ).all()
        )
    return bool((want == got).all())


def test_broadcasting_ops_read_the_unexpanded_value_bit_exactly() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (4, 8))
        n = m.input("n", (4, 1))
        row = m.input("row", (8,))
        c = m.input("c", (4, 8), "bool")
        d = m.div(x, m.expand(n, (4, 8)))  # F.normalize's division
        s = m.sub(m.expand(row, (4, 8)), x)
        w = m.where(c, m.expand(row, (4, 8)), m.expand(n, (4, 8)))
        k = m.compare("lt", x, m.expand(n, (4, 8)))
        p = m.prelu(x, m.expand(row, (4, 8)))
        kept = m.add(m.expand(row, (4, 8)), row)  # the expand makes the result's shape
        m.output(d, s, w, k, p, kept, names=["d", "s", "w", "k", "p", "kept"])
    simplified = _simplified(m.module)
    assert _expands(m.module) == 7 and _expands(simplified) == 1
    rng = np.random.default_rng(11)
    feeds = {
        "x": np.concatenate([SPECIALS, rng.standard_normal(24).astype(np.float32)]).reshape(4, 8),
        "n": np.array([[0.0], [-0.0], [np.inf], [2.5]], np.float32),
        "row": np.concatenate([SPECIALS[:4], rng.standard_normal(4)]).astype(np.float32),
        "c": rng.integers(0, 2, (4, 8)).astype(bool),
    }
    want, got = run(m.module, feeds), run(simplified, feeds)
    for name in ("d", "s", "w", "k", "p", "kept"):
        assert _same(want[name], got[name]), name


def test_symbolic_dims_broadcast_the_same() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", ("b", "t", 3))
        mask = m.input("mask", ("b", 1, 3))
        y = m.mul(x, m.expand(mask, ("b", "t", 3)))
        m.output(y, names=["y"])
    simplified = _simplified(m.module)
    assert _expands(simplified) == 0
    rng = np.random.default_rng(5)
    for b, t in ((1, 1), (2, 5)):
        feeds = {
            "x": rng.standard_normal((b, t, 3)).astype(np.float32),
            "mask": rng.standard_normal((b, 1, 3)).astype(np.float32),
        }
        assert _same(run(m.module, feeds)["y"], run(simplified, feeds)["y"])
