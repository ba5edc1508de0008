/*  floats: .npy and raw float32 files of initial parameters.

    The .npy header is a Python dict literal such as
        {'descr': '<f4', 'fortran_order': False, 'shape': (16, 1, 3, 3), }
    which is parsed here only as far as those three keys, strictly: a file
    this does not understand is refused with the reason, never guessed at.  */
#include "floats.h"
#include "log.h"
#include "multiversion.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NPY_MAGIC "\x93NUMPY"
#define S_NPY_HEADER_MAX 65536u

/*  The value of 'key' in the header dict: a pointer just after the colon,
    spaces skipped; NULL when the key is absent.  */
static const char *
s_npy_value (const char *header, const char *key)
{
    char quoted [32];
    const char *quotes [] = { "'", "\"" };
    for (int q = 0; q < 2; q++) {
        snprintf (quoted, sizeof quoted, "%s%s%s", quotes [q], key, quotes [q]);
        const char *at = strstr (header, quoted);
        if (!at)
            continue;
        at += strlen (quoted);
        while (*at == ' ')
            at++;
        if (*at != ':')
            return NULL;
        at++;
        while (*at == ' ')
            at++;
        return at;
    }
    return NULL;
}

/*  Parses the header text; sets *count to the number of elements.  */
static int
s_npy_header (const char *path, const char *header, uint64_t *count, char *err, size_t errlen)
{
    const char *descr = s_npy_value (header, "descr");
    if (!descr)
        return fasgd_errbuf (err, errlen, "%s: the .npy header has no 'descr'", path);
    if (strncmp (descr, "'<f4'", 5) != 0 && strncmp (descr, "\"<f4\"", 5) != 0) {
        size_t len = strcspn (descr, ",}");
        return fasgd_errbuf (err, errlen,
                             "%s: dtype %.*s, but the parameters must be little-endian float32 ('<f4'): "
                             "save with array.astype('<f4')", path, (int) (len > 40 ? 40 : len), descr);
    }
    const char *fortran = s_npy_value (header, "fortran_order");
    if (!fortran || (strncmp (fortran, "False", 5) != 0 && strncmp (fortran, "True", 4) != 0))
        return fasgd_errbuf (err, errlen, "%s: the .npy header has no fortran_order True or False", path);
    const char *shape = s_npy_value (header, "shape");
    if (!shape || *shape != '(')
        return fasgd_errbuf (err, errlen, "%s: the .npy header has no shape tuple", path);
    uint64_t total = 1;
    int ndim = 0;
    const char *p = shape + 1;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == ')')
            break;
        if (*p < '0' || *p > '9')
            return fasgd_errbuf (err, errlen, "%s: the .npy shape is not a tuple of sizes", path);
        errno = 0;
        char *end;
        unsigned long long dim = strtoull (p, &end, 10);
        if (errno == ERANGE || (dim != 0 && total > UINT64_MAX / dim))
            return fasgd_errbuf (err, errlen, "%s: the .npy shape holds more than 2^64 elements", path);
        total *= dim;
        ndim++;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p != ')')
            return fasgd_errbuf (err, errlen, "%s: the .npy shape is not a tuple of sizes", path);
    }
    /*  Column-major order is the same layout only for fewer than 2 dims.  */
    if (strncmp (fortran, "True", 4) == 0 && ndim > 1)
        return fasgd_errbuf (err, errlen,
                             "%s: the array is in Fortran order; save a C-ordered one "
                             "(numpy.ascontiguousarray)", path);
    *count = total;
    return 0;
}

static uint32_t
s_le32 (const unsigned char *b)
{
    return (uint32_t) b [0] | (uint32_t) b [1] << 8 | (uint32_t) b [2] << 16 | (uint32_t) b [3] << 24;
}

int
fasgd_floats_load (const char *path, float *out, size_t n, char *err, size_t errlen)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        int e = errno;
        char shown [8192];
        return fasgd_errbuf (err, errlen, "%s: %s", fasgd_path_shown (path, shown, sizeof shown), strerror (e));
    }
    int rc = -1;
    char *header = NULL;
    unsigned char start [12];
    size_t got = fread (start, 1, sizeof start, f);
    long data_at = 0;
    if (got >= 6 && memcmp (start, S_NPY_MAGIC, 6) == 0) {
        if (got < 10) {
            fasgd_errbuf (err, errlen, "%s: a truncated .npy header", path);
            goto done;
        }
        unsigned major = start [6];
        uint32_t hlen;
        size_t prefix;
        if (major == 1) {
            hlen = (uint32_t) start [8] | (uint32_t) start [9] << 8;
            prefix = 10;
        }
        else if ((major == 2 || major == 3) && got == 12) {
            hlen = s_le32 (start + 8);
            prefix = 12;
        }
        else {
            fasgd_errbuf (err, errlen, "%s: .npy format version %u is not one of 1, 2, 3", path, major);
            goto done;
        }
        if (hlen > S_NPY_HEADER_MAX) {
            fasgd_errbuf (err, errlen, "%s: a .npy header of %" PRIu32 " bytes is too long", path, hlen);
            goto done;
        }
        if (!(header = malloc ((size_t) hlen + 1))) {
            fasgd_errbuf (err, errlen, "%s: out of memory", path);
            goto done;
        }
        if (fseek (f, (long) prefix, SEEK_SET) != 0 || fread (header, 1, hlen, f) != hlen) {
            fasgd_errbuf (err, errlen, "%s: a truncated .npy header", path);
            goto done;
        }
        header [hlen] = '\0';
        if (strlen (header) != hlen) {
            fasgd_errbuf (err, errlen, "%s: the .npy header holds a NUL byte", path);
            goto done;
        }
        uint64_t count = 0;
        if (s_npy_header (path, header, &count, err, errlen) != 0)
            goto done;
        if (count != (uint64_t) n) {
            fasgd_errbuf (err, errlen, "%s: the array holds %" PRIu64 " values, the model %zu", path, count, n);
            goto done;
        }
        data_at = (long) (prefix + hlen);
    }
    if (fseek (f, 0, SEEK_END) != 0) {
        fasgd_errbuf (err, errlen, "%s: %s", path, strerror (errno));
        goto done;
    }
    long size = ftell (f);
    if (size < 0 || (uint64_t) (size - data_at) != (uint64_t) n * 4u) {
        if (data_at)
            fasgd_errbuf (err, errlen, "%s: %ld bytes of data after the .npy header, %zu values need %zu",
                          path, size - data_at, n, n * 4);
        else
            fasgd_errbuf (err, errlen,
                          "%s: %ld bytes, but %zu parameters as raw little-endian float32 are %zu "
                          "bytes (or give a .npy file)", path, size, n, n * 4);
        goto done;
    }
    if (fseek (f, data_at, SEEK_SET) != 0 || fread (out, sizeof (float), n, f) != n) {
        fasgd_errbuf (err, errlen, "%s: read error", path);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char b [4];
        memcpy (b, &out [i], 4);
        uint32_t bits = s_le32 (b);
        memcpy (&out [i], &bits, 4);
        if (!isfinite (out [i])) {
            fasgd_errbuf (err, errlen, "%s: value %zu is not finite", path, i);
            goto done;
        }
    }
    rc = 0;
done:
    free (header);
    fclose (f);
    return rc;
}

/*  Marks, per lane, whether a float is NaN or ±Inf (all exponent bits
    set), in integer arithmetic so the loop vectorises; the main loop
    passes a constant length, which gcc -O2 vectorises after inlining.  */
#define S_LANES 16

static inline __attribute__ ((always_inline)) void
s_nonfinite_span (const float *restrict v, uint32_t *restrict acc, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        uint32_t bits;
        memcpy (&bits, v + k, sizeof bits);
        acc [k] |= (bits & 0x7f800000u) == 0x7f800000u;
    }
}

FASGD_MULTIVERSION int
fasgd_floats_any_nonfinite (const float *v, size_t n)
{
    uint32_t acc [S_LANES] = { 0 };
    size_t i = 0;
    for (; i + S_LANES <= n; i += S_LANES)
        s_nonfinite_span (v + i, acc, S_LANES);
    s_nonfinite_span (v + i, acc, n - i);
    uint32_t bad = 0;
    for (int k = 0; k < S_LANES; k++)
        bad |= acc [k];
    return bad != 0;
}

/*  Lane sums of squares in double, lane k summing elements ≡ k: a fixed
    order, so the norm is the same bits on every machine (floats.h).  */
#define s_sumsq_span fasgd_floats_sumsq_block

FASGD_MULTIVERSION double
fasgd_floats_sumsq (const float *v, size_t n)
{
    double acc [S_LANES] = { 0 };
    size_t i = 0;
    for (; i + S_LANES <= n; i += S_LANES)
        s_sumsq_span (v + i, acc, S_LANES);
    s_sumsq_span (v + i, acc, n - i);
    double sum = 0;
    for (int k = 0; k < S_LANES; k++)
        sum += acc [k];
    return sum;
}

/*  Both sums of fasgd_floats_sumsq_dot in one pass over v and r, lane k
    of each summing elements ≡ k in order: the same bits as the two
    loops apart. The span is a constant 16 in the main loop, which gcc
    -O2 vectorises; a loop of unknown length with both sums it leaves
    scalar (floats.h).  */
#define s_sumsq_dot_span fasgd_floats_sumsq_dot_block

FASGD_MULTIVERSION double
fasgd_floats_sumsq_dot (const float *v, const float *r, size_t n, double *dot)
{
    double sq [S_LANES] = { 0 }, dt [S_LANES] = { 0 };
    size_t i = 0;
    for (; i + S_LANES <= n; i += S_LANES)
        s_sumsq_dot_span (v + i, r + i, sq, dt, S_LANES);
    s_sumsq_dot_span (v + i, r + i, sq, dt, n - i);
    double sum = 0, d = 0;
    for (int k = 0; k < S_LANES; k++) {
        sum += sq [k];
        d += dt [k];
    }
    *dot = d;
    return sum;
}

/*  1 when all 16 floats at v are ±0.  */
static inline __attribute__ ((always_inline)) int
s_zero_block (const float *v)
{
    uint32_t any = 0;
    for (int k = 0; k < FASGD_FLOATS_SPAN; k++) {
        uint32_t bits;
        memcpy (&bits, v + k, sizeof bits);
        any |= bits & 0x7fffffffu;
    }
    return any == 0;
}

_Static_assert (FASGD_FLOATS_SPAN == S_LANES, "spans start where the lanes do");

FASGD_MULTIVERSION size_t
fasgd_floats_nonzero_spans (const float *r, size_t n, size_t gap, size_t *spans, size_t max)
{
    assert (max >= 1);
    size_t count = 0, zeros = 0, i = 0;
    int open = 0;
    /*  A tail shorter than a block is counted as nonzero.  */
    for (; i < n; i += FASGD_FLOATS_SPAN) {
        if (i + FASGD_FLOATS_SPAN <= n && s_zero_block (r + i)) {
            zeros += FASGD_FLOATS_SPAN;
            continue;
        }
        /*  A nonzero block: it opens a span after a gap of gap zeros or
            more, else the span open goes on over the zeros.  */
        if (!open || zeros >= gap) {
            if (open)
                spans [2 * count - 1] = i - zeros;
            if (count == max) {
                spans [0] = 0;
                spans [1] = n;
                return 1;
            }
            spans [2 * count] = i;
            count++;
            open = 1;
        }
        zeros = 0;
    }
    if (open)
        spans [2 * count - 1] = (i < n ? i : n) - zeros;
    return count;
}

FASGD_MULTIVERSION double
fasgd_floats_sumsq_dot_spans (const float *v, const float *r, size_t n, const size_t *spans, size_t nspans,
                              double *dot)
{
    double sq [S_LANES] = { 0 }, dt [S_LANES] = { 0 };
    size_t i = 0;
    for (size_t s = 0; s <= nspans; s++) {
        /*  Zeros of r up to the span (to n after the last), then the span.  */
        size_t zend = s < nspans ? spans [2 * s] : n;
        for (; i + S_LANES <= zend; i += S_LANES)
            s_sumsq_span (v + i, sq, S_LANES);
        s_sumsq_span (v + i, sq, zend - i);
        i = zend;
        if (s == nspans)
            break;
        size_t end = spans [2 * s + 1];
        for (; i + S_LANES <= end; i += S_LANES)
            s_sumsq_dot_span (v + i, r + i, sq, dt, S_LANES);
        s_sumsq_dot_span (v + i, r + i, sq, dt, end - i);
        i = end;
    }
    double sum = 0, d = 0;
    for (int k = 0; k < S_LANES; k++) {
        sum += sq [k];
        d += dt [k];
    }
    *dot = d;
    return sum;
}

static inline __attribute__ ((always_inline)) void
s_max_abs_span (const float *restrict v, float *restrict acc, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        float x = fabsf (v [k]);
        /*  Written so that a NaN sticks.  */
        acc [k] = x > acc [k] || x != x ? x : acc [k];
    }
}

FASGD_MULTIVERSION float
fasgd_floats_max_abs (const float *v, size_t n)
{
    float acc [S_LANES] = { 0 };
    size_t i = 0;
    for (; i + S_LANES <= n; i += S_LANES)
        s_max_abs_span (v + i, acc, S_LANES);
    s_max_abs_span (v + i, acc, n - i);
    float m = 0;
    for (int k = 0; k < S_LANES; k++)
        m = acc [k] > m || acc [k] != acc [k] ? acc [k] : m;
    return m;
}
