"""Shared by the tests of the reductions that import as one op but mean a chain
(``mir.reduce_log_sum_exp``, ``mir.reduce_sum_square``, ``mir.reduce_l2``,
``mir.reduce_l1``, ``mir.reduce_log_sum``): the one-node ONNX model, and the op's
result next to its chain's on the executor."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper
from xdsl.ir import SSAValue

from rlx_compile import ModuleBuilder
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter import run


def onnx_reduce(
    op_type: str, axes: list[int] | None, keepdims: int, opset: int, dtype: int
) -> onnx.ModelProto:
    """One ``op_type`` node over x[2, 3, 4]: axes an attribute before opset 18, an input
    from it on; None leaves them out (every axis)."""
    inits, inputs = [], ["x"]
    attrs: dict[str, object] = {"keepdims": keepdims}
    if axes is not None:
        if opset >= 18:
            inits.append(helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes))
            inputs.append("axes")
        else:
            attrs["axes"] = axes
    node = helper.make_node(op_type, inputs, ["y"], **attrs)  # type: ignore[arg-type]
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", dtype, [2, 3, 4])],
        [helper.make_tensor_value_info("y", dtype, None)], inits,
    )  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return m


Build = Callable[[ModuleBuilder, SSAValue], SSAValue]


def op_and_chain(x: np.ndarray, name: str, op: Build, chain: Build) -> tuple[np.ndarray, ...]:
    """The executor's results of the graph ``op`` builds (which holds op ``name``) and of
    the one ``chain`` builds (which does not)."""
    results = []
    for fused, build in ((True, op), (False, chain)):
        with ModuleBuilder("g") as m:
            m.output(build(m, m.input("x", x.shape, DType.from_numpy(x.dtype))), names=["y"])
        assert (name in {o.name for o in m.module.walk()}) == fused
        with np.errstate(all="ignore"):
            results.append(run(m.module, {"x": x})["y"])
    return tuple(results)


def assert_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (got, want)
