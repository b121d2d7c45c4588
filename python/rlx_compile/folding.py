"""Compile-time values: what the cleanup passes know about a value before run time.

An op *folds* when it is pure, holds no region, is not a leaf, has a reference
implementation and static result types. Its value on known operands is then computed
by the reference executor itself (``interpreter.evaluate_op``), so replacing the op by a
constant changes no bit of any result -- broadcasting, low-precision rounding and
integer wrapping included. Ops without the ``Pure`` trait (calls, anything with side
effects or randomness) never fold, and neither do ops whose evaluation has no defined
result (integer division by zero, an out-of-range gather): those stay for run time.

A dequantize of 8-bit integers that are known (a quantised model's weights) never folds at
import (``FoldingBuilder``): the cleanup folds it, and for a target with integer kernels
leaves those that matmuls and convs read as their weight (``keep-dequantize``) for
``quant-to-integer``, which reads the integers.

``fold`` is the one compile-time evaluator (the foldable check, a size cap, the error
guard), used by ``KnownValues`` -- the forward sweep shared by constant-fold, sccp and
numeric-lint --, ``FoldingBuilder`` (the ONNX importer's, and the recurrent layers'
lowering) and quant-propagate's weight folding;
``erase_newly_dead`` removes what a rewrite left unused without touching dead code that
was there before (that is dce's job).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import Pure
from xdsl.transforms.dead_code_elimination import would_be_trivially_dead

from rlx_compile.builder import GraphBuilder, type_of
from rlx_compile.diagnostics import note_block_changed
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import RawDataAttr
from rlx_compile.dialects.traits import is_leaf
from rlx_compile.dialects.types import Dim, DType, TensorType
from rlx_compile.ir import erase_unused, func_graphs

FOLD_LIMIT = 1 << 16
"""Constant subgraphs fold at import while their results hold at most this many elements
(shape arithmetic, index tables); larger ones stay ops, so weights are not duplicated."""
DEFAULT_MAX_ELEMENTS = 1 << 20
"""Largest result (in elements) the passes evaluate or materialise by default: 4 MiB of
f32. Bigger values (a transposed weight, say) would duplicate weights in the module."""


def constant_value(value: SSAValue | None) -> np.ndarray | None:
    """The array of a value defined by ``mir.constant``, else None (also for no value)."""
    owner = value.owner if value is not None else None
    return owner.to_numpy() if isinstance(owner, mir.ConstantOp) else None


def constant_values(values: Iterable[SSAValue]) -> list[np.ndarray] | None:
    """The arrays of ``values`` when every one is defined by ``mir.constant``, else None."""
    arrays = []
    for v in values:
        arr = constant_value(v)
        if arr is None:
            return None
        arrays.append(arr)
    return arrays


# The interpreter is imported where values are computed, not at module level: the helpers
# above are what most passes (and the dialects' canonicalization patterns) need, and a
# module-level import would tie dialects, ir, folding and the interpreter into one circle.


_QUANTISED = (DType.I8, DType.U8)

_KIND_FOLDS: dict[type[Operation], bool] = {}
"""Whether ops of a class may fold as far as their traits say (not a leaf, ``Pure``):
traits belong to the class."""


def scales_exactly(factor: float) -> bool:
    """Whether multiplying by ``factor`` is exact (but for overflow): ``factor`` is ±2^k,
    a normal float. Scaling a weight by it then scales every product and partial sum of
    a matmul exactly, so the weight may take it where rounding must not change."""
    return factor != 0.0 and math.isfinite(factor) and math.frexp(abs(factor))[0] == 0.5


def dequantizes_integers(op: Operation) -> bool:
    """Whether ``op`` dequantizes 8-bit integers (the weights of a quantised model, among
    others): the importer leaves it to the cleanup."""
    return isinstance(op, mir.DequantizeOp) and type_of(op.input).dtype in _QUANTISED


def dequantizes_integer_operand(op: Operation) -> bool:
    """Whether ``op`` dequantizes 8-bit integers that an integer kernel would read: the
    weight of matmuls and convs, an operand of quantized adds (a bias). The op
    ``keep-dequantize`` keeps (another reader, a norm's scale, say, folds as any op, so
    that fusion finds its constant)."""
    from rlx_compile.quant.sites import read_as_quantized_addend, read_as_weight

    if not dequantizes_integers(op):
        return False
    return read_as_weight(op.results[0]) or read_as_quantized_addend(op.results[0])


def is_foldable(op: Operation) -> bool:
    from rlx_compile.interpreter import lookup

    kind = type(op)
    folds = _KIND_FOLDS.get(kind)
    if folds is None:
        folds = _KIND_FOLDS[kind] = not is_leaf(op) and op.has_trait(Pure)
    if not folds or op.regions or not op.results or lookup(op) is None:
        return False
    return all(isinstance(r.type, TensorType) and r.type.is_static for r in op.results)


def result_elements(op: Operation) -> int:
    total = 0
    for r in op.results:
        assert isinstance(r.type, TensorType)
        total += r.type.num_elements() or 0
    return total


def evaluate(op: Operation, args: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The op's results on ``args`` under the reference semantics; None when the op has no
    defined result for them (it then fails at run time, as it would unfolded)."""
    from rlx_compile.interpreter import ExecutionError, evaluate_op

    try:
        return evaluate_op(op, args)
    except ExecutionError:
        return None


def fold(
    op: Operation, known: Callable[[SSAValue], np.ndarray | None], max_elements: int
) -> list[np.ndarray] | None:
    """The results of ``op`` at compile time: when it folds (``is_foldable``), its results
    hold at most ``max_elements`` and ``known`` gives the value of every operand; else
    None, as when the op has no defined result on them (``evaluate``)."""
    if not is_foldable(op) or result_elements(op) > max_elements:
        return None
    args: list[np.ndarray] = []
    for v in op.operands:
        value = known(v)
        if value is None:
            return None
        args.append(value)
    return evaluate(op, args)


class FoldingBuilder(GraphBuilder):
    """A ``GraphBuilder`` that evaluates an op whose operands are all constants with the
    reference executor and emits the result as one ``mir.constant`` instead: the same
    kernels at compile time, so folding never changes a number. Results of more than
    ``limit`` elements stay ops (the ONNX importer's FOLD_LIMIT by default)."""

    def __init__(
        self, insert: Callable[[Operation], Any], location: Any = None, limit: int = FOLD_LIMIT
    ):
        super().__init__(insert, location)
        self.limit = limit

    def emit(self, op: Operation) -> Operation:
        folded = self._fold(op)
        return super().emit(folded if folded is not None else op)

    def reshape(self, x: SSAValue, shape: Sequence[Dim]) -> SSAValue:
        # A constant reshaped: the constant that folding the reshape makes, made without
        # the reshape (weights and shape operands are reshaped at every turn).
        if isinstance(x.owner, mir.ConstantOp) and all(type(d) is int and d >= 0 for d in shape):
            folded = _reshaped_constant(x, type_of(x).with_shape(shape), self.limit)
            if folded is not None:
                return self._one(folded)
        return super().reshape(x, shape)

    def _fold(self, op: Operation) -> Operation | None:
        # Ops of one result that read something: a leaf, a mir.dims or a multi-result op
        # stays as the converter wrote it.
        operands = op.operands
        if not operands or len(op.results) != 1:
            return None
        for v in operands:
            if not isinstance(v.owner, mir.ConstantOp):
                return None  # what ``fold`` finds too, without its foldable check first
        if dequantizes_integers(op):
            return None  # the cleanup folds it, or quant-to-integer reads the integers
        if type(op) is mir.ReshapeOp:
            reshaped = _reshaped_constant(op.input, op.result.type, self.limit)
            if reshaped is not None:
                op.drop_all_references()
                return reshaped
        results = fold(op, constant_value, self.limit)
        if results is None:
            return None  # no value at compile time: keep the op, it raises when run
        (value,) = results
        op.drop_all_references()
        return mir.ConstantOp(value, cast(TensorType, op.results[0].type))


def _reshaped_constant(value: SSAValue, t: TensorType, limit: int) -> mir.ConstantOp | None:
    """The constant ``value`` (a ``mir.constant``'s) as type ``t``: what ``fold`` makes of
    a reshape of it -- the reference reshape moves no element --, without the executor's
    generic checks; None where ``fold`` is left to decide (a symbolic or mismatched
    shape, a result past ``limit``)."""
    if not t.is_static:
        return None
    shape = t.static_shape()
    arr = cast(np.ndarray, constant_value(value))
    if arr.size != math.prod(shape) or arr.size > limit:
        return None
    return mir.ConstantOp(arr.reshape(shape), t)


def materialize(array: np.ndarray, replaced: SSAValue) -> mir.ConstantOp:
    """A constant holding ``array`` in place of ``replaced``: same type, name and location."""
    t = replaced.type
    assert isinstance(t, TensorType)
    return _in_place_of(mir.ConstantOp(array, t), replaced)


def _in_place_of(const: mir.ConstantOp, replaced: SSAValue) -> mir.ConstantOp:
    const.result.name_hint = replaced.name_hint
    if isinstance(replaced.owner, Operation):
        const.location = replaced.owner.location
    return const


class ConstantData:
    """An evaluated value as ``materialize`` stores it in a constant: its raw bytes
    (little-endian, row-major), and the array ``ConstantOp.to_numpy`` reads back from them
    -- what a later fold of the chain computes on. The constant, when one is needed, is
    built on the same bytes: one copy of the array where ``ConstantOp(array)`` makes two.
    ``array`` has the dtype and shape of its type, as every evaluated result has."""

    __slots__ = ("array", "data")

    def __init__(self, array: np.ndarray):
        stored = array.dtype.newbyteorder("<")
        self.data = array.astype(stored, copy=False).tobytes()
        read = np.frombuffer(self.data, dtype=stored).astype(array.dtype, copy=False)
        self.array = read.reshape(array.shape)

    def constant(self, replaced: SSAValue) -> mir.ConstantOp:
        """The constant in place of ``replaced``, as ``materialize`` makes it."""
        const = mir.ConstantOp.create(
            result_types=[replaced.type], properties={"value": RawDataAttr(self.data)}
        )
        return _in_place_of(const, replaced)


class KnownValues:
    """Values known at compile time, filled by a forward sweep over a block.

    ``mir.constant`` results are known; ``evaluate(op)`` adds the results of a foldable op
    whose operands are all known and whose results hold at most ``max_elements``
    (with ``keep_dequantize``, not a dequantize of 8-bit integers an integer kernel
    would read: ``dequantizes_integer_operand``).
    """

    def __init__(self, max_elements: int = DEFAULT_MAX_ELEMENTS, keep_dequantize: bool = False):
        self.max_elements = max_elements
        self.keep_dequantize = keep_dequantize
        self._values: dict[SSAValue, np.ndarray] = {}

    def get(self, value: SSAValue) -> np.ndarray | None:
        known = self._values.get(value)
        if known is None:
            known = constant_value(value)
            if known is not None:
                self._values[value] = known
        return known

    def set(self, value: SSAValue, array: np.ndarray) -> None:
        self._values[value] = array

    def evaluate(self, op: Operation) -> list[np.ndarray] | None:
        """Fold ``op`` if it folds and all its operands are known; remember its results."""
        values = self._values
        for v in op._operands:  # most ops read a value known only at run time
            if v not in values and not isinstance(v.owner, mir.ConstantOp):
                return None
        if self.keep_dequantize and dequantizes_integer_operand(op):
            return None
        results = fold(op, self.get, self.max_elements)
        if results is not None:
            for r, arr in zip(op.results, results, strict=True):
                self._values[r] = arr
        return results


def unused_ops(block: Block) -> set[Operation]:
    """Ops of ``block`` whose results nobody uses (snapshot before a rewrite)."""
    return {op for op in block.ops if op.results and all(not r.uses for r in op.results)}


class UnusedBefore:
    """``unused_ops`` of a block as it was before its first change, taken when a pass is
    about to change it (``changing``): a sweep that changes nothing need not look."""

    __slots__ = ("block", "ops")

    def __init__(self, block: Block):
        self.block = block
        self.ops: set[Operation] | None = None

    def changing(self) -> None:
        if self.ops is None:
            self.ops = unused_ops(self.block)

    def erase_newly_dead(self) -> None:
        """``erase_newly_dead`` of the block, after a change."""
        assert self.ops is not None, "erase_newly_dead without a change"
        erase_newly_dead(self.block, self.ops)


def erase_newly_dead(block: Block, already_unused: Iterable[Operation]) -> None:
    """Erase the ops a rewrite left without users -- transitively, leaves included
    (``mir.input`` has effects, so it stays; so does the terminator) -- but not those in
    ``already_unused``."""
    keep = set(already_unused)
    erase_unused(op for op in block.ops if op not in keep and would_be_trivially_dead(op))


@dataclass(frozen=True)
class KnownValuesPass(ModulePass):
    """Base of the passes that evaluate compile-time values: the ``max-elements`` option
    and a walk over every block of every graph (``run_block``)."""

    max_elements: int = DEFAULT_MAX_ELEMENTS
    """Largest value (in elements) evaluated, and materialised as a constant."""

    keep_dequantize: bool = False
    """Leave the dequantizes of 8-bit integers that matmuls and convs read as their weight,
    or quantized adds as an operand (``dequantizes_integer_operand``), as ops, for
    ``quant-to-integer`` to read the integers; the cleanup after it folds what it
    leaves."""

    def __post_init__(self) -> None:
        if self.max_elements < 1:
            raise ValueError(f"max-elements must be >= 1, got {self.max_elements}")

    def known_values(self) -> KnownValues:
        """An empty sweep with this pass's options."""
        return KnownValues(self.max_elements, self.keep_dequantize)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in func_graphs(op):
            self._run_nested(graph.body.block)

    def _run_nested(self, block: Block) -> None:
        """A block, then the blocks of the regions left in it (a block first: it may
        replace an if by its taken branch, whose ops then join it)."""
        if self.run_block(block):
            note_block_changed(block)
        op = block.first_op
        while op is not None:  # (the blocks nested in it change, this one no more)
            for region in op.regions:
                for nested in region.blocks:
                    self._run_nested(nested)
            op = op.next_op

    def run_block(self, block: Block) -> bool:
        """Evaluate ``block``; whether it changed it (reported to the verify after the pass)."""
        raise NotImplementedError


def inline_taken_branch(op: mir.IfOp, taken: bool) -> list[Operation]:
    """Replace an if (whose condition is known) by the ops of its taken branch, moved
    before it; its results become the values the branch yields. Returns the moved ops."""
    branch = op.branch(taken)
    terminator = branch.last_op
    assert terminator is not None
    moved = [o for o in branch.ops if o is not terminator]
    block = op.parent_block()
    assert block is not None
    for inner in moved:
        inner.detach()
        block.insert_op_before(inner, op)
    for result, value in zip(op.results, terminator.operands, strict=True):
        result.replace_all_uses_with(value)
    block.erase_op(op)
    return moved
