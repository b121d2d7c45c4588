"""Graphs moved into control-flow regions, for tests of the passes that walk graphs.

``wrap_in_if(module)`` puts the computation of the main graph inside a ``mir.if`` on a new
bool input ``cond`` (both branches compute it, each its own copy); ``wrap_in_loop(module,
trips)`` runs it as the body of a ``mir.loop`` of ``trips`` iterations whose scan results
are the outputs of every iteration, and returns the last one. Either way the graph leaves
(inputs and params) stay in the graph, read by the regions from outside, constants move
into the regions, and the outputs keep their names and types: the wrapped graph computes
what the original does, so a pass applied to it must not change any output.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.ir import (
    graph_block,
    graph_outputs,
    main_graph,
    ops_without_terminator,
    output_names,
    set_output_names,
)

COND_INPUT = "cond"


def _split(graph: Operation) -> tuple[list[Operation], list[Operation]]:
    """The graph's leaves (inputs, params) and the rest of its ops, in order."""
    ops = ops_without_terminator(graph_block(graph))
    leaves: list[Operation] = [op for op in ops if isinstance(op, mir.InputOp | mir.ParamOp)]
    return leaves, [op for op in ops if not isinstance(op, mir.InputOp | mir.ParamOp)]


def _rebuild(module: ModuleOp, body: Block, outputs: list[SSAValue], names: list[str]) -> ModuleOp:
    body.add_op(func.ReturnOp(*outputs))
    graph = func.FuncOp("main", ([], [v.type for v in outputs]), Region(body))
    set_output_names(graph, names)
    wrapped = ModuleOp([graph])
    wrapped.verify()
    return wrapped


def _leaves_copied(graph: Operation) -> tuple[Block, dict[SSAValue, SSAValue], list[Operation]]:
    """A new graph block holding copies of the graph's leaves, the mapping to them, and
    the graph's other ops."""
    leaves, ops = _split(graph)
    body = Block()
    mapping: dict[SSAValue, SSAValue] = {}
    for leaf in leaves:
        new = leaf.clone()
        body.add_op(new)
        mapping[leaf.results[0]] = new.results[0]
    return body, mapping, ops


def wrap_in_if(module: ModuleOp) -> ModuleOp:
    """The main graph's computation inside a ``mir.if`` on the bool input ``cond``."""
    graph = main_graph(module)
    outputs, names = graph_outputs(graph), output_names(graph)
    body, mapping, ops = _leaves_copied(graph)
    cond = mir.InputOp(COND_INPUT, TensorType((), DType.BOOL))
    body.add_op(cond)
    regions = []
    for _ in range(2):
        block = Block()
        local = dict(mapping)
        for op in ops:
            block.add_op(op.clone(value_mapper=local))
        block.add_op(mir.YieldOp([local.get(v, v) for v in outputs]))
        regions.append(Region(block))
    types = [cast(TensorType, v.type) for v in outputs]
    if_op = mir.IfOp(cond.result, regions[0], regions[1], types)
    body.add_op(if_op)
    return _rebuild(module, body, list(if_op.results), names)


def wrap_in_loop(module: ModuleOp, trips: int = 2) -> ModuleOp:
    """The main graph's computation as the body of a ``mir.loop`` of ``trips`` (>= 1)
    iterations; the outputs are the scan results' last rows."""
    graph = main_graph(module)
    outputs, names = graph_outputs(graph), output_names(graph)
    body, mapping, ops = _leaves_copied(graph)
    count = mir.ConstantOp(np.array(trips, np.int64), mir.I64_SCALAR)
    body.add_op(count)
    loop_body = Block(arg_types=[mir.I64_SCALAR, mir.BOOL_SCALAR])
    local = dict(mapping)
    for op in ops:
        loop_body.add_op(op.clone(value_mapper=local))
    elements = [local.get(v, v) for v in outputs]
    loop_body.add_op(mir.YieldOp([loop_body.args[1], *elements]))
    types = [cast(TensorType, v.type) for v in elements]
    scans = [TensorType((trips, *t.shape), t.dtype) for t in types]
    loop = mir.LoopOp(count.result, None, [], Region(loop_body), scans)
    body.add_op(loop)
    last: list[SSAValue] = []
    for result, t in zip(loop.results, types, strict=True):
        row = mir.NarrowOp(result, 0, trips - 1, 1)
        flat = mir.ReshapeOp(row.result, t.shape)
        body.add_op(row)
        body.add_op(flat)
        last.append(flat.result)
    return _rebuild(module, body, last, names)
