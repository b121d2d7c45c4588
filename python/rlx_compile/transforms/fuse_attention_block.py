"""``fuse-attention-block``: q/k/v projections + attention + output projection as one
``mir.fused_attention_block``.

Rooted at the output projection (``matmul(merge_heads(attention(...)), w_o)``, with an
optional bias add), it walks back through the head merge, the attention, the optional
rope on q and k and the head splits to the three projections of one hidden state
``[B, S, E]``, in either form:
- three matmuls ``x · w_q``, ``x · w_k``, ``x · w_v`` (each with an optional bias add):
  the fused op takes ``concat(w_q, w_k, w_v)`` (and the concatenated biases);
- narrows ``[0, H·D)``, ``[H·D, (H+H_kv)·D)``, ``[(H+H_kv)·D, (H+2H_kv)·D)`` of one
  ``x · w_qkv`` (as ``fuse-shared-input-matmul`` leaves them).
Every intermediate must be read by the chain alone. It runs before the matmul fusions so
the projections are still plain matmuls when it looks at them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import (
    FusionPattern,
    Match,
    Miss,
    describe_uses,
    is_output,
    operand_from,
    other_operand,
    producer,
    sole_user,
    users,
)
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.FusedAttentionBlockOp.name
HEAD_PERM = (0, 2, 1, 3)


class _NoFusion(Exception):
    """Raised while walking the chain: not this pattern (no miss to report)."""


class _Missed(Exception):
    def __init__(self, miss: Miss):
        self.miss = miss


@dataclass
class _Walk:
    """The ops the walk has absorbed so far, producers before consumers."""

    ops: list[Operation] = field(default_factory=list)

    def link(
        self,
        value: SSAValue,
        kind: type[Operation],
        reader: Operation | Sequence[Operation],
        what: str,
    ) -> Operation:
        """The producer of ``value`` (of ``kind``), absorbed: ``reader`` (or exactly the
        ``reader`` ops) must be all that reads ``value``."""
        op = producer(value, kind)
        if op is None:
            raise _NoFusion
        expected = [reader] if isinstance(reader, Operation) else list(reader)
        readers = users(value)
        if (
            is_output(value)
            or len(readers) != len(expected)
            or any(not any(r is e for e in expected) for r in readers)
        ):
            raise _Missed(
                Miss(
                    describe_uses(value, what),
                    "every intermediate of the block must be read by the block alone",
                )
            )
        if not any(op is o for o in self.ops):
            self.ops.insert(0, op)
        return op


def _bias_vector(add: mir.AddOp, product: SSAValue) -> SSAValue | None:
    bias = other_operand(add, product)
    t = type_of(bias)
    if t.rank == 1 and t.shape[0] == type_of(product).shape[-1]:
        return bias
    return None


@dataclass
class _Projection:
    x: SSAValue
    w: SSAValue
    bias: SSAValue | None


def _heads(walk: _Walk, value: SSAValue, reader: Operation, what: str) -> tuple[SSAValue, int]:
    """Undo a head split [B, S, n·D] -> [B, n, S, D]: the [B, S, n·D] value and n."""
    tr = walk.link(value, mir.TransposeOp, reader, what)
    assert isinstance(tr, mir.TransposeOp)
    if tuple(tr.props().ints("perm")) != HEAD_PERM:
        raise _NoFusion
    rs = walk.link(tr.input, mir.ReshapeOp, tr, what)
    assert isinstance(rs, mir.ReshapeOp)
    src, out = type_of(rs.input), type_of(rs.result)
    if src.rank != 3 or out.rank != 4 or out.shape[:2] != src.shape[:2]:
        raise _NoFusion
    heads = out.shape[2]
    assert isinstance(heads, int)
    return rs.input, heads


def _projection(
    walk: _Walk, value: SSAValue, reader: Operation | Sequence[Operation], what: str
) -> _Projection:
    add = producer(value, mir.AddOp)
    if add is not None:
        found = operand_from(add, mir.MatmulOp)
        if found is not None and _bias_vector(add, found[0].result) is not None:
            walk.link(value, mir.AddOp, reader, what)
            mm = walk.link(found[0].result, mir.MatmulOp, add, what)
            assert isinstance(mm, mir.MatmulOp)
            return _Projection(mm.lhs, mm.rhs, _bias_vector(add, mm.result))
    mm = walk.link(value, mir.MatmulOp, reader, what)
    assert isinstance(mm, mir.MatmulOp)
    return _Projection(mm.lhs, mm.rhs, None)


@dataclass
class AttentionBlock(Match):
    hidden: SSAValue
    qkv_weight: SSAValue | list[SSAValue]
    qkv_bias: SSAValue | list[SSAValue] | None
    out_weight: SSAValue
    out_bias: SSAValue | None
    attention: mir.AttentionOp
    cos: SSAValue | None
    sin: SSAValue | None
    heads: int
    kv_heads: int
    head_dim: int


class FuseAttentionBlock(FusionPattern):
    name = "attention_block"
    roots = (mir.MatmulOp,)
    needs = (mir.ReshapeOp,)  # the merged heads the projection reads

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MatmulOp)
        try:
            return self._match(op)
        except _NoFusion:
            return None
        except _Missed as missed:
            return missed.miss

    def _match(self, op: mir.MatmulOp) -> Match | Miss:
        walk = _Walk([op])
        merged = walk.link(op.lhs, mir.ReshapeOp, op, "the merged heads")
        tr = walk.link(merged.operands[0], mir.TransposeOp, merged, "the merged heads")
        assert isinstance(tr, mir.TransposeOp)
        if tuple(tr.props().ints("perm")) != HEAD_PERM:
            raise _NoFusion
        attn = walk.link(tr.input, mir.AttentionOp, tr, "the attention output")
        assert isinstance(attn, mir.AttentionOp)
        if type_of(merged.results[0]).rank != 3 or type_of(op.rhs).rank != 2:
            raise _NoFusion
        root: Operation = op
        out_bias = None
        reader = sole_user(op.result)
        if isinstance(reader, mir.AddOp):
            out_bias = _bias_vector(reader, op.result)
            if out_bias is not None:
                walk.ops.append(reader)
                root = reader
        ap = attn.props()
        if ap.opt_float("softcap") is not None:
            return Miss("the attention has a softcap", "the fused block applies no softcap")
        q, k = attn.query, attn.key
        rope_q, rope_k = producer(q, mir.RopeOp), producer(k, mir.RopeOp)
        cos = sin = None
        if rope_q is not None or rope_k is not None:
            if rope_q is None or rope_k is None:
                return Miss("only one of q and k takes rope", "rope both or neither")
            if (rope_q.cos, rope_q.sin) != (rope_k.cos, rope_k.sin) or not all(
                _plain_rope(r) for r in (rope_q, rope_k)
            ):
                return Miss(
                    "q and k take different, partial or interleaved rope",
                    "the fused block rotates whole heads NeoX-style with one cos/sin",
                )
            walk.link(q, mir.RopeOp, attn, "the roped query")
            walk.link(k, mir.RopeOp, attn, "the roped key")
            q, k, cos, sin = rope_q.input, rope_k.input, rope_q.cos, rope_q.sin
        q_reader = rope_q if rope_q is not None else attn
        k_reader = rope_k if rope_k is not None else attn
        q3, heads = _heads(walk, q, q_reader, "the query")
        k3, kv_heads = _heads(walk, k, k_reader, "the key")
        v3, v_heads = _heads(walk, attn.value, attn, "the value")
        head_dim = type_of(attn.query).shape[-1]
        assert isinstance(head_dim, int)
        if v_heads != kv_heads:
            raise _NoFusion
        weights, biases, hidden = self._projections(walk, [q3, k3, v3], heads, kv_heads, head_dim)
        if (miss := self.ctx.unclaimed(FUSED, mir.ConcatOp.name)) is not None:
            return miss
        # The chain's own ops verified every shape the fused op checks (head counts,
        # rope tables, mask); the hidden state must be [B, S, E].
        if type_of(hidden).rank != 3:
            raise _NoFusion
        return AttentionBlock(
            root, walk.ops, hidden, weights, biases, op.rhs, out_bias, attn, cos, sin,
            heads, kv_heads, head_dim,
        )  # fmt: skip

    def _projections(
        self,
        walk: _Walk,
        values: list[SSAValue],
        heads: int,
        kv_heads: int,
        head_dim: int,
    ) -> tuple[SSAValue | list[SSAValue], SSAValue | list[SSAValue] | None, SSAValue]:
        readers = [sole_user(v) for v in values]
        narrows = [producer(v, mir.NarrowOp) for v in values]
        if all(n is not None for n in narrows):
            assert all(isinstance(n, mir.NarrowOp) for n in narrows)
            source = narrows[0].input  # type: ignore[union-attr]
            widths = [heads * head_dim, kv_heads * head_dim, kv_heads * head_dim]
            starts = [0, widths[0], widths[0] + widths[1]]
            for n, start, width in zip(narrows, starts, widths, strict=True):
                assert n is not None
                if (
                    n.input is not source
                    or n.props().int("axis") != 2
                    or n.start_dim != start
                    or n.length != width
                ):
                    raise _NoFusion
            if type_of(source).shape[-1] != sum(widths):
                raise _NoFusion
            for v, n, r in zip(values, narrows, readers, strict=True):
                assert n is not None and r is not None
                walk.link(v, mir.NarrowOp, r, "a q/k/v slice")
            slices = [n for n in narrows if n is not None]
            proj = _projection(walk, source, slices, "the packed qkv projection")
            if type_of(proj.w).rank != 2:
                raise _NoFusion
            return proj.w, proj.bias, proj.x
        projs = [
            _projection(walk, v, r, what)  # type: ignore[arg-type]
            for v, r, what in zip(
                values, readers, ("the query", "the key", "the value"), strict=True
            )
        ]
        x = projs[0].x
        if any(p.x is not x for p in projs):
            raise _Missed(
                Miss(
                    "the q/k/v projections read different inputs",
                    "self-attention: project one hidden state",
                )
            )
        if any(type_of(p.w).rank != 2 for p in projs):
            raise _NoFusion
        bias_count = sum(p.bias is not None for p in projs)
        if bias_count not in (0, 3):
            raise _Missed(
                Miss(
                    f"{bias_count} of the q/k/v projections have a bias",
                    "give all three a bias (zeros) or none",
                )
            )
        biases = [p.bias for p in projs] if bias_count else None
        return [p.w for p in projs], biases, x  # type: ignore[return-value]

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, AttentionBlock)
        b, ops = self.builder(m.root)
        qkv_w = m.qkv_weight if not isinstance(m.qkv_weight, list) else b.concat(m.qkv_weight, 1)
        qkv_b = m.qkv_bias if not isinstance(m.qkv_bias, list) else b.concat(m.qkv_bias, 0)
        p = m.attention.props()
        y = b.emit(
            mir.FusedAttentionBlockOp(
                m.hidden, qkv_w, m.out_weight, num_heads=m.heads, num_kv_heads=m.kv_heads,
                head_dim=m.head_dim, qkv_bias=qkv_b, out_bias=m.out_bias,
                mask=m.attention.mask, cos=m.cos, sin=m.sin,
                mask_kind=p.enum("mask_kind").value, scale=p.opt_float("scale"),
                zero_nan=p.flag("zero_nan"),
            )
        ).results[0]  # fmt: skip
        self.replace(rewriter, m, ops, [y])


def _plain_rope(op: mir.RopeOp) -> bool:
    p = op.props()
    d = type_of(op.input).shape[-1]
    return not p.flag("interleaved") and p.opt_int("rotary_dim") in (None, d)


@dataclass(frozen=True)
class FuseAttentionBlockPass(FusionPass):
    """Fuse q/k/v projections + attention + output projection into one block op."""

    name = "fuse-attention-block"
    PATTERNS = (FuseAttentionBlock,)
