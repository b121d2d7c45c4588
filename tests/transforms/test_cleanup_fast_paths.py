"""The cleanup passes' fast paths agree with the slow ones, op for op:

- ``rewriting.apply_greedily`` (with and without ``reach``) with xDSL's greedy walker,
  on algebraic-simplify's patterns;
- constant-fold's ``fold_flat_block`` with ``fold_block``, and ``ConstantData`` with the
  constant ``materialize`` makes;
- cse's sampled hash of raw data with what equality decides, and cse describing an op
  only once another has its name and operands with cse describing every op;
- dce's one sweep with xDSL's region liveness, in and around control-flow regions;
- lower-hir-to-mir's patterns through the driver with xDSL's walker, and the inline pass
  with the way it walked before.

Inputs: the filecheck cases of the passes, random cleanup-family graphs, and graphs
built so that a walk after the first rewrites something."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.traits import IsolatedFromAbove
from xdsl.transforms.dead_code_elimination import region_dce

from examples.build_examples import decoder_block, dense_cnn, inception_cnn, kws_dscnn, small_cnn
from rlx_compile import ModuleBuilder
from rlx_compile.common_subexpressions import _AttributeHashes, _Computation, _mergeable, cse_block
from rlx_compile.conversion.hir_to_mir import lowering_patterns
from rlx_compile.dead_code import dce_single_blocks
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import FusionPolicy
from rlx_compile.dialects.types import TensorType
from rlx_compile.folding import ConstantData, KnownValues, materialize
from rlx_compile.inlining import InlineRegion, inline_call
from rlx_compile.ir import func_graphs, make_context, parse_module, print_module
from rlx_compile.rewriting import apply_greedily
from rlx_compile.testing.random_graphs import outline, random_mir_graph
from rlx_compile.testing.regions import wrap_in_if, wrap_in_loop
from rlx_compile.transforms.algebraic_simplify import MATCH_REACH, simplify_patterns
from rlx_compile.transforms.constant_fold import fold_block, fold_flat_block
from rlx_compile.transforms.inline import InlinePass, _Contents, callees_first
from tests.sizes import sized

FILECHECK = Path(__file__).resolve().parents[1] / "filecheck" / "transforms"
SEEDS = range(sized(40, 200))


def filecheck_cases(*names: str) -> list[str]:
    """The ``--split-input-file`` cases of the given filecheck files that parse."""
    cases = []
    for name in names:
        for text in (FILECHECK / name).read_text().split("// -----"):
            try:
                parse_module(text)
            except Exception:  # a case about a parse or verify error
                continue
            cases.append(text)
    return cases


def softmax_behind_a_late_use() -> ModuleOp:
    """reshape(softmax(reshape(x))) back to x's type, whose inner reshape has another
    user -- an x·1 after it, which the first walk forwards and erases -- so that only the
    second walk sees the inner reshape with one user and rewrites the softmax."""
    with ModuleBuilder("f") as m:
        x = m.input("x", (2, 3))
        r1 = m.reshape(x, (1, 2, 3))
        y = m.reshape(m.softmax(r1, 2), (2, 3))
        m.mul(r1, m.constant(np.ones((1, 2, 3), np.float32)))  # dead: forwarded, erased
        m.output(m.relu(y), names=["y"])
    return m.module


def chains() -> ModuleOp:
    """Transposes, reshapes and casts in chains, with users in between."""
    with ModuleBuilder("f") as m:
        x = m.input("x", (2, 3, 4))
        t = m.transpose(m.transpose(m.transpose(x, [1, 0, 2]), [0, 2, 1]), [2, 1, 0])
        r = m.reshape(m.reshape(m.reshape(t, (24,)), (4, 6)), (2, 3, 4))
        c = m.cast(m.cast(m.cast(r, "f64"), "f32"), "f64")
        n = m.neg(m.neg(m.neg(m.neg(x))))
        m.output(c, m.add(n, m.constant(np.zeros((2, 3, 4), np.float32))), names=["c", "n"])
    return m.module


def modules() -> list[tuple[str, ModuleOp]]:
    out = [
        (f"filecheck {i}", parse_module(text))
        for i, text in enumerate(filecheck_cases("algebraic_simplify.mlir", "canonicalize.mlir"))
    ]
    out += [("late use", softmax_behind_a_late_use()), ("chains", chains())]
    out += [(f"seed {s}", random_mir_graph(s, 40, cleanup=True).module) for s in SEEDS]
    return out


def xdsl_walk(module: ModuleOp, patterns: list[RewritePattern]) -> list[bool]:
    walker = PatternRewriteWalker(
        GreedyRewritePatternApplier(patterns, dce_enabled=False), apply_recursively=True
    )
    return [walker.rewrite_region(g.body) for g in func_graphs(module)]


class Recorder:
    """What a listener hears, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.listener = PatternRewriterListener(
            operation_insertion_handler=[lambda op: self.events.append(("insert", op.name))],
            operation_removal_handler=[lambda op: self.events.append(("remove", op.name))],
            operation_modification_handler=[lambda op: self.events.append(("modify", op.name))],
        )


@pytest.mark.parametrize("assume_finite", [False, True])
def test_the_greedy_driver_rewrites_as_xdsls_walker(assume_finite: bool) -> None:
    rewrote_in_a_later_walk = 0
    for name, module in modules():
        want = module.clone()
        want_changed = xdsl_walk(want, simplify_patterns(assume_finite))
        for reach in (None, MATCH_REACH):
            got = module.clone()
            changed = [
                apply_greedily(g.body, simplify_patterns(assume_finite), reach=reach)
                for g in func_graphs(got)
            ]
            assert changed == want_changed, name
            assert print_module(got, debuginfo=True) == print_module(want, debuginfo=True), name
        rewrote_in_a_later_walk += name == "late use" and any(want_changed)
    assert rewrote_in_a_later_walk


def test_the_late_use_case_needs_a_second_walk() -> None:
    """The case above is only rewritten by a walk after the first: one walk of xDSL's
    walker (without its repeat) leaves the softmax reading the reshape."""

    def softmax_reads_x(module: ModuleOp) -> bool:
        return any(
            isinstance(op, mir.SoftmaxOp) and isinstance(op.input.owner, mir.InputOp)
            for op in module.walk()
        )

    once, fixpoint = softmax_behind_a_late_use(), softmax_behind_a_late_use()
    PatternRewriteWalker(
        GreedyRewritePatternApplier(simplify_patterns(), dce_enabled=False),
        apply_recursively=False,
    ).rewrite_region(func_graphs(once)[0].body)
    apply_greedily(func_graphs(fixpoint)[0].body, simplify_patterns(), reach=MATCH_REACH)
    assert not softmax_reads_x(once)
    assert softmax_reads_x(fixpoint)


def test_the_greedy_driver_tells_a_listener_what_xdsls_walker_tells() -> None:
    for name, module in modules()[:60]:
        want, got = Recorder(), Recorder()
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier(simplify_patterns(), dce_enabled=False),
            apply_recursively=True,
            listener=want.listener,
        )
        for g in func_graphs(module.clone()):
            walker.rewrite_region(g.body)
        for g in func_graphs(module.clone()):
            apply_greedily(g.body, simplify_patterns(), got.listener, reach=MATCH_REACH)
        assert got.events == want.events, name


class NegToRelu(RewritePattern):
    """A pattern without ``roots``: tried on every op."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, mir.NegOp):
            rewriter.replace(op, mir.ReluOp(op.input))


def test_a_pattern_without_roots_sees_every_op() -> None:
    for _, module in modules()[:40]:
        want, got = module.clone(), module.clone()
        xdsl_walk(want, [NegToRelu()])
        for g in func_graphs(got):
            apply_greedily(g.body, [NegToRelu()])
        assert print_module(got, debuginfo=True) == print_module(want, debuginfo=True)


def test_cse_compares_raw_data_whole_and_hashes_its_ends() -> None:
    """Constants of one type whose data differ only in the middle stay apart; equal data
    in distinct buffers merge."""
    base = np.zeros(1000, np.float32)
    middle = base.copy()
    middle[500] = 1.0
    with ModuleBuilder("f") as m:
        a = m.constant(base)
        b = m.constant(middle)
        c = m.constant(base.copy())
        m.output(a, b, c, names=["a", "b", "c"])
    (graph,) = func_graphs(m.module)
    constants = [op for op in graph.body.block.ops if isinstance(op, mir.ConstantOp)]
    assert constants[0].value.data is not constants[2].value.data
    assert cse_block(graph.body.block) == 1
    kept = [op for op in graph.body.block.ops if isinstance(op, mir.ConstantOp)]
    assert kept == constants[:2]


def cse_describing_every_op(block: Block, known: dict[_Computation, Operation]) -> int:
    """cse as it was: every mergeable op described and looked up."""
    removed = 0
    for op in list(block.ops):
        for region in op.regions:
            for nested in region.blocks:
                scope = {} if op.has_trait(IsolatedFromAbove) else dict(known)
                removed += cse_describing_every_op(nested, scope)
        if not _mergeable(op):
            continue
        key = _Computation(op, _AttributeHashes())
        first = known.setdefault(key, op)
        if first is not op:
            for old, new in zip(op.results, first.results, strict=True):
                old.replace_all_uses_with(new)
            block.erase_op(op)
            removed += 1
    return removed


def test_cse_describes_ops_only_where_it_must() -> None:
    merged_some = False
    for name, module in dce_inputs():
        want, got = module.clone(), module.clone()
        for w, g in zip(func_graphs(want), func_graphs(got), strict=True):
            count = cse_describing_every_op(w.body.block, {})
            assert cse_block(g.body.block) == count, name
            merged_some |= count > 0
        assert print_module(got, debuginfo=True) == print_module(want, debuginfo=True), name
    assert merged_some


def with_dead_regions(module: ModuleOp) -> ModuleOp:
    """``module`` with an unused copy of each control-flow op of its graphs: dead, while
    the ops of its body are live by region liveness's rule (their terminator reads them),
    and with them the graph values they read."""
    for graph in func_graphs(module):
        for op in list(graph.body.block.ops):
            if op.regions:
                graph.body.block.insert_op_before(op.clone(), op)
    return module


def dce_inputs() -> list[tuple[str, ModuleOp]]:
    out = [
        (f"filecheck {i}", parse_module(text))
        for i, text in enumerate(filecheck_cases("dce.mlir", "cse.mlir", "control_flow.mlir"))
    ]
    for s in SEEDS[:40]:
        out.append((f"seed {s}", random_mir_graph(s, 40, cleanup=True).module))
        for name, wrap in (("if", wrap_in_if), ("loop", wrap_in_loop)):
            wrapped = wrap(random_mir_graph(s, 24, cleanup=True).module)
            dead = with_dead_regions(wrapped.clone())
            out += [(f"seed {s} {name}", wrapped), (f"seed {s} {name} dead", dead)]
    return out


def test_dce_sweeps_once_as_region_liveness_erases() -> None:
    erased_some = False
    for name, module in dce_inputs():
        want, got = module.clone(), module.clone()
        for w, g in zip(func_graphs(want), func_graphs(got), strict=True):
            heard, told = Recorder(), Recorder()
            if not dce_single_blocks(g.body, told.listener):
                continue
            region_dce(w.body, heard.listener)
            assert told.events == heard.events, name
            erased_some |= bool(heard.events)
        assert print_module(got, debuginfo=True) == print_module(want, debuginfo=True), name
    assert erased_some


def constant_fold_inputs() -> list[tuple[str, ModuleOp]]:
    out = [
        (f"filecheck {i}", parse_module(text))
        for i, text in enumerate(filecheck_cases("constant_fold.mlir", "sccp.mlir", "cse.mlir"))
    ]
    return out + [(f"seed {s}", random_mir_graph(s, 40, cleanup=True).module) for s in SEEDS]


@pytest.mark.parametrize("max_elements", [1, 8, 1 << 20])
def test_folding_a_flat_block_folds_as_fold_block(max_elements: int) -> None:
    folded_some = False
    for name, module in constant_fold_inputs():
        want, got = module.clone(), module.clone()
        for w, g in zip(func_graphs(want), func_graphs(got), strict=True):
            block = g.body.block
            if any(op.regions for op in block.ops):
                continue
            count = fold_block(w.body.block, KnownValues(max_elements))
            assert fold_flat_block(block, KnownValues(max_elements)) == count, name
            folded_some |= count > 0
        assert print_module(got, debuginfo=True) == print_module(want, debuginfo=True), name
    assert folded_some


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16", "i8", "i32", "i64", "bool"])
def test_constant_data_is_what_the_materialised_constant_holds(dtype: str) -> None:
    t = TensorType((3, 4), dtype)
    base = np.arange(-6, 6).reshape(4, 3).astype(t.dtype.numpy)
    for array in [base.T, np.broadcast_to(base[:1].T, (3, 4)), np.ascontiguousarray(base.T)]:
        with ModuleBuilder("f") as m:
            x = m.input("x", (3, 4), dtype)
            m.output(x, names=["y"])
        (graph,) = func_graphs(m.module)
        value = graph.body.block.first_op.results[0]
        value.name_hint = "v"
        want = materialize(array, value)
        data = ConstantData(array)
        got = data.constant(value)
        assert got.value == want.value and got.result.type == want.result.type
        assert got.location == want.location and got.result.name_hint == "v"
        assert print_module(got, generic=True) == print_module(want, generic=True)
        read, want_read = data.array, want.to_numpy()
        assert read.dtype == want_read.dtype and read.shape == want_read.shape
        assert read.tobytes() == want_read.tobytes() and read.strides == want_read.strides
        assert read.flags["C_CONTIGUOUS"] and not read.flags["WRITEABLE"]
        np.testing.assert_array_equal(got.to_numpy(), want_read)


def hir_modules() -> list[tuple[str, ModuleOp]]:
    out = []
    for policy in ("direct", "fusable"):
        for build in (decoder_block, small_cnn, inception_cnn, dense_cnn, kws_dscnn):
            out.append((f"{build.__name__} {policy}", build(policy=policy)))
    for s in SEEDS[:20]:
        g = random_mir_graph(s, 30, cleanup=True)
        out += [(f"seed {s} {kind}", outline(g.module, s, kind)) for kind in ("call", "region")]
    return out


@pytest.mark.parametrize("policy", [None, FusionPolicy.DIRECT, FusionPolicy.FUSABLE])
def test_lowering_hir_rewrites_as_xdsls_walker(policy: FusionPolicy | None) -> None:
    for name, module in hir_modules():
        want, got = module.clone(), module.clone()
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier(lowering_patterns(policy), dce_enabled=False),
            apply_recursively=True,
        )
        changed = walker.rewrite_module(want)
        assert apply_greedily(got.body, lowering_patterns(policy)) == changed, name
        assert print_module(got, debuginfo=True) == print_module(want, debuginfo=True), name


def inline_as_before(module: ModuleOp) -> None:
    """The inline pass as it was: a walk per graph for its calls, another to order the
    graphs, and xDSL's walker on every graph for the regions."""
    graphs = func_graphs(module)
    by_name = {g.sym_name.data: g for g in graphs}
    calls = {g: [op for op in g.walk() if isinstance(op, func.CallOp)] for g in graphs}
    called: list[str] = []
    for graph in callees_first(graphs, {g: _Contents(g) for g in graphs}):
        for call in [op for op in graph.walk() if isinstance(op, func.CallOp)]:
            assert call in calls[graph]
            target = call.callee.string_value()
            if target not in called:
                called.append(target)
            inline_call(call, by_name[target])
    walker = PatternRewriteWalker(InlineRegion(), apply_recursively=True)
    for graph in graphs:
        walker.rewrite_region(graph.body)
    for name in called:
        if "rlx.main" not in by_name[name].attributes:
            by_name[name].detach()
            by_name[name].erase()


def test_inline_inlines_as_before() -> None:
    for name, module in hir_modules():
        want, got = module.clone(), module.clone()
        inline_as_before(want)
        InlinePass().apply(make_context(), got)
        assert print_module(got, debuginfo=True) == print_module(want, debuginfo=True), name
