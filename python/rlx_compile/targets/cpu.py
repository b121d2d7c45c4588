"""cpu: the reference kernels.

Claims every primitive plus the fused matmul, SwiGLU, residual norms and the attention
block (not the fused conv: RLX's CPU backend has none, so a conv's bias and activation
stay separate ops). Elementwise regions are unfused: a CPU runs op by op, and fusing
bought nothing there in RLX. No fusion size limits. Its elementwise kernels index each
operand modulo its size, so broadcasts other than a trailing suffix or a scalar are made
explicit by ``legalize-broadcast``.
"""

from rlx_compile.conversion.patterns import LOGICAL_KERNEL_PATTERNS, UNFUSE_PATTERNS
from rlx_compile.dialects import mir
from rlx_compile.targets.base import (
    MATMUL_AND_RESIDUAL_NORMS,
    PRIMITIVES,
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
    | {
        mir.FusedSwigluOp.name,
        mir.FusedAttentionBlockOp.name,
        REGION,
    },
    limits=FusionLimits(max_region_steps=UNBOUNDED, max_region_inputs=UNBOUNDED),
    broadcast="trailing",
    patterns=UNFUSE_PATTERNS + LOGICAL_KERNEL_PATTERNS,
)
