"""Classic-ML conversions for the models-from-the-wild corpus (``bench/wild.py``): the
scikit-learn estimators that ``examples/models/sklearn`` does not have (kernels, naive
Bayes, mixtures, discriminant analysis, decompositions, outlier detectors, ensembles of
ensembles, discretizers, imputers, one-hot on integers), and LightGBM / XGBoost through
onnxmltools, converted as a user converts them: the converter's defaults, an open batch
dim, at the opsets people pin (skl2onnx's default and old ones), with ZipMap or without.

    /work/venv-wild/bin/python bench/wild_sklearn.py --out bench/.models/sklearn

Needs scikit-learn, skl2onnx, onnxmltools, lightgbm, xgboost (not test dependencies).
Writes ``<name>.onnx`` for every conversion that succeeds (``bench/wild.py`` lists them
as ``skl_<name>``, by the keys of ``conversions()``) and ``failed.txt`` with one line
per conversion the converter itself refused (not our failures).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from export_each import export_arguments, export_each

FEATURES = 4


def data(kind: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Training rows: three (or two) separable classes, or a smooth regression target."""
    rng = np.random.default_rng(seed)
    y: np.ndarray
    if kind in ("classes3", "classes2"):
        classes = int(kind[-1])
        centers = rng.normal(size=(classes, FEATURES)) * 2.5
        y = rng.integers(0, classes, size=120)
        x = centers[y] + rng.normal(size=(120, FEATURES))
    else:
        x = rng.normal(size=(120, FEATURES))
        y = np.sin(x[:, 0]) + x[:, 1] * x[:, 2] - 0.5 * x[:, 3] + 0.1 * rng.normal(size=120)
    return x.astype(np.float32), y


def conversions() -> dict[str, Callable[[], Any]]:
    import lightgbm
    import xgboost
    from onnxmltools import convert_lightgbm, convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType as MlFloat
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType, Int64TensorType
    from sklearn import (
        calibration,
        cluster,
        compose,
        covariance,
        cross_decomposition,
        decomposition,
        discriminant_analysis,
        ensemble,
        feature_selection,
        gaussian_process,
        impute,
        linear_model,
        mixture,
        naive_bayes,
        neighbors,
        neural_network,
        pipeline,
        preprocessing,
        svm,
        tree,
    )

    del covariance
    gp_kernels = gaussian_process.kernels

    def fitted(model: Any, kind: str) -> Any:
        x, y = data(kind.removeprefix("positive_"))
        if kind.startswith("positive_"):
            x = np.abs(x)
        if kind == "none":
            return model.fit(x)
        return model.fit(x, y)

    def skl(model: Any, kind: str, opset: Any = None, **kw: Any) -> Any:
        m = fitted(model, kind)
        typ = kw.pop("types", None) or [("X", FloatTensorType([None, FEATURES]))]
        return to_onnx(m, initial_types=typ, target_opset=opset, **kw)

    def ints(model: Any) -> Any:
        rng = np.random.default_rng(1)
        x = rng.integers(0, 5, size=(120, FEATURES)).astype(np.int64)
        y = (x[:, 0] + x[:, 1] > 4).astype(int)
        model.fit(x, y)
        return to_onnx(model, initial_types=[("X", Int64TensorType([None, FEATURES]))])

    def mixed() -> Any:
        rng = np.random.default_rng(2)
        x = rng.normal(size=(120, FEATURES)).astype(np.float32)
        x[:, 3] = rng.integers(0, 4, size=120)
        y = (x[:, 0] + x[:, 3] > 1).astype(int)
        ct = compose.ColumnTransformer([
            ("num", preprocessing.StandardScaler(), [0, 1]),
            ("cat", preprocessing.OneHotEncoder(handle_unknown="ignore"), [3]),
        ])  # fmt: skip
        model = pipeline.make_pipeline(ct, linear_model.LogisticRegression()).fit(x, y)
        return to_onnx(model, initial_types=[("X", FloatTensorType([None, FEATURES]))])

    def double(model: Any, kind: str) -> Any:
        return skl(model, kind, types=[("X", DoubleTensorType([None, FEATURES]))])

    def lgbm(model: Any, kind: str, **kw: Any) -> Any:
        m = fitted(model, kind)
        return convert_lightgbm(m, initial_types=[("X", MlFloat([None, FEATURES]))],
                                target_opset=15, **kw)  # fmt: skip

    def xgb(model: Any, kind: str) -> Any:
        m = fitted(model, kind)
        return convert_xgboost(m, initial_types=[("X", MlFloat([None, FEATURES]))],
                               target_opset=15)  # fmt: skip

    nozip = {"zipmap": False}
    rs = 0
    c3, c2, reg = "classes3", "classes2", "regression"
    return {
        "gpr_rbf": lambda: skl(gaussian_process.GaussianProcessRegressor(
            gp_kernels.RBF() + gp_kernels.WhiteKernel(), random_state=rs), reg),
        "pca_whiten": lambda: skl(decomposition.PCA(3, whiten=True), "none"),
        "truncated_svd": lambda: skl(decomposition.TruncatedSVD(2, random_state=rs), "none"),
        "kernel_pca_rbf": lambda: skl(decomposition.KernelPCA(2, kernel="rbf"), "none"),
        "isolation_forest": lambda: skl(ensemble.IsolationForest(
            n_estimators=5, random_state=rs), "none", {"": 17, "ai.onnx.ml": 3}),
        "one_class_svm": lambda: skl(svm.OneClassSVM(), "none"),
        "lof_novelty": lambda: skl(neighbors.LocalOutlierFactor(novelty=True), "none"),
        "gaussian_nb": lambda: skl(naive_bayes.GaussianNB(), c3),
        "bernoulli_nb": lambda: skl(naive_bayes.BernoulliNB(), c3),
        "multinomial_nb": lambda: skl(naive_bayes.MultinomialNB(), f"positive_{c3}"),
        "gaussian_mixture": lambda: skl(mixture.GaussianMixture(3, random_state=rs), "none"),
        "bayes_mixture": lambda: skl(mixture.BayesianGaussianMixture(
            n_components=2, covariance_type="diag", random_state=rs), "none"),
        "lda": lambda: skl(discriminant_analysis.LinearDiscriminantAnalysis(), c3),
        "qda": lambda: skl(discriminant_analysis.QuadraticDiscriminantAnalysis(), c3),
        "nusvc_poly": lambda: skl(svm.NuSVC(kernel="poly", degree=2), c3),
        "svc_sigmoid_proba": lambda: skl(svm.SVC(kernel="sigmoid", probability=True,
                                                 random_state=rs), c2),
        "nusvr_rbf": lambda: skl(svm.NuSVR(), reg),
        "sgd_hinge": lambda: skl(linear_model.SGDClassifier(random_state=rs), c3),
        "sgd_log_proba": lambda: skl(linear_model.SGDClassifier(
            loss="log_loss", random_state=rs), c3),
        "perceptron": lambda: skl(linear_model.Perceptron(random_state=rs), c3),
        "ridge_classifier": lambda: skl(linear_model.RidgeClassifier(), c3),
        "passive_aggressive": lambda: skl(linear_model.PassiveAggressiveClassifier(
            random_state=rs), c2),
        "extra_trees_clf": lambda: skl(ensemble.ExtraTreesClassifier(
            5, max_depth=4, random_state=rs), c3),
        "extra_trees_reg": lambda: skl(ensemble.ExtraTreesRegressor(
            5, max_depth=4, random_state=rs), reg),
        "adaboost_clf": lambda: skl(ensemble.AdaBoostClassifier(
            n_estimators=5, random_state=rs), c3),
        "adaboost_reg": lambda: skl(ensemble.AdaBoostRegressor(
            n_estimators=5, random_state=rs), reg),
        "bagging_clf": lambda: skl(ensemble.BaggingClassifier(
            n_estimators=3, random_state=rs), c3),
        "bagging_reg": lambda: skl(ensemble.BaggingRegressor(
            n_estimators=3, random_state=rs), reg),
        "voting_soft": lambda: skl(ensemble.VotingClassifier(
            [("lr", linear_model.LogisticRegression()), ("nb", naive_bayes.GaussianNB())],
            voting="soft", flatten_transform=False), c3),
        "voting_reg": lambda: skl(ensemble.VotingRegressor(
            [("lr", linear_model.LinearRegression()),
             ("dt", tree.DecisionTreeRegressor(max_depth=3))]), reg),
        "stacking_clf": lambda: skl(ensemble.StackingClassifier(
            [("lr", linear_model.LogisticRegression()),
             ("dt", tree.DecisionTreeClassifier(max_depth=3))]), c3),
        "stacking_reg": lambda: skl(ensemble.StackingRegressor(
            [("lr", linear_model.Ridge()), ("dt", tree.DecisionTreeRegressor(max_depth=3))]), reg),
        "calibrated_svc": lambda: skl(calibration.CalibratedClassifierCV(svm.LinearSVC()), c3),
        "knn_reg_distance": lambda: skl(neighbors.KNeighborsRegressor(
            3, weights="distance"), reg),
        "radius_neighbors": lambda: skl(neighbors.RadiusNeighborsClassifier(
            radius=10.0, outlier_label=0), c3),
        "kbins_onehot": lambda: skl(preprocessing.KBinsDiscretizer(
            3, encode="onehot-dense"), "none"),
        "kbins_ordinal": lambda: skl(preprocessing.KBinsDiscretizer(
            4, encode="ordinal", strategy="uniform"), "none"),
        "poly_ridge": lambda: skl(pipeline.make_pipeline(
            preprocessing.PolynomialFeatures(2), linear_model.Ridge()), reg),
        "robust_scaler_knn": lambda: skl(pipeline.make_pipeline(
            preprocessing.RobustScaler(), neighbors.KNeighborsClassifier(3)), c3),
        "quantile_logreg": lambda: skl(pipeline.make_pipeline(
            preprocessing.QuantileTransformer(n_quantiles=20), linear_model.LogisticRegression()),
            c3),
        "power_transformer": lambda: skl(preprocessing.PowerTransformer(), "none"),
        "binarizer_bnb": lambda: skl(pipeline.make_pipeline(
            preprocessing.Binarizer(), naive_bayes.BernoulliNB()), c3),
        "imputer_median": lambda: skl(pipeline.make_pipeline(
            impute.SimpleImputer(strategy="median"), linear_model.Ridge()), reg),
        "knn_imputer": lambda: skl(impute.KNNImputer(n_neighbors=3), "none"),
        "onehot_int": lambda: ints(pipeline.make_pipeline(
            preprocessing.OneHotEncoder(handle_unknown="ignore"),
            linear_model.LogisticRegression())),
        "ordinal_int": lambda: ints(pipeline.make_pipeline(
            preprocessing.OrdinalEncoder(), tree.DecisionTreeClassifier(max_depth=3))),
        "ct_mixed": mixed,
        "select_kbest_svc": lambda: skl(pipeline.make_pipeline(
            feature_selection.SelectKBest(k=2), svm.SVC()), c3),
        "variance_threshold": lambda: skl(feature_selection.VarianceThreshold(0.5), "none"),
        "mlp_reg": lambda: skl(neural_network.MLPRegressor(
            hidden_layer_sizes=(8,), max_iter=50, random_state=rs), reg),
        "mlp_clf_nozipmap": lambda: skl(neural_network.MLPClassifier(
            (8,), max_iter=50, random_state=rs), c3, options=nozip),
        "pls_regression": lambda: skl(cross_decomposition.PLSRegression(2), reg),
        "bayesian_ridge": lambda: skl(linear_model.BayesianRidge(), reg),
        "ard_regression": lambda: skl(linear_model.ARDRegression(), reg),
        "tweedie_regression": lambda: skl(linear_model.TweedieRegressor(power=0), reg),
        "huber_regression": lambda: skl(linear_model.HuberRegressor(), reg),
        "quantile_regression": lambda: skl(linear_model.QuantileRegressor(alpha=0.0), reg),
        "random_trees_embedding": lambda: skl(ensemble.RandomTreesEmbedding(
            3, max_depth=2, random_state=rs, sparse_output=False), "none"),
        "minibatch_kmeans": lambda: skl(cluster.MiniBatchKMeans(
            3, random_state=rs, n_init=3), "none"),
        "logreg_op9": lambda: skl(linear_model.LogisticRegression(), c3, opset=9),
        "rf_clf_op11": lambda: skl(ensemble.RandomForestClassifier(
            4, max_depth=3, random_state=rs), c3, opset=11),
        "gbdt_reg_op13": lambda: skl(ensemble.GradientBoostingRegressor(
            n_estimators=5, max_depth=3, random_state=rs), reg, opset=13),
        "svc_op21": lambda: skl(svm.SVC(probability=True, random_state=rs), c3, opset=21),
        "scaler_double": lambda: double(preprocessing.StandardScaler(), "none"),
        "logreg_double": lambda: double(linear_model.LogisticRegression(), c3),
        "rf_reg_double": lambda: double(ensemble.RandomForestRegressor(
            3, max_depth=3, random_state=rs), reg),
        "lgbm_multiclass": lambda: lgbm(lightgbm.LGBMClassifier(
            n_estimators=5, num_leaves=7, verbose=-1), c3),
        "lgbm_binary_nozipmap": lambda: lgbm(lightgbm.LGBMClassifier(
            n_estimators=5, num_leaves=7, verbose=-1), c2, zipmap=False),
        "lgbm_regressor_l1": lambda: lgbm(lightgbm.LGBMRegressor(
            n_estimators=5, num_leaves=7, objective="l1", verbose=-1), reg),
        "xgb_multiclass": lambda: xgb(xgboost.XGBClassifier(n_estimators=4, max_depth=3), c3),
        "xgb_binary": lambda: xgb(xgboost.XGBClassifier(n_estimators=4, max_depth=3), c2),
        "xgb_regressor_squared": lambda: xgb(xgboost.XGBRegressor(
            n_estimators=4, max_depth=3), reg),
        "normalizer_l2": lambda: skl(preprocessing.Normalizer("l2"), "none"),
        "normalizer_max": lambda: skl(preprocessing.Normalizer("max"), "none"),
        "maxabs_scaler": lambda: skl(preprocessing.MaxAbsScaler(), "none"),
        "minmax_lasso": lambda: skl(pipeline.make_pipeline(
            preprocessing.MinMaxScaler(), linear_model.Lasso(alpha=0.01)), reg),
        "quantile_transformer": lambda: skl(preprocessing.QuantileTransformer(
            n_quantiles=20), "none"),
        "complement_nb": lambda: skl(naive_bayes.ComplementNB(), f"positive_{c3}", options=nozip),
        "linear_svc": lambda: skl(svm.LinearSVC(random_state=rs), c3),
        "linear_svr": lambda: skl(svm.LinearSVR(random_state=rs), reg),
        "kmeans": lambda: skl(cluster.KMeans(3, n_init=2, random_state=rs), "none"),
        "elastic_poly": lambda: skl(pipeline.make_pipeline(
            preprocessing.PolynomialFeatures(2), preprocessing.StandardScaler(),
            linear_model.ElasticNet(alpha=0.01)), reg),
        "incremental_pca": lambda: skl(decomposition.IncrementalPCA(3), "none"),
        "mlp_clf_tanh": lambda: skl(neural_network.MLPClassifier(
            (16,), activation="tanh", max_iter=50, random_state=rs), c3, options=nozip),
        "knn_clf": lambda: skl(neighbors.KNeighborsClassifier(3), c3, options=nozip),
        "gbdt_clf": lambda: skl(ensemble.GradientBoostingClassifier(
            n_estimators=5, random_state=rs), c3, options=nozip),
        "sgd_regressor": lambda: skl(linear_model.SGDRegressor(random_state=rs), reg),
        "scaled_ridge_ovr": lambda: skl(pipeline.make_pipeline(
            preprocessing.StandardScaler(), linear_model.RidgeClassifier()), c3),
    }  # fmt: skip


def main() -> None:
    args = export_arguments(__doc__)
    todo = conversions()
    warnings.filterwarnings("ignore")

    def convert(name: str) -> None:
        (args.out / f"{name}.onnx").write_bytes(todo[name]().SerializeToString())

    export_each(args.only or todo, convert, args.out)


if __name__ == "__main__":
    main()
