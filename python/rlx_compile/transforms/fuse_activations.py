"""``fuse-activations``: the activations exporters spell as chains, as one op each.

- ``mir.clip``: ``min(max(x, lo), hi)`` or ``max(min(x, hi), lo)`` with scalar constants
  ``lo <= hi`` (a Clip the converter could not take whole, ReLU6 from older exporters);
- ``mir.hard_sigmoid``: ``clip(alpha·x + beta, 0, 1)`` and ``clip(x + c, 0, d) / d``
  (alpha ``1/d``, beta ``c/d``);
- ``mir.hard_swish``: ``x · clip(x + 3, 0, 6) / 6`` in its spellings (divided or multiplied
  by 1/6, either operand order; PaddlePaddle and older PyTorch exports) and
  ``x · hard_sigmoid(x)`` with alpha 1/6, beta 1/2;
- ``mir.leaky_relu``: ``where(x < 0, alpha·x, x)`` (and ``x > 0`` with the arms swapped)
  and ``max(x, alpha·x)`` for ``0 <= alpha <= 1``.

Every intermediate must be read by the chain alone. One op instead of two to four saves
their full-size intermediates and lets a preceding conv or matmul take the activation
as its epilogue. The rewritten chains agree with the decompositions to rounding (the
constants 1/6 and c/d are taken to 1e-6).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import ComparePredicate
from rlx_compile.fusion.base import (
    FusionPattern,
    Match,
    Miss,
    chain_miss,
    producer,
    scalar_constant,
)
from rlx_compile.fusion.stage import FusionPass

_CHAIN = "the activation's intermediates must be read by the chain alone"


def _near(value: float | None, want: float) -> bool:
    return value is not None and abs(value - want) <= 1e-6 * max(1.0, abs(want))


def _split(op: Operation, kind: type[Operation] | None = None) -> tuple[SSAValue, float] | None:
    """For a binary op with one scalar-constant operand: (the other operand, the scalar)
    (``kind`` restricts which op produces the other operand)."""
    a, b = op.operands
    for x, c in ((a, b), (b, a)):
        value = scalar_constant(c)
        if value is not None and (kind is None or producer(x, kind) is not None):
            return x, value
    return None


def _links(chain: list[Operation]) -> list[tuple[SSAValue, Operation, str]]:
    """Each op of a linear chain with the op that must be its only reader."""
    return [(a.results[0], b, f"the {a.name} result") for a, b in pairwise(chain)]


def _float_result(op: Operation) -> bool:
    return type_of(op.results[0]).dtype.is_float


# ---------------------------------------------------------------------------------
# clip
# ---------------------------------------------------------------------------------


@dataclass
class ClipMatch(Match):
    x: SSAValue
    lo: float
    hi: float


class FuseClip(FusionPattern):
    name = "clip"
    roots = (mir.MinOp, mir.MaxOp)

    def match(self, op: Operation) -> Match | Miss | None:
        if not _float_result(op):
            return None
        outer = _split(op, mir.MaxOp if isinstance(op, mir.MinOp) else mir.MinOp)
        if outer is None:
            return None
        inner_value, outer_c = outer
        inner = inner_value.owner
        assert isinstance(inner, Operation)
        found = _split(inner)
        if found is None or type_of(found[0]) != type_of(op.results[0]):
            return None
        x, inner_c = found
        lo, hi = (inner_c, outer_c) if isinstance(op, mir.MinOp) else (outer_c, inner_c)
        if lo > hi:
            return None  # a constant result, not a clip
        links = [(inner_value, op, f"the {inner.name} result")]
        if (miss := chain_miss(links, _CHAIN)) is not None:
            return miss
        if (miss := self.ctx.unclaimed(mir.ClipOp.name)) is not None:
            return miss
        return ClipMatch(op, [inner, op], x, lo, hi)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, ClipMatch)
        b, ops = self.builder(m.root)
        self.replace(rewriter, m, ops, [b.clip(m.x, m.lo, m.hi)])


# ---------------------------------------------------------------------------------
# hard sigmoid
# ---------------------------------------------------------------------------------


@dataclass
class HardSigmoidMatch(Match):
    x: SSAValue
    alpha: float
    beta: float


def _affine(v: SSAValue) -> tuple[SSAValue, float, float, list[Operation]] | None:
    """``v`` as alpha·x + beta: (x, alpha, beta, the ops computing it), from an add and/or
    a mul by scalar constants."""
    add = producer(v, mir.AddOp)
    ops: list[Operation] = []
    beta = 0.0
    if add is not None and (found := _split(add)) is not None:
        v, beta = found
        ops.append(add)
    mul = producer(v, mir.MulOp)
    alpha = 1.0
    if mul is not None and (found := _split(mul)) is not None:
        v, alpha = found
        ops.insert(0, mul)
    return (v, alpha, beta, ops) if ops else None


class FuseHardSigmoid(FusionPattern):
    name = "hard_sigmoid"
    roots = (mir.ClipOp, mir.DivOp, mir.MulOp)
    needs = (mir.ClipOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        if isinstance(op, mir.ClipOp):
            p = op.props()
            if (p.float("min"), p.float("max")) != (0.0, 1.0):
                return None
            affine = _affine(op.input)
            if affine is None:
                return None
            x, alpha, beta, ops = affine
            chain = [*ops, op]
        else:
            # clip(x + c, 0, d) / d, or · (1/d)
            found = _split(op, mir.ClipOp)
            if found is None:
                return None
            clip_value, k = found
            clip = clip_value.owner
            assert isinstance(clip, mir.ClipOp)
            p = clip.props()
            d = k if isinstance(op, mir.DivOp) else (1 / k if k else 0.0)
            if p.float("min") != 0.0 or d <= 0 or not _near(p.float("max"), d):
                return None
            add = producer(clip.input, mir.AddOp)
            shifted = _split(add) if add is not None else None
            if add is None or shifted is None:
                return None
            x, c = shifted
            alpha, beta = 1 / d, c / d
            chain = [add, clip, op]
        if type_of(x) != type_of(op.results[0]) or not _float_result(op):
            return None
        if (miss := chain_miss(_links(chain), _CHAIN)) is not None:
            return miss
        if (miss := self.ctx.unclaimed(mir.HardSigmoidOp.name)) is not None:
            return miss
        return HardSigmoidMatch(op, chain, x, alpha, beta)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, HardSigmoidMatch)
        b, ops = self.builder(m.root)
        self.replace(rewriter, m, ops, [b.hard_sigmoid(m.x, m.alpha, m.beta)])


# ---------------------------------------------------------------------------------
# hard swish
# ---------------------------------------------------------------------------------


@dataclass
class HardSwishMatch(Match):
    x: SSAValue


def _gate_of(x_times_gate: Operation) -> tuple[SSAValue, Operation] | None:
    """For ``x · gate``: (x, the gate op) when the gate is clip(x + 3, 0, 6) or
    hard_sigmoid(x) with alpha 1/6, beta 1/2, of the same x."""
    a, b = x_times_gate.operands
    for x, g in ((a, b), (b, a)):
        clip = producer(g, mir.ClipOp)
        if clip is not None:
            p = clip.props()
            add = producer(clip.input, mir.AddOp)
            if (p.float("min"), p.float("max")) == (0.0, 6.0) and add is not None:
                shifted = _split(add)
                if shifted is not None and shifted[0] is x and shifted[1] == 3.0:
                    return x, clip
        hs = producer(g, mir.HardSigmoidOp)
        if hs is not None and hs.input is x:
            p = hs.props()
            if _near(p.float("alpha"), 1 / 6) and _near(p.float("beta"), 0.5):
                return x, hs
    return None


class FuseHardSwish(FusionPattern):
    name = "hard_swish"
    roots = (mir.MulOp, mir.DivOp)
    needs = (mir.ClipOp, mir.HardSigmoidOp)

    def match(self, op: Operation) -> Match | Miss | None:
        if not _float_result(op):
            return None
        gated = _gate_of(op) if isinstance(op, mir.MulOp) else None
        if gated is not None and isinstance(gated[1], mir.HardSigmoidOp):
            x, gate = gated
            chain = [gate, op]
        else:
            # (x · clip(x + 3, 0, 6)) / 6, or · (1/6)
            found = _split(op, mir.MulOp)
            if found is None:
                return None
            product, k = found
            if not (_near(k, 6.0) if isinstance(op, mir.DivOp) else _near(k, 1 / 6)):
                return None
            mul = product.owner
            assert isinstance(mul, mir.MulOp)
            gated = _gate_of(mul)
            if gated is None or not isinstance(gated[1], mir.ClipOp):
                return None
            x, gate = gated
            add = gate.operands[0].owner
            assert isinstance(add, Operation)
            chain = [add, gate, mul, op]
        if type_of(x) != type_of(op.results[0]):
            return None
        if (miss := chain_miss(_links(chain), _CHAIN)) is not None:
            return miss
        if (miss := self.ctx.unclaimed(mir.HardSwishOp.name)) is not None:
            return miss
        return HardSwishMatch(op, chain, x)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, HardSwishMatch)
        b, ops = self.builder(m.root)
        self.replace(rewriter, m, ops, [b.hard_swish(m.x)])


# ---------------------------------------------------------------------------------
# leaky relu
# ---------------------------------------------------------------------------------


@dataclass
class LeakyReluMatch(Match):
    x: SSAValue
    alpha: float


def _scaled(v: SSAValue, x: SSAValue) -> tuple[mir.MulOp, float] | None:
    """``v`` = alpha·x: (the mul, alpha)."""
    mul = producer(v, mir.MulOp)
    found = _split(mul) if mul is not None else None
    if mul is None or found is None or found[0] is not x:
        return None
    return mul, found[1]


class FuseLeakyRelu(FusionPattern):
    name = "leaky_relu"
    roots = (mir.WhereOp, mir.MaxOp)

    def match(self, op: Operation) -> Match | Miss | None:
        if not _float_result(op):
            return None
        if isinstance(op, mir.MaxOp):
            for x, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
                scaled = _scaled(other, x)
                if scaled is not None and 0.0 <= scaled[1] <= 1.0:
                    return self._found(op, [scaled[0], op], x, scaled[1])
            return None
        assert isinstance(op, mir.WhereOp)
        cmp = producer(op.condition, mir.CompareOp)
        if cmp is None or scalar_constant(cmp.rhs) != 0.0:
            return None
        x = cmp.lhs
        predicate = cmp.props().enum("predicate")
        if predicate in (ComparePredicate.LT, ComparePredicate.LE):
            negative, positive = op.on_true, op.on_false
        elif predicate in (ComparePredicate.GT, ComparePredicate.GE):
            negative, positive = op.on_false, op.on_true
        else:
            return None
        scaled = _scaled(negative, x)
        if positive is not x or scaled is None or scaled[1] < 0.0:
            return None
        return self._found(op, [cmp, scaled[0], op], x, scaled[1])

    def _found(
        self, op: Operation, chain: list[Operation], x: SSAValue, alpha: float
    ) -> Match | Miss | None:
        if type_of(x) != type_of(op.results[0]):
            return None
        links = [(a.results[0], op, f"the {a.name} result") for a in chain[:-1]]
        if (miss := chain_miss(links, _CHAIN)) is not None:
            return miss
        if (miss := self.ctx.unclaimed(mir.LeakyReluOp.name)) is not None:
            return miss
        return LeakyReluMatch(op, chain, x, alpha)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, LeakyReluMatch)
        b, ops = self.builder(m.root)
        self.replace(rewriter, m, ops, [b.leaky_relu(m.x, m.alpha)])


@dataclass(frozen=True)
class FuseActivationsPass(FusionPass):
    """Recognise clip, hard sigmoid, hard swish and leaky ReLU chains as one op each."""

    name = "fuse-activations"
    PATTERNS = (FuseClip, FuseHardSigmoid, FuseHardSwish, FuseLeakyRelu)
