"""``promote-params``: move tensors between the three leaf kinds, by name or by size.

- ``inputs=a,b``: the named ``mir.input`` leaves become ``mir.param`` (fed once, like a
  weight, instead of per call);
- ``params=w``: the named ``mir.param`` leaves become ``mir.input`` (RLX's
  ``promote_params_to_inputs``: a weight fed per call, as LoRA or training need);
- ``min-elements=N export="FILE.npz"``: every ``mir.constant`` of at least N elements
  becomes a param named ``__rlx_const_<i>`` (in graph order), and the constants' values
  are written to FILE, so that they are bound at run time (or baked back by
  ``param-specialize{bindings="FILE.npz"}``).

The leaf keeps its type, SSA name and position; names that no graph declares are
ignored (RLX's rule), so one option string serves several models.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import TensorType
from rlx_compile.ir import func_graphs
from rlx_compile.params import save_bindings

CONST_PREFIX = "__rlx_const_"


def _leaf_name(op: Operation) -> str:
    name = op.properties["tensor_name"]
    assert isinstance(name, StringAttr)
    return name.data


def _swap(op: Operation, new: Operation) -> None:
    new.location = op.location
    new.results[0].name_hint = op.results[0].name_hint
    op.results[0].replace_all_uses_with(new.results[0])
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(new, op)
    block.erase_op(op)


@dataclass(frozen=True)
class PromoteParamsPass(ModulePass):
    """Turn named inputs into params, named params into inputs, big constants into params."""

    name = "promote-params"

    inputs: tuple[str, ...] = ()
    """Inputs that become params."""
    params: tuple[str, ...] = ()
    """Params that become inputs."""
    min_elements: int = 0
    """Constants with at least this many elements become params (0: none)."""
    export: str = ""
    """The .npz file receiving the values of the constants made params."""

    def __post_init__(self) -> None:
        if self.min_elements < 0:
            raise ValueError(f"min-elements must be >= 0, got {self.min_elements}")
        if self.min_elements and not self.export:
            raise ValueError("min-elements needs export=FILE.npz to keep the constants' values")
        both = sorted(set(self.inputs) & set(self.params))
        if both:
            raise ValueError(f"{both} named both in inputs and params")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        to_param, to_input = set(self.inputs), set(self.params)
        exported: dict[str, np.ndarray] = {}
        taken = {_leaf_name(o) for o in op.walk() if isinstance(o, mir.ParamOp | mir.InputOp)}
        counter = 0
        for graph in func_graphs(op):
            for leaf in list(graph.body.walk()):
                t = leaf.results[0].type if leaf.results else None
                if isinstance(leaf, mir.InputOp) and _leaf_name(leaf) in to_param:
                    assert isinstance(t, TensorType)
                    _swap(leaf, mir.ParamOp(_leaf_name(leaf), t))
                elif isinstance(leaf, mir.ParamOp) and _leaf_name(leaf) in to_input:
                    assert isinstance(t, TensorType)
                    _swap(leaf, mir.InputOp(_leaf_name(leaf), t))
                elif (
                    isinstance(leaf, mir.ConstantOp)
                    and self.min_elements
                    and (leaf.tensor_type.num_elements() or 0) >= self.min_elements
                ):
                    while f"{CONST_PREFIX}{counter}" in taken:
                        counter += 1
                    name = f"{CONST_PREFIX}{counter}"
                    counter += 1
                    exported[name] = leaf.to_numpy()
                    _swap(leaf, mir.ParamOp(name, leaf.tensor_type))
        if self.min_elements:
            save_bindings(self.export, exported)
