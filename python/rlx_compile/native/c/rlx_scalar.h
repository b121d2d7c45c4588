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

/* GCC 12's SLP vectoriser fuses a*b - c*d / a*b + c*d pairs into fmaddsub even under
 * -ffp-contract=off; kernels with that pattern (rope) opt out of it. */
#if defined(__GNUC__) && !defined(__clang__)
#define RLX_NO_SLP __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define RLX_NO_SLP
#endif

/* ---- float unary ------------------------------------------------------------------ */
#define RLX_FLOAT_SCALARS(CF, T, FN)                                                    \
    RLX_INLINE T rlx_s_neg_##CF(T x) { return -x; }                                     \
    RLX_INLINE T rlx_s_abs_##CF(T x) { return FN(fabs)(x); }                            \
    /* np.maximum(x, 0): NaN propagates, equal values give the second (0) */            \
    RLX_INLINE T rlx_s_relu_##CF(T x) { return (x != x || x > 0) ? x : (T)0; }          \
    RLX_INLINE T rlx_s_sign_##CF(T x) {                                                 \
        return x > 0 ? (T)1 : x < 0 ? (T)-1 : x == 0 ? (T)0 : x;                        \
    }                                                                                   \
    RLX_INLINE T rlx_s_exp_##CF(T x) { return FN(exp)(x); }                             \
    RLX_INLINE T rlx_s_log_##CF(T x) { return FN(log)(x); }                             \
    RLX_INLINE T rlx_s_sqrt_##CF(T x) { return FN(sqrt)(x); }                           \
    RLX_INLINE T rlx_s_rsqrt_##CF(T x) { return (T)1 / FN(sqrt)(x); }                   \
    RLX_INLINE T rlx_s_reciprocal_##CF(T x) { return (T)1 / x; }                        \
    RLX_INLINE T rlx_s_tanh_##CF(T x) { return FN(tanh)(x); }                           \
    /* exp of -|x| only: never overflows */                                             \
    RLX_INLINE T rlx_s_sigmoid_##CF(T x) {                                              \
        T e = FN(exp)(-FN(fabs)(x));                                                    \
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
        return rlx_s_relu_##CF(x) + FN(log1p)(FN(exp)(-FN(fabs)(x)));                    \
    }                                                                                   \
    /* exact GELU as 0.5 x erfc(-x/sqrt 2), in double */                                \
    RLX_INLINE T rlx_s_gelu_##CF(T x) {                                                 \
        double d = (double)x;                                                           \
        if (d == -INFINITY) return (T)-0.0;                                             \
        return (T)(0.5 * d * erfc(-d / 1.4142135623730951));                            \
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
    RLX_INLINE T rlx_s_fmod_##CF(T a, T b, int *e) { (void)e; return FN(fmod)(a, b); }

#define RLX_FN_F(name) name##f
#define RLX_FN_D(name) name
RLX_FLOAT_SCALARS(f, float, RLX_FN_F)
RLX_FLOAT_SCALARS(d, double, RLX_FN_D)

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
/* Rows are the last dim; the outer dims advance like an odometer, moving each operand's
 * offset by its strides (`nops` operands). */
RLX_INLINE void rlx_advance(int64_t rank, const int64_t *shape, int64_t *idx, int nops,
                            int64_t *offs, const int64_t *const *strides) {
    int d, k;
    for (d = (int)rank - 2; d >= 0; d--) {
        if (++idx[d] < shape[d]) {
            for (k = 0; k < nops; k++) offs[k] += strides[k][d];
            return;
        }
        idx[d] = 0;
        for (k = 0; k < nops; k++) offs[k] -= strides[k][d] * (shape[d] - 1);
    }
}

RLX_INLINE int64_t rlx_rows(int64_t rank, const int64_t *shape) {
    int64_t rows = 1;
    int d;
    for (d = 0; d < (int)rank - 1; d++) rows *= shape[d];
    if (rank && shape[rank - 1] == 0) rows = 0;
    return rows;
}
#endif /* RLX_SCALAR_H */
