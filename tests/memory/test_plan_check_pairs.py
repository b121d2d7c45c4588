"""The plan checker's pair searches find exactly the overlapping pairs of the all-pairs
scans."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rlx_compile.memory.lir_liveness import Storage
from rlx_compile.memory.plan_check import (
    _dense_pairs,
    _overlapping,
    _small_pairs,
    _sweep_pairs,
    overlapping_pairs,
)


def all_pairs(storages: list[Storage]) -> list[tuple[Storage, Storage]]:
    ordered = sorted((s for s in storages if s.size > 0), key=lambda s: (s.offset, s.step))
    return [
        (a, b)
        for i, a in enumerate(ordered)
        for b in ordered[i + 1 :]
        if a.offset < b.end and b.offset < a.end and a.birth <= b.death and b.birth <= a.death
    ]


slot = st.tuples(
    st.integers(0, 12), st.integers(0, 6), st.integers(0, 10), st.integers(0, 5)
)  # offset, size, birth, lifetime


@settings(max_examples=300, deadline=None)
@given(st.lists(slot, max_size=40))
def test_sweep_matches_all_pairs(slots: list[tuple[int, int, int, int]]) -> None:
    # overlapping_pairs tests the byte-sharing pairs one by one (few slots) or at once,
    # or sweeps when they are many: each must find exactly the all-pairs scan's pairs,
    # in its order.
    storages = storages_of(slots)
    nonempty = [s for s in storages if s.size > 0]
    ordered = sorted(nonempty, key=lambda s: (s.offset, s.step))
    assert overlapping_pairs(storages) == all_pairs(storages)
    assert _small_pairs(nonempty) == all_pairs(storages)
    if nonempty:
        assert _dense_pairs(nonempty) == all_pairs(storages)
    assert _sweep_pairs(ordered) == all_pairs(storages)


def storages_of(slots: list[tuple[int, int, int, int]]) -> list[Storage]:
    return [
        Storage(None, None, step, off, size, False, birth, birth + life)  # type: ignore[arg-type]
        for step, (off, size, birth, life) in enumerate(slots)
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(slot, max_size=30), st.lists(slot, max_size=30))
def test_region_sweep_matches_all_pairs(
    inner: list[tuple[int, int, int, int]], outer: list[tuple[int, int, int, int]]
) -> None:
    # A region's storages against those live around it: bytes alone decide.
    xs, ys = storages_of(inner), storages_of(outer)
    expected = {
        (id(x), id(y))
        for x in xs
        for y in ys
        if x.size and y.size and x.offset < y.end and y.offset < x.end
    }
    got = [(id(x), id(y)) for x, y in _overlapping(xs, ys)]
    assert len(got) == len(set(got)) and set(got) == expected
