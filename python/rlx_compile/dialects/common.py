"""Pieces shared by the hir, mir and lir dialects: enum attributes, property helpers and
``ShapedOp``, the base class whose verifier re-infers result types.

Every op with computable result types implements one classmethod,
``infer(props, **operand_types) -> tuple[TensorType, ...]``. The op's ``__init__`` calls it
to build the op and ``verify_`` calls it to check a parsed or rewritten op, so the shape
and dtype rules of an op live in exactly one place.
"""

from __future__ import annotations

import builtins
import struct
from abc import ABCMeta
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, Self, cast

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    UNKNOWN_LOC,
    BytesAttr,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    FloatData,
    IntAttr,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    f64,
    i32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Data,
    Dialect,
    ErasedSSAValue,
    Operation,
    OpResult,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    OptOperandDef,
    ResultDef,
    VarOperandDef,
    irdl_attr_definition,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, NoTerminator, OpTrait, OpTraitInvT
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from rlx_compile.dialects.construct import (
    FAST_SHELLS,
    clone_op,
    clone_shell,
    init_fields,
    link_operands,
    new_results,
)
from rlx_compile.dialects.dim_expr import Dim
from rlx_compile.dialects.signature import (
    SEGMENT_SIZES,
    operand_check,
    segment_sizes,
    segmented_operands,
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


_ARRAY_FORMATS = {id(i64): "q", id(f64): "d"}
_EMPTY = np.zeros(0)
_EMPTY.setflags(write=False)
"""The struct codes of the element types of integer- and float-list properties, by the
identity of xDSL's ``i64`` and ``f64`` (which built and parsed arrays use)."""


def array_values(attr: Attribute) -> tuple[Any, ...]:
    """``tuple(attr.get_values())`` of a ``DenseArrayBase``: for the i64 and f64 lists of
    properties, the one ``struct.unpack`` xDSL's makes after five calls."""
    if type(attr) is DenseArrayBase:
        code = _ARRAY_FORMATS.get(id(attr.elt_type))
        data = attr.data.data
        if code is not None and not len(data) & 7:
            return struct.unpack(f"<{len(data) >> 3}{code}", data)
    return tuple(cast(DenseArrayBase[Any], attr).get_values())


def array_numpy(attr: Attribute) -> np.ndarray:
    """An i64 or f64 list property as a read-only NumPy array over its bytes (no copy):
    what the classic-ML ops' tables are checked and run with."""
    assert type(attr) is DenseArrayBase
    code = _ARRAY_FORMATS.get(id(attr.elt_type))
    if code is None:
        return np.asarray(attr.get_values())
    return np.frombuffer(attr.data.data, "<i8" if code == "q" else "<f8")


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


_DEFAULTS: dict[type[IRDLOperation], dict[str, Attribute | None]] = {}


def _defaults_of(op_type: type[IRDLOperation]) -> dict[str, Attribute | None]:
    defaults = _DEFAULTS.get(op_type)
    if defaults is None:
        defaults = _DEFAULTS[op_type] = {
            name: pdef.default_value
            for name, pdef in op_type.get_irdl_definition().properties.items()
        }
    return defaults


class Props:
    """Typed read access to an op's properties, falling back to the declared defaults."""

    __slots__ = ("_defaults", "_props")

    def __init__(self, op_type: type[IRDLOperation], props: Mapping[builtins.str, Attribute]):
        self._props = props
        defaults = _DEFAULTS.get(op_type)
        self._defaults = defaults if defaults is not None else _defaults_of(op_type)

    def get(self, name: builtins.str) -> Attribute | None:
        attr = self._props.get(name)
        return attr if attr is not None else self._defaults.get(name)

    def int(self, name: builtins.str) -> builtins.int:
        return cast(IntegerAttr, self._require(name)).value.data

    def dim(self, name: builtins.str) -> Dim:
        """A dim-valued property (an i64 integer, or a ``#rlx.dim`` expression)."""
        attr = self._require(name)
        if isinstance(attr, DimAttr):
            return attr.data
        return cast(IntegerAttr, attr).value.data

    def opt_int(self, name: builtins.str) -> builtins.int | None:
        attr = self.get(name)
        return None if attr is None else cast(IntegerAttr, attr).value.data

    def ints(self, name: builtins.str) -> tuple[builtins.int, ...]:
        return array_values(self._require(name))

    def array(self, name: builtins.str) -> np.ndarray:
        """A list property as a read-only NumPy array; an absent one is empty."""
        attr = self.get(name)
        return _EMPTY if attr is None else array_numpy(attr)

    def opt_ints(self, name: builtins.str) -> tuple[builtins.int, ...] | None:
        attr = self.get(name)
        return None if attr is None else array_values(attr)

    def float(self, name: builtins.str) -> builtins.float:
        return cast(FloatAttr, self._require(name)).value.data

    def floats(self, name: builtins.str) -> tuple[builtins.float, ...]:
        attr = self.get(name)
        return () if attr is None else array_values(attr)

    def opt_float(self, name: builtins.str) -> builtins.float | None:
        attr = self.get(name)
        return None if attr is None else cast(FloatAttr, attr).value.data

    def flag(self, name: builtins.str) -> bool:
        return self.get(name) is not None

    def str(self, name: builtins.str) -> builtins.str:
        return cast(StringAttr, self._require(name)).data

    def enum(self, name: builtins.str) -> Any:
        return cast(EnumAttribute[Any], self._require(name)).data

    def _require(self, name: builtins.str) -> Attribute:
        attr = self.get(name)
        if attr is None:
            raise VerifyException(f"missing property '{name}'")
        return attr


# ---------------------------------------------------------------------------------
# Type-check helpers used inside infer()
# ---------------------------------------------------------------------------------


def as_tensor(t: Attribute, what: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what} must be an !rlx.tensor, got {t}")
    return t


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


OperandTypes = TensorType | list[TensorType] | None


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
    def _build(
        self,
        operands: Mapping[str, SSAValue | Operation | Sequence[SSAValue] | None],
        props: Mapping[str, Attribute | None] | None = None,
        result_types: Sequence[Attribute | Sequence[Attribute]] | None = None,
        attributes: Mapping[str, Attribute | None] | None = None,
        regions: Sequence[Any] | None = None,
    ) -> None:
        cls = type(self)
        clean_props = {k: v for k, v in props.items() if v is not None} if props else {}
        names = None if regions else _plain_names(cls)
        values = _plain_values(operands, names) if names is not None else None
        if names is not None and values is not None:
            # An op of single operands and results, each operand one value: no grouping
            # to do, and Operation's generic setters have nothing to compute.
            operand_types = [v._type for v in values]
            inferred = result_types is None
            if result_types is None:
                kwargs = dict(zip(names, operand_types, strict=True))
                result_types = cls.infer(Props(cls, clean_props), **kwargs)
            results: list[Attribute] = list(result_types)  # type: ignore[arg-type]
            attrs = {k: v for k, v in attributes.items() if v is not None} if attributes else {}
            given = len(clean_props)
            link_operands(self, values)
            init_fields(self, new_results(self, results), clean_props, attrs, UNKNOWN_LOC)
            if inferred and len(clean_props) == given:  # no default property filled in
                self.__dict__[_INFERRED_FROM] = (
                    tuple(operand_types),
                    tuple(clean_props.items()),
                    tuple(results),
                )
            return
        op_def = cls.get_irdl_definition()
        ordered: list[Any] = []
        for name, odef in op_def.operands:
            if name not in operands:
                if isinstance(odef, VarOperandDef):
                    ordered.append([])
                    continue
                raise ValueError(f"{self.name}: missing operand '{name}'")
            value = operands[name]
            if isinstance(odef, OptOperandDef):
                ordered.append([] if value is None else [value])
            else:
                ordered.append(value)
        unknown = set(operands) - {name for name, _ in op_def.operands}
        if unknown:
            raise ValueError(f"{self.name}: unknown operands {sorted(unknown)}")
        inferred = result_types is None
        if result_types is None:
            types = {name: _types_of(v) for name, v in operands.items()}
            result_types = type(self).infer(Props(type(self), clean_props), **types)
        self._init(ordered, result_types, clean_props, attributes, regions)
        if inferred and self.properties == clean_props:
            self.__dict__[_INFERRED_FROM] = self._inference_inputs()

    def _init(
        self,
        ordered: list[Any],
        result_types: Sequence[Attribute | Sequence[Attribute]],
        clean_props: dict[str, Attribute],
        attributes: Mapping[str, Attribute | None] | None,
        regions: Sequence[Any] | None,
    ) -> None:
        props = dict(clean_props)
        values = None if regions else _fast_operands(type(self), ordered)
        if values is None and not regions and _segmented_single_results(type(self)):
            # single and optional operands: laid out flat, their sizes the property
            # irdl_op_init appends (one shared attribute per layout)
            sizes = tuple(len(v) if isinstance(v, list | tuple) else 1 for v in ordered)
            if max(sizes, default=0) <= 1:
                values = [as_value(v[0] if isinstance(v, list | tuple) else v)
                          for v, n in zip(ordered, sizes, strict=True) if n]  # fmt: skip
                props[SEGMENT_SIZES] = _segment_sizes_attr(sizes)
        if values is not None:
            # What irdl_op_init builds for such an op, minus its generic bookkeeping
            # (segment sizes, variadic groups): half the cost of an op.
            link_operands(self, values)
            attrs = {k: v for k, v in (attributes or {}).items() if v is not None}
            # single results: each entry is one type, never a variadic group
            results = new_results(self, cast(list[Attribute], list(result_types)))
            init_fields(self, results, props, attrs, UNKNOWN_LOC)
            return
        IRDLOperation.__init__(
            self,
            operands=ordered,
            result_types=list(result_types),
            properties=clean_props,
            attributes=dict(attributes or {}),
            regions=list(regions or []),
        )

    # -- verification -------------------------------------------------------------------
    def named_operand_types(self) -> dict[str, OperandTypes]:
        names = single_operand_names(type(self))
        operands = self._operands
        if names is not None and len(names) == len(operands):
            types = {n: v._type for n, v in zip(names, operands, strict=True)}
            return cast(dict[str, OperandTypes], types)  # checked by the signature
        layout = _operand_layout(type(self))
        if layout is not None:
            before, group, optional, after = layout
            n = len(operands)
            laid: dict[str, Any] = {k: v._type for k, v in zip(before, operands, strict=False)}
            grouped = operands[len(before) : n - len(after)]
            if optional:
                laid[group] = grouped[0]._type if len(grouped) == 1 else None
            else:
                laid[group] = [v._type for v in grouped]
            for name, v in zip(after, operands[n - len(after) :], strict=True):
                laid[name] = v._type
            return laid
        segmented = _segmented_operand_names(type(self))
        sizes = None if segmented is None else segment_sizes(self.properties.get(SEGMENT_SIZES))
        if (
            segmented is not None
            and sizes is not None
            and max(sizes, default=0) <= 1
            and sum(sizes) == len(operands)
        ):
            # single and optional operands laid out by their segment sizes (0 or 1
            # each; other sizes go the generic way, which the signature check refuses)
            at = 0
            named: dict[str, Any] = {}
            for name, size in zip(segmented, sizes, strict=True):
                named[name] = operands[at]._type if size else None
                at += size
            return named
        out: dict[str, OperandTypes] = {}
        for name, odef in type(self).get_irdl_definition().operands:
            value = getattr(self, name)
            if isinstance(odef, OptOperandDef):
                out[name] = None if value is None else value._type
            elif isinstance(odef, VarOperandDef):
                out[name] = [v._type for v in value]
            else:
                out[name] = value._type
        return out

    def props(self) -> Props:
        return Props(type(self), self.properties)

    def verify(self, verify_nested_ops: bool = True) -> None:
        """xDSL's ``Operation.verify``: the same checks, in the same order, with the same
        errors, reading the op's fields directly (an op without successors)."""
        if self._successors:
            super().verify(verify_nested_ops)
            return
        for operand in self._operands:
            kind = type(operand)
            if (
                kind is not OpResult
                and kind is not BlockArgument
                and isinstance(operand, ErasedSSAValue)
            ):
                raise ValueError("Erased SSA value is used by the operation")
        block = self.parent
        region = None if block is None else block.parent
        if region is not None and cast(Block, block)._last_op is self:
            first = region._first_block
            if first is region._last_block:  # a single-block region
                owner = region.parent
                if (
                    owner is not None
                    and not owner.has_trait(NoTerminator)
                    and not self.has_trait(IsTerminator)
                ):
                    raise VerifyException(
                        f"Operation {self.name} terminates block in "
                        "single-block region but is not a terminator"
                    )
            elif not self.has_trait(IsTerminator):
                raise VerifyException(
                    f"Operation {self.name} terminates block in multi-block "
                    "region but is not a terminator"
                )
        if verify_nested_ops:
            for nested in self.regions:
                nested.verify()
        try:
            self.verify_()
        except VerifyException as err:
            self.emit_error(f"Operation does not verify: {err}", err)

    def verify_(self) -> None:
        cls = type(self)
        operand_types = None
        if not _tensor_operands(cls):
            operand_types = self.named_operand_types()
            for name, t in operand_types.items():
                if t is None or type(t) is TensorType:
                    continue
                if isinstance(t, list):
                    for i, ti in enumerate(t):
                        if type(ti) is not TensorType:
                            as_tensor(ti, f"operand '{name}' #{i}")
                else:
                    as_tensor(t, f"operand '{name}'")
        if not cls.INFER_RESULTS:
            self.check_result(self.props(), **(operand_types or self.named_operand_types()))
            return
        if _TRUST_INFERRED.get():
            record = self.__dict__.get(_INFERRED_FROM)
            if record is not None and record == self._inference_inputs():
                return  # the result types were inferred from these very operand types and props
        expected = cls.infer(self.props(), **(operand_types or self.named_operand_types()))
        results = self.results
        if len(expected) != len(results):
            raise VerifyException(f"expected {len(expected)} results, got {len(results)}")
        for i, (e, r) in enumerate(zip(expected, results, strict=True)):
            a = r._type
            if e is not a and e != a:  # interned types: equal ones are one object
                which = "result type" if len(results) == 1 else f"result #{i} type"
                raise VerifyException(f"{which} {a} does not match the inferred type {e}")

    def _inference_inputs(self) -> tuple[object, ...]:
        """What ``infer`` reads, with the result types it gave: compared by value."""
        return (
            tuple(map(_type_of, self._operands)),
            tuple(self.properties.items()),
            tuple(map(_type_of, self.results)),
        )


_type_of = attrgetter("_type")

_TENSOR_OPERANDS: dict[type[Operation], bool] = {}


def _tensor_operands(op_type: type[ShapedOp]) -> bool:
    """Whether the op's definition makes every operand an ``!rlx.tensor``: its IRDL
    check then refuses any other operand before ``verify_`` runs, so ``verify_`` need
    not look (``as_tensor`` would find nothing)."""
    known = _TENSOR_OPERANDS.get(op_type)
    if known is None:
        checks = [operand_check(d) for _, d in op_type.get_irdl_definition().operands]
        known = _TENSOR_OPERANDS[op_type] = all(
            c is not None and issubclass(c[0], TensorType) for c in checks
        )
    return known


FAST_SHELLS.add(ShapedOp.clone_without_regions)

_INFERRED_FROM = "_rlx_inferred_from"
"""Where an op built with inferred result types keeps ``_inference_inputs()`` as they
were then (on the op: a clone starts without it)."""

_TRUST_INFERRED: ContextVar[bool] = ContextVar("rlx_trust_inferred", default=False)


def share_inference_records(source: Operation, copy: Operation) -> None:
    """Give ``copy``, a clone of ``source`` (its operands possibly mapped to values of
    the same types), and the ops in its body the records of what their originals' result
    types were inferred from: a clone's operand types, properties and result types are
    equal to its original's, so what held of them holds of the copy."""
    pairs = zip(source.walk(), copy.walk(), strict=True) if source.regions else ((source, copy),)
    for a, b in pairs:
        record = a.__dict__.get(_INFERRED_FROM)
        if record is not None:
            b.__dict__[_INFERRED_FROM] = record


@contextmanager
def trusting_build_inference() -> Iterator[None]:
    """Within the block, an op whose operand types, properties and result types are
    those its result types were inferred from at construction is not inferred again
    (``infer`` is a function of them). For the incremental verify: what no comparison by
    value shows (an attribute's payload changed in place) is left to the full verify."""
    token = _TRUST_INFERRED.set(True)
    try:
        yield
    finally:
        _TRUST_INFERRED.reset(token)


_PLAIN: dict[type[IRDLOperation], bool] = {}


def _plain(op_type: type[IRDLOperation]) -> bool:
    """Whether the op has only single operands and results, no regions, successors or
    definition options (what IRDL's builder has nothing to compute for)."""
    plain = _PLAIN.get(op_type)
    if plain is None:
        plain = _PLAIN[op_type] = single_operand_names(
            op_type
        ) is not None and _single_results_only(op_type)
    return plain


def _single_results_only(op_type: type[IRDLOperation]) -> bool:
    """Single results, and no regions, successors or definition options."""
    d = op_type.get_irdl_definition()
    return (
        all(type(r) is ResultDef for _, r in d.results)
        and not d.regions
        and not d.successors
        and not d.options
    )


def _fast_operands(op_type: type[IRDLOperation], ordered: list[Any]) -> list[SSAValue] | None:
    """The operands of a plain op (``_plain``), or of one whose single optional or
    variadic group (``_grouped_plain``) is given as a list, in the order irdl_op_init
    lays them (no segment sizes without definition options); else None."""
    if _plain(op_type):
        return [as_value(v) for v in ordered]
    at = _grouped_plain(op_type)
    if at is None or not isinstance(ordered[at], list | tuple):
        return None
    return [as_value(v) for v in (*ordered[:at], *ordered[at], *ordered[at + 1 :])]


_GROUPED_PLAIN: dict[type[IRDLOperation], int | None] = {}


def _grouped_plain(op_type: type[IRDLOperation]) -> int | None:
    """For an op like a plain one (``_plain``) but for one optional or variadic operand
    (``_operand_layout``), that operand's position; else None."""
    try:
        return _GROUPED_PLAIN[op_type]
    except KeyError:
        layout = _operand_layout(op_type)
        at = len(layout[0]) if layout is not None and _single_results_only(op_type) else None
        _GROUPED_PLAIN[op_type] = at
        return at


_PLAIN_NAMES: dict[type[IRDLOperation], tuple[str, ...] | None] = {}


def _plain_names(op_type: type[IRDLOperation]) -> tuple[str, ...] | None:
    """The operand names of a plain op (``_plain``), else None."""
    try:
        return _PLAIN_NAMES[op_type]
    except KeyError:
        names = _PLAIN_NAMES[op_type] = single_operand_names(op_type) if _plain(op_type) else None
        return names


def _plain_values(
    operands: Mapping[str, SSAValue | Operation | Sequence[SSAValue] | None],
    names: tuple[str, ...],
) -> list[SSAValue] | None:
    """The operands in definition order, when they are exactly ``names`` and each is one
    value (an ``SSAValue``, or an op of one result); else None (the generic path then
    builds the op, or says what is wrong)."""
    if len(operands) != len(names):
        return None
    out: list[Any] = [operands.get(name) for name in names]
    for i, v in enumerate(out):
        kind = type(v)
        if kind is not OpResult and kind is not BlockArgument:
            if not isinstance(v, SSAValue | Operation):
                return None
            out[i] = as_value(v)
    return out


OperandLayout = tuple[tuple[str, ...], str, bool, tuple[str, ...]]
"""The operand names before an op's one optional or variadic operand, its name, whether
it is optional, and the names after it."""

_OPERAND_LAYOUTS: dict[type[IRDLOperation], OperandLayout | None] = {}


def _operand_layout(op_type: type[IRDLOperation]) -> OperandLayout | None:
    """The layout of an op whose operands are single ones around one optional or
    variadic group (IRDL's accessors then slice its operands so), else None. For an op
    whose operand counts its signature check accepted."""
    if op_type in _OPERAND_LAYOUTS:
        return _OPERAND_LAYOUTS[op_type]
    op_def = op_type.get_irdl_definition()
    defs = op_def.operands
    grouped = [i for i, (_, d) in enumerate(defs) if isinstance(d, OptOperandDef | VarOperandDef)]
    layout = None
    if len(grouped) == 1 and not op_def.options:
        at = grouped[0]
        names = [name for name, _ in defs]
        optional = isinstance(defs[at][1], OptOperandDef)
        layout = (tuple(names[:at]), names[at], optional, tuple(names[at + 1 :]))
    _OPERAND_LAYOUTS[op_type] = layout
    return layout


_SINGLE_OPERANDS: dict[type[IRDLOperation], tuple[str, ...] | None] = {}


_SEGMENTED_SINGLE_RESULTS: dict[type[IRDLOperation], bool] = {}


def _segmented_single_results(op_type: type[IRDLOperation]) -> bool:
    """An op of segmented single and optional operands (``_segmented_operand_names``)
    with single results and no regions or successors."""
    known = _SEGMENTED_SINGLE_RESULTS.get(op_type)
    if known is None:
        d = op_type.get_irdl_definition()
        known = _SEGMENTED_SINGLE_RESULTS[op_type] = (
            _segmented_operand_names(op_type) is not None
            and all(type(r) is ResultDef for _, r in d.results)
            and not d.regions
            and not d.successors
        )
    return known


_SEGMENT_ATTRS: dict[tuple[int, ...], DenseArrayBase] = {}


def _segment_sizes_attr(sizes: tuple[int, ...]) -> DenseArrayBase:
    attr = _SEGMENT_ATTRS.get(sizes)
    if attr is None:
        attr = _SEGMENT_ATTRS[sizes] = DenseArrayBase.from_list(i32, sizes)
    return attr


_SEGMENTED: dict[type[IRDLOperation], tuple[str, ...] | None] = {}


def _segmented_operand_names(op_type: type[IRDLOperation]) -> tuple[str, ...] | None:
    """The operand names of an op of single and optional operands with their segment
    sizes as a property (``signature.segmented_operands``), else None."""
    try:
        return _SEGMENTED[op_type]
    except KeyError:
        op_def = op_type.get_irdl_definition()
        names = (
            tuple(n for n, _ in op_def.operands) if segmented_operands(op_def) is not None else None
        )
        _SEGMENTED[op_type] = names
        return names


def single_operand_names(op_type: type[IRDLOperation]) -> tuple[str, ...] | None:
    """The operand names of an op with neither optional nor variadic operands (its
    operands by position), else None."""
    if op_type not in _SINGLE_OPERANDS:
        defs = op_type.get_irdl_definition().operands
        single = all(not isinstance(d, OptOperandDef | VarOperandDef) for _, d in defs)
        _SINGLE_OPERANDS[op_type] = tuple(n for n, _ in defs) if single else None
    return _SINGLE_OPERANDS[op_type]


def as_value(v: SSAValue | Operation) -> SSAValue:
    """``SSAValue.get``: a value as it is, or the one result of an op. A result or block
    argument returns at once: xDSL's version matches on abstract generic classes and
    builds a generic alias per call, a fifth of the cost of building a small op."""
    kind = type(v)
    if kind is OpResult or kind is BlockArgument:
        return cast(SSAValue, v)
    return SSAValue.get(v)


def _types_of(v: Any) -> OperandTypes:
    if v is None:
        return None
    if isinstance(v, SSAValue | Operation):
        return cast(TensorType, as_value(v).type)
    return [cast(TensorType, as_value(x).type) for x in v]
