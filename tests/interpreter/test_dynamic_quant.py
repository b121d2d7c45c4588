"""dynamic_quantize_linear / matmul_integer / conv_integer against onnxruntime and ONNX's
reference implementation on random inputs: u8 and i8 operands, every zero point form,
int32 exactness, ties and the all-zero input."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnxruntime as ort
import pytest
from interp_testlib import bits_equal, run_op
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from rlx_compile.dialects import mir

U8, I8 = np.uint8, np.int8
RNG = np.random.default_rng(0)
OUTPUT_TYPES = {
    "DynamicQuantizeLinear": (TensorProto.UINT8, TensorProto.FLOAT, TensorProto.UINT8),
    "MatMulInteger": (TensorProto.INT32,),
    "ConvInteger": (TensorProto.INT32,),
}


def onnx_model(op_type: str, inputs: Sequence[np.ndarray | None], outputs: int, **attrs: object):  # type: ignore[no-untyped-def]
    """A one-node model of ``op_type``; None marks an absent optional input."""
    names = ["" if a is None else f"i{k}" for k, a in enumerate(inputs)]
    node = helper.make_node(op_type, names, [f"o{k}" for k in range(outputs)], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in zip(names, inputs, strict=True)
            if a is not None
        ],
        [
            helper.make_tensor_value_info(f"o{k}", t, None)
            for k, t in enumerate(OUTPUT_TYPES[op_type][:outputs])
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    feeds = {n: a for n, a in zip(names, inputs, strict=True) if a is not None}
    return model, feeds


def reference(
    op_type: str, inputs: Sequence[np.ndarray | None], outputs: int = 1, **attrs: object
) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    model, feeds = onnx_model(op_type, inputs, outputs, **attrs)
    return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]


def onnxruntime(
    op_type: str, inputs: Sequence[np.ndarray | None], outputs: int = 1
) -> list[np.ndarray]:
    model, feeds = onnx_model(op_type, inputs, outputs)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in session.run(None, feeds)]


def dynamic_quantize(x: np.ndarray) -> list[np.ndarray]:
    return run_op(lambda a: list(mir.DynamicQuantizeLinearOp(a).results), x)


DQL_CASES = {
    "random": RNG.normal(size=(3, 17)).astype(np.float32) * 4,
    "positive": RNG.uniform(0.5, 3, size=(40,)).astype(np.float32),
    "negative": -RNG.uniform(0.5, 3, size=(2, 5)).astype(np.float32),
    # x / scale lands on halves: 0.5·k·scale with scale = 2/255
    "ties": (np.arange(-4, 5, dtype=np.float32) * np.float32(1 / 255)),
    "one element": np.float32([[-7.25]]),
    "all zero": np.zeros((2, 3), np.float32),
}


@pytest.mark.parametrize("case", sorted(DQL_CASES))
def test_dynamic_quantize_linear_is_onnxruntimes(case: str) -> None:
    x = DQL_CASES[case]
    got = dynamic_quantize(x)
    want = onnxruntime("DynamicQuantizeLinear", [x], 3)
    for g, w in zip(got, want, strict=True):
        assert bits_equal(g, w), (g, w)
    if case != "all zero":  # the ONNX reference's scale there is 1/255, onnxruntime's 1
        for g, w in zip(got, reference("DynamicQuantizeLinear", [x], 3), strict=True):
            assert bits_equal(g, w), (g, w)


def _eight_bit(dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, size=shape).astype(dtype)


def matmul_integer(*args: np.ndarray | None) -> np.ndarray:
    present = [a for a in args if a is not None]
    za, zb = args[2] is not None, args[3] is not None

    def body(*v):  # type: ignore[no-untyped-def]
        it = iter(v[2:])
        return [mir.MatmulIntegerOp(v[0], v[1], next(it) if za else None, next(it) if zb else None)]

    (out,) = run_op(body, *present)
    return out


ZP_FORMS = ("none", "scalar", "vector")


def _zero_point(dtype: type, form: str, n: int) -> np.ndarray | None:
    if form == "none":
        return None
    return _eight_bit(dtype, () if form == "scalar" else (n,))


@pytest.mark.parametrize("a_type", [U8, I8])
@pytest.mark.parametrize("b_type", [U8, I8])
@pytest.mark.parametrize("za_form", ZP_FORMS)
@pytest.mark.parametrize("zb_form", ZP_FORMS)
def test_matmul_integer_is_the_references(
    a_type: type, b_type: type, za_form: str, zb_form: str
) -> None:
    a, b = _eight_bit(a_type, (2, 5, 37)), _eight_bit(b_type, (37, 6))
    za, zb = _zero_point(a_type, za_form, 5), _zero_point(b_type, zb_form, 6)
    got = matmul_integer(a, b, za, zb)
    if za_form == "vector":  # the ONNX reference subtracts a vector along the last axis
        ca = a.astype(np.int64) - (0 if za is None else za.astype(np.int64)[:, None])
        want = ca @ (b.astype(np.int64) - (0 if zb is None else zb.astype(np.int64)))
    else:
        (want,) = reference("MatMulInteger", [a, b, za, zb])
    assert bits_equal(got, want.astype(np.int32))


def test_matmul_integer_sums_exactly_in_int32() -> None:
    # 255 · 255 · 4096 = 266,342,400: past f32's 2^24, exact in int32
    k = 4096
    a, b = np.full((1, k), 255, U8), np.full((k, 2), 255, U8)
    got = matmul_integer(a, b, None, None)
    assert got.dtype == np.int32 and (got == 255 * 255 * k).all()
    assert bits_equal(got, onnxruntime("MatMulInteger", [a, b])[0])


def conv_integer(
    x: np.ndarray, w: np.ndarray, zx: np.ndarray | None, zw: np.ndarray | None, **geometry: object
) -> np.ndarray:  # type: ignore[no-untyped-def]
    present = [a for a in (x, w, zx, zw) if a is not None]

    def body(*v):  # type: ignore[no-untyped-def]
        it = iter(v[2:])
        return [
            mir.ConvIntegerOp(
                v[0], v[1], next(it) if zx is not None else None,
                next(it) if zw is not None else None, **geometry,
            )
        ]  # fmt: skip

    (out,) = run_op(body, *present)
    return out


@pytest.mark.parametrize("x_type", [U8, I8])
@pytest.mark.parametrize("w_type", [U8, I8])
@pytest.mark.parametrize("zx_form", ("none", "scalar"))
@pytest.mark.parametrize("zw_form", ZP_FORMS)
def test_conv_integer_is_the_references(
    x_type: type, w_type: type, zx_form: str, zw_form: str
) -> None:
    x, w = _eight_bit(x_type, (2, 4, 7, 6)), _eight_bit(w_type, (6, 2, 3, 2))
    zx, zw = _zero_point(x_type, zx_form, 1), _zero_point(w_type, zw_form, 6)
    geometry = {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2], "groups": 2}
    got = conv_integer(x, w, zx, zw, **geometry)
    attrs = {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2], "group": 2}
    (want,) = reference("ConvInteger", [x, w, zx, zw], **attrs)
    assert bits_equal(got, want.astype(np.int32))


def test_conv_integer_pads_zeros_after_the_zero_point() -> None:
    """Padding is zero in the centred input: with x = zero point everywhere, every
    output is 0 whatever the weight and padding."""
    x = np.full((1, 1, 3, 3), 9, U8)
    w = _eight_bit(U8, (2, 1, 3, 3))
    got = conv_integer(x, w, np.array(9, U8), None, pads=[1, 1, 1, 1])
    assert got.shape == (1, 2, 3, 3) and not got.any()
