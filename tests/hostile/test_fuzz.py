"""The fuzz suite: mutated ``.mlir`` files through ``rlx-opt`` and mutated ONNX models
through ``rlx-compile``, derandomized (case i is seed i). Each case must exit 0, or
exit 1 with exactly one ``error:`` line that is not an internal error; a failed
``rlx-compile`` leaves no output directory, a passing one every file its summary
lists. A case that runs
past its alarm is a hang. Small by default, bigger with ``--full-size``; long runs:
``python bench/fuzz.py``. Every failure a run found is kept in ``corpus/`` (named
``<kind>-<seed>``) and replayed here as a regression case."""

from __future__ import annotations

import json
import random
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest

from tests.hostile.fuzzing import ir_seeds, mutate_ir, mutate_onnx, onnx_seeds
from tests.sizes import sized

CASE_SECONDS = 60
CORPUS = Path(__file__).with_name("corpus")


class Hang(Exception):
    pass


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(main: Callable[[list[str]], None], argv: list[str]) -> int:
    with alarm(CASE_SECONDS), pytest.raises(SystemExit) as exit_:
        main(argv)
    return int(exit_.value.code or 0)


def check_outcome(code: int, err: str, what: str) -> None:
    lines = err.strip().splitlines()
    assert code in (0, 1), f"{what}: exit {code}: {err[-500:]}"
    if code == 1:
        assert len(lines) == 1, f"{what}: {len(lines)} lines: {err[-800:]}"
        assert "error:" in lines[0] and "internal error" not in lines[0], f"{what}: {lines[0]}"


@pytest.mark.slow
def test_mutated_ir_through_rlx_opt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rlx_compile.tools import rlx_opt

    seeds = ir_seeds()
    for case in range(sized(150, 3000)):
        rng = random.Random(case)
        path = tmp_path / f"case{case}.mlir"
        path.write_bytes(mutate_ir(rng.choice(seeds), rng))
        code = run_cli(rlx_opt.main, [str(path)])
        check_outcome(code, capsys.readouterr().err, f"ir case {case}")


@pytest.mark.slow
def test_mutated_onnx_through_rlx_compile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = onnx_seeds()
    for case in range(sized(40, 600)):
        rng = random.Random(case)
        path = tmp_path / f"case{case}.onnx"
        path.write_bytes(mutate_onnx(rng.choice(seeds), rng))
        check_onnx_case(path, tmp_path / f"out{case}", capsys, f"onnx case {case}")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def check_onnx_case(path: Path, out: Path, capsys: pytest.CaptureFixture[str], what: str) -> None:
    from rlx_compile.tools import compile as compile_tool

    code = run_cli(compile_tool.main, [str(path), "--out", str(out)])
    check_outcome(code, capsys.readouterr().err, what)
    if code == 0:
        listed = json.loads((out / "summary.json").read_text())["outputs"].values()
        assert {p.name for p in out.iterdir()} == {Path(p).name for p in listed}
    else:
        assert not out.exists(), f"{what}: a failed run left {out}"


@pytest.mark.parametrize("path", sorted(CORPUS.iterdir()), ids=lambda p: p.name)
def test_past_failures(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rlx_compile.tools import rlx_opt

    if path.suffix == ".onnx":
        check_onnx_case(path, tmp_path / "out", capsys, path.name)
    else:
        check_outcome(run_cli(rlx_opt.main, [str(path)]), capsys.readouterr().err, path.name)
