"""rlx-compile: an HIR -> MIR -> LIR ML graph compiler built on xDSL.

The Python API in one place: build graphs with ``ModuleBuilder``, compile them with
``CompilePipeline``, execute MIR/LIR with ``rlx_compile.interpreter.run``.
"""

from rlx_compile.builder import GraphBuilder, ModuleBuilder
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.ir import parse_module, print_module
from rlx_compile.pipeline import CompileOptions, CompilePipeline, CompileResult

__version__ = "0.1.0"

__all__ = [
    "CompileOptions",
    "CompilePipeline",
    "CompileResult",
    "DType",
    "GraphBuilder",
    "ModuleBuilder",
    "TensorType",
    "parse_module",
    "print_module",
]
