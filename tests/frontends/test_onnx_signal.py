"""DFT and STFT against numpy's FFT in float64: padding and truncation by dft_length,
one-sided spectra, the real inverse of even and odd lengths, complex input, every axis."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend

D = TensorProto.DOUBLE


def dft_model(x_shape: list[int], axis: int, n: int | None, **attrs: object):  # type: ignore[no-untyped-def]
    inits = [numpy_helper.from_array(np.array(axis, np.int64), "axis")]
    inputs = ["x", "", "axis"]
    if n is not None:
        inits.append(numpy_helper.from_array(np.array(n, np.int64), "n"))
        inputs[1] = "n"
    node = helper.make_node("DFT", inputs, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", D, x_shape)],
        [helper.make_tensor_value_info("y", D, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def as_complex(x: np.ndarray) -> np.ndarray:
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(complex)


def as_pairs(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], -1)


@pytest.mark.parametrize(
    ("components", "axis", "n", "onesided"),
    [c for c in itertools.product([1, 2], [1, 2], [None, 5, 12], [False, True])
     if not (c[0] == 2 and c[3])],
)  # fmt: skip
def test_forward(components: int, axis: int, n: int | None, onesided: bool) -> None:
    rng = np.random.default_rng(components * 100 + axis * 10 + (n or 0))
    x = rng.standard_normal([2, 8, 7, components])
    model = dft_model(list(x.shape), axis, n, onesided=int(onesided))
    (got,) = backend.prepare(model).run({"x": x})
    want = np.fft.fft(as_complex(x), n=n, axis=axis)
    if onesided:
        want = np.take(want, range(want.shape[axis] // 2 + 1), axis=axis)
    np.testing.assert_allclose(got, as_pairs(want), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("n", "components"), list(itertools.product([None, 9, 10, 4], [1, 2])))
def test_inverse(n: int | None, components: int) -> None:
    rng = np.random.default_rng(7 + (n or 0) + components)
    x = rng.standard_normal([3, 6, components])
    model = dft_model(list(x.shape), 1, n, inverse=1)
    (got,) = backend.prepare(model).run({"x": x})
    np.testing.assert_allclose(got, as_pairs(np.fft.ifft(as_complex(x), n=n, axis=1)), atol=1e-12)
    # The real inverse of a one-sided spectrum (numpy's irfft), even and odd lengths.
    model = dft_model(list(x.shape), 1, n, inverse=1, onesided=1)
    (got,) = backend.prepare(model).run({"x": x})
    want = np.fft.irfft(as_complex(x), n=n, axis=1)[..., None]
    np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize(("step", "frame", "window", "onesided"),
                         [(4, 16, False, 1), (3, 10, True, 1), (5, 8, True, 0)])  # fmt: skip
def test_stft(step: int, frame: int, window: bool, onesided: int) -> None:
    rng = np.random.default_rng(step)
    signal = rng.standard_normal([2, 64, 1])
    win = np.hanning(frame) if window else np.ones(frame)
    inits = [numpy_helper.from_array(np.array(step, np.int64), "step"),
             numpy_helper.from_array(np.array(frame, np.int64), "frame")]  # fmt: skip
    inputs = ["signal", "step", "", "frame"]
    if window:
        inits.append(numpy_helper.from_array(win, "window"))
        inputs[2] = "window"
    node = helper.make_node("STFT", inputs, ["y"], onesided=onesided)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("signal", D, [2, 64, 1])],
        [helper.make_tensor_value_info("y", D, None)], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    (got,) = backend.prepare(model).run({"signal": signal})
    frames = 1 + (64 - frame) // step
    windows = np.stack([signal[:, f * step : f * step + frame, 0] * win for f in range(frames)], 1)
    spectrum = np.fft.rfft(windows, axis=-1) if onesided else np.fft.fft(windows, axis=-1)
    np.testing.assert_allclose(got, as_pairs(spectrum), atol=1e-12)


@pytest.mark.parametrize(("bins", "dft", "rate", "low", "high"),
                         [(8, 16, 8192, 0.0, 4096.0), (20, 512, 16000, 30.0, 7600.0)])  # fmt: skip
def test_mel_weight_matrix_against_the_reference(
    bins: int, dft: int, rate: int, low: float, high: float
) -> None:
    from onnx.reference import ReferenceEvaluator

    values = {"bins": np.array(bins, np.int64), "dft": np.array(dft, np.int64),
              "rate": np.array(rate, np.int64), "low": np.array(low, np.float32),
              "high": np.array(high, np.float32)}  # fmt: skip
    node = helper.make_node("MelWeightMatrix", list(values), ["y"])
    graph = helper.make_graph(
        [node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in values.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    (want,) = ReferenceEvaluator(model).run(None, {})
    (got,) = backend.prepare(model).run({})
    np.testing.assert_array_equal(got, want)
