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
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from typing import cast

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
    PassFailedException,
    VerifyException,
)

from rlx_compile.dialects.construct import Cloner, block_ops, walk_block_list, walk_list
from rlx_compile.dialects.op_support import (
    INFERRED_FROM,
    stored_type,
    trusting_build_inference,
    verify_one,
)
from rlx_compile.dialects.signature import (
    _GENERIC,
    _ISOLATION_SCOPE,
    isolation_checked_for,
    use_signature_check,
    verify_isolated_ops,
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


Stamp = tuple[object, ...]

_STAMP = "_rlx_verified_stamp"
"""Where an op keeps the stamp it last verified with: on the op itself, so the record
lives and dies with the op (a stamp references its block; a side table would keep
every module alive) and a clone starts unverified."""


def _stamp(op: Operation) -> Stamp:
    """Everything an op's own verifier reads, compared by value: its block, the op before
    it (a moved op is checked again) and whether it ends the block (parent and terminator
    rules), its operands and their types, its result
    types, properties and attributes. Attributes are immutable, so an equal stamp means
    an equal verdict; what it cannot see (an attribute's payload changed in place, a
    region op's body) is covered by the full verify and by re-verifying ancestors."""
    # xDSL's fields behind its properties (op.operands wraps the tuple per call): this runs
    # for every op after most passes.
    operands = op._operands
    return (
        op.parent,
        op._prev_op,
        op._next_op is None,
        operands,
        tuple(map(stored_type, operands)),
        tuple(map(stored_type, op.results)),
        op.properties.copy(),  # a dict compares by its items, in any order
        op.attributes.copy() if op.attributes else None,
    )


_BODY = "_rlx_verified_body"
"""Beside the stamp of an op of ``_BODY_READS``: what its verifier read of its body."""


def _regions_read(op: Operation) -> tuple[object, ...]:
    """What xDSL's region checks (and ``NoTerminator``'s) read of an op's body: each
    region's block count and its entry block's argument types."""
    return tuple(
        (len(region.blocks), None if (entry := region.first_block) is None else entry.arg_types)
        for region in op.regions
    )


def _module_read(op: Operation) -> tuple[object, ...]:
    """``_regions_read``, and the symbol names of the module's ops (``SymbolTable``)."""
    names = tuple(o.get_attr_or_prop("sym_name") for o in block_ops(cast(ModuleOp, op).body.block))
    return (_regions_read(op), names)


_BODY_READS: dict[type[Operation], Callable[[Operation], tuple[object, ...]]] = {
    ModuleOp: _module_read,
    func.FuncOp: _regions_read,
}
"""Ops whose verifier (xDSL's, with RLX's isolation check) reads nothing of their body
but what these give, and whether the ops it holds read values from outside it
(``IsolatedFromAbove``, which the incremental verify checks for the ops that changed).
An ancestor of a changed op whose stamp and body reading are those it verified with
has only that isolation check run again (a graph and module hold every op)."""


def _record_body(op: Operation) -> None:
    """After ``op`` verified: what its verifier read of its body, if that is known."""
    reader = _BODY_READS.get(type(op))
    if reader is not None:
        op.__dict__[_BODY] = reader(op)


def _body_unchanged(op: Operation) -> bool:
    """Whether ``op`` verified with its current stamp and body reading (see
    ``_BODY_READS``): its own verdict stands, but for the ops it isolates."""
    reader = _BODY_READS.get(type(op))
    if reader is None:
        return False
    known = op.__dict__
    return _BODY in known and known[_BODY] == reader(op) and known.get(_STAMP) == _stamp(op)


def verify_module(module: Operation, context: str | None = None, *, full: bool = False) -> bool:
    """Verify ``module``; on failure raise ``VerifyFailure`` naming the first bad op.
    Returns whether any op differed from its stamp (always True when ``full``).

    Only what changed since the last verify is checked unless ``full``: an op whose stamp
    differs from the one it verified with, with its ancestors (a region op's verifier
    reads its body) and, for an op with regions, the terminators of its blocks (they
    check against their parent). Ops are checked one by one (not recursively) so the
    offending op is known, which ``Operation.verify`` on the module alone does not tell;
    so is the order of definitions of every changed op against its operands and users.
    """
    if full:
        _verify_all(module, context)
        return True
    dirty = _Dirty()
    dirty.compare(walk_list(module))
    dirty.verify(context)
    return bool(dirty.ops)


def current_stamps(module: Operation) -> list[tuple[Operation, Stamp]]:
    """Every op of ``module`` in walk order with its stamp as it is now: two lists that
    compare equal show no op added, removed, moved or changed in what a stamp sees."""
    return [(op, _stamp(op)) for op in walk_list(module)]


def stamps_unchanged(module: Operation) -> bool:
    """Whether every op of ``module`` has the stamp it last verified with (what the
    incremental verify would find nothing to check in); nothing is verified."""
    return all(op.__dict__.get(_STAMP) == _stamp(op) for op in walk_list(module))


def _verify_all(module: Operation, context: str | None) -> None:
    """``verify_module(module, full=True)``: what ``_Dirty`` does when every op differs
    from its stamp, without comparing stamps: every op of the module in walk order, then
    the module's ancestors (a region op's verifier reads its body), each block's order
    of definitions, each op's verifier (inference not trusted), then a stamp for every
    op of the module."""
    ops = walk_list(module)
    checked = list(ops)
    parent = module.parent_op()
    while parent is not None:
        checked.append(parent)
        parent = parent.parent_op()
    for op in checked:
        for region in op.regions:
            for block in region.blocks:
                _check_defined_before_use(block, context)
    _verify_ops(checked, context)
    for op in ops:
        op.__dict__[_STAMP] = _stamp(op)
        if op.regions:
            _record_body(op)


def _verify_ops(
    ops: Iterable[Operation], context: str | None, isolating: Collection[int] = ()
) -> None:
    """Each op's own verifier, in order; the first failure raised as a ``VerifyFailure``.
    An op in ``isolating`` (by id: ancestors whose verdict stands, see ``_BODY_READS``)
    has only its isolation check of the ops in the current ``isolation_checked_for``."""
    for op_type in {type(op) for op in ops}:
        use_signature_check(op_type)
    for op in ops:
        try:
            if id(op) in isolating:
                _verify_isolation(op)
            else:
                verify_one(op)
        except (VerifyException, DiagnosticException) as err:
            raise VerifyFailure(op, first_line(err), context) from None


def _verify_isolation(op: Operation) -> None:
    """What the verifier of ``op`` (isolated from above) checks of the ops it holds
    within ``isolation_checked_for``: those of them in its scope; under xDSL's generic
    checks, its whole verifier."""
    scope = _ISOLATION_SCOPE.get()
    if scope is None or _GENERIC.get():
        op.verify(verify_nested_ops=False)
    else:
        verify_isolated_ops(op, scope.of(op))


def verify_changes(module: Operation, log: ChangeLog, context: str | None = None) -> None:
    """Verify what a pass reported changing in ``module`` (see ``ChangeLog``), as
    ``verify_module`` does what its stamps show: the reported ops (and the ops using
    their results), the ops of every block reported as changed whose stamp differs, with
    their ancestors and terminators. What was not reported is left to the full verify."""
    dirty = _Dirty()
    for block in log.blocks:
        if _in_module(block.parent_op(), module):
            dirty.compare(walk_block_list(block))
    for op in log.ops:
        if op.parent is not None and _in_module(op, module):
            dirty.add(op, reported=True)
            for result in op.results:
                for use in result.uses:
                    dirty.add(use.operation, reported=False)
    for block in log.emptied:
        if (
            _in_module(block.parent_op(), module)
            and (last := block.last_op) is not None
            and not _ended_block(last, block)
        ):
            dirty.add(last, reported=False)
    dirty.verify(context)


def _ended_block(op: Operation, block: Block) -> bool:
    """Whether ``op`` verified as the last op of ``block`` and, but for the op before it,
    nothing its stamp holds changed since: erasing other ops of the block changes nothing
    its verifier reads (what ends the block is still what it checked)."""
    old = op.__dict__.get(_STAMP)
    if old is None or old[0] is not block or not old[2]:
        return False
    return old[3:] == _stamp(op)[3:]


def _in_module(op: Operation | None, module: Operation) -> bool:
    while op is not None and op is not module:
        op = op.parent_op()
    return op is module


class _Dirty:
    """The ops to verify, each with its position in the walk that met it (the walk's
    order names the first bad op; ops no walk met come after, in the order added) and
    what to check of its place in its block: nothing (``_KEPT``: it is verified because
    what it reads or ends changed), its operands' (``_READS``: a new op, or one whose
    operands changed), or also its users' (``_MOVED``)."""

    def __init__(self) -> None:
        self.ops: dict[Operation, tuple[int, int]] = {}
        self.ids: set[int] = set()
        """The ids of ``ops``' keys: membership tests for every op walked hash in C (an
        op's own ``__hash__`` is xDSL's, in Python)."""
        self.stamps: list[tuple[Operation, Stamp]] = []
        self.region_ops: dict[Operation, int] = {}
        self.index = 0

    def _put(self, op: Operation, at: tuple[int, int]) -> None:
        self.ops[op] = at
        self.ids.add(id(op))

    def compare(self, ops: Iterable[Operation]) -> None:
        """Walk ``ops`` (in walk order): the ops whose stamp differs and the terminators
        of their regions' blocks."""
        found = self.ops
        ids = self.ids
        stamps = self.stamps
        i = self.index
        for op in ops:
            i += 1
            if op.regions:
                self.region_ops[op] = i
            stamp = _stamp(op)
            old = op.__dict__.get(_STAMP)
            if old != stamp:
                stamps.append((op, stamp))
                moved = old is not None and (old[0] is not stamp[0] or old[1] is not stamp[1])
                found[op] = (i, _MOVED if moved else _READS)
                ids.add(id(op))
                if op.regions:
                    self._add_terminators(op)
            elif id(op) in ids:
                found[op] = (i, found[op][1])  # a terminator, at its place in the walk
        self.index = i

    def add(self, op: Operation, *, reported: bool) -> None:
        """A reported op (with its body), or one that reads or ends what was."""
        at = self.ops.get(op) if id(op) in self.ids else None
        level = _MOVED if reported else _KEPT
        if at is not None and at[1] >= level:
            return
        self._put(op, (_UNWALKED if at is None else at[0], level))
        if reported:
            self.stamps.append((op, ()))  # stamped once verified
            for nested in op.walk():
                if nested is not op:
                    self.add(nested, reported=True)
            self._add_terminators(op)

    def _add_terminators(self, op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                if (last := block.last_op) is not None and id(last) not in self.ids:
                    self._put(last, (_UNWALKED, _KEPT))

    def verify(self, context: str | None) -> None:
        if not self.ops:
            return
        ops = self.ops
        ids = self.ids
        blocks: set[int] = set()
        isolating: set[int] = set()  # ancestors whose own verdict stands
        for op in list(ops):  # ancestors: a region op's verifier reads its body
            block = op.parent
            if block is not None:  # the ops of a block share their ancestors
                if id(block) in blocks:
                    continue
                blocks.add(id(block))
            parent = op.parent_op()
            while parent is not None and id(parent) not in ids:
                self._put(parent, (self.region_ops.get(parent, _UNWALKED), _KEPT))
                if _body_unchanged(parent):
                    isolating.add(id(parent))
                parent = parent.parent_op()
        # In walk order, ops no walk met in the order added (a stable sort by position).
        ordered = [
            (op, level)
            for _, _, op, level in sorted(
                [(at, n, op, level) for n, (op, (at, level)) in enumerate(ops.items())]
            )
        ]
        order = _BlockOrder()
        for op, level in ordered:
            if level:
                order.check(op, level, context)
        checked = [op for op, _ in ordered]
        readers = [  # of the ops that moved: a value may have left an isolated op
            use.operation
            for op, level in ordered
            if level == _MOVED
            for result in op.results
            for use in result.uses
        ]
        # What a comparison by value shows is all it sees.
        with trusting_build_inference(), isolation_checked_for(checked + readers):
            _verify_ops(checked, context, isolating)
        for op, stamp in self.stamps:
            op.__dict__[_STAMP] = stamp or _stamp(op)
        for op in checked:
            if op.regions and id(op) not in isolating:
                _record_body(op)


_KEPT, _READS, _MOVED = 0, 1, 2

_UNWALKED = 1 << 62
"""The position of an op no walk met: after those it met, in the order they were added."""


class _BlockOrder:
    """Positions of ops in their blocks, numbered once per block when first asked."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[int, int]] = {}

    def positions(self, block: Block) -> dict[int, int]:
        """Op id -> position in ``block``. By id: ops and blocks hash in Python (xDSL's
        ``__hash__``), ids in C; every op is alive while it is verified."""
        positions = self.blocks.get(id(block))
        if positions is None:
            positions = self.blocks[id(block)] = {id(o): i for i, o in enumerate(block_ops(block))}
        return positions

    def check(self, op: Operation, level: int, context: str | None) -> None:
        """Within its block, ``op``'s operands come from earlier ops and, if it moved,
        its users come later (xDSL does not check dominance, and graphs are executed in
        block order). A new op's users, and an op's new users, have operands that
        changed: they are checked as readers."""
        block = op.parent
        if block is None:
            return
        positions: dict[int, int] | None = None
        here = -1
        for value in op._operands:  # the tuple behind op.operands
            kind = type(value)
            if (
                kind is OpResult or (kind is not BlockArgument and isinstance(value, OpResult))
            ) and (owner := value.op).parent is block:  # type: ignore[attr-defined]
                if positions is None:
                    positions = self.positions(block)
                    here = positions[id(op)]
                if positions[id(owner)] >= here:
                    message = f"{_value_name(value)} is used before it is defined"
                    raise VerifyFailure(op, message, context)
        if level < _MOVED:
            return
        for result in op.results:
            use = result.first_use  # the use list, in order, by its links
            while use is not None:
                user = use._operation
                if user.parent is block:
                    if positions is None:
                        positions = self.positions(cast(Block, block))
                        here = positions[id(op)]
                    if positions[id(user)] <= here:
                        message = f"{_value_name(result)} is used before it is defined"
                        raise VerifyFailure(user, message, context)
                use = use._next_use


def _check_defined_before_use(block: Block, context: str | None) -> None:
    """Within a block, every operand produced in that block comes from an earlier op."""
    seen: set[int] = set()  # the ops met so far, by id (an op hashes in Python)
    op = block._first_op
    while op is not None:
        for value in op._operands:
            kind = type(value)
            if (
                (kind is OpResult or (kind is not BlockArgument and isinstance(value, OpResult)))
                and (owner := value.op).parent is block  # type: ignore[attr-defined]
                and id(owner) not in seen
            ):
                message = f"{_value_name(value)} is used before it is defined"
                raise VerifyFailure(op, message, context)
        seen.add(id(op))
        op = op._next_op


def _value_name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "an operand"


def verified_clone(module: ModuleOp) -> ModuleOp:
    """A copy of ``module``, after verifying it, recorded as verified: a clone verifies
    exactly as its original does."""
    verify_module(module)
    pairs: list[tuple[Operation, Operation]] = []
    cloner = Cloner({}, {}, clone_name_hints=True, clone_operands=True, pairs=pairs)
    copy = cast(ModuleOp, cloner.clone(module))
    cloner.finish()
    for op, twin in pairs:
        old = op.__dict__
        new = twin.__dict__
        # What held of the original's inference holds of its copy (its operand types,
        # properties and result types are the same); its stamp is the original's (just
        # verified) with the copy's place and operands: the types and (copied, never
        # changed) attribute dicts are the same.
        record = old.get(INFERRED_FROM)
        if record is not None:
            new[INFERRED_FROM] = record
        stamp = old[_STAMP]
        place = (twin.parent, twin._prev_op, twin._next_op is None, twin._operands)
        new[_STAMP] = (*place, *stamp[4:])
        if _BODY in old:  # block counts, argument types and symbol names: the same
            new[_BODY] = old[_BODY]
    return copy


# ---------------------------------------------------------------------------------
# What a pass reports changing
# ---------------------------------------------------------------------------------


class ChangeLog:
    """What a pass reported changing while it ran (``recording_changes``), for the
    verify after it: ops created, modified or moved (``note_changed``, with the ops of
    their bodies), blocks ops were erased from (``note_removed``), and blocks in which
    anything may have changed (``note_block_changed``: their ops are compared with their
    stamps). A pass whose rewriters carry ``change_listener()`` reports through them."""

    def __init__(self) -> None:
        self.ops: dict[Operation, None] = {}
        self.emptied: dict[Block, None] = {}
        self.blocks: dict[Block, None] = {}

    @cached_property
    def listener(self) -> PatternRewriterListener:
        """The listener reporting to this log (made when first asked: the pass manager
        makes a log per pass, and many passes report without one)."""
        return PatternRewriterListener(
            operation_insertion_handler=[self.changed],
            operation_modification_handler=[self.changed],
            operation_removal_handler=[self.removed],
        )

    def changed(self, op: Operation) -> None:
        self.ops[op] = None

    def removed(self, op: Operation) -> None:
        if op.parent is not None:
            self.emptied[op.parent] = None
        self.ops.pop(op, None)


_CHANGES: ContextVar[ChangeLog | None] = ContextVar("rlx_changes", default=None)
_INERT = PatternRewriterListener()


class recording_changes:
    """Collect what the code inside the block reports changing (``with
    recording_changes() as log``). A class, not a generator: the pass manager enters one
    per pass."""

    def __init__(self) -> None:
        self.log = ChangeLog()

    def __enter__(self) -> ChangeLog:
        self.token = _CHANGES.set(self.log)
        return self.log

    def __exit__(self, *exc: object) -> None:
        _CHANGES.reset(self.token)


def note_changed(*ops: Operation) -> None:
    """Report ops a pass created (with their bodies), modified or moved without a
    rewriter carrying ``change_listener()``. A no-op when nothing records."""
    if (log := _CHANGES.get()) is not None:
        for op in ops:
            log.changed(op)


def note_removed(op: Operation) -> None:
    """Report an op about to be erased or detached from its block."""
    if (log := _CHANGES.get()) is not None:
        log.removed(op)


def note_block_changed(block: Block) -> None:
    """Report that anything in ``block`` (and the blocks nested in it) may have changed:
    its ops are compared with their stamps."""
    if (log := _CHANGES.get()) is not None:
        log.blocks[block] = None


def change_listener() -> PatternRewriterListener:
    """A listener for a pass's rewriters (``PatternRewriteWalker(listener=...)``,
    ``PatternRewriter.extend_from_listener``) that reports what they insert, modify and
    erase."""
    log = _CHANGES.get()
    return _INERT if log is None else log.listener


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


class handle_warnings:
    """Route ``warn`` calls made inside the block to ``handler``. A class, not a
    generator: the pass manager enters one per pass."""

    def __init__(self, handler: WarningHandler) -> None:
        self.handler = handler

    def __enter__(self) -> None:
        self.token = _HANDLER.set(self.handler)

    def __exit__(self, *exc: object) -> None:
        _HANDLER.reset(self.token)


@contextmanager
def collect_warnings() -> Iterator[list[PassWarning]]:
    """Capture the warnings of the block in a list instead of printing them."""
    found: list[PassWarning] = []
    with handle_warnings(found.append):
        yield found
