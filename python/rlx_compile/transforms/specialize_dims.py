"""``specialize-dims{bindings="seq=8,batch=1"}``: bind symbolic dims to sizes in every
tensor type of the module; symbols not named stay symbolic. Dims held as properties are
bound too: a narrow's symbolic start, and ``mir.dims`` (sizes used as data), which folds
to a ``mir.constant`` once every value is static. Every op whose types were bound is
verified again here: dims that verify symbolically because they may agree (a concat of
``2 * ((h + 1) floordiv 2)`` and ``h``, a reshape's element counts) fail at a binding
where they do not, naming the op and the sizes, before memory is planned for them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from rlx_compile.diagnostics import OpPassFailure
from rlx_compile.dialects import mir
from rlx_compile.dialects.dim_expr import substitute, symbols_of
from rlx_compile.dialects.types import TensorType
from rlx_compile.ir import func_graphs, sync_function_type


def parse_bindings(text: str) -> dict[str, int]:
    """``"seq=8,batch=1"`` -> ``{"seq": 8, "batch": 1}``."""
    out: dict[str, int] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip().isdigit():
            raise ValueError(f"bad binding '{item}': expected name=size")
        out[name.strip()] = int(value)
    return out


def parse_size(text: str) -> int | tuple[int, int]:
    """``"8"`` -> 8; ``"1..512"`` -> ``(1, 512)`` (a range, both ends included)."""
    lo, dots, hi = text.strip().partition("..")
    if not lo.isdigit() or (dots and not hi.isdigit()):
        raise ValueError(f"bad size '{text}': expected N or LO..HI")
    if not dots:
        return int(lo)
    if not 1 <= int(lo) <= int(hi):
        raise ValueError(f"bad range '{text}': expected 1 <= LO <= HI")
    return (int(lo), int(hi))


def parse_ranges(text: str) -> dict[str, tuple[int, int]]:
    """``"seq=1..512,batch=1..8"`` -> ``{"seq": (1, 512), "batch": (1, 8)}``."""
    out: dict[str, tuple[int, int]] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = item.partition("=")
        size = parse_size(value) if sep else None
        if not isinstance(size, tuple) or not name.strip().isidentifier():
            raise ValueError(f"bad range '{item}': expected name=LO..HI")
        out[name.strip()] = size
    return out


def format_ranges(ranges: Mapping[str, tuple[int, int]]) -> str:
    return ",".join(f"{k}={lo}..{hi}" for k, (lo, hi) in sorted(ranges.items()))


def _bind_value_types(module: ModuleOp, bindings: dict[str, int]) -> list[Operation]:
    """Bind the symbols of every op result and block argument type. (No op holds a
    tensor type in a property; function types follow with ``sync_function_type``.) A
    direct walk: xDSL's recursive ``TypeConversionPattern`` takes ~10 ms per op here,
    which a plan per shape signature cannot afford. Returns the ops that define or use
    a value whose type changed."""
    bound: dict[TensorType, TensorType] = {}
    touched: dict[Operation, None] = {}

    def bind(value: SSAValue) -> None:
        t = value.type
        if not isinstance(t, TensorType) or t.is_static:
            return
        new = bound.get(t)
        if new is None:
            new = bound[t] = t.bind(bindings) if set(t.symbols()) & bindings.keys() else t
        if new is not t:
            new_value = Rewriter.replace_value_with_new_type(value, new)
            if isinstance(new_value.owner, Operation):
                touched[new_value.owner] = None
            touched.update((use.operation, None) for use in new_value.uses)

    for op in module.walk():
        for result in list(op.results):
            bind(result)
        for region in op.regions:
            for block in region.blocks:
                for arg in list(block.args):
                    bind(arg)
    return list(touched)


def _verify_bound(ops: list[Operation], bindings: Mapping[str, int]) -> None:
    """Each op's own verifier (not its regions': their ops are in ``ops`` as well)."""
    for op in ops:
        if op.parent is None:  # replaced by a rewrite since
            continue
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as err:
            sizes = ", ".join(f"{k}={v}" for k, v in sorted(bindings.items()))
            raise OpPassFailure(f"{op.name} does not hold at {sizes}: {err}", op) from None


@dataclass
class _BindNarrowStart(RewritePattern):
    bindings: dict[str, int]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.NarrowOp, rewriter: PatternRewriter) -> None:
        start = op.start_dim
        if isinstance(start, int) or not symbols_of(start) & self.bindings.keys():
            return
        op.properties["start"] = mir.dim_prop(substitute(start, self.bindings))
        rewriter.handle_operation_modification(op)


@dataclass
class _BindSizesAsData(RewritePattern):
    bindings: dict[str, int]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.DimsOp, rewriter: PatternRewriter) -> None:
        if not any(symbols_of(d) & self.bindings.keys() for d in op.dims):
            return
        dims = [substitute(d, self.bindings) for d in op.dims]
        if all(isinstance(d, int) for d in dims):
            const = mir.ConstantOp(np.asarray(dims, np.int64))
            rewriter.replace(op, const)
            const.result.name_hint = op.result.name_hint
        else:
            op.properties["values"] = mir.dims_attr(dims)
            rewriter.handle_operation_modification(op)


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
        touched = _bind_value_types(op, bindings)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([_BindNarrowStart(bindings), _BindSizesAsData(bindings)]),
            apply_recursively=False,
        ).rewrite_module(op)
        for graph in func_graphs(op):
            sync_function_type(graph)
        _verify_bound(touched, bindings)
