"""``ir.fewer_collections``: the collector's thresholds raised while IR is built in bulk
and restored exactly when the last holder leaves (nested, across threads, on error)."""

from __future__ import annotations

import gc
import threading

import pytest
from onnx import TensorProto, helper

from rlx_compile.frontends.onnx import import_model
from rlx_compile.ir import BUILD_GC_THRESHOLD, fewer_collections


def test_raised_inside_restored_after_nesting_and_errors() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold()[0] >= BUILD_GC_THRESHOLD
        assert gc.get_threshold()[1:] == before[1:]
        with pytest.raises(RuntimeError), fewer_collections():
            raise RuntimeError("boom")
        assert gc.get_threshold()[0] >= BUILD_GC_THRESHOLD  # the outer holder is still in
    assert gc.get_threshold() == before


def test_threads_leaving_out_of_order_restore_the_original() -> None:
    before = gc.get_threshold()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[int] = []

    def a() -> None:
        with fewer_collections():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b() -> None:
        a_in.wait(5)
        with fewer_collections():
            b_in.set()
            a_out.wait(5)
            seen.append(gc.get_threshold()[0])  # A left first: still raised for B

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen and seen[0] >= BUILD_GC_THRESHOLD
    assert gc.get_threshold() == before


def test_import_leaves_the_thresholds_as_they_were() -> None:
    before = gc.get_threshold()
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    assert gc.get_threshold() == before
