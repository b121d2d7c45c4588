"""What an ONNX op converter sees: the node, its operands as MIR values or as static
arrays, its attributes, and a builder that folds constant subgraphs as it emits.

``NodeContext`` is a converter's whole interface to the importer: value lookup, static
values, inferred shapes and the conversion of subgraphs (``convert_subgraph`` into a
region, ``inline_subgraph`` into the node's block). The importer owns the names of the
model and their scoping; a converter never binds or forgets one itself.

A converter is ``f(ctx) -> value | sequence of values (None for an output it does not
produce)``, registered for one or more op types with ``@converter("Relu", ...)``. It
reads every attribute it honours through ``ctx.attr``; an attribute present on the node
that the converter never read is reported as unsupported, so nothing is ignored silently.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import numpy.typing as npt
import onnx
from numpy.typing import ArrayLike
from onnx import helper
from xdsl.ir import Block, Operation, SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.dim_expr import DimExpr, is_symbol_name
from rlx_compile.dialects.types import Dim, DType, TensorType, fmt_shape
from rlx_compile.env import max_tensor_bytes
from rlx_compile.folding import FoldingBuilder
from rlx_compile.frontends.onnx.structured import Structured

if TYPE_CHECKING:
    from rlx_compile.frontends.onnx.importer import Importer
    from rlx_compile.frontends.onnx.symbolic import ShapeValue

Checkpoint = tuple[Operation | None, dict[str, SSAValue]]
"""Where the node's block ended and what the names held (``NodeContext.checkpoint``)."""

ConverterResult = SSAValue | Structured | Sequence[SSAValue | Structured | None] | None
Converter = Callable[["NodeContext"], ConverterResult]

CONVERTERS: dict[str, Converter] = {}
"""``op_key(domain, op_type)`` -> converter."""

DEFAULT_DOMAINS = ("", "ai.onnx")

ItemT = TypeVar("ItemT")


def items(field: Sequence[ItemT]) -> list[ItemT]:
    """A protobuf repeated field's items as a list, read in one call. What iterates the
    field itself (``for``, ``list()``, unpacking) goes through the sequence protocol, as
    upb's containers define no ``__iter__``: each loop ends on an IndexError, its message
    formatted and dropped, which costs more than reading a few items (the formatting alone
    was 2% of a small model's compile). For the fields read per node, value and attribute
    (not a long numeric field NumPy reads: a list makes a Python number of each item)."""
    return cast(list[ItemT], field[:])  # a slice of a container is a list


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs 3x
class NodeFields:
    """What the import reads of a node, read from protobuf once (each read of a field
    builds a new string or wrapper): the text check (``importer.check_names_are_text``)
    reads these, and the walks after it (quantisation parameters, shape inference's
    questions, the skeleton's Constant nodes, the nodes to convert and their attributes)
    take them from here instead of reading the node again."""

    proto: onnx.NodeProto
    op_type: str
    domain: str
    name: str
    """The node's own name field (empty when unnamed)."""
    inputs: list[str]
    outputs: list[str]
    attributes: list[onnx.AttributeProto]
    attribute_names: list[str]
    subgraphs: list[onnx.GraphProto]
    """The graphs its attributes hold (``g`` and ``graphs``)."""


def opset_versions(opset_imports: Iterable[onnx.OperatorSetIdProto]) -> dict[str, int]:
    """Domain -> imported version, the default domain as "" however it is spelled."""
    return {
        "" if imp.domain in DEFAULT_DOMAINS else imp.domain: int(imp.version)
        for imp in opset_imports
    }


_SKELETON_MAX_ELEMENTS = 1024
"""Initializers and Constant nodes up to this size keep their data for shape inference
(shape operands are small); larger ones (weights) are given to it by type alone."""


def typed_skeleton(
    model: onnx.ModelProto,
    *,
    all_nodes: bool = False,
    nodes: Sequence[NodeFields] | None = None,
) -> onnx.ModelProto:
    """The model with its large initializers and Constant nodes replaced by typed graph
    inputs: what shape inference needs, without serialising the weights (most of its time
    on real models; exporters keep weights in either). ``all_nodes``: the Constant nodes
    stay (the version converter converts the skeleton's nodes). ``nodes``: the fields of
    the graph's nodes, when the caller has read them."""
    source = model.graph
    weights: list[onnx.NodeProto] = []
    if all_nodes:
        pass
    elif nodes is not None:
        weights = [
            f.proto
            for f in nodes
            if f.op_type == "Constant" and _large_constant(f.domain, f.outputs, f.attributes)
        ]
    else:
        weights = [
            n
            for n in items(source.node)
            if n.op_type == "Constant"
            and _large_constant(n.domain, items(n.output), items(n.attribute))
        ]
    initializers = items(source.initializer)
    if not weights and all(
        math.prod(items(t.dims)) <= _SKELETON_MAX_ELEMENTS for t in initializers
    ):
        return _copy_of(model)
    skeleton = onnx.ModelProto()
    skeleton.ir_version = model.ir_version
    skeleton.opset_import.extend(model.opset_import)
    skeleton.functions.extend(model.functions)
    graph = skeleton.graph
    graph.name = source.name
    if weights:
        large = {id(n) for n in weights}
        graph.node.extend(n for n in source.node if id(n) not in large)
    else:
        graph.node.extend(source.node)
    graph.input.extend(source.input)
    graph.output.extend(source.output)
    graph.value_info.extend(source.value_info)
    declared = {vi.name for vi in source.input}
    for t in initializers:
        dims = items(t.dims)
        if math.prod(dims) <= _SKELETON_MAX_ELEMENTS:
            graph.initializer.append(t)
        elif t.name not in declared:
            graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, dims))
    for n in weights:
        t = n.attribute[0].t
        graph.input.append(helper.make_tensor_value_info(n.output[0], t.data_type, items(t.dims)))
    return skeleton


_SKELETON_FIELDS = frozenset({"ir_version", "opset_import", "functions", "graph"})
_SKELETON_GRAPH_FIELDS = frozenset({"name", "node", "input", "output", "value_info", "initializer"})
"""What ``typed_skeleton`` keeps of a model and of its graph."""


def _copy_of(model: onnx.ModelProto) -> onnx.ModelProto:
    """``typed_skeleton`` of a model without large tensors: all of it that the skeleton
    holds, copied in one protobuf call (copying node by node cost more than the shape
    inference of a small model)."""
    skeleton = onnx.ModelProto()
    skeleton.CopyFrom(model)
    for message, kept in ((skeleton, _SKELETON_FIELDS), (skeleton.graph, _SKELETON_GRAPH_FIELDS)):
        for f, _ in message.ListFields():
            if f.name not in kept:
                message.ClearField(f.name)
    skeleton.ir_version = model.ir_version  # set, as the skeleton sets them
    skeleton.graph.name = model.graph.name
    return skeleton


def _large_constant(domain: str, outputs: list[str], attributes: list[onnx.AttributeProto]) -> bool:
    """Whether a Constant node (of these fields) is well-formed and holds a tensor larger
    than ``_SKELETON_MAX_ELEMENTS``."""
    if len(attributes) != 1 or len(outputs) != 1 or domain not in DEFAULT_DOMAINS:
        return False
    if not outputs[0]:
        return False
    a = attributes[0]
    return (
        a.name == "value"
        and a.type == onnx.AttributeProto.TENSOR
        and math.prod(items(a.t.dims)) > _SKELETON_MAX_ELEMENTS
    )


def node_name(name: str, op_type: str, index: int) -> str:
    """How the import names node ``index`` of a graph: its name, else ``OpType_index``."""
    return name or f"{op_type}_{index}"


def op_key(domain: str, op_type: str) -> str:
    """How the converters are keyed: the op type in the default domain, ``domain.op_type``
    in any other (``ai.onnx.preview.training.Adam``)."""
    return op_type if domain in DEFAULT_DOMAINS else f"{domain}.{op_type}"


def check_tensor_size(
    what: str, shape: Sequence[Dim], dtype: DType, limit: Callable[[], int] = max_tensor_bytes
) -> None:
    """Refuse a static shape past ``limit()`` (``max_tensor_bytes``) or a negative dim."""
    size = dtype.itemsize
    for d in shape:
        if isinstance(d, int):
            if d < 0:
                raise Unsupported(f"{what} has a negative dim in {fmt_shape(tuple(shape))}")
            size *= d
    if size > limit():
        raise Unsupported(
            f"{what} of shape {fmt_shape(tuple(shape))} would hold {size:,} bytes, over the "
            f"limit of {limit():,} (RLX_MAX_TENSOR_BYTES)"
        )


def converter(*op_types: str, domain: str = "") -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for op_type in op_types:
            key = op_key(domain, op_type)
            if key in CONVERTERS:
                raise ValueError(f"a converter for ONNX op {key} exists")
            CONVERTERS[key] = fn
        return fn

    return register


@dataclass(frozen=True)
class LegacyConverter:
    convert: Converter
    applies: Callable[[onnx.NodeProto], bool]


LEGACY_CONVERTERS: dict[tuple[str, int], LegacyConverter] = {}
"""``(op_key, since)`` -> converter of an ONNX definition older than the opset the
converters are written for, one the version converter cannot upgrade (``upgrade``); it
converts the nodes ``applies`` accepts, the upgrade takes the rest."""


def legacy_converter(
    op_type: str, *, since: Sequence[int], applies: Callable[[onnx.NodeProto], bool] | None = None
) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for version in since:
            key = (op_type, version)
            if key in LEGACY_CONVERTERS:
                raise ValueError(f"a converter for ONNX op {op_type}-{version} exists")
            LEGACY_CONVERTERS[key] = LegacyConverter(fn, applies or (lambda node: True))
        return fn

    return register


class Unsupported(Exception):
    """A node uses a feature the importer does not implement (raised by converters)."""


class NotStatic(Exception):
    """A converter needs the value of an operand at import time and it is computed at
    run time (a shape, axes or pads operand fed by a graph input)."""

    def __init__(self, tensor: str, what: str, because: str | None = None):
        why = f" ({because})" if because else ""
        super().__init__(f"{what} '{tensor}' must be known at compile time{why}")
        self.tensor = tensor


# ---------------------------------------------------------------------------------
# Element types
# ---------------------------------------------------------------------------------

_TP = onnx.TensorProto
ONNX_DTYPES: dict[int, DType] = {
    _TP.FLOAT: DType.F32,
    _TP.DOUBLE: DType.F64,
    _TP.FLOAT16: DType.F16,
    _TP.BFLOAT16: DType.BF16,
    _TP.FLOAT8E4M3FN: DType.F8E4M3,
    _TP.FLOAT8E5M2: DType.F8E5M2,
    _TP.FLOAT8E4M3FNUZ: DType.F8E4M3FNUZ,
    _TP.FLOAT8E5M2FNUZ: DType.F8E5M2FNUZ,
    _TP.FLOAT8E8M0: DType.F8E8M0,
    _TP.FLOAT4E2M1: DType.F4E2M1,
    _TP.INT2: DType.I2,
    _TP.INT4: DType.I4,
    _TP.INT8: DType.I8,
    _TP.INT16: DType.I16,
    _TP.INT32: DType.I32,
    _TP.INT64: DType.I64,
    _TP.UINT2: DType.U2,
    _TP.UINT4: DType.U4,
    _TP.UINT8: DType.U8,
    _TP.UINT16: DType.U16,
    _TP.UINT32: DType.U32,
    _TP.UINT64: DType.U64,
    _TP.BOOL: DType.BOOL,
}


def dtype_of(elem_type: int, what: str = "element type") -> DType:
    dtype = ONNX_DTYPES.get(elem_type)
    if dtype is None:
        name = _TP.DataType.Name(elem_type) if elem_type in _TP.DataType.values() else elem_type
        raise Unsupported(f"{what} {name} is not supported")
    return dtype


def symbol_name(text: str) -> str:
    """A valid symbolic-dim identifier for an ONNX dim_param or value name."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return out if is_symbol_name(out) else f"d_{out}"


# ---------------------------------------------------------------------------------
# Node context
# ---------------------------------------------------------------------------------


class NodeContext:
    # Not a dataclass: compiled (rlx_compile._compiled), a dataclass's module builds its
    # annotations at import, and Importer's class does not exist yet then.
    def __init__(
        self,
        importer: Importer,
        node: onnx.NodeProto,
        name: str,
        since: int,
        b: FoldingBuilder,
        op_type: str,
        input_names: list[str],
        output_names: list[str],
        attribute_names: list[str] | None = None,
        attributes: list[onnx.AttributeProto] | None = None,
    ):
        """``attribute_names``, ``attributes``: the node's attributes and their names in
        order, when the importer has read them (``NodeFields``)."""
        self._importer = importer
        """Reached only through the methods below (what a converter may ask of it)."""
        self.node = node
        self.name = name
        self.since = since
        """The opset version that introduced the definition of this op in effect."""
        self.b = b
        # The node's fields, read once by the importer (each read of a protobuf field
        # builds a new wrapper or string).
        self.op_type = op_type
        self.input_names = input_names
        self.output_names = output_names
        self.used_attrs: set[str] = set()
        self._read_names = attribute_names
        self._read_attributes = attributes
        self._attributes: tuple[list[str], dict[str, onnx.AttributeProto]] | None = None

    # -- operands -------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self.input_names)

    def has(self, i: int) -> bool:
        """Whether optional input ``i`` is given."""
        names = self.input_names
        return i < len(names) and names[i] != ""

    def x(self, i: int) -> SSAValue:
        """Input ``i`` as a MIR value."""
        if not self.has(i):
            raise Unsupported(f"input #{i} is required")
        return self._importer.value(self.input_names[i], self.b)

    def any(self, i: int) -> SSAValue | Structured:
        """Input ``i`` as a MIR value, or the sequence, optional or map it is."""
        if not self.has(i):
            raise Unsupported(f"input #{i} is required")
        held = self._importer.structured.get(self.input_names[i])
        return held if held is not None else self.x(i)

    def opt(self, i: int) -> SSAValue | None:
        return self.x(i) if self.has(i) else None

    def inputs(self) -> list[SSAValue]:
        return [self.x(i) for i in range(self.num_inputs) if self.has(i)]

    def const(self, i: int, what: str | None = None) -> np.ndarray:
        """Input ``i`` as an array known at import time (raises NotStatic otherwise)."""
        if not self.has(i):
            raise Unsupported(f"input #{i} is required")
        return self._importer.static(self.input_names[i], what or f"input #{i} of {self.op_type}")

    def opt_const(self, i: int, what: str | None = None) -> np.ndarray | None:
        return self.const(i, what) if self.has(i) else None

    def known(self, i: int) -> np.ndarray | None:
        """Input ``i`` as an array where the importer knows it; None where it is absent or
        known only at run time (a converter with a run-time path of its own)."""
        if not self.has(i):
            return None
        try:
            return self.const(i)
        except NotStatic:
            return None

    def ints(self, i: int, what: str | None = None) -> list[Dim]:
        """A static integer operand as a flat list (shapes, axes, pads)."""
        arr = self.const(i, what)
        if arr.dtype.kind not in "iu" and arr.dtype != object:
            raise Unsupported(f"input #{i} must hold integers, got {arr.dtype}")
        return [v if isinstance(v, DimExpr) else int(v) for v in arr.reshape(-1).tolist()]

    def static_ints(self, i: int, what: str | None = None) -> list[int]:
        """``ints`` that must all be numbers (axes, steps, pads, repeats)."""
        values = self.ints(i, what)
        numbers = [v for v in values if isinstance(v, int)]
        if len(numbers) < len(values):
            name = what or f"input #{i} of {self.op_type}"
            raise Unsupported(f"{name} must hold numbers, got {fmt_shape(values)}")
        return numbers

    def int_operand(self, i: int, what: str) -> int:
        """A scalar integer operand known at import (TopK's K, a window size): a size
        that stays symbolic is refused, with a hint to size it."""
        v = self.const(i, what).reshape(-1)[0]
        if isinstance(v, DimExpr):
            raise Unsupported(f"{what} is the symbolic size {v}: size its dims at compile time")
        return int(v)

    def type(self, i: int) -> TensorType:
        return type_of(self.x(i))

    def shape(self, i: int) -> tuple[Dim, ...]:
        return self.type(i).shape

    def static_shape(self, i: int) -> tuple[int, ...]:
        shape = self.shape(i)
        if not all(isinstance(d, int) for d in shape):
            raise Unsupported(
                f"input #{i} needs a static shape, got {fmt_shape(shape)}: size its symbolic "
                "dims at compile time"
            )
        return tuple(int(d) for d in shape)

    # -- attributes -----------------------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        """An attribute's value (strings decoded, tensors as arrays), or ``default``."""
        a = self._checked_attribute(name, required=default is None)
        if a is None:
            return default
        return _read_attribute(a, name)

    def attr_array(self, name: str, dtype: npt.DTypeLike) -> np.ndarray | None:
        """``np.asarray(attr(name), dtype)``, None when absent. An INTS or FLOATS
        attribute goes to NumPy straight from protobuf's repeated field, without a list
        of Python numbers in between (a tree ensemble's tables are thousands long)."""
        a = self._checked_attribute(name, required=True)
        if a is None:
            return None
        kind = a.type
        if kind == onnx.AttributeProto.INTS:
            return np.asarray(a.ints, dtype)
        if kind == onnx.AttributeProto.FLOATS:
            return np.asarray(a.floats, dtype)
        return np.asarray(_read_attribute(a, name), dtype)

    def _checked_attribute(self, name: str, *, required: bool) -> onnx.AttributeProto | None:
        """The attribute ``name``, marked read, of the kind the op's schema declares; None
        when absent (refused when ``required`` and the schema requires it)."""
        self.used_attrs.add(name)
        declared = declared_attribute(self.node.domain, self.op_type, self.since, name)
        a = self.attributes.get(name)
        if a is None:
            if required and declared is not None and declared[1]:
                raise Unsupported(f"required attribute '{name}' is missing")
            return None
        if a.ref_attr_name:
            raise Unsupported(f"attribute '{name}' refers to a function attribute")
        kind = a.type
        if declared is not None and kind != declared[0]:
            raise Unsupported(
                f"attribute '{name}' is {_ATTR_KIND.get(kind, kind)}, "
                f"{self.op_type} takes {_ATTR_KIND.get(declared[0], declared[0])}"
            )
        return a

    @property
    def attributes(self) -> dict[str, onnx.AttributeProto]:
        """The node's attributes by name (the first, where a name repeats)."""
        return self._attribute_table()[1]

    @property
    def attribute_names(self) -> list[str]:
        """The names of the node's attributes, in order (repeats included)."""
        return self._attribute_table()[0]

    def _attribute_table(self) -> tuple[list[str], dict[str, onnx.AttributeProto]]:
        table = self._attributes
        if table is None:
            names, attributes = self._read_names, self._read_attributes
            if names is None or attributes is None:
                attributes = items(self.node.attribute)
                names = [a.name for a in attributes]
            by_name: dict[str, onnx.AttributeProto] = {}
            for name, a in zip(names, attributes, strict=True):
                by_name.setdefault(name, a)
            table = self._attributes = names, by_name
        return table

    def has_attr(self, name: str) -> bool:
        return name in self.attributes

    def check_attr(self, name: str, allowed: Sequence[Any], default: Any) -> Any:
        value = self.attr(name, default)
        if value not in allowed:
            raise Unsupported(f"attribute {name}={value!r} is not supported")
        return value

    # -- outputs ----------------------------------------------------------------------------
    @property
    def num_outputs(self) -> int:
        return len(self.output_names)

    def output_used(self, i: int) -> bool:
        return i < len(self.output_names) and self.output_names[i] != ""

    def inferred_shape(self, i: int = 0) -> tuple[Dim, ...] | None:
        """Output ``i``'s shape from ONNX shape inference when every dim is known."""
        return self._importer.inferred_shape(self.output_names[i]) if self.output_used(i) else None

    def distrust_inferred_shape(self, i: int = 0) -> None:
        """No cross-check of output ``i`` against ONNX shape inference: where that
        computes a size otherwise than onnxruntime (Resize's floor(length · scale) in
        exact arithmetic, onnxruntime's in float32), the converter follows onnxruntime."""
        if self.output_used(i):
            self._importer.inferred[self.output_names[i]] = None

    # -- the model around the node ----------------------------------------------------------
    def value_of(self, name: str) -> SSAValue:
        """The tensor a name of the model holds (an earlier node's output, a graph input
        or initializer, a value of an enclosing graph)."""
        return self._importer.value(name, self.b)

    def bound_value(self, name: str) -> SSAValue | None:
        """The tensor an earlier node bound to ``name``, or None."""
        return self._importer.bound(name, self.b)

    def producer_of(self, name: str) -> onnx.NodeProto | None:
        """The node that computes ``name`` (None for graph inputs and initializers)."""
        return self._importer.producer.get(name)

    def shape_value(self, i: int) -> ShapeValue | None:
        """Input ``i`` as shape arithmetic on symbolic dims, when it is one."""
        return self._importer.shape_values.get(self.input_names[i])

    def static_value(self, name: str, what: str) -> np.ndarray:
        """The array a name of the model holds at import time (raises NotStatic)."""
        return self._importer.static(name, what)

    def shape_value_of(self, name: str) -> ShapeValue | None:
        """The shape arithmetic on symbolic dims a name holds, when it is one."""
        return self._importer.shape_values.get(name)

    def size_ratios(self, i: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Input ``i`` as ratios of sizes (``symbolic.size_ratios``)."""
        from rlx_compile.frontends.onnx.symbolic import size_ratios

        return size_ratios(self._importer, self.input_names[i])

    def graph_inputs_behind(self, i: int) -> tuple[list[str], bool]:
        """The graph inputs input ``i`` is computed from, and whether it also depends on
        symbolic sizes (``Importer.graph_inputs_behind``)."""
        return self._importer.graph_inputs_behind(self.input_names[i])

    def model_opset(self, domain: str, default: int) -> int:
        """The opset the model imports for ``domain`` ("" for the default domain)."""
        return opset_versions(self._importer.model.opset_import).get(domain, default)

    def fresh_symbol(self, hint: str) -> str:
        """A symbolic-dim name no type of the model uses yet."""
        return self._importer.fresh_symbol(hint)

    # -- subgraphs --------------------------------------------------------------------------
    def subgraph_prefix(self, scope: str) -> str:
        return f"{self.name}/{scope}"

    def convert_subgraph(
        self,
        graph: onnx.GraphProto,
        block: Block,
        inputs: Sequence[SSAValue],
        scope: str,
        what: str | None = None,
    ) -> list[SSAValue]:
        """Convert ``graph`` into ``block`` (a region's body), its inputs bound to
        ``inputs``, and return its outputs; its node names get the prefix
        ``<node>/<scope>``. The names it defines are the region's, forgotten afterwards."""
        prefix = self.subgraph_prefix(scope)
        return self._importer.convert_subgraph(graph, block, inputs, prefix, what)

    def inline_subgraph(
        self,
        graph: onnx.GraphProto,
        bindings: Sequence[SSAValue | Structured | None],
        scope: str,
        what: str,
    ) -> list[SSAValue | Structured]:
        """Convert ``graph`` into the node's block, its inputs bound to ``bindings``, and
        return its outputs (tensors, sequences or optionals); its node names get the
        prefix ``<node>/<scope>``. The names it defines are bound only for the call."""
        prefix = self.subgraph_prefix(scope)
        return self._importer.inline_subgraph(graph, bindings, prefix, self.b, what)

    def checkpoint(self) -> Checkpoint:
        """A point to ``rollback`` to (a converter that tries one form, then another)."""
        return self._importer.checkpoint()

    def rollback(self, checkpoint: Checkpoint) -> None:
        """Erase what was emitted since ``checkpoint`` and the names bound to it."""
        self._importer.rollback(checkpoint)

    def problem_mark(self) -> tuple[int, int]:
        return self._importer.problem_mark()

    def forget_problems(self, mark: tuple[int, int]) -> None:
        """Drop the problems recorded since ``mark`` (a subgraph not converted after all)."""
        self._importer.forget_problems(mark)

    # -- helpers ----------------------------------------------------------------------------
    def const_like(self, value: Any, like: SSAValue) -> SSAValue:
        return self.b.constant(np.asarray(value), type_of(like).dtype, np.shape(value))

    def check_materialized(self, count: int, what: str) -> None:
        """Refuse to compute a value of ``count`` elements at import beyond the cap."""
        limit = self._importer.constant_limit()
        if count > limit:
            raise Unsupported(
                f"{what} would compute {count:,} elements at compile time, over the limit of "
                f"{limit:,} (RLX_MAX_CONSTANT_ELEMENTS)"
            )

    def constant(self, value: ArrayLike) -> SSAValue:
        arr = np.asarray(value)
        self.check_materialized(arr.size, "a constant")
        return self.b.constant(arr, DType.from_numpy(arr.dtype), arr.shape)

    def dims(self, ds: Sequence[Dim], dtype: DType = DType.I64) -> SSAValue:
        """Dims as a vector value: a constant, or ``mir.dims`` where one is symbolic
        (evaluated under the run's bindings)."""
        if all(isinstance(d, int) for d in ds):
            return self.b.constant(np.asarray(ds, np.int64).astype(dtype.numpy), dtype, [len(ds)])
        value = self.b.emit(mir.DimsOp(list(ds))).results[0]
        return value if dtype is DType.I64 else self.b.cast(value, dtype)

    def dim(self, d: Dim, dtype: DType = DType.I64) -> SSAValue:
        """A dim as a scalar value (see ``dims``)."""
        if isinstance(d, int):
            return self.b.constant(np.array(d), dtype, ())
        return self.b.reshape(self.dims([d], dtype), [])

    def full(self, shape: Sequence[Dim], value: float | bool, dtype: DType) -> SSAValue:
        """A tensor of ``shape`` holding ``value``: one scalar constant, expanded."""
        return self.b.expand(self.b.constant(np.array(value), dtype, ()), list(shape))


_ATTR_KIND: dict[int, str] = {
    onnx.AttributeProto.FLOAT: "a float",
    onnx.AttributeProto.INT: "an int",
    onnx.AttributeProto.STRING: "a string",
    onnx.AttributeProto.TENSOR: "a tensor",
    onnx.AttributeProto.GRAPH: "a graph",
    onnx.AttributeProto.SPARSE_TENSOR: "a sparse tensor",
    onnx.AttributeProto.TYPE_PROTO: "a type",
    onnx.AttributeProto.FLOATS: "a list of floats",
    onnx.AttributeProto.INTS: "a list of ints",
    onnx.AttributeProto.STRINGS: "a list of strings",
    onnx.AttributeProto.TENSORS: "a list of tensors",
    onnx.AttributeProto.GRAPHS: "a list of graphs",
    onnx.AttributeProto.SPARSE_TENSORS: "a list of sparse tensors",
    onnx.AttributeProto.TYPE_PROTOS: "a list of types",
    onnx.AttributeProto.UNDEFINED: "of no type",
}


@functools.lru_cache(maxsize=4096)
def declared_attribute(domain: str, op_type: str, since: int, name: str) -> tuple[int, bool] | None:
    """The type (an ``AttributeProto`` kind) and whether it is required of the attribute
    as the op's ONNX schema declares it (None for ops onnx does not know, such as our
    own or a converter's legacy definitions)."""
    try:
        schema = onnx.defs.get_schema(op_type, since, "" if domain == "ai.onnx" else domain)
    except onnx.defs.SchemaError:
        return None
    attr = schema.attributes.get(name)
    # AttrType's values are AttributeProto's kinds (an IntEnum; onnx's stub does not say)
    return None if attr is None else (int(cast(Any, attr.type)), attr.required)


_ATTR_READERS: dict[int, Callable[[onnx.AttributeProto], Any]] = {
    onnx.AttributeProto.FLOAT: lambda a: a.f,
    onnx.AttributeProto.INT: lambda a: a.i,
    onnx.AttributeProto.STRING: lambda a: a.s.decode(),
    onnx.AttributeProto.FLOATS: lambda a: items(a.floats),
    onnx.AttributeProto.INTS: lambda a: items(a.ints),
    onnx.AttributeProto.STRINGS: lambda a: [v.decode() for v in items(a.strings)],
}
"""``NodeContext.attr`` of the plain kinds: ``helper.get_attribute_value``, decoded."""


def _read_attribute(a: onnx.AttributeProto, name: str) -> Any:
    """``NodeContext.attr``'s value of an attribute found and checked."""
    kind = a.type
    read = _ATTR_READERS.get(kind)
    if read is not None:
        return read(a)
    if kind == onnx.AttributeProto.TENSOR:
        return tensor_to_array(a.t)
    if kind == onnx.AttributeProto.SPARSE_TENSOR:
        raise Unsupported(f"sparse tensor attribute '{name}'")
    if kind == onnx.AttributeProto.GRAPH:
        raise Unsupported(f"subgraph attribute '{name}'")
    value = helper.get_attribute_value(a)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return list(value) if isinstance(value, list) else value


def tensor_to_array(t: onnx.TensorProto) -> np.ndarray:
    elem = t.data_type
    if elem not in ONNX_DTYPES:
        dtype_of(elem, f"tensor '{t.name}' element type")  # raises
    if t.data_location == onnx.TensorProto.EXTERNAL:
        if not t.raw_data:
            raise Unsupported(f"tensor '{t.name}' holds external data that was not loaded")
    elif not t.HasField("segment"):
        # What onnx.numpy_helper.to_array computes for these, without its generic
        # lookups (a tenth of a small constant's import).
        if t.HasField("raw_data"):
            raw = _RAW_DTYPES.get(elem)
            if raw is not None:
                return np.frombuffer(t.raw_data, raw).reshape(items(t.dims))
        else:
            typed = _TYPED_FIELDS.get(elem)
            if typed is not None:
                dtype, values = typed
                # the field itself: NumPy copies a long one in C, where a list would
                # make a Python number of each element
                return np.asarray(getattr(t, values), dtype).reshape(items(t.dims))
    return np.asarray(onnx.numpy_helper.to_array(t))


_RAW_ELEMS = (_TP.FLOAT, _TP.DOUBLE, _TP.FLOAT16, _TP.BFLOAT16, _TP.INT8, _TP.INT16, _TP.INT32,
              _TP.INT64, _TP.UINT8, _TP.UINT16, _TP.UINT32, _TP.UINT64, _TP.BOOL)  # fmt: skip
_RAW_DTYPES: dict[int, np.dtype] = {
    elem: helper.tensor_dtype_to_np_dtype(elem) for elem in _RAW_ELEMS if sys.byteorder == "little"
}
"""Element types whose ``raw_data`` is the array's own little-endian bytes, one element
per item (not the packed 2-, 4- and 6-bit ones)."""

_TYPED_FIELDS: dict[int, tuple[type, str]] = {
    _TP.FLOAT: (np.float32, "float_data"),
    _TP.DOUBLE: (np.float64, "double_data"),
    _TP.INT32: (np.int32, "int32_data"),
    _TP.INT64: (np.int64, "int64_data"),
    _TP.UINT64: (np.uint64, "uint64_data"),
}
"""Element types whose values are held in a typed field of their own type."""


def axis_of(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise Unsupported(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def numel(shape: Sequence[Dim]) -> int:
    return math.prod(int(d) for d in shape)
