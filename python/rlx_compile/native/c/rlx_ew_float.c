/* Elementwise kernels of the float types (rlx_elementwise.h). */
#include "rlx_elementwise.h"

/* ---- float types ------------------------------------------------------------------- */
#define RLX_FLOAT_UNARY_T(sfx, T, CT, CF, L, S, ...)                                    \
    RLX_FLOAT_UNARY_OPS(RLX_UNARY_OP_F, sfx, T, CT, CF, L, S)
#define RLX_UNARY_OP_F(op, sfx, T, CT, CF, L, S) RLX_UNARY_KERNEL(op, sfx, T, CT, CF, L, S)
RLX_FLOAT_TYPES(RLX_FLOAT_UNARY_T, _)

#define RLX_FLOAT_BINARY_T(sfx, T, CT, CF, L, S, ...)                                   \
    RLX_FLOAT_BINARY_OPS(RLX_BINARY_OP_F, sfx, T, CT, CF, L, S)
#define RLX_BINARY_OP_F(op, sfx, T, CT, CF, L, S) RLX_BINARY_KERNEL(op, sfx, T, CT, CF, L, S)
RLX_FLOAT_TYPES(RLX_FLOAT_BINARY_T, _)

#define RLX_FLOAT_VARIADIC_T(sfx, T, CT, CF, L, S, ...)                                 \
    RLX_VARIADIC_OPS(RLX_VARIADIC_OP_F, sfx, T, CT, CF, L, S)
#define RLX_VARIADIC_OP_F(op, sfx, T, CT, CF, L, S) RLX_VARIADIC_KERNEL(op, sfx, T, CT, CF, L, S)
RLX_FLOAT_TYPES(RLX_FLOAT_VARIADIC_T, _)

#define RLX_FLOAT_COMPARE_T(sfx, T, CT, CF, L, S, ...)                                  \
    RLX_COMPARE_OPS(RLX_COMPARE_OP_F, sfx, T, CT, L)
#define RLX_COMPARE_OP_F(op, sym, sfx, T, CT, L) RLX_COMPARE_KERNEL(op, sym, sfx, T, CT, L)
RLX_FLOAT_TYPES(RLX_FLOAT_COMPARE_T, _)


/* ---- parameterised activations (the reference: np.maximum/np.minimum, so NaN
 * propagates; leaky relu x < 0 ? alpha x : x; elu scale (x < 0 ? alpha (e^x - 1) : x),
 * e^x of the branch taken only; thresholded relu x > alpha ? x : 0; swish
 * x sigmoid(alpha x); scale x * p0; divide x / p0) ----------------------------------- */
#define RLX_PARAM_ACT_LOOP(CT, L, S, ...)                                               \
    for (i = 0; i < n; i++) {                                                           \
        CT v = (CT)L(px[i]);                                                            \
        __VA_ARGS__                                                                     \
        py[i] = S(v);                                                                   \
    }
#define RLX_PARAM_ACT(sfx, T, CT, CF, L, S, ...)                                        \
    int rlx_param_act_##sfx(int64_t n, void *y, const void *x, int64_t act, double p0, double p1) { \
        T *py = (T *)y;                                                                 \
        const T *px = (const T *)x;                                                     \
        CT a = (CT)p0, b = (CT)p1, sixth = (CT)(1.0 / 6.0), half = (CT)0.5, t;          \
        int64_t i;                                                                      \
        switch (act) {                                                                  \
        case RLX_ACT_CLIP:                                                              \
            RLX_PARAM_ACT_LOOP(CT, L, S, v = rlx_s_max_##CF(v, a, 0); v = rlx_s_min_##CF(v, b, 0);) \
            return 0;                                                                   \
        case RLX_ACT_HARD_SIGMOID:                                                      \
            RLX_PARAM_ACT_LOOP(CT, L, S, v = v * a + b; v = rlx_s_min_##CF(v, (CT)1, 0);          \
                               v = rlx_s_max_##CF(v, (CT)0, 0);)                        \
            return 0;                                                                   \
        case RLX_ACT_HARD_SWISH:                                                        \
            RLX_PARAM_ACT_LOOP(CT, L, S, t = v * sixth + half; t = rlx_s_min_##CF(t, (CT)1, 0);   \
                               t = rlx_s_max_##CF(t, (CT)0, 0); v = v * t;)             \
            return 0;                                                                   \
        case RLX_ACT_LEAKY_RELU:                                                        \
            RLX_PARAM_ACT_LOOP(CT, L, S, v = v < 0 ? v * a : v;)                                  \
            return 0;                                                                   \
        case RLX_ACT_ELU:                                                               \
            RLX_PARAM_ACT_LOOP(CT, L, S, t = rlx_s_exp_##CF(rlx_s_min_##CF(v, (CT)0, 0));         \
                               v = (v < 0 ? (t - (CT)1) * a : v) * b;)                  \
            return 0;                                                                   \
        case RLX_ACT_THRESHOLDED_RELU:                                                  \
            RLX_PARAM_ACT_LOOP(CT, L, S, v = v > a ? v : (CT)0;)                                  \
            return 0;                                                                   \
        case RLX_ACT_SWISH:                                                             \
            RLX_PARAM_ACT_LOOP(CT, L, S, v = v * rlx_s_sigmoid_##CF(v * a);)                      \
            return 0;                                                                   \
        case RLX_ACT_SCALE:                                                             \
            RLX_PARAM_ACT_LOOP(CT, L, S, v = v * a;)                                              \
            return 0;                                                                   \
        case RLX_ACT_DIVIDE:                                                            \
            RLX_PARAM_ACT_LOOP(CT, L, S, v = v / a;)                                              \
            return 0;                                                                   \
        default:                                                                        \
            return 1;                                                                   \
        }                                                                               \
    }
RLX_FLOAT_TYPES(RLX_PARAM_ACT, _)
