"""Independent checker for interval-level arena plans.

It shares no code with the planner on purpose: a planner bug must not be able to
hide itself by also living in the check. It answers one question, whether a plan is
safe to execute, from the plan alone:

* no two buffers whose CLOSED live intervals ``[birth, death]`` intersect share a
  byte (byte ranges are half-open, ``[offset, offset + size)``, so zero-size
  buffers never collide);
* every offset is a non-negative multiple of the largest power of two dividing both
  the buffer's size and ``alignment``;
* every buffer lies inside ``[0, arena_size)``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

MAX_FINDINGS = 100


def _ints(a: ArrayLike) -> list[int]:
    return [int(x) for x in np.asarray(a).reshape(-1)]


def check_interval_plan(
    sizes: ArrayLike,
    births: ArrayLike,
    deaths: ArrayLike,
    offsets: ArrayLike,
    arena_size: int,
    alignment: int,
) -> list[str]:
    """Every violation found, as text (at most MAX_FINDINGS); empty means valid."""
    size, birth, death, offset = _ints(sizes), _ints(births), _ints(deaths), _ints(offsets)
    n = len(size)
    findings: list[str] = []
    for name, arr in (("births", birth), ("deaths", death), ("offsets", offset)):
        if len(arr) != n:
            findings.append(f"{name} has length {len(arr)}, expected {n}")
    if findings:
        return findings
    if alignment <= 0 or alignment & (alignment - 1):
        findings.append(f"alignment = {alignment} is not a positive power of two")
        return findings

    def note(msg: str) -> None:
        findings.append(msg)

    for i in range(n):
        if size[i] < 0:
            note(f"buffer {i}: negative size {size[i]}")
        if death[i] < birth[i]:
            note(f"buffer {i}: death {death[i]} before birth {birth[i]}")
        if offset[i] < 0:
            note(f"buffer {i}: negative offset {offset[i]}")
        need = math.gcd(size[i], alignment)
        if offset[i] % need:
            note(f"buffer {i}: offset {offset[i]} is not a multiple of {need}")
        if offset[i] + size[i] > arena_size:
            note(f"buffer {i}: ends at {offset[i] + size[i]} > arena_size {arena_size}")
    findings.extend(_overlaps(size, birth, death, offset))
    if len(findings) > MAX_FINDINGS:
        more = len(findings) - MAX_FINDINGS
        findings = [*findings[:MAX_FINDINGS], f"... and {more} more"]
    return findings


def _overlaps(
    size: Sequence[int], birth: Sequence[int], death: Sequence[int], offset: Sequence[int]
) -> list[str]:
    # Sweep in birth order. When buffer x is reached, every earlier buffer y still
    # alive at birth[x] (death[y] >= birth[x]) intersects x in time, and every buffer
    # intersecting x that comes earlier in the sweep is such a y: compare exactly
    # those pairs in bytes. Expired buffers leave through a heap keyed by death.
    found: list[str] = []
    live: dict[int, None] = {}
    expiry: list[tuple[int, int]] = []
    for x in sorted(range(len(size)), key=lambda i: (birth[i], i)):
        while expiry and expiry[0][0] < birth[x]:
            _, y = heapq.heappop(expiry)
            del live[y]
        if size[x] > 0:
            for y in live:
                lo = max(offset[x], offset[y])
                hi = min(offset[x] + size[x], offset[y] + size[y])
                if lo < hi:
                    a, b = min(x, y), max(x, y)
                    found.append(
                        f"buffers {a} and {b} overlap in bytes [{lo}, {hi}) while both live "
                        f"(intervals [{birth[a]}, {death[a]}] and [{birth[b]}, {death[b]}])"
                    )
                    if len(found) > MAX_FINDINGS:
                        return found
            live[x] = None
            heapq.heappush(expiry, (death[x], x))
    return found
