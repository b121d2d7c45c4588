"""fuse-gru-cell computes what it replaces, bit for bit, through the reference executor:
every case of its FileCheck file, and a PyTorch-exported GRUCell chain (two Gemms, Slices
r z n), which also matches onnxruntime compiled for the cpu target."""

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
from rlx_compile.interpreter import run
from rlx_compile.ir import parse_module
from tests.fusion.helpers import apply, assert_close, assert_exact
from tests.fusion.test_fuse_lstm_cell import random_leaves

FILE = Path(__file__).resolve().parents[1] / "filecheck/transforms/fusion/fuse_gru_cell.mlir"
CHUNKS = FILE.read_text().split("// -----")
NAMES = [c.split("func.func @", 1)[1].split("(", 1)[0] for c in CHUNKS]


def fused_cells(module: ModuleOp) -> list[mir.FusedGruCellOp]:
    return [op for op in module.walk() if isinstance(op, mir.FusedGruCellOp)]


@pytest.mark.parametrize("name", NAMES)
def test_filecheck_cases_are_bit_identical(name: str) -> None:
    before = parse_module(CHUNKS[NAMES.index(name)], f"{FILE.name}:@{name}")
    after, _ = apply(before, "fuse-gru-cell")
    for seed in range(3):
        inputs, params = random_leaves(before, seed)
        assert_exact(run(after, inputs, params), run(before, inputs, params))


def torch_gru_cell_chain(
    steps: int, batch: int, inp: int, hidden: int
) -> tuple[object, dict[str, np.ndarray]]:
    """nn.GRUCell applied ``steps`` times as torch.onnx exports it: gx = Gemm(x, W_ih,
    b_ih), gh = Gemm(h, W_hh, b_hh), each sliced into r, z, n; r, z = sigmoid(gx + gh),
    n = tanh(gx_n + r·gh_n), h' = (1 - z)·n + z·h."""
    rng = np.random.default_rng(7)
    g3 = 3 * hidden
    inits = [
        helper.make_tensor(name, TensorProto.FLOAT, shape, rng.standard_normal(shape).ravel() * 0.4)
        for name, shape in (
            ("W_ih", [g3, inp]),
            ("W_hh", [g3, hidden]),
            ("b_ih", [g3]),
            ("b_hh", [g3]),
        )
    ]
    inits += [
        helper.make_tensor(name, TensorProto.INT64, [1], [value])
        for name, value in (("axis", 1), ("b0", 0), ("b1", hidden), ("b2", 2 * hidden), ("b3", g3))
    ]
    inits.append(helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]))
    nodes, h = [], "h0"
    for t in range(steps):
        s = f"_{t}"

        def block(src: str, k: int, name: str, s: str = s) -> object:
            return helper.make_node("Slice", [src, f"b{k}", f"b{k + 1}", "axis"], [name + s])

        nodes += [
            helper.make_node("Gemm", [f"x{t}", "W_ih", "b_ih"], ["gx" + s], transB=1),
            helper.make_node("Gemm", [h, "W_hh", "b_hh"], ["gh" + s], transB=1),
            *(block("gx" + s, k, "x" + g) for k, g in enumerate("rzn")),
            *(block("gh" + s, k, "h" + g) for k, g in enumerate("rzn")),
            helper.make_node("Add", ["xr" + s, "hr" + s], ["ar" + s]),
            helper.make_node("Sigmoid", ["ar" + s], ["r" + s]),
            helper.make_node("Add", ["xz" + s, "hz" + s], ["az" + s]),
            helper.make_node("Sigmoid", ["az" + s], ["z" + s]),
            helper.make_node("Mul", ["r" + s, "hn" + s], ["rh" + s]),
            helper.make_node("Add", ["xn" + s, "rh" + s], ["an" + s]),
            helper.make_node("Tanh", ["an" + s], ["n" + s]),
            helper.make_node("Sub", ["one", "z" + s], ["u" + s]),
            helper.make_node("Mul", ["u" + s, "n" + s], ["un" + s]),
            helper.make_node("Mul", ["z" + s, h], ["zh" + s]),
            helper.make_node("Add", ["un" + s, "zh" + s], ["h" + s]),
        ]
        h = "h" + s
    inputs = [f"x{t}" for t in range(steps)] + ["h0"]
    shapes = {f"x{t}": [batch, inp] for t in range(steps)} | {"h0": [batch, hidden]}
    graph = helper.make_graph(
        nodes, "cell",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shapes[n]) for n in inputs],
        [helper.make_tensor_value_info(h, TensorProto.FLOAT, [batch, hidden])],
        inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    feeds = {n: rng.standard_normal(shapes[n]).astype(np.float32) for n in inputs}
    return model, feeds


def test_pytorch_gru_cell_chain_fuses() -> None:
    model, feeds = torch_gru_cell_chain(steps=3, batch=2, inp=5, hidden=4)
    module = import_model(model)
    fused, _ = apply(module, "fuse-gru-cell,dce")
    cells = fused_cells(fused)
    assert [c.props().ints("gate_order") for c in cells] == [(1, 0, 2)] * 3
    assert not any(isinstance(op, mir.SigmoidOp | mir.TanhOp) for op in fused.walk())
    params = param_values(model, module)
    assert_exact(run(fused, feeds, params), run(module, feeds, params))
    # The default cpu pipeline keeps the fused cells and matches onnxruntime.
    result = CompilePipeline(target="cpu", keep_stages=False).compile(module)
    assert sum(op.name == mir.FusedGruCellOp.name for op in result.lir.body.block.ops) == 3
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    want = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))
    assert_close(result.run(feeds), want, rtol=1e-5)
    # cuda does not claim the cell: its pipeline keeps the primitives.
    cuda = CompilePipeline(target="cuda", keep_stages=False).compile(module)
    assert not any(op.name == mir.FusedGruCellOp.name for op in cuda.lir.body.block.ops)
    assert_close(cuda.run(feeds), want, rtol=1e-5)
