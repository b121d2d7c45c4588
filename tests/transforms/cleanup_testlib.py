"""Shared helpers of the cleanup-pass tests: run pipelines, feed graphs, compare results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.diagnostics import verify_module
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, graph_params, make_context, module_graphs, parse_module
from rlx_compile.passmanager import parse_pipeline


def apply(pipeline: str, module: ModuleOp, *, verify: bool = True) -> ModuleOp:
    """Run ``pipeline`` on ``module`` in place (no per-pass instrumentation) and verify
    the result (``run`` verifies too, so callers that run the result may skip it)."""
    ctx = make_context()
    for p in parse_pipeline(pipeline):
        p.apply(ctx, module)
    if verify:
        verify_module(module)
    return module


def applied(pipeline: str, text: str) -> ModuleOp:
    return apply(pipeline, parse_module(text))


def declared(module: ModuleOp) -> tuple[set[str], set[str]]:
    """Input and param names declared by any graph of ``module``."""
    graphs = module_graphs(module)
    inputs = {leaf.name for g in graphs for leaf in graph_inputs(g)}
    params = {leaf.name for g in graphs for leaf in graph_params(g)}
    return inputs, params


def run_declared(
    module: ModuleOp, inputs: Mapping[str, Any], params: Mapping[str, Any]
) -> dict[str, np.ndarray]:
    """Run with the feeds ``module`` still declares (passes may remove params)."""
    names_in, names_p = declared(module)
    return run(
        module,
        {k: v for k, v in inputs.items() if k in names_in},
        {k: v for k, v in params.items() if k in names_p},
    )


def assert_same(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray]) -> None:
    """Exact for integer and bool results, within 1e-6 relative for floats (NaN = NaN)."""
    assert got.keys() == want.keys()
    for name, w in want.items():
        g = got[name]
        assert g.dtype == w.dtype and g.shape == w.shape, name
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=name)
        else:
            np.testing.assert_allclose(
                g.astype(np.float64), w.astype(np.float64), rtol=1e-6, atol=0, equal_nan=True,
                err_msg=name,
            )  # fmt: skip
