"""``fuse-rms-norm``: RMSNorm as exporters spell it, as one ``mir.rms_norm``.

``x · reciprocal(sqrt(mean(x², axes a..rank-1, keepdims) + eps)) · gamma`` in the
spellings PyTorch exports and hand-written models use: ``rsqrt(...)``, ``1 / sqrt(...)``,
``x / sqrt(...)`` or ``(...)^-0.5`` for the inverse root; ``pow(x, 2)`` or ``x · x`` for
the square; gamma on either side of the product or inside it (``(gamma · x) · r``), or no
gamma at all (the norm's scale is then the constant 1); no eps (0). Each intermediate must
be read by the chain alone; ``x`` may have any readers. A second pattern folds a later
``· gamma`` into an unscaled ``mir.rms_norm`` (``rms_norm_scale``), so the pieces meet
whatever order they are found in.

Once the norm is one op, ``fuse-residual-norm`` can take the residual add before it.

Only f32/f64 chains are recognised: the fused op computes in f64 and rounds once, which
the f32 decomposition matches to a few ulp; an f16/bf16 decomposition squares and sums in
f16 (it overflows for |x| > 256), so the fused op would not preserve its numbers (such a
chain is reported as a near miss). HF models in f16 cast to f32 around the norm, which
is an f32 chain.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.utils.exceptions import VerifyException

from rlx_compile.builder import named, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, broadcast_shapes
from rlx_compile.fusion.base import (
    FusionPattern,
    Match,
    Miss,
    chain_miss,
    producer,
    scalar_constant,
    sole_user,
)
from rlx_compile.fusion.stage import FusionPass

FUSED = mir.RmsNormOp.name
EXACT_DTYPES = (DType.F32, DType.F64)
"""Chains whose arithmetic the fused op reproduces within a few ulp."""
MAX_TREE_OPS = 3
"""Muls/divs of the outer product (x · r · gamma needs two; a third absorbs 1/sqrt)."""
HINT = "the RMSNorm intermediates must be read by the norm alone"


@dataclass
class _Factor:
    value: SSAValue
    reader: Operation
    """The op of the product tree that reads ``value``."""


@dataclass
class _Product:
    """A tree of muls and divs: prod(num) / prod(den)."""

    ops: list[Operation]
    num: list[_Factor] = field(default_factory=list)
    den: list[_Factor] = field(default_factory=list)


def _product(root: mir.MulOp | mir.DivOp) -> _Product:
    """The factors of ``root``, expanding inner muls/divs that the tree alone reads."""
    tree = _Product([root])

    def visit(op: mir.MulOp | mir.DivOp, numerator: bool) -> None:
        flip = isinstance(op, mir.DivOp)
        for v, num in ((op.lhs, numerator), (op.rhs, numerator != flip)):
            inner = v.op if isinstance(v, OpResult) else None
            if (
                isinstance(inner, mir.MulOp | mir.DivOp)
                and len(tree.ops) < MAX_TREE_OPS
                and sole_user(v) is op
            ):
                tree.ops.append(inner)
                visit(inner, num)
            else:
                (tree.num if num else tree.den).append(_Factor(v, op))

    visit(root, True)
    return tree


Links = list[tuple[SSAValue, Operation, str]]
"""(value, the one op that may read it, what it is) along a chain."""


@dataclass
class _Radicand:
    """mean(x²) [+ eps] over the trailing axes from ``axis``: its ops, producers first."""

    ops: list[Operation]
    links: Links
    x: SSAValue
    axis: int
    eps: float


@dataclass
class _InverseRms(_Radicand):
    """1/sqrt(radicand) as a factor of the product."""

    factor: _Factor


def _radicand(v: SSAValue, reader: Operation) -> _Radicand | None:
    """``v`` = mean(x²) [+ eps] over trailing axes with keepdims."""
    ops: list[Operation] = []
    links: Links = [(v, reader, "mean(x²) + eps")]
    eps = 0.0
    mean = producer(v, mir.ReduceMeanOp)
    add = producer(v, mir.AddOp)
    if add is not None:
        for m, c in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            reduced = producer(m, mir.ReduceMeanOp)
            e = scalar_constant(c) if reduced is not None else None
            if e is not None and v.type == m.type and reduced is not None:
                mean, eps = reduced, e
                ops.append(add)
                links.append((m, add, "the mean of squares"))
                break
    if mean is None:
        return None
    axes = mean.props().ints("axes")
    rank = type_of(mean.input).rank
    if not axes or not mean.props().flag("keepdims") or list(axes) != list(range(axes[0], rank)):
        return None
    x = _squared(mean.input)
    if x is None:
        return None
    ops[:0] = [mean.input.owner, mean]  # type: ignore[list-item]
    links.append((mean.input, mean, "the square"))
    return _Radicand(ops, links, x, axes[0], eps)


def _squared(v: SSAValue) -> SSAValue | None:
    """x for ``v`` = x · x or pow(x, 2)."""
    mul = producer(v, mir.MulOp)
    if mul is not None and mul.lhs is mul.rhs:
        return mul.lhs
    pw = producer(v, mir.PowOp)
    if pw is not None and scalar_constant(pw.rhs) == 2.0 and v.type == pw.lhs.type:
        return pw.lhs
    return None


def _root(v: SSAValue, inverse: bool) -> tuple[Operation, SSAValue] | None:
    """(op, w) for ``v`` = rsqrt(w) or w^-0.5 (``inverse``), sqrt(w) or w^0.5 (not)."""
    if (op := producer(v, mir.RsqrtOp if inverse else mir.SqrtOp)) is not None:
        return op, op.input
    pw = producer(v, mir.PowOp)
    if pw is not None and scalar_constant(pw.rhs) == (-0.5 if inverse else 0.5):
        return pw, pw.lhs
    return None


def _inverse_rms(f: _Factor, numerator: bool) -> _InverseRms | None:
    """The inverse root in a numerator factor (rsqrt(w), w^-0.5, reciprocal of a root)
    or the root in a denominator one (sqrt(w), w^0.5), of w = mean(x²) + eps."""
    v = f.value
    outer: list[Operation] = []
    links: Links = [(v, f.reader, "the inverse root")]
    rec = producer(v, mir.ReciprocalOp) if numerator else None
    if rec is not None:
        outer.append(rec)
        links.append((rec.input, rec, "the root"))
        v, numerator = rec.input, False
    root = _root(v, inverse=numerator)
    found = _radicand(root[1], root[0]) if root is not None else None
    if root is None or found is None:
        return None
    ops = [*found.ops, root[0], *outer]
    return _InverseRms(ops, links + found.links, found.x, found.axis, found.eps, f)


@dataclass
class RmsNormMatch(Match):
    x: SSAValue
    gamma: SSAValue | None
    axis: int
    eps: float


def fits_tail(gamma: SSAValue, x: SSAValue, axis: int) -> bool:
    """Whether ``gamma`` broadcasts to ``x``'s dims ``axis..rank-1`` (a norm's scale or
    bias)."""
    tail = tuple(type_of(x).shape[axis:])
    try:
        return broadcast_shapes(tail, type_of(gamma).shape) == tail
    except VerifyException:
        return False


class FuseRmsNorm(FusionPattern):
    name = "rms_norm"
    roots = (mir.MulOp, mir.DivOp)
    needs = (mir.ReduceMeanOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MulOp | mir.DivOp)
        tree = _product(op)
        found = [r for f in tree.num if (r := _inverse_rms(f, True)) is not None]
        found += [r for f in tree.den if (r := _inverse_rms(f, False)) is not None]
        if len(found) != 1:
            return None
        inv = found[0]
        factor = inv.factor
        rest = [f for f in tree.num if f is not factor and scalar_constant(f.value) != 1.0]
        extra_den = [f for f in tree.den if f is not factor]
        xs = [f for f in rest if f.value is inv.x]
        if not xs or extra_den:
            return None
        others = [f for f in rest if f is not xs[0]]
        if len(others) > 1 or op.results[0].type != inv.x.type:
            return None
        gamma = others[0].value if others else None
        if gamma is not None and not fits_tail(gamma, inv.x, inv.axis):
            return None
        if (miss := chain_miss(inv.links, HINT)) is not None:
            return miss
        dtype = type_of(inv.x).dtype
        if dtype not in EXACT_DTYPES:
            return Miss(
                f"the norm is computed in {dtype.value}, where the fused op (one rounding) "
                "would not reproduce it",
                "compute the norm in f32 (cast around it, as HF models do)",
            )
        if (miss := self.ctx.unclaimed(FUSED)) is not None:
            return miss
        absorbed = [*inv.ops, *reversed(tree.ops)]
        return RmsNormMatch(op, absorbed, inv.x, gamma, inv.axis, inv.eps)

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, RmsNormMatch)
        b, ops = self.builder(m.root)
        gamma = m.gamma if m.gamma is not None else named(b.scalar_like(1.0, m.x), "one")
        self.replace(rewriter, m, ops, [b.rms_norm(m.x, gamma, axis=m.axis, eps=m.eps)])


@dataclass
class ScaleMatch(Match):
    norm: mir.RmsNormOp
    gamma: SSAValue


class FoldRmsNormScale(FusionPattern):
    """``rms_norm(x, 1) · gamma`` -> ``rms_norm(x, gamma)`` (either operand order)."""

    name = "rms_norm_scale"
    roots = (mir.MulOp,)
    needs = (mir.RmsNormOp,)

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MulOp)
        for a, g in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            norm = producer(a, mir.RmsNormOp)
            if (
                norm is None
                or norm.bias is not None
                or scalar_constant(norm.scale) != 1.0
                or op.result.type != a.type
                or not fits_tail(g, norm.input, norm.props().int("axis"))
            ):
                continue
            if sole_user(a) is not op:
                return None  # the unscaled norm is used as it is
            return ScaleMatch(op, [norm, op], norm, g)
        return None

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, ScaleMatch)
        b, ops = self.builder(m.root)
        p = m.norm.props()
        y = b.rms_norm(m.norm.input, m.gamma, axis=p.int("axis"), eps=p.float("epsilon"))
        self.replace(rewriter, m, ops, [y])


@dataclass(frozen=True)
class FuseRmsNormPass(FusionPass):
    """Recognise x · rsqrt(mean(x²) + eps) · gamma as one mir.rms_norm."""

    name = "fuse-rms-norm"
    PATTERNS = (FuseRmsNorm, FoldRmsNormScale)
    # Outermost product first: x · r · gamma fuses whole before x · r alone could.
    WALK_REVERSE = True
