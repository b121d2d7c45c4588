"""The regression models of ``tests/data/wild`` (small exports on which the importer once
failed, made by ``tests/data/wild/make_models.py``) against onnxruntime at the sizes
``bench/wild.py`` lists for each: one symbolic import run at every size by the reference
executor, and ``rlx_compile.backend`` on the model with its dims fixed to each size (a
static compile per size: the backend's own handling of open dims comes separately)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from bench.wild import BY_NAME, SCALE_FLOOR, feeds_for, open_dims
from tests.data.wild.make_models import MODELS
from tests.frontends.test_sklearn_models import pinned

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run

DATA = Path(__file__).resolve().parents[1] / "data" / "wild"
TOLERANCE = 1e-4


def _cases(
    name: str,
) -> tuple[onnx.ModelProto, list[dict[str, np.ndarray]], list[list[np.ndarray]]]:
    model = onnx.load(str(DATA / f"{name}.onnx"))
    spec = BY_NAME[name]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = [feeds_for(model, spec, sizes, seed=i) for i, sizes in enumerate(spec.sizes)]
    return model, feeds, [sess.run(None, f) for f in feeds]


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    scale = max(float(np.max(np.abs(want))), SCALE_FLOOR) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE * scale, err_msg=what)


def test_every_model_is_small_and_has_open_dims() -> None:
    for name in MODELS:
        path = DATA / f"{name}.onnx"
        assert path.stat().st_size < 200_000, name
        assert open_dims(onnx.load(str(path))), name


@pytest.mark.parametrize("name", sorted(MODELS))
def test_one_symbolic_import_runs_at_every_size(name: str) -> None:
    model, feeds, expected = _cases(name)
    module = import_model(model)
    params = param_values(model, module)
    outputs = [o.name for o in model.graph.output]
    for f, want in zip(feeds, expected, strict=True):
        got = run(module, f, params)
        for o, w in zip(outputs, want, strict=True):
            _close(got[o], w, f"{name}: {o} at {[a.shape for a in f.values()]}")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_backend_runs_each_size(name: str) -> None:
    model, feeds, expected = _cases(name)
    for f, want in zip(feeds, expected, strict=True):
        got = backend.prepare(pinned(model, f)).run(f)
        for o, g, w in zip([o.name for o in model.graph.output], got, want, strict=True):
            _close(g, w, f"{name}: {o} at {[a.shape for a in f.values()]}")
