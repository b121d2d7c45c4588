"""Signal processing: DFT and STFT as matmuls with constant DFT matrices.

A length-n transform along one axis is a [rows, bins] matrix product once the axis is
last; complex values travel as separate real and imaginary tensors (ONNX packs them in
a trailing axis of size 2, a real signal has size 1). The matrices are computed at
import in float64 and rounded once to the signal's type.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    axis_of,
    converter,
)
from rlx_compile.frontends.onnx.ops.shape import select, stack


def _split_complex(ctx: NodeContext, x: SSAValue) -> tuple[SSAValue, SSAValue | None]:
    """[..., 1 or 2] -> real part, imaginary part (None for a real signal)."""
    components = type_of(x).shape[-1]
    if components not in (1, 2):
        raise Unsupported(f"the last axis holds {components} components (1 or 2)")
    real = select(ctx, x, -1, 0)
    return real, select(ctx, x, -1, 1) if components == 2 else None


def _join_complex(ctx: NodeContext, re: SSAValue, im: SSAValue | None) -> SSAValue:
    return stack(ctx, [re] if im is None else [re, im], -1)


def _matmul_const(ctx: NodeContext, x: SSAValue, m: np.ndarray) -> SSAValue:
    dtype = type_of(x).dtype
    return ctx.b.matmul(x, ctx.b.constant(m.astype(dtype.numpy), dtype, m.shape))


def dft_last_axis(
    ctx: NodeContext,
    re: SSAValue,
    im: SSAValue | None,
    n: int,
    *,
    inverse: bool,
    onesided: bool,
) -> tuple[SSAValue, SSAValue | None]:
    """The length-n DFT along the last axis (zero-padded or truncated to n):
    X_k = Σ_j z_j·e^(∓2πi·jk/n), k < n (k ≤ n/2 when onesided); the inverse divides by n.
    Inverse and onesided is the real inverse of a one-sided spectrum (numpy's irfft:
    the imaginary parts of the DC and Nyquist bins do not count); its result is real."""
    b = ctx.b
    length = type_of(re).shape[-1]
    if not isinstance(length, int):
        raise Unsupported("a symbolic transform axis")
    if inverse and onesided:
        rows = min(length, n // 2 + 1)
        k = np.arange(rows)[:, None]
        theta = 2 * np.pi * k * np.arange(n)[None, :] / n
        weight = np.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0) / n
        out = _matmul_const(ctx, b.narrow(re, -1, 0, rows), weight * np.cos(theta))
        if im is not None:
            sine = -weight * np.sin(theta)
            sine[(k[:, 0] == 0) | ((n % 2 == 0) & (k[:, 0] == n // 2))] = 0.0
            out = b.add(out, _matmul_const(ctx, b.narrow(im, -1, 0, rows), sine))
        return out, None
    rows = min(length, n)
    bins = n // 2 + 1 if onesided else n
    theta = 2 * np.pi * np.arange(rows)[:, None] * np.arange(bins)[None, :] / n
    sign = 1.0 if inverse else -1.0
    scale = 1.0 / n if inverse else 1.0
    cos, sin = np.cos(theta) * scale, sign * np.sin(theta) * scale
    if rows < length:
        re = b.narrow(re, -1, 0, rows)
        im = None if im is None else b.narrow(im, -1, 0, rows)
    # (zr + i·zi)(cos + i·sin) = zr·cos - zi·sin + i(zr·sin + zi·cos)
    out_re, out_im = _matmul_const(ctx, re, cos), _matmul_const(ctx, re, sin)
    if im is not None:
        out_re = b.sub(out_re, _matmul_const(ctx, im, sin))
        out_im = b.add(out_im, _matmul_const(ctx, im, cos))
    return out_re, out_im


@converter("DFT")
def dft(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    rank = ctx.type(0).rank
    if ctx.since >= 20:
        axis = ctx.int_operand(2, "DFT's axis") if ctx.has(2) else -2
    else:
        axis = ctx.attr("axis", 1)
    axis = axis_of(axis, rank)
    if axis == rank - 1:
        raise Unsupported("the transform axis is the complex-component axis")
    inverse, onesided = bool(ctx.attr("inverse", 0)), bool(ctx.attr("onesided", 0))
    if onesided and not inverse and ctx.shape(0)[-1] == 2:
        raise Unsupported("a one-sided transform of a complex signal")
    length = ctx.shape(0)[axis]
    if ctx.has(1):
        n = ctx.int_operand(1, "DFT's dft_length")
    elif not isinstance(length, int):
        raise Unsupported("a symbolic transform axis")
    else:
        n = 2 * (length - 1) if inverse and onesided else length
    if n < 1:
        raise Unsupported(f"dft_length {n}")
    re, im = _split_complex(ctx, x)
    perm = [d for d in range(rank - 1) if d != axis] + [axis]
    back = list(np.argsort(perm))
    re = ctx.b.transpose(re, perm)
    im = None if im is None else ctx.b.transpose(im, perm)
    out_re, out_im = dft_last_axis(ctx, re, im, n, inverse=inverse, onesided=onesided)
    out_re = ctx.b.transpose(out_re, back)
    out_im = None if out_im is None else ctx.b.transpose(out_im, back)
    return _join_complex(ctx, out_re, out_im)


@converter("STFT")
def stft(ctx: NodeContext) -> ConverterResult:
    b = ctx.b
    x = ctx.x(0)
    shape = ctx.static_shape(0)
    if len(shape) != 3:
        raise Unsupported("the signal must be [batch, length, 1 or 2]")
    step = ctx.int_operand(1, "STFT's frame_step")
    window = ctx.opt(2)
    if ctx.has(3):
        frame = ctx.int_operand(3, "STFT's frame_length")
    elif window is not None:
        frame = int(type_of(window).shape[0])
    else:
        frame = shape[1]
    onesided = bool(ctx.attr("onesided", 1))
    if onesided and shape[2] == 2:
        raise Unsupported("a one-sided transform of a complex signal")
    if step < 1 or frame < 1 or frame > shape[1]:
        raise Unsupported(f"frame_step {step} and frame_length {frame} for {shape[1]} samples")
    frames = 1 + (shape[1] - frame) // step
    # [batch, frames, frame]: every frame gathered at once along the signal axis.
    index = (np.arange(frames)[:, None] * step + np.arange(frame)[None, :]).astype(np.int64)
    re, im = _split_complex(ctx, x)
    re = b.gather(re, ctx.constant(index), 1)
    im = None if im is None else b.gather(im, ctx.constant(index), 1)
    if window is not None:
        re = b.mul(re, window)
        im = None if im is None else b.mul(im, window)
    out_re, out_im = dft_last_axis(ctx, re, im, frame, inverse=False, onesided=onesided)
    return _join_complex(ctx, out_re, out_im)
