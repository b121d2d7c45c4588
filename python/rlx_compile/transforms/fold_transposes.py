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
    FusionPass,
    FusionPattern,
    Match,
    Miss,
    describe_uses,
    is_static,
    producer,
    sole_user,
)
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


def _undoes(inner: tuple[int, ...], outer: tuple[int, ...]) -> bool:
    """Whether transposing by ``inner`` and then by ``outer`` is the identity."""
    return len(inner) == len(outer) and all(inner[o] == i for i, o in enumerate(outer))


def _elementwise(op: Operation) -> bool:
    return op.has_trait(Elementwise) and len(op.results) == 1 and not op.regions


class FoldTransposes(FusionPattern):
    name = "transpose_pair"
    roots = (mir.TransposeOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.TransposeOp)
        m = TransposePair(op, [], tuple(op.props().ints("perm")))
        if not self._tree(op.input, op, m, type_of(op.input).shape) or not m.leaves:
            return None
        if m.blocked is not None:
            return m.blocked
        m.absorbed = [*m.tree, op]
        return m

    def _tree(
        self, v: SSAValue, reader: Operation, m: TransposePair, shape: tuple[Dim, ...]
    ) -> bool:
        """Add the tree computing ``v`` (read by ``reader``) to ``m``, producers first;
        False when ``v`` is neither a leaf nor an elementwise op the tree can take. An
        intermediate with other readers is noted in ``m.blocked``."""
        inner = producer(v, mir.TransposeOp)
        if inner is not None and _undoes(tuple(inner.props().ints("perm")), m.perm):
            m.leaves[v] = inner.input
            return True
        if reader is not m.root and is_static(v):
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
        b, ops = self.builder(m.root)
        out = type_of(m.root.results[0])
        values: dict[SSAValue, SSAValue] = dict(m.leaves)
        for p in m.tree:
            operands = [values[x] if x in values else _weight(b, x, m.perm) for x in p.operands]
            t = type_of(p.results[0])
            new = type(p).create(
                operands=operands,
                result_types=[t.with_shape(out.shape)],
                properties=dict(p.properties),
                attributes=dict(p.attributes),
            )
            values[p.results[0]] = b.emit(new).results[0]
        self.replace(rewriter, m, ops, [values[m.root.operands[0]]])
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
