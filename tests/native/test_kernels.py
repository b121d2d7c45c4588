"""Every op the cpu target claims, for every element type it takes: the native kernel
against the reference executor (the definition), on random inputs with signed zeros,
infinities and NaN where the op defines them.

Bit-exact: integer and bool results, data movement, comparisons, casts, and the float
ops IEEE arithmetic rounds exactly (+ - * /, sqrt, min/max, floor/ceil/round, mod,
scans, quantisation and the dynamically quantised matmul, max pooling, rope). Float math
whose summation order or libm differs (transcendentals, matmul/conv through BLAS,
reductions, norms, softmax, attention) is checked to ``TOLERANCE[dtype]`` of the
result's scale. Element types the kernels do not take (narrow floats, sub-byte ints)
must be refused by name, so that the backend falls back to the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile.conversion.lir_to_c import NativeUnsupportedError
from rlx_compile.conversion.lir_to_c.lowering import SUFFIX
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.interpreter import run
from rlx_compile.native import build
from rlx_compile.pipeline import CompilePipeline
from rlx_compile.targets import get_target
from rlx_compile.targets.base import LEAVES
from tests.native.kernel_cases import CASES

PLAN = CompilePipeline(
    pipeline="builtin.module(plan-memory{reuse-inputs=true},plan-check)", keep_stages=False
)
TOLERANCE = {DType.F32: 2e-5, DType.F64: 1e-12, DType.F16: 4e-3, DType.BF16: 3e-2}
EXACT_FLOAT_OPS = (
    mir.NegOp, mir.AbsOp, mir.ReluOp, mir.SignOp, mir.SqrtOp, mir.RsqrtOp, mir.ReciprocalOp,
    mir.FloorOp, mir.CeilOp, mir.RoundOp, mir.AddOp, mir.SubOp, mir.MulOp, mir.DivOp,
    mir.MaxOp, mir.MinOp, mir.ModOp, mir.FmodOp, mir.CompareOp, mir.WhereOp, mir.CastOp,
    mir.BitcastOp, mir.ReshapeOp, mir.TransposeOp, mir.FusedReshapeTransposeOp, mir.NarrowOp,
    mir.SliceOp, mir.ConcatOp,
    mir.ExpandOp, mir.PadOp, mir.GatherOp, mir.GatherAxesOp, mir.GatherElementsOp,
    mir.ScatterNdOp, mir.CumsumOp, mir.CumprodOp,
    mir.ArgMaxOp, mir.ArgMinOp, mir.TopKOp, mir.QuantizeOp, mir.DequantizeOp,
    mir.FakeQuantizeOp, mir.MaxPoolOp, mir.RopeOp, mir.ElementwiseRegionOp,
    mir.ClipOp, mir.HardSigmoidOp, mir.HardSwishOp, mir.LeakyReluOp, mir.ThresholdedReluOp,
    mir.SoftsignOp, mir.ScalerOp,
    mir.BinarizerOp, mir.ImputerOp, mir.OneHotEncoderOp, mir.DynamicQuantizeLinearOp,
    mir.DynamicQuantizeMatmulOp,
)  # fmt: skip


def compare(op: type, got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, what
    dtype = DType.from_numpy(want.dtype)
    if not dtype.is_float:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    if issubclass(op, EXACT_FLOAT_OPS):
        np.testing.assert_array_equal(g, w, err_msg=what)
        signed = ~np.isnan(w)
        np.testing.assert_array_equal(np.signbit(g[signed]), np.signbit(w[signed]), err_msg=what)
        return
    finite = np.isfinite(w)
    scale = float(np.max(np.abs(w[finite]), initial=1.0))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, err_msg=what)


def check_case(name: str) -> list[tuple[DType, bool]]:
    """Run a case for every dtype it takes; returns the dtypes the kernels refused, each
    with whether the graph holds a type the kernel library has no suffix for."""
    op, make = CASES[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    refused = []
    for dtype in DType:
        made = make(dtype, rng)
        if made is None:
            continue
        module, inputs = made
        try:
            want = run(module, inputs)
        except Exception:
            continue
        graph = PLAN.compile(module).lir
        assert graph is not None
        try:
            model = build(graph, mode="direct")
        except NativeUnsupportedError as err:
            assert op.name in err.op_names, err
            involved = {v.type.dtype for o in module.walk() for v in (*o.operands, *o.results)
                        if isinstance(v.type, TensorType)}  # fmt: skip
            refused.append((dtype, bool(involved & NARROW)))
            continue
        got = model.run(inputs, poison=True)
        for key in want:
            compare(op, got[key], want[key], f"{name} {dtype.value} {key}")
    return refused


NARROW = {d for d in DType if d not in SUFFIX}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_matches_reference(name: str) -> None:
    refused = check_case(name)
    # Only graphs holding element types the kernel library has no suffix for are refused.
    wrong = sorted(d.value for d, narrow in refused if not narrow)
    assert wrong == [], f"{name}: refused {wrong}"


CONVS = sorted(n for n, (op, _) in CASES.items() if op in (mir.ConvOp, mir.FusedConvBiasActOp))


@pytest.mark.parametrize("name", CONVS)
def test_direct_convolution_matches_reference(name: str) -> None:
    """cortex-m's kernels run convolutions direct (no im2col scratch): f32, its float."""
    op, make = CASES[name]
    made = make(DType.F32, np.random.default_rng(0))
    assert made is not None
    module, inputs = made
    graph = PLAN.compile(module).lir
    model = build(graph, mode="direct", target="cortex-m")
    assert model.scratch_bytes == 0
    got, want = model.run(inputs, poison=True), run(module, inputs)
    for key in want:
        compare(op, got[key], want[key], f"{name} direct {key}")


def test_every_claimed_op_has_a_case() -> None:
    claimed = get_target("cpu").claims - LEAVES
    covered = {op.name for op, _ in CASES.values()}
    assert sorted(claimed - covered) == []
