/* Reductions, softmax, norms. Float sums accumulate in double (the reference sums
 * pairwise in the compute type: both stay within a few ulps of the exact sum). */
#include "rlx_scalar.h"

typedef union {
    double f;
    int64_t i;
    uint64_t u;
} rlx_acc;

/* Walk x in memory order, calling BODY with `v` = x element and `a` = its output's
 * accumulator; the last dim runs as a tight loop. */
#define RLX_REDUCE_WALK(T, INIT, BODY_ROW_REDUCED, BODY_ROW_KEPT)                             \
    int64_t ostride[RLX_MAX_RANK], xs[RLX_MAX_RANK], idx[RLX_MAX_RANK] = {0}, off[2] = {0, 0}; \
    const int64_t *st[2];                                                               \
    int64_t n_out = 1, count = 1, n, rows, r, i, k;                                     \
    int d;                                                                              \
    for (d = (int)rank - 1, k = 1; d >= 0; d--) {                                       \
        xs[d] = k;                                                                      \
        k *= shape[d];                                                                  \
        if (reduced[d]) {                                                               \
            ostride[d] = 0;                                                             \
            count *= shape[d];                                                          \
        } else {                                                                        \
            ostride[d] = n_out;                                                         \
            n_out *= shape[d];                                                          \
        }                                                                               \
    }                                                                                   \
    st[0] = xs;                                                                         \
    st[1] = ostride;                                                                    \
    n = rank ? shape[rank - 1] : 1;                                                     \
    rows = rlx_rows(rank, shape);                                                       \
    for (i = 0; i < n_out; i++) INIT;                                                   \
    for (r = 0; r < rows; r++) {                                                        \
        const T *row = px + off[0];                                                     \
        rlx_acc *arow = acc + off[1];                                                   \
        if (rank && reduced[rank - 1]) {                                                \
            BODY_ROW_REDUCED                                                            \
        } else {                                                                        \
            BODY_ROW_KEPT                                                               \
        }                                                                               \
        rlx_advance(rank, shape, idx, 2, off, st);                                      \
    }

#define RLX_FN_f(name) name##f
#define RLX_FN_d(name) name
/* x * x rounded to the element type (mir.mul's square), in the compute type */
#define RLX_SQUARE(LOAD, STORE, v) LOAD(STORE(LOAD(v) * LOAD(v)))

/* kind: 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 sum of squares, 6 l1 (Σ|x|),
 * 7 l2 (sqrt of the sum of squares, rounded to the type first), 8 log of the sum */
#define RLX_REDUCE_FLOAT(sfx, T, CT, CF, LOAD, STORE, ...)                              \
    static int rlx_reduce_f_##sfx(int64_t rank, const int64_t *shape, const int64_t *reduced, \
                                  void *y, const void *x, void *accv, int kind) {       \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        rlx_acc *acc = (rlx_acc *)accv;                                                 \
        double init = kind == 2 ? -INFINITY : kind == 3 ? INFINITY : kind == 4 ? 1.0 : 0.0; \
        RLX_REDUCE_WALK(T, acc[i].f = init,                                             \
            {                                                                           \
                double s = arow[0].f;                                                   \
                if (kind <= 1 || kind == 8) for (i = 0; i < n; i++) s += (double)LOAD(row[i]); \
                else if (kind == 2) for (i = 0; i < n; i++) s = rlx_s_max_d(s, (double)LOAD(row[i]), 0); \
                else if (kind == 3) for (i = 0; i < n; i++) s = rlx_s_min_d(s, (double)LOAD(row[i]), 0); \
                else if (kind == 4) for (i = 0; i < n; i++) s *= (double)LOAD(row[i]);  \
                else if (kind == 6) for (i = 0; i < n; i++) s += fabs((double)LOAD(row[i])); \
                else for (i = 0; i < n; i++) s += (double)RLX_SQUARE(LOAD, STORE, row[i]); \
                arow[0].f = s;                                                          \
            },                                                                          \
            {                                                                           \
                if (kind <= 1 || kind == 8) for (i = 0; i < n; i++) arow[i].f += (double)LOAD(row[i]); \
                else if (kind == 2) for (i = 0; i < n; i++) arow[i].f = rlx_s_max_d(arow[i].f, (double)LOAD(row[i]), 0); \
                else if (kind == 3) for (i = 0; i < n; i++) arow[i].f = rlx_s_min_d(arow[i].f, (double)LOAD(row[i]), 0); \
                else if (kind == 4) for (i = 0; i < n; i++) arow[i].f *= (double)LOAD(row[i]); \
                else if (kind == 6) for (i = 0; i < n; i++) arow[i].f += fabs((double)LOAD(row[i])); \
                else for (i = 0; i < n; i++) arow[i].f += (double)RLX_SQUARE(LOAD, STORE, row[i]); \
            })                                                                          \
        if (count == 0 && (kind == 2 || kind == 3)) return RLX_ERR_EMPTY;               \
        for (i = 0; i < n_out; i++) {                                                   \
            double v = kind == 1 ? acc[i].f / (double)count : acc[i].f;                 \
            if (kind == 7) py[i] = STORE(RLX_FN_##CF(sqrt)(LOAD(STORE((CT)v))));        \
            else if (kind == 8) py[i] = STORE(RLX_FN_##CF(log)(LOAD(STORE((CT)v))));    \
            else py[i] = STORE((CT)v);                                                  \
        }                                                                               \
        return 0;                                                                       \
    }                                                                                   \
    RLX_REDUCE_SIG(rlx_reduce_sum_##sfx) { return rlx_reduce_f_##sfx(rank, shape, reduced, y, x, acc, 0); } \
    RLX_REDUCE_SIG(rlx_reduce_mean_##sfx) { return rlx_reduce_f_##sfx(rank, shape, reduced, y, x, acc, 1); } \
    RLX_REDUCE_SIG(rlx_reduce_max_##sfx) { return rlx_reduce_f_##sfx(rank, shape, reduced, y, x, acc, 2); } \
    RLX_REDUCE_SIG(rlx_reduce_min_##sfx) { return rlx_reduce_f_##sfx(rank, shape, reduced, y, x, acc, 3); } \
    RLX_REDUCE_SIG(rlx_reduce_prod_##sfx) { return rlx_reduce_f_##sfx(rank, shape, reduced, y, x, acc, 4); } \
    RLX_REDUCE_SIG(rlx_reduce_sum_square_##sfx) { return rlx_reduce_f_##sfx(rank, shape, reduced, y, x, acc, 5); } \
    RLX_REDUCE_SIG(rlx_reduce_l1_##sfx) { return rlx_reduce_f_##sfx(rank, shape, reduced, y, x, acc, 6); } \
    RLX_REDUCE_SIG(rlx_reduce_l2_##sfx) { return rlx_reduce_f_##sfx(rank, shape, reduced, y, x, acc, 7); } \
    RLX_REDUCE_SIG(rlx_reduce_log_sum_##sfx) { return rlx_reduce_f_##sfx(rank, shape, reduced, y, x, acc, 8); }
RLX_FLOAT_TYPES(RLX_REDUCE_FLOAT, _)

/* Integers: sums and products wrap in 64 bits (so in the type), max/min exact, mean is
 * the 64-bit sum divided by the count, truncated. */
#define RLX_REDUCE_INT(sfx, T, UT, SG, MN, MX, ...)                                     \
    static int rlx_reduce_i_##sfx(int64_t rank, const int64_t *shape, const int64_t *reduced, \
                                  void *y, const void *x, void *accv, int kind) {       \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        rlx_acc *acc = (rlx_acc *)accv;                                                 \
        RLX_REDUCE_WALK(T, rlx_int_init_##sfx(&acc[i], kind),                           \
            {                                                                           \
                for (i = 0; i < n; i++) rlx_int_step_##sfx(&arow[0], row[i], kind);     \
            },                                                                          \
            {                                                                           \
                for (i = 0; i < n; i++) rlx_int_step_##sfx(&arow[i], row[i], kind);     \
            })                                                                          \
        if (count == 0 && kind >= 1 && kind <= 3) return kind == 1 ? RLX_ERR_DIV_ZERO : RLX_ERR_EMPTY; \
        for (i = 0; i < n_out; i++) {                                                   \
            if (kind == 1)                                                              \
                py[i] = SG ? (T)(acc[i].i / count) : (T)(acc[i].u / (uint64_t)count);   \
            else                                                                        \
                py[i] = (T)(SG ? (uint64_t)acc[i].i : acc[i].u);                        \
        }                                                                               \
        return 0;                                                                       \
    }                                                                                   \
    RLX_REDUCE_SIG(rlx_reduce_sum_##sfx) { return rlx_reduce_i_##sfx(rank, shape, reduced, y, x, acc, 0); } \
    RLX_REDUCE_SIG(rlx_reduce_mean_##sfx) { return rlx_reduce_i_##sfx(rank, shape, reduced, y, x, acc, 1); } \
    RLX_REDUCE_SIG(rlx_reduce_max_##sfx) { return rlx_reduce_i_##sfx(rank, shape, reduced, y, x, acc, 2); } \
    RLX_REDUCE_SIG(rlx_reduce_min_##sfx) { return rlx_reduce_i_##sfx(rank, shape, reduced, y, x, acc, 3); } \
    RLX_REDUCE_SIG(rlx_reduce_prod_##sfx) { return rlx_reduce_i_##sfx(rank, shape, reduced, y, x, acc, 4); } \
    RLX_REDUCE_SIG(rlx_reduce_sum_square_##sfx) { return rlx_reduce_i_##sfx(rank, shape, reduced, y, x, acc, 5); } \
    RLX_REDUCE_SIG(rlx_reduce_l1_##sfx) { return rlx_reduce_i_##sfx(rank, shape, reduced, y, x, acc, 6); }

/* kind: 0 sum, 1 mean (sum), 2 max, 3 min, 4 prod, 5 sum of squares, 6 sum of |x|
 * (|min| wraps to min, as mir.abs); sums wrap mod 2^64, so mod the type's width too;
 * signed values live in .i */
#define RLX_INT_STEP(sfx, T, UT, SG, MN, MX, ...)                                       \
    RLX_INLINE void rlx_int_init_##sfx(rlx_acc *a, int kind) {                          \
        if (kind == 2) { if (SG) a->i = (int64_t)MN; else a->u = 0; }                   \
        else if (kind == 3) { if (SG) a->i = (int64_t)MX; else a->u = (uint64_t)MX; }   \
        else a->u = kind == 4 ? 1u : 0u;                                                \
    }                                                                                   \
    RLX_INLINE void rlx_int_step_##sfx(rlx_acc *a, T v, int kind) {                     \
        if (kind <= 1) a->u += (uint64_t)v;                                             \
        else if (kind == 4) a->u *= (uint64_t)v;                                        \
        else if (kind == 5) a->u += (uint64_t)v * (uint64_t)v;                          \
        else if (kind == 6) a->u += SG && (int64_t)v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; \
        else if (SG) {                                                                  \
            if (kind == 2 ? (int64_t)v > a->i : (int64_t)v < a->i) a->i = (int64_t)v;   \
        } else {                                                                        \
            if (kind == 2 ? (uint64_t)v > a->u : (uint64_t)v < a->u) a->u = (uint64_t)v; \
        }                                                                               \
    }
RLX_INT_TYPES(RLX_INT_STEP, _)
RLX_INT_TYPES(RLX_REDUCE_INT, _)

/* ---- softmax ---------------------------------------------------------------------- */
#define RLX_SOFTMAX(sfx, T, CT, CF, LOAD, STORE, ...)                                    \
    static int rlx_softmax_any_##sfx(int64_t outer, int64_t n, int64_t inner, void *y,  \
                                     const void *x, int log_form) {                     \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        int64_t o, j, i;                                                                \
        if (inner == 1 && n > 0) { /* contiguous rows: vectorising passes */           \
            for (o = 0; o < outer; o++) {                                               \
                const T *row = px + o * n;                                              \
                T *out = py + o * n;                                                    \
                T m = rlx_row_max_##CF(row, n);                                         \
                if (log_form) {                                                         \
                    T ls = RLX_FN_##CF(log)((T)rlx_row_exp_sum_##CF(out, row, m, n));   \
                    for (i = 0; i < n; i++) out[i] = (row[i] - m) - ls;                 \
                } else {                                                                \
                    T inv = (T)rlx_row_exp_sum_##CF(out, row, m, n);                    \
                    for (i = 0; i < n; i++) out[i] = out[i] / inv;                      \
                }                                                                       \
            }                                                                           \
            return 0;                                                                   \
        }                                                                               \
        for (o = 0; o < outer; o++)                                                     \
            for (j = 0; j < inner; j++) {                                               \
                const T *row = px + o * n * inner + j;                                  \
                T *out = py + o * n * inner + j;                                        \
                CT m = -(CT)INFINITY;                                                   \
                double s = 0;                                                           \
                if (n == 0) continue;                                                   \
                for (i = 0; i < n; i++) m = rlx_s_max_##CF(m, (CT)LOAD(row[i * inner]), 0); \
                if (log_form) {                                                         \
                    CT ls;                                                              \
                    for (i = 0; i < n; i++) s += (double)rlx_s_exp_##CF((CT)LOAD(row[i * inner]) - m); \
                    ls = RLX_FN_##CF(log)((CT)s);                                       \
                    for (i = 0; i < n; i++) out[i * inner] = STORE(((CT)LOAD(row[i * inner]) - m) - ls); \
                } else {                                                                \
                    CT inv;                                                             \
                    for (i = 0; i < n; i++) {                                           \
                        CT e = rlx_s_exp_##CF((CT)LOAD(row[i * inner]) - m);          \
                        s += (double)e;                                                 \
                        out[i * inner] = STORE(e);                                      \
                    }                                                                   \
                    inv = (CT)s;                                                        \
                    for (i = 0; i < n; i++) out[i * inner] = STORE((CT)LOAD(out[i * inner]) / inv); \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }                                                                                   \
    RLX_AXIS_SIG(rlx_softmax_##sfx) { return rlx_softmax_any_##sfx(outer, n, inner, y, x, 0); } \
    RLX_AXIS_SIG(rlx_log_softmax_##sfx) { return rlx_softmax_any_##sfx(outer, n, inner, y, x, 1); }
/* f16/bf16 softmax keeps e in f32 scratch-free by recomputing: store e rounded would
 * round twice, so those types take the two-pass form below. */
RLX_SOFTMAX(f32, float, float, f, RLX_ID, RLX_ID, _)
RLX_SOFTMAX(f64, double, double, d, RLX_ID, RLX_ID, _)

#define RLX_SOFTMAX_LOW(sfx, LOAD, STORE)                                               \
    static int rlx_softmax_any_##sfx(int64_t outer, int64_t n, int64_t inner, void *y,  \
                                     const void *x, int log_form) {                     \
        const uint16_t *px = (const uint16_t *)x;                                       \
        uint16_t *py = (uint16_t *)y;                                                   \
        int64_t o, j, i;                                                                \
        for (o = 0; o < outer; o++)                                                     \
            for (j = 0; j < inner; j++) {                                               \
                const uint16_t *row = px + o * n * inner + j;                           \
                uint16_t *out = py + o * n * inner + j;                                 \
                float m = -INFINITY, ls;                                                \
                double s = 0;                                                           \
                if (n == 0) continue;                                                   \
                for (i = 0; i < n; i++) m = rlx_s_max_f(m, LOAD(row[i * inner]), 0);    \
                for (i = 0; i < n; i++) s += (double)rlx_expf(LOAD(row[i * inner]) - m);    \
                ls = log_form ? logf((float)s) : (float)s;                              \
                for (i = 0; i < n; i++) {                                               \
                    float v = LOAD(row[i * inner]) - m;                                 \
                    out[i * inner] = STORE(log_form ? v - ls : rlx_expf(v) / ls);           \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }                                                                                   \
    RLX_AXIS_SIG(rlx_softmax_##sfx) { return rlx_softmax_any_##sfx(outer, n, inner, y, x, 0); } \
    RLX_AXIS_SIG(rlx_log_softmax_##sfx) { return rlx_softmax_any_##sfx(outer, n, inner, y, x, 1); }
RLX_SOFTMAX_LOW(f16, rlx_f16_to_f32, rlx_f32_to_f16)
RLX_SOFTMAX_LOW(bf16, rlx_bf16_to_f32, rlx_f32_to_bf16)

/* log Σ exp(x) (mir.reduce_log_sum_exp): m = the max per output (NaN propagates), an
 * infinite m replaced by 0, then log(Σ exp(x - m)) + m in the compute type, the sum in
 * double. acc: two 8-byte accumulators per output element (the max, then the sum). */
#define RLX_REDUCE_LSE(sfx, T, CT, CF, LOAD, STORE, ...)                                \
    RLX_REDUCE_SIG(rlx_reduce_log_sum_exp_##sfx) {                                      \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        rlx_acc *mx = (rlx_acc *)acc, *sum;                                             \
        int64_t n_total = 1, j;                                                         \
        for (j = 0; j < rank; j++)                                                      \
            if (!reduced[j]) n_total *= shape[j];                                       \
        sum = mx + n_total;                                                             \
        {                                                                               \
            rlx_acc *acc = mx;                                                          \
            RLX_REDUCE_WALK(T, acc[i].f = -INFINITY,                                    \
                {                                                                       \
                    double s = arow[0].f;                                               \
                    for (i = 0; i < n; i++) s = rlx_s_max_d(s, (double)LOAD(row[i]), 0); \
                    arow[0].f = s;                                                      \
                },                                                                      \
                {                                                                       \
                    for (i = 0; i < n; i++) arow[i].f = rlx_s_max_d(arow[i].f, (double)LOAD(row[i]), 0); \
                })                                                                      \
            if (count == 0) return RLX_ERR_EMPTY;                                       \
            for (i = 0; i < n_out; i++)                                                 \
                if (isinf(acc[i].f)) acc[i].f = 0.0;                                    \
        }                                                                               \
        {                                                                               \
            rlx_acc *acc = sum;                                                         \
            RLX_REDUCE_WALK(T, acc[i].f = 0.0,                                          \
                {                                                                       \
                    const rlx_acc *m = mx + off[1];                                     \
                    CT mr = (CT)m[0].f;                                                 \
                    double s = arow[0].f;                                               \
                    for (i = 0; i < n; i++) s += (double)rlx_s_exp_##CF((CT)LOAD(row[i]) - mr); \
                    arow[0].f = s;                                                      \
                },                                                                      \
                {                                                                       \
                    const rlx_acc *m = mx + off[1];                                     \
                    for (i = 0; i < n; i++)                                             \
                        arow[i].f += (double)rlx_s_exp_##CF((CT)LOAD(row[i]) - (CT)m[i].f); \
                })                                                                      \
            for (i = 0; i < n_out; i++) {                                               \
                CT m = (CT)mx[i].f;                                                     \
                py[i] = STORE((CT)(RLX_FN_##CF(log)((CT)acc[i].f) + m));                \
            }                                                                           \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_FLOAT_TYPES(RLX_REDUCE_LSE, _)

/* ---- norms ------------------------------------------------------------------------ */
#define RLX_ROW_NORMS(sfx, T, CT, CF, LOAD, STORE, ...)                                      \
    RLX_NORM_SIG(rlx_layer_norm_##sfx) {                                                \
        const T *px = (const T *)x, *ps = (const T *)scale, *pb = (const T *)bias;     \
        T *py = (T *)y;                                                                 \
        int64_t r, i;                                                                   \
        for (r = 0; r < rows; r++) {                                                    \
            const T *row = px + r * n;                                                  \
            T *out = py + r * n;                                                        \
            double s = 0, v = 0;                                                        \
            CT mean, var, den;                                                          \
            for (i = 0; i < n; i++) s += (double)LOAD(row[i]);                          \
            mean = (CT)(s / (double)n);                                                 \
            for (i = 0; i < n; i++) {                                                   \
                CT d = (CT)LOAD(row[i]) - mean;                                         \
                v += (double)(d * d);                                                   \
            }                                                                           \
            var = (CT)(v / (double)n);                                                  \
            den = RLX_FN_##CF(sqrt)(var + (CT)eps);                                     \
            for (i = 0; i < n; i++) {                                                   \
                CT o = (((CT)LOAD(row[i]) - mean) / den) * (CT)LOAD(ps[i]);             \
                if (pb) o = o + (CT)LOAD(pb[i]);                                        \
                out[i] = STORE(o);                                                      \
            }                                                                           \
        }                                                                               \
        return 0;                                                                       \
    }                                                                                   \
    RLX_NORM_SIG(rlx_rms_norm_##sfx) {                                                  \
        const T *px = (const T *)x, *ps = (const T *)scale, *pb = (const T *)bias;     \
        T *py = (T *)y;                                                                 \
        int64_t r, i;                                                                   \
        for (r = 0; r < rows; r++) {                                                    \
            const T *row = px + r * n;                                                  \
            T *out = py + r * n;                                                        \
            double s = 0;                                                               \
            CT den;                                                                     \
            for (i = 0; i < n; i++) {                                                   \
                CT v = (CT)LOAD(row[i]);                                                \
                s += (double)(v * v);                                                   \
            }                                                                           \
            den = RLX_FN_##CF(sqrt)((CT)(s / (double)n) + (CT)eps);                     \
            for (i = 0; i < n; i++) {                                                   \
                CT o = ((CT)LOAD(row[i]) / den) * (CT)LOAD(ps[i]);                      \
                if (pb) o = o + (CT)LOAD(pb[i]);                                        \
                out[i] = STORE(o);                                                      \
            }                                                                           \
        }                                                                               \
        return 0;                                                                       \
    }

#define RLX_CHANNEL_NORMS(sfx, T, CT, CF, LOAD, STORE, ...)                             \
    RLX_GROUP_NORM_SIG(rlx_group_norm_##sfx) {                                          \
        const T *px = (const T *)x, *ps = (const T *)scale, *pb = (const T *)bias;     \
        T *py = (T *)y;                                                                 \
        int64_t b, g, i, cg = C / groups, len = cg * inner;                             \
        for (b = 0; b < N; b++)                                                         \
            for (g = 0; g < groups; g++) {                                              \
                const T *blk = px + (b * C + g * cg) * inner;                           \
                T *out = py + (b * C + g * cg) * inner;                                 \
                double s = 0, v = 0;                                                    \
                CT mean, den;                                                           \
                for (i = 0; i < len; i++) s += (double)LOAD(blk[i]);                    \
                mean = (CT)(s / (double)len);                                           \
                for (i = 0; i < len; i++) {                                             \
                    CT d = (CT)LOAD(blk[i]) - mean;                                     \
                    v += (double)(d * d);                                               \
                }                                                                       \
                den = RLX_FN_##CF(sqrt)((CT)(v / (double)len) + (CT)eps);               \
                for (i = 0; i < len; i++) {                                             \
                    int64_t c = g * cg + i / inner;                                     \
                    CT o = (((CT)LOAD(blk[i]) - mean) / den) * (CT)LOAD(ps[c]) + (CT)LOAD(pb[c]); \
                    out[i] = STORE(o);                                                  \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }                                                                                   \
    RLX_BATCH_NORM_SIG(rlx_batch_norm_##sfx) {                                          \
        const T *px = (const T *)x, *ps = (const T *)scale, *pb = (const T *)bias;     \
        const T *pm = (const T *)mean, *pv = (const T *)var;                            \
        T *py = (T *)y;                                                                 \
        int64_t b, c, i;                                                                \
        for (b = 0; b < N; b++)                                                         \
            for (c = 0; c < C; c++) {                                                   \
                const T *blk = px + (b * C + c) * inner;                                \
                T *out = py + (b * C + c) * inner;                                      \
                CT m = (CT)LOAD(pm[c]), sc = (CT)LOAD(ps[c]), bi = (CT)LOAD(pb[c]);     \
                CT den = RLX_FN_##CF(sqrt)((CT)LOAD(pv[c]) + (CT)eps);                  \
                for (i = 0; i < inner; i++)                                             \
                    out[i] = STORE((((CT)LOAD(blk[i]) - m) / den) * sc + bi);           \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_ROW_NORMS(f64, double, double, d, RLX_ID, RLX_ID, _)
RLX_ROW_NORMS(f16, uint16_t, float, f, rlx_f16_to_f32, rlx_f32_to_f16, _)
RLX_ROW_NORMS(bf16, uint16_t, float, f, rlx_bf16_to_f32, rlx_f32_to_bf16, _)
RLX_FLOAT_TYPES(RLX_CHANNEL_NORMS, _)

/* f32 rows: the sums in vectorising lanes, the affine pass one tight loop */
RLX_NORM_SIG(rlx_layer_norm_f32) {
    const float *px = (const float *)x, *ps = (const float *)scale, *pb = (const float *)bias;
    float *py = (float *)y;
    int64_t r, i;
    for (r = 0; r < rows; r++) {
        const float *row = px + r * n;
        float *out = py + r * n;
        float mean = (float)(rlx_row_sum_f(row, n) / (double)n);
        float var = (float)(rlx_row_sumsq_f(row, mean, n) / (double)n);
        float den = sqrtf(var + (float)eps);
        if (pb)
            for (i = 0; i < n; i++) out[i] = ((row[i] - mean) / den) * ps[i] + pb[i];
        else
            for (i = 0; i < n; i++) out[i] = ((row[i] - mean) / den) * ps[i];
    }
    return 0;
}

RLX_NORM_SIG(rlx_rms_norm_f32) {
    const float *px = (const float *)x, *ps = (const float *)scale, *pb = (const float *)bias;
    float *py = (float *)y;
    int64_t r, i;
    for (r = 0; r < rows; r++) {
        const float *row = px + r * n;
        float *out = py + r * n;
        float den = sqrtf((float)(rlx_row_sumsq_f(row, 0.0f, n) / (double)n) + (float)eps);
        if (pb)
            for (i = 0; i < n; i++) out[i] = (row[i] / den) * ps[i] + pb[i];
        else
            for (i = 0; i < n; i++) out[i] = (row[i] / den) * ps[i];
    }
    return 0;
}
