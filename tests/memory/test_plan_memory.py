"""plan-memory end to end: spec vectors, width policies, in-place, the independent
checker on every plan, and the arena executor as the proof of every offset."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import lir, mir
from rlx_compile.interpreter import run, run_arena
from rlx_compile.ir import graph_block, main_graph
from rlx_compile.memory.plan_check import check_plan
from rlx_compile.memory.report import memory_report, mir_peak_live_bytes
from rlx_compile.native import build
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.testing.random_graphs import random_mir_graph


def plan(module: ModuleOp, options: str = "") -> lir.GraphOp:
    out = module.clone()
    PassManager(parse_pipeline(f"plan-memory{{{options}}}" if options else "plan-memory")).run(out)
    graph = main_graph(out)
    assert isinstance(graph, lir.GraphOp)
    report = check_plan(graph)
    assert report.is_clean(), report.render()
    alignment = re.search(r"alignment=(\d+)", options)
    assert_natural_alignment(graph, int(alignment[1]) if alignment else 64)
    return graph


def assert_natural_alignment(graph: lir.GraphOp, alignment: int) -> None:
    """The graph's ``align`` is the plan's ``alignment``; every slot, regions' included,
    at a multiple of its size's natural alignment up to it."""
    assert graph.align == alignment
    for op in graph.walk():
        for slot in (*lir.result_slots(op), lir.scratch_slot(op), *lir.arg_slots(op)):
            if slot is not None and slot.size:
                assert slot.offset % math.gcd(slot.size, alignment) == 0, (op.name, slot)


def slots(graph: lir.GraphOp) -> dict[str, tuple[int, int]]:
    """name hint -> (offset, size) of every slotted or viewed value."""
    out: dict[str, tuple[int, int]] = {}
    roots: dict[object, tuple[int, int]] = {}
    for op in graph_block(graph).ops:
        if isinstance(op, lir.ViewOp):
            base = roots[op.root]
            nbytes = op.result.type.nbytes()  # type: ignore[attr-defined]
            roots[op.result] = (base[0] + op.offset, nbytes)
            out[op.result.name_hint or "?"] = roots[op.result]
            continue
        for r, s in zip(op.results, lir.result_slots(op), strict=True):
            if s is not None:
                roots[r] = (s.offset, s.size)
                out[r.name_hint or "?"] = (s.offset, s.size)
    return out


def named(m: ModuleBuilder, v, name: str):  # type: ignore[no-untyped-def]
    v.name_hint = name
    return v


def e1_views() -> ModuleOp:
    with ModuleBuilder("e1") as m:
        x = m.input("x", (8, 4))
        w = m.param("w", (4, 4))
        mm = named(m, m.matmul(x, w), "mm")
        r = named(m, m.reshape(mm, (32,)), "r")
        c = named(m, m.cast(r, "f32"), "c")
        n = named(m, m.narrow(c, 0, 8, 16), "n")
        m.output(n, names=["n"])
    return m.module


def e2_chain() -> ModuleOp:
    with ModuleBuilder("e2") as m:
        x, w = m.input("x", (64, 64)), m.param("w", (64, 64))
        a = named(m, m.matmul(x, w), "a")
        b = named(m, m.mul(a, a), "b")
        c = named(m, m.add(b, a), "c")
        d = named(m, m.mul(c, b), "d")
        e = named(m, m.add(d, c), "e")
        m.output(e, names=["e"])
    return m.module


def e3_two_matmuls() -> ModuleOp:
    with ModuleBuilder("e3") as m:
        x = m.input("x", (100, 384))
        w1, w2 = m.param("w1", (384, 384)), m.param("w2", (384, 384))
        m1 = named(m, m.matmul(x, w1), "m1")
        m.output(named(m, m.matmul(m1, w2), "m2"), names=["m2"])
    return m.module


def feeds(module: ModuleOp, seed: int = 0) -> tuple[dict, dict]:
    from tests.transforms.test_lowering_numeric import random_feeds

    return random_feeds(module, seed)


def test_e1_views_alias_their_root() -> None:
    g = plan(e1_views(), "strategy=rlx inplace=false")
    assert g.arena_bytes == 320
    s = slots(g)
    assert s["x"] == (0, 128) and s["mm"] == (128, 128) and s["w"] == (256, 64)
    # r and c alias mm at 0 (the spec's r @128, c @128), but n views mm directly, so
    # nothing reads them in the LIR and they are dropped; n is mm at 32.
    assert "r" not in s and "c" not in s and s["n"] == (160, 64)
    views = [op for op in graph_block(g).ops if isinstance(op, lir.ViewOp)]
    assert [(v.results[0].name_hint, v.root.name_hint) for v in views] == [("n", "mm")]


def test_e2_chain_matches_the_spec() -> None:
    g = plan(e2_chain(), "strategy=rlx inplace=false")
    assert g.arena_bytes == 81920
    s = slots(g)
    assert [s[k][0] for k in "xwabcde"] == [0, 16384, 32768, 49152, 65536, 32768, 49152]
    pinned = plan(e2_chain(), "strategy=rlx inplace=false pin-outputs=true")
    assert pinned.arena_bytes == 114688
    r = memory_report(pinned)
    assert (r.arena, r.naive, r.saved) == (114688, 114688, 0)


def test_e3_two_matmuls() -> None:
    g = plan(e3_two_matmuls(), "strategy=rlx inplace=false")
    assert g.arena_bytes == 1_640_448
    s = slots(g)
    assert (s["w1"][0], s["w2"][0], s["x"][0], s["m1"][0], s["m2"][0]) == (
        0, 589_824, 1_179_648, 1_333_248, 1_486_848,
    )  # fmt: skip


def test_inplace_halves_an_elementwise_chain() -> None:
    with ModuleBuilder("chain") as m:
        x = m.input("x", (256,))
        v = m.exp(x)
        for _ in range(8):
            v = m.tanh(m.add(v, 1.0))
        m.output(v, names=["y"])
    size = 256 * 4
    without = plan(m.module, "inplace=false allocate-constants=false")
    with_inplace = plan(m.module, "allocate-constants=false")
    # x (a leaf, never overwritten) + 2 alternating slots, against x + 1 reused slot.
    assert without.arena_bytes == 3 * size
    assert with_inplace.arena_bytes == 2 * size
    inputs = {"x": np.linspace(-1, 1, 256, dtype=np.float32)}
    np.testing.assert_array_equal(run_arena(with_inplace, inputs)["y"], run(m.module, inputs)["y"])


def test_width_policies() -> None:
    with ModuleBuilder("widths") as m:
        p = m.param("p", (1, 16), "bf16")
        a = named(m, m.cast(m.input("x", (1, 16)), "bf16"), "a")
        m.output(named(m, m.compare("gt", a, p), "flag"), names=["flag"])
    sizes = {
        width: {k: v[1] for k, v in slots(plan(m.module, f"width={width}")).items()}
        for width in ("native", "f32-uniform", "hybrid")
    }
    # A bf16 param keeps 2 B/elem everywhere; a bf16 activation is 4/2/2 (f32-uniform,
    # hybrid, native); a bool activation 4/4/1; f32 is 4 everywhere.
    assert [sizes[w]["p"] for w in ("f32-uniform", "hybrid", "native")] == [32, 32, 32]
    assert [sizes[w]["a"] for w in ("f32-uniform", "hybrid", "native")] == [64, 32, 32]
    assert [sizes[w]["flag"] for w in ("f32-uniform", "hybrid", "native")] == [64, 64, 16]
    assert [sizes[w]["x"] for w in ("f32-uniform", "hybrid", "native")] == [64, 64, 64]


def test_empty_leaf_gets_a_slot() -> None:
    with ModuleBuilder("kv") as m:
        past = m.input("past", (1, 0, 8))
        x = m.input("x", (1, 2, 8))
        m.output(m.concat([past, x], 1), names=["y"])
    g = plan(m.module)
    s = slots(g)
    assert s["past"][1] >= 64


def test_symbolic_dims_are_a_clear_error() -> None:
    with ModuleBuilder("dyn") as m:
        m.output(m.relu(m.input("x", ("seq", 4))))
    from rlx_compile.diagnostics import PassFailure

    with pytest.raises(PassFailure, match="needs static shapes"):
        PassManager(parse_pipeline("plan-memory")).run(m.module.clone())


@pytest.mark.parametrize("seed", range(120))
def test_random_graphs_plan_safely_and_run_identically(seed: int) -> None:
    g = random_mir_graph(seed, num_ops=5 + seed % 60)
    want = run(g.module, g.inputs, g.params)
    arenas, bounds = {}, {}
    for options in (
        "strategy=rlx inplace=false", "strategy=rlx", "", "schedule=memory", "reuse-inputs=true",
    ):  # fmt: skip
        graph = plan(g.module, options)
        arenas[options] = graph.arena_bytes
        bounds[options] = memory_report(graph).lower_bound
        assert bounds[options] <= arenas[options]
        got = run_arena(graph, g.inputs, g.params)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"{options}: {name}")
    # best keeps rlx's plan among its candidates; in-place never raises the peak, and
    # the memory schedule keeps the source order unless it lowers the peak.
    assert arenas[""] <= arenas["strategy=rlx"]
    assert bounds["strategy=rlx"] <= bounds["strategy=rlx inplace=false"]
    assert bounds["schedule=memory"] <= bounds[""]
    assert bounds["reuse-inputs=true"] <= bounds[""]


def test_a_corrupted_plan_is_caught_by_checker_and_executor() -> None:
    module = e2_chain()
    graph = plan(module, "strategy=rlx inplace=false")
    inputs, params = feeds(module)
    want = run(module, inputs, params)
    np.testing.assert_array_equal(run_arena(graph, inputs, params)["e"], want["e"])
    # Move c (live until e) onto b's slot while b is still needed by d.
    ops = {op.results[0].name_hint: op for op in graph_block(graph).ops if op.results}
    lir.set_result_slots(ops["c"], [lir.result_slots(ops["b"])[0]])
    report = check_plan(graph)
    assert {"read-after-overwrite", "live-overlap"} & report.kinds(), report.render()
    assert report.program_safety()
    got = run_arena(graph, inputs, params)["e"]
    assert not np.allclose(got, want["e"])


def test_checker_finding_kinds() -> None:
    graph = plan(e2_chain(), "strategy=rlx inplace=false")
    ops = {op.results[0].name_hint: op for op in graph_block(graph).ops if op.results}
    out_of_arena = graph.clone()
    o = {op.results[0].name_hint: op for op in graph_block(out_of_arena).ops if op.results}
    lir.set_result_slots(o["a"], [lir.SlotAttr(graph.arena_bytes, 16384)])
    assert "out-of-arena" in check_plan(out_of_arena).kinds()
    misaligned = graph.clone()
    o = {op.results[0].name_hint: op for op in graph_block(misaligned).ops if op.results}
    lir.set_result_slots(o["a"], [lir.SlotAttr(32, 16384)])
    kinds = check_plan(misaligned).kinds()
    assert "misaligned" in kinds and kinds & {"live-overlap", "read-after-overwrite"}
    # Offset 4 would do for a 4-byte slot, not for this 16 KB one (64-aligned).
    lir.set_result_slots(o["a"], [lir.SlotAttr(4, 16384)])
    assert "misaligned" in check_plan(misaligned).kinds()
    clobber = graph.clone()
    o = {op.results[0].name_hint: op for op in graph_block(clobber).ops if op.results}
    # d written exactly over e's future slot is legal in place (e = d + c, d dies there).
    lir.set_result_slots(o["d"], [lir.result_slots(ops["e"])[0]])
    assert check_plan(clobber).is_clean()
    # The output e written over the input x (live for the whole run) is not.
    lir.set_result_slots(o["e"], [lir.result_slots(ops["x"])[0]])
    assert "output-clobbered" in check_plan(clobber).kinds()
    assert check_plan(graph).render().startswith("plan check @e2: clean over 7 assigned")


def test_preprocessing_ops_write_in_place() -> None:
    """The classic-ML preprocessing ops (``InPlace``, not ``Elementwise``) write over the
    operand that dies at them: one slot for the chain; the native kernels, which stream
    element by element, and the arena executor compute what the reference does."""
    with ModuleBuilder("prep") as m:
        x = m.input("x", (8, 5))
        e = named(m, m.exp(x), "e")
        scaler = mir.ScalerOp(e, [0.5, 1.0, 1.5, 2.0, 2.5], [2.0, -1.0, 0.5, 3.0, 0.25])
        s = named(m, m.emit(scaler).results[0], "s")
        i = named(m, m.emit(mir.ImputerOp(s, [7.0], 1.5)).results[0], "i")
        m.output(named(m, m.emit(mir.BinarizerOp(i, 0.75)).results[0], "y"), names=["y"])
    without = plan(m.module, "inplace=false allocate-constants=false")
    with_inplace = plan(m.module, "allocate-constants=false")
    assert len({slots(without)[n] for n in "esiy"}) == 2  # alternating
    assert len({slots(with_inplace)[n] for n in "esiy"}) == 1
    assert with_inplace.arena_bytes < without.arena_bytes
    inputs = {"x": np.linspace(-2, 2, 40, dtype=np.float32).reshape(8, 5)}
    want = run(m.module, inputs)["y"]
    np.testing.assert_array_equal(run_arena(with_inplace, inputs)["y"], want)
    np.testing.assert_array_equal(build(with_inplace, mode="direct").run(inputs)["y"], want)


def test_report_and_bounds() -> None:
    graph = plan(e2_chain(), "strategy=rlx inplace=false")
    r = memory_report(graph)
    assert r.arena == 81920 and r.lower_bound == 81920 and r.naive == 7 * 16384
    assert r.ratio == 1.0 and r.saved == 7 * 16384 - 81920
    assert r.render().splitlines()[1] == "# offset\tsize\ttensor"
    assert mir_peak_live_bytes(main_graph(e2_chain())) == 81920


def test_schedule_memory_lowers_the_peak() -> None:
    # Two independent branches, source order interleaving their big intermediates.
    with ModuleBuilder("branches") as m:
        x = m.input("x", (64,))
        a1 = m.exp(m.reshape(m.concat([x] * 16, 0), (1024,)))
        b1 = m.tanh(m.reshape(m.concat([x] * 16, 0), (1024,)))
        a2 = m.sum(a1, 0)
        b2 = m.sum(b1, 0)
        m.output(m.add(a2, b2), names=["y"])
    module = m.module
    before = mir_peak_live_bytes(main_graph(module))
    scheduled = module.clone()
    PassManager(parse_pipeline("schedule-memory")).run(scheduled)
    after = mir_peak_live_bytes(main_graph(scheduled))
    assert after < before
    inputs = {"x": np.linspace(0, 1, 64, dtype=np.float32)}
    np.testing.assert_array_equal(run(scheduled, inputs)["y"], run(module, inputs)["y"])
    src = plan(module, "schedule=source")
    mem = plan(module, "schedule=memory")
    assert mem.arena_bytes < src.arena_bytes


def test_an_lir_file_alone_is_enough_to_run() -> None:
    from examples.build_examples import small_cnn
    from rlx_compile import CompilePipeline, parse_module, print_module

    module = small_cnn()
    result = CompilePipeline().compile(module)
    text = print_module(result.module)
    reparsed = parse_module(text, "cnn.lir.mlir")
    assert print_module(reparsed) == text
    inputs, params = feeds(module)
    want = run(module, inputs, params)["logits"]
    got = run_arena(reparsed, inputs, params)["logits"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_reused_input_slots_are_checked_and_run() -> None:
    with ModuleBuilder("reuse") as m:
        x = m.input("x", (256,))
        y = m.tanh(m.exp(x))
        m.output(m.add(y, 1.0), names=["y"])
    keep = plan(m.module, "allocate-constants=false")
    reuse = plan(m.module, "allocate-constants=false reuse-inputs=true")
    # exp writes over x (dead after it) and tanh/add over exp: one slot instead of two.
    assert (keep.arena_bytes, reuse.arena_bytes) == (2048, 1024)
    assert "reuse_inputs" in print_module_(reuse)
    inputs = {"x": np.linspace(-1, 1, 256, dtype=np.float32)}
    np.testing.assert_array_equal(run_arena(reuse, inputs)["y"], run(m.module, inputs)["y"])
    # Without the flag, the same sharing is an overwritten input.
    bad = reuse.clone()
    bad.properties.pop("reuse_inputs")
    assert check_plan(bad).kinds() == {"read-after-overwrite", "live-overlap", "output-clobbered"}


def print_module_(op) -> str:  # type: ignore[no-untyped-def]
    from rlx_compile.ir import print_module

    return print_module(op)


def test_narrow_and_subbyte_types_run_in_the_arena() -> None:
    # One byte per element in the arena; a wrong slot size or offset would show here.
    with ModuleBuilder("narrow") as m:
        x = m.input("x", (3, 5))
        outs = []
        for dtype in ("i4", "u2", "f4e2m1", "f8e4m3fnuz", "f8e5m2fnuz", "f8e8m0"):
            narrow = m.cast(m.mul(x, 3.0), dtype)
            outs.append(m.cast(narrow, "f32"))
        m.output(*outs, names=[f"y{i}" for i in range(len(outs))])
    graph = plan(m.module)
    inputs = {"x": np.linspace(-3, 3, 15, dtype=np.float32).reshape(3, 5)}
    want = run(m.module, inputs)
    got = run_arena(graph, inputs)
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value)
    assert print_module_(graph).count("f8e8m0") >= 1


def test_the_search_of_a_small_graph_grows_with_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """``best`` searches at most SEARCH_STEPS_PER_PAIR steps per pair of a graph's rows,
    within the budget."""
    from rlx_compile import _core
    from rlx_compile.ir import graph_outputs
    from rlx_compile.memory import graph_plan
    from rlx_compile.memory.graph_plan import (
        SEARCH_STEPS_PER_PAIR,
        PlanOptions,
        export_graph,
        plan_exported,
        plannable_ops,
    )

    budgets: list[int] = []
    real = _core.plan_tensors

    def recording(graph: object, options: object) -> object:
        budgets.append(options.budget)  # type: ignore[attr-defined]
        return real(graph, options)  # type: ignore[arg-type]

    monkeypatch.setattr(graph_plan._core, "plan_tensors", recording)
    graph = main_graph(random_mir_graph(3, num_ops=12).module)
    ops, outputs = plannable_ops(graph), graph_outputs(graph)
    for budget in (30_000_000, 50):
        opts = PlanOptions(budget=budget)
        exported = export_graph(ops, outputs, opts)
        n = len(exported.arrays["size"])
        plan_exported(exported, opts)
        assert budgets[-1] == min(budget, SEARCH_STEPS_PER_PAIR * n * n)
    assert len(budgets) == 2 and budgets[0] < 30_000_000
