"""Machinery shared by the fusion passes.

A fusion is a ``FusionPattern``: an xDSL rewrite pattern rooted at the *last* op of the
chain it replaces, split into ``match`` (which returns a ``Match`` to apply, a ``Miss``
saying why a chain of the right shape cannot fuse, or None when the op is not the root
of such a chain) and ``rewrite``. The rewrite walker uses both; the FusionReport's
near-miss scan calls ``match`` alone on the fused module.

Each fusion pass runs its patterns as one stage (a walker to a fixpoint over the whole
module), and ``fuse`` runs the stages in order, so a producer is never claimed by one
fusion before a fusion rooted at its consumer has had its chance.

Fusions only fire for what the target claims and its fused kernels support
(``FusionContext``); every op a fusion consumes must be read by the chain alone (an
op whose result has another user, a graph output included, stays unfused).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from functools import cache
from typing import ClassVar, Generic, TypeVar

import numpy as np
from mypy_extensions import mypyc_attr
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import IsTerminator

from rlx_compile.builder import GraphBuilder, ReplacingPattern, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import Activation, ActivationAttr, activation_props
from rlx_compile.dialects.construct import op_kinds
from rlx_compile.dialects.types import Dim, DType, TensorType, fmt_shape
from rlx_compile.folding import DEFAULT_MAX_ELEMENTS, FoldingBuilder, constant_value
from rlx_compile.fusion.report import FusionReport, MissedFusion
from rlx_compile.interpreter.eager import Eager
from rlx_compile.ir import (
    erase_unused,
    func_graphs,
    is_before,
    location_str,
    tracking_block_order,
)
from rlx_compile.legalization.driver import dispatched_ops
from rlx_compile.reports import publish
from rlx_compile.rewriting import RootedAt, roots_of
from rlx_compile.targets.base import (
    ACTIVATION_LABELS,
    Target,
    activation_of,
    activation_params,
)

T = TypeVar("T", bound=Operation)


# ---------------------------------------------------------------------------------
# Matching helpers
# ---------------------------------------------------------------------------------


def producer(v: SSAValue, kind: type[T]) -> T | None:
    """The op of kind ``kind`` that produces ``v``, if that is what produces it."""
    if isinstance(v, OpResult) and isinstance(v.op, kind):
        return v.op
    return None


def users(v: SSAValue) -> list[Operation]:
    """Distinct ops reading ``v`` (the graph's return counts: an output is read)."""
    out: list[Operation] = []
    for use in v.uses:
        if not any(use.operation is u for u in out):
            out.append(use.operation)
    return out


def sole_user(v: SSAValue) -> Operation | None:
    """The one op reading ``v``, unless several do or ``v`` is a graph output."""
    readers = users(v)
    if len(readers) != 1 or readers[0].has_trait(IsTerminator):
        return None
    return readers[0]


def is_output(v: SSAValue) -> bool:
    return any(u.has_trait(IsTerminator) for u in users(v))


def describe_uses(v: SSAValue, what: str) -> str:
    """Why ``v`` cannot be absorbed: it has other readers or is a graph output."""
    readers = users(v)
    if is_output(v):
        return f"{what} is also a graph output"
    return f"{what} has {len(readers)} users"


def defined_before(v: SSAValue, op: Operation) -> bool:
    """Whether ``v`` is available right before ``op`` (same block)."""
    if not isinstance(v, OpResult):
        return True
    return is_before(v.op, op)


def operand_pairs(op: Operation) -> tuple[tuple[SSAValue, SSAValue], ...]:
    """A two-operand op's operands in both orders (products and sums commute)."""
    a, b = op.operands
    return ((a, b), (b, a))


def other_operand(op: Operation, v: SSAValue) -> SSAValue:
    """The operand of a two-operand op that is not ``v`` (``v`` itself when it is both)."""
    a, b = op.operands
    return b if a is v else a


def operand_from(op: Operation, kind: type[T]) -> tuple[T, SSAValue] | None:
    """For a two-operand op: (producer, other operand) when one operand comes from an op
    of ``kind`` (the first such operand)."""
    for x, y in operand_pairs(op):
        p = producer(x, kind)
        if p is not None:
            return p, y
    return None


def scalar_constant(v: SSAValue) -> float | None:
    """The value of a one-element float constant (any rank), else None."""
    owner = v.owner
    if not isinstance(owner, mir.ConstantOp):
        return None
    t = owner.tensor_type  # asked before the bytes are decoded: most constants are not
    if t.num_elements() != 1 or not _floating(t.dtype):
        return None
    return float(owner.to_numpy().reshape(()))


@cache
def _floating(dtype: DType) -> bool:
    """Whether NumPy holds ``dtype`` as a floating type."""
    return bool(np.issubdtype(dtype.numpy, np.floating))


def reads(v: SSAValue) -> str:
    """What produces ``v``, for a near miss."""
    return v.op.name if isinstance(v, OpResult) else "a block argument"


def gate_blocks(narrows: Sequence[mir.NarrowOp], source: SSAValue, hint: str) -> list[int] | Miss:
    """The block of the last dim of ``source`` each narrow takes, when they are blocks of
    one width that tile it (in any order); else why not."""
    src = type_of(source)
    hidden = narrows[0].length
    blocks: list[int] = []
    for n in narrows:
        start = n.start_dim
        if (
            n.props().int("axis") != src.rank - 1
            or n.length != hidden
            or not isinstance(hidden, int)
            or not isinstance(start, int)
            or start % hidden
        ):
            return Miss(
                f"the gate blocks of {fmt_shape(src.shape)} are not blocks of its last dim "
                "of one width",
                hint,
            )
        blocks.append(start // hidden)
    if sorted(blocks) != list(range(len(narrows))) or src.shape[-1] != len(narrows) * hidden:
        return Miss(
            f"the gate blocks {sorted(blocks)} of width {hidden} do not tile the last dim "
            f"of {fmt_shape(src.shape)}",
            hint,
        )
    return blocks


def chain_miss(links: Sequence[tuple[SSAValue, Operation, str]], hint: str) -> Miss | None:
    """A miss for the first (value, reader, what) link whose value is read by more than
    ``reader`` (or is a graph output)."""
    for value, reader, what in links:
        if sole_user(value) is not reader:
            return Miss(describe_uses(value, what), hint)
    return None


def channel_bias(bias: TensorType, out: TensorType) -> bool:
    """Whether ``bias`` broadcasts onto ``out`` [N, C, ...] along the channel axis only."""
    if bias.rank > out.rank or out.rank < 3:
        return False
    padded = (1,) * (out.rank - bias.rank) + tuple(bias.shape)
    return padded[1] == out.shape[1] and all(d == 1 for i, d in enumerate(padded) if i != 1)


def per_channel(t: TensorType, out: TensorType) -> bool:
    """Whether ``t`` broadcasts onto ``out`` [N, C, ...] along the channel axis alone, or
    is one element (a scale or shift that is the same for every channel). Onto [N, C]
    (features after a dense layer: Keras' and BatchNorm1d's affine) that is [C] or [1, C]."""
    if t.rank <= out.rank and t.num_elements() == 1:
        return out.rank >= 2
    if out.rank == 2 and t.rank <= 2:
        padded = (1,) * (2 - t.rank) + tuple(t.shape)
        return padded[0] == 1 and padded[1] == out.shape[1]
    return channel_bias(t, out)


ConvLike = mir.ConvOp | mir.FusedConvBiasActOp
"""A conv, or a fused one: both hold the input, weight and window properties."""


def biased_conv(v: SSAValue) -> mir.FusedConvBiasActOp | None:
    """The fused conv producing ``v`` when it is a conv and its channel bias alone (no
    residual, no activation): what an ONNX Conv with a bias imports as."""
    op = producer(v, mir.FusedConvBiasActOp)
    if op is None or op.residual is not None or not no_activation(op):
        return None
    return op


def no_activation(op: Operation) -> bool:
    """Whether a fused op applies no activation."""
    return op.properties.get("activation") in (None, _NO_ACTIVATION)


_NO_ACTIVATION = ActivationAttr(Activation.NONE)


def fused_conv_miss(conv: ConvLike, target: Target) -> Miss | None:
    """Why the target's fused conv kernel does not take this conv (None: it does)."""
    limits, target_name = target.limits, target.name
    w = type_of(conv.weight)
    spatial = w.rank - 2
    if spatial not in limits.conv_spatial_dims:
        return Miss(
            f"a {spatial}-D conv is not fused on target {target_name}",
            f"its fused conv kernel handles {list(limits.conv_spatial_dims)}-D convs",
        )
    kernel = [int(d) for d in w.shape[2:]]
    if min(kernel) < limits.conv_min_kernel:
        return Miss(
            f"a {'x'.join(map(str, kernel))} conv window is not fused on target {target_name}",
            f"its fused conv kernel needs every window dim >= {limits.conv_min_kernel}",
        )
    if conv.props().int("groups") != 1 and not limits.conv_grouped:
        return Miss(
            f"a grouped conv is not fused on target {target_name}",
            "its fused conv kernel handles groups = 1 only",
        )
    return None


def conv_plus_bias(
    b: GraphBuilder, target: Target, conv: ConvLike, weight: SSAValue, bias: SSAValue
) -> SSAValue:
    """``conv`` again on ``weight``, plus the ``[C]`` vector ``bias``: the fused conv of
    that bias (what ``fuse-conv-bias-act`` would make of the two, and what an ONNX Conv
    with a bias imports as) where the target's fused conv kernel takes the conv, else a
    conv and a bias add."""
    if target.claims_op(mir.FusedConvBiasActOp.name) and fused_conv_miss(conv, target) is None:
        return fused_conv(b, conv, weight, bias)
    y = conv_with_weight(b, conv, weight)
    return b.add(y, b.channel_view(bias, type_of(y).rank))


def fused_conv(
    b: GraphBuilder,
    conv: ConvLike,
    weight: SSAValue,
    bias: SSAValue,
    residual: SSAValue | None = None,
    ep: Epilogue | None = None,
) -> SSAValue:
    """A fused conv of ``conv``'s input and window (strides, pads, dilations, groups) on
    ``weight``, with the ``[C]`` ``bias``, the residual and the activation given."""
    p = conv.props()
    return b.fused_conv_bias_act(
        conv.input, weight, bias, residual, strides=p.ints("strides"), pads=p.ints("pads"),
        dilations=p.ints("dilations"), groups=p.int("groups"),
        act=ep.act.value if ep else "none", act_params=ep.params if ep else (),
    )  # fmt: skip


def conv_with_weight(b: GraphBuilder, conv: ConvLike, weight: SSAValue) -> SSAValue:
    """``conv`` again (its input, strides, pads, dilations and groups) on ``weight``, as
    a plain conv (a fused conv's bias is the caller's to add)."""
    p = conv.props()
    return b.conv(
        conv.input, weight, strides=p.ints("strides"), pads=p.ints("pads"),
        dilations=p.ints("dilations"), groups=p.int("groups"),
    )  # fmt: skip


def channel_vector(b: GraphBuilder, v: SSAValue, channels: Dim) -> SSAValue:
    """The [C] vector of a per-channel value: ``v`` itself when it is one, the reshape's
    input when ``v`` is a reshape or expand of one, else a new reshape (or expand, for
    one element); of a constant, the constant that folding them gives, computed at once
    (``channel_array``)."""
    if type_of(v).shape == (channels,):
        return v
    if isinstance(channels, int) and (array := constant_value(v)) is not None:
        vector = channel_array(Eager(), array, channels)
        return b.constant(vector, type_of(v).dtype, vector.shape)
    if type_of(v).num_elements() == 1:
        one = v if type_of(v).shape == (1,) else b.reshape(v, [1])
        return b.expand(one, [channels])
    source = v
    while (p := producer(source, mir.ReshapeOp) or producer(source, mir.ExpandOp)) is not None:
        source = p.input
        if type_of(source).shape == (channels,):
            return source
    return b.reshape(v, [channels])


def channel_array(eager: Eager, a: np.ndarray, channels: int) -> np.ndarray:
    """``channel_vector`` of a constant: its ``[C]`` vector (one element expanded)."""
    if a.size == 1:
        return eager.expand(eager.reshape(a, [1]), [channels])
    return eager.reshape(a, [channels])


def is_static(v: SSAValue, budget: int = 32) -> bool:
    """Whether ``v`` is computed from params and constants alone (a weight, not an
    activation): its producers, at most ``budget`` of them, read no graph input."""
    if not isinstance(v, OpResult):
        return False  # a block argument: run-time data
    if isinstance(v.op, _LEAVES):
        return True
    active = _ACTIVE.get()
    if active is not None and reads_run_time_data(v.op, active.run_time):
        return False  # what the walk below would find, at a cost per call
    # The answer does not depend on the order the producers are visited in, so each
    # operand is looked at as it is met (a leaf is never pushed) and an op is counted once
    # (by id: an op's __hash__ is a Python call).
    stack, seen = [v.op], {id(v.op)}
    while stack:
        op = stack.pop()
        if len(seen) > budget or isinstance(op, mir.InputOp) or op.regions:
            return False
        for x in op._operands:  # the tuple behind op.operands
            if not isinstance(x, OpResult):
                return False
            p = x.op
            if id(p) not in seen and not isinstance(p, _LEAVES):
                seen.add(id(p))
                stack.append(p)
    return True


_LEAVES = (mir.ParamOp, mir.ConstantOp)


def reads_run_time_data(op: Operation, known: dict[int, tuple[Operation, bool]]) -> bool:
    """Whether ``op`` reads, at any distance, a graph input, a block argument or an op
    with regions: what makes ``is_static`` False at any budget. ``known`` holds the
    answers found so far (by id, with the op, kept alive so its id is not reused): each
    op is looked at once for all the queries sharing it. An answer holds while the ops
    keep their operands' dependences, as rewrites that keep meaning do (a fused op reads
    what the ops it replaces read)."""
    found = known.get(id(op))
    if found is not None:
        return found[1]
    stack = [op]
    while stack:
        top = stack[-1]
        if id(top) in known:
            stack.pop()
            continue
        depth = len(stack)
        runtime = isinstance(top, mir.InputOp) or bool(top.regions)
        for x in () if runtime else top._operands:
            if not isinstance(x, OpResult):
                runtime = True
                break
            p = x.op
            if isinstance(p, _LEAVES):
                continue
            seen = known.get(id(p))
            if seen is None:
                stack.append(p)  # answered first; ``top`` is looked at again after
            elif seen[1]:
                runtime = True
                break
        if runtime or len(stack) == depth:
            known[id(top)] = (top, runtime)
            del stack[depth - 1 :]  # with the operands it no longer waits for
    return known[id(op)][1]


@dataclass(frozen=True)
class Miss:
    reason: str
    hint: str


@mypyc_attr(allow_interpreted_subclasses=True)  # each pattern's match derives from it
@dataclass
class Match:
    """A fusion to apply; ``absorbed`` lists the replaced ops, producers first."""

    root: Operation
    absorbed: list[Operation]


@dataclass(frozen=True)
class Epilogue:
    """An activation op folding into the fused op before it."""

    op: Operation
    act: Activation
    params: tuple[float, ...] = ()


def epilogue(value: SSAValue, target: Target, conv: bool = False) -> Epilogue | Miss | None:
    """The activation op that can fold into a fused op producing ``value``: a Miss when
    an activation reads ``value`` but cannot fold, None when no activation reads it."""
    readers = users(value)
    acts = [(u, a) for u in readers if (a := activation_of(u)) is not None]
    t = value.type
    if not acts or not (isinstance(t, TensorType) and t.dtype.is_float):
        return None  # fused epilogues are float-only; integer relu stays an op
    op, act = acts[0]
    label = ACTIVATION_LABELS[act]
    if len(readers) > 1:
        return Miss(
            f"{describe_uses(value, 'the biased sum')}, so the {label} cannot fold",
            "the pre-activation value must be read by the activation alone",
        )
    if not target.fuses_activation(act, conv):
        return Miss(
            f"activation {label} not claimed by target {target.name}",
            "the target's fused kernel does not apply it; it runs as its own op",
        )
    return Epilogue(op, act, activation_params(op))


@dataclass
class FoldActivation(Match):
    """An activation folding into a fused op (``absorbed[0]``) that has none."""

    epilogue: Epilogue


def fold_in_place(rewriter: PatternRewriter, m: FoldActivation) -> None:
    """Apply ``m`` to its fused op in place (MLIR's ``modifyOpInPlace``): the op takes the
    activation's properties and, with them, the activation's readers, name and location;
    the activation goes. A new op would repeat the fused op's construction and type
    inference for a change of two properties."""
    fused, act = m.absorbed[0], m.epilogue.op
    ep = m.epilogue
    for name, attr in activation_props(ep.act, ep.params).items():
        if attr is None:
            fused.properties.pop(name, None)
        else:
            fused.properties[name] = attr
    fused.location = act.location
    rewriter.notify_op_modified(fused)
    result = fused.results[0]
    result.name_hint = act.results[0].name_hint
    rewriter.replace(act, [], [result])


def fold_activation(op: Operation, target: Target, conv: bool = False) -> Match | Miss | None:
    """The epilogue rule applied to an existing fused matmul/conv without activation."""
    if not no_activation(op):
        return None
    ep = epilogue(op.results[0], target, conv)
    if not isinstance(ep, Epilogue):
        return ep
    return FoldActivation(ep.op, [op, ep.op], ep)


# ---------------------------------------------------------------------------------
# Context: target, report
# ---------------------------------------------------------------------------------


@dataclass
class FusionContext:
    target: Target
    report: FusionReport = field(init=False)
    run_time: dict[int, tuple[Operation, bool]] = field(init=False, default_factory=dict)
    """``reads_run_time_data``'s answers, shared by every stage the context spans."""

    def __post_init__(self) -> None:
        self.report = FusionReport(self.target.name)

    def unclaimed(self, *names: str) -> Miss | None:
        """A miss for the first of ``names`` the target does not claim."""
        for name in names:
            if not self.target.claims_op(name):
                return Miss(
                    f"{name} not claimed by target {self.target.name}",
                    f"the target has no kernel for {name}; its primitives run instead",
                )
        return None


_ACTIVE: ContextVar[FusionContext | None] = ContextVar("rlx_fusion_context", default=None)


def count_ops(module: ModuleOp) -> int:
    return len(_dispatched(module))


def _dispatched(module: ModuleOp) -> Sequence[Operation]:
    """``dispatched_ops``, listed: those of a graph whose ops hold no regions (no control
    flow, so no trip count either) are its ops but the terminator, read along the block's
    links (the fields behind first_op/next_op) without the generators."""
    out: list[Operation] = []
    for graph in func_graphs(module):
        block, start = graph.body.block, len(out)
        op = block._first_op
        while op is not None:
            if op.regions:
                return list(dispatched_ops(module))
            out.append(op)
            op = op._next_op
        if len(out) > start:
            out.pop()  # the terminator
    return out


class fusion_context:
    """The active fusion context, or a new one (then ``owner`` is True: on exit the
    report is completed and published): ``with fusion_context(target, module) as (ctx,
    owner)``. A class, not a generator: ``fuse`` enters one per stage."""

    def __init__(self, target: Target, module: ModuleOp):
        self.target = target
        self.module = module
        self.owned: tuple[FusionContext, Token[FusionContext | None]] | None = None

    def __enter__(self) -> tuple[FusionContext, bool]:
        active = _ACTIVE.get()
        if active is not None:
            return active, False
        ctx = FusionContext(self.target)
        ctx.report.ops_before = count_ops(self.module)
        self.owned = (ctx, _ACTIVE.set(ctx))
        return ctx, True

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self.owned is None:
            return
        ctx, token = self.owned
        _ACTIVE.reset(token)
        if kind is None:
            ctx.report.ops_after = count_ops(self.module)
            publish(ctx.report)


# ---------------------------------------------------------------------------------
# Patterns and passes
# ---------------------------------------------------------------------------------


@mypyc_attr(allow_interpreted_subclasses=True)  # every fusion pattern derives from it
class FusionPattern(ReplacingPattern):
    name: ClassVar[str]
    """The pattern's name in the FusionReport."""
    roots: ClassVar[tuple[type[Operation], ...]]
    needs: ClassVar[tuple[type[Operation], ...]] = ()
    """Op kinds one of which every chain the pattern recognises holds: in a module
    without any, ``match`` finds nothing (and the drivers do not try it). Empty: every
    module may hold one."""

    def __init__(self, ctx: FusionContext):
        self.ctx = ctx

    @property
    def target(self) -> Target:
        return self.ctx.target

    @property
    def active(self) -> bool:
        """Whether ``match`` can find anything at all in this context (the drivers do not
        try a pattern that cannot)."""
        return True

    def match(self, op: Operation) -> Match | Miss | None:
        raise NotImplementedError

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        raise NotImplementedError

    def fusion(self, op: Operation) -> Match | None:
        """The fusion to apply at ``op`` (an op of ``roots``), if any."""
        # Graph-level ops and those of control-flow regions; an elementwise region's body
        # belongs to its (already fused) kernel.
        if not fusible_here(op):
            return None
        m = self.match(op)
        # A chain fuses within one block: absorbing a producer from outside a loop's
        # body would run it every iteration.
        if isinstance(m, Match) and all(o.parent is op.parent for o in m.absorbed):
            return m
        return None

    def apply(self, m: Match, rewriter: PatternRewriter) -> None:
        """Rewrite a fusion ``fusion`` found and record it in the report. An activation
        folding into a fused op (``fold_activation``) changes that op in place, whatever
        the pattern: ``rewrite`` handles the pattern's own matches."""
        if isinstance(m, FoldActivation):
            fold_in_place(rewriter, m)
        else:
            self.rewrite(m, rewriter)
        self.ctx.report.record(self.name, len(m.absorbed))

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, self.roots) and (m := self.fusion(op)) is not None:
            self.apply(m, rewriter)

    @staticmethod
    def builder(op: Operation) -> tuple[GraphBuilder, list[Operation]]:
        """A folding builder located at ``op``: what a rewrite computes from constants
        alone (a batch norm folded into a conv's weights, say) is evaluated as it is
        built, as MLIR's ``createOrFold`` does, and as constant-fold (which runs after
        fusion, with the same size cap) would have done."""
        ops: list[Operation] = []
        return FoldingBuilder(ops.append, op.location, DEFAULT_MAX_ELEMENTS), ops

    @staticmethod
    def replace(
        rewriter: PatternRewriter,
        m: Match,
        ops: list[Operation],
        results: Sequence[SSAValue],
    ) -> None:
        """Insert ``ops`` before the root, let ``results`` replace the root's results and
        erase the absorbed ops (dead now), consumers first. The constants folding left
        unread on the way (a chain's intermediate values) are not inserted."""
        kept = {id(v.owner) for v in results}
        ops = [
            o for o in ops if type(o) is not mir.ConstantOp or o.results[0].uses or id(o) in kept
        ]
        rewriter.replace(m.root, ops, list(results))
        absorbed = [op for op in m.absorbed if op is not m.root]
        if left := erase_unused(absorbed, rewriter.erase):
            names = ", ".join(op.name for op in left)
            raise AssertionError(f"fused ops still in use: {names}")


def fusible_here(op: Operation) -> bool:
    """Whether ``op`` is in a graph's block or a control-flow region's."""
    return isinstance(op.parent_op(), func.FuncOp | mir.ControlFlowOp)


P = TypeVar("P", bound=RewritePattern)


_MAY_FIND: dict[object, bool] = {}
"""``RootTable.may_find`` by the patterns' roots, needs and activity and the kinds held."""
_MAY_FIND_KEPT = 4096


class RootTable(Generic[P]):
    """Which of ``patterns`` to try on an op: those rooted at its class (a pattern's
    ``roots``; every op for a pattern without), in pattern order, less the fusion
    patterns that cannot find anything (not ``active``, or the module holds none of the
    kinds they ``need``). isinstance is asked once per class, not once per op and
    pattern."""

    def __init__(self, patterns: Sequence[P], held: set[type[Operation]] | None = None):
        self.patterns = patterns
        self.held: set[type[Operation]] = set() if held is None else held
        """The op kinds the module may hold: those ``survey`` and ``saw`` were shown (a
        superset when ops were erased since)."""
        self._roots = tuple(roots_of(p) for p in patterns)
        self._rooted_at = RootedAt(self._roots)  # shared by the tables of these patterns
        self._usable: dict[type[Operation], tuple[P, ...]] = {}
        self._usable_for = 0  # the number of kinds held when ``_usable`` was filled
        self._findable: list[bool | None] = [None] * len(patterns)

    def of(self, kind: type[Operation]) -> tuple[P, ...]:
        """The patterns to try on an op of class ``kind``."""
        if len(self.held) != self._usable_for:
            self._forget()
        found = self._usable.get(kind)
        return self._fill(kind) if found is None else found

    def _forget(self) -> None:
        """A kind joined: a pattern may need it."""
        self._usable.clear()
        self._findable = [None] * len(self.patterns)
        self._usable_for = len(self.held)

    def _fill(self, kind: type[Operation]) -> tuple[P, ...]:
        found = tuple(self.patterns[i] for i in self._rooted_at(kind) if self._is_findable(i))
        self._usable[kind] = found
        return found

    def _is_findable(self, index: int) -> bool:
        known = self._findable[index]
        if known is None:
            known = self._findable[index] = self._findable_now(self.patterns[index])
        return known

    def _findable_now(self, pattern: P) -> bool:
        if not getattr(pattern, "active", True):
            return False
        needs: tuple[type[Operation], ...] = getattr(pattern, "needs", ())
        return not needs or any(_is_a(kind, needs) for kind in self.held)

    def may_find(self) -> bool:
        """Whether an op of a kind held has a pattern to try (remembered across tables:
        ``fuse`` asks it of every stage, most of which find nothing to try)."""
        key = (
            self._roots,
            tuple(getattr(p, "needs", ()) for p in self.patterns),
            tuple(getattr(p, "active", True) for p in self.patterns),
            frozenset(self.held),
        )
        known = _MAY_FIND.get(key)
        if known is None:
            if len(_MAY_FIND) >= _MAY_FIND_KEPT:
                _MAY_FIND.clear()
            known = _MAY_FIND[key] = self._may_find()
        return known

    def _may_find(self) -> bool:
        if len(self.held) != self._usable_for:
            self._forget()
        usable = self._usable
        for kind in list(self.held):  # ``of`` inlined: this runs per stage and kind
            found = usable.get(kind)
            if found is None:
                found = self._fill(kind)
            if found:
                return True
        return False

    def saw(self, op: Operation) -> None:
        """Note the kinds of an op that joined the module and of the ops in its regions
        (a rewriter's insertion handler)."""
        for nested in op.walk() if op.regions else (op,):
            self.held.add(type(nested))

    def survey(self, module: Operation, reverse: bool) -> list[Operation]:
        """The ops of ``module`` some pattern is rooted at, in ``module.walk(reverse=...)``
        order (an op, then the ops of its regions); every op's kind is noted."""
        self.held.add(type(module))
        out: list[Operation] = [module] if self._rooted_at(type(module)) else []
        self._gather(module, reverse, out)
        return out

    def _gather(self, parent: Operation, reverse: bool, out: list[Operation]) -> None:
        held, rooted = self.held, self._rooted_at.known  # this loop runs per op and round
        for region in reversed(parent.regions) if reverse else parent.regions:
            for block in reversed(region.blocks) if reverse else region.blocks:
                # The fields behind last_op/first_op and prev_op/next_op (properties).
                op = block._last_op if reverse else block._first_op
                while op is not None:
                    kind = type(op)
                    held.add(kind)
                    if rooted[kind] if kind in rooted else self._rooted_at(kind):
                        out.append(op)
                    if op.regions:
                        self._gather(op, reverse, out)
                    op = op._prev_op if reverse else op._next_op


@cache
def _is_a(kind: type[Operation], kinds: tuple[type[Operation], ...]) -> bool:
    """``issubclass`` remembered: the tables ask it per stage for the same classes."""
    return issubclass(kind, kinds)


_KINDS: ContextVar[tuple[Operation, set[type[Operation]]] | None] = ContextVar(
    "rlx_fusion_kinds", default=None
)


@contextmanager
def sharing_kinds(module: ModuleOp) -> Iterator[None]:
    """Within the block, ``run_patterns`` and ``scan`` on ``module`` share what op kinds
    it may hold (those it held on entry, and every kind a rewrite inserted since; ops
    erased are not subtracted), so a call whose patterns are rooted at none of them, or
    need none, returns without walking the module. Inside the block ops may be erased
    freely but inserted only by ``run_patterns``' rewriters."""
    token = _KINDS.set((module, op_kinds(module)))
    try:
        yield
    finally:
        _KINDS.reset(token)


K = TypeVar("K", bound=type[FusionPattern])

_FINDABLE: dict[tuple[tuple[type[FusionPattern], ...], frozenset[type[Operation]]], tuple] = {}


def findable(module: Operation, kinds: Sequence[K]) -> Sequence[K]:
    """The patterns of ``kinds`` that, as far as ``sharing_kinds`` knows, may find
    something in ``module``: it may hold an op one is rooted at and one of the kinds it
    ``needs`` (all of ``kinds`` when it does not know). ``fuse`` asks it of each stage
    before making its patterns, most of which a model gives nothing to try, and of the
    near-miss scan."""
    shared = _KINDS.get()
    if shared is None or shared[0] is not module:
        return kinds
    key = (tuple(kinds), frozenset(shared[1]))
    known = _FINDABLE.get(key)
    if known is None:
        if len(_FINDABLE) >= _MAY_FIND_KEPT:
            _FINDABLE.clear()
        known = _FINDABLE[key] = tuple(k for k in kinds if _may_hold_match(k, key[1]))
    return known


def _may_hold_match(kind: type[FusionPattern], held: frozenset[type[Operation]]) -> bool:
    """Whether ``held`` has a kind ``kind`` is rooted at and, if it needs any, one of those."""
    roots: tuple[type[Operation], ...] = getattr(kind, "roots", (Operation,))
    needs: tuple[type[Operation], ...] = getattr(kind, "needs", ())
    return any(_is_a(h, roots) for h in held) and (not needs or any(_is_a(h, needs) for h in held))


def _table(module: Operation, patterns: Sequence[P]) -> RootTable[P]:
    """A root table for ``module``, holding the kinds ``sharing_kinds`` shares for it."""
    shared = _KINDS.get()
    return RootTable(patterns, shared[1] if shared is not None and shared[0] is module else None)


def run_patterns(module: ModuleOp, patterns: Sequence[RewritePattern], reverse: bool) -> None:
    """Apply ``patterns`` to a fixpoint, in rounds: each visits the ops of the patterns'
    root kinds in block order (reversed with ``reverse``), tries the patterns in order on
    each and skips the ops an earlier rewrite erased; a round that changes nothing ends it.
    (xDSL's walker makes a rewriter per op of the module and re-walks it whole.) The
    patterns insert and erase ops, never move one within its block, so op order is
    tracked across the run (``tracking_block_order``). A fusion pattern gets a rewriter
    only for the fusion it found, and is not tried while the module holds none of the
    op kinds it ``needs`` (the kinds ops inserted by a rewrite count at once)."""
    table = _table(module, patterns)
    if table.held and not table.may_find():
        return  # what sharing_kinds knows: no round would try a pattern
    with tracking_block_order():
        while True:
            changed = False
            ops = table.survey(module, reverse)
            if not table.may_find():
                return  # nothing to find, so nothing is inserted that could change that
            for op in ops:
                if op.parent is None:
                    continue  # erased (or replaced) by a rewrite earlier in this round
                for pattern in table.of(type(op)):
                    if _rewrite(pattern, op, table):
                        changed = True
                        break
            if not changed:
                return


def _rewrite(pattern: RewritePattern, op: Operation, table: RootTable[RewritePattern]) -> bool:
    """Apply ``pattern`` at ``op``, telling ``table`` what it inserts; whether it changed
    anything."""
    if isinstance(pattern, FusionPattern):
        m = pattern.fusion(op)
        if m is None:
            return False
        rewriter = PatternRewriter(op)
        rewriter.operation_insertion_handler.append(table.saw)
        pattern.apply(m, rewriter)
    else:
        rewriter = PatternRewriter(op)
        rewriter.operation_insertion_handler.append(table.saw)
        pattern.match_and_rewrite(op, rewriter)
    return rewriter.has_done_action


def scan(module: ModuleOp, ctx: FusionContext, kinds: Sequence[type[FusionPattern]]) -> None:
    """Record every near miss of the given patterns in the module as it is now."""
    table = _table(module, [k(ctx) for k in findable(module, kinds)])
    if not table.held:
        table.survey(module, reverse=False)  # the op kinds the patterns' ``needs`` look for
    if not table.may_find():
        return
    with tracking_block_order():
        for op in _dispatched(module):
            for p in table.of(type(op)):
                m = p.match(op)
                if isinstance(m, Miss):
                    ctx.report.missed.append(
                        MissedFusion(p.name, op.name, location_str(op), m.reason, m.hint)
                    )
