"""The passes that walk graphs, on graphs whose computation sits in control-flow regions
(``testing.regions``: the whole graph inside a ``mir.if``, or as the body of a
``mir.loop``): every output unchanged through the reference executor, and each pass doing
inside the region what it does to the graph itself."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.pipeline import CompilePipeline
from rlx_compile.testing.random_graphs import random_mir_graph
from rlx_compile.testing.regions import COND_INPUT, wrap_in_if, wrap_in_loop
from tests.fusion.helpers import assert_close
from tests.transforms.cleanup_testlib import apply, run_declared

PIPELINES = [
    "cse",
    "dce",
    "sccp",
    "constant-fold",
    "algebraic-simplify",
    "canonicalize",
    "algebraic-simplify,sccp,cse,dce,constant-fold",
    "fuse{target=cpu}",
    "fuse{target=metal}",
    "fuse{target=cuda}",
    "legalize{target=cpu}",
    "legalize-broadcast{target=wgpu}",
    "mark-elementwise-regions",
    "mark-elementwise-regions,unfuse-elementwise-regions",
    "auto-mixed-precision{dtype=f16}",
    "auto-mixed-precision{dtype=bf16 policy=all}",
    "promote-params",
    "shard{workers=2}",
]
WRAPS = {"if": wrap_in_if, "loop": wrap_in_loop}


def _feeds(wrap: str, inputs: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    if wrap == "if":
        return [{**inputs, COND_INPUT: np.array(c)} for c in (True, False)]
    return [dict(inputs)]


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("wrap", list(WRAPS))
@pytest.mark.parametrize("seed", range(3))
def test_outputs_are_unchanged(seed: int, wrap: str, pipeline: str) -> None:
    g = random_mir_graph(seed, num_ops=24, cleanup=True)
    want = run(g.module, g.inputs, g.params)
    module = apply(pipeline, WRAPS[wrap](g.module))
    rtol = 5e-2 if "precision" in pipeline else 1e-6
    for feeds in _feeds(wrap, g.inputs):
        assert_close(run_declared(module, feeds, g.params), want, rtol=rtol)


def _region_kinds(module: ModuleOp, *, inside: bool) -> Counter[str]:
    """Op kinds of the computation: inside control-flow regions, or anywhere."""
    kinds: Counter[str] = Counter()
    for op in module.walk():
        enclosing, in_region = op.parent_op(), False
        while enclosing is not None:
            in_region |= isinstance(enclosing, mir.ControlFlowOp)
            enclosing = enclosing.parent_op()
        if inside and not in_region:
            continue
        if isinstance(op, mir.InputOp | mir.ParamOp | mir.YieldOp | mir.ControlFlowOp):
            continue
        if op.dialect_name() in ("func", "builtin"):
            continue
        kinds[op.name] += 1
    return kinds


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("seed", range(3))
def test_a_pass_does_inside_a_loop_body_what_it_does_to_the_graph(seed: int, pipeline: str) -> None:
    g = random_mir_graph(seed, num_ops=24, cleanup=True)
    flat = apply(pipeline, g.module.clone())
    wrapped = apply(pipeline, wrap_in_loop(g.module))
    assert _region_kinds(wrapped, inside=True) == _region_kinds(flat, inside=False)


@pytest.mark.parametrize("pipeline", ["sccp", "constant-fold"])
@pytest.mark.parametrize("taken", [True, False])
def test_an_if_on_a_condition_that_becomes_constant_folds(pipeline: str, taken: bool) -> None:
    g = random_mir_graph(4, num_ops=24, cleanup=True)
    wrapped = wrap_in_if(g.module)
    inputs = [op for op in wrapped.walk() if isinstance(op, mir.InputOp)]
    cond = next(op for op in inputs if op.tensor_name.data == COND_INPUT)
    # The condition computed from constants: not(not(taken)).
    constant = mir.ConstantOp(np.array(not taken), mir.BOOL_SCALAR)
    flipped = mir.NotOp(constant.result)
    cond.parent_block().insert_op_before(constant, cond)  # type: ignore[union-attr]
    cond.parent_block().insert_op_before(flipped, cond)  # type: ignore[union-attr]
    cond.result.replace_all_uses_with(flipped.result)
    folded = apply(f"{pipeline},dce", wrapped)
    assert not [op for op in folded.walk() if isinstance(op, mir.IfOp)]
    flat = apply(f"{pipeline},dce", g.module.clone())
    assert _region_kinds(folded, inside=False) == _region_kinds(flat, inside=False)
    feeds = {**g.inputs, COND_INPUT: np.array(not taken)}  # the unused input stays
    assert_close(run_declared(folded, feeds, g.params), run(g.module, g.inputs, g.params))


@pytest.mark.parametrize("scheme", ["int8", "fp8"])
def test_quantisation_leaves_region_bodies_in_float(scheme: str) -> None:
    """Quantisation taps the graph's own matmuls and convs (calibration observes graph
    values); those of regions run in float, so outputs are the float ones exactly."""
    g = random_mir_graph(2, num_ops=24)
    wrapped = wrap_in_loop(g.module)
    batches = [dict(g.inputs)]
    options = {"calibration": batches, "calibration_params": g.params} if scheme == "int8" else {}
    result = CompilePipeline(target="cpu", quantize=scheme, **options).compile(wrapped)  # type: ignore[arg-type]
    names = [op.name for op in result.module.walk()]
    assert "mir.quantize" not in names and "mir.loop" in names
    want = run(g.module, g.inputs, g.params)
    assert_close(result.run(g.inputs, g.params), want, rtol=1e-6)


def test_legalization_lowers_unclaimed_ops_inside_regions() -> None:
    """cortex-m has no norm, GELU or attention kernels: legalize lowers them inside a loop
    body as it does in the graph, and leaves the loop itself (run by the executor)."""
    from rlx_compile import ModuleBuilder

    rng = np.random.default_rng(0)
    with ModuleBuilder("block") as m:
        x = m.input("x", (2, 4, 8))
        g = m.param("g", (8,))
        q = m.gelu(m.layer_norm(x, g, None))
        m.output(m.attention(m.reshape(q, (2, 1, 4, 8)), m.reshape(x, (2, 1, 4, 8)),
                             m.reshape(x, (2, 1, 4, 8))))  # fmt: skip
    inputs = {"x": rng.standard_normal((2, 4, 8)).astype(np.float32)}
    params = {"g": rng.standard_normal(8).astype(np.float32)}
    flat = apply("legalize{target=cortex-m}", m.module.clone())
    wrapped = apply("legalize{target=cortex-m}", wrap_in_loop(m.module))
    assert _region_kinds(wrapped, inside=True) == _region_kinds(flat, inside=False)
    assert "mir.layer_norm" not in _region_kinds(wrapped, inside=True)
    assert_close(run_declared(wrapped, inputs, params), run(m.module, inputs, params))


@pytest.mark.parametrize("wrap", list(WRAPS))
def test_param_hoist_and_the_shard_executor(wrap: str) -> None:
    """param-hoist moves param-only work out of the graph (not the regions, which read
    inputs); the shard executor runs region ops on the values of the graph."""
    from rlx_compile.shard.pieces import execute_with
    from rlx_compile.transforms.param_hoist import run_prepared

    g = random_mir_graph(5, num_ops=24, cleanup=True)
    want = run(g.module, g.inputs, g.params)
    for feeds in _feeds(wrap, g.inputs):
        hoisted = apply("param-hoist", WRAPS[wrap](g.module))
        assert_close(run_prepared(hoisted, feeds, g.params), want)
        assert_close(execute_with(WRAPS[wrap](g.module), feeds, g.params).outputs, want)
