"""Dialect conversions, in MLIR's sense of ``Conversion/XToY``: passes that take a module
from one level to the next.

- ``hir_to_mir``: ``lower-hir-to-mir``, HIR blocks to MIR (fused ops or primitive chains);
- ``mir_to_lir``: ``plan-memory``, MIR to LIR (schedule order plus the arena buffer plan;
  the planning library is ``rlx_compile.memory``).

Passes that stay within one level (cleanup, fusion, target legalization) are in
``rlx_compile.transforms``; the legalization patterns and driver in
``rlx_compile.legalization``.
"""
