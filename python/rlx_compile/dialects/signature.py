"""IRDL's signature check, specialised per op class for plain ops.

xDSL's generic ``OpDef.verify`` interprets an op's definition on every call (variadic
group sizes, segment attributes, range constraints, accessor lookups): about 60% of an
op verify here. For an op of single operands and results, no regions, successors or
definition options, whose operand and result constraints are base-class constraints
(optionally bound to a type variable) and whose property and attribute constraints use
no variables, the same checks reduce to a few ``isinstance`` tests, equalities and the
property constraints themselves. ``use_signature_check`` makes such a class's
``OpDef.verify`` that reduction.

It is sound by construction: the reduction only accepts what the generic check accepts,
and anything it does not accept goes to the generic check, which decides (and gives its
own error message). ``generic_signature_checks`` turns the reduction off
(``--verify-each=full``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from xdsl.ir import Attribute, Operation
from xdsl.irdl import (
    BaseAttr,
    EqIntConstraint,
    IRDLOperation,
    OpDef,
    OptAttributeDef,
    OptionalDef,
    OptPropertyDef,
    RangeLengthConstraint,
    RangeOf,
    VarConstraint,
    VariadicDef,
    VerificationContext,
)
from xdsl.irdl.operations import AttributeDef, OperandOrResultDef, PropertyDef
from xdsl.utils.exceptions import VerifyException

_GENERIC: ContextVar[bool] = ContextVar("rlx_generic_signature_checks", default=False)

ValueCheck = tuple[type[Attribute], str | None]
"""A constraint on an operand's or result's type: its base class, and the type variable
it binds (values binding one variable have equal types), if any."""


def _value_check(d: OperandOrResultDef) -> ValueCheck | None:
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
    return (c.attr, var) if isinstance(c, BaseAttr) else None


Group = tuple[list[ValueCheck], ValueCheck | None, bool, list[ValueCheck]]
"""Operand or result definitions with at most one variadic: the checks of the single
values before it, its check (None: there is none), whether it is optional (zero or one
value), the checks of the single values after it."""


def _group(defs: Sequence[tuple[str, OperandOrResultDef]]) -> Group | None:
    checks = [_value_check(d) for _, d in defs]
    variadic = [i for i, (_, d) in enumerate(defs) if isinstance(d, VariadicDef)]
    if None in checks or len(variadic) > 1:
        return None
    values = [c for c in checks if c is not None]
    if not variadic:
        return values, None, False, []
    at = variadic[0]
    return values[:at], values[at], isinstance(defs[at][1], OptionalDef), values[at + 1 :]


def _checks_of(values: Sequence[Any], group: Group) -> Iterable[ValueCheck] | None:
    """The check of each value, by position; None when their number does not fit."""
    before, variadic, optional, after = group
    extra = len(values) - len(before) - len(after)
    if variadic is None:
        return before if extra == 0 else None
    if extra < 0 or (optional and extra > 1):
        return None
    return [*before, *[variadic] * extra, *after]


NamedCheck = tuple[str, bool, Callable[[Attribute, VerificationContext], None]]
"""A property's or attribute's name, whether it is optional, its constraint's verify."""


def _named_checks(
    defs: Mapping[str, PropertyDef] | Mapping[str, AttributeDef], optional: type
) -> list[NamedCheck] | None:
    out: list[NamedCheck] = []
    for name, d in defs.items():
        if d.constr.variables():
            return None  # a variable shared with the operands: left to the generic check
        out.append((name, isinstance(d, optional), d.constr.verify))
    return out


def _signature_check(op_def: OpDef) -> Callable[[Operation], None] | None:
    """The specialised ``op_def.verify``, or None when the definition is not plain."""
    if op_def.regions or op_def.successors or op_def.options:
        return None
    operands = _group(op_def.operands)
    results = _group(op_def.results)
    props = _named_checks(op_def.properties, OptPropertyDef)
    attrs = _named_checks(op_def.attributes, OptAttributeDef)
    if operands is None or results is None or props is None or attrs is None:
        return None
    prop_names = frozenset(op_def.properties)

    def generic(op: Operation) -> None:
        OpDef.verify(op_def, op)

    def accepts(op: Operation) -> bool:
        if op.regions or op.successors:
            return False
        bound: dict[str, Attribute] = {}
        for values, group in ((op.operands, operands), (op.results, results)):
            value_checks = _checks_of(values, group)
            if value_checks is None:
                return False
            for value, (base, var) in zip(values, value_checks, strict=True):
                t = value.type
                if not isinstance(t, base):
                    return False
                if var is not None and bound.setdefault(var, t) != t:
                    return False
        ctx = VerificationContext()
        for owned, named in ((op.properties, props), (op.attributes, attrs)):
            for name, optional, verify in named:
                attr = owned.get(name)
                if attr is None:
                    if not optional:
                        return False
                    continue
                try:
                    verify(attr, ctx)
                except VerifyException:
                    return False
        return prop_names.issuperset(op.properties)

    def check(op: Operation) -> None:
        if _GENERIC.get() or not accepts(op):
            generic(op)
            return
        for trait in op_def.traits:
            trait.verify(op)

    return check


_INSTALLED: dict[type[Operation], bool] = {}


def use_signature_check(op_type: type[Operation]) -> None:
    """Verify ``op_type``'s IRDL signature with the specialised check from now on, when
    its definition is plain (once per class; a no-op for every other class)."""
    if op_type in _INSTALLED:
        return
    check = None
    if issubclass(op_type, IRDLOperation):
        op_def = op_type.get_irdl_definition()
        check = _signature_check(op_def)
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
