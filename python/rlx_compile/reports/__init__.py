"""Reports of a compile for people: pictures (``svg``) and the text/JSON summary that
``rlx-compile`` writes."""

from rlx_compile.reports.svg import graph_svg, memory_svg

__all__ = ["graph_svg", "memory_svg"]
