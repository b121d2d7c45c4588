"""``fuse-attention``: scaled dot-product attention as exporters decompose it, as one
``mir.attention``.

Rooted at ``matmul(softmax(scores, last axis), v')`` with
``scores = matmul(q', k') [· c] [+ mask]`` on ``[B, H, S, D]`` frames, where
- ``q'`` is q, ``k'`` is kᵀ and ``v'`` is v, each reached through a chain of reshapes,
  transposes, expands and multiplications (or divisions) by one-element constants: the
  scale may sit on q and k (split as √s each, as PyTorch's exporter writes it), on the
  scores, on any mix of them, or be absent (scale 1);
- k and v may carry the grouped-query ``repeat_interleave`` of their heads (reshape to
  ``[B, Hkv, 1, S, D]``, expand to ``[B, Hkv, n, S, D]``, reshape to ``[B, Hkv·n, S, D]``):
  the fused op reads the ``Hkv``-head tensors (query head h reads key head h // n), so
  the repeat is never materialised;
- the mask is an additive tensor broadcasting to the scores -- a constant that is 0 on
  and below the diagonal and -inf or <= -1e9 above it (PyTorch writes finfo.min) becomes
  ``kind causal``, an all-zero constant no mask, anything else ``explicit`` with the mask
  operand -- or ``where(m, scores, -inf)`` (``where(m, -inf, scores)``: the mask is
  ``not m``), a bool mask.
The probabilities may pass through PyTorch's NaN guard, ``where(isnan(p), 0, p)`` (what
a row masked entirely gives): the fused op then has ``zero_nan``.
The chains are followed by their layout: each dim of the operand as the list of source
axes (and broadcast repeats) it holds, so any order of views that means kᵀ (PyTorch's
exporter transposes k as a [B·H, S, D] reshape) is recognised, and none that means
anything else. Each chain stops at a value read elsewhere; the scores, the scaled and
masked scores and the probabilities must be read by the chain alone.

Only f32/f64: the fused op computes in f64 and rounds once, so it matches an f32
decomposition within 1e-5 relative (the scale is applied to the product instead of to q
and k, and the softmax is evaluated once), while an f16/bf16 decomposition overflows and
rounds where the fused op does not. A scale within 1e-6 relative of 1/√D is left
implicit (the exporter's √s·√s rounds in f32).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.utils.exceptions import VerifyException

from rlx_compile.builder import GraphBuilder, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import ComparePredicate, MaskKind
from rlx_compile.dialects.traits import ViewLike
from rlx_compile.dialects.types import Dim, DType, Shape, TensorType
from rlx_compile.folding import constant_value
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

FUSED = mir.AttentionOp.name
EXACT_DTYPES = (DType.F32, DType.F64)
HINT = "the attention's intermediates must be read by the attention alone"
MASKED = -1e9
"""Additive mask entries at or below this are as good as -inf: softmax gives them 0.
(A half-precision mask cannot hold it: there its lowest finite value is the mark.)"""
SCALE_RTOL = 1e-6

# ---------------------------------------------------------------------------------
# Layouts: which source axes each dim of a view chain's result holds
# ---------------------------------------------------------------------------------

Atom = tuple[int | str, Dim]
"""(source axis, size), or ("rep<i>", size) for a dim an expand broadcast."""
Layout = list[list[Atom]]
"""Per result dim, the row-major atoms it merges (size-1 atoms are left out)."""


def _identity(shape: Shape) -> Layout:
    return [[(i, d)] if d != 1 else [] for i, d in enumerate(shape)]


def _regroup(atoms: list[Atom], shape: Shape) -> Layout | None:
    """``atoms`` (row-major) grouped into the dims of ``shape``; None when a dim would
    split an atom."""
    out: Layout = []
    rest = list(atoms)
    for n in shape:
        group: list[Atom] = []
        if n != 1:
            size: int = 1
            while not group or size != n:
                if not rest:
                    return None
                atom = rest.pop(0)
                if not (isinstance(n, int) and isinstance(atom[1], int)):
                    if group or atom[1] != n:
                        return None
                    group = [atom]
                    break
                group.append(atom)
                size *= atom[1]
                if size > n:
                    return None
        out.append(group)
    return out if not rest else None


def _view_layout(layout: Layout, op: Operation, reps: list[int]) -> Layout | None:
    """The layout of ``op``'s result given its tensor operand's."""
    if isinstance(op, mir.TransposeOp):
        return [layout[p] for p in op.props().ints("perm")]
    if isinstance(op, mir.ReshapeOp):
        return _regroup([a for dim in layout for a in dim], type_of(op.result).shape)
    if isinstance(op, mir.ExpandOp):
        src, out = type_of(op.input).shape, type_of(op.result).shape
        pad = len(out) - len(src)
        padded = [1] * pad + list(src)
        result: Layout = [[] for _ in range(pad)] + [list(d) for d in layout]
        for i, (a, b) in enumerate(zip(padded, out, strict=True)):
            if a != b:
                reps.append(i)
                result[i] = [(f"rep{len(reps)}", b)]
        return result
    if op.has_trait(ViewLike):
        return None  # a view whose layout is not tracked here (narrow, slice)
    return layout  # a scalar factor


def _scalar_factor(op: Operation, v: SSAValue) -> tuple[SSAValue, float] | None:
    """(the tensor operand, its factor) for ``op`` = v·c, c·v or v/c with c a one-element
    constant that does not broadcast the tensor."""
    if isinstance(op, mir.MulOp):
        for t, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            f = scalar_constant(c)
            if f is not None and t.type == v.type:
                return t, f
    if isinstance(op, mir.DivOp):
        f = scalar_constant(op.rhs)
        if f is not None and f != 0.0 and op.lhs.type == v.type:
            return op.lhs, 1.0 / f
    return None


@dataclass
class _Source:
    """What the fused op reads instead of a matmul operand."""

    value: SSAValue
    ops: list[Operation]
    """The chain from ``value`` to the operand (absorbed), producers first."""
    scale: float
    rep: int
    """How often each head is repeated (grouped-query attention; 1: not)."""
    shape: Shape
    """``value`` viewed as [B, H, S, D] (a reshape at the rewrite when it is not that)."""
    perm: tuple[int, ...] | None = None
    """A transpose of ``value`` first, when its dims are not in [B, H, S, D] order."""


def _source(operand: SSAValue, reader: Operation, role: str) -> _Source | None:
    """The farthest value up ``operand``'s view chain whose layout makes the operand q
    (``role`` "q"), kᵀ ("k") or v ("v") of it."""
    chain: list[tuple[Operation, float]] = []
    candidates: list[tuple[SSAValue, int]] = [(operand, 0)]
    v, r = operand, reader
    while sole_user(v) is r and isinstance(v, OpResult):
        op = v.op
        if op.has_trait(ViewLike):
            chain.append((op, 1.0))
            v, r = op.operands[0], op
        elif role != "v" and (found := _scalar_factor(op, v)) is not None:
            # A factor on q or k scales the scores; one on v would scale the output,
            # which the fused op cannot: v's chain stops there.
            chain.append((op, found[1]))
            v, r = found[0], op
        else:
            break
        candidates.append((v, len(chain)))
    fits = []
    for value, n in reversed(candidates):
        ops = [op for op, _ in reversed(chain[:n])]
        fit = _fits(value, ops, role, type_of(operand).shape)
        if fit is not None:
            fits.append(_Source(value, ops, math.prod(f for _, f in chain[:n]), *fit))
    # The farthest source that needs no transpose of its own, else the farthest one.
    return next((f for f in fits if f.perm is None), fits[0] if fits else None)


def _size(group: list[Atom]) -> Dim | None:
    if len(group) == 1:
        return group[0][1]
    sizes = [a[1] for a in group]
    return math.prod(sizes) if all(isinstance(d, int) for d in sizes) else None


def _fits(
    value: SSAValue, ops: list[Operation], role: str, frame: Shape
) -> tuple[int, Shape, tuple[int, ...] | None] | None:
    """(head repeat, [B, H, S, D] shape, transpose) when ``ops`` applied to ``value`` give
    the operand of ``role``: its dims, the key's last two swapped and the heads' broadcast
    repeat dropped, hold each dim of ``value`` once, so ``value`` is a reshape (after a
    transpose, when they are not in its order) away from the tensor the fused op reads."""
    src = type_of(value).shape
    base = _identity(src)
    layout: Layout | None = base
    reps: list[int] = []
    for op in ops:
        assert layout is not None
        layout = _view_layout(layout, op, reps)
        if layout is None:
            return None
    assert layout is not None
    if len(layout) != 4:
        return None
    groups = [list(g) for g in layout]
    if role == "k":
        groups[2], groups[3] = groups[3], groups[2]
    rep: Dim = 1
    heads = groups[1]
    if heads and isinstance(heads[-1][0], str):
        if role == "q":
            return None
        rep = heads.pop()[1]  # repeat_interleave: the copies of a head are adjacent
    flat = [a for g in groups for a in g]
    if any(isinstance(a[0], str) for a in flat):
        return None
    if sorted(flat, key=lambda a: a[0]) != [a for g in base for a in g]:
        return None
    order = [int(a[0]) for a in flat]
    units = [i for i, d in enumerate(src) if d == 1]
    moved = None if order == sorted(order) else (*units, *order)
    sizes = [_size(g) if g else 1 for g in groups]
    shape = [d for d in sizes if d is not None]
    if len(shape) < len(sizes) or not isinstance(rep, int):
        return None
    h = shape[1]
    if rep > 1 and not isinstance(h, int):
        return None
    seen = [shape[0], h * rep if isinstance(h, int) else h, shape[2], shape[3]]
    if role == "k":
        seen[2], seen[3] = seen[3], seen[2]
    if tuple(seen) != tuple(frame):
        return None
    return rep, tuple(shape), moved


def _scaled(v: SSAValue) -> tuple[SSAValue, float, list[Operation]]:
    """``v`` = base · c1 · c2 ...: (base, the product, the scaling ops producers first)."""
    factor, ops = 1.0, list[Operation]()
    while isinstance(v, OpResult) and (found := _scalar_factor(v.op, v)) is not None:
        ops.insert(0, v.op)
        factor *= found[1]
        v = found[0]
    return v, factor, ops


# ---------------------------------------------------------------------------------
# Masks
# ---------------------------------------------------------------------------------


@dataclass
class _Mask:
    kind: MaskKind
    value: SSAValue | None = None
    negate: bool = False
    """The fused op reads ``not value`` (where(m, -inf, scores) masks where m holds)."""
    ops: list[Operation] = field(default_factory=list)
    """The masking op (add or where), if any."""


def _causal(keep: np.ndarray, masked: np.ndarray, sq: Dim, sk: Dim) -> bool:
    """Whether a mask keeps exactly the entries on and below the diagonal."""
    if keep.ndim < 2 or keep.shape[-2:] != (sq, sk):
        return False
    tril = np.tril(np.ones((int(sq), int(sk)), dtype=bool))
    return bool(np.all(keep == tril) and np.all(masked == ~tril))


def _additive(mask: SSAValue, scores: SSAValue) -> _Mask:
    array = constant_value(mask)
    if array is not None:
        if not np.any(array):
            return _Mask(MaskKind.NONE)
        sq, sk = type_of(scores).shape[-2:]
        lowest = float(np.finfo(array.dtype).min) if array.dtype.kind == "f" else MASKED
        if _causal(array == 0, array <= max(MASKED, lowest), sq, sk):
            return _Mask(MaskKind.CAUSAL)
    return _Mask(MaskKind.EXPLICIT, mask)


def _where(op: mir.WhereOp, scores: SSAValue) -> _Mask | Miss | None:
    """where(m, scores, -inf) or where(m, -inf, scores)."""
    pairs = ((op.on_true, op.on_false, False), (op.on_false, op.on_true, True))
    for s, fill, negate in pairs:
        if s is not scores:
            continue
        value = scalar_constant(fill)
        if value is None:
            return None
        if value != -math.inf:
            return Miss(
                f"masked scores are set to {value:g}, not -inf",
                "the fused op masks with -inf (rows masked whole would differ)",
            )
        cond = op.condition
        array = constant_value(cond)
        if array is not None:
            sq, sk = type_of(scores).shape[-2:]
            keep = ~array if negate else array
            if _causal(keep, ~keep, sq, sk):
                return _Mask(MaskKind.CAUSAL)
        return _Mask(MaskKind.EXPLICIT, cond, negate)
    return None


# ---------------------------------------------------------------------------------
# The pattern
# ---------------------------------------------------------------------------------


@dataclass
class AttentionMatch(Match):
    q: _Source
    k: _Source
    v: _Source
    mask: _Mask
    scale: float | None
    zero_nan: bool


def _nan_guard(v: SSAValue) -> tuple[SSAValue, list[Operation]] | None:
    """``p`` and the guard's ops when ``v`` is ``where(isnan(p), +0, p)`` of the same type
    (isnan as ``p != p``), the guard alone reading p."""
    where = producer(v, mir.WhereOp)
    if where is None:
        return None
    p = where.on_false
    isnan = producer(where.condition, mir.CompareOp)
    zero = scalar_constant(where.on_true)
    if (
        isnan is None
        or isnan.props().enum("predicate") is not ComparePredicate.NE
        or isnan.lhs is not p
        or isnan.rhs is not p
        or zero != 0.0
        or math.copysign(1.0, zero) < 0
        or where.result.type != p.type
        or {id(u.operation) for u in p.uses} != {id(isnan), id(where)}
        or sole_user(isnan.result) is not where
    ):
        return None
    return p, [isnan, where]


class FuseAttention(FusionPattern):
    name = "attention"
    roots = (mir.MatmulOp,)
    needs = (mir.SoftmaxOp,)  # the matmul's lhs

    def match(self, op: Operation) -> Match | Miss | None:
        assert isinstance(op, mir.MatmulOp)
        out = type_of(op.result)
        probs: SSAValue = op.lhs
        guard: list[Operation] = []
        if (guarded := _nan_guard(probs)) is not None:
            probs, guard = guarded
        softmax = producer(probs, mir.SoftmaxOp)
        if out.rank != 4 or softmax is None or softmax.props().int("axis") != 3:
            return None
        masked = softmax.input
        mask = _Mask(MaskKind.NONE)
        scores = masked
        add = producer(masked, mir.AddOp)
        where = producer(masked, mir.WhereOp)
        if add is not None:
            for s, m in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
                if producer(_scaled(s)[0], mir.MatmulOp) is not None and s.type == masked.type:
                    scores = s
                    mask = _additive(m, s)
                    mask.ops = [add]
                    break
        elif where is not None:
            for s in (where.on_true, where.on_false):
                if producer(_scaled(s)[0], mir.MatmulOp) is not None and s.type == masked.type:
                    found = _where(where, s)
                    if found is None or isinstance(found, Miss):
                        return found
                    scores, mask = s, found
                    mask.ops = [where]
                    break
        product, score_scale, score_ops = _scaled(scores)
        qk = producer(product, mir.MatmulOp)
        if qk is None or type_of(product).rank != 4:
            return None
        q = _source(qk.lhs, qk, "q")
        k = _source(qk.rhs, qk, "k")
        v = _source(op.rhs, op, "v")
        if q is None or k is None or v is None or k.rep != v.rep:
            return None
        seq: list[Operation] = [*score_ops, *mask.ops, softmax]
        links = [(product, seq[0], "the scores")]
        links += [(a.results[0], b, "the scaled scores") for a, b in pairwise(seq)]
        links.append((op.lhs, op, "the guarded softmax" if guard else "the softmax"))
        if (miss := chain_miss(links, HINT)) is not None:
            return miss
        dtype = out.dtype
        if dtype not in EXACT_DTYPES:
            return Miss(
                f"the attention is computed in {dtype.value}, where the fused op (one "
                "rounding) would not reproduce it",
                "export the attention in f32",
            )
        names = [FUSED] + ([mir.NotOp.name] if mask.negate else [])
        if (miss := self.ctx.unclaimed(*names)) is not None:
            return miss
        scale = q.scale * k.scale * score_scale
        d = q.shape[-1]
        if isinstance(d, int) and abs(scale * math.sqrt(d) - 1.0) <= SCALE_RTOL:
            implicit: float | None = None
        else:
            implicit = scale
        q_type, k_type, v_type = (TensorType(s.shape, dtype) for s in (q, k, v))
        try:
            result = mir.attention_shape(
                q_type, k_type, v_type,
                None if mask.value is None else type_of(mask.value), mask.kind,
            )  # fmt: skip
        except VerifyException:
            return None
        if result != out:
            return None
        absorbed = [*q.ops, *k.ops, qk, *score_ops, *mask.ops, softmax, *guard, *v.ops, op]
        return AttentionMatch(op, absorbed, q, k, v, mask, implicit, bool(guard))

    def rewrite(self, m: Match, rewriter: PatternRewriter) -> None:
        assert isinstance(m, AttentionMatch)
        b, ops = self.builder(m.root)
        mask = m.mask.value
        if mask is not None and m.mask.negate:
            inner = producer(mask, mir.NotOp)
            mask = inner.input if inner is not None else b.unary(mir.NotOp, mask)
        q, k, v = (_read(b, s) for s in (m.q, m.k, m.v))
        y = b.emit(
            mir.AttentionOp(
                q, k, v, mask, mask_kind=m.mask.kind.value, scale=m.scale, zero_nan=m.zero_nan
            )
        ).results[0]
        self.replace(rewriter, m, ops, [y])


def _read(b: GraphBuilder, s: _Source) -> SSAValue:
    """The [B, H, S, D] tensor the fused op reads for ``s``."""
    value = s.value if s.perm is None else b.transpose(s.value, s.perm)
    return value if type_of(value).shape == s.shape else b.reshape(value, s.shape)


@dataclass(frozen=True)
class FuseAttentionPass(FusionPass):
    """Recognise matmul(softmax(q·kᵀ·s [+ mask]), v) as one mir.attention."""

    name = "fuse-attention"
    PATTERNS = (FuseAttention,)
