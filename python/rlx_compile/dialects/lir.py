"""The ``lir`` dialect: optimised MIR plus its arena buffer plan.

A ``lir.graph`` holds the scheduled kernel ops (MIR ops, in execution order) of one graph
and everything needed to run it inside one arena:

    lir.graph @layer arena 1280 align 64 inputs ["x"] params ["w"] outputs ["y"] {
      %x = mir.input "x" {slot = #lir.slot<0, 128>} : !rlx.tensor<[8, 4], f32>
      %w = mir.param "w" {slot = #lir.slot<256, 64>} : !rlx.tensor<[4, 4], f32>
      %m = mir.matmul %x, %w {slot = #lir.slot<128, 128>} : (...) -> !rlx.tensor<[8, 4], f32>
      %r = lir.view %m [32] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[16], f32>
      lir.return %r : !rlx.tensor<[16], f32>
    }

- ``arena``/``align``: the arena size in bytes and the largest slot alignment: a slot's
  offset is a multiple of its size's natural alignment up to it (``slot_offset_alignment``);
- ``slot``: the byte range ``<offset, size>`` an op writes its result to (an array of
  slots for multi-result ops); leaves get slots when the plan allocates them;
- ``lir.view``: an alias, not a kernel: the bytes of its root tensor (a non-view value)
  from a byte offset, read as the view's type (a reshape, a same-type cast, an axis-0
  narrow);
- control-flow ops (``mir.if``, ``mir.loop``) keep their regions, whose ops carry slots
  too: ``scratch`` is the byte range of the arena their regions' tensors live in (both
  branches of an if start at its beginning; a loop's body reuses it every iteration), and
  a loop's ``arg_slots`` hold its body's arguments (iteration number, condition, carried
  values), inside the scratch;
- the IO manifest (``inputs``/``params``/``outputs``) names the graph's leaves and results.

A *range plan* serves every size of its symbolic dims within declared ranges:

    lir.graph @g arena 4096 align 64 dims [1 <= seq <= 512] inputs ["x"] ... {
      %x = mir.input "x" {slot = #lir.slot<0, 2048>} : !rlx.tensor<[seq], f32>

Types stay symbolic and every slot holds its tensor at the largest size in range (the
upper bound of its byte count), so one arena and one set of offsets serve them all; the
executors refuse sizes outside the ranges. A symbol of the body without a range, or a
slot smaller than its tensor's upper bound, fails the verifier.

``plan-memory`` (``rlx_compile.conversion.mir_to_lir``) converts MIR to LIR. Overlap and
lifetime safety of a plan is not a verifier concern: ``plan-check`` proves it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    ArrayAttr,
    IntAttr,
    StringAttr,
    SymbolNameConstraint,
    UnitAttr,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    OpResult,
    ParametrizedAttribute,
    Region,
    SSAValue,
    SSAValues,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects.common import I64Attr, ShapedOp, int_attr, int_data
from rlx_compile.dialects.construct import fast_accessors, init_fields, link_operands, walk_list
from rlx_compile.dialects.dim_expr import Dim, interval, is_symbol_name, upper_bound
from rlx_compile.dialects.op_support import Props, as_value
from rlx_compile.dialects.types import TensorType, element_count

DimRanges = Mapping[str, tuple[int, int]]
"""Symbol -> (lo, hi): the sizes a range plan serves, both ends included."""

SLOT_ATTR = "slot"
SCRATCH_ATTR = "scratch"
ARG_SLOTS_ATTR = "arg_slots"


@irdl_attr_definition
class SlotAttr(ParametrizedAttribute):
    """``#lir.slot<offset, size>``: a byte range of the arena."""

    name = "lir.slot"

    offset_attr: IntAttr
    size_attr: IntAttr

    def __init__(self, offset: int, size: int):
        super().__init__(IntAttr(offset), IntAttr(size))

    @classmethod
    def of(cls, offset: int, size: int) -> SlotAttr:
        """``SlotAttr(offset, size)`` without xDSL's generic checks of its parameters (two
        IntAttrs of what are ints here): the planner builds one per planned value."""
        if type(offset) is not int or type(size) is not int:
            return cls(offset, size)
        slot = object.__new__(cls)
        fields = slot.__dict__
        fields["offset_attr"] = int_data(offset)
        fields["size_attr"] = int_data(size)
        return slot

    @property
    def offset(self) -> int:
        return self.offset_attr.data

    @property
    def size(self) -> int:
        return self.size_attr.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            offset = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation(",")
            size = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return (IntAttr(offset), IntAttr(size))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.offset}, {self.size}>")


def tensor_bytes(t: TensorType) -> Dim:
    """The byte count of a tensor type: an int, or an expression of its symbolic dims."""
    static = t.nbytes()
    return static if static is not None else element_count(t.shape) * t.dtype.itemsize


def bytes_upper_bound(t: TensorType, ranges: DimRanges) -> int | None:
    """The most bytes ``t`` takes with its dims in ``ranges`` (None: unbounded)."""
    need = tensor_bytes(t)
    return need if isinstance(need, int) else upper_bound(need, ranges)


@irdl_attr_definition
class DimRangeAttr(ParametrizedAttribute):
    """One symbolic dim's range in a range plan: ``lo <= symbol <= hi``."""

    name = "lir.dim_range"

    symbol: StringAttr
    lo: IntAttr
    hi: IntAttr

    def __init__(self, symbol: str, lo: int, hi: int):
        super().__init__(StringAttr(symbol), IntAttr(lo), IntAttr(hi))

    def verify(self) -> None:
        name, lo, hi = self.symbol.data, self.lo.data, self.hi.data
        if not is_symbol_name(name):
            raise VerifyException(f"'{name}' is not a symbolic dim name")
        if not 1 <= lo <= hi:
            raise VerifyException(f"range {lo} <= {name} <= {hi} must have 1 <= lo <= hi")


@irdl_custom_directive
class DimRangeList(CustomDirective):
    """``[1 <= seq <= 512, 1 <= batch <= 8]``: the ranges of a range plan (optional: an
    exact plan has none)."""

    ranges: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        def one() -> DimRangeAttr:
            start = parser.pos
            lo = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation("<")
            parser.parse_punctuation("=")
            name = parser.parse_identifier("expected a symbolic dim name")
            parser.parse_punctuation("<")
            parser.parse_punctuation("=")
            hi = parser.parse_integer(allow_boolean=False, allow_negative=False)
            try:
                return DimRangeAttr(name, lo, hi)
            except VerifyException as err:
                parser.raise_error(str(err), start, parser.pos)

        items = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, one)
        self.ranges.set(state, ArrayAttr(items))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        attr = cast(ArrayAttr[DimRangeAttr], self.ranges.get(op))
        printer.print_string(
            "["
            + ", ".join(f"{r.lo.data} <= {r.symbol.data} <= {r.hi.data}" for r in attr.data)
            + "]"
        )

    def is_present(self, op: IRDLOperation) -> bool:
        return self.ranges.get(op) is not None

    def is_anchorable(self) -> bool:
        return True

    def set_empty(self, state: ParsingState) -> None:
        pass  # no ranges: an exact plan


def result_slots(op: Any) -> list[SlotAttr | None]:
    """The slot of each result of a kernel op (None where it has no slot)."""
    attr = op.attributes.get(SLOT_ATTR)
    if attr is None:
        return [None] * len(op.results)
    if isinstance(attr, SlotAttr):
        return [attr]
    return [cast(SlotAttr, a) for a in cast(ArrayAttr[Attribute], attr).data]


def set_result_slots(op: Any, slots: Sequence[SlotAttr | None]) -> None:
    if all(s is None for s in slots):
        op.attributes.pop(SLOT_ATTR, None)
    elif len(slots) == 1:
        op.attributes[SLOT_ATTR] = slots[0]
    else:
        if any(s is None for s in slots):
            raise ValueError("a multi-result op gets a slot for every result or none")
        op.attributes[SLOT_ATTR] = ArrayAttr(cast(Sequence[SlotAttr], slots))


def scratch_slot(op: Any) -> SlotAttr | None:
    """The scratch range of a control-flow op (where its regions' tensors live)."""
    attr = op.attributes.get(SCRATCH_ATTR)
    return attr if isinstance(attr, SlotAttr) else None


def arg_slots(op: Any) -> list[SlotAttr]:
    """The slots of a loop body's arguments (empty when not planned)."""
    attr = op.attributes.get(ARG_SLOTS_ATTR)
    return [] if attr is None else [cast(SlotAttr, a) for a in cast(ArrayAttr[Attribute], attr)]


def set_region_slots(op: Any, scratch: SlotAttr, args: Sequence[SlotAttr] = ()) -> None:
    op.attributes[SCRATCH_ATTR] = scratch
    if args:
        op.attributes[ARG_SLOTS_ATTR] = ArrayAttr(list(args))


@irdl_op_definition
class ViewOp(ShapedOp):
    """An alias of ``root``'s bytes from ``byte_offset``, read as the result type."""

    name = "lir.view"
    root = operand_def(TensorType)
    byte_offset = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "$root `[` $byte_offset `]` attr-dict `:` type($root) `->` type($result)"

    def __init__(self, root: SSAValue, byte_offset: int, type: TensorType):
        self._build({"root": root}, {"byte_offset": int_attr(byte_offset)}, [type])

    @property
    def offset(self) -> int:
        return self.props().int("byte_offset")

    def check_result(self, props: Props, *, root: TensorType) -> None:
        if isinstance(self.root.owner, ViewOp):
            raise VerifyException("a view's root must not itself be a view")
        out = self.result.type
        offset = props.int("byte_offset")
        root_bytes, view_bytes = tensor_bytes(root), tensor_bytes(out)
        # Symbolic views must fit for every size: in their graph's ranges, or any size.
        graph = self.parent_op()
        ranges = graph.ranges if isinstance(graph, GraphOp) else {}
        if offset < 0 or interval(root_bytes - view_bytes - offset, dict(ranges))[0] < 0:
            raise VerifyException(
                f"view bytes [{offset}, {offset + view_bytes}) exceed the root's {root_bytes}"
            )


@irdl_op_definition
class ReturnOp(ShapedOp):
    """Terminator of a ``lir.graph``: the graph outputs, in manifest order."""

    name = "lir.return"
    values = var_operand_def(TensorType)
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(GraphOp), Pure()))
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        # What ``_build`` makes of one group of operands and no results or properties,
        # without finding that out again for every graph.
        link_operands(self, [as_value(v) for v in values])
        init_fields(self, _NO_RESULTS, {}, {}, UNKNOWN_LOC)


_NO_RESULTS: SSAValues[OpResult] = SSAValues()


def _names(values: Sequence[str]) -> ArrayAttr[StringAttr]:
    """``ArrayAttr([StringAttr(v) for v in values])``, field by field for strs."""
    names = object.__new__(ArrayAttr)
    names.__dict__["data"] = tuple([_string(v) for v in values])  # frozen, as _string's
    return cast(ArrayAttr[StringAttr], names)


def _string(v: str) -> StringAttr:
    """``StringAttr(v)``, field by field for a str (what its checks pass by construction):
    a graph's manifest names every param."""
    if type(v) is not str:
        return StringAttr(v)
    attr = object.__new__(StringAttr)
    attr.__dict__["data"] = v  # frozen: its field set as object.__setattr__ sets it
    return attr


@irdl_op_definition
class GraphOp(ShapedOp):
    """A planned graph: scheduled kernel ops, their slots, and the IO manifest."""

    name = "lir.graph"
    sym_name = prop_def(SymbolNameConstraint())
    arena_size = prop_def(I64Attr)
    alignment = prop_def(I64Attr)
    inputs = prop_def(ArrayAttr[StringAttr])
    params = prop_def(ArrayAttr[StringAttr])
    outputs = prop_def(ArrayAttr[StringAttr])
    reuse_inputs = opt_prop_def(UnitAttr)
    """Inputs are loaded afresh every run and their slots may be reused after their last
    read; without it, inputs keep their slots for the whole run."""
    dim_ranges = opt_prop_def(ArrayAttr[DimRangeAttr])
    """A range plan's ranges (see the module docstring); absent in an exact plan."""
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())
    INFER_RESULTS: ClassVar[bool] = False
    custom_directives = (DimRangeList,)
    assembly_format = (
        "$sym_name `arena` $arena_size `align` $alignment "
        "(`dims` custom<DimRangeList>($dim_ranges)^)? `inputs` $inputs "
        "(`reuse_inputs` $reuse_inputs^)? `params` $params `outputs` $outputs "
        "attr-dict-with-keyword $body"
    )

    def __init__(
        self,
        name: str,
        body: Region,
        *,
        arena_size: int,
        alignment: int,
        inputs: Sequence[str],
        params: Sequence[str],
        outputs: Sequence[str],
        reuse_inputs: bool = False,
        dim_ranges: DimRanges | None = None,
    ):
        ranges = (
            ArrayAttr([DimRangeAttr(k, lo, hi) for k, (lo, hi) in sorted(dim_ranges.items())])
            if dim_ranges
            else None
        )
        props = {
            "reuse_inputs": UnitAttr() if reuse_inputs else None,
            "dim_ranges": ranges,
            "sym_name": StringAttr(name),
            "arena_size": int_attr(arena_size),
            "alignment": int_attr(alignment),
            "inputs": _names(inputs),
            "params": _names(params),
            "outputs": _names(outputs),
        }
        if body.parent is not None:  # IRDL's builder says what is wrong
            self._build({}, props, [], regions=[body])
            return
        # What IRDL's generic builder makes of these (no operands, results or successors;
        # one region), without its bookkeeping: most of the cost of planning a small graph.
        link_operands(self, ())
        clean: dict[str, Attribute] = {k: v for k, v in props.items() if v is not None}
        init_fields(self, _NO_RESULTS, clean, {}, UNKNOWN_LOC)
        self.add_region(body)

    @property
    def arena_bytes(self) -> int:
        return self.props().int("arena_size")

    @property
    def align(self) -> int:
        return self.props().int("alignment")

    @property
    def ranges(self) -> dict[str, tuple[int, int]]:
        """The ranges of a range plan, by symbol (empty for an exact plan)."""
        attr = self.properties.get("dim_ranges")
        if attr is None:
            return {}
        return {
            r.symbol.data: (r.lo.data, r.hi.data) for r in cast(ArrayAttr[DimRangeAttr], attr).data
        }

    def check_bindings(self, bindings: Mapping[str, int]) -> None:
        """Refuse sizes the plan was not made for (a range plan's dims outside their
        ranges); the executors call this before running the graph."""
        for name, (lo, hi) in self.ranges.items():
            size = bindings.get(name)
            if size is not None and not lo <= size <= hi:
                raise ValueError(
                    f"dim '{name}' is {size}, outside the range {lo}..{hi} that "
                    f"@{self.sym_name.data} was planned for"
                )

    def check_result(self, props: Props, **operands: Any) -> None:
        arena, align = props.int("arena_size"), props.int("alignment")
        if arena < 0:
            raise VerifyException("arena size must be non-negative")
        if align <= 0 or align & (align - 1):
            raise VerifyException(f"alignment {align} must be a power of two")
        block = self.body.block
        term = block.last_op
        if not isinstance(term, ReturnOp):
            raise VerifyException("a lir.graph body must end with lir.return")
        inputs: list[str] = []
        params: list[str] = []
        for op in block.ops:
            if op.name == "mir.input":
                inputs.append(cast(StringAttr, op.properties["tensor_name"]).data)
            elif op.name == "mir.param":
                params.append(cast(StringAttr, op.properties["tensor_name"]).data)
        manifest = {k: [s.data for s in cast(ArrayAttr[StringAttr], self.properties[k]).data]
                    for k in ("inputs", "params", "outputs")}  # fmt: skip
        if manifest["inputs"] != inputs:
            raise VerifyException(f"manifest inputs {manifest['inputs']} != graph inputs {inputs}")
        if manifest["params"] != params:
            raise VerifyException(f"manifest params {manifest['params']} != graph params {params}")
        if len(manifest["outputs"]) != len(term.operands):
            raise VerifyException(
                f"manifest names {len(manifest['outputs'])} outputs, lir.return has "
                f"{len(term.operands)}"
            )
        ranges = self.ranges
        declared = self.properties.get("dim_ranges")
        if declared is not None and len(cast(ArrayAttr[Attribute], declared).data) != len(ranges):
            raise VerifyException("a symbolic dim has two ranges")
        for op in walk_list(self)[1:]:  # the body, region ops' bodies included
            for result in op.results:
                t = result._type
                symbols = t.symbols() if isinstance(t, TensorType) else ()
                unranged = set(symbols) - ranges.keys() if symbols else ()
                if unranged:
                    raise VerifyException(
                        f"{op.name}: symbolic dims {sorted(unranged)} have no range "
                        "(a lir.graph is planned for exact sizes or declared ranges)"
                    )
            attrs = op.attributes
            slot = attrs.get(SLOT_ATTR)
            if (
                (slot is None or (type(slot) is SlotAttr and len(op.results) == 1))
                and attrs.get(ARG_SLOTS_ATTR) is None
                and attrs.get(SCRATCH_ATTR) is None
            ):
                # A kernel's one slot, or none (the common case): what the loop below
                # checks of it, its bytes in range read once.
                if slot is not None:
                    _check_slot(op, op.results[0], slot, ranges, align, arena)
                continue
            slotted: list[tuple[SSAValue, SlotAttr | None]] = list(
                zip(op.results, result_slots(op), strict=True)
            )
            arg_slot_list = arg_slots(op)
            args = op.regions[0].block.args if op.regions and arg_slot_list else ()
            if len(arg_slot_list) != len(args):
                raise VerifyException(
                    f"{op.name}: {len(arg_slot_list)} argument slots for {len(args)} arguments"
                )
            slotted += list(zip(args, arg_slot_list, strict=True))
            scratch = scratch_slot(op)
            for value, value_slot in slotted:
                if value_slot is not None:
                    _check_slot(op, value, value_slot, ranges, align, arena)
            if scratch is not None:
                _check_range(op.name, "scratch", scratch, align, arena)


def _check_slot(
    op: Operation, value: SSAValue, slot: SlotAttr, ranges: DimRanges, align: int, arena: int
) -> None:
    """``value``'s slot holds it at its largest size, aligned, inside the arena."""
    t = cast(TensorType, value.type)
    need = bytes_upper_bound(t, ranges)
    if need is None:
        raise VerifyException(f"{op.name}: {t} has no upper bound in the ranges")
    offset, size = slot.offset_attr.data, slot.size_attr.data
    if size < need:
        raise VerifyException(f"{op.name}: slot of {size} bytes holds a {need}-byte tensor")
    if offset % slot_offset_alignment(size, align) or offset + size > arena:
        _check_range(op.name, "slot", slot, align, arena)


def slot_offset_alignment(size: int, alignment: int) -> int:
    """What the offset of a ``size``-byte slot of a plan made with ``alignment`` (a power
    of two) is a multiple of: the largest power of two dividing both, the size's natural
    alignment (elements, and any vector access whose width divides the size, stay
    aligned); an empty slot holds no bytes, so any offset. The planner's rule
    (``memory.placement.slot_alignment``), restated here for the verifier and plan-check
    to check it independently."""
    return math.gcd(size, alignment) if size else 1


def _check_range(name: str, what: str, slot: SlotAttr, align: int, arena: int) -> None:
    need = slot_offset_alignment(slot.size, align)
    if slot.offset % need:
        raise VerifyException(f"{name}: {what} offset {slot.offset} is not a multiple of {need}")
    if slot.offset + slot.size > arena:
        raise VerifyException(
            f"{name}: {what} [{slot.offset}, {slot.offset + slot.size}) "
            f"exceeds the arena ({arena} bytes)"
        )


LIR_OPS: list[type[ShapedOp]] = [GraphOp, ViewOp, ReturnOp]
fast_accessors(LIR_OPS)
LIR = Dialect("lir", [*LIR_OPS], [SlotAttr, DimRangeAttr])
