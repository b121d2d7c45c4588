"""Concat operands produced inside the concat's slot (``plan-memory{concat-inplace}``): the
op's offset rule, the planner, the checker's one new legal sharing, and the arena
executor as the proof of every offset."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from examples.build_examples import dense_cnn, inception_cnn
from rlx_compile import CompileOptions, CompilePipeline, ModuleBuilder, _core
from rlx_compile.diagnostics import PipelineError
from rlx_compile.dialects import lir, mir
from rlx_compile.interpreter import run, run_arena
from rlx_compile.ir import graph_block, graph_outputs, main_graph
from rlx_compile.memory.graph_plan import (
    PlanOptions,
    TensorGraphArrays,
    export_graph,
    memory_schedule,
    plan_exported,
    plannable_ops,
)
from rlx_compile.memory.lir_liveness import operand_offset_in_result
from rlx_compile.memory.plan_check import check_plan
from rlx_compile.memory.report import memory_report
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.pipeline import planning_passes
from rlx_compile.testing.random_graphs import random_mir_graph
from tests.memory.test_plan_memory import feeds, plan, slots
from tests.sizes import sized


def embedded_operands(graph: lir.GraphOp) -> int:
    """Concat operands whose slot is their place inside the concat's slot."""
    slot_of = {
        r: s
        for op in graph_block(graph).ops
        for r, s in zip(op.results, lir.result_slots(op), strict=True)
        if s is not None
    }
    count = 0
    for op in graph_block(graph).ops:
        if not isinstance(op, mir.ConcatOp) or op.result not in slot_of:
            continue
        for v in op.operands:
            offset = operand_offset_in_result(op, v)
            if v in slot_of and offset is not None:
                count += slot_of[v].offset == slot_of[op.result].offset + offset
    return count


def branches() -> ModuleOp:
    """Three [1, 32] branches (matmul, then tanh over it) joined on axis 1."""
    with ModuleBuilder("branches") as m:
        x = m.input("x", (1, 16))
        parts = []
        for i in range(3):
            t = m.tanh(m.matmul(x, m.param(f"w{i}", (16, 32))))
            t.name_hint = f"t{i}"
            parts.append(t)
        c = m.concat(parts, 1)
        c.name_hint = "c"
        m.output(m.exp(c), names=["y"])
    return m.module


def test_concat_offsets_are_the_op_rule() -> None:
    with ModuleBuilder("offsets") as m:
        a, b = m.input("a", (1, 2, 3)), m.input("b", (1, 4, 3))
        rows = m.input("rows", (2, 3))
        halves = m.input("h", (1, 5), "f16")
        along1 = m.concat([a, b], 1)
        along0 = m.concat([rows, rows], 0)
        not_contiguous = m.concat([rows, rows], 1)
        f16 = m.concat([halves, halves, halves], 1)
        m.output(along1, along0, not_contiguous, f16)
    offsets = [
        op.contiguous_operand_offsets()
        for op in graph_block(main_graph(m.module)).ops
        if isinstance(op, mir.ConcatOp)
    ]
    # b starts after a's 2·3 f32; axis 0 has no dims before it; [2, 3] along axis 1 puts
    # each operand in both rows; f16 operands are 10 bytes each.
    assert offsets == [[0, 24], [0, 24], None, [0, 10, 20]]
    assert mir.ExpOp(a).contiguous_operand_offsets() is None


def test_operands_are_produced_inside_the_concat() -> None:
    module = branches()
    on = plan(module, "strategy=rlx")
    off = plan(module, "strategy=rlx concat-inplace=false")
    s = slots(on)
    c = s["c"][0]
    assert [s[f"t{i}"] for i in range(3)] == [(c, 128), (c + 128, 128), (c + 256, 128)]
    assert embedded_operands(on) == 3 and embedded_operands(off) == 0
    # Off, the three operands and the concat are live at once at the concat: 3·128 more.
    assert off.arena_bytes - on.arena_bytes == 384
    assert memory_report(on).lower_bound == on.arena_bytes
    inputs, params = feeds(module)
    want = run(module, inputs, params)["y"]
    np.testing.assert_array_equal(run_arena(on, inputs, params)["y"], want)


def compiled(module: ModuleOp) -> dict[bool, lir.GraphOp]:
    """The module compiled with concat-inplace on and off (weights outside the arena),
    each plan checked and run in its arena against the LIR and the source module."""
    out = {}
    inputs, params = feeds(module)
    want = run(module, inputs, params)["logits"]
    for flag in (True, False):
        result = CompilePipeline(weights_in_arena=False, concat_inplace=flag).compile(module)
        graph = main_graph(result.module)
        assert isinstance(graph, lir.GraphOp)
        assert check_plan(graph).is_clean()
        got = run_arena(result.module, inputs, params)["logits"]
        np.testing.assert_array_equal(got, run(result.module, inputs, params)["logits"])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        out[flag] = graph
    return out


def test_dense_block_arena_drops() -> None:
    # Each layer's concat is read by the next layer and, last, by the next concat, so the
    # concats nest into one 48-channel buffer (48 KiB) live from the stem on. The peak
    # becomes that buffer plus a 32-channel bottleneck (80 KiB), against the last concat
    # beside its 40-channel operand and the 8-channel layer output (96 KiB) without.
    graphs = compiled(dense_cnn())
    assert (graphs[True].arena_bytes, graphs[False].arena_bytes) == (80 * 1024, 96 * 1024)
    # Four layer outputs and the stem's and three concats' outputs.
    assert (embedded_operands(graphs[True]), embedded_operands(graphs[False])) == (8, 0)


def test_inception_block_is_never_worse() -> None:
    # The peak is at a max-pool branch, where holding the whole concat would raise it.
    graphs = compiled(inception_cnn())
    bounds = {flag: memory_report(g).lower_bound for flag, g in graphs.items()}
    assert bounds[True] <= bounds[False]
    assert graphs[True].arena_bytes <= graphs[False].arena_bytes


OPTIONS = (
    "", "concat-inplace=false", "alignment=16", "strategy=rlx", "schedule=memory",
    "reuse-inputs=true", "pin-outputs=true", "width=f32-uniform",
)  # fmt: skip


def check_random_concat_graph(seed: int, num_ops: int) -> None:
    g = random_mir_graph(seed, num_ops=num_ops, concats=True)
    want = run(g.module, g.inputs, g.params)
    arenas, bounds, embedded = {}, {}, {}
    for options in OPTIONS:
        graph = plan(g.module, options)  # plan-check clean
        arenas[options] = graph.arena_bytes
        bounds[options] = memory_report(graph).lower_bound
        embedded[options] = embedded_operands(graph)
        got = run_arena(graph, g.inputs, g.params)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"{options}: {name}")
    # The planner embeds a concat's operands only where that does not raise the peak, and
    # keeps the plan without embedding when that one places smaller.
    assert bounds[""] <= bounds["concat-inplace=false"]
    assert arenas[""] <= arenas["concat-inplace=false"]
    assert embedded["concat-inplace=false"] == 0


@pytest.mark.parametrize("seed", range(80))
def test_random_concat_graphs_plan_safely_and_run_identically(seed: int) -> None:
    check_random_concat_graph(seed, 5 + seed % 30)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(80, 80 + sized(15, 60)))
def test_random_concat_graphs_many(seed: int) -> None:
    check_random_concat_graph(seed, 5 + seed % 80)


def test_random_concat_graphs_embed_and_lower_the_peak() -> None:
    embedded = lowered = 0
    for seed in range(20):
        g = random_mir_graph(seed, num_ops=20, concats=True)
        graph = main_graph(g.module)
        ops, outputs = plannable_ops(graph), graph_outputs(graph)
        peaks = {}
        for flag in (True, False):
            opts = PlanOptions(concat_inplace=flag)
            p = plan_exported(export_graph(ops, outputs, opts), opts)
            peaks[flag] = p.peak
            embedded += p.embedded_count if flag else 0
        lowered += peaks[True] < peaks[False]
    assert embedded >= 20 and lowered >= 5, (embedded, lowered)


def corrupt(graph: lir.GraphOp, name: str, offset: int) -> lir.GraphOp:
    bad = graph.clone()
    for op in graph_block(bad).ops:
        if op.results and op.results[0].name_hint == name:
            size = lir.result_slots(op)[0]
            assert size is not None
            lir.set_result_slots(op, [lir.SlotAttr(offset, size.size)])
    return bad


def test_a_wrong_offset_inside_the_concat_is_rejected() -> None:
    module = branches()
    graph = plan(module, "strategy=rlx")
    s = slots(graph)
    inputs, params = feeds(module)
    want = run(module, inputs, params)["y"]
    # t0 and t1 swap places: each is overwritten by the other before the concat reads it.
    swapped = corrupt(corrupt(graph, "t0", s["t1"][0]), "t1", s["t0"][0])
    report = check_plan(swapped)
    assert "read-after-overwrite" in report.kinds(), report.render()
    assert not np.allclose(run_arena(swapped, inputs, params)["y"], want)
    # t1 one aligned step (64 B) early: it writes over the second half of t0.
    shifted = corrupt(graph, "t1", s["t1"][0] - 64)
    assert check_plan(shifted).program_safety()
    assert not np.allclose(run_arena(shifted, inputs, params)["y"], want)
    # One aligned step off, past the concat's end: the checker says so, whatever the bytes.
    past = corrupt(graph, "t2", s["c"][0] + 320)
    assert check_plan(past).program_safety()


def test_arena_assignment_between_overlapping_windows_is_a_copy() -> None:
    # run_arena writes each result into its window; an embedded operand's window lies
    # inside the concat's. Even were a kernel to hand back a window onto the operand's
    # bytes, NumPy assignment reads overlapping memory as a copy first.
    from rlx_compile.dialects.types import TensorType
    from rlx_compile.interpreter.lir import Arena

    arena = Arena(256)
    t = TensorType([1, 32], "f32")
    whole = arena.window(0, TensorType([1, 64], "f32"))
    whole[...] = np.arange(64, dtype=np.float32).reshape(1, 64)
    arena.window(64, t)[...] = arena.window(32, t)  # the bytes [32, 160) into [64, 192)
    np.testing.assert_array_equal(whole[0, 16:48], np.arange(8, 40, dtype=np.float32))
    arena.window(0, t)[...] = arena.window(0, t)  # the same bytes over themselves
    np.testing.assert_array_equal(whole[0, :16], np.arange(16, dtype=np.float32))


def test_export_marks_candidates_and_the_binding_checks_them() -> None:
    module = branches()
    graph = main_graph(module)
    ops, outputs = plannable_ops(graph), graph_outputs(graph)
    g = export_graph(ops, outputs, PlanOptions())
    a = g.arrays
    concat = next(i for i, v in enumerate(g.tensors) if isinstance(v.owner, mir.ConcatOp))
    marked = [(g.tensors[i].name_hint, int(a["embed_offset"][i]))
              for i in np.flatnonzero(a["embed_into"] == concat)]  # fmt: skip
    assert marked == [("t0", 0), ("t1", 128), ("t2", 256)]

    def call(**changes: np.ndarray) -> None:
        graph = _core.TensorGraph(num_steps=g.num_steps, **{**a, **changes})
        _core.plan_tensors(graph, _core.PlanOptions(strategy="rlx", budget=0))

    t0 = int(np.flatnonzero(a["embed_into"] == concat)[0])
    earlier = a["embed_into"].copy()
    earlier[t0] = 0
    with pytest.raises(ValueError, match=rf"embed_into\[{t0}\] is not a later tensor"):
        call(embed_into=earlier)
    outside = a["embed_offset"].copy()
    outside[t0] = 384
    with pytest.raises(ValueError, match=rf"embed_offset\[{t0}\] puts the tensor outside"):
        call(embed_offset=outside)
    with pytest.raises(ValueError, match="embed_offset has length"):
        call(embed_offset=a["embed_offset"][:-1])


def test_widened_slots_do_not_embed() -> None:
    # f32-uniform gives an f16 tensor 4 bytes per element; its concat offset (2 bytes per
    # element) would put it over its neighbour.
    with ModuleBuilder("widths") as m:
        x = m.input("x", (1, 32), "f16")
        parts: list[SSAValue] = [m.exp(x), m.tanh(x)]
        m.output(m.exp(m.concat(parts, 1)), names=["y"])
    assert embedded_operands(plan(m.module, "width=native")) == 2
    assert embedded_operands(plan(m.module, "width=f32-uniform")) == 0
    assert embedded_operands(plan(m.module, "width=hybrid")) == 2


def test_options_reach_the_pipeline_and_schedule_pass() -> None:
    def plan_memory(options: CompileOptions) -> str:
        return next(p for p in planning_passes(options) if p.startswith("plan-memory"))

    assert "concat-inplace=false" in plan_memory(CompileOptions(concat_inplace=False))
    assert "concat-inplace=true" in plan_memory(CompileOptions())
    module = dense_cnn(size=4, layers=2)
    PassManager(
        parse_pipeline("lower-hir-to-mir,schedule-memory{concat-inplace=false alignment=16}")
    ).run(module)
    with pytest.raises(PipelineError, match="alignment 3 is not a power of two"):
        parse_pipeline("schedule-memory{alignment=3}")


def random_topological_order(ops: list[Operation], rng: np.random.Generator) -> list[int]:
    """A random order of ``ops`` (indices) with every op after the ops it reads."""
    producer = {r: i for i, op in enumerate(ops) for r in op.results}
    users: list[list[int]] = [[] for _ in ops]
    pending = [0] * len(ops)
    for i, op in enumerate(ops):
        for j in {producer[v] for v in op.operands if v in producer}:
            users[j].append(i)
            pending[i] += 1
    ready = [i for i, n in enumerate(pending) if n == 0]
    order: list[int] = []
    while ready:
        i = ready.pop(int(rng.integers(len(ready))))
        order.append(i)
        for u in users[i]:
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
    return order


def same_export(a: TensorGraphArrays, b: TensorGraphArrays) -> bool:
    return (
        a.arrays.keys() == b.arrays.keys()
        and all(np.array_equal(a.arrays[k], b.arrays[k]) for k in a.arrays)
        and all(a.arrays[k].dtype == b.arrays[k].dtype for k in a.arrays)
        and (a.ops, a.tensors, a.num_steps) == (b.ops, b.tensors, b.num_steps)
        and (a.index, a.scratch_index, a.embed_marks) == (b.index, b.scratch_index, b.embed_marks)
    )


@pytest.mark.parametrize("seed", range(12))
def test_reordered_export_is_the_export_of_the_reordered_ops(seed: int) -> None:
    # plan-memory{schedule=memory} derives the scheduled graph's arrays from the source
    # order's: every row, concat mark (the last concat's in the new order wins) and index
    # must be what exporting the ops in the new order gives.
    g = random_mir_graph(seed, num_ops=25, concats=True)
    graph = main_graph(g.module)
    ops, outputs = plannable_ops(graph), graph_outputs(graph)
    rng = np.random.default_rng(seed)
    for opts in (PlanOptions(), PlanOptions(width="f32-uniform", allocate_params=False)):
        exported = export_graph(ops, outputs, opts)
        orders = [memory_schedule(exported, opts)[0], list(range(len(ops)))]
        orders += [random_topological_order(ops, rng) for _ in range(4)]
        for order in orders:
            want = export_graph([ops[i] for i in order], outputs, opts)
            assert same_export(exported.reordered(order), want), order


def test_planned_ops_move_without_leaving_uses_behind() -> None:
    # plan-memory moves the MIR ops into the lir.graph (views and control flow are
    # rebuilt): every use of a planned value must be by an op of the lir.graph.
    graph = plan(inception_cnn(), "schedule=memory")
    body = graph_block(graph)
    for op in body.ops:
        for result in op.results:
            for use in result.uses:
                assert use.operation.parent is body, (op.name, use.operation.name)
