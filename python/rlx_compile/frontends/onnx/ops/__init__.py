"""ONNX op converters, one module per family; importing this package registers them."""

from rlx_compile.frontends.onnx.ops import elementwise, nn, reduce, shape

__all__ = ["elementwise", "nn", "reduce", "shape"]
