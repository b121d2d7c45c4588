"""One-hot encodings of single columns concatenated along their categories merge into
one multi-column ``mir.one_hot_encoder`` (algebraic-simplify): on random columns (in
any order, repeated, negative indices), categories (listed twice within a column, shared
between columns) and codes (some in no category) it computes the concat's values bit
for bit through the reference executor, and the C kernel computes the same."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from rlx_compile import CompilePipeline, ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.passmanager import PassManager, parse_pipeline


def _simplified(module: ModuleOp) -> ModuleOp:
    out = module.clone()
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(out)
    return out


def _random_graph(rng: np.random.Generator, rows: int, width: int) -> ModuleOp:
    with ModuleBuilder("g") as m:
        x = m.input("x", (rows, width), "i64")
        encoded = []
        for _ in range(int(rng.integers(2, 6))):
            column = int(rng.integers(-width, width))
            picked = m.emit(mir.GatherOp(x, m.constant(np.array([column])), 1)).results[0]
            categories = rng.integers(-2, 5, size=int(rng.integers(1, 5))).tolist()
            encoded.append(m.emit(mir.OneHotEncoderOp(picked, categories)).results[0])
        m.output(m.concat(encoded, 2), names=["y"])
    return m.module


@pytest.mark.parametrize("seed", range(12))
def test_merged_encoder_computes_the_concat(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows, width = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    module = _random_graph(rng, rows, width)
    merged = _simplified(module)
    encoders = [op for op in merged.walk() if isinstance(op, mir.OneHotEncoderOp)]
    assert len(encoders) == 1 and encoders[0].props().get("column_starts") is not None
    assert not [op for op in merged.walk() if isinstance(op, mir.ConcatOp)]
    codes = rng.integers(-3, 6, size=(rows, width)).astype(np.int64)
    want = run(module, {"x": codes})["y"]
    np.testing.assert_array_equal(run(merged, {"x": codes})["y"], want)
    compiled = CompilePipeline(target="cpu", keep_stages=False).compile(module)
    np.testing.assert_array_equal(compiled.build().run({"x": codes})["y"], want)
