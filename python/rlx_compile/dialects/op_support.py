"""The work of building and verifying the RLX dialects' ops (``common.ShapedOp``), and
``Props``, the typed reading of an op's properties that ``infer`` takes.

Compiled with mypyc (see ``_compiled.COMPILED``): every op of every compile is built and
verified here. ``ShapedOp``'s methods call these functions, as xDSL's op classes are
interpreted ones (``IRDLOperation``), which a compiled module does not define."""

from __future__ import annotations

import builtins
import struct
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from operator import attrgetter
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    f64,
    i32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    ErasedSSAValue,
    Operation,
    OpResult,
    SSAValue,
)
from xdsl.irdl import IRDLOperation, OptOperandDef, ResultDef, VarOperandDef
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects.construct import init_fields, link_operands, new_results
from rlx_compile.dialects.dim_expr import Dim
from rlx_compile.dialects.signature import (
    SEGMENT_SIZES,
    class_has_trait,
    operand_check,
    segment_sizes,
    segmented_operands,
)
from rlx_compile.dialects.types import DimAttr, TensorType

OperandTypes = TensorType | list[TensorType] | None

# ---------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------


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


def as_tensor(t: Attribute, what: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what} must be an !rlx.tensor, got {t}")
    return t


# ---------------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------------


def build_op(
    op: IRDLOperation,
    operands: Mapping[str, SSAValue | Operation | Sequence[SSAValue] | None],
    props: Mapping[str, Attribute | None] | None = None,
    result_types: Sequence[Attribute | Sequence[Attribute]] | None = None,
    attributes: Mapping[str, Attribute | None] | None = None,
    regions: Sequence[Any] | None = None,
) -> None:
    """``ShapedOp._build``: set up ``op`` (made by its class's ``__init__``) from its
    operands by name, properties (None: absent), result types (None: inferred from the
    operand types and properties, and recorded as such), attributes and regions."""
    cls: Any = type(op)
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
        results: list[Attribute] = list(cast(Sequence[Attribute], result_types))
        attrs = {k: v for k, v in attributes.items() if v is not None} if attributes else {}
        given = len(clean_props)
        link_operands(op, values)
        init_fields(op, new_results(op, results), clean_props, attrs, UNKNOWN_LOC)
        if inferred and len(clean_props) == given:  # no default property filled in
            op.__dict__[INFERRED_FROM] = (
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
            raise ValueError(f"{op.name}: missing operand '{name}'")
        value = operands[name]
        if isinstance(odef, OptOperandDef):
            ordered.append([] if value is None else [value])
        else:
            ordered.append(value)
    unknown = set(operands) - {n for n, _ in op_def.operands}
    if unknown:
        raise ValueError(f"{op.name}: unknown operands {sorted(unknown)}")
    inferred = result_types is None
    if result_types is None:
        types = {n: _types_of(v) for n, v in operands.items()}
        result_types = cls.infer(Props(cls, clean_props), **types)
    _init(op, ordered, cast(Sequence[Any], result_types), clean_props, attributes, regions)
    if inferred and op.properties == clean_props:
        op.__dict__[INFERRED_FROM] = inference_inputs(op)


def _init(
    op: IRDLOperation,
    ordered: list[Any],
    result_types: Sequence[Any],
    clean_props: dict[str, Attribute],
    attributes: Mapping[str, Attribute | None] | None,
    regions: Sequence[Any] | None,
) -> None:
    cls: Any = type(op)
    props = dict(clean_props)
    values = None if regions else _fast_operands(cls, ordered)
    if values is None and not regions and _segmented_single_results(cls):
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
        link_operands(op, values)
        attrs = {k: v for k, v in (attributes or {}).items() if v is not None}
        # single results: each entry is one type, never a variadic group
        results = new_results(op, cast(list[Attribute], list(result_types)))
        init_fields(op, results, props, attrs, UNKNOWN_LOC)
        return
    IRDLOperation.__init__(
        op,
        operands=ordered,
        result_types=list(result_types),
        properties=clean_props,
        attributes=dict(attributes or {}),
        regions=list(regions or []),
    )


# ---------------------------------------------------------------------------------
# Verifying
# ---------------------------------------------------------------------------------


def named_operand_types(op: IRDLOperation) -> dict[str, OperandTypes]:
    """``ShapedOp.named_operand_types``: the op's operand types by operand name (a list
    for a variadic operand, None for an absent optional one)."""
    cls: Any = type(op)
    names = single_operand_names(cls)
    operands = op._operands
    if names is not None and len(names) == len(operands):
        types = {n: v._type for n, v in zip(names, operands, strict=True)}
        return cast(dict[str, OperandTypes], types)  # checked by the signature
    layout = _operand_layout(cls)
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
    segmented = _segmented_operand_names(cls)
    sizes = None if segmented is None else segment_sizes(op.properties.get(SEGMENT_SIZES))
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
    for name, odef in cls.get_irdl_definition().operands:
        value = getattr(op, name)
        if isinstance(odef, OptOperandDef):
            out[name] = None if value is None else value._type
        elif isinstance(odef, VarOperandDef):
            out[name] = [v._type for v in value]
        else:
            out[name] = value._type
    return out


def verify_op(op: IRDLOperation, verify_nested_ops: bool) -> None:
    """xDSL's ``Operation.verify`` of an op without successors: the same checks, in the
    same order, with the same errors, reading the op's fields directly."""
    for operand in op._operands:
        kind = type(operand)
        if (
            kind is not OpResult
            and kind is not BlockArgument
            and isinstance(operand, ErasedSSAValue)
        ):
            raise ValueError("Erased SSA value is used by the operation")
    block = op.parent
    region = None if block is None else block.parent
    if region is not None and cast(Block, block)._last_op is op:
        first = region._first_block
        if first is region._last_block:  # a single-block region
            owner = region.parent
            if (
                owner is not None
                and not class_has_trait(type(owner), NoTerminator)
                and not class_has_trait(type(op), IsTerminator)
            ):
                raise VerifyException(
                    f"Operation {op.name} terminates block in "
                    "single-block region but is not a terminator"
                )
        elif not class_has_trait(type(op), IsTerminator):
            raise VerifyException(
                f"Operation {op.name} terminates block in multi-block "
                "region but is not a terminator"
            )
    if verify_nested_ops:
        for nested in op.regions:
            nested.verify()
    try:
        op.verify_()
    except VerifyException as err:
        op.emit_error(f"Operation does not verify: {err}", err)


VERIFY_OP_EQUIVALENTS: set[Any] = {Operation.verify}
"""Methods that, for an IRDL op without successors, check what ``verify_op`` checks:
xDSL's ``Operation.verify``, and ``ShapedOp.verify`` (which calls ``verify_op``)."""


def verify_one(op: Operation) -> None:
    """``op.verify(verify_nested_ops=False)``, through ``verify_op`` where that is what the
    op's class does: the builtin and func ops otherwise run xDSL's ``Operation.verify``,
    the same checks as Python that, after a collection, is read from memory for every
    module verified. (The class's method is looked up each time: one replaced later, as
    a test's spy is, is called.)"""
    method: Any = cast(Any, type(op)).verify
    if method in VERIFY_OP_EQUIVALENTS and not op._successors and isinstance(op, IRDLOperation):
        verify_op(op, False)
    else:
        op.verify(verify_nested_ops=False)


def check_result_types(op: IRDLOperation) -> None:
    """``ShapedOp.verify_``: the operands are tensors, and the result types are those
    the op's ``infer`` gives (or, for an op of free result types, its ``check_result``
    accepts them)."""
    cls: Any = type(op)
    operand_types = None
    if not _tensor_operands(cls):
        operand_types = named_operand_types(op)
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
        props = Props(cls, op.properties)
        cast(Any, op).check_result(props, **(operand_types or named_operand_types(op)))
        return
    if _TRUST_INFERRED.get():
        record = op.__dict__.get(INFERRED_FROM)
        if record is not None and record == inference_inputs(op):
            return  # the result types were inferred from these very operand types and props
    expected = cls.infer(Props(cls, op.properties), **(operand_types or named_operand_types(op)))
    results = op.results
    if len(expected) != len(results):
        raise VerifyException(f"expected {len(expected)} results, got {len(results)}")
    for i, (e, r) in enumerate(zip(expected, results, strict=True)):
        a = r._type
        if e is not a and e != a:  # interned types: equal ones are one object
            which = "result type" if len(results) == 1 else f"result #{i} type"
            raise VerifyException(f"{which} {a} does not match the inferred type {e}")


def inference_inputs(op: Operation) -> tuple[object, ...]:
    """What ``infer`` reads, with the result types it gave: compared by value."""
    return (
        tuple(map(stored_type, op._operands)),
        tuple(op.properties.items()),
        tuple(map(stored_type, op.results)),
    )


stored_type = attrgetter("_type")
"""A value's type, read from its field (xDSL's ``type`` is a property): unchecked, where
``builder.type_of`` checks it is a tensor."""

_TENSOR_OPERANDS: dict[type[Operation], bool] = {}


def _tensor_operands(op_type: type[IRDLOperation]) -> bool:
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


INFERRED_FROM = "_rlx_inferred_from"
"""Where an op built with inferred result types keeps ``inference_inputs(op)`` as they
were then (on the op: a clone starts without it)."""

_TRUST_INFERRED: ContextVar[bool] = ContextVar("rlx_trust_inferred", default=False)


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
