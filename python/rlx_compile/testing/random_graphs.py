"""Random, valid MIR graphs for property tests and benchmarks.

``random_mir_graph(seed, num_ops)`` builds a graph that mixes elementwise ops (with
broadcasting), matmuls, reshapes, transposes, narrows, concats, reductions, softmax,
compare/where and casts, over inputs, params and constants — plus dead values, repeated
subexpressions and algebraic identities (x·1, x+0, double negation) so that cleanup
passes have something to do. Values stay bounded (no overflow to inf, no NaN), so
"before" and "after" executions can be compared with a tight tolerance.
Everything derives from ``seed``: the same seed gives the same graph and data.

``cleanup=True`` adds families aimed at the cleanup passes (the default mix, and so the
graph of every seed, is unchanged without it): i32 chains whose results are exact
(wrapping arithmetic, x·0, exact cast chains, ``mod``) and also reach the outputs,
all-constant subexpressions, ``where`` on constant conditions (uniform or mixed, with
constant or broadcast arms), identity views (reshape chains, full narrows, one-operand
concats, same-type casts), look-alikes of identities that must not be rewritten (0 - x,
1 / x, broadcasting zeros, lossy casts) and param-only subexpressions feeding the
computation.

``concats=True`` adds concats whose operands the memory planner may produce inside the
concat's slot (contiguous along the axis, operands computed for the concat, nested
concats) next to the cases it must keep apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from rlx_compile.builder import ModuleBuilder, type_of
from rlx_compile.dialects import hir, mir
from rlx_compile.dialects.types import DType
from rlx_compile.ir import main_graph

_DIMS = (1, 2, 3, 4, 6, 8)


@dataclass
class RandomGraph:
    module: ModuleOp
    inputs: dict[str, np.ndarray]
    params: dict[str, np.ndarray]
    output_names: list[str] = field(default_factory=list)


class _Gen:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.m = ModuleBuilder("random")
        self.values: list[SSAValue] = []
        self.ints: list[SSAValue] = []  # i32 values (cleanup families only)
        self.inputs: dict[str, np.ndarray] = {}
        self.params: dict[str, np.ndarray] = {}

    # -- sources ---------------------------------------------------------------------
    def shape(self, rank: int | None = None) -> tuple[int, ...]:
        r = int(self.rng.integers(1, 4)) if rank is None else rank
        return tuple(int(self.rng.choice(_DIMS)) for _ in range(r))

    def data(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.rng.uniform(-2, 2, size=shape).astype(np.float32)

    def new_input(
        self, shape: tuple[int, ...], data: np.ndarray | None = None, prefix: str = "x"
    ) -> SSAValue:
        """An input fed ``data`` (by default f32 values drawn in [-2, 2))."""
        name = f"{prefix}{len(self.inputs)}"
        self.inputs[name] = self.data(shape) if data is None else data
        return self.m.input(name, shape, DType.from_numpy(self.inputs[name].dtype))

    def new_param(self, shape: tuple[int, ...], data: np.ndarray | None = None) -> SSAValue:
        """A param bound to ``data`` (by default f32 values drawn in [-2, 2))."""
        name = f"p{len(self.params)}"
        self.params[name] = self.data(shape) if data is None else data
        return self.m.param(name, shape, DType.from_numpy(self.params[name].dtype))

    def new_constant(self, shape: tuple[int, ...]) -> SSAValue:
        kind = self.rng.integers(0, 4)
        if kind == 0:
            return self.m.constant(np.zeros(shape, np.float32))
        if kind == 1:
            return self.m.constant(np.ones(shape, np.float32))
        return self.m.constant(self.data(shape))

    def operand_like(self, shape: tuple[int, ...]) -> SSAValue:
        """A fresh leaf whose shape broadcasts onto ``shape`` (same, suffix, or 1s)."""
        choice = self.rng.integers(0, 3)
        if choice == 0:
            s = shape
        elif choice == 1:
            s = shape[int(self.rng.integers(0, len(shape) + 1)) :]
        else:
            s = tuple(1 if self.rng.random() < 0.5 else d for d in shape)
        return self.new_param(s) if self.rng.random() < 0.5 else self.new_constant(s)

    def pick(self) -> SSAValue:
        # Prefer recent values so the graph is deep, but reach back sometimes.
        n = len(self.values)
        idx = n - 1 - int(min(self.rng.geometric(0.35) - 1, n - 1))
        return self.values[idx]

    @staticmethod
    def shape_of(v: SSAValue) -> tuple[int, ...]:
        return tuple(int(d) for d in type_of(v).shape)

    # -- op families -------------------------------------------------------------------
    def unary(self, x: SSAValue) -> SSAValue:
        m = self.m
        ops = [
            m.neg, m.abs, m.tanh, m.sigmoid, m.relu, m.silu, m.gelu,
            lambda v: m.gelu(v, "tanh"),
            lambda v: m.exp(m.tanh(v)),
            lambda v: m.log(m.add(m.abs(v), 1.0)),
            lambda v: m.sqrt(m.abs(v)),
            lambda v: m.neg(m.neg(v)),
        ]  # fmt: skip
        return ops[int(self.rng.integers(0, len(ops)))](x)

    def binary(self, x: SSAValue) -> SSAValue:
        m = self.m
        shape = self.shape_of(x)
        same = [v for v in self.values if self.shape_of(v) == shape and v is not x]
        other = same[int(self.rng.integers(0, len(same)))] if same and self.rng.random() < 0.5 \
            else self.operand_like(shape)  # fmt: skip
        kind = int(self.rng.integers(0, 7))
        if kind == 0:
            return m.add(x, other)
        if kind == 1:
            return m.sub(x, other)
        if kind == 2:
            return m.mul(x, other)
        if kind == 3:
            return m.div(x, m.add(m.abs(other), 1.0))
        if kind == 4:
            return m.maximum(x, other)
        if kind == 5:
            return m.minimum(other, x)
        return m.where(m.compare("gt", x, other), x, other)

    def identity(self, x: SSAValue) -> SSAValue:
        """x·1, x+0, x·0+x: rewrites algebraic-simplify should remove."""
        shape = self.shape_of(x)
        m = self.m
        kind = int(self.rng.integers(0, 3))
        if kind == 0:
            return m.mul(x, m.constant(np.ones(shape, np.float32)))
        if kind == 1:
            return m.add(m.constant(np.zeros(shape, np.float32)), x)
        return m.sub(x, m.constant(np.zeros(shape, np.float32)))

    def matmul(self, x: SSAValue) -> SSAValue:
        shape = self.shape_of(x)
        if len(shape) < 2:
            x = self.m.reshape(x, (1, shape[0]))
            shape = (1, shape[0])
        n = int(self.rng.choice(_DIMS))
        w = self.new_param((shape[-1], n)) if self.rng.random() < 0.7 else \
            self.new_constant((shape[-1], n))  # fmt: skip
        return self.m.matmul(x, w)

    def reshape(self, x: SSAValue) -> SSAValue:
        total = math.prod(self.shape_of(x))
        dims: list[int] = []
        rest = total
        for _ in range(int(self.rng.integers(0, 3))):
            divisors = [d for d in range(2, rest + 1) if rest % d == 0]
            if not divisors:
                break
            d = int(self.rng.choice(divisors))
            dims.append(d)
            rest //= d
        dims.append(rest)
        self.rng.shuffle(dims)
        return self.m.reshape(x, tuple(dims))

    def transpose(self, x: SSAValue) -> SSAValue:
        perm = self.rng.permutation(len(self.shape_of(x))).tolist()
        y = self.m.transpose(x, perm)
        if self.rng.random() < 0.3:  # transpose of transpose
            y = self.m.transpose(y, self.rng.permutation(len(perm)).tolist())
        return y

    def reduce(self, x: SSAValue) -> SSAValue:
        rank = len(self.shape_of(x))
        axes = sorted(
            {int(a) for a in self.rng.integers(0, rank, size=int(self.rng.integers(1, rank + 1)))}
        )
        kind = ("sum", "mean", "max", "min")[int(self.rng.integers(0, 4))]
        return self.m.reduce(kind, x, axes, keepdims=bool(self.rng.random() < 0.5))

    def softmax(self, x: SSAValue) -> SSAValue:
        return self.m.softmax(x, int(self.rng.integers(0, len(self.shape_of(x)))))

    def narrow(self, x: SSAValue) -> SSAValue:
        shape = self.shape_of(x)
        axis = int(self.rng.integers(0, len(shape)))
        length = int(self.rng.integers(1, shape[axis] + 1))
        start = int(self.rng.integers(0, shape[axis] - length + 1))
        return self.m.narrow(x, axis, start, length)

    def concat(self, x: SSAValue) -> SSAValue:
        shape = self.shape_of(x)
        axis = int(self.rng.integers(0, len(shape)))
        other_shape = list(shape)
        other_shape[axis] = int(self.rng.choice(_DIMS))
        other = x if self.rng.random() < 0.3 else self.new_param(tuple(other_shape))
        return self.m.concat([x, other], axis)

    def cast_round_trip(self, x: SSAValue) -> SSAValue:
        return self.m.cast(self.m.cast(x, "f64"), "f32")

    def duplicate(self, x: SSAValue) -> SSAValue:
        """Build the same expression twice (for CSE) and combine both copies."""
        a = self.m.tanh(x)
        b = self.m.tanh(x)
        return self.m.add(a, b)

    def embedded_concat(self, x: SSAValue, depth: int = 0, rows: int | None = None) -> SSAValue:
        """A concat along axis 1 of ``[rows, w]`` operands, contiguous when rows is 1 (its
        operands can then live inside it), widths mostly multiples of 16 f32 (64-byte
        offsets). Operands: fresh matmuls, in-place chains over them, a value read by
        another op first and by the concat last (DenseNet), nested concats; and what must
        stay apart: a param, an operand read again after the concat, the same operand
        twice, an odd width (unaligned offsets after it), two rows (not contiguous)."""
        m = self.m
        n = math.prod(self.shape_of(x))
        flat = m.tanh(m.reshape(x, (1, n)))
        if n > 32:
            flat, n = m.narrow(flat, 1, 0, 32), 32
        rows = rows or (2 if self.choose(6) == 0 else 1)
        if rows == 2:
            flat = m.concat([flat, m.neg(flat)], 0)
        parts: list[SSAValue] = []
        late: list[SSAValue] = []
        for _ in range(1 + self.choose(4)):
            width = 16 * (1 + self.choose(3)) if self.choose(5) else int(self.rng.choice(_DIMS))
            k = self.choose(8)
            if k == 3:
                part = self.new_param((rows, width))
            elif k == 4 and rows == 1 and depth < 2:
                part = self.embedded_concat(x, depth + 1, rows=1)
            elif k == 5 and parts:
                part = parts[self.choose(len(parts))]
            else:
                part = m.matmul(flat, self.new_param((n, width)))
                if k == 1:
                    part = m.tanh(m.add(part, 1.0))
                elif k == 2:
                    self.values.append(m.sigmoid(part))
                elif k == 6:
                    late.append(part)
                elif k == 7:
                    part = m.relu(part)
            parts.append(part)
        c = m.concat(parts, 1)
        for p in late:
            c = m.add(c, m.reduce("max", p, [0, 1], keepdims=True))
        return c

    # -- cleanup families ------------------------------------------------------------------
    def choose(self, n: int) -> int:
        return int(self.rng.integers(0, n))

    def int_constant(self, shape: tuple[int, ...], low: int = -20, high: int = 20) -> SSAValue:
        return self.m.constant(self.rng.integers(low, high, size=shape).astype(np.int32), "i32")

    def int_source(self, x: SSAValue) -> SSAValue:
        """An i32 value: a recent one, a new i32 input or param, or x truncated to i32."""
        shape = self.shape_of(x)
        choice = self.choose(4)
        if self.ints and choice == 0:
            return self.ints[len(self.ints) - 1 - self.choose(min(3, len(self.ints)))]
        if choice in (1, 2):
            data = self.rng.integers(-50, 50, size=shape).astype(np.int32)
            return self.new_input(shape, data, "k") if choice == 1 else self.new_param(shape, data)
        return self.m.cast(self.m.mul(x, 16.0), "i32")

    def int_chain(self, x: SSAValue) -> SSAValue:
        """A few exact i32 steps; the chain's value rejoins the float graph through a
        bounded ``mod`` and a cast."""
        m = self.m
        v = self.int_source(x)
        shape = self.shape_of(v)
        for _ in range(1 + self.choose(4)):
            k = self.choose(10)
            if k == 0:
                v = m.add(v, self.int_constant(shape))
            elif k == 1:
                v = m.sub(self.int_constant(shape), v)
            elif k == 2:
                v = m.mul(v, self.int_constant(shape, -3, 4))
            elif k == 3:
                v = m.neg(m.neg(v)) if self.choose(2) else m.abs(v)
            elif k == 4:
                v = m.maximum(v, self.int_constant(shape))
            elif k == 5:
                zero = m.constant(np.zeros(shape, np.int32))
                v = m.add(m.mul(v, zero), v) if self.choose(2) else m.mul(zero, v)
            elif k == 6:
                v = m.cast(m.cast(v, ("i64", "f64")[self.choose(2)]), "i32")
                if self.choose(2):
                    # i16 -> f32 is exact, but f32 -> i8 saturates where i16 -> i8 wraps
                    # (the scaling makes values leave i8's range).
                    wide = m.cast(m.mul(v, m.constant(np.full(shape, 37, np.int32))), "i16")
                    v = m.cast(m.cast(m.cast(wide, "f32"), "i8"), "i32")
            elif k == 7:
                v = m.where(m.compare("lt", v, self.int_constant(shape)), v, m.neg(v))
            elif k == 8:
                v = m.mul(v, m.constant(np.ones(shape, np.int32)))
            else:
                v = m.transpose(v, self.rng.permutation(len(shape)).tolist())
                shape = self.shape_of(v)
        self.ints.append(v)
        bounded = m.binary(mir.ModOp, v, m.constant(np.full(shape, 7, np.int32)))
        return m.cast(bounded, "f32")

    def const_expr(self, x: SSAValue) -> SSAValue:
        """x combined with a subexpression over constants only (a folding target)."""
        m = self.m
        shape = self.shape_of(x)
        c = self.new_constant(shape)
        for _ in range(1 + self.choose(3)):
            k = self.choose(5)
            if k == 0:
                c = m.tanh(c)
            elif k == 1:
                c = m.add(c, self.new_constant(shape[self.choose(len(shape) + 1) :]))
            elif k == 2:
                c = m.mul(c, self.new_constant(shape))
            elif k == 3:
                c = m.exp(m.neg(m.abs(c)))
            else:
                c = m.reshape(m.transpose(c, list(range(len(shape)))[::-1]), shape)
        return m.add(x, c)

    def const_select(self, x: SSAValue) -> SSAValue:
        """where(condition known at compile time, ...): uniform or mixed, through a compare
        of constants or a bool literal, with runtime, constant or broadcast arms."""
        m = self.m
        shape = self.shape_of(x)
        cond_shape = shape if self.choose(3) else tuple(1 for _ in shape)
        kind = self.choose(3)
        if kind == 0:
            mask = np.full(cond_shape, bool(self.choose(2)))
        else:
            mask = self.rng.random(cond_shape) < 0.5
        if self.choose(2):
            cond = m.constant(mask)
        else:
            lhs = self.rng.uniform(-1, 1, cond_shape).astype(np.float32)
            cond = m.compare("lt", m.constant(lhs), m.constant(np.where(mask, lhs + 1, lhs - 1)))
        arm_shape = shape if self.choose(2) else shape[len(shape) - 1 :]
        other = self.new_constant(arm_shape) if self.choose(2) else self.operand_like(shape)
        if self.choose(2):
            return m.where(cond, x, other)
        return m.where(cond, other, x)

    def view_chain(self, x: SSAValue) -> SSAValue:
        """Identity views: a reshape chain, full narrow, one-operand concat, same-type cast,
        identity transpose."""
        m = self.m
        shape = self.shape_of(x)
        k = self.choose(5)
        if k == 0:
            return m.reshape(self.reshape(x), shape if self.choose(2) else (math.prod(shape),))
        if k == 1:
            axis = self.choose(len(shape))
            return m.narrow(x, axis, 0, shape[axis])
        if k == 2:
            return m.concat([x], self.choose(len(shape)))
        if k == 3:
            return m.cast(x, "f32")
        return m.transpose(x, list(range(len(shape))))

    def near_identity(self, x: SSAValue) -> SSAValue:
        """Look-alikes of the identities and duplicates that must stay: 0 - x, 1 / x,
        constants mixing 0 and 1, zeros that broadcast x, lossy cast round trips,
        x - y next to y - x."""
        m = self.m
        shape = self.shape_of(x)
        k = self.choose(6)
        if k == 5:
            y = self.operand_like(shape)
            return m.mul(m.sub(x, y), m.sub(y, x))
        if k == 0:
            return m.sub(m.constant(np.zeros(shape, np.float32)), x)
        if k == 1:
            return m.div(m.constant(np.ones(shape, np.float32)), m.add(m.abs(x), 1.0))
        if k == 2:
            mixed = self.rng.integers(0, 2, size=shape).astype(np.float32)
            return m.mul(x, m.constant(mixed)) if self.choose(2) else m.add(m.constant(mixed), x)
        if k == 3:
            wider = (2, *shape)
            return m.add(x, m.constant(np.zeros(wider, np.float32)))
        return m.cast(m.cast(x, ("f16", "bf16")[self.choose(2)]), "f32")

    def param_expr(self, x: SSAValue) -> SSAValue:
        """A value computed from params only, used by the runtime computation (what
        param-hoist moves out)."""
        m = self.m
        shape = self.shape_of(x)
        w = m.mul(self.new_param(shape), self.new_param(shape[len(shape) - 1 :]))
        if self.choose(2):
            w = m.tanh(w)
        return m.add(x, w)


def random_mir_graph(
    seed: int, num_ops: int = 30, *, cleanup: bool = False, concats: bool = False
) -> RandomGraph:
    """A random verified MIR graph with about ``num_ops`` compute steps, its input data and
    its parameter values; ``cleanup`` adds the families aimed at the cleanup passes,
    ``concats`` the concats aimed at the memory planner."""
    g = _Gen(seed)
    for _ in range(int(g.rng.integers(1, 3))):
        g.values.append(g.new_input(g.shape()))
    families = [
        (g.unary, 5), (g.binary, 6), (g.identity, 1), (g.matmul, 2), (g.reshape, 2),
        (g.transpose, 2), (g.reduce, 1), (g.softmax, 1), (g.narrow, 1), (g.concat, 1),
        (g.cast_round_trip, 1), (g.duplicate, 1),
    ]  # fmt: skip
    if cleanup:
        families += [
            (g.int_chain, 2), (g.const_expr, 2), (g.const_select, 2), (g.view_chain, 2),
            (g.near_identity, 2), (g.param_expr, 1),
        ]  # fmt: skip
    if concats:
        families.append((g.embedded_concat, 4))
    weights = np.array([w for _, w in families], dtype=np.float64)
    weights /= weights.sum()
    for _ in range(num_ops):
        family = families[int(g.rng.choice(len(families), p=weights))][0]
        x = g.pick()
        if not g.shape_of(x):  # a full reduction left a scalar
            x = g.m.reshape(x, (1,))
        if math.prod(g.shape_of(x)) > 4096:  # keep tensors small
            x = g.reduce(x)
        g.values.append(family(x))
    n_out = int(g.rng.integers(1, 4))
    outs = [g.values[-1]] + [g.pick() for _ in range(n_out - 1)]
    if g.ints:  # exact i32 results among the outputs
        outs.append(g.ints[-1])
    names = [f"out{i}" for i in range(len(outs))]
    g.m.output(*outs, names=names)
    return RandomGraph(g.m.module, g.inputs, g.params, names)


def outline(module: ModuleOp, seed: int, kind: str = "call") -> ModuleOp:
    """A copy of ``module`` whose main graph runs a random contiguous run of its ops
    through a sub-graph: a ``func.call`` of a new function (``kind="call"``) or a
    ``hir.region`` (``kind="region"``). The values the run reads from earlier ops become
    the sub-graph's arguments and the values read after it its results, so the copy
    computes exactly what ``module`` does -- the input the ``inline`` pass undoes."""
    if kind not in ("call", "region"):
        raise ValueError(f"unknown outline kind '{kind}' (use call or region)")
    rng = np.random.default_rng(seed)
    out = module.clone()
    graph = main_graph(out)
    assert isinstance(graph, func.FuncOp)
    block = graph.body.block
    ops = list(block.ops)[:-1]
    start = int(rng.integers(0, len(ops)))
    stop = int(rng.integers(start + 1, len(ops) + 1))
    run_ops = ops[start:stop]
    inside = {r for op in run_ops for r in op.results}
    args: list[SSAValue] = []
    for op in run_ops:
        for v in op.operands:
            if v not in inside and v not in args:
                args.append(v)
    results = [r for op in run_ops for r in op.results
               if any(u.operation not in run_ops for u in r.uses)]  # fmt: skip
    body = Block(arg_types=[v.type for v in args])
    mapping: dict[SSAValue, SSAValue] = dict(zip(args, body.args, strict=True))
    for op in run_ops:
        body.add_op(op.clone(value_mapper=mapping))
    anchor = run_ops[-1].next_op
    assert anchor is not None
    if kind == "call":
        body.add_op(func.ReturnOp(*(mapping[r] for r in results)))
        name = f"{graph.sym_name.data}_part"
        callee = func.FuncOp(name, ([v.type for v in args], [r.type for r in results]),
                             Region(body))  # fmt: skip
        out.body.block.add_op(callee)
        sub: Operation = func.CallOp(name, args, [r.type for r in results])
    else:
        body.add_op(hir.YieldOp([mapping[r] for r in results]))
        sub = hir.RegionOp(args, Region(body), [r.type for r in results])
    block.insert_op_before(sub, anchor)
    for old, new in zip(results, sub.results, strict=True):
        old.replace_all_uses_with(new)
    for op in reversed(run_ops):
        block.erase_op(op)
    graph.attributes["rlx.main"] = UnitAttr()
    return out
