/*  heap: see heap.h.  */
#include "heap.h"

#include <limits.h>
#include <malloc.h>

void
fasgd_heap_keep_large_blocks (void)
{
    mallopt (M_MMAP_MAX, 0);
    mallopt (M_TRIM_THRESHOLD, INT_MAX);
}
