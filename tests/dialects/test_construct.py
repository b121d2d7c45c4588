"""The fast construction paths (``dialects/construct.py``: ``ShapedOp``'s clone, the
named accessors, ``_build``) make the IR xDSL's generic code makes: the same text, the
same name hints, the same use lists in the same order."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, ModuleOp, f64, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.irdl import BaseAccessor, IRDLOperation

from rlx_compile import CompilePipeline, ModuleBuilder
from rlx_compile.dialects import common, hir, lir, mir, op_support
from rlx_compile.dialects.common import ShapedOp
from rlx_compile.dialects.construct import clone_op
from rlx_compile.frontends.onnx import import_model
from rlx_compile.ir import print_module
from rlx_compile.testing.random_graphs import random_mir_graph
from rlx_compile.testing.regions import wrap_in_if, wrap_in_loop

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def values_of(module: Operation) -> Iterator[SSAValue]:
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                yield from block.args
        yield from op.results


def shape_of(module: Operation) -> tuple[object, ...]:
    """The module as far as anything can tell: its generic text with locations, every
    value's name hint and its users (op position in the walk, operand index) in use-list
    order, every op's class, dict of fields and operand uses."""
    position = {op: i for i, op in enumerate(module.walk())}
    uses = [
        (v.name_hint, [(position[u.operation], u.index) for u in v.uses]) for v in values_of(module)
    ]
    ops = [
        (type(op), sorted(vars(op)), [(u.operation is op, u.index) for u in op._operand_uses])
        for op in module.walk()
    ]
    blocks = [
        (len(b.args), b.first_op is None or b.first_op.prev_op is None)
        for op in module.walk()
        for r in op.regions
        for b in r.blocks
    ]
    return print_module(module, generic=True, debuginfo=True), uses, ops, blocks


@pytest.fixture
def generic_clone(monkeypatch: pytest.MonkeyPatch) -> Callable[[Operation], Operation]:
    """xDSL's own ``Operation.clone``, ShapedOp's overrides set aside."""

    def clone(op: Operation) -> Operation:
        with monkeypatch.context() as m:
            m.delattr(ShapedOp, "clone")
            m.delattr(ShapedOp, "clone_without_regions")
            return op.clone()

    return clone


def modules() -> Iterator[tuple[str, ModuleOp]]:
    for seed in range(6):
        g = random_mir_graph(seed, 40)
        yield f"random{seed}", g.module
        if seed == 0:
            yield "if", wrap_in_if(g.module)
            yield "loop", wrap_in_loop(g.module)
    resnet = import_model(MODELS / "resnet18.onnx")
    yield "resnet18", resnet
    compiled = CompilePipeline(target="cpu", keep_stages=False).compile(resnet)
    yield "resnet18-lir", compiled.module
    llama = import_model(MODELS / "llama.onnx")
    yield "llama", llama


def test_clone_makes_what_xdsl_makes(generic_clone: Callable[[Operation], Operation]) -> None:
    for name, module in modules():
        fast = clone_op(module)
        assert shape_of(fast) == shape_of(generic_clone(module)), name
        assert shape_of(module.clone()) == shape_of(fast), name  # ModuleOp.clone reaches ours
        fast.verify()


def test_clone_of_one_op_with_a_mapper(generic_clone: Callable[[Operation], Operation]) -> None:
    """An op cloned into a new block with its operands mapped, as the planner does; an
    operand the mapper does not know stays as it is."""
    g = random_mir_graph(3, 30)
    block = g.module.body.block.first_op.regions[0].block  # type: ignore[union-attr]
    for op in list(block.ops)[:-1]:
        mapping = {v: v for v in op.operands[:1]}
        fast = op.clone(value_mapper=dict(mapping))
        generic = generic_clone(op)
        assert [v is w for v, w in zip(fast.operands, generic.operands, strict=True)] == [
            True
        ] * len(op.operands)
        assert fast.properties == generic.properties and fast.attributes == generic.attributes
        assert [r.type for r in fast.results] == [r.type for r in generic.results]
        assert [r.name_hint for r in fast.results] == [r.name_hint for r in generic.results]
        assert vars(fast).keys() == vars(generic).keys()


def test_clone_strips_a_name_suffix_as_the_setter_does() -> None:
    g = random_mir_graph(1, 10)
    op = next(o for o in g.module.walk() if isinstance(o, mir.AddOp | mir.MulOp | mir.SubOp))
    op.results[0]._name = "x_1"  # what the setter never stores, but xDSL's clone strips
    assert op.clone().results[0].name_hint == "x"


def test_clone_of_a_forward_reference_links_in_walk_order(
    generic_clone: Callable[[Operation], Operation],
) -> None:
    """A region whose op reads a value defined after it (graph regions allow it): the
    clone maps it, and every use list comes out in xDSL's order."""
    module = wrap_in_if(random_mir_graph(2, 20).module)
    graph = module.body.block.first_op
    assert graph is not None
    if_op = next(op for op in graph.walk() if isinstance(op, mir.IfOp))
    body = if_op.regions[0].block
    first, second = list(body.ops)[:2]
    first.detach()
    body.insert_op_after(first, second)  # now first reads nothing defined later ...
    later = first.results[0]
    second.operands = [later] * len(second.operands)  # ... and second reads it early
    assert shape_of(clone_op(module)) == shape_of(generic_clone(module))


@pytest.mark.parametrize("dialect_ops", [mir.MIR_OPS, hir.HIR_OPS, lir.LIR_OPS])
def test_named_accessors_are_irdl_accessors(dialect_ops: list[type[ShapedOp]]) -> None:
    """The fast accessors still index as IRDL's do (the assembly format asks them)."""
    for op_type in dialect_ops:
        assert issubclass(op_type, IRDLOperation)
        op_def = op_type.get_irdl_definition()
        for name, _ in [*op_def.operands, *op_def.results, *op_def.regions]:
            accessor = vars(op_type)[name]
            assert hasattr(accessor, "index"), (op_type.name, name)


def test_named_accessors_read_what_irdl_reads() -> None:
    compiled = CompilePipeline(target="cpu", keep_stages=False).compile(
        wrap_in_loop(random_mir_graph(4, 30).module)
    )
    ops = [*compiled.input.walk(), *compiled.module.walk()]
    for op in ops:
        if not isinstance(op, ShapedOp):
            continue
        op_def = op.get_irdl_definition()
        for name, _ in [*op_def.operands, *op_def.results, *op_def.regions]:
            accessor = vars(type(op))[name]
            if not isinstance(accessor, BaseAccessor):
                continue  # segment-sized: IRDL's own
            irdl = BaseAccessor.__get__(accessor, op)
            got = getattr(op, name)
            assert type(got) is type(irdl) and (
                got is irdl or list(got) == list(irdl)  # type: ignore[call-overload]
            ), (op.name, name)


def test_op_classes_answer_isinstance_as_classes_do() -> None:
    add = random_mir_graph(0, 5).module
    ops = list(add.walk())
    for op in ops:
        for cls in (mir.AddOp, mir.BinaryOp, ShapedOp, Operation, mir.ControlFlowOp):
            assert isinstance(op, cls) == (cls in type(op).__mro__)
    assert issubclass(mir.AddOp, mir.BinaryOp) and not issubclass(mir.AddOp, mir.SubOp)
    with pytest.raises(TypeError):
        mir.AddOp.register(mir.SubOp)  # type: ignore[attr-defined]


def test_block_args_keep_their_names_and_types() -> None:
    module = wrap_in_loop(random_mir_graph(5, 15).module)
    fast = clone_op(module)
    old = [(a.name_hint, a.type, a.index) for a in values_of(module) if isinstance(a.owner, Block)]
    new = [(a.name_hint, a.type, a.index) for a in values_of(fast) if isinstance(a.owner, Block)]
    assert old == new


@pytest.mark.parametrize(
    ("fast", "value", "slow"),
    [
        (common.int_attr, v, lambda v: IntegerAttr(int(v), i64))
        for v in (0, 1, -1, 7, (1 << 63) - 1, -(1 << 63), True)
    ]
    + [
        (common.float_attr, v, lambda v: FloatAttr(float(v), f64))
        for v in (0.0, -0.0, 1.5, -2.25e-300, math.inf, -math.inf, math.nan, 3)
    ]
    + [
        (common.ints_attr, v, lambda v: DenseArrayBase.from_list(i64, [int(x) for x in v]))
        for v in (
            [],
            [1, 2, 3],
            [-(1 << 63), (1 << 63) - 1],
            (0,),
            [np.int64(3), True, 2.0],
            range(4, 6),
        )
    ]
    + [
        (common.floats_attr, v, lambda v: DenseArrayBase.from_list(f64, [float(x) for x in v]))
        for v in ([], [0.0, -0.0], [math.nan, math.inf, 1e-310], (2,), [np.float32(1.1), "2.5"])
    ]
    + [
        (lambda v: common.enum_attr(common.Activation, v), v, common.ActivationAttr)
        for v in list(common.Activation)
    ]
    + [
        (lambda v: lir.SlotAttr.of(*v), v, lambda v: lir.SlotAttr(*v))
        for v in ((0, 0), (64, 4096), ((1 << 62) + 1, 3), (np.int64(128), 8))
    ],
)
def test_property_attributes_are_what_their_constructors_make(
    fast: Callable[[Any], Attribute | None], value: Any, slow: Callable[[Any], Attribute]
) -> None:
    """Attributes made field by field (no verification: their fields pass it by
    construction) equal, hash, print and verify as the constructors' do."""
    made, reference = fast(value), slow(value)
    assert made is not None
    assert type(made) is type(reference) and vars(made).keys() == vars(reference).keys()
    assert made == reference and hash(made) == hash(reference)
    assert str(made) == str(reference)
    made._verify()


def test_property_attributes_out_of_range_go_through_the_constructors() -> None:
    assert common.int_attr(1 << 63) == IntegerAttr(1 << 63, i64)  # normalised to -2**63
    with pytest.raises(ValueError):
        common.ints_attr([1 << 64])


def test_build_of_one_group_makes_what_irdl_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ops of one optional or variadic operand (fused convs with and without a residual,
    concats: compiles of resnet18 and llama) built on ``_build``'s fast path and on IRDL's
    generic builder are the same IR."""

    def compiled() -> list[ModuleOp]:
        return [
            CompilePipeline(target="cpu", keep_stages=False)
            .compile(import_model(MODELS / f"{name}.onnx"))
            .module
            for name in ("resnet18", "llama")
        ]

    fast = compiled()
    grouped = [
        op for m in fast for op in m.walk() if op_support._grouped_plain(type(op)) is not None
    ]
    assert {type(op) for op in grouped} >= {mir.FusedConvBiasActOp, mir.ConcatOp}
    assert any(isinstance(op, mir.FusedConvBiasActOp) and op.residual for op in grouped)
    kinds = {type(op) for op in grouped}
    for kind in kinds:  # the layout's cache, which the build reads
        monkeypatch.setitem(op_support._GROUPED_PLAIN, kind, None)
    generic = generic_builds(monkeypatch)
    assert [shape_of(m) for m in compiled()] == [shape_of(m) for m in fast]
    assert {mir.FusedConvBiasActOp, mir.ConcatOp} <= generic


def test_build_of_segmented_operands_makes_what_irdl_makes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ops of single and optional operands with their segment sizes as a property
    (recurrent layers with and without states, integer matmuls with and without zero
    points) built on ``_init``'s fast path and on IRDL's generic builder are the same
    IR, the segment sizes property included."""

    def built() -> ModuleOp:
        with ModuleBuilder("f") as m:
            x = m.input("x", (5, 2, 3))
            w, r, h = m.param("w", (1, 16, 3)), m.param("r", (1, 16, 4)), m.input("h", (1, 2, 4))
            full = m.emit(mir.LstmOp(x, w, r, bias=m.param("b", (1, 32)), initial_h=h, initial_c=h))
            bare = m.emit(mir.GruOp(x, m.param("gw", (1, 12, 3)), m.param("gr", (1, 12, 4))))
            a, b = m.input("a", (2, 3), "i8"), m.param("q", (3, 4), "i8")
            zp = m.param("zp", (), "i8")
            plain = m.emit(mir.MatmulIntegerOp(a, b))
            shifted = m.emit(mir.MatmulIntegerOp(a, b, lhs_zero_point=zp, rhs_zero_point=zp))
            m.output(full.results[0], bare.results[0], plain.results[0], shifted.results[0],
                     names=["y", "g", "p", "s"])  # fmt: skip
        return m.module

    fast = built()
    kinds = {type(op) for op in fast.walk() if op_support._segmented_single_results(type(op))}
    assert kinds == {mir.LstmOp, mir.GruOp, mir.MatmulIntegerOp}
    for kind in kinds:
        monkeypatch.setitem(op_support._SEGMENTED_SINGLE_RESULTS, kind, False)
    generic = generic_builds(monkeypatch)
    assert shape_of(built()) == shape_of(fast)
    assert kinds <= generic


def generic_builds(monkeypatch: pytest.MonkeyPatch) -> set[type[Operation]]:
    """The classes of the ops built by IRDL's generic builder from now on."""
    built: set[type[Operation]] = set()
    generic = IRDLOperation.__init__

    def recording(self: IRDLOperation, *args: Any, **kwargs: Any) -> None:
        built.add(type(self))
        generic(self, *args, **kwargs)

    monkeypatch.setattr(IRDLOperation, "__init__", recording)
    return built
