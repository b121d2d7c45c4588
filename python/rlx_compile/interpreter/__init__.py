"""The reference executor: the NumPy meaning of every op, and the oracle that compiled
graphs are checked against.

API:
- ``run(module_or_graph, inputs, params=None, *, graph=None) -> {output name: array}``
  executes a graph (see ``core.run`` for binding rules and errors);
- ``evaluate_op(op, args, env=None)`` executes one op, checking operand and result types;
- ``@impl(OpClass | "dialect.op")`` registers an implementation
  ``f(op, args, env) -> results``; ``interpreter.mir`` registers the MIR ops, later levels
  add ``interpreter.hir`` / ``interpreter.lir`` and import them below;
- ``execute_graph(graph_op, args, env)`` runs any op with one block whose last op returns
  the outputs (``func.func``, ``lir.graph``); ``func.call`` is implemented with it;
- ``run_arena(module, inputs, params)`` executes a ``lir.graph`` inside its arena (one
  ``uint8`` buffer, every tensor at its planned offset), see ``interpreter.lir``.

Semantic decisions that hold across ops (the op docstrings in ``dialects/mir.py`` give
each op's formula):
- matmul computes every output row as its own product (row-invariant): a row's bits do
  not depend on the rows around it, so row and batch slices reproduce the whole op;
- precision: f64/f32 compute in their own type; f16/bf16/f8 compute in f32 and round to
  the op's type once per op, accumulating ops included. erf and exact gelu are evaluated
  in float64 first (NumPy has no erf) and rounded to the compute type;
- integers wrap modulo 2^bits; div truncates toward zero, mod takes the divisor's sign,
  a negative integer power is 1/a^n truncated; integer division or modulo by zero and
  0 to a negative power raise ``ExecutionError`` (there is no value to give);
- floats follow IEEE: overflow gives inf, 0/0 NaN; max/min and max-reductions propagate
  NaN; argmax/argmin take the first extreme (a NaN counts as one); a softmax row of
  -inf only (fully masked attention row) is NaN;
- cast float -> int truncates toward zero, saturates, and maps NaN to 0 (Rust's ``as``);
  to bool is ``!= 0``; int -> int wraps (4- and 2-bit ints too); to float rounds to
  nearest even, float64 -> bf16/f8/f4 with a single rounding; the f8 types other than
  f8e5m2 have no inf, so overflow casts give NaN there (f4e2m1, with neither, saturates
  and takes NaN to a zero, as ml_dtypes does);
  f8e8m0 (a bare exponent) rounds the magnitude up to a power of two, as ONNX's Cast;
- quantize rounds half to even and saturates (f8: to ±max finite, infinities too); for
  int results NaN quantises to 0, like a cast;
- gather, narrow, slice and reflect padding out of range raise ``ExecutionError`` naming
  the op; every error message names the tensor or op (with its source location).

Fused ops are defined as their primitive chain (same kernels, same order, same
roundings), so they are bit-identical to the unfused graph.
"""

from rlx_compile.interpreter import hir as _hir  # noqa: F401  (registers the HIR ops)
from rlx_compile.interpreter import mir as _mir  # noqa: F401  (registers the MIR ops)
from rlx_compile.interpreter.core import (
    Env,
    ExecutionError,
    Kernel,
    evaluate_op,
    execute_graph,
    has_impl,
    impl,
    lookup,
    prepare,
    run,
)
from rlx_compile.interpreter.lir import run_arena

__all__ = [
    "Env",
    "ExecutionError",
    "Kernel",
    "evaluate_op",
    "execute_graph",
    "has_impl",
    "impl",
    "lookup",
    "prepare",
    "run",
    "run_arena",
]
