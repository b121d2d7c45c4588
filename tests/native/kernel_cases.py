"""One-op graphs for every op the cpu target claims, built for a given element type.

``CASES`` maps a case name to ``(op class, make)``: ``make(dtype, rng)`` returns the MIR
module and its inputs, or None when the op does not take that element type (the
verifier rejects it). Inputs avoid only what has no defined result (integer division
by zero, out-of-range indices); floats include signed zeros, infinities and NaN where
an op defines them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from rlx_compile.builder import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from tests import ml_models

Make = Callable[[DType, np.random.Generator], "tuple[ModuleOp, dict[str, np.ndarray]] | None"]

FLOAT_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5])


def values(shape: tuple[int, ...], dtype: DType, rng: np.random.Generator, kind: str = "any"):
    """Random values of ``dtype``: ``any`` (with specials for floats), ``finite``,
    ``positive``, ``nonzero`` (ints: no zeros), ``small`` (ints in [-3, 3])."""
    n = int(np.prod(shape))
    if dtype.is_bool:
        return rng.random(shape) < 0.5
    if dtype.is_float:
        x = rng.standard_normal(n) * 2
        if kind == "positive":
            x = np.abs(x) + 0.1
        if kind == "any" and n >= 12:
            x[: len(FLOAT_SPECIALS)] = FLOAT_SPECIALS
            rng.shuffle(x)
        with np.errstate(all="ignore"):
            return x.astype(dtype.numpy).reshape(shape)
    lo, hi = dtype.int_range
    if kind == "small":
        lo, hi = max(lo, -3), min(hi, 3)
    elif kind == "positive":
        lo, hi = 1, min(hi, 100)
    else:
        lo, hi = max(lo, -(2**62)), min(hi, 2**62)
    x = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64 if lo < 0 else np.uint64)
    if kind == "nonzero":
        x[x == 0] = 1
    return x.astype(dtype.numpy).reshape(shape)


def graph(
    specs: dict[str, tuple[tuple[int, ...], DType]],
    body: Callable[..., Any],
) -> ModuleOp | None:
    """A graph of one input per spec; ``body(m, *inputs)`` returns the output(s);
    None when an op does not verify for these types."""
    try:
        with ModuleBuilder("g") as m:
            leaves = [m.input(name, shape, dtype) for name, (shape, dtype) in specs.items()]
            out = body(m, *leaves)
            outs = list(out) if isinstance(out, list | tuple) else [out]
            m.output(*outs, names=[f"y{i}" for i in range(len(outs))])
    except (VerifyException, ValueError):
        return None
    return m.module


def one(op: Any) -> Any:
    return op.results[0] if len(op.results) == 1 else list(op.results)


CASES: dict[str, tuple[type, Make]] = {}


def case(name: str, op: type) -> Callable[[Make], Make]:
    def register(make: Make) -> Make:
        CASES[name] = (op, make)
        return make

    return register


# ---------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------

UNARY = [
    mir.NegOp, mir.AbsOp, mir.ReluOp, mir.SignOp, mir.NotOp, mir.ExpOp, mir.LogOp,
    mir.SqrtOp, mir.RsqrtOp, mir.ReciprocalOp, mir.TanhOp, mir.SigmoidOp, mir.SiluOp,
    mir.ErfOp, mir.SinOp, mir.CosOp, mir.FloorOp, mir.CeilOp, mir.RoundOp, mir.SoftplusOp,
    mir.TanOp, mir.AsinOp, mir.AcosOp, mir.AtanOp, mir.SinhOp, mir.CoshOp, mir.AsinhOp,
    mir.AcoshOp, mir.AtanhOp, mir.BitwiseNotOp, mir.SoftsignOp,
]  # fmt: skip


def _unary_case(op: type) -> Make:
    def make(dtype: DType, rng: np.random.Generator):
        module = graph({"x": ((3, 7), dtype)}, lambda m, x: m.unary(op, x))
        return module and (module, {"x": values((3, 7), dtype, rng)})

    return make


for _op in UNARY:
    case(_op.name.removeprefix("mir."), _op)(_unary_case(_op))

for _approx in ("none", "tanh"):

    @case(f"gelu_{_approx}", mir.GeluOp)
    def _gelu(dtype: DType, rng: np.random.Generator, approx: str = _approx):
        module = graph({"x": ((4, 6), dtype)}, lambda m, x: m.gelu(x, approx))
        return module and (module, {"x": values((4, 6), dtype, rng)})


BINARY = [
    mir.AddOp, mir.SubOp, mir.MulOp, mir.DivOp, mir.PowOp, mir.MaxOp, mir.MinOp, mir.ModOp,
    mir.AndOp, mir.OrOp, mir.XorOp, mir.FmodOp, mir.BitwiseAndOp, mir.BitwiseOrOp,
    mir.BitwiseXorOp, mir.ShiftLeftOp, mir.ShiftRightOp, mir.PReluOp,
]  # fmt: skip
_DIVIDES = (mir.DivOp, mir.ModOp, mir.FmodOp)


def _binary_case(op: type, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> Make:
    def make(dtype: DType, rng: np.random.Generator):
        module = graph(
            {"a": (shapes[0], dtype), "b": (shapes[1], dtype)}, lambda m, a, b: m.binary(op, a, b)
        )
        if module is None:
            return None
        kind_b = "any"
        if dtype.is_int and op in _DIVIDES:
            kind_b = "nonzero"
        if dtype.is_int and op is mir.PowOp:
            kind_b = "small"
        a = values(shapes[0], dtype, rng, "small" if op is mir.PowOp and dtype.is_int else "any")
        if op in (mir.ShiftLeftOp, mir.ShiftRightOp):
            bits = dtype.itemsize * 8
            lo = -2 if dtype.is_signed_int else 0
            b = rng.integers(lo, bits + 2, size=shapes[1]).astype(dtype.numpy)
        else:
            b = values(shapes[1], dtype, rng, kind_b)
        return module, {"a": a, "b": b}

    return make


for _op in BINARY:
    _n = _op.name.removeprefix("mir.")
    case(f"{_n}_broadcast", _op)(_binary_case(_op, ((3, 1, 5), (4, 5))))
    case(f"{_n}_same", _op)(_binary_case(_op, ((2, 9), (2, 9))))
    case(f"{_n}_scalar", _op)(_binary_case(_op, ((), (6,))))

for _pred in ("eq", "ne", "lt", "le", "gt", "ge"):

    @case(f"compare_{_pred}", mir.CompareOp)
    def _compare(dtype: DType, rng: np.random.Generator, pred: str = _pred):
        module = graph(
            {"a": ((3, 4), dtype), "b": ((4,), dtype)}, lambda m, a, b: m.compare(pred, a, b)
        )
        a = values((3, 4), dtype, rng, "small" if dtype.is_int else "any")
        b = values((4,), dtype, rng, "small" if dtype.is_int else "any")
        return module and (module, {"a": a, "b": b})


@case("where", mir.WhereOp)
def _where(dtype: DType, rng: np.random.Generator):
    module = graph(
        {"c": ((3, 1), DType.BOOL), "a": ((3, 4), dtype), "b": ((4,), dtype)},
        lambda m, c, a, b: m.where(c, a, b),
    )
    inputs = {
        "c": values((3, 1), DType.BOOL, rng),
        "a": values((3, 4), dtype, rng),
        "b": values((4,), dtype, rng),
    }
    return module and (module, inputs)


def cast_case(src: DType) -> Make:
    """A cast from ``src`` to ``dtype``."""

    def make(dtype: DType, rng: np.random.Generator):
        module = graph({"x": ((5, 6), src)}, lambda m, x: m.cast(x, dtype))
        x = values((5, 6), src, rng)
        if src.is_float:
            x = (x.astype(np.float64) * 1e3).astype(src.numpy)  # saturating ints too
        return module and (module, {"x": x})

    return make


for _src in DType:
    case(f"cast_from_{_src.value}", mir.CastOp)(cast_case(_src))


@case("bitcast", mir.BitcastOp)
def _bitcast(dtype: DType, rng: np.random.Generator):
    target = {1: DType.U8, 2: DType.I16, 4: DType.I32, 8: DType.U64}[dtype.itemsize]
    module = graph({"x": ((3, 4), dtype)}, lambda m, x: one(m.emit(mir.BitcastOp(x, target))))
    return module and (module, {"x": values((3, 4), dtype, rng)})


# ---------------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------------


def _movement(name: str, op: type, shape: tuple[int, ...], body: Callable[..., Any]) -> None:
    @case(name, op)
    def make(dtype: DType, rng: np.random.Generator):
        module = graph({"x": (shape, dtype)}, body)
        return module and (module, {"x": values(shape, dtype, rng)})


_movement("reshape", mir.ReshapeOp, (2, 3, 4), lambda m, x: m.reshape(x, (4, 6)))
_movement("transpose", mir.TransposeOp, (2, 3, 4), lambda m, x: m.transpose(x, (2, 0, 1)))
_movement("narrow_inner", mir.NarrowOp, (3, 8), lambda m, x: m.narrow(x, 1, 2, 5))
_movement(
    "slice_steps", mir.SliceOp, (5, 7),
    lambda m, x: one(m.emit(mir.SliceOp(x, (4, 1), (-2, 3), (3, 2)))),
)  # fmt: skip
_movement("expand", mir.ExpandOp, (3, 1), lambda m, x: m.expand(x, (2, 3, 4)))
_movement(
    "concat", mir.ConcatOp, (2, 3),
    lambda m, x: m.concat([x, m.transpose(m.reshape(x, (3, 2)), (1, 0)), x], 1),
)  # fmt: skip
for _mode in ("constant", "reflect", "edge", "wrap"):
    _movement(
        f"pad_{_mode}", mir.PadOp, (3, 4),
        lambda m, x, mode=_mode: m.pad(x, (1, 2, 2, 1), mode, 1.5),
    )  # fmt: skip


@case("gather", mir.GatherOp)
def _gather(dtype: DType, rng: np.random.Generator):
    module = graph(
        {"t": ((4, 5, 3), dtype), "i": ((2, 3), DType.I64)},
        lambda m, t, i: m.gather(t, i, axis=1),
    )
    idx = rng.integers(-5, 5, size=(2, 3)).astype(np.int64)
    return module and (module, {"t": values((4, 5, 3), dtype, rng), "i": idx})


@case("gather_i32_index", mir.GatherOp)
def _gather32(dtype: DType, rng: np.random.Generator):
    module = graph(
        {"t": ((6, 2), dtype), "i": ((4,), DType.I32)}, lambda m, t, i: m.gather(t, i, axis=0)
    )
    idx = rng.integers(-6, 6, size=(4,)).astype(np.int32)
    return module and (module, {"t": values((6, 2), dtype, rng), "i": idx})


for _name, _shape, _axes, _lens in (
    ("gather_axes_hw", (2, 3, 4, 5), (2, 3), (7, 3)),  # a nearest resize: up and down
    ("gather_axes_outer", (4, 3, 5), (0, 1), (6, 2)),  # the last dim copied whole
    ("gather_axes_3d", (1, 2, 3, 4, 5), (2, 3, 4), (5, 8, 2)),
    ("gather_axes_empty", (2, 3, 4), (1, 2), (0, 3)),
):

    @case(_name, mir.GatherAxesOp)
    def _gather_axes(dtype: DType, rng: np.random.Generator, shape=_shape, axes=_axes, lens=_lens):
        specs = {"x": (shape, dtype)} | {f"i{k}": ((n,), DType.I64) for k, n in enumerate(lens)}
        module = graph(specs, lambda m, x, *idx: m.gather_axes(x, idx, axes))
        feeds = {"x": values(shape, dtype, rng)}
        for k, (a, n) in enumerate(zip(axes, lens, strict=True)):
            feeds[f"i{k}"] = rng.integers(-shape[a], shape[a], size=n).astype(np.int64)
        return module and (module, feeds)


for _name, _shape, _ishape, _axis in (
    ("gather_elements_mid", (2, 3, 5, 4), (2, 6, 5, 4), 1),  # the axis longer in the indices
    ("gather_elements_last", (3, 7), (2, 4), 1),  # a window of the other dims
    ("gather_elements_first", (5, 3, 2), (8, 1, 2), 0),
    ("gather_elements_median", (1, 5), (1, 1), 1),  # AdaBoost's median
    ("gather_elements_empty", (2, 3, 4), (2, 0, 4), 1),
):

    @case(_name, mir.GatherElementsOp)
    def _gather_elements(
        dtype: DType, rng: np.random.Generator, shape=_shape, ishape=_ishape, axis=_axis
    ):
        specs = {"x": (shape, dtype), "i": (ishape, DType.I64)}
        module = graph(specs, lambda m, x, i: m.gather_elements(x, i, axis))
        idx = rng.integers(-shape[axis], shape[axis], size=ishape).astype(np.int64)
        return module and (module, {"x": values(shape, dtype, rng), "i": idx})


for _red in ("none", "add", "mul", "max", "min"):

    @case(f"scatter_nd_{_red}", mir.ScatterNdOp)
    def _scatter(dtype: DType, rng: np.random.Generator, red: str = _red):
        module = graph(
            {"d": ((4, 3), dtype), "i": ((3, 1), DType.I64), "u": ((3, 3), dtype)},
            lambda m, d, i, u: one(m.emit(mir.ScatterNdOp(d, i, u, red))),
        )
        idx = np.array([[1], [-1], [1]] if red != "none" else [[0], [2], [-1]], dtype=np.int64)
        inputs = {"d": values((4, 3), dtype, rng), "i": idx, "u": values((3, 3), dtype, rng)}
        return module and (module, inputs)


# ---------------------------------------------------------------------------------
# Reductions and axis ops
# ---------------------------------------------------------------------------------

REDUCE = [mir.ReduceSumOp, mir.ReduceMeanOp, mir.ReduceMaxOp, mir.ReduceMinOp, mir.ReduceProdOp]
CHAIN_REDUCE = [mir.ReduceSumSquareOp, mir.ReduceL2Op, mir.ReduceL1Op, mir.ReduceLogSumOp]
_KIND = {mir.ReduceProdOp: "small", mir.ReduceLogSumOp: "positive"} | dict.fromkeys(
    [mir.ReduceSumSquareOp, mir.ReduceL2Op, mir.ReduceL1Op], "any"
)
for _op in REDUCE + CHAIN_REDUCE:
    for _axes, _keep in (((1,), False), ((0, 2), True), ((2,), False), ((0, 1, 2), False)):

        @case(f"{_op.name.removeprefix('mir.')}_{''.join(map(str, _axes))}", _op)
        def _reduce(dtype: DType, rng: np.random.Generator, op=_op, axes=_axes, keep=_keep):
            module = graph({"x": ((3, 4, 5), dtype)}, lambda m, x: one(m.emit(op(x, axes, keep))))
            kind = _KIND.get(op, "finite")
            return module and (module, {"x": values((3, 4, 5), dtype, rng, kind)})


for _axes, _keep in (((1,), False), ((0, 2), True), ((2,), False), ((0, 1, 2), False)):

    @case(f"reduce_log_sum_exp_{''.join(map(str, _axes))}", mir.ReduceLogSumExpOp)
    def _log_sum_exp(dtype: DType, rng: np.random.Generator, axes=_axes, keep=_keep):
        module = graph({"x": ((3, 4, 5), dtype)}, lambda m, x: m.log_sum_exp(x, axes, keep))
        return module and (module, {"x": values((3, 4, 5), dtype, rng)})


@case("reduce_log_sum_exp_rows", mir.ReduceLogSumExpOp)
def _log_sum_exp_rows(dtype: DType, rng: np.random.Generator):
    """Rows of -inf only, with a +inf, with a NaN, large (exp would overflow unshifted)."""
    module = graph({"x": ((6, 4), dtype)}, lambda m, x: m.log_sum_exp(x, 1, True))
    if module is None:
        return None
    x = values((6, 4), dtype, rng, "finite").astype(np.float64)
    x[0] = -np.inf
    x[1, 2], x[2, 1], x[3, 0] = np.inf, np.nan, -np.inf
    x[4] = [80.0, 88.0, 88.0, -3.0]
    with np.errstate(all="ignore"):
        return module, {"x": x.astype(dtype.numpy)}


for _op in (mir.CumsumOp, mir.CumprodOp):
    for _ex, _rev in ((False, False), (True, False), (False, True), (True, True)):

        @case(f"{_op.name.removeprefix('mir.')}_{int(_ex)}{int(_rev)}", _op)
        def _scan(dtype: DType, rng: np.random.Generator, op=_op, ex=_ex, rev=_rev):
            module = graph({"x": ((3, 5, 2), dtype)}, lambda m, x: one(m.emit(op(x, 1, ex, rev))))
            kind = "small" if op is mir.CumprodOp else "finite"
            return module and (module, {"x": values((3, 5, 2), dtype, rng, kind)})


for _op in (mir.ArgMaxOp, mir.ArgMinOp):
    for _axis in (0, 2):

        @case(f"{_op.name.removeprefix('mir.')}_{_axis}", _op)
        def _arg(dtype: DType, rng: np.random.Generator, op=_op, axis=_axis):
            module = graph({"x": ((3, 4, 5), dtype)}, lambda m, x: one(m.emit(op(x, axis, True))))
            kind = "small" if dtype.is_int else "any"
            return module and (module, {"x": values((3, 4, 5), dtype, rng, kind)})


for _smallest in (False, True):

    @case(f"topk_{'smallest' if _smallest else 'largest'}", mir.TopKOp)
    def _topk(dtype: DType, rng: np.random.Generator, smallest=_smallest):
        module = graph(
            {"x": ((3, 9, 2), dtype)}, lambda m, x: one(m.emit(mir.TopKOp(x, 4, 1, smallest)))
        )
        kind = "small" if dtype.is_int else "any"
        return module and (module, {"x": values((3, 9, 2), dtype, rng, kind)})


for _op in (mir.SoftmaxOp, mir.LogSoftmaxOp):
    for _axis in (1, 2):

        @case(f"{_op.name.removeprefix('mir.')}_{_axis}", _op)
        def _softmax(dtype: DType, rng: np.random.Generator, op=_op, axis=_axis):
            module = graph({"x": ((2, 5, 7), dtype)}, lambda m, x: one(m.emit(op(x, axis))))
            return module and (module, {"x": values((2, 5, 7), dtype, rng, "finite")})


for _op in (mir.LayerNormOp, mir.RmsNormOp):
    for _bias in (False, True):

        @case(f"{_op.name.removeprefix('mir.')}{'_bias' if _bias else ''}", _op)
        def _norm(dtype: DType, rng: np.random.Generator, op=_op, bias=_bias):
            specs = {"x": ((3, 4, 6), dtype), "s": ((4, 6), dtype), "b": ((6,), dtype)}

            def body(m, x, s, b):
                return one(m.emit(op(x, s, b if bias else None, axis=1, epsilon=1e-5)))

            module = graph(specs, body)
            inputs = {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()}
            return module and (module, inputs)


@case("group_norm", mir.GroupNormOp)
def _group_norm(dtype: DType, rng: np.random.Generator):
    specs = {"x": ((2, 6, 5), dtype), "s": ((6,), dtype), "b": ((6,), dtype)}
    module = graph(
        specs,
        lambda m, x, s, b: one(m.emit(mir.GroupNormOp(x, s, b, groups=3, epsilon=1e-5))),
    )
    return module and (module, {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()})


@case("batch_norm", mir.BatchNormOp)
def _batch_norm(dtype: DType, rng: np.random.Generator):
    c = 4
    specs = {"x": ((2, c, 3, 3), dtype), **{k: ((c,), dtype) for k in "sbmv"}}
    module = graph(
        specs,
        lambda m, x, s, b, mean, v: one(m.emit(mir.BatchNormOp(x, s, b, mean, v, epsilon=1e-3))),
    )
    inputs = {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()}
    if module is not None:
        inputs["v"] = values((c,), dtype, rng, "positive")
    return module and (module, inputs)


# ---------------------------------------------------------------------------------
# Matmul, conv, pooling
# ---------------------------------------------------------------------------------

for _name, _sa, _sb in (
    ("matmul_2d", (5, 6), (6, 7)),
    ("matmul_batched_shared_rhs", (2, 3, 6), (6, 4)),
    ("matmul_batched", (2, 3, 6), (2, 6, 4)),
    ("matmul_broadcast", (1, 3, 6), (2, 6, 4)),
    ("matmul_vector_lhs", (6,), (2, 6, 3)),
    ("matmul_vector_rhs", (2, 3, 6), (6,)),
):

    @case(_name, mir.MatmulOp)
    def _matmul(dtype: DType, rng: np.random.Generator, sa=_sa, sb=_sb):
        module = graph({"a": (sa, dtype), "b": (sb, dtype)}, lambda m, a, b: m.matmul(a, b))
        kind = "small" if dtype.is_int else "finite"
        return module and (
            module,
            {"a": values(sa, dtype, rng, kind), "b": values(sb, dtype, rng, kind)},
        )


for _name, _x, _w, _kw in (
    ("conv2d", (2, 4, 7, 6), (6, 4, 3, 3), {"pads": (1, 0, 1, 2)}),
    (
        "conv2d_strided_dilated",
        (1, 3, 9, 8),
        (4, 3, 3, 2),
        {"strides": (2, 1), "dilations": (1, 2)},
    ),
    ("conv2d_grouped", (1, 6, 5, 5), (4, 3, 3, 3), {"groups": 2, "pads": (1, 1, 1, 1)}),
    ("conv2d_depthwise", (1, 4, 6, 6), (8, 1, 3, 3), {"groups": 4, "pads": (1, 1, 1, 1)}),
    # depthwise, stride 1: on the padded plane (dilated, asymmetric pads); strided: by rows
    (
        "conv2d_depthwise_dilated",
        (2, 3, 7, 9),
        (3, 1, 3, 2),
        {"groups": 3, "pads": (2, 0, 1, 3), "dilations": (2, 3)},
    ),
    ("conv1d_depthwise", (1, 2, 11), (4, 1, 4), {"groups": 2, "pads": (0, 2)}),
    (
        "conv2d_depthwise_strided",
        (1, 4, 9, 8),
        (4, 1, 3, 3),
        {"groups": 4, "strides": (2, 2), "pads": (1, 1, 1, 1)},
    ),
    # a plane too big for L1: depthwise by rows
    ("conv2d_depthwise_big_plane", (1, 2, 90, 90), (2, 1, 3, 3), {"groups": 2, "pads": (1,) * 4}),
    ("conv2d_pointwise", (2, 5, 4, 3), (3, 5, 1, 1), {}),
    ("conv1d", (2, 3, 10), (4, 3, 3), {"strides": (2,), "pads": (1, 2)}),
    # kernel wider than the input: most taps read only padding (empty tap ranges)
    ("conv1d_kernel_wider_than_input", (1, 4, 1), (4, 4, 5), {"pads": (2, 2)}),
    ("conv2d_kernel_wider_than_input", (1, 2, 2, 3), (3, 2, 5, 7), {"pads": (2, 3, 2, 3)}),
    ("conv3d", (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), {"pads": (0, 1, 0, 1, 0, 1)}),
    # im2col in tiles of output rows (taps x row is 90 KiB: a 512 KiB tile holds 5 rows)
    ("conv2d_tiled", (1, 64, 21, 40), (4, 64, 3, 3), {"pads": (1, 1, 1, 1)}),
):

    @case(_name, mir.ConvOp)
    def _conv(dtype: DType, rng: np.random.Generator, xs=_x, ws=_w, kw=_kw):
        module = graph({"x": (xs, dtype), "w": (ws, dtype)}, lambda m, x, w: m.conv(x, w, **kw))
        return module and (
            module, {"x": values(xs, dtype, rng, "finite"), "w": values(ws, dtype, rng, "finite")}
        )  # fmt: skip


for _op in (mir.MaxPoolOp, mir.AvgPoolOp):
    for _name, _x, _kw in (
        ("2d", (2, 3, 7, 6), {"kernel": (3, 2), "strides": (2, 2), "pads": (1, 0, 1, 1)}),
        ("2d_ceil", (1, 2, 7, 7), {"kernel": (3, 3), "strides": (2, 2), "ceil_mode": True}),
        ("2d_dilated", (1, 2, 8, 8), {"kernel": (2, 2), "dilations": (2, 3)}),
        ("1d", (2, 3, 9), {"kernel": (4,), "strides": (3,), "pads": (2, 1)}),
        ("3d", (1, 2, 4, 4, 5), {"kernel": (2, 2, 3), "pads": (0, 1, 1, 1, 0, 1)}),
    ):
        extras = [False, True] if _op is mir.AvgPoolOp else [False]
        for _inc in extras:

            @case(f"{_op.name.removeprefix('mir.')}_{_name}{'_incpad' if _inc else ''}", _op)
            def _pool(dtype: DType, rng: np.random.Generator, op=_op, xs=_x, kw=_kw, inc=_inc):
                extra = {"count_include_pad": inc} if op is mir.AvgPoolOp else {}
                module = graph({"x": (xs, dtype)}, lambda m, x: one(m.emit(op(x, **kw, **extra))))
                return module and (module, {"x": values(xs, dtype, rng, "any")})


# ---------------------------------------------------------------------------------
# Attention, rope
# ---------------------------------------------------------------------------------

for _name, _kv_heads, _kind, _extra in (
    ("attention", 2, "none", {}),
    ("attention_gqa_causal", 1, "causal", {"scale": 0.3}),
    ("attention_bool_mask", 2, "bool", {}),
    ("attention_float_mask_softcap", 2, "float", {"softcap": 5.0}),
    ("attention_masked_row_zero_nan", 2, "bool_masked_row", {"zero_nan": True}),
):

    @case(_name, mir.AttentionOp)
    def _attention(dtype: DType, rng: np.random.Generator, hk=_kv_heads, kind=_kind, extra=_extra):
        b, h, sq, sk, d = 2, 2, 3, 4, 5
        specs = {
            "q": ((b, h, sq, d), dtype),
            "k": ((b, hk, sk, d), dtype),
            "v": ((b, hk, sk, d), dtype),
        }
        if kind.startswith("bool"):
            specs["mask"] = ((1, 1, sq, sk), DType.BOOL)
        elif kind == "float":
            specs["mask"] = ((b, 1, 1, sk), dtype)

        def body(m, q, k, v, mask=None):
            mask_kind = (
                "causal" if kind == "causal" else ("explicit" if mask is not None else "none")
            )
            return one(m.emit(mir.AttentionOp(q, k, v, mask, mask_kind=mask_kind, **extra)))

        module = graph(specs, body)
        inputs = {k_: values(v_[0], v_[1], rng, "finite") for k_, v_ in specs.items()}
        if kind == "bool":
            inputs["mask"][..., 0] = True  # every query attends somewhere
        elif kind == "bool_masked_row":  # with zero_nan a query that attends nowhere gives 0
            inputs["mask"][..., 0] = True
            inputs["mask"][..., 1, :] = False
        return module and (module, inputs)


for _name, _kw, _cs in (
    ("rope", {}, (3, 4)),
    ("rope_interleaved_partial", {"rotary_dim": 4, "interleaved": True}, (1, 3, 2)),
):

    @case(_name, mir.RopeOp)
    def _rope(dtype: DType, rng: np.random.Generator, kw=_kw, cs=_cs):
        specs = {"x": ((2, 1, 3, 8), dtype), "c": (cs, dtype), "s": (cs, dtype)}
        module = graph(specs, lambda m, x, c, s: one(m.emit(mir.RopeOp(x, c, s, **kw))))
        return module and (
            module,
            {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()},
        )


# ---------------------------------------------------------------------------------
# Quantisation
# ---------------------------------------------------------------------------------


def _scale_dtype(dtype: DType) -> DType:
    return dtype if dtype.is_float else DType.F32


for _axis in (None, 1):

    @case(f"quantize{'_axis' if _axis is not None else ''}", mir.QuantizeOp)
    def _quantize(dtype: DType, rng: np.random.Generator, axis=_axis):
        """Quantize f32 into ``dtype`` (and f16/f64 inputs into i8)."""
        src, out = (DType.F32, dtype) if dtype.is_int else (dtype, DType.I8)
        n = 1 if axis is None else 4
        specs = {"x": ((3, 4, 2), src), "s": ((n,), DType.F32), "z": ((n,), out)}
        module = graph(
            specs,
            lambda m, x, s, z: one(m.emit(mir.QuantizeOp(x, s, z, dtype=out, axis=axis))),
        )
        inputs = {
            "x": values((3, 4, 2), src, rng) * 20,
            "s": values((n,), DType.F32, rng, "positive"),
            "z": values((n,), out, rng, "small"),
        }
        return module and (module, inputs)

    @case(f"dequantize{'_axis' if _axis is not None else ''}", mir.DequantizeOp)
    def _dequantize(dtype: DType, rng: np.random.Generator, axis=_axis):
        """Dequantize ``dtype`` ints with an f32 scale (float dtypes: i8 with that scale)."""
        q, s = (dtype, DType.F32) if dtype.is_int else (DType.I8, dtype)
        n = 1 if axis is None else 4
        specs = {"q": ((3, 4, 2), q), "s": ((n,), s), "z": ((n,), q)}
        module = graph(
            specs, lambda m, x, sc, z: one(m.emit(mir.DequantizeOp(x, sc, z, axis=axis)))
        )
        inputs = {"q": values((3, 4, 2), q, rng), "s": values((n,), s, rng, "positive"),
                  "z": values((n,), q, rng, "small")}  # fmt: skip
        return module and (module, inputs)


@case("fake_quantize", mir.FakeQuantizeOp)
def _fake_quantize(dtype: DType, rng: np.random.Generator):
    specs = {"x": ((3, 4), dtype), "s": ((4,), dtype), "z": ((4,), DType.I32)}
    module = graph(
        specs,
        lambda m, x, s, z: one(
            m.emit(mir.FakeQuantizeOp(x, s, z, quant_min=-8, quant_max=7, axis=1))
        ),
    )
    inputs = {"x": values((3, 4), dtype, rng) * 4, "s": values((4,), dtype, rng, "positive"),
              "z": values((4,), DType.I32, rng, "small")}  # fmt: skip
    return module and (module, inputs)


# ---------------------------------------------------------------------------------
# Fused ops and regions
# ---------------------------------------------------------------------------------

for _act in ("none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"):

    @case(f"fused_matmul_bias_{_act}", mir.FusedMatmulBiasActOp)
    def _fmm(dtype: DType, rng: np.random.Generator, act=_act):
        specs = {"x": ((2, 3, 6), dtype), "w": ((6, 5), dtype), "b": ((5,), dtype)}
        module = graph(specs, lambda m, x, w, b: m.fused_matmul_bias_act(x, w, b, act))
        return module and (
            module,
            {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()},
        )

    @case(f"fused_matmul_row_bias_{_act}", mir.FusedMatmulBiasActOp)
    def _fmm_row(dtype: DType, rng: np.random.Generator, act=_act):
        # a bias of rank > 1 ([1, 1, N]) and one of a single element ([1, 1])
        specs = {"x": ((2, 3, 6), dtype), "w": ((6, 5), dtype), "b": ((1, 1, 5), dtype),
                 "c": ((1, 1), dtype)}  # fmt: skip
        module = graph(
            specs,
            lambda m, x, w, b, c: m.add(
                m.fused_matmul_bias_act(x, w, b, act), m.fused_matmul_bias_act(x, w, c, act)
            ),
        )
        return module and (
            module,
            {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()},
        )

    @case(f"fused_conv_bias_{_act}", mir.FusedConvBiasActOp)
    def _fconv(dtype: DType, rng: np.random.Generator, act=_act):
        specs = {"x": ((1, 3, 6, 5), dtype), "w": ((4, 3, 3, 3), dtype), "b": ((4,), dtype),
                 "r": ((1, 4, 6, 5), dtype)}  # fmt: skip
        module = graph(
            specs,
            lambda m, x, w, b, r: one(
                m.emit(mir.FusedConvBiasActOp(x, w, b, r, pads=(1, 1, 1, 1), activation=act))
            ),
        )
        return module and (
            module,
            {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()},
        )


for _gate_first in (False, True):

    @case(f"fused_swiglu_{int(_gate_first)}", mir.FusedSwigluOp)
    def _swiglu(dtype: DType, rng: np.random.Generator, gate_first=_gate_first):
        module = graph({"x": ((2, 3, 8), dtype)}, lambda m, x: m.fused_swiglu(x, gate_first))
        return module and (module, {"x": values((2, 3, 8), dtype, rng, "finite")})


for _order, _rows in (((0, 1, 2, 3), (3,)), ((0, 3, 1, 2), (2, 3)), ((3, 2, 1, 0), ())):

    @case(f"fused_lstm_cell_{''.join(map(str, _order))}", mir.FusedLstmCellOp)
    def _lstm_cell(dtype: DType, rng: np.random.Generator, order=_order, rows=_rows):
        """ONNX's and PyTorch's gate orders (specials: infinities and NaN in the gates and
        the state), batch ranks 1, 2 and none."""
        specs = {"g": ((*rows, 20), dtype), "c": ((*rows, 5), dtype)}
        module = graph(specs, lambda m, g, c: list(m.fused_lstm_cell(g, c, order)))
        return module and (module, {k: values(v[0], dtype, rng) for k, v in specs.items()})


for _order, _rows in (((0, 1, 2), (3,)), ((1, 0, 2), (2, 3)), ((2, 1, 0), ())):

    @case(f"fused_gru_cell_{''.join(map(str, _order))}", mir.FusedGruCellOp)
    def _gru_cell(dtype: DType, rng: np.random.Generator, order=_order, rows=_rows):
        """ONNX's and PyTorch's gate orders (specials: infinities and NaN in the gates and
        the state), batch ranks 1, 2 and none."""
        specs = {"x": ((*rows, 15), dtype), "g": ((*rows, 15), dtype), "h": ((*rows, 5), dtype)}
        module = graph(specs, lambda m, x, g, h: m.fused_gru_cell(x, g, h, order))
        return module and (module, {k: values(v[0], dtype, rng) for k, v in specs.items()})


for _op in (mir.FusedResidualRmsNormOp, mir.FusedResidualLayerNormOp):

    @case(_op.name.removeprefix("mir."), _op)
    def _fres(dtype: DType, rng: np.random.Generator, op=_op):
        specs = {"x": ((2, 3, 8), dtype), "r": ((2, 3, 8), dtype), "s": ((8,), dtype),
                 "b": ((8,), dtype)}  # fmt: skip
        module = graph(
            specs, lambda m, x, r, s, b: one(m.emit(op(x, r, s, b, axis=2, epsilon=1e-6)))
        )
        return module and (
            module,
            {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()},
        )


for _rope_on, _mask in ((False, "causal"), (True, "none"), (False, "masked_row")):

    @case(f"fused_attention_block_{'rope' if _rope_on else _mask}", mir.FusedAttentionBlockOp)
    def _fab(dtype: DType, rng: np.random.Generator, rope_on=_rope_on, mask=_mask):
        b, s, h, hk, d = 2, 3, 2, 1, 4
        hidden = h * d
        specs = {
            "x": ((b, s, hidden), dtype),
            "wqkv": ((hidden, (h + 2 * hk) * d), dtype),
            "wo": ((h * d, hidden), dtype),
            "bqkv": (((h + 2 * hk) * d,), dtype),
            "cos": ((s, d // 2), dtype),
            "sin": ((s, d // 2), dtype),
        }

        if mask == "masked_row":  # a query attending nowhere: 0 with zero_nan
            specs["keep"] = ((1, 1, s, s), DType.BOOL)

        def body(m, x, wqkv, wo, bqkv, cos, sin, keep=None):
            op = mir.FusedAttentionBlockOp(
                x, wqkv, wo, num_heads=h, num_kv_heads=hk, head_dim=d, qkv_bias=bqkv,
                cos=cos if rope_on else None, sin=sin if rope_on else None, mask=keep,
                mask_kind="explicit" if keep is not None else mask, zero_nan=keep is not None,
            )  # fmt: skip
            return one(m.emit(op))

        module = graph(specs, body)
        inputs = {k: values(v[0], v[1], rng, "finite") for k, v in specs.items()}
        if mask == "masked_row":
            inputs["keep"][...] = True
            inputs["keep"][..., 1, :] = False
        return module and (module, inputs)


@case("elementwise_region", mir.ElementwiseRegionOp)
def _region(dtype: DType, rng: np.random.Generator):
    def body(m, a, b):
        block = Block(arg_types=[a.type, b.type])
        x, y = block.args
        ops = [mir.MulOp(x, y)]
        ops.append(mir.AddOp(ops[-1].results[0], x))
        ops.append(mir.NegOp(ops[-1].results[0]))
        for op in ops:
            block.add_op(op)
        block.add_op(mir.YieldOp([ops[-1].results[0]]))
        t = TensorType((3, 4), dtype)
        return one(m.emit(mir.ElementwiseRegionOp([a, b], Region(block), t)))

    module = graph({"a": ((3, 4), dtype), "b": ((4,), dtype)}, body)
    inputs = {"a": values((3, 4), dtype, rng, "small"), "b": values((4,), dtype, rng, "small")}
    return module and (module, inputs)


__all__ = ["CASES", "SSAValue", "graph", "values"]


@case("compare_over_its_broadcast_operand", mir.CompareOp)
def _compare_in_place(dtype: DType, rng: np.random.Generator):
    """The planner may put a bool [2, 8] result over a dying [2, 1] 8-byte operand (same
    size): each operand element must be read before its bytes are overwritten."""
    if dtype.itemsize != 8:
        return None
    module = graph(
        {"a": ((2, 1), dtype), "b": ((1, 8), dtype)},
        lambda m, a, b: m.compare("lt", b, m.add(a, a) if not dtype.is_bool else a),
    )
    inputs = {"a": values((2, 1), dtype, rng, "small"), "b": values((1, 8), dtype, rng, "small")}
    return module and (module, inputs)


for _order in ("max_min", "min_max"):

    @case(f"fused_conv_then_clip_{_order}", mir.FusedConvBiasActOp)
    def _conv_clip(dtype: DType, rng: np.random.Generator, order: str = _order):
        """A conv followed by a clip (relu6): the max/min may become the conv's epilogue."""
        specs = {"x": ((1, 3, 6, 5), dtype), "w": ((4, 3, 3, 3), dtype), "b": ((4,), dtype)}

        def body(m, x, w, b):
            y = one(m.emit(mir.FusedConvBiasActOp(x, w, b, pads=(1, 1, 1, 1))))
            lo, hi = m.scalar_like(0.0, y), m.scalar_like(1.5, y)
            if order == "max_min":
                return m.minimum(m.maximum(y, lo), hi)
            return m.maximum(m.minimum(y, hi), lo)

        module = graph(specs, body)
        inputs = {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()}
        return module and (module, inputs)


# ---------------------------------------------------------------------------------
# Integer kernels (quant-to-integer's): i8/u8 inputs, i8 weights, f32 or requantised
# (requantised with exact activations only: a last-bit difference of an approximated one
# could move a value to the next step)
# ---------------------------------------------------------------------------------


def _integer_case(conv: bool, x_type: DType, out: DType, act: str, zero: int, bias: bool,
                  shapes: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
                  groups: int = 2, table: bool = False,
                  weight: tuple[DType, int] = (DType.I8, 0)):  # fmt: skip
    """Convs of >= 16 taps and matmuls of >= 4 rows run the int16 GEMM (an odd count of
    rows and columns: its 4 x 2 blocks and their remainders), others direct. ``table``:
    the requantised result looked up in a table of random values of its type.
    ``weight``: a matmul's weight type and zero point."""

    def make(dtype: DType, rng: np.random.Generator):
        if dtype is not out:  # the case's element type is its result's
            return None
        x_shape, w_shape = ((2, 4, 6, 5), (6, 2, 3, 3)) if conv else ((2, 5, 20), (20, 7))
        if shapes is not None:
            x_shape, w_shape = shapes
        channels = w_shape[0] if conv else w_shape[-1]
        specs = {"x": (x_shape, x_type), "w": (w_shape, weight[0]),
                 "s": ((channels,), DType.F32), "b": ((channels,), DType.F32)}  # fmt: skip
        extra: dict[str, object] = {}
        if out.is_int:
            extra = {"out_scale": 0.05, "out_zero_point": 3, "out_dtype": out}
        if table:
            lo, hi = out.int_range
            extra["table"] = rng.integers(lo, hi + 1, 256).astype(out.numpy)

        def body(m, x, w, s, b):
            common = {"input_zero_point": zero, "activation": act, **extra}
            if conv:
                op = mir.IntegerConvOp(x, w, s, b if bias else None, pads=(1, 0, 1, 1),
                                       strides=(1, 2), groups=groups, **common)  # fmt: skip
            else:
                op = mir.IntegerMatmulOp(
                    x, w, s, b if bias else None, weight_zero_point=weight[1], **common
                )
            return one(m.emit(op))

        module = graph(specs, body)
        inputs = {
            "x": values(x_shape, x_type, rng),
            "w": values(w_shape, weight[0], rng),
            "s": (rng.random(channels) * 1e-2 + 1e-3).astype(np.float32),
            "b": values((channels,), DType.F32, rng, "finite"),
        }
        return module and (module, inputs)

    return make


for _conv in (False, True):
    for _x, _out, _act, _zero, _bias in (
        (DType.I8, DType.F32, "none", 0, True),
        (DType.U8, DType.F32, "gelu", 128, False),
        (DType.I8, DType.I8, "relu", -3, True),
        (DType.U8, DType.U8, "none", 7, True),
    ):
        _name = f"integer_{'conv' if _conv else 'matmul'}_{_x.value}_{_out.value}_{_act}"
        case(_name, mir.IntegerConvOp if _conv else mir.IntegerMatmulOp)(
            _integer_case(_conv, _x, _out, _act, _zero, _bias)
        )
# an activation times an activation, batch dims broadcasting (the weight packed per batch)
case("integer_matmul_batched", mir.IntegerMatmulOp)(
    _integer_case(False, DType.I8, DType.F32, "none", 0, False, ((2, 1, 6, 9), (1, 4, 9, 5)))
)
case("integer_matmul_row_by_row", mir.IntegerMatmulOp)(
    _integer_case(False, DType.U8, DType.F32, "none", 5, True, ((2, 3, 20), (20, 7)))
)
case("integer_matmul_row_blocks", mir.IntegerMatmulOp)(  # 70 rows: a block of 64, then 6
    _integer_case(False, DType.U8, DType.I8, "relu", 100, True, ((70, 40), (40, 33)))
)
# an attention's two activations: a u8 or i8 weight with a zero point, row by row, in
# row blocks and batched
for _name, _x, _w, _out, _shapes in (
    ("rows_u8_weight", DType.U8, (DType.U8, 131), DType.U8, ((2, 3, 20), (20, 7))),
    ("blocks_u8_weight", DType.I8, (DType.U8, 77), DType.F32, ((70, 40), (40, 33))),
    ("batched_i8_weight", DType.U8, (DType.I8, -9), DType.I8, ((2, 1, 6, 9), (1, 4, 9, 5))),
):
    case(f"integer_matmul_{_name}", mir.IntegerMatmulOp)(
        _integer_case(False, _x, _out, "none", 3, False, _shapes, weight=_w)
    )
case("integer_conv_depthwise", mir.IntegerConvOp)(  # 9 taps: direct
    _integer_case(True, DType.I8, DType.F32, "none", 2, True, ((1, 4, 6, 6), (4, 1, 3, 3)), 4)
)
case("integer_conv_tiled", mir.IntegerConvOp)(  # 576 taps: tiles of 113 of 120 positions
    _integer_case(True, DType.U8, DType.F32, "relu", 90, True, ((1, 64, 15, 16), (8, 64, 3, 3)), 1)
)
# a lookup after the requantisation (a tabulated activation), by each path of each op
for _conv, _x, _out, _act, _shapes, _groups in (
    (False, DType.I8, DType.I8, "relu", ((2, 3, 20), (20, 7)), 1),  # row by row
    (False, DType.U8, DType.U8, "none", ((70, 40), (40, 33)), 1),  # row blocks
    (True, DType.U8, DType.I8, "none", ((1, 4, 6, 6), (4, 1, 3, 3)), 4),  # direct
    (True, DType.I8, DType.U8, "relu", ((1, 64, 15, 16), (8, 64, 3, 3)), 1),  # GEMM tiles
):
    _name = f"integer_{'conv' if _conv else 'matmul'}_{_x.value}_{_out.value}_table"
    case(_name, mir.IntegerConvOp if _conv else mir.IntegerMatmulOp)(
        _integer_case(_conv, _x, _out, _act, 3, True, _shapes, _groups, table=True)
    )


# ---------------------------------------------------------------------------------
# ONNX's dynamic quantisation: u8/i8 operands, zero points none, one or a vector, exact
# i32 results
# ---------------------------------------------------------------------------------


def _dynamic_quantize_case(kind: str):
    def make(dtype: DType, rng: np.random.Generator):
        if dtype is not DType.F32:
            return None
        shape = (3, 7, 5)
        module = graph(
            {"x": (shape, dtype)}, lambda m, x: one(m.emit(mir.DynamicQuantizeLinearOp(x)))
        )
        x = values(shape, dtype, rng, "positive" if kind == "positive" else "finite")
        return module and (module, {"x": np.zeros_like(x) if kind == "zeros" else x})

    return make


for _kind in ("finite", "positive", "zeros"):
    case(f"dynamic_quantize_linear_{_kind}", mir.DynamicQuantizeLinearOp)(
        _dynamic_quantize_case(_kind)
    )


def _zero_point_spec(name: str, form: str, n: int, dtype: DType):
    return {} if form == "none" else {name: ((() if form == "one" else (n,)), dtype)}


def _integer_product_case(conv: bool, a_type: DType, b_type: DType, za: str, zb: str,
                          shapes: tuple[tuple[int, ...], tuple[int, ...]],
                          **geometry: Any):  # fmt: skip
    def make(dtype: DType, rng: np.random.Generator):
        if dtype is not DType.I32:  # the case's element type is its result's
            return None
        a_shape, b_shape = shapes
        rows = 1 if conv else a_shape[-2]
        cols = b_shape[0] if conv else b_shape[-1]
        specs = {"a": (a_shape, a_type), "b": (b_shape, b_type),
                 **_zero_point_spec("za", za, rows, a_type),
                 **_zero_point_spec("zb", zb, cols, b_type)}  # fmt: skip

        def body(m, a, b, *zps):
            it = iter(zps)
            z_a = next(it) if za != "none" else None
            z_b = next(it) if zb != "none" else None
            if conv:
                return one(m.emit(mir.ConvIntegerOp(a, b, z_a, z_b, **geometry)))
            return one(m.emit(mir.MatmulIntegerOp(a, b, z_a, z_b)))

        module = graph(specs, body)
        inputs = {k: values(shape, t, rng) for k, (shape, t) in specs.items()}
        return module and (module, inputs)

    return make


U8, I8 = DType.U8, DType.I8
for _name, (_a, _b, _za, _zb, _shapes) in {
    "u8_i8": (U8, I8, "one", "vector", ((2, 5, 20), (20, 7))),
    "i8_u8_rows": (I8, U8, "vector", "none", ((6, 9), (9, 4))),
    "u8_u8": (U8, U8, "none", "one", ((1, 33), (33, 3))),
    # a batch folded into rows: the per-row zero points repeat per batch
    "i8_i8_folded": (I8, I8, "vector", "vector", ((2, 3, 5, 9), (9, 4))),
    "batched": (U8, I8, "one", "one", ((2, 1, 6, 9), (1, 4, 9, 5))),
}.items():
    case(f"matmul_integer_{_name}", mir.MatmulIntegerOp)(
        _integer_product_case(False, _a, _b, _za, _zb, _shapes)
    )
for _name, (_a, _b, _za, _zb, _shapes, _geometry) in {
    "u8_u8": (U8, U8, "one", "vector", ((2, 4, 6, 5), (6, 2, 3, 3)),
              {"pads": (1, 0, 1, 1), "strides": (1, 2), "groups": 2}),
    "u8_i8": (U8, I8, "one", "none", ((1, 3, 7, 7), (4, 3, 3, 3)),
              {"pads": (2, 2, 2, 2), "dilations": (2, 2)}),
    "i8_u8_1d": (I8, U8, "none", "one", ((2, 3, 11), (5, 3, 4)), {"pads": (1, 2), "strides": (3,)}),
    "i8_i8_3d": (I8, I8, "one", "vector", ((1, 2, 4, 5, 6), (3, 2, 2, 3, 2)),
                 {"pads": (1, 0, 1, 0, 1, 1)}),
}.items():  # fmt: skip
    case(f"conv_integer_{_name}", mir.ConvIntegerOp)(
        _integer_product_case(True, _a, _b, _za, _zb, _shapes, **_geometry)
    )


def _dynamic_quantize_matmul_case(w_type: DType, per_column: bool, zero_point: bool, bias: bool,
                                  x_shape: tuple[int, ...]):  # fmt: skip
    def make(dtype: DType, rng: np.random.Generator):
        if dtype is not DType.F32:
            return None
        k, n = x_shape[-1], 5
        params = (n,) if per_column else ()
        specs = {"x": (x_shape, dtype), "w": ((k, n), w_type), "s": (params, dtype)}
        if zero_point:
            specs["z"] = (params, w_type)
        if bias:
            specs["b"] = ((n,), dtype)

        def body(m, x, w, s, *rest):
            it = iter(rest)
            z = next(it) if zero_point else None
            b = next(it) if bias else None
            return one(m.emit(mir.DynamicQuantizeMatmulOp(x, w, s, z, b)))

        module = graph(specs, body)
        inputs = {k: values(shape, t, rng, "finite") for k, (shape, t) in specs.items()}
        inputs["s"] = np.abs(inputs["s"]) * np.float32(0.01)
        return module and (module, inputs)

    return make


for _name, _args in {
    "i8_scalar_bias": (I8, False, False, True, (4, 9)),
    "u8_per_column": (U8, True, True, False, (2, 3, 7)),
    "i8_per_column_bias": (I8, True, True, True, (1, 33)),
    "u8_vector_input": (U8, False, True, True, (6,)),
}.items():
    case(f"dynamic_quantize_matmul_{_name}", mir.DynamicQuantizeMatmulOp)(
        _dynamic_quantize_matmul_case(*_args)
    )


@case("pairwise_coupling", mir.PairwiseCouplingOp)
def _pairwise(dtype: DType, rng: np.random.Generator):
    c = 4
    module = graph({"r": ((3, c, c), dtype)}, lambda m, r: one(m.emit(mir.PairwiseCouplingOp(r))))
    r = rng.random((3, c, c)) * 0.8 + 0.1
    r = np.where(np.eye(c, dtype=bool), 0.5, r)
    r = np.triu(r, 1) + np.tril(1 - r.transpose(0, 2, 1), -1) + np.eye(c) * 0.5  # r_ji = 1 - r_ij
    return module and (module, {"r": r.astype(dtype.numpy)})


@case("dims", mir.DimsOp)
def _dims(dtype: DType, rng: np.random.Generator):
    """Sizes as data, added to an input so the graph computes something."""
    if dtype is not DType.I64:
        return None
    module = graph({"x": ((2,), DType.I64)},
                   lambda m, x: m.add(x, one(m.emit(mir.DimsOp([3, 5])))))  # fmt: skip
    return module and (module, {"x": np.array([1, -2], np.int64)})


# ---------------------------------------------------------------------------------
# Parameterised activations (as ops and as fused epilogues), scale-shift, LRN
# ---------------------------------------------------------------------------------

PARAM_ACTIVATIONS = {
    "clip": (0.0, 6.0), "clip_neg": (-1.5, 0.25), "hard_sigmoid": (0.2, 0.5),
    "hard_swish": (), "leaky_relu": (0.1,),
}  # fmt: skip


def _param_op(kind: str, x: SSAValue, params: tuple[float, ...]) -> Any:
    if kind.startswith("clip"):
        return mir.ClipOp(x, *params)
    if kind == "hard_sigmoid":
        return mir.HardSigmoidOp(x, *params)
    if kind == "hard_swish":
        return mir.HardSwishOp(x)
    return mir.LeakyReluOp(x, *params)


for _kind, _params in PARAM_ACTIVATIONS.items():
    _op = type(_param_op(_kind, ModuleBuilder("t").input("x", (1,), "f32"), _params))

    @case(_kind, _op)
    def _param_unary(dtype: DType, rng: np.random.Generator, kind=_kind, params=_params):
        module = graph({"x": ((4, 6), dtype)},
                       lambda m, x: one(m.emit(_param_op(kind, x, params))))  # fmt: skip
        return module and (module, {"x": values((4, 6), dtype, rng) * 4})

    _act = "clip" if _kind.startswith("clip") else _kind

    @case(f"fused_matmul_bias_{_kind}", mir.FusedMatmulBiasActOp)
    def _fmm_param(dtype: DType, rng: np.random.Generator, act=_act, params=_params):
        specs = {"x": ((2, 3, 6), dtype), "w": ((6, 5), dtype), "b": ((5,), dtype)}
        module = graph(
            specs,
            lambda m, x, w, b: one(m.emit(mir.FusedMatmulBiasActOp(x, w, b, act, params))),
        )
        return module and (
            module,
            {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()},
        )

    @case(f"fused_conv_bias_{_kind}", mir.FusedConvBiasActOp)
    def _fconv_param(dtype: DType, rng: np.random.Generator, act=_act, params=_params):
        specs = {"x": ((1, 3, 6, 5), dtype), "w": ((4, 3, 3, 3), dtype), "b": ((4,), dtype),
                 "r": ((1, 4, 6, 5), dtype)}  # fmt: skip
        module = graph(
            specs,
            lambda m, x, w, b, r: one(m.emit(mir.FusedConvBiasActOp(
                x, w, b, r, pads=(1, 1, 1, 1), activation=act, act_params=params
            ))),
        )  # fmt: skip
        return module and (
            module,
            {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()},
        )

    @case(f"fused_scale_shift_{_kind}", mir.FusedScaleShiftActOp)
    def _scale_shift_param(dtype: DType, rng: np.random.Generator, act=_act, params=_params):
        specs = {"x": ((2, 3, 4, 5), dtype), "s": ((3,), dtype), "t": ((3,), dtype)}
        module = graph(
            specs, lambda m, x, s, t: one(m.emit(mir.FusedScaleShiftActOp(x, s, t, act, params)))
        )
        return module and (module, {k: values(v[0], dtype, rng) for k, v in specs.items()})


VARIADIC_SHAPES = {
    "": ((4, 6), (4, 6), (4, 6), (4, 6)),
    # Only one operand has the result's size, so the planner writes the result over it:
    # each element is stored after every operand is read there.
    "_over_first": ((4, 6), (4, 1), (1, 6), (6,)),
    "_over_middle": ((4, 1), (6,), (4, 6), (1, 6)),
    "_over_last": ((6,), (4, 1), (1, 6), (4, 6)),
    "_long_rows": ((3, 150), (3, 150), (1, 150), (3, 1)),  # rows of several chunks
    "_scalar": ((), (), ()),
    # More operands than one kernel call takes: folded in groups, the result over a
    # later group's operand (groups before the last in scratch), or over the first.
    "_many_over_later": (*[(2, 1)] * 40, (2, 3), *[(1, 3)] * 30),
    "_many_over_first": ((2, 3), *[(2, 1)] * 70),
}

for _op in (mir.AddNOp, mir.MeanNOp, mir.MaxNOp, mir.MinNOp):
    for _suffix, _shapes in VARIADIC_SHAPES.items():

        @case(f"{_op.name.removeprefix('mir.')}{_suffix}", _op)
        def _variadic(dtype: DType, rng: np.random.Generator, op=_op, shapes=_shapes):
            specs = {f"x{i}": (s, dtype) for i, s in enumerate(shapes)}
            module = graph(specs, lambda m, *xs: one(m.emit(op(list(xs)))))
            return module and (module, {k: values(v[0], dtype, rng) for k, v in specs.items()})


UNARY_WITH_PARAMS: dict[str, Callable[[SSAValue], Operation]] = {
    "elu": lambda x: mir.EluOp(x, 1.0),
    "elu_alpha": lambda x: mir.EluOp(x, 0.3),
    "selu": lambda x: mir.EluOp(x, 1.6732632, 1.050701),
    "swish": lambda x: mir.SwishOp(x, 1.702),
    "swish_neg": lambda x: mir.SwishOp(x, -0.5),
    "thresholded_relu": lambda x: mir.ThresholdedReluOp(x, 0.5),
    "thresholded_relu_neg": lambda x: mir.ThresholdedReluOp(x, -1.25),
}
"""The parameterised ops that are never a fused epilogue."""

for _name, _make_op in UNARY_WITH_PARAMS.items():

    @case(_name, type(_make_op(ModuleBuilder("t").input("x", (1,), "f32"))))
    def _unary_with_params(dtype: DType, rng: np.random.Generator, make_op=_make_op):
        module = graph({"x": ((4, 6), dtype)}, lambda m, x: one(m.emit(make_op(x))))
        return module and (module, {"x": values((4, 6), dtype, rng) * 4})


for _act in ("none", "relu", "sigmoid"):

    @case(f"fused_scale_shift_{_act}", mir.FusedScaleShiftActOp)
    def _scale_shift(dtype: DType, rng: np.random.Generator, act=_act):
        specs = {"x": ((2, 3, 4, 5), dtype), "s": ((3,), dtype), "t": ((3,), dtype)}
        module = graph(
            specs, lambda m, x, s, t: one(m.emit(mir.FusedScaleShiftActOp(x, s, t, act)))
        )
        return module and (module, {k: values(v[0], dtype, rng) for k, v in specs.items()})


for _name, _x, _split, _perm, _out in (
    ("depth_to_space", (1, 8, 3, 2), (1, 2, 2, 2, 3, 2), (0, 1, 4, 2, 5, 3), (1, 2, 6, 4)),
    ("channel_shuffle", (2, 6, 2, 3), (2, 2, 3, 2, 3), (0, 2, 1, 3, 4), (2, 6, 2, 3)),
):

    @case(f"fused_reshape_transpose_{_name}", mir.FusedReshapeTransposeOp)
    def _reshape_transpose(dtype: DType, rng: np.random.Generator, xs=_x, split=_split,
                           perm=_perm, out=_out):  # fmt: skip
        """DepthToSpace's 6-d permutation; a channel shuffle (ShuffleNet) of 2 groups."""
        module = graph({"x": (xs, dtype)},
                       lambda m, x: m.fused_reshape_transpose(x, split, perm, out))  # fmt: skip
        return module and (module, {"x": values(xs, dtype, rng)})


for _rhs_first in (False, True):

    @case(f"fused_two_sided_matmul_{int(_rhs_first)}", mir.FusedTwoSidedMatmulOp)
    def _two_sided(dtype: DType, rng: np.random.Generator, rhs_first=_rhs_first):
        """A bilinear Resize's two interpolation products over [N, C, H, W]."""
        specs = {"a": ((7, 4), dtype), "x": ((2, 3, 4, 5), dtype), "b": ((5, 9), dtype)}
        module = graph(specs, lambda m, a, x, b: m.fused_two_sided_matmul(a, x, b, rhs_first))
        return module and (module, {k: values(v[0], dtype, rng) for k, v in specs.items()})


for _lhs, _rhs in ((False, True), (True, False), (True, True)):

    @case(f"fused_transposed_matmul_{int(_lhs)}{int(_rhs)}", mir.FusedTransposedMatmulOp)
    def _transposed(dtype: DType, rng: np.random.Generator, tl=_lhs, tr=_rhs):
        """Batched [2, 3, ...] operands with the last two dims of either stored swapped;
        the rhs broadcast over the first batch dim."""
        a_shape = (2, 3, 5, 4) if tl else (2, 3, 4, 5)
        b_shape = (1, 3, 6, 5) if tr else (1, 3, 5, 6)
        specs = {"a": (a_shape, dtype), "b": (b_shape, dtype)}
        module = graph(specs, lambda m, a, b: m.fused_transposed_matmul(a, b, tl, tr))
        return module and (module, {k: values(v[0], dtype, rng) for k, v in specs.items()})


for _scale, _divide in ((0.125, False), (1 / 3, False), (2.8284271247461903, True)):

    @case(f"scaled_matmul_{'div' if _divide else 'mul'}_{_scale:.3g}", mir.ScaledMatmulOp)
    def _scaled(dtype: DType, rng: np.random.Generator, scale=_scale, divide=_divide):
        """Batched operands, the rhs broadcast; a scale the element type cannot hold
        exactly (1/3, √8) must be rounded to it first, as the chain's constant is."""
        specs = {"a": ((2, 3, 4, 5), dtype), "b": ((1, 3, 5, 6), dtype)}
        module = graph(specs, lambda m, a, b: m.scaled_matmul(a, b, scale, divide))
        return module and (module, {k: values(v[0], dtype, rng) for k, v in specs.items()})


@case("fused_scale_shift_dense", mir.FusedScaleShiftActOp)
def _scale_shift_dense(dtype: DType, rng: np.random.Generator):
    """[N, C] features (a batch norm after a dense layer): the channels are the columns."""
    specs = {"x": ((4, 3), dtype), "s": ((3,), dtype), "t": ((3,), dtype)}
    module = graph(specs, lambda m, x, s, t: one(m.emit(mir.FusedScaleShiftActOp(x, s, t, "relu"))))
    return module and (module, {k: values(v[0], dtype, rng) for k, v in specs.items()})


for _size in (1, 3, 4):

    @case(f"lrn_{_size}", mir.LrnOp)
    def _lrn(dtype: DType, rng: np.random.Generator, size=_size):
        module = graph({"x": ((2, 5, 3, 2), dtype)},
                       lambda m, x: one(m.emit(mir.LrnOp(x, size, 1e-2, 0.75, 2.0))))  # fmt: skip
        return module and (module, {"x": values((2, 5, 3, 2), dtype, rng, "finite") * 3})


for _name, _x, _w, _kw in (
    ("2d", (1, 2, 4, 3), (2, 3, 3, 3), {"strides": (2, 2), "pads": (1, 1, 1, 1)}),
    ("2d_no_bias", (2, 3, 3, 4), (3, 2, 2, 2), {"strides": (2, 2), "bias": False}),
    (
        "2d_dilated_output_padding",
        (1, 2, 4, 5),
        (2, 2, 3, 2),
        {"strides": (3, 2), "pads": (2, 0, 1, 1), "dilations": (2, 3), "output_padding": (2, 1)},
    ),
    (
        "2d_grouped",
        (1, 4, 3, 3),
        (4, 3, 3, 3),
        {"groups": 2, "strides": (2, 1), "pads": (0, 1, 2, 0)},
    ),
    ("1d", (2, 3, 6), (3, 2, 4), {"strides": (3,), "pads": (1, 2), "output_padding": (1,)}),
    ("3d", (1, 2, 3, 2, 3), (2, 2, 2, 3, 2), {"strides": (2, 1, 2), "pads": (0, 1, 0, 1, 0, 0)}),
    # pads past the kernel's reach crop whole input rows' contributions
    ("2d_pads_past_kernel", (1, 2, 5, 5), (2, 2, 2, 2), {"pads": (3, 2, 2, 3)}),
    # col2im in tiles of input rows (one row's columns are 96 KiB: a 512 KiB tile holds 5)
    ("2d_tiled", (1, 8, 13, 32), (8, 64, 3, 4), {"strides": (2, 2), "pads": (1, 1, 1, 1)}),
):

    @case(f"conv_transpose_{_name}", mir.ConvTransposeOp)
    def _conv_transpose(dtype: DType, rng: np.random.Generator, xs=_x, ws=_w, kw=_kw):
        kw = dict(kw)
        specs = {"x": (xs, dtype), "w": (ws, dtype)}
        if kw.pop("bias", True):
            specs["b"] = ((ws[1] * kw.get("groups", 1),), dtype)
        module = graph(
            specs, lambda m, x, w, b=None: one(m.emit(mir.ConvTransposeOp(x, w, b, **kw)))
        )
        inputs = {k: values(v[0], dtype, rng, "finite") for k, v in specs.items()}
        return module and (module, inputs)


# ---------------------------------------------------------------------------------
# Recurrent layers
# ---------------------------------------------------------------------------------

_SEQ, _BATCH, _IN, _HIDDEN = 4, 3, 5, 6
_LENS = np.array([4, 0, 2], np.int64)  # a full row, an empty one, a short one
for _name, _op, _kw, _extra in (
    ("rnn_reverse_lens_clip", mir.RnnOp,
     {"direction": "reverse", "clip": 1.5, "activations": ["leaky_relu"],
      "activation_alpha": [0.2], "activation_beta": [0.0]}, ("bias", "sequence_lens")),
    ("rnn_bidirectional_batch_first", mir.RnnOp,
     {"direction": "bidirectional", "batch_first": True,
      "activations": ["scaled_tanh", "affine"], "activation_alpha": [0.7, 0.5],
      "activation_beta": [1.3, 0.1]}, ("initial_h",)),
    ("gru_lens", mir.GruOp, {}, ("bias", "sequence_lens", "initial_h")),
    ("gru_linear_before_reset_bidirectional", mir.GruOp,
     {"direction": "bidirectional", "linear_before_reset": True, "clip": 2.0,
      "activations": ["hard_sigmoid", "softsign", "sigmoid", "elu"],
      "activation_alpha": [0.25, 0.0, 0.0, 0.8], "activation_beta": [0.45, 0.0, 0.0, 0.0]},
     ("bias", "initial_h")),
    ("lstm_peepholes_lens_bidirectional", mir.LstmOp,
     {"direction": "bidirectional", "clip": 3.0},
     ("bias", "sequence_lens", "initial_h", "initial_c", "peepholes")),
    ("lstm_batch_first_input_forget", mir.LstmOp,
     {"batch_first": True, "input_forget": True,
      "activations": ["hard_sigmoid", "thresholded_relu", "softplus"],
      "activation_alpha": [0.3, 0.1, 0.0], "activation_beta": [0.4, 0.0, 0.0]},
     ("bias", "initial_h", "initial_c")),
    ("lstm_quantized_reverse", mir.LstmOp, {"direction": "reverse"},
     ("bias", "sequence_lens", "initial_h", "quantized")),
    # more batch rows than the per-row GEMV takes: a GEMM per step
    ("gru_wide_batch_bidirectional", mir.GruOp, {"direction": "bidirectional", "batch": 6},
     ("bias", "initial_h")),
    ("lstm_wide_batch_quantized", mir.LstmOp, {"batch": 6}, ("bias", "quantized")),
    # one layer of a stack's states (a multi-layer export's h0 and c0): rows 2-3 of 5
    ("lstm_stacked_states_bidirectional", mir.LstmOp,
     {"direction": "bidirectional", "state_offset": 2, "stack": 5},
     ("bias", "initial_h", "initial_c")),
    ("gru_stacked_states", mir.GruOp, {"state_offset": 1, "stack": 3}, ("bias", "initial_h")),
):  # fmt: skip

    @case(_name, _op)
    def _recurrent(dtype: DType, rng: np.random.Generator, op=_op, kw=_kw, extra=_extra):
        """A layer of each kind: directions, sequence_lens (an empty row, a short one),
        clip, initial states (one layer's rows of a stack of them), peepholes, the
        batch-major layout, activations with their alpha and beta, GRU's
        linear_before_reset, LSTM's input_forget, 8-bit weights (i8 W with a scale per
        row, u8 R with its zero points)."""
        kw = dict(kw)
        batch = kw.pop("batch", _BATCH)
        dirs = 2 if kw.get("direction") == "bidirectional" else 1
        stack = kw.pop("stack", dirs)
        rows = op.GATES * _HIDDEN
        x = (batch, _SEQ, _IN) if kw.get("batch_first") else (_SEQ, batch, _IN)
        state = (batch, dirs, _HIDDEN) if kw.get("batch_first") else (stack, batch, _HIDDEN)
        quantized = "quantized" in extra
        specs = {
            "input": (x, dtype),
            "weight": ((dirs, rows, _IN), DType.I8 if quantized else dtype),
            "recurrence": ((dirs, rows, _HIDDEN), DType.U8 if quantized else dtype),
        }
        shapes = {"bias": (dirs, 2 * rows), "sequence_lens": (batch,), "initial_h": state,
                  "initial_c": state, "peepholes": (dirs, 3 * _HIDDEN)}  # fmt: skip
        for name in extra:
            if name in shapes:
                specs[name] = (shapes[name], DType.I64 if name == "sequence_lens" else dtype)
        if quantized:
            specs |= {"weight_scale": ((dirs, rows), dtype), "recurrence_scale": ((dirs,), dtype),
                      "recurrence_zero_point": ((dirs,), DType.U8)}  # fmt: skip
        names = list(specs)

        def body(m: ModuleBuilder, *leaves: SSAValue) -> Any:
            named = dict(zip(names, leaves, strict=True))
            x, w, r = named.pop("input"), named.pop("weight"), named.pop("recurrence")
            return one(m.emit(op(x, w, r, **named, **kw)))

        module = graph(specs, body)
        inputs = {}
        for k, (shape, dt) in specs.items():
            v = values(shape, dt, rng, "finite")
            if k == "sequence_lens":
                v = _LENS.copy()
            elif k.endswith("scale"):
                v = (np.abs(v.astype(np.float64)) * 0.01 + 0.002).astype(dt.numpy)
            elif dt is dtype:
                v = (v.astype(np.float64) * 0.5).astype(dt.numpy)
            inputs[k] = v
        return module and (module, inputs)


# ---------------------------------------------------------------------------------
# Classic ML (rlx_ml.c): tree ensembles, SVMs, linear classifiers (tests/ml_models.py)
# ---------------------------------------------------------------------------------


def _ml_case(name: str) -> Make:
    def make(dtype: DType, rng: np.random.Generator):
        if dtype not in (DType.F32, DType.F64):
            return None
        build = ml_models.OPS[name]
        module = graph({"x": ((ml_models.ROWS, ml_models.FEATURES), dtype)},
                       lambda m, x: build(m, x, rng))  # fmt: skip
        return module and (module, {"x": ml_models.samples(dtype.numpy, rng)})

    return make


ML_OPS = {
    "tree_ensemble": mir.TreeEnsembleOp,
    "tree_classifier": mir.TreeEnsembleClassifierOp,
    "svm_regressor": mir.SvmRegressorOp,
    "svm_classifier": mir.SvmClassifierOp,
    "linear_classifier": mir.LinearClassifierOp,
    "normalizer": mir.NormalizerOp,
    "label_encoder": mir.LabelEncoderOp,
    "scaler": mir.ScalerOp,
    "binarizer": mir.BinarizerOp,
    "imputer": mir.ImputerOp,
    "one_hot_encoder": mir.OneHotEncoderOp,
}
"""The op each ``ml_models`` case is named after, by the case name's prefix."""

for _name in ml_models.OPS:
    _op = next(op for prefix, op in ML_OPS.items() if _name.startswith(prefix))
    case(f"ml_{_name}", _op)(_ml_case(_name))


# ---------------------------------------------------------------------------------
# Quantized add (quant-to-integer's of a QDQ model's add)
# ---------------------------------------------------------------------------------

for _a, _b, _y, _act, _shapes in (
    (DType.U8, DType.U8, DType.U8, "none", ((2, 3, 17), (2, 3, 17))),
    (DType.I8, DType.U8, DType.I8, "relu", ((2, 3, 17), (2, 3, 17))),
    (DType.U8, DType.I8, DType.I8, "none", ((2, 3, 17), (2, 3, 17))),
    (DType.I8, DType.I8, DType.U8, "relu", ((2, 3, 17), (2, 3, 17))),
    # broadcast: a bias vector (rows read contiguously), a mask over heads (strided rows)
    (DType.U8, DType.I8, DType.U8, "none", ((2, 3, 17), (17,))),
    (DType.I8, DType.U8, DType.U8, "relu", ((2, 1, 5, 1), (1, 3, 1, 4))),
):
    _bcast = "" if _shapes[0] == _shapes[1] else "_broadcast"

    @case(f"quantized_add_{_a.value}_{_b.value}_{_y.value}_{_act}{_bcast}", mir.QuantizedAddOp)
    def _quantized_add(
        dtype: DType, rng: np.random.Generator, a=_a, b=_b, y=_y, act=_act, shapes=_shapes
    ):
        if dtype is not y:  # the case's element type is its result's
            return None
        zero = {DType.U8: 121, DType.I8: -7}

        def body(m, lhs, rhs):
            op = mir.QuantizedAddOp(
                lhs, rhs, (0.03, 0.05, 0.06), (zero[a], zero[b], zero[y]), y, activation=act
            )
            return one(m.emit(op))

        module = graph({"lhs": (shapes[0], a), "rhs": (shapes[1], b)}, body)
        inputs = {"lhs": values(shapes[0], a, rng), "rhs": values(shapes[1], b, rng)}
        return module and (module, inputs)


# ---------------------------------------------------------------------------------
# Quantized average pool (quant-to-integer's of a quantized model's average pools)
# ---------------------------------------------------------------------------------

for _name, _x, _kw, _scales in (
    ("2d", (2, 3, 7, 6), {"kernel": (3, 2), "strides": (2, 2), "pads": (1, 0, 1, 1)}, (0.06, 0.05)),
    ("2d_incpad", (1, 2, 7, 6), {"kernel": (3, 3), "pads": (1, 1, 1, 1),
                                 "count_include_pad": True}, (0.06, 0.05)),
    ("2d_ceil", (1, 2, 7, 7), {"kernel": (2, 3), "strides": (2, 2), "ceil_mode": True},
     (0.031, 0.047)),
    ("1d", (2, 3, 9), {"kernel": (4,), "strides": (3,), "pads": (2, 1)}, (0.02, 0.01)),
    ("3d_dilated", (1, 2, 4, 5, 6), {"kernel": (2, 2, 3), "dilations": (1, 2, 2),
                                     "pads": (0, 1, 1, 1, 0, 1)}, (0.5, 0.25)),
    ("global", (2, 5, 9, 11), {"kernel": (9, 11)}, (0.06, 0.02)),
    ("saturating", (1, 3, 6, 6), {"kernel": (2, 2), "strides": (2, 2)}, (0.1, 0.003)),
    ("ties", (2, 4, 6, 6), {"kernel": (2, 2)}, (0.05, 0.05)),  # k + 1/2: to even
    ("global_widest", (1, 2, 256, 256), {"kernel": (256, 256)}, (0.5, 0.05)),  # 65536 taps
):  # fmt: skip
    for _t in (DType.U8, DType.I8):

        @case(f"quantized_avg_pool_{_name}_{_t.value}", mir.QuantizedAvgPoolOp)
        def _quantized_avg_pool(
            dtype: DType, rng: np.random.Generator, t=_t, xs=_x, kw=_kw, scales=_scales
        ):
            if dtype is not t:  # the case's element type is its input's
                return None
            zeros = (121, 97) if t is DType.U8 else (-7, 5)

            def body(m, x):
                op = mir.QuantizedAvgPoolOp(x, **kw, scales=scales, zero_points=zeros)
                return one(m.emit(op))

            module = graph({"x": (xs, t)}, body)
            return module and (module, {"x": values(xs, t, rng)})


# ---------------------------------------------------------------------------------
# Quantized softmax (quant-to-integer's of a quantized model's softmax)
# ---------------------------------------------------------------------------------

SOFTMAX_ROWS = np.array([[1, 7, 39, 38, 24, 15], [32, 26, 1, 1, 6, 14]])
"""Two rows whose quantized softmax (x_scale 0.1, y_scale 0.0039215689) an element
apart where e_k * (1 / S) stands for e_k / S (found among 400000 random rows): the
kernel's f32 steps must be the reference's."""

for _name, _x, _axis, _scales, _kind in (
    ("rows", (3, 7, 10), 2, (0.1, 1 / 256), "any"),
    ("row_of_one", (5, 1), 1, (0.1, 1 / 256), "any"),  # p = 1: saturates
    ("long_rows", (2, 3000), 1, (0.02, 1 / 256), "any"),
    ("axis_first", (9, 4, 5), 0, (0.05, 1 / 256), "any"),
    ("axis_middle", (2, 6, 5, 3), 1, (0.3, 1 / 128), "any"),
    ("steep", (4, 33), 1, (1.0, 1 / 256), "any"),  # exp(-d) under 2**-30 past d = 20
    ("small_values", (6, 4), 1, (0.25, 1 / 256), "small"),  # equal values in a row
    ("offset", (3, 16), 1, (0.07, 0.002), "any"),  # a zero point mid-range: saturation
    ("division", (2, 6), 1, (0.1, 0.0039215689), "rows"),  # SOFTMAX_ROWS
):  # fmt: skip
    for _t in (DType.U8, DType.I8):
        for _out in (DType.U8, DType.I8):

            @case(f"quantized_softmax_{_name}_{_t.value}_{_out.value}", mir.QuantizedSoftmaxOp)
            def _quantized_softmax(
                dtype: DType, rng: np.random.Generator, t=_t, out=_out, xs=_x, axis=_axis,
                scales=_scales, kind=_kind, name=_name,
            ):  # fmt: skip
                if dtype is not t:  # the case's element type is its input's
                    return None
                zero = {DType.U8: 0, DType.I8: -128}[out]
                if name == "offset":
                    zero = {DType.U8: 100, DType.I8: -20}[out]

                def body(m, x):
                    return one(m.emit(mir.QuantizedSoftmaxOp(x, axis, scales, zero, out)))

                module = graph({"x": (xs, t)}, body)
                x = values(xs, t, rng, kind) if kind != "rows" else SOFTMAX_ROWS
                if t is DType.I8:  # the same differences (the softmax's input)
                    x = x if kind != "rows" else x - 20
                return module and (module, {"x": np.asarray(x).astype(t.numpy)})
