"""``mir.gather_axes`` on the reference executor: bit for bit the chain of per-axis
gathers it means (the import nearest Resize had before the op existed), out-of-range
indices refused as a gather refuses them."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_compile import ModuleBuilder
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter import ExecutionError, run


def _run(x: np.ndarray, indices: list[np.ndarray], axes: list[int], fused: bool) -> np.ndarray:
    with ModuleBuilder("g") as m:
        y = m.input("x", x.shape, DType.from_numpy(x.dtype))
        idx = [m.constant(i) for i in indices]
        if fused:
            y = m.gather_axes(y, idx, axes)
        else:
            for i, a in zip(idx, axes, strict=True):
                y = m.gather(y, i, a)
        m.output(y, names=["y"])
    names = [op.name for op in m.module.walk()]
    assert ("mir.gather_axes" in names) == fused
    return run(m.module, {"x": x})["y"]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
@pytest.mark.parametrize(
    ("shape", "axes", "lens"),
    [((2, 3, 5, 7), [2, 3], [10, 3]), ((4, 3, 5), [0, 1], [6, 0]),
     ((1, 2, 3, 4, 5), [2, 3, 4], [6, 8, 2]), ((3, 4), [0, 1], [1, 9]), ((5, 6), [1], [4])],
)  # fmt: skip
def test_the_chain_bit_for_bit(
    dtype: type, shape: tuple[int, ...], axes: list[int], lens: list[int]
) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    x.flat[:3] = [np.nan, -0.0, np.inf]
    if dtype is np.bool_:
        x = x > 0
    elif dtype is np.int64:
        x = np.nan_to_num(x * 100, posinf=7).astype(dtype)
    else:
        x = x.astype(dtype)
    indices = [rng.integers(-shape[a], shape[a], n).astype(np.int64)
               for a, n in zip(axes, lens, strict=True)]  # fmt: skip
    got, want = _run(x, indices, axes, True), _run(x, indices, axes, False)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_out_of_range() -> None:
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ExecutionError, match="out of range"):
        _run(x, [np.array([0, 3], np.int64), np.array([0], np.int64)], [1, 2], True)
