"""rlx-compile as users run it: the files it writes (and that they are right: the LIR
runs, the pictures are well-formed SVG naming every buffer), the summary and JSON,
precision and quantisation options, and one-line errors with status 1."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import shlex
import stat
import subprocess
import sys
import weakref
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from rlx_compile.dialects import lir
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import ExecutionError, run_arena
from rlx_compile.ir import BUILD_GC_THRESHOLD, main_graph, parse_module
from rlx_compile.memory.lir_liveness import derive
from rlx_compile.tools.cli import compile_gc
from rlx_compile.tools.compile import run

REPO = Path(__file__).resolve().parents[2]
RLX_COMPILE = str(Path(sys.executable).parent / "rlx-compile")
RESNET = REPO / "examples" / "models" / "resnet18.onnx"
DECODER = REPO / "examples" / "decoder_block.mlir"
DYNAMIC = REPO / "tests" / "data" / "dynamic"
SVG = "{http://www.w3.org/2000/svg}"
KEYS = {"nodes_in", "nodes_out", "arena_bytes", "lower_bound_bytes", "naive_bytes",
        "compile_seconds", "dispatch", "fusion"}  # fmt: skip


def rlx_compile(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RLX_COMPILE, *args], capture_output=True, text=True, check=False)


def test_onnx_model_outputs_are_complete_and_right(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = rlx_compile(str(RESNET), "--target", "cpu", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("resnet18.onnx: 49 nodes in -> ")
    assert "arena" in r.stdout and "lower bound" in r.stdout
    names = {"model.lir.mlir", "fusion.txt", "dispatch.txt", "graph.svg", "memory.svg",
             "summary.json"}  # fmt: skip
    assert {p.name for p in out.iterdir()} == names
    # Outputs get the mode a plain open() gives (the umask decides), not mkstemp's 0o600.
    mask = os.umask(0)
    os.umask(mask)
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()} == {0o666 & ~mask}
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) >= KEYS
    assert summary["nodes_in"] == 49
    assert summary["lower_bound_bytes"] <= summary["arena_bytes"] <= summary["naive_bytes"]
    assert summary["dispatch"]["unsupported"] == 0 and summary["dispatch"]["native"] > 0
    assert "fusion report" in (out / "fusion.txt").read_text()
    assert "dispatch report" in (out / "dispatch.txt").read_text()

    # The written LIR is the compiled model: it runs and matches onnxruntime.
    model = onnx.load(str(RESNET))
    module = parse_module((out / "model.lir.mlir").read_text())
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    got = run_arena(module, {"image": x}, param_values(model, import_model(model)))["logits"]
    want = ort.InferenceSession(str(RESNET), providers=["CPUExecutionProvider"]).run(
        None, {"image": x}
    )[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))

    # The memory picture has one rectangle with a hover title per buffer of the plan.
    tree = ET.parse(out / "memory.svg")
    titled = [el for el in tree.iter(f"{SVG}rect") if el.find(f"{SVG}title") is not None]
    storages = derive(module.ops.first).storages  # type: ignore[arg-type]
    whole_arena = [t for t in titled if t.find(f"{SVG}title").text]  # type: ignore[union-attr]
    assert len(whole_arena) >= len(storages)
    labels = " ".join(t.find(f"{SVG}title").text for t in titled)  # type: ignore[union-attr,misc]
    assert all(s.label() in labels for s in storages)
    graph = ET.parse(out / "graph.svg")
    boxes = [g for g in graph.iter(f"{SVG}g") if g.find(f"{SVG}title") is not None]
    assert len(boxes) >= summary["nodes_out"]


def test_hir_model_json_reports_fused_ops(tmp_path: Path) -> None:
    r = rlx_compile(str(DECODER), "--out", str(tmp_path), "--json", "--strategy", "rlx")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert set(summary) >= KEYS
    # The HIR blocks lower straight to fused ops (policy direct), so fuse finds nothing
    # more to do: the graph's fused ops and the fuse pass's own count are both reported.
    assert summary["fused_ops"] == {
        "fused_attention_block": 1,
        "fused_residual_rms_norm": 1,
        "fused_swiglu": 1,
    }
    assert summary["fused"] == 3
    assert isinstance(summary["fusion"], dict)
    assert "strategy=rlx" in summary["pipeline"]
    assert set(summary["dispatch"]) == {"native", "common_ir", "rewritten", "unsupported"}


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_an_in_process_compile_leaves_the_collector_as_it_was(tmp_path: Path) -> None:
    # compile_gc freezes what a compile builds; after the block its cycles are garbage
    # the collector frees again, and the thresholds are the caller's.
    before = gc.get_threshold()
    with compile_gc() as settle:
        assert gc.get_threshold()[0] >= BUILD_GC_THRESHOLD
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        settle()
        assert gc.get_freeze_count() > 0
        del cycle
        gc.collect()
        assert alive() is not None  # frozen: not collected inside the block
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    gc.collect()
    assert alive() is None
    with contextlib.redirect_stdout(io.StringIO()):
        assert run([str(DECODER), "--out", str(tmp_path / "out"), "--json"]) == 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def _one_line_error(r: subprocess.CompletedProcess[str], text: str) -> None:
    assert r.returncode == 1
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr


def test_errors_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _one_line_error(rlx_compile(str(tmp_path / "none.onnx"), "--out", str(out)), "No such file")
    _one_line_error(rlx_compile(str(RESNET), "--target", "gpu9", "--out", str(out)),
                    "unknown target 'gpu9'")  # fmt: skip
    _one_line_error(rlx_compile(str(RESNET), "--strategy", "magic", "--out", str(out)),
                    "unknown strategy 'magic'")  # fmt: skip
    _one_line_error(rlx_compile(str(RESNET), "--precision", "f8", "--out", str(out)),
                    "--precision f8 is not a choice")  # fmt: skip
    _one_line_error(rlx_compile(str(RESNET), "--quantize", "int8", "--out", str(out)),
                    "--quantize int8 needs calibration batches")  # fmt: skip
    _one_line_error(rlx_compile(str(RESNET), "--dim", "batch", "--out", str(out)),
                    "--dim expects NAME=SIZE")  # fmt: skip
    text = tmp_path / "model.txt"
    text.write_text("x")
    _one_line_error(rlx_compile(str(text), "--out", str(out)), "unsupported model format")
    node = helper.make_node("NonMaxSuppression", ["x", "s"], ["y"], name="nms")
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node],
        "g",
        [vi("x", TensorProto.FLOAT, [1, 3, 4]), vi("s", TensorProto.FLOAT, [1, 1, 3])],
        [vi("y", TensorProto.INT64, None)],
    )
    bad = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(graph), str(bad))
    _one_line_error(
        rlx_compile(str(bad), "--out", str(out)), "unsupported ops: NonMaxSuppression (node 'nms')"
    )
    assert not out.exists()


def test_open_dims_compile_to_mir_and_say_how_to_size_them(tmp_path: Path) -> None:
    # The hint names what --dim takes: the ONNX dim_param as written (even one that is
    # not an identifier) and input:axis for a dim without a name, never the symbol.
    node = helper.make_node("Relu", ["x"], ["y"])
    vi = helper.make_tensor_value_info
    graph = helper.make_graph([node], "g", [vi("x", TensorProto.FLOAT, ["batch size", None, 4])],
                              [vi("y", TensorProto.FLOAT, None)])  # fmt: skip
    path = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(graph), str(path))
    r = rlx_compile(str(path), "--out", str(tmp_path / "a"), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["level"] == "mir" and summary["arena_bytes"] is None
    assert summary["open_dims"] == ["batch size", "x:1"]
    assert "e.g. --dim 'batch size=1' --dim x:1=1)" in summary["hint"]
    # The hint, typed, plans memory.
    hint = shlex.split(summary["hint"].split("e.g. ")[1].split(")")[0])
    r = rlx_compile(str(path), *hint, "--out", str(tmp_path / "typed"), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["arena_bytes"] > 0, r.stderr
    mir = (tmp_path / "a" / "model.mir.mlir").read_text()
    assert "!rlx.tensor<[batch_size, x_1, 4], f32>" in mir
    r = rlx_compile(str(path), "--out", str(tmp_path / "a"))
    assert r.returncode == 0 and "open dims batch size, x:1: compiled to MIR" in r.stdout
    # Each name the hint gives sizes its dim; a partial sizing leaves the rest open.
    r = rlx_compile(str(path), "--dim", "batch size=3", "--out", str(tmp_path / "b"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["open_dims"] == ["x:1"]
    r = rlx_compile(str(path), "--dim", "batch size=3", "--dim", "x:1=5", "--out",
                    str(tmp_path / "c"), "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["arena_bytes"] > 0
    assert "[3, 5, 4]" in (tmp_path / "c" / "model.lir.mlir").read_text()
    _one_line_error(
        rlx_compile(str(path), "--dim", "batch=3", "--out", str(tmp_path / "d")),
        "--dim batch: the model has no such open dim (open dims: batch size, x:1)",
    )
    _one_line_error(rlx_compile(str(path), "--dim", "x:1=0..4", "--out", str(tmp_path / "d")),
                    "--dim expects NAME=SIZE or NAME=LO..HI")  # fmt: skip
    assert not (tmp_path / "d").exists()
    # A .mlir model's dims are its symbols.
    mlir = tmp_path / "dyn.mlir"
    mlir.write_text(
        'func.func @g() -> (!rlx.tensor<[seq, 4], f32> {rlx.name = "y"}) {\n'
        '  %x = mir.input "x" : !rlx.tensor<[seq, 4], f32>\n'
        "  %y = mir.exp %x : !rlx.tensor<[seq, 4], f32>\n"
        "  func.return %y : !rlx.tensor<[seq, 4], f32>\n}\n"
    )
    r = rlx_compile(str(mlir), "--out", str(tmp_path / "e"), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["open_dims"] == ["seq"], r.stderr
    r = rlx_compile(str(mlir), "--dim", "seq=1..8", "--out", str(tmp_path / "f"))
    assert r.returncode == 0, r.stderr
    assert "dims [1 <= seq <= 8]" in (tmp_path / "f" / "model.lir.mlir").read_text()


def test_a_range_plan_serves_every_size_in_range(tmp_path: Path) -> None:
    # --dim seq=1..512 plans once: the LIR keeps seq symbolic, records its range and runs
    # in its arena at every size in it, equal to onnxruntime; a size outside is refused.
    path = DYNAMIC / "encoder_dynamic_axes.onnx"
    out = tmp_path / "out"
    r = rlx_compile(str(path), "--dim", "batch=2", "--dim", "seq=1..512", "--out", str(out),
                    "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["dim_ranges"] == {"seq": [1, 512]}
    module = parse_module((out / "model.lir.mlir").read_text())
    graph = main_graph(module)
    assert isinstance(graph, lir.GraphOp) and graph.ranges == {"seq": (1, 512)}
    assert "dims [1 <= seq <= 512]" in (out / "model.lir.mlir").read_text()
    model = onnx.load(str(path))
    params = param_values(model, import_model(model))
    session = ort.InferenceSession(str(path))
    rng = np.random.default_rng(0)
    for seq in (1, 7, 64, 512):
        feeds = {"x": rng.standard_normal((2, seq, 16)).astype(np.float32),
                 "mask": (rng.random((2, seq)) < 0.2).astype(np.float32)}  # fmt: skip
        got = run_arena(module, feeds, params)["y"]
        np.testing.assert_allclose(got, session.run(None, feeds)[0], rtol=1e-4, atol=1e-5)
    big = {"x": np.zeros((2, 513, 16), np.float32), "mask": np.zeros((2, 513), np.float32)}
    with pytest.raises(ExecutionError, match=r"dim 'seq' is 513, outside the range 1\.\.512"):
        run_arena(module, big, params)


def test_precision_and_quantize_reach_the_pipeline(tmp_path: Path) -> None:
    r = rlx_compile(str(RESNET), "--precision", "bf16", "--out", str(tmp_path / "a"), "--json")
    assert r.returncode == 0, r.stderr
    assert "auto-mixed-precision{dtype=bf16" in json.loads(r.stdout)["pipeline"]
    assert "bf16" in (tmp_path / "a" / "model.lir.mlir").read_text()
    data = tmp_path / "batches.npz"
    rng = np.random.default_rng(0)
    np.savez(data, image=rng.standard_normal((3, 1, 3, 32, 32)).astype(np.float32))
    r = rlx_compile(str(RESNET), "--quantize", "int8", "--calibration", str(data),
                    "--out", str(tmp_path / "b"), "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "quant-insert" in json.loads(r.stdout)["pipeline"]
    assert "mir.quantize" in (tmp_path / "b" / "model.lir.mlir").read_text()


def test_an_import_stopped_by_open_dims_says_how_to_size_them(tmp_path: Path) -> None:
    """A converter that needs a dim the model leaves open (Hardmax along an axis given
    as "?") fails the import; the error names the open dims as --dim takes them."""
    node = helper.make_node("Hardmax", ["x"], ["y"], name="hm", axis=-1)
    vi = helper.make_tensor_value_info
    graph = helper.make_graph([node], "g", [vi("x", TensorProto.FLOAT, [2, "?"])],
                              [vi("y", TensorProto.FLOAT, None)])  # fmt: skip
    path = tmp_path / "hardmax.onnx"
    onnx.save(helper.make_model(graph), str(path))
    r = rlx_compile(str(path), "--out", str(tmp_path / "a"))
    _one_line_error(r, "Hardmax node 'hm': Hardmax along a symbolic axis")
    _one_line_error(r, "; e.g. --dim x:1=1")
    r = rlx_compile(str(path), "--dim", "x:1=8", "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
