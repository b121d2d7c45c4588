"""Kernel dispatch: the policy for logical kernels and the report of how every op kind of a
legalized module reaches a kernel.

Policies (``RLX_KERNEL_DISPATCH``, the ``dispatch`` option of ``legalize``, ``rlx-opt
--kernel-dispatch``):
- ``prefer-native`` (default): a claimed op runs on its native kernel; an unclaimed
  logical kernel is lowered to common IR;
- ``common-ir``: logical kernels are lowered to common IR even where the target claims
  them (a reference path, useful to bisect a suspect native kernel);
- ``native-only``: no common-IR lowering at all; an unclaimed logical kernel is an error.
RLX's spellings (``common``, ``force_common``, ``ForceCommon``, ``native``,
``force_native``, ``ForceNative``) are accepted too.

Paths in the report, per op kind: **native** (instances left for the target's own
kernel), **common-ir** (instances lowered to their common-IR definition), **rewritten**
(instances decomposed or rewritten by another conversion pattern), **unsupported**
(instances still illegal: compilation fails).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from xdsl.ir import Operation
from xdsl.utils.str_enum import StrEnum

from rlx_compile import env
from rlx_compile.ir import location_str
from rlx_compile.legalization.base import COMMON_IR, REWRITTEN

NATIVE = "native"
UNSUPPORTED = "unsupported"
PATHS = (NATIVE, COMMON_IR, REWRITTEN, UNSUPPORTED)


class DispatchPolicy(StrEnum):
    PREFER_NATIVE = "prefer-native"
    COMMON_IR = "common-ir"
    NATIVE_ONLY = "native-only"


_ALIASES = {
    "prefer-native": DispatchPolicy.PREFER_NATIVE,
    "prefer_native": DispatchPolicy.PREFER_NATIVE,
    "prefernative": DispatchPolicy.PREFER_NATIVE,
    "common-ir": DispatchPolicy.COMMON_IR,
    "common": DispatchPolicy.COMMON_IR,
    "force_common": DispatchPolicy.COMMON_IR,
    "forcecommon": DispatchPolicy.COMMON_IR,
    "native-only": DispatchPolicy.NATIVE_ONLY,
    "native": DispatchPolicy.NATIVE_ONLY,
    "force_native": DispatchPolicy.NATIVE_ONLY,
    "forcenative": DispatchPolicy.NATIVE_ONLY,
}
POLICY_NAMES = ", ".join(p.value for p in DispatchPolicy)


def parse_policy(text: str, source: str = "kernel dispatch policy") -> DispatchPolicy:
    """A policy from its name (or an RLX alias); ValueError naming the valid ones."""
    policy = _ALIASES.get(text.strip().lower())
    if policy is None:
        raise ValueError(f"{source} '{text}' is not one of {POLICY_NAMES}")
    return policy


def resolve_policy(explicit: str | None = None) -> DispatchPolicy:
    """``explicit`` if given, else ``RLX_KERNEL_DISPATCH``, else prefer-native."""
    if explicit:
        return parse_policy(explicit)
    text = env.value("KERNEL_DISPATCH")
    if text is None or not text.strip():
        return DispatchPolicy.PREFER_NATIVE
    return parse_policy(text, "RLX_KERNEL_DISPATCH")


@dataclass
class Offender:
    """An op still illegal after conversion."""

    op: Operation
    reason: str

    @property
    def kind(self) -> str:
        return self.op.name

    @property
    def location(self) -> str | None:
        return location_str(self.op)


@dataclass
class KernelDispatchReport:
    """How each op kind of a legalized module reaches a kernel on ``target``."""

    target: str
    policy: DispatchPolicy
    claim_count: int
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    """op kind -> path -> number of ops."""
    offenders: list[Offender] = field(default_factory=list)
    rounds: int = 0
    """Conversion rounds that rewrote something."""

    def add(self, kind: str, path: str, n: int = 1) -> None:
        counts = self.counts.get(kind)
        if counts is None:  # (not setdefault: a Counter made for every op)
            counts = self.counts[kind] = Counter()
        counts[path] += n

    @property
    def compile_ready(self) -> bool:
        return not self.offenders

    def paths(self, kind: str) -> dict[str, int]:
        """The paths taken by ops of ``kind``, with counts (empty if the kind never
        appeared)."""
        c = self.counts.get(kind, Counter())
        return {p: c[p] for p in PATHS if c[p]}

    def path(self, kind: str) -> str | None:
        """The path of ``kind`` when all its ops took one ("mixed" otherwise)."""
        taken = self.paths(kind)
        if not taken:
            return None
        return next(iter(taken)) if len(taken) == 1 else "mixed"

    def kinds_on(self, path: str) -> list[str]:
        return [k for k in sorted(self.counts) if self.counts[k][path]]

    def render(self) -> str:
        lines = [
            f'rlx dispatch report — target "{self.target}", policy {self.policy.value}, '
            f"claim {self.claim_count} op kinds"
        ]
        for path in PATHS:
            kinds = self.kinds_on(path)
            lines.append(f"  {path}:" + ("" if kinds else " (none)"))
            lines += [f"    - {k} x{self.counts[k][path]}" for k in kinds]
        if self.offenders:
            lines.append(
                f"still unsupported after rewrite ({len(self.offenders)} op(s)) — "
                "compile will fail:"
            )
            for kind, n, first in self._offender_kinds():
                where = f" (first at {first.location})" if first.location else ""
                lines.append(f"  - {kind} x{n}: {first.reason}{where}")
            lines.append(
                "  hint: claim these kinds in the target, or give it a conversion pattern "
                "that rewrites them into claimed ops"
            )
        else:
            lines.append("compile-ready: yes")
        return "\n".join(lines)

    __str__ = render

    def _offender_kinds(self) -> list[tuple[str, int, Offender]]:
        by_kind: dict[str, list[Offender]] = {}
        for o in self.offenders:
            by_kind.setdefault(o.kind, []).append(o)
        return [(k, len(v), v[0]) for k, v in sorted(by_kind.items())]

    def first_offender(self) -> Offender:
        """The first op of the first illegal kind (by name): where the error points."""
        return self._offender_kinds()[0][2]

    def error_message(self) -> str:
        """The one-line legalization failure: each illegal kind, how many, one location."""
        parts = []
        for kind, n, first in self._offender_kinds():
            where = f"; first at {first.location}" if first.location else ""
            parts.append(f"{kind} x{n} ({first.reason}{where})")
        return (
            f'target "{self.target}" cannot run {len(parts)} op kind(s) after '
            f"{self.rounds} conversion round(s): " + ", ".join(parts)
        )
