"""Helpers for the interpreter tests: build MIR graphs programmatically and run them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.interpreter import run
from rlx_compile.ir import set_output_names, sync_function_type

Body = Callable[..., Sequence[SSAValue | Operation] | SSAValue | Operation]


def ttype(arr: np.ndarray) -> TensorType:
    return TensorType(arr.shape, DType.from_numpy(arr.dtype))


def build(
    inputs: Mapping[str, TensorType],
    body: Body,
    *,
    params: Mapping[str, TensorType] | None = None,
    names: Sequence[str] | None = None,
    graph_name: str = "g",
) -> ModuleOp:
    """A module with one graph: leaves for ``inputs`` then ``params`` (in that order),
    ``body(*leaf_values)`` appended, returning what ``body`` returns."""
    block = Block()
    values: list[SSAValue] = []
    leaves: list[mir.InputOp | mir.ParamOp] = [mir.InputOp(n, t) for n, t in inputs.items()]
    leaves += [mir.ParamOp(n, t) for n, t in (params or {}).items()]
    for leaf in leaves:
        block.add_op(leaf)
        values.append(leaf.result)
    out = body(*values)
    outs = list(out) if isinstance(out, Sequence) else [out]
    results = [SSAValue.get(o) for o in outs]
    # Ops built by ``body`` are not in the block yet: add every op reachable from the
    # outputs, operands first, so the block is in topological order.
    _add_ops_in_order(block, results)
    block.add_op(func.ReturnOp(*results))
    f = func.FuncOp(graph_name, ([], [r.type for r in results]), Region(block))
    sync_function_type(f)
    set_output_names(f, list(names) if names else [f"out{i}" for i in range(len(results))])
    module = ModuleOp([f])
    module.verify()
    return module


def _add_ops_in_order(block: Block, values: Sequence[SSAValue]) -> None:
    placed = {id(op) for op in block.ops}
    order: list[Operation] = []

    def visit(op: Operation) -> None:
        if id(op) in placed:
            return
        placed.add(id(op))
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation):
                visit(owner)
        order.append(op)

    for v in values:
        if isinstance(v.owner, Operation):
            visit(v.owner)
    for op in order:
        block.add_op(op)


def run_op(body: Body, *arrays: np.ndarray) -> list[np.ndarray]:
    """Run a one-op graph: ``body`` gets one input per array (named a0, a1, ...)."""
    inputs = {f"a{i}": ttype(a) for i, a in enumerate(arrays)}
    module = build(inputs, body)
    out = run(module, {f"a{i}": a for i, a in enumerate(arrays)})
    return list(out.values())


def run1(body: Body, *arrays: np.ndarray) -> np.ndarray:
    (out,) = run_op(body, *arrays)
    return out


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype, shape and bytes (NaN payloads and signed zeros included)."""
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
    )
