"""The low-level steps of building and cloning ops, done as xDSL does them but without its
generic bookkeeping, for the RLX dialects' fast paths (``ShapedOp._build``, ``clone``).

Every function here sets the same fields to the same values as the xDSL code it stands
for (named in its docstring): the IR it makes is indistinguishable from xDSL's, use
lists in the same order included. What they leave out is what xDSL computes for the
general case (variadic groups, segment sizes, successors, per-call definition lookups).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, TypeVar, cast

from xdsl.ir import (
    Attribute,
    Block,
    Operation,
    OpResult,
    Region,
    SSAValue,
    SSAValues,
    Use,
)
from xdsl.irdl import (
    AfterVariadicSingleAccessor,
    BaseAccessor,
    BeforeVariadicSingleAccessor,
    IRDLOperation,
    OptionalDef,
    SameOptionalAccessor,
    UniqueVariadicAccessor,
    VarIRConstruct,
)

OpT = TypeVar("OpT", bound=Operation)

_new = object.__new__
_item = tuple.__getitem__  # SSAValues overrides __getitem__ in Python: index the tuple itself


# ---------------------------------------------------------------------------------
# Per-class facts
# ---------------------------------------------------------------------------------


class OpClassInfo:
    """What building an op of one class needs beyond its fields, computed once."""

    __slots__ = ("fill_attributes", "fill_properties", "own_post_init")

    def __init__(self, op_type: type[Operation]):
        self.fill_properties: tuple[tuple[str, Attribute], ...] = ()
        self.fill_attributes: tuple[tuple[str, Attribute], ...] = ()
        post_init = op_type.__post_init__
        if issubclass(op_type, IRDLOperation) and post_init is IRDLOperation.__post_init__:
            op_def = op_type.get_irdl_definition()
            self.fill_properties = _required_defaults(op_def.properties)
            self.fill_attributes = _required_defaults(op_def.attributes)
        name = getattr(op_type, "name", None)
        self.own_post_init = (
            post_init is not IRDLOperation.__post_init__
            or op_type.__new__ is not object.__new__
            or not isinstance(name, str)
            or not name
        )
        """Whether ``finish_init`` must call the class's own ``__post_init__`` (or its
        asserts would fail, or ``__new__`` is its own: the caller's business)."""


def _required_defaults(defs: dict[str, Any]) -> tuple[tuple[str, Attribute], ...]:
    """The (name, default) pairs IRDL's ``__post_init__`` fills in when absent."""
    return tuple(
        (name, d.default_value)
        for name, d in defs.items()
        if not isinstance(d, OptionalDef) and d.default_value is not None
    )


_INFO: dict[type[Operation], OpClassInfo] = {}


def op_class_info(op_type: type[Operation]) -> OpClassInfo:
    info = _INFO.get(op_type)
    if info is None:
        info = _INFO[op_type] = OpClassInfo(op_type)
    return info


# ---------------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------------


def link_operands(op: Operation, values: Sequence[SSAValue]) -> None:
    """``op.operands = values`` for an op that has none yet: a use per operand, added to
    its value's use list (at its head, as ``add_use`` does)."""
    uses: list[Use] = []
    for i, value in enumerate(values):
        use = _new(Use)
        use._operation = op
        use._index = i
        use._prev_use = None
        first = use._next_use = value.first_use
        if first is not None:
            first._prev_use = use
        value.first_use = use
        uses.append(use)
    op._operands = SSAValues(values)
    op._operand_uses = tuple(uses)


def new_results(op: Operation, types: Sequence[Attribute]) -> SSAValues[OpResult]:
    """The results ``Operation.__init__`` makes for ``types``."""
    out: list[OpResult] = []
    for i, t in enumerate(types):
        r = _new(OpResult)
        r._type = t
        r.op = op
        r.index = i
        out.append(r)
    return SSAValues(out)


_NO_VALUES: SSAValues[Any] = SSAValues()


def init_fields(
    op: Operation,
    results: SSAValues[OpResult],
    properties: dict[str, Attribute],
    attributes: dict[str, Attribute],
    location: Attribute,
) -> None:
    """The rest of ``Operation.__init__`` for an op without successors or regions (its
    operands are linked apart), then ``__post_init__``: ``properties`` and
    ``attributes`` are the op's own dicts from now on."""
    op.results = results
    op.properties = properties
    op.attributes = attributes
    op.location = location  # type: ignore[assignment]
    op._successors = ()
    op._successor_uses = ()
    op.regions = ()
    info = _INFO.get(type(op)) or op_class_info(type(op))
    if info.own_post_init or info.fill_properties or info.fill_attributes:
        finish_init(op)


def finish_init(op: Operation) -> None:
    """``op.__post_init__()``: IRDL's default properties and attributes filled in."""
    info = _INFO.get(type(op)) or op_class_info(type(op))
    if info.own_post_init:
        op.__post_init__()
        return
    for name, value in info.fill_properties:
        if name not in op.properties:
            op.properties[name] = value
    for name, value in info.fill_attributes:
        if name not in op.attributes:
            op.attributes[name] = value


_VALID_NAMES: dict[str, str] = {}
_VALID_NAMES_MAX = 1 << 16


def append_unchecked(block: Block, op: Operation) -> None:
    """``block.add_op(op)``'s links, without its checks: ``op`` is in no block, links to
    no op, and holds no region ``block`` is in (what building or moving a whole graph op
    by op knows)."""
    last = block._last_op
    op.parent = block
    if last is None:  # (a fresh op's links are the class's Nones, as add_op leaves them)
        block._first_op = op
    else:
        op._prev_op = last
        op._next_op = None
        last._next_op = op
    block._last_op = op


def unlink_unchecked(op: Operation) -> None:
    """``op.detach()``'s links, without its checks: ``op`` is in a block."""
    source = op.parent
    assert source is not None
    before, after = op._prev_op, op._next_op
    if before is None:
        source._first_op = after
    else:
        before._next_op = after
    if after is None:
        source._last_op = before
    else:
        after._prev_op = before
    op.parent = None
    op._prev_op = op._next_op = None


def copy_name(source: SSAValue, target: SSAValue) -> None:
    """``target.name_hint = source.name_hint``: the setter's validation and suffix
    stripping (a clone of ``%x_1_2``, kept as ``x_1``, is ``%x``), remembered per name."""
    name = source._name
    target._name = None if name is None else _VALID_NAMES.get(name) or _valid_name(name)


def _valid_name(name: str) -> str:
    valid = SSAValue.extract_valid_name(name)  # raises as the setter does
    if len(_VALID_NAMES) >= _VALID_NAMES_MAX:
        _VALID_NAMES.clear()
    _VALID_NAMES[name] = valid
    return valid


def walk_list(op: Operation) -> list[Operation]:
    """``list(op.walk())``: the op, then the ops of its regions, depth first, in order
    (without a generator per op)."""
    out = [op]
    if op.regions:
        _walk_into(op, out)
    return out


def op_kinds(op: Operation) -> set[type[Operation]]:
    """The classes of ``op`` and of every op nested in it: what kinds of op it holds."""
    return {type(o) for o in walk_list(op)}


def walk_block_list(block: Block) -> list[Operation]:
    """``list(block.walk())``: the block's ops, each followed by the ops of its regions."""
    out: list[Operation] = []
    _walk_block(block, out)
    return out


def block_ops(block: Block) -> list[Operation]:
    """``list(block.ops)``, following the links (xDSL's iterator is a call per op)."""
    out: list[Operation] = []
    op = block._first_op
    while op is not None:
        out.append(op)
        op = op._next_op
    return out


def _walk_into(op: Operation, out: list[Operation]) -> None:
    for region in op.regions:
        block = region._first_block
        while block is not None:
            _walk_block(block, out)
            block = block._next_block


def _walk_block(block: Block, out: list[Operation]) -> None:
    nested = block._first_op
    while nested is not None:
        out.append(nested)
        if nested.regions:
            _walk_into(nested, out)
        nested = nested._next_op


# ---------------------------------------------------------------------------------
# Cloning
# ---------------------------------------------------------------------------------


def clone_shell(
    op: Operation, value_mapper: dict[SSAValue, SSAValue], clone_name_hints: bool
) -> Operation:
    """``op.clone_without_regions(value_mapper, clone_operands=False)`` for an op without
    successors: its class, results (recorded in ``value_mapper``), properties,
    attributes and location, its regions empty, no operands. (``new_results``,
    ``copy_name`` and ``finish_init`` written out: this runs for every op of every copy
    of a module.)"""
    op_type = type(op)
    new = _new(op_type)
    new._operands = _NO_VALUES
    new._operand_uses = ()
    results: list[OpResult] = []
    for i, old in enumerate(op.results):
        fresh = _new(OpResult)
        fresh._type = old._type
        fresh.op = new
        fresh.index = i
        value_mapper[old] = fresh
        if clone_name_hints:
            name = old._name
            valid = None if name is None else _VALID_NAMES.get(name)
            fresh._name = valid if valid is not None or name is None else _valid_name(name)
        results.append(fresh)
    new.results = SSAValues(results)
    new.properties = op.properties.copy()
    new.attributes = op.attributes.copy()
    new.location = op.location
    new._successors = ()
    new._successor_uses = ()
    new.regions = ()
    for _ in op.regions:
        new.add_region(Region())
    info = _INFO.get(op_type) or op_class_info(op_type)
    if info.own_post_init or info.fill_properties or info.fill_attributes:
        finish_init(new)
    return new


FAST_SHELLS: set[Callable[..., Operation]] = set()
"""The ``clone_without_regions`` methods that are ``clone_shell`` (with the operands
mapped when asked) for an op without successors: ``Cloner`` calls ``clone_shell``
itself for ops whose class has one of them."""


class Cloner:
    """``Operation.clone`` of xDSL, one op at a time in walk order: each op through its
    class's ``clone_without_regions`` (the fast one of ``ShapedOp``), its regions' blocks
    rebuilt here, and its operands linked as it is made when they are all cloned
    already. xDSL links every op's operands after the whole clone, in walk order, so
    that a value defined later in the walk maps too: once an op's operands are not all
    mapped, it and every later op wait for ``finish`` (which links them in walk order),
    so each value's use list comes out in xDSL's order."""

    def __init__(
        self,
        value_mapper: dict[SSAValue, SSAValue],
        block_mapper: dict[Block, Block],
        *,
        clone_name_hints: bool,
        clone_operands: bool,
        pairs: list[tuple[Operation, Operation]] | None = None,
    ):
        self.values = value_mapper
        self.blocks = block_mapper
        self.name_hints = clone_name_hints
        self.link = clone_operands
        self.waiting: list[tuple[Operation, Sequence[SSAValue]]] | None = None
        self.pairs = pairs
        """Where each (op, clone) pair goes, in walk order, if given."""

    def clone(self, op: Operation) -> Operation:
        if type(op).clone_without_regions in FAST_SHELLS and not op._successors:
            new = clone_shell(op, self.values, self.name_hints)  # what that method does
        else:
            new = op.clone_without_regions(
                self.values, self.blocks, clone_name_hints=self.name_hints, clone_operands=False
            )
        if self.pairs is not None:
            self.pairs.append((op, new))
        if self.link:
            operands = op._operands
            if self.waiting is None:
                get = self.values.get
                mapped: list[SSAValue] = []
                for value in operands:
                    fresh = get(value)
                    if fresh is None:
                        self.waiting = [(new, operands)]
                        break
                    mapped.append(fresh)
                else:
                    link_operands(new, mapped)
            else:
                self.waiting.append((new, operands))
        for region, new_region in zip(op.regions, new.regions, strict=True):
            self.clone_region(region, new_region)
        return new

    def clone_region(self, region: Region, dest: Region) -> None:
        """``region.clone_into(dest)`` for an empty ``dest``."""
        blocks = list(region.blocks)
        new_blocks = [Block() for _ in blocks]
        for block, new_block in zip(blocks, new_blocks, strict=True):
            self.blocks[block] = new_block
        dest.insert_block(new_blocks, 0)
        for block, new_block in zip(blocks, new_blocks, strict=True):
            for i, arg in enumerate(block.args):
                new_arg = new_block.insert_arg(arg.type, i, arg.location)
                self.values[arg] = new_arg
                if self.name_hints:
                    copy_name(arg, new_arg)
            for op in block.ops:
                append_unchecked(new_block, self.clone(op))  # a fresh op in a fresh block

    def finish(self) -> None:
        if self.waiting is not None:
            get = self.values.get
            for new, operands in self.waiting:
                link_operands(new, [get(v, v) for v in operands])
            self.waiting = None


def clone_op(
    op: OpT,
    value_mapper: dict[SSAValue, SSAValue] | None = None,
    block_mapper: dict[Block, Block] | None = None,
    *,
    clone_name_hints: bool = True,
    clone_operands: bool = True,
) -> OpT:
    """``op.clone(...)``: the same IR as xDSL's ``Operation.clone``, made faster (see
    ``Cloner``)."""
    cloner = Cloner(
        {} if value_mapper is None else value_mapper,
        {} if block_mapper is None else block_mapper,
        clone_name_hints=clone_name_hints,
        clone_operands=clone_operands,
    )
    new = cloner.clone(op)
    cloner.finish()
    return cast(OpT, new)


# ---------------------------------------------------------------------------------
# Named operand, result and region accessors
# ---------------------------------------------------------------------------------


class _OperandAt(BeforeVariadicSingleAccessor):
    def __get__(self, obj: Operation, objtype: object = None) -> SSAValue:
        return _item(obj._operands, self.idx)


class _ResultAt(BeforeVariadicSingleAccessor):
    def __get__(self, obj: Operation, objtype: object = None) -> OpResult:
        return _item(obj.results, self.idx)


def _direct(kind: type[BaseAccessor], field: str) -> type[BaseAccessor]:
    """``kind`` indexing ``obj.<field>`` (the op's own tuple) rather than the wrapper view
    IRDL builds per access: the same elements, slices as ``SSAValues`` as before."""
    get = attrgetter(field)

    def __get__(self: BaseAccessor, obj: Operation, objtype: object = None) -> Any:
        return self.index(get(obj))

    return type(f"Direct{kind.__name__}", (kind,), {"__get__": __get__})


_FAST: dict[tuple[type[object], VarIRConstruct], type[BaseAccessor]] = {
    (BeforeVariadicSingleAccessor, VarIRConstruct.OPERAND): _OperandAt,
    (BeforeVariadicSingleAccessor, VarIRConstruct.RESULT): _ResultAt,
}
for _kind in (
    BeforeVariadicSingleAccessor,
    AfterVariadicSingleAccessor,
    SameOptionalAccessor,
    UniqueVariadicAccessor,
):
    for _construct, _field in (
        (VarIRConstruct.OPERAND, "_operands"),
        (VarIRConstruct.RESULT, "results"),
        (VarIRConstruct.REGION, "regions"),
    ):
        _FAST.setdefault((_kind, _construct), _direct(_kind, _field))


def fast_accessors(op_types: Sequence[type[Operation]]) -> None:
    """Give the named operands, results and regions of ``op_types`` (each an
    ``irdl_op_definition`` class) accessors that read them in one call: IRDL's go through
    five (the construct's wrapper view, ``index``, the wrapper's and ``SSAValues``'
    ``__getitem__``), and passes read ``op.lhs`` and the like for every op they visit.
    The accessors stay IRDL's classes (the assembly format asks them to ``index``)."""
    for op_type in op_types:
        for name, value in list(vars(op_type).items()):
            if not isinstance(value, BaseAccessor):
                continue
            fast = _FAST.get((type(value), value.construct))
            if fast is not None:
                values = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
                setattr(op_type, name, fast(**values))
