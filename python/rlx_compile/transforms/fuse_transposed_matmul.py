"""``fuse-transposed-matmul``: a run-time transpose of the last two dims read only by a
matmul, ``matmul(transpose(a), b)`` or ``matmul(a, transpose(b))`` (or both), becomes
one ``mir.fused_transposed_matmul`` that reads the operand as it is, as onnxruntime's
FusedMatMul does: ``x · yᵀ`` of two activations (a similarity matrix), a Gemm's
transA/transB on a graph input, an einsum's contraction. A transpose of a weight is
constant-fold's (it is computed once); one with another reader is a near miss. An
attention's Q·Kᵀ (read by a softmax through a scale or a mask) is left to
fuse-attention, which names what kept it apart when it does not fuse it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import FusionPattern, Match, Miss, chain_miss, is_static, producer
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.FusedTransposedMatmulOp.name
SCORE_STEPS = (mir.MulOp, mir.DivOp, mir.AddOp, mir.SubOp)
"""What may stand between an attention's Q·Kᵀ and its softmax: a scale, a mask."""
MAX_SCORE_STEPS = 4
"""How many of them (a scale, a mask, a bias, a soft cap's parts) are looked through."""
HINT = "the transpose fuses into the matmul only when nothing else reads it"


def _swapping_transpose(v: SSAValue) -> mir.TransposeOp | None:
    """The transpose producing ``v`` if it swaps the last two dims of a run-time value."""
    t = producer(v, mir.TransposeOp)
    if t is None:
        return None
    rank = type_of(t.input).rank
    if rank < 2 or list(t.props().ints("perm")) != mir.swap_last_two_perm(rank):
        return None
    return None if is_static(t.input) else t


def _attention_scores(v: SSAValue) -> bool:
    """Whether ``v`` reaches a softmax through single readers that scale or mask it: an
    attention's scores, fuse-attention's (which reports why, when it does not fuse)."""
    for _ in range(MAX_SCORE_STEPS + 1):
        use = v.get_unique_use()
        if use is None:
            return False
        reader = use.operation
        if isinstance(reader, mir.SoftmaxOp):
            return True
        if not isinstance(reader, SCORE_STEPS):
            return False
        v = reader.results[0]
    return False


@dataclass
class Transposed(Match):
    lhs: SSAValue
    rhs: SSAValue
    transpose_lhs: bool
    transpose_rhs: bool


class FuseTransposedMatmul(FusionPattern):
    name = "transposed_matmul"
    roots = (mir.MatmulOp,)
    needs = (mir.TransposeOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MatmulOp)
        if type_of(op.lhs).rank < 2 or type_of(op.rhs).rank < 2:
            return None  # a vector operand: the swap is not of its matrix dims
        lt, rt = _swapping_transpose(op.lhs), _swapping_transpose(op.rhs)
        if (lt is None and rt is None) or _attention_scores(op.result):
            return None
        links = [(t.result, op, "the transposed operand") for t in (lt, rt) if t is not None]
        if (miss := chain_miss(links, HINT)) is not None:
            return miss
        absorbed: list[Operation] = [t for t in (lt, rt) if t is not None]
        found = Transposed(
            op, [*absorbed, op],
            op.lhs if lt is None else lt.input, op.rhs if rt is None else rt.input,
            lt is not None, rt is not None,
        )  # fmt: skip
        return self.ctx.unclaimed(FUSED) or found

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, Transposed)
        b, ops = self.builder(m.root)
        y = b.fused_transposed_matmul(m.lhs, m.rhs, m.transpose_lhs, m.transpose_rhs)
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseTransposedMatmulPass(FusionPass):
    """Fuse a run-time transpose of a matmul operand's last two dims into the matmul
    (mir.fused_transposed_matmul)."""

    name = "fuse-transposed-matmul"
    PATTERNS = (FuseTransposedMatmul,)
