from __future__ import annotations

import re

import numpy as np
import pytest

from rlx_compile import ModuleBuilder
from rlx_compile.builder import is_hir, named
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, graph_params, main_graph, output_names, print_module


def test_issue_example_builds_a_verified_hir_module() -> None:
    with ModuleBuilder("layer") as m:
        x = m.input("x", (2, 128))
        w = m.param("w", (128, 128))
        y = m.linear(x, w, act="gelu")
        m.output(y)
    module = m.module
    module.verify()
    assert is_hir(module)
    graph = main_graph(module)
    assert [leaf.name for leaf in graph_inputs(graph)] == ["x"]
    assert [leaf.name for leaf in graph_params(graph)] == ["w"]
    assert output_names(graph) == ["output0"]
    assert "hir.linear %x, %w act gelu" in print_module(module)


def test_mir_builder_infers_types_and_handles_scalars() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (2, "seq", 8), "f16")
        y = m.mul(m.add(x, 1.0), 0.5)
        z = m.reshape(y, (2, "seq", 2, 4))
        r = m.sum(z, axes=-1, keepdims=True)
        m.output(r, names=["r"])
    text = print_module(m.module)
    assert "!rlx.tensor<[2, seq, 2, 1], f16>" in text
    assert not is_hir(m.module)
    consts = [op for op in m.module.walk() if isinstance(op, mir.ConstantOp)]
    assert [c.to_numpy().tolist() for c in consts] == [1.0, 0.5]
    assert all(c.tensor_type.dtype.value == "f16" for c in consts)


def test_reshape_infers_minus_one() -> None:
    with ModuleBuilder() as m:
        x = m.input("x", (4, 6))
        m.output(m.reshape(x, (-1, 3)))
    assert "-> !rlx.tensor<[8, 3], f32>" in print_module(m.module)


def test_invalid_builds_raise_clear_errors() -> None:
    with pytest.raises(Exception, match="contraction dims differ"), ModuleBuilder() as m:
        m.matmul(m.input("a", (2, 3)), m.input("b", (4, 5)))
    with pytest.raises(ValueError, match="has no outputs"), ModuleBuilder("empty") as m:
        m.input("a", (2,))


def test_constants_keep_their_bytes() -> None:
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
    with ModuleBuilder() as m:
        m.output(m.constant(data))
    (const,) = [op for op in m.module.walk() if isinstance(op, mir.ConstantOp)]
    np.testing.assert_array_equal(const.to_numpy(), data)
    from rlx_compile.ir import parse_module

    reparsed = parse_module(print_module(m.module))
    (again,) = [op for op in reparsed.walk() if isinstance(op, mir.ConstantOp)]
    np.testing.assert_array_equal(again.to_numpy(), data)


def test_region_escape_hatch() -> None:
    with ModuleBuilder() as m:
        x = m.input("x", (3,))
        (y,) = m.region([x], lambda b, args: [b.tanh(b.add(args[0], args[0]))])
        m.output(y)
    text = print_module(m.module)
    assert "hir.region" in text and "hir.yield" in text


@pytest.mark.parametrize("dtype", ["i64", "f32"])
def test_iota_as_a_constant_and_as_a_running_sum_agree(dtype: str) -> None:
    """A static iota is one constant (of at most ``max_constant`` elements), else an
    exclusive running sum of ones: the same values."""
    with ModuleBuilder("g") as m:
        m.output(m.iota(7, DType(dtype)), m.iota(7, DType(dtype), max_constant=6))
    ops = [type(op) for op in m.module.walk()]
    assert mir.CumsumOp in ops
    got = list(run(m.module, {}).values())
    np.testing.assert_array_equal(got[0], np.arange(7, dtype=DType(dtype).numpy))
    np.testing.assert_array_equal(got[1], got[0])
    assert got[1].dtype == got[0].dtype


NAMES = [
    "x", "onnx__Conv_123", "a_1_2", "a__12", "_12", "_", "", "12", "7_3", "abc123",
    "/model/conv1/Conv_output_0", "\u03b1_1", "x.y-z_0", "__", "a_", "name_00", "\u00e9",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_named_stores_what_the_name_hint_setter_stores(seed: int) -> None:
    """``named`` writes the stored name itself: the same as xDSL's ``name_hint`` setter
    given the same hint, on chosen and random tensor names."""
    rng = np.random.default_rng(seed)
    alphabet = [*"ab_09/.:-\u00e9", "_1", "_23"]
    names = NAMES + ["".join(rng.choice(alphabet, rng.integers(0, 8))) for _ in range(200)]
    v = mir.ConstantOp(np.zeros(2, np.float32)).result
    w = mir.ConstantOp(np.zeros(2, np.float32)).result
    for name in names:
        named(v, name)
        hint = re.sub(r"[^A-Za-z0-9_]", "_", name)
        w.name_hint = hint if hint and not hint[0].isdigit() else f"v_{hint}"
        assert v.name_hint == w.name_hint, name
