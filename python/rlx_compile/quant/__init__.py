"""Post-training quantisation support: calibration and quantisation parameters.

- ``calibrate(module, batches, params) -> CalibrationStats`` runs the reference executor
  on sample batches and records the stats of every matmul/conv input and weight;
- ``CalibrationStats.save(path)`` / ``load(path)``: the ``.npz`` file the
  ``quant-insert{stats=...}`` and ``scaled-quant-insert{amax=calibrated stats=...}``
  passes read;
- ``use_calibration(stats_or_fn)``: hand stats to those passes in-process (what
  ``CompilePipeline(quantize="int8", calibration=batches)`` does);
- ``quant_sites``: which operands are quantised, shared by calibration and the passes.
"""

from rlx_compile.quant.calibrate import (
    CalibrationError,
    CalibrationStats,
    TensorStats,
    calibrate,
    resolve_stats,
    use_calibration,
)
from rlx_compile.quant.params import (
    QParams,
    activation_qparams,
    amax_scale,
    weight_qparams,
)
from rlx_compile.quant.sites import Site, is_weight, quant_sites, value_keys

__all__ = [
    "CalibrationError",
    "CalibrationStats",
    "QParams",
    "Site",
    "TensorStats",
    "activation_qparams",
    "amax_scale",
    "calibrate",
    "is_weight",
    "quant_sites",
    "resolve_stats",
    "use_calibration",
    "value_keys",
    "weight_qparams",
]
