"""Recognition of the decompositions exporters write (fuse-rms-norm, fuse-rope,
fuse-attention): each spelling becomes the one op, the reference executor gives the same
outputs on random inputs before and after (within 1e-5 of each output's scale: the fused
ops round once where the chains round at every step), and chains that must not fuse do
not (with the near miss reported where the shape was right)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from rlx_compile import CompilePipeline, ModuleBuilder
from rlx_compile.builder import GraphBuilder
from rlx_compile.dialects import mir
from rlx_compile.fusion import FusionReport, fusion_passes
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, graph_params, main_graph
from rlx_compile.pipeline import CompileError, CompileOptions, default_pipeline
from tests.fusion.helpers import apply, assert_close, op_names

Build = Callable[[ModuleBuilder], None]


def feeds(module: ModuleOp, seed: int = 0) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Random values for every input and param (bool ones: a random mask with the
    diagonal kept, so no softmax row is masked whole)."""
    rng = np.random.default_rng(seed)
    out: list[dict[str, np.ndarray]] = [{}, {}]
    g = main_graph(module)
    for i, leaves in enumerate((graph_inputs(g), graph_params(g))):
        for leaf in leaves:
            shape = tuple(int(d) for d in leaf.type.shape)
            dtype = leaf.type.dtype.numpy
            if dtype == np.bool_:
                value = (rng.random(shape) < 0.6) | np.eye(shape[-2], shape[-1], dtype=bool)
            else:
                value = rng.standard_normal(shape).astype(dtype)
            out[i][leaf.name] = value
    return out[0], out[1]


def recognise(build: Build, pipeline: str) -> tuple[ModuleOp, ModuleOp, FusionReport]:
    with ModuleBuilder("idiom") as m:
        build(m)
    after, reports = apply(m.module, pipeline)
    (report,) = [r for r in reports if isinstance(r, FusionReport)]
    return m.module, after, report


def check(build: Build, pipeline: str, op: str, count: int = 1) -> tuple[ModuleOp, FusionReport]:
    """``pipeline`` makes ``count`` ops ``op`` of the chains and keeps the numbers."""
    before, after, report = recognise(build, pipeline)
    assert op_names(after).count(op) == count, op_names(after)
    inputs, params = feeds(before)
    assert_close(run(after, inputs, params), run(before, inputs, params))
    return after, report


def only(module: ModuleOp, kind: type) -> object:
    (op,) = [o for o in main_graph(module).walk() if isinstance(o, kind)]
    return op


# =====================================================================================
# RMSNorm
# =====================================================================================

X3 = (2, 5, 16)
EPS = 1e-6


def mean_sq(m: GraphBuilder, x: SSAValue, square: str = "pow", axes: tuple[int, ...] = (2,)):  # type: ignore[no-untyped-def]
    sq = m.pow(x, 2.0) if square == "pow" else m.mul(x, x)
    return m.mean(sq, list(axes), keepdims=True)


def rms_llama(m: ModuleBuilder) -> None:
    x, g = m.input("x", X3), m.param("g", (16,))
    r = m.unary(mir.ReciprocalOp, m.sqrt(m.add(mean_sq(m, x), EPS)))
    m.output(m.mul(m.mul(x, r), g))


def rms_rsqrt_gamma_first(m: ModuleBuilder) -> None:
    x, g = m.input("x", X3), m.param("g", (16,))
    m.output(m.mul(g, m.mul(x, m.rsqrt(m.add(EPS, mean_sq(m, x, "mul"))))))


def rms_div_no_gamma(m: ModuleBuilder) -> None:
    x = m.input("x", X3)
    m.output(m.div(x, m.sqrt(m.add(mean_sq(m, x, "mul"), EPS))))


def rms_gamma_inside(m: ModuleBuilder) -> None:
    x, g = m.input("x", X3), m.param("g", (16,))
    m.output(m.mul(m.mul(g, x), m.rsqrt(m.add(mean_sq(m, x), EPS))))


def rms_pow_minus_half(m: ModuleBuilder) -> None:
    x, g = m.input("x", X3), m.param("g", (16,))
    m.output(m.mul(m.mul(x, m.pow(m.add(mean_sq(m, x), EPS), -0.5)), g))


def rms_one_over_sqrt(m: ModuleBuilder) -> None:
    x, g = m.input("x", X3), m.param("g", (16,))
    inv = m.div(1.0, m.sqrt(m.add(mean_sq(m, x), EPS)))
    m.output(m.mul(m.mul(x, inv), g))


def rms_two_axes(m: ModuleBuilder) -> None:
    x, g = m.input("x", X3), m.param("g", (5, 16))
    m.output(m.mul(m.mul(x, m.rsqrt(m.add(mean_sq(m, x, axes=(1, 2)), EPS))), g))


def rms_no_eps(m: ModuleBuilder) -> None:
    x, g = m.input("x", X3), m.param("g", (16,))
    m.output(m.mul(m.mul(x, m.rsqrt(mean_sq(m, x))), g))


def rms_f64(m: ModuleBuilder) -> None:
    x, g = m.input("x", X3, "f64"), m.param("g", (16,), "f64")
    m.output(m.mul(m.mul(x, m.rsqrt(m.add(mean_sq(m, x), EPS))), g))


@pytest.mark.parametrize(
    "build",
    [rms_llama, rms_rsqrt_gamma_first, rms_div_no_gamma, rms_gamma_inside, rms_pow_minus_half,
     rms_one_over_sqrt, rms_two_axes, rms_no_eps, rms_f64],
)  # fmt: skip
def test_rms_norm_spellings(build: Build) -> None:
    after, report = check(build, "fuse-rms-norm", "mir.rms_norm")
    assert not {"mir.reduce_mean", "mir.sqrt", "mir.rsqrt", "mir.pow"} & set(op_names(after))
    assert report.count("rms_norm") == 1 and not report.missed
    norm = only(after, mir.RmsNormOp)
    assert isinstance(norm, mir.RmsNormOp)
    p = norm.props()
    assert p.int("axis") == (1 if build is rms_two_axes else 2)
    assert p.float("epsilon") == (0.0 if build is rms_no_eps else pytest.approx(EPS, rel=1e-7))


def test_rms_norm_then_residual_norm() -> None:
    """Once recognised, the residual add before the norm fuses too (both results used)."""

    def build(m: ModuleBuilder) -> None:
        a, b, g = m.input("a", X3), m.input("b", X3), m.param("g", (16,))
        s = m.add(a, b)
        m.output(m.mul(m.mul(s, m.rsqrt(m.add(mean_sq(m, s), EPS))), g), s)

    _, report = check(build, "fuse{target=cpu}", "mir.fused_residual_rms_norm")
    assert report.count("rms_norm") == 1 and report.count("residual_rms_norm") == 1


def test_rms_norm_scale_folds_into_an_unscaled_norm() -> None:
    def build(m: ModuleBuilder) -> None:
        x, g = m.input("x", X3), m.param("g", (16,))
        m.output(m.mul(g, m.rms_norm(x, m.scalar_like(1.0, x))))

    after, report = check(build, "fuse-rms-norm", "mir.rms_norm")
    assert "mir.mul" not in op_names(after) and report.count("rms_norm_scale") == 1


def rms_mid_axis(m: ModuleBuilder) -> None:
    x = m.input("x", X3)
    m.output(m.mul(x, m.rsqrt(m.add(mean_sq(m, x, axes=(1,)), EPS))))


def rms_param_eps(m: ModuleBuilder) -> None:
    x = m.input("x", X3)
    m.output(m.mul(x, m.rsqrt(m.add(mean_sq(m, x), m.param("eps", ())))))


def rms_cube(m: ModuleBuilder) -> None:
    x = m.input("x", X3)
    m.output(m.mul(x, m.rsqrt(m.add(m.mean(m.pow(x, 3.0), [2], keepdims=True), EPS))))


def rms_other_x(m: ModuleBuilder) -> None:
    x, y = m.input("x", X3), m.input("y", X3)
    m.output(m.mul(y, m.rsqrt(m.add(mean_sq(m, x), EPS))))


@pytest.mark.parametrize("build", [rms_mid_axis, rms_param_eps, rms_cube, rms_other_x])
def test_rms_norm_look_alikes_do_not_fuse(build: Build) -> None:
    _, after, report = recognise(build, "fuse-rms-norm")
    assert "mir.rms_norm" not in op_names(after) and not report.fused and not report.missed


@pytest.mark.parametrize(
    ("dtype", "output_mean", "target", "reason"),
    [("f32", True, "cpu", "the mean of squares is also a graph output"),
     ("f16", False, "cpu", "the norm is computed in f16"),
     ("f32", False, "cortex-m", "mir.rms_norm not claimed by target cortex-m")],
)  # fmt: skip
def test_rms_norm_near_misses(dtype: str, output_mean: bool, target: str, reason: str) -> None:
    def build(m: ModuleBuilder) -> None:
        x = m.input("x", X3, dtype)
        ms = mean_sq(m, x)
        y = m.mul(x, m.rsqrt(m.add(ms, EPS)))
        m.output(y, ms) if output_mean else m.output(y)

    _, after, report = recognise(build, f"fuse-rms-norm{{target={target}}}")
    assert "mir.rms_norm" not in op_names(after)
    (miss,) = report.missed_by("rms_norm")
    assert miss.reason.startswith(reason)


def test_rms_norm_gamma_that_broadcasts_the_result_stays_a_mul() -> None:
    def build(m: ModuleBuilder) -> None:
        x, g = m.input("x", (1, 5, 16)), m.param("g", (2, 1, 16))
        m.output(m.mul(m.mul(x, m.rsqrt(m.add(mean_sq(m, x), EPS))), g))

    after, _ = check(build, "fuse-rms-norm", "mir.rms_norm")
    assert op_names(after).count("mir.mul") == 1


# =====================================================================================
# RoPE
# =====================================================================================

XR = (1, 2, 6, 8)  # [B, H, S, d]
HALF = 4


def angles(n: int = 6, half: int = HALF) -> np.ndarray:
    inv = 1.0 / 10000 ** (np.arange(half) / half)
    return np.outer(np.arange(n), inv).astype(np.float32)


def rotate_half(m: GraphBuilder, x: SSAValue, d: int = 8, neg: str = "neg") -> SSAValue:
    h = d // 2
    x1, x2 = m.narrow(x, -1, 0, h), m.narrow(x, -1, h, h)
    minus = m.neg(x2) if neg == "neg" else m.mul(x2, -1.0)
    return m.concat([minus, x1], -1)


def rope_of(m: GraphBuilder, x: SSAValue, cos: SSAValue, sin: SSAValue, d: int = 8) -> SSAValue:
    return m.add(m.mul(x, cos), m.mul(rotate_half(m, x, d), sin))


def full(table: np.ndarray) -> np.ndarray:
    return np.concatenate([table, table], axis=-1)


def rope_constant_tables(m: ModuleBuilder) -> None:
    a = angles()
    x = m.input("x", XR)
    m.output(rope_of(m, x, m.constant(full(np.cos(a))), m.constant(full(np.sin(a)))))


def rope_concat_tables(m: ModuleBuilder) -> None:
    x, c, s = m.input("x", XR), m.param("c", (6, HALF)), m.param("s", (6, HALF))
    m.output(rope_of(m, x, m.concat([c, c], -1), m.concat([s, s], -1)))


def rope_computed_tables(m: ModuleBuilder) -> None:
    """HF: emb = cat(freqs, freqs); cos = emb.cos()[None, None] (and sin)."""
    x, f = m.input("x", XR), m.input("freqs", (6, HALF))
    emb = m.concat([f, f], -1)
    cos = m.reshape(m.unary(mir.CosOp, emb), (1, 1, 6, 8))
    sin = m.reshape(m.unary(mir.SinOp, emb), (1, 1, 6, 8))
    m.output(rope_of(m, x, cos, sin))


def rope_gathered_tables(m: ModuleBuilder) -> None:
    """Tables gathered from a constant cache at the positions (and scaled)."""
    a = angles(10)
    x, pos = m.input("x", XR), m.constant(np.array([3, 1, 4, 1, 5, 9]), "i64")
    cos = m.mul(m.gather(m.constant(full(np.cos(a))), pos), 1.5)
    sin = m.mul(m.gather(m.constant(full(np.sin(a))), pos), 1.5)
    m.output(rope_of(m, x, cos, sin))


def rope_swapped(m: ModuleBuilder) -> None:
    """sin · rotate_half(x) + cos · x, the negation as · -1."""
    x, c, s = m.input("x", XR), m.param("c", (6, HALF)), m.param("s", (6, HALF))
    cos, sin = m.concat([c, c], -1), m.concat([s, s], -1)
    m.output(m.add(m.mul(sin, rotate_half(m, x, neg="mul")), m.mul(cos, x)))


def rope_slices(m: ModuleBuilder) -> None:
    """The halves as unit-step slices (a multi-axis ONNX Slice imports as one)."""
    x, c, s = m.input("x", XR), m.param("c", (6, HALF)), m.param("s", (6, HALF))

    def part(start: int) -> SSAValue:
        op = mir.SliceOp(x, [0, 0, 0, start], [1, 1, 1, 1], [*XR[:-1], HALF])
        return m.emit(op).results[0]

    rot = m.concat([m.neg(part(HALF)), part(0)], -1)
    m.output(m.add(m.mul(x, m.concat([c, c], -1)), m.mul(rot, m.concat([s, s], -1))))


def rope_one_angle(m: ModuleBuilder) -> None:
    x, c, s = m.input("x", XR), m.param("c", (6, 1)), m.param("s", (6, 1))
    m.output(rope_of(m, x, c, s))


def rope_halves(m: ModuleBuilder) -> None:
    """concat(x1·c - x2·s, x2·c + x1·s): legalize's spelling of mir.rope."""
    x, c, s = m.input("x", XR), m.param("c", (6, HALF)), m.param("s", (6, HALF))
    x1, x2 = m.narrow(x, -1, 0, HALF), m.narrow(x, -1, HALF, HALF)
    lo = m.sub(m.mul(x1, c), m.mul(s, x2))
    m.output(m.concat([lo, m.add(m.mul(s, x1), m.mul(x2, c))], -1))


@pytest.mark.parametrize(
    "build",
    [rope_constant_tables, rope_concat_tables, rope_computed_tables, rope_gathered_tables,
     rope_swapped, rope_slices, rope_one_angle, rope_halves],
)  # fmt: skip
def test_rope_spellings(build: Build) -> None:
    after, report = check(build, "fuse-rope,dce", "mir.rope")
    assert not {"mir.neg", "mir.narrow", "mir.slice", "mir.concat"} & set(op_names(after))
    assert report.count("rope") == 1 and not report.missed
    rope = only(after, mir.RopeOp)
    assert isinstance(rope, mir.RopeOp)
    assert rope.cos.type.shape[-1] in (1, HALF)  # type: ignore[attr-defined]


def test_rope_q_and_k_share_their_half_tables() -> None:
    def build(m: ModuleBuilder) -> None:
        a = angles()
        cos, sin = m.constant(full(np.cos(a))), m.constant(full(np.sin(a)))
        q, k = m.input("q", XR), m.input("k", (1, 1, 6, 8))
        m.output(rope_of(m, q, cos, sin), rope_of(m, k, cos, sin))

    after, _ = check(build, "fuse-rope,dce", "mir.rope", 2)
    first, second = [o for o in main_graph(after).walk() if isinstance(o, mir.RopeOp)]
    assert first.cos is second.cos and first.sin is second.sin


def test_partial_rotary() -> None:
    """concat(rope(x[..., :4]), x[..., 4:]) -> rope(x, rotary_dim=4)."""

    def build(m: ModuleBuilder) -> None:
        x, c, s = m.input("x", XR), m.param("c", (6, 2)), m.param("s", (6, 2))
        rot = rope_of(m, m.narrow(x, -1, 0, 4), m.concat([c, c], -1), m.concat([s, s], -1), 4)
        m.output(m.concat([rot, m.narrow(x, -1, 4, 4)], -1))

    after, report = check(build, "fuse-rope,dce", "mir.rope")
    rope = only(after, mir.RopeOp)
    assert isinstance(rope, mir.RopeOp) and rope.props().opt_int("rotary_dim") == 4
    assert report.count("partial_rope") == 1 and op_names(after).count("mir.narrow") == 0


def rope_wrong_rotation(m: ModuleBuilder) -> None:
    x, c, s = m.input("x", XR), m.param("c", (6, HALF)), m.param("s", (6, HALF))
    x1, x2 = m.narrow(x, -1, 0, HALF), m.narrow(x, -1, HALF, HALF)
    rot = m.concat([x1, m.neg(x2)], -1)  # not rotate_half
    m.output(m.add(m.mul(x, m.concat([c, c], -1)), m.mul(rot, m.concat([s, s], -1))))


def rope_other_tensor(m: ModuleBuilder) -> None:
    x, y = m.input("x", XR), m.input("y", XR)
    c, s = m.param("c", (6, HALF)), m.param("s", (6, HALF))
    m.output(m.add(m.mul(x, m.concat([c, c], -1)), m.mul(rotate_half(m, y), m.concat([s, s], -1))))


@pytest.mark.parametrize("build", [rope_wrong_rotation, rope_other_tensor])
def test_rope_look_alikes_do_not_fuse(build: Build) -> None:
    _, after, report = recognise(build, "fuse-rope")
    assert "mir.rope" not in op_names(after) and not report.fused and not report.missed


def test_rope_tables_of_unknown_halves_are_a_near_miss() -> None:
    """Param tables spanning all channels (an export's sliced cos/sin buffers): their
    halves may differ, so mir.rope cannot take them."""

    def build(m: ModuleBuilder) -> None:
        x, cos, sin = m.input("x", XR), m.param("cos", (6, 8)), m.param("sin", (6, 8))
        m.output(rope_of(m, x, cos, sin))

    _, after, report = recognise(build, "fuse-rope")
    assert "mir.rope" not in op_names(after)
    (miss,) = report.missed_by("rope")
    assert miss.reason == (
        "cos [6, 8] spans all 8 rotated channels and its two halves are not known to be equal"
    )


def test_rope_constant_tables_with_different_halves_do_not_fuse() -> None:
    def build(m: ModuleBuilder) -> None:
        a = np.concatenate([angles(), 2 * angles()], axis=-1)
        x = m.input("x", XR)
        m.output(rope_of(m, x, m.constant(np.cos(a)), m.constant(np.sin(a))))

    _, after, report = recognise(build, "fuse-rope")
    assert "mir.rope" not in op_names(after) and len(report.missed_by("rope")) == 1


def test_rope_shared_rotation_is_a_near_miss() -> None:
    def build(m: ModuleBuilder) -> None:
        x, c, s = m.input("x", XR), m.param("c", (6, HALF)), m.param("s", (6, HALF))
        rot = rotate_half(m, x)
        y = m.add(m.mul(x, m.concat([c, c], -1)), m.mul(rot, m.concat([s, s], -1)))
        m.output(y, rot)

    _, _, report = recognise(build, "fuse-rope")
    (miss,) = report.missed_by("rope")
    assert miss.reason == "the rotated half is also a graph output"


# =====================================================================================
# Attention
# =====================================================================================

B, H, HKV, S, D = 2, 4, 2, 6, 8
NEG = float(np.finfo(np.float32).min)


def repeat_kv(m: GraphBuilder, x: SSAValue, n: int) -> SSAValue:
    """repeat_interleave over heads as PyTorch's exporter writes it."""
    b, h, s, d = (int(v) for v in x.type.shape)  # type: ignore[attr-defined]
    e = m.expand(m.reshape(x, (b, h, 1, s, d)), (b, h, n, s, d))
    return m.reshape(e, (b, h * n, s, d))


def exported_key(m: GraphBuilder, k: SSAValue) -> SSAValue:
    """kᵀ through a [B·H, S, D] transpose, as the exporter writes it."""
    b, h, s, d = (int(v) for v in k.type.shape)  # type: ignore[attr-defined]
    t = m.transpose(m.reshape(k, (b * h, s, d)), (0, 2, 1))
    return m.reshape(t, (b, h, d, s))


def causal_mask(value: float = NEG) -> np.ndarray:
    return np.triu(np.full((S, S), value, np.float32), 1)


def attend(m: GraphBuilder, scores: SSAValue, v: SSAValue) -> SSAValue:
    return m.matmul(m.softmax(scores, -1), v)


def att_torch_export(m: ModuleBuilder) -> None:
    """llama.onnx: √scale on q and kᵀ, GQA repeats, a constant finfo.min causal mask."""
    q, k, v = m.input("q", (B, H, S, D)), m.input("k", (B, HKV, S, D)), m.input("v", (B, HKV, S, D))
    root = float(np.float32(math.sqrt(1 / math.sqrt(D))))
    kt = m.mul(exported_key(m, repeat_kv(m, k, H // HKV)), root)
    scores = m.add(m.matmul(m.mul(q, root), kt), m.constant(causal_mask()))
    m.output(attend(m, scores, repeat_kv(m, v, H // HKV)))


def att_scores_divided(m: ModuleBuilder) -> None:
    """softmax(q·kᵀ / √D + mask) · v with a mask param: an explicit mask."""
    q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
    scores = m.div(m.matmul(q, m.transpose(k, (0, 1, 3, 2))), math.sqrt(D))
    m.output(attend(m, m.add(m.param("mask", (S, S)), scores), v))


def att_no_scale(m: ModuleBuilder) -> None:
    q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
    m.output(attend(m, m.matmul(q, m.transpose(k, (0, 1, 3, 2))), v))


def att_where(m: ModuleBuilder) -> None:
    """masked_fill(~mask, -inf): a bool mask, true = attend."""
    q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
    mask = m.input("mask", (B, 1, S, S), "bool")
    scores = m.mul(m.matmul(q, m.transpose(k, (0, 1, 3, 2))), 0.5)
    m.output(attend(m, m.where(mask, scores, -math.inf), v))


def att_where_inverted(m: ModuleBuilder) -> None:
    """where(masked, -inf, scores): the fused op reads not(masked)."""
    q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
    masked = m.input("masked", (B, 1, S, S), "bool")
    scores = m.matmul(q, m.transpose(k, (0, 1, 3, 2)))
    m.output(attend(m, m.where(m.unary(mir.NotOp, masked), -math.inf, scores), v))


def att_causal_where(m: ModuleBuilder) -> None:
    q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
    tril = m.constant(np.tril(np.ones((S, S), bool)))
    scores = m.matmul(q, m.transpose(k, (0, 1, 3, 2)))
    m.output(attend(m, m.where(tril, scores, -math.inf), v))


def att_zero_mask(m: ModuleBuilder) -> None:
    q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
    scores = m.matmul(q, m.transpose(k, (0, 1, 3, 2)))
    m.output(attend(m, m.add(scores, m.constant(np.zeros((S, S), np.float32))), v))


def att_bshd(m: ModuleBuilder) -> None:
    """q, k, v arrive as [B, S, H, D]; kᵀ is one permute of k (the fused op reads k
    transposed to [B, H, S, D])."""
    q, k, v = (m.input(n, (B, S, H, D)) for n in "qkv")
    scores = m.matmul(m.transpose(q, (0, 2, 1, 3)), m.transpose(k, (0, 2, 3, 1)))
    m.output(attend(m, m.mul(scores, 1 / math.sqrt(D)), m.transpose(v, (0, 2, 1, 3))))


def att_mqa_broadcast(m: ModuleBuilder) -> None:
    """One kv head broadcast by the matmuls themselves."""
    q, k, v = m.input("q", (B, H, S, D)), m.input("k", (B, 1, S, D)), m.input("v", (B, 1, S, D))
    scores = m.matmul(q, m.transpose(k, (0, 1, 3, 2)))
    m.output(attend(m, m.mul(scores, 0.3), v))


def att_scaled_value(m: ModuleBuilder) -> None:
    """A factor on v scales the output, not the scores: the fused op reads v·3."""
    q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
    scores = m.matmul(q, m.transpose(k, (0, 1, 3, 2)))
    m.output(attend(m, scores, m.mul(v, 3.0)))


EXPECTED = {
    att_torch_export: ("causal", None, HKV),
    att_scores_divided: ("explicit", None, H),
    att_no_scale: ("none", 1.0, H),
    att_where: ("explicit", 0.5, H),
    att_where_inverted: ("explicit", 1.0, H),
    att_causal_where: ("causal", 1.0, H),
    att_zero_mask: ("none", 1.0, H),
    att_bshd: ("none", None, H),
    att_mqa_broadcast: ("none", 0.3, 1),
    att_scaled_value: ("none", 1.0, H),
}


@pytest.mark.parametrize("build", list(EXPECTED), ids=lambda f: f.__name__)
def test_attention_spellings(build: Build) -> None:
    after, report = check(build, "fuse-attention", "mir.attention")
    assert not {"mir.softmax", "mir.expand", "mir.matmul"} & set(op_names(after))
    assert report.count("attention") == 1 and not report.missed
    att = only(after, mir.AttentionOp)
    assert isinstance(att, mir.AttentionOp)
    kind, scale, kv_heads = EXPECTED[build]
    p = att.props()
    assert p.enum("mask_kind").value == kind
    assert p.opt_float("scale") == (None if scale is None else pytest.approx(scale))
    assert att.key.type.shape[1] == kv_heads  # type: ignore[attr-defined]


def test_a_half_precision_attention_with_a_lowest_value_mask_is_a_quiet_near_miss() -> None:
    """An f16 chain with a causal mask of f16's lowest value (what an exporter writes
    for finfo.min): left apart, with the near miss naming the element type, and no
    overflow warning from comparing the mask with a value f16 cannot hold."""

    def half(m: ModuleBuilder) -> None:
        q, k, v = (m.input(n, (B, H, S, D), "f16") for n in "qkv")
        lowest = float(np.finfo(np.float16).min)
        mask = m.constant(np.triu(np.full((S, S), lowest, np.float16), 1))
        scores = m.add(m.matmul(q, m.transpose(k, (0, 1, 3, 2))), mask)
        m.output(attend(m, scores, v))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, after, report = recognise(half, "fuse-attention")
    assert "mir.attention" not in op_names(after)
    assert any("f16" in miss.reason for miss in report.missed)


def test_attention_key_layout_decides_the_transpose() -> None:
    """S == D: q·k and q·kᵀ have the same shapes; only the layout tells them apart. Both
    are attention, but q·k reads k transposed (k is then kᵀ of the fused op)."""

    def untransposed(m: ModuleBuilder) -> None:
        q, k, v = (m.input(n, (B, H, D, D)) for n in "qkv")
        m.output(attend(m, m.matmul(q, k), v))

    def transposed(m: ModuleBuilder) -> None:
        q, k, v = (m.input(n, (B, H, D, D)) for n in "qkv")
        m.output(attend(m, m.matmul(q, m.transpose(k, (0, 1, 3, 2))), v))

    for build, reads_a_transpose in ((untransposed, True), (transposed, False)):
        after, _ = check(build, "fuse-attention", "mir.attention")
        att = only(after, mir.AttentionOp)
        assert isinstance(att, mir.AttentionOp)
        assert isinstance(att.key.owner, mir.TransposeOp) is reads_a_transpose


def test_attention_tiled_heads_are_not_grouped() -> None:
    """repeat (head h reads kv head h % Hkv) is not repeat_interleave: the fused op reads
    the tiled tensor with all H heads instead of taking it for grouped-query attention."""

    def tiled(m: ModuleBuilder) -> None:
        q = m.input("q", (B, H, S, D))
        k, v = m.input("k", (B, HKV, S, D)), m.input("v", (B, HKV, S, D))

        def tile(x: SSAValue) -> SSAValue:
            e = m.expand(m.reshape(x, (B, 1, HKV, S, D)), (B, H // HKV, HKV, S, D))
            return m.reshape(e, (B, H, S, D))

        m.output(attend(m, m.matmul(q, m.transpose(tile(k), (0, 1, 3, 2))), tile(v)))

    after, _ = check(tiled, "fuse-attention", "mir.attention")
    att = only(after, mir.AttentionOp)
    assert isinstance(att, mir.AttentionOp) and att.key.type.shape[1] == H  # type: ignore[attr-defined]


def test_attention_where_inverted_reads_the_negated_mask() -> None:
    _, after, _ = recognise(att_where_inverted, "fuse-attention,dce")
    att = only(after, mir.AttentionOp)
    assert isinstance(att, mir.AttentionOp) and att.mask is not None
    # The condition is not(m): the fused op reads m itself.
    assert isinstance(att.mask.owner, mir.InputOp) and "mir.not" not in op_names(after)


def att_softmax_other_axis(m: ModuleBuilder) -> None:
    q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
    m.output(m.matmul(m.softmax(m.matmul(q, m.transpose(k, (0, 1, 3, 2))), 2), v))


def att_scaled_mask(m: ModuleBuilder) -> None:
    """(scores + mask) · c scales the mask too: not the fused op's formula."""
    q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
    scores = m.add(m.matmul(q, m.transpose(k, (0, 1, 3, 2))), m.param("mask", (S, S)))
    m.output(attend(m, m.mul(scores, 0.5), v))


@pytest.mark.parametrize("build", [att_softmax_other_axis, att_scaled_mask])
def test_attention_look_alikes_do_not_fuse(build: Build) -> None:
    _, after, report = recognise(build, "fuse-attention")
    assert "mir.attention" not in op_names(after) and not report.fused and not report.missed


def test_attention_near_misses() -> None:
    def shared_probs(m: ModuleBuilder) -> None:
        q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
        p = m.softmax(m.matmul(q, m.transpose(k, (0, 1, 3, 2))), -1)
        m.output(m.matmul(p, v), p)

    def half(m: ModuleBuilder) -> None:
        q, k, v = (m.input(n, (B, H, S, D), "f16") for n in "qkv")
        m.output(attend(m, m.matmul(q, m.transpose(k, (0, 1, 3, 2))), v))

    def finite_fill(m: ModuleBuilder) -> None:
        q, k, v = (m.input(n, (B, H, S, D)) for n in "qkv")
        mask = m.input("mask", (S, S), "bool")
        m.output(attend(m, m.where(mask, m.matmul(q, m.transpose(k, (0, 1, 3, 2))), -1e9), v))

    reasons = []
    for build in (shared_probs, half, finite_fill):
        _, after, report = recognise(build, "fuse-attention")
        assert "mir.attention" not in op_names(after)
        reasons += [m.reason for m in report.missed_by("attention")]
    assert reasons == [
        "the softmax is also a graph output",
        "the attention is computed in f16, where the fused op (one rounding) would not "
        "reproduce it",
        "masked scores are set to -1e+09, not -inf",
    ]


# =====================================================================================
# Round trip: legalize's decompositions are recognised as the ops they came from
# =====================================================================================


@pytest.mark.parametrize(
    ("kv_heads", "kind", "rotary"), [(4, "none", 16), (2, "causal", 8), (1, "explicit", 16)]
)
def test_decomposed_ops_are_recognised(kv_heads: int, kind: str, rotary: int) -> None:
    """attention, rms_norm and rope lowered to common IR (cortex-m claims none of them)
    come back as the same ops, with the same numbers."""
    with ModuleBuilder("ops") as m:
        q = m.input("q", (2, 4, 8, 16))
        k, v = m.input("k", (2, kv_heads, 8, 16)), m.input("v", (2, kv_heads, 8, 16))
        mask = m.input("mask", (8, 8)) if kind == "explicit" else None
        a = m.attention(q, k, v, mask, causal=kind == "causal")
        n = m.rms_norm(m.input("x", (2, 8, 64)), m.param("g", (64,)))
        cos, sin = m.param("cos", (8, rotary // 2)), m.param("sin", (8, rotary // 2))
        r = m.rope(q, cos, sin, rotary_dim=rotary)
        m.output(a, n, r)
    lowered, _ = apply(m.module, "legalize{target=cortex-m}")
    assert not {"mir.attention", "mir.rms_norm", "mir.rope"} & set(op_names(lowered))
    back, _ = apply(lowered, "fuse-rms-norm,fuse-rope,fuse-attention,canonicalize,cse,dce")
    assert sorted(op_names(back)) == sorted(op_names(m.module))
    inputs, params = feeds(m.module, 3)
    assert_close(run(back, inputs, params), run(m.module, inputs, params))


# =====================================================================================
# Wiring: stages of fuse{target=T}, skip, int8
# =====================================================================================


def test_recognition_stages_follow_the_claims() -> None:
    names = [p.name for p in fusion_passes("cpu")]
    assert names[:7] == [
        "fold-transposes", "fuse-activations", "fuse-gelu", "fuse-rms-norm", "fuse-layer-norm",
        "fuse-rope", "fuse-attention",
    ]  # fmt: skip
    # cortex-m has no clip, norm, rope or attention kernels: their primitives stay.
    assert not {
        "fuse-activations",
        "fuse-rms-norm",
        "fuse-layer-norm",
        "fuse-rope",
        "fuse-attention",
    } & {p.name for p in fusion_passes("cortex-m")}
    skipped = [p.name for p in fusion_passes("cpu", skip=["fuse-attention"])]
    assert skipped == [n for n in names if n != "fuse-attention"]
    with pytest.raises(ValueError, match="unknown fusion stage 'fuse-atention'"):
        fusion_passes("cpu", skip=["fuse-atention"])


def test_fuse_skip_keeps_a_stage_out() -> None:
    def build(m: ModuleBuilder) -> None:
        att_torch_export(m)
        rms_llama(m)

    _, after, report = recognise(build, "fuse{target=cpu skip=fuse-attention}")
    assert report.count("rms_norm") == 1 and report.count("attention") == 0
    assert "mir.softmax" in op_names(after)
    # A skipped stage reports no near misses: an f16 attention is not one here.

    def half(m: ModuleBuilder) -> None:
        q, k, v = (m.input(n, (B, H, S, D), "f16") for n in "qkv")
        m.output(attend(m, m.matmul(q, m.transpose(k, (0, 1, 3, 2))), v))

    _, _, kept = recognise(half, "fuse{target=cpu}")
    _, _, skipped = recognise(half, "fuse{target=cpu skip=fuse-attention}")
    assert len(kept.missed_by("attention")) == 1 and not skipped.missed_by("attention")


def test_int8_keeps_exported_attention_as_matmuls() -> None:
    """int8 quantises every matmul (as onnxruntime's quantize_static does): an exported
    attention stays two matmuls so that its Q·Kᵀ and P·V are quantised too, and so does
    a product of two activations with a transposed operand or scaled by a constant."""
    assert "fuse{target=cpu}" in default_pipeline(CompileOptions())
    int8 = default_pipeline(CompileOptions(quantize="int8"))
    assert "fuse{target=cpu skip=fuse-attention,fuse-transposed-matmul,fuse-scaled-matmul}" in int8
    both = default_pipeline(CompileOptions(quantize="int8", fuse_skip=("fuse-rope",)))
    skip = "fuse-rope,fuse-attention,fuse-transposed-matmul,fuse-scaled-matmul"
    assert f"fuse{{target=cpu skip={skip}}}" in both
    with pytest.raises(CompileError, match="unknown fusion stage 'fuse-ropes'"):
        CompilePipeline(fuse_skip=("fuse-ropes",))


def test_symbolic_sequence_length() -> None:
    """An export with an open sequence length: all three idioms fuse, and the numbers
    hold at a concrete length."""
    with ModuleBuilder("dyn") as m:
        q = m.input("q", (1, H, "s", D))
        k, v = m.input("k", (1, HKV, "s", D)), m.input("v", (1, HKV, "s", D))

        def rep(x: SSAValue) -> SSAValue:
            e = m.expand(m.reshape(x, (1, HKV, 1, "s", D)), (1, HKV, H // HKV, "s", D))
            return m.reshape(e, (1, H, "s", D))

        kt = m.reshape(m.transpose(m.reshape(rep(k), (H, "s", D)), (0, 2, 1)), (1, H, D, "s"))
        y = attend(m, m.matmul(m.mul(q, 0.5), m.mul(kt, 0.5)), rep(v))
        x = m.input("x", (1, "s", 16))
        n = m.mul(m.mul(x, m.rsqrt(m.add(mean_sq(m, x), EPS))), m.param("g", (16,)))
        emb = m.concat([m.input("f", ("s", HALF))] * 2, -1)
        cos, sin = m.unary(mir.CosOp, emb), m.unary(mir.SinOp, emb)
        m.output(y, n, rope_of(m, q, cos, sin))
    after, _ = apply(m.module, "fuse-rms-norm,fuse-rope,fuse-attention,dce")
    computed = [n for n in op_names(after) if n not in ("mir.input", "mir.param")]
    assert computed == ["mir.attention", "mir.rms_norm", "mir.cos", "mir.sin", "mir.rope"]
    rng = np.random.default_rng(0)
    seq = 5
    shapes = {"q": (1, H, seq, D), "k": (1, HKV, seq, D), "v": (1, HKV, seq, D),
              "x": (1, seq, 16), "f": (seq, HALF)}  # fmt: skip
    inputs = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    params = {"g": rng.standard_normal(16).astype(np.float32)}
    assert_close(run(after, inputs, params), run(m.module, inputs, params))
