"""The one tensor type shared by HIR, MIR and LIR: ``!rlx.tensor<[dims], dtype>``.

A dim is a non-negative integer or a symbolic expression over named sizes
(``seq``, ``seq * 2 + 1``, ``(h + 1) floordiv 2``: see ``dim_expr``): the same symbol in
two types means the same unknown size. Shape rules that several ops share
(broadcasting, axis normalisation, element counts, window sizes) live here so that
verifiers and builders compute result types with one piece of code; they work on
symbolic dims with the same arithmetic as on integers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeGuard, cast

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.ir import Attribute, Data, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects.dim_expr import (
    Dim,
    DimError,
    DimExpr,
    as_dim,
    ceildiv,
    dim_max,
    dim_min,
    interval,
    parse_dim_tokens,
    shape_symbols,
    substitute,
    symbols_of,
)

Shape = tuple[Dim, ...]


class DType(Enum):
    """Element types. The value is the spelling in the IR."""

    F32 = "f32"
    F16 = "f16"
    BF16 = "bf16"
    F64 = "f64"
    F8E4M3 = "f8e4m3"
    F8E5M2 = "f8e5m2"
    F8E4M3FNUZ = "f8e4m3fnuz"
    F8E5M2FNUZ = "f8e5m2fnuz"
    F8E8M0 = "f8e8m0"
    F4E2M1 = "f4e2m1"
    I2 = "i2"
    I4 = "i4"
    I8 = "i8"
    I16 = "i16"
    I32 = "i32"
    I64 = "i64"
    U2 = "u2"
    U4 = "u4"
    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    BOOL = "bool"

    # What each element type is, set on the members below (``_facts``): plain attributes,
    # as passes and verifiers ask them of every op (a property would hash the member to
    # look it up, in Python).
    numpy: np.dtype
    itemsize: int
    is_float: bool
    is_int: bool
    is_signed_int: bool
    is_narrow_float: bool
    """An 8- or 4-bit float: a storage and quantisation type, computed in f32."""
    is_quantized: bool
    """A type that quantize produces and dequantize reads: an integer, or a narrow float
    with a sign (f8e8m0 is a bare exponent, used for scales)."""
    is_bool: bool

    @property
    def int_range(self) -> tuple[int, int]:
        """(min, max) of an integer type (sub-byte ones included)."""
        limits = _INT_RANGES.get(self)
        if limits is None:
            raise ValueError(f"{self.value} is not an integer type")
        return limits

    @staticmethod
    def from_numpy(dtype: np.dtype | type) -> DType:
        dt = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        found = _FROM_NUMPY.get(dt)
        if found is None:
            raise ValueError(f"numpy dtype {dt} has no rlx equivalent")
        return found

    @staticmethod
    def parse(spelling: str | DType) -> DType:
        if isinstance(spelling, DType):
            return spelling
        try:
            return DType(spelling)
        except ValueError:
            known = ", ".join(d.value for d in DType)
            raise ValueError(f"unknown dtype {spelling!r} (known: {known})") from None


_NUMPY_DTYPES: dict[DType, np.dtype] = {
    DType.F32: np.dtype(np.float32),
    DType.F16: np.dtype(np.float16),
    DType.BF16: np.dtype(ml_dtypes.bfloat16),
    DType.F64: np.dtype(np.float64),
    DType.F8E4M3: np.dtype(ml_dtypes.float8_e4m3fn),
    DType.F8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    DType.F8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    DType.F8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    DType.F8E8M0: np.dtype(ml_dtypes.float8_e8m0fnu),
    DType.F4E2M1: np.dtype(ml_dtypes.float4_e2m1fn),
    DType.I2: np.dtype(ml_dtypes.int2),
    DType.I4: np.dtype(ml_dtypes.int4),
    DType.I8: np.dtype(np.int8),
    DType.I16: np.dtype(np.int16),
    DType.I32: np.dtype(np.int32),
    DType.I64: np.dtype(np.int64),
    DType.U2: np.dtype(ml_dtypes.uint2),
    DType.U4: np.dtype(ml_dtypes.uint4),
    DType.U8: np.dtype(np.uint8),
    DType.U16: np.dtype(np.uint16),
    DType.U32: np.dtype(np.uint32),
    DType.U64: np.dtype(np.uint64),
    DType.BOOL: np.dtype(np.bool_),
}
# Sub-byte types take one byte per element in memory (unpacked, as ml_dtypes stores them).
_NARROW_FLOATS = frozenset(
    {
        DType.F8E4M3,
        DType.F8E5M2,
        DType.F8E4M3FNUZ,
        DType.F8E5M2FNUZ,
        DType.F8E8M0,
        DType.F4E2M1,
    }
)
_FLOATS = frozenset({DType.F32, DType.F16, DType.BF16, DType.F64}) | _NARROW_FLOATS
_SIGNED_INTS = frozenset({DType.I2, DType.I4, DType.I8, DType.I16, DType.I32, DType.I64})
_INTS = _SIGNED_INTS | {DType.U2, DType.U4, DType.U8, DType.U16, DType.U32, DType.U64}
_DTYPE_SPELLINGS = frozenset(d.value for d in DType)


def _facts() -> None:
    for d in DType:
        d.numpy = _NUMPY_DTYPES[d]
        d.itemsize = d.numpy.itemsize
        d.is_float = d in _FLOATS
        d.is_int = d in _INTS
        d.is_signed_int = d in _SIGNED_INTS
        d.is_narrow_float = d in _NARROW_FLOATS
        d.is_quantized = d.is_int or (d.is_narrow_float and d is not DType.F8E8M0)
        d.is_bool = d is DType.BOOL


_facts()
_FROM_NUMPY: dict[np.dtype, DType] = {v: k for k, v in reversed(_NUMPY_DTYPES.items())}
"""``DType.from_numpy``'s table: NumPy dtypes hash and compare by value (the first
DType of an equal dtype, were there two)."""
_INT_RANGES: dict[DType, tuple[int, int]] = {
    d: (int(ml_dtypes.iinfo(d.numpy).min), int(ml_dtypes.iinfo(d.numpy).max)) for d in _INTS
}
_NO_INFINITY = _NARROW_FLOATS - {DType.F8E5M2}
_NO_NEGATIVE_ZERO = frozenset({DType.F8E4M3FNUZ, DType.F8E5M2FNUZ, DType.F8E8M0})


def exactly_representable(src: DType, dst: DType) -> bool:
    """Whether every value of ``src`` (infinities and NaN included) is a value of ``dst``,
    so that a cast ``src -> dst`` loses nothing."""
    if src is dst:
        return True
    if dst is DType.F8E8M0:  # positive powers of two only: no zero, no sign
        return False
    if src.is_bool:
        return True
    if dst.is_bool or (src.is_float and not dst.is_float):
        return False
    if src.is_int:
        lo, hi = src.int_range
        if dst.is_int:
            dlo, dhi = dst.int_range
            return dlo <= lo and hi <= dhi
        # Every integer of magnitude <= 2^(mantissa bits + 1) is a float of dst.
        fd = ml_dtypes.finfo(dst.numpy)
        bound = max(-lo, hi)
        return bound <= 2 ** (fd.nmant + 1) and bound <= float(fd.max)
    fs, fd = ml_dtypes.finfo(src.numpy), ml_dtypes.finfo(dst.numpy)
    if src not in _NO_INFINITY and dst in _NO_INFINITY:
        return False
    if src not in _NO_NEGATIVE_ZERO and dst in _NO_NEGATIVE_ZERO:
        return False
    # No fewer mantissa bits, no smaller maximum, no coarser grid at the bottom (every
    # value is a multiple of the smallest subnormal, so a src normal below dst's normal
    # range still lands on dst's subnormal grid).
    return (
        fd.nmant >= fs.nmant
        and float(fd.max) >= float(fs.max)
        and float(fd.smallest_subnormal) <= float(fs.smallest_subnormal)
    )


class _IRTokens:
    """The dim grammar's tokens from the IR parser (see ``dim_expr.parse_dim_tokens``)."""

    def __init__(self, parser: AttrParser):
        self.parser = parser
        self.start = parser.pos

    def punct(self, p: str) -> bool:
        return self.parser.parse_optional_punctuation(p) is not None  # type: ignore[arg-type]

    def integer(self) -> int | None:
        return self.parser.parse_optional_integer(allow_boolean=False, allow_negative=False)

    def keyword(self, words: frozenset[str]) -> str | None:
        return self.parser.parse_optional_keyword_in(words)

    def identifier(self) -> str | None:
        return self.parser.parse_optional_identifier()

    def error(self, message: str) -> Any:
        self.parser.raise_error(message, self.start, self.parser.pos)


def parse_ir_dim(parser: AttrParser) -> Dim:
    """A dim in IR text: an integer or a dim expression, e.g. ``seq * 2 + 1``."""
    return parse_dim_tokens(_IRTokens(parser))


MAX_DIM = (1 << 63) - 1
"""The largest dim a tensor type holds (sizes and offsets are int64 in the C++ core)."""


@irdl_attr_definition
class DimAttr(Data[DimExpr]):
    """A symbolic dim inside a tensor type (``#rlx.dim<seq + 1>`` on its own)."""

    name = "rlx.dim"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> DimExpr:
        with parser.in_angle_brackets():
            pos = parser.pos
            d = parse_ir_dim(parser)
        if isinstance(d, int):
            parser.raise_error(f"#rlx.dim needs a symbolic expression, got {d}", pos)
        return d

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")


_DIM_TYPES = frozenset({int, DimExpr})
"""The types of dims as types hold them (``as_dim`` returns them as they are)."""

_TENSOR_TYPES: dict[tuple[tuple[Dim | str, ...], str], TensorType] = {}
"""Every tensor type made so far, by shape and element type spelling (types are
interned; the spelling hashes in C, the member in Python); looked up with the dims as
given (a str among them never matches: only parsed dims are keys)."""
_ELEMENT_ATTRS: dict[DType, StringAttr] = {}


def _as_dims(shape: Iterable[object]) -> Shape:
    try:
        return tuple(as_dim(d) for d in shape)
    except DimError as err:
        raise VerifyException(str(err)) from None


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """``!rlx.tensor<[2, seq, 64], f32>``: static or symbolic dims and an element type.

    Interned: ``TensorType(shape, dtype)`` returns the one instance for that shape and
    element type (a compiler builds the same few types over and over; an interned one is
    built and verified once, and compares by identity first). Its shape and dtype are
    kept as Python values beside the attribute parameters."""

    name = "rlx.tensor"

    dims: ArrayAttr[IntAttr | DimAttr]
    element: StringAttr

    def __new__(cls, shape: Iterable[Dim | str] | None = None, dtype: DType | str | None = None):
        if shape is None or dtype is None:  # ParametrizedAttribute.new, copy, pickle
            return super().__new__(cls)
        dims = shape if type(shape) is tuple else tuple(shape)
        if type(dtype) is DType and _DIM_TYPES.issuperset(map(type, dims)):
            t = _TENSOR_TYPES.get((dims, dtype._value_))  # the common case: built before
            if t is not None:
                return t
        return cls._intern(_as_dims(dims), DType.parse(dtype))

    def __init__(self, shape: Iterable[Dim | str], dtype: DType | str):
        pass  # built by __new__

    @classmethod
    def new(cls, params: Sequence[Attribute]) -> TensorType:
        dims, element = params
        if not isinstance(element, StringAttr) or element.data not in _DTYPE_SPELLINGS:
            return super().new(params)  # let the verifier say what is wrong
        assert isinstance(dims, ArrayAttr)
        return cls._intern(tuple(d.data for d in dims.data), DType(element.data))

    @classmethod
    def _intern(cls, shape: Shape, dtype: DType) -> TensorType:
        key = (shape, dtype._value_)
        t = _TENSOR_TYPES.get(key)
        if t is None:
            t = super().__new__(cls)
            element = _ELEMENT_ATTRS.get(dtype)
            if element is None:
                element = _ELEMENT_ATTRS[dtype] = StringAttr(dtype.value)
            dims = ArrayAttr(tuple(IntAttr(d) if isinstance(d, int) else DimAttr(d) for d in shape))
            ParametrizedAttribute.__init__(t, dims, element)
            facts = t.__dict__
            facts["shape"] = shape
            facts["dtype"] = dtype
            facts["rank"] = len(shape)
            facts["is_static"] = all(isinstance(d, int) for d in shape)
            _TENSOR_TYPES[key] = t
        return t

    # -- accessors -----------------------------------------------------------------
    if TYPE_CHECKING:
        # Plain attributes of an interned type, set by ``_intern`` (passes read them of
        # every value they look at), or by ``__getattr__`` on first use for any other
        # instance. Not annotated at run time: IRDL would take them for parameters.
        shape: Shape
        dtype: DType
        rank: int
        is_static: bool

    def __getattr__(self, name: str) -> Any:
        if name == "shape":
            value: Any = tuple(d.data for d in self.dims.data)
        elif name == "dtype":
            value = DType(self.element.data)
        elif name == "rank":
            value = len(self.shape)
        elif name == "is_static":
            value = all(isinstance(d, int) for d in self.shape)
        else:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.__dict__[name] = value
        return value

    def static_shape(self) -> tuple[int, ...]:
        """The dims as numbers; a symbolic dim raises TypeError (size it first)."""
        return tuple(int(d) for d in self.shape)

    # What follows from the shape alone is worked out once per (interned, immutable) type
    # and kept beside it, as the shape is: passes and verifiers ask of every value.
    def symbols(self) -> tuple[str, ...]:
        """The symbols the dims are written in, sorted and without repeats."""
        symbols = self.__dict__.get("_symbols")
        if symbols is None:
            symbols = self.__dict__["_symbols"] = shape_symbols(self.shape)
        return symbols

    def num_elements(self) -> int | None:
        """Element count, or None when a dim is symbolic."""
        d = self.__dict__
        if "_elements" not in d:
            d["_elements"] = num_elements(self.shape)
        return d["_elements"]

    def nbytes(self) -> int | None:
        d = self.__dict__
        if "_nbytes" not in d:
            n = self.num_elements()
            d["_nbytes"] = None if n is None else n * self.dtype.itemsize
        return d["_nbytes"]

    def with_shape(self, shape: Iterable[Dim | str]) -> TensorType:
        return TensorType(shape, self.dtype)

    def with_dtype(self, dtype: DType | str) -> TensorType:
        return TensorType(self.shape, dtype)

    def bind(self, bindings: Mapping[str, Dim]) -> TensorType:
        """Substitute the symbols that ``bindings`` knows; others stay symbolic."""
        return TensorType((substitute(d, bindings) for d in self.shape), self.dtype)

    # -- text form -------------------------------------------------------------------
    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def parse_dim() -> IntAttr | DimAttr:
            pos = parser.pos
            value = parse_ir_dim(parser)
            if isinstance(value, int):
                if value < 0:
                    parser.raise_error(f"negative dim {value}", pos, parser.pos)
                if value > MAX_DIM:
                    parser.raise_error(f"dim {value} does not fit in 63 bits", pos, parser.pos)
                return IntAttr(value)
            if interval(value)[1] < 0:
                parser.raise_error(f"dim '{value}' is negative", pos, parser.pos)
            return DimAttr(value)

        with parser.in_angle_brackets():
            dims = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parse_dim)
            parser.parse_punctuation(",")
            pos = parser.pos
            spelling = parser.parse_identifier("expected an element type")
            if spelling not in _DTYPE_SPELLINGS:
                known = ", ".join(d.value for d in DType)
                parser.raise_error(f"unknown element type '{spelling}' (known: {known})", pos)
        return (ArrayAttr(dims), StringAttr(spelling))

    def print_parameters(self, printer: Printer) -> None:
        dims = ", ".join(str(d.data) for d in self.dims.data)
        printer.print_string(f"<[{dims}], {self.element.data}>")

    def verify(self) -> None:
        for d in self.dims.data:
            if isinstance(d, IntAttr) and d.data < 0:
                raise VerifyException(f"negative dim {d.data} in tensor type")
            if isinstance(d, IntAttr) and d.data > MAX_DIM:
                raise VerifyException(f"dim {d.data} does not fit in 63 bits")
            if isinstance(d, DimAttr) and interval(d.data)[1] < 0:
                raise VerifyException(f"dim '{d.data}' is negative for every size")
        if self.element.data not in _DTYPE_SPELLINGS:
            raise VerifyException(f"unknown element type {self.element.data!r}")

    def __str__(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        return f"!rlx.tensor<[{dims}], {self.element.data}>"


# ---------------------------------------------------------------------------------
# Shape rules shared by verifiers and builders. They raise VerifyException so that a
# verifier can let the message through unchanged.
# ---------------------------------------------------------------------------------


def num_elements(shape: Sequence[Dim]) -> int | None:
    """Element count of a static shape, None when a dim is symbolic."""
    if not all(isinstance(d, int) for d in shape):
        return None
    return math.prod(cast(Sequence[int], shape))


def element_count(shape: Sequence[Dim]) -> Dim:
    """Element count as a dim (an expression when the shape is symbolic)."""
    out: Dim = 1
    for d in shape:
        out = out * d
    return out


def row_major_strides(shape: Sequence[Dim]) -> list[Dim]:
    """Element strides of a dense row-major tensor (expressions for symbolic dims)."""
    out: list[Dim] = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def is_static_shape(shape: Sequence[object]) -> TypeGuard[Sequence[int]]:
    """Every dim is a number (for the type checker too: the shape narrows to ints)."""
    return all(isinstance(d, int) for d in shape)


def fmt_shape(shape: Sequence[Dim]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def broadcast_dims(a: Dim, b: Dim) -> Dim:
    """NumPy's rule for one dim. Where a symbol meets another size it must be 1 or that
    size at run time (the executor checks): against a number the result is the number,
    against another symbol it is their ``max``."""
    if a == b:
        return a
    if a == 1:
        return b
    if b == 1:
        return a
    if isinstance(a, int) and isinstance(b, int):
        raise VerifyException(f"dims {a} and {b} do not broadcast")
    if isinstance(a, int):
        return a
    if isinstance(b, int):
        return b
    return dim_max(a, b)


def may_equal(a: Dim, b: Dim) -> bool:
    """Whether two dims are equal at some sizes: surely, or symbolic ones whose
    difference can be 0 (``2 * (h floordiv 32)`` and ``h floordiv 16``, equal where the
    model's own size rule holds; the executor checks each run)."""
    if a == b:
        return True
    if isinstance(a, int) and isinstance(b, int):
        return False
    lo, hi = interval(a - b)
    return lo <= 0 <= hi


def may_expand_to(a: Dim, b: Dim) -> bool:
    """Whether a dim ``a`` can broadcast to ``b``: surely (``a == b`` or ``a == 1``), or,
    for a symbolic ``a``, at the sizes where it is 1 or ``b`` (``min(seq, 64)`` to
    ``seq``: the executor checks at run time, as broadcasting against a symbol does)."""
    if a == b or a == 1:
        return True
    if isinstance(a, int):
        return False
    alo, ahi = interval(a)
    return may_equal(a, b) or alo <= 1 <= ahi


def broadcast_shapes(*shapes: Sequence[Dim]) -> Shape:
    """NumPy broadcasting, right-aligned (symbolic dims: see ``broadcast_dims``)."""
    first = shapes[0] if shapes else ()
    rest = shapes[1:]
    if type(first) is tuple and (
        rest[0] == first if len(rest) == 1 else all(s == first for s in rest)
    ):
        if _DIM_TYPES.issuperset(map(type, first)):
            return first  # dims already (a type's shape): as_dim would return each as is
        return tuple(as_dim(d) for d in first)
    rank = max((len(s) for s in shapes), default=0)
    out: list[Dim] = [1] * rank
    for s in shapes:
        padded = [1] * (rank - len(s)) + [as_dim(d) for d in s]
        for i, d in enumerate(padded):
            try:
                out[i] = broadcast_dims(out[i], d)
            except VerifyException:
                raise VerifyException(
                    "shapes " + ", ".join(fmt_shape(x) for x in shapes) + " do not broadcast"
                ) from None
    return tuple(out)


def normalize_axis(axis: int, rank: int) -> int:
    """Wrap a negative axis; raise for one out of range."""
    if not -rank <= axis < max(rank, 1) or (rank == 0 and axis not in (0, -1)):
        raise VerifyException(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def check_axis(axis: int, rank: int, what: str = "axis") -> None:
    """IR attributes hold normalised axes: 0 <= axis < rank."""
    if not 0 <= axis < rank:
        raise VerifyException(f"{what} {axis} must be in [0, {rank}) for a rank-{rank} operand")


def may_reshape(a: Sequence[Dim], b: Sequence[Dim]) -> bool:
    """Whether shape ``a`` can be reshaped into ``b``: their element counts are one
    expression, or counts that agree at some sizes over ``a``'s own symbols (PP-OCR's
    recognizer reshapes its feature map by a height it takes to be 1, which is so only
    at its 48-pixel input height: the executor checks each run). A count over a symbol
    ``a`` does not hold cannot be sized from ``a``: refused."""
    ca = element_count([as_dim(d) for d in a])
    cb = element_count([as_dim(d) for d in b])
    if ca == cb:
        return True
    return symbols_of(cb) <= symbols_of(ca) and may_equal(ca, cb)


def tensor(shape: Iterable[Dim | str], dtype: DType | str = DType.F32) -> TensorType:
    return TensorType(shape, dtype)


def window_out_size(
    size: Dim,
    kernel: int,
    stride: int,
    pad_begin: int,
    pad_end: int,
    dilation: int,
    ceil_mode: bool = False,
) -> Dim:
    """Output length of a window sweep (conv, pooling), the ONNX/PyTorch rule: with
    ``ceil_mode`` a last partial window counts only if it starts inside the input or the
    begin pad. A symbolic size gives an expression (``(h + 1) floordiv 2``)."""
    span = dilation * (kernel - 1) + 1
    num = size + pad_begin + pad_end - span
    if interval(num)[1] < 0:
        raise VerifyException(f"window {span} does not fit a padded size {num + span}")
    if not ceil_mode:
        return num // stride + 1
    # ceil(num / stride) + 1 windows, less the last one when it would start at or past
    # size + pad_begin -- written with min/max so that it holds for symbolic sizes too.
    c = ceildiv(num, stride)
    return dim_min(c + 1, dim_max(c, ceildiv(size + pad_begin, stride)))
