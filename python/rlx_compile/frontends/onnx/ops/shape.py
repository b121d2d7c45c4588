"""Data movement and shape ONNX ops: reshape-like ops, slicing, gathers, padding, tiling,
and the shape-producing ops that fold to constants when shapes are static."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.dim_expr import DimExpr, ceildiv, dim_max, dim_min, floordiv, interval
from rlx_compile.dialects.types import (
    Dim,
    DType,
    broadcast_shapes,
    element_count,
    fmt_shape,
    row_major_strides,
)
from rlx_compile.folding import FOLD_LIMIT, constant_value
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    NotStatic,
    Unsupported,
    axis_of,
    converter,
    dtype_of,
    numel,
)

INT64_MAX = np.iinfo(np.int64).max


def reshape_target(
    shape: Sequence[Dim], target: Sequence[Dim], allowzero: bool = False
) -> list[Dim]:
    """ONNX Reshape's target: 0 copies the input dim (unless ``allowzero``), -1 takes the
    remaining element count: exactly divided, or, when a symbolic count does not divide
    as polynomials (``[n] -> [-1, 4]``), its floor quotient (``n floordiv 4``). The types
    then hold at the sizes where it divides, which the executors and specialize-dims
    check at each run, as torch's exporter guards ``n % 4 == 0``."""
    out: list[Dim] = []
    infer = None
    for i, t in enumerate(target):
        if not isinstance(t, int):  # a symbolic dim from shape arithmetic
            out.append(t)
        elif t == 0 and not allowzero:
            if i >= len(shape):
                raise Unsupported(f"reshape target {list(target)} copies a missing dim {i}")
            out.append(shape[i])
        elif t == -1:
            if infer is not None:
                raise Unsupported(f"reshape target {list(target)} has two -1 entries")
            infer = i
            out.append(-1)
        elif t < -1:
            raise Unsupported(f"reshape target {list(target)} has a negative dim")
        else:
            out.append(int(t))
    if infer is not None:
        total = element_count(shape)
        known = element_count([d for i, d in enumerate(out) if i != infer])
        rest = floordiv(total, known) if known != 0 else None
        symbolic = not (isinstance(total, int) and isinstance(known, int))
        if rest is None or (rest * known != total and not symbolic):
            raise Unsupported(
                f"cannot infer -1 in reshape {fmt_shape(shape)} -> {fmt_shape(target)}"
            )
        out[infer] = rest
    return out


def reshape(ctx: NodeContext, x: SSAValue, shape: Sequence[Dim]) -> SSAValue:
    if tuple(shape) == type_of(x).shape:
        return x
    return ctx.b.reshape(x, list(shape))


def select(ctx: NodeContext, x: SSAValue, axis: int, index: int) -> SSAValue:
    """``x[..., index, ...]`` along ``axis``, the axis dropped (a view: narrow + reshape)."""
    shape = list(type_of(x).shape)
    axis = axis_of(axis, len(shape))
    del shape[axis]
    return ctx.b.reshape(ctx.b.narrow(x, axis, index, 1), shape)


def stack(ctx: NodeContext, pieces: Sequence[SSAValue], axis: int) -> SSAValue:
    """Values of one shape stacked along a new axis (negative counts from the end)."""
    axis = axis_of(axis, type_of(pieces[0]).rank + 1)
    lifted = [unsqueeze(ctx, p, [axis]) for p in pieces]
    return ctx.b.concat(lifted, axis) if len(lifted) > 1 else lifted[0]


def plane_offsets(ctx: NodeContext, n: int, c: int, volume: int, trailing: int = 1) -> SSAValue:
    """The flat offset of every (image, channel) plane of an [n, c, ...] tensor of
    ``volume`` elements per plane, as an [n, c, 1, ...] i64 constant (``trailing`` ones)."""
    base = (np.arange(n)[:, None] * c + np.arange(c)[None, :]) * volume
    return ctx.constant(base.reshape(n, c, *([1] * trailing)).astype(np.int64))


@converter("Reshape")
def reshape_op(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    allowzero = bool(ctx.attr("allowzero", 0))
    try:
        target = ctx.ints(1, "Reshape's shape")
    except NotStatic:
        inferred = ctx.inferred_shape()
        if inferred is None:
            raise
        return reshape(ctx, x, inferred)
    return reshape(ctx, x, reshape_target(type_of(x).shape, target, allowzero))


@converter("Flatten")
def flatten(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    shape = type_of(x).shape
    axis = ctx.attr("axis", 1)
    if axis < 0:
        axis += len(shape)
    if not 0 <= axis <= len(shape):
        raise Unsupported(f"axis {ctx.attr('axis', 1)} is out of range for rank {len(shape)}")
    return reshape(ctx, x, [element_count(shape[:axis]), element_count(shape[axis:])])


@converter("Squeeze")
def squeeze(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    shape = type_of(x).shape
    if ctx.has(1):
        axes = {axis_of(a, len(shape)) for a in ctx.static_ints(1, "Squeeze's axes")}
        for a in axes:
            if shape[a] != 1:
                raise Unsupported(f"cannot squeeze axis {a} of size {shape[a]}")
    else:
        if not all(isinstance(d, int) for d in shape):
            raise Unsupported("Squeeze without axes of a tensor with symbolic dims")
        axes = {i for i, d in enumerate(shape) if d == 1}
    return reshape(ctx, x, [d for i, d in enumerate(shape) if i not in axes])


def unsqueeze(ctx: NodeContext, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    shape = list(type_of(x).shape)
    rank = len(shape) + len(axes)
    norm = sorted(axis_of(a, rank) for a in axes)
    if len(set(norm)) != len(norm):
        raise Unsupported(f"repeated axes {list(axes)}")
    for a in norm:
        shape.insert(a, 1)
    return reshape(ctx, x, shape)


@converter("Unsqueeze")
def unsqueeze_op(ctx: NodeContext) -> ConverterResult:
    return unsqueeze(ctx, ctx.x(0), ctx.static_ints(1, "Unsqueeze's axes"))


@converter("Transpose")
def transpose(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    rank = type_of(x).rank
    perm = ctx.attr("perm", list(reversed(range(rank))))
    if list(perm) == list(range(rank)):
        return x
    return ctx.b.transpose(x, [axis_of(p, rank) for p in perm])


@converter("Concat")
def concat(ctx: NodeContext) -> ConverterResult:
    xs = ctx.inputs()
    axis = axis_of(ctx.attr("axis"), type_of(xs[0]).rank)
    if len(xs) == 1:
        return xs[0]
    return ctx.b.concat(xs, axis)


def narrow(ctx: NodeContext, x: SSAValue, axis: int, start: Dim, length: Dim) -> SSAValue:
    if start == 0 and length == type_of(x).shape[axis]:
        return x
    return ctx.b.narrow(x, axis, start, length)


@converter("Split")
def split(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    shape = type_of(x).shape
    axis = axis_of(ctx.attr("axis", 0), len(shape))
    n = ctx.num_outputs
    num_outputs = ctx.attr("num_outputs") if ctx.since >= 18 else None
    dim = shape[axis]
    sizes: list[Dim]
    if ctx.has(1):
        sizes = list(ctx.ints(1, "Split's split"))
    else:
        parts = num_outputs if num_outputs is not None else n
        if num_outputs is None and isinstance(dim, int) and dim % parts:
            raise Unsupported(f"axis {axis} of size {dim} does not split into {parts} parts")
        if num_outputs is None:  # equal parts (a symbolic dim must divide: checked at run)
            sizes = [dim // parts] * parts
        elif isinstance(dim, int):
            chunk = -(-dim // parts)
            sizes = [min(chunk, dim - i * chunk) for i in range(parts)]
        else:
            part = ceildiv(dim, parts)
            sizes = [part] * (parts - 1) + [dim - (parts - 1) * part]
    total: Dim = 0
    for size in sizes:
        total = total + size
    if len(sizes) != n or (isinstance(dim, int) and total != dim):
        raise Unsupported(f"split sizes {sizes} do not cover axis {axis} of size {dim}")
    outs: list[SSAValue] = []
    start: Dim = 0
    for size in sizes:
        outs.append(narrow(ctx, x, axis, start, size))
        start += size
    return outs


@overload
def _clamp(v: int, lo: int, hi: int) -> int: ...
@overload
def _clamp(v: Dim, lo: Dim, hi: Dim) -> Dim: ...
def _clamp(v: Dim, lo: Dim, hi: Dim) -> Dim:
    return dim_max(lo, dim_min(hi, v))


SLICE_TO_END = 10**9
"""Exporters write "to the end of the axis" as a large index (INT64_MAX, INT32_MAX,
tf2onnx's 1e9). On a symbolic axis ``min(dim, end)`` stays open (a symbol may be any
size), so an index at least this large is taken as the end (and its negative as before
the start): an axis that long would hold a billion elements."""


def _from_end(v: Dim, dim: Dim) -> Dim:
    """A Slice index: negative counts from the end; on a symbolic axis, beyond
    ``SLICE_TO_END`` is past the end (or before the start: -1, which clamps)."""
    if isinstance(v, int) and not isinstance(dim, int) and abs(v) >= SLICE_TO_END:
        return dim if v > 0 else -1
    if isinstance(v, int):
        return v + dim if v < 0 else v
    lo, hi = interval(v)
    if lo >= 0:
        return v
    if hi < 0:
        return v + dim
    raise Unsupported(f"slice index {v} may be negative or not: size its dims at compile time")


def slice_tensor(
    ctx: NodeContext,
    x: SSAValue,
    starts: Sequence[Dim],
    ends: Sequence[Dim],
    axes: Sequence[int],
    steps: Sequence[int],
) -> SSAValue:
    """ONNX Slice semantics (negative and out-of-range indices clamp) as narrows (unit
    steps) or one mir.slice; on symbolic dims the clamped bounds are dim expressions."""
    shape = type_of(x).shape
    rank = len(shape)
    begin: list[Dim] = [0] * rank
    stride = [1] * rank
    length: list[Dim] = list(shape)
    seen: set[int] = set()
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        a = axis_of(a, rank)
        if a in seen:
            raise Unsupported(f"axis {a} is sliced twice")
        seen.add(a)
        if st == 0:
            raise Unsupported("slice step 0")
        dim = shape[a]
        s, e = _from_end(s, dim), _from_end(e, dim)
        n: Dim
        if st > 0:
            s, e = _clamp(s, 0, dim), _clamp(e, 0, dim)
            n = dim_max(0, ceildiv(e - s, st))
        else:
            s, e = _clamp(s, 0, dim - 1), _clamp(e, -1, dim - 1)
            n = dim_max(0, ceildiv(s - e, -st))
        begin[a], stride[a], length[a] = (s if n != 0 else 0), st, n
    changed = [i for i in range(rank) if (begin[i], stride[i], length[i]) != (0, 1, shape[i])]
    for a in [i for i in changed if not isinstance(begin[i], int)]:
        if stride[a] == 1:  # a symbolic start: a narrow
            x = narrow(ctx, x, a, begin[a], length[a])
        else:  # and a stride (x[::-1]): a gather at start + i·step
            offsets = ctx.b.mul(iota(ctx, length[a], DType.I64), ctx.dim(stride[a]))
            x = ctx.b.gather(x, ctx.b.add(offsets, ctx.dim(begin[a])), a)
    changed = [i for i in changed if isinstance(begin[i], int)]
    if not changed:
        return x
    if len(changed) == 1 and stride[changed[0]] == 1:
        return narrow(ctx, x, changed[0], begin[changed[0]], length[changed[0]])
    now = type_of(x).shape
    starts = [begin[i] if i in changed else 0 for i in range(rank)]
    steps_full = [stride[i] if i in changed and length[i] != 0 else 1 for i in range(rank)]
    sizes = [length[i] if i in changed else now[i] for i in range(rank)]
    return ctx.b.emit(mir.SliceOp(x, starts, steps_full, sizes)).results[0]  # type: ignore[arg-type]


@converter("Slice")
def slice_op(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    try:
        starts = ctx.ints(1, "Slice's starts")
        ends = ctx.ints(2, "Slice's ends")
    except NotStatic:
        from rlx_compile.frontends.onnx.ops.control import run_time_slice  # (a cycle)

        window = run_time_slice(ctx)
        if window is None:
            raise
        return window
    axes = ctx.static_ints(3, "Slice's axes") if ctx.has(3) else list(range(len(starts)))
    steps = ctx.static_ints(4, "Slice's steps") if ctx.has(4) else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise Unsupported("starts, ends, axes and steps differ in length")
    return slice_tensor(ctx, x, starts, ends, axes, steps)


@converter("Gather")
def gather(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    axis = axis_of(ctx.attr("axis", 0), type_of(x).rank)
    return ctx.b.gather(x, ctx.x(1), axis)


_INTO_I64 = frozenset(
    {DType.BOOL, DType.I8, DType.I16, DType.I32, DType.I64, DType.U8, DType.U16, DType.U32}
)
"""Element types whose values an int64 holds: a cast from them keeps a sign."""


def never_negative(v: SSAValue) -> bool:
    """Whether every element of ``v`` is >= 0 by how it is made: positions (an arg
    reduction's, TopK's indices), a constant of none below 0, or elements gathered
    from, a view of or a cast (to a wider int) of such a value."""
    while isinstance(v.owner, mir.ReshapeOp) or (
        isinstance(v.owner, mir.CastOp) and type_of(v.owner.operands[0]).dtype in _INTO_I64
    ):
        v = v.owner.operands[0]
    op = v.owner
    if isinstance(op, mir.ArgReduceOp):
        return True
    if isinstance(op, mir.TopKOp):
        return v is op.results[1]
    if isinstance(op, (mir.GatherOp, mir.GatherElementsOp)):  # elements of the data
        return never_negative(op.operands[0])
    array = constant_value(v)
    return array is not None and bool((array >= 0).all())


def take_along_axis(ctx: NodeContext, data: SSAValue, idx: SSAValue, axis: int) -> SSAValue:
    """out[i..] = data[i.. with i_axis replaced by idx[i..]] (negative indices wrap): one
    ``mir.gather_elements`` of the indices as i64."""
    if type_of(idx).dtype is not DType.I64:
        idx = ctx.b.cast(idx, DType.I64)
    return ctx.b.gather_elements(data, idx, axis)


@converter("GatherElements")
def gather_elements(ctx: NodeContext) -> ConverterResult:
    axis = axis_of(ctx.attr("axis", 0), ctx.type(0).rank)
    return take_along_axis(ctx, ctx.x(0), ctx.x(1), axis)


@converter("GatherND")
def gather_nd(ctx: NodeContext) -> ConverterResult:
    data, idx = ctx.x(0), ctx.x(1)
    dshape, ishape = type_of(data).shape, type_of(idx).shape
    b = ctx.attr("batch_dims", 0)
    k = ishape[-1]
    if not isinstance(k, int):
        raise Unsupported(f"the index depth (last dim of the indices) is symbolic: {k}")
    if b + k > len(dshape):
        raise Unsupported(f"index depth {k} exceeds the data rank {len(dshape)}")
    batch = dshape[:b]
    indexed = dshape[b : b + k]
    rest = dshape[b + k :]
    # data -> [prod(batch) · prod(indexed), *rest]; a row is found at
    # batch_offset · prod(indexed) + Σ_j idx_j · stride_j.
    flat = reshape(ctx, data, [element_count(batch) * element_count(indexed), *rest])
    idx64 = ctx.b.cast(idx, DType.I64) if type_of(idx).dtype is not DType.I64 else idx
    sizes = ctx.dims(indexed)
    wrapped = (
        idx64
        if never_negative(idx64)
        else ctx.b.where(ctx.b.compare("lt", idx64, 0), ctx.b.add(idx64, sizes), idx64)
    )
    strides = ctx.dims(row_major_strides(indexed))
    linear = ctx.b.sum(ctx.b.mul(wrapped, strides), [len(ishape) - 1])
    if b:
        inner = ishape[b:-1]
        count = element_count(batch)
        offsets = ctx.b.mul(iota(ctx, count, DType.I64), ctx.dim(element_count(indexed)))
        linear = ctx.b.add(linear, reshape(ctx, offsets, [*batch, *([1] * len(inner))]))
    return ctx.b.gather(flat, linear, 0)


@converter("Expand")
def expand(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    target = ctx.ints(1, "Expand's shape")
    shape = broadcast_shapes(type_of(x).shape, target)
    if shape == type_of(x).shape:
        return x
    return ctx.b.expand(x, list(shape))


def tile(ctx: NodeContext, x: SSAValue, repeats: Sequence[Dim]) -> SSAValue:
    shape = type_of(x).shape
    if len(repeats) != len(shape):
        raise Unsupported(f"{len(repeats)} repeats for rank {len(shape)}")
    if all(r == 1 for r in repeats):
        return x
    tiled = [d * r for d, r in zip(shape, repeats, strict=True)]
    # An axis of size 1 repeats by broadcasting: a batch tiled from one row is one expand,
    # as onnxruntime's Tile is one kernel. Another repeated axis gets an axis of size 1
    # before it to broadcast: [d0, d1] -> [1, d0, d1] -> [r0, d0, d1] -> [r0·d0, d1].
    split = {i for i, (d, r) in enumerate(zip(shape, repeats, strict=True))
             if r != 1 and not (isinstance(d, int) and d == 1)}  # fmt: skip
    if not split:
        return ctx.b.expand(x, tiled)
    interleaved = [v for i, d in enumerate(shape) for v in ((1, d) if i in split else (d,))]
    grown = [v for i, (d, r) in enumerate(zip(shape, repeats, strict=True))
             for v in ((r, d) if i in split else (d * r,))]  # fmt: skip
    return reshape(ctx, ctx.b.expand(reshape(ctx, x, interleaved), grown), tiled)


@converter("Tile")
def tile_op(ctx: NodeContext) -> ConverterResult:
    return tile(ctx, ctx.x(0), ctx.ints(1, "Tile's repeats"))


_PAD_MODES = ("constant", "reflect", "edge", "wrap")


@converter("Pad")
def pad(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    shape = type_of(x).shape
    rank = len(shape)
    mode = ctx.check_attr("mode", _PAD_MODES, "constant")
    pads = ctx.ints(1, "Pad's pads")
    value = 0.0
    if ctx.has(2):
        cv = ctx.const(2, "Pad's constant_value").reshape(-1)
        value = float(cv[0]) if cv.size else 0.0
    axes = ctx.static_ints(3, "Pad's axes") if ctx.has(3) else list(range(rank))
    if len(pads) != 2 * len(axes):
        raise Unsupported(f"{len(pads)} pads for {len(axes)} axes")
    full: list[Dim] = [0] * (2 * rank)
    for j, a in enumerate(axes):
        a = axis_of(a, rank)
        full[a], full[rank + a] = pads[j], pads[len(axes) + j]
    signs = [_pad_sign(p) for p in full]
    # Numbers pad with mir.pad; a symbolic amount (a mask padded to a key length) is a
    # block of the value concatenated on (constant mode).
    positive = [p if isinstance(p, int) and p > 0 else 0 for p in full]
    y = ctx.b.pad(x, positive, mode, value) if any(positive) else x
    for i, (p, sign) in enumerate(zip(full, signs, strict=True)):
        if isinstance(p, int) or sign <= 0:
            continue
        if mode != "constant":
            raise Unsupported(f"{mode} padding by a symbolic amount {p}")
        axis = i % rank
        block = ctx.full([p if a == axis else d for a, d in enumerate(type_of(y).shape)],
                         value, type_of(y).dtype)  # fmt: skip
        y = ctx.b.concat([block, y] if i < rank else [y, block], axis)
    if any(sign < 0 for sign in signs):
        yshape = type_of(y).shape
        starts = [-p if signs[i] < 0 else 0 for i, p in enumerate(full[:rank])]
        ends = [yshape[i] + (p if signs[rank + i] < 0 else 0) for i, p in enumerate(full[rank:])]
        y = slice_tensor(ctx, y, starts, ends, list(range(rank)), [1] * rank)
    return y


def _pad_sign(p: Dim) -> int:
    """Whether a pad amount grows (1), crops (-1) or keeps (0) its axis: decided for
    every size, else the node is refused."""
    lo, hi = interval(p)
    if lo == hi == 0:
        return 0
    if lo >= 0:
        return 1
    if hi <= 0:
        return -1
    raise Unsupported(f"pad amount {p} may be negative or not: size its dims at compile time")


def _static_channels(ctx: NodeContext, what: str) -> tuple[Dim, int, Dim, Dim]:
    """An NCHW input's dims, the channels static (the batch and spatial dims may be
    symbolic: the moves only split or merge them)."""
    if ctx.type(0).rank != 4:
        raise Unsupported(f"{what} of a rank-{ctx.type(0).rank} input (NCHW expected)")
    n, c, h, w = ctx.shape(0)
    if not isinstance(c, int):
        raise Unsupported(f"{what} needs a static channel dim, got {c}")
    return n, c, h, w


@converter("DepthToSpace")
def depth_to_space(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    n, c, h, w = _static_channels(ctx, "DepthToSpace")
    bs = ctx.attr("blocksize")
    mode = ctx.check_attr("mode", ("DCR", "CRD"), "DCR")
    if mode == "DCR":
        y = ctx.b.transpose(reshape(ctx, x, [n, bs, bs, c // bs**2, h, w]), [0, 3, 4, 1, 5, 2])
    else:
        y = ctx.b.transpose(reshape(ctx, x, [n, c // bs**2, bs, bs, h, w]), [0, 1, 4, 2, 5, 3])
    return reshape(ctx, y, [n, c // bs**2, h * bs, w * bs])


@converter("SpaceToDepth")
def space_to_depth(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    n, c, h, w = _static_channels(ctx, "SpaceToDepth")
    bs = ctx.attr("blocksize")
    mode = ctx.check_attr("mode", ("DCR", "CRD"), "DCR")
    perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    hb, wb = floordiv(h, bs), floordiv(w, bs)  # whole blocks (ONNX requires it)
    y = ctx.b.transpose(reshape(ctx, x, [n, c, hb, bs, wb, bs]), perm)
    return reshape(ctx, y, [n, c * bs * bs, hb, wb])


# ---------------------------------------------------------------------------------
# Shape-producing ops: constants when shapes are static
# ---------------------------------------------------------------------------------


@converter("Shape")
def shape_op(ctx: NodeContext) -> ConverterResult:
    shape = type_of(ctx.x(0)).shape
    rank = len(shape)
    start = ctx.attr("start", 0)
    end = ctx.attr("end", rank)
    start = _clamp(start + rank if start < 0 else start, 0, rank)
    end = _clamp(end + rank if end < 0 else end, 0, rank)
    part = shape[start:end]
    if any(isinstance(d, str) for d in part):
        raise Unsupported(f"Shape of symbolic dims {list(part)}")
    return ctx.constant(np.asarray(part, np.int64).reshape(len(part)))


@converter("Size")
def size(ctx: NodeContext) -> ConverterResult:
    shape = ctx.static_shape(0)
    return ctx.constant(np.asarray(numel(shape), np.int64))


@converter("ConstantOfShape")
def constant_of_shape(ctx: NodeContext) -> ConverterResult:
    shape, fill = _constant_of_shape_operands(ctx)
    arr = _filled(shape, fill)
    if arr is None:
        return ctx.full(shape, fill[0].item(), DType.from_numpy(fill.dtype))  # a splat
    return ctx.constant(arr)


def constant_of_shape_array(ctx: NodeContext) -> np.ndarray | None:
    """The array a ConstantOfShape node makes where its converter makes a constant (the
    importer keeps it as this array until a converter reads it as data); None where the
    converter makes a splat instead (a symbolic or large shape)."""
    return _filled(*_constant_of_shape_operands(ctx))


def _constant_of_shape_operands(ctx: NodeContext) -> tuple[list[Dim], np.ndarray]:
    shape = ctx.ints(0, "ConstantOfShape's shape")
    value = ctx.attr("value")
    fill = np.zeros(1, np.float32) if value is None else value.reshape(-1)
    if any(isinstance(d, int) and d < 0 for d in shape):
        raise Unsupported(f"ConstantOfShape of a negative size {shape}")
    return shape, fill


def _filled(shape: list[Dim], fill: np.ndarray) -> np.ndarray | None:
    """``shape`` filled with ``fill``'s value; None for a symbolic or large shape."""
    sizes = [d for d in shape if isinstance(d, int)]
    if len(sizes) < len(shape) or numel(sizes) > FOLD_LIMIT:
        return None
    return np.full(sizes, fill[0], dtype=fill.dtype)


@converter("Constant")
def constant(ctx: NodeContext) -> ConverterResult:
    return ctx.constant(constant_array(ctx))


_CONSTANT_KINDS = {
    "value_float": np.float32,
    "value_floats": np.float32,
    "value_int": np.int64,
    "value_ints": np.int64,
}


def constant_array(ctx: NodeContext) -> np.ndarray:
    """The value a Constant node holds (the importer keeps it as this array until a
    converter reads it as data)."""
    for name in ("sparse_value", "value_string", "value_strings"):
        if ctx.has_attr(name):
            ctx.attr(name)
            raise Unsupported(f"Constant with {name}")
    if ctx.has_attr("value"):
        return np.asarray(ctx.attr("value"))
    for name, dtype in _CONSTANT_KINDS.items():
        if ctx.has_attr(name):
            return np.asarray(ctx.attr(name), dtype)
    raise Unsupported("Constant without a value")


@converter("EyeLike")
def eye_like(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    rows, cols = ctx.static_shape(0)
    ctx.check_materialized(rows * cols, "EyeLike")
    dtype = dtype_of(ctx.attr("dtype")) if ctx.has_attr("dtype") else type_of(x).dtype
    k = ctx.attr("k", 0)
    return ctx.constant(np.eye(rows, cols, k).astype(dtype.numpy))


@converter("Range")
def range_op(ctx: NodeContext) -> ConverterResult:
    start, limit, delta = (ctx.const(i, "Range's operand").reshape(-1)[0] for i in range(3))
    if any(isinstance(v, DimExpr) for v in (start, limit, delta)):
        # float operands of whole values (torch.arange(w, dtype=float)) as ints
        ends = [np.asarray(v).item() for v in (start, limit, delta)]
        ends = [int(v) if isinstance(v, float) and v.is_integer() else v for v in ends]
        if not all(isinstance(v, int | DimExpr) for v in ends):
            raise Unsupported(f"Range over fractions {ends[0]}, {ends[2]} to a symbolic limit")
        return symbolic_range(ctx, *ends)
    if delta == 0:
        raise Unsupported("Range with delta 0")
    n = max(int(np.ceil((limit - start) / delta)), 0)
    if n > FOLD_LIMIT and all(np.asarray(v).dtype.kind in "iu" for v in (start, limit, delta)):
        return symbolic_range(ctx, int(start), int(limit), int(delta))  # an iota op
    ctx.check_materialized(n, "Range")
    values = start + np.arange(n, dtype=start.dtype) * delta
    return ctx.constant(np.asarray(values, start.dtype))


def iota(ctx: NodeContext, n: Dim, dtype: DType) -> SSAValue:
    """[0, 1, ..., n - 1] (``GraphBuilder.iota``; a constant of at most FOLD_LIMIT
    elements, within the import's cap)."""
    if isinstance(n, int) and n <= FOLD_LIMIT:
        ctx.check_materialized(n, "a constant")
    return ctx.b.iota(n, dtype, FOLD_LIMIT)


def symbolic_range(ctx: NodeContext, start: Dim, limit: Dim, delta: Dim) -> SSAValue:
    """Range whose length depends on symbolic dims: start + iota(n) * delta."""
    if not isinstance(delta, int) or delta == 0:
        raise Unsupported(f"Range with a symbolic or zero delta {delta}")
    n = dim_max(0, ceildiv(limit - start, delta) if delta > 0 else ceildiv(start - limit, -delta))
    shape_value = ctx.shape_value(0)
    dtype = shape_value.dtype if shape_value else DType.from_numpy(ctx.const(0).dtype)
    values = iota(ctx, n, DType.I64)
    if delta != 1:
        values = ctx.b.mul(values, ctx.constant(np.asarray(delta, np.int64)))
    if isinstance(start, DimExpr):  # the start as data (mir.dims)
        values = ctx.b.add(values, ctx.b.reshape(ctx.b.cast(ctx.x(0), DType.I64), []))
    elif start != 0:
        values = ctx.b.add(values, ctx.constant(np.asarray(start, np.int64)))
    return values if dtype is DType.I64 else ctx.b.cast(values, dtype)


@converter("OneHot")
def one_hot(ctx: NodeContext) -> ConverterResult:
    idx, values = ctx.x(0), ctx.x(2)
    depth = ctx.int_operand(1, "OneHot's depth")
    rank = type_of(idx).rank + 1
    axis = axis_of(ctx.attr("axis", -1), rank)
    idx64 = ctx.b.cast(idx, DType.I64) if type_of(idx).dtype is not DType.I64 else idx
    wrapped = ctx.b.where(ctx.b.compare("lt", idx64, 0), ctx.b.add(idx64, depth), idx64)
    positions = np.arange(depth, dtype=np.int64).reshape(
        [depth if i == axis else 1 for i in range(rank)]
    )
    hot = ctx.b.compare("eq", unsqueeze(ctx, wrapped, [axis]), ctx.constant(positions))
    off = ctx.b.gather(values, ctx.constant(np.asarray(0, np.int64)), 0)
    on = ctx.b.gather(values, ctx.constant(np.asarray(1, np.int64)), 0)
    return ctx.b.where(hot, on, off)


@converter("Trilu")
def trilu(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    rows, cols = type_of(x).shape[-2:]
    k = ctx.const(1, "Trilu's k").reshape(-1)[0] if ctx.has(1) else 0
    k = k if isinstance(k, DimExpr) else int(k)
    upper = ctx.attr("upper", 1)
    if isinstance(rows, int) and isinstance(cols, int) and isinstance(k, int):
        ones = np.ones((rows, cols), dtype=bool)
        mask = ctx.constant(np.triu(ones, k) if upper else np.tril(ones, k))
    else:  # col - row against k, from iotas of the symbolic sizes
        col = ctx.b.reshape(iota(ctx, cols, DType.I64), [1, cols])
        row = ctx.b.reshape(iota(ctx, rows, DType.I64), [rows, 1])
        mask = ctx.b.compare("ge" if upper else "le", ctx.b.sub(col, row), ctx.dim(k))
    return ctx.b.where(mask, x, ctx.const_like(0, x))


@converter("CenterCropPad")
def center_crop_pad(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    shape = ctx.static_shape(0)
    rank = len(shape)
    target = ctx.static_ints(1, "CenterCropPad's shape")
    axes = [axis_of(a, rank) for a in ctx.attr("axes", list(range(rank)))]
    if len(target) != len(axes):
        raise Unsupported(f"{len(target)} sizes for {len(axes)} axes")
    pads = [0] * (2 * rank)
    starts, ends = [0] * rank, list(shape)
    for a, t in zip(axes, target, strict=True):
        if t < shape[a]:
            starts[a] = (shape[a] - t) // 2
            ends[a] = starts[a] + t
        elif t > shape[a]:
            pads[a] = (t - shape[a]) // 2
            pads[rank + a] = t - shape[a] - pads[a]
    y = slice_tensor(ctx, x, starts, ends, list(range(rank)), [1] * rank)
    return ctx.b.pad(y, pads) if any(pads) else y


@converter("Dropout")
def dropout(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    ctx.attr("seed")
    if ctx.has(2) and bool(ctx.const(2, "Dropout's training_mode").reshape(-1)[0]):
        # Training mode draws a random mask -- except with ratio 0, which keeps everything.
        ratio = ctx.const(1, "Dropout's ratio").reshape(-1)[0] if ctx.has(1) else 0.5
        if ratio != 0:
            raise Unsupported("training_mode=true with a non-zero ratio (random masks)")
    mask = None
    if ctx.output_used(1):
        mask = ctx.full(type_of(x).shape, True, DType.BOOL)
    return [x, mask]


_REDUCTIONS = ("none", "add", "mul", "max", "min")


@converter("ScatterND")
def scatter_nd(ctx: NodeContext) -> ConverterResult:
    reduction = ctx.check_attr("reduction", _REDUCTIONS, "none")
    op = mir.ScatterNdOp(ctx.x(0), ctx.x(1), ctx.x(2), reduction)
    return ctx.b.emit(op).results[0]


@converter("ScatterElements")
def scatter_elements(ctx: NodeContext) -> ConverterResult:
    # Element (i..) of the updates goes to data[i.. with i_axis = idx[i..]]: the full
    # index tuples are the coordinate grids with the axis taken from idx.
    data, idx, upd = ctx.x(0), ctx.x(1), ctx.x(2)
    rank = type_of(data).rank
    axis = axis_of(ctx.attr("axis", 0), rank)
    reduction = ctx.check_attr("reduction", _REDUCTIONS, "none")
    ishape = list(type_of(idx).shape)
    idx64 = ctx.b.cast(idx, DType.I64) if type_of(idx).dtype is not DType.I64 else idx
    parts = []
    for d in range(rank):
        if d == axis:
            parts.append(reshape(ctx, idx64, [*ishape, 1]))
        elif all(isinstance(n, int) for n in ishape):
            static = [int(n) for n in ishape]
            grid = np.broadcast_to(
                np.arange(static[d], dtype=np.int64).reshape(
                    [static[d] if i == d else 1 for i in range(rank)]
                ),
                static,
            )
            parts.append(ctx.constant(np.ascontiguousarray(grid).reshape(*static, 1)))
        else:  # symbolic index sizes (a GNN's scatter over its edges): the grid from an iota
            line = reshape(ctx, iota(ctx, ishape[d], DType.I64),
                           [ishape[d] if i == d else 1 for i in range(rank)] + [1])  # fmt: skip
            parts.append(ctx.b.expand(line, [*ishape, 1]))
    full = ctx.b.concat(parts, rank) if len(parts) > 1 else parts[0]
    return ctx.b.emit(mir.ScatterNdOp(data, full, upd, reduction)).results[0]


@converter("BitCast")
def bitcast(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    to = dtype_of(ctx.attr("to"))
    if to is type_of(x).dtype:
        return x
    if to.itemsize != type_of(x).dtype.itemsize:
        raise Unsupported(f"BitCast between widths {type_of(x).dtype.value} -> {to.value}")
    return ctx.b.emit(mir.BitcastOp(x, to)).results[0]


@converter("TensorScatter")
def tensor_scatter(ctx: NodeContext) -> ConverterResult:
    """The KV-cache write: cache position p of batch row b takes update row
    j = p - write_index[b] (mod max_len when circular) where 0 <= j < seq_len. A gather
    of the update along the axis and a select, so the write positions may be data."""
    b = ctx.b
    past, update = ctx.x(0), ctx.x(1)
    shape, ushape = ctx.static_shape(0), ctx.static_shape(1)
    mode = ctx.check_attr("mode", ("linear", "circular"), "linear")
    axis = axis_of(ctx.attr("axis", -2), len(shape))
    if axis == 0:
        raise Unsupported("axis 0 (the batch axis)")
    batch, max_len, seq = shape[0], shape[axis], ushape[axis]
    positions = ctx.constant(np.arange(max_len, dtype=np.int64).reshape(1, max_len))
    if ctx.has(2):
        start = b.reshape(b.cast(ctx.x(2), DType.I64), [batch, 1])
        row = b.sub(positions, start)  # [batch, max_len]
    else:
        row = b.expand(positions, [batch, max_len])
    if mode == "circular":
        row = b.binary(mir.ModOp, row, max_len)
    written = b.binary(mir.AndOp, b.compare("ge", row, 0), b.compare("lt", row, seq))
    # Broadcast [batch, max_len] over the other axes of the cache.
    lifted = [batch] + [1] * (len(shape) - 1)
    lifted[axis] = max_len
    row = b.expand(b.reshape(b.minimum(b.maximum(row, 0), seq - 1), lifted), list(shape))
    written = b.reshape(written, lifted)
    return b.where(written, take_along_axis(ctx, update, row, axis), past)


# ---------------------------------------------------------------------------------
# Ops whose output shape depends on values: they import when those values are known at
# compile time (constants, folded subgraphs, or graph inputs bound with input_values --
# rlx_compile.backend compiles once per distinct value). Otherwise the import error
# names the tensor that would have to be known.
# ---------------------------------------------------------------------------------


@converter("Compress")
def compress(ctx: NodeContext) -> ConverterResult:
    x = ctx.x(0)
    keep = np.flatnonzero(ctx.const(1, "Compress's condition").reshape(-1).astype(bool))
    axis = ctx.attr("axis", None)
    if axis is None:
        x = reshape(ctx, x, [numel(ctx.static_shape(0))])
        axis = 0
    axis = axis_of(axis, type_of(x).rank)
    length = type_of(x).shape[axis]
    if isinstance(length, int) and keep.size and keep[-1] >= length:
        raise Unsupported(f"condition selects index {keep[-1]} of an axis of {length}")
    return ctx.b.gather(x, ctx.constant(keep.astype(np.int64)), axis)


@converter("NonZero")
def non_zero(ctx: NodeContext) -> ConverterResult:
    x = ctx.const(0, "NonZero's input")
    return ctx.constant(np.array(np.nonzero(x if x.ndim else x.reshape(1)), np.int64))


@converter("Unique")
def unique(ctx: NodeContext) -> ConverterResult:
    x = ctx.const(0, "Unique's input")
    axis = ctx.attr("axis", None)
    ordered = bool(ctx.attr("sorted", 1))
    if axis is not None:
        axis = axis_of(axis, x.ndim)
    flat = x.reshape(-1) if axis is None else x
    y, first, inverse, counts = np.unique(
        flat, return_index=True, return_inverse=True, return_counts=True, axis=axis
    )
    if not ordered:  # in order of first occurrence
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        first, counts, inverse = first[order], counts[order], rank[inverse.reshape(-1)]
        y = np.take(flat, first, axis=0 if axis is None else axis)
    return [
        ctx.constant(np.asarray(y, x.dtype)),
        ctx.constant(first.astype(np.int64)),
        ctx.constant(np.asarray(inverse, np.int64).reshape(-1)),
        ctx.constant(counts.astype(np.int64)),
    ]
