"""Every fused op means its decomposition: the reference executor's kernel for it gives,
bit for bit, what the chain its ``decompose`` emits gives, on every instance of every
fused op in the repository's IR files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region
from xdsl.utils.exceptions import ParseError, VerifyException

from rlx_compile.builder import GraphBuilder
from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import decompose, is_fused
from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter import run
from rlx_compile.ir import parse_module, set_output_names, sync_function_type

REPO = Path(__file__).resolve().parents[2]
FUSED_OPS = [op for op in mir.MIR_OPS if is_fused(op)]


def _chunks() -> Iterator[tuple[str, str]]:
    for pattern in ("dialects/**/*.mlir", "examples/**/*.mlir", "tests/filecheck/**/*.mlir"):
        for path in sorted(REPO.glob(pattern)):
            for i, chunk in enumerate(path.read_text().split("// -----")):
                yield f"{path.relative_to(REPO)}#{i}", chunk


def _instances() -> dict[str, list[tuple[str, Operation]]]:
    """The fused ops of every IR file that parses and verifies, by op name; only ops
    with static operand and result types (the test feeds random arrays)."""
    found: dict[str, list[tuple[str, Operation]]] = {op.name: [] for op in FUSED_OPS}
    for where, text in _chunks():
        if not any(op.name in text for op in FUSED_OPS):
            continue
        try:
            module = parse_module(text, where)
            module.verify()
        except (ParseError, VerifyException):
            continue  # a negative test
        for op in module.walk():
            types = [v.type for v in (*op.operands, *op.results)]
            if is_fused(op) and all(isinstance(t, TensorType) and t.is_static for t in types):
                found[op.name].append((where, op))
    return found


INSTANCES = _instances()


def _alone(op: Operation, decomposed: bool) -> ModuleOp:
    """A graph whose inputs are ``op``'s operands and whose outputs are its results (or
    the values its decomposition gives)."""
    block = Block()
    b = GraphBuilder(block.add_op)
    inputs = [b.input(f"in{i}", v.type.shape, v.type.dtype) for i, v in enumerate(op.operands)]  # type: ignore[attr-defined]
    clone = op.clone()
    clone.operands = inputs
    if decomposed:
        outputs = decompose(clone, b)
        clone.erase()
    else:
        block.add_op(clone)
        outputs = list(clone.results)
    block.add_op(func.ReturnOp(*outputs))
    graph = func.FuncOp("g", ((), ()), Region(block))
    sync_function_type(graph)
    set_output_names(graph, [f"out{i}" for i in range(len(outputs))])
    return ModuleOp([graph])


def _feeds(op: Operation, rng: np.random.Generator) -> dict[str, np.ndarray]:
    feeds = {}
    for i, v in enumerate(op.operands):
        t = v.type
        assert isinstance(t, TensorType)
        if t.dtype.is_bool:
            feeds[f"in{i}"] = rng.random(t.shape) < 0.7
        else:
            feeds[f"in{i}"] = rng.standard_normal(t.shape).astype(t.dtype.numpy)
    return feeds


def test_every_fused_op_has_an_instance() -> None:
    """A new fused op comes with an example (``dialects/mir/fused_ops.mlir``)."""
    missing = [name for name, found in INSTANCES.items() if not found]
    assert not missing, missing


@pytest.mark.parametrize("op_type", FUSED_OPS, ids=lambda t: t.name)
def test_kernel_is_its_decomposition(op_type: type[Operation]) -> None:
    rng = np.random.default_rng(0)
    for where, op in INSTANCES[op_type.name]:
        feeds = _feeds(op, rng)
        fused = run(_alone(op, decomposed=False), feeds)
        chain = run(_alone(op, decomposed=True), feeds)
        assert fused.keys() == chain.keys()
        for name, got in fused.items():
            np.testing.assert_array_equal(got, chain[name], err_msg=f"{where}: {name}")
