/*  data: the IDX loader on small generated files (plain and gzip, every
    malformed-file class and its message), dataset slicing, gathering and
    shuffling, the batcher's orders, and the real MNIST and Fashion-MNIST
    files when they are present.  */
#define _GNU_SOURCE     /* nftw */
#include "data.h"
#include "rng.h"
#include "testutil.h"

#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/*  Every test works in its own mkdtemp directory below this one; the
    unchecked fixture runs in the parent process, so it removes the lot
    even when a forked test dies half-way.  */
static char s_root [64];

static int
s_rm_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st; (void) flag; (void) ftw;
    return remove (path);
}

static void
s_rmtree (const char *path)
{
    if (path [0])
        nftw (path, s_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void
s_root_setup (void)
{
    snprintf (s_root, sizeof s_root, "/tmp/fasgd-test-data-XXXXXX");
    if (!mkdtemp (s_root))
        s_root [0] = '\0';
}

static void
s_root_teardown (void)
{
    s_rmtree (s_root);
    s_root [0] = '\0';
}

/*  A fresh directory for one test, removed by s_tmp_end.  */
static void
s_tmp_begin (char *dir, size_t len)
{
    ck_assert_msg (s_root [0], "could not create a directory under /tmp");
    snprintf (dir, len, "%s/t-XXXXXX", s_root);
    ck_assert_ptr_nonnull (mkdtemp (dir));
}

static void
s_tmp_end (const char *dir)
{
    s_rmtree (dir);
    struct stat st;
    ck_assert_int_ne (stat (dir, &st), 0);
}

static const char *
s_path (char *buf, size_t len, const char *dir, const char *name)
{
    snprintf (buf, len, "%s/%s", dir, name);
    return buf;
}

/*  Writes len bytes to path, through gzip when gz is set.  */
static void
s_write (const char *path, const void *data, size_t len, int gz)
{
    if (gz) {
        gzFile f = gzopen (path, "wb");
        ck_assert_ptr_nonnull (f);
        if (len)
            ck_assert_int_eq (gzwrite (f, data, (unsigned) len), (int) len);
        ck_assert_int_eq (gzclose (f), Z_OK);
    }
    else {
        FILE *f = fopen (path, "wb");
        ck_assert_ptr_nonnull (f);
        if (len)
            ck_assert_uint_eq (fwrite (data, 1, len, f), len);
        ck_assert_int_eq (fclose (f), 0);
    }
}

static uint8_t *
s_slurp (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    ck_assert_ptr_nonnull (f);
    ck_assert_int_eq (fseek (f, 0, SEEK_END), 0);
    long size = ftell (f);
    ck_assert_int_ge (size, 0);
    rewind (f);
    uint8_t *buf = malloc ((size_t) size + 1);
    ck_assert_ptr_nonnull (buf);
    ck_assert_uint_eq (fread (buf, 1, (size_t) size, f), (size_t) size);
    fclose (f);
    *len = (size_t) size;
    return buf;
}

static void
s_put32 (uint8_t *p, uint32_t v)
{
    p [0] = (uint8_t) (v >> 24);
    p [1] = (uint8_t) (v >> 16);
    p [2] = (uint8_t) (v >> 8);
    p [3] = (uint8_t) v;
}

/*  An IDX file image: magic, ndims sizes, then plen payload bytes (or
    zeros when payload is NULL). Caller frees.  */
static uint8_t *
s_idx (uint32_t magic, const uint32_t *dims, int ndims,
       const uint8_t *payload, size_t plen, size_t *len)
{
    size_t header = 4 + 4 * (size_t) ndims;
    uint8_t *buf = calloc (1, header + plen + 1);
    ck_assert_ptr_nonnull (buf);
    s_put32 (buf, magic);
    for (int i = 0; i < ndims; i++)
        s_put32 (buf + 4 + 4 * i, dims [i]);
    if (payload && plen)
        memcpy (buf + header, payload, plen);
    *len = header + plen;
    return buf;
}

/*  The generated sets: pixel k of image i, and label i.  */
static uint8_t
s_pixel (uint32_t i, uint32_t k)
{
    return (uint8_t) ((i * 61 + k * 17 + 5) & 0xff);
}

static uint8_t
s_label (uint32_t i)
{
    return (uint8_t) (i % 4);
}

static void
s_write_images (const char *path, uint32_t n, uint32_t rows, uint32_t cols, int gz)
{
    uint32_t dim = rows * cols;
    uint8_t *px = malloc ((size_t) n * dim);
    ck_assert_ptr_nonnull (px);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < dim; k++)
            px [(size_t) i * dim + k] = s_pixel (i, k);
    uint32_t dims [3] = { n, rows, cols };
    size_t len;
    uint8_t *buf = s_idx (0x00000803, dims, 3, px, (size_t) n * dim, &len);
    s_write (path, buf, len, gz);
    free (buf);
    free (px);
}

static void
s_write_labels (const char *path, uint32_t n, int gz)
{
    uint8_t *lab = malloc (n);
    ck_assert_ptr_nonnull (lab);
    for (uint32_t i = 0; i < n; i++)
        lab [i] = s_label (i);
    size_t len;
    uint8_t *buf = s_idx (0x00000801, &n, 1, lab, n, &len);
    s_write (path, buf, len, gz);
    free (buf);
    free (lab);
}

/*  Checks that ds holds the first n generated examples of rows x cols.  */
static void
s_check_generated (const fasgd_dataset_t *ds, uint32_t n, uint32_t rows, uint32_t cols)
{
    ck_assert_ptr_nonnull (ds);
    ck_assert_uint_eq (ds->n, n);
    ck_assert_uint_eq (ds->rows, rows);
    ck_assert_uint_eq (ds->cols, cols);
    ck_assert_uint_eq (ds->dim, rows * cols);
    for (uint32_t i = 0; i < n; i++) {
        ck_assert_uint_eq (ds->y [i], s_label (i));
        for (uint32_t k = 0; k < ds->dim; k++) {
            float v = ds->x [(size_t) i * ds->dim + k];
            ck_assert (v >= 0.0f && v <= 1.0f);
            ck_assert (v == (float) s_pixel (i, k) / 255.0f);
        }
    }
}

/*  Loads and expects failure, with every needle in the message.  */
static void
s_expect_fail (const char *images, const char *labels, const char *needle1,
               const char *needle2)
{
    char err [512] = "untouched";
    fasgd_dataset_t *ds = fasgd_dataset_load_idx (images, labels, 0, err, sizeof err);
    ck_assert_ptr_null (ds);
    ck_assert_msg (strchr (err, '\n') == NULL, "message spans lines: %s", err);
    ck_assert_msg (strstr (err, needle1), "'%s' not in '%s'", needle1, err);
    if (needle2)
        ck_assert_msg (strstr (err, needle2), "'%s' not in '%s'", needle2, err);
}

START_TEST (test_load_plain)
{
    char dir [128], im [256], lb [256], err [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_images (s_path (im, sizeof im, dir, "im"), 5, 3, 4, 0);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb"), 5, 0);
    fasgd_dataset_t *ds = fasgd_dataset_load_idx (im, lb, 0, err, sizeof err);
    ck_assert_msg (ds, "%s", err);
    s_check_generated (ds, 5, 3, 4);
    ck_assert_uint_eq (ds->nclasses, 4);
    fasgd_dataset_destroy (&ds);
    ck_assert_ptr_null (ds);
    fasgd_dataset_destroy (&ds);
    fasgd_dataset_destroy (NULL);
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_pixel_scaling)
{
    char dir [128], im [256], lb [256], err [256];
    s_tmp_begin (dir, sizeof dir);
    const uint8_t px [] = { 0, 255, 128, 51, 1, 254 };
    const uint8_t lab [] = { 9 };
    uint32_t dims [3] = { 1, 2, 3 }, nl = 1;
    size_t len;
    uint8_t *buf = s_idx (0x803, dims, 3, px, sizeof px, &len);
    s_write (s_path (im, sizeof im, dir, "im"), buf, len, 0);
    free (buf);
    buf = s_idx (0x801, &nl, 1, lab, 1, &len);
    s_write (s_path (lb, sizeof lb, dir, "lb"), buf, len, 0);
    free (buf);
    fasgd_dataset_t *ds = fasgd_dataset_load_idx (im, lb, 0, err, sizeof err);
    ck_assert_msg (ds, "%s", err);
    ck_assert_uint_eq (ds->rows, 2);
    ck_assert_uint_eq (ds->cols, 3);
    ck_assert (ds->x [0] == 0.0f);
    ck_assert (ds->x [1] == 1.0f);
    ck_assert_float_eq_tol (ds->x [2], 128.0f / 255.0f, 1e-7f);
    ck_assert_float_eq_tol (ds->x [3], 0.2f, 1e-7f);
    ck_assert_float_eq_tol (ds->x [4], 1.0f / 255.0f, 1e-9f);
    ck_assert (ds->x [5] < 1.0f);
    ck_assert_uint_eq (ds->y [0], 9);
    ck_assert_uint_eq (ds->nclasses, 10);
    fasgd_dataset_destroy (&ds);
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_load_gzip)
{
    char dir [128], im [256], lb [256], imz [256], lbz [256], err [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_images (s_path (im, sizeof im, dir, "im"), 7, 5, 2, 0);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb"), 7, 0);
    s_write_images (s_path (imz, sizeof imz, dir, "im.gz"), 7, 5, 2, 1);
    s_write_labels (s_path (lbz, sizeof lbz, dir, "lb.gz"), 7, 1);
    /*  Really compressed: the gzip magic, not the IDX one.  */
    size_t len;
    uint8_t *raw = s_slurp (imz, &len);
    ck_assert_uint_eq (raw [0], 0x1f);
    ck_assert_uint_eq (raw [1], 0x8b);
    free (raw);
    const char *pairs [3][2] = { { imz, lbz }, { imz, lb }, { im, lbz } };
    for (int p = 0; p < 3; p++) {
        fasgd_dataset_t *ds = fasgd_dataset_load_idx (pairs [p][0], pairs [p][1],
                                                      0, err, sizeof err);
        ck_assert_msg (ds, "%s", err);
        s_check_generated (ds, 7, 5, 2);
        ck_assert_uint_eq (ds->nclasses, 4);
        fasgd_dataset_destroy (&ds);
    }
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_max_examples)
{
    char dir [128], im [256], lb [256], err [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_images (s_path (im, sizeof im, dir, "im.gz"), 9, 4, 4, 1);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb.gz"), 9, 1);
    fasgd_dataset_t *ds = fasgd_dataset_load_idx (im, lb, 3, err, sizeof err);
    ck_assert_msg (ds, "%s", err);
    s_check_generated (ds, 3, 4, 4);
    /*  Labels 0..2 loaded, but the file's classes are 0..3.  */
    ck_assert_uint_eq (ds->nclasses, 4);
    fasgd_dataset_destroy (&ds);
    const uint32_t all [] = { 0, 9, 10, UINT32_MAX };
    for (size_t i = 0; i < sizeof all / sizeof all [0]; i++) {
        ds = fasgd_dataset_load_idx (im, lb, all [i], err, sizeof err);
        ck_assert_msg (ds, "%s", err);
        s_check_generated (ds, 9, 4, 4);
        fasgd_dataset_destroy (&ds);
    }
    ds = fasgd_dataset_load_idx (im, lb, 1, err, sizeof err);
    s_check_generated (ds, 1, 4, 4);
    fasgd_dataset_destroy (&ds);
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_load_dir)
{
    char dir [128], sub [256], p [320], err [512];
    s_tmp_begin (dir, sizeof dir);
    /*  Every spelling: dash or dot, plain or .gz.  */
    const char *spell [4][2] = {
        { "train-images-idx3-ubyte",    "train-labels-idx1-ubyte"    },
        { "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz" },
        { "train-images.idx3-ubyte",    "train-labels.idx1-ubyte"    },
        { "train-images.idx3-ubyte.gz", "train-labels.idx1-ubyte.gz" },
    };
    for (int s = 0; s < 4; s++) {
        snprintf (sub, sizeof sub, "%s/s%d", dir, s);
        ck_assert_int_eq (mkdir (sub, 0700), 0);
        int gz = strstr (spell [s][0], ".gz") != NULL;
        s_write_images (s_path (p, sizeof p, sub, spell [s][0]), 6, 2, 3, gz);
        s_write_labels (s_path (p, sizeof p, sub, spell [s][1]), 6, gz);
        fasgd_dataset_t *ds = fasgd_dataset_load_dir (sub, "train", 0, err, sizeof err);
        ck_assert_msg (ds, "%s: %s", spell [s][0], err);
        s_check_generated (ds, 6, 2, 3);
        fasgd_dataset_destroy (&ds);
        ds = fasgd_dataset_load_dir (sub, "train", 2, err, sizeof err);
        s_check_generated (ds, 2, 2, 3);
        fasgd_dataset_destroy (&ds);

        /*  The other prefix is absent: the message lists what was tried.  */
        ck_assert_ptr_null (fasgd_dataset_load_dir (sub, "t10k", 0, err, sizeof err));
        ck_assert_msg (strstr (err, sub), "%s", err);
        ck_assert_msg (strstr (err, "t10k-images-idx3-ubyte[.gz]"), "%s", err);
        ck_assert_msg (strstr (err, "t10k-images.idx3-ubyte[.gz]"), "%s", err);
    }
    /*  Mixed spellings in one directory, t10k prefix.  */
    snprintf (sub, sizeof sub, "%s/mixed", dir);
    ck_assert_int_eq (mkdir (sub, 0700), 0);
    s_write_images (s_path (p, sizeof p, sub, "t10k-images.idx3-ubyte.gz"), 4, 3, 3, 1);
    ck_assert_ptr_null (fasgd_dataset_load_dir (sub, "t10k", 0, err, sizeof err));
    ck_assert_msg (strstr (err, "no t10k labels file"), "%s", err);
    s_write_labels (s_path (p, sizeof p, sub, "t10k-labels-idx1-ubyte"), 4, 0);
    fasgd_dataset_t *ds = fasgd_dataset_load_dir (sub, "t10k", 0, err, sizeof err);
    ck_assert_msg (ds, "%s", err);
    s_check_generated (ds, 4, 3, 3);
    fasgd_dataset_destroy (&ds);

    s_path (p, sizeof p, dir, "absent");
    ck_assert_ptr_null (fasgd_dataset_load_dir (p, "train", 0, err, sizeof err));
    ck_assert_msg (strstr (err, "no train images file"), "%s", err);
    ck_assert_ptr_null (fasgd_dataset_load_dir (NULL, "train", 0, err, sizeof err));
    ck_assert_uint_gt (strlen (err), 0);
    /*  A relative folder is named with the absolute path looked at and
        the working directory.  */
    char cwd [4096], want [4096 + 64];
    ck_assert_ptr_nonnull (getcwd (cwd, sizeof cwd));
    ck_assert_int_eq (chdir (dir), 0);
    ck_assert_ptr_null (fasgd_dataset_load_dir ("absent", "train", 0, err, sizeof err));
    snprintf (want, sizeof want, "absent (%s/absent: relative to the working directory %s): no train images file",
              dir, dir);
    ck_assert_msg (strstr (err, want), "%s", err);
    ck_assert_int_eq (chdir (cwd), 0);
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_err_missing_and_unreadable)
{
    char dir [128], im [256], lb [256], nope [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_images (s_path (im, sizeof im, dir, "im"), 2, 2, 2, 0);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb"), 2, 0);
    s_path (nope, sizeof nope, dir, "nope");
    s_expect_fail (nope, lb, nope, "No such file");
    s_expect_fail (im, nope, nope, "cannot open");
    s_expect_fail (dir, lb, dir, "is a directory");
    s_expect_fail (im, NULL, "no label file", NULL);
    if (geteuid () != 0) {
        /*  root reads mode-000 files, so only an ordinary user can see
            this one.  */
        ck_assert_int_eq (chmod (im, 0), 0);
        s_expect_fail (im, lb, im, "Permission denied");
    }
    /*  No buffer, or a tiny one: no crash, and a tiny one stays
        terminated.  */
    ck_assert_ptr_null (fasgd_dataset_load_idx (nope, lb, 0, NULL, 0));
    char small [8];
    memset (small, 'x', sizeof small);
    ck_assert_ptr_null (fasgd_dataset_load_idx (nope, lb, 0, small, sizeof small));
    ck_assert_uint_eq (strlen (small), sizeof small - 1);
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_err_empty_and_short)
{
    char dir [128], lb [256], p [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb"), 2, 0);
    s_write (s_path (p, sizeof p, dir, "empty"), "", 0, 0);
    s_expect_fail (p, lb, p, "empty file");
    s_write (s_path (p, sizeof p, dir, "empty.gz"), "", 0, 1);
    s_expect_fail (p, lb, p, "empty file");
    s_write (s_path (p, sizeof p, dir, "three"), "\0\0\x08", 3, 0);
    s_expect_fail (p, lb, "too short for an IDX header (3 bytes)", NULL);
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_err_magic_and_dims)
{
    char dir [128], im [256], lb [256], p [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_images (s_path (im, sizeof im, dir, "im"), 2, 2, 2, 0);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb"), 2, 0);
    s_write (s_path (p, sizeof p, dir, "text"), "hello, world\n", 13, 0);
    s_expect_fail (p, lb, "wrong magic", "found 0x68656c6c");
    s_write (s_path (p, sizeof p, dir, "text.gz"), "hello, world\n", 13, 1);
    s_expect_fail (im, p, "expected 0x00000801", "found 0x68656c6c");
    /*  Images and labels swapped.  */
    s_expect_fail (lb, im, "wrong dimension count: expected 3", "found 1 (magic 0x00000801) (a label file?)");
    s_expect_fail (im, im, "wrong dimension count: expected 1", "found 3 (magic 0x00000803) (an image file?)");
    s_tmp_end (dir);
}
END_TEST

/*  Malformed IDX headers and sizes, each refused with a message. A row:
    whether the bad file is the labels' (else the images'), its header
    (magic, dimensions), the payload bytes after the header, how many of
    the file's bytes are written (0: all) and whether gzipped; the other
    file holds `other` labels, or `other` 2x2 images. The message holds both
    needles; a NULL first needle stands for the bad file's path.  */
typedef struct {
    bool labels;
    uint32_t magic, dims [3];
    int ndims;
    size_t payload, cut;
    int gz;
    uint32_t other;
    const char *needle1, *needle2;
} s_idx_case_t;

static const s_idx_case_t s_idx_cases [] = {
    /*  Magic fine, sizes cut off.  */
    { false, 0x803, { 1, 2, 2 }, 3, 0, 10, 0, 2, "truncated header: 10 bytes", "needs 16" },
    /*  Signed-int pixels (type 0x0c) are valid IDX, not what we read.  */
    { false, 0xc03, { 2, 2, 2 }, 3, 32, 0, 0, 2, "expected 0x00000803", "found 0x00000c03" },
    /*  A 2-dimensional ubyte file is neither images nor labels.  */
    { false, 0x802, { 2, 2 }, 2, 4, 0, 0, 2,
      "expected 3 (magic 0x00000803), found 2 (magic 0x00000802)", NULL },
    /*  Image sizes out of 1..4096, and no images or labels at all.  */
    { false, 0x803, { 2, 0, 28 }, 3, 8, 0, 0, 2, "bad image size 0x28", "1..4096" },
    { false, 0x803, { 2, 28, 0 }, 3, 8, 0, 0, 2, "bad image size 28x0", "1..4096" },
    { false, 0x803, { 2, 4097, 1 }, 3, 8, 0, 0, 2, "bad image size 4097x1", "1..4096" },
    { false, 0x803, { 2, 1, 100000 }, 3, 8, 0, 0, 2, "bad image size 1x100000", "1..4096" },
    { false, 0x803, { 0, 28, 28 }, 3, 0, 0, 0, 2, NULL, "header says 0 images" },
    { true, 0x801, { 0 }, 1, 0, 0, 0, 2, NULL, "header says 0 labels" },
    /*  Images cut short, or one byte too many, plain and gzipped.  */
    { false, 0x803, { 10, 28, 28 }, 3, 10 * 784, 7000, 0, 10,
      "truncated: header says 10 images of 28x28 (7856 bytes), file has 7000", NULL },
    { false, 0x803, { 10, 28, 28 }, 3, 10 * 784, 7000, 1, 10,
      "header says 10 images of 28x28 (7856 bytes), file has 7000 decompressed", NULL },
    { false, 0x803, { 10, 28, 28 }, 3, 10 * 784 + 1, 0, 0, 10,
      "trailing garbage: header says 10 images of 28x28 (7856 bytes), file has 7857", NULL },
    /*  A lying header: 2^32 - 1 images of 4096x4096 in a few bytes must be
        a message, not a 72-exabyte allocation.  */
    { false, 0x803, { UINT32_MAX, 4096, 4096 }, 3, 100, 0, 0, 2,
      "truncated: header says 4294967295 images of 4096x4096 (72057594021150736 bytes)", "file has 116" },
    /*  Labels: short and long.  */
    { true, 0x801, { 5 }, 1, 6, 12, 0, 5, "truncated: header says 5 labels (13 bytes), file has 12", NULL },
    { true, 0x801, { 5 }, 1, 6, 0, 0, 5, "trailing garbage: header says 5 labels (13 bytes), file has 14", NULL },
    { true, 0x801, { 5 }, 1, 6, 0, 1, 5,
      "trailing garbage: header says 5 labels (13 bytes), file has 14 decompressed", NULL },
};
#define S_IDX_CASES ((int) (sizeof s_idx_cases / sizeof s_idx_cases [0]))

START_TEST (test_err_idx)
{
    const s_idx_case_t *k = &s_idx_cases [_i];
    char dir [128], bad [256], other [256];
    s_tmp_begin (dir, sizeof dir);
    size_t len;
    uint8_t *buf = s_idx (k->magic, k->dims, k->ndims, NULL, k->payload, &len);
    s_write (s_path (bad, sizeof bad, dir, k->gz ? "bad.gz" : "bad"), buf, k->cut ? k->cut : len, k->gz);
    free (buf);
    if (k->labels) {
        s_write_images (s_path (other, sizeof other, dir, "im"), k->other, 2, 2, 0);
        s_expect_fail (other, bad, k->needle1 ? k->needle1 : bad, k->needle2);
    }
    else {
        s_write_labels (s_path (other, sizeof other, dir, "lb"), k->other, 0);
        s_expect_fail (bad, other, k->needle1 ? k->needle1 : bad, k->needle2);
    }
    s_tmp_end (dir);
}
END_TEST

/*  Labels exactly as long as the header says, all 0: they load, one class.  */
START_TEST (test_labels_one_class)
{
    char dir [128], im [256], p [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_images (s_path (im, sizeof im, dir, "im"), 5, 2, 2, 0);
    uint32_t nl = 5;
    size_t len;
    uint8_t *buf = s_idx (0x801, &nl, 1, NULL, 5, &len);
    s_write (s_path (p, sizeof p, dir, "lb"), buf, len, 0);
    free (buf);
    char err [256];
    fasgd_dataset_t *ds = fasgd_dataset_load_idx (im, p, 0, err, sizeof err);
    ck_assert_msg (ds, "%s", err);
    ck_assert_uint_eq (ds->nclasses, 1);
    fasgd_dataset_destroy (&ds);
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_err_count_mismatch)
{
    char dir [128], im [256], lb [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_images (s_path (im, sizeof im, dir, "im.gz"), 5, 2, 2, 1);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb"), 4, 0);
    s_expect_fail (im, lb, "has 5 images but", "has 4 labels");
    char err [512];
    ck_assert_ptr_null (fasgd_dataset_load_idx (im, lb, 2, err, sizeof err));
    ck_assert (strstr (err, im) && strstr (err, lb));
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_err_corrupt_gzip)
{
    char dir [128], im [256], lb [256], p [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_images (s_path (im, sizeof im, dir, "im.gz"), 50, 8, 8, 1);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb"), 50, 0);
    size_t len;
    uint8_t *gz = s_slurp (im, &len);
    ck_assert_uint_gt (len, 40);
    /*  Cut off half-way: gzread alone would hand back the first half.  */
    s_write (s_path (p, sizeof p, dir, "cut.gz"), gz, len / 2, 0);
    s_expect_fail (p, lb, "corrupt gzip", "truncated");
    /*  Only the 8-byte trailer missing: all data there, CRC unchecked.  */
    s_write (p, gz, len - 8, 0);
    s_expect_fail (p, lb, p, "corrupt gzip");
    /*  A flipped byte in the trailer's CRC.  */
    gz [len - 6] ^= 0x40;
    s_write (p, gz, len, 0);
    s_expect_fail (p, lb, p, "corrupt gzip");
    gz [len - 6] ^= 0x40;
    /*  Garbage in the deflate stream.  */
    for (size_t i = 12; i < 40; i++)
        gz [i] ^= 0xa5;
    s_write (p, gz, len, 0);
    s_expect_fail (p, lb, p, "corrupt gzip");
    free (gz);
    s_tmp_end (dir);
}
END_TEST

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/*  Appends one gzip member holding len bytes of data (zeros when data is
    NULL) to f: a reader decompresses concatenated members as one stream.  */
static void
s_gz_member (FILE *f, const uint8_t *data, size_t len)
{
    z_stream z;
    memset (&z, 0, sizeof z);
    ck_assert_int_eq (deflateInit2 (&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
    static uint8_t zeros [1 << 16];
    uint8_t out [1 << 16];
    size_t left = len;
    int flush;
    do {
        size_t n = left < sizeof zeros ? left : sizeof zeros;
        z.next_in = (Bytef *) (data ? data + (len - left) : zeros);
        z.avail_in = (uInt) n;
        left -= n;
        flush = left ? Z_NO_FLUSH : Z_FINISH;
        do {
            z.next_out = out;
            z.avail_out = sizeof out;
            ck_assert_int_ne (deflate (&z, flush), Z_STREAM_ERROR);
            size_t have = sizeof out - z.avail_out;
            ck_assert_uint_eq (fwrite (out, 1, have, f), have);
        } while (z.avail_out == 0);
    } while (flush != Z_FINISH);
    deflateEnd (&z);
}

/*  What is not a regular file is refused at once: /dev/zero once took
    30 s (read up to the 2 GiB cap), and a FIFO without a writer blocked
    for ever.  */
START_TEST (test_err_not_a_file)
{
    char dir [128], lb [256], p [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb"), 10, 0);

    char im [256];
    s_write_images (s_path (im, sizeof im, dir, "im"), 10, 2, 2, 0);
    double t0 = s_now ();
    s_expect_fail ("/dev/zero", lb, "/dev/zero: not a regular file", NULL);
    s_expect_fail (im, "/dev/zero", "/dev/zero: not a regular file", NULL);
    ck_assert_double_lt (s_now () - t0, 1.0);

    s_path (p, sizeof p, dir, "fifo");
    ck_assert_int_eq (mkfifo (p, 0600), 0);
    t0 = s_now ();
    s_expect_fail (p, lb, p, "not a regular file");
    ck_assert_double_lt (s_now () - t0, 1.0);
    unlink (p);
    s_tmp_end (dir);
}
END_TEST

START_TEST (test_err_gzip_bomb)
{
    char dir [128], lb [256], p [256];
    s_tmp_begin (dir, sizeof dir);
    s_write_labels (s_path (lb, sizeof lb, dir, "lb"), 10, 0);
    double t0;

    /*  What a file claims is checked before its body is read. A valid
        header for 10 images of 28x28 and their pixels, then 32 members of
        64 MiB of zeros each (a 2 MB file; once read to the 2 GiB cap, 30
        to 55 s): refused as soon as the stream goes past the claim.  */
    uint32_t dims [3] = { 10, 28, 28 };
    size_t len;
    uint8_t *buf = s_idx (0x803, dims, 3, NULL, 10 * 784, &len);
    FILE *f = fopen (s_path (p, sizeof p, dir, "bomb.gz"), "wb");
    ck_assert_ptr_nonnull (f);
    s_gz_member (f, buf, len);
    free (buf);
    long start = ftell (f);
    s_gz_member (f, NULL, (size_t) 64 << 20);
    long member = ftell (f) - start;
    uint8_t *copy = malloc ((size_t) member);
    ck_assert_ptr_nonnull (copy);
    fflush (f);
    FILE *r = fopen (p, "rb");
    ck_assert_int_eq (fseek (r, start, SEEK_SET), 0);
    ck_assert_uint_eq (fread (copy, 1, (size_t) member, r), (size_t) member);
    fclose (r);
    for (int i = 1; i < 32; i++)
        ck_assert_uint_eq (fwrite (copy, 1, (size_t) member, f), (size_t) member);
    ck_assert_int_eq (fclose (f), 0);
    t0 = s_now ();
    s_expect_fail (p, lb, "trailing garbage: header says 10 images of 28x28 (7856 bytes)",
                   "file has more than");
    ck_assert_double_lt (s_now () - t0, 2.0);

    /*  The zeros alone: a wrong magic, known after four bytes.  */
    f = fopen (p, "wb");
    ck_assert_ptr_nonnull (f);
    for (int i = 0; i < 32; i++)
        ck_assert_uint_eq (fwrite (copy, 1, (size_t) member, f), (size_t) member);
    ck_assert_int_eq (fclose (f), 0);
    free (copy);
    t0 = s_now ();
    s_expect_fail (p, lb, "wrong magic", "found 0x00000000");
    ck_assert_double_lt (s_now () - t0, 2.0);

    /*  A plain file as large as its header says, past the 1 GiB cap: a
        sparse file, refused before a byte of it is read.  */
    uint32_t big [3] = { 100, 4096, 4096 };
    buf = s_idx (0x803, big, 3, NULL, 0, &len);
    s_write (s_path (p, sizeof p, dir, "sparse"), buf, len, 0);
    free (buf);
    ck_assert_int_eq (truncate (p, 16 + (off_t) 100 * 4096 * 4096), 0);
    t0 = s_now ();
    s_expect_fail (p, lb, "header says 100 images of 4096x4096 (1677721616 bytes), "
                   "more than the 1073741824 bytes a data file may hold", NULL);
    ck_assert_double_lt (s_now () - t0, 1.0);
    s_tmp_end (dir);
}
END_TEST

/*  A generated set built in memory: x row i is (i, i + 0.25, ...) and
    y [i] = i % 256, so every row says which example it came from.  */
static fasgd_dataset_t *
s_tagged (uint32_t n, uint32_t rows, uint32_t cols)
{
    fasgd_dataset_t *ds = fasgd_dataset_new (n, rows, cols);
    ck_assert_ptr_nonnull (ds);
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < ds->dim; k++)
            ds->x [(size_t) i * ds->dim + k] = (float) i + 0.25f * (float) k;
        ds->y [i] = (uint8_t) (i % 256);
    }
    ds->nclasses = n < 256 ? n : 256;
    return ds;
}

START_TEST (test_new_slice_gather)
{
    fasgd_dataset_t *ds = fasgd_dataset_new (3, 2, 5);
    ck_assert_ptr_nonnull (ds);
    ck_assert_uint_eq (ds->dim, 10);
    ck_assert_uint_eq (ds->nclasses, 0);
    for (int i = 0; i < 30; i++)
        ck_assert (ds->x [i] == 0.0f);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq (ds->y [i], 0);
    fasgd_dataset_destroy (&ds);
    ck_assert_ptr_null (fasgd_dataset_new (0, 28, 28));
    ck_assert_ptr_null (fasgd_dataset_new (1, 0, 28));
    ck_assert_ptr_null (fasgd_dataset_new (1, 28, 0));
    ck_assert_ptr_null (fasgd_dataset_new (1, 4097, 1));

    fasgd_dataset_t *src = s_tagged (20, 2, 3);
    fasgd_dataset_t *sl = fasgd_dataset_slice (src, 5, 10);
    ck_assert_ptr_nonnull (sl);
    ck_assert_uint_eq (sl->n, 10);
    ck_assert_uint_eq (sl->rows, 2);
    ck_assert_uint_eq (sl->cols, 3);
    ck_assert_uint_eq (sl->nclasses, src->nclasses);
    ck_assert_mem_eq (sl->x, src->x + 5 * 6, 10 * 6 * sizeof (float));
    ck_assert_mem_eq (sl->y, src->y + 5, 10);
    /*  A copy: changing it leaves the source alone.  */
    sl->x [0] = -1.0f;
    ck_assert (src->x [30] == 5.0f);
    fasgd_dataset_destroy (&sl);
    sl = fasgd_dataset_slice (src, 0, 20);
    ck_assert_ptr_nonnull (sl);
    ck_assert_mem_eq (sl->x, src->x, 20 * 6 * sizeof (float));
    fasgd_dataset_destroy (&sl);
    sl = fasgd_dataset_slice (src, 19, 1);
    ck_assert_ptr_nonnull (sl);
    ck_assert_uint_eq (sl->y [0], 19);
    fasgd_dataset_destroy (&sl);
    ck_assert_ptr_null (fasgd_dataset_slice (src, 19, 2));
    ck_assert_ptr_null (fasgd_dataset_slice (src, 20, 1));
    ck_assert_ptr_null (fasgd_dataset_slice (src, 3, 0));
    ck_assert_ptr_null (fasgd_dataset_slice (src, UINT32_MAX, 2));
    ck_assert_ptr_null (fasgd_dataset_slice (src, 1, UINT32_MAX));
    ck_assert_ptr_null (fasgd_dataset_slice (NULL, 0, 1));

    const uint32_t idx [] = { 7, 0, 19, 7 };
    float x [4 * 6];
    uint8_t y [4];
    fasgd_dataset_gather (src, idx, 4, x, y);
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq (y [i], idx [i]);
        ck_assert_mem_eq (x + i * 6, src->x + idx [i] * 6, 6 * sizeof (float));
    }
    memset (y, 0xee, sizeof y);
    fasgd_dataset_gather (src, idx, 2, x, NULL);
    ck_assert (x [6] == 0.0f);
    fasgd_dataset_gather (src, idx, 3, NULL, y);
    ck_assert_uint_eq (y [2], 19);
    ck_assert_uint_eq (y [3], 0xee);
    fasgd_dataset_gather (src, NULL, 0, x, y);
    fasgd_dataset_destroy (&src);
}
END_TEST

START_TEST (test_shuffle)
{
    const uint32_t n = 200;
    fasgd_dataset_t *a = s_tagged (n, 3, 3);
    fasgd_dataset_t *b = s_tagged (n, 3, 3);
    fasgd_dataset_t *c = s_tagged (n, 3, 3);
    fasgd_dataset_shuffle (a, 1234);
    fasgd_dataset_shuffle (b, 1234);
    fasgd_dataset_shuffle (c, 1235);
    ck_assert_mem_eq (a->x, b->x, (size_t) n * 9 * sizeof (float));
    ck_assert_mem_eq (a->y, b->y, n);
    ck_assert_uint_eq (a->nclasses, 200);

    /*  The documented permutation: fasgd_rng_shuffle on an identity.  */
    uint32_t perm [200];
    for (uint32_t i = 0; i < n; i++)
        perm [i] = i;
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, 1234, FASGD_DATA_SHUFFLE_STREAM);
    fasgd_rng_shuffle (&rng, perm, n);

    int seen [200] = { 0 }, moved = 0, differ = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t from = (uint32_t) a->x [k * 9];
        ck_assert_uint_lt (from, n);
        ck_assert_uint_eq (from, perm [k]);
        /*  The whole row and its label travelled together.  */
        ck_assert_uint_eq (a->y [k], from);
        for (uint32_t j = 0; j < 9; j++)
            ck_assert (a->x [k * 9 + j] == (float) from + 0.25f * (float) j);
        seen [from]++;
        moved += from != k;
        differ += a->y [k] != c->y [k];
    }
    for (uint32_t i = 0; i < n; i++)
        ck_assert_int_eq (seen [i], 1);
    ck_assert_int_gt (moved, 180);
    ck_assert_int_gt (differ, 180);

    /*  One example: nothing to do; NULL: ignored.  */
    fasgd_dataset_t *one = s_tagged (1, 1, 2);
    fasgd_dataset_shuffle (one, 5);
    ck_assert (one->x [1] == 0.25f);
    fasgd_dataset_shuffle (NULL, 5);
    fasgd_dataset_destroy (&one);
    fasgd_dataset_destroy (&a);
    fasgd_dataset_destroy (&b);
    fasgd_dataset_destroy (&c);
}
END_TEST

START_TEST (test_batcher_in_order)
{
    ck_assert_ptr_null (fasgd_batcher_new (10, 0, 1, 0));
    ck_assert_ptr_null (fasgd_batcher_new (10, 11, 1, 0));
    ck_assert_ptr_null (fasgd_batcher_new (0, 1, 1, 1));
    fasgd_batcher_t *b = fasgd_batcher_new (10, 3, 99, 0);
    ck_assert_ptr_nonnull (b);
    ck_assert_uint_eq (fasgd_batcher_per_epoch (b), 3);
    ck_assert_uint_eq (fasgd_batcher_epoch (b), 0);
    /*  0-2, 3-5, 6-8, then example 9 is skipped and it wraps.  */
    for (uint32_t step = 0; step < 12; step++) {
        const uint32_t *idx = fasgd_batcher_next (b);
        ck_assert_ptr_nonnull (idx);
        ck_assert_uint_eq (fasgd_batcher_epoch (b), step / 3);
        for (uint32_t j = 0; j < 3; j++)
            ck_assert_uint_eq (idx [j], (step % 3) * 3 + j);
    }
    fasgd_batcher_destroy (&b);
    ck_assert_ptr_null (b);
    fasgd_batcher_destroy (&b);
    fasgd_batcher_destroy (NULL);

    /*  batch == n: every batch is the whole set.  */
    b = fasgd_batcher_new (4, 4, 0, 0);
    ck_assert_ptr_nonnull (b);
    for (int step = 0; step < 3; step++) {
        const uint32_t *idx = fasgd_batcher_next (b);
        ck_assert_uint_eq (fasgd_batcher_epoch (b), (uint64_t) step);
        for (uint32_t j = 0; j < 4; j++)
            ck_assert_uint_eq (idx [j], j);
    }
    fasgd_batcher_destroy (&b);
}
END_TEST

/*  Runs `epochs` epochs of a shuffled batcher into out (epochs * per_epoch
    * batch indices), checking each epoch's indices are distinct and in
    range.  */
static void
s_batcher_run (uint32_t n, uint32_t batch, uint64_t seed, int epochs, uint32_t *out)
{
    fasgd_batcher_t *b = fasgd_batcher_new (n, batch, seed, 1);
    ck_assert_ptr_nonnull (b);
    uint32_t per = fasgd_batcher_per_epoch (b);
    ck_assert_uint_eq (per, n / batch);
    uint8_t *seen = malloc (n);
    ck_assert_ptr_nonnull (seen);
    size_t at = 0;
    for (int e = 0; e < epochs; e++) {
        memset (seen, 0, n);
        for (uint32_t s = 0; s < per; s++) {
            const uint32_t *idx = fasgd_batcher_next (b);
            ck_assert_uint_eq (fasgd_batcher_epoch (b), (uint64_t) e);
            for (uint32_t j = 0; j < batch; j++) {
                ck_assert_uint_lt (idx [j], n);
                ck_assert_uint_eq (seen [idx [j]], 0);
                seen [idx [j]] = 1;
                out [at++] = idx [j];
            }
        }
    }
    free (seen);
    fasgd_batcher_destroy (&b);
}

START_TEST (test_batcher_shuffled)
{
    enum { N = 103, B = 10, E = 6, PER_EPOCH = (N / B) * B };
    uint32_t a [E * PER_EPOCH], a2 [E * PER_EPOCH], c [E * PER_EPOCH];
    s_batcher_run (N, B, 42, E, a);
    s_batcher_run (N, B, 42, E, a2);
    s_batcher_run (N, B, 43, E, c);
    ck_assert_mem_eq (a, a2, sizeof a);
    int differ = 0;
    for (size_t i = 0; i < PER_EPOCH * E; i++)
        differ += a [i] != c [i];
    ck_assert_int_gt (differ, PER_EPOCH * E * 9 / 10);

    /*  Each epoch is a fresh order, and the skipped remainder moves.  */
    int skipped_changes = 0;
    uint8_t prev [N] = { 0 };
    for (int e = 0; e < E; e++) {
        const uint32_t *ep = a + e * PER_EPOCH;
        if (e > 0) {
            int same = 0;
            for (size_t i = 0; i < PER_EPOCH; i++)
                same += ep [i] == ep [(ptrdiff_t) i - PER_EPOCH];
            ck_assert_int_lt (same, PER_EPOCH / 5);
        }
        uint8_t used [N] = { 0 };
        for (size_t i = 0; i < PER_EPOCH; i++)
            used [ep [i]] = 1;
        if (e > 0 && memcmp (used, prev, N) != 0)
            skipped_changes++;
        memcpy (prev, used, N);
    }
    ck_assert_int_gt (skipped_changes, 0);

    /*  Shuffled with batch == n: each epoch a full permutation.  */
    uint32_t full [3 * 50];
    s_batcher_run (50, 50, 7, 3, full);
    ck_assert (memcmp (full, full + 50, 50 * sizeof (uint32_t)) != 0);
}
END_TEST

/*  The real sets: checked when installed, noted when not.  */
static void
s_check_real (const char *dir, const char *prefix, uint32_t n, int is_digits)
{
    char err [512];
    fasgd_dataset_t *ds = fasgd_dataset_load_dir (dir, prefix, 0, err, sizeof err);
    ck_assert_msg (ds, "%s", err);
    ck_assert_uint_eq (ds->n, n);
    ck_assert_uint_eq (ds->rows, 28);
    ck_assert_uint_eq (ds->cols, 28);
    ck_assert_uint_eq (ds->dim, 784);
    ck_assert_uint_eq (ds->nclasses, 10);
    /*  Counted, then asserted once: every passing ck_assert costs a
        message to the parent process, too slow for 47 million pixels.  */
    uint32_t count [256] = { 0 };
    for (uint32_t i = 0; i < ds->n; i++)
        count [ds->y [i]]++;
    for (int c = 10; c < 256; c++)
        ck_assert_msg (count [c] == 0, "%s/%s: label %d", dir, prefix, c);
    for (int c = 0; c < 10; c++)
        ck_assert_msg (count [c] > 0, "%s/%s: class %d absent", dir, prefix, c);
    double sum = 0;
    float hi = 0;
    size_t outside = 0;
    for (size_t i = 0; i < (size_t) ds->n * ds->dim; i++) {
        outside += !(ds->x [i] >= 0.0f && ds->x [i] <= 1.0f);
        sum += ds->x [i];
        if (ds->x [i] > hi)
            hi = ds->x [i];
    }
    ck_assert_uint_eq (outside, 0);
    /*  Mostly-black pictures with full-white strokes: MNIST's mean pixel
        is about 0.13, Fashion-MNIST's about 0.29.  */
    double mean = sum / ((double) ds->n * ds->dim);
    ck_assert (hi == 1.0f);
    if (is_digits)
        ck_assert_double_eq_tol (mean, 0.13, 0.03);
    else
        ck_assert_double_eq_tol (mean, 0.29, 0.03);
    fasgd_dataset_destroy (&ds);

    ds = fasgd_dataset_load_dir (dir, prefix, 100, err, sizeof err);
    ck_assert_msg (ds, "%s", err);
    ck_assert_uint_eq (ds->n, 100);
    ck_assert_uint_eq (ds->nclasses, 10);
    fasgd_dataset_destroy (&ds);
}

static int
s_have (const char *dir, const char *name)
{
    char p [4096];
    int w = snprintf (p, sizeof p, "%s/%s", dir, name);
    return w > 0 && (size_t) w < sizeof p && access (p, R_OK) == 0;
}

START_TEST (test_real_mnist)
{
    char dir [4096];
    fasgd_test_datapath ("mnist", dir, sizeof dir);
    if (!s_have (dir, "train-images-idx3-ubyte.gz") || !s_have (dir, "t10k-images-idx3-ubyte.gz")) {
        fprintf (stderr, "test_data: note: %s absent (scripts/get-mnist makes it), skipping\n", dir);
        return;
    }
    s_check_real (dir, "train", 8000, 1);
    s_check_real (dir, "t10k", 2000, 1);
}
END_TEST

START_TEST (test_real_fashion)
{
    const char *dir = FASGD_FASHION_MNIST_DIR;
    if (!s_have (dir, "train-images-idx3-ubyte.gz") || !s_have (dir, "t10k-images-idx3-ubyte.gz")) {
        fprintf (stderr, "test_data: note: %s absent (Debian package dataset-fashion-mnist), skipping\n", dir);
        return;
    }
    s_check_real (dir, "train", 60000, 0);
    s_check_real (dir, "t10k", 10000, 0);
}
END_TEST

static Suite *
data_suite (void)
{
    Suite *s = suite_create ("data");

    TCase *tc = tcase_create ("load");
    tcase_set_timeout (tc, 60);
    tcase_add_unchecked_fixture (tc, s_root_setup, s_root_teardown);
    tcase_add_test (tc, test_load_plain);
    tcase_add_test (tc, test_pixel_scaling);
    tcase_add_test (tc, test_load_gzip);
    tcase_add_test (tc, test_max_examples);
    tcase_add_test (tc, test_load_dir);
    suite_add_tcase (s, tc);

    tc = tcase_create ("errors");
    tcase_set_timeout (tc, 60);
    tcase_add_unchecked_fixture (tc, s_root_setup, s_root_teardown);
    tcase_add_test (tc, test_err_missing_and_unreadable);
    tcase_add_test (tc, test_err_empty_and_short);
    tcase_add_test (tc, test_err_magic_and_dims);
    tcase_add_loop_test (tc, test_err_idx, 0, S_IDX_CASES);
    tcase_add_test (tc, test_labels_one_class);
    tcase_add_test (tc, test_err_count_mismatch);
    tcase_add_test (tc, test_err_corrupt_gzip);
    tcase_add_test (tc, test_err_not_a_file);
    tcase_add_test (tc, test_err_gzip_bomb);
    suite_add_tcase (s, tc);

    tc = tcase_create ("dataset");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_new_slice_gather);
    tcase_add_test (tc, test_shuffle);
    suite_add_tcase (s, tc);

    tc = tcase_create ("batcher");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_batcher_in_order);
    tcase_add_test (tc, test_batcher_shuffled);
    suite_add_tcase (s, tc);

    /*  Decompressing and scaling 70,000 images takes seconds natively and
        a few minutes under valgrind.  */
    tc = tcase_create ("real");
    tcase_set_timeout (tc, 600);
    tcase_add_test (tc, test_real_mnist);
    tcase_add_test (tc, test_real_fashion);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (data_suite)
