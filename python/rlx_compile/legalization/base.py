"""The base of the conversion patterns (``patterns``, ``ml``): their dispatch paths."""

from __future__ import annotations

from typing import ClassVar

from rlx_compile.builder import ReplacingPattern

COMMON_IR = "common-ir"
REWRITTEN = "rewritten"


class ConversionPattern(ReplacingPattern):
    """Base of the conversion patterns: the dispatch path of what they rewrite."""

    path: ClassVar[str] = REWRITTEN
    summary: ClassVar[str] = ""
    """What the rewrite does, in a few words."""
