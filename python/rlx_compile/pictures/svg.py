"""Two pictures of a compiled graph, as standalone SVG text.

- ``graph_svg(graph)``: the dataflow graph in a layered (Sugiyama-style) layout drawn
  here, without Graphviz: longest-path layers, barycentre ordering sweeps, overlap-free
  placement. One box per op -- a fused op is one box, drawn in its own colour -- with
  the op, its result shape and, on hover, the full type, source location (the ONNX node)
  and arena slot. Params and constants are left out (their count is in the caption).
- ``memory_svg(graph)``: the arena plan of a ``lir.graph``: schedule step across, arena
  offset up, one rectangle per buffer from its first write to its last read; hovering
  names the tensor, its bytes, offset and lifetime. A dashed line marks the lower bound.

Both are deterministic: the same module gives the same bytes.
"""

from __future__ import annotations

import bisect
import html
import itertools
import math
from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, SSAValue

from rlx_compile.dialects import lir
from rlx_compile.dialects.traits import is_fused, is_weight_leaf
from rlx_compile.dialects.types import TensorType, fmt_shape
from rlx_compile.ir import (
    graph_block,
    graph_name,
    location_str,
    ops_without_terminator,
    output_names,
)
from rlx_compile.memory.lir_liveness import LirLiveness, derive
from rlx_compile.memory.report import MemoryReport, memory_report

FONT = "font-family='DejaVu Sans Mono, Menlo, Consolas, monospace'"
CHAR_W = 7.2  # px per character at 12px monospace
NODE_H = 38
LAYER_GAP = 34
NODE_GAP = 14
MARGIN = 24

_FILL = {
    "input": "#d8f0d8",
    "output": "#d6e6fb",
    "fused": "#ffd9a8",
    "view": "#f2f2f2",
    "op": "#ffffff",
}


def esc(text: str) -> str:
    return html.escape(text, quote=True)


# ---------------------------------------------------------------------------------
# Graph
# ---------------------------------------------------------------------------------


@dataclass
class _Node:
    index: int
    label: str
    detail: str
    title: str
    kind: str
    preds: list[int] = field(default_factory=list)
    succs: list[int] = field(default_factory=list)
    layer: int = 0
    order: float = 0.0
    x: float = 0.0
    width: float = 0.0


def _shape_text(op: Operation) -> str:
    types = [r.type for r in op.results if isinstance(r.type, TensorType)]
    if not types:
        return ""
    t = types[0]
    return f"{fmt_shape(t.shape)} {t.dtype.value}" + (" …" if len(types) > 1 else "")


def _op_title(op: Operation) -> str:
    lines = [op.name]
    loc = location_str(op)
    if loc:
        lines.append(f"at {loc}")
    lines += [f"-> {r.type}" for r in op.results]
    slots = [s for s in lir.result_slots(op) if s is not None]
    lines += [f"slot [{s.offset}, {s.offset + s.size})" for s in slots]
    return "\n".join(lines)


def _build_nodes(graph: Operation) -> tuple[list[_Node], int]:
    block = graph_block(graph)
    nodes: list[_Node] = []
    node_of: dict[SSAValue, int] = {}
    skipped = 0
    ops = ops_without_terminator(block)
    for op in ops:
        if is_weight_leaf(op):
            skipped += 1
            continue
        if op.name == "mir.input":
            kind, label = "input", cast(StringAttr, op.properties["tensor_name"]).data
        elif is_fused(op):
            kind, label = "fused", op.name.removeprefix("mir.")
        elif isinstance(op, lir.ViewOp):
            kind, label = "view", "view"
        else:
            kind, label = "op", op.name.split(".", 1)[-1]
        n = _Node(len(nodes), label, _shape_text(op), _op_title(op), kind)
        for operand in op.operands:
            src = node_of.get(operand)
            if src is not None and src not in n.preds:
                n.preds.append(src)
        nodes.append(n)
        for r in op.results:
            node_of[r] = n.index
    term = block.last_op
    assert term is not None
    out = _Node(len(nodes), "outputs", ", ".join(output_names(graph)), "graph outputs", "output")
    for v in term.operands:
        src = node_of.get(v)
        if src is not None and src not in out.preds:
            out.preds.append(src)
    nodes.append(out)
    for n in nodes:
        for p in n.preds:
            nodes[p].succs.append(n.index)
    return nodes, skipped


def _layout(nodes: list[_Node]) -> list[list[_Node]]:
    for n in nodes:  # nodes are in topological order
        n.layer = 1 + max((nodes[p].layer for p in n.preds), default=-1)
    # Ops that read only params or constants (a bias reshape) sit just above their
    # first reader instead of at the top with long edges down.
    for n in reversed(nodes):
        if not n.preds and n.kind != "input" and n.succs:
            n.layer = max(min(nodes[m].layer for m in n.succs) - 1, 0)
    depth = max(n.layer for n in nodes) + 1
    layers: list[list[_Node]] = [[] for _ in range(depth)]
    for n in nodes:
        layers[n.layer].append(n)
        n.width = max(len(n.label), len(n.detail)) * CHAR_W + 16
    for layer in layers:
        for i, n in enumerate(layer):
            n.order = i
    # Barycentre sweeps: order each layer by the mean position of its neighbours.
    for sweep in range(4):
        down = sweep % 2 == 0
        seq = layers[1:] if down else layers[-2::-1]
        for layer in seq:
            for n in layer:
                nbrs = n.preds if down else n.succs
                if nbrs:
                    n.order = sum(nodes[m].order for m in nbrs) / len(nbrs)
            layer.sort(key=lambda n: (n.order, n.index))
            for i, n in enumerate(layer):
                n.order = i
    # Place each node at its predecessors' mean x, pushed right past its left neighbour.
    for layer in layers:
        prev_right = None
        for n in layer:
            if n.preds:
                want = sum(nodes[p].x for p in n.preds) / len(n.preds)
            else:
                want = (prev_right or 0) + n.width / 2
            left_limit = -1e18 if prev_right is None else prev_right + NODE_GAP + n.width / 2
            n.x = max(want, left_limit)
            prev_right = n.x + n.width / 2
    return layers


class _Reach:
    """The furthest right edge among the (padded) boxes of a run of layers that start
    left of an x: a merge-sort tree over the layers, each node holding its layers' boxes
    by left edge with the running maximum of their right edges, so a query is a
    bisection in each of O(log layers) nodes (an edge passing every layer of a deep
    graph, as a graph output read across it does, is not one bisection per layer)."""

    def __init__(self, lefts: list[list[float]], rights: list[list[float]]) -> None:
        size = 1
        while size < len(lefts):
            size *= 2
        self.size = size
        boxes: list[list[tuple[float, float]]] = [[] for _ in range(2 * size)]
        for k, (ls, rs) in enumerate(zip(lefts, rights, strict=True)):
            boxes[size + k] = list(zip(ls, rs, strict=True))
        for i in range(size - 1, 0, -1):
            boxes[i] = sorted(boxes[2 * i] + boxes[2 * i + 1])
        self.lefts = [[b[0] for b in node] for node in boxes]
        self.reach = [list(itertools.accumulate((b[1] for b in node), max)) for node in boxes]

    def furthest(self, first: int, stop: int, x: float) -> float:
        """The furthest right edge of the boxes of layers ``first``..``stop - 1`` whose
        left edge is below ``x`` (-inf when there is none)."""
        best = -math.inf
        a, b = first + self.size, stop + self.size
        while a < b:
            if a & 1:
                best = self._node(a, x, best)
                a += 1
            if b & 1:
                b -= 1
                best = self._node(b, x, best)
            a //= 2
            b //= 2
        return best

    def _node(self, i: int, x: float, best: float) -> float:
        k = bisect.bisect_left(self.lefts[i], x)
        return max(best, self.reach[i][k - 1]) if k else best


def graph_svg(graph: Operation, title: str | None = None) -> str:
    """The dataflow graph of a MIR ``func.func`` or a ``lir.graph`` as SVG text."""
    nodes, skipped = _build_nodes(graph)
    layers = _layout(nodes)
    min_x = min(n.x - n.width / 2 for n in nodes)
    max_x = max(n.x + n.width / 2 for n in nodes)
    shift = MARGIN - min_x
    top = MARGIN + 30

    def y_of(n: _Node) -> float:
        return top + n.layer * (NODE_H + LAYER_GAP)

    # Edges: a bezier between adjacent layers; an edge skipping layers whose straight path
    # would pass behind a box (a residual connection, say) takes a lane beside the boxes
    # it passes, so the skip is visible.
    edge_paths: list[str] = []
    reach = _Reach(
        [[m.x + shift - m.width / 2 - 6 for m in layer] for layer in layers],
        [[m.x + shift + m.width / 2 + 6 for m in layer] for layer in layers],
    )
    for n in nodes:
        for p in n.preds:
            src = nodes[p]
            x1, y1 = src.x + shift, y_of(src) + NODE_H
            x2, y2 = n.x + shift, y_of(n)
            lo, hi = min(x1, x2), max(x1, x2)
            # the box of the layers passed reaching furthest right among those starting
            # before the edge's x range ends: it meets the range if it reaches past lo
            right = reach.furthest(src.layer + 1, n.layer, hi)
            if right <= lo:
                mid = (y1 + y2) / 2
                edge_paths.append(
                    f"<path d='M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} "
                    f"{x2:.1f},{y2:.1f}'/>"
                )
                continue
            lane = right - 6 + 14
            max_x = max(max_x, lane - shift + 8)
            a, b = y1 + LAYER_GAP / 2, y2 - LAYER_GAP / 2
            edge_paths.append(
                f"<path stroke='#4e79a7' d='M{x1:.1f},{y1:.1f} C{x1:.1f},{a:.1f} {lane:.1f},"
                f"{y1:.1f} {lane:.1f},{a + 8:.1f} L{lane:.1f},{b - 8:.1f} C{lane:.1f},{y2:.1f} "
                f"{x2:.1f},{b:.1f} {x2:.1f},{y2:.1f}'/>"
            )
    caption = title or f"@{graph_name(graph)}"
    fused = sum(n.kind == "fused" for n in nodes)
    ops = sum(n.kind in ("op", "fused") for n in nodes)
    caption += f" — {ops} ops ({fused} fused), {skipped} params/constants not drawn"
    width = max(max_x - min_x + 2 * MARGIN, len(caption) * 8.6 + 2 * MARGIN)
    height = top + len(layers) * (NODE_H + LAYER_GAP) + MARGIN
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
        f"viewBox='0 0 {width:.0f} {height:.0f}' {FONT} font-size='12'>",
        "<rect width='100%' height='100%' fill='white'/>",
        f"<text x='{MARGIN}' y='{MARGIN + 4}' font-size='14' font-weight='bold'>"
        f"{esc(caption)}</text>",
        "<g fill='none' stroke='#8a8a8a' stroke-width='1.2'>",
    ]
    for path in edge_paths:
        out.append(path)
    out.append("</g>")
    for n in nodes:
        x, y = n.x + shift - n.width / 2, y_of(n)
        stroke = "#c06000" if n.kind == "fused" else "#404040"
        dash = " stroke-dasharray='4 3'" if n.kind == "view" else ""
        weight = "2.2" if n.kind == "fused" else "1"
        out.append(
            f"<g><title>{esc(n.title)}</title>"
            f"<rect x='{x:.1f}' y='{y:.1f}' width='{n.width:.1f}' height='{NODE_H}' rx='6' "
            f"fill='{_FILL[n.kind]}' stroke='{stroke}' stroke-width='{weight}'{dash}/>"
            f"<text x='{x + n.width / 2:.1f}' y='{y + 16:.1f}' text-anchor='middle' "
            f"font-weight='{'bold' if n.kind == 'fused' else 'normal'}'>{esc(n.label)}</text>"
            f"<text x='{x + n.width / 2:.1f}' y='{y + 31:.1f}' text-anchor='middle' "
            f"font-size='10' fill='#555'>{esc(n.detail)}</text></g>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------
# Memory plan
# ---------------------------------------------------------------------------------

_PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
            "#ff9da7", "#9c755f", "#86bcb6"]  # fmt: skip
PLOT_W, PANEL_H = 900, 360
LEFT, BOTTOM = 96, 50
_UNITS = (("MB", 1 << 20), ("KB", 1 << 10), ("B", 1))


def nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _byte_axis(lo: float, hi: float) -> tuple[str, int, list[float]]:
    """A unit for byte offsets and tick positions (in bytes) at round values of it."""
    unit, size = next(((u, n) for u, n in _UNITS if hi >= 2 * n), _UNITS[-1])
    return unit, size, [t * size for t in nice_ticks(lo / size, hi / size)]


def _fmt_tick(value: float, unit: str, size: int) -> str:
    v = value / size
    return f"{v:.0f} {unit}" if v == int(v) else f"{v:g} {unit}"


def memory_svg(
    graph: lir.GraphOp,
    title: str | None = None,
    *,
    live: LirLiveness | None = None,
    report: MemoryReport | None = None,
) -> str:
    """The arena plan of a ``lir.graph`` as SVG text. When params and constants (alive
    for the whole run) fill most of the arena, a second panel zooms on the offsets the
    inputs and computed tensors use. ``live`` and ``report`` are ``derive(graph)`` and
    ``memory_report(graph)`` when the caller has them."""
    live = live or derive(graph)
    report = report or memory_report(graph, live)
    # Leaves (inputs, params, constants) are ops of the schedule but not steps of the
    # computation: the x axis counts kernel steps only.
    kernel_step = [0] * (live.num_steps + 1)
    count = 0
    for i, op in enumerate(live.ops):
        kernel_step[i] = count
        count += not is_weight_leaf(op) and not isinstance(op, lir.ViewOp)
    kernel_step[live.num_steps] = count
    steps = max(count, 1)
    arena = max(graph.arena_bytes, 1)
    compute = [st for st in live.storages if not is_weight_leaf(st.op)]  # inputs included
    lo = min((st.offset for st in compute), default=0)
    hi = max((st.end for st in compute), default=arena)
    zoom = bool(compute) and (hi - lo) < 0.5 * arena
    panels = [(0, arena, "whole arena")]
    if zoom:
        panels.append((lo, hi, f"zoom: offsets {lo:,}..{hi:,} (inputs and computed tensors)"))
    top = MARGIN + 54
    height = top + len(panels) * (PANEL_H + BOTTOM + 20) + MARGIN
    width = LEFT + PLOT_W + MARGIN
    caption = title or f"@{graph_name(graph)} memory plan"
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' {FONT} font-size='11'>",
        "<rect width='100%' height='100%' fill='white'/>",
        f"<text x='{LEFT}' y='{MARGIN}' font-size='14' font-weight='bold'>{esc(caption)}</text>",
        f"<text x='{LEFT}' y='{MARGIN + 18}' fill='#444'>arena {report.arena:,} B, "
        f"lower bound {report.lower_bound:,} B (arena/LB {report.ratio:.3f}), "
        f"no reuse {report.naive:,} B, {len(live.storages)} buffers, {count} kernel steps"
        "</text>",
        f"<text x='{LEFT}' y='{MARGIN + 32}' fill='#444'>one rectangle per buffer, from its "
        "write to its last read (hover for the tensor); grey: params and constants, green: "
        "inputs</text>",
    ]
    for i, (p_lo, p_hi, label) in enumerate(panels):
        y_top = top + i * (PANEL_H + BOTTOM + 20)
        out += _panel(live, kernel_step, report.lower_bound, steps, p_lo, p_hi, y_top, label)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _panel(
    live: LirLiveness,
    kernel_step: list[int],
    lower_bound: int,
    steps: int,
    lo: int,
    hi: int,
    y_top: float,
    label: str,
) -> list[str]:
    span = max(hi - lo, 1)

    def px(step: float) -> float:
        return LEFT + step / steps * PLOT_W

    def py(offset: float) -> float:
        return y_top + PANEL_H - (offset - lo) / span * PANEL_H

    out = [
        f"<text x='{LEFT + PLOT_W}' y='{y_top - 5}' text-anchor='end' fill='#444'>"
        f"{esc(label)}</text>",
        f"<rect x='{LEFT}' y='{y_top}' width='{PLOT_W}' height='{PANEL_H}' "
        "fill='#fafafa' stroke='#999'/>",
    ]
    unit, size, ticks = _byte_axis(lo, hi)
    for t in ticks:
        y = py(t)
        out.append(
            f"<line x1='{LEFT - 4}' y1='{y:.1f}' x2='{LEFT}' y2='{y:.1f}' stroke='#666'/>"
            f"<text x='{LEFT - 7}' y='{y + 4:.1f}' text-anchor='end'>{_fmt_tick(t, unit, size)}"
            "</text>"
        )
    for t in nice_ticks(0, steps, 10):
        x = px(t)
        out.append(
            f"<line x1='{x:.1f}' y1='{py(lo):.1f}' x2='{x:.1f}' y2='{py(lo) + 4:.1f}' "
            f"stroke='#666'/><text x='{x:.1f}' y='{py(lo) + 16:.1f}' text-anchor='middle'>"
            f"{int(t)}</text>"
        )
    mid = y_top + PANEL_H / 2
    out.append(
        f"<text x='{LEFT + PLOT_W / 2}' y='{py(lo) + 34:.1f}' text-anchor='middle'>"
        "kernel step (schedule order)</text>"
        f"<text x='18' y='{mid:.1f}' text-anchor='middle' transform='rotate(-90 18 {mid:.1f})'>"
        "arena offset</text>"
    )
    out.append(f"<svg x='{LEFT}' y='{y_top}' width='{PLOT_W}' height='{PANEL_H}' "
               f"viewBox='{LEFT} {y_top} {PLOT_W} {PANEL_H}'>")  # fmt: skip
    for i, st in enumerate(live.storages):
        if st.end <= lo or st.offset >= hi:
            continue
        if st.leaf:
            color = "#8cc68c" if st.op.name == "mir.input" else "#c8c8c8"
        else:
            color = _PALETTE[i % len(_PALETTE)]
        birth, death = kernel_step[st.birth], kernel_step[st.death]
        x0, x1 = px(birth), px(max(death, birth + 1))
        y0, y1 = py(st.offset + st.size), py(st.offset)
        loc = location_str(st.op)
        lines = [
            f"{st.label()} = {st.op.name}" + (f" ({loc})" if loc else ""),
            f"{st.size:,} B at [{st.offset:,}, {st.end:,})",
            f"live kernel steps {birth}..{death}" + (" (graph output)" if st.output else ""),
        ]
        out.append(
            f"<rect x='{x0:.2f}' y='{y0:.2f}' width='{max(x1 - x0, 0.8):.2f}' "
            f"height='{max(y1 - y0, 0.8):.2f}' fill='{color}' fill-opacity='0.85' "
            f"stroke='#333' stroke-width='0.4'><title>{esc(chr(10).join(lines))}</title></rect>"
        )
    out.append("</svg>")
    if lo <= lower_bound <= hi:
        y = py(lower_bound)
        out.append(
            f"<line x1='{LEFT}' y1='{y:.1f}' x2='{LEFT + PLOT_W}' y2='{y:.1f}' stroke='#c00' "
            f"stroke-dasharray='6 4'/><text x='{LEFT + 4}' y='{y - 4:.1f}' fill='#c00'>"
            "lower bound</text>"
        )
    return out
