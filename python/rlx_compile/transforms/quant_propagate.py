"""``quant-propagate``: leave as few quantize/dequantize pairs as the graph allows.

Rewrites, each exact on the reference executor (the integers a dequantize reads come back
unchanged from a quantize with the same parameters, and the ops crossed only move,
select or clamp values):

- **redundant pair** (RLX ``quant_propagate``): ``DQ1 -> ops -> Q2 -> DQ2`` where the ops
  are reshape/transpose/narrow/concat (per-tensor parameters only), relu or max-pool, and
  Q2/DQ2 use DQ1's parameters: DQ2's readers read Q2's input instead. The same holds for
  ``fake_quantize -> ops -> fake_quantize``. RLX redirected to the *first* quantizer,
  which skips the ops in between (a relu, a transpose) and so changes results; we
  redirect to the second quantizer's input, which keeps them (see ``dialects/README``);
- **DQ -> Q fold**: ``quantize(dequantize(q))`` with equal parameters is ``q``;
- **sink dequantize**: reshape/transpose/narrow/concat/relu of dequantized values run on
  the integers and the dequantize moves after them (per-axis parameters follow a
  transpose; relu needs a zero-free positive scale). Data movement then runs on int8 and
  each dequantize sits next to the compute op reading it;
- **hoist quantize**: ``quantize(reshape/transpose/narrow(w))`` of a weight becomes the
  op on ``quantize(w)``, so the quantize sits on the param;
- **weight fold**: a quantize of a value computed from constants only becomes an int8
  (or f8) constant; its dequantize keeps the scale. Params are not folded: bake them
  into constants first (param-specialize) to store weights as int8.

Ops left unused by these rewrites are erased (dead code that was there before stays).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.folding import DEFAULT_MAX_ELEMENTS, constant_value, fold, result_elements
from rlx_compile.ir import erase_unused, graph_block, mir_graphs
from rlx_compile.quant.sites import is_weight

Quant = mir.QuantizeOp | mir.DequantizeOp | mir.FakeQuantizeOp
_MOVES = (mir.ReshapeOp, mir.TransposeOp, mir.NarrowOp)
"""The view-like ops (``ViewLike``) Q/DQ move across: those whose effect on a per-axis
quantisation axis ``_moved_axis`` tracks. Slice and expand are view-like too; moving
Q/DQ across them would change what this pass emits, so it is left for its own change."""


# ---------------------------------------------------------------------------------
# Parameter equality
# ---------------------------------------------------------------------------------


def _same_operand(a: SSAValue | None, b: SSAValue | None) -> bool:
    """The same SSA value, or constants of one type holding equal values; an absent zero
    point equals an all-zero one."""
    if a is b:
        return True
    ca, cb = constant_value(a), constant_value(b)
    if a is None or b is None:
        other = cb if a is None else ca
        return other is not None and not np.any(other)
    return ca is not None and cb is not None and a.type == b.type and np.array_equal(ca, cb)


def _axis(op: Quant) -> int | None:
    return op.props().opt_int("axis")


def same_params(a: Quant, b: Quant) -> bool:
    if _axis(a) != _axis(b) or not _same_operand(a.scale, b.scale):
        return False
    if not _same_operand(a.zero_point, b.zero_point):
        return False
    if isinstance(a, mir.FakeQuantizeOp) and isinstance(b, mir.FakeQuantizeOp):
        pa, pb = a.props(), b.props()
        return (pa.int("quant_min"), pa.int("quant_max")) == (
            pb.int("quant_min"),
            pb.int("quant_max"),
        )
    return True


def _int_dtype(q: Quant) -> DType:
    """The integer/f8 type of a Q/DQ pair (Q's result, DQ's input)."""
    t = q.result.type if isinstance(q, mir.QuantizeOp) else q.input.type
    return cast(TensorType, t).dtype


def _positive_scale_no_zp(dq: mir.DequantizeOp) -> bool:
    """relu commutes with dequantize when 0 maps to 0 and the scale keeps signs."""
    scale = constant_value(dq.scale)
    if scale is None or not np.all(scale > 0):
        return False
    if dq.zero_point is None:
        return True
    zp = constant_value(dq.zero_point)
    return zp is not None and not np.any(zp)


def _unused(op: Operation) -> bool:
    return all(r.first_use is None for r in op.results)


def _producer(v: SSAValue) -> Operation | None:
    return v.op if isinstance(v, OpResult) else None


# ---------------------------------------------------------------------------------
# Redundant pairs (the RLX rule)
# ---------------------------------------------------------------------------------


def _grid_preserving(op: Operation, axis: int | None) -> list[SSAValue] | None:
    """The inputs of an op whose output values are inputs' values or zero (so they stay
    on a quantisation grid), or None."""
    if isinstance(op, mir.ReluOp):
        return [op.input]
    if isinstance(op, mir.MaxPoolOp) and axis in (None, 0, 1):
        return [op.input]
    if axis is None and isinstance(op, _MOVES):
        return [op.operands[0]]
    if axis is None and isinstance(op, mir.ConcatOp):
        return list(op.inputs)
    return None


def _traces_to(value: SSAValue, ref: Quant, kind: type[Quant]) -> bool:
    """Whether every path up from ``value`` through grid-preserving ops reaches an op of
    ``kind`` with ``ref``'s parameters."""
    axis = _axis(ref)
    stack = [value]
    while stack:
        op = _producer(stack.pop())
        if op is None:
            return False
        if isinstance(op, kind):
            if not same_params(op, ref) or _int_dtype(op) != _int_dtype(ref):
                return False
            continue
        inputs = _grid_preserving(op, axis)
        if inputs is None:
            return False
        stack.extend(inputs)
    return True


class EliminateRedundantPair(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, dq2: mir.DequantizeOp, rewriter: PatternRewriter) -> None:
        q2 = _producer(dq2.input)
        if _unused(dq2) or not isinstance(q2, mir.QuantizeOp) or not same_params(q2, dq2):
            return
        source = q2.input
        if source.type != dq2.result.type:
            return
        if _traces_to(source, q2, mir.DequantizeOp):
            rewriter.replace_all_uses_with(dq2.result, source)


class EliminateRedundantFakeQuant(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, fq2: mir.FakeQuantizeOp, rewriter: PatternRewriter) -> None:
        if _unused(fq2) or _producer(fq2.input) is None:
            return
        if _traces_to(fq2.input, fq2, mir.FakeQuantizeOp):
            rewriter.replace_all_uses_with(fq2.result, fq2.input)


class FoldDequantizeQuantize(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: mir.QuantizeOp, rewriter: PatternRewriter) -> None:
        dq = _producer(q.input)
        if _unused(q) or not isinstance(dq, mir.DequantizeOp):
            return
        if same_params(q, dq) and dq.input.type == q.result.type:
            rewriter.replace_all_uses_with(q.result, dq.input)


# ---------------------------------------------------------------------------------
# Moving dequantize down and quantize up
# ---------------------------------------------------------------------------------


def _moved_axis(op: Operation, axis: int | None, *, down: bool) -> tuple[bool, int | None]:
    """Whether per-axis parameters survive ``op`` and where the axis lands: downwards
    (input axis -> output axis) or upwards (output axis -> input axis)."""
    if axis is None:
        return True, None
    if isinstance(op, mir.TransposeOp):
        perm = list(op.props().ints("perm"))
        return True, (perm.index(axis) if down else perm[axis])
    if isinstance(op, mir.NarrowOp):
        return op.props().int("axis") != axis, axis
    if isinstance(op, mir.ReluOp):
        return True, axis
    return False, None


def _clone_on(op: Operation, operands: Sequence[SSAValue], dtype: object) -> Operation:
    """``op`` applied to other operands of element type ``dtype`` (same shapes)."""
    result_types = [cast(TensorType, r.type).with_dtype(dtype) for r in op.results]  # type: ignore[arg-type]
    return type(op).create(
        operands=list(operands),
        result_types=result_types,
        properties=dict(op.properties),
        attributes=dict(op.attributes),
        location=op.location,
    )


def _requantizer(like: Quant, value: SSAValue, axis: int | None, *, quantize: bool) -> Operation:
    if quantize:
        assert isinstance(like, mir.QuantizeOp)
        return mir.QuantizeOp(
            value,
            like.scale,
            like.zero_point,
            dtype=_int_dtype(like),
            axis=axis,
        )
    return mir.DequantizeOp(value, like.scale, like.zero_point, axis=axis)


class SinkDequantize(RewritePattern):
    """op(DQ(q)) -> DQ(op(q)) for data movement and relu."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, (*_MOVES, mir.ConcatOp, mir.ReluOp)) or _unused(op):
            return
        dqs = [_producer(v) for v in op.operands]
        if not all(isinstance(d, mir.DequantizeOp) and d.result.has_one_use() for d in dqs):
            return
        first = cast(mir.DequantizeOp, dqs[0])
        if any(not same_params(first, cast(Quant, d)) for d in dqs[1:]):
            return
        if isinstance(op, mir.ConcatOp) and _axis(first) is not None:
            return
        if isinstance(op, mir.ReluOp) and not _positive_scale_no_zp(first):
            return
        ok, axis = _moved_axis(op, _axis(first), down=True)
        if not ok:
            return
        ints = [cast(mir.DequantizeOp, d).input for d in dqs]
        moved = _clone_on(op, ints, _int_dtype(first))
        dq = _requantizer(first, moved.results[0], axis, quantize=False)
        rewriter.replace(op, [moved, dq], [dq.results[0]])


class HoistQuantize(RewritePattern):
    """Q(op(w)) -> op(Q(w)) for data movement of a weight: the quantize moves next to the
    param (constants fold outright). Activations need no hoisting: a quantize that data
    movement separates from an equal dequantize is removed by the redundant-pair rule."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: mir.QuantizeOp, rewriter: PatternRewriter) -> None:
        op = _producer(q.input)
        if _unused(q) or not isinstance(op, _MOVES) or not q.input.has_one_use():
            return
        ok, axis = _moved_axis(op, _axis(q), down=False)
        if not ok or not is_weight(op.operands[0]):
            return
        quantized = _requantizer(q, op.operands[0], axis, quantize=True)
        moved = _clone_on(op, [quantized.results[0]], _int_dtype(q))
        rewriter.replace(q, [quantized, moved], [moved.results[0]])


# ---------------------------------------------------------------------------------
# Weight folding
# ---------------------------------------------------------------------------------


def _constant_cone(value: SSAValue) -> list[Operation] | None:
    """The ops computing ``value`` from constants only, in dependency order, or None."""
    order: list[Operation] = []
    seen: set[int] = set()
    stack: list[tuple[Operation, bool]] = []
    root = _producer(value)
    if root is None:
        return None
    stack.append((root, False))
    while stack:
        op, expanded = stack.pop()
        if id(op) in seen:
            continue
        if expanded:
            seen.add(id(op))
            order.append(op)
            continue
        if isinstance(op, mir.ConstantOp):
            seen.add(id(op))
            order.append(op)
            continue
        if isinstance(op, mir.InputOp | mir.ParamOp) or op.dialect_name() != "mir":
            return None
        if not op.operands or op.regions:  # a region may read anything: not a constant
            return None
        stack.append((op, True))
        for v in op.operands:
            producer = _producer(v)
            if producer is None:
                return None
            stack.append((producer, False))
    return order


class FoldQuantizedWeight(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: mir.QuantizeOp, rewriter: PatternRewriter) -> None:
        if _unused(q):
            return
        cone = _constant_cone(q.results[0])
        if cone is None:
            return
        # The fold replaces weights by their quantized values: the cap of the cleanup
        # passes, raised to the size of the weights the cone reads (a large weight still
        # folds; a small constant broadcast to a large value stays an op).
        weights = [op for op in cone if isinstance(op, mir.ConstantOp)]
        cap = max(DEFAULT_MAX_ELEMENTS, sum(result_elements(op) for op in weights))
        values: dict[SSAValue, np.ndarray] = {op.result: op.to_numpy() for op in weights}
        for op in cone:
            if isinstance(op, mir.ConstantOp):
                continue
            outs = fold(op, values.get, cap)
            if outs is None:
                return  # no value at compile time (or too large): the quantize stays
            values.update(zip(op.results, outs, strict=True))
        folded = mir.ConstantOp(values[q.result], q.result.type)
        rewriter.replace(q, [folded], [folded.result])
        if q.result.name_hint is not None:
            folded.result.name_hint = q.result.name_hint


@dataclass(frozen=True)
class QuantPropagatePass(ModulePass):
    """Move Q/DQ through data movement and relu, drop redundant pairs, fold weights."""

    name = "quant-propagate"

    fold_weights: bool = True
    """Replace quantized constants by int8/f8 constants."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Weight folding first: a quantized weight behind data movement folds in one go.
        patterns: list[RewritePattern] = [FoldQuantizedWeight()] if self.fold_weights else []
        patterns += [
            EliminateRedundantPair(),
            EliminateRedundantFakeQuant(),
            FoldDequantizeQuantize(),
            SinkDequantize(),
            HoistQuantize(),
        ]
        for graph in mir_graphs(op, self.name):
            block = graph_block(graph)
            keep = [o for o in block.ops if o.results and _unused(o)]
            keep_ids = {id(o) for o in keep}
            PatternRewriteWalker(
                GreedyRewritePatternApplier(patterns, dce_enabled=False), apply_recursively=True
            ).rewrite_region(graph.body)
            erase_unused(
                [
                    o for o in block.ops
                    if id(o) not in keep_ids and not isinstance(o, mir.InputOp | mir.ParamOp)
                    and o is not block.last_op
                ]
            )  # fmt: skip
