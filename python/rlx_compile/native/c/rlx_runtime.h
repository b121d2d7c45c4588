/* rlx-compile native kernel library (C99).
 *
 * The kernels that code emitted from LIR calls: every tensor is a pointer into the
 * planned arena, the weights blob or a caller's buffer; shapes and strides come as
 * int64 arrays the emitter writes as constants. Kernels never allocate: the few that
 * need scratch memory get a pointer into the scratch region the emitter reserves after
 * the planned arena. Every kernel returns 0 or an RLX_ERR_* code.
 *
 * Element types are spelled by a suffix: f32 f64 f16 bf16 (f16/bf16 stored as their
 * bits, computed in f32 and rounded once per op, as the reference executor does),
 * i8 i16 i32 i64 u8 u16 u32 u64 (wrapping arithmetic), b (bool, one byte 0/1).
 *
 * The reference executor (rlx_compile.interpreter) defines what every kernel computes;
 * tests/native checks each kernel against it.
 */
#ifndef RLX_RUNTIME_H
#define RLX_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RLX_MAX_RANK 16
/* Operands of one variadic kernel call (rlx_*_n_*); the emitter folds more in groups. */
#define RLX_MAX_VARIADIC 32

enum {
    RLX_OK = 0,
    RLX_ERR_DIV_ZERO = 1,      /* integer division or modulo by zero */
    RLX_ERR_INDEX = 2,         /* gather/scatter index out of range */
    RLX_ERR_POW_ZERO = 3,      /* integer zero raised to a negative power */
    RLX_ERR_EMPTY = 4,         /* max/min/arg reduction over an empty axis */
    RLX_ERR_PAD = 5,           /* reflect pad wider than the axis, or pad of an empty axis */
    RLX_ERR_ARGUMENT = 6       /* a call outside the kernel's limits (an emitter's bug) */
};

/* Fused epilogue activations (rlx_compile.dialects.common.Activation). */
enum {
    RLX_ACT_NONE = 0,
    RLX_ACT_RELU = 1,
    RLX_ACT_GELU = 2,
    RLX_ACT_GELU_TANH = 3,
    RLX_ACT_SILU = 4,
    RLX_ACT_SIGMOID = 5,
    RLX_ACT_TANH = 6,
    /* the parameterised ones (rlx_param_act_*, not in the fused epilogues) */
    RLX_ACT_CLIP = 7,
    RLX_ACT_HARD_SIGMOID = 8,
    RLX_ACT_HARD_SWISH = 9,
    RLX_ACT_LEAKY_RELU = 10,
    /* parameterised ops that are never an epilogue */
    RLX_ACT_ELU = 11,
    RLX_ACT_THRESHOLDED_RELU = 12,
    RLX_ACT_SWISH = 13,
    /* a scale by a constant (mir.scaled_matmul's, after its product) */
    RLX_ACT_SCALE = 14,
    RLX_ACT_DIVIDE = 15
};

/* ---- the element types, as X-macro lists ----------------------------------------- */
/* X(suffix, storage type, compute type, f|d (compute float/double), load, store) */
#define RLX_FLOAT_TYPES(X, ...)                                                         \
    X(f32, float, float, f, RLX_ID, RLX_ID, __VA_ARGS__)                                \
    X(f64, double, double, d, RLX_ID, RLX_ID, __VA_ARGS__)                              \
    X(f16, uint16_t, float, f, rlx_f16_to_f32, rlx_f32_to_f16, __VA_ARGS__)             \
    X(bf16, uint16_t, float, f, rlx_bf16_to_f32, rlx_f32_to_bf16, __VA_ARGS__)
/* X(suffix, type, unsigned type, is signed, min, max) */
#define RLX_INT_TYPES(X, ...)                                                           \
    X(i8, int8_t, uint8_t, 1, INT8_MIN, INT8_MAX, __VA_ARGS__)                          \
    X(i16, int16_t, uint16_t, 1, INT16_MIN, INT16_MAX, __VA_ARGS__)                     \
    X(i32, int32_t, uint32_t, 1, INT32_MIN, INT32_MAX, __VA_ARGS__)                     \
    X(i64, int64_t, uint64_t, 1, INT64_MIN, INT64_MAX, __VA_ARGS__)                     \
    X(u8, uint8_t, uint8_t, 0, 0, UINT8_MAX, __VA_ARGS__)                               \
    X(u16, uint16_t, uint16_t, 0, 0, UINT16_MAX, __VA_ARGS__)                           \
    X(u32, uint32_t, uint32_t, 0, 0, UINT32_MAX, __VA_ARGS__)                           \
    X(u64, uint64_t, uint64_t, 0, 0, UINT64_MAX, __VA_ARGS__)

#define RLX_ID(x) (x)

/* ---- f16 / bf16 ------------------------------------------------------------------- */

/* Round a double to a binary format with `ebits` exponent and `mbits` mantissa bits
 * (IEEE-like: infinities, subnormals), round half to even; returns the bits. */
uint32_t rlx_round_f64_bits(double x, int ebits, int mbits);
float rlx_f16_to_f32(uint16_t h);
uint16_t rlx_f32_to_f16(float f);
uint16_t rlx_f64_to_f16(double d);
uint16_t rlx_f32_to_bf16(float f);
uint16_t rlx_f64_to_bf16(double d);
float rlx_bf16_to_f32(uint16_t b);

/* ---- elementwise ------------------------------------------------------------------ */
/* Elementwise kernels write a dense row-major result of `shape`; each operand is read
 * at element strides (0 along broadcast dims) over the same index space. */
#define RLX_UNARY_SIG(name)                                                              \
    int name(int64_t rank, const int64_t *shape, void *y, const void *x, const int64_t *sx)
#define RLX_BINARY_SIG(name)                                                             \
    int name(int64_t rank, const int64_t *shape, void *y, const void *a, const int64_t *sa, \
             const void *b, const int64_t *sb)
#define RLX_WHERE_SIG(name)                                                              \
    int name(int64_t rank, const int64_t *shape, void *y, const void *c, const int64_t *sc, \
             const void *a, const int64_t *sa, const void *b, const int64_t *sb)
#define RLX_CAST_SIG(name) int name(int64_t n, void *y, const void *x)

#define RLX_FLOAT_UNARY_OPS(X, ...)                                                     \
    X(neg, __VA_ARGS__) X(abs, __VA_ARGS__) X(relu, __VA_ARGS__) X(sign, __VA_ARGS__)  \
    X(exp, __VA_ARGS__) X(log, __VA_ARGS__) X(sqrt, __VA_ARGS__) X(rsqrt, __VA_ARGS__) \
    X(reciprocal, __VA_ARGS__) X(tanh, __VA_ARGS__) X(sigmoid, __VA_ARGS__)            \
    X(silu, __VA_ARGS__) X(erf, __VA_ARGS__) X(sin, __VA_ARGS__) X(cos, __VA_ARGS__)   \
    X(floor, __VA_ARGS__) X(ceil, __VA_ARGS__) X(round, __VA_ARGS__)                   \
    X(softplus, __VA_ARGS__) X(gelu, __VA_ARGS__) X(gelu_tanh, __VA_ARGS__)            \
    X(tan, __VA_ARGS__) X(asin, __VA_ARGS__) X(acos, __VA_ARGS__) X(atan, __VA_ARGS__) \
    X(sinh, __VA_ARGS__) X(cosh, __VA_ARGS__) X(asinh, __VA_ARGS__)                    \
    X(acosh, __VA_ARGS__) X(atanh, __VA_ARGS__) X(softsign, __VA_ARGS__)
#define RLX_INT_UNARY_OPS(X, ...)                                                       \
    X(neg, __VA_ARGS__) X(abs, __VA_ARGS__) X(relu, __VA_ARGS__) X(sign, __VA_ARGS__)  \
    X(bitwise_not, __VA_ARGS__)
#define RLX_FLOAT_BINARY_OPS(X, ...)                                                    \
    X(add, __VA_ARGS__) X(sub, __VA_ARGS__) X(mul, __VA_ARGS__) X(div, __VA_ARGS__)    \
    X(pow, __VA_ARGS__) X(max, __VA_ARGS__) X(min, __VA_ARGS__) X(mod, __VA_ARGS__)    \
    X(fmod, __VA_ARGS__) X(prelu, __VA_ARGS__)
#define RLX_INT_BINARY_OPS(X, ...)                                                      \
    X(add, __VA_ARGS__) X(sub, __VA_ARGS__) X(mul, __VA_ARGS__) X(div, __VA_ARGS__)    \
    X(pow, __VA_ARGS__) X(max, __VA_ARGS__) X(min, __VA_ARGS__) X(mod, __VA_ARGS__)    \
    X(fmod, __VA_ARGS__) X(bitwise_and, __VA_ARGS__) X(bitwise_or, __VA_ARGS__)        \
    X(bitwise_xor, __VA_ARGS__) X(shift_left, __VA_ARGS__) X(shift_right, __VA_ARGS__)
#define RLX_COMPARE_OPS(X, ...)                                                         \
    X(eq, ==, __VA_ARGS__) X(ne, !=, __VA_ARGS__) X(lt, <, __VA_ARGS__)                \
    X(le, <=, __VA_ARGS__) X(gt, >, __VA_ARGS__) X(ge, >=, __VA_ARGS__)

#define RLX_DECL_UNARY_F(op, sfx, ...) RLX_UNARY_SIG(rlx_##op##_##sfx);
#define RLX_DECL_UNARY_FT(sfx, T, CT, CF, L, S, ...) RLX_FLOAT_UNARY_OPS(RLX_DECL_UNARY_F, sfx)
RLX_FLOAT_TYPES(RLX_DECL_UNARY_FT, _)
#define RLX_DECL_UNARY_IT(sfx, T, UT, SG, MN, MX, ...) RLX_INT_UNARY_OPS(RLX_DECL_UNARY_F, sfx)
RLX_INT_TYPES(RLX_DECL_UNARY_IT, _)
RLX_UNARY_SIG(rlx_not_b);

#define RLX_DECL_BINARY(op, sfx, ...) RLX_BINARY_SIG(rlx_##op##_##sfx);
#define RLX_DECL_BINARY_FT(sfx, T, CT, CF, L, S, ...) RLX_FLOAT_BINARY_OPS(RLX_DECL_BINARY, sfx)
RLX_FLOAT_TYPES(RLX_DECL_BINARY_FT, _)
#define RLX_DECL_BINARY_IT(sfx, T, UT, SG, MN, MX, ...) RLX_INT_BINARY_OPS(RLX_DECL_BINARY, sfx)
RLX_INT_TYPES(RLX_DECL_BINARY_IT, _)
RLX_BINARY_SIG(rlx_and_b);
RLX_BINARY_SIG(rlx_or_b);
RLX_BINARY_SIG(rlx_xor_b);

/* y = xs[0] op xs[1] op ... op xs[count - 1], left to right, each step rounded to the
 * element type, then divided by `divisor` when it is not 0 (a mean); xs[k] broadcast
 * through strides[k * rank ...]; 1 < count <= RLX_MAX_VARIADIC. y is stored once per
 * element after every operand is read there, so it may alias any operand read at the
 * same index. */
#define RLX_VARIADIC_SIG(name)                                                           \
    int name(int64_t rank, const int64_t *shape, void *y, int64_t count,                 \
             const void *const *xs, const int64_t *strides, int64_t divisor)
#define RLX_VARIADIC_OPS(X, ...) X(add, __VA_ARGS__) X(max, __VA_ARGS__) X(min, __VA_ARGS__)
#define RLX_DECL_VARIADIC(op, sfx, ...) RLX_VARIADIC_SIG(rlx_##op##_n_##sfx);
#define RLX_DECL_VARIADIC_FT(sfx, ...) RLX_VARIADIC_OPS(RLX_DECL_VARIADIC, sfx)
RLX_FLOAT_TYPES(RLX_DECL_VARIADIC_FT, _)
RLX_INT_TYPES(RLX_DECL_VARIADIC_FT, _)

#define RLX_DECL_COMPARE(op, sym, sfx) RLX_BINARY_SIG(rlx_cmp_##op##_##sfx);
#define RLX_DECL_COMPARE_FT(sfx, T, CT, CF, L, S, ...) RLX_COMPARE_OPS(RLX_DECL_COMPARE, sfx)
RLX_FLOAT_TYPES(RLX_DECL_COMPARE_FT, _)
#define RLX_DECL_COMPARE_IT(sfx, T, UT, SG, MN, MX, ...) RLX_COMPARE_OPS(RLX_DECL_COMPARE, sfx)
RLX_INT_TYPES(RLX_DECL_COMPARE_IT, _)
RLX_COMPARE_OPS(RLX_DECL_COMPARE, b)

/* where: cond is bool; the branches are copied by element size (1, 2, 4, 8 bytes) */
RLX_WHERE_SIG(rlx_where_1);
RLX_WHERE_SIG(rlx_where_2);
RLX_WHERE_SIG(rlx_where_4);
RLX_WHERE_SIG(rlx_where_8);

/* cast: rlx_cast_<from>_<to>, contiguous, n elements */
#define RLX_ALL_TYPES(X, ...)                                                           \
    X(f32, __VA_ARGS__) X(f64, __VA_ARGS__) X(f16, __VA_ARGS__) X(bf16, __VA_ARGS__)   \
    X(i8, __VA_ARGS__) X(i16, __VA_ARGS__) X(i32, __VA_ARGS__) X(i64, __VA_ARGS__)     \
    X(u8, __VA_ARGS__) X(u16, __VA_ARGS__) X(u32, __VA_ARGS__) X(u64, __VA_ARGS__)     \
    X(b, __VA_ARGS__)
/* the same list again: a macro cannot expand inside its own expansion */
#define RLX_ALL_TYPES_TO(X, ...)                                                        \
    X(f32, __VA_ARGS__) X(f64, __VA_ARGS__) X(f16, __VA_ARGS__) X(bf16, __VA_ARGS__)   \
    X(i8, __VA_ARGS__) X(i16, __VA_ARGS__) X(i32, __VA_ARGS__) X(i64, __VA_ARGS__)     \
    X(u8, __VA_ARGS__) X(u16, __VA_ARGS__) X(u32, __VA_ARGS__) X(u64, __VA_ARGS__)     \
    X(b, __VA_ARGS__)
#define RLX_DECL_CAST(to, from) RLX_CAST_SIG(rlx_cast_##from##_##to);
#define RLX_DECL_CAST_FROM(from, ...) RLX_ALL_TYPES_TO(RLX_DECL_CAST, from)
RLX_ALL_TYPES(RLX_DECL_CAST_FROM, _)

/* ---- data movement (by element size; strides in bytes) --------------------------- */

/* dst[i] = src[i] over `shape`, both at byte strides. */
int rlx_copy(int64_t rank, const int64_t *shape, int64_t elem, void *dst, const int64_t *dst_strides,
             const void *src, const int64_t *src_strides);
int rlx_memcpy(void *dst, const void *src, int64_t nbytes);
int rlx_fail(int64_t code);
/* dst = table gathered along its middle axis: table [outer, axis_n, inner_bytes],
 * indices (n_idx of int type idx_kind: 0..7 = i8 i16 i32 i64 u8 u16 u32 u64). */
int rlx_gather(int64_t outer, int64_t axis_n, int64_t inner_bytes, void *dst, const void *table,
               const void *indices, int64_t n_idx, int64_t idx_kind);
/* dst = src gathered along the dims flagged in `gathered` (mir.gather_axes): dim a of
 * the output reads position indices_a[i] (i64, negative ones wrap) where flagged, i
 * elsewhere; indices: the flagged dims' vectors one after another; offsets: scratch of
 * sum(out_shape) int64. */
int rlx_gather_axes(int64_t rank, const int64_t *in_shape, const int64_t *out_shape,
                    const int64_t *gathered, int64_t elem, void *dst, const void *src,
                    const int64_t *indices, int64_t *offsets);
/* dst = src indexed along `axis` element by element (mir.gather_elements): output
 * position p (of idx_shape, each dim but the axis's at most in_shape's) reads src at p
 * with its axis coordinate replaced by indices[p] (i64, in [-n, n), negative ones wrap). */
int rlx_gather_elements(int64_t rank, const int64_t *in_shape, const int64_t *idx_shape,
                        int64_t axis, int64_t elem, void *dst, const void *src,
                        const int64_t *indices);
/* pad mode: 0 constant (fill = one element's bytes), 1 reflect, 2 edge, 3 wrap */
int rlx_pad(int64_t rank, const int64_t *in_shape, const int64_t *pads, int64_t mode,
            int64_t elem, void *dst, const void *src, const void *fill);

/* ---- linear algebra -------------------------------------------------------------- */
/* y[batch..., M, N] = a[.., M, K] x b[.., K, N]; batch dims at element strides (0 when
 * broadcast); scratch holds (M*K + K*N + M*N) floats for f16/bf16, none otherwise. */
#define RLX_MATMUL_SIG(name)                                                            \
    int name(int64_t batch_rank, const int64_t *batch_shape, const int64_t *a_bstrides,   \
             const int64_t *b_bstrides, int64_t M, int64_t N, int64_t K, void *y,         \
             const void *a, const void *b, void *scratch)
#define RLX_DECL_MATMUL(sfx, ...) RLX_MATMUL_SIG(rlx_matmul_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_MATMUL, _)
RLX_INT_TYPES(RLX_DECL_MATMUL, _)

/* y[outer, C, inner]: ((y + bias[c]) + residual) -> activation -> max(., lo) ->
 * min(., hi), rounded after every step like the unfused chain (bias and residual may be
 * NULL; lo = -inf and hi = +inf clamp nothing). */
#define RLX_EPILOGUE_SIG(name)                                                          \
    int name(int64_t outer, int64_t channels, int64_t inner, void *y, const void *bias,  \
             const void *residual, int64_t act, double lo, double hi)
/* lrn of x [n, c, inner] (mir.lrn: the window (size - 1) / 2 channels before c) */
#define RLX_DECL_LRN(sfx, ...)                                                          \
    int rlx_lrn_##sfx(int64_t n, int64_t c, int64_t inner, void *y, const void *x,       \
                      int64_t size, double alpha, double beta, double bias);
RLX_FLOAT_TYPES(RLX_DECL_LRN, _)
/* one LSTM step (mir.fused_lstm_cell) over rows x hidden: gates [rows, 4 * hidden] with
 * the input, output, forget and cell gates' blocks at order[0..3] * hidden, prev and the
 * results h, c [rows, hidden]; rounded per step like the unfused chain; scratch: 2 *
 * hidden compute-type elements (f32, f64 for f64) */
#define RLX_DECL_LSTM_CELL(sfx, ...)                                                    \
    int rlx_lstm_cell_##sfx(int64_t rows, int64_t hidden, const int64_t *order, void *h, \
                            void *c, const void *gates, const void *prev, void *scratch);
RLX_FLOAT_TYPES(RLX_DECL_LSTM_CELL, _)
/* one GRU step (mir.fused_gru_cell) over rows x hidden: gx, gh [rows, 3 * hidden] with
 * the update, reset and new gates' blocks at order[0..2] * hidden in both, prev and the
 * result h [rows, hidden] (h may be prev); rounded per step like the unfused chain;
 * scratch: 2 * hidden compute-type elements (f32, f64 for f64) */
#define RLX_DECL_GRU_CELL(sfx, ...)                                                     \
    int rlx_gru_cell_##sfx(int64_t rows, int64_t hidden, const int64_t *order, void *h,  \
                           const void *gx, const void *gh, const void *prev, void *scratch);
RLX_FLOAT_TYPES(RLX_DECL_GRU_CELL, _)
/* A whole recurrent layer (mir.rnn / mir.gru / mir.lstm; rlx_recurrent.c). geom:
 * [kind (0 rnn, 1 gru, 2 lstm), seq, batch, input, hidden, dirs, backwards of direction
 * 0, of direction 1, batch_first, lens (-1 none, 2 i32, 3 i64), linear_before_reset,
 * input_forget, quantized (0: float weights; else 1 | W is i8 << 1 | R is i8 << 2),
 * W's scales per row, R's per row, clip given]; acts: each direction's activation
 * codes, act_params their (alpha, beta) as doubles; y, yh (and yc for an LSTM) as the
 * op's results; absent operands NULL; scratch as the emitter sizes it. */
#define RLX_RECURRENT_SIG(name)                                                         \
    int name(const int64_t *geom, const int64_t *acts, const void *act_params, double clip, \
             void *y, void *yh, void *yc, const void *x, const void *w, const void *r,   \
             const void *bias, const void *lens, const void *initial_h,                  \
             const void *initial_c, const void *peepholes, const void *w_scale,          \
             const void *w_zp, const void *r_scale, const void *r_zp, void *scratch)
#define RLX_DECL_RECURRENT(sfx, ...) RLX_RECURRENT_SIG(rlx_recurrent_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_RECURRENT, _)
/* y[i] = act(x[i]) over n dense elements for the parameterised activations (clip
 * [p0, p1], hard sigmoid alpha p0 beta p1, hard swish, leaky relu alpha p0, elu alpha
 * p0 scale p1, thresholded relu alpha p0, swish alpha p0, x * p0, x / p0), computed in the
 * compute type, the parameters rounded to it; y may be x. */
#define RLX_DECL_PARAM_ACT(sfx, ...)                                                    \
    int rlx_param_act_##sfx(int64_t n, void *y, const void *x, int64_t act, double p0, double p1);
RLX_FLOAT_TYPES(RLX_DECL_PARAM_ACT, _)
#define RLX_DECL_EPILOGUE(sfx, ...) RLX_EPILOGUE_SIG(rlx_epilogue_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_EPILOGUE, _)

/* conv geometry: [algo, N, C_in, C_out, groups, in[3], kernel[3], out[3], stride[3],
 * pad_begin[3], dilation[3]] (see rlx_linalg.c); scratch as the emitter sizes it. f32
 * and f64 convolutions apply the epilogue (bias, residual, act, lo, hi as above) to each
 * block they produce, while it is in cache; f16/bf16 ones take none (NULL, NULL, 0, -inf,
 * inf): their epilogue rounds per step, a separate call. */
#define RLX_CONV_SIG(name)                                                              \
    int name(const int64_t *geom, void *y, const void *x, const void *w, void *scratch,  \
             const void *bias, const void *residual, int64_t act, double lo, double hi)
#define RLX_DECL_CONV(sfx, ...) RLX_CONV_SIG(rlx_conv_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_CONV, _)

/* transposed conv geometry: [N, C_in, C_out, groups, in[3], kernel[3], out[3],
 * stride[3], pad_begin[3], dilation[3], tile, crop[3]] (see rlx_linalg.c); w [C_in,
 * C_out/groups, k...]; bias [C_out] or NULL; scratch as the emitter sizes it. */
#define RLX_CONV_TRANSPOSE_SIG(name)                                                    \
    int name(const int64_t *geom, void *y, const void *x, const void *w, const void *bias, \
             void *scratch)
#define RLX_DECL_CONV_TRANSPOSE(sfx, ...) RLX_CONV_TRANSPOSE_SIG(rlx_conv_transpose_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_CONV_TRANSPOSE, _)

/* pool geometry: [N, C, in[3], kernel[3], out[3], stride[3], pad_begin[3], pad_end[3],
 * dilation[3]] (1-d and 2-d pools padded to 3 spatial dims); flag: count_include_pad for
 * avg; scratch: one compute-type element (f32, f64 for f64) per output of the last dim */
#define RLX_POOL_SIG(name)                                                              \
    int name(const int64_t *geom, void *y, const void *x, int64_t flag, void *scratch)
#define RLX_DECL_POOL(sfx, ...) RLX_POOL_SIG(rlx_max_pool_##sfx); RLX_POOL_SIG(rlx_avg_pool_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_POOL, _)
RLX_DECL_POOL(i8) RLX_DECL_POOL(u8)

/* ---- reductions and normalisation -------------------------------------------------- */
/* Reduce x[shape] over the dims with reduced[d] != 0 into y (the kept dims, row-major).
 * acc: one 8-byte accumulator per output element. */
#define RLX_REDUCE_SIG(name)                                                            \
    int name(int64_t rank, const int64_t *shape, const int64_t *reduced, void *y,        \
             const void *x, void *acc)
#define RLX_REDUCE_KINDS(X, ...)                                                        \
    X(sum, __VA_ARGS__) X(mean, __VA_ARGS__) X(max, __VA_ARGS__) X(min, __VA_ARGS__)   \
    X(prod, __VA_ARGS__) X(sum_square, __VA_ARGS__) X(l1, __VA_ARGS__)
#define RLX_DECL_REDUCE(kind, sfx) RLX_REDUCE_SIG(rlx_reduce_##kind##_##sfx);
#define RLX_DECL_REDUCE_T(sfx, ...) RLX_REDUCE_KINDS(RLX_DECL_REDUCE, sfx)
RLX_FLOAT_TYPES(RLX_DECL_REDUCE_T, _)
RLX_INT_TYPES(RLX_DECL_REDUCE_T, _)
/* log Σ exp(x) over the reduced dims, shifted by the max (an infinite max by 0);
 * floats only; acc: two 8-byte accumulators per output element */
#define RLX_DECL_REDUCE_LSE(sfx, ...) RLX_REDUCE_SIG(rlx_reduce_log_sum_exp_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_REDUCE_LSE, _)
/* sqrt of the sum of squares (the sum rounded to the type first), log of the sum;
 * floats only */
#define RLX_DECL_REDUCE_FLOAT_ONLY(sfx, ...)                                            \
    RLX_REDUCE_SIG(rlx_reduce_l2_##sfx);                                                \
    RLX_REDUCE_SIG(rlx_reduce_log_sum_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_REDUCE_FLOAT_ONLY, _)

/* Along the middle axis of [outer, n, inner]: softmax, log_softmax, argmax/argmin
 * (int64 results), and the running sum/product (exclusive: shifted by one, reverse:
 * from the end). */
#define RLX_AXIS_SIG(name) int name(int64_t outer, int64_t n, int64_t inner, void *y, const void *x)
#define RLX_SCAN_SIG(name)                                                              \
    int name(int64_t outer, int64_t n, int64_t inner, void *y, const void *x,            \
             int64_t exclusive, int64_t reverse)
#define RLX_DECL_AXIS_F(sfx, ...)                                                       \
    RLX_AXIS_SIG(rlx_softmax_##sfx); RLX_AXIS_SIG(rlx_log_softmax_##sfx);               \
    RLX_AXIS_SIG(rlx_argmax_##sfx); RLX_AXIS_SIG(rlx_argmin_##sfx);                     \
    RLX_SCAN_SIG(rlx_cumsum_##sfx); RLX_SCAN_SIG(rlx_cumprod_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_AXIS_F, _)
#define RLX_DECL_AXIS_I(sfx, ...)                                                       \
    RLX_AXIS_SIG(rlx_argmax_##sfx); RLX_AXIS_SIG(rlx_argmin_##sfx);                     \
    RLX_SCAN_SIG(rlx_cumsum_##sfx); RLX_SCAN_SIG(rlx_cumprod_##sfx);
RLX_INT_TYPES(RLX_DECL_AXIS_I, _)

/* pairwise coupling: x [n, c, c] pairwise probabilities -> y [n, c]; scratch c*c + 2c
 * elements of the compute type. */
#define RLX_DECL_PAIRWISE(sfx, ...)                                                     \
    int rlx_pairwise_coupling_##sfx(int64_t n, int64_t c, void *y, const void *x, void *scratch);
RLX_FLOAT_TYPES(RLX_DECL_PAIRWISE, _)

/* classic ML (rlx_ml.c): a model's tables as constant arrays; f32 and f64.
 * Tree successors and roots: a branch index, or -1 - leaf; missing / mstarts NULL when
 * absent. aggregate: 0 sum, 1 average, 2 min, 3 max; post: 0 none, 1 logistic,
 * 2 softmax, 3 softmax_zero, 4 probit; kernel: 0 linear, 1 poly, 2 rbf, 3 sigmoid. */
#define RLX_DECL_TREES(sfx)                                                             \
    int rlx_tree_ensemble_##sfx(int64_t batch, int64_t features, int64_t trees,          \
                                int64_t outputs, void *y, const void *x,                 \
                                const int64_t *roots, const int64_t *feat,               \
                                const int64_t *modes, const double *splits,              \
                                const int64_t *tnext, const int64_t *fnext,              \
                                const int64_t *missing, const int64_t *mstarts,          \
                                const double *mvalues, const int64_t *lstarts,           \
                                const int64_t *ltargets, const double *lweights,         \
                                int64_t aggregate, const double *base, double fill,      \
                                int64_t post, void *scratch);                            \
    int rlx_tree_classifier_##sfx(int64_t batch, int64_t features, int64_t trees,        \
                                  int64_t classes, void *label, void *scores,            \
                                  const void *x, const int64_t *roots,                   \
                                  const int64_t *feat, const int64_t *modes,             \
                                  const double *splits, const int64_t *tnext,            \
                                  const int64_t *fnext, const int64_t *missing,          \
                                  const int64_t *mstarts, const double *mvalues,         \
                                  const int64_t *lstarts, const int64_t *ltargets,       \
                                  const double *lweights, const double *base,            \
                                  int64_t nbase, int64_t post, const int64_t *labels,    \
                                  int64_t one_class, int64_t positive, void *scratch);
RLX_DECL_TREES(f32)
RLX_DECL_TREES(f64)
RLX_DECL_TREES(f64_f32)
#define RLX_DECL_ML(sfx)                                                                \
    int rlx_svm_regressor_##sfx(int64_t batch, int64_t features, int64_t count, void *y, \
                                const void *x, const double *vectors, int64_t kind,      \
                                double gamma, double coef0, double degree,               \
                                const double *coefficients, double rho,                  \
                                int64_t one_class, void *scratch);                       \
    int rlx_svm_classifier_##sfx(int64_t batch, int64_t features, int64_t count,         \
                                 int64_t classes, int64_t width, void *label,            \
                                 void *scores, const void *x, const double *vectors,     \
                                 int64_t kind, double gamma, double coef0, double degree, \
                                 const double *table, const double *rho,                 \
                                 const double *prob_a, const double *prob_b, int64_t post, \
                                 const int64_t *labels, void *scratch);                  \
    int rlx_linear_classifier_##sfx(int64_t batch, int64_t features, int64_t rows,       \
                                    void *label, void *scores, const void *x,            \
                                    const double *weights, const double *intercepts,     \
                                    int64_t post, const int64_t *labels);                \
    int rlx_normalizer_##sfx(int64_t rows, int64_t n, void *y, const void *x, int64_t norm);
RLX_DECL_ML(f32)
RLX_DECL_ML(f64)
int rlx_label_encoder(int64_t n, int64_t x_code, int64_t y_code, void *y, const void *x,
                      const void *keys, int64_t nkeys, const void *values,
                      int64_t nan_matches);
#define RLX_DECL_PREPROCESS(sfx)                                                        \
    int rlx_scaler_##sfx(int64_t count, int64_t n, void *y, const void *x,               \
                         const double *offset, int64_t noffset, const double *scale,     \
                         int64_t nscale);                                                \
    int rlx_binarizer_##sfx(int64_t count, void *y, const void *x, double threshold);   \
    int rlx_imputer_##sfx(int64_t count, int64_t n, void *y, const void *x,              \
                          const double *imputed, int64_t nimputed, double replaced);
RLX_DECL_PREPROCESS(f32)
RLX_DECL_PREPROCESS(f64)
int rlx_one_hot_encoder(int64_t rows, int64_t ncols, int64_t ncats, void *y, const void *x,
                        const int64_t *starts, const int64_t *categories);

/* scatter_nd: out (already a copy of data) [q dims..., inner elements] gets `m` updates
 * of `inner` elements at the int indices [m, q]; reduction 0 none, 1 add, 2 mul, 3 max,
 * 4 min; dtype: position in RLX_ALL_TYPES. */
int rlx_scatter_nd(int64_t q, const int64_t *dims, int64_t inner, int64_t m, int64_t dtype,
                   int64_t reduction, void *out, const void *indices, int64_t idx_kind,
                   const void *updates);

/* topk along the middle axis of [outer, n, inner]: k values and their i64 indices;
 * scratch holds 2*n int64. */
#define RLX_TOPK_SIG(name)                                                              \
    int name(int64_t outer, int64_t n, int64_t inner, int64_t k, int64_t smallest,       \
             void *values, void *indices, const void *x, void *scratch)
#define RLX_DECL_TOPK(sfx, ...) RLX_TOPK_SIG(rlx_topk_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_TOPK, _)
RLX_INT_TYPES(RLX_DECL_TOPK, _)

/* Norms over the trailing n elements of each of `rows` rows; scale/bias hold n values
 * (bias may be NULL). */
#define RLX_NORM_SIG(name)                                                              \
    int name(int64_t rows, int64_t n, double eps, void *y, const void *x, const void *scale, \
             const void *bias)
/* group norm: x [N, C, inner], `groups` groups of C/groups channels; scale/bias [C] */
#define RLX_GROUP_NORM_SIG(name)                                                        \
    int name(int64_t N, int64_t C, int64_t inner, int64_t groups, double eps, void *y,   \
             const void *x, const void *scale, const void *bias)
/* batch norm: x [N, C, inner] with per-channel statistics */
#define RLX_BATCH_NORM_SIG(name)                                                        \
    int name(int64_t N, int64_t C, int64_t inner, double eps, void *y, const void *x,    \
             const void *scale, const void *bias, const void *mean, const void *var)
#define RLX_DECL_NORM(sfx, ...)                                                         \
    RLX_NORM_SIG(rlx_layer_norm_##sfx); RLX_NORM_SIG(rlx_rms_norm_##sfx);               \
    RLX_GROUP_NORM_SIG(rlx_group_norm_##sfx); RLX_BATCH_NORM_SIG(rlx_batch_norm_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_NORM, _)

/* ---- attention, rope ------------------------------------------------------------- */
/* geom: [B, H, Hkv, Sq, Sk, D, Dv, k_batch_stride, v_batch_stride] (element strides of
 * k's and v's batch dim: 0 when broadcast). mask: element strides over [B, H, Sq, Sk]
 * (mask_kind 0 none, 1 causal, 2 explicit bool, 3 explicit additive). zero_nan: a NaN
 * probability counts as 0. scratch: see rlx_attention emitter (Sq*Sk floats, plus f32
 * copies of q/k/v heads for f16/bf16). */
#define RLX_ATTENTION_SIG(name)                                                         \
    int name(const int64_t *geom, void *y, const void *q, const void *k, const void *v,  \
             const void *mask, const int64_t *mask_strides, int64_t mask_kind,           \
             double scale, double softcap, int64_t zero_nan, void *scratch)
/* rope: x [rows, D] (rows over `lead_rank` leading dims), rotary dim r; cos/sin at
 * element strides over the leading dims and along the half. */
#define RLX_ROPE_SIG(name)                                                              \
    int name(int64_t lead_rank, const int64_t *lead_shape, int64_t D, int64_t rot,        \
             int64_t interleaved, void *y, const void *x, const void *cos,               \
             const int64_t *cos_strides, const void *sin, const int64_t *sin_strides)
#define RLX_DECL_ATTN(sfx, ...) RLX_ATTENTION_SIG(rlx_attention_##sfx); RLX_ROPE_SIG(rlx_rope_##sfx);
RLX_FLOAT_TYPES(RLX_DECL_ATTN, _)

/* ---- quantisation ----------------------------------------------------------------- */
/* x [outer, C, inner] with C scales (C = 1: per tensor); the scale is already in the
 * compute type (f32, or f64 when x or the scale is f64); zero point of the result type
 * or NULL. */
#define RLX_QUANTIZE_SIG(name)                                                          \
    int name(int64_t outer, int64_t channels, int64_t inner, void *y, const void *x,     \
             const void *scale, const void *zero_point)
#define RLX_QUANT_INT_TYPES(X, ...)                                                     \
    X(i8, __VA_ARGS__) X(i16, __VA_ARGS__) X(i32, __VA_ARGS__) X(i64, __VA_ARGS__)     \
    X(u8, __VA_ARGS__) X(u16, __VA_ARGS__) X(u32, __VA_ARGS__) X(u64, __VA_ARGS__)
#define RLX_DECL_QUANT(q, x, c) RLX_QUANTIZE_SIG(rlx_quantize_##x##_##c##_##q);
RLX_QUANT_INT_TYPES(RLX_DECL_QUANT, f32, f32)
RLX_QUANT_INT_TYPES(RLX_DECL_QUANT, f16, f32)
RLX_QUANT_INT_TYPES(RLX_DECL_QUANT, bf16, f32)
RLX_QUANT_INT_TYPES(RLX_DECL_QUANT, f32, f64)
RLX_QUANT_INT_TYPES(RLX_DECL_QUANT, f64, f64)
RLX_QUANT_INT_TYPES(RLX_DECL_QUANT, f16, f64)
RLX_QUANT_INT_TYPES(RLX_DECL_QUANT, bf16, f64)
/* y = (q - zero_point) * scale in the scale's type (rlx_dequantize_<q>_<scale>) */
#define RLX_DECL_DEQUANT(q, s) RLX_QUANTIZE_SIG(rlx_dequantize_##q##_##s);
RLX_QUANT_INT_TYPES(RLX_DECL_DEQUANT, f32)
RLX_QUANT_INT_TYPES(RLX_DECL_DEQUANT, f64)
RLX_QUANT_INT_TYPES(RLX_DECL_DEQUANT, f16)
RLX_QUANT_INT_TYPES(RLX_DECL_DEQUANT, bf16)

/* fake quantize: (clamp(rint(x / scale) + zp, qmin, qmax) - zp) * scale in CT, scale
 * and zero point given in CT (rlx_fake_quantize_<x>_<ct>) */
#define RLX_FAKE_QUANT_SIG(name)                                                        \
    int name(int64_t outer, int64_t channels, int64_t inner, void *y, const void *x,     \
             const void *scale, const void *zero_point, int64_t qmin, int64_t qmax)
RLX_FAKE_QUANT_SIG(rlx_fake_quantize_f32_f32);
RLX_FAKE_QUANT_SIG(rlx_fake_quantize_f16_f32);
RLX_FAKE_QUANT_SIG(rlx_fake_quantize_bf16_f32);
RLX_FAKE_QUANT_SIG(rlx_fake_quantize_f32_f64);
RLX_FAKE_QUANT_SIG(rlx_fake_quantize_f64_f64);
RLX_FAKE_QUANT_SIG(rlx_fake_quantize_f16_f64);
RLX_FAKE_QUANT_SIG(rlx_fake_quantize_bf16_f64);

/* ---- integer kernels (int8 x int8 -> int32, then f32 scale, bias, activation and,
 * with out_scale > 0, requantisation to the result type, then a lookup in table[256] of
 * that type when table is not NULL) ---------------------------------------------------- */
/* x [batch.., M, K] (i8 or u8, minus zx) times w [batch.., K, N] (i8 or u8, minus zw),
 * batch dims at element strides as rlx_matmul; scale/bias [N] f32 (bias may be NULL).
 * rows = 0: row by row, acc: N int32 scratch; rows > 0: the int16 GEMM on blocks of that
 * many rows, acc: w^T (N x Kp int16), a row block (rows x Kp int16) and its sums (rows x
 * N int32), Kp = K rounded up to 32. rlx_integer_matmul_<x>_<w>_<result> */
#define RLX_INTEGER_MATMUL_SIG(name)                                                    \
    int name(int64_t batch_rank, const int64_t *batch_shape, const int64_t *a_bstrides,   \
             const int64_t *b_bstrides, int64_t M, int64_t N, int64_t K, void *y,         \
             const void *x, const void *w, const void *scale, const void *bias, int64_t zx, \
             int64_t zw, int64_t act, double out_scale, int64_t out_zp, const void *table, \
             int64_t rows, void *acc)
/* conv geometry as rlx_conv; scale/bias [C_out]. algo 0: direct, acc: one output plane
 * of int32; algo 2: im2col + the int16 GEMM, tile = output positions per tile, acc: w as
 * int16 (C_out x Kp), the tile's columns (tile x Kp int16), its sums (C_out/G x tile
 * int32, an even count) and the taps' input offsets (taps int64), Kp = taps rounded up
 * to 32. rlx_integer_conv_<x>_<result> */
#define RLX_INTEGER_CONV_SIG(name)                                                      \
    int name(const int64_t *geom, void *y, const void *x, const void *w, const void *scale, \
             const void *bias, int64_t zx, int64_t act, double out_scale, int64_t out_zp, \
             const void *table, void *acc)
#define RLX_INTEGER_OUTS(X, XS) X(XS, f32) X(XS, i8) X(XS, u8)
#define RLX_DECL_INTEGER(XS, out)                                                       \
    RLX_INTEGER_MATMUL_SIG(rlx_integer_matmul_##XS##_i8_##out);                         \
    RLX_INTEGER_MATMUL_SIG(rlx_integer_matmul_##XS##_u8_##out);                         \
    RLX_INTEGER_CONV_SIG(rlx_integer_conv_##XS##_##out);
RLX_INTEGER_OUTS(RLX_DECL_INTEGER, i8)
RLX_INTEGER_OUTS(RLX_DECL_INTEGER, u8)
/* mir.quantized_add: y = quantize(act(dequantize(a) + dequantize(b))), each per tensor,
 * y dense of `shape`, a and b read at element strides as the elementwise kernels read
 * theirs; relu: 0 or 1. rlx_quantized_add_<a>_<b>_<y> */
#define RLX_QUANTIZED_ADD_SIG(name)                                                     \
    int name(int64_t rank, const int64_t *shape, void *y, const void *a, const int64_t *sa_, \
             const void *b, const int64_t *sb_, double a_scale, int64_t a_zp,           \
             double b_scale, int64_t b_zp, double y_scale, int64_t y_zp, int64_t relu)
#define RLX_8BIT_PAIRS(X, YS) X(i8, i8, YS) X(i8, u8, YS) X(u8, i8, YS) X(u8, u8, YS)
#define RLX_DECL_QUANTIZED_ADD(AS, BS, YS) RLX_QUANTIZED_ADD_SIG(rlx_quantized_add_##AS##_##BS##_##YS);
RLX_8BIT_PAIRS(RLX_DECL_QUANTIZED_ADD, i8)
RLX_8BIT_PAIRS(RLX_DECL_QUANTIZED_ADD, u8)
/* mir.quantized_avg_pool (geom as the pools'; include_pad: count_include_pad; scratch:
 * an int32 per output element of the last dim). rlx_quantized_avg_pool_<x> */
#define RLX_QUANTIZED_AVG_POOL_SIG(name)                                                \
    int name(const int64_t *geom, void *y, const void *x, int64_t include_pad,          \
             double x_scale, int64_t x_zp, double y_scale, int64_t y_zp, void *scratch)
RLX_QUANTIZED_AVG_POOL_SIG(rlx_quantized_avg_pool_i8);
RLX_QUANTIZED_AVG_POOL_SIG(rlx_quantized_avg_pool_u8);
/* mir.quantized_softmax of outer x n x inner elements along the n axis (stride inner);
 * table: its 256 exponentials (mir.softmax_table of x_scale). rlx_quantized_softmax_<x>_<y> */
#define RLX_QUANTIZED_SOFTMAX_SIG(name)                                                 \
    int name(int64_t outer, int64_t n, int64_t inner, void *y, const void *x,           \
             const int64_t *table, double y_scale, int64_t y_zp)
#define RLX_DECL_QUANTIZED_SOFTMAX(XS, YS, _) RLX_QUANTIZED_SOFTMAX_SIG(rlx_quantized_softmax_##XS##_##YS);
RLX_8BIT_PAIRS(RLX_DECL_QUANTIZED_SOFTMAX, _)

/* ---- ONNX's dynamic quantisation ------------------------------------------------------ */
/* DynamicQuantizeLinear of n f32: y (u8), the scale (one f32), the zero point (one u8). */
int rlx_dynamic_quantize_linear_f32(int64_t n, void *y, void *scale, void *zero_point,
                                    const void *x);
/* MatMulInteger: y [batch.., M, N] i32 = (a - za) . (b - zb), batch dims as rlx_matmul; a
 * zero point is NULL, one value (count 1) or one per row of a / column of b (count M or N;
 * a batch folded into rows repeats them). rlx_matmul_integer_<a>_<b> */
#define RLX_MATMUL_INTEGER_SIG(name)                                                    \
    int name(int64_t batch_rank, const int64_t *batch_shape, const int64_t *a_bstrides,   \
             const int64_t *b_bstrides, int64_t M, int64_t N, int64_t K, void *y,         \
             const void *a, const void *b, const void *a_zero_point, int64_t a_zp_count,   \
             const void *b_zero_point, int64_t b_zp_count)
/* ConvInteger: conv geometry as rlx_integer_conv; y i32; x's zero point NULL or one value,
 * w's NULL, one value or one per output channel (count C_out). rlx_conv_integer_<x>_<w> */
#define RLX_CONV_INTEGER_SIG(name)                                                      \
    int name(const int64_t *geom, void *y, const void *x, const void *w,                 \
             const void *x_zero_point, const void *w_zero_point, int64_t w_zp_count)
#define RLX_DECL_INTEGER_PRODUCTS(AS, BS)                                               \
    RLX_MATMUL_INTEGER_SIG(rlx_matmul_integer_##AS##_##BS);                             \
    RLX_CONV_INTEGER_SIG(rlx_conv_integer_##AS##_##BS);
RLX_DECL_INTEGER_PRODUCTS(u8, u8)
RLX_DECL_INTEGER_PRODUCTS(u8, i8)
RLX_DECL_INTEGER_PRODUCTS(i8, u8)
RLX_DECL_INTEGER_PRODUCTS(i8, i8)
/* DynamicQuantizeMatMul: y [M, N] f32 from x [M, K] f32 quantised as
 * rlx_dynamic_quantize_linear_f32 into q (scratch, M*K bytes), its MatMulInteger with w
 * [K, N] (zero point NULL, one value or one per column), the sums times scale * w_scale
 * (one value or one per column: count 1 or N), plus bias (NULL, one value or N).
 * rlx_dynamic_quantize_matmul_f32_<w> */
#define RLX_DYNAMIC_QUANTIZE_MATMUL_SIG(name)                                           \
    int name(int64_t M, int64_t N, int64_t K, void *y, const void *x, const void *w,      \
             const void *w_scale, int64_t w_scale_count, const void *w_zero_point,        \
             int64_t w_zp_count, const void *bias, int64_t bias_count, void *q)
RLX_DYNAMIC_QUANTIZE_MATMUL_SIG(rlx_dynamic_quantize_matmul_f32_u8);
RLX_DYNAMIC_QUANTIZE_MATMUL_SIG(rlx_dynamic_quantize_matmul_f32_i8);

/* ---- threads ---------------------------------------------------------------------- */
/* Threads of the BLAS (no effect without one). */
void rlx_set_num_threads(int64_t n);

#ifdef __cplusplus
}
#endif
#endif /* RLX_RUNTIME_H */
