/*  data: IDX loading, dataset slicing and shuffling, minibatch order.  */
#include "data.h"
#include "log.h"
#include "rng.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FASGD_DATA_IDX_UBYTE 0x08

/*  First buffer of a gzip body; it doubles from here up to the claim.  */
#define FASGD_DATA_READ_CHUNK ((size_t) 1 << 16)

/*  gzread counts in unsigned and answers in int, so never ask for more
    than this at once.  */
#define FASGD_DATA_READ_MAX_CALL ((size_t) 1 << 30)

static uint32_t
s_be32 (const uint8_t *p)
{
    return (uint32_t) p [0] << 24 | (uint32_t) p [1] << 16
         | (uint32_t) p [2] << 8 | (uint32_t) p [3];
}

/*  An IDX file being read: its header first, its body once the header's
    claim has been checked.  */
typedef struct {
    const char *path;
    gzFile   gz;
    int      gzipped;    /* for messages: sizes are then decompressed sizes */
    uint64_t size;       /* a plain file's size on disk */
    uint32_t dims [3];
    uint8_t *body;       /* after s_idx_body: exactly the claimed bytes */
} s_idx_t;

static void
s_idx_close (s_idx_t *f)
{
    if (f->gz)
        gzclose (f->gz);
    free (f->body);
    memset (f, 0, sizeof *f);
}

/*  Reports the state of a gzFile after a failed or final read; returns -1
    if zlib saw an error.  */
static int
s_gz_check (gzFile gz, const char *path, char *err, size_t errlen)
{
    int errnum = Z_OK;
    const char *msg = gzerror (gz, &errnum);
    if (errnum == Z_OK)
        return 0;
    /*  zlib prefixes the name it was given, "<fd:N>" for gzdopen; the
        caller's path is more use.  */
    if (msg && strncmp (msg, "<fd:", 4) == 0) {
        const char *colon = strstr (msg, ": ");
        if (colon)
            msg = colon + 2;
    }
    if (!msg)
        msg = "unknown error";
    if (errnum == Z_ERRNO)
        /*  zlib has already put strerror's text into msg.  */
        fasgd_errbuf (err, errlen, "%s: read error: %s", path, msg);
    else
    if (errnum == Z_BUF_ERROR)
        /*  gzread hides this one (it returns the bytes it had); only
            gzerror tells a cut-off .gz from a complete one.  */
        fasgd_errbuf (err, errlen, "%s: corrupt gzip: stream truncated (%s)", path, msg);
    else
    if (errnum == Z_MEM_ERROR)
        fasgd_errbuf (err, errlen, "%s: out of memory while decompressing", path);
    else
        fasgd_errbuf (err, errlen, "%s: corrupt gzip: %s", path, msg);
    return -1;
}

/*  Reads up to len bytes; returns how many (short only at the end of the
    data), or -1 after reporting a read or decompression error.  */
static int64_t
s_gz_read (s_idx_t *f, uint8_t *buf, size_t len, char *err, size_t errlen)
{
    size_t got = 0;
    while (got < len) {
        size_t want = len - got;
        if (want > FASGD_DATA_READ_MAX_CALL)
            want = FASGD_DATA_READ_MAX_CALL;
        int n = gzread (f->gz, buf + got, (unsigned) want);
        if (n < 0) {
            if (s_gz_check (f->gz, f->path, err, errlen) == 0)
                fasgd_errbuf (err, errlen, "%s: read failed", f->path);
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t) n;
    }
    /*  A zero from gzread is both "end of file" and "gave up": only
        gzerror tells a clean end from a damaged stream.  */
    if (got < len && s_gz_check (f->gz, f->path, err, errlen) != 0)
        return -1;
    return (int64_t) got;
}

/*  Opens path, plain or gzip, and reads and checks its IDX header: the
    magic, ubyte, ndims dimensions, and their sizes into f->dims. Nothing
    of the body is read. Anything but a regular file (a FIFO, /dev/zero)
    is refused at once: its size says nothing about what it will send.  */
static int
s_idx_open (s_idx_t *f, const char *path, unsigned ndims, char *err, size_t errlen)
{
    memset (f, 0, sizeof *f);
    f->path = path;
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        char shown [8192];
        fasgd_errbuf (err, errlen, "%s: cannot open: %s", fasgd_path_shown (path, shown, sizeof shown),
                      strerror (e));
        return -1;
    }
    struct stat st;
    if (fstat (fd, &st) != 0) {
        fasgd_errbuf (err, errlen, "%s: cannot stat: %s", path, strerror (errno));
        close (fd);
        return -1;
    }
    if (S_ISDIR (st.st_mode)) {
        fasgd_errbuf (err, errlen, "%s: is a directory", path);
        close (fd);
        return -1;
    }
    if (!S_ISREG (st.st_mode)) {
        fasgd_errbuf (err, errlen, "%s: not a regular file (a device, a FIFO or a socket)", path);
        close (fd);
        return -1;
    }
    /*  O_NONBLOCK only kept open() from waiting on a FIFO's writer.  */
    int flags = fcntl (fd, F_GETFL);
    if (flags >= 0)
        fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
    f->size = (uint64_t) st.st_size;
    f->gz = gzdopen (fd, "rb");
    if (!f->gz) {
        fasgd_errbuf (err, errlen, "%s: out of memory opening the file", path);
        close (fd);
        return -1;
    }
    gzbuffer (f->gz, 1 << 16);

    uint8_t head [4 + 4 * 3];
    size_t hlen = 4 + 4 * (size_t) ndims;
    int64_t got = s_gz_read (f, head, 4, err, errlen);
    if (got < 0)
        return -1;
    f->gzipped = !gzdirect (f->gz);
    uint32_t expect = FASGD_DATA_IDX_UBYTE << 8 | ndims;
    if (got == 0) {
        fasgd_errbuf (err, errlen, "%s: empty file", path);
        return -1;
    }
    if (got < 4) {
        fasgd_errbuf (err, errlen, "%s: too short for an IDX header (%u bytes)", path, (unsigned) got);
        return -1;
    }
    uint32_t magic = s_be32 (head);
    if ((magic & 0xffffff00u) != (uint32_t) FASGD_DATA_IDX_UBYTE << 8) {
        fasgd_errbuf (err, errlen, "%s: wrong magic: expected 0x%08x (IDX ubyte, %u dimension%s), found 0x%08x",
                path, expect, ndims, ndims == 1 ? "" : "s", magic);
        return -1;
    }
    unsigned found = magic & 0xffu;
    if (found != ndims) {
        /*  The likely cause is images and labels passed the other way
            round; say so.  */
        const char *hint = ndims == 3 && found == 1 ? " (a label file?)"
                         : ndims == 1 && found == 3 ? " (an image file?)" : "";
        fasgd_errbuf (err, errlen, "%s: wrong dimension count: expected %u (magic 0x%08x), found %u (magic 0x%08x)%s",
                path, ndims, expect, found, magic, hint);
        return -1;
    }
    got = s_gz_read (f, head + 4, hlen - 4, err, errlen);
    if (got < 0)
        return -1;
    if ((size_t) got < hlen - 4) {
        fasgd_errbuf (err, errlen, "%s: truncated header: %zu bytes, an IDX header with %u dimension%s needs %zu",
                path, 4 + (size_t) got, ndims, ndims == 1 ? "" : "s", hlen);
        return -1;
    }
    for (unsigned i = 0; i < ndims; i++)
        f->dims [i] = s_be32 (head + 4 + 4 * i);
    return 0;
}

/*  Reads the body the header claims, `claim` bytes after a header of
    hlen (`what` describes the claim for messages). The claim is checked
    before any of it is read: against FASGD_DATA_MAX_BYTES, and for a
    plain file against its size. A gzip stream is read into a buffer that
    grows with what it actually yields, up to the claim, and is refused as
    soon as it goes past it.  */
static int
s_idx_body (s_idx_t *f, uint64_t claim, size_t hlen, const char *what, char *err, size_t errlen)
{
    uint64_t total = claim + hlen;
    if (!f->gzipped && f->size != total) {
        fasgd_errbuf (err, errlen, "%s: %s: header says %s (%llu bytes), file has %llu",
                f->path, f->size < total ? "truncated" : "trailing garbage", what,
                (unsigned long long) total, (unsigned long long) f->size);
        return -1;
    }
    if (total > FASGD_DATA_MAX_BYTES) {
        fasgd_errbuf (err, errlen, "%s: header says %s (%llu bytes), more than the %llu bytes%s "
                "a data file may hold", f->path, what, (unsigned long long) total,
                (unsigned long long) FASGD_DATA_MAX_BYTES, f->gzipped ? " decompressed" : "");
        return -1;
    }
    size_t want = (size_t) claim, len = 0;
    size_t cap = f->gzipped && want > FASGD_DATA_READ_CHUNK ? FASGD_DATA_READ_CHUNK : want;
    f->body = malloc (cap ? cap : 1);
    if (!f->body) {
        fasgd_errbuf (err, errlen, "%s: out of memory for %zu bytes", f->path, cap);
        return -1;
    }
    for (;;) {
        int64_t got = s_gz_read (f, f->body + len, cap - len, err, errlen);
        if (got < 0)
            return -1;
        len += (size_t) got;
        if (len < cap || cap == want)
            break;
        size_t ncap = cap > want / 2 ? want : cap * 2;
        uint8_t *nbody = realloc (f->body, ncap);
        if (!nbody) {
            fasgd_errbuf (err, errlen, "%s: out of memory after %zu bytes", f->path, len);
            return -1;
        }
        f->body = nbody;
        cap = ncap;
    }
    if (len < want) {
        fasgd_errbuf (err, errlen, "%s: truncated: header says %s (%llu bytes), file has %llu%s",
                f->path, what, (unsigned long long) total, (unsigned long long) (len + hlen),
                f->gzipped ? " decompressed" : "");
        return -1;
    }
    /*  Exactly the claim, or trailing garbage: count a little past it to
        say how much, never the whole of a stream that goes on.  */
    uint8_t extra [4096];
    int64_t more = s_gz_read (f, extra, sizeof extra, err, errlen);
    if (more < 0)
        return -1;
    if (more > 0) {
        fasgd_errbuf (err, errlen, "%s: trailing garbage: header says %s (%llu bytes), file has %s%llu%s",
                f->path, what, (unsigned long long) total,
                (size_t) more == sizeof extra ? "more than " : "",
                (unsigned long long) (total + (uint64_t) more), f->gzipped ? " decompressed" : "");
        return -1;
    }
    int crc = gzclose (f->gz);
    f->gz = NULL;
    if (crc != Z_OK) {
        if (crc == Z_BUF_ERROR)
            fasgd_errbuf (err, errlen, "%s: corrupt gzip: stream truncated", f->path);
        else
            fasgd_errbuf (err, errlen, "%s: error closing the file (zlib %d)", f->path, crc);
        return -1;
    }
    return 0;
}

fasgd_dataset_t *
fasgd_dataset_load_idx (const char *images, const char *labels,
                        uint32_t max_examples, char *err, size_t errlen)
{
    fasgd_errbuf (err, errlen, "%s", "");
    if (!images || !labels) {
        fasgd_errbuf (err, errlen, "no %s file given", images ? "label" : "image");
        return NULL;
    }
    s_idx_t img, lab;
    memset (&lab, 0, sizeof lab);
    fasgd_dataset_t *self = NULL;
    char what [96];

    if (s_idx_open (&img, images, 3, err, errlen) != 0)
        goto out;
    uint32_t n = img.dims [0], rows = img.dims [1], cols = img.dims [2];
    if (rows == 0 || cols == 0 || rows > FASGD_DATA_MAX_SIDE || cols > FASGD_DATA_MAX_SIDE) {
        fasgd_errbuf (err, errlen, "%s: bad image size %" PRIu32 "x%" PRIu32 " (each side must be 1..%d)",
                images, rows, cols, FASGD_DATA_MAX_SIDE);
        goto out;
    }
    if (n == 0) {
        fasgd_errbuf (err, errlen, "%s: header says 0 images", images);
        goto out;
    }
    snprintf (what, sizeof what, "%" PRIu32 " images of %" PRIu32 "x%" PRIu32, n, rows, cols);
    if (s_idx_body (&img, (uint64_t) n * rows * cols, 16, what, err, errlen) != 0)
        goto out;

    if (s_idx_open (&lab, labels, 1, err, errlen) != 0)
        goto out;
    uint32_t nlabels = lab.dims [0];
    if (nlabels == 0) {
        fasgd_errbuf (err, errlen, "%s: header says 0 labels", labels);
        goto out;
    }
    /*  Known before the labels' body is read.  */
    if (nlabels != n) {
        fasgd_errbuf (err, errlen, "%s has %" PRIu32 " images but %s has %" PRIu32 " labels",
                images, n, labels, nlabels);
        goto out;
    }
    snprintf (what, sizeof what, "%" PRIu32 " labels", nlabels);
    if (s_idx_body (&lab, nlabels, 8, what, err, errlen) != 0)
        goto out;

    uint32_t m = max_examples && max_examples < n ? max_examples : n;
    self = fasgd_dataset_new (m, rows, cols);
    if (!self) {
        fasgd_errbuf (err, errlen, "%s: out of memory for %" PRIu32 " images of %" PRIu32 "x%" PRIu32,
                images, m, rows, cols);
        goto out;
    }
    /*  A table makes every pixel exactly (float) b / 255, whatever the
        compiler does with a division in the loop.  */
    float scale [256];
    for (int b = 0; b < 256; b++)
        scale [b] = (float) b / 255.0f;
    const uint8_t *px = img.body;
    uint64_t total = (uint64_t) m * self->dim;
    for (uint64_t i = 0; i < total; i++)
        self->x [i] = scale [px [i]];
    memcpy (self->y, lab.body, m);
    /*  Over the whole file, not the first m: a shortened training set
        must not shrink the model's output layer.  */
    uint8_t top = 0;
    for (uint32_t i = 0; i < n; i++)
        if (lab.body [i] > top)
            top = lab.body [i];
    self->nclasses = (uint32_t) top + 1;
out:
    s_idx_close (&img);
    s_idx_close (&lab);
    return self;
}

/*  Finds the first existing "dir/prefix-{kind}{sep}idxN-ubyte[.gz]"; 0 if
    found (path in buf), -1 with a message otherwise.  */
static int
s_find (const char *dir, const char *prefix, const char *kind, int idxn,
        char *buf, size_t len, char *err, size_t errlen)
{
    static const char *seps [] = { "-", "." };
    static const char *exts [] = { "", ".gz" };
    for (int s = 0; s < 2; s++)
        for (int e = 0; e < 2; e++) {
            int w = snprintf (buf, len, "%s/%s-%s%sidx%d-ubyte%s",
                              dir, prefix, kind, seps [s], idxn, exts [e]);
            if (w < 0 || (size_t) w >= len) {
                fasgd_errbuf (err, errlen, "%s: path too long", dir);
                return -1;
            }
            struct stat st;
            if (stat (buf, &st) == 0)
                return 0;
        }
    char shown [8192];
    fasgd_errbuf (err, errlen, "%s: no %s %s file (looked for %s-%s-idx%d-ubyte[.gz] and %s-%s.idx%d-ubyte[.gz])",
            fasgd_path_shown (dir, shown, sizeof shown), prefix, kind, prefix, kind, idxn, prefix, kind, idxn);
    return -1;
}

fasgd_dataset_t *
fasgd_dataset_load_dir (const char *dir, const char *prefix,
                        uint32_t max_examples, char *err, size_t errlen)
{
    fasgd_errbuf (err, errlen, "%s", "");
    if (!dir || !prefix) {
        fasgd_errbuf (err, errlen, "no data directory or prefix given");
        return NULL;
    }
    char images [4096], labels [4096];
    if (s_find (dir, prefix, "images", 3, images, sizeof images, err, errlen) != 0
    ||  s_find (dir, prefix, "labels", 1, labels, sizeof labels, err, errlen) != 0)
        return NULL;
    return fasgd_dataset_load_idx (images, labels, max_examples, err, errlen);
}

fasgd_dataset_t *
fasgd_dataset_new (uint32_t n, uint32_t rows, uint32_t cols)
{
    if (n == 0 || rows == 0 || cols == 0
    ||  rows > FASGD_DATA_MAX_SIDE || cols > FASGD_DATA_MAX_SIDE)
        return NULL;
    uint64_t dim = (uint64_t) rows * cols;
    uint64_t floats = (uint64_t) n * dim;
    if (floats > SIZE_MAX / sizeof (float))
        return NULL;
    fasgd_dataset_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->n = n;
    self->rows = rows;
    self->cols = cols;
    self->dim = (uint32_t) dim;
    self->x = calloc ((size_t) floats, sizeof (float));
    self->y = calloc (n, 1);
    if (!self->x || !self->y)
        fasgd_dataset_destroy (&self);
    return self;
}

fasgd_dataset_t *
fasgd_dataset_slice (const fasgd_dataset_t *src, uint32_t start, uint32_t count)
{
    if (!src || count == 0 || (uint64_t) start + count > src->n)
        return NULL;
    fasgd_dataset_t *self = fasgd_dataset_new (count, src->rows, src->cols);
    if (!self)
        return NULL;
    self->nclasses = src->nclasses;
    memcpy (self->x, src->x + (size_t) start * src->dim,
            (size_t) count * src->dim * sizeof (float));
    memcpy (self->y, src->y + start, count);
    return self;
}

void
fasgd_dataset_shuffle (fasgd_dataset_t *self, uint64_t seed)
{
    if (!self)
        return;
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, seed, FASGD_DATA_SHUFFLE_STREAM);
    /*  The same Fisher-Yates draws as fasgd_rng_shuffle, applied to rows.  */
    size_t dim = self->dim;
    for (uint32_t i = self->n; i > 1; i--) {
        uint32_t j = fasgd_rng_below (&rng, i);
        if (j == i - 1)
            continue;
        float *a = self->x + (size_t) (i - 1) * dim;
        float *b = self->x + (size_t) j * dim;
        for (size_t k = 0; k < dim; k++) {
            float t = a [k];
            a [k] = b [k];
            b [k] = t;
        }
        uint8_t t = self->y [i - 1];
        self->y [i - 1] = self->y [j];
        self->y [j] = t;
    }
}

void
fasgd_dataset_gather (const fasgd_dataset_t *self, const uint32_t *idx,
                      uint32_t n, float *x, uint8_t *y)
{
    assert (self);
    assert (idx || n == 0);
    size_t dim = self->dim;
    for (uint32_t i = 0; i < n; i++) {
        assert (idx [i] < self->n);
        if (x)
            memcpy (x + (size_t) i * dim, self->x + (size_t) idx [i] * dim,
                    dim * sizeof (float));
        if (y)
            y [i] = self->y [idx [i]];
    }
}

void
fasgd_dataset_destroy (fasgd_dataset_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_dataset_t *self = *self_p;
    free (self->x);
    free (self->y);
    free (self);
    *self_p = NULL;
}

struct fasgd_batcher_t {
    uint32_t    n;
    uint32_t    batch;
    uint32_t    per_epoch;   /* floor (n / batch) */
    int         shuffle;
    uint32_t    pos;         /* next batch starts at idx [pos] */
    uint64_t    epoch;
    fasgd_rng_t rng;
    uint32_t   *idx;         /* this epoch's order */
};

/*  Draws this epoch's order. Starting again from the identity makes each
    epoch's permutation a function of the seed and the epoch number only.  */
static void
s_batcher_order (fasgd_batcher_t *self)
{
    for (uint32_t i = 0; i < self->n; i++)
        self->idx [i] = i;
    if (self->shuffle)
        fasgd_rng_shuffle (&self->rng, self->idx, self->n);
}

fasgd_batcher_t *
fasgd_batcher_new (uint32_t n, uint32_t batch, uint64_t seed, int shuffle)
{
    if (batch == 0 || batch > n)
        return NULL;
    fasgd_batcher_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->idx = malloc ((size_t) n * sizeof (uint32_t));
    if (!self->idx) {
        free (self);
        return NULL;
    }
    self->n = n;
    self->batch = batch;
    self->per_epoch = n / batch;
    self->shuffle = shuffle != 0;
    fasgd_rng_seed (&self->rng, seed, FASGD_DATA_BATCHER_STREAM);
    s_batcher_order (self);
    return self;
}

const uint32_t *
fasgd_batcher_next (fasgd_batcher_t *self)
{
    assert (self);
    if (self->pos == (uint64_t) self->per_epoch * self->batch) {
        self->epoch++;
        self->pos = 0;
        if (self->shuffle)
            s_batcher_order (self);
    }
    const uint32_t *b = self->idx + self->pos;
    self->pos += self->batch;
    return b;
}

uint64_t
fasgd_batcher_epoch (const fasgd_batcher_t *self)
{
    assert (self);
    return self->epoch;
}

uint32_t
fasgd_batcher_per_epoch (const fasgd_batcher_t *self)
{
    assert (self);
    return self->per_epoch;
}

void
fasgd_batcher_destroy (fasgd_batcher_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_batcher_t *self = *self_p;
    free (self->idx);
    free (self);
    *self_p = NULL;
}
