/* Integer matmul and convolution: exact int32 sums of (x - zx) * (w - zw), then the f32
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
/* a requantised element looked up in the table of its type (table[q mod 256]) */
#define RLX_LOOKUP_f32(tab, q) (q)
#define RLX_LOOKUP_i8(tab, q) (((const int8_t *)(tab))[(uint8_t)(q)])
#define RLX_LOOKUP_u8(tab, q) (((const uint8_t *)(tab))[(uint8_t)(q)])

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

/* ---- the integer GEMM ------------------------------------------------------------ */
/* C[M, N] (row stride ldc) = A[M, K] . B[N, K]^T: int16 panels, rows contiguous along K,
 * exact int32 sums; the packers zero-pad K to a multiple of 32 (rlx_padded_k), so that
 * the dot products run whole vectors with no scalar remainder. The operands are int8 (or u8 minus a zero point) widened to int16, so
 * that each output is a dot product of two contiguous rows -- the i16 multiply-add
 * reduction compilers vectorise (pmaddwd; vpdpwssd with VNNI). A 4 x 2 block of outputs
 * shares its loads (6 rows read per 8 dot products); the N loop runs in panels of B that
 * stay in cache while every row block of A passes over them. */
#define RLX_IGEMM_PANEL_BYTES (128 * 1024)

static void rlx_idot_4x2(int64_t K, const int16_t *restrict a0, const int16_t *restrict a1,
                         const int16_t *restrict a2, const int16_t *restrict a3,
                         const int16_t *restrict b0, const int16_t *restrict b1,
                         int32_t *restrict c, int64_t ldc) {
    int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0, s20 = 0, s21 = 0, s30 = 0, s31 = 0;
    int64_t k;
    for (k = 0; k < K; k++) {
        int32_t x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k], y0 = b0[k], y1 = b1[k];
        s00 += x0 * y0;
        s01 += x0 * y1;
        s10 += x1 * y0;
        s11 += x1 * y1;
        s20 += x2 * y0;
        s21 += x2 * y1;
        s30 += x3 * y0;
        s31 += x3 * y1;
    }
    c[0] = s00;
    c[1] = s01;
    c[ldc] = s10;
    c[ldc + 1] = s11;
    c[2 * ldc] = s20;
    c[2 * ldc + 1] = s21;
    c[3 * ldc] = s30;
    c[3 * ldc + 1] = s31;
}

static int32_t rlx_idot(int64_t K, const int16_t *restrict a, const int16_t *restrict b) {
    int32_t s = 0;
    int64_t k;
    for (k = 0; k < K; k++) s += (int32_t)a[k] * (int32_t)b[k];
    return s;
}

/* K rounded up to 32 int16 (64 bytes: the panels stay vector aligned) */
RLX_INLINE int64_t rlx_padded_k(int64_t n) { return (n + 31) / 32 * 32; }

static void rlx_igemm(int64_t M, int64_t N, int64_t K, const int16_t *A, const int16_t *B,
                      int32_t *C, int64_t ldc) {
    int64_t panel = RLX_IGEMM_PANEL_BYTES / (2 * (K > 0 ? K : 1)), j0, j1, i, j;
    if (panel < 2) panel = 2;
    panel -= panel % 2;
    for (j0 = 0; j0 < N; j0 = j1) {
        j1 = j0 + panel < N ? j0 + panel : N;
        for (i = 0; i + 4 <= M; i += 4) {
            const int16_t *a = A + i * K;
            for (j = j0; j + 2 <= j1; j += 2)
                rlx_idot_4x2(K, a, a + K, a + 2 * K, a + 3 * K, B + j * K, B + (j + 1) * K,
                             C + i * ldc + j, ldc);
            for (; j < j1; j++) {
                int64_t r;
                for (r = 0; r < 4; r++) C[(i + r) * ldc + j] = rlx_idot(K, a + r * K, B + j * K);
            }
        }
        for (; i < M; i++)
            for (j = j0; j < j1; j++) C[i * ldc + j] = rlx_idot(K, A + i * K, B + j * K);
    }
}

/* the f32 epilogue of one row of n int32 sums (scale and bias per element or shared) */
#define RLX_INTEGER_ROW(out, yr, ar, n, SC, BI)                                     \
    {                                                                                   \
        int64_t j_;                                                                     \
        for (j_ = 0; j_ < (n); j_++) {                                                  \
            float t = (float)(ar)[j_] * (SC);                                           \
            if (pb) t = t + (BI);                                                       \
            t = rlx_activation_f(t, act);                                               \
            (yr)[j_] = RLX_STORE_##out(t, os, oz);                                      \
            if (table) (yr)[j_] = RLX_LOOKUP_##out(table, (yr)[j_]);                    \
        }                                                                               \
    }

/* The input offset of each tap (c, k0, k1, k2) from its window's first element. */
static void rlx_tap_offsets(const int64_t *g, int64_t cg, int64_t *offs) {
    const int64_t *in = g + 5, *kk = g + 8, *dl = g + 20;
    int64_t S = in[0] * in[1] * in[2], c, k0, k1, k2;
    for (c = 0; c < cg; c++)
        for (k0 = 0; k0 < kk[0]; k0++)
            for (k1 = 0; k1 < kk[1]; k1++)
                for (k2 = 0; k2 < kk[2]; k2++)
                    *offs++ = c * S + (k0 * dl[0] * in[1] + k1 * dl[1]) * in[2] + k2 * dl[2];
}

/* im2col of a tile of output positions [p0, p1) for the integer GEMM, position-major:
 * cols[p - p0, (c, k0, k1, k2)] = x - zero point, 0 where the tap reads padding and
 * beyond the taps. A window inside the input reads through the tap offsets; a window
 * over the border checks every tap. */
#define RLX_INTEGER_COLS(XS)                                                            \
    static void rlx_integer_cols_##XS(const int64_t *g, const RLX_XT_##XS *xg, int64_t cg, \
                                      int32_t z, int64_t p0, int64_t p1,                \
                                      const int64_t *restrict offs, int16_t *restrict cols) { \
        const int64_t *in = g + 5, *kk = g + 8, *o = g + 11, *sd = g + 14;               \
        const int64_t *pd = g + 17, *dl = g + 20;                                       \
        int64_t S = in[0] * in[1] * in[2], K = kk[0] * kk[1] * kk[2], taps = cg * K;     \
        int64_t kp = rlx_padded_k(taps), p, t, c, k0, k1, k2;                           \
        for (p = p0; p < p1; p++) {                                                     \
            int64_t b2 = (p % o[2]) * sd[2] - pd[2], b1 = ((p / o[2]) % o[1]) * sd[1] - pd[1]; \
            int64_t b0 = (p / (o[2] * o[1])) * sd[0] - pd[0];                           \
            int16_t *dst = cols + (p - p0) * kp;                                        \
            if (b0 >= 0 && b0 + (kk[0] - 1) * dl[0] < in[0] && b1 >= 0 &&               \
                b1 + (kk[1] - 1) * dl[1] < in[1] && b2 >= 0 && b2 + (kk[2] - 1) * dl[2] < in[2]) { \
                const RLX_XT_##XS *xw = xg + (b0 * in[1] + b1) * in[2] + b2;             \
                for (t = 0; t < taps; t++) dst[t] = (int16_t)((int32_t)xw[offs[t]] - z); \
            } else {                                                                    \
                for (c = 0, t = 0; c < cg; c++)                                         \
                    for (k0 = 0; k0 < kk[0]; k0++)                                      \
                        for (k1 = 0; k1 < kk[1]; k1++)                                  \
                            for (k2 = 0; k2 < kk[2]; k2++, t++) {                       \
                                int64_t i0 = b0 + k0 * dl[0], i1 = b1 + k1 * dl[1];     \
                                int64_t i2 = b2 + k2 * dl[2];                           \
                                dst[t] = i0 >= 0 && i0 < in[0] && i1 >= 0 && i1 < in[1] && \
                                                 i2 >= 0 && i2 < in[2]                  \
                                             ? (int16_t)((int32_t)xg[c * S + (i0 * in[1] + i1) * in[2] + i2] - z) \
                                             : 0;                                       \
                            }                                                           \
            }                                                                           \
            for (t = taps; t < kp; t++) dst[t] = 0;                                     \
        }                                                                               \
    }
RLX_INTEGER_COLS(i8)
RLX_INTEGER_COLS(u8)

/* The weight's integers minus its zero point (0 for a symmetric i8 weight). */
#define RLX_INTEGER_MATMUL(XS, WS, out)                                                  \
    RLX_INTEGER_MATMUL_SIG(rlx_integer_matmul_##XS##_##WS##_##out) {                     \
        const RLX_XT_##XS *px = (const RLX_XT_##XS *)x;                                   \
        const RLX_XT_##WS *pw = (const RLX_XT_##WS *)w;                                   \
        int32_t z_w = (int32_t)zw;                                                      \
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
        if (rows > 0) {                                                                 \
            /* acc: [w^T as int16, N x K][rows x K of x - zx][rows x N int32 sums] */   \
            int64_t kp = rlx_padded_k(K), packed = -1, r0, mb;                           \
            int16_t *bt = (int16_t *)acc, *at = bt + N * kp;                            \
            int32_t *sums = (int32_t *)(at + rows * kp);                                \
            for (bi = 0; bi < nb; bi++) {                                               \
                if (off[1] != packed) {                                                 \
                    for (j = 0; j < N * kp; j++) bt[j] = 0;                             \
                    for (k = 0; k < K; k++)                                             \
                        for (j = 0; j < N; j++)                                         \
                            bt[j * kp + k] = (int16_t)((int32_t)pw[off[1] + k * N + j] - z_w); \
                    packed = off[1];                                                    \
                }                                                                       \
                for (r0 = 0; r0 < M; r0 += rows) {                                      \
                    mb = r0 + rows < M ? rows : M - r0;                                 \
                    for (r = 0; r < mb; r++) {                                          \
                        const RLX_XT_##XS *xr = px + off[0] + (r0 + r) * K;             \
                        for (k = 0; k < kp; k++)                                        \
                            at[r * kp + k] = k < K ? (int16_t)((int32_t)xr[k] - (int32_t)zx) : 0; \
                    }                                                                   \
                    rlx_igemm(mb, N, kp, at, bt, sums, N);                              \
                    for (r = 0; r < mb; r++) {                                          \
                        RLX_QT_##out *yr = py + (bi * M + r0 + r) * N;                  \
                        RLX_INTEGER_ROW(out, yr, sums + r * N, N, ps[j_], pb[j_])        \
                    }                                                                   \
                }                                                                       \
                rlx_next_index(batch_rank, batch_shape, idx, 2, off, st);               \
            }                                                                           \
            return 0;                                                                   \
        }                                                                               \
        for (bi = 0; bi < nb; bi++) {                                                   \
            for (r = 0; r < M; r++) {                                                   \
                const RLX_XT_##XS *xr = px + off[0] + r * K;                            \
                RLX_QT_##out *yr = py + (bi * M + r) * N;                               \
                for (j = 0; j < N; j++) a[j] = 0;                                       \
                for (k = 0; k < K; k++) {                                               \
                    int32_t v = (int32_t)xr[k] - (int32_t)zx;                           \
                    const RLX_XT_##WS *wr = pw + off[1] + k * N;                        \
                    if (v == 0) continue;                                               \
                    for (j = 0; j < N; j++) a[j] += v * ((int32_t)wr[j] - z_w);         \
                }                                                                       \
                RLX_INTEGER_ROW(out, yr, a, N, ps[j_], pb[j_])                          \
            }                                                                           \
            rlx_next_index(batch_rank, batch_shape, idx, 2, off, st);                   \
        }                                                                               \
        return 0;                                                                       \
    }
#define RLX_INTEGER_KERNELS(XS, out)                                                     \
    RLX_INTEGER_MATMUL(XS, i8, out)                                                     \
    RLX_INTEGER_MATMUL(XS, u8, out)                                                     \
    RLX_INTEGER_CONV_SIG(rlx_integer_conv_##XS##_##out) {                                \
        RLX_INT_CONV_GEOMETRY(geom)                                                     \
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
        if (g[0] == 2) {                                                                \
            /* acc: [w as int16, Cout x taps][tile x taps cols][cog x tile int32 sums] */ \
            int64_t taps = cg * K, tile = g[23], p0, tp, i, gr;                         \
            int64_t kp = rlx_padded_k(taps);                                             \
            int16_t *wt = (int16_t *)acc, *cols = wt + Cout * kp;                       \
            int32_t *sums = (int32_t *)(cols + tile * kp);                              \
            int64_t *offs = (int64_t *)(sums + cog * tile + (cog * tile) % 2);          \
            rlx_tap_offsets(g, cg, offs);                                               \
            for (oc = 0; oc < Cout; oc++)                                               \
                for (i = 0; i < kp; i++) wt[oc * kp + i] = i < taps ? pw[oc * taps + i] : 0; \
            for (n = 0; n < N; n++)                                                     \
                for (gr = 0; gr < G; gr++)                                              \
                    for (p0 = 0; p0 < P; p0 += tile) {                                  \
                        tp = p0 + tile < P ? tile : P - p0;                             \
                        rlx_integer_cols_##XS(g, px + (n * Cin + gr * cg) * S, cg, z, p0, p0 + tp, offs, cols); \
                        rlx_igemm(cog, tp, kp, wt + gr * cog * kp, cols, sums, tp);      \
                        for (oc = gr * cog; oc < (gr + 1) * cog; oc++) {               \
                            RLX_QT_##out *yo = py + (n * Cout + oc) * P + p0;           \
                            float sc = ps[oc], bi = pb ? pb[oc] : 0.0f;                 \
                            RLX_INTEGER_ROW(out, yo, sums + (oc - gr * cog) * tp, tp, sc, bi)   \
                        }                                                               \
                    }                                                                   \
            return 0;                                                                   \
        }                                                                               \
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
                    RLX_INTEGER_ROW(out, yo, a, P, sc, bi)                              \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_INTEGER_OUTS(RLX_INTEGER_KERNELS, i8)
RLX_INTEGER_OUTS(RLX_INTEGER_KERNELS, u8)

/* ---- quantized add ---------------------------------------------------------------- */
/* As the reference's ops compute it: each difference exact, its f32 product with the
 * scale, the f32 sum, relu when asked, then saturate(rint(sum / y_scale) + y_zp). The
 * operands broadcast through element strides, row by row as the elementwise kernels
 * read theirs; rows both operands hold contiguously take a loop of their own. */
#define RLX_QUANTIZED_ADD_AT(YS, iy, ia, ib)                                            \
    {                                                                                   \
        float va = (float)((double)ra[ia] - (double)a_zp) * sa;                         \
        float vb = (float)((double)rb[ib] - (double)b_zp) * sb;                         \
        float v = va + vb;                                                              \
        if (relu && v < 0.0f) v = 0.0f;                                                 \
        py[iy] = RLX_STORE_##YS(v, sy, zy);                                             \
    }
#define RLX_QUANTIZED_ADD(AS, BS, YS)                                                   \
    RLX_QUANTIZED_ADD_SIG(rlx_quantized_add_##AS##_##BS##_##YS) {                       \
        const RLX_XT_##AS *pa = (const RLX_XT_##AS *)a;                                 \
        const RLX_XT_##BS *pb = (const RLX_XT_##BS *)b;                                 \
        RLX_QT_##YS *py = (RLX_QT_##YS *)y;                                             \
        float sa = (float)a_scale, sb = (float)b_scale, sy = (float)y_scale;            \
        float zy = (float)y_zp;                                                         \
        RLX_TWO_OPERAND_ROWS(sa_, sb_)                                                  \
        for (r = 0; r < rows; r++, py += n) {                                           \
            const RLX_XT_##AS *ra = pa + off[0];                                        \
            const RLX_XT_##BS *rb = pb + off[1];                                        \
            if (s1 == 1 && s2 == 1) {                                                   \
                for (i = 0; i < n; i++) RLX_QUANTIZED_ADD_AT(YS, i, i, i)               \
            } else {                                                                    \
                for (i = 0; i < n; i++) RLX_QUANTIZED_ADD_AT(YS, i, i * s1, i * s2)     \
            }                                                                           \
            rlx_advance(rank, shape, idx, 2, off, st);                                  \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_8BIT_PAIRS(RLX_QUANTIZED_ADD, i8)
RLX_8BIT_PAIRS(RLX_QUANTIZED_ADD, u8)

/* ---- quantized average pool ------------------------------------------------------- */
/* Per window the exact int32 sum of (x - x_zp) over the taps inside the input (the float
 * pools' window walk) and mir.avg_pool's count, then the reference's f32 steps:
 * saturate(rint((f32(sum) / f32(count)) * f32(x_scale / y_scale)) + y_zp). */
/* (the kernel's acc, geom and include_pad) */
#define RLX_QUANTIZED_POOL_TAP(a, v, S, z, m, zy) (a) += (int32_t)(v) - (z)
#define RLX_QUANTIZED_POOL_ROW(yr, n, o0, o1, S, z, m, zy)                              \
    {                                                                                   \
        int64_t j_, c01_ = rlx_pool_count(geom, include_pad, 0, o0) *                   \
                           rlx_pool_count(geom, include_pad, 1, o1);                    \
        for (j_ = 0; j_ < (n); j_++) {                                                  \
            float mean_ = (float)acc[j_] / (float)(c01_ * rlx_pool_count(geom, include_pad, 2, j_)); \
            (yr)[j_] = RLX_STORE_##S(mean_ * (m), 1.0f, zy);                            \
        }                                                                               \
    }
#define RLX_QUANTIZED_AVG_POOL(S)                                                        \
    RLX_QUANTIZED_AVG_POOL_SIG(rlx_quantized_avg_pool_##S) {                              \
        int32_t *acc = (int32_t *)scratch, z = (int32_t)x_zp;                           \
        float m = (float)(x_scale / y_scale), zy = (float)y_zp;                         \
        RLX_POOL_WINDOWS(geom, RLX_XT_##S, RLX_QT_##S, (const RLX_XT_##S *)x,           \
                         (RLX_QT_##S *)y, acc, 0, RLX_QUANTIZED_POOL_TAP,               \
                         RLX_QUANTIZED_POOL_ROW, S, z, m, zy)                           \
        return 0;                                                                       \
    }
RLX_QUANTIZED_AVG_POOL(i8)
RLX_QUANTIZED_AVG_POOL(u8)

/* ---- quantized softmax ------------------------------------------------------------ */
/* Per row (n elements, stride inner): its max m, the exact int64 sum S of table[m - x_k],
 * then the reference's f32 steps: saturate(rint(f32(f32(table[m - x_k]) / f32(S)) /
 * f32(y_scale)) + y_zp). */
#define RLX_QUANTIZED_SOFTMAX(XS, YS, _)                                                \
    RLX_QUANTIZED_SOFTMAX_SIG(rlx_quantized_softmax_##XS##_##YS) {                      \
        const RLX_XT_##XS *px = (const RLX_XT_##XS *)x;                                 \
        RLX_QT_##YS *py = (RLX_QT_##YS *)y;                                             \
        float sy = (float)y_scale, zy = (float)y_zp;                                    \
        int64_t o, i, k;                                                                \
        for (o = 0; o < outer; o++)                                                     \
            for (i = 0; i < inner; i++) {                                               \
                const RLX_XT_##XS *xr = px + o * n * inner + i;                         \
                RLX_QT_##YS *yr = py + o * n * inner + i;                               \
                int32_t m = INT32_MIN;                                                  \
                int64_t sum = 0;                                                        \
                float fs;                                                               \
                for (k = 0; k < n; k++)                                                 \
                    if ((int32_t)xr[k * inner] > m) m = (int32_t)xr[k * inner];         \
                for (k = 0; k < n; k++) sum += table[m - (int32_t)xr[k * inner]];       \
                fs = (float)sum;                                                        \
                for (k = 0; k < n; k++) {                                               \
                    float v = (float)table[m - (int32_t)xr[k * inner]] / fs;            \
                    yr[k * inner] = RLX_STORE_##YS(v, sy, zy);                          \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_8BIT_PAIRS(RLX_QUANTIZED_SOFTMAX, _)
