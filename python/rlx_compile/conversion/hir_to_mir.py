"""``lower-hir-to-mir``: HIR blocks to MIR, one rewrite pattern per block op.

``direct`` blocks become the fused MIR op; ``fusable`` blocks become the primitive chain
that the fusion passes recognise. The ``policy`` option overrides every block's own
policy (``lower-hir-to-mir{policy=fusable}``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, TypedDict

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from rlx_compile.builder import GraphBuilder, ReplacingPattern, type_of
from rlx_compile.diagnostics import note_block_changed
from rlx_compile.dialects import hir
from rlx_compile.dialects.common import FusionPolicy, MaskKind
from rlx_compile.inlining import InlineRegion
from rlx_compile.rewriting import apply_greedily


class _HirPattern(ReplacingPattern):
    """The policy rule shared by the block lowerings."""

    def __init__(self, policy: FusionPolicy | None):
        self.policy = policy

    def is_direct(self, op: hir.BlockOp) -> bool:
        return (self.policy or op.policy_value) is FusionPolicy.DIRECT


# -- shared emitters (the decoder block reuses the attention and MLP ones) ------------------


def emit_swiglu(
    b: GraphBuilder, x: SSAValue, up: SSAValue, gate: SSAValue, down: SSAValue, direct: bool
) -> SSAValue:
    if direct:
        both = b.concat([up, gate], axis=1)
        return b.matmul(b.fused_swiglu(b.matmul(x, both)), down)
    u = b.matmul(x, up)
    g = b.matmul(x, gate)
    return b.matmul(b.mul(u, b.silu(g)), down)


def emit_attention(
    b: GraphBuilder,
    x: SSAValue,
    wq: SSAValue,
    wk: SSAValue,
    wv: SSAValue,
    wo: SSAValue,
    *,
    heads: int,
    kv_heads: int,
    head_dim: int,
    kind: MaskKind,
    mask: SSAValue | None,
    cos: SSAValue | None,
    sin: SSAValue | None,
    direct: bool,
) -> SSAValue:
    if direct:
        wqkv = b.concat([wq, wk, wv], axis=1)
        return b.fused_attention_block(
            x, wqkv, wo, num_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim,
            mask_kind=kind.value, mask=mask, cos=cos, sin=sin,
        )  # fmt: skip
    q = b.split_heads(b.matmul(x, wq), heads, head_dim)
    k = b.split_heads(b.matmul(x, wk), kv_heads, head_dim)
    v = b.split_heads(b.matmul(x, wv), kv_heads, head_dim)
    if cos is not None and sin is not None:
        q = b.rope(q, cos, sin)
        k = b.rope(k, cos, sin)
    attn = b.attention(q, k, v, mask, causal=kind is MaskKind.CAUSAL)
    return b.matmul(b.merge_heads(attn), wo)


# -- patterns ------------------------------------------------------------------------------


class LowerLinear(_HirPattern):
    roots = (hir.LinearOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hir.LinearOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        act = op.props().enum("activation")
        if op.bias is not None and self.is_direct(op):
            y = b.fused_matmul_bias_act(op.input, op.weight, op.bias, act.value)
        else:
            y = b.matmul(op.input, op.weight)
            if op.bias is not None:
                y = b.add(y, op.bias)
            y = b.activation(y, act)
        self.commit(rewriter, op, ops, [y])


class LowerSwiglu(_HirPattern):
    roots = (hir.SwigluOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hir.SwigluOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        y = emit_swiglu(b, op.input, op.up, op.gate, op.down, self.is_direct(op))
        self.commit(rewriter, op, ops, [y])


class LowerResidualRmsNorm(_HirPattern):
    roots = (hir.ResidualRmsNormOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hir.ResidualRmsNormOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        eps = op.props().float("epsilon")
        if self.is_direct(op):
            results = list(b.fused_residual_rms_norm(op.input, op.residual, op.scale, op.bias, eps))
        else:
            total = b.add(op.input, op.residual)
            results = [b.rms_norm(total, op.scale, op.bias, eps=eps), total]
        self.commit(rewriter, op, ops, results)


class LowerSharedLinearPair(_HirPattern):
    roots = (hir.SharedLinearPairOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hir.SharedLinearPairOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        if self.is_direct(op):
            n1 = type_of(op.weight1).shape[1]
            n2 = type_of(op.weight2).shape[1]
            both = b.matmul(op.input, b.concat([op.weight1, op.weight2], axis=1))
            results = [b.narrow(both, -1, 0, n1), b.narrow(both, -1, n1, n2)]
        else:
            results = [b.matmul(op.input, op.weight1), b.matmul(op.input, op.weight2)]
        self.commit(rewriter, op, ops, results)


class LowerAttentionBlock(_HirPattern):
    roots = (hir.AttentionBlockOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hir.AttentionBlockOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        y = emit_attention(
            b, op.hidden, op.wq, op.wk, op.wv, op.wo,
            heads=p.int("num_heads"), kv_heads=p.int("num_kv_heads"), head_dim=p.int("head_dim"),
            kind=p.enum("mask_kind"), mask=op.mask, cos=op.cos, sin=op.sin,
            direct=self.is_direct(op),
        )  # fmt: skip
        self.commit(rewriter, op, ops, [y])


class LowerDecoderBlock(_HirPattern):
    roots = (hir.DecoderBlockOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hir.DecoderBlockOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        eps = p.float("epsilon")
        direct = self.is_direct(op)
        normed = b.rms_norm(op.input, op.ln1, eps=eps)
        attn = emit_attention(
            b, normed, op.wq, op.wk, op.wv, op.wo,
            heads=p.int("num_heads"), kv_heads=p.int("num_kv_heads"), head_dim=p.int("head_dim"),
            kind=p.enum("mask_kind"), mask=None, cos=op.cos, sin=op.sin, direct=direct,
        )  # fmt: skip
        if direct:
            normed2, hidden = b.fused_residual_rms_norm(attn, op.input, op.ln2, eps=eps)
        else:
            hidden = b.add(attn, op.input)
            normed2 = b.rms_norm(hidden, op.ln2, eps=eps)
        mlp = emit_swiglu(b, normed2, op.up, op.gate, op.down, direct)
        self.commit(rewriter, op, ops, [b.add(hidden, mlp)])


class _ConvArgs(TypedDict):
    strides: Sequence[int]
    pads: Sequence[int]
    dilations: Sequence[int]
    groups: int


class LowerConvBlock(_HirPattern):
    roots = (hir.ConvBlockOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hir.ConvBlockOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        conv_args: _ConvArgs = {
            "strides": p.ints("strides"),
            "pads": p.ints("pads"),
            "dilations": p.ints("dilations"),
            "groups": p.int("groups"),
        }
        act = p.enum("activation")
        if op.bias is not None and self.is_direct(op):
            y = b.fused_conv_bias_act(op.input, op.weight, op.bias, act=act.value, **conv_args)
        else:
            y = b.conv(op.input, op.weight, **conv_args)
            if op.bias is not None:
                rank = type_of(y).rank
                channels = type_of(op.bias).shape[0]
                y = b.add(y, b.reshape(op.bias, (channels, *([1] * (rank - 2)))))
            y = b.activation(y, act)
        self.commit(rewriter, op, ops, [y])


@dataclass(frozen=True)
class LowerHirToMirPass(ModulePass):
    """Lower every HIR block to MIR (fused ops for ``direct``, primitives for ``fusable``)."""

    name = "lower-hir-to-mir"
    REPORTS_CHANGES: ClassVar[bool] = True
    ACTS_ON: ClassVar[tuple[type[Operation], ...]] = tuple(hir.HIR_OPS)

    policy: str = "keep"
    """``direct`` or ``fusable`` overrides every block's policy; ``keep`` keeps each one's."""

    def __post_init__(self) -> None:
        if self.policy != "keep" and self.policy not in set(FusionPolicy):
            raise ValueError(f"unknown policy '{self.policy}' (use keep, direct or fusable)")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        policy = None if self.policy == "keep" else FusionPolicy(self.policy)
        if apply_greedily(op.body, lowering_patterns(policy)):
            note_block_changed(op.body.block)


def lowering_patterns(policy: FusionPolicy | None) -> list[RewritePattern]:
    """The block lowerings (``policy`` overriding each block's), and region inlining."""
    return [
        LowerLinear(policy),
        LowerSwiglu(policy),
        LowerResidualRmsNorm(policy),
        LowerSharedLinearPair(policy),
        LowerAttentionBlock(policy),
        LowerDecoderBlock(policy),
        LowerConvBlock(policy),
        InlineRegion(),
    ]
