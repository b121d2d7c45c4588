"""The numeric ops of the ai.onnx.ml domain: Binarizer, ArrayFeatureExtractor and
TreeEnsemble. (The string and map ops are not claimed.)"""

from __future__ import annotations

from collections.abc import Callable

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
    numel,
)

ML = "ai.onnx.ml"


@converter("Binarizer", domain=ML)
def binarizer(ctx: NodeContext) -> ConverterResult:
    """1 where x > threshold, else 0, in x's type."""
    x = ctx.x(0)
    above = ctx.b.compare("gt", x, float(ctx.attr("threshold", 0.0)))
    return ctx.b.cast(above, type_of(x).dtype)


@converter("ArrayFeatureExtractor", domain=ML)
def array_feature_extractor(ctx: NodeContext) -> ConverterResult:
    """The elements of the last axis that the (flattened) indices name; a vector input
    gives a [1, n] result, as the reference and onnxruntime do."""
    x, indices = ctx.x(0), ctx.x(1)
    if type_of(indices).dtype is not DType.I64:
        indices = ctx.b.cast(indices, DType.I64)
    count = numel(ctx.static_shape(1))
    picked = ctx.b.gather(x, ctx.b.reshape(indices, [count]), type_of(x).rank - 1)
    return ctx.b.reshape(picked, [1, count]) if type_of(x).rank == 1 else picked


_COMPARE = {0: "le", 1: "lt", 2: "ge", 3: "gt", 4: "eq", 5: "ne"}


def _ints(ctx: NodeContext, name: str) -> np.ndarray:
    value = ctx.attr(name)
    if value is None:
        raise Unsupported(f"attribute '{name}' is required")
    return np.asarray(value, np.int64).reshape(-1)


@converter("TreeEnsemble", domain=ML)
def tree_ensemble(ctx: NodeContext) -> ConverterResult:
    """Every tree walked at once, one level per step for the deepest tree's depth (the
    trees are attributes, so the depth is known): each sample's current node selects its
    feature, split and mode by gathers; a sample at a leaf stays. The leaves' weights
    then go to their targets, aggregated over the trees.

    ONNX's text decides where the peers differ: set membership tests the value itself
    (onnxruntime truncates it to an integer), post_transform 1 is SOFTMAX and 2 LOGISTIC
    (onnxruntime swaps them; onnx's reference ignores post_transform), and under MIN/MAX
    a target no leaf reaches keeps the type's extreme (as the reference)."""
    b = ctx.b
    x = ctx.x(0)
    batch, features = ctx.static_shape(0)
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

    # Depth of the deepest tree, and where each tree starts (a leaf root is a node whose
    # branches both name the same leaf).
    def depth(node: int) -> int:
        branches = ((true_ids[node], true_leaf[node]), (false_ids[node], false_leaf[node]))
        return 1 + max(0 if leaf else depth(int(nxt)) for nxt, leaf in branches)

    root_is_leaf = (
        (true_leaf[roots] == 1) & (false_leaf[roots] == 1) & (true_ids[roots] == false_ids[roots])
    )
    steps = max((depth(int(r)) for r, leaf in zip(roots, root_is_leaf, strict=True) if not leaf),
                default=0)  # fmt: skip
    trees = len(roots)
    start = np.where(root_is_leaf, true_ids[roots], roots)
    node = ctx.constant(np.broadcast_to(start, (batch, trees)).astype(np.int64))
    at_leaf = ctx.constant(np.broadcast_to(root_is_leaf, (batch, trees)).copy())
    flat_x = b.reshape(x, [batch * features])
    rows = ctx.constant((np.arange(batch, dtype=np.int64) * features).reshape(batch, 1))

    def table(values: np.ndarray) -> Callable[[SSAValue], SSAValue]:
        """A per-node (or per-leaf) attribute as a constant, looked up by index."""
        const = ctx.constant(values)
        return lambda index: b.gather(const, index, 0)

    member_sets: np.ndarray | None = None
    if members is not None:  # one NaN-terminated set per MEMBER node, in node order
        values = np.asarray(members, dtype.numpy).reshape(-1)
        sets, current = [], []
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

    feature_of, split_of, mode_of = table(feature_ids), table(splits), table(modes)
    true_of, false_of = table(true_ids), table(false_ids)
    true_leaf_of, false_leaf_of = table(true_leaf), table(false_leaf)
    tracks_of = None
    if tracks is not None and np.any(np.asarray(tracks)):
        tracks_of = table(np.asarray(tracks, np.int64).reshape(-1))
    members_of = None if member_sets is None else table(member_sets)
    for _ in range(steps):
        # Samples already at a leaf hold a leaf index: they read node 0, and stay.
        walking = b.where(at_leaf, 0, node)
        value = b.gather(flat_x, b.add(rows, feature_of(walking)), 0)  # [batch, trees]
        split = split_of(walking)
        cond = None
        for mode in sorted(set(modes.tolist())):
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

    weight = table(leaf_weights)(node)  # [batch, trees]
    target = table(leaf_targets)(node)
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
