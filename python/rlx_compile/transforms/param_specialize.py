"""``param-specialize{bindings="FILE.npz"}``: bake fixed params into constants.

Each ``mir.param`` named in the ``.npz`` file becomes a ``mir.constant`` holding that
array (same type, name and location), so that sccp, cse, dce and constant-fold can fold
what depends on it; RLX runs it first in its cleanup sequence. Arrays must match the
param's type exactly, as ``interpreter.run`` requires of fed params (a bf16 or f8 array
stored by ``np.savez`` comes back as raw bytes and is read as the param's type). A name
the graph does not declare, a shape or dtype mismatch, and a param with symbolic dims
are errors. ``CompilePipeline(param_bindings={name: array})`` writes the arrays to such a
file and runs this pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import TensorType
from rlx_compile.folding import materialize
from rlx_compile.ir import func_graphs
from rlx_compile.params import load_bindings, param_array


def specialize_params(module: ModuleOp, arrays: Mapping[str, np.ndarray]) -> int:
    """Replace the bound params of every graph by constants; returns how many."""
    declared: set[str] = set()
    replaced = 0
    for graph in func_graphs(module):
        for op in list(graph.body.walk()):
            if not isinstance(op, mir.ParamOp):
                continue
            name = op.tensor_name
            assert isinstance(name, StringAttr)
            declared.add(name.data)
            if name.data not in arrays:
                continue
            assert isinstance(op.result.type, TensorType)
            const = materialize(
                param_array(name.data, op.result.type, arrays[name.data]), op.result
            )
            op.result.replace_all_uses_with(const.result)
            parent = op.parent_block()
            assert parent is not None
            parent.insert_op_before(const, op)
            parent.erase_op(op)
            replaced += 1
    unknown = sorted(set(arrays) - declared)
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        raise ValueError(f"no param named {', '.join(repr(n) for n in unknown)} (params: {known})")
    return replaced


@dataclass(frozen=True)
class ParamSpecializePass(ModulePass):
    """Replace params bound in an .npz file by constants."""

    name = "param-specialize"

    bindings: str = ""
    """An .npz file of arrays by param name (``np.savez``); empty binds nothing."""

    def __post_init__(self) -> None:
        if self.bindings and not Path(self.bindings).is_file():
            raise ValueError(f"bindings file '{self.bindings}' does not exist")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.bindings:
            return
        try:
            specialize_params(op, load_bindings(self.bindings))
        except ValueError as err:
            raise PassFailedException(str(err)) from None
