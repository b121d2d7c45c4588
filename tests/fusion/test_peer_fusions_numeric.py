"""The peers' fusions compute what they replace: every case of their FileCheck files
(positive and negative) runs through its pass, then through each target's fuse ->
legalize stages (targets without clip, hard_swish, scale-shift, LRN or ConvTranspose
kernels lower them to common IR), on the reference executor against the input."""

# ruff: noqa: E501  (the IR below is written as rlx-opt prints it)
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, graph_params, main_graph, parse_module
from tests.fusion.helpers import apply, assert_close, illegal_ops, op_names, target_pipeline

FUSION = Path(__file__).resolve().parents[1] / "filecheck" / "transforms" / "fusion"
PASSES = {
    "fuse_activations.mlir": "fuse-activations,fuse-conv-bias-act,fuse-matmul-bias-act",
    "fold_conv_affine.mlir": "fold-conv-affine,fuse-conv-bias-act,dce",
    "fold_conv_batch_norm.mlir": "fold-conv-batch-norm,fuse-conv-bias-act,dce",
    "fuse_scale_shift.mlir": "fuse-scale-shift,dce",
    "fuse_lstm_cell.mlir": "fuse-lstm-cell,dce",
    "fuse_gru_cell.mlir": "fuse-gru-cell,dce",
    "fuse_layer_norm.mlir": "fuse-rms-norm,fuse-layer-norm,dce",
    "fold_transposes.mlir": "fold-transposes,fold-conv-affine,fuse-conv-bias-act,dce",
    "fuse_biased_conv.mlir": "fold-conv-batch-norm,fold-conv-affine,fuse-conv-bias-act,dce",
    "fuse_two_sided_matmul.mlir": "fuse-two-sided-matmul,dce",
    "fuse_transposed_matmul.mlir": "fuse-transposed-matmul,dce",
    "fuse_scaled_matmul.mlir": "fuse-scaled-matmul,dce",
    "fuse_add_chain.mlir": "fuse-add-chain,dce",
    "fuse_reshape_transpose.mlir": "fuse-reshape-transpose,dce",
}
TARGETS = ("cpu", "cuda", "cortex-m", "wgpu", "tpu")


def cases() -> list[tuple[str, str]]:
    out = []
    for file in PASSES:
        for chunk in (FUSION / file).read_text().split("// -----"):
            head = chunk.split("func.func @", 1)[1]
            name, signature = head.split("(", 1)
            if not signature.startswith(")"):
                continue  # graph arguments: the executor feeds inputs and params only
            out.append((file, name))
    return out


def case_module(file: str, name: str) -> ModuleOp:
    for chunk in (FUSION / file).read_text().split("// -----"):
        if f"func.func @{name}(" in chunk:
            return parse_module(chunk, f"{file}:@{name}")
    raise KeyError(name)


def feeds(module: ModuleOp, seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Inputs that cross every clip bound; params positive (variances among them)."""
    rng = np.random.default_rng(seed)
    g = main_graph(module)

    def draw(t, lo: float | None) -> np.ndarray:  # type: ignore[no-untyped-def]
        shape = [int(d) for d in t.shape]
        v = rng.standard_normal(shape) * 4 if lo is None else rng.uniform(lo, 1.5, shape)
        return v.astype(t.dtype.numpy)

    return (
        {x.name: draw(x.type, None) for x in graph_inputs(g)},
        {p.name: draw(p.type, 0.25) for p in graph_params(g)},
    )


def same(before: ModuleOp, after: ModuleOp, seed: int = 0) -> None:
    inputs, params = feeds(before, seed)
    keep_p = {p.name for p in graph_params(main_graph(after))}
    got = run(after, inputs, {k: v for k, v in params.items() if k in keep_p})
    assert_close(got, run(before, inputs, params), rtol=2e-5)


@pytest.mark.parametrize(("file", "name"), cases(), ids=lambda v: v.removesuffix(".mlir"))
def test_fusion_pass_keeps_outputs(file: str, name: str) -> None:
    before = case_module(file, name)
    after, _ = apply(before, PASSES[file])
    same(before, after)


@pytest.mark.parametrize("target", TARGETS)
def test_targets_lower_what_they_do_not_claim(target: str) -> None:
    for file, name in cases():
        before = case_module(file, name)
        after, _ = apply(before, target_pipeline(target))
        assert illegal_ops(after, target) == [], (file, name)
        same(before, after, seed=1)


LRN_AND_CONV_TRANSPOSE = """
func.func @g() -> (!rlx.tensor<[1, 6, 5, 5], f32>, !rlx.tensor<[1, 4, 11, 11], f32>, !rlx.tensor<[1, 3, 15], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 6, 5, 5], f32>
  %s = mir.input "s" : !rlx.tensor<[1, 4, 7], f32>
  %w = mir.param "w" : !rlx.tensor<[6, 2, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %v = mir.param "v" : !rlx.tensor<[4, 3, 4], f32>
  %l = mir.lrn %x size 3 alpha 1.000000e-01 beta 7.500000e-01 bias 2.000000e+00 : !rlx.tensor<[1, 6, 5, 5], f32> -> !rlx.tensor<[1, 6, 5, 5], f32>
  %t = mir.conv_transpose %x, %w bias %b strides [2, 2] pads [1, 1, 0, 0] dilations [1, 1] output_padding [1, 1] groups 2 : (!rlx.tensor<[1, 6, 5, 5], f32>, !rlx.tensor<[6, 2, 3, 3], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 11, 11], f32>
  %u = mir.conv_transpose %s, %v strides [2] pads [2, 2] dilations [2] output_padding [0] groups 1 : (!rlx.tensor<[1, 4, 7], f32>, !rlx.tensor<[4, 3, 4], f32>) -> !rlx.tensor<[1, 3, 15], f32>
  func.return %l, %t, %u : !rlx.tensor<[1, 6, 5, 5], f32>, !rlx.tensor<[1, 4, 11, 11], f32>, !rlx.tensor<[1, 3, 15], f32>
}
"""


# cortex-m has neither pow nor a strided slice (the kernel flip), so it runs neither op, as
# before they were ops of their own.
@pytest.mark.parametrize("target", [t for t in TARGETS if t != "cortex-m"])
def test_lrn_and_conv_transpose_on_the_targets(target: str) -> None:
    before = parse_module(LRN_AND_CONV_TRANSPOSE, "lrn_and_conv_transpose")
    after, _ = apply(before, target_pipeline(target))
    assert illegal_ops(after, target) == []
    names = op_names(after)
    if target == "wgpu":  # neither kernel: both lowered to common IR
        assert "mir.lrn" not in names and "mir.conv_transpose" not in names
    if target == "cpu":  # both claimed: no zero-stuffed input, no LRN chain
        assert names.count("mir.lrn") == 1 and names.count("mir.conv_transpose") == 2
    same(before, after, seed=2)
