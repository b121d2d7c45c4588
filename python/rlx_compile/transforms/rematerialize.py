"""``rematerialize``: recompute a value that data movement alone makes (views, expands,
concats, over values at hand) right before its far readers, rather than keep it live in
between, where that lowers the graph's peak of live bytes (XLA's rematerialization, for
the values CSE shares across layers: an index tensor built once and read by every layer).

Per graph, in source order (``SourceOrderLiveness``, the source-order bound's model): a
value read by several ops, made by a chain of ``ViewLike`` ops and concats and not itself
a view (the planner aliases a view: it has no bytes of its own to free), gets a copy of
that chain before each of its readers but the first; the chain stops at leaves and at
values still live there (any other value it reads lives on to the copies). The copies are
kept if the peak drops, each one only if dropping it would raise the peak again (readers
then share the copy before them). Values are taken largest first, each time on the graph
as the previous ones left it; the result depends on the graph alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from rlx_compile.diagnostics import note_changed
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.dialects.construct import block_ops
from rlx_compile.dialects.traits import ViewLike
from rlx_compile.ir import func_graphs, graph_block, graph_outputs
from rlx_compile.memory.source_order import SourceOrderLiveness

MAX_CHAIN = 16
"""Ops a copy may take: longer chains stay shared."""


def _recomputable(op: Operation) -> bool:
    return not op.regions and (op.has_trait(ViewLike) or isinstance(op, mir.ConcatOp))


def _is_view(op: Operation) -> bool:
    """The planner aliases its result to its operand's bytes: no buffer of its own."""
    return isinstance(op, ShapedOp) and op.contiguous_view_offset() is not None


def _root(v: SSAValue) -> SSAValue:
    """The value whose bytes ``v`` are, through views."""
    while isinstance(v, OpResult) and _is_view(v.op):
        v = v.op.operands[0]
    return v


@dataclass
class _Chain:
    """What copying ``value``'s chain before step ``at`` takes: its ops (block order), the
    bytes of their results but the last (born and dead around ``at``), and the values it
    reads that it does not copy, with the rows that must then live until ``at``."""

    ops: list[Operation]
    transient: int
    extended: list[int]


def _chain(value: OpResult, at: int, live: SourceOrderLiveness) -> _Chain | None:
    ops: list[Operation] = []
    extended: list[int] = []
    todo = [value.op]
    while todo:
        op = todo.pop()
        if op in ops:
            continue
        ops.append(op)
        if len(ops) > MAX_CHAIN:
            return None
        for v in op.operands:
            row = live.row[_root(v)]
            if live.deaths[row] >= at:
                continue  # at hand there (leaves live throughout), or a view of such
            if isinstance(v, OpResult) and _recomputable(v.op):
                todo.append(v.op)
            else:
                extended.append(row)
    ops.sort(key=live.step.__getitem__)
    transient = sum(
        live.sizes[live.row[o.results[0]]] for o in ops if o is not value.op and not _is_view(o)
    )
    return _Chain(ops, transient, extended)


@dataclass
class _Candidate:
    """A value and the steps of its readers (distinct, ascending)."""

    value: OpResult
    readers: list[int]


def _shared(block: Block, outputs: set[SSAValue]) -> list[OpResult]:
    """The values worth a look: made by a recomputable op (not a view), read by several
    ops of ``block``, none of them a view (which would keep the bytes live) and nothing
    inside a region, not graph outputs."""
    out: list[OpResult] = []
    for op in block_ops(block):
        if len(op.results) != 1 or not _recomputable(op):
            continue
        value = op.results[0]
        first = value.first_use
        if first is None or first._next_use is None:  # one use at most: one reader
            continue
        if _is_view(op):
            continue
        readers = {use.operation for use in value.uses}
        if (
            len(readers) > 1
            and value not in outputs
            and all(reader.parent is block and not _is_view(reader) for reader in readers)
        ):
            out.append(value)
    return out


def _candidates(live: SourceOrderLiveness, values: list[OpResult]) -> list[_Candidate]:
    """``values`` with their readers' steps, largest first, then in block order."""
    out = [_Candidate(v, sorted({live.step[use.operation] for use in v.uses})) for v in values]
    out.sort(key=lambda c: (-live.sizes[live.row[c.value]], live.step[c.value.op]))
    return out


def _peak_with(
    base: NDArray[np.int64],
    born: NDArray[np.int64],
    live: SourceOrderLiveness,
    c: _Candidate,
    chains: dict[int, _Chain],
    splits: list[int],
) -> int:
    """The peak with copies before the readers at ``splits`` (indices into c.readers,
    ascending, none 0): the value is not live between the reader before each split and
    the split; what the chains read but do not copy lives until the last of them; each
    chain runs just before its reader, with all that is live there but the reader's
    results, and its own intermediates."""
    p = base.copy()
    size = live.sizes[live.row[c.value]]
    last = c.readers[splits[-1]]
    for j in splits:
        p[c.readers[j - 1] + 1 : c.readers[j]] -= size
    for r in sorted({r for j in splits for r in chains[j].extended}):
        p[live.deaths[r] + 1 : last + 1] += live.sizes[r]
    before = max(p[c.readers[j]] - born[c.readers[j]] + chains[j].transient for j in splits)
    return max(int(p.max()), int(before))


def _choose(
    base: NDArray[np.int64], born: NDArray[np.int64], live: SourceOrderLiveness, c: _Candidate
) -> tuple[list[int], dict[int, _Chain]] | None:
    """The splits that lower the peak (None when none does): a copy before every reader
    but the first, then each dropped where the peak holds without it."""
    peak = int(base.max())
    chains: dict[int, _Chain] = {}
    for j in range(1, len(c.readers)):
        chain = _chain(c.value, c.readers[j], live)
        if chain is None:
            return None
        chains[j] = chain
    splits = list(chains)
    best = _peak_with(base, born, live, c, chains, splits)
    if best >= peak:
        return None
    for j in list(splits):
        fewer = [k for k in splits if k != j]
        if fewer and _peak_with(base, born, live, c, chains, fewer) <= best:
            splits = fewer
    return splits, chains


def _copy(
    c: _Candidate, splits: list[int], chains: dict[int, _Chain], live: SourceOrderLiveness
) -> list[SSAValue]:
    """Rewrite: a copy of the chain before the first reader of each split, taking the
    readers from that split to the next."""
    bounds = [*(c.readers[j] for j in splits), len(live.ops)]
    copies: list[SSAValue] = []
    for i, j in enumerate(splits):
        start, end = bounds[i], bounds[i + 1]
        anchor = live.ops[start]
        mapping: dict[SSAValue, SSAValue] = {}
        for op in chains[j].ops:
            clone = op.clone(value_mapper=mapping)
            anchor.parent_block().insert_op_before(clone, anchor)  # type: ignore[union-attr]
            note_changed(clone)
        copy = mapping[c.value]
        copies.append(copy)
        for use in list(c.value.uses):
            if start <= live.step[use.operation] < end:
                use.operation.operands[use.index] = copy
                note_changed(use.operation)
    return copies


def _next_copy(
    block: Block, outputs: list[SSAValue], tried: set[SSAValue]
) -> tuple[_Candidate, list[int], dict[int, _Chain], SourceOrderLiveness] | None:
    """The first value not in ``tried`` whose copies lower the peak, with where they go
    (None when there is none); every value looked at joins ``tried``. Reads ``block``
    only."""
    values = [v for v in _shared(block, set(outputs)) if v not in tried]
    if not values:
        return None
    live = SourceOrderLiveness.of_block(block, outputs)
    base, born = live.profile(), live.born()
    # Only a value live across a step at the peak (between two of its readers) can
    # lower it.
    at_peak = np.flatnonzero(base == base.max())
    for c in _candidates(live, values):
        tried.add(c.value)
        first, last = np.searchsorted(at_peak, [c.readers[0] + 1, c.readers[-1]])
        if first == last:
            continue
        choice = _choose(base, born, live, c)
        if choice is not None:
            return c, *choice, live
    return None


def may_rematerialize(block: Block, outputs: list[SSAValue]) -> bool:
    """Whether ``rematerialize_block`` would change ``block`` (without changing it)."""
    return _next_copy(block, outputs, set()) is not None


def rematerialize_block(block: Block, outputs: list[SSAValue]) -> int:
    """Copy chains in ``block`` while that lowers its peak; returns how many values got
    copies."""
    done = 0
    tried: set[SSAValue] = set()
    while (found := _next_copy(block, outputs, tried)) is not None:
        c, splits, chains, live = found
        tried.update(_copy(c, splits, chains, live))
        done += 1  # the graph changed: the next round measures it again
    return done


@dataclass(frozen=True)
class RematerializePass(ModulePass):
    """Recompute cheap shared values next to their far readers where that lowers the peak."""

    name = "rematerialize"

    REPORTS_CHANGES: ClassVar[bool] = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in func_graphs(op):
            rematerialize_block(graph_block(graph), graph_outputs(graph))


__all__ = ["RematerializePass", "may_rematerialize", "rematerialize_block"]
