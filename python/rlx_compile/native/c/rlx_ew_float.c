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

#define RLX_FLOAT_COMPARE_T(sfx, T, CT, CF, L, S, ...)                                  \
    RLX_COMPARE_OPS(RLX_COMPARE_OP_F, sfx, T, CT, L)
#define RLX_COMPARE_OP_F(op, sym, sfx, T, CT, L) RLX_COMPARE_KERNEL(op, sym, sfx, T, CT, L)
RLX_FLOAT_TYPES(RLX_FLOAT_COMPARE_T, _)

