"""``fuse-lstm-cell``: an LSTM step's gates and state update as one ``mir.fused_lstm_cell``.

    cell   = sigmoid(f) · prev_cell + sigmoid(i) · tanh(g)
    hidden = sigmoid(o) · tanh(cell)

where i, o, f and g are the four blocks of H along the last dim of one gates tensor
[..., 4·H], taken by narrows, in any order (ONNX's LSTM converter writes i, o, f, c;
PyTorch's LSTMCell exports i, f, g, o as a Split or Slices, which import as narrows).
The products and the sum may take their operands in either order: IEEE products and
sums commute, so the fused op rounds as the chain does, bit for bit.

Rooted at the hidden product. The narrows, activations and products must each be read
by the step alone; the cell sum may have any readers (the next step, a graph output):
they read the fused op's second result. The op goes where the sum was, which its
operands (the gates and the previous cell) reach and every reader of either result
follows.

Near misses: a gate whose activation does not read a plain narrow of the gates (the
peepholes of ONNX's LSTM add p·c first; its ``clip`` clamps first), gate blocks of
different tensors or that do not tile the last dim, a previous cell state of another
shape (broadcast onto the batch), intermediates read elsewhere, the op unclaimed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import fmt_shape
from rlx_compile.fusion.base import (
    FusionPattern,
    Match,
    Miss,
    chain_miss,
    gate_blocks,
    operand_pairs,
    producer,
    reads,
)
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.FusedLstmCellOp.name
HINT = "the fused cell reads the four gate blocks of one [..., 4·H] tensor, H wide each"


@dataclass
class LstmCell(Match):
    gates: SSAValue
    prev_cell: SSAValue
    gate_order: tuple[int, ...]
    cell: mir.AddOp
    """The cell sum: the fused op goes in its place."""


@dataclass(frozen=True)
class _Step:
    """One reading of the chain: each gate's activation, the two products, the previous
    cell state."""

    sig_i: mir.SigmoidOp
    tanh_g: mir.TanhOp
    sig_f: mir.SigmoidOp
    sig_o: mir.SigmoidOp
    forget: mir.MulOp  # f · prev_cell
    update: mir.MulOp  # i · g
    prev_cell: SSAValue


def _readings(root: mir.MulOp) -> tuple[list[_Step], mir.AddOp | None, mir.TanhOp | None]:
    """Every way of reading ``root`` as sigmoid(o) · tanh(f · c + i · g), with the sum
    and its tanh; none when it is not such a product."""
    for a, b in operand_pairs(root):
        sig_o, tanh_c = producer(a, mir.SigmoidOp), producer(b, mir.TanhOp)
        cell = None if tanh_c is None else producer(tanh_c.input, mir.AddOp)
        if sig_o is None or tanh_c is None or cell is None:
            continue
        steps: list[_Step] = []
        for x, y in operand_pairs(cell):
            forget, update = producer(x, mir.MulOp), producer(y, mir.MulOp)
            if forget is None or update is None:
                continue
            for p, q in operand_pairs(update):
                sig_i, tanh_g = producer(p, mir.SigmoidOp), producer(q, mir.TanhOp)
                if sig_i is None or tanh_g is None:
                    continue
                for s, prev in operand_pairs(forget):
                    sig_f = producer(s, mir.SigmoidOp)
                    if sig_f is not None:
                        steps.append(_Step(sig_i, tanh_g, sig_f, sig_o, forget, update, prev))
        if steps:
            return steps, cell, tanh_c
    return [], None, None


class FuseLstmCell(FusionPattern):
    name = "lstm_cell"
    roots = (mir.MulOp,)
    needs = (mir.TanhOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MulOp)
        steps, cell, tanh_c = _readings(op)
        if not steps:
            return None
        assert cell is not None and tanh_c is not None
        first: Miss | None = None
        for step in steps:
            m = self._step(op, step, cell, tanh_c)
            if isinstance(m, Match):
                return m
            first = first or m
        return first

    def _step(self, root: mir.MulOp, s: _Step, cell: mir.AddOp, tanh_c: mir.TanhOp) -> Match | Miss:
        acts = (s.sig_i, s.sig_o, s.sig_f, s.tanh_g)
        gates: dict[str, mir.SigmoidOp | mir.TanhOp] = dict(zip(mir.LSTM_GATES, acts, strict=True))
        narrows: dict[str, mir.NarrowOp] = {}
        for name, act in gates.items():
            narrow = producer(act.input, mir.NarrowOp)
            if narrow is None:
                return Miss(
                    f"the {name} gate's {act.name.removeprefix('mir.')} reads "
                    f"{reads(act.input)}, not a narrow of the gates",
                    "peepholes, a clip or other activations keep the step as ops",
                )
            narrows[name] = narrow
        source = narrows["input"].input
        if any(n.input is not source for n in narrows.values()):
            return Miss("the gate blocks are narrows of different tensors", HINT)
        blocks = gate_blocks(list(narrows.values()), source, HINT)
        if isinstance(blocks, Miss):
            return blocks
        if type_of(s.prev_cell) != type_of(narrows["cell"].result):
            return Miss(
                f"the previous cell state is {fmt_shape(type_of(s.prev_cell).shape)}, not the "
                f"gate blocks' {fmt_shape(type_of(narrows['cell'].result).shape)}",
                "the fused cell takes a cell state of the gate blocks' shape",
            )
        links: list[tuple[SSAValue, Operation, str]] = [
            (n.result, gates[name], f"the {name} gate block") for name, n in narrows.items()
        ]
        links += [
            (s.sig_i.result, s.update, "the input gate"),
            (s.tanh_g.result, s.update, "the cell gate"),
            (s.sig_f.result, s.forget, "the forget gate"),
            (s.forget.result, cell, "the forget product"),
            (s.update.result, cell, "the input product"),
            (tanh_c.result, root, "the tanh of the cell"),
            (s.sig_o.result, root, "the output gate"),
        ]
        miss = chain_miss(links, "the step's intermediates must be read by the step alone")
        if miss is not None:
            return miss
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        absorbed: list[Operation] = [*narrows.values(), s.sig_i, s.tanh_g, s.sig_f]
        absorbed += [s.forget, s.update, cell, s.sig_o, tanh_c, root]
        return LstmCell(root, absorbed, source, s.prev_cell, tuple(blocks), cell)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, LstmCell)
        fused = mir.FusedLstmCellOp(m.gates, m.prev_cell, m.gate_order)
        fused.location = m.root.location
        # The gates and the previous cell are read by the sum's operands: both are there.
        rewriter.insert(fused, InsertPoint.before(m.cell))
        rewriter.replace_all_uses_with(m.cell.result, fused.cell)
        self.replace(rewriter, m, [], [fused.hidden])


@dataclass(frozen=True)
class FuseLstmCellPass(FusionPass):
    """Fuse an LSTM step's gates and state update into mir.fused_lstm_cell."""

    name = "fuse-lstm-cell"
    PATTERNS = (FuseLstmCell,)
