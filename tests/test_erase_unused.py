"""``ir.erase_unused`` erases what the plain definition erases -- rounds over the ops
until a round erases nothing -- and returns the same ops in the order given, on random
graphs whose ops are given in block order or shuffled."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from rlx_compile import ModuleBuilder
from rlx_compile.ir import erase_unread, erase_unused, main_graph, print_module


def by_rounds(ops: list[Operation]) -> list[Operation]:
    """The definition: erase every op of ``ops`` that nobody reads, again until none is."""
    left = [op for op in dict.fromkeys(ops) if op.parent is not None]
    while True:
        kept = []
        for op in left:
            if any(r.first_use is not None for r in op.results):
                kept.append(op)
            else:
                Rewriter.erase_op(op)
        if len(kept) == len(left):
            return kept
        left = kept


def graph_ops(seed: int) -> list[Operation]:
    """A random graph's ops but the inputs and return, the same for the same seed."""
    rng = random.Random(seed)
    with ModuleBuilder("g") as m:
        x = m.input("x", (4,))
        values = [x]
        for _ in range(rng.randint(1, 30)):
            a, b = rng.choice(values), rng.choice(values)
            values.append(m.add(a, b) if rng.random() < 0.5 else m.neg(a))
        m.output(*rng.sample(values[1:], k=min(2, len(values) - 1)))
    block = main_graph(m.module).body.block
    ops = [op for op in block.ops if op is not block.last_op and op.name != "mir.input"]
    if rng.random() < 0.5:
        rng.shuffle(ops)
    return ops


def kept_positions(erase: Callable[[list[Operation]], list[Operation]], seed: int) -> list[int]:
    ops = graph_ops(seed)
    return [ops.index(op) for op in erase(ops)]


@pytest.mark.parametrize("seed", range(40))
def test_erases_what_rounds_erase(seed: int) -> None:
    ops = graph_ops(seed)
    erased: list[Operation] = []
    kept = erase_unused(ops, lambda op: (erased.append(op), Rewriter.erase_op(op))[1])
    assert [ops.index(op) for op in kept] == kept_positions(by_rounds, seed)
    assert all(op.parent is None for op in erased)
    assert len(kept) + len(erased) == len(ops)


@pytest.mark.parametrize("seed", range(40))
def test_erase_unread_leaves_what_erase_op_leaves(seed: int) -> None:
    """``erase_unread`` against ``Rewriter.erase_op``: the same block printed, the same
    use lists on the values that stay, and the erased ops out of it."""

    def after(erase: Callable[[Operation], None]) -> tuple[str, list[list[int]]]:
        ops = graph_ops(seed)
        block = ops[0].parent
        assert block is not None
        erased = [op for op in ops if op not in erase_unused(ops, erase)]
        assert all(op.parent is None and op.next_op is None for op in erased)
        assert not any(use.operation in erased for v in block.args for use in v.uses)
        uses = [
            sorted(ops.index(u.operation) if u.operation in ops else -1 for u in r.uses)
            for op in block.ops
            for r in op.results
        ]
        return print_module(block.parent_op() or ops[0]), uses

    assert after(erase_unread) == after(Rewriter.erase_op)
