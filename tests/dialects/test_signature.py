"""The specialised signature check (``dialects/signature.py``) gives the generic IRDL
verdict, with the generic message, on valid ops and on ops broken in every way a
signature can be: operand and result counts, types, a type variable, properties."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, StringAttr, i32, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.dialects.test import TestOp as ForeignOp
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.utils.exceptions import VerifyException

from rlx_compile import ModuleBuilder
from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.signature import (
    _INSTALLED,
    generic_signature_checks,
    use_signature_check,
)


def built() -> dict[str, Operation]:
    """One valid op of each kind below, by name."""
    with ModuleBuilder("f") as m:
        x = m.input("x", (1, 4, 6, 6))
        w = m.param("w", (4, 4, 3, 3))
        y = m.relu(m.conv(x, w, pads=[1, 1, 1, 1]))
        z = m.concat([y, x], axis=1)
        m.output(m.add(z, z), names=["z"])
    return {op.name: op for op in m.module.walk()}


def verdict(op: Operation) -> str | None:
    """The message ``op.verify`` raises, None when it verifies."""
    try:
        op.verify(verify_nested_ops=False)
    except VerifyException as err:
        return str(err)
    return None


def both(op: Operation) -> tuple[str | None, str | None]:
    use_signature_check(type(op))
    fast = verdict(op)
    with generic_signature_checks():
        generic = verdict(op)
    return fast, generic


def test_the_workhorse_ops_are_checked_by_the_specialised_check() -> None:
    ops = built()
    for name in ("mir.relu", "mir.conv", "mir.concat", "mir.add"):
        use_signature_check(type(ops[name]))
        assert _INSTALLED[type(ops[name])], name
    # Ops with regions defined one each (module, graph, if): specialised too; variadic
    # regions (a loop's) are left to the generic check.
    for op_type in (ModuleOp, FuncOp, ReturnOp, mir.IfOp):
        use_signature_check(op_type)
        assert _INSTALLED[op_type], op_type.name
    use_signature_check(mir.LoopOp)
    assert not _INSTALLED[mir.LoopOp]


@pytest.mark.parametrize("name", ["mir.relu", "mir.conv", "mir.concat", "mir.add"])
def test_valid_ops_verify_either_way(name: str) -> None:
    assert both(built()[name]) == (None, None)


def foreign() -> Operation:
    """A value of a type that is no tensor."""
    return ForeignOp(result_types=[i32])


Breakage = Callable[[Operation], Operation]


def recreate(op: Operation, **changes: object) -> Operation:
    fields: dict[str, object] = {
        "operands": list(op.operands),
        "result_types": [r.type for r in op.results],
        "properties": dict(op.properties),
        "attributes": dict(op.attributes),
    }
    fields.update(changes)
    return type(op).create(**fields)  # type: ignore[arg-type]


BREAKAGES: dict[str, tuple[str, Breakage]] = {
    "missing operand": ("mir.add", lambda op: recreate(op, operands=list(op.operands)[:1])),
    "extra operand": ("mir.conv", lambda op: recreate(op, operands=[*op.operands, op.operands[0]])),
    "variadic of none": ("mir.concat", lambda op: recreate(op, operands=[])),
    "operand no tensor": (
        "mir.add",
        lambda op: recreate(op, operands=[op.operands[0], foreign().results[0]]),
    ),
    "variadic no tensor": (
        "mir.concat",
        lambda op: recreate(op, operands=[*op.operands, foreign().results[0]]),
    ),
    "result no tensor": ("mir.conv", lambda op: recreate(op, result_types=[i32])),
    "missing result": ("mir.relu", lambda op: recreate(op, result_types=[])),
    "type variable": (
        "mir.relu",
        lambda op: recreate(op, result_types=[type_of(op.results[0]).with_shape([2, 2])]),
    ),
    "missing property": (
        "mir.concat",
        lambda op: recreate(op, properties={}),
    ),
    "unknown property": (
        "mir.add",
        lambda op: recreate(op, properties={"axis": IntegerAttr(0, 64)}),
    ),
    "property of the wrong kind": (
        "mir.concat",
        lambda op: recreate(op, properties={"axis": StringAttr("1")}),
    ),
    "property of the wrong width": (
        "mir.concat",
        lambda op: recreate(op, properties={"axis": IntegerAttr(1, 32)}),
    ),
    "a region": ("mir.add", lambda op: recreate(op, regions=[Region()])),
}


def with_regions() -> dict[str, Operation]:
    """One valid op with regions of each kind below (module, graph, return, if), by name."""
    with ModuleBuilder("f") as m:
        x = m.input("x", (4,))
        c = m.input("c", (1,), dtype="bool")
        (y,) = m.if_(c, lambda: [m.neg(x)], lambda: [x])
        m.output(y, names=["y"])
    return {op.name: op for op in m.module.walk()}


def _replaced(op: Operation, new: Operation) -> Operation:
    """``new`` in ``op``'s place (a terminator's checks read its parent)."""
    block = op.parent
    assert block is not None
    block.insert_op_after(new, op)
    op.detach()
    return new


def _with_twin_graph(module: Operation) -> Operation:
    """``module`` holding a copy of its graph, of the same name (SymbolTable)."""
    graph = next(iter(module.regions[0].block.ops))
    module.regions[0].block.add_op(graph.clone())
    return module


def _return_not_last(ret: Operation) -> Operation:
    """A return with an op after it in its block (IsTerminator)."""
    block = ret.parent
    assert block is not None
    block.add_op(ForeignOp())
    return ret


def _return_in_module(ret: Operation) -> Operation:
    """A return moved into the module's block, ahead of the graph (HasParent)."""
    graph = ret.parent_op()
    assert graph is not None and graph.parent is not None
    ret.detach()
    graph.parent.insert_op_before(ret, graph)
    return ret


REGION_BREAKAGES: dict[str, tuple[str, Breakage]] = {
    "a second block in a single-block region": (
        "builtin.module",
        lambda op: (op.regions[0].add_block(Block()), op)[1],
    ),
    "a region fewer": ("mir.if", lambda op: op.create(
        operands=list(op.operands), result_types=[r.type for r in op.results],
        regions=[op.regions[0].clone()])),
    "an empty single-block region": ("mir.if", lambda op: op.create(
        operands=list(op.operands), result_types=[r.type for r in op.results],
        regions=[op.regions[0].clone(), Region()])),
    "a return with an operand no tensor": ("func.return", lambda op: _replaced(
        op, ReturnOp(*op.operands, foreign().results[0]))),
    "a graph without its function type": (
        "func.func",
        lambda op: op.create(
            properties={k: v for k, v in op.properties.items() if k != "function_type"},
            regions=[op.regions[0].clone()],
        ),
    ),
    # The traits the specialised check writes out (verify_trait):
    "two graphs of one name": ("builtin.module", _with_twin_graph),
    "a return before the end of its block": ("func.return", _return_not_last),
    "a return outside a graph": ("func.return", _return_in_module),
}  # fmt: skip


@pytest.mark.parametrize("name", ["builtin.module", "func.func", "func.return", "mir.if"])
def test_valid_ops_with_regions_verify_either_way(name: str) -> None:
    assert both(with_regions()[name]) == (None, None)


@pytest.mark.parametrize("breakage", sorted(REGION_BREAKAGES))
def test_a_broken_op_with_regions_gets_the_generic_verdict(breakage: str) -> None:
    name, brk = REGION_BREAKAGES[breakage]
    fast, generic = both(brk(with_regions()[name]))
    assert generic is not None, "the breakage must be one the generic check rejects"
    assert fast == generic


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_a_broken_signature_gets_the_generic_verdict(breakage: str) -> None:
    name, brk = BREAKAGES[breakage]
    fast, generic = both(brk(built()[name]))
    assert generic is not None, "the breakage must be one the generic check rejects"
    assert fast == generic


def with_segments() -> Operation:
    """A valid op whose operand segment sizes are a property: an LSTM with a bias and
    initial states, the other optional operands absent."""
    with ModuleBuilder("f") as m:
        x = m.input("x", (5, 2, 3))
        w, r = m.param("w", (1, 16, 3)), m.param("r", (1, 16, 4))
        b, h = m.param("b", (1, 32)), m.input("h", (1, 2, 4))
        layer = m.emit(mir.LstmOp(x, w, r, bias=b, initial_h=h, initial_c=h))
        m.output(layer.results[0], names=["y"])
    return layer


def _sizes(op: Operation, sizes: list[int], kind: Attribute = i32) -> Operation:
    array = DenseArrayBase.from_list(kind, sizes)
    return recreate(op, properties={**op.properties, "operandSegmentSizes": array})


SEGMENT_BREAKAGES: dict[str, Breakage] = {
    "no segment sizes": lambda op: recreate(
        op, properties={k: v for k, v in op.properties.items() if k != "operandSegmentSizes"}
    ),
    "sizes of the wrong element type": lambda op: _sizes(
        op, [1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0], i64
    ),
    "a size fewer": lambda op: _sizes(op, [1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0]),
    "a single operand absent": lambda op: _sizes(op, [1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0]),
    "an optional operand twice": lambda op: _sizes(op, [1, 1, 1, 0, 0, 2, 1, 0, 0, 0, 0, 0]),
    "sizes summing past the operands": lambda op: _sizes(op, [1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]),
    "an optional operand no tensor": lambda op: recreate(
        op, operands=[*list(op.operands)[:4], foreign().results[0], *list(op.operands)[5:]]
    ),
    "a result no tensor": lambda op: recreate(
        op, result_types=[*[r.type for r in op.results][:2], i32]
    ),
}


def test_an_op_with_segment_sizes_is_checked_by_the_specialised_check() -> None:
    op = with_segments()
    use_signature_check(type(op))
    assert _INSTALLED[type(op)]
    assert both(op) == (None, None)


@pytest.mark.parametrize("breakage", sorted(SEGMENT_BREAKAGES))
def test_broken_segment_sizes_get_the_generic_verdict(breakage: str) -> None:
    fast, generic = both(SEGMENT_BREAKAGES[breakage](with_segments()))
    assert generic is not None, "the breakage must be one the generic check rejects"
    assert fast == generic


def test_constraint_tests_accept_only_what_verify_accepts() -> None:
    """Each property constraint's test (``_test``) passes exactly the attributes its
    ``verify`` passes, over every property value of a compiled model and values of other
    kinds (it must pass no more; passing fewer only sends them to ``verify``)."""
    from xdsl.dialects.builtin import (
        ArrayAttr,
        DenseArrayBase,
        DictionaryAttr,
        FloatAttr,
        IntAttr,
        IntegerType,
        UnitAttr,
        f32,
        f64,
        i64,
    )
    from xdsl.irdl import VerificationContext

    from rlx_compile import CompilePipeline
    from rlx_compile.dialects import hir, lir
    from rlx_compile.dialects.signature import _test
    from rlx_compile.testing.random_graphs import random_mir_graph

    samples: list[object] = [
        IntegerAttr(3, i64),
        IntegerAttr(3, i32),
        IntegerAttr(3, IntegerType(64, signedness=IntegerType(64).signedness)),
        FloatAttr(1.5, f64),
        FloatAttr(1.5, f32),
        DenseArrayBase.from_list(i64, [1, 2]),
        DenseArrayBase.from_list(f64, [1.0]),
        DenseArrayBase.from_list(i32, [1]),
        StringAttr("x"),
        UnitAttr(),
        IntAttr(2),
        ArrayAttr([]),
        ArrayAttr([StringAttr("a"), StringAttr("b")]),
        ArrayAttr([StringAttr("a"), IntAttr(1)]),
        ArrayAttr([DictionaryAttr({})]),
        ArrayAttr([ArrayAttr([StringAttr("a")])]),
    ]
    compiled = CompilePipeline(target="cpu", keep_stages=False).compile(
        random_mir_graph(7, 40).module
    )
    for op in [*compiled.input.walk(), *compiled.module.walk()]:
        samples += op.properties.values()
    checked = 0
    for op_type in [*mir.MIR_OPS, *hir.HIR_OPS, *lir.LIR_OPS, FuncOp, ModuleOp]:
        for prop in op_type.get_irdl_definition().properties.values():
            test = _test(prop.constr)
            if test is None:
                continue
            for attr in samples:
                try:
                    prop.constr.verify(attr, VerificationContext())  # type: ignore[arg-type]
                    passes = True
                except VerifyException:
                    passes = False
                assert test(attr) == passes, (prop.constr, attr)  # type: ignore[arg-type]
                checked += passes
    assert checked > 100


def test_isolation_check_gives_the_trait_verdict_and_message() -> None:
    """``verify_isolated`` says what ``IsolatedFromAbove.verify`` says, on graphs whose
    ops read only their own values and on one that reads a value of another graph."""
    from xdsl.traits import IsolatedFromAbove

    from rlx_compile.dialects.signature import verify_isolated
    from rlx_compile.testing.random_graphs import random_mir_graph
    from rlx_compile.testing.regions import wrap_in_if, wrap_in_loop

    def outcome(check: Callable[[Operation], None], op: Operation) -> str | None:
        try:
            check(op)
        except VerifyException as err:
            return str(err)
        return None

    graphs = [
        next(iter(module.body.block.ops))
        for module in (
            random_mir_graph(1, 20).module,
            wrap_in_if(random_mir_graph(2, 20).module),
            wrap_in_loop(random_mir_graph(3, 20).module),
        )
    ]
    for graph in graphs:
        assert outcome(verify_isolated, graph) is None
        assert outcome(IsolatedFromAbove().verify, graph) is None
    first, second = graphs[1], graphs[2]
    inner = next(op for op in second.walk() if isinstance(op, mir.AddOp | mir.MulOp))
    outside = next(op for op in first.walk() if isinstance(op, mir.InputOp)).results[0]
    inner.operands = [outside, *inner.operands[1:]]
    message = outcome(IsolatedFromAbove().verify, second)
    assert message is not None and "IsolatedFromAbove" in message
    assert outcome(verify_isolated, second) == message


def test_written_out_traits_give_the_trait_verdict_and_message() -> None:
    """``verify_trait`` says what the trait's own ``verify`` says, for each trait it
    writes out, on ops that hold to it and on ops that break it in each way it names
    (some of which no op reaches past its signature check)."""
    from xdsl import traits
    from xdsl.dialects.builtin import IntAttr, StringAttr

    from rlx_compile.dialects.signature import verify_trait

    def outcome(
        check: Callable[[traits.OpTrait, Operation], None], trait: traits.OpTrait, op: Operation
    ) -> str | None:
        try:
            check(trait, op)
        except VerifyException as err:
            return str(err)
        return None

    def own(trait: traits.OpTrait, op: Operation) -> None:
        trait.verify(op)

    ops = with_regions()
    module, graph, ret = ops["builtin.module"], ops["func.func"], ops["func.return"]
    twin = _with_twin_graph(with_regions()["builtin.module"])
    two_blocks = with_regions()["builtin.module"]
    two_blocks.regions[0].add_block(Block())
    late_return = _return_not_last(with_regions()["func.return"])
    stray_return = _return_in_module(with_regions()["func.return"])
    named = [ForeignOp(properties={"sym_name": StringAttr("f")}),
             ForeignOp(attributes={"sym_name": StringAttr("f")}),
             ForeignOp(properties={"sym_name": IntAttr(1)}),
             ForeignOp()]  # fmt: skip
    looking_like_returns = [ForeignOp(result_types=[i32]), ForeignOp(), ret]
    traits_and_ops = [
        (traits.NoTerminator(), [module, graph, two_blocks]),
        (traits.SymbolTable(), [module, twin, two_blocks, graph, ret]),
        (traits.SymbolOpInterface(), [graph, module, *named]),
        (traits.OptionalSymbolOpInterface(), [graph, module, *named]),
        (traits.IsTerminator(), [ret, late_return, graph]),
        (traits.HasParent(FuncOp), [ret, stray_return, ForeignOp()]),
        (traits.HasParent(FuncOp, ModuleOp), [ret, stray_return, ops["mir.neg"]]),
        (traits.ReturnLike(), looking_like_returns),
    ]
    broken = 0
    for trait, checked in traits_and_ops:
        for op in checked:
            expected = outcome(own, trait, op)
            assert outcome(verify_trait, trait, op) == expected, (trait, op.name)
            broken += expected is not None
    assert broken >= 10
