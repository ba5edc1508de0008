/*  bench-util: the clock, the median and the machine every benchmark
    reports with.  */
#ifndef FASGD_BENCH_UTIL_H_INCLUDED
#define FASGD_BENCH_UTIL_H_INCLUDED

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*  Seconds on the monotonic clock.  */
static inline double
fasgd_bench_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static inline int
fasgd_bench_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/*  The median of n values; sorts v in place.  */
static inline double
fasgd_bench_median (double *v, int n)
{
    qsort (v, (size_t) n, sizeof *v, fasgd_bench_cmp_double);
    return n % 2 ? v [n / 2] : 0.5 * (v [n / 2 - 1] + v [n / 2]);
}

/*  The median of n values, and their least and greatest in *lo and *hi;
    sorts v in place.  */
static inline double
fasgd_bench_median_range (double *v, int n, double *lo, double *hi)
{
    double m = fasgd_bench_median (v, n);
    *lo = v [0];
    *hi = v [n - 1];
    return m;
}

/*  An integer option in [lo, hi], or a message naming prog and the option
    and exit status 2.  */
static inline long
fasgd_bench_int_arg (const char *prog, const char *name, const char *text, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol (text, &end, 10);
    if (end == text || *end || errno == ERANGE || v < lo || v > hi) {
        fprintf (stderr, "%s: %s must be an integer in %ld..%ld (got '%s')\n", prog, name, lo, hi, text);
        exit (2);
    }
    return v;
}

/*  The CPU's model name from /proc/cpuinfo into buf; "unknown" without.  */
static inline void
fasgd_bench_cpu_model (char *buf, size_t len)
{
    snprintf (buf, len, "unknown");
    FILE *f = fopen ("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line [512];
    while (fgets (line, sizeof line, f)) {
        if (strncmp (line, "model name", 10) == 0) {
            const char *colon = strchr (line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                snprintf (buf, len, "%s", colon);
                buf [strcspn (buf, "\n")] = '\0';
            }
            break;
        }
    }
    fclose (f);
}

#endif
