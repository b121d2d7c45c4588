"""Pictures of a compiled graph for people (``svg``): the dataflow graph and the arena
plan, as ``rlx-compile`` writes them."""

from rlx_compile.pictures.svg import graph_svg, memory_svg

__all__ = ["graph_svg", "memory_svg"]
