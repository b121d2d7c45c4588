"""What a compilation target is.

A ``Target`` declares
- its **claim set**: the MIR op names its kernels implement (leaves included, as in
  RLX: a target that cannot bind a parameter cannot run the graph);
- **restrictions**: claimed ops it implements only in some forms (wgpu reduces over the
  last axis only, has no erf for exact GELU); an op is *legal* when it is claimed, passes
  every restriction and has element types the target handles;
- its **fusion limits**: which activations its fused matmul/conv kernels apply, whether
  elementwise regions run as fused kernels and how large they may grow;
- how its elementwise kernels **broadcast** (``legalize-broadcast`` makes it explicit);
- its **conversion patterns**: the rewrites ``legalize`` may use to turn illegal ops
  into legal ones, in order.

One file per target under ``rlx_compile.targets`` builds its ``Target``; the package's
registry is the single list of target names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from xdsl.ir import Operation
from xdsl.traits import IsTerminator

from rlx_compile.dialects import mir
from rlx_compile.dialects.common import (
    ACTIVATION_PARAMS,
    Activation,
    GeluApproximation,
    ShapedOp,
)
from rlx_compile.dialects.traits import is_fused, is_leaf
from rlx_compile.dialects.types import DType, TensorType

if TYPE_CHECKING:  # the legalization package (its driver) imports this module
    from rlx_compile.legalization.base import ConversionPattern

# ---------------------------------------------------------------------------------
# Op name sets
# ---------------------------------------------------------------------------------

LEAVES = frozenset(op.name for op in mir.MIR_OPS if is_leaf(op))
REGION = mir.ElementwiseRegionOp.name
FUSED = frozenset(op.name for op in mir.MIR_OPS if is_fused(op))
MATMUL_AND_RESIDUAL_NORMS = frozenset(
    op.name
    for op in (mir.FusedMatmulBiasActOp, mir.FusedResidualRmsNormOp, mir.FusedResidualLayerNormOp)
)
"""The fused ops every GPU-class target of RLX claims."""
STRUCTURAL = frozenset(op.name for op in mir.MIR_OPS if op.has_trait(IsTerminator))
"""Terminators and the like: part of another op, never dispatched on their own."""
INTEGER_PRODUCTS = frozenset({mir.IntegerMatmulOp.name, mir.IntegerConvOp.name})
"""Integer matmul/conv kernels (quant-to-integer makes them for targets claiming them)."""
INTEGER = INTEGER_PRODUCTS | {
    mir.QuantizedAddOp.name, mir.QuantizedAvgPoolOp.name, mir.QuantizedSoftmaxOp.name,
}  # fmt: skip
"""The integer kernels quant-to-integer makes, each for the targets claiming it."""
RECURRENT = frozenset(op.name for op in mir.RECURRENT_OPS)
"""Whole recurrent layers (a kernel of its own, not a primitive); ``legalize`` lowers
them to their steps for a target that does not claim them."""
DYNAMIC_QUANT = frozenset(
    op.name for op in (mir.DynamicQuantizeLinearOp, mir.MatmulIntegerOp, mir.ConvIntegerOp)
)
"""ONNX's dynamic quantisation ops (legalization lowers them to primitives elsewhere)."""
CONTROL_FLOW = frozenset(op.name for op in mir.CONTROL_FLOW_OPS)
"""Run by the executor around the kernels of their regions, which are dispatched (and
legalized) like the graph's own ops: legal on every target."""
_ALWAYS_LEGAL = STRUCTURAL | CONTROL_FLOW
CLASSIC_ML = frozenset(
    op.name
    for op in (
        mir.TreeEnsembleOp, mir.TreeEnsembleClassifierOp, mir.SvmRegressorOp,
        mir.SvmClassifierOp, mir.LinearClassifierOp, mir.NormalizerOp, mir.LabelEncoderOp,
        mir.ScalerOp, mir.BinarizerOp, mir.ImputerOp, mir.OneHotEncoderOp,
    )
)  # fmt: skip
"""Trained classic-ML models and their preprocessing as one op each (ONNX's ai.onnx.ml):
claimed by the targets with kernels for them, lowered to primitives (``legalization.ml``)
for the others."""
OWN_KERNELS = INTEGER | DYNAMIC_QUANT | RECURRENT | CLASSIC_ML
"""Ops of a kernel of their own, neither primitive nor fused: claimed by the targets that
have the kernel, lowered to primitives for the others."""
PRIMITIVES = frozenset(
    op.name
    for op in mir.MIR_OPS
    if op.name not in FUSED | {REGION} | STRUCTURAL | OWN_KERNELS | CONTROL_FLOW
)
"""Every MIR op that is not a fused op, a region or an op of its own kernel: RLX's
primitive vocabulary."""

ACTIVATION_OPS: dict[Activation, str] = {
    Activation.RELU: mir.ReluOp.name,
    Activation.GELU: mir.GeluOp.name,
    Activation.GELU_TANH: mir.GeluOp.name,
    Activation.SILU: mir.SiluOp.name,
    Activation.SIGMOID: mir.SigmoidOp.name,
    Activation.TANH: mir.TanhOp.name,
    Activation.CLIP: mir.ClipOp.name,
    Activation.HARD_SIGMOID: mir.HardSigmoidOp.name,
    Activation.HARD_SWISH: mir.HardSwishOp.name,
    Activation.LEAKY_RELU: mir.LeakyReluOp.name,
}
ACTIVATION_LABELS: dict[Activation, str] = {
    Activation.NONE: "none",
    Activation.RELU: "relu",
    Activation.GELU: "erf-gelu",
    Activation.GELU_TANH: "tanh-gelu",
    Activation.SILU: "silu",
    Activation.SIGMOID: "sigmoid",
    Activation.TANH: "tanh",
    Activation.CLIP: "clip",
    Activation.HARD_SIGMOID: "hard-sigmoid",
    Activation.HARD_SWISH: "hard-swish",
    Activation.LEAKY_RELU: "leaky-relu",
}
ALL_ACTIVATIONS = frozenset(a for a in Activation if a is not Activation.NONE)


def activation_params(op: Operation) -> tuple[float, ...]:
    """The ``act_params`` of the fused-epilogue activation ``op`` computes."""
    match op:
        case mir.ClipOp() | mir.HardSigmoidOp() | mir.LeakyReluOp():
            act = activation_of(op)
            assert act is not None  # each of these ops is an activation
            p = op.props()
            return tuple(p.float(name) for name in ACTIVATION_PARAMS[act])
    return ()


def activation_of(op: Operation) -> Activation | None:
    """The fused-epilogue activation an op computes, or None for other ops."""
    match op:
        case mir.ClipOp():
            return Activation.CLIP
        case mir.HardSigmoidOp():
            return Activation.HARD_SIGMOID
        case mir.HardSwishOp():
            return Activation.HARD_SWISH
        case mir.LeakyReluOp():
            return Activation.LEAKY_RELU
        case mir.ReluOp():
            return Activation.RELU
        case mir.GeluOp():
            approx = op.props().enum("approximate")
            return Activation.GELU_TANH if approx is GeluApproximation.TANH else Activation.GELU
        case mir.SiluOp():
            return Activation.SILU
        case mir.SigmoidOp():
            return Activation.SIGMOID
        case mir.TanhOp():
            return Activation.TANH
    return None


# ---------------------------------------------------------------------------------
# Restrictions: claimed ops a target implements only in some forms
# ---------------------------------------------------------------------------------

Restriction = Callable[[Operation], "str | None"]
"""Returns why this op is not supported in this form, or None when it is."""


def _last_axis(axes: Iterable[int], rank: int) -> bool:
    return list(axes) == [rank - 1] if rank else not list(axes)


def last_axis_only(op: Operation) -> str | None:
    """Reductions, softmax, arg-reductions and norms only along the last axis."""
    if not isinstance(op, ShapedOp) or not op.operands:
        return None
    t = op.operands[0].type
    assert isinstance(t, TensorType)
    p = op.props()
    if isinstance(op, mir.ReduceOp):
        axes = p.ints("axes")
        if not _last_axis(axes, t.rank):
            return f"reduces over axes {list(axes)}, not only the last axis"
    elif isinstance(op, mir.AxisFloatOp | mir.ArgReduceOp):
        if p.int("axis") != t.rank - 1:
            return f"works along axis {p.int('axis')}, not the last axis"
    elif isinstance(op, mir.NormOp) and p.int("axis") != t.rank - 1:
        return f"normalises dims {p.int('axis')}..{t.rank - 1}, not only the last one"
    return None


def no_exact_gelu(op: Operation) -> str | None:
    """No erf: GELU only in its tanh form."""
    if isinstance(op, mir.GeluOp) and activation_of(op) is Activation.GELU:
        return "exact (erf) GELU needs erf"
    return None


# ---------------------------------------------------------------------------------
# Target
# ---------------------------------------------------------------------------------

BROADCAST_KINDS = ("native", "trailing", "none")


@dataclass(frozen=True)
class FusionLimits:
    """What the target's fused kernels can do."""

    matmul_epilogues: frozenset[Activation] = ALL_ACTIVATIONS
    """Activations its fused matmul kernel applies after the bias."""
    conv_epilogues: frozenset[Activation] = ALL_ACTIVATIONS
    conv_min_kernel: int = 1
    """Fused conv kernels need every kernel dim at least this large (cuDNN's fused path
    wants real 2-D windows); smaller convs keep the bias and activation separate."""
    conv_spatial_dims: tuple[int, ...] = (1, 2, 3)
    """Spatial ranks its fused conv kernel handles."""
    conv_grouped: bool = True
    """Whether its fused conv kernel handles groups > 1."""
    keep_regions: bool = False
    """Run elementwise regions as fused kernels; otherwise regions are unfused."""
    max_region_steps: int = 32
    max_region_inputs: int = 16

    @property
    def every_imported_conv(self) -> bool:
        """Whether its fused conv kernel takes every conv an ONNX Conv with a bias imports
        as (``mir.BIASED_CONV_SPATIAL_DIMS``, any window, grouped)."""
        return (
            self.conv_min_kernel <= 1
            and self.conv_grouped
            and set(mir.BIASED_CONV_SPATIAL_DIMS) <= set(self.conv_spatial_dims)
        )


UNBOUNDED = 1 << 30


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    claims: frozenset[str]
    limits: FusionLimits = field(default_factory=FusionLimits)
    restrictions: tuple[Restriction, ...] = ()
    dtypes: frozenset[DType] | None = None
    """Element types its kernels handle (None: all)."""
    broadcast: str = "native"
    """``native``: kernels broadcast; ``trailing``: kernels index operands modulo their
    size, so an operand must equal the result shape, be one element, or be a suffix of
    it; ``none``: operands must have the result's shape."""
    width: str = "native"
    """Arena slot width policy for memory planning."""
    patterns: tuple[type[ConversionPattern], ...] = ()
    """Conversion patterns ``legalize`` may apply to illegal ops, in order."""

    def __post_init__(self) -> None:
        if self.broadcast not in BROADCAST_KINDS:
            raise ValueError(f"unknown broadcast kind {self.broadcast!r}")
        unknown = sorted(self.claims - PRIMITIVES - FUSED - OWN_KERNELS - {REGION})
        if unknown:
            raise ValueError(f"target {self.name} claims unknown ops {unknown}")

    # -- legality ---------------------------------------------------------------------
    def claims_op(self, name: str) -> bool:
        return name in self.claims

    @property
    def runs_integer_kernels(self) -> bool:
        """Whether it claims the integer matmul and conv (``quant-to-integer`` makes them)."""
        return self.claims >= INTEGER_PRODUCTS

    def illegal_reason(self, op: Operation) -> str | None:
        """Why ``op`` cannot run on this target as it is (None: it can)."""
        if op.name in _ALWAYS_LEGAL:
            return None
        if op.name not in self.claims:
            return "not claimed"
        for restriction in self.restrictions:
            reason = restriction(op)
            if reason is not None:
                return reason
        if self.dtypes is not None:
            for v in (*op.operands, *op.results):
                t = v.type
                if isinstance(t, TensorType) and t.dtype not in self.dtypes:
                    return f"{t.dtype.value} tensors are not supported"
        return None

    def is_legal(self, op: Operation) -> bool:
        return self.illegal_reason(op) is None

    # -- fusion -------------------------------------------------------------------------
    def fuses_activation(self, act: Activation, conv: bool = False) -> bool:
        epilogues = self.limits.conv_epilogues if conv else self.limits.matmul_epilogues
        return act in epilogues

    def with_claims(self, claims: Iterable[str], name: str | None = None) -> Target:
        """This target with another claim set (RLX's ``supported_ops``): fused epilogues
        keep only the activations whose own op is claimed."""
        claim_set = frozenset(claims)
        ok = frozenset(a for a, op in ACTIVATION_OPS.items() if op in claim_set)
        limits = replace(
            self.limits,
            matmul_epilogues=self.limits.matmul_epilogues & ok,
            conv_epilogues=self.limits.conv_epilogues & ok,
            keep_regions=self.limits.keep_regions and REGION in claim_set,
        )
        return replace(self, name=name or self.name, claims=claim_set, limits=limits)
