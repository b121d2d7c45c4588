"""``lower-recurrent{target=T}``: the recurrent layers (``mir.rnn`` / ``mir.gru`` /
``mir.lstm``) T does not claim, as their steps (legalize's ``LowerRecurrent``). The
pipeline runs it before fusion, so that the steps fuse as any model's ops do (matmul
epilogues, LSTM cells, elementwise regions); ``legalize`` alone would lower them after
fusion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from rlx_compile.dialects import mir
from rlx_compile.fusion.base import run_patterns
from rlx_compile.legalization.base import UnclaimedOnly
from rlx_compile.legalization.patterns import LowerRecurrent
from rlx_compile.targets import TargetPass


class _LowerUnclaimed(UnclaimedOnly, LowerRecurrent):
    roots: ClassVar[tuple[type[Operation], ...]] = mir.RECURRENT_OPS


@dataclass(frozen=True)
class LowerRecurrentPass(TargetPass):
    """Lower the recurrent layers the target does not claim to their steps."""

    name = "lower-recurrent"
    ACTS_ON: ClassVar[tuple[type[Operation], ...]] = _LowerUnclaimed.roots

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_patterns(op, [_LowerUnclaimed(self.resolved())], reverse=False)
