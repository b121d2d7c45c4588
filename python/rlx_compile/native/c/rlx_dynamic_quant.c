/* ONNX's dynamic quantisation: DynamicQuantizeLinear (u8 with the range's scale and zero
 * point, f32 arithmetic as onnxruntime), MatMulInteger and ConvInteger (exact sums of
 * zero-point-centred 8-bit products; accumulated in uint32 so that an overflowing sum
 * wraps as int32 accumulation does, with no signed overflow), and onnxruntime's
 * DynamicQuantizeMatMul: the first two, then the rescale and the bias in f32. */
#include "rlx_scalar.h"

#define RLX_DQ_i8 int8_t
#define RLX_DQ_u8 uint8_t

int rlx_dynamic_quantize_linear_f32(int64_t n, void *y, void *scale, void *zero_point,
                                    const void *x) {
    const float *px = (const float *)x;
    uint8_t *py = (uint8_t *)y;
    float lo = 0.0f, hi = 0.0f, s, z;
    int64_t i;
    for (i = 0; i < n; i++) {
        if (px[i] < lo) lo = px[i];
        if (px[i] > hi) hi = px[i];
    }
    /* onnxruntime's scale for an all-zero input: 1 */
    s = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    z = -lo / s;
    z = nearbyintf(z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z);
    for (i = 0; i < n; i++) py[i] = rlx_f2i_u8((double)(nearbyintf(px[i] / s) + z));
    *(float *)scale = s;
    *(uint8_t *)zero_point = (uint8_t)z;
    return 0;
}

/* one zero point: none (NULL), one for all, or the index's own */
#define RLX_ZP(T, p, count, i) ((p) ? (int32_t)((const T *)(p))[(count) > 1 ? (i) : 0] : 0)

#define RLX_INTEGER_PRODUCTS(AS, BS)                                                     \
    RLX_MATMUL_INTEGER_SIG(rlx_matmul_integer_##AS##_##BS) {                            \
        const RLX_DQ_##AS *pa = (const RLX_DQ_##AS *)a;                                 \
        const RLX_DQ_##BS *pb = (const RLX_DQ_##BS *)b;                                 \
        int32_t *py = (int32_t *)y;                                                     \
        int64_t r, k, j, nb = 1, bi, idx[RLX_MAX_RANK] = {0}, off[2] = {0, 0};          \
        const int64_t *st[2];                                                           \
        int d;                                                                          \
        st[0] = a_bstrides;                                                             \
        st[1] = b_bstrides;                                                             \
        for (d = 0; d < (int)batch_rank; d++) nb *= batch_shape[d];                     \
        for (bi = 0; bi < nb; bi++) {                                                   \
            for (r = 0; r < M; r++) {                                                   \
                const RLX_DQ_##AS *ar = pa + off[0] + r * K;                            \
                uint32_t *acc = (uint32_t *)(py + (bi * M + r) * N);                    \
                /* a batch folded into rows repeats the per-row zero points */          \
                int32_t za = RLX_ZP(RLX_DQ_##AS, a_zero_point, a_zp_count,              \
                                    a_zp_count > 1 ? r % a_zp_count : 0);               \
                for (j = 0; j < N; j++) acc[j] = 0;                                     \
                for (k = 0; k < K; k++) {                                               \
                    int32_t v = (int32_t)ar[k] - za;                                    \
                    const RLX_DQ_##BS *br = pb + off[1] + k * N;                        \
                    if (v == 0) continue;                                               \
                    for (j = 0; j < N; j++)                                             \
                        acc[j] += (uint32_t)(v * ((int32_t)br[j] -                      \
                                                  RLX_ZP(RLX_DQ_##BS, b_zero_point, b_zp_count, j))); \
                }                                                                       \
            }                                                                           \
            rlx_next_index(batch_rank, batch_shape, idx, 2, off, st);                   \
        }                                                                               \
        return 0;                                                                       \
    }                                                                                   \
    RLX_CONV_INTEGER_SIG(rlx_conv_integer_##AS##_##BS) {                                \
        RLX_INT_CONV_GEOMETRY(geom)                                                     \
        const RLX_DQ_##AS *px = (const RLX_DQ_##AS *)x;                                 \
        const RLX_DQ_##BS *pw = (const RLX_DQ_##BS *)w;                                 \
        int32_t zx = RLX_ZP(RLX_DQ_##AS, x_zero_point, 1, 0);                           \
        int64_t n, oc, c, o0, o1, o2, k0, k1, k2;                                       \
        for (n = 0; n < N; n++)                                                         \
            for (oc = 0; oc < Cout; oc++) {                                             \
                int64_t gi = oc / cog;                                                  \
                int32_t zw = RLX_ZP(RLX_DQ_##BS, w_zero_point, w_zp_count, oc);         \
                uint32_t *acc = (uint32_t *)y + (n * Cout + oc) * P;                    \
                for (o2 = 0; o2 < P; o2++) acc[o2] = 0;                                 \
                for (c = 0; c < cg; c++) {                                              \
                    const RLX_DQ_##AS *xc = px + (n * Cin + gi * cg + c) * S;           \
                    const RLX_DQ_##BS *wc = pw + (oc * cg + c) * K;                     \
                    for (k0 = 0; k0 < kk[0]; k0++)                                      \
                        for (k1 = 0; k1 < kk[1]; k1++)                                  \
                            for (k2 = 0; k2 < kk[2]; k2++) {                            \
                                int32_t wv = (int32_t)wc[(k0 * kk[1] + k1) * kk[2] + k2] - zw; \
                                if (wv == 0) continue;                                  \
                                for (o0 = 0; o0 < o[0]; o0++) {                         \
                                    int64_t i0 = o0 * sd[0] - pd[0] + k0 * dl[0];       \
                                    if (i0 < 0 || i0 >= in[0]) continue;                \
                                    for (o1 = 0; o1 < o[1]; o1++) {                     \
                                        int64_t i1 = o1 * sd[1] - pd[1] + k1 * dl[1];   \
                                        int64_t off = k2 * dl[2] - pd[2], lo, hi;       \
                                        const RLX_DQ_##AS *xr = xc + (i0 * in[1] + i1) * in[2]; \
                                        uint32_t *ar = acc + (o0 * o[1] + o1) * o[2];   \
                                        if (i1 < 0 || i1 >= in[1]) continue;            \
                                        rlx_tap_range(in[2], sd[2], off, o[2], &lo, &hi); \
                                        for (o2 = lo; o2 < hi; o2++)                    \
                                            ar[o2] += (uint32_t)(wv * ((int32_t)xr[o2 * sd[2] + off] - zx)); \
                                    }                                                   \
                                }                                                       \
                            }                                                           \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_INTEGER_PRODUCTS(u8, u8)
RLX_INTEGER_PRODUCTS(u8, i8)
RLX_INTEGER_PRODUCTS(i8, u8)
RLX_INTEGER_PRODUCTS(i8, i8)

/* one value per column, or one for all */
#define RLX_PER_COLUMN(p, count, j) ((const float *)(p))[(count) > 1 ? (j) : 0]

/* x quantised into q, its products with w as int32 in y, then over them in place
 * (float)acc * (scale * w_scale) [+ bias]: each rounding the unfused chain's. */
#define RLX_DYNAMIC_QUANTIZE_MATMUL(BS)                                                  \
    RLX_DYNAMIC_QUANTIZE_MATMUL_SIG(rlx_dynamic_quantize_matmul_f32_##BS) {             \
        const int32_t *acc = (const int32_t *)y;                                        \
        float *py = (float *)y, scale;                                                  \
        uint8_t zp;                                                                     \
        int64_t r, j;                                                                   \
        rlx_dynamic_quantize_linear_f32(M * K, q, &scale, &zp, x);                      \
        rlx_matmul_integer_u8_##BS(0, NULL, NULL, NULL, M, N, K, y, q, w, &zp, 1,        \
                                   w_zero_point, w_zp_count);                           \
        for (r = 0; r < M; r++)                                                         \
            for (j = 0; j < N; j++) {                                                   \
                float v = (float)acc[r * N + j] *                                       \
                          (scale * RLX_PER_COLUMN(w_scale, w_scale_count, j));          \
                if (bias) v += RLX_PER_COLUMN(bias, bias_count, j);                     \
                py[r * N + j] = v;                                                      \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_DYNAMIC_QUANTIZE_MATMUL(u8)
RLX_DYNAMIC_QUANTIZE_MATMUL(i8)
