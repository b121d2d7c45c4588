"""The classic ML ops of the ai.onnx.ml domain (what skl2onnx and onnxmltools emit), as
onnxruntime computes them: linear models, SVMs, the preprocessing ops and ZipMap. (The
tree ensembles are in ``trees``.)

Scores, labels and their binary special cases follow onnxruntime's kernels, which is what
a converted model was checked against: e.g. a single binary score becomes the pair
[1 - s, s] without its post_transform, and PROBIT uses onnxruntime's approximation of
erfinv. Strings are supported where they come from the model itself: string class labels
and the string side of LabelEncoder and CategoryMapper give a tensor of positions in a
vocabulary known at import (``StringsValue``, decoded by the backend); string graph
inputs are not (their vocabulary is open).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
import onnx
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects import mir
from rlx_compile.dialects.common import PostTransform
from rlx_compile.dialects.types import DType, element_count
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    converter,
    numel,
)
from rlx_compile.frontends.onnx.ops.shape import reshape
from rlx_compile.frontends.onnx.structured import StringsValue, ZipMapValue
from rlx_compile.legalization import ml as lowered

ML = "ai.onnx.ml"
POST_TRANSFORMS = ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT")
ML_FLOATS = (DType.F32, DType.F64)
"""The element types the classic-ML ops take (onnxruntime's kernels' float types)."""


# ---------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------


def ml_input(ctx: NodeContext, dtype: DType | None = DType.F32) -> SSAValue:
    """Input 0 as [batch, features] (a vector is one sample), cast to ``dtype``."""
    x = ctx.x(0)
    t = type_of(x)
    if t.rank == 1:
        x = ctx.b.reshape(x, [1, t.shape[0]])
    elif t.rank != 2:
        raise Unsupported(f"the input has rank {t.rank} (1 or 2 expected)")
    if dtype is not None and type_of(x).dtype is not dtype:
        x = ctx.b.cast(x, dtype)
    return x


@overload
def floats(ctx: NodeContext, name: str, required: Literal[True]) -> np.ndarray: ...
@overload
def floats(ctx: NodeContext, name: str, required: bool = False) -> np.ndarray | None: ...
def floats(ctx: NodeContext, name: str, required: bool = False) -> np.ndarray | None:
    value = ctx.attr(name)
    if value is None:
        if required:
            raise Unsupported(f"attribute '{name}' is required")
        return None
    return np.asarray(value, np.float32).reshape(-1)


def class_labels(ctx: NodeContext, ints: str = "classlabels_int64s") -> list[int] | list[str]:
    """The class labels: integers, or strings (the label output is then a string tensor
    over them)."""
    strings = ctx.attr("classlabels_strings")
    values = ctx.attr(ints)
    if strings and values:
        raise Unsupported(f"both classlabels_strings and {ints} are given")
    return list(strings) if strings else [int(v) for v in values or []]


def labels_at(
    ctx: NodeContext, index: SSAValue, labels: Sequence[int | str]
) -> SSAValue | StringsValue:
    """The labels at class positions ``index`` (int64): gathered integers, or a string
    tensor over the labels."""
    if labels and isinstance(labels[0], str):
        return StringsValue(index, tuple(str(v) for v in labels))
    return ctx.b.gather(ctx.constant(np.asarray(labels, np.int64)), index, 0)


def side(ctx: NodeContext, win: SSAValue) -> SSAValue:
    """Class position 1 where ``win``, else 0 (int64)."""
    return ctx.b.cast(win, DType.I64)


def argmax(ctx: NodeContext, x: SSAValue, axis: int = -1) -> SSAValue:
    """Index of the first maximum along ``axis`` (int64)."""
    return ctx.b.emit(mir.ArgMaxOp(x, axis % type_of(x).rank)).results[0]


def post_transform(ctx: NodeContext, scores: SSAValue, post: str) -> SSAValue:
    """onnxruntime's post_transform of [batch, n] scores. A single score (n == 1) only
    takes PROBIT, as in onnxruntime."""
    kind = transform(post)
    if type_of(scores).shape[-1] == 1 and kind is not PostTransform.PROBIT:
        return scores
    return lowered.post_transform(ctx.b, scores, kind)


def transform(post: str) -> PostTransform:
    """An ONNX post_transform name as the ops' ``PostTransform``."""
    if post not in POST_TRANSFORMS:
        raise Unsupported(f"post_transform '{post}' is not supported")
    return PostTransform(post.lower())


def labels_result(label: SSAValue, labels: Sequence[int | str]) -> SSAValue | StringsValue:
    """A classifier op's label result: the labels themselves, or for string labels the
    string tensor over them (the op then gives class positions)."""
    if labels and isinstance(labels[0], str):
        return StringsValue(label, tuple(str(v) for v in labels))
    return label


def int_labels(labels: Sequence[int | str]) -> list[int] | None:
    """The ``class_labels`` of a classifier op: None for string labels (positions)."""
    return None if labels and isinstance(labels[0], str) else [int(v) for v in labels]


def coefficient_rows(x: SSAValue, coefficients: np.ndarray, rows: int) -> np.ndarray:
    """The coefficients as ``rows`` rows of the input's features."""
    features = type_of(x).shape[1]
    if not isinstance(features, int) or coefficients.size != rows * features:
        raise Unsupported(
            f"{coefficients.size} coefficients do not make {rows} rows of {features} features"
        )
    return coefficients.reshape(rows, features)


def linear_scores(ctx: NodeContext, x: SSAValue, coefficients: np.ndarray, rows: int,
                  bias: np.ndarray | float | None) -> SSAValue:  # fmt: skip
    """x @ coefficients.reshape(rows, features).T (+ bias)."""
    w = ctx.constant(np.ascontiguousarray(coefficient_rows(x, coefficients, rows).T))
    y = ctx.b.matmul(x, w)
    if bias is None:
        return y
    return ctx.b.add(y, ctx.constant(np.asarray(bias, np.float32).reshape(1, -1)))


def ml_opset(ctx: NodeContext) -> int:
    """The ai.onnx.ml opset the model imports."""
    return ctx.model_opset(ML, 1)


# ---------------------------------------------------------------------------------
# Simple ops
# ---------------------------------------------------------------------------------


@converter("Binarizer", domain=ML)
def binarizer(ctx: NodeContext) -> ConverterResult:
    """1 where x > threshold, else 0, in x's type: ``mir.binarizer`` for f32/f64 (the
    threshold rounded to x's type, as for other types)."""
    x = ctx.x(0)
    threshold = float(ctx.attr("threshold", 0.0))
    if type_of(x).dtype in ML_FLOATS:
        return ctx.b.emit(mir.BinarizerOp(x, threshold)).results[0]
    return ctx.b.cast(ctx.b.compare("gt", x, threshold), type_of(x).dtype)


@converter("ArrayFeatureExtractor", domain=ML)
def array_feature_extractor(ctx: NodeContext) -> ConverterResult:
    """The elements of the last axis that the (flattened) indices name; a vector input
    gives a [1, n] result, as the reference and onnxruntime do."""
    x, indices = ctx.x(0), ctx.x(1)
    if type_of(indices).dtype is not DType.I64:
        indices = ctx.b.cast(indices, DType.I64)
    count = element_count(type_of(indices).shape)
    if type_of(x).rank == 1:  # gathered in the indices' shape, viewed as [1, n] if not so
        return reshape(ctx, ctx.b.gather(x, indices, 0), [1, count])
    return ctx.b.gather(x, ctx.b.reshape(indices, [count]), type_of(x).rank - 1)


@converter("Normalizer", domain=ML)
def normalizer(ctx: NodeContext) -> ConverterResult:
    """Each row divided by its max, L1 or L2 norm (a row whose norm is 0 is kept), as
    ``mir.normalizer`` on floats."""
    x = ctx.x(0)
    if type_of(x).rank > 2:
        raise Unsupported(f"the input has rank {type_of(x).rank} (at most 2)")
    x = ctx.b.cast(x, DType.F32) if type_of(x).dtype is not DType.F32 else x
    norm = ctx.check_attr("norm", ("MAX", "L1", "L2"), "MAX")
    return ctx.b.emit(mir.NormalizerOp(x, norm.lower())).results[0]


@converter("Scaler", domain=ML)
def scaler(ctx: NodeContext) -> ConverterResult:
    """(x - offset) * scale, per feature or by one value; float output."""
    b = ctx.b
    x = ctx.x(0)
    t = type_of(x)
    if t.rank == 0:
        raise Unsupported("a scalar input")
    scale, offset = floats(ctx, "scale"), floats(ctx, "offset")
    if scale is None or not scale.size:
        raise Unsupported("attribute 'scale' is required")
    offset = np.zeros_like(scale) if offset is None else offset
    features = t.shape[-1] if t.rank <= 2 else t.shape[1]
    if t.rank > 2 or scale.size != offset.size or scale.size not in (1, features):
        raise Unsupported(
            f"scale ({scale.size}) and offset ({offset.size}) must both have 1 or {features} "
            "values for a rank-1 or rank-2 input"
        )
    compute = DType.F64 if t.dtype is DType.F64 else DType.F32
    x = b.cast(x, compute) if t.dtype is not compute else x
    y = b.emit(mir.ScalerOp(x, offset.tolist(), scale.tolist())).results[0]
    return b.cast(y, DType.F32) if compute is not DType.F32 else y


@converter("Imputer", domain=ML)
def imputer(ctx: NodeContext) -> ConverterResult:
    """Values equal to the replaced value (NaN matching NaN) become the imputed value of
    their feature (or the one imputed value)."""
    b = ctx.b
    x = ctx.x(0)
    t = type_of(x)
    fl, it = ctx.attr("imputed_value_floats"), ctx.attr("imputed_value_int64s")
    rf, ri = ctx.attr("replaced_value_float", 0.0), ctx.attr("replaced_value_int64", 0)
    if (fl is None) == (it is None) or t.rank == 0:
        raise Unsupported("exactly one of imputed_value_floats and imputed_value_int64s is needed")
    if t.dtype.is_float:
        if fl is None:
            raise Unsupported(f"a {t.dtype.value} input with integer imputed values")
        imputed, replaced = np.asarray(fl, t.dtype.numpy), t.dtype.numpy.type(rf)
    else:
        if it is None:
            raise Unsupported(f"a {t.dtype.value} input with float imputed values")
        imputed, replaced = np.asarray(it).astype(t.dtype.numpy), t.dtype.numpy.type(ri)
    stride = t.shape[-1] if t.rank <= 2 else None
    if t.rank > 2 or (imputed.size != 1 and imputed.size != stride):
        imputed = imputed[:1]  # onnxruntime uses the first value unless there is one per feature
    if t.dtype in ML_FLOATS and t.rank <= 2:
        op = mir.ImputerOp(x, imputed.astype(np.float64).tolist(), float(replaced))
        return b.emit(op).results[0]
    table = ctx.constant(imputed.reshape([1] * (t.rank - 1) + [imputed.size]))
    if t.dtype.is_float and np.isnan(replaced):
        hit = b.compare("ne", x, x)
    else:
        hit = b.compare("eq", x, ctx.constant(np.asarray(replaced, t.dtype.numpy)))
    if imputed.size == 1 and t.rank:
        table = b.expand(table, list(t.shape))
    return b.where(hit, table, x)


@converter("OneHotEncoder", domain=ML)
def one_hot_encoder(ctx: NodeContext) -> ConverterResult:
    """[*x.shape, categories] floats: 1 at the category of each value (cast to int64),
    as ``mir.one_hot_encoder``; a value in no category gives zeros. (With zeros=0
    onnxruntime fails the run on such a value; the compiled model gives zeros.) String
    values become their category's position (-1: none) first."""
    b = ctx.b
    cats = ctx.attr("cats_int64s")
    names = ctx.attr("cats_strings")
    ctx.check_attr("zeros", (0, 1), 1)
    held = ctx.any(0)
    if names and isinstance(held, StringsValue):
        # A category listed twice answers at its last position (onnxruntime's map).
        last = {n: i for i, n in enumerate(names)}
        positions = np.array([last.get(v, -1) for v in held.vocab] or [-1], np.int64)
        x = b.gather(ctx.constant(positions), held.indices, 0)
        cats = list(range(len(names)))
    elif names:
        raise Unsupported("string categories for an input that is not a string tensor")
    else:
        x = ctx.x(0)
        if not cats:
            raise Unsupported("attribute 'cats_int64s' is required")
        if type_of(x).rank > 2:
            raise Unsupported(f"the input has rank {type_of(x).rank} (at most 2)")
        if type_of(x).dtype is not DType.I64:
            x = b.cast(x, DType.I64)  # C++'s truncation toward zero
    return b.emit(mir.OneHotEncoderOp(x, [int(c) for c in cats])).results[0]


@converter("FeatureVectorizer", domain=ML)
def feature_vectorizer(ctx: NodeContext) -> ConverterResult:
    """The inputs' rows side by side as floats, each cut or zero-padded to its declared
    dimension."""
    b = ctx.b
    dims = [int(d) for d in ctx.attr("inputdimensions") or []]
    xs = [ctx.x(i) for i in range(ctx.num_inputs)]
    if len(dims) != len(xs):
        raise Unsupported(f"{len(xs)} inputs but {len(dims)} inputdimensions")
    first = type_of(xs[0]).shape
    batch = 1 if len(first) == 1 else first[0]
    parts = []
    for x, want in zip(xs, dims, strict=True):
        shape = type_of(x).shape
        size = shape[0] if len(shape) == 1 else numel(shape[1:])
        rows = 1 if len(shape) == 1 else shape[0]
        if rows != batch:
            raise Unsupported(f"inputs with {rows} and {batch} rows")
        x = b.reshape(x, [batch, size])
        x = b.cast(x, DType.F32) if type_of(x).dtype is not DType.F32 else x
        if size > want:
            x = b.narrow(x, 1, 0, want)
        elif size < want:
            x = b.concat([x, ctx.full([batch, want - size], 0.0, DType.F32)], 1)
        parts.append(x)
    return parts[0] if len(parts) == 1 else b.concat(parts, 1)


# ---------------------------------------------------------------------------------
# LabelEncoder (numeric keys and values)
# ---------------------------------------------------------------------------------

_LABEL_FIELDS = {"int64s": DType.I64, "floats": DType.F32}

Table = np.ndarray | list[str]
"""Keys or values of a mapping: a numeric array, or strings."""


def _tensor_attr(ctx: NodeContext, name: str) -> np.ndarray | None:
    """A TENSOR attribute as an array, string tensors included (as str objects)."""
    ctx.used_attrs.add(name)
    for a in ctx.node.attribute:
        if a.name == name and a.type == onnx.AttributeProto.TENSOR:
            if a.t.data_type == onnx.TensorProto.STRING:
                return np.array([v.decode() for v in a.t.string_data], dtype=object)
            return np.asarray(ctx.attr(name)).reshape(-1)
    return None


def _mapping_table(ctx: NodeContext, kind: str) -> Table:
    """The keys or values of a LabelEncoder: ``<kind>_int64s``, ``_floats``, ``_strings``
    or (opset 4) ``<kind>_tensor``."""
    found: list[Table] = []
    for suffix, dtype in _LABEL_FIELDS.items():
        value = ctx.attr(f"{kind}_{suffix}")
        if value is not None:
            found.append(np.asarray(value, dtype.numpy).reshape(-1))
    strings = ctx.attr(f"{kind}_strings")
    if strings is not None:
        found.append(list(strings))
    tensor = _tensor_attr(ctx, f"{kind}_tensor")
    if tensor is not None:
        found.append(list(tensor) if tensor.dtype == object else tensor)
    if len(found) != 1:
        raise Unsupported(f"exactly one of the {kind}_* attributes is needed")
    return found[0]


def mapping(
    ctx: NodeContext, keys: Table, values: Table, default: object, nan_matches: bool = False
) -> ConverterResult:
    """Input 0 mapped key -> value (the first of keys listed twice), ``default`` where no
    key matches: ``mir.label_encoder`` for numbers (NaN matching a NaN key if
    ``nan_matches``); a string tensor by its vocabulary, at import. String values come
    out as a string tensor over them (the op gives their positions)."""
    b = ctx.b
    x = ctx.any(0)
    count = len(keys)
    if isinstance(keys, list):  # string keys: the input must be a string tensor
        if not isinstance(x, StringsValue):
            raise Unsupported("string keys for an input that is not a string tensor")
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        table = np.array([first.get(v, count) for v in x.vocab] or [count], np.int64)
        index = b.gather(ctx.constant(table), x.indices, 0)
    else:
        if not isinstance(x, SSAValue):
            raise Unsupported(f"numeric keys for an input that is {x.kind}")
        t = type_of(x)
        if t.dtype is not DType.from_numpy(keys.dtype):
            raise Unsupported(f"{t.dtype.value} input with {keys.dtype} keys")
        if isinstance(values, list):
            index_values = np.arange(count + 1, dtype=np.int64)
            positions = b.emit(mir.LabelEncoderOp(x, keys, index_values, DType.I64, nan_matches))
            return StringsValue(positions.results[0], (*(str(v) for v in values), str(default)))
        dtype = DType.from_numpy(values.dtype)
        if not (dtype.is_float or dtype.is_int):
            raise Unsupported(f"{dtype.value} values")
        extended = np.concatenate([values, np.asarray([default], values.dtype)])
        op = mir.LabelEncoderOp(x, keys, extended, dtype, nan_matches and t.dtype.is_float)
        return b.emit(op).results[0]
    if isinstance(values, list):
        return StringsValue(index, (*(str(v) for v in values), str(default)))
    extended = np.concatenate([values, np.asarray([default], values.dtype)])
    return b.gather(ctx.constant(extended), index, 0)


@converter("LabelEncoder", domain=ML)
def label_encoder(ctx: NodeContext) -> ConverterResult:
    """Each value mapped to the value of its key, the default where no key matches;
    from opset 4 a NaN key matches NaN. Strings as far as they are the model's own: a
    string input must come from another node (class labels, a mapping)."""
    opset = ml_opset(ctx)
    if opset < 2:
        raise Unsupported("LabelEncoder-1 (classes_strings) is not supported")
    keys, values = _mapping_table(ctx, "keys"), _mapping_table(ctx, "values")
    if len(keys) != len(values):
        raise Unsupported(f"{len(keys)} keys but {len(values)} values")
    default = _tensor_attr(ctx, "default_tensor")
    string_default = ctx.attr("default_string", "_Unused")
    if default is not None:
        default = default.reshape(-1)[0]
    elif isinstance(values, list):
        default = string_default
    elif values.dtype == np.int64:
        default = ctx.attr("default_int64", -1)
    else:
        default = ctx.attr("default_float", -0.0)
    return mapping(ctx, keys, values, default, nan_matches=opset >= 4)


@converter("CategoryMapper", domain=ML)
def category_mapper(ctx: NodeContext) -> ConverterResult:
    """int64 -> string by the paired cats_int64s/cats_strings, or string -> int64."""
    ints = np.asarray(ctx.attr("cats_int64s") or [], np.int64)
    strings = list(ctx.attr("cats_strings") or [])
    if len(ints) != len(strings):
        raise Unsupported(f"{len(ints)} cats_int64s but {len(strings)} cats_strings")
    default_string = ctx.attr("default_string", "_Unused")
    default_int = ctx.attr("default_int64", -1)
    if isinstance(ctx.any(0), StringsValue):
        return mapping(ctx, strings, ints, default_int)
    return mapping(ctx, ints, strings, default_string)


def _same(keys: np.ndarray, k: object) -> np.ndarray:
    if isinstance(k, float | np.floating) and np.isnan(k):
        return np.isnan(keys)
    return keys == k


# ---------------------------------------------------------------------------------
# Linear models
# ---------------------------------------------------------------------------------


@converter("LinearRegressor", domain=ML)
def linear_regressor(ctx: NodeContext) -> ConverterResult:
    targets = int(ctx.attr("targets", 1))
    coefficients = floats(ctx, "coefficients", required=True)
    intercepts = floats(ctx, "intercepts")
    post = ctx.attr("post_transform", "NONE")
    x = ml_input(ctx)
    bias = intercepts if intercepts is not None and intercepts.size == targets else None
    return post_transform(ctx, linear_scores(ctx, x, coefficients, targets, bias), post)


@converter("LinearClassifier", domain=ML)
def linear_classifier(ctx: NodeContext) -> ConverterResult:
    """Scores x @ W.T + b and the label of the best raw score (one score: by its sign),
    as ``mir.linear_classifier``."""
    coefficients = floats(ctx, "coefficients", required=True)
    intercepts = floats(ctx, "intercepts")
    labels = class_labels(ctx, "classlabels_ints")
    post = transform(ctx.attr("post_transform", "NONE"))
    ctx.attr("multi_class")  # onnxruntime does not read it
    x = ml_input(ctx)
    rows = intercepts.size if intercepts is not None else len(labels)
    if rows == 0:
        raise Unsupported("no intercepts and no class labels: the class count is unknown")
    weights = coefficient_rows(x, coefficients, rows)
    if rows == 1:
        if len(labels) != 2:
            raise Unsupported(f"one score needs 2 class labels, got {len(labels)}")
        if post is PostTransform.PROBIT:
            raise Unsupported("PROBIT on a single binary score (onnxruntime leaves a score unset)")
    elif len(labels) < rows:
        raise Unsupported(f"{len(labels)} class labels for {rows} scores")
    op = mir.LinearClassifierOp(
        x, weights, None if intercepts is None else intercepts.tolist(), post.value,
        int_labels(labels),
    )  # fmt: skip
    label, scores = ctx.b.emit(op).results
    return labels_result(label, labels), scores


# ---------------------------------------------------------------------------------
# Support vector machines
# ---------------------------------------------------------------------------------


def _kernel_props(ctx: NodeContext, x: SSAValue) -> dict[str, Any]:
    """The kernel of an SVM op: its kind, parameters and support vectors (rows of the
    input's features)."""
    kind = ctx.check_attr("kernel_type", ("LINEAR", "POLY", "RBF", "SIGMOID"), "LINEAR")
    params = floats(ctx, "kernel_params")
    gamma, coef0, degree = (
        (float(v) for v in params[:3])
        if params is not None and params.size >= 3
        else (0.0, 0.0, 0.0)
    )
    vectors = floats(ctx, "support_vectors")
    features = type_of(x).shape[1]
    size = 0 if vectors is None else vectors.size
    if not isinstance(features, int) or not features or not size or size % features:
        raise Unsupported(f"{size} support vector values are not rows of {features}")
    assert vectors is not None
    return {"vectors": vectors.reshape(-1, features), "kernel": kind.lower(), "gamma": gamma,
            "coef0": coef0, "degree": degree}  # fmt: skip


@converter("SVMRegressor", domain=ML)
def svm_regressor(ctx: NodeContext) -> ConverterResult:
    """kernel(x, support vectors) @ coefficients + rho (one_class: its sign as ±1), as
    ``mir.svm_regressor``; without support vectors a linear model. onnxruntime ignores
    post_transform; so does this."""
    b = ctx.b
    x = ml_input(ctx)
    supports = int(ctx.attr("n_supports", 0))
    coefficients = floats(ctx, "coefficients", required=True)
    rho = floats(ctx, "rho", required=True)
    one_class = bool(ctx.attr("one_class", 0))
    ctx.check_attr("post_transform", POST_TRANSFORMS, "NONE")
    if supports > 0:
        kernel = _kernel_props(ctx, x)
        if coefficients.size < supports or len(kernel["vectors"]) != supports:
            raise Unsupported("support_vectors and one coefficient per support are needed")
        op = mir.SvmRegressorOp(x, coefficients=coefficients[:supports].tolist(),
                                rho=float(rho[0]), one_class=one_class, **kernel)  # fmt: skip
        return b.emit(op).results[0]
    ctx.attr("support_vectors")
    ctx.attr("kernel_type")
    ctx.attr("kernel_params")
    y = linear_scores(ctx, x, coefficients, 1, float(rho[0]))
    if one_class:
        y = b.where(b.compare("gt", y, 0.0), ctx.full(type_of(y).shape, 1.0, DType.F32), -1.0)
    return y


@converter("SVMClassifier", domain=ML)
def svm_classifier(ctx: NodeContext) -> ConverterResult:
    """libsvm's one-vs-one decision values and votes (the label: most votes), with
    prob_a/prob_b the pairwise-coupled probabilities, as ``mir.svm_classifier``; without
    support vectors a linear model."""
    b = ctx.b
    x = ml_input(ctx)
    batch = type_of(x).shape[0]
    labels = class_labels(ctx, "classlabels_ints")
    classes = len(labels)
    coefficients = floats(ctx, "coefficients", required=True)
    rho = floats(ctx, "rho", required=True)
    per_class = [int(v) for v in ctx.attr("vectors_per_class") or []]
    prob_a, prob_b = floats(ctx, "prob_a"), floats(ctx, "prob_b")
    post = ctx.attr("post_transform", "NONE")
    have_proba = prob_a is not None and prob_a.size > 0
    if classes < 2:
        raise Unsupported(f"{classes} class label(s): at least 2 are needed")
    if sum(per_class) == 0:  # liblinear: one row of coefficients per class
        ctx.attr("support_vectors")
        ctx.attr("kernel_type")
        ctx.attr("kernel_params")
        scores = linear_scores(ctx, x, coefficients, classes, float(rho[0]))
        best = argmax(ctx, scores)
        if classes == 2 and not have_proba:
            top = b.reduce("max", scores, -1)
            positive = bool(np.all(coefficients >= 0))
            wins = b.compare("ge", top, 0.5) if positive else b.compare("gt", top, 0.0)
            best = b.where(wins, ctx.full([batch], 1, DType.I64), best)
        return labels_at(ctx, best, labels), post_transform(ctx, scores, post)
    if len(per_class) != classes:
        raise Unsupported("vectors_per_class must give one count per class label")
    kernel = _kernel_props(ctx, x)
    count = sum(per_class)
    pairs = [(i, j) for i in range(classes) for j in range(i + 1, classes)]
    if coefficients.size < (classes - 1) * count or rho.size < len(pairs):
        raise Unsupported("too few coefficients or rho values for the classes and supports")
    if len(kernel["vectors"]) != count:
        raise Unsupported(f"{len(kernel['vectors'])} support vectors for {count} supports")
    coef = coefficients[: (classes - 1) * count].reshape(classes - 1, count)
    starts = np.cumsum([0, *per_class])
    # Decision value of pair (i, j): class i's supports weighted by row j-1, class j's by
    # row i: a [supports, pairs] table.
    table = np.zeros((count, len(pairs)), np.float32)
    for p, (i, j) in enumerate(pairs):
        table[starts[i] : starts[i + 1], p] = coef[j - 1, starts[i] : starts[i + 1]]
        table[starts[j] : starts[j + 1], p] = coef[i, starts[j] : starts[j + 1]]
    kind = transform(post)
    if have_proba:
        assert prob_a is not None
        if prob_b is None or prob_a.size < len(pairs) or prob_b.size < len(pairs):
            raise Unsupported("prob_a and prob_b need one value per pair of classes")
        probabilities = prob_a[: len(pairs)].tolist(), prob_b[: len(pairs)].tolist()
    elif classes == 2 and kind is PostTransform.PROBIT:
        raise Unsupported("PROBIT on a single binary score (onnxruntime leaves a score unset)")
    op = mir.SvmClassifierOp(
        x, coefficients=table, rho=rho[: len(pairs)].tolist(),
        prob_a=probabilities[0] if have_proba else None,
        prob_b=probabilities[1] if have_proba else None, post_transform=kind.value,
        class_labels=int_labels(labels), **kernel,
    )  # fmt: skip
    label, scores = b.emit(op).results
    return labels_result(label, labels), scores


# ---------------------------------------------------------------------------------
# ZipMap
# ---------------------------------------------------------------------------------


@converter("ZipMap", domain=ML)
def zip_map(ctx: NodeContext) -> ConverterResult:
    """One {class label: probability} map per row: the probability tensor itself, with
    its keys (the backend builds the dicts)."""
    x = ctx.x(0)
    t = type_of(x)
    ints, strings = ctx.attr("classlabels_int64s"), ctx.attr("classlabels_strings")
    if (ints is None) == (strings is None):
        raise Unsupported("exactly one of classlabels_int64s and classlabels_strings is needed")
    keys = tuple(int(v) for v in ints) if ints is not None else tuple(strings)
    if t.rank != 2 or t.shape[1] != len(keys):
        raise Unsupported(f"input of shape {list(t.shape)} for {len(keys)} labels")
    if t.dtype is not DType.F32:
        raise Unsupported(f"{t.dtype.value} probabilities (float expected)")
    return ZipMapValue(x, keys)
