"""Errors that tools report as one line: ``file:line:col: error: message``.

Every user-facing failure (a parse error, an op that does not verify, an unknown pass or
option, a pass that gives up) is an ``RlxError`` whose ``line()`` is what a CLI prints
before exiting with status 1.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
    PassFailedException,
    VerifyException,
)

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


def verify_module(module: Operation, context: str | None = None) -> None:
    """Verify every op; on failure raise ``VerifyFailure`` naming the first bad op.

    Ops are checked one by one (not recursively) so the offending op is known, which
    ``Operation.verify`` on the module alone does not tell.
    """
    for op in module.walk():
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
