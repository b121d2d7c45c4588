"""Errors that tools report as one line: ``file:line:col: error: message``.

Every user-facing failure (a parse error, an op that does not verify, an unknown pass or
option, a pass that gives up) is an ``RlxError`` whose ``line()`` is what a CLI prints
before exiting with status 1.

Passes report non-fatal findings with ``warn(op, message)``: one
``file:line:col: warning: ...`` line per finding. The pass manager routes them to its
stream (stderr for ``rlx-opt``) and records them (``CompileResult.warnings``); outside a
pass manager they go to stderr. ``collect_warnings`` captures them instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass

from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
    PassFailedException,
    VerifyException,
)

from rlx_compile.dialects.common import trusting_build_inference
from rlx_compile.dialects.signature import use_signature_check
from rlx_compile.ir import location_str, parse_error_line


class RlxError(Exception):
    """A failure with a one-line, user-facing description."""

    def line(self) -> str:
        return f"error: {self}"


class ParseFailure(RlxError):
    def __init__(self, err: ParseError):
        super().__init__(err.msg)
        self.err = err

    def line(self) -> str:
        return parse_error_line(self.err)


class VerifyFailure(RlxError):
    """An op that does not verify, with where it came from."""

    def __init__(self, op: Operation, message: str, context: str | None = None):
        super().__init__(message)
        self.op = op
        self.message = message
        self.context = context

    def line(self) -> str:
        where = location_str(self.op) or "<unknown>"
        ctx = f" ({self.context})" if self.context else ""
        return f"{where}: error: '{self.op.name}' op {self.message}{ctx}"


class PipelineError(RlxError):
    """A malformed pipeline: unknown pass, unknown or ill-typed option."""


class PassFailure(RlxError):
    def __init__(self, pass_spec: str, message: str, op: Operation | None = None):
        super().__init__(message)
        self.pass_spec = pass_spec
        self.message = " ".join(message.split())
        self.op = op

    def line(self) -> str:
        where = location_str(self.op) if self.op is not None else None
        prefix = f"{where}: " if where else ""
        return f"{prefix}error: pass '{self.pass_spec}' failed: {self.message}"


class OpPassFailure(PassFailedException):
    """A pass failure caused by one op: the one-line error starts at its location."""

    def __init__(self, message: str, op: Operation):
        super().__init__(message)
        self.op = op


_VERIFY_PREFIX = "Operation does not verify: "


def first_line(err: BaseException) -> str:
    """The message of an exception without xDSL's appended IR dump."""
    text = str(err).strip()
    if text.startswith(_VERIFY_PREFIX):
        text = text[len(_VERIFY_PREFIX) :]
    return " ".join(text.splitlines()[0].split()) if text else type(err).__name__


Stamp = tuple[object, ...]

_STAMP = "_rlx_verified_stamp"
"""Where an op keeps the stamp it last verified with: on the op itself, so the record
lives and dies with the op (a stamp references its block; a side table would keep
every module alive) and a clone starts unverified."""


def _verified_stamp(op: Operation) -> Stamp | None:
    return op.__dict__.get(_STAMP)


def _stamp(op: Operation) -> Stamp:
    """Everything an op's own verifier reads, compared by value: its block, the op before
    it (a moved op is checked again) and whether it ends the block (parent and terminator
    rules), its operands and their types, its result
    types, properties and attributes. Attributes are immutable, so an equal stamp means
    an equal verdict; what it cannot see (an attribute's payload changed in place, a
    region op's body) is covered by the full verify and by re-verifying ancestors."""
    operands = op._operands  # the tuple behind op.operands (which wraps it per call)
    return (
        op.parent,
        op.prev_op,
        op.next_op is None,
        operands,
        tuple([v.type for v in operands]),
        tuple([r.type for r in op.results]),
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
    )


def verify_module(module: Operation, context: str | None = None, *, full: bool = False) -> None:
    """Verify ``module``; on failure raise ``VerifyFailure`` naming the first bad op.

    Only what changed since the last verify is checked unless ``full``: an op whose stamp
    differs from the one it verified with, with its ancestors (a region op's verifier
    reads its body) and, for an op with regions, the terminators of its blocks (they
    check against their parent). Ops are checked one by one (not recursively) so the
    offending op is known, which ``Operation.verify`` on the module alone does not tell;
    so is the order of definitions within every block.
    """
    dirty: dict[Operation, None] = {}
    stamps: list[tuple[Operation, Stamp]] = []
    for op in module.walk():
        stamp = _stamp(op)
        if full or _verified_stamp(op) != stamp:
            stamps.append((op, stamp))
            dirty[op] = None
            for region in op.regions:
                for block in region.blocks:
                    if (last := block.last_op) is not None:
                        dirty[last] = None
            parent = op.parent_op()
            while parent is not None and parent not in dirty:
                dirty[parent] = None
                parent = parent.parent_op()
    if not dirty:
        return
    with nullcontext() if full else trusting_build_inference():
        _verify_dirty(module, dirty, context)
    for op, stamp in stamps:
        op.__dict__[_STAMP] = stamp


def _verify_dirty(module: Operation, dirty: dict[Operation, None], context: str | None) -> None:
    for op in module.walk():  # walk order: the first bad op is the one named
        if op not in dirty:
            continue
        use_signature_check(type(op))
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as err:
            raise VerifyFailure(op, first_line(err), context) from None
        for region in op.regions:
            for block in region.blocks:
                _check_defined_before_use(block, context)


def _check_defined_before_use(block: Block, context: str | None) -> None:
    """Within a block, every operand produced in that block comes from an earlier op
    (xDSL does not check dominance, and graphs are executed in block order)."""
    seen: set[SSAValue] = set()
    for op in block.ops:
        for value in op.operands:
            if isinstance(value, OpResult) and value.op.parent is block and value not in seen:
                name = f"%{value.name_hint}" if value.name_hint else "an operand"
                raise VerifyFailure(op, f"{name} is used before it is defined", context)
        seen.update(op.results)


def mark_verified(source: Operation, copy: Operation) -> None:
    """Record ``copy`` (a clone of ``source``) as verified wherever ``source`` is: a clone
    verifies exactly as its original does."""
    for a, b in zip(source.walk(), copy.walk(), strict=True):
        if _verified_stamp(a) == _stamp(a):
            b.__dict__[_STAMP] = _stamp(b)


# ---------------------------------------------------------------------------------
# Warnings
# ---------------------------------------------------------------------------------


def op_where(op: Operation) -> str:
    """``file:line:col`` of an op parsed from text, else ``@graph %name`` for built IR."""
    loc = location_str(op)
    if loc is not None:
        return loc
    graph = op.parent_op()
    while graph is not None and "sym_name" not in graph.properties:
        graph = graph.parent_op()
    parts = []
    if graph is not None:
        sym = graph.properties["sym_name"]
        parts.append("@" + getattr(sym, "data", str(sym)))
    if op.results and op.results[0].name_hint:
        parts.append("%" + op.results[0].name_hint)
    return " ".join(parts) or "<unknown>"


@dataclass(frozen=True)
class PassWarning:
    """A non-fatal finding about an op, with where the op was when it was reported (a
    later pass may erase the op)."""

    where: str
    op_name: str
    message: str

    def line(self) -> str:
        return f"{self.where}: warning: '{self.op_name}' op {self.message}"


WarningHandler = Callable[[PassWarning], None]
_HANDLER: ContextVar[WarningHandler | None] = ContextVar("rlx_warning_handler", default=None)


def warn(op: Operation, message: str) -> None:
    """Report a finding about ``op`` to the active handler (stderr when none is set)."""
    finding = PassWarning(op_where(op), op.name, " ".join(message.split()))
    handler = _HANDLER.get()
    if handler is None:
        sys.stderr.write(finding.line() + "\n")
    else:
        handler(finding)


@contextmanager
def handle_warnings(handler: WarningHandler) -> Iterator[None]:
    """Route ``warn`` calls made inside the block to ``handler``."""
    token = _HANDLER.set(handler)
    try:
        yield
    finally:
        _HANDLER.reset(token)


@contextmanager
def collect_warnings() -> Iterator[list[PassWarning]]:
    """Capture the warnings of the block in a list instead of printing them."""
    found: list[PassWarning] = []
    with handle_warnings(found.append):
        yield found
