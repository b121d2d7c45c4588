"""The integer kernels quant-to-integer makes (``mir.integer_matmul``,
``mir.integer_conv``, ``mir.quantized_add``, ``mir.quantized_avg_pool``,
``mir.quantized_softmax``) on a target that does not claim them: ``legalize`` (and,
before fusion, ``lower-integer``) lowers each to the ops its reference semantics names
(an exact integer product and the f32 epilogue; dequantize, add, quantize; the window
mean of x - x_zero_point, a product, a quantize; the table's exponentials, their exact
sum, a division, a quantize), which give the same bits as the op itself. Every kernel
test case of these ops, compiled for cuda, against the reference executor on the op."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pytest

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.interpreter import kernels as K
from rlx_compile.interpreter import run
from rlx_compile.pipeline import CompilePipeline
from tests.native.kernel_cases import CASES

INTEGER_KERNELS = (
    mir.IntegerMatmulOp,
    mir.IntegerConvOp,
    mir.QuantizedAddOp,
    mir.QuantizedAvgPoolOp,
    mir.QuantizedSoftmaxOp,
)
NAMES = sorted(name for name, (op, _) in CASES.items() if op in INTEGER_KERNELS)


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_lowered_integer_kernel_gives_the_same_bits(name: str, fuse: bool) -> None:
    """fuse=False: legalize lowers the op; fuse=True: lower-integer, and the lowered ops
    fuse."""
    op, make = CASES[name]
    checked = 0
    for dtype in DType:
        made = make(dtype, np.random.default_rng(1))
        if made is None:
            continue
        module, inputs = made
        want = run(module, inputs)
        result = CompilePipeline(target="cuda", fuse=fuse).compile(module)
        assert op.name not in Counter(o.name for o in result.module.walk())
        got = result.run(inputs)
        for key, value in want.items():
            np.testing.assert_array_equal(got[key], value, err_msg=f"{name} {key}")
        checked += 1
    assert checked == 1


def test_every_integer_kernel_has_a_case() -> None:
    assert {op for op, _ in CASES.values()} >= set(INTEGER_KERNELS)


def assert_within_a_step_of_the_chain(
    name: str, chain: Callable[[Any, np.ndarray], np.ndarray]
) -> None:
    """Case ``name``'s op against ``chain(op, x)``, the chain of ops it stands for, on
    random integers (u8 and i8 inputs): a step at most."""
    op_type, make = CASES[name]
    for dtype in (DType.U8, DType.I8):
        made = make(dtype, np.random.default_rng(2))
        if made is None:
            continue
        module, inputs = made
        (op,) = (o for o in module.walk() if isinstance(o, op_type))
        want = chain(op, inputs["x"])
        (got,) = run(module, inputs).values()
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
        assert diff.max() <= 1, (name, diff.max())


POOLS = sorted(name for name, (op, _) in CASES.items() if op is mir.QuantizedAvgPoolOp)


@pytest.mark.parametrize("name", POOLS)
def test_quantized_avg_pool_within_a_step_of_the_f32_chain(name: str) -> None:
    """The op (its exact window sum, its f32 epilogue) against the chain it stands for,
    dequantize, the f32 average pool, quantize."""

    def chain(op: mir.QuantizedAvgPoolOp, x: np.ndarray) -> np.ndarray:
        p = op.props()
        x_scale, y_scale = np.float32(p.float("x_scale")), np.float32(p.float("y_scale"))
        geometry = {k: p.ints(k) for k in ("kernel", "strides", "pads", "dilations")}
        dx = K.dequantize(x, x_scale, np.array(p.int("x_zero_point")), None)
        pooled = K.avg_pool(
            dx, **geometry, ceil_mode=p.flag("ceil_mode"),
            count_include_pad=p.flag("count_include_pad"),
        )  # fmt: skip
        return K.quantize(pooled, y_scale, np.array(p.int("y_zero_point")), None, x.dtype)

    assert_within_a_step_of_the_chain(name, chain)


SOFTMAXES = sorted(name for name, (op, _) in CASES.items() if op is mir.QuantizedSoftmaxOp)


@pytest.mark.parametrize("name", SOFTMAXES)
def test_quantized_softmax_within_a_step_of_the_f32_chain(name: str) -> None:
    """The op (the table's exponentials, their exact sum, one f32 division) against the
    chain it stands for, dequantize (any zero point: the softmax cancels it), the f32
    softmax, quantize."""

    def chain(op: mir.QuantizedSoftmaxOp, x: np.ndarray) -> np.ndarray:
        p = op.props()
        dx = K.dequantize(x, np.float32(p.float("x_scale")), np.array(0), None)
        out = cast(TensorType, op.result.type).dtype.numpy
        zero = np.array(p.int("y_zero_point"))
        softmax = K.softmax(dx, p.int("axis"))
        return K.quantize(softmax, np.float32(p.float("y_scale")), zero, None, out)

    assert_within_a_step_of_the_chain(name, chain)
