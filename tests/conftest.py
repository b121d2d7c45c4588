"""Shared test helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo() -> Path:
    return REPO


# Property tests draw the same examples on every run (CI must not flake on a newly found
# case); set HYPOTHESIS_PROFILE=explore to search with fresh randomness.
import os  # noqa: E402

from hypothesis import settings  # noqa: E402

settings.register_profile("repeatable", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
