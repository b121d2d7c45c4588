"""Property test: on random MIR graphs, fusion and legalization for every target keep the
reference executor's outputs, and leave only legal ops (or, for targets with element
type limits, only ops of element types the target lacks)."""

from __future__ import annotations

import pytest

from rlx_compile.interpreter import run
from rlx_compile.legalization import prepare_graph_for_backend_with_report
from rlx_compile.targets import TARGET_NAMES
from rlx_compile.testing.random_graphs import random_mir_graph
from tests.fusion.helpers import apply, assert_close, run_pruned
from tests.sizes import sized


def check(seed: int, num_ops: int, target: str) -> None:
    g = random_mir_graph(seed, num_ops=num_ops)
    fused, _ = apply(g.module, f"fuse{{target={target}}},canonicalize,cse,dce")
    legal, report = prepare_graph_for_backend_with_report(fused, target)
    # The random graphs round-trip through f64 casts: wgpu and cortex-m have no f64.
    assert {o.reason for o in report.offenders} <= {"f64 tensors are not supported"}
    want = run(g.module, g.inputs, g.params)
    assert_close(run_pruned(fused, g.inputs, g.params), want)
    assert_close(run_pruned(legal, g.inputs, g.params), want)


@pytest.mark.parametrize("target", TARGET_NAMES)
@pytest.mark.parametrize("seed", range(12))
def test_fuse_and_legalize_random_graph(seed: int, target: str) -> None:
    check(seed, 24, target)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cuda", "wgpu", "cortex-m"])
@pytest.mark.parametrize("seed", range(100, 100 + sized(3, 12)))
def test_fuse_and_legalize_larger_random_graph(seed: int, target: str) -> None:
    check(seed, 120, target)
