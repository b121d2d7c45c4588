/* Elementwise kernels of the integer and bool types (rlx_elementwise.h). */
#include "rlx_elementwise.h"

/* ---- integer types ----------------------------------------------------------------- */
#define RLX_INT_UNARY_T(sfx, T, UT, SG, MN, MX, ...)                                    \
    RLX_INT_UNARY_OPS(RLX_UNARY_OP_I, sfx, T)
#define RLX_UNARY_OP_I(op, sfx, T) RLX_UNARY_KERNEL(op, sfx, T, T, sfx, RLX_ID, RLX_ID)
RLX_INT_TYPES(RLX_INT_UNARY_T, _)

#define RLX_INT_BINARY_T(sfx, T, UT, SG, MN, MX, ...)                                   \
    RLX_INT_BINARY_OPS(RLX_BINARY_OP_I, sfx, T)
#define RLX_BINARY_OP_I(op, sfx, T) RLX_BINARY_KERNEL(op, sfx, T, T, sfx, RLX_ID, RLX_ID)
RLX_INT_TYPES(RLX_INT_BINARY_T, _)

#define RLX_INT_VARIADIC_T(sfx, T, UT, SG, MN, MX, ...)                                 \
    RLX_VARIADIC_OPS(RLX_VARIADIC_OP_I, sfx, T)
#define RLX_VARIADIC_OP_I(op, sfx, T) RLX_VARIADIC_KERNEL(op, sfx, T, T, sfx, RLX_ID, RLX_ID)
RLX_INT_TYPES(RLX_INT_VARIADIC_T, _)

#define RLX_INT_COMPARE_T(sfx, T, UT, SG, MN, MX, ...)                                  \
    RLX_COMPARE_OPS(RLX_COMPARE_OP_I, sfx, T)
#define RLX_COMPARE_OP_I(op, sym, sfx, T) RLX_COMPARE_KERNEL(op, sym, sfx, T, T, RLX_ID)
RLX_INT_TYPES(RLX_INT_COMPARE_T, _)

/* ---- bool ------------------------------------------------------------------------- */
RLX_INLINE uint8_t rlx_s_not_b(uint8_t x) { return (uint8_t)!x; }
RLX_INLINE uint8_t rlx_s_and_b(uint8_t a, uint8_t b, int *e) { (void)e; return (uint8_t)(a && b); }
RLX_INLINE uint8_t rlx_s_or_b(uint8_t a, uint8_t b, int *e) { (void)e; return (uint8_t)(a || b); }
RLX_INLINE uint8_t rlx_s_xor_b(uint8_t a, uint8_t b, int *e) { (void)e; return (uint8_t)(!a != !b); }
RLX_UNARY_KERNEL(not, b, uint8_t, uint8_t, b, RLX_ID, RLX_ID)
RLX_BINARY_KERNEL(and, b, uint8_t, uint8_t, b, RLX_ID, RLX_ID)
RLX_BINARY_KERNEL(or, b, uint8_t, uint8_t, b, RLX_ID, RLX_ID)
RLX_BINARY_KERNEL(xor, b, uint8_t, uint8_t, b, RLX_ID, RLX_ID)
#define RLX_COMPARE_OP_B(op, sym, sfx) RLX_COMPARE_KERNEL(op, sym, sfx, uint8_t, int, RLX_ID)
RLX_COMPARE_OPS(RLX_COMPARE_OP_B, b)

/* ---- where ------------------------------------------------------------------------ */
#define RLX_WHERE_KERNEL(bytes, T)                                                      \
    RLX_WHERE_SIG(rlx_where_##bytes) {                                                  \
        T *py = (T *)y;                                                                 \
        const uint8_t *pc = (const uint8_t *)c;                                         \
        const T *pa = (const T *)a, *pb = (const T *)b;                                 \
        int64_t n = rank ? shape[rank - 1] : 1, rows = rlx_rows(rank, shape), r, i;     \
        int64_t s0 = rank ? sc[rank - 1] : 0, s1 = rank ? sa[rank - 1] : 0;             \
        int64_t s2 = rank ? sb[rank - 1] : 0, idx[RLX_MAX_RANK] = {0}, off[3] = {0, 0, 0}; \
        const int64_t *st[3];                                                           \
        st[0] = sc;                                                                     \
        st[1] = sa;                                                                     \
        st[2] = sb;                                                                     \
        for (r = 0; r < rows; r++, py += n) {                                           \
            const uint8_t *rc = pc + off[0];                                            \
            const T *ra = pa + off[1], *rb = pb + off[2];                               \
            if (s0 == 1 && s1 == 1 && s2 == 1) {                                        \
                for (i = 0; i < n; i++) py[i] = rc[i] ? ra[i] : rb[i];                  \
            } else {                                                                    \
                for (i = 0; i < n; i++) py[i] = rc[i * s0] ? ra[i * s1] : rb[i * s2];   \
            }                                                                           \
            rlx_advance(rank, shape, idx, 3, off, st);                                  \
        }                                                                               \
        return 0;                                                                       \
    }
RLX_WHERE_KERNEL(1, uint8_t)
RLX_WHERE_KERNEL(2, uint16_t)
RLX_WHERE_KERNEL(4, uint32_t)
RLX_WHERE_KERNEL(8, uint64_t)
