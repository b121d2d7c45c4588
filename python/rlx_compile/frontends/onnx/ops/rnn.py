"""Recurrent layers: RNN, GRU and LSTM, unrolled over a static sequence length of at most
``UNROLL_MAX_ITERATIONS`` steps; a longer or symbolic one runs each direction as one
``mir.loop`` over the steps (the same step, its projected input gathered at the step).

Every direction runs its own chain of steps. The input projection of all steps is one
matmul ([seq, batch, in] x [in, gates·hidden], both biases added once); each step adds
the recurrent projection of the previous hidden state and applies the gates. A
``sequence_lens`` input (static or fed at run time) masks the steps past each batch
row's length: the state stops changing and Y is zero there, as onnxruntime does (the
reverse direction of a shorter row then starts at its own last step).

onnxruntime's ``com.microsoft.DynamicQuantizeLSTM`` (what ``quantize_dynamic`` makes of
every LSTM) is the LSTM with 8-bit W and R stored transposed ([dirs, in, 4·hidden]); as
onnxruntime computes it, each product quantizes its float operand on the fly (the whole
input sequence once, the hidden state at every step: ``DynamicQuantizeLinear``'s uint8
parameters) and multiplies in integers, dequantized by both scales.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import Dim, DType
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    FoldingBuilder,
    NodeContext,
    Unsupported,
    converter,
)
from rlx_compile.frontends.onnx.ops.control import (
    UNROLL_MAX_ITERATIONS,
    reverse_leading,
    trip_count_of,
)
from rlx_compile.frontends.onnx.ops.elementwise import ACTIVATION_DEFAULTS, activation_fn
from rlx_compile.frontends.onnx.ops.shape import select, stack

Activation = Callable[[SSAValue], SSAValue]

# The activations the recurrent ops take, and how many alpha / beta values each reads.
_PARAMETERS: dict[str, tuple[int, int]] = {
    "Sigmoid": (0, 0),
    "Tanh": (0, 0),
    "Relu": (0, 0),
    "Softsign": (0, 0),
    "Softplus": (0, 0),
    "LeakyRelu": (1, 0),
    "ThresholdedRelu": (1, 0),
    "Elu": (1, 0),
    "HardSigmoid": (1, 1),
    "ScaledTanh": (1, 1),
    "Affine": (1, 1),
}


def _activations(ctx: NodeContext, defaults: list[str], directions: int) -> list[list[Activation]]:
    """The activation functions of each direction (``activations`` lists them direction
    after direction; alpha/beta values are consumed in order by those that take them)."""
    names = ctx.attr("activations", None) or defaults * directions
    if len(names) != len(defaults) * directions:
        raise Unsupported(f"{len(names)} activations for {directions} direction(s)")
    alphas = list(ctx.attr("activation_alpha", []) or [])
    betas = list(ctx.attr("activation_beta", []) or [])
    fns: list[Activation] = []
    for name in names:
        canonical = next((k for k in _PARAMETERS if k.lower() == name.lower()), name)
        if canonical not in _PARAMETERS:
            raise Unsupported(f"activation {name!r}")
        n_alpha, n_beta = _PARAMETERS[canonical]
        alpha, beta = ACTIVATION_DEFAULTS.get(canonical, (0.0, 0.0))
        alpha = alphas.pop(0) if n_alpha and alphas else alpha
        beta = betas.pop(0) if n_beta and betas else beta
        fns.append(activation_fn(ctx.b, canonical, alpha, beta))
    k = len(defaults)
    return [fns[d * k : (d + 1) * k] for d in range(directions)]


@dataclass
class _Layer:
    """The operands of one recurrent node, with the layout normalised to seq-major."""

    x: SSAValue  # [seq, batch, in]
    seq: Dim
    batch: Dim
    hidden: int
    directions: int
    gates: int
    lens: SSAValue | None  # [batch] int
    reverse: bool  # direction="reverse"
    batch_major: bool  # layout=1: X, Y and the states come batch first
    quantized: bool  # DynamicQuantizeLSTM: 8-bit W and R, stored [dirs, k, gates·hidden]


def _layer(ctx: NodeContext, gates: int) -> _Layer:
    b = ctx.b
    layout = ctx.check_attr("layout", (0, 1), 0)
    x = ctx.x(0)
    if type_of(x).rank != 3:
        raise Unsupported("X must have rank 3")
    if layout == 1:
        x = b.transpose(x, [1, 0, 2])
    seq, batch, _ = type_of(x).shape
    w_shape = ctx.shape(1)
    quantized = ctx.op_type == "DynamicQuantizeLSTM"
    hidden = ctx.attr("hidden_size", None)
    if hidden is None:
        gate_rows = w_shape[2 if quantized else 1]
        if not isinstance(gate_rows, int):
            raise Unsupported("hidden_size unknown")
        hidden = gate_rows // gates
    direction = ctx.check_attr("direction", ("forward", "reverse", "bidirectional"), "forward")
    directions = 2 if direction == "bidirectional" else 1
    if w_shape[0] != directions:
        raise Unsupported(f"W has {w_shape[0]} direction(s), direction={direction!r}")
    lens = ctx.opt(4)
    return _Layer(
        x,
        seq,
        batch,
        int(hidden),
        directions,
        gates,
        lens,
        direction == "reverse",
        layout == 1,
        quantized,
    )


def _direction(
    ctx: NodeContext, layer: _Layer, i: int, d: int, shape: Sequence[Dim]
) -> SSAValue | None:
    """Direction ``d`` of the per-direction operand ``i`` (W, R, B, initial states, P),
    reshaped to ``shape``. The initial states are [batch, directions, hidden] in the
    batch-major layout."""
    v = ctx.opt(i)
    if v is None:
        return None
    axis = 1 if i in (5, 6) and layer.batch_major else 0
    v = select(ctx, v, axis, d)
    if i in (5, 6) and type_of(v).rank == len(shape) and type_of(v).shape != tuple(shape):
        # A state fed apart from X has a batch of its own name (silero-vad's state:1 and
        # input:0): the same size where the model runs, which the executor checks.
        return ctx.b.expand(v, shape)
    return ctx.b.reshape(v, shape)


def _initial_state(ctx: NodeContext, layer: _Layer, i: int, d: int) -> SSAValue:
    """Initial hidden (i = 5) or cell (i = 6) state of direction d; zeros if not given."""
    shape: list[Dim] = [layer.batch, layer.hidden]
    state = _direction(ctx, layer, i, d, shape)
    return state if state is not None else ctx.full(shape, 0.0, type_of(layer.x).dtype)


def _time_steps(layer: _Layer, d: int) -> list[int]:
    forward, seq = d == 0 and not layer.reverse, int(layer.seq)
    return list(range(seq)) if forward else list(range(seq - 1, -1, -1))


def _mask(ctx: NodeContext, layer: _Layer, t: int | SSAValue) -> SSAValue | None:
    """[batch, 1] bool: rows still inside their sequence at step t (a run-time step in a
    loop)."""
    if layer.lens is None:
        return None
    b = ctx.b
    dtype = type_of(layer.lens).dtype
    if isinstance(t, SSAValue):
        step = t if type_of(t).dtype is dtype else b.cast(t, dtype)
    else:
        step = b.constant(np.array(t), dtype, ())
    return b.reshape(b.compare("lt", step, layer.lens), [layer.batch, 1])


StepFn = Callable[[SSAValue, list[SSAValue]], list[SSAValue]]


def _unroll(
    ctx: NodeContext,
    layer: _Layer,
    states: int,
    make_step: Callable[[int], tuple[list[SSAValue], StepFn]],
) -> ConverterResult:
    """Run every direction; ``make_step(d)`` gives the initial states (hidden first) and
    the step function (projected input of the step, states) -> new states."""
    b = ctx.b
    ys: list[SSAValue] = []
    finals: list[list[SSAValue]] = [[] for _ in range(states)]
    unrolled = isinstance(layer.seq, int) and layer.seq <= UNROLL_MAX_ITERATIONS
    for d in range(layer.directions):
        state, step = make_step(d)
        projected = _input_projection(ctx, layer, d)

        advance = _Advance(ctx, layer, projected, step)
        if unrolled:
            outputs: dict[int, SSAValue] = {}
            for t in _time_steps(layer, d):
                state, outputs[t] = advance(t, state)
            y = stack(ctx, [outputs[t] for t in range(int(layer.seq))], 0)
        else:
            state, y = _loop_direction(ctx, layer, d, state, advance)
        ys.append(y)  # [seq, batch, hidden]
        for k in range(states):
            finals[k].append(state[k])
    results: list[SSAValue | None] = [None] * (1 + states)
    if ctx.output_used(0):
        y = stack(ctx, ys, 1)  # [seq, dirs, batch, hidden]
        results[0] = b.transpose(y, [2, 0, 1, 3]) if layer.batch_major else y
    for k in range(states):
        if ctx.output_used(1 + k):
            f = stack(ctx, finals[k], 0)  # [dirs, batch, hidden]
            results[1 + k] = b.transpose(f, [1, 0, 2]) if layer.batch_major else f
    return results


@dataclass
class _Advance:
    """One step of a direction: the new states and the step's output (zero past a row's
    end), at a static step (unrolled) or a run-time one (in a loop)."""

    ctx: NodeContext
    layer: _Layer
    projected: SSAValue  # [seq, batch, gates·hidden]
    step: StepFn

    def __call__(self, t: int | SSAValue, state: list[SSAValue]) -> tuple[list[SSAValue], SSAValue]:
        b = self.ctx.b
        if isinstance(t, int):
            xt = select(self.ctx, self.projected, 0, t)
        else:
            xt = b.gather(self.projected, t, 0)
        new = self.step(xt, state)
        mask = _mask(self.ctx, self.layer, t)
        if mask is None:
            return new, new[0]
        new = [b.where(mask, n, s) for n, s in zip(new, state, strict=True)]
        return new, b.where(mask, new[0], 0.0)


def _loop_direction(
    ctx: NodeContext, layer: _Layer, d: int, state: list[SSAValue], advance: _Advance
) -> tuple[list[SSAValue], SSAValue]:
    """Direction ``d`` as one ``mir.loop`` over the steps (backwards for a reverse
    direction): the final states and the outputs in time order."""
    b = ctx.b
    trips = trip_count_of(ctx, layer.seq)
    forward = d == 0 and not layer.reverse

    def body(
        i: SSAValue, cond: SSAValue, carried: list[SSAValue]
    ) -> tuple[SSAValue, list[SSAValue], list[SSAValue]]:
        t = i if forward else b.sub(b.sub(trips, 1), i)
        new, y = advance(t, carried)
        return cond, new, [y]

    finals, (y,) = b.loop(trips, None, state, body, scan_length=layer.seq)
    return finals, y if forward else reverse_leading(ctx, y, trips)


def _input_projection(ctx: NodeContext, layer: _Layer, d: int) -> SSAValue:
    """X·Wᵀ + Wb + Rb for every step of direction d: [seq, batch, gates·hidden]. (GRU's
    candidate gate keeps Rb apart when linear_before_reset; see ``_gru``.)"""
    b = ctx.b
    gh = layer.gates * layer.hidden
    if layer.quantized:
        projected = _quantized_product(ctx, 1, d, by_row=False)(layer.x)
    else:
        w = _direction(ctx, layer, 1, d, [gh, -1])
        assert w is not None
        projected = b.matmul(layer.x, b.transpose(w, [1, 0]))
    bias = _direction(ctx, layer, 3, d, [2, gh])
    if bias is not None:
        wb = b.reshape(b.narrow(bias, 0, 0, 1), [gh])
        rb = b.reshape(b.narrow(bias, 0, 1, 1), [gh])
        if ctx.op_type == "GRU" and ctx.attr("linear_before_reset", 0):
            # The candidate's recurrent bias goes inside the reset gate's product.
            keep = np.ones(gh, dtype=type_of(rb).dtype.numpy)
            keep[2 * layer.hidden :] = 0
            rb = b.mul(rb, b.constant(keep, type_of(rb).dtype, (gh,)))
        projected = b.add(projected, b.add(wb, rb))
    return projected


def _gate(b: FoldingBuilder, v: SSAValue, k: int, hidden: int) -> SSAValue:
    return b.narrow(v, 1, k * hidden, hidden)


def _clip(ctx: NodeContext) -> Callable[[SSAValue], SSAValue]:
    clip = ctx.attr("clip", None)
    if clip is None:
        return lambda v: v
    return lambda v: ctx.b.minimum(ctx.b.maximum(v, -float(clip)), float(clip))


def _recurrent(ctx: NodeContext, layer: _Layer, d: int) -> tuple[SSAValue, SSAValue]:
    """Rᵀ of direction d ([hidden, gates·hidden]) and the initial hidden state."""
    b = ctx.b
    r = _direction(ctx, layer, 2, d, [layer.gates * layer.hidden, layer.hidden])
    assert r is not None
    return b.transpose(r, [1, 0]), _initial_state(ctx, layer, 5, d)


def _quantized_product(
    ctx: NodeContext, i: int, d: int, by_row: bool
) -> Callable[[SSAValue], SSAValue]:
    """v -> v · M for DynamicQuantizeLSTM's 8-bit W (i = 1) or R (i = 2) of direction d
    ([k, gates·hidden]; its scale and zero point are inputs 8 + 2·(i - 1) and the next,
    per direction or per direction and column), as onnxruntime computes it: v quantized
    to uint8 by its own range (``DynamicQuantizeLinear``'s parameters), the integer
    product, both scales. The input sequence is quantized as one tensor; the hidden
    state ``by_row``, each batch row by its own range: onnxruntime quantizes the rows
    each of its threads runs together, one row apiece when it has a thread per row (and
    always at batch 1) -- the batch-independent choice."""
    b = ctx.b
    m = b.cast(select(ctx, ctx.x(i), 0, d), DType.I32)
    scale = select(ctx, ctx.x(8 + 2 * (i - 1)), 0, d)
    zp = ctx.opt(9 + 2 * (i - 1))
    if zp is not None:
        m = b.sub(m, b.cast(select(ctx, zp, 0, d), DType.I32))

    def product(v: SSAValue) -> SSAValue:
        axes = [type_of(v).rank - 1] if by_row else None
        hi = b.maximum(b.reduce("max", v, axes, keepdims=by_row), 0.0)
        lo = b.minimum(b.reduce("min", v, axes, keepdims=by_row), 0.0)
        v_scale = b.div(b.sub(hi, lo), 255.0)
        # An all-zero operand has scale 0: any step gives its zero product.
        step = b.where(b.compare("eq", v_scale, 0.0), 1.0, v_scale)
        v_zp = b.minimum(b.maximum(b.unary(mir.RoundOp, b.div(b.neg(lo), step)), 0.0), 255.0)
        q = b.add(b.unary(mir.RoundOp, b.div(v, step)), v_zp)
        q = b.sub(b.minimum(b.maximum(q, 0.0), 255.0), v_zp)
        acc = b.matmul(b.cast(q, DType.I32), m)
        return b.mul(b.cast(acc, type_of(v).dtype), b.mul(v_scale, scale))

    return product


def _check_dtype(ctx: NodeContext) -> None:
    if not ctx.type(0).dtype.is_float:
        raise Unsupported(f"element type {ctx.type(0).dtype.value}")
    if ctx.has(4) and ctx.type(4).dtype not in (DType.I32, DType.I64):
        raise Unsupported("sequence_lens must be int32")


@converter("RNN")
def rnn(ctx: NodeContext) -> ConverterResult:
    _check_dtype(ctx)
    layer = _layer(ctx, 1)
    acts = _activations(ctx, ["Tanh"], layer.directions)
    clip, b = _clip(ctx), ctx.b

    def make_step(d: int) -> tuple[list[SSAValue], StepFn]:
        rt, h0 = _recurrent(ctx, layer, d)
        (f,) = acts[d]

        def step(xt: SSAValue, state: list[SSAValue]) -> list[SSAValue]:
            return [f(clip(b.add(xt, b.matmul(state[0], rt))))]

        return [h0], step

    return _unroll(ctx, layer, 1, make_step)


@converter("GRU")
def gru(ctx: NodeContext) -> ConverterResult:
    _check_dtype(ctx)
    layer = _layer(ctx, 3)
    acts = _activations(ctx, ["Sigmoid", "Tanh"], layer.directions)
    linear_before_reset = bool(ctx.attr("linear_before_reset", 0))
    clip, b, h = _clip(ctx), ctx.b, layer.hidden

    def make_step(d: int) -> tuple[list[SSAValue], StepFn]:
        rt, h0 = _recurrent(ctx, layer, d)
        f, g = acts[d]
        rb_h = None
        bias = _direction(ctx, layer, 3, d, [6, h])
        if bias is not None and linear_before_reset:
            rb_h = b.reshape(b.narrow(bias, 0, 5, 1), [h])
        r_zr, r_h = b.narrow(rt, 1, 0, 2 * h), b.narrow(rt, 1, 2 * h, h)

        def step(xt: SSAValue, state: list[SSAValue]) -> list[SSAValue]:
            (prev,) = state
            zr = b.add(b.narrow(xt, 1, 0, 2 * h), b.matmul(prev, r_zr))
            z, r = f(clip(_gate(b, zr, 0, h))), f(clip(_gate(b, zr, 1, h)))
            xh = _gate(b, xt, 2, h)
            if linear_before_reset:
                hr = b.matmul(prev, r_h)
                if rb_h is not None:
                    hr = b.add(hr, rb_h)
                cand = g(clip(b.add(xh, b.mul(r, hr))))
            else:
                cand = g(clip(b.add(xh, b.matmul(b.mul(r, prev), r_h))))
            # (1 - z)·h~ + z·H, in the reference's order.
            return [b.add(b.mul(b.sub(1.0, z), cand), b.mul(z, prev))]

        return [h0], step

    return _unroll(ctx, layer, 1, make_step)


@converter("LSTM")
@converter("DynamicQuantizeLSTM", domain="com.microsoft")
def lstm(ctx: NodeContext) -> ConverterResult:
    _check_dtype(ctx)
    if ctx.attr("input_forget", 0):
        raise Unsupported("input_forget=1")
    layer = _layer(ctx, 4)
    acts = _activations(ctx, ["Sigmoid", "Tanh", "Tanh"], layer.directions)
    clip, b, h = _clip(ctx), ctx.b, layer.hidden

    def make_step(d: int) -> tuple[list[SSAValue], StepFn]:
        if layer.quantized:
            recurrent = _quantized_product(ctx, 2, d, by_row=True)
            h0 = _initial_state(ctx, layer, 5, d)
        else:
            rt, h0 = _recurrent(ctx, layer, d)
            recurrent = lambda v: b.matmul(v, rt)  # noqa: E731
        c0 = _initial_state(ctx, layer, 6, d)
        peep = _direction(ctx, layer, 7, d, [3 * h])
        p_i, p_o, p_f = (None, None, None) if peep is None else (
            b.narrow(peep, 0, k * h, h) for k in range(3)
        )  # fmt: skip
        f, g, hact = acts[d]

        def with_peephole(v: SSAValue, p: SSAValue | None, c: SSAValue) -> SSAValue:
            return v if p is None else b.add(v, b.mul(p, c))

        def step(xt: SSAValue, state: list[SSAValue]) -> list[SSAValue]:
            prev_h, prev_c = state
            gates = b.add(xt, recurrent(prev_h))  # gate order i, o, f, c
            i = f(clip(with_peephole(_gate(b, gates, 0, h), p_i, prev_c)))
            fg = f(clip(with_peephole(_gate(b, gates, 2, h), p_f, prev_c)))
            c_tilde = g(clip(_gate(b, gates, 3, h)))
            c = b.add(b.mul(fg, prev_c), b.mul(i, c_tilde))
            o = f(clip(with_peephole(_gate(b, gates, 1, h), p_o, c)))
            return [b.mul(o, hact(c)), c]

        return [h0, c0], step

    return _unroll(ctx, layer, 2, make_step)
