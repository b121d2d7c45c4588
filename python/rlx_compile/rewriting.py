"""A greedy pattern driver that visits only the ops a pattern can match.

``apply_greedily(region, patterns)`` rewrites exactly as xDSL's
``PatternRewriteWalker(GreedyRewritePatternApplier(patterns, dce_enabled=False))``
does -- the same worklist, filled and refilled in the same order, the same ops pushed on
every insertion, modification, replacement and removal, a whole new walk after a walk
that changed something -- but an op whose kind no pattern is rooted at never enters the
worklist. Each pattern names its root kinds in ``roots`` (as ``FusionPattern`` does;
without it, every op); a pattern must do nothing on an op of another kind, so leaving
such ops out changes no rewrite. xDSL's walker tries every pattern on every op of the
module, twice when anything changed, with a rewriter reset per op.

Patterns whose match reads no further than a known distance up the producers of the op
(``reach``) also let the walks after the first skip what cannot match: see
``apply_greedily``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property

from xdsl.ir import ErasedSSAValue, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriterListener, RewritePattern
from xdsl.rewriter import InsertPoint


def roots_of(pattern: RewritePattern) -> tuple[type[Operation], ...]:
    """The op kinds ``pattern`` can rewrite (every kind unless it says)."""
    return getattr(pattern, "roots", (Operation,))


Roots = tuple[tuple[type[Operation], ...], ...]

_ROOTED: dict[Roots, dict[type[Operation], tuple[int, ...]]] = {}


class RootedAt:
    """Which of a sequence of patterns' ``roots`` (by index) an op class falls under,
    asked with issubclass once per class for every driver of the same roots (a pass
    makes its patterns, and a driver, each time it runs)."""

    def __init__(self, roots: Roots):
        self.roots = roots
        self.known = _ROOTED.setdefault(roots, {})

    def __call__(self, kind: type[Operation]) -> tuple[int, ...]:
        found = self.known.get(kind)
        if found is None:
            found = tuple(i for i, r in enumerate(self.roots) if issubclass(kind, r))
            self.known[kind] = found
        return found


class _WalkRewriter(PatternRewriter):
    """A ``PatternRewriter`` moved from op to op by a walk: ``reset`` sets what xDSL's
    walker sets per op, and the insertion point before the op is made only when a
    pattern asks for it (most ops match nothing, and making one checks the op's block)."""

    _point: InsertPoint | None

    def reset(self, op: Operation) -> None:
        self.has_done_action = False
        self._current_operation = op
        self._point = None
        self._name_hint = None

    @property
    def insertion_point(self) -> InsertPoint:
        point = self._point
        if point is None:
            assert self._current_operation is not None
            point = self._point = InsertPoint.before(self._current_operation)
        return point

    @insertion_point.setter
    def insertion_point(self, point: InsertPoint) -> None:
        self._point = point


class _Worklist:
    """xDSL's ``Worklist``: a stack that holds an op at most once (a push of an op it holds
    leaves it where it is), with removal in place. Ops are indexed by ``id`` (an op's
    ``__hash__`` is a Python call): an op leaves the index before it can be freed."""

    def __init__(self) -> None:
        self._stack: list[Operation | None] = []
        self._index: dict[int, int] = {}

    def fill(self, ops: Iterable[Operation]) -> None:
        """Push ``ops``, none of which it holds, in order."""
        stack, index = self._stack, self._index
        for op in ops:
            index[id(op)] = len(stack)
            stack.append(op)

    def push(self, op: Operation) -> None:
        if id(op) not in self._index:
            self._index[id(op)] = len(self._stack)
            self._stack.append(op)

    def pop(self) -> Operation | None:
        """The last op pushed and still held, or None when empty."""
        stack = self._stack
        while stack:
            op = stack.pop()
            if op is not None:
                del self._index[id(op)]
                return op
        return None

    def remove(self, op: Operation) -> None:
        at = self._index.pop(id(op), None)
        if at is not None:
            self._stack[at] = None


class _Driver:
    def __init__(
        self,
        patterns: Sequence[RewritePattern],
        listener: PatternRewriterListener,
        reach: int | None,
    ):
        self.patterns = list(patterns)
        self.rooted_at = RootedAt(tuple(roots_of(p) for p in patterns))
        self.by_kind: dict[type[Operation], tuple[RewritePattern, ...]] = {}
        self.worklist = _Worklist()
        self.reach = reach
        self.touched: dict[Operation, None] = {}
        """Ops changed during the current walk, or whose results gained or lost a user."""
        self.outer = listener

    @cached_property
    def listener(self) -> PatternRewriterListener:
        """The outer listener's handlers, then the driver's (made for a first match: most
        drivers of a pass that lowers what a module may not hold never make one)."""
        outer = self.outer
        return PatternRewriterListener(
            operation_insertion_handler=[*outer.operation_insertion_handler, self.changed],
            operation_removal_handler=[*outer.operation_removal_handler, self.removed],
            operation_modification_handler=[*outer.operation_modification_handler, self.changed],
            operation_replacement_handler=[
                *outer.operation_replacement_handler,
                self.replaced,
            ],
            block_creation_handler=outer.block_creation_handler,
        )

    def patterns_for(self, op: Operation) -> tuple[RewritePattern, ...]:
        kind = type(op)
        found = self.by_kind.get(kind)
        if found is None:
            found = tuple([self.patterns[i] for i in self.rooted_at(kind)])
            self.by_kind[kind] = found
        return found

    def push(self, op: Operation) -> None:
        if self.patterns_for(op):
            self.worklist.push(op)

    def touch(self, values: Iterable[SSAValue | None]) -> None:
        """The producers of ``values``, whose results gain or lose a user."""
        if self.reach is not None:
            for value in values:
                if value is not None and isinstance(owner := value.owner, Operation):
                    self.touched[owner] = None

    # -- xDSL's walker's listener, plus what changed ---------------------------------
    def changed(self, op: Operation) -> None:  # inserted or modified
        self.push(op)
        if self.reach is not None:
            self.touched[op] = None
            self.touch(op.operands)

    def removed(self, op: Operation) -> None:
        # The producers of single-use operands (this op is their last user) are pushed,
        # and the removed op (with its body) leaves the worklist.
        for value in op.operands:
            if (
                value.has_one_use()
                and not isinstance(value, ErasedSSAValue)
                and isinstance(owner := value.owner, Operation)
            ):
                self.push(owner)
        self.touch(op.operands)
        if op.regions:
            for nested in op.walk():
                self.worklist.remove(nested)
        else:
            self.worklist.remove(op)

    def replaced(self, op: Operation, new_results: Sequence[SSAValue | None]) -> None:
        for result in op.results:
            for use in result.uses:
                self.push(use.operation)
        self.touch(new_results)

    # -- walks -----------------------------------------------------------------------
    def stale(self) -> set[int]:
        """The ops (by ``id``: they outlive the next walk until it rewrites something)
        within ``reach`` users of what the last walk touched."""
        level = [op for op in self.touched if op.parent is not None]
        found = {id(op) for op in level}
        assert self.reach is not None
        for _ in range(self.reach):
            level = [
                use.operation
                for op in level
                for result in op.results
                for use in result.uses
                if id(use.operation) not in found
            ]
            found.update(id(op) for op in level)
        return found

    def rooted_ops(self, region: Region, found: list[Operation]) -> list[Operation]:
        """``found`` with the ops of ``region.walk(reverse=True, region_first=True)`` that
        a pattern is rooted at, in that order (without a generator per op and region)."""
        rooted_at = self.rooted_at
        known = rooted_at.known
        block = region.last_block
        while block is not None:
            op = block.last_op
            while op is not None:
                if op.regions:
                    for nested in reversed(op.regions):
                        self.rooted_ops(nested, found)
                kind = type(op)
                if known.get(kind) or (kind not in known and rooted_at(kind)):
                    found.append(op)
                op = op.prev_op
            block = block.prev_block
        return found

    def walk(self, region: Region, stale: set[int] | None) -> bool:
        """One walk: the region's ops, then whatever the rewrites push. With ``stale``,
        the ops outside it are passed over until something is rewritten."""
        self.touched = {}
        worklist = self.worklist
        # A stack: pushed last to first, popped in walk order.
        worklist.fill(self.rooted_ops(region, []))
        changed = False
        rewriter: _WalkRewriter | None = None
        while (op := worklist.pop()) is not None:
            if stale is not None and not changed and id(op) not in stale:
                continue  # nothing it reads changed since it last failed to match
            if rewriter is None:
                rewriter = _WalkRewriter(op)
                rewriter.extend_from_listener(self.listener)
            rewriter.reset(op)
            try:
                for pattern in self.patterns_for(op):
                    pattern.match_and_rewrite(op, rewriter)
                    if rewriter.has_done_action:
                        break
            except Exception as err:
                op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
            if rewriter.has_done_action:
                changed = True
                if self.reach is not None and op.parent is not None:
                    self.touched[op] = None  # acted on, yet kept: it may match again
        return changed


def apply_greedily(
    region: Region,
    patterns: Sequence[RewritePattern],
    listener: PatternRewriterListener | None = None,
    *,
    reach: int | None = None,
) -> bool:
    """Apply ``patterns`` in ``region`` to a fixpoint, as xDSL's walker with a greedy
    applier and no implicit dce does; ``listener`` hears every change. Returns whether
    anything changed.

    ``reach``: how far up its producers any pattern's match reads -- the op, its operands'
    producers (1), theirs (2)... with the users of their results. Then a walk after the
    first passes over an op until it has rewritten something unless a producer within
    ``reach`` (or the op) changed, or its results gained or lost a user, during the walk
    before: the op did not match when last tried, and nothing it reads changed since.
    """
    driver = _Driver(patterns, listener or PatternRewriterListener(), reach)
    if not driver.walk(region, None):
        return False
    while driver.walk(region, None if reach is None else driver.stale()):
        pass
    return True
