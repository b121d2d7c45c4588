"""Fusion: the pass list per target, the one-call ``fuse`` stage, and the FusionReport.

    passes = fusion_passes("cuda")                  # [fuse-attention-block?, ...] by claim
    passes = fusion_passes_for_supported({"mir.matmul", "mir.fused_matmul_bias_act", ...})

Stage order (each a pass; the list keeps the passes whose fused ops are claimed): the
layout transpose pairs of channels-last converters folded away, recognition of the
decompositions exporters write (clip, hard sigmoid/swish, leaky ReLU, GELU, RMSNorm,
LayerNorm before opset 17 and norm bias adds, rotary embeddings, scaled dot-product
attention), attention blocks, SwiGLU, LSTM cells, dynamically quantised matmuls (before
the residual norms could take their bias add), conv + batch norm folding, per-channel
scale/shift folding into convs, conv + bias + activation, matmul + bias + activation,
per-channel scale-shifts (batch norms no conv took) + activation, residual norms,
shared-input matmuls, matmuls scaled by a constant, chains of additions (where regions
are not kept), then elementwise regions (marked for targets that keep them, unfused
otherwise), then dead-code elimination. Patterns rooted at a consumer come before those
that would consume its producers (the attention block before the matmul fusions, SwiGLU
before shared-input matmuls, regions last).
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.passes import ModulePass

from rlx_compile.dialects import mir
from rlx_compile.fusion.report import FusedCount, FusionReport, MissedFusion
from rlx_compile.targets import resolve_target
from rlx_compile.targets.base import REGION, Target

REGION_MODES = ("target", "keep", "unfuse")
ACTIVATION_RECOGNISED = (mir.ClipOp, mir.HardSigmoidOp, mir.HardSwishOp, mir.LeakyReluOp)


def fusion_pattern_types() -> list[type]:
    """Every fusion pattern, in stage order (the near-miss scan runs all of them)."""
    from rlx_compile.transforms.fold_conv_affine import FoldConvAffine
    from rlx_compile.transforms.fold_conv_batch_norm import FoldConvBatchNorm
    from rlx_compile.transforms.fold_transposes import FoldTransposes
    from rlx_compile.transforms.fuse_activations import (
        FuseClip,
        FuseHardSigmoid,
        FuseHardSwish,
        FuseLeakyRelu,
    )
    from rlx_compile.transforms.fuse_attention import FuseAttention
    from rlx_compile.transforms.fuse_attention_block import FuseAttentionBlock
    from rlx_compile.transforms.fuse_conv_bias_act import FuseConvBiasAct
    from rlx_compile.transforms.fuse_dynamic_quantize_matmul import FuseDynamicQuantizeMatmul
    from rlx_compile.transforms.fuse_gelu import FuseGelu
    from rlx_compile.transforms.fuse_gru_cell import FuseGruCell
    from rlx_compile.transforms.fuse_layer_norm import FoldNormBias, FuseLayerNorm
    from rlx_compile.transforms.fuse_lstm_cell import FuseLstmCell
    from rlx_compile.transforms.fuse_matmul_bias_act import FuseMatmulBiasAct
    from rlx_compile.transforms.fuse_residual_norm import FuseResidualLayerNorm, FuseResidualRmsNorm
    from rlx_compile.transforms.fuse_rms_norm import FoldRmsNormScale, FuseRmsNorm
    from rlx_compile.transforms.fuse_rope import FusePartialRope, FuseRope
    from rlx_compile.transforms.fuse_scale_shift import FuseScaleShift
    from rlx_compile.transforms.fuse_shared_input_matmul import FuseSharedInputMatmul
    from rlx_compile.transforms.fuse_swiglu import FuseSwigluDualMatmul, FuseSwigluNarrow
    from rlx_compile.transforms.mark_elementwise_regions import MarkElementwiseRegion

    return [
        FoldTransposes, FuseClip, FuseHardSigmoid, FuseHardSwish, FuseLeakyRelu,
        FuseGelu, FuseRmsNorm, FoldRmsNormScale, FuseLayerNorm, FoldNormBias, FuseRope,
        FusePartialRope, FuseAttention, FuseAttentionBlock, FuseSwigluDualMatmul,
        FuseSwigluNarrow, FuseLstmCell, FuseGruCell, FuseDynamicQuantizeMatmul,
        FoldConvBatchNorm,
        FoldConvAffine, FuseConvBiasAct, FuseMatmulBiasAct, FuseScaleShift, FuseResidualRmsNorm,
        FuseResidualLayerNorm,
        FuseSharedInputMatmul, MarkElementwiseRegion,
    ]  # fmt: skip


def _select(
    t: Target,
    target_name: str,
    claims: tuple[str, ...],
    regions: str,
    skip: Iterable[str] = (),
) -> list[ModulePass]:
    from rlx_compile.transforms.dce import DCEPass
    from rlx_compile.transforms.fold_conv_affine import FoldConvAffinePass
    from rlx_compile.transforms.fold_conv_batch_norm import FoldConvBatchNormPass
    from rlx_compile.transforms.fold_transposes import FoldTransposesPass
    from rlx_compile.transforms.fuse_activations import FuseActivationsPass
    from rlx_compile.transforms.fuse_add_chain import FuseAddChainPass
    from rlx_compile.transforms.fuse_attention import FuseAttentionPass
    from rlx_compile.transforms.fuse_attention_block import FuseAttentionBlockPass
    from rlx_compile.transforms.fuse_conv_bias_act import FuseConvBiasActPass, SplitConvBiasPass
    from rlx_compile.transforms.fuse_dynamic_quantize_matmul import FuseDynamicQuantizeMatmulPass
    from rlx_compile.transforms.fuse_gelu import FuseGeluPass
    from rlx_compile.transforms.fuse_gru_cell import FuseGruCellPass
    from rlx_compile.transforms.fuse_layer_norm import FuseLayerNormPass
    from rlx_compile.transforms.fuse_lstm_cell import FuseLstmCellPass
    from rlx_compile.transforms.fuse_matmul_bias_act import FuseMatmulBiasActPass
    from rlx_compile.transforms.fuse_reshape_transpose import FuseReshapeTransposePass
    from rlx_compile.transforms.fuse_residual_norm import FuseResidualNormPass
    from rlx_compile.transforms.fuse_rms_norm import FuseRmsNormPass
    from rlx_compile.transforms.fuse_rope import FuseRopePass
    from rlx_compile.transforms.fuse_scale_shift import FuseScaleShiftPass
    from rlx_compile.transforms.fuse_scaled_matmul import FuseScaledMatmulPass
    from rlx_compile.transforms.fuse_shared_input_matmul import FuseSharedInputMatmulPass
    from rlx_compile.transforms.fuse_swiglu import FuseSwigluPass
    from rlx_compile.transforms.fuse_transposed_matmul import FuseTransposedMatmulPass
    from rlx_compile.transforms.fuse_two_sided_matmul import FuseTwoSidedMatmulPass
    from rlx_compile.transforms.mark_elementwise_regions import MarkElementwiseRegionsPass
    from rlx_compile.transforms.unfuse_elementwise_regions import UnfuseElementwiseRegionsPass

    if regions not in REGION_MODES:
        raise ValueError(f"unknown regions mode '{regions}' (use {', '.join(REGION_MODES)})")
    c = t.claims_op
    kw = {"target": target_name, "claims": claims}
    keep = c(REGION) and (regions == "keep" or (regions == "target" and t.limits.keep_regions))
    stages: list[tuple[bool, type[ModulePass]]] = [
        # An ONNX Conv with a bias imports as a fused conv: where the target's fused conv
        # kernel does not take it, it is a conv and an add for every stage below.
        (
            c(mir.ConvOp.name)
            and (not c(mir.FusedConvBiasActOp.name) or not t.limits.every_imported_conv),
            SplitConvBiasPass,
        ),
        # Layout transposes first (they hide every chain below from its conv), then
        # recognition: the fusions below then see a clip, hard sigmoid/swish, leaky
        # relu or gelu (epilogues), an rms_norm (residual norms), rope and attention
        # (attention blocks).
        (c(mir.TransposeOp.name), FoldTransposesPass),
        (any(c(op.name) for op in ACTIVATION_RECOGNISED), FuseActivationsPass),
        (c(mir.GeluOp.name), FuseGeluPass),
        (c(mir.RmsNormOp.name), FuseRmsNormPass),
        (c(mir.LayerNormOp.name) or c(mir.RmsNormOp.name), FuseLayerNormPass),
        (c(mir.RopeOp.name), FuseRopePass),
        (c(mir.AttentionOp.name), FuseAttentionPass),
        (c(mir.FusedAttentionBlockOp.name), FuseAttentionBlockPass),
        (c(mir.FusedSwigluOp.name), FuseSwigluPass),
        (c(mir.FusedLstmCellOp.name), FuseLstmCellPass),
        (c(mir.FusedGruCellOp.name), FuseGruCellPass),
        (c(mir.DynamicQuantizeMatmulOp.name), FuseDynamicQuantizeMatmulPass),
        (c(mir.ConvOp.name) and c(mir.BatchNormOp.name), FoldConvBatchNormPass),
        (c(mir.ConvOp.name), FoldConvAffinePass),
        (c(mir.FusedConvBiasActOp.name), FuseConvBiasActPass),
        (c(mir.FusedMatmulBiasActOp.name), FuseMatmulBiasActPass),
        (c(mir.FusedTwoSidedMatmulOp.name), FuseTwoSidedMatmulPass),
        (c(mir.FusedTransposedMatmulOp.name), FuseTransposedMatmulPass),
        (c(mir.FusedReshapeTransposeOp.name), FuseReshapeTransposePass),
        (c(mir.FusedScaleShiftActOp.name), FuseScaleShiftPass),
        (
            c(mir.FusedResidualRmsNormOp.name) or c(mir.FusedResidualLayerNormOp.name),
            FuseResidualNormPass,
        ),
        (c(mir.MatmulOp.name) and c(mir.ConcatOp.name) and c(mir.NarrowOp.name),
         FuseSharedInputMatmulPass),
        # Last: the stages above take a scale away entirely (an attention's, one folded
        # into a static weight) or read a plain matmul (shared inputs).
        (c(mir.ScaledMatmulOp.name), FuseScaledMatmulPass),
        # After every stage that reads an addition; a kept region takes the chain.
        (c(mir.AddNOp.name) and not keep, FuseAddChainPass),
    ]  # fmt: skip
    names = [kind.name for _, kind in stages]
    for name in skip:
        if name not in names:
            raise ValueError(f"unknown fusion stage '{name}' (stages: {', '.join(names)})")
    passes: list[ModulePass] = [kind(**kw) for on, kind in stages if on and kind.name not in skip]
    if keep:
        passes.append(MarkElementwiseRegionsPass(target=target_name, claims=claims))
    else:
        passes.append(UnfuseElementwiseRegionsPass())
    passes.append(DCEPass())
    return passes


def fusion_passes(
    target: str | Target = "cpu", *, regions: str = "target", skip: Iterable[str] = ()
) -> list[ModulePass]:
    """The fusion pass list for a target (``regions``: ``target`` follows the target's
    policy; ``keep``/``unfuse`` override it; ``skip`` names stages to leave out)."""
    t = resolve_target(target)
    return _select(t, t.name, (), regions, skip)


def fusion_passes_for_supported(
    claims: Iterable[str], *, target: str = "cpu", regions: str = "target"
) -> list[ModulePass]:
    """The fusion pass list for an explicit claim set (MIR op names); ``target`` still
    gives the fused-kernel limits."""
    claim_tuple = tuple(sorted(set(claims)))
    t = resolve_target(target, claim_tuple)
    return _select(t, target, claim_tuple, regions)


__all__ = [
    "FusedCount",
    "FusionReport",
    "MissedFusion",
    "fusion_passes",
    "fusion_passes_for_supported",
    "fusion_pattern_types",
]
