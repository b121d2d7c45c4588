"""``fuse-shared-input-matmul``: two or more matmuls of one input against rank-2 weights
become one wider matmul against the concatenated weights, plus one narrow per original
product (starts at the running sum of the widths): the input is read once.

The fused matmul goes where the first of them was, so every weight must already exist
there; and each later product then lives from the first one on: matmuls far apart (an
encoder's output read by every decoder layer's cross-attention) would keep theirs live
across everything in between. So the matmuls are taken in block order, each joining the
fusion of those before it where its weight exists at that fusion's first matmul and the
longer lives do not raise the graph's source-order peak of live bytes
(``SourceOrderLiveness``); one that cannot starts a fusion with those after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import TensorType
from rlx_compile.fusion.base import FusionContext, FusionPattern, Match, Miss, defined_before, users
from rlx_compile.fusion.stage import FusionPass
from rlx_compile.ir import in_block_order
from rlx_compile.memory.source_order import SourceOrderLiveness


def _candidate(op: Operation) -> bool:
    if not isinstance(op, mir.MatmulOp):
        return False
    if isinstance(op.lhs.owner, mir.DequantizeOp) and isinstance(op.rhs.owner, mir.DequantizeOp):
        # A quantised product (a QDQ model's, its weight kept as integers for
        # quant-to-integer): an integer kernel of its own, requantised to its own scale,
        # where a wider one would need the products apart again.
        return False
    w = type_of(op.rhs)
    return w.rank == 2 and isinstance(w.shape[1], int) and type_of(op.lhs).rank >= 1


def _nbytes(op: Operation) -> int:
    return cast(TensorType, op.results[0].type).nbytes() or 0


class _Pressure:
    """A block's source-order profile of live bytes as the fusions leave it: each fused
    matmul stands where the first of its members stood."""

    def __init__(self, block: Block):
        assert block.last_op is not None
        live = SourceOrderLiveness.of_block(block, list(block.last_op.operands))
        self.step = live.step
        self.profile = live.profile()
        self.peak = int(self.profile.max()) if len(self.profile) else 0

    def extra(self, members: list[mir.MatmulOp]) -> list[tuple[int, int, int]]:
        """What fusing ``members`` (in block order) adds: each later product, live from
        the first member's step to its own, as (start, end, bytes)."""
        start = self.step[members[0]]
        return [(start, self.step[m], _nbytes(m)) for m in members[1:]]

    def raises(self, members: list[mir.MatmulOp]) -> bool:
        extra = self.extra(members)
        end = max(e for _, e, _ in extra)
        p = self.profile[extra[0][0] : end].copy()
        for start, e, nbytes in extra:
            p[: e - start] += nbytes
        return bool(len(p)) and int(p.max()) > self.peak

    def fuse(self, members: list[mir.MatmulOp], new: list[Operation]) -> None:
        for start, end, nbytes in self.extra(members):
            self.profile[start:end] += nbytes
        for op in new:
            self.step[op] = self.step[members[0]]


LATE_WEIGHT = Miss(
    "its weight is computed after the first matmul of this input it would fuse with",
    "compute the weights before the first matmul reading the input",
)
LONGER_LIVES = Miss(
    "fused with the matmuls of this input before it, its product would live from the "
    "first of them on and raise the peak of live bytes",
    "none: it fuses with those after it, or stays on its own",
)


@dataclass
class SharedInput(Match):
    members: list[mir.MatmulOp]


class FuseSharedInputMatmul(FusionPattern):
    name = "shared_input_matmul"
    roots = (mir.MatmulOp,)

    def __init__(self, ctx: FusionContext):
        super().__init__(ctx)
        self._pressure: dict[Block, _Pressure] = {}

    def _fusions(self, group: list[mir.MatmulOp]) -> list[tuple[list[mir.MatmulOp], Miss | None]]:
        """``group`` (in block order) cut where a matmul cannot join the fusion before it,
        each fusion with why it was cut there (None for the first)."""
        block = group[0].parent
        assert block is not None
        fusions: list[tuple[list[mir.MatmulOp], Miss | None]] = [([group[0]], None)]
        pressure = self._pressure.get(block)
        if pressure is None:
            pressure = self._pressure[block] = _Pressure(block)
        for m in group[1:]:
            current = fusions[-1][0]
            if pressure.raises([*current, m]):
                fusions.append(([m], LONGER_LIVES))
            elif not defined_before(m.rhs, current[0]):
                fusions.append(([m], LATE_WEIGHT))
            else:
                current.append(m)
        return fusions

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MatmulOp)
        if not _candidate(op):
            return None
        group = in_block_order(
            [
                u
                for u in users(op.lhs)
                if isinstance(u, mir.MatmulOp) and _candidate(u) and u.parent is op.parent
            ]
        )
        group = [u for u in group if u.lhs is op.lhs]
        if len(group) < 2:
            return None  # not shared
        fusion, why = next((f, why) for f, why in self._fusions(group) if op in f)
        if fusion[0] is not op:
            return None  # the first of its fusion fuses
        if len(fusion) < 2:
            return why  # None for the first: the one after it says why it stays apart
        if (miss := self.ctx.unclaimed(mir.ConcatOp.name, mir.NarrowOp.name)) is not None:
            return miss
        return SharedInput(op, list(fusion), fusion)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, SharedInput)
        first = m.members[0]
        b, ops = self.builder(first)
        wide = b.matmul(first.lhs, b.concat([mm.rhs for mm in m.members], axis=1))
        axis = type_of(wide).rank - 1
        parts, start = [], 0
        for mm in m.members:
            width = type_of(mm.rhs).shape[1]
            assert isinstance(width, int)
            parts.append(b.narrow(wide, axis, start, width))
            start += width
        pressure = self._pressure.get(first.parent)  # type: ignore[arg-type]
        if pressure is not None:
            pressure.fuse(m.members, ops)
        rewriter.replace(first, ops, [parts[0]])
        for mm, part in zip(m.members[1:], parts[1:], strict=True):
            rewriter.replace(mm, [], [part])


@dataclass(frozen=True)
class FuseSharedInputMatmulPass(FusionPass):
    """Fuse matmuls of one input into one wider matmul plus narrows."""

    name = "fuse-shared-input-matmul"
    PATTERNS = (FuseSharedInputMatmul,)
