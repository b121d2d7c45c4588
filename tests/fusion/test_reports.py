"""Reports and switches: CompilePipeline runs fusion and legalization for its target and
keeps both reports; RLX_DISPATCH_REPORT / RLX_FUSION_REPORT print them;
RLX_KERNEL_DISPATCH (and rlx-opt's flags) pick the dispatch policy."""

from __future__ import annotations

import numpy as np
import pytest

from examples.build_examples import decoder_block, small_cnn
from rlx_compile import CompilePipeline, ModuleBuilder, env
from rlx_compile.diagnostics import PassFailure, RlxError
from rlx_compile.interpreter import run
from rlx_compile.legalization import DispatchPolicy, resolve_policy
from rlx_compile.pipeline import CompileError
from rlx_compile.targets import TARGET_NAMES
from rlx_compile.tools import rlx_opt
from tests.fusion.helpers import assert_close
from tests.transforms.test_lowering_numeric import random_feeds


@pytest.mark.parametrize("target", TARGET_NAMES)
@pytest.mark.parametrize("build", [decoder_block, small_cnn], ids=["decoder", "cnn"])
def test_compile_pipeline_fuses_legalizes_and_runs_in_the_arena(target: str, build) -> None:  # type: ignore[no-untyped-def]
    module = build(policy="fusable")
    result = CompilePipeline(target=target).compile(module)
    assert f"fuse{{target={target}}}" in result.pipeline
    assert f"legalize{{target={target}}}" in result.pipeline
    assert result.fusion_report is not None and result.fusion_report.target == target
    assert result.dispatch_report is not None and result.dispatch_report.compile_ready
    assert result.lir is not None
    inputs, params = random_feeds(module)
    assert_close(result.run(inputs, params), run(module, inputs, params))


def test_pipeline_stage_order_and_switches() -> None:
    pipe = CompilePipeline(target="wgpu").pipeline
    order = [
        "lower-hir-to-mir", "fuse{target=wgpu}", "legalize{target=wgpu}",
        "legalize-broadcast{target=wgpu}", "plan-memory",
    ]  # fmt: skip
    positions = [pipe.index(p) for p in order]
    assert positions == sorted(positions)
    assert "legalize-broadcast" not in CompilePipeline(target="cuda").pipeline
    bare = CompilePipeline(target="cpu", fuse=False, legalize=False).pipeline
    assert "fuse" not in bare and "legalize" not in bare
    assert "width=f32-uniform" in pipe


def test_kernel_dispatch_option_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "dispatch=" not in CompilePipeline().pipeline  # prefer-native is the default
    pipe = CompilePipeline(kernel_dispatch="common-ir").pipeline
    assert "legalize{target=cpu dispatch=common-ir}" in pipe
    monkeypatch.setenv("RLX_KERNEL_DISPATCH", "ForceNative")  # an RLX spelling
    assert resolve_policy() is DispatchPolicy.NATIVE_ONLY
    assert "dispatch=native-only" in CompilePipeline().pipeline
    monkeypatch.setenv("RLX_KERNEL_DISPATCH", "sometimes")
    with pytest.raises(CompileError, match="RLX_KERNEL_DISPATCH 'sometimes' is not one of"):
        CompilePipeline()
    monkeypatch.delenv("RLX_KERNEL_DISPATCH")
    with pytest.raises(CompileError, match="kernel dispatch policy 'fast' is not one of"):
        CompilePipeline(kernel_dispatch="fast")


def group_norm_model():  # type: ignore[no-untyped-def]
    with ModuleBuilder("gn") as m:
        x, g, b = m.input("x", (1, 4, 2, 2)), m.param("g", (4,)), m.param("b", (4,))
        m.output(m.group_norm(x, g, b, groups=2), names=["y"])
    return m.module


def test_dispatch_report_printed_after_compilation(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    CompilePipeline(target="wgpu").compile(group_norm_model())
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("RLX_DISPATCH_REPORT", "1")
    result = CompilePipeline(target="wgpu").compile(group_norm_model())
    err = capsys.readouterr().err
    assert result.dispatch_report is not None
    assert err == result.dispatch_report.render() + "\n"
    assert 'target "wgpu"' in err and "- mir.group_norm x1" in err
    monkeypatch.setenv("RLX_DISPATCH_REPORT", "off")
    monkeypatch.setenv("RLX_FUSION_REPORT", "yes")
    CompilePipeline(target="wgpu").compile(group_norm_model())
    assert capsys.readouterr().err.startswith('fusion report — target "wgpu"')


def test_failed_legalization_still_reports(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RLX_DISPATCH_REPORT", "1")
    with pytest.raises(PassFailure, match=r"mir.group_norm x1 \(not claimed"):
        CompilePipeline(target="wgpu", kernel_dispatch="native-only").compile(group_norm_model())
    assert "compile will fail" in capsys.readouterr().err


def test_rlx_opt_flags(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    from rlx_compile.ir import print_module

    path = tmp_path / "gn.mlir"
    path.write_text(print_module(group_norm_model()))
    assert rlx_opt.run([str(path), "-p", "legalize{target=wgpu}", "--dispatch-report"]) == 0
    assert "common-ir:\n    - mir.group_norm x1" in capsys.readouterr().err
    with pytest.raises(PassFailure, match=r"mir\.group_norm x1"):
        rlx_opt.run([str(path), "-p", "legalize{target=wgpu}", "--kernel-dispatch", "native-only"])
    with pytest.raises(RlxError, match="--kernel-dispatch 'x' is not one of"):
        rlx_opt.run([str(path), "-p", "legalize", "--kernel-dispatch", "x"])


@pytest.mark.parametrize(
    ("text", "value"),
    [(None, False), ("", False), ("0", False), ("off", False), ("No", False), ("1", True),
     ("true", True), ("ON", True), ("007", True), ("000", False), ("anything", True)],
)  # fmt: skip
def test_env_flag_rules(monkeypatch: pytest.MonkeyPatch, text: str | None, value: bool) -> None:
    if text is None:
        monkeypatch.delenv("RLX_SOME_FLAG", raising=False)
    else:
        monkeypatch.setenv("RLX_SOME_FLAG", text)
    assert env.flag("SOME_FLAG") is value
    with env.overridden(SOME_FLAG="0" if value else "1"):  # code overrides win
        assert env.flag("RLX_SOME_FLAG") is (not value)
    assert env.flag("SOME_FLAG") is value


def test_fusion_report_text() -> None:
    result = CompilePipeline(target="cuda", plan_memory=False).compile(
        decoder_block(policy="fusable")
    )
    report = result.fusion_report
    assert report is not None
    assert report.summary_line() == (
        "ops=36->38 elementwise_region=1 residual_rms_norm=1 shared_input_matmul=2 missed=2"
    )
    text = report.render().splitlines()
    assert text[0] == 'fusion report — target "cuda": 36 ops -> 38 ops'
    assert "    - shared_input_matmul x2 (5 ops absorbed)" in text
    inputs, params = random_feeds(decoder_block())
    got = result.run(inputs, params)["y"]
    want = run(decoder_block(), inputs, params)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_rlx_compile_summary_lists_fusions_and_dispatch(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from rlx_compile.tools import compile as rlx_compile_tool
    from tests.conftest import REPO

    model = str(REPO / "examples" / "decoder_block.mlir")
    argv = [model, "--target", "cortex-m", "--policy", "fusable"]
    assert rlx_compile_tool.run([*argv, "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["fusion"] == {"shared_input_matmul": 2}
    assert len(summary["missed_fusions"]) == 3
    assert summary["dispatch_kinds"]["common-ir"] == [
        "mir.attention", "mir.rms_norm", "mir.rope", "mir.silu"
    ]  # fmt: skip
    # Op counts per path: every kind on the common-IR path has at least one op there.
    assert summary["dispatch"]["common_ir"] >= len(summary["dispatch_kinds"]["common-ir"])
