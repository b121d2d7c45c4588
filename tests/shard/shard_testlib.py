"""Small graphs with one op to cut, and random operands for them."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from rlx_compile import ModuleBuilder
from rlx_compile.builder import GraphBuilder
from rlx_compile.dialects.types import TensorType


@dataclass
class OneOp:
    module: ModuleOp
    op: Operation
    args: list[np.ndarray]


def one_op(
    shapes: Sequence[Sequence[int]],
    body: Callable[[GraphBuilder, list[SSAValue]], SSAValue],
    *,
    seed: int = 0,
    dtype: str = "f32",
) -> OneOp:
    """A graph whose inputs ``a0, a1, ...`` feed one op built by ``body``; operands are
    drawn with unit-scale outputs in mind (N(0, 1) / sqrt of the operand's last dim)."""
    rng = np.random.default_rng(seed)
    with ModuleBuilder("one") as m:
        leaves = [m.input(f"a{i}", tuple(s), dtype) for i, s in enumerate(shapes)]
        y = body(m, leaves)
        m.output(y, names=["y"])
    op = y.owner
    assert isinstance(op, Operation)
    args = []
    for v in op.operands:
        t = v.type
        assert isinstance(t, TensorType)
        shape = [int(d) for d in t.shape]
        if t.dtype.is_bool:
            args.append(rng.standard_normal(shape) > 0)
            continue
        scale = 1 / math.sqrt(shape[-1]) if shape else 1.0
        args.append((rng.standard_normal(shape) * scale).astype(t.dtype.numpy))
    return OneOp(m.module, op, args)


def matmul_case(a: Sequence[int], b: Sequence[int], seed: int = 0) -> OneOp:
    return one_op([a, b], lambda m, v: m.matmul(v[0], v[1]), seed=seed)
