/* Attention, rotary embeddings, quantisation. */
#include "rlx_scalar.h"

void rlx_gemm_f(int64_t, int64_t, int64_t, const float *, int64_t, const float *, int64_t, int,
                float *, int64_t);
void rlx_gemm_d(int64_t, int64_t, int64_t, const double *, int64_t, const double *, int64_t, int,
                double *, int64_t);

/* ---- attention -------------------------------------------------------------------- */
/* One head: scores = q k^T * scale -> softcap -> mask -> softmax (a NaN probability 0
 * with zero_nan) -> p v, all in CT (f32, f64 for f64), rounding where the reference
 * rounds (the scores product, the scaling, each softmax step). */
#define RLX_ATTN_HEAD(CF, T)                                                            \
    static void rlx_attn_head_##CF(int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, const T *q, \
                                   const T *k, const T *v, T *out, T *s, const void *mask, \
                                   const int64_t *ms, int64_t moff, int64_t kind, int mask_low, \
                                   double scale, double softcap, int64_t zero_nan) {    \
        int64_t i, j;                                                                   \
        T sc = (T)scale, cap = (T)softcap;                                              \
        rlx_gemm_##CF(Sq, Sk, D, q, D, k, D, 1, s, Sk);                                 \
        for (i = 0; i < Sq; i++) {                                                      \
            T *row = s + i * Sk, inv;                                                   \
            for (j = 0; j < Sk; j++) row[j] = row[j] * sc;                              \
            if (softcap != 0)                                                           \
                for (j = 0; j < Sk; j++) row[j] = cap * RLX_FN_##CF(tanh)(row[j] / cap); \
            if (kind == 1) {                                                            \
                for (j = i + 1; j < Sk; j++) row[j] = -(T)INFINITY;                     \
            } else if (kind == 2) {                                                     \
                const uint8_t *mr = (const uint8_t *)mask + moff + i * ms[2];           \
                for (j = 0; j < Sk; j++)                                                \
                    if (!mr[j * ms[3]]) row[j] = -(T)INFINITY;                          \
            } else if (kind == 3) {                                                     \
                int64_t at = moff + i * ms[2];                                          \
                if (mask_low == 1)                                                      \
                    for (j = 0; j < Sk; j++)                                            \
                        row[j] = row[j] + (T)rlx_f16_to_f32(((const uint16_t *)mask)[at + j * ms[3]]); \
                else if (mask_low == 2)                                                 \
                    for (j = 0; j < Sk; j++)                                            \
                        row[j] = row[j] + (T)rlx_bf16_to_f32(((const uint16_t *)mask)[at + j * ms[3]]); \
                else                                                                    \
                    for (j = 0; j < Sk; j++) row[j] = row[j] + ((const T *)mask)[at + j * ms[3]]; \
            }                                                                           \
            inv = (T)rlx_row_exp_sum_##CF(row, row, rlx_row_max_##CF(row, Sk), Sk);     \
            for (j = 0; j < Sk; j++) row[j] = row[j] / inv;                             \
            if (zero_nan)                                                               \
                for (j = 0; j < Sk; j++)                                                \
                    if (row[j] != row[j]) row[j] = 0;                                   \
        }                                                                               \
        rlx_gemm_##CF(Sq, Dv, Sk, s, Sk, v, Dv, 0, out, Dv);                            \
    }
#define RLX_FN_f(name) name##f
#define RLX_FN_d(name) name
RLX_ATTN_HEAD(f, float)
RLX_ATTN_HEAD(d, double)

/* geom: [B, H, Hkv, Sq, Sk, D, Dv, k_batch_stride, v_batch_stride]; mask_kind 0 none,
 * 1 causal, 2 bool, 3 additive (mask of the query's type) */
#define RLX_ATTENTION_NATIVE(sfx, T, CF, MASK_LOW)                                      \
    RLX_ATTENTION_SIG(rlx_attention_##sfx) {                                            \
        int64_t B = geom[0], H = geom[1], Hkv = geom[2], Sq = geom[3], Sk = geom[4];     \
        int64_t D = geom[5], Dv = geom[6], kbs = geom[7], vbs = geom[8], b, h;           \
        for (b = 0; b < B; b++)                                                         \
            for (h = 0; h < H; h++) {                                                   \
                int64_t hk = h / (H / Hkv);                                             \
                int64_t moff = mask ? b * mask_strides[0] + h * mask_strides[1] : 0;    \
                rlx_attn_head_##CF(Sq, Sk, D, Dv, (const T *)q + (b * H + h) * Sq * D,  \
                                   (const T *)k + b * kbs + hk * Sk * D,                \
                                   (const T *)v + b * vbs + hk * Sk * Dv,               \
                                   (T *)y + (b * H + h) * Sq * Dv, (T *)scratch, mask,  \
                                   mask_strides, moff, mask_kind, MASK_LOW, scale, softcap, \
                                   zero_nan);                                           \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_ATTENTION_NATIVE(f32, float, f, 0)
RLX_ATTENTION_NATIVE(f64, double, d, 0)

/* f16/bf16: each head's q, k, v widened to f32 scratch, the output rounded once */
#define RLX_ATTENTION_LOW(sfx, LOAD, STORE, MASK_LOW)                                   \
    RLX_ATTENTION_SIG(rlx_attention_##sfx) {                                            \
        int64_t B = geom[0], H = geom[1], Hkv = geom[2], Sq = geom[3], Sk = geom[4];     \
        int64_t D = geom[5], Dv = geom[6], kbs = geom[7], vbs = geom[8], b, h, i;        \
        float *s = (float *)scratch, *q32 = s + Sq * Sk, *k32 = q32 + Sq * D;            \
        float *v32 = k32 + Sk * D, *o32 = v32 + Sk * Dv;                                 \
        for (b = 0; b < B; b++)                                                         \
            for (h = 0; h < H; h++) {                                                   \
                int64_t hk = h / (H / Hkv);                                             \
                int64_t moff = mask ? b * mask_strides[0] + h * mask_strides[1] : 0;    \
                const uint16_t *qh = (const uint16_t *)q + (b * H + h) * Sq * D;        \
                const uint16_t *kh = (const uint16_t *)k + b * kbs + hk * Sk * D;       \
                const uint16_t *vh = (const uint16_t *)v + b * vbs + hk * Sk * Dv;      \
                uint16_t *yh = (uint16_t *)y + (b * H + h) * Sq * Dv;                   \
                for (i = 0; i < Sq * D; i++) q32[i] = LOAD(qh[i]);                      \
                for (i = 0; i < Sk * D; i++) k32[i] = LOAD(kh[i]);                      \
                for (i = 0; i < Sk * Dv; i++) v32[i] = LOAD(vh[i]);                     \
                rlx_attn_head_f(Sq, Sk, D, Dv, q32, k32, v32, o32, s, mask, mask_strides, moff, \
                                mask_kind, MASK_LOW, scale, softcap, zero_nan);         \
                for (i = 0; i < Sq * Dv; i++) yh[i] = STORE(o32[i]);                    \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_ATTENTION_LOW(f16, rlx_f16_to_f32, rlx_f32_to_f16, 1)
RLX_ATTENTION_LOW(bf16, rlx_bf16_to_f32, rlx_f32_to_bf16, 2)

/* ---- rope ------------------------------------------------------------------------- */
/* cos/sin strides: lead_rank strides over the leading dims, then one along the half */
#define RLX_ROPE(sfx, T, CT, CF, LOAD, STORE, ...)                                       \
    RLX_NO_SLP RLX_ROPE_SIG(rlx_rope_##sfx) {                                                      \
        const T *px = (const T *)x, *pc = (const T *)cos, *ps = (const T *)sin;         \
        T *py = (T *)y;                                                                 \
        int64_t rows = 1, r, i, half = rot / 2, idx[RLX_MAX_RANK] = {0}, off[2] = {0, 0}; \
        int64_t cl = cos_strides[lead_rank], sl = sin_strides[lead_rank], ext[RLX_MAX_RANK + 1]; \
        const int64_t *st[2];                                                           \
        int d;                                                                          \
        st[0] = cos_strides;                                                            \
        st[1] = sin_strides;                                                            \
        for (d = 0; d < (int)lead_rank; d++) {                                          \
            rows *= lead_shape[d];                                                      \
            ext[d] = lead_shape[d];                                                     \
        }                                                                               \
        ext[lead_rank] = 1;                                                             \
        for (r = 0; r < rows; r++) {                                                    \
            const T *xr = px + r * D;                                                   \
            T *yr = py + r * D;                                                         \
            const T *cr = pc + off[0], *sr = ps + off[1];                               \
            for (i = 0; i < half; i++) {                                                \
                int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half; \
                CT x1 = (CT)LOAD(xr[i1]), x2 = (CT)LOAD(xr[i2]);                        \
                CT c = (CT)LOAD(cr[i * cl]), s = (CT)LOAD(sr[i * sl]);                  \
                yr[i1] = STORE(x1 * c - x2 * s);                                        \
                yr[i2] = STORE(x2 * c + x1 * s);                                        \
            }                                                                           \
            for (i = rot; i < D; i++) yr[i] = xr[i];                                    \
            rlx_advance(lead_rank + 1, ext, idx, 2, off, st);                           \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_FLOAT_TYPES(RLX_ROPE, _)

/* ---- quantize / dequantize ----------------------------------------------------------- */
/* q = saturate(rint(x / scale) + zero_point), in CT (f32, or f64 with an f64 operand) */
#define RLX_QUANTIZE(q, xs, cs, XT, XLOAD, CT, QT)                                       \
    RLX_QUANTIZE_SIG(rlx_quantize_##xs##_##cs##_##q) {                                  \
        const XT *px = (const XT *)x;                                                   \
        const CT *psc = (const CT *)scale;                                              \
        const QT *pz = (const QT *)zero_point;                                          \
        QT *py = (QT *)y;                                                               \
        int64_t o, c, i;                                                                \
        for (o = 0; o < outer; o++)                                                     \
            for (c = 0; c < channels; c++) {                                            \
                CT s = psc[c], z = pz ? (CT)pz[c] : (CT)0;                              \
                const XT *xr = px + (o * channels + c) * inner;                         \
                QT *yr = py + (o * channels + c) * inner;                               \
                for (i = 0; i < inner; i++) {                                           \
                    CT v = nearbyint((CT)XLOAD(xr[i]) / s);                             \
                    if (pz) v = v + z;                                                  \
                    yr[i] = rlx_f2i_##q((double)v);                                     \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }
#define RLX_QT_i8 int8_t
#define RLX_QT_i16 int16_t
#define RLX_QT_i32 int32_t
#define RLX_QT_i64 int64_t
#define RLX_QT_u8 uint8_t
#define RLX_QT_u16 uint16_t
#define RLX_QT_u32 uint32_t
#define RLX_QT_u64 uint64_t
#define RLX_QUANT_ONE(q, xs, XT, XLOAD, cs, CT) RLX_QUANTIZE(q, xs, cs, XT, XLOAD, CT, RLX_QT_##q)
#define RLX_QUANT_F32(q, xs, XT, XLOAD) RLX_QUANT_ONE(q, xs, XT, XLOAD, f32, float)
#define RLX_QUANT_F64(q, xs, XT, XLOAD) RLX_QUANT_ONE(q, xs, XT, XLOAD, f64, double)
RLX_QUANT_INT_TYPES(RLX_QUANT_F32, f32, float, RLX_ID)
RLX_QUANT_INT_TYPES(RLX_QUANT_F32, f16, uint16_t, rlx_f16_to_f32)
RLX_QUANT_INT_TYPES(RLX_QUANT_F32, bf16, uint16_t, rlx_bf16_to_f32)
RLX_QUANT_INT_TYPES(RLX_QUANT_F64, f32, float, RLX_ID)
RLX_QUANT_INT_TYPES(RLX_QUANT_F64, f64, double, RLX_ID)
RLX_QUANT_INT_TYPES(RLX_QUANT_F64, f16, uint16_t, rlx_f16_to_f32)
RLX_QUANT_INT_TYPES(RLX_QUANT_F64, bf16, uint16_t, rlx_bf16_to_f32)

/* y = (q - zero_point) * scale: the difference exact (in double), then the product in
 * the scale's compute type, rounded to the scale's type */
#define RLX_DEQUANTIZE(q, ss, ST, CT, SLOAD, SSTORE)                                     \
    RLX_QUANTIZE_SIG(rlx_dequantize_##q##_##ss) {                                       \
        const RLX_QT_##q *px = (const RLX_QT_##q *)x, *pz = (const RLX_QT_##q *)zero_point; \
        const ST *psc = (const ST *)scale;                                              \
        ST *py = (ST *)y;                                                               \
        int64_t o, c, i;                                                                \
        for (o = 0; o < outer; o++)                                                     \
            for (c = 0; c < channels; c++) {                                            \
                CT s = (CT)SLOAD(psc[c]);                                               \
                double z = pz ? (double)pz[c] : 0.0;                                    \
                const RLX_QT_##q *xr = px + (o * channels + c) * inner;                 \
                ST *yr = py + (o * channels + c) * inner;                               \
                for (i = 0; i < inner; i++) yr[i] = SSTORE((CT)((double)xr[i] - z) * s); \
            }                                                                           \
        return 0;                                                                       \
    }
#define RLX_DEQUANT_F32(q, ...) RLX_DEQUANTIZE(q, f32, float, float, RLX_ID, RLX_ID)
#define RLX_DEQUANT_F64(q, ...) RLX_DEQUANTIZE(q, f64, double, double, RLX_ID, RLX_ID)
#define RLX_DEQUANT_F16(q, ...) RLX_DEQUANTIZE(q, f16, uint16_t, float, rlx_f16_to_f32, rlx_f32_to_f16)
#define RLX_DEQUANT_BF16(q, ...) RLX_DEQUANTIZE(q, bf16, uint16_t, float, rlx_bf16_to_f32, rlx_f32_to_bf16)
RLX_QUANT_INT_TYPES(RLX_DEQUANT_F32, _)
RLX_QUANT_INT_TYPES(RLX_DEQUANT_F64, _)
RLX_QUANT_INT_TYPES(RLX_DEQUANT_F16, _)
RLX_QUANT_INT_TYPES(RLX_DEQUANT_BF16, _)

#define RLX_FAKE_QUANT(xs, cs, XT, CT, LOAD, STORE)                                     \
    RLX_FAKE_QUANT_SIG(rlx_fake_quantize_##xs##_##cs) {                                 \
        const XT *px = (const XT *)x;                                                   \
        const CT *psc = (const CT *)scale, *pz = (const CT *)zero_point;                \
        XT *py = (XT *)y;                                                               \
        int64_t o, c, i;                                                                \
        for (o = 0; o < outer; o++)                                                     \
            for (c = 0; c < channels; c++) {                                            \
                CT s = psc[c], z = pz[c], lo = (CT)qmin, hi = (CT)qmax;                 \
                const XT *xr = px + (o * channels + c) * inner;                         \
                XT *yr = py + (o * channels + c) * inner;                               \
                for (i = 0; i < inner; i++) {                                           \
                    CT q = (CT)nearbyint((CT)LOAD(xr[i]) / s) + z;                      \
                    q = q < lo ? lo : q > hi ? hi : q;                                  \
                    yr[i] = STORE((CT)((q - z) * s));                                   \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }
RLX_FAKE_QUANT(f32, f32, float, float, RLX_ID, RLX_ID)
RLX_FAKE_QUANT(f16, f32, uint16_t, float, rlx_f16_to_f32, rlx_f32_to_f16)
RLX_FAKE_QUANT(bf16, f32, uint16_t, float, rlx_bf16_to_f32, rlx_f32_to_bf16)
RLX_FAKE_QUANT(f32, f64, float, double, RLX_ID, (float))
RLX_FAKE_QUANT(f64, f64, double, double, RLX_ID, RLX_ID)
RLX_FAKE_QUANT(f16, f64, uint16_t, double, rlx_f16_to_f32, rlx_f64_to_f16)
RLX_FAKE_QUANT(bf16, f64, uint16_t, double, rlx_bf16_to_f32, rlx_f64_to_bf16)

/* ---- lrn (local response normalisation across channels) ------------------------------ */
/* y = x / (bias + alpha/size * sum of x^2 over the window)^beta, in CT as the reference:
 * the squares rounded, summed in window order, then scaled, offset and raised. */
#define RLX_POW_f powf
#define RLX_POW_d pow
#define RLX_LRN(sfx, T, CT, CF, LOAD, STORE, ...)                                        \
    int rlx_lrn_##sfx(int64_t n, int64_t c, int64_t inner, void *y, const void *x,       \
                      int64_t size, double alpha, double beta, double bias) {            \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        int64_t before = (size - 1) / 2, b, ch, j, i;                                   \
        CT scale = (CT)(alpha / (double)size), offset = (CT)bias, power = (CT)beta;     \
        for (b = 0; b < n; b++)                                                         \
            for (ch = 0; ch < c; ch++)                                                  \
                for (i = 0; i < inner; i++) {                                           \
                    CT total = 0, v;                                                    \
                    for (j = 0; j < size; j++) {                                        \
                        int64_t k = ch - before + j;                                    \
                        if (k >= 0 && k < c) {                                          \
                            CT u = (CT)LOAD(px[(b * c + k) * inner + i]);               \
                            total += u * u;                                             \
                        }                                                               \
                    }                                                                   \
                    v = (CT)LOAD(px[(b * c + ch) * inner + i]);                         \
                    py[(b * c + ch) * inner + i] =                                      \
                        STORE(v / RLX_POW_##CF(total * scale + offset, power));         \
                }                                                                       \
        return 0;                                                                       \
    }
RLX_FLOAT_TYPES(RLX_LRN, _)

/* ---- lstm cell (mir.fused_lstm_cell) ------------------------------------------------- */
/* gates [rows, 4 * hidden] (the input, output, forget and cell gates' blocks at
 * order[0..3] * hidden), prev [rows, hidden] -> h, c [rows, hidden]: i, f, o = sigmoid,
 * g = tanh, c = f * prev + i * g, h = o * tanh(c), each step rounded to T as the
 * unfused chain's kernels round it. A row at a time, in passes over it: the sigmoids (o
 * into h, f * prev into c, i into scratch) and the products vectorise; each tanh (a libm
 * call) is a loop of its own, which runs faster than one loop holding both. Scratch:
 * two rows of CT. */
#define RLX_ROUNDED(CT, LOAD, STORE, v) ((CT)LOAD(STORE(v)))
#define RLX_LSTM_CELL(sfx, T, CT, CF, LOAD, STORE, ...)                                  \
    static void rlx_lstm_gates_##sfx(int64_t n, const T *restrict gi, const T *restrict go, \
                                     const T *restrict gf, const T *restrict pp,         \
                                     CT *restrict si, T *restrict ph, T *restrict pc) {  \
        int64_t j;                                                                       \
        for (j = 0; j < n; j++) {                                                        \
            CT f = RLX_ROUNDED(CT, LOAD, STORE, rlx_s_sigmoid_##CF((CT)LOAD(gf[j])));    \
            si[j] = RLX_ROUNDED(CT, LOAD, STORE, rlx_s_sigmoid_##CF((CT)LOAD(gi[j])));   \
            ph[j] = STORE(rlx_s_sigmoid_##CF((CT)LOAD(go[j])));                          \
            pc[j] = STORE(f * (CT)LOAD(pp[j]));                                          \
        }                                                                                \
    }                                                                                    \
    static void rlx_lstm_tanh_##sfx(int64_t n, const T *restrict x, CT *restrict y) {    \
        int64_t j;                                                                       \
        for (j = 0; j < n; j++) y[j] = RLX_ROUNDED(CT, LOAD, STORE, rlx_s_tanh_##CF((CT)LOAD(x[j]))); \
    }                                                                                    \
    static void rlx_lstm_update_##sfx(int64_t n, const CT *restrict si, const CT *restrict st, \
                                      T *restrict pc) {                                  \
        int64_t j;                                                                       \
        for (j = 0; j < n; j++)                                                          \
            pc[j] = STORE((CT)LOAD(pc[j]) + RLX_ROUNDED(CT, LOAD, STORE, si[j] * st[j])); \
    }                                                                                    \
    static void rlx_lstm_hidden_##sfx(int64_t n, const CT *restrict st, T *restrict ph) { \
        int64_t j;                                                                       \
        for (j = 0; j < n; j++) ph[j] = STORE((CT)LOAD(ph[j]) * st[j]);                  \
    }                                                                                    \
    int rlx_lstm_cell_##sfx(int64_t rows, int64_t hidden, const int64_t *order, void *h, \
                            void *c, const void *gates, const void *prev, void *scratch) { \
        const T *pg = (const T *)gates, *pp = (const T *)prev;                           \
        T *ph = (T *)h, *pc = (T *)c;                                                    \
        CT *si = (CT *)scratch, *st = si + hidden;                                       \
        int64_t r;                                                                       \
        for (r = 0; r < rows; r++, pg += 4 * hidden, pp += hidden, ph += hidden, pc += hidden) { \
            rlx_lstm_gates_##sfx(hidden, pg + order[0] * hidden, pg + order[1] * hidden, \
                                 pg + order[2] * hidden, pp, si, ph, pc);                \
            rlx_lstm_tanh_##sfx(hidden, pg + order[3] * hidden, st);                     \
            rlx_lstm_update_##sfx(hidden, si, st, pc);                                   \
            rlx_lstm_tanh_##sfx(hidden, pc, st);                                         \
            rlx_lstm_hidden_##sfx(hidden, st, ph);                                       \
        }                                                                                \
        return 0;                                                                        \
    }
RLX_FLOAT_TYPES(RLX_LSTM_CELL, _)

/* ---- gru cell (mir.fused_gru_cell) --------------------------------------------------- */
/* gx, gh [rows, 3 * hidden] (the update, reset and new gates' blocks at order[0..2] *
 * hidden in both), prev [rows, hidden] -> h [rows, hidden]: r = sigmoid(gx_r + gh_r),
 * z = sigmoid(gx_z + gh_z), n = tanh(gx_n + r * gh_n), h = (1 - z) * n + z * prev, each
 * step rounded to T as the unfused chain's kernels round it. A row at a time: the
 * sigmoids and the sums into scratch (z, then the tanh's argument), the tanh (a libm
 * call) a loop of its own, then the update, which reads prev[j] before it writes h[j]
 * (h may be prev's buffer). Scratch: two rows of CT. */
#define RLX_GRU_CELL(sfx, T, CT, CF, LOAD, STORE, ...)                                   \
    static void rlx_gru_gates_##sfx(int64_t n, const T *restrict xz, const T *restrict hz, \
                                    const T *restrict xr, const T *restrict hr,           \
                                    const T *restrict xn, const T *restrict hn,           \
                                    CT *restrict sz, CT *restrict sn) {                   \
        int64_t j;                                                                       \
        for (j = 0; j < n; j++) {                                                        \
            CT r = RLX_ROUNDED(CT, LOAD, STORE, rlx_s_sigmoid_##CF(                      \
                RLX_ROUNDED(CT, LOAD, STORE, (CT)LOAD(xr[j]) + (CT)LOAD(hr[j]))));       \
            CT rh = RLX_ROUNDED(CT, LOAD, STORE, r * (CT)LOAD(hn[j]));                   \
            sz[j] = RLX_ROUNDED(CT, LOAD, STORE, rlx_s_sigmoid_##CF(                     \
                RLX_ROUNDED(CT, LOAD, STORE, (CT)LOAD(xz[j]) + (CT)LOAD(hz[j]))));       \
            sn[j] = RLX_ROUNDED(CT, LOAD, STORE, (CT)LOAD(xn[j]) + rh);                  \
        }                                                                                \
    }                                                                                    \
    static void rlx_gru_tanh_##sfx(int64_t n, CT *restrict x) {                          \
        int64_t j;                                                                       \
        for (j = 0; j < n; j++) x[j] = RLX_ROUNDED(CT, LOAD, STORE, rlx_s_tanh_##CF(x[j])); \
    }                                                                                    \
    static void rlx_gru_update_##sfx(int64_t n, const CT *restrict sz, const CT *restrict sn, \
                                     const T *pp, T *ph) {                               \
        int64_t j;                                                                       \
        for (j = 0; j < n; j++) {                                                        \
            CT keep = RLX_ROUNDED(CT, LOAD, STORE, sz[j] * (CT)LOAD(pp[j]));             \
            CT mix = RLX_ROUNDED(CT, LOAD, STORE, RLX_ROUNDED(CT, LOAD, STORE, (CT)1 - sz[j]) * sn[j]); \
            ph[j] = STORE(mix + keep);                                                   \
        }                                                                                \
    }                                                                                    \
    int rlx_gru_cell_##sfx(int64_t rows, int64_t hidden, const int64_t *order, void *h,  \
                           const void *gx, const void *gh, const void *prev, void *scratch) { \
        const T *px = (const T *)gx, *pg = (const T *)gh, *pp = (const T *)prev;         \
        T *ph = (T *)h;                                                                  \
        CT *sz = (CT *)scratch, *sn = sz + hidden;                                       \
        int64_t z = order[0] * hidden, r = order[1] * hidden, c = order[2] * hidden, i;  \
        for (i = 0; i < rows; i++, px += 3 * hidden, pg += 3 * hidden, pp += hidden, ph += hidden) { \
            rlx_gru_gates_##sfx(hidden, px + z, pg + z, px + r, pg + r, px + c, pg + c, sz, sn); \
            rlx_gru_tanh_##sfx(hidden, sn);                                              \
            rlx_gru_update_##sfx(hidden, sz, sn, pp, ph);                                \
        }                                                                                \
        return 0;                                                                        \
    }
RLX_FLOAT_TYPES(RLX_GRU_CELL, _)
