"""Models with open dims through ``rlx_compile.backend``, against onnxruntime, in one
process (the dynamic-axes exports of tests/data/dynamic):

    python bench/dynamic.py [--repeat 20]

For each model:
- ``prepare+1st``: ``backend.prepare`` (import + one symbolic compile to MIR) plus the
  first ``run`` (which specializes, plans and runs the first shape), against
  ``InferenceSession`` creation plus its first run; the ratio is rlx / ort;
- ``new shape``: the first run of each further shape (specialize + plan + plan-check +
  run), median over the shapes, against a repeat of that shape;
- ``cache hit``: a repeated shape through the dynamic model against the same shape
  through a static compile of it (the model with those dims fixed), medians of
  ``--repeat`` runs each (interleaved), and their difference (target: under 1 ms; the
  two plans run the same ops, so what differs beyond noise is the look-up); ``lookup`` is
  the cost of finding the plan alone (``Compiled.planned_for``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

import rlx_compile.backend as backend

ROOT = Path(__file__).resolve().parents[1]
DYNAMIC = ROOT / "tests" / "data" / "dynamic"


def encoder_feeds(b: int, s: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(b * 100 + s)
    mask = (rng.random((b, s)) < 0.3).astype(np.float32)
    mask[:, 0] = 0
    return {"x": rng.standard_normal((b, s, 16)).astype(np.float32), "mask": mask}


def image_feeds(n: int, h: int, w: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(n * 100 + h + w)
    return {"image": rng.standard_normal((n, 3, h, w)).astype(np.float32)}


MODELS: list[tuple[str, Callable[..., dict[str, np.ndarray]], list[tuple[int, ...]]]] = [
    ("encoder_dynamic_axes", encoder_feeds, [(1, 8), (2, 16), (4, 32), (1, 64)]),
    ("encoder_dynamo", encoder_feeds, [(1, 8), (2, 16), (4, 32), (1, 64)]),
    ("cnn_dynamic_hw", image_feeds, [(1, 32, 32), (2, 24, 40), (1, 64, 48), (4, 16, 16)]),
]


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_of(n: int, fn: Callable[[], Any]) -> float:
    return statistics.median(timed(fn) for _ in range(n))


def static_model(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> onnx.ModelProto:
    """The model with every input's dims fixed to the shapes of ``feeds``."""
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    for vi in fixed.graph.input:
        if vi.name in feeds:
            for d, n in zip(vi.type.tensor_type.shape.dim, feeds[vi.name].shape, strict=True):
                d.Clear()
                d.dim_value = n
    return fixed


def bench(name: str, make: Callable[..., dict[str, np.ndarray]], shapes: list[tuple[int, ...]],
          repeat: int) -> None:  # fmt: skip
    path = DYNAMIC / f"{name}.onnx"
    model = onnx.load(str(path))
    feeds = [make(*s) for s in shapes]

    start = time.perf_counter()
    rep = backend.prepare(model)
    prepared = time.perf_counter() - start
    rep.run(feeds[0])
    rlx_first = time.perf_counter() - start
    start = time.perf_counter()
    session = ort.InferenceSession(str(path))
    session.run(None, feeds[0])
    ort_first = time.perf_counter() - start

    new_shape = statistics.median(timed(lambda f=f: rep.run(f)) for f in feeds[1:])
    repeat_run = statistics.median(timed(lambda f=f: rep.run(f)) for f in feeds[1:])

    hit_feeds = feeds[1]
    static = backend.prepare(static_model(model, hit_feeds))
    static.run(hit_feeds)
    # Interleaved, so that drift in the machine's load falls on both alike.
    pairs = [(timed(lambda: static.run(hit_feeds)), timed(lambda: rep.run(hit_feeds)))
             for _ in range(repeat)]  # fmt: skip
    t_static = statistics.median(a for a, _ in pairs)
    t_dynamic = statistics.median(b for _, b in pairs)
    compiled = rep.compiled
    assert compiled is not None
    lookup = median_of(repeat * 10, lambda: compiled.planned_for(hit_feeds))
    for f in feeds:
        for got, want in zip(rep.run(f), session.run(None, f), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

    print(
        f"{name:22s} prepare+1st {rlx_first:6.3f} s (prepare {prepared:.3f}) vs ort "
        f"{ort_first:6.3f} s = {rlx_first / ort_first:5.1f}x | new shape {new_shape * 1e3:7.1f} ms"
        f" vs repeat {repeat_run * 1e3:6.2f} ms | cache hit {t_dynamic * 1e3:6.2f} ms vs static "
        f"{t_static * 1e3:6.2f} ms: {(t_dynamic - t_static) * 1e3:+.3f} ms, lookup "
        f"{lookup * 1e6:.1f} us"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    for name, make, shapes in MODELS:
        bench(name, make, shapes, args.repeat)


if __name__ == "__main__":
    main()
