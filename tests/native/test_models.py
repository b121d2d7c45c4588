"""Real models natively: the committed ONNX exports and the .mlir examples, compiled C
in their planned arena (poisoned before every run, so a wrong offset is a wrong
answer), against onnxruntime (within 1e-4 of the output's scale) and the reference
executor; builds are cached by fingerprint; errors name the op."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from rlx_compile import CompilePipeline, ModuleBuilder, parse_module
from rlx_compile.conversion.lir_to_c import NativeUnsupportedError
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import ExecutionError
from rlx_compile.ir import graph_params
from rlx_compile.native import NativeBuildError, build
from rlx_compile.testing.onnx_export import export_onnx
from tests.frontends.test_onnx_models import NAMES, model_input

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MLIR = ["small_cnn", "dense_cnn", "inception_cnn", "decoder_block", "kws_dscnn"]


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _close(got: np.ndarray, want: np.ndarray, rel: float) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = float(np.abs(want).max())
    assert float(np.abs(got - want).max()) <= rel * scale


@pytest.mark.parametrize("name", NAMES)
def test_onnx_model_matches_onnxruntime_natively(name: str) -> None:
    model = onnx.load(str(EXAMPLES / "models" / f"{name}.onnx"))
    module = import_model(model)
    params = param_values(model, module)
    result = CompilePipeline(target="cpu", weights_in_arena=False).compile(module)
    native = result.build()
    input_name, x = model_input(model)
    got = native.run({input_name: x}, params, poison=True)["logits"]
    _close(got, _ort(model, {input_name: x})[0], 1e-4)
    _close(got, result.run({input_name: x}, params)["logits"], 1e-5)


def _random_params(module, rng: np.random.Generator) -> dict[str, np.ndarray]:
    from rlx_compile.ir import main_graph

    out = {}
    for leaf in graph_params(main_graph(module)):
        shape = tuple(int(d) for d in leaf.type.shape)
        out[leaf.name] = (rng.standard_normal(shape) * 0.3).astype(leaf.type.dtype.numpy)
    return out


@pytest.mark.parametrize("name", MLIR)
def test_mlir_example_matches_the_reference_natively(name: str) -> None:
    module = parse_module((EXAMPLES / f"{name}.mlir").read_text())
    rng = np.random.default_rng(0)
    params = _random_params(module, rng)
    result = CompilePipeline(target="cpu").compile(module)  # weights in the arena too
    (leaf,) = [op for op in result.lir.body.block.ops if op.name == "mir.input"]
    shape = tuple(int(d) for d in leaf.results[0].type.shape)
    feeds = {leaf.tensor_name.data: rng.standard_normal(shape).astype(np.float32)}
    native = result.build()
    got = native.run(feeds, params, poison=True)
    want = result.run(feeds, params)
    for key in want:
        _close(got[key], want[key], 1e-5)
    if name == "decoder_block":
        return  # rope and attention have no ONNX export here
    lowered = CompilePipeline(
        pipeline="builtin.module(lower-hir-to-mir{policy=fusable},inline,cse,dce)"
    ).compile(module)
    peer = _ort(export_onnx(lowered.module, params), feeds)
    for got_v, want_v in zip(got.values(), peer, strict=True):
        _close(got_v, want_v, 1e-4)


def _division_graph():
    with ModuleBuilder("div") as m:
        a, b = m.input("a", (4,), "i32"), m.input("b", (4,), "i32")
        m.output(m.div(a, b), names=["q"])
    return CompilePipeline(target="cpu").compile(m.module)


@pytest.mark.parametrize("mode", ["compiled", "direct"])
def test_a_kernel_error_names_the_op(mode: str) -> None:
    native = _division_graph().build(mode=mode)
    a = np.array([7, -7, 3, 0], np.int32)
    ok = native.run({"a": a, "b": np.array([2, 2, -1, 5], np.int32)})["q"]
    np.testing.assert_array_equal(ok, [3, -3, -3, 0])
    with pytest.raises(ExecutionError, match=r"^mir\.div.*: integer division or modulo by zero$"):
        native.run({"a": a, "b": np.array([1, 0, 1, 1], np.int32)})


@pytest.mark.parametrize("bad", [5, -6])
def test_gather_elements_refuses_an_index_out_of_range(bad: int) -> None:
    """rlx_gather_elements checks every index against [-n, n) as the executor does
    (negative ones in range wrap)."""
    with ModuleBuilder("ge") as m:
        x, i = m.input("x", (2, 5), "f32"), m.input("i", (2, 2), "i64")
        m.output(m.gather_elements(x, i, 1), names=["y"])
    native = CompilePipeline(target="cpu").compile(m.module).build(mode="direct")
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    ok = native.run({"x": x, "i": np.array([[0, -1], [4, -5]], np.int64)})["y"]
    np.testing.assert_array_equal(ok, [[0, 4], [9, 5]])
    with pytest.raises(ExecutionError, match=r"^mir\.gather_elements.*out of range"):
        native.run({"x": x, "i": np.array([[0, 1], [bad, 2]], np.int64)})


def test_builds_are_cached_by_fingerprint() -> None:
    result = _division_graph()
    first, second = result.build(), result.build()
    assert first.source_dir == second.source_dir
    assert second.build_times.model == 0.0 and second.build_times.runtime == 0.0
    files = sorted(p.name for p in first.source_dir.iterdir())
    assert files == ["libdiv.so", "rlx_div.c", "rlx_div.h"]


def test_an_op_without_a_native_kernel_is_a_clear_error() -> None:
    with ModuleBuilder("narrow") as m:
        x = m.input("x", (3,), "f32")
        m.output(m.cast(m.cast(x, "f8e4m3"), "f32"), names=["y"])
    result = CompilePipeline(target="cpu").compile(m.module)
    with pytest.raises(NativeUnsupportedError, match=r"mir\.cast x2 \(f8e4m3 tensors"):
        result.build(mode="direct")


def test_gpu_targets_are_legalization_only() -> None:
    with ModuleBuilder("g") as m:
        m.output(m.relu(m.input("x", (4,))), names=["y"])
    result = CompilePipeline(target="cuda").compile(m.module)
    with pytest.raises(NativeBuildError, match="target cuda has no native code generator"):
        build(result.lir, target="cuda")


def test_the_arena_holds_the_planned_tensors() -> None:
    """After a run the output's slot holds the output: kernels wrote where the plan says."""
    result = _division_graph()
    native = result.build()
    out = native.run({"a": np.arange(4, dtype=np.int32), "b": np.full(4, 2, np.int32)})["q"]
    (slot,) = [t.arena_offset for t in native.program.outputs]
    assert slot is not None
    np.testing.assert_array_equal(native.arena[slot : slot + 16].view(np.int32), out)
