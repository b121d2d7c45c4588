"""Einsum (as transposes, reshapes, reductions and batched matmuls), signal windows,
ReverseSequence, AffineGrid and the control-flow ops (If, Loop, Scan)."""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.dim_expr import DimExpr
from rlx_compile.dialects.types import Dim, DType, element_count
from rlx_compile.folding import constant_value
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
from rlx_compile.frontends.onnx.ops.control import (
    UNROLL_MAX_ITERATIONS,
    appending_loop_region,
    loop_region,
    runtime_if,
    scan_region,
    squeeze_if_one,
    subgraph,
)
from rlx_compile.frontends.onnx.ops.shape import reshape, select, stack, take_along_axis

# ---------------------------------------------------------------------------------
# Einsum
# ---------------------------------------------------------------------------------

_ELLIPSIS_LETTERS = string.ascii_uppercase[::-1]  # stand-ins for "..." dims


def _parse_einsum(equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """Operand subscripts and output subscripts, with "..." spelled as letters
    (right-aligned across operands, as broadcasting aligns them)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise Unsupported(f"equation '{equation}' has {len(terms)} operands, not {len(ranks)}")
    n_ell = max(
        (r - len(t.replace("...", "")) for t, r in zip(terms, ranks, strict=True) if "..." in t),
        default=0,
    )
    ell = _ELLIPSIS_LETTERS[:n_ell][::-1]
    out_terms = []
    for t, r in zip(terms, ranks, strict=True):
        if "..." in t:
            k = r - len(t.replace("...", ""))
            t = t.replace("...", ell[n_ell - k :])
        if len(t) != r or not all(c.isalpha() for c in t):
            raise Unsupported(f"subscripts '{t}' do not fit a rank-{r} operand")
        out_terms.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {c: sum(t.count(c) for t in out_terms) for c in set("".join(out_terms))}
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return out_terms, out


def _diagonal(ctx: NodeContext, x: SSAValue, term: str) -> tuple[SSAValue, str]:
    """Take the diagonal of every letter repeated within one operand's subscripts."""
    while True:
        repeated = next((c for c in term if term.count(c) > 1), None)
        if repeated is None:
            return x, term
        i = term.index(repeated)
        j = term.index(repeated, i + 1)
        shape = list(type_of(x).shape)
        n = shape[i]
        if not isinstance(n, int) or shape[j] != n:
            raise Unsupported(f"diagonal of unequal or symbolic dims in '{term}'")
        rest = [a for a in range(len(term)) if a not in (i, j)]
        x = ctx.b.transpose(x, [*rest, i, j])
        lead = [shape[a] for a in rest]
        flat = reshape(ctx, x, [*lead, n * n])  # the diagonal is every (n+1)-th element
        starts = [0] * (len(lead) + 1)
        steps = [1] * len(lead) + [n + 1]
        x = ctx.b.emit(mir.SliceOp(flat, starts, steps, [*lead, n])).results[0]
        term = "".join(term[a] for a in rest) + repeated


def _sum_out(ctx: NodeContext, x: SSAValue, term: str, keep: set[str]) -> tuple[SSAValue, str]:
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    return ctx.b.sum(x, axes), "".join(c for c in term if c in keep)


def _permute(ctx: NodeContext, x: SSAValue, term: str, order: str) -> SSAValue:
    perm = [term.index(c) for c in order]
    return x if perm == sorted(perm) else ctx.b.transpose(x, perm)


def _contract(
    ctx: NodeContext, a: SSAValue, ta: str, b: SSAValue, tb: str, keep: set[str]
) -> tuple[SSAValue, str]:
    """Two operands -> one: batch letters (both, kept), contracted (both, not kept),
    and each side's own letters, as one batched matmul. The batch letters stay dims of
    their own (the matmul broadcasts them); the right operand is read as [batch, right,
    contract] when that is its order, through a transpose of its last two dims that
    fusion folds into the matmul (``x · yᵀ``), instead of permuted to [batch, contract,
    right]."""
    dims: dict[str, Dim] = {}
    for t, v in ((ta, a), (tb, b)):
        for c, d in zip(t, type_of(v).shape, strict=True):
            if dims.get(c, 1) == 1:
                dims[c] = d
    batch = "".join(c for c in ta if c in tb and c in keep)
    contract = "".join(c for c in ta if c in tb and c not in keep)
    left = "".join(c for c in ta if c not in tb)
    right = "".join(c for c in tb if c not in ta)
    batch_dims = [dims[c] for c in batch]

    def size(letters: str) -> Dim:
        return element_count([dims[c] for c in letters])

    def operand(x: SSAValue, t: str, order: str, shape: list[Dim]) -> SSAValue:
        x = _expand_to(ctx, _permute(ctx, x, t, order), order, dims)
        return reshape(ctx, x, shape)

    if batch:
        a3 = operand(a, ta, batch + left + contract, [*batch_dims, size(left), size(contract)])
    else:  # the left letters stay dims too: the matmul broadcasts the right operand
        a3 = operand(a, ta, left + contract, [*(dims[c] for c in left), size(contract)])
    if tb == batch + right + contract and right and contract:
        b3 = operand(b, tb, tb, [*batch_dims, size(right), size(contract)])
        b3 = ctx.b.transpose(b3, mir.swap_last_two_perm(len(batch_dims) + 2))
    else:
        b3 = operand(b, tb, batch + contract + right, [*batch_dims, size(contract), size(right)])
    y = ctx.b.matmul(a3, b3)
    term = batch + left + right
    return reshape(ctx, y, [dims[c] for c in term]), term


def _expand_to(ctx: NodeContext, x: SSAValue, term: str, dims: dict[str, Dim]) -> SSAValue:
    """Broadcast size-1 dims of an operand to the size the other operand has."""
    want = [dims[c] for c in term]
    return x if list(type_of(x).shape) == want else ctx.b.expand(x, want)


@converter("Einsum")
def einsum(ctx: NodeContext) -> ConverterResult:
    xs = ctx.inputs()
    terms, out = _parse_einsum(ctx.attr("equation"), [type_of(x).rank for x in xs])
    values = []
    for i, (x, t) in enumerate(zip(xs, terms, strict=True)):
        x, t = _diagonal(ctx, x, t)
        later = set(out).union(*terms[i + 1 :], *terms[:i])
        x, t = _sum_out(ctx, x, t, later)
        values.append((x, t))
    acc, term = values[0]
    for i, (x, t) in enumerate(values[1:], start=1):
        keep = set(out).union(*(tt for _, tt in values[i + 1 :]))
        acc, term = _contract(ctx, acc, term, x, t, keep)
        acc, term = _sum_out(ctx, acc, term, keep)
    acc, term = _sum_out(ctx, acc, term, set(out))
    if sorted(term) != sorted(out):
        raise Unsupported(f"output subscripts '{out}' are not produced")
    return _permute(ctx, acc, term, out)


# ---------------------------------------------------------------------------------
# Windows
# ---------------------------------------------------------------------------------


def _window(ctx: NodeContext) -> tuple[np.ndarray, int, DType]:
    size = ctx.int_operand(0, f"{ctx.op_type}'s size")
    periodic = ctx.attr("periodic", 1)
    dtype = dtype_of(ctx.attr("output_datatype", 1))
    return np.arange(size, dtype=np.float64), size if periodic else size - 1, dtype


@converter("HannWindow")
def hann_window(ctx: NodeContext) -> ConverterResult:
    n, length, dtype = _window(ctx)
    return ctx.constant((np.sin(n * np.pi / length) ** 2).astype(dtype.numpy))


@converter("HammingWindow")
def hamming_window(ctx: NodeContext) -> ConverterResult:
    n, length, dtype = _window(ctx)
    alpha = 25.0 / 46.0
    return ctx.constant((alpha - np.cos(n * np.pi * 2 / length) * (1 - alpha)).astype(dtype.numpy))


@converter("BlackmanWindow")
def blackman_window(ctx: NodeContext) -> ConverterResult:
    n, length, dtype = _window(ctx)
    y = 0.42 - 0.5 * np.cos(n * np.pi * 2 / length) + 0.08 * np.cos(n * np.pi * 4 / length)
    return ctx.constant(y.astype(dtype.numpy))


@converter("MelWeightMatrix")
def mel_weight_matrix(ctx: NodeContext) -> ConverterResult:
    """The [dft_length/2 + 1, num_mel_bins] triangular filter bank, as ONNX defines it
    (bins spaced over num_mel_bins + 2 steps of the mel range, on the integer grid of
    (dft_length + 1)·f // sample_rate)."""

    def scalar(i: int, what: str) -> float:
        return ctx.const(i, f"MelWeightMatrix's {what}").reshape(-1)[0].item()

    bins, dft_length = int(scalar(0, "num_mel_bins")), int(scalar(1, "dft_length"))
    rate = scalar(2, "sample_rate")
    low, high = scalar(3, "lower_edge_hertz"), scalar(4, "upper_edge_hertz")
    dtype = dtype_of(ctx.attr("output_datatype", 1))
    mel_low = 2595 * np.log1p(low / 700) / np.log(10)
    mel_high = 2595 * np.log1p(high / 700) / np.log(10)
    mel = np.arange(bins + 2) * ((mel_high - mel_low) / (bins + 2)) + mel_low
    hertz = 700 * np.expm1(mel / 2595 * np.log(10))
    edges = (((dft_length + 1) * hertz) // rate).astype(int)
    out = np.zeros((dft_length // 2 + 1, bins))
    for i in range(bins):
        left, center, right = edges[i], edges[i + 1], edges[i + 2]
        if center == left:
            out[center, i] = 1
        else:
            j = np.arange(left, center + 1)
            out[j, i] = (j - left) / (center - left)
        if right > center:
            j = np.arange(center, right)
            out[j, i] = (right - j) / (right - center)
    return ctx.constant(out.astype(dtype.numpy))


# ---------------------------------------------------------------------------------
# ReverseSequence, AffineGrid
# ---------------------------------------------------------------------------------


@converter("ReverseSequence")
def reverse_sequence(ctx: NodeContext) -> ConverterResult:
    # out[t, b] = x[lens[b] - 1 - t, b] for t < lens[b], else x[t, b]: a gather along
    # the time axis with indices computed from the lengths.
    x, lens = ctx.x(0), ctx.x(1)
    shape = ctx.static_shape(0)
    rank = len(shape)
    batch_axis = axis_of(ctx.attr("batch_axis", 1), rank)
    time_axis = axis_of(ctx.attr("time_axis", 0), rank)
    b = ctx.b
    n = b.cast(lens, DType.I64) if type_of(lens).dtype is not DType.I64 else lens
    n = reshape(ctx, n, [shape[batch_axis] if i == batch_axis else 1 for i in range(rank)])
    t = ctx.constant(
        np.arange(shape[time_axis], dtype=np.int64).reshape(
            [shape[time_axis] if i == time_axis else 1 for i in range(rank)]
        )
    )
    idx = b.where(b.compare("lt", t, n), b.sub(b.sub(n, 1), t), t)
    idx = b.expand(idx, list(shape)) if tuple(type_of(idx).shape) != shape else idx
    return take_along_axis(ctx, x, idx, time_axis)


@converter("AffineGrid")
def affine_grid(ctx: NodeContext) -> ConverterResult:
    theta = ctx.x(0)
    size = ctx.static_ints(1, "AffineGrid's size")
    align = ctx.attr("align_corners", 0)
    spatial = size[2:]
    if len(spatial) not in (2, 3):
        raise Unsupported(f"{len(spatial)}-d grids")
    axes = []
    for d in spatial:
        if align:
            axes.append(np.linspace(-1, 1, d) if d > 1 else np.array([-1.0]))
        else:
            axes.append((2 * np.arange(d) + 1) / d - 1)
    mesh = np.meshgrid(*axes, indexing="ij")
    # Homogeneous coordinates (x, y[, z], 1) with x the last spatial axis.
    coords = [*reversed(mesh), np.ones(tuple(spatial))]
    base = np.stack(coords, axis=-1).reshape(numel(spatial), len(spatial) + 1)
    grid_t = ctx.constant(np.ascontiguousarray(base.T).astype(type_of(theta).dtype.numpy))
    y = ctx.b.matmul(theta, grid_t)  # [N, k, points]
    y = ctx.b.transpose(y, [0, 2, 1])
    return reshape(ctx, y, [type_of(theta).shape[0], *spatial, len(spatial)])


# ---------------------------------------------------------------------------------
# Control flow with a static condition
# ---------------------------------------------------------------------------------


@converter("If")
def if_(ctx: NodeContext) -> ConverterResult:
    """An If whose condition is known at compile time (shape checks, constants) is its
    taken branch, inlined; one known only at run time is a ``mir.if`` (``control``)."""
    try:
        cond = ctx.const(0, "If's condition").reshape(-1)
    except NotStatic:
        return squeeze_if_one(ctx) or runtime_if(ctx)
    if cond.size != 1:
        raise Unsupported("a condition of more than one element")
    branch = "then_branch" if bool(cond[0]) else "else_branch"
    ctx.used_attrs.update(("then_branch", "else_branch"))
    graph = next((a.g for a in ctx.node.attribute if a.name == branch), None)
    if graph is None:
        raise Unsupported(f"no {branch}")
    for out in graph.output:
        if out.type.HasField("sequence_type") or out.type.HasField("optional_type"):
            raise Unsupported("branches with sequence or optional outputs")
    outs = ctx.inline_subgraph(graph, [], "", f"the {branch}")
    for out, value in zip(graph.output, outs, strict=True):
        if not isinstance(value, SSAValue):
            raise Unsupported(f"'{out.name}' is {value.kind}, used where a tensor is expected")
    return outs


class UnrolledBody:
    """A loop body (a subgraph) inlined once per iteration: ``step`` binds its inputs,
    converts its nodes and returns its outputs (tensors, or sequences and optionals).
    The importer binds the body's names for each step and restores what they shadowed."""

    def __init__(self, ctx: NodeContext, attr: str):
        body = next((a.g for a in ctx.node.attribute if a.name == attr), None)
        if body is None:
            raise Unsupported(f"no {attr}")
        ctx.used_attrs.add(attr)
        self.ctx, self.body = ctx, body

    def step(self, t: int | str, inputs: Sequence[Any]) -> list[Any]:
        return self.ctx.inline_subgraph(self.body, inputs, f"{t}/", "the body")


@converter("Scan")
def scan(ctx: NodeContext) -> ConverterResult:
    """Scan unrolled over its (static) sequence length: each step binds the states and
    that step's slices of the scan inputs; the per-step scan outputs are stacked."""
    body = UnrolledBody(ctx, "body")
    m = ctx.attr("num_scan_inputs")
    n = ctx.num_inputs - m
    k = len(body.body.output) - n
    in_axes = list(ctx.attr("scan_input_axes", [0] * m))
    in_dirs = list(ctx.attr("scan_input_directions", [0] * m))
    out_axes = list(ctx.attr("scan_output_axes", [0] * k))
    out_dirs = list(ctx.attr("scan_output_directions", [0] * k))
    if len(body.body.input) != n + m or m < 1:
        raise Unsupported(f"a body of {len(body.body.input)} inputs for {n} states and {m} scans")
    states = [ctx.x(i) for i in range(n)]
    scans = [ctx.x(n + i) for i in range(m)]
    return unrolled_scan(ctx, body, states, scans, (in_axes, in_dirs, out_axes, out_dirs))


def unrolled_scan(
    ctx: NodeContext,
    body: UnrolledBody,
    states: list[SSAValue],
    scans: list[SSAValue],
    layout: tuple[list[int], list[int], list[int], list[int]],
    tag: str = "",
) -> list[SSAValue]:
    """The final states and stacked scan outputs of a Scan-9+ over ``scans``, given
    (input axes, input directions, output axes, output directions); ``tag`` tells the
    steps of one unrolling from another's. Unrolled over a static length of at most
    ``UNROLL_MAX_ITERATIONS`` steps; a longer or symbolic one is one ``mir.loop``."""
    in_axes, in_dirs, out_axes, out_dirs = layout
    n, k = len(states), len(body.body.output) - len(states)
    in_axes = [axis_of(a, type_of(x).rank) for a, x in zip(in_axes, scans, strict=True)]
    steps = type_of(scans[0]).shape[in_axes[0]]
    if not isinstance(steps, int) or steps > UNROLL_MAX_ITERATIONS:
        layout = (in_axes, in_dirs, out_axes, out_dirs)
        return scan_region(ctx, body.body, states, scans, layout, steps, tag)
    collected: list[list[SSAValue]] = [[] for _ in range(k)]
    for t in range(steps):
        slices = [
            select(ctx, x, axis, steps - 1 - t if reverse else t)
            for x, axis, reverse in zip(scans, in_axes, in_dirs, strict=True)
        ]
        outs = body.step(f"{tag}{t}", states + slices)
        states = outs[:n]
        for j in range(k):
            collected[j].append(outs[n + j])
    stacked = [
        stack(ctx, collected[j][::-1] if out_dirs[j] else collected[j], out_axes[j])
        for j in range(k)
    ]
    return [*states, *stacked]


class _NotUnrolled(Exception):
    """The loop turned out not to unroll (a condition known only at run time, too many
    iterations): it becomes a ``mir.loop`` instead."""


@converter("Loop")
def loop(ctx: NodeContext) -> ConverterResult:
    """A Loop whose trip count and per-iteration condition are known at compile time
    (static trip counts, conditions that fold) and that runs at most
    ``UNROLL_MAX_ITERATIONS`` iterations is unrolled, its scan outputs stacked; any other
    is one ``mir.loop`` (of tensors: a loop carrying sequences must unroll)."""
    cond_in = ctx.opt(1)
    carried = [ctx.any(i) for i in range(2, ctx.num_inputs)]
    tensors = [v for v in carried if isinstance(v, SSAValue)]
    as_loop = len(tensors) == len(carried)

    def region(trip_count: SSAValue | None) -> ConverterResult:
        if as_loop:
            return loop_region(ctx, subgraph(ctx, "body"), trip_count, cond_in, tensors)
        return appending_loop_region(ctx, trip_count, cond_in, carried)

    try:
        trips = ctx.opt_const(0, "Loop's trip count")
    except NotStatic as needed:
        if as_loop:
            return region(ctx.x(0))
        checkpoint = ctx.checkpoint()
        try:
            return region(ctx.x(0))
        except Unsupported:  # the backend can still unroll it per trip count
            ctx.rollback(checkpoint)
            raise needed from None
    if trips is not None and isinstance(trips.reshape(-1)[0], DimExpr):
        return region(ctx.x(0))  # a symbolic dim of the model: x.size(1) in a script
    limit = int(trips.reshape(-1)[0]) if trips is not None else None
    if limit is None and cond_in is None:
        raise Unsupported("an unbounded loop (no trip count, no condition)")
    runtime_cond = cond_in is not None and constant_value(cond_in) is None
    if as_loop and (runtime_cond or (limit is not None and limit > UNROLL_MAX_ITERATIONS)):
        return loop_region(ctx, subgraph(ctx, "body"), ctx.opt(0), cond_in, tensors)
    checkpoint = ctx.checkpoint()
    try:
        return _unrolled_loop(ctx, limit, cond_in, carried)
    except _NotUnrolled:
        ctx.rollback(checkpoint)
        return region(ctx.opt(0))


def _unrolled_loop(
    ctx: NodeContext, limit: int | None, cond_in: SSAValue | None, carried: list[Any]
) -> ConverterResult:
    b = ctx.b
    body = UnrolledBody(ctx, "body")
    n = len(carried)
    if len(body.body.input) != n + 2:
        raise Unsupported(f"a body of {len(body.body.input)} inputs for {n} carried values")
    cond = cond_in if cond_in is not None else b.constant(np.array(True), DType.BOOL, ())
    collected: list[list[SSAValue]] = [[] for _ in range(len(body.body.output) - 1 - n)]
    t = 0
    while limit is None or t < limit:
        keep_going = constant_value(cond)
        if keep_going is None:
            raise _NotUnrolled("a condition known only at run time")
        if not bool(keep_going.reshape(-1)[0]):
            break
        if t >= UNROLL_MAX_ITERATIONS:
            raise _NotUnrolled(f"more than {UNROLL_MAX_ITERATIONS} iterations")
        iteration = b.constant(np.array(t, np.int64), DType.I64, ())
        outs = body.step(t, [iteration, cond, *carried])
        cond, carried = outs[0], outs[1 : 1 + n]
        for j, v in enumerate(outs[1 + n :]):
            collected[j].append(v)
        t += 1
    if any(not c for c in collected):  # empty scan outputs: the loop op gives them a type
        raise _NotUnrolled("scan outputs of a loop that runs no iteration")
    return [*carried, *(stack(ctx, c, 0) for c in collected)]


@converter("Det")
def det(ctx: NodeContext) -> ConverterResult:
    """Determinants of [..., M, M] by Gaussian elimination with partial pivoting (LAPACK's
    getrf, which numpy uses), unrolled over the static M: each step swaps the largest
    remaining pivot into place with one-hot row arithmetic, so no shape depends on data."""
    b = ctx.b
    a = ctx.x(0)
    shape = ctx.static_shape(0)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise Unsupported(f"Det of a {list(shape)} tensor (square matrices needed)")
    if not type_of(a).dtype.is_float:
        raise Unsupported(f"Det of {type_of(a).dtype.value}")
    m, batch = shape[-1], list(shape[:-2])
    rows = ctx.constant(np.arange(m, dtype=np.int64).reshape(*([1] * len(batch)), m))
    result: SSAValue | None = None
    for k in range(m):
        # The largest |a[i, k]| for i >= k (ties: the first, as getrf).
        column = b.reshape(b.narrow(a, -1, k, 1), [*batch, m])
        candidates = b.where(b.compare("ge", rows, k), b.abs(column), -1.0)
        p = b.reshape(b.emit(mir.ArgMaxOp(candidates, len(batch))).results[0], [*batch, 1])
        e_p = b.cast(b.compare("eq", rows, p), type_of(a).dtype)  # [..., m] one-hot
        e_k = np.zeros(m)
        e_k[k] = 1
        row_p = b.matmul(b.reshape(e_p, [*batch, 1, m]), a)  # [..., 1, m]
        row_k = b.narrow(a, -2, k, 1)
        swap = b.sub(ctx.const_like(e_k, e_p), e_p)  # e_k - e_p: zero when p == k
        a = b.add(a, b.mul(b.reshape(swap, [*batch, m, 1]), b.sub(row_p, row_k)))
        pivot = b.reshape(b.narrow(b.narrow(a, -2, k, 1), -1, k, 1), [*batch])
        swapped = b.compare("ne", b.reshape(p, [*batch]), k)
        signed = b.where(swapped, b.neg(pivot), pivot)
        result = signed if result is None else b.mul(result, signed)
        if k + 1 < m:  # eliminate below the pivot (a zero pivot leaves a zero product)
            safe = b.where(b.compare("eq", pivot, 0.0), 1.0, pivot)
            below = ctx.const_like((np.arange(m) > k).astype(float), pivot)
            factors = b.mul(b.div(b.reshape(b.narrow(a, -1, k, 1), [*batch, m]),
                                  b.reshape(safe, [*batch, 1])), below)  # fmt: skip
            a = b.sub(a, b.mul(b.reshape(factors, [*batch, m, 1]), b.narrow(a, -2, k, 1)))
    assert result is not None
    return result
