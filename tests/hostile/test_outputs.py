"""All-or-nothing outputs: ``rlx-compile --out`` is replaced whole or left as it was (a
failed compile, an error while writing, SIGINT/SIGTERM), ``rlx-opt -o`` writes through
symlinks and FIFOs, and usage errors and interrupts are one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from rlx_compile.tools import compile as compile_tool

BIN = Path(sys.executable).parent
SIX = {"model.lir.mlir", "fusion.txt", "dispatch.txt", "graph.svg", "memory.svg", "summary.json"}


def _model(path: Path, op: str = "Relu") -> Path:
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])],
        "g",
        [vi("x", TensorProto.FLOAT, [2, 3])],
        [vi("y", TensorProto.FLOAT, [2, 3])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    return path


def _compile(*argv: str) -> int:
    with pytest.raises(SystemExit) as exit_:
        compile_tool.main(list(argv))
    return int(exit_.value.code or 0)


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def _strays(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(".")]


def test_a_failed_compile_leaves_the_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _compile(str(_model(tmp_path / "a.onnx")), "--out", str(out)) == 0
    before = _snapshot(out)
    assert set(before) == SIX
    (tmp_path / "empty.onnx").write_bytes(b"")
    assert _compile(str(tmp_path / "empty.onnx"), "--out", str(out)) == 1
    assert _snapshot(out) == before
    assert _strays(tmp_path) == []


def test_a_new_model_replaces_the_whole_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _compile(str(_model(tmp_path / "a.onnx")), "--out", str(out)) == 0
    (out / "model.mir.mlir").write_text("stale, from an earlier run\n")
    assert _compile(str(_model(tmp_path / "b.onnx", "Tanh")), "--out", str(out)) == 0
    assert set(_snapshot(out)) == SIX
    assert "b.onnx" in (out / "summary.json").read_text()
    assert _strays(tmp_path) == []


@pytest.mark.parametrize("fault", [KeyboardInterrupt, OSError, RuntimeError])
def test_a_fault_while_writing_leaves_nothing_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: type[BaseException]
) -> None:
    out = tmp_path / "out"
    assert _compile(str(_model(tmp_path / "a.onnx")), "--out", str(out)) == 0
    before = _snapshot(out)

    def failing(*args: object, **kwargs: object) -> str:
        raise fault("disk gone")

    monkeypatch.setattr("rlx_compile.pictures.memory_svg", failing)
    code = _compile(str(_model(tmp_path / "b.onnx", "Tanh")), "--out", str(out))
    assert code == (130 if fault is KeyboardInterrupt else 1)
    assert _snapshot(out) == before
    assert _strays(tmp_path) == []


def test_out_must_be_ours(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = str(_model(tmp_path / "a.onnx"))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    assert _compile(model, "--out", str(mine)) == 1
    assert (mine / "notes.txt").read_text() == "keep me"
    assert _compile(model, "--out", model) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("error: output directory") and "notes.txt" in err[0]
    assert err[1].endswith("exists and is not a directory")


def test_usage_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _compile("--bogus") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and line.endswith("(see rlx-compile --help)")


def _wait_for_handlers(pid: int) -> None:
    """Until the process catches SIGTERM, i.e. our entry point runs: before that it is
    Python's own start-up (site, the console-script wrapper), whose interrupt behaviour
    is Python's, and which a loaded machine can stretch past any fixed sleep."""
    status = Path(f"/proc/{pid}/status")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            caught = next(
                int(line.split()[1], 16)
                for line in status.read_text().splitlines()
                if line.startswith("SigCgt:")
            )
        except (OSError, StopIteration):
            return  # no procfs, or the process already ended
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.005)
    raise AssertionError("rlx-compile did not install its signal handlers within 60 s")


def test_signals_leave_all_or_nothing(tmp_path: Path) -> None:
    # A signal at a spread of moments: the run either finished (six files) or left
    # nothing (no directory, no temporary) and exited 130/143 with one line.
    model = str(_model(tmp_path / "a.onnx"))
    seen = set()
    for i, sig in enumerate([signal.SIGTERM, signal.SIGINT] * 3):
        out = tmp_path / f"o{i}"
        proc = subprocess.Popen(
            [BIN / "rlx-compile", model, "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait_for_handlers(proc.pid)
        time.sleep(0.3 * i)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        seen.add(proc.returncode)
        # All or nothing: the six files, or no directory at all (a signal just after
        # the outputs were committed exits 130/143 with the run's outputs complete).
        assert not out.exists() or set(_snapshot(out)) == SIX
        if proc.returncode == 0:
            assert out.exists()
            continue
        assert proc.returncode == (143 if sig == signal.SIGTERM else 130), err
        assert len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err
    assert _strays(tmp_path) == []
    assert seen - {0}, "no trial was interrupted"


def test_rlx_opt_writes_through_symlinks_and_fifos(tmp_path: Path) -> None:
    src = tmp_path / "in.mlir"
    src.write_text("builtin.module {\n}\n")
    target = tmp_path / "real.mlir"
    target.write_text("old")
    link = tmp_path / "link.mlir"
    link.symlink_to(target)
    r = subprocess.run([BIN / "rlx-opt", str(src), "-o", str(link)], capture_output=True)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and "builtin.module" in target.read_text()

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    r = subprocess.run([BIN / "rlx-opt", str(src), "-o", str(fifo)], capture_output=True)
    reader.join(timeout=60)
    assert r.returncode == 0, r.stderr
    assert fifo.exists() and not fifo.is_file()
    assert got and "builtin.module" in got[0]

    r = subprocess.run(
        [BIN / "rlx-opt", str(src), "-o", str(tmp_path)], capture_output=True, text=True
    )
    assert r.returncode == 1
    assert r.stderr.strip() == f"error: cannot write '{tmp_path}': it is a directory"
