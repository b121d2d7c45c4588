"""The ``mir`` dialect: RLX's primitive tensor vocabulary plus the fused ops and elementwise
regions fusion emits, and run-time control flow.

A MIR graph is a ``func.func`` whose body holds ``mir.input`` / ``mir.param`` /
``mir.constant`` leaves and compute ops in topological order, returning its outputs with
``func.return``; control-flow ops (``mir.if``, ``mir.loop``) hold regions of compute ops
that read the graph's values directly. Every compute op verifies its operand and result
types by re-inferring them (see ``ShapedOp``); the numeric meaning of every op is defined
by the reference executor in ``rlx_compile.interpreter``.

Conventions shared by all ops:
- axis properties are normalised (``0 <= axis < rank``); builders wrap negative axes;
- elementwise ops broadcast like NumPy and require one element type across operands;
- spatial ops (conv, pooling) use NCHW layouts with N-d spatial dims; ``pads`` lists the
  begin pads of every spatial dim, then the end pads (ONNX order).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    irdl_to_attr_constraint,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    Commutative,
    ConstantLike,
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from rlx_compile import env
from rlx_compile.dialects.common import (
    ACTIVATION_PARAMS,
    Activation,
    ActivationAttr,
    ComparePredicate,
    ComparePredicateAttr,
    F64Array,
    F64Attr,
    GeluApproximation,
    GeluApproximationAttr,
    I64Array,
    I64Attr,
    MaskKind,
    MaskKindAttr,
    NormKind,
    NormKindAttr,
    PadMode,
    PadModeAttr,
    PostTransform,
    PostTransformAttr,
    RawDataAttr,
    RecurrentActivation,
    RecurrentDirection,
    RecurrentDirectionAttr,
    ScatterReduction,
    ScatterReductionAttr,
    ShapedOp,
    SvmKernel,
    SvmKernelAttr,
    TreeAggregate,
    TreeAggregateAttr,
    activation_props,
    check_activation,
    enum_attr,
    flag_attr,
    float_attr,
    floats_attr,
    int_attr,
    ints_attr,
    require_dtype,
    require_float,
    require_int,
    require_min_rank,
    require_numeric,
    require_rank,
    require_same_dtype,
)
from rlx_compile.dialects.construct import fast_accessors
from rlx_compile.dialects.dim_expr import Dim, DimExpr, interval
from rlx_compile.dialects.op_support import Props, as_value
from rlx_compile.dialects.traits import (
    Elementwise,
    Fused,
    InPlace,
    Leaf,
    Precision,
    PrecisionClass,
    ViewLike,
)
from rlx_compile.dialects.types import (
    DimAttr,
    DType,
    TensorType,
    broadcast_dims,
    broadcast_shapes,
    check_axis,
    element_count,
    fmt_shape,
    is_static_shape,
    may_equal,
    may_expand_to,
    may_reshape,
    parse_ir_dim,
    row_major_strides,
    window_out_size,
)

if TYPE_CHECKING:
    from rlx_compile.builder import GraphBuilder

AnyTensor = base(TensorType)


def _same_last_dim(src: SSAValue, out: SSAValue) -> tuple[int, ...]:
    """(0,) when a view keeps the last dim (so it maps [..., j] to [..., j])."""
    a, b = cast(TensorType, src.type), cast(TensorType, out.type)
    return (0,) if a.rank and b.rank and a.shape[-1] == b.shape[-1] else ()


def _check_ints_len(values: Sequence[int], n: int, what: str) -> None:
    if len(values) != n:
        raise VerifyException(f"{what} must have {n} entries, got {len(values)}")


def _check_sorted_axes(axes: Sequence[int], rank: int) -> None:
    for a in axes:
        check_axis(a, rank, "reduction axis")
    if list(axes) != sorted(set(axes)):
        raise VerifyException(f"axes {list(axes)} must be sorted and unique")


class SimplifyCanonicalization(HasCanonicalizationPatternsTrait):
    """``canonicalize`` applies the algebraic-simplify rewrites (IEEE-exact ones only)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from rlx_compile.transforms.algebraic_simplify import simplify_patterns

        return tuple(simplify_patterns(assume_finite=False))


# =====================================================================================
# Leaves
# =====================================================================================


@irdl_op_definition
class InputOp(ShapedOp):
    """A named graph input, fed at run time. Not removable: it is the graph's signature."""

    name = "mir.input"
    tensor_name = prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Precision(PrecisionClass.BOUNDARY), Leaf())
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "$tensor_name attr-dict `:` type($result)"

    def __init__(self, tensor_name: str, type: TensorType):
        self._build({}, {"tensor_name": StringAttr(tensor_name)}, [type])


@irdl_op_definition
class ParamOp(ShapedOp):
    """A named parameter (weight), bound at run time or baked in by param-specialize."""

    name = "mir.param"
    tensor_name = prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.BOUNDARY), Leaf(weight=True))
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "$tensor_name attr-dict `:` type($result)"

    def __init__(self, tensor_name: str, type: TensorType):
        self._build({}, {"tensor_name": StringAttr(tensor_name)}, [type])


_LIST_FORM_MAX = 16


def _format_scalar(x: Any, dtype: DType) -> str:
    if dtype is DType.BOOL:
        return "true" if bool(x) else "false"
    if dtype.is_int:
        return str(int(x))
    text = str(dtype.numpy.type(x))  # NumPy's shortest round-trip spelling for the dtype
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa and "n" not in mantissa:  # the lexer reads "1e-40" as an int
        mantissa += ".0"
    return mantissa + e + exponent


@irdl_op_definition
class ConstantOp(ShapedOp):
    """A literal tensor; ``value`` holds the raw little-endian bytes of the result type.

    Text: ``dense<1.5>`` (splat), ``dense<[1.0, 2.0]>`` (at most 16 elements, flat in
    row-major order) or ``dense<"0x...">`` (raw bytes, used for larger or non-finite data).
    """

    name = "mir.constant"
    value = prop_def(RawDataAttr)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), ConstantLike(), Precision(PrecisionClass.BOUNDARY), Leaf(weight=True)
    )
    INFER_RESULTS: ClassVar[bool] = False

    def __init__(self, array: np.ndarray | float | int | bool, type: TensorType | None = None):
        if type is None:
            arr = np.asarray(array)
            type = TensorType(arr.shape, DType.from_numpy(arr.dtype))
        else:
            arr = np.asarray(array, dtype=type.dtype.numpy)
            if not type.is_static:
                raise ValueError(f"a constant needs a static type, got {type}")
            shape = tuple(int(d) for d in type.shape)
            if arr.shape != shape:  # broadcast_to costs as much as the rest of the op
                if arr.size == math.prod(shape):
                    arr = arr.reshape(shape)
                else:
                    arr = np.broadcast_to(arr, shape)
        data = np.ascontiguousarray(arr, dtype=type.dtype.numpy.newbyteorder("<")).tobytes()
        self._build({}, {"value": RawDataAttr(data)}, [type])

    @property
    def tensor_type(self) -> TensorType:
        assert isinstance(self.result.type, TensorType)
        return self.result.type

    def to_numpy(self) -> np.ndarray:
        """The value as a read-only array (a view of the attribute's bytes), made once per
        value and type: passes read the same constants (scales, splats) over and over."""
        t = self.tensor_type
        value = self.value
        cached = self.__dict__.get("_array")
        if cached is not None and cached[0] is value and cached[1] is t:
            return cast(np.ndarray, cached[2])
        arr = np.frombuffer(value.data, dtype=t.dtype.numpy.newbyteorder("<"))
        arr = arr.astype(t.dtype.numpy, copy=False).reshape(tuple(int(d) for d in t.shape))
        if arr.flags.writeable:  # a byte-swapped copy: shared, so no reader may change it
            arr.flags.writeable = False
        self.__dict__["_array"] = (value, t, arr)
        return arr

    def check_result(self, props: Props, **operands: Any) -> None:
        t = self.tensor_type
        if not t.is_static:
            raise VerifyException(f"a constant needs a static type, got {t}")
        expected = (t.num_elements() or 0) * t.dtype.itemsize
        if len(self.value.data) != expected:
            raise VerifyException(
                f"constant holds {len(self.value.data)} bytes, its type {t} needs {expected}"
            )

    def print(self, printer: Printer) -> None:
        t = self.tensor_type
        arr = self.to_numpy().reshape(-1)
        exact_kind = t.dtype.is_int or t.dtype.is_bool
        finite = exact_kind or bool(np.isfinite(arr.astype(np.float64)).all())
        printer.print_string(" dense<")
        if finite and arr.size > 0 and bool((arr == arr[0]).all()):
            printer.print_string(_format_scalar(arr[0], t.dtype))
        elif finite and arr.size <= _LIST_FORM_MAX:
            printer.print_string("[" + ", ".join(_format_scalar(x, t.dtype) for x in arr) + "]")
        else:
            printer.print_string('"0x' + self.value.data.hex().upper() + '"')
        printer.print_string(">")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(t)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        start = parser.pos
        parser.parse_keyword("dense")
        with parser.in_angle_brackets():
            hex_text = parser.parse_optional_str_literal()
            values: list[Any] | None = None
            if hex_text is None:
                if parser.parse_optional_punctuation("[") is not None:
                    values = []
                    if parser.parse_optional_punctuation("]") is None:
                        values.append(_parse_scalar(parser))
                        while parser.parse_optional_punctuation(",") is not None:
                            values.append(_parse_scalar(parser))
                        parser.parse_punctuation("]")
                else:
                    values = [_parse_scalar(parser)]
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, TensorType) or not t.is_static:
            parser.raise_error(f"mir.constant needs a static !rlx.tensor type, got {t}", start)
        n = t.num_elements() or 0
        if hex_text is not None:
            if not hex_text.startswith("0x"):
                parser.raise_error("hex constant data must start with 0x", start)
            try:
                data = bytes.fromhex(hex_text[2:])
            except ValueError:
                parser.raise_error("malformed hex constant data", start)
            if len(data) != n * t.dtype.itemsize:
                parser.raise_error(
                    f"constant data has {len(data)} bytes, type {t} needs {n * t.dtype.itemsize}",
                    start,
                )
            op = cls.__new__(cls)
            op._build({}, {"value": RawDataAttr(data)}, [t], attributes=attributes)
            return op
        assert values is not None
        if len(values) not in (1, n):
            parser.raise_error(f"constant has {len(values)} values, type {t} holds {n}", start)
        if len(values) < n and n > env.max_constant_elements():  # a splat of the whole
            parser.raise_error(
                f"a splat constant of {n:,} elements is over the limit of "
                f"{env.max_constant_elements():,} (RLX_MAX_CONSTANT_ELEMENTS): write it as "
                "mir.expand of a scalar constant",
                start,
            )
        if not t.dtype.is_float and t.dtype.numpy.kind in "iu":
            info = np.iinfo(t.dtype.numpy)
            bad = next((v for v in values if not info.min <= int(v) <= info.max), None)
            if bad is not None:
                parser.raise_error(f"value {bad} is out of range for {t.dtype.value}", start)
        arr = np.array(values, dtype=np.float64 if t.dtype.is_float else object)
        op = cls(arr.astype(t.dtype.numpy) if len(values) == n else arr[0], t)
        op.attributes.update(attributes)
        return op


@irdl_custom_directive
class DimList(CustomDirective):
    """``[seq, seq * 2 + 1, 4]``: a list of dims (ints or expressions) held as an
    ``ArrayAttr`` of ``IntAttr``/``#rlx.dim`` (the type's own dim syntax)."""

    dims: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        dims = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parse_ir_dim(parser)
        )
        self.dims.set(state, dims_attr(dims))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        attr = self.dims.get(op)
        assert isinstance(attr, ArrayAttr)
        printer.print_string("[" + ", ".join(str(d.data) for d in attr.data) + "]")


@irdl_custom_directive
class DimValue(CustomDirective):
    """One dim property printed bare: ``1`` (an i64 integer) or ``seq - 1``."""

    value: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.value.set(state, dim_prop(parse_ir_dim(parser)))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        attr = self.value.get(op)
        printer.print_string(str(attr.data if isinstance(attr, DimAttr) else attr.value.data))  # type: ignore[union-attr]


def dim_prop(d: Dim) -> IntegerAttr | DimAttr:
    """A dim-valued property: an i64 integer when static."""
    return cast(IntegerAttr, int_attr(d)) if isinstance(d, int) else DimAttr(d)


def dims_attr(dims: Sequence[Dim]) -> ArrayAttr[IntAttr | DimAttr]:
    return ArrayAttr(tuple(IntAttr(d) if isinstance(d, int) else DimAttr(d) for d in dims))


@irdl_op_definition
class DimsOp(ShapedOp):
    """Sizes as data: ``mir.dims [seq, seq * 2] : !rlx.tensor<[2], i64>`` is the i64
    vector of those dims' values under the run's bindings (a model that uses ``x.size(1)``
    as a number). Binding every symbol (``specialize-dims``) folds it to a constant."""

    name = "mir.dims"
    values = prop_def(ArrayAttr[IntAttr | DimAttr])
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.BOUNDARY))
    custom_directives = (DimList,)
    assembly_format = "custom<DimList>($values) attr-dict `:` type($result)"

    def __init__(self, values: Sequence[Dim]):
        self._build({}, {"values": dims_attr(values)})

    @property
    def dims(self) -> tuple[Dim, ...]:
        return tuple(d.data for d in self.values.data)

    @classmethod
    def infer(cls, props: Props) -> tuple[TensorType, ...]:
        values = props.get("values")
        assert isinstance(values, ArrayAttr)
        return (TensorType([len(values.data)], DType.I64),)


def _parse_scalar(parser: Parser) -> float | int | bool:
    if parser.parse_optional_keyword("true") is not None:
        return True
    if parser.parse_optional_keyword("false") is not None:
        return False
    value = parser.parse_optional_number()
    if value is None:
        parser.raise_error("expected a number, true or false")
    return value


# =====================================================================================
# Elementwise
# =====================================================================================


class UnaryOp(ShapedOp):
    """One operand, result of the same type."""

    T: ClassVar = VarConstraint("T", AnyTensor)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure(), Precision(PrecisionClass.ELEMENTWISE), Elementwise())
    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, input: SSAValue):
        self._build({"input": input})

    @classmethod
    def check_input(cls, t: TensorType) -> None:
        require_numeric(t, "operand")

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        cls.check_input(input)
        return (input,)

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        return (0,)


class FloatUnaryOp(UnaryOp):
    @classmethod
    def check_input(cls, t: TensorType) -> None:
        require_float(t, "operand")


@irdl_op_definition
class NegOp(UnaryOp):
    """-x."""

    name = "mir.neg"
    traits = traits_def(Pure(), SimplifyCanonicalization())


@irdl_op_definition
class AbsOp(UnaryOp):
    """|x|."""

    name = "mir.abs"


@irdl_op_definition
class ReluOp(UnaryOp):
    """max(x, 0)."""

    name = "mir.relu"


@irdl_op_definition
class SignOp(UnaryOp):
    """-1, 0 or 1 by the sign of x (0 for ±0; NaN stays NaN)."""

    name = "mir.sign"


@irdl_op_definition
class NotOp(UnaryOp):
    """Logical not of a bool tensor."""

    name = "mir.not"

    @classmethod
    def check_input(cls, t: TensorType) -> None:
        require_dtype(t, DType.BOOL, "operand")


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """eˣ."""

    name = "mir.exp"


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """Natural logarithm."""

    name = "mir.log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """√x."""

    name = "mir.sqrt"


@irdl_op_definition
class RsqrtOp(FloatUnaryOp):
    """1/√x."""

    name = "mir.rsqrt"


@irdl_op_definition
class ReciprocalOp(FloatUnaryOp):
    """1/x."""

    name = "mir.reciprocal"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """Hyperbolic tangent."""

    name = "mir.tanh"


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """1 / (1 + e⁻ˣ)."""

    name = "mir.sigmoid"


@irdl_op_definition
class SiluOp(FloatUnaryOp):
    """x * sigmoid(x)."""

    name = "mir.silu"


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """The error function."""

    name = "mir.erf"


@irdl_op_definition
class SinOp(FloatUnaryOp):
    """Sine."""

    name = "mir.sin"


@irdl_op_definition
class CosOp(FloatUnaryOp):
    """Cosine."""

    name = "mir.cos"


@irdl_op_definition
class FloorOp(FloatUnaryOp):
    """Largest integer ≤ x."""

    name = "mir.floor"


@irdl_op_definition
class CeilOp(FloatUnaryOp):
    """Smallest integer ≥ x."""

    name = "mir.ceil"


@irdl_op_definition
class RoundOp(FloatUnaryOp):
    """Round half to even."""

    name = "mir.round"


@irdl_op_definition
class SoftplusOp(FloatUnaryOp):
    """log(1 + exp(x)), computed without overflow."""

    name = "mir.softplus"


@irdl_op_definition
class TanOp(FloatUnaryOp):
    """Tangent."""

    name = "mir.tan"


@irdl_op_definition
class AsinOp(FloatUnaryOp):
    """Inverse sine, in [-π/2, π/2]; NaN outside [-1, 1]."""

    name = "mir.asin"


@irdl_op_definition
class AcosOp(FloatUnaryOp):
    """Inverse cosine, in [0, π]; NaN outside [-1, 1]."""

    name = "mir.acos"


@irdl_op_definition
class AtanOp(FloatUnaryOp):
    """Inverse tangent, in (-π/2, π/2)."""

    name = "mir.atan"


@irdl_op_definition
class SinhOp(FloatUnaryOp):
    """Hyperbolic sine, (eˣ - e⁻ˣ) / 2."""

    name = "mir.sinh"


@irdl_op_definition
class CoshOp(FloatUnaryOp):
    """Hyperbolic cosine, (eˣ + e⁻ˣ) / 2."""

    name = "mir.cosh"


@irdl_op_definition
class AsinhOp(FloatUnaryOp):
    """Inverse hyperbolic sine."""

    name = "mir.asinh"


@irdl_op_definition
class AcoshOp(FloatUnaryOp):
    """Inverse hyperbolic cosine; NaN below 1."""

    name = "mir.acosh"


@irdl_op_definition
class AtanhOp(FloatUnaryOp):
    """Inverse hyperbolic tangent; ±inf at ±1, NaN outside [-1, 1]."""

    name = "mir.atanh"


class IntUnaryOp(UnaryOp):
    @classmethod
    def check_input(cls, t: TensorType) -> None:
        require_int(t, "operand")


@irdl_op_definition
class BitwiseNotOp(IntUnaryOp):
    """Bitwise complement of an integer tensor (two's complement for signed types)."""

    name = "mir.bitwise_not"


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """0.5·x·(1 + erf(x/√2)).

    With ``approximate tanh``: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
    """

    name = "mir.gelu"
    approximate = prop_def(
        GeluApproximationAttr, default_value=GeluApproximationAttr(GeluApproximation.NONE)
    )
    assembly_format = "$input (`approximate` $approximate^)? attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, approximate: str = "none"):
        self._build({"input": input}, {"approximate": enum_attr(GeluApproximation, approximate)})


@irdl_op_definition
class ClipOp(FloatUnaryOp):
    """min(max(x, min), max), NaN propagating (ReLU6 is min 0, max 6)."""

    name = "mir.clip"
    min = prop_def(F64Attr)
    max = prop_def(F64Attr)
    assembly_format = "$input `min` $min `max` $max attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, min: float, max: float):
        self._build({"input": input}, {"min": float_attr(min), "max": float_attr(max)})


@irdl_op_definition
class HardSigmoidOp(FloatUnaryOp):
    """max(min(alpha·x + beta, 1), 0)."""

    name = "mir.hard_sigmoid"
    alpha = prop_def(F64Attr)
    beta = prop_def(F64Attr)
    assembly_format = "$input `alpha` $alpha `beta` $beta attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, alpha: float = 0.2, beta: float = 0.5):
        self._build({"input": input}, {"alpha": float_attr(alpha), "beta": float_attr(beta)})


@irdl_op_definition
class HardSwishOp(FloatUnaryOp):
    """x · max(min(x/6 + 1/2, 1), 0)."""

    name = "mir.hard_swish"


@irdl_op_definition
class LeakyReluOp(FloatUnaryOp):
    """x < 0 ? alpha·x : x."""

    name = "mir.leaky_relu"
    alpha = prop_def(F64Attr)
    assembly_format = "$input `alpha` $alpha attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, alpha: float = 0.01):
        self._build({"input": input}, {"alpha": float_attr(alpha)})


@irdl_op_definition
class EluOp(FloatUnaryOp):
    """scale · (x < 0 ? alpha·(eˣ - 1) : x): ONNX Elu (scale 1) and Selu (its alpha, and
    its gamma as the scale)."""

    name = "mir.elu"
    alpha = prop_def(F64Attr)
    scale = prop_def(F64Attr, default_value=float_attr(1.0))
    assembly_format = "$input `alpha` $alpha (`scale` $scale^)? attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, alpha: float = 1.0, scale: float = 1.0):
        self._build({"input": input}, {"alpha": float_attr(alpha), "scale": float_attr(scale)})


@irdl_op_definition
class SwishOp(FloatUnaryOp):
    """x · sigmoid(alpha·x), the product as written (NaN where it is: at -inf for a
    positive alpha, where ``mir.silu`` gives its limit). ONNX Swish; onnxruntime's
    QuickGelu (alpha 1.702: CLIP's quick_gelu). Alpha 1 is ``mir.silu``."""

    name = "mir.swish"
    alpha = prop_def(F64Attr)
    assembly_format = "$input `alpha` $alpha attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, alpha: float):
        self._build({"input": input}, {"alpha": float_attr(alpha)})


@irdl_op_definition
class ThresholdedReluOp(FloatUnaryOp):
    """x > alpha ? x : 0."""

    name = "mir.thresholded_relu"
    alpha = prop_def(F64Attr)
    assembly_format = "$input `alpha` $alpha attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, alpha: float = 1.0):
        self._build({"input": input}, {"alpha": float_attr(alpha)})


@irdl_op_definition
class SoftsignOp(FloatUnaryOp):
    """x / (1 + |x|)."""

    name = "mir.softsign"


class BinaryOp(ShapedOp):
    """Two operands of one element type, broadcast like NumPy."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.ELEMENTWISE), Elementwise())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        self._build({"lhs": lhs, "rhs": rhs})

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        return (0, 1)

    @classmethod
    def check_dtype(cls, dtype: DType, t: TensorType) -> None:
        require_numeric(t, "operands")

    @classmethod
    def result_dtype(cls, dtype: DType) -> DType:
        return dtype

    @classmethod
    def infer(cls, props: Props, *, lhs: TensorType, rhs: TensorType) -> tuple[TensorType, ...]:
        dtype = require_same_dtype([lhs, rhs], "operands")
        cls.check_dtype(dtype, lhs)
        # Equal shapes (most binary ops) broadcast to themselves: a type's shape is dims.
        shape = lhs.shape if lhs.shape == rhs.shape else broadcast_shapes(lhs.shape, rhs.shape)
        return (TensorType(shape, cls.result_dtype(dtype)),)


class LogicalBinaryOp(BinaryOp):
    @classmethod
    def check_dtype(cls, dtype: DType, t: TensorType) -> None:
        require_dtype(t, DType.BOOL, "operands")


@irdl_op_definition
class AddOp(BinaryOp):
    """lhs + rhs."""

    name = "mir.add"
    traits = traits_def(Pure(), Commutative(), SimplifyCanonicalization())


@irdl_op_definition
class SubOp(BinaryOp):
    """lhs - rhs."""

    name = "mir.sub"
    traits = traits_def(Pure(), SimplifyCanonicalization())


@irdl_op_definition
class MulOp(BinaryOp):
    """lhs · rhs."""

    name = "mir.mul"
    traits = traits_def(Pure(), Commutative(), SimplifyCanonicalization())


@irdl_op_definition
class DivOp(BinaryOp):
    """Division; integer division truncates toward zero."""

    name = "mir.div"
    traits = traits_def(Pure(), SimplifyCanonicalization())


@irdl_op_definition
class PowOp(BinaryOp):
    """lhs raised to rhs."""

    name = "mir.pow"


@irdl_op_definition
class MaxOp(BinaryOp):
    """Elementwise maximum; NaN propagates."""

    name = "mir.max"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class PReluOp(BinaryOp):
    """lhs < 0 ? lhs · rhs : lhs, the slope ``rhs`` broadcast like NumPy (ONNX PRelu):
    one kernel where its chain is a compare, a mul and a where."""

    name = "mir.prelu"

    @classmethod
    def check_dtype(cls, dtype: DType, t: TensorType) -> None:
        require_float(t, "operands")


@irdl_op_definition
class MinOp(BinaryOp):
    """Elementwise minimum; NaN propagates."""

    name = "mir.min"
    traits = traits_def(Pure(), Commutative())


class VariadicOp(ShapedOp):
    """Three or more operands of one element type, broadcast together like NumPy and
    folded left to right by the binary op ``BINARY`` (x0 ∘ x1) ∘ x2 ∘ ..., each step
    rounded to the element type: the chain of binary ops it stands for, as one kernel
    (ONNX's variadic Sum, Max and Min, which onnxruntime runs as one)."""

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.ELEMENTWISE), Elementwise())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result)"
    BINARY: ClassVar[type[BinaryOp]]
    MIN_OPERANDS: ClassVar[int] = 3
    """Two are the binary op itself."""
    MEAN: ClassVar[bool] = False
    """Divide the fold by the operand count (in the element type) as its last step."""

    def __init__(self, inputs: Sequence[SSAValue]):
        self._build({"inputs": list(inputs)})

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        return tuple(range(len(self.operands)))

    @classmethod
    def infer(cls, props: Props, *, inputs: Sequence[TensorType]) -> tuple[TensorType, ...]:
        if len(inputs) < cls.MIN_OPERANDS:
            raise VerifyException(
                f"expected at least {cls.MIN_OPERANDS} operands, got {len(inputs)}"
            )
        dtype = require_same_dtype(list(inputs), "operands")
        cls.BINARY.check_dtype(dtype, inputs[0])
        if cls.MEAN:
            require_float(inputs[0], "operands")
        return (TensorType(broadcast_shapes(*(t.shape for t in inputs)), dtype),)


@irdl_op_definition
class AddNOp(VariadicOp):
    """x0 + x1 + x2 + ..., left to right."""

    name = "mir.add_n"
    BINARY: ClassVar[type[BinaryOp]] = AddOp


@irdl_op_definition
class MeanNOp(VariadicOp):
    """(x0 + x1 + x2 + ...) / n, the sum left to right; floats."""

    name = "mir.mean_n"
    BINARY: ClassVar[type[BinaryOp]] = AddOp
    MEAN: ClassVar[bool] = True


@irdl_op_definition
class MaxNOp(VariadicOp):
    """The elementwise maximum of every operand, left to right; NaN propagates."""

    name = "mir.max_n"
    BINARY: ClassVar[type[BinaryOp]] = MaxOp


@irdl_op_definition
class MinNOp(VariadicOp):
    """The elementwise minimum of every operand, left to right; NaN propagates."""

    name = "mir.min_n"
    BINARY: ClassVar[type[BinaryOp]] = MinOp


@irdl_op_definition
class ModOp(BinaryOp):
    """Remainder with the sign of the divisor (Python/NumPy ``mod``)."""

    name = "mir.mod"


@irdl_op_definition
class AndOp(LogicalBinaryOp):
    """Logical and of bool tensors."""

    name = "mir.and"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class OrOp(LogicalBinaryOp):
    """Logical or of bool tensors."""

    name = "mir.or"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class XorOp(LogicalBinaryOp):
    """Logical exclusive or of bool tensors."""

    name = "mir.xor"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class FmodOp(BinaryOp):
    """Remainder with the sign of the dividend (C ``fmod``): lhs - trunc(lhs / rhs)·rhs,
    computed exactly."""

    name = "mir.fmod"


class IntBinaryOp(BinaryOp):
    @classmethod
    def check_dtype(cls, dtype: DType, t: TensorType) -> None:
        require_int(t, "operands")


@irdl_op_definition
class ShiftLeftOp(IntBinaryOp):
    """lhs shifted left by rhs bits (wrapping); 0 for a shift < 0 or >= the bit width."""

    name = "mir.shift_left"


@irdl_op_definition
class ShiftRightOp(IntBinaryOp):
    """lhs shifted right by rhs bits: arithmetic (sign-filling) for signed types, logical
    for unsigned; a shift < 0 or >= the bit width gives 0, or -1 for a negative signed lhs."""

    name = "mir.shift_right"


@irdl_op_definition
class BitwiseAndOp(IntBinaryOp):
    """Bitwise and of integer tensors."""

    name = "mir.bitwise_and"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class BitwiseOrOp(IntBinaryOp):
    """Bitwise or of integer tensors."""

    name = "mir.bitwise_or"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class BitwiseXorOp(IntBinaryOp):
    """Bitwise exclusive or of integer tensors."""

    name = "mir.bitwise_xor"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class CompareOp(ShapedOp):
    """Elementwise comparison with broadcasting; the result is bool."""

    name = "mir.compare"
    predicate = prop_def(ComparePredicateAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.ELEMENTWISE), Elementwise())
    assembly_format = (
        "$predicate `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, predicate: str, lhs: SSAValue, rhs: SSAValue):
        self._build({"lhs": lhs, "rhs": rhs}, {"predicate": enum_attr(ComparePredicate, predicate)})

    @classmethod
    def infer(cls, props: Props, *, lhs: TensorType, rhs: TensorType) -> tuple[TensorType, ...]:
        require_same_dtype([lhs, rhs], "operands")
        return (TensorType(broadcast_shapes(lhs.shape, rhs.shape), DType.BOOL),)


@irdl_op_definition
class WhereOp(ShapedOp):
    """``cond ? on_true : on_false`` elementwise, the three operands broadcast together."""

    name = "mir.where"
    condition = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.ELEMENTWISE), Elementwise())
    assembly_format = (
        "$condition `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, condition: SSAValue, on_true: SSAValue, on_false: SSAValue):
        self._build({"condition": condition, "on_true": on_true, "on_false": on_false})

    @classmethod
    def infer(
        cls, props: Props, *, condition: TensorType, on_true: TensorType, on_false: TensorType
    ) -> tuple[TensorType, ...]:
        require_dtype(condition, DType.BOOL, "condition")
        dtype = require_same_dtype([on_true, on_false], "branches")
        shape = broadcast_shapes(condition.shape, on_true.shape, on_false.shape)
        return (TensorType(shape, dtype),)


@irdl_op_definition
class CastOp(ShapedOp):
    """Element type conversion. Float to int truncates toward zero; to bool is ``!= 0``."""

    name = "mir.cast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), SimplifyCanonicalization(), Precision(PrecisionClass.CAST), Elementwise()
    )
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, dtype: DType | str):
        t = as_value(input).type
        assert isinstance(t, TensorType)
        self._build({"input": input}, {}, [t.with_dtype(dtype)])

    def check_result(self, props: Props, *, input: TensorType) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        if out.shape != input.shape:
            raise VerifyException(
                f"cast must keep the shape: {fmt_shape(input.shape)} -> {fmt_shape(out.shape)}"
            )

    def contiguous_view_offset(self) -> int | None:
        same = self.input.type == self.result.type
        return 0 if same else None

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        return (0,)


# =====================================================================================
# Linear algebra
# =====================================================================================


def matmul_shape(a: TensorType, b: TensorType) -> tuple[Any, ...]:
    """NumPy ``matmul`` shape rule: batch dims broadcast, rank-1 operands are promoted."""
    if a.rank == 0 or b.rank == 0:
        raise VerifyException("matmul operands must have rank >= 1")
    sa, sb = list(a.shape), list(b.shape)
    if len(sa) == 1:
        sa = [1, *sa]
    if len(sb) == 1:
        sb = [*sb, 1]
    if not may_equal(sa[-1], sb[-2]):  # symbolic ones that may agree: checked at run time
        raise VerifyException(
            f"contraction dims differ: {fmt_shape(a.shape)} x {fmt_shape(b.shape)}"
        )
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    out = [*batch, sa[-2], sb[-1]]
    if a.rank == 1:
        out.pop(-2)
    if b.rank == 1:
        out.pop(-1)
    return tuple(out)


@irdl_op_definition
class MatmulOp(ShapedOp):
    """Batched matrix product with NumPy ``matmul`` semantics (batch dims broadcast)."""

    name = "mir.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.COMPUTE))
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        self._build({"lhs": lhs, "rhs": rhs})

    @classmethod
    def infer(cls, props: Props, *, lhs: TensorType, rhs: TensorType) -> tuple[TensorType, ...]:
        dtype = require_same_dtype([lhs, rhs], "operands")
        require_numeric(lhs, "operands")
        return (TensorType(matmul_shape(lhs, rhs), dtype),)


# =====================================================================================
# Reductions and normalisations
# =====================================================================================


def reduced_shape(shape: Sequence[Any], axes: Sequence[int], keepdims: bool) -> tuple[Any, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


class ReduceOp(ShapedOp):
    """Reduce over ``axes`` (sorted, unique); ``keepdims`` keeps them as size-1 dims."""

    input = operand_def(TensorType)
    axes = prop_def(I64Array)
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = (
        "$input `axes` $axes (`keepdims` $keepdims^)? attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(self, input: SSAValue, axes: Sequence[int], keepdims: bool = False):
        self._build({"input": input}, {"axes": ints_attr(axes), "keepdims": flag_attr(keepdims)})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_numeric(input, "operand")
        axes = props.ints("axes")
        _check_sorted_axes(axes, input.rank)
        return (TensorType(reduced_shape(input.shape, axes, props.flag("keepdims")), input.dtype),)


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over ``axes``."""

    name = "mir.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean over ``axes``."""

    name = "mir.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over ``axes`` (NaN propagates)."""

    name = "mir.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over ``axes`` (NaN propagates)."""

    name = "mir.reduce_min"


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """Product over ``axes``."""

    name = "mir.reduce_prod"


@irdl_op_definition
class ReduceLogSumExpOp(ReduceOp):
    """log Σ exp(x) over ``axes``, shifted by the maximum so that large inputs do not
    overflow: with m = max(x) over ``axes`` (an infinite m replaced by 0, a NaN kept),
    log(Σ exp(x - m)) + m. Float only. It means exactly the chain ``decompose`` emits
    (reduce_max, abs, compare, where, sub, exp, reduce_sum, log, add, each over the kept
    dims, then a reshape without ``keepdims``): the executor computes it as that chain,
    bit for bit; all -inf gives -inf, a +inf gives +inf, a NaN gives NaN. ONNX's
    ReduceLogSumExp; ``legalize`` lowers it to the chain for targets that do not claim it.
    """

    name = "mir.reduce_log_sum_exp"

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_float(input, "operand")
        return super().infer(props, input=input)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        return [log_sum_exp_chain(b, self.input, p.ints("axes"), p.flag("keepdims"))]


def log_sum_exp_chain(
    b: GraphBuilder, x: SSAValue, axes: Sequence[int], keepdims: bool
) -> SSAValue:
    """log Σ exp(x) over ``axes`` as primitives (``mir.reduce_log_sum_exp``'s meaning):
    log(Σ exp(x - m)) + m, m the max over ``axes`` with an infinite max replaced by 0."""
    m = b.reduce("max", x, list(axes), keepdims=True)
    finite = b.where(b.compare("eq", b.abs(m), float("inf")), 0.0, m)
    total = b.log(b.sum(b.exp(b.sub(x, finite)), list(axes), keepdims=True))
    y = b.add(total, finite)
    shape = cast(TensorType, x.type).shape
    out = reduced_shape(shape, axes, keepdims)
    return y if out == cast(TensorType, y.type).shape else b.reshape(y, list(out))


class ReduceChainOp(ReduceOp):
    """A reduction ONNX names as one node that RLX's primitives spell as a short chain
    (``chain``, over the kept dims): the executor computes it as that chain, bit for bit;
    ``legalize`` lowers it to the chain for targets that do not claim it."""

    FLOATS_ONLY: ClassVar[bool] = False

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        if cls.FLOATS_ONLY:
            require_float(input, "operand")
        return super().infer(props, input=input)

    @classmethod
    def chain(cls, b: GraphBuilder, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        raise NotImplementedError

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        return [self.chain(b, self.input, list(p.ints("axes")), p.flag("keepdims"))]


@irdl_op_definition
class ReduceSumSquareOp(ReduceChainOp):
    """Σ x² over ``axes``: exactly reduce_sum(mul(x, x)) (the square rounds to the
    element type, integers wrap). ONNX's ReduceSumSquare; ``legalize`` lowers it to that
    chain for targets that do not claim it."""

    name = "mir.reduce_sum_square"

    @classmethod
    def chain(cls, b: GraphBuilder, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        return b.sum(b.mul(x, x), axes, keepdims)


@irdl_op_definition
class ReduceL2Op(ReduceChainOp):
    """√(Σ x²) over ``axes``, float only: exactly sqrt(reduce_sum(mul(x, x))) (no
    rescaling: a square that overflows gives +inf). ONNX's ReduceL2; ``legalize`` lowers
    it to that chain for targets that do not claim it."""

    name = "mir.reduce_l2"
    FLOATS_ONLY: ClassVar[bool] = True

    @classmethod
    def chain(cls, b: GraphBuilder, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        return b.sqrt(b.sum(b.mul(x, x), axes, keepdims))


@irdl_op_definition
class ReduceL1Op(ReduceChainOp):
    """Σ |x| over ``axes``: exactly reduce_sum(abs(x)) (integers wrap, |min| = min).
    ONNX's ReduceL1; ``legalize`` lowers it to that chain for targets that do not claim
    it."""

    name = "mir.reduce_l1"

    @classmethod
    def chain(cls, b: GraphBuilder, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        return b.sum(b.abs(x), axes, keepdims)


@irdl_op_definition
class ReduceLogSumOp(ReduceChainOp):
    """log Σ x over ``axes``, float only: exactly log(reduce_sum(x)). ONNX's
    ReduceLogSum; ``legalize`` lowers it to that chain for targets that do not claim it."""

    name = "mir.reduce_log_sum"
    FLOATS_ONLY: ClassVar[bool] = True

    @classmethod
    def chain(cls, b: GraphBuilder, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        return b.log(b.sum(x, axes, keepdims))


class ScanOp(ShapedOp):
    """A running reduction along ``axis``; ``exclusive`` leaves x[i] out of y[i] (y[0]
    is the identity), ``reverse`` runs from the end. Integers wrap; floats accumulate in
    the compute type in index order."""

    T: ClassVar = VarConstraint("T", AnyTensor)
    input = operand_def(T)
    axis = prop_def(I64Attr)
    exclusive = opt_prop_def(UnitAttr)
    reverse = opt_prop_def(UnitAttr)
    result = result_def(T)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = (
        "$input `axis` $axis (`exclusive` $exclusive^)? (`reverse` $reverse^)? attr-dict `:` "
        "type($result)"
    )

    def __init__(self, input: SSAValue, axis: int, exclusive: bool = False, reverse: bool = False):
        self._build(
            {"input": input},
            {
                "axis": int_attr(axis),
                "exclusive": flag_attr(exclusive),
                "reverse": flag_attr(reverse),
            },
        )

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_numeric(input, "operand")
        check_axis(props.int("axis"), input.rank)
        return (input,)


@irdl_op_definition
class CumsumOp(ScanOp):
    """Running sum along ``axis``: y[i] = Σ_{j ≤ i} x[j] (Σ_{j ≥ i} with ``reverse``)."""

    name = "mir.cumsum"


@irdl_op_definition
class CumprodOp(ScanOp):
    """Running product along ``axis``: y[i] = Π_{j ≤ i} x[j] (Π_{j ≥ i} with ``reverse``)."""

    name = "mir.cumprod"


@irdl_op_definition
class TopKOp(ShapedOp):
    """The ``k`` largest (or, with ``smallest``, smallest) elements along ``axis``, in
    order, and their indices (i64). Equal values keep their index order; NaN counts as
    larger than every number."""

    name = "mir.topk"
    input = operand_def(TensorType)
    k = prop_def(I64Attr)
    axis = prop_def(I64Attr)
    smallest = opt_prop_def(UnitAttr)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT))
    assembly_format = (
        "$input `k` $k `axis` $axis (`smallest` $smallest^)? attr-dict `:` type($input) `->` "
        "`(` type($values) `,` type($indices) `)`"
    )

    def __init__(self, input: SSAValue, k: int, axis: int, smallest: bool = False):
        self._build(
            {"input": input},
            {"k": int_attr(k), "axis": int_attr(axis), "smallest": flag_attr(smallest)},
        )

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_numeric(input, "operand")
        axis, k = props.int("axis"), props.int("k")
        check_axis(axis, input.rank)
        n = input.shape[axis]
        if k < 0 or (isinstance(n, int) and k > n):
            raise VerifyException(f"k = {k} is outside [0, {n}]")
        shape = list(input.shape)
        shape[axis] = k
        return (input.with_shape(shape), TensorType(shape, DType.I64))


@irdl_op_definition
class ScatterNdOp(ShapedOp):
    """A copy of ``data`` with slices replaced or combined by ``updates``.

    ``indices`` [..., q] address the first q dims of data (negative entries wrap); slice
    ``indices[i...]`` takes ``updates[i...]`` (shape indices.shape[:-1] +
    data.shape[q:]). Updates apply in row-major order: with ``reduction none`` the last
    one to an element wins, otherwise each combines (add, mul, max, min) with the value
    so far.
    """

    name = "mir.scatter_nd"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    reduction = prop_def(
        ScatterReductionAttr, default_value=ScatterReductionAttr(ScatterReduction.NONE)
    )
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT))
    assembly_format = (
        "$data `,` $indices `,` $updates (`reduction` $reduction^)? attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self, data: SSAValue, indices: SSAValue, updates: SSAValue, reduction: str = "none"
    ):
        self._build(
            {"data": data, "indices": indices, "updates": updates},
            {"reduction": enum_attr(ScatterReduction, reduction)},
        )

    @classmethod
    def infer(
        cls, props: Props, *, data: TensorType, indices: TensorType, updates: TensorType
    ) -> tuple[TensorType, ...]:
        require_int(indices, "indices")
        require_min_rank(indices, 1, "indices")
        q = indices.shape[-1]
        if not isinstance(q, int) or q > data.rank:
            raise VerifyException(f"index depth {q} exceeds the data rank {data.rank}")
        want = (*indices.shape[:-1], *data.shape[q:])
        if updates.shape != want or updates.dtype is not data.dtype:
            raise VerifyException(
                f"updates must be {fmt_shape(want)} of {data.dtype.value}, got {updates}"
            )
        if data.dtype.is_bool and props.enum("reduction") is not ScatterReduction.NONE:
            raise VerifyException("bool data only takes reduction none")
        return (data,)


@irdl_op_definition
class BitcastOp(ShapedOp):
    """The bytes of ``input`` read as the result's element type (same width and shape)."""

    name = "mir.bitcast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT))
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, dtype: DType | str):
        t = as_value(input).type
        assert isinstance(t, TensorType)
        self._build({"input": input}, {}, [t.with_dtype(dtype)])

    def check_result(self, props: Props, *, input: TensorType) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        if out.shape != input.shape or out.dtype.itemsize != input.dtype.itemsize:
            raise VerifyException(
                f"bitcast needs the same shape and element width: {input} -> {out}"
            )

    def contiguous_view_offset(self) -> int | None:
        return 0


class ArgReduceOp(ShapedOp):
    """Index (i64) of the extreme value along ``axis``; ties go to the first index."""

    input = operand_def(TensorType)
    axis = prop_def(I64Attr)
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = (
        "$input `axis` $axis (`keepdims` $keepdims^)? attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(self, input: SSAValue, axis: int, keepdims: bool = False):
        self._build({"input": input}, {"axis": int_attr(axis), "keepdims": flag_attr(keepdims)})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_numeric(input, "operand")
        axis = props.int("axis")
        check_axis(axis, input.rank)
        return (TensorType(reduced_shape(input.shape, [axis], props.flag("keepdims")), DType.I64),)


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """Index of the maximum along ``axis`` (first on ties)."""

    name = "mir.argmax"


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """Index of the minimum along ``axis`` (first on ties)."""

    name = "mir.argmin"


class AxisFloatOp(ShapedOp):
    """A float op along one axis whose result has the operand's type."""

    T: ClassVar = VarConstraint("T", AnyTensor)
    input = operand_def(T)
    axis = prop_def(I64Attr)
    result = result_def(T)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = "$input `axis` $axis attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, axis: int):
        self._build({"input": input}, {"axis": int_attr(axis)})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_float(input, "operand")
        check_axis(props.int("axis"), input.rank)
        return (input,)


@irdl_op_definition
class SoftmaxOp(AxisFloatOp):
    """exp(x - max) / sum(exp(x - max)) along ``axis``."""

    name = "mir.softmax"


@irdl_op_definition
class LogSoftmaxOp(AxisFloatOp):
    """log(softmax(x)) along ``axis``, computed stably."""

    name = "mir.log_softmax"


def _check_affine(x: TensorType, t: TensorType | None, tail: Sequence[Any], what: str) -> None:
    if t is None:
        return
    if t.dtype is not x.dtype:
        raise VerifyException(f"{what} must have element type {x.dtype.value}, got {t.dtype.value}")
    try:
        if broadcast_shapes(tail, t.shape) != tuple(tail):
            raise VerifyException("")
    except VerifyException:
        raise VerifyException(
            f"{what} {fmt_shape(t.shape)} does not broadcast to the normalised dims "
            f"{fmt_shape(tail)}"
        ) from None


def check_norm_operands(
    input: TensorType, scale: TensorType, bias: TensorType | None, axis: int
) -> None:
    """The rule of every norm over dims ``axis..rank-1`` with an affine scale/bias."""
    require_float(input, "input")
    check_axis(axis, input.rank)
    tail = input.shape[axis:]
    _check_affine(input, scale, tail, "scale")
    _check_affine(input, bias, tail, "bias")


class NormOp(ShapedOp):
    """Normalise over the dims ``axis..rank-1``; ``scale``/``bias`` broadcast to those dims."""

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    axis = prop_def(I64Attr)
    epsilon = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = (
        "$input `,` $scale (`,` $bias^)? `axis` $axis `eps` $epsilon attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        scale: SSAValue,
        bias: SSAValue | None = None,
        *,
        axis: int,
        epsilon: float = 1e-5,
    ):
        self._build(
            {"input": input, "scale": scale, "bias": bias},
            {"axis": int_attr(axis), "epsilon": float_attr(epsilon)},
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        scale: TensorType,
        bias: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        check_norm_operands(input, scale, bias, props.int("axis"))
        return (input,)


@irdl_op_definition
class LayerNormOp(NormOp):
    """(x - mean) / sqrt(var + eps) * scale + bias over dims axis..rank-1."""

    name = "mir.layer_norm"


@irdl_op_definition
class RmsNormOp(NormOp):
    """x / sqrt(mean(x²) + eps) * scale + bias over dims axis..rank-1."""

    name = "mir.rms_norm"


@irdl_op_definition
class GroupNormOp(ShapedOp):
    """Group normalisation of an ``[N, C, spatial...]`` tensor; ``scale``/``bias`` are [C]."""

    name = "mir.group_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    groups = prop_def(I64Attr)
    epsilon = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = (
        "$input `,` $scale `,` $bias `groups` $groups `eps` $epsilon attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self, input: SSAValue, scale: SSAValue, bias: SSAValue, *, groups: int, epsilon: float
    ):
        self._build(
            {"input": input, "scale": scale, "bias": bias},
            {"groups": int_attr(groups), "epsilon": float_attr(epsilon)},
        )

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, scale: TensorType, bias: TensorType
    ) -> tuple[TensorType, ...]:
        require_float(input, "input")
        require_min_rank(input, 2, "input")
        groups = props.int("groups")
        channels = input.shape[1]
        if groups <= 0 or (isinstance(channels, int) and channels % groups):
            raise VerifyException(f"{channels} channels do not split into {groups} groups")
        for t, what in ((scale, "scale"), (bias, "bias")):
            if t.shape != (channels,) or t.dtype is not input.dtype:
                raise VerifyException(
                    f"{what} must be [{channels}] of {input.dtype.value}, got {t}"
                )
        return (input,)


@irdl_op_definition
class BatchNormOp(ShapedOp):
    """Inference batch norm over axis 1: (x - mean) / sqrt(var + eps) * scale + bias."""

    name = "mir.batch_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    epsilon = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = (
        "$input `,` $scale `,` $bias `,` $mean `,` $variance `eps` $epsilon attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        scale: SSAValue,
        bias: SSAValue,
        mean: SSAValue,
        variance: SSAValue,
        *,
        epsilon: float,
    ):
        self._build(
            {"input": input, "scale": scale, "bias": bias, "mean": mean, "variance": variance},
            {"epsilon": float_attr(epsilon)},
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        scale: TensorType,
        bias: TensorType,
        mean: TensorType,
        variance: TensorType,
    ) -> tuple[TensorType, ...]:
        require_float(input, "input")
        require_min_rank(input, 2, "input")
        channels = input.shape[1]
        for t, what in ((scale, "scale"), (bias, "bias"), (mean, "mean"), (variance, "variance")):
            if t.shape != (channels,) or t.dtype is not input.dtype:
                raise VerifyException(
                    f"{what} must be [{channels}] of {input.dtype.value}, got {t}"
                )
        return (input,)


# =====================================================================================
# Data movement
# =====================================================================================


@irdl_op_definition
class ReshapeOp(ShapedOp):
    """Row-major reshape to the result type (which may hold symbols)."""

    name = "mir.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), SimplifyCanonicalization(), Precision(PrecisionClass.DATA_MOVEMENT), ViewLike()
    )
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, shape: Sequence[Any]):
        t = as_value(input).type
        assert isinstance(t, TensorType)
        self._build({"input": input}, {}, [t.with_shape(shape)])

    def check_result(self, props: Props, *, input: TensorType) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        if out.dtype is not input.dtype:
            raise VerifyException("reshape must keep the element type")
        if not may_reshape(input.shape, out.shape):
            raise VerifyException(
                f"cannot reshape {fmt_shape(input.shape)} into {fmt_shape(out.shape)}: "
                "element counts differ"
            )

    def contiguous_view_offset(self) -> int | None:
        return 0

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        return _same_last_dim(self.input, self.result)


@irdl_op_definition
class TransposeOp(ShapedOp):
    """Permute dims: result dim i is operand dim perm[i]."""

    name = "mir.transpose"
    input = operand_def(TensorType)
    perm = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), SimplifyCanonicalization(), Precision(PrecisionClass.DATA_MOVEMENT), ViewLike()
    )
    assembly_format = "$input `perm` $perm attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, perm: Sequence[int]):
        self._build({"input": input}, {"perm": ints_attr(perm)})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        perm = props.ints("perm")
        if sorted(perm) != list(range(input.rank)):
            raise VerifyException(f"perm {list(perm)} is not a permutation of rank {input.rank}")
        return (input.with_shape(input.shape[p] for p in perm),)

    def contiguous_view_offset(self) -> int | None:
        # A permutation that keeps the order of the non-unit dims moves no bytes.
        src = self.input.type
        assert isinstance(src, TensorType)
        moved = [p for p in self.props().ints("perm") if src.shape[p] != 1]
        return 0 if moved == sorted(moved) else None

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        perm = self.props().ints("perm")
        return (0,) if perm and perm[-1] == len(perm) - 1 else ()


@irdl_op_definition
class NarrowOp(ShapedOp):
    """Contiguous slice ``[start, start + len)`` of ``axis``; ``len`` is the result's dim."""

    name = "mir.narrow"
    input = operand_def(TensorType)
    axis = prop_def(I64Attr)
    start = prop_def(irdl_to_attr_constraint(I64Attr) | base(DimAttr))
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), SimplifyCanonicalization(), Precision(PrecisionClass.DATA_MOVEMENT), ViewLike()
    )
    INFER_RESULTS: ClassVar[bool] = False
    custom_directives = (DimValue,)
    assembly_format = (
        "$input `axis` $axis `start` custom<DimValue>($start) attr-dict `:` type($input) "
        "`->` type($result)"
    )

    def __init__(self, input: SSAValue, axis: int, start: Dim, length: Dim):
        t = as_value(input).type
        assert isinstance(t, TensorType)
        shape = list(t.shape)
        shape[axis] = length
        self._build(
            {"input": input},
            {"axis": int_attr(axis), "start": dim_prop(start)},
            [t.with_shape(shape)],
        )

    @property
    def start_dim(self) -> Dim:
        """The first index taken: an int, or an expression on a symbolic axis
        (``seq - 1`` for ``x[:, -1:]``)."""
        return self.props().dim("start")

    @property
    def length(self) -> Dim:
        out = self.result.type
        assert isinstance(out, TensorType)
        return out.shape[self.props().int("axis")]

    def check_result(self, props: Props, *, input: TensorType) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        axis, start = props.int("axis"), props.dim("start")
        check_axis(axis, input.rank)
        if out.dtype is not input.dtype or out.rank != input.rank:
            raise VerifyException("narrow must keep the rank and element type")
        for i, (a, b) in enumerate(zip(input.shape, out.shape, strict=True)):
            if i != axis and a != b:
                raise VerifyException(f"narrow changes dim {i} ({a} -> {b}), not only axis {axis}")
        full, length = input.shape[axis], out.shape[axis]
        if interval(start)[1] < 0:
            raise VerifyException(f"narrow start {start} is negative")
        if interval(full - length - start)[1] < 0:
            raise VerifyException(f"narrow [{start}, {start + length}) exceeds dim size {full}")

    def contiguous_view_offset(self) -> int | None:
        # Contiguous when every dim before the axis is 1: rows start..start+len of the
        # flattened tail.
        src = self.input.type
        assert isinstance(src, TensorType)
        axis, start = self.props().int("axis"), self.start_dim
        if not src.is_static or not isinstance(start, int) or any(d != 1 for d in src.shape[:axis]):
            return None
        inner = math.prod(int(d) for d in src.shape[axis + 1 :])
        return start * inner * src.dtype.itemsize

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        rank = self.result.type.rank
        return (0,) if rank and self.props().int("axis") != rank - 1 else ()


@irdl_op_definition
class SliceOp(ShapedOp):
    """Strided slice: result[i_0, ...] = input[starts[0] + i_0·steps[0], ...] on every axis.

    Steps may be negative (a reversed read); lengths come from the result type.
    """

    name = "mir.slice"
    input = operand_def(TensorType)
    starts = prop_def(I64Array)
    steps = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT), ViewLike())
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = (
        "$input `starts` $starts `steps` $steps attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue, starts: Sequence[int], steps: Sequence[int], lengths: Sequence[Dim]
    ):
        t = as_value(input).type
        assert isinstance(t, TensorType)
        self._build(
            {"input": input},
            {"starts": ints_attr(starts), "steps": ints_attr(steps)},
            [t.with_shape(lengths)],
        )

    def check_result(self, props: Props, *, input: TensorType) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        starts, steps = props.ints("starts"), props.ints("steps")
        _check_ints_len(starts, input.rank, "starts")
        _check_ints_len(steps, input.rank, "steps")
        if out.dtype is not input.dtype or out.rank != input.rank:
            raise VerifyException("slice must keep the rank and element type")
        dims = zip(input.shape, out.shape, starts, steps, strict=True)
        for i, (dim, n, s, st) in enumerate(dims):
            if st == 0:
                raise VerifyException(f"slice step on axis {i} is 0")
            if not (isinstance(dim, int) and isinstance(n, int)):
                # Checked at run time: here only what fails for every size.
                last = s + (n - 1) * st
                if interval(n)[1] > 0 and (
                    s < 0 or interval(dim - 1 - last)[1] < 0 or interval(last)[1] < 0
                ):
                    raise VerifyException(f"slice on axis {i} reads outside the dim ({dim})")
                continue
            if n == 0:
                continue
            last = s + (n - 1) * st
            if not (0 <= s < dim and 0 <= last < dim):
                raise VerifyException(
                    f"slice on axis {i} reads indices {s}..{last} outside [0, {dim})"
                )


@irdl_op_definition
class ConcatOp(ShapedOp):
    """Join operands along ``axis``; other dims must match."""

    name = "mir.concat"
    inputs = var_operand_def(TensorType)
    axis = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), SimplifyCanonicalization(), Precision(PrecisionClass.DATA_MOVEMENT))
    assembly_format = "$inputs `axis` $axis attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        self._build({"inputs": list(inputs)}, {"axis": int_attr(axis)})

    @classmethod
    def infer(cls, props: Props, *, inputs: Sequence[TensorType]) -> tuple[TensorType, ...]:
        if not inputs:
            raise VerifyException("concat needs at least one operand")
        dtype = require_same_dtype(list(inputs), "operands")
        axis = props.int("axis")
        first = inputs[0]
        check_axis(axis, first.rank)
        total: Any = 0
        shape = list(first.shape)
        for t in inputs:
            if t.rank != first.rank or any(
                not may_equal(a, b)
                for i, (a, b) in enumerate(zip(t.shape, first.shape, strict=True))
                if i != axis
            ):
                raise VerifyException(
                    f"concat operands {fmt_shape(first.shape)} and {fmt_shape(t.shape)} differ "
                    f"outside axis {axis}"
                )
            total = total + t.shape[axis]
            # Dims that are only equal at some sizes (checked when it runs): a number
            # where an operand has one, else the first operand's expression.
            shape = [d if isinstance(d, int) or i == axis or not isinstance(e, int) else e
                     for i, (d, e) in enumerate(zip(shape, t.shape, strict=True))]  # fmt: skip
        shape[axis] = total
        return (TensorType(shape, dtype),)

    def contiguous_operand_offsets(self) -> list[int] | None:
        # With every dim before the axis 1, the result is operand 0's bytes, then
        # operand 1's...: each operand is one byte range of the result.
        out = self.result.type
        assert isinstance(out, TensorType)
        if not out.is_static or any(d != 1 for d in out.shape[: self.props().int("axis")]):
            return None
        offsets, at = [], 0
        for v in self.inputs:
            offsets.append(at)
            at += cast(TensorType, v.type).nbytes() or 0
        return offsets


@irdl_op_definition
class ExpandOp(ShapedOp):
    """Broadcast to the result shape (NumPy ``broadcast_to``; the rank may grow)."""

    name = "mir.expand"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT), ViewLike())
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, shape: Sequence[Any]):
        t = as_value(input).type
        assert isinstance(t, TensorType)
        self._build({"input": input}, {}, [t.with_shape(shape)])

    def check_result(self, props: Props, *, input: TensorType) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        if out.dtype is not input.dtype:
            raise VerifyException("expand must keep the element type")
        if out.rank < input.rank:
            raise VerifyException("expand cannot lower the rank")
        for a, b in zip(reversed(input.shape), reversed(out.shape), strict=False):
            if not may_expand_to(a, b):
                raise VerifyException(
                    f"cannot expand {fmt_shape(input.shape)} to {fmt_shape(out.shape)}"
                )

    def contiguous_view_offset(self) -> int | None:
        # Adding or keeping size-1 dims only: the same bytes in the same order.
        src, out = self.input.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(out, TensorType)
        return 0 if src.is_static and src.num_elements() == out.num_elements() else None

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        return _same_last_dim(self.input, self.result)


@irdl_op_definition
class GatherOp(ShapedOp):
    """``table`` indexed along ``axis`` by integer ``indices`` (negative ones wrap).

    Result shape: table.shape[:axis] + indices.shape + table.shape[axis+1:].
    """

    name = "mir.gather"
    table = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT))
    assembly_format = (
        "$table `,` $indices `axis` $axis attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, table: SSAValue, indices: SSAValue, axis: int = 0):
        self._build({"table": table, "indices": indices}, {"axis": int_attr(axis)})

    @classmethod
    def infer(
        cls, props: Props, *, table: TensorType, indices: TensorType
    ) -> tuple[TensorType, ...]:
        require_int(indices, "indices")
        axis = props.int("axis")
        check_axis(axis, table.rank)
        shape = (*table.shape[:axis], *indices.shape, *table.shape[axis + 1 :])
        return (TensorType(shape, table.dtype),)

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        table = cast(TensorType, self.table.type)
        return (0,) if self.props().int("axis") != table.rank - 1 else ()


@irdl_op_definition
class GatherAxesOp(ShapedOp):
    """``input`` indexed along each of ``axes`` by its own 1-D i64 index vector (negative
    ones wrap): ``y[..., i_0, ..., i_k, ...] = x[..., idx_0[i_0], ..., idx_k[i_k], ...]``
    -- the chain of one ``mir.gather`` per axis, as one op (a nearest-neighbour resize).

    ``axes`` sorted and distinct, one index vector each. Result shape: the input's, the
    length of ``axes[k]`` replaced by that of ``indices[k]``. ``legalize`` lowers it to
    the chain for targets that do not claim it.
    """

    name = "mir.gather_axes"
    input = operand_def(TensorType)
    indices = var_operand_def(TensorType)
    axes = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT))
    assembly_format = (
        "$input `,` $indices `axes` $axes attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, input: SSAValue, indices: Sequence[SSAValue], axes: Sequence[int]):
        self._build({"input": input, "indices": list(indices)}, {"axes": ints_attr(axes)})

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, indices: Sequence[TensorType]
    ) -> tuple[TensorType, ...]:
        axes = props.ints("axes")
        if not axes:
            raise VerifyException("gather_axes needs at least one axis")
        if len(indices) != len(axes):
            raise VerifyException(
                f"{len(axes)} axes need {len(axes)} index vectors, got {len(indices)}"
            )
        for a in axes:
            check_axis(a, input.rank)
        if list(axes) != sorted(set(axes)):
            raise VerifyException(f"axes {list(axes)} must be sorted and distinct")
        shape = list(input.shape)
        for a, t in zip(axes, indices, strict=True):
            if t.dtype is not DType.I64 or t.rank != 1:
                raise VerifyException(
                    f"indices must be 1-D i64 vectors, got rank {t.rank} {t.dtype.value}"
                )
            shape[a] = t.shape[0]
        return (input.with_shape(shape),)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        """The per-axis gathers it means (``legalize``'s lowering)."""
        y: SSAValue = self.input
        for a, idx in zip(self.props().ints("axes"), self.indices, strict=True):
            y = b.gather(y, idx, a)
        return [y]

    def last_dim_pointwise_operands(self) -> tuple[int, ...]:
        x = cast(TensorType, self.input.type)
        return (0,) if x.rank - 1 not in self.props().ints("axes") else ()


@irdl_op_definition
class GatherElementsOp(ShapedOp):
    """``input`` indexed along ``axis`` element by element (ONNX GatherElements, NumPy
    ``take_along_axis``): ``y[i_0, ..., i_r] = x[i_0, ..., indices[i_0, ..., i_r], ...,
    i_r]``, the index at ``axis`` replaced by the index tensor's element there.

    ``indices``: i64, of the input's rank, each dim but ``axis``'s at most the input's;
    they must lie in [-n, n) for the axis length n, and negative ones wrap (as ONNX's).
    Result: the indices' shape, the input's element type. ``legalize`` lowers it to one
    ``mir.gather`` from the flattened input at wrapped index · stride + the offset of
    the other coordinates for targets that do not claim it.
    """

    name = "mir.gather_elements"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT))
    assembly_format = (
        "$input `,` $indices `axis` $axis attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, input: SSAValue, indices: SSAValue, axis: int):
        self._build({"input": input, "indices": indices}, {"axis": int_attr(axis)})

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, indices: TensorType
    ) -> tuple[TensorType, ...]:
        require_dtype(indices, DType.I64, "indices")
        if indices.rank != input.rank:
            raise VerifyException(
                f"indices of rank {indices.rank} must have the input's rank {input.rank}"
            )
        axis = props.int("axis")
        check_axis(axis, input.rank)
        for d, (n, k) in enumerate(zip(input.shape, indices.shape, strict=True)):
            if d != axis and isinstance(n, int) and isinstance(k, int) and k > n:
                raise VerifyException(
                    f"indices {fmt_shape(indices.shape)} exceed the input "
                    f"{fmt_shape(input.shape)} along dim {d}"
                )
        return (input.with_shape(indices.shape),)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        """One gather from the flattened input at wrapped index · stride_axis + the
        offset of the other coordinates: a constant table for static shapes, a sum of
        broadcast iotas times the strides for symbolic ones (``legalize``'s lowering)."""
        x, idx = cast(TensorType, self.input.type), cast(TensorType, self.indices.type)
        axis = self.props().int("axis")
        strides = row_major_strides(x.shape)
        offsets: SSAValue
        if x.is_static and idx.is_static:
            coords = [np.arange(int(n), dtype=np.int64) for n in idx.shape]
            grids = np.meshgrid(*coords, indexing="ij")
            table = sum(
                (g * int(strides[d]) for d, g in enumerate(grids) if d != axis),
                np.zeros([int(n) for n in idx.shape], np.int64),
            )
            offsets = b.constant(np.asarray(table, np.int64))
        else:
            offsets = b.constant(np.zeros([1] * idx.rank, np.int64))
            for d, n in enumerate(idx.shape):
                if d != axis and n != 1:
                    coord = b.reshape(
                        b.iota(n, DType.I64), [n if i == d else 1 for i in range(idx.rank)]
                    )
                    offsets = b.add(offsets, b.mul(coord, b.dim(strides[d])))
        i = self.indices
        wrapped = b.where(b.compare("lt", i, 0), b.add(i, b.dim(x.shape[axis])), i)
        flat = b.add(b.mul(wrapped, b.dim(strides[axis])), offsets)
        if cast(TensorType, flat.type).shape != idx.shape:
            flat = b.expand(flat, list(idx.shape))
        data = self.input if x.rank == 1 else b.reshape(self.input, [element_count(x.shape)])
        return [b.gather(data, flat, 0)]


@irdl_op_definition
class PadOp(ShapedOp):
    """Pad every axis: ``pads`` = begins of all axes, then ends (non-negative)."""

    name = "mir.pad"
    input = operand_def(TensorType)
    pads = prop_def(I64Array)
    mode = prop_def(PadModeAttr, default_value=PadModeAttr(PadMode.CONSTANT))
    value = prop_def(F64Attr, default_value=FloatAttr(0.0, 64))
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT))
    assembly_format = (
        "$input `pads` $pads (`mode` $mode^)? (`value` $value^)? attr-dict `:` "
        "type($input) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue, pads: Sequence[int], mode: str = "constant", value: float = 0.0
    ):
        self._build(
            {"input": input},
            {"pads": ints_attr(pads), "mode": enum_attr(PadMode, mode), "value": float_attr(value)},
        )

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        pads = props.ints("pads")
        r = input.rank
        _check_ints_len(pads, 2 * r, "pads")
        if any(p < 0 for p in pads):
            raise VerifyException(f"pads {list(pads)} must be non-negative")
        shape = []
        for i, d in enumerate(input.shape):
            shape.append(d + pads[i] + pads[r + i])
        return (input.with_shape(shape),)


# =====================================================================================
# Convolution and pooling
# =====================================================================================


def _spatial_out(
    size: Any,
    kernel: int,
    stride: int,
    pad_begin: int,
    pad_end: int,
    dilation: int,
    ceil_mode: bool = False,
) -> Dim:
    if stride <= 0 or dilation <= 0 or kernel <= 0:
        raise VerifyException("kernel, strides and dilations must be positive")
    return window_out_size(size, kernel, stride, pad_begin, pad_end, dilation, ceil_mode)


def conv_output_shape(
    x: TensorType,
    w: TensorType,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int,
) -> tuple[Any, ...]:
    require_min_rank(x, 3, "input")
    if w.rank != x.rank:
        raise VerifyException(f"weight rank {w.rank} differs from input rank {x.rank}")
    k = x.rank - 2
    _check_ints_len(strides, k, "strides")
    _check_ints_len(dilations, k, "dilations")
    _check_ints_len(pads, 2 * k, "pads")
    if groups <= 0:
        raise VerifyException("groups must be positive")
    c_in, c_out = x.shape[1], w.shape[0]
    if isinstance(c_out, int) and c_out % groups:
        raise VerifyException(f"{c_out} output channels do not split into {groups} groups")
    if (isinstance(c_in, int) and w.shape[1] != c_in // groups) or (
        isinstance(c_in, int) and c_in % groups
    ):
        raise VerifyException(
            f"weight {fmt_shape(w.shape)} needs C_in/groups = {c_in}/{groups} in dim 1"
        )
    kernel = w.shape[2:]
    if not is_static_shape(kernel):
        raise VerifyException(f"the kernel size {fmt_shape(kernel)} must be static")
    spatial = [
        _spatial_out(x.shape[2 + i], kernel[i], strides[i], pads[i], pads[k + i], dilations[i])
        for i in range(k)
    ]
    return (x.shape[0], c_out, *spatial)


def conv_props(
    rank: int,
    strides: Sequence[int] | None,
    pads: Sequence[int] | None,
    dilations: Sequence[int] | None,
    groups: int,
) -> dict[str, Attribute | None]:
    k = rank - 2
    return {
        "strides": ints_attr(strides or [1] * k),
        "pads": ints_attr(pads or [0] * (2 * k)),
        "dilations": ints_attr(dilations or [1] * k),
        "groups": int_attr(groups),
    }


@irdl_op_definition
class ConvOp(ShapedOp):
    """N-d convolution (cross-correlation), NCHW input, weight [C_out, C_in/groups, k...]."""

    name = "mir.conv"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    strides = prop_def(I64Array)
    pads = prop_def(I64Array)
    dilations = prop_def(I64Array)
    groups = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.COMPUTE))
    assembly_format = (
        "$input `,` $weight `strides` $strides `pads` $pads `dilations` $dilations "
        "`groups` $groups attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        groups: int = 1,
    ):
        rank = as_value(input).type.rank  # type: ignore[attr-defined]
        self._build(
            {"input": input, "weight": weight}, conv_props(rank, strides, pads, dilations, groups)
        )

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, weight: TensorType
    ) -> tuple[TensorType, ...]:
        require_float(input, "input")
        require_same_dtype([input, weight], "input and weight")
        shape = conv_output_shape(
            input,
            weight,
            props.ints("strides"),
            props.ints("pads"),
            props.ints("dilations"),
            props.int("groups"),
        )
        return (TensorType(shape, input.dtype),)


@irdl_op_definition
class ConvTransposeOp(ShapedOp):
    """N-d transposed convolution (the gradient of ``mir.conv`` with respect to its
    input), NCHW input, weight [C_in, C_out/groups, k...], optional bias [C_out].

    Each input element scatters its kernel-weighted copy to the window at ``stride·i``:
    ``full_i = (in_i - 1)·stride_i + (k_i - 1)·dilation_i + 1``; the result is ``full``
    cropped by ``pads`` (begins, then ends) and extended by ``output_padding`` zeros at the
    end (bias added everywhere): ``out_i = full_i + output_padding_i - begin_i - end_i``.
    No zero-stuffed input is ever formed."""

    name = "mir.conv_transpose"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    strides = prop_def(I64Array)
    pads = prop_def(I64Array)
    dilations = prop_def(I64Array)
    output_padding = prop_def(I64Array)
    groups = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.COMPUTE))
    assembly_format = (
        "$input `,` $weight (`bias` $bias^)? `strides` $strides `pads` $pads `dilations` "
        "$dilations `output_padding` $output_padding `groups` $groups attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        output_padding: Sequence[int] | None = None,
        groups: int = 1,
    ):
        rank = as_value(input).type.rank  # type: ignore[attr-defined]
        props = conv_props(rank, strides, pads, dilations, groups)
        props["output_padding"] = ints_attr(output_padding or [0] * (rank - 2))
        self._build({"input": input, "weight": weight, "bias": bias}, props)

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, weight: TensorType, bias: TensorType | None = None
    ) -> tuple[TensorType, ...]:
        require_float(input, "input")
        require_min_rank(input, 3, "input")
        require_same_dtype([input, weight], "input and weight")
        if weight.rank != input.rank:
            raise VerifyException(f"weight rank {weight.rank} differs from input rank {input.rank}")
        k = input.rank - 2
        strides, pads = props.ints("strides"), props.ints("pads")
        dilations, extra = props.ints("dilations"), props.ints("output_padding")
        groups = props.int("groups")
        for name, v, n in (("strides", strides, k), ("pads", pads, 2 * k),
                           ("dilations", dilations, k), ("output_padding", extra, k)):  # fmt: skip
            _check_ints_len(v, n, name)
        if groups <= 0 or min(strides) < 1 or min(dilations) < 1 or min(pads + extra) < 0:
            raise VerifyException("groups, strides and dilations must be positive, pads >= 0")
        if input.shape[1] != weight.shape[0]:
            raise VerifyException(
                f"weight {fmt_shape(weight.shape)} needs C_in = {input.shape[1]} in dim 0"
            )
        c_in, c_out_g = weight.shape[0], weight.shape[1]
        if not isinstance(c_in, int) or not isinstance(c_out_g, int) or c_in % groups:
            raise VerifyException(f"{c_in} input channels do not split into {groups} groups")
        kernel = weight.shape[2:]
        if not all(isinstance(d, int) for d in kernel):
            raise VerifyException(f"the kernel size {fmt_shape(kernel)} must be static")
        spatial = []
        for i in range(k):
            full = (input.shape[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
            size = full + extra[i] - pads[i] - pads[k + i]
            if interval(size)[1] < 1:
                raise VerifyException(f"pads leave no output along spatial dim {i}")
            spatial.append(size)
        out = TensorType((input.shape[0], c_out_g * groups, *spatial), input.dtype)
        if bias is not None and (bias.shape != (out.shape[1],) or bias.dtype is not out.dtype):
            raise VerifyException(f"bias must be [{out.shape[1]}] of {out.dtype.value}")
        return (out,)


@irdl_op_definition
class LrnOp(ShapedOp):
    """Local response normalisation across channels (ONNX LRN): with ``sq`` the sum of
    x² over the ``size`` channels around c ((size - 1) // 2 before, the rest after),
    ``y = x / (bias + alpha / size · sq)^beta``."""

    name = "mir.lrn"
    input = operand_def(TensorType)
    size = prop_def(I64Attr)
    alpha = prop_def(F64Attr)
    beta = prop_def(F64Attr)
    bias = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = (
        "$input `size` $size `alpha` $alpha `beta` $beta `bias` $bias attr-dict `:` "
        "type($input) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0
    ):
        self._build(
            {"input": input},
            {"size": int_attr(size), "alpha": float_attr(alpha), "beta": float_attr(beta),
             "bias": float_attr(bias)},
        )  # fmt: skip

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_float(input, "input")
        require_min_rank(input, 2, "input")
        if props.int("size") < 1:
            raise VerifyException("size must be positive")
        return (input,)


class PoolOp(ShapedOp):
    """Windowed reduction over the spatial dims of an ``[N, C, spatial...]`` tensor."""

    input = operand_def(TensorType)
    kernel = prop_def(I64Array)
    strides = prop_def(I64Array)
    pads = prop_def(I64Array)
    dilations = prop_def(I64Array)
    ceil_mode = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def check_element_type(cls, input: TensorType) -> None:
        require_float(input, "input")

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        cls.check_element_type(input)
        require_min_rank(input, 3, "input")
        k = input.rank - 2
        kernel, strides = props.ints("kernel"), props.ints("strides")
        pads, dilations = props.ints("pads"), props.ints("dilations")
        _check_ints_len(kernel, k, "kernel")
        _check_ints_len(strides, k, "strides")
        _check_ints_len(dilations, k, "dilations")
        _check_ints_len(pads, 2 * k, "pads")
        for i in range(k):
            if pads[i] >= kernel[i] * dilations[i] or pads[k + i] >= kernel[i] * dilations[i]:
                raise VerifyException(f"pad on spatial dim {i} must be smaller than the window")
        spatial = [
            _spatial_out(
                input.shape[2 + i],
                kernel[i],
                strides[i],
                pads[i],
                pads[k + i],
                dilations[i],
                props.flag("ceil_mode"),
            )
            for i in range(k)
        ]
        return (input.with_shape((input.shape[0], input.shape[1], *spatial)),)


def pool_props(
    rank: int,
    kernel: Sequence[int],
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    ceil_mode: bool = False,
) -> dict[str, Attribute | None]:
    k = rank - 2
    return {
        "kernel": ints_attr(kernel),
        "strides": ints_attr(strides or [1] * k),
        "pads": ints_attr(pads or [0] * (2 * k)),
        "dilations": ints_attr(dilations or [1] * k),
        "ceil_mode": flag_attr(ceil_mode),
    }


@irdl_op_definition
class MaxPoolOp(PoolOp):
    """Max over each window; padding never wins. Floats, or 8-bit integers (as ONNX's
    MaxPool takes them: a quantized model's max pool runs on its integers)."""

    name = "mir.max_pool"
    traits = traits_def(Precision(PrecisionClass.DATA_MOVEMENT))

    @classmethod
    def check_element_type(cls, input: TensorType) -> None:
        if input.dtype not in (DType.I8, DType.U8):
            require_float(input, "input")

    assembly_format = (
        "$input `kernel` $kernel `strides` $strides `pads` $pads `dilations` $dilations "
        "(`ceil_mode` $ceil_mode^)? attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        kernel: Sequence[int],
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        ceil_mode: bool = False,
    ):
        rank = as_value(input).type.rank  # type: ignore[attr-defined]
        self._build({"input": input}, pool_props(rank, kernel, strides, pads, dilations, ceil_mode))


@irdl_op_definition
class AvgPoolOp(PoolOp):
    """Mean over each window; padded cells count only with ``count_include_pad``."""

    name = "mir.avg_pool"
    count_include_pad = opt_prop_def(UnitAttr)
    traits = traits_def(Precision(PrecisionClass.REDUCTION))
    assembly_format = (
        "$input `kernel` $kernel `strides` $strides `pads` $pads `dilations` $dilations "
        "(`ceil_mode` $ceil_mode^)? (`count_include_pad` $count_include_pad^)? attr-dict `:` "
        "type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        kernel: Sequence[int],
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        ceil_mode: bool = False,
        count_include_pad: bool = False,
    ):
        rank = as_value(input).type.rank  # type: ignore[attr-defined]
        props = pool_props(rank, kernel, strides, pads, dilations, ceil_mode)
        props["count_include_pad"] = flag_attr(count_include_pad)
        self._build({"input": input}, props)


# =====================================================================================
# Attention and position encodings
# =====================================================================================


def attention_shape(
    q: TensorType, k: TensorType, v: TensorType, mask: TensorType | None, mask_kind: MaskKind
) -> TensorType:
    for t, what in ((q, "query"), (k, "key"), (v, "value")):
        require_rank(t, 4, what)
        require_float(t, what)
    require_same_dtype([q, k, v], "query, key and value")
    b, h, sq, d = q.shape
    bk, hk, sk, dk = k.shape
    bv, hv, sv, dv = v.shape
    if broadcast_dims(b, bk) != b or bv != bk:
        raise VerifyException("query, key and value batch dims differ")
    if dk != d:
        raise VerifyException(f"query head dim {d} differs from key head dim {dk}")
    if hv != hk or sv != sk:
        raise VerifyException("key and value must have the same heads and length")
    if isinstance(h, int) and isinstance(hk, int) and (hk == 0 or h % hk):
        raise VerifyException(f"{h} query heads are not a multiple of {hk} key/value heads")
    if (mask is not None) != (mask_kind is MaskKind.EXPLICIT):
        raise VerifyException("a mask operand is given iff the mask kind is explicit")
    if mask is not None:
        if not (mask.dtype is DType.BOOL or mask.dtype is q.dtype):
            raise VerifyException("the mask must be bool or of the query's element type")
        if broadcast_shapes(mask.shape, (b, h, sq, sk)) != (b, h, sq, sk):
            raise VerifyException(
                f"mask {fmt_shape(mask.shape)} does not broadcast to {fmt_shape((b, h, sq, sk))}"
            )
    return TensorType((b, h, sq, dv), q.dtype)


@irdl_op_definition
class AttentionOp(ShapedOp):
    """Scaled dot-product attention on ``[B, H, S, D]`` tensors.

    softmax(q·kᵀ·scale [+ mask]) · v with ``scale`` defaulting to 1/√D; key/value may have
    fewer heads (grouped-query attention: query head h reads key head h // (H / H_kv));
    ``softcap`` c applies c·tanh(s/c) to the scores first. With ``zero_nan`` a probability
    that is NaN counts as 0 (a row masked entirely gives 0, not NaN), as PyTorch's
    exporter guards the softmax with ``where(isnan(p), 0, p)``.
    """

    name = "mir.attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    mask_kind = prop_def(MaskKindAttr, default_value=MaskKindAttr(MaskKind.NONE))
    scale = opt_prop_def(F64Attr)
    softcap = opt_prop_def(F64Attr)
    zero_nan = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.COMPUTE))
    assembly_format = (
        "$query `,` $key `,` $value (`mask` $mask^)? (`kind` $mask_kind^)? (`scale` $scale^)? "
        "(`softcap` $softcap^)? (`zero_nan` $zero_nan^)? attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        query: SSAValue,
        key: SSAValue,
        value: SSAValue,
        mask: SSAValue | None = None,
        *,
        mask_kind: str = "none",
        scale: float | None = None,
        softcap: float | None = None,
        zero_nan: bool = False,
    ):
        if mask is not None and mask_kind == "none":
            mask_kind = "explicit"
        self._build(
            {"query": query, "key": key, "value": value, "mask": mask},
            {
                "mask_kind": enum_attr(MaskKind, mask_kind),
                "scale": float_attr(scale),
                "softcap": float_attr(softcap),
                "zero_nan": flag_attr(zero_nan),
            },
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        query: TensorType,
        key: TensorType,
        value: TensorType,
        mask: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        return (attention_shape(query, key, value, mask, props.enum("mask_kind")),)


def rope_check(x: TensorType, cos: TensorType, sin: TensorType, rotary_dim: int | None) -> None:
    require_min_rank(x, 2, "input")
    require_float(x, "input")
    d = x.shape[-1]
    if not isinstance(d, int):
        raise VerifyException("the rotated (last) dim must be static")
    r = d if rotary_dim is None else rotary_dim
    if r <= 0 or r > d or r % 2:
        raise VerifyException(f"rotary dim {r} must be even and in (0, {d}]")
    target = (*x.shape[:-1], r // 2)
    for t, what in ((cos, "cos"), (sin, "sin")):
        if t.dtype is not x.dtype:
            raise VerifyException(f"{what} must have element type {x.dtype.value}")
        if broadcast_shapes(t.shape, target) != target:
            raise VerifyException(
                f"{what} {fmt_shape(t.shape)} does not broadcast to {fmt_shape(target)}"
            )


@irdl_op_definition
class RopeOp(ShapedOp):
    """Rotary position embedding on the last dim of ``x`` (NeoX rotate-half by default).

    The first ``rotary_dim`` (default: all) channels rotate: pairs (i, i + r/2), or
    (2i, 2i + 1) with ``interleaved``; cos/sin broadcast to ``[..., S, r/2]``; the
    remaining channels pass through.
    """

    name = "mir.rope"
    input = operand_def(TensorType)
    cos = operand_def(TensorType)
    sin = operand_def(TensorType)
    rotary_dim = opt_prop_def(I64Attr)
    interleaved = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.ELEMENTWISE))
    assembly_format = (
        "$input `,` $cos `,` $sin (`rotary_dim` $rotary_dim^)? (`interleaved` $interleaved^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        cos: SSAValue,
        sin: SSAValue,
        *,
        rotary_dim: int | None = None,
        interleaved: bool = False,
    ):
        self._build(
            {"input": input, "cos": cos, "sin": sin},
            {"rotary_dim": int_attr(rotary_dim), "interleaved": flag_attr(interleaved)},
        )

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, cos: TensorType, sin: TensorType
    ) -> tuple[TensorType, ...]:
        rope_check(input, cos, sin, props.opt_int("rotary_dim"))
        return (input,)


# =====================================================================================
# Recurrent layers
# =====================================================================================


def _check_tensor(t: TensorType | None, shape: Sequence[Dim], dtype: DType, what: str) -> None:
    if t is not None and (t.shape != tuple(shape) or t.dtype is not dtype):
        raise VerifyException(f"{what} must be {fmt_shape(tuple(shape))} of {dtype.value}, got {t}")


class RecurrentOp(ShapedOp):
    """The recurrent layers (ONNX's RNN, GRU and LSTM, one op per layer) share this:

    ``input`` X is [seq, batch, in] ([batch, seq, in] with ``batch_first``). Per
    direction d: ``weight`` W[d] is [G·H, in] and ``recurrence`` R[d] [G·H, H] (G blocks
    of H rows, one per gate; the hidden size H static), ``bias`` B[d] [2·G·H] is Wb[d]
    then Rb[d] (zeros when absent), ``initial_h`` [dirs, batch, H] ([batch, dirs, H] with
    ``batch_first``; zeros when absent). With ``state_offset`` s (not with
    ``batch_first``), the initial states are [S, batch, H] stacks, S ≥ s + dirs, of
    which the layer reads rows s to s + dirs - 1 (a multi-layer network's states, one
    stack for all its layers, as PyTorch's and cuDNN's). ``sequence_lens`` [batch] (i32
    or i64) is the length of each batch row (the whole sequence when absent).

    Each direction runs on its own, forward from step 0 or backwards from the last step
    (``reverse``; ``bidirectional``: direction 0 forward, direction 1 backwards). The
    input projection of every step is one product, P = X·W[d]ᵀ + (Wb[d] + Rb[d]); a step
    makes the new states from P[t] and the states (the op's cell). At and past a row's
    length its states stay as they are and its output is 0 (a backwards row starts at its
    own last step). ``clip`` c clamps each gate's pre-activation (its peephole term
    included) to [-c, c]. ``activations`` lists every direction's activations in turn
    (default: the op's own), with one ``activation_alpha`` and ``activation_beta`` value
    apiece, read by those that take them. Results: Y, every step's hidden state, [seq,
    dirs, batch, H] ([batch, seq, dirs, H] with ``batch_first``), then the final states
    (hidden; an LSTM's cell too), each [dirs, batch, H] ([batch, dirs, H]).

    Each product, sum and gate function rounds to the element type as its own op does:
    the reference kernel and the lowering to steps (for targets that do not claim the
    layer) compute the same numbers.
    """

    GATES: ClassVar[int]
    """Gate blocks in the rows of W and R."""
    STATES: ClassVar[int] = 1
    """Recurrent states: the hidden state (and an LSTM's cell state)."""
    DEFAULT_ACTIVATIONS: ClassVar[tuple[RecurrentActivation, ...]]
    """One direction's activations when ``activations`` is not given."""

    direction = prop_def(
        RecurrentDirectionAttr, default_value=RecurrentDirectionAttr(RecurrentDirection.FORWARD)
    )
    activations = opt_prop_def(ArrayAttr[StringAttr])
    activation_alpha = opt_prop_def(F64Array)
    activation_beta = opt_prop_def(F64Array)
    clip = opt_prop_def(F64Attr)
    batch_first = opt_prop_def(UnitAttr)
    state_offset = opt_prop_def(I64Attr)
    traits = traits_def(Pure(), Precision(PrecisionClass.COMPUTE))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A layer's docstring states its cell; what every layer shares follows it.
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__doc__")
        if "name" in cls.__dict__ and own and RecurrentOp.__doc__:
            cls.__doc__ = inspect.cleandoc(own) + "\n\n" + inspect.cleandoc(RecurrentOp.__doc__)

    def _build_layer(
        self,
        operands: dict[str, SSAValue | None],
        direction: str,
        activations: Sequence[str] | None,
        activation_alpha: Sequence[float] | None,
        activation_beta: Sequence[float] | None,
        clip: float | None,
        batch_first: bool,
        state_offset: int | None,
        **flags: bool,
    ) -> None:
        names = None if activations is None else ArrayAttr([StringAttr(a) for a in activations])
        props: dict[str, Attribute | None] = {
            "direction": enum_attr(RecurrentDirection, direction),
            "activations": names,
            "activation_alpha": floats_attr(activation_alpha),
            "activation_beta": floats_attr(activation_beta),
            "clip": float_attr(clip),
            "batch_first": flag_attr(batch_first),
            "state_offset": int_attr(state_offset),
        }
        props.update({k: flag_attr(v) for k, v in flags.items()})
        self._build(operands, props)

    @classmethod
    def infer_layer(
        cls,
        props: Props,
        input: TensorType,
        weight: TensorType,
        recurrence: TensorType,
        bias: TensorType | None,
        sequence_lens: TensorType | None,
        states: Sequence[tuple[str, TensorType | None]],
        integer_weights: bool = False,
    ) -> tuple[TensorType, ...]:
        """The result types, checking what every layer has (``states``: the initial
        states by name) and the properties; the caller checks ``integer_weights``."""
        require_float(input, "input")
        require_rank(input, 3, "input")
        dtype = input.dtype
        batch_first = props.flag("batch_first")
        seq, batch, width = input.shape
        if batch_first:
            seq, batch = batch, seq
        dirs = 2 if props.enum("direction") is RecurrentDirection.BIDIRECTIONAL else 1
        require_rank(recurrence, 3, "recurrence")
        hidden = recurrence.shape[2]
        if not isinstance(hidden, int) or recurrence.shape[:2] != (dirs, cls.GATES * hidden):
            raise VerifyException(
                f"recurrence must be [{dirs}, {cls.GATES}·hidden, hidden] with a static hidden "
                f"size, got {fmt_shape(recurrence.shape)}"
            )
        rows = cls.GATES * hidden
        require_rank(weight, 3, "weight")
        if weight.shape[:2] != (dirs, rows) or not may_equal(weight.shape[2], width):
            raise VerifyException(
                f"weight must be {fmt_shape((dirs, rows, width))}, got {fmt_shape(weight.shape)}"
            )
        if not integer_weights:
            require_same_dtype([input, weight, recurrence], "input, weight and recurrence")
        _check_tensor(bias, (dirs, 2 * rows), dtype, "bias")
        if sequence_lens is not None and (
            sequence_lens.dtype not in (DType.I32, DType.I64) or sequence_lens.shape != (batch,)
        ):
            raise VerifyException(f"sequence_lens must be [{batch}] of i32 or i64")
        state = (batch, dirs, hidden) if batch_first else (dirs, batch, hidden)
        offset = props.opt_int("state_offset")
        if offset is not None and (offset < 0 or batch_first):
            raise VerifyException("state_offset must be ≥ 0, and without batch_first")
        for name, t in states:
            if offset is not None and t is not None:
                stacked = t.shape[0]
                if not isinstance(stacked, int) or stacked < offset + dirs:
                    raise VerifyException(
                        f"{name} must stack at least {offset + dirs} states for state_offset "
                        f"{offset}, got {fmt_shape(t.shape)}"
                    )
                t = t.with_shape(state) if t.shape[1:] == state[1:] else t
            _check_tensor(t, state, dtype, name)
        cls._check_activations(props, dirs)
        clip = props.opt_float("clip")
        if clip is not None and not clip > 0:
            raise VerifyException(f"clip must be positive, got {clip}")
        y = (batch, seq, dirs, hidden) if batch_first else (seq, dirs, batch, hidden)
        return (TensorType(y, dtype), *[TensorType(state, dtype)] * cls.STATES)

    @classmethod
    def _check_activations(cls, props: Props, dirs: int) -> None:
        attr = props.get("activations")
        if attr is None:
            if props.get("activation_alpha") or props.get("activation_beta"):
                raise VerifyException("activation_alpha and activation_beta need activations")
            return
        names = [cast(StringAttr, a).data for a in cast(ArrayAttr[Attribute], attr)]
        known_names = {a.value for a in RecurrentActivation}
        for name in names:
            if name not in known_names:
                known = ", ".join(RecurrentActivation)
                raise VerifyException(f"unknown activation {name!r} (known: {known})")
        per = len(cls.DEFAULT_ACTIVATIONS)
        if len(names) != dirs * per:
            raise VerifyException(f"{len(names)} activations for {dirs} direction(s) of {per}")
        for what in ("activation_alpha", "activation_beta"):
            if props.get(what) is not None and len(props.floats(what)) != len(names):
                raise VerifyException(f"{what} needs one value per activation")

    # -- reading the op -------------------------------------------------------------------
    def hidden_size(self) -> int:
        return cast(int, cast(TensorType, self.operands[2].type).shape[2])  # verified static

    def backwards(self) -> tuple[bool, ...]:
        """Whether each direction runs from the last step."""
        direction: RecurrentDirection = self.props().enum("direction")
        if direction is RecurrentDirection.BIDIRECTIONAL:
            return (False, True)
        return (direction is RecurrentDirection.REVERSE,)

    def gate_activations(self) -> list[list[tuple[RecurrentActivation, float, float]]]:
        """Each direction's activations, with their alpha and beta."""
        p = self.props()
        dirs = len(self.backwards())
        attr = p.get("activations")
        if attr is None:
            return [[(a, 0.0, 0.0) for a in self.DEFAULT_ACTIVATIONS] for _ in range(dirs)]
        names = [
            RecurrentActivation(cast(StringAttr, a).data) for a in cast(ArrayAttr[Attribute], attr)
        ]
        alpha = p.floats("activation_alpha") or (0.0,) * len(names)
        beta = p.floats("activation_beta") or (0.0,) * len(names)
        acts = list(zip(names, alpha, beta, strict=True))
        per = len(self.DEFAULT_ACTIVATIONS)
        return [acts[d * per : (d + 1) * per] for d in range(dirs)]


def _layer_format(operands: Sequence[tuple[str, str]], flags: Sequence[str], results: int) -> str:
    """The recurrent ops' assembly format: each optional operand after its keyword, with
    its type; then the properties and the types of the three weights and the results."""
    optional = [
        f"(`{keyword}` `(` ${name}^ `:` type(${name}) `)`)?"
        for keyword, name in (
            ("bias", "bias"), ("lens", "sequence_lens"), ("h0", "initial_h"), *operands
        )
    ]  # fmt: skip
    names = ("output", "hidden", "cell")[:results]
    return " ".join(
        [
            "$input `,` $weight `,` $recurrence",
            *optional,
            "(`direction` $direction^)? (`activations` $activations^)?",
            "(`alpha` $activation_alpha^)? (`beta` $activation_beta^)? (`clip` $clip^)?",
            "(`batch_first` $batch_first^)? (`state_offset` $state_offset^)?",
            *(f"(`{flag}` ${flag}^)?" for flag in flags),
            "attr-dict `:` `(` type($input) `,` type($weight) `,` type($recurrence) `)` `->`",
            "`(` " + " `,` ".join(f"type(${n})" for n in names) + " `)`",
        ]
    )


class _HiddenStateLayer(RecurrentOp):
    """The layers whose only state is the hidden one (mir.rnn, mir.gru)."""

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    recurrence = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    output = result_def(TensorType)
    hidden = result_def(TensorType)

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        recurrence: SSAValue,
        *,
        bias: SSAValue | None = None,
        sequence_lens: SSAValue | None = None,
        initial_h: SSAValue | None = None,
        direction: str = "forward",
        activations: Sequence[str] | None = None,
        activation_alpha: Sequence[float] | None = None,
        activation_beta: Sequence[float] | None = None,
        clip: float | None = None,
        batch_first: bool = False,
        state_offset: int | None = None,
        **flags: bool,
    ):
        self._build_layer(
            {"input": input, "weight": weight, "recurrence": recurrence, "bias": bias,
             "sequence_lens": sequence_lens, "initial_h": initial_h},
            direction, activations, activation_alpha, activation_beta, clip, batch_first,
            state_offset, **flags,
        )  # fmt: skip

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        weight: TensorType,
        recurrence: TensorType,
        bias: TensorType | None = None,
        sequence_lens: TensorType | None = None,
        initial_h: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        return cls.infer_layer(
            props, input, weight, recurrence, bias, sequence_lens, [("initial_h", initial_h)]
        )


@irdl_op_definition
class RnnOp(_HiddenStateLayer):
    """A simple RNN layer, one gate; with f its activation (tanh by default), the step
    is H' = f(clip(P[t] + H·R[d]ᵀ))."""

    name = "mir.rnn"
    GATES: ClassVar[int] = 1
    DEFAULT_ACTIVATIONS: ClassVar[tuple[RecurrentActivation, ...]] = (RecurrentActivation.TANH,)
    assembly_format = _layer_format((), (), 2)


@irdl_op_definition
class GruOp(_HiddenStateLayer):
    """A GRU layer, gate blocks z, r, h; with f, g its activations (sigmoid, tanh by
    default) and Rb_h the h block of Rb, the step is

    z = f(clip(P_z + H·R_zᵀ)), r = f(clip(P_r + H·R_rᵀ)) (one product for both);
    h~ = g(clip(P_h + (r·H)·R_hᵀ)), or with ``linear_before_reset``
    h~ = g(clip(P_h + r·(H·R_hᵀ + Rb_h))) (P_h then leaves Rb_h out);
    H' = (1 - z)·h~ + z·H.
    """

    name = "mir.gru"
    GATES: ClassVar[int] = 3
    DEFAULT_ACTIVATIONS: ClassVar[tuple[RecurrentActivation, ...]] = (
        RecurrentActivation.SIGMOID,
        RecurrentActivation.TANH,
    )
    linear_before_reset = opt_prop_def(UnitAttr)
    assembly_format = _layer_format((), ("linear_before_reset",), 2)


@irdl_op_definition
class LstmOp(RecurrentOp):
    """An LSTM layer, gate blocks i, o, f, c (ONNX's order), ``initial_c`` as
    ``initial_h``, ``peepholes`` [dirs, 3·H] the p_i, p_o, p_f of each direction; with f,
    g, h its activations (sigmoid, tanh, tanh by default), G = P[t] + H·R[d]ᵀ and C the
    cell state, the step is

    i = f(clip(G_i + p_i·C)); fg = f(clip(G_f + p_f·C)), or 1 - i with ``input_forget``;
    C' = fg·C + i·g(clip(G_c)); o = f(clip(G_o + p_o·C')); H' = o·h(C').

    With ``weight_scale`` and ``recurrence_scale``, W and R hold 8-bit integers (i8 or u8;
    scales of the input's type and zero points of the weight's, [dirs] or [dirs, G·H];
    zero points 0 when absent), and each product v·Mᵀ runs as onnxruntime's
    DynamicQuantizeLSTM runs it: v quantized to u8 by its own range (scale
    (max(v, 0) - min(v, 0)) / 255, zero point round(-min(v, 0) / scale), as
    DynamicQuantizeLinear; X as one tensor, the hidden state row by row), the integer
    product of v - v_zp and M - M_zp, times v's scale times M's.
    """

    name = "mir.lstm"
    GATES: ClassVar[int] = 4
    STATES: ClassVar[int] = 2
    DEFAULT_ACTIVATIONS: ClassVar[tuple[RecurrentActivation, ...]] = (
        RecurrentActivation.SIGMOID,
        RecurrentActivation.TANH,
        RecurrentActivation.TANH,
    )
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    recurrence = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    initial_c = opt_operand_def(TensorType)
    peepholes = opt_operand_def(TensorType)
    weight_scale = opt_operand_def(TensorType)
    weight_zero_point = opt_operand_def(TensorType)
    recurrence_scale = opt_operand_def(TensorType)
    recurrence_zero_point = opt_operand_def(TensorType)
    input_forget = opt_prop_def(UnitAttr)
    output = result_def(TensorType)
    hidden = result_def(TensorType)
    cell = result_def(TensorType)
    assembly_format = _layer_format(
        (("c0", "initial_c"), ("peepholes", "peepholes"), ("w_scale", "weight_scale"),
         ("w_zero_point", "weight_zero_point"), ("r_scale", "recurrence_scale"),
         ("r_zero_point", "recurrence_zero_point")),
        ("input_forget",),
        3,
    )  # fmt: skip

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        recurrence: SSAValue,
        *,
        bias: SSAValue | None = None,
        sequence_lens: SSAValue | None = None,
        initial_h: SSAValue | None = None,
        initial_c: SSAValue | None = None,
        peepholes: SSAValue | None = None,
        weight_scale: SSAValue | None = None,
        weight_zero_point: SSAValue | None = None,
        recurrence_scale: SSAValue | None = None,
        recurrence_zero_point: SSAValue | None = None,
        direction: str = "forward",
        activations: Sequence[str] | None = None,
        activation_alpha: Sequence[float] | None = None,
        activation_beta: Sequence[float] | None = None,
        clip: float | None = None,
        batch_first: bool = False,
        state_offset: int | None = None,
        input_forget: bool = False,
    ):
        self._build_layer(
            {"input": input, "weight": weight, "recurrence": recurrence, "bias": bias,
             "sequence_lens": sequence_lens, "initial_h": initial_h, "initial_c": initial_c,
             "peepholes": peepholes, "weight_scale": weight_scale,
             "weight_zero_point": weight_zero_point, "recurrence_scale": recurrence_scale,
             "recurrence_zero_point": recurrence_zero_point},
            direction, activations, activation_alpha, activation_beta, clip, batch_first,
            state_offset, input_forget=input_forget,
        )  # fmt: skip

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        weight: TensorType,
        recurrence: TensorType,
        bias: TensorType | None = None,
        sequence_lens: TensorType | None = None,
        initial_h: TensorType | None = None,
        initial_c: TensorType | None = None,
        peepholes: TensorType | None = None,
        weight_scale: TensorType | None = None,
        weight_zero_point: TensorType | None = None,
        recurrence_scale: TensorType | None = None,
        recurrence_zero_point: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        quantized = weight_scale is not None
        if (recurrence_scale is not None) != quantized:
            raise VerifyException("weight_scale and recurrence_scale come together")
        if not quantized and (weight_zero_point or recurrence_zero_point):
            raise VerifyException("zero points need the scales")
        results = cls.infer_layer(
            props, input, weight, recurrence, bias, sequence_lens,
            [("initial_h", initial_h), ("initial_c", initial_c)], integer_weights=quantized,
        )  # fmt: skip
        dirs, rows, hidden = recurrence.shape
        _check_tensor(peepholes, (dirs, 3 * cast(int, hidden)), input.dtype, "peepholes")
        if quantized:
            for what, m, scale, zero_point in (
                ("weight", weight, weight_scale, weight_zero_point),
                ("recurrence", recurrence, recurrence_scale, recurrence_zero_point),
            ):
                _check_integer_weight(what, m, scale, zero_point, input.dtype, dirs, rows)
        return results


def _check_integer_weight(
    what: str,
    m: TensorType,
    scale: TensorType | None,
    zero_point: TensorType | None,
    dtype: DType,
    dirs: Dim,
    rows: Dim,
) -> None:
    if m.dtype not in (DType.I8, DType.U8):
        raise VerifyException(f"a quantized {what} must be i8 or u8, got {m.dtype.value}")
    assert scale is not None
    if scale.shape not in ((dirs,), (dirs, rows)) or scale.dtype is not dtype:
        raise VerifyException(
            f"{what}_scale must be [{dirs}] or [{dirs}, {rows}] of {dtype.value}, got {scale}"
        )
    _check_tensor(zero_point, scale.shape, m.dtype, f"{what}_zero_point")


RECURRENT_OPS: tuple[type[RecurrentOp], ...] = (RnnOp, GruOp, LstmOp)


# =====================================================================================
# Quantisation
# =====================================================================================


def _check_qparams(
    x: TensorType, scale: TensorType, zero_point: TensorType | None, axis: int | None
) -> None:
    require_float(scale, "scale")
    if axis is None:
        if scale.num_elements() != 1:
            raise VerifyException("a per-tensor scale must hold one element")
    else:
        check_axis(axis, x.rank)
        if scale.shape != (x.shape[axis],):
            raise VerifyException(
                f"a per-axis scale must be [{x.shape[axis]}], got {fmt_shape(scale.shape)}"
            )
    if zero_point is not None and zero_point.shape != scale.shape:
        raise VerifyException("zero_point must have the scale's shape")


class QuantOpBase(ShapedOp):
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = opt_operand_def(TensorType)
    axis = opt_prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.QUANT))
    assembly_format = (
        "$input `,` $scale (`,` $zero_point^)? (`axis` $axis^)? attr-dict `:` "
        "functional-type(operands, results)"
    )


@irdl_op_definition
class QuantizeOp(QuantOpBase):
    """q = saturate(round_half_even(x / scale) + zero_point) into the result's int/f8 type."""

    name = "mir.quantize"
    INFER_RESULTS: ClassVar[bool] = False

    def __init__(
        self,
        input: SSAValue,
        scale: SSAValue,
        zero_point: SSAValue | None = None,
        *,
        dtype: DType | str = DType.I8,
        axis: int | None = None,
    ):
        t = as_value(input).type
        assert isinstance(t, TensorType)
        self._build(
            {"input": input, "scale": scale, "zero_point": zero_point},
            {"axis": int_attr(axis)},
            [t.with_dtype(dtype)],
        )

    def check_result(
        self,
        props: Props,
        *,
        input: TensorType,
        scale: TensorType,
        zero_point: TensorType | None = None,
    ) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        require_float(input, "input")
        if not out.dtype.is_quantized:
            raise VerifyException(
                f"quantize produces an int or 8/4-bit float type, not {out.dtype.value}"
            )
        if out.shape != input.shape:
            raise VerifyException("quantize must keep the shape")
        if zero_point is not None and zero_point.dtype is not out.dtype:
            raise VerifyException("zero_point must have the result's element type")
        _check_qparams(input, scale, zero_point, props.opt_int("axis"))


@irdl_op_definition
class DequantizeOp(QuantOpBase):
    """x = (q - zero_point) · scale, in the scale's float type."""

    name = "mir.dequantize"

    def __init__(
        self,
        input: SSAValue,
        scale: SSAValue,
        zero_point: SSAValue | None = None,
        *,
        axis: int | None = None,
    ):
        self._build(
            {"input": input, "scale": scale, "zero_point": zero_point}, {"axis": int_attr(axis)}
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        scale: TensorType,
        zero_point: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        if not input.dtype.is_quantized:
            raise VerifyException(
                f"dequantize reads an int or 8/4-bit float type, not {input.dtype.value}"
            )
        if zero_point is not None and zero_point.dtype is not input.dtype:
            raise VerifyException("zero_point must have the input's element type")
        _check_qparams(input, scale, zero_point, props.opt_int("axis"))
        return (input.with_dtype(scale.dtype),)


@irdl_op_definition
class FakeQuantizeOp(ShapedOp):
    """Quantize to [quant_min, quant_max] and dequantize again, staying in float."""

    name = "mir.fake_quantize"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    axis = opt_prop_def(I64Attr)
    quant_min = prop_def(I64Attr)
    quant_max = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.QUANT))
    assembly_format = (
        "$input `,` $scale `,` $zero_point (`axis` $axis^)? `range` $quant_min `to` $quant_max "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        scale: SSAValue,
        zero_point: SSAValue,
        *,
        quant_min: int = -128,
        quant_max: int = 127,
        axis: int | None = None,
    ):
        self._build(
            {"input": input, "scale": scale, "zero_point": zero_point},
            {
                "axis": int_attr(axis),
                "quant_min": int_attr(quant_min),
                "quant_max": int_attr(quant_max),
            },
        )

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, scale: TensorType, zero_point: TensorType
    ) -> tuple[TensorType, ...]:
        require_float(input, "input")
        if props.int("quant_min") >= props.int("quant_max"):
            raise VerifyException("quant_min must be below quant_max")
        require_int(zero_point, "zero_point")
        _check_qparams(input, scale, zero_point, props.opt_int("axis"))
        return (input,)


# ONNX's dynamic quantisation (onnxruntime's quantize_dynamic makes these): one op each,
# as onnxruntime keeps them; legalization lowers them for targets that do not claim them.

EIGHT_BIT = (DType.I8, DType.U8)


def _check_eight_bit(t: TensorType, what: str) -> None:
    if t.dtype not in EIGHT_BIT:
        raise VerifyException(f"{what} must be i8 or u8, got {t.dtype.value}")


def _check_one_or_vector(t: TensorType, n: Any, what: str) -> None:
    """One element (rank ≤ 1), or a vector of n."""
    if t.rank > 1 or (t.rank == 1 and t.shape[0] != 1 and not may_equal(t.shape[0], n)):
        raise VerifyException(
            f"{what} must be one element or a vector of {n}, got {fmt_shape(t.shape)}"
        )


def _check_zero_point(zp: TensorType | None, of: TensorType, n: Any, what: str) -> None:
    """A zero point of ``of``'s element type: one element (rank ≤ 1), or a vector of n."""
    if zp is None:
        return
    if zp.dtype is not of.dtype:
        raise VerifyException(f"{what} must have element type {of.dtype.value}")
    _check_one_or_vector(zp, n, what)


@irdl_op_definition
class DynamicQuantizeLinearOp(ShapedOp):
    """ONNX ``DynamicQuantizeLinear``: u8 quantisation with parameters from the input's
    range. ``lo = min(0, min x)``, ``hi = max(0, max x)``; ``scale = (hi - lo) / 255`` (1
    when hi = lo, as onnxruntime: an all-zero input); ``zero_point =
    round_half_even(clamp(-lo / scale, 0, 255))``; ``result = saturate(round_half_even(x /
    scale) + zero_point)``, all in f32."""

    name = "mir.dynamic_quantize_linear"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    scale = result_def(TensorType)
    zero_point = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.QUANT))
    assembly_format = (
        "$input attr-dict `:` type($input) `->` "
        "`(` type($result) `,` type($scale) `,` type($zero_point) `)`"
    )

    def __init__(self, input: SSAValue):
        self._build({"input": input})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_dtype(input, DType.F32, "input")
        return (input.with_dtype(DType.U8), TensorType((), DType.F32), TensorType((), DType.U8))


@irdl_op_definition
class MatmulIntegerOp(ShapedOp):
    """ONNX ``MatMulInteger``: ``(lhs - lhs_zero_point) · (rhs - rhs_zero_point)`` exactly
    in i32, ``mir.matmul``'s shapes. Operands i8 or u8; a zero point has its operand's
    type and is one element, or a vector over lhs's rows (dim -2) / rhs's columns (dim
    -1). Unlike ``mir.integer_matmul`` the zero points are values and nothing rescales."""

    name = "mir.matmul_integer"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_zero_point = opt_operand_def(TensorType)
    rhs_zero_point = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.QUANT))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$lhs `,` $rhs (`lhs_zero_point` `(` $lhs_zero_point^ `:` type($lhs_zero_point) `)`)? "
        "(`rhs_zero_point` `(` $rhs_zero_point^ `:` type($rhs_zero_point) `)`)? attr-dict `:` "
        "type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        lhs_zero_point: SSAValue | None = None,
        rhs_zero_point: SSAValue | None = None,
    ):
        self._build(
            {
                "lhs": lhs,
                "rhs": rhs,
                "lhs_zero_point": lhs_zero_point,
                "rhs_zero_point": rhs_zero_point,
            }
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        lhs: TensorType,
        rhs: TensorType,
        lhs_zero_point: TensorType | None = None,
        rhs_zero_point: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        _check_eight_bit(lhs, "lhs")
        _check_eight_bit(rhs, "rhs")
        shape = matmul_shape(lhs, rhs)
        rows = lhs.shape[-2] if lhs.rank > 1 else 1
        cols = rhs.shape[-1] if rhs.rank > 1 else 1
        _check_zero_point(lhs_zero_point, lhs, rows, "lhs_zero_point")
        _check_zero_point(rhs_zero_point, rhs, cols, "rhs_zero_point")
        return (TensorType(shape, DType.I32),)


@irdl_op_definition
class ConvIntegerOp(ShapedOp):
    """ONNX ``ConvInteger``: ``mir.conv`` of ``input - input_zero_point`` with ``weight -
    weight_zero_point`` exactly in i32 (padding adds zeros after the zero point is
    taken). Operands i8 or u8; the input's zero point is one element, the weight's one
    element or a vector over output channels."""

    name = "mir.conv_integer"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    input_zero_point = opt_operand_def(TensorType)
    weight_zero_point = opt_operand_def(TensorType)
    strides = prop_def(I64Array)
    pads = prop_def(I64Array)
    dilations = prop_def(I64Array)
    groups = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.QUANT))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$input `,` $weight (`input_zero_point` `(` $input_zero_point^ `:` "
        "type($input_zero_point) `)`)? (`weight_zero_point` `(` $weight_zero_point^ `:` "
        "type($weight_zero_point) `)`)? `strides` $strides `pads` $pads `dilations` $dilations "
        "`groups` $groups attr-dict `:` type($input) `,` type($weight) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        input_zero_point: SSAValue | None = None,
        weight_zero_point: SSAValue | None = None,
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        groups: int = 1,
    ):
        rank = as_value(input).type.rank  # type: ignore[attr-defined]
        self._build(
            {
                "input": input,
                "weight": weight,
                "input_zero_point": input_zero_point,
                "weight_zero_point": weight_zero_point,
            },
            conv_props(rank, strides, pads, dilations, groups),
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        weight: TensorType,
        input_zero_point: TensorType | None = None,
        weight_zero_point: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        _check_eight_bit(input, "input")
        _check_eight_bit(weight, "weight")
        shape = conv_output_shape(
            input, weight, props.ints("strides"), props.ints("pads"), props.ints("dilations"),
            props.int("groups"),
        )  # fmt: skip
        _check_zero_point(input_zero_point, input, 1, "input_zero_point")
        _check_zero_point(weight_zero_point, weight, weight.shape[0], "weight_zero_point")
        return (TensorType(shape, DType.I32),)


@irdl_op_definition
class DynamicQuantizeMatmulOp(ShapedOp):
    """onnxruntime's ``DynamicQuantizeMatMul``: ``input`` (f32) quantised by
    ``mir.dynamic_quantize_linear`` (u8, its scale and zero point), its
    ``mir.matmul_integer`` with ``weight`` [K, N] (i8 or u8) centred on
    ``weight_zero_point``, the i32 sums cast to f32 and multiplied by ``scale ·
    weight_scale``, then ``bias`` added: all in f32, rounding as that chain does.
    ``weight_scale`` (f32) is one element or one per column; ``weight_zero_point`` has
    the weight's element type and ``weight_scale``'s shape; ``bias`` is a vector over N (or
    one element). The input's leading dims are rows, like ``mir.matmul``'s."""

    name = "mir.dynamic_quantize_matmul"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    weight_scale = operand_def(TensorType)
    weight_zero_point = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(),
        Precision(PrecisionClass.QUANT),
        Fused("dynamic_quantize_linear, matmul_integer, cast to f32, · scale·weight_scale, + bias"),
    )
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$input `,` $weight `scale` `(` $weight_scale `:` type($weight_scale) `)` "
        "(`zero_point` `(` $weight_zero_point^ `:` type($weight_zero_point) `)`)? "
        "(`bias` `(` $bias^ `:` type($bias) `)`)? attr-dict `:` type($input) `,` "
        "type($weight) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        weight_scale: SSAValue,
        weight_zero_point: SSAValue | None = None,
        bias: SSAValue | None = None,
    ):
        self._build(
            {
                "input": input,
                "weight": weight,
                "weight_scale": weight_scale,
                "weight_zero_point": weight_zero_point,
                "bias": bias,
            }
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        weight: TensorType,
        weight_scale: TensorType,
        weight_zero_point: TensorType | None = None,
        bias: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        require_dtype(input, DType.F32, "input")
        _check_eight_bit(weight, "weight")
        require_rank(weight, 2, "weight")
        shape = matmul_shape(input, weight)
        n = weight.shape[1]
        require_dtype(weight_scale, DType.F32, "weight_scale")
        _check_one_or_vector(weight_scale, n, "weight_scale")
        _check_zero_point(weight_zero_point, weight, n, "weight_zero_point")
        if weight_zero_point is not None and weight_zero_point.shape != weight_scale.shape:
            raise VerifyException(
                f"weight_zero_point must have weight_scale's shape {fmt_shape(weight_scale.shape)}"
            )
        if bias is not None:
            _check_bias_vector(bias, n, DType.F32, "bias")
        return (TensorType(shape, DType.F32),)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        q, scale, zp = b.emit(DynamicQuantizeLinearOp(self.input)).results
        acc = b.emit(MatmulIntegerOp(q, self.weight, zp, self.weight_zero_point)).results[0]
        y = b.mul(b.cast(acc, DType.F32), b.mul(scale, self.weight_scale))
        return [y if self.bias is None else b.add(y, self.bias)]


# =====================================================================================
# Fused ops (emitted by fusion and by direct HIR lowering)
# =====================================================================================


def _check_bias_vector(bias: TensorType, n: Any, dtype: DType, what: str) -> None:
    if bias.rank > 1 or (bias.rank == 1 and bias.shape[0] not in (n, 1)):
        raise VerifyException(f"{what} must be a vector of {n} (or one element), got {bias}")
    if bias.dtype is not dtype:
        raise VerifyException(f"{what} must have element type {dtype.value}")


def is_row_bias(bias: TensorType, out: TensorType) -> bool:
    """Whether adding ``bias`` to ``out`` adds a vector over its last dim: N or 1
    elements along the bias's own last dim, every other dim 1, and no more dims than
    ``out`` (rank ≤ 1 always), so the sum keeps ``out``'s shape and the bias's elements
    in order are the vector's."""
    n = out.shape[-1] if out.rank else 1
    return (
        bias.rank <= max(out.rank, 1)
        and all(d == 1 for d in bias.shape[:-1])
        and bias.shape[-1:] in ((), (1,), (n,))
    )


def _check_bias_row(bias: TensorType, out: TensorType) -> None:
    """``is_row_bias``, with the element type; a vector (rank ≤ 1) as every fused op's."""
    n = out.shape[-1] if out.rank else 1
    if bias.rank <= 1:
        _check_bias_vector(bias, n, out.dtype, "bias")
        return
    if not is_row_bias(bias, out):
        raise VerifyException(
            f"bias must be a vector of {n} (or one element) with dims of 1 before its "
            f"last, at most {out.rank} dims, got {bias}"
        )
    if bias.dtype is not out.dtype:
        raise VerifyException(f"bias must have element type {out.dtype.value}")


@irdl_op_definition
class FusedMatmulBiasActOp(ShapedOp):
    """act(x · w + bias), bias a vector over the last dim: N or 1 elements along its
    last dim, any dims before it 1 (at most the result's rank; a run-time [1, N] bias
    needs no reshape). Its elements in order are the vector's."""

    name = "mir.fused_matmul_bias_act"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    activation = prop_def(ActivationAttr, default_value=ActivationAttr(Activation.NONE))
    act_params = opt_prop_def(F64Array)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), Precision(PrecisionClass.COMPUTE), Fused("matmul, add bias, activation")
    )
    assembly_format = (
        "$input `,` $weight `,` $bias (`act` $activation^)? (`act_params` $act_params^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue,
        activation: str = "none",
        act_params: Sequence[float] = (),
    ):
        self._build(
            {"input": input, "weight": weight, "bias": bias},
            activation_props(activation, act_params),
        )

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, weight: TensorType, bias: TensorType
    ) -> tuple[TensorType, ...]:
        (out,) = MatmulOp.infer(props, lhs=input, rhs=weight)
        check_activation(props, out)
        _check_bias_row(bias, out)
        return (out,)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        y = b.add(b.matmul(self.input, self.weight), self.bias)
        return [b.activation(y, p.enum("activation"), p.floats("act_params"))]


DenseOp = MatmulOp | FusedMatmulBiasActOp
"""A dense layer: a matmul, or a fused one with its bias and activation."""


def dense_operands(op: DenseOp) -> tuple[SSAValue, SSAValue, SSAValue | None]:
    """The input, weight and bias (None for a plain matmul) of a dense layer."""
    if isinstance(op, MatmulOp):
        return op.lhs, op.rhs, None
    return op.input, op.weight, op.bias


@irdl_op_definition
class FusedReshapeTransposeOp(ShapedOp):
    """``input`` viewed as ``split``, permuted by ``perm``, viewed as the result: one
    copy for a reshape -> transpose -> reshape chain (DepthToSpace, SpaceToDepth, a
    pixel or channel shuffle). Static shapes; ``split`` and the result hold the input's
    element count."""

    name = "mir.fused_reshape_transpose"
    input = operand_def(TensorType)
    split = prop_def(I64Array)
    perm = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), Precision(PrecisionClass.DATA_MOVEMENT), Fused("reshape, transpose, reshape")
    )
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = (
        "$input `split` $split `perm` $perm attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue, split: Sequence[int], perm: Sequence[int], shape: Sequence[int]
    ):
        t = as_value(input).type
        assert isinstance(t, TensorType)
        self._build(
            {"input": input}, {"split": ints_attr(split), "perm": ints_attr(perm)},
            [t.with_shape(shape)],
        )  # fmt: skip

    def check_result(self, props: Props, *, input: TensorType) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        split, perm = props.ints("split"), props.ints("perm")
        if out.dtype is not input.dtype:
            raise VerifyException("the result must keep the element type")
        if not (input.is_static and out.is_static):
            raise VerifyException("input and result must have static shapes")
        if sorted(perm) != list(range(len(split))):
            raise VerifyException(f"perm {list(perm)} is not a permutation of rank {len(split)}")
        count = math.prod(split)
        if count != input.num_elements() or count != out.num_elements():
            raise VerifyException(
                f"split {list(split)} must hold the {input.num_elements()} elements of the "
                f"input and of the result"
            )

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        out = self.result.type
        moved = b.transpose(b.reshape(self.input, p.ints("split")), p.ints("perm"))
        return [b.reshape(moved, out.shape)]


@irdl_op_definition
class FusedTwoSidedMatmulOp(ShapedOp):
    """``lhs · input · rhs``: ``input`` [..., H, W] times a matrix on each side, ``lhs``
    [M, H] and ``rhs`` [W, K], to [..., M, K]: a separable linear map of the last two
    dims (a linear Resize, a 2-D transform). The products run in the order the graph had
    them, each rounding as ``mir.matmul``: (lhs · input) · rhs, or with ``rhs_first``
    lhs · (input · rhs)."""

    name = "mir.fused_two_sided_matmul"
    lhs = operand_def(TensorType)
    input = operand_def(TensorType)
    rhs = operand_def(TensorType)
    rhs_first = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), Precision(PrecisionClass.COMPUTE), Fused("matmul by lhs, then by rhs")
    )
    assembly_format = (
        "$lhs `,` $input `,` $rhs (`rhs_first` $rhs_first^)? attr-dict `:` "
        "`(` type($lhs) `,` type($input) `,` type($rhs) `)` `->` type($result)"
    )

    def __init__(self, lhs: SSAValue, input: SSAValue, rhs: SSAValue, rhs_first: bool = False):
        self._build({"lhs": lhs, "input": input, "rhs": rhs}, {"rhs_first": flag_attr(rhs_first)})

    @classmethod
    def infer(
        cls, props: Props, *, lhs: TensorType, input: TensorType, rhs: TensorType
    ) -> tuple[TensorType, ...]:
        dtype = require_same_dtype([lhs, input, rhs], "operands")
        require_numeric(input, "operands")
        require_rank(lhs, 2, "lhs")
        require_rank(rhs, 2, "rhs")
        require_min_rank(input, 2, "input")
        if props.flag("rhs_first"):
            inner = TensorType(matmul_shape(input, rhs), dtype)
            return (TensorType(matmul_shape(lhs, inner), dtype),)
        inner = TensorType(matmul_shape(lhs, input), dtype)
        return (TensorType(matmul_shape(inner, rhs), dtype),)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        if self.props().flag("rhs_first"):
            return [b.matmul(self.lhs, b.matmul(self.input, self.rhs))]
        return [b.matmul(b.matmul(self.lhs, self.input), self.rhs)]


def _swap_last_two(t: TensorType) -> TensorType:
    return t.with_shape((*t.shape[:-2], t.shape[-1], t.shape[-2]))


def swap_last_two_perm(rank: int) -> list[int]:
    """The permutation swapping the last two of ``rank`` dims."""
    return [*range(rank - 2), rank - 1, rank - 2]


@irdl_op_definition
class FusedTransposedMatmulOp(ShapedOp):
    """``lhs · rhs`` with the last two dims of ``lhs`` (``transpose_lhs``) and/or of
    ``rhs`` (``transpose_rhs``) swapped first: a run-time transpose read only by a
    matmul (``x · yᵀ`` of two activations, a Gemm's transA/transB on an input, an
    einsum), one op as onnxruntime's FusedMatMul. Rounds as ``mir.matmul`` of the
    transposed operands."""

    name = "mir.fused_transposed_matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    transpose_lhs = opt_prop_def(UnitAttr)
    transpose_rhs = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), Precision(PrecisionClass.COMPUTE), Fused("transpose an operand, matmul")
    )
    assembly_format = (
        "$lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, transpose_lhs: bool, transpose_rhs: bool):
        self._build(
            {"lhs": lhs, "rhs": rhs},
            {"transpose_lhs": flag_attr(transpose_lhs), "transpose_rhs": flag_attr(transpose_rhs)},
        )

    @classmethod
    def matmul_operand_types(
        cls, props: Props, lhs: TensorType, rhs: TensorType
    ) -> tuple[TensorType, TensorType]:
        """The operands as the matmul reads them."""
        if props.flag("transpose_lhs"):
            lhs = _swap_last_two(lhs)
        if props.flag("transpose_rhs"):
            rhs = _swap_last_two(rhs)
        return lhs, rhs

    @classmethod
    def infer(cls, props: Props, *, lhs: TensorType, rhs: TensorType) -> tuple[TensorType, ...]:
        dtype = require_same_dtype([lhs, rhs], "operands")
        require_numeric(lhs, "operands")
        require_min_rank(lhs, 2, "lhs")
        require_min_rank(rhs, 2, "rhs")
        if not (props.flag("transpose_lhs") or props.flag("transpose_rhs")):
            raise VerifyException("transposes neither operand: that is mir.matmul")
        a, b = cls.matmul_operand_types(props, lhs, rhs)
        return (TensorType(matmul_shape(a, b), dtype),)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        lhs, rhs = self.lhs, self.rhs
        if p.flag("transpose_lhs"):
            lhs = b.transpose(lhs, swap_last_two_perm(cast(TensorType, lhs.type).rank))
        if p.flag("transpose_rhs"):
            rhs = b.transpose(rhs, swap_last_two_perm(cast(TensorType, rhs.type).rank))
        return [b.matmul(lhs, rhs)]


@irdl_op_definition
class ScaledMatmulOp(ShapedOp):
    """``lhs · rhs`` times ``scale``, or divided by it with ``divide``: ``mir.matmul``
    then ``mir.mul`` (``mir.div``) by a one-element constant of the element type, and
    rounded as that chain (the scale is rounded to the element type first). One op, as
    onnxruntime's FusedMatMul with its alpha: a product scaled by a constant (attention
    scores ``q · kᵀ / √d`` that no attention fusion took, a Gemm's alpha)."""

    name = "mir.scaled_matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    scale = prop_def(F64Attr)
    divide = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), Precision(PrecisionClass.COMPUTE), Fused("matmul, scale by a constant")
    )
    assembly_format = (
        "$lhs `,` $rhs `scale` $scale (`divide` $divide^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, scale: float, divide: bool = False):
        self._build(
            {"lhs": lhs, "rhs": rhs}, {"scale": float_attr(scale), "divide": flag_attr(divide)}
        )

    @classmethod
    def infer(cls, props: Props, *, lhs: TensorType, rhs: TensorType) -> tuple[TensorType, ...]:
        require_float(lhs, "operands")
        return MatmulOp.infer(props, lhs=lhs, rhs=rhs)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        y = b.matmul(self.lhs, self.rhs)
        scale = b.scalar_like(p.float("scale"), y)
        return [b.div(y, scale) if p.flag("divide") else b.mul(y, scale)]


@irdl_op_definition
class FusedSwigluOp(ShapedOp):
    """silu(gate) · up on the two halves of the last dim of ``input`` [..., 2N] -> [..., N].

    By default up = [0, N) and gate = [N, 2N); ``gate_first`` swaps them.
    """

    name = "mir.fused_swiglu"
    input = operand_def(TensorType)
    gate_first = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), Precision(PrecisionClass.ELEMENTWISE), Fused("narrow the halves, silu(gate) * up")
    )
    assembly_format = (
        "$input (`gate_first` $gate_first^)? attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(self, input: SSAValue, gate_first: bool = False):
        self._build({"input": input}, {"gate_first": flag_attr(gate_first)})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_float(input, "input")
        require_min_rank(input, 1, "input")
        last = input.shape[-1]
        if not isinstance(last, int) or last % 2:
            raise VerifyException(f"the last dim ({last}) must be static and even")
        return (input.with_shape((*input.shape[:-1], last // 2)),)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        n = cast(int, self.result.type.shape[-1])  # static (verified)
        first, second = b.narrow(self.input, -1, 0, n), b.narrow(self.input, -1, n, n)
        gate, up = (first, second) if self.props().flag("gate_first") else (second, first)
        return [b.mul(b.silu(gate), up)]


class FusedResidualNormOp(ShapedOp):
    """(norm(x + residual) · scale + bias, x + residual): the norm and the residual sum."""

    input = operand_def(TensorType)
    residual = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    axis = prop_def(I64Attr)
    epsilon = prop_def(F64Attr)
    result = result_def(TensorType)
    sum = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION), Fused("add, then the norm"))
    assembly_format = (
        "$input `,` $residual `,` $scale (`,` $bias^)? `axis` $axis `eps` $epsilon attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        residual: SSAValue,
        scale: SSAValue,
        bias: SSAValue | None = None,
        *,
        axis: int,
        epsilon: float = 1e-5,
    ):
        self._build(
            {"input": input, "residual": residual, "scale": scale, "bias": bias},
            {"axis": int_attr(axis), "epsilon": float_attr(epsilon)},
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        residual: TensorType,
        scale: TensorType,
        bias: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        (total,) = AddOp.infer(props, lhs=input, rhs=residual)
        check_norm_operands(total, scale, bias, props.int("axis"))
        return (total, total)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        total = b.add(self.input, self.residual)
        norm_type = RmsNormOp if isinstance(self, FusedResidualRmsNormOp) else LayerNormOp
        norm = norm_type(
            total, self.scale, self.bias, axis=p.int("axis"), epsilon=p.float("epsilon")
        )
        return [b.emit(norm).results[0], total]


@irdl_op_definition
class FusedResidualRmsNormOp(FusedResidualNormOp):
    """(rms_norm(x + residual) · scale [+ bias], x + residual)."""

    name = "mir.fused_residual_rms_norm"


@irdl_op_definition
class FusedResidualLayerNormOp(FusedResidualNormOp):
    """(layer_norm(x + residual) · scale [+ bias], x + residual)."""

    name = "mir.fused_residual_layer_norm"


BIASED_CONV_SPATIAL_DIMS = (1, 2, 3)
"""The spatial ranks of the convs with a bias that import as ``mir.fused_conv_bias_act``
(ONNX's 1-, 2- and 3-D convs): a target whose fused conv kernel takes fewer has them
split (``split-conv-bias``)."""


@irdl_op_definition
class FusedConvBiasActOp(ShapedOp):
    """act(conv(x, w) + bias[C_out] (+ residual)).

    An ONNX Conv with a bias imports as one (no residual, no activation), as TOSA's and
    onnxruntime's convs hold their bias; ``fuse`` folds a residual and an activation into
    it, or splits it into ``mir.conv`` and a bias add for a target whose fused conv kernel
    does not take it (``split-conv-bias``)."""

    name = "mir.fused_conv_bias_act"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    strides = prop_def(I64Array)
    pads = prop_def(I64Array)
    dilations = prop_def(I64Array)
    groups = prop_def(I64Attr)
    activation = prop_def(ActivationAttr, default_value=ActivationAttr(Activation.NONE))
    act_params = opt_prop_def(F64Array)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(),
        Precision(PrecisionClass.COMPUTE),
        Fused("conv, add per-channel bias (and residual), activation"),
    )
    assembly_format = (
        "$input `,` $weight `,` $bias (`residual` $residual^)? `strides` $strides `pads` $pads "
        "`dilations` $dilations `groups` $groups (`act` $activation^)? "
        "(`act_params` $act_params^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue,
        residual: SSAValue | None = None,
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        groups: int = 1,
        activation: str = "none",
        act_params: Sequence[float] = (),
    ):
        rank = as_value(input).type.rank  # type: ignore[attr-defined]
        props = conv_props(rank, strides, pads, dilations, groups)
        props.update(activation_props(activation, act_params))
        self._build({"input": input, "weight": weight, "bias": bias, "residual": residual}, props)

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        weight: TensorType,
        bias: TensorType,
        residual: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        (out,) = ConvOp.infer(props, input=input, weight=weight)
        check_activation(props, out)
        if bias.shape != (out.shape[1],) or bias.dtype is not out.dtype:
            raise VerifyException(f"bias must be [{out.shape[1]}] of {out.dtype.value}")
        if residual is not None and residual != out:
            raise VerifyException(f"residual must have the output type {out}")
        return (out,)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        y = b.conv(
            self.input, self.weight, strides=p.ints("strides"), pads=p.ints("pads"),
            dilations=p.ints("dilations"), groups=p.int("groups"),
        )  # fmt: skip
        y = b.add(y, b.channel_view(self.bias, cast(TensorType, y.type).rank))
        if self.residual is not None:
            y = b.add(y, self.residual)
        return [b.activation(y, p.enum("activation"), p.floats("act_params"))]


@irdl_op_definition
class FusedScaleShiftActOp(ShapedOp):
    """act(x · scale[C] + shift[C]) along axis 1 of ``x`` [N, C, ...]: an inference batch
    norm, or any per-channel affine, with its activation (a batch norm that no conv
    before it can take, as after a concat)."""

    name = "mir.fused_scale_shift_act"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    shift = operand_def(TensorType)
    activation = prop_def(ActivationAttr, default_value=ActivationAttr(Activation.NONE))
    act_params = opt_prop_def(F64Array)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(),
        Precision(PrecisionClass.ELEMENTWISE),
        InPlace(),
        Fused("mul by the per-channel scale, add the shift, activation"),
    )
    assembly_format = (
        "$input `,` $scale `,` $shift (`act` $activation^)? (`act_params` $act_params^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        scale: SSAValue,
        shift: SSAValue,
        activation: str = "none",
        act_params: Sequence[float] = (),
    ):
        self._build(
            {"input": input, "scale": scale, "shift": shift},
            activation_props(activation, act_params),
        )

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, scale: TensorType, shift: TensorType
    ) -> tuple[TensorType, ...]:
        require_float(input, "input")
        require_min_rank(input, 2, "input")
        for what, t in (("scale", scale), ("shift", shift)):
            if t.shape != (input.shape[1],) or t.dtype is not input.dtype:
                raise VerifyException(f"{what} must be [{input.shape[1]}] of {input.dtype.value}")
        check_activation(props, input)
        return (input,)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        rank = cast(TensorType, self.input.type).rank
        y = b.add(b.mul(self.input, b.channel_view(self.scale, rank)),
                  b.channel_view(self.shift, rank))  # fmt: skip
        return [b.activation(y, p.enum("activation"), p.floats("act_params"))]


def cell_state_type(gates: TensorType, gate_order: Sequence[int], k: int, what: str) -> TensorType:
    """The [..., H] state of a recurrent cell whose float ``gates`` [..., k·H] hold k blocks
    of H, ``gate_order`` a permutation of them; VerifyException where they are not."""
    require_float(gates, what)
    require_min_rank(gates, 1, what)
    if sorted(gate_order) != list(range(k)):
        raise VerifyException(f"gate_order {list(gate_order)} is not a permutation of 0..{k - 1}")
    last = gates.shape[-1]
    if not isinstance(last, int) or last % k:
        raise VerifyException(f"the gates' last dim ({last}) must be static and {k}·hidden")
    return gates.with_shape((*gates.shape[:-1], last // k))


LSTM_GATES = ("input", "output", "forget", "cell")
"""The LSTM gates in the order ``mir.fused_lstm_cell``'s ``gate_order`` lists their
blocks (ONNX's order: i, o, f, c)."""


@irdl_op_definition
class FusedLstmCellOp(ShapedOp):
    """One LSTM step's gates and state update on the pre-activation ``gates`` [..., 4·H]
    (x·Wᵀ + h·Rᵀ + biases: four blocks of H along the last dim) and the previous cell
    state ``prev_cell`` [..., H]:

    i, f, o = sigmoid of their blocks; g = tanh of the cell block;
    cell = f · prev_cell + i · g; hidden = o · tanh(cell).

    ``gate_order`` gives the block of the input, output, forget and cell gates, in that
    order: [0, 1, 2, 3] is ONNX's i, o, f, c; [0, 3, 1, 2] is PyTorch's and Keras's
    i, f, g, o. Results: (hidden, cell).
    """

    name = "mir.fused_lstm_cell"
    gates = operand_def(TensorType)
    prev_cell = operand_def(TensorType)
    gate_order = prop_def(I64Array)
    hidden = result_def(TensorType)
    cell = result_def(TensorType)
    traits = traits_def(
        Pure(),
        Precision(PrecisionClass.ELEMENTWISE),
        Fused("narrow the four gate blocks, sigmoid / tanh, cell = f·c + i·g, o·tanh(cell)"),
    )
    assembly_format = (
        "$gates `,` $prev_cell `gate_order` $gate_order attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self, gates: SSAValue, prev_cell: SSAValue, gate_order: Sequence[int] = (0, 1, 2, 3)
    ):
        self._build({"gates": gates, "prev_cell": prev_cell}, {"gate_order": ints_attr(gate_order)})

    @classmethod
    def infer(
        cls, props: Props, *, gates: TensorType, prev_cell: TensorType
    ) -> tuple[TensorType, ...]:
        cell = cell_state_type(gates, props.ints("gate_order"), len(LSTM_GATES), "gates")
        if prev_cell != cell:
            raise VerifyException(f"prev_cell must be {cell} (the gates' shape, hidden wide)")
        return (cell, cell)

    def gate_blocks(self) -> dict[str, int]:
        """Gate name (``LSTM_GATES``) -> the block of the gates it reads."""
        return dict(zip(LSTM_GATES, self.props().ints("gate_order"), strict=True))

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        rank = cast(TensorType, self.gates.type).rank
        h = cast(int, self.cell.type.shape[-1])  # static (verified)
        block = self.gate_blocks()

        def gate(name: str) -> SSAValue:
            return b.narrow(self.gates, rank - 1, block[name] * h, h)

        i, f = b.sigmoid(gate("input")), b.sigmoid(gate("forget"))
        cell = b.add(b.mul(f, self.prev_cell), b.mul(i, b.tanh(gate("cell"))))
        return [b.mul(b.sigmoid(gate("output")), b.tanh(cell)), cell]


GRU_GATES = ("update", "reset", "new")
"""The GRU gates in the order ``mir.fused_gru_cell``'s ``gate_order`` lists their blocks
(ONNX's order: z, r, h)."""


@irdl_op_definition
class FusedGruCellOp(ShapedOp):
    """One GRU step (``linear_before_reset``, as PyTorch's GRU and GRUCell compute it) on
    the input projection ``gx`` = x·Wᵀ + b_W and the recurrent one ``gh`` = h·Rᵀ + b_R
    [..., 3·H] (three blocks of H along the last dim each) and the previous hidden state
    ``prev`` [..., H]:

    r = sigmoid(gx_r + gh_r); z = sigmoid(gx_z + gh_z); n = tanh(gx_n + r · gh_n);
    hidden = (1 - z) · n + z · prev.

    ``gate_order`` gives the block of the update, reset and new gates, in that order, in
    both ``gx`` and ``gh``: [0, 1, 2] is ONNX's z, r, h; [1, 0, 2] is PyTorch's r, z, n.
    Each step rounds to the element type as the chain of primitives does: the executor
    and the C kernel compute what their own unfused chains compute, bit for bit (the C
    kernel's sigmoid and tanh are libm's, so it meets the numpy executor to tolerance).
    """

    name = "mir.fused_gru_cell"
    gx = operand_def(TensorType)
    gh = operand_def(TensorType)
    prev = operand_def(TensorType)
    gate_order = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(),
        Precision(PrecisionClass.ELEMENTWISE),
        Fused("narrow the gate blocks, r, z = sigmoid, n = tanh(x_n + r·h_n), (1 - z)·n + z·h"),
    )
    assembly_format = (
        "$gx `,` $gh `,` $prev `gate_order` $gate_order attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self, gx: SSAValue, gh: SSAValue, prev: SSAValue, gate_order: Sequence[int] = (0, 1, 2)
    ):
        self._build({"gx": gx, "gh": gh, "prev": prev}, {"gate_order": ints_attr(gate_order)})

    @classmethod
    def infer(
        cls, props: Props, *, gx: TensorType, gh: TensorType, prev: TensorType
    ) -> tuple[TensorType, ...]:
        hidden = cell_state_type(gx, props.ints("gate_order"), len(GRU_GATES), "gx")
        if gh != gx:
            raise VerifyException(f"gh must be {gx} (gx's type)")
        if prev != hidden:
            raise VerifyException(f"prev must be {hidden} (the gates' shape, hidden wide)")
        return (hidden,)

    def gate_blocks(self) -> dict[str, int]:
        """Gate name (``GRU_GATES``) -> the block of gx and gh it reads."""
        return dict(zip(GRU_GATES, self.props().ints("gate_order"), strict=True))

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        t = cast(TensorType, self.gx.type)
        h = cast(int, self.result.type.shape[-1])  # static (verified)
        block = self.gate_blocks()

        def gate(v: SSAValue, name: str) -> SSAValue:
            return b.narrow(v, t.rank - 1, block[name] * h, h)

        r = b.sigmoid(b.add(gate(self.gx, "reset"), gate(self.gh, "reset")))
        z = b.sigmoid(b.add(gate(self.gx, "update"), gate(self.gh, "update")))
        n = b.tanh(b.add(gate(self.gx, "new"), b.mul(r, gate(self.gh, "new"))))
        return [b.add(b.mul(b.sub(1.0, z), n), b.mul(z, self.prev))]


@irdl_op_definition
class FusedAttentionBlockOp(ShapedOp):
    """A whole attention block on ``hidden`` [B, S, E]:

    qkv = hidden · qkv_weight (+ qkv_bias), columns [q (H·D) | k (H_kv·D) | v (H_kv·D)];
    heads split to [B, H, S, D]; rope on q and k when cos/sin are given; attention with
    ``mask_kind`` (and ``mask``; ``zero_nan`` as ``mir.attention``'s); heads merged to
    [B, S, H·D]; · out_weight (+ out_bias).
    """

    name = "mir.fused_attention_block"
    hidden = operand_def(TensorType)
    qkv_weight = operand_def(TensorType)
    out_weight = operand_def(TensorType)
    qkv_bias = opt_operand_def(TensorType)
    out_bias = opt_operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    cos = opt_operand_def(TensorType)
    sin = opt_operand_def(TensorType)
    num_heads = prop_def(I64Attr)
    num_kv_heads = prop_def(I64Attr)
    head_dim = prop_def(I64Attr)
    mask_kind = prop_def(MaskKindAttr, default_value=MaskKindAttr(MaskKind.NONE))
    scale = opt_prop_def(F64Attr)
    zero_nan = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(),
        Precision(PrecisionClass.COMPUTE),
        Fused("qkv matmul, narrows, heads, rope, attention, out matmul"),
    )
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$hidden `,` $qkv_weight `,` $out_weight "
        "(`qkv_bias` `(` $qkv_bias^ `:` type($qkv_bias) `)`)? "
        "(`out_bias` `(` $out_bias^ `:` type($out_bias) `)`)? "
        "(`mask` `(` $mask^ `:` type($mask) `)`)? "
        "(`rope` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)? "
        "`heads` $num_heads `kv_heads` $num_kv_heads `head_dim` $head_dim "
        "(`kind` $mask_kind^)? (`scale` $scale^)? (`zero_nan` $zero_nan^)? attr-dict `:` "
        "`(` type($hidden) `,` type($qkv_weight) `,` type($out_weight) `)` `->` type($result)"
    )

    def __init__(
        self,
        hidden: SSAValue,
        qkv_weight: SSAValue,
        out_weight: SSAValue,
        *,
        num_heads: int,
        num_kv_heads: int,
        head_dim: int,
        qkv_bias: SSAValue | None = None,
        out_bias: SSAValue | None = None,
        mask: SSAValue | None = None,
        cos: SSAValue | None = None,
        sin: SSAValue | None = None,
        mask_kind: str = "none",
        scale: float | None = None,
        zero_nan: bool = False,
    ):
        if mask is not None and mask_kind == "none":
            mask_kind = "explicit"
        self._build(
            {
                "hidden": hidden,
                "qkv_weight": qkv_weight,
                "out_weight": out_weight,
                "qkv_bias": qkv_bias,
                "out_bias": out_bias,
                "mask": mask,
                "cos": cos,
                "sin": sin,
            },
            {
                "num_heads": int_attr(num_heads),
                "num_kv_heads": int_attr(num_kv_heads),
                "head_dim": int_attr(head_dim),
                "mask_kind": enum_attr(MaskKind, mask_kind),
                "scale": float_attr(scale),
                "zero_nan": flag_attr(zero_nan),
            },
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        hidden: TensorType,
        qkv_weight: TensorType,
        out_weight: TensorType,
        qkv_bias: TensorType | None = None,
        out_bias: TensorType | None = None,
        mask: TensorType | None = None,
        cos: TensorType | None = None,
        sin: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        require_rank(hidden, 3, "hidden")
        require_float(hidden, "hidden")
        h, hk, d = props.int("num_heads"), props.int("num_kv_heads"), props.int("head_dim")
        if min(h, hk, d) <= 0 or h % hk:
            raise VerifyException(f"heads {h} must be a positive multiple of kv_heads {hk}")
        b, s, e = hidden.shape
        qkv_cols = (h + 2 * hk) * d
        if qkv_weight.shape != (e, qkv_cols) or qkv_weight.dtype is not hidden.dtype:
            raise VerifyException(f"qkv_weight must be [{e}, {qkv_cols}], got {qkv_weight}")
        if out_weight.rank != 2 or out_weight.shape[0] != h * d:
            raise VerifyException(f"out_weight must be [{h * d}, E_out], got {out_weight}")
        if qkv_bias is not None:
            _check_bias_vector(qkv_bias, qkv_cols, hidden.dtype, "qkv_bias")
        e_out = out_weight.shape[1]
        if out_bias is not None:
            _check_bias_vector(out_bias, e_out, hidden.dtype, "out_bias")
        if (cos is None) != (sin is None):
            raise VerifyException("cos and sin come together")
        q = TensorType((b, h, s, d), hidden.dtype)
        kv = TensorType((b, hk, s, d), hidden.dtype)
        if cos is not None and sin is not None:
            # Rope rotates k too: cos/sin must broadcast to its (possibly fewer) heads.
            rope_check(q, cos, sin, None)
            rope_check(kv, cos, sin, None)
        attention_shape(q, kv, kv, mask, props.enum("mask_kind"))
        return (TensorType((b, s, e_out), hidden.dtype),)

    def decompose(self, b: GraphBuilder) -> list[SSAValue]:
        p = self.props()
        h, hk, d = p.int("num_heads"), p.int("num_kv_heads"), p.int("head_dim")
        qkv = b.matmul(self.hidden, self.qkv_weight)
        if self.qkv_bias is not None:
            qkv = b.add(qkv, self.qkv_bias)
        q = b.split_heads(b.narrow(qkv, 2, 0, h * d), h, d)
        k = b.split_heads(b.narrow(qkv, 2, h * d, hk * d), hk, d)
        v = b.split_heads(b.narrow(qkv, 2, (h + hk) * d, hk * d), hk, d)
        if self.cos is not None and self.sin is not None:
            q, k = b.rope(q, self.cos, self.sin), b.rope(k, self.cos, self.sin)
        attn = AttentionOp(
            q, k, v, self.mask, mask_kind=p.enum("mask_kind").value, scale=p.opt_float("scale"),
            zero_nan=p.flag("zero_nan"),
        )  # fmt: skip
        out = b.matmul(b.merge_heads(b.emit(attn).results[0]), self.out_weight)
        if self.out_bias is not None:
            out = b.add(out, self.out_bias)
        return [out]


# =====================================================================================
# Integer kernels (made by quant-to-integer)
# =====================================================================================


class IntegerLinearOp(ShapedOp):
    """A quantised matmul/conv on integers: ``acc = Σ (input - input_zero_point) · weight``
    accumulated exactly (int32 on a device), then ``act(f32(acc) · scale + bias)`` in f32,
    ``scale`` being the product of the input's and the weight's scales (per output
    channel, or one element); with ``out_scale`` the result is that value quantised:
    ``saturate(round_half_even(· / out_scale) + out_zero_point)`` into the result's
    integer type (requantisation). With ``table`` (256 values of the result's type, as
    raw bytes) each requantised integer ``q`` is then looked up, ``table[q mod 256]``: an
    elementwise function of ``q`` tabulated at every value (a quantised activation, a
    requantisation to another scale), which the op then applies exactly. A conv's
    weight is symmetric i8 (no zero point); a matmul's may be u8 or i8 with a
    ``weight_zero_point`` (``Σ (input - input_zero_point) · (weight - weight_zero_point)``:
    an attention's product of two activations)."""

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    input_zero_point = prop_def(I64Attr, default_value=int_attr(0))
    activation = prop_def(ActivationAttr, default_value=ActivationAttr(Activation.NONE))
    out_scale = opt_prop_def(F64Attr)
    out_zero_point = prop_def(I64Attr, default_value=int_attr(0))
    table = opt_prop_def(RawDataAttr)
    result = result_def(TensorType)
    # the quantisation scheme fixes its types: mixed precision leaves them alone
    traits = traits_def(Pure(), Precision(PrecisionClass.QUANT))
    INFER_RESULTS: ClassVar[bool] = False

    def _common_props(
        self,
        input_zero_point: int,
        activation: str,
        out_scale: float | None,
        out_zero_point: int,
        out_dtype: DType | str,
        table: np.ndarray | None,
    ) -> dict[str, Attribute | None]:
        data = None
        if table is not None:  # its values as the result's integers (the table's bytes)
            data = RawDataAttr(np.asarray(table, DType(out_dtype).numpy).tobytes())
        return {
            "input_zero_point": int_attr(input_zero_point),
            "activation": enum_attr(Activation, activation),
            "out_scale": float_attr(out_scale),
            "out_zero_point": int_attr(out_zero_point),
            "table": data,
        }

    def check_integer(
        self, props: Props, input: TensorType, weight: TensorType, scale: TensorType,
        bias: TensorType | None, shape: Sequence[Any], channels: Any,
        weight_zero_point: int | None = None,
    ) -> None:  # fmt: skip
        """``weight_zero_point``: the op's (a matmul's), None for a symmetric i8 weight."""
        for t, what in ((input, "input"), (weight, "weight")):
            if t.dtype not in (DType.I8, DType.U8):
                raise VerifyException(f"{what} must be i8 or u8, got {t.dtype.value}")
        act = props.enum("activation")
        if act in ACTIVATION_PARAMS or act is Activation.HARD_SWISH:
            raise VerifyException(f"the {act.value} activation is not an integer epilogue")
        if weight_zero_point is None and weight.dtype is not DType.I8:
            raise VerifyException("weight must be i8 (symmetric)")
        zero_points = [("input", input, props.int("input_zero_point"))]
        if weight_zero_point is not None:
            zero_points.append(("weight", weight, weight_zero_point))
        for what, t, zero in zero_points:
            lo, hi = t.dtype.int_range
            if not lo <= zero <= hi:
                raise VerifyException(f"{what}_zero_point must be a {t.dtype.value} value")
        _check_bias_vector(scale, channels, DType.F32, "scale")
        if bias is not None:
            _check_bias_vector(bias, channels, DType.F32, "bias")
        out = self.result.type
        assert isinstance(out, TensorType)
        quantised = props.opt_float("out_scale") is not None
        want = out.dtype if quantised else DType.F32
        if quantised and out.dtype not in (DType.I8, DType.U8):
            raise VerifyException("a requantised result must be i8 or u8")
        if quantised:
            lo, hi = out.dtype.int_range
            if not lo <= props.int("out_zero_point") <= hi:
                raise VerifyException(f"out_zero_point must be a {out.dtype.value} value")
        table = props.get("table")
        if table is not None:
            if not quantised:
                raise VerifyException("a table looks up requantised integers: it needs out_scale")
            size = len(cast(RawDataAttr, table).data)
            if size != 256:
                raise VerifyException(
                    f"table must hold 256 {out.dtype.value} values, got {size} bytes"
                )
        if out != TensorType(shape, want):
            raise VerifyException(f"the result must be {TensorType(shape, want)}, got {out}")


@irdl_op_definition
class IntegerMatmulOp(IntegerLinearOp):
    """``input [.., M, K] · weight [.., K, N]`` on integers (see ``IntegerLinearOp``;
    batch dims broadcast like ``mir.matmul``); scale and bias over N."""

    name = "mir.integer_matmul"
    weight_zero_point = prop_def(I64Attr, default_value=int_attr(0))
    assembly_format = (
        "$input `,` $weight `scale` $scale (`bias` $bias^)? (`zero_point` $input_zero_point^)? "
        "(`weight_zero_point` $weight_zero_point^)? "
        "(`act` $activation^)? (`out_scale` $out_scale^)? (`out_zero_point` $out_zero_point^)? "
        "(`table` $table^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        scale: SSAValue,
        bias: SSAValue | None = None,
        *,
        input_zero_point: int = 0,
        weight_zero_point: int = 0,
        activation: str = "none",
        out_scale: float | None = None,
        out_zero_point: int = 0,
        out_dtype: DType | str = DType.F32,
        table: np.ndarray | None = None,
    ):
        a, w = as_value(input).type, as_value(weight).type
        assert isinstance(a, TensorType) and isinstance(w, TensorType)
        shape = matmul_shape(a.with_dtype(DType.F32), w.with_dtype(DType.F32))
        props = self._common_props(
            input_zero_point, activation, out_scale, out_zero_point, out_dtype, table
        )
        props["weight_zero_point"] = int_attr(weight_zero_point)
        self._build(
            {"input": input, "weight": weight, "scale": scale, "bias": bias},
            props,
            [TensorType(shape, out_dtype)],
        )

    def check_result(
        self,
        props: Props,
        *,
        input: TensorType,
        weight: TensorType,
        scale: TensorType,
        bias: TensorType | None = None,
    ) -> None:
        if weight.rank < 2 or input.rank < 2:
            raise VerifyException("integer matmul takes an input [.., M, K], a weight [.., K, N]")
        shape = matmul_shape(input.with_dtype(DType.F32), weight.with_dtype(DType.F32))
        self.check_integer(
            props, input, weight, scale, bias, shape, weight.shape[-1],
            props.int("weight_zero_point"),
        )  # fmt: skip


@irdl_op_definition
class IntegerConvOp(IntegerLinearOp):
    """A convolution on integers (see ``IntegerLinearOp``), NCHW like ``mir.conv``; scale
    and bias per output channel."""

    name = "mir.integer_conv"
    strides = prop_def(I64Array)
    pads = prop_def(I64Array)
    dilations = prop_def(I64Array)
    groups = prop_def(I64Attr)
    assembly_format = (
        "$input `,` $weight `scale` $scale (`bias` $bias^)? `strides` $strides `pads` $pads "
        "`dilations` $dilations `groups` $groups (`zero_point` $input_zero_point^)? "
        "(`act` $activation^)? (`out_scale` $out_scale^)? (`out_zero_point` $out_zero_point^)? "
        "(`table` $table^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        scale: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        groups: int = 1,
        input_zero_point: int = 0,
        activation: str = "none",
        out_scale: float | None = None,
        out_zero_point: int = 0,
        out_dtype: DType | str = DType.F32,
        table: np.ndarray | None = None,
    ):
        x, w = as_value(input).type, as_value(weight).type
        assert isinstance(x, TensorType) and isinstance(w, TensorType)
        k = x.rank - 2
        strides, pads = list(strides or [1] * k), list(pads or [0] * (2 * k))
        dilations = list(dilations or [1] * k)
        props = conv_props(x.rank, strides, pads, dilations, groups)
        props.update(
            self._common_props(
                input_zero_point, activation, out_scale, out_zero_point, out_dtype, table
            )
        )
        shape = conv_output_shape(x, w, strides, pads, dilations, groups)
        self._build(
            {"input": input, "weight": weight, "scale": scale, "bias": bias},
            props,
            [TensorType(shape, out_dtype)],
        )

    def check_result(
        self,
        props: Props,
        *,
        input: TensorType,
        weight: TensorType,
        scale: TensorType,
        bias: TensorType | None = None,
    ) -> None:
        shape = conv_output_shape(
            input, weight, props.ints("strides"), props.ints("pads"), props.ints("dilations"),
            props.int("groups"),
        )  # fmt: skip
        self.check_integer(props, input, weight, scale, bias, shape, weight.shape[0])


@irdl_op_definition
class QuantizedAddOp(ShapedOp):
    """``quantize(act(dequantize(lhs) + dequantize(rhs)))`` on 8-bit integers, each per
    tensor (its scale and zero point are properties), the operands broadcast like NumPy
    (a bias vector, an attention mask): onnxruntime's QLinearAdd, made by
    quant-to-integer of a quantized model's add. Computed as those ops compute (each
    operand dequantized, their f32 sum, the activation -- none or relu --, the
    quantize), it gives their integers."""

    name = "mir.quantized_add"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_scale = prop_def(F64Attr)
    lhs_zero_point = prop_def(I64Attr)
    rhs_scale = prop_def(F64Attr)
    rhs_zero_point = prop_def(I64Attr)
    out_scale = prop_def(F64Attr)
    out_zero_point = prop_def(I64Attr)
    activation = prop_def(ActivationAttr, default_value=ActivationAttr(Activation.NONE))
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), Precision(PrecisionClass.QUANT))
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = (
        "$lhs `,` $rhs `scales` $lhs_scale `,` $rhs_scale `,` $out_scale `zero_points` "
        "$lhs_zero_point `,` $rhs_zero_point `,` $out_zero_point (`act` $activation^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        scales: tuple[float, float, float],
        zero_points: tuple[int, int, int],
        out_dtype: DType,
        activation: str = "none",
    ):
        props: dict[str, Attribute | None] = {"activation": enum_attr(Activation, activation)}
        for side, scale, zero in zip(("lhs", "rhs", "out"), scales, zero_points, strict=True):
            props[f"{side}_scale"] = float_attr(scale)
            props[f"{side}_zero_point"] = int_attr(zero)
        a, b = (cast(TensorType, as_value(v).type) for v in (lhs, rhs))
        shape = broadcast_shapes(a.shape, b.shape)
        self._build({"lhs": lhs, "rhs": rhs}, props, [TensorType(shape, out_dtype)])

    def check_result(self, props: Props, *, lhs: TensorType, rhs: TensorType) -> None:
        out = self.result.type
        for t, side in ((lhs, "lhs"), (rhs, "rhs"), (out, "out")):
            if t.dtype not in (DType.I8, DType.U8):
                raise VerifyException(f"{side} must be i8 or u8, got {t.dtype.value}")
            lo, hi = t.dtype.int_range
            if not lo <= props.int(f"{side}_zero_point") <= hi:
                raise VerifyException(f"{side}_zero_point must be a {t.dtype.value} value")
            scale = props.float(f"{side}_scale")
            if not (math.isfinite(scale) and scale > 0):
                raise VerifyException(f"{side}_scale must be positive and finite, got {scale}")
        shape = broadcast_shapes(lhs.shape, rhs.shape)  # raises if they do not broadcast
        if out.shape != shape:
            raise VerifyException(
                f"the result must have the operands' broadcast shape {fmt_shape(shape)}, "
                f"got {fmt_shape(out.shape)}"
            )
        if props.enum("activation") not in (Activation.NONE, Activation.RELU):
            raise VerifyException("the activation must be none or relu")


QUANTIZED_POOL_TAPS = 65536
"""Most taps a ``mir.quantized_avg_pool`` window may have: its integer sum (255 at most
per tap) is then below 2**24, exact in f32."""


@irdl_op_definition
class QuantizedAvgPoolOp(PoolOp):
    """``quantize(avg_pool(dequantize(input)))`` on 8-bit integers, per tensor (the
    scales and zero points are properties), the result of the input's type:
    onnxruntime's QLinearAveragePool and QLinearGlobalAveragePool (a global pool is the
    window of all spatial dims), made by quant-to-integer of a quantized model's average
    pools. Integer-exact where it can be: per window, the int32 sum ``S`` of
    ``input - x_zero_point`` over the taps inside the input (a padded tap adds 0, the
    dequantized padding) and its count ``n`` as ``mir.avg_pool`` counts it (with or
    without ``count_include_pad``, never a ceil-mode window's extra cells); then, in
    f32, ``y = saturate(round_half_even((f32(S) / f32(n)) * m) + y_zero_point)`` with
    ``m = f32(x_scale / y_scale)`` (the quotient taken in f64), each step rounded to f32
    (``S`` and ``n`` are exact there: at most 65536 taps). It is that of
    ``quantize(mul(avg_pool(dequantize(input, 1, x_zero_point)), m), 1, y_zero_point)``,
    the ops targets without its kernel run; within a step of the f32 chain."""

    name = "mir.quantized_avg_pool"
    count_include_pad = opt_prop_def(UnitAttr)
    x_scale = prop_def(F64Attr)
    x_zero_point = prop_def(I64Attr)
    y_scale = prop_def(F64Attr)
    y_zero_point = prop_def(I64Attr)
    traits = traits_def(Precision(PrecisionClass.QUANT))
    assembly_format = (
        "$input `kernel` $kernel `strides` $strides `pads` $pads `dilations` $dilations "
        "(`ceil_mode` $ceil_mode^)? (`count_include_pad` $count_include_pad^)? `scales` "
        "$x_scale `,` $y_scale `zero_points` $x_zero_point `,` $y_zero_point attr-dict `:` "
        "type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        kernel: Sequence[int],
        scales: tuple[float, float],
        zero_points: tuple[int, int],
        count_include_pad: bool = False,
        **window: Any,
    ):
        """``window``: the strides, pads, dilations and ceil_mode of ``pool_props``."""
        rank = as_value(input).type.rank  # type: ignore[attr-defined]
        props = pool_props(rank, kernel, **window)
        props["count_include_pad"] = flag_attr(count_include_pad)
        for side, scale, zero in zip("xy", scales, zero_points, strict=True):
            props[f"{side}_scale"] = float_attr(scale)
            props[f"{side}_zero_point"] = int_attr(zero)
        self._build({"input": input}, props)

    @classmethod
    def check_element_type(cls, input: TensorType) -> None:
        if input.dtype not in (DType.I8, DType.U8):
            raise VerifyException(f"input must be i8 or u8, got {input.dtype.value}")

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        result = super().infer(props, input=input)
        lo, hi = input.dtype.int_range
        for side in "xy":
            if not lo <= props.int(f"{side}_zero_point") <= hi:
                raise VerifyException(f"{side}_zero_point must be a {input.dtype.value} value")
            scale = props.float(f"{side}_scale")
            if not (math.isfinite(scale) and scale > 0):
                raise VerifyException(f"{side}_scale must be positive and finite, got {scale}")
        taps = math.prod(props.ints("kernel"))
        if taps > QUANTIZED_POOL_TAPS:
            raise VerifyException(
                f"a window of {taps} taps is more than {QUANTIZED_POOL_TAPS} (its sum must "
                "be exact in f32)"
            )
        return result


SOFTMAX_ONE = 2**30
"""The fixed-point one of ``mir.quantized_softmax``'s exponentials: ``T[0]``."""


def softmax_table(x_scale: float) -> np.ndarray:
    """``mir.quantized_softmax``'s exponentials, ``T[d] = round(2**30 * exp(-d * x_scale))``
    for ``d = 0..255`` (int64; f64 ``math.exp``, half away from zero), computed once where
    the op runs (the reference, the C emitter, the lowering): every one of them the same
    integers."""
    return np.array([math.floor(SOFTMAX_ONE * math.exp(-d * x_scale) + 0.5) for d in range(256)])


@irdl_op_definition
class QuantizedSoftmaxOp(ShapedOp):
    """``quantize(softmax(dequantize(input)))`` along ``axis`` on 8-bit integers, per
    tensor (the scales and the result's zero point are properties; the input's zero
    point cancels out): onnxruntime's QLinearSoftmax, made by quant-to-integer of a
    quantized model's softmax. Per row along ``axis``, with ``m`` the row's largest
    integer and ``T = softmax_table(x_scale)`` (256 integers ``floor(2**30 * exp(-d *
    x_scale) + 1/2)``, d = 0..255, in f64: the exponentials of the dequantized
    differences in fixed point, computed at compile time by whatever runs the op -- the
    reference, the C emitter, which passes them to its kernel, the lowering --, so that
    no libm's ``exp`` can set them apart): ``e_k = T[m - input_k]``, ``S = sum_k e_k``
    exactly (int64: any order gives it), then ``y_k = saturate(round_half_even(f32(f32(e_k)
    / f32(S)) / f32(y_scale)) + y_zero_point)``, each conversion to f32, the division and
    the quotient by the scale rounded to nearest even. It is that of ``e = gather(T,
    max(x) - x)``, ``quantize(div(cast(e, f32), cast(reduce_sum(e), f32)), y_scale,
    y_zero_point)``, the ops targets without its kernel run; within a step of the f32
    chain (T's rounding moves a probability by at most ``(n + 1) * 2**-31``, n the row's
    length; the f32 steps by a few ulps)."""

    name = "mir.quantized_softmax"
    input = operand_def(TensorType)
    axis = prop_def(I64Attr)
    x_scale = prop_def(F64Attr)
    y_scale = prop_def(F64Attr)
    y_zero_point = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.QUANT))
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = (
        "$input `axis` $axis `scales` $x_scale `,` $y_scale `zero_point` $y_zero_point "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        axis: int,
        scales: tuple[float, float],
        y_zero_point: int,
        out_dtype: DType,
    ):
        props: dict[str, Attribute | None] = {
            "axis": int_attr(axis), "x_scale": float_attr(scales[0]),
            "y_scale": float_attr(scales[1]), "y_zero_point": int_attr(y_zero_point),
        }  # fmt: skip
        t = cast(TensorType, as_value(input).type)
        self._build({"input": input}, props, [t.with_dtype(out_dtype)])

    def check_result(self, props: Props, *, input: TensorType) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        for t, side in ((input, "input"), (out, "result")):
            if t.dtype not in (DType.I8, DType.U8):
                raise VerifyException(f"{side} must be i8 or u8, got {t.dtype.value}")
        check_axis(props.int("axis"), input.rank)
        if out.shape != input.shape:
            raise VerifyException("the result must have the input's shape")
        lo, hi = out.dtype.int_range
        if not lo <= props.int("y_zero_point") <= hi:
            raise VerifyException(f"y_zero_point must be a {out.dtype.value} value")
        for side in "xy":
            scale = props.float(f"{side}_scale")
            if not (math.isfinite(scale) and scale > 0):
                raise VerifyException(f"{side}_scale must be positive and finite, got {scale}")


# =====================================================================================
# Elementwise regions (made by mark-elementwise-regions)
# =====================================================================================


@irdl_op_definition
class ElementwiseRegionOp(ShapedOp):
    """A fused chain of elementwise ops, run as one kernel: the result is the body
    evaluated on the inputs (block argument i is input i; ``mir.yield`` gives the result).

    The body holds only elementwise MIR ops (unary, binary, compare, where, cast), so
    result element i depends only on element i of each (broadcast) input, like the ops
    it fuses; it reads nothing but its block arguments.
    """

    name = "mir.elementwise_region"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure(), IsolatedFromAbove(), Elementwise())
    INFER_RESULTS: ClassVar[bool] = False
    # Sound because the verifier admits only elementwise ops in the body.
    assembly_format = "`(` $inputs `)` attr-dict `:` functional-type($inputs, $result) $body"

    def __init__(self, inputs: Sequence[SSAValue], body: Region, result_type: TensorType):
        self._build({"inputs": list(inputs)}, {}, [result_type], regions=[body])

    @property
    def steps(self) -> list[Operation]:
        """The body's ops in order, without the terminator."""
        block = self.body.block
        return [op for op in block.ops if op is not block.last_op]

    def check_result(self, props: Props, *, inputs: Sequence[TensorType]) -> None:
        block = self.body.block
        arg_types = [a.type for a in block.args]
        if arg_types != list(inputs):
            raise VerifyException(
                f"the body takes ({', '.join(map(str, arg_types))}), the inputs are "
                f"({', '.join(map(str, inputs))})"
            )
        term = block.last_op
        if not isinstance(term, YieldOp) or len(term.values) != 1:
            raise VerifyException("the body must end with a mir.yield of one value")
        if term.values[0].type != self.result.type:
            raise VerifyException(
                f"the body yields {term.values[0].type}, the result is {self.result.type}"
            )
        for op in self.steps:
            if not op.has_trait(Elementwise) or op.regions:
                raise VerifyException(f"{op.name} is not an elementwise op: it cannot be fused")


@irdl_op_definition
class YieldOp(ShapedOp):
    """Terminator of a region (an elementwise region, a branch of ``mir.if``, the body of
    ``mir.loop``): the values it yields are what the region computes."""

    name = "mir.yield"
    values = var_operand_def(TensorType)
    traits = lazy_traits_def(
        lambda: (IsTerminator(), HasParent(ElementwiseRegionOp, IfOp, LoopOp), Pure())
    )
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        self._build({"values": list(values)}, {}, [])


@irdl_op_definition
class PairwiseCouplingOp(ShapedOp):
    """Class probabilities from pairwise ones, as libsvm (and onnxruntime's SVMClassifier)
    compute them: ``input[..., i, j]`` is P(class i | class i or j) (the diagonal is not
    read); the result ``p`` minimises sum_i sum_j!=i (r[j,i] p[i] - r[i,j] p[j])^2 with
    sum(p) = 1 (Wu, Lin & Weng's method 2), found by Gauss-Seidel sweeps from the uniform
    distribution until the largest residual of ``Q p`` is below 0.005 / classes, at most
    100 sweeps, in the input's float type."""

    name = "mir.pairwise_coupling"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue):
        self._build({"input": input}, {})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_float(input, "operand")
        if input.rank < 2 or input.shape[-1] != input.shape[-2]:
            raise VerifyException(f"expected [..., classes, classes], got {input}")
        return (input.with_shape(input.shape[:-1]),)


# =====================================================================================
# Classic ML (ai.onnx.ml): a trained model as one op, its tables as list properties
# =====================================================================================


def _table_len(props: Props, name: str, n: int, what: str) -> np.ndarray:
    values = props.array(name)
    if len(values) != n:
        raise VerifyException(f"{name} has {len(values)} entries for {n} {what}")
    return values


def _first_bad(bad: np.ndarray) -> int | None:
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def _first_outside(values: np.ndarray, low: int, high: int) -> int | None:
    """The first position whose value is not in ``[low, high)``: two reductions when
    none is (a verifier's common case), the elementwise test only to find which."""
    if not len(values) or (values.min() >= low and values.max() < high):
        return None
    return _first_bad((values < low) | (values >= high))


def _require_ml_float(t: TensorType, what: str) -> None:
    """f32 or f64: the float types onnxruntime's classic-ML kernels take."""
    if t.dtype not in (DType.F32, DType.F64):
        raise VerifyException(f"{what} must be f32 or f64, got {t.dtype.value}")


def _check_samples(input: TensorType) -> int:
    """A [batch, features] f32/f64 input with static features: its feature count."""
    _require_ml_float(input, "input")
    require_rank(input, 2, "input")
    features = input.shape[1]
    if not isinstance(features, int):
        raise VerifyException(f"the feature count must be static, got {fmt_shape(input.shape)}")
    return features


def _check_labels(props: Props, classes: int) -> None:
    labels = props.get("class_labels")
    if labels is not None and len(props.array("class_labels")) != classes:
        raise VerifyException(
            f"class_labels has {len(props.array('class_labels'))} entries for {classes} classes"
        )


def _scores_type(result: Attribute, input: TensorType, what: str) -> TensorType:
    """A [batch, n] float result with static n."""
    assert isinstance(result, TensorType)
    _require_ml_float(result, what)
    if (
        result.rank != 2
        or result.shape[0] != input.shape[0]
        or not isinstance(result.shape[1], int)
    ):
        raise VerifyException(
            f"{what} must be [{input.shape[0]}, n] with a static n, got {fmt_shape(result.shape)}"
        )
    return result


def _check_label_type(label: Attribute, input: TensorType) -> None:
    assert isinstance(label, TensorType)
    if label != TensorType((input.shape[0],), DType.I64):
        raise VerifyException(f"label must be [{input.shape[0]}] of i64, got {label}")


class TreeOp(ShapedOp):
    """Base of the tree-ensemble ops: every tree of the ensemble in flat tables.

    Branch node k compares feature ``nodes_features[k]`` of a sample with
    ``nodes_splits[k]`` (rounded to the input's type) by ``nodes_modes[k]``: 0 ``x <= s``,
    1 ``x < s``, 2 ``x >= s``, 3 ``x > s``, 4 ``x == s``, 5 ``x != s``, 6 ``x`` is in the
    node's set ``member_values[member_starts[k]:member_starts[k + 1]]`` (rounded to the
    input's type). A NaN feature fails every test but ``!=``, and takes the true branch
    where ``nodes_missing_true[k]`` is 1. The walk goes on at ``nodes_true[k]`` when the
    test holds, else at ``nodes_false[k]``: a branch node after k (the nodes are in
    topological order, so every walk ends) or ``-1 - l`` for leaf l. Each tree starts at
    its entry of ``roots`` (encoded alike: a tree may be one leaf). Leaf l gives output
    ``leaf_targets[i]`` the weight ``leaf_weights[i]`` for each i in
    ``leaf_starts[l]:leaf_starts[l + 1]``."""

    input = operand_def(TensorType)
    roots = prop_def(I64Array)
    nodes_features = prop_def(I64Array)
    nodes_modes = prop_def(I64Array)
    nodes_splits = prop_def(F64Array)
    nodes_true = prop_def(I64Array)
    nodes_false = prop_def(I64Array)
    nodes_missing_true = opt_prop_def(I64Array)
    member_starts = opt_prop_def(I64Array)
    member_values = opt_prop_def(F64Array)
    leaf_starts = prop_def(I64Array)
    leaf_targets = prop_def(I64Array)
    leaf_weights = prop_def(F64Array)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    INFER_RESULTS: ClassVar[bool] = False

    FOREST_FORMAT: ClassVar[str] = (
        "$input `roots` $roots `features` $nodes_features `modes` $nodes_modes "
        "`splits` $nodes_splits `on_true` $nodes_true `on_false` $nodes_false "
        "(`missing_true` $nodes_missing_true^)? (`member_starts` $member_starts^)? "
        "(`members` $member_values^)? `leaf_starts` $leaf_starts `targets` $leaf_targets "
        "`weights` $leaf_weights"
    )

    @staticmethod
    def forest_props(forest: Forest) -> dict[str, Attribute | None]:
        """The forest tables of a ``Forest`` as properties."""
        return {
            "roots": ints_attr(forest.roots.tolist()),
            "nodes_features": ints_attr(forest.features.tolist()),
            "nodes_modes": ints_attr(forest.modes.tolist()),
            "nodes_splits": floats_attr(forest.splits.tolist()),
            "nodes_true": ints_attr(forest.true_next.tolist()),
            "nodes_false": ints_attr(forest.false_next.tolist()),
            "nodes_missing_true": None if forest.missing_true is None
            else ints_attr(forest.missing_true.tolist()),
            "member_starts": None if forest.member_starts is None
            else ints_attr(forest.member_starts.tolist()),
            "member_values": None if forest.member_values is None
            else floats_attr(forest.member_values.tolist()),
            "leaf_starts": ints_attr(forest.leaf_starts.tolist()),
            "leaf_targets": ints_attr(forest.leaf_targets.tolist()),
            "leaf_weights": floats_attr(forest.leaf_weights.tolist()),
        }  # fmt: skip

    def forest(self) -> Forest:
        return Forest.of(self.props())

    @staticmethod
    def check_forest(props: Props, input: TensorType, outputs: int) -> None:
        """The tables' lengths, indices and order (NumPy over their bytes: no per-node
        Python)."""
        features = _check_samples(input)
        feature_ids = props.array("nodes_features")
        n = len(feature_ids)
        modes = _table_len(props, "nodes_modes", n, "nodes")
        _table_len(props, "nodes_splits", n, "nodes")
        starts, targets = props.array("leaf_starts"), props.array("leaf_targets")
        leaves = len(starts) - 1
        if (
            leaves < 1
            or starts[0] != 0
            or (starts[1:] < starts[:-1]).any()
            or starts[-1] != len(targets)
        ):
            raise VerifyException(
                f"leaf_starts must rise from 0 to the {len(targets)} leaf targets, one entry "
                "per leaf and one more"
            )
        _table_len(props, "leaf_weights", len(targets), "leaf targets")
        bad = _first_outside(targets, 0, outputs)
        if bad is not None:
            raise VerifyException(f"leaf target {targets[bad]} is not one of the {outputs} outputs")
        index = np.arange(n)
        for name in ("nodes_true", "nodes_false"):
            nxt = _table_len(props, name, n, "nodes")
            bad = _first_bad(((nxt >= 0) & (nxt <= index)) | (nxt >= n) | (nxt < -leaves))
            if bad is not None:
                raise VerifyException(
                    f"{name}[{bad}] = {nxt[bad]} is neither a later node nor a leaf "
                    f"(-1 to -{leaves})"
                )
        roots = props.array("roots")
        if not len(roots):
            raise VerifyException("an ensemble needs a tree")
        bad = _first_outside(roots, -leaves, n)
        if bad is not None:
            raise VerifyException(f"root {roots[bad]} is neither a node nor a leaf")
        bad = _first_outside(modes, 0, 7)
        if bad is not None:
            raise VerifyException(f"node {bad} has mode {modes[bad]} (0 to 6)")
        bad = _first_outside(feature_ids, 0, features)
        if bad is not None:
            raise VerifyException(
                f"node {bad} reads feature {feature_ids[bad]} of an input with {features}"
            )
        if props.get("nodes_missing_true") is not None:
            _table_len(props, "nodes_missing_true", n, "nodes")
        member_starts = props.get("member_starts")
        if member_starts is None and props.get("member_values") is None:
            if (modes == 6).any():
                raise VerifyException("set-membership nodes (mode 6) need member_starts")
            return
        bounds = _table_len(props, "member_starts", n + 1, "nodes and one more")
        values = props.array("member_values")
        if bounds[0] != 0 or (np.diff(bounds) < 0).any() or bounds[-1] != len(values):
            raise VerifyException(
                f"member_starts must rise from 0 to the {len(values)} member values"
            )

    def check_result(self, props: Props, *, input: TensorType) -> None:
        raise NotImplementedError


@irdl_op_definition
class TreeEnsembleOp(TreeOp):
    """A tree ensemble's outputs (ONNX's TreeEnsemble and TreeEnsembleRegressor; the
    trees as ``TreeOp`` says): over the trees in order and each reached leaf's entries
    in order, the weights given each output are combined by ``aggregate`` in the result
    type -- ``sum``, ``average`` (the sum divided by the tree count), ``min`` or ``max``
    -- then ``base_values`` are added. An output no reached leaf gives a weight is
    ``fill``. ``post_transform`` applies last, along the outputs."""

    name = "mir.tree_ensemble"
    aggregate = prop_def(TreeAggregateAttr, default_value=TreeAggregateAttr(TreeAggregate.SUM))
    base_values = opt_prop_def(F64Array)
    fill = prop_def(F64Attr, default_value=FloatAttr(0.0, 64))
    post_transform = prop_def(
        PostTransformAttr, default_value=PostTransformAttr(PostTransform.NONE)
    )
    result = result_def(TensorType)
    assembly_format = (
        TreeOp.FOREST_FORMAT + " (`aggregate` $aggregate^)? (`base` $base_values^)? "
        "(`fill` $fill^)? (`post` $post_transform^)? attr-dict `:` type($input) `->` "
        "type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        forest: Forest,
        result: TensorType,
        aggregate: str = "sum",
        base_values: Sequence[float] = (),
        fill: float = 0.0,
        post_transform: str = "none",
    ):
        self._build(
            {"input": input},
            {
                **self.forest_props(forest),
                "aggregate": enum_attr(TreeAggregate, aggregate),
                "base_values": floats_attr(base_values) if len(base_values) else None,
                "fill": float_attr(fill),
                "post_transform": enum_attr(PostTransform, post_transform),
            },
            [result],
        )

    def check_result(self, props: Props, *, input: TensorType) -> None:
        _check_samples(input)
        out = _scores_type(self.result.type, input, "the result")
        targets = cast(int, out.shape[1])
        self.check_forest(props, input, targets)
        base = props.array("base_values")
        if props.get("base_values") is not None and len(base) != targets:
            raise VerifyException(f"base_values has {len(base)} entries for {targets} outputs")


@irdl_op_definition
class TreeEnsembleClassifierOp(TreeOp):
    """A tree ensemble's class and class scores, as onnxruntime's TreeEnsembleClassifier
    (the trees as ``TreeOp`` says). A class's score sums the weights the reached leaves
    give it, over the trees in order, in the scores' type; it *counts* when a reached
    leaf weighs it. With more than two classes the base values are added (a class with
    one counts), the label is the first best-scored counting class (the first class if
    none counts) and the scores are post-transformed.

    Two classes (sums s0, s1): two base values give s1 = s0 + base[1] and s0 = -s1 where
    class 1 counts, else each its own; one base value adds to s0; a class that does not
    count scores 0. The *score* is s1 where class 1 counts, else s0. When the leaves
    weigh one class only (all leaves), the label is class 1 where the score is above 0.5
    (every weight >= 0) or above 0, else class 0; otherwise it is the raw index 1 or 0 by
    the score's sign. The scores are [s0, s1] post-transformed where class 1 counts or
    two base values are given, else the pair made from the score s: [1 - s, s] when the
    leaves weigh one class with weights >= 0, [sigmoid(-s), sigmoid(s)] under ``logistic``, else
    [-s, s] (other transforms do not apply to one score). ``class_labels`` (absent: the
    class positions) are what ``label`` holds."""

    name = "mir.tree_ensemble_classifier"
    base_values = opt_prop_def(F64Array)
    post_transform = prop_def(
        PostTransformAttr, default_value=PostTransformAttr(PostTransform.NONE)
    )
    class_labels = opt_prop_def(I64Array)
    label = result_def(TensorType)
    scores = result_def(TensorType)
    assembly_format = (
        TreeOp.FOREST_FORMAT + " (`base` $base_values^)? (`post` $post_transform^)? "
        "(`labels` $class_labels^)? attr-dict `:` type($input) `->` "
        "`(` type($label) `,` type($scores) `)`"
    )

    def __init__(
        self,
        input: SSAValue,
        forest: Forest,
        scores: TensorType,
        base_values: Sequence[float] = (),
        post_transform: str = "none",
        class_labels: Sequence[int] | None = None,
    ):
        batch = cast(TensorType, as_value(input).type).shape[0]
        self._build(
            {"input": input},
            {
                **self.forest_props(forest),
                "base_values": floats_attr(base_values) if len(base_values) else None,
                "post_transform": enum_attr(PostTransform, post_transform),
                "class_labels": None if class_labels is None else ints_attr(class_labels),
            },
            [TensorType((batch,), DType.I64), scores],
        )

    def check_result(self, props: Props, *, input: TensorType) -> None:
        _check_samples(input)
        _check_label_type(self.label.type, input)
        out = _scores_type(self.scores.type, input, "scores")
        classes = cast(int, out.shape[1])
        if classes < 2:
            raise VerifyException(f"{classes} class(es): a classifier needs two")
        self.check_forest(props, input, classes)
        _check_labels(props, classes)
        base = props.array("base_values")
        if len(base) > classes:
            raise VerifyException(f"base_values has {len(base)} entries for {classes} classes")


@dataclass
class Forest:
    """The tables of a ``TreeOp`` as NumPy arrays (what importers build and kernels
    walk), named as the op's properties say."""

    roots: np.ndarray
    features: np.ndarray
    modes: np.ndarray
    splits: np.ndarray
    true_next: np.ndarray
    false_next: np.ndarray
    leaf_starts: np.ndarray
    leaf_targets: np.ndarray
    leaf_weights: np.ndarray
    missing_true: np.ndarray | None = None
    member_starts: np.ndarray | None = None
    member_values: np.ndarray | None = None

    @classmethod
    def of(cls, props: Props) -> Forest:
        def opt(name: str) -> np.ndarray | None:
            return None if props.get(name) is None else props.array(name)

        return cls(
            props.array("roots"), props.array("nodes_features"), props.array("nodes_modes"),
            props.array("nodes_splits"), props.array("nodes_true"), props.array("nodes_false"),
            props.array("leaf_starts"), props.array("leaf_targets"),
            props.array("leaf_weights"), opt("nodes_missing_true"), opt("member_starts"),
            opt("member_values"),
        )  # fmt: skip

    @property
    def leaves(self) -> int:
        return len(self.leaf_starts) - 1

    def member_table(self, dtype: np.dtype) -> np.ndarray | None:
        """Each node's set (mode 6) as a NaN-padded row in ``dtype`` (NaN equals
        nothing); None without sets."""
        if self.member_starts is None or self.member_values is None:
            return None
        starts = self.member_starts
        sizes = np.diff(starts)
        table = np.full((len(sizes), max(int(sizes.max(initial=0)), 1)), np.nan, dtype)
        for k in np.flatnonzero(sizes):
            table[k, : sizes[k]] = self.member_values[starts[k] : starts[k + 1]]
        return table


class SvmOp(ShapedOp):
    """Base of the support-vector ops: ``K(x, v)`` of the sample and each row v of
    ``support_vectors`` (rows of the input's features) by ``kernel`` -- linear ``x·v``,
    poly ``(gamma x·v + coef0)^degree``, rbf ``exp(-gamma |x - v|²)``, sigmoid
    ``tanh(gamma x·v + coef0)`` -- in the input's type."""

    input = operand_def(TensorType)
    kernel = prop_def(SvmKernelAttr, default_value=SvmKernelAttr(SvmKernel.LINEAR))
    gamma = prop_def(F64Attr, default_value=FloatAttr(0.0, 64))
    coef0 = prop_def(F64Attr, default_value=FloatAttr(0.0, 64))
    degree = prop_def(F64Attr, default_value=FloatAttr(0.0, 64))
    support_vectors = prop_def(F64Array)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))

    KERNEL_FORMAT: ClassVar[str] = (
        "$input (`kernel` $kernel^)? (`gamma` $gamma^)? (`coef0` $coef0^)? "
        "(`degree` $degree^)? `vectors` $support_vectors"
    )

    @staticmethod
    def kernel_props(
        kernel: str, gamma: float, coef0: float, degree: float, vectors: np.ndarray
    ) -> dict[str, Attribute | None]:
        return {
            "kernel": enum_attr(SvmKernel, kernel),
            "gamma": float_attr(gamma),
            "coef0": float_attr(coef0),
            "degree": float_attr(degree),
            "support_vectors": floats_attr(np.asarray(vectors, np.float64).ravel().tolist()),
        }

    @staticmethod
    def check_vectors(props: Props, input: TensorType) -> int:
        """The support-vector count."""
        features = _check_samples(input)
        values = len(props.array("support_vectors"))
        if not features or values % features or not values:
            raise VerifyException(
                f"{values} support-vector values are not rows of the {features} features"
            )
        return values // features


@irdl_op_definition
class SvmRegressorOp(SvmOp):
    """An SVM's score (ONNX's SVMRegressor; the kernel as ``SvmOp`` says):
    ``Σ_v coefficients[v] K(x, v) + rho`` as a [batch, 1] column; ``one_class`` gives 1
    where it is above 0, else -1."""

    name = "mir.svm_regressor"
    coefficients = prop_def(F64Array)
    rho = prop_def(F64Attr)
    one_class = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    assembly_format = (
        SvmOp.KERNEL_FORMAT + " `coefficients` $coefficients `rho` $rho "
        "(`one_class` $one_class^)? attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        vectors: np.ndarray,
        coefficients: Sequence[float],
        rho: float,
        kernel: str = "linear",
        gamma: float = 0.0,
        coef0: float = 0.0,
        degree: float = 0.0,
        one_class: bool = False,
    ):
        self._build(
            {"input": input},
            {
                **self.kernel_props(kernel, gamma, coef0, degree, vectors),
                "coefficients": floats_attr(coefficients),
                "rho": float_attr(rho),
                "one_class": flag_attr(one_class),
            },
        )

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        count = cls.check_vectors(props, input)
        if len(props.array("coefficients")) != count:
            raise VerifyException(
                f"{len(props.array('coefficients'))} coefficients for {count} support vectors"
            )
        return (input.with_shape((input.shape[0], 1)),)


def _pairs_classes(pairs: int) -> int:
    """The class count c with c (c - 1) / 2 = pairs, or 0."""
    c = (1 + math.isqrt(1 + 8 * pairs)) // 2
    return c if pairs and c * (c - 1) // 2 == pairs else 0


@irdl_op_definition
class SvmClassifierOp(SvmOp):
    """libsvm's one-vs-one classifier as onnxruntime's SVMClassifier runs it (the kernel
    as ``SvmOp`` says). For the class pairs (i, j), i < j, in order, the decision
    ``d[p] = Σ_v coefficients[v, p] K(x, v) + rho[p]`` (``coefficients``: one row of
    pairs per support vector) votes for i when above 0, else for j; the label is the
    first class with the most votes. ``class_labels`` (absent: the class positions) are
    what ``label`` holds. With ``prob_a``/``prob_b`` the scores are the class
    probabilities: ``r[i, j] = 1 - sigmoid(a d + b)`` clipped to [1e-7, 1 - 1e-7] (and
    ``r[j, i] = 1 - r[i, j]``) coupled as ``mir.pairwise_coupling``, post-transformed.
    Without them: two classes give [-d, d] (post none) or [1 - t, t] with t = sigmoid(d)
    (logistic) or d (softmax, softmax_zero); more classes give d post-transformed."""

    name = "mir.svm_classifier"
    coefficients = prop_def(F64Array)
    rho = prop_def(F64Array)
    prob_a = opt_prop_def(F64Array)
    prob_b = opt_prop_def(F64Array)
    post_transform = prop_def(
        PostTransformAttr, default_value=PostTransformAttr(PostTransform.NONE)
    )
    class_labels = opt_prop_def(I64Array)
    label = result_def(TensorType)
    scores = result_def(TensorType)
    assembly_format = (
        SvmOp.KERNEL_FORMAT + " `coefficients` $coefficients `rho` $rho "
        "(`prob_a` $prob_a^)? (`prob_b` $prob_b^)? (`post` $post_transform^)? "
        "(`labels` $class_labels^)? attr-dict `:` type($input) `->` "
        "`(` type($label) `,` type($scores) `)`"
    )

    def __init__(
        self,
        input: SSAValue,
        vectors: np.ndarray,
        coefficients: np.ndarray,
        rho: Sequence[float],
        kernel: str = "linear",
        gamma: float = 0.0,
        coef0: float = 0.0,
        degree: float = 0.0,
        prob_a: Sequence[float] | None = None,
        prob_b: Sequence[float] | None = None,
        post_transform: str = "none",
        class_labels: Sequence[int] | None = None,
    ):
        self._build(
            {"input": input},
            {
                **self.kernel_props(kernel, gamma, coef0, degree, vectors),
                "coefficients": floats_attr(np.asarray(coefficients, np.float64).ravel().tolist()),
                "rho": floats_attr(rho),
                "prob_a": None if prob_a is None else floats_attr(prob_a),
                "prob_b": None if prob_b is None else floats_attr(prob_b),
                "post_transform": enum_attr(PostTransform, post_transform),
                "class_labels": None if class_labels is None else ints_attr(class_labels),
            },
        )

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        count = cls.check_vectors(props, input)
        pairs = len(props.array("rho"))
        classes = _pairs_classes(pairs)
        if not classes:
            raise VerifyException(f"{pairs} rho values are not one per pair of classes")
        if len(props.array("coefficients")) != count * pairs:
            raise VerifyException(
                f"{len(props.array('coefficients'))} coefficients are not {count} support "
                f"vectors by {pairs} pairs"
            )
        proba = props.get("prob_a") is not None
        if proba != (props.get("prob_b") is not None):
            raise VerifyException("prob_a and prob_b go together")
        if proba:
            _table_len(props, "prob_a", pairs, "pairs")
            _table_len(props, "prob_b", pairs, "pairs")
        elif classes == 2 and props.enum("post_transform") is PostTransform.PROBIT:
            raise VerifyException("probit does not apply to one binary score")
        _check_labels(props, classes)
        width = classes if proba or classes == 2 else pairs
        batch = input.shape[0]
        return (TensorType((batch,), DType.I64), input.with_shape((batch, width)))


@irdl_op_definition
class LinearClassifierOp(ShapedOp):
    """A linear classifier as onnxruntime's LinearClassifier: scores ``x·W^T + b`` with
    ``coefficients`` W (one row of the input's features per score) and ``intercepts``
    b. Several scores: the label is the first best score's class, the scores are
    post-transformed. One score s: the label is class 1 where s > 0, else class 0, and
    the scores are [1 - t, t] with t = sigmoid(s) (logistic) or s (other transforms do not
    apply). ``class_labels`` (absent: the class positions) are what ``label`` holds."""

    name = "mir.linear_classifier"
    input = operand_def(TensorType)
    coefficients = prop_def(F64Array)
    intercepts = opt_prop_def(F64Array)
    post_transform = prop_def(
        PostTransformAttr, default_value=PostTransformAttr(PostTransform.NONE)
    )
    class_labels = opt_prop_def(I64Array)
    label = result_def(TensorType)
    scores = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = (
        "$input `coefficients` $coefficients (`intercepts` $intercepts^)? "
        "(`post` $post_transform^)? (`labels` $class_labels^)? attr-dict `:` "
        "type($input) `->` `(` type($label) `,` type($scores) `)`"
    )

    def __init__(
        self,
        input: SSAValue,
        coefficients: np.ndarray,
        intercepts: Sequence[float] | None = None,
        post_transform: str = "none",
        class_labels: Sequence[int] | None = None,
    ):
        self._build(
            {"input": input},
            {
                "coefficients": floats_attr(np.asarray(coefficients, np.float64).ravel().tolist()),
                "intercepts": None if intercepts is None else floats_attr(intercepts),
                "post_transform": enum_attr(PostTransform, post_transform),
                "class_labels": None if class_labels is None else ints_attr(class_labels),
            },
        )

    def rows(self) -> int:
        features = cast(TensorType, self.input.type).shape[1]
        return len(self.props().array("coefficients")) // cast(int, features)

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        features = _check_samples(input)
        values = len(props.array("coefficients"))
        if not features or not values or values % features:
            raise VerifyException(f"{values} coefficients are not rows of the {features} features")
        rows = values // features
        if props.get("intercepts") is not None:
            _table_len(props, "intercepts", rows, "score rows")
        if rows == 1 and props.enum("post_transform") is PostTransform.PROBIT:
            raise VerifyException("probit does not apply to one binary score")
        labels = props.get("class_labels")
        if labels is not None and len(props.array("class_labels")) < max(rows, 2):
            raise VerifyException(
                f"{len(props.array('class_labels'))} class labels for {rows} score rows"
            )
        batch = input.shape[0]
        return (TensorType((batch,), DType.I64), input.with_shape((batch, max(rows, 2))))


@irdl_op_definition
class NormalizerOp(ShapedOp):
    """Each row (the last axis) divided by its ``norm``: its max, the sum of its
    magnitudes (l1), or for l2 ``sign(x)·sqrt(x² / Σx²)``; a row whose norm is 0 stays
    as it is (ONNX's Normalizer, as onnxruntime computes it)."""

    name = "mir.normalizer"
    input = operand_def(TensorType)
    norm = prop_def(NormKindAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.REDUCTION))
    assembly_format = "$input $norm attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, norm: str):
        self._build({"input": input}, {"norm": enum_attr(NormKind, norm)})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        _require_ml_float(input, "input")
        if input.rank not in (1, 2):
            raise VerifyException(f"input must have rank 1 or 2, got {fmt_shape(input.shape)}")
        return (input,)


@irdl_op_definition
class LabelEncoderOp(ShapedOp):
    """Each element mapped by a table (ONNX's LabelEncoder and CategoryMapper): the entry
    of the values at the first key equal to it, or the last value (the default, one more
    than the keys) where none is; with ``nan_matches`` a NaN key matches NaN. Integer
    keys (``int_keys``) for an integer input, float keys (``float_keys``, compared in the
    input's type) for a float one; integer values for an integer result, float values
    (rounded to its type) for a float one."""

    name = "mir.label_encoder"
    input = operand_def(TensorType)
    int_keys = opt_prop_def(I64Array)
    float_keys = opt_prop_def(F64Array)
    int_values = opt_prop_def(I64Array)
    float_values = opt_prop_def(F64Array)
    nan_matches = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT))
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = (
        "$input (`int_keys` $int_keys^)? (`float_keys` $float_keys^)? "
        "(`int_values` $int_values^)? (`float_values` $float_values^)? "
        "(`nan_matches` $nan_matches^)? attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        keys: np.ndarray,
        values: np.ndarray,
        dtype: DType,
        nan_matches: bool = False,
    ):
        t = cast(TensorType, as_value(input).type)
        int_keys, int_values = keys.dtype.kind in "iub", values.dtype.kind in "iub"
        self._build(
            {"input": input},
            {
                "int_keys": ints_attr(keys.tolist()) if int_keys else None,
                "float_keys": None if int_keys else floats_attr(keys.tolist()),
                "int_values": ints_attr(values.tolist()) if int_values else None,
                "float_values": None if int_values else floats_attr(values.tolist()),
                "nan_matches": flag_attr(nan_matches),
            },
            [t.with_dtype(dtype)],
        )

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        """The keys and the values (the default last)."""
        p = self.props()
        keys = p.array("int_keys" if p.get("int_keys") is not None else "float_keys")
        values = p.array("int_values" if p.get("int_values") is not None else "float_values")
        return keys, values

    def check_result(self, props: Props, *, input: TensorType) -> None:
        out = self.result.type
        assert isinstance(out, TensorType)
        if out.shape != input.shape:
            raise VerifyException(f"the result must keep the shape {fmt_shape(input.shape)}")
        for what, t in (("input", input), ("result", out)):
            require_numeric(t, what)
            if t.dtype.is_float:
                _require_ml_float(t, what)
        for what, t in (("keys", input), ("values", out)):
            kind = "float" if t.dtype.is_float else "int"
            other = "int" if t.dtype.is_float else "float"
            if props.get(f"{kind}_{what}") is None or props.get(f"{other}_{what}") is not None:
                raise VerifyException(
                    f"{t.dtype.value} elements take {kind}_{what} (and no {other}_{what})"
                )
        keys = props.array(f"{'float' if input.dtype.is_float else 'int'}_keys")
        values = props.array(f"{'float' if out.dtype.is_float else 'int'}_values")
        if len(values) != len(keys) + 1:
            raise VerifyException(
                f"{len(values)} values for {len(keys)} keys (one per key, then the default)"
            )


def _check_feature_table(props: Props, names: Sequence[str], input: TensorType) -> None:
    """Per-feature tables of a [features] or [rows, features] input: one value or one
    per feature (the last dim), as the input's type."""
    _require_ml_float(input, "input")
    if input.rank not in (1, 2):
        raise VerifyException(f"input must have rank 1 or 2, got {fmt_shape(input.shape)}")
    features = input.shape[-1]
    for name in names:
        size = len(props.array(name))
        if size != 1 and size != features:
            raise VerifyException(f"{name} has {size} values for {features} features")


@irdl_op_definition
class ScalerOp(ShapedOp):
    """``(x - offset) · scale`` along the last axis, ``offset`` and ``scale`` one value or
    one per feature, rounded to the input's type (ONNX's Scaler)."""

    name = "mir.scaler"
    input = operand_def(TensorType)
    offset = prop_def(F64Array)
    scale = prop_def(F64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.ELEMENTWISE), InPlace())
    assembly_format = (
        "$input `offset` $offset `scale` $scale attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(self, input: SSAValue, offset: Sequence[float], scale: Sequence[float]):
        self._build({"input": input}, {"offset": floats_attr(offset), "scale": floats_attr(scale)})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        _check_feature_table(props, ("offset", "scale"), input)
        return (input,)


@irdl_op_definition
class BinarizerOp(ShapedOp):
    """1 where ``x > threshold`` (rounded to the input's type), else 0, in the input's
    type (ONNX's Binarizer)."""

    name = "mir.binarizer"
    input = operand_def(TensorType)
    threshold = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.ELEMENTWISE), InPlace())
    assembly_format = "$input `threshold` $threshold attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, threshold: float):
        self._build({"input": input}, {"threshold": float_attr(threshold)})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        _require_ml_float(input, "input")
        return (input,)


@irdl_op_definition
class ImputerOp(ShapedOp):
    """Values equal to ``replaced`` -- every NaN without it -- become ``imputed`` (one
    value, or one per feature: the last dim), rounded to the input's type (ONNX's
    Imputer). NaN is no property: a float literal cannot spell it."""

    name = "mir.imputer"
    input = operand_def(TensorType)
    imputed = prop_def(F64Array)
    replaced = opt_prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.ELEMENTWISE), InPlace())
    assembly_format = (
        "$input `imputed` $imputed (`replaced` $replaced^)? attr-dict `:` type($input) `->` "
        "type($result)"
    )

    def __init__(self, input: SSAValue, imputed: Sequence[float], replaced: float):
        missing = None if math.isnan(replaced) else float_attr(replaced)
        self._build({"input": input}, {"imputed": floats_attr(imputed), "replaced": missing})

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        _check_feature_table(props, ("imputed",), input)
        return (input,)

    def replaced_value(self) -> float:
        """The value replaced: ``replaced``, else NaN."""
        value = self.props().opt_float("replaced")
        return math.nan if value is None else value


@irdl_op_definition
class OneHotEncoderOp(ShapedOp):
    """For each integer of the input, a row over ``categories``: 1.0 at the category
    equal to it (the last position where a category is listed twice), 0.0 elsewhere
    and for a value in no category (ONNX's OneHotEncoder with zeros=1); f32, shape
    ``[*input, categories]``.

    With ``column_starts`` (C + 1 offsets rising from 0 to the category count), the
    input's last dim holds C columns, column j encoded over its own categories
    ``categories[column_starts[j]:column_starts[j + 1]]``: the result is
    ``[*input[:-1], categories]``, the columns' rows side by side (a concat of their
    one-column encodings)."""

    name = "mir.one_hot_encoder"
    input = operand_def(TensorType)
    categories = prop_def(I64Array)
    column_starts = opt_prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Precision(PrecisionClass.DATA_MOVEMENT))
    assembly_format = (
        "$input `categories` $categories (`columns` $column_starts^)? attr-dict `:` "
        "type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        categories: Sequence[int],
        column_starts: Sequence[int] | None = None,
    ):
        self._build(
            {"input": input},
            {
                "categories": ints_attr(categories),
                "column_starts": None if column_starts is None else ints_attr(column_starts),
            },
        )

    @classmethod
    def infer(cls, props: Props, *, input: TensorType) -> tuple[TensorType, ...]:
        require_dtype(input, DType.I64, "input")
        count = len(props.array("categories"))
        if not count:
            raise VerifyException("one-hot encoding needs a category")
        if props.get("column_starts") is None:
            return (TensorType((*input.shape, count), DType.F32),)
        starts = props.array("column_starts")
        require_min_rank(input, 1, "input")
        if input.shape[-1] != len(starts) - 1:
            raise VerifyException(
                f"column_starts has {len(starts)} offsets for the input's "
                f"{input.shape[-1]} columns (one per column and one more)"
            )
        if starts[0] != 0 or starts[-1] != count or (np.diff(starts) < 1).any():
            raise VerifyException(
                f"column_starts must rise from 0 to the {count} categories, each column "
                "given one at least"
            )
        return (TensorType((*input.shape[:-1], count), DType.F32),)

    def column_bounds(self) -> list[tuple[int, int]]:
        """Each column's [start, end) of ``categories`` (one column: all of them)."""
        p = self.props()
        if p.get("column_starts") is None:
            return [(0, len(p.array("categories")))]
        starts = p.array("column_starts").tolist()
        return list(pairwise(starts))

    def category_columns(self) -> np.ndarray:
        """The column (of the input's last dim, under ``column_starts``) each category
        position encodes."""
        bounds = self.column_bounds()
        return np.repeat(np.arange(len(bounds)), [end - start for start, end in bounds])

    def answering(self) -> np.ndarray:
        """Which positions answer for their category: the last listing of each, within
        its column's categories."""
        categories = self.props().array("categories").tolist()
        out = np.zeros(len(categories), bool)
        for start, end in self.column_bounds():
            last = {c: i for i, c in enumerate(categories[start:end], start)}
            out[start:end] = [last[c] == i for i, c in enumerate(categories[start:end], start)]
        return out


# =====================================================================================
# Control flow: regions chosen and repeated at run time (as MLIR's scf.if / scf.while)
# =====================================================================================

I64_SCALAR = TensorType((), DType.I64)
BOOL_SCALAR = TensorType((), DType.BOOL)


def _types_text(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(map(str, types)) + ")"


class ControlFlowOp(ShapedOp):
    """Base of the ops that run their regions at run time (``mir.if``, ``mir.loop``).

    As in scf, their regions read values of the enclosing graph directly (implicit
    capture) and end with ``mir.yield``. They compute only: no graph leaves (inputs and
    params belong to the graph) and pure ops alone, so the op itself is pure -- dce
    drops an unused one, cse merges two with equal regions."""

    INFER_RESULTS: ClassVar[bool] = False

    def captured_values(self) -> list[SSAValue]:
        """The values its regions (nested ones included) read from outside the op, in
        order of first use."""
        inside: set[SSAValue] = set()
        captured: dict[SSAValue, None] = {}
        for region in self.regions:
            for block in region.blocks:
                _collect_captures(block, inside, captured)
        return list(captured)

    def check_region(self, block: Block, what: str) -> list[Attribute]:
        """Check a region's body and return the types it yields."""
        term = block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException(f"{what} must end with mir.yield")
        for op in block.ops:
            if isinstance(op, InputOp | ParamOp):
                raise VerifyException(
                    f"{what} holds {op.name}: graph leaves belong to the graph, outside regions"
                )
            if not op.has_trait(Pure):
                raise VerifyException(f"{what} holds {op.name}, which is not pure")
        return [v.type for v in term.values]


def _collect_captures(block: Block, inside: set[SSAValue], captured: dict[SSAValue, None]) -> None:
    inside.update(block.args)
    for op in block.ops:
        for v in op.operands:
            if v not in inside:
                captured.setdefault(v, None)
        for region in op.regions:
            for nested in region.blocks:
                _collect_captures(nested, inside, captured)
        inside.update(op.results)


@irdl_op_definition
class IfOp(ControlFlowOp):
    """Runs one of two regions, chosen at run time: ``then`` when the one bool element of
    ``condition`` (of any rank: ONNX's If takes a ``[1]`` or ``[1, 1]`` one) is true,
    else ``else``. The results are the values the taken region yields; both regions
    yield the result types.

        %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[4], f32>) {
          %y = mir.neg %x : !rlx.tensor<[4], f32>
          mir.yield %y : !rlx.tensor<[4], f32>
        } else {
          mir.yield %x : !rlx.tensor<[4], f32>
        }
    """

    name = "mir.if"
    condition = operand_def(TensorType)
    outs = var_result_def(TensorType)
    then_region = region_def("single_block")
    else_region = region_def("single_block")
    traits = traits_def(Pure())
    assembly_format = (
        "$condition attr-dict `:` type($condition) `->` `(` type($outs) `)` "
        "$then_region `else` $else_region"
    )

    def __init__(
        self,
        condition: SSAValue,
        then_region: Region,
        else_region: Region,
        result_types: Sequence[TensorType],
    ):
        self._build(
            {"condition": condition}, {}, [list(result_types)], regions=[then_region, else_region]
        )

    def branch(self, taken: bool) -> Block:
        """The block that runs when the condition is ``taken``."""
        return (self.then_region if taken else self.else_region).block

    @staticmethod
    def taken(condition: np.ndarray) -> bool:
        """Whether a value of the condition takes the ``then`` region."""
        return bool(np.asarray(condition).reshape(()))

    def check_result(self, props: Props, *, condition: TensorType) -> None:
        if condition.dtype is not DType.BOOL or condition.num_elements() != 1:
            raise VerifyException(f"the condition must be one bool element, got {condition}")
        results = [r.type for r in self.outs]
        for taken, what in ((True, "the then region"), (False, "the else region")):
            block = self.branch(taken)
            if block.args:
                raise VerifyException(f"{what} takes no arguments")
            yielded = self.check_region(block, what)
            if yielded != results:
                raise VerifyException(
                    f"{what} yields {_types_text(yielded)}, the results are {_types_text(results)}"
                )


@irdl_op_definition
class LoopOp(ControlFlowOp):
    """ONNX's Loop: runs ``body`` while the iteration number is below ``trip_count`` (if
    given) and the condition holds (if given; the body yields the next one), at least
    one of the two given.

    The body takes (iteration number i64, condition, carried values...) and yields
    (condition, carried values..., scan elements...). The results are the carried values
    after the last iteration (the initial ones if none ran), then one scan result per
    scan element: the elements of every iteration stacked along a new leading axis,
    whose length is the number of iterations -- the trip count when it is a constant
    and there is no condition, else a dim known at run time (a fresh symbol, bound by
    the executor when the loop ends). Without ``condition`` the yielded one is ignored
    (the body sees true). Carried values keep their type across iterations.

        %h, %ys = mir.loop trips(%n : !rlx.tensor<[], i64>) iter_args(%h0)
            : (!rlx.tensor<[4], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[steps, 4], f32>) {
        ^bb0(%i: !rlx.tensor<[], i64>, %c: !rlx.tensor<[], bool>, %h: !rlx.tensor<[4], f32>):
          %h2 = mir.tanh %h : !rlx.tensor<[4], f32>
          mir.yield %c, %h2, %h2 : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>, ...
        }

    (``steps``: a symbol no other type names, bound when the loop ends.)
    """

    name = "mir.loop"
    trip_count = opt_operand_def(TensorType)
    condition = opt_operand_def(TensorType)
    inits = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "(`trips` `(` $trip_count^ `:` type($trip_count) `)`)? "
        "(`while` `(` $condition^ `:` type($condition) `)`)? "
        "`iter_args` `(` $inits `)` attr-dict `:` functional-type($inits, $outs) $body"
    )

    def __init__(
        self,
        trip_count: SSAValue | None,
        condition: SSAValue | None,
        inits: Sequence[SSAValue],
        body: Region,
        result_types: Sequence[TensorType],
    ):
        self._build(
            {"trip_count": trip_count, "condition": condition, "inits": list(inits)},
            {},
            [list(result_types)],  # one variadic result group
            regions=[body],
        )

    @property
    def carried_results(self) -> Sequence[SSAValue]:
        return self.outs[: len(self.inits)]

    @property
    def scan_results(self) -> Sequence[SSAValue]:
        return self.outs[len(self.inits) :]

    def scan_length(self) -> Dim | None:
        """The leading dim of the scan results (the number of iterations)."""
        scans = self.scan_results
        return cast(TensorType, scans[0].type).shape[0] if scans else None

    def static_trip_count(self) -> int | None:
        """The trip count, when it is a ``mir.constant``: a bound on the iterations."""
        if self.trip_count is None or not isinstance(self.trip_count.owner, ConstantOp):
            return None
        return int(self.trip_count.owner.to_numpy())

    def check_result(
        self,
        props: Props,
        *,
        trip_count: TensorType | None,
        condition: TensorType | None,
        inits: Sequence[TensorType],
    ) -> None:
        if trip_count is None and condition is None:
            raise VerifyException("a loop needs a trip count or a condition, or it never ends")
        if trip_count is not None and trip_count != I64_SCALAR:
            raise VerifyException(f"the trip count must be {I64_SCALAR}, got {trip_count}")
        if condition is not None and condition != BOOL_SCALAR:
            raise VerifyException(f"the condition must be {BOOL_SCALAR}, got {condition}")
        block = self.body.block
        args = [a.type for a in block.args]
        expected = [I64_SCALAR, BOOL_SCALAR, *inits]
        if args != expected:
            raise VerifyException(
                f"the body takes {_types_text(args)}, expected (iteration number, condition, "
                f"carried values...) = {_types_text(expected)}"
            )
        yielded = self.check_region(block, "the body")
        n = len(inits)
        if yielded[:1] != [BOOL_SCALAR] or yielded[1 : 1 + n] != list(inits):
            raise VerifyException(
                f"the body yields {_types_text(yielded)}, expected (condition, carried "
                f"values..., scan elements...) starting {_types_text([BOOL_SCALAR, *inits])}"
            )
        results = [r.type for r in self.outs]
        elements = cast(list[TensorType], yielded[1 + n :])
        if len(results) != n + len(elements) or results[:n] != list(inits):
            raise VerifyException(
                f"the results are {_types_text(results)}, expected the carried values "
                f"{_types_text(inits)} then {len(elements)} scan result(s)"
            )
        for j, (res, elem) in enumerate(zip(results[n:], elements, strict=True)):
            if res.dtype is not elem.dtype or res.shape[1:] != elem.shape or res.rank == 0:
                raise VerifyException(
                    f"scan result #{j} is {res}; the body yields elements of {elem}, so it "
                    f"must be [iterations, {fmt_shape(elem.shape)[1:-1]}] of {elem.dtype.value}"
                )
        lengths = {r.shape[0] for r in results[n:]}
        if len(lengths) > 1:
            raise VerifyException(
                "the scan results must share one length (the number of iterations), got "
                + ", ".join(sorted(map(str, lengths)))
            )
        trips = self.static_trip_count()
        length = self.scan_length()
        runs = None if condition is not None or trips is None else max(trips, 0)
        if runs is not None and isinstance(length, int) and length != runs:
            raise VerifyException(
                f"the loop runs {runs} iterations, the scan results have {length}"
            )


CONTROL_FLOW_OPS: tuple[type[ControlFlowOp], ...] = (IfOp, LoopOp)


def read_values(op: Operation) -> list[SSAValue]:
    """What an op reads when it runs: its operands and, for a control-flow op, the values
    its regions capture (a dependence as real as an operand's)."""
    if isinstance(op, ControlFlowOp):
        return [*op.operands, *(v for v in op.captured_values() if v not in op.operands)]
    return list(op.operands)


def run_time_symbols(root: Operation) -> set[str]:
    """The symbolic dims that loops under ``root`` bind when they end -- the lengths of
    scan results that only the run decides -- and that no graph leaf's type names: no one
    sizes them beforehand."""
    bound: set[str] = set()
    named: set[str] = set()
    for op in root.walk():
        if isinstance(op, LoopOp):
            length = op.scan_length()
            if isinstance(length, DimExpr) and length.symbol_name is not None:
                bound.add(length.symbol_name)
        elif isinstance(op, InputOp | ParamOp):
            named.update(op.result.type.symbols())
    return bound - named


MIR_OPS: list[type[ShapedOp]] = [
    InputOp, ParamOp, ConstantOp,
    NegOp, AbsOp, ReluOp, SignOp, NotOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, TanhOp,
    SigmoidOp, SiluOp, ErfOp, SinOp, CosOp, FloorOp, CeilOp, RoundOp, SoftplusOp, GeluOp,
    ClipOp, HardSigmoidOp, HardSwishOp, LeakyReluOp, EluOp, SwishOp, ThresholdedReluOp, SoftsignOp,
    ConvTransposeOp, LrnOp,
    TanOp, AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, BitwiseNotOp,
    AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp, AndOp, OrOp, XorOp,
    PReluOp, FmodOp, BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, ShiftLeftOp, ShiftRightOp,
    AddNOp, MeanNOp, MaxNOp, MinNOp,
    CompareOp, WhereOp, CastOp,
    MatmulOp,
    ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp, ReduceLogSumExpOp,
    ReduceSumSquareOp, ReduceL2Op, ReduceL1Op, ReduceLogSumOp,
    ArgMaxOp, ArgMinOp,
    CumsumOp, CumprodOp, TopKOp, ScatterNdOp, BitcastOp, PairwiseCouplingOp,
    TreeEnsembleOp, TreeEnsembleClassifierOp, SvmRegressorOp, SvmClassifierOp,
    LinearClassifierOp, NormalizerOp, LabelEncoderOp, ScalerOp, BinarizerOp, ImputerOp,
    OneHotEncoderOp,
    SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp, GroupNormOp, BatchNormOp,
    ReshapeOp, TransposeOp, NarrowOp, SliceOp, ConcatOp, ExpandOp, GatherOp, GatherAxesOp,
    GatherElementsOp, PadOp,
    ConvOp, MaxPoolOp, AvgPoolOp,
    AttentionOp, RopeOp,
    RnnOp, GruOp, LstmOp,
    QuantizeOp, DequantizeOp, FakeQuantizeOp,
    DynamicQuantizeLinearOp, MatmulIntegerOp, ConvIntegerOp, DynamicQuantizeMatmulOp,
    FusedMatmulBiasActOp, FusedTwoSidedMatmulOp, FusedReshapeTransposeOp,
    FusedTransposedMatmulOp, ScaledMatmulOp, FusedSwigluOp,
    FusedResidualRmsNormOp, FusedResidualLayerNormOp,
    FusedConvBiasActOp, FusedScaleShiftActOp, FusedLstmCellOp, FusedGruCellOp,
    FusedAttentionBlockOp,
    IntegerMatmulOp, IntegerConvOp, QuantizedAddOp, QuantizedAvgPoolOp, QuantizedSoftmaxOp,
    ElementwiseRegionOp, YieldOp,
    DimsOp,
    IfOp, LoopOp,
]  # fmt: skip

fast_accessors(MIR_OPS)
MIR = Dialect("mir", [*MIR_OPS], [])

__all__ = [op.__name__ for op in MIR_OPS] + [
    "BOOL_SCALAR",
    "CONTROL_FLOW_OPS",
    "I64_SCALAR",
    "GRU_GATES",
    "LSTM_GATES",
    "MIR",
    "MIR_OPS",
    "RECURRENT_OPS",
    "ControlFlowOp",
    "RecurrentOp",
    "ReduceChainOp",
    "Forest",
    "log_sum_exp_chain",
    "matmul_shape",
    "read_values",
    "run_time_symbols",
]
