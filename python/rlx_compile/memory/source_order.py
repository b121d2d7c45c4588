"""Live bytes of an unplanned MIR block in source order: every op result in a buffer of its
own (native size), live from its producer to its last reader, graph outputs to the end,
leaves for the whole run; a control-flow op needs, at its step, its largest region's peak
(a loop body's arguments live through it). Its peak is ``mir_peak_live_bytes``, the
source-order bound; the passes that weigh memory (``rematerialize``,
``fuse-shared-input-matmul``) read its profile, the bytes live at each step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import NDArray
from xdsl.ir import Block, Operation, SSAValue

from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import is_leaf
from rlx_compile.dialects.types import TensorType
from rlx_compile.ir import ops_without_terminator, weight_values
from rlx_compile.memory.placement import peak_live_bytes


@dataclass
class SourceOrderLiveness:
    """One row per op result (and per control-flow op, its regions' peak at its step):
    its bytes and the steps it is born and dies at; ``step`` numbers the block's ops."""

    ops: list[Operation]
    step: dict[Operation, int]
    row: dict[SSAValue, int]
    sizes: list[int]
    births: list[int]
    deaths: list[int]

    @classmethod
    def of_block(
        cls, block: Block, outputs: list[SSAValue], static_leaves: bool = True
    ) -> SourceOrderLiveness:
        """``static_leaves=False`` leaves weights out -- params, constants and values
        computed from them only -- (the activation bound, for plans that keep weights
        outside the arena)."""
        ops = ops_without_terminator(block)
        n = len(ops)
        live = cls(ops, {}, {}, [], [], [])
        sizes, births, deaths, step_of = live.sizes, live.births, live.deaths, live.step
        weights = set() if static_leaves else weight_values(ops)
        # Rows by id(value) while reading (an SSAValue hashes by id, through a Python
        # __hash__); ``row`` is filled from ``values`` at the end, in row order.
        rows: dict[int, int] = {}
        values: list[SSAValue | None] = []
        for arg in block.args:  # a loop body's arguments, live for all of it
            rows[id(arg)] = len(sizes)
            values.append(arg)
            sizes.append(cast(TensorType, arg.type).nbytes() or 0)
            births.append(0)
            deaths.append(n)
        for step, op in enumerate(ops):
            step_of[op] = step
            # Only an op with regions can be a control-flow op (``mir.read_values``).
            regions = op.regions
            for operand in mir.read_values(op) if regions else op._operands:
                r = rows.get(id(operand))
                if r is not None and deaths[r] < step:
                    deaths[r] = step
            leaf = is_leaf(op)
            birth = 0 if leaf else step
            death = n if leaf else step
            for result in op.results:
                rows[id(result)] = len(sizes)
                values.append(result)
                weight = bool(weights) and result in weights
                sizes.append(0 if weight else cast(TensorType, result._type).nbytes() or 0)
                births.append(birth)
                deaths.append(death)
            if regions and isinstance(op, mir.ControlFlowOp):
                need = 0
                for region in op.regions:
                    body = region.block
                    assert body.last_op is not None
                    inner = cls.of_block(body, list(body.last_op.operands), static_leaves)
                    need = max(need, inner.peak())
                values.append(None)
                sizes.append(need)
                births.append(step)
                deaths.append(step)
        for v in outputs:
            r = rows.get(id(v))
            if r is not None:
                deaths[r] = n
        live.row.update((v, i) for i, v in enumerate(values) if v is not None)
        return live

    def peak(self) -> int:
        return int(peak_live_bytes(self.sizes, self.births, self.deaths))

    def born(self) -> NDArray[np.int64]:
        """The bytes each step makes (step 0: the leaves' as well), ``len(ops) + 1``."""
        born = np.zeros(len(self.ops) + 1, dtype=np.int64)
        np.add.at(born, np.asarray(self.births, dtype=np.int64), np.asarray(self.sizes))
        return born

    def profile(self) -> NDArray[np.int64]:
        """The bytes live at each step, ``len(ops) + 1`` of them (the last: what lives to
        the end)."""
        delta = np.zeros(len(self.ops) + 2, dtype=np.int64)
        sizes = np.asarray(self.sizes, dtype=np.int64)
        np.add.at(delta, np.asarray(self.births, dtype=np.int64), sizes)
        np.add.at(delta, np.asarray(self.deaths, dtype=np.int64) + 1, -sizes)
        return np.cumsum(delta[:-1])
