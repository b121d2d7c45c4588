"""Ops without a converter that ONNX defines as a function get their function body.

Many ONNX ops (new ones especially: CausalConvWithState, the attention variants, ...)
carry a body in their schema, written with other ONNX ops -- either fixed, or built
for the node's attributes and input types (a context-dependent function). onnxruntime
runs such an op by inlining that body when it has no kernel; so does the importer. The
body's nodes keep the opset the body is written against (``Expansion.node_opsets``), so
each is converted by the definition it means; bodies with subgraphs are not expanded.
Expansion repeats, so a body op that is itself a function expands too.

A model's own (local) functions are inlined by onnx's inliner before that;
``inlinable_local_functions`` first lets it inline those written at another opset than
the model's where that is exact.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any

import onnx
from onnx import AttributeProto, FunctionProto, NodeProto, TypeProto

from rlx_compile.frontends.onnx.context import (
    DEFAULT_DOMAINS,
    NodeFields,
    items,
    op_key,
    opset_versions,
    typed_skeleton,
)
from rlx_compile.frontends.onnx.upgrade import walk

_MAX_DEPTH = 8


def function_body(
    node: NodeProto, opset: int, input_types: list[TypeProto] | None
) -> FunctionProto | None:
    """The body ONNX defines for ``node`` at ``opset`` of its domain (the newest function
    version not newer than that), or None when there is none or it cannot be built
    (``input_types``, one per node input, are needed for context-dependent bodies)."""
    domain = "" if node.domain in DEFAULT_DOMAINS else node.domain
    try:
        # Any: onnx's stub of OpSchema lacks the function-body accessors used below
        schema: Any = onnx.defs.get_schema(node.op_type, opset, domain)
    except onnx.defs.SchemaError:
        return None
    fn = FunctionProto()
    versions = [v for v in schema.function_opset_versions if v <= opset]
    if versions:
        fn.ParseFromString(schema.get_function_with_opset_version(max(versions)))
        return _with_schema_defaults(fn, schema)
    versions = [v for v in schema.context_dependent_function_opset_versions if v <= opset]
    if not versions or input_types is None:
        return None
    try:
        text = schema.get_context_dependent_function_with_opset_version(
            max(versions), node.SerializeToString(), [t.SerializeToString() for t in input_types]
        )
    except Exception:  # the builder rejects this node's attributes or types
        return None
    fn.ParseFromString(text)
    return _with_schema_defaults(fn, schema)


def _with_schema_defaults(fn: FunctionProto, schema: onnx.defs.OpSchema) -> FunctionProto:
    """Attribute defaults the schema declares but the body does not (a body refers to
    the op's attributes, and an omitted one means its schema default)."""
    declared = {a.name for a in fn.attribute_proto}
    for name, attr in sorted(schema.attributes.items()):
        default = attr.default_value
        if name not in declared and default.type != AttributeProto.UNDEFINED:
            copy = AttributeProto()
            copy.CopyFrom(default)
            copy.name = name
            fn.attribute_proto.append(copy)
    return fn


def _inline(node: NodeProto, fn: FunctionProto, prefix: str) -> list[NodeProto] | None:
    """The body's nodes wired to the node's inputs and outputs, internal values renamed
    under ``prefix``, attribute references resolved (the node's value, else the
    function's default, else the body op's own default)."""
    names = {
        formal: node.input[i] if i < len(node.input) else "" for i, formal in enumerate(fn.input)
    }
    for i, formal in enumerate(fn.output):
        if i < len(node.output) and node.output[i]:
            names[formal] = node.output[i]
    given = {a.name: a for a in node.attribute}
    defaults = {a.name: a for a in fn.attribute_proto}

    def rename(name: str) -> str:
        return names.get(name, prefix + name if name else "")

    out: list[NodeProto] = []
    for k, inner in enumerate(fn.node):
        new = NodeProto()
        new.CopyFrom(inner)
        new.ClearField("input")
        new.ClearField("output")
        new.ClearField("attribute")
        new.name = f"{prefix}{inner.name or f'{inner.op_type}_{k}'}"
        new.input.extend(rename(n) for n in inner.input)
        new.output.extend(rename(n) for n in inner.output)
        for attr in inner.attribute:
            if attr.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
                return None
            if attr.ref_attr_name:
                source = given.get(attr.ref_attr_name) or defaults.get(attr.ref_attr_name)
                if source is None:
                    continue
                resolved = AttributeProto()
                resolved.CopyFrom(source)
                resolved.name = attr.name
                new.attribute.append(resolved)
            else:
                new.attribute.append(attr)
        out.append(new)
    return out


def _value_types(model: onnx.ModelProto) -> dict[str, TypeProto]:
    try:
        inferred = onnx.shape_inference.infer_shapes(
            typed_skeleton(model), strict_mode=False, data_prop=True
        )
    except Exception:
        inferred = model
    g = inferred.graph
    types = {vi.name: vi.type for vi in [*g.input, *g.value_info, *g.output]}
    for t in g.initializer:
        tp = TypeProto()
        tp.tensor_type.elem_type = t.data_type
        for d in t.dims:
            tp.tensor_type.shape.dim.add().dim_value = d
        types[t.name] = tp
    return types


@dataclass(frozen=True)
class Expansion:
    model: onnx.ModelProto
    node_opsets: dict[str, int] = field(default_factory=dict)
    """Default-domain opset of each expanded node (by node name) whose body is written
    against another opset than the model's."""


def expand_functions(
    model: onnx.ModelProto,
    converters: Container[str],
    read: Sequence[NodeFields] | None = None,
) -> Expansion:
    """``model`` with every expandable node whose op type has no converter replaced by its
    function body (the model itself when there is none). ``read``: the fields of the
    graph's nodes, when the caller has read them (most models have no node to expand,
    and the look for one reads only these)."""
    opsets = opset_versions(model.opset_import)
    if "" not in opsets:
        return Expansion(model)

    def expandable(domain: str, op_type: str) -> bool:
        if op_key(domain, op_type) in converters:
            return False
        return domain in DEFAULT_DOMAINS or domain in opsets

    def candidate(n: NodeProto) -> bool:
        return expandable(n.domain, n.op_type)

    current = model
    node_opsets: dict[str, int] = {}
    for _ in range(_MAX_DEPTH):
        if current is model and read is not None:
            if not any(expandable(f.domain, f.op_type) for f in read):
                break
        elif not any(candidate(n) for n in items(current.graph.node)):
            break
        types = _value_types(current)
        nodes: list[NodeProto] = []
        changed = False
        for index, node in enumerate(current.graph.node):
            body = None
            if candidate(node):
                known = all(i in types for i in node.input if i)
                input_types = (
                    [types[i] if i else TypeProto() for i in node.input] if known else None
                )
                # A body inside a body is built at the opset its caller is written in.
                outer = node_opsets.get(node.name, opsets[""])
                domain_opset = outer if node.domain in DEFAULT_DOMAINS else opsets[node.domain]
                fn = function_body(node, domain_opset, input_types)
                if fn is not None:
                    body = _inline(node, fn, f"{node.name or f'{node.op_type}_{index}'}/")
            if body is None:
                nodes.append(node)
                continue
            body_opset = opset_versions(fn.opset_import).get("")  # type: ignore[union-attr]
            for inner in body:
                if body_opset is not None and body_opset != opsets[""]:
                    node_opsets[inner.name] = body_opset
            nodes.extend(body)
            changed = True
        if not changed:
            break
        if current is model:  # one private copy; later rounds rewrite it in place
            current = onnx.ModelProto()
            current.CopyFrom(model)
        del current.graph.node[:]
        current.graph.node.extend(nodes)
    return Expansion(current, node_opsets)


@dataclass(frozen=True)
class LocalFunctions:
    model: onnx.ModelProto
    left: dict[str, str] = field(default_factory=dict)
    """Why a local function is not inlined, by its op key (``op_key``)."""


def inlinable_local_functions(model: onnx.ModelProto) -> LocalFunctions:
    """``model`` with each local function's opset imports set to the model's where no op
    it uses means another thing at the model's version: ONNX's inliner leaves a function
    importing another version of a domain than the model uncalled (skl2onnx writes its
    local functions at the converter's opset, the model at another). A function one of
    whose ops differs keeps its imports, and ``left`` says which ops."""
    model_opsets = opset_versions(model.opset_import)
    left: dict[str, str] = {}
    aligned: list[int] = []  # the functions whose imports are set to the model's
    for index, fn in enumerate(model.functions):
        nodes = list(walk(fn))
        differ: set[str] = set()
        mismatched = [
            i for i in fn.opset_import if model_opsets.get(i.domain, i.version) != i.version
        ]
        for imp in mismatched:
            default = imp.domain in DEFAULT_DOMAINS
            want = model_opsets[imp.domain]
            for node in nodes:
                ours = node.domain in DEFAULT_DOMAINS if default else node.domain == imp.domain
                if ours and not _same_definition(node.op_type, imp.domain, imp.version, want):
                    differ.add(node.op_type)
        if differ:
            versions = ", ".join(
                f"{imp.domain or 'ai.onnx'} {imp.version} (the model: {model_opsets[imp.domain]})"
                for imp in mismatched
            )
            left[op_key(fn.domain, fn.name)] = (
                f"a local function written at opset {versions} whose ops "
                f"{', '.join(sorted(differ))} differ between them, so it is not inlined: "
                "export the model with one target opset"
            )
        elif mismatched:
            aligned.append(index)
    if not aligned:
        return LocalFunctions(model, left)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for index in aligned:
        for imp in out.functions[index].opset_import:
            imp.version = model_opsets.get(imp.domain, imp.version)
    return LocalFunctions(out, left)


def _same_definition(op_type: str, domain: str, version: int, other: int) -> bool:
    """Whether ``op_type`` of ``domain`` has one schema at opsets ``version`` and ``other``
    (an op unknown to onnx at either: no)."""
    domain = "" if domain in DEFAULT_DOMAINS else domain
    try:
        a = onnx.defs.get_schema(op_type, version, domain).since_version
        b = onnx.defs.get_schema(op_type, other, domain).since_version
    except onnx.defs.SchemaError:
        return False
    return bool(a == b)
