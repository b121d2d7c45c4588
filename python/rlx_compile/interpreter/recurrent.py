"""The recurrent layers (``mir.rnn``, ``mir.gru``, ``mir.lstm``), written once over a small
op vocabulary (``interpreter.eager.Ops``: a part of ``GraphBuilder``'s methods) that two
parties provide:

- ``Eager``, which runs each op at once on arrays with the reference kernel of the MIR op
  that ``GraphBuilder`` method emits: the layer's reference kernel;
- a ``GraphBuilder``, which emits the ops: the layer's lowering to steps, for targets
  that do not claim it (``legalization.patterns.LowerRecurrent``: unrolled over a static
  sequence of at most ``UNROLL_MAX_ITERATIONS`` steps, a longer or symbolic one running
  the same step in a ``mir.loop``).

So the lowering computes the reference's numbers bit for bit. The step formulas are the
op docstrings' (``dialects.mir.RecurrentOp`` and its subclasses), in ONNX's order of
operations; the numbers of the dynamically quantized LSTM are onnxruntime's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, cast

import numpy as np

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import RecurrentActivation
from rlx_compile.dialects.dim_expr import Dim
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter.eager import Array, Eager, Ops, V, dtype_of, shape_of

# ---------------------------------------------------------------------------------
# Gate functions
# ---------------------------------------------------------------------------------


def activation(
    ops: Ops[V], kind: RecurrentActivation, alpha: float, beta: float
) -> Callable[[V], V]:
    """A recurrent activation (also what ONNX's activation ops of these names are)."""
    match kind:
        case RecurrentActivation.SIGMOID:
            return ops.sigmoid
        case RecurrentActivation.TANH:
            return ops.tanh
        case RecurrentActivation.RELU:
            return ops.relu
        case RecurrentActivation.SOFTPLUS:
            return ops.softplus
        case RecurrentActivation.SOFTSIGN:
            return ops.softsign
        case RecurrentActivation.LEAKY_RELU:
            return lambda x: ops.leaky_relu(x, alpha)
        case RecurrentActivation.THRESHOLDED_RELU:
            return lambda x: ops.thresholded_relu(x, alpha)
        case RecurrentActivation.ELU:
            return lambda x: ops.elu(x, alpha)
        case RecurrentActivation.HARD_SIGMOID:
            return lambda x: ops.hard_sigmoid(x, alpha, beta)
        case RecurrentActivation.SCALED_TANH:
            return lambda x: ops.mul(ops.tanh(ops.mul(x, beta)), alpha)
        case RecurrentActivation.AFFINE:
            return lambda x: ops.add(ops.mul(x, alpha), beta)


def quantized_product(
    ops: Ops[V], v: V, m: V, m_scale: V, dtype: DType, by_row: bool
) -> Callable[[], V]:
    """v · m for an int32 ``m`` (the 8-bit weight less its zero point; ``m_scale`` its
    scale, [] or per column) as onnxruntime's DynamicQuantizeLSTM computes it: v quantized
    to u8 by its own range (DynamicQuantizeLinear's parameters; each row by its own with
    ``by_row``: onnxruntime quantizes the hidden rows each of its threads runs together,
    one row apiece when it has a thread per row -- the batch-independent choice), the
    integer product, both scales."""

    def product() -> V:
        axes = [len(shape_of(v)) - 1] if by_row else None
        hi = ops.maximum(ops.reduce("max", v, axes, keepdims=by_row), 0.0)
        lo = ops.minimum(ops.reduce("min", v, axes, keepdims=by_row), 0.0)
        v_scale = ops.div(ops.sub(hi, lo), 255.0)
        # An all-zero operand has scale 0: any step gives its zero product.
        step = ops.where(ops.compare("eq", v_scale, 0.0), 1.0, v_scale)
        v_zp = ops.minimum(ops.maximum(ops.round(ops.div(ops.neg(lo), step)), 0.0), 255.0)
        q = ops.add(ops.round(ops.div(v, step)), v_zp)
        q = ops.sub(ops.minimum(ops.maximum(q, 0.0), 255.0), v_zp)
        acc = ops.matmul(ops.cast(q, DType.I32), m)
        return ops.mul(ops.cast(acc, dtype), ops.mul(v_scale, m_scale))

    return product


# ---------------------------------------------------------------------------------
# One direction
# ---------------------------------------------------------------------------------


Step = Callable[[V, list[V]], list[V]]
"""(the step's projected input [batch, G·H], the states) -> the new states."""


@dataclass
class Direction(Generic[V]):
    """One direction of a layer, ready to run."""

    backwards: bool
    projected: V
    """P = X·Wᵀ + biases for every step, time-major: [seq, batch, G·H]."""
    initial: list[V]
    step: Step[V]


class Layer(Generic[V]):
    """A recurrent op's operands (values or arrays) and what its properties say."""

    def __init__(self, op: mir.RecurrentOp, operands: dict[str, V | None], ops: Ops[V]):
        self.op = op
        self.operands = operands
        self.ops = ops
        self.dtype = type_of(op.operands[0]).dtype
        self.batch_first = op.props().flag("batch_first")
        self.state_offset = op.props().opt_int("state_offset") or 0
        """The first row of the initial states' stacks this layer reads."""
        self.hidden = op.hidden_size()
        x = operands["input"]
        assert x is not None
        self.x = ops.transpose(x, [1, 0, 2]) if self.batch_first else x
        """The input, time-major: [seq, batch, in]."""
        self.seq, self.batch, _ = shape_of(self.x)

    def select(self, name: str, d: int, axis: int = 0) -> V | None:
        """Direction ``d`` of a per-direction operand, the direction axis dropped."""
        v = self.operands.get(name)
        if v is None:
            return None
        return select(self.ops, v, axis, d)

    def state(self, name: str, d: int) -> V:
        """The initial state ``name`` of direction d: [batch, H] (zeros when absent)."""
        state = self.select(name, self.state_offset + d, 1 if self.batch_first else 0)
        if state is not None:
            return state
        if isinstance(self.batch, int):
            return self.ops.constant(np.zeros((self.batch, self.hidden)), self.dtype)
        zero = self.ops.constant(0.0, self.dtype, ())
        return self.ops.expand(zero, [self.batch, self.hidden])

    def clip(self) -> Callable[[V], V]:
        c = self.op.props().opt_float("clip")
        if c is None:
            return lambda v: v
        return lambda v: self.ops.minimum(self.ops.maximum(v, -c), c)

    def product(self, name: str, d: int, by_row: bool) -> Callable[[V], V]:
        """v -> v · M[d]ᵀ for the weight (``name``: W or R) of direction d."""
        ops = self.ops
        m = self.select(name, d)
        assert m is not None
        if self.operands.get(f"{name}_scale") is None:
            mt = ops.transpose(m, [1, 0])
            return lambda v: ops.matmul(v, mt)
        m = ops.cast(m, DType.I32)
        zero_point = self.select(f"{name}_zero_point", d)
        if zero_point is not None:
            zp = ops.cast(zero_point, DType.I32)
            per_row = shape_of(zp)
            m = ops.sub(m, ops.reshape(zp, [*per_row, 1]) if per_row else zp)
        mt = ops.transpose(m, [1, 0])
        scale = self.select(f"{name}_scale", d)
        assert scale is not None
        return lambda v: quantized_product(ops, v, mt, scale, self.dtype, by_row)()

    def projection(self, d: int) -> V:
        """X·W[d]ᵀ + (Wb[d] + Rb[d]) for every step (a GRU that resets before its linear
        step keeps Rb's h block for the step)."""
        ops = self.ops
        projected = self.product("weight", d, by_row=False)(self.x)
        bias = self.select("bias", d)
        if bias is None:
            return projected
        rows = self.op.GATES * self.hidden
        wb, rb = ops.narrow(bias, 0, 0, rows), ops.narrow(bias, 0, rows, rows)
        if isinstance(self.op, mir.GruOp) and self.op.props().flag("linear_before_reset"):
            zr = 2 * self.hidden
            both = ops.add(ops.narrow(wb, 0, 0, zr), ops.narrow(rb, 0, 0, zr))
            total = ops.concat([both, ops.narrow(wb, 0, zr, rows - zr)], 0)
        else:
            total = ops.add(wb, rb)
        return ops.add(projected, total)

    def directions(self) -> list[Direction[V]]:
        make = {mir.RnnOp: rnn_step, mir.GruOp: gru_step, mir.LstmOp: lstm_step}[type(self.op)]
        acts = self.op.gate_activations()
        out = []
        for d, backwards in enumerate(self.op.backwards()):
            fns = [activation(self.ops, kind, a, b) for kind, a, b in acts[d]]
            initial, step = make(self, d, fns)
            out.append(Direction(backwards, self.projection(d), initial, step))
        return out

    def advance(
        self, step: Step[V], xt: V, states: list[V], t: V | int, output: bool = True
    ) -> tuple[list[V], V | None]:
        """One step at ``t`` (a number, or a run-time index): the new states and (if
        ``output``) the step's output; past a row's length, the states as they were and
        0."""
        ops = self.ops
        new = step(xt, states)
        lens = self.operands.get("sequence_lens")
        if lens is None:
            return new, new[0] if output else None
        lens_dtype = dtype_of(lens)
        if isinstance(t, int):
            at = ops.constant(t, lens_dtype, ())
        else:
            at = t if dtype_of(t) is lens_dtype else ops.cast(t, lens_dtype)
        mask = ops.reshape(ops.compare("lt", at, lens), [self.batch, 1])
        new = [ops.where(mask, n, s) for n, s in zip(new, states, strict=True)]
        return new, ops.where(mask, new[0], 0.0) if output else None

    def results(self, ys: list[V], finals: list[list[V]], wanted: Sequence[bool]) -> list[V | None]:
        """The op's results (those ``wanted``) from each direction's outputs ([seq,
        batch, H]) and final states ([batch, H])."""
        ops = self.ops
        out: list[V | None] = [None] * len(wanted)
        if wanted[0]:
            y = stack(ops, ys, 1)  # [seq, dirs, batch, H]
            out[0] = ops.transpose(y, [2, 0, 1, 3]) if self.batch_first else y
        for k, states in enumerate(finals, 1):
            if wanted[k]:
                f = stack(ops, states, 0)  # [dirs, batch, H]
                out[k] = ops.transpose(f, [1, 0, 2]) if self.batch_first else f
        return out


def select(ops: Ops[V], v: V, axis: int, index: int | Dim) -> V:
    """``v[..., index, ...]`` along ``axis``, the axis dropped."""
    shape = list(shape_of(v))
    size = shape.pop(axis)
    return ops.reshape(v if size == 1 else ops.narrow(v, axis, index, 1), shape)


def stack(ops: Ops[V], pieces: Sequence[V], axis: int) -> V:
    """Values of one shape stacked along a new ``axis``."""
    shape = list(shape_of(pieces[0]))
    lifted = [ops.reshape(p, [*shape[:axis], 1, *shape[axis:]]) for p in pieces]
    return ops.concat(lifted, axis) if len(lifted) > 1 else lifted[0]


def run_unrolled(layer: Layer[V], seq: int, wanted: Sequence[bool]) -> list[V | None]:
    """The layer step by step over ``seq`` static steps: its ``wanted`` results."""
    ys: list[V] = []
    finals: list[list[V]] = [[] for _ in range(layer.op.STATES)]
    for d in layer.directions():
        states = d.initial
        outputs: dict[int, V | None] = {}
        for t in range(seq - 1, -1, -1) if d.backwards else range(seq):
            xt = select(layer.ops, d.projected, 0, t)
            states, outputs[t] = layer.advance(d.step, xt, states, t, wanted[0])
        if wanted[0]:
            ys.append(stack(layer.ops, [cast(V, outputs[t]) for t in range(seq)], 0))
        for k, s in enumerate(states):
            finals[k].append(s)
    return layer.results(ys, finals, wanted)


# ---------------------------------------------------------------------------------
# The cells
# ---------------------------------------------------------------------------------


def rnn_step(layer: Layer[V], d: int, acts: list[Callable[[V], V]]) -> tuple[list[V], Step[V]]:
    ops, clip = layer.ops, layer.clip()
    recurrent = layer.product("recurrence", d, by_row=True)
    (f,) = acts

    def step(xt: V, states: list[V]) -> list[V]:
        return [f(clip(ops.add(xt, recurrent(states[0]))))]

    return [layer.state("initial_h", d)], step


def gru_step(layer: Layer[V], d: int, acts: list[Callable[[V], V]]) -> tuple[list[V], Step[V]]:
    ops, clip, h = layer.ops, layer.clip(), layer.hidden
    f, g = acts
    r = layer.select("recurrence", d)
    assert r is not None
    rt = ops.transpose(r, [1, 0])
    r_zr, r_h = ops.narrow(rt, 1, 0, 2 * h), ops.narrow(rt, 1, 2 * h, h)
    linear_before_reset = layer.op.props().flag("linear_before_reset")
    bias = layer.select("bias", d)
    rb_h = None if bias is None or not linear_before_reset else ops.narrow(bias, 0, 5 * h, h)

    def step(xt: V, states: list[V]) -> list[V]:
        (prev,) = states
        zr = ops.add(ops.narrow(xt, 1, 0, 2 * h), ops.matmul(prev, r_zr))
        z, r = f(clip(ops.narrow(zr, 1, 0, h))), f(clip(ops.narrow(zr, 1, h, h)))
        xh = ops.narrow(xt, 1, 2 * h, h)
        if linear_before_reset:
            hr = ops.matmul(prev, r_h)
            if rb_h is not None:
                hr = ops.add(hr, rb_h)
            cand = g(clip(ops.add(xh, ops.mul(r, hr))))
        else:
            cand = g(clip(ops.add(xh, ops.matmul(ops.mul(r, prev), r_h))))
        return [ops.add(ops.mul(ops.sub(1.0, z), cand), ops.mul(z, prev))]

    return [layer.state("initial_h", d)], step


def lstm_step(layer: Layer[V], d: int, acts: list[Callable[[V], V]]) -> tuple[list[V], Step[V]]:
    ops, clip, h = layer.ops, layer.clip(), layer.hidden
    f, g, hact = acts
    recurrent = layer.product("recurrence", d, by_row=True)
    peep = layer.select("peepholes", d)
    p_i, p_o, p_f = (None, None, None) if peep is None else (
        ops.narrow(peep, 0, k * h, h) for k in range(3)
    )  # fmt: skip
    input_forget = layer.op.props().flag("input_forget")

    def with_peephole(v: V, p: V | None, c: V) -> V:
        return v if p is None else ops.add(v, ops.mul(p, c))

    def step(xt: V, states: list[V]) -> list[V]:
        prev_h, prev_c = states
        gates = ops.add(xt, recurrent(prev_h))  # gate blocks i, o, f, c

        def gate(k: int) -> V:
            return ops.narrow(gates, 1, k * h, h)

        i = f(clip(with_peephole(gate(0), p_i, prev_c)))
        forget = ops.sub(1.0, i) if input_forget else f(clip(with_peephole(gate(2), p_f, prev_c)))
        c = ops.add(ops.mul(forget, prev_c), ops.mul(i, g(clip(gate(3)))))
        o = f(clip(with_peephole(gate(1), p_o, c)))
        return [ops.mul(o, hact(c)), c]

    return [layer.state("initial_h", d), layer.state("initial_c", d)], step


# ---------------------------------------------------------------------------------
# The reference kernel
# ---------------------------------------------------------------------------------


def operands_by_name(op: mir.RecurrentOp, values: Sequence[V]) -> dict[str, V | None]:
    """The op's operands by name (absent optional ones None) from its operand values in
    order."""
    it = iter(values)
    names = [name for name, _ in type(op).get_irdl_definition().operands]
    return {name: None if getattr(op, name) is None else next(it) for name in names}


def reference(op: mir.RecurrentOp, args: list[Array]) -> list[Array]:
    layer = Layer(op, operands_by_name(op, args), Eager())
    results = run_unrolled(layer, int(layer.seq), [True] * len(op.results))
    return [r for r in results if r is not None]
