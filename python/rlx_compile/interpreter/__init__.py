"""The reference executor: the NumPy meaning of every op, and the oracle that compiled
graphs are checked against.

``run(module, inputs, params)`` executes a graph; ``evaluate_op(op, args)`` one op.
Implementations are registered per op with ``@impl`` from each dialect's module here
(``interpreter.mir``; later levels add their own modules and import them below).
"""

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
    run,
)

__all__ = [
    "Env",
    "ExecutionError",
    "Kernel",
    "evaluate_op",
    "execute_graph",
    "has_impl",
    "impl",
    "lookup",
    "run",
]
