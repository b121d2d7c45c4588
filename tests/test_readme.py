"""The README's set-up commands are what .ci/run executes; keep their shape honest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def setup_commands() -> list[str]:
    out = subprocess.run(
        [
            "awk",
            "/<!-- setup-commands/{on=1; next} /<!-- \\/setup-commands -->/{on=0} on && !/^```/",
            str(REPO / "README.md"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in out.stdout.splitlines() if line.strip()]


def test_two_commands_first_in_readme() -> None:
    commands = setup_commands()
    assert len(commands) == 2
    assert "rlx-compile examples/" in commands[0]
    assert commands[1].rstrip().endswith("pytest -q")
    readme = (REPO / "README.md").read_text().splitlines()
    assert readme[0].startswith("# ")
    assert readme[2].startswith("<!-- setup-commands")


def test_examples_are_up_to_date() -> None:
    r = subprocess.run(
        [sys.executable, str(REPO / "examples" / "build_examples.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_dialect_docs_are_up_to_date() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "rlx_compile.tools.dialect_docs", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
