"""Pieces shared by the hir, mir and lir dialects: enum attributes, property helpers and
``ShapedOp``, the base class whose verifier re-infers result types.

Every op with computable result types implements one classmethod,
``infer(props, **operand_types) -> tuple[TensorType, ...]``. The op's ``__init__`` calls it
to build the op and ``verify_`` calls it to check a parsed or rewritten op, so the shape
and dtype rules of an op live in exactly one place. The generic work of building and
verifying (and ``Props``) is in ``op_support``, which the build compiles.
"""

from __future__ import annotations

import struct
from abc import ABCMeta
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self, cast

from xdsl.dialects.builtin import (
    I64,
    BytesAttr,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    FloatData,
    IntAttr,
    IntegerAttr,
    UnitAttr,
    f64,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Data,
    Dialect,
    Operation,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import OpTrait, OpTraitInvT
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from rlx_compile.dialects.construct import (
    FAST_SHELLS,
    clone_op,
    clone_shell,
    link_operands,
)
from rlx_compile.dialects.op_support import (
    VERIFY_OP_EQUIVALENTS,
    OperandTypes,
    Props,
    build_op,
    check_result_types,
    named_operand_types,
    verify_op,
)
from rlx_compile.dialects.types import DimAttr, DType, TensorType, fmt_shape

# ---------------------------------------------------------------------------------
# Enum attributes (printed as bare keywords inside op formats)
# ---------------------------------------------------------------------------------


class Activation(StrEnum):
    NONE = "none"
    RELU = "relu"
    GELU = "gelu"  # exact, erf form
    GELU_TANH = "gelu_tanh"
    SILU = "silu"
    SIGMOID = "sigmoid"
    TANH = "tanh"
    CLIP = "clip"  # min(max(x, lo), hi); act_params [lo, hi] (ReLU6: [0, 6])
    HARD_SIGMOID = "hard_sigmoid"  # max(min(alpha·x + beta, 1), 0); act_params [alpha, beta]
    HARD_SWISH = "hard_swish"  # x · hard_sigmoid(x) with alpha 1/6, beta 1/2
    LEAKY_RELU = "leaky_relu"  # x < 0 ? alpha·x : x; act_params [alpha]


ACTIVATION_PARAMS: dict[Activation, tuple[str, ...]] = {
    Activation.CLIP: ("min", "max"),
    Activation.HARD_SIGMOID: ("alpha", "beta"),
    Activation.LEAKY_RELU: ("alpha",),
}
"""The parameters of the activations that take them, in ``act_params`` order."""


@irdl_attr_definition
class ActivationAttr(EnumAttribute[Activation], SpacedOpaqueSyntaxAttribute):
    name = "rlx.activation"


class GeluApproximation(StrEnum):
    NONE = "none"
    TANH = "tanh"


@irdl_attr_definition
class GeluApproximationAttr(EnumAttribute[GeluApproximation], SpacedOpaqueSyntaxAttribute):
    name = "rlx.gelu_approximation"


class ComparePredicate(StrEnum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"


@irdl_attr_definition
class ComparePredicateAttr(EnumAttribute[ComparePredicate], SpacedOpaqueSyntaxAttribute):
    name = "rlx.compare_predicate"


class MaskKind(StrEnum):
    NONE = "none"
    # Upper-left aligned, as in torch SDPA and ONNX: query i sees key j iff j <= i.
    CAUSAL = "causal"
    EXPLICIT = "explicit"  # a mask operand: bool (true = attend) or an additive float bias


@irdl_attr_definition
class MaskKindAttr(EnumAttribute[MaskKind], SpacedOpaqueSyntaxAttribute):
    name = "rlx.mask_kind"


class PadMode(StrEnum):
    CONSTANT = "constant"
    REFLECT = "reflect"
    EDGE = "edge"
    WRAP = "wrap"


@irdl_attr_definition
class PadModeAttr(EnumAttribute[PadMode], SpacedOpaqueSyntaxAttribute):
    name = "rlx.pad_mode"


class ScatterReduction(StrEnum):
    NONE = "none"  # the update replaces the element (the last update wins)
    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"


@irdl_attr_definition
class ScatterReductionAttr(EnumAttribute[ScatterReduction], SpacedOpaqueSyntaxAttribute):
    name = "rlx.scatter_reduction"


class RecurrentDirection(StrEnum):
    FORWARD = "forward"
    REVERSE = "reverse"
    BIDIRECTIONAL = "bidirectional"  # a forward pass, then a reverse one, side by side


@irdl_attr_definition
class RecurrentDirectionAttr(EnumAttribute[RecurrentDirection], SpacedOpaqueSyntaxAttribute):
    name = "rlx.recurrent_direction"


class RecurrentActivation(StrEnum):
    """The gate activations of ``mir.rnn`` / ``mir.gru`` / ``mir.lstm``: ONNX's RNN
    activation functions, with the alpha and beta each reads."""

    SIGMOID = "sigmoid"
    TANH = "tanh"
    RELU = "relu"
    LEAKY_RELU = "leaky_relu"  # x < 0 ? alpha·x : x
    THRESHOLDED_RELU = "thresholded_relu"  # x > alpha ? x : 0
    ELU = "elu"  # x < 0 ? alpha·(e^x - 1) : x
    SOFTSIGN = "softsign"  # x / (1 + |x|)
    SOFTPLUS = "softplus"  # log(1 + e^x)
    HARD_SIGMOID = "hard_sigmoid"  # max(min(alpha·x + beta, 1), 0)
    SCALED_TANH = "scaled_tanh"  # alpha·tanh(beta·x)
    AFFINE = "affine"  # alpha·x + beta


class PostTransform(StrEnum):
    """What classic-ML ops (``mir.tree_ensemble``, ``mir.svm_classifier``...) apply to
    their scores along the last axis, as onnxruntime computes it."""

    NONE = "none"
    LOGISTIC = "logistic"
    SOFTMAX = "softmax"
    SOFTMAX_ZERO = "softmax_zero"  # scores within 1e-7 of 0 take no part
    PROBIT = "probit"  # sqrt(2) erfinv(2v - 1), onnxruntime's closed-form erfinv


@irdl_attr_definition
class PostTransformAttr(EnumAttribute[PostTransform], SpacedOpaqueSyntaxAttribute):
    name = "rlx.post_transform"


class TreeAggregate(StrEnum):
    """How a tree ensemble combines the weights of the leaves a sample reaches."""

    SUM = "sum"
    AVERAGE = "average"
    MIN = "min"
    MAX = "max"


@irdl_attr_definition
class TreeAggregateAttr(EnumAttribute[TreeAggregate], SpacedOpaqueSyntaxAttribute):
    name = "rlx.tree_aggregate"


class SvmKernel(StrEnum):
    LINEAR = "linear"  # x·v
    POLY = "poly"  # (gamma x·v + coef0)^degree
    RBF = "rbf"  # exp(-gamma |x - v|²)
    SIGMOID = "sigmoid"  # tanh(gamma x·v + coef0)


@irdl_attr_definition
class SvmKernelAttr(EnumAttribute[SvmKernel], SpacedOpaqueSyntaxAttribute):
    name = "rlx.svm_kernel"


class NormKind(StrEnum):
    MAX = "max"
    L1 = "l1"
    L2 = "l2"


@irdl_attr_definition
class NormKindAttr(EnumAttribute[NormKind], SpacedOpaqueSyntaxAttribute):
    name = "rlx.norm_kind"


class FusionPolicy(StrEnum):
    DIRECT = "direct"  # lower to the fused MIR op
    FUSABLE = "fusable"  # lower to the primitive chain that fusion recognises later


@irdl_attr_definition
class FusionPolicyAttr(EnumAttribute[FusionPolicy], SpacedOpaqueSyntaxAttribute):
    name = "rlx.fusion_policy"


@irdl_attr_definition
class RawDataAttr(Data[bytes]):
    """Raw little-endian tensor bytes, ``#rlx.data<"0x...">`` in generic form.

    (The builtin ``BytesAttr`` prints as a string literal that parses back as a
    ``StringAttr``, so it does not survive a generic-form round trip.)
    """

    name = "rlx.data"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> bytes:
        with parser.in_angle_brackets():
            pos = parser.pos
            text = parser.parse_str_literal("expected hex data")
            if not text.startswith("0x"):
                parser.raise_error("hex data must start with 0x", pos)
            try:
                return bytes.fromhex(text[2:])
            except ValueError:
                parser.raise_error("malformed hex data", pos)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string('<"0x' + self.data.hex().upper() + '">')


class Weights:
    """Param values kept with a module (an imported model's initializers), by param name.

    One object is shared by every copy of the module (clones copy attributes, not
    arrays), so a compile's stages cost nothing; the arrays are read-only. Compared by
    identity. Text holds only their count and size: a module parsed from text has
    ``arrays`` None (its params are bound at run time, as for any module)."""

    def __init__(self, arrays: Mapping[str, Any] | None, count: int = 0, nbytes: int = 0):
        self.arrays = arrays
        self.count = len(arrays) if arrays is not None else count
        self.nbytes = sum(int(a.nbytes) for a in arrays.values()) if arrays is not None else nbytes


@irdl_attr_definition
class WeightsAttr(Data[Weights]):
    """``#rlx.weights<N arrays, B bytes>``: the ``Weights`` of the module that holds it
    (as the module attribute ``rlx.weights``)."""

    name = "rlx.weights"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Weights:
        with parser.in_angle_brackets():
            count = parser.parse_integer(allow_negative=False)
            parser.parse_keyword("arrays")
            parser.parse_punctuation(",")
            nbytes = parser.parse_integer(allow_negative=False)
            parser.parse_keyword("bytes")
        return Weights(None, count, nbytes)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.count} arrays, {self.data.nbytes} bytes>")


WEIGHTS_ATTR = "rlx.weights"


def attach_weights(module: Operation, arrays: Mapping[str, Any]) -> None:
    """Keep ``arrays`` (param name -> array) with ``module``; they are made read-only."""
    for a in arrays.values():
        a.setflags(write=False)
    module.attributes[WEIGHTS_ATTR] = WeightsAttr(Weights(dict(arrays)))


def kept_weights(op: Operation) -> Mapping[str, Any]:
    """The param values kept with the module holding ``op`` (or ``op`` itself), if any."""
    node: Operation | None = op
    while node is not None:
        attr = node.attributes.get(WEIGHTS_ATTR)
        if isinstance(attr, WeightsAttr):
            return attr.data.arrays or {}
        node = node.parent_op()
    return {}


ENUM_ATTRS: tuple[type[Attribute], ...] = (
    ActivationAttr,
    GeluApproximationAttr,
    ComparePredicateAttr,
    MaskKindAttr,
    PadModeAttr,
    ScatterReductionAttr,
    RecurrentDirectionAttr,
    FusionPolicyAttr,
    PostTransformAttr,
    TreeAggregateAttr,
    SvmKernelAttr,
    NormKindAttr,
)

RLX = Dialect("rlx", [], [TensorType, DimAttr, RawDataAttr, WeightsAttr, *ENUM_ATTRS])
"""Types and attributes shared by every level."""

_ENUM_ATTR_OF: dict[type[StrEnum], type[EnumAttribute[Any]]] = {
    Activation: ActivationAttr,
    GeluApproximation: GeluApproximationAttr,
    ComparePredicate: ComparePredicateAttr,
    MaskKind: MaskKindAttr,
    PadMode: PadModeAttr,
    ScatterReduction: ScatterReductionAttr,
    RecurrentDirection: RecurrentDirectionAttr,
    FusionPolicy: FusionPolicyAttr,
    PostTransform: PostTransformAttr,
    TreeAggregate: TreeAggregateAttr,
    SvmKernel: SvmKernelAttr,
    NormKind: NormKindAttr,
}


I64Attr = IntegerAttr[I64]
"""Integer properties: printed bare (``axis 1``) inside op formats."""
I64Array = DenseArrayBase.constr(i64)
"""Integer-list properties: printed as ``[1, 0]`` inside op formats."""
F64Attr = FloatAttr[Float64Type]
"""Float properties: printed bare and losslessly (``eps 1.000000e-05``)."""
F64Array = DenseArrayBase.constr(f64)
"""Float-list properties: printed as ``[0.000000e+00, 6.000000e+00]`` inside op formats."""


# ---------------------------------------------------------------------------------
# Property constructors (Python value -> attribute); None means "not set"
# ---------------------------------------------------------------------------------


# Property attributes made field by field, as their constructors leave them, without
# the verification their fields pass by construction (an i64 in range, whole i64/f64
# byte strings, an enum member): the generic construction and verification of an
# attribute costs more than building the op that holds it. Each op gets its own
# attribute objects, as before.
_new = object.__new__
_UNIT = UnitAttr()  # no payload: one is as good as another


def int_data(v: int) -> IntAttr:
    """``IntAttr(v)`` for an int ``v``, without xDSL's generic parameter checks."""
    data = _new(IntAttr)
    data.__dict__["data"] = v  # frozen: its fields are set as object.__setattr__ sets them
    return data


def _array(elt_type: Attribute, raw: bytes) -> DenseArrayBase:
    data = _new(BytesAttr)
    data.__dict__["data"] = raw
    array = _new(DenseArrayBase)
    fields = array.__dict__
    fields["elt_type"] = elt_type
    fields["data"] = data
    return array


def int_attr(v: int | None) -> IntegerAttr | None:
    if v is None:
        return None
    v = int(v)
    if not _I64_MIN <= v < _I64_END:
        return IntegerAttr(v, i64)  # normalised or refused there
    attr = _new(IntegerAttr)
    fields = attr.__dict__
    fields["value"] = int_data(v)
    fields["type"] = i64
    return attr


_I64_MIN, _I64_END = -(1 << 63), 1 << 63


def ints_attr(v: Iterable[int] | None) -> DenseArrayBase | None:
    if v is None:
        return None
    given = v if type(v) is list or type(v) is tuple else list(v)
    try:  # ints (and what has an __index__) an i64 holds: what from_list would pack
        return _array(i64, struct.pack(f"<{len(given)}q", *given))
    except (struct.error, TypeError):
        pass
    values = [int(x) for x in given]
    for x in values:
        if not _I64_MIN <= x < _I64_END:
            return DenseArrayBase.from_list(i64, values)  # normalised or refused there
    return _array(i64, struct.pack(f"<{len(values)}q", *values))


def float_attr(v: float | None) -> FloatAttr | None:
    if v is None:
        return None
    value = _new(FloatData)
    value.__dict__["data"] = float(v)  # f64's pack-and-unpack round trip changes no double
    attr = _new(FloatAttr)
    fields = attr.__dict__
    fields["value"] = value
    fields["type"] = f64
    return attr


def floats_attr(v: Iterable[float] | None) -> DenseArrayBase | None:
    if v is None:
        return None
    given = v if type(v) is list or type(v) is tuple else list(v)
    try:  # what from_list packs (one "<d" per value), in one struct call
        return _array(f64, struct.pack(f"<{len(given)}d", *given))
    except (struct.error, TypeError):
        values = [float(x) for x in given]
        return _array(f64, struct.pack(f"<{len(values)}d", *values))


def activation_props(
    activation: str | Activation, act_params: Sequence[float] = ()
) -> dict[str, Attribute | None]:
    """The ``activation`` and ``act_params`` properties of a fused op."""
    return {
        "activation": enum_attr(Activation, activation),
        "act_params": floats_attr(act_params) if act_params else None,
    }


def flag_attr(v: bool) -> UnitAttr | None:
    return _UNIT if v else None


def enum_attr(enum_type: type[StrEnum], v: str | StrEnum | None) -> Attribute | None:
    if v is None:
        return None
    try:
        value = enum_type(v)
    except ValueError:
        known = ", ".join(e.value for e in enum_type)
        raise ValueError(f"unknown {enum_type.__name__} {v!r} (known: {known})") from None
    attr = _new(_ENUM_ATTR_OF[enum_type])
    attr.__dict__["data"] = value
    return attr


# ---------------------------------------------------------------------------------
# Type-check helpers used inside infer()
# ---------------------------------------------------------------------------------


def require_float(t: TensorType, what: str) -> None:
    if not t.dtype.is_float:
        raise VerifyException(f"{what} must have a float element type, got {t.dtype.value}")


def require_numeric(t: TensorType, what: str) -> None:
    if t.dtype.is_bool:
        raise VerifyException(f"{what} must be numeric, got bool")


def require_int(t: TensorType, what: str) -> None:
    if not t.dtype.is_int:
        raise VerifyException(f"{what} must have an integer element type, got {t.dtype.value}")


def require_dtype(t: TensorType, dtype: DType, what: str) -> None:
    if t.dtype is not dtype:
        raise VerifyException(f"{what} must be {dtype.value}, got {t.dtype.value}")


def require_same_dtype(types: Sequence[TensorType], what: str) -> DType:
    dtype = types[0].dtype if types else None
    for t in types:
        if t.dtype is not dtype:
            dtype = None
            break
    if dtype is None:
        raise VerifyException(
            f"{what} must share one element type, got " + ", ".join(t.dtype.value for t in types)
        )
    return dtype


def check_activation(props: Props, out: TensorType) -> Activation:
    """An op's fused ``activation``: float results only, and exactly the ``act_params`` the
    activation takes."""
    act: Activation = props.enum("activation")
    if act is not Activation.NONE:
        require_float(out, f"a result with a fused {act.value}")
    names = ACTIVATION_PARAMS.get(act, ())
    got = props.floats("act_params")
    if len(got) != len(names):
        want = f"[{', '.join(names)}]" if names else "none"
        raise VerifyException(f"activation {act.value} takes act_params {want}, got {list(got)}")
    return act


def require_rank(t: TensorType, rank: int, what: str) -> None:
    if t.rank != rank:
        raise VerifyException(f"{what} must have rank {rank}, got {fmt_shape(t.shape)}")


def require_min_rank(t: TensorType, rank: int, what: str) -> None:
    if t.rank < rank:
        raise VerifyException(f"{what} must have rank >= {rank}, got {fmt_shape(t.shape)}")


_TRAIT_ANSWERS: dict[tuple[type[Operation], object], OpTrait | None] = {}
"""``ShapedOp.get_trait``'s answers by (op class, trait)."""


class OpClass(ABCMeta):
    """The metaclass of the RLX dialects' ops: ``isinstance`` and ``issubclass`` against
    an op class are those of plain classes. ABCMeta's run in Python whenever the test
    fails (virtual subclasses, ``__subclasshook__``), and passes test ops against op
    classes hundreds of thousands of times per compile; op classes have no virtual
    subclasses (``register`` refuses one)."""

    __instancecheck__ = type.__instancecheck__
    __subclasscheck__ = type.__subclasscheck__

    def register(cls, subclass: type[Any]) -> type[Any]:
        raise TypeError(f"{cls.__name__} is an op class: it takes no virtual subclasses")


class ShapedOp(IRDLOperation, metaclass=OpClass):
    """Base of every op whose result types follow from operand types and properties.

    Subclasses implement ``infer``. Ops whose result type is free (reshape, cast, leaves)
    set ``INFER_RESULTS = False`` and check it in ``check_result``.
    """

    INFER_RESULTS: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "ELEMENTWISE" in vars(cls):  # the flag of old: say so rather than ignore it
            raise TypeError(f"{cls.__name__}: ELEMENTWISE is the Elementwise() trait now")

    @classmethod
    def get_trait(cls, trait: type[OpTraitInvT] | OpTraitInvT) -> OpTraitInvT | None:
        """xDSL's lookup, answered once per class and query: an op class's traits never
        change, and passes ask (``is_leaf``, DCE's purity, CSE) for every op they visit,
        where xDSL scans the trait list with ``isinstance`` each time."""
        key = (cls, trait)
        try:
            return cast("OpTraitInvT | None", _TRAIT_ANSWERS[key])
        except KeyError:
            found = _TRAIT_ANSWERS[key] = super().get_trait(trait)
            return found
        except TypeError:  # an unhashable trait instance: look it up each time
            return super().get_trait(trait)

    @classmethod
    def has_trait(
        cls, trait: type[OpTrait] | OpTrait, *, value_if_unregistered: bool = True
    ) -> bool:
        return cls.get_trait(trait) is not None

    def walk(self, *, reverse: bool = False, region_first: bool = False) -> Iterator[Operation]:
        """xDSL's; for an op without regions, the op alone without a generator (a module's
        walk asks every op for its own)."""
        if not self.regions:
            return iter((self,))
        return super().walk(reverse=reverse, region_first=region_first)

    # -- cloning ------------------------------------------------------------------------
    def clone_without_regions(
        self,
        value_mapper: dict[SSAValue, SSAValue] | None = None,
        block_mapper: dict[Block, Block] | None = None,
        *,
        clone_name_hints: bool = True,
        clone_operands: bool = True,
    ) -> Self:
        """xDSL's, without its generic ``create`` (see ``construct.clone_shell``)."""
        if self._successors:
            return super().clone_without_regions(
                value_mapper,
                block_mapper,
                clone_name_hints=clone_name_hints,
                clone_operands=clone_operands,
            )
        if value_mapper is None:
            value_mapper = {}
        operands = [value_mapper.get(v, v) for v in self._operands] if clone_operands else ()
        new = clone_shell(self, value_mapper, clone_name_hints)
        if operands:
            link_operands(new, operands)
        return cast(Self, new)

    def clone(
        self,
        value_mapper: dict[SSAValue, SSAValue] | None = None,
        block_mapper: dict[Block, Block] | None = None,
        *,
        clone_name_hints: bool = True,
        clone_operands: bool = True,
    ) -> Self:
        """xDSL's, made faster (see ``construct.Cloner``)."""
        if not self.regions:  # nothing is cloned after the op: its operands map at once
            return self.clone_without_regions(
                value_mapper,
                block_mapper,
                clone_name_hints=clone_name_hints,
                clone_operands=clone_operands,
            )
        return clone_op(
            self,
            value_mapper,
            block_mapper,
            clone_name_hints=clone_name_hints,
            clone_operands=clone_operands,
        )

    def contiguous_view_offset(self) -> int | None:
        """For ops whose result is a contiguous reinterpretation of operand 0's bytes (a
        reshape, a same-type cast, a narrow of a leading axis...), the byte offset of the
        result inside the operand; None for ops that compute."""
        return None

    def contiguous_operand_offsets(self) -> list[int] | None:
        """For ops whose result is their operands' bytes laid end to end (a concat whose
        dims before the axis are all 1), the byte offset of each operand inside the
        result: a planner may have the operands produced in place there. None otherwise."""
        return None

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        """The operands whose elements ``[..., j]`` alone feed the result's ``[..., j]``
        (the last dim kept, or broadcast from 1): the op commutes with taking a slice of
        the last dim of those operands. An op that declares none is treated as reading
        its operands' last dims arbitrarily."""
        return ()

    if TYPE_CHECKING:
        # Each op's infer / check_result takes its own operands' types as keywords
        # (``infer(props, *, lhs, rhs)``): the base declares the protocol as a callable of
        # any keywords, so an op's own signature is what its callers are checked against.
        infer: ClassVar[Callable[..., tuple[TensorType, ...]]]
        """The result types of an op with these properties and operand types (by operand
        name); raises VerifyException when they are invalid."""
        check_result: Callable[..., None]
        """Extra checks for ops with free result types (called when INFER_RESULTS is
        False)."""
    else:

        @classmethod
        def infer(cls, props: Props, **operands: Any) -> tuple[TensorType, ...]:
            raise NotImplementedError(f"{cls.__name__} does not infer its result types")

        def check_result(self, props: Props, **operands: Any) -> None:
            pass

    # -- construction -------------------------------------------------------------------
    if TYPE_CHECKING:
        _build = build_op  # what an op's __init__ is checked against
    else:

        def _build(self, *args, **kwargs):
            build_op(self, *args, **kwargs)

    # -- verification -------------------------------------------------------------------
    def named_operand_types(self) -> dict[str, OperandTypes]:
        return named_operand_types(self)

    def props(self) -> Props:
        return Props(type(self), self.properties)

    def verify(self, verify_nested_ops: bool = True) -> None:
        """xDSL's ``Operation.verify``: the same checks, in the same order, with the same
        errors (``op_support.verify_op``)."""
        if self._successors:
            super().verify(verify_nested_ops)
        else:
            verify_op(self, verify_nested_ops)

    def verify_(self) -> None:
        check_result_types(self)


FAST_SHELLS.add(ShapedOp.clone_without_regions)
VERIFY_OP_EQUIVALENTS.add(ShapedOp.verify)
