"""ONNX values that are not tensors, resolved at import time.

A sequence whose length the importer knows is a list of MIR values (one a loop appends
to, of a length the run decides, is its items stacked); an optional is a
MIR value or nothing; ZipMap's sequence of maps is its probability tensor and the keys;
a string tensor drawn from a vocabulary known at import (class labels...) is the tensor
of its positions in that vocabulary.
Only tensors reach MIR. A graph output made of such a value becomes one MIR output per
tensor it holds, and the module records how to rebuild the ONNX value from them (the
``rlx.onnx_outputs`` module attribute, JSON), which ``rebuild_outputs`` does for the
backend: a list of arrays for a sequence, None or an array for an optional, a list of
dicts for ZipMap, an array of str objects for strings, as onnxruntime returns them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import SSAValue

OUTPUTS_ATTR = "rlx.onnx_outputs"


@dataclass(frozen=True)
class SequenceValue:
    """An ONNX sequence of tensors of import-time length."""

    items: tuple[Any, ...]
    """MIR values (or nested structured values)."""
    elem_type: int = 0
    """ONNX element type of the items, for an empty sequence (0: unknown)."""

    kind = "a sequence"


@dataclass(frozen=True)
class StackedSequence:
    """An ONNX sequence a loop builds, one item appended per iteration (torch's
    ``outs.append(h)`` in a scripted loop): the items stacked along a new axis 0, whose
    length is the number of iterations (known at run time only, or symbolic)."""

    stacked: SSAValue
    elem_type: int = 0

    kind = "a sequence built by a loop"


@dataclass(frozen=True)
class OptionalValue:
    """An ONNX optional: a value, or None when empty."""

    item: Any

    kind = "an optional"


@dataclass(frozen=True)
class ZipMapValue:
    """ZipMap's sequence of maps: one {key: probability} per row of ``probs``."""

    probs: SSAValue
    keys: tuple[int, ...] | tuple[str, ...]

    kind = "a sequence of maps"


@dataclass(frozen=True)
class StringsValue:
    """A string tensor whose strings all come from a vocabulary known at import (class
    labels, a mapping's values): the int64 tensor of their positions in ``vocab``."""

    indices: SSAValue
    vocab: tuple[str, ...]

    kind = "a string tensor"


Structured = SequenceValue | StackedSequence | OptionalValue | ZipMapValue | StringsValue
STRUCTURED = (SequenceValue, StackedSequence, OptionalValue, ZipMapValue, StringsValue)


def flatten(value: Any, name: str) -> tuple[list[tuple[SSAValue, str]], Any]:
    """The MIR outputs (value, output name) a graph output ``name`` holding ``value``
    becomes, and the JSON spec that rebuilds it from them."""
    if isinstance(value, SSAValue):
        return [(value, name)], {"tensor": name}
    if isinstance(value, SequenceValue):
        outs: list[tuple[SSAValue, str]] = []
        specs = []
        for i, item in enumerate(value.items):
            item_outs, spec = flatten(item, f"{name}[{i}]")
            outs += item_outs
            specs.append(spec)
        return outs, {"sequence": specs}
    if isinstance(value, StackedSequence):
        return [(value.stacked, name)], {"stacked": name}
    if isinstance(value, OptionalValue):
        if value.item is None:
            return [], {"optional": None}
        outs, spec = flatten(value.item, name)
        return outs, {"optional": spec}
    if isinstance(value, ZipMapValue):
        return [(value.probs, name)], {"zipmap": {"keys": list(value.keys), "probs": name}}
    if isinstance(value, StringsValue):
        return [(value.indices, name)], {"strings": {"vocab": list(value.vocab), "index": name}}
    raise TypeError(f"cannot flatten {type(value).__name__}")


def record_outputs(module: ModuleOp, specs: Sequence[Any]) -> None:
    """Record how the graph outputs are rebuilt, when one of them is not a tensor."""
    if any("tensor" not in spec for spec in specs):
        module.attributes[OUTPUTS_ATTR] = StringAttr(json.dumps(list(specs)))


def output_specs(module: ModuleOp) -> list[Any] | None:
    attr = module.attributes.get(OUTPUTS_ATTR)
    return json.loads(attr.data) if isinstance(attr, StringAttr) else None


def rebuild(spec: Any, outputs: Mapping[str, np.ndarray]) -> Any:
    """The ONNX value of one graph output from the module's outputs."""
    if "tensor" in spec:
        return outputs[spec["tensor"]]
    if "sequence" in spec:
        return [rebuild(s, outputs) for s in spec["sequence"]]
    if "stacked" in spec:
        return list(np.asarray(outputs[spec["stacked"]]))
    if "optional" in spec:
        return None if spec["optional"] is None else rebuild(spec["optional"], outputs)
    if "zipmap" in spec:
        # onnxruntime's maps are ordered by key.
        keys = spec["zipmap"]["keys"]
        order = sorted(range(len(keys)), key=lambda i: keys[i])
        probs = np.asarray(outputs[spec["zipmap"]["probs"]]).reshape(-1, len(keys))
        return [{keys[i]: float(row[i]) for i in order} for row in probs]
    if "strings" in spec:
        vocab = np.array(spec["strings"]["vocab"], dtype=object)
        return vocab[np.asarray(outputs[spec["strings"]["index"]])]
    raise ValueError(f"unknown output spec {spec!r}")


def rebuild_outputs(
    module: ModuleOp, names: Sequence[str], outputs: Mapping[str, np.ndarray]
) -> list[Any]:
    """The graph outputs ``names`` (ONNX names, in order) from a run's outputs."""
    specs = output_specs(module)
    if specs is None:
        return [outputs[n] for n in names]
    return [rebuild(s, outputs) for s in specs]


# ---------------------------------------------------------------------------------
# Graph inputs that are sequences or optionals
# ---------------------------------------------------------------------------------

Layout = tuple[Any, ...]
"""What a fed value is, by its ONNX type: ``("tensor", shape, dtype name)``,
``("sequence", (item layouts...))`` or ``("optional", layout or None)``. Hashable: the
backend keys its compiles by the layouts of such inputs."""


def is_tensor_type(type_proto: onnx.TypeProto) -> bool:
    return type_proto.HasField("tensor_type")


def layout_of(type_proto: onnx.TypeProto, value: Any, what: str) -> Layout:
    """The layout of ``value`` fed for an input of ``type_proto``."""
    if type_proto.HasField("sequence_type"):
        if not isinstance(value, list | tuple):
            raise ValueError(f"{what} is a sequence: feed a list of arrays")
        elem = type_proto.sequence_type.elem_type
        return ("sequence", tuple(layout_of(elem, v, f"{what}[{i}]") for i, v in enumerate(value)))
    if type_proto.HasField("optional_type"):
        if value is None:
            return ("optional", None)
        return ("optional", layout_of(type_proto.optional_type.elem_type, value, what))
    if type_proto.HasField("tensor_type"):
        arr = np.asarray(value)
        return ("tensor", tuple(arr.shape), arr.dtype.name)
    raise ValueError(f"{what} has a type the compiler does not take (maps are not supported)")


def flat_feeds(layout: Layout, name: str, value: Any) -> dict[str, np.ndarray]:
    """The MIR inputs a fed value of ``layout`` becomes (named as ``build_input`` names
    them)."""
    kind = layout[0]
    if kind == "tensor":
        return {name: np.asarray(value)}
    if kind == "optional":
        return {} if layout[1] is None else flat_feeds(layout[1], name, value)
    out: dict[str, np.ndarray] = {}
    for i, (item, v) in enumerate(zip(layout[1], value, strict=True)):
        out.update(flat_feeds(item, f"{name}[{i}]", v))
    return out
