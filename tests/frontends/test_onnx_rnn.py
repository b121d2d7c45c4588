"""RNN / GRU / LSTM against onnxruntime on what the ONNX node tests leave out: reverse and
bidirectional directions, batch-major layout, sequence_lens shorter than the sequence (fed
at run time), clip, GRU's linear_before_reset, peepholes, LSTM's input_forget, and
non-default activations; sequences longer than the unroll cap and of a symbolic length.
Each node imports as one mir.rnn / mir.gru / mir.lstm, which the cpu target runs as a
kernel (natively, through ``backend``); lowered to its steps (a target that does not
claim it) it computes the same numbers."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from tests.fusion.helpers import apply

import rlx_compile.backend as backend
from rlx_compile.builder import UNROLL_MAX_ITERATIONS
from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run
from rlx_compile.pipeline import CompilePipeline

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
SEQ, BATCH, INPUT, HIDDEN = 5, 3, 4, 6


def recurrent_model(
    op: str,
    direction: str,
    layout: int,
    *,
    lens: bool,
    initial: bool,
    seq: int = SEQ,
    **attrs: object,
) -> tuple[object, dict[str, np.ndarray]]:
    # The same values for both layouts: batch-major feeds are the seq-major ones transposed.
    rng = np.random.default_rng(zlib.crc32(f"{op} {direction} {lens} {initial}".encode()))
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x_shape = [BATCH, seq, INPUT] if layout else [seq, BATCH, INPUT]
    state_shape = [BATCH, dirs, HIDDEN] if layout else [dirs, BATCH, HIDDEN]
    feeds = {"X": rng.standard_normal([seq, BATCH, INPUT]).astype(np.float32)}
    inits = [
        helper.make_tensor("W", TensorProto.FLOAT, [dirs, g * HIDDEN, INPUT],
                           rng.standard_normal((dirs, g * HIDDEN, INPUT)).ravel() * 0.5),
        helper.make_tensor("R", TensorProto.FLOAT, [dirs, g * HIDDEN, HIDDEN],
                           rng.standard_normal((dirs, g * HIDDEN, HIDDEN)).ravel() * 0.5),
        helper.make_tensor("B", TensorProto.FLOAT, [dirs, 2 * g * HIDDEN],
                           rng.standard_normal((dirs, 2 * g * HIDDEN)).ravel() * 0.3),
    ]  # fmt: skip
    inputs = ["X", "W", "R", "B", "", "", "", ""]
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)]
    if lens:
        inputs[4] = "lens"
        feeds["lens"] = np.array([seq, 2, seq - 1][:BATCH], np.int32)
        graph_inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, [BATCH]))
    if initial:
        inputs[5] = "h0"
        feeds["h0"] = rng.standard_normal([dirs, BATCH, HIDDEN]).astype(np.float32)
        graph_inputs.append(helper.make_tensor_value_info("h0", TensorProto.FLOAT, state_shape))
        if op == "LSTM":
            inputs[6] = "c0"
            feeds["c0"] = rng.standard_normal([dirs, BATCH, HIDDEN]).astype(np.float32)
            graph_inputs.append(helper.make_tensor_value_info("c0", TensorProto.FLOAT, state_shape))
            inputs[7] = "P"
            inits.append(
                helper.make_tensor("P", TensorProto.FLOAT, [dirs, 3 * HIDDEN],
                                   rng.standard_normal(dirs * 3 * HIDDEN) * 0.5)
            )  # fmt: skip
    if layout:
        feeds = {k: v if k == "lens" else v.swapaxes(0, 1) for k, v in feeds.items()}
    while inputs and inputs[-1] == "":
        inputs.pop()
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(
        op, inputs, outputs, hidden_size=HIDDEN, direction=direction, layout=layout, **attrs
    )
    graph = helper.make_graph(
        [node], "g", graph_inputs,
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    return model, feeds


def check_against_onnxruntime(
    model: object, feeds: dict[str, np.ndarray], threads: int = 0
) -> None:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(
        model.SerializeToString(),  # type: ignore[attr-defined]
        options,
        providers=["CPUExecutionProvider"],
    )
    want = session.run(None, feeds)
    got = backend.prepare(model).run(feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("op", "direction"), list(itertools.product(GATES, ["forward", "reverse", "bidirectional"]))
)
def test_directions(op: str, direction: str) -> None:
    check_against_onnxruntime(*recurrent_model(op, direction, 0, lens=False, initial=True))


@pytest.mark.parametrize(
    ("op", "direction"), list(itertools.product(GATES, ["forward", "bidirectional"]))
)
def test_batch_major_layout(op: str, direction: str) -> None:
    # onnxruntime has no layout=1 kernels: its seq-major run, transposed, is the reference.
    seq_major, feeds = recurrent_model(op, direction, 0, lens=False, initial=True)
    batch_major, batch_feeds = recurrent_model(op, direction, 1, lens=False, initial=True)
    session = ort.InferenceSession(
        seq_major.SerializeToString(), providers=["CPUExecutionProvider"]
    )  # type: ignore[attr-defined]
    y, *states = session.run(None, feeds)
    got_y, *got_states = backend.prepare(batch_major).run(batch_feeds)
    np.testing.assert_allclose(got_y, y.transpose(2, 0, 1, 3), rtol=1e-5, atol=1e-6)
    for got, want in zip(got_states, states, strict=True):
        np.testing.assert_allclose(got, want.swapaxes(0, 1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("op", "direction"), list(itertools.product(GATES, ["forward", "reverse", "bidirectional"]))
)
def test_sequence_lens_shorter_than_the_sequence(op: str, direction: str) -> None:
    check_against_onnxruntime(*recurrent_model(op, direction, 0, lens=True, initial=True))


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_gru_linear_before_reset(linear_before_reset: int) -> None:
    model, feeds = recurrent_model(
        "GRU", "bidirectional", 0, lens=False, initial=False,
        linear_before_reset=linear_before_reset,
    )  # fmt: skip
    check_against_onnxruntime(model, feeds)


@pytest.mark.parametrize("op", list(GATES))
def test_clip(op: str) -> None:
    check_against_onnxruntime(
        *recurrent_model(op, "forward", 0, lens=False, initial=True, clip=0.4)
    )


@pytest.mark.parametrize(
    ("op", "activations", "alpha", "beta"),
    [
        ("RNN", ["Relu"], [], []),
        ("RNN", ["LeakyRelu", "ScaledTanh"], [0.1, 0.8], [1.3]),
        ("GRU", ["HardSigmoid", "Softsign"], [0.3], [0.4]),
        ("LSTM", ["Sigmoid", "Elu", "Softplus"], [0.7], []),
        ("LSTM", ["HardSigmoid", "Affine", "ThresholdedRelu"], [0.25, 0.5, 0.1], [0.45, 0.2]),
    ],
)
def test_activations(
    op: str, activations: list[str], alpha: list[float], beta: list[float]
) -> None:
    dirs = 2 if len(activations) > {"RNN": 1, "GRU": 2, "LSTM": 3}[op] else 1
    attrs: dict[str, object] = {"activations": activations}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    direction = "bidirectional" if dirs == 2 else "forward"
    check_against_onnxruntime(*recurrent_model(op, direction, 0, lens=False, initial=True, **attrs))


def test_symbolic_batch_with_runtime_sequence_lens() -> None:
    rng = np.random.default_rng(3)
    w = helper.make_tensor(
        "W", TensorProto.FLOAT, [2, 4 * HIDDEN, INPUT], rng.standard_normal(2 * 4 * HIDDEN * INPUT)
    )
    r = helper.make_tensor("R", TensorProto.FLOAT, [2, 4 * HIDDEN, HIDDEN],
                           rng.standard_normal(2 * 4 * HIDDEN * HIDDEN))  # fmt: skip
    node = helper.make_node("LSTM", ["X", "W", "R", "", "lens"], ["Y", "Y_h"],
                            hidden_size=HIDDEN, direction="bidirectional")  # fmt: skip
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, "N", INPUT]),
         helper.make_tensor_value_info("lens", TensorProto.INT32, ["N"])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("Y", "Y_h")],
        [w, r],
    )  # fmt: skip
    feeds = [
        {
            "X": rng.standard_normal((SEQ, batch, INPUT)).astype(np.float32),
            "lens": rng.integers(1, SEQ + 1, batch).astype(np.int32),
        }
        for batch in (1, 4)
    ]
    check_symbolic_against_onnxruntime(graph, feeds)


def check_symbolic_against_onnxruntime(
    graph: object, feeds: list[dict[str, np.ndarray]], domains: tuple[str, ...] = ()
) -> None:
    """One import of a model with open dims, run by the reference executor at each feed."""
    opsets = [helper.make_opsetid("", 22), *(helper.make_opsetid(d, 1) for d in domains)]
    model = helper.make_model(graph, opset_imports=opsets)
    module = import_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for feed in feeds:
        got = run(module, feed, param_values(model, module))
        for g, w_ in zip(got.values(), session.run(None, feed), strict=True):
            np.testing.assert_allclose(g, w_, rtol=1e-5, atol=1e-6)


LONG = UNROLL_MAX_ITERATIONS + 6
OPS = {"RNN": mir.RnnOp, "GRU": mir.GruOp, "LSTM": mir.LstmOp}
LOWER = "legalize{target=cuda}"
"""A target that claims every primitive but not the recurrent ops."""


@pytest.mark.parametrize(
    ("op", "direction"), list(itertools.product(GATES, ["forward", "reverse", "bidirectional"]))
)
def test_a_layer_imports_as_one_op_at_any_length(op: str, direction: str) -> None:
    model, feeds = recurrent_model(op, direction, 0, lens=True, initial=True, seq=LONG)
    module = import_model(model)
    assert [type(o) for o in module.walk() if o.name.startswith("mir.") and
            not isinstance(o, mir.InputOp | mir.ParamOp)] == [OPS[op]]  # fmt: skip
    check_against_onnxruntime(model, feeds)


@pytest.mark.parametrize(("op", "seq"), list(itertools.product(GATES, [SEQ, LONG])))
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_the_lowering_to_steps_computes_the_reference(op: str, seq: int, direction: str) -> None:
    """Unrolled (a short sequence) or one mir.loop per direction (a long one), bit for
    bit what the op's reference kernel computes."""
    model, feeds = recurrent_model(op, direction, 0, lens=True, initial=True, seq=seq)
    module = import_model(model)
    lowered, _ = apply(module, LOWER)
    loops = [o for o in lowered.walk() if isinstance(o, mir.LoopOp)]
    assert len(loops) == (0 if seq <= UNROLL_MAX_ITERATIONS else 1 + (direction == "bidirectional"))
    assert not [o for o in lowered.walk() if isinstance(o, mir.RecurrentOp)]
    params = param_values(model, module)
    want = run(module, feeds, params)
    for name, got in run(lowered, feeds, params).items():
        np.testing.assert_array_equal(got, want[name], err_msg=name)


def test_a_target_that_does_not_claim_a_layer_fuses_its_steps() -> None:
    """The pipeline lowers the layers a target does not claim before fusion
    (lower-recurrent), so their steps fuse; cpu keeps each layer whole."""
    model, feeds = recurrent_model("GRU", "bidirectional", 0, lens=True, initial=True)
    module = import_model(model)
    params = param_values(model, module)
    want = run(module, feeds, params)
    cuda = CompilePipeline(target="cuda").compile(module)
    assert "lower-recurrent{target=cuda}" in cuda.pipeline
    assert not [o for o in cuda.module.walk() if isinstance(o, mir.RecurrentOp)]
    assert cuda.fusion_report is not None and "elementwise_region" in cuda.fusion_report.fused
    for name, got in run(cuda.module, feeds, params).items():
        np.testing.assert_allclose(got, want[name], rtol=1e-6, atol=1e-7, err_msg=name)
    cpu = CompilePipeline(target="cpu").compile(module)
    assert "lower-recurrent" not in cpu.pipeline
    assert [o.name for o in cpu.module.walk() if isinstance(o, mir.RecurrentOp)] == ["mir.gru"]


def test_an_lstm_couples_its_input_and_forget_gates() -> None:
    check_against_onnxruntime(
        *recurrent_model("LSTM", "bidirectional", 0, lens=True, initial=True, input_forget=1)
    )


def test_a_symbolic_sequence_length_plans_one_arena_for_a_range() -> None:
    """The op's results are as long as the sequence: one plan for every length in range,
    run by the arena executor (and the lowering runs as loops)."""
    model, _ = recurrent_model("LSTM", "bidirectional", 0, lens=False, initial=True)
    dims = model.graph.input[0].type.tensor_type.shape.dim  # type: ignore[attr-defined]
    dims[0].dim_param = "T"
    module = import_model(model)
    params = param_values(model, module)
    result = CompilePipeline(dim_ranges={"T": (1, 100)}).compile(module)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    rng = np.random.default_rng(4)
    lowered, _ = apply(module, LOWER)
    for t in (1, 9, 100):
        feeds = {
            "X": rng.standard_normal((t, BATCH, INPUT)).astype(np.float32),
            "h0": rng.standard_normal((2, BATCH, HIDDEN)).astype(np.float32),
            "c0": rng.standard_normal((2, BATCH, HIDDEN)).astype(np.float32),
        }
        want = session.run(None, feeds)
        got = result.run(feeds, params)
        for g, w in zip(got.values(), want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        reference = run(module, feeds, params)
        for name, v in run(lowered, feeds, params).items():
            np.testing.assert_array_equal(v, reference[name], err_msg=name)


def test_a_symbolic_sequence_length() -> None:
    rng = np.random.default_rng(5)
    w = helper.make_tensor(
        "W", TensorProto.FLOAT, [1, 3 * HIDDEN, INPUT], rng.standard_normal(3 * HIDDEN * INPUT)
    )
    r = helper.make_tensor(
        "R", TensorProto.FLOAT, [1, 3 * HIDDEN, HIDDEN], rng.standard_normal(3 * HIDDEN * HIDDEN)
    )
    node = helper.make_node("GRU", ["X", "W", "R"], ["Y", "Y_h"], hidden_size=HIDDEN)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["T", 2, INPUT])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("Y", "Y_h")],
        [w, r],
    )  # fmt: skip
    feeds = [{"X": rng.standard_normal((t, 2, INPUT)).astype(np.float32)} for t in (1, 7, 90)]
    check_symbolic_against_onnxruntime(graph, feeds)


def dynamic_quantize_lstm(model: object, per_column: bool, signed: bool) -> object:
    """``model``'s LSTM as onnxruntime's ``quantize_dynamic`` rewrites it: a
    com.microsoft.DynamicQuantizeLSTM with W and R transposed to [dirs, k, 4·hidden] and
    quantized to u8, or s8 within ±63, by tensor or by column, with their scales and zero
    points."""
    graph = model.graph  # type: ignore[attr-defined]
    inits = {t.name: t for t in graph.initializer}
    node = graph.node[0]
    names = list(node.input) + [""] * (8 - len(node.input))
    extra = []
    for name in ("W", "R"):
        m = numpy_helper.to_array(inits.pop(name)).swapaxes(1, 2)  # [dirs, k, 4h]
        axes = (1,) if per_column else (1, 2)
        lo, hi = np.minimum(m.min(axis=axes), 0), np.maximum(m.max(axis=axes), 0)
        # 7-bit signed weights: onnxruntime's u8 x s8 kernels on AVX2 without VNNI
        # saturate the int16 sum of two products, which full-range weights exceed
        qmin, qmax = (-63, 63) if signed else (0, 255)
        scale = ((hi - lo) / (qmax - qmin)).astype(np.float32)
        zp = np.zeros_like(scale) if signed else np.round(qmin - lo / scale)
        shape = (scale.shape[0], 1, scale.shape[1]) if per_column else (scale.shape[0], 1, 1)
        q = np.clip(np.round(m / scale.reshape(shape)) + zp.reshape(shape), qmin, qmax)
        dtype = np.int8 if signed else np.uint8
        extra += [
            numpy_helper.from_array(q.astype(dtype), name),
            numpy_helper.from_array(scale, f"{name}_scale"),
            numpy_helper.from_array(zp.astype(dtype), f"{name}_zp"),
        ]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute if a.name != "layout"}
    quantized = helper.make_node(
        "DynamicQuantizeLSTM",
        [*names, "W_scale", "W_zp", "R_scale", "R_zp"],
        list(node.output),
        domain="com.microsoft",
        **attrs,
    )
    new = helper.make_graph(
        [quantized], "g", list(graph.input), list(graph.output), [*inits.values(), *extra]
    )
    return helper.make_model(
        new,
        opset_imports=[helper.make_opsetid("", 22), helper.make_opsetid("com.microsoft", 1)],
    )


@pytest.mark.parametrize(
    ("direction", "per_column", "signed", "initial"),
    [
        ("forward", False, True, False),
        ("reverse", True, True, True),
        ("bidirectional", False, False, True),
    ],
)
def test_dynamic_quantize_lstm(
    direction: str, per_column: bool, signed: bool, initial: bool
) -> None:
    # A thread per batch row: onnxruntime then quantizes each row's hidden state alone.
    model, feeds = recurrent_model("LSTM", direction, 0, lens=initial, initial=initial)
    check_against_onnxruntime(dynamic_quantize_lstm(model, per_column, signed), feeds, BATCH)


def test_dynamic_quantize_lstm_over_a_symbolic_sequence_length() -> None:
    model, _ = recurrent_model("LSTM", "bidirectional", 0, lens=False, initial=False)
    quantized = dynamic_quantize_lstm(model, per_column=True, signed=True)
    rng = np.random.default_rng(2)
    feeds = [{"X": rng.standard_normal((t, 1, INPUT)).astype(np.float32)} for t in (1, 40)]
    dims = quantized.graph.input[0].type.tensor_type.shape.dim  # type: ignore[attr-defined]
    dims[0].dim_param, dims[1].dim_value = "T", 1
    check_symbolic_against_onnxruntime(quantized.graph, feeds, ("com.microsoft",))  # type: ignore[attr-defined]


def stacked_model(
    op: str, layers: int, bidirectional: bool
) -> tuple[object, dict[str, np.ndarray]]:
    """A multi-layer network as PyTorch exports it with given states: each layer reads
    its rows of h0 (and c0) through a Slice, and its output, directions folded into the
    features, is the next layer's input."""
    rng = np.random.default_rng(zlib.crc32(f"stacked {op} {layers} {bidirectional}".encode()))
    dirs = 2 if bidirectional else 1
    g = GATES[op]
    states = ["h0", "c0"] if op == "LSTM" else ["h0"]
    feeds = {"X": rng.standard_normal([SEQ, BATCH, INPUT]).astype(np.float32)}
    feeds |= {s: rng.standard_normal([layers * dirs, BATCH, HIDDEN]).astype(np.float32)
              for s in states}  # fmt: skip
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("axis0", [0]), ("features", [SEQ, BATCH, dirs * HIDDEN]))]  # fmt: skip
    nodes = []
    x, width = "X", INPUT
    for layer in range(layers):
        inits += [
            numpy_helper.from_array(np.array([layer * dirs], np.int64), f"start{layer}"),
            numpy_helper.from_array(np.array([(layer + 1) * dirs], np.int64), f"end{layer}"),
        ]
        for s in states:
            nodes.append(helper.make_node("Slice", [s, f"start{layer}", f"end{layer}", "axis0"],
                                          [f"{s}_{layer}"]))  # fmt: skip
        for name, shape in (("W", (dirs, g * HIDDEN, width)), ("R", (dirs, g * HIDDEN, HIDDEN)),
                            ("B", (dirs, 2 * g * HIDDEN))):  # fmt: skip
            weight = (rng.standard_normal(shape) * 0.4).astype(np.float32)
            inits.append(numpy_helper.from_array(weight, f"{name}{layer}"))
        ins = [x, f"W{layer}", f"R{layer}", f"B{layer}", "", *(f"{s}_{layer}" for s in states)]
        nodes.append(helper.make_node(
            op, ins, [f"Y{layer}"], hidden_size=HIDDEN,
            direction="bidirectional" if bidirectional else "forward"))  # fmt: skip
        # [seq, dirs, batch, H] -> [seq, batch, dirs·H]
        nodes.append(helper.make_node("Transpose", [f"Y{layer}"], [f"T{layer}"], perm=[0, 2, 1, 3]))
        nodes.append(helper.make_node("Reshape", [f"T{layer}", "features"], [f"F{layer}"]))
        x, width = f"F{layer}", dirs * HIDDEN
    graph = helper.make_graph(
        nodes, "stacked",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, BATCH, INPUT]),
         *(helper.make_tensor_value_info(s, TensorProto.FLOAT, [layers * dirs, BATCH, HIDDEN])
           for s in states)],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds


@pytest.mark.parametrize(
    ("op", "layers", "bidirectional"),
    [("LSTM", 3, False), ("LSTM", 2, True), ("GRU", 3, True), ("RNN", 2, False)],
)
def test_a_multi_layer_network_reads_its_stacked_states_in_place(
    op: str, layers: int, bidirectional: bool
) -> None:
    """Each layer reads its rows of the stacked h0 (and c0) at its state_offset, with no
    slice left, and the network matches onnxruntime natively (cpu) and lowered to steps
    (cuda, which does not claim the layers)."""
    model, feeds = stacked_model(op, layers, bidirectional)
    module = import_model(model)
    cpu = CompilePipeline(target="cpu").compile(module)
    layers_ops = [o for o in cpu.module.walk() if isinstance(o, mir.RecurrentOp)]
    dirs = 2 if bidirectional else 1
    assert [o.props().opt_int("state_offset") for o in layers_ops] == [
        k * dirs for k in range(layers)
    ]
    assert not [o for o in cpu.module.walk() if isinstance(o, mir.NarrowOp | mir.SliceOp)]
    check_against_onnxruntime(model, feeds)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    params = param_values(model, module)
    cuda = CompilePipeline(target="cuda").compile(module)
    (got,) = run(cuda.module, feeds, params).values()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
