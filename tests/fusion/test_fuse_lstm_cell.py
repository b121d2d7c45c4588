"""fuse-lstm-cell computes what it replaces, bit for bit, through the reference executor:
every case of its FileCheck file, ONNX LSTMs lowered to their steps (mir.lstm for a
target that does not claim it: unrolled or as a loop; each direction, sequence_lens,
batch-major), and a PyTorch-exported LSTMCell
chain (Gemm, Split, i f g o), which also matches onnxruntime compiled for the cpu target.
Peepholes, clip and other activations keep the step as ops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp

from rlx_compile import CompilePipeline
from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.fusion.report import FusionReport
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, graph_params, main_graph, parse_module
from tests.frontends.test_onnx_rnn import LONG, LOWER, recurrent_model
from tests.fusion.helpers import apply, assert_close, assert_exact

FILE = Path(__file__).resolve().parents[1] / "filecheck/transforms/fusion/fuse_lstm_cell.mlir"
CHUNKS = FILE.read_text().split("// -----")
NAMES = [c.split("func.func @", 1)[1].split("(", 1)[0] for c in CHUNKS]


def fused_cells(module: ModuleOp) -> list[mir.FusedLstmCellOp]:
    return [op for op in module.walk() if isinstance(op, mir.FusedLstmCellOp)]


def random_leaves(
    module: ModuleOp, seed: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    g = main_graph(module)

    def draw(t) -> np.ndarray:  # type: ignore[no-untyped-def]
        return (rng.standard_normal([int(d) for d in t.shape]) * 3).astype(t.dtype.numpy)

    return {x.name: draw(x.type) for x in graph_inputs(g)}, {
        p.name: draw(p.type) for p in graph_params(g)
    }


@pytest.mark.parametrize("name", NAMES)
def test_filecheck_cases_are_bit_identical(name: str) -> None:
    before = parse_module(CHUNKS[NAMES.index(name)], f"{FILE.name}:@{name}")
    after, _ = apply(before, "fuse-lstm-cell")
    for seed in range(3):
        inputs, params = random_leaves(before, seed)
        assert_exact(run(after, inputs, params), run(before, inputs, params))


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("seq", [5, LONG], ids=["unrolled", "loop"])
@pytest.mark.parametrize("lens", [False, True], ids=["", "lens"])
def test_onnx_lstm_steps_fuse(direction: str, seq: int, lens: bool) -> None:
    model, feeds = recurrent_model("LSTM", direction, 0, lens=lens, initial=False, seq=seq)
    module, _ = apply(import_model(model), LOWER)
    fused, _ = apply(module, "fuse-lstm-cell,dce")
    dirs = 2 if direction == "bidirectional" else 1
    cells = fused_cells(fused)
    assert len(cells) == dirs * (seq if seq == 5 else 1)  # a loop's body fuses once
    assert all(c.props().ints("gate_order") == (0, 1, 2, 3) for c in cells)
    assert not any(isinstance(op, mir.SigmoidOp | mir.TanhOp) for op in fused.walk())
    params = param_values(model, module)
    assert_exact(run(fused, feeds, params), run(module, feeds, params))


def test_batch_major_lstm_fuses() -> None:
    model, feeds = recurrent_model("LSTM", "bidirectional", 1, lens=False, initial=False)
    module, _ = apply(import_model(model), LOWER)
    fused, _ = apply(module, "fuse-lstm-cell,dce")
    assert len(fused_cells(fused)) == 10
    params = param_values(model, module)
    assert_exact(run(fused, feeds, params), run(module, feeds, params))


@pytest.mark.parametrize(
    ("attrs", "reason"),
    [
        ({"clip": 0.4}, "the input gate's sigmoid reads mir.min, not a narrow of the gates"),
        ({"activations": ["HardSigmoid", "Tanh", "Tanh"]}, None),
        ({"activations": ["Sigmoid", "Tanh", "Relu"]}, None),
    ],
    ids=["clip", "hard_sigmoid", "relu"],
)
def test_other_lstm_steps_stay_ops(attrs: dict[str, object], reason: str | None) -> None:
    model, _ = recurrent_model("LSTM", "forward", 0, lens=False, initial=False, **attrs)
    fused, reports = apply(import_model(model), f"{LOWER},fuse-lstm-cell")
    assert fused_cells(fused) == []
    (report,) = [r for r in reports if isinstance(r, FusionReport)]
    if reason is not None:
        assert {m.reason for m in report.missed} == {reason}


def test_peepholes_stay_ops() -> None:
    model, _ = recurrent_model("LSTM", "forward", 0, lens=False, initial=True)  # with P
    fused, reports = apply(import_model(model), f"{LOWER},fuse-lstm-cell")
    assert fused_cells(fused) == []
    (report,) = [r for r in reports if isinstance(r, FusionReport)]
    assert {m.reason for m in report.missed} == {
        "the input gate's sigmoid reads mir.add, not a narrow of the gates"
    }


def torch_lstm_cell_chain(
    steps: int, batch: int, inp: int, hidden: int
) -> tuple[object, dict[str, np.ndarray]]:
    """nn.LSTMCell applied ``steps`` times as torch.onnx exports it: Gemm(x, W_ih, b_ih) +
    Gemm(h, W_hh, b_hh), Split into i, f, g, o, the activations, c' = f·c + i·g,
    h' = o·tanh(c')."""
    rng = np.random.default_rng(7)
    g4 = 4 * hidden
    inits = [
        helper.make_tensor(name, TensorProto.FLOAT, shape, rng.standard_normal(shape).ravel() * 0.4)
        for name, shape in (
            ("W_ih", [g4, inp]),
            ("W_hh", [g4, hidden]),
            ("b_ih", [g4]),
            ("b_hh", [g4]),
        )
    ]
    inits.append(helper.make_tensor("split", TensorProto.INT64, [4], [hidden] * 4))
    nodes, h, c = [], "h0", "c0"
    for t in range(steps):
        s = f"_{t}"
        nodes += [
            helper.make_node("Gemm", [f"x{t}", "W_ih", "b_ih"], ["xi" + s], transB=1),
            helper.make_node("Gemm", [h, "W_hh", "b_hh"], ["hh" + s], transB=1),
            helper.make_node("Add", ["xi" + s, "hh" + s], ["gates" + s]),
            helper.make_node("Split", ["gates" + s, "split"], [k + s for k in "ifgo"], axis=1),
            helper.make_node("Sigmoid", ["i" + s], ["si" + s]),
            helper.make_node("Sigmoid", ["f" + s], ["sf" + s]),
            helper.make_node("Tanh", ["g" + s], ["tg" + s]),
            helper.make_node("Sigmoid", ["o" + s], ["so" + s]),
            helper.make_node("Mul", ["sf" + s, c], ["fc" + s]),
            helper.make_node("Mul", ["si" + s, "tg" + s], ["ig" + s]),
            helper.make_node("Add", ["fc" + s, "ig" + s], ["c" + s]),
            helper.make_node("Tanh", ["c" + s], ["tc" + s]),
            helper.make_node("Mul", ["so" + s, "tc" + s], ["h" + s]),
        ]
        h, c = "h" + s, "c" + s
    inputs = [f"x{t}" for t in range(steps)] + ["h0", "c0"]
    shapes = {f"x{t}": [batch, inp] for t in range(steps)} | {
        "h0": [batch, hidden],
        "c0": [batch, hidden],
    }
    graph = helper.make_graph(
        nodes, "cell",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shapes[n]) for n in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [batch, hidden]) for n in (h, c)],
        inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    feeds = {n: rng.standard_normal(shapes[n]).astype(np.float32) for n in inputs}
    return model, feeds


def test_pytorch_lstm_cell_chain_fuses() -> None:
    model, feeds = torch_lstm_cell_chain(steps=3, batch=2, inp=5, hidden=4)
    module = import_model(model)
    fused, _ = apply(module, "fuse-lstm-cell,dce")
    cells = fused_cells(fused)
    assert [c.props().ints("gate_order") for c in cells] == [(0, 3, 1, 2)] * 3
    params = param_values(model, module)
    assert_exact(run(fused, feeds, params), run(module, feeds, params))
    # The default cpu pipeline keeps the fused cells and matches onnxruntime.
    result = CompilePipeline(target="cpu", keep_stages=False).compile(module)
    assert sum(op.name == mir.FusedLstmCellOp.name for op in result.lir.body.block.ops) == 3
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    want = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))
    assert_close(result.run(feeds), want, rtol=1e-5)
