/* Recurrent layers (mir.rnn, mir.gru, mir.lstm): one call per layer.
 *
 * Per direction: the input projection of every step as one GEMM (the rows of X, in their
 * own order, by W^T), the biases added; then step by step the recurrent product (a GEMM
 * of the batch's hidden rows by R^T) and the gates, row by row, finished rows (at and
 * past their sequence_lens) keeping their states with an output of 0. Everything is
 * computed in CT (f32; f64 for f64) and rounded to T where the reference's ops round
 * (each product, sum and gate function: interpreter/recurrent.py), so f16/bf16 layers
 * round as the reference does; f32/f64 differ from it by BLAS's summation order and
 * libm's last bits only.
 *
 * The dynamically quantized LSTM (8-bit W and R with scales and zero points) quantizes
 * each product's float operand to u8 by its own range -- X as one tensor, the hidden
 * state row by row -- and multiplies in int32 (the zero point's share taken off the sum
 * of the 8-bit weights' products), then applies both scales, as the reference (and
 * onnxruntime) do.
 */
#include "rlx_scalar.h"

void rlx_gemm_f(int64_t, int64_t, int64_t, const float *, int64_t, const float *, int64_t, int,
                float *, int64_t);
void rlx_gemm_d(int64_t, int64_t, int64_t, const double *, int64_t, const double *, int64_t, int,
                double *, int64_t);
void rlx_gemv_f(int64_t, int64_t, const float *, int64_t, const float *, float *);
void rlx_gemv_d(int64_t, int64_t, const double *, int64_t, const double *, double *);

/* Up to this many batch rows, a step's recurrent product is a GEMV per row (BLAS would
 * pack R for a GEMM at every step). */
#define RLX_RECURRENT_GEMV_ROWS 4

/* Activation codes: rlx_compile.dialects.common.RecurrentActivation's order. */
enum {
    RLX_RACT_SIGMOID,
    RLX_RACT_TANH,
    RLX_RACT_RELU,
    RLX_RACT_LEAKY_RELU,
    RLX_RACT_THRESHOLDED_RELU,
    RLX_RACT_ELU,
    RLX_RACT_SOFTSIGN,
    RLX_RACT_SOFTPLUS,
    RLX_RACT_HARD_SIGMOID,
    RLX_RACT_SCALED_TANH,
    RLX_RACT_AFFINE
};

/* geom: see RLX_DECL_RECURRENT in rlx_runtime.h */
enum {
    RLX_RG_KIND, RLX_RG_SEQ, RLX_RG_BATCH, RLX_RG_INPUT, RLX_RG_HIDDEN, RLX_RG_DIRS,
    RLX_RG_BACKWARDS0, RLX_RG_BACKWARDS1, RLX_RG_BATCH_FIRST, RLX_RG_LENS,
    RLX_RG_LINEAR_BEFORE_RESET, RLX_RG_INPUT_FORGET, RLX_RG_QUANTIZED, RLX_RG_W_PER_ROW,
    RLX_RG_R_PER_ROW, RLX_RG_CLIP
};

/* An integral float (or NaN) as the reference's cast to int32 takes it: NaN -> 0,
 * saturated (here always within [-255, 255]). */
RLX_INLINE int16_t rlx_rq_int(double v) {
    if (v != v) return 0;
    return (int16_t)(v < -32768.0 ? -32768.0 : v > 32767.0 ? 32767.0 : v);
}

/* An 8-bit weight element (signed or not) */
RLX_INLINE int32_t rlx_rq_weight(const void *m, int is_signed, int64_t i) {
    return is_signed ? (int32_t)((const int8_t *)m)[i] : (int32_t)((const uint8_t *)m)[i];
}

/* sum_k a[k] * b[k] over n, b 8-bit signed or not, in int32 */
RLX_INLINE int32_t rlx_rq_dot(const int16_t *restrict a, const void *b, int is_signed, int64_t n) {
    int32_t s = 0;
    int64_t k;
    if (is_signed) {
        const int8_t *restrict w = (const int8_t *)b;
        for (k = 0; k < n; k++) s += (int32_t)a[k] * (int32_t)w[k];
    } else {
        const uint8_t *restrict w = (const uint8_t *)b;
        for (k = 0; k < n; k++) s += (int32_t)a[k] * (int32_t)w[k];
    }
    return s;
}

/* C[m, n] = A[m] . B[n] for the rows of A [M, K] and B [N, K] (row strides lda, ldb) */
#define RLX_RPRODUCT(CF, T)                                                             \
    static void rlx_rproduct_##CF(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, \
                                  const T *B, int64_t ldb, T *C, int64_t ldc) {         \
        int64_t m;                                                                      \
        if (M > RLX_RECURRENT_GEMV_ROWS) {                                              \
            rlx_gemm_##CF(M, N, K, A, lda, B, ldb, 1, C, ldc);                          \
            return;                                                                     \
        }                                                                               \
        for (m = 0; m < M; m++) rlx_gemv_##CF(N, K, B, ldb, A + m * lda, C + m * ldc);  \
    }
RLX_RPRODUCT(f, float)
RLX_RPRODUCT(d, double)

#define RLX_RTANH_f(x) rlx_tanhf(x)
#define RLX_RTANH_d(x) tanh(x)
#define RLX_RABS_f(x) fabsf(x)
#define RLX_RABS_d(x) fabs(x)

/* Each helper runs over a row (of CT values), rounding to T as the reference's ops do
 * (nothing to do for f32/f64): loops the compiler vectorises. */
#define RLX_RECURRENT(sfx, T, CT, CF, LOAD, STORE, ...)                                   \
    RLX_INLINE CT rlx_rr_##sfx(CT v) { return (CT)LOAD(STORE(v)); }                       \
    /* an activation, alpha/beta as an op's params (a, b: in CT) or as constants (at,   \
     * bt: rounded to T) */                                                               \
    typedef struct {                                                                      \
        int64_t kind;                                                                     \
        CT a, b, at, bt;                                                                  \
    } rlx_ract_t_##sfx;                                                                   \
    static void rlx_ract_row_##sfx(const rlx_ract_t_##sfx *f, CT *v, int64_t n) {         \
        const CT a = f->a, b = f->b, at = f->at, bt = f->bt;                              \
        int64_t i;                                                                        \
        int e = 0;                                                                        \
        switch (f->kind) {                                                                \
        case RLX_RACT_SIGMOID:                                                            \
            for (i = 0; i < n; i++) v[i] = rlx_rr_##sfx(rlx_s_sigmoid_##CF(v[i]));        \
            break;                                                                        \
        case RLX_RACT_TANH:                                                               \
            for (i = 0; i < n; i++) v[i] = rlx_rr_##sfx(RLX_RTANH_##CF(v[i]));            \
            break;                                                                        \
        case RLX_RACT_RELU:                                                               \
            for (i = 0; i < n; i++) v[i] = rlx_s_relu_##CF(v[i]);                         \
            break;                                                                        \
        case RLX_RACT_LEAKY_RELU:                                                         \
            for (i = 0; i < n; i++) v[i] = rlx_rr_##sfx(v[i] < 0 ? v[i] * a : v[i]);      \
            break;                                                                        \
        case RLX_RACT_THRESHOLDED_RELU:                                                   \
            for (i = 0; i < n; i++) v[i] = v[i] > at ? v[i] : (CT)0;                      \
            break;                                                                        \
        case RLX_RACT_ELU:                                                                \
            for (i = 0; i < n; i++) {                                                     \
                CT m = rlx_rr_##sfx(rlx_rr_##sfx(rlx_s_exp_##CF(v[i])) - 1);              \
                v[i] = v[i] < 0 ? rlx_rr_##sfx(m * at) : v[i];                            \
            }                                                                             \
            break;                                                                        \
        case RLX_RACT_SOFTSIGN:                                                           \
            for (i = 0; i < n; i++)                                                       \
                v[i] = rlx_rr_##sfx(v[i] / rlx_rr_##sfx(RLX_RABS_##CF(v[i]) + 1));       \
            break;                                                                        \
        case RLX_RACT_SOFTPLUS:                                                           \
            for (i = 0; i < n; i++) v[i] = rlx_rr_##sfx(rlx_s_softplus_##CF(v[i]));       \
            break;                                                                        \
        case RLX_RACT_HARD_SIGMOID:                                                       \
            for (i = 0; i < n; i++)                                                       \
                v[i] = rlx_rr_##sfx(                                                      \
                    rlx_s_max_##CF(rlx_s_min_##CF(v[i] * a + b, 1, &e), 0, &e));          \
            break;                                                                        \
        case RLX_RACT_SCALED_TANH:                                                        \
            for (i = 0; i < n; i++)                                                       \
                v[i] = rlx_rr_##sfx(rlx_rr_##sfx(RLX_RTANH_##CF(rlx_rr_##sfx(v[i] * bt))) * at); \
            break;                                                                        \
        default: /* affine */                                                             \
            for (i = 0; i < n; i++) v[i] = rlx_rr_##sfx(rlx_rr_##sfx(v[i] * at) + bt);    \
        }                                                                                 \
    }                                                                                     \
    /* y = a + b */                                                                       \
    static void rlx_radd_##sfx(CT *y, const CT *a, const CT *b, int64_t n) {              \
        int64_t i;                                                                        \
        for (i = 0; i < n; i++) y[i] = rlx_rr_##sfx(a[i] + b[i]);                         \
    }                                                                                     \
    /* y = y + p * c (a peephole) */                                                      \
    static void rlx_rpeep_##sfx(CT *y, const CT *p, const CT *c, int64_t n) {             \
        int64_t i;                                                                        \
        for (i = 0; i < n; i++) y[i] = rlx_rr_##sfx(y[i] + rlx_rr_##sfx(p[i] * c[i]));    \
    }                                                                                     \
    /* y = min(max(y, -c), c) */                                                          \
    static void rlx_rclip_##sfx(CT *y, CT c, int64_t n) {                                 \
        int64_t i;                                                                        \
        int e = 0;                                                                        \
        for (i = 0; i < n; i++) y[i] = rlx_s_min_##CF(rlx_s_max_##CF(y[i], -c, &e), c, &e); \
    }                                                                                     \
    /* quantize v[0..n) (of T when is_t, else CT) to u8 by its own range, less the zero  \
     * point (the reference's quantized_product), into q; returns the scale */            \
    static CT rlx_rquant_##sfx(const void *v, int is_t, int64_t n, int16_t *q) {          \
        CT hi = 0, lo = 0, scale, step, zp;                                               \
        int any_nan = 0, e = 0;                                                           \
        int64_t k;                                                                        \
        for (k = 0; k < n; k++) {                                                         \
            CT x = is_t ? (CT)LOAD(((const T *)v)[k]) : ((const CT *)v)[k];               \
            any_nan |= x != x;                                                            \
            hi = x > hi ? x : hi;                                                         \
            lo = x < lo ? x : lo;                                                         \
        }                                                                                 \
        if (any_nan) hi = lo = (CT)NAN;                                                   \
        scale = rlx_rr_##sfx(rlx_rr_##sfx(hi - lo) / (CT)255);                            \
        step = scale == 0 ? (CT)1 : scale;                                                \
        zp = rlx_s_round_##CF(rlx_rr_##sfx(-lo / step));                                 \
        zp = rlx_s_min_##CF(rlx_s_max_##CF(zp, 0, &e), 255, &e);                          \
        for (k = 0; k < n; k++) {                                                         \
            CT x = is_t ? (CT)LOAD(((const T *)v)[k]) : ((const CT *)v)[k];               \
            x = rlx_rr_##sfx(rlx_rr_##sfx(rlx_s_round_##CF(rlx_rr_##sfx(x / step))) + zp); \
            x = rlx_s_min_##CF(rlx_s_max_##CF(x, 0, &e), 255, &e);                        \
            q[k] = rlx_rq_int((double)rlx_rr_##sfx(x - zp));                              \
        }                                                                                 \
        return scale;                                                                     \
    }                                                                                     \
    /* out[m, n] = (q[m] . (M[d, n] - zp)) * (scale[m] * ms[n or 0]) for the rows of q    \
     * ([rows, K]) and the 8-bit weight M [dirs, N, K] with its zero points (per row n     \
     * or one) */                                                                         \
    static void rlx_rqproduct_##sfx(int64_t M, int64_t N, int64_t K, const int16_t *q,    \
                                    const CT *vscale, int64_t vstride, const void *m,     \
                                    int is_signed, const void *zp, int per_row, int64_t d, \
                                    const T *ms, CT *out, int64_t ldo) {                  \
        int64_t r, n, k;                                                                  \
        for (r = 0; r < M; r++) {                                                         \
            const int16_t *qr = q + r * K;                                                \
            CT vs = vscale[r * vstride];                                                  \
            int32_t qsum = 0;                                                             \
            for (k = 0; k < K; k++) qsum += qr[k];                                        \
            for (n = 0; n < N; n++) {                                                     \
                int64_t row = d * N + n, at = per_row ? row : d;                          \
                int32_t z = zp ? rlx_rq_weight(zp, is_signed, at) : 0;                    \
                const void *w = is_signed ? (const void *)((const int8_t *)m + row * K)    \
                                          : (const void *)((const uint8_t *)m + row * K); \
                int32_t acc = rlx_rq_dot(qr, w, is_signed, K) - z * qsum;                 \
                CT s = rlx_rr_##sfx(vs * (CT)LOAD(ms[at]));                               \
                out[r * ldo + n] = rlx_rr_##sfx(rlx_rr_##sfx((CT)acc) * s);               \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
    /* n values of T as CT: the values themselves when T is CT, else converted into buf */ \
    static const CT *rlx_rct_##sfx(const void *src, int64_t n, CT *buf) {                 \
        const T *s = (const T *)src;                                                      \
        int64_t i;                                                                        \
        if (sizeof(T) == sizeof(CT)) return (const CT *)src;                              \
        for (i = 0; i < n; i++) buf[i] = (CT)LOAD(s[i]);                                  \
        return buf;                                                                       \
    }                                                                                     \
    RLX_RECURRENT_SIG(rlx_recurrent_##sfx) {                                              \
        const int64_t kind = geom[RLX_RG_KIND], S = geom[RLX_RG_SEQ], B = geom[RLX_RG_BATCH]; \
        const int64_t I = geom[RLX_RG_INPUT], H = geom[RLX_RG_HIDDEN], D = geom[RLX_RG_DIRS]; \
        const int64_t G = kind == 0 ? 1 : kind == 1 ? 3 : 4, GH = G * H;                  \
        const int64_t per = kind == 0 ? 1 : kind == 1 ? 2 : 3;                            \
        const int bf = (int)geom[RLX_RG_BATCH_FIRST], lbr = (int)geom[RLX_RG_LINEAR_BEFORE_RESET]; \
        const int input_forget = (int)geom[RLX_RG_INPUT_FORGET];                          \
        const int64_t lens_kind = geom[RLX_RG_LENS], quant = geom[RLX_RG_QUANTIZED];      \
        const int convert = sizeof(T) != sizeof(CT), has_clip = (int)geom[RLX_RG_CLIP];   \
        const CT ct = rlx_rr_##sfx((CT)clip);                                             \
        /* scratch: see the emitter (kernels.py) */                                       \
        CT *proj = (CT *)scratch, *rec = proj + S * B * GH, *hs = rec + B * GH;            \
        CT *cs = hs + B * H, *hn = cs + B * H, *cn = hn + B * H, *tmp = cn + B * H;         \
        CT *bsum = tmp + B * H, *rbh = bsum + GH, *peep = rbh + H, *vsc = peep + 3 * H;    \
        CT *xc = vsc + B, *wc = xc + (convert ? S * B * I : 0);                            \
        CT *rc = wc + (convert ? GH * I : 0), *cend = rc + (convert ? GH * H : 0);         \
        int16_t *qx = (int16_t *)cend, *qh = qx + (quant ? S * B * I : 0);                 \
        const CT *xct = NULL;                                                             \
        CT xs = 0;                                                                        \
        T *py = (T *)y, *pyh = (T *)yh, *pyc = (T *)yc;                                   \
        int64_t d, s, b_, j;                                                              \
        if (quant)                                                                        \
            xs = rlx_rquant_##sfx(x, 1, S * B * I, qx); /* X as one tensor */             \
        else                                                                              \
            xct = rlx_rct_##sfx(x, S * B * I, xc);                                        \
        for (d = 0; d < D; d++) {                                                         \
            const int backwards = (int)geom[RLX_RG_BACKWARDS0 + d];                       \
            const CT *rct = NULL, *pp = NULL;                                             \
            rlx_ract_t_##sfx act[3];                                                      \
            for (j = 0; j < per; j++) {                                                   \
                double ab[2];                                                             \
                memcpy(ab, (const uint8_t *)act_params + 16 * (d * per + j), 16);         \
                act[j].kind = acts[d * per + j];                                          \
                act[j].a = (CT)ab[0];                                                     \
                act[j].b = (CT)ab[1];                                                     \
                act[j].at = rlx_rr_##sfx((CT)ab[0]);                                      \
                act[j].bt = rlx_rr_##sfx((CT)ab[1]);                                      \
            }                                                                             \
            /* the input projection of every step, in X's row order, and the biases */    \
            if (quant) {                                                                  \
                rlx_rqproduct_##sfx(S * B, GH, I, qx, &xs, 0, w, (int)(quant >> 1 & 1), w_zp, \
                                    (int)geom[RLX_RG_W_PER_ROW], d, (const T *)w_scale, proj, GH); \
            } else {                                                                      \
                const CT *wct = rlx_rct_##sfx((const T *)w + d * GH * I, GH * I, wc);      \
                rlx_gemm_##CF(S * B, GH, I, xct, I, wct, I, 1, proj, GH);                 \
                if (convert)                                                              \
                    for (j = 0; j < S * B * GH; j++) proj[j] = rlx_rr_##sfx(proj[j]);     \
                rct = rlx_rct_##sfx((const T *)r + d * GH * H, GH * H, rc);               \
            }                                                                             \
            if (bias) {                                                                   \
                const T *pb = (const T *)bias + d * 2 * GH;                               \
                for (j = 0; j < GH; j++) {                                                \
                    CT wb = (CT)LOAD(pb[j]), rb = (CT)LOAD(pb[GH + j]);                   \
                    /* a GRU resetting before its linear step keeps Rb's h block apart */ \
                    bsum[j] = (kind == 1 && lbr && j >= 2 * H) ? wb : rlx_rr_##sfx(wb + rb); \
                }                                                                         \
                for (j = 0; j < H; j++) rbh[j] = (CT)LOAD(pb[GH + 2 * H + j]);            \
                for (s = 0; s < S * B; s++) rlx_radd_##sfx(proj + s * GH, proj + s * GH, bsum, GH); \
            }                                                                             \
            if (peepholes) {                                                              \
                for (j = 0; j < 3 * H; j++)                                               \
                    peep[j] = (CT)LOAD(((const T *)peepholes)[d * 3 * H + j]);            \
                pp = peep;                                                                \
            }                                                                             \
            for (b_ = 0; b_ < B; b_++) {                                                  \
                int64_t at = (bf ? b_ * D + d : d * B + b_) * H;                          \
                for (j = 0; j < H; j++) {                                                 \
                    hs[b_ * H + j] = initial_h ? (CT)LOAD(((const T *)initial_h)[at + j]) : (CT)0; \
                    cs[b_ * H + j] = initial_c ? (CT)LOAD(((const T *)initial_c)[at + j]) : (CT)0; \
                }                                                                         \
            }                                                                             \
            for (s = 0; s < S; s++) {                                                     \
                const int64_t t = backwards ? S - 1 - s : s;                              \
                /* the recurrent product rec = H R^T, [B, GH] (a GRU's candidate block    \
                 * waits for the reset gate unless it resets after its linear step) */     \
                if (quant) {                                                              \
                    for (b_ = 0; b_ < B; b_++)                                            \
                        vsc[b_] = rlx_rquant_##sfx(hs + b_ * H, 0, H, qh + b_ * H);       \
                    rlx_rqproduct_##sfx(B, GH, H, qh, vsc, 1, r, (int)(quant >> 2 & 1), r_zp, \
                                        (int)geom[RLX_RG_R_PER_ROW], d, (const T *)r_scale, rec, GH); \
                } else {                                                                  \
                    int64_t n = kind == 1 && !lbr ? 2 * H : GH;                           \
                    rlx_rproduct_##CF(B, n, H, hs, H, rct, H, rec, GH);                   \
                    if (convert)                                                          \
                        for (b_ = 0; b_ < B; b_++)                                        \
                            for (j = 0; j < n; j++)                                       \
                                rec[b_ * GH + j] = rlx_rr_##sfx(rec[b_ * GH + j]);        \
                }                                                                         \
                for (b_ = 0; b_ < B; b_++) {                                              \
                    const CT *pr = proj + (bf ? b_ * S + t : t * B + b_) * GH;             \
                    const CT *hp = hs + b_ * H, *cp = cs + b_ * H;                        \
                    CT *g = rec + b_ * GH, *hw = hn + b_ * H, *cw = cn + b_ * H;           \
                    CT *tw = tmp + b_ * H;                                                \
                    if (kind == 0) {                                                      \
                        rlx_radd_##sfx(hw, pr, g, H);                                     \
                        if (has_clip) rlx_rclip_##sfx(hw, ct, H);                         \
                        rlx_ract_row_##sfx(&act[0], hw, H);                               \
                    } else if (kind == 1) {                                               \
                        /* z, r; then r * H, or r * (H R_h^T + Rb_h) */                   \
                        rlx_radd_##sfx(g, pr, g, 2 * H);                                  \
                        if (has_clip) rlx_rclip_##sfx(g, ct, 2 * H);                      \
                        rlx_ract_row_##sfx(&act[0], g, 2 * H);                            \
                        if (lbr) {                                                        \
                            if (bias) rlx_radd_##sfx(g + 2 * H, g + 2 * H, rbh, H);       \
                            for (j = 0; j < H; j++) tw[j] = rlx_rr_##sfx(g[H + j] * g[2 * H + j]); \
                        } else {                                                          \
                            for (j = 0; j < H; j++) tw[j] = rlx_rr_##sfx(g[H + j] * hp[j]); \
                        }                                                                 \
                    } else {                                                              \
                        /* gate blocks i, o, f, c */                                      \
                        CT *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;        \
                        rlx_radd_##sfx(g, pr, g, GH);                                     \
                        if (pp) rlx_rpeep_##sfx(gi, pp, cp, H);                           \
                        if (has_clip) rlx_rclip_##sfx(gi, ct, H);                         \
                        rlx_ract_row_##sfx(&act[0], gi, H);                               \
                        if (input_forget) {                                               \
                            for (j = 0; j < H; j++) gf[j] = rlx_rr_##sfx((CT)1 - gi[j]);  \
                        } else {                                                          \
                            if (pp) rlx_rpeep_##sfx(gf, pp + 2 * H, cp, H);               \
                            if (has_clip) rlx_rclip_##sfx(gf, ct, H);                     \
                            rlx_ract_row_##sfx(&act[0], gf, H);                           \
                        }                                                                 \
                        if (has_clip) rlx_rclip_##sfx(gc, ct, H);                         \
                        rlx_ract_row_##sfx(&act[1], gc, H);                               \
                        for (j = 0; j < H; j++)                                           \
                            cw[j] = rlx_rr_##sfx(rlx_rr_##sfx(gf[j] * cp[j]) + rlx_rr_##sfx(gi[j] * gc[j])); \
                        if (pp) rlx_rpeep_##sfx(go, pp + H, cw, H);                       \
                        if (has_clip) rlx_rclip_##sfx(go, ct, H);                         \
                        rlx_ract_row_##sfx(&act[0], go, H);                               \
                        memcpy(hw, cw, (size_t)H * sizeof(CT));                           \
                        rlx_ract_row_##sfx(&act[2], hw, H);                               \
                        for (j = 0; j < H; j++) hw[j] = rlx_rr_##sfx(go[j] * hw[j]);      \
                    }                                                                     \
                }                                                                         \
                if (kind == 1) {                                                          \
                    /* the candidate's product (r * H) R_h^T, then H' = (1 - z) h~ + z H */ \
                    if (!lbr) {                                                           \
                        rlx_rproduct_##CF(B, H, H, tmp, H, rct + 2 * H * H, H, rec + 2 * H, GH); \
                        if (convert)                                                      \
                            for (b_ = 0; b_ < B; b_++)                                    \
                                for (j = 0; j < H; j++)                                   \
                                    rec[b_ * GH + 2 * H + j] = rlx_rr_##sfx(rec[b_ * GH + 2 * H + j]); \
                    }                                                                     \
                    for (b_ = 0; b_ < B; b_++) {                                          \
                        const CT *pr = proj + (bf ? b_ * S + t : t * B + b_) * GH;         \
                        const CT *z = rec + b_ * GH, *hp = hs + b_ * H;                   \
                        CT *cand = rec + b_ * GH + 2 * H, *hw = hn + b_ * H;              \
                        rlx_radd_##sfx(cand, pr + 2 * H, lbr ? tmp + b_ * H : cand, H);   \
                        if (has_clip) rlx_rclip_##sfx(cand, ct, H);                       \
                        rlx_ract_row_##sfx(&act[1], cand, H);                             \
                        for (j = 0; j < H; j++)                                           \
                            hw[j] = rlx_rr_##sfx(rlx_rr_##sfx(rlx_rr_##sfx((CT)1 - z[j]) * cand[j]) + \
                                                 rlx_rr_##sfx(z[j] * hp[j]));             \
                    }                                                                     \
                }                                                                         \
                /* the new states of the rows still running, every row's output */        \
                for (b_ = 0; b_ < B; b_++) {                                              \
                    int64_t len = lens_kind == 2   ? (int64_t)((const int32_t *)lens)[b_] \
                                  : lens_kind == 3 ? ((const int64_t *)lens)[b_]          \
                                                   : S;                                   \
                    T *out = py + (bf ? (b_ * S + t) * D + d : (t * D + d) * B + b_) * H; \
                    if (t < len) {                                                        \
                        memcpy(hs + b_ * H, hn + b_ * H, (size_t)H * sizeof(CT));          \
                        if (kind == 2) memcpy(cs + b_ * H, cn + b_ * H, (size_t)H * sizeof(CT)); \
                        for (j = 0; j < H; j++) out[j] = STORE(hs[b_ * H + j]);           \
                    } else {                                                              \
                        for (j = 0; j < H; j++) out[j] = STORE((CT)0);                    \
                    }                                                                     \
                }                                                                         \
            }                                                                             \
            for (b_ = 0; b_ < B; b_++) {                                                  \
                int64_t at = (bf ? b_ * D + d : d * B + b_) * H;                          \
                for (j = 0; j < H; j++) {                                                 \
                    pyh[at + j] = STORE(hs[b_ * H + j]);                                  \
                    if (pyc) pyc[at + j] = STORE(cs[b_ * H + j]);                         \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
        return 0;                                                                         \
    }
RLX_FLOAT_TYPES(RLX_RECURRENT, _)
