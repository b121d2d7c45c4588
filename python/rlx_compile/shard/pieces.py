"""Turning a shard option into runnable pieces, and running them the way a worker is fed.

Piece ``i`` of an option is a one-op module: a ``mir.input`` leaf ``arg{k}`` per operand
of the op (typed with the slice piece ``i`` receives, or the whole operand when shared)
and a copy of the op on them, its result typed with the piece's output range. The text
form is what an executor ships to a worker, together with that piece's slices only; the
worker parses it and runs it with the reference executor, whose checks reject a slice of
the wrong shape. ``run_option`` does exactly that in-process and concatenates, which is
how the equivalence tests execute every option.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter import evaluate_op, prepare, run
from rlx_compile.ir import (
    graph_block,
    output_names,
    parse_module,
    print_module,
    set_output_names,
    sync_function_type,
)
from rlx_compile.shard.options import ShardError, ShardOption, op_label

PIECE_OUTPUT = "piece"


def check_option_for(op: Operation, option: ShardOption) -> None:
    """``option`` must describe ``op``: same kind, operand count, output shape and shapes
    of the operands it slices."""
    block = op.parent_block()
    index = block.get_operation_index(op) if block is not None else option.index
    out = op.results[0].type if len(op.results) == 1 else None
    sliced_shapes_match = all(
        s.index < len(op.operands) and cast(TensorType, op.operands[s.index].type).shape == s.shape
        for s in option.sliced
    )
    if (
        op.name != option.op
        or not isinstance(out, TensorType)
        or out.shape != option.out_shape
        or len(op.operands) != len(option.sliced) + len(option.shared)
        or not sliced_shapes_match
    ):
        raise ShardError(
            f"the option for {option.label} ({option.op}) does not describe "
            f"{op_label(op, index)} ({op.name})"
        )


def _piece_type(t: TensorType, axis: int, size: int) -> TensorType:
    shape = list(t.shape)
    shape[axis] = size
    return t.with_shape(shape)


def _one_op_module(
    op: Operation,
    operand_types: Sequence[TensorType],
    out: TensorType,
    props: dict[str, Attribute],
    name: str,
) -> ModuleOp:
    """``op`` alone on ``mir.input`` leaves ``arg{k}`` of the given types."""
    block = Block()
    leaves = []
    for k, t in enumerate(operand_types):
        leaf = mir.InputOp(f"arg{k}", t)
        leaf.results[0].name_hint = f"arg{k}"
        block.add_op(leaf)
        leaves.append(leaf.results[0])
    copy = type(op).create(operands=leaves, result_types=[out], properties=props)
    copy.results[0].name_hint = PIECE_OUTPUT
    block.add_op(copy)
    block.add_op(func.ReturnOp(copy.results[0]))
    graph = func.FuncOp(name, ([], [out]), Region(block))
    sync_function_type(graph)
    set_output_names(graph, [PIECE_OUTPUT])
    module = ModuleOp([graph])
    try:
        module.verify()
    except VerifyException as err:
        raise ShardError(f"{name} ({op.name}) does not verify: {err}") from None
    return module


def op_module(op: Operation) -> ModuleOp:
    """The whole op as a one-op module (what calibration times)."""
    out = op.results[0].type if len(op.results) == 1 else None
    if not isinstance(out, TensorType):
        raise ShardError(f"{op.name} must have one tensor result")
    types = [cast(TensorType, v.type) for v in op.operands]
    return _one_op_module(op, types, out, dict(op.properties), "whole")


def piece_module(op: Operation, option: ShardOption, i: int) -> ModuleOp:
    """The one-op module that computes piece ``i`` of ``option`` (see the module doc)."""
    check_option_for(op, option)
    if not 0 <= i < option.n:
        raise ShardError(f"{option.label}: piece {i} of {option.n} does not exist")
    sliced = {s.index: s for s in option.sliced}
    types = []
    for k, value in enumerate(op.operands):
        t = cast(TensorType, value.type)
        if k in sliced:
            t = _piece_type(t, sliced[k].axis, sliced[k].ranges[i][1])
        types.append(t)
    props: dict[str, Attribute] = dict(op.properties)
    if option.piece_groups:
        props["groups"] = IntegerAttr(option.piece_groups[i], i64)
    out = _piece_type(cast(TensorType, op.results[0].type), option.axis, option.ranges[i][1])
    return _one_op_module(op, types, out, props, f"piece{i}")


def piece_texts(op: Operation, option: ShardOption) -> list[str]:
    """The text of every piece module (what is shipped to workers)."""
    return [print_module(piece_module(op, option, i)) for i in range(option.n)]


def piece_args(option: ShardOption, args: Sequence[np.ndarray], i: int) -> list[np.ndarray]:
    """The operands piece ``i`` receives: its slice of each sliced operand (a contiguous
    copy, like bytes received over a link) and the shared operands whole."""
    if len(args) != len(option.sliced) + len(option.shared):
        raise ShardError(
            f"{option.label}: got {len(args)} operands, the op takes "
            f"{len(option.sliced) + len(option.shared)}"
        )
    out = [np.asarray(a) for a in args]
    for s in option.sliced:
        start, size = s.ranges[i]
        arr = out[s.index]
        if arr.ndim <= s.axis or arr.shape[s.axis] != s.shape[s.axis]:
            raise ShardError(
                f"{option.label}: operand {s.name} has shape {list(arr.shape)}, "
                f"expected {list(s.shape)}"
            )
        index = [slice(None)] * arr.ndim
        index[s.axis] = slice(start, start + size)
        out[s.index] = np.ascontiguousarray(arr[tuple(index)])
    return out


def timed_run(text: str, args: Sequence[np.ndarray]) -> tuple[np.ndarray, float]:
    """Parse a piece (or whole-op) module and run it on its operands with the reference
    executor; also return the seconds the run took (parsing excluded)."""
    module = parse_module(text, "<piece>")
    inputs = {f"arg{k}": a for k, a in enumerate(args)}
    start = time.perf_counter()
    value = run(module, inputs)[PIECE_OUTPUT]
    return value, time.perf_counter() - start


def run_piece_text(text: str, args: Sequence[np.ndarray]) -> np.ndarray:
    return timed_run(text, args)[0]


def concat_pieces(option: ShardOption, pieces: Sequence[np.ndarray]) -> np.ndarray:
    """Concatenate the pieces along the cut axis, checking every piece's shape first: a
    missing or misshapen piece is an error, never a partial result."""
    if len(pieces) != option.n:
        raise ShardError(f"{option.label}: {len(pieces)} pieces returned, expected {option.n}")
    for i, p in enumerate(pieces):
        want = list(option.out_shape)
        want[option.axis] = option.ranges[i][1]
        if list(np.shape(p)) != want:
            raise ShardError(
                f"{option.label}: piece {i} has shape {list(np.shape(p))}, expected {want}"
            )
    return np.concatenate(pieces, axis=option.axis)


Replace = Callable[[int, Operation, list[np.ndarray]], list[np.ndarray] | None]
"""``f(index, op, operands)``: the op's results, or None to let the executor run it."""


@dataclass(frozen=True)
class GraphRun:
    graph: Operation
    outputs: dict[str, np.ndarray]
    values: dict[SSAValue, np.ndarray]  # every op result (and leaf) of the graph


def execute_with(
    module: Operation,
    inputs: Mapping[str, ArrayLike],
    params: Mapping[str, ArrayLike] | None = None,
    replace: Replace | None = None,
) -> GraphRun:
    """Run the main graph op by op with the reference executor, letting ``replace``
    compute chosen ops some other way (on workers); keeps every intermediate value."""
    graph, env = prepare(module, inputs, params)
    *body, terminator = list(graph_block(graph).ops)
    values: dict[SSAValue, np.ndarray] = {}
    env.scope = values  # what control-flow regions read of the graph
    for index, op in enumerate(body):
        args = [values[v] for v in op.operands]
        results = replace(index, op, args) if replace is not None else None
        if results is None:
            results = evaluate_op(op, args, env)
        values.update(zip(op.results, results, strict=True))
    outputs = {
        name: np.array(values[v], copy=True, order="C")
        for name, v in zip(output_names(graph), terminator.operands, strict=True)
    }
    return GraphRun(graph, outputs, values)


def run_option(op: Operation, option: ShardOption, args: Sequence[np.ndarray]) -> np.ndarray:
    """Execute every piece of ``option`` on only its slice (from its shipped text) and
    recombine: the in-process model of a sharded run."""
    texts = piece_texts(op, option)
    return concat_pieces(
        option, [run_piece_text(t, piece_args(option, args, i)) for i, t in enumerate(texts)]
    )


__all__ = [
    "PIECE_OUTPUT",
    "GraphRun",
    "check_option_for",
    "concat_pieces",
    "execute_with",
    "op_module",
    "piece_args",
    "piece_module",
    "piece_texts",
    "run_option",
    "run_piece_text",
    "timed_run",
]
