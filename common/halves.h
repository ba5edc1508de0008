/*  halves: float32 to and from bfloat16 and IEEE half precision, the
    compact wire's 2-byte formats (see halves.c).  */
#ifndef FASGD_HALVES_H_INCLUDED
#define FASGD_HALVES_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/*  n floats as half (FASGD_WIRE_BF16 or FASGD_WIRE_F16), 2 bytes each, little-endian, into dst;
    and back.  */
void fasgd_halves_encode (int half, const float *src, size_t n, void *dst);
void fasgd_halves_decode (int half, const void *src, size_t n, float *dst);

/*  Error feedback in one pass: g + residual as half into dst, and into
    residual_next what the rounding left out (g + residual minus what dst
    decodes to). residual_next may not overlap the others.  */
void fasgd_halves_feedback (int half, const float *g, const float *residual, float *residual_next, size_t n,
                            void *dst);

#endif
