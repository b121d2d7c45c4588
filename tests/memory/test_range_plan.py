"""Range plans (``CompilePipeline(dim_ranges=...)``, ``plan-memory{dim-ranges=...}``): one
plan serves every size in the ranges. It runs in its arena at sizes across the range,
equal to the MIR executor at each; plan-check passes at sampled sizes and finds what only
some sizes show; both executors refuse sizes outside the ranges."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile import ModuleBuilder
from rlx_compile.diagnostics import PassFailure
from rlx_compile.dialects import lir
from rlx_compile.interpreter import ExecutionError, run, run_arena
from rlx_compile.ir import parse_module
from rlx_compile.memory.plan_check import check_plan, range_samples
from rlx_compile.pipeline import CompileError, CompilePipeline


def _attention_like() -> ModuleBuilder:
    """Scores [batch, seq, seq] (bytes quadratic in seq), a softmax, a reshape view and
    a concat along a symbolic axis."""
    with ModuleBuilder("dyn") as m:
        x = m.input("x", ("batch", "seq", 16))
        q = m.matmul(x, m.param("wq", (16, 16)))
        k = m.matmul(x, m.param("wk", (16, 16)))
        scores = m.softmax(m.matmul(q, m.transpose(k, [0, 2, 1])), axis=-1)
        y = m.matmul(scores, x)
        m.output(m.concat([y, m.relu(y)], axis=1), names=["y"])
    return m


def _feeds(b: int, s: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(b * 1000 + s)
    params = {n: rng.standard_normal((16, 16)).astype(np.float32) for n in ("wq", "wk")}
    return {"x": rng.standard_normal((b, s, 16)).astype(np.float32)}, params


def test_a_range_plan_runs_at_every_size_in_range() -> None:
    m = _attention_like()
    result = CompilePipeline(dim_ranges={"batch": (1, 3), "seq": (1, 64)}).compile(m.module)
    graph = result.lir
    assert graph is not None and graph.ranges == {"batch": (1, 3), "seq": (1, 64)}
    assert result.pipeline.endswith("plan-check)")
    # One arena for all: at least the scores at their largest (3 * 64 * 64 f32).
    assert graph.arena_bytes >= 3 * 64 * 64 * 4
    report = check_plan(graph)
    assert report.is_clean() and len(report.sizes) > 4
    for b, s in ((1, 1), (3, 64), (2, 17), (1, 63)):
        inputs, params = _feeds(b, s)
        want = run(m.module, inputs, params)["y"]
        np.testing.assert_array_equal(run_arena(result.module, inputs, params)["y"], want)
        np.testing.assert_array_equal(result.run(inputs, params)["y"], want)
        np.testing.assert_array_equal(run(result.module, inputs, params)["y"], want)
    inputs, params = _feeds(1, 65)
    for execute in (run_arena, run):
        with pytest.raises(ExecutionError, match=r"dim 'seq' is 65, outside the range 1\.\.64"):
            execute(result.module, inputs, params)


def test_ranges_and_exact_sizes_mix_and_unranged_dims_are_named() -> None:
    m = _attention_like()
    both = CompilePipeline(dim_bindings={"batch": 2}, dim_ranges={"seq": (4, 8)})
    graph = both.compile(m.module).lir
    assert graph is not None and graph.ranges == {"seq": (4, 8)}
    with pytest.raises(CompileError, match=r"symbolic dims \['batch'\] need sizes"):
        CompilePipeline(dim_ranges={"seq": (1, 8)}).compile(m.module)


def test_samples_cover_the_ends_and_the_inside_of_each_range() -> None:
    samples = range_samples({"a": (1, 9), "b": (5, 5)})
    assert samples[:2] == [{"a": 1, "b": 5}, {"a": 9, "b": 5}]
    assert sorted(s["a"] for s in samples) == [1, 3, 5, 7, 9]
    assert range_samples({"a": (2, 3)}) == [{"a": 2}, {"a": 3}]


def test_plan_check_finds_sizes_where_the_graph_has_no_meaning() -> None:
    # A 3-wide window over h rows has h - 2 outputs: h = 1 or 2 is in the range but not
    # a size the graph can run at.
    with ModuleBuilder("conv") as m:
        x = m.input("x", (1, 1, "h", 4))
        m.output(m.conv(x, m.param("w", (1, 1, 3, 3))), names=["y"])
    result = CompilePipeline(dim_ranges={"h": (3, 16)}).compile(m.module)
    assert result.lir is not None and check_plan(result.lir).is_clean()
    with pytest.raises(PassFailure, match=r"\[bad-size\] .*dim 'h - 2' is negative at h=1"):
        CompilePipeline(dim_ranges={"h": (1, 16)}).compile(m.module)


def test_plan_check_finds_a_slot_too_small_at_some_size() -> None:
    # The verifier refuses such a slot; the checker, which reads unverified plans too,
    # finds it on its own at the sampled sizes.
    text = """
    lir.graph @g arena 512 align 64 dims [1 <= seq <= 64] inputs ["x"] params [] outputs ["y"] {
      %x = mir.input "x" {slot = #lir.slot<0, 256>} : !rlx.tensor<[seq], f32>
      %y = mir.exp %x {slot = #lir.slot<256, 128>} : !rlx.tensor<[seq], f32>
      lir.return %y : !rlx.tensor<[seq], f32>
    }"""
    graph = next(op for op in parse_module(text).ops if isinstance(op, lir.GraphOp))
    report = check_plan(graph)
    assert [f.kind for f in report.findings] == ["slot-overflow"]
    assert "256 bytes at seq=64 in a 128-byte slot" in report.findings[0].detail
