"""rocm: hipBLASLt / MIOpen kernels.

As cuda, but MIOpen has no fused conv-bias-activation path, so convs keep their bias and
activation as separate ops (elementwise regions pick them up).
"""

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
    name="rocm",
    description="AMD GPUs (hipBLASLt, MIOpen)",
    claims=PRIMITIVES
    | MATMUL_AND_RESIDUAL_NORMS
    | {
        REGION,
    },
    limits=FusionLimits(
        matmul_epilogues=frozenset({Activation.RELU, Activation.GELU_TANH}),
        keep_regions=True,
    ),
    patterns=UNFUSE_PATTERNS + LOGICAL_KERNEL_PATTERNS,
)
