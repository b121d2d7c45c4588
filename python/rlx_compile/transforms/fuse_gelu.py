"""``fuse-gelu``: the erf form of GELU as exporters spell it, as one ``mir.gelu``.

``x · 0.5 · (1 + erf(x / √2))`` in any association and operand order (also with
``x · (1/√2)`` inside the erf), each intermediate read by the chain alone. Recognising
it removes four full-size intermediates and lets a preceding matmul or conv take the
GELU as its epilogue. Not bit-exact: the reference gelu evaluates the formula in float64
and rounds once, the decomposition rounds at every step (the difference is a few ulp).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.folding import constant_value
from rlx_compile.fusion.base import (
    FusionPass,
    FusionPattern,
    Match,
    Miss,
    describe_uses,
    producer,
    sole_user,
)

FUSED = mir.GeluOp.name


def _is_scalar(v: SSAValue, value: float) -> bool:
    array = constant_value(v)
    if array is None or array.size == 0:
        return False
    return bool(np.allclose(array.astype(np.float64), value, rtol=1e-6, atol=0))


def _factors(root: mir.MulOp) -> tuple[list[SSAValue], list[mir.MulOp]]:
    """The operands of the product tree under ``root``, expanding inner muls that the tree
    alone reads (at most one level below the root: 0.5 · x · (...) spellings)."""
    factors: list[SSAValue] = []
    muls = [root]
    for v in (root.lhs, root.rhs):
        inner = producer(v, mir.MulOp)
        if inner is not None and sole_user(v) is root:
            muls.append(inner)
            factors += [inner.lhs, inner.rhs]
        else:
            factors.append(v)
    return factors, muls


def _erf_argument_is(x: SSAValue, d: SSAValue) -> bool:
    """``d`` is x / √2 or x · (1/√2)."""
    div = producer(d, mir.DivOp)
    if div is not None:
        return div.lhs == x and _is_scalar(div.rhs, math.sqrt(2.0))
    mul = producer(d, mir.MulOp)
    if mul is not None:
        return any(
            a == x and _is_scalar(c, math.sqrt(0.5))
            for a, c in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs))
        )
    return False


@dataclass
class GeluMatch(Match):
    x: SSAValue


class FuseGelu(FusionPattern):
    name = "gelu"
    roots = (mir.MulOp,)
    needs = (mir.ErfOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MulOp)
        out = type_of(op.result)
        if not out.dtype.is_float:
            return None
        factors, muls = _factors(op)
        if len(factors) != 3:
            return None
        halves = [f for f in factors if _is_scalar(f, 0.5)]
        sums = [
            (f, a)
            for f in factors
            if (a := producer(f, mir.AddOp)) is not None
            and any(producer(v, mir.ErfOp) for v in (a.lhs, a.rhs))
        ]
        if len(halves) != 1 or len(sums) != 1:
            return None
        p, add = sums[0]
        rest = [f for f in factors if f is not halves[0] and f is not p]
        if len(rest) != 1 or rest[0].type != out:
            return None
        x = rest[0]
        erf_value = next((v for v in (add.lhs, add.rhs) if producer(v, mir.ErfOp)), None)
        if erf_value is None or not any(
            _is_scalar(v, 1.0) for v in (add.lhs, add.rhs) if v is not erf_value
        ):
            return None
        erf = producer(erf_value, mir.ErfOp)
        assert erf is not None
        if not _erf_argument_is(x, erf.input):
            return None
        inner = erf.input.owner
        assert isinstance(inner, Operation)
        for value, reader, what in (
            (erf.input, erf, "the scaled input"),
            (erf_value, add, "the erf"),
            (p, muls[-1] if p in muls[-1].operands else op, "1 + erf"),
        ):
            if sole_user(value) is not reader:
                return Miss(
                    describe_uses(value, what),
                    "the GELU intermediates must be read by the GELU alone",
                )
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        absorbed: list[Operation] = [inner, erf, add, *reversed(muls)]
        return GeluMatch(op, absorbed, x)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, GeluMatch)
        b, ops = self.builder(m.root)
        self.replace(rewriter, m, ops, [b.gelu(m.x)])


@dataclass(frozen=True)
class FuseGeluPass(FusionPass):
    """Recognise x · 0.5 · (1 + erf(x/√2)) as one mir.gelu."""

    name = "fuse-gelu"
    PATTERNS = (FuseGelu,)
