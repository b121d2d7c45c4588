"""FusionReport: what fused (pattern, count, ops absorbed) and what nearly fused but did not,
with the reason and a hint."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FusedCount:
    pattern: str
    count: int = 0
    absorbed: int = 0
    """Ops of the input that the fused ops replaced."""


@dataclass(frozen=True)
class MissedFusion:
    """A near miss: the shape of a pattern was there, a condition failed."""

    pattern: str
    op: str
    """The op the pattern was rooted at."""
    location: str | None
    reason: str
    hint: str

    def render(self) -> str:
        where = f" at {self.location}" if self.location else ""
        return f"{self.pattern} ({self.op}{where}): {self.reason}; hint: {self.hint}"


@dataclass
class FusionReport:
    target: str
    ops_before: int = 0
    ops_after: int = 0
    fused: dict[str, FusedCount] = field(default_factory=dict)
    missed: list[MissedFusion] = field(default_factory=list)

    def record(self, pattern: str, absorbed: int) -> None:
        entry = self.fused.setdefault(pattern, FusedCount(pattern))
        entry.count += 1
        entry.absorbed += absorbed

    def count(self, pattern: str) -> int:
        entry = self.fused.get(pattern)
        return entry.count if entry else 0

    def absorbed(self, pattern: str) -> int:
        entry = self.fused.get(pattern)
        return entry.absorbed if entry else 0

    def missed_by(self, pattern: str) -> list[MissedFusion]:
        return [m for m in self.missed if m.pattern == pattern]

    def summary_line(self) -> str:
        fused = " ".join(f"{k}={v.count}" for k, v in sorted(self.fused.items()))
        return (
            f"ops={self.ops_before}->{self.ops_after} {fused or 'fused=0'} "
            f"missed={len(self.missed)}"
        ).replace("  ", " ")

    def render(self) -> str:
        lines = [
            f'fusion report — target "{self.target}": {self.ops_before} ops -> {self.ops_after} ops'
        ]
        lines.append("  fused:" + ("" if self.fused else " (none)"))
        for name in sorted(self.fused):
            f = self.fused[name]
            lines.append(f"    - {name} x{f.count} ({f.absorbed} ops absorbed)")
        lines.append("  missed:" + ("" if self.missed else " (none)"))
        lines += [f"    - {m.render()}" for m in self.missed]
        return "\n".join(lines)

    __str__ = render
