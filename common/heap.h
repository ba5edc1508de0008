/*  heap: how the programs that receive parameter-sized messages set up
    glibc's malloc.  */
#ifndef FASGD_HEAP_H_INCLUDED
#define FASGD_HEAP_H_INCLUDED

/*  Every gradient or θ that arrives comes in a buffer ZeroMQ mallocs. Past
    glibc's mmap threshold (at most 32 MiB) each would be a fresh mapping,
    faulted in and zeroed page by page and unmapped again; this keeps large
    blocks in the heap, and the heap unshrunk, so that a 40 MB message
    reuses the pages of the last one. A process-wide choice: for the
    programs' main, never for a library.  */
void fasgd_heap_keep_large_blocks (void);

#endif
