"""bench/compile_instructions.py: which counts of callgrind's dumps belong to which model,
and the pipeline it counts when told to leave passes out."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import compile_instructions
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return compile_instructions


def test_dumps_are_read_in_the_order_written_and_the_exit_dump_is_left_out(
    tmp_path: Path,
) -> None:
    compile_instructions = _tool()
    # callgrind names the n-th dump cg.<pid>.<n> and what it counts at exit cg.<pid>.
    for n in range(1, 12):
        (tmp_path / f"cg.42.{n}").write_text(f"events: Ir\nsummary: {n * 100}\n")
    (tmp_path / "cg.42").write_text("events: Ir\nsummary: 999999\n")
    assert compile_instructions.dump_totals(tmp_path) == [n * 100 for n in range(1, 12)]


def test_cold_counts_are_the_lines_missed_in_the_last_level(tmp_path: Path) -> None:
    tool = _tool()
    events = "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
    (tmp_path / "cg.7.1").write_text(events + "summary: 900 400 100 30 20 10 7 5 3\n")
    (tmp_path / "cg.7.2").write_text(events + "summary: 800 300 100 30 20 10 6 4\n")  # DLmw 0
    assert tool.dump_totals(tmp_path, tool.MEMORY_LINES) == [15, 10]
    assert tool.dump_totals(tmp_path) == [900, 800]
    (tmp_path / "cg.7.3").write_text("events: Ir\nsummary: 700\n")  # no cache simulation
    with pytest.raises(RuntimeError, match="no ILmr, DLmr, DLmw counted"):
        tool.dump_totals(tmp_path, tool.MEMORY_LINES)


def test_the_pipeline_without_passes_drops_every_instance_and_keeps_the_rest() -> None:
    from rlx_compile import CompilePipeline
    from rlx_compile.passmanager import parse_pipeline, pipeline_spec

    default = parse_pipeline(CompilePipeline(target="cpu").pipeline)
    assert sum(p.name == "algebraic-simplify" for p in default) == 2
    less = parse_pipeline(_tool().pipeline_without(["algebraic-simplify", "plan-check"]))
    kept = [p for p in default if p.name not in ("algebraic-simplify", "plan-check")]
    assert pipeline_spec(less, full=True) == pipeline_spec(kept, full=True)
    assert len(less) == len(default) - 3


def test_a_pass_the_pipeline_does_not_hold_is_refused_by_name() -> None:
    with pytest.raises(SystemExit, match="no pass \\['fusee'\\] in the default pipeline"):
        _tool().pipeline_without(["fuse", "fusee"])
