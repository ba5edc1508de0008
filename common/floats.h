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

/*  The largest |v[i]| (0 for n = 0); NaN when any is NaN.  */
float fasgd_floats_max_abs (const float *v, size_t n);

#endif
