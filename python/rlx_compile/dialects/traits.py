"""What an op *is*: the traits the RLX dialects attach to their ops, and the queries passes
ask instead of keeping op tables of their own (MLIR's traits and interfaces).

A pass that needs to know whether an op is a leaf, a view, elementwise or fused, or how
mixed precision treats it, asks the op (``op.has_trait(ViewLike)``,
``precision_class(op)``); a new op declares these once, in its dialect, and every pass
sees it. xDSL collects the traits of an op's base classes too, so a family declares its
traits once on its base (``UnaryOp``, ``ReduceOp``, ...). A parametrised trait
(``Leaf``, ``Precision``) is declared once per op: traits are a set, not an override
chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Protocol, cast

from xdsl.ir import Operation, SSAValue
from xdsl.traits import OpTrait
from xdsl.utils.exceptions import VerifyException

if TYPE_CHECKING:
    from rlx_compile.builder import GraphBuilder


@dataclass(frozen=True)
class Leaf(OpTrait):
    """A graph leaf: its value is loaded before the run, not computed (``mir.input``,
    ``mir.param``, ``mir.constant``)."""

    weight: bool = False
    """Known before any input arrives (a param or a constant)."""


@dataclass(frozen=True)
class Elementwise(OpTrait):
    """Result element i depends only on element i of each operand (after broadcasting):
    the op can write its result over a same-size operand that dies at it, and runs
    inside a ``mir.elementwise_region``."""


@dataclass(frozen=True)
class InPlace(OpTrait):
    """Result element i depends only on element i of its one operand of the result's
    shape and on i's position (a per-feature table along the last axis, a per-channel
    scale and shift): the op can write its result over a same-type operand that dies at
    it. ``Elementwise`` ops can too; these do not run inside a region and do not commute
    with moving elements."""


@dataclass(frozen=True)
class ViewLike(OpTrait):
    """The result holds operand 0's elements, rearranged, selected or repeated: nothing
    is computed and no other value appears (reshape, transpose, narrow, slice, expand).
    Whether the result also *aliases* the operand's bytes is the op's
    ``contiguous_view_offset``."""


@dataclass(frozen=True)
class Fused(OpTrait):
    """An op that stands for a chain of primitive ops: it implements
    ``decompose(builder) -> results``, the chain it means, which legalization emits for
    targets that lack the fused kernel and which the reference executor's kernel for it
    is tested against."""

    summary: str
    """The chain, in a few words (shown on the op's documentation page)."""

    def verify(self, op: Operation) -> None:
        if not callable(getattr(op, "decompose", None)):
            raise VerifyException(f"{op.name} is Fused but defines no decompose(builder)")


class Decomposable(Protocol):
    """A ``Fused`` op: ``decompose`` emits the chain through the builder and returns the
    values that replace the op's results, in order."""

    def decompose(self, b: GraphBuilder) -> list[SSAValue]: ...


def decompose(op: Operation, b: GraphBuilder) -> list[SSAValue]:
    """The primitive chain a ``Fused`` op stands for, emitted through ``b``."""
    assert is_fused(op), op.name
    return cast(Decomposable, op).decompose(b)


class PrecisionClass(Enum):
    """How mixed precision treats an op (``auto-mixed-precision`` policies)."""

    COMPUTE = "compute"
    """Compute-heavy (matmul, conv and their fused forms): the first to run low."""
    REDUCTION = "reduction"
    """Accumulates over many elements (reductions, norms, softmax): f32 by default."""
    ELEMENTWISE = "elementwise"
    DATA_MOVEMENT = "data-movement"
    QUANT = "quant"
    """Quantisation ops: their types are the scheme's."""
    BOUNDARY = "boundary"
    """Leaves and sizes: their types are the graph's."""
    CAST = "cast"


@dataclass(frozen=True)
class Precision(OpTrait):
    """The op's ``PrecisionClass``."""

    category: PrecisionClass


_LEAF_TRAITS: dict[type[Operation], Leaf | None] = {}
"""Each op class's ``Leaf`` trait: the planners ask every op, and a class's traits never
change (xDSL scans the trait list each time; ``ShapedOp`` remembers only its own)."""


def _leaf_trait(cls: type[Operation]) -> Leaf | None:
    try:
        return _LEAF_TRAITS[cls]
    except KeyError:
        found = _LEAF_TRAITS[cls] = cls.get_trait(Leaf)
        return found


def is_leaf(op: Operation | type[Operation]) -> bool:
    return _leaf_trait(op if isinstance(op, type) else type(op)) is not None


def is_weight_leaf(op: Operation) -> bool:
    """A param or a constant: a leaf known before any input arrives."""
    leaf = _leaf_trait(type(op))
    return leaf is not None and leaf.weight


def writes_in_place(op: Operation | type[Operation]) -> bool:
    """Whether the op can write its result over a same-type operand that dies at it."""
    return op.has_trait(Elementwise) or op.has_trait(InPlace)


def is_view_like(op: Operation | type[Operation]) -> bool:
    return op.has_trait(ViewLike)


def is_fused(op: Operation | type[Operation]) -> bool:
    return op.has_trait(Fused)


def precision_class(op: Operation) -> PrecisionClass | None:
    """The op's precision class; None for ops without one (regions, other dialects)."""
    trait = op.get_trait(Precision)
    return trait.category if trait is not None else None
