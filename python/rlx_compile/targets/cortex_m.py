"""cortex-m: Arm Cortex-M microcontrollers (CMSIS-NN int8 kernels, CMSIS-DSP float32).

A small kernel set: elementwise arithmetic on equal shapes, matmul and conv (with a
fused bias and ReLU clamp, as CMSIS-NN's fully-connected and convolution kernels),
pooling, last-axis reductions (log-sum-exp, L1, L2, sum of squares and log-sum too) and
softmax, data movement, quantize/dequantize. No norms, attention, rope, SiLU/GELU or erf
kernels: ``legalize`` lowers those to common IR. The classic-ML models (tree ensembles,
SVMs...) run as the cpu target's plain C loops. Element types: float32 (single-precision
FPU) and the 8/16/32-bit integers of the quantized kernels (so no int64 class labels).
No elementwise regions.
"""

from rlx_compile.dialects import mir
from rlx_compile.dialects.common import Activation
from rlx_compile.dialects.types import DType
from rlx_compile.legalization.patterns import (
    LOGICAL_KERNEL_PATTERNS,
    NARROW_KERNEL_PATTERNS,
    UNFUSE_PATTERNS,
)
from rlx_compile.targets.base import (
    CLASSIC_ML,
    LEAVES,
    FusionLimits,
    Target,
    last_axis_only,
)

_KERNELS = (
    mir.AddOp, mir.SubOp, mir.MulOp, mir.DivOp, mir.MaxOp, mir.MinOp,
    mir.NegOp, mir.AbsOp, mir.SignOp, mir.ReluOp, mir.SigmoidOp, mir.TanhOp, mir.ExpOp,
    mir.LogOp, mir.SqrtOp, mir.RsqrtOp, mir.ReciprocalOp,
    mir.CastOp, mir.CompareOp, mir.WhereOp,
    mir.MatmulOp, mir.FusedMatmulBiasActOp,
    mir.ReduceSumOp, mir.ReduceMeanOp, mir.ReduceMaxOp, mir.ReduceMinOp, mir.SoftmaxOp,
    mir.ReduceLogSumExpOp, mir.ReduceSumSquareOp, mir.ReduceL2Op, mir.ReduceL1Op,
    mir.ReduceLogSumOp,
    mir.ReshapeOp, mir.TransposeOp, mir.NarrowOp, mir.ConcatOp, mir.ExpandOp, mir.GatherOp,
    mir.GatherAxesOp, mir.GatherElementsOp, mir.PadOp,
    mir.ConvOp, mir.FusedConvBiasActOp, mir.MaxPoolOp, mir.AvgPoolOp,
    mir.QuantizeOp, mir.DequantizeOp, mir.IntegerMatmulOp, mir.IntegerConvOp,
    mir.DynamicQuantizeLinearOp, mir.MatmulIntegerOp, mir.ConvIntegerOp,
)  # fmt: skip

_RELU = frozenset({Activation.RELU})

TARGET = Target(
    name="cortex-m",
    description="Arm Cortex-M (CMSIS-NN int8, CMSIS-DSP f32)",
    claims=LEAVES | CLASSIC_ML | {op.name for op in _KERNELS},
    limits=FusionLimits(
        matmul_epilogues=_RELU,
        conv_epilogues=_RELU,
        conv_spatial_dims=(1, 2),
        keep_regions=False,
        max_region_steps=0,
        max_region_inputs=0,
    ),
    restrictions=(last_axis_only,),
    dtypes=frozenset({DType.F32, DType.I8, DType.I16, DType.I32, DType.BOOL}),
    broadcast="none",
    patterns=UNFUSE_PATTERNS + NARROW_KERNEL_PATTERNS + LOGICAL_KERNEL_PATTERNS,
)
