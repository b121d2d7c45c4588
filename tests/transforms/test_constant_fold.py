"""constant-fold on graphs whose every leaf is a constant: every output becomes a
constant (once dce drops the dead code) holding exactly the reference result, for every
op family in the examples and random graphs (fused ops, attention, rope, conv, pooling,
norms, multi-result ops)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from examples.build_examples import decoder_block, small_cnn
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.ir import main_graph
from rlx_compile.params import save_bindings
from rlx_compile.testing.random_graphs import random_mir_graph
from tests.transforms.cleanup_testlib import apply, assert_same
from tests.transforms.test_lowering_numeric import random_feeds


def cases() -> list[tuple[str, ModuleOp, dict, dict]]:  # type: ignore[type-arg]
    out = []
    for seed in range(8):
        g = random_mir_graph(seed, 30, cleanup=True)
        out.append((f"random{seed}", g.module, g.inputs, g.params))
    for policy in ("direct", "fusable"):
        for name, build in (("decoder", decoder_block), ("cnn", small_cnn)):
            module = apply(f"lower-hir-to-mir{{policy={policy}}}", build())
            out.append((f"{name}-{policy}", module, *random_feeds(module)))
    return out


CASES = cases()


@pytest.mark.parametrize(("name", "module", "inputs", "params"), CASES, ids=[c[0] for c in CASES])
def test_all_constant_graphs_fold_to_the_reference(
    name: str,
    module: ModuleOp,
    inputs: dict,
    params: dict,
    tmp_path: Path,  # type: ignore[type-arg]
) -> None:
    want = run(module, inputs, params)
    path = tmp_path / "all.npz"
    save_bindings(path, {**inputs, **params})
    names = ",".join(sorted(inputs))
    folded = apply(
        f'promote-params{{inputs={names}}},param-specialize{{bindings="{path}"}},'
        "constant-fold{max-elements=100000000},dce",
        module.clone(),
    )
    block = main_graph(folded).regions[0].block
    assert all(isinstance(op, mir.ConstantOp) for op in block.ops if op is not block.last_op)
    assert_same(run(folded, {}), want)


def test_max_elements_caps_each_result() -> None:
    def graph(n: int) -> ModuleOp:
        from rlx_compile import ModuleBuilder

        with ModuleBuilder("g") as m:
            big = m.constant(np.arange(n, dtype=np.float32))
            m.output(m.sum(m.exp(big), axes=0), names=["s"])
        return m.module

    # exp's 8-element result exceeds the cap, so the sum of it is not known either.
    capped = apply("constant-fold{max-elements=4}", graph(8))
    assert [op.name for op in main_graph(capped).walk()][1:-1] == [
        "mir.constant", "mir.exp", "mir.reduce_sum",
    ]  # fmt: skip
    whole = apply("constant-fold{max-elements=8}", graph(8))
    np.testing.assert_array_equal(run(whole, {})["s"], run(graph(8), {})["s"])
    assert [op.name for op in main_graph(whole).walk()][1:-1] == ["mir.constant"]
