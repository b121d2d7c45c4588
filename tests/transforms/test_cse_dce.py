"""cse and dce on every kind of mir op: a duplicate of any op merges back into it, a dead
copy of any op goes, and nothing else changes."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.traits import Pure

from examples.build_examples import decoder_block, small_cnn
from rlx_compile.dialects import mir
from rlx_compile.ir import main_graph, print_module
from rlx_compile.testing.random_graphs import random_mir_graph
from tests.transforms.cleanup_testlib import apply


def test_every_mir_op_but_input_is_pure() -> None:
    # Purity is what lets cse merge an op and dce remove it; an input has an effect (it is
    # the graph's signature) and must stay.
    impure = [op.name for op in mir.MIR_OPS if not op.has_trait(Pure)]
    assert impure == ["mir.input"]


def modules() -> list[tuple[str, ModuleOp]]:
    out = [(f"random{seed}", random_mir_graph(seed, 40, cleanup=True).module) for seed in range(6)]
    for policy in ("direct", "fusable"):
        for name, build in (("decoder", decoder_block), ("cnn", small_cnn)):
            out.append((f"{name}-{policy}", apply(f"lower-hir-to-mir{{policy={policy}}}", build())))
    return out


MODULES = modules()


def _non_leaf_ops(module: ModuleOp) -> list:  # type: ignore[type-arg]
    block = main_graph(module).regions[0].block
    return [op for op in block.ops if op is not block.last_op and not isinstance(op, mir.InputOp)]


@pytest.mark.parametrize(("name", "module"), MODULES, ids=[n for n, _ in MODULES])
def test_cse_merges_a_duplicate_of_every_op(name: str, module: ModuleOp) -> None:
    clean = apply("cse", module.clone())
    work = clean.clone()
    kinds = set()
    for op in _non_leaf_ops(work):
        copy = op.clone()
        op.parent_block().insert_op_after(copy, op)  # type: ignore[union-attr]
        # Half of the users read the copy, so both must merge back.
        for old, new in zip(op.results, copy.results, strict=True):
            uses = list(old.uses)
            for use in uses[len(uses) // 2 :]:
                use.operation.operands = [
                    new if i == use.index else v for i, v in enumerate(use.operation.operands)
                ]
        kinds.add(op.name)
    assert print_module(apply("cse", work)) == print_module(clean)
    assert len(kinds) >= 4


@pytest.mark.parametrize(("name", "module"), MODULES, ids=[n for n, _ in MODULES])
def test_dce_removes_a_dead_copy_of_every_op(name: str, module: ModuleOp) -> None:
    clean = apply("dce", module.clone())
    work = clean.clone()
    for op in _non_leaf_ops(work):
        op.parent_block().insert_op_after(op.clone(), op)  # type: ignore[union-attr]
    assert print_module(apply("dce", work)) == print_module(clean)
