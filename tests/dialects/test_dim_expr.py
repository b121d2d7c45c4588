"""Symbolic dim expressions: the canonical form evaluates like the arithmetic it came
from, prints and parses back to the same object, and simplifies what shapes need."""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlx_compile.dialects.dim_expr import (
    Dim,
    DimError,
    DimExpr,
    ceildiv,
    dim_max,
    dim_min,
    evaluate,
    floordiv,
    interval,
    mod,
    parse_dim,
    sym,
    upper_bound,
)

SYMBOLS = ("a", "b", "c")


def _tree(draw: st.DrawFn, depth: int) -> tuple[Dim, Callable[[dict[str, int]], int]]:
    """A random expression and an independent evaluator of the same arithmetic."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            n = draw(st.integers(-4, 9))
            return n, lambda env, n=n: n
        s = draw(st.sampled_from(SYMBOLS))
        return sym(s), lambda env, s=s: env[s]
    kind = draw(st.sampled_from(["+", "-", "*", "//", "ceil", "mod", "min", "max"]))
    (x, fx), (y, fy) = _tree(draw, depth - 1), _tree(draw, depth - 1)
    if kind in ("//", "ceil", "mod"):
        k = draw(st.integers(1, 5))
        if kind == "//":
            return floordiv(x, k), lambda env: fx(env) // k
        if kind == "ceil":
            return ceildiv(x, k), lambda env: -(-fx(env) // k)
        return mod(x, k), lambda env: fx(env) % k
    if kind in ("min", "max"):
        fn = dim_min if kind == "min" else dim_max
        py = min if kind == "min" else max
        return fn(x, y), lambda env: py(fx(env), fy(env))
    op = {"+": operator.add, "-": operator.sub, "*": operator.mul}[kind]
    return op(x, y), lambda env: op(fx(env), fy(env))


@st.composite
def trees(draw: st.DrawFn) -> tuple[Dim, Callable[[dict[str, int]], int]]:
    return _tree(draw, 3)


sizes = st.fixed_dictionaries({s: st.integers(1, 40) for s in SYMBOLS})


@given(trees(), sizes)
def test_canonical_form_evaluates_like_the_arithmetic(
    tree: tuple[Dim, Callable[[dict[str, int]], int]], env: dict[str, int]
) -> None:
    d, reference = tree
    assert evaluate(d, env) == reference(env)
    lo, hi = interval(d)
    assert lo <= reference(env) <= hi  # bounds are sound for sizes >= 1


@given(trees())
def test_print_parse_round_trip(tree: tuple[Dim, Callable[[dict[str, int]], int]]) -> None:
    d, _ = tree
    assert parse_dim(str(d)) is d if isinstance(d, DimExpr) else parse_dim(str(d)) == d


@given(trees(), sizes)
def test_substitution_is_evaluation(
    tree: tuple[Dim, Callable[[dict[str, int]], int]], env: dict[str, int]
) -> None:
    d, reference = tree
    partial = {"a": env["a"]}
    rest = d.substitute(partial) if isinstance(d, DimExpr) else d
    assert evaluate(rest, env) == reference(env)


def test_equal_expressions_are_one_object() -> None:
    s, b = sym("seq"), sym("batch")
    assert (s + 1) * 2 is s * 2 + 2
    assert (s * b) is (b * s)
    assert s + 1 - 1 is s
    assert (s * 2 + 3) // 2 is s + 1
    assert ceildiv(s, 2) is (s + 1) // 2
    assert (b * s * 768) // (b * s * 12) == 64  # a reshape's -1
    assert str((sym("h") - 1) // 2 + 1) == "(h + 1) floordiv 2"


def test_simplification_uses_sizes_at_least_one() -> None:
    s = sym("seq")
    assert dim_max(s, 1) is s  # a broadcast against 1
    assert dim_min(s, 2**63 - 1) is s  # an ONNX Slice's open end
    assert dim_max(0, s - 1) is s - 1  # x[:, 1:] is never negative
    assert dim_max(s, dim_min(s, 2048)) is s
    assert str(dim_min(s, 2048)) == "min(seq, 2048)"


def test_bare_symbols_read_as_their_names() -> None:
    s = sym("seq")
    assert s == "seq" and hash(s) == hash("seq")
    assert {"seq": 3}[s] == 3
    assert (s + 1) != "seq + 1"  # only bare symbols


def test_no_order_no_int() -> None:
    s = sym("seq")
    with pytest.raises(TypeError):
        _ = s < 3
    with pytest.raises(TypeError):
        int(s)
    assert np.int64(2) + s is s + 2  # NumPy integers defer to the expression


def test_upper_bounds_for_range_plans() -> None:
    s, b = sym("seq"), sym("batch")
    ranges = {"seq": (1, 512), "batch": (1, 8)}
    assert upper_bound(s * b * 64, ranges) == 512 * 8 * 64
    assert upper_bound((s + 1) // 2, ranges) == 256
    assert upper_bound(dim_min(s, 100), ranges) == 100
    assert upper_bound(s * 2, {"batch": (1, 8)}) is None  # seq unbounded


@pytest.mark.parametrize(
    "text",
    ["seq +", "(seq", "floordiv 2", "min(a", "3 floordiv 0", "a $ b", "floordiv"],
)
def test_malformed_expressions_are_clear_errors(text: str) -> None:
    with pytest.raises(DimError):
        parse_dim(text)


def test_a_remainder_is_bounded_by_its_divisor() -> None:
    # the pad to a multiple of 8 of a model from the wild, (8 - n mod 8) mod 8, decides
    # its sign: interval arithmetic on n * 7 - ((n * 7) floordiv 8) * 8 alone cannot
    n = sym("n")
    assert interval(mod(8 - mod(n, 8), 8)) == (0, 7)
    assert interval(mod(n + 3, 4)) == (0, 3)
    assert interval(2 * mod(n, 3) + 1) == (1, 5)
    assert interval(-mod(n, 6)) == (-5, 0)
