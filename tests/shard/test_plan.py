"""Module level: plan_module, the rlx.shard annotation, the shard pass and its report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlx_compile import ModuleBuilder
from rlx_compile.interpreter import evaluate_op, run
from rlx_compile.ir import parse_module, print_module
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.shard import (
    CostCalibration,
    Cut,
    LinkCost,
    Residency,
    WorkerCost,
    annotate,
    plan_module,
    run_option,
)
from rlx_compile.shard.plan import SHARD_ATTR, describe_decision
from rlx_compile.shard.report import ShardReport


def mlp():  # type: ignore[no-untyped-def]
    with ModuleBuilder("mlp") as m:
        x = m.input("x", (1024, 64))
        h = m.fused_matmul_bias_act(x, m.param("w1", (64, 128)), m.param("b1", (128,)), "relu")
        y = m.matmul(h, m.param("w2", (128, 32)))
        m.output(m.add(y, m.param("b2", (32,))), names=["y"])
    return m.module


TEAM = [WorkerCost(1e9, CostCalibration.MEASURED, f"w{i}") for i in range(4)]
LINK = LinkCost(1e10, 1e-4)


def test_plan_module_decides_every_cuttable_op() -> None:
    plan = plan_module(mlp(), TEAM, LINK, Residency(False), 1e9, pieces=2)
    assert [p.options[0].op for p in plan.ops] == [
        "mir.fused_matmul_bias_act", "mir.matmul", "mir.add",
    ]  # fmt: skip
    cuts = [None if p.decision.choice is None else p.decision.choice.option.cut for p in plan.ops]
    # The matmuls (64 and 128 multiply-adds per output) split by rows, which ships the
    # small weights twice rather than the big activations twice; the add stays whole.
    assert cuts == [Cut.ROWS, Cut.ROWS, None]
    assert [c.option.label for c in plan.choices] == ["mir.fused_matmul_bias_act#3", "mir.matmul#5"]
    assert all(len(c.assignment) == 2 for c in plan.choices)


def test_plan_prices_each_op_by_its_multiply_adds() -> None:
    plan = plan_module(mlp(), TEAM, LINK, Residency(False), 1e9, pieces=2)
    first = plan.ops[0].decision
    assert first.local_s == pytest.approx(1024 * 128 * 64 / 1e9)
    assert first.choice is not None
    assert first.choice.compute_s == pytest.approx(512 * 128 * 64 / 1e9)


def test_annotate_and_the_pass_agree() -> None:
    planned = mlp()
    plan = plan_module(planned, TEAM[:2], LinkCost(1e8, 1e-3), Residency(True), 1e10)
    annotate(plan)
    passed = mlp()
    pipeline = (
        "shard{workers=2 worker-rate=1e9 local-rate=1e10 bandwidth=1e8 latency=1e-3 "
        "resident=true calibration=measured}"
    )
    PassManager(parse_pipeline(pipeline)).run(passed)
    assert print_module(passed) == print_module(planned)
    notes = [op.attributes[SHARD_ATTR] for op in passed.walk() if SHARD_ATTR in op.attributes]
    assert [n.data for n in notes] == [describe_decision(p.decision) for p in plan.ops]
    # Annotated IR round-trips and still runs: the attribute carries no semantics.
    again = parse_module(print_module(passed))
    assert print_module(again) == print_module(passed)
    feeds = {"x": np.ones((1024, 64), np.float32)}
    params = {
        "w1": np.full((64, 128), 0.01, np.float32), "b1": np.zeros(128, np.float32),
        "w2": np.full((128, 32), 0.01, np.float32), "b2": np.zeros(32, np.float32),
    }  # fmt: skip
    np.testing.assert_array_equal(run(again, feeds, params)["y"], run(mlp(), feeds, params)["y"])


def test_the_pass_is_idempotent() -> None:
    module = mlp()
    pm = PassManager(
        parse_pipeline(
            "shard{workers=4 pieces=2 worker-rate=1e9 local-rate=1e9 bandwidth=1e10 latency=1e-4}"
        )
    )
    pm.run(module)
    once = print_module(module)
    pm.run(module)
    assert print_module(module) == once
    assert 'rlx.shard = "rows axis 0 [0:512, 512:1024] workers [0, 1]"' in once


def test_planned_choices_run_on_only_their_slices() -> None:
    module = mlp()
    plan = plan_module(module, TEAM, LINK, Residency(False), 1e9, pieces=2)
    rng = np.random.default_rng(0)
    for p in plan.ops:
        args = [rng.standard_normal(v.type.shape).astype(np.float32) / 16 for v in p.op.operands]
        for option in p.options:
            whole = evaluate_op(p.op, args)[0]
            got = run_option(p.op, option, args)
            assert np.abs(got - whole).max() <= 1e-6


def test_report_rows_add_up() -> None:
    plan = plan_module(mlp(), TEAM, LINK, Residency(False), 1e9, pieces=2)
    report = plan.report()
    assert isinstance(report, ShardReport)
    for choice in plan.choices:
        rows = [r for r in report.rows if r.op == choice.option.label]
        pieces, total = rows[:-1], rows[-1]
        assert total.cut == "total" and total.bytes_moved == choice.bytes_moved
        assert sum(r.bytes_moved for r in pieces) == choice.bytes_moved
        assert [r.range for r in pieces] == ["0:512", "512:1024"]
    text = report.render()
    assert text.splitlines()[0] == "# shard report: 3 op(s), 2 split, 1 whole"
    assert "mir.add#7\tnone\t-\tlocal\t0\t" in text


def test_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Op sharding") :]
    code = section[section.index("```python") + len("```python") : section.index("```\n\n")]
    exec(compile(code, "README.md", "exec"), {})
    # By hand: local 131072 outputs / 1e6 = 131 ms; rows: 32.8 ms of compute + (x 128 KiB
    # + y 512 KiB, w resident) / 1e8 + 1 ms = 40.3 ms.
    assert capsys.readouterr().out == "rows axis 0 [0:32, 32:64] 3.25x\n"
