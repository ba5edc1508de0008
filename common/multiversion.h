/*  FASGD_MULTIVERSION: on x86-64 with gcc and glibc, the function is
    compiled for AVX-512, AVX2 and the baseline, and the loader picks the
    widest the processor has; elsewhere it is compiled once. Only for code
    whose every operation is exact or correctly rounded in each, so that
    all the clones give the same bits.  */
#ifndef FASGD_MULTIVERSION_H_INCLUDED
#define FASGD_MULTIVERSION_H_INCLUDED

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__gnu_linux__)
#   define FASGD_MULTIVERSION __attribute__ ((target_clones ("avx512f", "avx2", "default")))
#else
#   define FASGD_MULTIVERSION
#endif

#endif
