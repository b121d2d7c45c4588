"""IRDL's signature check, specialised per op class for plain ops.

xDSL's generic ``OpDef.verify`` interprets an op's definition on every call (variadic
group sizes, segment attributes, range constraints, accessor lookups): about 60% of an
op verify here. For an op of single operands and results, no regions, successors or
definition options, whose operand and result constraints are base-class constraints
(optionally bound to a type variable) and whose property and attribute constraints use
no variables, the same checks reduce to a few ``isinstance`` tests, equalities and the
property constraints themselves. So do they for an op whose only option is operand
segment sizes as a property, over single and optional operands of base-class
constraints (the recurrent layers, the integer matmuls): the sizes are read once per
distinct payload. ``use_signature_check`` makes such a class's
``OpDef.verify`` that reduction.

It is sound by construction: the reduction only accepts what the generic check accepts,
and anything it does not accept goes to the generic check, which decides (and gives its
own error message). ``generic_signature_checks`` turns the reduction off
(``--verify-each=full``).

The traits an op's definition verifies run after its signature, as in ``OpDef.verify``.
Those of the builtin and func ops that every module holds (``NoTerminator``,
``SymbolTable``, the symbol interfaces, ``IsTerminator``, ``HasParent``, ``ReturnLike``)
are written out here (``verify_trait``), with their verdicts and messages: xDSL's own
are Python that, after a collection, is read from memory for every module verified.
``IsolatedFromAbove`` is ``verify_isolated``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from operator import attrgetter
from typing import Any, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    ArrayOfConstraint,
    DenseArrayBase,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    i32,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, OpTraits, Region
from xdsl.irdl import (
    AnyAttr,
    AttrConstraint,
    AttrSizedOperandSegments,
    BaseAttr,
    EqAttrConstraint,
    EqIntConstraint,
    IRDLOperation,
    OpDef,
    OptAttributeDef,
    OptionalDef,
    OptPropertyDef,
    ParamAttrConstraint,
    RangeLengthConstraint,
    RangeOf,
    RegionDef,
    SingleBlockRegionDef,
    VarConstraint,
    VariadicDef,
    VerificationContext,
)
from xdsl.irdl.operations import AttributeDef, OperandOrResultDef, PropertyDef
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    OptionalSymbolOpInterface,
    OpTrait,
    ReturnLike,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects.construct import block_ops

_GENERIC: ContextVar[bool] = ContextVar("rlx_generic_signature_checks", default=False)

ValueCheck = tuple[type[Attribute], str | None]
"""A constraint on an operand's or result's type: its base class, and the type variable
it binds (values binding one variable have equal types), if any."""


def operand_check(d: OperandOrResultDef) -> ValueCheck | None:
    """What the generic check asks of each value of ``d`` (one value, or each of a
    variadic group's), or None for a constraint it does not reduce."""
    constr = getattr(d, "constr", None)
    if isinstance(d, VariadicDef):
        inner = constr
    elif isinstance(constr, RangeLengthConstraint):
        length, inner = constr.length, constr.constraint
        if not (isinstance(length, EqIntConstraint) and length.value == 1):
            return None
    else:
        return None
    if not isinstance(inner, RangeOf):
        return None
    c, var = inner.constr, None
    if isinstance(c, VarConstraint):
        var = c.name
        c = c.constraint
    if type(c) is AnyAttr:
        return (Attribute, var)
    return (c.attr, var) if isinstance(c, BaseAttr) else None


Group = tuple[list[ValueCheck], ValueCheck | None, bool, list[ValueCheck]]
"""Operand or result definitions with at most one variadic: the checks of the single
values before it, its check (None: there is none), whether it is optional (zero or one
value), the checks of the single values after it."""


def _group(defs: Sequence[tuple[str, OperandOrResultDef]]) -> Group | None:
    checks = [operand_check(d) for _, d in defs]
    variadic = [i for i, (_, d) in enumerate(defs) if isinstance(d, VariadicDef)]
    if None in checks or len(variadic) > 1:
        return None
    values = [c for c in checks if c is not None]
    if not variadic:
        return values, None, False, []
    at = variadic[0]
    return values[:at], values[at], isinstance(defs[at][1], OptionalDef), values[at + 1 :]


SEGMENT_SIZES = AttrSizedOperandSegments.attribute_name


def segmented_operands(op_def: OpDef) -> list[tuple[type[Attribute], bool]] | None:
    """For a definition whose only option is operand segment sizes kept as a property,
    over single and optional operands each of one base class (no type variable): each
    operand definition's class and whether it is optional. None for any other."""
    options = op_def.options
    if len(options) != 1 or type(options[0]) is not AttrSizedOperandSegments:
        return None
    if not options[0].as_property:
        return None
    out: list[tuple[type[Attribute], bool]] = []
    for _, d in op_def.operands:
        check = operand_check(d)
        optional = isinstance(d, OptionalDef)
        if check is None or check[1] is not None or (isinstance(d, VariadicDef) and not optional):
            return None
        out.append((check[0], optional))
    return out


_SIZES: dict[bytes, tuple[int, ...]] = {}


def segment_sizes(attr: Attribute | None) -> tuple[int, ...] | None:
    """The sizes a segment-sizes attribute holds (a DenseArrayBase of i32), decoded once
    per distinct payload; None for anything else."""
    if type(attr) is not DenseArrayBase or attr.elt_type != i32:
        return None
    raw = attr.data.data
    sizes = _SIZES.get(raw)
    if sizes is None:
        sizes = tuple(cast(DenseArrayBase[IntegerType], attr).get_values())
        if len(_SIZES) < 4096:  # a few layouts per op class; parsed IR may hold any
            _SIZES[raw] = sizes
    return sizes


def _fit(values: Sequence[Any], group: Group, bound: dict[str, Attribute]) -> bool:
    """Whether ``values`` are as many as ``group`` takes, each of its check's class, those
    binding one type variable (in ``bound``, shared by operands and results) of one type."""
    value_checks = _checks_of(values, group)
    if value_checks is None:
        return False
    for value, (base, var) in zip(values, value_checks, strict=True):
        t = value._type
        if not isinstance(t, base) or (var is not None and bound.setdefault(var, t) != t):
            return False
    return True


def _uniform(group: Group) -> tuple[type[Attribute], int, int | None] | None:
    """For a group whose values all have one base class and bind no type variable (the
    dialects' tensor operands and results): that class, and the least and most number
    of values (None: any). None for any other group."""
    before, variadic, optional, after = group
    checks = [*before, *after, *([variadic] if variadic is not None else [])]
    bases = {base for base, _ in checks}
    if len(bases) > 1 or any(var is not None for _, var in checks):
        return None
    base = bases.pop() if bases else Attribute
    fixed = len(before) + len(after)
    return base, fixed, fixed if variadic is None else fixed + 1 if optional else None


def _checks_of(values: Sequence[Any], group: Group) -> Iterable[ValueCheck] | None:
    """The check of each value, by position; None when their number does not fit."""
    before, variadic, optional, after = group
    extra = len(values) - len(before) - len(after)
    if variadic is None:
        return before if extra == 0 else None
    if extra < 0 or (optional and extra > 1):
        return None
    return [*before, *[variadic] * extra, *after]


Test = Callable[[Attribute], bool]
"""What a constraint asks of an attribute, as a test: True only where the constraint's
``verify`` passes."""


def _always(attr: Attribute) -> bool:
    return True


_ANY, _IS_A, _EQUALS = 0, 1, 2


def _step(constr: AttrConstraint) -> tuple[int, Any] | None:
    """A parameter's constraint as (how, what): any value, an instance of a class, or a
    value equal to one; None for other constraints."""
    kind = type(constr)
    if kind is AnyAttr:
        return (_ANY, None)
    if kind is BaseAttr:
        return (_IS_A, cast(BaseAttr[Attribute], constr).attr)
    if kind is EqAttrConstraint:
        return (_EQUALS, cast(EqAttrConstraint[Attribute], constr).attr)
    return None


def _test(constr: AttrConstraint) -> Test | None:
    """``constr.verify`` as a test, for the constraints the dialects' properties use
    (None for others: their ``verify`` is called). ``verify`` runs several calls per
    parameter (``parameters`` rebuilt, a raise per mismatch); the test reads fields."""
    kind = type(constr)
    if kind is AnyAttr:
        return _always
    if kind is BaseAttr:
        base = cast(BaseAttr[Attribute], constr).attr
        return lambda attr: isinstance(attr, base)
    if kind is EqAttrConstraint:
        want = cast(EqAttrConstraint[Attribute], constr).attr
        return lambda attr: attr is want or attr == want
    if kind is SymbolNameConstraint:
        return lambda attr: isinstance(attr, StringAttr)
    if kind is ArrayOfConstraint:
        # An array of any length whose every element passes a test (a graph's manifest
        # names, a function's argument attributes): verify reads each through isa and a
        # raise per mismatch.
        elements = cast(ArrayOfConstraint[Attribute], constr).elem_range_constraint
        each = _test(elements.constr) if type(elements) is RangeOf else None
        if each is None:
            return None
        return lambda attr: isinstance(attr, ArrayAttr) and all(map(each, attr.data))
    if kind is ParamAttrConstraint:
        param = cast(ParamAttrConstraint[Any], constr)
        base_attr = param.base_attr
        names = [name for name, _ in base_attr.get_irdl_definition().parameters]
        steps = [_step(c) for c in param.param_constrs]
        if len(names) != len(steps) or not names or None in steps:
            return None
        plan = [
            (attrgetter(name), *cast(tuple[int, Any], step))
            for name, step in zip(names, steps, strict=True)
        ]

        def test(attr: Attribute) -> bool:
            if type(attr) is not base_attr:  # a subclass may have other parameters
                return False
            for get, how, want in plan:  # the parameters' tests, written out
                value = get(attr)
                if how is _IS_A:
                    if not isinstance(value, want):
                        return False
                elif how is _EQUALS and value is not want and value != want:
                    return False
            return True

        return test
    return None


NamedCheck = tuple[str, bool, Test | None, Callable[[Attribute, VerificationContext], None]]
"""A property's or attribute's name, whether it is optional, its constraint as a test
(if it has one) and its constraint's verify."""


def _named_checks(
    defs: Mapping[str, PropertyDef] | Mapping[str, AttributeDef], optional: type
) -> list[NamedCheck] | None:
    out: list[NamedCheck] = []
    for name, d in defs.items():
        if d.constr.variables():
            return None  # a variable shared with the operands: left to the generic check
        out.append((name, isinstance(d, optional), _test(d.constr), d.constr.verify))
    return out


def _region_blocks(op_def: OpDef) -> list[bool] | None:
    """For regions defined one each (not variadic or optional) with any entry arguments:
    whether each must hold a single block. None for other region definitions."""
    out: list[bool] = []
    for _, d in op_def.regions:
        entry = d.entry_args
        if (
            type(d) not in (RegionDef, SingleBlockRegionDef)
            or type(entry) is not RangeOf
            or type(entry.constr) is not AnyAttr
        ):
            return None
        out.append(type(d) is SingleBlockRegionDef)
    return out


def _signature_check(op_def: OpDef) -> Callable[[Operation], None] | None:
    """The specialised ``op_def.verify``, or None when the definition is not plain."""
    single_blocks = _region_blocks(op_def)
    segments = segmented_operands(op_def)
    if single_blocks is None or op_def.successors or (op_def.options and segments is None):
        return None
    region_count = len(single_blocks)
    operands = _group(op_def.operands) if segments is None else None
    results = _group(op_def.results)
    props = _named_checks(op_def.properties, OptPropertyDef)
    attrs = _named_checks(op_def.attributes, OptAttributeDef)
    if (operands is None and segments is None) or results is None or props is None or attrs is None:
        return None
    prop_names = frozenset([*op_def.properties, *([SEGMENT_SIZES] if segments else [])])

    def generic(op: Operation) -> None:
        OpDef.verify(op_def, op)

    def values_accepted(op: Operation) -> bool:
        bound: dict[str, Attribute] = {}
        return _fit(op._operands, cast(Group, operands), bound) and _fit(op.results, results, bound)

    uniform_operands = None if operands is None else _uniform(operands)
    uniform_results = _uniform(results)
    if uniform_operands is not None and uniform_results is not None:
        operand_base, operands_least, operands_most = uniform_operands
        result_base, results_least, results_most = uniform_results

        def uniform_values_accepted(op: Operation) -> bool:
            # values_accepted for groups of one base class and no type variables: each
            # count in range, each type of the class (written out: every op runs this)
            values = op._operands
            n = len(values)
            if n < operands_least or (operands_most is not None and n > operands_most):
                return False
            for value in values:
                if not isinstance(value._type, operand_base):
                    return False
            outs = op.results
            n = len(outs)
            if n < results_least or (results_most is not None and n > results_most):
                return False
            for result in outs:  # noqa: SIM110 (all() of a generator costs more)
                if not isinstance(result._type, result_base):
                    return False
            return True

        values_accepted = uniform_values_accepted

    if segments is not None:

        def segmented_values_accepted(op: Operation) -> bool:
            # verify_variadic_attr_size and the operands' constraints, written out: each
            # single operand's size 1, each optional one's 0 or 1, their sum the operands'
            sizes = segment_sizes(op.properties.get(SEGMENT_SIZES))
            if sizes is None or len(sizes) != len(segments):
                return False
            values = op._operands
            n, i = len(values), 0
            for size, (base, optional) in zip(sizes, segments, strict=True):
                if size == 1:
                    if i >= n or not isinstance(values[i]._type, base):
                        return False
                    i += 1
                elif size != 0 or not optional:
                    return False
            return i == n and _fit(op.results, results, {})

        values_accepted = segmented_values_accepted

    traits = _Traits(op_def)

    def regions_accepted(op: Operation) -> bool:
        regions = op.regions
        if len(regions) != region_count:
            return False
        for region, single in zip(regions, single_blocks, strict=True):
            if single and (
                region.first_block is None or region.first_block is not region.last_block
            ):
                return False
        return True

    def check(op: Operation) -> None:
        if (
            _GENERIC.get()
            or (op.regions if not region_count else not regions_accepted(op))
            or op._successors
            or not values_accepted(op)
            or not _named_accepted(op.properties, props)
            or (attrs and not _named_accepted(op.attributes, attrs))
            or not prop_names.issuperset(op.properties)
        ):
            generic(op)
            return
        for trait in traits.checking():
            verify_trait(trait, op)

    return check


def _named_accepted(owned: Mapping[str, Attribute], named: list[NamedCheck]) -> bool:
    for name, optional, test, verify in named:
        attr = owned.get(name)
        if attr is None:
            if not optional:
                return False
            continue
        if test is not None:
            if not test(attr):
                return False
            continue
        try:
            verify(attr, VerificationContext())
        except VerifyException:
            return False
    return True


def verify_trait(trait: OpTrait, op: Operation) -> None:
    """``trait.verify(op)``, with xDSL's structural traits of the builtin and func ops
    (every module holds them) written out: the same verdicts and messages, without
    xDSL's Python for each trait and its lookups, which after a collection are read from
    memory each time a module is verified."""
    kind = type(trait)
    if kind is NoTerminator:
        for region in op.regions:
            first = region._first_block
            if first is not None and first is not region._last_block:  # more than one
                raise VerifyException(f"'{op.name}' does not contain single-block regions")
    elif kind is SymbolTable:
        _verify_symbol_table(op)
    elif kind is SymbolOpInterface or kind is OptionalSymbolOpInterface:
        name = op.get_attr_or_prop("sym_name")
        if not isinstance(name, StringAttr) and not (
            name is None and kind is OptionalSymbolOpInterface
        ):
            raise VerifyException(
                f'Operation {op.name} must have a "sym_name" attribute of type '
                "`StringAttr` to conform to SymbolOpInterface"
            )
    elif kind is IsTerminator:
        block = op.parent
        if block is not None and block._last_op is not op:
            raise VerifyException(f"'{op.name}' must be the last operation in its parent block")
    elif kind is HasParent:
        _verify_parent(cast(HasParent, trait), op)
    elif kind is ReturnLike:
        if not class_has_trait(type(op), IsTerminator):
            raise VerifyException(f"{op.name} is not a terminator")
        if op.results:
            raise VerifyException(f"{op.name} does not have zero results")
        if op._successors:
            raise VerifyException(f"{op.name} does not have zero successors")
    else:
        trait.verify(op)


def _verify_symbol_table(op: Operation) -> None:
    """``SymbolTable().verify(op)``: one region of one block, its ops' symbol names unique."""
    regions = op.regions
    if len(regions) != 1:
        raise VerifyException("Operations with a 'SymbolTable' must have exactly one region")
    first = regions[0]._first_block
    if first is None or first is not regions[0]._last_block:
        raise VerifyException("Operations with a 'SymbolTable' must have exactly one block")
    met: set[StringAttr] = set()
    for child in block_ops(first):
        name = child.get_attr_or_prop("sym_name")
        if not isinstance(name, StringAttr):
            continue
        if name in met:
            raise VerifyException(f'Redefinition of symbol "{name.data}"')
        met.add(name)


def _verify_parent(trait: HasParent, op: Operation) -> None:
    """``trait.verify(op)``: a detached op, or one whose parent op is of the trait's types."""
    parent = op.parent_op()
    if parent is None or isinstance(parent, trait.op_types):
        return
    if len(trait.op_types) == 1:
        raise VerifyException(f"'{op.name}' expects parent op '{trait.op_types[0].name}'")
    names = ", ".join(f"'{p.name}'" for p in trait.op_types)
    raise VerifyException(f"'{op.name}' expects parent op to be one of {names}")


_CLASS_TRAITS: dict[tuple[type[Operation], type[OpTrait]], bool] = {}


def class_has_trait(op_type: type[Operation], trait: type[OpTrait]) -> bool:
    """``op_type.has_trait(trait)``, remembered per class (xDSL looks through the
    class's traits each time). ``ShapedOp.get_trait`` remembers its own answers; this
    serves any op class, xDSL's too, with ``has_trait``'s answer (an unregistered op
    has every trait, though ``get_trait`` finds none)."""
    key = (op_type, trait)
    known = _CLASS_TRAITS.get(key)
    if known is None:
        known = _CLASS_TRAITS[key] = op_type.has_trait(trait)
    return known


class _Traits:
    """The traits of a definition that check anything (``OpTrait.verify`` checks
    nothing: most of an op's traits are markers), in ``OpDef.verify``'s order; worked
    out again if a trait is added to the definition."""

    def __init__(self, op_def: OpDef):
        self.op_def = op_def
        self.of: frozenset[OpTrait] | None = None
        self.active: list[OpTrait] = []

    def checking(self) -> list[OpTrait]:
        current = self.op_def.traits._traits or self.op_def.traits.traits  # made on first use
        if current is not self.of:
            self.of = current
            self.active = [t for t in current if type(t).verify is not OpTrait.verify]
        return self.active


def verify_isolated(op: Operation) -> None:
    """``IsolatedFromAbove().verify(op)``: the same walk, verdict and message, with the
    common case answered from the block at hand (a value defined in the block being
    checked is defined inside ``op``) instead of walking up from each operand's owner."""
    regions: list[Region] = list(op.regions)
    while regions:
        region = regions.pop()
        for block in region.blocks:
            for child in block_ops(block):
                _check_reads(op, child)
                if child.regions and not class_has_trait(type(child), IsolatedFromAbove):
                    regions += child.regions


def _check_reads(op: Operation, child: Operation) -> None:
    """``child``, inside ``op``, reads only values defined inside ``op``."""
    block = child.parent
    for operand in child._operands:
        kind = type(operand)
        if kind is OpResult:
            if operand.op.parent is block:  # type: ignore[attr-defined]
                continue
        elif kind is BlockArgument and operand.block is block:  # type: ignore[attr-defined]
            continue
        owner = operand.owner
        if not op.is_ancestor(owner) or owner is op:
            # format(), as xDSL's message has it: an op formats as ``MulOp(...)``, where
            # str() (what a compiled f-string calls) prints it bare.
            raise VerifyException(
                "Operation using value defined out of its IsolatedFromAbove parent: "
                + format(child, "")
            )


class _IsolationScope:
    """The ops an incremental verify checks for isolation, grouped by the op isolated
    from above that checks each (its nearest such ancestor), grouped once."""

    def __init__(self, ops: Sequence[Operation]):
        self.ops = ops
        self.groups: dict[int, list[Operation]] | None = None

    def of(self, op: Operation) -> list[Operation]:
        if self.groups is None:
            self.groups = {}
            owners: dict[int, Operation | None] = {}  # by block: its ops share theirs
            for child in self.ops:
                block = child.parent
                if block is None:
                    continue
                if id(block) in owners:
                    owner = owners[id(block)]
                else:
                    owner = owners[id(block)] = _isolated_ancestor(block)
                if owner is not None:
                    self.groups.setdefault(id(owner), []).append(child)
        return self.groups.get(id(op), [])


def _isolated_ancestor(block: Block) -> Operation | None:
    """The nearest op isolated from above that holds ``block``."""
    owner = block.parent_op()
    while owner is not None and not class_has_trait(type(owner), IsolatedFromAbove):
        owner = owner.parent_op()
    return owner


_ISOLATION_SCOPE: ContextVar[_IsolationScope | None] = ContextVar(
    "rlx_isolation_scope", default=None
)


@contextmanager
def isolation_checked_for(ops: Sequence[Operation]) -> Iterator[None]:
    """Within the block, an op isolated from above checks ``ops`` alone (those it
    holds), not its whole body: the incremental verify's ops whose stamps changed, with
    the readers of those that moved (an op whose stamp did not change reads the values
    it read, defined where they were). A region moved as a whole shows in no stamp: the
    full verify sees it."""
    token = _ISOLATION_SCOPE.set(_IsolationScope(ops))
    try:
        yield
    finally:
        _ISOLATION_SCOPE.reset(token)


def verify_isolated_ops(op: Operation, ops: Iterable[Operation]) -> None:
    """``verify_isolated(op)`` for ``ops``, ops it checks (``op`` is their nearest
    ancestor isolated from above), with its verdict and message."""
    for child in ops:
        _check_reads(op, child)


def _isolated_check(op_def: OpDef) -> Callable[[Operation], None] | None:
    """``op_def.verify`` with ``verify_isolated`` for its IsolatedFromAbove trait (a
    graph's: a walk of the whole graph each time it is verified), or None when it has
    none. The traits run last, in their order, as in ``OpDef.verify``."""
    traits = list(op_def.traits)
    if not any(type(t) is IsolatedFromAbove for t in traits):
        return None
    bare = dataclasses.replace(op_def, traits=OpTraits(tuple))
    bare_check = _signature_check(bare) or partial(OpDef.verify, bare)

    def check(op: Operation) -> None:
        if _GENERIC.get():
            OpDef.verify(op_def, op)
            return
        bare_check(op)
        for trait in traits:
            if type(trait) is IsolatedFromAbove:
                scope = _ISOLATION_SCOPE.get()
                if scope is None:
                    verify_isolated(op)
                else:
                    verify_isolated_ops(op, scope.of(op))
            else:
                verify_trait(trait, op)

    return check


_INSTALLED: dict[type[Operation], bool] = {}


def use_signature_check(op_type: type[Operation]) -> None:
    """Verify ``op_type``'s IRDL signature with the specialised check from now on, when
    its definition is plain, or with ``verify_isolated`` when it is isolated from above
    (once per class; a no-op for every other class)."""
    if op_type in _INSTALLED:
        return
    check = None
    if issubclass(op_type, IRDLOperation):
        op_def = op_type.get_irdl_definition()
        check = _isolated_check(op_def) or _signature_check(op_def)
        if check is not None:
            # The op's verify_ calls ``op_def.verify(op)``: an instance attribute shadows it.
            op_def.verify = check  # type: ignore[method-assign,assignment]
    _INSTALLED[op_type] = check is not None


@contextmanager
def generic_signature_checks() -> Iterator[None]:
    """Within the block, every op's signature is checked by xDSL's generic ``OpDef.verify``."""
    token = _GENERIC.set(True)
    try:
        yield
    finally:
        _GENERIC.reset(token)
