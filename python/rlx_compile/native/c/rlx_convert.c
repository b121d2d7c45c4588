/* f16 / bf16 conversions: round half to even, infinities and subnormals as IEEE. */
#include "rlx_scalar.h"

uint32_t rlx_round_f64_bits(double x, int ebits, int mbits) {
    uint64_t b, sig, q, rem, half;
    uint32_t sign, emax = (1u << ebits) - 1;
    int64_t exp, e, et;
    int bias = (1 << (ebits - 1)) - 1, shift;
    memcpy(&b, &x, 8);
    sign = (uint32_t)(b >> 63) << (ebits + mbits);
    exp = (int64_t)((b >> 52) & 0x7FF);
    sig = b & ((1ull << 52) - 1);
    if (exp == 0x7FF) /* inf, or a quiet NaN */
        return sign | (emax << mbits) | (sig ? (1u << (mbits - 1)) : 0u);
    if (exp == 0 && sig == 0) return sign;
    if (exp == 0) {
        e = -1022;
    } else {
        e = exp - 1023;
        sig |= 1ull << 52;
    }
    et = e + bias; /* the biased exponent a normal result would have */
    shift = 52 - mbits + (et >= 1 ? 0 : (int)(1 - et));
    if (shift >= 64) return sign; /* below half the smallest subnormal */
    q = sig >> shift;
    rem = sig & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    if (et >= 1) {
        if (q >> (mbits + 1)) { /* rounding carried into the next binade */
            q >>= 1;
            et++;
        }
        if (et >= (int64_t)emax) return sign | (emax << mbits); /* overflow: inf */
        return sign | ((uint32_t)et << mbits) | (uint32_t)(q & ((1ull << mbits) - 1));
    }
    /* subnormal; q == 2^mbits encodes the smallest normal */
    return sign | (uint32_t)q;
}

float rlx_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu, bits;
    float f;
    if (exp == 0) {
        f = (float)man * 5.9604644775390625e-08f; /* man * 2^-24, exact */
        return sign ? -f : f;
    }
    bits = exp == 31 ? (sign | 0x7F800000u | (man << 13)) : (sign | ((exp + 112) << 23) | (man << 13));
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t rlx_f32_to_f16(float f) { return (uint16_t)rlx_round_f64_bits((double)f, 5, 10); }
uint16_t rlx_f64_to_f16(double d) { return (uint16_t)rlx_round_f64_bits(d, 5, 10); }

float rlx_bf16_to_f32(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t rlx_f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

uint16_t rlx_f64_to_bf16(double d) { return (uint16_t)rlx_round_f64_bits(d, 8, 7); }

/* ---- casts: rlx_cast_<from>_<to> --------------------------------------------------- */
#define RLX_T_f32 float
#define RLX_T_f64 double
#define RLX_T_f16 uint16_t
#define RLX_T_bf16 uint16_t
#define RLX_T_i8 int8_t
#define RLX_T_i16 int16_t
#define RLX_T_i32 int32_t
#define RLX_T_i64 int64_t
#define RLX_T_u8 uint8_t
#define RLX_T_u16 uint16_t
#define RLX_T_u32 uint32_t
#define RLX_T_u64 uint64_t
#define RLX_T_b uint8_t
#define RLX_CLASS_f32 F
#define RLX_CLASS_f64 F
#define RLX_CLASS_f16 F
#define RLX_CLASS_bf16 F
#define RLX_CLASS_i8 I
#define RLX_CLASS_i16 I
#define RLX_CLASS_i32 I
#define RLX_CLASS_i64 I
#define RLX_CLASS_u8 I
#define RLX_CLASS_u16 I
#define RLX_CLASS_u32 I
#define RLX_CLASS_u64 I
#define RLX_CLASS_b B
#define RLX_TOD_f32(v) ((double)(v))
#define RLX_TOD_f64(v) (v)
#define RLX_TOD_f16(v) ((double)rlx_f16_to_f32(v))
#define RLX_TOD_bf16(v) ((double)rlx_bf16_to_f32(v))
#define RLX_FROMD_f32(d) ((float)(d))
#define RLX_FROMD_f64(d) (d)
#define RLX_FROMD_f16(d) rlx_f64_to_f16(d)
#define RLX_FROMD_bf16(d) rlx_f64_to_bf16(d)

/* float -> float rounds once from the exact double; float -> int truncates and
 * saturates (NaN -> 0); int -> float goes through double (as the reference does);
 * int -> int wraps; to bool is != 0. */
#define RLX_CONV_FF(from, to, v) RLX_FROMD_##to(RLX_TOD_##from(v))
#define RLX_CONV_FI(from, to, v) rlx_f2i_##to(RLX_TOD_##from(v))
#define RLX_CONV_FB(from, to, v) ((uint8_t)(RLX_TOD_##from(v) != 0))
#define RLX_CONV_IF(from, to, v) RLX_FROMD_##to((double)(v))
#define RLX_CONV_II(from, to, v) ((RLX_T_##to)(v))
#define RLX_CONV_IB(from, to, v) ((uint8_t)((v) != 0))
#define RLX_CONV_BF(from, to, v) RLX_FROMD_##to((double)((v) != 0))
#define RLX_CONV_BI(from, to, v) ((RLX_T_##to)((v) != 0))
#define RLX_CONV_BB(from, to, v) ((uint8_t)((v) != 0))
#define RLX_CONV3(cf, ct, from, to, v) RLX_CONV_##cf##ct(from, to, v)
#define RLX_CONV2(cf, ct, from, to, v) RLX_CONV3(cf, ct, from, to, v)
#define RLX_CONV(from, to, v) RLX_CONV2(RLX_CLASS_##from, RLX_CLASS_##to, from, to, v)

#define RLX_CAST_KERNEL(to, from)                                                       \
    RLX_CAST_SIG(rlx_cast_##from##_##to) {                                              \
        const RLX_T_##from *px = (const RLX_T_##from *)x;                               \
        RLX_T_##to *py = (RLX_T_##to *)y;                                               \
        int64_t i;                                                                      \
        for (i = 0; i < n; i++) py[i] = RLX_CONV(from, to, px[i]);                      \
        return 0;                                                                       \
    }
#define RLX_CAST_FROM(from, ...) RLX_ALL_TYPES_TO(RLX_CAST_KERNEL, from)
RLX_ALL_TYPES(RLX_CAST_FROM, _)
