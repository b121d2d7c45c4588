"""``mir.gather_elements`` on the reference executor: NumPy's ``take_along_axis`` (of
the input's window the indices cover) and, bit for bit, the chain ONNX GatherElements
imported as before the op (its ``legalize`` lowering: wrap, index · stride + offsets,
one gather from the flattened input); out-of-range indices refused as a gather refuses
them."""

from __future__ import annotations

import numpy as np
import pytest
from tests.fusion.helpers import apply
from xdsl.dialects.builtin import ModuleOp

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.dialects.dim_expr import sym
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter import ExecutionError, run
from rlx_compile.targets.base import PRIMITIVES

CHAIN = "legalize{claims=" + ",".join(
    f'"{n}"' for n in sorted(PRIMITIVES - {mir.GatherElementsOp.name})
) + "}"  # fmt: skip


def _module(shape: tuple[int, ...], dtype: DType, ishape: tuple[int, ...], axis: int) -> ModuleOp:
    with ModuleBuilder("g") as m:
        x, i = m.input("x", shape, dtype), m.input("i", ishape, DType.I64)
        m.output(m.gather_elements(x, i, axis), names=["y"])
    return m.module


def _values(shape: tuple[int, ...], dtype: type, rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal(shape)
    x.flat[: min(3, x.size)] = [np.nan, -0.0, np.inf][: min(3, x.size)]
    if dtype is np.bool_:
        return x > 0
    if dtype is np.int64:
        return np.nan_to_num(x * 100, posinf=7).astype(dtype)
    return x.astype(dtype)


def _take_along_axis(x: np.ndarray, i: np.ndarray, axis: int) -> np.ndarray:
    """NumPy's, on the window of ``x`` the indices cover, negative indices wrapped."""
    window = x[tuple(slice(None) if d == axis else slice(0, k) for d, k in enumerate(i.shape))]
    return np.take_along_axis(window, np.where(i < 0, i + x.shape[axis], i), axis)


CASES = [
    ((2, 3, 5, 7), (2, 4, 5, 7), 1),  # the axis longer in the indices
    ((2, 3, 5, 7), (1, 2, 3, 2), 3),  # every other dim shorter: a window of the input
    ((4, 6), (4, 1), 1),  # AdaBoost's median: one position per row
    ((6,), (11,), 0),
    ((3, 4, 5), (3, 0, 5), 1),  # empty
    ((1, 5), (1, 5), 0),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
@pytest.mark.parametrize(("shape", "ishape", "axis"), CASES)
def test_numpy_and_the_chain(
    dtype: type, shape: tuple[int, ...], ishape: tuple[int, ...], axis: int
) -> None:
    rng = np.random.default_rng(1)
    x = _values(shape, dtype, rng)
    i = rng.integers(-shape[axis], shape[axis], ishape).astype(np.int64)
    module = _module(shape, DType.from_numpy(np.dtype(dtype)), ishape, axis)
    chain, _ = apply(module, CHAIN)
    assert "mir.gather_elements" not in {op.name for op in chain.walk()}
    got = run(module, {"x": x, "i": i})["y"]
    want = _take_along_axis(x, i, axis)
    assert got.dtype == want.dtype and got.shape == ishape
    assert got.tobytes() == want.tobytes()
    assert run(chain, {"x": x, "i": i})["y"].tobytes() == got.tobytes()


@pytest.mark.parametrize("bad", [5, -6, 100])
def test_out_of_range(bad: int) -> None:
    """Indices outside [-5, 5) are refused (the chain read a neighbour row for some)."""
    i = np.array([[0, 1], [bad, 2]], np.int64)
    with pytest.raises(ExecutionError, match=f"index {bad} is out of range for axis 1 of size 5"):
        run(_module((2, 5), DType.F32, (2, 2), 1), {"x": np.zeros((2, 5), np.float32), "i": i})


def test_symbolic_dims() -> None:
    """Symbolic dims: the lowering's offsets are iotas times the dims' values."""
    b, n, k = sym("b"), sym("n"), sym("k")
    with ModuleBuilder("g") as m:
        x, i = m.input("x", (b, 5, n)), m.input("i", (b, k, n), DType.I64)
        m.output(m.gather_elements(x, i, 1), names=["y"])
    chain, _ = apply(m.module, CHAIN)
    assert "mir.dims" in {op.name for op in chain.walk()}
    rng = np.random.default_rng(2)
    for bs, ks, ns in [(1, 2, 4), (2, 5, 1), (3, 1, 2)]:
        feeds = {"x": _values((bs, 5, ns), np.float32, rng),
                 "i": rng.integers(-5, 5, (bs, ks, ns)).astype(np.int64)}  # fmt: skip
        got = run(m.module, feeds)["y"]
        want = _take_along_axis(feeds["x"], feeds["i"], 1)
        assert got.tobytes() == want.tobytes()
        assert run(chain, feeds)["y"].tobytes() == got.tobytes()
