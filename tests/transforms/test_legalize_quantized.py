"""The integer kernels quant-to-integer makes (``mir.integer_matmul``,
``mir.integer_conv``, ``mir.quantized_add``) on a target that does not claim them:
``legalize`` lowers each to the ops its reference semantics names (an exact integer
product and the f32 epilogue; dequantize, add, quantize), which give the same bits as
the op itself. Every kernel test case of these ops, compiled for cuda, against the
reference executor on the op."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter import run
from rlx_compile.pipeline import CompilePipeline
from tests.native.kernel_cases import CASES

INTEGER_KERNELS = (mir.IntegerMatmulOp, mir.IntegerConvOp, mir.QuantizedAddOp)
NAMES = sorted(name for name, (op, _) in CASES.items() if op in INTEGER_KERNELS)


@pytest.mark.parametrize("name", NAMES)
def test_lowered_integer_kernel_gives_the_same_bits(name: str) -> None:
    op, make = CASES[name]
    checked = 0
    for dtype in DType:
        made = make(dtype, np.random.default_rng(1))
        if made is None:
            continue
        module, inputs = made
        want = run(module, inputs)
        result = CompilePipeline(target="cuda", fuse=False).compile(module)
        assert op.name not in Counter(o.name for o in result.module.walk())
        got = result.run(inputs)
        for key, value in want.items():
            np.testing.assert_array_equal(got[key], value, err_msg=f"{name} {key}")
        checked += 1
    assert checked == 1


def test_every_integer_kernel_has_a_case() -> None:
    assert {op for op, _ in CASES.values()} >= set(INTEGER_KERNELS)
