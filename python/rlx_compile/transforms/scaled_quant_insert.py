"""``scaled-quant-insert{dtype=f8e4m3 amax=dynamic}``: per-tensor scaled fp8 GEMM inputs.

Both operands of every GEMM -- a matmul (or fused matmul+bias+act) whose rhs is a rank-2
matrix; batched matmuls with a batched rhs stay untouched, as in RLX -- read
``dequantize(quantize(x, s), s)`` with an f8 code type and scale s = amax / max_f8
(448 for e4m3, 57344 for e5m2), so the largest magnitude maps onto the format's largest
finite value:

- ``amax=dynamic`` (default): amax = max |x| of the tensor itself, computed in the graph
  (current scaling; needs no calibration; on a weight it is constant-foldable);
- ``amax=calibrated``: amax from calibration stats (``stats=FILE.npz`` or the active
  ``use_calibration``), a constant scale (static scaling).

A zero amax gives scale 1. Each operand is quantised once however many GEMMs read it.
The GEMM itself stays f32 on the dequantised values; ``auto-mixed-precision`` keeps it
so. Opt-in: it changes numerics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlx_compile.builder import GraphBuilder, named, type_of
from rlx_compile.dialects.types import DType
from rlx_compile.ir import graph_block, graph_name, mir_graphs
from rlx_compile.quant import CalibrationError, amax_scale, quant_sites, resolve_stats, value_keys
from rlx_compile.quant.calibrate import CalibrationStats
from rlx_compile.quant.params import f8_max
from rlx_compile.quant.qdq import emit_qdq, insert_after_producer, set_operand
from rlx_compile.quant.sites import producer_name

F8_DTYPES = {"f8e4m3": DType.F8E4M3, "f8e5m2": DType.F8E5M2}
AMAX_MODES = ("dynamic", "calibrated")


def emit_dynamic_fp8(value: SSAValue, dtype: DType) -> SSAValue:
    """dequantize(quantize(x, s), s) with s = max(max|x|, tiny) / max_f8 computed in the
    graph (``tiny`` keeps an all-zero tensor from dividing by zero)."""
    t = type_of(value)
    hint = value.name_hint or "v"

    def build(b: GraphBuilder) -> SSAValue:
        amax = b.reduce("max", b.abs(value), None)
        tiny = float(np.finfo(t.dtype.numpy).tiny)
        scale = b.div(b.maximum(amax, tiny), f8_max(dtype))
        named(scale, f"{hint}_scale")
        q = named(b.quantize(value, scale, dtype=dtype), f"{hint}_q")
        return named(b.dequantize(q, scale), f"{hint}_dq")

    return insert_after_producer(value, build)


@dataclass(frozen=True)
class ScaledQuantInsertPass(ModulePass):
    """Quantise GEMM inputs to scaled fp8 (per tensor, amax-based scales)."""

    name = "scaled-quant-insert"

    dtype: str = "f8e4m3"
    amax: str = "dynamic"
    """dynamic: the tensor's own max |x| at run time; calibrated: from stats."""
    stats: str = ""
    """With amax=calibrated: stats .npz; empty means the active ``use_calibration``."""

    def __post_init__(self) -> None:
        if self.dtype not in F8_DTYPES:
            raise ValueError(f"unknown dtype '{self.dtype}' (use f8e4m3 or f8e5m2)")
        if self.amax not in AMAX_MODES:
            raise ValueError(f"unknown amax '{self.amax}' (use dynamic or calibrated)")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dtype = F8_DTYPES[self.dtype]
        graphs = mir_graphs(op, self.name)
        stats: CalibrationStats | None = None
        if self.amax == "calibrated" and any(
            quant_sites(graph_block(g), gemm_only=True) for g in graphs
        ):
            try:
                stats = resolve_stats(op, self.stats, self.name)
            except CalibrationError as err:
                raise PassFailedException(str(err)) from None
            graphs = [g for g in graphs if graph_name(g) == stats.graph]
        for graph in graphs:
            keys = value_keys(graph)
            quantized: dict[SSAValue, SSAValue] = {}
            for site in quant_sites(graph_block(graph), gemm_only=True):
                if site.value not in quantized:
                    if stats is None:
                        quantized[site.value] = emit_dynamic_fp8(site.value, dtype)
                    else:
                        try:
                            entry = stats.lookup(
                                keys[site.value], producer_name(site.value), str(site.value.type)
                            )
                        except CalibrationError as err:
                            raise PassFailedException(str(err)) from None
                        qp = amax_scale(entry.amax, dtype)
                        quantized[site.value] = emit_qdq(site.value, qp, dtype)
                set_operand(site.op, site.operand, quantized[site.value])
