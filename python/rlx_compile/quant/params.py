"""Scales and zero points from calibration stats.

- Weights: symmetric (zero point 0), from their min/max, per output channel when asked:
  scale = amax / qmax. Percentile clipping is for activations only (a clipped weight
  outlier is an error in every output that reads it).
- Activations, per tensor: ``minmax`` uses the observed range, ``percentile`` clips the
  range at the p-th percentile of |x|. Symmetric: scale = amax / qmax with qmax = 127
  (the int8 range [-127, 127] maps ±amax exactly; -128 is never produced). Asymmetric:
  the range is widened to contain 0 (so 0 is exact) and mapped onto [qmin, qmax] with a
  zero point.
- An all-zero tensor gets scale 1 (any positive scale represents it exactly).
- fp8: scale = amax / the format's largest finite value (448 for e4m3, 57344 for e5m2).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from rlx_compile.dialects.types import DType
from rlx_compile.quant.calibrate import TensorStats

CALIBRATION_METHODS = ("minmax", "percentile")


def f8_max(dtype: DType) -> float:
    return float(ml_dtypes.finfo(dtype.numpy).max)


@dataclass(frozen=True)
class QParams:
    """Quantisation parameters: a scale (and zero point) per tensor or per ``axis`` slot."""

    scale: np.ndarray
    zero_point: np.ndarray | None
    axis: int | None


# The smallest scale used: below the f32 normal range a scale would flush to zero (or
# lose all precision) when the quantize op reads it as f32.
MIN_SCALE = float(np.finfo(np.float32).tiny)


def _safe_scale(amax: np.ndarray, qmax: float) -> np.ndarray:
    amax = np.asarray(amax, np.float64)
    return np.where(amax > 0, np.maximum(amax / qmax, MIN_SCALE), 1.0)


def weight_qparams(stats: TensorStats, axis: int | None, dtype: DType = DType.I8) -> QParams:
    """Symmetric min/max scales, one per slot of ``axis`` (None: one for the tensor)."""
    _, qmax = dtype.int_range
    if axis is None:
        return QParams(_safe_scale(np.array(stats.amax), qmax), None, None)
    return QParams(_safe_scale(stats.channel_amax(axis), qmax), None, axis)


def activation_qparams(
    stats: TensorStats,
    *,
    dtype: DType = DType.I8,
    symmetric: bool = True,
    method: str = "minmax",
    percentile: float = 99.99,
) -> QParams:
    qmin, qmax = dtype.int_range
    lo, hi = (min(stats.min, 0.0), max(stats.max, 0.0)) if stats.count else (0.0, 0.0)
    if method == "percentile":
        clip = stats.percentile(percentile)
        lo, hi = max(lo, -clip), min(hi, clip)
    elif method != "minmax":
        raise ValueError(f"unknown calibration method '{method}'")
    if symmetric:
        return QParams(_safe_scale(np.array(max(-lo, hi)), qmax), None, None)
    if hi == lo:
        return QParams(np.array(1.0), np.array(0, np.int64), None)
    scale = max((hi - lo) / (qmax - qmin), MIN_SCALE)
    zero_point = int(np.clip(np.rint(qmin - lo / scale), qmin, qmax))
    return QParams(np.array(scale), np.array(zero_point, np.int64), None)


def amax_scale(amax: float, dtype: DType) -> QParams:
    """Per-tensor scaled-fp8 parameters from an absolute maximum."""
    return QParams(_safe_scale(np.array(amax), f8_max(dtype)), None, None)
