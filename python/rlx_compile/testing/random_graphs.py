"""Random, valid MIR graphs for property tests and benchmarks.

``random_mir_graph(seed, num_ops)`` builds a graph that mixes elementwise ops (with
broadcasting), matmuls, reshapes, transposes, narrows, concats, reductions, softmax,
compare/where and casts, over inputs, params and constants — plus dead values, repeated
subexpressions and algebraic identities (x·1, x+0, double negation) so that cleanup
passes have something to do. Values stay bounded (no overflow to inf, no NaN), so
"before" and "after" executions can be compared with a tight tolerance.
Everything derives from ``seed``: the same seed gives the same graph and data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from rlx_compile.builder import ModuleBuilder, type_of

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
        self.inputs: dict[str, np.ndarray] = {}
        self.params: dict[str, np.ndarray] = {}

    # -- sources ---------------------------------------------------------------------
    def shape(self, rank: int | None = None) -> tuple[int, ...]:
        r = int(self.rng.integers(1, 4)) if rank is None else rank
        return tuple(int(self.rng.choice(_DIMS)) for _ in range(r))

    def data(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.rng.uniform(-2, 2, size=shape).astype(np.float32)

    def new_input(self, shape: tuple[int, ...]) -> SSAValue:
        name = f"x{len(self.inputs)}"
        self.inputs[name] = self.data(shape)
        return self.m.input(name, shape)

    def new_param(self, shape: tuple[int, ...]) -> SSAValue:
        name = f"p{len(self.params)}"
        self.params[name] = self.data(shape)
        return self.m.param(name, shape)

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


def random_mir_graph(seed: int, num_ops: int = 30) -> RandomGraph:
    """A random verified MIR graph with about ``num_ops`` compute steps, its input data and
    its parameter values."""
    g = _Gen(seed)
    for _ in range(int(g.rng.integers(1, 3))):
        g.values.append(g.new_input(g.shape()))
    families = [
        (g.unary, 5), (g.binary, 6), (g.identity, 1), (g.matmul, 2), (g.reshape, 2),
        (g.transpose, 2), (g.reduce, 1), (g.softmax, 1), (g.narrow, 1), (g.concat, 1),
        (g.cast_round_trip, 1), (g.duplicate, 1),
    ]  # fmt: skip
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
    names = [f"out{i}" for i in range(len(outs))]
    g.m.output(*outs, names=names)
    return RandomGraph(g.m.module, g.inputs, g.params, names)
