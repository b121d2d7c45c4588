"""LIR -> C: a planned graph as calls of the C kernel library (``rlx_compile/native/c``).

``emit_program(graph, target)`` lowers a ``lir.graph`` to a ``Program`` (kernel calls at
planned addresses, the weights layout, the IO manifest); ``c_sources(program)`` prints
it as C99 (the model's translation unit, its header, a standalone ``main.c`` and a
Makefile). ``rlx_compile.native`` builds and runs it.
"""

from rlx_compile.conversion.lir_to_c.emit import emit_program, static_values
from rlx_compile.conversion.lir_to_c.lowering import EmitOptions
from rlx_compile.conversion.lir_to_c.program import (
    NativeUnsupportedError,
    Program,
    Ptr,
    Tensor,
    WeightEntry,
)

__all__ = [
    "EmitOptions",
    "NativeUnsupportedError",
    "Program",
    "Ptr",
    "Tensor",
    "WeightEntry",
    "emit_program",
    "static_values",
]
