"""Emitting quantize/dequantize pairs into a graph (shared by the insertion passes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import Block, Operation, OpResult, SSAValue

from rlx_compile.builder import GraphBuilder, named, type_of
from rlx_compile.dialects.types import DType
from rlx_compile.quant.params import QParams


def insert_after_producer(value: SSAValue, build: Callable[[GraphBuilder], SSAValue]) -> SSAValue:
    """Run ``build`` with a builder whose ops land right after ``value``'s producer (so
    every later user of the value can use the result) and return what it built."""
    ops: list[Operation] = []
    producer = value.op if isinstance(value, OpResult) else None
    result = build(GraphBuilder(ops.append, location=producer.location if producer else None))
    if producer is not None:
        block = producer.parent_block()
        assert block is not None
        block.insert_ops_after(ops, producer)
    else:
        owner = value.owner  # a block argument's block
        assert isinstance(owner, Block)
        first = owner.first_op
        if first is None:
            owner.add_ops(ops)
        else:
            owner.insert_ops_before(ops, first)
    return result


def qparam_constants(
    b: GraphBuilder, qp: QParams, scale_dtype: DType, q_dtype: DType
) -> tuple[SSAValue, SSAValue | None]:
    shape: Sequence[int] = () if qp.axis is None else (int(qp.scale.size),)
    scale = b.constant(np.asarray(qp.scale).reshape(shape), scale_dtype, shape)
    zp = None
    if qp.zero_point is not None and np.any(qp.zero_point):
        zp = b.constant(np.asarray(qp.zero_point).reshape(shape), q_dtype, shape)
    return scale, zp


def emit_qdq(value: SSAValue, qp: QParams, q_dtype: DType) -> SSAValue:
    """``dequantize(quantize(value))`` with constant parameters, right after ``value``."""
    t = type_of(value)
    hint = value.name_hint or "v"

    def build(b: GraphBuilder) -> SSAValue:
        scale, zp = qparam_constants(b, qp, t.dtype, q_dtype)
        named(scale, f"{hint}_scale")
        if zp is not None:
            named(zp, f"{hint}_zero_point")
        q = named(b.quantize(value, scale, zp, dtype=q_dtype, axis=qp.axis), f"{hint}_q")
        return named(b.dequantize(q, scale, zp, axis=qp.axis), f"{hint}_dq")

    return insert_after_producer(value, build)


def set_operand(op: Operation, index: int, value: SSAValue) -> None:
    operands = list(op.operands)
    operands[index] = value
    op.operands = operands
