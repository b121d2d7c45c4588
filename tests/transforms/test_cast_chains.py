"""The exactness rules behind algebraic-simplify's cast rewrites, checked against the
reference cast kernel: every bit pattern of the 8- and 16-bit types, and edge values
(range ends, ±0, ±inf, NaN, subnormals, random values) of the wider ones."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import ml_dtypes
import numpy as np
import pytest

from rlx_compile.dialects.types import DType, exactly_representable
from rlx_compile.interpreter import kernels as K
from rlx_compile.transforms.algebraic_simplify import cast_chain_is_exact


def samples(dtype: DType) -> np.ndarray:
    np_type = dtype.numpy
    if dtype.is_bool:
        return np.array([False, True])
    if np_type.itemsize <= 2:  # every value
        bits = np.arange(2 ** (8 * np_type.itemsize), dtype=np.uint64)
        return bits.astype(f"<u{np_type.itemsize}").view(np_type)
    rng = np.random.default_rng(0)
    if dtype.is_int:
        info = np.iinfo(np_type)
        edges = [info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max]
        edges = [v for v in edges if info.min <= v <= info.max]
        wide = rng.integers(info.min, info.max, size=2000, dtype=np_type, endpoint=True)
        small = rng.integers(max(info.min, -300), 300, size=500).astype(np_type)
        return np.concatenate([np.array(edges, dtype=np_type), wide, small])
    info = ml_dtypes.finfo(np_type)
    edges = [0.0, -0.0, 1.0, -1.0, 0.5, float(info.max), -float(info.max),
             float(info.smallest_normal), float(info.smallest_subnormal), np.inf, -np.inf,
             np.nan, 65504.0, 65520.0, 3.0e38, 2.0**24 + 1, 1e-8, 127.5, -128.5, 300.7]  # fmt: skip
    values = np.concatenate(
        [np.array(edges), rng.standard_normal(2000) * 10.0 ** rng.integers(-12, 12, 2000)]
    )
    return values.astype(np_type)


def values(a: np.ndarray) -> list[tuple[object, float]]:
    """Each element as an exact Python number with its sign (so -0.0 differs from 0 and
    ints compare with floats mathematically); every NaN is one value."""
    items = a.tolist() if a.dtype.kind in "biu" else a.astype(np.float64).tolist()
    out: list[tuple[object, float]] = []
    for v in items:
        if isinstance(v, float):
            out.append(("nan", 0.0) if math.isnan(v) else (v, math.copysign(1.0, v)))
        else:
            out.append((int(v), -1.0 if v < 0 else 1.0))
    return out


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """``values(a) == values(b)`` for arrays of one dtype, vectorised."""
    if a.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    x, y = a.astype(np.float64), b.astype(np.float64)  # exact for every float type here
    nan = np.isnan(x)
    x, y = x[~nan], y[~nan]
    return bool(
        np.array_equal(nan, np.isnan(b.astype(np.float64)))
        and np.array_equal(x, y)
        and np.array_equal(np.signbit(x), np.signbit(y))
    )


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # Casting NaN and out-of-range values is the point here; NumPy warns about it.
    with np.errstate(all="ignore"):
        yield


@pytest.mark.parametrize("src", list(DType), ids=lambda d: d.value)
def test_exactly_representable_matches_the_cast_kernel(src: DType) -> None:
    x = samples(src)
    for dst in DType:
        exact = values(K.cast(x, dst.numpy)) == values(x)
        assert exactly_representable(src, dst) == exact, f"{src.value} -> {dst.value}"


def test_cast_chains_marked_exact_are_exact() -> None:
    checked = 0
    for a, b, c in itertools.product(DType, repeat=3):
        if not cast_chain_is_exact(a, b, c):
            continue
        x = samples(a)
        chained, direct = K.cast(K.cast(x, b.numpy), c.numpy), K.cast(x, c.numpy)
        assert same(chained, direct), f"{a.value} -> {b.value} -> {c.value}"
        checked += 1
    assert checked > 400


def test_int_through_float_to_int_is_not_collapsed() -> None:
    # i16 -> f32 is exact, yet f32 -> i8 saturates while i16 -> i8 wraps.
    assert exactly_representable(DType.I16, DType.F32)
    assert not cast_chain_is_exact(DType.I16, DType.F32, DType.I8)
    x = np.array([300], np.int16)
    assert K.cast(K.cast(x, np.dtype(np.float32)), np.dtype(np.int8))[0] == 127
    assert K.cast(x, np.dtype(np.int8))[0] == 44
    assert cast_chain_is_exact(DType.I16, DType.F32, DType.I16)
