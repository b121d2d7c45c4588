"""LIR execution.

``lir.view`` has value semantics here (the root's bytes from an offset, read as the view
type), so ``run`` executes a ``lir.graph`` like any graph. ``run_arena`` executes it the
way a device would: every slotted tensor lives at its planned offset inside one ``uint8``
arena, kernels read their operands from the arena and their results are written back to
their slots, views are windows onto their root's bytes. A wrong offset or an unsafe reuse
of bytes therefore shows up as a wrong answer.

A range plan (``dims [1 <= seq <= 512]``) runs at any size in its ranges: shapes come
from the run's bindings, each tensor takes the first bytes of its slot, and a size outside
the ranges is refused before anything runs (``lir.GraphOp.check_bindings``, called by
``prepare``).

Control-flow ops run their regions' ops in the arena too, at the slots the plan gave them;
a loop's body reads its arguments from their slots, into which the executor copies the
yielded values between iterations (``run_loop`` decides when the loop stops, as for the
reference executor).

A concat whose operands were produced inside its slot reads them from the bytes it then
writes: kernels return fresh arrays, and NumPy assignment between overlapping arrays
behaves as if through a temporary copy, so rewriting those bytes with themselves is exact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import cast

import numpy as np
from numpy.typing import ArrayLike
from xdsl.ir import Block, Operation, SSAValue

from rlx_compile.dialects import lir, mir
from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter.core import (
    Env,
    ExecutionError,
    check_results,
    describe,
    evaluate_op,
    impl,
    prepare,
)
from rlx_compile.interpreter.mir import run_loop
from rlx_compile.ir import graph_block, output_names

# Fill value of a fresh arena: reading bytes nothing wrote gives NaN-like garbage.
POISON = 0xFF


Shape = tuple[int, ...]


def _static_shape(t: TensorType) -> Shape:
    return tuple(int(d) for d in t.shape)


def _reinterpret(root: np.ndarray, offset: int, t: TensorType, shape: Shape) -> np.ndarray:
    """``root``'s bytes from ``offset`` read as a ``t`` of ``shape`` (its shape under the
    run's bindings)."""
    raw = np.ascontiguousarray(root).reshape(-1).view(np.uint8)
    nbytes = math.prod(shape) * t.dtype.itemsize
    if offset < 0 or offset + nbytes > raw.size:
        raise ExecutionError(
            f"view bytes [{offset}, {offset + nbytes}) outside a {raw.size}-byte root"
        )
    return raw[offset : offset + nbytes].view(t.dtype.numpy).reshape(shape)


@impl(lir.ViewOp)
def _view(op: lir.ViewOp, args: list[np.ndarray], env: Env) -> list[np.ndarray]:
    t = op.result.type
    return [_reinterpret(args[0], op.offset, t, env.shape(t)).copy()]


class Arena:
    """One byte buffer and typed windows onto it."""

    def __init__(self, size: int):
        self.bytes = np.full(size, POISON, dtype=np.uint8)

    def window(
        self, offset: int, t: TensorType, shape: Shape | None = None, limit: int | None = None
    ) -> np.ndarray:
        """The ``t`` at ``offset``, of ``shape`` (``t``'s own when static); ``limit`` is
        its slot's size, which the tensor must fit (a range plan's slot holds its tensor
        at every size in range)."""
        shape = _static_shape(t) if shape is None else shape
        nbytes = math.prod(shape) * t.dtype.itemsize
        if limit is not None and nbytes > limit:
            raise ExecutionError(f"a {nbytes}-byte tensor does not fit its {limit}-byte slot")
        if offset < 0 or offset + nbytes > self.bytes.size:
            raise ExecutionError(
                f"slot [{offset}, {offset + nbytes}) is outside the {self.bytes.size}-byte arena"
            )
        raw = self.bytes[offset : offset + nbytes]
        return raw.view(t.dtype.numpy).reshape(shape)


def run_arena(
    module_or_graph: Operation,
    inputs: Mapping[str, ArrayLike],
    params: Mapping[str, ArrayLike] | None = None,
    *,
    graph: str | None = None,
) -> dict[str, np.ndarray]:
    """Execute a ``lir.graph`` inside its arena (see the module docstring); inputs, params
    and outputs as in ``interpreter.run``."""
    g, env = prepare(module_or_graph, inputs, params, graph=graph)
    if not isinstance(g, lir.GraphOp):
        raise ExecutionError(f"run_arena executes lir.graph ops, not {g.name}")
    run = _ArenaRun(Arena(g.arena_bytes), env)
    block = graph_block(g)
    terminator = block.last_op
    assert terminator is not None
    run.run_ops(block)
    outs = [run.values[v] for v in terminator.operands]
    return {
        name: np.array(v, copy=True, order="C")
        for name, v in zip(output_names(g), outs, strict=True)
    }


class _ArenaRun:
    """The state of one arena execution: every value (a window onto the arena where it
    has a slot), where each value's bytes live, and the slot of each root."""

    def __init__(self, arena: Arena, env: Env):
        self.arena, self.env = arena, env
        self.values: dict[SSAValue, np.ndarray] = {}
        # Where each value's bytes live: (root value, byte offset), for views.
        self.root_of: dict[SSAValue, tuple[SSAValue, int]] = {}
        self.slot_of: dict[SSAValue, lir.SlotAttr] = {}

    def run_ops(self, block: Block) -> list[np.ndarray]:
        """Run a block's ops up to its terminator; returns the terminator's operands."""
        terminator = block.last_op
        for op in block.ops:
            if op is terminator:
                break
            if isinstance(op, lir.ViewOp):
                self._view(op)
                continue
            try:
                args = [self.values[v] for v in op.operands]
            except KeyError:
                raise ExecutionError(
                    f"{describe(op)} reads a value not defined before it"
                ) from None
            if isinstance(op, mir.IfOp):
                results = self._if(op, args)
            elif isinstance(op, mir.LoopOp):
                results = self._loop(op, args)
            else:
                results = evaluate_op(op, args, self.env)
            self._store(op, results)
        assert terminator is not None
        return [self.values[v] for v in terminator.operands]

    def _view(self, op: lir.ViewOp) -> None:
        root, base = self.root_of.get(op.root, (op.root, 0))
        offset = base + op.offset
        t = op.result.type
        shape = self.env.shape(t)
        self.root_of[op.result] = (root, offset)
        slot = self.slot_of.get(root)
        self.values[op.result] = (
            self.arena.window(slot.offset + offset, t, shape)
            if slot is not None
            else _reinterpret(self.values[root], offset, t, shape)
        )

    def _store(self, op: Operation, results: list[np.ndarray]) -> None:
        for result, value, slot in zip(op.results, results, lir.result_slots(op), strict=True):
            self._bind(result, value, slot)

    def _bind(self, value: SSAValue, array: np.ndarray, slot: lir.SlotAttr | None) -> None:
        """``value`` holds ``array``: in its slot when it has one (copied there)."""
        self.root_of[value] = (value, 0)
        if slot is None:
            self.values[value] = array
            return
        t = cast(TensorType, value.type)
        window = self.arena.window(slot.offset, t, self.env.shape(t), slot.size)
        window[...] = array
        self.slot_of[value] = slot
        self.values[value] = window

    # Control flow: the regions' ops run in the arena at their own slots; what a region
    # yields is copied out before anything overwrites it.
    def _if(self, op: mir.IfOp, args: list[np.ndarray]) -> list[np.ndarray]:
        yielded = self.run_ops(op.branch(mir.IfOp.taken(args[0])))
        results = [np.array(v, copy=True) for v in yielded]
        check_results(op, results, self.env)
        return results

    def _loop(self, op: mir.LoopOp, args: list[np.ndarray]) -> list[np.ndarray]:
        block = op.body.block
        slots: list[lir.SlotAttr | None] = list(lir.arg_slots(op)) or [None] * len(block.args)

        def body(i: np.ndarray, cond: np.ndarray, carried: list[np.ndarray]) -> list[np.ndarray]:
            for arg, value, slot in zip(block.args, [i, cond, *carried], slots, strict=True):
                self._bind(arg, value, slot)
            return [np.array(v, copy=True) for v in self.run_ops(block)]

        results = run_loop(op, args, body, self.env)
        check_results(op, results, self.env)
        return results
