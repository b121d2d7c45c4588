"""``fold-conv-affine``: per-channel scales and shifts after a conv fold into its weight
and bias (onnxruntime's ConvMulFusion and ConvAddFusion).

    conv(x, w) [+ b]  · s     ->  conv(x, w · s[C, 1, ...]) + b · s       (also / s)
    conv(x, w) [+ b]  + t     ->  conv(x, w) + (b + t)                   (also - t)

(``conv(x, w) + b`` also as a fused conv of a bias alone, what an ONNX Conv imports as)
(a channel bias on a conv with none stays for ``fuse-conv-bias-act``)

``s`` and ``t`` must be weights (computed from params and constants alone: folding an
activation into the weights would recompute them on every call) and broadcast along the
channel axis only, or be one element (the learnable affine blocks of PP-OCR and the
scale layers of Caffe2 exports). Each link must have one reader. The new weight and bias
are ops on the parameters (``folded_affine``), computed at once (``Eager``: the same
numbers) when those are constants; a conv with a bias comes out as the fused conv of
that bias where the target's fused conv kernel takes it (``conv_plus_bias``), else as a
conv and a channel bias add. Rounding differs from the unfolded graph (``w · s`` is
rounded before the conv).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.folding import DEFAULT_MAX_ELEMENTS, constant_values
from rlx_compile.fusion.base import (
    ConvLike,
    FusionPattern,
    Match,
    Miss,
    biased_conv,
    channel_array,
    channel_bias,
    channel_vector,
    conv_plus_bias,
    conv_with_weight,
    describe_uses,
    is_static,
    per_channel,
    producer,
    sole_user,
)
from rlx_compile.fusion.stage import FusionPass
from rlx_compile.interpreter.eager import Eager, Ops, V, shape_of

NEEDED = tuple(op.name for op in (mir.ConvOp, mir.MulOp, mir.AddOp, mir.ReshapeOp))
_HINT = "folding rewrites the conv's weights: nothing else may read its output"


@dataclass
class ConvAffine(Match):
    conv: ConvLike
    bias: SSAValue | None
    """The channel bias already added to the conv, if any."""
    factor: SSAValue
    """The scale (mul, div) or shift (add, sub)."""


def _conv_chain(v: SSAValue) -> tuple[ConvLike, mir.AddOp | None, SSAValue | None] | None:
    """``v`` as conv(x, w), conv(x, w) + b[C] or a fused conv of a bias alone: (the conv,
    the add, b)."""
    conv = producer(v, mir.ConvOp)
    if conv is not None:
        return conv, None, None
    fused = biased_conv(v)
    if fused is not None:
        return fused, None, fused.bias
    add = producer(v, mir.AddOp)
    if add is None:
        return None
    for y, bias in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        conv = producer(y, mir.ConvOp)
        if conv is None:
            continue
        out = type_of(conv.result)
        if channel_bias(type_of(bias), out) and type_of(add.result) == out:
            return conv, add, bias
    return None


class FoldConvAffine(FusionPattern):
    name = "conv_affine"
    roots = (mir.MulOp, mir.DivOp, mir.AddOp, mir.SubOp)
    needs = (mir.ConvOp, mir.FusedConvBiasActOp)

    def match(self, op: Operation) -> Match | Miss | None:
        commutes = isinstance(op, mir.MulOp | mir.AddOp)
        a, b = op.operands
        for y, factor in ((a, b), (b, a)) if commutes else ((a, b),):
            found = _conv_chain(y)
            if found is None:
                continue
            conv, add, bias = found
            out = type_of(conv.result)
            if isinstance(op, mir.AddOp) and bias is None and channel_bias(type_of(factor), out):
                return None  # the conv's own bias: fuse-conv-bias-act takes it
            if type_of(op.results[0]) != out or not per_channel(type_of(factor), out):
                return None
            if not is_static(factor):
                return None  # an activation (say, an attention gate): not a weight
            links: list[tuple[OpResult, Operation]] = [(conv.result, add or op)]
            if add is not None:
                links.append((add.result, op))
            for value, reader in links:
                if sole_user(value) is not reader:
                    return Miss(describe_uses(value, f"the {value.owner.name} result"), _HINT)
            if (miss := self.ctx.unclaimed(*NEEDED)) is not None:
                return miss
            absorbed: list[Operation] = [conv, *([add] if add else []), op]
            return ConvAffine(op, absorbed, conv, bias, factor)
        return None

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, ConvAffine)
        b, ops = self.builder(m.root)
        conv, root = m.conv, m.root
        assert isinstance(root, mir.BinaryOp)  # one of ``roots``
        kind = _KINDS[type(root)]
        scales = kind in ("mul", "div")
        channels = type_of(conv.result).shape[1]
        weight = conv.weight
        dtype = type_of(weight).dtype
        leaves = [m.factor, *([m.bias] if m.bias is not None else [])]
        arrays = constant_values([*leaves, *([weight] if scales else [])])
        bias: SSAValue | None = None
        if (
            arrays is not None
            and isinstance(channels, int)
            and (not scales or arrays[-1].size <= DEFAULT_MAX_ELEMENTS)  # folding's cap
        ):
            # Constants all: computed at once, the numbers folding the ops would give.
            eager = Eager()
            f_array = channel_array(eager, arrays[0], channels)
            b_array = channel_array(eager, arrays[1], channels) if m.bias is not None else None
            if scales:
                w_array = folded_weight(eager, kind, arrays[-1], f_array)
                weight = b.constant(w_array, dtype, w_array.shape)
            if not scales or b_array is not None:
                b_array = folded_bias(eager, kind, f_array, b_array)
                bias = b.constant(b_array, dtype, b_array.shape)
        else:
            factor = channel_vector(b, m.factor, channels)
            bias = channel_vector(b, m.bias, channels) if m.bias is not None else None
            if scales:
                weight = folded_weight(b, kind, weight, factor)
            if not scales or bias is not None:
                bias = folded_bias(b, kind, factor, bias)
        y = (
            conv_with_weight(b, conv, weight)
            if bias is None
            else conv_plus_bias(b, self.target, conv, weight, bias)
        )
        self.replace(rewriter, m, ops, [y])


_KINDS: dict[type[Operation], str] = {
    mir.MulOp: "mul",
    mir.DivOp: "div",
    mir.AddOp: "add",
    mir.SubOp: "sub",
}


def folded_weight(ops: Ops[V], kind: str, weight: V, factor: V) -> V:
    """The conv weight that a scale (``kind`` mul or div, by the ``[C]`` vector
    ``factor``) after the conv folds into."""
    scale = ops.reshape(factor, (shape_of(factor)[0], *([1] * (len(shape_of(weight)) - 1))))
    return ops.mul(weight, scale) if kind == "mul" else ops.div(weight, scale)


def folded_bias(ops: Ops[V], kind: str, factor: V, bias: V | None) -> V:
    """The ``[C]`` bias that the conv's own (``bias``, if any) becomes under ``kind``
    (mul, div, add, sub) by the ``[C]`` vector ``factor``."""
    if bias is not None:
        apply: Callable[[V, V], V] = getattr(ops, kind)
        return apply(bias, factor)
    assert kind in ("add", "sub")  # a scale without a bias leaves none
    return factor if kind == "add" else ops.neg(factor)


@dataclass(frozen=True)
class FoldConvAffinePass(FusionPass):
    """Fold per-channel scales and shifts after a conv into its weight and bias."""

    name = "fold-conv-affine"
    PATTERNS = (FoldConvAffine,)
