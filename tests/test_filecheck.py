"""Run every FileCheck test under tests/filecheck through lit (one pytest case per file)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent / "filecheck"
TESTS = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.mlir") if "Output" not in p.parts)
LIT = Path(sys.executable).parent / "lit"


@pytest.mark.parametrize("name", TESTS)
def test_lit(name: str) -> None:
    result = subprocess.run(
        [str(LIT), "-q", "-v", str(ROOT / name)],
        capture_output=True,
        text=True,
        env={**os.environ},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
