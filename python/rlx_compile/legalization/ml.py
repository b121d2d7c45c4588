"""Classic-ML ops lowered to primitive ops, for targets without their kernels (the cpu
target claims them): the forms the ONNX importer wrote before the ops existed.

- tree ensembles walk every tree at once, one level per step for the deepest tree's
  depth: each sample's current node selects its feature, split and mode by gathers on
  per-node tables, a sample at a leaf stays; the leaves reached then give their weights
  from per-leaf tables, aggregated over the trees;
- SVMs are their kernel (a matmul, or the squared distances for rbf), a matmul with the
  coefficients, and for the classifier one-vs-one votes as two matmuls and the coupled
  probabilities as ``mir.pairwise_coupling``;
- the linear classifier is a matmul and an argmax, the normalizer a reduction and a
  division, the label encoder a comparison with every key and a gather; the scaler,
  binarizer, imputer and one-hot encoder their elementwise arithmetic and comparisons.

The helpers (``post_transform``, ``probit``, ``binary_pair``) also serve the importer
for the ops that have no op of their own (LinearRegressor).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from rlx_compile.builder import GraphBuilder, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import NormKind, PostTransform, SvmKernel, TreeAggregate
from rlx_compile.dialects.dim_expr import Dim
from rlx_compile.dialects.types import DType
from rlx_compile.legalization.base import COMMON_IR, ConversionPattern

FOLD_LIMIT = 1 << 16
"""Above this many rows a row index is computed (a running sum) rather than a constant."""


def const(b: GraphBuilder, value: np.ndarray) -> SSAValue:
    """An array as a constant of its own element type."""
    arr = np.asarray(value)
    return b.constant(arr, DType.from_numpy(arr.dtype), arr.shape)


def full(b: GraphBuilder, shape: list[Dim], value: float | bool, dtype: DType) -> SSAValue:
    """A tensor of ``shape`` holding ``value``: one scalar constant, expanded."""
    return b.expand(b.constant(np.array(value), dtype, ()), shape)


def iota(b: GraphBuilder, n: Dim, dtype: DType) -> SSAValue:
    """[0, 1, ..., n - 1]: a constant, or a running sum of ones for a symbolic n."""
    if isinstance(n, int) and n <= FOLD_LIMIT:
        return const(b, np.arange(n).astype(dtype.numpy))
    return b.emit(mir.CumsumOp(full(b, [n], 1, dtype), 0, exclusive=True)).results[0]


def argmax(b: GraphBuilder, x: SSAValue, axis: int = -1) -> SSAValue:
    """Index of the first maximum along ``axis`` (int64)."""
    return b.emit(mir.ArgMaxOp(x, axis % type_of(x).rank)).results[0]


# ---------------------------------------------------------------------------------
# Post transforms
# ---------------------------------------------------------------------------------


def probit(b: GraphBuilder, v: SSAValue) -> SSAValue:
    """onnxruntime's probit: sqrt(2) * erfinv(2v - 1) with its closed-form erfinv
    approximation (Winitzki's, a = 0.147)."""
    x = b.sub(b.mul(v, 2.0), 1.0)
    sign = b.where(b.compare("lt", x, 0.0), b.scalar_like(-1.0, x), 1.0)
    log = b.log(b.mul(b.sub(1.0, x), b.add(1.0, x)))
    a = b.add(b.mul(log, 0.5), 2.0 / (3.14159 * 0.147))
    root = b.sqrt(b.sub(b.mul(a, a), b.mul(log, 1.0 / 0.147)))
    return b.mul(b.mul(sign, b.sqrt(b.sub(root, a))), float(np.float32(1.41421356)))


def post_transform(b: GraphBuilder, scores: SSAValue, kind: PostTransform) -> SSAValue:
    """``kind`` along the last axis (as ``interpreter.ml.post_transform``)."""
    if kind is PostTransform.NONE:
        return scores
    if kind is PostTransform.LOGISTIC:
        return b.sigmoid(scores)
    if kind is PostTransform.SOFTMAX:
        return b.softmax(scores, -1)
    if kind is PostTransform.PROBIT:
        return probit(b, scores)
    # SOFTMAX_ZERO: scores within 1e-7 of 0 take no part (they become ~0).
    top = b.reduce("max", scores, -1, keepdims=True)
    zero = b.compare("le", b.abs(scores), 1e-7)
    e = b.where(zero, b.mul(scores, b.exp(b.neg(top))), b.exp(b.sub(scores, top)))
    total = b.reduce("sum", b.where(zero, 0.0, e), -1, keepdims=True)
    return b.div(e, total)


def pair(b: GraphBuilder, first: SSAValue, second: SSAValue) -> SSAValue:
    """Two [batch] (or [batch, 1]) columns side by side: [batch, 2]."""
    batch = type_of(first).shape[0]
    return b.concat([b.reshape(v, [batch, 1]) for v in (first, second)], 1)


def binary_pair(b: GraphBuilder, s: SSAValue, kind: PostTransform, negate: bool = False):
    """onnxruntime's two scores from one: [-s, s] (``negate``), else [1 - t, t] with t
    the logistic of s under ``logistic``, s itself otherwise."""
    if negate:
        return pair(b, b.neg(s), s)
    if kind is PostTransform.LOGISTIC:
        s = b.sigmoid(s)
    return pair(b, b.sub(1.0, s), s)


def _labels(b: GraphBuilder, op: mir.Operation, index: SSAValue) -> SSAValue:
    """The ``class_labels`` of the classes at ``index`` (the index itself without)."""
    p = op.props()  # type: ignore[attr-defined]
    if p.get("class_labels") is None:
        return index
    return b.gather(const(b, np.array(p.array("class_labels"))), index, 0)


# ---------------------------------------------------------------------------------
# Tree ensembles
# ---------------------------------------------------------------------------------


def forest_depth(forest: mir.Forest) -> int:
    """Levels to walk: the longest root-to-leaf path (successors follow their node)."""
    n = len(forest.features)
    below = np.zeros(n + 1, np.int64)  # below[n]: a leaf
    for k in range(n - 1, -1, -1):
        t, f = int(forest.true_next[k]), int(forest.false_next[k])
        below[k] = 1 + max(below[t if t >= 0 else n], below[f if f >= 0 else n])
    roots = forest.roots[forest.roots >= 0]
    return int(below[roots].max(initial=0))


def walk(b: GraphBuilder, x: SSAValue, forest: mir.Forest) -> SSAValue:
    """The leaf each sample reaches in each tree: [batch, trees] int64."""
    batch, features = type_of(x).shape
    assert isinstance(features, int)
    trees = len(forest.roots)
    # A node value: a branch node's index, or -1 - leaf.
    node = b.expand(const(b, np.array(forest.roots, np.int64).reshape(1, trees)), [batch, trees])
    flat_x = b.reshape(x, [batch * features])
    rows = b.reshape(b.mul(iota(b, batch, DType.I64), features), [batch, 1])

    def table(values: np.ndarray, dtype: np.dtype | None = None):
        """A per-node table as a constant, looked up by index."""
        c = const(b, np.array(values, dtype))
        return lambda index: b.gather(c, index, 0)

    feature_of, mode_of = table(forest.features), table(forest.modes)
    split_of = table(forest.splits, type_of(x).dtype.numpy)
    true_of, false_of = table(forest.true_next), table(forest.false_next)
    tracks_of = None
    if forest.missing_true is not None and forest.missing_true.any():
        tracks_of = table(forest.missing_true)
    members = forest.member_table(type_of(x).dtype.numpy)
    members_of = table(members) if members is not None else None
    used_modes = sorted(set(forest.modes.tolist()))
    for _ in range(forest_depth(forest)):
        at_leaf = b.compare("lt", node, 0)
        walking = b.where(at_leaf, 0, node)  # a sample at a leaf reads node 0, and stays
        value = b.gather(flat_x, b.add(rows, feature_of(walking)), 0)  # [batch, trees]
        split = split_of(walking)
        cond = None
        for mode in used_modes:
            if mode == 6:
                assert members_of is not None
                listed = members_of(walking)  # [batch, trees, width]
                equal = b.compare("eq", listed, b.reshape(value, [batch, trees, 1]))
                hit = b.compare("gt", b.reduce("sum", b.cast(equal, DType.I32), 2), 0)
            else:
                hit = b.compare(("le", "lt", "ge", "gt", "eq", "ne")[mode], value, split)
            cond = (
                hit if cond is None else b.where(b.compare("eq", mode_of(walking), mode), hit, cond)
            )
        assert cond is not None
        if tracks_of is not None:
            missing = b.compare("ne", value, value)  # NaN
            follows = b.cast(tracks_of(walking), DType.BOOL)
            cond = b.binary(mir.OrOp, cond, b.binary(mir.AndOp, missing, follows))
        node = b.where(at_leaf, node, b.where(cond, true_of(walking), false_of(walking)))
    return b.sub(-1, node)


def leaf_tables(
    forest: mir.Forest, outputs: int, aggregate: TreeAggregate, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """Per leaf and output: its entries combined by ``aggregate`` (0 without one), and
    whether it has one."""
    leaves = forest.leaves
    values = np.zeros((leaves, outputs), np.float64)
    has = np.zeros((leaves, outputs), bool)
    owner = np.repeat(np.arange(leaves), np.diff(forest.leaf_starts))
    for leaf, target, w in zip(owner, forest.leaf_targets, forest.leaf_weights, strict=True):
        if not has[leaf, target]:
            values[leaf, target] = w
        elif aggregate is TreeAggregate.MIN:
            values[leaf, target] = min(values[leaf, target], w)
        elif aggregate is TreeAggregate.MAX:
            values[leaf, target] = max(values[leaf, target], w)
        else:
            values[leaf, target] += w
        has[leaf, target] = True
    return values.astype(dtype), has


def tree_sums(
    b: GraphBuilder,
    leaf: SSAValue,
    forest: mir.Forest,
    outputs: int,
    aggregate: TreeAggregate,
    dtype: DType,
) -> tuple[SSAValue, SSAValue | None]:
    """The reached leaves' weights aggregated over the trees ([batch, outputs]) and
    whether a reached leaf weighs each output (None: every leaf weighs every output)."""
    values, has = leaf_tables(forest, outputs, aggregate, dtype.numpy)
    gathered = b.gather(const(b, values), leaf, 0)  # [batch, trees, outputs]
    if aggregate in (TreeAggregate.SUM, TreeAggregate.AVERAGE):
        y = b.reduce("sum", gathered, 1)
    else:
        extreme = math.inf if aggregate is TreeAggregate.MIN else -math.inf
        masked = (
            gathered if has.all() else b.where(b.gather(const(b, has), leaf, 0), gathered, extreme)
        )
        y = b.reduce(aggregate.value, masked, 1)
    if has.all():
        return y, None
    scored = b.reduce("sum", b.cast(b.gather(const(b, has), leaf, 0), DType.I32), 1)
    return y, b.compare("gt", scored, 0)


class LowerTreeEnsemble(ConversionPattern):
    path = COMMON_IR
    summary = "every tree walked a level per step by gathers, leaf tables gathered and reduced"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.TreeEnsembleOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p, forest = op.props(), op.forest()
        out = type_of(op.result)
        outputs = int(out.shape[1])
        aggregate = p.enum("aggregate")
        y, scored = tree_sums(b, walk(b, op.input, forest), forest, outputs, aggregate, out.dtype)
        if aggregate is TreeAggregate.AVERAGE:
            y = b.div(y, float(len(forest.roots)))
        if p.get("base_values") is not None:
            y = b.add(y, const(b, p.array("base_values").astype(out.dtype.numpy).reshape(1, -1)))
        if scored is not None:
            y = b.where(scored, y, p.float("fill"))
        self.commit(rewriter, op, ops, [post_transform(b, y, p.enum("post_transform"))])


def class_weights(forest: mir.Forest) -> tuple[bool, bool]:
    """Whether the leaves weigh one class only, and whether every weight is >= 0."""
    return len(set(forest.leaf_targets.tolist())) == 1, bool((forest.leaf_weights >= 0).all())


class LowerTreeEnsembleClassifier(ConversionPattern):
    path = COMMON_IR
    summary = "the tree walk, class sums, argmax; binary layouts where they are static"

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: mir.TreeEnsembleClassifierOp, rewriter: PatternRewriter
    ) -> None:
        p, forest = op.props(), op.forest()
        scores_t = type_of(op.scores)
        classes, dtype = int(scores_t.shape[1]), scores_t.dtype
        base = p.array("base_values").astype(dtype.numpy)
        post = p.enum("post_transform")
        _, has = leaf_tables(forest, classes, TreeAggregate.SUM, dtype.numpy)
        if classes == 2 and any(has[:, k].any() and not has[:, k].all() for k in (0, 1)):
            return  # the binary layout would depend on the leaves reached
        b, ops = self.builder(op)
        leaf = walk(b, op.input, forest)
        scores, scored = tree_sums(b, leaf, forest, classes, TreeAggregate.SUM, dtype)
        if classes > 2:
            if len(base):
                padded = np.zeros(classes, dtype.numpy)
                padded[: len(base)] = base
                scores = b.add(scores, const(b, padded.reshape(1, classes)))
                if scored is not None:
                    counted = (np.arange(classes) < len(base)).reshape(1, classes)
                    scored = b.binary(mir.OrOp, scored, const(b, counted))
            ranked = scores if scored is None else b.where(scored, scores, -math.inf)
            label = _labels(b, op, argmax(b, ranked))
            self.commit(rewriter, op, ops, [label, post_transform(b, scores, post)])
            return
        batch = scores_t.shape[0]
        h0, h1 = bool(has[:, 0].all()), bool(has[:, 1].all())
        zero = full(b, [batch], 0.0, dtype)
        s0 = b.reshape(b.narrow(scores, 1, 0, 1), [batch])
        s1 = b.reshape(b.narrow(scores, 1, 1, 1), [batch])
        if len(base) == 2:
            if h1:  # class 1 from class 0's sum and base value 1, class 0 its opposite
                s1 = b.add(s0, float(base[1]))
                s0 = b.neg(s1)
            else:
                s0, s1 = b.add(s0, float(base[0])), b.add(s1, float(base[1]))
            two = True
        else:
            if len(base) == 1:
                s0 = b.add(s0, float(base[0]))
            two = h1
        v0, v1 = (s0 if h0 else zero), (s1 if h1 else zero)
        score = v1 if two and h1 else v0
        one_class, positive = class_weights(forest)
        if one_class:
            label = _labels(
                b, op, b.cast(b.compare("gt", score, 0.5 if positive else 0.0), DType.I64)
            )
        else:  # onnxruntime's raw index 1 or 0
            label = b.cast(b.compare("gt", score, 0.0), DType.I64)
        if two:
            pairs = post_transform(b, pair(b, v0, v1), post)
        elif one_class and positive:
            pairs = pair(b, b.sub(1.0, v0), v0)
        elif post is PostTransform.LOGISTIC:
            pairs = pair(b, b.sigmoid(b.neg(v0)), b.sigmoid(v0))
        else:
            pairs = pair(b, b.neg(v0), v0)
        self.commit(rewriter, op, ops, [label, pairs])


# ---------------------------------------------------------------------------------
# Support vector machines
# ---------------------------------------------------------------------------------


def svm_kernel(b: GraphBuilder, op: mir.SvmOp) -> SSAValue:
    """K(x, v) for every support vector: [batch, vectors]."""
    p = op.props()
    x = op.input
    batch, features = type_of(x).shape
    assert isinstance(features, int)
    sv = p.array("support_vectors").astype(type_of(x).dtype.numpy).reshape(-1, features)
    count = sv.shape[0]
    kind, gamma = p.enum("kernel"), p.float("gamma")
    if kind is SvmKernel.RBF:
        diff = b.sub(b.reshape(x, [batch, 1, features]), const(b, sv.reshape(1, count, features)))
        return b.exp(b.mul(b.reduce("sum", b.mul(diff, diff), 2), -gamma))
    dot = b.matmul(x, const(b, np.ascontiguousarray(sv.T)))
    if kind is SvmKernel.LINEAR:
        return dot
    dot = b.add(b.mul(dot, gamma), p.float("coef0"))
    if kind is SvmKernel.SIGMOID:
        return b.tanh(dot)
    degree = p.float("degree")
    if degree == 2:
        return b.mul(dot, dot)
    if degree == 3:
        return b.mul(b.mul(dot, dot), dot)
    return b.pow(dot, degree)


class LowerSvmRegressor(ConversionPattern):
    path = COMMON_IR
    summary = "the kernel, a matmul with the coefficients, rho added (a sign for one_class)"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.SvmRegressorOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        k = svm_kernel(b, op)
        coefficients = p.array("coefficients").astype(type_of(k).dtype.numpy).reshape(-1, 1)
        y = b.add(b.matmul(k, const(b, coefficients)), p.float("rho"))
        if p.flag("one_class"):
            y = b.where(
                b.compare("gt", y, 0.0),
                full(b, list(type_of(y).shape), 1.0, type_of(y).dtype),
                -1.0,
            )
        self.commit(rewriter, op, ops, [y])


class LowerSvmClassifier(ConversionPattern):
    path = COMMON_IR
    summary = "the kernel, pair decisions by a matmul, votes by two matmuls, coupled probabilities"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.SvmClassifierOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        k = svm_kernel(b, op)
        np_dtype = type_of(k).dtype.numpy
        rho = p.array("rho").astype(np_dtype)
        pairs = len(rho)
        classes = (1 + math.isqrt(1 + 8 * pairs)) // 2
        table = p.array("coefficients").astype(np_dtype).reshape(-1, pairs)
        decision = b.add(b.matmul(k, const(b, table)), const(b, rho.reshape(1, -1)))
        indices = [(i, j) for i in range(classes) for j in range(i + 1, classes)]
        first = np.zeros((pairs, classes), np_dtype)
        second = np.zeros((pairs, classes), np_dtype)
        for q, (i, j) in enumerate(indices):
            first[q, i], second[q, j] = 1.0, 1.0
        wins = b.cast(b.compare("gt", decision, 0.0), type_of(k).dtype)
        votes = b.add(b.matmul(wins, const(b, first)), b.matmul(b.sub(1.0, wins), const(b, second)))
        label = _labels(b, op, argmax(b, votes))
        post = p.enum("post_transform")
        if p.get("prob_a") is not None:
            scores = post_transform(b, self.coupled(b, op, decision, classes, indices), post)
        elif classes == 2:
            s = b.reshape(decision, [type_of(decision).shape[0]])
            scores = binary_pair(b, s, post, negate=post is PostTransform.NONE)
        else:
            scores = post_transform(b, decision, post)
        self.commit(rewriter, op, ops, [label, scores])

    @staticmethod
    def coupled(
        b: GraphBuilder,
        op: mir.SvmClassifierOp,
        decision: SSAValue,
        classes: int,
        indices: list[tuple[int, int]],
    ) -> SSAValue:
        """libsvm's multiclass probabilities from the pairwise Platt probabilities."""
        p = op.props()
        batch = type_of(decision).shape[0]
        np_dtype = type_of(decision).dtype.numpy
        c = classes
        a = const(b, p.array("prob_a").astype(np_dtype).reshape(1, -1))
        bb = const(b, p.array("prob_b").astype(np_dtype).reshape(1, -1))
        platt = b.sub(1.0, b.sigmoid(b.add(b.mul(decision, a), bb)))
        platt = b.minimum(b.maximum(platt, 1e-7), 1.0 - 1e-7)  # [batch, pairs]
        upper = np.zeros((len(indices), c * c), np_dtype)
        lower = np.zeros((len(indices), c * c), np_dtype)
        for q, (i, j) in enumerate(indices):
            upper[q, i * c + j], lower[q, j * c + i] = 1.0, 1.0
        r = b.add(b.matmul(platt, const(b, upper)), b.matmul(b.sub(1.0, platt), const(b, lower)))
        r = b.reshape(r, [batch, c, c])  # r[i, j]: P(i | i or j); diagonal 0
        return b.emit(mir.PairwiseCouplingOp(r)).results[0]


# ---------------------------------------------------------------------------------
# Linear classifier, normalizer, label encoder
# ---------------------------------------------------------------------------------


class LowerLinearClassifier(ConversionPattern):
    path = COMMON_IR
    summary = "x @ W^T + b, the argmax, the post transform"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.LinearClassifierOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p = op.props()
        x = op.input
        batch, features = type_of(x).shape
        np_dtype = type_of(x).dtype.numpy
        w = p.array("coefficients").astype(np_dtype).reshape(-1, int(features))
        scores = b.matmul(x, const(b, np.ascontiguousarray(w.T)))
        if p.get("intercepts") is not None:
            scores = b.add(scores, const(b, p.array("intercepts").astype(np_dtype).reshape(1, -1)))
        post = p.enum("post_transform")
        if w.shape[0] == 1:
            s = b.reshape(scores, [batch])
            label = _labels(b, op, b.cast(b.compare("gt", s, 0.0), DType.I64))
            self.commit(rewriter, op, ops, [label, binary_pair(b, s, post)])
            return
        label = _labels(b, op, argmax(b, scores))
        self.commit(rewriter, op, ops, [label, post_transform(b, scores, post)])


class LowerNormalizer(ConversionPattern):
    path = COMMON_IR
    summary = "the row norm by a reduction, a division where it is not 0"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.NormalizerOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x = op.input
        norm = op.props().enum("norm")
        if norm is NormKind.MAX:
            z = b.reduce("max", x, -1, keepdims=True)
            y = b.where(b.compare("ne", z, 0.0), b.div(x, z), x)
        elif norm is NormKind.L1:
            z = b.reduce("sum", b.abs(x), -1, keepdims=True)
            y = b.where(b.compare("ne", z, 0.0), b.div(x, z), x)
        else:
            square = b.mul(x, x)
            z = b.reduce("sum", square, -1, keepdims=True)
            root = b.sqrt(b.div(square, z))
            signed = b.where(b.compare("lt", x, 0.0), b.neg(root), root)
            y = b.where(b.compare("ne", z, 0.0), signed, x)
        self.commit(rewriter, op, ops, [y])


class LowerLabelEncoder(ConversionPattern):
    path = COMMON_IR
    summary = "each element compared with every key, the first hit's value gathered"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.LabelEncoderOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        keys, values = op.tables()
        x = op.input
        t = type_of(x)
        out = type_of(op.result)
        count = len(keys)
        if not count:
            index = full(b, list(t.shape), 0, DType.I64)
        else:
            keys = keys.astype(t.dtype.numpy)
            first = np.array([np.flatnonzero(_same(keys, k))[0] == i for i, k in enumerate(keys)])
            live = np.where(first, keys, keys[0])  # a repeated key answers at its first position
            probe = b.reshape(x, [*t.shape, 1])
            shape = [1] * t.rank + [-1]
            hit = b.compare("eq", probe, const(b, live.reshape(shape)))
            hit = b.binary(mir.AndOp, hit, const(b, first.reshape(shape)))
            if op.props().flag("nan_matches") and t.dtype.is_float and np.isnan(keys).any():
                missing = b.compare("ne", probe, probe)
                nan_key = const(b, np.isnan(keys).reshape(shape))
                hit = b.binary(mir.OrOp, hit, b.binary(mir.AndOp, missing, nan_key))
            hits = b.cast(hit, DType.I32)
            found = b.compare("gt", b.reduce("sum", hits, -1), 0)
            index = b.where(found, argmax(b, hits), full(b, list(t.shape), count, DType.I64))
        table = const(b, values.astype(out.dtype.numpy))
        self.commit(rewriter, op, ops, [b.gather(table, index, 0)])


def _feature_table(b: GraphBuilder, values: np.ndarray, like: SSAValue) -> SSAValue:
    """A per-feature table as a constant broadcasting along the last axis of ``like``."""
    t = type_of(like)
    return const(b, values.astype(t.dtype.numpy).reshape([1] * (t.rank - 1) + [-1]))


class LowerScaler(ConversionPattern):
    path = COMMON_IR
    summary = "sub the offsets, mul by the scales"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ScalerOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p, x = op.props(), op.input
        y = b.mul(b.sub(x, _feature_table(b, p.array("offset"), x)),
                  _feature_table(b, p.array("scale"), x))  # fmt: skip
        self.commit(rewriter, op, ops, [y])


class LowerBinarizer(ConversionPattern):
    path = COMMON_IR
    summary = "compare with the threshold, cast"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.BinarizerOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x = op.input
        above = b.compare("gt", x, op.props().float("threshold"))
        self.commit(rewriter, op, ops, [b.cast(above, type_of(x).dtype)])


class LowerImputer(ConversionPattern):
    path = COMMON_IR
    summary = "compare with the replaced value (NaN: x != x), where"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.ImputerOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        p, x = op.props(), op.input
        replaced = op.replaced_value()
        hit = b.compare("ne", x, x) if math.isnan(replaced) else b.compare("eq", x, replaced)
        table = _feature_table(b, p.array("imputed"), x)
        if len(p.array("imputed")) == 1:
            table = b.expand(table, list(type_of(x).shape))
        self.commit(rewriter, op, ops, [b.where(hit, table, x)])


class LowerOneHotEncoder(ConversionPattern):
    path = COMMON_IR
    summary = "compare with every category (a repeated one answers at its last place), cast"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mir.OneHotEncoderOp, rewriter: PatternRewriter) -> None:
        b, ops = self.builder(op)
        x = op.input
        shape = type_of(x).shape
        cats, live = op.props().array("categories"), op.answering()
        if op.props().get("column_starts") is None:
            values = b.reshape(x, [*shape, 1])
            view = [1] * len(shape) + [-1]
        else:  # each category position reads its column
            values = b.gather(x, const(b, op.category_columns()), len(shape) - 1)
            view = [1] * (len(shape) - 1) + [-1]
        hit = b.compare("eq", values, const(b, np.array(cats).reshape(view)))
        if not live.all():
            hit = b.binary(mir.AndOp, hit, const(b, live.reshape(view)))
        self.commit(rewriter, op, ops, [b.cast(hit, DType.F32)])


def _same(keys: np.ndarray, k: object) -> np.ndarray:
    if isinstance(k, float | np.floating) and np.isnan(k):
        return np.isnan(keys)
    return keys == k


ML_PATTERNS: tuple[type[ConversionPattern], ...] = (
    LowerTreeEnsemble,
    LowerTreeEnsembleClassifier,
    LowerSvmRegressor,
    LowerSvmClassifier,
    LowerLinearClassifier,
    LowerNormalizer,
    LowerLabelEncoder,
    LowerScaler,
    LowerBinarizer,
    LowerImputer,
    LowerOneHotEncoder,
)
