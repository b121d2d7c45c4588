"""print -> parse -> print is identical for every example, dialect document and
positive FileCheck input in the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlx_compile.ir import parse_module, print_module

REPO = Path(__file__).resolve().parent.parent


def _files() -> list[Path]:
    files = sorted(REPO.glob("examples/**/*.mlir")) + sorted(REPO.glob("dialects/**/*.mlir"))
    for path in sorted((REPO / "tests" / "filecheck").rglob("*.mlir")):
        text = path.read_text()
        if "Output" in path.parts or "not rlx-opt" in text or "// -----" in text:
            continue  # negative tests and split files are covered by their own RUN lines
        files.append(path)
    return files


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(REPO)))
def test_print_parse_print(path: Path) -> None:
    module = parse_module(path.read_text(), str(path))
    module.verify()
    once = print_module(module)
    twice = print_module(parse_module(once))
    assert once == twice
    generic = print_module(module, generic=True)
    assert print_module(parse_module(generic)) == once


def test_there_are_files_to_check() -> None:
    assert len(_files()) >= 5
