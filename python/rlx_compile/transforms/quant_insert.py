"""``quant-insert{scheme=int8 granularity=per-channel symmetric=true calibration=minmax}``:
post-training int8 quantisation in Q/DQ form.

Every float operand of matmul, conv, their fused forms and the projections of a fused
attention block reads ``dequantize(quantize(x))`` instead of ``x``, with constant scales
(and zero points) computed from calibration stats (``rlx_compile.quant.calibrate``).
Weights (values computed from params and constants only) are quantised symmetrically,
per output channel with ``granularity=per-channel``; activations per tensor, from their
min/max or a percentile of |x|, symmetric or with a zero point. A value read by several
quantised ops gets one Q/DQ pair; other readers keep the float value. The compute ops
themselves are unchanged (they read the dequantised values), so the result runs on the
reference executor; ``quant-propagate`` then removes redundant pairs and folds weights.

Stats come from ``stats=FILE.npz`` or, when empty, from the active
``rlx_compile.quant.use_calibration`` (``CompilePipeline`` sets it).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlx_compile.dialects.types import DType
from rlx_compile.ir import graph_block, graph_name, mir_graphs
from rlx_compile.quant import (
    CalibrationError,
    CalibrationStats,
    activation_qparams,
    quant_sites,
    resolve_stats,
    value_keys,
    weight_qparams,
)
from rlx_compile.quant.params import CALIBRATION_METHODS
from rlx_compile.quant.qdq import emit_qdq, set_operand
from rlx_compile.quant.sites import producer_name

SCHEMES = {"int8": DType.I8}
GRANULARITIES = ("per-tensor", "per-channel")


@dataclass(frozen=True)
class QuantInsertPass(ModulePass):
    """Insert int8 quantize/dequantize pairs on matmul/conv inputs and weights."""

    name = "quant-insert"

    scheme: str = "int8"
    granularity: str = "per-channel"
    """Weights: one scale per output channel, or one per tensor."""
    symmetric: bool = True
    """Activations: zero point 0 and scale amax/127; false adds a zero point."""
    calibration: str = "minmax"
    """Activation ranges: observed min/max, or clipped at a percentile of |x|."""
    percentile: float = 99.99
    stats: str = ""
    """Calibration stats (.npz from ``calibrate(...).save``); empty: the active
    ``use_calibration`` stats."""

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(f"unknown scheme '{self.scheme}' (known: {', '.join(SCHEMES)})")
        if self.granularity not in GRANULARITIES:
            raise ValueError(
                f"unknown granularity '{self.granularity}' (use per-tensor or per-channel)"
            )
        if self.calibration not in CALIBRATION_METHODS:
            raise ValueError(
                f"unknown calibration '{self.calibration}' (use {' or '.join(CALIBRATION_METHODS)})"
            )
        if not 0.0 < self.percentile <= 100.0:
            raise ValueError(f"percentile must be in (0, 100], got {self.percentile}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        graphs = mir_graphs(op, self.name)
        if not any(quant_sites(graph_block(g)) for g in graphs):
            return  # nothing to quantise: no stats needed
        try:
            stats = resolve_stats(op, self.stats, self.name)
            graph = next((g for g in graphs if graph_name(g) == stats.graph), None)
            if graph is None:
                raise CalibrationError(f"the stats describe graph @{stats.graph}, not in module")
            self._insert(graph, stats)
        except CalibrationError as err:
            raise PassFailedException(str(err)) from None

    def _insert(self, graph: func.FuncOp, stats: CalibrationStats) -> None:
        q_dtype = SCHEMES[self.scheme]
        block = graph_block(graph)
        keys = value_keys(graph)
        sites = quant_sites(block)
        pairs: dict[tuple[SSAValue, int | None], SSAValue] = {}
        for site in sites:
            entry = stats.lookup(keys[site.value], producer_name(site.value), str(site.value.type))
            if site.weight:
                axis = site.channel_axis if self.granularity == "per-channel" else None
                qp = weight_qparams(entry, axis, q_dtype)
            else:
                qp = activation_qparams(
                    entry, dtype=q_dtype, symmetric=self.symmetric, method=self.calibration,
                    percentile=self.percentile,
                )  # fmt: skip
            cache_key = (site.value, qp.axis)
            if cache_key not in pairs:
                pairs[cache_key] = emit_qdq(site.value, qp, q_dtype)
            set_operand(site.op, site.operand, pairs[cache_key])
