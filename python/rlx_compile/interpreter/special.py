"""Vectorised float64 ``erf``/``erfc`` without SciPy.

NumPy has no erf, ``math.erf`` is scalar, and the project takes no SciPy dependency, so
the reference executor evaluates both functions with two classical expansions whose
terms need no fitted coefficients:

- ``|x| < 1``: the everywhere-positive series
  ``erf(a) = 2/sqrt(pi) * exp(-a^2) * sum_n 2^n a^(2n+1) / (1*3*...*(2n+1))``
  (no cancellation, so erf keeps full relative accuracy near 0);
- ``|x| >= 1``: Laplace's continued fraction
  ``erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))``, evaluated
  backwards from a fixed depth, with ``exp(-a^2)`` split so that ``a^2`` is not rounded
  before the exponential (the rounding would cost ~a^2 ulps in the tail).

Measured against ``math.erf``/``math.erfc`` on a dense grid of [0, 30]: erf within 5 ulp,
erfc within 20 ulp (the worst case is erfc = 1 - erf just below 1) -- far below the
rounding to f32 or narrower that every caller applies.
"""

from __future__ import annotations

import math

import numpy as np

_SQRT_PI = math.sqrt(math.pi)
_SERIES_TERMS = 40  # the ratio of successive terms is <= 2/(2n+3) for |x| < 1
_CF_DEPTH = 200  # enough for 5 ulp at x = 1; the fraction converges faster above
_SWITCH = 1.0
# erfc(x) is 0 in float64 beyond ~27.3; clamping keeps exp-splitting away from inf.
_ERFC_ZERO_FROM = 40.0


def _exp_minus_square(a: np.ndarray) -> np.ndarray:
    """exp(-a*a) without first rounding a*a: a = hi + lo with hi on a 2^-20 grid, so hi*hi
    is exact and the small remainder 2*hi*lo + lo*lo goes through a second exp."""
    hi = np.floor(a * 2.0**20 + 0.5) / 2.0**20
    lo = a - hi
    return np.exp(-hi * hi) * np.exp(-(2.0 * hi * lo + lo * lo))


def erf_erfc(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """erf(x) and erfc(x) in float64, elementwise; NaN propagates."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    erf_a = np.empty_like(a)
    erfc_a = np.empty_like(a)

    small = a < _SWITCH  # False for NaN: NaN goes down the continued fraction and stays NaN
    s = a[small]
    s2 = s * s
    term = s.copy()
    total = s.copy()
    for n in range(1, _SERIES_TERMS):
        term = term * (2.0 * s2) / (2 * n + 1)
        total = total + term
    e = (2.0 / _SQRT_PI) * np.exp(-s2) * total
    erf_a[small] = e
    erfc_a[small] = 1.0 - e

    big = np.minimum(a[~small], _ERFC_ZERO_FROM)
    f = big.copy()
    for k in range(_CF_DEPTH, 0, -1):
        f = big + (k / 2.0) / f
    c = _exp_minus_square(big) / _SQRT_PI / f
    erfc_a[~small] = c
    erf_a[~small] = 1.0 - c

    erf = np.copysign(erf_a, x)  # keeps erf(-0.0) = -0.0, like math.erf
    erfc = np.where(x < 0, 2.0 - erfc_a, erfc_a)  # erfc(-a) = 1 + erf(a) = 2 - erfc(a)
    return erf, erfc


def erf(x: np.ndarray) -> np.ndarray:
    return erf_erfc(x)[0]


def erfc(x: np.ndarray) -> np.ndarray:
    return erf_erfc(x)[1]
