"""Where passes leave their reports (fusion, kernel dispatch) for the caller.

Passes run inside a pass manager that returns nothing but the module, so a pass that
produces a report publishes it here; ``CompilePipeline.compile`` and ``rlx-opt`` collect
what the passes of one run published. Outside a collection, publishing is a no-op.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_SINK: ContextVar[list[object] | None] = ContextVar("rlx_report_sink", default=None)


@contextmanager
def collect_reports() -> Iterator[list[object]]:
    """Collect the reports published while the block runs, in publication order."""
    sink: list[object] = []
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


def publish(report: object) -> None:
    sink = _SINK.get()
    if sink is not None:
        sink.append(report)
