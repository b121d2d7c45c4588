"""The cleanup passes in CompilePipeline: the default sequence, param bindings, lint
warnings."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest

from examples.build_examples import decoder_block
from rlx_compile import CompileOptions, CompilePipeline, ModuleBuilder
from rlx_compile.diagnostics import PassFailure
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_params, main_graph
from rlx_compile.params import save_bindings
from rlx_compile.passmanager import describe_passes
from rlx_compile.pipeline import CLEANUP_SEQUENCE, CompileError, cleanup_passes
from tests.transforms.test_lowering_numeric import random_feeds

CLEANUP_NAMES = [
    "constant-fold", "algebraic-simplify", "sccp", "cse", "dce", "inline", "promote-params",
    "param-specialize", "param-hoist", "numeric-lint",
]  # fmt: skip


def names(pipe: CompilePipeline) -> list[str]:
    return [p.name for p in pipe.passes]


def test_default_pipeline_runs_the_rlx_cleanup_sequence_before_and_after_fusion() -> None:
    got = names(CompilePipeline())
    assert CLEANUP_SEQUENCE == ("algebraic-simplify", "sccp", "cse", "dce", "constant-fold")
    assert got[:7] == ["lower-hir-to-mir", "inline", *CLEANUP_SEQUENCE]
    fuse = got.index("fuse")
    # cpu runs integer kernels: a quantised model's come between fusion and its cleanup
    assert got[fuse + 1] == "quant-to-integer"
    assert got[fuse + 2 : fuse + 7] == list(CLEANUP_SEQUENCE)
    assert fuse + 7 <= got.index("plan-memory")
    cuda = names(CompilePipeline(target="cuda"))
    assert cuda[cuda.index("fuse") + 1 : cuda.index("fuse") + 6] == list(CLEANUP_SEQUENCE)
    assert "algebraic-simplify" not in names(CompilePipeline(cleanup=False))
    # Without fusion, one cleanup run; and one after quant-to-integer where it runs.
    assert names(CompilePipeline(fuse=False, target="cuda")).count("sccp") == 1
    unfused = names(CompilePipeline(fuse=False))
    assert unfused.count("sccp") == 2
    assert unfused[unfused.index("quant-to-integer") + 1 :][:5] == list(CLEANUP_SEQUENCE)


def test_cleanup_passes_after_fusion_is_the_sequence_alone() -> None:
    options = CompileOptions(param_bindings="w.npz", lint_numerics=True)
    assert cleanup_passes(options, first=False) == list(CLEANUP_SEQUENCE)
    assert cleanup_passes(options)[:2] == ['param-specialize{bindings="w.npz"}', "numeric-lint"]
    with pytest.raises(CompileError, match="need a file"):
        cleanup_passes(CompileOptions(param_bindings={"w": np.zeros(2)}))


def test_every_cleanup_pass_is_listed_as_ours() -> None:
    lines = describe_passes()
    for name in CLEANUP_NAMES:
        (line,) = [ln for ln in lines if ln.split("{")[0].split()[0] == name]
        assert "[xdsl]" not in line, line


def test_param_bindings_bake_params_in_and_run_with_all_params() -> None:
    module = decoder_block()
    inputs, params = random_feeds(module)
    want = run(module, inputs, params)["y"]
    bound = {name: params[name] for name in ("wq", "wk", "ln1")}
    pipe = CompilePipeline(param_bindings=bound, plan_memory=False)
    path = Path(pipe.pipeline.split('bindings="')[1].split('"')[0])
    assert path.is_file()
    result = pipe.compile(module)
    left = {p.name for p in graph_params(main_graph(result.module))}
    assert left.isdisjoint(bound) and "wv" in left
    # Baking params in changes no bit of the compiled result, and params the compile
    # baked in may still be passed. (The direct lowering's fused matmuls differ from the
    # HIR reference in the last bits, as test_pipeline's tolerance says.)
    plain = CompilePipeline(plan_memory=False).compile(module).run(inputs, params)["y"]
    np.testing.assert_array_equal(result.run(inputs, params)["y"], plain)
    np.testing.assert_allclose(plain, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    planned = CompilePipeline(param_bindings=bound).compile(module)
    np.testing.assert_array_equal(planned.run(inputs, params)["y"], plain)
    del pipe, result
    gc.collect()
    assert not path.exists()


def test_param_bindings_from_a_file_and_bf16(tmp_path: Path) -> None:
    import ml_dtypes

    with ModuleBuilder("half") as m:
        x, w = m.input("x", (2, 2), "bf16"), m.param("w", (2, 2), "bf16")
        m.output(m.matmul(x, w), names=["y"])
    w = np.array([[1, 2], [3, 4]], ml_dtypes.bfloat16)
    x = np.eye(2, dtype=ml_dtypes.bfloat16)
    path = tmp_path / "w.npz"
    save_bindings(path, {"w": w})  # np.savez stores bf16 as raw 2-byte records
    for bindings in (str(path), {"w": w}):
        result = CompilePipeline(param_bindings=bindings).compile(m.module)
        assert graph_params(result.module.ops.first) == []  # type: ignore[arg-type]
        np.testing.assert_array_equal(result.run({"x": x})["y"], w)


def test_param_binding_errors_are_one_line() -> None:
    with pytest.raises(PassFailure, match=r"no param named 'nope'"):
        CompilePipeline(param_bindings={"nope": np.zeros(2, np.float32)}).compile(decoder_block())


def test_lint_numerics_reports_warnings_with_locations() -> None:
    with ModuleBuilder("lint") as m:
        x = m.input("x", (2,))
        inf = m.div(m.constant([1.0, 1.0]), m.constant([0.0, 2.0]))
        m.output(m.add(x, inf), names=["y"])
    result = CompilePipeline(lint_numerics=True, plan_memory=False).compile(m.module)
    (warning,) = result.warnings
    assert warning.line() == (
        "@lint: warning: 'mir.div' op constant subgraph folds to a non-finite value "
        "[pos-inf]; fix: guard the denominator against 0"
    )
    assert CompilePipeline(plan_memory=False).compile(m.module).warnings == []


def test_param_bindings_survive_a_later_specialization() -> None:
    with ModuleBuilder("dyn") as m:
        x = m.input("x", ("seq", 4))
        w, b = m.param("w", (4, 4)), m.param("b", (4,))
        m.output(m.add(m.matmul(x, w), b), names=["y"])
    w_value = np.eye(4, dtype=np.float32) * 2
    result = CompilePipeline(param_bindings={"w": w_value}, plan_memory=False).compile(m.module)
    planned = result.specialize({"seq": 3})
    assert planned.lir is not None
    x, b = np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(planned.run({"x": x}, {"w": w_value, "b": b})["y"], 2 + b + 0 * x)
