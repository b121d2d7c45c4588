"""Memory reports: what a plan costs against its bounds.

- ``arena``: the planned arena size;
- ``lower_bound``: the peak over steps of the bytes live at once in the plan's own slots
  (in-place pairs count once; a concat operand produced inside the concat's slot counts
  as part of that slot, live from the first such operand's birth) — no placement of these
  slots can use less;
- ``naive``: the sum of all slot sizes (no reuse at all);
- ``saved``: naive - arena; ``ratio``: arena / lower_bound.

``mir_peak_live_bytes`` gives the bound of an unplanned MIR graph in source order, every
tensor in its own buffer (no views, no in-place): the yardstick for what the whole compile
(folding, fusion, aliasing, scheduling) achieved.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from rlx_compile.dialects import lir, mir
from rlx_compile.ir import graph_block, graph_outputs
from rlx_compile.memory.lir_liveness import (
    LirLiveness,
    derive,
    derive_region,
    operand_offset_in_result,
)
from rlx_compile.memory.placement import peak_live_bytes
from rlx_compile.memory.source_order import SourceOrderLiveness


@dataclass(frozen=True)
class MemoryReport:
    graph: str
    arena: int
    lower_bound: int
    naive: int
    alignment: int
    rows: tuple[tuple[int, int, str], ...]  # (offset, size, tensor)

    @property
    def saved(self) -> int:
        return max(0, self.naive - self.arena)

    @property
    def ratio(self) -> float:
        return self.arena / self.lower_bound if self.lower_bound else 1.0

    def render(self) -> str:
        lines = [
            f"# memory @{self.graph}: arena={self.arena} lower_bound={self.lower_bound} "
            f"naive={self.naive} arena/LB={self.ratio:.3f} saved={self.saved} "
            f"align={self.alignment}",
            "# offset\tsize\ttensor",
        ]
        lines += [f"{o}\t{s}\t{t}" for o, s, t in self.rows]
        return "\n".join(lines)


def memory_report(graph: lir.GraphOp, live: LirLiveness | None = None) -> MemoryReport:
    """The report of ``graph``'s plan; ``live`` is ``derive(graph)`` when the caller has it."""
    live = live or derive(graph)
    rows = [(s.offset, s.size, s.label()) for s in live.storages]
    rows += [(sc.offset, sc.size, sc.label) for sc in live.scratch]
    return MemoryReport(
        graph.sym_name.data, graph.arena_bytes, _lower_bound(graph, live),
        _naive(graph, live), graph.align, tuple(sorted(rows)),
    )  # fmt: skip


def _regions(graph: lir.GraphOp, live: LirLiveness, op: Operation) -> list[LirLiveness]:
    """The lifetimes of a control-flow op's regions (a loop body's arguments included)."""
    out = []
    for region in op.regions:
        block = region.block
        slots = lir.arg_slots(op)
        args = list(zip(block.args, slots, strict=True)) if slots else []
        out.append(derive_region(graph, block, live.root_of, args))
    return out


def _naive(graph: lir.GraphOp, live: LirLiveness) -> int:
    """Every slot, regions' included, in a buffer of its own."""
    total = sum(s.size for s in live.storages)
    for op in live.ops:
        if isinstance(op, mir.ControlFlowOp):
            total += sum(_naive(graph, sub) for sub in _regions(graph, live, op))
    return total


def _lower_bound(graph: lir.GraphOp, live: LirLiveness) -> int:
    # Buffers as [size, birth, death]. A chain of in-place writes (same slot, each born
    # where the previous dies) is one buffer; a concat's slot absorbs the buffers of the
    # operands produced inside it (at their offset, dying at the concat). A control-flow
    # op needs, at its step, what its largest region needs at once.
    spans: list[list[int]] = []
    span_of: dict[SSAValue, int] = {}
    absorbed: set[int] = set()
    last_on_slot: dict[tuple[int, int], int] = {}
    for s in sorted(live.storages, key=lambda s: s.step):
        b = last_on_slot.get((s.offset, s.size))
        if b is None or b in absorbed or spans[b][2] != s.birth:
            b = len(spans)
            spans.append([s.size, s.birth, s.death])
        else:
            spans[b][2] = s.death
        span_of[s.value] = last_on_slot[(s.offset, s.size)] = b
        if s.step < 0:  # a loop body's argument: no op produces it
            continue
        for operand in s.op.operands:
            p = live.storage_of.get(operand)
            offset = operand_offset_in_result(s.op, operand)
            if p is None or offset is None or (p.offset, p.death) != (s.offset + offset, s.step):
                continue
            inner = span_of[p.value]
            if inner != b:
                spans[b][1] = min(spans[b][1], spans[inner][1])
                absorbed.add(inner)
    kept = [span for i, span in enumerate(spans) if i not in absorbed]
    for step, op in enumerate(live.ops):
        if isinstance(op, mir.ControlFlowOp):
            need = max((_lower_bound(graph, sub) for sub in _regions(graph, live, op)), default=0)
            kept.append([need, step, step])
    return int(peak_live_bytes(*zip(*kept, strict=True))) if kept else 0


def mir_peak_live_bytes(graph: Operation, *, static_leaves: bool = True) -> int:
    """Source-order peak of live bytes of an unplanned graph: every op result in its own
    buffer (native sizes), live from its producer to its last reader, outputs to the end,
    leaves for the whole run; a control-flow op needs, at its step, its largest region's
    peak (a loop body's arguments live through it). ``static_leaves=False`` leaves weights
    out -- params, constants and values computed from them only -- (the activation bound,
    for plans that keep weights outside the arena)."""
    block = graph_block(graph)
    return SourceOrderLiveness.of_block(block, graph_outputs(graph), static_leaves).peak()
