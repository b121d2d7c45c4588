"""Scan and Loop (unrolled) against onnxruntime: states and several scan inputs and
outputs, reverse directions, non-zero and negative axes, a body reading an outer value
and holding an initializer of its own; loops with trip counts, conditions that fold,
and a condition known only at run time (a mir.loop)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend

F = TensorProto.FLOAT
vi = helper.make_tensor_value_info


def scan_model(in_dirs: list[int], in_axes: list[int], out_dirs: list[int], out_axes: list[int]):  # type: ignore[no-untyped-def]
    # state s [2]; scan inputs a, c (one row each per step) -> s' = s + a·w + c, y = s'·2, z = a - c
    body = helper.make_graph(
        [helper.make_node("Mul", ["a_t", "w"], ["aw"]),
         helper.make_node("Add", ["s", "aw"], ["t1"]),
         helper.make_node("Add", ["t1", "c_t"], ["s_next"]),
         helper.make_node("Mul", ["s_next", "two"], ["y_t"]),
         helper.make_node("Sub", ["a_t", "c_t"], ["d_t"])],
        "body",
        [vi("s", F, [2]), vi("a_t", F, [2]), vi("c_t", F, [2])],
        [vi("s_next", F, [2]), vi("y_t", F, [2]), vi("d_t", F, [2])],
        [helper.make_tensor("two", F, [], [2.0])],
    )  # fmt: skip
    node = helper.make_node(
        "Scan", ["s0", "a", "c"], ["s_final", "ys", "zs"], body=body, num_scan_inputs=2,
        scan_input_directions=in_dirs, scan_input_axes=in_axes,
        scan_output_directions=out_dirs, scan_output_axes=out_axes,
    )  # fmt: skip
    shape_a = [5, 2] if in_axes[0] == 0 else [2, 5]
    shape_c = [5, 2] if in_axes[1] == 0 else [2, 5]
    graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["w"]), node, helper.make_node("Abs", ["x"], ["x_out"])],
        "g",
        [vi("s0", F, [2]), vi("a", F, shape_a), vi("c", F, shape_c), vi("x", F, [2])],
        [vi("s_final", F, None), vi("ys", F, None), vi("zs", F, None), vi("x_out", F, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)]), shape_a, shape_c


@pytest.mark.parametrize(
    ("in_dirs", "in_axes", "out_dirs", "out_axes"),
    [([0, 0], [0, 0], [0, 0], [0, 0]), ([1, 0], [0, 1], [0, 1], [1, 0]),
     ([0, 1], [1, 1], [1, 0], [-1, 1])],
)  # fmt: skip
def test_against_onnxruntime(
    in_dirs: list[int], in_axes: list[int], out_dirs: list[int], out_axes: list[int]
) -> None:
    model, shape_a, shape_c = scan_model(in_dirs, in_axes, out_dirs, out_axes)
    rng = np.random.default_rng(sum(in_dirs) + sum(in_axes))
    feeds = {"s0": rng.standard_normal(2), "a": rng.standard_normal(shape_a),
             "c": rng.standard_normal(shape_c), "x": rng.standard_normal(2)}  # fmt: skip
    feeds = {k: v.astype(np.float32) for k, v in feeds.items()}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def loop_model(trip_count: int | None, stop_after: int | None):  # type: ignore[no-untyped-def]
    """acc' = acc·0.5 + x·i; scan output acc'; the condition is i < stop_after (folds,
    the iteration number being a constant of the unrolled step) or passes through."""
    nodes = [
        helper.make_node("Cast", ["i"], ["i_f"], to=F),
        helper.make_node("Mul", ["x", "i_f"], ["xi"]),
        helper.make_node("Mul", ["acc", "half"], ["acc_half"]),
        helper.make_node("Add", ["acc_half", "xi"], ["acc_next"]),
        helper.make_node("Identity", ["acc_next"], ["acc_scan"]),
    ]
    if stop_after is None:
        nodes.append(helper.make_node("Identity", ["cond"], ["cond_next"]))
    else:
        nodes.append(helper.make_node("Less", ["i", "stop"], ["cond_next"]))
    body = helper.make_graph(
        nodes, "body",
        [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("acc", F, [3])],
        [vi("cond_next", TensorProto.BOOL, []), vi("acc_next", F, [3]), vi("acc_scan", F, [3])],
        [helper.make_tensor("half", F, [], [0.5]),
         helper.make_tensor("stop", TensorProto.INT64, [], [stop_after or 0])],
    )  # fmt: skip
    inits = [helper.make_tensor("cond0", TensorProto.BOOL, [], [True])]
    inputs = ["", "cond0", "acc0"]
    if trip_count is not None:
        inits.append(helper.make_tensor("M", TensorProto.INT64, [], [trip_count]))
        inputs[0] = "M"
    graph = helper.make_graph(
        [helper.make_node("Loop", inputs, ["acc_final", "accs"], body=body)], "g",
        [vi("acc0", F, [3]), vi("x", F, [3])],
        [vi("acc_final", F, None), vi("accs", F, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


@pytest.mark.parametrize(("trip_count", "stop_after"), [(6, None), (6, 3), (None, 4)])
def test_loop_against_onnxruntime(trip_count: int | None, stop_after: int | None) -> None:
    model = loop_model(trip_count, stop_after)
    rng = np.random.default_rng(1)
    feeds = {"acc0": rng.standard_normal(3).astype(np.float32),
             "x": rng.standard_normal(3).astype(np.float32)}  # fmt: skip
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_a_run_time_loop_condition_becomes_a_loop_op() -> None:
    """A condition computed from data stops the unrolling (which is rolled back): the
    loop is one mir.loop, its scan output as long as the run decides."""
    from rlx_compile.frontends.onnx import import_model

    model = loop_model(5, None)
    graph = model.graph
    # Condition from data: max(acc') > 0.5 -- only known when the model runs.
    body = graph.node[0].attribute[0].g
    del body.node[-1]
    body.node.extend([helper.make_node("ReduceMax", ["acc_next"], ["m"], keepdims=0),
                      helper.make_node("Greater", ["m", "half"], ["cond_next"])])  # fmt: skip
    module = import_model(model)
    names = [op.name for op in module.walk()]
    assert names.count("mir.loop") == 1 and "mir.tanh" not in names
    assert names.count("mir.mul") == 2  # the body once, not unrolled
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for seed in range(4):
        rng = np.random.default_rng(seed)
        feeds = {"acc0": rng.standard_normal(3).astype(np.float32) + 1,
                 "x": rng.standard_normal(3).astype(np.float32)}  # fmt: skip
        want = session.run(None, feeds)
        got = backend.prepare(model).run(feeds)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
