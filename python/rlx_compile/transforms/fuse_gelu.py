"""``fuse-gelu``: GELU as exporters spell it, as one ``mir.gelu``.

``x · 0.5 · (1 + erf(x / √2))`` in any association and operand order (also with
``x · (1/√2)`` inside the erf), and its tanh approximation
``x · 0.5 · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))`` (GPT-2's ``gelu_new``, PyTorch's
``approximate="tanh"`` before opset 20; ``x³`` as ``pow(x, 3)`` or ``x · x · x``) as
``mir.gelu`` with ``approximate = tanh``, each intermediate read by the chain alone.
Recognising it removes four (erf) or seven (tanh) full-size intermediates and lets a
preceding matmul or conv take the GELU as its epilogue. Not bit-exact: the reference
gelu evaluates the formula in float64 and rounds once, the decomposition rounds at every
step (the difference is a few ulp).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.folding import constant_value
from rlx_compile.fusion.base import FusionPattern, Match, Miss, describe_uses, producer, sole_user
from rlx_compile.fusion.stage import FusionPass

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


def _scaled_by(v: SSAValue, value: float) -> tuple[mir.MulOp, SSAValue] | None:
    """For ``v`` = c · y (either order) with the scalar c = ``value``: (the mul, y)."""
    mul = producer(v, mir.MulOp)
    if mul is None:
        return None
    return next(
        ((mul, y) for y, c in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)) if _is_scalar(c, value)),
        None,
    )


def _cube_of(x: SSAValue, v: SSAValue) -> list[tuple[SSAValue, Operation]] | None:
    """For ``v`` = x³ (``pow(x, 3)`` or ``x · x · x``): its (value, the op computing it)
    pairs, the inner square first."""
    pw = producer(v, mir.PowOp)
    if pw is not None and pw.lhs is x and _is_scalar(pw.rhs, 3.0):
        return [(v, pw)]
    mul = producer(v, mir.MulOp)
    if mul is None:
        return None
    for sq, other in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
        inner = producer(sq, mir.MulOp)
        if other is x and inner is not None and inner.lhs is x and inner.rhs is x:
            return [(sq, inner), (v, mul)]
    return None


def _tanh_argument(x: SSAValue, d: SSAValue) -> list[tuple[SSAValue, Operation]] | None:
    """For ``d`` = √(2/π) · (x + 0.044715 · x³): the (value, op) pairs computing it,
    producers first (``d`` last)."""
    outer = _scaled_by(d, TANH_SCALE)
    add = producer(outer[1], mir.AddOp) if outer is not None else None
    if outer is None or add is None:
        return None
    for a, c in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        cubic = _scaled_by(c, TANH_CUBIC)
        cube = _cube_of(x, cubic[1]) if a is x and cubic is not None else None
        if cubic is not None and cube is not None:
            return [*cube, (c, cubic[0]), (outer[1], add), (d, outer[0])]
    return None


TANH_SCALE = math.sqrt(2.0 / math.pi)
TANH_CUBIC = 0.044715


@dataclass
class GeluMatch(Match):
    x: SSAValue
    approximate: str


class FuseGelu(FusionPattern):
    name = "gelu"
    roots = (mir.MulOp,)
    needs = (mir.ErfOp, mir.TanhOp)

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
            and any(producer(v, mir.ErfOp) or producer(v, mir.TanhOp) for v in (a.lhs, a.rhs))
        ]
        if len(halves) != 1 or len(sums) != 1:
            return None
        p, add = sums[0]
        rest = [f for f in factors if f is not halves[0] and f is not p]
        if len(rest) != 1 or rest[0].type != out:
            return None
        x = rest[0]
        fn_value = next(
            (v for v in (add.lhs, add.rhs) if producer(v, mir.ErfOp) or producer(v, mir.TanhOp)),
            None,
        )
        if fn_value is None or not any(
            _is_scalar(v, 1.0) for v in (add.lhs, add.rhs) if v is not fn_value
        ):
            return None
        fn = producer(fn_value, mir.ErfOp) or producer(fn_value, mir.TanhOp)
        assert fn is not None
        if isinstance(fn, mir.ErfOp):
            if not _erf_argument_is(x, fn.input):
                return None
            inner = fn.input.owner
            assert isinstance(inner, Operation)
            chain = [(fn.input, inner)]
        else:
            found = _tanh_argument(x, fn.input)
            if found is None:
                return None
            chain = found
        name = fn.name.removeprefix("mir.")
        links = [(v, reader, "an intermediate") for (v, _), (_, reader) in pairwise(chain)]
        for value, reader, what in (
            *links,
            (fn.input, fn, "the scaled input"),
            (fn_value, add, f"the {name}"),
            (p, muls[-1] if p in muls[-1].operands else op, f"1 + {name}"),
        ):
            if sole_user(value) is not reader:
                return Miss(
                    describe_uses(value, what),
                    "the GELU intermediates must be read by the GELU alone",
                )
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        absorbed: list[Operation] = [*(o for _, o in chain), fn, add, *reversed(muls)]
        approximate = "tanh" if isinstance(fn, mir.TanhOp) else "none"
        return GeluMatch(op, absorbed, x, approximate)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, GeluMatch)
        b, ops = self.builder(m.root)
        self.replace(rewriter, m, ops, [b.gelu(m.x, m.approximate)])


@dataclass(frozen=True)
class FuseGeluPass(FusionPass):
    """Recognise x · 0.5 · (1 + erf(x/√2)) and its tanh approximation as one mir.gelu."""

    name = "fuse-gelu"
    PATTERNS = (FuseGelu,)
