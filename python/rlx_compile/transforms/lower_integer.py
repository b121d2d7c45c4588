"""``lower-integer{target=T}``: the integer kernels T does not claim (``mir.integer_conv``
and ``mir.integer_matmul`` an imported QLinearConv / QLinearMatMul is, a
``mir.quantized_add``, a ``mir.quantized_avg_pool``, a ``mir.quantized_softmax``) as the
ops their reference semantics names (legalize's ``LowerIntegerLinear``,
``LowerQuantizedAdd``, ``LowerQuantizedAvgPool`` and ``LowerQuantizedSoftmax``: an exact
integer product and the f32 epilogue; dequantize, add, quantize; an exact window mean, a
product, a quantize; the table's exponentials, their exact sum, a division, a quantize).
The pipeline runs it before fusion, as
``lower-recurrent``, so that the epilogues fuse as any model's ops do; ``legalize``
alone would lower them after fusion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.pattern_rewriter import RewritePattern

from rlx_compile.dialects import mir
from rlx_compile.fusion.base import run_patterns
from rlx_compile.legalization.base import UnclaimedOnly
from rlx_compile.legalization.quant import (
    LowerIntegerLinear,
    LowerQuantizedAdd,
    LowerQuantizedAvgPool,
    LowerQuantizedSoftmax,
)
from rlx_compile.targets import TargetPass


class _LowerUnclaimedLinear(UnclaimedOnly, LowerIntegerLinear):
    roots: ClassVar[tuple[type[Operation], ...]] = (mir.IntegerMatmulOp, mir.IntegerConvOp)


class _LowerUnclaimedAdd(UnclaimedOnly, LowerQuantizedAdd):
    roots: ClassVar[tuple[type[Operation], ...]] = (mir.QuantizedAddOp,)


class _LowerUnclaimedAvgPool(UnclaimedOnly, LowerQuantizedAvgPool):
    roots: ClassVar[tuple[type[Operation], ...]] = (mir.QuantizedAvgPoolOp,)


class _LowerUnclaimedSoftmax(UnclaimedOnly, LowerQuantizedSoftmax):
    roots: ClassVar[tuple[type[Operation], ...]] = (mir.QuantizedSoftmaxOp,)


_PATTERNS = (
    _LowerUnclaimedLinear, _LowerUnclaimedAdd, _LowerUnclaimedAvgPool, _LowerUnclaimedSoftmax,
)  # fmt: skip


@dataclass(frozen=True)
class LowerIntegerPass(TargetPass):
    """Lower the integer kernels the target does not claim to the ops they stand for."""

    name = "lower-integer"
    ACTS_ON: ClassVar[tuple[type[Operation], ...]] = tuple(
        kind for pattern in _PATTERNS for kind in pattern.roots
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = self.resolved()
        patterns: list[RewritePattern] = [pattern(target) for pattern in _PATTERNS]
        run_patterns(op, patterns, reverse=False)
