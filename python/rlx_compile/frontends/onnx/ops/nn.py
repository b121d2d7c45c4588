"""Neural-network ONNX ops: matrix products, convolution, pooling, normalisation and the
softmax family."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation, SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import Activation
from rlx_compile.dialects.dim_expr import ceildiv
from rlx_compile.dialects.traits import is_weight_leaf
from rlx_compile.dialects.types import (
    Dim,
    DType,
    TensorType,
    fmt_shape,
    is_static_shape,
    window_out_size,
)
from rlx_compile.folding import scales_exactly
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    axis_of,
    converter,
)
from rlx_compile.frontends.onnx.ops.resize import linear_taps, tap_combinations
from rlx_compile.frontends.onnx.ops.shape import plane_offsets, reshape

# ---------------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------------


@converter("MatMul")
def matmul(ctx: NodeContext) -> ConverterResult:
    return ctx.b.matmul(ctx.x(0), ctx.x(1))


@converter("Gemm")
def gemm(ctx: NodeContext) -> ConverterResult:
    a, b = ctx.x(0), ctx.x(1)
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    weight = isinstance(b.owner, Operation) and is_weight_leaf(b.owner)
    if ctx.attr("transA", 0):
        a = ctx.b.transpose(a, [1, 0])
    if ctx.attr("transB", 0):
        b = ctx.b.transpose(b, [1, 0])
    if alpha != 1.0 and weight and scales_exactly(alpha):
        # Scaling a weight by ±2^k scales every product exactly, so each partial sum
        # too: the matmul of the scaled weight is the scaled matmul, bit for bit (but
        # for overflow), and a matmul + bias fusion takes it (k-means' alpha = -2).
        b, alpha = ctx.b.mul(b, alpha), 1.0
    y = ctx.b.matmul(a, b)
    if alpha != 1.0:
        y = ctx.b.mul(y, alpha)
    c = ctx.opt(2)
    if c is not None:
        y = ctx.b.add(y, c if beta == 1.0 else ctx.b.mul(c, beta))
    return y


# ---------------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------------


def window_pads(
    ctx: NodeContext,
    spatial: Sequence[Dim],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """Explicit begin..., end... pads from ``pads`` or ``auto_pad``."""
    k = len(spatial)
    auto_pad = ctx.check_attr("auto_pad", ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"), "NOTSET")
    pads = ctx.attr("pads")
    if auto_pad == "NOTSET":
        return list(pads) if pads is not None else [0] * (2 * k)
    if pads is not None and any(pads):
        raise Unsupported("both pads and auto_pad are given")
    if auto_pad == "VALID":
        return [0] * (2 * k)
    begin, end = [], []
    for size, kern, st, dil in zip(spatial, kernel, strides, dilations, strict=True):
        out = ceildiv(size, st)
        total = (out - 1) * st + (kern - 1) * dil + 1 - size
        if not isinstance(total, int):  # depends on size mod stride
            raise Unsupported(
                f"auto_pad={auto_pad} with stride {st} pads by the size of the symbolic "
                f"dim {size}: size it at compile time"
            )
        total = max(0, total)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin + end


def _spatial(ctx: NodeContext, i: int) -> list[Dim]:
    return list(type_of(ctx.x(i)).shape[2:])


def bias_per_channel(ctx: NodeContext, y: SSAValue, bias: SSAValue) -> SSAValue:
    """y + bias[C] broadcast along axis 1 of an [N, C, ...] tensor."""
    rank = type_of(y).rank
    return ctx.b.add(y, reshape(ctx, bias, [type_of(bias).shape[0], *([1] * (rank - 2))]))


def conv_geometry(ctx: NodeContext, w: SSAValue) -> tuple[list[int], list[int], list[int], int]:
    """A convolution node's strides, explicit pads, dilations and group; its
    ``kernel_shape``, when given, must be the weight's."""
    spatial = _spatial(ctx, 0)  # x is input 0 or computed from it
    k = len(spatial)
    kernel = list(type_of(w).shape[2:])
    if not is_static_shape(kernel):
        raise Unsupported(f"a weight of symbolic kernel size {fmt_shape(kernel)}")
    declared = ctx.attr("kernel_shape")
    if declared is not None and list(declared) != kernel:
        raise Unsupported(f"kernel_shape {declared} differs from the weight's {kernel}")
    strides = ctx.attr("strides", [1] * k)
    dilations = ctx.attr("dilations", [1] * k)
    pads = window_pads(ctx, spatial, kernel, strides, dilations)
    return strides, pads, dilations, ctx.attr("group", 1)


@converter("Conv")
def conv(ctx: NodeContext) -> ConverterResult:
    """A conv with a bias of one value per output channel is the fused conv of that bias
    (onnxruntime's and TOSA's conv hold their bias too): three ops fewer for every pass
    to visit; ``fuse`` splits it where the target's fused conv kernel does not take it."""
    return conv_bias_act(ctx, ctx.x(0), ctx.x(1), ctx.opt(2))


def conv_bias_act(
    ctx: NodeContext,
    x: SSAValue,
    w: SSAValue,
    bias: SSAValue | None,
    residual: SSAValue | None = None,
    act: Activation = Activation.NONE,
    act_params: Sequence[float] = (),
) -> SSAValue:
    """act(conv(x, w) + bias (+ residual)) with the node's geometry: one
    ``mir.fused_conv_bias_act`` where it holds them all (a bias of one value per output
    channel, a residual of the output's type), else the conv and the ops after it."""
    strides, pads, dilations, groups = conv_geometry(ctx, w)
    xt, wt = type_of(x), type_of(w)
    if (
        bias is not None
        and type_of(bias).shape == wt.shape[:1]
        and xt.dtype is wt.dtype
        and wt.rank - 2 in mir.BIASED_CONV_SPATIAL_DIMS
    ):
        shape = mir.conv_output_shape(xt, wt, strides, pads, dilations, groups)
        if residual is None or type_of(residual) == TensorType(shape, xt.dtype):
            return ctx.b.fused_conv_bias_act(
                x, w, bias, residual, strides=strides, pads=pads, dilations=dilations,
                groups=groups, act=act, act_params=act_params,
            )  # fmt: skip
    y = ctx.b.conv(x, w, strides, pads, dilations, groups)
    if bias is not None:
        y = bias_per_channel(ctx, y, bias)
    if residual is not None:
        y = ctx.b.add(y, residual)
    return ctx.b.activation(y, act, act_params)


def _pool_geometry(
    ctx: NodeContext, padding_counts: bool = False
) -> tuple[list[int], list[int], list[int], list[int], bool]:
    """The window of a pooling node; unless ``padding_counts`` (an average over whole
    windows), an axis one window overhangs is padded to fit (``_overhang_pads``)."""
    spatial = _spatial(ctx, 0)
    k = len(spatial)
    kernel = list(ctx.attr("kernel_shape"))
    strides = ctx.attr("strides", [1] * k)
    dilations = ctx.attr("dilations", [1] * k)
    ceil_mode = bool(ctx.attr("ceil_mode", 0))
    pads = window_pads(ctx, spatial, kernel, strides, dilations)
    if not padding_counts and not ceil_mode:
        pads = _overhang_pads(spatial, kernel, strides, pads, dilations)
    return kernel, strides, pads, dilations, ceil_mode


def _overhang_pads(
    spatial: Sequence[Dim],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """``pads`` with the end of each axis whose padded size falls short of one window by
    less than a stride padded by the shortfall. onnxruntime (and ONNX's shape inference)
    sizes such an axis as one window, ``(size + pads - span) / stride + 1`` in C++'s
    division towards zero, and pools the window clipped to the input (PyTorch refuses
    it): padding that reads as nothing (max; an average not counting it; a sum of
    powers) is that window."""
    k = len(spatial)
    out = list(pads)
    for i, (size, kern, st, dil) in enumerate(
        zip(spatial, kernel, strides, dilations, strict=True)
    ):
        if not isinstance(size, int):
            continue
        short = dil * (kern - 1) + 1 - (size + pads[i] + pads[k + i])
        if 0 < short < st:
            out[k + i] += short
    return out


def _as_float(ctx: NodeContext, x: SSAValue) -> tuple[SSAValue, DType | None]:
    """Integer pooling runs on an exact float copy (int8/uint8 fit f32 exactly)."""
    dtype = type_of(x).dtype
    if dtype.is_float:
        return x, None
    if dtype not in (DType.I8, DType.U8):
        raise Unsupported(f"pooling of {dtype.value}")
    return ctx.b.cast(x, DType.F32), dtype


@converter("MaxPool")
def max_pool(ctx: NodeContext) -> ConverterResult:
    storage_order = ctx.check_attr("storage_order", (0, 1), 0)
    x, back = ctx.x(0), None
    if ctx.output_used(1) or type_of(x).dtype not in (DType.I8, DType.U8):
        x, back = _as_float(ctx, x)  # (mir.max_pool takes 8-bit integers as they are)
    kernel, strides, pads, dilations, ceil_mode = _pool_geometry(ctx)
    y = ctx.b.emit(
        mir.MaxPoolOp(
            x, kernel, strides=strides, pads=pads, dilations=dilations, ceil_mode=ceil_mode
        )
    ).results[0]
    indices = None
    if ctx.output_used(1):
        window = (kernel, strides, pads, dilations)
        indices = _max_pool_indices(ctx, x, type_of(y).shape, window, storage_order)
    return [ctx.b.cast(y, back) if back is not None else y, indices]


def _window_positions(
    in_shape: Sequence[int],
    out_shape: Sequence[int],
    window: tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]],
) -> tuple[np.ndarray, np.ndarray]:
    """For every output position (row-major) and kernel offset (row-major): the input
    coordinates [P, K, dims] a pooling window reads, and whether each lies inside."""
    kernel, strides, pads, dilations = window
    dims = len(in_shape)
    out_grid = np.stack(np.meshgrid(*[np.arange(o) for o in out_shape], indexing="ij"), -1)
    k_grid = np.stack(np.meshgrid(*[np.arange(k) for k in kernel], indexing="ij"), -1)
    out_grid, k_grid = out_grid.reshape(-1, 1, dims), k_grid.reshape(1, -1, dims)
    coords = out_grid * np.array(strides) - np.array(pads[:dims]) + k_grid * np.array(dilations)
    inside = ((coords >= 0) & (coords < np.array(in_shape))).all(-1)
    return coords, inside


def _max_pool_indices(
    ctx: NodeContext,
    x: SSAValue,
    out_shape: Sequence[Dim],
    window: tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]],
    storage_order: int,
) -> SSAValue:
    """MaxPool's Indices: the flat index (over N, C and the spatial dims, row-major, or
    column-major spatially with storage_order 1) of each window's first maximum. Every
    window is gathered from the flattened input (padding reads a -inf sentinel), its
    argmax picks the offset, a constant table turns that into the input position."""
    b = ctx.b
    if not type_of(x).is_static:
        raise Unsupported(
            f"MaxPool's Indices of a {fmt_shape(type_of(x).shape)} input: size its dims "
            "at compile time"
        )
    shape = [int(d) for d in type_of(x).shape]
    n, c, spatial = shape[0], shape[1], shape[2:]
    out_spatial = [int(d) for d in out_shape[2:]]
    coords, inside = _window_positions(spatial, out_spatial, window)
    positions, taps = coords.shape[0], coords.shape[1]
    volume = int(np.prod(spatial))
    clipped = tuple(np.clip(coords, 0, np.array(spatial) - 1).T)
    flat = np.ravel_multi_index(clipped, spatial).T
    gather_at = np.where(inside, flat, volume)  # the sentinel sits after the last element
    reported = np.ravel_multi_index(clipped, spatial, order="F" if storage_order else "C").T
    dtype = type_of(x).dtype
    sentinel = ctx.full([n, c, 1], -np.inf, dtype)
    padded = b.concat([b.reshape(x, [n, c, volume]), sentinel], 2)
    windows = b.gather(padded, ctx.constant(gather_at.reshape(-1).astype(np.int64)), 2)
    best = b.emit(mir.ArgMaxOp(b.reshape(windows, [n, c, positions, taps]), 3)).results[0]
    rows = ctx.constant((np.arange(positions) * taps).astype(np.int64))
    table = ctx.constant(reported.reshape(-1).astype(np.int64))
    spatial_index = b.gather(table, b.add(best, rows), 0)  # [n, c, positions]
    index = b.add(spatial_index, plane_offsets(ctx, n, c, volume))
    return b.reshape(index, [n, c, *out_spatial])


@converter("MaxUnpool")
def max_unpool(ctx: NodeContext) -> ConverterResult:
    """Scatter the pooled values to the flat positions MaxPool's Indices name."""
    b = ctx.b
    x, indices = ctx.x(0), ctx.x(1)
    shape = ctx.static_shape(0)
    kernel = list(ctx.attr("kernel_shape"))
    k = len(kernel)
    strides = ctx.attr("strides", [1] * k)
    pads = ctx.attr("pads", [0] * (2 * k))
    spatial = [(shape[2 + d] - 1) * strides[d] - pads[d] - pads[k + d] + kernel[d]
               for d in range(k)]  # fmt: skip
    default = [shape[0], shape[1], *spatial]
    out_shape = default
    if ctx.has(2):
        out_shape = [int(v) for v in ctx.const(2, "MaxUnpool's output_shape").reshape(-1)]
    total = int(np.prod(out_shape))
    count = int(np.prod(shape))
    zeros = ctx.full([total], 0.0, type_of(x).dtype)
    where = b.reshape(b.cast(indices, DType.I64), [count, 1])
    if out_shape != default:
        # The indices count positions of the default shape; the same coordinates of a
        # larger output_shape receive the values (the rest is padding).
        rest, flat, scale = where, None, 1
        for size, out_size in zip(reversed(default), reversed(out_shape), strict=True):
            coord = b.binary(mir.ModOp, rest, size)
            rest = b.div(b.sub(rest, coord), size)
            term = b.mul(coord, scale) if scale != 1 else coord
            flat = term if flat is None else b.add(flat, term)
            scale *= out_size
        assert flat is not None
        where = flat
    y = b.emit(mir.ScatterNdOp(zeros, where, b.reshape(x, [count]))).results[0]
    return b.reshape(y, out_shape)


@converter("Col2Im")
def col2im(ctx: NodeContext) -> ConverterResult:
    """Sum the columns back into the image (torch's fold): each output pixel gathers the
    one column entry per block offset that lands on it, masked where none does."""
    b = ctx.b
    x = ctx.x(0)
    n, ck, length = ctx.static_shape(0)
    image = [int(v) for v in ctx.const(1, "Col2Im's image_shape").reshape(-1)]
    block = [int(v) for v in ctx.const(2, "Col2Im's block_shape").reshape(-1)]
    dims = len(image)
    strides = ctx.attr("strides", [1] * dims)
    dilations = ctx.attr("dilations", [1] * dims)
    pads = ctx.attr("pads", [0] * (2 * dims))
    taps = int(np.prod(block))
    if ck % taps:
        raise Unsupported(f"{ck} input channels do not split into blocks of {taps}")
    channels = ck // taps
    steps = [  # of static sizes: numbers
        int(window_out_size(image[d], block[d], strides[d], pads[d], pads[dims + d], dilations[d]))
        for d in range(dims)
    ]
    if int(np.prod(steps)) != length:
        raise Unsupported(f"{length} columns, but the geometry gives {int(np.prod(steps))}")
    pixel = np.stack(np.meshgrid(*[np.arange(i) for i in image], indexing="ij"), -1)
    offset = np.stack(np.meshgrid(*[np.arange(k) for k in block], indexing="ij"), -1)
    pixel, offset = pixel.reshape(1, -1, dims), offset.reshape(-1, 1, dims)  # [1, P, d], [K, 1, d]
    start = pixel + np.array(pads[:dims]) - offset * np.array(dilations)
    step = start // np.array(strides)
    lands = ((start % np.array(strides) == 0) & (step >= 0) & (step < np.array(steps))).all(-1)
    column = np.ravel_multi_index(tuple(np.clip(step, 0, np.array(steps) - 1).T), steps).T
    index = np.where(lands, np.arange(taps)[:, None] * length + column, 0)  # [K, P]
    flat = b.reshape(x, [n, channels, taps * length])
    picked = b.gather(flat, ctx.constant(index.reshape(-1).astype(np.int64)), 2)
    mask = ctx.b.constant(
        lands.reshape(-1).astype(type_of(x).dtype.numpy), type_of(x).dtype, (lands.size,)
    )
    summed = b.reduce("sum", b.reshape(b.mul(picked, mask), [n, channels, taps, len(lands[0])]), 2)
    return b.reshape(summed, [n, channels, *image])


@converter("AveragePool")
def average_pool(ctx: NodeContext) -> ConverterResult:
    return average_pool_of(ctx, ctx.x(0))


def average_pool_of(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """The node's average pooling (its attributes) of ``x``, input 0 or a value in its
    place (a dequantized input 0)."""
    include = bool(ctx.attr("count_include_pad", 0))
    kernel, strides, pads, dilations, ceil_mode = _pool_geometry(ctx, padding_counts=include)
    return ctx.b.emit(
        mir.AvgPoolOp(
            x, kernel, strides=strides, pads=pads, dilations=dilations, ceil_mode=ceil_mode,
            count_include_pad=include,
        )
    ).results[0]  # fmt: skip


@converter("LpPool")
def lp_pool(ctx: NodeContext) -> ConverterResult:
    # (Σ_window |x|^p)^(1/p): the window sum is the average with padding counted times
    # the window size, exact while every window is whole (no ceil-mode tails).
    x = ctx.x(0)
    p = ctx.attr("p", 2)
    kernel, strides, pads, dilations, ceil_mode = _pool_geometry(ctx)
    if ceil_mode:
        raise Unsupported("ceil_mode=1")
    powered = ctx.b.pow(ctx.b.abs(x), float(p))
    avg = ctx.b.emit(
        mir.AvgPoolOp(
            powered, kernel, strides=strides, pads=pads, dilations=dilations,
            count_include_pad=True,
        )
    ).results[0]  # fmt: skip
    total = ctx.b.mul(avg, float(np.prod(kernel)))
    return ctx.b.pow(total, 1.0 / p)


@converter("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    axes = list(range(2, type_of(x).rank))
    kind = "mean" if ctx.op_type == "GlobalAveragePool" else "max"
    return ctx.b.reduce(kind, x, axes, keepdims=True)


@converter("GlobalLpPool")
def global_lp_pool(ctx: NodeContext) -> ConverterResult:
    """(Σ_spatial |x|^p)^(1/p): one L2 or L1 reduction for p = 2 (the default) or 1."""
    x = ctx.x(0)
    axes = list(range(2, type_of(x).rank))
    p = ctx.attr("p", 2)
    if p in (1, 2):
        return ctx.b.reduce(f"l{p}", x, axes, keepdims=True)
    total = ctx.b.reduce("sum", ctx.b.pow(ctx.b.abs(x), float(p)), axes, keepdims=True)
    return ctx.b.pow(total, 1.0 / p)


# ---------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------


def as_dtype(ctx: NodeContext, v: SSAValue, dtype: DType) -> SSAValue:
    return v if type_of(v).dtype is dtype else ctx.b.cast(v, dtype)


@converter("BatchNormalization")
def batch_norm(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    dtype = type_of(x).dtype
    scale, bias, mean, var = (as_dtype(ctx, ctx.x(i), dtype) for i in range(1, 5))
    eps = ctx.attr("epsilon", 1e-5)
    momentum = ctx.attr("momentum", 0.9)
    if not ctx.attr("training_mode", 0):
        if ctx.output_used(1) or ctx.output_used(2):
            raise Unsupported("running statistics outputs outside training mode")
        return ctx.b.batch_norm(x, scale, bias, mean, var, eps)
    # Training mode: normalise with the batch statistics, and blend them into the
    # running ones (population variance, as the ONNX reference).
    rank = type_of(x).rank
    axes = [0, *range(2, rank)]
    bmean = ctx.b.mean(x, axes, keepdims=True)
    d = ctx.b.sub(x, bmean)
    bvar = ctx.b.mean(ctx.b.mul(d, d), axes, keepdims=True)
    c = type_of(scale).shape[0]
    per_channel = [1, c, *([1] * (rank - 2))]
    y = ctx.b.div(d, ctx.b.sqrt(ctx.b.add(bvar, eps)))
    y = ctx.b.add(ctx.b.mul(y, reshape(ctx, scale, per_channel)), reshape(ctx, bias, per_channel))
    outs: list[SSAValue | None] = [y, None, None]
    for i, (running, batch) in enumerate(((mean, bmean), (var, bvar)), start=1):
        if ctx.output_used(i):
            flat = reshape(ctx, batch, [c])
            outs[i] = ctx.b.add(ctx.b.mul(running, momentum), ctx.b.mul(flat, 1 - momentum))
    return outs


@converter("InstanceNormalization")
def instance_norm(ctx: NodeContext) -> ConverterResult:
    x, scale, bias = ctx.x(0), ctx.x(1), ctx.x(2)
    channels = type_of(x).shape[1]
    if not isinstance(channels, int):
        raise Unsupported("symbolic channel dim")
    return ctx.b.group_norm(x, scale, bias, channels, ctx.attr("epsilon", 1e-5))


@converter("GroupNormalization")
def group_norm(ctx: NodeContext) -> ConverterResult:
    x, scale, bias = ctx.x(0), ctx.x(1), ctx.x(2)
    groups = ctx.attr("num_groups")
    eps = ctx.attr("epsilon", 1e-5)
    ctx.check_attr("stash_type", (1,), 1)
    channels = type_of(x).shape[1]
    if not isinstance(channels, int):
        raise Unsupported("symbolic channel dim")
    if ctx.since < 21 and type_of(scale).shape == (groups,) and groups != channels:
        # Opset 18: one scale/bias per group; repeat each over the group's channels.
        index = ctx.constant(np.arange(channels, dtype=np.int64) // (channels // groups))
        scale, bias = ctx.b.gather(scale, index, 0), ctx.b.gather(bias, index, 0)
    return ctx.b.group_norm(x, scale, bias, groups, eps)


@converter("LayerNormalization")
def layer_norm(ctx: NodeContext) -> ConverterResult:
    x, scale, bias = ctx.x(0), ctx.x(1), ctx.opt(2)
    rank = type_of(x).rank
    axis = axis_of(ctx.attr("axis", -1), rank)
    eps = ctx.attr("epsilon", 1e-5)
    ctx.attr("stash_type", 1)
    return layer_norm_outputs(ctx, x, scale, bias, axis, eps)


def layer_norm_outputs(
    ctx: NodeContext,
    x: SSAValue,
    scale: SSAValue,
    bias: SSAValue | None,
    axis: int,
    eps: float,
) -> list[SSAValue | None]:
    """[y, mean, inv_std] of a layer norm over the axes from ``axis`` (non-negative) on:
    one ``mir.layer_norm`` where the node's outputs 1 and 2 (the statistics) are unused,
    else the normalisation spelled out."""
    if not (ctx.output_used(1) or ctx.output_used(2)):
        return [ctx.b.layer_norm(x, scale, bias, axis, eps), None, None]
    axes = list(range(axis, type_of(x).rank))
    mean = ctx.b.mean(x, axes, keepdims=True)
    d = ctx.b.sub(x, mean)
    inv_std = ctx.b.rsqrt(ctx.b.add(ctx.b.mean(ctx.b.mul(d, d), axes, keepdims=True), eps))
    y = ctx.b.mul(ctx.b.mul(d, inv_std), scale)
    if bias is not None:
        y = ctx.b.add(y, bias)
    return [y, mean, inv_std]


@converter("RMSNormalization")
def rms_norm(ctx: NodeContext) -> ConverterResult:
    x, scale = ctx.x(0), ctx.x(1)
    axis = axis_of(ctx.attr("axis", -1), type_of(x).rank)
    ctx.attr("stash_type", 1)
    return ctx.b.rms_norm(x, scale, None, axis, ctx.attr("epsilon", 1e-5))


@converter("LpNormalization")
def lp_normalization(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    axis = axis_of(ctx.attr("axis", -1), type_of(x).rank)
    p = ctx.check_attr("p", (1, 2), 2)
    if p == 1:
        norm = ctx.b.sum(ctx.b.abs(x), [axis], keepdims=True)
    else:
        norm = ctx.b.sqrt(ctx.b.sum(ctx.b.mul(x, x), [axis], keepdims=True))
    # A zero norm gives 0, not 0/0 (the ONNX reference).
    return ctx.b.where(ctx.b.compare("eq", norm, 0), 0, ctx.b.div(x, norm))


@converter("MeanVarianceNormalization")
def mean_variance_normalization(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    rank = type_of(x).rank
    axes = [axis_of(a, rank) for a in ctx.attr("axes", [0, 2, 3])]
    mean = ctx.b.mean(x, axes, keepdims=True)
    d = ctx.b.sub(x, mean)
    var = ctx.b.mean(ctx.b.mul(d, d), axes, keepdims=True)
    return ctx.b.div(d, ctx.b.add(ctx.b.sqrt(var), 1e-9))


@converter("LRN")
def lrn(ctx: NodeContext) -> ConverterResult:
    alpha, beta, bias = ctx.attr("alpha", 1e-4), ctx.attr("beta", 0.75), ctx.attr("bias", 1.0)
    return ctx.b.emit(mir.LrnOp(ctx.x(0), ctx.attr("size"), alpha, beta, bias)).results[0]


# ---------------------------------------------------------------------------------
# Softmax family
# ---------------------------------------------------------------------------------


@converter("Softmax", "LogSoftmax")
def softmax(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    axis = axis_of(ctx.attr("axis", -1), type_of(x).rank)
    op = mir.SoftmaxOp if ctx.op_type == "Softmax" else mir.LogSoftmaxOp
    return ctx.b.emit(op(x, axis)).results[0]


@converter("Hardmax")
def hardmax(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    return hardmax_along(ctx, x, axis_of(ctx.attr("axis", -1), type_of(x).rank))


def hardmax_along(ctx: NodeContext, x: SSAValue, axis: int) -> SSAValue:
    """One-hot of the first largest value along ``axis`` (non-negative), in ``x``'s type."""
    shape = type_of(x).shape
    n = shape[axis]
    if not isinstance(n, int):
        raise Unsupported("Hardmax along a symbolic axis")
    index = ctx.b.emit(mir.ArgMaxOp(x, axis, keepdims=True)).results[0]
    positions = np.arange(n, dtype=np.int64).reshape(
        [n if i == axis else 1 for i in range(len(shape))]
    )
    hot = ctx.b.compare("eq", index, ctx.constant(positions))
    return ctx.b.cast(hot, type_of(x).dtype)


@converter("ConvTranspose")
def conv_transpose(ctx: NodeContext) -> ConverterResult:
    x, w, bias = ctx.x(0), ctx.x(1), ctx.opt(2)
    spatial = _spatial(ctx, 0)
    k = len(spatial)
    kernel = list(ctx.static_shape(1))[2:]
    declared = ctx.attr("kernel_shape")
    if declared is not None and list(declared) != kernel:
        raise Unsupported(f"kernel_shape {declared} differs from the weight's {kernel}")
    group = ctx.attr("group", 1)
    strides = ctx.attr("strides", [1] * k)
    dilations = ctx.attr("dilations", [1] * k)
    out_pad = ctx.attr("output_padding", [0] * k)
    output_shape = ctx.attr("output_shape")
    auto_pad = ctx.check_attr("auto_pad", ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"), "NOTSET")
    pads = ctx.attr("pads")
    full = [(spatial[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 for i in range(k)]
    if pads is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        want = list(output_shape) if output_shape else [spatial[i] * strides[i] for i in range(k)]
        total = [full[i] + out_pad[i] - want[i] for i in range(k)]
        small = [t // 2 for t in total]
        begin = (
            small
            if auto_pad == "SAME_UPPER"
            else [t - s for t, s in zip(total, small, strict=True)]
        )
        out_len = want
    else:
        pads = list(pads) if pads is not None else [0] * (2 * k)
        begin = pads[:k]
        if output_shape:
            out_len = list(output_shape)[-k:]
        else:
            out_len = [full[i] + out_pad[i] - pads[i] - pads[k + i] for i in range(k)]
    # The output is full[begin : begin + out_len]: cropped at both ends (pads), extended
    # by zeros (+ bias) past either end.
    front = [max(-b, 0) for b in begin]
    crop = [max(b, 0) for b in begin]
    rest = [out_len[i] - front[i] for i in range(k)]
    end = [full[i] - crop[i] - rest[i] for i in range(k)]
    if not all(isinstance(v, int) for v in front + end):
        raise Unsupported("output_shape with symbolic spatial dims: size them at compile time")
    props = {"strides": strides, "dilations": dilations, "groups": group}
    padded = any(front)
    y: SSAValue = ctx.b.emit(
        mir.ConvTransposeOp(
            x, w, None if padded else bias, pads=[*crop, *[max(e, 0) for e in end]],
            output_padding=[max(-e, 0) for e in end], **props,
        )
    ).results[0]  # fmt: skip
    if padded:  # the output starts before the first full position: zeros there too
        y = ctx.b.pad(y, [0, 0, *front, 0, 0, *([0] * k)])
        if bias is not None:
            y = bias_per_channel(ctx, y, bias)
    return y


@converter("DeformConv")
def deform_conv(ctx: NodeContext) -> ConverterResult:
    """Deformable convolution (2-D): every kernel tap samples the input bilinearly at its
    regular position plus a learned offset (zeros outside the image), scaled by the
    optional mask; the sampled columns then meet the weights in one grouped matmul."""
    b = ctx.b
    x, w, offset = ctx.x(0), ctx.x(1), ctx.x(2)
    bias, mask = ctx.opt(3), ctx.opt(4)
    n, c, height, width = ctx.static_shape(0)
    out_c, c_per_group, kh, kw = ctx.static_shape(1)
    _, offset_channels, out_h, out_w = ctx.static_shape(2)
    group, offset_group = ctx.attr("group", 1), ctx.attr("offset_group", 1)
    if list(ctx.attr("kernel_shape", [kh, kw])) != [kh, kw]:
        raise Unsupported("kernel_shape differs from the weight's")
    sh, sw = ctx.attr("strides", [1, 1])
    dh, dw = ctx.attr("dilations", [1, 1])
    pads = ctx.attr("pads", [0, 0, 0, 0])
    taps, points = kh * kw, out_h * out_w
    if c != c_per_group * group or out_c % group or c % offset_group:
        raise Unsupported(
            f"channels {c} -> {out_c} with group {group}, offset_group {offset_group}"
        )
    if offset_channels != offset_group * taps * 2:
        raise Unsupported(
            f"offset has {offset_channels} channels, expected {offset_group * taps * 2}"
        )
    dtype = type_of(x).dtype
    # Regular sampling positions [1, 1, taps, points]; offsets [n, offset_group, taps, points].
    a, bb, i, j = np.meshgrid(np.arange(kh), np.arange(kw), np.arange(out_h), np.arange(out_w),
                              indexing="ij")  # fmt: skip
    base_y = (i * sh - pads[0] + a * dh).reshape(1, 1, taps, points)
    base_x = (j * sw - pads[1] + bb * dw).reshape(1, 1, taps, points)
    moved = b.reshape(offset, [n, offset_group, taps, 2, points])

    def component(k: int, base: np.ndarray) -> SSAValue:
        d = b.reshape(b.narrow(moved, 3, k, 1), [n, offset_group, taps, points])
        return b.add(d, ctx.const_like(base.astype(float), d))

    ys, xs = component(0, base_y), component(1, base_x)
    per_channel = c // offset_group

    def to_channels(v: SSAValue) -> SSAValue:  # [n, G, taps, points] -> [n, c, taps, points]
        v = b.reshape(v, [n, offset_group, 1, taps, points])
        return b.reshape(b.expand(v, [n, offset_group, per_channel, taps, points]),
                         [n, c, taps, points])  # fmt: skip

    image_base = plane_offsets(ctx, n, c, height * width, trailing=2)
    flat_x = b.reshape(x, [n * c * height * width])
    bilinear = [linear_taps(b, ys), linear_taps(b, xs)]  # zeros outside the image
    sampled: SSAValue | None = None
    for position, weight in tap_combinations(b, bilinear, [height, width], zeros_outside=True):
        assert weight is not None
        values = b.gather(flat_x, b.add(to_channels(position), image_base), 0)
        term = b.mul(values, to_channels(weight))
        sampled = term if sampled is None else b.add(sampled, term)
    assert sampled is not None
    if mask is not None:
        sampled = b.mul(sampled, to_channels(b.reshape(mask, [n, offset_group, taps, points])))
    cols = b.reshape(sampled, [n, group, c_per_group * taps, points])
    weights = b.reshape(w, [1, group, out_c // group, c_per_group * taps])
    y = b.reshape(b.matmul(weights, cols), [n, out_c, out_h, out_w])
    if bias is not None:
        y = b.add(y, b.reshape(bias, [1, out_c, 1, 1]))
    return y if type_of(y).dtype == dtype else b.cast(y, dtype)
