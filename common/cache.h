/*  cache: how much of the memory a pass touches the processor keeps close.

    The rules' passes into a second buffer (common/rules.c) store θ_new
    past the caches when what they touch would not stay in the last level
    anyway; this says how large that level is.  */
#ifndef FASGD_CACHE_H_INCLUDED
#define FASGD_CACHE_H_INCLUDED

#include <stddef.h>

/*  The bytes of the largest cache CPU 0 has for data, as Linux describes
    it under /sys/devices/system/cpu/cpu0/cache; 0 when it does not say.
    Read once; later calls return the same.  */
size_t fasgd_cache_bytes (void);

/*  The same from the directory dir, laid out as that one: its index*
    subdirectories, each with a "type" (Data, Instruction, Unified) and a
    "size" ("32768K", "1M", or bytes). The largest size of a Data or
    Unified cache that parses; 0 when none does.  */
size_t fasgd_cache_bytes_at (const char *dir);

#endif
