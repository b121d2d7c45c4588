"""``fuse-scale-shift``: a per-channel affine with no conv to fold into, and its
activation, as one ``mir.fused_scale_shift_act``.

- an inference batch norm that ``fold-conv-batch-norm`` could not take (after a concat,
  on a block input: DenseNet's pre-activation layers) becomes
  ``x · s + t`` with ``s = scale · rsqrt(variance + eps)``, ``t = bias - mean · s``;
- ``x · s + t`` (also ``- t``) with ``s`` and ``t`` weights broadcasting along the channel
  axis or of one element (PP-OCR's learnable affine blocks);
- a following ``· s`` / ``/ s`` / ``+ t`` / ``- t`` by such a weight folds into the scale
  and shift, and an activation read by nothing else into the op (the conv's epilogue
  rule, ``FusionLimits.conv_epilogues``);
- a scale-shift of a dense layer's [N, C] output (Keras' and BatchNorm1d's affine after
  a Dense or Linear layer) folds into the layer's weight and bias instead, as
  ``fold-conv-batch-norm`` folds a conv's (onnxruntime's MatMulBNFusion):
  ``(x @ w + b) · s + t -> x @ (w · s) + (b · s + t)``, with its activation when the
  target's fused matmul applies it; the layer's output must have no other reader;
- one without activation read only by dense layers (a batch norm after a Dense + ReLU,
  before the next Dense) folds into their weights and biases:
  ``(x · s + t) @ w + b -> x @ (s[:, None] · w) + (t @ w + b)``;
- so does a lone ``· s``, ``/ s``, ``+ t`` or ``- t`` by such a weight on either side of
  dense layers (TVM's FoldScaleAxis; scikit-learn's PCA whitening and scalers around a
  linear model: ``(x - mean) @ w / std`` is one dense layer);
- a shift then a scale, ``(x ± t) · s`` or ``(x ± t) / s`` (a standard scaler), or a
  division then a shift, ``x / s ± t``, is ``x · s' + t'`` as well.

The scale and shift are ops on the parameters (when they are all constants, computed at
once: ``Eager`` gives the numbers folding the ops would); one kernel then reads the input
once instead of once per op. Rounding differs from the
unfolded ops by the reassociation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import GraphBuilder, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import Activation
from rlx_compile.dialects.types import Dim
from rlx_compile.folding import DEFAULT_MAX_ELEMENTS, constant_values, scales_exactly
from rlx_compile.fusion.base import (
    FusionPattern,
    Match,
    Miss,
    channel_vector,
    describe_uses,
    fold_activation,
    is_static,
    no_activation,
    per_channel,
    producer,
    sole_user,
    users,
)
from rlx_compile.fusion.stage import FusionPass
from rlx_compile.interpreter.eager import Eager, batch_norm_scale_shift

FUSED = mir.FusedScaleShiftActOp.name
NEEDED = tuple(
    op.name for op in (mir.MulOp, mir.AddOp, mir.SubOp, mir.NegOp, mir.RsqrtOp, mir.ReshapeOp)
)


@dataclass
class NewScaleShift(Match):
    x: SSAValue
    scale: SSAValue | None
    shift: SSAValue | None
    negate_shift: bool = False


@dataclass
class IntoScaleShift(Match):
    """A weight folding into an existing scale-shift (``absorbed[0]``)."""

    factor: SSAValue


@dataclass
class IntoDense(Match):
    """A scale-shift (the root) folding into the dense layer producing its input."""

    dense: mir.DenseOp


@dataclass
class IntoReaders(Match):
    """A scale-shift (the root) folding into the dense layers reading it (the rest of
    ``absorbed``)."""


@dataclass
class Affine:
    """A lone per-channel ``· s``, ``/ s``, ``+ t`` or ``- t`` of ``x`` by ``weight``."""

    x: SSAValue
    weight: SSAValue
    kind: type[mir.BinaryOp]

    @property
    def scales(self) -> bool:
        """A ``· s`` or ``/ s`` (else a shift)."""
        return self.kind in (mir.MulOp, mir.DivOp)


def _composed(
    b: GraphBuilder,
    affines: Sequence[Affine],
    channels: Dim,
    scale: SSAValue | None = None,
    shift: SSAValue | None = None,
) -> tuple[SSAValue | None, SSAValue | None]:
    """The (scale, shift) [C] vectors of ``x · scale + shift`` followed by ``affines`` in
    turn (None: 1 or 0)."""
    for a in affines:
        w = channel_vector(b, a.weight, channels)
        if a.kind is mir.AddOp:
            shift = w if shift is None else b.add(shift, w)
        elif a.kind is mir.SubOp:
            shift = b.neg(w) if shift is None else b.sub(shift, w)
        elif a.kind is mir.MulOp:
            scale = w if scale is None else b.mul(scale, w)
            shift = None if shift is None else b.mul(shift, w)
        else:
            one = b.constant(1.0, type_of(w).dtype, [])
            scale = b.div(one, w) if scale is None else b.div(scale, w)
            shift = None if shift is None else b.div(shift, w)
    return scale, shift


@dataclass
class AffineChain(Match):
    """A scaling and a shifting of ``first.x`` (``second`` the root, reading ``first``),
    becoming one scale-shift."""

    first: Affine
    second: Affine


@dataclass
class AffineIntoDense(Match):
    """A lone affine (the root) folding into the dense layer producing its input."""

    affine: Affine
    dense: mir.DenseOp


@dataclass
class AffineIntoReaders(Match):
    """A lone affine (the root) folding into the dense layers reading it (the rest of
    ``absorbed``)."""

    affine: Affine


def _weight_on(op: Operation, kind: type[Operation]) -> tuple[Operation, SSAValue] | None:
    """For a binary op: (the op of ``kind`` producing one operand, the other operand) when
    the other is a per-channel weight (only the rhs for a sub or div)."""
    a, b = op.operands
    pairs = ((a, b), (b, a)) if isinstance(op, mir.MulOp | mir.AddOp) else ((a, b),)
    for x, w in pairs:
        p = producer(x, kind)
        if p is None or type_of(x) != type_of(op.results[0]):
            continue
        if per_channel(type_of(w), type_of(x)) and is_static(w):
            return p, w
    return None


class FuseScaleShift(FusionPattern):
    name = "scale_shift"
    roots = (mir.BatchNormOp, mir.MulOp, mir.DivOp, mir.AddOp, mir.SubOp, mir.FusedScaleShiftActOp)
    # A shift reads a mul or a division, a scaling a shift; a lone affine folds into a
    # dense layer.
    needs = (
        mir.BatchNormOp, mir.FusedScaleShiftActOp, mir.MulOp, mir.DivOp, mir.MatmulOp,
        mir.FusedMatmulBiasActOp,
    )  # fmt: skip

    def match(self, op: Operation) -> Match | Miss | None:
        if isinstance(op, mir.FusedScaleShiftActOp):
            # The activation first: the layer then takes it with the scale-shift.
            folded = fold_activation(op, self.target, conv=True)
            if isinstance(folded, Match):
                return folded
            into = self._into_dense(op)
            if isinstance(into, Match):
                return into
            readers = self._into_readers(op)
            return readers if isinstance(readers, Match) else folded or into
        if not type_of(op.results[0]).dtype.is_float or type_of(op.results[0]).rank < 2:
            return None
        if isinstance(op, mir.BatchNormOp):
            return self._claimed(NewScaleShift(op, [op], op.input, None, None))
        found = _weight_on(op, mir.FusedScaleShiftActOp)
        if found is not None:
            fused, factor = found
            assert isinstance(fused, mir.FusedScaleShiftActOp)
            if fused.props().enum("activation") is not Activation.NONE:
                return None
            if sole_user(fused.results[0]) is not op:
                return Miss(
                    describe_uses(fused.results[0], "the scale-shift"),
                    "a weight folds into the scale-shift only when nothing else reads it",
                )
            return self._claimed(IntoScaleShift(op, [fused, op], factor))
        if not isinstance(op, mir.AddOp | mir.SubOp):
            return self._lone_affines(op)
        shifted = _weight_on(op, mir.MulOp)
        if shifted is None:
            return self._lone_affines(op)
        mul, shift = shifted
        scaled = _scaled_input(mul)
        if scaled is None:
            return None
        if sole_user(mul.results[0]) is not op:
            return Miss(
                describe_uses(mul.results[0], "the scaled value"),
                "the product must be read by the shift alone",
            )
        x, scale = scaled
        return self._claimed(
            NewScaleShift(op, [mul, op], x, scale, shift, isinstance(op, mir.SubOp))
        )

    def _lone_affines(self, op: Operation) -> Match | None:
        """``op`` as a lone per-channel affine (one of a scale-shift or of ``x · s + t``
        was taken above): with the affine it reads (a chain), else into a dense layer."""
        # Every mul, div, add and sub is asked: the neighbours are looked at first.
        near = any(isinstance(v.owner, _AFFINE_OR_DENSE) for v in op.operands)
        if not near and not any(isinstance(u, _DENSE) for u in users(op.results[0])):
            return None
        affine = _lone_affine(op)
        if affine is None:
            return None
        return self._affine_chain(op, affine) or self._affine_into_dense(op, affine)

    def _affine_chain(self, op: Operation, second: Affine) -> Match | None:
        """``op`` a per-channel shift of a scaling or a scaling of a shift (not the
        ``x · s + t`` that ``NewScaleShift`` takes from a mul), read by it alone."""
        if not isinstance(second.x, OpResult):
            return None
        first = _lone_affine(second.x.op)
        if first is None or first.scales == second.scales or sole_user(second.x) is not op:
            return None
        # Not a near miss where the target has no scale-shift kernel: such pairs (any
        # scalar (x + a) · b) are everywhere, and the primitives are what it runs.
        if self.ctx.unclaimed(FUSED, *NEEDED):
            return None
        return AffineChain(op, [second.x.op, op], first, second)

    def _affine_into_dense(self, op: Operation, affine: Affine) -> Match | None:
        """A lone per-channel affine of a dense layer's [N, C] output or input folding
        into that layer or its readers, on the rules of ``_into_dense`` and
        ``_into_readers`` (static weights, no activation in between, nothing else reading
        what changes, no scalar factor the weight cannot take exactly)."""
        if type_of(op.results[0]).rank != 2:
            return None
        if affine.kind in (mir.MulOp, mir.DivOp) and _one_inexact_factor(affine.weight):
            return None
        if self.ctx.unclaimed(mir.FusedMatmulBiasActOp.name):
            return None
        dense = _static_dense_producing(affine.x)
        if dense is not None and sole_user(affine.x) is op:
            return AffineIntoDense(op, [dense, op], affine, dense)
        readers = users(op.results[0])
        if readers and all(_dense_reads(r, op.results[0]) for r in readers):
            return AffineIntoReaders(op, [op, *readers], affine)
        return None

    def _claimed(self, m: Match) -> Match | Miss:
        return self.ctx.unclaimed(FUSED, *NEEDED) or m

    def _into_dense(self, op: mir.FusedScaleShiftActOp) -> Match | Miss | None:
        """``op`` folding into the dense layer (a matmul by a weight, with its bias
        and no activation) whose [N, C] output it scales, channels being its columns."""
        dense = _static_dense_producing(op.input)
        if dense is None or not (is_static(op.scale) and is_static(op.shift)):
            return None  # a run-time weight: folding would recompute it on every call
        act = op.props().enum("activation")
        if act is not Activation.NONE and not self.target.fuses_activation(act):
            return None
        if _one_inexact_factor(op.scale):
            return None
        if sole_user(op.input) is not op:
            return Miss(
                describe_uses(op.input, "the dense layer's output"),
                "folding rewrites the layer's weights: nothing else may read its output",
            )
        return self.ctx.unclaimed(mir.FusedMatmulBiasActOp.name) or IntoDense(
            op, [dense, op], dense
        )

    def _into_readers(self, op: mir.FusedScaleShiftActOp) -> Match | None:
        """``op`` folding into the dense layers that read its [N, C] output as their
        input (channels being the rows of their weights), when nothing else reads it."""
        if not no_activation(op) or type_of(op.result).rank != 2:
            return None
        if not (is_static(op.scale) and is_static(op.shift)) or _one_inexact_factor(op.scale):
            return None
        readers = users(op.result)
        if not all(_dense_reads(r, op.result) for r in readers):
            return None
        if not readers or self.ctx.unclaimed(mir.FusedMatmulBiasActOp.name):
            return None
        return IntoReaders(op, [op, *readers])

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(m.root)
        if isinstance(m, IntoDense):
            root = m.root
            assert isinstance(root, mir.FusedScaleShiftActOp)
            p = root.props()
            y = _folded_dense(
                b, m.dense, root.scale, root.shift, p.enum("activation"), p.floats("act_params")
            )
            self.replace(rewriter, m, ops, [y])
            return
        if isinstance(m, AffineChain):
            channels = type_of(m.root.results[0]).shape[1]
            scale, shift = _composed(b, [m.first, m.second], channels)
            assert scale is not None and shift is not None
            self.replace(rewriter, m, ops, [b.fused_scale_shift_act(m.first.x, scale, shift)])
            return
        if isinstance(m, AffineIntoDense):
            channels = type_of(m.root.results[0]).shape[1]
            scale, shift = _composed(b, [m.affine], channels)
            self.replace(rewriter, m, ops, [_folded_dense(b, m.dense, scale, shift)])
            return
        if isinstance(m, AffineIntoReaders):
            channels = type_of(m.root.results[0]).shape[1]
            for reader in m.absorbed[1:]:
                assert isinstance(reader, mir.DenseOp)
                b, ops = self.builder(reader)
                scale, shift = _composed(b, [m.affine], channels)
                y = _scaled_reader(b, reader, m.affine.x, scale, shift)
                self.replace(rewriter, Match(reader, [reader]), ops, [y])
            rewriter.erase(m.root)
            return
        if isinstance(m, IntoReaders):
            root = m.root
            assert isinstance(root, mir.FusedScaleShiftActOp)
            for reader in m.absorbed[1:]:
                assert isinstance(reader, mir.DenseOp)
                b, ops = self.builder(reader)
                y = _scaled_reader(b, reader, root.input, root.scale, root.shift)
                self.replace(rewriter, Match(reader, [reader]), ops, [y])
            rewriter.erase(root)
            return
        if isinstance(m, IntoScaleShift):
            fused = m.absorbed[0]
            assert isinstance(fused, mir.FusedScaleShiftActOp)
            channels = type_of(fused.input).shape[1]
            root = m.root
            assert isinstance(root, mir.BinaryOp)  # a mul, div, add or sub
            affine = Affine(fused.result, m.factor, type(root))
            scale, shift = _composed(b, [affine], channels, fused.scale, fused.shift)
            assert scale is not None and shift is not None
            y = b.fused_scale_shift_act(fused.input, scale, shift)
        else:
            assert isinstance(m, NewScaleShift)
            scale, shift = _new_scale_shift(b, m)
            y = b.fused_scale_shift_act(m.x, scale, shift)
        self.replace(rewriter, m, ops, [y])


def _static_dense_producing(v: SSAValue) -> mir.DenseOp | None:
    """The dense layer producing ``v`` [N, C] that a per-channel affine of ``v`` can fold
    into, channels being its columns: a matrix matmul by a static weight, with a static
    bias and no activation (a batched matmul's columns are not axis 1; a run-time weight
    would be recomputed on every call)."""
    dense: mir.DenseOp | None = producer(v, mir.FusedMatmulBiasActOp)
    if dense is None:
        dense = producer(v, mir.MatmulOp)
    if dense is None or not no_activation(dense):
        return None
    x, weight, bias = mir.dense_operands(dense)
    if type_of(v).rank != 2 or type_of(x).rank != 2 or type_of(weight).rank != 2:
        return None
    if not all(is_static(w) for w in (weight, *([bias] if bias is not None else []))):
        return None
    return dense


def _dense_reads(reader: Operation, v: SSAValue) -> bool:
    """Whether ``reader`` is a dense layer of input ``v`` (not its weight or bias) whose
    weight is a static matrix and bias static: one ``v``'s scale and shift can fold into."""
    if not isinstance(reader, mir.DenseOp):
        return False  # another op, or the graph's return
    x, weight, bias = mir.dense_operands(reader)
    if x is not v or weight is v or bias is v:
        return False
    if type_of(weight).rank != 2 or not is_static(weight):
        return False
    return bias is None or is_static(bias)


_DENSE = (mir.MatmulOp, mir.FusedMatmulBiasActOp)
_AFFINE_OR_DENSE = (mir.MulOp, mir.DivOp, mir.AddOp, mir.SubOp, *_DENSE)


AFFINE_WEIGHT_DEPTH = 4
"""How many producers of a lone affine's weight are looked at (a param or constant, maybe
reshaped, or its square root: a batch norm's std): every mul, div, add and sub near a
dense layer or another affine is asked, and with batch 1 many read two [1, C]
activations."""


def _lone_affine(op: Operation) -> Affine | None:
    """A float ``x · w``, ``x / w``, ``x + w`` or ``x - w`` (either operand order of a mul or
    add) with ``w`` a static per-channel weight and ``x`` not static."""
    if not isinstance(op, mir.MulOp | mir.DivOp | mir.AddOp | mir.SubOp):
        return None
    out = type_of(op.results[0])
    if not out.dtype.is_float:
        return None
    a, b = op.operands
    pairs = ((a, b), (b, a)) if isinstance(op, mir.MulOp | mir.AddOp) else ((a, b),)
    for x, w in pairs:
        if type_of(x) == out and per_channel(type_of(w), out) and is_static(w, AFFINE_WEIGHT_DEPTH):
            # Weights computed from weights: constant-fold's or param-hoist's.
            return None if is_static(x) else Affine(x, w, type(op))
    return None


def _scaled_input(mul: Operation) -> tuple[SSAValue, SSAValue] | None:
    """For ``x · s``: (x, s) when s is a per-channel weight."""
    a, b = mul.operands
    for x, s in ((a, b), (b, a)):
        out = type_of(mul.results[0])
        if type_of(x) == out and per_channel(type_of(s), out) and is_static(s):
            return x, s
    return None


def _one_inexact_factor(scale: SSAValue) -> bool:
    """Whether ``scale`` is one factor for every column (a Gemm's alpha, a Mul by a
    scalar) that the weight cannot take exactly: the product is scaled after the matmul,
    as onnxruntime computes it (the importer keeps such an alpha apart too; a per-channel
    scale, a batch norm's, folds as a conv's does)."""
    values = constant_values([scale])
    if values is None:  # a run-time param: one expanded to every column, or a vector
        return producer(scale, mir.ExpandOp) is not None
    flat = values[0].reshape(-1)
    return bool((flat == flat[0]).all()) and not scales_exactly(float(flat[0]))


def _folded_dense(
    b: GraphBuilder,
    dense: mir.DenseOp,
    scale: SSAValue | None,
    shift: SSAValue | None,
    act: Activation = Activation.NONE,
    act_params: Sequence[float] = (),
) -> SSAValue:
    """``act((x @ w + bias) · s + t)`` as one fused matmul of ``w · s`` and
    ``bias · s + t`` (built by a folding builder: computed at once from constants); s and
    t are [C] vectors over the weight's columns, or None (1 and 0)."""
    x, weight, bias = mir.dense_operands(dense)
    if scale is not None:
        weight = b.mul(weight, b.reshape(scale, [1, type_of(scale).shape[0]]))
        bias = None if bias is None else b.mul(bias, scale)
    if shift is not None:
        bias = shift if bias is None else b.add(bias, shift)
    if bias is None:  # a plain matmul scaled: a plain matmul
        return b.matmul(x, weight)
    return b.fused_matmul_bias_act(x, weight, bias, act.value, act_params)


def _scaled_reader(
    b: GraphBuilder,
    reader: mir.DenseOp,
    x: SSAValue,
    scale: SSAValue | None,
    shift: SSAValue | None,
) -> SSAValue:
    """The dense layer ``reader`` of ``x · scale + shift`` as one of ``x`` itself: its
    weight's rows scaled, ``shift @ weight`` added to its bias (s and t [R] vectors over
    the weight's rows, or None: 1 and 0)."""
    _, weight, bias = mir.dense_operands(reader)
    if shift is not None:
        rows = type_of(shift).shape[0]
        shifted = b.matmul(b.reshape(shift, [1, rows]), weight)  # [1, columns]: a row bias
        bias = shifted if bias is None else b.add(shifted, bias)
    if scale is not None:
        weight = b.mul(weight, b.reshape(scale, [type_of(scale).shape[0], 1]))
    if bias is None:  # a plain matmul, scaled
        return b.matmul(x, weight)
    if isinstance(reader, mir.MatmulOp):
        return b.fused_matmul_bias_act(x, weight, bias)
    p = reader.props()
    return b.fused_matmul_bias_act(
        x, weight, bias, p.enum("activation").value, p.floats("act_params")
    )


def _new_scale_shift(b: GraphBuilder, m: NewScaleShift) -> tuple[SSAValue, SSAValue]:
    channels = type_of(m.x).shape[1]
    root = m.root
    if isinstance(root, mir.BatchNormOp):
        eps = root.props().float("epsilon")
        stats = [root.scale, root.bias, root.mean, root.variance]
        arrays = constant_values(stats)
        if arrays is None or arrays[0].size > DEFAULT_MAX_ELEMENTS:  # folding's cap
            return batch_norm_scale_shift(b, eps, *stats)
        # Constants all: computed at once, the numbers folding the ops would give.
        dtype = type_of(root.scale).dtype
        s, t = batch_norm_scale_shift(Eager(), eps, *arrays)
        return b.constant(s, dtype, s.shape), b.constant(t, dtype, t.shape)
    assert m.scale is not None and m.shift is not None
    shift = channel_vector(b, m.shift, channels)
    return channel_vector(b, m.scale, channels), b.neg(shift) if m.negate_shift else shift


@dataclass(frozen=True)
class FuseScaleShiftPass(FusionPass):
    """Fuse per-channel affines (batch norms without a conv) and their activations."""

    name = "fuse-scale-shift"
    PATTERNS = (FuseScaleShift,)
