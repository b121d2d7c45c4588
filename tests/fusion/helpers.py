"""Shared helpers of the fusion and legalization tests."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, graph_params, main_graph
from rlx_compile.legalization.driver import dispatched_ops
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.reports import collect_reports
from rlx_compile.targets import get_target


def apply(module: ModuleOp, pipeline: str) -> tuple[ModuleOp, list[object]]:
    """A copy of ``module`` after ``pipeline`` (verified after every pass), and the
    reports its passes published."""
    out = module.clone()
    with collect_reports() as reports:
        PassManager(parse_pipeline(pipeline)).run(out)
    return out, reports


def target_pipeline(target: str) -> str:
    """fuse -> cleanup -> legalize (-> legalize-broadcast): CompilePipeline's MIR stages."""
    tail = (
        f",legalize-broadcast{{target={target}}}"
        if get_target(target).broadcast != "native"
        else ""
    )
    return f"fuse{{target={target}}},canonicalize,cse,dce,legalize{{target={target}}}{tail}"


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in dispatched_ops(module)]


def illegal_ops(module: ModuleOp, target: str) -> list[str]:
    t = get_target(target)
    return [op.name for op in dispatched_ops(module) if not t.is_legal(op)]


def assert_close(
    got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray], rtol: float = 1e-5
) -> None:
    """Equal within ``rtol`` relative to each output's largest magnitude."""
    assert got.keys() == want.keys()
    for name, w in want.items():
        scale = float(np.abs(w).max()) if w.size else 1.0
        np.testing.assert_allclose(got[name], w, rtol=rtol, atol=rtol * scale, err_msg=name)


def assert_exact(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray]) -> None:
    assert got.keys() == want.keys()
    for name, w in want.items():
        np.testing.assert_array_equal(got[name], w, err_msg=name)


def run_pruned(
    module: ModuleOp, inputs: Mapping[str, np.ndarray], params: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Run with the leaves the module still declares (dce drops unused params)."""
    g = main_graph(module)
    keep_in = {x.name for x in graph_inputs(g)}
    keep_p = {p.name for p in graph_params(g)}
    return run(
        module,
        {k: v for k, v in inputs.items() if k in keep_in},
        {k: v for k, v in params.items() if k in keep_p},
    )


def same_outputs(
    before: ModuleOp,
    after: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    params: Mapping[str, np.ndarray],
    *,
    exact: bool = False,
    rtol: float = 1e-5,
) -> None:
    want = run(before, inputs, params)
    got = run(after, inputs, params)
    if exact:
        assert_exact(got, want)
    else:
        assert_close(got, want, rtol)
