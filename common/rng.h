/*  rng: a seeded pseudo-random generator whose sequence is the same on every
    platform and build.

    PCG32 (O'Neill, "PCG: A Family of Simple Fast Space-Efficient
    Statistically Good Algorithms for Random Number Generation", 2014,
    XSH-RR output, 64-bit LCG state). Integer arithmetic only, so the u32
    stream is bit-identical everywhere. Uniform doubles are built from 53
    random bits (exact). Normal draws use the polar method, which needs
    log and sqrt: sqrt is exact under IEEE-754, log is correctly rounded in
    glibc >= 2.28; a libm whose log differs in the last place changes
    normal draws, never integer or uniform ones.

    fasgd_rng_t is a value type: embed it, copy it to fork a stream, no
    allocation. Separate streams from one seed come from distinct `stream`
    numbers (PCG's increment), so e.g. the simulator's client picks never
    depend on gate draws.
*/
#ifndef FASGD_RNG_H_INCLUDED
#define FASGD_RNG_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
    uint64_t inc;             /* always odd */
    double   spare;           /* second value of the last polar draw */
    int      has_spare;
} fasgd_rng_t;

/*  Seeds the generator; distinct (seed, stream) pairs give independent
    sequences.  */
void     fasgd_rng_seed (fasgd_rng_t *self, uint64_t seed, uint64_t stream);

uint32_t fasgd_rng_u32 (fasgd_rng_t *self);
uint64_t fasgd_rng_u64 (fasgd_rng_t *self);

/*  Uniform in [0, 1), 53 random bits.  */
double   fasgd_rng_uniform (fasgd_rng_t *self);

/*  Uniform integer in [0, n), without modulo bias (Lemire's method).
    n must be > 0.  */
uint32_t fasgd_rng_below (fasgd_rng_t *self, uint32_t n);

/*  Standard normal N(0, 1).  */
double   fasgd_rng_normal (fasgd_rng_t *self);

/*  Fisher-Yates shuffle of n indices in place.  */
void     fasgd_rng_shuffle (fasgd_rng_t *self, uint32_t *a, size_t n);

#endif
