"""Det against numpy (LAPACK getrf): batches, sizes 1 to 6, matrices that need pivoting
(zero leading entries), singular ones, f32 and f64."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend

TYPES = [(TensorProto.DOUBLE, np.float64, 1e-10), (TensorProto.FLOAT, np.float32, 1e-4)]


@pytest.mark.parametrize("m", [1, 2, 3, 4, 6])
@pytest.mark.parametrize(("elem", "np_type", "tol"), TYPES)
def test_against_numpy(m: int, elem: int, np_type: type, tol: float) -> None:
    rng = np.random.default_rng(m)
    x = rng.standard_normal([3, 2, m, m])
    x[0, 0, 0, 0] = 0.0  # the first pivot must come from another row
    x[1, 1, :, 0] = x[1, 1, :, -1] if m > 1 else 0.0  # singular (two equal columns)
    x = x.astype(np_type)
    graph = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", elem, x.shape)],
        [helper.make_tensor_value_info("y", elem, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    (got,) = backend.prepare(model).run({"x": x})
    want = np.linalg.det(x.astype(np.float64))
    assert got.shape == want.shape and got.dtype == np_type
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
