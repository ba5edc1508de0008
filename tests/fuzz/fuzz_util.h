/*  What the file-reading harnesses share: the fuzzer's bytes as a file
    with a path, in memory (memfd), so the loaders run through the same
    open and read calls as on a real file, without touching a disk.  */
#ifndef FASGD_FUZZ_UTIL_H_INCLUDED
#define FASGD_FUZZ_UTIL_H_INCLUDED

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/*  A memory file holding len bytes; its path (/proc/self/fd/N) in path.
    Returns the descriptor, or -1.  */
static inline int
fuzz_memfile (const void *data, size_t len, char *path, size_t pathlen)
{
    int fd = memfd_create ("fasgd-fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t w = write (fd, p, len);
        if (w <= 0) {
            close (fd);
            return -1;
        }
        p += w;
        len -= (size_t) w;
    }
    snprintf (path, pathlen, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
