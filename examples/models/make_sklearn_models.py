"""Convert a varied set of scikit-learn (and LightGBM / XGBoost) models to ONNX with the
converters' default options, as a user would, for the tests of the ai.onnx.ml importer.

    python3 -m venv /work/venv-wild
    /work/venv-wild/bin/pip install -e ".[wild]"   # scikit-learn, skl2onnx, onnxmltools, ...
    /work/venv-wild/bin/python examples/models/make_sklearn_models.py  # -> examples/models/sklearn

Each model is trained on a small data set from a fixed seed and written as
``<name>.onnx`` with ``<name>.npz``, the inputs the tests feed it (rows the model has not
seen, in the model's input types). Inputs are declared with an open batch dim
(``[None, features]``), as skl2onnx's examples do. Trees are few and shallow so that each
file stays a few KB. Classifier outputs are skl2onnx's defaults: the label and ZipMap's
list of {class: probability} dicts (string labels for the ``*_string_labels`` models).
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx

OUT = Path(__file__).resolve().parent / "sklearn"


def data(kind: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(train X, train y, test X): iris-like classes, or a smooth regression target."""
    rng = np.random.default_rng(seed)
    if kind.startswith("classes"):
        classes = int(kind[-1])
        centers = rng.normal(size=(classes, 4)) * 2.5
        y = rng.integers(0, classes, size=160)
        x = centers[y] + rng.normal(size=(160, 4))
    else:
        x = rng.normal(size=(160, 4))
        y = np.sin(x[:, 0]) + x[:, 1] * x[:, 2] - 0.5 * x[:, 3] + 0.1 * rng.normal(size=160)
    return x[:140].astype(np.float32), y[:140], x[140:].astype(np.float32)


def skl(model: Any, features: int = 4, dtype: str = "float") -> onnx.ModelProto:
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType, Int64TensorType

    kind = FloatTensorType if dtype == "float" else Int64TensorType
    return to_onnx(model, initial_types=[("X", kind([None, features]))], target_opset=17)


def models() -> dict[str, Callable[[], tuple[onnx.ModelProto, dict[str, np.ndarray]]]]:
    from sklearn.cluster import KMeans
    from sklearn.compose import ColumnTransformer
    from sklearn.decomposition import PCA
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import FeatureUnion, make_pipeline
    from sklearn.preprocessing import (
        MaxAbsScaler,
        MinMaxScaler,
        Normalizer,
        OneHotEncoder,
        StandardScaler,
    )
    from sklearn.svm import SVC, SVR, LinearSVC
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    def fit(
        model: Any,
        kind: str,
        *,
        dtype: str = "float",
        transform: Callable | None = None,
        names: bool = False,
    ) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
        x, y, test = data(kind)
        if names:  # string class labels
            y = np.array(["setosa", "versicolor", "virginica"])[y]
        if transform is not None:
            x, test = transform(x), transform(test)
        model.fit(x, y)
        return skl(model, x.shape[1], dtype), {"X": test}

    def categories(x: np.ndarray) -> np.ndarray:
        return np.clip(np.round(x * 1.5), -2, 2).astype(np.int64) + 3  # ints 1..5

    def with_gaps(x: np.ndarray) -> np.ndarray:
        x = x.copy()
        x[::5, 1] = np.nan
        x[2::7, 3] = np.nan
        return x

    def mixed(x: np.ndarray) -> np.ndarray:
        x = x.copy()
        x[:, 3] = categories(x[:, 3:]).ravel()  # an integer category column among floats
        return x

    column = ColumnTransformer(
        [("num", StandardScaler(), [0, 1, 2]), ("cat", OneHotEncoder(handle_unknown="ignore"), [3])]
    )
    union = FeatureUnion([("pca", PCA(n_components=2)), ("minmax", MinMaxScaler())])
    return {
        "scaler_logreg": lambda: fit(
            make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)), "classes3"
        ),
        "logreg_binary": lambda: fit(LogisticRegression(), "classes2"),
        "logreg_string_labels": lambda: fit(LogisticRegression(), "classes3", names=True),
        "random_forest_string_labels": lambda: fit(
            RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
            "classes3",
            names=True,
        ),
        "linear_svc": lambda: fit(LinearSVC(), "classes3"),
        "linear_regression": lambda: fit(LinearRegression(), "regression"),
        "normalizer_ridge": lambda: fit(make_pipeline(Normalizer(), Ridge()), "regression"),
        "imputer_ridge": lambda: fit(
            make_pipeline(SimpleImputer(), Ridge()), "regression", transform=with_gaps
        ),
        "onehot_logreg": lambda: fit(
            make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression()),
            "classes3",
            dtype="int64",
            transform=categories,
        ),
        "column_transformer": lambda: fit(
            make_pipeline(column, LogisticRegression(max_iter=500)), "classes3", transform=mixed
        ),
        "feature_union": lambda: fit(
            make_pipeline(union, MaxAbsScaler(), LinearRegression()), "regression"
        ),
        "decision_tree_clf": lambda: fit(DecisionTreeClassifier(max_depth=4), "classes3"),
        "decision_tree_reg": lambda: fit(DecisionTreeRegressor(max_depth=4), "regression"),
        "random_forest_clf": lambda: fit(
            RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0), "classes3"
        ),
        "random_forest_binary": lambda: fit(
            RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0), "classes2"
        ),
        "random_forest_reg": lambda: fit(
            RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0), "regression"
        ),
        "gradient_boosting_binary": lambda: fit(
            GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0), "classes2"
        ),
        "gradient_boosting_clf": lambda: fit(
            GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0), "classes3"
        ),
        "gradient_boosting_reg": lambda: fit(
            GradientBoostingRegressor(n_estimators=6, max_depth=3, random_state=0), "regression"
        ),
        "svc_proba": lambda: fit(SVC(probability=True, random_state=0), "classes3"),
        "svc_binary": lambda: fit(SVC(kernel="poly", degree=2), "classes2"),
        "svr": lambda: fit(SVR(), "regression"),
        "kmeans": lambda: fit(KMeans(n_clusters=3, n_init=2, random_state=0), "classes3"),
        "knn": lambda: fit(KNeighborsClassifier(n_neighbors=3), "classes3"),
        "mlp_clf": lambda: fit(
            MLPClassifier(hidden_layer_sizes=(8,), max_iter=300, random_state=0), "classes3"
        ),
        "lightgbm_clf": lambda: boosted("lightgbm", "classes3"),
        "lightgbm_reg": lambda: boosted("lightgbm", "regression"),
        "xgboost_clf": lambda: boosted("xgboost", "classes3"),
        "xgboost_reg": lambda: boosted("xgboost", "regression"),
    }


def boosted(library: str, kind: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """LightGBM / XGBoost through onnxmltools (their default conversions)."""
    from onnxmltools import convert_lightgbm, convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, y, test = data(kind)
    types = [("X", FloatTensorType([None, x.shape[1]]))]
    classify = kind.startswith("classes")
    if library == "lightgbm":
        import lightgbm

        cls = lightgbm.LGBMClassifier if classify else lightgbm.LGBMRegressor
        model = cls(n_estimators=5, num_leaves=6, min_child_samples=5, verbose=-1)
        model.fit(x, y)
        return convert_lightgbm(model, initial_types=types, target_opset=15), {"X": test}
    import xgboost

    cls = xgboost.XGBClassifier if classify else xgboost.XGBRegressor
    model = cls(n_estimators=5, max_depth=3)
    model.fit(x, y)
    return convert_xgboost(model, initial_types=types, target_opset=15), {"X": test}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("names", nargs="*", help="only these models")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make in models().items():
            if args.names and name not in args.names:
                continue
            try:
                model, feeds = make()
            except Exception as err:  # a converter that fails is reported, not fatal
                print(f"{name}: not converted ({type(err).__name__}: {err})")
                continue
            onnx.checker.check_model(model)
            onnx.save(model, args.out / f"{name}.onnx")
            np.savez(args.out / f"{name}.npz", **feeds)
            size = (args.out / f"{name}.onnx").stat().st_size
            ops = sorted({n.op_type for n in model.graph.node})
            print(f"{name}: {size:,} B, ops {', '.join(ops)}")


if __name__ == "__main__":
    main()
