"""Passes, one per file. ``RLX_PASSES`` maps pipeline names to lazy pass factories."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _lower_hir_to_mir() -> type[ModulePass]:
    from rlx_compile.conversion.hir_to_mir import LowerHirToMirPass

    return LowerHirToMirPass


def _plan_memory() -> type[ModulePass]:
    from rlx_compile.conversion.mir_to_lir import PlanMemoryPass

    return PlanMemoryPass


def _rematerialize() -> type[ModulePass]:
    from rlx_compile.transforms.rematerialize import RematerializePass

    return RematerializePass


def _schedule_memory() -> type[ModulePass]:
    from rlx_compile.transforms.schedule_memory import ScheduleMemoryPass

    return ScheduleMemoryPass


def _plan_check() -> type[ModulePass]:
    from rlx_compile.transforms.plan_check import PlanCheckPass

    return PlanCheckPass


def _specialize_dims() -> type[ModulePass]:
    from rlx_compile.transforms.specialize_dims import SpecializeDimsPass

    return SpecializeDimsPass


def _shard() -> type[ModulePass]:
    from rlx_compile.transforms.shard import ShardPass

    return ShardPass


def _constant_fold() -> type[ModulePass]:
    from rlx_compile.transforms.constant_fold import ConstantFoldPass

    return ConstantFoldPass


def _algebraic_simplify() -> type[ModulePass]:
    from rlx_compile.transforms.algebraic_simplify import AlgebraicSimplifyPass

    return AlgebraicSimplifyPass


def _sccp() -> type[ModulePass]:
    from rlx_compile.transforms.sccp import SCCPPass

    return SCCPPass


def _cse() -> type[ModulePass]:
    from rlx_compile.transforms.cse import CSEPass

    return CSEPass


def _dce() -> type[ModulePass]:
    from rlx_compile.transforms.dce import DCEPass

    return DCEPass


def _inline() -> type[ModulePass]:
    from rlx_compile.transforms.inline import InlinePass

    return InlinePass


def _promote_params() -> type[ModulePass]:
    from rlx_compile.transforms.promote_params import PromoteParamsPass

    return PromoteParamsPass


def _param_specialize() -> type[ModulePass]:
    from rlx_compile.transforms.param_specialize import ParamSpecializePass

    return ParamSpecializePass


def _param_hoist() -> type[ModulePass]:
    from rlx_compile.transforms.param_hoist import ParamHoistPass

    return ParamHoistPass


def _numeric_lint() -> type[ModulePass]:
    from rlx_compile.transforms.numeric_lint import NumericLintPass

    return NumericLintPass


def _fuse() -> type[ModulePass]:
    from rlx_compile.transforms.fuse import FusePass

    return FusePass


def _fuse_attention_block() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_attention_block import FuseAttentionBlockPass

    return FuseAttentionBlockPass


def _fold_conv_affine() -> type[ModulePass]:
    from rlx_compile.transforms.fold_conv_affine import FoldConvAffinePass

    return FoldConvAffinePass


def _fuse_scale_shift() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_scale_shift import FuseScaleShiftPass

    return FuseScaleShiftPass


def _fuse_lstm_cell() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_lstm_cell import FuseLstmCellPass

    return FuseLstmCellPass


def _fuse_gru_cell() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_gru_cell import FuseGruCellPass

    return FuseGruCellPass


def _fuse_dynamic_quantize_matmul() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_dynamic_quantize_matmul import FuseDynamicQuantizeMatmulPass

    return FuseDynamicQuantizeMatmulPass


def _fuse_activations() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_activations import FuseActivationsPass

    return FuseActivationsPass


def _fuse_gelu() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_gelu import FuseGeluPass

    return FuseGeluPass


def _fuse_rms_norm() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_rms_norm import FuseRmsNormPass

    return FuseRmsNormPass


def _fold_transposes() -> type[ModulePass]:
    from rlx_compile.transforms.fold_transposes import FoldTransposesPass

    return FoldTransposesPass


def _fuse_layer_norm() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_layer_norm import FuseLayerNormPass

    return FuseLayerNormPass


def _fuse_rope() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_rope import FuseRopePass

    return FuseRopePass


def _fuse_attention() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_attention import FuseAttentionPass

    return FuseAttentionPass


def _fuse_reshape_transpose() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_reshape_transpose import FuseReshapeTransposePass

    return FuseReshapeTransposePass


def _fuse_two_sided_matmul() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_two_sided_matmul import FuseTwoSidedMatmulPass

    return FuseTwoSidedMatmulPass


def _fuse_transposed_matmul() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_transposed_matmul import FuseTransposedMatmulPass

    return FuseTransposedMatmulPass


def _fuse_scaled_matmul() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_scaled_matmul import FuseScaledMatmulPass

    return FuseScaledMatmulPass


def _fuse_add_chain() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_add_chain import FuseAddChainPass

    return FuseAddChainPass


def _fuse_swiglu() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_swiglu import FuseSwigluPass

    return FuseSwigluPass


def _fold_conv_batch_norm() -> type[ModulePass]:
    from rlx_compile.transforms.fold_conv_batch_norm import FoldConvBatchNormPass

    return FoldConvBatchNormPass


def _split_conv_bias() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_conv_bias_act import SplitConvBiasPass

    return SplitConvBiasPass


def _fuse_conv_bias_act() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_conv_bias_act import FuseConvBiasActPass

    return FuseConvBiasActPass


def _fuse_matmul_bias_act() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_matmul_bias_act import FuseMatmulBiasActPass

    return FuseMatmulBiasActPass


def _fuse_residual_norm() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_residual_norm import FuseResidualNormPass

    return FuseResidualNormPass


def _fuse_shared_input_matmul() -> type[ModulePass]:
    from rlx_compile.transforms.fuse_shared_input_matmul import FuseSharedInputMatmulPass

    return FuseSharedInputMatmulPass


def _mark_elementwise_regions() -> type[ModulePass]:
    from rlx_compile.transforms.mark_elementwise_regions import MarkElementwiseRegionsPass

    return MarkElementwiseRegionsPass


def _unfuse_elementwise_regions() -> type[ModulePass]:
    from rlx_compile.transforms.unfuse_elementwise_regions import UnfuseElementwiseRegionsPass

    return UnfuseElementwiseRegionsPass


def _legalize() -> type[ModulePass]:
    from rlx_compile.transforms.legalize import LegalizePass

    return LegalizePass


def _legalize_broadcast() -> type[ModulePass]:
    from rlx_compile.transforms.legalize_broadcast import LegalizeBroadcastPass

    return LegalizeBroadcastPass


def _quant_insert() -> type[ModulePass]:
    from rlx_compile.transforms.quant_insert import QuantInsertPass

    return QuantInsertPass


def _quant_propagate() -> type[ModulePass]:
    from rlx_compile.transforms.quant_propagate import QuantPropagatePass

    return QuantPropagatePass


def _quant_to_integer() -> type[ModulePass]:
    from rlx_compile.transforms.quant_to_integer import QuantToIntegerPass

    return QuantToIntegerPass


def _scaled_quant_insert() -> type[ModulePass]:
    from rlx_compile.transforms.scaled_quant_insert import ScaledQuantInsertPass

    return ScaledQuantInsertPass


def _lower_integer() -> type[ModulePass]:
    from rlx_compile.transforms.lower_integer import LowerIntegerPass

    return LowerIntegerPass


def _lower_recurrent() -> type[ModulePass]:
    from rlx_compile.transforms.lower_recurrent import LowerRecurrentPass

    return LowerRecurrentPass


def _auto_mixed_precision() -> type[ModulePass]:
    from rlx_compile.transforms.auto_mixed_precision import AutoMixedPrecisionPass

    return AutoMixedPrecisionPass


RLX_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "lower-hir-to-mir": _lower_hir_to_mir,
    "plan-memory": _plan_memory,
    "plan-check": _plan_check,
    "rematerialize": _rematerialize,
    "schedule-memory": _schedule_memory,
    "shard": _shard,
    "specialize-dims": _specialize_dims,
    "fuse": _fuse,
    "fuse-attention-block": _fuse_attention_block,
    "fuse-activations": _fuse_activations,
    "fold-conv-affine": _fold_conv_affine,
    "fuse-scale-shift": _fuse_scale_shift,
    "fuse-gelu": _fuse_gelu,
    "fuse-rms-norm": _fuse_rms_norm,
    "fuse-layer-norm": _fuse_layer_norm,
    "fold-transposes": _fold_transposes,
    "fuse-rope": _fuse_rope,
    "fuse-attention": _fuse_attention,
    "fuse-swiglu": _fuse_swiglu,
    "fuse-two-sided-matmul": _fuse_two_sided_matmul,
    "fuse-transposed-matmul": _fuse_transposed_matmul,
    "fuse-scaled-matmul": _fuse_scaled_matmul,
    "fuse-add-chain": _fuse_add_chain,
    "fuse-reshape-transpose": _fuse_reshape_transpose,
    "fuse-lstm-cell": _fuse_lstm_cell,
    "fuse-gru-cell": _fuse_gru_cell,
    "fuse-dynamic-quantize-matmul": _fuse_dynamic_quantize_matmul,
    "fold-conv-batch-norm": _fold_conv_batch_norm,
    "fuse-conv-bias-act": _fuse_conv_bias_act,
    "split-conv-bias": _split_conv_bias,
    "fuse-matmul-bias-act": _fuse_matmul_bias_act,
    "fuse-residual-norm": _fuse_residual_norm,
    "fuse-shared-input-matmul": _fuse_shared_input_matmul,
    "mark-elementwise-regions": _mark_elementwise_regions,
    "unfuse-elementwise-regions": _unfuse_elementwise_regions,
    "lower-recurrent": _lower_recurrent,
    "lower-integer": _lower_integer,
    "legalize": _legalize,
    "legalize-broadcast": _legalize_broadcast,
    "auto-mixed-precision": _auto_mixed_precision,
    "quant-insert": _quant_insert,
    "quant-propagate": _quant_propagate,
    "quant-to-integer": _quant_to_integer,
    "scaled-quant-insert": _scaled_quant_insert,
    # MIR cleanup; cse and dce replace xDSL's passes of the same name.
    "constant-fold": _constant_fold,
    "algebraic-simplify": _algebraic_simplify,
    "sccp": _sccp,
    "cse": _cse,
    "dce": _dce,
    "inline": _inline,
    "promote-params": _promote_params,
    "param-specialize": _param_specialize,
    "param-hoist": _param_hoist,
    "numeric-lint": _numeric_lint,
}
