"""TensorScatter (the KV-cache write) against onnx's reference evaluator: write positions
fed at run time, both modes (circular wrapping past the end), several axes."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import rlx_compile.backend as backend

F = TensorProto.FLOAT


@pytest.mark.parametrize(
    ("cache", "seq", "axis", "mode", "starts"),
    [
        ([3, 2, 8, 4], 3, -2, "linear", [0, 5, 2]),
        ([3, 2, 8, 4], 3, -2, "circular", [6, 7, 0]),
        ([2, 6, 3], 4, 1, "circular", [5, 3]),
        ([2, 3, 5, 6], 2, 3, "linear", [4, 0]),
        ([2, 6, 5], 5, 1, "linear", None),
    ],
)
def test_against_the_reference(
    cache: list[int], seq: int, axis: int, mode: str, starts: list[int] | None
) -> None:
    update = list(cache)
    update[axis] = seq
    inputs = ["past", "update"] + (["idx"] if starts is not None else [])
    node = helper.make_node("TensorScatter", inputs, ["present"], axis=axis, mode=mode)
    infos = [helper.make_tensor_value_info("past", F, cache),
             helper.make_tensor_value_info("update", F, update)]  # fmt: skip
    if starts is not None:
        infos.append(helper.make_tensor_value_info("idx", TensorProto.INT64, [cache[0]]))
    graph = helper.make_graph(
        [node], "g", infos, [helper.make_tensor_value_info("present", F, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    rng = np.random.default_rng(len(cache) + seq)
    feeds = {"past": rng.standard_normal(cache).astype(np.float32),
             "update": rng.standard_normal(update).astype(np.float32)}  # fmt: skip
    if starts is not None:
        feeds["idx"] = np.array(starts, np.int64)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    (got,) = backend.prepare(model).run(feeds)
    np.testing.assert_array_equal(got, want)
