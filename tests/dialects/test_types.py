from __future__ import annotations

import pytest
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects.dim_expr import dim_max, sym
from rlx_compile.dialects.types import (
    DType,
    TensorType,
    broadcast_shapes,
    may_reshape,
    normalize_axis,
)
from rlx_compile.ir import parse_module, print_module


def test_tensor_type_accessors() -> None:
    t = TensorType((2, "seq", 64), "bf16")
    assert t.shape == (2, "seq", 64)
    assert t.dtype is DType.BF16
    assert t.rank == 3
    assert not t.is_static
    assert t.symbols() == ("seq",)
    assert t.num_elements() is None
    bound = t.bind({"seq": 8})
    assert bound.is_static and bound.num_elements() == 2 * 8 * 64
    assert bound.nbytes() == 2 * 8 * 64 * 2
    assert str(t) == "!rlx.tensor<[2, seq, 64], bf16>"


@pytest.mark.parametrize("dtype", [d.value for d in DType])
def test_every_dtype_round_trips(dtype: str) -> None:
    line = f'  %x = mir.input "x" : !rlx.tensor<[3, n], {dtype}>'
    text = f"func.func @f() {{\n{line}\n  func.return\n}}\n"
    module = parse_module(text)
    assert print_module(parse_module(print_module(module))) == print_module(module)
    assert f"!rlx.tensor<[3, n], {dtype}>" in print_module(module)


def test_dtype_numpy_mapping() -> None:
    assert DType.F8E4M3.itemsize == 1
    assert DType.BF16.itemsize == 2
    assert DType.from_numpy(DType.BF16.numpy) is DType.BF16
    assert DType.I64.is_int and DType.I64.is_signed_int and not DType.U8.is_signed_int
    assert DType.F16.is_float and not DType.BOOL.is_float
    with pytest.raises(ValueError, match="unknown dtype 'f33'"):
        DType.parse("f33")


def test_invalid_types_rejected() -> None:
    with pytest.raises(VerifyException):
        TensorType((-1, 4), "f32")
    with pytest.raises(ValueError):
        TensorType((4,), "f31")


def test_broadcast_rules() -> None:
    assert broadcast_shapes((2, 1, 4), (3, 1)) == (2, 3, 4)
    assert broadcast_shapes(("seq", 4), (1, 4)) == ("seq", 4)
    assert broadcast_shapes(("seq", 4), ("seq", 1)) == ("seq", 4)
    assert broadcast_shapes((), (5,)) == (5,)
    # A symbol meeting another size must be 1 or that size at run time (the executor
    # checks): the result is the known size, or the max of two symbols.
    assert broadcast_shapes(("seq", 4), (8, 4)) == (8, 4)
    assert broadcast_shapes(("a", 4), ("b", 1)) == (dim_max(sym("a"), sym("b")), 4)
    with pytest.raises(VerifyException):
        broadcast_shapes((2, 4), (3,))


def test_axes_and_counts() -> None:
    assert normalize_axis(-1, 3) == 2
    assert normalize_axis(0, 0) == 0
    with pytest.raises(VerifyException):
        normalize_axis(3, 3)
    assert may_reshape(("b", 4, 2), (8, "b"))
    assert not may_reshape(("b", 4), ("c", 4))  # c cannot be sized from the input
    assert not may_reshape((2, 3), (5,))
    assert not may_reshape(("b", "s", 8), ("b", "s", 4))  # never equal
    h, w = sym("h"), sym("w")
    assert may_reshape(("b", (h // 16) * w), ("b", 1, w))  # where h // 16 == 1


def test_constant_values_in_exponent_form_round_trip() -> None:
    # NumPy spells 1e-40 without a dot, which the lexer would read as the integer 1.
    from rlx_compile.ir import parse_module, print_module

    text = (
        "func.func @g() -> !rlx.tensor<[3], f32> {\n"
        "  %c = mir.constant dense<[1.0e-40, 3.0e+38, 0.5]> : !rlx.tensor<[3], f32>\n"
        "  func.return %c : !rlx.tensor<[3], f32>\n}\n"
    )
    once = print_module(parse_module(text))
    assert "dense<[1.0e-40, 3.0e+38, 0.5]>" in once
    assert print_module(parse_module(once)) == once


NARROW_CONSTANTS = {
    "i4": ([-8, 7, 0], "int4"),
    "u2": ([0, 3, 1], "uint2"),
    "f4e2m1": ([0.5, -6, -0.0], "float4_e2m1fn"),
    "f8e8m0": ([2.0**-127, 1, float("nan")], "float8_e8m0fnu"),
    "f8e4m3fnuz": ([240, float("nan"), -0.1], "float8_e4m3fnuz"),
    "f8e5m2fnuz": ([57344, float("nan"), 2.0**-17], "float8_e5m2fnuz"),
}


@pytest.mark.parametrize("dtype", sorted(NARROW_CONSTANTS))
def test_narrow_constants_round_trip_bit_exactly(dtype: str) -> None:
    import ml_dtypes
    import numpy as np

    from rlx_compile import ModuleBuilder
    from rlx_compile.interpreter import run

    values, np_name = NARROW_CONSTANTS[dtype]
    arr = np.array(values, np.float64).astype(getattr(ml_dtypes, np_name))
    with ModuleBuilder("c") as m:
        m.output(m.constant(arr), names=["y"])
    text = print_module(m.module)
    assert f"!rlx.tensor<[3], {dtype}>" in text
    assert print_module(parse_module(text)) == text
    got = run(parse_module(text), {})["y"]
    assert got.dtype == arr.dtype and got.view(np.uint8).tolist() == arr.view(np.uint8).tolist()
