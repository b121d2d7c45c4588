"""The base of the conversion patterns (``patterns``, ``ml``): their dispatch paths."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import ReplacingPattern

if TYPE_CHECKING:  # the targets import this module
    from rlx_compile.targets.base import Target

COMMON_IR = "common-ir"
REWRITTEN = "rewritten"


class ConversionPattern(ReplacingPattern):
    """Base of the conversion patterns: the dispatch path of what they rewrite."""

    path: ClassVar[str] = REWRITTEN
    summary: ClassVar[str] = ""
    """What the rewrite does, in a few words."""


class UnclaimedOnly:
    """Mixin for a conversion pattern: it rewrites only the ops ``target`` does not claim
    (the lowerings a pipeline runs before fusion, ``lower-recurrent`` and
    ``lower-integer``, where ``legalize`` would run them after it)."""

    def __init__(self, target: Target):
        self.target = target

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not self.target.claims_op(op.name):
            super().match_and_rewrite(op, rewriter)  # type: ignore[misc]
