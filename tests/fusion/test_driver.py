"""The fusion driver's shortcuts change nothing: ``run_patterns`` and ``scan`` (root
kinds looked up per class, a rewriter only for a fusion found, patterns whose ``needs``
the module lacks left out) fuse, report and miss exactly what the plain driver (a walk
per round, ``isinstance`` per op and pattern, every pattern tried) does, on the fusion
FileCheck inputs for several targets."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, OpResult
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

import rlx_compile.fusion.base as base
import rlx_compile.fusion.stage as stage
import rlx_compile.transforms.fuse as fuse
import rlx_compile.transforms.unfuse_elementwise_regions as unfuse
from rlx_compile.dialects import mir
from rlx_compile.fusion import FusionReport, fusion_pattern_types
from rlx_compile.fusion.report import MissedFusion
from rlx_compile.ir import location_str, parse_module, print_module, tracking_block_order
from rlx_compile.legalization.driver import dispatched_ops
from rlx_compile.targets import get_target
from tests.fusion.helpers import apply

FILECHECK = Path(__file__).parents[1] / "filecheck" / "transforms"
INPUTS = [*sorted((FILECHECK / "fusion").glob("*.mlir")), FILECHECK / "control_flow.mlir"]
TARGETS = ("cpu", "cuda", "cortex-m")  # regions unfused, kept; a small claim set


def modules() -> Iterator[tuple[str, ModuleOp]]:
    for path in INPUTS:
        for i, text in enumerate(path.read_text().split("// -----")):
            yield f"{path.name}#{i}", parse_module(text)


def plain_run_patterns(module: ModuleOp, patterns: Sequence[RewritePattern], reverse: bool) -> None:
    """run_patterns as it was: a walk per round, every pattern on its root kinds."""
    with tracking_block_order():
        roots = [getattr(p, "roots", (Operation,)) for p in patterns]
        kinds = tuple({kind for group in roots for kind in group})
        while True:
            changed = False
            for op in [o for o in module.walk(reverse=reverse) if isinstance(o, kinds)]:
                if op.parent is None:
                    continue
                for pattern, root in zip(patterns, roots, strict=True):
                    if isinstance(op, root):
                        rewriter = PatternRewriter(op)
                        pattern.match_and_rewrite(op, rewriter)
                        if rewriter.has_done_action:
                            changed = True
                            break
            if not changed:
                return


def plain_scan(
    module: ModuleOp, ctx: base.FusionContext, kinds: Sequence[type[base.FusionPattern]]
) -> None:
    """scan as it was: every pattern on every dispatched op of its root kinds."""
    patterns = [k(ctx) for k in kinds]
    with tracking_block_order():
        for op in dispatched_ops(module):
            for p in patterns:
                if isinstance(op, p.roots) and isinstance(m := p.match(op), base.Miss):
                    ctx.report.missed.append(
                        MissedFusion(p.name, op.name, location_str(op), m.reason, m.hint)
                    )


def fused(module: ModuleOp, target: str) -> str:
    out, reports = apply(module, f"fuse{{target={target}}}")
    (report,) = [r for r in reports if isinstance(r, FusionReport)]
    return print_module(out) + "\n" + report.render()


@pytest.mark.parametrize("target", TARGETS)
def test_fuse_as_with_the_plain_driver(target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = list(modules())
    fast = [fused(m, target) for _, m in inputs]
    # Replaced where the passes call them: fusion.base is compiled (rlx_compile._compiled),
    # and its own calls do not look its module's names up. (is_static's shortcut through
    # reads_run_time_data is checked against the walk it saves by the last test here.)
    monkeypatch.setattr(stage, "run_patterns", plain_run_patterns)
    monkeypatch.setattr(unfuse, "run_patterns", plain_run_patterns)
    # The plain driver does not keep the kinds a module holds: every stage tries.
    monkeypatch.setattr(stage, "findable", lambda module, kinds: kinds)
    monkeypatch.setattr(stage, "scan", plain_scan)
    monkeypatch.setattr(fuse, "scan", plain_scan)
    for (name, m), want in zip(inputs, fast, strict=True):
        assert fused(m, target) == want, name


@pytest.fixture(scope="module")
def before_and_after() -> list[tuple[str, ModuleOp]]:
    """The inputs, and each after fuse{target=cuda}."""
    out = []
    for name, m in modules():
        out += [(name, m), (f"{name} fused", apply(m, "fuse{target=cuda}")[0])]
    return out


@pytest.mark.parametrize(
    "kind", [k for k in fusion_pattern_types() if issubclass(k, base.FusionPattern) and k.needs]
)
def test_a_pattern_finds_nothing_without_what_it_needs(
    kind: type[base.FusionPattern], before_and_after: list[tuple[str, ModuleOp]]
) -> None:
    """The contract behind ``needs``, on every op of the inputs before and after fusion."""
    pattern = kind(base.FusionContext(get_target("cuda")))
    for name, module in before_and_after:
        if any(isinstance(op, kind.needs) for op in module.walk()):
            continue
        with tracking_block_order():
            for op in module.walk():
                if isinstance(op, kind.roots):
                    assert pattern.match(op) is None, (name, op.name)


def test_the_scan_and_count_list_the_dispatched_ops(
    before_and_after: list[tuple[str, ModuleOp]],
) -> None:
    """What the near-miss scan visits and the report counts: the block's ops where none
    holds a region, ``dispatched_ops`` where one does (regions kept by cuda, control flow)."""
    for name, module in before_and_after:
        want = list(dispatched_ops(module))
        assert list(base._dispatched(module)) == want, name
        assert base.count_ops(module) == len(want), name


@pytest.mark.parametrize("reverse", [False, True])
def test_survey_lists_root_ops_in_walk_order(reverse: bool) -> None:
    module = parse_module((FILECHECK / "control_flow.mlir").read_text().split("// -----")[0])
    everything = base.RootTable([_Nothing()])  # no roots: rooted at every op
    assert everything.survey(module, reverse) == list(module.walk(reverse=reverse))
    adds = base.RootTable([_Nothing(roots=(mir.AddOp,))])
    want = [op for op in module.walk(reverse=reverse) if isinstance(op, mir.AddOp)]
    assert adds.survey(module, reverse) == want
    assert any(isinstance(op.parent_op(), mir.IfOp) for op in want)  # in a branch too


class _Nothing(RewritePattern):
    def __init__(self, roots: tuple[type[Operation], ...] | None = None):
        if roots is not None:
            self.roots = roots

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        pass


def test_run_time_reads_are_what_an_unbounded_walk_finds(
    before_and_after: list[tuple[str, ModuleOp]],
) -> None:
    """``reads_run_time_data`` against its definition walked afresh for each op; one
    ``known`` is shared by the queries of a module, as a fusion context shares it."""

    def reads(op: Operation) -> bool:
        if isinstance(op, mir.InputOp) or op.regions:
            return True
        return any(
            not isinstance(x, OpResult) or reads(x.op)
            for x in op.operands
            if not isinstance(getattr(x, "op", None), mir.ParamOp | mir.ConstantOp)
        )

    checked = 0
    for name, module in before_and_after:
        known: dict[int, tuple[Operation, bool]] = {}
        for graph in module.walk():
            if not isinstance(graph, func.FuncOp):
                continue
            for op in graph.body.block.ops:
                if isinstance(op, mir.ParamOp | mir.ConstantOp | func.ReturnOp):
                    continue
                assert base.reads_run_time_data(op, known) == reads(op), (name, op.name)
                assert base.is_static(op.results[0], budget=10**9) == (not reads(op)), name
                checked += 1
    assert checked > 1000
