"""``fuse-layer-norm``: LayerNorm as exporters spell it before opset 17, as one
``mir.layer_norm``; and a norm's bias add folded into the norm.

Before ONNX had LayerNormalization (opset 17), exporters wrote
``d = x - mean(x); d / sqrt(mean(d²) + eps) · gamma + beta`` (PyTorch at opsets <= 16,
tf2onnx, keras2onnx). ``fuse-rms-norm`` has made the normalisation of ``d`` one
``mir.rms_norm`` by then, so what is left is

- ``layer_norm``: ``rms_norm(x - mean(x, axes a..rank-1, keepdims), gamma)`` over the
  same axes -> ``layer_norm(x, gamma)`` (the variance is the mean of ``d²``: the same
  arithmetic);
- ``norm_bias``: ``norm(x, gamma) + beta`` with ``beta`` broadcasting to the normalised
  dims, for a norm without a bias -> ``norm(x, gamma, beta)``.

Each intermediate must be read by the chain alone; ``x`` may have any readers. Once the
norm is one op with its bias, ``fuse-residual-norm`` can take the residual add before it
(onnxruntime's SkipLayerNormalization).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.fusion.base import FusionPattern, Match, Miss, chain_miss, producer
from rlx_compile.fusion.stage import FusionPass
from rlx_compile.transforms.fuse_rms_norm import fits_tail

FUSED = mir.LayerNormOp.name
HINT = "the LayerNorm intermediates must be read by the norm alone"


@dataclass
class LayerNormMatch(Match):
    norm: mir.RmsNormOp
    x: SSAValue


class FuseLayerNorm(FusionPattern):
    name = "layer_norm"
    roots = (mir.RmsNormOp,)
    needs = (mir.ReduceMeanOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.RmsNormOp)
        sub = producer(op.input, mir.SubOp)
        mean = producer(sub.rhs, mir.ReduceMeanOp) if sub is not None else None
        if sub is None or mean is None or mean.input is not sub.lhs:
            return None
        x = sub.lhs
        axis, rank = op.props().int("axis"), type_of(x).rank
        p = mean.props()
        if list(p.ints("axes")) != list(range(axis, rank)) or not p.flag("keepdims"):
            return None
        if type_of(sub.result) != type_of(x):
            return None
        links = [(mean.result, sub, "the mean"), (sub.result, op, "the centred input")]
        if (miss := chain_miss(links, HINT)) is not None:
            return miss
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        return LayerNormMatch(op, [mean, sub, op], op, x)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, LayerNormMatch)
        b, ops = self.builder(m.root)
        p = m.norm.props()
        y = b.layer_norm(m.x, m.norm.scale, m.norm.bias, axis=p.int("axis"), eps=p.float("epsilon"))
        self.replace(rewriter, m, ops, [y])


@dataclass
class NormBiasMatch(Match):
    norm: mir.NormOp
    bias: SSAValue


class FoldNormBias(FusionPattern):
    """``norm(x, gamma) + beta`` -> ``norm(x, gamma, beta)`` (either operand order)."""

    name = "norm_bias"
    roots = (mir.AddOp,)
    needs = (mir.LayerNormOp, mir.RmsNormOp)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.AddOp)
        for a, beta in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            norm = producer(a, mir.LayerNormOp) or producer(a, mir.RmsNormOp)
            if (
                norm is None
                or norm.bias is not None
                or type_of(op.result) != type_of(a)
                or not fits_tail(beta, norm.input, norm.props().int("axis"))
            ):
                continue
            if (miss := chain_miss([(a, op, f"the {norm.name} result")], HINT)) is not None:
                return miss
            return NormBiasMatch(op, [norm, op], norm, beta)
        return None

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, NormBiasMatch)
        b, ops = self.builder(m.root)
        norm, p = m.norm, m.norm.props()
        build = b.layer_norm if isinstance(norm, mir.LayerNormOp) else b.rms_norm
        y = build(norm.input, norm.scale, m.bias, axis=p.int("axis"), eps=p.float("epsilon"))
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseLayerNormPass(FusionPass):
    """Recognise rms_norm(x - mean(x)) as one mir.layer_norm; fold a norm's bias add."""

    name = "fuse-layer-norm"
    PATTERNS = (FuseLayerNorm, FoldNormBias)
