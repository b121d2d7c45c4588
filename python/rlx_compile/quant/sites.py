"""Where quantisation applies: the operands of compute-heavy ops, which of them are
weights, and stable keys naming values across a clone or a text round trip.

Shared by ``calibrate`` (what to observe) and the quantisation passes (what to rewrite),
so both agree on the set of tapped values and on each weight's output-channel axis.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

from xdsl.ir import Block, Operation, OpResult, SSAValue

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.fusion.base import sole_user
from rlx_compile.ir import graph_block, graph_name

QUANTIZABLE_FLOATS = (DType.F32, DType.F16, DType.BF16)
"""Element types a calibrated scale can quantise (f64 tensors are left alone)."""


@dataclass(frozen=True)
class Site:
    """One operand of a compute op that quantisation taps.

    ``channel_axis`` is the weight's output-channel axis for per-channel scales (None
    for activations and for weights without a channel dim)."""

    op: Operation
    operand: int
    value: SSAValue
    weight: bool
    channel_axis: int | None


def _rank(v: SSAValue) -> int:
    return cast(TensorType, v.type).rank


def _gemm_axis(v: SSAValue, lhs: bool) -> int | None:
    """Output channels of a matmul weight: rows of an lhs, columns of an rhs."""
    rank = _rank(v)
    if rank < 2:
        return None
    return rank - 2 if lhs else rank - 1


def is_weight(value: SSAValue, _memo: dict[SSAValue, bool] | None = None) -> bool:
    """Whether a value depends only on params and constants (a weight, possibly reshaped,
    transposed or concatenated): its value is known before any input arrives."""
    memo = {} if _memo is None else _memo
    stack = [value]
    while stack:
        v = stack[-1]
        if v in memo:
            stack.pop()
            continue
        if not isinstance(v, OpResult):
            memo[v] = False
            stack.pop()
            continue
        op = v.op
        if isinstance(op, mir.ParamOp | mir.ConstantOp):
            memo[v] = True
            stack.pop()
            continue
        if isinstance(op, mir.InputOp) or not op.operands or op.dialect_name() != "mir":
            memo[v] = False
            stack.pop()
            continue
        pending = [o for o in op.operands if o not in memo]
        if pending:
            stack.extend(pending)
            continue
        memo[v] = all(memo[o] for o in op.operands)
        stack.pop()
    return memo[value]


def _site_operands(op: Operation) -> Iterator[tuple[str, bool | None]]:
    """(operand name, True for a matmul lhs / False for an rhs / None for conv-like)."""
    if isinstance(op, mir.MatmulOp):
        yield "lhs", True
        yield "rhs", False
    elif isinstance(op, mir.FusedMatmulBiasActOp):
        yield "input", True
        yield "weight", False
    elif isinstance(op, mir.ConvOp | mir.FusedConvBiasActOp):
        yield "input", None
        yield "weight", None
    elif isinstance(op, mir.FusedAttentionBlockOp):
        yield "hidden", None
        yield "qkv_weight", False
        yield "out_weight", False


def read_as_weight(value: SSAValue) -> bool:
    """Whether every reader of ``value`` takes it as the weight of a matmul or conv (the
    second site operand of ``mir.matmul``, ``mir.conv`` and their fused forms), directly
    or through transposes: the weights an integer kernel reads as integers."""
    if value.first_use is None:
        return False
    for use in value.uses:
        op = use.operation
        if isinstance(op, mir.TransposeOp):
            if not read_as_weight(op.result):
                return False
            continue
        if not isinstance(op, _PRODUCTS) or use.index != 1:
            return False
    return True


def read_as_quantized_addend(value: SSAValue) -> bool:
    """Whether every reader of ``value`` is an add whose sum only a quantize reads
    (directly or through a relu): a quantized model's add, which an integer kernel
    computes on both operands' integers (``mir.quantized_add``; a bias, say)."""
    if value.first_use is None:
        return False
    for use in value.uses:
        add = use.operation
        if not isinstance(add, mir.AddOp):
            return False
        reader = sole_user(add.result)
        if isinstance(reader, mir.ReluOp):
            reader = sole_user(reader.result)
        if not isinstance(reader, mir.QuantizeOp):
            return False
    return True


_PRODUCTS = (mir.MatmulOp, mir.FusedMatmulBiasActOp, mir.ConvOp, mir.FusedConvBiasActOp)
"""The ops whose second operand is their weight (``_site_operands``)."""


def quant_sites(block: Block, *, gemm_only: bool = False) -> list[Site]:
    """The float operands of matmul, conv and their fused forms (and the projections of a
    fused attention block), in block order. ``gemm_only`` keeps matmuls whose rhs is a
    rank-2 matrix (the GEMMs a scaled fp8 kernel takes; batched rhs stay untouched)."""
    memo: dict[SSAValue, bool] = {}
    sites: list[Site] = []
    for op in block.ops:
        if gemm_only and not (
            isinstance(op, mir.MatmulOp | mir.FusedMatmulBiasActOp) and _rank(op.operands[1]) == 2
        ):
            continue
        for name, lhs in _site_operands(op):
            value = getattr(op, name)
            t = cast(TensorType, value.type)
            if t.dtype not in QUANTIZABLE_FLOATS:
                continue
            weight = is_weight(value, memo)
            axis: int | None = None
            if weight:
                axis = 0 if lhs is None else _gemm_axis(value, lhs)
                if name in ("qkv_weight", "out_weight"):
                    axis = 1
            # Site operands are required and precede any optional one, so the
            # definition order gives the index (x·x has the same value twice).
            index = [n for n, _ in type(op).get_irdl_definition().operands].index(name)
            sites.append(Site(op, index, value, weight, axis))
    return sites


# ---------------------------------------------------------------------------------
# Value keys
# ---------------------------------------------------------------------------------


def value_keys(graph: Operation) -> dict[SSAValue, str]:
    """``graph:op_index:result_index`` for every op result of a graph: the same on a clone
    and after a print/parse round trip, so calibration stats can name values."""
    name = graph_name(graph)
    keys: dict[SSAValue, str] = {}
    for i, op in enumerate(graph_block(graph).ops):
        for j, r in enumerate(op.results):
            keys[r] = f"{name}:{i}:{j}"
    return keys


def producer_name(value: SSAValue) -> str:
    """The name of the op defining a value (how stats check they describe it)."""
    owner = value.owner
    return owner.name if isinstance(owner, Operation) else "block-argument"
