"""``fuse-dynamic-quantize-matmul``: onnxruntime's dynamically quantised matmul as one
``mir.dynamic_quantize_matmul`` (its DynamicQuantizeMatMul fusion).

``quantize_dynamic`` writes every quantised MatMul as

    q, s, z = dynamic_quantize_linear(x)
    y = cast(matmul_integer(q, w, z, w_zero_point), f32) · (s · w_scale)  [+ bias]

with ``w_scale`` (and ``w_zero_point``) one element or one per column and the bias a
vector over the columns; both products and the sum may take their operands in either
order (IEEE products and sums commute: the fused op rounds as the chain does, bit for
bit). Rooted at the rescaling product; the bias add folds in when it alone reads the
product.

A quantised input read by several matmuls (one quantisation for a layer's Q, K and V,
say: onnxruntime's MatMulIntegerToFloat) fuses into each of them: every fused op
quantises the input again (O(rows · K) against the matmul's O(rows · K · N)), the same
values, and the quantisation goes once the last of its readers has fused.

Near misses: the quantised input (or its zero point) also read by something other than a
matmul_integer, the product cast to another type than f32, the rescale not the product
of the input's scale and a weight scale (the two scales applied one after the other
round differently), a weight zero point of another shape than the weight scale,
intermediates read elsewhere, the op unclaimed. An add that is not a bias over the
columns stays an op after the fused one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, fmt_shape
from rlx_compile.fusion.base import (
    FusionPattern,
    Match,
    Miss,
    chain_miss,
    is_output,
    other_operand,
    producer,
    sole_user,
    users,
)
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.DynamicQuantizeMatmulOp.name
HINT = "onnxruntime's DynamicQuantizeMatMul chain, each intermediate read by the chain alone"


@dataclass
class DynamicQuantizeMatmul(Match):
    x: SSAValue
    weight: SSAValue
    weight_scale: SSAValue
    weight_zero_point: SSAValue | None
    bias: SSAValue | None


def _over_columns(op: Operation | None, v: SSAValue, columns: object) -> SSAValue | None:
    """The other operand of ``op`` (a product or sum reading ``v``) when it is an f32
    vector over the columns: one element or one per column."""
    if op is None or not any(o is v for o in op.operands):
        return None
    w = other_operand(op, v)
    t = type_of(w)
    if t.dtype is not DType.F32 or t.rank > 1 or (t.rank == 1 and t.shape[0] not in (1, columns)):
        return None
    return w


def _made_by(v: SSAValue, ops: list[Operation]) -> bool:
    return isinstance(v, OpResult) and any(v.op is o for o in ops)


def _foreign_reader(dql: mir.DynamicQuantizeLinearOp) -> str | None:
    """What reads the quantised input or its zero point other than a matmul_integer
    taking them as its lhs and lhs zero point."""
    q, zp = dql.result, dql.zero_point
    for what, v in (("quantised input", q), ("input zero point", zp)):
        if is_output(v):
            return f"the {what} is also a graph output"
        for u in users(v):
            if not (isinstance(u, mir.MatmulIntegerOp) and u.lhs is q and u.lhs_zero_point is zp):
                return f"the {what} is also read by {u.name}"
    return None


class FuseDynamicQuantizeMatmul(FusionPattern):
    name = "dynamic_quantize_matmul"
    roots = (mir.MulOp,)
    needs = (mir.MatmulIntegerOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MulOp)
        cast = producer(op.lhs, mir.CastOp) or producer(op.rhs, mir.CastOp)
        mm = None if cast is None else producer(cast.input, mir.MatmulIntegerOp)
        if cast is None or mm is None:
            return None
        dql = producer(mm.lhs, mir.DynamicQuantizeLinearOp)
        if dql is None or mm.lhs_zero_point is not dql.zero_point:
            return None  # an input quantised otherwise: not onnxruntime's dynamic chain
        if type_of(cast.result).dtype is not DType.F32:
            return Miss(
                f"the integer product is cast to {type_of(cast.result).dtype.value}, not f32",
                HINT,
            )
        w_t = type_of(mm.rhs)
        if w_t.rank != 2:
            return Miss(f"the weight is {fmt_shape(w_t.shape)}, not a matrix [K, N]", HINT)
        columns = w_t.shape[1]
        scales = producer(other_operand(op, cast.result), mir.MulOp)
        w_scale = _over_columns(scales, dql.scale, columns)
        if scales is None or w_scale is None:
            second = any(o is dql.scale for o in op.operands)
            return Miss(
                "the product is rescaled by the input's scale and the weight scale one after "
                "the other"
                if second
                else "the product is not rescaled by the input's scale times a weight scale "
                "(one element or one per column)",
                HINT,
            )
        zp = mm.rhs_zero_point
        if zp is not None and type_of(zp).shape != type_of(w_scale).shape:
            return Miss(
                f"the weight zero point is {fmt_shape(type_of(zp).shape)}, the weight scale "
                f"{fmt_shape(type_of(w_scale).shape)}",
                "the fused op takes a zero point of the weight scale's shape",
            )
        if type_of(op.result) != type_of(cast.result):
            return None  # the scales broadcast the product: not a rescale
        if (reader := _foreign_reader(dql)) is not None:
            return Miss(reader, "the quantisation is kept for that reader; the chain stays as ops")
        links = [(mm.result, cast, "the integer product"), (cast.result, op, "the cast product")]
        if (miss := chain_miss(links, HINT)) is not None:
            return miss
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        absorbed: list[Operation] = [mm, cast, op]
        if sole_user(scales.result) is op:
            absorbed.insert(0, scales)
        # The quantisation goes with the last chain that reads it.
        if all(any(u is a for a in absorbed) for v in dql.results for u in users(v)):
            absorbed.insert(0, dql)
        add = sole_user(op.result)
        same = isinstance(add, mir.AddOp) and type_of(add.result) == type_of(op.result)
        bias = _over_columns(add, op.result, columns) if same else None
        if add is not None and bias is not None:
            absorbed.append(add)
        operands = (dql.input, mm.rhs, w_scale, zp, bias)
        if any(_made_by(v, absorbed) for v in operands if v is not None):
            return None  # the chain feeds itself (x · x, say): not a matmul with weights
        return DynamicQuantizeMatmul(absorbed[-1], absorbed, *operands)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, DynamicQuantizeMatmul)
        b, ops = self.builder(m.root)
        fused = mir.DynamicQuantizeMatmulOp(
            m.x, m.weight, m.weight_scale, m.weight_zero_point, m.bias
        )
        y = b.emit(fused).results[0]
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseDynamicQuantizeMatmulPass(FusionPass):
    """Fuse dynamic_quantize_linear -> matmul_integer -> cast -> rescale -> add(bias) into
    mir.dynamic_quantize_matmul."""

    name = "fuse-dynamic-quantize-matmul"
    PATTERNS = (FuseDynamicQuantizeMatmul,)
