"""tpu: XLA on TPUs.

Fused matmul and residual layer norm (no RMS variant, SwiGLU, attention block or conv);
elementwise regions run fused (32 ops, 16 inputs), as XLA fuses loops. XLA has no LRN
(lowered to its windowed sum); its convolution's lhs dilation is the transposed conv.
"""

from rlx_compile.dialects import mir
from rlx_compile.legalization.patterns import LOGICAL_KERNEL_PATTERNS, UNFUSE_PATTERNS
from rlx_compile.targets.base import PRIMITIVES, REGION, FusionLimits, Target

TARGET = Target(
    name="tpu",
    description="Google TPUs (XLA)",
    claims=(PRIMITIVES - {mir.LrnOp.name})
    | {
        mir.FusedMatmulBiasActOp.name,
        mir.FusedResidualLayerNormOp.name,
        REGION,
    },
    limits=FusionLimits(keep_regions=True),
    patterns=UNFUSE_PATTERNS + LOGICAL_KERNEL_PATTERNS,
)
