"""Run-time control flow: ONNX If, Loop and Scan as ``mir.if`` / ``mir.loop`` regions.

The converters (``misc``) decide which form a node takes: an If whose condition is known at
import is its taken branch, inlined; a Loop or Scan with a static trip count of at most
``UNROLL_MAX_ITERATIONS`` iterations is unrolled (its body then folds and fuses with the
graph around it), and so are the recurrent layers (``rnn``). Everything else becomes a
region op here: an If on a condition known only at run time, a Loop whose trip count or
condition is computed at run time, and every longer loop, so that an import grows with
the body, not with the number of iterations.

A region reads the values of the graph around it directly (as scf regions do); the
subgraph's own names are the region's and are forgotten once it is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import onnx
from xdsl.ir import Block, Region, SSAValue

from rlx_compile.builder import UNROLL_MAX_ITERATIONS, discard_block, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.dim_expr import DimExpr, sym
from rlx_compile.dialects.types import Dim, DType, TensorType, fmt_shape
from rlx_compile.folding import FoldingBuilder, constant_value
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    NotStatic,
    Unsupported,
)
from rlx_compile.frontends.onnx.ops.shape import iota
from rlx_compile.frontends.onnx.structured import SequenceValue, StackedSequence, Structured


def scalar(b: FoldingBuilder, v: SSAValue, dtype: DType, what: str) -> SSAValue:
    """A one-element operand (rank 0 or shape [1]) as a rank-0 value of ``dtype``."""
    v = one_element(v, dtype, what)
    return v if type_of(v).rank == 0 else b.reshape(v, [])


def one_element(v: SSAValue, dtype: DType, what: str) -> SSAValue:
    """``v``, checked to be one element of ``dtype``."""
    t = type_of(v)
    if t.dtype is not dtype:
        raise Unsupported(f"{what} must be {dtype.value}, got {t.dtype.value}")
    if t.num_elements() != 1:
        raise Unsupported(f"{what} must hold one element, got shape {fmt_shape(t.shape)}")
    return v


def subgraph(ctx: NodeContext, attr: str) -> onnx.GraphProto:
    """The subgraph attribute ``attr`` of the node (tensor outputs only)."""
    graph = next((a.g for a in ctx.node.attribute if a.name == attr), None)
    if graph is None:
        raise Unsupported(f"no {attr}")
    ctx.used_attrs.add(attr)
    for out in graph.output:
        if out.type.HasField("sequence_type") or out.type.HasField("optional_type"):
            raise Unsupported(f"a {attr} with sequence or optional outputs")
    return graph


def runtime_if(ctx: NodeContext) -> ConverterResult:
    """An If on a condition known only at run time: a ``mir.if`` whose regions are the
    converted branches. Both branches must convert and yield the same types (the types
    they compute from the shapes the model is imported with); when they do not and the
    condition comes from graph inputs, the condition is reported as needed at compile
    time instead (``rlx_compile.backend`` then compiles one model per value of those
    inputs, converting only the taken branch)."""
    cond = one_element(ctx.x(0), DType.BOOL, "If's condition")  # mir.if takes any rank
    mark = ctx.problem_mark()
    blocks: list[Block] = []
    yielded: list[list[SSAValue]] = []
    failure: Unsupported | None = None
    for attr, tag in (("then_branch", "then"), ("else_branch", "else")):
        graph = subgraph(ctx, attr)
        block = Block()
        try:
            values = ctx.convert_subgraph(graph, block, [], f"{tag}/")
        except Unsupported as err:
            failure, values = failure or Unsupported(f"the {attr} does not convert: {err}"), []
        blocks.append(block)
        yielded.append(values)
    reason = str(failure) if failure else _type_mismatch(yielded)
    if reason is not None:
        for block in blocks:
            discard_block(block)
        behind, sized = ctx.graph_inputs_behind(0)
        if behind or sized:  # a value the backend can bake in, or sizes --dim can give
            ctx.forget_problems(mark)  # the branch's own problems: it is not converted
            raise NotStatic(ctx.node.input[0], "If's condition", because=reason)
        raise failure or Unsupported(f"a run-time condition, and {reason}")
    regions = []
    for block, values in zip(blocks, yielded, strict=True):
        with ctx.b.building(block):
            ctx.b.emit(mir.YieldOp(values))
        regions.append(Region(block))
    op = ctx.b.emit(mir.IfOp(cond, regions[0], regions[1], [type_of(v) for v in yielded[0]]))
    return list(op.results)


def _type_mismatch(yielded: list[list[SSAValue]]) -> str | None:
    """Why two branches' outputs cannot be one if's results (None: they can)."""
    then_types = [type_of(v) for v in yielded[0]]
    else_types = [type_of(v) for v in yielded[1]]
    if len(then_types) != len(else_types):
        return f"the branches yield {len(then_types)} and {len(else_types)} outputs"
    for j, (a, b) in enumerate(zip(then_types, else_types, strict=True)):
        if a != b:
            return f"the branches yield {a} and {b} for output #{j}"
    return None


def _static_trips(v: SSAValue) -> int | None:
    arr = constant_value(v)
    return None if arr is None else int(arr.reshape(-1)[0])


def loop_region(
    ctx: NodeContext,
    body: onnx.GraphProto,
    trip_count: SSAValue | None,
    condition: SSAValue | None,
    carried: Sequence[SSAValue],
) -> ConverterResult:
    """A Loop as one ``mir.loop``: the body converted once, the number of iterations
    decided at run time. The scan outputs' length is the trip count when that is static
    (or a symbolic dim of the model) and the condition cannot stop the loop early, else
    a fresh symbol that the run binds."""
    b = ctx.b
    trips = None if trip_count is None else scalar(b, trip_count, DType.I64, "Loop's trip count")
    cond = None if condition is None else scalar(b, condition, DType.BOOL, "Loop's condition")
    n = len(carried)
    if len(body.input) != n + 2:
        raise Unsupported(f"a body of {len(body.input)} inputs for {n} carried values")
    block = Block(arg_types=[mir.I64_SCALAR, mir.BOOL_SCALAR, *(type_of(v) for v in carried)])
    with b.building(block):  # a failure discards the body
        outs = ctx.convert_subgraph(body, block, list(block.args), "body/")
        if len(outs) < 1 + n:
            raise Unsupported(f"a body of {len(outs)} outputs for {n} carried values")
        next_cond = scalar(b, outs[0], DType.BOOL, "the body's condition output")
        for k, (init, out) in enumerate(zip(carried, outs[1 : 1 + n], strict=True)):
            if type_of(init) != type_of(out):
                raise Unsupported(
                    f"loop-carried value #{k} changes type across iterations ({type_of(init)}"
                    f" -> {type_of(out)}); only loops of at most {UNROLL_MAX_ITERATIONS} "
                    "iterations with a static trip count are unrolled"
                )
        # A condition that starts true and that the body never changes stops nothing.
        stays = next_cond is block.args[1] or _is_true(next_cond)
        if cond is not None and stays and _is_true(cond):
            cond = None
        if trips is None and cond is None:
            raise Unsupported("a loop that never ends (no trip count, a condition that stays true)")
        b.emit(mir.YieldOp([next_cond, *outs[1:]]))
    elements = outs[1 + n :]
    scan_types: list[TensorType] = []
    if elements:
        length = _scan_length(ctx, trips, cond)
        scan_types = [TensorType((length, *type_of(e).shape), type_of(e).dtype) for e in elements]
    op = b.emit(
        mir.LoopOp(trips, cond, carried, Region(block), [*map(type_of, carried), *scan_types])
    )
    return list(op.results)


def _is_true(v: SSAValue) -> bool:
    arr = constant_value(v)
    return arr is not None and bool(arr.reshape(-1)[0])


def _scan_length(ctx: NodeContext, trips: SSAValue | None, cond: SSAValue | None) -> Dim:
    """The number of iterations as a dim: static, a symbolic dim of the model, or a fresh
    symbol for a count only the run knows."""
    if cond is None and trips is not None:
        static = _static_trips(trips)
        if static is not None:
            return max(static, 0)
        shape_value = ctx.shape_value(0)
        if shape_value is not None and shape_value.values.size == 1:
            dim = shape_value.values.reshape(-1)[0]
            if isinstance(dim, DimExpr):
                return dim
    return sym(ctx.fresh_symbol(f"{ctx.name}_iterations"))


def trip_count_of(ctx: NodeContext, steps: Dim) -> SSAValue:
    """A rank-0 i64 value holding ``steps`` (a constant, or the dim's value at run time)."""
    b = ctx.b
    if isinstance(steps, int):
        return b.constant(np.array(steps, np.int64), DType.I64, ())
    return b.reshape(b.emit(mir.DimsOp([steps])).results[0], [])


def reverse_leading(ctx: NodeContext, x: SSAValue, trips: SSAValue) -> SSAValue:
    """``x`` with its leading axis reversed (an axis of ``trips`` elements)."""
    b = ctx.b
    n = type_of(x).shape[0]
    backwards = b.sub(b.sub(trips, 1), iota(ctx, n, DType.I64))
    return b.gather(x, backwards, 0)


def move_leading(ctx: NodeContext, x: SSAValue, axis: int) -> SSAValue:
    """``x`` with its leading axis moved to ``axis``."""
    if axis == 0:
        return x
    rank = type_of(x).rank
    perm = [*range(1, axis + 1), 0, *range(axis + 1, rank)]
    return ctx.b.transpose(x, perm)


def scan_region(
    ctx: NodeContext,
    body: onnx.GraphProto,
    states: Sequence[SSAValue],
    scans: Sequence[SSAValue],
    layout: tuple[list[int], list[int], list[int], list[int]],
    steps: Dim,
    tag: str = "",
) -> list[SSAValue]:
    """A Scan-9+ as one ``mir.loop`` over its ``steps`` slices (static or symbolic): the
    states are carried, each iteration reads slice i (or steps-1-i) of every scan input,
    and the scan outputs are the loop's, reversed and moved to their axes as asked.
    Input axes are normalised by the caller; ``tag`` tells one such loop of a node from
    another (Scan-8 runs one per batch row)."""
    in_axes, in_dirs, out_axes, out_dirs = layout
    b = ctx.b
    trips = trip_count_of(ctx, steps)
    n = len(states)
    block = Block(arg_types=[mir.I64_SCALAR, mir.BOOL_SCALAR, *(type_of(s) for s in states)])
    i = block.args[0]
    with b.building(block):  # a failure discards the body
        backwards = b.sub(b.sub(trips, 1), i) if any(in_dirs) else i  # read where reversed
        slices = [
            b.gather(x, backwards if reverse else i, axis)
            for x, axis, reverse in zip(scans, in_axes, in_dirs, strict=True)
        ]
        inputs = [*block.args[2:], *slices]
        outs = ctx.convert_subgraph(body, block, inputs, f"{tag}body/")
        for k, (init, out) in enumerate(zip(states, outs[:n], strict=True)):
            if type_of(init) != type_of(out):
                raise Unsupported(
                    f"state #{k} changes type across iterations ({type_of(init)} -> {type_of(out)})"
                )
        b.emit(mir.YieldOp([block.args[1], *outs]))
    elements = outs[n:]
    scan_types = [TensorType((steps, *type_of(e).shape), type_of(e).dtype) for e in elements]
    op = b.emit(
        mir.LoopOp(trips, None, states, Region(block), [*map(type_of, states), *scan_types])
    )
    results: list[SSAValue] = list(op.results)
    stacked = []
    for j, y in enumerate(results[n:]):
        if out_dirs[j]:
            y = reverse_leading(ctx, y, trips)
        stacked.append(move_leading(ctx, y, out_axes[j] % type_of(y).rank))
    return [*results[:n], *stacked]


# ---------------------------------------------------------------------------------
# Windows at a run-time index (x[i:i+k] in a loop body)
# ---------------------------------------------------------------------------------


def _offset_from(v: SSAValue) -> tuple[SSAValue, int]:
    """``v`` as ``root + c`` for a one-element integer value: through reshapes, integer
    casts and additions or subtractions of a constant."""
    op = v.owner
    if isinstance(op, mir.ReshapeOp | mir.CastOp) and type_of(op.input).dtype.is_int:
        return _offset_from(op.input)
    if isinstance(op, mir.AddOp | mir.SubOp):
        lhs, rhs = constant_value(op.lhs), constant_value(op.rhs)
        if rhs is not None and rhs.size == 1:
            root, c = _offset_from(op.lhs)
            step = int(rhs.reshape(-1)[0])
            return root, c + step if isinstance(op, mir.AddOp) else c - step
        if lhs is not None and lhs.size == 1 and isinstance(op, mir.AddOp):
            root, c = _offset_from(op.rhs)
            return root, c + int(lhs.reshape(-1)[0])
    return v, 0


def run_time_slice(ctx: NodeContext) -> SSAValue | None:
    """A Slice on one axis whose start is known only at run time and whose end is the
    start plus a constant ``k`` (``x[i:i+k]`` in a loop body): the window of k elements
    from the start, read with a gather. The window must lie inside the tensor (a run-time
    start is not clamped: a gather out of range is a run-time error). None for any other
    Slice with run-time starts or ends."""
    x = ctx.x(0)
    starts, ends = ctx.x(1), ctx.x(2)
    if type_of(starts).num_elements() != 1 or type_of(ends).num_elements() != 1:
        return None
    axes = ctx.static_ints(3, "Slice's axes") if ctx.has(3) else [0]
    steps = ctx.ints(4, "Slice's steps") if ctx.has(4) else [1]
    start_root, start_c = _offset_from(starts)
    end_root, end_c = _offset_from(ends)
    step = steps[0]
    if start_root is not end_root or not isinstance(step, int) or step == 0:
        return None
    length = max(0, -(-(end_c - start_c) // step))
    b = ctx.b
    axis = axes[0] % type_of(x).rank
    start = b.cast(b.reshape(starts, []), DType.I64)
    offsets = iota(ctx, length, DType.I64)
    if step != 1:
        offsets = b.mul(offsets, b.constant(np.array(step, np.int64), DType.I64, ()))
    return b.gather(x, b.add(start, offsets), axis)


def appending_loop_region(
    ctx: NodeContext,
    trip_count: SSAValue | None,
    condition: SSAValue | None,
    carried: Sequence[SSAValue | Structured],
) -> ConverterResult:
    """A Loop that carries sequences and does not unroll, where each sequence starts
    empty and the body only appends one item to it (torch's ``outs.append(h)`` in a
    scripted loop, read after the loop by ``torch.stack`` / ``torch.cat``): one
    ``mir.loop`` whose extra scan outputs are the appended items, each sequence the
    items stacked (``StackedSequence``)."""
    from rlx_compile.frontends.onnx.importer import outer_names  # the importer imports ops

    body = next((a.g for a in ctx.node.attribute if a.name == "body"), None)
    if body is None:
        raise Unsupported("no body")
    ctx.used_attrs.add("body")
    n = len(carried)
    if len(body.input) != n + 2 or len(body.output) < n + 1:
        raise Unsupported(f"a body of {len(body.input)} inputs for {n} carried values")
    producer = {o: node for node in body.node for o in node.output}
    uses: dict[str, int] = {}
    for node in body.node:
        for name in [*node.input, *outer_names(node)]:
            uses[name] = uses.get(name, 0) + 1
    appends: list[tuple[int, onnx.NodeProto]] = []
    for k, value in enumerate(carried):
        if isinstance(value, SSAValue):
            continue
        s_in, s_out = body.input[2 + k].name, body.output[1 + k].name
        node = producer.get(s_out)
        appended = (
            isinstance(value, SequenceValue)
            and not value.items
            and node is not None
            and node.op_type == "SequenceInsert"
            and len([i for i in node.input if i]) == 2
            and node.input[0] == s_in
            and uses.get(s_in) == 1
            and s_out not in uses
        )
        if not appended:
            raise Unsupported(
                "a loop carrying sequences that does not unroll, and whose body does more "
                f"with sequence '{s_in}' than append to an empty one"
            )
        assert node is not None
        appends.append((k, node))
    seq_at = {k for k, _ in appends}
    new = onnx.GraphProto()
    new.CopyFrom(body)
    del new.input[:], new.output[:], new.node[:]
    new.input.extend(i for j, i in enumerate(body.input) if j - 2 not in seq_at)
    new.output.extend(o for j, o in enumerate(body.output) if j - 1 not in seq_at)
    new.output.extend(onnx.helper.make_empty_tensor_value_info(a.input[1]) for _, a in appends)
    dropped = {id(a) for _, a in appends}
    new.node.extend(node for node in body.node if id(node) not in dropped)
    tensors = [v for v in carried if isinstance(v, SSAValue)]
    outs = cast(list[SSAValue], loop_region(ctx, new, trip_count, condition, tensors))
    scans = len(body.output) - 1 - n
    finals, items = iter(outs[: len(tensors)]), iter(outs[len(tensors) + scans :])
    result: list[SSAValue | Structured] = [
        next(finals)
        if isinstance(v, SSAValue)
        else StackedSequence(next(items), cast(SequenceValue, v).elem_type)
        for v in carried
    ]
    return [*result, *outs[len(tensors) : len(tensors) + scans]]


def squeeze_if_one(ctx: NodeContext) -> list[SSAValue] | None:
    """torch's ``x.squeeze(k)`` exported for an axis of open size: ``If(x.shape[k] == 1,
    Squeeze(x, [k]), Identity(x))``, branches of different ranks that cannot be one
    ``mir.if``. It is one reshape dropping the axis, which holds where the size is 1 (the
    executors and specialize-dims check it at each run, naming ``mir.reshape``): models
    go on to read the squeezed rank (silero-vad's LSTM; onnxruntime fails there at
    other sizes too). None when the If is not that pattern."""
    then_graph, else_graph = (
        next((a.g for a in ctx.node.attribute if a.name == n), None)
        for n in ("then_branch", "else_branch")
    )
    if then_graph is None or else_graph is None:
        return None
    squeezes = [n for n in then_graph.node if n.op_type == "Squeeze"]
    others = [n for n in then_graph.node if n.op_type not in ("Squeeze", "Constant")]
    keeps = list(else_graph.node)
    if len(squeezes) != 1 or others or len(keeps) != 1 or keeps[0].op_type != "Identity":
        return None
    squeeze, keep = squeezes[0], keeps[0]
    if [o.name for o in then_graph.output] != list(squeeze.output):
        return None
    if [o.name for o in else_graph.output] != list(keep.output):
        return None
    if keep.input[0] != squeeze.input[0]:
        return None
    x = ctx.bound_value(squeeze.input[0])
    axes = _branch_ints(ctx, then_graph, squeeze)
    if x is None or axes is None or len(axes) != 1:
        return None
    shape = list(type_of(x).shape)
    if not -len(shape) <= axes[0] < len(shape):
        return None
    k = axes[0] % len(shape)
    size = shape[k]
    if not isinstance(size, DimExpr) or not _is_size_equal_one(ctx, size):
        return None
    ctx.used_attrs.update(("then_branch", "else_branch"))
    return [ctx.b.reshape(x, shape[:k] + shape[k + 1 :])]


def _branch_ints(
    ctx: NodeContext, graph: onnx.GraphProto, node: onnx.NodeProto
) -> list[int] | None:
    """Squeeze's axes: its attribute (opset < 13), or its second input made by a Constant
    of the branch or known to the graph around it."""
    for a in node.attribute:
        if a.name == "axes":
            return list(a.ints)
    if len(node.input) < 2 or not node.input[1]:
        return None
    name = node.input[1]
    made = next((n for n in graph.node if name in n.output and n.op_type == "Constant"), None)
    if made is not None:
        value = next((a.t for a in made.attribute if a.name == "value"), None)
        if value is None:
            return None
        return [int(v) for v in onnx.numpy_helper.to_array(value).reshape(-1)]
    try:
        return [int(v) for v in ctx.static_value(name, "Squeeze's axes").reshape(-1)]
    except (NotStatic, TypeError):
        return None


def _is_size_equal_one(ctx: NodeContext, dim: DimExpr) -> bool:
    """Whether the If's condition is ``Equal(dim, 1)`` (a shape value and a constant)."""
    cond = ctx.producer_of(ctx.node.input[0])
    if cond is None or cond.op_type != "Equal" or len(cond.input) != 2:
        return False
    held = []
    for name in cond.input:
        sv = ctx.shape_value_of(name)
        try:
            values = sv.values if sv is not None else ctx.static_value(name, "a size")
        except NotStatic:
            return False
        if values.size != 1:
            return False
        held.append(values.reshape(-1)[0])
    return sorted(held, key=lambda v: isinstance(v, DimExpr)) == [1, dim]
