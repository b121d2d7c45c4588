"""cpu: the reference kernels (``rlx_compile.interpreter``, run in the arena).

Claims every primitive and every fused op the reference kernels implement: the fused
matmul, conv, per-channel scale-shift, SwiGLU, LSTM cell, residual norms and the
attention block, whole recurrent layers (RNN, GRU, LSTM: a kernel per layer, as
onnxruntime runs them), the integer matmul/conv that int8 quantisation runs on, ONNX's
dynamic quantisation ops and onnxruntime's fused dynamically quantised matmul, and the
classic-ML models (tree ensembles, SVMs, linear classifiers, their preprocessing:
``CLASSIC_ML``) (RLX's own CPU backend has no fused conv; ours does, and fusing it saves
the conv's full-size intermediate). Elementwise regions are unfused: a CPU runs op by
op. No fusion size limits. The kernels broadcast like NumPy, so no broadcast is
materialised (RLX's CPU kernels index operands modulo their size and need
``legalize-broadcast``; an explicit expand costs a full-size buffer per broadcast
operand).
"""

from rlx_compile.dialects import mir
from rlx_compile.legalization.patterns import LOGICAL_KERNEL_PATTERNS, UNFUSE_PATTERNS
from rlx_compile.targets.base import (
    CLASSIC_ML,
    DYNAMIC_QUANT,
    INTEGER,
    MATMUL_AND_RESIDUAL_NORMS,
    PRIMITIVES,
    RECURRENT,
    REGION,
    UNBOUNDED,
    FusionLimits,
    Target,
)

TARGET = Target(
    name="cpu",
    description="CPU reference kernels",
    claims=PRIMITIVES
    | MATMUL_AND_RESIDUAL_NORMS
    | INTEGER
    | RECURRENT
    | CLASSIC_ML
    | DYNAMIC_QUANT
    | {
        mir.FusedSwigluOp.name,
        mir.FusedTwoSidedMatmulOp.name,
        mir.FusedTransposedMatmulOp.name,
        mir.ScaledMatmulOp.name,
        mir.FusedReshapeTransposeOp.name,
        mir.FusedAttentionBlockOp.name,
        mir.FusedConvBiasActOp.name,
        mir.FusedScaleShiftActOp.name,
        mir.FusedLstmCellOp.name,
        mir.FusedGruCellOp.name,
        mir.DynamicQuantizeMatmulOp.name,
        REGION,
    },
    limits=FusionLimits(max_region_steps=UNBOUNDED, max_region_inputs=UNBOUNDED),
    broadcast="native",
    patterns=UNFUSE_PATTERNS + LOGICAL_KERNEL_PATTERNS,
)
