"""``legalize-broadcast{target=T}``: make implicit broadcasting explicit with ``mir.expand``
for targets whose elementwise kernels cannot broadcast.

- ``trailing`` targets (kernels index each operand modulo its size, as RLX's CPU and
  wgpu kernels do): an operand stays as it is when it has the result's shape, holds one
  element, or is a trailing suffix of the result's shape (``[8]`` into ``[4, 8]``);
  any other operand (``[1, 2, 1, 1]`` into ``[1, 2, 3, 3]``) is expanded first;
- ``none`` targets: every operand not of the result's shape is expanded;
- ``native`` targets: nothing changes.
Elementwise ops with two or more operands (binary, compare, where) are rewritten;
``mir.elementwise_region`` bodies are left alone (a region kernel indexes its inputs
itself).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import Elementwise
from rlx_compile.dialects.types import Dim
from rlx_compile.fusion.base import fusible_here, run_patterns
from rlx_compile.targets import get_target


def needs_expand(shape: Sequence[Dim], out: Sequence[Dim], mode: str) -> bool:
    if tuple(shape) == tuple(out):
        return False
    if mode == "none":
        return True
    if all(isinstance(d, int) for d in shape) and math.prod(int(d) for d in shape) == 1:
        return False
    return len(shape) > len(out) or tuple(out[len(out) - len(shape) :]) != tuple(shape)


class ExplicitBroadcast(RewritePattern):
    def __init__(self, mode: str):
        self.mode = mode

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not (
            op.has_trait(Elementwise)
            and len(op.operands) >= 2
            and not isinstance(op, mir.ElementwiseRegionOp)
            and fusible_here(op)  # not inside an elementwise region's body
        ):
            return
        out = type_of(op.results[0]).shape
        operands = list(op.operands)
        for i, v in enumerate(operands):
            if needs_expand(type_of(v).shape, out, self.mode):
                expand = mir.ExpandOp(v, out)
                expand.location = op.location
                rewriter.insert(expand, InsertPoint.before(op))
                operands[i] = expand.result
        if any(a is not b for a, b in zip(operands, op.operands, strict=True)):
            op.operands = operands
            rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class LegalizeBroadcastPass(ModulePass):
    """Insert mir.expand where the target's elementwise kernels cannot broadcast."""

    name = "legalize-broadcast"

    target: str = "cpu"

    def __post_init__(self) -> None:
        get_target(self.target)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        mode = get_target(self.target).broadcast
        if mode != "native":
            run_patterns(op, [ExplicitBroadcast(mode)], reverse=False)
