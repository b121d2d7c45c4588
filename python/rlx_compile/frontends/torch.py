"""``import_torch``: a ``torch.export`` program (or a module with example inputs) to MIR.

It goes through PyTorch's own ONNX exporter (``torch.onnx.export(..., dynamo=True)``,
which lowers the exported program's ATen graph to ONNX) and then ``import_model``, so
everything the ONNX frontend claims applies; torch is imported only when this is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.frontends.onnx import import_model, param_values


@dataclass
class TorchImport:
    module: ModuleOp
    """The MIR module; its params are the program's weights and buffers."""
    params: dict[str, np.ndarray]
    """Values for the module's params (pass them to ``run`` / ``CompileResult.run``)."""
    model: onnx.ModelProto
    """The ONNX model the exporter produced (for inspection or onnxruntime)."""


def import_torch(
    program: Any,
    args: tuple[Any, ...] = (),
    *,
    input_names: list[str] | None = None,
    dynamic_dims: dict[str, int | str] | None = None,
    opset: int = 20,
) -> TorchImport:
    """Import a ``torch.export.ExportedProgram`` (``args`` unused) or an ``nn.Module``
    with example ``args``."""
    try:
        import torch
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("import_torch needs PyTorch (pip install torch)") from err
    exported = torch.onnx.export(
        program, args, dynamo=True, opset_version=opset, input_names=input_names,
        external_data=False, verbose=False,
    )  # fmt: skip
    if exported is None:  # pragma: no cover - the dynamo exporter always returns one
        raise RuntimeError("torch.onnx.export returned no program")
    model = exported.model_proto
    module = import_model(model, dynamic_dims=dynamic_dims)
    return TorchImport(module, param_values(model, module), model)
