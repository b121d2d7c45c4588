"""Memory planning of control-flow regions: each region a sub-plan inside a scratch slot
of its op, loop bodies reusing theirs every iteration, carried values in slots of their
own; the independent checker on every plan (and its findings on corrupted ones); the arena
executor against the reference executor."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from rlx_compile import ModuleBuilder
from rlx_compile.diagnostics import PassFailure
from rlx_compile.dialects import lir, mir
from rlx_compile.dialects.dim_expr import sym
from rlx_compile.interpreter import run, run_arena
from rlx_compile.ir import graph_outputs, main_graph, parse_module, print_module
from rlx_compile.memory.graph_plan import PlanOptions, export_graph, memory_schedule, plannable_ops
from rlx_compile.memory.plan_check import check_plan
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.testing.random_graphs import random_mir_graph
from rlx_compile.testing.regions import COND_INPUT, wrap_in_if, wrap_in_loop
from tests.memory.test_concat_inplace import same_export
from tests.memory.test_plan_memory import assert_natural_alignment


def plan(module: ModuleOp, options: str = "") -> ModuleOp:
    out = module.clone()
    PassManager(parse_pipeline(f"plan-memory{{{options}}}")).run(out)
    graph = main_graph(out)
    assert isinstance(graph, lir.GraphOp)
    report = check_plan(graph)
    assert report.is_clean(), report.render()
    assert_natural_alignment(graph, 64)  # the default
    return out


def of(module: ModuleOp, kind: type[Operation]) -> list[Operation]:
    return [op for op in module.walk() if isinstance(op, kind)]


def branchy() -> ModuleOp:
    """An if whose branches need different amounts of memory, a loop carrying two values
    (one passed through swapped with the other) with a nested if and a scan result, and
    values of the graph read by both regions."""
    with ModuleBuilder("branchy") as m:
        x = m.input("x", (4, 8))
        c = m.input("c", (), "bool")
        w = m.param("w", (8, 8))
        big = m.matmul(x, w)

        def wide() -> list:  # type: ignore[type-arg]
            t = m.concat([m.tanh(big), m.exp(m.neg(big))], 1)
            return [m.narrow(m.add(t, 1.0), 1, 0, 8)]

        (picked,) = m.if_(c, wide, lambda: [m.relu(x)])
        trips = m.constant(np.array(5, np.int64), "i64", ())

        def body(i, cond, carried):  # type: ignore[no-untyped-def]
            a, b = carried
            s = m.add(m.matmul(a, w), picked)
            positive = m.compare("gt", m.sum(s), 0.0)
            (n,) = m.if_(positive, lambda: [m.tanh(s)], lambda: [m.neg(m.sigmoid(s))])
            return cond, [b, n], [m.mul(n, x)]

        (fa, fb), (ys,) = m.loop(trips, None, [x, big], body, scan_length=5)
        m.output(fa, fb, ys, m.add(picked, big), names=["a", "b", "ys", "z"])
    return m.module


def flow_then_concat() -> ModuleOp:
    """An if, then a loop, then a concat of values made after both (operands the planner
    may produce inside the concat: rows and marks after the control-flow ops' scratch)."""
    with ModuleBuilder("flow_then_concat") as m:
        x = m.input("x", (1, 8))
        c = m.input("c", (), "bool")
        (p,) = m.if_(c, lambda: [m.tanh(x)], lambda: [m.neg(x)])
        trips = m.constant(np.array(3, np.int64), "i64", ())
        (q,), _ = m.loop(trips, None, [p], lambda i, cond, v: (cond, [m.exp(v[0])], []))
        joined = m.concat([m.relu(p), m.sigmoid(q), m.neg(p)], 1)
        m.output(m.add(joined, 1.0), names=["y"])
    return m.module


def feeds(seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    inputs = {"x": rng.standard_normal((4, 8)).astype(np.float32), "c": np.array(seed % 2 == 0)}
    return inputs, {"w": (rng.standard_normal((8, 8)) * 0.3).astype(np.float32)}


@pytest.mark.parametrize("schedule", ["source", "memory"])
def test_regions_plan_into_scratch_and_run_in_the_arena(schedule: str) -> None:
    module = branchy()
    planned = plan(module, f"schedule={schedule}")
    for seed in range(4):
        inputs, params = feeds(seed)
        want = run(module, inputs, params)
        got = run_arena(planned, inputs, params)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def test_layout_of_if_and_loop() -> None:
    planned = plan(branchy())
    top_if, loop = of(planned, mir.IfOp)[0], of(planned, mir.LoopOp)[0]
    assert top_if.parent_op() is main_graph(planned)
    for op in (top_if, loop):
        scratch = lir.scratch_slot(op)
        assert scratch is not None
        for inner in op.walk():
            for slot in lir.result_slots(inner) if inner is not op else []:
                assert slot is not None
                assert (
                    scratch.offset <= slot.offset
                    and slot.offset + slot.size <= scratch.offset + scratch.size
                )
    # Both branches start at the scratch; it is as large as the larger one.
    scratch = lir.scratch_slot(top_if)
    assert scratch is not None
    starts = [
        min(s.offset for o in r.block.ops for s in lir.result_slots(o) if s) for r in top_if.regions
    ]
    assert starts == [scratch.offset, scratch.offset]
    # The loop's arguments (i, cond, two carried values) have slots first in its scratch.
    args = lir.arg_slots(loop)
    assert len(args) == 4 and args[0].offset == lir.scratch_slot(loop).offset  # type: ignore[union-attr]
    body = [s for o in loop.regions[0].block.ops for s in lir.result_slots(o) if s]
    assert min(s.offset for s in body) >= max(a.offset + a.size for a in args)


def test_a_scratch_keeps_its_regions_slots_aligned() -> None:
    # The branch needs 20 bytes (a 16-byte exp, then its 4-byte sum): a 20-byte scratch
    # would be only 4-aligned, putting the exp's 16 bytes off their alignment; it takes
    # 32 bytes, 16-aligned, beside a 4-byte value.
    with ModuleBuilder("small") as m:
        x = m.input("x", (4,))
        c = m.input("c", (), "bool")
        (picked,) = m.if_(c, lambda: [m.sum(m.exp(x))], lambda: [m.sum(x)])
        m.output(m.add(picked, m.sum(x)), names=["y"])
    planned = plan(m.module, "strategy=rlx")
    scratch = lir.scratch_slot(of(planned, mir.IfOp)[0])
    assert scratch is not None and scratch.size == 32 and scratch.offset % 16 == 0


def test_lir_with_regions_round_trips_and_runs_from_text() -> None:
    planned = plan(branchy())
    text = print_module(planned)
    again = parse_module(text)
    assert print_module(again) == text
    inputs, params = feeds(1)
    want = run(branchy(), inputs, params)
    got = run_arena(again, inputs, params)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_a_runtime_trip_count_without_scan_results_plans() -> None:
    with ModuleBuilder("count") as m:
        x = m.input("x", (3,))
        n = m.input("n", (), "i64")

        def body(i, cond, carried):  # type: ignore[no-untyped-def]
            (acc,) = carried
            return cond, [m.add(m.mul(acc, 0.5), m.mul(x, m.cast(i, "f32")))], []

        (acc,), _ = m.loop(n, None, [x], body)
        m.output(acc)
    planned = plan(m.module)
    x = np.array([1.0, -2.0, 0.5], np.float32)
    for trips in (0, 1, 6):
        want = run(m.module, {"x": x, "n": np.array(trips)})
        np.testing.assert_array_equal(
            run_arena(planned, {"x": x, "n": np.array(trips)})["output0"], want["output0"]
        )


def test_scan_results_of_a_runtime_length_are_unplannable_naming_the_loop() -> None:
    with ModuleBuilder("scan") as m:
        x = m.input("x", (3,))
        n = m.input("n", (), "i64")

        def body(i, cond, carried):  # type: ignore[no-untyped-def]
            return cond, [], [m.mul(x, m.cast(i, "f32"))]

        _, (ys,) = m.loop(n, None, [], body, scan_length=sym("steps"))
        m.output(ys)
    with pytest.raises(
        PassFailure, match=r"mir.loop (%\S+ )?produces !rlx.tensor<\[steps, 3\], f32>"
    ) as err:
        PassManager(parse_pipeline("plan-memory")).run(m.module.clone())
    assert isinstance(err.value.op, mir.LoopOp)
    assert "no upper bound" in err.value.message


def _corrupt(planned: ModuleOp, pick_slot) -> ModuleOp:  # type: ignore[no-untyped-def]
    bad = planned.clone()
    loop = of(bad, mir.LoopOp)[0]
    op, slot = pick_slot(bad, loop)
    lir.set_result_slots(op, [slot])
    return bad


def _first_body_op(loop: Operation) -> Operation:
    return next(o for o in loop.regions[0].block.ops if lir.result_slots(o)[0] is not None)


def test_corrupted_region_plans_are_caught() -> None:
    planned = plan(branchy())

    def onto_carried(bad: ModuleOp, loop: Operation) -> tuple[Operation, lir.SlotAttr]:
        carried = lir.arg_slots(loop)[3]  # b, which the body yields as the next a
        op = _first_body_op(loop)
        return op, lir.SlotAttr(carried.offset, lir.result_slots(op)[0].size)  # type: ignore[union-attr]

    def onto_captured(bad: ModuleOp, loop: Operation) -> tuple[Operation, lir.SlotAttr]:
        w = next(o for o in bad.walk() if isinstance(o, mir.ParamOp))  # read by the body
        op = _first_body_op(loop)
        return op, lir.SlotAttr(lir.result_slots(w)[0].offset, lir.result_slots(op)[0].size)  # type: ignore[union-attr]

    def outside(bad: ModuleOp, loop: Operation) -> tuple[Operation, lir.SlotAttr]:
        op = _first_body_op(loop)
        scratch = lir.scratch_slot(loop)
        assert scratch is not None
        size = lir.result_slots(op)[0].size  # type: ignore[union-attr]
        offset = 0 if scratch.offset >= size else -(-(scratch.offset + scratch.size) // 64) * 64
        return op, lir.SlotAttr(offset, size)

    inputs, params = feeds(0)
    want = run(branchy(), inputs, params)
    for corrupt, kinds in (
        (onto_carried, {"output-clobbered"}),  # the body yields it as the next a
        (onto_captured, {"live-overlap", "outside-scratch"}),
        (outside, {"outside-scratch"}),
    ):
        bad = _corrupt(planned, corrupt)
        graph = main_graph(bad)
        assert isinstance(graph, lir.GraphOp)
        found = check_plan(graph).kinds()
        assert kinds <= found, (corrupt.__name__, found)
    # Overwriting a carried value the body still reads gives a wrong answer in the arena.
    got = run_arena(_corrupt(planned, onto_carried), inputs, params)
    assert any(not np.array_equal(got[k], want[k]) for k in want)


@pytest.mark.parametrize("seed", range(4))
def test_scratch_added_to_an_export_is_the_export_with_scratch(seed: int) -> None:
    # plan-memory{schedule=memory} exports a graph to schedule it, then adds its control-
    # flow ops' scratch rows to those arrays (in the new order): every row, index, concat
    # mark and scratch row must be what exporting the ops with their scratch gives.
    rng = np.random.default_rng(seed)
    g = random_mir_graph(seed, num_ops=20, concats=True)
    for module in (branchy(), flow_then_concat(), wrap_in_if(g.module), wrap_in_loop(g.module)):
        graph = main_graph(module)
        ops, outputs = plannable_ops(graph), graph_outputs(graph)
        flow = [op for op in ops if isinstance(op, mir.ControlFlowOp)]
        for opts in (PlanOptions(), PlanOptions(width="f32-uniform", allocate_params=False)):
            exported = export_graph(ops, outputs, opts)
            order = memory_schedule(exported, opts)[0]
            reordered = [ops[i] for i in order]
            for arrays, listed in ((exported, ops), (exported.reordered(order), reordered)):
                for _ in range(3):
                    scratch = {op: int(rng.choice([0, 8, 64, 1000])) for op in flow}
                    want = export_graph(listed, outputs, opts, scratch)
                    assert same_export(arrays.with_scratch(scratch), want), scratch


@pytest.mark.parametrize("wrap", [wrap_in_if, wrap_in_loop])
@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_in_regions_plan_safely_and_run_identically(seed: int, wrap) -> None:  # type: ignore[no-untyped-def]
    g = random_mir_graph(seed, num_ops=30)
    wrapped = wrap(g.module)
    planned = plan(wrapped, "schedule=memory")
    want = run(g.module, g.inputs, g.params)
    for cond in (True, False) if wrap is wrap_in_if else (None,):
        inputs = dict(g.inputs) if cond is None else {**g.inputs, COND_INPUT: np.array(cond)}
        got = run_arena(planned, inputs, g.params)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def test_the_memory_report_counts_regions() -> None:
    """The lower bound counts what the largest region of each control-flow op needs at
    its step (no plan beats it), the rows list each op's scratch."""
    from rlx_compile.memory.report import memory_report, mir_peak_live_bytes

    module = branchy()
    graph = main_graph(plan(module))
    assert isinstance(graph, lir.GraphOp)
    report = memory_report(graph)
    assert 0 < report.lower_bound <= report.arena
    assert [r for r in report.rows if r[2].startswith("scratch of ")]
    # The unplanned bound counts the regions' peaks too: above the graph's own values.
    graph_only = sum(
        op.results[0].type.nbytes()  # type: ignore[attr-defined]
        for op in main_graph(module).regions[0].block.ops
        if isinstance(op, mir.InputOp | mir.ParamOp)
    )
    assert mir_peak_live_bytes(main_graph(module)) > graph_only  # type: ignore[arg-type]
