"""The classic-ML ops (``mir.tree_ensemble``, ``mir.svm_classifier``...) lowered to
primitives (``legalization.ml``, for targets that do not claim them) compute what the
ops compute, on random models and inputs with NaN: labels exactly, scores within float
tolerance (the lowered forms sum in another order)."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile import ModuleBuilder
from rlx_compile.interpreter import run
from rlx_compile.targets.base import CLASSIC_ML, PRIMITIVES
from tests import ml_models
from tests.fusion.helpers import apply, op_names

LOWER_ALL = "legalize{claims=" + ",".join(f'"{n}"' for n in sorted(PRIMITIVES)) + "}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(ml_models.OPS))
def test_lowering_computes_the_op(name: str, dtype: type) -> None:
    rng = np.random.default_rng(sorted(ml_models.OPS).index(name))
    with ModuleBuilder("g") as m:
        x = m.input(
            "x", [ml_models.ROWS, ml_models.FEATURES], "f32" if dtype is np.float32 else "f64"
        )
        m.output(*ml_models.OPS[name](m, x, rng))
    lowered, _ = apply(m.module, LOWER_ALL)
    assert not set(op_names(lowered)) & CLASSIC_ML
    feeds = {"x": ml_models.samples(np.dtype(dtype), rng)}
    want, got = run(m.module, feeds), run(lowered, feeds)
    for key, w in want.items():
        g = got[key]
        assert g.dtype == w.dtype and g.shape == w.shape, key
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w, err_msg=key)
        else:
            scale = float(np.nanmax(np.abs(w), initial=1.0))
            tol = 1e-5 if w.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, err_msg=key)
