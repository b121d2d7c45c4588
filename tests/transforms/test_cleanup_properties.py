"""Property tests of the cleanup passes on random MIR DAGs (``random_mir_graph`` with its
cleanup families: i32 chains, constant subexpressions, constant-condition selects,
identity views, param-only subexpressions), about 5 to 200 ops each. On every graph,
every pass keeps every output (exact for integers, 1e-6 relative for floats) and a
second run of it changes nothing.

One hypothesis test draws 300 seeds at full size (``--full-size``; 50 by default: it is
marked slow), derandomised and all distinct, and puts each graph through every pass, so
that a graph is built and its reference outputs computed once; a failure names the pass.
Everything else follows from the seed -- the graph size (2 to 70 generator steps,
uniformly), the outlining, which params to bind: hypothesis, given more to draw, repeats
seeds while varying the rest, and draws sizes near their minimum a quarter of the time."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlx_compile.diagnostics import collect_warnings
from rlx_compile.interpreter import run
from rlx_compile.ir import print_module
from rlx_compile.params import save_bindings
from rlx_compile.pipeline import CLEANUP_SEQUENCE
from rlx_compile.testing.random_graphs import RandomGraph, outline, random_mir_graph
from rlx_compile.transforms.param_hoist import run_prepared
from tests.sizes import sized
from tests.transforms.cleanup_testlib import apply, assert_same, declared, run_declared

EXAMPLES = sized(50, 300)

SIMPLE_PASSES = [
    "constant-fold",
    "algebraic-simplify",
    "algebraic-simplify{assume-finite=true}",
    "sccp",
    "cse",
    "dce",
    "numeric-lint",
]

Outputs = dict[str, np.ndarray]


@contextmanager
def checking(what: str) -> Iterator[None]:
    """Name the pass in the message of a failure raised inside the block."""
    try:
        yield
    except Exception as err:
        raise AssertionError(f"{what}: {type(err).__name__}: {err}") from err


def idempotent(pipeline: str, module: object, once: str) -> None:
    assert print_module(apply(pipeline, module, verify=False)) == once, "second run changed IR"  # type: ignore[arg-type]


def check_simple(pipeline: str, g: RandomGraph, want: Outputs) -> None:
    module = apply(pipeline, g.module.clone(), verify=False)
    once = print_module(module)
    assert_same(run_declared(module, g.inputs, g.params), want)
    idempotent(pipeline, module, once)


def check_sequence(g: RandomGraph, want: Outputs) -> None:
    module = apply(",".join(CLEANUP_SEQUENCE), g.module.clone(), verify=False)
    assert_same(run_declared(module, g.inputs, g.params), want)


def check_lint_is_silent(g: RandomGraph, want: Outputs) -> None:
    with collect_warnings() as found:
        apply("numeric-lint", g.module.clone(), verify=False)
    assert found == [], [w.line() for w in found]


def check_inline(g: RandomGraph, want: Outputs, seed: int, kind: str) -> None:
    outlined = outline(g.module, seed, kind)
    assert_same(run(outlined, g.inputs, g.params), want)
    module = apply("inline", outlined, verify=False)
    once = print_module(module)
    assert "func.call" not in once and "hir." not in once
    assert_same(run(module, g.inputs, g.params), want)
    idempotent("inline", module, once)


def check_param_specialize(g: RandomGraph, want: Outputs, pick: random.Random) -> None:
    bound = {n: a for n, a in sorted(g.params.items()) if pick.random() < 0.5}
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "bound.npz"
        save_bindings(path, bound)
        module = apply(f'param-specialize{{bindings="{path}"}}', g.module.clone(), verify=False)
    assert not declared(module)[1] & set(bound)
    rest = {n: a for n, a in g.params.items() if n not in bound}
    assert_same(run(module, g.inputs, rest), want)
    idempotent("param-specialize", module, print_module(module))


def check_promote_params(g: RandomGraph, want: Outputs, pick: random.Random) -> None:
    to_params = [n for n in sorted(g.inputs) if pick.random() < 0.5]
    to_inputs = [n for n in sorted(g.params) if pick.random() < 0.5]
    opts = [f"min-elements={pick.randint(1, 64)}"]
    if to_params:
        opts.append("inputs=" + ",".join(to_params))
    if to_inputs:
        opts.append("params=" + ",".join(to_inputs))
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "consts.npz"
        spec = "promote-params{" + " ".join([*opts, f'export="{path}"']) + "}"
        module = apply(spec, g.module.clone(), verify=False)
        with np.load(path) as archive:
            consts = dict(archive)
    leaves = {**g.inputs, **g.params}
    inputs = {n: leaves[n] for n in [*g.inputs, *to_inputs] if n not in to_params}
    params = {n: leaves[n] for n in [*g.params, *to_params] if n not in to_inputs}
    assert declared(module) == (set(inputs), set(params) | set(consts))
    assert_same(run(module, inputs, {**params, **consts}), want)


def check_param_hoist(g: RandomGraph, want: Outputs) -> None:
    module = apply("param-hoist", g.module.clone(), verify=False)
    once = print_module(module)
    assert_same(run_prepared(module, g.inputs, g.params), want)
    idempotent("param-hoist", module, once)


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**31 - 1))
def test_every_pass_keeps_values_and_is_idempotent(seed: int) -> None:
    g = random_mir_graph(seed, 2 + seed % 69, cleanup=True)
    kind = ("call", "region")[seed % 2]
    pick = random.Random(seed)
    want = run(g.module, g.inputs, g.params)
    checks: list[tuple[str, Callable[[], None]]] = [
        *((p, lambda p=p: check_simple(p, g, want)) for p in SIMPLE_PASSES),  # type: ignore[misc]
        ("cleanup sequence", lambda: check_sequence(g, want)),
        ("numeric-lint warnings", lambda: check_lint_is_silent(g, want)),
        (f"inline ({kind})", lambda: check_inline(g, want, seed, kind)),
        ("param-specialize", lambda: check_param_specialize(g, want, pick)),
        ("promote-params", lambda: check_promote_params(g, want, pick)),
        ("param-hoist", lambda: check_param_hoist(g, want)),
    ]
    for name, check in checks:
        with checking(name):
            check()
