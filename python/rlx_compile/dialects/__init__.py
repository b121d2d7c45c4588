"""xDSL definitions of the three RLX levels: one dialect per file.

``RLX_DIALECTS`` maps dialect names to lazy factories, the form xDSL contexts and opt
tools register.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect


def _rlx() -> Dialect:
    from rlx_compile.dialects.common import RLX

    return RLX


def _mir() -> Dialect:
    from rlx_compile.dialects.mir import MIR

    return MIR


def _hir() -> Dialect:
    from rlx_compile.dialects.hir import HIR

    return HIR


def _lir() -> Dialect:
    from rlx_compile.dialects.lir import LIR

    return LIR


RLX_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "rlx": _rlx,
    "mir": _mir,
    "hir": _hir,
    "lir": _lir,
}
