"""The ONNX frontend: ``import_model(model) -> ModuleOp`` (MIR).

    from rlx_compile.frontends.onnx import import_model
    module = import_model("model.onnx")

See ``importer`` for the options and ``ops`` for the converters; ``SUPPORTED_OPS`` lists
the ONNX op types the importer converts (`domain.OpType` outside the default domain).
"""

from rlx_compile.frontends.onnx.context import CONVERTERS
from rlx_compile.frontends.onnx.importer import (
    MIN_OPSET,
    OnnxImportError,
    dim_spellings,
    import_model,
    initializer_arrays,
    load,
    max_opset,
    param_values,
)

SUPPORTED_OPS: tuple[str, ...] = tuple(sorted(CONVERTERS))

__all__ = [
    "MIN_OPSET",
    "SUPPORTED_OPS",
    "OnnxImportError",
    "dim_spellings",
    "import_model",
    "initializer_arrays",
    "load",
    "max_opset",
    "param_values",
]
