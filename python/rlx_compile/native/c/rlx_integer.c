/* Integer matmul and convolution: exact int32 sums of (x - zx) * w, then the f32
 * epilogue of mir.integer_matmul / mir.integer_conv: f32(acc) * scale (+ bias) ->
 * activation (-> requantise: saturate(rint(v / out_scale) + out_zp)). */
#include "rlx_scalar.h"

#define RLX_QT_f32 float
#define RLX_QT_i8 int8_t
#define RLX_QT_u8 uint8_t
#define RLX_XT_i8 int8_t
#define RLX_XT_u8 uint8_t
/* the result of one element: f32 as is, or requantised */
#define RLX_STORE_f32(v, s, z) (v)
#define RLX_STORE_i8(v, s, z) rlx_f2i_i8((double)(nearbyintf((v) / (s)) + (z)))
#define RLX_STORE_u8(v, s, z) rlx_f2i_u8((double)(nearbyintf((v) / (s)) + (z)))

/* An accumulator row += w * (x - z) over [lo, hi): restrict, so that the compiler knows
 * the (char-typed) input cannot alias the int32 row and vectorises it. */
#define RLX_ROW_TAPS 64
#define RLX_ACC_ROW(XS)                                                                 \
    static void rlx_acc_row_##XS(int32_t *restrict ar, const RLX_XT_##XS *restrict xs,   \
                                 int64_t lo, int64_t hi, int32_t wv, int32_t z) {        \
        int64_t i;                                                                      \
        for (i = lo; i < hi; i++) ar[i] += wv * ((int32_t)xs[i] - z);                   \
    }
RLX_ACC_ROW(i8)
RLX_ACC_ROW(u8)

#define RLX_INTEGER_KERNELS(XS, out)                                                     \
    RLX_INTEGER_MATMUL_SIG(rlx_integer_matmul_##XS##_##out) {                            \
        const RLX_XT_##XS *px = (const RLX_XT_##XS *)x;                                   \
        const int8_t *pw = (const int8_t *)w;                                           \
        const float *ps = (const float *)scale, *pb = (const float *)bias;              \
        RLX_QT_##out *py = (RLX_QT_##out *)y;                                           \
        int32_t *a = (int32_t *)acc;                                                    \
        float os = (float)out_scale, oz = (float)out_zp;                                \
        int64_t r, k, j, nb = 1, bi, idx[RLX_MAX_RANK] = {0}, off[2] = {0, 0};          \
        const int64_t *st[2];                                                           \
        int d;                                                                          \
        st[0] = a_bstrides;                                                             \
        st[1] = b_bstrides;                                                             \
        (void)os;                                                                       \
        (void)oz;                                                                       \
        for (d = 0; d < (int)batch_rank; d++) nb *= batch_shape[d];                     \
        for (bi = 0; bi < nb; bi++) {                                                   \
            for (r = 0; r < M; r++) {                                                   \
                const RLX_XT_##XS *xr = px + off[0] + r * K;                            \
                RLX_QT_##out *yr = py + (bi * M + r) * N;                               \
                for (j = 0; j < N; j++) a[j] = 0;                                       \
                for (k = 0; k < K; k++) {                                               \
                    int32_t v = (int32_t)xr[k] - (int32_t)zx;                           \
                    const int8_t *wr = pw + off[1] + k * N;                             \
                    if (v == 0) continue;                                               \
                    for (j = 0; j < N; j++) a[j] += v * (int32_t)wr[j];                 \
                }                                                                       \
                for (j = 0; j < N; j++) {                                               \
                    float t = (float)a[j] * ps[j];                                      \
                    if (pb) t = t + pb[j];                                              \
                    t = rlx_activation_f(t, act);                                       \
                    yr[j] = RLX_STORE_##out(t, os, oz);                                 \
                }                                                                       \
            }                                                                           \
            rlx_next_index(batch_rank, batch_shape, idx, 2, off, st);                   \
        }                                                                               \
        return 0;                                                                       \
    }                                                                                   \
    RLX_INTEGER_CONV_SIG(rlx_integer_conv_##XS##_##out) {                                \
        const int64_t *g = geom, *in = g + 5, *kk = g + 8, *o = g + 11, *sd = g + 14;   \
        const int64_t *pd = g + 17, *dl = g + 20;                                       \
        int64_t N = g[1], Cin = g[2], Cout = g[3], G = g[4], cg = Cin / G, cog = Cout / G; \
        int64_t S = in[0] * in[1] * in[2], P = o[0] * o[1] * o[2], K = kk[0] * kk[1] * kk[2]; \
        const RLX_XT_##XS *px = (const RLX_XT_##XS *)x;                                   \
        const int8_t *pw = (const int8_t *)w;                                           \
        const float *ps = (const float *)scale, *pb = (const float *)bias;              \
        RLX_QT_##out *py = (RLX_QT_##out *)y;                                           \
        int32_t *a = (int32_t *)acc, z = (int32_t)zx;                                   \
        float os = (float)out_scale, oz = (float)out_zp;                                \
        int64_t n, oc, c, o0, o1, o2, k0, k1, k2;                                       \
        int64_t lo_k[RLX_ROW_TAPS], hi_k[RLX_ROW_TAPS];                                 \
        (void)os;                                                                       \
        (void)oz;                                                                       \
        if (kk[2] > RLX_ROW_TAPS) return 1;                                             \
        /* each tap's range of output columns reading inside the row: once per call */  \
        for (k2 = 0; k2 < kk[2]; k2++)                                                  \
            rlx_tap_range(in[2], sd[2], k2 * dl[2] - pd[2], o[2], &lo_k[k2], &hi_k[k2]); \
        for (n = 0; n < N; n++)                                                         \
            for (oc = 0; oc < Cout; oc++) {                                             \
                int64_t gi = oc / cog;                                                  \
                for (o2 = 0; o2 < P; o2++) a[o2] = 0;                                   \
                for (c = 0; c < cg; c++) {                                              \
                    const RLX_XT_##XS *xc = px + (n * Cin + gi * cg + c) * S;            \
                    const int8_t *wc = pw + (oc * cg + c) * K;                          \
                    for (o0 = 0; o0 < o[0]; o0++)                                       \
                        for (o1 = 0; o1 < o[1]; o1++) {                                 \
                            int32_t *ar = a + (o0 * o[1] + o1) * o[2];                  \
                            for (k0 = 0; k0 < kk[0]; k0++) {                            \
                                int64_t i0 = o0 * sd[0] - pd[0] + k0 * dl[0];           \
                                if (i0 < 0 || i0 >= in[0]) continue;                    \
                                for (k1 = 0; k1 < kk[1]; k1++) {                        \
                                    int64_t i1 = o1 * sd[1] - pd[1] + k1 * dl[1];       \
                                    const RLX_XT_##XS *xr = xc + (i0 * in[1] + i1) * in[2]; \
                                    const int8_t *wr = wc + (k0 * kk[1] + k1) * kk[2];  \
                                    if (i1 < 0 || i1 >= in[1]) continue;                \
                                    for (k2 = 0; k2 < kk[2]; k2++) {                    \
                                        int64_t off = k2 * dl[2] - pd[2];               \
                                        int64_t lo = lo_k[k2], hi = hi_k[k2];           \
                                        int32_t wv = wr[k2];                            \
                                        if (sd[2] == 1)                                 \
                                            rlx_acc_row_##XS(ar, xr + off, lo, hi, wv, z); \
                                        else                                            \
                                            for (o2 = lo; o2 < hi; o2++)                \
                                                ar[o2] += wv * ((int32_t)xr[o2 * sd[2] + off] - z); \
                                    }                                                   \
                                }                                                       \
                            }                                                           \
                        }                                                               \
                }                                                                       \
                {                                                                       \
                    RLX_QT_##out *yo = py + (n * Cout + oc) * P;                        \
                    float sc = ps[oc], bi = pb ? pb[oc] : 0.0f;                         \
                    for (o2 = 0; o2 < P; o2++) {                                        \
                        float t = (float)a[o2] * sc;                                    \
                        if (pb) t = t + bi;                                             \
                        t = rlx_activation_f(t, act);                                   \
                        yo[o2] = RLX_STORE_##out(t, os, oz);                            \
                    }                                                                   \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_INTEGER_OUTS(RLX_INTEGER_KERNELS, i8)
RLX_INTEGER_OUTS(RLX_INTEGER_KERNELS, u8)
