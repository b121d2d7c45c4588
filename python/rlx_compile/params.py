"""Param arrays on disk: the ``.npz`` files that ``param-specialize`` reads and
``promote-params`` writes (one array per param name, as ``np.savez`` stores them)."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rlx_compile.dialects.types import TensorType
from rlx_compile.interpreter import ExecutionError
from rlx_compile.interpreter.core import coerce


def load_bindings(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file by name; a clear ``ValueError`` for a bad file."""
    try:
        archive = np.load(path, allow_pickle=False)
    except OSError as err:
        raise ValueError(f"cannot read bindings '{path}': {err.strerror or err}") from None
    except (ValueError, zipfile.BadZipFile, EOFError) as err:
        raise ValueError(f"cannot read bindings '{path}': {err}") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(f"bindings '{path}' hold one array, not named arrays (use np.savez)")
    with archive:
        return {name: archive[name] for name in archive.files}


def save_bindings(path: str | Path, arrays: Mapping[str, Any]) -> None:
    """Write arrays by name to ``path`` as given (``np.savez`` would append ``.npz``)."""
    with open(path, "wb") as f:
        np.savez(f, allow_pickle=True, **{name: np.asarray(a) for name, a in arrays.items()})


def param_array(name: str, t: TensorType, value: np.ndarray) -> np.ndarray:
    """``value`` checked against the param's type (raises ``ValueError``)."""
    if not t.is_static:
        raise ValueError(f"param '{name}' has symbolic dims ({t}): bind them first")
    if value.dtype.kind == "V" and value.dtype.itemsize == t.dtype.itemsize:
        value = value.view(t.dtype.numpy)  # np.savez stores ml_dtypes arrays as raw bytes
    try:
        arr = coerce(value, t, f"param '{name}'")
    except ExecutionError as err:
        raise ValueError(str(err)) from None
    if arr.shape != tuple(int(d) for d in t.shape):
        raise ValueError(f"param '{name}' has shape {list(arr.shape)}, expected {t}")
    return arr
