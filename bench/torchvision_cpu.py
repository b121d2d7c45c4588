"""torchvision on a CPU torch, for the export scripts of ``bench/``.

torchvision's wheels on PyPI are built for CUDA torch; with a CPU torch its compiled ops
(nms, roi_align and the like) cannot load, and only their fake-tensor registration, which
runs when torchvision is imported, needs them. ``import_torchvision`` imports it with that
registration skipped: its models, none of which uses those ops, work. Import it before
transformers, which imports torchvision itself when it is installed (and would fail).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import torch
import torch.library


def import_torchvision() -> Any | None:
    """torchvision, imported; None when it is not installed."""
    if importlib.util.find_spec("torchvision") is None:
        return None
    register_fake = torch.library.register_fake

    def skip_torchvision_ops(name: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(name, str) and name.startswith("torchvision::"):
            return lambda fn: fn
        return register_fake(name, *args, **kwargs)

    torch.library.register_fake = skip_torchvision_ops
    try:
        import torchvision
    finally:
        torch.library.register_fake = register_fake
    return torchvision
