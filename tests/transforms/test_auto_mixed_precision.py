"""auto-mixed-precision: categories cover every MIR op, outputs stay within a stated
tolerance of f32 on the examples and on random graphs, and casts go where the policy
says (the FileCheck test shows the exact placement)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from examples.build_examples import decoder_block, small_cnn
from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import Precision, PrecisionClass, precision_class
from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_block, main_graph, print_module
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.testing.random_graphs import random_mir_graph
from rlx_compile.transforms.auto_mixed_precision import POLICIES
from tests.transforms.test_lowering_numeric import random_feeds

# Tolerance, relative to max(|f32 output|, 1): 8 units of the low type's epsilon
# (f16: 7.8e-3, bf16: 6.3e-2). Measured on the examples: f16 <= 7e-4, bf16 <= 5e-3.
TOLERANCE = {"f16": 8 * 2.0**-10, "bf16": 8 * 2.0**-7}


def lower(module: ModuleOp, pipeline: str = "lower-hir-to-mir,canonicalize,cse,dce") -> ModuleOp:
    out = module.clone()
    PassManager(parse_pipeline(pipeline)).run(out)
    return out


def amp(module: ModuleOp, dtype: str = "f16", policy: str = "compute") -> ModuleOp:
    return lower(module, f"auto-mixed-precision{{dtype={dtype} policy={policy}}}")


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64)).max()
    return float(diff / max(float(np.abs(want).max()), 1.0))


def test_every_mir_op_has_one_category() -> None:
    # An elementwise region (and its terminator) is a kernel whose types are its body's:
    # it has no category and keeps its operand types, like ops of other dialects; a
    # control-flow op keeps its types too, its regions' ops having their own categories.
    for op_type in mir.MIR_OPS:
        if op_type in (mir.ElementwiseRegionOp, mir.YieldOp, *mir.CONTROL_FLOW_OPS):
            assert not op_type.get_traits_of_type(Precision), op_type.name
            continue
        cats = op_type.get_traits_of_type(Precision)
        assert len(cats) == 1, f"{op_type.name}: {cats}"


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("policy", ["direct", "fusable"])
@pytest.mark.parametrize("build", [decoder_block, small_cnn], ids=["decoder_block", "small_cnn"])
def test_examples_within_tolerance(build, policy: str, dtype: str) -> None:  # type: ignore[no-untyped-def]
    module = lower(build(policy=policy))
    inputs, params = random_feeds(module, seed=1)
    want = run(module, inputs, params)
    low = amp(module, dtype)
    got = run(low, inputs, params)
    for name, w in want.items():
        assert got[name].dtype == w.dtype
        assert relative_error(got[name], w) <= TOLERANCE[dtype]
    # The compute-heavy ops really run in the low type; norms and reductions do not.
    for op in graph_block(main_graph(low)).ops:
        t = op.results[0].type if op.results else None
        if not isinstance(t, TensorType):
            continue
        if precision_class(op) is PrecisionClass.COMPUTE:
            assert t.dtype.value == dtype, op.name
        if precision_class(op) is PrecisionClass.REDUCTION:
            assert t.dtype.value == "f32", op.name


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_random_graphs(policy: str, dtype: str) -> None:
    for seed in range(12):
        g = random_mir_graph(seed, 30)
        want = run(g.module, g.inputs, g.params)
        got = run(amp(g.module, dtype, policy), g.inputs, g.params)
        for name, w in want.items():
            assert got[name].dtype == w.dtype
            assert relative_error(got[name], w) <= TOLERANCE[dtype], (seed, name)


def test_f32_policy_changes_nothing() -> None:
    module = lower(decoder_block(policy="fusable"))
    assert print_module(amp(module, policy="f32")) == print_module(module)


def test_metal_policy_h2() -> None:
    """Spec 9.8 H2: under RLX 0.2.18 AutoMixed, x·w stays f32, the relu runs f16 behind a
    cast, a final cast to f32 is the output; a u8 param keeps its type."""
    with ModuleBuilder("h2") as m:
        x = m.input("x", (4, 8))
        w = m.param("w", (8, 8))
        u = m.param("u", (4, 8), "u8")
        y = m.relu(m.matmul(x, w))
        m.output(y, m.add(y, m.cast(u, "f32")), names=["y", "z"])
    low = amp(m.module, "f16", "metal")
    ops = [op for op in graph_block(main_graph(low)).ops]
    assert len(ops) >= 6
    names = [op.name for op in ops]
    matmul = next(op for op in ops if isinstance(op, mir.MatmulOp))
    relu = next(op for op in ops if isinstance(op, mir.ReluOp))
    assert matmul.result.type.dtype.value == "f32"
    assert relu.result.type.dtype.value == "f16"
    assert isinstance(relu.input.owner, mir.CastOp)
    u_leaf = next(op for op in ops if isinstance(op, mir.ParamOp) and op.result.name_hint == "u")
    assert u_leaf.result.type.dtype.value == "u8"
    assert [use.operation.name for use in u_leaf.result.uses] == ["mir.cast"]  # the user's
    returned = ops[-1].operands
    assert all(isinstance(v.owner, mir.CastOp) for v in returned)
    assert "mir.cast" in names
    inputs, params = random_feeds(m.module, 0)
    params["u"] = np.arange(32, dtype=np.uint8).reshape(4, 8)
    want, got = run(m.module, inputs, params), run(low, inputs, params)
    for k in want:
        assert relative_error(got[k], want[k]) <= TOLERANCE["f16"]


def test_idempotent() -> None:
    once = amp(lower(small_cnn(policy="fusable")))
    assert print_module(amp(once)) == print_module(once)
