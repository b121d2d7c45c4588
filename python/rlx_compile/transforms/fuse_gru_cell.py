"""``fuse-gru-cell``: a GRU step's gates and state update as one ``mir.fused_gru_cell``.

    r = sigmoid(gx_r + gh_r)
    z = sigmoid(gx_z + gh_z)
    n = tanh(gx_n + r · gh_n)
    h' = (1 - z) · n + z · h

where gx_* and gh_* are the three blocks of H along the last dim of the input projection
gx and the recurrent one gh [..., 3·H], taken by narrows, in any order as long as gx and
gh agree (PyTorch's GRUCell, and decoders written by hand, export r, z, n as Gemms and
Slices or a Split; ONNX's GRU orders them z, r, h). The sums and products may take their
operands in either order: IEEE sums and products commute, and ``1 - z`` is the same
subtraction, so the fused op rounds as the chain does, bit for bit.

Rooted at the final sum; its readers read the fused op, which goes in its place (gx, gh
and h reach it through the chain). Every other intermediate must be read by the step
alone (z by ``1 - z`` and ``z · h``).

Near misses: a new gate not of the form gx_n + r · gh_n (ONNX's default
``linear_before_reset = 0`` multiplies r into h before the recurrent product; a clip
clamps first), gates that do not read a sum of a gx and a gh block, blocks that do not
tile the last dim or are in different orders in gx and gh, a previous state of another
shape (broadcast onto the batch), intermediates read elsewhere, the op unclaimed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import fmt_shape
from rlx_compile.fusion.base import (
    FusionPattern,
    Match,
    Miss,
    chain_miss,
    describe_uses,
    gate_blocks,
    is_output,
    operand_pairs,
    producer,
    reads,
    scalar_constant,
    users,
)
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.FusedGruCellOp.name
HINT = "the fused cell reads the three gate blocks of gx and of gh, [..., 3·H] each, in one order"
OPS_HINT = "a clip, linear_before_reset = 0 or other activations keep the step as ops"


@dataclass
class GruCell(Match):
    gx: SSAValue
    gh: SSAValue
    prev: SSAValue
    gate_order: tuple[int, ...]


@dataclass(frozen=True)
class _Step:
    """One reading of the update ``(1 - z) · n + z · h``."""

    sig_z: mir.SigmoidOp
    one_minus_z: mir.SubOp
    tanh_n: mir.TanhOp
    mix: mir.MulOp  # (1 - z) · n
    keep: mir.MulOp  # z · h
    prev: SSAValue


def _readings(root: mir.AddOp) -> list[_Step]:
    """Every way of reading ``root`` as (1 - z) · tanh(…) + z · h, z one sigmoid."""
    steps: list[_Step] = []
    for a, b in operand_pairs(root):
        mix, keep = producer(a, mir.MulOp), producer(b, mir.MulOp)
        if mix is None or keep is None:
            continue
        for p, q in operand_pairs(mix):
            sub, tanh_n = producer(p, mir.SubOp), producer(q, mir.TanhOp)
            if sub is None or tanh_n is None or scalar_constant(sub.lhs) != 1.0:
                continue
            sig_z = producer(sub.rhs, mir.SigmoidOp)
            if sig_z is None or type_of(sub.result) != type_of(sig_z.result):
                continue
            for s, prev in operand_pairs(keep):
                if s is sig_z.result:
                    steps.append(_Step(sig_z, sub, tanh_n, mix, keep, prev))
    return steps


def _new_gate(
    tanh_n: mir.TanhOp,
) -> tuple[mir.AddOp, mir.NarrowOp, mir.MulOp, mir.SigmoidOp, mir.NarrowOp] | None:
    """tanh(gx_n + r · gh_n): its sum, gx_n, the product, r's sigmoid and gh_n."""
    total = producer(tanh_n.input, mir.AddOp)
    if total is None:
        return None
    for a, b in operand_pairs(total):
        x_n, prod = producer(a, mir.NarrowOp), producer(b, mir.MulOp)
        if x_n is None or prod is None:
            continue
        for p, q in operand_pairs(prod):
            sig_r, h_n = producer(p, mir.SigmoidOp), producer(q, mir.NarrowOp)
            if sig_r is not None and h_n is not None:
                return total, x_n, prod, sig_r, h_n
    return None


def _gate_sum(
    sig: mir.SigmoidOp, gx: SSAValue, gh: SSAValue
) -> tuple[mir.AddOp, mir.NarrowOp, mir.NarrowOp] | None:
    """sigmoid(gx_k + gh_k): its sum and the two narrows (of gx, of gh)."""
    total = producer(sig.input, mir.AddOp)
    if total is None:
        return None
    for a, b in operand_pairs(total):
        x, h = producer(a, mir.NarrowOp), producer(b, mir.NarrowOp)
        if x is not None and h is not None and x.input is gx and h.input is gh:
            return total, x, h
    return None


class FuseGruCell(FusionPattern):
    name = "gru_cell"
    roots = (mir.AddOp,)
    needs = (mir.TanhOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.AddOp)
        first: Miss | None = None
        for step in _readings(op):
            m = self._step(op, step)
            if isinstance(m, Match):
                return m
            first = first or m
        return first

    def _step(self, root: mir.AddOp, s: _Step) -> Match | Miss:
        new = _new_gate(s.tanh_n)
        if new is None:
            total = producer(s.tanh_n.input, mir.AddOp)
            what = (
                f"tanh reads {reads(s.tanh_n.input)}"
                if total is None
                else f"sum adds {reads(total.lhs)} and {reads(total.rhs)}"
            )
            return Miss(f"the new gate's {what}, not gx_n + r · gh_n", OPS_HINT)
        n_sum, x_n, r_prod, sig_r, h_n = new
        gx, gh = x_n.input, h_n.input
        sums: dict[str, tuple[mir.AddOp, mir.NarrowOp, mir.NarrowOp]] = {}
        for name, sig in (("reset", sig_r), ("update", s.sig_z)):
            found = _gate_sum(sig, gx, gh)
            if found is None:
                return Miss(
                    f"the {name} gate's sigmoid reads {reads(sig.input)}, not the sum of a "
                    "block of gx and one of gh",
                    OPS_HINT,
                )
            sums[name] = found
        if type_of(gx) != type_of(gh):
            return Miss(
                f"the gates are {fmt_shape(type_of(gx).shape)} and "
                f"{fmt_shape(type_of(gh).shape)}, not one shape",
                HINT,
            )
        x_narrows = {"update": sums["update"][1], "reset": sums["reset"][1], "new": x_n}
        h_narrows = {"update": sums["update"][2], "reset": sums["reset"][2], "new": h_n}
        x_blocks = gate_blocks(list(x_narrows.values()), gx, HINT)
        if isinstance(x_blocks, Miss):
            return x_blocks
        h_blocks = gate_blocks(list(h_narrows.values()), gh, HINT)
        if isinstance(h_blocks, Miss):
            return h_blocks
        if x_blocks != h_blocks or any(
            a.length != b.length
            for a, b in zip(x_narrows.values(), h_narrows.values(), strict=True)
        ):
            return Miss(
                f"the gate blocks are {x_blocks} of gx but {h_blocks} of gh (update, reset, new)",
                HINT,
            )
        block = type_of(x_n.result)
        if type_of(s.prev) != block:
            return Miss(
                f"the previous hidden state is {fmt_shape(type_of(s.prev).shape)}, not the "
                f"gate blocks' {fmt_shape(block.shape)}",
                "the fused cell takes a hidden state of the gate blocks' shape",
            )
        links: list[tuple[SSAValue, Operation, str]] = []
        for name, (total, nx, nh) in sums.items():
            links += [
                (nx.result, total, f"the {name} gate's block of gx"),
                (nh.result, total, f"the {name} gate's block of gh"),
            ]
        links += [
            (sums["reset"][0].result, sig_r, "the reset gate's sum"),
            (sums["update"][0].result, s.sig_z, "the update gate's sum"),
            (x_n.result, n_sum, "the new gate's block of gx"),
            (h_n.result, r_prod, "the new gate's block of gh"),
            (sig_r.result, r_prod, "the reset gate"),
            (r_prod.result, n_sum, "the reset product"),
            (n_sum.result, s.tanh_n, "the new gate's sum"),
            (s.tanh_n.result, s.mix, "the new gate"),
            (s.one_minus_z.result, s.mix, "1 - z"),
            (s.mix.result, root, "the new state's share"),
            (s.keep.result, root, "the old state's share"),
        ]
        miss = chain_miss(links, "the step's intermediates must be read by the step alone")
        if miss is not None:
            return miss
        z_readers = users(s.sig_z.result)
        if is_output(s.sig_z.result) or len(z_readers) != 2:
            return Miss(
                describe_uses(s.sig_z.result, "the update gate"),
                "the step's intermediates must be read by the step alone",
            )
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        order = (x_blocks[0], x_blocks[1], x_blocks[2])  # update, reset, new
        absorbed: list[Operation] = [*x_narrows.values(), *h_narrows.values()]
        absorbed += [sums["reset"][0], sig_r, sums["update"][0], s.sig_z, r_prod, n_sum]
        absorbed += [s.tanh_n, s.one_minus_z, s.mix, s.keep, root]
        if any(s.prev.owner is op for op in absorbed):
            return Miss("the previous hidden state is computed by the step", OPS_HINT)
        return GruCell(root, absorbed, gx, gh, s.prev, order)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, GruCell)
        fused = mir.FusedGruCellOp(m.gx, m.gh, m.prev, m.gate_order)
        fused.location = m.root.location
        self.replace(rewriter, m, [fused], [fused.result])


@dataclass(frozen=True)
class FuseGruCellPass(FusionPass):
    """Fuse a GRU step's gates and state update into mir.fused_gru_cell."""

    name = "fuse-gru-cell"
    PATTERNS = (FuseGruCell,)
