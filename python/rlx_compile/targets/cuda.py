"""cuda: cuBLASLt / cuDNN kernels.

The fused matmul applies cuBLASLt's epilogues (ReLU and GELU, which cuBLASLt computes in
its tanh form); the fused conv is cuDNN's conv-bias-activation, whose fast path wants a
2-D ungrouped conv with real windows (kernel dims > 1) and a ReLU. No fused SwiGLU or attention
block (as in RLX). Elementwise regions run as fused kernels (32 ops, 16 inputs).
"""

from rlx_compile.dialects import mir
from rlx_compile.dialects.common import Activation
from rlx_compile.legalization.patterns import LOGICAL_KERNEL_PATTERNS, UNFUSE_PATTERNS
from rlx_compile.targets.base import (
    MATMUL_AND_RESIDUAL_NORMS,
    PRIMITIVES,
    REGION,
    FusionLimits,
    Target,
)

TARGET = Target(
    name="cuda",
    description="NVIDIA GPUs (cuBLASLt, cuDNN)",
    claims=PRIMITIVES
    | MATMUL_AND_RESIDUAL_NORMS
    | {
        mir.FusedConvBiasActOp.name,
        REGION,
    },
    limits=FusionLimits(
        matmul_epilogues=frozenset({Activation.RELU, Activation.GELU_TANH}),
        conv_epilogues=frozenset({Activation.RELU}),
        conv_min_kernel=2,
        conv_spatial_dims=(2,),
        conv_grouped=False,
        keep_regions=True,
    ),
    patterns=UNFUSE_PATTERNS + LOGICAL_KERNEL_PATTERNS,
)
