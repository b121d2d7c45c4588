/* Elementwise kernels: unary, binary, compare, where, with NumPy broadcasting through
 * element strides. The row loop has contiguous and broadcast-scalar fast paths the
 * compiler vectorises. An output may alias an operand read at the same index (the
 * planner's in-place reuse). */
#ifndef RLX_ELEMENTWISE_H
#define RLX_ELEMENTWISE_H
#include "rlx_scalar.h"

#define RLX_UNARY_KERNEL(op, sfx, T, CT, SF, LOAD, STORE)                               \
    RLX_UNARY_SIG(rlx_##op##_##sfx) {                                                   \
        T *py = (T *)y;                                                                 \
        const T *px = (const T *)x;                                                     \
        int64_t n = rank ? shape[rank - 1] : 1, rows = rlx_rows(rank, shape), r, i;     \
        int64_t s = rank ? sx[rank - 1] : 0, idx[RLX_MAX_RANK] = {0}, off[1] = {0};     \
        const int64_t *st[1];                                                           \
        st[0] = sx;                                                                     \
        for (r = 0; r < rows; r++, py += n) {                                           \
            const T *row = px + off[0];                                                 \
            if (s == 1) {                                                               \
                for (i = 0; i < n; i++) py[i] = STORE(rlx_s_##op##_##SF((CT)LOAD(row[i]))); \
            } else if (s == 0) {                                                        \
                T v = STORE(rlx_s_##op##_##SF((CT)LOAD(row[0])));                       \
                for (i = 0; i < n; i++) py[i] = v;                                      \
            } else {                                                                    \
                for (i = 0; i < n; i++) py[i] = STORE(rlx_s_##op##_##SF((CT)LOAD(row[i * s]))); \
            }                                                                           \
            rlx_advance(rank, shape, idx, 1, off, st);                                  \
        }                                                                               \
        return 0;                                                                       \
    }

#define RLX_BINARY_KERNEL(op, sfx, T, CT, SF, LOAD, STORE)                              \
    RLX_BINARY_SIG(rlx_##op##_##sfx) {                                                  \
        T *py = (T *)y;                                                                 \
        const T *pa = (const T *)a, *pb = (const T *)b;                                 \
        int err = 0;                                                                    \
        RLX_TWO_OPERAND_ROWS(sa, sb)                                                    \
        for (r = 0; r < rows; r++, py += n) {                                           \
            const T *ra = pa + off[0], *rb = pb + off[1];                               \
            if (s1 == 1 && s2 == 1) {                                                   \
                for (i = 0; i < n; i++)                                                 \
                    py[i] = STORE(rlx_s_##op##_##SF((CT)LOAD(ra[i]), (CT)LOAD(rb[i]), &err)); \
            } else if (s1 == 1 && s2 == 0) {                                            \
                CT vb = (CT)LOAD(rb[0]);                                                \
                for (i = 0; i < n; i++) py[i] = STORE(rlx_s_##op##_##SF((CT)LOAD(ra[i]), vb, &err)); \
            } else if (s1 == 0 && s2 == 1) {                                            \
                CT va = (CT)LOAD(ra[0]);                                                \
                for (i = 0; i < n; i++) py[i] = STORE(rlx_s_##op##_##SF(va, (CT)LOAD(rb[i]), &err)); \
            } else {                                                                    \
                for (i = 0; i < n; i++)                                                 \
                    py[i] = STORE(rlx_s_##op##_##SF((CT)LOAD(ra[i * s1]), (CT)LOAD(rb[i * s2]), &err)); \
            }                                                                           \
            rlx_advance(rank, shape, idx, 2, off, st);                                  \
        }                                                                               \
        return err;                                                                     \
    }

#define RLX_COMPARE_KERNEL(op, sym, sfx, T, CT, LOAD)                                   \
    RLX_BINARY_SIG(rlx_cmp_##op##_##sfx) {                                              \
        uint8_t *py = (uint8_t *)y;                                                     \
        const T *pa = (const T *)a, *pb = (const T *)b;                                 \
        RLX_TWO_OPERAND_ROWS(sa, sb)                                                    \
        for (r = 0; r < rows; r++, py += n) {                                           \
            const T *ra = pa + off[0], *rb = pb + off[1];                               \
            if (s1 == 1 && s2 == 1) {                                                   \
                for (i = 0; i < n; i++) py[i] = (uint8_t)((CT)LOAD(ra[i]) sym (CT)LOAD(rb[i])); \
            } else {                                                                    \
                for (i = 0; i < n; i++)                                                 \
                    py[i] = (uint8_t)((CT)LOAD(ra[i * s1]) sym (CT)LOAD(rb[i * s2]));   \
            }                                                                           \
            rlx_advance(rank, shape, idx, 2, off, st);                                  \
        }                                                                               \
        return 0;                                                                       \
    }
/* The operands' fold over a chunk of a row, in the compute type, before it is stored: a
 * broadcast operand is loaded once, a contiguous one in a loop the compiler vectorises. */
#define RLX_VARIADIC_CHUNK 64
#define RLX_VARIADIC_STEP(op, T, CT, SF, LOAD, STORE, row, s, FIRST)                    \
    if (s == 0) {                                                                       \
        CT v = (CT)LOAD(row[0]);                                                        \
        for (i = 0; i < m; i++) acc[i] = FIRST ? v : (CT)LOAD(STORE(rlx_s_##op##_##SF(acc[i], v, &err))); \
    } else if (s == 1) {                                                                \
        for (i = 0; i < m; i++)                                                         \
            acc[i] = FIRST ? (CT)LOAD(row[j + i])                                       \
                           : (CT)LOAD(STORE(rlx_s_##op##_##SF(acc[i], (CT)LOAD(row[j + i]), &err))); \
    } else {                                                                            \
        for (i = 0; i < m; i++)                                                         \
            acc[i] = FIRST ? (CT)LOAD(row[(j + i) * s])                                 \
                           : (CT)LOAD(STORE(rlx_s_##op##_##SF(acc[i], (CT)LOAD(row[(j + i) * s]), &err))); \
    }

#define RLX_VARIADIC_KERNEL(op, sfx, T, CT, SF, LOAD, STORE)                            \
    RLX_VARIADIC_SIG(rlx_##op##_n_##sfx) {                                              \
        T *py = (T *)y;                                                                 \
        int err = 0;                                                                    \
        int64_t n = rank ? shape[rank - 1] : 1, rows = rlx_rows(rank, shape), r, i, j, k, m; \
        int64_t idx[RLX_MAX_RANK] = {0}, off[RLX_MAX_VARIADIC] = {0};                   \
        const int64_t *st[RLX_MAX_VARIADIC];                                            \
        CT acc[RLX_VARIADIC_CHUNK];                                                     \
        if (count < 2 || count > RLX_MAX_VARIADIC) return RLX_ERR_ARGUMENT;         \
        for (k = 0; k < count; k++) st[k] = strides + k * rank;                         \
        for (r = 0; r < rows; r++, py += n) {                                           \
            for (j = 0; j < n; j += RLX_VARIADIC_CHUNK) {                               \
                m = n - j < RLX_VARIADIC_CHUNK ? n - j : RLX_VARIADIC_CHUNK;            \
                for (k = 0; k < count; k++) {                                           \
                    const T *row = (const T *)xs[k] + off[k];                           \
                    int64_t s = rank ? st[k][rank - 1] : 0;                             \
                    if (k == 0) {                                                       \
                        RLX_VARIADIC_STEP(op, T, CT, SF, LOAD, STORE, row, s, 1)        \
                    } else {                                                            \
                        RLX_VARIADIC_STEP(op, T, CT, SF, LOAD, STORE, row, s, 0)        \
                    }                                                                   \
                }                                                                       \
                if (divisor) {                                                          \
                    CT d = (CT)LOAD(STORE((CT)divisor));                                \
                    for (i = 0; i < m; i++) acc[i] = acc[i] / d;                        \
                }                                                                       \
                for (i = 0; i < m; i++) py[j + i] = STORE(acc[i]);                      \
            }                                                                           \
            rlx_advance(rank, shape, idx, (int)count, off, st);                         \
        }                                                                               \
        return err;                                                                     \
    }
#endif /* RLX_ELEMENTWISE_H */
