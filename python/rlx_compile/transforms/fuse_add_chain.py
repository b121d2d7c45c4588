"""``fuse-add-chain``: a chain of additions whose partial sums have no other reader,
``((x0 + x1) + x2) + ...``, becomes one ``mir.add_n`` of its terms in that order: one
pass over the result instead of one per addition, with the chain's numbers (add_n folds
left to right and rounds each step to the element type; an addition's operands may be
swapped, it is commutative). Models sum terms one at a time: a k-means distance
``‖x‖² - 2x·c + ‖c‖²``, naive Bayes and mixture log likelihoods, an isolation forest's
path lengths.

add_n holds every term at once, where the chain may compute a later term only when its
addition runs: the terms after the first two must be weights or smaller than the sum
(broadcast onto it), so that the arena does not grow by full-size terms (an FPN's sums
of feature maps stay a chain). It runs after every other stage (they read additions: a
bias, a residual, a shift, a norm's), on targets that claim ``mir.add_n`` and unfuse
elementwise regions (where they are kept, a region takes the chain). A partial sum read
elsewhere ends the chain there; neither is a near miss (the chain fuses up to it)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import FusionPattern, Match, Miss, is_static, producer, sole_user
from rlx_compile.fusion.stage import FusionPass


@dataclass
class Chain(Match):
    terms: list[SSAValue]


def _partial_sum(v: SSAValue, reader: Operation) -> mir.AddOp | None:
    """The addition producing ``v`` when ``reader`` alone reads it, once."""
    add = producer(v, mir.AddOp)
    use = v.get_unique_use()
    if add is None or use is None or use.operation is not reader:
        return None
    return add


def _held(term: SSAValue, total: SSAValue) -> bool:
    """Whether a later term of the chain may be held from its start (see above): a
    weight, or fewer elements than the sum."""
    if is_static(term):
        return True
    n, total_n = type_of(term).num_elements(), type_of(total).num_elements()
    return isinstance(n, int) and isinstance(total_n, int) and n < total_n


def _inner_sum(add: mir.AddOp) -> tuple[mir.AddOp, SSAValue] | None:
    """The partial sum ``add`` adds to, with its other operand (a term)."""
    inner = _partial_sum(add.lhs, add)
    if inner is not None:
        return inner, add.rhs
    inner = _partial_sum(add.rhs, add)
    return None if inner is None else (inner, add.lhs)


class FuseAddChain(FusionPattern):
    name = "add_chain"
    roots = (mir.AddOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.AddOp)
        reader = sole_user(op.result)
        if isinstance(reader, mir.AddOp) and (outer := _inner_sum(reader)) is not None:
            inner, term = outer
            if inner is op and _held(term, reader.result):
                return None  # a partial sum of a longer chain: fused from its end
        absorbed: list[Operation] = [op]
        later: list[SSAValue] = []  # the terms after the innermost addition, last first
        add = op
        while (found := _inner_sum(add)) is not None and _held(found[1], op.result):
            inner, term = found
            later.append(term)
            absorbed.append(inner)
            add = inner
        if len(absorbed) < 2:
            return None
        return Chain(op, absorbed[::-1], [add.lhs, add.rhs, *later[::-1]])

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, Chain)
        b, ops = self.builder(m.root)
        self.replace(rewriter, m, ops, [b.variadic(mir.AddNOp, m.terms)])


@dataclass(frozen=True)
class FuseAddChainPass(FusionPass):
    """Fuse a chain of additions whose partial sums have no other reader into one
    mir.add_n."""

    name = "fuse-add-chain"
    PATTERNS = (FuseAddChain,)
