/* Scalar semantics shared by the kernels (private to the library).
 *
 * rlx_s_<op>_f / _d: the float ops in the compute type (f: float, d: double), written
 * exactly as the reference executor writes them (interpreter/kernels.py) so that the
 * IEEE-exact ones (arithmetic, sqrt, floor, ...) are bit-identical and the
 * transcendental ones differ by libm's last-bit rounding only.
 */
#ifndef RLX_SCALAR_H
#define RLX_SCALAR_H

#include <math.h>
#include <string.h>

#include "rlx_runtime.h"

#define RLX_INLINE static inline

/* The valid outputs [lo, hi) of one kernel tap along a dim: input o*stride + off must
 * lie in [0, n). Always 0 <= lo <= hi <= out: a tap that reads only padding (a kernel
 * wider than the input) has an empty range, which im2col zero-fills and copies by. */
RLX_INLINE void rlx_tap_range(int64_t n, int64_t stride, int64_t off, int64_t out, int64_t *lo,
                              int64_t *hi) {
    int64_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
    int64_t b = n - 1 - off >= 0 ? (n - 1 - off) / stride + 1 : 0;
    if (a > out) a = out;
    if (b > out) b = out;
    *lo = a;
    *hi = b > a ? b : a;
}

/* The taps of a pooling window along one dim inside [lo_edge, hi_edge) (its count). */
RLX_INLINE int64_t rlx_window_count(int64_t o, int64_t stride, int64_t pad, int64_t k,
                                    int64_t dil, int64_t lo_edge, int64_t hi_edge) {
    int64_t t, n = 0;
    for (t = 0; t < k; t++) {
        int64_t i = o * stride - pad + t * dil;
        n += i >= lo_edge && i < hi_edge;
    }
    return n;
}

/* The taps the window at o counts along pooling dim d (geom as the pools', rlx_runtime.h):
 * inside the input, or the padded input with include_pad; mir.avg_pool's divisor is the
 * product over the dims. */
RLX_INLINE int64_t rlx_pool_count(const int64_t *geom, int64_t include_pad, int d, int64_t o) {
    const int64_t *in = geom + 2, *kk = geom + 5, *sd = geom + 11, *pb = geom + 14;
    const int64_t *pe = geom + 17, *dl = geom + 20;
    return include_pad ? rlx_window_count(o, sd[d], pb[d], kk[d], dl[d], -pb[d], in[d] + pe[d])
                       : rlx_window_count(o, sd[d], pb[d], kk[d], dl[d], 0, in[d]);
}

/* The pools' window walk (geom as the pools', rlx_runtime.h), of an input TX *px into an
 * output TY *py: for each (n, c) plane and output row (o0, o1) -- yr, its first output --
 * acc[o2] starts at INIT, takes TAP(acc[o2], x, ...) for each tap of its window inside
 * the input in the reference's (k0, k1, k2) order, a shifted input row at a time (the o2
 * loop vectorises for stride 1), then ROW(yr, n, o0, o1, ...) writes the row's n outputs
 * from acc; the arguments after ROW are passed on to both (the kernel's types and
 * parameters). */
#define RLX_POOL_WINDOWS(geom, TX, TY, px, py, acc, INIT, TAP, ROW, ...)                \
    {                                                                                   \
        const int64_t *in_ = (geom) + 2, *kk_ = (geom) + 5, *out_ = (geom) + 8;         \
        const int64_t *sd_ = (geom) + 11, *pb_ = (geom) + 14, *dl_ = (geom) + 20;       \
        int64_t S_ = in_[0] * in_[1] * in_[2], P_ = out_[0] * out_[1] * out_[2];        \
        int64_t nc_, o0_, o1_, o2_, k0_, k1_, k2_, lo_, hi_;                            \
        for (nc_ = 0; nc_ < (geom)[0] * (geom)[1]; nc_++) {                             \
            const TX *xc_ = (px) + nc_ * S_;                                            \
            TY *yc_ = (py) + nc_ * P_;                                                  \
            for (o0_ = 0; o0_ < out_[0]; o0_++)                                         \
                for (o1_ = 0; o1_ < out_[1]; o1_++) {                                   \
                    TY *yr_ = yc_ + (o0_ * out_[1] + o1_) * out_[2];                    \
                    for (o2_ = 0; o2_ < out_[2]; o2_++) (acc)[o2_] = (INIT);            \
                    for (k0_ = 0; k0_ < kk_[0]; k0_++) {                                \
                        int64_t i0_ = o0_ * sd_[0] - pb_[0] + k0_ * dl_[0];             \
                        if (i0_ < 0 || i0_ >= in_[0]) continue;                         \
                        for (k1_ = 0; k1_ < kk_[1]; k1_++) {                            \
                            int64_t i1_ = o1_ * sd_[1] - pb_[1] + k1_ * dl_[1];         \
                            const TX *xr_;                                              \
                            if (i1_ < 0 || i1_ >= in_[1]) continue;                     \
                            xr_ = xc_ + (i0_ * in_[1] + i1_) * in_[2];                  \
                            for (k2_ = 0; k2_ < kk_[2]; k2_++) {                        \
                                int64_t off_ = k2_ * dl_[2] - pb_[2];                   \
                                rlx_tap_range(in_[2], sd_[2], off_, out_[2], &lo_, &hi_); \
                                for (o2_ = lo_; o2_ < hi_; o2_++)                       \
                                    TAP((acc)[o2_], xr_[o2_ * sd_[2] + off_], __VA_ARGS__); \
                            }                                                           \
                        }                                                               \
                    }                                                                   \
                    ROW(yr_, out_[2], o0_, o1_, __VA_ARGS__)                            \
                }                                                                       \
        }                                                                               \
    }

/* The geometry of the integer convolutions (rlx_integer_conv, rlx_conv_integer: see
 * rlx_runtime.h) as views of its three-dim sizes and the counts the kernels derive. */
#define RLX_INT_CONV_GEOMETRY(geom)                                                     \
    const int64_t *g = (geom), *in = g + 5, *kk = g + 8, *o = g + 11, *sd = g + 14;     \
    const int64_t *pd = g + 17, *dl = g + 20;                                           \
    int64_t N = g[1], Cin = g[2], Cout = g[3], G = g[4], cg = Cin / G, cog = Cout / G;  \
    int64_t S = in[0] * in[1] * in[2], P = o[0] * o[1] * o[2], K = kk[0] * kk[1] * kk[2];

/* Kernels keep the tap ranges of kernel rows up to this wide (on the stack: small, for
 * microcontrollers) instead of recomputing them per output row. */
#define RLX_HOISTED_TAPS 16

/* GCC 12's SLP vectoriser fuses a*b - c*d / a*b + c*d pairs into fmaddsub even under
 * -ffp-contract=off; kernels with that pattern (rope) opt out of it. */
#if defined(__GNUC__) && !defined(__clang__)
#define RLX_NO_SLP __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define RLX_NO_SLP
#endif

/* ---- fast f32 exp and erfc (branch-free: loops over them vectorise) ----------------- */
/* exp(x) within 2 ulp over the whole range (Cephes' polynomial after a Cody-Waite
 * reduction; 2^n applied in two halves so that subnormal results come out right). */
RLX_INLINE float rlx_expf(float x) {
    float xc = x > 88.7228394f ? 88.7228394f : (x < -103.972084f ? -103.972084f : x);
    float n = (xc * 1.44269504f + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = xc - n * 0.693359375f;
    float p, s1, s2;
    int32_t ni = (int32_t)n, n1 = ni / 2, n2 = ni - n1;
    uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
    r = r - n * -2.12194440e-4f;
    p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    memcpy(&s1, &b1, 4);
    memcpy(&s2, &b2, 4);
    p = p * s1 * s2;
    p = x > 88.7228394f ? (float)INFINITY : p;
    p = x < -103.972084f ? 0.0f : p;
    return x != x ? x : p;
}

/* tanh(x) within ~2e-7 relative (Cephes' tanhf: an odd polynomial below 0.625, then
 * 1 - 2 / (e^2|x| + 1) by rlx_expf; branch-free, so loops over it vectorise) */
RLX_INLINE float rlx_tanhf(float x) {
    float a = x < 0 ? -x : x, z = x * x, p, q;
    p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    p = p * z * x + x;
    q = 1.0f - 2.0f / (rlx_expf(2.0f * a) + 1.0f);
    q = x < 0 ? -q : q;
    return a < 0.625f ? p : (x != x ? x : q);
}

/* erfc(x) with a relative error below ~1e-6 everywhere (Numerical Recipes' erfcc: a
 * Chebyshev fit of exp(z^2) erfc(z), fractional error 1.2e-7 in exact arithmetic). */
RLX_INLINE float rlx_erfcf(float x) {
    float z = x < 0 ? -x : x, t = 1.0f / (1.0f + 0.5f * z), p, r;
    p = 0.17087277f;
    p = p * t - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    r = t * rlx_expf(p - z * z);
    return x < 0 ? 2.0f - r : r;
}

/* ---- float unary ------------------------------------------------------------------ */
#define RLX_FLOAT_SCALARS(CF, T, FN, EXP, GELU_EXACT)                                   \
    RLX_INLINE T rlx_s_neg_##CF(T x) { return -x; }                                     \
    RLX_INLINE T rlx_s_abs_##CF(T x) { return FN(fabs)(x); }                            \
    /* np.maximum(x, 0): NaN propagates, equal values give the second (0) */            \
    RLX_INLINE T rlx_s_relu_##CF(T x) { return (x != x || x > 0) ? x : (T)0; }          \
    RLX_INLINE T rlx_s_sign_##CF(T x) {                                                 \
        return x > 0 ? (T)1 : x < 0 ? (T)-1 : x == 0 ? (T)0 : x;                        \
    }                                                                                   \
    RLX_INLINE T rlx_s_exp_##CF(T x) { return EXP(x); }                                 \
    RLX_INLINE T rlx_s_log_##CF(T x) { return FN(log)(x); }                             \
    RLX_INLINE T rlx_s_sqrt_##CF(T x) { return FN(sqrt)(x); }                           \
    RLX_INLINE T rlx_s_rsqrt_##CF(T x) { return (T)1 / FN(sqrt)(x); }                   \
    RLX_INLINE T rlx_s_reciprocal_##CF(T x) { return (T)1 / x; }                        \
    RLX_INLINE T rlx_s_tanh_##CF(T x) { return FN(tanh)(x); }                           \
    /* exp of -|x| only: never overflows */                                             \
    RLX_INLINE T rlx_s_sigmoid_##CF(T x) {                                              \
        T e = EXP(-FN(fabs)(x));                                                        \
        return x >= 0 ? (T)1 / ((T)1 + e) : e / ((T)1 + e);                             \
    }                                                                                   \
    RLX_INLINE T rlx_s_silu_##CF(T x) {                                                 \
        return x == -(T)INFINITY ? (T)-0.0 : x * rlx_s_sigmoid_##CF(x);                  \
    }                                                                                   \
    RLX_INLINE T rlx_s_erf_##CF(T x) { return (T)erf((double)x); }                      \
    RLX_INLINE T rlx_s_sin_##CF(T x) { return FN(sin)(x); }                             \
    RLX_INLINE T rlx_s_cos_##CF(T x) { return FN(cos)(x); }                             \
    RLX_INLINE T rlx_s_floor_##CF(T x) { return FN(floor)(x); }                         \
    RLX_INLINE T rlx_s_ceil_##CF(T x) { return FN(ceil)(x); }                           \
    RLX_INLINE T rlx_s_round_##CF(T x) { return FN(nearbyint)(x); }                     \
    RLX_INLINE T rlx_s_softplus_##CF(T x) {                                             \
        return rlx_s_relu_##CF(x) + FN(log1p)(EXP(-FN(fabs)(x)));                       \
    }                                                                                   \
    /* exact GELU as 0.5 x erfc(-x/sqrt 2): no cancellation in the negative tail */     \
    RLX_INLINE T rlx_s_gelu_##CF(T x) {                                                 \
        T y = GELU_EXACT(x);                                                            \
        return x == -(T)INFINITY ? (T)-0.0 : y;                                         \
    }                                                                                   \
    RLX_INLINE T rlx_s_gelu_tanh_##CF(T x) {                                            \
        T inner = (T)0.7978845608028654 * (x + (T)0.044715 * (x * x * x));              \
        if (x == -(T)INFINITY) return (T)-0.0;                                          \
        return x * rlx_s_sigmoid_##CF((T)2 * inner);                                    \
    }                                                                                   \
    RLX_INLINE T rlx_s_tan_##CF(T x) { return FN(tan)(x); }                             \
    RLX_INLINE T rlx_s_asin_##CF(T x) { return FN(asin)(x); }                           \
    RLX_INLINE T rlx_s_acos_##CF(T x) { return FN(acos)(x); }                           \
    RLX_INLINE T rlx_s_atan_##CF(T x) { return FN(atan)(x); }                           \
    RLX_INLINE T rlx_s_sinh_##CF(T x) { return FN(sinh)(x); }                           \
    RLX_INLINE T rlx_s_cosh_##CF(T x) { return FN(cosh)(x); }                           \
    RLX_INLINE T rlx_s_asinh_##CF(T x) { return FN(asinh)(x); }                         \
    RLX_INLINE T rlx_s_acosh_##CF(T x) { return FN(acosh)(x); }                         \
    RLX_INLINE T rlx_s_atanh_##CF(T x) { return FN(atanh)(x); }                         \
    RLX_INLINE T rlx_s_softsign_##CF(T x) { return x / ((T)1 + FN(fabs)(x)); }          \
    /* ---- float binary ---- */                                                         \
    RLX_INLINE T rlx_s_add_##CF(T a, T b, int *e) { (void)e; return a + b; }            \
    RLX_INLINE T rlx_s_sub_##CF(T a, T b, int *e) { (void)e; return a - b; }            \
    RLX_INLINE T rlx_s_mul_##CF(T a, T b, int *e) { (void)e; return a * b; }            \
    RLX_INLINE T rlx_s_div_##CF(T a, T b, int *e) { (void)e; return a / b; }            \
    RLX_INLINE T rlx_s_pow_##CF(T a, T b, int *e) { (void)e; return FN(pow)(a, b); }    \
    /* np.maximum / np.minimum: NaN propagates, equal values give the second */         \
    RLX_INLINE T rlx_s_max_##CF(T a, T b, int *e) {                                     \
        (void)e; return (a != a || a > b) ? a : b;                                      \
    }                                                                                   \
    RLX_INLINE T rlx_s_min_##CF(T a, T b, int *e) {                                     \
        (void)e; return (a != a || a < b) ? a : b;                                      \
    }                                                                                   \
    /* np.mod (npy_remainder): the sign of the divisor */                               \
    RLX_INLINE T rlx_s_mod_##CF(T a, T b, int *e) {                                     \
        T m = FN(fmod)(a, b);                                                           \
        (void)e;                                                                        \
        if (!b) return m;                                                               \
        if (m) {                                                                        \
            if ((b < 0) != (m < 0)) m += b;                                             \
        } else {                                                                        \
            m = FN(copysign)((T)0, b);                                                  \
        }                                                                               \
        return m;                                                                       \
    }                                                                                   \
    RLX_INLINE T rlx_s_fmod_##CF(T a, T b, int *e) { (void)e; return FN(fmod)(a, b); }  \
    /* ONNX PRelu: a NaN or -0 input stays as it is */                                  \
    RLX_INLINE T rlx_s_prelu_##CF(T a, T b, int *e) { (void)e; return a < 0 ? a * b : a; }

#define RLX_FN_F(name) name##f
#define RLX_FN_D(name) name
#define RLX_GELU_F(x) (0.5f * (x) * rlx_erfcf((x) * -0.70710678f))
#define RLX_GELU_D(x) (0.5 * (x) * erfc(-(x) / 1.4142135623730951))
RLX_FLOAT_SCALARS(f, float, RLX_FN_F, rlx_expf, RLX_GELU_F)
RLX_FLOAT_SCALARS(d, double, RLX_FN_D, exp, RLX_GELU_D)

/* ---- row reductions in independent lanes (the lane loops vectorise; a sequential
 * float reduction would not, without reassociation) ------------------------------------ */
#define RLX_LANES 16
#define RLX_ROW_REDUCTIONS(CF, T)                                                       \
    /* max of x[0..n): NaN if any is NaN, -inf for n = 0 */                             \
    RLX_INLINE T rlx_row_max_##CF(const T *x, int64_t n) {                              \
        T lane[RLX_LANES], m = -(T)INFINITY;                                            \
        int nan[RLX_LANES], any = 0, k;                                                 \
        int64_t i = 0;                                                                  \
        for (k = 0; k < RLX_LANES; k++) {                                               \
            lane[k] = -(T)INFINITY;                                                     \
            nan[k] = 0;                                                                 \
        }                                                                               \
        for (; i + RLX_LANES <= n; i += RLX_LANES)                                      \
            for (k = 0; k < RLX_LANES; k++) {                                           \
                T v = x[i + k];                                                         \
                lane[k] = v > lane[k] ? v : lane[k];                                    \
                nan[k] |= v != v;                                                       \
            }                                                                           \
        for (k = 0; k < RLX_LANES; k++) {                                               \
            m = lane[k] > m ? lane[k] : m;                                              \
            any |= nan[k];                                                              \
        }                                                                               \
        for (; i < n; i++) {                                                            \
            m = x[i] > m ? x[i] : m;                                                    \
            any |= x[i] != x[i];                                                        \
        }                                                                               \
        return any ? (T)NAN : m;                                                        \
    }                                                                                   \
    /* sum of x[0..n) (lanes in T, combined in double) */                               \
    RLX_INLINE double rlx_row_sum_##CF(const T *x, int64_t n) {                         \
        T lane[RLX_LANES];                                                              \
        double s = 0;                                                                   \
        int k;                                                                          \
        int64_t i = 0;                                                                  \
        for (k = 0; k < RLX_LANES; k++) lane[k] = 0;                                    \
        for (; i + RLX_LANES <= n; i += RLX_LANES)                                      \
            for (k = 0; k < RLX_LANES; k++) lane[k] += x[i + k];                        \
        for (k = 0; k < RLX_LANES; k++) s += (double)lane[k];                           \
        for (; i < n; i++) s += (double)x[i];                                           \
        return s;                                                                       \
    }                                                                                   \
    /* sum of (x - c)^2 over x[0..n) */                                                 \
    RLX_INLINE double rlx_row_sumsq_##CF(const T *x, T c, int64_t n) {                  \
        T lane[RLX_LANES];                                                              \
        double s = 0;                                                                   \
        int k;                                                                          \
        int64_t i = 0;                                                                  \
        for (k = 0; k < RLX_LANES; k++) lane[k] = 0;                                    \
        for (; i + RLX_LANES <= n; i += RLX_LANES)                                      \
            for (k = 0; k < RLX_LANES; k++) {                                           \
                T d = x[i + k] - c;                                                     \
                lane[k] += d * d;                                                       \
            }                                                                           \
        for (k = 0; k < RLX_LANES; k++) s += (double)lane[k];                           \
        for (; i < n; i++) {                                                            \
            T d = x[i] - c;                                                             \
            s += (double)(d * d);                                                       \
        }                                                                               \
        return s;                                                                       \
    }                                                                                   \
    /* y = exp(x - m) over [0..n); returns the sum of y */                              \
    RLX_INLINE double rlx_row_exp_sum_##CF(T *y, const T *x, T m, int64_t n) {          \
        int64_t i;                                                                      \
        for (i = 0; i < n; i++) y[i] = rlx_s_exp_##CF(x[i] - m);                        \
        return rlx_row_sum_##CF(y, n);                                                  \
    }
RLX_ROW_REDUCTIONS(f, float)
RLX_ROW_REDUCTIONS(d, double)

RLX_INLINE float rlx_activation_f(float x, int64_t act) {
    switch (act) {
    case RLX_ACT_RELU: return rlx_s_relu_f(x);
    case RLX_ACT_GELU: return rlx_s_gelu_f(x);
    case RLX_ACT_GELU_TANH: return rlx_s_gelu_tanh_f(x);
    case RLX_ACT_SILU: return rlx_s_silu_f(x);
    case RLX_ACT_SIGMOID: return rlx_s_sigmoid_f(x);
    case RLX_ACT_TANH: return rlx_s_tanh_f(x);
    default: return x;
    }
}
RLX_INLINE double rlx_activation_d(double x, int64_t act) {
    switch (act) {
    case RLX_ACT_RELU: return rlx_s_relu_d(x);
    case RLX_ACT_GELU: return rlx_s_gelu_d(x);
    case RLX_ACT_GELU_TANH: return rlx_s_gelu_tanh_d(x);
    case RLX_ACT_SILU: return rlx_s_silu_d(x);
    case RLX_ACT_SIGMOID: return rlx_s_sigmoid_d(x);
    case RLX_ACT_TANH: return rlx_s_tanh_d(x);
    default: return x;
    }
}

/* ---- integer scalars (wrapping, via uint64) ---------------------------------------- */
#define RLX_INT_SCALARS(sfx, T, UT, SG, MN, MX, ...)                                     \
    RLX_INLINE T rlx_s_neg_##sfx(T x) { return (T)(0 - (uint64_t)x); }                  \
    RLX_INLINE T rlx_s_abs_##sfx(T x) { return (SG && x < (T)0) ? (T)(0 - (uint64_t)x) : x; } \
    RLX_INLINE T rlx_s_relu_##sfx(T x) { return x > (T)0 ? x : (T)0; }                  \
    RLX_INLINE T rlx_s_sign_##sfx(T x) { return (T)((x > (T)0) - (x < (T)0)); }         \
    RLX_INLINE T rlx_s_bitwise_not_##sfx(T x) { return (T)~x; }                         \
    RLX_INLINE T rlx_s_add_##sfx(T a, T b, int *e) { (void)e; return (T)((uint64_t)a + (uint64_t)b); } \
    RLX_INLINE T rlx_s_sub_##sfx(T a, T b, int *e) { (void)e; return (T)((uint64_t)a - (uint64_t)b); } \
    RLX_INLINE T rlx_s_mul_##sfx(T a, T b, int *e) { (void)e; return (T)((uint64_t)a * (uint64_t)b); } \
    /* truncating division; MIN / -1 wraps */                                           \
    RLX_INLINE T rlx_s_div_##sfx(T a, T b, int *e) {                                    \
        if (b == 0) { *e = RLX_ERR_DIV_ZERO; return 0; }                                \
        if (SG && b == (T)-1) return (T)(0 - (uint64_t)a);                              \
        return (T)(a / b);                                                              \
    }                                                                                   \
    /* np.mod: the sign of the divisor */                                               \
    RLX_INLINE T rlx_s_mod_##sfx(T a, T b, int *e) {                                    \
        T r;                                                                            \
        if (b == 0) { *e = RLX_ERR_DIV_ZERO; return 0; }                                \
        if (SG && b == (T)-1) return 0;                                                 \
        r = (T)(a % b);                                                                 \
        if (r != 0 && ((r < (T)0) != (b < (T)0))) r = (T)(r + b);                       \
        return r;                                                                       \
    }                                                                                   \
    RLX_INLINE T rlx_s_fmod_##sfx(T a, T b, int *e) {                                   \
        if (b == 0) { *e = RLX_ERR_DIV_ZERO; return 0; }                                \
        if (SG && b == (T)-1) return 0;                                                 \
        return (T)(a % b);                                                              \
    }                                                                                   \
    RLX_INLINE T rlx_s_pow_##sfx(T a, T b, int *e) {                                    \
        uint64_t base = (uint64_t)a, r = 1, n;                                          \
        if (SG && b < (T)0) {                                                           \
            if (a == 0) { *e = RLX_ERR_POW_ZERO; return 0; }                            \
            if (a == 1) return 1;                                                       \
            if (SG && a == (T)-1) return (T)(((uint64_t)b & 1) ? -1 : 1);               \
            return 0;                                                                   \
        }                                                                               \
        for (n = (uint64_t)b; n; n >>= 1) {                                             \
            if (n & 1) r *= base;                                                       \
            base *= base;                                                               \
        }                                                                               \
        return (T)r;                                                                    \
    }                                                                                   \
    RLX_INLINE T rlx_s_max_##sfx(T a, T b, int *e) { (void)e; return a > b ? a : b; }   \
    RLX_INLINE T rlx_s_min_##sfx(T a, T b, int *e) { (void)e; return a < b ? a : b; }   \
    RLX_INLINE T rlx_s_bitwise_and_##sfx(T a, T b, int *e) { (void)e; return (T)(a & b); } \
    RLX_INLINE T rlx_s_bitwise_or_##sfx(T a, T b, int *e) { (void)e; return (T)(a | b); } \
    RLX_INLINE T rlx_s_bitwise_xor_##sfx(T a, T b, int *e) { (void)e; return (T)(a ^ b); } \
    /* shifts out of [0, bits) give 0 (-1 for a right shift of a negative value) */     \
    RLX_INLINE T rlx_s_shift_left_##sfx(T a, T b, int *e) {                             \
        (void)e;                                                                        \
        if ((SG && b < (T)0) || (uint64_t)b >= 8 * sizeof(T)) return 0;                 \
        return (T)((uint64_t)(UT)a << (uint64_t)b);                                     \
    }                                                                                   \
    RLX_INLINE T rlx_s_shift_right_##sfx(T a, T b, int *e) {                            \
        (void)e;                                                                        \
        if ((SG && b < (T)0) || (uint64_t)b >= 8 * sizeof(T))                           \
            return (SG && a < (T)0) ? (T)-1 : (T)0;                                     \
        return (T)(a >> (uint64_t)b);                                                   \
    }
RLX_INT_TYPES(RLX_INT_SCALARS, _)

/* float -> int: truncate, saturate, NaN -> 0 (the reference's cast) */
#define RLX_F2I(sfx, T, UT, SG, MN, MX, ...)                                             \
    RLX_INLINE T rlx_f2i_##sfx(double x) {                                              \
        double t = trunc(x);                                                            \
        if (t != t) return 0;                                                           \
        if (t >= (double)MX + 1.0) return (T)MX;                                        \
        if (t < (double)MN) return (T)MN;                                               \
        return (T)t;                                                                    \
    }
RLX_INT_TYPES(RLX_F2I, _)

/* ---- the elementwise loop ----------------------------------------------------------- */
/* The next index of `shape` (row-major), moving each operand's offset by its strides. */
RLX_INLINE void rlx_next_index(int64_t rank, const int64_t *shape, int64_t *idx, int nops,
                               int64_t *offs, const int64_t *const *strides) {
    int d, k;
    for (d = (int)rank - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) {
            for (k = 0; k < nops; k++) offs[k] += strides[k][d];
            return;
        }
        idx[d] = 0;
        for (k = 0; k < nops; k++) offs[k] -= strides[k][d] * (shape[d] - 1);
    }
}

/* Rows are the last dim: the next row, the outer dims advancing like an odometer. */
RLX_INLINE void rlx_advance(int64_t rank, const int64_t *shape, int64_t *idx, int nops,
                            int64_t *offs, const int64_t *const *strides) {
    if (rank > 1) rlx_next_index(rank - 1, shape, idx, nops, offs, strides);
}

RLX_INLINE int64_t rlx_rows(int64_t rank, const int64_t *shape) {
    int64_t rows = 1;
    int d;
    for (d = 0; d < (int)rank - 1; d++) rows *= shape[d];
    if (rank && shape[rank - 1] == 0) rows = 0;
    return rows;
}

/* The walk of a kernel over the rows of a dense result of `shape` reading two operands
 * at element strides sa, sb: n per row, s1 and s2 each operand's stride along it, off
 * their first elements in the current row (rlx_advance moves them on). */
#define RLX_TWO_OPERAND_ROWS(sa, sb)                                                    \
    int64_t n = rank ? shape[rank - 1] : 1, rows = rlx_rows(rank, shape), r, i;         \
    int64_t s1 = rank ? (sa)[rank - 1] : 0, s2 = rank ? (sb)[rank - 1] : 0;             \
    int64_t idx[RLX_MAX_RANK] = {0}, off[2] = {0, 0};                                   \
    const int64_t *st[2];                                                               \
    st[0] = (sa);                                                                       \
    st[1] = (sb);
#endif /* RLX_SCALAR_H */
