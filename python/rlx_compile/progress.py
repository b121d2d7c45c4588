"""A minimal progress bar on stderr for long-running steps (calibration, long compiles).

It stays silent for the first ``delay`` seconds, so quick runs print nothing, and only
draws on a terminal unless forced (``enabled=True``); ``enabled=False`` never draws.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO


class Progress:
    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        enabled: bool | None = None,
        delay: float = 1.0,
        stream: TextIO | None = None,
        width: int = 30,
    ):
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.delay = delay
        self.width = width
        self.done = 0
        self._start = time.perf_counter()
        self._drawn = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.enabled and time.perf_counter() - self._start >= self.delay:
            self._draw()

    def _draw(self) -> None:
        elapsed = time.perf_counter() - self._start
        if self.total:
            filled = int(self.width * min(self.done, self.total) / self.total)
            bar = "#" * filled + "." * (self.width - filled)
            text = f"{self.label} [{bar}] {self.done}/{self.total} {elapsed:.1f}s"
        else:
            text = f"{self.label} {self.done} {elapsed:.1f}s"
        self.stream.write("\r" + text)
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
