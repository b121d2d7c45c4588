"""NumPy kernels of the classic-ML ops (``mir.tree_ensemble``, ``mir.svm_classifier``...):
the reference arithmetic the ops' docstrings state.

Scores accumulate in the result's type in a fixed order (trees in order, each leaf's
entries in order), so a native kernel looping the same way gives the same bits.
Transforms and kernels are the primitive kernels called in the order of the ops'
decompositions (``legalization.ml``), so the lowered forms round alike where their
arithmetic is the same.
"""

from __future__ import annotations

import math

import numpy as np

from rlx_compile.dialects.common import (
    ComparePredicate,
    NormKind,
    PostTransform,
    SvmKernel,
    TreeAggregate,
)
from rlx_compile.dialects.mir import Forest
from rlx_compile.interpreter import kernels as K


def _c(value: float, like: np.ndarray) -> np.ndarray:
    """A scalar in ``like``'s type."""
    return np.asarray(value, like.dtype)


# ---------------------------------------------------------------------------------
# Post transforms (onnxruntime's)
# ---------------------------------------------------------------------------------


def probit(v: np.ndarray) -> np.ndarray:
    """sqrt(2) erfinv(2v - 1) with onnxruntime's closed-form erfinv (Winitzki, a =
    0.147)."""
    x = K.binary("sub", K.binary("mul", v, _c(2.0, v)), _c(1.0, v))
    sign = K.where(K.compare(_LT, x, _c(0.0, x)), _c(-1.0, x), _c(1.0, x))
    one = _c(1.0, x)
    log = K.unary("log", K.binary("mul", K.binary("sub", one, x), K.binary("add", one, x)))
    a = K.binary("add", K.binary("mul", log, _c(0.5, x)), _c(2.0 / (3.14159 * 0.147), x))
    root = K.unary(
        "sqrt",
        K.binary("sub", K.binary("mul", a, a), K.binary("mul", log, _c(1.0 / 0.147, x))),
    )
    y = K.binary("mul", sign, K.unary("sqrt", K.binary("sub", root, a)))
    return K.binary("mul", y, _c(float(np.float32(1.41421356)), x))


def post_transform(y: np.ndarray, kind: PostTransform) -> np.ndarray:
    """``kind`` along the last axis."""
    if kind is PostTransform.NONE:
        return y
    if kind is PostTransform.LOGISTIC:
        return K.unary("sigmoid", y)
    if kind is PostTransform.SOFTMAX:
        return K.softmax(y, y.ndim - 1)
    if kind is PostTransform.PROBIT:
        return probit(y)
    # softmax_zero: scores within 1e-7 of 0 take no part (they become ~0).
    last = (y.ndim - 1,)
    top = K.reduce("max", y, last, True)
    zero = K.compare(_LE, K.unary("abs", y), _c(1e-7, y))
    e = K.where(
        zero,
        K.binary("mul", y, K.unary("exp", K.unary("neg", top))),
        K.unary("exp", K.binary("sub", y, top)),
    )
    total = K.reduce("sum", K.where(zero, _c(0.0, y), e), last, True)
    return K.binary("div", e, total)


# ---------------------------------------------------------------------------------
# Tree ensembles
# ---------------------------------------------------------------------------------


def tree_leaves(x: np.ndarray, forest: Forest) -> np.ndarray:
    """The leaf each sample reaches in each tree: [batch, trees] int64."""
    batch, trees = x.shape[0], len(forest.roots)
    node = np.array(np.broadcast_to(forest.roots, (batch, trees)))
    splits = forest.splits.astype(x.dtype)
    members = forest.member_table(x.dtype)
    while True:
        rows, cols = np.nonzero(node >= 0)
        if not rows.size:
            return -1 - node
        k = node[rows, cols]
        v = x[rows, forest.features[k]]
        s, mode = splits[k], forest.modes[k]
        with np.errstate(invalid="ignore"):
            tests = (v <= s, v < s, v >= s, v > s, v == s, v != s)
            holds = np.select([mode == m for m in range(6)], tests, False)
            if members is not None:
                listed = (members[k] == v[:, None]).any(axis=1)
                holds = np.where(mode == 6, listed, holds)
        if forest.missing_true is not None:
            holds |= np.isnan(v) & (forest.missing_true[k] == 1)
        node[rows, cols] = np.where(holds, forest.true_next[k], forest.false_next[k])


def tree_scores(
    x: np.ndarray, forest: Forest, outputs: int, dtype: np.dtype, aggregate: TreeAggregate
) -> tuple[np.ndarray, np.ndarray]:
    """Per output, the weights of the reached leaves combined over the trees in order and
    each leaf's entries in order, in ``dtype``; and whether any reached leaf weighs it."""
    leaves = tree_leaves(x, forest)
    batch = x.shape[0]
    acc = np.zeros((batch, outputs), dtype)
    has = np.zeros((batch, outputs), bool)
    weights = forest.leaf_weights.astype(dtype)
    counts = np.diff(forest.leaf_starts)
    samples = np.arange(batch)
    for t in range(leaves.shape[1]):
        leaf = leaves[:, t]
        first, count = forest.leaf_starts[leaf], counts[leaf]
        for j in range(int(count.max(initial=0))):
            sel = count > j
            rows, entry = samples[sel], first[sel] + j
            target, w = forest.leaf_targets[entry], weights[entry]
            cur, seen = acc[rows, target], has[rows, target]
            if aggregate is TreeAggregate.MIN:
                w = np.where(seen & ~(w < cur), cur, w)
            elif aggregate is TreeAggregate.MAX:
                w = np.where(seen & ~(w > cur), cur, w)
            else:
                w = cur + w
            acc[rows, target], has[rows, target] = w, True
    return acc, has


def tree_ensemble(
    x: np.ndarray,
    forest: Forest,
    outputs: int,
    dtype: np.dtype,
    aggregate: TreeAggregate,
    base: np.ndarray,
    fill: float,
    post: PostTransform,
) -> np.ndarray:
    y, has = tree_scores(x, forest, outputs, dtype, aggregate)
    if aggregate is TreeAggregate.AVERAGE:
        y = K.binary("div", y, _c(float(len(forest.roots)), y))
    if len(base):
        y = K.binary("add", y, base.astype(dtype).reshape(1, -1))
    return post_transform(K.where(has, y, _c(fill, y)), post)


def tree_ensemble_classifier(
    x: np.ndarray,
    forest: Forest,
    classes: int,
    dtype: np.dtype,
    base: np.ndarray,
    post: PostTransform,
    labels: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """onnxruntime's TreeEnsembleClassifier (see ``mir.tree_ensemble_classifier``)."""
    s, has = tree_scores(x, forest, classes, dtype, TreeAggregate.SUM)
    table = np.arange(classes, dtype=np.int64) if labels is None else labels
    base = base.astype(dtype)
    if classes > 2:
        if len(base):
            padded = np.zeros(classes, dtype)
            padded[: len(base)] = base
            s = K.binary("add", s, padded.reshape(1, -1))
            has[:, : len(base)] = True
        best = np.argmax(np.where(has, s, -np.inf), axis=1)
        return table[best], post_transform(s, post)
    s0, s1, h0, h1 = s[:, 0], s[:, 1], has[:, 0], has[:, 1]
    if len(base) == 2:
        shifted = K.binary("add", s0, base[1])
        s0 = np.where(h1, K.unary("neg", shifted), K.binary("add", s0, base[0]))
        s1 = np.where(h1, shifted, K.binary("add", s1, base[1]))
        two = np.ones_like(h1)
    else:
        if len(base) == 1:
            s0 = K.binary("add", s0, base[0])
        two = h1
    zero = _c(0.0, s0)
    v0, v1 = np.where(h0, s0, zero), np.where(h1, s1, zero)
    score = np.where(two & h1, s1, v0)
    one_class = len(set(forest.leaf_targets.tolist())) == 1
    positive = bool((forest.leaf_weights >= 0).all())
    if one_class:
        label = table[(score > (0.5 if positive else 0.0)).astype(np.int64)]
    else:
        label = (score > 0).astype(np.int64)  # onnxruntime's raw index, not a class label
    pair = post_transform(np.stack([v0, v1], axis=1), post)
    if one_class and positive:
        single = [K.binary("sub", _c(1.0, v0), v0), v0]
    elif post is PostTransform.LOGISTIC:
        single = [K.unary("sigmoid", K.unary("neg", v0)), K.unary("sigmoid", v0)]
    else:
        single = [K.unary("neg", v0), v0]
    scores = np.where(two[:, None], pair, np.stack(single, axis=1))
    return label, scores.astype(dtype)


# ---------------------------------------------------------------------------------
# Support vector machines
# ---------------------------------------------------------------------------------


def svm_kernel(
    x: np.ndarray, vectors: np.ndarray, kind: SvmKernel, gamma: float, coef0: float,
    degree: float,
) -> np.ndarray:  # fmt: skip
    """K(x, v) of every sample and support vector: [batch, vectors]."""
    batch, features = x.shape
    sv = vectors.astype(x.dtype).reshape(-1, features)
    if kind is SvmKernel.RBF:
        diff = K.binary("sub", x.reshape(batch, 1, features), sv.reshape(1, -1, features))
        total = K.reduce("sum", K.binary("mul", diff, diff), (2,), False)
        return K.unary("exp", K.binary("mul", total, _c(-gamma, x)))
    dot = K.matmul(x, np.ascontiguousarray(sv.T))
    if kind is SvmKernel.LINEAR:
        return dot
    dot = K.binary("add", K.binary("mul", dot, _c(gamma, x)), _c(coef0, x))
    if kind is SvmKernel.SIGMOID:
        return K.unary("tanh", dot)
    if degree == 2:
        return K.binary("mul", dot, dot)
    if degree == 3:
        return K.binary("mul", K.binary("mul", dot, dot), dot)
    return K.binary("pow", dot, _c(degree, x))


def svm_regressor(
    k: np.ndarray, coefficients: np.ndarray, rho: float, one_class: bool
) -> np.ndarray:
    y = K.matmul(k, coefficients.astype(k.dtype).reshape(-1, 1))
    y = K.binary("add", y, _c(rho, y))
    if one_class:
        y = K.where(K.compare(_GT, y, _c(0.0, y)), _c(1.0, y), _c(-1.0, y))
    return y


def svm_classifier(
    k: np.ndarray,
    table: np.ndarray,
    rho: np.ndarray,
    prob_a: np.ndarray | None,
    prob_b: np.ndarray | None,
    post: PostTransform,
    labels: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """libsvm's one-vs-one votes and scores (see ``mir.svm_classifier``)."""
    dtype = k.dtype
    pairs = len(rho)
    classes = (1 + math.isqrt(1 + 8 * pairs)) // 2
    decision = K.matmul(k, table.astype(dtype).reshape(-1, pairs))
    decision = K.binary("add", decision, rho.astype(dtype).reshape(1, -1))
    votes = np.zeros((k.shape[0], classes), np.int64)
    wins = decision > 0
    p = 0
    for i in range(classes):
        for j in range(i + 1, classes):
            votes[:, i] += wins[:, p]
            votes[:, j] += ~wins[:, p]
            p += 1
    best = np.argmax(votes, axis=1)
    label = best if labels is None else labels[best]
    if prob_a is not None and prob_b is not None:
        a, b = prob_a.astype(dtype).reshape(1, -1), prob_b.astype(dtype).reshape(1, -1)
        platt = K.unary("sigmoid", K.binary("add", K.binary("mul", decision, a), b))
        platt = K.binary("sub", _c(1.0, platt), platt)
        platt = K.binary("min", K.binary("max", platt, _c(1e-7, platt)), _c(1.0 - 1e-7, platt))
        r = np.zeros((k.shape[0], classes, classes), dtype)
        p = 0
        for i in range(classes):
            for j in range(i + 1, classes):
                r[:, i, j] = platt[:, p]
                r[:, j, i] = K.binary("sub", _c(1.0, platt), platt[:, p])
                p += 1
        return label, post_transform(K.pairwise_coupling(r), post)
    if classes == 2:
        return label, binary_pair(decision[:, 0], post, negate=post is PostTransform.NONE)
    return label, post_transform(decision, post)


def binary_pair(s: np.ndarray, post: PostTransform, negate: bool = False) -> np.ndarray:
    """onnxruntime's two scores from one: [-s, s] (``negate``), else [1 - t, t] with t
    the logistic of s under ``logistic``, s itself otherwise."""
    if negate:
        return np.stack([K.unary("neg", s), s], axis=1)
    if post is PostTransform.LOGISTIC:
        s = K.unary("sigmoid", s)
    return np.stack([K.binary("sub", _c(1.0, s), s), s], axis=1)


# ---------------------------------------------------------------------------------
# Linear models and preprocessing
# ---------------------------------------------------------------------------------


def linear_classifier(
    x: np.ndarray,
    coefficients: np.ndarray,
    intercepts: np.ndarray | None,
    post: PostTransform,
    labels: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    features = x.shape[1]
    w = coefficients.astype(x.dtype).reshape(-1, features)
    scores = K.matmul(x, np.ascontiguousarray(w.T))
    if intercepts is not None:
        scores = K.binary("add", scores, intercepts.astype(x.dtype).reshape(1, -1))
    table = np.arange(max(w.shape[0], 2), dtype=np.int64) if labels is None else labels
    if w.shape[0] == 1:
        s = scores[:, 0]
        return table[(s > 0).astype(np.int64)], binary_pair(s, post)
    return table[np.argmax(scores, axis=1)], post_transform(scores, post)


def normalizer(x: np.ndarray, norm: NormKind) -> np.ndarray:
    last = (x.ndim - 1,)
    zero = _c(0.0, x)
    if norm is NormKind.MAX:
        z = K.reduce("max", x, last, True)
        return K.where(K.compare(_NE, z, zero), K.binary("div", x, z), x)
    if norm is NormKind.L1:
        z = K.reduce("sum", K.unary("abs", x), last, True)
        return K.where(K.compare(_NE, z, zero), K.binary("div", x, z), x)
    square = K.binary("mul", x, x)
    z = K.reduce("sum", square, last, True)
    root = K.unary("sqrt", K.binary("div", square, z))
    signed = K.where(K.compare(_LT, x, zero), K.unary("neg", root), root)
    return K.where(K.compare(_NE, z, zero), signed, x)


def label_encoder(
    x: np.ndarray, keys: np.ndarray, values: np.ndarray, nan_matches: bool, dtype: np.dtype
) -> np.ndarray:
    """The value of the first key equal to each element, else the default (last)."""
    keyed = keys.astype(x.dtype) if x.dtype.kind == "f" else keys
    with np.errstate(invalid="ignore"):
        hit = x[..., None] == keyed
        if nan_matches and x.dtype.kind == "f":
            hit |= np.isnan(x)[..., None] & np.isnan(keyed)
    found = hit.any(axis=-1)
    index = (
        np.where(found, np.argmax(hit, axis=-1), len(keys))
        if len(keys)
        else np.zeros(x.shape, np.int64)
    )
    return values.astype(dtype)[index]


_LT, _LE, _GT, _NE, _EQ = (ComparePredicate(p) for p in ("lt", "le", "gt", "ne", "eq"))


def scaler(x: np.ndarray, offset: np.ndarray, scale: np.ndarray) -> np.ndarray:
    shape = [1] * (x.ndim - 1) + [-1]
    off, sc = offset.astype(x.dtype).reshape(shape), scale.astype(x.dtype).reshape(shape)
    return K.binary("mul", K.binary("sub", x, off), sc)


def binarizer(x: np.ndarray, threshold: float) -> np.ndarray:
    return K.cast(K.compare(_GT, x, _c(threshold, x)), x.dtype)


def imputer(x: np.ndarray, imputed: np.ndarray, replaced: float) -> np.ndarray:
    hit = np.isnan(x) if math.isnan(replaced) else K.compare(_EQ, x, _c(replaced, x))
    table = imputed.astype(x.dtype).reshape([1] * (x.ndim - 1) + [-1])
    return K.where(hit, np.broadcast_to(table, x.shape), x)


def one_hot_encoder(
    x: np.ndarray,
    categories: np.ndarray,
    answering: np.ndarray,
    columns: np.ndarray | None = None,
) -> np.ndarray:
    """1.0 where a value equals a category at a position that answers for it
    (``mir.OneHotEncoderOp.answering``), 0.0 elsewhere. With ``columns`` (the column of
    each category position: ``category_columns``) the last axis of ``x`` holds the
    columns, each compared with its own categories."""
    values = x[..., None] if columns is None else x[..., columns]
    return ((values == categories) & answering).astype(np.float32)
