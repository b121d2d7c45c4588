"""The shard report: per op, its cut, each piece's range and worker, the bytes it moves
and the predicted (and, after a run, measured) time.

Rows, tab-separated under a ``#`` header:

- one row per piece of a split op: bytes = its slices + the shared operands (unless
  resident) + its output; predicted = its compute time; measured = the worker's run;
- a ``total`` row per split op: all bytes moved; predicted = compute + transfer (the
  note splits it and gives the local time); measured = wall time from the first
  scatter to the concatenated result;
- a ``none`` row per op kept whole: predicted = its local time; the note says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from rlx_compile.shard.cost import Decision, ShardChoice


@dataclass(frozen=True)
class OpRun:
    """What a sharded op cost when it ran: the workers' measured compute per piece and
    the wall time of the whole op (transfers included)."""

    choice: ShardChoice
    piece_seconds: tuple[float, ...]
    wall_s: float
    moved: tuple[tuple[int, str, str], ...] = ()
    """(piece, worker, worker it ran on) for each piece moved off an unresponsive
    worker; ``choice`` names where the pieces ran."""


@dataclass(frozen=True)
class ShardRow:
    op: str
    cut: str
    range: str
    worker: str
    bytes_moved: int
    predicted_s: float | None
    measured_s: float | None = None
    note: str = ""


def _secs(x: float | None) -> str:
    return "-" if x is None else f"{x:.3e}"


def _piece_rows(choice: ShardChoice, measured: Sequence[float] | None) -> list[ShardRow]:
    o = choice.option
    shared = 0 if choice.resident else o.shared_in_bytes
    rows = []
    for i, (start, size) in enumerate(o.ranges):
        worker = choice.worker_names[i] or f"worker {choice.assignment[i]}"
        rows.append(
            ShardRow(
                o.label,
                f"{o.cut} axis {o.axis}",
                f"{start}:{start + size}",
                worker,
                o.piece_in_bytes(i) + shared + o.piece_out_bytes(i),
                choice.piece_compute_s[i],
                None if measured is None else measured[i],
            )
        )
    return rows


def _total_row(choice: ShardChoice, wall: float | None) -> ShardRow:
    o = choice.option
    resident = ", shared resident" if choice.resident else ""
    note = (
        f"compute {_secs(choice.compute_s)} + transfer {_secs(choice.transfer_s)}; "
        f"local {_secs(choice.local_s)}{resident}"
    )
    return ShardRow(
        o.label, "total", f"0:{o.out_shape[o.axis]}", "-", choice.bytes_moved,
        choice.total_s, wall, note,
    )  # fmt: skip


@dataclass(frozen=True)
class ShardReport:
    rows: tuple[ShardRow, ...]

    @staticmethod
    def from_decisions(decisions: Sequence[tuple[str, Decision]]) -> ShardReport:
        """Rows for planned ops, each given as (label, decision)."""
        rows: list[ShardRow] = []
        for label, d in decisions:
            if d.choice is None:
                note = d.reason
                if d.excluded:
                    note += f"; excluded workers {list(d.excluded)} (not rankable)"
                rows.append(ShardRow(label, "none", "-", "local", 0, d.local_s, None, note))
                continue
            rows.extend(_piece_rows(d.choice, None))
            total = _total_row(d.choice, None)
            if d.excluded:
                total = ShardRow(
                    total.op, total.cut, total.range, total.worker, total.bytes_moved,
                    total.predicted_s, None,
                    total.note + f"; excluded workers {list(d.excluded)} (not rankable)",
                )  # fmt: skip
            rows.append(total)
        return ShardReport(tuple(rows))

    @staticmethod
    def from_runs(runs: Sequence[OpRun]) -> ShardReport:
        """Rows for executed splits: predicted next to measured."""
        rows: list[ShardRow] = []
        for r in runs:
            rows.extend(_piece_rows(r.choice, r.piece_seconds))
            total = _total_row(r.choice, r.wall_s)
            for i, off, to in r.moved:
                total = replace(
                    total, note=f"{total.note}; piece {i} moved off unresponsive {off} to {to}"
                )
            rows.append(total)
        return ShardReport(tuple(rows))

    def render(self) -> str:
        split = sum(r.cut == "total" for r in self.rows)
        whole = sum(r.cut == "none" for r in self.rows)
        lines = [
            f"# shard report: {split + whole} op(s), {split} split, {whole} whole",
            "# op\tcut\trange\tworker\tbytes\tpredicted_s\tmeasured_s\tnote",
        ]
        for r in self.rows:
            lines.append(
                "\t".join(
                    [
                        r.op, r.cut, r.range, r.worker, str(r.bytes_moved),
                        _secs(r.predicted_s), _secs(r.measured_s), r.note,
                    ]
                ).rstrip()
            )  # fmt: skip
        return "\n".join(lines)
