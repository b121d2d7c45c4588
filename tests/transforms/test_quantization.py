"""Calibration, quant-insert, quant-propagate, scaled-quant-insert and their
CompilePipeline options, checked numerically on the reference executor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from xdsl.dialects.builtin import ModuleOp

from examples.build_examples import decoder_block, small_cnn
from rlx_compile import CompilePipeline, ModuleBuilder
from rlx_compile.diagnostics import PassFailure
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter import run
from rlx_compile.ir import parse_module, print_module
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.pipeline import CompileError
from rlx_compile.quant import (
    CalibrationError,
    CalibrationStats,
    TensorStats,
    activation_qparams,
    calibrate,
    use_calibration,
    weight_qparams,
)
from rlx_compile.testing.ptq_peer import bake_params
from rlx_compile.testing.random_graphs import random_mir_graph
from tests.transforms.test_lowering_numeric import random_feeds


def apply(module: ModuleOp, pipeline: str) -> ModuleOp:
    out = module.clone()
    PassManager(parse_pipeline(pipeline)).run(out)
    return out


def lowered(module: ModuleOp) -> ModuleOp:
    return apply(module, "lower-hir-to-mir,canonicalize,cse,dce")


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def count(module: ModuleOp, op_type: type) -> int:
    return sum(isinstance(op, op_type) for op in module.walk())


def batches_for(module: ModuleOp, n: int, seed: int) -> list[dict[str, np.ndarray]]:
    return [random_feeds(module, seed + i)[0] for i in range(n)]


# ---------------------------------------------------------------------------------
# Stats
# ---------------------------------------------------------------------------------


def test_streaming_histogram_equals_one_shot() -> None:
    rng = np.random.default_rng(0)
    parts = [rng.standard_normal(500) * s for s in (0.1, 3.0, 0.5, 40.0)]
    streamed = TensorStats("k", "mir.input", "t")
    for p in parts:
        streamed.observe(p)
    whole = TensorStats("k", "mir.input", "t")
    whole.observe(np.concatenate(parts))
    np.testing.assert_array_equal(streamed.hist, whole.hist)
    assert (streamed.min, streamed.max, streamed.count) == (whole.min, whole.max, whole.count)
    # A percentile lands within one bin of NumPy's.
    mags = np.abs(np.concatenate(parts))
    bin_width = whole.hist_range / whole.bins
    assert abs(whole.percentile(99.0) - np.percentile(mags, 99.0)) <= bin_width
    assert whole.percentile(100.0) == pytest.approx(mags.max())


def test_stats_file_round_trip(tmp_path: Path) -> None:
    module = lowered(small_cnn())
    inputs, params = random_feeds(module)
    stats = calibrate(module, [inputs, random_feeds(module, 1)[0]], params)
    stats.save(tmp_path / "s.npz")
    again = CalibrationStats.load(tmp_path / "s.npz")
    assert again.fingerprint == stats.fingerprint and again.batches == 2
    for key, e in stats.entries.items():
        f = again[key]
        assert (f.min, f.max, f.count, f.producer, f.type) == (
            e.min,
            e.max,
            e.count,
            e.producer,
            e.type,
        )
        np.testing.assert_array_equal(f.hist, e.hist)
        for axis in e.channel_min:
            np.testing.assert_array_equal(f.channel_amax(axis), e.channel_amax(axis))
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(CalibrationError, match="cannot read calibration stats"):
        CalibrationStats.load(tmp_path / "bad.npz")


def test_calibrate_errors() -> None:
    module = lowered(small_cnn())
    with pytest.raises(CalibrationError, match="at least one batch"):
        calibrate(module, [], random_feeds(module)[1])
    with pytest.raises(CalibrationError, match="names \\['nope'\\]"):
        calibrate(module, [{"nope": np.zeros(1)}])
    with pytest.raises(CalibrationError, match="runs on MIR"):
        calibrate(small_cnn(), [{}])


# ---------------------------------------------------------------------------------
# Round trip: quantize -> dequantize is within half a step
# ---------------------------------------------------------------------------------


def _qdq(x: np.ndarray, scale: np.ndarray, zp: np.ndarray | None, axis: int | None) -> np.ndarray:
    with ModuleBuilder("qdq") as m:
        v = m.input("x", x.shape)
        s = m.constant(scale.astype(np.float32), "f32", scale.shape)
        z = None if zp is None else m.constant(zp.astype(np.int8), "i8", zp.shape)
        m.output(m.dequantize(m.quantize(v, s, z, axis=axis), s, z, axis=axis), names=["y"])
    return run(m.module, {"x": x})["y"]


floats = hnp.arrays(
    np.float32,
    hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=6),
    elements=st.floats(-50, 50, width=32),
)


@settings(max_examples=60, deadline=None)
@given(x=floats, symmetric=st.booleans(), per_channel=st.booleans())
# A denormal range once gave a scale that flushed to zero in f32.
@example(x=np.array([[1e-45]], np.float32), symmetric=False, per_channel=False)
@example(x=np.array([[-3e-39, 0.0]], np.float32), symmetric=True, per_channel=True)
def test_round_trip_error_at_most_half_a_step(
    x: np.ndarray, symmetric: bool, per_channel: bool
) -> None:
    stats = TensorStats("k", "mir.input", "t")
    stats.observe(x, [0])
    qp = weight_qparams(stats, 0) if per_channel else activation_qparams(stats, symmetric=symmetric)
    scale = qp.scale.astype(np.float32)
    y = _qdq(x, scale, qp.zero_point, qp.axis)
    step = scale if qp.axis is None else scale.reshape(-1, *([1] * (x.ndim - 1)))
    # Half a step, plus the f32 rounding of x / scale and of q · scale.
    bound = step / 2 * (1 + 1e-5) + np.abs(x) * 2.0**-22
    assert np.all(np.abs(y.astype(np.float64) - x) <= bound)


# ---------------------------------------------------------------------------------
# quant-insert
# ---------------------------------------------------------------------------------


def quantize_module(module: ModuleOp, params: dict, pipeline: str, n: int = 32) -> ModuleOp:
    stats = calibrate(module, batches_for(module, n, 100), params)
    with use_calibration(stats):
        return apply(module, pipeline)


@pytest.mark.parametrize("policy", ["direct", "fusable"])
@pytest.mark.parametrize("build", [decoder_block, small_cnn], ids=["decoder_block", "small_cnn"])
def test_int8_cosine_on_held_out_batches(build, policy: str) -> None:  # type: ignore[no-untyped-def]
    module = lowered(build(policy=policy))
    params = random_feeds(module, 7)[1]
    quant = quantize_module(module, params, "quant-insert,quant-propagate")
    assert count(quant, mir.QuantizeOp) > 0
    for i in range(3):
        inputs = random_feeds(module, 1000 + i)[0]
        want, got = run(module, inputs, params), run(quant, inputs, params)
        for k in want:
            assert cosine(got[k], want[k]) >= 0.99


def test_granularity_symmetry_percentile() -> None:
    module = lowered(small_cnn(policy="fusable"))
    params = random_feeds(module, 7)[1]
    stats = calibrate(module, batches_for(module, 4, 0), params)

    def insert(options: str) -> ModuleOp:
        with use_calibration(stats):
            return apply(module, f"quant-insert{{{options}}}")

    per_channel = insert("granularity=per-channel")
    per_tensor = insert("granularity=per-tensor")
    axes = lambda m: sorted(  # noqa: E731
        str(op.props().opt_int("axis")) for op in m.walk() if isinstance(op, mir.QuantizeOp)
    )
    assert axes(per_channel) == ["0", "0", "1", "None", "None", "None"]
    assert axes(per_tensor) == ["None"] * 6
    asym = insert("symmetric=false")
    zps = [op for op in asym.walk() if isinstance(op, mir.QuantizeOp) and op.zero_point]
    # The post-relu activations (all >= 0) map [0, max] onto [-128, 127]; weights stay
    # symmetric, and the image's zero point rounds to 0 here (left out).
    assert [int(op.zero_point.owner.to_numpy()) for op in zps] == [-128, -128]
    scales = lambda m: [  # noqa: E731
        float(op.scale.owner.to_numpy().max()) for op in m.walk()
        if isinstance(op, mir.QuantizeOp) and op.props().opt_int("axis") is None
    ]  # fmt: skip
    clipped = insert("calibration=percentile percentile=99.0")
    assert all(c <= f for c, f in zip(scales(clipped), scales(per_channel), strict=True))
    assert any(c < f for c, f in zip(scales(clipped), scales(per_channel), strict=True))


def test_shared_value_one_pair_and_untouched_graphs() -> None:
    """Spec 9.8 H3, with matmul taps: both operands of x·x read one dequantize; a graph
    without matmul or conv comes out unchanged and needs no stats."""
    with ModuleBuilder("h3") as m:
        y = m.relu(m.input("x", (4, 4)))
        m.output(m.matmul(y, y), names=["z"])
    q = quantize_module(m.module, {}, "quant-insert", n=2)
    (mm,) = [op for op in q.walk() if isinstance(op, mir.MatmulOp)]
    assert isinstance(mm.lhs.owner, mir.DequantizeOp) and mm.lhs is mm.rhs
    assert count(q, mir.QuantizeOp) == 1
    with ModuleBuilder("plain") as m2:
        m2.output(m2.relu(m2.input("x", (4, 4))), names=["y"])
    assert print_module(apply(m2.module, "quant-insert")) == print_module(m2.module)


def test_stats_of_another_module_are_rejected() -> None:
    cnn = lowered(small_cnn())
    stats = calibrate(cnn, batches_for(cnn, 1, 0), random_feeds(cnn)[1])
    other = lowered(small_cnn(policy="fusable"))
    with use_calibration(stats), pytest.raises(PassFailure, match="calibrate this module"):
        apply(other, "quant-insert")


def test_rlx_opt_with_stats_file_matches_python(tmp_path: Path) -> None:
    module = lowered(small_cnn())
    params = random_feeds(module, 7)[1]
    stats = calibrate(module, batches_for(module, 4, 0), params)
    stats.save(tmp_path / "calib.npz")
    src = tmp_path / "cnn.mlir"
    src.write_text(print_module(module))
    out = subprocess.run(
        [Path(sys.executable).parent / "rlx-opt", src, "-p",
         f'quant-insert{{stats="{tmp_path / "calib.npz"}"}},quant-propagate'],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    with use_calibration(stats):
        in_process = apply(module, "quant-insert,quant-propagate")
    inputs = random_feeds(module, 3)[0]
    np.testing.assert_array_equal(
        run(parse_module(out), inputs, params)["logits"], run(in_process, inputs, params)["logits"]
    )


def test_rlx_calibrate_cli(tmp_path: Path) -> None:
    module = lowered(small_cnn())
    src = tmp_path / "cnn.mlir"
    src.write_text(print_module(module))
    feeds = batches_for(module, 3, 0)
    np.savez(tmp_path / "data.npz", image=np.stack([f["image"] for f in feeds]))
    params = random_feeds(module, 7)[1]
    np.savez(tmp_path / "params.npz", **params)
    bin_dir = Path(sys.executable).parent
    subprocess.run(
        [bin_dir / "rlx-calibrate", src, "--batches", tmp_path / "data.npz", "--params",
         tmp_path / "params.npz", "-o", tmp_path / "calib.npz"],
        check=True, capture_output=True,
    )  # fmt: skip
    from_file = CalibrationStats.load(tmp_path / "calib.npz")
    direct = calibrate(module, feeds, params)
    assert from_file.entries.keys() == direct.entries.keys()
    for k, e in direct.entries.items():
        assert (from_file[k].min, from_file[k].max) == (e.min, e.max)
    bad = subprocess.run(
        [bin_dir / "rlx-calibrate", src, "-o", tmp_path / "x.npz"], capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert bad.stderr.strip() == "error: give exactly one of --batches FILE and --random N"


# ---------------------------------------------------------------------------------
# quant-propagate never changes the executor's output
# ---------------------------------------------------------------------------------


def _random_qdq_chain(seed: int) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """x -> Q/DQ -> a random chain of data movement, relu, max-pool and concat, with Q/DQ
    pairs of the same (or sometimes another) scale in between -> matmul with a
    per-channel quantised constant weight (and, sometimes, behind a transpose)."""
    rng = np.random.default_rng(seed)
    with ModuleBuilder("chain") as m:
        x = m.input("x", (2, 4, 4, 4))
        s = m.constant(np.float32(rng.uniform(0.01, 0.1)), "f32", ())
        s_other = m.constant(np.float32(rng.uniform(0.01, 0.1)), "f32", ())

        def pair(v, scale):  # type: ignore[no-untyped-def]
            return m.dequantize(m.quantize(v, scale), scale)

        h = pair(x, s)
        for _ in range(int(rng.integers(2, 7))):
            kind = int(rng.integers(0, 6))
            if kind == 0:
                h = m.relu(h)
            elif kind == 1:
                h = m.transpose(h, (0, 1, 3, 2))
            elif kind == 2:
                h = m.reshape(m.reshape(h, (2, 64)), (2, 4, 4, 4))
            elif kind == 3:
                h = m.max_pool(h, (1, 1))
            elif kind == 4:
                h = m.concat([m.narrow(h, 1, 0, 2), m.narrow(h, 1, 2, 2)], axis=1)
            else:
                h = pair(h, s if rng.random() < 0.7 else s_other)
            if rng.random() < 0.5:
                h = pair(h, s)
        flat = m.reshape(h, (2, 64))
        w = rng.standard_normal((3, 64)).astype(np.float32)
        wc = m.constant(w, "f32", w.shape)
        wt = m.transpose(wc, (1, 0)) if rng.random() < 0.5 else m.constant(w.T.copy(), "f32")
        ws = m.constant(np.abs(w).max(axis=1) / 127, "f32", (3,))
        wq = m.dequantize(m.quantize(wt, ws, axis=1), ws, axis=1)
        m.output(m.matmul(pair(flat, s), wq), h, names=["y", "h"])
    return m.module, {"x": rng.uniform(-3, 3, (2, 4, 4, 4)).astype(np.float32)}


@pytest.mark.parametrize("seed", range(40))
def test_propagation_preserves_outputs_on_chains(seed: int) -> None:
    module, inputs = _random_qdq_chain(seed)
    want = run(module, inputs)
    after = apply(module, "quant-propagate")
    got = run(after, inputs)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
    pairs = count(after, mir.QuantizeOp) + count(after, mir.DequantizeOp)
    assert pairs <= count(module, mir.QuantizeOp) + count(module, mir.DequantizeOp)
    assert count(after, mir.QuantizeOp) < count(module, mir.QuantizeOp)  # the weight folds


@pytest.mark.parametrize("seed", range(12))
def test_propagation_preserves_outputs_on_random_graphs(seed: int) -> None:
    g = random_mir_graph(seed, 30)
    stats = calibrate(g.module, [g.inputs], g.params)
    with use_calibration(stats):
        quant = apply(g.module, "quant-insert{granularity=per-tensor}")
    want = run(quant, g.inputs, g.params)
    got = run(apply(quant, "quant-propagate"), g.inputs, g.params)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])


def test_propagate_folds_constant_weights_to_int8() -> None:
    module = lowered(small_cnn(policy="fusable"))
    params = random_feeds(module, 7)[1]
    # Weights as constants (what param-specialize produces): they fold to int8 constants.
    baked = bake_params(module, params)
    quant = quantize_module(baked, {}, "quant-insert", n=4)
    folded = apply(quant, "quant-propagate")
    int8_constants = [
        op for op in folded.walk()
        if isinstance(op, mir.ConstantOp) and op.result.type.dtype.value == "i8"
    ]  # fmt: skip
    assert len(int8_constants) == 3  # conv1, conv2, fc weights
    assert count(folded, mir.QuantizeOp) == count(quant, mir.QuantizeOp) - 3
    inputs = random_feeds(module, 3)[0]
    np.testing.assert_array_equal(run(folded, inputs)["logits"], run(quant, inputs)["logits"])


def test_propagate_folds_weights_past_the_cap_but_not_broadcasts() -> None:
    """Weight folding evaluates with the one compile-time evaluator: its cap (1 << 20
    elements) rises to the size of the weights read, so a large weight still folds to
    int8, while a scalar broadcast to that size stays an op (it would grow the module)."""
    big = (1100, 1000)  # 1.1M elements, over the cap
    with ModuleBuilder("g") as m:
        x = m.input("x", big)
        scale = m.constant(np.array(0.05, np.float32), DType.F32, ())
        weight = m.constant(np.ones(big, np.float32), DType.F32, big)
        spread = m.expand(m.constant(np.array(2.0, np.float32), DType.F32, ()), big)
        ys = [m.add(m.dequantize(m.quantize(w, scale), scale), x) for w in (weight, spread)]
        m.output(m.add(ys[0], ys[1]), names=["y"])
    folded = apply(m.module, "quant-propagate")
    quantized = [op for op in folded.walk() if isinstance(op, mir.QuantizeOp)]
    assert len(quantized) == 1 and isinstance(quantized[0].input.owner, mir.ExpandOp)
    int8 = [
        op for op in folded.walk()
        if isinstance(op, mir.ConstantOp) and op.result.type.dtype is DType.I8
    ]  # fmt: skip
    assert [op.result.type.shape for op in int8] == [big]


# ---------------------------------------------------------------------------------
# scaled fp8
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "floor"), [("f8e4m3", 0.995), ("f8e5m2", 0.985)])
def test_scaled_fp8_decoder(dtype: str, floor: float) -> None:
    module = lowered(decoder_block(policy="fusable"))
    inputs, params = random_feeds(module, 2)
    params = {k: v * np.float32(0.25) for k, v in params.items()}  # std 1/8 ~ 1/sqrt(64)
    fp8 = apply(module, f"scaled-quant-insert{{dtype={dtype}}}")
    assert count(fp8, mir.QuantizeOp) == 4 + 7  # normed inputs/activations + 7 weights
    # Compare the block's update y - x: the residual alone would make any error look small.
    want = run(module, inputs, params)["y"] - inputs["x"]
    assert cosine(run(fp8, inputs, params)["y"] - inputs["x"], want) >= floor


def test_scaled_fp8_zero_tensor_and_calibrated_amax() -> None:
    with ModuleBuilder("g") as m:
        x = m.input("x", (2, 4))
        m.output(m.matmul(x, m.param("w", (4, 3))), names=["y"])
    zero = {"x": np.zeros((2, 4), np.float32)}, {"w": np.zeros((4, 3), np.float32)}
    out = run(apply(m.module, "scaled-quant-insert"), *zero)["y"]
    np.testing.assert_array_equal(out, np.zeros((2, 3), np.float32))
    inputs, params = random_feeds(m.module, 0)
    stats = calibrate(m.module, [inputs], params)
    with use_calibration(stats):
        static = apply(m.module, "scaled-quant-insert{amax=calibrated}")
    scales = sorted(
        float(op.scale.owner.to_numpy()) for op in static.walk() if isinstance(op, mir.QuantizeOp)
    )
    want = sorted(float(np.abs(v).max()) / 448 for v in (inputs["x"], params["w"]))
    assert scales == pytest.approx(want, rel=1e-6)
    dynamic = run(apply(m.module, "scaled-quant-insert"), inputs, params)["y"]
    np.testing.assert_array_equal(run(static, inputs, params)["y"], dynamic)


# ---------------------------------------------------------------------------------
# CompilePipeline
# ---------------------------------------------------------------------------------


def test_compile_pipeline_int8_and_bf16() -> None:
    module = small_cnn(batch=2)
    params = random_feeds(lowered(module), 7)[1]
    calibration = (b for b in batches_for(lowered(module), 8, 0))  # a generator is fine
    pipe = CompilePipeline(
        target="cpu", quantize="int8", calibration=calibration, calibration_params=params
    )
    assert (
        "quant-insert{granularity=per-channel symmetric=true calibration=minmax},quant-propagate"
        in pipe.pipeline
    )
    result = pipe.compile(module)
    assert result.lir is not None and result.calibration is not None
    reference = CompilePipeline(target="cpu", plan_memory=False).compile(module)
    inputs = random_feeds(lowered(module), 50)[0]
    want = reference.run(inputs, params)["logits"]
    assert cosine(result.run(inputs, params)["logits"], want) >= 0.99
    bf16 = CompilePipeline(target="cpu", precision="bf16").compile(module)
    assert "auto-mixed-precision{dtype=bf16 policy=compute}" in bf16.pipeline
    got = bf16.run(inputs, params)["logits"]
    assert np.abs(got - want).max() <= 8 * 2.0**-7 * max(np.abs(want).max(), 1.0)
    fp8 = CompilePipeline(target="cpu", quantize="fp8").compile(module)
    assert cosine(fp8.run(inputs, params)["logits"], want) >= 0.99


def test_compile_pipeline_option_errors() -> None:
    with pytest.raises(CompileError, match="quantize='int8' needs calibration data"):
        CompilePipeline(target="cpu", quantize="int8")
    with pytest.raises(CompileError, match="unknown quantize scheme 'int4'"):
        CompilePipeline(target="cpu", quantize="int4")
    with pytest.raises(CompileError, match="unknown precision 'f8'"):
        CompilePipeline(target="cpu", precision="f8")
    with pytest.raises(CompileError, match="only used with quantize"):
        CompilePipeline(target="cpu", calibration=[{}])
    pipe = CompilePipeline(target="cpu", quantize="fp8", calibration=[{}])
    assert "amax=calibrated" in pipe.pipeline
    pipe = CompilePipeline(target="cpu", quantize="int8", quant_symmetric=False, calibration=[{}])
    assert "quant-insert{granularity=per-channel symmetric=false " in pipe.pipeline


def test_progress_bar_draws_only_when_enabled_and_slow() -> None:
    import io

    from rlx_compile.progress import Progress

    shown, hidden, quick = io.StringIO(), io.StringIO(), io.StringIO()
    with Progress("calibrating", 3, enabled=True, delay=0.0, stream=shown) as bar:
        for _ in range(3):
            bar.advance()
    with Progress("calibrating", 3, enabled=False, delay=0.0, stream=hidden) as bar:
        bar.advance()
    with Progress("calibrating", 3, enabled=True, delay=60.0, stream=quick) as bar:
        bar.advance()
    assert "calibrating [" in shown.getvalue() and "3/3" in shown.getvalue()
    assert shown.getvalue().endswith("\n")
    assert hidden.getvalue() == "" and quick.getvalue() == ""


@settings(max_examples=80, deadline=None)
@given(
    x=hnp.arrays(np.float32, st.integers(1, 40), elements=st.floats(-100, 100, width=32)),
    dtype=st.sampled_from(["i8", "u8", "i4", "u4", "i2", "u2"]),
)
def test_narrow_integer_round_trip_within_half_a_step(x: np.ndarray, dtype: str) -> None:
    """Quantize -> dequantize through the executor for every integer width: with the
    range mapped onto the type's [min, max], each value comes back within half a step."""
    lo, hi = DType.parse(dtype).int_range
    x_lo, x_hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = np.float32(max((x_hi - x_lo) / (hi - lo), 1e-6))
    zp = np.clip(np.rint(lo - x_lo / scale), lo, hi)
    with ModuleBuilder("qdq") as m:
        v = m.input("x", x.shape)
        s = m.constant(np.array(scale), "f32", ())
        z = m.constant(np.array(zp).astype(DType.parse(dtype).numpy), dtype, ())
        m.output(m.dequantize(m.quantize(v, s, z, dtype=dtype), s, z), names=["y"])
    y = run(m.module, {"x": x})["y"]
    # Half a step, plus the f32 rounding of x / scale and of q · scale.
    bound = scale / 2 * (1 + 1e-5) + np.abs(x) * 2.0**-22 + scale * 1e-5
    assert np.all(np.abs(y.astype(np.float64) - x) <= bound)
