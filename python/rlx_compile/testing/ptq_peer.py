"""Post-training int8 quantisation, ours against onnxruntime's ``quantize_static``, on the
same model, weights and calibration batches (``bench/quant.py`` prints the tables; tests
run them at a small size).

Two kinds of models:

- real ONNX models (``examples/models/*.onnx``): imported with the ONNX frontend and
  quantised by ``CompilePipeline(quantize="int8", calibration=...)``, while the peer
  quantises the very same file (``compare_onnx_model``);
- builder models exported to ONNX for the peer by ``testing.onnx_export``: a small CNN
  and a small pre-norm transformer encoder layer (``compare``).

Both sides use QDQ form, int8 activations and weights, weights symmetric per output
channel, min/max calibration on the same batches; quality is the cosine similarity of
the output with the f32 output on held-out batches. The peer runs in two
configurations (``PEER_SITES``), because ``quantize_static`` quantises more than the
inputs of compute ops by default:

- ``default``: ``quantize_static``'s own choice of ops, i.e. every op it has a QDQ rule
  for (residual adds, softmax, gather, ...) and the *outputs* of Conv/MatMul/Gemm too;
- ``matched``: only Conv/MatMul/Gemm inputs and weights, outputs and biases left in
  float: the sites ``quant-insert`` taps. Scales and zero points then agree with ours
  exactly (``qparams_of`` / ``onnx_qparams``). One difference remains:
  onnxruntime makes *every* reader of a quantised tensor read its dequantised value
  (e.g. a ResNet's residual add reads the int8 skip connection), while quant-insert
  rewires the compute ops only and other readers keep the float value.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from rlx_compile.builder import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_block, graph_inputs, graph_params, main_graph
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.quant import calibrate, use_calibration

if TYPE_CHECKING:
    import onnx

    from rlx_compile.pipeline import CompileResult

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

        def p(name: str, shape: tuple[int, ...]) -> SSAValue:
            return m.param(name, shape)

        def heads_of(t: SSAValue) -> SSAValue:
            return m.transpose(m.reshape(t, (batch, seq, heads, d)), (0, 2, 1, 3))

        def linear(t: SSAValue, name: str, n_in: int, n_out: int) -> SSAValue:
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
            const = mir.ConstantOp(params[op.tensor_name.data], op.result.type)
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


def insert_ours(
    module: ModuleOp, params: Feeds, calibration: list[Feeds], *, symmetric: bool
) -> ModuleOp:
    """Calibrate ``module`` and run quant-insert on a copy."""
    stats = calibrate(module, calibration, params)
    out = module.clone()
    with use_calibration(stats):
        PassManager(parse_pipeline(f"quant-insert{{symmetric={str(symmetric).lower()}}}")).run(out)
    return out


def quantize_ours(
    module: ModuleOp, params: Feeds, calibration: list[Feeds], *, symmetric: bool
) -> ModuleOp:
    """quant-insert then quant-propagate, calibrated on ``calibration``."""
    return propagated(insert_ours(module, params, calibration, symmetric=symmetric))


def propagated(module: ModuleOp) -> ModuleOp:
    """A copy of a quant-insert result after quant-propagate."""
    out = module.clone()
    PassManager(parse_pipeline("quant-propagate")).run(out)
    return out


@dataclass(frozen=True)
class PeerSites:
    """Which ops ``quantize_static`` quantises: ``op_types`` None is its default list."""

    op_types: tuple[str, ...] | None
    quantize_outputs: bool


COMPUTE_OP_TYPES = ("Conv", "MatMul", "Gemm")
PEER_SITES = {
    "default": PeerSites(None, True),
    "matched": PeerSites(COMPUTE_OP_TYPES, False),
}


def quantize_onnxruntime(
    model: onnx.ModelProto, calibration: list[Feeds], *, symmetric: bool, sites: str = "default"
) -> onnx.ModelProto:
    """``quantize_static`` on ``model``: QDQ, int8, weights per channel, min/max."""
    import onnx
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

    peer = PEER_SITES[sites]
    extra: dict[str, Any] = {"ActivationSymmetric": symmetric}
    if not peer.quantize_outputs:
        assert peer.op_types is not None
        extra["OpTypesToExcludeOutputQuantization"] = list(peer.op_types)
        extra["QuantizeBias"] = False
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "f32.onnx", Path(tmp) / "int8.onnx"
        onnx.save(model, src)
        quantize_static(
            str(src), str(dst), Reader(calibration), quant_format=QuantFormat.QDQ,
            op_types_to_quantize=list(peer.op_types) if peer.op_types else None,
            per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
            calibrate_method=CalibrationMethod.MinMax, extra_options=extra,
        )  # fmt: skip
        return onnx.load(str(dst))


def run_onnx_model(model: onnx.ModelProto, batches: list[Feeds], out_name: str) -> list[np.ndarray]:
    """``out_name`` of an ONNX model (a QDQ one too), imported and run by our reference
    executor: separates what a model computes from how onnxruntime's kernels compute it."""
    from rlx_compile.frontends.onnx import import_model, param_values

    module = import_model(model)
    params = param_values(model, module)
    return [run(module, feeds, params)[out_name] for feeds in batches]


def ort_session(model: onnx.ModelProto) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


@dataclass
class PeerResult:
    model: str
    activations: str
    ours: list[float]
    peers: dict[str, list[float]]
    """onnxruntime's cosines per ``PEER_SITES`` configuration."""
    ort_f32_max_diff: float
    """max |ORT f32 - our f32| / max |our f32|: both sides start from the same model."""
    quantize_ops: int = 0
    """quantize ops in our module after quant-propagate."""
    qparams_match: bool | None = None
    """Whether our scales and zero points (activations and weights) are the ``matched``
    peer's (None: not compared)."""
    matched_on_rlx: list[float] | None = None
    """Cosines of the ``matched`` peer's quantised model run by our executor."""


def _activations(symmetric: bool) -> str:
    return "symmetric" if symmetric else "asymmetric"


@dataclass
class PeerRuns:
    cosines: dict[str, list[float]]
    models: dict[str, onnx.ModelProto]
    """The quantised model of each configuration."""
    f32_max_diff: float
    matched_on_rlx: list[float] | None = None
    """The ``matched`` peer's quantised model imported and run by our executor."""


def _run_peers(
    model: onnx.ModelProto,
    calibration: list[Feeds],
    held_out: list[Feeds],
    wants: list[np.ndarray],
    out_name: str,
    *,
    symmetric: bool,
    peers: Sequence[str],
) -> PeerRuns:
    """Quantise with each peer configuration and score it on the held-out batches."""
    runs = PeerRuns({}, {}, 0.0)
    for sites in peers:
        quantized = quantize_onnxruntime(model, calibration, symmetric=symmetric, sites=sites)
        session = ort_session(quantized)
        runs.models[sites] = quantized
        runs.cosines[sites] = [
            cosine(session.run([out_name], feeds)[0], want)
            for feeds, want in zip(held_out, wants, strict=True)
        ]
        if sites == "matched":
            runs.matched_on_rlx = [
                cosine(got, want)
                for got, want in zip(
                    run_onnx_model(quantized, held_out, out_name), wants, strict=True
                )
            ]
    f32 = ort_session(model)
    runs.f32_max_diff = max(
        float(np.abs(f32.run([out_name], feeds)[0] - want).max() / np.abs(want).max())
        for feeds, want in zip(held_out, wants, strict=True)
    )
    return runs


def compare(
    name: str,
    module: ModuleOp,
    params: Mapping[str, np.ndarray],
    calibration: list[Feeds],
    held_out: list[Feeds],
    *,
    symmetric: bool,
    peers: Sequence[str] = tuple(PEER_SITES),
) -> PeerResult:
    """A builder model, quantised by the passes and, exported, by onnxruntime."""
    from rlx_compile.testing.onnx_export import export_onnx

    params = dict(params)
    model = export_onnx(module, params)
    inserted = insert_ours(module, params, calibration, symmetric=symmetric)
    ours = propagated(inserted)
    out_name = next(iter(run(module, held_out[0], params)))
    wants = [run(module, feeds, params)[out_name] for feeds in held_out]
    ours_cos = [
        cosine(run(ours, feeds, params)[out_name], want)
        for feeds, want in zip(held_out, wants, strict=True)
    ]
    peer = _run_peers(
        model, calibration, held_out, wants, out_name, symmetric=symmetric, peers=peers
    )
    quantize_ops = sum(isinstance(op, mir.QuantizeOp) for op in ours.walk())
    return PeerResult(
        name, _activations(symmetric), ours_cos, peer.cosines, peer.f32_max_diff, quantize_ops,
        qparams_match=_qparams_match(inserted, peer), matched_on_rlx=peer.matched_on_rlx,
    )  # fmt: skip


# ---------------------------------------------------------------------------------
# Imported ONNX models
# ---------------------------------------------------------------------------------


def model_batches(model: onnx.ModelProto, count: int, seed: int) -> list[Feeds]:
    """Synthetic batches for a model's inputs: standard normal floats; token ids uniform
    over the rows of the embedding table (the initializer a Gather indexes with the
    input)."""
    import onnx
    from onnx import numpy_helper

    rng = np.random.default_rng(seed)
    inits = {t.name: t for t in model.graph.initializer}
    specs: list[tuple[str, list[int], np.dtype, int]] = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        if any(s <= 0 for s in shape):
            raise ValueError(f"input '{vi.name}' has open dims {shape}: give batches yourself")
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type))
        high = 0
        if dtype.kind in "iu":
            tables = [
                n.input[0]
                for n in model.graph.node
                if n.op_type == "Gather" and n.input[1] == vi.name and n.input[0] in inits
            ]
            if not tables:
                raise ValueError(f"integer input '{vi.name}' does not index an embedding table")
            high = int(numpy_helper.to_array(inits[tables[0]]).shape[0])
        specs.append((vi.name, shape, dtype, high))
    return [
        {name: (rng.integers(0, high, shape) if high else rng.standard_normal(shape)).astype(dtype)
         for name, shape, dtype, high in specs}
        for _ in range(count)
    ]  # fmt: skip


def quantize_imported(
    module: ModuleOp,
    params: Mapping[str, np.ndarray],
    calibration: list[Feeds],
    *,
    symmetric: bool,
    bind_weights: bool = False,
) -> CompileResult:
    """``CompilePipeline(target="cpu", quantize="int8")`` on an imported module; weights
    stay params (bound at run time) or, with ``bind_weights``, are baked in as constants
    (``param_bindings``), so quant-propagate folds them into int8 constants."""
    from rlx_compile.pipeline import CompilePipeline

    weights = {"param_bindings": dict(params)} if bind_weights else {"calibration_params": params}
    return CompilePipeline(
        target="cpu", quantize="int8", quant_symmetric=symmetric, calibration=calibration,
        **weights,
    ).compile(module)  # fmt: skip


def compare_onnx_model(
    model: onnx.ModelProto,
    calibration: list[Feeds],
    held_out: list[Feeds],
    *,
    symmetric: bool,
    name: str = "",
    peers: Sequence[str] = tuple(PEER_SITES),
) -> PeerResult:
    """An ONNX model imported and quantised by ``CompilePipeline`` against
    ``quantize_static`` on the same model; both compared with our f32 compile."""
    from rlx_compile.frontends.onnx import import_model, param_values
    from rlx_compile.pipeline import CompilePipeline

    module = import_model(model)
    params = param_values(model, module)
    out_name = model.graph.output[0].name
    f32 = CompilePipeline(target="cpu").compile(module)
    wants = [f32.run(feeds, params)[out_name] for feeds in held_out]
    ours = quantize_imported(module, params, calibration, symmetric=symmetric)
    ours_cos = [
        cosine(ours.run(feeds, params)[out_name], want)
        for feeds, want in zip(held_out, wants, strict=True)
    ]
    peer = _run_peers(
        model, calibration, held_out, wants, out_name, symmetric=symmetric, peers=peers
    )
    propagated = ours.stage("quant-propagate")
    return PeerResult(
        name or model.graph.name, _activations(symmetric), ours_cos, peer.cosines,
        peer.f32_max_diff, sum(isinstance(op, mir.QuantizeOp) for op in propagated.walk()),
        qparams_match=_qparams_match(ours.stage("quant-insert"), peer),
        matched_on_rlx=peer.matched_on_rlx,
    )  # fmt: skip


def _qparams_match(inserted: ModuleOp, peer: PeerRuns) -> bool | None:
    if "matched" not in peer.models:
        return None
    return qparams_of(inserted).matches(onnx_qparams(peer.models["matched"]))


@dataclass
class QuantParams:
    """The quantisation parameters of a Q/DQ model, order-free: (scale, zero point) of
    every activation quantizer, sorted, and every weight scale (all channels of all
    weights; a weight split or concatenated differently keeps its channel scales)."""

    activations: list[tuple[float, int]]
    weight_scales: np.ndarray

    def matches(self, other: QuantParams, rtol: float = 1e-6) -> bool:
        """Equal zero points, scales within rtol (onnxruntime computes its f32 scales in
        f32, ours come from f64 stats)."""
        if len(self.activations) != len(other.activations):
            return False
        if self.weight_scales.shape != other.weight_scales.shape:
            return False
        return all(
            zo == zt and abs(so - st) <= rtol * abs(st)
            for (so, zo), (st, zt) in zip(self.activations, other.activations, strict=True)
        ) and bool(np.allclose(self.weight_scales, other.weight_scales, rtol=rtol, atol=0.0))


def qparams_of(module: ModuleOp) -> QuantParams:
    """The parameters of a module's int8 quantize ops (e.g. right after quant-insert:
    ``CompileResult.stage("quant-insert")``)."""
    from rlx_compile.quant import is_weight

    activations, weights = [], []
    memo: dict[Any, bool] = {}
    for op in module.walk():
        if not isinstance(op, mir.QuantizeOp):
            continue
        scale = cast(mir.ConstantOp, op.scale.owner).to_numpy()
        if is_weight(op.input, memo):
            weights.append(scale.ravel())
        else:
            zp = op.zero_point
            zero = cast(mir.ConstantOp, zp.owner).to_numpy() if zp is not None else 0
            activations.append((float(scale), int(zero)))
    return QuantParams(sorted(activations), _sorted_scales(weights))


def onnx_qparams(model: onnx.ModelProto) -> QuantParams:
    """The parameters of a QDQ model: QuantizeLinear nodes quantise activations, int8
    initializers read by DequantizeLinear are the quantised weights."""
    from onnx import numpy_helper

    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    activations, weights = [], []
    for node in model.graph.node:
        if node.op_type == "QuantizeLinear":
            zero = int(inits[node.input[2]]) if len(node.input) > 2 and node.input[2] else 0
            activations.append((float(inits[node.input[1]]), zero))
        elif node.op_type == "DequantizeLinear":
            quantized = inits.get(node.input[0])
            if quantized is not None and quantized.dtype == np.int8:
                weights.append(inits[node.input[1]].ravel())
    return QuantParams(sorted(activations), _sorted_scales(weights))


def _sorted_scales(scales: list[np.ndarray]) -> np.ndarray:
    return np.sort(np.concatenate(scales)) if scales else np.zeros(0)
