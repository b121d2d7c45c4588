"""Random classic-ML ops (``mir.tree_ensemble`` and the rest) for the tests that run
them: every tree-node mode, missing tracks, set membership, leaves with several entries,
tree roots that are leaves; SVMs of every kernel; linear classifiers; label encoders;
scalers, binarizers, imputers and one-hot encoders.

``OPS`` maps a case name to ``build(m, x, rng) -> outputs`` for a [rows, FEATURES]
input ``x`` of f32 or f64 (``build`` reads the input's type off ``x``); ``samples``
gives inputs that hit every branch (NaN included).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import GraphBuilder, type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType

FEATURES = 5
ROWS = 9


def samples(dtype: np.dtype, rng: np.random.Generator, rows: int = ROWS) -> np.ndarray:
    """Values on a grid of halves (so that == and != splits hit), a NaN in places."""
    x = np.round(rng.standard_normal((rows, FEATURES)) * 2) / 2
    x[rng.random(x.shape) < 0.08] = np.nan
    return x.astype(dtype)


def random_forest(
    rng: np.random.Generator,
    outputs: int,
    trees: int = 4,
    depth: int = 3,
    entries: tuple[int, int] = (1, 2),
    every_leaf_weighs: tuple[int, ...] = (),
    members: bool = True,
) -> mir.Forest:
    """Random trees in topological order; leaves give 1..entries weights to random
    outputs (and always to those of ``every_leaf_weighs``)."""
    features: list[int] = []
    modes: list[int] = []
    splits: list[float] = []
    true_next: list[int] = []
    false_next: list[int] = []
    missing: list[int] = []
    sets: list[list[float]] = []
    leaf_entries: list[list[tuple[int, float]]] = []

    def leaf() -> int:
        k = int(rng.integers(entries[0], entries[1] + 1))
        chosen = [
            (int(rng.integers(outputs)), float(np.round(rng.standard_normal(), 3)))
            for _ in range(k)
        ]
        chosen += [(t, float(np.round(rng.random(), 3))) for t in every_leaf_weighs]
        leaf_entries.append(chosen)
        return -len(leaf_entries)  # -1 - index

    def node(level: int) -> int:
        if level == depth or (level and rng.random() < 0.25):
            return leaf()
        k = len(features)
        features.append(int(rng.integers(FEATURES)))
        modes.append(int(rng.integers(7 if members else 6)))
        splits.append(float(np.round(rng.standard_normal() * 2) / 2))
        missing.append(int(rng.random() < 0.5))
        sets.append([float(v) / 2 for v in rng.integers(-4, 5, int(rng.integers(1, 4)))])
        true_next.append(0)
        false_next.append(0)
        true_next[k] = node(level + 1)
        false_next[k] = node(level + 1)
        return k

    roots = [leaf() if t == 0 else node(0) for t in range(trees)]  # tree 0: one leaf
    sizes = [len(s) if m == 6 else 0 for s, m in zip(sets, modes, strict=True)]
    flat = [v for s, m in zip(sets, modes, strict=True) if m == 6 for v in s]
    counts = [len(e) for e in leaf_entries]
    return mir.Forest(
        roots=np.array(roots, np.int64),
        features=np.array(features, np.int64),
        modes=np.array(modes, np.int64),
        splits=np.array(splits, np.float64),
        true_next=np.array(true_next, np.int64),
        false_next=np.array(false_next, np.int64),
        leaf_starts=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        leaf_targets=np.array([t for e in leaf_entries for t, _ in e], np.int64),
        leaf_weights=np.array([w for e in leaf_entries for _, w in e], np.float64),
        missing_true=np.array(missing, np.int64),
        member_starts=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        member_values=np.array(flat, np.float64),
    )


Build = Callable[[GraphBuilder, SSAValue, np.random.Generator], list[SSAValue]]
OPS: dict[str, Build] = {}


def op_case(name: str) -> Callable[[Build], Build]:
    def register(build: Build) -> Build:
        OPS[name] = build
        return build

    return register


def _scores(x: SSAValue, n: int) -> TensorType:
    t = type_of(x)
    return TensorType((t.shape[0], n), t.dtype)


for _aggregate in ("sum", "average", "min", "max"):
    for _post in ("none", "logistic", "softmax", "softmax_zero", "probit"):

        @op_case(f"tree_ensemble_{_aggregate}_{_post}")
        def _tree(
            b: GraphBuilder,
            x: SSAValue,
            rng: np.random.Generator,
            aggregate: str = _aggregate,
            post: str = _post,
        ) -> list[SSAValue]:
            forest = random_forest(rng, 3)
            base = [0.25, -0.5, 1.0] if aggregate in ("sum", "average") else []
            fill = -7.0 if aggregate == "min" else 0.0
            scores = _scores(x, 3)
            if post == "probit":  # probit takes probabilities
                forest.leaf_weights = np.abs(forest.leaf_weights) / 8
                base = []
            op = mir.TreeEnsembleOp(x, forest, scores, aggregate, base, fill, post)
            return list(b.emit(op).results)


for _classes, _base, _weighs, _post in (
    (3, (), (), "none"),
    (4, (0.5, -0.25), (), "softmax"),
    (3, (0.1, 0.2, 0.3), (), "logistic"),
    (2, (), (0, 1), "none"),  # both classes at every leaf: two scores
    (2, (), (1,), "logistic"),  # class 1 only: one score, [sigmoid(-s), sigmoid(s)]
    (2, (0.5,), (0, 1), "softmax"),
    (2, (0.3, -0.2), (0, 1), "none"),  # two base values, class 1 weighed
    (2, (0.3, -0.2), (0,), "softmax_zero"),  # two base values, class 1 never weighed
):

    @op_case(f"tree_classifier_{_classes}_{len(_base)}_{''.join(map(str, _weighs))}_{_post}")
    def _classifier(
        b: GraphBuilder,
        x: SSAValue,
        rng: np.random.Generator,
        classes: int = _classes,
        base: tuple[float, ...] = _base,
        weighs: tuple[int, ...] = _weighs,
        post: str = _post,
    ) -> list[SSAValue]:
        if classes == 2:  # binary layouts need the same classes at every leaf
            forest = random_forest(rng, classes, entries=(0, 0), every_leaf_weighs=weighs)
            if weighs == (1,):
                forest.leaf_weights = np.abs(forest.leaf_weights)  # one class, weights >= 0
        else:
            forest = random_forest(rng, classes)
        labels = [10 * c + 3 for c in range(classes)]
        op = mir.TreeEnsembleClassifierOp(x, forest, _scores(x, classes), base, post, labels)
        return list(b.emit(op).results)


def _vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    return np.round(rng.standard_normal((count, FEATURES)), 3)


for _kernel in ("linear", "poly", "rbf", "sigmoid"):

    @op_case(f"svm_regressor_{_kernel}")
    def _svr(
        b: GraphBuilder, x: SSAValue, rng: np.random.Generator, kernel: str = _kernel
    ) -> list[SSAValue]:
        coefficients = np.round(rng.standard_normal(6), 3).tolist()
        op = mir.SvmRegressorOp(
            x, _vectors(rng, 6), coefficients, 0.25, kernel, gamma=0.2, coef0=0.5, degree=3.0
        )
        one_class = mir.SvmRegressorOp(
            x,
            _vectors(rng, 4),
            [1.0, -1.0, 0.5, 0.25],
            -0.1,
            kernel,
            gamma=0.3,
            coef0=1.0,
            degree=2.0,
            one_class=True,
        )
        return [b.emit(op).results[0], b.emit(one_class).results[0]]


for _classes, _kernel, _proba, _post in (
    (3, "rbf", True, "none"),
    (4, "poly", True, "softmax"),
    (3, "linear", False, "none"),
    (3, "sigmoid", False, "logistic"),
    (2, "rbf", False, "none"),
    (2, "linear", False, "logistic"),
    (2, "poly", True, "none"),
):

    @op_case(f"svm_classifier_{_classes}_{_kernel}_{int(_proba)}_{_post}")
    def _svc(
        b: GraphBuilder,
        x: SSAValue,
        rng: np.random.Generator,
        classes: int = _classes,
        kernel: str = _kernel,
        proba: bool = _proba,
        post: str = _post,
    ) -> list[SSAValue]:
        pairs, count = classes * (classes - 1) // 2, 7
        table = np.round(rng.standard_normal((count, pairs)), 3)
        rho = np.round(rng.standard_normal(pairs), 3).tolist()
        a = np.round(-rng.random(pairs) - 0.5, 3).tolist() if proba else None
        bb = np.round(rng.standard_normal(pairs) / 4, 3).tolist() if proba else None
        op = mir.SvmClassifierOp(
            x,
            _vectors(rng, count),
            table,
            rho,
            kernel,
            gamma=0.2,
            coef0=0.25,
            degree=2.0,
            prob_a=a,
            prob_b=bb,
            post_transform=post,
            class_labels=list(range(5, 5 + classes)),
        )
        return list(b.emit(op).results)


for _rows, _post, _bias in (
    (3, "softmax", True),
    (4, "none", False),
    (1, "logistic", True),
    (1, "none", False),
    (2, "softmax_zero", True),
):

    @op_case(f"linear_classifier_{_rows}_{_post}_{int(_bias)}")
    def _linear(
        b: GraphBuilder,
        x: SSAValue,
        rng: np.random.Generator,
        rows: int = _rows,
        post: str = _post,
        bias: bool = _bias,
    ) -> list[SSAValue]:
        w = np.round(rng.standard_normal((rows, FEATURES)), 3)
        intercepts = np.round(rng.standard_normal(rows), 3).tolist() if bias else None
        labels = [7, 9, 11, 13][: max(rows, 2)]
        return list(b.emit(mir.LinearClassifierOp(x, w, intercepts, post, labels)).results)


for _norm in ("max", "l1", "l2"):

    @op_case(f"normalizer_{_norm}")
    def _normalizer(
        b: GraphBuilder, x: SSAValue, rng: np.random.Generator, norm: str = _norm
    ) -> list[SSAValue]:
        return [b.emit(mir.NormalizerOp(x, norm)).results[0]]


@op_case("label_encoder")
def _label_encoder(b: GraphBuilder, x: SSAValue, rng: np.random.Generator) -> list[SSAValue]:
    """Float keys (a NaN key, a key twice) to floats and to ints; int keys to ints."""
    keys = np.array([0.5, -1.0, np.nan, 0.5, 2.0])
    floats = b.emit(
        mir.LabelEncoderOp(
            x, keys, np.array([1.5, 2.5, -3.0, 9.0, 4.0, -0.5]), type_of(x).dtype, nan_matches=True
        )
    )
    ints = b.emit(mir.LabelEncoderOp(x, keys, np.arange(6, dtype=np.int64) * 3, DType.I64))
    codes = b.cast(x, DType.I64)  # NaN casts to 0
    mapped = b.emit(
        mir.LabelEncoderOp(
            codes,
            np.array([0, 2, -1, 2], np.int64),
            np.array([10, 20, 30, 40, -1], np.int64),
            DType.I32,
        )
    )
    empty = b.emit(mir.LabelEncoderOp(x, np.zeros(0), np.array([-2.0]), type_of(x).dtype))
    return [floats.results[0], ints.results[0], mapped.results[0], empty.results[0]]


for _offsets, _scales in (
    ([0.5, -1.0, 0.0, 2.0, 0.25], [2.0, 0.5, -1.0, 3.0, 0.1]),
    ([0.5], [0.1]),
):

    @op_case(f"scaler_{len(_scales)}")
    def _scaler(
        b: GraphBuilder,
        x: SSAValue,
        rng: np.random.Generator,
        offsets: list[float] = _offsets,
        scales: list[float] = _scales,
    ) -> list[SSAValue]:
        """Per feature and by one value; 0.1 rounds differently in f32 and f64."""
        return [b.emit(mir.ScalerOp(x, offsets, scales)).results[0]]


@op_case("binarizer")
def _binarizer(b: GraphBuilder, x: SSAValue, rng: np.random.Generator) -> list[SSAValue]:
    """At a threshold the samples hit (equal is not above) and one f32 rounds."""
    return [b.emit(mir.BinarizerOp(x, t)).results[0] for t in (0.5, 0.1)]


@op_case("imputer")
def _imputer(b: GraphBuilder, x: SSAValue, rng: np.random.Generator) -> list[SSAValue]:
    """NaN replaced per feature and by one value; a value replaced (NaN left alone)."""
    per_feature = mir.ImputerOp(x, [1.5, -2.0, 0.1, 4.0, 0.0], math.nan)
    one = mir.ImputerOp(x, [-7.25], math.nan)
    value = mir.ImputerOp(x, [0.1, 2.0, 3.0, -4.0, 5.0], 0.5)
    return [b.emit(op).results[0] for op in (per_feature, one, value)]


@op_case("one_hot_encoder")
def _one_hot_encoder(b: GraphBuilder, x: SSAValue, rng: np.random.Generator) -> list[SSAValue]:
    """Integer codes (NaN casts to 0) over categories with one listed twice and codes
    in none of them."""
    codes = b.cast(x, DType.I64)
    return [b.emit(mir.OneHotEncoderOp(codes, [1, 0, -2, 1, 3])).results[0]]


@op_case("one_hot_encoder_columns")
def _one_hot_encoder_columns(
    b: GraphBuilder, x: SSAValue, rng: np.random.Generator
) -> list[SSAValue]:
    """Each of the five columns over its own categories: a category listed twice within
    a column, one listed in two columns (each answers for its own), codes in none."""
    codes = b.cast(x, DType.I64)
    op = mir.OneHotEncoderOp(codes, [1, 0, -2, 1, -2, 3, 0, 1, 2], [0, 2, 5, 6, 8, 9])
    return [b.emit(op).results[0]]
