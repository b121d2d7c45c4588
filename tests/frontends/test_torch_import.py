"""import_torch (torch.export -> ONNX -> MIR) against PyTorch itself. PyTorch is not a
dependency of the package: these run where torch is installed (the venv that builds the
full-size benchmark models) and are skipped elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rlx_compile import CompilePipeline  # noqa: E402
from rlx_compile.frontends.torch import import_torch  # noqa: E402


class Block(torch.nn.Module):  # type: ignore[misc,name-defined]
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x):  # type: ignore[no-untyped-def]
        y = torch.relu(self.norm(self.conv(x)))
        return self.head(y.mean(dim=(2, 3))).softmax(-1)


@pytest.mark.parametrize("exported", [False, True])
def test_matches_pytorch(exported: bool) -> None:
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(2, 3, 9, 9)
    program = torch.export.export(model, (x,)) if exported else model
    imported = import_torch(program, (x,), input_names=["x"])
    result = CompilePipeline(target="cpu").compile(imported.module)
    (got,) = result.run({"x": x.numpy()}, imported.params).values()
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
