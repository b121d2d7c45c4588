"""``algebraic-simplify{assume-finite=false}``: peephole identities, one small pattern each.

Rewrites of binary ops with a constant operand whose every element is one value. Those
that forward ``x`` fire when ``x``'s type equals the result's (dropping the op changes no
shape), whatever the constant's shape (a scalar or broadcast one included: it only
broadcasts into ``x``); the one that forwards the constant needs the constant to have
the result's type:

- ``x + 0``, ``0 + x`` -> x: exact up to the sign of a zero: IEEE gives +0 for -0 + 0,
  the rewrite keeps -0 (the two compare equal; XLA and RLX rewrite the same way);
- ``x - 0``, ``x · 1``, ``1 · x``, ``x / 1`` -> x: exact, NaN, infinities and -0 included;
- ``min(x, +inf)``, ``max(x, -inf)`` (either side) -> x: exact (a NaN stays NaN), the
  unbounded side of a Clip whose other bound is only known at run time;
- ``x · 0``, ``0 · x`` -> the zero constant: exact for integers. For floats IEEE gives NaN
  when x is ±inf or NaN (and -0 for x < 0), so a float x · 0 is kept unless
  ``assume-finite`` is set (XLA makes the same choice; RLX rewrites it always).

and the rewrites users expect from a graph compiler, all exact:

- ``neg(neg(x))`` -> x;
- ``transpose(transpose(x, p), q)`` -> ``transpose(x, p∘q)``; an identity permutation
  (composed or written) -> x;
- ``reshape(reshape(x))`` -> one reshape; a reshape to x's own type -> x;
- ``expand(expand(x))`` -> one expand; an expand of a reshape that only adds or drops
  leading unit dims -> an expand of x (broadcasting aligns dims from the right); an
  expand to x's own type -> x; an expand read by an op that broadcasts its operands
  (binary, compare, where) -> x there, where the op's result type stays the same;
- a cast to the same type -> x;
- ``cast(cast(x: A -> B), C)`` -> ``cast(x, C)`` (x itself when C = A) when every value
  of A is a value of B -- except int -> float -> int, where the inner float makes the
  outer cast saturate while a direct int cast wraps;
- ``concat`` of one operand -> x; ``narrow`` covering its whole axis -> x;
- a narrow or slice of a narrow or slice -> one op: a narrow when the two take one axis
  with unit steps, else one strided slice of x (the first slice's starts plus the
  second's scaled by the first's steps; steps multiplied), which copies once where the
  two copied up to twice. Two narrows that are both contiguous views (free) are kept
  when they make a slice (a copy);
- a gather (or gather_axes) of a gather (or gather_axes) by constant 1-D indices -> one
  gather of x along the axes of both, by the inner indices taken at the outer ones on an
  axis both index (a nearest resize of a nearest resize is one): the elements each
  picks are x's, so it is exact, and the inner one's copy goes;
- a concat along the categories of one-hot encodings of single constant columns of one
  x -> one ``one_hot_encoder`` over those columns (each with its categories), reshaped to
  the concat's type: the rows it writes are the concat's, so it is exact;
- ``reshape(softmax(reshape(x), a))`` back to x's type, where the reshapes only add or
  drop unit dims and dim ``a`` is not one of them -> ``softmax(x, a')`` at the same dim of
  x (log-softmax too): the Flatten -> Softmax -> Reshape that opset-13 upgrades and
  exporters write for a softmax over channels;
- a reshape dropping exactly the dims a reduction (or arg reduction) kept -> the
  reduction without ``keepdims``: GlobalAveragePool -> Flatten, ReduceMean(keepdims) ->
  Squeeze. The elements and their order are the same;
- a recurrent layer whose initial states are narrows of stacks of a static size along
  their direction axis at one start -> the layer reading the stacks from that row
  (``state_offset``): PyTorch's multi-layer RNN, GRU and LSTM exports slice h0 and c0
  per layer;
- a conv of a zero constant pad of its spatial dims -> the conv with those pads added
  to its own (it pads with zeros itself), and so an average pool that counts padded
  cells (or has no padding of its own, which it then counts): TensorFlow's "SAME"
  padding and PyTorch's ``ZeroPad2d`` as exported (onnxruntime's PadFusion). A pool
  with ``ceil_mode`` is left alone (its last window may start in the explicit padding,
  never in its own), as is a pad a window could not overlap with input;
- ``where(c, a, a)`` -> a (of the result's type); ``where(not(c), a, b)`` ->
  ``where(c, b, a)``: exact;
- a run of concat operands that are narrows of one x along the concat's axis, each
  starting where the one before ends -> one narrow of x (x itself when the run covers
  the axis): a Split or Slices put back together, exact (onnxruntime's
  ConcatSliceElimination).
- a run of concat operands along x's last axis that are products of the same number d
  of constant columns of one x (``reduce_prod(gather(x, c), keepdims)``) -> d gathers
  (each term's j-th column) multiplied left to right (a gather of the columns, or x,
  for single columns): skl2onnx's PolynomialFeatures, one ArrayFeatureExtractor and one
  ReduceProd per term; each product multiplies the same columns in the same order, so
  it is exact.

Constants left unused are dce's to remove.

The patterns run as xDSL's greedy walker runs them (``rewriting.apply_greedily``), on
the ops of their ``roots`` kinds only. Every such op is matched at least once per walk, so
the matchers that see the most ops (binary ops, reshapes) read operands and results by
position (unpacked: a named accessor costs a descriptor lookup each time, an index a
Python-level ``__getitem__``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, TypeVar, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from rlx_compile.diagnostics import change_listener
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import PadMode, int_attr, ints_attr
from rlx_compile.dialects.op_support import single_operand_names
from rlx_compile.dialects.types import Dim, DType, TensorType, exactly_representable
from rlx_compile.folding import constant_value
from rlx_compile.fusion.base import scalar_constant
from rlx_compile.ir import func_graphs
from rlx_compile.rewriting import apply_greedily


def _tensor(value: SSAValue) -> TensorType:
    t = value.type
    assert isinstance(t, TensorType)
    return t


class Splats:
    """Whether constants are splats, each constant and scalar looked at once per set of
    patterns (every walk asks about the same constants again)."""

    def __init__(self) -> None:
        self._known: dict[tuple[mir.ConstantOp, float], bool] = {}

    def __call__(
        self, value: SSAValue, scalar: float, like: SSAValue, same_shape: bool = True
    ) -> bool:
        """``value`` is a constant of ``like``'s type (its element type only, unless
        ``same_shape``) whose elements all equal ``scalar``."""
        owner = value.owner
        if not isinstance(owner, mir.ConstantOp):
            return False
        if same_shape:
            if value.type != like.type:
                return False
        elif _tensor(value).dtype is not _tensor(like).dtype:
            return False
        key = (owner, scalar)
        splat = self._known.get(key)
        if splat is None:
            splat = self._known[key] = bool((owner.to_numpy() == scalar).all())
        return splat


def _forward(op: Operation, rewriter: PatternRewriter, x: SSAValue) -> None:
    """Replace ``op`` by an existing value."""
    rewriter.replace(op, [], [x])


def _rebuild(op: Operation, rewriter: PatternRewriter, new: Operation) -> None:
    """Replace ``op`` by a new op that keeps its location and result name."""
    new.location = op.location
    new.results[0].name_hint = op.results[0].name_hint
    rewriter.replace(op, new)


class _IdentityOperand(RewritePattern):
    """``x op c -> x`` (and ``c op x -> x`` when ``commutes``) for a constant ``c`` of any
    shape whose elements all equal ``neutral``; ``x`` must already have the result's
    type."""

    op_type: type[mir.BinaryOp]
    neutral: float
    commutes: bool

    roots: tuple[type[Operation], ...]

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.roots = (cls.op_type,)

    def __init__(self, splats: Splats):
        self.is_splat = splats

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) is not self.op_type:
            return
        lhs, rhs = op.operands
        (result,) = op.results
        for x, c in ((lhs, rhs), (rhs, lhs)) if self.commutes else ((lhs, rhs),):
            if x.type == result.type and self.is_splat(c, self.neutral, result, False):
                _forward(op, rewriter, x)
                return


class AddZero(_IdentityOperand):
    op_type, neutral, commutes = mir.AddOp, 0, True


class SubZero(_IdentityOperand):
    op_type, neutral, commutes = mir.SubOp, 0, False


class MulOne(_IdentityOperand):
    op_type, neutral, commutes = mir.MulOp, 1, True


class DivOne(_IdentityOperand):
    op_type, neutral, commutes = mir.DivOp, 1, False


class MinInf(_IdentityOperand):
    op_type, neutral, commutes = mir.MinOp, float("inf"), True


class MaxNegInf(_IdentityOperand):
    op_type, neutral, commutes = mir.MaxOp, float("-inf"), True


class MulZero(RewritePattern):
    """``x · 0 -> 0`` (either side), reusing the zero constant, which has the result's type.
    Floats only when ``assume_finite``."""

    roots = (mir.MulOp,)

    def __init__(self, assume_finite: bool, splats: Splats):
        self.assume_finite = assume_finite
        self.is_splat = splats

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.MulOp, rewriter: PatternRewriter) -> None:
        (result,) = op.results
        if _tensor(result).dtype.is_float and not self.assume_finite:
            return
        lhs, rhs = op.operands
        for c in (rhs, lhs):
            if self.is_splat(c, 0, result):
                _forward(op, rewriter, c)
                return


class DoubleNegation(RewritePattern):
    roots = (mir.NegOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.NegOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, mir.NegOp):
            _forward(op, rewriter, inner.input)


class SigmoidGateToSilu(RewritePattern):
    """``x · sigmoid(x) -> silu(x)`` and ``x · sigmoid(x·c) -> swish(x; c)`` for a
    one-element constant c (either operand order of each product), as exporters spell
    SiLU and CLIP's quick_gelu (c = 1.702).

    Bit-exact for finite f32/f64 values (the reference silu is that very product, and
    swish is the product as written, everywhere); at x = -inf the product is NaN and
    silu gives its limit, -0. Lower-precision types are left alone: the products round
    twice or three times there, the ops once. The scaled gate is rewritten only when its
    sigmoid and scaling are read by this product alone (else they stay, computed twice).
    Recognising silu lets the SwiGLU fusion see exported MLPs.
    """

    roots = (mir.MulOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.MulOp, rewriter: PatternRewriter) -> None:
        (result,) = op.results
        if _tensor(result).dtype not in (DType.F32, DType.F64):
            return
        lhs, rhs = op.operands
        for x, s in ((lhs, rhs), (rhs, lhs)):
            gate = s.owner
            if not isinstance(gate, mir.SigmoidOp) or x.type != result.type:
                continue
            if gate.input == x:
                _rebuild(op, rewriter, mir.SiluOp(x))
                return
            alpha = _gate_scale(gate, x)
            if alpha is not None:
                _rebuild(op, rewriter, mir.SwishOp(x, alpha))
                return


def _gate_scale(gate: mir.SigmoidOp, x: SSAValue) -> float | None:
    """c where the gate is sigmoid(x·c) (or c·x), both read by one product alone."""
    scaled = gate.input.owner
    if (
        not isinstance(scaled, mir.MulOp)
        or scaled.result.type != x.type
        or not gate.result.has_one_use()
        or not scaled.result.has_one_use()
    ):
        return None
    a, b = scaled.operands
    c = b if a == x else a if b == x else None
    return None if c is None else scalar_constant(c)


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q)[i] = x[p[q[i]]]: one transpose by p∘q."""

    roots = (mir.TransposeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mir.TransposeOp):
            return
        p, q = inner.props().ints("perm"), op.props().ints("perm")
        composed = [p[i] for i in q]
        if composed == list(range(len(composed))):
            _forward(op, rewriter, inner.input)
        else:
            _rebuild(op, rewriter, mir.TransposeOp(inner.input, composed))


class IdentityTranspose(RewritePattern):
    roots = (mir.TransposeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = op.props().ints("perm")
        if list(perm) == list(range(len(perm))):
            _forward(op, rewriter, op.input)


class ComposeReshapes(RewritePattern):
    roots = (mir.ReshapeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.operands[0].owner
        if not isinstance(inner, mir.ReshapeOp):
            return
        if inner.input.type == op.result.type:
            _forward(op, rewriter, inner.input)
        else:
            _rebuild(op, rewriter, mir.ReshapeOp(inner.input, _tensor(op.result).shape))


class IdentityReshapeOrExpand(RewritePattern):
    """A reshape or an expand to its input's own type is its input."""

    roots = (mir.ReshapeOp, mir.ExpandOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mir.ReshapeOp | mir.ExpandOp):
            return
        (x,) = op.operands
        (result,) = op.results
        if x.type == result.type:
            _forward(op, rewriter, x)


class ExpandOfExpandOrLeadingUnitReshape(RewritePattern):
    """``expand(y)`` where y is an expand of x, or a reshape of x that only adds or drops
    leading unit dims -> ``expand(x)``: broadcasting aligns dims from the right, so x
    broadcasts to the result just as y does (an Unsqueeze(0) before an Expand). (An
    expand to its input's own type is ``IdentityReshapeOrExpand``'s.)"""

    roots = (mir.ExpandOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ExpandOp, rewriter: PatternRewriter) -> None:
        (y,) = op.operands
        (result,) = op.results
        inner = y.owner
        if not isinstance(inner, mir.ExpandOp | mir.ReshapeOp):
            return
        x = inner.operands[0]
        if isinstance(inner, mir.ReshapeOp) and _without_leading_units(
            _tensor(x).shape
        ) != _without_leading_units(_tensor(y).shape):
            return
        if _tensor(x).rank > _tensor(result).rank:
            return  # y had dropped leading unit dims the result has no room for
        if x.type == result.type:
            _forward(op, rewriter, x)
        else:
            _rebuild(op, rewriter, mir.ExpandOp(x, _tensor(result).shape))


class BroadcastInsteadOfExpand(RewritePattern):
    """An operand ``expand(x)`` of an op that broadcasts its operands like NumPy -> ``x``,
    where the op's result type stays the same: broadcasting repeats x's elements as the
    expand did, without the copy (PyTorch's ``F.normalize`` exports ReduceL2 -> Clip ->
    Expand -> Div). Exact: every element of the result reads the same elements."""

    roots = (mir.BinaryOp, mir.CompareOp, mir.WhereOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.roots):
            return
        for v in op._operands:  # every binary op comes here: the common miss, cheaply
            if type(v) is OpResult and type(v.op) is mir.ExpandOp:
                break
        else:
            return
        names = single_operand_names(type(op))
        if names is None:
            return  # variadic or optional operands: not laid out one per name
        operands = list(op._operands)
        results = [r.type for r in op.results]
        kept = list(operands)
        for i, v in enumerate(operands):
            expand = v.owner
            if not isinstance(expand, mir.ExpandOp):
                continue
            trial = [*kept[:i], expand.input, *kept[i + 1 :]]
            types = {n: _tensor(t) for n, t in zip(names, trial, strict=True)}
            try:
                inferred = type(op).infer(op.props(), **types)
            except VerifyException:
                continue
            if list(inferred) == results:
                kept = trial
        if kept != operands:
            new = op.clone()
            new.operands = kept
            _rebuild(op, rewriter, new)


def _without_leading_units(shape: tuple[Dim, ...]) -> tuple[Dim, ...]:
    start = 0
    while start < len(shape) and shape[start] == 1:
        start += 1
    return shape[start:]


class StackedInitialStates(RewritePattern):
    """A recurrent layer whose initial states are each a narrow of a stack along the
    direction axis, all at one start s -> the layer reading the stacks from row s
    (``state_offset``): what PyTorch writes for a multi-layer RNN, GRU or LSTM with
    given states, h0[l] and c0[l] sliced per layer. The rows read are the narrows'; the
    copies (or views) go."""

    roots = mir.RECURRENT_OPS

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        # Most layers read no narrow at all (or no longer): looked at by position first,
        # as a name lookup through the operand segments costs more than the whole test.
        if not any(type(v.owner) is mir.NarrowOp for v in op.operands):
            return
        if not isinstance(op, mir.RecurrentOp) or op.props().flag("batch_first"):
            return
        named = [(name, getattr(op, name)) for name, _ in type(op).get_irdl_definition().operands]
        states = {n: v.owner for n, v in named if n in _INITIAL_STATES and v is not None}
        starts = {
            n.start_dim
            if isinstance(n, mir.NarrowOp)
            and n.props().int("axis") == 0
            and isinstance(_tensor(n.input).shape[0], int)  # the op's verifier asks it
            else None
            for n in states.values()
        }
        if not states or len(starts) != 1 or not isinstance(start := starts.pop(), int):
            return
        op.operands = [
            cast(mir.NarrowOp, states[n]).input if n in states else v
            for n, v in named
            if v is not None
        ]
        offset = (op.props().opt_int("state_offset") or 0) + start
        op.properties["state_offset"] = cast(IntegerAttr, int_attr(offset))
        rewriter.notify_op_modified(op)


_INITIAL_STATES = frozenset({"initial_h", "initial_c"})


class SameTypeCast(RewritePattern):
    roots = (mir.CastOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.CastOp, rewriter: PatternRewriter) -> None:
        if op.input.type == op.result.type:
            _forward(op, rewriter, op.input)


def cast_chain_is_exact(a: DType, b: DType, c: DType) -> bool:
    """Whether ``cast(cast(x: a, b), c) == cast(x, c)`` for every x of type a."""
    if not exactly_representable(a, b):
        return False
    if c is a:
        return True
    # Casts are functions of the value, except that float -> int saturates while
    # int -> int wraps: an int routed through a float would saturate instead of wrap.
    return not (a.is_int and b.is_float and c.is_int)


class ExactCastChain(RewritePattern):
    roots = (mir.CastOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.CastOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mir.CastOp):
            return
        a, b, c = (_tensor(v).dtype for v in (inner.input, inner.result, op.result))
        if not cast_chain_is_exact(a, b, c):
            return
        if c is a:
            _forward(op, rewriter, inner.input)
        else:
            _rebuild(op, rewriter, mir.CastOp(inner.input, c))


class SingleOperandConcat(RewritePattern):
    roots = (mir.ConcatOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ConcatOp, rewriter: PatternRewriter) -> None:
        if len(op.inputs) == 1:
            _forward(op, rewriter, op.inputs[0])


class AdjacentNarrowsConcat(RewritePattern):
    """A concat whose operands include a run of narrows of one x along the concat's
    axis, each starting where the one before ends -> one narrow of x for the run (x
    itself when the run covers the axis): the parts put back together in order
    (onnxruntime's ConcatSliceElimination)."""

    roots = (mir.ConcatOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ConcatOp, rewriter: PatternRewriter) -> None:
        axis = op.props().int("axis")

        def part(value: SSAValue) -> tuple[SSAValue, int, int] | None:
            owner = value.owner
            return _narrow_part(owner, axis) if isinstance(owner, mir.NarrowOp) else None

        def continues(before: tuple[SSAValue, int, int], after: tuple[SSAValue, int, int]) -> bool:
            return before[0] is after[0] and before[1] + before[2] == after[1]

        def merge(parts: list[tuple[SSAValue, int, int]]) -> SSAValue:
            x, start = parts[0][0], parts[0][1]
            length = sum(p[2] for p in parts)
            if start == 0 and length == _tensor(x).shape[axis]:
                return x
            narrow = mir.NarrowOp(x, axis, start, length)
            rewriter.insert(narrow, InsertPoint.before(op))
            return narrow.result

        _merge_concat_runs(op, rewriter, part, continues, merge)


Part = TypeVar("Part")


def _merge_concat_runs(
    op: mir.ConcatOp,
    rewriter: PatternRewriter,
    part: Callable[[SSAValue], Part | None],
    continues: Callable[[Part, Part], bool],
    merge: Callable[[list[Part]], SSAValue],
) -> None:
    """Each run of two or more adjacent concat operands that ``part`` recognises, each
    continuing the one before it (``continues``), replaced by ``merge`` of the run's
    parts; the concat is rebuilt on the result, or forwards it when one value is left.
    Nothing changes without such a run."""
    runs: list[tuple[SSAValue, list[Part]]] = []  # each run's first operand, its parts
    for value in op.inputs:
        found = part(value)
        if found is not None and runs and runs[-1][1] and continues(runs[-1][1][-1], found):
            runs[-1][1].append(found)
            continue
        runs.append((value, [] if found is None else [found]))
    if len(runs) == len(op.inputs):
        return
    values = [first if len(parts) < 2 else merge(parts) for first, parts in runs]
    if len(values) == 1:
        _forward(op, rewriter, values[0])
    else:
        _rebuild(op, rewriter, mir.ConcatOp(values, op.props().int("axis")))


def _narrow_part(op: mir.NarrowOp, axis: int) -> tuple[SSAValue, int, int] | None:
    """(x, start, length) of a narrow of x along ``axis`` with a static start and length."""
    if op.props().int("axis") != axis:
        return None
    start, length = op.start_dim, op.length
    if not isinstance(start, int) or not isinstance(length, int):
        return None
    return op.input, start, length


class FullNarrow(RewritePattern):
    roots = (mir.NarrowOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.NarrowOp, rewriter: PatternRewriter) -> None:
        if op.start_dim == 0 and op.input.type == op.result.type:
            _forward(op, rewriter, op.input)


def _strides(op: Operation) -> tuple[list[Dim], list[int]] | None:
    """A narrow's or a slice's (starts, steps) on every axis of its input."""
    if isinstance(op, mir.NarrowOp):
        rank = _tensor(op.input).rank
        starts: list[Dim] = [0] * rank
        starts[op.props().int("axis")] = op.start_dim
        return starts, [1] * rank
    if isinstance(op, mir.SliceOp):
        return list(op.props().ints("starts")), list(op.props().ints("steps"))
    return None


class ComposeSlices(RewritePattern):
    """narrow/slice(narrow/slice(x)) -> one narrow or slice of x: element i of the outer
    op is element ``t + i·u`` of the inner one, ``s + (t + i·u)·v`` of x."""

    roots = (mir.NarrowOp, mir.SliceOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        outer = _strides(op)
        if outer is None:
            return
        inner_op = op.operands[0].owner
        inner = _strides(inner_op) if isinstance(inner_op, Operation) else None
        if inner is None:
            return
        assert isinstance(inner_op, Operation)
        (x,) = inner_op.operands
        (t, u), (s, v) = outer, inner
        starts = [a + b * step for a, b, step in zip(s, t, v, strict=True)]
        steps = [a * b for a, b in zip(u, v, strict=True)]
        x_shape, shape = _tensor(x).shape, _tensor(op.results[0]).shape
        changed = [
            i for i, (n, d) in enumerate(zip(shape, x_shape, strict=True))
            if n != d or starts[i] != 0 or (steps[i] != 1 and n != 1)
        ]  # fmt: skip
        if not changed:
            _forward(op, rewriter, x)
        elif len(changed) == 1 and steps[changed[0]] == 1:
            (axis,) = changed
            _rebuild(op, rewriter, mir.NarrowOp(x, axis, starts[axis], shape[axis]))
        elif all(isinstance(o, mir.NarrowOp) and o.contiguous_view_offset() is not None
                 for o in (op, inner_op)):  # fmt: skip
            return  # two free views, not one copy
        elif len(ints := [a for a in starts if isinstance(a, int)]) == len(starts):
            # (a symbolic start stays: a slice takes ints only)
            steps = [st if n != 1 else 1 for st, n in zip(steps, shape, strict=True)]
            _rebuild(op, rewriter, mir.SliceOp(x, ints, steps, shape))


def _gathered_axes(op: Operation) -> tuple[SSAValue, dict[int, np.ndarray]] | None:
    """A gather's or gather_axes' input and its indices per axis, when each is a constant
    1-D vector in range (negative ones wrapped, as the ops wrap them) of a static axis."""
    if isinstance(op, mir.GatherOp):
        x, pairs = op.table, [(op.props().int("axis"), op.indices)]
    elif isinstance(op, mir.GatherAxesOp):
        x, pairs = op.input, list(zip(op.props().ints("axes"), op.indices, strict=True))
    else:
        return None
    shape = _tensor(x).shape
    out: dict[int, np.ndarray] = {}
    for axis, value in pairs:
        owner, n = value.owner, shape[axis]
        if not isinstance(owner, mir.ConstantOp) or not isinstance(n, int):
            return None
        idx = owner.to_numpy().astype(np.int64)
        idx = np.where(idx < 0, idx + n, idx)
        if idx.ndim != 1 or (idx.size and (idx.min() < 0 or idx.max() >= n)):
            return None
        out[axis] = idx
    return x, out


class ComposeGathers(RewritePattern):
    """gather(gather(x, i, a), j, b) by constant 1-D indices (gather_axes alike) -> one
    gather of x: along an axis both index, element k is x's ``i[j[k]]``."""

    roots = (mir.GatherOp, mir.GatherAxesOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mir.GatherOp | mir.GatherAxesOp):
            return
        inner_op = op.operands[0].owner
        if not (
            isinstance(inner_op, mir.GatherOp | mir.GatherAxesOp)
            and inner_op.parent is op.parent
            and inner_op.results[0].has_one_use()
        ):
            return
        outer, inner = _gathered_axes(op), _gathered_axes(inner_op)
        if outer is None or inner is None:
            return
        x, composed = inner
        for axis, j in outer[1].items():
            composed[axis] = composed[axis][j] if axis in composed else j
        axes = sorted(composed)
        indices = [mir.ConstantOp(composed[a]) for a in axes]
        new: Operation
        if len(axes) == 1:
            new = mir.GatherOp(x, indices[0].results[0], axes[0])
        else:
            new = mir.GatherAxesOp(x, [c.results[0] for c in indices], axes)
        for c in indices:
            c.location = op.location
        # Inserted on their own: a replacement's other new ops would take the op's name.
        rewriter.insert(indices, InsertPoint.before(op))
        _rebuild(op, rewriter, new)


def _one_column(value: SSAValue) -> tuple[SSAValue, int] | None:
    """``(x, j)`` when ``value`` is column j of x: a gather along x's last (static) axis
    by one constant index."""
    owner = value.owner
    if not isinstance(owner, mir.GatherOp):
        return None
    found = _gathered_axes(owner)
    if found is None:
        return None
    x, by_axis = found
    ((axis, idx),) = by_axis.items()  # a gather indexes one axis
    if axis != _tensor(x).rank - 1 or idx.shape != (1,):
        return None
    return x, int(idx[0])


class MergeColumnOneHots(RewritePattern):
    """concat along the categories of one-hot encodings of single columns of one x ->
    one ``one_hot_encoder`` over those columns of x, each with its categories, reshaped
    to the concat's type: the same rows side by side (skl2onnx's OneHotEncoder over
    several features). Its gathers go when nothing else reads them."""

    roots = (mir.ConcatOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ConcatOp, rewriter: PatternRewriter) -> None:
        encoders = [v.owner for v in op.inputs]
        if len(encoders) < 2 or op.props().int("axis") != _tensor(op.result).rank - 1:
            return
        x: SSAValue | None = None
        columns: list[int] = []
        lists: list[np.ndarray] = []
        for encoder in encoders:
            if not (
                isinstance(encoder, mir.OneHotEncoderOp)
                and encoder.props().get("column_starts") is None
                and encoder.parent is op.parent
                and encoder.results[0].has_one_use()
            ):
                return
            found = _one_column(encoder.input)
            if found is None or (x is not None and found[0] is not x):
                return
            x = found[0]
            columns.append(found[1])
            lists.append(encoder.props().array("categories"))
        assert x is not None
        starts = np.cumsum([0] + [len(c) for c in lists]).tolist()
        new: list[Operation] = []
        source = x
        if columns != list(range(cast(int, _tensor(x).shape[-1]))):
            index = mir.ConstantOp(np.array(columns, np.int64))
            gather = mir.GatherOp(x, index.results[0], _tensor(x).rank - 1)
            new += [index, gather]
            source = gather.results[0]
        encoder = mir.OneHotEncoderOp(source, np.concatenate(lists).tolist(), starts)
        new.append(encoder)
        for o in new:
            o.location = op.location
        # Inserted on their own: a replacement's other new ops would take the op's name.
        rewriter.insert(new, InsertPoint.before(op))
        shape = list(_tensor(op.result).shape)
        _rebuild(op, rewriter, mir.ReshapeOp(encoder.results[0], shape))


class ConcatOfColumnProducts(RewritePattern):
    """A run of concat operands along x's last axis, each the product of constant
    columns of one x (``reduce_prod(gather(x, c_k), last axis, keepdims)``, the same
    number ``d`` of columns each) -> for the run, d gathers (the terms' first columns,
    their second...) multiplied left to right: 2d - 1 ops where each term had two
    (skl2onnx's PolynomialFeatures writes an ArrayFeatureExtractor and a ReduceProd per
    term). With one column per term, a gather of the columns (x itself when they are all
    of x's, in order). Each term's product multiplies the same columns in the order
    ``reduce_prod`` does, so it is exact; the temporaries are d vectors of the run's
    length at most, not a [.., K, d] tensor of every column at once."""

    roots = (mir.ConcatOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ConcatOp, rewriter: PatternRewriter) -> None:
        rank = _tensor(op.result).rank
        if op.props().int("axis") != rank - 1:
            return

        def continues(
            before: tuple[SSAValue, list[int]], after: tuple[SSAValue, list[int]]
        ) -> bool:
            return before[0] is after[0] and len(before[1]) == len(after[1])

        def merge(terms: list[tuple[SSAValue, list[int]]]) -> SSAValue:
            return _products_of_columns(terms[0][0], [t[1] for t in terms], op, rewriter)

        _merge_concat_runs(op, rewriter, lambda v: _column_product(v, rank), continues, merge)


def _column_product(value: SSAValue, rank: int) -> tuple[SSAValue, list[int]] | None:
    """(x, its columns) of ``reduce_prod(gather(x, columns, last axis), last axis,
    keepdims)``, the columns a constant 1-D index of x's last dim (no negative ones)."""
    prod = value.owner
    if not isinstance(prod, mir.ReduceProdOp) or not prod.props().flag("keepdims"):
        return None
    if list(prod.props().ints("axes")) != [rank - 1]:
        return None
    gather = prod.input.owner
    if not isinstance(gather, mir.GatherOp) or gather.props().int("axis") != rank - 1:
        return None
    x, index = gather.operands
    columns = constant_value(index)
    width = _tensor(x).shape[-1]
    if _tensor(x).rank != rank or columns is None or columns.ndim != 1 or not columns.size:
        return None
    if not isinstance(width, int) or columns.min() < 0 or columns.max() >= width:
        return None
    return x, [int(c) for c in columns]


def _products_of_columns(
    x: SSAValue, terms: list[list[int]], op: Operation, rewriter: PatternRewriter
) -> SSAValue:
    """The products of ``terms``' columns of x, side by side along the last axis: the
    gather of each term's j-th column for every j, multiplied left to right -- the order
    ``reduce_prod`` takes them in -- where one gather of every term's columns would hold
    them all at once (more than the terms' own temporaries did)."""
    rank = _tensor(x).rank
    firsts = [t[0] for t in terms]
    if len(terms[0]) == 1 and firsts == list(range(cast(int, _tensor(x).shape[-1]))):
        return x
    new: list[Operation] = []
    product: SSAValue | None = None
    for j in range(len(terms[0])):
        index = mir.ConstantOp(np.array([t[j] for t in terms], np.int64))
        column = mir.GatherOp(x, index.results[0], rank - 1)
        new += [index, column]
        if product is None:
            product = column.results[0]
        else:
            mul = mir.MulOp(product, column.results[0])
            new.append(mul)
            product = mul.results[0]
    for o in new:
        o.location = op.location
    rewriter.insert(new, InsertPoint.before(op))
    assert product is not None
    return product


def _non_unit_axes(shape: tuple[object, ...]) -> list[int]:
    return [i for i, d in enumerate(shape) if d != 1]


class AxisOpThroughUnitReshapes(RewritePattern):
    """A softmax-like op (each result slice along ``axis`` depends only on the same slice
    of the input) between two reshapes that only move unit dims, back to the first
    reshape's input type: the slices are the same elements in the same order, so the
    op runs on x at the corresponding axis and both reshapes go."""

    roots = (mir.ReshapeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ReshapeOp, rewriter: PatternRewriter) -> None:
        found = _axis_op_through_unit_reshapes(op)
        if found is not None:
            inner, x, axis = found
            _rebuild(op, rewriter, type(inner)(x, axis))


def _axis_op_through_unit_reshapes(
    op: mir.ReshapeOp,
) -> tuple[mir.SoftmaxOp | mir.LogSoftmaxOp, SSAValue, int] | None:
    """What ``AxisOpThroughUnitReshapes`` rewrites ``op`` (the outer reshape) to: the
    softmax-like op, the first reshape's input and the axis of it the op runs along."""
    inner = op.operands[0].owner
    if not isinstance(inner, mir.SoftmaxOp | mir.LogSoftmaxOp):
        return None
    reshape = inner.input.owner
    if not isinstance(reshape, mir.ReshapeOp) or op.result.type != reshape.input.type:
        return None
    if not (inner.result.has_one_use() and reshape.result.has_one_use()):
        return None
    x, y = _tensor(reshape.input).shape, _tensor(reshape.result).shape
    kept_x, kept_y = _non_unit_axes(x), _non_unit_axes(y)
    axis = inner.props().int("axis")
    if [x[i] for i in kept_x] != [y[i] for i in kept_y] or axis not in kept_y:
        return None  # not a unit-dim reshape, or the op runs along a unit dim
    # (A symbolic size is kept on both sides and compared as a symbol: the slices
    # match whatever it is at run time, 1 included.)
    return inner, reshape.input, kept_x[kept_y.index(axis)]


class ReshapeDropsKeptDims(RewritePattern):
    """``reshape(reduce(x, axes, keepdims))`` to the shape without the reduced dims ->
    ``reduce(x, axes)``, for the reshape as the reduction's one reader."""

    roots = (mir.ReshapeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.operands[0].owner
        if not isinstance(inner, mir.ReduceOp | mir.ArgReduceOp):
            return
        props = inner.props()
        if not props.flag("keepdims") or not inner.result.has_one_use():
            return
        axes = props.ints("axes") if isinstance(inner, mir.ReduceOp) else [props.int("axis")]
        shape = _tensor(inner.input).shape
        if _tensor(op.result).shape != mir.reduced_shape(shape, axes, keepdims=False):
            return
        if _axis_op_reshaped_back(op.result):
            return  # AxisOpThroughUnitReshapes drops both reshapes instead
        if isinstance(inner, mir.ReduceOp):
            _rebuild(op, rewriter, type(inner)(inner.input, axes))
        else:
            _rebuild(op, rewriter, type(inner)(inner.input, axes[0]))


def _axis_op_reshaped_back(value: SSAValue) -> bool:
    """Whether ``value`` is the first reshape ``AxisOpThroughUnitReshapes`` drops (read
    only by a softmax-like op read only by the reshape back)."""
    use = value.get_unique_use()
    axis_op = None if use is None else use.operation
    if not isinstance(axis_op, mir.SoftmaxOp | mir.LogSoftmaxOp):
        return False
    use = axis_op.result.get_unique_use()
    outer = None if use is None else use.operation
    return isinstance(outer, mir.ReshapeOp) and _axis_op_through_unit_reshapes(outer) is not None


class PadIntoWindow(RewritePattern):
    """A zero constant pad of the spatial dims read by a conv (fused or not), or by an
    average pool that counts padded cells or has none -> the op with the pads added to
    its own."""

    roots = (mir.ConvOp, mir.FusedConvBiasActOp, mir.AvgPoolOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.roots):
            return
        pad = op.operands[0].owner
        if not isinstance(pad, mir.PadOp):
            return
        pad_props = pad.props()
        if pad_props.enum("mode") is not PadMode.CONSTANT or pad_props.float("value") != 0.0:
            return
        rank = _tensor(pad.input).rank
        explicit = pad_props.ints("pads")
        if any(explicit[:2]) or any(explicit[rank : rank + 2]):
            return  # batch or channels padded: not the window's padding
        props = cast(mir.ShapedOp, op).props()
        own = props.ints("pads")
        k = rank - 2
        pads = [own[i] + explicit[2 + i] for i in range(k)]
        pads += [own[k + i] + explicit[rank + 2 + i] for i in range(k)]
        if isinstance(op, mir.AvgPoolOp):
            if props.flag("ceil_mode") or (any(own) and not props.flag("count_include_pad")):
                return
            window = [
                n * d for n, d in zip(props.ints("kernel"), props.ints("dilations"), strict=True)
            ]
            if any(pads[i] >= window[i] or pads[k + i] >= window[i] for i in range(k)):
                return  # a window of padding alone: the pool refuses such pads
        # The op as it is but for its input and pads: its result type is unchanged (the
        # padded extent is the same), which its verify infers again.
        pads_attr = ints_attr(pads)
        assert pads_attr is not None
        new = op.clone()
        new.operands = [pad.input, *op.operands[1:]]
        new.properties["pads"] = pads_attr
        if isinstance(op, mir.AvgPoolOp):
            new.properties["count_include_pad"] = UnitAttr()
        _rebuild(op, rewriter, new)


class WhereIdentities(RewritePattern):
    """``where(c, a, a)`` -> a (when a has the result's type); ``where(not(c), a, b)``
    -> ``where(c, b, a)``."""

    roots = (mir.WhereOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.WhereOp, rewriter: PatternRewriter) -> None:
        cond, on_true, on_false = op.operands
        if on_true is on_false and on_true.type == op.result.type:
            _forward(op, rewriter, on_true)
            return
        negation = cond.owner
        if isinstance(negation, mir.NotOp):
            _rebuild(op, rewriter, mir.WhereOp(negation.input, on_false, on_true))


MATCH_REACH = 2
"""How far up its producers a pattern here reads: the op, its operands' producers and
theirs (``AxisOpThroughUnitReshapes``: reshape <- softmax <- reshape), with the users of
their results and the types of their operands. (``MergeColumnOneHots`` reads one more:
the gathers' constant indices, which no pattern here rewrites.)"""


def simplify_patterns(assume_finite: bool = False) -> list[RewritePattern]:
    splats = Splats()
    return [
        AddZero(splats), SubZero(splats), MulOne(splats), DivOne(splats),
        MinInf(splats), MaxNegInf(splats),
        MulZero(assume_finite, splats), DoubleNegation(),
        SigmoidGateToSilu(),
        IdentityTranspose(), ComposeTransposes(), IdentityReshapeOrExpand(), ComposeReshapes(),
        ExpandOfExpandOrLeadingUnitReshape(), BroadcastInsteadOfExpand(), StackedInitialStates(),
        SameTypeCast(), ExactCastChain(), SingleOperandConcat(), FullNarrow(), ComposeSlices(),
        ComposeGathers(), AxisOpThroughUnitReshapes(), MergeColumnOneHots(),
        ReshapeDropsKeptDims(), PadIntoWindow(), WhereIdentities(), AdjacentNarrowsConcat(),
        ConcatOfColumnProducts(),
    ]  # fmt: skip


@dataclass(frozen=True)
class AlgebraicSimplifyPass(ModulePass):
    """Peephole identities: x+0, x·1, x·0, min(x, inf), double negation,
    transpose/reshape/cast chains."""

    name = "algebraic-simplify"
    REPORTS_CHANGES: ClassVar[bool] = True
    PURE: ClassVar[bool] = True

    assume_finite: bool = False
    """Also rewrite float x·0 to 0 (exact only when x holds no NaN or infinity)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # No implicit dce: removing dead ops is the dce pass's job.
        patterns = simplify_patterns(self.assume_finite)
        listener = change_listener()
        for graph in func_graphs(op):
            apply_greedily(graph.body, patterns, listener, reach=MATCH_REACH)
