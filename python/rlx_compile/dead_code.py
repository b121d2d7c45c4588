"""Dead ops of a region whose regions hold one block each (``dce_single_blocks``): the
``dce`` pass's work where xDSL's region liveness is not needed.

A graph whose regions (its body and those nested in it) hold one block each takes one
backward sweep: every user of an op comes after it in its block, or inside an op after
it, and an op's regions are swept before the op (as region liveness does), so its
liveness is known when the op is reached. That is the fixpoint region liveness reaches,
without its second confirming sweep or the effects query for ops a live op reads. The
dead ops then go as region liveness erases them: each block backwards, the regions of a
live op when it is reached.

The build compiles this module with mypyc (``rlx_compile._compiled``), which a pass
class cannot be part of: the ``dce`` pass is ``transforms.dce``.
"""

from __future__ import annotations

from xdsl.dialects.builtin import UnregisteredOp
from xdsl.ir import Block, Operation, Region
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.traits import MemoryEffect, NoMemoryEffect
from xdsl.transforms.dead_code_elimination import would_be_trivially_dead

_DEAD_KIND: dict[type[Operation], bool] = {}
"""``would_be_trivially_dead`` of the op classes whose answer is the class's: traits
belong to the class, and so do the effects of one without effect traits or whose effect
traits all say it has none (a ``RecursiveMemoryEffect`` op has those of its body)."""


def _effects_of(trait: type[MemoryEffect]) -> type:
    """The class whose ``get_effects`` an effect trait's is."""
    return next(c for c in trait.__mro__ if "get_effects" in vars(c))


def would_be_dead(op: Operation) -> bool:
    """``would_be_trivially_dead``, asked once per class where the answer is the class's."""
    kind = type(op)
    dead = _DEAD_KIND.get(kind)
    if dead is None:
        dead = would_be_trivially_dead(op)
        if not isinstance(op, UnregisteredOp) and all(
            _effects_of(type(t)) is NoMemoryEffect for t in op.traits if isinstance(t, MemoryEffect)
        ):
            _DEAD_KIND[kind] = dead
    return dead


def dce_single_blocks(region: Region, listener: PatternRewriterListener) -> bool:
    """``region_dce`` for a region whose regions (itself included) hold at most one block
    each, erasing the same ops in the same order, each reported to ``listener``; False,
    untouched, for any other region."""
    block = region.first_block
    if block is None or block is not region.last_block:
        return False
    live: set[int] = set()  # by id (an op's __hash__ is a Python call); none is freed
    if not _sweep(block, live):
        return False
    _erase_dead(block, live, listener)
    return True


def _sweep(block: Block, live: set[int]) -> bool:
    """Add the live ops of ``block`` and of its regions to ``live``; False when a region
    in it holds more than one block."""
    op = block.last_op
    while op is not None:
        for region in op.regions:
            nested = region.first_block
            if nested is not None and (nested is not region.last_block or not _sweep(nested, live)):
                return False
        if not would_be_dead(op) or _read_by_live(op, live):
            live.add(id(op))
        op = op.prev_op
    return True


def _read_by_live(op: Operation, live: set[int]) -> bool:
    for result in op.results:
        use = result.first_use
        while use is not None:  # the use list, without an iterator
            if id(use._operation) in live:
                return True
            use = use._next_use
    return False


def _erase_dead(block: Block, live: set[int], listener: PatternRewriterListener) -> None:
    op = block.last_op
    while op is not None:
        prev = op.prev_op
        if id(op) not in live:
            listener.handle_operation_removal(op)
            block.erase_op(op, safe_erase=False)
        else:
            for region in op.regions:
                if (nested := region.first_block) is not None:
                    _erase_dead(nested, live, listener)
        op = prev
