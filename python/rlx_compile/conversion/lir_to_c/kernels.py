"""Lowerings of the MIR ops onto the C kernel library (``rlx_compile/native/c``).

One lowering per op family; fused ops and regions are their primitive chains, call by
call, through scratch tensors (the reference executor defines them that way, so their
results round exactly as the chain's do). Element types outside ``lowering.SUFFIX``
(narrow floats, sub-byte ints) have no kernels: such ops are unsupported, by name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import numpy as np
from xdsl.ir import Operation, SSAValue

from rlx_compile.conversion.lir_to_c.lowering import (
    DTYPE_CODE,
    FLOATS,
    INDEX_KIND,
    INTS,
    NUMERIC,
    SUFFIX,
    OpEmitter,
    Operand,
    broadcast_strides,
    collapse,
    dense_strides,
    lowers,
    split_axis,
)
from rlx_compile.conversion.lir_to_c.program import Arg, Bytes, Floats, Ints, Ptr, Ptrs
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import (
    Activation,
    GeluApproximation,
    MaskKind,
    NormKind,
    PadMode,
    PostTransform,
    RawDataAttr,
    RecurrentActivation,
    SvmKernel,
    TreeAggregate,
)
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.interpreter.kernels import _ACTIVATIONS as ACTIVATION_UNARY
from rlx_compile.legalization.ml import class_weights

# ---------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------

FLOAT_UNARY: dict[type[Operation], str] = {
    mir.NegOp: "neg", mir.AbsOp: "abs", mir.ReluOp: "relu", mir.SignOp: "sign",
    mir.ExpOp: "exp", mir.LogOp: "log", mir.SqrtOp: "sqrt", mir.RsqrtOp: "rsqrt",
    mir.ReciprocalOp: "reciprocal", mir.TanhOp: "tanh", mir.SigmoidOp: "sigmoid",
    mir.SiluOp: "silu", mir.ErfOp: "erf", mir.SinOp: "sin", mir.CosOp: "cos",
    mir.FloorOp: "floor", mir.CeilOp: "ceil", mir.RoundOp: "round",
    mir.SoftplusOp: "softplus", mir.TanOp: "tan", mir.AsinOp: "asin", mir.AcosOp: "acos",
    mir.AtanOp: "atan", mir.SinhOp: "sinh", mir.CoshOp: "cosh", mir.AsinhOp: "asinh",
    mir.AcoshOp: "acosh", mir.AtanhOp: "atanh", mir.SoftsignOp: "softsign",
}  # fmt: skip
INT_UNARY: dict[type[Operation], str] = {
    mir.NegOp: "neg", mir.AbsOp: "abs", mir.ReluOp: "relu", mir.SignOp: "sign",
    mir.BitwiseNotOp: "bitwise_not",
}  # fmt: skip
FLOAT_BINARY: dict[type[Operation], str] = {
    mir.AddOp: "add", mir.SubOp: "sub", mir.MulOp: "mul", mir.DivOp: "div",
    mir.PowOp: "pow", mir.MaxOp: "max", mir.MinOp: "min", mir.ModOp: "mod",
    mir.FmodOp: "fmod",
}  # fmt: skip
INT_BINARY: dict[type[Operation], str] = {
    **FLOAT_BINARY,
    mir.BitwiseAndOp: "bitwise_and", mir.BitwiseOrOp: "bitwise_or",
    mir.BitwiseXorOp: "bitwise_xor", mir.ShiftLeftOp: "shift_left",
    mir.ShiftRightOp: "shift_right",
}  # fmt: skip
FLOAT_ONLY_BINARY: dict[type[Operation], str] = {mir.PReluOp: "prelu"}
BOOL_BINARY: dict[type[Operation], str] = {mir.AndOp: "and", mir.OrOp: "or", mir.XorOp: "xor"}
ACTIVATION_CODE = {
    Activation.NONE: 0,
    Activation.RELU: 1,
    Activation.GELU: 2,
    Activation.GELU_TANH: 3,
    Activation.SILU: 4,
    Activation.SIGMOID: 5,
    Activation.TANH: 6,
}


PARAM_ACTIVATION_CODE = {
    Activation.CLIP: 7,
    Activation.HARD_SIGMOID: 8,
    Activation.HARD_SWISH: 9,
    Activation.LEAKY_RELU: 10,
}
"""The parameterised activations: ``rlx_param_act_*`` after the fused epilogue (clip
is the epilogue's clamp)."""
ELU_CODE = 11
THRESHOLDED_RELU_CODE = 12
SWISH_CODE = 13
SCALE_CODE = 14
DIVIDE_CODE = 15
"""``rlx_param_act_*``'s codes of the parameterised ops that are never an epilogue."""


def fused_activation(e: OpEmitter) -> tuple[Activation, tuple[float, ...]]:
    """A fused op's activation and its act_params, if the kernels have it (else the op is
    unsupported, so the backend falls back rather than computing another function)."""
    p = e.op.props()  # type: ignore[attr-defined]
    act: Activation = p.enum("activation")
    if act not in ACTIVATION_CODE and act not in PARAM_ACTIVATION_CODE:
        e.unsupported(f"the {act.value} activation")
    return act, tuple(p.floats("act_params"))


def epilogue_of(act: Activation, params: tuple[float, ...]) -> tuple[int, float, float, bool]:
    """The fused epilogue's activation code and clamp bounds, and whether the activation
    runs after it instead (a parameterised one other than clip)."""
    if act is Activation.CLIP:
        return 0, params[0], params[1], False
    if act in PARAM_ACTIVATION_CODE:
        return 0, -math.inf, math.inf, True
    return ACTIVATION_CODE[act], -math.inf, math.inf, False


def param_activation(
    e: OpEmitter, act: Activation, params: tuple[float, ...], x: Operand, y: Operand
) -> None:
    """clip / hard sigmoid / hard swish / leaky relu of dense ``x`` into ``y``."""
    param_act_call(e, PARAM_ACTIVATION_CODE[act], params, x, y)


def param_act_call(
    e: OpEmitter, code: int, params: tuple[float, ...], x: Operand, y: Operand
) -> None:
    """``rlx_param_act_*`` with its activation code and up to two parameters."""
    p0, p1 = (*params, 0.0, 0.0)[:2]
    e.call(f"rlx_param_act_{e.suffix(x, FLOATS)}", x.size, y.loc, x.loc, code, p0, p1)


@lowers(
    mir.ClipOp, mir.HardSigmoidOp, mir.HardSwishOp, mir.LeakyReluOp, mir.EluOp,
    mir.ThresholdedReluOp, mir.SwishOp,
)  # fmt: skip
def _param_unary(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    if isinstance(e.op, mir.EluOp):
        param_act_call(e, ELU_CODE, (p.float("alpha"), p.float("scale")), x, y)
    elif isinstance(e.op, mir.ThresholdedReluOp):
        param_act_call(e, THRESHOLDED_RELU_CODE, (p.float("alpha"),), x, y)
    elif isinstance(e.op, mir.SwishOp):
        param_act_call(e, SWISH_CODE, (p.float("alpha"),), x, y)
    elif isinstance(e.op, mir.ClipOp):
        param_activation(e, Activation.CLIP, (p.float("min"), p.float("max")), x, y)
    elif isinstance(e.op, mir.HardSigmoidOp):
        param_activation(e, Activation.HARD_SIGMOID, (p.float("alpha"), p.float("beta")), x, y)
    elif isinstance(e.op, mir.HardSwishOp):
        param_activation(e, Activation.HARD_SWISH, (), x, y)
    else:
        param_activation(e, Activation.LEAKY_RELU, (p.float("alpha"),), x, y)


def elementwise(
    e: OpEmitter, kernel: str, out: Operand, *operands: Operand, params: Sequence[object] = ()
) -> None:
    """One elementwise call: the operands broadcast to ``out`` (dense), then ``params``."""
    strides = [broadcast_strides(x.shape, out.shape) for x in operands]
    shape, collapsed = collapse(out.shape, dense_strides(out.shape), *strides)
    args: list[object] = [len(shape), Ints(tuple(shape)), out.loc]
    for x, st in zip(operands, collapsed[1:], strict=True):
        args += [x.loc, Ints(tuple(st))]
    e.call(kernel, *args, *params)  # type: ignore[arg-type]


def unary(e: OpEmitter, name: str, x: Operand, y: Operand) -> None:
    if name == "not":
        allowed = frozenset({DType.BOOL})
    elif x.dtype in INTS:
        allowed = INTS if name in INT_UNARY.values() else frozenset()
    else:
        allowed = FLOATS
    elementwise(e, f"rlx_{name}_{e.suffix(x, allowed)}", y, x)


def activation(
    e: OpEmitter, act: Activation, x: Operand, y: Operand, params: tuple[float, ...] = ()
) -> None:
    """The fused ops' activation: the unary op of the same name (none: a copy, or nothing
    when in place)."""
    if act is Activation.NONE:
        if x.loc != y.loc:
            copy(e, x, y)
        return
    if act in PARAM_ACTIVATION_CODE:
        param_activation(e, act, params, x, y)
        return
    unary(e, ACTIVATION_UNARY[act], x, y)


def binary(e: OpEmitter, name: str, a: Operand, b: Operand, y: Operand) -> None:
    if name in BOOL_BINARY.values():
        sfx = e.suffix(a, frozenset({DType.BOOL}))
    elif name in FLOAT_ONLY_BINARY.values():
        sfx = e.suffix(a, FLOATS)
    else:
        allowed = FLOATS | INTS if name in FLOAT_BINARY.values() else INTS
        sfx = e.suffix(a, allowed)
    elementwise(e, f"rlx_{name}_{sfx}", y, a, b)


@lowers(*set(FLOAT_UNARY) | set(INT_UNARY), mir.NotOp)
def _unary(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    name = "not" if isinstance(e.op, mir.NotOp) else None
    if name is None:
        table = INT_UNARY if x.dtype in INTS else FLOAT_UNARY
        name = table.get(type(e.op))
        if name is None:
            e.unsupported(f"{x.dtype.value} tensors")
    unary(e, name, x, y)


@lowers(mir.GeluOp)
def _gelu(e: OpEmitter) -> None:
    tanh = e.op.props().enum("approximate") is GeluApproximation.TANH  # type: ignore[attr-defined]
    unary(e, "gelu_tanh" if tanh else "gelu", e.args[0], e.outs[0])


@lowers(*set(INT_BINARY) | set(FLOAT_ONLY_BINARY) | set(BOOL_BINARY))
def _binary(e: OpEmitter) -> None:
    a, b = e.args
    name = {**INT_BINARY, **FLOAT_ONLY_BINARY, **BOOL_BINARY}[type(e.op)]
    binary(e, name, a, b, e.outs[0])


VARIADIC_MAX = 32
"""Operands of one ``rlx_*_n_*`` call (RLX_MAX_VARIADIC)."""


@lowers(mir.AddNOp, mir.MeanNOp, mir.MaxNOp, mir.MinNOp)
def _variadic(e: OpEmitter) -> None:
    """One pass of the variadic kernel, which folds every operand per element before it
    stores the result. More operands than one call takes fold in groups, each call
    starting from the running value; the groups before the last write to scratch when
    the planner put the result over an operand a later group reads."""
    (y,), xs = e.outs, e.args
    op = cast(mir.VariadicOp, e.op)
    kernel = f"rlx_{INT_BINARY[op.BINARY]}_n_{e.suffix(y, FLOATS | INTS)}"
    divisor = len(xs) if op.MEAN else 0
    first, rest = list(xs[:VARIADIC_MAX]), list(xs[VARIADIC_MAX:])
    acc = e.tmp(y.type) if any(x.overlaps(y) for x in rest) else y
    group = first
    while True:
        out = y if not rest else acc
        strides = [broadcast_strides(x.shape, y.shape) for x in group]
        shape, collapsed = collapse(y.shape, dense_strides(y.shape), *strides)
        e.call(
            kernel, len(shape), Ints(tuple(shape)), out.loc, len(group),
            Ptrs(tuple(x.loc for x in group)), Ints(tuple(s for st in collapsed[1:] for s in st)),
            0 if rest else divisor,
        )  # fmt: skip
        if not rest:
            return
        group, rest = [out, *rest[: VARIADIC_MAX - 1]], rest[VARIADIC_MAX - 1 :]


@lowers(mir.CompareOp)
def _compare(e: OpEmitter) -> None:
    a, b = e.args
    predicate = e.op.props().enum("predicate").value  # type: ignore[attr-defined]
    elementwise(e, f"rlx_cmp_{predicate}_{e.suffix(a)}", e.outs[0], a, b)


@lowers(mir.WhereOp)
def _where(e: OpEmitter) -> None:
    cond, a, b = e.args
    e.suffix(a)
    elementwise(e, f"rlx_where_{a.dtype.itemsize}", e.outs[0], cond, a, b)


def cast_to(e: OpEmitter, x: Operand, y: Operand) -> None:
    if x.dtype is y.dtype:
        copy(e, x, y)
        return
    e.call(f"rlx_cast_{e.suffix(x)}_{e.suffix(y)}", x.size, y.loc, x.loc)


@lowers(mir.CastOp)
def _cast(e: OpEmitter) -> None:
    cast_to(e, e.args[0], e.outs[0])


def in_compute_type(e: OpEmitter, x: Operand, dtype: DType) -> Operand:
    """``x`` as ``dtype`` (a scratch copy when it is another type)."""
    if x.dtype is dtype:
        return x
    y = e.tmp(x.type.with_dtype(dtype))
    cast_to(e, x, y)
    return y


# ---------------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------------


def strided_copy(
    e: OpEmitter,
    shape: list[int],
    elem: int,
    dst: Ptr,
    dst_strides: list[int],
    src: Ptr,
    src_strides: list[int],
) -> None:
    """dst[i] = src[i] over ``shape``, strides in elements."""
    if dst == src and dst_strides == src_strides:
        return
    shape, (ds, ss) = collapse(shape, dst_strides, src_strides)
    if len(shape) == 1 and ds == [1] and ss == [1]:
        e.call("rlx_memcpy", dst, src, shape[0] * elem)
        return
    e.call(
        "rlx_copy", len(shape), Ints(tuple(shape)), elem,
        dst, Ints(tuple(s * elem for s in ds)), src, Ints(tuple(s * elem for s in ss)),
    )  # fmt: skip


def copy(e: OpEmitter, x: Operand, y: Operand) -> None:
    """y = x broadcast to y's shape."""
    strided_copy(
        e, list(y.shape), y.dtype.itemsize, y.loc, dense_strides(y.shape),
        x.loc, broadcast_strides(x.shape, y.shape),
    )  # fmt: skip


@lowers(mir.ReshapeOp, mir.BitcastOp)
def _bytes_copy(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    e.call("rlx_memcpy", y.loc, x.loc, y.nbytes)


@lowers(mir.ExpandOp)
def _expand(e: OpEmitter) -> None:
    copy(e, e.args[0], e.outs[0])


def permuted_copy(
    e: OpEmitter, shape: Sequence[int], elem: int, dst: Ptr, src: Ptr, perm: Sequence[int]
) -> None:
    """The dense tensor of ``shape`` at ``src`` copied to ``dst`` (dense) with its dims
    permuted by ``perm``: a transpose."""
    moved = [shape[p] for p in perm]
    strides = dense_strides(shape)
    strided_copy(e, moved, elem, dst, dense_strides(moved), src, [strides[p] for p in perm])


@lowers(mir.TransposeOp)
def _transpose(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    perm = e.op.props().ints("perm")  # type: ignore[attr-defined]
    permuted_copy(e, x.shape, y.dtype.itemsize, y.loc, x.loc, perm)


@lowers(mir.FusedReshapeTransposeOp)
def _fused_reshape_transpose(e: OpEmitter) -> None:
    """The transpose of x viewed as ``split`` (the reshapes around it move nothing)."""
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    permuted_copy(e, p.ints("split"), y.dtype.itemsize, y.loc, x.loc, p.ints("perm"))


def fail(e: OpEmitter, code: int) -> None:
    """A call that fails the run with a kernel error (the reference raises there)."""
    e.call("rlx_fail", code)


@lowers(mir.NarrowOp)
def _narrow(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    axis, start = p.int("axis"), p.int("start")
    if start < 0 or start + y.shape[axis] > x.shape[axis]:
        fail(e, 2)
        return
    xs = dense_strides(x.shape)
    src = x.loc.at(start * xs[axis] * x.dtype.itemsize)
    strided_copy(e, list(y.shape), y.dtype.itemsize, y.loc, dense_strides(y.shape), src, xs)


@lowers(mir.SliceOp)
def _slice(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    starts, steps = p.ints("starts"), p.ints("steps")
    xs = dense_strides(x.shape)
    offset = 0
    for axis, (start, step, n) in enumerate(zip(starts, steps, y.shape, strict=True)):
        last = start + (n - 1) * step
        if n and (min(start, last) < 0 or max(start, last) >= x.shape[axis]):
            fail(e, 2)
            return
        offset += start * xs[axis]
    src = x.loc.at(offset * x.dtype.itemsize)
    strides = [s * xs[a] for a, s in enumerate(steps)]
    strided_copy(e, list(y.shape), y.dtype.itemsize, y.loc, dense_strides(y.shape), src, strides)


@lowers(mir.ConcatOp)
def _concat(e: OpEmitter) -> None:
    y = e.outs[0]
    axis = e.op.props().int("axis")  # type: ignore[attr-defined]
    ys = dense_strides(y.shape)
    at = 0
    for x in e.args:
        dst = y.loc.at(at * ys[axis] * y.dtype.itemsize)
        # An operand the planner produced inside the concat's slot is already there.
        strided_copy(e, list(x.shape), y.dtype.itemsize, dst, ys, x.loc, dense_strides(x.shape))
        at += x.shape[axis]


@lowers(mir.GatherOp)
def _gather(e: OpEmitter) -> None:
    table, indices = e.args
    axis = e.op.props().int("axis")  # type: ignore[attr-defined]
    if indices.dtype not in INDEX_KIND:
        e.unsupported(f"{indices.dtype.value} indices")
    outer, n, inner = split_axis(table.shape, axis)
    e.call(
        "rlx_gather", outer, n, inner * table.dtype.itemsize, e.outs[0].loc, table.loc,
        indices.loc, indices.size, INDEX_KIND[indices.dtype],
    )  # fmt: skip


@lowers(mir.GatherAxesOp)
def _gather_axes(e: OpEmitter) -> None:
    x, *indices = e.args
    y = e.outs[0]
    axes = e.op.props().ints("axes")  # type: ignore[attr-defined]
    # The index vectors side by side in scratch, then the kernel's offset table.
    total = sum(i.size for i in indices)
    packed = e.scratch(8 * total)
    at = 0
    for i in indices:
        e.call("rlx_memcpy", packed.at(at), i.loc, i.nbytes)
        at += i.nbytes
    e.call(
        "rlx_gather_axes", x.rank, Ints(x.shape), Ints(y.shape),
        Ints(tuple(int(a in axes) for a in range(x.rank))), x.dtype.itemsize, y.loc, x.loc,
        packed, e.scratch(8 * sum(y.shape)),
    )  # fmt: skip


@lowers(mir.GatherElementsOp)
def _gather_elements(e: OpEmitter) -> None:
    x, indices = e.args
    axis = e.op.props().int("axis")  # type: ignore[attr-defined]
    e.call(
        "rlx_gather_elements", x.rank, Ints(x.shape), Ints(indices.shape), axis,
        x.dtype.itemsize, e.outs[0].loc, x.loc, indices.loc,
    )  # fmt: skip


@lowers(mir.PadOp)
def _pad(e: OpEmitter) -> None:
    from rlx_compile.interpreter.kernels import cast as reference_cast

    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    mode: PadMode = p.enum("mode")
    fill = reference_cast(np.asarray(p.float("value"), dtype=np.float64), x.dtype.numpy)
    code = {PadMode.CONSTANT: 0, PadMode.REFLECT: 1, PadMode.EDGE: 2, PadMode.WRAP: 3}[mode]
    e.call(
        "rlx_pad", x.rank, Ints(x.shape), Ints(p.ints("pads")), code, x.dtype.itemsize,
        y.loc, x.loc, Bytes(np.ascontiguousarray(fill).tobytes()),
    )  # fmt: skip


@lowers(mir.ScatterNdOp)
def _scatter_nd(e: OpEmitter) -> None:
    data, indices, updates = e.args
    y = e.outs[0]
    e.suffix(data)
    if indices.dtype not in INDEX_KIND:
        e.unsupported(f"{indices.dtype.value} indices")
    reduction = e.op.props().enum("reduction").value  # type: ignore[attr-defined]
    code = ("none", "add", "mul", "max", "min").index(reduction)
    copy(e, data, y)
    q = indices.shape[-1]
    e.call(
        "rlx_scatter_nd", q, Ints(data.shape[:q]), math.prod(data.shape[q:]),
        math.prod(indices.shape[:-1]), DTYPE_CODE[data.dtype], code, y.loc, indices.loc,
        INDEX_KIND[indices.dtype], updates.loc,
    )  # fmt: skip


@lowers(mir.DimsOp)
def _dims(e: OpEmitter) -> None:
    """Sizes as data: in a planned graph every dim is a number."""
    values = e.op.dims  # type: ignore[attr-defined]
    if not all(isinstance(d, int) for d in values):
        e.unsupported("symbolic dims")
    data = np.asarray(values, np.int64).tobytes()
    e.call("rlx_memcpy", e.outs[0].loc, Bytes(data), len(data))


@lowers(mir.PairwiseCouplingOp)
def _pairwise_coupling(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    c = x.shape[-1]
    sfx = e.suffix(x, FLOATS)
    scratch = e.scratch((c * c + 2 * c) * 8)  # in the compute type: at most a double
    e.call(f"rlx_pairwise_coupling_{sfx}", math.prod(x.shape[:-2]), c, y.loc, x.loc, scratch)


# ---------------------------------------------------------------------------------
# Along one axis
# ---------------------------------------------------------------------------------


@lowers(mir.SoftmaxOp, mir.LogSoftmaxOp)
def _softmax(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    name = "softmax" if isinstance(e.op, mir.SoftmaxOp) else "log_softmax"
    outer, n, inner = split_axis(x.shape, e.op.props().int("axis"))  # type: ignore[attr-defined]
    e.call(f"rlx_{name}_{e.suffix(x, FLOATS)}", outer, n, inner, y.loc, x.loc)


@lowers(mir.ArgMaxOp, mir.ArgMinOp)
def _arg_reduce(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    name = "argmax" if isinstance(e.op, mir.ArgMaxOp) else "argmin"
    outer, n, inner = split_axis(x.shape, e.op.props().int("axis"))  # type: ignore[attr-defined]
    e.call(f"rlx_{name}_{e.suffix(x, NUMERIC)}", outer, n, inner, y.loc, x.loc)


@lowers(mir.CumsumOp, mir.CumprodOp)
def _scan(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    name = "cumsum" if isinstance(e.op, mir.CumsumOp) else "cumprod"
    outer, n, inner = split_axis(x.shape, p.int("axis"))
    e.call(
        f"rlx_{name}_{e.suffix(x, NUMERIC)}", outer, n, inner, y.loc, x.loc,
        int(p.flag("exclusive")), int(p.flag("reverse")),
    )  # fmt: skip


@lowers(mir.TopKOp)
def _topk(e: OpEmitter) -> None:
    (x,) = e.args
    values, indices = e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    outer, n, inner = split_axis(x.shape, p.int("axis"))
    sfx = e.suffix(x, NUMERIC)
    e.call(
        f"rlx_topk_{sfx}", outer, n, inner, p.int("k"), int(p.flag("smallest")),
        values.loc, indices.loc, x.loc, e.scratch(16 * n),
    )  # fmt: skip


_REDUCE = {
    mir.ReduceSumOp: "sum", mir.ReduceMeanOp: "mean", mir.ReduceMaxOp: "max",
    mir.ReduceMinOp: "min", mir.ReduceProdOp: "prod", mir.ReduceLogSumExpOp: "log_sum_exp",
    mir.ReduceSumSquareOp: "sum_square", mir.ReduceL2Op: "l2", mir.ReduceL1Op: "l1",
    mir.ReduceLogSumOp: "log_sum",
}  # fmt: skip
_FLOAT_REDUCE = frozenset({"log_sum_exp", "l2", "log_sum"})


def reduce(e: OpEmitter, kind: str, x: Operand, axes: tuple[int, ...], y: Operand) -> None:
    log_sum_exp = kind == "log_sum_exp"
    sfx = e.suffix(x, FLOATS if kind in _FLOAT_REDUCE else NUMERIC)
    shape: list[int] = []
    flags: list[int] = []
    for d, n in enumerate(x.shape):
        if n == 1:
            continue
        flag = int(d in axes)
        if flags and flags[-1] == flag:
            shape[-1] *= n
        else:
            shape.append(n)
            flags.append(flag)
    if 0 in x.shape:  # empty: every output element reduces nothing
        shape = [0 if d in axes else n for d, n in enumerate(x.shape)]
        flags = [int(d in axes) for d in range(x.rank)]
    e.call(
        f"rlx_reduce_{kind}_{sfx}", len(shape), Ints(tuple(shape)), Ints(tuple(flags)),
        y.loc, x.loc, e.scratch((16 if log_sum_exp else 8) * max(y.size, 1)),
    )  # fmt: skip


@lowers(*_REDUCE)
def _reduce(e: OpEmitter) -> None:
    axes = tuple(e.op.props().ints("axes"))  # type: ignore[attr-defined]
    reduce(e, _REDUCE[type(e.op)], e.args[0], axes, e.outs[0])  # type: ignore[index]


# ---------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------


def dense_param(e: OpEmitter, v: Operand | None, shape: tuple[int, ...]) -> Ptr | None:
    """An affine parameter as a dense ``shape`` array (broadcast into scratch if it is
    given in a broadcasting shape)."""
    if v is None:
        return None
    if v.size == math.prod(shape):
        return v.loc
    full = e.tmp(v.type.with_shape(shape))
    copy(e, v, full)
    return full.loc


def norm(
    e: OpEmitter,
    kind: str,
    x: Operand,
    scale: Operand,
    bias: Operand | None,
    axis: int,
    eps: float,
    y: Operand,
) -> None:
    sfx = e.suffix(x, FLOATS)
    tail = x.shape[axis:]
    rows, n = math.prod(x.shape[:axis]), math.prod(tail)
    sp, bp = dense_param(e, scale, tail), dense_param(e, bias, tail)
    e.call(f"rlx_{kind}_{sfx}", rows, n, eps, y.loc, x.loc, sp, bp)


def _optional(e: OpEmitter, names: tuple[str, ...]) -> dict[str, Operand | None]:
    """The op's operands by name (absent optional operands are None)."""
    out: dict[str, Operand | None] = {}
    it = iter(e.args)
    for name in names:
        out[name] = None if getattr(e.op, name) is None else next(it)
    return out


@lowers(mir.LayerNormOp, mir.RmsNormOp)
def _norm(e: OpEmitter) -> None:
    a = _optional(e, ("input", "scale", "bias"))
    p = e.op.props()  # type: ignore[attr-defined]
    kind = "layer_norm" if isinstance(e.op, mir.LayerNormOp) else "rms_norm"
    x, scale = a["input"], a["scale"]
    assert x is not None and scale is not None
    norm(e, kind, x, scale, a["bias"], p.int("axis"), p.float("epsilon"), e.outs[0])


@lowers(mir.GroupNormOp)
def _group_norm(e: OpEmitter) -> None:
    x, scale, bias = e.args
    p = e.op.props()  # type: ignore[attr-defined]
    n, c = x.shape[:2]
    e.call(
        f"rlx_group_norm_{e.suffix(x, FLOATS)}", n, c, math.prod(x.shape[2:]), p.int("groups"),
        p.float("epsilon"), e.outs[0].loc, x.loc, scale.loc, bias.loc,
    )  # fmt: skip


@lowers(mir.BatchNormOp)
def _batch_norm(e: OpEmitter) -> None:
    x, scale, bias, mean, var = e.args
    n, c = x.shape[0], x.shape[1] if x.rank > 1 else 1
    e.call(
        f"rlx_batch_norm_{e.suffix(x, FLOATS)}", n, c, math.prod(x.shape[2:]),
        e.op.props().float("epsilon"), e.outs[0].loc, x.loc, scale.loc, bias.loc,  # type: ignore[attr-defined]
        mean.loc, var.loc,
    )  # fmt: skip


@lowers(mir.FusedResidualRmsNormOp, mir.FusedResidualLayerNormOp)
def _fused_residual_norm(e: OpEmitter) -> None:
    """add -> norm; the sum is the second result."""
    a = _optional(e, ("input", "residual", "scale", "bias"))
    x, residual, scale = a["input"], a["residual"], a["scale"]
    assert x is not None and residual is not None and scale is not None
    p = e.op.props()  # type: ignore[attr-defined]
    out, total = e.outs
    binary(e, "add", x, residual, total)
    kind = "rms_norm" if isinstance(e.op, mir.FusedResidualRmsNormOp) else "layer_norm"
    norm(e, kind, total, scale, a["bias"], p.int("axis"), p.float("epsilon"), out)


# ---------------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------------


def matmul_geometry(a: Operand, b: Operand) -> tuple[list[Arg], int, int, int]:
    """The batch arguments (rank, shape, a's and b's batch strides) and M, N, K of
    ``a · b`` with NumPy matmul broadcasting (1-d operands promoted)."""
    sa, sb = list(a.shape), list(b.shape)
    if len(sa) == 1:
        sa = [1, *sa]
    if len(sb) == 1:
        sb = [*sb, 1]
    m, k, n = sa[-2], sa[-1], sb[-1]
    batch = list(np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
    a_strides = [s * m * k for s in broadcast_strides(sa[:-2], batch)]
    b_strides = [s * k * n for s in broadcast_strides(sb[:-2], batch)]
    if batch and not any(b_strides) and a_strides == [s * m * k for s in dense_strides(batch)]:
        # A shared right operand: the batch is more rows of one product.
        m *= math.prod(batch)
        batch, a_strides, b_strides = [], [], []
    out_strides = [s * m * n for s in dense_strides(batch)]
    batch, (_, a_strides, b_strides) = (
        collapse(batch, out_strides, a_strides, b_strides) if batch else ([], ([], [], []))
    )
    args: list[Arg] = [
        len(batch),
        Ints(tuple(batch)),
        Ints(tuple(a_strides)),
        Ints(tuple(b_strides)),
    ]
    return args, m, n, k


def matmul(e: OpEmitter, a: Operand, b: Operand, y: Operand) -> None:
    sfx = e.suffix(a, NUMERIC)
    batch, m, n, k = matmul_geometry(a, b)
    scratch = e.scratch(4 * (m * k + k * n + m * n)) if a.dtype in (DType.F16, DType.BF16) else None
    e.call(f"rlx_matmul_{sfx}", *batch, m, n, k, y.loc, a.loc, b.loc, scratch)


def rows_of(shape: tuple[int, ...]) -> int:
    return math.prod(shape[:-1])


def bias_act(
    e: OpEmitter,
    y: Operand,
    bias: Operand | None,
    act: Activation,
    channels_axis: int,
    residual: Operand | None = None,
    params: tuple[float, ...] = (),
) -> None:
    """y = act((y + bias along ``channels_axis``) + residual), in place: one epilogue
    call when bias is per channel and residual has y's shape, else the chain."""
    c = y.shape[channels_axis] if y.rank else 1
    per_channel = bias is None or bias.size == c
    same_residual = residual is None or residual.shape == y.shape
    if y.dtype in FLOATS and per_channel and same_residual:
        outer = math.prod(y.shape[:channels_axis])
        inner = math.prod(y.shape[channels_axis + 1 :])
        if bias is None and residual is None and act is Activation.NONE:
            return
        code, lo, hi, after = epilogue_of(act, params)
        e.call(
            f"rlx_epilogue_{e.suffix(y, FLOATS)}", outer, c, inner, y.loc,
            bias.loc if bias else None, residual.loc if residual else None, code, lo, hi,
        )  # fmt: skip
        if after:
            param_activation(e, act, params, y, y)
        return
    if bias is not None:
        shape = [1] * y.rank
        shape[channels_axis] = bias.size
        binary(e, "add", y, Operand(bias.loc, bias.type.with_shape(shape)), y)
    if residual is not None:
        binary(e, "add", y, residual, y)
    activation(e, act, y, y, params)


@lowers(mir.MatmulOp)
def _matmul(e: OpEmitter) -> None:
    a, b = e.args
    matmul(e, a, b, e.outs[0])


@lowers(mir.FusedMatmulBiasActOp)
def _fused_matmul(e: OpEmitter) -> None:
    """matmul -> add bias -> activation."""
    x, w, bias = e.args
    y = e.outs[0]
    matmul(e, x, w, y)
    act, params = fused_activation(e)
    if y.rank and bias.size == y.shape[-1]:  # [N] or [1, ..., N] (verified): per column
        bias_act(e, y, bias, act, y.rank - 1, params=params)
    else:
        binary(e, "add", y, bias, y)
        activation(e, act, y, y, params)


@lowers(mir.FusedTwoSidedMatmulOp)
def _fused_two_sided_matmul(e: OpEmitter) -> None:
    """Two products, the one in between in scratch."""
    lhs, x, rhs = e.args
    y = e.outs[0]
    if e.op.props().flag("rhs_first"):  # type: ignore[attr-defined]
        mid = e.tmp(x.type.with_shape((*x.shape[:-1], rhs.shape[1])))
        matmul(e, x, rhs, mid)
        matmul(e, lhs, mid, y)
    else:
        mid = e.tmp(x.type.with_shape((*x.shape[:-2], lhs.shape[0], x.shape[-1])))
        matmul(e, lhs, x, mid)
        matmul(e, mid, rhs, y)


@lowers(mir.ScaledMatmulOp)
def _scaled_matmul(e: OpEmitter) -> None:
    """matmul, then the scale applied in place, rounded to the element type first (the
    one-element constant of the unfused chain)."""
    a, b = e.args
    y = e.outs[0]
    matmul(e, a, b, y)
    p = e.op.props()  # type: ignore[attr-defined]
    scale = float(np.asarray(p.float("scale"), y.dtype.numpy))
    param_act_call(e, DIVIDE_CODE if p.flag("divide") else SCALE_CODE, (scale,), y, y)


@lowers(mir.FusedTransposedMatmulOp)
def _fused_transposed_matmul(e: OpEmitter) -> None:
    """Each operand to transpose copied transposed into scratch, then the matmul."""
    p = e.op.props()  # type: ignore[attr-defined]
    operands = list(e.args)
    for i, flag in enumerate(("transpose_lhs", "transpose_rhs")):
        if not p.flag(flag):
            continue
        x = operands[i]
        perm = mir.swap_last_two_perm(len(x.shape))
        t = e.tmp(x.type.with_shape(tuple(x.shape[d] for d in perm)))
        permuted_copy(e, x.shape, x.dtype.itemsize, t.loc, x.loc, perm)
        operands[i] = t
    matmul(e, operands[0], operands[1], e.outs[0])


@lowers(mir.FusedSwigluOp)
def _fused_swiglu(e: OpEmitter) -> None:
    """silu(gate half) * up half, reading the halves in place."""
    (x,), (y,) = e.args, e.outs
    n = x.shape[-1] // 2
    row = dense_strides(x.shape)

    def half(start: int) -> Operand:
        return Operand(x.loc.at(start * x.dtype.itemsize), x.type.with_shape(y.shape))

    first, second = half(0), half(n)
    gate, up = (first, second) if e.op.props().flag("gate_first") else (second, first)  # type: ignore[attr-defined]
    sfx = e.suffix(x, FLOATS)
    strides = [*row[:-1], 1]
    shape, (ys, gs) = collapse(list(y.shape), dense_strides(y.shape), strides)
    e.call(f"rlx_silu_{sfx}", len(shape), Ints(tuple(shape)), y.loc, gate.loc, Ints(tuple(gs)))
    e.call(
        f"rlx_mul_{sfx}", len(shape), Ints(tuple(shape)), y.loc, y.loc, Ints(tuple(ys)),
        up.loc, Ints(tuple(gs)),
    )  # fmt: skip


# ---------------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------------


IM2COL_TILE_BYTES = 512 * 1024
PLANE_BYTES = 32 * 1024
"""A stride-1 depthwise conv whose padded input plane and output plane (f32) fit in
this (L1) runs one long axpy per tap over the plane (rlx_conv_plane); bigger planes run
row by row."""


def _pad3(values: tuple[int, ...], fill: int) -> list[int]:
    return [fill] * (3 - len(values)) + list(values)


def conv(
    e: OpEmitter,
    x: Operand,
    w: Operand,
    y: Operand,
    bias: Operand | None = None,
    residual: Operand | None = None,
    act: Activation = Activation.NONE,
    params: tuple[float, ...] = (),
) -> None:
    """y = conv(x, w), then (f32/f64 only) the epilogue per block as the conv makes it."""
    p = e.op.props()  # type: ignore[attr-defined]
    sfx = e.suffix(x, FLOATS)
    k = x.rank - 2
    if not 1 <= k <= 3:
        e.unsupported(f"{k}-d convolutions")
    strides, pads, dilations, groups = (
        p.ints("strides"), p.ints("pads"), p.ints("dilations"), p.int("groups")
    )  # fmt: skip
    n, c_in = x.shape[:2]
    c_out = w.shape[0]
    cg = c_in // groups
    spatial_in, kernel, spatial_out = x.shape[2:], w.shape[2:], y.shape[2:]
    taps = cg * math.prod(kernel)
    pointwise = math.prod(kernel) == 1 and all(s == 1 for s in strides) and not any(pads)
    out3 = _pad3(spatial_out, 1)
    kernel3, dilations3 = _pad3(kernel, 1), _pad3(dilations, 1)
    plane_width = out3[2] + (kernel3[2] - 1) * dilations3[2]
    plane = (out3[1] + (kernel3[1] - 1) * dilations3[1] + out3[1]) * plane_width
    if not e.options.im2col:
        algo = 0
    elif pointwise:
        algo = 1
    elif cg == 1 and k <= 2 and all(st == 1 for st in strides) and plane * 4 <= PLANE_BYTES:
        algo = 4  # depthwise on a padded plane in L1
    elif cg == 1:
        algo = 3
    else:
        algo = 2
    rows, row = out3[0] * out3[1], out3[2]
    # im2col tiles of whole output rows: the tile's columns fit in IM2COL_TILE_BYTES (the
    # GEMM reads them while they are in cache), but at least 64 positions wide.
    tile = max(1, IM2COL_TILE_BYTES // max(1, taps * row * x.dtype.itemsize), -(-64 // row))
    tile = min(tile, rows)
    geom = (
        algo, n, c_in, c_out, groups, *_pad3(spatial_in, 1), *_pad3(kernel, 1), *out3,
        *_pad3(strides, 1), *_pad3(pads[:k], 0), *_pad3(dilations, 1), tile,
    )  # fmt: skip
    cols = taps * tile * row if algo == 2 else plane if algo == 4 else 0
    if x.dtype in (DType.F16, DType.BF16):
        floats = x.size + w.size + y.size + cols
        scratch: Ptr | None = e.scratch(4 * floats)
    else:
        scratch = e.scratch(cols * x.dtype.itemsize) if cols else None
    code, lo, hi, after = epilogue_of(act, params)
    e.call(
        f"rlx_conv_{sfx}", Ints(geom), y.loc, x.loc, w.loc, scratch,
        bias.loc if bias else None, residual.loc if residual else None, code, lo, hi,
    )  # fmt: skip
    if after:
        param_activation(e, act, params, y, y)


@lowers(mir.ConvOp)
def _conv(e: OpEmitter) -> None:
    x, w = e.args
    conv(e, x, w, e.outs[0])


@lowers(mir.FusedConvBiasActOp)
def _fused_conv(e: OpEmitter) -> None:
    """conv -> add bias per channel -> add residual -> activation."""
    a = _optional(e, ("input", "weight", "bias", "residual"))
    x, w, bias = a["input"], a["weight"], a["bias"]
    assert x is not None and w is not None and bias is not None
    y, residual = e.outs[0], a["residual"]
    act, params = fused_activation(e)
    if x.dtype in (DType.F32, DType.F64) and (residual is None or residual.shape == y.shape):
        conv(e, x, w, y, bias, residual, act, params)  # the epilogue inside the conv
        return
    conv(e, x, w, y)
    bias_act(e, y, bias, act, 1, residual, params)


@lowers(mir.ConvTransposeOp)
def _conv_transpose(e: OpEmitter) -> None:
    """GEMM (every input element's kernel-weighted columns) + col2im, a tile of input rows
    at a time; f16/bf16 computed in f32 and rounded once, as the reference does."""
    a = _optional(e, ("input", "weight", "bias"))
    x, w, bias = a["input"], a["weight"], a["bias"]
    assert x is not None and w is not None
    y = e.outs[0]
    p = e.op.props()  # type: ignore[attr-defined]
    sfx = e.suffix(x, FLOATS)
    k = x.rank - 2
    if not 1 <= k <= 3:
        e.unsupported(f"{k}-d transposed convolutions")
    strides, pads, dilations = p.ints("strides"), p.ints("pads"), p.ints("dilations")
    spatial_in, kernel, spatial_out = x.shape[2:], w.shape[2:], y.shape[2:]
    full = [(spatial_in[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 for i in range(k)]
    crop = [full[i] - pads[i] - pads[k + i] for i in range(k)]
    in3 = _pad3(spatial_in, 1)
    column = w.shape[1] * math.prod(kernel) * in3[2]  # elements of one input row's columns
    compute = 4 if x.dtype in (DType.F16, DType.BF16) else x.dtype.itemsize
    rows = in3[0] * in3[1]
    tile = max(1, IM2COL_TILE_BYTES // max(1, column * compute)) if e.options.im2col else 1
    tile = min(tile, max(rows, 1))
    geom = (
        x.shape[0], x.shape[1], y.shape[1], p.int("groups"), *in3, *_pad3(kernel, 1),
        *_pad3(spatial_out, 1), *_pad3(strides, 1), *_pad3(pads[:k], 0),
        *_pad3(dilations, 1), tile, *_pad3(tuple(crop), 1),
    )  # fmt: skip
    cols = column * tile
    if compute != x.dtype.itemsize:
        cols += x.size + w.size + y.shape[1] + y.size
    e.call(
        f"rlx_conv_transpose_{sfx}", Ints(geom), y.loc, x.loc, w.loc,
        bias.loc if bias else None, e.scratch(cols * compute),
    )  # fmt: skip


@lowers(mir.FusedScaleShiftActOp)
def _fused_scale_shift_act(e: OpEmitter) -> None:
    """mul by scale along axis 1 -> add shift so -> activation, each rounded as the
    reference's primitives round."""
    (x, scale, shift), (y,) = e.args, e.outs
    view = [1] * x.rank
    view[1] = x.shape[1]
    binary(e, "mul", x, Operand(scale.loc, scale.type.with_shape(view)), y)
    binary(e, "add", y, Operand(shift.loc, shift.type.with_shape(view)), y)
    act, params = fused_activation(e)
    activation(e, act, y, y, params)


@lowers(mir.FusedLstmCellOp)
def _fused_lstm_cell(e: OpEmitter) -> None:
    """The gate blocks' sigmoid / tanh, f·c + i·g, o·tanh: one call over the rows, each
    step rounded as the chain's kernels round it (scratch: two rows, the input gate and
    a tanh)."""
    (gates, prev), (h, c) = e.args, e.outs
    order = e.op.props().ints("gate_order")  # type: ignore[attr-defined]
    hidden = prev.shape[-1]
    rows = prev.size // hidden if hidden else 0
    sfx = e.suffix(gates, FLOATS)
    scratch = e.scratch(2 * hidden * (8 if gates.dtype is DType.F64 else 4))
    e.call(f"rlx_lstm_cell_{sfx}", rows, hidden, Ints(tuple(order)), h.loc, c.loc, gates.loc,
           prev.loc, scratch)  # fmt: skip


@lowers(mir.FusedGruCellOp)
def _fused_gru_cell(e: OpEmitter) -> None:
    """r, z = sigmoid of the blocks' sums, n = tanh(x_n + r·h_n), (1 - z)·n + z·h: one
    call over the rows, each step rounded as the chain's kernels round it (scratch: two
    rows, z and n)."""
    (gx, gh, prev), (h,) = e.args, e.outs
    order = e.op.props().ints("gate_order")  # type: ignore[attr-defined]
    hidden = prev.shape[-1]
    rows = prev.size // hidden if hidden else 0
    sfx = e.suffix(gx, FLOATS)
    scratch = e.scratch(2 * hidden * (8 if gx.dtype is DType.F64 else 4))
    e.call(f"rlx_gru_cell_{sfx}", rows, hidden, Ints(tuple(order)), h.loc, gx.loc, gh.loc,
           prev.loc, scratch)  # fmt: skip


RECURRENT_KIND = {mir.RnnOp: 0, mir.GruOp: 1, mir.LstmOp: 2}
RECURRENT_ACTIVATION_CODE = {a: i for i, a in enumerate(RecurrentActivation)}
"""rlx_recurrent.c's RLX_RACT_* codes."""


@lowers(*mir.RECURRENT_OPS)
def _recurrent(e: OpEmitter) -> None:
    """The whole layer in one call: the input projection of every step as one GEMM, then
    each step's recurrent GEMM and gates (rlx_recurrent.c)."""
    op = cast(mir.RecurrentOp, e.op)
    names = tuple(name for name, _ in type(op).get_irdl_definition().operands)
    a = _optional(e, names)
    x, w, r = a["input"], a["weight"], a["recurrence"]
    assert x is not None and w is not None and r is not None
    sfx = e.suffix(x, FLOATS)
    p = op.props()
    batch_first = p.flag("batch_first")
    seq, batch, width = x.shape
    if batch_first:
        seq, batch = batch, seq
    hidden, backwards = op.hidden_size(), op.backwards()
    rows = op.GATES * hidden
    lens = a["sequence_lens"]
    quantized = 0
    w_scale, r_scale = a.get("weight_scale"), a.get("recurrence_scale")
    if w_scale is not None and r_scale is not None:
        quantized = 1 | (w.dtype is DType.I8) << 1 | (r.dtype is DType.I8) << 2
    clip = p.opt_float("clip")
    geom = (
        RECURRENT_KIND[type(op)], seq, batch, width, hidden, len(backwards), *map(int, backwards),
        *([0] * (2 - len(backwards))), int(batch_first),
        -1 if lens is None else INDEX_KIND[lens.dtype],
        int(p.flag("linear_before_reset")), int(p.flag("input_forget")), quantized,
        int(w_scale is not None and w_scale.rank == 2),
        int(r_scale is not None and r_scale.rank == 2), int(clip is not None),
    )  # fmt: skip
    acts = [act for direction in op.gate_activations() for act in direction]
    codes = Ints(tuple(RECURRENT_ACTIVATION_CODE[kind] for kind, _, _ in acts))
    params = Bytes(np.array([v for _, alpha, beta in acts for v in (alpha, beta)]).tobytes())
    # Scratch (rlx_recurrent.c): in the compute type the projection, the step's product,
    # five state rows, the bias sum, Rb's h block, the peepholes, the rows' scales (and
    # f16/bf16's X, W and R converted); then the quantized operands as int16.
    convert = x.dtype in (DType.F16, DType.BF16)
    compute = 8 if x.dtype is DType.F64 else 4
    ct = seq * batch * rows + batch * rows + 5 * batch * hidden + rows + 4 * hidden + batch
    if convert:
        ct += seq * batch * width + rows * width + rows * hidden
    q = seq * batch * width + batch * hidden if quantized else 0
    outs = [o.loc for o in e.outs]
    # The layer's rows of stacked initial states (state_offset; never with batch_first).
    state_at = (p.opt_int("state_offset") or 0) * batch * hidden * x.dtype.itemsize
    locs = {n: None if v is None else v.loc for n, v in a.items()}
    for n in ("initial_h", "initial_c"):
        if (loc := locs.get(n)) is not None:
            locs[n] = loc.at(state_at)
    e.call(
        f"rlx_recurrent_{sfx}", Ints(geom), codes, params, 0.0 if clip is None else clip,
        outs[0], outs[1], outs[2] if len(outs) > 2 else None, x.loc, w.loc, r.loc,
        *(locs.get(n) for n in (
            "bias", "sequence_lens", "initial_h", "initial_c", "peepholes", "weight_scale",
            "weight_zero_point", "recurrence_scale", "recurrence_zero_point")),
        e.scratch(ct * compute + 2 * q),
    )  # fmt: skip


@lowers(mir.LrnOp)
def _lrn(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    e.call(
        f"rlx_lrn_{e.suffix(x, FLOATS)}", x.shape[0], x.shape[1], math.prod(x.shape[2:]),
        y.loc, x.loc, p.int("size"), p.float("alpha"), p.float("beta"), p.float("bias"),
    )  # fmt: skip


def _pool_geometry(e: OpEmitter) -> Ints:
    """The pools' geom (rlx_runtime.h): sizes, kernel, strides, pads, dilations in 3-d."""
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    k = x.rank - 2
    if not 1 <= k <= 3:
        e.unsupported(f"{k}-d pooling")
    pads = p.ints("pads")
    return Ints((
        x.shape[0], x.shape[1], *_pad3(x.shape[2:], 1), *_pad3(p.ints("kernel"), 1),
        *_pad3(y.shape[2:], 1), *_pad3(p.ints("strides"), 1), *_pad3(pads[:k], 0),
        *_pad3(pads[k:], 0), *_pad3(p.ints("dilations"), 1),
    ))  # fmt: skip


@lowers(mir.MaxPoolOp, mir.AvgPoolOp)
def _pool(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    geom = _pool_geometry(e)
    is_max = isinstance(e.op, mir.MaxPoolOp)
    sfx = e.suffix(x, FLOATS | INTEGER_INPUTS if is_max else FLOATS)
    acc = e.scratch(y.shape[-1] * (8 if x.dtype is DType.F64 else 4))
    if is_max:
        e.call(f"rlx_max_pool_{sfx}", geom, y.loc, x.loc, 0, acc)
    else:
        flag = int(p.flag("count_include_pad"))
        e.call(f"rlx_avg_pool_{sfx}", geom, y.loc, x.loc, flag, acc)


# ---------------------------------------------------------------------------------
# Attention and rope
# ---------------------------------------------------------------------------------


def attention(
    e: OpEmitter,
    q: Operand,
    k: Operand,
    v: Operand,
    mask: Operand | None,
    mask_kind: MaskKind,
    scale: float | None,
    softcap: float | None,
    y: Operand,
    zero_nan: bool = False,
) -> None:
    sfx = e.suffix(q, FLOATS)
    b, h, sq, d = q.shape
    bk, hk, sk, _ = k.shape
    dv = v.shape[3]
    geom = (
        b, h, hk, sq, sk, d, dv,
        0 if bk == 1 and b > 1 else hk * sk * d, 0 if bk == 1 and b > 1 else hk * sk * dv,
    )  # fmt: skip
    if mask_kind is MaskKind.CAUSAL:
        kind = 1
    elif mask_kind is MaskKind.EXPLICIT:
        assert mask is not None
        kind = 2 if mask.dtype is DType.BOOL else 3
    else:
        kind = 0
    mask_strides = Ints(tuple(broadcast_strides(mask.shape, (b, h, sq, sk)))) if mask else None
    if q.dtype in (DType.F16, DType.BF16):
        scratch = e.scratch(4 * (sq * sk + sq * d + sk * d + sk * dv + sq * dv))
    else:
        scratch = e.scratch(sq * sk * q.dtype.itemsize)
    e.call(
        f"rlx_attention_{sfx}", Ints(geom), y.loc, q.loc, k.loc, v.loc,
        mask.loc if mask else None, mask_strides, kind,
        1.0 / math.sqrt(d) if scale is None else scale, 0.0 if softcap is None else softcap,
        int(zero_nan), scratch,
    )  # fmt: skip


@lowers(mir.AttentionOp)
def _attention(e: OpEmitter) -> None:
    a = _optional(e, ("query", "key", "value", "mask"))
    p = e.op.props()  # type: ignore[attr-defined]
    q, k, v = a["query"], a["key"], a["value"]
    assert q is not None and k is not None and v is not None
    attention(
        e, q, k, v, a["mask"], p.enum("mask_kind"), p.opt_float("scale"),
        p.opt_float("softcap"), e.outs[0], p.flag("zero_nan"),
    )  # fmt: skip


def rope(
    e: OpEmitter,
    x: Operand,
    cos: Operand,
    sin: Operand,
    rotary_dim: int | None,
    interleaved: bool,
    y: Operand,
) -> None:
    sfx = e.suffix(x, FLOATS)
    d = x.shape[-1]
    r = d if rotary_dim is None else rotary_dim
    target = (*x.shape[:-1], r // 2)
    e.call(
        f"rlx_rope_{sfx}", x.rank - 1, Ints(x.shape[:-1]), d, r, int(interleaved), y.loc, x.loc,
        cos.loc, Ints(tuple(broadcast_strides(cos.shape, target))),
        sin.loc, Ints(tuple(broadcast_strides(sin.shape, target))),
    )  # fmt: skip


@lowers(mir.RopeOp)
def _rope(e: OpEmitter) -> None:
    x, cos, sin = e.args
    p = e.op.props()  # type: ignore[attr-defined]
    rope(e, x, cos, sin, p.opt_int("rotary_dim"), p.flag("interleaved"), e.outs[0])


def _heads(x: Operand, start: int, heads: int, d: int) -> tuple[Operand, list[int]]:
    """The [B, S, heads, D] slice of a [B, S, width] tensor from column ``start``, as a
    [B, heads, S, D] operand read at strides (the reference's reshape + transpose)."""
    b, s, width = x.shape
    t = x.type.with_shape((b, heads, s, d))
    strides = [s * width, d, width, 1]
    return Operand(x.loc.at(start * x.dtype.itemsize), t), strides


@lowers(mir.FusedAttentionBlockOp)
def _fused_attention_block(e: OpEmitter) -> None:
    """qkv matmul -> add qkv_bias -> split heads -> rope on q, k -> attention -> merge
    heads -> out matmul -> add out_bias."""
    names = ("hidden", "qkv_weight", "out_weight", "qkv_bias", "out_bias", "mask", "cos", "sin")
    a = _optional(e, names)
    hidden, qkv_w, out_w = a["hidden"], a["qkv_weight"], a["out_weight"]
    assert hidden is not None and qkv_w is not None and out_w is not None
    p = e.op.props()  # type: ignore[attr-defined]
    h, hk, d = p.int("num_heads"), p.int("num_kv_heads"), p.int("head_dim")
    b, s, _ = hidden.shape
    dtype = hidden.dtype
    qkv = e.tmp(TensorType((b, s, (h + 2 * hk) * d), dtype))
    matmul(e, hidden, qkv_w, qkv)
    if a["qkv_bias"] is not None:
        binary(e, "add", qkv, a["qkv_bias"], qkv)
    heads = []
    for start, count in ((0, h), (h * d, hk), ((h + hk) * d, hk)):
        view, strides = _heads(qkv, start, count, d)
        dense = e.tmp(view.type)
        strided_copy(
            e, list(view.shape), dtype.itemsize, dense.loc, dense_strides(view.shape),
            view.loc, strides,
        )  # fmt: skip
        heads.append(dense)
    q, k, v = heads
    cos, sin = a["cos"], a["sin"]
    if cos is not None and sin is not None:
        rope(e, q, cos, sin, None, False, q)
        rope(e, k, cos, sin, None, False, k)
    attn = e.tmp(TensorType((b, h, s, d), dtype))
    attention(
        e, q, k, v, a["mask"], p.enum("mask_kind"), p.opt_float("scale"), None, attn,
        p.flag("zero_nan"),
    )  # fmt: skip
    merged = e.tmp(TensorType((b, s, h * d), dtype))
    # [B, H, S, D] -> transpose [B, S, H, D] -> reshape [B, S, H*D]
    strided_copy(
        e, [b, s, h, d], dtype.itemsize, merged.loc, dense_strides((b, s, h, d)),
        attn.loc, [h * s * d, d, s * d, 1],
    )  # fmt: skip
    out = e.outs[0]
    matmul(e, merged, out_w, out)
    if a["out_bias"] is not None:
        binary(e, "add", out, a["out_bias"], out)


# ---------------------------------------------------------------------------------
# Quantisation
# ---------------------------------------------------------------------------------

QUANT_INTS = INTS


def _channels(e: OpEmitter, x: Operand) -> tuple[int, int, int]:
    axis = e.op.props().opt_int("axis")  # type: ignore[attr-defined]
    if axis is None:
        return 1, 1, x.size
    return split_axis(x.shape, axis)


@lowers(mir.QuantizeOp)
def _quantize(e: OpEmitter) -> None:
    a = _optional(e, ("input", "scale", "zero_point"))
    x, scale, zp = a["input"], a["scale"], a["zero_point"]
    assert x is not None and scale is not None
    y = e.outs[0]
    qs = e.suffix(y, QUANT_INTS)
    xs = e.suffix(x, FLOATS)
    ct = DType.F64 if DType.F64 in (x.dtype, scale.dtype) else DType.F32
    scale_ct = in_compute_type(e, scale, ct)
    outer, c, inner = _channels(e, x)
    e.call(
        f"rlx_quantize_{xs}_{SUFFIX[ct]}_{qs}", outer, c, inner, y.loc, x.loc, scale_ct.loc,
        zp.loc if zp else None,
    )  # fmt: skip


@lowers(mir.DequantizeOp)
def _dequantize(e: OpEmitter) -> None:
    a = _optional(e, ("input", "scale", "zero_point"))
    q, scale, zp = a["input"], a["scale"], a["zero_point"]
    assert q is not None and scale is not None
    outer, c, inner = _channels(e, q)
    e.call(
        f"rlx_dequantize_{e.suffix(q, QUANT_INTS)}_{e.suffix(scale, FLOATS)}", outer, c, inner,
        e.outs[0].loc, q.loc, scale.loc, zp.loc if zp else None,
    )  # fmt: skip


@lowers(mir.FakeQuantizeOp)
def _fake_quantize(e: OpEmitter) -> None:
    x, scale, zp = e.args
    p = e.op.props()  # type: ignore[attr-defined]
    ct = DType.F64 if DType.F64 in (x.dtype, scale.dtype) else DType.F32
    e.suffix(zp, INTS)
    scale_ct, zp_ct = in_compute_type(e, scale, ct), in_compute_type(e, zp, ct)
    outer, c, inner = _channels(e, x)
    e.call(
        f"rlx_fake_quantize_{e.suffix(x, FLOATS)}_{SUFFIX[ct]}", outer, c, inner, e.outs[0].loc,
        x.loc, scale_ct.loc, zp_ct.loc, p.int("quant_min"), p.int("quant_max"),
    )  # fmt: skip


# ---------------------------------------------------------------------------------
# Integer kernels
# ---------------------------------------------------------------------------------

INTEGER_INPUTS = frozenset({DType.I8, DType.U8})
INTEGER_CONV_ROW_TAPS = 64
"""The widest kernel row rlx_integer_conv takes (RLX_ROW_TAPS: its per-tap ranges)."""
INTEGER_RESULTS = frozenset({DType.F32, DType.I8, DType.U8})


def _integer_activation(e: OpEmitter) -> Activation:
    act, _ = fused_activation(e)
    if act in PARAM_ACTIVATION_CODE:  # quant-to-integer keeps them out; the verifier too
        e.unsupported(f"an integer {act.value} epilogue")
    return act


def _integer_args(e: OpEmitter, channels: int) -> tuple[str, list[Arg]]:
    """The kernel suffix and the epilogue arguments of an integer op (a matmul's name
    its weight's type too, and its weight's zero point follows the input's)."""
    a = _optional(e, ("input", "weight", "scale", "bias"))
    x, w, scale = a["input"], a["weight"], a["scale"]
    assert x is not None and w is not None and scale is not None
    y = e.outs[0]
    p = e.op.props()  # type: ignore[attr-defined]
    matmul = isinstance(e.op, mir.IntegerMatmulOp)
    types = [x, w, y] if matmul else [x, y]
    sfx = "_".join(e.suffix(v, INTEGER_RESULTS if v is y else INTEGER_INPUTS) for v in types)
    zero_points = [p.int("input_zero_point")]
    if matmul:
        zero_points.append(p.int("weight_zero_point"))
    out_scale = p.opt_float("out_scale")
    table = p.get("table")
    epilogue: list[Arg] = [
        dense_param(e, scale, (channels,)), dense_param(e, a["bias"], (channels,)),
        *zero_points, ACTIVATION_CODE[_integer_activation(e)],
        0.0 if out_scale is None else out_scale, p.int("out_zero_point"),
        None if table is None else Bytes(cast(RawDataAttr, table).data),
    ]  # fmt: skip
    return sfx, epilogue


INTEGER_GEMM_MIN_ROWS = 4
"""Fewer rows than this do not repay packing the weight for the integer GEMM: such a
matmul runs row by row (a vectorised int32 axpy over the weight's rows)."""
INTEGER_GEMM_ROW_BLOCK = 64
"""Rows of x the integer matmul widens to int16 at a time (its scratch)."""
INTEGER_GEMM_MIN_TAPS = 16
"""Integer convolutions with fewer taps per output (depthwise ones) run direct: dot
products that short would not fill a vector."""
INTEGER_COLS_BYTES = 128 * 1024
"""The integer im2col tile: its int16 columns stay in cache while the GEMM reads them."""


def _padded_k(k: int) -> int:
    """The integer GEMM's panels are zero-padded to a multiple of 32 int16 along K
    (rlx_padded_k): whole vectors, no scalar remainder."""
    return -(-k // 32) * 32


@lowers(mir.IntegerMatmulOp)
def _integer_matmul(e: OpEmitter) -> None:
    x, w = e.args[0], e.args[1]
    batch, m, n, k = matmul_geometry(x, w)
    sfx, epilogue = _integer_args(e, n)
    rows = min(m, INTEGER_GEMM_ROW_BLOCK) if e.options.im2col and m >= INTEGER_GEMM_MIN_ROWS else 0
    scratch = 2 * (n + rows) * _padded_k(k) + 4 * rows * n if rows else 4 * n
    e.call(
        f"rlx_integer_matmul_{sfx}", *batch, m, n, k, e.outs[0].loc, x.loc, w.loc, *epilogue,
        rows, e.scratch(scratch),
    )  # fmt: skip


def _integer_conv_geometry(e: OpEmitter, algo: int, tile: int) -> tuple[int, ...]:
    """The geometry argument of rlx_integer_conv / rlx_conv_integer: the algorithm, N,
    C_in, C_out, groups, then input, kernel and output sizes, strides, leading pads and
    dilations as three dims each, then the tile."""
    x, w, y = e.args[0], e.args[1], e.outs[0]
    p = e.op.props()  # type: ignore[attr-defined]
    k = x.rank - 2
    if not 1 <= k <= 3:
        e.unsupported(f"{k}-d convolutions")
    return (
        algo, x.shape[0], x.shape[1], w.shape[0], p.int("groups"), *_pad3(x.shape[2:], 1),
        *_pad3(w.shape[2:], 1), *_pad3(y.shape[2:], 1), *_pad3(p.ints("strides"), 1),
        *_pad3(p.ints("pads")[:k], 0), *_pad3(p.ints("dilations"), 1), tile,
    )  # fmt: skip


@lowers(mir.IntegerConvOp)
def _integer_conv(e: OpEmitter) -> None:
    x, w = e.args[0], e.args[1]
    y = e.outs[0]
    groups = e.op.props().int("groups")  # type: ignore[attr-defined]
    taps, positions = math.prod(w.shape[1:]), math.prod(y.shape[2:])
    gemm = e.options.im2col and taps >= INTEGER_GEMM_MIN_TAPS
    if not gemm and w.shape[-1] > INTEGER_CONV_ROW_TAPS:
        e.unsupported(f"direct integer convolutions more than {INTEGER_CONV_ROW_TAPS} taps wide")
    tile = min(positions, max(16, INTEGER_COLS_BYTES // (2 * _padded_k(taps)))) if gemm else 1
    geom = _integer_conv_geometry(e, 2 if gemm else 0, tile)
    if gemm:
        cog = w.shape[0] // groups
        sums = cog * tile + (cog * tile) % 2  # an even count: the tap offsets after them
        scratch = 2 * (w.shape[0] + tile) * _padded_k(taps) + 4 * sums + 8 * taps
    else:
        scratch = 4 * positions
    sfx, epilogue = _integer_args(e, w.shape[0])
    e.call(
        f"rlx_integer_conv_{sfx}", Ints(geom), y.loc, x.loc, w.loc, *epilogue,
        e.scratch(scratch),
    )  # fmt: skip


# ---------------------------------------------------------------------------------
# ONNX's dynamic quantisation
# ---------------------------------------------------------------------------------


@lowers(mir.DynamicQuantizeLinearOp)
def _dynamic_quantize_linear(e: OpEmitter) -> None:
    x = e.args[0]
    y, scale, zp = e.outs
    sfx = e.suffix(x, frozenset({DType.F32}))
    e.call(f"rlx_dynamic_quantize_linear_{sfx}", x.size, y.loc, scale.loc, zp.loc, x.loc)


def _values(v: Operand | None) -> tuple[Ptr | None, int]:
    """An optional vector argument (a zero point, a bias): its values and their count."""
    return (None, 0) if v is None else (v.loc, v.size)


@lowers(mir.MatmulIntegerOp)
def _matmul_integer(e: OpEmitter) -> None:
    a = _optional(e, ("lhs", "rhs", "lhs_zero_point", "rhs_zero_point"))
    x, w = a["lhs"], a["rhs"]
    assert x is not None and w is not None
    batch, m, n, k = matmul_geometry(x, w)
    sfx = f"{e.suffix(x, INTEGER_INPUTS)}_{e.suffix(w, INTEGER_INPUTS)}"
    e.call(
        f"rlx_matmul_integer_{sfx}", *batch, m, n, k, e.outs[0].loc, x.loc, w.loc,
        *_values(a["lhs_zero_point"]), *_values(a["rhs_zero_point"]),
    )  # fmt: skip


@lowers(mir.DynamicQuantizeMatmulOp)
def _dynamic_quantize_matmul(e: OpEmitter) -> None:
    a = _optional(e, ("input", "weight", "weight_scale", "weight_zero_point", "bias"))
    x, w, scale, bias = a["input"], a["weight"], a["weight_scale"], a["bias"]
    assert x is not None and w is not None and scale is not None
    k, n = w.shape
    m = math.prod(x.shape[:-1])  # the leading dims are rows
    sfx = f"{e.suffix(x, frozenset({DType.F32}))}_{e.suffix(w, INTEGER_INPUTS)}"
    e.call(
        f"rlx_dynamic_quantize_matmul_{sfx}", m, n, k, e.outs[0].loc, x.loc, w.loc, scale.loc,
        scale.size, *_values(a["weight_zero_point"]), *_values(bias), e.scratch(m * k),
    )  # fmt: skip


@lowers(mir.ConvIntegerOp)
def _conv_integer(e: OpEmitter) -> None:
    a = _optional(e, ("input", "weight", "input_zero_point", "weight_zero_point"))
    x, w = a["input"], a["weight"]
    assert x is not None and w is not None
    sfx = f"{e.suffix(x, INTEGER_INPUTS)}_{e.suffix(w, INTEGER_INPUTS)}"
    zx, _ = _values(a["input_zero_point"])
    e.call(
        f"rlx_conv_integer_{sfx}", Ints(_integer_conv_geometry(e, 0, 1)), e.outs[0].loc, x.loc,
        w.loc, zx, *_values(a["weight_zero_point"]),
    )  # fmt: skip


@lowers(mir.QuantizedAddOp)
def _quantized_add(e: OpEmitter) -> None:
    (a, b), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    sfx = "_".join(e.suffix(v, INTEGER_INPUTS) for v in (a, b, y))
    params = [
        x for side in ("lhs", "rhs", "out")
        for x in (p.float(f"{side}_scale"), p.int(f"{side}_zero_point"))
    ]  # fmt: skip
    relu = int(p.enum("activation") is not Activation.NONE)
    elementwise(e, f"rlx_quantized_add_{sfx}", y, a, b, params=(*params, relu))


@lowers(mir.QuantizedAvgPoolOp)
def _quantized_avg_pool(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    geom = _pool_geometry(e)
    acc = e.scratch(y.shape[-1] * 4)  # an int32 sum per output of a row
    e.call(
        f"rlx_quantized_avg_pool_{e.suffix(x, INTEGER_INPUTS)}", geom, y.loc, x.loc,
        int(p.flag("count_include_pad")), p.float("x_scale"), p.int("x_zero_point"),
        p.float("y_scale"), p.int("y_zero_point"), acc,
    )  # fmt: skip


@lowers(mir.QuantizedSoftmaxOp)
def _quantized_softmax(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    sfx = "_".join(e.suffix(v, INTEGER_INPUTS) for v in (x, y))
    outer, n, inner = split_axis(x.shape, p.int("axis"))
    table = Ints(tuple(int(t) for t in mir.softmax_table(p.float("x_scale"))))
    e.call(
        f"rlx_quantized_softmax_{sfx}", outer, n, inner, y.loc, x.loc, table,
        p.float("y_scale"), p.int("y_zero_point"),
    )  # fmt: skip


# ---------------------------------------------------------------------------------
# Elementwise regions: the body, op by op
# ---------------------------------------------------------------------------------


@lowers(mir.ElementwiseRegionOp)
def _elementwise_region(e: OpEmitter) -> None:
    from rlx_compile.conversion.lir_to_c.lowering import LOWERINGS

    block = e.op.regions[0].blocks[0]
    where: dict[SSAValue, Operand] = dict(zip(block.args, e.args, strict=True))
    for op in block.ops:
        if isinstance(op, mir.YieldOp):
            for value, out in zip(op.operands, e.outs, strict=True):
                copy(e, where[value], out)
            continue
        lowering = LOWERINGS.get(type(op))
        if lowering is None:
            e.unsupported(f"{op.name} inside a region")
        results = [e.tmp(cast(TensorType, r.type)) for r in op.results]
        inner = OpEmitter(
            op, [where[v] for v in op.operands], results, e.step, e.options,
            scratch_used=e.scratch_used,
        )  # fmt: skip
        lowering(inner)
        e.calls += inner.calls
        e.scratch_used = inner.scratch_used
        where.update(zip(op.results, results, strict=True))


# ---------------------------------------------------------------------------------
# Classic ML (rlx_ml.c): a model's tables as constant arrays
# ---------------------------------------------------------------------------------

ML_FLOATS = frozenset({DType.F32, DType.F64})
POST_CODE = {
    PostTransform.NONE: 0, PostTransform.LOGISTIC: 1, PostTransform.SOFTMAX: 2,
    PostTransform.SOFTMAX_ZERO: 3, PostTransform.PROBIT: 4,
}  # fmt: skip
AGGREGATE_CODE = {
    TreeAggregate.SUM: 0, TreeAggregate.AVERAGE: 1, TreeAggregate.MIN: 2, TreeAggregate.MAX: 3,
}  # fmt: skip
SVM_KERNEL_CODE = {SvmKernel.LINEAR: 0, SvmKernel.POLY: 1, SvmKernel.RBF: 2, SvmKernel.SIGMOID: 3}
NORM_CODE = {NormKind.MAX: 0, NormKind.L1: 1, NormKind.L2: 2}


def _ints(values: np.ndarray | None) -> Ints | None:
    return None if values is None else Ints(tuple(values.tolist()))


def _floats(values: np.ndarray | None) -> Floats | None:
    return None if values is None else Floats(tuple(values.tolist()))


def _forest_args(forest: mir.Forest) -> list[Arg]:
    return [
        _ints(forest.roots), _ints(forest.features), _ints(forest.modes),
        _floats(forest.splits), _ints(forest.true_next), _ints(forest.false_next),
        _ints(forest.missing_true), _ints(forest.member_starts), _floats(forest.member_values),
        _ints(forest.leaf_starts), _ints(forest.leaf_targets), _floats(forest.leaf_weights),
    ]  # fmt: skip


def _tree_kernel(e: OpEmitter, name: str, x: Operand, scores: Operand) -> str:
    """The tree kernel for the input's and the scores' types (f32, f64, or a double
    input compared with float thresholds)."""
    xs, ys = e.suffix(x, ML_FLOATS), e.suffix(scores, ML_FLOATS)
    if xs == ys:
        return f"{name}_{xs}"
    if (xs, ys) == ("f64", "f32"):
        return f"{name}_f64_f32"
    e.unsupported(f"{x.dtype.value} samples with {scores.dtype.value} scores")


def _opt_array(op: Operation, name: str) -> np.ndarray | None:
    p = op.props()  # type: ignore[attr-defined]
    return p.array(name) if p.get(name) is not None else None


@lowers(mir.TreeEnsembleOp)
def _tree_ensemble(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    op = cast(mir.TreeEnsembleOp, e.op)
    p, forest = op.props(), op.forest()
    e.call(
        _tree_kernel(e, "rlx_tree_ensemble", x, y), x.shape[0], x.shape[1], len(forest.roots),
        y.shape[1], y.loc, x.loc, *_forest_args(forest), AGGREGATE_CODE[p.enum("aggregate")],
        _floats(_opt_array(op, "base_values")), p.float("fill"),
        POST_CODE[p.enum("post_transform")], e.scratch(y.shape[1]),
    )  # fmt: skip


@lowers(mir.TreeEnsembleClassifierOp)
def _tree_ensemble_classifier(e: OpEmitter) -> None:
    (x,), (label, scores) = e.args, e.outs
    op = cast(mir.TreeEnsembleClassifierOp, e.op)
    p, forest = op.props(), op.forest()
    one_class, positive = class_weights(forest)
    base = p.array("base_values")
    e.call(
        _tree_kernel(e, "rlx_tree_classifier", x, scores), x.shape[0], x.shape[1],
        len(forest.roots), scores.shape[1], label.loc, scores.loc, x.loc,
        *_forest_args(forest), _floats(base), len(base), POST_CODE[p.enum("post_transform")],
        _ints(_opt_array(op, "class_labels")), int(one_class), int(positive),
        e.scratch(scores.shape[1]),
    )  # fmt: skip


def _svm_args(op: mir.SvmOp) -> list[Arg]:
    p = op.props()
    return [
        _floats(p.array("support_vectors")), SVM_KERNEL_CODE[p.enum("kernel")],
        p.float("gamma"), p.float("coef0"), p.float("degree"),
    ]  # fmt: skip


@lowers(mir.SvmRegressorOp)
def _svm_regressor(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    op = cast(mir.SvmRegressorOp, e.op)
    p = op.props()
    sfx = e.suffix(x, ML_FLOATS)
    count = len(p.array("coefficients"))
    e.call(
        f"rlx_svm_regressor_{sfx}", x.shape[0], x.shape[1], count, y.loc, x.loc, *_svm_args(op),
        _floats(p.array("coefficients")), p.float("rho"), int(p.flag("one_class")),
        e.scratch(count * x.dtype.itemsize),
    )  # fmt: skip


@lowers(mir.SvmClassifierOp)
def _svm_classifier(e: OpEmitter) -> None:
    (x,), (label, scores) = e.args, e.outs
    op = cast(mir.SvmClassifierOp, e.op)
    p = op.props()
    sfx = e.suffix(x, ML_FLOATS)
    pairs = len(p.array("rho"))
    classes = (1 + math.isqrt(1 + 8 * pairs)) // 2
    count = len(p.array("coefficients")) // pairs
    scratch = (count + pairs + 2 * classes * classes + 2 * classes) * x.dtype.itemsize
    e.call(
        f"rlx_svm_classifier_{sfx}", x.shape[0], x.shape[1], count, classes, scores.shape[1],
        label.loc, scores.loc, x.loc, *_svm_args(op), _floats(p.array("coefficients")),
        _floats(p.array("rho")), _floats(_opt_array(op, "prob_a")),
        _floats(_opt_array(op, "prob_b")), POST_CODE[p.enum("post_transform")],
        _ints(_opt_array(op, "class_labels")), e.scratch(scratch),
    )  # fmt: skip


@lowers(mir.LinearClassifierOp)
def _linear_classifier(e: OpEmitter) -> None:
    (x,), (label, scores) = e.args, e.outs
    op = cast(mir.LinearClassifierOp, e.op)
    p = op.props()
    sfx = e.suffix(x, ML_FLOATS)
    e.call(
        f"rlx_linear_classifier_{sfx}", x.shape[0], x.shape[1], op.rows(), label.loc,
        scores.loc, x.loc, _floats(p.array("coefficients")), _floats(_opt_array(op, "intercepts")),
        POST_CODE[p.enum("post_transform")], _ints(_opt_array(op, "class_labels")),
    )  # fmt: skip


@lowers(mir.NormalizerOp)
def _normalizer(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    n = x.shape[-1] if x.rank else 1
    code = NORM_CODE[e.op.props().enum("norm")]  # type: ignore[attr-defined]
    e.call(f"rlx_normalizer_{e.suffix(x, ML_FLOATS)}", x.size // n if n else 0, n, y.loc, x.loc,
           code)  # fmt: skip


@lowers(mir.LabelEncoderOp)
def _label_encoder(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    op = cast(mir.LabelEncoderOp, e.op)
    for t in (x, y):
        e.suffix(t, ML_FLOATS | INTS)
    keys, values = op.tables()
    table = _floats if keys.dtype.kind == "f" else _ints
    out = _floats if values.dtype.kind == "f" else _ints
    e.call(
        "rlx_label_encoder", x.size, DTYPE_CODE[x.dtype], DTYPE_CODE[y.dtype], y.loc, x.loc,
        table(keys), len(keys), out(values), int(op.props().flag("nan_matches")),
    )  # fmt: skip


def _feature_rows(x: Operand) -> int:
    """The feature count of a [features] or [rows, features] input (its last dim)."""
    return x.shape[-1] if x.rank else 1


@lowers(mir.ScalerOp)
def _scaler(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    p = e.op.props()  # type: ignore[attr-defined]
    offset, scale = p.array("offset"), p.array("scale")
    e.call(
        f"rlx_scaler_{e.suffix(x, ML_FLOATS)}", x.size, _feature_rows(x), y.loc, x.loc,
        _floats(offset), len(offset), _floats(scale), len(scale),
    )  # fmt: skip


@lowers(mir.BinarizerOp)
def _binarizer(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    threshold = e.op.props().float("threshold")  # type: ignore[attr-defined]
    e.call(f"rlx_binarizer_{e.suffix(x, ML_FLOATS)}", x.size, y.loc, x.loc, threshold)


@lowers(mir.ImputerOp)
def _imputer(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    op = cast(mir.ImputerOp, e.op)
    imputed = op.props().array("imputed")
    e.call(
        f"rlx_imputer_{e.suffix(x, ML_FLOATS)}", x.size, _feature_rows(x), y.loc, x.loc,
        _floats(imputed), len(imputed), op.replaced_value(),
    )  # fmt: skip


@lowers(mir.OneHotEncoderOp)
def _one_hot_encoder(e: OpEmitter) -> None:
    (x,), (y,) = e.args, e.outs
    props = e.op.props()  # type: ignore[attr-defined]
    categories = props.array("categories")
    starts = None if props.get("column_starts") is None else props.array("column_starts")
    columns = 1 if starts is None else len(starts) - 1
    e.call(
        "rlx_one_hot_encoder", x.size // columns, columns, len(categories), y.loc, x.loc,
        _ints(starts), _ints(categories),
    )  # fmt: skip
