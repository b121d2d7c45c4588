/* Classic-ML models (mir.tree_ensemble, mir.svm_classifier, ...): plain loops over a
 * model's tables, which come as constant arrays (int64 and double). f32 and f64 only:
 * the element types onnxruntime's kernels take. Scores accumulate in the element type in
 * the reference executor's order (trees in order, each leaf's entries in order), so the
 * tree ensembles' sums are the reference's bits; dot products and transcendentals
 * differ by summation order and libm's last bit. */
#include "rlx_scalar.h"

/* Post transforms along a row of n (interpreter/ml.py's post_transform). */
#define RLX_ML_SCALARS(sfx, T, CF)                                                      \
    static void rlx_ml_probit_##CF(T *y, int64_t n) {                                  \
        int64_t i;                                                                      \
        for (i = 0; i < n; i++) {                                                       \
            T x = y[i] * (T)2.0 - (T)1.0;                                               \
            T sign = x < (T)0.0 ? (T)-1.0 : (T)1.0;                                     \
            T lg = rlx_s_log_##CF(((T)1.0 - x) * ((T)1.0 + x));                         \
            T a = lg * (T)0.5 + (T)(2.0 / (3.14159 * 0.147));                           \
            T root = rlx_s_sqrt_##CF(a * a - lg * (T)(1.0 / 0.147));                    \
            y[i] = sign * rlx_s_sqrt_##CF(root - a) * (T)(float)1.41421356;             \
        }                                                                               \
    }                                                                                   \
    static void rlx_ml_post_##CF(T *y, int64_t n, int64_t kind) {                      \
        int64_t i;                                                                      \
        T top, total;                                                                   \
        switch (kind) {                                                                 \
        case 1: /* logistic */                                                          \
            for (i = 0; i < n; i++) y[i] = rlx_s_sigmoid_##CF(y[i]);                    \
            return;                                                                     \
        case 2: /* softmax */                                                           \
            rlx_softmax_##sfx(1, n, 1, y, y);                                           \
            return;                                                                     \
        case 3: /* softmax_zero: scores within 1e-7 of 0 take no part */               \
            if (n == 0) return;                                                         \
            top = y[0];                                                                 \
            for (i = 1; i < n; i++) top = (y[i] > top || y[i] != y[i]) ? y[i] : top;    \
            total = 0;                                                                  \
            for (i = 0; i < n; i++) {                                                   \
                int zero = rlx_s_abs_##CF(y[i]) <= (T)1e-7;                             \
                y[i] = zero ? y[i] * rlx_s_exp_##CF(-top) : rlx_s_exp_##CF(y[i] - top); \
                total += zero ? (T)0 : y[i];                                            \
            }                                                                           \
            for (i = 0; i < n; i++) y[i] = y[i] / total;                                \
            return;                                                                     \
        case 4:                                                                         \
            rlx_ml_probit_##CF(y, n);                                                  \
            return;                                                                     \
        default:                                                                        \
            return;                                                                     \
        }                                                                               \
    }                                                                                   \
    /* onnxruntime's two scores from one: [-s, s] (negate), else [1 - t, t] with t the  \
     * logistic of s under logistic (kind 1), s itself otherwise */                     \
    static void rlx_ml_pair_##CF(T *out, T s, int64_t kind, int negate) {              \
        if (negate) {                                                                   \
            out[0] = -s;                                                                \
            out[1] = s;                                                                 \
            return;                                                                     \
        }                                                                               \
        if (kind == 1) s = rlx_s_sigmoid_##CF(s);                                       \
        out[0] = (T)1.0 - s;                                                            \
        out[1] = s;                                                                     \
    }
RLX_ML_SCALARS(f32, float, f)
RLX_ML_SCALARS(f64, double, d)

/* ---- tree ensembles --------------------------------------------------------------- */
#define RLX_TREES(sfx, TX, T, CF)                                                           \
    /* The leaf one tree gives a sample (row): the walk from `node` (a branch index, or \
     * -1 - leaf) to a leaf. */                                                         \
    static int64_t rlx_tree_leaf_##sfx(const TX *row, int64_t node, const int64_t *feat, \
                                       const int64_t *modes, const double *splits,      \
                                       const int64_t *tnext, const int64_t *fnext,      \
                                       const int64_t *missing, const int64_t *mstarts,  \
                                       const double *mvalues) {                         \
        while (node >= 0) {                                                             \
            TX v = row[feat[node]], s = (TX)splits[node];                                 \
            int hold = 0;                                                               \
            int64_t j;                                                                  \
            switch (modes[node]) {                                                      \
            case 0: hold = v <= s; break;                                               \
            case 1: hold = v < s; break;                                                \
            case 2: hold = v >= s; break;                                               \
            case 3: hold = v > s; break;                                                \
            case 4: hold = v == s; break;                                               \
            case 5: hold = v != s; break;                                               \
            default:                                                                    \
                for (j = mstarts[node]; j < mstarts[node + 1] && !hold; j++)             \
                    hold = v == (TX)mvalues[j];                                          \
            }                                                                           \
            if (missing && missing[node] == 1 && v != v) hold = 1;                      \
            node = hold ? tnext[node] : fnext[node];                                    \
        }                                                                               \
        return -1 - node;                                                               \
    }                                                                                   \
    /* acc/has [outputs]: the weights of the leaves the trees give `row`, combined by  \
     * aggregate (0 sum, 1 average, 2 min, 3 max; average sums here). */                \
    static void rlx_tree_scores_##sfx(T *acc, unsigned char *has, int64_t outputs,      \
                                      const TX *row, int64_t trees, const int64_t *roots, \
                                      const int64_t *feat, const int64_t *modes,         \
                                      const double *splits, const int64_t *tnext,        \
                                      const int64_t *fnext, const int64_t *missing,      \
                                      const int64_t *mstarts, const double *mvalues,     \
                                      const int64_t *lstarts, const int64_t *ltargets,   \
                                      const double *lweights, int64_t aggregate) {       \
        int64_t t, e, k;                                                                \
        for (k = 0; k < outputs; k++) {                                                 \
            acc[k] = 0;                                                                 \
            has[k] = 0;                                                                 \
        }                                                                               \
        for (t = 0; t < trees; t++) {                                                   \
            int64_t leaf = rlx_tree_leaf_##sfx(row, roots[t], feat, modes, splits, tnext, \
                                               fnext, missing, mstarts, mvalues);        \
            for (e = lstarts[leaf]; e < lstarts[leaf + 1]; e++) {                       \
                T w = (T)lweights[e];                                                   \
                k = ltargets[e];                                                        \
                if (aggregate == 2)                                                     \
                    acc[k] = (has[k] && !(w < acc[k])) ? acc[k] : w;                    \
                else if (aggregate == 3)                                                \
                    acc[k] = (has[k] && !(w > acc[k])) ? acc[k] : w;                    \
                else                                                                    \
                    acc[k] = acc[k] + w;                                                \
                has[k] = 1;                                                             \
            }                                                                           \
        }                                                                               \
    }                                                                                   \
    int rlx_tree_ensemble_##sfx(int64_t batch, int64_t features, int64_t trees,          \
                                int64_t outputs, void *y, const void *x,                 \
                                const int64_t *roots, const int64_t *feat,               \
                                const int64_t *modes, const double *splits,              \
                                const int64_t *tnext, const int64_t *fnext,              \
                                const int64_t *missing, const int64_t *mstarts,          \
                                const double *mvalues, const int64_t *lstarts,           \
                                const int64_t *ltargets, const double *lweights,         \
                                int64_t aggregate, const double *base, double fill,      \
                                int64_t post, void *scratch) {                           \
        const TX *px = (const TX *)x;                                                   \
        T *py = (T *)y;                                                                 \
        unsigned char *has = (unsigned char *)scratch;                                  \
        int64_t s, k;                                                                   \
        for (s = 0; s < batch; s++) {                                                   \
            T *acc = py + s * outputs;                                                  \
            rlx_tree_scores_##sfx(acc, has, outputs, px + s * features, trees, roots,    \
                                  feat, modes, splits, tnext, fnext, missing, mstarts,   \
                                  mvalues, lstarts, ltargets, lweights, aggregate);      \
            for (k = 0; k < outputs; k++) {                                             \
                T v = acc[k];                                                           \
                if (aggregate == 1) v = v / (T)trees;                                   \
                if (base) v = v + (T)base[k];                                           \
                acc[k] = has[k] ? v : (T)fill;                                          \
            }                                                                           \
            rlx_ml_post_##CF(acc, outputs, post);                                      \
        }                                                                               \
        return 0;                                                                       \
    }                                                                                   \
    /* onnxruntime's TreeEnsembleClassifier (mir.tree_ensemble_classifier); one_class: \
     * the leaves weigh one class only; positive: every weight >= 0. */                 \
    int rlx_tree_classifier_##sfx(int64_t batch, int64_t features, int64_t trees,        \
                                  int64_t classes, void *label, void *scores,            \
                                  const void *x, const int64_t *roots,                   \
                                  const int64_t *feat, const int64_t *modes,             \
                                  const double *splits, const int64_t *tnext,            \
                                  const int64_t *fnext, const int64_t *missing,          \
                                  const int64_t *mstarts, const double *mvalues,         \
                                  const int64_t *lstarts, const int64_t *ltargets,       \
                                  const double *lweights, const double *base,            \
                                  int64_t nbase, int64_t post, const int64_t *labels,    \
                                  int64_t one_class, int64_t positive, void *scratch) {  \
        const TX *px = (const TX *)x;                                                   \
        T *py = (T *)scores;                                                            \
        int64_t *pl = (int64_t *)label;                                                 \
        unsigned char *has = (unsigned char *)scratch;                                  \
        int64_t s, k;                                                                   \
        for (s = 0; s < batch; s++) {                                                   \
            T *acc = py + s * classes;                                                  \
            int64_t best = 0;                                                           \
            rlx_tree_scores_##sfx(acc, has, classes, px + s * features, trees, roots,    \
                                  feat, modes, splits, tnext, fnext, missing, mstarts,   \
                                  mvalues, lstarts, ltargets, lweights, 0);              \
            if (classes > 2) {                                                          \
                T top = -(T)INFINITY;                                                   \
                for (k = 0; k < nbase; k++) {                                           \
                    acc[k] = acc[k] + (T)base[k];                                       \
                    has[k] = 1;                                                         \
                }                                                                       \
                /* np.argmax of the counting scores (-inf elsewhere): the first max,    \
                 * a NaN counting as one */                                             \
                for (k = 0; k < classes; k++) {                                         \
                    T m = has[k] ? acc[k] : -(T)INFINITY;                               \
                    if (top == top && (m > top || m != m)) {                            \
                        best = k;                                                       \
                        top = m;                                                        \
                    }                                                                   \
                }                                                                       \
                pl[s] = labels ? labels[best] : best;                                   \
                rlx_ml_post_##CF(acc, classes, post);                                  \
            } else {                                                                    \
                T s0 = acc[0], s1 = acc[1], v0, v1, score;                              \
                int h0 = has[0], h1 = has[1], two = h1, win;                            \
                if (nbase == 2) {                                                       \
                    T shifted = s0 + (T)base[1];                                        \
                    s0 = h1 ? -shifted : s0 + (T)base[0];                               \
                    s1 = h1 ? shifted : s1 + (T)base[1];                                \
                    two = 1;                                                            \
                } else if (nbase == 1) {                                                \
                    s0 = s0 + (T)base[0];                                               \
                }                                                                       \
                v0 = h0 ? s0 : (T)0;                                                    \
                v1 = h1 ? s1 : (T)0;                                                    \
                score = (two && h1) ? s1 : v0;                                          \
                win = score > (one_class && positive ? (T)0.5 : (T)0);                  \
                pl[s] = one_class && labels ? labels[win] : win;                        \
                if (two) {                                                              \
                    acc[0] = v0;                                                        \
                    acc[1] = v1;                                                        \
                    rlx_ml_post_##CF(acc, 2, post);                                    \
                } else if (one_class && positive) {                                     \
                    acc[0] = (T)1.0 - v0;                                               \
                    acc[1] = v0;                                                        \
                } else if (post == 1) {                                                 \
                    acc[0] = rlx_s_sigmoid_##CF(-v0);                                   \
                    acc[1] = rlx_s_sigmoid_##CF(v0);                                    \
                } else {                                                                \
                    acc[0] = -v0;                                                       \
                    acc[1] = v0;                                                        \
                }                                                                       \
            }                                                                           \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_TREES(f32, float, float, f)
RLX_TREES(f64, double, double, d)
/* a double input compared with float thresholds: float scores */
RLX_TREES(f64_f32, double, float, f)

/* ---- support vector machines ------------------------------------------------------ */
#define RLX_SVM(sfx, T, CF)                                                             \
    /* k [count]: the kernel of the sample and each support vector (kind 0 linear,     \
     * 1 poly, 2 rbf, 3 sigmoid). */                                                    \
    static void rlx_svm_kernel_##sfx(T *k, const T *row, int64_t features, int64_t count, \
                                     const double *vectors, int64_t kind, double gamma,  \
                                     double coef0, double degree) {                      \
        int64_t v, f;                                                                   \
        for (v = 0; v < count; v++) {                                                   \
            const double *sv = vectors + v * features;                                  \
            T d = 0;                                                                    \
            if (kind == 2) {                                                            \
                for (f = 0; f < features; f++) {                                        \
                    T diff = row[f] - (T)sv[f];                                         \
                    d += diff * diff;                                                   \
                }                                                                       \
                k[v] = rlx_s_exp_##CF(d * (T)(-gamma));                                 \
                continue;                                                               \
            }                                                                           \
            for (f = 0; f < features; f++) d += row[f] * (T)sv[f];                      \
            if (kind != 0) d = d * (T)gamma + (T)coef0;                                 \
            if (kind == 3)                                                              \
                d = rlx_s_tanh_##CF(d);                                                 \
            else if (kind == 1) {                                                       \
                int e = 0;                                                              \
                d = degree == 2 ? d * d                                                 \
                    : degree == 3 ? d * d * d                                           \
                    : rlx_s_pow_##CF(d, (T)degree, &e);                                 \
            }                                                                           \
            k[v] = d;                                                                   \
        }                                                                               \
    }                                                                                   \
    int rlx_svm_regressor_##sfx(int64_t batch, int64_t features, int64_t count, void *y, \
                                const void *x, const double *vectors, int64_t kind,      \
                                double gamma, double coef0, double degree,               \
                                const double *coefficients, double rho,                  \
                                int64_t one_class, void *scratch) {                      \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y, *k = (T *)scratch;                                              \
        int64_t s, v;                                                                   \
        for (s = 0; s < batch; s++) {                                                   \
            T acc = 0;                                                                  \
            rlx_svm_kernel_##sfx(k, px + s * features, features, count, vectors, kind,   \
                                 gamma, coef0, degree);                                  \
            for (v = 0; v < count; v++) acc += k[v] * (T)coefficients[v];               \
            acc = acc + (T)rho;                                                         \
            py[s] = one_class ? (acc > (T)0 ? (T)1.0 : (T)-1.0) : acc;                  \
        }                                                                               \
        return 0;                                                                       \
    }                                                                                   \
    /* libsvm's one-vs-one (mir.svm_classifier): table [count, pairs]; prob_a/prob_b   \
     * NULL without probabilities. Scratch: count + pairs + 2 c² + 2c elements. */     \
    int rlx_svm_classifier_##sfx(int64_t batch, int64_t features, int64_t count,         \
                                 int64_t classes, int64_t width, void *label,            \
                                 void *scores, const void *x, const double *vectors,     \
                                 int64_t kind, double gamma, double coef0, double degree, \
                                 const double *table, const double *rho,                 \
                                 const double *prob_a, const double *prob_b, int64_t post, \
                                 const int64_t *labels, void *scratch) {                 \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)scores, *k = (T *)scratch;                                         \
        int64_t pairs = classes * (classes - 1) / 2;                                    \
        T *d = k + count, *r = d + pairs, *work = r + classes * classes;                \
        int64_t *pl = (int64_t *)label;                                                 \
        int64_t s, v, p, i, j;                                                          \
        for (s = 0; s < batch; s++) {                                                   \
            T *out = py + s * width;                                                    \
            int64_t best = 0, most = -1;                                                \
            rlx_svm_kernel_##sfx(k, px + s * features, features, count, vectors, kind,   \
                                 gamma, coef0, degree);                                  \
            for (p = 0; p < pairs; p++) {                                               \
                T acc = 0;                                                              \
                for (v = 0; v < count; v++) acc += k[v] * (T)table[v * pairs + p];      \
                d[p] = acc + (T)rho[p];                                                 \
            }                                                                           \
            for (i = 0; i < classes; i++) {                                             \
                int64_t votes = 0;                                                      \
                p = 0;                                                                  \
                for (int64_t a = 0; a < classes; a++)                                   \
                    for (int64_t b = a + 1; b < classes; b++, p++)                      \
                        votes += (a == i && d[p] > 0) || (b == i && !(d[p] > 0));       \
                if (votes > most) {                                                     \
                    most = votes;                                                       \
                    best = i;                                                           \
                }                                                                       \
            }                                                                           \
            pl[s] = labels ? labels[best] : best;                                       \
            if (prob_a) {                                                               \
                p = 0;                                                                  \
                for (i = 0; i < classes; i++) {                                         \
                    r[i * classes + i] = 0;                                             \
                    for (j = i + 1; j < classes; j++, p++) {                            \
                        T t = rlx_s_sigmoid_##CF(d[p] * (T)prob_a[p] + (T)prob_b[p]);   \
                        t = (T)1.0 - t;                                                 \
                        t = t > (T)1e-7 || t != t ? t : (T)1e-7;                        \
                        t = t < (T)(1.0 - 1e-7) || t != t ? t : (T)(1.0 - 1e-7);        \
                        r[i * classes + j] = t;                                         \
                        r[j * classes + i] = (T)1.0 - t;                                \
                    }                                                                   \
                }                                                                       \
                rlx_pairwise_coupling_##sfx(1, classes, out, r, work);                  \
                rlx_ml_post_##CF(out, classes, post);                                  \
            } else if (classes == 2) {                                                  \
                rlx_ml_pair_##CF(out, d[0], post, post == 0);                          \
            } else {                                                                    \
                for (p = 0; p < pairs; p++) out[p] = d[p];                              \
                rlx_ml_post_##CF(out, pairs, post);                                    \
            }                                                                           \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_SVM(f32, float, f)
RLX_SVM(f64, double, d)

/* ---- linear classifier, normalizer ------------------------------------------------ */
#define RLX_LINEAR(sfx, T, CF)                                                          \
    int rlx_linear_classifier_##sfx(int64_t batch, int64_t features, int64_t rows,       \
                                    void *label, void *scores, const void *x,            \
                                    const double *weights, const double *intercepts,     \
                                    int64_t post, const int64_t *labels) {               \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)scores;                                                            \
        int64_t *pl = (int64_t *)label;                                                 \
        int64_t s, r, f;                                                                \
        for (s = 0; s < batch; s++) {                                                   \
            const T *row = px + s * features;                                           \
            T *out = py + s * (rows > 1 ? rows : 2);                                    \
            int64_t best = 0;                                                           \
            for (r = 0; r < rows; r++) {                                                \
                T acc = 0;                                                              \
                for (f = 0; f < features; f++) acc += row[f] * (T)weights[r * features + f]; \
                out[r] = intercepts ? acc + (T)intercepts[r] : acc;                     \
            }                                                                           \
            if (rows == 1) {                                                            \
                int64_t win = out[0] > (T)0;                                            \
                pl[s] = labels ? labels[win] : win;                                     \
                rlx_ml_pair_##CF(out, out[0], post, 0);                                \
                continue;                                                               \
            }                                                                           \
            for (r = 1; r < rows; r++)                                                  \
                if (out[r] > out[best] || (out[r] != out[r] && out[best] == out[best])) \
                    best = r;                                                           \
            pl[s] = labels ? labels[best] : best;                                       \
            rlx_ml_post_##CF(out, rows, post);                                         \
        }                                                                               \
        return 0;                                                                       \
    }                                                                                   \
    /* norm 0 max, 1 l1, 2 l2 (a row whose norm is 0 stays) */                          \
    int rlx_normalizer_##sfx(int64_t rows, int64_t n, void *y, const void *x, int64_t norm) { \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        int64_t r, i;                                                                   \
        for (r = 0; r < rows; r++) {                                                    \
            const T *row = px + r * n;                                                  \
            T *out = py + r * n;                                                        \
            T z = norm == 0 && n ? row[0] : (T)0;                                       \
            for (i = 0; i < n; i++) {                                                   \
                if (norm == 0)                                                          \
                    z = (row[i] > z || row[i] != row[i]) ? row[i] : z;                  \
                else                                                                    \
                    z += norm == 1 ? rlx_s_abs_##CF(row[i]) : row[i] * row[i];          \
            }                                                                           \
            for (i = 0; i < n; i++) {                                                   \
                T v = row[i];                                                           \
                if (!(z != (T)0)) {                                                     \
                    out[i] = v;                                                         \
                } else if (norm == 2) {                                                 \
                    T root = rlx_s_sqrt_##CF(v * v / z);                                \
                    out[i] = v < (T)0 ? -root : root;                                   \
                } else {                                                                \
                    out[i] = v / z;                                                     \
                }                                                                       \
            }                                                                           \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_LINEAR(f32, float, f)
RLX_LINEAR(f64, double, d)

/* ---- preprocessing: rows of n features; a table of one value or one per feature ---- */
#define RLX_PREPROCESS(sfx, T, CF)                                                      \
    int rlx_scaler_##sfx(int64_t count, int64_t n, void *y, const void *x,               \
                         const double *offset, int64_t noffset, const double *scale,     \
                         int64_t nscale) {                                               \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        int64_t i;                                                                      \
        for (i = 0; i < count; i++) {                                                   \
            int64_t j = n ? i % n : 0;                                                  \
            T o = (T)offset[noffset > 1 ? j : 0], s = (T)scale[nscale > 1 ? j : 0];     \
            py[i] = (px[i] - o) * s;                                                    \
        }                                                                               \
        return 0;                                                                       \
    }                                                                                   \
    int rlx_binarizer_##sfx(int64_t count, void *y, const void *x, double threshold) {   \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y, t = (T)threshold;                                               \
        int64_t i;                                                                      \
        for (i = 0; i < count; i++) py[i] = px[i] > t ? (T)1 : (T)0;                    \
        return 0;                                                                       \
    }                                                                                   \
    /* replaced NaN: every NaN is replaced */                                           \
    int rlx_imputer_##sfx(int64_t count, int64_t n, void *y, const void *x,              \
                          const double *imputed, int64_t nimputed, double replaced) {    \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y, r = (T)replaced;                                                \
        int64_t i;                                                                      \
        for (i = 0; i < count; i++) {                                                   \
            int hit = replaced != replaced ? px[i] != px[i] : px[i] == r;               \
            py[i] = hit ? (T)imputed[nimputed > 1 && n ? i % n : 0] : px[i];            \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_PREPROCESS(f32, float, f)
RLX_PREPROCESS(f64, double, d)

/* y [rows, ncats] f32 from x [rows, ncols] i64: column j is encoded over the categories
 * [starts[j], starts[j + 1]) (starts NULL: one column over all ncats), 1 at the last
 * category equal to its value, 0 elsewhere. */
int rlx_one_hot_encoder(int64_t rows, int64_t ncols, int64_t ncats, void *y, const void *x,
                        const int64_t *starts, const int64_t *categories) {
    const int64_t *px = (const int64_t *)x;
    float *py = (float *)y;
    int64_t i, j, c;
    for (i = 0; i < rows; i++) {
        float *row = py + i * ncats;
        for (j = 0; j < ncols; j++) {
            int64_t lo = starts ? starts[j] : 0, hi = starts ? starts[j + 1] : ncats;
            int64_t value = px[i * ncols + j], hit = -1;
            for (c = lo; c < hi; c++) {
                row[c] = 0.0f;
                if (categories[c] == value) hit = c;
            }
            if (hit >= 0) row[hit] = 1.0f;
        }
    }
    return 0;
}

/* ---- label encoder ---------------------------------------------------------------- */
/* Element types by their position in RLX_ALL_TYPES (f32 f64 f16 bf16 i8 i16 i32 i64 u8
 * u16 u32 u64 b); the input and result are f32/f64 or an integer type. */
static double rlx_ml_load_f(const void *x, int64_t code, int64_t i) {
    return code == 0 ? (double)((const float *)x)[i] : ((const double *)x)[i];
}

static int64_t rlx_ml_load_i(const void *x, int64_t code, int64_t i) {
    switch (code) {
    case 4: return ((const int8_t *)x)[i];
    case 5: return ((const int16_t *)x)[i];
    case 6: return ((const int32_t *)x)[i];
    case 8: return ((const uint8_t *)x)[i];
    case 9: return ((const uint16_t *)x)[i];
    case 10: return ((const uint32_t *)x)[i];
    case 11: return (int64_t)((const uint64_t *)x)[i];
    default: return ((const int64_t *)x)[i];
    }
}

static void rlx_ml_store(void *y, int64_t code, int64_t i, const void *values, int64_t k) {
    double f = code <= 1 ? ((const double *)values)[k] : 0;
    int64_t v = code <= 1 ? 0 : ((const int64_t *)values)[k];
    switch (code) {
    case 0: ((float *)y)[i] = (float)f; break;
    case 1: ((double *)y)[i] = f; break;
    case 4: ((int8_t *)y)[i] = (int8_t)v; break;
    case 5: ((int16_t *)y)[i] = (int16_t)v; break;
    case 6: ((int32_t *)y)[i] = (int32_t)v; break;
    case 8: ((uint8_t *)y)[i] = (uint8_t)v; break;
    case 9: ((uint16_t *)y)[i] = (uint16_t)v; break;
    case 10: ((uint32_t *)y)[i] = (uint32_t)v; break;
    case 11: ((uint64_t *)y)[i] = (uint64_t)v; break;
    default: ((int64_t *)y)[i] = v; break;
    }
}

/* keys: double (float inputs, compared in the input's type) or int64; values: double
 * (float results) or int64, the default last. */
int rlx_label_encoder(int64_t n, int64_t x_code, int64_t y_code, void *y, const void *x,
                      const void *keys, int64_t nkeys, const void *values,
                      int64_t nan_matches) {
    int64_t i, k;
    for (i = 0; i < n; i++) {
        k = 0;
        if (x_code <= 1) {
            double v = rlx_ml_load_f(x, x_code, i);
            const double *fk = (const double *)keys;
            for (; k < nkeys; k++) {
                double key = x_code == 0 ? (double)(float)fk[k] : fk[k];
                if (v == key || (nan_matches && v != v && key != key)) break;
            }
        } else {
            int64_t v = rlx_ml_load_i(x, x_code, i);
            const int64_t *ik = (const int64_t *)keys;
            for (; k < nkeys && ik[k] != v; k++) {
            }
        }
        rlx_ml_store(y, y_code, i, values, k);
    }
    return 0;
}
