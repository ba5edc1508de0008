/*  halves: float32 to and from the 2-byte formats of fasgd's compact wire
    (proto/PROTOCOL.md, "Compact wire"), bfloat16 and IEEE half precision,
    for the codec and for the simulator, which models the same rounding.
    Rounding is to nearest, ties to even; a finite value stays finite
    (beyond the format's largest finite value it becomes that value), an
    infinity stays infinite, a NaN a NaN. The 2-byte values are written
    and read little-endian.  */
#include "halves.h"
#include "multiversion.h"

#include <string.h>

const char *const fasgd_wire_names [] = { "f32", "bf16", "f16", NULL };

static inline void
s_put16 (uint8_t *p, uint16_t v)
{
    p [0] = (uint8_t) v;
    p [1] = (uint8_t) (v >> 8);
}

/*  len values to out, little-endian.  */
static inline void
s_store (uint8_t *out, const uint16_t *h16, size_t len)
{
#if FASGD_HOST_IS_LE
    memcpy (out, h16, len * sizeof (uint16_t));
#else
    for (size_t k = 0; k < len; k++)
        s_put16 (out + 2 * k, h16 [k]);
#endif
}

static inline uint16_t
s_get16 (const uint8_t *p)
{
    return (uint16_t) (p [0] | (p [1] << 8));
}

/*  bfloat16 is float32's top half: the bottom half rounded away, ties to
    even. Branch-free, so that the loops below vectorise.  */
static inline uint16_t
s_bf16_from_bits (uint32_t x)
{
    uint32_t abs = x & 0x7FFFFFFFu;
    uint32_t r = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;   /* ±Inf stays ±Inf */
    uint32_t overflow = ((r & 0x7FFFu) == 0x7F80u) & (abs < 0x7F800000u);
    r -= overflow;                                          /* finite stays finite */
    return (uint16_t) (abs > 0x7F800000u ? (x >> 16) | 0x40u : r);     /* a NaN, kept quiet */
}

/*  Half precision, branch-free: a normal half has float's significand
    rounded to 10 bits and its exponent rebiased (127 → 15); a subnormal
    one is found by adding 0.5, whose ulp 2^-24 is a subnormal half's
    unit, so that the float addition rounds it (ties to even).  */
static inline uint16_t
s_f16_from_bits (uint32_t x)
{
    uint32_t sign = (x >> 16) & 0x8000u, abs = x & 0x7FFFFFFFu;
    float f;
    memcpy (&f, &abs, sizeof f);
    f += 0.5f;
    uint32_t sub;
    memcpy (&sub, &f, sizeof sub);
    sub -= 0x3F000000u;
    uint32_t normal = (abs + 0xC8000FFFu + ((abs >> 13) & 1u)) >> 13;
    uint32_t h = abs < 0x38800000u ? sub : normal;
    h = abs >= 0x477FF000u ? 0x7BFFu : h;       /* 65520 and up would round to Inf: 65504 */
    h = abs == 0x7F800000u ? 0x7C00u : h;       /* ±Inf */
    h = abs > 0x7F800000u ? 0x7E00u : h;        /* NaN */
    return (uint16_t) (sign | h);
}

static inline uint32_t
s_f16_to_bits (uint16_t h)
{
    uint32_t sign = (uint32_t) (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    /*  A subnormal is m·2^-24, exact in float (and 0 for m = 0).  */
    float f = (float) m * (1.0f / 16777216.0f);
    uint32_t sub;
    memcpy (&sub, &f, sizeof sub);
    uint32_t bits = e == 0x1F ? 0x7F800000u | (m << 13) : e ? ((e + 112) << 23) | (m << 13) : sub;
    return sign | bits;
}

static inline uint16_t
s_half_from_bits (int half, uint32_t x)
{
    return half == FASGD_WIRE_BF16 ? s_bf16_from_bits (x) : s_f16_from_bits (x);
}

static inline uint32_t
s_half_to_bits (int half, uint16_t h)
{
    return half == FASGD_WIRE_BF16 ? (uint32_t) h << 16 : s_f16_to_bits (h);
}

/*  Spans of a fixed length with restrict pointers: what gcc -O2
    vectorises. Every operation is on integers or exact or correctly
    rounded in float, so every clone gives the same bits.  */
#define S_SPAN 512

/*  c = g + r, sent as h = half (c), and r' = c − h: error feedback.  */
static inline __attribute__ ((always_inline)) void
s_feedback_span (int half, const float *restrict g, const float *restrict r, float *restrict r_next,
                 uint16_t *restrict out, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        float c = g [k] + r [k], back;
        uint32_t bits;
        memcpy (&bits, &c, sizeof bits);
        out [k] = s_half_from_bits (half, bits);
        bits = s_half_to_bits (half, out [k]);
        memcpy (&back, &bits, sizeof back);
        r_next [k] = c - back;
    }
}

static inline __attribute__ ((always_inline)) void
s_encode_span (int half, const uint32_t *restrict in, uint16_t *restrict out, size_t len)
{
    for (size_t k = 0; k < len; k++)
        out [k] = s_half_from_bits (half, in [k]);
}

static inline __attribute__ ((always_inline)) void
s_decode_span (int half, const uint16_t *restrict in, uint32_t *restrict out, size_t len)
{
    for (size_t k = 0; k < len; k++)
        out [k] = s_half_to_bits (half, in [k]);
}

/*  The loops take spans of S_SPAN with the format a constant, so that
    each is compiled (and vectorised) for bf16 and for f16 apart.  */
#define S_BY_HALF(half, call_bf16, call_f16) \
    do { if ((half) == FASGD_WIRE_BF16) { call_bf16; } else { call_f16; } } while (0)

FASGD_MULTIVERSION void
fasgd_halves_feedback (int half, const float *g, const float *residual, float *residual_next, size_t n,
                       void *dst)
{
    uint8_t *out = dst;
    uint16_t h16 [S_SPAN];
    for (size_t i = 0; i < n; i += S_SPAN) {
        size_t len = n - i < S_SPAN ? n - i : S_SPAN;
        if (len == S_SPAN)
            S_BY_HALF (half,
                       s_feedback_span (FASGD_WIRE_BF16, g + i, residual + i, residual_next + i, h16, S_SPAN),
                       s_feedback_span (FASGD_WIRE_F16, g + i, residual + i, residual_next + i, h16, S_SPAN));
        else
            s_feedback_span (half, g + i, residual + i, residual_next + i, h16, len);
        s_store (out + 2 * i, h16, len);
    }
}

FASGD_MULTIVERSION void
fasgd_halves_encode (int half, const float *src, size_t n, void *dst)
{
    uint8_t *out = dst;
    uint32_t in [S_SPAN];
    uint16_t h16 [S_SPAN];
    for (size_t i = 0; i < n; i += S_SPAN) {
        size_t len = n - i < S_SPAN ? n - i : S_SPAN;
        memcpy (in, src + i, len * sizeof (float));
        if (len == S_SPAN)
            S_BY_HALF (half, s_encode_span (FASGD_WIRE_BF16, in, h16, S_SPAN),
                       s_encode_span (FASGD_WIRE_F16, in, h16, S_SPAN));
        else
            s_encode_span (half, in, h16, len);
        s_store (out + 2 * i, h16, len);
    }
}

FASGD_MULTIVERSION void
fasgd_halves_decode (int half, const void *src, size_t n, float *dst)
{
    const uint8_t *in = src;
    uint16_t h16 [S_SPAN];
    uint32_t bits [S_SPAN];
    for (size_t i = 0; i < n; i += S_SPAN) {
        size_t len = n - i < S_SPAN ? n - i : S_SPAN;
#if FASGD_HOST_IS_LE
        memcpy (h16, in + 2 * i, len * sizeof (uint16_t));
#else
        for (size_t k = 0; k < len; k++)
            h16 [k] = s_get16 (in + 2 * (i + k));
#endif
        if (len == S_SPAN)
            S_BY_HALF (half, s_decode_span (FASGD_WIRE_BF16, h16, bits, S_SPAN),
                       s_decode_span (FASGD_WIRE_F16, h16, bits, S_SPAN));
        else
            s_decode_span (half, h16, bits, len);
        memcpy (dst + i, bits, len * sizeof (float));
    }
}

