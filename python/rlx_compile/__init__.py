"""rlx-compile: an HIR -> MIR -> LIR ML graph compiler built on xDSL.

The Python API in one place: build graphs with ``ModuleBuilder``, compile them with
``CompilePipeline``, execute MIR/LIR with ``rlx_compile.interpreter.run``.

The names below load on first use (PEP 562), and so do the subpackages as attributes
(``rlx_compile.interpreter``): ``import rlx_compile.dialects.types`` does not pull in the
pipeline, the interpreter and the C++ core.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from rlx_compile._compiled import use_current_sources

if TYPE_CHECKING:
    from rlx_compile.builder import GraphBuilder, ModuleBuilder
    from rlx_compile.dialects.types import DType, TensorType
    from rlx_compile.ir import parse_module, print_module
    from rlx_compile.pipeline import CompileOptions, CompilePipeline, CompileResult

__version__ = "0.1.0"

# Before any submodule loads: a build's compiled modules, or their sources if one changed.
use_current_sources(os.path.dirname(__file__))

_EXPORTS = {  # public name -> the module that defines it (the same names as __all__)
    "CompileOptions": "rlx_compile.pipeline",
    "CompilePipeline": "rlx_compile.pipeline",
    "CompileResult": "rlx_compile.pipeline",
    "DType": "rlx_compile.dialects.types",
    "GraphBuilder": "rlx_compile.builder",
    "ModuleBuilder": "rlx_compile.builder",
    "TensorType": "rlx_compile.dialects.types",
    "parse_module": "rlx_compile.ir",
    "print_module": "rlx_compile.ir",
}

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


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    if not name.startswith("__"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
