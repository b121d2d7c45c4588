"""Resize, GridSample and RoiAlign.

Resize: separable interpolation, one axis at a time.

Along one axis every output element is a fixed combination of input elements, so the
axis becomes a constant matrix computed at import (the ONNX coordinate transforms and
interpolation coefficients): a gather for nearest neighbours (exact, any element type),
a matmul for linear and cubic interpolation; tf_crop_and_resize sets the output
positions outside the crop box to the extrapolation value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import cast

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.dim_expr import DimExpr, floordiv
from rlx_compile.dialects.types import Dim, DType, row_major_strides
from rlx_compile.folding import FoldingBuilder
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    NotStatic,
    Unsupported,
    axis_of,
    converter,
    numel,
)
from rlx_compile.frontends.onnx.ops.shape import iota, plane_offsets

Coeffs = Callable[[float, float], np.ndarray]

_COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)


def _nearest(mode: str) -> Coeffs:
    def coeffs(ratio: float, scale: float) -> np.ndarray:
        if float(ratio).is_integer():
            return np.array([0.0, 1.0])
        up = {
            "round_prefer_floor": ratio > 0.5,
            "round_prefer_ceil": ratio >= 0.5,
            "floor": False,
            "ceil": True,
        }[mode]
        return np.array([0.0, 1.0]) if up else np.array([1.0, 0.0])

    return coeffs


def _linear(antialias: bool) -> Coeffs:
    def coeffs(ratio: float, scale: float) -> np.ndarray:
        if not antialias:
            return np.array([1 - ratio, ratio])
        scale = min(scale, 1.0)
        start = int(np.floor(-1 / scale) + 1)
        args = (np.arange(start, 2 - start) - ratio) * scale
        c = np.clip(1 - np.abs(args), 0, 1)
        return c / c.sum()

    return coeffs


def _cubic(a: float, antialias: bool) -> Coeffs:
    def kernel(x: float) -> float:
        x = abs(x)
        if x <= 1:
            return (a + 2) * x**3 - (a + 3) * x**2 + 1
        if x < 2:
            return a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a
        return 0.0

    def coeffs(ratio: float, scale: float) -> np.ndarray:
        if not antialias:
            return np.array(
                [kernel(ratio + 1), kernel(ratio), kernel(1 - ratio), kernel(2 - ratio)]
            )
        s = min(scale, 1.0)
        start = int(np.floor(-2 / s) + 1)
        c = np.array([kernel(s * (i - ratio)) for i in range(start, 2 - start)])
        return c / c.sum()

    return coeffs


def _source_coords(
    mode: str, out_len: int, in_len: int, scale: float, roi: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Input coordinate of every output position; for tf_crop_and_resize also which
    positions fall outside the input. In float32, as onnxruntime computes them: a
    nearest tap is a floor or a rounding of the coordinate, and 11 / 3.6666667 (a scale
    of 33 / 9) is 3 in float32 but 2.99999994 in float64."""
    f32 = np.float32
    y = np.arange(out_len, dtype=f32)
    scale32 = f32(scale)
    scaled_len = scale32 * f32(in_len)
    in_len32 = f32(in_len)
    outside = None
    if mode == "align_corners":
        x = np.zeros(out_len, f32) if scaled_len == 1 else y * (in_len32 - 1) / (scaled_len - 1)
    elif mode == "asymmetric":
        x = y / scale32
    elif mode == "tf_crop_and_resize":
        assert roi is not None
        lo, hi = roi
        if scaled_len == 1:
            x = np.full(out_len, (hi - lo) * (in_len32 - 1) / 2)
        else:
            x = y * (hi - lo) * (in_len32 - 1) / (scaled_len - 1)
        x = x + lo * (in_len32 - 1)
        outside = (x < 0) | (x > in_len32 - 1)
    elif mode == "pytorch_half_pixel":
        x = np.full(out_len, f32(-0.5)) if scaled_len == 1 else (y + f32(0.5)) / scale32 - f32(0.5)
    elif mode == "half_pixel":
        x = (y + f32(0.5)) / scale32 - f32(0.5)
    else:  # half_pixel_symmetric
        offset = in_len32 / f32(2) * (f32(1) - f32(out_len) / scaled_len)
        x = offset + (y + f32(0.5)) / scale32 - f32(0.5)
    return x.astype(np.float64), outside


def axis_matrix(
    in_len: int,
    out_len: int,
    scale: float,
    coeffs: Coeffs,
    mode: str,
    roi: tuple[float, float] | None,
    exclude_outside: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    """[out_len, in_len] weights of one axis (edge-clamped neighbours), and the mask of
    extrapolated output positions (tf_crop_and_resize)."""
    x, outside = _source_coords(mode, out_len, in_len, scale, roi)
    weights = np.zeros((out_len, in_len))
    if exclude_outside:
        for o in range(out_len):
            c, idx = _taps(float(x[o]), scale, coeffs)
            c = np.where((idx < 0) | (idx >= in_len), 0.0, c)
            total = c.sum()
            c = c / (total if total else 1.0)
            np.add.at(weights[o], np.clip(idx, 0, in_len - 1), c)
        return weights, outside
    # Every row at once, as the rows above compute them one by one (``_row_taps``), then
    # one unbuffered scatter-add, which adds in row order as the per-row ones do.
    c, idx = _row_taps(x, scale, coeffs)
    np.add.at(weights, (np.arange(out_len)[:, None], np.clip(idx, 0, in_len - 1)), c)
    return weights, outside


def nearest_indices(
    in_len: int,
    out_len: int,
    scale: float,
    coeffs: Coeffs,
    mode: str,
    roi: tuple[float, float] | None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The input position each output position takes along one axis (``argmax`` of the
    rows of ``axis_matrix``, without ``exclude_outside``), and the mask of extrapolated
    output positions, for ``_nearest``'s coefficients: each row's one 1 is at the
    clamped tap it weighs (clamping may put its 0 there too), zeros elsewhere -- so no
    matrix is built. Both lengths at least 1."""
    x, outside = _source_coords(mode, out_len, in_len, scale, roi)
    c, idx = _row_taps(x, scale, coeffs)
    taken = idx[np.arange(out_len), np.argmax(c, axis=1)]
    return np.minimum(np.maximum(taken, 0), in_len - 1), outside  # np.clip's, in 1/4 the time


def _row_taps(x: np.ndarray, scale: float, coeffs: Coeffs) -> tuple[np.ndarray, np.ndarray]:
    """``_taps`` of every input coordinate in ``x`` at once: the coefficients (a row per
    coordinate, those of each distinct fraction computed once: a scale's fractions
    repeat) and the input positions they weigh, before clamping."""
    base = np.floor(x)
    ratios = np.where(x == base, 1.0, x - base).tolist()
    known: dict[float, np.ndarray] = {}
    for r in ratios:
        if r not in known:
            known[r] = np.asarray(coeffs(r, scale), dtype=np.float64)
    c = np.array([known[r] for r in ratios]) if ratios else np.zeros((0, 0))
    n = c.shape[1]
    pad = math.ceil(n / 2)
    xp = x + pad
    p = np.floor(xp)
    frac = xp - p
    if n % 2 == 0:
        offset = np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    else:
        offset = -((n - 1) // 2) + np.where(frac <= 0.5, 0, 1)
    idx = (p.astype(np.int64) + offset - pad)[:, None] + np.arange(n)
    return c, idx


def _taps(x: float, scale: float, coeffs: Coeffs) -> tuple[np.ndarray, np.ndarray]:
    """The coefficients of the output position at input coordinate ``x`` and the input
    positions they weigh (before clamping to the edges)."""
    base = math.floor(x)
    ratio = 1.0 if x == base else x - base
    c = np.asarray(coeffs(float(ratio), scale), dtype=np.float64)
    n = len(c)
    pad = math.ceil(n / 2)
    xp = x + pad
    p = math.floor(xp)
    frac = xp - p
    if n % 2 == 0:
        offset = -(n // 2) if frac == 0 else -(n // 2) + 1
    else:
        offset = -((n - 1) // 2) + (0 if frac <= 0.5 else 1)
    return c, p + offset + np.arange(n) - pad


def _apply_axis(
    ctx: NodeContext,
    x: SSAValue,
    axis: int,
    weights: np.ndarray,
    outside: np.ndarray | None,
    nearest: bool,
    extrapolation: float,
) -> SSAValue:
    b = ctx.b
    rank = type_of(x).rank
    if nearest:
        y = b.gather(x, ctx.constant(np.argmax(weights, axis=1).astype(np.int64)), axis)
    elif axis == rank - 2:
        # The weights [out, in] from the left: y[..., o, j] = Σ_i w[o, i] · x[..., i, j].
        y = b.matmul(ctx.constant(np.ascontiguousarray(weights).astype(type_of(x).dtype.numpy)), x)
    else:
        # Move the axis last, multiply by the weights, move it back.
        perm = [i for i in range(rank) if i != axis] + [axis]
        inverse = [perm.index(i) for i in range(rank)]
        moved = b.transpose(x, perm) if axis != rank - 1 else x
        w = ctx.constant(np.ascontiguousarray(weights.T).astype(type_of(x).dtype.numpy))
        y = b.matmul(moved, w)
        if axis != rank - 1:
            y = b.transpose(y, inverse)
    if outside is not None and outside.any():
        shape = [len(outside) if i == axis else 1 for i in range(rank)]
        y = b.where(ctx.constant(outside.reshape(shape)), ctx.const_like(extrapolation, y), y)
    return y


def _nearest_index(b: FoldingBuilder, x: SSAValue, mode: str) -> SSAValue:
    """The nearest input position to coordinate ``x`` under ``nearest_mode`` (a whole
    coordinate is its own position), as a float."""
    f = b.unary(mir.FloorOp, x)
    r = b.sub(x, f)
    if mode == "floor":
        return f
    predicate = {"round_prefer_floor": "gt", "round_prefer_ceil": "ge", "ceil": "gt"}[mode]
    threshold = 0.0 if mode == "ceil" else 0.5
    return b.where(b.compare(predicate, r, threshold), b.add(f, 1.0), f)


def _symbolic_axis(
    ctx: NodeContext,
    x: SSAValue,
    axis: int,
    out_len: Dim,
    scale: float | SSAValue | None,
    mode: str,
    coord: str,
    nearest_mode: str,
    cubic_a: float,
    exclude_outside: bool,
) -> SSAValue:
    """One axis of Resize whose input or output length is symbolic: the coordinate
    transform and the taps are IR over the lengths as data (in float32, as the static
    path and onnxruntime compute coordinates), each tap one gather along the axis.
    ``scale`` None: output / input length (sizes given); a value: computed at run time."""
    b = ctx.b
    ft = DType.F32
    in_len = type_of(x).shape[axis]
    rank = type_of(x).rank
    n_in = ctx.dim(in_len, ft)
    if scale is None:
        s = b.div(ctx.dim(out_len, ft), n_in)
    elif isinstance(scale, SSAValue):
        s = b.cast(scale, ft) if type_of(scale).dtype is not ft else scale
    else:
        s = ctx.constant(np.float32(scale))
    y = b.cast(iota(ctx, out_len, DType.I64), ft)
    if coord == "align_corners":
        scaled = b.mul(s, n_in)
        ratio = b.div(b.sub(n_in, 1.0), b.maximum(b.sub(scaled, 1.0), 1e-300))
        pos = b.where(b.compare("eq", scaled, 1.0), b.mul(y, 0.0), b.mul(y, ratio))
    elif coord == "asymmetric":
        pos = b.div(y, s)
    elif coord in ("half_pixel", "pytorch_half_pixel"):
        pos = b.sub(b.div(b.add(y, 0.5), s), 0.5)
        if coord == "pytorch_half_pixel":
            single = b.compare("eq", b.mul(s, n_in), 1.0)
            pos = b.where(single, b.sub(b.mul(y, 0.0), 0.5), pos)
    elif coord == "half_pixel_symmetric":
        offset = b.mul(b.div(n_in, 2.0), b.sub(1.0, b.div(ctx.dim(out_len, ft), b.mul(s, n_in))))
        pos = b.add(offset, b.sub(b.div(b.add(y, 0.5), s), 0.5))
    else:
        raise Unsupported(f"coordinate_transformation_mode {coord} on a symbolic axis")
    last = b.sub(n_in, 1.0)
    dtype = type_of(x).dtype

    def tap(position: SSAValue) -> SSAValue:
        clamped = b.minimum(b.maximum(position, 0.0), last)
        return b.gather(x, b.cast(clamped, DType.I64), axis)

    def along(v: SSAValue) -> SSAValue:  # [out] -> broadcastable along the axis
        return b.reshape(b.cast(v, dtype), [out_len if i == axis else 1 for i in range(rank)])

    if mode == "nearest":
        return tap(_nearest_index(b, pos, nearest_mode))
    first = b.unary(mir.FloorOp, pos)
    t = b.sub(pos, first)
    if mode == "linear":
        offsets = [0.0, 1.0]
        weights = [b.sub(1.0, t), t]
    else:
        offsets = [-1.0, 0.0, 1.0, 2.0]
        weights = _cubic_weights(b, t, cubic_a)
    positions = [b.add(first, o) for o in offsets]
    if exclude_outside:
        inside = [b.cast(b.binary(mir.AndOp, b.compare("ge", p, 0.0), b.compare("le", p, last)),
                         ft) for p in positions]  # fmt: skip
        weights = [b.mul(w, m) for w, m in zip(weights, inside, strict=True)]
        total = weights[0]
        for w in weights[1:]:
            total = b.add(total, w)
        weights = [b.div(w, b.where(b.compare("eq", total, 0.0), 1.0, total)) for w in weights]
    out: SSAValue | None = None
    for p, w in zip(positions, weights, strict=True):
        term = b.mul(tap(p), along(w))
        out = term if out is None else b.add(out, term)
    assert out is not None
    return out


def _scaled_len(length: Dim, scale: float) -> Dim:
    """floor(length · scale): a number as onnxruntime computes it, the float32 product
    (5 · 1.4f is 7, not 6.99999998); a symbolic length exactly, the float scale as the
    binary fraction it is (they differ only where the product is within a float32 step
    of a whole number)."""
    if isinstance(length, int):
        return int(np.float32(scale) * np.float32(length))
    num, den = Fraction(scale).as_integer_ratio()
    return floordiv(length * num, den)


@converter("Resize")
def resize(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    shape = type_of(x).shape
    rank = len(shape)
    mode = ctx.check_attr("mode", ("nearest", "linear", "cubic"), "nearest")
    coord = ctx.check_attr("coordinate_transformation_mode", _COORDINATE_MODES, "half_pixel")
    nearest_mode = ctx.check_attr(
        "nearest_mode", ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"),
        "round_prefer_floor",
    )  # fmt: skip
    a = ctx.attr("cubic_coeff_a", -0.75)
    exclude_outside = bool(ctx.attr("exclude_outside", 0))
    extrapolation = ctx.attr("extrapolation_value", 0.0)
    antialias = bool(ctx.attr("antialias", 0))
    policy = ctx.check_attr(
        "keep_aspect_ratio_policy", ("stretch", "not_larger", "not_smaller"), "stretch"
    )
    axes = [axis_of(v, rank) for v in ctx.attr("axes", list(range(rank)))]
    roi = ctx.opt_const(1, "Resize's roi")
    sizes = ctx.opt_const(3, "Resize's sizes")
    try:
        scales = ctx.opt_const(2, "Resize's scales")
        ratios = None
    except NotStatic:
        # scales = skip / map (torch's interpolate to a size at opset 10): the output
        # length is exact, the coordinates use the scale as computed at run time.
        given = sizes is not None and sizes.size
        ratios = None if given else ctx.size_ratios(2)
        if ratios is None:
            raise
        scales = None
    if mode == "nearest" and antialias:
        raise Unsupported("antialias with mode nearest")
    if mode != "nearest" and not type_of(x).dtype.is_float:
        raise Unsupported(f"{mode} interpolation of {type_of(x).dtype.value}")

    # scale_of[axis] None: output / input length, known at run time only; a value: the
    # scale as the model computes it at run time.
    scale_of: list[float | SSAValue | None] = [1.0] * rank
    out_len: list[Dim] = list(shape)
    if sizes is not None and sizes.size:
        for i, a_ in enumerate(axes):
            size = sizes.reshape(-1)[i]
            size = size if isinstance(size, DimExpr) else int(size)
            dim = shape[a_]
            static = isinstance(size, int) and isinstance(dim, int)
            scale_of[a_] = size / dim if static else None  # type: ignore[operator]
            out_len[a_] = size
        if policy != "stretch":
            if any(scale_of[a_] is None for a_ in axes):
                raise Unsupported(f"keep_aspect_ratio_policy={policy} on symbolic dims")
            pick = min if policy == "not_larger" else max
            s = pick(cast(float, scale_of[a_]) for a_ in axes)
            for a_ in axes:
                scale_of[a_] = s
                out_len[a_] = int(s * cast(int, shape[a_]) + 0.5)
    elif ratios is not None:
        run_scales = ctx.x(2)
        for i, a_ in enumerate(axes):
            num, den = (r.reshape(-1)[i] for r in ratios)
            out_len[a_] = floordiv(shape[a_] * num, den)
            if num != den:
                scale_of[a_] = ctx.b.reshape(ctx.b.narrow(run_scales, 0, i, 1), [])
    elif scales is not None and scales.size:
        for i, a_ in enumerate(axes):
            factor = scale_of[a_] = float(scales.reshape(-1)[i])
            out_len[a_] = _scaled_len(shape[a_], factor)
            if isinstance(shape[a_], int) and out_len[a_] != int(Fraction(factor) * shape[a_]):
                ctx.distrust_inferred_shape()
    else:
        raise Unsupported("neither scales nor sizes is given")
    box: list[tuple[float, float] | None] = [None] * rank
    if coord == "tf_crop_and_resize":
        if roi is None or not roi.size:
            raise Unsupported("tf_crop_and_resize without roi")
        n = len(axes)
        for i, a_ in enumerate(axes):
            box[a_] = (float(roi[i]), float(roi[n + i]))

    coeffs = {
        "nearest": lambda: _nearest(nearest_mode),
        "linear": lambda: _linear(antialias),
        "cubic": lambda: _cubic(a, antialias),
    }[mode]()
    y = x
    # Nearest: the static axes' index vectors, gathered together as one op (one gather
    # along a single axis), then the positions outside a crop box set per axis.
    taps: list[tuple[int, np.ndarray, np.ndarray | None]] = []
    for axis in range(rank):
        lo_hi = box[axis]
        scale = scale_of[axis]
        if (
            (scale is None or (isinstance(scale, float) and math.isclose(scale, 1.0)))
            and out_len[axis] == shape[axis]
            and (lo_hi is None or (math.isclose(lo_hi[0], 0) and math.isclose(lo_hi[1], 1)))
        ):
            continue
        in_n, out_n = shape[axis], out_len[axis]
        if isinstance(in_n, int) and isinstance(out_n, int) and isinstance(scale, float):
            if mode == "nearest" and not exclude_outside and in_n and out_n:
                index, outside = nearest_indices(in_n, out_n, scale, coeffs, coord, lo_hi)
                taps.append((axis, index, outside))
                continue
            weights, outside = axis_matrix(
                in_n, out_n, scale, coeffs, coord, lo_hi, exclude_outside
            )
            if mode == "nearest":
                taps.append((axis, np.argmax(weights, axis=1).astype(np.int64), outside))
                continue
            y = _apply_axis(ctx, y, axis, weights, outside, mode == "nearest", extrapolation)
            continue
        if antialias:
            raise Unsupported("antialias on a symbolic axis: size its dims at compile time")
        y = _symbolic_axis(
            ctx, y, axis, out_n, scale, mode, coord, nearest_mode, a, exclude_outside
        )
    return _nearest_taps(ctx, y, taps, extrapolation) if taps else y


def _nearest_taps(
    ctx: NodeContext,
    x: SSAValue,
    taps: list[tuple[int, np.ndarray, np.ndarray | None]],
    extrapolation: float,
) -> SSAValue:
    """The nearest taps of the static axes, each (axis, its input positions, which fall
    outside a crop box): one ``mir.gather_axes`` (a gather for one axis), then the
    extrapolation value where outside. Gathers along distinct axes commute, and so do
    the masks: bit for bit the per-axis chain."""
    b = ctx.b
    rank = type_of(x).rank
    indices = [ctx.constant(index) for _, index, _ in taps]
    axes = [axis for axis, _, _ in taps]
    y = b.gather(x, indices[0], axes[0]) if len(taps) == 1 else b.gather_axes(x, indices, axes)
    for axis, _, outside in taps:
        if outside is not None and outside.any():
            shape = [len(outside) if i == axis else 1 for i in range(rank)]
            y = b.where(ctx.constant(outside.reshape(shape)), ctx.const_like(extrapolation, y), y)
    return y


# ---------------------------------------------------------------------------------
# GridSample: the sampling positions are data (the grid), so the coordinate
# arithmetic is IR; every interpolation tap is one gather from the flattened input.
# The semantics are ONNX's reference: border/reflection padding moves the coordinate
# first, then each tap is padded again. (onnxruntime, like PyTorch, pads only the
# taps in cubic mode, which differs with border padding.)
# ---------------------------------------------------------------------------------

_GRID_MODES = {"linear": "linear", "bilinear": "linear", "nearest": "nearest",
               "cubic": "cubic", "bicubic": "cubic"}  # fmt: skip
_CUBIC_A = -0.75  # GridSample's cubic kernel (Keys), fixed by the ONNX definition


def _reflect(b: FoldingBuilder, v: SSAValue, lo: float, hi: float) -> SSAValue:
    """Reflect v by the near border until it lies in [lo, hi] (values inside stay)."""
    span = hi - lo
    if span == 0:
        return b.mul(v, 0.0)  # a single position: everything reflects onto it
    below, above = b.compare("lt", v, lo), b.compare("gt", v, hi)
    dx = b.where(below, b.sub(lo, v), b.sub(v, hi))
    k = b.unary(mir.FloorOp, b.div(dx, span))
    r = b.sub(dx, b.mul(k, span))
    odd = b.compare("eq", b.sub(k, b.mul(b.unary(mir.FloorOp, b.mul(k, 0.5)), 2.0)), 1.0)
    from_low, from_high = b.add(r, lo), b.sub(hi, r)
    reflected = b.where(below, b.where(odd, from_high, from_low), b.where(odd, from_low, from_high))
    return b.where(b.binary(mir.OrOp, below, above), reflected, v)


def _cubic_weights(b: FoldingBuilder, t: SSAValue, a: float = _CUBIC_A) -> list[SSAValue]:
    """Keys' cubic weights of the taps at distances t+1, t, 1-t, 2-t (0 <= t < 1)."""

    def outer(x: SSAValue) -> SSAValue:  # 1 < |x| < 2
        return b.sub(b.mul(b.add(b.mul(b.sub(b.mul(x, a), 5 * a), x), 8 * a), x), 4 * a)

    def inner(x: SSAValue) -> SSAValue:  # |x| <= 1
        return b.add(b.mul(b.mul(b.sub(b.mul(x, a + 2), a + 3), x), x), 1.0)

    one_minus = b.sub(1.0, t)
    return [outer(b.add(t, 1.0)), inner(t), inner(one_minus), outer(b.add(one_minus, 1.0))]


Tap = tuple[SSAValue, SSAValue | None]
"""One interpolation tap along one axis: its position (a whole number, as a float) and
its weight (None: 1)."""


def linear_taps(b: FoldingBuilder, v: SSAValue) -> list[Tap]:
    """The two taps of linear interpolation at position v: floor(v) and floor(v) + 1."""
    first = b.unary(mir.FloorOp, v)
    t = b.sub(v, first)
    return [(first, b.sub(1.0, t)), (b.add(first, 1.0), t)]


def tap_combinations(
    b: FoldingBuilder, taps: list[list[Tap]], sizes: Sequence[int], zeros_outside: bool
) -> Iterator[tuple[SSAValue, SSAValue | None]]:
    """Every combination of one tap per axis, as (the row-major flat index over ``sizes``
    in i64, the product of the weights). Positions are clamped into range for the
    gather; with ``zeros_outside`` a tap outside the axis also weighs 0."""
    strides = [int(s) for s in row_major_strides(sizes)]  # of static sizes: numbers
    per_axis: list[list[Tap]] = []
    for d, axis_taps in enumerate(taps):
        last = float(sizes[d] - 1)
        resolved = []
        for pos, w in axis_taps:
            if zeros_outside:
                inside = b.binary(mir.AndOp, b.compare("ge", pos, 0.0), b.compare("le", pos, last))
                mask = b.cast(inside, type_of(pos).dtype)
                w = mask if w is None else b.mul(w, mask)
            # Truncation toward zero, then the clamp that keeps the gather in range.
            i = b.cast(b.minimum(b.maximum(pos, 0.0), last), DType.I64)
            resolved.append((b.mul(i, strides[d]) if strides[d] != 1 else i, w))
        per_axis.append(resolved)
    for combo in itertools.product(*per_axis):
        index, weight = combo[0]
        for term, w in combo[1:]:
            index = b.add(index, term)
            if w is not None:
                weight = w if weight is None else b.mul(weight, w)
        yield index, weight


@converter("GridSample")
def grid_sample(ctx: NodeContext) -> ConverterResult:
    b = ctx.b
    x, grid = ctx.x(0), ctx.x(1)
    xshape, gshape = ctx.static_shape(0), ctx.static_shape(1)
    mode = _GRID_MODES.get(ctx.attr("mode", "linear" if ctx.since >= 20 else "bilinear"))
    if mode is None:
        raise Unsupported(f"mode {ctx.attr('mode')!r}")
    padding = ctx.check_attr("padding_mode", ("zeros", "border", "reflection"), "zeros")
    align = bool(ctx.attr("align_corners", 0))
    n, c, spatial = xshape[0], xshape[1], xshape[2:]
    if len(gshape) != len(xshape) or gshape[0] != n or gshape[-1] != len(spatial):
        raise Unsupported(f"grid of shape {list(gshape)} for an input of shape {list(xshape)}")
    if not type_of(x).dtype.is_float or not type_of(grid).dtype.is_float:
        raise Unsupported("GridSample of non-float tensors")
    out, dtype = list(gshape[1:-1]), type_of(x).dtype
    points = numel(out)
    taps: list[list[Tap]] = []  # per spatial axis
    bounds: list[tuple[float, float]] = []
    for d, length in enumerate(spatial):
        # The grid's last axis lists coordinates innermost axis first (x, y, z).
        g = b.reshape(b.narrow(grid, -1, len(spatial) - 1 - d, 1), [n, 1, points])
        if align:
            v = b.mul(b.div(b.add(g, 1.0), 2.0), float(length - 1))
        else:
            v = b.div(b.sub(b.mul(b.add(g, 1.0), float(length)), 1.0), 2.0)
        if mode == "nearest":
            v = b.unary(mir.RoundOp, v)
        lo, hi = (0.0, length - 1.0) if align else (-0.5, length - 0.5)
        if padding == "border":
            outside = b.binary(mir.OrOp, b.compare("lt", v, lo), b.compare("gt", v, hi))
            v = b.where(outside, b.minimum(b.maximum(v, 0.0), float(length - 1)), v)
        elif padding == "reflection":
            v = _reflect(b, v, lo, hi)
        bounds.append((lo, hi))
        if mode == "nearest":
            taps.append([(v, None)])
        elif mode == "linear":
            taps.append(linear_taps(b, v))
        else:
            first = b.unary(mir.FloorOp, v)
            weights = _cubic_weights(b, b.sub(v, first))
            taps.append([(b.add(first, float(k - 1)), w) for k, w in enumerate(weights)])
    if padding == "reflection":  # a tap past the border reads its mirror image
        taps = [[(_reflect(b, pos, *bounds[d]), w) for pos, w in axis_taps]
                for d, axis_taps in enumerate(taps)]  # fmt: skip
    volume = numel(spatial)
    flat_x = b.reshape(x, [n * c * volume])
    offsets = plane_offsets(ctx, n, c, volume)
    total: SSAValue | None = None
    for index, weight in tap_combinations(b, taps, spatial, padding == "zeros"):
        values = b.gather(flat_x, b.add(index, offsets), 0)  # [n, c, points]
        if weight is not None:
            values = b.mul(
                values, b.cast(weight, dtype) if type_of(weight).dtype != dtype else weight
            )
        total = values if total is None else b.add(total, values)
    assert total is not None
    return b.reshape(total, [n, c, *out])


@converter("RoiAlign")
def roi_align(ctx: NodeContext) -> ConverterResult:
    """RoiAlign with ONNX's reference semantics: per output bin a sampling_ratio² grid of
    bilinear samples (a sample beyond one pixel outside contributes nothing; one past the
    last row or column reads the edge), averaged -- or, in max mode, the largest
    weighted corner over the samples. The rois are data: the sample coordinates are IR
    and each corner is one gather."""
    b = ctx.b
    x, rois, batch_index = ctx.x(0), ctx.x(1), ctx.x(2)
    n, c, height, width = ctx.static_shape(0)
    count = ctx.static_shape(1)[0]
    mode = ctx.check_attr("mode", ("avg", "max"), "avg")
    out_h, out_w = ctx.attr("output_height", 1), ctx.attr("output_width", 1)
    ratio = ctx.attr("sampling_ratio", 0)
    scale = float(ctx.attr("spatial_scale", 1.0))
    default_mode = "half_pixel" if ctx.since >= 16 else "output_half_pixel"
    half_pixel = (
        ctx.check_attr("coordinate_transformation_mode", ("half_pixel", "output_half_pixel"),
                       default_mode) == "half_pixel"
    )  # fmt: skip
    if ratio <= 0:
        raise Unsupported("sampling_ratio 0 (adaptive: the sample count depends on the rois)")
    dtype = type_of(x).dtype
    offset = 0.5 if half_pixel else 0.0

    def corner(k: int) -> SSAValue:  # [count, 1]
        v = b.reshape(b.narrow(rois, 1, k, 1), [count, 1])
        return b.sub(b.mul(v if type_of(v).dtype == dtype else b.cast(v, dtype), scale), offset)

    # Sample order: bin row, bin column, sample row, sample column.
    grid = np.meshgrid(np.arange(out_h), np.arange(out_w), np.arange(ratio), np.arange(ratio),
                       indexing="ij")  # fmt: skip
    bin_h_index, bin_w_index, sample_h, sample_w = (g.reshape(1, -1) for g in grid)
    samples = ratio * ratio

    def coordinate(start: SSAValue, end: SSAValue, bins: int, bin_i: np.ndarray,
                   sample_i: np.ndarray) -> SSAValue:  # fmt: skip
        extent = b.sub(end, start)
        if not half_pixel:
            extent = b.maximum(extent, 1.0)
        size = b.div(extent, float(bins))
        at = b.add(start, b.mul(size, ctx.const_like(bin_i.astype(float), size)))
        return b.add(at, b.div(b.mul(size, ctx.const_like(sample_i + 0.5, size)), float(ratio)))

    ys = coordinate(corner(1), corner(3), out_h, bin_h_index, sample_h)  # [count, P]
    xs = coordinate(corner(0), corner(2), out_w, bin_w_index, sample_w)
    outside = b.binary(
        mir.OrOp,
        b.binary(mir.OrOp, b.compare("lt", ys, -1.0), b.compare("gt", ys, float(height))),
        b.binary(mir.OrOp, b.compare("lt", xs, -1.0), b.compare("gt", xs, float(width))),
    )
    keep = b.cast(b.unary(mir.NotOp, outside), dtype)

    def axis_taps(v: SSAValue, length: int) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(low index, high index, fraction toward high) along one axis."""
        v = b.maximum(v, 0.0)
        low = b.unary(mir.FloorOp, v)
        at_edge = b.compare("ge", low, float(length - 1))
        low = b.where(at_edge, float(length - 1), low)
        high = b.where(at_edge, float(length - 1), b.add(low, 1.0))
        v = b.where(at_edge, low, v)
        return low, high, b.sub(v, low)

    y_low, y_high, ly = axis_taps(ys, height)
    x_low, x_high, lx = axis_taps(xs, width)
    hy, hx = b.sub(1.0, ly), b.sub(1.0, lx)
    # Flat offsets of each roi's image and channel: [count, c, 1].
    image = b.reshape(b.cast(batch_index, DType.I64), [count, 1, 1])
    channel = ctx.constant(np.arange(c, dtype=np.int64).reshape(1, c, 1))
    base = b.mul(b.add(b.mul(image, c), channel), height * width)
    flat_x = b.reshape(x, [n * c * height * width])
    terms = []
    # The four corners, already moved into the image by the edge rule above.
    taps: list[list[Tap]] = [[(y_low, hy), (y_high, ly)], [(x_low, hx), (x_high, lx)]]
    for position, weight in tap_combinations(b, taps, [height, width], zeros_outside=False):
        assert weight is not None  # [count, P]
        values = b.gather(flat_x, b.add(base, b.reshape(position, [count, 1, -1])), 0)
        terms.append(b.mul(values, b.reshape(b.mul(weight, keep), [count, 1, -1])))
    bins = [count, c, out_h * out_w, samples]
    if mode == "avg":
        total = b.add(b.add(terms[0], terms[1]), b.add(terms[2], terms[3]))
        pooled = b.div(b.reduce("sum", b.reshape(total, bins), 3), float(samples))
    else:
        best = b.maximum(b.maximum(terms[0], terms[1]), b.maximum(terms[2], terms[3]))
        pooled = b.reduce("max", b.reshape(best, bins), 3)
    return b.reshape(pooled, [count, c, out_h, out_w])
