"""Imported models carry their weights: the initializers that become ``mir.param`` stay
with the module (the ``rlx.weights`` module attribute), shared by its copies, bound when
it runs unless params are given; their text holds only a count."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from rlx_compile.dialects.common import WEIGHTS_ATTR, kept_weights
from rlx_compile.frontends.onnx import import_model, importer
from rlx_compile.interpreter import ExecutionError, run
from rlx_compile.ir import fingerprint, parse_module, print_module
from rlx_compile.pipeline import CompilePipeline
from rlx_compile.tools import compile as compile_tool


def mlp(path: Path, hidden: int = 64, seed: int = 0) -> tuple[Path, dict[str, np.ndarray]]:
    r = np.random.default_rng(seed)
    w1 = r.normal(size=(8, hidden)).astype(np.float32)
    w2 = r.normal(size=(hidden, 3)).astype(np.float32)
    b1 = r.normal(size=(hidden,)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Relu", ["hb"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (w2, "w2"), (b1, "b1"))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return path, {"w1": w1, "w2": w2, "b1": b1}


def expected(x: np.ndarray, w: dict[str, np.ndarray]) -> np.ndarray:
    return np.maximum(x @ w["w1"] + w["b1"], 0) @ w["w2"]


def test_compile_of_an_imported_model_runs_without_params(tmp_path: Path) -> None:
    path, w = mlp(tmp_path / "m.onnx")
    x = np.random.default_rng(1).normal(size=(2, 8)).astype(np.float32)
    result = CompilePipeline().compile(import_model(path))
    np.testing.assert_allclose(result.run({"x": x})["y"], expected(x, w), rtol=1e-5, atol=1e-5)
    # the reference executor on the imported module itself too
    np.testing.assert_allclose(run(import_model(path), {"x": x})["y"], expected(x, w), rtol=1e-5)


def test_native_code_of_an_imported_model_runs_without_params(tmp_path: Path) -> None:
    from rlx_compile.native import native_available

    if not native_available():
        pytest.skip("no C compiler")
    path, w = mlp(tmp_path / "m.onnx")
    x = np.random.default_rng(1).normal(size=(2, 8)).astype(np.float32)
    native = CompilePipeline().compile(import_model(path)).build()
    np.testing.assert_allclose(native.run({"x": x})["y"], expected(x, w), rtol=1e-5, atol=1e-5)
    other = {**w, "w2": w["w2"] * -2.0}  # params given still replace them
    np.testing.assert_allclose(native.run({"x": x}, other)["y"], expected(x, other), rtol=1e-5)


def test_params_given_to_run_override_the_kept_ones(tmp_path: Path) -> None:
    path, w = mlp(tmp_path / "m.onnx")
    x = np.ones((2, 8), np.float32)
    other = {**w, "w2": w["w2"] * -2.0}
    result = CompilePipeline().compile(import_model(path))
    np.testing.assert_allclose(
        result.run({"x": x}, {"w2": other["w2"]})["y"], expected(x, other), rtol=1e-5
    )


def test_every_stage_shares_the_arrays_and_text_holds_only_a_count(tmp_path: Path) -> None:
    path, w = mlp(tmp_path / "m.onnx", hidden=4096)  # ~200 KB of weights
    module = import_model(path)
    result = CompilePipeline(keep_stages=True).compile(module)
    kept = module.attributes[WEIGHTS_ATTR]
    assert all(s.module.attributes[WEIGHTS_ATTR] is kept for s in result.stages)
    assert result.module.attributes[WEIGHTS_ATTR] is kept
    arrays = kept_weights(module)
    assert sorted(arrays) == ["b1", "w1", "w2"]
    assert not arrays["w1"].flags.writeable  # shared, so read-only
    nbytes = sum(a.nbytes for a in w.values())
    text = print_module(module)
    assert f"#rlx.weights<3 arrays, {nbytes} bytes>" in text
    assert len(text) < 4000  # no weight data in the text (nor in the fingerprint)
    # the values do not enter the text, so other weights give the same fingerprint
    other, _ = mlp(tmp_path / "other.onnx", hidden=4096, seed=1)
    assert fingerprint(import_model(other)) == fingerprint(module)


def test_a_module_parsed_from_text_needs_its_params(tmp_path: Path) -> None:
    path, w = mlp(tmp_path / "m.onnx")
    parsed = parse_module(print_module(import_model(path)))
    x = np.ones((2, 8), np.float32)
    with pytest.raises(ExecutionError, match="missing param"):
        run(parsed, {"x": x})
    np.testing.assert_allclose(run(parsed, {"x": x}, w)["y"], expected(x, w), rtol=1e-5)


def test_initializers_as_constants_keep_nothing(tmp_path: Path) -> None:
    path, _ = mlp(tmp_path / "m.onnx")
    assert WEIGHTS_ATTR not in import_model(path, initializers="constants").attributes


@pytest.mark.parametrize("weights", ["arena", "outside"])
def test_cli_weights_flag(weights: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = mlp(tmp_path / "m.onnx", hidden=256)
    out = tmp_path / weights
    assert compile_tool.run([str(path), "--weights", weights, "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    weight_bytes = (8 * 256 + 256 * 3 + 256) * 4
    if weights == "arena":
        assert summary["arena_bytes"] >= weight_bytes
    else:
        assert summary["arena_bytes"] < weight_bytes
        assert "allocate-params=false" in summary["pipeline"]


def test_a_large_model_is_parsed_from_its_mapped_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From ``MAPPED_PARSE_BYTES`` up, a model is parsed from its file mapped into memory
    (not read by ``onnx.load``): the same module and weights as from its bytes, nothing
    left referring to the mapping, and a damaged large file is still a one-line error."""
    path, w = mlp(tmp_path / "big.onnx", hidden=40_000)  # 1.9 MB of weights
    assert path.stat().st_size >= importer.MAPPED_PARSE_BYTES
    from_bytes = import_model(path.read_bytes())

    def no_load(*args: object, **kwargs: object) -> None:
        raise AssertionError("onnx.load read a large binary model")

    monkeypatch.setattr(onnx, "load", no_load)
    mapped = import_model(path)
    assert print_module(mapped) == print_module(from_bytes)
    path.unlink()
    for name, array in w.items():
        np.testing.assert_array_equal(kept_weights(mapped)[name], array)
    x = np.random.default_rng(1).normal(size=(2, 8)).astype(np.float32)
    np.testing.assert_allclose(run(mapped, {"x": x})["y"], expected(x, w), rtol=1e-4, atol=1e-3)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\xff" * importer.MAPPED_PARSE_BYTES)
    with pytest.raises(importer.OnnxImportError, match="not a readable ONNX model"):
        import_model(bad)


def test_a_small_binary_model_is_parsed_from_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below ``MAPPED_PARSE_BYTES`` a binary model is parsed from the file's bytes (not
    read by ``onnx.load``): the same module as from its bytes, and a damaged small file
    is a one-line error."""
    path, _ = mlp(tmp_path / "small.onnx", hidden=16)
    assert path.stat().st_size < importer.MAPPED_PARSE_BYTES
    from_bytes = print_module(import_model(path.read_bytes()))

    def no_load(*args: object, **kwargs: object) -> None:
        raise AssertionError("onnx.load read a binary model")

    monkeypatch.setattr(onnx, "load", no_load)
    assert print_module(import_model(path)) == from_bytes
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\xff" * 64)
    with pytest.raises(importer.OnnxImportError, match="not a readable ONNX model"):
        import_model(bad)


def test_a_large_model_in_text_format_is_read_as_text(tmp_path: Path) -> None:
    path, _ = mlp(tmp_path / "big.onnx", hidden=20_000)
    text = tmp_path / "big.txtpb"
    onnx.save(onnx.load(path), text, format="textproto")
    assert text.stat().st_size >= importer.MAPPED_PARSE_BYTES
    assert print_module(import_model(text)) == print_module(import_model(path))


def test_a_large_model_that_cannot_be_mapped_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = mlp(tmp_path / "big.onnx", hidden=40_000)
    want = print_module(import_model(path))

    def unmappable(*args: object, **kwargs: object) -> None:
        raise OSError("mmap: no such device")

    monkeypatch.setattr(importer.mmap, "mmap", unmappable)
    assert print_module(import_model(path)) == want
