"""Sequences of import-time length and optionals, against onnxruntime: the sequence ops
resolve at import to the tensors they hold; sequence (and optional) graph outputs come
back from the backend as lists (and None or an array); sequence inputs are compiled for
the length and shapes fed."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import OnnxImportError, import_model

F32 = TensorProto.FLOAT
SEQ = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F32, None))


def model(nodes: list[Any], inputs: list[Any], outputs: list[Any], initializers=()) -> Any:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def tensor(name: str, shape: list[int] | None, t: int = F32) -> Any:
    return helper.make_tensor_value_info(name, t, shape)


def seq_out(name: str) -> Any:
    return helper.make_value_info(name, SEQ)


def i64(name: str, value: int) -> Any:
    return helper.make_tensor(name, TensorProto.INT64, [], [value])


def same(got: Any, want: Any) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
    elif want is None:
        assert got is None
    else:
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def check(m: Any, feeds: dict[str, Any]) -> None:
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    got = list(backend.prepare(m).run(feeds))
    same(got, want)


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
Y = -np.arange(12, dtype=np.float32).reshape(1, 3, 4)


@pytest.mark.parametrize("pos", [0, 1, -1, -2])
def test_construct_insert_erase_at(pos: int) -> None:
    nodes = [
        helper.make_node("SequenceConstruct", ["x", "y", "x"], ["s"]),
        helper.make_node("SequenceInsert", ["s", "y", "p"], ["s2"]),
        helper.make_node("SequenceErase", ["s2", "q"], ["s3"]),
        helper.make_node("SequenceErase", ["s3"], ["s4"]),  # the last
        helper.make_node("SequenceAt", ["s4", "p"], ["out"]),
        helper.make_node("SequenceLength", ["s4"], ["n"]),
    ]
    m = model(
        nodes,
        [tensor("x", [2, 3, 4]), tensor("y", [1, 3, 4])],
        [tensor("out", None), tensor("n", [], TensorProto.INT64)],
        [i64("p", pos), i64("q", -pos - 1)],
    )
    check(m, {"x": X, "y": Y})


def test_empty_then_inserts_and_a_sequence_output() -> None:
    nodes = [
        helper.make_node("SequenceEmpty", [], ["e"], dtype=F32),
        helper.make_node("SequenceInsert", ["e", "x"], ["s1"]),
        helper.make_node("SequenceInsert", ["s1", "y", "zero"], ["s2"]),
    ]
    m = model(nodes, [tensor("x", [2, 3, 4]), tensor("y", [1, 3, 4])], [seq_out("s2")],
              [i64("zero", 0)])  # fmt: skip
    check(m, {"x": X, "y": Y})


@pytest.mark.parametrize(
    "split,axis,keepdims",
    [(None, 1, 1), (None, -1, 0), (2, 2, 1), ([1, 2], 1, 1), ([2, 0, 2], 2, 1)],
)
def test_split_to_sequence(split: Any, axis: int, keepdims: int) -> None:
    inits = []
    ins = ["x"]
    if split is not None:
        arr = np.asarray(split, np.int64)
        inits.append(helper.make_tensor("split", TensorProto.INT64, arr.shape, arr.ravel()))
        ins.append("split")
    node = helper.make_node("SplitToSequence", ins, ["s"], axis=axis, keepdims=keepdims)
    m = model([node], [tensor("x", [2, 3, 4])], [seq_out("s")], inits)
    check(m, {"x": X})


@pytest.mark.parametrize("axis,new_axis", [(0, 0), (1, 0), (-1, 0), (0, 1), (-1, 1), (3, 1)])
def test_concat_from_sequence(axis: int, new_axis: int) -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=1),
        helper.make_node("ConcatFromSequence", ["s"], ["out"], axis=axis, new_axis=new_axis),
    ]
    check(model(nodes, [tensor("x", [2, 3, 4])], [tensor("out", None)]), {"x": X})


def test_optional_of_tensor_and_of_nothing() -> None:
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(F32, [2, 3, 4]))
    nodes = [
        helper.make_node("Optional", ["x"], ["o"]),
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
        helper.make_node("OptionalGetElement", ["o"], ["got"]),
        helper.make_node("Optional", [], ["none"], type=helper.make_tensor_type_proto(F32, [])),
        helper.make_node("OptionalHasElement", ["none"], ["has_none"]),
    ]
    outs = [
        tensor("has", [], TensorProto.BOOL),
        tensor("got", [2, 3, 4]),
        tensor("has_none", [], TensorProto.BOOL),
        helper.make_value_info("o", opt_type),
    ]
    check(model(nodes, [tensor("x", [2, 3, 4])], outs), {"x": X})


@pytest.mark.parametrize("items", [0, 1, 3])
def test_sequence_input_is_compiled_for_the_length_fed(items: int) -> None:
    nodes = [
        helper.make_node("SequenceInsert", ["s", "x"], ["s2"]),
        helper.make_node("ConcatFromSequence", ["s2"], ["out"], axis=0),
        helper.make_node("SequenceLength", ["s2"], ["n"]),
    ]
    m = model(nodes, [helper.make_value_info("s", SEQ), tensor("x", [2, 3, 4])],
              [tensor("out", None), tensor("n", [], TensorProto.INT64)])  # fmt: skip
    rep = backend.prepare(m)
    for count in (items, items + 1, items):  # new lengths compile, a repeat is cached
        feeds = {"s": [X + i for i in range(count)], "x": X}
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        same(list(rep.run(feeds)), sess.run(None, feeds))
    assert len(rep._by_value) == 2


def test_sequence_map_unrolls_its_body() -> None:
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])],
        "body",
        [tensor("a", [3]), tensor("b", [3])],
        [tensor("c", [3])],
    )
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
        helper.make_node("SequenceMap", ["s", "s"], ["doubled"], body=body),
    ]
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    check(model(nodes, [tensor("x", [4, 3])], [seq_out("doubled")]), {"x": x})


def test_a_position_from_an_input_is_baked_in_per_value() -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=2),
        helper.make_node("SequenceAt", ["s", "p"], ["out"]),
    ]
    m = model(nodes, [tensor("x", [2, 3, 4]), tensor("p", [], TensorProto.INT64)],
              [tensor("out", None)])  # fmt: skip
    rep = backend.prepare(m)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for p in (0, 3, -1):
        feeds = {"x": X, "p": np.array(p, np.int64)}
        same(list(rep.run(feeds)), sess.run(None, feeds))


def test_a_position_computed_at_run_time_is_an_error_naming_the_node() -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=2),
        helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
        helper.make_node("Cast", ["total"], ["p"], to=TensorProto.INT64),
        helper.make_node("SequenceAt", ["s", "p"], ["out"], name="pick"),
    ]
    m = model(nodes, [tensor("x", [2, 3, 4])], [tensor("out", None)])
    with pytest.raises(
        OnnxImportError, match=r"SequenceAt node 'pick': position 'p' must be known"
    ):
        import_model(m)


def test_a_sequence_used_as_a_tensor_is_an_error() -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=2),
        helper.make_node("Relu", ["s"], ["out"], name="relu"),
    ]
    m = model(nodes, [tensor("x", [2, 3, 4])], [tensor("out", None)])
    with pytest.raises(OnnxImportError, match=r"Relu node 'relu': 's' is a sequence, used where"):
        import_model(m)


def test_a_sequence_input_without_its_layout_is_refused() -> None:
    nodes = [helper.make_node("SequenceLength", ["s"], ["n"])]
    m = model(nodes, [helper.make_value_info("s", SEQ)], [tensor("n", [], TensorProto.INT64)])
    with pytest.raises(OnnxImportError, match="graph input 's' is a sequence"):
        import_model(m)


def _appending_loop(trips_from_input: bool) -> Any:
    """torch.jit.script of ``for i in range(x.size(1)): h = tanh(x[:, i] + h);
    outs.append(h)`` then ``torch.stack(outs, 1)`` / ``torch.cat(outs, 0)`` (the
    exporter's graph, a sequence carried through the Loop), and the last item (``outs[-1]``)
    and the count (``len(outs)``); with ``trips_from_input`` the trip count is fed."""
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["x", "i"], ["xi"], axis=1),
            helper.make_node("Add", ["xi", "h"], ["s"]),
            helper.make_node("Tanh", ["s"], ["h_next"]),
            helper.make_node("SequenceInsert", ["outs", "h_next"], ["outs_next"]),
            helper.make_node("Identity", ["cond"], ["cond_next"]),
        ],
        "body",
        [tensor("i", [], TensorProto.INT64), tensor("cond", [], TensorProto.BOOL),
         tensor("h", ["b", 4]), helper.make_value_info("outs", SEQ)],
        [helper.make_tensor_value_info("cond_next", TensorProto.BOOL, []),
         helper.make_empty_tensor_value_info("h_next"), seq_out("outs_next")],
    )  # fmt: skip
    trips = [] if trips_from_input else [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["n"], axis=0),
    ]  # fmt: skip
    nodes = [
        *trips,
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F32),
        helper.make_node("Loop", ["n", "true", "h0", "empty"], ["h_last", "outs_last"], body=body),
        helper.make_node("ConcatFromSequence", ["outs_last"], ["stacked"], axis=1, new_axis=1),
        helper.make_node("ConcatFromSequence", ["outs_last"], ["joined"], axis=0),
        helper.make_node("SequenceLength", ["outs_last"], ["count"]),
    ]
    inits = [
        i64("one", 1),
        helper.make_tensor("true", TensorProto.BOOL, [], [True]),
    ]
    inputs = [tensor("x", ["b", "t", 4]), tensor("h0", ["b", 4])]
    if trips_from_input:
        inputs.append(tensor("n", [], TensorProto.INT64))
    outs = [tensor("stacked", None), tensor("joined", None), tensor("h_last", None),
            tensor("count", None, TensorProto.INT64), seq_out("outs_last")]  # fmt: skip
    return model(nodes, inputs, outs, inits)


@pytest.mark.parametrize("trips_from_input", [False, True])
def test_a_loop_appending_to_a_sequence_is_one_loop(trips_from_input: bool) -> None:
    m = _appending_loop(trips_from_input)
    if not trips_from_input:
        text = str(import_model(m))  # one mir.loop for every length, not unrolled
        assert text.count("mir.loop") == 1 and "mir.tanh" in text
    rng = np.random.default_rng(0)
    for b, t in [(2, 5), (1, 70), (3, 1)]:
        feeds = {"x": rng.standard_normal((b, t, 4)).astype(np.float32),
                 "h0": rng.standard_normal((b, 4)).astype(np.float32)}  # fmt: skip
        if trips_from_input:
            feeds["n"] = np.array(t, np.int64)
        want = ort.InferenceSession(m.SerializeToString()).run(None, feeds)
        got = list(backend.prepare(m).run(feeds))
        assert isinstance(got[-1], list) and len(got[-1]) == t
        for g, w in zip([*got[:-1], *got[-1]], [*want[:-1], *want[-1]], strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)  # tanh chains over t steps
