"""Work spared after passes that changed nothing: a pure pass (``PURE``) whose earlier
run changed nothing is not run again while nothing changed since, a pass is not run on
a module without the op kinds it acts on (``ACTS_ON``), and a stage after a pass that
changed nothing shares the copy of the stage before. What is spared is what the work
gives, and any change (reported, seen by stamps, or reported by no one) makes it
happen."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from rlx_compile import ModuleBuilder
from rlx_compile.diagnostics import collect_warnings, note_changed, verify_module, warn
from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import import_model
from rlx_compile.ir import print_module
from rlx_compile.passmanager import Instrumentation, PassManager, PassRecord, parse_pipeline
from rlx_compile.pipeline import CompilePipeline
from rlx_compile.transforms import RLX_PASSES


def module() -> ModuleOp:
    with ModuleBuilder("f") as m:
        x = m.input("x", (2, 3))
        y = m.transpose(m.relu(x), [1, 0])
        m.output(m.add(y, y), names=["y"])
    verify_module(m.module)
    return m.module


def relus(m: ModuleOp) -> list[Operation]:
    return [o for o in m.walk() if isinstance(o, mir.ReluOp)]


def add_dead_relu(m: ModuleOp) -> Operation:
    """A copy of the relu that nothing reads: dce removes it."""
    relu = relus(m)[0]
    dead = relu.clone()
    Rewriter.insert_op(dead, InsertPoint.before(relu))
    return dead


def report_dead_relu(m: ModuleOp) -> None:
    dead = add_dead_relu(m)
    note_changed(dead, *([] if dead.next_op is None else [dead.next_op]))


def edit_pass(edit: Callable[[ModuleOp], None], *, reports: bool) -> ModulePass:
    """A pass that applies ``edit``; ``reports``: it is trusted to report its changes
    (``REPORTS_CHANGES``), whether or not ``edit`` reports them."""

    @dataclass(frozen=True)
    class Edit(ModulePass):
        name = "edit"

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            edit(op)

    @dataclass(frozen=True)
    class ReportingEdit(Edit):
        REPORTS_CHANGES: ClassVar[bool] = True

    return ReportingEdit() if reports else Edit()


def run(passes: list[ModulePass], **instrumentation: object) -> tuple[ModuleOp, list[PassRecord]]:
    m = module()
    inst = Instrumentation(stream=io.StringIO(), **instrumentation)  # type: ignore[arg-type]
    pm = PassManager(passes, inst)
    pm.run(m, verified=True)
    return m, pm.records


def skipped(records: list[PassRecord]) -> list[str]:
    return [r.spec.split("{")[0] for r in records if r.skipped]


def test_a_repeat_with_nothing_new_to_see_is_skipped_and_gives_what_running_it_gives() -> None:
    text = "algebraic-simplify,sccp,cse,dce,constant-fold"
    passes = parse_pipeline(f"{text},{text}")
    m, records = run(passes)
    # The first round's sccp finds no where or if to act on (ACTS_ON); the second round
    # repeats the first with nothing new to see.
    assert skipped(records[:5]) == ["sccp"]
    assert skipped(records[5:]) == text.split(",")
    assert len(records) == len(passes)
    ran, ran_records = run(passes, print_after_change=True)  # observed: every pass runs
    assert not skipped(ran_records)
    assert print_module(m) == print_module(ran)


@pytest.mark.parametrize(
    ("reports", "edit"),
    [
        (True, report_dead_relu),  # reported: every op it changed verified and stamped
        (False, add_dead_relu),  # seen by the stamps compared after the pass
        (True, add_dead_relu),  # trusted to report, did not: seen by the stamps
    ],
    ids=["reported", "stamped", "unreported"],
)
def test_a_change_between_runs_makes_the_repeat_run(
    reports: bool, edit: Callable[[ModuleOp], None]
) -> None:
    passes = [*parse_pipeline("dce"), edit_pass(edit, reports=reports), *parse_pipeline("dce")]
    m, records = run(passes)
    assert not skipped(records)
    assert len(relus(m)) == 1  # the second dce removed the dead copy
    _, quiet = run([*parse_pipeline("dce"), edit_pass(lambda m: None, reports=reports), passes[2]])
    assert skipped(quiet) == ["dce"]


def test_a_pure_pass_that_warned_runs_again() -> None:
    @dataclass(frozen=True)
    class Warns(ModulePass):
        name = "warns"
        REPORTS_CHANGES: ClassVar[bool] = True
        PURE: ClassVar[bool] = True

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            warn(relus(op)[0], "looked at")

    inst = Instrumentation(stream=io.StringIO())
    pm = PassManager([Warns(), Warns()], inst)
    pm.run(module(), verified=True)
    assert len(pm.warnings) == 2
    assert not skipped(pm.records)


def test_only_changed_mode_without_printing_skips() -> None:
    passes = parse_pipeline("dce,dce")
    for instrumentation in (
        {"verify_each": "full"},
        {"verify_each": False},
        {"timing": True},
        {"print_after_change": True},
        {"print_before_all": True},
    ):
        _, records = run(passes, **instrumentation)
        assert not skipped(records), instrumentation
    assert skipped(run(passes)[1]) == ["dce"]


def test_the_callback_sees_the_module_after_a_skipped_pass() -> None:
    seen: list[str] = []
    pm = PassManager(
        parse_pipeline("dce,dce"),
        Instrumentation(stream=io.StringIO()),
        callback=lambda p, m: seen.append(p.name),
    )
    pm.run(module(), verified=True)
    assert skipped(pm.records) == ["dce"]
    assert seen == ["dce", "dce"]


def test_a_compile_skipping_repeats_gives_what_one_running_them_gives() -> None:
    m = module()
    plain = CompilePipeline(target="cpu", keep_stages=False).compile(m)
    staged = CompilePipeline(target="cpu").compile(m)
    every = CompilePipeline(target="cpu", verify_each="full").compile(m)  # runs every pass
    assert skipped(plain.records) and skipped(plain.records) == skipped(staged.records)
    assert not skipped(every.records)
    assert [r.spec for r in plain.records] == [r.spec for r in every.records]
    assert plain.text() == staged.text() == every.text()
    assert [s.text for s in staged.stages] == [s.text for s in every.stages]


# -- stages ----------------------------------------------------------------------------


def test_stages_show_the_module_after_each_pass_and_each_has_its_own() -> None:
    after: list[str] = []
    result = CompilePipeline(target="cpu", inspect=lambda _, m: after.append(print_module(m)))
    stages = result.compile(module()).stages
    assert [s.text for s in stages] == after
    assert [print_module(s.module) for s in stages] == after
    shared = [(a, b) for a, b in pairwise(stages) if a.snapshot is b.snapshot]
    assert shared  # passes that changed nothing share a copy
    first, second = shared[0]
    assert first.module is not second.module
    relus(first.module)[0].detach()  # a change to one stage's module is that stage's
    assert print_module(second.module) == print_module(second.snapshot)


@pytest.mark.parametrize("reports", [True, False], ids=["unreported", "stamped"])
def test_a_stage_after_a_change_is_a_copy_of_its_own(
    reports: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"add-dead-relu-{'unreported' if reports else 'stamped'}"
    edit = type(edit_pass(add_dead_relu, reports=reports))
    monkeypatch.setattr(edit, "name", name)
    monkeypatch.setitem(RLX_PASSES, name, lambda: edit)
    pipe = CompilePipeline(target="cpu", pipeline=f"builtin.module(dce,{name},sccp,dce)")
    stages = pipe.compile(module()).stages
    assert [len(relus(s.module)) for s in stages] == [1, 2, 2, 1]
    assert stages[2].snapshot is stages[1].snapshot  # sccp changed nothing


# -- passes that act on some op kinds alone ----------------------------------------------


def probe(kinds: tuple[type[Operation], ...], ran: list[str]) -> ModulePass:
    """A pass declaring it acts on ``kinds`` that notes each run in ``ran``."""

    @dataclass(frozen=True)
    class Probe(ModulePass):
        name = "probe"
        REPORTS_CHANGES: ClassVar[bool] = True
        ACTS_ON: ClassVar[tuple[type[Operation], ...]] = kinds

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            ran.append(self.name)

    return Probe()


def add_sigmoid(m: ModuleOp) -> None:
    """A sigmoid of the relu that nothing reads (left unreported)."""
    relu = relus(m)[0]
    Rewriter.insert_op(mir.SigmoidOp(relu.results[0]), InsertPoint.after(relu))


def drop_relu(m: ModuleOp) -> None:
    """The relu's reads take its operand (left unreported)."""
    relu = relus(m)[0]
    relu.results[0].replace_all_uses_with(relu.operands[0])
    relu.detach()
    relu.erase()


def test_a_pass_without_a_kind_it_acts_on_in_the_module_is_not_run() -> None:
    ran: list[str] = []
    _, records = run([probe((mir.SigmoidOp, mir.WhereOp), ran)])
    assert skipped(records) == ["probe"] and not ran
    _, records = run([probe((mir.WhereOp, mir.ReluOp), ran)])
    assert not skipped(records) and ran == ["probe"]


@pytest.mark.parametrize("reports", [True, False], ids=["trusted", "stamped"])
def test_what_a_pass_before_changed_decides_whether_it_runs(reports: bool) -> None:
    # The module is looked at as it is when the pass comes, whatever the passes before
    # reported: these changes are reported by no one.
    ran: list[str] = []
    _, records = run([edit_pass(add_sigmoid, reports=reports), probe((mir.SigmoidOp,), ran)])
    assert not skipped(records) and ran == ["probe"]
    ran.clear()
    _, records = run([edit_pass(drop_relu, reports=reports), probe((mir.ReluOp,), ran)])
    assert skipped(records) == ["probe"] and not ran


def test_the_kinds_a_module_holds_are_looked_at_again_after_a_callback() -> None:
    """Skipped passes in a row share one look at what the module holds, unless a
    callback after a skipped pass (which may change the module) comes between."""
    ran: list[str] = []
    passes = [probe((mir.SigmoidOp,), ran), probe((mir.WhereOp, mir.SigmoidOp), ran)]
    _, records = run(passes)
    assert skipped(records) == ["probe", "probe"] and not ran

    def add_after_first(p: ModulePass, m: ModuleOp) -> None:
        if p is passes[0]:
            add_sigmoid(m)

    pm = PassManager(passes, Instrumentation(stream=io.StringIO()), callback=add_after_first)
    pm.run(module(), verified=True)
    assert skipped(pm.records) == ["probe"] and ran == ["probe"]


def test_ops_in_regions_count_and_kinds_match_by_class() -> None:
    ran: list[str] = []
    with ModuleBuilder("f") as b:
        x = b.input("x", (2,))
        flag = b.input("flag", (), "bool")
        (y,) = b.if_(flag, lambda: [b.relu(x)], lambda: [b.neg(x)])
        b.output(y, names=["y"])
    PassManager([probe((mir.NegOp,), ran)], Instrumentation(stream=io.StringIO())).run(b.module)
    assert ran == ["probe"]  # the neg is in the if's else region
    ran.clear()
    PassManager([probe((mir.ControlFlowOp,), ran)], Instrumentation(stream=io.StringIO())).run(
        b.module
    )
    assert ran == ["probe"]  # an if is a control-flow op


@pytest.mark.parametrize(
    "instrumentation",
    [{"verify_each": "full"}, {"verify_each": False}, {"timing": True}, {"print_after_all": True}],
    ids=["full", "off", "timing", "printing"],
)
def test_every_pass_runs_when_each_is_verified_in_full_timed_or_printed(
    instrumentation: dict[str, object],
) -> None:
    ran: list[str] = []
    _, records = run([probe((mir.SigmoidOp,), ran)], **instrumentation)
    assert not skipped(records) and ran == ["probe"]


def declaring_passes() -> list[type[ModulePass]]:
    return [
        kind
        for make in RLX_PASSES.values()
        if (kind := make()) is not None and acts_on_kinds(kind) is not None
    ]


def acts_on_kinds(kind: type[ModulePass]) -> tuple[type[Operation], ...] | None:
    found: tuple[type[Operation], ...] | None = getattr(kind, "ACTS_ON", None)
    return found


def test_the_passes_that_declare_kinds_are_the_ones_expected() -> None:
    assert sorted(k.name for k in declaring_passes()) == [
        "inline", "lower-hir-to-mir", "lower-integer", "lower-recurrent", "quant-to-integer",
        "sccp",
    ]  # fmt: skip


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "models"


@pytest.mark.parametrize(
    "model",
    sorted([*EXAMPLES.glob("*.onnx"), *EXAMPLES.glob("sklearn/*.onnx")]),
    ids=lambda p: p.stem,
)
def test_a_declaring_pass_changes_nothing_where_it_is_not_run(model: Path) -> None:
    # The declaration is what lets the pass manager skip a pass: run it anyway, on real
    # models without the kinds (as imported, and as the default pipeline leaves them
    # before planning memory), and nothing changes.
    compiled = CompilePipeline(target="cpu", plan_memory=False, keep_stages=False)
    for module in (import_model(model), compiled.compile(import_model(model)).module):
        for kind in declaring_passes():
            kinds = acts_on_kinds(kind)
            assert kinds is not None
            if any(isinstance(op, kinds) for op in module.walk()):
                continue
            text = print_module(module)
            with collect_warnings() as warned:
                kind().apply(Context(), module)
            assert print_module(module) == text and not warned, kind.name
