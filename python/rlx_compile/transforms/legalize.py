"""``legalize{target=T}``: rewrite every op the target cannot run into ops it can, with the
target's conversion patterns (``rlx_compile.legalization``), and fail with one line naming
each op kind still illegal, how many, and one location.

Options: ``target``; ``claims`` (MIR op names) replaces the target's claim set;
``dispatch`` = ``prefer-native`` | ``common-ir`` | ``native-only`` (empty: the
``RLX_KERNEL_DISPATCH`` environment variable, else prefer-native). The pass publishes a
``KernelDispatchReport`` (``CompileResult.dispatch_report``, ``rlx-opt --dispatch-report``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from rlx_compile.diagnostics import OpPassFailure, note_block_changed
from rlx_compile.legalization.dispatch import parse_policy, resolve_policy
from rlx_compile.legalization.driver import convert
from rlx_compile.reports import publish
from rlx_compile.targets import TargetPass


@dataclass(frozen=True)
class LegalizePass(TargetPass):
    """Rewrite ops the target does not claim into ops it does (or fail, listing them)."""

    name = "legalize"
    REPORTS_CHANGES: ClassVar[bool] = True

    dispatch: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.dispatch:
            parse_policy(self.dispatch)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            policy = resolve_policy(self.dispatch or None)
        except ValueError as err:
            raise PassFailedException(str(err)) from None
        report = convert(op, self.resolved(), policy)
        if report.rounds:  # a round that rewrote something
            note_block_changed(op.body.block)
        publish(report)
        if not report.compile_ready:
            raise OpPassFailure(report.error_message(), report.first_offender().op)
