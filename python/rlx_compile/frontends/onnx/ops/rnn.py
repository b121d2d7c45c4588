"""Recurrent layers: RNN, GRU and LSTM, each one ``mir.rnn`` / ``mir.gru`` / ``mir.lstm``
(whole layers, as onnxruntime runs them; ``legalize`` lowers them to their steps for
targets that do not claim them).

onnxruntime's ``com.microsoft.DynamicQuantizeLSTM`` (what ``quantize_dynamic`` makes of
every LSTM) is the LSTM with 8-bit W and R stored transposed ([dirs, in, 4·hidden]):
``mir.lstm`` with its weights transposed back and their scales and zero points, which
computes each product as onnxruntime does (the op's docstring).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import Dim, DType
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    converter,
)
from rlx_compile.frontends.onnx.ops.elementwise import (
    ACTIVATION_DEFAULTS,
    RECURRENT_ACTIVATIONS,
)


def _activations(
    ctx: NodeContext, op_type: type[mir.RecurrentOp], directions: int
) -> dict[str, object]:
    """The ``activations`` properties: none for the op's default ones, else every
    direction's activations in turn with one alpha and beta apiece (``activation_alpha``
    and ``activation_beta`` list only the values of those that read them, in order)."""
    names = ctx.attr("activations", None)
    alphas = list(ctx.attr("activation_alpha", []) or [])
    betas = list(ctx.attr("activation_beta", []) or [])
    if names is None:
        return {}
    per = len(op_type.DEFAULT_ACTIVATIONS)
    if len(names) != per * directions:
        raise Unsupported(f"{len(names)} activations for {directions} direction(s)")
    kinds: list[str] = []
    alpha: list[float] = []
    beta: list[float] = []
    for name in names:
        canonical = next((k for k in RECURRENT_ACTIVATIONS if k.lower() == name.lower()), None)
        if canonical is None:
            raise Unsupported(f"activation {name!r}")
        kind, n_alpha, n_beta = RECURRENT_ACTIVATIONS[canonical]
        a, b = ACTIVATION_DEFAULTS.get(canonical, (0.0, 0.0))
        alpha.append(alphas.pop(0) if n_alpha and alphas else a)
        beta.append(betas.pop(0) if n_beta and betas else b)
        kinds.append(kind.value)
    if kinds == [a.value for a in op_type.DEFAULT_ACTIVATIONS] * directions:
        return {}
    return {"activations": kinds, "activation_alpha": alpha, "activation_beta": beta}


def _state(ctx: NodeContext, i: int, like: tuple[Dim, ...]) -> SSAValue | None:
    """Initial state ``i``; one fed apart from X with a batch of its own name (silero-vad's
    state:1 and input:0), expanded to X's batch: the same size where the model runs,
    which the executor checks."""
    v = ctx.opt(i)
    if v is not None and type_of(v).shape != like:
        v = ctx.b.expand(v, list(like))
    return v


def _layer(ctx: NodeContext, op_type: type[mir.RecurrentOp]) -> ConverterResult:
    if not ctx.type(0).dtype.is_float:
        raise Unsupported(f"element type {ctx.type(0).dtype.value}")
    if ctx.has(4) and ctx.type(4).dtype not in (DType.I32, DType.I64):
        raise Unsupported("sequence_lens must be int32")
    batch_first = ctx.check_attr("layout", (0, 1), 0) == 1
    direction = ctx.check_attr("direction", ("forward", "reverse", "bidirectional"), "forward")
    directions = 2 if direction == "bidirectional" else 1
    x, w, r = ctx.x(0), ctx.x(1), ctx.x(2)
    quantized = ctx.op_type == "DynamicQuantizeLSTM"
    if quantized:  # [dirs, k, 4·hidden] -> [dirs, 4·hidden, k]
        w, r = ctx.b.transpose(w, [0, 2, 1]), ctx.b.transpose(r, [0, 2, 1])
    hidden = type_of(r).shape[2] if type_of(r).rank == 3 else None
    if ctx.attr("hidden_size", hidden) != hidden:
        raise Unsupported(f"hidden_size {ctx.attr('hidden_size')} differs from R's {hidden}")
    state: tuple[Dim, ...] = ()  # (a malformed X: the op's verifier names the problem)
    if type_of(x).rank == 3:
        batch = type_of(x).shape[0 if batch_first else 1]
        state = (batch, directions, hidden) if batch_first else (directions, batch, hidden)
    kwargs: dict[str, object] = {
        "bias": ctx.opt(3),
        "sequence_lens": ctx.opt(4),
        "initial_h": _state(ctx, 5, state),
        "direction": direction,
        "clip": ctx.attr("clip", None),
        "batch_first": batch_first,
        **_activations(ctx, op_type, directions),
    }
    if op_type is mir.GruOp:
        kwargs["linear_before_reset"] = bool(ctx.attr("linear_before_reset", 0))
    if op_type is mir.LstmOp:
        kwargs["initial_c"] = _state(ctx, 6, state)
        kwargs["peepholes"] = ctx.opt(7)
        kwargs["input_forget"] = bool(ctx.attr("input_forget", 0))
        if quantized:
            for i, name in enumerate(
                ("weight_scale", "weight_zero_point", "recurrence_scale", "recurrence_zero_point")
            ):
                kwargs[name] = ctx.opt(8 + i)
    make: Callable[..., mir.RecurrentOp] = op_type  # each op's own keywords
    return list(ctx.b.emit(make(x, w, r, **kwargs)).results)


@converter("RNN")
def rnn(ctx: NodeContext) -> ConverterResult:
    return _layer(ctx, mir.RnnOp)


@converter("GRU")
def gru(ctx: NodeContext) -> ConverterResult:
    return _layer(ctx, mir.GruOp)


@converter("LSTM")
@converter("DynamicQuantizeLSTM", domain="com.microsoft")
def lstm(ctx: NodeContext) -> ConverterResult:
    return _layer(ctx, mir.LstmOp)
