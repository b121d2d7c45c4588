"""Native tests need a C compiler; without one they are skipped, saying so."""

from __future__ import annotations

import pytest

from rlx_compile.native import compiler_available


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if compiler_available():
        return
    skip = pytest.mark.skip(reason="no C compiler on PATH (set CC): native code cannot be built")
    for item in items:
        if "tests/native" in str(item.fspath):
            item.add_marker(skip)
