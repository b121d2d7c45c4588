"""shardings(): which cuts exist, their ranges, sliced/shared operands and bytes (spec
§9.10 S1-S4 and the cases around them)."""

from __future__ import annotations

import dataclasses

import pytest
from shard_testlib import matmul_case, one_op

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.shard import (
    Cut,
    ShardError,
    check_ranges,
    even_ranges,
    flops_per_output_elem,
    shardings,
)


def cuts(options) -> list[Cut]:  # type: ignore[no-untyped-def]
    return [o.cut for o in options]


def test_s1_matmul_rows_and_cols_never_k() -> None:
    case = matmul_case((8, 16), (16, 32))
    rows, cols = shardings(case.module, case.op, 2)
    assert (rows.cut, rows.axis, rows.ranges) == (Cut.ROWS, 0, ((0, 4), (4, 4)))
    assert [(s.name, s.value, s.axis) for s in rows.sliced] == [("lhs", "a0", 0)]
    assert [(s.name, s.value) for s in rows.shared] == [("rhs", "a1")]
    assert (rows.sliced_in_bytes, rows.shared_in_bytes, rows.out_bytes) == (512, 2048, 1024)
    assert rows.exact and rows.piece_out_elems == (128, 128)
    assert (cols.cut, cols.axis, cols.ranges) == (Cut.COLS, 1, ((0, 16), (16, 16)))
    assert [(s.name, s.axis) for s in cols.sliced] == [("rhs", 1)]
    assert [s.name for s in cols.shared] == ["lhs"]
    assert (cols.sliced_in_bytes, cols.shared_in_bytes, cols.out_bytes) == (2048, 512, 1024)
    assert not cols.exact
    # No option cuts the contraction dim: lhs axis 1 / rhs axis 0.
    for o in (rows, cols):
        assert all((s.name, s.axis) not in {("lhs", 1), ("rhs", 0)} for s in o.sliced)


def test_s1_uneven_pieces_put_the_remainder_first() -> None:
    case = matmul_case((8, 16), (16, 32))
    rows = shardings(case.module, case.op, 3)[0]
    assert rows.ranges == ((0, 3), (3, 3), (6, 2))
    assert rows.piece_out_elems == (96, 96, 64)
    assert rows.describe() == "rows axis 0 [0:3, 3:6, 6:8]"


def test_s2_batched_matmul_has_a_batch_cut_slicing_both() -> None:
    case = matmul_case((4, 8, 16), (4, 16, 32))
    batch, rows, cols = shardings(case.module, case.op, 2)
    assert cuts([batch, rows, cols]) == [Cut.BATCH, Cut.ROWS, Cut.COLS]
    assert [(s.name, s.axis) for s in batch.sliced] == [("lhs", 0), ("rhs", 0)]
    assert batch.shared == () and batch.exact
    assert (rows.axis, [(s.name, s.axis) for s in rows.sliced]) == (1, [("lhs", 1)])
    assert (cols.axis, [(s.name, s.axis) for s in cols.sliced]) == (2, [("rhs", 2)])


@pytest.mark.parametrize(
    ("a", "b", "sliced", "shared"),
    [
        ((4, 8, 16), (16, 32), ["lhs"], ["rhs"]),  # data parallel: the weight is shared
        ((1, 8, 16), (4, 16, 32), ["rhs"], ["lhs"]),  # lhs broadcasts over the batch
        ((2, 4, 8, 16), (4, 16, 32), ["lhs"], ["rhs"]),  # rhs lacks the leading batch dim
    ],
)
def test_batch_cut_slices_only_operands_that_carry_the_batch_dim(
    a: tuple[int, ...], b: tuple[int, ...], sliced: list[str], shared: list[str]
) -> None:
    case = matmul_case(a, b)
    batch = shardings(case.module, case.op, 2)[0]
    assert batch.cut is Cut.BATCH
    assert [s.name for s in batch.sliced] == sliced
    assert [s.name for s in batch.shared] == shared


def test_vector_operands_drop_the_rows_or_cols_cut() -> None:
    case = matmul_case((16,), (16, 8))  # [K] x [K, N] -> [N]: no M
    assert cuts(shardings(case.module, case.op, 2)) == [Cut.COLS]
    case = matmul_case((8, 16), (16,))  # [M, K] x [K] -> [M]: no N
    (rows,) = shardings(case.module, case.op, 2)
    assert (rows.cut, rows.axis) == (Cut.ROWS, 0)
    case = matmul_case((3, 8, 16), (16,))  # batch then rows on [3, 8]
    assert [(o.cut, o.axis) for o in shardings(case.module, case.op, 2)] == [
        (Cut.BATCH, 0),
        (Cut.ROWS, 1),
    ]


@pytest.mark.parametrize(("bias", "bias_sliced"), [((32,), True), ((1,), False), ((), False)])
def test_fused_matmul_bias_goes_with_its_columns(bias: tuple[int, ...], bias_sliced: bool) -> None:
    case = one_op(
        [(8, 16), (16, 32), bias], lambda m, v: m.fused_matmul_bias_act(v[0], v[1], v[2], "gelu")
    )
    rows, cols = shardings(case.module, case.op, 2)
    assert [s.name for s in rows.shared] == ["weight", "bias"]
    assert ("bias" in [s.name for s in cols.sliced]) is bias_sliced
    nbias = 4 * (bias[0] if bias else 1)
    assert cols.sliced_in_bytes == 2048 + (nbias if bias_sliced else 0)


def test_s3_conv_batch_and_out_channels() -> None:
    case = one_op(
        [(2, 3, 8, 8), (16, 3, 3, 3), (16,)],
        lambda m, v: m.fused_conv_bias_act(v[0], v[1], v[2], act="relu"),
    )
    batch, oc = shardings(case.module, case.op, 2)
    assert (batch.cut, batch.axis, batch.ranges) == (Cut.BATCH, 0, ((0, 1), (1, 1)))
    assert [s.name for s in batch.sliced] == ["input"]
    assert [s.name for s in batch.shared] == ["weight", "bias"]
    assert batch.exact
    assert (batch.sliced_in_bytes, batch.shared_in_bytes, batch.out_bytes) == (1536, 1792, 4608)
    assert (oc.cut, oc.axis, oc.ranges) == (Cut.OUT_CHANNELS, 1, ((0, 8), (8, 8)))
    assert [(s.name, s.axis) for s in oc.sliced] == [("weight", 0), ("bias", 0)]
    assert [s.name for s in oc.shared] == ["input"] and not oc.exact
    assert oc.piece_groups == ()
    # No C_in or spatial cut exists in any option.
    for o in (batch, oc):
        assert all(not (s.name == "input" and s.axis > 0) for s in o.sliced)


def test_grouped_conv_cuts_whole_groups_and_their_input_channels() -> None:
    # groups 4: 3 output and 2 input channels per group.
    case = one_op(
        [(2, 8, 5, 5), (12, 2, 3, 3)], lambda m, v: m.conv(v[0], v[1], groups=4, pads=[1] * 4)
    )
    oc = shardings(case.module, case.op, 3)[-1]
    assert oc.cut is Cut.OUT_CHANNELS
    assert oc.ranges == ((0, 6), (6, 3), (9, 3))  # groups 2, 1, 1
    assert oc.piece_groups == (2, 1, 1)
    sliced = {s.name: s for s in oc.sliced}
    assert (sliced["input"].axis, sliced["input"].ranges) == (1, ((0, 4), (4, 2), (6, 2)))
    assert sliced["weight"].ranges == oc.ranges
    assert oc.shared == ()
    # 5 pieces need 5 groups (and a batch of 5): no option at all.
    assert shardings(case.module, case.op, 5) == []


def test_fused_conv_residual_is_sliced_with_the_output() -> None:
    case = one_op(
        [(4, 3, 6, 6), (8, 3, 3, 3), (8,), (4, 8, 4, 4)],
        lambda m, v: m.fused_conv_bias_act(v[0], v[1], v[2], v[3]),
    )
    batch, oc = shardings(case.module, case.op, 2)
    assert [(s.name, s.axis) for s in batch.sliced] == [("input", 0), ("residual", 0)]
    assert [(s.name, s.axis) for s in oc.sliced] == [("weight", 0), ("bias", 0), ("residual", 1)]


@pytest.mark.parametrize(
    ("shapes", "sliced", "shared"),
    [
        ([(8, 4), (4,)], ["lhs"], ["rhs"]),  # S4: a bias vector is shared
        ([(8, 4), (1, 4)], ["lhs"], ["rhs"]),
        ([(8, 4), (8, 1)], ["lhs", "rhs"], []),  # broadcast along axis 1 only: sliced
        ([(8, 4), (8, 4)], ["lhs", "rhs"], []),
        ([(4,), (8, 4)], ["rhs"], ["lhs"]),
    ],
)
def test_s4_elementwise_outer_axis(
    shapes: list[tuple[int, ...]], sliced: list[str], shared: list[str]
) -> None:
    case = one_op(shapes, lambda m, v: m.add(v[0], v[1]))
    (opt,) = shardings(case.module, case.op, 2)
    assert (opt.cut, opt.axis, opt.ranges, opt.exact) == (Cut.BATCH, 0, ((0, 4), (4, 4)), True)
    assert [s.name for s in opt.sliced] == sliced
    assert [s.name for s in opt.shared] == shared


def test_where_compare_cast_and_unary_are_cut() -> None:
    def body(m, v):  # type: ignore[no-untyped-def]
        cond = m.compare("gt", v[0], v[1])
        return m.where(cond, m.cast(m.exp(v[0]), "f32"), v[2])

    case = one_op([(6, 5), (5,), (1, 5)], body)
    ops = [op for op in case.module.walk() if op.name.startswith("mir.") and op.results]
    kinds = {op.name: len(shardings(case.module, op, 2)) for op in ops}
    assert kinds == {
        "mir.input": 0, "mir.compare": 1, "mir.exp": 1, "mir.cast": 1, "mir.where": 1,
    }  # fmt: skip
    (opt,) = shardings(case.module, case.op, 2)
    assert [s.name for s in opt.sliced] == ["condition", "on_true"]
    assert [s.name for s in opt.shared] == ["on_false"]


def test_no_options() -> None:
    case = matmul_case((8, 16), (16, 32))
    assert shardings(case.module, case.op, 1) == []
    assert shardings(case.module, case.op, 0) == []
    assert cuts(shardings(case.module, case.op, 9)) == [Cut.COLS]  # M = 8 < 9
    assert shardings(case.module, case.op, 33) == []
    soft = one_op([(8, 16)], lambda m, v: m.softmax(v[0]))
    assert shardings(soft.module, soft.op, 2) == []
    scalar = one_op([()], lambda m, v: m.exp(v[0]))
    assert shardings(scalar.module, scalar.op, 2) == []


def test_symbolic_dims_give_no_options() -> None:
    with ModuleBuilder() as m:
        y = m.matmul(m.input("x", ("batch", 16)), m.param("w", (16, 32)))
        m.output(y)
    assert shardings(m.module, y.owner, 2) == []  # type: ignore[arg-type]


def test_op_outside_the_module_is_an_error() -> None:
    a = matmul_case((8, 16), (16, 32))
    b = matmul_case((8, 16), (16, 32))
    with pytest.raises(ShardError, match="not inside the given module"):
        shardings(b.module, a.op, 2)
    with pytest.raises(TypeError):
        shardings(a.module, a.op, 2.5)  # type: ignore[arg-type]


def test_labels_name_the_op_and_its_graph() -> None:
    case = matmul_case((8, 16), (16, 32))
    opt = shardings(case.module, case.op, 2)[0]
    assert (opt.op, opt.graph, opt.index) == ("mir.matmul", "one", 2)
    assert opt.label == "mir.matmul#2"  # the builder leaves op results unnamed
    case.op.results[0].name_hint = "y"
    assert shardings(case.module, case.op, 2)[0].label == "%y"


@pytest.mark.parametrize(
    ("ranges", "message"),
    [
        (((0, 4), (5, 3)), "piece 1 starts at 5, leaves a gap"),
        (((0, 4), (3, 5)), "piece 1 starts at 3, overlaps the previous piece"),
        (((0, 8), (8, 0)), "piece 1 \\(8, 0\\) is empty"),
        (((0, 4), (4, 3)), "cover \\[0, 7\\) but the axis has length 8"),
        (((1, 7),), "piece 0 starts at 1, leaves a gap"),
    ],
)
def test_check_ranges_rejects_gaps_overlaps_and_short_covers(
    ranges: tuple[tuple[int, int], ...], message: str
) -> None:
    with pytest.raises(ShardError, match=message):
        check_ranges(ranges, 8, "test")


def test_even_ranges() -> None:
    assert even_ranges(10, 4) == ((0, 3), (3, 3), (6, 2), (8, 2))
    assert even_ranges(4, 4) == ((0, 1), (1, 1), (2, 1), (3, 1))
    with pytest.raises(ShardError):
        even_ranges(3, 4)


def test_options_check_their_own_ranges_and_bytes() -> None:
    case = matmul_case((8, 16), (16, 32))
    rows = shardings(case.module, case.op, 2)[0]
    with pytest.raises(ShardError, match="overlaps"):
        dataclasses.replace(rows, ranges=((0, 5), (4, 4)))
    lhs = dataclasses.replace(rows.sliced[0], ranges=((0, 4), (4, 3)))
    with pytest.raises(ShardError, match="operand lhs: pieces cover"):
        dataclasses.replace(rows, sliced=(lhs,))
    with pytest.raises(ShardError, match="sliced_in_bytes"):
        dataclasses.replace(rows, sliced_in_bytes=1)
    with pytest.raises(ShardError, match="piece_out_elems"):
        dataclasses.replace(rows, piece_out_elems=(100, 156))


def test_flops_per_output_elem() -> None:
    mm = matmul_case((8, 16), (16, 32))
    conv = one_op([(1, 8, 5, 5), (12, 2, 3, 3)], lambda m, v: m.conv(v[0], v[1], groups=4))
    add = one_op([(4,), (4,)], lambda m, v: m.add(v[0], v[1]))
    soft = one_op([(4,)], lambda m, v: m.softmax(v[0]))
    assert flops_per_output_elem(mm.op) == 16
    assert flops_per_output_elem(conv.op) == 2 * 3 * 3
    assert flops_per_output_elem(add.op) == 1
    assert flops_per_output_elem(soft.op) is None
    assert isinstance(mm.op, mir.MatmulOp)
