"""Convolution and pooling against naive loops over every output position and tap, and
against hand-computed PyTorch/ONNX values for the ceil-mode and padding corner cases."""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest
from interp_testlib import run1

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import TensorType

F32, F64 = np.float32, np.float64
BF16 = ml_dtypes.bfloat16


def out_len(size: int, k: int, s: int, pb: int, pe: int, d: int, ceil: bool) -> int:
    """PyTorch's pooling_output_shape_pad_lr, written out independently."""
    num = size + pb + pe - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    out = num // s + 1
    if ceil and (out - 1) * s >= size + pb:
        out -= 1
    return out


def taps(o: tuple[int, ...], kernel, strides, pads, dilations):  # type: ignore[no-untyped-def]
    """Input coordinates (possibly outside the input) read by output position ``o``."""
    for t in itertools.product(*(range(k) for k in kernel)):
        yield tuple(
            oi * s - p + ti * d
            for oi, s, p, ti, d in zip(o, strides, pads, t, dilations, strict=True)
        )


def naive_conv(x, w, strides, pads, dilations, groups):  # type: ignore[no-untyped-def]
    k = x.ndim - 2
    n, c_in = x.shape[:2]
    c_out = w.shape[0]
    cg, cog = c_in // groups, c_out // groups
    outs = [
        out_len(
            x.shape[2 + i], w.shape[2 + i], strides[i], pads[i], pads[k + i], dilations[i], False
        )
        for i in range(k)
    ]
    y = np.zeros((n, c_out, *outs))
    for b, co in itertools.product(range(n), range(c_out)):
        g = co // cog
        for o in itertools.product(*(range(v) for v in outs)):
            terms = []
            for ci in range(cg):
                for t, pos in zip(
                    itertools.product(*(range(v) for v in w.shape[2:])),
                    taps(o, w.shape[2:], strides, pads[:k], dilations),
                    strict=True,
                ):
                    if all(0 <= p < size for p, size in zip(pos, x.shape[2:], strict=True)):
                        terms.append(float(x[(b, g * cg + ci, *pos)]) * float(w[(co, ci, *t)]))
            y[(b, co, *o)] = math.fsum(terms)
    return y


CONV_CASES = [
    # (input shape, weight shape, strides, pads, dilations, groups)
    ((2, 3, 9), (4, 3, 3), [2], [1, 2], [2], 1),
    ((1, 4, 5, 6), (6, 2, 3, 2), [2, 1], [1, 0, 0, 1], [1, 2], 2),
    ((2, 3, 4, 4), (3, 1, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 3),  # depthwise
    ((1, 2, 4, 3, 5), (2, 2, 2, 1, 3), [1, 2, 2], [0, 1, 1, 1, 0, 0], [2, 1, 1], 1),  # 3-d
    ((1, 1, 3, 3), (1, 1, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1], 1),  # one output pixel
]


@pytest.mark.parametrize(("xs", "ws", "strides", "pads", "dilations", "groups"), CONV_CASES)
def test_conv_matches_loops(xs, ws, strides, pads, dilations, groups) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    x = rng.normal(size=xs)
    w = rng.normal(size=ws)
    got = run1(
        lambda a, b: [
            mir.ConvOp(a, b, strides=strides, pads=pads, dilations=dilations, groups=groups)
        ],
        x,
        w,
    )
    want = naive_conv(x, w, strides, pads, dilations, groups)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_bf16_conv_accumulates_in_f32_and_rounds_once() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 16, 6, 6)).astype(BF16)
    w = rng.normal(size=(4, 16, 3, 3)).astype(BF16)
    got = run1(lambda a, b: [mir.ConvOp(a, b, pads=[1, 1, 1, 1])], x, w)
    want = naive_conv(x.astype(F64), w.astype(F64), [1, 1], [1, 1, 1, 1], [1, 1], 1)
    step = (got.view(np.uint16) + 1).view(BF16).astype(F64) - got.astype(F64)
    assert (np.abs(got.astype(F64) - want) <= np.abs(step)).all()


# ---------------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------------


def naive_pool(x, kernel, strides, pads, dilations, ceil, kind, include_pad=False):  # type: ignore[no-untyped-def]
    k = len(kernel)
    spatial = x.shape[2:]
    outs = [
        out_len(spatial[i], kernel[i], strides[i], pads[i], pads[k + i], dilations[i], ceil)
        for i in range(k)
    ]
    y = np.zeros((*x.shape[:2], *outs))
    for b, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*(range(v) for v in outs)):
            inside, padded = [], 0
            for pos in taps(o, kernel, strides, pads[:k], dilations):
                if all(0 <= p < n for p, n in zip(pos, spatial, strict=True)):
                    inside.append(float(x[(b, c, *pos)]))
                if all(
                    -pads[i] <= p < n + pads[k + i]
                    for i, (p, n) in enumerate(zip(pos, spatial, strict=True))
                ):
                    padded += 1
            if kind == "max":
                y[(b, c, *o)] = max(inside) if inside else -math.inf
            else:
                y[(b, c, *o)] = math.fsum(inside) / (padded if include_pad else len(inside))
    return y


POOL_CASES = [
    # (input shape, kernel, strides, pads, dilations, ceil_mode)
    ((1, 2, 7), [3], [2], [1, 1], [1], False),
    ((1, 2, 7), [3], [2], [1, 1], [1], True),
    ((2, 1, 6), [2], [2], [0, 1], [1], True),  # asymmetric pads: the mir.py fix
    ((1, 1, 5, 6), [2, 3], [2, 2], [1, 0, 1, 2], [1, 1], True),
    ((1, 2, 6, 5), [2, 2], [1, 2], [1, 1, 0, 1], [2, 1], False),  # dilated
    ((1, 1, 4, 4, 4), [2, 2, 3], [2, 2, 2], [0, 1, 0, 1, 0, 1], [1, 1, 1], True),
]


@pytest.mark.parametrize(("xs", "kernel", "strides", "pads", "dilations", "ceil"), POOL_CASES)
def test_max_pool_matches_loops(xs, kernel, strides, pads, dilations, ceil) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(2).normal(size=xs).astype(F32) - 5  # all negative: pad must lose
    got = run1(
        lambda a: [
            mir.MaxPoolOp(
                a, kernel, strides=strides, pads=pads, dilations=dilations, ceil_mode=ceil
            )
        ],
        x,
    )
    want = naive_pool(x, kernel, strides, pads, dilations, ceil, "max")
    np.testing.assert_array_equal(got, want.astype(F32))


@pytest.mark.parametrize(("xs", "kernel", "strides", "pads", "dilations", "ceil"), POOL_CASES)
@pytest.mark.parametrize("include_pad", [False, True])
def test_avg_pool_matches_loops(xs, kernel, strides, pads, dilations, ceil, include_pad) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(3).normal(size=xs)
    got = run1(
        lambda a: [
            mir.AvgPoolOp(
                a,
                kernel,
                strides=strides,
                pads=pads,
                dilations=dilations,
                ceil_mode=ceil,
                count_include_pad=include_pad,
            )
        ],
        x,
    )
    want = naive_pool(x, kernel, strides, pads, dilations, ceil, "avg", include_pad)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_avg_pool_pytorch_values() -> None:
    # torch.nn.functional.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=...)
    x = np.array([[[1, 2, 3, 4, 5, 6]]], F32)

    def pool(include: bool) -> list[float]:
        op = lambda a: [  # noqa: E731
            mir.AvgPoolOp(
                a, [3], strides=[2], pads=[1, 1], ceil_mode=True, count_include_pad=include
            )
        ]
        return run1(op, x).ravel().tolist()

    # The last window covers [6, pad, beyond]: the beyond-the-pad cell never counts.
    assert pool(True) == [1.0, 3.0, 5.0, 3.0]
    assert pool(False) == [1.5, 3.0, 5.0, 6.0]


def test_max_pool_ceil_mode_pytorch_values() -> None:
    x = np.array([[[1, 2, 3, 4, 5]]], F32)
    got = run1(lambda a: [mir.MaxPoolOp(a, [2], strides=[2], ceil_mode=True)], x)
    assert got.ravel().tolist() == [2, 4, 5]
    # NaN propagates; -inf padding never wins even against -inf-like values.
    y = np.array([[[np.nan, 1, -3e38, -3e38]]], F32)
    got = run1(lambda a: [mir.MaxPoolOp(a, [2], strides=[2], pads=[1, 1])], y)
    assert np.isnan(got[0, 0, 0]) and got.ravel()[1:].tolist() == [1, F32(-3e38)]


def test_pool_ceil_mode_rule_with_asymmetric_pads() -> None:
    # Size 4, kernel 2, stride 2, pads (0, 1), ceil_mode: a third window would start at
    # 4, inside the end pad, so ONNX and PyTorch drop it: 2 outputs, not 3.
    x = mir.InputOp("x", TensorType([1, 1, 4], "f32"))
    op = mir.MaxPoolOp(x.result, [2], strides=[2], pads=[0, 1], ceil_mode=True)
    assert op.result.type == TensorType([1, 1, 2], "f32")
    got = run1(
        lambda a: [mir.MaxPoolOp(a, [2], strides=[2], pads=[0, 1], ceil_mode=True)],
        np.array([[[1, 3, 2, 0]]], F32),
    )
    assert got.ravel().tolist() == [3, 2]
