/*  checkpoint: the FASGDCK5 file, and FASGDCK4, FASGDCK3 and FASGDCK2
    read (see checkpoint.h for their layout).

    A file is hostile input: every length in it is checked against the
    description the reader expects before anything is allocated from it,
    and the header's own checksum is verified before any of its fields is
    believed. The reader consumes the file front to back from a source
    that is either a descriptor or a memory buffer, so a test or a fuzzer
    reaches every check without a disk.  */
#include "checkpoint.h"

#include "floats.h"
#include "log.h"
#include "rules.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define S_OLD_MAGIC "FASGDCK1"
#define S_V2_MAGIC "FASGDCK2"          /* FASGDCK3 without the guard's state */
#define S_V3_MAGIC "FASGDCK3"          /* FASGDCK4 without the loss check's state and the keys' records */
#define S_V4_MAGIC "FASGDCK4"          /* FASGDCK5 without the staleness clock */
#define S_GUARD3_SIZE FASGD_CHECKPOINT_GUARD_SIZE
#define S_GUARD4_SIZE (FASGD_CHECKPOINT_GUARD_SIZE + FASGD_CHECKPOINT_LOSS_SIZE)
#define S_CLOCK_HEAD 8           /* the clock's count of sums and a zero word */
#define S_HEADER_MAX (FASGD_CHECKPOINT_HEADER_FIXED + FASGD_CHECKPOINT_MAX_TENSORS * FASGD_CHECKPOINT_TENSOR_SIZE)
#define S_CHUNK (1u << 20)      /* bytes converted or checksummed at a time */

/*  ---- little-endian fields --------------------------------------------  */

static void
s_put32 (unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

static void
s_put64 (unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

static uint32_t
s_get32 (const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p [i];
    return v;
}

static uint64_t
s_get64 (const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p [i];
    return v;
}

/*  zlib's crc32 takes an unsigned int length: big buffers in chunks.  */
static uint32_t
s_crc (uint32_t crc, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len > 0) {
        unsigned k = len > S_CHUNK ? S_CHUNK : (unsigned) len;
        crc = (uint32_t) crc32 (crc, p, k);
        p += k;
        len -= k;
    }
    return crc;
}

/*  θ is little-endian float32 in the file: on a little-endian host its
    own bytes, elsewhere swapped on the way in and out.  */
#if !FASGD_HOST_IS_LE
static void
s_floats_le (const float *src, size_t n, void *dst)
{
    unsigned char *out = dst;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy (&bits, src + i, 4);
        s_put32 (out + 4 * i, bits);
    }
}
#endif

static void
s_floats_from_le (float *theta, size_t n)
{
#if !FASGD_HOST_IS_LE
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = s_get32 ((const unsigned char *) (theta + i));
        memcpy (theta + i, &bits, 4);
    }
#else
    (void) theta;
    (void) n;
#endif
}

/*  1 when the n floats at v are all +0 (their bits).  */
static int
s_all_zero (const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy (&bits, v + i, 4);
        if (bits)
            return 0;
    }
    return 1;
}

/*  ---- descriptions ----------------------------------------------------  */

static int
s_name_ok (const char *name, size_t size)
{
    size_t len = strnlen (name, size);
    if (len == 0 || len == size)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = name [i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

/*  "784x100" into buf.  */
static const char *
s_shape (const fasgd_checkpoint_tensor_t *t, char *buf, size_t len)
{
    size_t used = 0;
    buf [0] = 0;
    for (uint32_t i = 0; i < t->ndim && i < FASGD_CHECKPOINT_MAX_DIMS && used < len; i++)
        used += (size_t) snprintf (buf + used, len - used, "%s%" PRIu64, i ? "x" : "", t->dims [i]);
    return buf;
}

int
fasgd_checkpoint_desc_check (const fasgd_checkpoint_desc_t *desc, char *err, size_t errlen)
{
    if (desc->ntensors < 1 || desc->ntensors > FASGD_CHECKPOINT_MAX_TENSORS)
        return fasgd_errbuf (err, errlen, "%d tensors, expected 1 to %d", desc->ntensors,
                             FASGD_CHECKPOINT_MAX_TENSORS);
    uint64_t total = 0;
    for (int i = 0; i < desc->ntensors; i++) {
        const fasgd_checkpoint_tensor_t *t = &desc->tensors [i];
        if (!s_name_ok (t->name, sizeof t->name))
            return fasgd_errbuf (err, errlen, "tensor %d has no valid name", i + 1);
        if (t->ndim < 1 || t->ndim > FASGD_CHECKPOINT_MAX_DIMS)
            return fasgd_errbuf (err, errlen, "tensor %s has %u dimensions", t->name, (unsigned) t->ndim);
        uint64_t size = 1;
        for (uint32_t d = 0; d < FASGD_CHECKPOINT_MAX_DIMS; d++) {
            uint64_t v = t->dims [d];
            if (d < t->ndim ? v == 0 || size > UINT64_MAX / v : v != 0)
                return fasgd_errbuf (err, errlen, "tensor %s has an impossible shape", t->name);
            if (d < t->ndim)
                size *= v;
        }
        if (total > UINT64_MAX - size)
            return fasgd_errbuf (err, errlen, "the tensors' sizes overflow");
        total += size;
    }
    if (total != desc->params)
        return fasgd_errbuf (err, errlen, "the tensors hold %" PRIu64 " parameters, not %" PRIu64,
                             total, desc->params);
    return 0;
}

int
fasgd_checkpoint_guard_check (const fasgd_checkpoint_guard_t *guard, char *err, size_t errlen)
{
    if (guard->nnorms > FASGD_CHECKPOINT_GUARD_NORMS)
        return fasgd_errbuf (err, errlen, "the guard's state holds %u norms, at most %d can be", (unsigned) guard->nnorms,
                             FASGD_CHECKPOINT_GUARD_NORMS);
    if (guard->nrefs > FASGD_CHECKPOINT_GUARD_REFS)
        return fasgd_errbuf (err, errlen, "the guard's state holds %u reference norms, at most %d can be",
                             (unsigned) guard->nrefs, FASGD_CHECKPOINT_GUARD_REFS);
    for (int k = 0; k < 2; k++) {
        const double *v = k ? guard->refs : guard->norms;
        uint32_t used = k ? guard->nrefs : guard->nnorms;
        int size = k ? FASGD_CHECKPOINT_GUARD_REFS : FASGD_CHECKPOINT_GUARD_NORMS;
        const char *what = k ? "reference norm" : "norm";
        for (int i = 0; i < size; i++) {
            if ((uint32_t) i >= used ? v [i] != 0 : !(v [i] >= 0 && v [i] <= FASGD_CHECKPOINT_GUARD_MAX))
                return fasgd_errbuf (err, errlen, "the guard's state: %s %d of %u is %g, %s", what, i + 1,
                                     (unsigned) used, v [i], (uint32_t) i >= used ? "where nothing should be"
                                     : "not a norm (0 to 1e18)");
        }
    }
    if (guard->nkeys > FASGD_CHECKPOINT_GUARD_KEYS)
        return fasgd_errbuf (err, errlen, "the guard's state holds %u keys, at most %d can be", (unsigned) guard->nkeys,
                             FASGD_CHECKPOINT_GUARD_KEYS);
    if (guard->rollbacks > FASGD_CHECKPOINT_ROLLBACKS_MAX)
        return fasgd_errbuf (err, errlen, "the guard's state counts %u rollbacks in a row, at most %d can be",
                             (unsigned) guard->rollbacks, FASGD_CHECKPOINT_ROLLBACKS_MAX);
    static const fasgd_checkpoint_key_t empty;
    for (int i = 0; i < FASGD_CHECKPOINT_GUARD_KEYS; i++) {
        const fasgd_checkpoint_key_t *k = &guard->keys [i];
        if ((uint32_t) i >= guard->nkeys) {
            if (memcmp (k, &empty, sizeof *k) != 0)
                return fasgd_errbuf (err, errlen, "the guard's state: key slot %d of %u is not empty", i + 1,
                                     (unsigned) guard->nkeys);
            continue;
        }
        size_t len = strnlen (k->key, sizeof k->key);
        int ok = len == FASGD_CHECKPOINT_KEY_LEN;
        for (size_t j = 0; ok && j < len; j++)
            ok = k->key [j] > ' ' && k->key [j] < 127 && k->key [j] != '"' && k->key [j] != '\\'
                 && k->key [j] != ',' && k->key [j] != ';' && k->key [j] != '\'' && k->key [j] != '_'
                 && k->key [j] != '`' && k->key [j] != '|' && k->key [j] != '~';
        if (!ok)
            return fasgd_errbuf (err, errlen, "the guard's state: key %d is not 40 Z85 characters", i + 1);
        if (!(fabs (k->rise) <= FASGD_CHECKPOINT_RISE_MAX) || !(fabs (k->sum) <= FASGD_CHECKPOINT_GUARD_MAX)
            || !(k->count >= 0 && k->count <= FASGD_CHECKPOINT_GUARD_MAX)
            || !(k->pushes >= 0 && k->pushes <= FASGD_CHECKPOINT_GUARD_MAX)
            || !(k->typical >= 0 && k->typical <= FASGD_CHECKPOINT_GUARD_MAX))
            return fasgd_errbuf (err, errlen, "the guard's state: key %d's record is impossible (rise %g, sum %g, "
                                 "count %g, pushes %g, typical norm %g)", i + 1, k->rise, k->sum, k->count,
                                 k->pushes, k->typical);
    }
    return 0;
}

int
fasgd_checkpoint_clock_check (uint64_t T, const double *w, size_t n, char *err, size_t errlen)
{
    if (n > FASGD_CHECKPOINT_CLOCK_SUMS)
        return fasgd_errbuf (err, errlen, "the staleness clock holds %zu running sums, at most %d can be", n,
                             FASGD_CHECKPOINT_CLOCK_SUMS);
    if (n > 0 && n - 1 > T)
        return fasgd_errbuf (err, errlen, "the staleness clock holds %zu running sums at T=%" PRIu64 ", more than "
                             "the timestamps 0 to T", n, T);
    for (size_t i = 0; i < n; i++) {
        if (!(w [i] >= 0 && isfinite (w [i])))
            return fasgd_errbuf (err, errlen, "the staleness clock: running sum %zu of %zu is %g, not a sum of "
                                 "counts (finite, at least 0)", i + 1, n, w [i]);
        /*  Rounding is monotonic: W[t] + c, c ≤ 1, rounds to at most
            what W[t] + 1 rounds to.  */
        if (i > 0 && !(w [i] >= w [i - 1] && w [i] <= w [i - 1] + 1))
            return fasgd_errbuf (err, errlen, "the staleness clock: running sum %zu of %zu is %.17g after %.17g, "
                                 "where an update adds 0 to 1", i + 1, n, w [i], w [i - 1]);
    }
    if (n > 0 && !(w [n - 1] <= (double) T))
        return fasgd_errbuf (err, errlen, "the staleness clock: its last running sum is %g, more than T=%" PRIu64
                             " updates count", w [n - 1], T);
    return 0;
}

static void
s_put_double (unsigned char *p, double v)
{
    uint64_t bits;
    memcpy (&bits, &v, 8);
    s_put64 (p, bits);
}

static double
s_get_double (const unsigned char *p)
{
    uint64_t bits = s_get64 (p);
    double v;
    memcpy (&v, &bits, 8);
    return v;
}

/*  The guard's state as FASGDCK4 holds it, into out (S_GUARD4_SIZE
    bytes, the saved θ's flag 1 when saved); its first S_GUARD3_SIZE
    bytes are FASGDCK3's.  */
static void
s_guard_encode (const fasgd_checkpoint_guard_t *g, int saved, unsigned char *out)
{
    memset (out, 0, S_GUARD4_SIZE);
    unsigned char *q = out + S_GUARD3_SIZE;
    s_put32 (q, g->nkeys);
    s_put32 (q + 4, saved ? 1 : 0);
    s_put32 (q + 8, g->rollbacks);
    for (uint32_t i = 0; i < g->nkeys && i < FASGD_CHECKPOINT_GUARD_KEYS; i++) {
        const fasgd_checkpoint_key_t *k = &g->keys [i];
        unsigned char *p = q + 16 + (size_t) i * FASGD_CHECKPOINT_KEY_SIZE;
        memcpy (p, k->key, strnlen (k->key, sizeof k->key));
        double v [5] = { k->rise, k->sum, k->count, k->pushes, k->typical };
        for (int j = 0; j < 5; j++)
            s_put_double (p + 48 + 8 * j, v [j]);
    }
    s_put32 (out, g->nnorms);
    s_put32 (out + 4, g->nrefs);
    for (int i = 0; i < FASGD_CHECKPOINT_GUARD_NORMS + FASGD_CHECKPOINT_GUARD_REFS; i++) {
        double v = i < FASGD_CHECKPOINT_GUARD_NORMS ? g->norms [i] : g->refs [i - FASGD_CHECKPOINT_GUARD_NORMS];
        uint64_t bits;
        memcpy (&bits, &v, 8);
        s_put64 (out + 8 + 8 * (size_t) i, bits);
    }
}

/*  FASGDCK4's part after FASGDCK3's guard state into g; the saved θ's
    flag into *saved. -1 when a key's padding or the reserved word is
    not zero.  */
static int
s_loss_decode (const unsigned char *q, fasgd_checkpoint_guard_t *g, uint32_t *saved)
{
    g->nkeys = s_get32 (q);
    *saved = s_get32 (q + 4);
    g->rollbacks = s_get32 (q + 8);
    if (s_get32 (q + 12) != 0)
        return -1;
    for (int i = 0; i < FASGD_CHECKPOINT_GUARD_KEYS; i++) {
        fasgd_checkpoint_key_t *k = &g->keys [i];
        const unsigned char *p = q + 16 + (size_t) i * FASGD_CHECKPOINT_KEY_SIZE;
        memcpy (k->key, p, FASGD_CHECKPOINT_KEY_LEN);
        k->key [FASGD_CHECKPOINT_KEY_LEN] = 0;
        for (int j = FASGD_CHECKPOINT_KEY_LEN; j < 48; j++)
            if (p [j])
                return -1;
        k->rise = s_get_double (p + 48);
        k->sum = s_get_double (p + 56);
        k->count = s_get_double (p + 64);
        k->pushes = s_get_double (p + 72);
        k->typical = s_get_double (p + 80);
    }
    return 0;
}

static void
s_guard_decode (const unsigned char *in, fasgd_checkpoint_guard_t *g)
{
    g->nnorms = s_get32 (in);
    g->nrefs = s_get32 (in + 4);
    for (int i = 0; i < FASGD_CHECKPOINT_GUARD_NORMS + FASGD_CHECKPOINT_GUARD_REFS; i++) {
        uint64_t bits = s_get64 (in + 8 + 8 * (size_t) i);
        double v;
        memcpy (&v, &bits, 8);
        if (i < FASGD_CHECKPOINT_GUARD_NORMS)
            g->norms [i] = v;
        else
            g->refs [i - FASGD_CHECKPOINT_GUARD_NORMS] = v;
    }
}

static size_t
s_header_len (int ntensors)
{
    return FASGD_CHECKPOINT_HEADER_FIXED + (size_t) ntensors * FASGD_CHECKPOINT_TENSOR_SIZE;
}

/*  The header of desc at T into out (S_HEADER_MAX bytes); its length.  */
static size_t
s_header_encode (const fasgd_checkpoint_desc_t *desc, uint64_t T, unsigned char *out)
{
    size_t len = s_header_len (desc->ntensors);
    memset (out, 0, len);
    memcpy (out, FASGD_CHECKPOINT_MAGIC, 8);
    s_put32 (out + 8, (uint32_t) len);
    s_put32 (out + 12, (uint32_t) desc->rule);
    s_put64 (out + 16, T);
    s_put64 (out + 24, desc->params);
    s_put64 (out + 32, desc->state_len);
    s_put32 (out + 40, (uint32_t) desc->ntensors);
    for (int i = 0; i < desc->ntensors; i++) {
        unsigned char *p = out + 44 + (size_t) i * FASGD_CHECKPOINT_TENSOR_SIZE;
        const fasgd_checkpoint_tensor_t *t = &desc->tensors [i];
        memcpy (p, t->name, strnlen (t->name, sizeof t->name));
        s_put32 (p + 32, t->ndim);
        for (int d = 0; d < FASGD_CHECKPOINT_MAX_DIMS; d++)
            s_put64 (p + 40 + 8 * d, t->dims [d]);
    }
    s_put32 (out + len - 4, s_crc (0, out, len - 4));
    return len;
}

/*  ---- reading ---------------------------------------------------------  */

/*  Where the bytes come from: a buffer (mem) or a descriptor (fd ≥ 0);
    size is the whole length, pos what has been taken.  */
typedef struct {
    const unsigned char *mem;
    int fd;
    size_t size, pos;
    uint32_t crc;               /* of every byte taken */
} s_source_t;

/*  Takes len bytes into dst. -1 when the source ends first, with errno 0
    (a file that shrank while read) or an I/O error's.  */
static int
s_take (s_source_t *src, void *dst, size_t len)
{
    if (src->mem) {
        if (len > src->size - src->pos) {
            errno = 0;
            return -1;
        }
        memcpy (dst, src->mem + src->pos, len);
    }
    else {
        unsigned char *p = dst;
        size_t left = len;
        while (left > 0) {
            ssize_t r = read (src->fd, p, left);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                if (r == 0)
                    errno = 0;
                return -1;
            }
            p += r;
            left -= (size_t) r;
        }
    }
    src->crc = s_crc (src->crc, dst, len);
    src->pos += len;
    return 0;
}

/*  1 when the source has bytes after pos (a file that grew as well), 0
    when it ends there, -1 on a read error (errno set).  */
static int
s_more (s_source_t *src)
{
    if (src->mem)
        return src->pos < src->size;
    unsigned char c;
    ssize_t r;
    do
        r = read (src->fd, &c, 1);
    while (r < 0 && errno == EINTR);
    return r > 0 ? 1 : r < 0 ? -1 : 0;
}

static fasgd_checkpoint_t *
s_fail_taken (s_source_t *src, size_t want, char *err, size_t errlen)
{
    if (errno)
        fasgd_errbuf (err, errlen, "read error: %s", strerror (errno));
    else
        fasgd_errbuf (err, errlen, "truncated: it ended after %zu bytes of the %zu expected", src->pos, want);
    return NULL;
}

/*  The magic, printable whatever it holds.  */
static void
s_quote (const unsigned char *p, size_t len, char *out, size_t outlen)
{
    size_t used = 0;
    for (size_t i = 0; i < len && used + 5 < outlen; i++)
        used += (size_t) snprintf (out + used, outlen - used, p [i] >= 32 && p [i] < 127 && p [i] != '\\'
                                   ? "%c" : "\\x%02x", p [i]);
}

/*  Checks the header (hlen bytes at h, already checksummed) against
    expect: the model, the rule, the lengths, T.  */
static int
s_header_check (const unsigned char *h, size_t hlen, const fasgd_checkpoint_desc_t *expect, uint64_t *T,
                char *err, size_t errlen)
{
    fasgd_checkpoint_desc_t got;
    memset (&got, 0, sizeof got);
    uint32_t rule = s_get32 (h + 12);
    *T = s_get64 (h + 16);
    got.rule = rule > 255 ? -1 : (int) rule;
    got.params = s_get64 (h + 24);
    got.state_len = s_get64 (h + 32);
    uint32_t ntensors = s_get32 (h + 40);
    if (ntensors < 1 || ntensors > FASGD_CHECKPOINT_MAX_TENSORS || s_header_len ((int) ntensors) != hlen)
        return fasgd_errbuf (err, errlen, "malformed header: %u tensors in a %zu-byte header",
                             (unsigned) ntensors, hlen);
    got.ntensors = (int) ntensors;
    for (int i = 0; i < got.ntensors; i++) {
        const unsigned char *p = h + 44 + (size_t) i * FASGD_CHECKPOINT_TENSOR_SIZE;
        fasgd_checkpoint_tensor_t *t = &got.tensors [i];
        memcpy (t->name, p, sizeof t->name);
        t->ndim = s_get32 (p + 32);
        if (s_get32 (p + 36) != 0)
            return fasgd_errbuf (err, errlen, "malformed header: tensor %d's reserved bytes are not zero", i + 1);
        for (int d = 0; d < FASGD_CHECKPOINT_MAX_DIMS; d++)
            t->dims [d] = s_get64 (p + 40 + 8 * d);
    }
    char why [128];
    if (fasgd_checkpoint_desc_check (&got, why, sizeof why) != 0)
        return fasgd_errbuf (err, errlen, "malformed header: %s", why);
    /*  The header is sound: now whose is it?  */
    char a [96], b [96];
    for (int i = 0; i < got.ntensors && i < expect->ntensors; i++) {
        const fasgd_checkpoint_tensor_t *t = &got.tensors [i], *e = &expect->tensors [i];
        if (strcmp (t->name, e->name) != 0 || t->ndim != e->ndim
            || memcmp (t->dims, e->dims, sizeof t->dims) != 0)
            return fasgd_errbuf (err, errlen, "another model: tensor %d is %s %s in the checkpoint, "
                                 "%s %s in the configuration", i + 1, t->name, s_shape (t, a, sizeof a),
                                 e->name, s_shape (e, b, sizeof b));
    }
    if (got.ntensors != expect->ntensors)
        return fasgd_errbuf (err, errlen, "another model: %d tensors in the checkpoint, %d in the configuration",
                             got.ntensors, expect->ntensors);
    if (got.params != expect->params)       /* the tensors agree: a bug if reached */
        return fasgd_errbuf (err, errlen, "another model: %" PRIu64 " parameters, the configuration has %" PRIu64,
                             got.params, expect->params);
    if (got.rule != expect->rule)
        return fasgd_errbuf (err, errlen, "another rule: written by rule %s, the configuration's rule is %s",
                             fasgd_rule_kind_name (got.rule), fasgd_rule_kind_name (expect->rule));
    if (got.state_len != expect->state_len)
        return fasgd_errbuf (err, errlen, "another rule: its %s state is %" PRIu64 " bytes, the configured %s "
                             "keeps %" PRIu64 " (another statistic or softsync group?)",
                             fasgd_rule_kind_name (got.rule), got.state_len, fasgd_rule_kind_name (expect->rule),
                             expect->state_len);
    if (*T > FASGD_CHECKPOINT_T_MAX)
        return fasgd_errbuf (err, errlen, "an impossible timestamp T=%" PRIu64 " (more than 2^62)", *T);
    return 0;
}

/*  The magic and the header into h (*hlen bytes), its checksum checked;
    *guarded: 3 for FASGDCK5, 2 for FASGDCK4 (no clock), 1 for FASGDCK3
    (no keys' records either), 0 for FASGDCK2 (no guard state). 0, or
    -1 with the reason in err.  */
static int
s_read_header (s_source_t *src, unsigned char *h, uint32_t *hlen_p, int *guarded, char *err, size_t errlen)
{
    if (src->size < 8)
        return fasgd_errbuf (err, errlen, "truncated: %zu bytes, not even a checkpoint's magic", src->size);
    if (s_take (src, h, 8) != 0) {
        s_fail_taken (src, 8, err, errlen);
        return -1;
    }
    if (memcmp (h, S_OLD_MAGIC, 8) == 0)
        return fasgd_errbuf (err, errlen, "a checkpoint of the old format " S_OLD_MAGIC ", which has neither a "
                             "checksum nor a model description; this version reads " S_V2_MAGIC " to "
                             FASGD_CHECKPOINT_MAGIC " (start without --resume, or resume with the version that "
                             "wrote it)");
    *guarded = !memcmp (h, S_V2_MAGIC, 8) ? 0 : !memcmp (h, S_V3_MAGIC, 8) ? 1 : !memcmp (h, S_V4_MAGIC, 8) ? 2 : 3;
    if (*guarded == 3 && memcmp (h, FASGD_CHECKPOINT_MAGIC, 8) != 0) {
        char q [48];
        s_quote (h, 8, q, sizeof q);
        return fasgd_errbuf (err, errlen, "not a fasgd checkpoint: it starts with \"%s\", not \"%s\"", q,
                             FASGD_CHECKPOINT_MAGIC);
    }
    if (src->size < FASGD_CHECKPOINT_HEADER_FIXED)
        return fasgd_errbuf (err, errlen, "truncated: %zu bytes, less than a header", src->size);
    if (s_take (src, h + 8, 4) != 0) {
        s_fail_taken (src, 12, err, errlen);
        return -1;
    }
    uint32_t hlen = s_get32 (h + 8);
    if (hlen < s_header_len (1) || hlen > S_HEADER_MAX
        || (hlen - FASGD_CHECKPOINT_HEADER_FIXED) % FASGD_CHECKPOINT_TENSOR_SIZE != 0)
        return fasgd_errbuf (err, errlen, "corrupted: a header of %u bytes is impossible", (unsigned) hlen);
    if (src->size < hlen)
        return fasgd_errbuf (err, errlen, "truncated: %zu bytes, less than its %u-byte header", src->size,
                             (unsigned) hlen);
    if (s_take (src, h + 12, hlen - 12) != 0) {
        s_fail_taken (src, hlen, err, errlen);
        return -1;
    }
    uint32_t stored = s_get32 (h + hlen - 4), computed = s_crc (0, h, hlen - 4);
    if (stored != computed)
        return fasgd_errbuf (err, errlen, "corrupted: its header's checksum does not match (crc32 %08x stored, "
                             "%08x computed)", (unsigned) stored, (unsigned) computed);
    *hlen_p = hlen;
    return 0;
}

/*  FASGDCK5's clock: its count of sums, which the file's length must
    agree with (*want, its length without the sums, grows by them: like
    the header's length, the count is believed before the checksum can
    be checked), then the sums, as the file has them, into self->clock;
    the word that must be zero into *reserved. 0, or -1 with the reason
    in err.  */
static int
s_read_clock (s_source_t *src, fasgd_checkpoint_t *self, size_t *want, uint32_t *reserved, char *err,
              size_t errlen)
{
    unsigned char head [S_CLOCK_HEAD];
    if (s_take (src, head, sizeof head) != 0) {
        s_fail_taken (src, *want, err, errlen);
        return -1;
    }
    uint32_t c = s_get32 (head);
    *reserved = s_get32 (head + 4);
    if (c > FASGD_CHECKPOINT_CLOCK_SUMS)
        return fasgd_errbuf (err, errlen, "corrupted: its staleness clock announces %u running sums, at most %d "
                             "can be", (unsigned) c, FASGD_CHECKPOINT_CLOCK_SUMS);
    *want += 8 * (size_t) c;
    if (src->size < *want)
        return fasgd_errbuf (err, errlen, "truncated: %zu bytes of the %zu its header and its staleness clock "
                             "announce", src->size, *want);
    if (src->size > *want)
        return fasgd_errbuf (err, errlen, "%zu trailing bytes after the %zu its header and its staleness clock "
                             "announce", src->size - *want, *want);
    self->nclock = c;
    if (c == 0)
        return 0;
    if (!(self->clock = malloc (8 * (size_t) c)))
        return fasgd_errbuf (err, errlen, "out of memory for the staleness clock");
    if (s_take (src, self->clock, 8 * (size_t) c) != 0) {
        s_fail_taken (src, *want, err, errlen);
        return -1;
    }
    return 0;
}

/*  s_read_body's, with the guard's state read into guard (glen bytes).  */
static int
s_read_rest (s_source_t *src, fasgd_checkpoint_t *self, unsigned char *guard, size_t glen, size_t want, char *err,
             size_t errlen)
{
    size_t n = self->n, slen = self->state_len;
    unsigned char tail [4];
    if (s_take (src, self->theta, n * sizeof (float)) != 0 || s_take (src, self->state, slen) != 0
        || s_take (src, guard, glen) != 0 || (self->has_keys && s_take (src, self->saved, n * sizeof (float)) != 0)) {
        s_fail_taken (src, want, err, errlen);
        return -1;
    }
    uint32_t reserved = 0;
    if (self->has_clock && s_read_clock (src, self, &want, &reserved, err, errlen) != 0)
        return -1;
    uint32_t computed = src->crc;
    if (s_take (src, tail, 4) != 0) {
        s_fail_taken (src, want, err, errlen);
        return -1;
    }
    int more = s_more (src);
    if (more < 0)
        return fasgd_errbuf (err, errlen, "read error: %s", strerror (errno));
    if (more > 0)
        return fasgd_errbuf (err, errlen, "trailing bytes after the %zu its header announces (it grew while "
                             "read)", want);
    uint32_t stored = s_get32 (tail);
    if (stored != computed)
        return fasgd_errbuf (err, errlen, "corrupted: its checksum does not match its contents (crc32 %08x stored, "
                             "%08x computed)", (unsigned) stored, (unsigned) computed);
    s_floats_from_le (self->theta, n);
    if (fasgd_floats_any_nonfinite (self->theta, n)) {
        size_t i = 0;
        while (i < n && isfinite (self->theta [i]))
            i++;
        return fasgd_errbuf (err, errlen, "theta[%zu] is %g: the parameters are not finite", i,
                             (double) self->theta [i]);
    }
    char why [160];
    if (fasgd_rule_state_check (self->state, slen, n, why, sizeof why) != 0)
        return fasgd_errbuf (err, errlen, "%s", why);
    if (self->has_guard) {
        s_guard_decode (guard, &self->guard);
        uint32_t saved = 0;
        if (self->has_keys && s_loss_decode (guard + S_GUARD3_SIZE, &self->guard, &saved) != 0)
            return fasgd_errbuf (err, errlen, "the guard's state: bytes that must be zero are not");
        if (fasgd_checkpoint_guard_check (&self->guard, why, sizeof why) != 0)
            return fasgd_errbuf (err, errlen, "%s", why);
        if (saved > 1)
            return fasgd_errbuf (err, errlen, "the guard's state: its flags are %u", (unsigned) saved);
        if (self->has_keys) {
            s_floats_from_le (self->saved, n);
            if (saved ? fasgd_floats_any_nonfinite (self->saved, n) : !s_all_zero (self->saved, n))
                return fasgd_errbuf (err, errlen, "the loss check's saved parameters are %s", saved
                                     ? "not finite" : "not zero where none is saved");
            if (!saved) {
                free (self->saved);
                self->saved = NULL;
            }
        }
    }
    if (self->has_clock) {
        if (reserved != 0)
            return fasgd_errbuf (err, errlen, "the staleness clock: bytes that must be zero are not");
        for (size_t i = 0; i < self->nclock; i++)
            self->clock [i] = s_get_double ((const unsigned char *) (self->clock + i));
        if (fasgd_checkpoint_clock_check (self->T, self->clock, self->nclock, why, sizeof why) != 0)
            return fasgd_errbuf (err, errlen, "%s", why);
    }
    return 0;
}

/*  θ, the rule's state, the guard's (when self->has_guard), the saved θ
    (when self->has_keys), the staleness clock (when self->has_clock) and
    the final checksum into self, whose lengths are set; the source must
    end there (want bytes in all, and the clock's sums), θ be finite, the
    state one the rule accepts, the guard's one
    fasgd_checkpoint_guard_check accepts and the clock one
    fasgd_checkpoint_clock_check accepts. 0, or -1 with the reason in err.  */
static int
s_read_body (s_source_t *src, fasgd_checkpoint_t *self, size_t want, char *err, size_t errlen)
{
    size_t glen = self->has_keys ? S_GUARD4_SIZE : self->has_guard ? S_GUARD3_SIZE : 0;
    unsigned char *guard = malloc (glen ? glen : 1);
    if (!guard)
        return fasgd_errbuf (err, errlen, "out of memory for the guard's state");
    int rc = s_read_rest (src, self, guard, glen, want, err, errlen);
    free (guard);
    return rc;
}


/*  A checkpoint of the model and rule expect describes: the header, the
    lengths it announces, then the body. NULL with the reason in err.  */
static fasgd_checkpoint_t *
s_read (s_source_t *src, const fasgd_checkpoint_desc_t *expect, char *err, size_t errlen)
{
    char why [160];
    if (fasgd_checkpoint_desc_check (expect, why, sizeof why) != 0) {
        fasgd_errbuf (err, errlen, "the expected description is invalid: %s", why);
        return NULL;
    }
    unsigned char h [S_HEADER_MAX];
    uint32_t hlen = 0;
    uint64_t T;
    int guarded = 1;
    if (s_read_header (src, h, &hlen, &guarded, err, errlen) != 0
        || s_header_check (h, hlen, expect, &T, err, errlen) != 0)
        return NULL;
    /*  Every length is now the expected one, which the caller could
        allocate: so can we.  */
    size_t n = (size_t) expect->params, slen = (size_t) expect->state_len;
    if (expect->params > SIZE_MAX / 8 || expect->state_len > SIZE_MAX / 4) {
        fasgd_errbuf (err, errlen, "too large for this machine");
        return NULL;
    }
    /*  FASGDCK5's length without the clock's sums, which its clock's
        count adds (s_read_clock).  */
    size_t want = hlen + 4 * n + slen + (guarded >= 2 ? S_GUARD4_SIZE + 4 * n : guarded ? S_GUARD3_SIZE : 0)
                  + (guarded == 3 ? S_CLOCK_HEAD : 0) + 4;
    size_t most = want + (guarded == 3 ? 8 * (size_t) FASGD_CHECKPOINT_CLOCK_SUMS : 0);
    if (src->size < want) {
        fasgd_errbuf (err, errlen, "truncated: %zu bytes of the %s%zu its header announces", src->size,
                      guarded == 3 ? "at least " : "", want);
        return NULL;
    }
    if (src->size > most) {
        fasgd_errbuf (err, errlen, "%zu trailing bytes after the %s%zu its header announces", src->size - most,
                      guarded == 3 ? "at most " : "", most);
        return NULL;
    }
    fasgd_checkpoint_t *self = calloc (1, sizeof *self);
    if (self) {
        self->theta = malloc (n * sizeof (float));
        self->state = malloc (slen ? slen : 1);
        if (guarded >= 2)
            self->saved = malloc (n ? n * sizeof (float) : 1);
    }
    if (!self || !self->theta || !self->state || (guarded >= 2 && !self->saved)) {
        fasgd_checkpoint_destroy (&self);
        fasgd_errbuf (err, errlen, "out of memory for %zu parameters", n);
        return NULL;
    }
    self->T = T;
    self->n = n;
    self->state_len = slen;
    self->has_guard = guarded > 0;
    self->has_keys = guarded >= 2;
    self->has_clock = guarded == 3;
    if (s_read_body (src, self, want, err, errlen) != 0)
        fasgd_checkpoint_destroy (&self);
    return self;
}

fasgd_checkpoint_t *
fasgd_checkpoint_parse (const void *data, size_t len, const fasgd_checkpoint_desc_t *expect,
                        char *err, size_t errlen)
{
    if (!data && len > 0) {
        fasgd_errbuf (err, errlen, "no data");
        return NULL;
    }
    /*  An empty buffer may come as NULL: any non-NULL pointer will do.  */
    s_source_t src = { .mem = data ? data : (const unsigned char *) "", .fd = -1, .size = len };
    return s_read (&src, expect, err, errlen);
}

fasgd_checkpoint_t *
fasgd_checkpoint_read (const char *path, const fasgd_checkpoint_desc_t *expect, char *err, size_t errlen)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fasgd_errbuf (err, errlen, "cannot open it: %s", strerror (errno));
        return NULL;
    }
    struct stat st;
    if (fstat (fd, &st) != 0) {
        fasgd_errbuf (err, errlen, "cannot read it: %s", strerror (errno));
        close (fd);
        return NULL;
    }
    if (!S_ISREG (st.st_mode)) {
        fasgd_errbuf (err, errlen, "not a regular file");
        close (fd);
        return NULL;
    }
    s_source_t src = { .mem = NULL, .fd = fd, .size = (size_t) st.st_size };
    fasgd_checkpoint_t *self = s_read (&src, expect, err, errlen);
    close (fd);
    return self;
}

void
fasgd_checkpoint_destroy (fasgd_checkpoint_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->theta);
    free ((*self_p)->state);
    free ((*self_p)->saved);
    free ((*self_p)->clock);
    free (*self_p);
    *self_p = NULL;
}

/*  ---- writing ---------------------------------------------------------  */

static int
s_write_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write (fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t) w;
    }
    return 0;
}

/*  n floats of theta, little-endian, to fd and into *crc; -1 with errno
    set.  */
static int
s_write_floats (int fd, const float *theta, size_t n, uint32_t *crc_p)
{
    uint32_t crc = *crc_p;
#if FASGD_HOST_IS_LE
    crc = s_crc (crc, theta, n * sizeof (float));
    if (s_write_all (fd, theta, n * sizeof (float)) != 0)
        return -1;
#else
    unsigned char *buf = malloc (S_CHUNK);
    if (!buf)
        return -1;
    for (size_t i = 0; i < n; ) {
        size_t k = n - i < S_CHUNK / 4 ? n - i : S_CHUNK / 4;
        s_floats_le (theta + i, k, buf);
        crc = s_crc (crc, buf, 4 * k);
        if (s_write_all (fd, buf, 4 * k) != 0) {
            free (buf);
            return -1;
        }
        i += k;
    }
    free (buf);
#endif
    *crc_p = crc;
    return 0;
}

/*  n zero floats to fd and into *crc; -1 with errno set.  */
static int
s_write_zeros (int fd, size_t n, uint32_t *crc_p)
{
    static const unsigned char zero [4096];
    for (size_t left = 4 * n; left > 0; ) {
        size_t k = left < sizeof zero ? left : sizeof zero;
        *crc_p = s_crc (*crc_p, zero, k);
        if (s_write_all (fd, zero, k) != 0)
            return -1;
        left -= k;
    }
    return 0;
}

/*  Writes the whole file to fd: the clock's section is clen bytes at
    clock. -1 with errno set.  */
static int
s_write_file (int fd, const unsigned char *header, size_t hlen, const float *theta, size_t n,
              const void *state, size_t state_len, const unsigned char *guard, const float *saved,
              const unsigned char *clock, size_t clen)
{
    uint32_t crc = s_crc (0, header, hlen);
    if (s_write_all (fd, header, hlen) != 0 || s_write_floats (fd, theta, n, &crc) != 0)
        return -1;
    crc = s_crc (crc, state, state_len);
    if (s_write_all (fd, state, state_len) != 0)
        return -1;
    crc = s_crc (crc, guard, S_GUARD4_SIZE);
    if (s_write_all (fd, guard, S_GUARD4_SIZE) != 0)
        return -1;
    if (saved ? s_write_floats (fd, saved, n, &crc) != 0 : s_write_zeros (fd, n, &crc) != 0)
        return -1;
    crc = s_crc (crc, clock, clen);
    if (s_write_all (fd, clock, clen) != 0)
        return -1;
    unsigned char tail [4];
    s_put32 (tail, crc);
    return s_write_all (fd, tail, 4);
}

/*  Syncs the folder that holds path, so that the rename survives a crash.  */
static int
s_sync_dir (const char *path)
{
    char dir [4096];
    const char *slash = strrchr (path, '/');
    if (!slash)
        snprintf (dir, sizeof dir, ".");
    else if (slash == path)
        snprintf (dir, sizeof dir, "/");
    else
        snprintf (dir, sizeof dir, "%.*s", (int) (slash - path), path);
    int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /*  Some file systems cannot sync a folder (EINVAL): nothing to do.  */
    int rc = fsync (fd) != 0 && errno != EINVAL ? -1 : 0;
    int e = errno;
    close (fd);
    errno = e;
    return rc;
}

int
fasgd_checkpoint_write (const char *path, const fasgd_checkpoint_desc_t *desc, uint64_t T,
                        const float *theta, size_t n, const void *state, size_t state_len,
                        const fasgd_checkpoint_guard_t *guard, const float *saved, const double *clock,
                        size_t nclock, char *err, size_t errlen)
{
    char why [160];
    if (fasgd_checkpoint_desc_check (desc, why, sizeof why) != 0)
        return fasgd_errbuf (err, errlen, "not writing %s: the model description is invalid: %s", path, why);
    if (n != desc->params || state_len != desc->state_len)
        return fasgd_errbuf (err, errlen, "not writing %s: %zu parameters and %zu bytes of state, the "
                             "description says %" PRIu64 " and %" PRIu64, path, n, state_len, desc->params,
                             desc->state_len);
    /*  What a reader would refuse is not written: the previous checkpoint
        stays, and the log says why.  */
    if (T > FASGD_CHECKPOINT_T_MAX)
        return fasgd_errbuf (err, errlen, "not writing %s: T=%" PRIu64 " is above 2^62", path, T);
    if (fasgd_floats_any_nonfinite (theta, n))
        return fasgd_errbuf (err, errlen, "not writing %s: the parameters are not all finite", path);
    if (saved && fasgd_floats_any_nonfinite (saved, n))
        return fasgd_errbuf (err, errlen, "not writing %s: the loss check's saved parameters are not all finite",
                             path);
    if (fasgd_rule_state_check (state, state_len, n, why, sizeof why) != 0)
        return fasgd_errbuf (err, errlen, "not writing %s: %s", path, why);
    static const fasgd_checkpoint_guard_t none;
    if (fasgd_checkpoint_guard_check (guard ? guard : &none, why, sizeof why) != 0)
        return fasgd_errbuf (err, errlen, "not writing %s: %s", path, why);
    if (!clock)
        nclock = 0;
    if (fasgd_checkpoint_clock_check (T, clock, nclock, why, sizeof why) != 0)
        return fasgd_errbuf (err, errlen, "not writing %s: %s", path, why);
    char tmp [4096 + 8];
    if ((size_t) snprintf (tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return fasgd_errbuf (err, errlen, "not writing %s: the path is too long", path);
    unsigned char header [S_HEADER_MAX];
    size_t hlen = s_header_encode (desc, T, header);
    /*  A temporary file left by a crash, or planted: unlink removes a link
        itself, never what it points at; then O_EXCL and O_NOFOLLOW create
        a new file or fail, whatever appears there meanwhile.  */
    if (unlink (tmp) != 0 && errno != ENOENT)
        return fasgd_errbuf (err, errlen, "cannot remove the stale %s: %s", tmp, strerror (errno));
    int fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return fasgd_errbuf (err, errlen, "cannot write %s: %s", tmp, strerror (errno));
    const char *step = "write";
    size_t clen = S_CLOCK_HEAD + 8 * nclock;
    unsigned char *gbytes = malloc (S_GUARD4_SIZE), *cbytes = malloc (clen);
    int rc = -1;
    errno = ENOMEM;
    if (gbytes && cbytes) {
        s_guard_encode (guard ? guard : &none, saved != NULL, gbytes);
        s_put32 (cbytes, (uint32_t) nclock);
        s_put32 (cbytes + 4, 0);
        for (size_t i = 0; i < nclock; i++)
            s_put_double (cbytes + S_CLOCK_HEAD + 8 * i, clock [i]);
        rc = s_write_file (fd, header, hlen, theta, n, state, state_len, gbytes, saved, cbytes, clen);
    }
    free (gbytes);
    free (cbytes);
    if (rc == 0 && (step = "sync", fsync (fd) != 0))
        rc = -1;
    int e = errno;
    if (close (fd) != 0 && rc == 0) {
        step = "close";
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename (tmp, path) != 0) {
        e = errno;
        unlink (tmp);
        return fasgd_errbuf (err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror (e));
    }
    if (rc != 0) {
        unlink (tmp);
        return fasgd_errbuf (err, errlen, "cannot %s %s: %s", step, tmp, strerror (e));
    }
    if (s_sync_dir (path) != 0)
        return fasgd_errbuf (err, errlen, "%s is written, but its folder could not be synced: %s", path,
                             strerror (errno));
    return 0;
}
