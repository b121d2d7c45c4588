"""Verification that costs what changed: after a pass only the ops whose stamp changed
(and their ancestors, users through their operand types, moved ops) are verified; the
full verify after the last pass catches what no stamp shows; the first pass to produce
invalid IR is the one named."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint, Rewriter

from rlx_compile import ModuleBuilder
from rlx_compile.diagnostics import (
    ChangeLog,
    PassFailure,
    VerifyFailure,
    change_listener,
    note_block_changed,
    note_changed,
    note_removed,
    verified_clone,
    verify_changes,
    verify_module,
)
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.passmanager import Instrumentation, PassManager, parse_pipeline
from rlx_compile.pipeline import CompileError, CompilePipeline
from rlx_compile.transforms import RLX_PASSES


def module() -> ModuleOp:
    with ModuleBuilder("f") as m:
        x = m.input("x", (2, 3))
        y = m.transpose(m.relu(x), [1, 0])
        m.output(m.add(y, y), names=["y"])
    return m.module


def first(op: ModuleOp, kind: type[Operation]) -> Operation:
    return next(o for o in op.walk() if isinstance(o, kind))


def mutate(edit: Callable[[ModuleOp], None]) -> ModulePass:
    """A test pass named ``mutate`` that applies ``edit`` to the module."""

    @dataclass(frozen=True)
    class Mutate(ModulePass):
        name = "mutate"

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            edit(op)

    return Mutate()


def corrupt_in_place(m: ModuleOp) -> None:
    """Changes the transpose's permutation inside its (immutable) attribute: the op's
    stamp does not show it."""
    perm = first(m, mir.TransposeOp).properties["perm"]
    object.__setattr__(perm, "data", type(perm.data)(b"\x00" * 16))


def corrupt_result_type(m: ModuleOp) -> None:
    """Gives the relu a result type its operand does not produce: a visible change."""
    relu = first(m, mir.ReluOp)
    wrong = relu.results[0].type.with_shape([3, 2])
    Rewriter.replace_op(relu, mir.ReluOp.create(operands=list(relu.operands), result_types=[wrong]))


def run(*edits: Callable[[ModuleOp], None], verify_each: bool | str = True) -> None:
    passes = [mutate(e) for e in edits] + parse_pipeline("cse")
    PassManager(passes, Instrumentation(verify_each=verify_each)).run(module())


def test_a_change_no_stamp_shows_is_caught_by_the_final_verify() -> None:
    with pytest.raises(VerifyFailure) as err:
        run(corrupt_in_place)
    line = err.value.line()
    assert "'mir.transpose' op" in line
    assert "after the pipeline" in line and "--verify-each=full finds the pass" in line


def test_full_mode_names_the_pass_that_changed_an_attribute_in_place() -> None:
    with pytest.raises(VerifyFailure) as err:
        run(corrupt_in_place, verify_each="full")
    assert err.value.line().endswith("(after pass 'mutate')")


def test_a_visible_change_is_caught_at_once_and_the_pass_named() -> None:
    # The second, harmless pass must not be blamed: the first one broke the IR.
    with pytest.raises(VerifyFailure) as err:
        run(corrupt_result_type, lambda m: None)
    line = err.value.line()
    assert "'mir.relu' op result" in line
    assert line.endswith("(after pass 'mutate')")


def test_users_of_a_changed_op_are_verified_again() -> None:
    """The new producer verifies on its own; the add now reading it does not."""

    def reshape_producer(m: ModuleOp) -> None:
        t = first(m, mir.TransposeOp)
        narrower = mir.NarrowOp(t.results[0], 0, 0, 2)
        Rewriter.insert_op(narrower, InsertPoint.after(t))
        add = first(m, mir.AddOp)
        add.operands = [narrower.results[0], add.operands[1]]

    with pytest.raises(VerifyFailure) as err:
        run(reshape_producer)
    assert "'mir.add' op" in err.value.line()
    assert err.value.line().endswith("(after pass 'mutate')")


def test_a_moved_op_is_checked_for_order() -> None:
    def move_relu_last(m: ModuleOp) -> None:
        relu = first(m, mir.ReluOp)
        ret = relu.parent_block().last_op
        relu.detach()
        Rewriter.insert_op(relu, InsertPoint.before(ret))

    with pytest.raises(VerifyFailure) as err:
        run(move_relu_last)
    assert "is used before it is defined (after pass 'mutate')" in err.value.line()


def two_graphs() -> ModuleOp:
    """``module()`` with a copy of its graph beside it, as ``@g``."""
    m = module()
    graph = next(iter(m.body.block.ops))
    other = graph.clone()
    other.properties["sym_name"] = StringAttr("g")
    m.body.block.add_op(other)
    return m


def graphs(m: ModuleOp) -> list[Operation]:
    return list(m.body.block.ops)


def test_a_value_read_across_graphs_is_caught_at_once() -> None:
    """The graph isolated from above checks what changed in it: the add now reading the
    other graph's relu."""

    def read_across(m: ModuleOp) -> None:
        f, g = graphs(m)
        add = first(g, mir.AddOp)
        add.operands = [first(f, mir.ReluOp).results[0], add.operands[1]]

    m = two_graphs()
    with pytest.raises(VerifyFailure) as err:
        PassManager([mutate(read_across)], Instrumentation()).run(m)
    line = err.value.line()
    assert "'func.func' op Operation using value defined out of its IsolatedFromAbove" in line
    assert "mir.add" in line and line.endswith("(after pass 'mutate')")


def test_a_producer_moved_out_of_its_graph_is_caught_at_once() -> None:
    """The reader left behind did not change; it reads what moved: checked with it."""

    def move_relu_across(m: ModuleOp) -> None:
        f, g = graphs(m)
        relu = first(f, mir.ReluOp)
        relu.detach()
        Rewriter.insert_op(relu, InsertPoint.at_start(first(g, mir.ReluOp).parent_block()))

    m = two_graphs()
    with pytest.raises(VerifyFailure) as err:
        PassManager([mutate(move_relu_across)], Instrumentation()).run(m)
    line = err.value.line()
    assert "IsolatedFromAbove parent" in line and "mir.transpose" in line
    assert line.endswith("(after pass 'mutate')")


def spy_on_verify(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the ops verified from now on, in order."""
    seen: list[str] = []
    # The RLX ops' own verify (ShapedOp's: xDSL's reading fields directly) and xDSL's.
    for cls in (Operation, ShapedOp):
        original = cls.__dict__["verify"]

        def spy(
            op: Operation,
            verify_nested_ops: bool = True,
            original: Callable[[Operation, bool], None] = original,
            cls: type[Operation] = cls,
        ) -> None:
            if cls is ShapedOp or not isinstance(op, ShapedOp):
                seen.append(op.name)
            original(op, verify_nested_ops)

        monkeypatch.setattr(cls, "verify", spy)
    return seen


def spy_on_transpose_inference(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """One entry per ``mir.transpose`` result inference from now on."""
    calls: list[str] = []
    original = mir.TransposeOp.infer.__func__  # type: ignore[attr-defined]

    def spy(cls: type[mir.TransposeOp], props: object, **types: object) -> object:
        calls.append(cls.name)
        return original(cls, props, **types)

    monkeypatch.setattr(mir.TransposeOp, "infer", classmethod(spy))
    return calls


def test_unchanged_ops_are_not_verified_again(monkeypatch: pytest.MonkeyPatch) -> None:
    m = module()
    verify_module(m)
    seen = spy_on_verify(monkeypatch)
    verify_module(m)
    assert seen == []
    relu = first(m, mir.ReluOp)
    relu.attributes["tag"] = IntAttr(1)
    verify_module(m)
    # The changed op: the graph and module holding it check only that it reads nothing
    # from outside them (what else their verifiers read of their bodies is unchanged).
    assert sorted(seen) == ["mir.relu"]
    seen.clear()
    verify_module(m, full=True)
    assert len(seen) == sum(1 for _ in m.walk())


def test_a_built_op_is_inferred_again_once_its_properties_change() -> None:
    """The transpose was built with inferred result types; given the identity
    permutation (a new, valid attribute) its declared 3x2 result no longer matches."""

    def identity_perm(m: ModuleOp) -> None:
        t = first(m, mir.TransposeOp)
        t.properties["perm"] = DenseArrayBase.from_list(i64, [0, 1])

    with pytest.raises(VerifyFailure) as err:
        run(identity_perm)
    assert "'mir.transpose' op result type" in err.value.line()
    assert err.value.line().endswith("(after pass 'mutate')")


def test_result_types_inferred_at_construction_are_inferred_again_only_in_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = module()  # built: the transpose's result types were inferred then
    calls = spy_on_transpose_inference(monkeypatch)
    verify_module(m)
    assert calls == []
    verify_module(m, full=True)
    assert calls == ["mir.transpose"]


def test_a_failing_pass_reports_ir_that_does_not_verify() -> None:
    def break_then_fail(m: ModuleOp) -> None:
        corrupt_in_place(m)
        raise RuntimeError("gave up")

    with pytest.raises(PassFailure) as err:
        run(break_then_fail)
    assert "gave up; the IR does not verify:" in err.value.line()
    assert "'mir.transpose' op" in err.value.line()


def test_compile_pipeline_modes() -> None:
    m = module()
    for mode in (True, False, "changed", "full", "off"):
        result = CompilePipeline(target="cpu", verify_each=mode, keep_stages=False).compile(m)
        assert result.lir is not None
    with pytest.raises(CompileError, match="unknown verify-each mode 'some'"):
        CompilePipeline(target="cpu", verify_each="some")


def yield_transposed(m: ModuleOp) -> None:
    """The first region's yield given a transposed value: every op verifies on its own,
    only the region op around it (its result types) can tell."""
    yielded = first(m, mir.YieldOp)
    value = yielded.operands[-1]
    flipped = mir.TransposeOp(value, [1, 0])
    Rewriter.insert_op(flipped, InsertPoint.before(yielded))
    yielded.operands = [*yielded.operands[:-1], flipped.results[0]]


@pytest.mark.parametrize("wrap", ["if", "loop"])
@pytest.mark.parametrize("edit", [corrupt_result_type, yield_transposed])
def test_a_change_inside_a_control_flow_region_is_caught_at_once(
    wrap: str, edit: Callable[[ModuleOp], None]
) -> None:
    """A change inside an if branch or a loop body: the changed ops, the yield and the
    region op around them are verified again, and the pass that made it is named."""
    from rlx_compile.testing.regions import wrap_in_if, wrap_in_loop

    wrapped = (wrap_in_if if wrap == "if" else wrap_in_loop)(module())
    verify_module(wrapped, full=True)
    passes = [mutate(edit), *parse_pipeline("cse")]
    with pytest.raises(VerifyFailure) as err:
        PassManager(passes, Instrumentation(verify_each="changed")).run(wrapped)
    line = err.value.line()
    assert any(f"'{op}' op" in line for op in ("mir.relu", "mir.if", "mir.loop", "mir.yield"))
    assert line.endswith("(after pass 'mutate')")


# -- passes that report what they change --------------------------------------------


def reporting(edit: Callable[[ModuleOp], None]) -> ModulePass:
    """A test pass named ``mutate`` that applies ``edit`` and is trusted to report what it
    changes (``REPORTS_CHANGES``): the verify after it checks only what it reported."""

    @dataclass(frozen=True)
    class Reporting(ModulePass):
        name = "mutate"
        REPORTS_CHANGES: ClassVar[bool] = True

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            edit(op)

    return Reporting()


def run_reporting(*passes: ModulePass) -> None:
    PassManager([*passes, *parse_pipeline("cse")], Instrumentation(verify_each=True)).run(module())


def give_transpose_the_identity(m: ModuleOp, *, report: bool) -> None:
    """A valid new permutation that the transpose's 3x2 result no longer matches."""
    t = first(m, mir.TransposeOp)
    t.properties["perm"] = DenseArrayBase.from_list(i64, [0, 1])
    if report:
        note_changed(t)


def test_a_reported_op_that_does_not_verify_is_caught_at_once_and_named() -> None:
    with pytest.raises(VerifyFailure) as err:
        run_reporting(reporting(lambda m: give_transpose_the_identity(m, report=True)))
    line = err.value.line()
    assert "'mir.transpose' op result type" in line
    assert line.endswith("(after pass 'mutate')")


def test_an_op_changed_but_not_reported_is_caught_by_the_final_verify() -> None:
    with pytest.raises(VerifyFailure) as err:
        run_reporting(reporting(lambda m: give_transpose_the_identity(m, report=False)))
    line = err.value.line()
    assert "'mir.transpose' op result type" in line
    assert "after the pipeline" in line and "--verify-each=full finds the pass" in line


def test_what_a_pass_did_not_report_shows_at_the_next_pass_that_is_not_trusted() -> None:
    """The next pass compares every stamp; its message says an earlier pass may be the
    one (the stamps cannot tell)."""
    with pytest.raises(VerifyFailure) as err:
        passes = [reporting(lambda m: give_transpose_the_identity(m, report=False)), mutate(print)]
        PassManager(passes, Instrumentation(verify_each=True)).run(module())
    line = err.value.line()
    assert "(after pass 'mutate'; or a change that an earlier pass (mutate) did not report" in line


def test_users_of_a_reported_op_are_verified_again() -> None:
    """The input's new type is valid (an input's type is free); the relu reading it no
    longer is, though only the input was reported."""

    def retype_input(m: ModuleOp) -> None:
        x = first(m, mir.InputOp)
        Rewriter.replace_value_with_new_type(x.results[0], x.results[0].type.with_shape([2, 4]))
        note_changed(x)

    with pytest.raises(VerifyFailure) as err:
        run_reporting(reporting(retype_input))
    assert "'mir.relu' op" in err.value.line()
    assert err.value.line().endswith("(after pass 'mutate')")


def test_ops_reported_through_a_rewriter_listener_are_verified() -> None:
    class Break(RewritePattern):
        def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
            if isinstance(op, mir.ReluOp) and op.results[0].type.shape == (2, 3):
                wrong = op.results[0].type.with_shape([3, 2])
                rewriter.replace(op, mir.ReluOp.create(operands=[op.input], result_types=[wrong]))

    def rewrite(m: ModuleOp) -> None:
        PatternRewriteWalker(Break(), listener=change_listener()).rewrite_module(m)

    with pytest.raises(VerifyFailure) as err:
        run_reporting(reporting(rewrite))
    assert "'mir.relu' op result" in err.value.line()
    assert err.value.line().endswith("(after pass 'mutate')")


def test_a_reported_block_has_its_ops_compared_with_their_stamps() -> None:
    def break_and_report_block(m: ModuleOp) -> None:
        give_transpose_the_identity(m, report=False)
        note_block_changed(first(m, mir.ReluOp).parent_block())

    with pytest.raises(VerifyFailure) as err:
        run_reporting(reporting(break_and_report_block))
    assert err.value.line().endswith("(after pass 'mutate')")


def test_a_reported_move_is_checked_for_order() -> None:
    def move_relu_last(m: ModuleOp) -> None:
        relu = first(m, mir.ReluOp)
        ret = relu.parent_block().last_op
        relu.detach()
        Rewriter.insert_op(relu, InsertPoint.before(ret))
        note_changed(relu)

    with pytest.raises(VerifyFailure) as err:
        run_reporting(reporting(move_relu_last))
    assert "is used before it is defined (after pass 'mutate')" in err.value.line()


def test_a_removal_reports_the_block_it_left() -> None:
    """Erasing the graph's terminator: the op now ending the block is verified again."""

    def erase_return(m: ModuleOp) -> None:
        ret = first(m, func.ReturnOp)
        note_removed(ret)
        Rewriter.erase_op(ret)

    with pytest.raises(VerifyFailure) as err:
        run_reporting(reporting(erase_return))
    assert err.value.line().endswith("(after pass 'mutate')")


def test_a_pass_reporting_nothing_has_nothing_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    m = module()
    verify_module(m)
    seen = spy_on_verify(monkeypatch)
    log = ChangeLog()
    verify_changes(m, log)
    assert seen == []
    relu = first(m, mir.ReluOp)
    log.changed(relu)
    verify_changes(m, log)
    # The reported op and its user (the graph and module holding them check isolation).
    assert sorted(seen) == ["mir.relu", "mir.transpose"]


def test_a_verified_clone_keeps_the_inference_records(monkeypatch: pytest.MonkeyPatch) -> None:
    copy = verified_clone(module())
    calls = spy_on_transpose_inference(monkeypatch)
    for op in copy.walk():  # every op changed as far as the stamps can tell
        op.__dict__.pop("_rlx_verified_stamp")
    verify_module(copy)
    assert calls == []
    verify_module(copy, full=True)
    assert calls == ["mir.transpose"]


def test_a_compile_infers_an_unchanged_op_again_only_in_the_final_verify(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The compiled copy and the planned graph's ops are clones that keep the records
    of what their originals' result types were inferred from."""
    m = module()
    calls = spy_on_transpose_inference(monkeypatch)
    CompilePipeline(target="cpu", keep_stages=False).compile(m)
    assert calls == ["mir.transpose"]


# -- a verify merged into the final one ---------------------------------------------


def quiet(edit: Callable[[ModuleOp], None] = lambda m: None) -> ModulePass:
    """A test pass named ``quiet`` that declares it changes nothing (as ``plan-check``)
    and applies ``edit``."""

    @dataclass(frozen=True)
    class Quiet(ModulePass):
        name = "quiet"
        REPORTS_CHANGES: ClassVar[bool] = True
        CHANGES_NOTHING: ClassVar[bool] = True

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            edit(op)

    return Quiet()


def run_before_quiet(*passes: ModulePass, observed: bool = False) -> ModuleOp:
    m = module()
    callback = (lambda p, m: None) if observed else None
    PassManager(list(passes), Instrumentation(verify_each=True), callback=callback).run(m)
    return m


def test_the_pass_before_those_that_change_nothing_is_verified_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its verify and the final full one are one: each op is verified once after it."""

    def tag_relu(m: ModuleOp) -> None:
        first(m, mir.ReluOp).attributes["tag"] = IntAttr(1)

    m = module()
    verify_module(m)
    seen = spy_on_verify(monkeypatch)
    PassManager([mutate(tag_relu), quiet()], Instrumentation(verify_each=True)).run(m)
    assert sorted(seen) == sorted(op.name for op in m.walk())
    observed = module()
    verify_module(observed)
    seen.clear()
    run = PassManager([mutate(tag_relu), quiet()], callback=lambda p, m: None)
    run.run(observed)
    assert len(seen) == sum(1 for _ in observed.walk()) + 1  # the relu after the first pass
    copied = module()  # a callback that only copies the module (stages) merges them still
    verify_module(copied)
    seen.clear()
    copies: list[ModuleOp] = []
    run = PassManager(
        [mutate(tag_relu), quiet()],
        callback=lambda p, m: copies.append(m.clone()),
        callback_copies_only=True,
    )
    run.run(copied)
    assert sorted(seen) == sorted(op.name for op in copied.walk())
    assert len(copies) == 2


@pytest.mark.parametrize("observed", [False, True])
def test_a_merged_verify_still_names_the_pass_that_broke_the_ir(observed: bool) -> None:
    with pytest.raises(VerifyFailure) as err:
        run_before_quiet(mutate(corrupt_result_type), quiet(), observed=observed)
    line = err.value.line()
    assert "'mir.relu' op result" in line
    if observed:
        assert line.endswith("(after pass 'mutate')")
    else:  # what the pass after it did not report would show there too
        assert line.endswith(
            "(after pass 'mutate'; or a change that a later pass (quiet) did not report: "
            "--verify-each=full finds the pass)"
        )


@pytest.mark.parametrize("hooked", [False, True])
def test_a_compile_keeping_stages_names_the_pass_that_broke_the_ir(
    hooked: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stages only copy the module (its verify merged with the full one); a hook reads it
    (verified before it runs): either way the pass is named."""
    corrupt = type(mutate(corrupt_result_type))
    monkeypatch.setattr(corrupt, "name", "corrupt-relu-type")
    monkeypatch.setitem(RLX_PASSES, "corrupt-relu-type", lambda: corrupt)
    seen: list[str] = []
    hooks = [lambda spec, m: seen.append(spec)] if hooked else []
    pipe = CompilePipeline(pipeline="builtin.module(cse,corrupt-relu-type)", inspect=hooks)
    with pytest.raises(VerifyFailure) as err:
        pipe.compile(module())
    assert "(after pass 'corrupt-relu-type'" in err.value.line()
    assert seen == (["cse"] if hooked else [])  # no hook sees IR that does not verify


def test_a_merged_verify_still_reports_what_no_stamp_shows_after_the_pipeline() -> None:
    with pytest.raises(VerifyFailure) as err:
        run_before_quiet(mutate(corrupt_in_place), quiet())
    assert "after the pipeline" in err.value.line()


def test_a_pass_failing_after_a_merged_verify_does_not_hide_the_broken_ir() -> None:
    def fail(m: ModuleOp) -> None:
        raise ValueError("no")

    with pytest.raises(VerifyFailure) as err:
        run_before_quiet(mutate(corrupt_result_type), quiet(fail))
    assert "after pass 'mutate'" in err.value.line()
    with pytest.raises(PassFailure) as failed:
        run_before_quiet(mutate(lambda m: None), quiet(fail))
    assert failed.value.line() == "error: pass 'quiet' failed: ValueError: no"


def test_a_pass_declaring_it_changes_nothing_fails_when_it_reports_a_change() -> None:
    with pytest.raises(PassFailure) as err:
        run_before_quiet(
            mutate(lambda m: None), quiet(lambda m: note_changed(first(m, mir.ReluOp)))
        )
    assert "it changed the IR, though it declares it changes nothing" in err.value.line()


def test_a_compile_with_hooks_gives_what_one_without_gives() -> None:
    m = module()
    seen: list[str] = []
    plain = CompilePipeline(target="cpu", keep_stages=False).compile(m)
    hooked = CompilePipeline(
        target="cpu", keep_stages=False, inspect=lambda s, _: seen.append(s)
    ).compile(m)
    assert plain.text() == hooked.text() and seen[-1] == "plan-check"


# -- ancestors whose verifier reads little of their body ----------------------------


def test_an_ancestor_is_verified_again_when_what_it_reads_of_its_body_changed() -> None:
    """A graph reads its entry block's argument types; a module its ops' symbol names."""

    def duplicate_symbol(m: ModuleOp) -> None:
        graph = graphs(m)[1]
        graph.properties["sym_name"] = StringAttr("f")
        note_changed(first(graph, mir.ReluOp))  # what is reported: an op inside it

    m = two_graphs()
    verify_module(m)
    with pytest.raises(VerifyFailure) as err:
        PassManager([reporting(duplicate_symbol)]).run(m, verified=True)
    assert "'builtin.module' op Redefinition of symbol" in err.value.line()

    def add_argument(m: ModuleOp) -> None:
        graphs(m)[0].body.block.insert_arg(i64, 0)
        note_changed(first(m, mir.ReluOp))

    m = module()
    verify_module(m)
    with pytest.raises(VerifyFailure) as err:
        PassManager([reporting(add_argument)]).run(m, verified=True)
    assert "'func.func' op Expected entry block arguments" in err.value.line()


def test_an_ancestor_still_checks_that_a_changed_op_reads_nothing_from_outside_it() -> None:
    def read_the_other_graph(m: ModuleOp) -> None:
        a, b = graphs(m)
        add = first(b, mir.AddOp)
        add.operands = [first(a, mir.TransposeOp).results[0], add.operands[1]]
        note_changed(add)

    m = two_graphs()
    verify_module(m)
    with pytest.raises(VerifyFailure) as err:
        PassManager([reporting(read_the_other_graph)]).run(m, verified=True)
    assert "'func.func' op Operation using value defined out of its IsolatedFromAbove" in (
        err.value.line()
    )


def test_erasing_an_op_before_the_last_one_does_not_verify_the_last_one_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What ends the block is what it was: nothing its verifier reads changed."""

    def erase_dead_relu(m: ModuleOp) -> None:
        relu = first(m, mir.ReluOp)
        dead = mir.ReluOp(relu.results[0])
        Rewriter.insert_op(dead, InsertPoint.after(relu))
        note_changed(dead)

    def erase_it(m: ModuleOp) -> None:
        dead = first(m, mir.ReluOp).next_op
        assert isinstance(dead, mir.ReluOp)
        note_removed(dead)
        Rewriter.erase_op(dead)

    m = module()
    verify_module(m)
    PassManager([reporting(erase_dead_relu)], callback=lambda p, m: None).run(m, verified=True)
    seen = spy_on_verify(monkeypatch)
    PassManager([reporting(erase_it)], callback=lambda p, m: None).run(m, verified=True)
    assert len(seen) == sum(1 for _ in m.walk())  # the final verify alone
