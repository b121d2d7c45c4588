"""Run-time control flow from ONNX against onnxruntime: If on a condition fed at run time
(nested, capturing values of the graph), Loop with a trip count or a condition from the
inputs, an If inside a Loop, Loops and Scans longer than the unroll cap or of a symbolic
length, a window x[i:i+k] at the iteration number; what the backend plans and what it
runs on the reference executor; and silero-vad (skipped unless ``RLX_SILERO_VAD`` names
its ``silero_vad.onnx``, from the silero-vad wheel: ``pip download --no-deps silero-vad``)."""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile.builder import UNROLL_MAX_ITERATIONS
from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import OnnxImportError, import_model

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
vi = helper.make_tensor_value_info
node = helper.make_node


def model_of(nodes, inputs, outputs, inits=(), opset: int = 17) -> onnx.ModelProto:  # type: ignore[no-untyped-def]
    graph = helper.make_graph(nodes, "g", inputs, [vi(o, F, None) for o in outputs], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]], *, planned: bool) -> None:
    """The backend against onnxruntime on every feed; ``planned``: the compile is an
    arena plan (LIR), else the model runs on the reference executor."""
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rep = backend.prepare(model)
    assert rep.compiled is not None
    assert (rep.compiled.result.lir is not None) is planned
    for feed in feeds:
        want = session.run(None, feed)
        got = rep.run(feed)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def ops_of(model: onnx.ModelProto, kind: type) -> list[object]:
    return [op for op in import_model(model).walk() if isinstance(op, kind)]


def branch(name: str, nodes, out: str, shape=(3,)):  # type: ignore[no-untyped-def]
    return helper.make_graph(nodes, name, [], [vi(out, F, list(shape))])


RNG = np.random.default_rng(0)
X = RNG.standard_normal(3).astype(np.float32)


def test_an_if_on_an_input_is_a_run_time_if() -> None:
    then = branch("then", [node("Mul", ["x", "x"], ["t"])], "t")
    other = branch("else", [node("Neg", ["x"], ["e"]), node("Add", ["e", "w"], ["f"])], "f")
    model = model_of(
        [node("If", ["c"], ["y"], then_branch=then, else_branch=other),
         node("Add", ["y", "x"], ["z"])],
        [vi("c", BOOL, []), vi("x", F, [3])], ["z"],
        [helper.make_tensor("w", F, [3], [1.0, 2.0, 3.0])],
    )  # fmt: skip
    assert len(ops_of(model, mir.IfOp)) == 1
    check(model, [{"c": np.array(c), "x": X} for c in (True, False)], planned=True)


def test_nested_ifs_on_a_condition_of_shape_one() -> None:
    inner = helper.make_graph(
        [node("If", ["d"], ["u"],
              then_branch=branch("a", [node("Exp", ["x"], ["ea"])], "ea"),
              else_branch=branch("b", [node("Sigmoid", ["x"], ["sb"])], "sb"))],
        "inner", [], [vi("u", F, [3])],
    )  # fmt: skip
    model = model_of(
        [node("If", ["c"], ["y"], then_branch=inner,
              else_branch=branch("o", [node("Abs", ["x"], ["ab"])], "ab"))],
        [vi("c", BOOL, [1]), vi("d", BOOL, []), vi("x", F, [3])], ["y"],
    )  # fmt: skip
    feeds = [
        {"c": np.array([c]), "d": np.array(d), "x": X} for c in (True, False) for d in (True, False)
    ]
    check(model, feeds, planned=True)
    # The [1] condition is the if's own operand: no reshape to a scalar first.
    (outer, _) = ops_of(model, mir.IfOp)
    assert isinstance(outer, mir.IfOp) and isinstance(outer.condition.owner, mir.InputOp)


def test_an_if_on_a_compared_condition_of_shape_one_by_one() -> None:
    """A condition of shape [1, 1] computed at run time (openWakeWord's models compare a
    [1, 1] score): one ``mir.if`` on it, planned, against onnxruntime."""
    then = branch("then", [node("Mul", ["x", "x"], ["t"])], "t")
    other = branch("else", [node("Neg", ["x"], ["e"])], "e")
    model = model_of(
        [node("ReduceSum", ["x", "axes"], ["s"], keepdims=1),
         node("Reshape", ["s", "shape"], ["s2"]),
         node("GreaterOrEqual", ["s2", "zero"], ["c"]),
         node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [vi("x", F, [3])], ["y"],
        [helper.make_tensor("axes", I64, [1], [0]), helper.make_tensor("shape", I64, [2], [1, 1]),
         helper.make_tensor("zero", F, [1, 1], [0.0])],
    )  # fmt: skip
    (if_op,) = ops_of(model, mir.IfOp)
    assert isinstance(if_op, mir.IfOp) and if_op.condition.type.shape == (1, 1)
    check(model, [{"x": X}, {"x": -np.abs(X)}], planned=True)


def test_branches_of_different_shapes_bake_the_condition_in() -> None:
    """The branches yield [3] and [2]: one if cannot hold both, so the condition is needed
    at compile time; the backend compiles once per value of its input."""
    model = model_of(
        [node("If", ["c"], ["y"], then_branch=branch("t", [node("Neg", ["x"], ["n"])], "n"),
              else_branch=branch("e", [node("Slice", ["x", "s", "l"], ["sl"])], "sl", (2,)))],
        [vi("c", BOOL, []), vi("x", F, [3])], ["y"],
        [helper.make_tensor("s", I64, [1], [1]), helper.make_tensor("l", I64, [1], [3])],
    )  # fmt: skip
    with pytest.raises(OnnxImportError) as err:
        import_model(model)
    assert err.value.needs_values == ("c",)
    # what must be known first, then why: the reason never splits the sentence
    assert "If's condition 'c' must be known at compile time (the branches yield" in str(err.value)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rep = backend.prepare(model)
    for c in (True, False):
        feed = {"c": np.array(c), "x": X}
        np.testing.assert_allclose(rep.run(feed)[0], session.run(None, feed)[0])


def test_an_if_on_loop_state_with_branches_of_different_shapes_is_refused() -> None:
    """Inside a loop body the condition comes from the loop's state, which no graph input
    or --dim can fix: the error says the branches cannot be one if, not that the condition
    must be known at compile time."""
    body = helper.make_graph(
        [node("ReduceSum", ["acc"], ["s"], keepdims=0), node("Greater", ["s", "zero"], ["pos"]),
         node("If", ["pos"], ["y"],
              then_branch=branch("t", [node("Neg", ["acc"], ["ng"])], "ng"),
              else_branch=branch("e", [node("Slice", ["acc", "st", "l"], ["sl"])], "sl", (2,))),
         node("ReduceSum", ["y"], ["ys"], keepdims=1), node("Add", ["acc", "ys"], ["acc_next"]),
         node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F, [3])],
        [vi("cond_out", BOOL, []), vi("acc_next", F, [3])],
        [helper.make_tensor("zero", F, [], [0.0]), helper.make_tensor("st", I64, [1], [1]),
         helper.make_tensor("l", I64, [1], [3])],
    )  # fmt: skip
    model = model_of(
        [node("Loop", ["n", "", "acc0"], ["acc_final"], body=body)],
        [vi("acc0", F, [3]), vi("n", I64, [])], ["acc_final"],
    )  # fmt: skip
    with pytest.raises(OnnxImportError) as err:
        import_model(model)
    assert err.value.needs_values == ()
    message = str(err.value)
    assert "If node 'Loop_0/body/If_2': a run-time condition, and the branches yield" in message
    assert "must be known at compile time" not in message


def counting_loop(trip_input: bool, with_scan: bool, nested_if: bool = False) -> onnx.ModelProto:
    """acc' = acc + x·i (negated when its sum is positive, with ``nested_if``), scan acc'·2."""
    nodes = [node("Cast", ["i"], ["i_f"], to=F), node("Mul", ["x", "i_f"], ["xi"]),
             node("Add", ["acc", "xi"], ["acc2"])]  # fmt: skip
    if nested_if:
        nodes += [
            node("ReduceSum", ["acc2"], ["s"], keepdims=0),
            node("Greater", ["s", "zero"], ["pos"]),
            node("If", ["pos"], ["acc_next"],
                 then_branch=branch("t", [node("Neg", ["acc2"], ["ng"])], "ng"),
                 else_branch=branch("e", [node("Identity", ["acc2"], ["id"])], "id")),
        ]  # fmt: skip
    else:
        nodes.append(node("Identity", ["acc2"], ["acc_next"]))
    outs = [vi("cond_out", BOOL, []), vi("acc_next", F, [3])]
    nodes.append(node("Identity", ["cond"], ["cond_out"]))
    if with_scan:
        nodes.append(node("Mul", ["acc_next", "two"], ["scan"]))
        outs.append(vi("scan", F, [3]))
    body = helper.make_graph(
        nodes, "body", [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F, [3])], outs,
        [helper.make_tensor("two", F, [], [2.0]), helper.make_tensor("zero", F, [], [0.0])],
    )  # fmt: skip
    results = ["acc_final", "accs"] if with_scan else ["acc_final"]
    inputs = [vi("acc0", F, [3]), vi("x", F, [3])]
    inits = []
    if trip_input:
        inputs.append(vi("n", I64, []))
    else:
        inits.append(helper.make_tensor("n", I64, [], [3 * UNROLL_MAX_ITERATIONS]))
    return model_of([node("Loop", ["n", "", "acc0"], results, body=body)], inputs, results, inits)


@pytest.mark.parametrize("nested_if", [False, True])
def test_a_trip_count_from_an_input(nested_if: bool) -> None:
    feeds = [{"acc0": X, "x": -X, "n": np.array(n)} for n in (0, 1, 7)]
    # Without scan outputs every size is known: planned, the body's arena reused.
    check(counting_loop(True, False, nested_if), feeds, planned=True)
    # Scan outputs as long as the run decides: the reference executor runs the model.
    check(counting_loop(True, True, nested_if), feeds, planned=False)


def test_a_static_trip_count_above_the_cap_is_one_loop() -> None:
    model = counting_loop(False, True, nested_if=True)
    assert len(ops_of(model, mir.LoopOp)) == 1
    check(model, [{"acc0": X, "x": X * 0.01}], planned=True)


def test_a_condition_from_the_data_stops_the_loop() -> None:
    """while max(acc) < 5 (at most 100 iterations): acc' = acc + |x| + 0.1."""
    body = helper.make_graph(
        [node("Abs", ["x"], ["ax"]), node("Add", ["acc", "ax"], ["a1"]),
         node("Add", ["a1", "tenth"], ["acc_next"]),
         node("ReduceMax", ["acc_next"], ["m"], keepdims=0), node("Less", ["m", "five"], ["go"]),
         node("Identity", ["acc_next"], ["row"])],
        "body", [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F, [3])],
        [vi("go", BOOL, []), vi("acc_next", F, [3]), vi("row", F, [3])],
        [helper.make_tensor("tenth", F, [], [0.1]), helper.make_tensor("five", F, [], [5.0])],
    )  # fmt: skip
    model = model_of(
        [node("Loop", ["M", "start", "acc0"], ["acc_final", "rows"], body=body)],
        [vi("acc0", F, [3]), vi("x", F, [3]), vi("start", BOOL, [])], ["acc_final", "rows"],
        [helper.make_tensor("M", I64, [], [100])],
    )  # fmt: skip
    feeds = [{"acc0": X, "x": X, "start": np.array(s)} for s in (True, False)]
    check(model, feeds, planned=False)


def test_a_window_at_the_iteration_number() -> None:
    """y' = y + table[i:i+2] (a Slice from run-time starts and ends = starts + 2)."""
    body = helper.make_graph(
        [node("Add", ["i", "two"], ["end"]), node("Unsqueeze", ["i", "axes"], ["start1"]),
         node("Unsqueeze", ["end", "axes"], ["end1"]),
         node("Slice", ["table", "start1", "end1"], ["window"]),
         node("Add", ["y", "window"], ["y_next"]), node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond", BOOL, []), vi("y", F, [2])],
        [vi("cond_out", BOOL, []), vi("y_next", F, [2])],
        [helper.make_tensor("two", I64, [], [2]), helper.make_tensor("axes", I64, [1], [0])],
    )  # fmt: skip
    model = model_of(
        [node("Loop", ["n", "", "y0"], ["y"], body=body)],
        [vi("n", I64, []), vi("y0", F, [2]), vi("table", F, [6])], ["y"],
    )  # fmt: skip
    table = RNG.standard_normal(6).astype(np.float32)
    feeds = [{"n": np.array(n), "y0": X[:2], "table": table} for n in (0, 3, 5)]
    check(model, feeds, planned=True)


def scan_model(steps: int | str, reverse: bool) -> onnx.ModelProto:
    body = helper.make_graph(
        [node("Add", ["s", "a_t"], ["s_next"]), node("Tanh", ["s_next"], ["y_t"])],
        "body", [vi("s", F, [2]), vi("a_t", F, [2])], [vi("s_next", F, [2]), vi("y_t", F, [2])],
    )  # fmt: skip
    scan = node(
        "Scan", ["s0", "a"], ["s_final", "ys"], body=body, num_scan_inputs=1,
        scan_input_directions=[int(reverse)], scan_output_directions=[int(reverse)],
        scan_output_axes=[1],
    )  # fmt: skip
    return model_of([scan], [vi("s0", F, [2]), vi("a", F, [steps, 2])], ["s_final", "ys"])


@pytest.mark.parametrize("reverse", [False, True])
def test_a_long_scan_is_one_loop(reverse: bool) -> None:
    steps = UNROLL_MAX_ITERATIONS + 10
    model = scan_model(steps, reverse)
    assert len(ops_of(model, mir.LoopOp)) == 1
    a = RNG.standard_normal((steps, 2)).astype(np.float32) * 0.3
    check(model, [{"s0": X[:2], "a": a}], planned=True)


def test_a_scan_of_a_symbolic_length() -> None:
    from rlx_compile.interpreter import run

    model = scan_model("T", reverse=True)
    module = import_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for steps in (1, 5, 80):
        feed = {"s0": X[:2], "a": RNG.standard_normal((steps, 2)).astype(np.float32)}
        got = run(module, feed)
        for g, w in zip(got.values(), session.run(None, feed), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


SILERO = os.environ.get("RLX_SILERO_VAD")


@pytest.mark.skipif(not SILERO, reason="set RLX_SILERO_VAD to silero_vad.onnx")
@pytest.mark.parametrize("samples", [256, 576])
def test_silero_vad(samples: int) -> None:
    """silero-vad switches on its sample rate (an input) with an If. At 256 samples both
    branches are valid: one compile, a run-time if, both rates. At 576 (16 kHz with its
    context) the 8 kHz branch cannot run: the rate is baked in per value, as ORT fails
    on that branch too."""
    assert SILERO is not None
    model = onnx.load(SILERO)
    for vi_ in model.graph.input:
        dims = vi_.type.tensor_type.shape.dim
        if vi_.name == "input":
            dims[0].dim_value, dims[1].dim_value = 1, samples
        if vi_.name == "state":
            dims[1].dim_value = 1
    # onnxruntime on the model as shipped (its shape inference rejects the fixed dims
    # at 576 samples: the 8 kHz branch cannot take them).
    session = ort.InferenceSession(SILERO, providers=["CPUExecutionProvider"])
    rep = backend.prepare(model)
    assert rep.needs_values == (() if samples == 256 else ("sr",))
    rates = (16000, 8000) if samples == 256 else (16000,)
    state = np.zeros((2, 1, 128), np.float32)
    for _ in range(3):  # the state carried from one chunk to the next
        for sr in rates:
            x = (RNG.standard_normal((1, samples)) * 0.1).astype(np.float32)
            feed = {"input": x, "state": state, "sr": np.array(sr, np.int64)}
            want = session.run(None, feed)
            got = rep.run(feed)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
        state = want[1]


@pytest.mark.parametrize("rule", ["gated_delta", "linear"])
def test_linear_attention_over_many_tokens_is_one_loop(rule: str) -> None:
    """LinearAttention over more tokens than the unroll cap (grouped heads, per-head
    decay and beta for the gated delta rule), against onnx's reference implementation
    (onnxruntime has no kernel for it)."""
    from onnx.reference import ReferenceEvaluator

    batch, steps, q_heads, kv_heads, d = 2, UNROLL_MAX_ITERATIONS + 16, 4, 2, 8
    names = (
        ["query", "key", "value", "", "decay", "beta"]
        if rule != "linear"
        else ["query", "key", "value"]
    )
    shapes = {"query": [batch, steps, q_heads * d], "key": [batch, steps, kv_heads * d],
              "value": [batch, steps, kv_heads * d], "decay": [batch, steps, kv_heads],
              "beta": [batch, steps, kv_heads]}  # fmt: skip
    la = node("LinearAttention", names, ["out", "state"], q_num_heads=q_heads,
              kv_num_heads=kv_heads, update_rule=rule)  # fmt: skip
    opset = onnx.defs.get_schema("LinearAttention").since_version
    model = model_of([la], [vi(n, F, shapes[n]) for n in names if n], ["out", "state"], opset=opset)
    rng = np.random.default_rng(1)
    feeds = {n: (rng.standard_normal(shapes[n]) * 0.3).astype(np.float32) for n in names if n}
    if "decay" in feeds:
        feeds["decay"] = -np.abs(feeds["decay"])
    if "beta" in feeds:
        feeds["beta"] = 1 / (1 + np.exp(-feeds["beta"]))
    assert len(ops_of(model, mir.LoopOp)) == 1
    want = ReferenceEvaluator(model).run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
