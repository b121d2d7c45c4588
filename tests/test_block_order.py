"""``is_before``/``in_block_order`` stay right while ops are inserted and erased (and, in
a tracking scope, moved in from another block)."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.test import TestOp as Op
from xdsl.ir import Block

from rlx_compile.ir import in_block_order, is_before, tracking_block_order

edit = st.tuples(st.sampled_from(["insert", "erase", "move-in", "move"]), st.integers(0, 10**6),
                 st.integers(0, 10**6))  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 30), st.lists(edit, max_size=60), st.booleans())
def test_order_matches_the_block(n: int, edits: list[tuple[str, int, int]], track: bool) -> None:
    block, other = Block([Op() for _ in range(n)]), Block([Op() for _ in range(n)])
    with tracking_block_order() if track else contextlib.nullcontext():
        for kind, i, j in edits:
            ops = list(block.ops)
            if kind == "erase" and len(ops) > 1:
                block.erase_op(ops[i % len(ops)])
            elif kind == "move-in" and other.first_op is not None:
                op = other.first_op
                op.detach()
                block.insert_op_before(op, ops[i % len(ops)])
            elif kind == "move" and not track and len(ops) > 1:  # only outside a scope
                op, anchor = ops[i % len(ops)], ops[j % len(ops)]
                if op is not anchor:
                    op.detach()
                    block.insert_op_after(op, anchor)
            else:
                block.insert_op_before(Op(), ops[i % len(ops)])
            ops = list(block.ops)
            a, b = ops[i % len(ops)], ops[j % len(ops)]
            assert is_before(a, b) == (ops.index(a) < ops.index(b))
            some = [ops[k % len(ops)] for k in (j, i + j, i)]
            assert in_block_order(some) == sorted(some, key=ops.index)
