"""The conversion driver (xDSL has no ``ConversionTarget``): rewrite every op a target
cannot run with the target's conversion patterns until the module is legal.

Legal = claimed by the target and allowed in that form (``Target.illegal_reason``).
Each round visits the ops of every graph in order and applies the first pattern that
acts on each illegal op (under the ``common-ir`` policy, logical kernels are lowered
even when legal). Rewrites may produce ops that are illegal in turn, so rounds repeat,
at most ``MAX_ROUNDS`` times, until nothing is illegal or nothing changes. The caller
decides what to do with what is left (``legalize`` fails with one line listing it).
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.dialects import mir
from rlx_compile.ir import func_graphs
from rlx_compile.legalization.base import COMMON_IR, ConversionPattern
from rlx_compile.legalization.dispatch import (
    NATIVE,
    UNSUPPORTED,
    DispatchPolicy,
    KernelDispatchReport,
    Offender,
)
from rlx_compile.targets.base import Target

MAX_ROUNDS = 16


def dispatched_ops(module: ModuleOp) -> Iterator[Operation]:
    """The ops that dispatch to kernels: the body ops of every graph function (a legal
    region op is one kernel; its body is not dispatched on its own) and of the regions of
    its control-flow ops, which the executor runs around them (so they are not kernels
    themselves, nor are constants that only they read: a trip count)."""
    for graph in func_graphs(module):
        yield from _block_kernels(graph.body.block)


def _block_kernels(block: Block) -> Iterator[Operation]:
    terminator = block.last_op
    for op in block.ops:
        if op is terminator or (isinstance(op, mir.ConstantOp) and _control_operand(op)):
            continue
        if isinstance(op, mir.ControlFlowOp):
            for region in op.regions:
                yield from _block_kernels(region.block)
        else:
            yield op


def _control_operand(op: mir.ConstantOp) -> bool:
    """A constant read only as a loop's trip count or condition, or an if's condition."""
    if not op.result.uses:
        return False
    for use in op.result.uses:
        user = use.operation
        if not isinstance(user, mir.ControlFlowOp):
            return False
        carried = len(user.inits) if isinstance(user, mir.LoopOp) else 0
        if use.index >= len(user.operands) - carried:  # a loop's initial carried value
            return False
    return True


def _apply_first(op: Operation, patterns: list[ConversionPattern]) -> ConversionPattern | None:
    for pattern in patterns:
        rewriter = PatternRewriter(op)
        pattern.match_and_rewrite(op, rewriter)
        if rewriter.has_done_action:
            return pattern
    return None


class _Patterns:
    """The target's patterns the policy allows, made when first needed (most modules
    hold no illegal op)."""

    def __init__(self, target: Target, policy: DispatchPolicy):
        self.kinds = [
            p
            for p in target.patterns
            if not (policy is DispatchPolicy.NATIVE_ONLY and p.path == COMMON_IR)
        ]
        self.made: list[ConversionPattern] | None = None

    def all(self) -> list[ConversionPattern]:
        if self.made is None:
            self.made = [p() for p in self.kinds]
        return self.made

    def forced(self) -> list[ConversionPattern]:
        return [p for p in self.all() if p.path == COMMON_IR]


def convert(
    module: ModuleOp, target: Target, policy: DispatchPolicy = DispatchPolicy.PREFER_NATIVE
) -> KernelDispatchReport:
    """Legalize ``module`` for ``target`` in place; the report says what happened and
    lists what is still illegal (never raises for illegal ops)."""
    report = KernelDispatchReport(target.name, policy, len(target.claims))
    patterns = _Patterns(target, policy)
    forced = patterns.forced() if policy is DispatchPolicy.COMMON_IR else []
    for _ in range(MAX_ROUNDS):
        changed = False
        reasons: list[tuple[Operation, str | None]] = []
        for op in list(dispatched_ops(module)):
            reason = target.illegal_reason(op)
            reasons.append((op, reason))
            # common-ir: logical kernels take their common-IR body even when claimed.
            candidates = forced if reason is None else patterns.all()
            if not candidates:
                continue
            kind = op.name
            applied = _apply_first(op, candidates)
            if applied is not None:
                report.add(kind, applied.path)
                changed = True
        if not changed:
            break  # the module is as the round found it, and so are its ops' reasons
        report.rounds += 1
    else:
        reasons = [(op, target.illegal_reason(op)) for op in dispatched_ops(module)]
    for op, reason in reasons:
        if reason is None:
            report.add(op.name, NATIVE)
        else:
            report.offenders.append(Offender(op, reason))
            report.add(op.name, UNSUPPORTED)
    return report
