"""S5: every option, executed the way a worker is fed it (each piece gets only its slice,
as a parsed one-op module on the reference executor) and recombined, equals the whole
op: bit for bit for batch and rows cuts, within 1e-6 for cols and out-channel cuts."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from shard_testlib import OneOp, matmul_case, one_op

from rlx_compile.interpreter import evaluate_op
from rlx_compile.ir import graph_block
from rlx_compile.shard import Cut, piece_args, shardings
from rlx_compile.shard.pieces import (
    concat_pieces,
    execute_with,
    piece_texts,
    run_option,
    run_piece_text,
)
from rlx_compile.testing.random_graphs import random_mir_graph

TOLERANCE = 1e-6


def assert_recombines(case: OneOp, n: int) -> list[Cut]:
    whole = evaluate_op(case.op, case.args)[0]
    options = shardings(case.module, case.op, n)
    assert options, "the case must be cuttable"
    for opt in options:
        got = run_option(case.op, opt, case.args)
        assert got.dtype == whole.dtype and got.shape == whole.shape
        if opt.exact:
            assert got.tobytes() == whole.tobytes(), f"{opt.describe()} is not bit-identical"
        else:
            diff = np.abs(got.astype(np.float64) - whole.astype(np.float64)).max()
            assert diff <= TOLERANCE, f"{opt.describe()}: max abs diff {diff}"
    return [o.cut for o in options]


CASES: dict[str, Callable[[], OneOp]] = {
    "matmul": lambda: matmul_case((13, 40), (40, 21)),
    "matmul_batched": lambda: matmul_case((5, 7, 40), (5, 40, 9)),
    "matmul_shared_rhs": lambda: matmul_case((5, 7, 40), (40, 9)),
    "matmul_vector_rhs": lambda: matmul_case((5, 7, 40), (40,)),
    "matmul_bf16": lambda: one_op(
        [(9, 64), (64, 10)], lambda m, v: m.matmul(v[0], v[1]), dtype="bf16"
    ),
    "fused_matmul": lambda: one_op(
        [(12, 40), (40, 20), (20,)],
        lambda m, v: m.fused_matmul_bias_act(v[0], v[1], v[2], "gelu"),
    ),
    "fused_matmul_row_bias": lambda: one_op(
        [(2, 12, 40), (40, 20), (1, 1, 20)],
        lambda m, v: m.fused_matmul_bias_act(v[0], v[1], v[2], "relu"),
    ),
    "conv_g1": lambda: one_op(
        [(3, 4, 9, 9), (10, 4, 3, 3)],
        lambda m, v: m.conv(v[0], v[1], strides=[2, 2], pads=[1, 1, 1, 1]),
    ),
    "conv_g3": lambda: one_op(
        [(3, 6, 7, 7), (9, 2, 3, 3)], lambda m, v: m.conv(v[0], v[1], groups=3, dilations=[2, 1])
    ),
    "conv_depthwise": lambda: one_op(
        [(2, 4, 6, 6), (4, 1, 3, 3)], lambda m, v: m.conv(v[0], v[1], groups=4, pads=[1] * 4)
    ),
    "fused_conv_g2_residual": lambda: one_op(
        [(4, 4, 6, 6), (6, 2, 3, 3), (6,), (4, 6, 4, 4)],
        lambda m, v: m.fused_conv_bias_act(v[0], v[1], v[2], v[3], groups=2, act="silu"),
    ),
    "add_broadcast": lambda: one_op([(7, 5), (5,)], lambda m, v: m.add(v[0], v[1])),
    "gelu": lambda: one_op([(9, 33)], lambda m, v: m.gelu(v[0])),
    "where": lambda: one_op(
        [(6, 5), (6, 5), (1, 5)],
        lambda m, v: m.where(m.compare("gt", v[0], v[1]), v[0], v[2]),
    ),
    "cast": lambda: one_op([(6, 5)], lambda m, v: m.cast(v[0], "f16")),
}


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_option_recombines_to_the_whole_op(name: str, n: int) -> None:
    assert_recombines(CASES[name](), n)


def test_the_cases_cover_every_cut() -> None:
    seen = {cut for make in CASES.values() for cut in assert_recombines(make(), 2)}
    assert seen == set(Cut)


def test_a_piece_fed_the_wrong_slice_is_caught() -> None:
    # The check above can fail: hand piece 1 the rows of piece 0 and the result differs.
    case = matmul_case((8, 16), (16, 32))
    rows = shardings(case.module, case.op, 2)[0]
    texts = piece_texts(case.op, rows)
    wrong = [run_piece_text(texts[i], piece_args(rows, case.args, 0)) for i in range(2)]
    whole = evaluate_op(case.op, case.args)[0]
    assert not np.array_equal(concat_pieces(rows, wrong), whole)


def test_a_piece_rejects_a_slice_of_the_wrong_shape() -> None:
    case = matmul_case((9, 16), (16, 32))
    rows = shardings(case.module, case.op, 2)[0]  # pieces of 5 and 4 rows
    texts = piece_texts(case.op, rows)
    with pytest.raises(ValueError, match="has shape \\[5, 16\\], expected \\[4, 16\\]"):
        run_piece_text(texts[1], piece_args(rows, case.args, 0))


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_every_cuttable_op(seed: int) -> None:
    """Property: in random MIR graphs (elementwise ops with broadcasting, matmuls, casts,
    compare/where), every option of every op recombines."""
    g = random_mir_graph(seed, 30)
    run = execute_with(g.module, g.inputs, g.params)
    checked = 0
    for op in graph_block(run.graph).ops:
        for n in (2, 3):
            for opt in shardings(g.module, op, n):
                args = [run.values[v] for v in op.operands]
                got = run_option(op, opt, args)
                want = run.values[op.results[0]]
                if opt.exact:
                    assert got.tobytes() == want.tobytes(), f"{opt.label} {opt.describe()}"
                else:
                    # Random graphs' values reach ~15: 1e-6 applies per unit of magnitude.
                    bound = TOLERANCE * np.maximum(1.0, np.abs(want))
                    assert (np.abs(got - want) <= bound).all(), f"{opt.label} {opt.describe()}"
                checked += 1
    assert checked > 0


def test_an_option_for_another_op_is_rejected() -> None:
    a = matmul_case((8, 16), (16, 32))
    b = matmul_case((8, 24), (24, 32))  # same output, another K
    with pytest.raises(ValueError, match="does not describe"):
        run_option(b.op, shardings(a.module, a.op, 2)[0], b.args)
