"""Shape arithmetic over symbolic dims, evaluated at import time.

Exporters compute reshape targets, expand shapes and masks from ``Shape`` of tensors
with dynamic dims (Shape -> Gather -> Mul -> Unsqueeze -> Concat -> Reshape). When those
dims are symbolic the values are not numbers, but they are still known: a *shape value*
is an object array of dims (ints and ``DimExpr``s) with its ONNX element type. The ops
below evaluate on shape values, so the usual arithmetic of exported graphs (``x.size(0)
* 2``, ``-1`` where a dim is unknown, ``Equal(shape, -1)``) stays exact. A node whose
result cannot be decided at import (a comparison that depends on the sizes, a float
cast) is converted as a normal op instead, its shape-value operands becoming data
(``mir.dims``, evaluated under the run's bindings).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rlx_compile.builder import type_of
from rlx_compile.dialects.dim_expr import (
    DimExpr,
    dim_max,
    dim_min,
    floordiv,
    interval,
    mod,
)
from rlx_compile.dialects.types import DType
from rlx_compile.folding import FOLD_LIMIT
from rlx_compile.frontends.onnx.context import (
    NodeContext,
    NotStatic,
    Unsupported,
    axis_of,
    dtype_of,
)

if TYPE_CHECKING:
    from rlx_compile.frontends.onnx.importer import Importer


class Undecidable(Exception):
    """A shape-value result depends on the sizes at run time."""


@dataclass(frozen=True)
class ShapeValue:
    """An import-time integer tensor some of whose elements are symbolic dims."""

    values: np.ndarray  # dtype=object: ints, DimExprs (and bools for comparisons)
    dtype: DType

    @property
    def is_symbolic(self) -> bool:
        return any(isinstance(v, DimExpr) for v in self.values.reshape(-1).tolist())


def symbolic_shape_node(imp: Importer, node: Any) -> bool:
    """Whether a node is shape arithmetic on symbolic dims: ``Shape``/``Size`` of a tensor
    with symbolic dims, or an op of ``EVALUATORS`` reading a symbolic shape value whose
    other operands are known at import time."""
    op_type = node.op_type
    sizes = op_type in ("Shape", "Size")
    if not sizes and (op_type not in EVALUATORS or not imp.shape_values):
        # Most nodes: asked before anything else is read of them (an evaluator needs a
        # shape value to read, and most models have none).
        return False
    inputs = [i for i in node.input if i]
    if node.domain not in ("", "ai.onnx") or not inputs:
        return False
    if sizes:
        v = imp.values.get(inputs[0])
        return v is not None and not type_of(v).is_static
    if op_type not in EVALUATORS or not any(i in imp.shape_values for i in inputs):
        return False
    for i in inputs:
        try:
            imp.static(i, "a shape operand")
        except NotStatic:
            return False
    return True


def evaluate_shape_node(ctx: NodeContext, sizes: tuple[Any, ...] | None = None) -> ShapeValue:
    """The node's result as a shape value (raises Undecidable when it depends on sizes
    at run time, Unsupported for a malformed node). ``sizes``: the shape a Shape or Size
    node reads, where it is known without its operand's type."""
    op = ctx.op_type
    if op == "Shape":
        shape = type_of(ctx.x(0)).shape if sizes is None else sizes
        rank = len(shape)
        start, end = ctx.attr("start", 0), ctx.attr("end", rank)
        start = min(max(start + rank if start < 0 else start, 0), rank)
        end = min(max(end + rank if end < 0 else end, 0), rank)
        return ShapeValue(_objects(list(shape[start:end])), DType.I64)
    if op == "Size":
        total: Any = 1
        for d in type_of(ctx.x(0)).shape if sizes is None else sizes:
            total = total * d
        return ShapeValue(_objects(total), DType.I64)
    consts = [ctx.const(i) if ctx.has(i) else None for i in range(ctx.num_inputs)]
    args = [None if c is None else _objects(c) for c in consts]
    dtype = _input_dtype(ctx, 0, consts[0] if consts else None)
    if any(_input_dtype(ctx, i, c).is_float for i, c in enumerate(consts) if c is not None):
        if op not in FLOAT_EXACT:
            raise Undecidable(f"{op} of sizes as floats")
        args = [None if a is None else _integral(a) for a in args]
    values, out_dtype = EVALUATORS[op](ctx, args, dtype)
    return ShapeValue(np.asarray(values, dtype=object), out_dtype or dtype)


KNOWN_LIMIT = 1024
"""Integer operands and results of at most this many elements are evaluated at import
without ops (``evaluate_known_node``): shape arithmetic is small, and larger tensors
are data, folded by the reference executor."""

_SAME_TYPED = frozenset({
    "Add", "Sub", "Mul", "Div", "Mod", "Min", "Max", "Sum", "Equal", "Less", "LessOrEqual",
    "Greater", "GreaterOrEqual", "Concat", "Range",
})  # fmt: skip
"""Evaluated ops whose operands share one element type (ONNX's ``T``): mixed types are a
malformed node, left to the converter to refuse."""


def evaluate_known_node(imp: Importer, ctx: NodeContext) -> np.ndarray | None:
    """The result of a node of integer shape arithmetic whose operands the import knows
    as numbers (``Importer.known_array``): ``Shape``/``Size`` of a tensor of static shape,
    or an op of ``EVALUATORS`` on integer or boolean operands. Evaluated with the
    evaluators' exact integer arithmetic, which is the reference executor's wherever the
    result fits its element type (integer division truncates in both); None where the
    node is not one, or the result does not fit (the run wraps it), or the evaluation
    fails: then the node is converted as ops, which decide it as they always did."""
    op_type = ctx.op_type
    names = [n for n in ctx.input_names if n]
    if not names:
        return None
    sizes: tuple[Any, ...] | None = None
    if op_type in ("Shape", "Size"):
        v = imp.values.get(names[0])
        if v is not None:
            if not type_of(v).is_static:
                return None
        elif names[0] in imp.known:  # the shape of a known value, which stays an array
            sizes = imp.known[names[0]][0].shape
        else:
            return None
    else:
        if op_type not in EVALUATORS:
            return None
        dtypes = set()
        for name in names:
            arr = imp.known_array(name)
            if arr is None or arr.dtype.kind not in "iub" or arr.size > KNOWN_LIMIT:
                return None
            dtypes.add(arr.dtype)
        if len(dtypes) > 1 and op_type in _SAME_TYPED:
            return None
    try:
        out = evaluate_shape_node(ctx, sizes)
    except Exception:  # Undecidable, Unsupported or NumPy's refusal: the converter's call
        return None
    if out.values.size > KNOWN_LIMIT:
        return None
    flat = out.values.reshape(-1).tolist()
    dtype = out.dtype
    if dtype is DType.BOOL:
        if not all(type(v) is bool for v in flat):
            return None
    elif dtype.is_int:
        lo, hi = dtype.int_range  # sub-byte types too, which np.iinfo refuses
        if not all(type(v) is int and lo <= v <= hi for v in flat):
            return None
    else:
        return None
    return np.asarray(flat, dtype.numpy).reshape(out.values.shape)


FLOAT_EXACT = frozenset({
    "Cast", "Identity", "Add", "Sub", "Mul", "Neg", "Abs", "Min", "Max", "Sum", "Equal",
    "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Where", "Gather", "Concat",
    "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Slice", "Expand", "Tile", "Transpose",
    "Range",
})  # fmt: skip
"""Ops that stay exact on sizes cast to floats (``torch.arange(w, dtype=float)``): sizes
are whole numbers, and these keep them whole. Division and the rest become data."""


def _integral(a: np.ndarray) -> np.ndarray:
    """Float operands of a float shape value as the whole numbers they are (others are
    decided at run time)."""
    out = []
    for v in a.reshape(-1).tolist():
        if isinstance(v, float):
            if not v.is_integer():
                raise Undecidable(f"sizes as floats with {v}")
            v = int(v)
        out.append(v)
    return np.asarray(out, dtype=object).reshape(a.shape)


def _input_dtype(ctx: NodeContext, i: int, const: np.ndarray | None = None) -> DType:
    """Input ``i``'s element type: its shape value's, else its array's (``const``, where
    the caller has read it already)."""
    sv = ctx.shape_value(i)
    if sv is not None:
        return sv.dtype
    return DType.from_numpy((ctx.const(i) if const is None else const).dtype)


def _objects(value: Any) -> np.ndarray:
    """An object array of Python ints / DimExprs (NumPy ints become Python ints, so
    arithmetic on the elements is exact)."""
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return value
        return np.asarray(value.tolist(), dtype=object).reshape(value.shape)
    return np.asarray(value, dtype=object)


# ---------------------------------------------------------------------------------
# Decisions on dims
# ---------------------------------------------------------------------------------


def _sign(d: Any) -> int | None:
    """-1, 0 or 1 when the sign of ``d`` is known for every size, else None."""
    if isinstance(d, bool | int | np.integer):
        return int(np.sign(int(d)))
    lo, hi = interval(d)
    if lo > 0:
        return 1
    if hi < 0:
        return -1
    if lo == hi == 0:
        return 0
    return None


def _compare(op: str) -> Callable[[Any, Any], bool]:
    def decide(a: Any, b: Any) -> bool:
        s = _sign(a - b)
        if s is None:
            raise Undecidable(f"{op}({a}, {b})")
        return {
            "Equal": s == 0,
            "Less": s < 0,
            "LessOrEqual": s <= 0,
            "Greater": s > 0,
            "GreaterOrEqual": s >= 0,
        }[op]

    return decide


def _trunc_div(a: Any, b: Any) -> Any:
    """ONNX integer Div: truncation toward zero (floor where the signs are known to agree)."""
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise Undecidable("integer division by zero")
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q
    sa, sb = _sign(a), _sign(b)
    if sa is None or sb is None or sb == 0:
        raise Undecidable(f"{a} / {b}")
    if sa >= 0 and sb > 0:
        return floordiv(a, b)
    if sa <= 0 and sb < 0:
        return floordiv(-a, -b)
    return -floordiv(abs_dim(a), abs_dim(b))


def abs_dim(a: Any) -> Any:
    s = _sign(a)
    if s is None:
        raise Undecidable(f"|{a}|")
    return a if s >= 0 else -a


def _elementwise(fn: Callable[..., Any]) -> Callable[..., np.ndarray]:
    return np.frompyfunc(fn, 2, 1)


# ---------------------------------------------------------------------------------
# Evaluators: (ctx, args, dtype of input 0) -> (values, result dtype or None = same)
# ---------------------------------------------------------------------------------

Evaluator = Callable[[NodeContext, list[Any], DType], tuple[Any, DType | None]]
EVALUATORS: dict[str, Evaluator] = {}


def evaluator(*op_types: str) -> Callable[[Evaluator], Evaluator]:
    def register(fn: Evaluator) -> Evaluator:
        for op in op_types:
            EVALUATORS[op] = fn
        return fn

    return register


def _binary(fn: Callable[[Any, Any], Any]) -> Evaluator:
    def evaluate(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
        return _elementwise(fn)(args[0], args[1]), None

    return evaluate


EVALUATORS["Add"] = _binary(lambda a, b: a + b)
EVALUATORS["Sub"] = _binary(lambda a, b: a - b)
EVALUATORS["Mul"] = _binary(lambda a, b: a * b)
EVALUATORS["Div"] = _binary(_trunc_div)


@evaluator("Mod")
def _mod(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    if ctx.attr("fmod", 0):
        raise Undecidable("fmod of symbolic dims")
    return _elementwise(mod)(args[0], args[1]), None


@evaluator("Neg")
def _neg(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    return -args[0], None


@evaluator("Abs")
def _abs(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    return np.frompyfunc(abs_dim, 1, 1)(args[0]), None


@evaluator("Min", "Max")
def _extremum(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    fn = _elementwise(dim_min if ctx.op_type == "Min" else dim_max)
    out = args[0]
    for a in args[1:]:
        out = fn(out, a)
    return out, None


@evaluator("Sum")
def _sum(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    out = args[0]
    for a in args[1:]:
        out = out + a
    return out, None


@evaluator("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual")
def _comparison(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    return _elementwise(_compare(ctx.op_type))(args[0], args[1]), DType.BOOL


@evaluator("Not")
def _not(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    return np.frompyfunc(lambda a: not a, 1, 1)(args[0]), DType.BOOL


@evaluator("Where")
def _where(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    cond = args[0]
    if any(isinstance(c, DimExpr) for c in np.asarray(cond).reshape(-1).tolist()):
        raise Undecidable("a Where condition on sizes")
    out = np.where(np.asarray(cond, dtype=bool), args[1], args[2])
    return out, _input_dtype(ctx, 1)


@evaluator("Identity")
def _identity(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    return args[0], None


@evaluator("Cast")
def _cast(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    ctx.attr("saturate")
    ctx.attr("round_mode")
    to = dtype_of(ctx.attr("to"))
    if not (to.is_int or to.is_float) or (to.is_float and to.itemsize < 4):
        raise Undecidable(f"a cast of sizes to {to.value}")
    return args[0], to


@evaluator("Gather")
def _gather(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    data = args[0]
    axis = axis_of(ctx.attr("axis", 0), data.ndim)
    idx = np.asarray(args[1].tolist(), dtype=np.int64).reshape(args[1].shape)
    size = data.shape[axis]
    if np.any((idx < -size) | (idx >= size)):
        raise Unsupported(f"index out of range for an axis of size {size}")
    return np.take(data, np.where(idx < 0, idx + size, idx), axis=axis), None


@evaluator("Concat")
def _concat(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    parts = [a for a in args if a is not None]
    axis = axis_of(ctx.attr("axis"), parts[0].ndim)
    return np.concatenate(parts, axis=axis), None


def _int_list(arr: Any, what: str) -> list[int]:
    values = np.asarray(arr).reshape(-1).tolist()
    if any(isinstance(v, DimExpr) for v in values):
        raise Undecidable(f"{what} that depend on sizes")
    return [int(v) for v in values]


def _axes(ctx: NodeContext, args: list[Any], index: int) -> list[int] | None:
    """Axes from input ``index`` (newer opsets) or the ``axes`` attribute (older)."""
    if len(args) > index and args[index] is not None:
        return _int_list(args[index], "axes")
    axes = ctx.attr("axes")
    return None if axes is None else list(axes)


@evaluator("Unsqueeze")
def _unsqueeze(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    out = args[0]
    axes = _axes(ctx, args, 1) or []
    rank = out.ndim + len(axes)
    for a in sorted(axis_of(v, rank) for v in axes):
        out = np.expand_dims(out, a)
    return out, None


@evaluator("Squeeze")
def _squeeze(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    data = args[0]
    axes = _axes(ctx, args, 1)
    if axes is None:
        return np.squeeze(data), None
    return np.squeeze(data, axis=tuple(axis_of(a, data.ndim) for a in axes)), None


@evaluator("Reshape")
def _reshape(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    data = args[0]
    target = _int_list(args[1], "a reshape of sizes to a shape")
    allowzero = ctx.attr("allowzero", 0)
    shape = [data.shape[i] if t == 0 and not allowzero else t for i, t in enumerate(target)]
    return data.reshape(shape), None


@evaluator("Flatten")
def _flatten(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    data = args[0]
    axis = axis_of(ctx.attr("axis", 1), data.ndim + 1)
    return data.reshape(math.prod(data.shape[:axis]), -1), None


@evaluator("Slice")
def _slice(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    data = args[0]
    starts = _int_list(args[1], "slice bounds")
    ends = _int_list(args[2], "slice bounds")
    axes = _axes(ctx, args, 3) if len(args) > 3 else None
    axes = list(range(len(starts))) if axes is None else axes
    steps = _int_list(args[4], "slice steps") if len(args) > 4 and args[4] is not None else None
    index = [slice(None)] * data.ndim
    for j, a in enumerate(axes):
        step = steps[j] if steps else 1
        if step == 0:
            raise Unsupported("slice step 0")
        index[axis_of(a, data.ndim)] = slice(starts[j], ends[j], step)
    return data[tuple(index)], None


def _bounded(count: int) -> None:
    """Shape values are small: a larger result is converted as data (an op), not
    evaluated element by element into Python objects."""
    if count > FOLD_LIMIT:
        raise Undecidable(f"a shape value of {count:,} elements")


@evaluator("Expand")
def _expand(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    target = _int_list(args[1], "an expand of sizes to a shape")
    shape = np.broadcast_shapes(args[0].shape, tuple(target))
    _bounded(math.prod(shape))
    return np.broadcast_to(args[0], shape), None


@evaluator("Tile")
def _tile(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    repeats = _int_list(args[1], "tile repeats")
    _bounded(args[0].size * math.prod(repeats))
    return np.tile(args[0], repeats), None


@evaluator("Transpose")
def _transpose(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    perm = ctx.attr("perm")
    return np.transpose(args[0], perm), None


@evaluator("ReduceProd", "ReduceSum", "ReduceMin", "ReduceMax")
def _reduce(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    data = args[0]
    axes = _axes(ctx, args, 1)
    keepdims = ctx.attr("keepdims", 1)
    if axes is None or not axes:
        if ctx.attr("noop_with_empty_axes", 0) and axes is not None:
            return data, None
        axes = list(range(data.ndim))
    norm = sorted({axis_of(a, data.ndim) for a in axes})
    fn: Callable[[Any, Any], Any] = {
        "ReduceProd": lambda a, b: a * b,
        "ReduceSum": lambda a, b: a + b,
        "ReduceMin": dim_min,
        "ReduceMax": dim_max,
    }[ctx.op_type]
    out = data
    for a in reversed(norm):
        out = np.frompyfunc(fn, 2, 1).reduce(out, axis=a, keepdims=bool(keepdims))
    return out, None


@evaluator("Range")
def _range(ctx: NodeContext, args: list[Any], dtype: DType) -> tuple[Any, DType | None]:
    start, limit, delta = (np.asarray(a).reshape(-1)[0] for a in args[:3])
    if not all(isinstance(v, int | DimExpr) for v in (start, limit, delta)):
        raise Undecidable("a Range over non-integers")
    n = _trunc_div(limit - start + delta - (1 if _sign(delta) == 1 else -1), delta)
    if not isinstance(n, int):
        raise Undecidable("a Range of symbolic length")  # converted as data
    _bounded(n)
    return np.asarray([start + i * delta for i in range(max(n, 0))], dtype=object), None


# ---------------------------------------------------------------------------------
# Ratios of sizes
# ---------------------------------------------------------------------------------

RATIO_STEPS = 32
"""How many nodes back ``size_ratios`` follows a value (a scale is a few ops of sizes)."""


def size_ratios(imp: Importer, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A float value computed as a ratio of sizes (Resize-10's ``scales = skip / map``,
    cast to float and divided) as exact (numerators, denominators) object arrays of
    dims; None when it is not one. Division of sizes as floats is data to the shape
    evaluator (its float result is not a size), but a size scaled by it is exact."""

    def walk(n: str, steps: int) -> tuple[np.ndarray, np.ndarray] | None:
        if n in imp.shape_values:
            values = imp.shape_values[n].values
            return values, np.ones(values.shape, dtype=object)
        arr: np.ndarray | None
        try:
            arr = imp.static(n, "a ratio of sizes")
        except NotStatic:  # a weight is a param, but its value is known
            held = n in imp.initializers and n not in imp.graph_inputs
            arr = imp.static_initializer(n) if held else None
        if arr is not None:
            if arr.dtype == object:
                return arr, np.ones(arr.shape, dtype=object)
            if not np.all(np.isfinite(arr)):
                return None
            pairs = [float(v).as_integer_ratio() for v in arr.reshape(-1).tolist()]
            num = np.asarray([p for p, _ in pairs], dtype=object).reshape(arr.shape)
            return num, np.asarray([q for _, q in pairs], dtype=object).reshape(arr.shape)
        node = imp.producer.get(n)
        if node is None or steps == 0 or node.domain not in ("", "ai.onnx"):
            return None
        parts = [walk(i, steps - 1) if i else None for i in node.input]
        if not parts or any(p is None for p in parts):
            return None
        known = [p for p in parts if p is not None]
        out = imp.values.get(node.output[0])
        if out is None or not type_of(out).dtype.is_float:
            return None  # an integer Div truncates: not a ratio
        if node.op_type in ("Cast", "Identity"):
            return known[0]
        if node.op_type in ("Div", "Mul") and len(known) == 2:
            (an, ad), (bn, bd) = known
            if node.op_type == "Div":
                bn, bd = bd, bn
            return an * bn, ad * bd
        if node.op_type == "Concat" and all(p[0].ndim == 1 for p in known):
            return (np.concatenate([p[0] for p in known]), np.concatenate([p[1] for p in known]))
        return None

    return walk(name, RATIO_STEPS)
