"""``auto-mixed-precision{dtype=f16 policy=compute}``: run chosen ops in f16 or bf16.

Every MIR op declares one precision class (``dialects.traits.Precision``; RLX's
``precision`` module):
compute (matmul, conv, attention and their fused forms), reduction (reductions,
softmax/log-softmax, every normalisation, average pooling), elementwise (unary, binary,
compare, where, rope, fused swiglu), data movement (reshape, transpose, narrow, slice,
concat, expand, gather, pad, max pooling). A policy gives each class ``low`` (the
``dtype`` option), ``f32``, or ``follow``:

| policy | compute | reduction | elementwise | data movement | origin |
|---|---|---|---|---|---|
| ``compute`` (default) | low | f32 | follow | follow | RLX 0.2.2 "AMP around matmul" |
| ``conservative`` | low | f32 | low | low | RLX 0.2.2 AutoMixedConservative |
| ``metal`` | f32 | low | low | f32 | RLX 0.2.18 AutoMixed (tuned on Metal) |
| ``all`` | low | low | low | low | RLX AlwaysF16 / AutoMixedBf16 |
| ``f32`` | f32 | f32 | f32 | f32 | RLX AlwaysF32: no change |

``follow`` runs an op in low precision when its activation operands (operands not
computed from params and constants alone) all arrive in low precision, else in f32
(widest wins, as in PyTorch autocast); weights never vote, they are cast to whatever the
op runs in. So a residual add of an f32 input and a low-precision matmul stays f32,
while a bias add or relu right after a low-precision conv stays low.

Rules for every policy:
- only f32 tensors are lowered; integer, bool, f64 and f8 tensors are never cast;
- quantize/dequantize/fake_quantize keep f32 operands, and a compute op reading a
  dequantized (or fake-quantized) value stays f32: its numerics are the quantiser's;
- leaves keep their types, graph outputs are cast back to their declared types, and ops
  of other dialects (func.call, ...) get their declared operand types back;
- control-flow ops keep their types too (operands, results, what their regions take
  and yield); their regions' ops follow the policy like the graph's, reading values of
  the graph as the graph's own ops do;
- one cast per (value, dtype); a cast that would undo an exact widening cast reads the
  original value instead, and a cast made a no-op (its input now has its result type)
  disappears, so no redundant cast pairs are created.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from rlx_compile.builder import named
from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import PrecisionClass, precision_class
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.ir import erase_unused, graph_block, mir_graphs
from rlx_compile.quant.qdq import set_operand
from rlx_compile.quant.sites import is_weight

LOW, F32, FOLLOW = "low", "f32", "follow"
_C, _R, _E, _D = (
    PrecisionClass.COMPUTE, PrecisionClass.REDUCTION, PrecisionClass.ELEMENTWISE,
    PrecisionClass.DATA_MOVEMENT,
)  # fmt: skip
POLICIES: dict[str, dict[PrecisionClass, str]] = {
    "compute": {_C: LOW, _R: F32, _E: FOLLOW, _D: FOLLOW},
    "conservative": {_C: LOW, _R: F32, _E: LOW, _D: LOW},
    "metal": {_C: F32, _R: LOW, _E: LOW, _D: F32},
    "all": {_C: LOW, _R: LOW, _E: LOW, _D: LOW},
    "f32": {_C: F32, _R: F32, _E: F32, _D: F32},
}
LOW_DTYPES = {"f16": DType.F16, "bf16": DType.BF16}
_QUANTIZED_SOURCES = (mir.DequantizeOp, mir.FakeQuantizeOp)


def _dtype(v: SSAValue) -> DType:
    return cast(TensorType, v.type).dtype


class _Rewriter:
    """One forward walk over a graph block, or a control-flow region's (``parent``: the
    walk of the block around it, whose values the region reads)."""

    def __init__(
        self,
        block: Block,
        low: DType,
        policy: dict[PrecisionClass, str],
        parent: _Rewriter | None = None,
    ):
        self.block = block
        self.low = low
        self.policy = policy
        # Declared f32-ness of every value before the pass: only those may change type.
        self.was_f32: dict[SSAValue, bool] = {} if parent is None else parent.was_f32
        self.original: dict[SSAValue, Attribute] = {} if parent is None else parent.original
        self.casts: dict[tuple[SSAValue, DType], SSAValue] = {}  # casts of this block
        self.weights: dict[SSAValue, bool] = {} if parent is None else parent.weights
        self.bypassed: list[Operation] = []
        self.created: list[Operation] = []

    def run(self) -> None:
        values = [*self.block.args, *(r for op in self.block.ops for r in op.results)]
        for v in values:
            self.original[v] = v.type
            self.was_f32[v] = _dtype(v) is DType.F32 if isinstance(v.type, TensorType) else False
        for op in list(self.block.ops):
            self.visit(op)
        # Bypassed casts, and casts made for an op that then stayed f32, may be unused.
        erase_unused(self.bypassed + self.created)

    # -- casts ---------------------------------------------------------------------
    def cast_to(self, value: SSAValue, dtype: DType, before: Operation) -> SSAValue:
        if _dtype(value) is dtype:
            return value
        key = (value, dtype)
        if key in self.casts:
            return self.casts[key]
        producer = value.op if isinstance(value, OpResult) else None
        # Undo an exact widening (f16/bf16 -> f32) by reading its input.
        if (
            isinstance(producer, mir.CastOp)
            and _dtype(producer.input) is dtype
            and dtype in (DType.F16, DType.BF16)
            and _dtype(value) is DType.F32
        ):
            self.casts[key] = producer.input
            self.bypassed.append(producer)
            return producer.input
        new = mir.CastOp(value, dtype)
        new.location = before.location
        self.block.insert_op_before(new, before)
        self.created.append(new)
        hint = value.name_hint or "v"
        out = named(new.result, f"{hint}_{dtype.value}")
        self.casts[key] = out
        return out

    def restore_operands(self, op: Operation) -> None:
        """Give an op back the operand types it was built with."""
        for i, v in enumerate(op.operands):
            want = self.original.get(v)
            if isinstance(want, TensorType) and v.type != want:
                set_operand(op, i, self.cast_to(v, want.dtype, op))

    # -- decisions -------------------------------------------------------------------
    def _is_weight(self, v: SSAValue) -> bool:
        return is_weight(v, self.weights)

    def precision(self, op: Operation, cat: PrecisionClass) -> str:
        choice = self.policy[cat]
        lowerable = [v for v in op.operands if self.was_f32.get(v, False)]
        if not lowerable:
            return F32
        if cat is PrecisionClass.COMPUTE and any(
            isinstance(v, OpResult) and isinstance(v.op, _QUANTIZED_SOURCES) for v in lowerable
        ):
            return F32
        if choice != FOLLOW:
            return choice
        activations = [v for v in lowerable if not self._is_weight(v)]
        if activations and all(_dtype(v) is self.low for v in activations):
            return LOW
        return F32

    # -- the walk ---------------------------------------------------------------------
    def visit(self, op: Operation) -> None:
        if isinstance(op, mir.ControlFlowOp):
            # Its interface keeps its types (operands, block arguments and yields are
            # restored); each region is a walk of its own, over the values around it.
            self.restore_operands(op)
            for region in op.regions:
                _Rewriter(region.block, self.low, self.policy, parent=self).run()
            return
        cat = precision_class(op)
        if cat is PrecisionClass.BOUNDARY:
            return
        if cat is PrecisionClass.CAST:
            self.visit_cast(cast(mir.CastOp, op))
            return
        if cat is None or cat is PrecisionClass.QUANT or op is self.block.last_op:
            self.restore_operands(op)
            return
        if self.precision(op, cat) == F32:
            self.restore_operands(op)
            return
        self.lower(op)

    def visit_cast(self, op: mir.CastOp) -> None:
        src = op.input
        if src.type == op.result.type:
            op.result.replace_all_uses_with(src)
            self.bypassed.append(op)
            return
        producer = src.op if isinstance(src, OpResult) else None
        # cast(cast(x: a -> f32) -> a) where a -> f32 was exact: x itself.
        if (
            isinstance(producer, mir.CastOp)
            and producer.input.type == op.result.type
            and _dtype(producer.input) in (DType.F16, DType.BF16)
            and _dtype(src) is DType.F32
        ):
            op.result.replace_all_uses_with(producer.input)
            self.bypassed.append(op)

    def lower(self, op: Operation) -> None:
        operands = [
            self.cast_to(v, self.low, op) if self.was_f32.get(v, False) else v for v in op.operands
        ]
        result_types = [
            cast(TensorType, r.type).with_dtype(self.low) if self.was_f32[r] else r.type
            for r in op.results
        ]
        new = type(op).create(
            operands=operands,
            result_types=result_types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            location=op.location,
        )
        try:
            new.verify_()
        except VerifyException:
            # The op does not take this mix of types: it stays f32.
            new.drop_all_references()
            self.restore_operands(op)
            return
        self.block.insert_op_before(new, op)
        for old, fresh in zip(op.results, new.results, strict=True):
            fresh.name_hint = old.name_hint
            self.original[fresh] = self.original[old]
            self.was_f32[fresh] = self.was_f32[old]
            old.replace_all_uses_with(fresh)
        self.block.erase_op(op)


@dataclass(frozen=True)
class AutoMixedPrecisionPass(ModulePass):
    """Cast around the ops a precision policy runs in f16/bf16."""

    name = "auto-mixed-precision"

    dtype: str = "f16"
    """The low precision: f16 or bf16."""
    policy: str = "compute"
    """compute, conservative, metal, all or f32 (see the module docstring)."""

    def __post_init__(self) -> None:
        if self.dtype not in LOW_DTYPES:
            raise ValueError(f"unknown dtype '{self.dtype}' (use f16 or bf16)")
        if self.policy not in POLICIES:
            raise ValueError(f"unknown policy '{self.policy}' (known: {', '.join(POLICIES)})")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        graphs = mir_graphs(op, self.name)
        if self.policy == "f32":
            return
        for graph in graphs:
            assert isinstance(graph, func.FuncOp)
            _Rewriter(graph_block(graph), LOW_DTYPES[self.dtype], POLICIES[self.policy]).run()
