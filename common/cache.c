/*  cache: the largest data cache, from Linux's description of CPU 0.  */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_SYSFS "/sys/devices/system/cpu/cpu0/cache"

/*  The first line of dir/name/file into buf (its newline dropped); 0, or
    -1 when it cannot be read.  */
static int
s_read_line (const char *dir, const char *name, const char *file, char *buf, size_t len)
{
    char path [4096];
    if ((size_t) snprintf (path, sizeof path, "%s/%s/%s", dir, name, file) >= sizeof path)
        return -1;
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    char *line = fgets (buf, (int) len, f);
    fclose (f);
    if (!line)
        return -1;
    buf [strcspn (buf, "\n")] = 0;
    return 0;
}

/*  "32768K", "1M", "65536": bytes, or 0 for anything else.  */
static size_t
s_size (const char *text)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull (text, &end, 10);
    if (errno || end == text || text [0] == '-')
        return 0;
    unsigned long long unit = 1;
    if (*end == 'K')
        unit = 1ull << 10, end++;
    else if (*end == 'M')
        unit = 1ull << 20, end++;
    else if (*end == 'G')
        unit = 1ull << 30, end++;
    if (*end || v > SIZE_MAX / unit)
        return 0;
    return (size_t) (v * unit);
}

size_t
fasgd_cache_bytes_at (const char *dir)
{
    DIR *d = opendir (dir);
    if (!d)
        return 0;
    size_t best = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (strncmp (e->d_name, "index", 5) != 0)
            continue;
        char type [64], size [64];
        if (s_read_line (dir, e->d_name, "type", type, sizeof type)
        ||  s_read_line (dir, e->d_name, "size", size, sizeof size))
            continue;
        if (strcmp (type, "Data") != 0 && strcmp (type, "Unified") != 0)
            continue;
        size_t bytes = s_size (size);
        if (bytes > best)
            best = bytes;
    }
    closedir (d);
    return best;
}

size_t
fasgd_cache_bytes (void)
{
    static size_t bytes;
    static int known;
    if (!__atomic_load_n (&known, __ATOMIC_ACQUIRE)) {
        __atomic_store_n (&bytes, fasgd_cache_bytes_at (S_SYSFS), __ATOMIC_RELAXED);
        __atomic_store_n (&known, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n (&bytes, __ATOMIC_RELAXED);
}
