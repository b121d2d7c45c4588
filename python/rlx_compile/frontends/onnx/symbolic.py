"""Shape arithmetic over symbolic dims, evaluated at import time.

Exporters compute reshape targets from ``Shape`` of tensors with dynamic dims
(Shape -> Gather -> Unsqueeze -> Concat -> Reshape). When those dims are symbolic the
values are not numbers, but they are still known: a shape value here is an object array
holding ints and symbol names. The ops below evaluate on such arrays; a shape value may
then feed a shape operand (a Reshape target, an Expand shape), never tensor data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rlx_compile.builder import type_of
from rlx_compile.frontends.onnx.context import (
    NodeContext,
    NotStatic,
    Unsupported,
    axis_of,
    dtype_of,
)

if TYPE_CHECKING:
    from rlx_compile.frontends.onnx.importer import Importer

SHAPE_OPS = ("Shape", "Gather", "Slice", "Concat", "Unsqueeze", "Squeeze", "Cast", "Identity")


def symbolic_shape_node(imp: Importer, node: object) -> bool:
    """Whether a node is shape arithmetic on symbolic dims: a Shape of a tensor with
    symbolic dims, or a shape op reading a symbolic shape value whose other operands
    are known."""
    op_type = node.op_type  # type: ignore[attr-defined]
    inputs = [i for i in node.input if i]  # type: ignore[attr-defined]
    if op_type not in SHAPE_OPS or not inputs:
        return False
    if op_type == "Shape":
        v = imp.values.get(inputs[0])
        return v is not None and not type_of(v).is_static
    if not any(i in imp.shape_values for i in inputs):
        return False
    for i in inputs:
        try:
            imp.static(i, "a shape operand")
        except NotStatic:
            return False
    return True


def evaluate_shape_node(ctx: NodeContext) -> np.ndarray:
    op = ctx.op_type
    if op == "Shape":
        shape = type_of(ctx.x(0)).shape
        rank = len(shape)
        start, end = ctx.attr("start", 0), ctx.attr("end", rank)
        start = min(max(start + rank if start < 0 else start, 0), rank)
        end = min(max(end + rank if end < 0 else end, 0), rank)
        return np.array(list(shape[start:end]), dtype=object)
    args = [ctx.const(i) for i in range(ctx.num_inputs) if ctx.has(i)]
    data = np.asarray(args[0], dtype=object)
    if op == "Gather":
        axis = axis_of(ctx.attr("axis", 0), data.ndim)
        return np.take(data, np.asarray(args[1], dtype=np.int64), axis=axis)
    if op == "Concat":
        axis = axis_of(ctx.attr("axis"), data.ndim)
        return np.concatenate([np.asarray(a, dtype=object) for a in args], axis=axis)
    if op == "Unsqueeze":
        out = data
        rank = data.ndim + len(args[1].reshape(-1))
        for a in sorted(axis_of(int(v), rank) for v in args[1].reshape(-1)):
            out = np.expand_dims(out, a)
        return out
    if op == "Squeeze":
        if len(args) > 1:
            axes = tuple(axis_of(int(v), data.ndim) for v in args[1].reshape(-1))
            return np.squeeze(data, axis=axes)
        return np.squeeze(data)
    if op == "Slice":
        if data.ndim != 1:
            raise Unsupported("slicing a symbolic shape of rank > 1")
        start, end = int(args[1].reshape(-1)[0]), int(args[2].reshape(-1)[0])
        step = int(args[4].reshape(-1)[0]) if len(args) > 4 else 1
        return data[slice(start, end, step)]
    if op == "Cast":
        ctx.attr("saturate")
        if not dtype_of(ctx.attr("to")).is_int:
            raise Unsupported("casting symbolic dims to a non-integer type")
        return data
    return data  # Identity
