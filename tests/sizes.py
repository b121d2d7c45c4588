"""The size knob of the ``slow`` cases: each runs at a small size by default and at full
size when asked, with the same assertions either way (only the number of random cases or
their size changes).

    pytest --full-size          # or RLX_TEST_SIZE=full pytest
"""

from __future__ import annotations

import os

ENV = "RLX_TEST_SIZE"


def full_size() -> bool:
    """Whether this run asked for full-size slow cases (read when a test module is
    collected: ``--full-size`` sets the variable before collection)."""
    return os.environ.get(ENV, "small") == "full"


def sized(small: int, full: int) -> int:
    """``full`` under ``--full-size``, else ``small``: the count of a slow case."""
    return full if full_size() else small
