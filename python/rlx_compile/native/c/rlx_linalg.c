/* Matrix products, convolution, pooling and the fused bias/activation epilogue.
 *
 * With RLX_BLAS defined, f32/f64 products go through CBLAS (symbols prefixed by
 * RLX_BLAS_PREFIX: scipy_ for scipy-openblas32); without it, through the portable loops
 * below (microcontrollers). */
#include "rlx_scalar.h"

#ifdef RLX_BLAS
#ifndef RLX_BLAS_PREFIX
#define RLX_BLAS_PREFIX
#endif
#define RLX_PASTE2(a, b) a##b
#define RLX_PASTE(a, b) RLX_PASTE2(a, b)
#define RLX_CBLAS(name) RLX_PASTE(RLX_BLAS_PREFIX, name)
void RLX_CBLAS(cblas_sgemm)(int order, int ta, int tb, int m, int n, int k, float alpha,
                            const float *a, int lda, const float *b, int ldb, float beta,
                            float *c, int ldc);
void RLX_CBLAS(cblas_dgemm)(int order, int ta, int tb, int m, int n, int k, double alpha,
                            const double *a, int lda, const double *b, int ldb, double beta,
                            double *c, int ldc);
void RLX_CBLAS(cblas_sgemv)(int order, int trans, int m, int n, float alpha, const float *a,
                            int lda, const float *x, int incx, float beta, float *y, int incy);
void RLX_CBLAS(cblas_dgemv)(int order, int trans, int m, int n, double alpha, const double *a,
                            int lda, const double *x, int incx, double beta, double *y, int incy);
void RLX_CBLAS(openblas_set_num_threads)(int n);
#define RLX_ROW_MAJOR 101
#define RLX_NO_TRANS 111
#define RLX_TRANS 112
#endif

void rlx_set_num_threads(int64_t n) {
#ifdef RLX_BLAS
    RLX_CBLAS(openblas_set_num_threads)((int)n);
#else
    (void)n;
#endif
}

/* C[M, N] = A[M, K] (row stride lda) x B[K, N] (or B[N, K] transposed), row stride ldc */
#define RLX_GEMM(CF, T, BLAS_FN)                                                        \
    void rlx_gemm_##CF(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, const T *B, \
                       int64_t ldb, int trans_b, T *C, int64_t ldc) {                   \
        int64_t i, j, k;                                                                \
        if (M <= 0 || N <= 0) return;                                                   \
        if (K <= 0) {                                                                   \
            for (i = 0; i < M; i++)                                                     \
                for (j = 0; j < N; j++) C[i * ldc + j] = 0;                             \
            return;                                                                     \
        }                                                                               \
        BLAS_FN                                                                         \
        for (i = 0; i < M; i++) {                                                       \
            T *c = C + i * ldc;                                                         \
            const T *a = A + i * lda;                                                   \
            for (j = 0; j < N; j++) c[j] = 0;                                           \
            if (!trans_b) {                                                             \
                for (k = 0; k < K; k++) {                                               \
                    T av = a[k];                                                        \
                    const T *b = B + k * ldb;                                           \
                    for (j = 0; j < N; j++) c[j] += av * b[j];                          \
                }                                                                       \
            } else {                                                                    \
                for (j = 0; j < N; j++) {                                               \
                    const T *b = B + j * ldb;                                           \
                    T s = 0;                                                            \
                    for (k = 0; k < K; k++) s += a[k] * b[k];                           \
                    c[j] = s;                                                           \
                }                                                                       \
            }                                                                           \
        }                                                                               \
    }
#ifdef RLX_BLAS
#define RLX_BLAS_CALL(fn)                                                               \
    {                                                                                   \
        RLX_CBLAS(fn)(RLX_ROW_MAJOR, RLX_NO_TRANS, trans_b ? RLX_TRANS : RLX_NO_TRANS,  \
                      (int)M, (int)N, (int)K, 1, A, (int)lda, B, (int)ldb, 0, C, (int)ldc); \
        return;                                                                         \
    }
RLX_GEMM(f, float, RLX_BLAS_CALL(cblas_sgemm))
RLX_GEMM(d, double, RLX_BLAS_CALL(cblas_dgemm))
#else
RLX_GEMM(f, float, )
RLX_GEMM(d, double, )
#endif

/* C[M, N] = A^T x B: A[K, M] (row stride lda), B[K, N] (row stride ldb), row stride ldc */
#define RLX_GEMM_AT(CF, T, BLAS_FN)                                                     \
    static void rlx_gemm_at_##CF(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, \
                                 const T *B, int64_t ldb, T *C, int64_t ldc) {          \
        int64_t i, j, k;                                                                \
        if (M <= 0 || N <= 0) return;                                                   \
        if (K <= 0) {                                                                   \
            for (i = 0; i < M; i++)                                                     \
                for (j = 0; j < N; j++) C[i * ldc + j] = 0;                             \
            return;                                                                     \
        }                                                                               \
        BLAS_FN                                                                         \
        for (i = 0; i < M; i++) {                                                       \
            T *c = C + i * ldc;                                                         \
            for (j = 0; j < N; j++) c[j] = 0;                                           \
            for (k = 0; k < K; k++) {                                                   \
                T av = A[k * lda + i];                                                  \
                const T *b = B + k * ldb;                                               \
                for (j = 0; j < N; j++) c[j] += av * b[j];                              \
            }                                                                           \
        }                                                                               \
    }
#ifdef RLX_BLAS
#define RLX_BLAS_CALL_AT(fn)                                                            \
    {                                                                                   \
        RLX_CBLAS(fn)(RLX_ROW_MAJOR, RLX_TRANS, RLX_NO_TRANS, (int)M, (int)N, (int)K, 1, A, \
                      (int)lda, B, (int)ldb, 0, C, (int)ldc);                           \
        return;                                                                         \
    }
RLX_GEMM_AT(f, float, RLX_BLAS_CALL_AT(cblas_sgemm))
RLX_GEMM_AT(d, double, RLX_BLAS_CALL_AT(cblas_dgemm))
#else
RLX_GEMM_AT(f, float, )
RLX_GEMM_AT(d, double, )
#endif

/* y[N] = A[N, K] (row stride lda) x[K]: a GEMM of one row without packing A (the
 * recurrent layers' product of one batch row by R) */
#define RLX_GEMV(CF, T, BLAS_FN)                                                        \
    void rlx_gemv_##CF(int64_t N, int64_t K, const T *A, int64_t lda, const T *x, T *y) { \
        int64_t i, k;                                                                   \
        if (N <= 0) return;                                                             \
        if (K > 0) BLAS_FN                                                              \
        for (i = 0; i < N; i++) {                                                       \
            const T *a = A + i * lda;                                                   \
            T s = 0;                                                                    \
            for (k = 0; k < K; k++) s += a[k] * x[k];                                   \
            y[i] = s;                                                                   \
        }                                                                               \
    }
#ifdef RLX_BLAS
#define RLX_BLAS_GEMV(fn)                                                               \
    {                                                                                   \
        RLX_CBLAS(fn)(RLX_ROW_MAJOR, RLX_NO_TRANS, (int)N, (int)K, 1, A, (int)lda, x, 1, 0, y, 1); \
        return;                                                                         \
    }
RLX_GEMV(f, float, RLX_BLAS_GEMV(cblas_sgemv))
RLX_GEMV(d, double, RLX_BLAS_GEMV(cblas_dgemv))
#else
RLX_GEMV(f, float, )
RLX_GEMV(d, double, )
#endif

/* ---- matmul ----------------------------------------------------------------------- */
#define RLX_BATCHES                                                                     \
    int64_t nb = 1, bi, idx[RLX_MAX_RANK] = {0}, off[2] = {0, 0};                       \
    const int64_t *st[2];                                                               \
    int d_;                                                                             \
    st[0] = a_bstrides;                                                                 \
    st[1] = b_bstrides;                                                                 \
    for (d_ = 0; d_ < (int)batch_rank; d_++) nb *= batch_shape[d_];

#define RLX_NEXT_BATCH rlx_next_index(batch_rank, batch_shape, idx, 2, off, st);

#define RLX_MATMUL_NATIVE(sfx, T, CF)                                                   \
    RLX_MATMUL_SIG(rlx_matmul_##sfx) {                                                  \
        const T *pa = (const T *)a, *pb = (const T *)b;                                 \
        T *py = (T *)y;                                                                 \
        RLX_BATCHES                                                                     \
        (void)scratch;                                                                  \
        for (bi = 0; bi < nb; bi++) {                                                   \
            rlx_gemm_##CF(M, N, K, pa + off[0], K, pb + off[1], N, 0, py + bi * M * N, N); \
            RLX_NEXT_BATCH                                                              \
        }                                                                               \
        return 0;                                                                       \
    }
void rlx_gemm_f(int64_t, int64_t, int64_t, const float *, int64_t, const float *, int64_t, int,
                float *, int64_t);
void rlx_gemm_d(int64_t, int64_t, int64_t, const double *, int64_t, const double *, int64_t, int,
                double *, int64_t);
RLX_MATMUL_NATIVE(f32, float, f)
RLX_MATMUL_NATIVE(f64, double, d)

#define RLX_MATMUL_LOW(sfx, LOAD, STORE)                                                \
    RLX_MATMUL_SIG(rlx_matmul_##sfx) {                                                  \
        const uint16_t *pa = (const uint16_t *)a, *pb = (const uint16_t *)b;            \
        uint16_t *py = (uint16_t *)y;                                                   \
        float *a32 = (float *)scratch, *b32 = a32 + M * K, *c32 = b32 + K * N;          \
        int64_t i;                                                                      \
        RLX_BATCHES                                                                     \
        for (bi = 0; bi < nb; bi++) {                                                   \
            for (i = 0; i < M * K; i++) a32[i] = LOAD(pa[off[0] + i]);                  \
            for (i = 0; i < K * N; i++) b32[i] = LOAD(pb[off[1] + i]);                  \
            rlx_gemm_f(M, N, K, a32, K, b32, N, 0, c32, N);                             \
            for (i = 0; i < M * N; i++) py[bi * M * N + i] = STORE(c32[i]);             \
            RLX_NEXT_BATCH                                                              \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_MATMUL_LOW(f16, rlx_f16_to_f32, rlx_f32_to_f16)
RLX_MATMUL_LOW(bf16, rlx_bf16_to_f32, rlx_f32_to_bf16)

/* integers wrap: the 64-bit sum of 64-bit products, truncated */
#define RLX_MATMUL_INT(sfx, T, UT, SG, MN, MX, ...)                                     \
    RLX_MATMUL_SIG(rlx_matmul_##sfx) {                                                  \
        const T *pa = (const T *)a, *pb = (const T *)b;                                 \
        T *py = (T *)y;                                                                 \
        int64_t i, j, k;                                                                \
        RLX_BATCHES                                                                     \
        (void)scratch;                                                                  \
        for (bi = 0; bi < nb; bi++) {                                                   \
            const T *ab = pa + off[0], *bb = pb + off[1];                               \
            T *yb = py + bi * M * N;                                                    \
            for (i = 0; i < M; i++)                                                     \
                for (j = 0; j < N; j++) {                                               \
                    uint64_t s = 0;                                                     \
                    for (k = 0; k < K; k++) s += (uint64_t)ab[i * K + k] * (uint64_t)bb[k * N + j]; \
                    yb[i * N + j] = (T)s;                                               \
                }                                                                       \
            RLX_NEXT_BATCH                                                              \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_INT_TYPES(RLX_MATMUL_INT, _)

/* ---- epilogue --------------------------------------------------------------------- */
/* f32/f64 round nothing between the steps, so each (bias?, residual?, activation) case
 * is one tight loop the compiler vectorises; f16/bf16 round after every step. */
#define RLX_EPILOGUE_ROW(T, CF, BODY)                                                   \
    for (i = 0; i < n; i++) {                                                           \
        T v = row[i];                                                                   \
        BODY                                                                            \
        row[i] = v;                                                                     \
    }
#define RLX_EPILOGUE_ACTS(T, CF, PRE)                                                   \
    switch (act) {                                                                      \
    case RLX_ACT_RELU: RLX_EPILOGUE_ROW(T, CF, PRE v = rlx_s_relu_##CF(v);) break;      \
    case RLX_ACT_GELU: RLX_EPILOGUE_ROW(T, CF, PRE v = rlx_s_gelu_##CF(v);) break;      \
    case RLX_ACT_GELU_TANH: RLX_EPILOGUE_ROW(T, CF, PRE v = rlx_s_gelu_tanh_##CF(v);) break; \
    case RLX_ACT_SILU: RLX_EPILOGUE_ROW(T, CF, PRE v = rlx_s_silu_##CF(v);) break;      \
    case RLX_ACT_SIGMOID: RLX_EPILOGUE_ROW(T, CF, PRE v = rlx_s_sigmoid_##CF(v);) break; \
    case RLX_ACT_TANH: RLX_EPILOGUE_ROW(T, CF, PRE v = rlx_s_tanh_##CF(v);) break;      \
    default: RLX_EPILOGUE_ROW(T, CF, PRE) break;                                        \
    }
#define RLX_EPILOGUE_NATIVE(sfx, T, CF)                                                 \
    static void rlx_epilogue_rows_##CF(int64_t outer, int64_t channels, int64_t inner, T *py, \
                                       const T *pb, const T *pr, int64_t act, T lo, T hi) { \
        int64_t o, c, i, n = inner;                                                     \
        int clamp = lo > -(T)INFINITY || hi < (T)INFINITY;                              \
        if (inner == 1) {                                                               \
            /* a bias per column of [outer, channels] rows (a matmul's): rows of the    \
             * channels, the bias read along them */                                    \
            n = channels;                                                               \
            for (o = 0; o < outer; o++) {                                               \
                T *row = py + o * channels;                                             \
                const T *res = pr ? pr + o * channels : 0;                              \
                if (pb && res) {                                                        \
                    RLX_EPILOGUE_ACTS(T, CF, v = v + pb[i]; v = v + res[i];)            \
                } else if (pb) {                                                        \
                    RLX_EPILOGUE_ACTS(T, CF, v = v + pb[i];)                            \
                } else if (res) {                                                       \
                    RLX_EPILOGUE_ACTS(T, CF, v = v + res[i];)                           \
                } else {                                                                \
                    RLX_EPILOGUE_ACTS(T, CF, )                                          \
                }                                                                       \
                if (clamp) RLX_EPILOGUE_ROW(T, CF, v = rlx_s_max_##CF(v, lo, 0); v = rlx_s_min_##CF(v, hi, 0);) \
            }                                                                           \
            return;                                                                     \
        }                                                                               \
        for (o = 0; o < outer; o++)                                                     \
            for (c = 0; c < channels; c++) {                                            \
                T *row = py + (o * channels + c) * inner;                               \
                const T *res = pr ? pr + (o * channels + c) * inner : 0;                \
                T b = pb ? pb[c] : (T)0;                                                \
                if (pb && res) {                                                        \
                    RLX_EPILOGUE_ACTS(T, CF, v = v + b; v = v + res[i];)                \
                } else if (pb) {                                                        \
                    RLX_EPILOGUE_ACTS(T, CF, v = v + b;)                                \
                } else if (res) {                                                       \
                    RLX_EPILOGUE_ACTS(T, CF, v = v + res[i];)                           \
                } else {                                                                \
                    RLX_EPILOGUE_ACTS(T, CF, )                                          \
                }                                                                       \
                if (clamp) RLX_EPILOGUE_ROW(T, CF, v = rlx_s_max_##CF(v, lo, 0); v = rlx_s_min_##CF(v, hi, 0);) \
            }                                                                           \
    }                                                                                   \
    RLX_EPILOGUE_SIG(rlx_epilogue_##sfx) {                                              \
        rlx_epilogue_rows_##CF(outer, channels, inner, (T *)y, (const T *)bias,         \
                               (const T *)residual, act, (T)lo, (T)hi);                 \
        return 0;                                                                       \
    }
RLX_EPILOGUE_NATIVE(f32, float, f)
RLX_EPILOGUE_NATIVE(f64, double, d)

#define RLX_EPILOGUE_LOW(sfx, LOAD, STORE)                                              \
    RLX_EPILOGUE_SIG(rlx_epilogue_##sfx) {                                              \
        uint16_t *py = (uint16_t *)y;                                                   \
        const uint16_t *pb = (const uint16_t *)bias, *pr = (const uint16_t *)residual;  \
        int64_t o, c, i;                                                                \
        for (o = 0; o < outer; o++)                                                     \
            for (c = 0; c < channels; c++) {                                            \
                uint16_t *row = py + (o * channels + c) * inner;                        \
                const uint16_t *res = pr ? pr + (o * channels + c) * inner : 0;         \
                float b = pb ? LOAD(pb[c]) : 0.0f;                                      \
                for (i = 0; i < inner; i++) {                                           \
                    uint16_t v = row[i];                                                \
                    if (pb) v = STORE(LOAD(v) + b);                                     \
                    if (res) v = STORE(LOAD(v) + LOAD(res[i]));                         \
                    if (act) v = STORE(rlx_activation_f(LOAD(v), act));                 \
                    if (lo > -INFINITY) v = STORE(rlx_s_max_f(LOAD(v), (float)lo, 0));  \
                    if (hi < INFINITY) v = STORE(rlx_s_min_f(LOAD(v), (float)hi, 0));   \
                    row[i] = v;                                                         \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_EPILOGUE_LOW(f16, rlx_f16_to_f32, rlx_f32_to_f16)
RLX_EPILOGUE_LOW(bf16, rlx_bf16_to_f32, rlx_f32_to_bf16)

/* ---- convolution ------------------------------------------------------------------ */
/* geom: [algo, N, C_in, C_out, groups, in[3], kernel[3], out[3], stride[3], pad[3],
 * dilation[3], tile] (the emitter pads 1-d and 2-d convs to 3 spatial dims). algo: 0
 * direct, 1 pointwise GEMM (1x1x1, stride 1, no pad), 2 im2col + GEMM, a tile of output
 * rows at a time (scratch: taps x tile x out[2]), 3 direct depthwise (one input channel
 * per group), 4 depthwise 2-d of stride 1 on a zero-padded plane (scratch: Hp x Wp +
 * out[1] x Wp, see rlx_conv_plane). */
#define RLX_G_ALGO 0
#define RLX_G_N 1
#define RLX_G_CIN 2
#define RLX_G_COUT 3
#define RLX_G_GROUPS 4
#define RLX_G_IN 5
#define RLX_G_K 8
#define RLX_G_OUT 11
#define RLX_G_STRIDE 14
#define RLX_G_PAD 17
#define RLX_G_DIL 20
#define RLX_G_TILE 23 /* im2col: output rows (of the last dim) per tile */

/* Direct convolution of one group: every output row accumulates its (channel, tap)
 * contributions as shifted rows of the input, in (channel, k0, k1, k2) order; the last
 * dim's loop is an axpy the compiler vectorises (stride 1). No scratch. */
#define RLX_CONV_DIRECT(T, CF)                                                          \
    static void rlx_conv_direct_##CF(const int64_t *g, T *yg, const T *xg, const T *wg,  \
                                     int64_t cg, int64_t cog, int64_t S, int64_t P,      \
                                     int64_t K, int64_t taps) {                         \
        const int64_t *in = g + RLX_G_IN, *kk = g + RLX_G_K, *out = g + RLX_G_OUT;       \
        const int64_t *sd = g + RLX_G_STRIDE, *pd = g + RLX_G_PAD, *dl = g + RLX_G_DIL;  \
        int64_t oc, c, k0, k1, k2, o0, o1, o2, lo, hi;                                  \
        int64_t lo_k[RLX_HOISTED_TAPS], hi_k[RLX_HOISTED_TAPS];                          \
        int hoisted = kk[2] <= RLX_HOISTED_TAPS;                                        \
        /* each tap's output range along the last dim, once per call (not per row: it   \
         * divides by the stride) */                                                    \
        for (k2 = 0; hoisted && k2 < kk[2]; k2++)                                       \
            rlx_tap_range(in[2], sd[2], k2 * dl[2] - pd[2], out[2], &lo_k[k2], &hi_k[k2]); \
        for (oc = 0; oc < cog; oc++) {                                                  \
            T *yo = yg + oc * P;                                                        \
            for (o2 = 0; o2 < P; o2++) yo[o2] = 0;                                      \
            for (c = 0; c < cg; c++) {                                                  \
                const T *xc = xg + c * S, *wc = wg + oc * taps + c * K;                 \
                for (o0 = 0; o0 < out[0]; o0++)                                         \
                    for (o1 = 0; o1 < out[1]; o1++) {                                   \
                        T *yr = yo + (o0 * out[1] + o1) * out[2];                       \
                        for (k0 = 0; k0 < kk[0]; k0++) {                                \
                            int64_t i0 = o0 * sd[0] - pd[0] + k0 * dl[0];               \
                            if (i0 < 0 || i0 >= in[0]) continue;                        \
                            for (k1 = 0; k1 < kk[1]; k1++) {                            \
                                int64_t i1 = o1 * sd[1] - pd[1] + k1 * dl[1];           \
                                const T *xr = xc + (i0 * in[1] + i1) * in[2];           \
                                const T *wr = wc + (k0 * kk[1] + k1) * kk[2];           \
                                if (i1 < 0 || i1 >= in[1]) continue;                    \
                                for (k2 = 0; k2 < kk[2]; k2++) {                        \
                                    int64_t off = k2 * dl[2] - pd[2];                   \
                                    T wv = wr[k2];                                      \
                                    if (hoisted) {                                      \
                                        lo = lo_k[k2];                                  \
                                        hi = hi_k[k2];                                  \
                                    } else {                                            \
                                        rlx_tap_range(in[2], sd[2], off, out[2], &lo, &hi); \
                                    }                                                   \
                                    if (sd[2] == 1) {                                   \
                                        const T *xs = xr + off;                         \
                                        for (o2 = lo; o2 < hi; o2++) yr[o2] += wv * xs[o2]; \
                                    } else {                                            \
                                        for (o2 = lo; o2 < hi; o2++)                    \
                                            yr[o2] += wv * xr[o2 * sd[2] + off];        \
                                    }                                                   \
                                }                                                       \
                            }                                                           \
                        }                                                               \
                    }                                                                   \
            }                                                                           \
        }                                                                               \
    }
RLX_CONV_DIRECT(float, f)
RLX_CONV_DIRECT(double, d)

/* Depthwise 2-d convolution, stride 1 (algo 4): the input plane zero-padded into
 * scratch (Hp x Wp, Wp = out[2] + (k[2] - 1) * dil[2]), then every tap one axpy over
 * the whole output plane computed Wp wide (yw, O1 x Wp: the columns past out[2] are
 * discarded) -- long vector loops where a row of a late layer is shorter than a vector.
 * Taps in (k1, k2) order, padding multiplied in as zeros, as im2col's GEMM does. */
#define RLX_CONV_PLANE(T, CF)                                                           \
    static void rlx_conv_plane_##CF(const int64_t *g, T *yg, const T *xc, const T *wg,   \
                                    int64_t cog, T *scratch) {                          \
        const int64_t *in = g + RLX_G_IN, *kk = g + RLX_G_K, *out = g + RLX_G_OUT;       \
        const int64_t *pd = g + RLX_G_PAD, *dl = g + RLX_G_DIL;                          \
        int64_t wp = out[2] + (kk[2] - 1) * dl[2], hp = out[1] + (kk[1] - 1) * dl[1];     \
        int64_t span = (out[1] - 1) * wp + out[2], r, oc, k1, k2, i;                    \
        T *xp = scratch, *yw = scratch + hp * wp;                                       \
        for (r = 0; r < hp; r++) {                                                      \
            int64_t ir = r - pd[1], lo = pd[2], hi = pd[2] + in[2];                     \
            T *row = xp + r * wp;                                                       \
            if (hi > wp) hi = wp;                                                       \
            if (ir < 0 || ir >= in[1] || lo >= hi) {                                    \
                for (i = 0; i < wp; i++) row[i] = 0;                                    \
                continue;                                                               \
            }                                                                           \
            for (i = 0; i < lo; i++) row[i] = 0;                                        \
            memcpy(row + lo, xc + ir * in[2], (size_t)(hi - lo) * sizeof(T));           \
            for (i = hi; i < wp; i++) row[i] = 0;                                       \
        }                                                                               \
        for (oc = 0; oc < cog; oc++) {                                                  \
            T *yo = yg + oc * out[1] * out[2];                                          \
            for (i = 0; i < span; i++) yw[i] = 0;                                       \
            for (k1 = 0; k1 < kk[1]; k1++)                                              \
                for (k2 = 0; k2 < kk[2]; k2++) {                                        \
                    const T *src = xp + k1 * dl[1] * wp + k2 * dl[2];                   \
                    T wv = wg[(oc * kk[1] + k1) * kk[2] + k2];                          \
                    for (i = 0; i < span; i++) yw[i] += wv * src[i];                    \
                }                                                                       \
            for (r = 0; r < out[1]; r++) memcpy(yo + r * out[2], yw + r * wp, (size_t)out[2] * sizeof(T)); \
        }                                                                               \
    }
RLX_CONV_PLANE(float, f)
RLX_CONV_PLANE(double, d)

#define RLX_CONV_BODY(T, CF)                                                            \
    static void rlx_conv_run_##CF(const int64_t *g, T *y, const T *x, const T *w, T *cols, \
                                  const T *bias, const T *res, int64_t act, T lo, T hi) { \
        int64_t N = g[RLX_G_N], Cin = g[RLX_G_CIN], Cout = g[RLX_G_COUT], G = g[RLX_G_GROUPS]; \
        const int64_t *in = g + RLX_G_IN, *kk = g + RLX_G_K, *out = g + RLX_G_OUT;       \
        const int64_t *sd = g + RLX_G_STRIDE, *pd = g + RLX_G_PAD, *dl = g + RLX_G_DIL;  \
        int64_t cg = Cin / G, cog = Cout / G, S = in[0] * in[1] * in[2];                \
        int64_t P = out[0] * out[1] * out[2], K = kk[0] * kk[1] * kk[2], taps = cg * K;  \
        int64_t n, gi, c, k0, k1, k2, o2;                                               \
        for (n = 0; n < N; n++)                                                         \
            for (gi = 0; gi < G; gi++) {                                                \
                const T *xg = x + (n * Cin + gi * cg) * S;                              \
                const T *wg = w + gi * cog * taps;                                      \
                T *yg = y + (n * Cout + gi * cog) * P;                                  \
                if (g[RLX_G_ALGO] == 1) {                                               \
                    rlx_gemm_##CF(cog, P, cg, wg, cg, xg, P, 0, yg, P);                 \
                } else if (g[RLX_G_ALGO] == 2) {                                        \
                    /* im2col a tile of output rows at a time (the tile stays in cache   \
                     * for its GEMM): cols[(c, k0, k1, k2), positions of the tile] */    \
                    int64_t rows = out[0] * out[1], tile = g[RLX_G_TILE], r0;            \
                    for (r0 = 0; r0 < rows; r0 += tile) {                               \
                        int64_t r1 = r0 + tile < rows ? r0 + tile : rows, tp = (r1 - r0) * out[2], r; \
                        for (c = 0; c < cg; c++)                                        \
                            for (k0 = 0; k0 < kk[0]; k0++)                              \
                                for (k1 = 0; k1 < kk[1]; k1++)                          \
                                    for (k2 = 0; k2 < kk[2]; k2++) {                    \
                                        T *row = cols + (((c * kk[0] + k0) * kk[1] + k1) * kk[2] + k2) * tp; \
                                        const T *xc = xg + c * S;                       \
                                        int64_t base = k2 * dl[2] - pd[2], lo, hi;      \
                                        rlx_tap_range(in[2], sd[2], base, out[2], &lo, &hi); \
                                        for (r = r0; r < r1; r++) {                     \
                                            int64_t i0 = (r / out[1]) * sd[0] - pd[0] + k0 * dl[0]; \
                                            int64_t i1 = (r % out[1]) * sd[1] - pd[1] + k1 * dl[1]; \
                                            T *dst = row + (r - r0) * out[2];           \
                                            const T *xr;                                \
                                            if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1]) { \
                                                for (o2 = 0; o2 < out[2]; o2++) dst[o2] = 0; \
                                                continue;                               \
                                            }                                           \
                                            xr = xc + (i0 * in[1] + i1) * in[2];        \
                                            for (o2 = 0; o2 < lo; o2++) dst[o2] = 0;    \
                                            if (sd[2] == 1)                             \
                                                memcpy(dst + lo, xr + lo + base, (size_t)(hi - lo) * sizeof(T)); \
                                            else                                        \
                                                for (o2 = lo; o2 < hi; o2++) dst[o2] = xr[o2 * sd[2] + base]; \
                                            for (o2 = hi; o2 < out[2]; o2++) dst[o2] = 0; \
                                        }                                               \
                                    }                                                   \
                        rlx_gemm_##CF(cog, tp, taps, wg, taps, cols, tp, 0, yg + r0 * out[2], P); \
                    }                                                                   \
                } else if (g[RLX_G_ALGO] == 4) {                                        \
                    rlx_conv_plane_##CF(g, yg, xg, wg, cog, cols);                      \
                } else {                                                                \
                    rlx_conv_direct_##CF(g, yg, xg, wg, cg, cog, S, P, K, taps);          \
                }                                                                       \
                if (bias || res || act || lo > -(T)INFINITY || hi < (T)INFINITY)        \
                    rlx_epilogue_rows_##CF(1, cog, P, yg, bias ? bias + gi * cog : 0,   \
                                           res ? res + (n * Cout + gi * cog) * P : 0, act, lo, hi); \
            }                                                                           \
    }

RLX_CONV_BODY(float, f)
RLX_CONV_BODY(double, d)

RLX_CONV_SIG(rlx_conv_f32) {
    rlx_conv_run_f(geom, (float *)y, (const float *)x, (const float *)w, (float *)scratch,
                   (const float *)bias, (const float *)residual, act, (float)lo, (float)hi);
    return 0;
}
RLX_CONV_SIG(rlx_conv_f64) {
    rlx_conv_run_d(geom, (double *)y, (const double *)x, (const double *)w, (double *)scratch,
                   (const double *)bias, (const double *)residual, act, lo, hi);
    return 0;
}

/* f16/bf16: scratch = [x as f32][w as f32][y as f32][the f32 algorithm's scratch] */
#define RLX_CONV_LOW(sfx, LOAD, STORE)                                                  \
    RLX_CONV_SIG(rlx_conv_##sfx) {                                                      \
        const int64_t *g = geom;                                                        \
        int64_t nx = g[RLX_G_N] * g[RLX_G_CIN] * g[RLX_G_IN] * g[RLX_G_IN + 1] * g[RLX_G_IN + 2]; \
        int64_t nw = g[RLX_G_COUT] * (g[RLX_G_CIN] / g[RLX_G_GROUPS]) * g[RLX_G_K] *     \
                     g[RLX_G_K + 1] * g[RLX_G_K + 2];                                   \
        int64_t ny = g[RLX_G_N] * g[RLX_G_COUT] * g[RLX_G_OUT] * g[RLX_G_OUT + 1] * g[RLX_G_OUT + 2]; \
        float *x32 = (float *)scratch, *w32 = x32 + nx, *y32 = w32 + nw, *rest = y32 + ny; \
        const uint16_t *px = (const uint16_t *)x, *pw = (const uint16_t *)w;            \
        uint16_t *py = (uint16_t *)y;                                                   \
        int64_t i;                                                                      \
        for (i = 0; i < nx; i++) x32[i] = LOAD(px[i]);                                  \
        for (i = 0; i < nw; i++) w32[i] = LOAD(pw[i]);                                  \
        (void)bias;                                                                     \
        (void)residual;                                                                 \
        (void)act;                                                                      \
        (void)lo;                                                                       \
        (void)hi;                                                                       \
        rlx_conv_run_f(g, y32, x32, w32, rest, 0, 0, 0, -INFINITY, INFINITY);           \
        for (i = 0; i < ny; i++) py[i] = STORE(y32[i]);                                 \
        return 0;                                                                       \
    }
RLX_CONV_LOW(f16, rlx_f16_to_f32, rlx_f32_to_f16)
RLX_CONV_LOW(bf16, rlx_bf16_to_f32, rlx_f32_to_bf16)

/* ---- transposed convolution ------------------------------------------------------ */
/* geom: [N, C_in, C_out, groups, in[3], kernel[3], out[3], stride[3], pad_begin[3],
 * dilation[3], tile, crop[3]] (1-d and 2-d padded to 3 spatial dims); w [C_in, C_out/G,
 * k...]. Per group and tile of input rows (tile rows of the last dim), one GEMM gives
 * every input element's kernel-weighted columns, cols[(oc, k0, k1, k2), positions] =
 * W_g^T x X_g; col2im adds each column into the output at stride*i + dilation*k -
 * pad_begin when that lands inside crop (the full result cropped by both pads); the
 * output beyond crop is output_padding: zero, plus the bias like everything else.
 * scratch: C_out/G * K * tile * in[2] elements. */
#define RLX_CT_N 0
#define RLX_CT_CIN 1
#define RLX_CT_COUT 2
#define RLX_CT_GROUPS 3
#define RLX_CT_IN 4
#define RLX_CT_K 7
#define RLX_CT_OUT 10
#define RLX_CT_STRIDE 13
#define RLX_CT_PAD 16
#define RLX_CT_DIL 19
#define RLX_CT_TILE 22
#define RLX_CT_CROP 23
#define RLX_CONV_TRANSPOSE_BODY(T, CF)                                                  \
    static void rlx_conv_transpose_run_##CF(const int64_t *g, T *y, const T *x, const T *w, \
                                            T *cols, const T *bias) {                   \
        int64_t N = g[RLX_CT_N], Cin = g[RLX_CT_CIN], Cout = g[RLX_CT_COUT], G = g[RLX_CT_GROUPS]; \
        const int64_t *in = g + RLX_CT_IN, *kk = g + RLX_CT_K, *out = g + RLX_CT_OUT;    \
        const int64_t *sd = g + RLX_CT_STRIDE, *pd = g + RLX_CT_PAD, *dl = g + RLX_CT_DIL; \
        const int64_t *crop = g + RLX_CT_CROP;                                          \
        int64_t cg = Cin / G, cog = Cout / G, S = in[0] * in[1] * in[2];                \
        int64_t P = out[0] * out[1] * out[2], K = kk[0] * kk[1] * kk[2];                 \
        int64_t rows = in[0] * in[1], tile = g[RLX_CT_TILE];                            \
        int64_t n, gi, oc, k0, k1, k2, r0, r, i;                                        \
        for (i = 0; i < N * Cout * P; i++) y[i] = 0;                                    \
        for (n = 0; n < N; n++)                                                         \
            for (gi = 0; gi < G; gi++) {                                                \
                const T *xg = x + (n * Cin + gi * cg) * S;                              \
                const T *wg = w + gi * cg * cog * K;                                    \
                T *yg = y + (n * Cout + gi * cog) * P;                                  \
                for (r0 = 0; r0 < rows; r0 += tile) {                                   \
                    int64_t r1 = r0 + tile < rows ? r0 + tile : rows, tp = (r1 - r0) * in[2]; \
                    rlx_gemm_at_##CF(cog * K, tp, cg, wg, cog * K, xg + r0 * in[2], S, cols, tp); \
                    for (oc = 0; oc < cog; oc++)                                        \
                        for (k0 = 0; k0 < kk[0]; k0++)                                  \
                            for (k1 = 0; k1 < kk[1]; k1++)                              \
                                for (k2 = 0; k2 < kk[2]; k2++) {                        \
                                    const T *row = cols + (((oc * kk[0] + k0) * kk[1] + k1) * kk[2] + k2) * tp; \
                                    int64_t off = k2 * dl[2] - pd[2], lo, hi;           \
                                    rlx_tap_range(crop[2], sd[2], off, in[2], &lo, &hi); \
                                    for (r = r0; r < r1; r++) {                         \
                                        int64_t o0 = (r / in[1]) * sd[0] + k0 * dl[0] - pd[0]; \
                                        int64_t o1 = (r % in[1]) * sd[1] + k1 * dl[1] - pd[1]; \
                                        const T *src = row + (r - r0) * in[2];          \
                                        T *dst;                                         \
                                        if (o0 < 0 || o0 >= crop[0] || o1 < 0 || o1 >= crop[1]) continue; \
                                        dst = yg + (oc * out[0] + o0) * out[1] * out[2] + o1 * out[2] + off; \
                                        if (sd[2] == 1)                                 \
                                            for (i = lo; i < hi; i++) dst[i] += src[i]; \
                                        else                                            \
                                            for (i = lo; i < hi; i++) dst[i * sd[2]] += src[i]; \
                                    }                                                   \
                                }                                                       \
                }                                                                       \
            }                                                                           \
        if (bias) rlx_epilogue_rows_##CF(N, Cout, P, y, bias, 0, 0, -(T)INFINITY, (T)INFINITY); \
    }
RLX_CONV_TRANSPOSE_BODY(float, f)
RLX_CONV_TRANSPOSE_BODY(double, d)

RLX_CONV_TRANSPOSE_SIG(rlx_conv_transpose_f32) {
    rlx_conv_transpose_run_f(geom, (float *)y, (const float *)x, (const float *)w,
                             (float *)scratch, (const float *)bias);
    return 0;
}
RLX_CONV_TRANSPOSE_SIG(rlx_conv_transpose_f64) {
    rlx_conv_transpose_run_d(geom, (double *)y, (const double *)x, (const double *)w,
                             (double *)scratch, (const double *)bias);
    return 0;
}

/* f16/bf16: computed in f32 (bias included), rounded once, as the reference does;
 * scratch = [x][w][bias][y as f32][the f32 columns] */
#define RLX_CONV_TRANSPOSE_LOW(sfx, LOAD, STORE)                                        \
    RLX_CONV_TRANSPOSE_SIG(rlx_conv_transpose_##sfx) {                                  \
        const int64_t *g = geom;                                                        \
        int64_t nx = g[RLX_CT_N] * g[RLX_CT_CIN] * g[RLX_CT_IN] * g[RLX_CT_IN + 1] * g[RLX_CT_IN + 2]; \
        int64_t nw = g[RLX_CT_CIN] * (g[RLX_CT_COUT] / g[RLX_CT_GROUPS]) * g[RLX_CT_K] * \
                     g[RLX_CT_K + 1] * g[RLX_CT_K + 2];                                 \
        int64_t nb = g[RLX_CT_COUT];                                                    \
        int64_t ny = g[RLX_CT_N] * nb * g[RLX_CT_OUT] * g[RLX_CT_OUT + 1] * g[RLX_CT_OUT + 2]; \
        float *x32 = (float *)scratch, *w32 = x32 + nx, *b32 = w32 + nw, *y32 = b32 + nb;   \
        const uint16_t *px = (const uint16_t *)x, *pw = (const uint16_t *)w;            \
        const uint16_t *pb = (const uint16_t *)bias;                                    \
        uint16_t *py = (uint16_t *)y;                                                   \
        int64_t i;                                                                      \
        for (i = 0; i < nx; i++) x32[i] = LOAD(px[i]);                                  \
        for (i = 0; i < nw; i++) w32[i] = LOAD(pw[i]);                                  \
        if (pb)                                                                         \
            for (i = 0; i < nb; i++) b32[i] = LOAD(pb[i]);                              \
        rlx_conv_transpose_run_f(g, y32, x32, w32, y32 + ny, pb ? b32 : 0);             \
        for (i = 0; i < ny; i++) py[i] = STORE(y32[i]);                                 \
        return 0;                                                                       \
    }
RLX_CONV_TRANSPOSE_LOW(f16, rlx_f16_to_f32, rlx_f32_to_f16)
RLX_CONV_TRANSPOSE_LOW(bf16, rlx_bf16_to_f32, rlx_f32_to_bf16)

/* ---- pooling ---------------------------------------------------------------------- */
/* geom: [N, C, in[3], kernel[3], out[3], stride[3], pad_begin[3], pad_end[3], dil[3]];
 * max: padding never wins, NaN propagates; avg: flag = count_include_pad (the count
 * then covers the explicit pads, never a ceil-mode window's extra cells). */

/* The taps and rows of RLX_POOL_WINDOWS for the max and the average (the kernel's acc,
 * geom and flag); the average's count: rlx_pool_count per dim. */
#define RLX_POOL_MAX_TAP(a, v, CT, CF, LOAD, STORE) (a) = rlx_s_max_##CF((a), (CT)LOAD(v), 0)
#define RLX_POOL_SUM_TAP(a, v, CT, CF, LOAD, STORE) (a) += (CT)LOAD(v)
#define RLX_POOL_STORE_ROW(yr, n, o0, o1, CT, CF, LOAD, STORE)                          \
    {                                                                                   \
        int64_t j_;                                                                     \
        for (j_ = 0; j_ < (n); j_++) (yr)[j_] = STORE(acc[j_]);                         \
    }
#define RLX_POOL_MEAN_ROW(yr, n, o0, o1, CT, CF, LOAD, STORE)                           \
    {                                                                                   \
        int64_t j_, c01_ = rlx_pool_count(geom, flag, 0, o0) * rlx_pool_count(geom, flag, 1, o1); \
        for (j_ = 0; j_ < (n); j_++)                                                    \
            (yr)[j_] = STORE(acc[j_] / (CT)(c01_ * rlx_pool_count(geom, flag, 2, j_)));  \
    }
#define RLX_POOLS(sfx, T, CT, CF, LOAD, STORE, ...)                                      \
    RLX_POOL_SIG(rlx_max_pool_##sfx) {                                                  \
        CT *acc = (CT *)scratch;                                                        \
        (void)flag;                                                                     \
        RLX_POOL_WINDOWS(geom, T, T, (const T *)x, (T *)y, acc, -(CT)INFINITY,          \
                         RLX_POOL_MAX_TAP, RLX_POOL_STORE_ROW, CT, CF, LOAD, STORE)     \
        return 0;                                                                       \
    }                                                                                   \
    RLX_POOL_SIG(rlx_avg_pool_##sfx) {                                                  \
        CT *acc = (CT *)scratch;                                                        \
        RLX_POOL_WINDOWS(geom, T, T, (const T *)x, (T *)y, acc, (CT)0,                  \
                         RLX_POOL_SUM_TAP, RLX_POOL_MEAN_ROW, CT, CF, LOAD, STORE)      \
        return 0;                                                                       \
    }
RLX_FLOAT_TYPES(RLX_POOLS, _)
/* 8-bit integer pools (a quantized model's max pool, on its integers): taps compared as
 * floats, which hold every value exactly; the lowering calls max pools only. */
RLX_POOLS(i8, int8_t, float, f, RLX_ID, RLX_ID, _)
RLX_POOLS(u8, uint8_t, float, f, RLX_ID, RLX_ID, _)
