"""onnxruntime's contrib ops (com.microsoft) that its CPU graph optimiser writes, so that
models saved after that optimisation (``SessionOptions.optimized_model_filepath``,
optimum's ``*_optimized.onnx``) import: the fused conv, gemm and matmul (FusedConv,
FusedGemm, FusedMatMul), the GELU family (Gelu, FastGelu, BiasGelu, QuickGelu) and the
residual norms (SkipLayerNormalization, SkipSimplifiedLayerNormalization, and
SimplifiedLayerNormalization, which onnxruntime defines in the default domain). Each is
the ops it fuses; ``fuse`` makes fused ops of them again. What onnxruntime's CPU kernels
do not compute (BiasSoftmax and BiasAdd have no CPU kernel) is refused."""

from __future__ import annotations

from typing import cast

from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects.common import Activation
from rlx_compile.dialects.types import fmt_shape
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    axis_of,
    converter,
)
from rlx_compile.frontends.onnx.ops.elementwise import (
    ACTIVATION_DEFAULTS,
    RECURRENT_ACTIVATIONS,
    activation_fn,
    scaled_silu,
)
from rlx_compile.frontends.onnx.ops.nn import conv_bias_act, gemm, layer_norm_outputs

MS = "com.microsoft"

# ---------------------------------------------------------------------------------
# Fused conv, gemm and matmul
# ---------------------------------------------------------------------------------

FUSED_CONV_ACTIVATIONS: dict[str, tuple[Activation, int]] = {
    "Relu": (Activation.RELU, 0),
    "Tanh": (Activation.TANH, 0),
    "Sigmoid": (Activation.SIGMOID, 0),
    "LeakyRelu": (Activation.LEAKY_RELU, 1),  # [alpha]
    "Clip": (Activation.CLIP, 2),  # [min, max]
    "HardSigmoid": (Activation.HARD_SIGMOID, 2),  # [alpha, beta]
}
"""FusedConv's ``activation`` names (MLAS's activations), the activation each is and
how many ``activation_params`` it reads, in ``act_params`` order."""


@converter("FusedConv", domain=MS)
def fused_conv(ctx: NodeContext) -> ConverterResult:
    """act(conv(X, W) + B + Z): Z, the optional 4th input, is added before the
    activation, as MLAS accumulates the conv onto it."""
    name = ctx.attr("activation")
    params = list(ctx.attr("activation_params", []))
    act, count = Activation.NONE, 0
    if name is not None:
        if name not in FUSED_CONV_ACTIVATIONS:
            raise Unsupported(f"activation {name!r}")
        act, count = FUSED_CONV_ACTIVATIONS[name]
        if count and len(params) != count:
            raise Unsupported(f"activation {name} takes {count} activation_params, got {params}")
    return conv_bias_act(ctx, ctx.x(0), ctx.x(1), ctx.opt(2), ctx.opt(3), act, params[:count])


FUSED_GEMM_ACTIVATIONS = ("Elu", "HardSigmoid", "LeakyRelu", "Relu", "ScaledTanh", "Sigmoid",
                          "Softplus", "Softsign", "Tanh", "ThresholdedRelu")  # fmt: skip
"""FusedGemm's ``activation`` names that onnxruntime's CPU kernel takes and RLX has (it
also takes Celu, Selu and ParametricSoftplus)."""


@converter("FusedGemm", domain=MS)
def fused_gemm(ctx: NodeContext) -> ConverterResult:
    """act(Gemm): the activation's attributes carry the prefix ``activation_``."""
    name = ctx.attr("activation")
    if name not in FUSED_GEMM_ACTIVATIONS:
        raise Unsupported(f"activation {name!r}")
    reads_alpha, reads_beta = RECURRENT_ACTIVATIONS[name][1:]
    alpha, beta = ACTIVATION_DEFAULTS.get(name, (None, None))
    alpha = ctx.attr("activation_alpha", alpha) if reads_alpha else 0.0
    beta = ctx.attr("activation_beta", beta) if reads_beta else 0.0
    if alpha is None or beta is None:
        raise Unsupported(f"activation {name} needs activation_alpha and activation_beta")
    return activation_fn(ctx.b, name, alpha, beta)(cast(SSAValue, gemm(ctx)))


def _fused_matmul_operand(
    ctx: NodeContext, x: SSAValue, name: str, trans: int, trans_batch: int
) -> SSAValue:
    """A FusedMatMul operand as the plain matmul reads it: with ``transBatch`` the first
    dim moves behind the other batch dims ([1, ..., r-2, 0, r-1]), then with ``trans``
    the last two swap (a vector is not transposed)."""
    rank = type_of(x).rank
    if rank == 0:
        raise Unsupported(f"a scalar {name}")
    perm = list(range(rank))
    if trans_batch:
        if rank < 3:
            raise Unsupported(f"transBatch{name} of a rank-{rank} {name}")
        perm = [*perm[1:-1], perm[0], perm[-1]]
    if trans and rank >= 2:
        perm[-2], perm[-1] = perm[-1], perm[-2]
    return x if perm == list(range(rank)) else ctx.b.transpose(x, perm)


@converter("FusedMatMul", domain=MS)
def fused_matmul(ctx: NodeContext) -> ConverterResult:
    """alpha · A' · B', A' and B' the operands transposed as the attributes say."""
    a = _fused_matmul_operand(ctx, ctx.x(0), "A", ctx.attr("transA", 0), ctx.attr("transBatchA", 0))
    b = _fused_matmul_operand(ctx, ctx.x(1), "B", ctx.attr("transB", 0), ctx.attr("transBatchB", 0))
    y = ctx.b.matmul(a, b)
    alpha = ctx.attr("alpha", 1.0)
    return y if alpha == 1.0 else ctx.b.mul(y, alpha)


# ---------------------------------------------------------------------------------
# GELU family
# ---------------------------------------------------------------------------------


def _biased(ctx: NodeContext) -> SSAValue:
    """Input 0, plus the bias of input 1 where it is given."""
    bias = ctx.opt(1)
    return ctx.x(0) if bias is None else ctx.b.add(ctx.x(0), bias)


@converter("Gelu", "BiasGelu", domain=MS)
def gelu(ctx: NodeContext) -> ConverterResult:
    """The erf GELU (of A + B for BiasGelu)."""
    return ctx.b.gelu(_biased(ctx))


@converter("FastGelu", domain=MS)
def fast_gelu(ctx: NodeContext) -> ConverterResult:
    """The tanh approximation of GELU, of X + bias where the bias is given."""
    return ctx.b.gelu(_biased(ctx), "tanh")


@converter("QuickGelu", domain=MS)
def quick_gelu(ctx: NodeContext) -> ConverterResult:
    """x · sigmoid(alpha · x); onnxruntime writes SiLU as QuickGelu of alpha 1."""
    return scaled_silu(ctx.b, ctx.x(0), ctx.attr("alpha", 1.702))


# ---------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------


def _rms_norm_outputs(
    ctx: NodeContext, x: SSAValue, scale: SSAValue, axis: int, eps: float, inv_std: bool
) -> tuple[SSAValue, SSAValue | None]:
    """(y, inv_std_var) of an RMS norm over the axes from ``axis`` (non-negative) on: one
    ``mir.rms_norm`` without ``inv_std``, else the normalisation spelled out."""
    if not inv_std:
        return ctx.b.rms_norm(x, scale, None, axis, eps), None
    axes = list(range(axis, type_of(x).rank))
    inv = ctx.b.rsqrt(ctx.b.add(ctx.b.mean(ctx.b.mul(x, x), axes, keepdims=True), eps))
    return ctx.b.mul(ctx.b.mul(x, inv), scale), inv


@converter("SimplifiedLayerNormalization")
def simplified_layer_norm(ctx: NodeContext) -> ConverterResult:
    """onnxruntime's RMS norm (its own op of the default domain): Y and inv_std_var."""
    x = ctx.x(0)
    axis = axis_of(ctx.attr("axis", -1), type_of(x).rank)
    ctx.check_attr("stash_type", (1,), 1)
    y, inv = _rms_norm_outputs(
        ctx, x, ctx.x(1), axis, ctx.attr("epsilon", 1e-5), ctx.output_used(1)
    )
    return [y, inv]


@converter("SkipLayerNormalization", "SkipSimplifiedLayerNormalization", domain=MS)
def skip_layer_norm(ctx: NodeContext) -> ConverterResult:
    """norm(input + skip + bias) over the last dim, and the mean, inv_std_var and the sum
    it normalises as outputs 1 to 3; the skip may broadcast over the input's batch."""
    simplified = ctx.op_type == "SkipSimplifiedLayerNormalization"
    x = ctx.x(0)
    total = ctx.b.add(x, ctx.x(1))
    if type_of(total).shape != type_of(x).shape:
        raise Unsupported(
            f"a skip of shape {fmt_shape(ctx.shape(1))} for an input of shape "
            f"{fmt_shape(ctx.shape(0))}"
        )
    bias = ctx.opt(3 if simplified else 4)
    if bias is not None:
        total = ctx.b.add(total, bias)
    eps = ctx.attr("epsilon", 1e-12)
    axis = type_of(x).rank - 1
    if not simplified:
        return [*layer_norm_outputs(ctx, total, ctx.x(2), ctx.opt(3), axis, eps), total]
    if ctx.output_used(1):
        raise Unsupported("output #1 (mean): an RMS norm has none")
    y, inv = _rms_norm_outputs(ctx, total, ctx.x(2), axis, eps, ctx.output_used(2))
    return [y, None, inv, total]
