/* Data movement (by element size), gather/scatter, topk, scans, arg reductions. */
#include "rlx_scalar.h"

int rlx_memcpy(void *dst, const void *src, int64_t nbytes) {
    if (dst != src && nbytes > 0) memmove(dst, src, (size_t)nbytes);
    return 0;
}

int rlx_copy(int64_t rank, const int64_t *shape, int64_t elem, void *dst, const int64_t *ds,
             const void *src, const int64_t *ss) {
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    int64_t n = rank ? shape[rank - 1] : 1, rows = rlx_rows(rank, shape), r, i;
    int64_t dl = rank ? ds[rank - 1] : 0, sl = rank ? ss[rank - 1] : 0;
    int64_t idx[RLX_MAX_RANK] = {0}, off[2] = {0, 0};
    const int64_t *st[2];
    st[0] = ds;
    st[1] = ss;
    for (r = 0; r < rows; r++) {
        uint8_t *rd = d + off[0];
        const uint8_t *rs = s + off[1];
        if (dl == elem && sl == elem) {
            if (rd != rs) memmove(rd, rs, (size_t)(n * elem));
        } else {
            switch (elem) {
#define RLX_COPY_CASE(bytes, T)                                                         \
    case bytes:                                                                         \
        for (i = 0; i < n; i++) *(T *)(rd + i * dl) = *(const T *)(rs + i * sl);       \
        break;
                RLX_COPY_CASE(1, uint8_t)
                RLX_COPY_CASE(2, uint16_t)
                RLX_COPY_CASE(4, uint32_t)
                RLX_COPY_CASE(8, uint64_t)
            default:
                for (i = 0; i < n; i++) memcpy(rd + i * dl, rs + i * sl, (size_t)elem);
            }
        }
        rlx_advance(rank, shape, idx, 2, off, st);
    }
    return 0;
}

/* An int index of kind 0..7 (i8 i16 i32 i64 u8 u16 u32 u64), checked against [-n, n)
 * and made non-negative; returns -1 when out of range. */
static int64_t rlx_index(const void *indices, int64_t j, int64_t kind, int64_t n) {
    int64_t v;
    uint64_t u;
    switch (kind) {
    case 0: v = ((const int8_t *)indices)[j]; break;
    case 1: v = ((const int16_t *)indices)[j]; break;
    case 2: v = ((const int32_t *)indices)[j]; break;
    case 3: v = ((const int64_t *)indices)[j]; break;
    case 4: v = ((const uint8_t *)indices)[j]; break;
    case 5: v = ((const uint16_t *)indices)[j]; break;
    case 6: v = ((const uint32_t *)indices)[j]; break;
    default:
        u = ((const uint64_t *)indices)[j];
        return u < (uint64_t)n ? (int64_t)u : -1;
    }
    if (v >= n || v < -n) return -1;
    return v < 0 ? v + n : v;
}

int rlx_gather(int64_t outer, int64_t axis_n, int64_t inner_bytes, void *dst, const void *table,
               const void *indices, int64_t n_idx, int64_t idx_kind) {
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *t = (const uint8_t *)table;
    int64_t o, j;
    for (j = 0; j < n_idx; j++)
        if (rlx_index(indices, j, idx_kind, axis_n) < 0) return RLX_ERR_INDEX;
    for (o = 0; o < outer; o++)
        for (j = 0; j < n_idx; j++) {
            int64_t i = rlx_index(indices, j, idx_kind, axis_n);
            memcpy(d + (o * n_idx + j) * inner_bytes, t + (o * axis_n + i) * inner_bytes,
                   (size_t)inner_bytes);
        }
    return 0;
}

int rlx_gather_axes(int64_t rank, const int64_t *in_shape, const int64_t *out_shape,
                    const int64_t *gathered, int64_t elem, void *dst, const void *src,
                    const int64_t *indices, int64_t *offsets) {
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    const int64_t *ix = indices;
    int64_t *base[RLX_MAX_RANK], strides[RLX_MAX_RANK], idx[RLX_MAX_RANK];
    int64_t *o = offsets, *last, stride = elem, total = 1, n, a, i, k;
    if (rank < 1 || rank > RLX_MAX_RANK) return RLX_ERR_INDEX;
    for (a = rank - 1; a >= 0; a--) {
        strides[a] = stride;
        stride *= in_shape[a];
        total *= out_shape[a];
    }
    /* Byte offset of every output position along every dim. */
    for (a = 0; a < rank; a++) {
        base[a] = o;
        idx[a] = 0;
        for (i = 0; i < out_shape[a]; i++) {
            int64_t v = i;
            if (gathered[a]) {
                v = ix[i];
                if (v >= in_shape[a] || v < -in_shape[a]) return RLX_ERR_INDEX;
                if (v < 0) v += in_shape[a];
            }
            o[i] = v * strides[a];
        }
        if (gathered[a]) ix += out_shape[a];
        o += out_shape[a];
    }
    if (total == 0) return 0;
    n = out_shape[rank - 1];
    last = base[rank - 1];
    for (k = 0; k < total; k += n) {
        const uint8_t *row = s;
        for (a = 0; a < rank - 1; a++) row += base[a][idx[a]];
        if (!gathered[rank - 1]) {
            memcpy(d, row, (size_t)(n * elem));
        } else {
            switch (elem) {
#define RLX_GATHER_AXES_CASE(bytes, T)                                                  \
    case bytes:                                                                         \
        for (i = 0; i < n; i++) ((T *)d)[i] = *(const T *)(row + last[i]);             \
        break;
                RLX_GATHER_AXES_CASE(1, uint8_t)
                RLX_GATHER_AXES_CASE(2, uint16_t)
                RLX_GATHER_AXES_CASE(4, uint32_t)
                RLX_GATHER_AXES_CASE(8, uint64_t)
            default:
                for (i = 0; i < n; i++) memcpy(d + i * elem, row + last[i], (size_t)elem);
            }
        }
        d += n * elem;
        for (a = rank - 2; a >= 0; a--) {
            if (++idx[a] < out_shape[a]) break;
            idx[a] = 0;
        }
    }
    return 0;
}

int rlx_gather_elements(int64_t rank, const int64_t *in_shape, const int64_t *idx_shape,
                        int64_t axis, int64_t elem, void *dst, const void *src,
                        const int64_t *indices) {
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    int64_t strides[RLX_MAX_RANK], pos[RLX_MAX_RANK];
    int64_t stride = elem, total = 1, off = 0, n, step, k, a;
    if (rank < 1 || rank > RLX_MAX_RANK || axis < 0 || axis >= rank) return RLX_ERR_INDEX;
    for (a = rank - 1; a >= 0; a--) {
        strides[a] = stride;
        stride *= in_shape[a];
        total *= idx_shape[a];
        pos[a] = 0;
    }
    n = in_shape[axis];
    step = strides[axis];
    for (k = 0; k < total; k++)
        if (indices[k] >= n || indices[k] < -n) return RLX_ERR_INDEX;
    /* off: the byte offset of the position's coordinates but the axis's; the index
     * adds its own. */
#define RLX_GATHER_ELEMENTS_LOOP(COPY)                                                  \
    for (k = 0; k < total; k++) {                                                       \
        int64_t v = indices[k] < 0 ? indices[k] + n : indices[k];                       \
        const uint8_t *from = s + off + v * step;                                       \
        COPY;                                                                           \
        for (a = rank - 1; a >= 0; a--) {                                               \
            if (++pos[a] < idx_shape[a]) {                                              \
                if (a != axis) off += strides[a];                                       \
                break;                                                                  \
            }                                                                           \
            if (a != axis) off -= (pos[a] - 1) * strides[a];                            \
            pos[a] = 0;                                                                 \
        }                                                                               \
    }
    switch (elem) {
    case 1: RLX_GATHER_ELEMENTS_LOOP(d[k] = *from) break;
    case 2: RLX_GATHER_ELEMENTS_LOOP(((uint16_t *)d)[k] = *(const uint16_t *)from) break;
    case 4: RLX_GATHER_ELEMENTS_LOOP(((uint32_t *)d)[k] = *(const uint32_t *)from) break;
    case 8: RLX_GATHER_ELEMENTS_LOOP(((uint64_t *)d)[k] = *(const uint64_t *)from) break;
    default: RLX_GATHER_ELEMENTS_LOOP(memcpy(d + k * elem, from, (size_t)elem))
    }
#undef RLX_GATHER_ELEMENTS_LOOP
    return 0;
}

/* pads: [begin[rank], end[rank]]; mode 0 constant, 1 reflect, 2 edge, 3 wrap */
int rlx_pad(int64_t rank, const int64_t *in_shape, const int64_t *pads, int64_t mode,
            int64_t elem, void *dst, const void *src, const void *fill) {
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    int64_t out_shape[RLX_MAX_RANK], in_strides[RLX_MAX_RANK], idx[RLX_MAX_RANK];
    int64_t total = 1, k, a;
    for (a = 0; a < rank; a++) {
        out_shape[a] = in_shape[a] + pads[a] + pads[rank + a];
        total *= out_shape[a];
        idx[a] = 0;
        if (mode == 1 && (pads[a] > in_shape[a] - 1 || pads[rank + a] > in_shape[a] - 1) &&
            (pads[a] || pads[rank + a]))
            return RLX_ERR_PAD;
        if (mode != 0 && in_shape[a] == 0 && (pads[a] || pads[rank + a])) return RLX_ERR_PAD;
    }
    for (a = rank - 1, k = elem; a >= 0; a--) {
        in_strides[a] = k;
        k *= in_shape[a];
    }
    for (k = 0; k < total; k++) {
        int64_t off = 0;
        int inside = 1;
        for (a = 0; a < rank; a++) {
            int64_t i = idx[a] - pads[a], n = in_shape[a];
            if (i < 0 || i >= n) {
                if (mode == 0) {
                    inside = 0;
                    break;
                } else if (mode == 1) {
                    i = i < 0 ? -i : 2 * (n - 1) - i;
                } else if (mode == 2) {
                    i = i < 0 ? 0 : n - 1;
                } else {
                    i = ((i % n) + n) % n;
                }
            }
            off += i * in_strides[a];
        }
        memcpy(d + k * elem, inside ? s + off : (const uint8_t *)fill, (size_t)elem);
        for (a = rank - 1; a >= 0; a--) {
            if (++idx[a] < out_shape[a]) break;
            idx[a] = 0;
        }
    }
    return 0;
}

/* ---- scatter_nd ------------------------------------------------------------------- */
#define RLX_COMBINE_FLOAT(T, CT, CF, LOAD, STORE)                                       \
    {                                                                                   \
        T *o = (T *)dst;                                                                \
        const T *u = (const T *)src;                                                    \
        for (i = 0; i < n; i++) {                                                       \
            CT a = (CT)LOAD(o[i]), b = (CT)LOAD(u[i]);                                  \
            CT r = reduction == 1 ? a + b : reduction == 2 ? a * b                      \
                   : reduction == 3 ? rlx_s_max_##CF(a, b, &e) : rlx_s_min_##CF(a, b, &e); \
            o[i] = STORE(r);                                                            \
        }                                                                               \
        break;                                                                          \
    }
#define RLX_COMBINE_INT(sfx, T)                                                         \
    {                                                                                   \
        T *o = (T *)dst;                                                                \
        const T *u = (const T *)src;                                                    \
        for (i = 0; i < n; i++)                                                         \
            o[i] = reduction == 1 ? rlx_s_add_##sfx(o[i], u[i], &e)                     \
                   : reduction == 2 ? rlx_s_mul_##sfx(o[i], u[i], &e)                   \
                   : reduction == 3 ? rlx_s_max_##sfx(o[i], u[i], &e)                   \
                                    : rlx_s_min_##sfx(o[i], u[i], &e);                  \
        break;                                                                          \
    }

static void rlx_combine(int64_t dtype, int64_t reduction, void *dst, const void *src, int64_t n) {
    int64_t i;
    int e = 0;
    switch (dtype) {
    case 0: RLX_COMBINE_FLOAT(float, float, f, RLX_ID, RLX_ID)
    case 1: RLX_COMBINE_FLOAT(double, double, d, RLX_ID, RLX_ID)
    case 2: RLX_COMBINE_FLOAT(uint16_t, float, f, rlx_f16_to_f32, rlx_f32_to_f16)
    case 3: RLX_COMBINE_FLOAT(uint16_t, float, f, rlx_bf16_to_f32, rlx_f32_to_bf16)
    case 4: RLX_COMBINE_INT(i8, int8_t)
    case 5: RLX_COMBINE_INT(i16, int16_t)
    case 6: RLX_COMBINE_INT(i32, int32_t)
    case 7: RLX_COMBINE_INT(i64, int64_t)
    case 8: RLX_COMBINE_INT(u8, uint8_t)
    case 9: RLX_COMBINE_INT(u16, uint16_t)
    case 10: RLX_COMBINE_INT(u32, uint32_t)
    case 11: RLX_COMBINE_INT(u64, uint64_t)
    default: { /* bool: add/max = or, mul/min = and */
        uint8_t *o = (uint8_t *)dst;
        const uint8_t *u = (const uint8_t *)src;
        for (i = 0; i < n; i++)
            o[i] = (uint8_t)((reduction == 1 || reduction == 3) ? (o[i] || u[i]) : (o[i] && u[i]));
    }
    }
}

static const int64_t rlx_dtype_bytes[13] = {4, 8, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1};

int rlx_scatter_nd(int64_t q, const int64_t *dims, int64_t inner, int64_t m, int64_t dtype,
                   int64_t reduction, void *out, const void *indices, int64_t idx_kind,
                   const void *updates) {
    int64_t elem = rlx_dtype_bytes[dtype], j, t;
    uint8_t *o = (uint8_t *)out;
    const uint8_t *u = (const uint8_t *)updates;
    for (j = 0; j < m * q; j++)
        if (rlx_index(indices, j, idx_kind, dims[j % q]) < 0) return RLX_ERR_INDEX;
    for (j = 0; j < m; j++) {
        int64_t flat = 0;
        for (t = 0; t < q; t++) flat = flat * dims[t] + rlx_index(indices, j * q + t, idx_kind, dims[t]);
        if (reduction == 0)
            memcpy(o + flat * inner * elem, u + j * inner * elem, (size_t)(inner * elem));
        else
            rlx_combine(dtype, reduction, o + flat * inner * elem, u + j * inner * elem, inner);
    }
    return 0;
}

/* ---- per-type axis kernels ---------------------------------------------------------- */
/* Floats compare as their compute type with NaN above every number (np.sort's order). */
#define RLX_NAN_LESS(a, b) ((a) == (a) && ((b) != (b) || (a) < (b)))
#define RLX_PLAIN_LESS(a, b) ((a) < (b))

#define RLX_AXIS_KERNELS(sfx, T, CT, LOAD, STORE, LESS, IS_NAN)                          \
    RLX_SCAN_SIG(rlx_cumsum_##sfx) {                                                    \
        return rlx_scan_##sfx(outer, n, inner, y, x, exclusive, reverse, 0);            \
    }                                                                                   \
    RLX_SCAN_SIG(rlx_cumprod_##sfx) {                                                   \
        return rlx_scan_##sfx(outer, n, inner, y, x, exclusive, reverse, 1);            \
    }                                                                                   \
    static int rlx_arg_##sfx(int64_t outer, int64_t n, int64_t inner, void *y, const void *x, \
                             int want_max) {                                            \
        const T *px = (const T *)x;                                                     \
        int64_t *py = (int64_t *)y, o, j, i;                                            \
        if (n == 0) return RLX_ERR_EMPTY;                                               \
        for (o = 0; o < outer; o++)                                                     \
            for (j = 0; j < inner; j++) {                                               \
                const T *row = px + o * n * inner + j;                                  \
                CT best = (CT)LOAD(row[0]);                                             \
                int64_t bi = 0;                                                         \
                if (!IS_NAN(best))                                                      \
                    for (i = 1; i < n; i++) {                                           \
                        CT v = (CT)LOAD(row[i * inner]);                                \
                        if (IS_NAN(v)) { bi = i; break; }                               \
                        if (want_max ? v > best : v < best) { best = v; bi = i; }       \
                    }                                                                   \
                py[o * inner + j] = bi;                                                 \
            }                                                                           \
        return 0;                                                                       \
    }                                                                                   \
    RLX_AXIS_SIG(rlx_argmax_##sfx) { return rlx_arg_##sfx(outer, n, inner, y, x, 1); }  \
    RLX_AXIS_SIG(rlx_argmin_##sfx) { return rlx_arg_##sfx(outer, n, inner, y, x, 0); }  \
    /* stable merge sort of idx[0..n) by key (descending unless smallest) */           \
    static void rlx_sort_##sfx(const T *row, int64_t stride, int64_t *idx, int64_t *tmp, \
                               int64_t n, int64_t smallest) {                           \
        int64_t width, lo, i;                                                           \
        for (width = 1; width < n; width *= 2) {                                        \
            for (lo = 0; lo < n; lo += 2 * width) {                                     \
                int64_t mid = lo + width < n ? lo + width : n;                          \
                int64_t hi = lo + 2 * width < n ? lo + 2 * width : n, a = lo, b = mid, k = lo; \
                while (a < mid && b < hi) {                                             \
                    CT va = (CT)LOAD(row[idx[a] * stride]), vb = (CT)LOAD(row[idx[b] * stride]); \
                    int take_b = smallest ? LESS(vb, va) : LESS(va, vb);                \
                    tmp[k++] = take_b ? idx[b++] : idx[a++];                            \
                }                                                                       \
                while (a < mid) tmp[k++] = idx[a++];                                    \
                while (b < hi) tmp[k++] = idx[b++];                                     \
            }                                                                           \
            for (i = 0; i < n; i++) idx[i] = tmp[i];                                    \
        }                                                                               \
    }                                                                                   \
    RLX_TOPK_SIG(rlx_topk_##sfx) {                                                      \
        const T *px = (const T *)x;                                                     \
        T *pv = (T *)values;                                                            \
        int64_t *pi = (int64_t *)indices, *idx = (int64_t *)scratch, *tmp = idx + n, o, j, i; \
        for (o = 0; o < outer; o++)                                                     \
            for (j = 0; j < inner; j++) {                                               \
                const T *row = px + o * n * inner + j;                                  \
                for (i = 0; i < n; i++) idx[i] = i;                                     \
                rlx_sort_##sfx(row, inner, idx, tmp, n, smallest);                      \
                for (i = 0; i < k; i++) {                                               \
                    pv[(o * k + i) * inner + j] = row[idx[i] * inner];                  \
                    pi[(o * k + i) * inner + j] = idx[i];                               \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }

/* Running sums/products in the compute type, rounded per output (the reference widens
 * low-precision floats first); integers wrap. */
#define RLX_SCAN_FLOAT(sfx, T, CT, CF, LOAD, STORE, ...)                                \
    static int rlx_scan_##sfx(int64_t outer, int64_t n, int64_t inner, void *y, const void *x, \
                              int64_t exclusive, int64_t reverse, int prod) {           \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        int64_t o, j, i;                                                                \
        for (o = 0; o < outer; o++)                                                     \
            for (j = 0; j < inner; j++) {                                               \
                CT acc = prod ? (CT)1 : (CT)0;                                          \
                for (i = 0; i < n; i++) {                                               \
                    int64_t p = (o * n + (reverse ? n - 1 - i : i)) * inner + j;        \
                    CT v = (CT)LOAD(px[p]);                                             \
                    if (exclusive) { py[p] = STORE(acc); acc = prod ? acc * v : acc + v; } \
                    else { acc = prod ? acc * v : acc + v; py[p] = STORE(acc); }        \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }                                                                                   \
    RLX_AXIS_KERNELS(sfx, T, CT, LOAD, STORE, RLX_NAN_LESS, RLX_IS_NAN)
#define RLX_IS_NAN(v) ((v) != (v))
#define RLX_NOT_NAN(v) 0
RLX_FLOAT_TYPES(RLX_SCAN_FLOAT, _)

#define RLX_SCAN_INT(sfx, T, UT, SG, MN, MX, ...)                                       \
    static int rlx_scan_##sfx(int64_t outer, int64_t n, int64_t inner, void *y, const void *x, \
                              int64_t exclusive, int64_t reverse, int prod) {           \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        int64_t o, j, i;                                                                \
        for (o = 0; o < outer; o++)                                                     \
            for (j = 0; j < inner; j++) {                                               \
                uint64_t acc = prod ? 1u : 0u;                                          \
                for (i = 0; i < n; i++) {                                               \
                    int64_t p = (o * n + (reverse ? n - 1 - i : i)) * inner + j;        \
                    uint64_t v = (uint64_t)px[p];                                       \
                    if (exclusive) { py[p] = (T)acc; acc = prod ? acc * v : acc + v; }  \
                    else { acc = prod ? acc * v : acc + v; py[p] = (T)acc; }            \
                }                                                                       \
            }                                                                           \
        return 0;                                                                       \
    }                                                                                   \
    RLX_AXIS_KERNELS(sfx, T, T, RLX_ID, RLX_ID, RLX_PLAIN_LESS, RLX_NOT_NAN)
RLX_INT_TYPES(RLX_SCAN_INT, _)

/* A step the emitter knows fails (the reference raises there): the run stops with it. */
int rlx_fail(int64_t code) { return (int)code; }

/* ---- pairwise coupling (mir.pairwise_coupling: libsvm's Gauss-Seidel, as the reference
 * executor writes it: every step rounded to the input's type, sums accumulated in the
 * compute type; a converged sample stops) ------------------------------------------ */
#define RLX_PAIRWISE(sfx, T, CT, CF, L, S, ...)                                         \
    int rlx_pairwise_coupling_##sfx(int64_t n, int64_t c, void *y, const void *x, void *scratch) { \
        const T *px = (const T *)x;                                                     \
        T *py = (T *)y;                                                                 \
        CT *q = (CT *)scratch, *qp = q + c * c, *p = qp + c;                            \
        CT eps = R_(R_((CT)0.005) / (CT)c);                                             \
        int64_t s, i, j, it;                                                            \
        for (s = 0; s < n; s++) {                                                       \
            const T *r = px + s * c * c;                                                \
            for (i = 0; i < c; i++)                                                     \
                for (j = 0; j < c; j++)                                                 \
                    q[i * c + j] = i == j ? 0 : -R_(L(r[i * c + j]) * L(r[j * c + i])); \
            for (j = 0; j < c; j++) {                                                   \
                CT d = 0;                                                               \
                for (i = 0; i < c; i++)                                                 \
                    if (i != j) d += R_(L(r[i * c + j]) * L(r[i * c + j]));             \
                q[j * c + j] = R_(d);                                                   \
            }                                                                           \
            for (i = 0; i < c; i++) p[i] = R_((CT)1 / (CT)c);                           \
            for (it = 0; it < 100; it++) {                                              \
                CT pqp = 0, worst = 0;                                                  \
                for (i = 0; i < c; i++) {                                               \
                    CT t = 0;                                                           \
                    for (j = 0; j < c; j++) t += q[i * c + j] * p[j];                   \
                    qp[i] = R_(t);                                                      \
                }                                                                       \
                for (i = 0; i < c; i++) pqp += R_(p[i] * qp[i]);                        \
                pqp = R_(pqp);                                                          \
                for (i = 0; i < c; i++) {                                               \
                    CT e = R_(qp[i] - pqp);                                             \
                    e = e < 0 ? -e : e;                                                 \
                    worst = (e > worst || e != e) ? e : worst; /* NaN: not done */ \
                }                                                                       \
                if (worst < eps) break;                                                 \
                for (i = 0; i < c; i++) {                                               \
                    CT qii = q[i * c + i], diff = R_(R_(pqp - qp[i]) / qii), grow;      \
                    p[i] = R_(p[i] + diff);                                             \
                    grow = R_((CT)1 + diff);                                            \
                    pqp = R_(R_(R_(pqp + R_(diff * R_(R_(diff * qii) + R_((CT)2 * qp[i])))) \
                                / grow) / grow);                                        \
                    for (j = 0; j < c; j++)                                             \
                        qp[j] = R_(R_(qp[j] + R_(diff * q[i * c + j])) / grow);         \
                    for (j = 0; j < c; j++) p[j] = R_(p[j] / grow);                     \
                }                                                                       \
            }                                                                           \
            for (i = 0; i < c; i++) py[s * c + i] = S(p[i]);                            \
        }                                                                               \
        return 0;                                                                       \
    }
#define R_(v) (v)
RLX_PAIRWISE(f32, float, float, f, RLX_ID, RLX_ID, _)
RLX_PAIRWISE(f64, double, double, d, RLX_ID, RLX_ID, _)
#undef R_
#define R_(v) rlx_f16_to_f32(rlx_f32_to_f16(v))
RLX_PAIRWISE(f16, uint16_t, float, f, rlx_f16_to_f32, rlx_f32_to_f16, _)
#undef R_
#define R_(v) rlx_bf16_to_f32(rlx_f32_to_bf16(v))
RLX_PAIRWISE(bf16, uint16_t, float, f, rlx_bf16_to_f32, rlx_f32_to_bf16, _)
#undef R_
