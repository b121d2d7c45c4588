"""Models written at opsets 7-12 (``tests/data/old_opsets``, made by its
``make_old_opset_models.py``) through ``rlx_compile.backend``:

- onnx's node tests run backwards through its version converter to each older opset
  where one of their ops means something else (kept when onnxruntime, running them,
  still gives the test's outputs): ours must give those outputs, at the test's
  tolerances;
- small networks (CNN with upsampling, LSTM/GRU, hand-written attention) exported by
  torch's TorchScript exporter at opsets 7-12: ours against onnxruntime.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx.backend.test.runner import Runner

import rlx_compile.backend as backend

DATA = Path(__file__).resolve().parent.parent / "data" / "old_opsets"
NODE = sorted(p.stem for p in (DATA / "node").glob("*.onnx"))
TORCH = sorted(p.stem for p in (DATA / "torch").glob("*.onnx"))


def test_the_material_is_there() -> None:
    assert len(NODE) >= 80
    assert {int(s.rsplit("@", 1)[1]) for s in NODE} >= {10, 11, 12}
    assert {int(s.rsplit("opset", 1)[1]) for s in TORCH} == set(range(7, 13))


@pytest.mark.parametrize("stem", NODE)
def test_node_tests_at_old_opsets(stem: str) -> None:
    model = onnx.load(str(DATA / "node" / f"{stem}.onnx"))
    data = np.load(DATA / "node" / f"{stem}.npz")
    rtol, atol = float(data["rtol"]), float(data["atol"])
    rep = backend.prepare(model)
    sets = sorted({k.split("/")[0] for k in data.files if "/" in k}, key=int)
    for k in sets:
        feeds = {n.split("/", 2)[2]: data[n] for n in data.files if n.startswith(f"{k}/in/")}
        expected = [data[f"{k}/out/{j}"] for j in range(len(model.graph.output))]
        got = rep.run(feeds)
        Runner.assert_similar_outputs(expected, list(got), rtol=rtol, atol=atol)


def session_feeds(
    session: ort.InferenceSession, seed: int = 0, vocab: int = 20
) -> dict[str, np.ndarray]:
    """Random inputs of a session of static input shapes: token ids below ``vocab`` for
    the int64 inputs, standard normal floats for the others."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in session.get_inputs():
        if i.type == "tensor(int64)":
            feeds[i.name] = rng.integers(0, vocab, i.shape).astype(np.int64)
        else:
            feeds[i.name] = rng.standard_normal(i.shape).astype(np.float32)
    return feeds


@pytest.mark.parametrize("stem", TORCH)
def test_torch_exports_at_old_opsets(stem: str) -> None:
    model = onnx.load(str(DATA / "torch" / f"{stem}.onnx"))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = session_feeds(session)
    expected = session.run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
