"""``specialize-dims{bindings="seq=8,batch=1"}``: bind symbolic dims to sizes in every
tensor type of the module; symbols not named stay symbolic. Verifiers re-check every op,
so a binding that breaks a shape rule (or a reshape's element count) fails clearly."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriteWalker,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
)

from rlx_compile.dialects.types import TensorType
from rlx_compile.ir import sync_function_type


def parse_bindings(text: str) -> dict[str, int]:
    """``"seq=8,batch=1"`` -> ``{"seq": 8, "batch": 1}``."""
    out: dict[str, int] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip().isdigit():
            raise ValueError(f"bad binding '{item}': expected name=size")
        out[name.strip()] = int(value)
    return out


class _BindDims(TypeConversionPattern):
    def __init__(self, bindings: dict[str, int]):
        super().__init__(recursive=True)
        self.bindings = bindings

    @attr_type_rewrite_pattern
    def convert_type(self, typ: TensorType) -> Attribute | None:
        if not any(d in self.bindings for d in typ.symbols()):
            return None
        return typ.bind(self.bindings)


@dataclass(frozen=True)
class SpecializeDimsPass(ModulePass):
    """Bind symbolic dims (``seq=8,batch=1``) in every tensor type."""

    name = "specialize-dims"

    bindings: str = ""

    def __post_init__(self) -> None:
        parse_bindings(self.bindings)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        bindings = parse_bindings(self.bindings)
        if not bindings:
            return
        PatternRewriteWalker(_BindDims(bindings)).rewrite_module(op)
        for graph in op.ops:
            if isinstance(graph, func.FuncOp) and graph.body.blocks:
                sync_function_type(graph)
