"""``emit_program``: a planned ``lir.graph`` -> the kernel ``Program``.

Where every value lives:
- a compute op's results at their planned slots (``Ptr("arena", offset)``);
- an input at its slot, copied there when the schedule reaches its ``mir.input`` (its
  bytes may hold another tensor before that), or in the caller's buffer when the plan
  gave it no slot;
- params, constants and weight packs (values computed from those alone) in the weights
  blob, whatever slot the plan gave them: a run only reads weights, and packs are
  computed once, when the blob is packed, by the reference executor;
- a ``lir.view`` at its root's address plus its byte offset.
Outputs are copied to the caller's buffers at the end.
"""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue

import rlx_compile.conversion.lir_to_c.kernels  # noqa: F401  (registers the lowerings)
from rlx_compile.conversion.lir_to_c.lowering import (
    LOWERINGS,
    EmitOptions,
    OpEmitter,
    Operand,
    Unsupported,
)
from rlx_compile.conversion.lir_to_c.program import (
    ALIGN,
    Call,
    NativeUnsupportedError,
    Program,
    Ptr,
    Tensor,
    WeightEntry,
    WeightKind,
    align_up,
)
from rlx_compile.dialects import lir, mir
from rlx_compile.dialects.traits import writes_in_place
from rlx_compile.dialects.types import TensorType
from rlx_compile.ir import graph_block, graph_name, location_str, output_names
from rlx_compile.targets.base import STRUCTURAL, Target

_LEAVES = mir.InputOp | mir.ParamOp | mir.ConstantOp


def _tensor_type(v: SSAValue) -> TensorType:
    t = v.type
    assert isinstance(t, TensorType)
    return t


def _leaf_name(op: mir.InputOp | mir.ParamOp) -> str:
    return op.tensor_name.data


def _read_at_run_time(
    ops: list[Operation], terminator: Operation | None, static: set[SSAValue]
) -> set[SSAValue]:
    """The static values (views followed to their roots) that run-time ops or the
    outputs read."""
    read: set[SSAValue] = set()
    for op in [*ops, terminator]:
        if op is None or isinstance(op, lir.ViewOp) or (op.results and op.results[0] in static):
            continue
        for v in op.operands:
            owner = v.owner
            root = owner.root if isinstance(owner, lir.ViewOp) else v
            if root in static:
                read.add(root)
    return read


def _reads_around(op: Operation) -> bool:
    """Whether ``op``'s regions read values from around it (control flow does, through
    the enclosing scope): then its operands are not all it reads."""
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            owner = v.owner
            defining = owner if isinstance(owner, Operation) else owner.parent_op()
            if defining is None or not op.is_ancestor(defining):
                return True
    return False


def static_values(ops: list[Operation]) -> set[SSAValue]:
    """Params, constants and the values computed from them alone (weight packs)."""
    static: set[SSAValue] = set()
    for op in ops:
        leaf = isinstance(op, mir.ParamOp | mir.ConstantOp)
        if leaf or (
            not isinstance(op, mir.InputOp)
            and op.operands
            and all(v in static for v in op.operands)
            and not (op.regions and _reads_around(op))
        ):
            static.update(op.results)
    return static


def _clobbers(op: Operation, out: Operand, args: list[Operand]) -> bool:
    """Whether writing ``out`` in place could overwrite operand bytes a kernel has yet to
    read. The planner lets an op that writes in place (``writes_in_place``) write over a
    same-size operand that dies at it, and produces concat operands inside the concat's
    slot; kernels stream element by element, which is safe only for an operand of the
    result's very type at the result's address (the reference computes whole results
    first, so it needs no such rule)."""
    if isinstance(op, mir.ConcatOp):
        return False
    in_place = writes_in_place(op)
    for a in args:
        if out.loc.base != "arena" or not out.overlaps(a):
            continue
        if in_place and a.loc == out.loc and a.type == out.type:
            continue
        return True
    return False


# Where the epilogue's (lo, hi) clamp bounds sit in the calls that take them.
_CLAMP_ARGS = {
    "rlx_epilogue_f32": (3, 7), "rlx_epilogue_f64": (3, 7), "rlx_epilogue_f16": (3, 7),
    "rlx_epilogue_bf16": (3, 7), "rlx_conv_f32": (1, 8), "rlx_conv_f64": (1, 8),
}  # fmt: skip
"""kernel -> (index of its output pointer, index of lo; hi follows)."""


def _absorb_clamp(
    program: Program, op: Operation, args: list[Operand], out: Operand | None
) -> bool:
    """``max(y, c)`` / ``min(y, c)`` with a scalar constant ``c``, written over ``y`` right
    after the epilogue that produced it, becomes that epilogue's clamp bound instead of a
    pass of its own (a conv + clip is one kernel). The epilogue applies the same max/min
    functions in the same order, so the values are the same."""
    if out is None or not isinstance(op, mir.MaxOp | mir.MinOp) or not program.calls:
        return False
    prev = program.calls[-1]
    where = _CLAMP_ARGS.get(prev.kernel)
    # The last call made y (every op since emitted no call: none read y before the clamp).
    if where is None:
        return False
    y_arg, lo_arg = where
    y, const = args
    const_op = op.operands[1].owner
    # y first: max(y, c) and max(c, y) differ on ties (which zero) and the epilogue's is
    # max(y, c).
    if not (y.loc == out.loc and y.type == out.type and prev.args[y_arg] == out.loc):
        return False
    if const.size != 1 or not isinstance(const_op, mir.ConstantOp):
        return False
    c = float(const_op.to_numpy().reshape(-1)[0])
    if math.isnan(c):
        return False
    lo, hi = prev.args[lo_arg], prev.args[lo_arg + 1]
    assert isinstance(lo, float) and isinstance(hi, float)
    # One max, then one min: the epilogue's order (a max after a min would not be).
    if isinstance(op, mir.MaxOp):
        if lo != -math.inf or hi != math.inf:
            return False
        lo = c
    else:
        if hi != math.inf:
            return False
        hi = c
    new_args = list(prev.args)
    new_args[lo_arg], new_args[lo_arg + 1] = lo, hi
    program.calls[-1] = Call(prev.kernel, tuple(new_args), prev.step)
    return True


def emit_program(
    graph: lir.GraphOp, target: Target | None = None, options: EmitOptions | None = None
) -> Program:
    """The kernel program of a planned graph; ``target`` (its claim set) must allow every
    op, and every op needs a native lowering for its element types, else
    ``NativeUnsupportedError`` names each op kind that has none."""
    options = options or EmitOptions()
    block = graph_block(graph)
    terminator = block.last_op
    ops = [op for op in block.ops if op is not terminator]
    program = Program(graph_name(graph), graph.arena_bytes, graph.align)
    static = static_values(ops)
    where: dict[SSAValue, Ptr] = {}
    problems: list[tuple[str, str, str | None]] = []

    # The weights blob: params in manifest order, then constants and packs -- those a run
    # reads (a param only packs read, an int8 model's f32 weights, is not stored).
    read = _read_at_run_time(ops, terminator, static)
    offset = 0

    def add_weight(entry_kind: WeightKind, name: str, op: Operation, index: int) -> None:
        nonlocal offset
        t = _tensor_type(op.results[index])
        stored = op.results[index] in read
        entry = WeightEntry(entry_kind, name, t, offset if stored else None, op, index)
        program.weights.append(entry)
        if stored:
            where[op.results[index]] = Ptr("weights", offset)
            offset += align_up(entry.nbytes, ALIGN)

    for op in ops:
        if isinstance(op, mir.ParamOp):
            add_weight("param", _leaf_name(op), op, 0)
    for op in ops:
        if isinstance(op, mir.ConstantOp):
            add_weight("constant", f"constant{len(program.weights)}", op, 0)
        elif not isinstance(op, _LEAVES | lir.ViewOp) and op.results[0] in static:
            for i in range(len(op.results)):
                add_weight("pack", f"pack{len(program.weights)}", op, i)
    program.weights_bytes = offset
    program.static_ops = [op for op in ops if op.results and op.results[0] in static]

    for op in ops:
        if isinstance(op, mir.InputOp):
            index = len(program.inputs)
            slot = lir.result_slots(op)[0]
            t = _tensor_type(op.result)
            program.inputs.append(Tensor(_leaf_name(op), t, slot.offset if slot else None))
            if slot is None:
                where[op.result] = Ptr("input", 0, index)
                continue
            where[op.result] = Ptr("arena", slot.offset)
            program.steps.append(op)
            copy_in = (where[op.result], Ptr("input", 0, index), t.nbytes())
            program.calls.append(Call("rlx_memcpy", copy_in, len(program.steps) - 1))
            continue
        if isinstance(op, lir.ViewOp):
            if op.root in where:  # else a view of a pack that no run-time op reads
                where[op.result] = where[op.root].at(op.offset)
            continue
        if isinstance(op, mir.ParamOp | mir.ConstantOp) or op.results[0] in static:
            continue
        if op.name in STRUCTURAL:
            continue
        step = len(program.steps)
        program.steps.append(op)
        why = target.illegal_reason(op) if target is not None else None
        lowering = LOWERINGS.get(type(op))
        if why is not None or lowering is None:
            problems.append((op.name, why or "no kernel", location_str(op)))
            continue
        if any(v not in where for v in op.operands):
            continue  # reads a value an earlier problem left without a place
        slots = lir.result_slots(op)
        outs = []
        for result, slot in zip(op.results, slots, strict=True):
            t = _tensor_type(result)
            if slot is None and t.nbytes():
                problems.append((op.name, "a result without an arena slot", location_str(op)))
                break
            # An empty tensor has no bytes (and no slot): any address will do.
            where[result] = Ptr("arena", slot.offset if slot else 0)
            outs.append(Operand(where[result], t))
        if len(outs) != len(op.results):
            continue
        args = [Operand(where[v], _tensor_type(v)) for v in op.operands]
        if _absorb_clamp(program, op, args, outs[0] if outs else None):
            continue
        staged = [i for i, out in enumerate(outs) if _clobbers(op, out, args)]
        emitter = OpEmitter(op, args, list(outs), step, options)
        for i in staged:  # computed into scratch, then copied to the slot
            emitter.outs[i] = emitter.tmp(outs[i].type)
        try:
            lowering(emitter)
        except Unsupported as err:
            problems.append((op.name, str(err), location_str(op)))
            continue
        for i in staged:
            emitter.call("rlx_memcpy", outs[i].loc, emitter.outs[i].loc, outs[i].nbytes)
        program.calls += emitter.calls
        program.scratch = max(program.scratch, emitter.scratch_used)

    if problems:
        raise NativeUnsupportedError(problems)
    assert terminator is not None
    program.steps.append(terminator)
    for index, (name, value) in enumerate(
        zip(output_names(graph), terminator.operands, strict=True)
    ):
        t = _tensor_type(value)
        loc = where[value]
        program.outputs.append(Tensor(name, t, loc.offset if loc.base == "arena" else None))
        nbytes = t.nbytes()
        program.calls.append(
            Call("rlx_memcpy", (Ptr("output", 0, index), loc, nbytes), len(program.steps) - 1)
        )
    return program
