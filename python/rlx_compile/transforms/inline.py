"""``inline{keep-callees=false}``: splice called graphs and ``hir.region`` bodies into
their users.

Every ``func.call`` of a ``func.func`` with a body is replaced by a copy of that body,
its block arguments bound to the call's operands (values get fresh SSA identities; the
printer renames clashing names). Callees are inlined before their callers, so one run
leaves no call; a recursive call chain is an error. ``hir.region`` ops are spliced the
way ``lower-hir-to-mir`` does it (the same pattern).

Functions that were called and are no longer are removed unless ``keep-callees`` is set
or they are marked ``rlx.main``; graphs nobody called stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, cast

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlx_compile.diagnostics import note_block_changed
from rlx_compile.dialects import hir
from rlx_compile.inlining import InlineRegion, inline_call
from rlx_compile.ir import func_graphs
from rlx_compile.rewriting import apply_greedily


class _Contents:
    """What a graph holds to inline, from one walk: its calls (the same before and after
    its callees are inlined: they are inlined first, and a copy of a callee's body holds
    no call) and whether it holds a ``hir.region``."""

    def __init__(self, graph: func.FuncOp):
        self.calls: list[func.CallOp] = []
        self.regions = False
        for region in graph.regions:
            for block in region.blocks:
                self.scan(block)

    def scan(self, block: Block) -> None:
        """The ops of ``block`` in ``walk`` order (an op, then its regions)."""
        op = block.first_op
        while op is not None:
            kind = _KINDS.get(type(op))
            if kind is None:
                kind = _KINDS[type(op)] = _kind(op)
            if kind is _CALL:
                self.calls.append(cast(func.CallOp, op))
            elif kind is _REGION:
                self.regions = True
            for region in op.regions:
                for nested in region.blocks:
                    self.scan(nested)
            op = op.next_op


_CALL, _REGION, _OTHER = "call", "region", "other"
_KINDS: dict[type[Operation], str] = {}
"""What an op class is to ``_Contents`` (``isinstance`` once per class: op classes are ABCs,
whose checks cost)."""


def _kind(op: Operation) -> str:
    if isinstance(op, func.CallOp):
        return _CALL
    return _REGION if isinstance(op, hir.RegionOp) else _OTHER


def callees_first(
    graphs: list[func.FuncOp], contents: dict[func.FuncOp, _Contents]
) -> list[func.FuncOp]:
    """``graphs`` ordered so that every callee comes before its callers (module order
    otherwise); raises on a call without a body to inline and on recursion."""
    by_name = {g.sym_name.data: g for g in graphs}
    order: list[func.FuncOp] = []
    state: dict[str, str] = {}  # name -> "open" while on the DFS path, "done" after

    def visit(graph: func.FuncOp, path: list[str]) -> None:
        name = graph.sym_name.data
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            cycle = [*path[path.index(name) :], name]
            raise PassFailedException("recursive call: " + " -> ".join(f"@{n}" for n in cycle))
        state[name] = "open"
        for call in contents[graph].calls:
            target = call.callee.string_value()
            if target not in by_name:
                raise PassFailedException(f"@{name} calls @{target}, which has no body to inline")
            visit(by_name[target], [*path, name])
        state[name] = "done"
        order.append(graph)

    for g in graphs:
        visit(g, [])
    return order


@dataclass(frozen=True)
class InlinePass(ModulePass):
    """Inline func.call of MIR functions and hir.region bodies into their users."""

    name = "inline"
    REPORTS_CHANGES: ClassVar[bool] = True
    ACTS_ON: ClassVar[tuple[type[Operation], ...]] = (func.CallOp, hir.RegionOp)

    keep_callees: bool = False
    """Keep functions whose every call was inlined (by default they are removed)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        graphs = func_graphs(op)
        by_name = {g.sym_name.data: g for g in graphs}
        contents = {g: _Contents(g) for g in graphs}
        called: list[str] = []
        for graph in callees_first(graphs, contents):
            for call in contents[graph].calls:
                target = call.callee.string_value()
                if target not in called:
                    called.append(target)
                inline_call(call, by_name[target])
        inlined = [
            # A region may also come with an inlined callee's body.
            apply_greedily(graph.body, [InlineRegion()])
            for graph in graphs
            if contents[graph].regions or contents[graph].calls
        ]
        if called or any(inlined):
            note_block_changed(op.body.block)
        if self.keep_callees:
            return
        for name in called:
            graph = by_name[name]
            if "rlx.main" not in graph.attributes:
                graph.detach()
                graph.erase()
