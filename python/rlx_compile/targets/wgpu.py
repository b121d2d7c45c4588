"""wgpu: WebGPU compute shaders (WGSL).

WGSL has no erf, no 64-bit types and no 8-bit arithmetic, and the kernels reduce,
softmax and normalise along the last axis only; there are no group or batch norm, LRN
or transposed-conv kernels. ``legalize`` rewrites the rest (erf as a polynomial, exact
GELU through it, reductions as a transpose plus a last-axis reduction, group norm as a
layer norm of the regrouped tensor, batch norm as a multiply-add, LRN as its windowed
sum, a transposed conv as a conv of the zero-stuffed input). Fused matmul (any activation but exact
GELU), SwiGLU, residual norms and the attention block. Regions are unfused (the region
kernel only broadcasts trailing operands). Kernels index operands modulo their size
(trailing broadcast), and the arena is f32-typed, so every activation slot is 4 bytes
per element.
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
    ALL_ACTIVATIONS,
    MATMUL_AND_RESIDUAL_NORMS,
    PRIMITIVES,
    REGION,
    FusionLimits,
    Target,
    last_axis_only,
    no_exact_gelu,
)

TARGET = Target(
    name="wgpu",
    description="WebGPU (WGSL compute shaders)",
    claims=(
        PRIMITIVES
        - {mir.ErfOp.name, mir.GroupNormOp.name, mir.BatchNormOp.name}
        - {mir.LrnOp.name, mir.ConvTransposeOp.name}
    )
    | MATMUL_AND_RESIDUAL_NORMS
    | {
        mir.FusedSwigluOp.name,
        mir.FusedAttentionBlockOp.name,
        REGION,
    },
    limits=FusionLimits(
        matmul_epilogues=ALL_ACTIVATIONS - {Activation.GELU},
        conv_epilogues=ALL_ACTIVATIONS - {Activation.GELU},
        keep_regions=False,
    ),
    restrictions=(last_axis_only, no_exact_gelu),
    dtypes=frozenset({DType.F32, DType.F16, DType.I32, DType.U32, DType.BOOL}),
    broadcast="trailing",
    width="f32-uniform",
    patterns=UNFUSE_PATTERNS + NARROW_KERNEL_PATTERNS + LOGICAL_KERNEL_PATTERNS,
)
