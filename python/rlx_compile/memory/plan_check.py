"""An independent checker of LIR memory plans (spec §5.9, extended).

It re-derives every lifetime from the ``lir.graph`` alone and reports:

- program safety: ``live-overlap`` (two live tensors share bytes), ``read-after-overwrite``
  (a tensor is read after another was written over it), ``output-clobbered`` (the same with
  a graph output), ``out-of-arena``, ``misaligned``, ``view-out-of-root``,
  ``outside-scratch`` (a control-flow region's tensor outside its op's scratch);
- schedule semantics: ``order-violation`` (an op reads a value produced later).

A range plan (``dims [1 <= seq <= 512]``) is checked at sampled sizes as well: the ends
of each range and a few sizes inside (``range_samples``). Slots and lifetimes do not
depend on the sizes, so the checks above hold for all of them at once; at each sample
every tensor's actual bytes must fit its slot (``slot-overflow``), every view its root
(``view-out-of-root``), and every dim must be a size (``bad-size``: the range holds
sizes at which the graph has no meaning, e.g. a 3-wide window over 2 rows).

Control-flow regions are checked as blocks of their own (a loop body's arguments live for
the whole body, what a region yields to its end): a control-flow op reads the values its
regions capture, so they stay live across it; its scratch overlaps nothing live at its
step, and no tensor of its regions overlaps a value live while it runs.

It accepts two sharings, both declared by the op definitions: an elementwise op
(``writes_in_place``) writing its result exactly over an operand that dies at that op
(in-place), and a compute operand of an op that lays its operands end to end
(``contiguous_operand_offsets``, a contiguous concat) living exactly at its offset inside
that op's slot and dying at it (the op then rewrites the same bytes).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.dialects import lir, mir
from rlx_compile.dialects.dim_expr import evaluate
from rlx_compile.dialects.traits import writes_in_place
from rlx_compile.dialects.types import TensorType
from rlx_compile.memory.lir_liveness import (
    LirLiveness,
    OperandOffsets,
    Storage,
    derive,
    derive_region,
    is_view,
    operand_offset_in_result,
)

PROGRAM_SAFETY = (
    "live-overlap",
    "outside-scratch",
    "read-after-overwrite",
    "output-clobbered",
    "out-of-arena",
    "misaligned",
    "view-out-of-root",
    "slot-overflow",
    "bad-size",
)
RANGE_INNER_SAMPLES = 3
"""Sizes checked inside each range, besides its ends."""
SCHEDULE_SEMANTICS = ("order-violation",)


@dataclass(frozen=True)
class Finding:
    kind: str
    node: str
    other: str | None
    detail: str

    def render(self) -> str:
        pair = f"{self.node} vs {self.other}" if self.other else self.node
        return f"  [{self.kind}] {pair}: {self.detail}"


@dataclass
class PlanReport:
    graph: str
    findings: list[Finding] = field(default_factory=list)
    checked: int = 0
    aliased: int = 0
    sizes: list[dict[str, int]] = field(default_factory=list)
    """The sizes a range plan was checked at (empty for an exact plan)."""

    def is_clean(self) -> bool:
        return not self.findings

    def program_safety(self) -> list[Finding]:
        return [f for f in self.findings if f.kind in PROGRAM_SAFETY]

    def schedule_semantics(self) -> list[Finding]:
        return [f for f in self.findings if f.kind in SCHEDULE_SEMANTICS]

    def kinds(self) -> set[str]:
        return {f.kind for f in self.findings}

    def render(self) -> str:
        if self.is_clean():
            text = (
                f"plan check @{self.graph}: clean over {self.checked} assigned tensor(s) "
                f"({self.aliased} aliased)"
            )
            if self.sizes:
                text += f" at {len(self.sizes)} sampled sizes"
            if self.checked == 0:
                text += "\nNOTE: no tensor has a slot; nothing was checked, not proven safe."
            return text
        lines = [f"plan check @{self.graph}: {len(self.findings)} finding(s)"]
        lines += [f.render() for f in self.findings]
        return "\n".join(lines)


def _in_place(live: LirLiveness, p: Storage, q: Storage) -> bool:
    """q was written exactly over p by an elementwise op reading p for the last time."""
    if q.step < 0:  # a loop body's argument: written between iterations, by no op
        return False
    op = live.ops[q.step]
    return (
        q.birth == q.step == p.death
        and q.step in p.read_steps
        and writes_in_place(op)
        and (p.offset, p.size) == (q.offset, q.size)
        and p.writable
        and not p.output
    )


def _in_concat(live: LirLiveness, p: Storage, q: Storage, known: OperandOffsets) -> bool:
    """p was produced at its place inside q's slot: q's op copies p there (a contiguous
    concat reading p once), and p dies at q. ``known``: the concats' offsets so far."""
    if q.step < 0:
        return False
    op = live.ops[q.step]
    offset = operand_offset_in_result(op, p.value, known)
    return (
        offset is not None
        and q.value is op.results[0]
        and q.birth == q.step == p.death
        and (p.offset, p.size) == (q.offset + offset, cast(TensorType, p.value.type).nbytes())
        and p.end <= q.end
        and not p.leaf
        and not p.output
    )


class _LiveSlots:
    """The slots live at the current step, in a max-end segment tree over their offsets:
    the live slots meeting a byte range are found in O((1 + found) log n)."""

    def __init__(self, offsets: list[int]):
        self.keys = sorted(set(offsets))
        self.leaf_of = {k: i for i, k in enumerate(self.keys)}
        self.width = 1 << max(0, len(self.keys) - 1).bit_length()
        self.max_end = [-1] * (2 * self.width)
        self.at: list[list[Storage]] = [[] for _ in self.keys]

    def _update(self, leaf: int) -> None:
        node = leaf + self.width
        self.max_end[node] = max((s.end for s in self.at[leaf]), default=-1)
        node //= 2
        while node:
            self.max_end[node] = max(self.max_end[2 * node], self.max_end[2 * node + 1])
            node //= 2

    def add(self, s: Storage) -> None:
        leaf = self.leaf_of[s.offset]
        self.at[leaf].append(s)
        self._update(leaf)

    def remove(self, s: Storage) -> None:
        leaf = self.leaf_of[s.offset]
        here = self.at[leaf]
        del here[next(i for i, t in enumerate(here) if t is s)]
        self._update(leaf)

    def meeting(self, start: int, end: int) -> list[Storage]:
        """The live slots with bytes in ``[start, end)``."""
        stop = bisect.bisect_left(self.keys, end)  # leaves [0, stop) start before ``end``
        found: list[Storage] = []
        stack = [(1, 0, self.width)]
        while stack:
            node, lo, hi = stack.pop()
            if lo >= stop or self.max_end[node] <= start:
                continue
            if hi - lo == 1:
                found.extend(s for s in self.at[lo] if s.end > start)
                continue
            mid = (lo + hi) // 2
            stack += [(2 * node + 1, mid, hi), (2 * node, lo, mid)]
        return found


DENSE_PAIRS_LIMIT = 1 << 21
"""``overlapping_pairs`` tests the pairs that share bytes all at once (in NumPy) when
there are at most this many; beyond, it sweeps over steps."""
SMALL_PAIRS_SLOTS = 48
"""Up to this many slots, ``overlapping_pairs`` tests those pairs one by one in Python:
the NumPy form's fixed cost is larger there."""


def overlapping_pairs(storages: list[Storage]) -> list[tuple[Storage, Storage]]:
    """Every pair of non-empty slots sharing bytes and live at a common step, each as
    ``(a, b)`` with ``a`` first in (offset, step) order, sorted in that order.

    In that order the slots sharing bytes with slot ``i`` and after it are those from
    ``i + 1`` to the last one starting below its end: a plan reuses bytes over time, but
    the pairs that share bytes at all are few, so testing each for a common step at
    once is cheaper than any sweep (``_sweep_pairs`` takes over when they are many).
    """
    slots = [s for s in storages if s.size > 0]
    if len(slots) < 2:
        return []
    if len(slots) <= SMALL_PAIRS_SLOTS:
        return _small_pairs(slots)
    return _dense_pairs(slots)


def _small_pairs(slots: list[Storage]) -> list[tuple[Storage, Storage]]:
    """``overlapping_pairs`` of ``slots`` (non-empty), pair by pair."""
    ordered = sorted(slots, key=lambda s: (s.offset, s.step))
    pairs: list[tuple[Storage, Storage]] = []
    for i, a in enumerate(ordered):
        end, birth, death = a.offset + a.size, a.birth, a.death
        for b in ordered[i + 1 :]:
            if b.offset >= end:
                break
            if birth <= b.death and b.birth <= death:
                pairs.append((a, b))
    return pairs


def _dense_pairs(slots: list[Storage]) -> list[tuple[Storage, Storage]]:
    """``overlapping_pairs`` of ``slots`` (non-empty), the pairs sharing bytes tested at
    once in NumPy (or by ``_sweep_pairs`` when they are more than DENSE_PAIRS_LIMIT)."""
    n = len(slots)
    # Columns offset, step, size, birth, death; a stable sort by (offset, step).
    table = np.array([(s.offset, s.step, s.size, s.birth, s.death) for s in slots], np.int64)
    rank = np.lexsort((table[:, 1], table[:, 0]))
    offset, _, size, birth, death = table[rank].T
    ordered = [slots[i] for i in rank.tolist()]
    counts = np.searchsorted(offset, offset + size, "left") - np.arange(1, n + 1)
    total = int(counts.sum())
    if total > DENSE_PAIRS_LIMIT:
        return _sweep_pairs(ordered)
    first = np.repeat(np.arange(n), counts)
    second = first + 1 + np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    live = (birth[first] <= death[second]) & (birth[second] <= death[first])
    return [
        (ordered[i], ordered[j])
        for i, j in zip(first[live].tolist(), second[live].tolist(), strict=True)
    ]


def _sweep_pairs(ordered: list[Storage]) -> list[tuple[Storage, Storage]]:
    """``overlapping_pairs`` of ``ordered`` (non-empty slots in (offset, step) order) by a
    sweep over steps that keeps the live slots in ``_LiveSlots``: a slot meets only the
    live slots it overlaps, so a valid plan costs O(n log n) however many slots share
    bytes at different steps."""
    rank = {id(s): i for i, s in enumerate(ordered)}
    by_death = sorted(ordered, key=lambda s: s.death)
    live = _LiveSlots([s.offset for s in ordered])
    pairs: list[tuple[int, int]] = []
    dead = 0
    for s in sorted(ordered, key=lambda s: s.birth):
        while dead < len(by_death) and by_death[dead].death < s.birth:
            live.remove(by_death[dead])
            dead += 1
        for other in live.meeting(s.offset, s.end):
            i, j = rank[id(s)], rank[id(other)]
            pairs.append((min(i, j), max(i, j)))
        live.add(s)
    return [(ordered[i], ordered[j]) for i, j in sorted(pairs)]


def check_plan(graph: lir.GraphOp) -> PlanReport:
    live = derive(graph)
    report = PlanReport(graph.sym_name.data, checked=len(live.storages))
    _check_block(graph, live, report, [])
    return report


def _check_block(
    graph: lir.GraphOp, live: LirLiveness, report: PlanReport, around: list[Storage]
) -> None:
    """Check one block (the graph's, or a control-flow region's with ``around``: the
    storages of the blocks outside it that are live while it runs, none of which its own
    storages may overlap), then the regions of its control-flow ops."""
    arena, align = graph.arena_bytes, graph.align
    add = report.findings.append

    value_label = live.labels.__getitem__
    # By id(value): an SSAValue hashes by id, through a Python __hash__.
    step_of: dict[int, int] = {id(r): i for i, op in enumerate(live.ops) for r in op.results}
    for step, op in enumerate(live.ops):
        for operand in op._operands:
            produced = step_of.get(id(operand), -1)
            if produced >= step:
                reader = value_label(op.results[0]) if op.results else op.name
                detail = f"read at step {step}, produced at step {produced}"
                add(Finding("order-violation", reader, value_label(operand), detail))
        if is_view(op):
            view = cast(lir.ViewOp, op)
            report.aliased += 1
            root, offset = live.root_of[view.result]
            storage = live.storage_of.get(root)
            nbytes = view.result.type.nbytes() or 0
            if storage is not None and offset + nbytes > storage.size:
                detail = f"bytes [{offset}, {offset + nbytes}) of a {storage.size}-byte slot"
                add(Finding("view-out-of-root", value_label(view.result), storage.label(), detail))

    for s in live.storages:
        offset, size = s.offset, s.size
        if offset < 0 or offset + size > arena:
            add(Finding("out-of-arena", s.label(), None,
                        f"slot [{s.offset}, {s.end}) outside the {arena}-byte arena"))  # fmt: skip
        need = lir.slot_offset_alignment(size, align)
        if offset % need:
            add(
                Finding(
                    "misaligned", s.label(), None, f"offset {s.offset} is not a multiple of {need}"
                )
            )

    concat_offsets: OperandOffsets = {}
    for a, b in overlapping_pairs(live.storages):
        p, q = (a, b) if (a.birth, a.step) <= (b.birth, b.step) else (b, a)
        if _in_place(live, p, q) or _in_concat(live, p, q, concat_offsets):
            continue
        overlap = f"bytes [{max(p.offset, q.offset)}, {min(p.end, q.end)})"
        life = f"live [{p.birth}, {p.death}] and [{q.birth}, {q.death}]"
        if p.output or q.output:
            kind = "output-clobbered"
        elif any(r >= q.birth for r in p.read_steps):
            kind = "read-after-overwrite"
        else:
            kind = "live-overlap"
        add(Finding(kind, p.label(), q.label(), f"{overlap}, {life}"))

    for inner, outer in _overlapping(live.storages, around):
        detail = f"bytes [{max(inner.offset, outer.offset)}, {min(inner.end, outer.end)}) of a "
        add(Finding("live-overlap", inner.label(), outer.label(),
                    detail + "value live while the region runs"))  # fmt: skip
    if graph.ranges:
        report.sizes = range_samples(graph.ranges)
        _check_sizes(live, report)
    _check_regions(graph, live, report, around)


def _check_regions(
    graph: lir.GraphOp, live: LirLiveness, report: PlanReport, around: list[Storage]
) -> None:
    """Each control-flow op's scratch overlaps nothing live at its step; its regions'
    storages lie inside the scratch and overlap nothing live across the op."""
    add = report.findings.append
    scratch_of = {sc.op: sc for sc in live.scratch}
    for step, op in enumerate(live.ops):
        if not (op.regions and isinstance(op, mir.ControlFlowOp)):
            continue
        live_here = [s for s in live.storages if s.birth <= step <= s.death]
        sc = scratch_of.get(op)
        if sc is not None:
            for s in live_here:
                if s.size and sc.size and s.offset < sc.end and sc.offset < s.end:
                    detail = (
                        f"bytes [{max(s.offset, sc.offset)}, {min(s.end, sc.end)}) at step {step}"
                    )
                    add(Finding("live-overlap", sc.label, s.label(), detail))
        for region in op.regions:
            block = region.block
            slots = lir.arg_slots(op)
            args = list(zip(block.args, slots, strict=True)) if slots else []
            sub = derive_region(graph, block, live.root_of, args)
            report.checked += len(sub.storages)
            for s in sub.storages:
                if s.size and (sc is None or not (sc.offset <= s.offset and s.end <= sc.end)):
                    where = "no scratch" if sc is None else f"scratch [{sc.offset}, {sc.end})"
                    detail = f"slot [{s.offset}, {s.end}) outside the op's {where}"
                    add(Finding("outside-scratch", s.label(), op.name, detail))
            _check_block(graph, sub, report, live_here + around)


def _overlapping(xs: list[Storage], ys: list[Storage]) -> list[tuple[Storage, Storage]]:
    """The pairs (x, y) whose byte ranges overlap (both non-empty), by a sweep over
    offsets: each side's active slots (those not yet ended) expire through a heap of
    their ends, so the sweep is O((n + pairs) log n) however many slots share bytes."""
    if not xs or not ys:
        return []
    events = sorted(
        [(s.offset, 0, i) for i, s in enumerate(xs) if s.size]
        + [(s.offset, 1, i) for i, s in enumerate(ys) if s.size]
    )
    # Insertion-ordered dicts (as the lists they replace), keyed by (side, index).
    active: tuple[dict[int, Storage], dict[int, Storage]] = ({}, {})
    ends: list[tuple[int, int, int]] = []
    pairs: list[tuple[Storage, Storage]] = []
    for offset, side, i in events:
        s = (xs, ys)[side][i]
        while ends and ends[0][0] <= offset:
            _, k, j = heapq.heappop(ends)
            del active[k][j]
        for other in active[1 - side].values():
            pairs.append((s, other) if side == 0 else (other, s))
        active[side][i] = s
        heapq.heappush(ends, (s.end, side, i))
    return pairs


def range_samples(ranges: Mapping[str, tuple[int, int]]) -> list[dict[str, int]]:
    """Sizes to check a range plan at, deterministic: every dim at its low end, at its
    high end, and each dim in turn at its ends and ``RANGE_INNER_SAMPLES`` sizes inside
    its range with the others at their low, then their high ends."""
    names = sorted(ranges)
    low = {n: ranges[n][0] for n in names}
    high = {n: ranges[n][1] for n in names}
    out = [low, high]
    for n in names:
        lo, hi = ranges[n]
        k = RANGE_INNER_SAMPLES + 1
        points = sorted({lo, hi, *(lo + (hi - lo) * i // k for i in range(1, k))})
        for others in (low, high):
            out += [{**others, n: v} for v in points]
    unique: dict[tuple[int, ...], dict[str, int]] = {}
    for sample in out:
        unique.setdefault(tuple(sample[n] for n in names), sample)
    return list(unique.values())


def _check_sizes(live: LirLiveness, report: PlanReport) -> None:
    """The size-dependent checks of a range plan, at each sampled size; a finding is
    reported once, at the first size that shows it."""
    seen: set[tuple[str, str]] = set()

    def add(kind: str, node: str, other: str | None, detail: str) -> None:
        if (kind, node) not in seen:
            seen.add((kind, node))
            report.findings.append(Finding(kind, node, other, detail))

    label = live.labels.__getitem__
    for sizes in report.sizes:
        at = ", ".join(f"{k}={v}" for k, v in sorted(sizes.items()))

        def nbytes(value: SSAValue, at: str = at, sizes: dict[str, int] = sizes) -> int | None:
            t = cast(TensorType, value.type)
            dims = [evaluate(d, sizes) for d in t.shape]
            bad = [str(d) for d, n in zip(t.shape, dims, strict=True) if n < 0]
            if bad:
                add("bad-size", label(value), None, f"dim '{bad[0]}' is negative at {at}")
                return None
            return math.prod(dims) * t.dtype.itemsize

        actual: dict[SSAValue, int | None] = {}
        for s in live.storages:
            n = actual[s.value] = nbytes(s.value)
            if n is not None and n > s.size:
                add("slot-overflow", s.label(), None,
                    f"{n} bytes at {at} in a {s.size}-byte slot")  # fmt: skip
        for op in live.ops:
            if not isinstance(op, lir.ViewOp):
                continue
            root, offset = live.root_of[op.result]
            n, limit = nbytes(op.result), actual.get(root)
            if n is not None and limit is not None and offset + n > limit:
                detail = f"bytes [{offset}, {offset + n}) of a {limit}-byte root at {at}"
                add("view-out-of-root", label(op.result), label(root), detail)
