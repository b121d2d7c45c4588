"""Control flow at import and compile time: a recurrent layer imports as one op
(``mir.lstm``, a kernel on the cpu target; ``legalize`` unrolls it up to the cap, one
``mir.loop`` beyond, for a target that does not claim it), so that preparing a model costs
the same for any sequence length.

    python bench/control_flow.py                 # LSTM prepare time and op count per length
    python bench/control_flow.py --run           # and one run of each (arena executor)
    RLX_SILERO_VAD=.../silero_vad.onnx python bench/control_flow.py   # and silero-vad

For each sequence length T of a bidirectional LSTM (batch 3, hidden 6): the time of
``rlx_compile.backend.prepare`` (import + compile + plan), the number of ops of the
imported module, and with ``--run`` the time of one run with the max |difference| from
onnxruntime. The ratio ``prepare(T) / prepare(cap + 1)`` shows the growth above the cap.
silero-vad (from the silero-vad wheel: ``pip download --no-deps silero-vad``) is prepared
at 256 samples -- one compile holding a run-time If on the sample rate -- and run at both
rates beside onnxruntime.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile.builder import UNROLL_MAX_ITERATIONS
from rlx_compile.frontends.onnx import import_model

BATCH, INPUT, HIDDEN = 3, 4, 6


def lstm(steps: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A bidirectional LSTM over ``steps`` steps with random weights, and its feeds
    (sequence lengths shorter than ``steps`` for two of the three rows)."""
    rng = np.random.default_rng(steps)
    g = 4 * HIDDEN
    inits = [
        helper.make_tensor(n, TensorProto.FLOAT, s, (rng.standard_normal(s) * 0.4).ravel())
        for n, s in (("W", [2, g, INPUT]), ("R", [2, g, HIDDEN]), ("B", [2, 2 * g]))
    ]
    node = helper.make_node(
        "LSTM", ["X", "W", "R", "B", "lens"], ["Y", "Y_h", "Y_c"],
        hidden_size=HIDDEN, direction="bidirectional",
    )  # fmt: skip
    graph = helper.make_graph(
        [node], "lstm",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [steps, BATCH, INPUT]),
         helper.make_tensor_value_info("lens", TensorProto.INT32, [BATCH])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("Y", "Y_h", "Y_c")],
        inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    feeds = {
        "X": rng.standard_normal((steps, BATCH, INPUT)).astype(np.float32),
        "lens": np.array([steps, max(1, steps // 2), max(1, steps - 3)], np.int32),
    }
    return model, feeds


def lstm_row(steps: int, run: bool) -> tuple[float, int, float | None, float | None]:
    model, feeds = lstm(steps)
    start = time.perf_counter()
    rep = backend.prepare(model)
    prepared = time.perf_counter() - start
    ops = sum(1 for _ in import_model(model).walk())
    if not run:
        return prepared, ops, None, None
    start = time.perf_counter()
    got = rep.run(feeds)
    seconds = time.perf_counter() - start
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    err = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want, strict=True))
    return prepared, ops, seconds, err


def silero(path: str) -> None:
    model = onnx.load(path)
    for value in model.graph.input:
        dims = value.type.tensor_type.shape.dim
        if value.name == "input":
            dims[0].dim_value, dims[1].dim_value = 1, 256
        if value.name == "state":
            dims[1].dim_value = 1
    start = time.perf_counter()
    rep = backend.prepare(model)
    print(f"\nsilero-vad at 256 samples: prepare {time.perf_counter() - start:.2f} s")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for sr in (16000, 8000):
        feeds = {
            "input": (rng.standard_normal((1, 256)) * 0.1).astype(np.float32),
            "state": np.zeros((2, 1, 128), np.float32),
            "sr": np.array(sr, np.int64),
        }
        start = time.perf_counter()
        got = rep.run(feeds)
        ours = time.perf_counter() - start
        start = time.perf_counter()
        want = session.run(None, feeds)
        theirs = time.perf_counter() - start
        err = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want, strict=True))
        print(f"  sr {sr}: run {ours * 1e3:.1f} ms (onnxruntime {theirs * 1e3:.1f} ms), "
              f"max |diff| {err:.1e}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="store_true", help="also run each model once")
    ap.add_argument(
        "--lengths", type=int, nargs="*",
        default=[16, UNROLL_MAX_ITERATIONS, UNROLL_MAX_ITERATIONS + 1, 1000, 10000],
    )  # fmt: skip
    args = ap.parse_args()
    backend.prepare(lstm(2)[0])  # the first prepare loads the compiler: keep it out of the rows
    print(f"bidirectional LSTM, unroll cap {UNROLL_MAX_ITERATIONS} steps")
    print(f"{'T':>7} {'prepare s':>10} {'ratio':>6} {'ops':>6} {'run s':>8} {'max|diff|':>10}")
    base: float | None = None
    for steps in args.lengths:
        prepared, ops, seconds, err = lstm_row(steps, args.run)
        if steps == UNROLL_MAX_ITERATIONS + 1:
            base = prepared
        ratio = f"{prepared / base:6.2f}" if base else f"{'':>6}"
        ran = f"{seconds:8.2f} {err:10.1e}" if seconds is not None else ""
        print(f"{steps:>7} {prepared:10.2f} {ratio} {ops:>6} {ran}")
    path = os.environ.get("RLX_SILERO_VAD")
    if path:
        silero(path)


if __name__ == "__main__":
    main()
