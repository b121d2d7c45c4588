"""rlx_compile.backend on models with open dims: one symbolic compile, one plan per shape
signature (cached, least recently used evicted), bindings read from the feeds with clear
errors when they disagree, the static fallback for empty dims, baked shape inputs on top
of open dims, and real dynamic-axes exports (tests/data/dynamic) against onnxruntime."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend

F = TensorProto.FLOAT
DYNAMIC = Path(__file__).resolve().parents[1] / "data" / "dynamic"
vi = helper.make_tensor_value_info


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[tuple[str, int]],
    inits: tuple[onnx.TensorProto, ...] = (),
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [vi(o, t, None) for o, t in outputs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _matmul_model() -> onnx.ModelProto:
    w = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    return _model(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "m"], ["a"]),
         helper.make_node("Relu", ["a"], ["y"])],
        [vi("x", F, ["batch", "seq", 8]), vi("m", F, ["batch", 1, 8])], [("y", F)],
        (helper.make_tensor("w", F, [8, 8], w.reshape(-1)),),
    )  # fmt: skip


def _reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return ort.InferenceSession(model.SerializeToString()).run(None, feeds)


def test_open_dims_compile_once_and_plan_per_shape() -> None:
    model = _matmul_model()
    rep = backend.prepare(model)
    compiled = rep.compiled
    assert compiled is not None and compiled.result.lir is None  # MIR, symbolic
    assert [name for name, _, _ in compiled.open_dims] == ["x", "m"]
    rng = np.random.default_rng(1)

    def feeds(b: int, s: int) -> dict[str, np.ndarray]:
        return {"x": rng.standard_normal((b, s, 8)).astype(np.float32),
                "m": rng.standard_normal((b, 1, 8)).astype(np.float32)}  # fmt: skip

    for b, s in ((1, 4), (2, 7), (1, 4)):
        f = feeds(b, s)
        np.testing.assert_allclose(rep.run(f)[0], _reference(model, f)[0], rtol=1e-5, atol=1e-6)
    # The repeat of (1, 4) hit the cache: two plans, the hit now most recently used.
    assert compiled.cached_shapes == [((2, 7, 8), (2, 1, 8)), ((1, 4, 8), (1, 1, 8))]
    first = compiled.planned_for(feeds(1, 4))
    assert compiled.planned_for(feeds(1, 4)) is first
    assert first.result.lir is not None and first.result.lir.arena_bytes > 0
    assert rep.compiled is compiled  # one symbolic compile served every shape


def test_the_shape_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "CACHED_SHAPES", 3)
    rep = backend.prepare(_matmul_model())
    for s in range(1, 6):
        rep.run({"x": np.ones((1, s, 8), np.float32), "m": np.ones((1, 1, 8), np.float32)})
    assert rep.compiled is not None
    assert [key[0][1] for key in rep.compiled.cached_shapes] == [3, 4, 5]


def test_feeds_that_disagree_on_a_dim_name_both_inputs() -> None:
    inputs = [vi("a", F, ["batch size", 4]), vi("b", F, ["batch size", 4])]
    model = _model([helper.make_node("Add", ["a", "b"], ["y"])], inputs, [("y", F)])
    rep = backend.prepare(model)
    with pytest.raises(ValueError, match=r"dim 'batch size' is 2 in input 'a' axis 0 but 3 in "
                       r"input 'b' axis 0"):  # fmt: skip
        rep.run([np.ones((2, 4), np.float32), np.ones((3, 4), np.float32)])
    with pytest.raises(ValueError, match=r"input 'a' has shape \[2\], the model takes rank 2"):
        rep.run([np.ones(2, np.float32), np.ones((2, 4), np.float32)])


def test_an_empty_dim_compiles_from_a_static_import() -> None:
    model = _matmul_model()
    rep = backend.prepare(model)
    f = {"x": np.ones((2, 0, 8), np.float32), "m": np.ones((2, 1, 8), np.float32)}
    (y,) = rep.run(f)
    assert y.shape == (2, 0, 8)
    assert rep.compiled is not None
    planned = rep.compiled.planned_for(f)
    assert "!rlx.tensor<[2, 0, 8], f32>" in planned.result.text()


def test_sizes_used_as_data_and_symbolic_starts_are_bound_per_shape() -> None:
    # Shape(x) as an output (mir.dims folds to a constant per plan) and x[:, -1:] (a
    # narrow starting at seq - 1) through the specialized plans.
    model = _model(
        [helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("Slice", ["x", "start", "end", "axis"], ["last"])],
        [vi("x", F, ["batch", "seq"])], [("shape", TensorProto.INT64), ("last", F)],
        (helper.make_tensor("start", TensorProto.INT64, [1], [-1]),
         helper.make_tensor("end", TensorProto.INT64, [1], [2**62]),
         helper.make_tensor("axis", TensorProto.INT64, [1], [1])),
    )  # fmt: skip
    rep = backend.prepare(model)
    for b, s in ((1, 3), (2, 5)):
        x = np.arange(b * s, dtype=np.float32).reshape(b, s)
        shape, last = rep.run([x])
        np.testing.assert_array_equal(shape, [b, s])
        np.testing.assert_array_equal(last, x[:, -1:])


def test_baked_shape_inputs_compose_with_open_dims() -> None:
    # A Reshape target fed by an input is baked per value; the batch stays open in each
    # of those compiles and is planned per shape.
    inputs = [vi("x", F, ["batch", 6]), vi("shape", TensorProto.INT64, [3])]
    model = _model([helper.make_node("Reshape", ["x", "shape"], ["y"])], inputs, [("y", F)])
    rep = backend.prepare(model)
    assert rep.compiled is None and rep.needs_values == ("shape",)
    for b, target in ((1, [-1, 2, 3]), (4, [-1, 2, 3]), (4, [-1, 3, 2]), (1, [-1, 2, 3])):
        x = np.arange(b * 6, dtype=np.float32).reshape(b, 6)
        (y,) = rep.run([x, np.array(target, np.int64)])
        np.testing.assert_array_equal(y, x.reshape(target))
    assert len(rep._by_value) == 2
    per_value = list(rep._by_value.values())
    assert [len(c.cached_shapes) for c in per_value] == [1, 2]  # [-1, 3, 2] once, [-1, 2, 3] twice


def _encoder_feeds(rng: np.random.Generator, b: int, s: int) -> dict[str, np.ndarray]:
    mask = (rng.random((b, s)) < 0.3).astype(np.float32)
    mask[:, 0] = 0  # every row attends to something
    return {"x": rng.standard_normal((b, s, 16)).astype(np.float32), "mask": mask}


def _image_feeds(rng: np.random.Generator, n: int, h: int, w: int) -> dict[str, np.ndarray]:
    return {"image": rng.standard_normal((n, 3, h, w)).astype(np.float32)}


Feeds = Callable[..., dict[str, np.ndarray]]
EXPORTS: list[tuple[str, Feeds, list[tuple[int, ...]]]] = [
    ("encoder_dynamic_axes", _encoder_feeds, [(1, 3), (2, 7), (3, 16), (2, 7)]),
    ("encoder_dynamo", _encoder_feeds, [(1, 2), (2, 9), (4, 5)]),
    ("cnn_dynamic_hw", _image_feeds, [(1, 8, 8), (2, 16, 12), (1, 9, 21)]),
]


@pytest.mark.parametrize(("name", "make_feeds", "shapes"), EXPORTS, ids=[e[0] for e in EXPORTS])
def test_dynamic_exports_match_onnxruntime(
    name: str, make_feeds: Feeds, shapes: list[tuple[int, ...]]
) -> None:
    path = DYNAMIC / f"{name}.onnx"
    rep = backend.prepare(onnx.load(str(path)))
    assert rep.compiled is not None and rep.compiled.open_dims
    session = ort.InferenceSession(str(path))
    rng = np.random.default_rng(0)
    for shape in shapes:
        feeds = make_feeds(rng, *shape)
        want = session.run(None, feeds)
        got = rep.run(feeds)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    assert len(rep.compiled.cached_shapes) == len(set(shapes))


def test_a_model_whose_symbolic_import_fails_is_imported_per_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where the symbolic import (or compile) fails, each shape signature gets a static
    # import at its shapes: the model still runs at every shape, as onnxruntime runs it.
    model = _matmul_model()
    real = backend.import_model

    def symbolic_fails(model: onnx.ModelProto, **kw: object) -> object:
        if not kw.get("dynamic_dims"):
            raise backend.OnnxImportError("MatMul: needs static shapes")
        return real(model, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(backend, "import_model", symbolic_fails)
    rep = backend.prepare(model)
    compiled = rep.compiled
    assert compiled is not None and compiled.result is None
    assert str(compiled.symbolic_error) == "MatMul: needs static shapes"
    rng = np.random.default_rng(2)
    for b, s in ((1, 3), (2, 5), (1, 3)):
        f = {"x": rng.standard_normal((b, s, 8)).astype(np.float32),
             "m": rng.standard_normal((b, 1, 8)).astype(np.float32)}  # fmt: skip
        np.testing.assert_allclose(rep.run(f)[0], _reference(model, f)[0], rtol=1e-5, atol=1e-6)
    assert compiled.cached_shapes == [((2, 5, 8), (2, 1, 8)), ((1, 3, 8), (1, 1, 8))]
    with pytest.raises(ValueError, match=r"dim 'batch' is 1 in input 'x' axis 0 but 2 in input"):
        rep.run({"x": np.ones((1, 3, 8), np.float32), "m": np.ones((2, 1, 8), np.float32)})
    # A model with static shapes has nothing to fall back to: its import error stands.
    static = _model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [2])], [("y", F)])
    with pytest.raises(backend.OnnxImportError, match="needs static shapes"):
        backend.prepare(static)


def test_resize_of_dynamic_height_and_width_matches_onnxruntime() -> None:
    model = _model(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear")],
        [vi("x", F, ["N", 2, "H", "W"])], [("y", F)],
        (helper.make_tensor("scales", F, [4], [1, 1, 2, 1.5]),),
    )  # fmt: skip
    rep = backend.prepare(model)
    rng = np.random.default_rng(3)
    for shape in ((1, 2, 4, 4), (2, 2, 5, 6)):
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(
            rep.run([x])[0], _reference(model, {"x": x})[0], rtol=1e-5, atol=1e-6
        )
