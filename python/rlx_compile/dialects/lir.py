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

- ``arena``/``align``: the arena size in bytes and the alignment of every slot offset;
- ``slot``: the byte range ``<offset, size>`` an op writes its result to (an array of
  slots for multi-result ops); leaves get slots when the plan allocates them;
- ``lir.view``: an alias, not a kernel: the bytes of its root tensor (a non-view value)
  from a byte offset, read as the view's type (a reshape, a same-type cast, an axis-0
  narrow);
- the IO manifest (``inputs``/``params``/``outputs``) names the graph's leaves and results.

``plan-memory`` (``rlx_compile.conversion.mir_to_lir``) converts MIR to LIR. Overlap and
lifetime safety of a plan is not a verifier concern: ``plan-check`` proves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr, SymbolNameConstraint, UnitAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
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
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects.common import I64Attr, Props, ShapedOp, int_attr
from rlx_compile.dialects.types import TensorType

SLOT_ATTR = "slot"


@irdl_attr_definition
class SlotAttr(ParametrizedAttribute):
    """``#lir.slot<offset, size>``: a byte range of the arena."""

    name = "lir.slot"

    offset_attr: IntAttr
    size_attr: IntAttr

    def __init__(self, offset: int, size: int):
        super().__init__(IntAttr(offset), IntAttr(size))

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
        out = cast(TensorType, self.result.type)
        offset = props.int("byte_offset")
        root_bytes, view_bytes = root.nbytes(), out.nbytes()
        if root_bytes is None or view_bytes is None:
            raise VerifyException("views need static shapes")
        if offset < 0 or offset + view_bytes > root_bytes:
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
        self._build({"values": list(values)}, {}, [])


def _names(values: Sequence[str]) -> ArrayAttr[StringAttr]:
    return ArrayAttr([StringAttr(v) for v in values])


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
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = (
        "$sym_name `arena` $arena_size `align` $alignment `inputs` $inputs "
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
    ):
        self._build(
            {},
            {
                "reuse_inputs": UnitAttr() if reuse_inputs else None,
                "sym_name": StringAttr(name),
                "arena_size": int_attr(arena_size),
                "alignment": int_attr(alignment),
                "inputs": _names(inputs),
                "params": _names(params),
                "outputs": _names(outputs),
            },
            [],
            regions=[body],
        )

    @property
    def arena_bytes(self) -> int:
        return self.props().int("arena_size")

    @property
    def align(self) -> int:
        return self.props().int("alignment")

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
        inputs = [
            cast(StringAttr, op.properties["tensor_name"]).data
            for op in block.ops
            if op.name == "mir.input"
        ]
        params = [
            cast(StringAttr, op.properties["tensor_name"]).data
            for op in block.ops
            if op.name == "mir.param"
        ]
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
        for op in block.ops:
            for result, slot in zip(op.results, result_slots(op), strict=True):
                if slot is None:
                    continue
                t = cast(TensorType, result.type)
                need = t.nbytes()
                if need is None:
                    raise VerifyException(f"{op.name}: a slotted tensor needs a static shape")
                if slot.size < need:
                    raise VerifyException(
                        f"{op.name}: slot of {slot.size} bytes holds a {need}-byte tensor"
                    )
                if slot.offset % align:
                    raise VerifyException(f"{op.name}: slot offset {slot.offset} is not aligned")
                if slot.offset + slot.size > arena:
                    raise VerifyException(
                        f"{op.name}: slot [{slot.offset}, {slot.offset + slot.size}) "
                        f"exceeds the arena ({arena} bytes)"
                    )


LIR = Dialect("lir", [GraphOp, ViewOp, ReturnOp], [SlotAttr])
