"""ONNX op converters, one module per family; importing this package registers them."""

from rlx_compile.frontends.onnx.ops import (
    attention,
    elementwise,
    legacy,
    loss,
    misc,
    ml,
    nn,
    quant,
    reduce,
    resize,
    rnn,
    sequence,
    shape,
    signal,
    training,
    trees,
)

__all__ = [
    "attention",
    "elementwise",
    "legacy",
    "loss",
    "misc",
    "ml",
    "nn",
    "quant",
    "reduce",
    "resize",
    "rnn",
    "sequence",
    "shape",
    "signal",
    "training",
    "trees",
]
