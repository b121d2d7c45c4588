"""``param-hoist``: split each graph's param-only work into a "prepare" function run once.

A value is *dynamic* when it is a ``mir.input``, comes from an op that is not pure (a
call), or has a dynamic operand; params and constants are static. The *boundary* is the
static computed values (not leaves) that a dynamic op or the graph's return reads. When
there is one, the pass (RLX's ``split_param_invariant``):

- adds ``@<graph>_prepare``: the static ops the boundary needs, returning the boundary
  values named ``__rlx_prep_<i>``;
- rewrites the graph into the per-call part: each boundary value becomes a
  ``mir.input "__rlx_prep_<i>"`` and the static ops and params only they used are
  removed; the graph is marked ``rlx.main`` and ``rlx.prepare = @<graph>_prepare``.

Run the prepare function once (and again when a weight changes), then the graph per call
with its outputs as extra inputs: ``run_prepared`` does both. Graphs with block arguments
(called graphs) and graphs without a dynamic value are left alone, so a second run
changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr, UnitAttr
from xdsl.ir import Block, Operation, Region, SSAValue, Use
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, Pure

from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import is_leaf
from rlx_compile.dialects.types import TensorType
from rlx_compile.folding import erase_newly_dead, unused_ops
from rlx_compile.ir import (
    func_graphs,
    graph_inputs,
    graph_name,
    graph_params,
    main_graph,
    set_output_names,
    sync_function_type,
)

PREP_PREFIX = "__rlx_prep_"
PREPARE_ATTR = "rlx.prepare"


def _dynamic_values(block: Block) -> set[SSAValue]:
    dynamic: set[SSAValue] = set(block.args)
    for op in block.ops:
        if (
            isinstance(op, mir.InputOp)
            or not op.has_trait(Pure)
            or any(v in dynamic for v in mir.read_values(op))  # a region's captures too
        ):
            dynamic.update(op.results)
    return dynamic


def _reads_dynamically(use: Use, dynamic: set[SSAValue]) -> bool:
    """The use is by the graph's return or by an op whose results are dynamic (a use in a
    control-flow region counts as its op's)."""
    user = use.operation
    block = user.parent_block()
    while block is not None and block.parent_op() is not None:
        if isinstance(block.parent_op(), func.FuncOp):
            break
        user = cast(Operation, block.parent_op())
        block = user.parent_block()
    return user.has_trait(IsTerminator) or any(r in dynamic for r in user.results)


def boundary_values(block: Block, dynamic: set[SSAValue]) -> list[SSAValue]:
    """Static computed values read by a dynamic op or returned, in op order."""
    out: list[SSAValue] = []
    for op in block.ops:
        if is_leaf(op) or op.has_trait(IsTerminator):
            continue
        out += [
            value
            for value in op.results
            if value not in dynamic and any(_reads_dynamically(u, dynamic) for u in value.uses)
        ]
    return out


def _static_closure(block: Block, boundary: list[SSAValue]) -> list[Operation]:
    """The ops of ``block`` computing ``boundary``, in block order."""
    needed: set[Operation] = set()
    todo = [v.owner for v in boundary]
    while todo:
        op = todo.pop()
        if not isinstance(op, Operation) or op in needed:
            continue
        needed.add(op)
        todo.extend(v.owner for v in mir.read_values(op))
    return [op for op in block.ops if op in needed]


def _boundary_names(graph: func.FuncOp, count: int) -> list[str]:
    """``__rlx_prep_<i>`` names no leaf of the graph uses yet."""
    taken = {leaf.name for leaf in (*graph_inputs(graph), *graph_params(graph))}
    names: list[str] = []
    i = 0
    while len(names) < count:
        if f"{PREP_PREFIX}{i}" not in taken:
            names.append(f"{PREP_PREFIX}{i}")
        i += 1
    return names


def _unique_symbol(module: ModuleOp, base: str) -> str:
    taken = {graph_name(g) for g in func_graphs(module)}
    name, i = base, 1
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    return name


def hoist_graph(module: ModuleOp, graph: func.FuncOp) -> func.FuncOp | None:
    """Split ``graph``; returns the new prepare function, or None if nothing hoists."""
    block = graph.body.block
    if block.args:
        return None
    dynamic = _dynamic_values(block)
    boundary = boundary_values(block, dynamic) if dynamic else []
    if not boundary:
        return None
    names = _boundary_names(graph, len(boundary))

    # prepare: a copy of the static ops the boundary needs.
    mapping: dict[SSAValue, SSAValue] = {}
    body = Block()
    for op in _static_closure(block, boundary):
        body.add_op(op.clone(value_mapper=mapping))
    body.add_op(func.ReturnOp(*(mapping[v] for v in boundary)))
    prepare = func.FuncOp(
        _unique_symbol(module, f"{graph_name(graph)}_prepare"),
        ([], [v.type for v in boundary]),
        Region(body),
    )
    prepare.location = graph.location
    sync_function_type(prepare)
    set_output_names(prepare, names)

    # main: dynamic readers of a boundary value read an input instead; the static ops die
    # (static readers keep the static value: they feed other boundaries or nothing).
    before = unused_ops(block)
    for i, (value, name) in enumerate(zip(boundary, names, strict=True)):
        assert isinstance(value.type, TensorType) and isinstance(value.owner, Operation)
        leaf = mir.InputOp(name, value.type)
        leaf.result.name_hint = f"prep{i}"  # xDSL drops a "_<digits>" suffix from hints
        leaf.location = value.owner.location
        block.insert_op_before(leaf, value.owner)
        value.replace_uses_with_if(leaf.result, lambda u: _reads_dynamically(u, dynamic))
    erase_newly_dead(block, before)
    graph.attributes["rlx.main"] = UnitAttr()
    graph.attributes[PREPARE_ATTR] = SymbolRefAttr(prepare.sym_name.data)
    module.body.block.insert_op_before(prepare, graph)
    return prepare


@dataclass(frozen=True)
class ParamHoistPass(ModulePass):
    """Move param-only computations into a prepare function run once per weight set."""

    name = "param-hoist"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in func_graphs(op):
            hoist_graph(op, graph)


def run_prepared(
    module: ModuleOp, inputs: Mapping[str, Any], params: Mapping[str, Any] | None = None
) -> dict[str, np.ndarray]:
    """Run a hoisted module: its prepare function, then the main graph fed with the
    boundary values (a module without a prepare function just runs)."""
    from rlx_compile.interpreter import run

    params = dict(params or {})
    main = main_graph(module)
    ref = main.attributes.get(PREPARE_ATTR)
    if not isinstance(ref, SymbolRefAttr):
        return run(module, inputs, params)
    prepare = main_graph(module, ref.string_value())

    def own(graph: Operation) -> dict[str, Any]:
        return {p.name: params[p.name] for p in graph_params(graph) if p.name in params}

    boundary = run(prepare, {}, own(prepare))
    return run(main, {**inputs, **boundary}, own(main))
