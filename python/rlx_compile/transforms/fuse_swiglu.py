"""``fuse-swiglu``: the SwiGLU gate as one ``mir.fused_swiglu``, in two forms.

- Dual matmul: ``mul(matmul(x, w_up), silu(matmul(x, w_gate)))`` (either operand order)
  becomes ``fused_swiglu(matmul(x, concat(w_up, w_gate, axis 1)))``: one wider matmul
  reads x once. Both matmuls must read the same x, with rank-2 weights of one shape.
- Narrow: ``mul(narrow(c, up half), silu(narrow(c, gate half)))`` over the two halves of
  the last dim of one tensor becomes ``fused_swiglu(c)`` (``gate_first`` when the gate
  is the first half).
The matmuls, narrows and the silu must each have one reader; the product and ``c`` may
have any number.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import fmt_shape
from rlx_compile.fusion.base import FusionPattern, Match, Miss, describe_uses, producer, sole_user
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.FusedSwigluOp.name


def _silu_product(
    op: mir.MulOp, kind: type[Operation]
) -> tuple[Operation, Operation, mir.SiluOp] | None:
    """(up producer, gate producer, silu) for mul(up, silu(gate)) in either order, the
    up and gate values produced by ops of ``kind``."""
    for a, b in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        silu = producer(b, mir.SiluOp)
        up = producer(a, kind)
        if silu is not None and up is not None:
            gate = producer(silu.input, kind)
            if gate is not None:
                return up, gate, silu
    return None


def _single_reader_miss(links: list[tuple[SSAValue, Operation, str]]) -> Miss | None:
    for value, reader, what in links:
        if sole_user(value) is not reader:
            return Miss(
                describe_uses(value, what),
                "the gate's intermediates must be read by the gate alone",
            )
    return None


@dataclass
class DualMatmul(Match):
    x: SSAValue
    w_up: SSAValue
    w_gate: SSAValue


class FuseSwigluDualMatmul(FusionPattern):
    name = "swiglu"
    roots = (mir.MulOp,)
    needs = (mir.SiluOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MulOp)
        found = _silu_product(op, mir.MatmulOp)
        if found is None:
            return None
        up, gate, silu = found
        assert isinstance(up, mir.MatmulOp) and isinstance(gate, mir.MatmulOp)
        if up.lhs is not gate.lhs:
            return Miss(
                "the up and gate matmuls read different inputs",
                "feed both projections the same tensor (hir.swiglu does)",
            )
        wu, wg = type_of(up.rhs), type_of(gate.rhs)
        if wu.rank != 2 or wg.rank != 2 or not isinstance(wu.shape[1], int):
            return None  # the fused gate splits a static last dim
        if wu != wg:
            return Miss(
                f"the up and gate weights differ: {fmt_shape(wu.shape)} vs {fmt_shape(wg.shape)}",
                "the fused gate splits one product into two equal halves",
            )
        miss = _single_reader_miss(
            [
                (up.result, op, "the up projection"),
                (gate.result, silu, "the gate projection"),
                (silu.result, op, "the silu"),
            ]
        )
        if miss is not None:
            return miss
        if (miss := self.ctx.unclaimed(FUSED, mir.ConcatOp.name)) is not None:
            return miss
        return DualMatmul(op, [up, gate, silu, op], up.lhs, up.rhs, gate.rhs)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, DualMatmul)
        b, ops = self.builder(m.root)
        both = b.matmul(m.x, b.concat([m.w_up, m.w_gate], axis=1))
        self.replace(rewriter, m, ops, [b.fused_swiglu(both)])


@dataclass
class NarrowHalves(Match):
    source: SSAValue
    gate_first: bool


class FuseSwigluNarrow(FusionPattern):
    name = "swiglu"
    roots = (mir.MulOp,)
    needs = (mir.SiluOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MulOp)
        found = _silu_product(op, mir.NarrowOp)
        if found is None:
            return None
        up, gate, silu = found
        assert isinstance(up, mir.NarrowOp) and isinstance(gate, mir.NarrowOp)
        src = type_of(up.input)
        last = src.rank - 1
        n = up.length
        starts = {up.start_dim, gate.start_dim}
        if (
            up.input is not gate.input
            or up.props().int("axis") != last
            or gate.props().int("axis") != last
            or n != gate.length
            or not isinstance(n, int)
            or src.shape[last] != 2 * n
            or starts != {0, n}
        ):
            return None
        miss = _single_reader_miss(
            [
                (up.result, op, "the up half"),
                (gate.result, silu, "the gate half"),
                (silu.result, op, "the silu"),
            ]
        )
        if miss is not None:
            return miss
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        gate_first = gate.start_dim == 0
        return NarrowHalves(op, [up, gate, silu, op], up.input, gate_first)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, NarrowHalves)
        b, ops = self.builder(m.root)
        self.replace(rewriter, m, ops, [b.fused_swiglu(m.source, m.gate_first)])


@dataclass(frozen=True)
class FuseSwigluPass(FusionPass):
    """Fuse the SwiGLU gate (dual-matmul and narrow forms) into mir.fused_swiglu."""

    name = "fuse-swiglu"
    PATTERNS = (FuseSwigluDualMatmul, FuseSwigluNarrow)
