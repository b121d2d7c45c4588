"""Common subexpression elimination of a block (``cse_block``): the ``cse`` pass's work.

A forward walk keeps the first op of each kind of computation and replaces later
duplicates by it. Two ops compute the same value when they have:

- the same name and the same operands *in the same order*: there is no commutativity
  canonicalisation, so ``sub(x, y)`` and ``sub(y, x)`` stay apart, and so do
  ``max(x, y)`` and ``max(y, x)``, whose reference results differ in the sign of a zero;
- equal result types, properties and attributes, compared structurally (a cast to f16
  and one to bf16 differ, as do reshapes to different shapes or constants with
  different bytes);
- structurally equal regions (two ``hir.region``s with different bodies stay apart).

Only side-effect-free ops merge: ``mir.input`` has no ``Pure`` trait, so two inputs of
one shape remain distinct values, and calls are never merged; equal constants and
same-named params do merge (they are the same value). Nested regions are walked with the
enclosing ops in scope. Unlike xDSL's ``cse``, dead ops are left to ``dce``, so running
the pass twice changes nothing the second time.

The build compiles this module with mypyc (``rlx_compile._compiled``), which a pass
class cannot be part of: the ``cse`` pass is ``transforms.cse``.
"""

from __future__ import annotations

from xdsl.ir import Attribute, Block, Operation
from xdsl.traits import IsolatedFromAbove, IsTerminator, Pure

from rlx_compile.dialects.common import RawDataAttr


class _Computation:
    """An op as a hashable description of what it computes."""

    __slots__ = ("_hash", "op", "types")

    def __init__(self, op: Operation, hashes: _AttributeHashes):
        self.op = op
        self.types = tuple([r.type for r in op.results])
        self._hash = hash(
            (
                op.name,
                tuple(map(id, op._operands)),  # as the values hash, without their __hash__
                tuple([hashes.of(t) for t in self.types]),
                hashes.of_dict(op.properties),
                hashes.of_dict(op.attributes) if op.attributes else 0,
                len(op.regions),
            )
        )

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Computation) or other._hash != self._hash:
            return False
        a, b = self.op, other.op
        return (
            a.name == b.name
            and a.operands == b.operands
            and self.types == other.types
            and a.properties == b.properties
            and a.attributes == b.attributes
            and len(a.regions) == len(b.regions)
            and all(
                r.is_structurally_equivalent(s) for r, s in zip(a.regions, b.regions, strict=True)
            )
        )


_SAMPLE = 64
"""Bytes of raw data hashed at each end; equality still compares all of it."""


class _AttributeHashes:
    """Hashes of the attributes of one pass run, each computed once: interned types and
    shared properties recur on many ops, hashing an attribute walks its parameters, and
    a constant's raw data is hashed by its length and ends alone (a fresh weight's full
    hash would read every byte)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Attribute, int]] = {}  # by id; keeps the attribute

    def of(self, attr: Attribute) -> int:
        known = self._known.get(id(attr))
        if known is None:
            if isinstance(attr, RawDataAttr):
                data = attr.data
                h = hash((len(data), data[:_SAMPLE], data[-_SAMPLE:]))
            else:
                h = hash(attr)
            known = self._known[id(attr)] = (attr, h)
        return known[1]

    def of_dict(self, attrs: dict[str, Attribute]) -> int:
        """Independent of the order of the entries, as dict equality is."""
        total = 0
        for name, a in attrs.items():
            total += hash((name, self.of(a)))
        return total


_PURE_KIND: dict[type[Operation], bool] = {}
"""Whether ops of a class may merge as far as their traits say (pure, not a terminator):
traits belong to the class."""


def _mergeable(op: Operation) -> bool:
    kind = type(op)
    pure = _PURE_KIND.get(kind)
    if pure is None:
        pure = _PURE_KIND[kind] = op.has_trait(Pure) and not op.has_trait(IsTerminator)
    if not pure or not op.results:
        return False
    return not op.regions or all(len(r.blocks) <= 1 for r in op.regions)


class _Scope:
    """The ops seen in scope, each the first of its computation. An op that reads values
    is described (``_Computation``, which hashes its attributes) only once another op
    has its name and operands -- the cheap key any op computing the same value shares:
    most ops have none, and then only the key is kept (``firsts``)."""

    __slots__ = ("firsts", "known")

    def __init__(
        self,
        firsts: dict[tuple[object, ...], Operation | None] | None = None,
        known: dict[_Computation, Operation] | None = None,
    ):
        self.firsts = {} if firsts is None else firsts
        """By name and operands (by ``id``): the one op so far, or None once ``known``
        holds them."""
        self.known = {} if known is None else known

    def copy(self) -> _Scope:
        return _Scope(dict(self.firsts), dict(self.known))


def cse_block(block: Block) -> int:
    """Merge duplicates in ``block`` (and nested blocks); returns the number removed."""
    return _CSE().block(block, _Scope())


class _CSE:
    def __init__(self) -> None:
        self.hashes = _AttributeHashes()

    def first(self, op: Operation, scope: _Scope) -> Operation | None:
        """The op in scope computing what ``op`` does; None (``op`` joins the scope) if
        there is none."""
        operands = op._operands  # the tuple behind op.operands
        if operands:
            # (A value outlives the pass's use of its id: ops here read values of ops
            # that stay, and the pass makes none.)
            key = (op.name, *map(id, operands))
            firsts = scope.firsts
            alone = firsts.setdefault(key, op)
            if alone is op:
                return None
            if alone is not None:  # a second op of that name and operands: describe both
                scope.known[_Computation(alone, self.hashes)] = alone
                firsts[key] = None
        computation = _Computation(op, self.hashes)
        first = scope.known.get(computation)
        if first is None:
            scope.known[computation] = op
        return first

    def block(self, block: Block, scope: _Scope) -> int:
        removed = 0
        op = block.first_op
        while op is not None:
            following = op.next_op
            for region in op.regions:
                for nested in region.blocks:
                    # Values of the enclosing block stay visible unless the op isolates itself.
                    inner = _Scope() if op.has_trait(IsolatedFromAbove) else scope.copy()
                    removed += self.block(nested, inner)
            if _mergeable(op) and (first := self.first(op, scope)) is not None:
                for old, new in zip(op.results, first.results, strict=True):
                    old.replace_all_uses_with(new)
                block.erase_op(op)
                removed += 1
            op = following
        return removed
