"""Tile repeats an axis of size 1 by broadcasting it: a batch tiled from one row is one
``mir.expand``, as onnxruntime's Tile is one kernel; other repeated axes broadcast a new
axis of size 1 before them, then a view merges each with it (the expand takes the
leading ones itself). Every form gives onnxruntime's values."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import import_model
from rlx_compile.pipeline import CompilePipeline

LEAVES = ("mir.input", "mir.param", "mir.constant", "lir.return")

CASES = {
    # shape, repeats, the LIR's compute ops
    "rows_from_one": ((1, 8), (4, 1), ["mir.expand"]),
    "size_one_axes": ((1, 3, 1), (2, 1, 4), ["mir.expand"]),
    "leading_axis": ((2, 8), (3, 1), ["mir.expand", "lir.view"]),
    "every_axis": ((2, 3, 4), (2, 3, 2), ["lir.view", "mir.expand", "lir.view"]),
    "mixed": ((1, 3, 2), (5, 2, 1), ["mir.expand", "lir.view"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tile_with_onnxruntimes_values(case: str) -> None:
    shape, repeats, ops = CASES[case]
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "r"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(repeats, np.int64), "r")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    lir = CompilePipeline(target="cpu").compile(import_model(model)).lir
    assert lir is not None
    assert [op.name for op in lir.body.block.ops if op.name not in LEAVES] == ops
    x = np.random.default_rng(41).standard_normal(shape).astype(np.float32)
    (got,) = backend.prepare(model).run({"x": x})
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(got, session.run(None, {"x": x})[0])
    np.testing.assert_array_equal(got, np.tile(x, repeats))
