"""Helpers shared by passes that only make sense on MIR graphs."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from rlx_compile.ir import func_graphs


def mir_graphs(module: ModuleOp, pass_name: str) -> list[func.FuncOp]:
    """The MIR graph functions of a module; HIR or LIR content is a clear error."""
    for op in module.walk():
        dialect = op.dialect_name()
        if dialect == "hir":
            raise PassFailedException(
                f"{pass_name} runs on MIR: lower the HIR first (lower-hir-to-mir)"
            )
        if dialect == "lir":
            raise PassFailedException(f"{pass_name} runs on MIR, before plan-memory")
    return func_graphs(module)


def erase_dead(candidates: list[Operation]) -> None:
    """Erase the given ops once unused, then the ops they alone kept alive among the
    candidates (repeatedly); leaves and ops outside the list are never touched."""
    pending = list(candidates)
    alive = {id(op) for op in pending}
    changed = True
    while changed:
        changed = False
        for op in list(pending):
            if (
                id(op) in alive
                and op.parent is not None
                and all(r.first_use is None for r in op.results)
            ):
                block = op.parent_block()
                assert block is not None
                block.erase_op(op)
                alive.discard(id(op))
                pending.remove(op)
                changed = True
