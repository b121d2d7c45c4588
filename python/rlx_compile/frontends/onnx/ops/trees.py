"""Tree ensembles of the ai.onnx.ml domain: TreeEnsemble (opset 5) and the older
TreeEnsembleRegressor and TreeEnsembleClassifier, each one ``mir.tree_ensemble`` or
``mir.tree_ensemble_classifier`` (targets without their kernels lower them:
``legalization.ml``).

The node attributes become the ops' flat tables: branch nodes in topological order
(every successor after its node), a successor a branch index or ``-1 - leaf``. The older
ops keep their nodes and leaves in one table keyed by (tree id, node id); it is re-laid
into branch and leaf tables by sorting and searching the keys (no per-node Python),
the leaves' weights kept in attribute order, as onnxruntime reads them.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    converter,
)
from rlx_compile.frontends.onnx.ops.ml import (
    ML,
    POST_TRANSFORMS,
    class_labels,
    labels_result,
    ml_input,
)

_MODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3,
          "BRANCH_EQ": 4, "BRANCH_NEQ": 5}  # fmt: skip


def _ints(ctx: NodeContext, name: str) -> np.ndarray:
    value = ctx.attr_array(name, np.int64)
    if value is None:
        raise Unsupported(f"attribute '{name}' is required")
    return value.reshape(-1)


def topological(forest: mir.Forest) -> mir.Forest:
    """``forest`` with its branch nodes in topological order (every successor after its
    node, as the op requires; the converters' tables already are), unreachable branches
    dropped."""
    n = len(forest.features)
    index = np.arange(n)
    if all(((nxt < 0) | (nxt > index)).all() for nxt in (forest.true_next, forest.false_next)):
        return forest
    order = _topological_order(forest.true_next, forest.false_next, forest.roots)
    new = np.full(n, -1, np.int64)
    new[order] = np.arange(len(order))

    def remap(nxt: np.ndarray) -> np.ndarray:
        return np.where(nxt >= 0, new[np.maximum(nxt, 0)], nxt)

    starts, values = forest.member_starts, forest.member_values
    if starts is not None and values is not None:
        sizes = np.diff(starts)[order]
        values = np.concatenate([values[starts[k] : starts[k + 1]] for k in order] or [values[:0]])
        starts = np.concatenate([[0], np.cumsum(sizes)])
    return replace(
        forest,
        roots=remap(forest.roots),
        features=forest.features[order],
        modes=forest.modes[order],
        splits=forest.splits[order],
        true_next=remap(forest.true_next[order]),
        false_next=remap(forest.false_next[order]),
        missing_true=None if forest.missing_true is None else forest.missing_true[order],
        member_starts=starts,
        member_values=values,
    )


def _topological_order(
    true_next: np.ndarray, false_next: np.ndarray, roots: np.ndarray
) -> list[int]:
    """The branches the roots reach, each before its successors (depth-first post-order,
    reversed); a cycle is refused."""
    state = np.zeros(len(true_next), np.int8)  # 0 new, 1 on the path, 2 done
    post: list[int] = []
    for root in roots.tolist():
        if root < 0 or state[root]:
            continue
        stack = [(root, 0)]
        state[root] = 1
        while stack:
            k, edge = stack.pop()
            if edge == 2:
                state[k] = 2
                post.append(k)
                continue
            stack.append((k, edge + 1))
            nxt = int((true_next, false_next)[edge][k])
            if nxt < 0 or state[nxt] == 2:
                continue
            if state[nxt] == 1:
                raise Unsupported(f"the trees have a cycle through node {nxt}")
            state[nxt] = 1
            stack.append((nxt, 0))
    return post[::-1]


def _post(name: str) -> str:
    if name not in POST_TRANSFORMS:
        raise Unsupported(f"post_transform '{name}' is not supported")
    return name.lower()


# ---------------------------------------------------------------------------------
# TreeEnsemble (ai.onnx.ml opset 5)
# ---------------------------------------------------------------------------------


@converter("TreeEnsemble", domain=ML)
def tree_ensemble(ctx: NodeContext) -> ConverterResult:
    """ONNX's text decides where the peers differ: set membership tests the value itself
    (onnxruntime truncates it to an integer), post_transform 1 is SOFTMAX and 2 LOGISTIC
    (onnxruntime swaps them; onnx's reference ignores post_transform), and under MIN/MAX
    a target no leaf reaches keeps the type's extreme (as the reference)."""
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
    n = len(modes)
    if not (len(feature_ids) == len(splits) == len(true_ids) == len(false_ids)
            == len(true_leaf) == len(false_leaf) == n):  # fmt: skip
        raise Unsupported("the nodes_* attributes have different lengths")
    leaves = len(leaf_targets)
    if len(leaf_weights) != leaves:
        raise Unsupported(f"{len(leaf_weights)} leaf weights for {leaves} leaf targets")
    for ids, leaf in ((true_ids, true_leaf), (false_ids, false_leaf)):
        bad = np.where(leaf == 1, (ids < 0) | (ids >= leaves), (ids < 0) | (ids >= n))
        if bad.any():
            raise Unsupported(f"node {int(np.flatnonzero(bad)[0])} names a missing successor")
    # A leaf root is a node whose branches both name the same leaf.
    root_is_leaf = (
        (true_leaf[roots] == 1) & (false_leaf[roots] == 1) & (true_ids[roots] == false_ids[roots])
    )
    member_starts = member_values = None
    if members is not None:  # one NaN-terminated set per MEMBER node, in node order
        values = np.asarray(members, dtype.numpy).reshape(-1)
        ends = np.flatnonzero(np.isnan(values))
        sets = np.split(values, ends)[: len(ends)]
        sizes = np.zeros(n, np.int64)
        member_nodes = np.flatnonzero(modes == 6)
        count = min(len(member_nodes), len(sets))
        sizes[member_nodes[:count]] = [len(s) - (k > 0) for k, s in enumerate(sets[:count])]
        member_starts = np.concatenate([[0], np.cumsum(sizes)])
        member_values = np.concatenate(
            [s[k > 0 :] for k, s in enumerate(sets[:count])] or [np.zeros(0)]
        )
    elif np.any(modes == 6):
        raise Unsupported("MEMBER nodes without membership_values")
    trees = topological(mir.Forest(
        roots=np.where(root_is_leaf, -1 - true_ids[roots], roots), features=feature_ids,
        modes=modes, splits=splits.astype(np.float64),
        true_next=np.where(true_leaf == 1, -1 - true_ids, true_ids),
        false_next=np.where(false_leaf == 1, -1 - false_ids, false_ids),
        leaf_starts=np.arange(leaves + 1), leaf_targets=leaf_targets,
        leaf_weights=leaf_weights.astype(np.float64),
        missing_true=None if tracks is None else np.asarray(tracks, np.int64).reshape(-1),
        member_starts=member_starts, member_values=member_values,
    ))  # fmt: skip
    kind = ("average", "sum", "min", "max")[aggregate]
    info = np.finfo(dtype.numpy)
    fill = {2: float(info.max), 3: float(info.min)}.get(aggregate, 0.0)
    op = mir.TreeEnsembleOp(
        x, trees, TensorType((batch, int(targets)), dtype), kind, fill=fill,
        post_transform=("none", "softmax", "logistic")[post],
    )  # fmt: skip
    return ctx.b.emit(op).results[0]


# ---------------------------------------------------------------------------------
# TreeEnsembleRegressor / TreeEnsembleClassifier (ai.onnx.ml opsets 1 and 3)
# ---------------------------------------------------------------------------------


def _floats(ctx: NodeContext, name: str, dtype: DType) -> np.ndarray | None:
    """A FLOATS attribute or its ``<name>_as_tensor`` form (opset 3, any float type)."""
    value = ctx.attr_array(name, np.float32)
    tensor = ctx.attr(f"{name}_as_tensor")
    if value is not None and tensor is not None:
        raise Unsupported(f"both '{name}' and '{name}_as_tensor' are given")
    if tensor is not None:
        return np.asarray(tensor).reshape(-1).astype(dtype.numpy)
    return None if value is None else value.astype(dtype.numpy)


def _threshold_dtype(ctx: NodeContext) -> DType:
    """f64 when the node tables are given as double tensors, else f32."""
    for name in ("nodes_values_as_tensor", "base_values_as_tensor"):
        t = ctx.attr(name)
        if t is not None and np.asarray(t).dtype == np.float64:
            return DType.F64
    return DType.F32


def _tree_input(ctx: NodeContext, dtype: DType) -> SSAValue:
    """X as [batch, features] in the type its values are compared in: the thresholds'
    float type, or f64 for a double input (onnxruntime compares in C++'s promoted type)."""
    x = ml_input(ctx, None)
    xd = type_of(x).dtype
    want = DType.F64 if DType.F64 in (xd, dtype) else DType.F32
    return x if xd is want else ctx.b.cast(x, want)


def _run_starts(values: np.ndarray) -> np.ndarray:
    """The positions where a run of equal values starts (0 first, unless empty)."""
    if not len(values):
        return np.zeros(0, np.int64)
    return np.concatenate(([0], np.flatnonzero(values[1:] != values[:-1]) + 1))


class _Keys:
    """(tree id, node id) pairs looked up by sorting and binary search."""

    def __init__(self, tree_ids: np.ndarray, node_ids: np.ndarray):
        self.trees, self.nodes = tree_ids, node_ids
        self.base = int(node_ids.max(initial=0)) + 1
        if len(node_ids) and node_ids.min() < 0:
            raise Unsupported("negative node ids")
        keys = tree_ids * self.base + node_ids
        self.order = np.argsort(keys, kind="stable")
        self.sorted = keys[self.order]
        if (self.sorted[1:] == self.sorted[:-1]).any():
            raise Unsupported("a (tree id, node id) pair is given twice")

    def find(self, tree_ids: np.ndarray, node_ids: np.ndarray, what: str) -> np.ndarray:
        """The positions of the pairs; a missing one is refused, named by ``what``."""
        if not len(node_ids):
            return np.zeros(0, np.int64)
        if not len(self.sorted):
            raise Unsupported(f"{what} names node {node_ids[0]} of tree {tree_ids[0]}: no nodes")
        q = tree_ids * self.base + node_ids
        pos = np.minimum(np.searchsorted(self.sorted, q), max(len(self.sorted) - 1, 0))
        found = (self.sorted[pos] == q) & (node_ids >= 0) & (node_ids < self.base)
        if not found.all():
            k = int(np.flatnonzero(~found)[0])
            raise Unsupported(f"{what} names missing node {node_ids[k]} of tree {tree_ids[k]}")
        return self.order[pos]


class _OldForest:
    """An opset 1/3 ensemble's tables: the forest, and which classes (or targets) every
    weight names, branches' included (onnxruntime's binary decisions read them all)."""

    def __init__(self, ctx: NodeContext, prefix: str, outputs: int, dtype: DType,
                 first_weight: bool = False):  # fmt: skip
        tree_ids, node_ids = _ints(ctx, "nodes_treeids"), _ints(ctx, "nodes_nodeids")
        feature_ids = _ints(ctx, "nodes_featureids")
        true_ids, false_ids = _ints(ctx, "nodes_truenodeids"), _ints(ctx, "nodes_falsenodeids")
        mode_names: list[str] = ctx.attr("nodes_modes") or []
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
        # Each distinct mode looked up once (np.unique sorted the strings in Python).
        codes = {m: _MODES.get(m, -1) for m in sorted(set(mode_names))}
        unknown = [m for m, code in codes.items() if code < 0 and m != "LEAF"]
        if unknown:
            raise Unsupported(f"node modes {unknown}")
        modes = np.fromiter(map(codes.__getitem__, mode_names), np.int64, n)
        keys = _Keys(tree_ids, node_ids)
        is_leaf = modes < 0
        # Branches and leaves numbered apart, in node order.
        slot = np.where(is_leaf, np.cumsum(is_leaf) - 1, np.cumsum(~is_leaf) - 1)
        branches = np.flatnonzero(~is_leaf)
        # Each node as the forest's tables name it: a branch index or -1 - leaf.
        encoded = np.where(is_leaf, -1 - slot, slot)
        # The true successors, then the false ones: one search (the first missing one
        # named, in that order).
        branch_trees = tree_ids[branches]
        k = keys.find(
            np.concatenate((branch_trees, branch_trees)),
            np.concatenate((true_ids[branches], false_ids[branches])),
            "a node",
        )
        successors = encoded[k]
        true_next, false_next = successors[: len(branches)], successors[len(branches) :]
        # A tree starts where the tree id changes (onnxruntime's reading).
        roots = _run_starts(tree_ids)
        track_arr = None
        if tracks is not None:
            track_arr = np.zeros(n, np.int64)
            track_arr[: len(tracks)] = np.asarray(tracks, np.int64)[:n]
            track_arr = track_arr[branches]
        # Leaf weights, in attribute order within each leaf.
        w_trees, w_nodes = _ints(ctx, f"{prefix}_treeids"), _ints(ctx, f"{prefix}_nodeids")
        w_ids = _ints(ctx, f"{prefix}_ids")
        weights = _floats(ctx, f"{prefix}_weights", dtype)
        if weights is None or not (len(weights) == len(w_trees) == len(w_nodes) == len(w_ids)):
            raise Unsupported(f"the {prefix}_* attributes are missing or of different lengths")
        if len(w_ids) and (w_ids.min() < 0 or w_ids.max() >= outputs):
            raise Unsupported(f"{prefix}_ids name output {int(w_ids.max())} of {outputs}")
        self.named = {int(i) for i in w_ids}
        self.all_positive = bool(np.all(weights >= 0))
        k = keys.find(w_trees, w_nodes, "a weight")
        on_leaf = is_leaf[k]  # onnxruntime ignores weights on branch nodes
        leaf, target, weight = slot[k[on_leaf]], w_ids[on_leaf], weights[on_leaf]
        leaves = int(is_leaf.sum())
        order = np.argsort(leaf, kind="stable")
        leaf, target, weight = leaf[order], target[order], weight[order]
        if first_weight:  # one output: each leaf's first weight, or its node value
            first = values[is_leaf].astype(np.float64)
            at = _run_starts(leaf)  # leaf is sorted: each leaf's first weight
            first[leaf[at]] = weight[at]
            leaf, target, weight = np.arange(leaves), np.zeros(leaves, np.int64), first
        counts = np.bincount(leaf, minlength=leaves)
        self.has = np.zeros((leaves, outputs), bool)
        self.has[leaf, target] = True
        self.forest = topological(mir.Forest(
            roots=encoded[roots], features=feature_ids[branches], modes=modes[branches],
            splits=values[branches].astype(np.float64), true_next=true_next,
            false_next=false_next, leaf_starts=np.concatenate([[0], np.cumsum(counts)]),
            leaf_targets=target, leaf_weights=weight.astype(np.float64), missing_true=track_arr,
        ))  # fmt: skip


@converter("TreeEnsembleRegressor", domain=ML)
def tree_ensemble_regressor(ctx: NodeContext) -> ConverterResult:
    dtype = _threshold_dtype(ctx)
    x = _tree_input(ctx, dtype)
    targets = int(ctx.attr("n_targets", 1))
    aggregate = ctx.check_attr("aggregate_function", ("SUM", "AVERAGE", "MIN", "MAX"), "SUM")
    post = _post(ctx.attr("post_transform", "NONE"))
    base = _floats(ctx, "base_values", dtype)
    base = np.zeros(0, dtype.numpy) if base is None or len(base) != targets else base
    old = _OldForest(ctx, "target", targets, dtype, first_weight=targets == 1)
    if targets == 1 and post != "probit":
        post = "none"  # onnxruntime applies only PROBIT to a single score
    op = mir.TreeEnsembleOp(
        x, old.forest, TensorType((type_of(x).shape[0], targets), dtype), aggregate.lower(),
        base_values=base.tolist(), post_transform=post,
    )  # fmt: skip
    return ctx.b.emit(op).results[0]


@converter("TreeEnsembleClassifier", domain=ML)
def tree_ensemble_classifier(ctx: NodeContext) -> ConverterResult:
    """One ``mir.tree_ensemble_classifier`` (onnxruntime's aggregation and binary
    layouts). Refused as onnxruntime fails or leaves a score unset: a binary score
    layout that would depend on the leaves reached, probit or a lone base value for one
    binary score."""
    dtype = _threshold_dtype(ctx)
    x = _tree_input(ctx, dtype)
    labels = class_labels(ctx)
    classes = len(labels)
    post = _post(ctx.attr("post_transform", "NONE"))
    base = _floats(ctx, "base_values", dtype)
    base = np.zeros(0, dtype.numpy) if base is None else base
    if classes < 2:
        raise Unsupported(f"{classes} class label(s): at least 2 are needed")
    old = _OldForest(ctx, "class", classes, dtype)
    leaf_named = set(old.forest.leaf_targets.tolist())
    leaf_positive = bool((old.forest.leaf_weights >= 0).all())
    if classes == 2:
        if len(base) > 2:
            raise Unsupported(f"{len(base)} base values for 2 classes")
        _static_has(old, 0)
        h1 = _static_has(old, 1)
        one_class = len(old.named) == 1
        if (len(leaf_named) == 1) != one_class or leaf_positive != old.all_positive:
            raise Unsupported("weights on branch nodes change the binary layout")
        if len(base) < 2 and not h1 and (post == "probit" or (len(base) == 1 and not one_class)):
            raise Unsupported(
                f"post_transform '{post}' of a single binary score (onnxruntime leaves the "
                "second score unset)"
            )
    base = base[:classes]
    batch = type_of(x).shape[0]
    int_labels = None if isinstance(labels[0], str) else [int(v) for v in labels]
    op = mir.TreeEnsembleClassifierOp(
        x, old.forest, TensorType((batch, classes), dtype), base.tolist(), post, int_labels
    )
    label, scores = ctx.b.emit(op).results
    return labels_result(label, labels), scores


def _static_has(old: _OldForest, k: int) -> bool:
    """Whether every leaf weighs class ``k`` (False: none does); refused when some do."""
    col = old.has[:, k]
    if col.all() or not col.any():
        return bool(col.all())
    raise Unsupported(
        f"binary classifier whose leaves weigh class {k} only in part (the score layout "
        "would depend on the leaves reached)"
    )
