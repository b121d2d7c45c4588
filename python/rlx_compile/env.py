"""RLX_* configuration flags, read the way RLX reads them.

Names are normalised to the ``RLX_`` prefix (``env.flag("DISPATCH_REPORT")`` reads
``RLX_DISPATCH_REPORT``). Code overrides (``overridden``, used by tools for their
command-line flags) win over the process environment. ``flag`` follows RLX's truthiness:
unset, ``0``, ``false``, ``off``, ``no`` and the empty string are false; ``1``, ``true``,
``yes``, ``on`` are true; other digit strings are true unless zero; any other non-empty
text is true.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

_OVERRIDES: ContextVar[Mapping[str, str] | None] = ContextVar("rlx_env_overrides", default=None)

_FALSE = frozenset({"0", "false", "off", "no", ""})
_TRUE = frozenset({"1", "true", "yes", "on"})


def key(name: str) -> str:
    return name if name.startswith("RLX_") else "RLX_" + name


def value(name: str) -> str | None:
    """The override or environment value of ``RLX_<name>`` (None when unset)."""
    k = key(name)
    overrides = _OVERRIDES.get() or {}
    if k in overrides:
        return overrides[k]
    return os.environ.get(k)


def flag(name: str) -> bool:
    text = value(name)
    if text is None:
        return False
    text = text.strip().lower()
    if text in _FALSE:
        return False
    if text in _TRUE:
        return True
    if text.isdigit():
        return int(text) != 0
    return True


def integer(name: str, default: int) -> int:
    """``RLX_<name>`` as an integer, ``default`` when unset or empty."""
    text = value(name)
    try:
        return int(text) if text else default
    except ValueError:
        raise ValueError(f"{key(name)}={text!r} is not an integer") from None


def max_constant_elements() -> int:
    """The most elements a value computed at compile time may hold (an ONNX
    ConstantOfShape, Range, EyeLike, index tables; a splat ``mir.constant`` in IR text);
    larger splats and iotas stay ops, anything else is refused, so a tiny file cannot
    make the compiler allocate gigabytes. Set with ``RLX_MAX_CONSTANT_ELEMENTS``."""
    return integer("MAX_CONSTANT_ELEMENTS", 1 << 24)


def max_tensor_bytes() -> int:
    """The largest static tensor a model may declare or compute (a larger one is an import
    error naming the node, not a MemoryError or an overflowed arena later). Set with
    ``RLX_MAX_TENSOR_BYTES``."""
    return integer("MAX_TENSOR_BYTES", 1 << 40)


@contextmanager
def overridden(**values: str | None) -> Iterator[None]:
    """Override ``RLX_<name>`` values for the duration of a block (None leaves one alone)."""
    merged = dict(_OVERRIDES.get() or {})
    merged.update({key(k): v for k, v in values.items() if v is not None})
    token = _OVERRIDES.set(merged)
    try:
        yield
    finally:
        _OVERRIDES.reset(token)
