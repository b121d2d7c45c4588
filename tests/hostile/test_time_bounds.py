"""Work bounded by the input: inputs crafted to make a stage super-linear finish in time.

Each hang test runs the tool in a subprocess with a timeout, so a regression fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RLX_OPT = str(Path(sys.executable).parent / "rlx-opt")


def test_unterminated_string_literal_fails_fast(tmp_path: Path) -> None:
    # xDSL's own string-literal regex backtracks exponentially here (40 characters after
    # the quote took minutes); ours fails after one pass over the text.
    for text in (
        '"' + "a" * 5000,
        'builtin.module attributes {x = "' + "abc " * 2000 + "} {}\n",
        'func.func @f() attributes {y = "\\n' + "x" * 5000 + "\n",
    ):
        path = tmp_path / "bad.mlir"
        path.write_text(text)
        r = subprocess.run(
            [RLX_OPT, str(path)], capture_output=True, text=True, timeout=60, check=False
        )
        assert r.returncode == 1
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr
        assert lines[0].startswith(f"{path}:1:"), lines[0]
        assert "string literal" in lines[0]


def test_string_literals_still_parse() -> None:
    from xdsl.dialects.builtin import StringAttr

    from rlx_compile.ir import parse_module

    text = 'builtin.module attributes {a = "x\\"y\\0a\\\\", b = "", c = "\\t"} {\n}\n'
    attrs = parse_module(text).attributes
    values = {k: v.data for k, v in attrs.items() if isinstance(v, StringAttr)}
    assert values == {"a": 'x"y\n\\', "b": "", "c": "\t"}
