"""ONNX model -> MIR module.

A model older than MIN_OPSET is first brought up to it (``upgrade``: onnx's version
converter, repaired where it is wrong). The importer then walks the graph in node
order. Every node becomes one or more MIR ops, located at the node (``NameLoc``: the
node's name, or ``<OpType>_<index>`` when it has none), so that verifier errors and
reports name ONNX nodes. Constant subgraphs -- the shape arithmetic exporters emit
(Shape -> Gather -> Concat -> Reshape) -- fold while the graph is built, and operands
that must be known at compile time (shapes, axes, pads) are read from initializers,
Constant nodes or folded values.

Failures are collected over the whole graph and reported as one ``OnnxImportError`` on
one line: each distinct problem once (an op type without a converter, an unsupported
attribute or element type...), with how many nodes have it and the first of them. A
module is returned only when every node converted.
"""

from __future__ import annotations

import functools
import math
import mmap
import os
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import onnx
import onnx.defs
import onnx.external_data_helper
import onnx.inliner
import onnx.serialization
import onnx.shape_inference
from xdsl.dialects import func
from xdsl.dialects.builtin import UNKNOWN_LOC, ModuleOp, NameLoc, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from rlx_compile.builder import named, type_of
from rlx_compile.diagnostics import RlxError, VerifyFailure, first_line, verify_module
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import attach_weights
from rlx_compile.dialects.dim_expr import is_symbol, sym, symbols_of
from rlx_compile.dialects.types import Dim, DType, TensorType
from rlx_compile.env import max_constant_elements, max_tensor_bytes
from rlx_compile.folding import FoldingBuilder, constant_value
from rlx_compile.frontends.onnx import ops as _ops  # noqa: F401  (registers the converters)
from rlx_compile.frontends.onnx.context import (
    CONVERTERS,
    DEFAULT_DOMAINS,
    LEGACY_CONVERTERS,
    Checkpoint,
    Converter,
    NodeContext,
    NodeFields,
    NotStatic,
    Unsupported,
    check_tensor_size,
    dtype_of,
    items,
    node_name,
    op_key,
    opset_versions,
    symbol_name,
    tensor_to_array,
    typed_skeleton,
)
from rlx_compile.frontends.onnx.functions import expand_functions, inlinable_local_functions
from rlx_compile.frontends.onnx.ops.shape import constant_array, constant_of_shape_array
from rlx_compile.frontends.onnx.structured import (
    STRUCTURED,
    Layout,
    OptionalValue,
    SequenceValue,
    Structured,
    flatten,
    record_outputs,
)
from rlx_compile.frontends.onnx.symbolic import (
    EVALUATORS,
    KNOWN_LIMIT,
    ShapeValue,
    Undecidable,
    evaluate_known_node,
    evaluate_shape_node,
    symbolic_shape_node,
)
from rlx_compile.frontends.onnx.upgrade import Upgrade, schema_since, upgrade_model
from rlx_compile.ir import (
    erase_unread,
    erase_unused,
    fewer_collections,
    function_type,
    graph_params,
    location_str,
    main_graph,
    new_op,
    set_output_names,
)

MIN_OPSET = 13
INITIALIZER_MODES = ("params", "constants")


class OnnxImportError(RlxError):
    """A model the importer cannot convert; ``needs_values`` lists graph inputs whose
    values are needed at compile time (shape operands fed from inputs), ``open_dims``
    the dims the inputs leave open (as ``dynamic_dims`` names them) when a problem
    comes from a symbolic dim: sizes for them may let the model import."""

    def __init__(
        self, message: str, needs_values: tuple[str, ...] = (), open_dims: tuple[str, ...] = ()
    ):
        super().__init__(message)
        self.needs_values = needs_values
        self.open_dims = open_dims


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs 3x
class _Node:
    """A node to convert, with the fields of it read on every conversion."""

    proto: onnx.NodeProto
    op_type: str
    domain: str
    name: str
    """As locations and errors name it: ``node_name``, under its subgraph's prefix."""
    key: str
    """``op_key``: what ``CONVERTERS`` are keyed by."""
    opset: int
    inputs: list[str]
    outputs: list[str]
    attribute_names: list[str]
    attributes: list[onnx.AttributeProto]
    # Two lists rather than a tuple of them, here and in NodeContext's arguments: built
    # with mypyc, the tuple kept both lists alive after every import (and, through the
    # attributes, the whole parsed model; the test of it is in test_onnx_fast_paths).


@dataclass(frozen=True)
class Problem:
    op_type: str
    node: str
    message: str  # empty: the op type has no converter


def max_opset() -> int:
    return onnx.defs.onnx_opset_version()


def load(model: str | os.PathLike[str] | onnx.ModelProto | bytes) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, bytes):
        return onnx.load_from_string(model)
    path = os.fspath(model)
    # A missing file shows as its open fails (no os.path.exists first: its Python and its
    # system call are read from memory after a collection, for every import).
    try:
        proto = _parse_file(path)
    except FileNotFoundError:
        raise OnnxImportError(f"cannot read '{path}': No such file or directory") from None
    except Exception as err:  # protobuf raises its own DecodeError
        raise _unreadable(path, err) from None
    try:
        if _holds_external_data(proto):
            onnx.external_data_helper.load_external_data_for_model(proto, os.path.dirname(path))
    except Exception as err:
        raise _unreadable(path, err) from None
    return proto


def _unreadable(path: str, err: Exception) -> OnnxImportError:
    return OnnxImportError(f"'{path}' is not a readable ONNX model: {first_line(err)}")


MAPPED_PARSE_BYTES = 1 << 20
"""Binary models from this size up are parsed from the file mapped into memory."""


def _parse_file(path: str) -> onnx.ModelProto:
    """``onnx.load(path, load_external_data=False)``. A binary model is parsed straight
    from the file's bytes: onnx.load's serializer lookup and checks read more code than
    a small model's parse, and after a collection that code is read from memory. A large
    one is parsed from the file mapped into memory: reading it first would copy every
    weight once more (protobuf copies what it parses, so nothing refers to the mapping
    afterwards)."""
    ext = os.path.splitext(path)[1]
    form = onnx.serialization.registry.get_format_from_file_extension(ext) or "protobuf"
    if form != "protobuf":
        return onnx.load(path, load_external_data=False)
    proto = onnx.ModelProto()
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size >= MAPPED_PARSE_BYTES:
            try:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # a file system or file that cannot be mapped
                pass
            else:
                with mapped, memoryview(mapped) as view:
                    proto.ParseFromString(view)
                return proto
        proto.ParseFromString(f.read())
    return proto


def _holds_external_data(model: onnx.ModelProto) -> bool:
    """Whether a tensor that onnx.load looks at (initializers of the graph and its
    subgraphs, node attributes' tensors in those and in functions) keeps its data in a
    file of its own: onnx.load's own walk over them costs more than parsing a small
    model; this one answers whether it has anything to load."""
    external = onnx.TensorProto.EXTERNAL
    bodies: list[onnx.GraphProto | onnx.FunctionProto] = [model.graph, *model.functions]
    while bodies:
        body = bodies.pop()
        if isinstance(body, onnx.GraphProto) and any(
            t.data_location == external for t in items(body.initializer)
        ):
            return True
        for node in items(body.node):
            for a in items(node.attribute):
                if a.HasField("t") and a.t.data_location == external:
                    return True
                # len first: a generator over the (mostly empty) field costs 3x
                if len(a.tensors) and any(t.data_location == external for t in a.tensors):
                    return True
                kind = a.type
                if kind == onnx.AttributeProto.GRAPH:
                    bodies.append(a.g)
                elif kind == onnx.AttributeProto.GRAPHS:
                    bodies.extend(items(a.graphs))
    return False


def _check_text(value: object, where: str) -> None:
    if not isinstance(value, str):
        raise OnnxImportError(f"{where} is not UTF-8 text: {value!r:.60}")


# The protos these checks read are Any: a string field that is not UTF-8 comes as bytes,
# which the stubs type str, and the compiled module (rlx_compile._compiled) would check
# each read as str.


def read_nodes(nodes: Iterable[Any], *, check_nested: bool = False) -> list[NodeFields]:
    """Each node's fields, read once (the import's walks take them from here), after
    checking that they are text (``check_names_are_text``), with the graphs its
    attributes hold when ``check_nested`` (a graph read later was checked with the graph
    holding it)."""
    read: list[NodeFields] = []
    for i, node in enumerate(nodes):
        op_type, domain, name = node.op_type, node.domain, node.name
        inputs, outputs, attributes = items(node.input), items(node.output), items(node.attribute)
        names: list[Any] = []
        subs: list[Any] = []
        for a in attributes:  # one pass: each read of a protobuf field costs
            names.append(a.name)
            if a.HasField("g"):
                subs.append(a.g)
            if len(a.graphs):  # cheaper than iterating the (mostly empty) field
                subs.extend(items(a.graphs))
        try:
            # A bytes among them raises: the quickest test of all.
            "".join([op_type, domain, name, *inputs, *outputs, *names])
        except TypeError:
            _check_node_is_text(node, i)  # say which, in the order checked
        if check_nested:
            for sub in subs:
                check_names_are_text(sub)
        read.append(
            NodeFields(node, op_type, domain, name, inputs, outputs, attributes, names, subs)
        )
    return read


def read_again(read: list[NodeFields], changed: Iterable[int]) -> list[NodeFields]:
    """``read`` with the nodes at ``changed`` (indices into it) read again."""
    out = list(read)
    for i in changed:
        out[i] = read_nodes([read[i].proto])[0]
    return out


def _check_node_is_text(node: Any, i: int) -> None:
    where = f"node #{i}"
    for field in ("op_type", "domain", "name"):
        _check_text(getattr(node, field), f"the {field} of {where}")
    for name in [*node.input, *node.output]:
        _check_text(name, f"a value name of {where}")
    for a in node.attribute:
        _check_text(a.name, f"an attribute name of {where}")
        for sub in [*([a.g] if a.HasField("g") else []), *a.graphs]:
            check_names_are_text(sub)


def check_names_are_text(graph: Any) -> list[NodeFields]:
    """Protobuf hands a string field that is not UTF-8 over as bytes: refuse it here,
    naming where, rather than deep inside a converter or onnx's schema lookup. Gives the
    fields of the graph's nodes as read for it."""
    _check_text(graph.name, "the graph's name")
    read = read_nodes(items(graph.node), check_nested=True)
    values = [
        vi.name for vi in [*items(graph.input), *items(graph.output), *items(graph.value_info)]
    ]
    initializers = [t.name for t in items(graph.initializer)]
    try:
        "".join(values + initializers)  # as in read_nodes
    except TypeError:
        for name in values:
            _check_text(name, "a graph input, output or value_info name")
        for name in initializers:
            _check_text(name, "an initializer name")
    return read


def check_model_is_text(model: Any) -> list[NodeFields]:
    """``check_names_are_text`` for the main graph, the opset domains and the functions;
    the fields of the main graph's nodes."""
    read = check_names_are_text(model.graph)
    for imp in model.opset_import:
        _check_text(imp.domain, "an opset_import domain")
    for fn in model.functions:
        _check_text(fn.name, "a function's name")
        _check_text(fn.domain, f"the domain of function {fn.name}")
        for name in [*fn.input, *fn.output, *fn.attribute]:
            _check_text(name, f"a value or attribute name of function {fn.name}")
        for imp in fn.opset_import:
            _check_text(imp.domain, f"an opset_import domain of function {fn.name}")
        read_nodes(items(fn.node), check_nested=True)
    return read


def import_model(
    model: str | os.PathLike[str] | onnx.ModelProto | bytes,
    *,
    dynamic_dims: Mapping[str, int | str] | None = None,
    initializers: str = "params",
    input_values: Mapping[str, np.ndarray] | None = None,
    graph_name: str = "main",
    structured_inputs: Mapping[str, Layout] | None = None,
) -> ModuleOp:
    """Import an ONNX model (a path, serialized bytes or a ``ModelProto``) as a MIR module.

    - ``dynamic_dims``: what becomes of dims the model leaves open. Keys are ONNX
      ``dim_param`` names or ``"input:axis"``; an int value fixes the dim to that size, a
      string renames its symbol. Open dims not named here become symbolic dims named
      after their ``dim_param`` (or ``<input>_<axis>`` for unnamed ones).
    - ``initializers``: ``"params"`` makes float initializers of more than one element
      ``mir.param`` leaves (bound at run time, by name); the rest, and every initializer
      with ``"constants"``, become ``mir.constant``.
    - ``input_values``: graph inputs to bake in as constants (for inputs that feed shape
      operands, e.g. a Reshape's target shape).
    - ``structured_inputs``: the layout (``structured.layout_of``) of each sequence or
      optional graph input's value: its length and items are fixed at import.
    """
    if initializers not in INITIALIZER_MODES:
        raise OnnxImportError(
            f"unknown initializers mode '{initializers}' (use {' or '.join(INITIALIZER_MODES)})"
        )
    proto = load(model)
    read = check_model_is_text(proto)
    importer = Importer(
        proto, dynamic_dims or {}, initializers, input_values or {}, graph_name, read,
        owned=proto is not model,
    )  # fmt: skip
    importer.structured_inputs = dict(structured_inputs or {})
    with fewer_collections():
        return importer.run()


def dim_spellings(
    model: onnx.ModelProto, dynamic_dims: Mapping[str, int | str] | None = None
) -> dict[str, str]:
    """The symbol of each dim the model's inputs leave open -> the key ``dynamic_dims``
    (and ``rlx-compile --dim``) names it by: its ONNX ``dim_param``, or ``input:axis``
    for a dim without one (symbols are sanitised names, which neither accepts)."""
    fixed = dynamic_dims or {}
    out: dict[str, str] = {}
    for name, axis, key in open_input_dims(model):
        if f"{name}:{axis}" not in fixed and key not in fixed:
            out.setdefault(symbol_name(key), key)
    return out


def open_input_dims(model: onnx.ModelProto) -> list[tuple[str, int, str]]:
    """``(input, axis, dim_key)`` of every dim the model's tensor inputs leave open, in
    input and axis order (the dim imports as the symbol ``symbol_name(dim_key)``)."""
    inits = {t.name for t in model.graph.initializer}
    out: list[tuple[str, int, str]] = []
    for vi in model.graph.input:
        if vi.name in inits or not vi.type.tensor_type.HasField("shape"):
            continue
        for axis, d in enumerate(vi.type.tensor_type.shape.dim):
            if fixed_size(d) is None:
                out.append((vi.name, axis, dim_key(vi.name, axis, d)))
    return out


def dim_key(input_name: str, axis: int, d: onnx.TensorShapeProto.Dimension) -> str:
    """How ``dynamic_dims`` (and ``--dim``) name an open dim: its ``dim_param``, or
    ``input:axis`` when it has none or one that names nothing ("?", which exporters
    write for every unknown dim: they are not one dim)."""
    if d.HasField("dim_param") and re.search(r"[^\W_]", d.dim_param):
        return d.dim_param
    return f"{input_name}:{axis}"


def fixed_size(d: onnx.TensorShapeProto.Dimension) -> int | None:
    """A dim's size when the model fixes it; a negative ``dim_value`` (some exporters
    write -1 for a dynamic axis) leaves it open, as onnxruntime reads it."""
    return int(d.dim_value) if d.HasField("dim_value") and d.dim_value >= 0 else None


def initializer_arrays(
    model: onnx.ModelProto, names: Collection[str] | None = None
) -> dict[str, np.ndarray]:
    """The model's initializers as arrays (those in ``names``, or all): the values to
    bind to the ``mir.param`` leaves of an imported module."""
    out: dict[str, np.ndarray] = {}
    for t in model.graph.initializer:
        if names is None or t.name in names:
            try:
                out[t.name] = tensor_to_array(t)
            except Unsupported as err:
                raise OnnxImportError(str(err)) from None
    return out


def param_values(model: onnx.ModelProto, module: ModuleOp) -> dict[str, np.ndarray]:
    """The arrays to bind to an imported module's ``mir.param`` leaves (its initializers
    by name), for ``run(module, inputs, params)`` or ``CompileResult.run``."""
    return initializer_arrays(model, {leaf.name for leaf in graph_params(main_graph(module))})


def _inference_adds_nothing(model: onnx.ModelProto, every: list[NodeFields]) -> bool:
    """Whether ONNX shape inference would give the importer no shape: the graph declares
    no value_info (inference keeps it), has no local functions, and no node's op infers
    anything (``_op_infers_nothing``). A one-node scikit-learn model of LinearRegressor
    or TreeEnsembleRegressor-1 then skips it (a fifth of its import)."""
    graph = model.graph
    if len(graph.value_info) or len(model.functions):
        return False
    opsets = opset_versions(model.opset_import)
    for f in every:
        domain = "" if f.domain in DEFAULT_DOMAINS else f.domain
        opset = opsets.get(domain)
        if opset is None or not _op_infers_nothing(domain, f.op_type, opset):
            return False
    return True


@functools.lru_cache(maxsize=4096)
def _op_infers_nothing(domain: str, op_type: str, opset: int) -> bool:
    """Whether the op's schema at ``opset`` has neither an inference function nor a
    function body that onnx infers through. Remembered, bounded: op types are whatever
    strings a model's file holds."""
    try:
        # Any: onnx's stub of OpSchema lacks has_function and its context-dependent kin
        schema: Any = onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError:
        return False  # unknown to onnx: left to inference, as before
    return not (
        schema.has_type_and_shape_inference_function
        or schema.has_function
        or schema.has_context_dependent_function
    )


_INPUT_OR_PARAM = (mir.InputOp, mir.ParamOp)

_KNOWN_SOURCES = frozenset({"Constant", "Shape", "Size"})
_KNOWN_KINDS = _KNOWN_SOURCES | frozenset({"ConstantOfShape", *EVALUATORS})
"""The op types whose nodes ``Importer._convert_known`` may keep as known values. The
arithmetic of ``EVALUATORS`` and ConstantOfShape are tried once something is known (a node of
``_KNOWN_SOURCES`` made it): a model without any folds its initializers' arithmetic as
before, without the cost of asking at each of its nodes."""


def quantisation_params(every: list[NodeFields]) -> frozenset[str]:
    """The names read as a scale or zero point of a QuantizeLinear or DequantizeLinear
    (any domain) among ``every`` node of a graph, subgraphs included (``every_node``).
    Per-channel scales are imported as constants, not params: they belong to the
    integers they scale (constants, being integers), as onnxruntime's QDQ fusion
    requires, and ``quant-to-integer`` reads their values."""
    return frozenset(
        name
        for f in every
        if f.op_type in ("QuantizeLinear", "DequantizeLinear")
        for name in f.inputs[1:3]
    )


def every_node(read: list[NodeFields]) -> list[NodeFields]:
    """The nodes ``read`` with those of the graphs they hold, nested ones too, outer
    nodes first (as ``upgrade.walk`` walks them)."""
    out: list[NodeFields] = []
    for f in read:
        out.append(f)
        for sub in f.subgraphs:
            out.extend(every_node(read_nodes(items(sub.node))))
    return out


class Importer:
    def __init__(
        self,
        model: onnx.ModelProto,
        dynamic_dims: Mapping[str, int | str],
        initializers: str,
        input_values: Mapping[str, np.ndarray],
        graph_name: str,
        main_nodes: list[NodeFields] | None = None,
        owned: bool = False,
    ):
        """``main_nodes``: the fields of ``model``'s main graph's nodes, as the text check
        read them (``check_model_is_text``). ``owned``: ``model`` is the import's own (it
        parsed it), which may change it rather than copy it."""
        self.model = model
        self.main_nodes = main_nodes
        self.owned = owned
        self.dynamic_dims = dict(dynamic_dims)
        self.initializer_mode = initializers
        self.input_values = dict(input_values)
        self.graph_name = graph_name
        self.block = Block()
        # Where node ops go: the graph's block, or the block of the region being built.
        self.target = self.block
        self.symbols_taken: set[str] = set()
        self.values: dict[str, SSAValue] = {}
        # Sequences, optionals and maps: import-time values made of MIR values.
        self.structured: dict[str, Structured] = {}
        self.structured_inputs: dict[str, Layout] = {}
        self.initializers: dict[str, onnx.TensorProto] = {}
        self.init_arrays: dict[str, np.ndarray] = {}
        self.inferred: dict[str, tuple[Dim | None, ...] | None] = {}
        self.problems: list[Problem] = []
        self.needs_values: list[str] = []
        self.poisoned: set[str] = set()
        self.producer: dict[str, onnx.NodeProto] = {}
        self.graph_inputs: set[str] = set()
        # Shape tensors holding symbolic dims (object arrays of ints and symbol names):
        # they exist at import time only, for shape operands such as Reshape targets.
        self.shape_values: dict[str, ShapeValue] = {}
        # Values the import knows as arrays (Constant nodes, static shape arithmetic),
        # with the location of the node that made them: a value becomes a mir.constant
        # where a converter first reads it as data, so a chain of shape arithmetic read
        # only as operands (Reshape targets, axes) builds no ops.
        self.known: dict[str, tuple[np.ndarray, NameLoc]] = {}
        self.opset = MIN_OPSET
        # Nodes of an op's function body written against another opset than the model's,
        # and nodes an upgraded model keeps at its opset.
        self.node_opsets: dict[str, int] = {}
        self.upgrade_failures: dict[str, str] = {}
        # Symbol of each dim the inputs leave open -> its name in dynamic_dims.
        self.dim_names: dict[str, str] = {}
        self.max_tensor_bytes: int | None = None
        self.max_constant_elements: int | None = None
        self._first_compute: Operation | None = None  # where _insert_leaf inserts
        self.quantisation_params: frozenset[str] = frozenset()
        self.uninlined: dict[str, str] = {}
        """Why a local function was left uninlined, by its op key."""

    # -- entry -------------------------------------------------------------------------
    def run(self) -> ModuleOp:
        model = self.model
        if not model.graph.output:
            raise OnnxImportError("the model has no graph outputs (an empty or truncated file?)")
        opset = self._check_opsets(model)
        if model.functions:
            local = inlinable_local_functions(model)
            self.uninlined = local.left
            model = onnx.inliner.inline_local_functions(local.model)
        upgraded = upgrade(model, in_place=self.owned or model is not self.model)
        model, self.upgrade_failures = upgraded.model, upgraded.failures
        opset = opset_versions(model.opset_import).get("", opset)
        # The nodes as the text check read them, while the model is the one it read (those
        # an upgrade in place changed read again).
        known = self.main_nodes if model is self.model else None
        if known is not None and upgraded.in_place:
            known = None if upgraded.changed is None else read_again(known, upgraded.changed)
        expansion = expand_functions(model, CONVERTERS, known)
        model = expansion.model
        self.node_opsets = {**upgraded.node_opsets, **expansion.node_opsets}
        graph = model.graph
        if graph.sparse_initializer:
            raise OnnxImportError("sparse initializers are not supported")
        for t in items(graph.initializer):
            self.initializers[t.name] = t
        # Read again where the model is not the one the text check read (inlined,
        # upgraded to a copy or expanded).
        read = known if model is self.model else None
        if read is None:
            read = read_nodes(items(graph.node))
        every = every_node(read)
        self.quantisation_params = quantisation_params(every)
        if self.input_values:
            unknown = set(self.input_values) - {i.name for i in graph.input}
            if unknown:
                raise OnnxImportError(f"input_values names unknown graph inputs {sorted(unknown)}")
        input_shapes = self._add_inputs(graph)
        self._infer_shapes(model, input_shapes, read, every)
        self.opset = opset
        self.convert_graph(graph, read=read)
        if self.problems or self.needs_values:
            raise self._error()
        return self._finish(graph)

    def _check_opsets(self, model: onnx.ModelProto) -> int:
        opset = opset_versions(model.opset_import).get("")
        if opset is None:
            if any(n.domain in DEFAULT_DOMAINS for n in model.graph.node):
                raise OnnxImportError("the model imports no version of the default ONNX domain")
            opset = max_opset()  # only other domains' ops: the default opset is not used
        if opset > max_opset():
            raise OnnxImportError(
                f"opset {opset} is newer than the newest this onnx package knows ({max_opset()})"
            )
        return opset

    def _infer_shapes(
        self,
        model: onnx.ModelProto,
        input_shapes: dict[str, list[Dim]],
        read: list[NodeFields],
        every: list[NodeFields],
    ) -> None:
        """ONNX shape inference, run with the input shapes as imported (fixed dims set,
        open dims named by their symbols), fills the shapes that converters and the
        cross-check of every result type read. A model it cannot process is imported
        without it, as is one it would give nothing (``_inference_adds_nothing``)."""
        if _inference_adds_nothing(model, every):
            return
        rewrite = typed_skeleton(model, nodes=read)
        # Declared output shapes are not evidence (exporters leave stale ones, which
        # onnxruntime only warns about): the cross-check uses inferred shapes alone.
        for vi in rewrite.graph.output:
            if vi.type.HasField("tensor_type"):
                vi.type.tensor_type.ClearField("shape")
        for vi in rewrite.graph.input:
            shape = input_shapes.get(vi.name)
            if shape is None:
                continue
            for d, want in zip(vi.type.tensor_type.shape.dim, shape, strict=True):
                if isinstance(want, int):
                    d.dim_value = want
                else:
                    d.dim_param = str(want)
        # Data propagation (values computed from shapes, on to a Reshape's target) is the
        # costlier half of inference on a large graph, and starts at a Shape or Size node:
        # without one, what it adds are values of constants, which the converters fold
        # themselves (the result types it adds would only widen the cross-check).
        data_prop = any(f.op_type in ("Shape", "Size") for f in every)
        try:
            inferred = onnx.shape_inference.infer_shapes(
                rewrite, strict_mode=False, data_prop=data_prop
            )
        except Exception:
            inferred = rewrite
        symbols = {str(d) for shape in input_shapes.values() for d in shape if is_symbol(d)}
        g = inferred.graph
        # Each distinct shape read once (by its bytes): reading a dim of a protobuf message
        # costs more than serialising the shape, and values share a few shapes.
        decoded: dict[bytes, tuple[Dim | None, ...]] = {}
        for vi in [*items(g.value_info), *items(g.output)]:
            t = vi.type
            if t.WhichOneof("value") != "tensor_type":
                continue
            tt = t.tensor_type
            if not tt.HasField("shape"):
                self.inferred[vi.name] = None
                continue
            shape_proto = tt.shape
            key = shape_proto.SerializeToString()
            found = decoded.get(key)
            if found is None:
                dims: list[Dim | None] = []
                for d in items(shape_proto.dim):
                    size = d.dim_value  # what fixed_size reads, the common case first
                    if size > 0 or (size == 0 and d.HasField("dim_value")):
                        dims.append(size)
                    elif d.HasField("dim_param") and d.dim_param in symbols:
                        dims.append(sym(d.dim_param))
                    else:
                        dims.append(None)
                found = decoded[key] = tuple(dims)
            self.inferred[vi.name] = found
        # Where the model declares another static shape than inference gives, neither is
        # evidence: ONNX infers old opsets' formulas (AveragePool-10's ceil_mode) that
        # onnxruntime and the exporter no longer follow, and exporters leave stale
        # declarations. No cross-check there.
        for vi in model.graph.output:
            declared = [fixed_size(d) for d in vi.type.tensor_type.shape.dim]
            found = self.inferred.get(vi.name)
            if (
                vi.type.tensor_type.HasField("shape")
                and found is not None
                and None not in declared
                and tuple(declared) != found
            ):
                self.inferred[vi.name] = None

    def inferred_shape(self, name: str) -> tuple[Dim, ...] | None:
        shape = self.inferred.get(name)
        if shape is None or any(d is None for d in shape):
            return None
        return cast(tuple[Dim, ...], shape)

    # -- inputs and initializers ------------------------------------------------------------
    def _dim(self, input_name: str, axis: int, d: onnx.TensorShapeProto.Dimension) -> Dim:
        key = f"{input_name}:{axis}"
        if key in self.dynamic_dims:
            return self._dim_value(self.dynamic_dims[key], key)
        if fixed_size(d) is not None:
            return int(d.dim_value)
        name = dim_key(input_name, axis, d)
        if name in self.dynamic_dims:
            return self._dim_value(self.dynamic_dims[name], name)
        symbol = symbol_name(name)  # input:axis becomes input_axis
        self.dim_names.setdefault(symbol, name)
        return sym(symbol)

    @staticmethod
    def _dim_value(v: int | str, key: str) -> Dim:
        if isinstance(v, bool) or not isinstance(v, int | str):
            raise OnnxImportError(f"dynamic_dims['{key}'] must be an int or a symbol name")
        if isinstance(v, int):
            if v < 0:
                raise OnnxImportError(f"dynamic_dims['{key}'] = {v} is negative")
            return v
        return sym(symbol_name(v))

    def _add_inputs(self, graph: onnx.GraphProto) -> dict[str, list[Dim]]:
        b = FoldingBuilder(self.block.add_op)
        shapes: dict[str, list[Dim]] = {}
        for vi in items(graph.input):
            if vi.name in self.initializers:
                continue  # an initializer with a default: a weight, not a run-time input
            tt = vi.type.tensor_type
            if not vi.type.HasField("tensor_type"):
                self.structured[vi.name] = self._structured_input(vi, b)
                self.graph_inputs.add(vi.name)
                continue
            try:
                dtype = dtype_of(tt.elem_type, f"graph input '{vi.name}' element type")
            except Unsupported as err:
                raise OnnxImportError(str(err)) from None
            if not tt.HasField("shape"):
                raise OnnxImportError(f"graph input '{vi.name}' has no shape (not even a rank)")
            shape = [self._dim(vi.name, i, d) for i, d in enumerate(items(tt.shape.dim))]
            try:
                check_tensor_size(f"graph input '{vi.name}'", shape, dtype, self._tensor_limit)
            except Unsupported as err:
                raise OnnxImportError(str(err)) from None
            self.symbols_taken.update(s for d in shape for s in symbols_of(d))
            shapes[vi.name] = shape
            self.graph_inputs.add(vi.name)
            if vi.name in self.input_values:
                arr = np.asarray(self.input_values[vi.name])
                if arr.dtype != dtype.numpy:
                    raise OnnxImportError(
                        f"input_values['{vi.name}'] has dtype {arr.dtype}, the input is "
                        f"{dtype.value}"
                    )
                if arr.ndim != len(shape) or any(
                    isinstance(d, int) and d != n for d, n in zip(shape, arr.shape, strict=True)
                ):
                    raise OnnxImportError(
                        f"input_values['{vi.name}'] has shape {list(arr.shape)}, the input is "
                        f"{shape}"
                    )
                shapes[vi.name] = list(arr.shape)
                value = b.constant(arr, dtype, arr.shape)
            else:
                value = b.input(vi.name, shape, dtype)
            self.values[vi.name] = named(value, vi.name)
        return shapes

    def _tensor_limit(self) -> int:
        """``max_tensor_bytes()``, read once per import (it reads the environment)."""
        if self.max_tensor_bytes is None:
            self.max_tensor_bytes = max_tensor_bytes()
        return self.max_tensor_bytes

    def constant_limit(self) -> int:
        """``max_constant_elements()``, read once per import."""
        if self.max_constant_elements is None:
            self.max_constant_elements = max_constant_elements()
        return self.max_constant_elements

    def _structured_input(self, vi: onnx.ValueInfoProto, b: FoldingBuilder) -> Structured:
        """A sequence or optional graph input, as the layout of its value says: one
        ``mir.input`` per tensor it holds (``name[i]`` for a sequence's items)."""
        kind = vi.type.WhichOneof("value")
        layout = self.structured_inputs.get(vi.name)
        if layout is None or kind not in ("sequence_type", "optional_type"):
            raise OnnxImportError(
                f"graph input '{vi.name}' is a {kind.removesuffix('_type') if kind else 'value'}"
                ", not a tensor: sequence and optional inputs need the layout of their value "
                "(structured_inputs=; rlx_compile.backend takes it from the values fed)"
            )

        def build(layout: Layout, name: str) -> SSAValue | Structured | None:
            if layout[0] == "tensor":
                dtype = DType.from_numpy(np.dtype(layout[2]))
                return named(b.input(name, list(layout[1]), dtype), name)
            if layout[0] == "optional":
                return OptionalValue(None if layout[1] is None else build(layout[1], name))
            return SequenceValue(tuple(build(item, f"{name}[{i}]") for i, item in
                                       enumerate(layout[1])))  # fmt: skip

        return cast(Structured, build(layout, vi.name))

    def _initializer_value(self, name: str, b: FoldingBuilder) -> SSAValue:
        arr = self.init_arrays.get(name)
        if arr is None:
            arr = self.static_initializer(name)
        dtype = DType.from_numpy(arr.dtype)
        as_param = (
            self.initializer_mode == "params" and dtype.is_float and arr.size > 1
            and name not in self.quantisation_params
        )  # fmt: skip
        # Leaves go at the top of the graph, whichever node first reads them.
        top = FoldingBuilder(self._insert_leaf)
        if as_param:
            value = top.param(name, arr.shape, dtype)
        else:
            value = top.constant(arr, dtype, arr.shape)
        value = named(value, name)
        self.values[name] = value
        return value

    def _insert_leaf(self, op: Operation) -> None:
        """Emit a leaf (a param or a constant) before the graph's first compute op (any op
        but an input or a param). That op is remembered: ops are only appended to the
        graph's block, or erased, but for these leaves, so it stays the first until it is
        erased or a constant leaf goes before it (a scan per leaf was quadratic)."""
        first = self._first_compute
        if first is None or first.parent is not self.block:
            first = next((o for o in self.block.ops if not isinstance(o, _INPUT_OR_PARAM)), None)
        if first is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, first)
        self._first_compute = first if isinstance(op, _INPUT_OR_PARAM) else op

    def static_initializer(self, name: str) -> np.ndarray:
        arr = self.init_arrays.get(name)
        if arr is None:
            arr = tensor_to_array(self.initializers[name])
            self.init_arrays[name] = arr
        return arr

    def params(self) -> dict[str, np.ndarray]:
        """The arrays of the initializers that became ``mir.param``, by name."""
        return {n: a for n, a in self.init_arrays.items() if n in self.values}

    # -- values ----------------------------------------------------------------------------
    def value(self, name: str, b: FoldingBuilder) -> SSAValue:
        v = self.values.get(name)
        if v is not None:
            return v
        known = self.known.get(name)
        if known is not None:
            return self._materialize_known(name, known, b)
        if name in self.structured:
            kind = self.structured[name].kind
            raise Unsupported(f"'{name}' is {kind}, used where a tensor is expected")
        if name in self.initializers:
            return self._initializer_value(name, b)
        if name in self.shape_values:
            return self._materialize(name, b)
        raise Unsupported(f"value '{name}' is used before it is defined")

    def _materialize_known(
        self, name: str, known: tuple[np.ndarray, NameLoc], b: FoldingBuilder
    ) -> SSAValue:
        """A known value as the ``mir.constant`` its node would have made, where ``b``
        inserts (in the block being built: a region reads its own copy)."""
        arr, location = known
        op = b.emit(mir.ConstantOp(arr, TensorType(arr.shape, DType.from_numpy(arr.dtype))))
        op.location = location  # the node's that made it, not the reader's
        value = named(op.results[0], name)
        self.values[name] = value
        return value

    def bound(self, name: str, b: FoldingBuilder) -> SSAValue | None:
        """The tensor an earlier node bound to ``name`` (a known value made an op), or None."""
        return self.value(name, b) if name in self.values or name in self.known else None

    def known_array(self, name: str) -> np.ndarray | None:
        """The array ``name`` holds where the import knows it without reading an op's
        result: a known value, a constant, a small initializer; None otherwise."""
        known = self.known.get(name)
        if known is not None:
            return known[0]
        v = self.values.get(name)
        if v is not None:
            return constant_value(v) if isinstance(v.owner, mir.ConstantOp) else None
        t = self.initializers.get(name)
        if t is not None and name not in self.graph_inputs and math.prod(t.dims) <= KNOWN_LIMIT:
            return self.static_initializer(name)
        return None

    def static(self, name: str, what: str) -> np.ndarray:
        known = self.known.get(name)
        if known is not None:
            return known[0]
        if name in self.initializers and name not in self.values:
            return self.static_initializer(name)
        if name in self.shape_values:
            return self.shape_values[name].values
        v = self.values.get(name)
        if v is not None:
            arr = constant_value(v)
            if arr is not None:
                return arr
        raise NotStatic(name, what)

    def graph_inputs_behind(self, name: str) -> tuple[list[str], bool]:
        """The graph inputs whose values a value is computed from, and whether it also
        depends on symbolic sizes: through a Shape or Size of a tensor with open dims,
        whose sizes matter and not its values (baking that tensor in would not help)."""
        seen: set[str] = set()
        found: list[str] = []
        sized = False
        stack = [name]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in self.graph_inputs and n not in self.input_values:
                found.append(n)
            node = self.producer.get(n)
            if node is None:
                continue
            if node.op_type in ("Shape", "Size") and node.domain in DEFAULT_DOMAINS:
                of = self.values.get(node.input[0])
                sized = sized or (of is not None and not type_of(of).is_static)
                continue
            stack.extend(i for i in items(node.input) if i)
            stack.extend(outer_names(node))
        return sorted(found), sized

    # -- regions -------------------------------------------------------------------------------
    def fresh_symbol(self, hint: str) -> str:
        """A symbolic-dim name no type of the model uses yet (a size only the run knows,
        such as the number of iterations of a loop)."""
        base = symbol_name(hint)
        name, k = base, 1
        while name in self.symbols_taken:
            name, k = f"{base}_{k}", k + 1
        self.symbols_taken.add(name)
        return name

    def convert_subgraph(
        self,
        graph: onnx.GraphProto,
        block: Block,
        inputs: Sequence[SSAValue],
        prefix: str,
        what: str | None = None,
    ) -> list[SSAValue]:
        """Convert a subgraph (an If branch, a Loop body) into ``block``, its inputs bound
        to ``inputs``, and return the values of its outputs. Names of the graphs around it
        resolve to their values (the region captures them); the names it defines are
        forgotten afterwards, as they are the block's own. A subgraph whose outputs do not
        convert is Unsupported: ``what`` did not convert."""
        saved_values, saved_target = dict(self.values), self.target
        saved_structured = dict(self.structured)  # sequences made inside are the region's
        saved_known = dict(self.known)  # as are the values its nodes make known
        for t in graph.initializer:
            self.initializers.setdefault(t.name, t)
        for formal, value in zip(graph.input, inputs, strict=True):
            if isinstance(value, BlockArgument) and not value.name_hint:
                named(value, formal.name)
            self.values[formal.name] = value
        self.target = block
        try:
            self.convert_graph(graph, prefix)
            if any(o.name in self.poisoned for o in graph.output):
                raise Unsupported(f"{what or f'the subgraph {graph.name!r}'} did not convert")
            b = FoldingBuilder(block.add_op)
            return [self.value(o.name, b) for o in graph.output]
        finally:
            self.target = saved_target
            self.structured = saved_structured
            self.known = saved_known
            for name, value in list(self.values.items()):
                if _defined_in(value, block):
                    if name in saved_values:
                        self.values[name] = saved_values[name]
                    else:
                        del self.values[name]

    def inline_subgraph(
        self,
        graph: onnx.GraphProto,
        bindings: Sequence[SSAValue | Structured | None],
        prefix: str,
        b: FoldingBuilder,
        what: str,
    ) -> list[SSAValue | Structured]:
        """Convert a subgraph into the current block (a taken If branch, one step of an
        unrolled loop), its inputs bound to ``bindings`` (tensors, sequences or optionals),
        and return its outputs, read with ``b``. The names it defines (inputs and node
        outputs) are bound only meanwhile: the values they shadowed come back afterwards,
        so each step of an unrolling binds them anew. Outputs that do not convert are
        Unsupported: ``what`` did not convert."""
        names = [i.name for i in graph.input] + [o for n in graph.node for o in n.output]
        saved = {name: self.values[name] for name in names if name in self.values}
        saved_structured = {
            name: self.structured[name] for name in names if name in self.structured
        }
        saved_known = {name: self.known[name] for name in names if name in self.known}
        for formal, value in zip(graph.input, bindings, strict=True):
            self._bind(formal.name, value)
        for name in names[len(graph.input) :]:
            self._bind(name, None)
        try:
            self.convert_graph(graph, prefix)
            if any(o.name in self.poisoned for o in graph.output):
                raise Unsupported(f"{what} did not convert")
            held = self.structured
            return [held[o.name] if o.name in held else self.value(o.name, b) for o in graph.output]
        finally:
            for name in names:
                self.values.pop(name, None)
                self.structured.pop(name, None)
                self.known.pop(name, None)
            self.values.update(saved)
            self.structured.update(saved_structured)
            self.known.update(saved_known)

    def _bind(self, name: str, value: SSAValue | Structured | None) -> None:
        self.values.pop(name, None)
        self.structured.pop(name, None)
        self.known.pop(name, None)
        if isinstance(value, SSAValue):
            self.values[name] = value
        elif value is not None:
            self.structured[name] = value

    def checkpoint(self) -> Checkpoint:
        """Where the current block ends and what the names hold: ``rollback`` returns
        there."""
        return self.target.last_op, dict(self.values)

    def rollback(self, checkpoint: Checkpoint) -> None:
        """Erase the ops emitted into the current block since ``checkpoint`` (a converter
        that tried one form and takes another) and forget the names bound to them."""
        mark, saved_values = checkpoint
        erased: set[SSAValue] = set()
        op = self.target.last_op
        while op is not None and op is not mark:
            before = op.prev_op
            erased.update(op.results)
            self.target.erase_op(op, safe_erase=False)
            op = before
        for name, value in list(self.values.items()):
            if value in erased:
                if name in saved_values and saved_values[name] not in erased:
                    self.values[name] = saved_values[name]
                else:
                    del self.values[name]

    def problem_mark(self) -> tuple[int, int]:
        """How many problems (and values needed at compile time) are recorded so far."""
        return len(self.problems), len(self.needs_values)

    def forget_problems(self, mark: tuple[int, int]) -> None:
        """Drop the problems recorded since ``mark`` (a subgraph that is not converted
        after all)."""
        del self.problems[mark[0] :]
        del self.needs_values[mark[1] :]

    # -- conversion ---------------------------------------------------------------------------
    def convert_graph(
        self, graph: onnx.GraphProto, prefix: str = "", *, read: list[NodeFields] | None = None
    ) -> None:
        """Convert a graph's nodes in order (the main graph, or a subgraph inlined into
        it, whose node names get ``prefix``, and whose own initializers its nodes read).
        ``read``: the fields of its nodes, when read already."""
        if prefix:
            for t in graph.initializer:
                self.initializers.setdefault(t.name, t)
        nodes = self._nodes(read if read is not None else read_nodes(items(graph.node)), prefix)
        self._precheck(nodes)
        for node in nodes:
            self._convert(node)

    def _nodes(self, read: list[NodeFields], prefix: str) -> list[_Node]:
        """A graph's nodes (``read``) with what converting one reads of it; each of their
        outputs is known by its producer from here on."""
        node_opsets, default, producer = self.node_opsets, self.opset, self.producer
        out: list[_Node] = []
        for index, f in enumerate(read):
            op_type, node, outputs = f.op_type, f.proto, f.outputs
            name = node_name(f.name, op_type, index)
            for o in outputs:
                producer[o] = node
            out.append(
                _Node(
                    node,
                    op_type,
                    f.domain,
                    prefix + name,
                    op_key(f.domain, op_type),
                    node_opsets.get(name, default) if node_opsets else default,
                    f.inputs,
                    outputs,
                    f.attribute_names,
                    f.attributes,
                )
            )
        return out

    def _precheck(self, nodes: list[_Node]) -> None:
        """Op types without a converter and definitions older than MIN_OPSET, for the
        whole graph up front (a failing node hides nothing downstream of it)."""
        for n in nodes:
            if n.key not in CONVERTERS:
                self.problems.append(Problem(n.key, n.name, self.uninlined.get(n.key, "")))
            elif (
                n.opset < MIN_OPSET and n.domain in DEFAULT_DOMAINS and not legacy(n.proto, n.opset)
            ):
                since = schema_since(n.op_type, n.opset)
                if since != schema_since(n.op_type, MIN_OPSET):
                    why = self.upgrade_failures.get(n.proto.name)
                    self.problems.append(
                        Problem(
                            n.op_type,
                            n.name,
                            f"the definition of opset {since} predates opset {MIN_OPSET}"
                            + (
                                f" and onnx's version converter cannot upgrade it: {why}"
                                if why
                                else ""
                            ),
                        )
                    )

    def _convert(self, n: _Node) -> None:
        node, name, op_type, outputs = n.proto, n.name, n.op_type, n.outputs
        convert = CONVERTERS.get(n.key)
        if convert is None or (self.poisoned and any(i in self.poisoned for i in n.inputs)):
            self.poisoned.update(outputs)
            return
        if self.problems and any(p.node == name for p in self.problems):
            self.poisoned.update(outputs)
            return
        b = FoldingBuilder(self.target.add_op, location=name_loc(name))
        since = schema_since(op_type, n.opset)
        names, attributes = n.attribute_names, n.attributes
        ctx = NodeContext(self, node, name, since, b, op_type, n.inputs, outputs, names, attributes)
        try:
            if (
                op_type in _KNOWN_KINDS
                and (self.known or op_type in _KNOWN_SOURCES)
                and self._convert_known(n, ctx)
            ):
                return
            if symbolic_shape_node(self, node):
                try:
                    self._convert_shape_value(ctx)
                    return
                except Undecidable:  # depends on sizes at run time: convert as data
                    ctx = NodeContext(
                        self, node, name, since, b, op_type, n.inputs, outputs, names, attributes
                    )
            if n.opset < MIN_OPSET:
                convert = legacy(node, n.opset) or convert
            outs = normalize_outputs(convert(ctx), len(outputs))
            unread = [a for a in ctx.attribute_names if a not in ctx.used_attrs]
            if unread:
                raise Unsupported(
                    "unsupported attribute"
                    + ("s " if len(unread) > 1 else " ")
                    + ", ".join(f"'{a}'" for a in unread)
                )
            for i, out_name in enumerate(outputs):
                if not out_name:
                    continue
                value = outs[i]
                if value is None:
                    raise Unsupported(f"output #{i} ('{out_name}') is not supported")
                if isinstance(value, STRUCTURED):
                    self.structured[out_name] = value
                    continue
                self._check_output(out_name, type_of(value))
                self.values[out_name] = named(value, out_name) if not value.name_hint else value
        except NotStatic as not_static:
            self.poisoned.update(outputs)
            behind, sized = self.graph_inputs_behind(not_static.tensor)
            if behind:
                self.needs_values.extend(i for i in behind if i not in self.needs_values)
            message = str(not_static) + (
                ": it depends on the sizes of symbolic dims" if sized else ""
            )
            self.problems.append(Problem(op_type, name, message))
        except Unsupported as unsupported:
            self.poisoned.update(outputs)
            self.problems.append(Problem(op_type, name, str(unsupported)))
        except (VerifyException, ValueError) as invalid:
            self.poisoned.update(outputs)
            self.problems.append(Problem(op_type, name, first_line(invalid)))
        except Exception as err:  # a converter bug must still give one error, not a module
            self.poisoned.update(outputs)
            message = f"internal error: {type(err).__name__}: {first_line(err)}"
            self.problems.append(Problem(op_type, name, message))

    def _convert_known(self, n: _Node, ctx: NodeContext) -> bool:
        """Convert a node whose result the import knows without an op (a Constant, static
        shape arithmetic: ``evaluate_known_node``) by keeping its value as an array (see
        ``known``); False where it is not one (the node's converter then runs). The caller
        asks only of nodes of ``_KNOWN_KINDS``."""
        op_type = n.op_type
        if n.domain not in DEFAULT_DOMAINS or n.opset < MIN_OPSET:
            return False
        if len(n.outputs) != 1 or not n.outputs[0]:
            return False
        if op_type == "Constant":
            try:
                arr: np.ndarray | None = constant_array(ctx)
            except Unsupported:
                return False
        elif op_type == "ConstantOfShape":
            try:
                arr = constant_of_shape_array(ctx)
            except (Unsupported, NotStatic):
                arr = None
        else:
            arr = evaluate_known_node(self, ctx)
        if arr is None or any(a not in ctx.used_attrs for a in ctx.attribute_names):
            ctx.used_attrs.clear()  # the converter reads the node afresh
            return False
        ctx.check_materialized(arr.size, "a constant")
        name = n.outputs[0]
        self._check_output(name, TensorType(arr.shape, DType.from_numpy(arr.dtype)))
        self.known[name] = (arr, name_loc(n.name))
        return True

    def _convert_shape_value(self, ctx: NodeContext) -> None:
        """Evaluate a node of symbolic shape arithmetic at import time. A result whose
        dims all turned out static becomes a constant again."""
        out = evaluate_shape_node(ctx)
        unread = [a for a in ctx.attribute_names if a not in ctx.used_attrs]
        if unread:
            raise Unsupported(f"unsupported attributes {unread}")
        name = ctx.output_names[0]
        if out.is_symbolic:
            self.shape_values[name] = out
        else:
            array = np.asarray(out.values.tolist(), out.dtype.numpy).reshape(out.values.shape)
            self.values[name] = named(ctx.constant(array), name)

    def _materialize(self, name: str, b: FoldingBuilder) -> SSAValue:
        """A shape value used as data: its dims as a ``mir.dims`` vector (evaluated under
        the run's bindings), shaped and typed as the ONNX value."""
        sv = self.shape_values[name]
        flat = sv.values.reshape(-1).tolist()
        value: SSAValue = b.emit(mir.DimsOp(flat)).results[0]
        if sv.values.shape != (len(flat),):
            value = b.reshape(value, list(sv.values.shape))
        if sv.dtype is not DType.I64:
            value = b.cast(value, sv.dtype)
        value = named(value, name)
        self.values[name] = value
        return value

    def _check_output(self, name: str, t: TensorType) -> None:
        """The checks of every converted output's type: its size, then ONNX inference."""
        check_tensor_size(f"output '{name}'", t.shape, t.dtype, self._tensor_limit)
        self._check_inferred(name, t)

    def _check_inferred(self, name: str, t: TensorType) -> None:
        """Our result type against ONNX shape inference, where that knows every dim (all
        numbers): a mismatch is a converter bug and must not produce a module."""
        inferred = self.inferred.get(name)
        if inferred is None or inferred == t.shape:
            return
        if not all(isinstance(d, int) for d in inferred) or not t.is_static:
            return
        if inferred != t.shape:
            raise Unsupported(
                f"converted to shape {list(t.shape)} but ONNX infers {list(inferred)} for '{name}'"
            )

    def _error(self) -> OnnxImportError:
        message = describe_problems(self.problems, self.needs_values)
        open_dims: tuple[str, ...] = ()
        if self.dim_names and any("symbolic" in p.message for p in self.problems):
            open_dims = tuple(self.dim_names.values())
            message += (
                f" (the inputs leave the dims {list(open_dims)} open: sizes for them may let "
                "it import)"
            )
        return OnnxImportError(message, tuple(self.needs_values), open_dims)

    # -- outputs -------------------------------------------------------------------------------
    def _finish(self, graph: onnx.GraphProto) -> ModuleOp:
        outs: list[SSAValue] = []
        names: list[str] = []
        specs = []
        for vi in graph.output:
            if vi.name in self.structured:
                flat, spec = flatten(self.structured[vi.name], vi.name)
                outs += [v for v, _ in flat]
                names += [n for _, n in flat]
                specs.append(spec)
                continue
            specs.append({"tensor": vi.name})
            try:
                v = self.value(vi.name, FoldingBuilder(self.block.add_op))
            except Unsupported as err:
                raise OnnxImportError(f"graph output '{vi.name}': {err}") from None
            tt = vi.type.tensor_type
            if vi.type.HasField("tensor_type") and tt.elem_type:
                try:
                    declared = dtype_of(tt.elem_type, f"graph output '{vi.name}' element type")
                except Unsupported as err:
                    raise OnnxImportError(str(err)) from None
                if declared is not type_of(v).dtype:
                    raise OnnxImportError(
                        f"graph output '{vi.name}' is declared {declared.value} but computes "
                        f"{type_of(v).dtype.value}"
                    )
            outs.append(v)
            names.append(vi.name)
        # The graph's ops by ``new_op``: what ``create`` makes, without xDSL's generic
        # setters (``create`` itself skips their constructors' argument building).
        self.block.add_op(new_op(func.ReturnOp, outs))
        # Folded shape arithmetic and unused initializers go; graph inputs are the
        # signature, they stay.
        ret = self.block.last_op
        erase_unused(
            (op for op in self.block.ops if op is not ret and not isinstance(op, mir.InputOp)),
            erase_unread,
        )
        # Its type is what sync_function_type would give: the graph takes no block arguments.
        assert not self.block.args
        graph_op = new_op(
            func.FuncOp,
            properties={
                "sym_name": StringAttr(self.graph_name),
                "function_type": function_type([], [v.type for v in outs]),
            },
            regions=[Region(self.block)],
        )
        set_output_names(graph_op, names)
        module = new_op(ModuleOp, regions=[Region(Block([graph_op]))])
        record_outputs(module, specs)
        # The initializers that became params stay with the module, shared by its copies.
        kept = {leaf.name for leaf in graph_params(graph_op)}
        if kept:
            attach_weights(module, {n: self.init_arrays[n] for n in sorted(kept)})
        try:
            verify_module(module)  # recorded: a compile of it verifies only what changes
        except VerifyFailure as failure:
            raise OnnxImportError(
                f"the imported module does not verify: {_failing_node(self.block, failure)}"
            ) from None
        return module


def _failing_node(block: Block, err: Exception) -> str:
    """The verifier's message, with the ONNX node of the first op that fails it."""
    for op in block.ops:
        try:
            op.verify()
        except VerifyException as own:
            text = " ".join(str(own).split())  # xDSL puts the detail on a second line
            where = location_str(op)
            return f"{op.name} at node '{where}': {text}" if where else text
    return first_line(err)


def _defined_in(value: SSAValue, block: Block) -> bool:
    """Whether ``value`` is defined in ``block`` or in a region nested in it."""
    owner: Block | None = (
        value.block if isinstance(value, BlockArgument) else cast(Operation, value.owner).parent
    )
    while owner is not None:
        if owner is block:
            return True
        parent = owner.parent_op()
        owner = parent.parent if parent is not None else None
    return False


def outer_names(node: onnx.NodeProto) -> set[str]:
    """The values of the enclosing graph that a node's subgraphs (an If's branches, a
    Loop's body) read."""
    names: set[str] = set()
    for a in items(node.attribute):
        for g in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
            local = {i.name for i in g.input} | {t.name for t in g.initializer}
            for n in g.node:
                names.update(i for i in [*n.input, *outer_names(n)] if i and i not in local)
                local.update(n.output)
    return names


def normalize_outputs(result: object, n: int) -> list[SSAValue | Structured | None]:
    if result is None:
        outs: list[SSAValue | Structured | None] = []
    elif isinstance(result, (SSAValue, *STRUCTURED)):
        outs = [cast(SSAValue | Structured, result)]
    else:
        outs = list(cast(Sequence[SSAValue | Structured | None], result))
    return outs + [None] * (n - len(outs))


def name_loc(name: str) -> NameLoc:
    """The location of a node's ops: ``NameLoc(StringAttr(name), UnknownLoc())``, built
    without xDSL's generic attribute construction and verification (a tenth of a node's
    import otherwise): both parameters have the types the definition requires by
    construction (the name a ``str``), so nothing is left to verify."""
    desc = StringAttr.__new__(StringAttr)
    object.__setattr__(desc, "data", name)
    loc = NameLoc.__new__(NameLoc)
    object.__setattr__(loc, "desc", desc)
    object.__setattr__(loc, "location", UNKNOWN_LOC)
    return loc


MAX_PROBLEMS_SHOWN = 8
MAX_REASON_CHARS = 240


def describe_problems(problems: list[Problem], needs_values: list[str]) -> str:
    """One line for an import that failed: each distinct problem (op type and reason)
    once, with how many nodes have it and the first of them; op types without a
    converter first, then the rest in graph order, the first MAX_PROBLEMS_SHOWN shown."""
    groups: dict[tuple[str, str], list[str]] = {}
    for p in problems:
        groups.setdefault((p.op_type, p.message), []).append(p.node)
    missing = sorted((op, nodes) for (op, message), nodes in groups.items() if not message)
    others = [(op, message, nodes) for (op, message), nodes in groups.items() if message]
    parts: list[str] = []
    if missing:
        shown = ", ".join(f"{op} ({_nodes(nodes)})" for op, nodes in missing[:MAX_PROBLEMS_SHOWN])
        more = len(missing) - MAX_PROBLEMS_SHOWN
        parts.append(f"unsupported ops: {shown}" + (f" and {more} more" if more > 0 else ""))
    for op, message, nodes in others[:MAX_PROBLEMS_SHOWN]:
        reason = message if len(message) <= MAX_REASON_CHARS else message[:MAX_REASON_CHARS] + "..."
        where = f"node '{nodes[0]}'" if len(nodes) == 1 else f"({_nodes(nodes)})"
        parts.append(f"{op} {where}: {reason}")
    hidden = others[MAX_PROBLEMS_SHOWN:]
    if hidden:
        count = sum(len(nodes) for _, _, nodes in hidden)
        parts.append(f"and {len(hidden)} more problems (at {count} nodes)")
    msg = "cannot import the ONNX model: " + "; ".join(parts)
    if needs_values:
        msg += f" (operands needed at compile time depend on the graph inputs {needs_values})"
    return msg


def _nodes(nodes: list[str]) -> str:
    if len(nodes) == 1:
        return f"node '{nodes[0]}'"
    return f"{len(nodes)} nodes, first '{nodes[0]}'"


def upgrade(model: onnx.ModelProto, *, in_place: bool = False) -> Upgrade:
    """``model`` brought up to MIN_OPSET when it is older (``upgrade.upgrade_model``, in
    place where the caller owns it); the nodes with a converter of their own for their
    old definition keep it."""
    return upgrade_model(
        model, MIN_OPSET, lambda node, opset: legacy(node, opset) is not None, in_place=in_place
    )


def legacy(node: onnx.NodeProto, opset: int) -> Converter | None:
    """The converter of a node's definition at an opset older than MIN_OPSET, when it
    has one of its own (``LEGACY_CONVERTERS``)."""
    if node.domain not in DEFAULT_DOMAINS:
        return None
    entry = LEGACY_CONVERTERS.get((node.op_type, schema_since(node.op_type, opset)))
    return entry.convert if entry is not None and entry.applies(node) else None
