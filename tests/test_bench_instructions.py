"""bench/compile_instructions.py: which counts of callgrind's dumps belong to which model."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_dumps_are_read_in_the_order_written_and_the_exit_dump_is_left_out(
    tmp_path: Path,
) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import compile_instructions
    finally:
        sys.path.remove(str(ROOT / "bench"))
    # callgrind names the n-th dump cg.<pid>.<n> and what it counts at exit cg.<pid>.
    for n in range(1, 12):
        (tmp_path / f"cg.42.{n}").write_text(f"events: Ir\nsummary: {n * 100}\n")
    (tmp_path / "cg.42").write_text("events: Ir\nsummary: 999999\n")
    assert compile_instructions.dump_totals(tmp_path) == [n * 100 for n in range(1, 12)]
