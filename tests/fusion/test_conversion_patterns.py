"""Each conversion pattern against the op it rewrites, on random data: the rewritten graph
computes the same values (bit for bit where the same kernels run in the same order,
within float tolerance where the arithmetic is re-associated), and only legal ops are
left."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from rlx_compile import ModuleBuilder
from rlx_compile.builder import GraphBuilder
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.legalization import convert
from rlx_compile.targets import get_target
from rlx_compile.targets.base import PRIMITIVES
from tests.fusion.helpers import apply, assert_close, assert_exact, op_names

Build = Callable[[ModuleBuilder], None]


def graph(build: Build) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """A module from ``build`` (which declares inputs named x0, x1, ...) and random data."""
    with ModuleBuilder("g") as m:
        build(m)
    module = m.module
    rng = np.random.default_rng(7)
    feeds = {}
    for op in module.walk():
        if isinstance(op, mir.InputOp):
            t = op.result.type
            shape = tuple(int(d) for d in t.shape)
            if t.dtype.is_bool:
                feeds[op.tensor_name.data] = rng.random(shape) < 0.7
            else:
                feeds[op.tensor_name.data] = rng.standard_normal(shape).astype(t.dtype.numpy)
    return module, feeds


def without(*ops: type[mir.ShapedOp]) -> str:
    """A legalize spec for a claim set of every primitive but ``ops``."""
    names = sorted(PRIMITIVES - {o.name for o in ops})
    return "legalize{claims=" + ",".join(f'"{n}"' for n in names) + "}"


def check(build: Build, pipeline: str, gone: str, exact: bool = False, rtol: float = 1e-5) -> None:
    module, feeds = graph(build)
    after, _ = apply(module, pipeline)
    assert gone not in op_names(after)
    want, got = run(module, feeds), run(after, feeds)
    if exact:
        assert_exact(got, want)
    else:
        assert_close(got, want, rtol)


def out(m: ModuleBuilder, *values: object) -> None:
    m.output(*values)  # type: ignore[arg-type]


# -- logical kernels (common IR) ---------------------------------------------------------


@pytest.mark.parametrize("axis", [1, 3])
def test_layer_norm(axis: int) -> None:
    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (2, 3, 4, 5))
        tail = (2, 3, 4, 5)[axis:]
        scale, bias = m.input("x1", tail[-1:]), m.input("x2", tail)
        out(m, m.layer_norm(x, scale, bias, axis=axis))

    check(build, without(mir.LayerNormOp), "mir.layer_norm")


@pytest.mark.parametrize("axis", [1, 2])
def test_rms_norm(axis: int) -> None:
    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (2, 6, 8))
        out(m, m.rms_norm(x, m.input("x1", (8,)), axis=axis))

    check(build, without(mir.RmsNormOp), "mir.rms_norm")


def test_group_norm() -> None:
    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (2, 6, 3, 3))
        out(m, m.group_norm(x, m.input("x1", (6,)), m.input("x2", (6,)), groups=3))

    check(build, without(mir.GroupNormOp), "mir.group_norm")


def test_batch_norm() -> None:
    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (2, 3, 4, 4))
        s, b, mu = (m.input(f"x{i}", (3,)) for i in (1, 2, 3))
        var = m.abs(m.input("x4", (3,)))
        out(m, m.batch_norm(x, s, b, mu, var))

    check(build, without(mir.BatchNormOp), "mir.batch_norm")


ATTENTION_CASES: dict[str, Callable[[ModuleBuilder], object]] = {
    # GQA, causal with more keys than queries (upper-left), default scale
    "gqa_causal": lambda m: m.attention(
        m.input("x0", (2, 4, 3, 8)), m.input("x1", (2, 2, 5, 8)), m.input("x2", (2, 2, 5, 8)),
        causal=True,
    ),
    # bool mask broadcast over heads, key/value batch broadcast, explicit scale
    "bool_mask": lambda m: m.attention(
        m.input("x0", (2, 2, 3, 4)), m.input("x1", (1, 2, 3, 4)), m.input("x2", (1, 2, 3, 4)),
        m.input("x3", (2, 1, 3, 3), "bool"), scale=0.3,
    ),
    # additive float mask
    "bias_mask": lambda m: m.attention(
        m.input("x0", (1, 2, 3, 4)), m.input("x1", (1, 2, 6, 4)), m.input("x2", (1, 2, 6, 4)),
        m.input("x3", (1, 2, 3, 6)),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ATTENTION_CASES))
def test_attention(case: str) -> None:
    def build(m: ModuleBuilder) -> None:
        out(m, ATTENTION_CASES[case](m))

    module, feeds = graph(build)
    if case == "bool_mask":  # keep at least one key per row (a fully masked row is NaN)
        feeds["x3"][..., 0] = True
    after, _ = apply(module, without(mir.AttentionOp))
    assert "mir.attention" not in op_names(after)
    assert_close(run(after, feeds), run(module, feeds))


def test_attention_softcap() -> None:
    def build(m: ModuleBuilder) -> None:
        q, k, v = (m.input(f"x{i}", (1, 2, 4, 4)) for i in range(3))
        out(m, m._one(mir.AttentionOp(q, k, v, softcap=2.0)))

    check(build, without(mir.AttentionOp), "mir.attention")


@pytest.mark.parametrize(
    ("rotary_dim", "interleaved"), [(None, False), (4, False), (None, True), (4, True)]
)
def test_rope(rotary_dim: int | None, interleaved: bool) -> None:
    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (1, 2, 5, 8))
        half = (rotary_dim or 8) // 2
        cos, sin = m.input("x1", (5, half)), m.input("x2", (5, half))
        out(m, m._one(mir.RopeOp(x, cos, sin, rotary_dim=rotary_dim, interleaved=interleaved)))

    # The same products and sums, one op at a time: bit-identical in f32.
    check(build, without(mir.RopeOp), "mir.rope", exact=True)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate: str) -> None:
    def build(m: ModuleBuilder) -> None:
        out(m, m.gelu(m.input("x0", (4, 64)), approximate))

    check(build, without(mir.GeluOp), "mir.gelu")


@pytest.mark.parametrize(("axes", "keepdims"), [((1,), False), ((0, 2), True), ((0, 1, 2), False)])
def test_reduce_log_sum_exp(axes: tuple[int, ...], keepdims: bool) -> None:
    """Back to the chain it means: bit for bit on the executor."""

    def build(m: ModuleBuilder) -> None:
        out(m, m.log_sum_exp(m.input("x0", (3, 4, 5)), axes, keepdims))

    check(build, without(mir.ReduceLogSumExpOp), "mir.reduce_log_sum_exp", exact=True)


@pytest.mark.parametrize(("shape", "axes"), [((2, 3, 4, 5), [2, 3]), ((3, 4, 5), [0, 1, 2])])
def test_gather_axes(shape: tuple[int, ...], axes: list[int]) -> None:
    """Back to one gather per axis: bit for bit on the executor."""

    def build(m: ModuleBuilder) -> None:
        rng = np.random.default_rng(0)
        idx = [m.constant(rng.integers(-shape[a], shape[a], 2 * shape[a] - 1)) for a in axes]
        out(m, m.gather_axes(m.input("x0", shape), idx, axes))

    check(build, without(mir.GatherAxesOp), "mir.gather_axes", exact=True)


@pytest.mark.parametrize(
    "op",
    [mir.ReduceSumSquareOp, mir.ReduceL2Op, mir.ReduceL1Op, mir.ReduceLogSumOp],
    ids=lambda o: o.name,
)
@pytest.mark.parametrize(("axes", "keepdims"), [((1,), False), ((0, 2), True), ((0, 1, 2), False)])
def test_reduce_chain(op: type[mir.ReduceChainOp], axes: tuple[int, ...], keepdims: bool) -> None:
    """Back to the chain it means: bit for bit on the executor."""

    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (3, 4, 5))
        if op is mir.ReduceLogSumOp:
            x = m.abs(x)
        out(m, m.emit(op(x, list(axes), keepdims)).results[0])

    check(build, without(op), op.name, exact=True)


@pytest.mark.parametrize(
    ("shape", "ishape", "axis"),
    [((2, 3, 4), (2, 5, 4), 1), ((3, 4), (2, 4), 1), ((6,), (9,), 0), ((4, 3, 5), (2, 3, 1), 0)],
)
def test_gather_elements(shape: tuple[int, ...], ishape: tuple[int, ...], axis: int) -> None:
    """Back to one gather from the flattened input: bit for bit on the executor."""

    def build(m: ModuleBuilder) -> None:
        idx = np.random.default_rng(0).integers(-shape[axis], shape[axis], ishape)
        out(m, m.gather_elements(m.input("x0", shape), m.constant(idx), axis))

    check(build, without(mir.GatherElementsOp), "mir.gather_elements", exact=True)


def test_silu() -> None:
    def build(m: ModuleBuilder) -> None:
        out(m, m.silu(m.input("x0", (4, 64))))

    check(build, without(mir.SiluOp), "mir.silu")


# -- rewrites for narrower kernels ------------------------------------------------------


def test_erf_polynomial_accuracy() -> None:
    """Abramowitz-Stegun 7.1.26 is within 1.5e-7 of erf everywhere; evaluated in f32
    through a dozen ops, rounding adds a few ulps (6e-8 each near |erf| = 1)."""
    with ModuleBuilder("erf") as m:
        m.output(m.erf(m.input("x", (4001,))))
    x = np.linspace(-6, 6, 4001).astype(np.float32)
    after, _ = apply(m.module, "legalize{target=wgpu}")
    assert "mir.erf" not in op_names(after)
    got, want = run(after, {"x": x})["output0"], run(m.module, {"x": x})["output0"]
    assert float(np.max(np.abs(got - want))) < 5e-7
    assert got[2000] == 0.0  # erf(0) = 0 exactly (sign(0) = 0)


REDUCE_CASES = [((0,), False), ((1, 2), True), ((0, 2), False), ((0, 1, 2), True), ((), False)]


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize(("axes", "keepdims"), REDUCE_CASES)
def test_reduce_to_last_axis(kind: str, axes: tuple[int, ...], keepdims: bool) -> None:
    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (3, 4, 5))
        op_type = {"sum": mir.ReduceSumOp, "mean": mir.ReduceMeanOp, "max": mir.ReduceMaxOp,
                   "min": mir.ReduceMinOp, "prod": mir.ReduceProdOp}[kind]  # fmt: skip
        out(m, m._one(op_type(x, list(axes), keepdims)))

    module, feeds = graph(build)
    after, _ = apply(module, "legalize{target=wgpu}")
    reduces = [op for op in after.walk() if isinstance(op, mir.ReduceOp)]
    assert all(list(r.props().ints("axes")) == [r.input.type.rank - 1] for r in reduces)
    exact = kind in ("max", "min") or len(axes) <= 1  # one axis: the same summation order
    want, got = run(module, feeds), run(after, feeds)
    (assert_exact if exact else assert_close)(got, want)


@pytest.mark.parametrize(
    "op_type",
    [mir.ReduceSumSquareOp, mir.ReduceL2Op, mir.ReduceL1Op, mir.ReduceLogSumOp,
     mir.ReduceLogSumExpOp],
    ids=lambda o: o.name,
)  # fmt: skip
def test_chain_reduction_over_no_axes(op_type: type[mir.ReduceOp]) -> None:
    """Each element reduced on its own is its chain's value (x², |x|, log x, ...), not x:
    bit for bit on the executor, signed zeros included."""

    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (3, 4))
        out(m, m._one(op_type(m.abs(x) if op_type is mir.ReduceLogSumOp else x, [])))

    module, feeds = graph(build)
    feeds["x0"][0, :2] = [-0.0, 0.0]
    after, _ = apply(module, "legalize{target=wgpu}")
    assert op_type.name not in op_names(after)
    assert_exact(run(after, feeds), run(module, feeds))


@pytest.mark.parametrize(
    ("op_type", "keepdims"),
    [(mir.SoftmaxOp, False), (mir.LogSoftmaxOp, False), (mir.ArgMaxOp, False),
     (mir.ArgMaxOp, True), (mir.ArgMinOp, True)],
)  # fmt: skip
def test_axis_to_last(op_type: type[mir.ShapedOp], keepdims: bool) -> None:
    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (3, 4, 5))
        if issubclass(op_type, mir.ArgReduceOp):
            out(m, m._one(op_type(x, 1, keepdims)))
        else:
            out(m, m._one(op_type(x, 1)))

    module, feeds = graph(build)
    after = module.clone()
    # wgpu's last-axis rule without its element-type rule (argmax results are i64).
    report = convert(after, replace(get_target("wgpu"), dtypes=None))
    # the op is rewritten into one of its own kind along the last axis
    assert report.compile_ready
    assert report.paths(op_type.name) == {"native": 1, "rewritten": 1}
    moved = [op for op in after.walk() if isinstance(op, op_type)]
    assert len(moved) == 1 and moved[0].props().int("axis") == 2
    assert_exact(run(after, feeds), run(module, feeds))


def test_norm_to_last_axis() -> None:
    def build(m: ModuleBuilder) -> None:
        x = m.input("x0", (2, 3, 4))
        out(m, m.layer_norm(x, m.input("x1", (4,)), m.input("x2", (3, 4)), axis=1))

    module, feeds = graph(build)
    after, _ = apply(module, "legalize{target=wgpu}")
    norms = [op for op in after.walk() if isinstance(op, mir.LayerNormOp)]
    assert len(norms) == 1 and norms[0].props().int("axis") == 1
    assert norms[0].input.type.rank == 2
    assert_close(run(after, feeds), run(module, feeds))


# -- fused ops and regions back to primitives: the executor's own definitions ----------


def _fused_conv(m: ModuleBuilder) -> None:
    x, r = m.input("x0", (1, 3, 6, 6)), m.input("x1", (1, 4, 6, 6))
    w, b = m.input("x2", (4, 3, 3, 3)), m.input("x3", (4,))
    out(m, m.fused_conv_bias_act(x, w, b, r, pads=(1, 1, 1, 1), act="tanh"))


def _fused_residual_layer_norm(m: ModuleBuilder) -> None:
    x, r = m.input("x0", (2, 8)), m.input("x1", (2, 8))
    op = m.emit(
        mir.FusedResidualLayerNormOp(x, r, m.input("x2", (8,)), m.input("x3", (8,)), axis=1)
    )
    out(m, *op.results)


def _fused_swiglu_gate_first(m: ModuleBuilder) -> None:
    out(m, m.fused_swiglu(m.input("x0", (3, 10)), gate_first=True))


def _fused_lstm_cell(m: ModuleBuilder) -> None:
    h, c = m.fused_lstm_cell(m.input("x0", (3, 2, 20)), m.input("x1", (3, 2, 5)), (0, 3, 1, 2))
    out(m, h, c)


def _fused_gru_cell(m: ModuleBuilder) -> None:
    x, g = m.input("x0", (3, 2, 15)), m.input("x1", (3, 2, 15))
    out(m, m.fused_gru_cell(x, g, m.input("x2", (3, 2, 5)), (1, 0, 2)))


def _region(m: ModuleBuilder) -> None:
    x, y = m.input("x0", (2, 4)), m.input("x1", (4,))

    def body(b: GraphBuilder, args: list) -> list:  # type: ignore[type-arg]
        return [b.sigmoid(b.mul(b.relu(args[0]), args[1]))]

    block = Block(arg_types=[x.type, y.type])
    (r,) = body(GraphBuilder(block.add_op), list(block.args))
    block.add_op(mir.YieldOp([r]))
    out(m, m._one(mir.ElementwiseRegionOp([x, y], Region(block), r.type)))


@pytest.mark.parametrize(
    ("build", "op_type"),
    [
        (_fused_conv, mir.FusedConvBiasActOp),
        (_fused_residual_layer_norm, mir.FusedResidualLayerNormOp),
        (_fused_swiglu_gate_first, mir.FusedSwigluOp),
        (_fused_lstm_cell, mir.FusedLstmCellOp),
        (_fused_gru_cell, mir.FusedGruCellOp),
        (_region, mir.ElementwiseRegionOp),
    ],
    ids=["conv_bias_act", "residual_layer_norm", "swiglu", "lstm_cell", "gru_cell", "region"],
)
def test_unfuse_is_exact(build: Build, op_type: type[mir.ShapedOp]) -> None:
    check(build, without(), op_type.name, exact=True)


# -- ONNX's dynamic quantisation (common IR) ---------------------------------------------


@pytest.mark.parametrize("x_kind", ["random", "all zero"])
def test_dynamic_quantization(x_kind: str) -> None:
    """DynamicQuantizeLinear feeding MatMulInteger and ConvInteger (vector zero points of
    the weights) on cuda, which claims none of them: the primitive chains compute the
    same bits."""
    with ModuleBuilder("g") as m:
        x, c = m.input("x", (2, 6), "f32"), m.input("c", (1, 2, 5, 5), "f32")
        w, zw = m.input("w", (6, 3), "i8"), m.input("zw", (3,), "i8")
        k, zk = m.input("k", (4, 2, 3, 3), "u8"), m.input("zk", (4,), "u8")
        y, s, z = m.emit(mir.DynamicQuantizeLinearOp(x)).results
        yc, _, zc = m.emit(mir.DynamicQuantizeLinearOp(c)).results
        mm = m.emit(mir.MatmulIntegerOp(y, w, z, zw)).results[0]
        conv = mir.ConvIntegerOp(yc, k, zc, zk, pads=[1, 0, 1, 2], strides=[2, 1])
        out(m, mm, s, z, m.emit(conv).results[0])
    rng = np.random.default_rng(3)
    scale = 0.0 if x_kind == "all zero" else 3.0
    feeds = {
        "x": (rng.standard_normal((2, 6)) * scale).astype(np.float32),
        "c": (rng.standard_normal((1, 2, 5, 5)) * scale).astype(np.float32),
        "w": rng.integers(-128, 128, (6, 3)).astype(np.int8),
        "zw": rng.integers(-128, 128, (3,)).astype(np.int8),
        "k": rng.integers(0, 256, (4, 2, 3, 3)).astype(np.uint8),
        "zk": rng.integers(0, 256, (4,)).astype(np.uint8),
    }
    module = m.module
    after, _ = apply(module, "legalize{target=cuda}")
    names = op_names(after)
    assert not {"mir.dynamic_quantize_linear", "mir.matmul_integer", "mir.conv_integer"} & set(
        names
    )
    assert_exact(run(after, feeds), run(module, feeds))
