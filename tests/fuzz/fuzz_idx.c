/*  libFuzzer harness: an IDX image file and an IDX label file, each
    plain or gzip, through fasgd_dataset_load_idx as fasgd-server and
    fasgd-client load their data.

    The input is a control byte, a 16-bit length, the image file and then
    the label file. Bit 0 of the control byte gzips the image bytes, bit 1
    the label bytes, before they are written (so the fuzzer explores IDX
    headers behind a valid gzip stream, while its own bytes, which may
    begin with gzip's magic, exercise the decompressor's error paths);
    bits 2..3 pick max_examples (all, 1, 7, 2^32-1).

    Invariants besides memory safety: a refused pair gives a message; an
    accepted one has n equal to the header's count (or max_examples),
    each pixel in [0, 1] and every label below nclasses.  */
#include "fuzz_util.h"

#include "data.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/*  The bytes as a gzip member; NULL on failure.  */
static uint8_t *
s_gzip (const uint8_t *data, size_t len, size_t *outlen)
{
    z_stream z;
    memset (&z, 0, sizeof z);
    if (deflateInit2 (&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound (&z, (uLong) len) + 32;
    uint8_t *out = malloc (cap);
    if (!out) {
        deflateEnd (&z);
        return NULL;
    }
    z.next_in = (Bytef *) data;
    z.avail_in = (uInt) len;
    z.next_out = out;
    z.avail_out = (uInt) cap;
    int rc = deflate (&z, Z_FINISH);
    *outlen = cap - z.avail_out;
    deflateEnd (&z);
    if (rc != Z_STREAM_END) {
        free (out);
        return NULL;
    }
    return out;
}

static int
s_file (const uint8_t *data, size_t len, int gzip, char *path, size_t pathlen)
{
    if (!gzip)
        return fuzz_memfile (data, len, path, pathlen);
    size_t zlen;
    uint8_t *z = s_gzip (data, len, &zlen);
    if (!z)
        return -1;
    int fd = fuzz_memfile (z, zlen, path, pathlen);
    free (z);
    return fd;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    unsigned ctl = data [0];
    size_t ilen = (size_t) data [1] << 8 | data [2];
    data += 3;
    size -= 3;
    if (ilen > size)
        ilen = size;
    static const uint32_t maxes [] = { 0, 1, 7, UINT32_MAX };
    uint32_t max_examples = maxes [(ctl >> 2) & 3];
    char ipath [64], lpath [64], err [512] = "";
    int ifd = s_file (data, ilen, ctl & 1, ipath, sizeof ipath);
    int lfd = s_file (data + ilen, size - ilen, ctl & 2, lpath, sizeof lpath);
    if (ifd >= 0 && lfd >= 0) {
        fasgd_dataset_t *set = fasgd_dataset_load_idx (ipath, lpath, max_examples, err, sizeof err);
        if (!set) {
            if (!*err)
                __builtin_trap ();
        }
        else {
            if (set->n == 0 || set->dim != set->rows * set->cols || set->nclasses == 0
                || set->nclasses > 256 || (max_examples && set->n > max_examples))
                __builtin_trap ();
            for (uint64_t i = 0; i < (uint64_t) set->n * set->dim; i++)
                if (!(set->x [i] >= 0.0f && set->x [i] <= 1.0f))
                    __builtin_trap ();
            for (uint32_t i = 0; i < set->n; i++)
                if (set->y [i] >= set->nclasses)
                    __builtin_trap ();
            fasgd_dataset_destroy (&set);
        }
    }
    if (ifd >= 0)
        close (ifd);
    if (lfd >= 0)
        close (lfd);
    return 0;
}
