/*  rng: PCG32 with uniform, bounded-integer and normal draws.  */
#include "rng.h"

#include <math.h>

#define PCG_MULT 6364136223846793005ULL

void
fasgd_rng_seed (fasgd_rng_t *self, uint64_t seed, uint64_t stream)
{
    /*  The reference initialisation of pcg32_srandom_r.  */
    self->state = 0;
    self->inc = (stream << 1u) | 1u;
    fasgd_rng_u32 (self);
    self->state += seed;
    fasgd_rng_u32 (self);
    self->spare = 0.0;
    self->has_spare = 0;
}

uint32_t
fasgd_rng_u32 (fasgd_rng_t *self)
{
    uint64_t old = self->state;
    self->state = old * PCG_MULT + self->inc;
    uint32_t xorshifted = (uint32_t) (((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t) (old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

uint64_t
fasgd_rng_u64 (fasgd_rng_t *self)
{
    uint64_t hi = fasgd_rng_u32 (self);
    return (hi << 32) | fasgd_rng_u32 (self);
}

double
fasgd_rng_uniform (fasgd_rng_t *self)
{
    return (double) (fasgd_rng_u64 (self) >> 11) * 0x1.0p-53;
}

uint32_t
fasgd_rng_below (fasgd_rng_t *self, uint32_t n)
{
    /*  Lemire, "Fast Random Integer Generation in an Interval", 2019.  */
    uint64_t m = (uint64_t) fasgd_rng_u32 (self) * n;
    uint32_t low = (uint32_t) m;
    if (low < n) {
        uint32_t threshold = (uint32_t) (-n) % n;
        while (low < threshold) {
            m = (uint64_t) fasgd_rng_u32 (self) * n;
            low = (uint32_t) m;
        }
    }
    return (uint32_t) (m >> 32);
}

double
fasgd_rng_normal (fasgd_rng_t *self)
{
    if (self->has_spare) {
        self->has_spare = 0;
        return self->spare;
    }
    double u, v, s;
    do {
        u = 2.0 * fasgd_rng_uniform (self) - 1.0;
        v = 2.0 * fasgd_rng_uniform (self) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt (-2.0 * log (s) / s);
    self->spare = v * f;
    self->has_spare = 1;
    return u * f;
}

void
fasgd_rng_shuffle (fasgd_rng_t *self, uint32_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = fasgd_rng_below (self, (uint32_t) i);
        uint32_t t = a [i - 1];
        a [i - 1] = a [j];
        a [j] = t;
    }
}
