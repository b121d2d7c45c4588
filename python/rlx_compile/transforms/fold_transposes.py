"""``fold-transposes``: a transpose that undoes the transposes feeding an elementwise
computation is folded away with them (onnxruntime's transpose optimizer).

    transpose(f(transpose(x, p), transpose(y, p), w), q)  ->  f(x, y, w')    (p then q: identity)

Converters from channels-last frameworks (TensorFlow, Keras, Caffe2) wrap every conv in
a pair of layout transposes: ``conv -> NHWC -> bias, batch norm, activation, residual
add -> NCHW -> conv``. ``f`` is a tree of elementwise ops whose data leaves are all
transposes by ``p``; its other leaves are weights (computed from params and constants
alone), which are transposed by ``q`` instead (``w'``: ops on the parameters, run once).
Every op of the tree keeps the full transposed shape, and every intermediate must be
read by the tree alone (a leaf transpose may have other readers: it then stays for
them). The tree then runs in the untransposed layout, where the conv folds take the
bias and batch norm and the activation becomes the conv's epilogue. Exact: the same
operations on the same elements.

The undoing is up to unit dims: between the tree and ``q`` may stand a reshape that only
adds or drops unit dims (an ExpandDims before a 1-D conv or pool,
``transpose(reshape(f(...)), q)``), and ``p`` then ``q`` need only bring the dims of more
than one element back in their order; the tree's result is then reshaped to the root's
type (a view). All leaves share the one ``p``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from rlx_compile.builder import GraphBuilder, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.traits import Elementwise
from rlx_compile.dialects.types import Dim
from rlx_compile.fusion.base import (
    FusionPattern,
    Match,
    Miss,
    describe_uses,
    is_static,
    producer,
    sole_user,
)
from rlx_compile.fusion.stage import FusionPass
from rlx_compile.ir import erase_unused

HINT = "the layout transposes fold only when nothing else reads a value between them"


@dataclass
class TransposePair(Match):
    perm: tuple[int, ...]
    """The root's perm (``q``)."""
    tree: list[Operation] = field(default_factory=list)
    """The elementwise ops between the transposes, producers first."""
    leaves: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """Each transposed data leaf (a transpose's result) -> the untransposed value."""
    blocked: Miss | None = None
    """Why the tree cannot fold: an intermediate read outside it."""
    order: list[int] = field(default_factory=list)
    """The axes of the tree's result of more than one element, in the order the root's
    result holds them."""
    top: Operation | None = None
    """The op reading the tree's result: the root, or the unit-dim reshape before it."""
    leaf_perm: tuple[int, ...] | None = None
    """The leaves' perm (``p``)."""


def _non_unit(shape: tuple[Dim, ...]) -> list[int]:
    return [i for i, d in enumerate(shape) if d != 1]


def _root_order(op: mir.TransposeOp, y: SSAValue) -> list[int]:
    """The axes of ``y`` of more than one element in the order ``op``'s result holds them
    (``y`` is ``op``'s input, or the input of a reshape that only adds or drops unit dims
    before it)."""
    perm, out = op.props().ints("perm"), type_of(op.results[0]).shape
    of_input = dict(zip(_non_unit(type_of(op.input).shape), _non_unit(type_of(y).shape),
                        strict=True))  # fmt: skip
    return [of_input[perm[k]] for k in _non_unit(out)]


def _restores(p: tuple[int, ...], shape: tuple[Dim, ...], order: list[int]) -> bool:
    """Whether undoing the transpose by ``p`` that made ``shape`` lays its dims of more
    than one element out in ``order``."""
    inverse = _inverse(p)
    return [inverse[i] for i in range(len(p)) if shape[inverse[i]] != 1] == order


def _inverse(p: tuple[int, ...]) -> tuple[int, ...]:
    out = [0] * len(p)
    for i, a in enumerate(p):
        out[a] = i
    return tuple(out)


def _unit_reshape(v: SSAValue) -> mir.ReshapeOp | None:
    """The reshape making ``v`` when it only adds or drops unit dims."""
    r = producer(v, mir.ReshapeOp)
    if r is None:
        return None
    x, y = type_of(r.input).shape, type_of(v).shape
    return r if [x[i] for i in _non_unit(x)] == [y[i] for i in _non_unit(y)] else None


def _elementwise(op: Operation) -> bool:
    return op.has_trait(Elementwise) and len(op.results) == 1 and not op.regions


class FoldTransposes(FusionPattern):
    name = "transpose_pair"
    roots = (mir.TransposeOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.TransposeOp)
        m = TransposePair(op, [], tuple(op.props().ints("perm")))
        y, m.top = op.input, op
        reshape = _unit_reshape(y)
        if reshape is not None and sole_user(y) is op:
            y, m.top = reshape.input, reshape
        m.order = _root_order(op, y)
        if not self._tree(y, m.top, m, type_of(y).shape) or not m.leaves:
            return None
        if m.blocked is not None:
            return m.blocked
        m.absorbed = [*m.tree, *([] if m.top is op else [m.top]), op]
        return m

    def _tree(
        self, v: SSAValue, reader: Operation, m: TransposePair, shape: tuple[Dim, ...]
    ) -> bool:
        """Add the tree computing ``v`` (read by ``reader``) to ``m``, producers first;
        False when ``v`` is neither a leaf nor an elementwise op the tree can take. An
        intermediate with other readers is noted in ``m.blocked``."""
        inner = producer(v, mir.TransposeOp)
        if inner is not None:
            perm = tuple(inner.props().ints("perm"))
            if m.leaf_perm in (None, perm) and _restores(perm, shape, m.order):
                m.leaf_perm = perm
                m.leaves[v] = inner.input
                return True
        if reader is not m.top and is_static(v):
            return True  # a weight operand: transposed by q in the rewrite
        p = v.owner if isinstance(v, OpResult) else None
        if p is None or not _elementwise(p) or type_of(v).shape != shape:
            return False
        if p in m.tree:
            return True
        if sole_user(v) is not reader and m.blocked is None:
            m.blocked = Miss(describe_uses(v, f"the {p.name} result"), HINT)
        if not all(self._tree(x, p, m, shape) for x in p.operands):
            return False
        m.tree.append(p)
        return True

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, TransposePair)
        assert m.leaf_perm is not None and m.top is not None
        b, ops = self.builder(m.root)
        undo = _inverse(m.leaf_perm)
        tree_shape = type_of(m.top.operands[0]).shape
        shape = tuple(tree_shape[a] for a in undo)
        values: dict[SSAValue, SSAValue] = dict(m.leaves)
        for p in m.tree:
            operands = [values[x] if x in values else _weight(b, x, undo) for x in p.operands]
            t = type_of(p.results[0])
            new = type(p).create(
                operands=operands,
                result_types=[t.with_shape(shape)],
                properties=dict(p.properties),
                attributes=dict(p.attributes),
            )
            values[p.results[0]] = b.emit(new).results[0]
        y = values[m.top.operands[0]]
        out = type_of(m.root.results[0])
        self.replace(rewriter, m, ops, [y if shape == out.shape else b.reshape(y, out.shape)])
        # A leaf transpose no one else reads goes now: a conv reading into it would
        # otherwise look read twice to the conv folds after this stage.
        erase_unused([leaf.owner for leaf in m.leaves if isinstance(leaf.owner, Operation)],
                     rewriter.erase)  # fmt: skip


def _weight(b: GraphBuilder, w: SSAValue, perm: tuple[int, ...]) -> SSAValue:
    """A weight operand of the tree in the untransposed layout: its shape padded to the
    tree's rank with leading ones, transposed by ``perm`` (one element: as it is)."""
    t = type_of(w)
    if all(d == 1 for d in t.shape):
        return w
    padded = [1] * (len(perm) - t.rank) + list(t.shape)
    return b.transpose(b.reshape(w, padded) if t.rank < len(perm) else w, perm)


@dataclass(frozen=True)
class FoldTransposesPass(FusionPass):
    """Fold transpose pairs around elementwise computations (channels-last converters)."""

    name = "fold-transposes"
    PATTERNS = (FoldTransposes,)
