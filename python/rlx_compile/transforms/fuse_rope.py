"""``fuse-rope``: rotate-half rotary embeddings as exporters spell them, as one ``mir.rope``.

``x · cos + rotate_half(x) · sin`` with ``rotate_half(x) = concat(-x[..., h:], x[..., :h])``
on the last dim (d = 2h): the halves are narrows (ONNX Split and single-axis Slice import
as narrows), the negation ``neg`` or ``· -1``; either addend first, either factor order.
Every intermediate must be read by the chain alone. A second pattern,
``partial_rope``, makes ``concat(rope(x[..., :r]), x[..., r:])`` one ``mir.rope`` with
``rotary_dim = r`` (data movement only: exact).

``mir.rope`` takes cos/sin tables that broadcast to ``[..., S, h]``, one angle per channel
pair; exporters multiply by tables covering all d channels, whose two halves are equal
(``cat(freqs, freqs)``). The pass uses a table whose last dim is 1 as it is, and otherwise
its first half when the halves are provably equal:
- a constant whose halves are equal (a new constant holds the first half);
- ``concat(a, a)`` on the last axis (``a``);
- an op that treats the last dim pointwise applied to such a table -- elementwise unary
  ops (cos, sin, ...), casts, a binary op with a one-element constant, reshapes and
  expands that keep the last dim, transposes that leave it in place, narrows and gathers
  on other axes -- rebuilt on the half (the same values, so bit-identical tables).
A table that is a param (its values unknown until run time) cannot be halved: the chain
is a near miss (bind the params with ``param_bindings`` to make them constants).

Not bit-exact: the reference rope evaluates both products in float64 and rounds once,
the decomposition rounds each product and the sum (a few ulp).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import GraphBuilder, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.dialects.types import Dim, TensorType, fmt_shape
from rlx_compile.folding import constant_value
from rlx_compile.fusion.base import (
    FusionContext,
    FusionPattern,
    Match,
    Miss,
    chain_miss,
    defined_before,
    describe_uses,
    is_output,
    producer,
    scalar_constant,
    users,
)
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.RopeOp.name
HINT = "the rotation's intermediates must be read by the rotation alone"
MAX_TABLE_OPS = 8
"""Ops followed from a table back to where its halves are known equal."""

Build = Callable[[GraphBuilder], SSAValue]
"""Emits the half table (or returns an existing value) at the rewrite."""


def _channels(v: SSAValue) -> tuple[Operation, SSAValue, Dim, Dim] | None:
    """(op, x, start, length) for ``v`` = x[..., start : start + length]: a narrow of the
    last axis, or a unit-step slice taking every other axis whole."""
    op = v.owner
    if isinstance(op, mir.NarrowOp) and op.props().int("axis") == type_of(v).rank - 1:
        return op, op.input, op.start_dim, op.length
    if isinstance(op, mir.SliceOp):
        src, out = type_of(op.input), type_of(v)
        starts, steps = op.props().ints("starts"), op.props().ints("steps")
        if set(steps) == {1} and not any(starts[:-1]) and src.shape[:-1] == out.shape[:-1]:
            return op, op.input, starts[-1], out.shape[-1]
    return None


def _narrow_of(v: SSAValue, x: SSAValue, start: int, length: Dim) -> Operation | None:
    """The op taking ``x[..., start : start + length]`` as ``v``, if that is ``v``."""
    found = _channels(v)
    if found is None or found[1] is not x or found[2:] != (start, length):
        return None
    return found[0]


def _negated(v: SSAValue) -> tuple[Operation, SSAValue] | None:
    """(the negating op, its input) for ``neg(y)`` or ``y · -1``."""
    neg = producer(v, mir.NegOp)
    if neg is not None:
        return neg, neg.input
    mul = producer(v, mir.MulOp)
    if mul is not None:
        for y, c in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
            if scalar_constant(c) == -1.0 and y.type == v.type:
                return mul, y
    return None


@dataclass
class _RotateHalf:
    ops: list[Operation]
    links: list[tuple[SSAValue, Operation, str]]


def _rotate_half(r: SSAValue, x: SSAValue) -> _RotateHalf | None:
    """``r`` = concat(-x[..., h:], x[..., :h]) on the last axis."""
    cat = producer(r, mir.ConcatOp)
    t = type_of(x)
    d = t.shape[-1] if t.rank else None
    if cat is None or not isinstance(d, int) or d % 2 or len(cat.inputs) != 2:
        return None
    if cat.props().int("axis") != t.rank - 1:
        return None
    h = d // 2
    neg = _negated(cat.inputs[0])
    first = _narrow_of(cat.inputs[1], x, 0, h)
    if neg is None or first is None:
        return None
    second = _narrow_of(neg[1], x, h, h)
    if second is None:
        return None
    links = [
        (neg[1], neg[0], "the upper half"),
        (neg[0].results[0], cat, "the negated half"),
        (cat.inputs[1], cat, "the lower half"),
    ]
    return _RotateHalf([second, neg[0], first, cat], links)


def _halved(t: TensorType) -> TensorType:
    d = t.shape[-1]
    assert isinstance(d, int)
    return t.with_shape((*t.shape[:-1], d // 2))


def _pointwise_operand(op: Operation) -> int | None:
    """The operand a (single-result) op maps to its result with the last dim pointwise:
    result[..., j] depends on that operand's [..., j] alone, so the op commutes with
    taking the first half of the last dim."""
    out = op.results[0].type if len(op.results) == 1 else None
    if not isinstance(out, TensorType) or out.rank == 0:
        return None
    flowing = op.last_dim_pointwise_operands() if isinstance(op, ShapedOp) else ()
    if len(flowing) == 1:
        return flowing[0]
    # An elementwise combination: one operand carries the table, the others are scalars.
    for i in flowing:
        others = [op.operands[j] for j in flowing if j != i]
        if op.operands[i].type == out and all(scalar_constant(v) is not None for v in others):
            return i
    return None


def _half(v: SSAValue, budget: int = MAX_TABLE_OPS) -> Build | None:
    """How to get ``v[..., :h]`` when ``v``'s two halves along the last dim are provably
    equal, else None."""
    array = constant_value(v)
    if array is not None:
        if array.ndim == 0:
            return None
        h = array.shape[-1] // 2
        if array.shape[-1] % 2 or not np.array_equal(array[..., :h], array[..., h:]):
            return None
        half = np.ascontiguousarray(array[..., :h])
        dtype = type_of(v).dtype
        return lambda b: b.constant(half, dtype)
    if not isinstance(v, OpResult) or budget == 0:
        return None
    op = v.op
    if isinstance(op, mir.ConcatOp):
        ins = op.inputs
        if len(ins) == 2 and ins[0] is ins[1] and op.props().int("axis") == type_of(v).rank - 1:
            return lambda b: ins[0]
        return None
    i = _pointwise_operand(op)
    inner = _half(op.operands[i], budget - 1) if i is not None else None
    if inner is None:
        return None
    assert i is not None

    def build(b: GraphBuilder) -> SSAValue:
        operands = list(op.operands)
        operands[i] = inner(b)
        new = type(op).create(
            operands=operands,
            result_types=[_halved(type_of(v))],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        return b.emit(new).results[0]

    return build


def _table(t: SSAValue, x: SSAValue, what: str) -> Build | Miss:
    """The table as ``mir.rope`` takes it (a Miss saying why it cannot be had)."""
    if type_of(t).shape[-1:] in ((), (1,)):
        return lambda b: t  # one angle for all channels: already what mir.rope takes
    build = _half(t)
    if build is not None:
        return build
    return Miss(
        f"{what} {fmt_shape(type_of(t).shape)} spans all {type_of(x).shape[-1]} rotated "
        "channels and its two halves are not known to be equal",
        "mir.rope takes one angle per channel pair: make the tables constants "
        "(param_bindings) or compute them as concat(freqs, freqs)",
    )


@dataclass
class RopeMatch(Match):
    x: SSAValue
    cos: SSAValue
    sin: SSAValue
    tables: tuple[Build, Build]


def _products(add: mir.AddOp) -> list[tuple[mir.MulOp, SSAValue, SSAValue, mir.MulOp, SSAValue]]:
    """(x·cos mul, x, cos, rot·sin mul, rot) readings of add(p, q), in every order."""
    out = []
    for p, q in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        m1, m2 = producer(p, mir.MulOp), producer(q, mir.MulOp)
        if m1 is None or m2 is None:
            continue
        for x, c in ((m1.lhs, m1.rhs), (m1.rhs, m1.lhs)):
            for r in (m2.lhs, m2.rhs):
                out.append((m1, x, c, m2, r))
    return out


class FuseRope(FusionPattern):
    name = "rope"
    roots = (mir.AddOp,)
    needs = (mir.ConcatOp,)  # rotate_half

    def __init__(self, ctx: FusionContext):
        super().__init__(ctx)
        self.halves: dict[SSAValue, SSAValue] = {}

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.AddOp)
        out = type_of(op.result)
        if not out.dtype.is_float:
            return None
        for m1, x, cos, m2, r in _products(op):
            rot = _rotate_half(r, x)
            if rot is None or any(v.type != out for v in (x, m1.result, m2.result)):
                continue
            sin = m2.rhs if r is m2.lhs else m2.lhs
            miss = chain_miss(
                [*rot.links, (r, m2, "the rotated half"), (m1.result, op, "x · cos"),
                 (m2.result, op, "rotate_half(x) · sin")],
                HINT,
            )  # fmt: skip
            if miss is not None:
                return miss
            tables = [_table(cos, x, "cos"), _table(sin, x, "sin")]
            for t in tables:
                if isinstance(t, Miss):
                    return t
            if (miss := self.ctx.unclaimed(FUSED)) is not None:
                return miss
            c, s = tables
            assert not isinstance(c, Miss) and not isinstance(s, Miss)
            return RopeMatch(op, [*rot.ops, m2, m1, op], x, cos, sin, (c, s))
        return None

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, RopeMatch)
        b, ops = self.builder(m.root)
        cos, sin = (
            self._table(t, build, b, m.root)
            for t, build in zip((m.cos, m.sin), m.tables, strict=True)
        )
        self.replace(rewriter, m, ops, [b.rope(m.x, cos, sin)])

    def _table(self, table: SSAValue, build: Build, b: GraphBuilder, root: Operation) -> SSAValue:
        """The half of ``table`` built for an earlier rotation when it is available here
        (q and k share their tables, and the attention block wants them shared), else
        a new one."""
        known = self.halves.get(table)
        if known is not None and defined_before(known, root):
            return known
        half = build(b)
        if half is not table and half.name_hint is None:
            half.name_hint = f"{table.name_hint or 'table'}_half"
        self.halves[table] = half
        return half


def _mul_operands(v: SSAValue) -> tuple[SSAValue, ...]:
    mul = producer(v, mir.MulOp)
    return (mul.lhs, mul.rhs) if mul is not None else ()


def _times(v: SSAValue, x: SSAValue) -> SSAValue | None:
    """t for ``v`` = x · t or t · x, where t broadcasts onto x without enlarging it."""
    mul = producer(v, mir.MulOp)
    if mul is None or v.type != x.type:
        return None
    if mul.lhs is x:
        return mul.rhs
    return mul.lhs if mul.rhs is x else None


@dataclass
class HalvesMatch(Match):
    x: SSAValue
    cos: SSAValue
    sin: SSAValue


class FuseRopeHalves(FusionPattern):
    """``concat(x1·c - x2·s, x2·c + x1·s)`` over the halves x1, x2 of x's last dim (the
    rotation with half tables, as ``legalize`` decomposes mir.rope) -> ``rope(x, c, s)``
    (of ``x[..., :2h]`` when x has more channels: ``partial_rope`` then takes the rest)."""

    name = "rope"
    roots = (mir.ConcatOp,)
    needs = (mir.SubOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.ConcatOp)
        out = type_of(op.result)
        if len(op.inputs) != 2 or op.props().int("axis") != out.rank - 1:
            return None
        lo, hi = producer(op.inputs[0], mir.SubOp), producer(op.inputs[1], mir.AddOp)
        d = out.shape[-1]
        if lo is None or hi is None or not out.dtype.is_float or not isinstance(d, int):
            return None
        h = d // 2
        # x1 · c: x1 is the first h channels of an x whose leading dims are the
        # concat's (channels past 2h pass through: a partial rotation).
        x1 = x = None
        for v in _mul_operands(lo.lhs):
            found = _channels(v)
            if found is None or found[2:] != (0, h):
                continue
            xt = type_of(found[1])
            last = xt.shape[-1]
            if xt.shape[:-1] == out.shape[:-1] and isinstance(last, int) and last >= d:
                x1, x = v, found[1]
                break
        if x1 is None or x is None:
            return None
        x2 = next((v for v in _mul_operands(lo.rhs) if _narrow_of(v, x, h, h)), None)
        if x2 is None:
            return None
        cos, sin = _times(lo.lhs, x1), _times(lo.rhs, x2)
        if cos is None or sin is None:
            return None
        p, q = hi.lhs, hi.rhs
        if not any(_times(a, x2) is cos and _times(b, x1) is sin for a, b in ((p, q), (q, p))):
            return None
        muls = [v.owner for v in (lo.lhs, lo.rhs, p, q)]
        for half in (x1, x2):
            if any(not any(u is m for m in muls) for u in users(half)) or is_output(half):
                return Miss(describe_uses(half, "a half of x"), HINT)
        miss = chain_miss(
            [(lo.lhs, lo, "x1 · c"), (lo.rhs, lo, "x2 · s"), (p, hi, "a product"),
             (q, hi, "a product"), (lo.result, op, "the lower half"),
             (hi.result, op, "the upper half")],
            HINT,
        )  # fmt: skip
        if miss is not None:
            return miss
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        absorbed = [x1.owner, x2.owner, *muls, lo, hi, op]
        return HalvesMatch(op, absorbed, x, cos, sin)  # type: ignore[arg-type]

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, HalvesMatch)
        b, ops = self.builder(m.root)
        d = type_of(m.root.results[0]).shape[-1]
        x = m.x if type_of(m.x).shape[-1] == d else b.narrow(m.x, -1, 0, d)
        self.replace(rewriter, m, ops, [b.rope(x, m.cos, m.sin)])


@dataclass
class PartialMatch(Match):
    rope: mir.RopeOp
    x: SSAValue
    rotary_dim: int


class FusePartialRope(FusionPattern):
    """``concat(rope(x[..., :r]), x[..., r:])`` -> ``rope(x, rotary_dim=r)``."""

    name = "partial_rope"
    roots = (mir.ConcatOp,)
    needs = (mir.RopeOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.ConcatOp)
        if len(op.inputs) != 2:
            return None
        rotated, passed = op.inputs
        rope = producer(rotated, mir.RopeOp)
        head = _channels(rope.input) if rope is not None else None
        if rope is None or head is None or op.props().int("axis") != type_of(op.result).rank - 1:
            return None
        p = rope.props()
        _, x, start, r = head
        d = type_of(x).shape[-1]
        if p.flag("interleaved") or p.opt_int("rotary_dim") not in (None, r) or start != 0:
            return None
        if not isinstance(d, int) or not isinstance(r, int) or op.result.type != x.type:
            return None
        tail = _narrow_of(passed, x, r, d - r)
        if tail is None:
            return None
        miss = chain_miss(
            [(rope.input, rope, "the rotated channels"), (rotated, op, "the rope"),
             (passed, op, "the passed-through channels")],
            HINT,
        )  # fmt: skip
        if miss is not None:
            return miss
        return PartialMatch(op, [head[0], rope, tail, op], rope, x, r)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, PartialMatch)
        b, ops = self.builder(m.root)
        y = b.rope(m.x, m.rope.cos, m.rope.sin, rotary_dim=m.rotary_dim)
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseRopePass(FusionPass):
    """Recognise x·cos + rotate_half(x)·sin (and partial rotation) as one mir.rope."""

    name = "fuse-rope"
    PATTERNS = (FuseRope, FuseRopeHalves, FusePartialRope)
