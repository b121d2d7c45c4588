"""Symbolic dims: integer expressions over named sizes, kept in one canonical form.

A dim of a tensor type is an ``int`` or a ``DimExpr``. A ``DimExpr`` is a polynomial with
integer coefficients over *atoms*: symbols (``seq``), floor divisions
(``(h + 1) floordiv 2``) and ``min``/``max`` of expressions. Every constructor simplifies
to one normal form and interns the result, so equal expressions are one object, compare
equal, hash alike and print the same; an expression that simplifies to a constant is a
plain ``int``. Arithmetic is Python's: ``seq * 2 + 1``, ``h // 2`` (floor division),
``ceildiv(h, 2)``, ``dim_min(a, b)``.

The normal form (the choice and why):
- a sum of monomials, each a coefficient times a sorted product of atoms, plus a constant,
  as TVM's canonical simplifier and sympy's ``Add``/``Mul`` normal form keep them. Unlike
  MLIR's affine expressions it is closed under ``sym * sym`` (flatten of ``[batch, seq]``);
  unlike sympy it is a few hundred lines, deterministic and cheap enough for every type
  the compiler builds;
- ``floordiv`` by a constant pulls out every multiple of the divisor
  (``(2*s + 3) floordiv 2 = s + 1``), keeps remainders in ``[0, d)`` and divides out common
  factors, so each floor division has one spelling; by an expression it divides exactly
  when it can (``batch*seq*768 floordiv (batch*seq*12) = 64``, a reshape's ``-1``);
  ``ceildiv(a, d)`` is ``floordiv(a + d - 1, d)`` and ``a mod d`` is ``a - d*floordiv(a, d)``;
- ``min``/``max`` flatten, fold constants and drop an argument another one surely bounds.

The one assumption simplification makes: **a symbol is a size >= 1**. So ``max(seq, 1)`` is
``seq`` (a broadcast against 1) and ``min(seq, 2**62)`` is ``seq`` (an ONNX Slice's open
end). ``bounds`` gives the interval of an expression, under that assumption or under
explicit ranges (``--dim seq=1..512``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, NoReturn, Protocol, TypeAlias, cast

Dim: TypeAlias = "int | DimExpr"
KEYWORDS = frozenset({"floordiv", "ceildiv", "mod", "min", "max"})
SIZE_MAX = 2**62
"""The largest size a symbol stands for (int64 with room for arithmetic on it)."""
_INF = math.inf


class DimError(ValueError):
    """A symbolic-dim expression that cannot be built, parsed or evaluated."""


# ---------------------------------------------------------------------------------
# Atoms
# ---------------------------------------------------------------------------------


class Atom:
    """A factor of a monomial. ``key`` orders atoms (and identifies them)."""

    __slots__ = ("_hash", "key")
    key: tuple[Any, ...]
    _hash: int

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Atom) and self.key == other.key)

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: Atom) -> bool:
        return self.key < other.key

    def symbols(self) -> frozenset[str]:
        raise NotImplementedError

    def evaluate(self, env: Mapping[str, int]) -> int:
        raise NotImplementedError

    def substitute(self, env: Mapping[str, Dim]) -> Dim:
        raise NotImplementedError

    def interval(self, ranges: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError


class Symbol(Atom):
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name
        self.key = (0, name)
        self._hash = hash(self.key)

    def symbols(self) -> frozenset[str]:
        return frozenset((self.name,))

    def evaluate(self, env: Mapping[str, int]) -> int:
        try:
            return env[self.name]
        except KeyError:
            raise DimError(f"symbolic dim '{self.name}' is not bound") from None

    def substitute(self, env: Mapping[str, Dim]) -> Dim:
        value = env.get(self.name)
        return sym(self.name) if value is None else value

    def interval(self, ranges: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
        return ranges.get(self.name, (1, SIZE_MAX))

    def text(self) -> str:
        return self.name


class FloorDiv(Atom):
    """``num floordiv den``, built only by ``floordiv`` (which simplifies first)."""

    __slots__ = ("den", "num")

    def __init__(self, num: Dim, den: Dim):
        self.num, self.den = num, den
        self.key = (1, _key(num), _key(den))
        self._hash = hash(self.key)

    def symbols(self) -> frozenset[str]:
        return symbols_of(self.num) | symbols_of(self.den)

    def evaluate(self, env: Mapping[str, int]) -> int:
        den = evaluate(self.den, env)
        if den == 0:
            raise DimError(f"division by zero in '{self.text()}'")
        return evaluate(self.num, env) // den

    def substitute(self, env: Mapping[str, Dim]) -> Dim:
        return floordiv(substitute(self.num, env), substitute(self.den, env))

    def interval(self, ranges: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
        nlo, nhi = interval(self.num, ranges)
        dlo, dhi = interval(self.den, ranges)
        if dlo <= 0:  # a divisor that may be zero or negative: no useful bound
            return (-_INF, _INF)
        lo = _floor_div_iv(nlo, dhi if nlo >= 0 else dlo)
        hi = _floor_div_iv(nhi, dlo if nhi >= 0 else dhi)
        return (lo, hi)

    def text(self) -> str:
        return f"{_operand_text(self.num)} floordiv {_operand_text(self.den)}"


class Extremum(Atom):
    """``min(a, b, ...)`` or ``max(...)``, built only by ``dim_min``/``dim_max``."""

    __slots__ = ("args", "is_max")

    def __init__(self, is_max: bool, args: tuple[Dim, ...]):
        self.is_max, self.args = is_max, args
        self.key = (3 if is_max else 2, tuple(_key(a) for a in args))
        self._hash = hash(self.key)

    @property
    def fn(self) -> Callable[..., int]:
        return max if self.is_max else min

    def symbols(self) -> frozenset[str]:
        return frozenset().union(*(symbols_of(a) for a in self.args))

    def evaluate(self, env: Mapping[str, int]) -> int:
        return self.fn(evaluate(a, env) for a in self.args)

    def substitute(self, env: Mapping[str, Dim]) -> Dim:
        return _extremum(self.is_max, [substitute(a, env) for a in self.args])

    def interval(self, ranges: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
        ivs = [interval(a, ranges) for a in self.args]
        return (self.fn(lo for lo, _ in ivs), self.fn(hi for _, hi in ivs))

    def text(self) -> str:
        return ("max(" if self.is_max else "min(") + ", ".join(str(a) for a in self.args) + ")"


Monomial = tuple[Atom, ...]
"""Atoms in ``key`` order; a repeated atom is a power."""


# ---------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------


class DimExpr:
    """A non-constant symbolic dim in canonical form (see the module docstring).

    Build with ``sym``, arithmetic and the functions below, never directly. Instances are
    interned: ``a == b`` iff ``a is b``. A bare symbol also equals (and hashes as) its
    name, so ``shape == ("batch", 3)`` and ``bindings[dim]`` read naturally.
    """

    __slots__ = ("__weakref__", "_hash", "_symbols", "const", "key", "terms")
    __array_ufunc__ = None  # NumPy defers to our reflected operators
    _TABLE: ClassVar[dict[tuple[Any, ...], DimExpr]] = {}

    terms: tuple[tuple[Monomial, int], ...]
    const: int
    key: tuple[Any, ...]
    _hash: int
    _symbols: frozenset[str] | None

    @classmethod
    def _intern(cls, terms: tuple[tuple[Monomial, int], ...], const: int) -> DimExpr:
        key = (tuple((tuple(a.key for a in m), c) for m, c in terms), const)
        found = cls._TABLE.get(key)
        if found is not None:
            return found
        self = object.__new__(cls)
        self.terms, self.const, self.key = terms, const, key
        name = self.symbol_name
        self._hash = hash(name) if name is not None else hash(key)
        self._symbols = None
        cls._TABLE[key] = self
        return self

    # -- structure ---------------------------------------------------------------------
    @property
    def symbol_name(self) -> str | None:
        """The name when this is a bare symbol, else None."""
        if self.const == 0 and len(self.terms) == 1:
            mono, coeff = self.terms[0]
            if coeff == 1 and len(mono) == 1 and isinstance(mono[0], Symbol):
                return mono[0].name
        return None

    @property
    def is_symbol(self) -> bool:
        return self.symbol_name is not None

    def symbols(self) -> frozenset[str]:
        if self._symbols is None:
            out: set[str] = set()
            for mono, _ in self.terms:
                for atom in mono:
                    out |= atom.symbols()
            self._symbols = frozenset(out)
        return self._symbols

    # -- values ---------------------------------------------------------------------
    def evaluate(self, env: Mapping[str, int]) -> int:
        total = self.const
        for mono, coeff in self.terms:
            total += coeff * math.prod(a.evaluate(env) for a in mono)
        return total

    def substitute(self, env: Mapping[str, Dim]) -> Dim:
        if not env or not (self.symbols() & env.keys()):
            return self
        total: Dim = self.const
        for mono, coeff in self.terms:
            term: Dim = coeff
            for a in mono:
                term = mul(term, a.substitute(env))
            total = add(total, term)
        return total

    def interval(self, ranges: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
        lo: float = self.const
        hi: float = self.const
        paired: set[int] = set()
        for (klo, khi), pair in _floordiv_differences(self.terms):
            lo, hi = lo + klo, hi + khi
            paired |= pair
        for (klo, khi), pair, const in _remainders(self.terms, paired):
            lo, hi = lo + klo - const, hi + khi - const
            paired |= pair
        for i, (mono, coeff) in enumerate(self.terms):
            if i in paired:
                continue
            mlo: float = 1
            mhi: float = 1
            for a in mono:
                mlo, mhi = _mul_iv((mlo, mhi), a.interval(ranges))
            tlo, thi = _mul_iv((coeff, coeff), (mlo, mhi))
            lo, hi = lo + tlo, hi + thi
        return (lo, hi)

    # -- Python protocol ---------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.symbol_name == other
        return self is other

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: object) -> bool:
        raise TypeError(f"symbolic dim '{self}' has no order; compare bounds() instead")

    __le__ = __gt__ = __ge__ = __lt__

    def __int__(self) -> int:
        raise TypeError(f"symbolic dim '{self}' has no integer value")

    def __bool__(self) -> bool:
        return True

    def __add__(self, other: object) -> Dim:
        return add(self, _coerce(other)) if _is_dim(other) else NotImplemented

    def __radd__(self, other: object) -> Dim:
        return add(_coerce(other), self) if _is_dim(other) else NotImplemented

    def __sub__(self, other: object) -> Dim:
        return add(self, neg(_coerce(other))) if _is_dim(other) else NotImplemented

    def __rsub__(self, other: object) -> Dim:
        return add(_coerce(other), neg(self)) if _is_dim(other) else NotImplemented

    def __neg__(self) -> Dim:
        return neg(self)

    def __mul__(self, other: object) -> Dim:
        return mul(self, _coerce(other)) if _is_dim(other) else NotImplemented

    def __rmul__(self, other: object) -> Dim:
        return mul(_coerce(other), self) if _is_dim(other) else NotImplemented

    def __floordiv__(self, other: object) -> Dim:
        return floordiv(self, _coerce(other)) if _is_dim(other) else NotImplemented

    def __rfloordiv__(self, other: object) -> Dim:
        return floordiv(_coerce(other), self) if _is_dim(other) else NotImplemented

    def __mod__(self, other: object) -> Dim:
        return mod(self, _coerce(other)) if _is_dim(other) else NotImplemented

    def __rmod__(self, other: object) -> Dim:
        return mod(_coerce(other), self) if _is_dim(other) else NotImplemented

    def __str__(self) -> str:
        return _poly_text(self)

    def __repr__(self) -> str:
        return f"DimExpr({str(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (parse_dim, (str(self),))

    def __copy__(self) -> DimExpr:
        return self

    def __deepcopy__(self, memo: object) -> DimExpr:
        return self


def _is_dim(v: object) -> bool:
    return (isinstance(v, int | DimExpr) and not isinstance(v, bool)) or _is_np_int(v)


def _is_np_int(v: object) -> bool:
    return type(v).__module__ == "numpy" and hasattr(v, "dtype") and v.dtype.kind in "iu"


def _coerce(v: object) -> Dim:
    return v if isinstance(v, DimExpr) else as_dim(v)


def _key(d: Dim) -> tuple[Any, ...]:
    return (1, d) if isinstance(d, int) else (0, d.key)  # constants sort last


# ---------------------------------------------------------------------------------
# Construction and arithmetic
# ---------------------------------------------------------------------------------

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def is_symbol_name(name: str) -> bool:
    return bool(_SYMBOL.match(name)) and name not in KEYWORDS


def sym(name: str) -> DimExpr:
    """The symbol ``name`` (an identifier that is not an expression keyword)."""
    if not is_symbol_name(name):
        raise DimError(f"'{name}' is not a valid symbolic dim name")
    return DimExpr._intern((((Symbol(name),), 1),), 0)


def _poly(d: Dim) -> tuple[dict[Monomial, int], int]:
    if isinstance(d, int):
        return {}, d
    return dict(d.terms), d.const


def _mono_order(mono: Monomial) -> tuple[Any, ...]:
    # Higher degree first, then by atoms: the print order.
    return (-len(mono), tuple(a.key for a in mono))


def _make(terms: Mapping[Monomial, int], const: int) -> Dim:
    kept = sorted(((m, c) for m, c in terms.items() if c), key=lambda mc: _mono_order(mc[0]))
    if not kept:
        return const
    return DimExpr._intern(tuple(kept), const)


def _atom(a: Atom) -> DimExpr:
    return cast(DimExpr, _make({(a,): 1}, 0))


def add(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    terms, const = _poly(a)
    bterms, bconst = _poly(b)
    for m, c in bterms.items():
        terms[m] = terms.get(m, 0) + c
    return _make(terms, const + bconst)


def neg(a: Dim) -> Dim:
    return mul(a, -1)


def mul(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    aterms, aconst = _poly(a)
    bterms, bconst = _poly(b)
    out: dict[Monomial, int] = {}

    def put(m: Monomial, c: int) -> None:
        out[m] = out.get(m, 0) + c

    for ma, ca in aterms.items():
        for mb, cb in bterms.items():
            put(tuple(sorted(ma + mb)), ca * cb)
        if bconst:
            put(ma, ca * bconst)
    if aconst:
        for mb, cb in bterms.items():
            put(mb, aconst * cb)
    return _make(out, aconst * bconst)


def floordiv(a: Dim, b: Dim) -> Dim:
    """``floor(a / b)``, simplified (see the module docstring)."""
    if isinstance(b, int):
        if b == 0:
            raise DimError(f"division of '{a}' by zero")
        if isinstance(a, int):
            return a // b
        if b < 0:
            a, b = neg(a), -b
        return _floordiv_const(a, b)
    exact = _exact_quotient(a, b)
    if exact is not None:
        return exact
    aterms, aconst = _poly(a)
    bterms, bconst = _poly(b)
    g = math.gcd(aconst, bconst, *aterms.values(), *bterms.values())
    if g > 1:
        a = _make({m: c // g for m, c in aterms.items()}, aconst // g)
        b = _make({m: c // g for m, c in bterms.items()}, bconst // g)
        if isinstance(b, int):
            return floordiv(a, b)
    lo, hi = interval(a, {})
    dlo, _ = interval(b, {})
    if lo >= 0 and hi < dlo:
        return 0
    return _atom(FloorDiv(a, b))


def _floordiv_const(a: Dim, b: int) -> Dim:
    if b == 1 or isinstance(a, int):
        return a if b == 1 else cast(int, a) // b
    terms, const = _poly(a)
    quotient = {m: c // b for m, c in terms.items()}
    rest = {m: c % b for m, c in terms.items() if c % b}
    q0, r0 = divmod(const, b)
    q = _make(quotient, q0)
    if not rest:
        return q
    g = math.gcd(b, r0, *rest.values())
    den = b // g
    rem = _make({m: c // g for m, c in rest.items()}, r0 // g)
    lo, hi = interval(rem, {})
    if _finite(lo) and _finite(hi) and lo // den == hi // den:
        return add(q, int(lo // den))
    return add(q, _atom(FloorDiv(rem, den)))


def _exact_quotient(a: Dim, b: Dim) -> Dim | None:
    """``a / b`` when ``b`` divides ``a`` as polynomials with integer coefficients."""
    if isinstance(b, int):
        return None
    rest = _poly(a)
    bterms, _ = _poly(b)
    lead_m, lead_c = min(bterms.items(), key=lambda mc: _mono_order(mc[0]))
    quotient: Dim = 0
    for _ in range(64):  # bounded: shapes divide in a few steps or not at all
        terms, const = rest
        if not terms:
            return quotient if const == 0 else None
        m, c = min(terms.items(), key=lambda mc: _mono_order(mc[0]))
        qm = _divide_monomial(m, lead_m)
        if qm is None or c % lead_c:
            return None
        step = _make({qm: c // lead_c}, 0) if qm else c // lead_c
        quotient = add(quotient, step)
        rest = _poly(add(_make(*rest), neg(mul(step, b))))
    return None


def _divide_monomial(m: Monomial, d: Monomial) -> Monomial | None:
    remaining = list(m)
    for atom in d:
        if atom not in remaining:
            return None
        remaining.remove(atom)
    return tuple(remaining)


def ceildiv(a: Dim, b: Dim) -> Dim:
    """``ceil(a / b)`` for a positive divisor: ``floordiv(a + b - 1, b)``."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return floordiv(add(a, add(b, -1)), b)


def mod(a: Dim, b: Dim) -> Dim:
    """``a - b * floordiv(a, b)`` (Python's sign convention)."""
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    return add(a, neg(mul(b, floordiv(a, b))))


def dim_min(*args: Dim) -> Dim:
    return _extremum(False, args)


def dim_max(*args: Dim) -> Dim:
    return _extremum(True, args)


def _extremum(is_max: bool, args: Sequence[Dim]) -> Dim:
    if args and all(type(a) is int for a in args):  # static sizes: the common case
        return max(args) if is_max else min(args)
    flat: list[Dim] = []
    for a in args:
        a = _coerce(a)
        inner = _as_extremum(a)
        if inner is not None and inner.is_max == is_max:
            flat.extend(inner.args)
        else:
            flat.append(a)
    if not flat:
        raise DimError("min/max of no dims")
    ints = [a for a in flat if isinstance(a, int)]
    unique: list[Dim] = []
    for a in flat:
        if not isinstance(a, int) and a not in unique:
            unique.append(a)
    if ints:
        unique.append(max(ints) if is_max else min(ints))
    kept: list[Dim] = []
    for x in unique:
        # For min, x is redundant if some other y <= x surely; for max, if y >= x.
        dominated = False
        inner = _as_extremum(x)
        for y in unique:
            if y is x:
                continue
            if inner is not None and inner.is_max != is_max and y in inner.args:
                dominated = True  # max(y, min(y, ...)) = y and min(y, max(y, ...)) = y
                break
            lo, hi = interval(add(y, neg(x)), {})
            bounds = (hi <= 0 and not is_max) or (lo >= 0 and is_max)
            if bounds and not (lo == hi == 0 and _key(y) > _key(x)):
                dominated = True
                break
        if not dominated:
            kept.append(x)
    if len(kept) == 1:
        return kept[0]
    kept.sort(key=_key)
    return _atom(Extremum(is_max, tuple(kept)))


def _as_extremum(d: Dim) -> Extremum | None:
    if isinstance(d, DimExpr) and d.const == 0 and len(d.terms) == 1:
        mono, coeff = d.terms[0]
        if coeff == 1 and len(mono) == 1 and isinstance(mono[0], Extremum):
            return mono[0]
    return None


# ---------------------------------------------------------------------------------
# Functions on any dim (int or expression)
# ---------------------------------------------------------------------------------


def is_symbol(d: object) -> bool:
    """Whether ``d`` is a bare symbol (``seq``, not ``seq + 1``)."""
    return isinstance(d, DimExpr) and d.symbol_name is not None


def symbols_of(d: Dim) -> frozenset[str]:
    return frozenset() if isinstance(d, int) else d.symbols()


def evaluate(d: Dim, env: Mapping[str, int]) -> int:
    return d if isinstance(d, int) else d.evaluate(env)


def substitute(d: Dim, env: Mapping[str, Dim]) -> Dim:
    return d if isinstance(d, int) else d.substitute(env)


def interval(
    d: Dim, ranges: Mapping[str, tuple[float, float]] | None = None
) -> tuple[float, float]:
    """``(lo, hi)`` bounds of a dim; symbols range over ``ranges`` (default
    ``[1, SIZE_MAX]``). Sound, not always tight (interval arithmetic)."""
    if isinstance(d, int):
        return (d, d)
    return d.interval(ranges or {})


def upper_bound(d: Dim, ranges: Mapping[str, tuple[int, int]]) -> int | None:
    """The largest value ``d`` can take with its symbols in ``ranges`` (None: a symbol
    outside ``ranges``, or a division by what may be zero, makes it unbounded)."""
    if not symbols_of(d) <= ranges.keys():
        return None
    _, hi = interval(d, dict(ranges))
    return int(hi) if _finite(hi) else None


def _floordiv_differences(
    terms: Sequence[tuple[Monomial, int]],
) -> Iterator[tuple[tuple[int, int], set[int]]]:
    """Pairs ``c * (n + k) floordiv d - c * n floordiv d`` among single-atom terms: their
    sum lies in ``c * [floor(k/d), ceil(k/d)]`` whatever ``n`` is, a bound interval
    arithmetic alone cannot see (it makes ceil-mode window sizes simplify)."""
    used: set[int] = set()
    for i, (mi, ci) in enumerate(terms):
        if i in used or ci <= 0 or len(mi) != 1 or not isinstance(mi[0], FloorDiv):
            continue
        for j, (mj, cj) in enumerate(terms):
            if j in used or j == i or cj != -ci or len(mj) != 1:
                continue
            a, b = mi[0], mj[0]
            if not isinstance(b, FloorDiv) or a.den != b.den or not isinstance(a.den, int):
                continue
            k = add(a.num, neg(b.num))
            if isinstance(k, int):
                used |= {i, j}
                bounds = (ci * (k // a.den), ci * -(-k // a.den))
                yield (min(bounds), max(bounds)), {i, j}
                break


def _remainders(
    terms: Sequence[tuple[Monomial, int]], taken: set[int]
) -> Iterator[tuple[tuple[int, int], set[int], int]]:
    """Terms that add up to ``c * (a mod d)``, i.e. ``c * a - c * d * (a floordiv d)``
    (the canonical form of a mod, ``(8 - n mod 8) mod 8`` for a pad to a multiple):
    in ``c * [0, d - 1]``, which interval arithmetic on the parts cannot see. Yields the
    bounds, the terms used and ``c * a``'s constant (held in the sum's constant)."""
    used = set(taken)
    index = {(mono, coeff): i for i, (mono, coeff) in enumerate(terms)}
    for i, (mono, coeff) in enumerate(terms):
        if i in used or len(mono) != 1 or not isinstance(mono[0], FloorDiv):
            continue
        f = mono[0]
        if (
            not isinstance(f.den, int)
            or f.den <= 0
            or coeff % f.den
            or not isinstance(f.num, DimExpr)
        ):
            continue
        c = -coeff // f.den
        parts = [index.get((m, c * k)) for m, k in f.num.terms]
        if c == 0 or any(j is None or j in used or j == i for j in parts):
            continue
        pair = {i, *(j for j in parts if j is not None)}
        used |= pair
        bounds = (0, c * (f.den - 1))
        yield (min(bounds), max(bounds)), pair, c * f.num.const


def _finite(x: float) -> bool:
    return not isinstance(x, float) or math.isfinite(x)


def _mul_iv(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    def m(x: float, y: float) -> float:
        return 0 if x == 0 or y == 0 else x * y

    products = [m(a[0], b[0]), m(a[0], b[1]), m(a[1], b[0]), m(a[1], b[1])]
    return (min(products), max(products))


def _floor_div_iv(x: float, y: float) -> float:
    if not _finite(x):
        return x
    if not _finite(y):
        return 0 if x >= 0 else -1
    return int(x) // int(y)


# ---------------------------------------------------------------------------------
# Text form
# ---------------------------------------------------------------------------------


def _mono_text(mono: Monomial) -> str:
    parts = []
    for a in mono:
        t = a.text()
        parts.append(f"({t})" if isinstance(a, FloorDiv) and len(mono) > 1 else t)
    return " * ".join(parts)


def _poly_text(e: DimExpr) -> str:
    out = ""
    for i, (mono, coeff) in enumerate(e.terms):
        body = _mono_text(mono)
        if abs(coeff) != 1:
            body = f"({body})" if isinstance(mono[0], FloorDiv) and len(mono) == 1 else body
            body += f" * {abs(coeff)}"
        if i == 0:
            if coeff < 0 and any(isinstance(a, FloorDiv) for a in mono):
                body = f"({body})"  # a leading '-' binds tighter than floordiv
            out = ("-" if coeff < 0 else "") + body
        else:
            out += (" - " if coeff < 0 else " + ") + body
    if e.const:
        out += (" - " if e.const < 0 else " + ") + str(abs(e.const))
    return out


def _operand_text(d: Dim) -> str:
    """A floordiv operand: parenthesised unless it is a number or a single atom."""
    if isinstance(d, int):
        return str(d) if d >= 0 else f"({d})"
    if d.const == 0 and len(d.terms) == 1 and d.terms[0][1] == 1 and len(d.terms[0][0]) == 1:
        atom = d.terms[0][0][0]
        return atom.text() if not isinstance(atom, FloorDiv) else f"({atom.text()})"
    return f"({d})"


class TokenSource(Protocol):
    """What the dim grammar reads: the IR parser and the string lexer both provide it."""

    def punct(self, p: str) -> bool: ...
    def integer(self) -> int | None: ...
    def keyword(self, words: frozenset[str]) -> str | None: ...
    def identifier(self) -> str | None: ...
    def error(self, message: str) -> NoReturn: ...


def parse_dim_tokens(src: TokenSource) -> Dim:
    """The dim grammar (MLIR affine-expression spelling, plus min/max)::

    dim    := term (('+' | '-') term)*
    term   := factor (('*' | 'floordiv' | 'ceildiv' | 'mod') factor)*
    factor := integer | symbol | '(' dim ')' | '-' factor | ('min'|'max') '(' dim (',' dim)* ')'
    """

    def dim() -> Dim:
        value = term()
        while True:
            if src.punct("+"):
                value = add(value, term())
            elif src.punct("-"):
                value = add(value, neg(term()))
            else:
                return value

    def term() -> Dim:
        value = factor()
        while True:
            if src.punct("*"):
                value = mul(value, factor())
                continue
            word = src.keyword(_TERM_OPS)
            if word == "floordiv":
                value = floordiv(value, factor())
            elif word == "ceildiv":
                value = ceildiv(value, factor())
            elif word == "mod":
                value = mod(value, factor())
            else:
                return value

    def factor() -> Dim:
        n = src.integer()
        if n is not None:
            return n
        if src.punct("-"):
            return neg(factor())
        if src.punct("("):
            value = dim()
            if not src.punct(")"):
                src.error("expected ')' in a dim expression")
            return value
        name = src.identifier()
        if name is None:
            src.error("expected an integer or a symbolic dim")
        if name in ("min", "max"):
            if not src.punct("("):
                src.error(f"expected '(' after '{name}'")
            args = [dim()]
            while src.punct(","):
                args.append(dim())
            if not src.punct(")"):
                src.error(f"expected ')' closing '{name}('")
            return _extremum(name == "max", args)
        if name in KEYWORDS:
            src.error(f"'{name}' needs a left operand")
        return sym(name)

    try:
        return dim()
    except DimError as err:  # an arithmetic error (division by zero) at its place
        src.error(str(err))


_TERM_OPS = frozenset({"floordiv", "ceildiv", "mod"})


class _StringTokens:
    _TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(\S))")

    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while True:
            m = self._TOKEN.match(text, pos)
            if m is None:
                break
            kind = "int" if m.group(1) else "id" if m.group(2) else "p"
            self.tokens.append((kind, m.group(m.lastindex or 0), m.start(m.lastindex or 0)))
            pos = m.end()
        if text[pos:].strip():
            self.error(f"unexpected '{text[pos:].strip()}'")
        self.i = 0

    def _peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def punct(self, p: str) -> bool:
        t = self._peek()
        if t is not None and t[0] == "p" and t[1] == p:
            self.i += 1
            return True
        return False

    def integer(self) -> int | None:
        t = self._peek()
        if t is not None and t[0] == "int":
            self.i += 1
            return int(t[1])
        return None

    def identifier(self) -> str | None:
        t = self._peek()
        if t is not None and t[0] == "id":
            self.i += 1
            return t[1]
        return None

    def keyword(self, words: frozenset[str]) -> str | None:
        t = self._peek()
        if t is not None and t[0] == "id" and t[1] in words:
            self.i += 1
            return t[1]
        return None

    def done(self) -> bool:
        return self.i == len(self.tokens)

    def error(self, message: str) -> NoReturn:
        raise DimError(f"bad dim expression '{self.text}': {message}")


def parse_dim(text: str) -> Dim:
    """``"seq * 2 + 1"`` -> the dim. Raises DimError for a malformed expression."""
    src = _StringTokens(text)
    value = parse_dim_tokens(src)
    if not src.done():
        src.error(f"unexpected '{src.tokens[src.i][1]}'")
    return value


def as_dim(d: object) -> Dim:
    """An int, a DimExpr, a NumPy integer or an expression string, as a dim."""
    if type(d) is int:  # the common case, first
        return d
    if isinstance(d, DimExpr):
        return d
    if isinstance(d, bool):
        raise DimError(f"invalid dim {d!r}")
    if isinstance(d, int) or _is_np_int(d):
        return int(cast(int, d))
    if isinstance(d, str):
        return parse_dim(d)
    raise DimError(f"invalid dim {d!r}: expected an int, a symbol or a dim expression")


def shape_symbols(shape: Sequence[Dim]) -> tuple[str, ...]:
    """The symbols of a shape, sorted, without repeats."""
    out: set[str] = set()
    for d in shape:
        out |= symbols_of(d)
    return tuple(sorted(out))
