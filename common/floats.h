/*  floats: float arrays. Initial parameter values from a file, for models
    the server does not know (external models), in two formats: NumPy's
    .npy (float32, little-endian, C order, any shape) and raw little-endian
    float32. And a scan for NaN and infinities.  */
#ifndef FASGD_FLOATS_H_INCLUDED
#define FASGD_FLOATS_H_INCLUDED

#include <stddef.h>

/*  Reads exactly n floats from path into out. A file starting with the
    .npy magic must be a version 1-3 .npy of dtype '<f4' in C order whose
    shape holds n elements; any other file must be 4·n bytes of raw
    little-endian float32. Every value must be finite. Returns 0, or -1
    with the reason (naming the file) in err; out is then unspecified.  */
int fasgd_floats_load (const char *path, float *out, size_t n, char *err, size_t errlen);

/*  1 when any of the n floats is a NaN or an infinity, else 0.  */
int fasgd_floats_any_nonfinite (const float *v, size_t n);

/*  The sum of squares of the n floats, in double: the squared L2 norm.
    Finite exactly when every float is (a float's square, even FLT_MAX's,
    and a sum of up to 2^64 of them fit in a double); NaN or +Inf
    otherwise.  */
double fasgd_floats_sumsq (const float *v, size_t n);

/*  The sum of squares of v, as fasgd_floats_sumsq, and their dot
    product with r into *dot (double, lanes summed in a fixed order): a
    norm and a direction.  */
double fasgd_floats_sumsq_dot (const float *v, const float *r, size_t n, double *dot);

/*  Where r is not zero, for fasgd_floats_sumsq_dot_spans: the spans
    [spans[2i], spans[2i+1]) in order, each starting at a multiple of 16
    (FASGD_FLOATS_SPAN), outside of which every r[k] is +0 or -0 (a
    model's gradient is, for the first-layer weights of inputs that are
    zero in every example of its batch). Zero runs shorter than gap
    floats stay inside a span. Returns the number of spans written, at
    most max; when more would be needed, one span [0, n) (max ≥ 1).  */
#define FASGD_FLOATS_SPAN 16
size_t fasgd_floats_nonzero_spans (const float *r, size_t n, size_t gap, size_t *spans, size_t max);

/*  fasgd_floats_sumsq_dot (v, r, n, dot) reading r, and multiplying,
    only within the nspans spans of fasgd_floats_nonzero_spans (r): the
    sum of squares of all of v, the same bits; the dot product, the same
    bits when every v[k] is finite (a finite x times ±0 adds nothing to
    a lane's sum, which starts at +0 and is never -0).  */
double fasgd_floats_sumsq_dot_spans (const float *v, const float *r, size_t n, const size_t *spans, size_t nspans,
                                     double *dot);

/*  The lanes of fasgd_floats_sumsq, fasgd_floats_sumsq_dot and
    fasgd_floats_sumsq_dot_spans, for a pass elsewhere that also reads
    the gradient (common/rules.c's fasgd_rule_stage): one block of len ≤
    FASGD_FLOATS_SPAN floats at an index ≡ 0 mod FASGD_FLOATS_SPAN, v[k]
    added into lane k of sq (squared) and of dt (times r[k]), in double.
    Blocks given in the order of their index, then the lanes summed 0 to
    15, give the same bits as those functions. Unrolled, so that gcc keeps
    a caller's 16 lanes in registers rather than adding through memory
    (fasgd_floats_sumsq at 1M, data in the caches: 0.30 ms, 0.16 so;
    bench/net.md, "The guard's norm in registers").  */
static inline __attribute__ ((always_inline)) void
fasgd_floats_sumsq_block (const float *restrict v, double *restrict sq, size_t len)
{
#pragma GCC unroll 16
    for (size_t k = 0; k < len; k++) {
        double x = (double) v [k];
        sq [k] += x * x;
    }
}

static inline __attribute__ ((always_inline)) void
fasgd_floats_sumsq_dot_block (const float *restrict v, const float *restrict r, double *restrict sq,
                              double *restrict dt, size_t len)
{
#pragma GCC unroll 16
    for (size_t k = 0; k < len; k++) {
        double x = (double) v [k];
        sq [k] += x * x;
        dt [k] += x * (double) r [k];
    }
}

/*  The largest |v[i]| (0 for n = 0); NaN when any is NaN.  */
float fasgd_floats_max_abs (const float *v, size_t n);

#endif
