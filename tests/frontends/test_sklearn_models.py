"""scikit-learn, LightGBM and XGBoost models converted with the converters' defaults
(``examples/models/make_sklearn_models.py``), run through ``rlx_compile.backend`` and
``rlx-compile`` against onnxruntime: labels exactly, probabilities (ZipMap's dicts
included) and regression outputs to 1e-4.

The models declare an open batch dim; the tests pin it to the fed rows (``--dim X:0=N``
for the CLI), the backend not yet sizing open dims from its inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import param_values
from rlx_compile.interpreter import run_arena
from rlx_compile.ir import parse_module
from rlx_compile.tools import compile as compile_tool

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models" / "sklearn"
NAMES = sorted(p.stem for p in MODELS.glob("*.onnx"))


def load(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    model = onnx.load(MODELS / f"{name}.onnx")
    with np.load(MODELS / f"{name}.npz") as data:
        feeds = {k: data[k] for k in data.files}
    return model, feeds


def pinned(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> onnx.ModelProto:
    """The model with its inputs' open dims set to the fed shapes."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for vi in out.graph.input:
        if vi.name in feeds:
            for d, n in zip(vi.type.tensor_type.shape.dim, feeds[vi.name].shape, strict=True):
                if not d.HasField("dim_value"):
                    d.dim_value = n
    return out


def reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[Any]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def assert_same(got: Any, want: Any, what: str) -> None:
    if isinstance(want, list):  # ZipMap: a list of {label: probability}
        assert isinstance(got, list) and len(got) == len(want), what
        for g, w in zip(got, want, strict=True):
            assert list(g) == list(w), what
            np.testing.assert_allclose(list(g.values()), list(w.values()), atol=1e-4, err_msg=what)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    if want.dtype.kind in "iubO":  # labels, string labels included
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=what)


def test_the_set_is_there() -> None:
    assert len(NAMES) >= 20, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_backend_matches_onnxruntime(name: str) -> None:
    model, feeds = load(name)
    want = reference(model, feeds)
    got = backend.prepare(pinned(model, feeds)).run(feeds)
    assert len(got) == len(want)
    for o, g, w in zip(model.graph.output, got, want, strict=True):
        assert_same(g, w, f"{name}: {o.name}")


@pytest.mark.parametrize("name", ["scaler_logreg", "random_forest_clf", "svc_proba", "mlp_clf"])
def test_cli_compiles_and_the_plan_matches_onnxruntime(name: str, tmp_path: Path) -> None:
    """``rlx-compile`` writes the planned module; run in its arena with the model's
    initializers it gives onnxruntime's outputs (ZipMap's as its probability tensor)."""
    model, feeds = load(name)
    (rows,) = {v.shape[0] for v in feeds.values()}
    out = tmp_path / "out"
    status = compile_tool.run([str(MODELS / f"{name}.onnx"), "--dim", f"X:0={rows}",
                               "--out", str(out)])  # fmt: skip
    assert status == 0
    lir = parse_module((out / "model.lir.mlir").read_text())
    got = run_arena(lir, feeds, param_values(model, lir))
    want = reference(model, feeds)
    for o, w in zip(model.graph.output, want, strict=True):
        if isinstance(w, list):
            w = np.array([[d[k] for k in sorted(d)] for d in w], np.float32)
            g = got[o.name][:, np.argsort(list(w_keys(model, o.name)))]
            assert_same(g, w, f"{name}: {o.name}")
        else:
            assert_same(got[o.name], w, f"{name}: {o.name}")


def w_keys(model: onnx.ModelProto, output: str) -> list[Any]:
    """The keys of the ZipMap producing ``output``, in its column order."""
    (node,) = [n for n in model.graph.node if output in n.output]
    for a in node.attribute:
        if a.name == "classlabels_int64s":
            return list(a.ints)
        if a.name == "classlabels_strings":
            return [s.decode() for s in a.strings]
    raise AssertionError(f"{output} is not a ZipMap output")
