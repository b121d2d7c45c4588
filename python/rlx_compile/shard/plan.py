"""Module-level planning: one shard decision per cuttable op, in one C++ search.

Rates here are in multiply-adds per second (worker and local alike); each op's output
elements cost ``flops_per_output_elem(op)`` of them, so one worker speed prices a matmul
with K = 4096 and an add alike. ``annotate`` writes each decision on its op as the
discardable attribute ``rlx.shard`` (``"rows axis 0 [0:4, 4:8] workers [0, 1]"`` or
``"none"``), which the printer shows in the op's attribute dictionary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation

from rlx_compile.ir import graph_block, module_graphs
from rlx_compile.shard.cost import (
    Decision,
    LinkCost,
    Residency,
    ShardChoice,
    WorkerConfig,
    WorkerCost,
    decide_many,
)
from rlx_compile.shard.options import ShardError, ShardOption, flops_per_output_elem, shardings
from rlx_compile.shard.report import ShardReport

SHARD_ATTR = "rlx.shard"


@dataclass(frozen=True)
class OpPlan:
    op: Operation = field(compare=False)
    options: tuple[ShardOption, ...]
    decision: Decision

    @property
    def label(self) -> str:
        return self.options[0].label


@dataclass(frozen=True)
class ShardPlan:
    ops: tuple[OpPlan, ...]

    @property
    def choices(self) -> list[ShardChoice]:
        """The splits, in graph order (what ``run_on_dask`` takes for a module)."""
        return [p.decision.choice for p in self.ops if p.decision.choice is not None]

    def report(self) -> ShardReport:
        return ShardReport.from_decisions([(p.label, p.decision) for p in self.ops])


def plan_module(
    module: ModuleOp,
    workers: Sequence[WorkerCost],
    link: LinkCost,
    residency: Residency | None = None,
    local_rate: float = 1.0e10,
    *,
    pieces: int | None = None,
) -> ShardPlan:
    """Decide every cuttable op of every graph in ``module`` (rates in multiply-adds per
    second); ``pieces`` defaults to the number of workers."""
    n = len(workers) if pieces is None else pieces
    if n < 2 and pieces is not None:
        raise ShardError(f"pieces must be at least 2, got {pieces}")
    found: list[tuple[Operation, list[ShardOption], int]] = []
    for graph in module_graphs(module):
        for op in graph_block(graph).ops:
            cost = flops_per_output_elem(op)
            options = shardings(module, op, n) if cost else []
            if options and cost:
                found.append((op, options, cost))
    config = WorkerConfig(tuple(workers), link, residency or Residency(), local_rate)
    decisions = decide_many([o for _, o, _ in found], [config], [c for _, _, c in found])
    return ShardPlan(
        tuple(
            OpPlan(op, tuple(options), d[0])
            for (op, options, _), d in zip(found, decisions, strict=True)
        )
    )


def describe_decision(decision: Decision) -> str:
    """The ``rlx.shard`` annotation of one decision."""
    c = decision.choice
    if c is None:
        return "none"
    return f"{c.option.describe()} workers [{', '.join(str(w) for w in c.assignment)}]"


def annotate(plan: ShardPlan) -> None:
    """Write every decision on its op as ``rlx.shard``."""
    for p in plan.ops:
        p.op.attributes[SHARD_ATTR] = StringAttr(describe_decision(p.decision))
