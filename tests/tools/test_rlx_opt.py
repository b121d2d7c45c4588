"""rlx-opt as users run it: exit codes, one-line errors, dump files, reproducers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RLX_OPT = str(Path(sys.executable).parent / "rlx-opt")
EXAMPLE = REPO / "examples" / "decoder_block.mlir"
LOWER = "builtin.module(lower-hir-to-mir,canonicalize,cse,dce)"


def rlx_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RLX_OPT, *args], capture_output=True, text=True, input=stdin, check=False
    )


def test_lowers_the_example_decoder_block() -> None:
    r = rlx_opt(str(EXAMPLE), "-p", LOWER)
    assert r.returncode == 0, r.stderr
    assert "hir." not in r.stdout
    assert "mir.fused_attention_block" in r.stdout
    # --pass-pipeline= spelling and a flat list work the same way.
    r2 = rlx_opt(str(EXAMPLE), f"--pass-pipeline={LOWER}")
    r3 = rlx_opt(str(EXAMPLE), "-p", "lower-hir-to-mir,canonicalize,cse,dce")
    assert r.stdout == r2.stdout == r3.stdout


def test_ir_dump_dir_files_replay(tmp_path: Path) -> None:
    dump = tmp_path / "dumps"
    r = rlx_opt(
        str(EXAMPLE), "-p", LOWER, "--ir-dump-dir", str(dump), "-o", str(tmp_path / "o.mlir")
    )
    assert r.returncode == 0, r.stderr
    files = sorted(p.name for p in dump.iterdir())
    assert files == [
        "00_input.mlir",
        "01_lower-hir-to-mir.mlir",
        "02_canonicalize.mlir",
        "03_cse.mlir",
        "04_dce.mlir",
    ]
    for index, name in enumerate(files[1:], start=1):
        text = (dump / name).read_text()
        header = text.splitlines()[1]
        assert header.startswith(f"// pass {index} of 4; replay: rlx-opt {files[index - 1]} -p ")
        # Replaying the recorded command on the previous dump reproduces this dump.
        spec = header.split(" -p ", 1)[1].strip("'")
        replay = rlx_opt(str(dump / files[index - 1]), "-p", spec)
        assert replay.returncode == 0, replay.stderr
        assert replay.stdout == "\n".join(text.splitlines()[2:]) + "\n"
    assert "policy=keep" in (dump / files[1]).read_text().splitlines()[0]


def test_print_ir_and_timing() -> None:
    r = rlx_opt(str(EXAMPLE), "-p", "lower-hir-to-mir,cse", "--print-ir-after-change", "--timing")
    assert r.returncode == 0
    assert "IR Dump After lower-hir-to-mir{policy=keep}" in r.stderr
    assert "IR Dump After cse" not in r.stderr  # cse changes nothing here
    assert "Execution time report" in r.stderr and "Total" in r.stderr
    r = rlx_opt(str(EXAMPLE), "-p", "cse", "--print-ir-before-all", "--print-ir-after-all")
    assert "IR Dump Before cse" in r.stderr and "IR Dump After cse" in r.stderr


def test_list_passes() -> None:
    r = rlx_opt("--list-passes")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert any(line.startswith("lower-hir-to-mir{policy=keep}") for line in lines)
    assert any(line.startswith("cse") for line in lines)


@pytest.mark.parametrize(
    ("args", "stdin", "expected"),
    [
        (["missing.mlir"], None, "error: cannot read 'missing.mlir'"),
        (
            [str(EXAMPLE), "-p", "lower-hir-to-mri"],
            None,
            "unknown pass 'lower-hir-to-mri' (did you mean 'lower-hir-to-mir'?)",
        ),
        (
            [str(EXAMPLE), "-p", "lower-hir-to-mir{polcy=direct}"],
            None,
            "bad options for pass 'lower-hir-to-mir'",
        ),
        ([str(EXAMPLE), "-p", "func.func(cse)"], None, "op anchor 'func.func' is not supported"),
        (
            ["-"],
            'func.func @f() {\n  %a = mir.inptu "a" : !rlx.tensor<[2], f32>\n}\n',
            "<stdin>:2:18: error: Operation mir.inptu is not registered",
        ),
    ],
)
def test_errors_are_one_line(args: list[str], stdin: str | None, expected: str) -> None:
    r = rlx_opt(*args, stdin=stdin)
    assert r.returncode == 1
    assert expected in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


def test_no_output_file_on_failure(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        "func.func @f() -> !rlx.tensor<[2, 4], f32> {\n"
        '  %a = mir.input "a" : !rlx.tensor<[2, 4], f32>\n'
        '  %b = mir.input "b" : !rlx.tensor<[4, 3], f32>\n'
        "  %c = mir.matmul %a, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>)"
        " -> !rlx.tensor<[2, 4], f32>\n"
        "  func.return %c : !rlx.tensor<[2, 4], f32>\n}\n"
    )
    out = tmp_path / "out.mlir"
    r = rlx_opt(str(bad), "-o", str(out))
    assert r.returncode == 1
    assert r.stderr.strip().endswith(
        "bad.mlir:4:3: error: 'mir.matmul' op result type !rlx.tensor<[2, 4], f32> does not "
        "match the inferred type !rlx.tensor<[2, 3], f32>"
    )
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]


def test_reproducer_on_pass_failure(tmp_path: Path) -> None:
    from dataclasses import dataclass

    from xdsl.passes import ModulePass
    from xdsl.utils.exceptions import PassFailedException

    from rlx_compile.diagnostics import PassFailure
    from rlx_compile.ir import parse_module, print_module
    from rlx_compile.passmanager import (
        Instrumentation,
        PassManager,
        parse_pipeline,
        reproducer_pipeline,
    )

    @dataclass(frozen=True)
    class GiveUp(ModulePass):
        name = "give-up"
        reason: str = "nothing to do"

        def apply(self, ctx, op) -> None:  # type: ignore[no-untyped-def]
            raise PassFailedException(f"gave up: {self.reason}")

    module = parse_module(EXAMPLE.read_text(), str(EXAMPLE))
    passes = [*parse_pipeline("lower-hir-to-mir,cse"), GiveUp(), *parse_pipeline("dce")]
    repro = tmp_path / "repro.mlir"
    lowered_text = None

    def keep(p, m) -> None:  # type: ignore[no-untyped-def]
        nonlocal lowered_text
        lowered_text = print_module(m)

    pm = PassManager(passes, Instrumentation(reproducer=repro), callback=keep)
    with pytest.raises(PassFailure) as err:
        pm.run(module)
    assert err.value.line() == (
        f"error: pass 'give-up' failed: gave up: nothing to do; reproducer written to {repro}"
    )
    text = repro.read_text()
    assert reproducer_pipeline(text) == 'builtin.module(give-up{reason="nothing to do"},dce)'
    # The reproducer holds the IR right before the failing pass.
    assert text.split("\n", 3)[3] == lowered_text
    # --run-reproducer replays the remaining pipeline; give-up is not a registered pass,
    # so rlx-opt stops with the pipeline error rather than silently doing something else.
    r = rlx_opt(str(repro), "--run-reproducer")
    assert r.returncode == 1 and "unknown pass 'give-up'" in r.stderr


def test_output_is_byte_identical_across_hash_seeds() -> None:
    import os

    pipeline = "lower-hir-to-mir{policy=fusable},cse,schedule-memory,plan-memory"
    outputs = set()
    for seed in ("0", "1", "12345"):
        r = subprocess.run(
            [RLX_OPT, str(EXAMPLE), "-p", pipeline],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        outputs.add(r.stdout)
    assert len(outputs) == 1


def test_without_verify_each_the_result_is_still_verified() -> None:
    from dataclasses import dataclass

    from xdsl.passes import ModulePass
    from xdsl.rewriter import Rewriter

    from rlx_compile import ModuleBuilder
    from rlx_compile.diagnostics import VerifyFailure
    from rlx_compile.dialects import mir
    from rlx_compile.passmanager import Instrumentation, PassManager, parse_pipeline

    @dataclass(frozen=True)
    class BreakTypes(ModulePass):
        """Gives an add a result type its operands do not produce."""

        name = "break-types"

        def apply(self, ctx, op) -> None:  # type: ignore[no-untyped-def]
            add = next(o for o in op.walk() if isinstance(o, mir.AddOp))
            wrong = add.results[0].type.with_shape([7])
            bad = mir.AddOp.create(operands=list(add.operands), result_types=[wrong])
            Rewriter.replace_op(add, bad)

    def module():  # type: ignore[no-untyped-def]
        with ModuleBuilder("f") as m:
            x = m.input("x", (2,))
            m.output(m.add(x, x), names=["y"])
        return m.module

    cases = ((True, "(after pass 'break-types')"),
             (False, "(after the pipeline; verify after each pass to find the pass)"))  # fmt: skip
    for verify_each, where in cases:
        passes = [BreakTypes(), *parse_pipeline("cse")]
        pm = PassManager(passes, Instrumentation(verify_each=verify_each))
        with pytest.raises(VerifyFailure) as err:
            pm.run(module())
        assert "'mir.add' op result type !rlx.tensor<[7], f32>" in err.value.line()
        assert err.value.line().endswith(where)
