"""Reshape, transpose, narrow, slice, concat, expand, gather and pad against per-element
Python references."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from interp_testlib import bits_equal, run1

from rlx_compile.dialects import mir
from rlx_compile.interpreter import ExecutionError

F32 = np.float32


def test_reshape_is_row_major() -> None:
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    got = run1(lambda a: [mir.ReshapeOp(a, [4, 6])], x)
    flat = [int(v) for v in np.nditer(x, order="C")]
    assert [int(v) for v in np.nditer(got, order="C")] == flat
    assert got.shape == (4, 6)


def test_transpose() -> None:
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    got = run1(lambda a: [mir.TransposeOp(a, [2, 0, 1])], x)
    assert got.shape == (4, 2, 3)
    for i, j, k in itertools.product(range(4), range(2), range(3)):
        assert got[i, j, k] == x[j, k, i]


def test_narrow() -> None:
    x = np.arange(20, dtype=F32).reshape(4, 5)
    got = run1(lambda a: [mir.NarrowOp(a, 1, 1, 3)], x)
    assert [list(r) for r in got] == [[float(x[i, j]) for j in (1, 2, 3)] for i in range(4)]


@pytest.mark.parametrize(
    ("starts", "steps", "lengths"),
    [
        ([0, 0], [1, 1], [4, 5]),
        ([3, 4], [-1, -1], [4, 5]),  # full reversal
        ([1, 4], [2, -2], [2, 3]),
        ([3, 0], [-3, 4], [2, 2]),
        ([2, 1], [1, 1], [0, 3]),  # empty axis
    ],
)
def test_slice_with_any_steps(starts: list[int], steps: list[int], lengths: list[int]) -> None:
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    got = run1(lambda a: [mir.SliceOp(a, starts, steps, lengths)], x)
    assert got.shape == tuple(lengths)
    for i, j in itertools.product(range(lengths[0]), range(lengths[1])):
        assert got[i, j] == x[starts[0] + i * steps[0], starts[1] + j * steps[1]]


def test_concat() -> None:
    a = np.arange(6, dtype=F32).reshape(2, 3)
    b = np.arange(4, dtype=F32).reshape(2, 2) + 100
    got = run1(lambda x, y: [mir.ConcatOp([x, y, x], 1)], a, b)
    assert [list(map(float, r)) for r in got] == [
        [*map(float, a[i]), *map(float, b[i]), *map(float, a[i])] for i in range(2)
    ]


def test_expand_grows_rank_and_broadcasts() -> None:
    x = np.array([[1], [2]], np.int64)
    got = run1(lambda a: [mir.ExpandOp(a, [3, 2, 4])], x)
    assert got.shape == (3, 2, 4)
    for i, j, k in itertools.product(range(3), range(2), range(4)):
        assert got[i, j, k] == x[j, 0]


@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64, np.uint8, np.int8])
def test_gather_with_negative_indices(idx_dtype) -> None:  # type: ignore[no-untyped-def]
    table = np.arange(15, dtype=F32).reshape(5, 3)
    raw = [[0, 4], [2, 1]] if np.dtype(idx_dtype).kind == "u" else [[0, -1], [2, -5]]
    idx = np.array(raw, idx_dtype)
    got = run1(lambda t, i: [mir.GatherOp(t, i, 0)], table, idx)
    assert got.shape == (2, 2, 3)
    for a, b in itertools.product(range(2), range(2)):
        row = int(idx[a, b]) % 5
        assert list(got[a, b]) == list(table[row])


def test_gather_on_an_inner_axis() -> None:
    table = np.arange(24, dtype=F32).reshape(2, 3, 4)
    idx = np.array([3, -4, 1], np.int64)
    got = run1(lambda t, i: [mir.GatherOp(t, i, 2)], table, idx)
    assert got.shape == (2, 3, 3)
    for a, b, c in itertools.product(range(2), range(3), range(3)):
        assert got[a, b, c] == table[a, b, int(idx[c]) % 4]


@pytest.mark.parametrize("bad", [5, -6])
def test_gather_out_of_range_is_an_error(bad: int) -> None:
    table = np.zeros((5, 2), F32)
    with pytest.raises(
        ExecutionError, match=rf"mir.gather.*index {bad} is out of range for axis 0 of size 5"
    ):
        run1(lambda t, i: [mir.GatherOp(t, i, 0)], table, np.array([0, bad], np.int32))
    with pytest.raises(ExecutionError, match="out of range"):
        run1(lambda t, i: [mir.GatherOp(t, i, 0)], table, np.array([2**63], np.uint64))


def _source_index(o: int, before: int, n: int, mode: str) -> int | None:
    """Which input index output position ``o`` reads along one axis (None: the fill)."""
    i = o - before
    if 0 <= i < n:
        return i
    if mode == "constant":
        return None
    if mode == "edge":
        return min(max(i, 0), n - 1)
    if mode == "wrap":
        return i % n
    while not 0 <= i < n:  # reflect: mirror about the edges, the edge itself not repeated
        i = -i if i < 0 else 2 * (n - 1) - i
    return i


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes(mode: str) -> None:
    x = np.arange(12, dtype=F32).reshape(3, 4)
    pads = [2, 0, 1, 3]  # axis 0: (2, 1), axis 1: (0, 3)
    got = run1(lambda a: [mir.PadOp(a, pads, mode, 7.5)], x)
    assert got.shape == (6, 7)
    for o0, o1 in itertools.product(range(6), range(7)):
        i0 = _source_index(o0, 2, 3, mode)
        i1 = _source_index(o1, 0, 4, mode)
        want = 7.5 if i0 is None or i1 is None else x[i0, i1]
        assert got[o0, o1] == want, (o0, o1)


def test_wrap_pad_wider_than_the_axis_is_periodic() -> None:
    x = np.array([1, 2], np.int32)
    got = run1(lambda a: [mir.PadOp(a, [3, 4], "wrap")], x)
    assert list(got) == [x[(o - 3) % 2] for o in range(9)]


def test_reflect_pad_must_be_smaller_than_the_axis() -> None:
    with pytest.raises(
        ExecutionError, match=r"reflect pad \(3, 0\) of axis 0 needs pads < its size 3"
    ):
        run1(lambda a: [mir.PadOp(a, [3, 0], "reflect")], np.zeros(3, F32))


def test_constant_pad_value_follows_cast_rules() -> None:
    got = run1(lambda a: [mir.PadOp(a, [1, 1], "constant", -2.7)], np.array([5], np.int8))
    assert bits_equal(got, np.array([-2, 5, -2], np.int8))  # truncated toward zero
    bf = run1(
        lambda a: [mir.PadOp(a, [0, 1], "constant", 1.0 + 2**-9)], np.zeros(1, ml_dtypes.bfloat16)
    )
    assert bf[1] == 1.0  # rounded to bf16
