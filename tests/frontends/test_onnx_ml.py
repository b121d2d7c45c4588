"""The classic ML ops of ai.onnx.ml against onnxruntime, on varied attributes.

Every case is one node in a model, run through ``rlx_compile.backend`` and through
onnxruntime on the same random inputs; outputs (labels exactly, scores to 1e-5) must
agree, ZipMap's list of dicts included.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx import OnnxImportError, import_model

ML = "ai.onnx.ml"
F = 5  # features
N = 7  # samples


def ml_model(
    op: str,
    attrs: dict[str, Any],
    outputs: list[tuple[str, int, list[int] | None]],
    *,
    inputs: list[tuple[str, int, list[int]]] | None = None,
    ml_opset: int = 3,
) -> onnx.ModelProto:
    inputs = inputs or [("X", TensorProto.FLOAT, [N, F])]
    node = helper.make_node(
        op, [n for n, _, _ in inputs], [n for n, _, _ in outputs], domain=ML, **attrs
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
    )
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, ml_opset)],
        ir_version=8,
    )


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], atol: float = 1e-5) -> None:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    got = list(backend.prepare(model).run(feeds))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if isinstance(w, list):
            assert isinstance(g, list) and len(g) == len(w)
            for gd, wd in zip(g, w, strict=True):
                assert list(gd) == list(wd)  # same keys, in the same order
                np.testing.assert_allclose(list(gd.values()), list(wd.values()), atol=atol)
            continue
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if w.dtype.kind in "iubO":  # labels, strings included
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def x_feed(seed: int = 0, n: int = N, f: int = F) -> dict[str, np.ndarray]:
    return {"X": rng(seed).normal(size=(n, f)).astype(np.float32)}


POSTS = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"]
LABEL = ("Y", TensorProto.INT64, [N])


# -- linear models --------------------------------------------------------------------


@pytest.mark.parametrize("post", POSTS)
@pytest.mark.parametrize("classes", [1, 2, 3, 4])
def test_linear_classifier(post: str, classes: int) -> None:
    r = rng(classes)
    rows = 1 if classes <= 2 and classes != 2 else classes
    if classes == 2 and post == "PROBIT":
        pytest.skip("onnxruntime leaves the second score unset")
    rows = 1 if classes == 1 else classes
    labels = [3, 9] if classes == 1 else list(range(10, 10 + classes))
    if classes == 1 and post == "PROBIT":
        pytest.skip("onnxruntime leaves the second score unset")
    attrs = {
        "coefficients": r.normal(size=rows * F).tolist(),
        "intercepts": r.normal(size=rows).tolist(),
        "classlabels_ints": labels,
        "post_transform": post,
        "multi_class": 0,
    }
    width = 2 if rows == 1 else rows
    model = ml_model("LinearClassifier", attrs, [LABEL, ("Z", TensorProto.FLOAT, [N, width])])
    check(model, x_feed(classes))


@pytest.mark.parametrize("post", POSTS)
@pytest.mark.parametrize("targets", [1, 3])
def test_linear_regressor(post: str, targets: int) -> None:
    r = rng(targets)
    attrs = {
        "coefficients": r.normal(size=targets * F).tolist(),
        "intercepts": r.normal(size=targets).tolist(),
        "targets": targets,
        "post_transform": post,
    }
    if post in ("PROBIT",):
        attrs["coefficients"] = (np.abs(r.normal(size=targets * F)) * 0.01).tolist()
        attrs["intercepts"] = [0.3] * targets
    model = ml_model("LinearRegressor", attrs, [("Y", TensorProto.FLOAT, [N, targets])])
    check(model, x_feed(targets), atol=1e-4)


# -- preprocessing ----------------------------------------------------------------------


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_normalizer(norm: str) -> None:
    model = ml_model("Normalizer", {"norm": norm}, [("Y", TensorProto.FLOAT, [N, F])])
    feeds = x_feed(1)
    feeds["X"][2] = 0.0  # a zero row is kept
    check(model, feeds)


@pytest.mark.parametrize("per_feature", [True, False])
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64])
def test_scaler(per_feature: bool, dtype: int) -> None:
    size = F if per_feature else 1
    r = rng(2)
    attrs = {"offset": r.normal(size=size).tolist(), "scale": r.normal(size=size).tolist()}
    model = ml_model(
        "Scaler", attrs, [("Y", TensorProto.FLOAT, [N, F])], inputs=[("X", dtype, [N, F])]
    )
    x = (r.normal(size=(N, F)) * 4).astype(helper.tensor_dtype_to_np_dtype(dtype))
    check(model, {"X": x})


@pytest.mark.parametrize("dtype", [TensorProto.INT64, TensorProto.FLOAT, TensorProto.DOUBLE])
def test_one_hot_encoder(dtype: int) -> None:
    attrs = {"cats_int64s": [3, 1, 4, 1, 5], "zeros": 1}
    model = ml_model(
        "OneHotEncoder",
        attrs,
        [("Y", TensorProto.FLOAT, [N, 2, 5])],
        inputs=[("X", dtype, [N, 2])],
    )
    x = rng(4).integers(0, 7, size=(N, 2)).astype(helper.tensor_dtype_to_np_dtype(dtype))
    if dtype != TensorProto.INT64:
        x = x + np.float32(0.4)  # truncated toward zero
    check(model, {"X": x})


@pytest.mark.parametrize("kind", ["float_each", "float_one", "float_nan", "int64"])
def test_imputer(kind: str) -> None:
    r = rng(5)
    if kind == "int64":
        attrs = {"imputed_value_int64s": [7, 8, 9, 10, 11], "replaced_value_int64": 2}
        x = r.integers(0, 4, size=(N, F)).astype(np.int64)
        dtype = TensorProto.INT64
    else:
        x = r.integers(0, 4, size=(N, F)).astype(np.float32)
        x[x == 3] = np.nan
        values = [0.5, 1.5, 2.5, 3.5, 4.5] if kind != "float_one" else [9.0]
        replaced = float("nan") if kind == "float_nan" else 2.0
        attrs = {"imputed_value_floats": values, "replaced_value_float": replaced}
        dtype = TensorProto.FLOAT
    model = ml_model("Imputer", attrs, [("Y", dtype, [N, F])], inputs=[("X", dtype, [N, F])])
    check(model, {"X": x})


def test_binarizer() -> None:
    """Above the threshold (0.1 rounded to f32) is 1; equal to it: 0. (onnxruntime has
    only the f32 kernel and fails the run on a NaN.)"""
    model = ml_model("Binarizer", {"threshold": 0.1}, [("Y", TensorProto.FLOAT, [N, F])])
    x = np.round(rng(6).normal(size=(N, F)), 1).astype(np.float32)
    x[0, :2] = [0.1, -np.inf]
    check(model, {"X": x})


def test_feature_vectorizer() -> None:
    inputs = [
        ("A", TensorProto.FLOAT, [N, 3]),
        ("B", TensorProto.FLOAT, [N, 2]),
        ("C", TensorProto.FLOAT, [N, 4]),
    ]
    attrs = {"inputdimensions": [3, 4, 2]}  # B zero-padded, C cut
    model = ml_model("FeatureVectorizer", attrs, [("Y", TensorProto.FLOAT, [N, 9])], inputs=inputs)
    r = rng(6)
    feeds = {
        "A": r.normal(size=(N, 3)).astype(np.float32),
        "B": r.normal(size=(N, 2)).astype(np.float32),
        "C": r.normal(size=(N, 4)).astype(np.float32),
    }
    check(model, feeds)


@pytest.mark.parametrize(
    "case",
    ["int64_float", "float_int64", "int64_int64_v4", "float_float_nan_v4", "tensor_v4"],
)
def test_label_encoder(case: str) -> None:
    opset = 4 if case.endswith("v4") else 2
    if case == "int64_float":
        attrs = {"keys_int64s": [1, 5, 2, 5], "values_floats": [0.5, 1.5, 2.5, 3.5],
                 "default_float": 9.0}  # fmt: skip
        x, t_in, t_out = np.array([[1, 5], [2, 7], [5, 1], [0, 2]], np.int64), 7, 1
    elif case == "float_int64":
        attrs = {"keys_floats": [0.5, -1.0, 3.0], "values_int64s": [10, 20, 30]}
        x, t_in, t_out = np.array([0.5, 3.0, 2.0, -1.0], np.float32), 1, 7
    elif case == "int64_int64_v4":
        attrs = {"keys_int64s": [4, 8], "values_int64s": [40, 80], "default_int64": 0}
        x, t_in, t_out = np.array([4, 8, 6, 4], np.int64), 7, 7
    elif case == "float_float_nan_v4":
        attrs = {"keys_floats": [float("nan"), 1.0], "values_floats": [7.0, 8.0]}
        x, t_in, t_out = np.array([np.nan, 1.0, 2.0], np.float32), 1, 1
    else:
        attrs = {
            "keys_tensor": helper.make_tensor("k", TensorProto.INT64, [3], [1, 2, 3]),
            "values_tensor": helper.make_tensor("v", TensorProto.DOUBLE, [3], [-1.5, -2, -3]),
            "default_tensor": helper.make_tensor("d", TensorProto.DOUBLE, [1], [99.0]),
        }
        x, t_in, t_out = np.array([3, 1, 0, 2], np.int64), 7, 11
    model = ml_model(
        "LabelEncoder",
        attrs,
        [("Y", t_out, list(x.shape))],
        inputs=[("X", t_in, list(x.shape))],
        ml_opset=opset,
    )
    check(model, {"X": x})


# -- SVMs ---------------------------------------------------------------------------------


def svm_attrs(classes: int, kernel: str, proba: bool, seed: int) -> dict[str, Any]:
    r = rng(seed)
    per_class = [2, 3, 1, 2][:classes]
    count = sum(per_class)
    attrs: dict[str, Any] = {
        "classlabels_ints": list(range(5, 5 + classes)),
        "vectors_per_class": per_class,
        "support_vectors": r.normal(size=count * F).tolist(),
        "coefficients": r.normal(size=(classes - 1) * count).tolist(),
        "rho": r.normal(size=classes * (classes - 1) // 2).tolist(),
        "kernel_type": kernel,
        "kernel_params": [0.3, 0.5, 3.0],
    }
    if proba:
        pairs = classes * (classes - 1) // 2
        attrs["prob_a"] = (-np.abs(r.normal(size=pairs)) - 0.5).tolist()
        attrs["prob_b"] = (r.normal(size=pairs) * 0.1).tolist()
    return attrs


@pytest.mark.parametrize("kernel", ["LINEAR", "POLY", "RBF", "SIGMOID"])
@pytest.mark.parametrize("classes", [2, 3, 4])
@pytest.mark.parametrize("proba", [False, True])
def test_svm_classifier(kernel: str, classes: int, proba: bool) -> None:
    attrs = svm_attrs(classes, kernel, proba, seed=classes)
    width = classes if proba else (2 if classes == 2 else classes * (classes - 1) // 2)
    model = ml_model("SVMClassifier", attrs, [LABEL, ("Z", TensorProto.FLOAT, [N, width])])
    check(model, x_feed(classes + 10), atol=2e-5)


@pytest.mark.parametrize("post", ["LOGISTIC", "SOFTMAX"])
@pytest.mark.parametrize("classes", [2, 3])
def test_svm_classifier_post_transform(post: str, classes: int) -> None:
    attrs = {**svm_attrs(classes, "RBF", False, seed=7), "post_transform": post}
    width = 2 if classes == 2 else 3
    model = ml_model("SVMClassifier", attrs, [LABEL, ("Z", TensorProto.FLOAT, [N, width])])
    check(model, x_feed(8))


@pytest.mark.parametrize("classes", [2, 3])
def test_svm_classifier_linear_mode(classes: int) -> None:
    r = rng(9)
    attrs = {
        "classlabels_ints": [0, 1, 2][:classes],
        "coefficients": r.normal(size=classes * F).tolist(),
        "rho": [0.2],
        "post_transform": "NONE",
        "kernel_params": [0.1, 0.0, 1.0],
    }
    model = ml_model("SVMClassifier", attrs, [LABEL, ("Z", TensorProto.FLOAT, [N, classes])])
    check(model, x_feed(9))


@pytest.mark.parametrize("kernel", ["LINEAR", "POLY", "RBF", "SIGMOID"])
@pytest.mark.parametrize("one_class", [0, 1])
def test_svm_regressor(kernel: str, one_class: int) -> None:
    r = rng(11)
    attrs = {
        "n_supports": 4,
        "support_vectors": r.normal(size=4 * F).tolist(),
        "coefficients": r.normal(size=4).tolist(),
        "rho": [0.25],
        "kernel_type": kernel,
        "kernel_params": [0.2, 0.1, 2.0],
        "one_class": one_class,
    }
    model = ml_model("SVMRegressor", attrs, [("Y", TensorProto.FLOAT, [N, 1])])
    check(model, x_feed(12))


def test_svm_regressor_linear_mode() -> None:
    attrs = {"coefficients": rng(13).normal(size=F).tolist(), "rho": [1.5], "n_supports": 0,
             "kernel_params": [0.1, 0.0, 1.0]}  # fmt: skip
    model = ml_model("SVMRegressor", attrs, [("Y", TensorProto.FLOAT, [N, 1])])
    check(model, x_feed(13))


# -- tree ensembles ---------------------------------------------------------------------


def random_trees(
    trees: int, outputs: int, seed: int, weights_per_leaf: int = 1, depth: int = 3,
    positive: bool = False, only: int | None = None, every: bool = False,
) -> dict[str, list[Any]]:  # fmt: skip
    """Old-style node tables of random trees (mixed modes, shuffled node ids)."""
    r = rng(seed)
    cols: dict[str, list[Any]] = {k: [] for k in (
        "treeids", "nodeids", "featureids", "modes", "values", "true", "false",
        "w_trees", "w_nodes", "w_ids", "w")}  # fmt: skip
    modes = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT"]
    for t in range(trees):
        count = 2 ** (depth + 1) - 1
        ids = r.permutation(count) + 3  # node ids need not start at 0

        def grow(k: int, level: int, t: int = t, ids: np.ndarray = ids) -> None:
            leaf = level == depth or (level > 0 and r.random() < 0.2)
            cols["treeids"].append(t)
            cols["nodeids"].append(int(ids[k]))
            cols["featureids"].append(int(r.integers(0, F)) if not leaf else 0)
            cols["modes"].append("LEAF" if leaf else str(r.choice(modes)))
            cols["values"].append(float(r.normal() * 0.5) if not leaf else 0.0)
            left, right = 2 * k + 1, 2 * k + 2
            cols["true"].append(int(ids[left]) if not leaf else 0)
            cols["false"].append(int(ids[right]) if not leaf else 0)
            if leaf:
                for j in range(outputs if every else weights_per_leaf):
                    cols["w_trees"].append(t)
                    cols["w_nodes"].append(int(ids[k]))
                    target = j if every else int(r.integers(0, outputs))
                    cols["w_ids"].append(only if only is not None else target)
                    w = float(r.normal())
                    cols["w"].append(abs(w) if positive else w)
            else:
                grow(left, level + 1)
                grow(right, level + 1)

        grow(0, 0)
    return cols


def regressor_attrs(cols: dict[str, list[Any]], targets: int, **extra: Any) -> dict[str, Any]:
    return {
        "nodes_treeids": cols["treeids"], "nodes_nodeids": cols["nodeids"],
        "nodes_featureids": cols["featureids"], "nodes_modes": cols["modes"],
        "nodes_values": cols["values"], "nodes_truenodeids": cols["true"],
        "nodes_falsenodeids": cols["false"], "target_treeids": cols["w_trees"],
        "target_nodeids": cols["w_nodes"], "target_ids": cols["w_ids"],
        "target_weights": cols["w"], "n_targets": targets, **extra,
    }  # fmt: skip


def classifier_attrs(cols: dict[str, list[Any]], labels: list[int], **extra: Any) -> dict[str, Any]:
    attrs = regressor_attrs(cols, 0, **extra)
    del attrs["n_targets"]
    for k in ("treeids", "nodeids", "ids", "weights"):
        attrs[f"class_{k}"] = attrs.pop(f"target_{k}")
    attrs["classlabels_int64s"] = labels
    return attrs


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("targets", [1, 3])
def test_tree_ensemble_regressor(aggregate: str, targets: int) -> None:
    cols = random_trees(4, targets, seed=targets, weights_per_leaf=2 if targets > 1 else 1)
    attrs = regressor_attrs(
        cols, targets, aggregate_function=aggregate, base_values=[0.5] * targets
    )
    model = ml_model("TreeEnsembleRegressor", attrs, [("Y", TensorProto.FLOAT, [N, targets])])
    check(model, x_feed(21, n=N))


def test_tree_ensemble_regressor_refuses_unknown_node_modes() -> None:
    """Each unknown mode named once, in sorted order, whichever nodes have it."""
    cols = random_trees(3, 1, seed=9)
    branches = [i for i, m in enumerate(cols["modes"]) if m != "LEAF"]
    for i, mode in zip(branches, ["BRANCH_Z", "BRANCH_A", "BRANCH_Z"], strict=False):
        cols["modes"][i] = mode
    model = ml_model("TreeEnsembleRegressor", regressor_attrs(cols, 1),
                     [("Y", TensorProto.FLOAT, [N, 1])])  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"node modes \['BRANCH_A', 'BRANCH_Z'\]$"):
        import_model(model)


@pytest.mark.parametrize("missing", ["true", "false", "both"])
def test_tree_ensemble_regressor_names_the_first_missing_successor(missing: str) -> None:
    """A successor naming no node is refused, the true successors searched first."""
    cols = random_trees(2, 1, seed=4)
    branches = [i for i, m in enumerate(cols["modes"]) if m != "LEAF"]
    if missing in ("true", "both"):
        cols["true"][branches[-1]] = 900
    if missing in ("false", "both"):
        cols["false"][branches[0]] = 901
    model = ml_model("TreeEnsembleRegressor", regressor_attrs(cols, 1),
                     [("Y", TensorProto.FLOAT, [N, 1])])  # fmt: skip
    node = 901 if missing == "false" else 900
    tree = cols["treeids"][branches[0] if missing == "false" else branches[-1]]
    with pytest.raises(OnnxImportError, match=f"a node names missing node {node} of tree {tree}$"):
        import_model(model)


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
def test_tree_ensemble_regressor_post_transform(post: str) -> None:
    cols = random_trees(3, 3, seed=5, positive=post == "PROBIT")
    if post == "PROBIT":
        cols["w"] = [w * 0.1 for w in cols["w"]]
    attrs = regressor_attrs(cols, 3, post_transform=post)
    model = ml_model("TreeEnsembleRegressor", attrs, [("Y", TensorProto.FLOAT, [N, 3])])
    check(model, x_feed(22), atol=1e-4)


def test_tree_ensemble_regressor_missing_values_and_double() -> None:
    cols = random_trees(3, 1, seed=8)
    attrs = regressor_attrs(
        cols, 1, nodes_missing_value_tracks_true=[int(i % 2) for i in range(len(cols["modes"]))]
    )
    model = ml_model(
        "TreeEnsembleRegressor",
        attrs,
        [("Y", TensorProto.FLOAT, [N, 1])],
        inputs=[("X", TensorProto.DOUBLE, [N, F])],
    )
    x = rng(3).normal(size=(N, F))
    x[x > 1.0] = np.nan
    check(model, {"X": x})


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("base", [False, True])
def test_tree_ensemble_classifier_multiclass(post: str, base: bool) -> None:
    cols = random_trees(5, 4, seed=31, weights_per_leaf=2)
    extra = {"post_transform": post}
    if base:
        extra["base_values"] = [0.1, -0.2, 0.3, 0.0]
    attrs = classifier_attrs(cols, [2, 4, 6, 8], **extra)
    model = ml_model("TreeEnsembleClassifier", attrs, [LABEL, ("Z", TensorProto.FLOAT, [N, 4])])
    check(model, x_feed(32, n=N))


@pytest.mark.parametrize(
    "case", ["one_class_positive", "one_class_mixed", "both_classes", "both_base2", "one_base1"]
)
@pytest.mark.parametrize("post", ["NONE", "LOGISTIC"])
def test_tree_ensemble_classifier_binary(case: str, post: str) -> None:
    """The binary layouts onnxruntime distinguishes (skl2onnx's gradient boosting gives
    one weighted class and a base value, random forests both classes)."""
    only = 1 if case.startswith("one") else None
    cols = random_trees(4, 2, seed=41, only=only, positive=case == "one_class_positive",
                        every=only is None)  # fmt: skip
    extra: dict[str, Any] = {"post_transform": post}
    if case == "both_base2":
        extra["base_values"] = [0.25, -0.5]
    if case == "one_base1":
        extra["base_values"] = [0.3]
    attrs = classifier_attrs(cols, [0, 1], **extra)
    model = ml_model("TreeEnsembleClassifier", attrs, [LABEL, ("Z", TensorProto.FLOAT, [N, 2])])
    check(model, x_feed(42))


# -- ZipMap --------------------------------------------------------------------------------


@pytest.mark.parametrize("keys", [[3, 1, 2], ["a", "b", "c"]])
def test_zipmap(keys: list[Any]) -> None:
    attr = "classlabels_int64s" if isinstance(keys[0], int) else "classlabels_strings"
    node = helper.make_node("ZipMap", ["X"], ["Z"], domain=ML, **{attr: keys})
    key_type = TensorProto.INT64 if isinstance(keys[0], int) else TensorProto.STRING
    out_type = helper.make_sequence_type_proto(
        helper.make_map_type_proto(key_type, helper.make_tensor_type_proto(TensorProto.FLOAT, []))
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [N, 3])],
        [helper.make_value_info("Z", out_type)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 1)]
    )
    check(model, x_feed(50, f=3))


# -- refusals --------------------------------------------------------------------------------


STRING_LABEL = ("Y", TensorProto.STRING, [N])


@pytest.mark.parametrize("classes", [2, 3])
def test_string_class_labels(classes: int) -> None:
    """String labels: the label output is a string tensor, as onnxruntime's."""
    r = rng(60 + classes)
    names = ["cat", "dog", "emu"][:classes]
    rows = 1 if classes == 2 else classes
    linear = {"coefficients": r.normal(size=rows * F).tolist(),
              "intercepts": r.normal(size=rows).tolist(), "classlabels_strings": names}  # fmt: skip
    width = 2 if rows == 1 else rows
    z = ("Z", TensorProto.FLOAT, [N, width])
    check(ml_model("LinearClassifier", linear, [STRING_LABEL, z]), x_feed(61))
    svm = svm_attrs(classes, "RBF", classes == 3, seed=62)
    del svm["classlabels_ints"]
    svm["classlabels_strings"] = names
    width = classes if classes == 3 else 2
    check(ml_model("SVMClassifier", svm, [STRING_LABEL, ("Z", TensorProto.FLOAT, [N, width])]),
          x_feed(63))  # fmt: skip
    cols = random_trees(3, classes, seed=64, every=True)
    trees = classifier_attrs(cols, [])
    del trees["classlabels_int64s"]
    trees["classlabels_strings"] = names
    out = [STRING_LABEL, ("Z", TensorProto.FLOAT, [N, classes])]
    check(ml_model("TreeEnsembleClassifier", trees, out), x_feed(65))


def test_strings_between_mappings() -> None:
    """int64 -> string -> int64 and string -> one-hot: the strings never leave the model
    except as a string output."""
    nodes = [
        helper.make_node("CategoryMapper", ["X"], ["s"], domain=ML, cats_int64s=[1, 2, 3],
                         cats_strings=["one", "two", "three"], default_string="none"),
        helper.make_node("LabelEncoder", ["s"], ["back"], domain=ML,
                         keys_strings=["three", "one", "none"], values_int64s=[30, 10, -7]),
        helper.make_node("CategoryMapper", ["s"], ["ints"], domain=ML, cats_int64s=[5, 6],
                         cats_strings=["two", "one"]),
        helper.make_node("OneHotEncoder", ["s"], ["hot"], domain=ML,
                         cats_strings=["two", "none", "three"]),
        helper.make_node("LabelEncoder", ["X"], ["named"], domain=ML, keys_int64s=[2, 9],
                         values_strings=["b", "z"]),
    ]  # fmt: skip
    outs = [
        helper.make_tensor_value_info("s", TensorProto.STRING, [6]),
        helper.make_tensor_value_info("back", TensorProto.INT64, [6]),
        helper.make_tensor_value_info("ints", TensorProto.INT64, [6]),
        helper.make_tensor_value_info("hot", TensorProto.FLOAT, [6, 3]),
        helper.make_tensor_value_info("named", TensorProto.STRING, [6]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("X", TensorProto.INT64, [6])], outs
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 2)]
    )
    check(model, {"X": np.array([1, 2, 3, 4, 9, 1], np.int64)})


def test_a_string_graph_input_is_refused() -> None:
    attrs = {"keys_strings": ["a"], "values_int64s": [1]}
    model = ml_model("LabelEncoder", attrs, [("Y", TensorProto.INT64, [N])],
                     inputs=[("X", TensorProto.STRING, [N])], ml_opset=2)  # fmt: skip
    with pytest.raises(OnnxImportError, match="graph input 'X' element type STRING"):
        backend.prepare(model)


@pytest.mark.parametrize("op", ["TreeEnsembleRegressor", "TreeEnsembleClassifier", "TreeEnsemble"])
def test_tree_ensembles_over_an_open_batch(op: str) -> None:
    # What skl2onnx / onnxmltools write by default ([None, features] inputs): one symbolic
    # compile, run at several batch sizes (a static one per size before).
    from tests.frontends.test_onnx_training import random_trees as random_trees_v5
    from tests.frontends.test_onnx_training import tree_model

    if op == "TreeEnsemble":
        attrs = random_trees_v5(np.random.default_rng(2), 4, 3, 2, set_values=[-1, 0, 1])
        model = tree_model(attrs, 1)
        model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
        x = "x"
    else:
        cols = random_trees(4, 3, seed=41, weights_per_leaf=2)
        attrs = (regressor_attrs(cols, 3) if op == "TreeEnsembleRegressor"
                 else classifier_attrs(cols, [1, 2, 3], post_transform="SOFTMAX"))  # fmt: skip
        outputs = [("Y", TensorProto.FLOAT, ["N", 3])] if op == "TreeEnsembleRegressor" else [
            ("L", TensorProto.INT64, ["N"]), ("Z", TensorProto.FLOAT, ["N", 3])]  # fmt: skip
        model = ml_model(op, attrs, outputs, inputs=[("X", TensorProto.FLOAT, ["N", F])])  # type: ignore[list-item]
        x = "X"
    rep = backend.prepare(model)
    assert rep.compiled is not None and rep.compiled.symbolic_error is None
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (1, 6):
        feeds = {x: np.round(rng(n).normal(size=(n, 3 if x == "x" else F)), 1).astype(np.float32)}
        for g, w in zip(rep.run(feeds), sess.run(None, feeds), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _one_op_models() -> dict[str, onnx.ModelProto]:
    cols = random_trees(4, 3, seed=41, weights_per_leaf=2)
    return {
        "mir.tree_ensemble": ml_model(
            "TreeEnsembleRegressor", regressor_attrs(cols, 3), [("Y", TensorProto.FLOAT, [N, 3])]
        ),
        "mir.tree_ensemble_classifier": ml_model(
            "TreeEnsembleClassifier",
            classifier_attrs(cols, [1, 2, 3], post_transform="SOFTMAX"),
            [LABEL, ("Z", TensorProto.FLOAT, [N, 3])],
        ),
        "mir.svm_classifier": ml_model(
            "SVMClassifier",
            svm_attrs(3, "RBF", True, seed=3),
            [LABEL, ("Z", TensorProto.FLOAT, [N, 3])],
        ),
        "mir.linear_classifier": ml_model(
            "LinearClassifier",
            {
                "coefficients": rng(2).normal(size=3 * F).tolist(),
                "intercepts": [0.1, 0.2, 0.3],
                "classlabels_ints": [4, 5, 6],
                "post_transform": "SOFTMAX",
            },
            [LABEL, ("Z", TensorProto.FLOAT, [N, 3])],
        ),
        "mir.normalizer": ml_model(
            "Normalizer", {"norm": "L2"}, [("Y", TensorProto.FLOAT, [N, F])]
        ),
        "mir.scaler": ml_model(
            "Scaler", {"offset": [0.5] * F, "scale": [2.0] * F}, [("Y", TensorProto.FLOAT, [N, F])]
        ),
        "mir.binarizer": ml_model(
            "Binarizer", {"threshold": 0.25}, [("Y", TensorProto.FLOAT, [N, F])]
        ),
        "mir.imputer": ml_model(
            "Imputer",
            {"imputed_value_floats": [1.0] * F, "replaced_value_float": float("nan")},
            [("Y", TensorProto.FLOAT, [N, F])],
        ),
        "mir.one_hot_encoder": ml_model(
            "OneHotEncoder",
            {"cats_int64s": [3, 1, 4]},
            [("Y", TensorProto.FLOAT, [N, 3])],
            inputs=[("X", TensorProto.INT64, [N])],
        ),
    }


@pytest.mark.parametrize("op", sorted(_one_op_models()))
def test_a_trained_model_is_one_op(op: str) -> None:
    """What onnxruntime runs as one node is one op, before and after the cpu compile."""
    from rlx_compile import CompilePipeline
    from rlx_compile.ir import main_graph

    model = _one_op_models()[op]
    module = import_model(model)
    result = CompilePipeline(target="cpu", keep_stages=False).compile(module)
    leaves = {"mir.input", "mir.param", "mir.constant", "func.return", "lir.return"}
    for graph_op in (main_graph(module), result.lir):
        assert graph_op is not None
        assert [o.name for o in graph_op.body.block.ops if o.name not in leaves] == [op]
