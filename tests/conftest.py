"""Shared test helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests import sizes

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo() -> Path:
    return REPO


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full-size",
        action="store_true",
        help="run the cases marked slow at full size (default: small; see tests/sizes.py)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Before collection: the slow cases read their size when their module is imported.
    if config.getoption("--full-size"):
        os.environ[sizes.ENV] = "full"
    elif os.environ.get(sizes.ENV, "small") not in ("small", "full"):
        raise pytest.UsageError(f"{sizes.ENV} must be 'small' or 'full'")


def pytest_report_header(config: pytest.Config) -> str:
    return f"slow cases: {'full' if sizes.full_size() else 'small'} size"


# Property tests draw the same examples on every run (CI must not flake on a newly found
# case); set HYPOTHESIS_PROFILE=explore to search with fresh randomness.
settings.register_profile("repeatable", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
