"""Tree ensembles of the ai.onnx.ml domain: TreeEnsemble (opset 5) and the older
TreeEnsembleRegressor and TreeEnsembleClassifier.

The trees are attributes, so their shape is known at import: every tree is walked at
once, one level per step for the deepest tree's depth. Each sample's current node selects
its feature, split and mode by gathers on per-node tables; a sample at a leaf stays. The
leaves reached then give their weights, aggregated over the trees. The older ops keep
their nodes and leaves in one table keyed by (tree id, node id); they are re-laid into
the branch and leaf tables TreeEnsemble uses, and aggregated as onnxruntime does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    converter,
)
from rlx_compile.frontends.onnx.ops.ml import (
    ML,
    argmax,
    class_labels,
    labels_at,
    ml_input,
    post_transform,
    probit,
    side,
)
from rlx_compile.frontends.onnx.ops.shape import iota

_COMPARE = {0: "le", 1: "lt", 2: "ge", 3: "gt", 4: "eq", 5: "ne"}
_MODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3,
          "BRANCH_EQ": 4, "BRANCH_NEQ": 5}  # fmt: skip


def _ints(ctx: NodeContext, name: str) -> np.ndarray:
    value = ctx.attr(name)
    if value is None:
        raise Unsupported(f"attribute '{name}' is required")
    return np.asarray(value, np.int64).reshape(-1)


@dataclass
class Forest:
    """Branch nodes and leaves in flat tables. A branch names its successors by index,
    ``*_leaf`` saying whether that index is a leaf's or another branch's; ``starts`` is
    each tree's root, a leaf index where ``root_is_leaf``."""

    features: np.ndarray
    splits: np.ndarray
    modes: np.ndarray
    true_ids: np.ndarray
    false_ids: np.ndarray
    true_leaf: np.ndarray
    false_leaf: np.ndarray
    starts: np.ndarray
    root_is_leaf: np.ndarray
    tracks: np.ndarray | None = None
    """1 where a missing (NaN) value takes the true branch."""
    member_sets: np.ndarray | None = None
    """For MEMBER (mode 6) nodes: their set, NaN-padded rows."""

    def depth(self) -> int:
        """Levels to walk: the deepest tree's (trees may be DAGs; memoised)."""

        @functools.cache
        def below(node: int) -> int:
            branches = (
                (self.true_ids[node], self.true_leaf[node]),
                (self.false_ids[node], self.false_leaf[node]),
            )
            return 1 + max(0 if leaf else below(int(nxt)) for nxt, leaf in branches)

        return max(
            (below(int(s)) for s, leaf in zip(self.starts, self.root_is_leaf, strict=True)
             if not leaf),
            default=0,
        )  # fmt: skip


def walk(ctx: NodeContext, x: SSAValue, forest: Forest) -> SSAValue:
    """The leaf each sample reaches in each tree: [batch, trees] int64."""
    b = ctx.b
    batch, features = type_of(x).shape
    if not isinstance(features, int):
        raise Unsupported(f"the input needs a static number of features, got {features}")
    if forest.features.size and int(forest.features.max()) >= features:
        raise Unsupported(
            f"a node reads feature {int(forest.features.max())} of an input with {features}"
        )
    trees = len(forest.starts)
    # Every sample starts at the roots; the batch may be symbolic (an open batch dim).
    node = b.expand(ctx.constant(forest.starts.astype(np.int64).reshape(1, trees)), [batch, trees])
    at_leaf = b.expand(ctx.constant(forest.root_is_leaf.reshape(1, trees)), [batch, trees])
    flat_x = b.reshape(x, [batch * features])
    rows = b.reshape(b.mul(iota(ctx, batch, DType.I64), features), [batch, 1])

    def table(values: np.ndarray) -> Callable[[SSAValue], SSAValue]:
        """A per-node attribute as a constant, looked up by index."""
        const = ctx.constant(values)
        return lambda index: b.gather(const, index, 0)

    feature_of, split_of, mode_of = (
        table(forest.features), table(forest.splits), table(forest.modes)
    )  # fmt: skip
    true_of, false_of = table(forest.true_ids), table(forest.false_ids)
    true_leaf_of, false_leaf_of = table(forest.true_leaf), table(forest.false_leaf)
    tracks_of = None
    if forest.tracks is not None and np.any(forest.tracks):
        tracks_of = table(forest.tracks.astype(np.int64))
    members_of = None if forest.member_sets is None else table(forest.member_sets)
    used_modes = sorted(set(forest.modes.tolist()))
    for _ in range(forest.depth()):
        # Samples already at a leaf hold a leaf index: they read node 0, and stay.
        walking = b.where(at_leaf, 0, node)
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
                hit = b.compare(_COMPARE[mode], value, split)
            if cond is None:
                cond = hit
            else:
                cond = b.where(b.compare("eq", mode_of(walking), mode), hit, cond)
        assert cond is not None
        if tracks_of is not None:
            missing = b.compare("ne", value, value)  # NaN
            follows = b.cast(tracks_of(walking), DType.BOOL)
            cond = b.binary(mir.OrOp, cond, b.binary(mir.AndOp, missing, follows))
        nxt = b.where(cond, true_of(walking), false_of(walking))
        leaf = b.cast(b.where(cond, true_leaf_of(walking), false_leaf_of(walking)), DType.BOOL)
        node = b.where(at_leaf, node, nxt)
        at_leaf = b.binary(mir.OrOp, at_leaf, leaf)
    return node


# ---------------------------------------------------------------------------------
# TreeEnsemble (ai.onnx.ml opset 5)
# ---------------------------------------------------------------------------------


@converter("TreeEnsemble", domain=ML)
def tree_ensemble(ctx: NodeContext) -> ConverterResult:
    """ONNX's text decides where the peers differ: set membership tests the value itself
    (onnxruntime truncates it to an integer), post_transform 1 is SOFTMAX and 2 LOGISTIC
    (onnxruntime swaps them; onnx's reference ignores post_transform), and under MIN/MAX
    a target no leaf reaches keeps the type's extreme (as the reference)."""
    b = ctx.b
    x = ctx.x(0)
    batch = type_of(x).shape[0]
    dtype = type_of(x).dtype
    splits = np.asarray(ctx.attr("nodes_splits"), dtype.numpy).reshape(-1)
    modes = _ints(ctx, "nodes_modes")
    feature_ids, roots = _ints(ctx, "nodes_featureids"), _ints(ctx, "tree_roots")
    true_ids, false_ids = _ints(ctx, "nodes_truenodeids"), _ints(ctx, "nodes_falsenodeids")
    true_leaf, false_leaf = _ints(ctx, "nodes_trueleafs"), _ints(ctx, "nodes_falseleafs")
    leaf_targets = _ints(ctx, "leaf_targetids")
    leaf_weights = np.asarray(ctx.attr("leaf_weights"), dtype.numpy).reshape(-1)
    targets = ctx.attr("n_targets")
    aggregate = ctx.check_attr("aggregate_function", (0, 1, 2, 3), 1)
    post = ctx.check_attr("post_transform", (0, 1, 2), 0)
    ctx.attr("nodes_hitrates")  # statistics; no effect on the result
    tracks = ctx.attr("nodes_missing_value_tracks_true")
    members = ctx.attr("membership_values")
    if targets is None or not targets:
        raise Unsupported("attribute 'n_targets' is required")
    if np.any(modes > 6):
        raise Unsupported(f"node modes {sorted(set(modes.tolist()))}")

    # A leaf root is a node whose branches both name the same leaf.
    root_is_leaf = (
        (true_leaf[roots] == 1) & (false_leaf[roots] == 1) & (true_ids[roots] == false_ids[roots])
    )
    member_sets: np.ndarray | None = None
    if members is not None:  # one NaN-terminated set per MEMBER node, in node order
        values = np.asarray(members, dtype.numpy).reshape(-1)
        sets: list[list[np.floating]] = []
        current: list[np.floating] = []
        for v in values:
            if np.isnan(v):
                sets.append(current)
                current = []
            else:
                current.append(v)
        width = max((len(s) for s in sets), default=1) or 1
        member_sets = np.full((len(modes), width), np.nan, dtype.numpy)
        for row, s in zip(np.flatnonzero(modes == 6), sets, strict=False):
            member_sets[row, : len(s)] = s
    elif np.any(modes == 6):
        raise Unsupported("MEMBER nodes without membership_values")
    forest = Forest(
        features=feature_ids, splits=splits, modes=modes, true_ids=true_ids,
        false_ids=false_ids, true_leaf=true_leaf, false_leaf=false_leaf,
        starts=np.where(root_is_leaf, true_ids[roots], roots), root_is_leaf=root_is_leaf,
        tracks=None if tracks is None else np.asarray(tracks, np.int64).reshape(-1),
        member_sets=member_sets,
    )  # fmt: skip
    leaf = walk(ctx, x, forest)
    trees = len(roots)
    weight = b.gather(ctx.constant(leaf_weights), leaf, 0)  # [batch, trees]
    target = b.gather(ctx.constant(leaf_targets), leaf, 0)
    ids = ctx.constant(np.arange(targets, dtype=np.int64).reshape(1, 1, targets))
    hits = b.compare("eq", b.reshape(target, [batch, trees, 1]), ids)  # [batch, trees, targets]
    weight = b.reshape(weight, [batch, trees, 1])
    if aggregate in (0, 1):
        y = b.reduce("sum", b.where(hits, weight, 0.0), 1)
        y = b.div(y, float(trees)) if aggregate == 0 else y
    else:
        info = np.finfo(dtype.numpy)
        fill, kind = (float(info.max), "min") if aggregate == 2 else (float(info.min), "max")
        y = b.reduce(kind, b.where(hits, weight, fill), 1)
    if post == 1:
        y = b.softmax(y, -1)
    elif post == 2:
        y = b.sigmoid(y)
    return y


# ---------------------------------------------------------------------------------
# TreeEnsembleRegressor / TreeEnsembleClassifier (ai.onnx.ml opsets 1 and 3)
# ---------------------------------------------------------------------------------


def _floats(ctx: NodeContext, name: str, dtype: DType) -> np.ndarray | None:
    """A FLOATS attribute or its ``<name>_as_tensor`` form (opset 3, any float type)."""
    value = ctx.attr(name)
    tensor = ctx.attr(f"{name}_as_tensor")
    if value is not None and tensor is not None:
        raise Unsupported(f"both '{name}' and '{name}_as_tensor' are given")
    if tensor is not None:
        return np.asarray(tensor).reshape(-1).astype(dtype.numpy)
    return None if value is None else np.asarray(value, np.float32).astype(dtype.numpy)


def _threshold_dtype(ctx: NodeContext) -> DType:
    """f64 when the node tables are given as double tensors, else f32."""
    for name in ("nodes_values_as_tensor", "base_values_as_tensor"):
        t = ctx.attr(name)
        if t is not None and np.asarray(t).dtype == np.float64:
            return DType.F64
    return DType.F32


@dataclass
class OldForest:
    forest: Forest
    leaf_values: np.ndarray
    """[leaves, outputs]: the weights each leaf gives each output (summed, or min/max)."""
    leaf_has: np.ndarray
    """[leaves, outputs]: whether the leaf carries a weight for that output."""
    leaf_first: np.ndarray
    """[leaves]: the leaf's first weight (its node value when it has none): what
    onnxruntime adds for a single output."""
    weight_outputs: set[int]
    all_positive: bool


def _old_forest(
    ctx: NodeContext, prefix: str, outputs: int, combine: str, dtype: DType
) -> OldForest:
    tree_ids, node_ids = _ints(ctx, "nodes_treeids"), _ints(ctx, "nodes_nodeids")
    feature_ids = _ints(ctx, "nodes_featureids")
    true_ids, false_ids = _ints(ctx, "nodes_truenodeids"), _ints(ctx, "nodes_falsenodeids")
    mode_names = ctx.attr("nodes_modes") or []
    values = _floats(ctx, "nodes_values", dtype)
    ctx.attr("nodes_hitrates")  # statistics; no effect on the result
    ctx.attr("nodes_hitrates_as_tensor")
    tracks = ctx.attr("nodes_missing_value_tracks_true")
    n = len(tree_ids)
    if values is None:
        values = np.zeros(n, dtype.numpy)
    if not (len(node_ids) == len(feature_ids) == len(true_ids) == len(false_ids)
            == len(mode_names) == len(values) == n):  # fmt: skip
        raise Unsupported("the nodes_* attributes have different lengths")
    unknown = sorted({m for m in mode_names if m != "LEAF" and m not in _MODES})
    if unknown:
        raise Unsupported(f"node modes {unknown}")
    index = {(int(t), int(i)): k for k, (t, i) in enumerate(zip(tree_ids, node_ids, strict=True))}
    if len(index) != n:
        raise Unsupported("a (tree id, node id) pair is given twice")
    is_leaf = np.array([m == "LEAF" for m in mode_names], bool)
    # Branches and leaves numbered apart, in node order.
    slot = np.where(is_leaf, np.cumsum(is_leaf) - 1, np.cumsum(~is_leaf) - 1)
    branches = np.flatnonzero(~is_leaf)

    def successor(k: int | np.integer, target: int | np.integer) -> int:
        found = index.get((int(tree_ids[k]), int(target)))
        if found is None:
            raise Unsupported(
                f"node {node_ids[k]} of tree {tree_ids[k]} names missing node {target}"
            )
        return found

    true_k = np.array([successor(k, true_ids[k]) for k in branches], np.int64)
    false_k = np.array([successor(k, false_ids[k]) for k in branches], np.int64)
    # A tree starts where the tree id changes (onnxruntime's reading).
    roots = np.flatnonzero(np.r_[True, tree_ids[1:] != tree_ids[:-1]]) if n else np.zeros(0, int)
    track_arr = None
    if tracks is not None:
        track_arr = np.zeros(n, np.int64)
        track_arr[: len(tracks)] = np.asarray(tracks, np.int64)[:n]
        track_arr = track_arr[branches]
    forest = Forest(
        features=feature_ids[branches],
        splits=values[branches],
        modes=np.array([_MODES[mode_names[k]] for k in branches], np.int64),
        true_ids=slot[true_k].astype(np.int64), false_ids=slot[false_k].astype(np.int64),
        true_leaf=is_leaf[true_k].astype(np.int64), false_leaf=is_leaf[false_k].astype(np.int64),
        starts=slot[roots].astype(np.int64), root_is_leaf=is_leaf[roots], tracks=track_arr,
    )  # fmt: skip
    # Leaf weights.
    w_trees, w_nodes = _ints(ctx, f"{prefix}_treeids"), _ints(ctx, f"{prefix}_nodeids")
    w_ids = _ints(ctx, f"{prefix}_ids")
    weights = _floats(ctx, f"{prefix}_weights", dtype)
    if weights is None or not (len(weights) == len(w_trees) == len(w_nodes) == len(w_ids)):
        raise Unsupported(f"the {prefix}_* attributes are missing or of different lengths")
    if len(w_ids) and (w_ids.min() < 0 or w_ids.max() >= outputs):
        raise Unsupported(f"{prefix}_ids name output {int(w_ids.max())} of {outputs}")
    leaves = int(is_leaf.sum())
    fill = {"sum": 0.0, "min": np.inf, "max": -np.inf}[combine]
    leaf_values = np.full((leaves, outputs), fill, np.float64)
    leaf_has = np.zeros((leaves, outputs), bool)
    leaf_first = values[is_leaf].astype(np.float64)
    first_seen = np.zeros(leaves, bool)
    for t, nd, i, w in zip(w_trees, w_nodes, w_ids, weights, strict=True):
        k = index.get((int(t), int(nd)))
        if k is None:
            raise Unsupported(f"a weight names missing node {nd} of tree {t}")
        if not is_leaf[k]:
            continue  # onnxruntime ignores weights on branch nodes
        leaf = slot[k]
        if combine == "sum":
            leaf_values[leaf, i] += w
        elif combine == "min":
            leaf_values[leaf, i] = min(leaf_values[leaf, i], w)
        else:
            leaf_values[leaf, i] = max(leaf_values[leaf, i], w)
        leaf_has[leaf, i] = True
        if not first_seen[leaf]:
            leaf_first[leaf], first_seen[leaf] = w, True
    leaf_values[~leaf_has] = 0.0
    return OldForest(
        forest, leaf_values.astype(dtype.numpy), leaf_has, leaf_first.astype(dtype.numpy),
        {int(i) for i in w_ids}, bool(np.all(weights >= 0)),
    )  # fmt: skip


def _tree_input(ctx: NodeContext, dtype: DType) -> SSAValue:
    """X as [batch, features] in the type its values are compared in: the thresholds'
    float type, or f64 for a double input (onnxruntime compares in C++'s promoted type)."""
    x = ml_input(ctx, None)
    xd = type_of(x).dtype
    want = DType.F64 if DType.F64 in (xd, dtype) else DType.F32
    return x if xd is want else ctx.b.cast(x, want)


def _walk_old(ctx: NodeContext, x: SSAValue, old: OldForest) -> SSAValue:
    """``walk`` with the splits in the type the input is compared in."""
    forest = old.forest
    forest.splits = forest.splits.astype(type_of(x).dtype.numpy)
    return walk(ctx, x, forest)


def _per_tree(ctx: NodeContext, leaf: SSAValue, table: np.ndarray) -> SSAValue:
    """A leaf table looked up by the reached leaves: [batch, trees, *table.shape[1:]]."""
    return ctx.b.gather(ctx.constant(table), leaf, 0)


@converter("TreeEnsembleRegressor", domain=ML)
def tree_ensemble_regressor(ctx: NodeContext) -> ConverterResult:
    b = ctx.b
    dtype = _threshold_dtype(ctx)
    x = _tree_input(ctx, dtype)
    targets = int(ctx.attr("n_targets", 1))
    aggregate = ctx.check_attr("aggregate_function", ("SUM", "AVERAGE", "MIN", "MAX"), "SUM")
    post = ctx.attr("post_transform", "NONE")
    base = _floats(ctx, "base_values", dtype)
    base = np.zeros(0, dtype.numpy) if base is None else base
    combine = {"SUM": "sum", "AVERAGE": "sum", "MIN": "min", "MAX": "max"}[aggregate]
    old = _old_forest(ctx, "target", targets, combine, dtype)
    leaf = _walk_old(ctx, x, old)
    trees = len(old.forest.starts)
    reduce = {"SUM": "sum", "AVERAGE": "sum", "MIN": "min", "MAX": "max"}[aggregate]
    if targets == 1:
        y = b.reduce(reduce, _per_tree(ctx, leaf, old.leaf_first), 1, keepdims=True)
        if aggregate == "AVERAGE":
            y = b.div(y, float(trees))
        if len(base) == 1:
            y = b.add(y, ctx.constant(base.reshape(1, 1)))
        return probit(ctx, y) if post == "PROBIT" else _check_post(post, y)
    values = _per_tree(ctx, leaf, old.leaf_values)  # [batch, trees, targets]
    has = _per_tree(ctx, leaf, old.leaf_has)
    if reduce == "sum":
        y = b.reduce("sum", values, 1)
    else:
        fill = np.inf if reduce == "min" else -np.inf
        y = b.reduce(reduce, b.where(has, values, fill), 1)
    if aggregate == "AVERAGE":
        y = b.div(y, float(trees))
    if len(base) == targets:
        y = b.add(y, ctx.constant(base.reshape(1, targets)))
    # A target no reached leaf weighs scores 0 in onnxruntime, base value or not.
    scored = b.compare("gt", b.reduce("sum", b.cast(has, DType.I32), 1), 0)
    y = b.where(scored, y, 0.0)
    return post_transform(ctx, y, post)


def _check_post(post: str, y: SSAValue) -> SSAValue:
    if post not in ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"):
        raise Unsupported(f"post_transform '{post}' is not supported")
    return y  # onnxruntime applies only PROBIT to a single score


@converter("TreeEnsembleClassifier", domain=ML)
def tree_ensemble_classifier(ctx: NodeContext) -> ConverterResult:
    """Scores summed over the trees, base values added, the label the best scored class,
    and the binary cases as onnxruntime resolves them (one class weighted: its score and
    the opposite; the label by the sign, or 0.5 when every weight is positive)."""
    b = ctx.b
    dtype = _threshold_dtype(ctx)
    x = _tree_input(ctx, dtype)
    labels = class_labels(ctx)
    classes = len(labels)
    post = ctx.attr("post_transform", "NONE")
    base = _floats(ctx, "base_values", dtype)
    base = np.zeros(0, dtype.numpy) if base is None else base
    if classes < 2:
        raise Unsupported(f"{classes} class label(s): at least 2 are needed")
    old = _old_forest(ctx, "class", classes, "sum", dtype)
    leaf = _walk_old(ctx, x, old)
    scores = b.reduce("sum", _per_tree(ctx, leaf, old.leaf_values), 1)  # [batch, classes]
    batch = type_of(scores).shape[0]
    if classes > 2:
        if len(base):
            padded = np.zeros(classes, dtype.numpy)
            padded[: len(base)] = base[:classes]
            scores = b.add(scores, ctx.constant(padded.reshape(1, classes)))
        # Only classes with a score (a weight reached, or a base value) compete.
        has = b.compare(
            "gt", b.reduce("sum", b.cast(_per_tree(ctx, leaf, old.leaf_has), DType.I32), 1), 0
        )
        if len(base):
            has = b.binary(mir.OrOp, has, ctx.constant(
                (np.arange(classes) < len(base)).reshape(1, classes)))  # fmt: skip
        best = argmax(ctx, b.where(has, scores, -np.inf))
        return labels_at(ctx, best, labels), post_transform(ctx, scores, post)
    # Two classes, as onnxruntime resolves them. Which classes carry weights must be
    # the same for every sample; a class without one scores 0 whatever is added to it.
    h0, h1 = (_static_has(old, k) for k in (0, 1))
    zero = ctx.full([batch], 0.0, dtype)
    s0 = b.reshape(b.narrow(scores, 1, 0, 1), [batch])
    s1 = b.reshape(b.narrow(scores, 1, 1, 1), [batch])
    extra = -1
    if len(base) == 2:
        if h1:  # onnxruntime: class 1 from class 0's sum and base value 1, class 0 opposite
            s1 = b.add(s0, float(base[1]))
            s0 = b.neg(s1)
        else:
            s0, s1 = b.add(s0, float(base[0])), b.add(s1, float(base[1]))
        two = True
    elif len(base) == 1:
        s0, two = b.add(s0, float(base[0])), h1
    elif len(base) == 0:
        extra, two = 3, h1
    else:
        raise Unsupported(f"{len(base)} base values for 2 classes")
    v0, v1 = (s0 if h0 else zero), (s1 if h1 else zero)
    positive = v1 if two and h1 else v0
    if len(old.weight_outputs) == 1:  # one class weighted: labels by the score's side
        win = b.compare("gt", positive, 0.5 if old.all_positive else 0.0)
        label = labels_at(ctx, side(ctx, win), labels)
        extra = 0 if old.all_positive else 2
    else:  # onnxruntime answers 1 or 0 here: a class label only for string labels
        index = side(ctx, b.compare("gt", positive, 0.0))
        label = labels_at(ctx, index, labels) if isinstance(labels[0], str) else index
    if two:
        pair = b.concat([b.reshape(v, [batch, 1]) for v in (v0, v1)], 1)
        return label, post_transform(ctx, pair, post)
    return label, _second_class(ctx, v0, extra, post)


def _static_has(old: OldForest, k: int) -> bool:
    col = old.leaf_has[:, k]
    if col.all() or not col.any():
        return bool(col.all())
    raise Unsupported(
        f"binary classifier whose leaves weigh class {k} only in part (the score layout "
        "would depend on the leaves reached)"
    )


def _second_class(ctx: NodeContext, s: SSAValue, extra: int, post: str) -> SSAValue:
    """onnxruntime's scores for one binary score: [1-s, s], [-s, s] or logistic pairs."""
    b = ctx.b
    (batch,) = type_of(s).shape
    if post == "PROBIT" or extra < 0:
        raise Unsupported(
            f"post_transform '{post}' of a single binary score (onnxruntime leaves the second "
            "score unset)"
        )
    if extra in (0, 1):
        pair = [b.sub(1.0, s), s]
    elif post == "LOGISTIC":
        pair = [b.sigmoid(b.neg(s)), b.sigmoid(s)]
    else:
        pair = [b.neg(s), s]
    return b.concat([b.reshape(v, [batch, 1]) for v in pair], 1)
