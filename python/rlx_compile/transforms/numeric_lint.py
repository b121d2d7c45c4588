"""``numeric-lint{max-elements=N}``: warn about bad numbers known at compile time.

Compile-time values only -- constants and what folds from them under the reference
semantics (``rlx_compile.folding``); a value computed from inputs or params is never
judged. Each finding is a warning at the op that *creates* the problem (a constant
literal, or an op whose known operands are clean), with a fix hint keyed by the op:

- ``nan`` / ``pos-inf`` / ``neg-inf``: a non-finite element (the first one decides);
- ``f16-overflow`` / ``bf16-overflow``: an f32/f64 value beyond the largest finite f16
  (65504) or bf16, which mixed precision or a cast would turn into an infinity;
- ``denormal``: a subnormal element, which flush-to-zero hardware reads as 0.

No IR is changed. ``lint_numerics(module)`` returns the findings; the pass reports them
with ``diagnostics.warn`` (stderr for ``rlx-opt``, ``CompileResult.warnings``).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from rlx_compile.diagnostics import warn
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.folding import DEFAULT_MAX_ELEMENTS, KnownValues, KnownValuesPass
from rlx_compile.ir import func_graphs, graph_blocks

_F16_MAX = float(np.finfo(np.float16).max)
_BF16_MAX = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)

_FIXES: dict[str, str] = {
    "mir.constant": "check the literal",
    "mir.div": "guard the denominator against 0",
    "mir.reciprocal": "guard the input against 0",
    "mir.mod": "guard the divisor against 0",
    "mir.rsqrt": "add an epsilon or clamp the input to > 0",
    "mir.sqrt": "clamp the input to >= 0",
    "mir.log": "clamp the input to at least a small epsilon",
    "mir.exp": "subtract the maximum first or clamp the input",
    "mir.pow": "keep the base positive or the exponent bounded",
    "mir.softmax": "mask with a large finite negative value, not -inf",
    "mir.log_softmax": "mask with a large finite negative value, not -inf",
    "mir.cast": "scale or clamp the value into the target type's range before the cast",
}
_RANGE_FIX = "keep the value in f32 or rescale it"
_DENORMAL_FIX = "flush it to 0 or rescale it"


@dataclass(frozen=True)
class NumericLint:
    op: Operation
    kind: str
    reason: str
    fix: str

    def message(self) -> str:
        return f"{self.reason} [{self.kind}]; fix: {self.fix}"


def _kinds(array: np.ndarray, dtype: DType) -> list[str]:
    """The problems of one value, in a fixed order."""
    if not dtype.is_float or array.size == 0:
        return []
    x = np.asarray(array, dtype=np.float64).reshape(-1)
    found: list[str] = []
    bad = ~np.isfinite(x)
    if bad.any():
        first = x[int(np.argmax(bad))]
        found.append("nan" if np.isnan(first) else "pos-inf" if first > 0 else "neg-inf")
    finite = np.abs(x[~bad])
    if dtype in (DType.F32, DType.F64) and finite.size:
        largest = float(finite.max())
        if largest > _BF16_MAX:
            found.append("bf16-overflow")
        elif largest > _F16_MAX:
            found.append("f16-overflow")
    tiny = float(ml_dtypes.finfo(dtype.numpy).smallest_normal)
    if bool(((finite > 0) & (finite < tiny)).any()):
        found.append("denormal")
    return found


def _reason(kind: str, literal: bool) -> str:
    subject = "constant literal" if literal else "constant subgraph"
    if kind in ("nan", "pos-inf", "neg-inf"):
        return f"{subject} {'is' if literal else 'folds to'} a non-finite value"
    if kind == "f16-overflow":
        return f"{subject} holds a value beyond f16's range (max {_F16_MAX:g})"
    if kind == "bf16-overflow":
        return f"{subject} holds a value beyond bf16's range (max {_BF16_MAX:g})"
    return f"{subject} holds subnormal values"


def _fix(kind: str, op: Operation) -> str:
    if kind.endswith("-overflow"):
        return _RANGE_FIX
    if kind == "denormal":
        return _DENORMAL_FIX
    return _FIXES.get(op.name, "check the constant operands of this op")


def lint_numerics(module: ModuleOp, max_elements: int = DEFAULT_MAX_ELEMENTS) -> list[NumericLint]:
    """The findings for every graph of ``module``, in graph and op order."""
    lints: list[NumericLint] = []
    for graph in func_graphs(module):
        for block in graph_blocks(graph):
            known = KnownValues(max_elements)
            kinds: dict[SSAValue, list[str]] = {}
            for op in block.ops:
                literal = isinstance(op, mir.ConstantOp)
                values = [known.get(op.results[0])] if literal else known.evaluate(op)
                if values is None:
                    continue
                inherited = {k for v in op.operands for k in kinds.get(v, [])}
                for value, array in zip(op.results, values, strict=True):
                    assert array is not None and isinstance(value.type, TensorType)
                    kinds[value] = _kinds(array, value.type.dtype)
                    for kind in kinds[value]:
                        if kind not in inherited:
                            lints.append(
                                NumericLint(op, kind, _reason(kind, literal), _fix(kind, op))
                            )
    return lints


@dataclass(frozen=True)
class NumericLintPass(KnownValuesPass):
    """Warn about NaN/Inf, f16/bf16 overflow and denormals in compile-time values."""

    name = "numeric-lint"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for lint in lint_numerics(op, self.max_elements):
            warn(lint.op, lint.message())
