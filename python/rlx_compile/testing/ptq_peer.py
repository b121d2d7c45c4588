"""Post-training int8 quantisation, ours against onnxruntime's ``quantize_static``, on the
same model, weights and calibration batches (``bench/quant.py`` prints the table; a test
runs it at a small size).

The models are built with the builder and exported to ONNX for the peer (the ONNX
frontend is not there to import from yet): a small CNN (conv+bias+relu, max-pool, global
average pool, linear) and a small pre-norm transformer encoder layer (layer norm,
multi-head attention written as matmul/softmax/matmul, gelu MLP, residuals). Both sides
quantise every MatMul/Conv input and weight in QDQ form, weights per output channel,
calibrated by min/max on the same batches; quality is the cosine similarity of the
output with the f32 output on held-out batches.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.builder import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_block, graph_inputs, graph_params, main_graph
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.quant import calibrate, use_calibration

Feeds = dict[str, np.ndarray]


def small_cnn(batch: int = 2, size: int = 32, width: int = 16, classes: int = 10) -> ModuleOp:
    with ModuleBuilder("cnn") as m:
        x = m.input("image", (batch, 3, size, size))
        h = x
        channels = 3
        for i, out in enumerate((width, 2 * width)):
            w = m.param(f"conv{i}_w", (out, channels, 3, 3))
            b = m.param(f"conv{i}_b", (out,))
            h = m.conv(h, w, pads=(1, 1, 1, 1))
            h = m.relu(m.add(h, m.reshape(b, (out, 1, 1))))
            h = m.max_pool(h, (2, 2), strides=(2, 2))
            channels = out
        pooled = m.mean(h, axes=(2, 3))
        logits = m.add(m.matmul(pooled, m.param("fc_w", (channels, classes))),
                       m.param("fc_b", (classes,)))  # fmt: skip
        m.output(logits, names=["logits"])
    return m.module


def small_transformer(
    batch: int = 2, seq: int = 16, embed: int = 64, heads: int = 4, ffn: int = 128
) -> ModuleOp:
    d = embed // heads
    with ModuleBuilder("encoder") as m:
        x = m.input("x", (batch, seq, embed))

        def p(name: str, shape: tuple[int, ...]):  # type: ignore[no-untyped-def]
            return m.param(name, shape)

        def heads_of(t):  # type: ignore[no-untyped-def]
            return m.transpose(m.reshape(t, (batch, seq, heads, d)), (0, 2, 1, 3))

        def linear(t, name: str, n_in: int, n_out: int):  # type: ignore[no-untyped-def]
            return m.add(m.matmul(t, p(f"{name}_w", (n_in, n_out))), p(f"{name}_b", (n_out,)))

        h = m.layer_norm(x, p("ln1_g", (embed,)), p("ln1_b", (embed,)))
        q, k, v = (heads_of(linear(h, n, embed, embed)) for n in ("q", "k", "v"))
        scores = m.mul(m.matmul(q, m.transpose(k, (0, 1, 3, 2))), 1.0 / math.sqrt(d))
        ctx = m.matmul(m.softmax(scores, -1), v)
        ctx = m.reshape(m.transpose(ctx, (0, 2, 1, 3)), (batch, seq, embed))
        x1 = m.add(x, linear(ctx, "o", embed, embed))
        h2 = m.layer_norm(x1, p("ln2_g", (embed,)), p("ln2_b", (embed,)))
        f = m.gelu(linear(h2, "up", embed, ffn))
        m.output(m.add(x1, linear(f, "down", ffn, embed)), names=["y"])
    return m.module


def init_params(module: ModuleOp, seed: int = 0) -> Feeds:
    """He/Glorot-style random weights: std 1/sqrt(fan_in) for matrices and filters,
    small biases, norm scales near 1."""
    rng = np.random.default_rng(seed)
    out: Feeds = {}
    for leaf in graph_params(main_graph(module)):
        shape = [int(s) for s in leaf.type.shape]
        if leaf.name.endswith("_g"):
            value = 1.0 + 0.1 * rng.standard_normal(shape)
        elif len(shape) == 1:
            value = 0.1 * rng.standard_normal(shape)
        else:
            fan_in = math.prod(shape[1:]) if len(shape) == 4 else shape[0]
            value = rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)
        out[leaf.name] = value.astype(np.float32)
    return out


def bake_params(module: ModuleOp, params: Mapping[str, np.ndarray]) -> ModuleOp:
    """A copy whose params are constants holding ``params`` (what param-specialize does),
    so quant-propagate can fold quantised weights into int8 constants."""
    out = module.clone()
    block = graph_block(main_graph(out))
    for op in list(block.ops):
        if isinstance(op, mir.ParamOp):
            const = mir.ConstantOp(params[op.tensor_name.data], cast(TensorType, op.result.type))
            const.result.name_hint = op.result.name_hint
            block.insert_op_before(const, op)
            op.result.replace_all_uses_with(const.result)
            block.erase_op(op)
    return out


def random_batches(module: ModuleOp, count: int, seed: int) -> list[Feeds]:
    rng = np.random.default_rng(seed)
    leaves = graph_inputs(main_graph(module))
    return [
        {x.name: rng.standard_normal([int(s) for s in x.type.shape]).astype(np.float32)
         for x in leaves}
        for _ in range(count)
    ]  # fmt: skip


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def quantize_ours(
    module: ModuleOp, params: Feeds, calibration: list[Feeds], *, symmetric: bool
) -> ModuleOp:
    stats = calibrate(module, calibration, params)
    out = module.clone()
    sym = str(symmetric).lower()
    with use_calibration(stats):
        PassManager(parse_pipeline(f"quant-insert{{symmetric={sym}}},quant-propagate")).run(out)
    return out


def quantize_onnxruntime(
    model: object, calibration: list[Feeds], *, symmetric: bool, workdir: Path
) -> object:
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Reader(CalibrationDataReader):
        def __init__(self, batches: list[Feeds]):
            self.batches: Iterator[Feeds] = iter(batches)

        def get_next(self) -> Feeds | None:
            return next(self.batches, None)

    src, dst = workdir / "f32.onnx", workdir / "int8.onnx"
    onnx.save(model, src)  # type: ignore[arg-type]
    quantize_static(
        str(src), str(dst), Reader(calibration), quant_format=QuantFormat.QDQ,
        per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
        calibrate_method=CalibrationMethod.MinMax,
        extra_options={"ActivationSymmetric": symmetric},
    )  # fmt: skip
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(str(dst), options, providers=["CPUExecutionProvider"])


@dataclass
class PeerResult:
    model: str
    activations: str
    ours: list[float]
    onnxruntime: list[float]
    ort_f32_max_diff: float
    """max |ORT f32 - our f32| / max |our f32|: both sides start from the same model."""


def compare(
    name: str,
    module: ModuleOp,
    params: Mapping[str, np.ndarray],
    calibration: list[Feeds],
    held_out: list[Feeds],
    *,
    symmetric: bool,
) -> PeerResult:
    import onnxruntime as ort

    from rlx_compile.testing.onnx_export import export_onnx

    params = dict(params)
    model = export_onnx(module, params)
    ours = quantize_ours(module, params, calibration, symmetric=symmetric)
    out_name = next(iter(run(module, held_out[0], params)))
    with tempfile.TemporaryDirectory() as tmp:
        peer = quantize_onnxruntime(model, calibration, symmetric=symmetric, workdir=Path(tmp))
        f32 = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        ours_cos, peer_cos, diff = [], [], 0.0
        for feeds in held_out:
            want = run(module, feeds, params)[out_name]
            ours_cos.append(cosine(run(ours, feeds, params)[out_name], want))
            peer_cos.append(cosine(peer.run([out_name], feeds)[0], want))  # type: ignore[attr-defined]
            ref = f32.run([out_name], feeds)[0]
            diff = max(diff, float(np.abs(ref - want).max() / np.abs(want).max()))
    kind = "symmetric" if symmetric else "asymmetric"
    return PeerResult(name, kind, ours_cos, peer_cos, diff)
