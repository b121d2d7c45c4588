"""metal: Metal Performance Shaders and hand-written MSL kernels.

Fused matmul (any activation), SwiGLU and residual norms; no fused attention block or
conv. Elementwise regions are claimed but unfused by default: RLX's fused MSL region
kernel mis-lowered long chains (NaNs past ~14 blocks); ``fuse{regions=keep}`` keeps them.
"""

from rlx_compile.dialects import mir
from rlx_compile.legalization.patterns import LOGICAL_KERNEL_PATTERNS, UNFUSE_PATTERNS
from rlx_compile.targets.base import (
    MATMUL_AND_RESIDUAL_NORMS,
    PRIMITIVES,
    REGION,
    FusionLimits,
    Target,
)

TARGET = Target(
    name="metal",
    description="Apple GPUs (MPS, MSL)",
    claims=PRIMITIVES
    | MATMUL_AND_RESIDUAL_NORMS
    | {
        mir.FusedSwigluOp.name,
        REGION,
    },
    limits=FusionLimits(keep_regions=False),
    patterns=UNFUSE_PATTERNS + LOGICAL_KERNEL_PATTERNS,
)
