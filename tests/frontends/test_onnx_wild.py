"""What third-party models broke, one op pattern each: a small graph with open dims that
imports once, symbolically, and runs at several sizes against onnxruntime (the whole
models are in ``bench/wild.py``; the small ones committed under ``tests/data/wild`` are
in ``test_onnx_wild_models.py``)."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from tests.frontends.test_onnx_symbolic import _check, _i64, _model, _x
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from rlx_compile import CompilePipeline, backend
from rlx_compile.builder import GraphBuilder
from rlx_compile.diagnostics import PassFailure
from rlx_compile.dialects.dim_expr import sym
from rlx_compile.dialects.types import DType
from rlx_compile.frontends.onnx import OnnxImportError, import_model, param_values
from rlx_compile.interpreter import ExecutionError, run

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def test_gather_elements_on_symbolic_dims() -> None:
    # BERT's token types: a [1, 64] buffer gathered at positions [1, seq] (and a 3-D one
    # along a middle axis with negative indices).
    nodes = [
        helper.make_node("GatherElements", ["buf", "pos"], ["y"], axis=1),
        helper.make_node("GatherElements", ["x", "idx"], ["z"], axis=1),
    ]
    inputs = [
        helper.make_tensor_value_info("pos", I64, [1, "seq"]),
        helper.make_tensor_value_info("x", F, ["b", 5, "n"]),
        helper.make_tensor_value_info("idx", I64, ["b", "k", "n"]),
    ]
    inits = [helper.make_tensor("buf", F, [1, 8], np.arange(8, dtype=np.float32) * 1.5)]
    model = _model(nodes, inputs, ["y", "z"], inits)
    rng = np.random.default_rng(0)
    _check(model, [
        {"pos": rng.integers(0, 8, (1, s)), "x": _x(b, 5, n), "idx": rng.integers(-5, 5, (b, k, n))}
        for s, b, k, n in [(3, 1, 2, 4), (8, 2, 5, 1), (1, 3, 1, 2)]
    ])  # fmt: skip


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd_on_symbolic_dims(batch_dims: int) -> None:
    nodes = [helper.make_node("GatherND", ["x", "idx"], ["y"], batch_dims=batch_dims)]
    inputs = [
        helper.make_tensor_value_info("x", F, ["b", "s", 3]),
        helper.make_tensor_value_info("idx", I64, ["b", "k", 2 - batch_dims]),
    ]
    model = _model(nodes, inputs, ["y"])
    rng = np.random.default_rng(1)
    feeds = []
    for b, s, k in [(2, 4, 3), (1, 7, 1), (3, 2, 5)]:
        hi = [b, s][batch_dims:]
        idx = np.stack([rng.integers(-n, n, (b, k)) for n in hi], -1)
        feeds.append({"x": _x(b, s, 3), "idx": idx.astype(np.int64)})
    _check(model, feeds)


def _refused_by_backend(
    model: onnx.ModelProto, feeds: dict[str, np.ndarray], op: str, size: str
) -> None:
    """Dims that verify because they may agree are checked again once the backend binds
    them to the feeds' sizes: refused there, naming the op and the sizes, before any
    memory is planned for them."""
    rep = backend.prepare(model)
    with pytest.raises(PassFailure, match=rf"{re.escape(op)} does not hold at .*{size}"):
        rep.run(feeds)


def test_expand_of_a_slice_clamped_to_a_buffer() -> None:
    # buf[:, :seq] has [1, min(seq, 8)] dims; expanding it to [batch, seq] holds where
    # seq <= 8 (the model's own limit): checked when it runs, as broadcasting is.
    nodes = [
        helper.make_node("Shape", ["ids"], ["s"]),
        helper.make_node("Slice", ["s", "one", "two"], ["seq"]),
        helper.make_node("Slice", ["buf", "zero", "seq", "one"], ["part"]),
        helper.make_node("Expand", ["part", "s"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("ids", I64, ["batch", "seq"])]
    inits = [
        helper.make_tensor("buf", F, [1, 8], np.arange(8, dtype=np.float32)),
        _i64("zero", [0]),
        _i64("one", [1]),
        _i64("two", [2]),
    ]
    model = _model(nodes, inputs, ["y"], inits)
    _check(model, [{"ids": np.zeros((b, s), np.int64)} for b, s in [(2, 3), (1, 8), (3, 1)]])
    module = import_model(model)  # past the buffer: [1, 8] cannot expand to [2, 9]
    with pytest.raises(ExecutionError, match=r"mir\.expand .*cannot expand \[1, 8\] to \[2, 9\]"):
        run(module, {"ids": np.zeros((2, 9), np.int64)}, param_values(model, module))
    _refused_by_backend(model, {"ids": np.zeros((2, 9), np.int64)}, "mir.expand", "seq=9")


def test_expand_that_cannot_hold_is_refused() -> None:
    # [n + 1] can be neither 1 nor n: the verifier refuses it at build time; [n] to [m]
    # (two symbols) may hold and is left to the run.
    n, m = sym("n"), sym("m")
    b = GraphBuilder(Block().add_op)
    with pytest.raises(VerifyException, match="cannot expand"):
        b.expand(b.input("x", [n + 1], DType.F32), [n]).owner.verify()
    b.expand(b.input("y", [n], DType.F32), [m]).owner.verify()


_RESIZE_CASES = [
    # (mode, coordinate mode, nearest mode, scales or None (sizes from the input's shape))
    ("nearest", "asymmetric", "floor", [1.0, 1.0, 2.0, 2.0]),
    ("nearest", "half_pixel", "round_prefer_floor", [1.0, 1.0, 0.5, 0.5]),
    ("nearest", "align_corners", "round_prefer_ceil", [1.0, 1.0, 2.0, 3.0]),
    ("nearest", "pytorch_half_pixel", "ceil", [1.0, 1.0, 0.75, 2.0]),
    ("linear", "pytorch_half_pixel", "round_prefer_floor", None),
    ("linear", "half_pixel", "round_prefer_floor", [1.0, 1.0, 2.0, 0.5]),
    ("linear", "align_corners", "round_prefer_floor", None),
    ("linear", "asymmetric", "round_prefer_floor", [1.0, 1.0, 3.0, 1.5]),
    ("cubic", "half_pixel", "round_prefer_floor", [1.0, 1.0, 2.0, 2.0]),
    ("cubic", "half_pixel_symmetric", "round_prefer_floor", None),
]


@pytest.mark.parametrize(("mode", "coord", "nearest", "scales"), _RESIZE_CASES)
def test_resize_of_symbolic_spatial_dims(
    mode: str, coord: str, nearest: str, scales: list[float] | None
) -> None:
    """YOLO and PP-OCR upsampling (scales) and a UNet's resize to another tensor's
    spatial size (sizes from its Shape), on images of open height and width."""
    attrs = {"mode": mode, "coordinate_transformation_mode": coord, "nearest_mode": nearest}
    inputs = [helper.make_tensor_value_info("x", F, ["n", 2, "h", "w"])]
    inits: list[onnx.TensorProto] = []
    if scales is not None:
        nodes = [helper.make_node("Resize", ["x", "", "scales"], ["y"], **attrs)]
        inits.append(helper.make_tensor("scales", F, [4], scales))
    else:
        inputs.append(helper.make_tensor_value_info("like", F, ["n", 1, "hh", "ww"]))
        nodes = [
            helper.make_node("Shape", ["like"], ["s"], start=2),
            helper.make_node("Shape", ["x"], ["nc"], end=2),
            helper.make_node("Concat", ["nc", "s"], ["sizes"], axis=0),
            helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs),
        ]
    model = _model(nodes, inputs, ["y"], inits)
    feeds = []
    for n, h, w, hh, ww in [(1, 5, 7, 9, 3), (2, 8, 3, 4, 11), (1, 1, 4, 6, 6)]:
        f = {"x": _x(n, 2, h, w)}
        if scales is None:
            f["like"] = _x(n, 1, hh, ww)
        feeds.append(f)
    _check(model, feeds, tol=1e-5)  # interpolation weights: float64, as the static path


@pytest.mark.parametrize("end", [10**9, 2**31 - 1, 2**63 - 1])
def test_slice_to_a_large_end_on_a_symbolic_axis(end: int) -> None:
    # tf2onnx writes "to the end" as 1e9 or INT32_MAX: x[0:end] of an [n] axis is [n]
    # (magika reshapes it into [n, 1] from its Shape); negative ones start at the start.
    nodes = [
        helper.make_node("Slice", ["x", "zero", "end", "zero"], ["a"]),
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Concat", ["s", "one"], ["target"], axis=0),
        helper.make_node("Reshape", ["a", "target"], ["y"]),
        helper.make_node("Slice", ["x", "neg", "minus_one", "zero"], ["z"]),
        helper.make_node("Slice", ["x", "end", "neg", "zero", "minus_one"], ["r"]),
    ]
    inits = [_i64("zero", [0]), _i64("one", [1]), _i64("end", [end]), _i64("neg", [-end]),
             _i64("minus_one", [-1])]  # fmt: skip
    model = _model(nodes, [helper.make_tensor_value_info("x", F, ["n"])], ["y", "z", "r"], inits)
    _check(model, [{"x": _x(n)} for n in (1, 4, 9)])


def test_concat_of_dims_equal_at_the_models_sizes() -> None:
    # YOLO's neck: a stride-2 feature map upsampled x2 joins the stride-1 one; the dims
    # 2 * ((h + 1) floordiv 2) and h agree for even h, the sizes the model takes.
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["down"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Resize", ["down", "", "scales"], ["up"], mode="nearest"),
        helper.make_node("Concat", ["x", "up"], ["y"], axis=1),
    ]
    inits = [
        helper.make_tensor("w", F, [2, 2, 3, 3], _x(2, 2, 3, 3).reshape(-1)),
        helper.make_tensor("scales", F, [4], [1, 1, 2, 2]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, ["n", 2, "h", "w"])], ["y"], inits)
    _check(model, [{"x": _x(n, 2, h, w)} for n, h, w in [(1, 4, 6), (2, 8, 2)]])
    module = import_model(model)  # an odd height: refused when it runs
    with pytest.raises(ExecutionError, match=r"mir.concat .* do not fit at these sizes"):
        run(module, {"x": _x(1, 2, 5, 6)}, param_values(model, module))
    _refused_by_backend(model, {"x": _x(1, 2, 5, 6)}, "mir.concat", "h=5")


def test_float_range_over_a_symbolic_size() -> None:
    # YOLOv8's anchors: arange(w, dtype=float) + 0.5 from Cast(Shape(x)[3], float)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "three"], ["w"], axis=0),
        helper.make_node("Cast", ["w"], ["wf"], to=F),
        helper.make_node("Range", ["fzero", "wf", "fone"], ["r"]),
        helper.make_node("Add", ["r", "half"], ["y"]),
        helper.make_node("Div", ["wf", "two"], ["half_w"]),  # a fraction: stays data
        helper.make_node("Add", ["y", "half_w"], ["z"]),
    ]
    inits = [
        helper.make_tensor("three", I64, [], [3]),
        helper.make_tensor("fzero", F, [], [0.0]),
        helper.make_tensor("fone", F, [], [1.0]),
        helper.make_tensor("half", F, [], [0.5]),
        helper.make_tensor("two", F, [], [2.0]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [1, 3, "h", "w"])], ["z"], inits)
    _check(model, [{"x": _x(1, 3, 2, w)} for w in (1, 5, 8)])


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_of_symbolic_dims(upper: int) -> None:
    # a causal mask triu(full((s, s), -inf), 1) and tril with k = the past length
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["k"], axis=0),
        helper.make_node("Trilu", ["x", "one"], ["y"], upper=upper),
        helper.make_node("Trilu", ["m", "k"], ["z"], upper=upper),
    ]
    inits = [helper.make_tensor("one", I64, [], [1]), helper.make_tensor("zero", I64, [], [0])]
    inputs = [
        helper.make_tensor_value_info("x", F, ["past", "s", "s"]),
        helper.make_tensor_value_info("m", F, ["s", "t"]),
    ]
    model = _model(nodes, inputs, ["y", "z"], inits)
    _check(
        model, [{"x": _x(p, s, s), "m": _x(s, t)} for p, s, t in [(1, 3, 5), (2, 4, 2), (3, 1, 1)]]
    )


def _if_on_the_last_size_being_one(then_node: onnx.NodeProto) -> onnx.ModelProto:
    then = helper.make_graph([then_node], "then", [], [helper.make_empty_tensor_value_info("y1")])
    keep = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y2"])], "else", [],
        [helper.make_empty_tensor_value_info("y2")],
    )  # fmt: skip
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "minus_one"], ["n"], axis=0),
        helper.make_node("Equal", ["n", "one"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=keep),
    ]
    inits = [
        helper.make_tensor("minus_one", I64, [], [-1]),
        helper.make_tensor("one", I64, [], [1]),
        _i64("last", [-1]),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", F, [2, "t"])], ["y"], inits)


def test_squeeze_of_an_open_size_of_one_is_a_checked_reshape() -> None:
    # silero-vad's `x.squeeze(-1)`, exported for an open size as `If(x.shape[-1] == 1,
    # Squeeze, Identity)`: the branches differ in rank, so it is the squeeze, a reshape
    # that holds where the size is 1 (the model's LSTM needs that rank); another size is
    # refused at the run, naming the reshape.
    model = _if_on_the_last_size_being_one(helper.make_node("Squeeze", ["x", "last"], ["y1"]))
    module = import_model(model)
    assert "mir.if" not in str(module) and "mir.reshape" in str(module)
    x = _x(2, 1)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_array_equal(run(module, {"x": x})["y"], want)
    np.testing.assert_array_equal(backend.prepare(model).run({"x": x})[0], want)
    with pytest.raises(ExecutionError, match=r"mir\.reshape .*cannot reshape"):
        run(module, {"x": _x(2, 3)})
    _refused_by_backend(model, {"x": _x(2, 3)}, "mir.reshape", "t=3")


def _squeeze_last_if_one(x: str, tag: str) -> list[onnx.NodeProto]:
    """torch's ``x.squeeze(-1)`` as exported for an open size (names prefixed ``tag``)."""
    then = helper.make_graph(
        [helper.make_node("Squeeze", [x, "last"], [f"{tag}_sq"])],
        f"{tag}_then",
        [],
        [helper.make_empty_tensor_value_info(f"{tag}_sq")],
    )
    keep = helper.make_graph(
        [helper.make_node("Identity", [x], [f"{tag}_id"])],
        f"{tag}_else",
        [],
        [helper.make_empty_tensor_value_info(f"{tag}_id")],
    )
    return [
        helper.make_node("Shape", [x], [f"{tag}_s"]),
        helper.make_node("Gather", [f"{tag}_s", "minus_one"], [f"{tag}_n"], axis=0),
        helper.make_node("Equal", [f"{tag}_n", "one"], [f"{tag}_c"]),
        helper.make_node("If", [f"{tag}_c"], [f"{tag}_y"], then_branch=then, else_branch=keep),
    ]  # fmt: skip


def test_squeezes_in_branches_of_a_run_time_if() -> None:
    # silero-vad: `if sr == 16000` picks a branch whose squeeze holds at 16 kHz input
    # lengths; the other branch's squeeze does not hold there, and is not run.
    high = helper.make_graph(
        _squeeze_last_if_one("x", "a"), "high", [], [helper.make_empty_tensor_value_info("a_y")]
    )
    low_nodes = [
        helper.make_node("Slice", ["x", "one_1d", "big", "one_1d"], ["tail"]),
        *_squeeze_last_if_one("tail", "b"),
    ]
    low = helper.make_graph(low_nodes, "low", [], [helper.make_empty_tensor_value_info("b_y")])
    nodes = [
        helper.make_node("Equal", ["sr", "one"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=high, else_branch=low),
    ]  # fmt: skip
    inits = [
        helper.make_tensor("minus_one", I64, [], [-1]),
        helper.make_tensor("one", I64, [], [1]),
        _i64("last", [-1]),
        _i64("one_1d", [1]),
        _i64("big", [2**62]),
    ]
    inputs = [helper.make_tensor_value_info("x", F, [2, "t"]),
              helper.make_tensor_value_info("sr", I64, [])]  # fmt: skip
    model = _model(nodes, inputs, ["y"], inits)
    assert "mir.if" in str(import_model(model))  # one module for both rates
    rep = backend.prepare(model)
    session = ort.InferenceSession(model.SerializeToString())
    for sr, t in [(1, 1), (0, 2)]:
        feeds = {"x": _x(2, t), "sr": np.array(sr, np.int64)}
        np.testing.assert_array_equal(rep.run(feeds)[0], session.run(None, feeds)[0])


def test_a_condition_on_sizes_asks_for_sizes_not_values() -> None:
    # An If on `x.shape[-1] == 1` whose branches differ in rank and are not a squeeze:
    # the condition depends on x's sizes only, so the error says so (and does not ask
    # for x's values, which would not help); with the dims fixed it folds and runs.
    reduce = helper.make_node("ReduceSum", ["x", "last"], ["y1"], keepdims=0)
    model = _if_on_the_last_size_being_one(reduce)
    with pytest.raises(OnnxImportError, match="depends on the sizes of symbolic dims") as err:
        import_model(model)
    assert err.value.needs_values == ()
    for t in (1, 3):
        module = import_model(model, dynamic_dims={"t": t})
        x = _x(2, t)
        want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
        np.testing.assert_array_equal(run(module, {"x": x})["y"], want)


def test_lstm_state_fed_with_a_batch_of_its_own_name() -> None:
    # silero-vad feeds X [1, input:0, 4] and its state [1, state:1, 3] apart: two names
    # for the batch, equal where the model runs (the executor checks).
    rng = np.random.default_rng(3)
    weights = {"w": (1, 12, 4), "r": (1, 12, 3), "bias": (1, 24)}
    inits = [
        helper.make_tensor(n, F, shape, rng.standard_normal(shape).astype(np.float32).ravel())
        for n, shape in weights.items()
    ]
    nodes = [helper.make_node("LSTM", ["x", "w", "r", "bias", "", "h0", "c0"], ["y", "h", "c"],
                              hidden_size=3)]  # fmt: skip
    inputs = [
        helper.make_tensor_value_info("x", F, [2, "b", 4]),
        helper.make_tensor_value_info("h0", F, [1, "sb", 3]),
        helper.make_tensor_value_info("c0", F, [1, "sb", 3]),
    ]
    model = _model(nodes, inputs, ["y", "h", "c"], inits)
    _check(model, [{"x": _x(2, b, 4), "h0": _x(1, b, 3), "c0": _x(1, b, 3) * 0.5} for b in (1, 3)])


def test_reshape_that_drops_a_height_of_one() -> None:
    # PP-OCR's recognizer: the feature map's height is 1 at the input height it takes, and
    # the exporter wrote the 1 into the reshape target (the rest from Shape).
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["f"], strides=[16, 1], pads=[1, 0, 1, 0]),
        helper.make_node("Shape", ["f"], ["s"]),
        helper.make_node("Gather", ["s", "idx"], ["nw"], axis=0),
        helper.make_node("Slice", ["nw", "zero", "one"], ["n"]),
        helper.make_node("Slice", ["nw", "one", "two"], ["wd"]),
        helper.make_node("Concat", ["n", "channels", "wd"], ["target"], axis=0),
        helper.make_node("Reshape", ["f", "target"], ["y"]),
    ]
    inits = [
        helper.make_tensor("w", F, [4, 2, 3, 1], _x(4, 2, 3, 1).reshape(-1)),
        _i64("idx", [0, 3]),
        _i64("zero", [0]),
        _i64("one", [1]),
        _i64("two", [2]),
        _i64("channels", [4]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, ["n", 2, "h", "w"])], ["y"], inits)
    _check(model, [{"x": _x(n, 2, h, w)} for n, h, w in [(1, 16, 5), (2, 9, 3)]])
    module = import_model(model)  # a height of 20 gives a map of height 2: refused
    with pytest.raises(ExecutionError, match=r"mir\.reshape"):
        run(module, {"x": _x(1, 2, 20, 3)}, param_values(model, module))
    _refused_by_backend(model, {"x": _x(1, 2, 20, 3)}, "mir.reshape", "h=20")


def test_matmul_over_dims_named_apart() -> None:
    # tf2onnx names every unknown dim apart (unk__1, unk__2): a product over two of them
    # imports and runs where they agree, and is refused where they do not.
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"])]
    inputs = [
        helper.make_tensor_value_info("a", F, ["unk__1", "unk__2"]),
        helper.make_tensor_value_info("b", F, ["unk__3", 4]),
    ]
    model = _model(nodes, inputs, ["y"])
    _check(model, [{"a": _x(n, k), "b": _x(k, 4)} for n, k in [(2, 3), (1, 5)]])
    module = import_model(model)
    with pytest.raises(ExecutionError, match=r"mir\.matmul .* do not fit"):
        run(module, {"a": _x(2, 3), "b": _x(4, 4)})
    _refused_by_backend(model, {"a": _x(2, 3), "b": _x(4, 4)}, "mir.matmul", "unk__2=3")


@pytest.mark.parametrize(
    ("op", "inputs"),
    [
        ("TopK", ["x", "k"]),  # detection post-processing: top min(300, n)
        ("OneHot", ["idx", "k", "values"]),
    ],
)
def test_a_size_that_must_be_a_number_is_refused_clearly(op: str, inputs: list[str]) -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
        helper.make_node("Min", ["n", "cap"], ["k1"]),
        helper.make_node("Unsqueeze", ["k1", "zero"], ["k"]),
        helper.make_node(op, inputs, ["y"] if op == "OneHot" else ["y", "i"]),
    ]
    inits = [
        helper.make_tensor("one", I64, [], [1]),
        helper.make_tensor("cap", I64, [], [300]),
        _i64("zero", [0]),
        helper.make_tensor("values", F, [2], [0.0, 1.0]),
    ]
    inputs_vi = [
        helper.make_tensor_value_info("x", F, [1, "n"]),
        helper.make_tensor_value_info("idx", I64, [3]),
    ]
    outs = ["y"] if op == "OneHot" else ["y", "i"]
    model = _model(nodes, inputs_vi, outs, inits)
    with pytest.raises(OnnxImportError, match=r"is the symbolic size min\(n, 300\)"):
        import_model(model)


def test_einsum_over_symbolic_dims() -> None:
    nodes = [
        helper.make_node("Einsum", ["q", "k"], ["s"], equation="bhqd,bhkd->bhqk"),
        helper.make_node("Einsum", ["s", "v"], ["y"], equation="bhqk,bhkd->bqhd"),
    ]
    inputs = [helper.make_tensor_value_info(n, F, ["b", 2, s, 4]) for n, s in
              (("q", "sq"), ("k", "sk"), ("v", "sk"))]  # fmt: skip
    model = _model(nodes, inputs, ["y"])
    _check(
        model,
        [
            {"q": _x(b, 2, q, 4), "k": _x(b, 2, k, 4), "v": _x(b, 2, k, 4)}
            for b, q, k in [(1, 3, 5), (2, 1, 2)]
        ],
        tol=1e-5,
    )


@pytest.mark.parametrize(
    ("shape", "target", "sizes"),
    [(["n"], [-1, 4], [(8,), (12,)]), (["b", "s"], [0, -1, 3], [(2, 6), (1, 9)]),
     (["b", "s"], [-1, 3], [(2, 6), (1, 9)])],
)  # fmt: skip
def test_reshape_whose_minus_one_divides_only_at_some_sizes(
    shape: list[str], target: list[int], sizes: list[tuple[int, ...]]
) -> None:
    # torch's x.view(-1, 4) on a flat [batch*seq*4] input with a symbolic size: the -1 is
    # n floordiv 4, which holds where 4 divides n; another size is refused at the run.
    nodes = [helper.make_node("Reshape", ["x", "t"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", F, shape)]
    model = _model(nodes, inputs, ["y"], [_i64("t", target)])
    _check(model, [{"x": _x(*s)} for s in sizes])
    bad = {"x": _x(*[1] * (len(shape) - 1), 10)}
    module = import_model(model)
    with pytest.raises(ExecutionError, match=r"mir\.reshape .*cannot reshape"):
        run(module, bad, param_values(model, module))
    _refused_by_backend(model, bad, "mir.reshape", "=10")


def test_pad_to_a_multiple_of_a_window() -> None:
    # Swin / wav2vec2-style: pad the sequence up to a multiple of 8, (8 - n % 8) % 8 >= 0
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Slice", ["s", "one", "two"], ["n"]),
        helper.make_node("Mod", ["n", "eight"], ["r"]),
        helper.make_node("Sub", ["eight", "r"], ["gap"]),
        helper.make_node("Mod", ["gap", "eight"], ["p"]),
        helper.make_node("Concat", ["zero", "zero", "zero", "p"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads", "value"], ["y"], mode="constant"),
    ]
    inits = [_i64("one", [1]), _i64("two", [2]), _i64("eight", [8]), _i64("zero", [0]),
             helper.make_tensor("value", F, [], [-1.5])]  # fmt: skip
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [2, "n"])], ["y"], inits)
    _check(model, [{"x": _x(2, n)} for n in (3, 8, 13)])


def test_a_convolution_weight_of_symbolic_size_is_refused_clearly() -> None:
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"])]
    inputs = [
        helper.make_tensor_value_info("x", F, [1, 2, 8, 8]),
        helper.make_tensor_value_info("w", F, [3, 2, "kh", "kw"]),
    ]
    with pytest.raises(OnnxImportError, match=r"a weight of symbolic kernel size \[kh, kw\]"):
        import_model(_model(nodes, inputs, ["y"]))


@pytest.mark.parametrize("opset", [10, 13])
@pytest.mark.parametrize(
    ("mode", "coord"),
    [("nearest", "asymmetric"), ("linear", "asymmetric"), ("nearest", "half_pixel")],
)
@pytest.mark.parametrize(("length", "resized"), [(9, 33), (5, 7), (33, 9)])
def test_resize_by_a_ratio_of_sizes_as_onnxruntime_rounds_it(
    opset: int, mode: str, coord: str, length: int, resized: int
) -> None:
    # A UNet at opset 10 upsamples to its skip's size by scales = skip / map, float32:
    # onnxruntime sizes the output as the float32 product (5 * 1.4f is 7) and maps
    # coordinates in float32 (11 / 3.6666667f is 3), where exact arithmetic gives 6 and 2.
    if opset == 10 and coord != "asymmetric":
        pytest.skip("Resize-10 has no coordinate modes")
    scales = np.array([1, 1, resized / length, 1], np.float32)
    attrs = {} if opset == 10 else {"coordinate_transformation_mode": coord}
    operands = ["x", "scales"] if opset == 10 else ["x", "", "scales"]
    nodes = [helper.make_node("Resize", operands, ["y"], mode=mode, **attrs)]
    inits = [helper.make_tensor("scales", F, [4], scales)]
    model = _model(
        nodes, [helper.make_tensor_value_info("x", F, [1, 2, length, 3])], ["y"], inits, opset
    )
    x = _x(1, 2, length, 3)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    got = backend.prepare(model).run({"x": x})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("opset", [10, 13])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_to_a_skips_size_by_scales_of_open_dims(opset: int, mode: str) -> None:
    # A UNet at opset 10 (torch's interpolate(size=skip.shape[2:])): scales = float(skip
    # size) / float(map size), both open; the output length is the skip's, exactly.
    operands = ["m", "scales"] if opset == 10 else ["m", "", "scales"]
    nodes = [
        helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[2, 2], strides=[2, 2],
                         ceil_mode=1),
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Shape", ["m"], ["sm"]),
        helper.make_node("Slice", ["sx", "two", "four"], ["hx"]),
        helper.make_node("Slice", ["sm", "two", "four"], ["hm"]),
        helper.make_node("Cast", ["hx"], ["fx"], to=F),
        helper.make_node("Cast", ["hm"], ["fm"], to=F),
        helper.make_node("Div", ["fx", "fm"], ["ratio"]),
        helper.make_node("Concat", ["ones", "ratio"], ["scales"], axis=0),
        helper.make_node("Resize", operands, ["r"], mode=mode),
        helper.make_node("Add", ["r", "x"], ["y"]),
    ]  # fmt: skip
    inits = [_i64("two", [2]), _i64("four", [4]), helper.make_tensor("ones", F, [2], [1, 1])]
    inputs = [helper.make_tensor_value_info("x", F, [1, 2, "h", "w"])]
    model = _model(nodes, inputs, ["y"], inits, opset)
    _check(model, [{"x": _x(1, 2, h, w)} for h, w in [(4, 6), (7, 5), (13, 3), (3, 2)]])


def test_if_branches_with_initializers_of_their_own() -> None:
    # openwakeword's silero-vad: each branch of `if sr == 16000` holds its own
    # initializers (a Gather index, a weight), read by the branch's nodes only.
    def branch(name: str, scale: float) -> onnx.GraphProto:
        return helper.make_graph(
            [
                helper.make_node("Shape", ["x"], [f"{name}_s"]),
                helper.make_node("Gather", [f"{name}_s", f"{name}_i"], [f"{name}_n"], axis=0),
                helper.make_node("Cast", [f"{name}_n"], [f"{name}_f"], to=F),
                helper.make_node("Mul", ["x", f"{name}_w"], [f"{name}_m"]),
                helper.make_node("Add", [f"{name}_m", f"{name}_f"], [f"{name}_y"]),
            ],
            name,
            [],
            [helper.make_empty_tensor_value_info(f"{name}_y")],
            [
                helper.make_tensor(f"{name}_i", I64, [], [1]),
                helper.make_tensor(f"{name}_w", F, [3], [scale, 2 * scale, 3 * scale]),
            ],
        )

    nodes = [
        helper.make_node("Equal", ["sr", "rate"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=branch("then", 1.0),
                         else_branch=branch("else", -0.5)),
    ]  # fmt: skip
    inputs = [
        helper.make_tensor_value_info("x", F, [2, 3]),
        helper.make_tensor_value_info("sr", I64, []),
    ]
    model = _model(nodes, inputs, ["y"], [helper.make_tensor("rate", I64, [], [16000])])
    rep = backend.prepare(model)
    session = ort.InferenceSession(model.SerializeToString())
    for sr in (16000, 8000):
        feeds = {"x": _x(2, 3), "sr": np.array(sr, np.int64)}
        np.testing.assert_allclose(rep.run(feeds)[0], session.run(None, feeds)[0], rtol=1e-6)


@pytest.mark.parametrize("reduction", ["add", "none"])
def test_scatter_elements_over_a_symbolic_number_of_edges(reduction: str) -> None:
    # A graph network's message passing (caustic-nmr): each edge's message added into its
    # target atom, index_add_ as the TorchScript exporter writes it -- indices and updates
    # [edges, features] with the edge count open (a 3-D one along its middle axis).
    nodes = [
        helper.make_node("ScatterElements", ["x", "idx", "msg"], ["y"], axis=0,
                         reduction=reduction),
        helper.make_node("ScatterElements", ["v", "vidx", "vmsg"], ["z"], axis=1),
    ]  # fmt: skip
    inputs = [
        helper.make_tensor_value_info("x", F, ["atoms", 3]),
        helper.make_tensor_value_info("idx", I64, ["edges", 3]),
        helper.make_tensor_value_info("msg", F, ["edges", 3]),
        helper.make_tensor_value_info("v", F, [2, "atoms", 3]),
        helper.make_tensor_value_info("vidx", I64, [2, "edges", 3]),
        helper.make_tensor_value_info("vmsg", F, [2, "edges", 3]),
    ]
    model = _model(nodes, inputs, ["y", "z"], opset=18)
    rng = np.random.default_rng(3)

    def targets(atoms: int, shape: tuple[int, ...], axis: int) -> np.ndarray:
        # With reduction "none" the targets along the axis are distinct (else the order of
        # the writes decides); "add" takes repeats.
        if reduction == "add":
            return rng.integers(0, atoms, shape)
        picks = np.moveaxis(rng.random((atoms, *np.delete(shape, axis))).argsort(0), 0, axis)
        return np.take(picks, np.arange(shape[axis]), axis)

    feeds = [
        {"x": _x(atoms, 3), "idx": targets(atoms, (edges, 3), 0), "msg": _x(edges, 3),
         "v": _x(2, atoms, 3), "vidx": targets(atoms, (2, edges, 3), 1), "vmsg": _x(2, edges, 3)}
        for atoms, edges in [(5, 3), (7, 1), (4, 4)]
    ]  # fmt: skip
    _check(model, feeds)


def test_array_feature_extractor_at_indices_of_a_symbolic_count() -> None:
    # scikit-learn's radius neighbours (skl2onnx): the labels of every row's neighbours,
    # indices [N, train rows] for N rows.
    ml = helper.make_opsetid("ai.onnx.ml", 1)
    node = helper.make_node("ArrayFeatureExtractor", ["labels", "idx"], ["y"], domain="ai.onnx.ml")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("idx", I64, ["N", 5])],
        [helper.make_empty_tensor_value_info("y")],
        [helper.make_tensor("labels", F, [1, 8], np.arange(8, dtype=np.float32) * 0.5)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), ml])
    rng = np.random.default_rng(4)
    _check(model, [{"idx": rng.integers(0, 8, (n, 5))} for n in (1, 4)])


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_a_bilinear_resize_is_two_matmuls(mode: str) -> None:
    """Interpolating the rows and then the columns of an NCHW map: the row weights
    multiply from the left and the column weights from the right, no transposes (U-Net
    decoders upsample so), and the result is onnxruntime's."""
    nodes = [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode)]
    inits = [helper.make_tensor("scales", F, [4], np.array([1, 1, 2.5, 1.5], np.float32))]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [1, 2, 4, 6])], ["y"], inits, 18)
    ops = [op.name for op in import_model(model).walk()]
    assert ops.count("mir.matmul") == 2 and "mir.transpose" not in ops
    x = _x(1, 2, 4, 6)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(backend.prepare(model).run({"x": x})[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("alpha", "folds"), [(-2.0, True), (0.25, True), (0.3, False)])
def test_a_gemm_scaled_by_a_power_of_two_scales_its_weight(alpha: float, folds: bool) -> None:
    """skl2onnx's k-means computes -2·x·cᵀ + ‖c‖² as a Gemm with alpha = -2: scaling the
    constant weight instead is exact for ±2^k, and the bias add then fuses with the
    matmul; another alpha scales the product."""
    rng = np.random.default_rng(4)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    c = rng.standard_normal(3).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["y"], alpha=alpha, transB=1)]
    inits = [helper.make_tensor("w", F, [3, 4], w), helper.make_tensor("c", F, [3], c)]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [2, 4])], ["y"], inits, 13)
    result = CompilePipeline(target="cpu").compile(import_model(model, initializers="constants"))
    names = [op.name for op in result.lir.walk()]
    assert ("mir.fused_matmul_bias_act" in names) is folds
    x = _x(2, 4)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(backend.prepare(model).run({"x": x})[0], want, rtol=1e-6, atol=1e-6)


def test_batch_norms_around_dense_layers_fold_into_them() -> None:
    """An MLP as torch exports it: Linear -> BatchNorm1d -> ReLU, then Linear -> ReLU ->
    BatchNorm1d -> Linear. The first norm folds into the Gemm before it (with the ReLU),
    the second into the Gemm after it: three matmuls run (onnxruntime runs six nodes),
    and the outputs are onnxruntime's at every batch size."""
    rng = np.random.default_rng(5)

    def t(name: str, *shape: int, lo: float = -1.0) -> onnx.TensorProto:
        return helper.make_tensor(
            name, F, list(shape), rng.uniform(lo, 1.0, shape).astype(np.float32)
        )

    nodes, inits = [], []
    for i, (k, n) in enumerate([(6, 8), (8, 8), (8, 3)]):
        inits += [t(f"w{i}", n, k), t(f"b{i}", n)]
    for i in (0, 1):
        inits += [t(f"g{i}", 8), t(f"beta{i}", 8), t(f"mu{i}", 8), t(f"var{i}", 8, lo=0.25)]
    bn = ["g{}", "beta{}", "mu{}", "var{}"]
    nodes = [
        helper.make_node("Gemm", ["x", "w0", "b0"], ["h0"], transB=1),
        helper.make_node("BatchNormalization", ["h0", *(a.format(0) for a in bn)], ["n0"]),
        helper.make_node("Relu", ["n0"], ["r0"]),
        helper.make_node("Gemm", ["r0", "w1", "b1"], ["h1"], transB=1),
        helper.make_node("Relu", ["h1"], ["r1"]),
        helper.make_node("BatchNormalization", ["r1", *(a.format(1) for a in bn)], ["n1"]),
        helper.make_node("Gemm", ["n1", "w2", "b2"], ["y"], transB=1),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, ["N", 6])], ["y"], inits, 13)
    compiled = CompilePipeline(target="cpu").compile(import_model(model, dynamic_dims={"N": 4}))
    names = [op.name for op in compiled.lir.walk()]
    assert names.count("mir.fused_matmul_bias_act") == 3
    assert "mir.fused_scale_shift_act" not in names and "mir.relu" not in names
    _check(model, [{"x": _x(n, 6)} for n in (1, 4)], tol=1e-5)


@pytest.mark.parametrize("source", ["topk", "argmax", "input"])
def test_gather_elements_is_one_op(source: str) -> None:
    """GatherElements imports as one ``mir.gather_elements``, which wraps negative
    indices itself: no wrap, stride or offset ops around it, whether the indices are
    positions by how they are made (TopK's, an arg reduction's: scikit-learn's AdaBoost
    median) or an input's that may be negative."""
    x = helper.make_tensor_value_info("x", F, [2, 5])
    inputs = [x]
    nodes = []
    if source == "topk":
        nodes.append(helper.make_node("TopK", ["x", "k"], ["v", "i"]))
    elif source == "argmax":
        nodes.append(helper.make_node("ArgMax", ["x"], ["i"], axis=1))
    else:
        inputs.append(helper.make_tensor_value_info("i", TensorProto.INT64, [2, 3]))
    nodes.append(helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1))
    inits = [helper.make_tensor("k", TensorProto.INT64, [1], [3])]
    model = _model(nodes, inputs, ["y"], inits, 13)
    ops = [op.name for op in import_model(model).walk() if op.name.startswith("mir.")]
    assert ops[-1] == "mir.gather_elements", ops
    assert "mir.where" not in ops and "mir.gather" not in ops, ops
    feeds = {"x": _x(2, 5)}
    if source == "input":
        feeds["i"] = np.array([[0, -1, 2], [-5, 4, -2]], np.int64)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    np.testing.assert_array_equal(backend.prepare(model).run(feeds)[0], want)
