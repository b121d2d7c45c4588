"""Models written against an opset older than the converters' own, brought up to it.

The converters implement the definitions in effect from ``MIN_OPSET`` (13) on. An older
model goes through onnx's own version converter (``onnx.version_converter``) first, on a
typed skeleton (large initializers given by type only, so no weights are serialised) --
unless every step its nodes take is one the converter takes as compatible (the node
stays as it is) or one done here as the converter does it (``ADAPTERS``: attributes that
became operands or went, an operand that moved), which spares the converter's round trip
of the whole model and its shape inference. The repairs below then fix what that
converter gets wrong (each checked against onnxruntime running the original model,
``tests/frontends/test_onnx_opsets.py``):

- ``Upsample`` (1, 7, 9) and ``Resize``-10 become a ``Resize`` with the opset-11
  defaults (``half_pixel``, ``round_prefer_floor``; linear is off by up to 0.26) where
  the old ops sample at ``x_out / scale`` and, nearest, truncate -- rounding up along
  the axes Resize-10 shrinks, as onnxruntime does; Upsample-1's ``bilinear``, which
  the adapter passes on as a mode Resize does not have, becomes ``linear``;
- the constants for ``Pad``-2's value and ``Clip``-6's bounds are float32 whatever the
  tensor's type (a float16 or float64 model no longer type-checks);
- ``Dropout`` 7-9 returns its mask in the input's type, the upgraded one as bool;
- ``PRelu`` before 7 applies a 1-D slope along the channel axis, the upgraded one
  broadcasts it from the last axis.

Definitions the version converter cannot express at all are left at their opset for a
converter of their own (``context.LEGACY_CONVERTERS``: ``Scan``-8 with its batch axis,
whose adapter drops the batch dim from the value types and moves no data;
``BatchNormalization`` with ``spatial=0``, which the adapter refuses), and so are those
it can only upgrade knowing their input's rank, which the importer has at hand and the
converter infers over the whole model (``Softmax``, ``LogSoftmax`` and ``Hardmax``
before 13, on the input coerced to 2-D; the converter's Hardmax adapter did not even do
that). When the converter
fails on the whole model (an adapter is missing for one op), every node is upgraded on
its own instead, so one missing adapter costs that node, not the model: it stays at its
opset and the importer names it, with the converter's reason.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnx.shape_inference
import onnx.version_converter
from onnx import (
    AttributeProto,
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TypeProto,
    helper,
)

from rlx_compile.diagnostics import first_line
from rlx_compile.frontends.onnx.context import (
    DEFAULT_DOMAINS,
    items,
    node_name,
    opset_versions,
    typed_skeleton,
)

KEEP_DOMAIN = "rlx.keep_opset"
"""Where nodes that keep their opset wait while the version converter runs (it converts
the default domain only)."""


class CannotConvert(Exception):
    """The version converter failed on a model (an adapter missing or refusing, the
    shape inference it runs rejecting the model); the message is its reason."""


def _convert_version(model: ModelProto, target: int) -> ModelProto:
    try:
        return onnx.version_converter.convert_version(model, target)
    except Exception as err:  # a C++ tool: whatever it raises, the model is not converted
        raise CannotConvert(first_line(err).split(" failed: ", 1)[-1]) from None


@dataclass(frozen=True)
class Upgrade:
    model: ModelProto
    node_opsets: dict[str, int] = field(default_factory=dict)
    """Nodes (by name) left at the opset they were written against."""
    failures: dict[str, str] = field(default_factory=dict)
    """Node name -> why the version converter did not upgrade it."""
    in_place: bool = False
    """``model`` is the model given, upgraded in place (``upgrade_model``'s ``in_place``)."""
    changed: tuple[int, ...] | None = None
    """In place: the main-graph nodes (by index) a step changed, the others left as they
    were (what was read of them still holds); None when not known (a copy, a repair)."""


@functools.lru_cache(maxsize=4096)
def schema_since(op_type: str, opset: int) -> int:
    """The opset that introduced the definition of ``op_type`` in effect at ``opset``
    (0 when the op does not exist there). Remembered, bounded: a model's op types are
    whatever strings its file holds."""
    try:
        return int(onnx.defs.get_schema(op_type, opset).since_version)
    except onnx.defs.SchemaError:
        return 0


def outdated(node: NodeProto, opset: int, target: int) -> bool:
    """Whether a default-domain node means something else at ``opset`` than at ``target``
    (its definition changed in between)."""
    return node.domain in DEFAULT_DOMAINS and _changed(node.op_type, opset, target)


@functools.lru_cache(maxsize=4096)
def _changed(op_type: str, opset: int, target: int) -> bool:
    """``outdated`` of an op type: asked for every node of a model, one lookup."""
    return schema_since(op_type, opset) != schema_since(op_type, target)


def subgraphs(node: NodeProto) -> Iterator[GraphProto]:
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            yield a.g
        elif a.type == AttributeProto.GRAPHS:
            yield from a.graphs


def walk(graph: GraphProto | FunctionProto) -> Iterator[NodeProto]:
    """Every node of a graph (or a function's body) and of its subgraphs, outer nodes
    first."""
    for node in items(graph.node):
        yield node
        for a in items(node.attribute):  # ``subgraphs``, without a generator per node
            kind = a.type
            if kind == AttributeProto.GRAPH:
                yield from walk(a.g)
            elif kind == AttributeProto.GRAPHS:
                for g in items(a.graphs):
                    yield from walk(g)


def upgrade_model(
    model: ModelProto,
    target: int,
    keep: Callable[[NodeProto, int], bool],
    *,
    in_place: bool = False,
) -> Upgrade:
    """``model`` with its default-domain opset raised to ``target`` (the model itself when
    nothing it uses changed meaning). ``keep(node, opset)``: the node is converted at its
    own opset (it has a converter of its own for that definition).

    ``in_place``: the caller owns ``model`` (it parsed it), so the steps done here may
    change it rather than a copy -- a copy holds every weight again, the most of an
    upgrade's time (a model keeping its weights in Constant nodes copies them node by
    node). Its nodes are left unnamed (the import names them as ``_name_nodes`` does,
    and ``node_opsets`` by those names); the version converter, where it takes over,
    works on a named copy. A model one of whose repairs reads the values' types, which
    are inferred from the model as given, is still copied."""
    opset = opset_versions(model.opset_import).get("")
    if opset is None or opset >= target:
        return Upgrade(model)
    nodes = list(walk(model.graph))
    if not any(outdated(n, opset, target) for n in nodes):
        return Upgrade(model)
    nested = len(nodes) > len(model.graph.node)
    repairable = _repairable(nodes)
    in_place = in_place and not any(_would_repair(n, opset, typed=True) for n in repairable)
    if in_place:
        # A repair names the nodes it makes after the node it fixes.
        named = any(_would_repair(n, opset) for n in repairable)
        work, inner = _with_inner_nodes(model, nested, name=named)
    else:
        work, inner = _named_copy(model, nested)
    native = _adapt_natively(work, inner, opset, target, keep)
    if native is not None:
        repaired = _repair(repairable, work.graph, opset, _lazy_types(model, nested=nested))
        _set_opset(work, target)
        changed = native.adapted if in_place and not repaired else None
        return Upgrade(work, native.kept, in_place=in_place, changed=changed)
    return upgrade_with_converter(model, _named_copy(model, nested)[0], target, keep)


def _named_copy(model: ModelProto, nested: bool = True) -> tuple[ModelProto, list[NodeProto]]:
    """A copy of ``model``, its nodes named (``_name_nodes``), and its subgraphs' nodes
    (``nested``: whether it has subgraphs, when the caller knows it has none)."""
    work = ModelProto()
    work.CopyFrom(model)
    return _with_inner_nodes(work, nested, name=True)


def _with_inner_nodes(
    model: ModelProto, nested: bool, *, name: bool
) -> tuple[ModelProto, list[NodeProto]]:
    """``model`` (its nodes named by ``_name_nodes`` when ``name``) and its subgraphs'
    nodes (``nested``: whether it has subgraphs)."""
    graphs = _graphs(model.graph) if nested else [model.graph]
    if name:
        for g in graphs:
            _name_nodes(g)
    return model, [n for g in graphs[1:] for n in g.node]


def _graphs(graph: GraphProto) -> list[GraphProto]:
    """The graph and its subgraphs, nested ones too."""
    return [graph, *(s for n in walk(graph) for s in subgraphs(n))]


def upgrade_with_converter(
    model: ModelProto, work: ModelProto, target: int, keep: Callable[[NodeProto, int], bool]
) -> Upgrade:
    """``upgrade_model`` by onnx's version converter, on ``work`` (``model`` with its
    nodes named) -- for the models ``_adapt_natively`` does not take."""
    opset = opset_versions(model.opset_import)[""]
    types = _value_types(work)
    kept = [n for n in walk(work.graph) if outdated(n, opset, target) and keep(n, opset)]
    for n in kept:
        n.domain = KEEP_DOMAIN
    if kept:
        work.opset_import.append(helper.make_opsetid(KEEP_DOMAIN, 1))
    node_opsets: dict[str, int] = {}
    failures: dict[str, str] = {}
    try:
        converted = _convert_model(work, target)
    except CannotConvert:
        converted = _convert_node_by_node(work, opset, target, types, node_opsets, failures)
    for n in walk(converted.graph):
        if n.domain == KEEP_DOMAIN:
            n.domain = ""
            node_opsets[n.name] = opset
            for g in subgraphs(n):
                _convert_subgraph(g, opset, target, types, node_opsets, failures)
    _repair(list(walk(model.graph)), converted.graph, opset, lambda: types)
    _set_opset(converted, target)
    return Upgrade(converted, node_opsets, failures)


# -- without the converter ----------------------------------------------------------------

COMPATIBLE_STEPS: dict[int, frozenset[str]] = {
    version: frozenset(ops.split())
    for version, ops in {
        6: "Gemm",
        7: "AveragePool PRelu",
        8: "Max MaxPool Mean Min Sum",
        9: "Cast Constant Flatten Gemm Greater Less MatMul PRelu",
        10: "AveragePool Dropout MaxPool",
        11: "ArgMax ArgMin AveragePool Compress Concat Constant Conv ConvTranspose DepthToSpace"
        " Equal Flatten Gather Gemm Hardmax If LogSoftmax Loop LpPool MaxPool MaxUnpool"
        " NonMaxSuppression OneHot ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax"
        " ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Scan Slice Softmax Split"
        " Squeeze TopK Unsqueeze",
        12: "ArgMax ArgMin BatchNormalization Clip Constant GatherND Max MaxPool Min Pow"
        " ReduceMax ReduceMin",
        13: "Abs Add ArgMax ArgMin Cast Ceil Clip Concat Constant DepthToSpace DequantizeLinear"
        " Div Dropout Equal Erf Exp Expand Flatten Floor Gather GatherElements GatherND Gemm"
        " Greater Hardmax Identity If IsNaN LRN Less Log Loop MatMul Max Mean"
        " MeanVarianceNormalization Min Mod Mul Neg NegativeLogLikelihoodLoss NonZero Pad Pow"
        " QuantizeLinear Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax"
        " ReduceMean ReduceMin ReduceProd ReduceSumSquare Relu Reshape Resize ScatterElements"
        " ScatterND Shape Sigmoid Sign Size Slice SoftmaxCrossEntropyLoss SpaceToDepth Sqrt Sub"
        " Sum Tanh Tile Transpose",
    }.items()
}
"""Opset version ``v`` -> the ops whose definition at ``v`` the version converter takes
from the one at ``v - 1`` as it is (its ``CompatibleAdapter`` for the step: the new
definition only accepts more types): a node needs nothing of the converter for them.
onnx's ``version_converter/convert.h``, up to opset 13 (``tests/frontends`` checks the
installed one); a step missing here goes to the converter."""


_Types = Callable[[], dict[str, TypeProto]]


class _Adapting:
    """What a step done here makes: new values named as the converter names them
    (``_v_<n>``, which an SSA name hint keeps as ``_v``), kept in ``made`` until every
    node is known to adapt (``_adapt_natively`` then adds them to the graph)."""

    def __init__(self, graph: GraphProto, inner: list[NodeProto]):
        self._graph = graph
        self._inner = inner
        self._values: set[str] | None = None
        self.made: list[onnx.TensorProto] = []

    def value_name(self) -> str:
        """A name no value of the model has, as the converter names new values."""
        if self._values is None:
            g = self._graph
            self._values = {vi.name for vi in g.input} | {t.name for t in g.initializer}
            self._values.update(o for n in [*g.node, *self._inner] for o in n.output)
        return _fresh(f"_v_{len(self._values)}", self._values)

    def operand(self, node: NodeProto, value: onnx.TensorProto) -> None:
        """A new last operand of ``node``, holding ``value``. The converter inserts a
        Constant node for it; an initializer here, which the importer reads as the
        static operand it is without making an op of it (the Constant's op, unused,
        is erased: the imported module is the same)."""
        value.name = self.value_name()
        self.made.append(value)
        node.input.append(value.name)


Adapter = Callable[[NodeProto, _Adapting], bool]
"""One step of the version converter done here, on ``node`` in place; False, the node
unchanged, where the converter would do more than this reproduces (the whole model then
goes to it)."""


def _axes_as_input(node: NodeProto, at: _Adapting) -> bool:
    """``AxesAttributeToInput`` (Squeeze, Unsqueeze, ReduceSum 12 -> 13): the axes
    attribute becomes a Constant operand."""
    axes = next((a for a in node.attribute if a.name == "axes"), None)
    if axes is None:
        return True
    value = onnx.TensorProto(data_type=onnx.TensorProto.INT64, dims=[len(axes.ints)])
    value.int64_data.extend(axes.ints)
    node.attribute.remove(axes)
    at.operand(node, value)
    return True


def _ratio_as_input(node: NodeProto, at: _Adapting) -> bool:
    """``Dropout_11_12``: the ratio attribute (0.5 when absent) becomes a float32 Constant
    operand."""
    attr = next((a for a in node.attribute if a.name == "ratio"), None)
    ratio = 0.5 if attr is None else attr.f
    if attr is not None:
        node.attribute.remove(attr)
    at.operand(node, onnx.TensorProto(data_type=onnx.TensorProto.FLOAT, float_data=[ratio]))
    return True


def _spatial_dropped(node: NodeProto, at: _Adapting) -> bool:
    """``BatchNormalization_8_9`` (``RemoveAttribute(spatial, 1)``): the spatial
    attribute goes where it is 1, the only value opset 9 keeps (``spatial=0`` has a
    converter of its own, ``ops/legacy.py``)."""
    spatial = next((a for a in node.attribute if a.name == "spatial"), None)
    if spatial is None:
        return True
    if spatial.i != 1:
        return False
    node.attribute.remove(spatial)
    return True


def _pads_as_inputs(node: NodeProto, at: _Adapting) -> bool:
    """``Pad_10_11``: the pads attribute becomes an int64 operand and, in constant mode,
    the value attribute (0 when absent) a float32 one (``_repair`` gives it the tensor's
    type, as it does after the converter)."""
    pads = next((a for a in node.attribute if a.name == "pads"), None)
    if pads is None:
        return False  # a Pad-2 without pads: the converter says what it makes of it
    value = next((a for a in node.attribute if a.name == "value"), None)
    mode = next((a.s for a in node.attribute if a.name == "mode"), b"constant")
    operand = onnx.TensorProto(data_type=onnx.TensorProto.INT64, dims=[len(pads.ints)])
    operand.int64_data.extend(pads.ints)
    node.attribute.remove(pads)
    at.operand(node, operand)
    if mode == b"constant":
        fill = 0.0 if value is None else value.f
        at.operand(node, onnx.TensorProto(data_type=onnx.TensorProto.FLOAT, float_data=[fill]))
    if value is not None:
        node.attribute.remove(value)
    return True


def _ranges_as_inputs(node: NodeProto, at: _Adapting) -> bool:
    """``Slice_9_10``: the starts, ends and (when given) axes attributes become int64
    operands, in that order."""
    given = {a.name: a for a in node.attribute}
    if len(given) < len(node.attribute) or len(node.input) != 1:
        return False  # the converter says what it makes of a malformed Slice-1
    if "starts" not in given or "ends" not in given:
        return False
    names = [n for n in ("starts", "ends", "axes") if n in given]
    if any(given[n].type != AttributeProto.INTS or given[n].ref_attr_name for n in names):
        return False
    for name in names:
        ints = given[name].ints
        operand = onnx.TensorProto(data_type=onnx.TensorProto.INT64, dims=[len(ints)])
        operand.int64_data.extend(ints)
        node.attribute.remove(given[name])
        at.operand(node, operand)
    return True


def _roi_before_scales(node: NodeProto, at: _Adapting) -> bool:
    """``Resize_10_11``: the scales move to the third operand. The converter puts a
    Constant roi of [0]*rank + [1]*rank second, read only by ``tf_crop_and_resize``, which
    Resize-10 has no way to ask for: an omitted roi here (it would need the rank, which
    only shape inference over the whole model gives); ``_repair`` then makes it sample as
    Resize-10 did, as after the converter."""
    if len(node.input) != 2:
        return False
    node.input.insert(1, "")
    return True


ADAPTERS: dict[tuple[str, int], Adapter] = {
    ("Squeeze", 13): _axes_as_input,
    ("Unsqueeze", 13): _axes_as_input,
    ("ReduceSum", 13): _axes_as_input,
    ("Dropout", 12): _ratio_as_input,
    ("BatchNormalization", 9): _spatial_dropped,
    ("Pad", 11): _pads_as_inputs,
    ("Slice", 10): _ranges_as_inputs,
    ("Resize", 11): _roi_before_scales,
}
"""``(op, v)`` -> the step ``v - 1 -> v`` of the version converter for ``op``, done here as
the converter does it (the common steps that are cheap to reproduce)."""


def _steps(op_type: str, opset: int, target: int) -> list[int]:
    """The versions in ``(opset, target]`` at which ``op_type``'s definition changes:
    the steps the version converter takes for a node of it."""
    key = (op_type, opset, target)
    if key not in _STEPS:
        _STEPS[key] = [v for v in range(opset + 1, target + 1) if schema_since(op_type, v) == v]
    return _STEPS[key]


_STEPS: dict[tuple[str, int, int], list[int]] = {}


def _adapt_natively(
    work: ModelProto,
    inner: list[NodeProto],
    opset: int,
    target: int,
    keep: Callable[[NodeProto, int], bool],
) -> _Native | None:
    """Upgrade ``work`` (the model, its nodes named unless it is upgraded in place;
    ``inner``: its subgraphs' nodes) in place without the version converter, when each
    step of every outdated node is compatible (``COMPATIBLE_STEPS``) or one of
    ``ADAPTERS`` on a main-graph node, or the main-graph node keeps its opset (``keep``).
    None (``work`` unchanged) when some node needs the converter: the steps are taken on
    copies of the nodes they change, which replace them once every node has adapted. As
    the converter's, the result declares no value_info."""
    for node in inner:
        if outdated(node, opset, target) and (
            keep(node, opset) or not _compatible(node.op_type, opset, target)
        ):
            return None
    at = _Adapting(work.graph, inner)
    kept: dict[str, int] = {}
    adapted: list[tuple[int, NodeProto, NodeProto]] = []
    for index, node in enumerate(items(work.graph.node)):
        op_type = node.op_type  # each read of a protobuf field costs: once per node
        if node.domain not in DEFAULT_DOMAINS or not _changed(op_type, opset, target):
            continue  # not ``outdated``
        if keep(node, opset):
            if any(True for _ in subgraphs(node)):
                return None  # the converter upgrades the bodies of a node it keeps
            kept[node_name(node.name, op_type, index)] = opset
            continue
        trial: NodeProto | None = None
        for version in _steps(op_type, opset, target):
            if op_type in COMPATIBLE_STEPS.get(version, ()):
                continue
            adapt = ADAPTERS.get((op_type, version))
            if adapt is None:
                return None
            if trial is None:
                trial = NodeProto()
                trial.CopyFrom(node)
            if not adapt(trial, at):
                return None
        if trial is not None:
            adapted.append((index, node, trial))
    for _, node, trial in adapted:
        node.CopyFrom(trial)
    work.graph.initializer.extend(at.made)
    del work.graph.value_info[:]
    return _Native(kept, tuple(index for index, _, _ in adapted))


@dataclass(frozen=True)
class _Native:
    """What ``_adapt_natively`` did."""

    kept: dict[str, int]
    """The nodes kept at their opset (``Upgrade.node_opsets``)."""
    adapted: tuple[int, ...]
    """The main-graph nodes (by index) a step changed (an ``ADAPTERS`` step; compatible
    ones change none)."""


def _compatible(op_type: str, opset: int, target: int) -> bool:
    return all(op_type in COMPATIBLE_STEPS.get(v, ()) for v in _steps(op_type, opset, target))


def _lazy_types(model: ModelProto, *, data_prop: bool = True, nested: bool = True) -> _Types:
    """``_value_types(model)``, computed when first asked for."""
    return functools.cache(lambda: _value_types(model, data_prop=data_prop, nested=nested))


# -- conversion ---------------------------------------------------------------------------


def _convert_keeping_names(model: ModelProto, target: int) -> ModelProto:
    """``convert_version``, every value keeping its name: the converter renames the
    values of the nodes it replaces unless they are graph outputs, so each value is one
    while it runs."""
    count = len(model.graph.output)
    declared = {vi.name for vi in model.graph.output}
    values = [o for n in model.graph.node for o in n.output if o and o not in declared]
    model.graph.output.extend(onnx.ValueInfoProto(name=o) for o in dict.fromkeys(values))
    try:
        out = _convert_version(model, target)
    finally:
        del model.graph.output[count:]
    kept = [vi for vi in out.graph.output if vi.name in declared]
    del out.graph.output[:]
    out.graph.output.extend(kept)
    return out


def _convert_model(model: ModelProto, target: int) -> ModelProto:
    """The version converter on the model's typed skeleton, the weights put back."""
    skeleton = typed_skeleton(model, all_nodes=True)
    moved = {vi.name for vi in skeleton.graph.input} - {vi.name for vi in model.graph.input}
    out = _convert_keeping_names(skeleton, target)
    kept_inputs = [vi for vi in out.graph.input if vi.name not in moved]
    del out.graph.input[:]
    out.graph.input.extend(kept_inputs)
    # The weights back, in their order; the converter's own initializers after them.
    converted = {t.name: t for t in out.graph.initializer}
    original = [converted.pop(t.name, t) for t in model.graph.initializer]
    made = list(converted.values())
    del out.graph.initializer[:]
    out.graph.initializer.extend(original + made)
    _name_new_nodes(model.graph, out.graph)
    return out


def _convert_node_by_node(
    model: ModelProto,
    opset: int,
    target: int,
    types: dict[str, TypeProto],
    node_opsets: dict[str, int],
    failures: dict[str, str],
) -> ModelProto:
    """Each outdated node converted alone (its operands declared as typed inputs of a
    one-node model); a node the converter fails on stays at ``opset`` (recorded in
    ``node_opsets``, with the reason in ``failures``)."""
    out = ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    taken = _names(graph)
    nodes: list[NodeProto] = []
    for node in graph.node:
        inner = _inner_nodes(node)
        if node.domain == KEEP_DOMAIN or not any(
            outdated(n, opset, target) for n in [node, *inner]
        ):
            nodes.append(node)
            continue
        try:
            new_nodes, new_inits = _convert_alone(node, opset, target, types, taken)
        except CannotConvert as err:
            failures[node.name] = str(err)
            for n in [node, *inner]:
                node_opsets[n.name] = opset
            nodes.append(node)
            continue
        nodes.extend(new_nodes)
        graph.initializer.extend(new_inits)
    del graph.node[:]
    graph.node.extend(nodes)
    return out


def _convert_alone(
    node: NodeProto, opset: int, target: int, types: dict[str, TypeProto], taken: set[str]
) -> tuple[list[NodeProto], list[onnx.TensorProto]]:
    """One node converted as a one-node model: its nodes and new initializers, the
    values the converter made up renamed after the node (unique in the graph)."""
    operands = _free_names(node)
    # An operand of unknown type goes in untyped: only some adapters need shapes.
    graph = helper.make_graph(
        [node],
        "node",
        [
            helper.make_value_info(n, types[n]) if n in types else onnx.ValueInfoProto(name=n)
            for n in operands
        ],
        # Untyped: a declared type may be stale, and the converter infers them anyway.
        [onnx.ValueInfoProto(name=o) for o in node.output if o],
    )
    mini = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    converted = _convert_version(mini, target).graph
    _name_new_nodes(graph, converted)
    for vi in converted.output:  # typed by the converter's shape inference at ``target``
        if vi.type.WhichOneof("value") is not None:
            types.setdefault(vi.name, vi.type)
    known = set(operands) | set(node.output)
    renames: dict[str, str] = {}
    for name in [o for n in converted.node for o in n.output] + [
        t.name for t in converted.initializer
    ]:
        if name and name not in known and name not in renames:
            renames[name] = _fresh(f"{node.name}/{name}", taken)
    nodes = []
    for n in converted.node:
        n.input[:] = [renames.get(i, i) for i in n.input]
        n.output[:] = [renames.get(o, o) for o in n.output]
        nodes.append(n)
    inits = [t for t in converted.initializer if t.name in renames]
    for t in inits:
        t.name = renames[t.name]
    return nodes, inits


def _convert_subgraph(
    graph: GraphProto,
    opset: int,
    target: int,
    types: dict[str, TypeProto],
    node_opsets: dict[str, int],
    failures: dict[str, str],
) -> None:
    """Upgrade, in place, the body of a node that keeps its opset: the body as a model of
    its own (the outer values it reads declared as typed inputs). Its nodes stay at
    ``opset`` when that fails."""
    inner = list(walk(graph))
    if not any(outdated(n, opset, target) for n in inner):
        return
    outer = sorted(_free_names_of_graph(graph) - {vi.name for vi in graph.input})
    try:
        if any(n not in types for n in outer):
            raise CannotConvert("the types of the outer values the body reads are unknown")
        wrapper = GraphProto()
        wrapper.CopyFrom(graph)
        wrapper.input.extend(helper.make_value_info(n, types[n]) for n in outer)
        model = helper.make_model(wrapper, opset_imports=[helper.make_opsetid("", opset)])
        converted = _convert_keeping_names(model, target).graph
    except CannotConvert as err:
        for n in inner:
            node_opsets[n.name] = opset
            failures.setdefault(n.name, str(err))
        return
    _name_new_nodes(graph, converted)
    del graph.node[:]
    graph.node.extend(converted.node)
    graph.initializer.extend(
        t for t in converted.initializer if t.name not in {i.name for i in graph.initializer}
    )


# -- repairs: what the version converter gets wrong -----------------------------------------


def _repair(
    original: list[NodeProto],
    converted: GraphProto,
    opset: int,
    value_types: Callable[[], dict[str, TypeProto]],
) -> bool:
    """Fix the nodes the converter made of the definitions it gets wrong (of
    ``original``: the nodes of the model as given, with those of its subgraphs, which the
    converter converts too), found by the outputs they kept. ``value_types()``: the
    values' types, asked for only by the repairs that read them. Whether it fixed any."""
    producers: dict[str, NodeProto] | None = None  # built once a node needs repair
    repaired = False
    for old in _repairable(original):
        repair = _repair_for(old, schema_since(old.op_type, opset), converted, value_types)
        if repair is None:
            continue
        if producers is None:
            producers = {o: n for n in walk(converted) for o in n.output if o}
        new = producers.get(old.output[0])
        if new is not None:
            repair(new)
            repaired = True
    return repaired


def _repair_for(
    old: NodeProto,
    since: int,
    converted: GraphProto,
    value_types: Callable[[], dict[str, TypeProto]],
) -> Callable[[NodeProto], None] | None:
    """How ``_repair`` fixes the node the converter made of ``old`` (of the definition
    ``since``); None when the converter got it right."""
    kind = (old.op_type, since)
    if kind in (("Upsample", 1), ("Upsample", 7), ("Upsample", 9), ("Resize", 10)):
        return lambda new: _resize_as_upsample(new, converted)
    return _typed_repair_for(old, since, converted, value_types)


def _repairable(nodes: list[NodeProto]) -> list[NodeProto]:
    """The nodes ``_repair`` looks at: of an op type it may fix (``_REPAIRED``), in the
    default domain, their first output named (it finds the new node by that output)."""
    return [
        n
        for n in nodes
        if n.op_type in _REPAIRED and n.domain in DEFAULT_DOMAINS and n.output and n.output[0]
    ]


def _would_repair(node: NodeProto, opset: int, *, typed: bool = False) -> bool:
    """Whether ``_repair`` fixes ``node`` (one of ``_repairable``, of a model at
    ``opset``); ``typed``: by the values' types."""
    find = _typed_repair_for if typed else _repair_for
    return find(node, schema_since(node.op_type, opset), GraphProto(), dict) is not None


def _typed_repair_for(
    old: NodeProto,
    since: int,
    converted: GraphProto,
    value_types: Callable[[], dict[str, TypeProto]],
) -> Callable[[NodeProto], None] | None:
    """``_repair_for`` of the definitions whose repair reads the values' types."""
    kind = (old.op_type, since)
    if kind in (("Pad", 2), ("Clip", 6)):
        return lambda new: _float_operands_as(
            new, lambda: value_types().get(old.input[0]), converted
        )
    if kind == ("Dropout", 7) and len(old.output) > 1 and old.output[1]:
        return lambda new: _mask_as(new, old, value_types(), converted)
    if old.op_type == "PRelu" and since < 7:
        return lambda new: _slope_per_channel(new, old, value_types(), converted)
    return None


_REPAIRED = frozenset({"Upsample", "Resize", "Pad", "Clip", "Dropout", "PRelu"})
"""The op types ``_repair`` may fix."""


def _resize_as_upsample(resize: NodeProto, graph: GraphProto) -> None:
    """Upsample and Resize-10 sample input pixel ``x_out / scale`` (``asymmetric``) and,
    nearest, truncate it -- rounding up instead along the axes it shrinks (onnxruntime's
    Resize-10). An op that shrinks some axes and grows others becomes two Resizes, one
    per rounding (nearest sampling is separable)."""
    if resize.op_type != "Resize":
        return
    present = {a.name for a in resize.attribute}
    if "coordinate_transformation_mode" not in present:
        resize.attribute.append(
            helper.make_attribute("coordinate_transformation_mode", "asymmetric")
        )
    for a in resize.attribute:
        if a.name == "mode" and a.s == b"bilinear":  # Upsample-1's name for it
            a.s = b"linear"
    if "nearest_mode" in present:
        return
    mode = next((a.s.decode() for a in resize.attribute if a.name == "mode"), "nearest")
    scales = _constant_of(resize.input[2], graph) if len(resize.input) > 2 else None
    if mode != "nearest" or scales is None or not (scales < 1).any():
        resize.attribute.append(helper.make_attribute("nearest_mode", "floor"))
        return
    if not (scales > 1).any():
        resize.attribute.append(helper.make_attribute("nearest_mode", "ceil"))
        return
    taken = _names(graph)
    grown = _fresh(f"{resize.output[0]}/grown", taken)
    up, down = (_fresh(f"{resize.name}/{k}_scales", taken) for k in ("up", "down"))
    first = NodeProto()
    first.CopyFrom(resize)
    first.name, first.input[2], first.output[0] = f"{resize.name}/up", up, grown
    first.attribute.append(helper.make_attribute("nearest_mode", "floor"))
    resize.input[0], resize.input[2] = grown, down
    resize.attribute.append(helper.make_attribute("nearest_mode", "ceil"))
    graph.initializer.extend(
        [
            onnx.numpy_helper.from_array(np.maximum(scales, 1).astype(np.float32), up),
            onnx.numpy_helper.from_array(np.minimum(scales, 1).astype(np.float32), down),
        ]
    )
    graph.node.insert(list(graph.node).index(resize), first)


def _constant_of(name: str, graph: GraphProto) -> np.ndarray | None:
    """The value of an initializer or Constant node output of ``graph``."""
    for t in graph.initializer:
        if t.name == name:
            return onnx.numpy_helper.to_array(t)
    for n in graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            value = next((a for a in n.attribute if a.name == "value"), None)
            return None if value is None else onnx.numpy_helper.to_array(value.t)
    return None


def _float_operands_as(
    node: NodeProto, data_type: Callable[[], TypeProto | None], graph: GraphProto
) -> None:
    """The scalar operands the converter made (a Pad value, Clip bounds) in the data's
    element type (``data_type()``: shape inference over the model, asked for only when
    the converter made some; the native upgrade's initializers are read as numbers)."""
    made = {o: n for n in graph.node if n.op_type == "Constant" for o in n.output}
    consts = [c for c in (made.get(name) for name in node.input[1:]) if c is not None]
    if not consts:
        return
    data = data_type()
    if data is None or not data.HasField("tensor_type"):
        return
    elem = data.tensor_type.elem_type
    if elem in (0, onnx.TensorProto.FLOAT):
        return
    for const in consts:
        for a in const.attribute:
            if a.name == "value" and a.t.data_type == onnx.TensorProto.FLOAT:
                dtype = helper.tensor_dtype_to_np_dtype(elem)
                # Clip's missing min is float32's lowest: the new type's lowest.
                value = np.clip(
                    onnx.numpy_helper.to_array(a.t).astype(np.float64), *_range_of(dtype)
                )
                a.t.CopyFrom(onnx.numpy_helper.from_array(value.astype(dtype), a.t.name))


def _range_of(dtype: np.dtype) -> tuple[float, float]:
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return float(info.min), float(info.max)


def _mask_as(
    new: NodeProto, old: NodeProto, types: dict[str, TypeProto], graph: GraphProto
) -> None:
    """Dropout 7-9's mask has the input's type; the upgraded Dropout's mask is bool: cast
    it back, under the mask's name."""
    data = types.get(old.input[0])
    if new.op_type != "Dropout" or len(new.output) < 2 or data is None:
        return
    mask = new.output[1]
    boolean = _fresh(f"{mask}/bool", _names(graph))
    new.output[1] = boolean
    cast = helper.make_node(
        "Cast", [boolean], [mask], name=f"{new.name}/mask", to=data.tensor_type.elem_type
    )
    index = list(graph.node).index(new)
    graph.node.insert(index + 1, cast)


def _slope_per_channel(
    new: NodeProto, old: NodeProto, types: dict[str, TypeProto], graph: GraphProto
) -> None:
    """PRelu before opset 7 applies a 1-D slope per channel (axis 1); from 7 on it
    broadcasts numpy-style, from the last axis: unsqueeze the slope to [C, 1, ...]."""
    rank = _rank(types.get(old.input[0]))
    slope = types.get(old.input[1])
    if new.op_type != "PRelu" or rank is None or rank < 3 or _rank(slope) != 1:
        return
    taken = _names(graph)
    axes = _fresh(f"{new.name}/axes", taken)
    lifted = _fresh(f"{new.input[1]}/per_channel", taken)
    index = list(graph.node).index(new)
    graph.node.insert(
        index, helper.make_node("Unsqueeze", [new.input[1], axes], [lifted], name=lifted)
    )
    graph.initializer.append(
        onnx.numpy_helper.from_array(np.arange(1, rank - 1, dtype=np.int64), axes)
    )
    new.input[1] = lifted


def _rank(t: TypeProto | None) -> int | None:
    if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return len(t.tensor_type.shape.dim)


# -- helpers -------------------------------------------------------------------------------


def _set_opset(model: ModelProto, target: int) -> None:
    imports = [i for i in model.opset_import if i.domain not in (*DEFAULT_DOMAINS, KEEP_DOMAIN)]
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", target))
    model.opset_import.extend(imports)
    # The IR version that came with opset 13, for a model older than that.
    model.ir_version = max(model.ir_version, 7)


def _name_nodes(graph: GraphProto) -> None:
    """Name unnamed nodes as the importer would (``node_name``), so that the nodes the
    upgrade keeps can be found again and locations still refer to the model as given."""
    for index, node in enumerate(graph.node):
        if not node.name:
            node.name = node_name("", node.op_type, index)


def _name_new_nodes(original: GraphProto, converted: GraphProto) -> None:
    """Names for the nodes the converter made: a node producing an original node's
    output takes its name, one it inserted is named after the node it precedes."""
    named = {o: n.name for n in original.node for o in n.output if o}
    taken = {n.name for n in converted.node if n.name}
    nodes = list(converted.node)
    for node in nodes:
        owner = next((named[o] for o in node.output if o in named), None)
        if not node.name and owner is not None and owner not in taken:
            node.name = owner
            taken.add(owner)
    for index, node in enumerate(nodes):
        if not node.name:
            after = next((n.name for n in nodes[index:] if n.name), "upgrade")
            node.name = _fresh(f"{after}/{node.op_type}", taken)


def _fresh(name: str, taken: set[str]) -> str:
    out, k = name, 1
    while out in taken:
        out = f"{name}_{k}"
        k += 1
    taken.add(out)
    return out


def _names(graph: GraphProto) -> set[str]:
    return (
        {vi.name for vi in graph.input}
        | {t.name for t in graph.initializer}
        | {o for n in walk(graph) for o in n.output}
    )


def _inner_nodes(node: NodeProto) -> list[NodeProto]:
    return [n for g in subgraphs(node) for n in walk(g)]


def _free_names_of_graph(graph: GraphProto) -> set[str]:
    """The names a graph reads that it does not define (outer-scope values)."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    free: set[str] = set()
    for node in graph.node:
        free.update(n for n in _free_names(node) if n not in defined)
        defined.update(node.output)
    free.update(o.name for o in graph.output if o.name not in defined)
    return free


def _free_names(node: NodeProto) -> list[str]:
    """A node's operands and the outer values its subgraphs read, in first-use order."""
    names = [i for i in node.input if i]
    for g in subgraphs(node):
        names.extend(sorted(_free_names_of_graph(g)))
    return list(dict.fromkeys(names))


def _value_types(
    model: ModelProto, *, data_prop: bool = True, nested: bool = True
) -> dict[str, TypeProto]:
    """Every value's type ONNX shape inference finds at the model's own opset (the
    converter's adapters need the ranks and shapes of what they rewrite); without
    ``data_prop``, what the converter's own inference finds. ``nested``: whether the
    model has subgraphs (False when the caller knows it has none)."""
    skeleton = typed_skeleton(model)
    try:
        inferred = onnx.shape_inference.infer_shapes(
            skeleton, strict_mode=False, data_prop=data_prop
        )
    except Exception:  # a model shape inference rejects: the declared types only
        inferred = skeleton
    types: dict[str, TypeProto] = {}
    for g in _graphs(inferred.graph) if nested else [inferred.graph]:
        for vi in [*g.input, *g.value_info, *g.output]:
            if vi.type.WhichOneof("value") is not None:
                types.setdefault(vi.name, vi.type)
        for t in g.initializer:
            tp = TypeProto()
            tp.tensor_type.elem_type = t.data_type
            for d in t.dims:
                tp.tensor_type.shape.dim.add().dim_value = d
            types.setdefault(t.name, tp)
    return types
