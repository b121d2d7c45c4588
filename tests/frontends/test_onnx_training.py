"""The ai.onnx.preview.training optimizer steps and the ai.onnx.ml tensor ops against
onnx's reference evaluator (onnxruntime has no kernels for the former): several tensors
per step, the first step (T = 0) and a later one, regularisation coefficients, both
Momentum modes; vector and matrix inputs for ArrayFeatureExtractor."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import rlx_compile.backend as backend

F = TensorProto.FLOAT
TRAINING = "ai.onnx.preview.training"
STATES = {"Adagrad": 1, "Momentum": 1, "Adam": 2}


@pytest.mark.parametrize("step", [0, 3])
@pytest.mark.parametrize(
    ("op", "attrs"),
    [
        ("Adagrad", dict(decay_factor=0.1, epsilon=1e-6, norm_coefficient=0.01)),
        ("Momentum", dict(alpha=0.9, beta=0.5, mode="standard", norm_coefficient=0.02)),
        ("Momentum", dict(alpha=0.8, beta=0.7, mode="nesterov", norm_coefficient=0.0)),
        ("Adam", dict(alpha=0.85, beta=0.95, epsilon=1e-7, norm_coefficient=0.01,
                      norm_coefficient_post=0.02)),
    ],
)  # fmt: skip
def test_against_the_reference(op: str, attrs: dict, step: int) -> None:
    rng = np.random.default_rng(step)
    shapes = [[3, 2], [4]]
    groups = ["X", "G"] + [f"S{k}" for k in range(STATES[op])]
    names = [f"{g}{i}" for g in groups for i in range(len(shapes))]
    feeds = {"R": np.array(0.1, np.float32), "T": np.array(step, np.int64)}
    for g in groups:
        for i, shape in enumerate(shapes):
            value = rng.standard_normal(shape)
            feeds[f"{g}{i}"] = (np.abs(value) if g.startswith("S") else value).astype(np.float32)
    outputs = [f"{g}{i}_new" for g in ["X", *groups[2:]] for i in range(len(shapes))]
    node = helper.make_node(op, ["R", "T", *names], outputs, domain=TRAINING, **attrs)
    infos = [helper.make_tensor_value_info("R", F, []),
             helper.make_tensor_value_info("T", TensorProto.INT64, [])]  # fmt: skip
    infos += [helper.make_tensor_value_info(n, F, feeds[n].shape) for n in names]
    graph = helper.make_graph(
        [node], "g", infos, [helper.make_tensor_value_info(o, F, None) for o in outputs]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(TRAINING, 1)])
    want = ReferenceEvaluator(model).run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("x_shape", "indices"),
    [([5], [[3, 0]]), ([5], [[4]]), ([5], [[4], [1]]), ([5], [2, 0]), ([2, 3, 4], [1, 1, 3])],
)
def test_ml_array_feature_extractor_and_binarizer(x_shape: list[int], indices: list) -> None:
    ml = "ai.onnx.ml"
    idx = np.array(indices, np.int64)
    nodes = [helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain=ml),
             helper.make_node("Binarizer", ["y"], ["z"], domain=ml, threshold=0.2)]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", F, x_shape),
         helper.make_tensor_value_info("i", TensorProto.INT64, idx.shape)],
        [helper.make_tensor_value_info("y", F, None), helper.make_tensor_value_info("z", F, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(ml, 1)])
    feeds = {"x": np.random.default_rng(0).standard_normal(x_shape).astype(np.float32), "i": idx}
    want = ReferenceEvaluator(model).run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def random_trees(
    rng: np.random.Generator, trees: int, features: int, targets: int, set_values: list[int]
) -> dict:
    """Attributes of a random TreeEnsemble: every node mode, NaN-tracking nodes, sets."""
    nodes: dict[str, list] = {k: [] for k in ("splits", "features", "modes", "true", "false",
                                               "true_leaf", "false_leaf", "tracks")}  # fmt: skip
    leaf_targets: list[int] = []
    leaf_weights: list[float] = []
    members: list[float] = []
    roots = []

    def leaf() -> int:
        leaf_targets.append(int(rng.integers(targets)))
        leaf_weights.append(float(rng.standard_normal()))
        return len(leaf_targets) - 1

    def grow(depth: int) -> int:
        i = len(nodes["splits"])
        mode = int(rng.integers(7))
        for k in nodes:
            nodes[k].append(0)
        nodes["modes"][i], nodes["features"][i] = mode, int(rng.integers(features))
        nodes["splits"][i] = float(rng.integers(-2, 3)) if mode in (4, 5) else float(rng.normal())
        nodes["tracks"][i] = int(rng.integers(2))
        if mode == 6:
            size = int(rng.integers(1, 4))
            members.extend([*rng.choice(set_values, size=size).tolist(), np.nan])
        for side in ("true", "false"):
            if depth == 0 or rng.random() < 0.3:
                nodes[side][i], nodes[f"{side}_leaf"][i] = leaf(), 1
            else:
                nodes[side][i], nodes[f"{side}_leaf"][i] = grow(depth - 1), 0
        return i

    for _ in range(trees):
        roots.append(grow(int(rng.integers(1, 5))))
    modes = nodes["modes"]
    return dict(
        nodes_splits=helper.make_tensor("s", F, [len(nodes["splits"])], nodes["splits"]),
        nodes_featureids=nodes["features"],
        nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [len(modes)], modes),
        nodes_truenodeids=nodes["true"], nodes_falsenodeids=nodes["false"],
        nodes_trueleafs=nodes["true_leaf"], nodes_falseleafs=nodes["false_leaf"],
        nodes_missing_value_tracks_true=nodes["tracks"],
        leaf_targetids=leaf_targets,
        leaf_weights=helper.make_tensor("w", F, [len(leaf_weights)], leaf_weights),
        membership_values=helper.make_tensor("mv", F, [len(members)], members),
        tree_roots=roots, n_targets=targets,
    )  # fmt: skip


def tree_model(attrs: dict, aggregate: int):  # type: ignore[no-untyped-def]
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml",
                            aggregate_function=aggregate, **attrs)  # fmt: skip
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", F, [64, 3])],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    opsets = [helper.make_opsetid("ai.onnx.ml", 5), helper.make_opsetid("", 21)]
    return helper.make_model(graph, opset_imports=opsets)


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_tree_ensemble(aggregate: int, seed: int) -> None:
    """Against onnx's reference on fractional features (sets without 0.0: the
    reference's set parsing stops at a 0.0 member), and against onnxruntime on
    whole-number ones for SUM/AVERAGE. (onnxruntime tests set membership on the value
    truncated to an integer, and gives 0 to a target no tree reaches under MIN/MAX; ONNX's
    text and reference test the value itself and give the type's extreme.) NaNs take
    the missing-value branches."""
    import onnxruntime as ort

    rng = np.random.default_rng(seed * 10 + aggregate)
    whole = rng.integers(-2, 3, size=(64, 3)).astype(np.float32)
    whole[rng.random((64, 3)) < 0.1] = np.nan
    model = tree_model(random_trees(rng, 4, 3, 2, set_values=[-2, -1, 0, 1, 2]), aggregate)
    if aggregate in (0, 1):
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        (want,) = session.run(None, {"x": whole})
        (got,) = backend.prepare(model).run({"x": whole})
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    fractional = whole + np.where(rng.random((64, 3)) < 0.5, rng.normal(size=(64, 3)), 0)
    fractional = fractional.astype(np.float32)
    model = tree_model(random_trees(rng, 4, 3, 2, set_values=[-2, -1, 1, 2]), aggregate)
    (want,) = ReferenceEvaluator(model).run(None, {"x": fractional})
    (got,) = backend.prepare(model).run({"x": fractional})
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_tree_ensemble_nodes_in_any_order() -> None:
    """Nodes listed children first (the order reversed, the membership sets with them):
    the importer renumbers them into the op's order (every successor after its node),
    and the model computes what the reference computes."""
    from onnx import numpy_helper

    rng = np.random.default_rng(5)
    attrs = random_trees(rng, 4, 3, 2, set_values=[-2, -1, 1, 2])
    n = len(attrs["nodes_featureids"])
    flip = [n - 1 - i for i in range(n)]

    def reordered(name: str) -> list:
        values = attrs[name]
        if not isinstance(values, list):
            values = numpy_helper.to_array(values).tolist()
        return [values[i] for i in flip]

    def successors(side: str) -> list[int]:
        ids, leaf = reordered(f"nodes_{side}nodeids"), reordered(f"nodes_{side}leafs")
        return [k if is_leaf else n - 1 - k for k, is_leaf in zip(ids, leaf, strict=True)]

    modes = numpy_helper.to_array(attrs["nodes_modes"]).tolist()
    members = numpy_helper.to_array(attrs["membership_values"]).tolist()
    sets, current = [], []
    for v in members:
        current.append(v)
        if np.isnan(v):
            sets.append(current)
            current = []
    member_nodes = [i for i, m in enumerate(modes) if m == 6]
    by_node = dict(zip(member_nodes, sets, strict=True))
    flipped_members = [v for i in flip if i in by_node for v in by_node[i]]
    flipped = dict(
        attrs,
        nodes_splits=helper.make_tensor("s", F, [n], reordered("nodes_splits")),
        nodes_featureids=reordered("nodes_featureids"),
        nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [n], reordered("nodes_modes")),
        nodes_truenodeids=successors("true"), nodes_falsenodeids=successors("false"),
        nodes_trueleafs=reordered("nodes_trueleafs"),
        nodes_falseleafs=reordered("nodes_falseleafs"),
        nodes_missing_value_tracks_true=reordered("nodes_missing_value_tracks_true"),
        membership_values=helper.make_tensor("mv", F, [len(members)], flipped_members),
        tree_roots=[n - 1 - r for r in attrs["tree_roots"]],
    )  # fmt: skip
    x = (rng.integers(-2, 3, size=(64, 3)) + rng.normal(size=(64, 3)) * 0.5).astype(np.float32)
    x[rng.random((64, 3)) < 0.1] = np.nan
    model = tree_model(flipped, 1)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = backend.prepare(model).run({"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    (same,) = backend.prepare(tree_model(attrs, 1)).run({"x": x})
    np.testing.assert_array_equal(got, same)


def test_tree_ensemble_post_transforms_follow_the_spec() -> None:
    # ONNX: 1 = SOFTMAX, 2 = LOGISTIC (onnx's reference ignores post_transform;
    # onnxruntime 1.32 applies them the other way round).
    rng = np.random.default_rng(7)
    attrs = random_trees(rng, 4, 3, 3, set_values=[-2, -1, 1, 2])
    x = rng.normal(size=(64, 3)).astype(np.float32)

    def scores(post: int) -> np.ndarray:
        model = tree_model({**attrs, "post_transform": post}, 1)
        return backend.prepare(model).run({"x": x})[0]

    raw = scores(0).astype(np.float64)
    softmax = np.exp(raw - raw.max(1, keepdims=True))
    np.testing.assert_allclose(scores(1), softmax / softmax.sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(scores(2), 1 / (1 + np.exp(-raw)), rtol=1e-6)


def test_gradient_against_finite_differences() -> None:
    """Gradient of y (summed: its seed is ones) w.r.t. a matmul weight, a broadcast bias
    and a broadcast divisor, through Sigmoid, Div, Mul, Sub, Tanh and Exp; z only feeds
    the forward graph (zs). Checked against central differences in float64."""
    D = TensorProto.DOUBLE
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Add", ["h", "bias"], ["z"]),
        helper.make_node("Sigmoid", ["z"], ["a"]),
        helper.make_node("Div", ["a", "s"], ["d"]),
        helper.make_node("Tanh", ["d"], ["t"]),
        helper.make_node("Mul", ["t", "d"], ["m"]),
        helper.make_node("Exp", ["s"], ["e"]),
        helper.make_node("Sub", ["m", "e"], ["y"]),
        helper.make_node("Gradient", ["w", "bias", "s", "x"], ["dw", "db", "ds"],
                         domain=TRAINING, xs=["w", "bias", "s"], zs=["x"], y="y"),
    ]  # fmt: skip
    shapes = {"x": [3, 4], "w": [4, 2], "bias": [2], "s": [3, 1]}
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, D, s) for n, s in shapes.items()],
        [helper.make_tensor_value_info(n, D, None) for n in ("y", "dw", "db", "ds")],
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(TRAINING, 1)]
    )
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal(s) for n, s in shapes.items()}
    feeds["s"] = np.abs(feeds["s"]) + 0.5
    y, *grads = backend.prepare(model).run(feeds)

    def loss(values: dict[str, np.ndarray]) -> float:
        z = values["x"] @ values["w"] + values["bias"]
        d = 1 / (1 + np.exp(-z)) / values["s"]
        return float((np.tanh(d) * d - np.exp(values["s"])).sum())

    assert y.shape == (3, 2)
    for name, grad in zip(("w", "bias", "s"), grads, strict=True):
        numeric = np.zeros_like(feeds[name])
        for i in np.ndindex(numeric.shape):
            up, down = dict(feeds), dict(feeds)
            up[name], down[name] = feeds[name].copy(), feeds[name].copy()
            up[name][i] += 1e-6
            down[name][i] -= 1e-6
            numeric[i] = (loss(up) - loss(down)) / 2e-6
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)
