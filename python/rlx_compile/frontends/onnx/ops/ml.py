"""The numeric ops of the ai.onnx.ml domain that are tensor arithmetic: Binarizer and
ArrayFeatureExtractor. (The string, map and tree-ensemble ops are not claimed.)"""

from __future__ import annotations

from rlx_compile.builder import type_of
from rlx_compile.dialects.types import DType
from rlx_compile.frontends.onnx.context import ConverterResult, NodeContext, converter, numel

ML = "ai.onnx.ml"


@converter("Binarizer", domain=ML)
def binarizer(ctx: NodeContext) -> ConverterResult:
    """1 where x > threshold, else 0, in x's type."""
    x = ctx.x(0)
    above = ctx.b.compare("gt", x, float(ctx.attr("threshold", 0.0)))
    return ctx.b.cast(above, type_of(x).dtype)


@converter("ArrayFeatureExtractor", domain=ML)
def array_feature_extractor(ctx: NodeContext) -> ConverterResult:
    """The elements of the last axis that the (flattened) indices name; a vector input
    gives a [1, n] result, as the reference and onnxruntime do."""
    x, indices = ctx.x(0), ctx.x(1)
    if type_of(indices).dtype is not DType.I64:
        indices = ctx.b.cast(indices, DType.I64)
    count = numel(ctx.static_shape(1))
    picked = ctx.b.gather(x, ctx.b.reshape(indices, [count]), type_of(x).rank - 1)
    return ctx.b.reshape(picked, [1, count]) if type_of(x).rank == 1 else picked
