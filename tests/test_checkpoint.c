/*  checkpoint: the FASGDCK5 file (and FASGDCK4, FASGDCK3, FASGDCK2) on its own, without a server. What is
    written reads back bit for bit; every damage a disk, a crash or a
    hostile hand can do is refused with its cause (a flipped bit anywhere,
    a cut anywhere, trailing bytes, NaN or Inf under a correct checksum,
    an impossible T, another model or rule, the old format); and a write
    never follows a planted link nor replaces a good checkpoint when it
    fails.  */
#include "checkpoint.h"
#include "rules.h"
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/*  A 20-8-4 MLP's tensors, as fasgd-server describes them: D = 204.  */
#define D 204

static void
s_tensor (fasgd_checkpoint_desc_t *d, const char *name, uint64_t rows, uint64_t cols)
{
    fasgd_checkpoint_tensor_t *t = &d->tensors [d->ntensors++];
    snprintf (t->name, sizeof t->name, "%s", name);
    t->ndim = 2;
    t->dims [0] = rows;
    t->dims [1] = cols;
    d->params += rows * cols;
}

/*  The description of an MLP of the given widths (nsizes of them).  */
static void
s_mlp_desc (fasgd_checkpoint_desc_t *d, const int *sizes, int nsizes, const fasgd_rule_t *rule, int kind)
{
    memset (d, 0, sizeof *d);
    for (int l = 0; l + 1 < nsizes; l++) {
        char w [8], b [8];
        snprintf (w, sizeof w, "w%d", l);
        snprintf (b, sizeof b, "b%d", l);
        s_tensor (d, w, (uint64_t) sizes [l], (uint64_t) sizes [l + 1]);
        s_tensor (d, b, 1, (uint64_t) sizes [l + 1]);
    }
    d->rule = kind;
    d->state_len = rule ? fasgd_rule_state_size (rule) : 0;
}

static fasgd_rule_t *
s_rule (int kind, int statistic, size_t n)
{
    fasgd_rule_params_t p;
    fasgd_rule_params_default (&p);
    p.kind = kind;
    p.statistic = statistic;
    fasgd_rule_t *r = fasgd_rule_new (&p, n, NULL, 0);
    ck_assert_ptr_nonnull (r);
    return r;
}

/*  A fasgd (std) rule with statistics of its own (two gradients applied
    to theta), its description, θ and state: what a server would write.  */
typedef struct {
    fasgd_rule_t *rule;
    fasgd_checkpoint_desc_t desc;
    float theta [D];
    unsigned char *state;
    size_t state_len;
    fasgd_checkpoint_guard_t guard;
    float saved [D];                    /* the loss check's saved θ */
    double clock [40];                  /* the staleness clock's running sums */
    size_t nclock;
    char dir [64], path [128], tmp [128];
} fixture_t;

/*  The bytes of the guard's state as FASGDCK3 held it, and those FASGDCK4
    adds after them (the keys' records, then the saved θ).  */
#define S_GUARD3 8232
#define S_LOSS (16 + 88 * 1024 + 4 * D)
/*  The bytes of the fixture's staleness clock, which FASGDCK5 adds
    before the final checksum.  */
#define S_CLOCK (8 + 8 * 40)
/*  A CURVE key (Z85).  */
#define S_KEY "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"


static void
s_fixture (fixture_t *f)
{
    static const int sizes [] = { 20, 8, 4 };
    f->rule = s_rule (FASGD_RULE_FASGD, FASGD_STAT_STD, D);
    s_mlp_desc (&f->desc, sizes, 3, f->rule, FASGD_RULE_FASGD);
    ck_assert_uint_eq (f->desc.params, D);
    float g [D];
    for (int i = 0; i < D; i++) {
        f->theta [i] = (float) (i % 17) * 0.125f - 1.0f;
        g [i] = (float) (i % 5) * 0.01f - 0.02f;
    }
    ck_assert_int_eq (fasgd_rule_apply (f->rule, f->theta, g, 0, NULL), 1);
    ck_assert_int_eq (fasgd_rule_apply (f->rule, f->theta, g, 1, NULL), 1);
    f->state_len = fasgd_rule_state_size (f->rule);
    f->state = malloc (f->state_len);
    ck_assert_ptr_nonnull (f->state);
    fasgd_rule_state_get (f->rule, f->state);
    /*  A guard that has seen 300 pushes and 3 references.  */
    memset (&f->guard, 0, sizeof f->guard);
    f->guard.nnorms = 300;
    for (int i = 0; i < 300; i++)
        f->guard.norms [i] = 0.5 + 0.01 * (i % 31);
    f->guard.nrefs = 3;
    for (int i = 0; i < 3; i++)
        f->guard.refs [i] = 2.0 + i;
    /*  Two keys' records, a loss check that jumped once, its saved θ.  */
    f->guard.nkeys = 2;
    f->guard.keys [0] = (fasgd_checkpoint_key_t) { S_KEY, 0.75, -0.5, 30.5, 120, 1.25 };
    f->guard.keys [1] = (fasgd_checkpoint_key_t) { "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID", -0.1, 0.2, 12, 12, 0 };
    f->guard.rollbacks = 1;
    for (int i = 0; i < D; i++)
        f->saved [i] = (float) (i % 13) * 0.25f - 1.5f;
    /*  A clock past its first updates: 40 sums of counts 0 to 1.  */
    f->nclock = 40;
    f->clock [0] = 3.25;
    for (int i = 1; i < 40; i++)
        f->clock [i] = f->clock [i - 1] + (i % 5) * 0.2 + (i % 3 ? 0 : 1e-3 * (i % 7));
    snprintf (f->dir, sizeof f->dir, "/tmp/fasgd-test-checkpoint-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (f->dir));
    snprintf (f->path, sizeof f->path, "%s/ckpt", f->dir);
    snprintf (f->tmp, sizeof f->tmp, "%s/ckpt.tmp", f->dir);
}

static void
s_fixture_end (fixture_t *f)
{
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    ck_assert_int_eq (system (cmd), 0);
    free (f->state);
    fasgd_rule_destroy (&f->rule);
}

static unsigned char *
s_slurp (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    ck_assert_ptr_nonnull (f);
    ck_assert_int_eq (fseek (f, 0, SEEK_END), 0);
    long size = ftell (f);
    ck_assert_int_ge (size, 0);
    rewind (f);
    unsigned char *buf = malloc ((size_t) size + 1);
    ck_assert_ptr_nonnull (buf);
    ck_assert_uint_eq (fread (buf, 1, (size_t) size, f), (size_t) size);
    fclose (f);
    *len = (size_t) size;
    return buf;
}

/*  The file at path still holds the len bytes of image: a write that
    failed left the previous checkpoint as it was.  */
static void
s_assert_unchanged (const char *path, const unsigned char *image, size_t len)
{
    size_t now_len;
    unsigned char *now = s_slurp (path, &now_len);
    ck_assert_msg (now_len == len && memcmp (now, image, len) == 0, "the previous checkpoint was changed");
    free (now);
}

/*  The fixture's checkpoint at T, written to its path and read back as
    bytes (the caller frees them).  */
static unsigned char *
s_image (fixture_t *f, uint64_t T, size_t *len)
{
    char err [256] = "";
    ck_assert_msg (fasgd_checkpoint_write (f->path, &f->desc, T, f->theta, D, f->state, f->state_len, &f->guard,
                                           f->saved, f->clock, f->nclock, err, sizeof err) == 0, "%s", err);
    return s_slurp (f->path, len);
}

static uint32_t
s_le32 (const unsigned char *p)
{
    return (uint32_t) p [0] | (uint32_t) p [1] << 8 | (uint32_t) p [2] << 16 | (uint32_t) p [3] << 24;
}

static void
s_put_le32 (unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

/*  Where θ and the state start in an image (from its header length).  */
static size_t
s_theta_at (const unsigned char *image)
{
    return s_le32 (image + 8);
}

/*  Recomputes both checksums after a deliberate change, as a forger
    would: what remains to refuse it is the checks of the contents.  */
static void
s_reseal (unsigned char *image, size_t len)
{
    size_t h = s_theta_at (image);
    s_put_le32 (image + h - 4, (uint32_t) crc32 (0, image, (unsigned) (h - 4)));
    s_put_le32 (image + len - 4, (uint32_t) crc32 (0, image, (unsigned) (len - 4)));
}

/*  dst becomes the first len bytes of image as a file of the format
    `magic` would hold them: that magic, both checksums resealed (dst may
    be image).  */
static void
s_as_format (unsigned char *dst, const unsigned char *image, size_t len, const char *magic)
{
    memmove (dst, image, len - 4);
    memcpy (dst, magic, 8);
    s_reseal (dst, len);
}

/*  Parses image, expecting a refusal whose reason contains cause; with
    from_file, through the file as well.  */
static void
s_refused (fixture_t *f, const unsigned char *image, size_t len, const fasgd_checkpoint_desc_t *expect,
           const char *what, const char *cause)
{
    char err [512] = "";
    fasgd_checkpoint_t *ck = fasgd_checkpoint_parse (image, len, expect, err, sizeof err);
    ck_assert_msg (ck == NULL, "%s: accepted", what);
    ck_assert_msg (strstr (err, cause) != NULL, "%s: the reason '%s' does not say '%s'", what, err, cause);
    if (f) {
        fasgd_test_write_file (f->path, image, len);
        char err2 [512] = "";
        ck = fasgd_checkpoint_read (f->path, expect, err2, sizeof err2);
        ck_assert_msg (ck == NULL, "%s: accepted from the file", what);
        ck_assert_msg (!strcmp (err, err2), "%s: '%s' from memory, '%s' from the file", what, err, err2);
    }
}

/*  image (len_new bytes, format `newer`) cut to its first len_old bytes
    as format `older`: the file a server before `newer` wrote. Returns it
    parsed (the caller checks it and destroys it); each format's magic at
    the other's length is refused, `newer`'s at len_old with a reason
    saying `cut`, `older`'s at len_new saying `extra`. image is left as
    `older` was.  */
static fasgd_checkpoint_t *
s_older (fixture_t *f, unsigned char *image, size_t len_new, size_t len_old, const char *newer, const char *older,
         const char *cut, const char *extra)
{
    unsigned char *v = malloc (len_new);
    ck_assert_ptr_nonnull (v);
    s_as_format (v, image, len_old, older);
    char err [256] = "", what [64];
    fasgd_checkpoint_t *ck = fasgd_checkpoint_parse (v, len_old, &f->desc, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s: %s", older, err);
    s_as_format (v, image, len_old, newer);
    snprintf (what, sizeof what, "%s at %s's length", newer, older);
    s_refused (f, v, len_old, &f->desc, what, cut);
    s_as_format (v, image, len_new, older);
    snprintf (what, sizeof what, "%s at %s's length", older, newer);
    s_refused (f, v, len_new, &f->desc, what, extra);
    free (v);
    s_as_format (image, image, len_old, older);
    return ck;
}

START_TEST (test_round_trip)
{
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *image = s_image (&f, 12345, &len);
    ck_assert_uint_eq (len, 48 + 4 * 104 + 4 * D + f.state_len + S_GUARD3 + S_LOSS + S_CLOCK + 4);
    ck_assert_int_eq (memcmp (image, "FASGDCK5", 8), 0);
    char err [256] = "";
    fasgd_checkpoint_t *ck = fasgd_checkpoint_read (f.path, &f.desc, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s", err);
    ck_assert_uint_eq (ck->T, 12345);
    ck_assert_uint_eq (ck->n, D);
    ck_assert_int_eq (memcmp (ck->theta, f.theta, sizeof f.theta), 0);
    ck_assert_uint_eq (ck->state_len, f.state_len);
    ck_assert_int_eq (memcmp (ck->state, f.state, f.state_len), 0);
    ck_assert_int_eq (ck->has_guard, 1);
    ck_assert_int_eq (ck->has_keys, 1);
    ck_assert_int_eq (memcmp (&ck->guard, &f.guard, sizeof f.guard), 0);
    ck_assert_ptr_nonnull (ck->saved);
    ck_assert_int_eq (memcmp (ck->saved, f.saved, sizeof f.saved), 0);
    ck_assert_int_eq (ck->has_clock, 1);
    ck_assert_uint_eq (ck->nclock, 40);
    ck_assert_int_eq (memcmp (ck->clock, f.clock, sizeof f.clock), 0);
    /*  The state restores into a fresh rule of the same kind.  */
    fasgd_rule_t *r = s_rule (FASGD_RULE_FASGD, FASGD_STAT_STD, D);
    ck_assert_int_eq (fasgd_rule_state_set (r, ck->state, ck->state_len), 0);
    ck_assert_double_eq (fasgd_rule_vbar (r), fasgd_rule_vbar (f.rule));
    fasgd_rule_destroy (&r);
    fasgd_checkpoint_destroy (&ck);
    ck_assert_ptr_null (ck);
    fasgd_checkpoint_destroy (&ck);
    /*  From memory, at any alignment.  */
    unsigned char *shifted = malloc (len + 1);
    ck_assert_ptr_nonnull (shifted);
    memcpy (shifted + 1, image, len);
    ck = fasgd_checkpoint_parse (shifted + 1, len, &f.desc, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s", err);
    ck_assert_int_eq (memcmp (ck->theta, f.theta, sizeof f.theta), 0);
    fasgd_checkpoint_destroy (&ck);
    free (shifted);
    /*  No temporary file left, and the largest T allowed is written.  */
    ck_assert_int_eq (access (f.tmp, F_OK), -1);
    free (image);
    image = s_image (&f, FASGD_CHECKPOINT_T_MAX, &len);
    ck = fasgd_checkpoint_parse (image, len, &f.desc, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s", err);
    ck_assert_uint_eq (ck->T, FASGD_CHECKPOINT_T_MAX);
    fasgd_checkpoint_destroy (&ck);
    free (image);
    /*  Without a saved θ or a clock's sums: none read back.  */
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, 5, f.theta, D, f.state, f.state_len, &f.guard, NULL,
                                              NULL, 0, err, sizeof err), 0);
    ck = fasgd_checkpoint_read (f.path, &f.desc, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s", err);
    ck_assert_ptr_null (ck->saved);
    ck_assert_int_eq (ck->has_clock, 1);
    ck_assert_uint_eq (ck->nclock, 0);
    ck_assert_ptr_null (ck->clock);
    ck_assert_int_eq (memcmp (&ck->guard, &f.guard, sizeof f.guard), 0);
    fasgd_checkpoint_destroy (&ck);
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_every_bit_flip_is_refused)
{
    /*  One bit flipped in any byte: in the magic, the header's lengths,
        T, a tensor's name or shape, the header's checksum, θ, the rule
        state's header or its vectors, the final checksum.  */
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *image = s_image (&f, 77, &len);
    size_t h = s_theta_at (image);
    size_t q = len - 4 - S_CLOCK - S_LOSS, c = len - 4 - S_CLOCK;
    for (size_t i = 0; i < len; i++) {
        /*  Of the keys' empty slots and the saved θ, every 97th byte.  */
        if (i >= q + 16 + 2 * 88 && i < c && i % 97)
            continue;
        for (int bit = 0; bit < 8; bit += 3) {
            image [i] ^= (unsigned char) (1u << bit);
            char what [64];
            snprintf (what, sizeof what, "bit %d of byte %zu flipped", bit, i);
            /*  The magic, the header's length and the clock's count of
                sums are read before any checksum can be: their damage
                has causes of its own. "FASGDCK5" with its last bit
                flipped is FASGDCK4's magic, which the header's checksum
                refuses.  */
            const char *cause = i == 7 && bit == 0 ? "corrupted" : i < 8 ? "not a fasgd checkpoint"
                                : i < 12 || (i >= c && i < c + 4) ? "" : "corrupted";
            s_refused (NULL, image, len, &f.desc, what, cause);
            image [i] ^= (unsigned char) (1u << bit);
        }
    }
    /*  And through a file: one in θ, one in the state's vectors, one in
        the state's v-bar, one in T.  */
    const size_t at [] = { h + 4 * 100 + 2, h + 4 * D + f.state_len - 7, h + 4 * D + 32, 17 };
    for (size_t k = 0; k < sizeof at / sizeof at [0]; k++) {
        image [at [k]] ^= 0x10;
        s_refused (&f, image, len, &f.desc, "a flipped bit, from the file", "corrupted");
        image [at [k]] ^= 0x10;
    }
    free (image);
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_every_cut_and_trailing_bytes_are_refused)
{
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *image = s_image (&f, 77, &len);
    for (size_t cut = 0; cut < len; cut++) {
        char what [64];
        snprintf (what, sizeof what, "cut to %zu of %zu bytes", cut, len);
        s_refused (cut % 97 == 0 ? &f : NULL, image, cut, &f.desc, what, "truncated");
    }
    unsigned char *longer = malloc (len + 4096);
    ck_assert_ptr_nonnull (longer);
    memcpy (longer, image, len);
    memset (longer + len, 0, 4096);
    s_refused (&f, longer, len + 1, &f.desc, "a trailing byte", "1 trailing bytes");
    s_refused (&f, longer, len + 4096, &f.desc, "4096 trailing bytes", "4096 trailing bytes");
    /*  Two checkpoints end to end.  */
    memcpy (longer, image, len);
    unsigned char *two = malloc (2 * len);
    ck_assert_ptr_nonnull (two);
    memcpy (two, image, len);
    memcpy (two + len, image, len);
    s_refused (&f, two, 2 * len, &f.desc, "two checkpoints", "trailing bytes");
    free (two);
    free (longer);
    free (image);
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_non_finite_values_are_refused)
{
    /*  NaN and infinities under a correct checksum: in θ, in the fasgd
        statistics, in v-bar.  */
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *image = s_image (&f, 77, &len);
    size_t h = s_theta_at (image);
    const float bad [] = { NAN, INFINITY, -INFINITY };
    for (int k = 0; k < 3; k++) {
        unsigned char *copy = malloc (len);
        ck_assert_ptr_nonnull (copy);
        memcpy (copy, image, len);
        memcpy (copy + h + 4 * 5, &bad [k], 4);
        s_reseal (copy, len);
        s_refused (&f, copy, len, &f.desc, "a non-finite theta", "theta[5] is");
        memcpy (copy, image, len);
        memcpy (copy + h + 4 * D + 40 + 4 * (D + 3), &bad [k], 4);      /* b, vector 1 */
        s_reseal (copy, len);
        s_refused (&f, copy, len, &f.desc, "a non-finite statistic", "element 3 of vector 1");
        memcpy (copy, image, len);
        double vbar = bad [k];
        memcpy (copy + h + 4 * D + 32, &vbar, 8);
        s_reseal (copy, len);
        s_refused (&f, copy, len, &f.desc, "a non-finite v-bar", "v-bar");
        free (copy);
    }
    /*  The writer refuses them too, and keeps the good checkpoint.  */
    fasgd_test_write_file (f.path, image, len);
    float theta [D];
    memcpy (theta, f.theta, sizeof theta);
    theta [9] = NAN;
    char err [256] = "";
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, 78, theta, D, f.state, f.state_len, NULL, NULL, NULL, 0,
                                              err, sizeof err), -1);
    ck_assert_msg (strstr (err, "not all finite"), "%s", err);
    s_assert_unchanged (f.path, image, len);
    free (image);
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_impossible_timestamp_is_refused)
{
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *image = s_image (&f, 77, &len);
    const uint64_t Ts [] = { UINT64_MAX, FASGD_CHECKPOINT_T_MAX + 1 };
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 8; i++)
            image [16 + i] = (unsigned char) (Ts [k] >> (8 * i));
        s_reseal (image, len);
        s_refused (&f, image, len, &f.desc, "an impossible T", "impossible timestamp");
    }
    char err [256] = "";
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, UINT64_MAX, f.theta, D, f.state, f.state_len, NULL, NULL, NULL, 0,
                                              err, sizeof err), -1);
    ck_assert_msg (strstr (err, "above 2^62"), "%s", err);
    free (image);
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_another_model_is_refused)
{
    /*  784-96-30-30-10 and 784-100-10 both have 79,510 parameters.  */
    static const int deep [] = { 784, 96, 30, 30, 10 }, shallow [] = { 784, 100, 10 };
    fasgd_checkpoint_desc_t a, b;
    s_mlp_desc (&a, deep, 5, NULL, FASGD_RULE_ASGD);
    s_mlp_desc (&b, shallow, 3, NULL, FASGD_RULE_ASGD);
    ck_assert_uint_eq (a.params, 79510);
    ck_assert_uint_eq (b.params, 79510);
    fasgd_rule_t *rule = s_rule (FASGD_RULE_ASGD, 0, 79510);
    a.state_len = b.state_len = fasgd_rule_state_size (rule);
    unsigned char *state = malloc (a.state_len);
    ck_assert_ptr_nonnull (state);
    fasgd_rule_state_get (rule, state);
    float *theta = calloc (79510, sizeof (float));
    ck_assert_ptr_nonnull (theta);
    char dir [64] = "/tmp/fasgd-test-checkpoint-XXXXXX", path [128], err [512] = "";
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (path, sizeof path, "%s/ckpt", dir);
    ck_assert_int_eq (fasgd_checkpoint_write (path, &a, 5, theta, 79510, state, a.state_len, NULL, NULL, NULL, 0, err,
                                              sizeof err), 0);
    size_t len;
    unsigned char *image = s_slurp (path, &len);
    s_refused (NULL, image, len, &b, "784-96-30-30-10 into 784-100-10",
               "another model: tensor 1 is w0 784x96 in the checkpoint, w0 784x100 in the configuration");
    /*  The same shapes under other names (an external model's).  */
    fasgd_checkpoint_desc_t c = a;
    snprintf (c.tensors [3].name, sizeof c.tensors [3].name, "fc1.bias");
    s_refused (NULL, image, len, &c, "a renamed tensor", "tensor 4 is b1 1x30 in the checkpoint, fc1.bias 1x30");
    /*  One tensor more, of one parameter taken from the last: D agrees.  */
    fasgd_checkpoint_desc_t d = a;
    d.tensors [7].dims [1] = 9;
    snprintf (d.tensors [8].name, sizeof d.tensors [8].name, "extra");
    d.tensors [8].ndim = 1;
    d.tensors [8].dims [0] = 1;
    d.ntensors = 9;
    s_refused (NULL, image, len, &d, "another tensor", "tensor 8 is b3 1x10 in the checkpoint, b3 1x9");
    d.tensors [7].dims [1] = 10;
    d.tensors [8].dims [0] = 0;
    d.ntensors = 8;
    fasgd_checkpoint_t *ck = fasgd_checkpoint_parse (image, len, &d, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s", err);
    fasgd_checkpoint_destroy (&ck);
    /*  Higher-dimensional shapes are compared whole.  */
    fasgd_checkpoint_desc_t e = a;
    e.tensors [0].ndim = 3;
    e.tensors [0].dims [0] = 392;
    e.tensors [0].dims [1] = 2;
    e.tensors [0].dims [2] = 96;
    s_refused (NULL, image, len, &e, "a reshaped tensor", "w0 392x2x96 in the configuration");
    ck = fasgd_checkpoint_parse (image, len, &a, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s", err);
    fasgd_checkpoint_destroy (&ck);
    free (image);
    free (theta);
    free (state);
    fasgd_rule_destroy (&rule);
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq (system (cmd), 0);
}
END_TEST

START_TEST (test_another_rule_is_refused)
{
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *image = s_image (&f, 77, &len);
    /*  Another kind.  */
    fasgd_checkpoint_desc_t other = f.desc;
    other.rule = FASGD_RULE_SASGD;
    s_refused (&f, image, len, &other, "sasgd",
               "another rule: written by rule fasgd, the configuration's rule is sasgd");
    /*  fasgd with the abs statistic: the same kind, another state.  */
    fasgd_rule_t *abs = s_rule (FASGD_RULE_FASGD, FASGD_STAT_ABS, D);
    other = f.desc;
    other.state_len = fasgd_rule_state_size (abs);
    s_refused (&f, image, len, &other, "fasgd abs", "another rule: its fasgd state is");
    fasgd_rule_destroy (&abs);
    free (image);
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_hostile_headers_are_refused_before_allocating)
{
    /*  Lengths in a well-sealed header that no configuration has: refused
        from the header, whatever they ask for.  */
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *image = s_image (&f, 77, &len);
    struct { size_t at; uint64_t value; const char *cause; } cases [] = {
        { 24, UINT64_MAX, "malformed header" },                     /* D against the tensors */
        { 32, UINT64_MAX, "another rule: its fasgd state is 18446744073709551615 bytes" },
        { 32, 40, "another rule" },
        { 12, 4000000000u, "written by rule ?" },
        { 40 + 4, 0, "" },                                          /* a tensor's name: empty */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases [0]; k++) {
        unsigned char *copy = malloc (len);
        ck_assert_ptr_nonnull (copy);
        memcpy (copy, image, len);
        if (cases [k].at == 12)
            s_put_le32 (copy + 12, (uint32_t) cases [k].value);
        else if (cases [k].at == 44)
            memset (copy + 44, 0, 32);
        else
            for (int i = 0; i < 8; i++)
                copy [cases [k].at + i] = (unsigned char) (cases [k].value >> (8 * i));
        s_reseal (copy, len);
        s_refused (NULL, copy, len, &f.desc, "a hostile header", cases [k].cause);
        free (copy);
    }
    /*  A header length no tensor count gives, and one past the largest.  */
    unsigned char *copy = malloc (len);
    ck_assert_ptr_nonnull (copy);
    const uint32_t hlens [] = { 47, 48, 100, 48 + 65 * 104, UINT32_MAX };
    for (size_t k = 0; k < sizeof hlens / sizeof hlens [0]; k++) {
        memcpy (copy, image, len);
        s_put_le32 (copy + 8, hlens [k]);
        s_refused (NULL, copy, len, &f.desc, "an impossible header length", "corrupted: a header of");
    }
    free (copy);
    free (image);
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_old_format_and_strangers_are_refused)
{
    fixture_t f;
    s_fixture (&f);
    /*  FASGDCK1: magic, T, D, the state's length, the rule, θ, state.  */
    size_t len = 8 + 32 + 4 * D + f.state_len;
    unsigned char *old = calloc (1, len);
    ck_assert_ptr_nonnull (old);
    memcpy (old, "FASGDCK1", 8);
    uint64_t head [4] = { 7, D, f.state_len, FASGD_RULE_FASGD };
    memcpy (old + 8, head, sizeof head);
    memcpy (old + 40, f.theta, 4 * D);
    memcpy (old + 40 + 4 * D, f.state, f.state_len);
    s_refused (&f, old, len, &f.desc, "the old format",
               "a checkpoint of the old format FASGDCK1, which has neither a checksum nor a model description");
    s_refused (&f, (const unsigned char *) "\x1b[2J\x7f PNG\r\n and more", 20, &f.desc, "a stranger",
               "not a fasgd checkpoint: it starts with \"\\x1b[2J\\x7f PN\"");
    free (old);
    /*  Not a file at all.  */
    char err [256] = "";
    ck_assert_ptr_null (fasgd_checkpoint_read (f.dir, &f.desc, err, sizeof err));
    ck_assert_msg (strstr (err, "not a regular file") || strstr (err, "directory"), "%s", err);
    ck_assert_ptr_null (fasgd_checkpoint_read ("/nonexistent-fasgd-dir/ckpt", &f.desc, err, sizeof err));
    ck_assert_msg (strstr (err, "cannot open it: No such file"), "%s", err);
    ck_assert_ptr_null (fasgd_checkpoint_parse (NULL, 0, &f.desc, err, sizeof err));
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_write_does_not_follow_a_planted_link)
{
    fixture_t f;
    s_fixture (&f);
    char target [160];
    snprintf (target, sizeof target, "%s/precious", f.dir);
    fasgd_test_write_file (target, "precious\n", 9);
    ck_assert_int_eq (symlink (target, f.tmp), 0);
    size_t len;
    unsigned char *image = s_image (&f, 77, &len);
    size_t got;
    unsigned char *kept = s_slurp (target, &got);
    ck_assert_msg (got == 9 && memcmp (kept, "precious\n", 9) == 0, "the link's target was written");
    free (kept);
    struct stat st;
    ck_assert_int_eq (lstat (f.path, &st), 0);
    ck_assert (S_ISREG (st.st_mode));
    ck_assert_int_eq (lstat (f.tmp, &st), -1);
    /*  A stale temporary file of a crash is replaced too.  */
    fasgd_test_write_file (f.tmp, "half a checkpoint", 17);
    free (image);
    image = s_image (&f, 78, &len);
    char err [256] = "";
    fasgd_checkpoint_t *ck = fasgd_checkpoint_read (f.path, &f.desc, err, sizeof err);
    ck_assert_msg (ck != NULL && ck->T == 78, "%s", err);
    fasgd_checkpoint_destroy (&ck);
    free (image);
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_failed_write_keeps_the_previous_checkpoint)
{
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *good = s_image (&f, 77, &len);
    char err [512] = "";
    /*  Something at the temporary path that cannot be removed.  */
    ck_assert_int_eq (mkdir (f.tmp, 0755), 0);
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, 78, f.theta, D, f.state, f.state_len, NULL, NULL, NULL, 0,
                                              err, sizeof err), -1);
    ck_assert_msg (strstr (err, f.tmp) != NULL, "%s", err);
    s_assert_unchanged (f.path, good, len);
    ck_assert_int_eq (rmdir (f.tmp), 0);
    /*  A read-only folder (root writes there anyway: then not checked).  */
    if (geteuid () != 0) {
        ck_assert_int_eq (chmod (f.dir, 0555), 0);
        ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, 79, f.theta, D, f.state, f.state_len, NULL, NULL, NULL, 0,
                                                  err, sizeof err), -1);
        ck_assert_msg (strstr (err, "Permission denied") != NULL, "%s", err);
        ck_assert_int_eq (chmod (f.dir, 0755), 0);
        s_assert_unchanged (f.path, good, len);
    }
    /*  A folder that does not exist.  */
    ck_assert_int_eq (fasgd_checkpoint_write ("/nonexistent-fasgd-dir/ckpt", &f.desc, 78, f.theta, D, f.state,
                                              f.state_len, NULL, NULL, NULL, 0, err, sizeof err), -1);
    ck_assert_msg (!strcmp (err, "cannot write /nonexistent-fasgd-dir/ckpt.tmp: No such file or directory"),
                   "%s", err);
    /*  A description that does not add up, or does not fit θ.  */
    fasgd_checkpoint_desc_t bad = f.desc;
    bad.params++;
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &bad, 78, f.theta, D, f.state, f.state_len, NULL, NULL, NULL, 0,
                                              err, sizeof err), -1);
    ck_assert_msg (strstr (err, "the tensors hold 204 parameters, not 205"), "%s", err);
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, 78, f.theta, D - 1, f.state, f.state_len, NULL, NULL, NULL, 0,
                                              err, sizeof err), -1);
    s_assert_unchanged (f.path, good, len);
    free (good);
    s_fixture_end (&f);
}
END_TEST

/*  The image with the guard's state changed by change (which may leave
    it alone), resealed.  */
static unsigned char *
s_guard_image (const unsigned char *image, size_t len, void (*change) (fasgd_checkpoint_guard_t *g, unsigned char *at),
               fasgd_checkpoint_guard_t *g)
{
    unsigned char *copy = malloc (len);
    ck_assert_ptr_nonnull (copy);
    memcpy (copy, image, len);
    change (g, copy + len - 4 - S_CLOCK - S_LOSS - S_GUARD3);
    s_reseal (copy, len);
    return copy;
}

static void
s_put_le64 (unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

static double s_value;          /* what the next change writes */
static int s_slot;              /* where: a norm's index, or 1024 + a reference's */

static void
s_set_value (fasgd_checkpoint_guard_t *g, unsigned char *at)
{
    (void) g;
    uint64_t bits;
    memcpy (&bits, &s_value, 8);
    s_put_le64 (at + 8 + 8 * (size_t) s_slot, bits);
}

static void
s_set_counts (fasgd_checkpoint_guard_t *g, unsigned char *at)
{
    s_put_le32 (at, g->nnorms);
    s_put_le32 (at + 4, g->nrefs);
}

/*  s_set_bytes's change: s_nbytes bytes of s_bytes at s_at within
    FASGDCK4's part after FASGDCK3's guard state.  */
static size_t s_at, s_nbytes;
static unsigned char s_bytes [8];

static void
s_set_bytes (fasgd_checkpoint_guard_t *g, unsigned char *at)
{
    (void) g;
    memcpy (at + S_GUARD3 + s_at, s_bytes, s_nbytes);
}

START_TEST (test_guard_state_checked)
{
    /*  The guard's state under a correct checksum: counts past its
        arrays, a norm NaN, infinite, negative or beyond 1e18, a value
        where the counts say none is: each refused with what it is.  */
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *image = s_image (&f, 77, &len);
    fasgd_checkpoint_guard_t g = f.guard;
    struct { uint32_t nnorms, nrefs; const char *cause; } counts [] = {
        { 1025, 3, "the guard's state holds 1025 norms, at most 1024" },
        { UINT32_MAX, 3, "holds 4294967295 norms" },
        { 300, 5, "holds 5 reference norms, at most 4" },
        { 299, 3, "norm 300 of 299 is" },           /* a value past the count */
    };
    for (size_t k = 0; k < sizeof counts / sizeof counts [0]; k++) {
        g.nnorms = counts [k].nnorms;
        g.nrefs = counts [k].nrefs;
        unsigned char *copy = s_guard_image (image, len, s_set_counts, &g);
        s_refused (&f, copy, len, &f.desc, counts [k].cause, counts [k].cause);
        free (copy);
    }
    struct { int slot; double value; const char *cause; } values [] = {
        { 7, NAN, "norm 8 of 300 is nan, not a norm" },
        { 7, INFINITY, "norm 8 of 300 is inf" },
        { 0, -1, "norm 1 of 300 is -1, not a norm" },
        { 299, 1e19, "norm 300 of 300 is 1e+19" },
        { 1024 + 2, -INFINITY, "reference norm 3 of 3 is -inf" },
        { 1024 + 3, 1.0, "reference norm 4 of 3 is 1, where nothing should be" },
        { 1000, 2.0, "norm 1001 of 300 is 2, where nothing should be" },
    };
    for (size_t k = 0; k < sizeof values / sizeof values [0]; k++) {
        s_slot = values [k].slot;
        s_value = values [k].value;
        unsigned char *copy = s_guard_image (image, len, s_set_value, &g);
        s_refused (&f, copy, len, &f.desc, values [k].cause, values [k].cause);
        free (copy);
    }
    /*  0 and 1e18 are norms.  */
    s_slot = 3;
    s_value = 0;
    unsigned char *copy = s_guard_image (image, len, s_set_value, &g);
    char err [256] = "";
    fasgd_checkpoint_t *ck = fasgd_checkpoint_parse (copy, len, &f.desc, err, sizeof err);
    ck_assert_msg (ck && ck->guard.norms [3] == 0, "%s", err);
    fasgd_checkpoint_destroy (&ck);
    free (copy);
    /*  The keys' records and the loss check's state: counts, flags,
        reserved bytes, a key that is not Z85, records that are not
        finite or not possible, a slot past the count, a saved θ not
        finite or present where the flags say none is.  */
    double nan = NAN, minus = -1;
    float fnan = NAN;
    struct { size_t at; const void *bytes; size_t n; const char *cause; } q [] = {
        { 0, "\x01\x04\0\0", 4, "holds 1025 keys, at most 1024" },
        { 4, "\x02\0\0\0", 4, "its flags are 2" },
        { 8, "\x41\0\0\0", 4, "counts 65 rollbacks in a row, at most 64" },
        { 12, "\x01\0\0\0", 4, "bytes that must be zero are not" },
        { 16 + 40, "\x01", 1, "bytes that must be zero are not" },
        { 16 + 3, "\"", 1, "key 1 is not 40 Z85 characters" },
        { 16 + 88 + 39, "\0", 1, "key 2 is not 40 Z85 characters" },
        { 16 + 48, &nan, 8, "key 1's record is impossible (rise nan" },
        { 16 + 88 + 72, &minus, 8, "key 2's record is impossible" },
        { 16 + 2 * 88 + 80, &minus, 8, "key slot 3 of 2 is not empty" },
        { 16 + 88 * 1024 + 4 * 7, &fnan, 4, "saved parameters are not finite" },
        { 4, "\0\0\0\0", 4, "not zero where none is saved" },
    };
    for (size_t k = 0; k < sizeof q / sizeof q [0]; k++) {
        s_at = q [k].at;
        s_nbytes = q [k].n;
        memcpy (s_bytes, q [k].bytes, q [k].n);
        copy = s_guard_image (image, len, s_set_bytes, &g);
        s_refused (&f, copy, len, &f.desc, q [k].cause, q [k].cause);
        free (copy);
    }
    /*  The writer refuses a state the reader would, and keeps the
        checkpoint there.  */
    fasgd_test_write_file (f.path, image, len);
    g = f.guard;
    g.norms [5] = NAN;
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, 78, f.theta, D, f.state, f.state_len, &g, NULL, NULL, 0,
                                              err, sizeof err), -1);
    ck_assert_msg (strstr (err, "not writing") && strstr (err, "norm 6 of 300 is nan"), "%s", err);
    s_assert_unchanged (f.path, image, len);
    free (image);
    s_fixture_end (&f);
}
END_TEST

/*  copy, a copy of image, with the staleness clock's sum i set to v,
    resealed.  */
static void
s_set_sum (unsigned char *copy, const unsigned char *image, size_t len, size_t i, double v)
{
    memcpy (copy, image, len);
    uint64_t bits;
    memcpy (&bits, &v, 8);
    s_put_le64 (copy + len - 4 - S_CLOCK + 8 + 8 * i, bits);
    s_reseal (copy, len);
}

START_TEST (test_clock_checked)
{
    /*  The staleness clock under a correct checksum: a sum not finite or
        negative, one below the one before or more than one above it, the
        last above T, more sums than timestamps, a count past the window
        or the file's length, the word that must be zero: each refused
        with what it is. The writer refuses what the reader would, and a
        whole window is written and read back.  */
    fixture_t f;
    s_fixture (&f);
    size_t len;
    unsigned char *image = s_image (&f, 77, &len);
    unsigned char *copy = malloc (len);
    ck_assert_ptr_nonnull (copy);
    struct { size_t i; double v; const char *cause; } sums [] = {
        { 0, NAN, "the staleness clock: running sum 1 of 40 is nan, not a sum of counts" },
        { 3, INFINITY, "running sum 4 of 40 is inf, not" },
        { 0, -0.5, "running sum 1 of 40 is -0.5, not" },
        { 10, 0, "running sum 11 of 40 is 0 after" },
        { 39, 1e6, "running sum 40 of 40 is 1000000 after" },
    };
    for (size_t k = 0; k < sizeof sums / sizeof sums [0]; k++) {
        s_set_sum (copy, image, len, sums [k].i, sums [k].v);
        s_refused (&f, copy, len, &f.desc, sums [k].cause, sums [k].cause);
    }
    /*  Every sum 60 more: the last is more than T = 77 updates count.  */
    memcpy (copy, image, len);
    for (size_t i = 0; i < 40; i++) {
        uint64_t bits;
        double v = f.clock [i] + 60;
        memcpy (&bits, &v, 8);
        s_put_le64 (copy + len - 4 - S_CLOCK + 8 + 8 * i, bits);
    }
    s_reseal (copy, len);
    s_refused (&f, copy, len, &f.desc, "above T", "its last running sum is 79.");
    /*  At T = 38, 40 sums are more than the timestamps 0 to 38.  */
    memcpy (copy, image, len);
    copy [16] = 38;
    s_reseal (copy, len);
    s_refused (&f, copy, len, &f.desc, "more sums than timestamps", "holds 40 running sums at T=38");
    memcpy (copy, image, len);
    copy [16] = 39;
    s_reseal (copy, len);
    char err [256] = "";
    fasgd_checkpoint_t *ck = fasgd_checkpoint_parse (copy, len, &f.desc, err, sizeof err);
    ck_assert_msg (ck != NULL && ck->nclock == 40, "%s", err);
    fasgd_checkpoint_destroy (&ck);
    /*  The count: past the window, or not the file's length.  */
    struct { uint32_t count; const char *cause; } counts [] = {
        { 65537, "corrupted: its staleness clock announces 65537 running sums, at most 65536" },
        { UINT32_MAX, "announces 4294967295 running sums" },
        { 41, "truncated: " },
        { 39, "8 trailing bytes after the" },
        { 0, "320 trailing bytes" },
    };
    for (size_t k = 0; k < sizeof counts / sizeof counts [0]; k++) {
        memcpy (copy, image, len);
        s_put_le32 (copy + len - 4 - S_CLOCK, counts [k].count);
        s_reseal (copy, len);
        s_refused (&f, copy, len, &f.desc, counts [k].cause, counts [k].cause);
    }
    memcpy (copy, image, len);
    s_put_le32 (copy + len - 4 - S_CLOCK + 4, 1);
    s_reseal (copy, len);
    s_refused (&f, copy, len, &f.desc, "the zero word", "the staleness clock: bytes that must be zero are not");
    free (copy);
    /*  The writer: a NaN, more sums than timestamps, more than the
        window; the checkpoint there stays.  */
    fasgd_test_write_file (f.path, image, len);
    double keep = f.clock [5];
    f.clock [5] = NAN;
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, 78, f.theta, D, f.state, f.state_len, NULL, NULL,
                                              f.clock, f.nclock, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "not writing") && strstr (err, "running sum 6 of 40 is nan"), "%s", err);
    f.clock [5] = keep;
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, 20, f.theta, D, f.state, f.state_len, NULL, NULL,
                                              f.clock, f.nclock, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "holds 40 running sums at T=20"), "%s", err);
    s_assert_unchanged (f.path, image, len);
    free (image);
    /*  A whole window, each update counting one, at the T where the
        sums are all the timestamps there are: written and read back,
        8 + 8·65,536 bytes more than none; one more sum is refused.  */
    size_t n = FASGD_CHECKPOINT_CLOCK_SUMS;
    double *w = malloc ((n + 1) * sizeof *w);
    ck_assert_ptr_nonnull (w);
    for (size_t i = 0; i <= n; i++)
        w [i] = (double) i;
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, n - 1, f.theta, D, f.state, f.state_len, NULL, NULL,
                                              w, n, err, sizeof err), 0);
    image = s_slurp (f.path, &len);
    ck_assert_uint_eq (len, 48 + 4 * 104 + 4 * D + f.state_len + S_GUARD3 + S_LOSS + 8 + 8 * n + 4);
    ck = fasgd_checkpoint_read (f.path, &f.desc, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s", err);
    ck_assert_uint_eq (ck->nclock, n);
    ck_assert_int_eq (memcmp (ck->clock, w, n * sizeof *w), 0);
    fasgd_checkpoint_destroy (&ck);
    image [len - 4 - 8 * 1000] ^= 4;
    s_refused (NULL, image, len, &f.desc, "a flipped bit in a sum", "corrupted");
    free (image);
    ck_assert_int_eq (fasgd_checkpoint_write (f.path, &f.desc, n, f.theta, D, f.state, f.state_len, NULL, NULL,
                                              w, n + 1, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "holds 65537 running sums, at most 65536"), "%s", err);
    free (w);
    s_fixture_end (&f);
}
END_TEST

START_TEST (test_format_before_is_read_without_guard_state)
{
    /*  A FASGDCK4 file (FASGDCK5 without the staleness clock) is read,
        and says it holds no clock; a FASGDCK3 file (FASGDCK4 without the
        keys' records and the saved θ) is read, and says it holds
        neither; so is a FASGDCK2 file (without the guard's state either).
        A format's magic at the length of the one before it or after it
        is refused (s_older).  */
    fixture_t f;
    s_fixture (&f);
    size_t len5;
    unsigned char *image = s_image (&f, 77, &len5);
    size_t len4 = len5 - S_CLOCK;
    fasgd_checkpoint_t *ck4 = s_older (&f, image, len5, len4, "FASGDCK5", "FASGDCK4", "truncated",
                                       "328 trailing bytes");
    ck_assert_int_eq (ck4->has_keys, 1);
    ck_assert_int_eq (ck4->has_clock, 0);
    ck_assert_uint_eq (ck4->nclock, 0);
    ck_assert_ptr_null (ck4->clock);
    ck_assert_int_eq (memcmp (&ck4->guard, &f.guard, sizeof f.guard), 0);
    ck_assert_int_eq (memcmp (ck4->saved, f.saved, sizeof f.saved), 0);
    fasgd_checkpoint_destroy (&ck4);
    size_t len3 = len4 - S_LOSS;
    fasgd_checkpoint_t *ck3 = s_older (&f, image, len4, len3, "FASGDCK4", "FASGDCK3", "truncated",
                                       "trailing bytes");
    ck_assert_int_eq (ck3->has_guard, 1);
    ck_assert_int_eq (ck3->has_keys, 0);
    ck_assert_ptr_null (ck3->saved);
    ck_assert_uint_eq (ck3->guard.nkeys, 0);
    ck_assert_uint_eq (ck3->guard.nnorms, 300);
    ck_assert_int_eq (memcmp (ck3->theta, f.theta, sizeof f.theta), 0);
    fasgd_checkpoint_destroy (&ck3);
    fasgd_checkpoint_t *ck = s_older (&f, image, len3, len3 - 8232, "FASGDCK3", "FASGDCK2", "truncated",
                                      "8232 trailing bytes");
    ck_assert_int_eq (ck->has_guard, 0);
    ck_assert_uint_eq (ck->T, 77);
    ck_assert_int_eq (memcmp (ck->theta, f.theta, sizeof f.theta), 0);
    ck_assert_int_eq (memcmp (ck->state, f.state, f.state_len), 0);
    fasgd_checkpoint_destroy (&ck);
    free (image);
    s_fixture_end (&f);
}
END_TEST

static Suite *
checkpoint_suite (void)
{
    Suite *s = suite_create ("checkpoint");
    TCase *tc = tcase_create ("file");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_round_trip);
    tcase_add_test (tc, test_every_bit_flip_is_refused);
    tcase_add_test (tc, test_every_cut_and_trailing_bytes_are_refused);
    tcase_add_test (tc, test_non_finite_values_are_refused);
    tcase_add_test (tc, test_impossible_timestamp_is_refused);
    tcase_add_test (tc, test_another_model_is_refused);
    tcase_add_test (tc, test_another_rule_is_refused);
    tcase_add_test (tc, test_hostile_headers_are_refused_before_allocating);
    tcase_add_test (tc, test_old_format_and_strangers_are_refused);
    tcase_add_test (tc, test_write_does_not_follow_a_planted_link);
    tcase_add_test (tc, test_failed_write_keeps_the_previous_checkpoint);
    tcase_add_test (tc, test_guard_state_checked);
    tcase_add_test (tc, test_clock_checked);
    tcase_add_test (tc, test_format_before_is_read_without_guard_state);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (checkpoint_suite)
