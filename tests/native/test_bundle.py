"""``rlx-compile --emit c``: a bundle that builds with make alone (portable kernels, no
Python, no BLAS) and whose runner reproduces onnxruntime on .npy inputs; one-line
errors with status 1 that leave nothing behind."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from tests.tools.test_rlx_compile import DECODER, RESNET, rlx_compile


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_c_bundle_builds_and_matches_onnxruntime(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = rlx_compile(str(RESNET), "--emit", "c", "--embed-weights", "--out", str(out))
    assert r.returncode == 0, r.stderr
    bundle = out / "c"
    names = {p.name for p in bundle.iterdir()}
    assert names == {"Makefile", "main.c", "rlx_main.c", "rlx_main.h", "runtime", "weights.bin",
                     "weights.c"}  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    header = (bundle / "rlx_main.h").read_text()
    assert f"#define RLX_MAIN_ARENA_SIZE {summary['native']['arena_bytes']}\n" in header
    assert (bundle / "weights.bin").stat().st_size == summary["native"]["weights_bytes"]
    # -O0: the kernel library compiles in seconds (what is checked is the bundle, not speed)
    make = subprocess.run(["make", "-C", str(bundle), "CFLAGS=-O0", "main", "embedded"],
                          capture_output=True, text=True)  # fmt: skip
    assert make.returncode == 0, make.stderr[-2000:]
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    want = ort.InferenceSession(str(RESNET), providers=["CPUExecutionProvider"]).run(
        None, {"image": x}
    )[0]
    for exe, extra in (("main", ["-w", str(bundle / "weights.bin")]), ("main-embedded", [])):
        res = tmp_path / exe
        res.mkdir()
        run = subprocess.run([str(bundle / exe), *extra, "-o", str(res), str(tmp_path / "x.npy")],
                             capture_output=True, text=True)  # fmt: skip
        assert run.returncode == 0, run.stderr
        got = np.load(res / "logits.npy")
        assert got.shape == want.shape and got.dtype == want.dtype
        assert float(np.abs(got - want).max()) <= 1e-4 * float(np.abs(want).max())
    # A wrong input is one line and status 1.
    bad = tmp_path / "bad.npy"
    np.save(bad, x.astype(np.float64))
    run = subprocess.run([str(bundle / "main"), "-w", str(bundle / "weights.bin"), str(bad)],
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and "f32" in run.stderr


def test_emit_c_needs_param_values(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = rlx_compile(str(DECODER), "--emit", "c", "--out", str(out))
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "--params WEIGHTS.npz" in r.stderr
    assert not out.exists()


def test_embed_weights_goes_with_emit_c(tmp_path: Path) -> None:
    r = rlx_compile(str(RESNET), "--embed-weights", "--out", str(tmp_path / "o"))
    assert r.returncode == 1 and "--embed-weights is only used with --emit c" in r.stderr
