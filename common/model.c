/*  model: fully connected softmax network, forward and backward on a
    minibatch with cblas_sgemm.

    Conventions inside this file: layer l = 1..L maps width sizes[l-1] (fan
    in) to sizes[l] (fan out); A_0 is the caller's input x and A_l (n rows
    of sizes[l]) lives in the workspace. The backward pass reuses A_l to
    hold dZ_l, the gradient of the mean NLL with respect to layer l's
    pre-activation, once A_l's values are no longer needed.  */
#include "model.h"
#include "floats.h"
#include "log.h"

#include <assert.h>
#include <cblas.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#   include <immintrin.h>
#   define S_SPARSE_X86 1
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fasgd_model_t {
    fasgd_model_spec_t spec;
    int nlayers;                    /* weight layers, L = nsizes - 1 */
    size_t nparams;
    fasgd_tensor_t tensors [2 * FASGD_MODEL_MAX_LAYERS];
};

/*  A prepared batch's nonzero inputs within its kept columns (see
    s_sparse_new), listed by example and by column.  */
typedef struct {
    int *row_ptr;                   /* n + 1: example i's are [row_ptr [i], row_ptr [i + 1]) */
    int *row_col;                   /* their kept-column index, ascending */
    float *row_val;
    int *col_ptr;                   /* kept + 1: column c's are [col_ptr [c], col_ptr [c + 1]) */
    int *col_row;                   /* their example, ascending */
    float *col_val;
} s_sparse_t;

/*  The first layer's input as a pass multiplies it: x itself (kept 0),
    or x's kept columns, n rows of kept, which are the runs of columns
    (first, count) of the original; with `sparse`, only their nonzeros.  */
typedef struct {
    const float *x;
    const int *runs;
    int nruns, kept;
    const s_sparse_t *sparse;
} s_cols_t;

struct fasgd_model_ws_t {
    /*  The widths the buffers were sized for: a workspace fits any model
        with the same shapes.  */
    int nsizes;
    int sizes [FASGD_MODEL_MAX_LAYERS + 1];
    int max_batch;
    float *act [FASGD_MODEL_MAX_LAYERS + 1];    /* act [l], l = 1..L */
    float *delta;                   /* dZ_l · W_lᵀ, before act' is applied */
    /*  The first layer on the batch's inked input columns (see
        s_find_columns): NULL buffers when the model's shapes cannot gain.  */
    float *xc;                      /* max_batch x kept: the kept columns of x */
    float *wc;                      /* kept rows: W_1's kept rows, then their dW_1 */
    float *dzp;                     /* max_batch rows of s_padded (sizes [1]): dZ_1 */
    uint32_t *inked;                /* per input column: the OR of |x|'s bits */
    int *runs;                      /* kept columns as (first, count) pairs */
    s_cols_t cols;                  /* what the last forward pass multiplied */
    void *block;                    /* one allocation holds every buffer */
};

struct fasgd_model_batch_t {
    const float *x;
    const uint8_t *y;
    int n;
    s_cols_t cols;
    float *xc;
    int *runs;
    s_sparse_t sparse;
    int *sparse_block;              /* holds every array of sparse */
};

/*  Each workspace buffer starts on its own 64-byte cache line, so no two
    buffers share a line.  */
#define S_ALIGN_FLOATS 16

/*  The elementwise loops run in fixed blocks of S_BLOCK with a scalar
    tail. At -O2 gcc's vectoriser (its "very cheap" cost model) leaves a
    loop of unknown trip count scalar, but a fixed-size block is straight
    line code that it vectorises. The relu tests are written so that they
    compile to compare-and-mask, not to a branch that a half-active layer
    mispredicts every other unit.  */
#define S_BLOCK 8

const char *const fasgd_model_activation_names [] = { "relu", "tanh", NULL };
const char *const fasgd_model_init_names [] = { "he", "glorot", "normal", NULL };
#define S_NACTIVATIONS ((int) (sizeof fasgd_model_activation_names / sizeof fasgd_model_activation_names [0]) - 1)
#define S_NINITS ((int) (sizeof fasgd_model_init_names / sizeof fasgd_model_init_names [0]) - 1)

void
fasgd_model_spec_default (fasgd_model_spec_t *spec)
{
    memset (spec, 0, sizeof *spec);
    spec->nsizes = 3;
    spec->sizes [0] = 784;
    spec->sizes [1] = 100;
    spec->sizes [2] = 10;
    spec->activation = FASGD_ACT_RELU;
    spec->init = FASGD_INIT_HE;
}

int
fasgd_model_spec_parse_sizes (fasgd_model_spec_t *spec, const char *text,
                              char *err, size_t errlen)
{
    int sizes [FASGD_MODEL_MAX_LAYERS + 1];
    int nsizes = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol (p, &end, 10);
        if (end == p) {
            fasgd_errbuf (err, errlen, "layer sizes \"%s\": expected a number at \"%s\"", text, p);
            return -1;
        }
        if (errno == ERANGE || v < 1 || v > FASGD_MODEL_MAX_WIDTH) {
            fasgd_errbuf (err, errlen, "layer sizes \"%s\": width %.*s must be 1..%d",
                     text, (int) (end - p), p, FASGD_MODEL_MAX_WIDTH);
            return -1;
        }
        if (nsizes == FASGD_MODEL_MAX_LAYERS + 1) {
            fasgd_errbuf (err, errlen, "layer sizes \"%s\": more than %d widths",
                     text, FASGD_MODEL_MAX_LAYERS + 1);
            return -1;
        }
        sizes [nsizes++] = (int) v;
        if (*end == '\0')
            break;
        if (*end != ',') {
            fasgd_errbuf (err, errlen, "layer sizes \"%s\": unexpected \"%c\", widths are separated by commas",
                     text, *end);
            return -1;
        }
        p = end + 1;
    }
    if (nsizes < 2) {
        fasgd_errbuf (err, errlen, "layer sizes \"%s\": need at least an input and an output width", text);
        return -1;
    }
    spec->nsizes = nsizes;
    memcpy (spec->sizes, sizes, (size_t) nsizes * sizeof sizes [0]);
    return 0;
}

static int
s_lookup (const char *name, const char *const *names, int count)
{
    if (name)
        for (int i = 0; i < count; i++)
            if (strcmp (name, names [i]) == 0)
                return i;
    return -1;
}

int
fasgd_model_activation_parse (const char *name)
{
    return s_lookup (name, fasgd_model_activation_names, S_NACTIVATIONS);
}

const char *
fasgd_model_activation_name (int activation)
{
    return activation >= 0 && activation < S_NACTIVATIONS ? fasgd_model_activation_names [activation] : NULL;
}

int
fasgd_model_init_parse (const char *name)
{
    return s_lookup (name, fasgd_model_init_names, S_NINITS);
}

const char *
fasgd_model_init_name (int init)
{
    return init >= 0 && init < S_NINITS ? fasgd_model_init_names [init] : NULL;
}

fasgd_model_t *
fasgd_model_new (const fasgd_model_spec_t *spec, char *err, size_t errlen)
{
    if (spec->nsizes < 2 || spec->nsizes > FASGD_MODEL_MAX_LAYERS + 1) {
        fasgd_errbuf (err, errlen, "model needs 2..%d layer sizes, input to output (got %d)",
                 FASGD_MODEL_MAX_LAYERS + 1, spec->nsizes);
        return NULL;
    }
    for (int i = 0; i < spec->nsizes; i++)
        if (spec->sizes [i] < 1 || spec->sizes [i] > FASGD_MODEL_MAX_WIDTH) {
            fasgd_errbuf (err, errlen, "layer size %d of %d is %d, must be 1..%d",
                     i + 1, spec->nsizes, spec->sizes [i], FASGD_MODEL_MAX_WIDTH);
            return NULL;
        }
    if (!fasgd_model_activation_name (spec->activation)) {
        fasgd_errbuf (err, errlen, "unknown activation %d (relu = %d, tanh = %d)",
                 spec->activation, FASGD_ACT_RELU, FASGD_ACT_TANH);
        return NULL;
    }
    if (!fasgd_model_init_name (spec->init)) {
        fasgd_errbuf (err, errlen, "unknown init %d (he = %d, glorot = %d, normal = %d)",
                 spec->init, FASGD_INIT_HE, FASGD_INIT_GLOROT, FASGD_INIT_NORMAL);
        return NULL;
    }
    /*  Widths are at most 10^6, so each product fits in 64 bits with room
        for the sum. The limit keeps every offset and every count on the
        wire in an int32 and each copy of θ within 1 GiB.  */
    uint64_t total = 0;
    for (int l = 1; l < spec->nsizes; l++)
        total += (uint64_t) spec->sizes [l - 1] * (uint64_t) spec->sizes [l]
               + (uint64_t) spec->sizes [l];
    if (total > FASGD_MODEL_MAX_PARAMS) {
        fasgd_errbuf (err, errlen, "model has %llu parameters, the limit is %llu",
                 (unsigned long long) total, (unsigned long long) FASGD_MODEL_MAX_PARAMS);
        return NULL;
    }

    fasgd_model_t *self = calloc (1, sizeof *self);
    if (!self) {
        fasgd_errbuf (err, errlen, "out of memory");
        return NULL;
    }
    self->spec = *spec;
    /*  Unused slots are zeroed so that two equal models compare equal.  */
    for (int i = spec->nsizes; i <= FASGD_MODEL_MAX_LAYERS; i++)
        self->spec.sizes [i] = 0;
    self->nlayers = spec->nsizes - 1;
    size_t offset = 0;
    for (int l = 1; l <= self->nlayers; l++) {
        fasgd_tensor_t *w = &self->tensors [2 * (l - 1)];
        fasgd_tensor_t *b = w + 1;
        snprintf (w->name, sizeof w->name, "w%d", l);
        w->offset = offset;
        w->rows = spec->sizes [l - 1];
        w->cols = spec->sizes [l];
        offset += (size_t) w->rows * (size_t) w->cols;
        snprintf (b->name, sizeof b->name, "b%d", l);
        b->offset = offset;
        b->rows = 1;
        b->cols = spec->sizes [l];
        offset += (size_t) b->cols;
    }
    self->nparams = offset;
    return self;
}

void
fasgd_model_destroy (fasgd_model_t **self_p)
{
    if (self_p && *self_p) {
        free (*self_p);
        *self_p = NULL;
    }
}

const fasgd_model_spec_t *
fasgd_model_spec (const fasgd_model_t *self)
{
    return &self->spec;
}

size_t
fasgd_model_nparams (const fasgd_model_t *self)
{
    return self->nparams;
}

int
fasgd_model_ntensors (const fasgd_model_t *self)
{
    return 2 * self->nlayers;
}

const fasgd_tensor_t *
fasgd_model_tensor (const fasgd_model_t *self, int i)
{
    return i >= 0 && i < 2 * self->nlayers ? &self->tensors [i] : NULL;
}

int
fasgd_model_tensor_sizes (const fasgd_model_t *self, uint64_t *sizes, int max)
{
    int n = 2 * self->nlayers;
    for (int i = 0; i < n && i < max; i++)
        sizes [i] = (uint64_t) self->tensors [i].rows * (uint64_t) self->tensors [i].cols;
    return n;
}

int
fasgd_model_input_dim (const fasgd_model_t *self)
{
    return self->spec.sizes [0];
}

int
fasgd_model_nclasses (const fasgd_model_t *self)
{
    return self->spec.sizes [self->nlayers];
}

double
fasgd_model_gradient_flops (const fasgd_model_t *self, int n)
{
    double flops = 0;
    for (int l = 1; l <= self->nlayers; l++) {
        double mac = (double) n * self->spec.sizes [l - 1] * self->spec.sizes [l];
        flops += 2 * mac + 2 * mac;     /* forward Z_l, backward dW_l */
        if (l > 1)
            flops += 2 * mac;           /* backward dA_{l-1} */
    }
    return flops;
}

void
fasgd_model_init_params (const fasgd_model_t *self, float *theta, fasgd_rng_t *rng)
{
    for (int l = 1; l <= self->nlayers; l++) {
        const fasgd_tensor_t *wt = &self->tensors [2 * (l - 1)];
        const fasgd_tensor_t *bt = wt + 1;
        float *w = theta + wt->offset;
        size_t count = (size_t) wt->rows * (size_t) wt->cols;
        double fan_in = wt->rows, fan_out = wt->cols;
        if (self->spec.init == FASGD_INIT_GLOROT) {
            /*  Glorot & Bengio 2010, eq. 16: keeps the variance of
                activations and of gradients near 1 for tanh.  */
            double a = sqrt (6.0 / (fan_in + fan_out));
            for (size_t i = 0; i < count; i++)
                w [i] = (float) (a * (2.0 * fasgd_rng_uniform (rng) - 1.0));
        }
        else {
            /*  He et al. 2015: variance 2/fan_in offsets relu zeroing half
                of its inputs.  */
            double sd = self->spec.init == FASGD_INIT_HE ? sqrt (2.0 / fan_in) : 1.0;
            for (size_t i = 0; i < count; i++)
                w [i] = (float) (sd * fasgd_rng_normal (rng));
        }
        memset (theta + bt->offset, 0, (size_t) bt->cols * sizeof (float));
    }
}

/*  Input columns that are zero in every example of a batch add nothing
    to the first layer's product: x_ik·w_kj is 0 for every example i, and
    so is column k's row of dW_1, Σ_i x_ik·dz_ij. On MNIST a batch of 128
    digits leaves about a third of the 784 pixels blank (the border), so
    the first layer, which is nearly all of a 784-100-10 gradient's work,
    can run its two products on the inked columns only: x's kept columns
    and W_1's kept rows are copied into the workspace, the products run on
    those, and dW_1's rows of blank columns are set to 0.

    Only terms that are exactly zero are left out, but OpenBLAS may split
    the shorter inner dimension into blocks elsewhere, so the logits can
    differ from the full product's in the last bits (the gradient's dW_1
    rows do not: their sums run over the examples, as before). Whether a
    column is blank depends on the batch alone, so results are as
    reproducible as before.

    Compaction pays when enough columns are blank, and the layer is wide
    enough and the batch large enough for the saved multiplies to outweigh
    the copies and the look at the blank columns' weights (below): at least
    an eighth of the columns blank, a first layer at least
    S_COMPACT_MIN_OUT wide, a batch of at least S_COMPACT_MIN_BATCH
    examples. (At μ = 1 and 4 compaction made fasgd-sim no faster.) The workspace holds a copy of W_1 for it, so models whose W_1
    exceeds S_COMPACT_MAX_FLOATS never compact. A NaN or infinity in a
    blank column's weights would have reached the logits through 0·w; the
    batch then takes the full product, so it still does.  */
#define S_COMPACT_MIN_OUT 16
#define S_COMPACT_MIN_BATCH 8
#define S_COMPACT_MAX_FLOATS (1L << 22)

static int
s_compacts (const fasgd_model_t *self)
{
    const int fan_in = self->spec.sizes [0], fan_out = self->spec.sizes [1];
    return fan_out >= S_COMPACT_MIN_OUT && fan_in >= 8
        && (int64_t) fan_in * fan_out <= S_COMPACT_MAX_FLOATS;
}

/*  The sparse first layer. A batch of MNIST digits is mostly zeros even
    in its kept columns (a digit inks about 150 of 784 pixels; a batch of
    128 inks about 527 columns): a prepared batch whose kept columns are
    at most S_SPARSE_MAX_PERCENT nonzero lists its nonzeros, and both
    first-layer products run on them alone, on processors with AVX-512:

      Z_1 [i, :] = Σ x_ik · W_1 [k, :]    over example i's nonzeros, in column order
      dW_1 [k, :] = Σ x_ik · dZ_1 [i, :]  over column k's nonzeros, in example order

    each sum a chain of fused multiply-adds (one rounding each) in that
    fixed order, 16 outputs to a vector. The rows of W_1 and dZ_1 the sums
    read are first copied to rows of s_padded floats, so that every vector
    load is aligned: a load that straddles two cache lines costs two.
    On the benchmark machine, for 128 MNIST digits and a first layer 100
    wide, the two products and their copies take 40% of the time of sgemm
    on all 784 columns (bench/sim.md, "Sparse first layer").

    Only exact zeros are left out, so the sums are the same up to rounding
    (and the sign of a zero sum). 0 · NaN would have been NaN: a NaN or
    infinity in W_1 reaches some example's Z_1 through a nonzero input, or
    sits in a blank column's weights (s_gather_w1 checks those); in either
    case the pass runs the full product instead, so that a NaN reaches
    every example, as it would have.  */
#define S_SPARSE_MAX_PERCENT 40

static int
s_padded (int width)
{
    return (width + 15) / 16 * 16;
}

#ifdef S_SPARSE_X86
static int
s_sparse_available (void)
{
    return __builtin_cpu_supports ("avx512f") != 0;
}

/*  out [r · ldo + j] = Σ val [p] · b [idx [p] · ldb + j] (+ bias [j]) for
    p in [ptr [r], ptr [r + 1]) in order, r < m, j < width. b's rows are
    64-byte aligned and ldb is a multiple of 16.  */
__attribute__ ((target ("avx512f")))
static void
s_sparse_rows (int m, const int *ptr, const int *idx, const float *val, const float *b,
               int ldb, int width, const float *bias, float *out, int ldo)
{
    for (int jb = 0; jb < width; jb += 128) {
        const int w = width - jb < 128 ? width - jb : 128;
        const int nv = (w + 15) / 16;
        const __mmask16 last = (__mmask16) (w % 16 ? (1u << (w % 16)) - 1 : 0xffffu);
        for (int r = 0; r < m; r++) {
            __m512 a [8];
#pragma GCC unroll 8
            for (int v = 0; v < 8; v++)
                a [v] = _mm512_setzero_ps ();
            for (int p = ptr [r]; p < ptr [r + 1]; p++) {
                const __m512 x = _mm512_set1_ps (val [p]);
                const float *row = b + (size_t) idx [p] * (size_t) ldb + jb;
#pragma GCC unroll 8
                for (int v = 0; v < 8; v++)
                    if (v < nv)
                        a [v] = _mm512_fmadd_ps (x, _mm512_load_ps (row + 16 * v), a [v]);
            }
            float *o = out + (size_t) r * (size_t) ldo + jb;
#pragma GCC unroll 8
            for (int v = 0; v < 8; v++)
                if (v < nv) {
                    const __mmask16 mask = v == nv - 1 ? last : (__mmask16) 0xffffu;
                    __m512 sum = a [v];
                    if (bias)
                        sum = _mm512_add_ps (sum, _mm512_maskz_loadu_ps (mask, bias + jb + 16 * v));
                    _mm512_mask_storeu_ps (o + 16 * v, mask, sum);
                }
        }
    }
}
#else
static int
s_sparse_available (void)
{
    return 0;
}

static void
s_sparse_rows (int m, const int *ptr, const int *idx, const float *val, const float *b,
               int ldb, int width, const float *bias, float *out, int ldo)
{
    (void) m; (void) ptr; (void) idx; (void) val; (void) b;
    (void) ldb; (void) width; (void) bias; (void) out; (void) ldo;
    abort ();                       /* s_sparse_available () is 0 */
}
#endif

/*  Floats in a buffer of rows x cols, rounded up to whole cache lines;
    64-bit so that a size_t of 32 bits cannot wrap before the check.  */
static uint64_t
s_buffer_floats (int rows, int cols)
{
    uint64_t floats = (uint64_t) rows * (uint64_t) cols;
    return (floats + S_ALIGN_FLOATS - 1) / S_ALIGN_FLOATS * S_ALIGN_FLOATS;
}

fasgd_model_ws_t *
fasgd_model_ws_new (const fasgd_model_t *self, int max_batch)
{
    if (max_batch < 1) {
        fasgd_log_error ("model: workspace batch size must be >= 1 (got %d)", max_batch);
        return NULL;
    }
    const int L = self->nlayers;
    int widest_hidden = 0;
    for (int l = 1; l < L; l++)
        if (self->spec.sizes [l] > widest_hidden)
            widest_hidden = self->spec.sizes [l];
    /*  At most 10 buffers of max_batch · 10^6 floats and a copy of W_1 of
        at most S_COMPACT_MAX_FLOATS: 64-bit arithmetic
        cannot overflow, and the bound below keeps byte counts in size_t on
        any platform.  */
    uint64_t floats = 0;
    for (int l = 1; l <= L; l++)
        floats += s_buffer_floats (max_batch, self->spec.sizes [l]);
    floats += s_buffer_floats (max_batch, widest_hidden);
    const int fan_in = self->spec.sizes [0];
    const int compacts = s_compacts (self);
    if (compacts) {
        floats += s_buffer_floats (max_batch, fan_in);
        floats += s_buffer_floats (fan_in, s_padded (self->spec.sizes [1]));
        floats += s_buffer_floats (max_batch, s_padded (self->spec.sizes [1]));
        floats += s_buffer_floats (1, fan_in);                  /* inked */
        floats += s_buffer_floats (2, fan_in / 2 + 1);          /* runs */
    }
    if (floats > (uint64_t) (SIZE_MAX / 2 / sizeof (float))) {
        fasgd_log_error ("model: workspace for batches of %d does not fit in memory", max_batch);
        return NULL;
    }

    fasgd_model_ws_t *ws = calloc (1, sizeof *ws);
    if (!ws) {
        fasgd_log_error ("model: out of memory");
        return NULL;
    }
    if (posix_memalign (&ws->block, S_ALIGN_FLOATS * sizeof (float),
                        (size_t) floats * sizeof (float)) != 0) {
        fasgd_log_error ("model: cannot allocate %llu bytes of workspace",
                         (unsigned long long) floats * sizeof (float));
        free (ws);
        return NULL;
    }
    ws->nsizes = self->spec.nsizes;
    memcpy (ws->sizes, self->spec.sizes, sizeof ws->sizes);
    ws->max_batch = max_batch;
    float *p = ws->block;
    for (int l = 1; l <= L; l++) {
        ws->act [l] = p;
        p += (size_t) s_buffer_floats (max_batch, self->spec.sizes [l]);
    }
    ws->delta = p;
    p += (size_t) s_buffer_floats (max_batch, widest_hidden);
    if (compacts) {
        ws->xc = p;
        p += (size_t) s_buffer_floats (max_batch, fan_in);
        ws->wc = p;
        p += (size_t) s_buffer_floats (fan_in, s_padded (self->spec.sizes [1]));
        ws->dzp = p;
        p += (size_t) s_buffer_floats (max_batch, s_padded (self->spec.sizes [1]));
        ws->inked = (uint32_t *) p;
        p += (size_t) s_buffer_floats (1, fan_in);
        ws->runs = (int *) p;
    }
    return ws;
}

void
fasgd_model_ws_destroy (fasgd_model_ws_t **self_p)
{
    if (self_p && *self_p) {
        free ((*self_p)->block);
        free (*self_p);
        *self_p = NULL;
    }
}

int
fasgd_model_ws_max_batch (const fasgd_model_ws_t *self)
{
    return self->max_batch;
}

int
fasgd_model_ws_columns (const fasgd_model_ws_t *self)
{
    return self->cols.kept ? self->cols.kept : self->cols.x ? self->sizes [0] : 0;
}

int
fasgd_model_ws_sparse (const fasgd_model_ws_t *self)
{
    return self->cols.sparse != NULL;
}

/*  Labels come from data files; a bad one must not index past the output
    row.  */
static int
s_labels_valid (const fasgd_model_t *self, const uint8_t *y, size_t n)
{
    const int k = fasgd_model_nclasses (self);
    if (k > UINT8_MAX)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (y [i] >= k)
            return 0;
    return 1;
}

static int
s_batch_ok (const fasgd_model_t *self, const fasgd_model_ws_t *ws, int n)
{
    /*  Handing a workspace to a model of other shapes is a bug in the
        caller, not bad input.  */
    (void) self;                /* read only by the assert */
    assert (ws->nsizes == self->spec.nsizes
         && memcmp (ws->sizes, self->spec.sizes, sizeof ws->sizes) == 0);
    if (n < 1 || n > ws->max_batch) {
        fasgd_log_error ("model: batch of %d examples, the workspace holds 1..%d",
                         n, ws->max_batch);
        return 0;
    }
    return 1;
}

static inline float
s_relu (float v)
{
    /*  Not v > 0 ? v : 0, which turns a NAN into 0: a NAN in θ must
        reach the loss.  */
    return v < 0.0f ? 0.0f : v;
}

/*  tanh from one expf: glibc's tanhf takes about 15 ns an element on the
    benchmark machine, 40% of a 784-100-10 gradient's time; this takes
    about 4 ns. Near 0, where 1 - 2/(e^2x + 1) would cancel, the Taylor
    series to x^7 is used instead (its first omitted term is below 2e-10
    for |x| < 1/8). Error against tanh in double: at most 2e-7 absolute,
    1e-6 relative. Saturates to ±1, keeps NAN.  */
static inline float
s_tanh (float x)
{
    float x2 = x * x;
    float series = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));
    float viaexp = 1.0f - 2.0f / (expf (2.0f * x) + 1.0f);
    return x2 < 0.015625f ? series : viaexp;
}

static void
s_activate (int activation, float *restrict z, size_t count)
{
    if (activation == FASGD_ACT_RELU) {
        size_t i = 0;
        for (; i + S_BLOCK <= count; i += S_BLOCK)
            for (int k = 0; k < S_BLOCK; k++)
                z [i + k] = s_relu (z [i + k]);
        for (; i < count; i++)
            z [i] = s_relu (z [i]);
    }
    else {
        for (size_t i = 0; i < count; i++)
            z [i] = s_tanh (z [i]);
    }
}

/*  inked [k] |= |x [k]|'s bits: nonzero once column k holds anything but
    ±0 (a NaN included, so that it reaches the loss).  */
static void
s_ink (uint32_t *restrict inked, const float *restrict x, int len)
{
    int k = 0;
    for (; k + S_BLOCK <= len; k += S_BLOCK)
        for (int j = 0; j < S_BLOCK; j++) {
            uint32_t bits;
            memcpy (&bits, x + k + j, sizeof bits);
            inked [k + j] |= bits & 0x7fffffffu;
        }
    for (; k < len; k++) {
        uint32_t bits;
        memcpy (&bits, x + k, sizeof bits);
        inked [k] |= bits & 0x7fffffffu;
    }
}

static int
s_count_inked (const uint32_t *inked, int len)
{
    int count = 0;
    for (int k = 0; k < len; k++)
        count += inked [k] != 0;
    return count;
}

/*  dst [0..len) = src [0..len), inline: the runs of a digit's inked pixels
    are a few dozen floats, too short to be worth a call to memcpy.  */
static inline void
s_copy_run (float *restrict dst, const float *restrict src, int len)
{
    int k = 0;
    for (; k + S_BLOCK <= len; k += S_BLOCK)
        for (int j = 0; j < S_BLOCK; j++)
            dst [k + j] = src [k + j];
    for (; k < len; k++)
        dst [k] = src [k];
}

/*  Finds the columns of x (n rows) that are inked in some example. When
    compaction pays, copies them to xc (n rows of kept) and returns their
    runs in runs (room for fan_in / 2 + 1 pairs); otherwise returns x as it
    is (kept 0). inked is scratch of fan_in words.  */
static s_cols_t
s_find_columns (const fasgd_model_t *self, const float *x, int n, uint32_t *inked, int *runs,
                float *xc)
{
    s_cols_t cols = { .x = x };
    if (n < S_COMPACT_MIN_BATCH)
        return cols;
    const int fan_in = self->spec.sizes [0];
    const int most = fan_in - fan_in / 8;
    memset (inked, 0, (size_t) fan_in * sizeof *inked);
    /*  The count is taken after rows 1, 2, 4, 8, ... and at the end, so a
        batch of dense inputs gives up after its first row.  */
    int kept = 0;
    for (int i = 0, check = 1; i < n; i++) {
        s_ink (inked, x + (size_t) i * fan_in, fan_in);
        if (i + 1 == check || i + 1 == n) {
            kept = s_count_inked (inked, fan_in);
            if (kept > most)
                return cols;
            if (kept == 0 && i + 1 == n)
                return cols;        /* nothing inked: nothing to gain */
            check *= 2;
        }
    }
    int nruns = 0;
    for (int k = 0; k < fan_in; ) {
        if (!inked [k]) {
            k++;
            continue;
        }
        int first = k;
        while (k < fan_in && inked [k])
            k++;
        runs [2 * nruns] = first;
        runs [2 * nruns + 1] = k - first;
        nruns++;
    }
    for (int i = 0; i < n; i++) {
        const float *src = x + (size_t) i * fan_in;
        float *dst = xc + (size_t) i * kept;
        for (int r = 0; r < nruns; r++) {
            s_copy_run (dst, src + runs [2 * r], runs [2 * r + 1]);
            dst += runs [2 * r + 1];
        }
    }
    return (s_cols_t) { .x = xc, .runs = runs, .nruns = nruns, .kept = kept };
}

/*  The blank columns before run r of cols (r = nruns: after the last
    run): [*first, the return value).  */
static int
s_blank_gap (const s_cols_t *cols, int r, int fan_in, int *first)
{
    *first = r > 0 ? cols->runs [2 * r - 2] + cols->runs [2 * r - 1] : 0;
    return r < cols->nruns ? cols->runs [2 * r] : fan_in;
}

/*  dW_1's rows of the blank columns of cols: 0.  */
static void
s_zero_blank_rows (const fasgd_model_t *self, const s_cols_t *cols, float *dw)
{
    const int fan_in = self->spec.sizes [0];
    const size_t row = (size_t) self->spec.sizes [1];
    for (int r = 0; r <= cols->nruns; r++) {
        int first, end = s_blank_gap (cols, r, fan_in, &first);
        memset (dw + (size_t) first * row, 0, (size_t) (end - first) * row * sizeof (float));
    }
}

/*  Copies W_1's kept rows to ws->wc: one after another, or for the sparse
    layer in rows of s_padded floats, the padding 0. Returns 0, copying
    nothing, when a blank column's weights hold a NaN or an infinity:
    0 · w would have taken it to the logits, so the pass must run in
    full.  */
static int
s_gather_w1 (const fasgd_model_t *self, fasgd_model_ws_t *ws, const float *theta,
             const s_cols_t *cols)
{
    const int fan_in = self->spec.sizes [0];
    const size_t row = (size_t) self->spec.sizes [1];
    const float *w = theta + self->tensors [0].offset;
    for (int r = 0; r <= cols->nruns; r++) {
        int first, end = s_blank_gap (cols, r, fan_in, &first);
        if (fasgd_floats_any_nonfinite (w + (size_t) first * row, (size_t) (end - first) * row))
            return 0;
    }
    float *wc = ws->wc;
    if (cols->sparse) {
        const size_t ld = (size_t) s_padded ((int) row);
        for (int r = 0; r < cols->nruns; r++) {
            const float *src = w + (size_t) cols->runs [2 * r] * row;
            for (int k = 0; k < cols->runs [2 * r + 1]; k++, src += row, wc += ld) {
                memcpy (wc, src, row * sizeof (float));
                memset (wc + row, 0, (ld - row) * sizeof (float));
            }
        }
        return 1;
    }
    for (int r = 0; r < cols->nruns; r++) {
        size_t count = (size_t) cols->runs [2 * r + 1] * row;
        memcpy (wc, w + (size_t) cols->runs [2 * r] * row, count * sizeof (float));
        wc += count;
    }
    return 1;
}

/*  dW_1 from the compacted dW_1 in ws->wc: the kept rows in place, zero
    rows for the blank columns.  */
static void
s_expand_dw (const fasgd_model_t *self, const fasgd_model_ws_t *ws, float *dw)
{
    const size_t row = (size_t) self->spec.sizes [1];
    const float *src = ws->wc;
    s_zero_blank_rows (self, &ws->cols, dw);
    for (int r = 0; r < ws->cols.nruns; r++) {
        int first = ws->cols.runs [2 * r], count = ws->cols.runs [2 * r + 1];
        memcpy (dw + (size_t) first * row, src, (size_t) count * row * sizeof (float));
        src += (size_t) count * row;
    }
}

/*  dW_1 on the sparse layer: dZ_1 (n rows of fan_out) is copied to rows
    of s_padded floats, then each kept column's row of dW_1 is summed from
    its nonzeros; blank columns' rows are 0.  */
static void
s_sparse_dw (const fasgd_model_t *self, fasgd_model_ws_t *ws, const float *dz, int n, float *dw)
{
    const int fan_out = self->spec.sizes [1];
    const int ld = s_padded (fan_out);
    const size_t row = (size_t) fan_out;
    for (int i = 0; i < n; i++) {
        memcpy (ws->dzp + (size_t) i * ld, dz + (size_t) i * row, row * sizeof (float));
        memset (ws->dzp + (size_t) i * ld + row, 0, (size_t) (ld - fan_out) * sizeof (float));
    }
    const s_sparse_t *sp = ws->cols.sparse;
    s_zero_blank_rows (self, &ws->cols, dw);
    int c = 0;                      /* the run's first kept-column index */
    for (int r = 0; r < ws->cols.nruns; r++) {
        int first = ws->cols.runs [2 * r], count = ws->cols.runs [2 * r + 1];
        s_sparse_rows (count, sp->col_ptr + c, sp->col_row, sp->col_val, ws->dzp, ld, fan_out,
                       NULL, dw + (size_t) first * row, fan_out);
        c += count;
    }
}

/*  A_l = act (A_{l-1} · W_l + b_l) for every layer; A_L holds the logits.
    The first layer takes x as `cols` gives it (prepared in a
    fasgd_model_batch_t), or as s_find_columns finds it when cols is NULL;
    ws->cols keeps what was multiplied, for the backward pass.  */
static void
s_forward (const fasgd_model_t *self, fasgd_model_ws_t *ws, const float *theta,
           const float *x, int n, const s_cols_t *cols)
{
    const int L = self->nlayers;
    if (cols)
        ws->cols = *cols;
    else if (ws->xc)
        ws->cols = s_find_columns (self, x, n, ws->inked, ws->runs, ws->xc);
    else
        ws->cols = (s_cols_t) { .x = x };
    if (ws->cols.kept && !s_gather_w1 (self, ws, theta, &ws->cols))
        ws->cols = (s_cols_t) { .x = x };
    if (ws->cols.sparse) {
        const int fan_out = self->spec.sizes [1];
        const s_sparse_t *sp = ws->cols.sparse;
        s_sparse_rows (n, sp->row_ptr, sp->row_col, sp->row_val, ws->wc, s_padded (fan_out),
                       fan_out, theta + self->tensors [1].offset, ws->act [1], fan_out);
        if (fasgd_floats_any_nonfinite (ws->act [1], (size_t) n * fan_out))
            ws->cols = (s_cols_t) { .x = x };
    }
    const int kept = ws->cols.kept;
    const float *in = ws->cols.x;
    for (int l = 1; l <= L; l++) {
        const int fan_in = l == 1 && kept ? kept : self->spec.sizes [l - 1];
        const int fan_out = self->spec.sizes [l];
        const float *w = l == 1 && kept ? ws->wc : theta + self->tensors [2 * (l - 1)].offset;
        const float *b = theta + self->tensors [2 * (l - 1) + 1].offset;
        float *z = ws->act [l];
        if (l == 1 && ws->cols.sparse) {
            if (l < L)
                s_activate (self->spec.activation, z, (size_t) n * fan_out);
            in = z;
            continue;
        }
        /*  The bias goes in as C with beta = 1, so no pass after the
            product has to add it.  */
        for (int i = 0; i < n; i++)
            memcpy (z + (size_t) i * fan_out, b, (size_t) fan_out * sizeof (float));
        cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, n, fan_out, fan_in,
                     1.0f, in, fan_in, w, fan_out, 1.0f, z, fan_out);
        if (l < L)
            s_activate (self->spec.activation, z, (size_t) n * fan_out);
        in = z;
    }
}

/*  Softmax NLL over the logits in z (n rows of k). When db is non-NULL, z
    is overwritten with dZ = (softmax - onehot) / n, the gradient of the
    batch mean, and db receives its column sums (the output bias
    gradient) in the same pass.  */
static double
s_softmax_nll (float *restrict z, const uint8_t *y, int n, int k,
               float *restrict db, int *nerrors)
{
    double nll = 0;
    int errors = 0;
    const float inv_n = 1.0f / (float) n;
    if (db)
        memset (db, 0, (size_t) k * sizeof (float));
    for (int i = 0; i < n; i++) {
        float *restrict row = z + (size_t) i * k;
        /*  Strict > keeps the first of tied maxima: ties go to the lowest
            index.  */
        float m = row [0];
        int arg = 0;
        for (int j = 1; j < k; j++)
            if (row [j] > m) {
                m = row [j];
                arg = j;
            }
        errors += arg != y [i];
        /*  Shifting by the row max makes the largest term exp (0) = 1, so
            the sum is >= 1: no overflow, and log (sum) - (z_y - max) is
            finite whatever the logits' scale (log-sum-exp).  */
        const double zy = (double) row [y [i]] - m;
        double sum = 0;
        if (db) {
            for (int j = 0; j < k; j++) {
                float e = expf (row [j] - m);
                row [j] = e;
                sum += e;
            }
            const float scale = (float) (1.0 / (sum * n));
            for (int j = 0; j < k; j++) {
                float g = row [j] * scale;
                row [j] = g;
                db [j] += g;
            }
            row [y [i]] -= inv_n;
            db [y [i]] -= inv_n;
        }
        else {
            for (int j = 0; j < k; j++)
                sum += expf (row [j] - m);
        }
        nll += log (sum) - zy;
    }
    if (nerrors)
        *nerrors = errors;
    return nll / n;
}

/*  act' as a function of the activation's output a, times the incoming
    gradient d: relu's is 1 where a > 0, tanh's is 1 - a².  */
static inline float
s_relu_grad (float a, float d)
{
    return a > 0.0f ? d : 0.0f;
}

static inline float
s_tanh_grad (float a, float d)
{
    return d * (1.0f - a * a);
}

/*  dZ_{l-1} = delta ⊙ act'(A_{l-1}), written over A_{l-1}, whose values
    are no longer needed once dW_l is formed; db receives the column sums.
    Both derivatives are functions of the activation's output, so the
    pre-activations need not be kept.  */
static void
s_backprop_activation (int activation, float *restrict a, const float *restrict delta,
                       int n, int width, float *restrict db)
{
    memset (db, 0, (size_t) width * sizeof (float));
    for (int i = 0; i < n; i++) {
        float *restrict arow = a + (size_t) i * width;
        const float *restrict drow = delta + (size_t) i * width;
        int j = 0;
        if (activation == FASGD_ACT_RELU) {
            for (; j + S_BLOCK <= width; j += S_BLOCK)
                for (int k = 0; k < S_BLOCK; k++) {
                    float g = s_relu_grad (arow [j + k], drow [j + k]);
                    arow [j + k] = g;
                    db [j + k] += g;
                }
            for (; j < width; j++) {
                float g = s_relu_grad (arow [j], drow [j]);
                arow [j] = g;
                db [j] += g;
            }
        }
        else {
            for (; j + S_BLOCK <= width; j += S_BLOCK)
                for (int k = 0; k < S_BLOCK; k++) {
                    float g = s_tanh_grad (arow [j + k], drow [j + k]);
                    arow [j + k] = g;
                    db [j + k] += g;
                }
            for (; j < width; j++) {
                float g = s_tanh_grad (arow [j], drow [j]);
                arow [j] = g;
                db [j] += g;
            }
        }
    }
}

static double
s_gradient (const fasgd_model_t *self, fasgd_model_ws_t *ws, const float *theta,
            const float *x, const uint8_t *y, int n, const s_cols_t *cols,
            float *grad, int *nerrors)
{
    if (!s_batch_ok (self, ws, n) || !s_labels_valid (self, y, (size_t) n))
        return NAN;
    const int L = self->nlayers;
    s_forward (self, ws, theta, x, n, cols);
    double nll = s_softmax_nll (ws->act [L], y, n, self->spec.sizes [L],
                                grad + self->tensors [2 * L - 1].offset, nerrors);

    /*  Invariant at the top of each iteration: act [l] holds dZ_l and
        b_l's gradient is in place.  */
    for (int l = L; l >= 1; l--) {
        const int fan_in = self->spec.sizes [l - 1];
        const int fan_out = self->spec.sizes [l];
        const float *in = l > 1 ? ws->act [l - 1] : x;
        const float *dz = ws->act [l];
        const float *w = theta + self->tensors [2 * (l - 1)].offset;
        float *dw = grad + self->tensors [2 * (l - 1)].offset;
        if (l == 1 && ws->cols.sparse) {
            s_sparse_dw (self, ws, dz, n, dw);
            break;
        }
        if (l == 1 && ws->cols.kept) {
            /*  dW_1's kept rows, from x's kept columns (into wc, whose
                copy of W_1 the forward pass was the last to need).  */
            cblas_sgemm (CblasRowMajor, CblasTrans, CblasNoTrans, ws->cols.kept, fan_out, n,
                         1.0f, ws->cols.x, ws->cols.kept, dz, fan_out, 0.0f, ws->wc, fan_out);
            s_expand_dw (self, ws, dw);
            break;
        }
        /*  dW_l = A_{l-1}ᵀ · dZ_l (fan_in x fan_out, like W_l).  */
        cblas_sgemm (CblasRowMajor, CblasTrans, CblasNoTrans, fan_in, fan_out, n,
                     1.0f, in, fan_in, dz, fan_out, 0.0f, dw, fan_out);
        if (l == 1)
            break;              /* nobody needs dX */
        /*  dA_{l-1} = dZ_l · W_lᵀ (n x fan_in).  */
        cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, n, fan_in, fan_out,
                     1.0f, dz, fan_out, w, fan_out, 0.0f, ws->delta, fan_in);
        s_backprop_activation (self->spec.activation, ws->act [l - 1], ws->delta,
                               n, fan_in, grad + self->tensors [2 * (l - 1) - 1].offset);
    }
    return nll;
}

double
fasgd_model_gradient (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                      const float *theta, const float *x, const uint8_t *y,
                      int n, float *grad, int *nerrors)
{
    return s_gradient (self, ws, theta, x, y, n, NULL, grad, nerrors);
}

static double
s_loss (const fasgd_model_t *self, fasgd_model_ws_t *ws, const float *theta,
        const float *x, const uint8_t *y, int n, const s_cols_t *cols, int *nerrors)
{
    if (!s_batch_ok (self, ws, n) || !s_labels_valid (self, y, (size_t) n))
        return NAN;
    s_forward (self, ws, theta, x, n, cols);
    return s_softmax_nll (ws->act [self->nlayers], y, n,
                          self->spec.sizes [self->nlayers], NULL, nerrors);
}

double
fasgd_model_loss (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                  const float *theta, const float *x, const uint8_t *y,
                  int n, int *nerrors)
{
    return s_loss (self, ws, theta, x, y, n, NULL, nerrors);
}

/*  Lists the nonzeros of a batch's kept columns (batch->xc; kept > 0,
    so the model compacts and its first layer is at least
    S_COMPACT_MIN_OUT wide) when they are few enough for the sparse layer
    to pay. Returns -1 when out of memory, else 0 (with or without the
    lists).  */
static int
s_sparse_new (fasgd_model_batch_t *batch)
{
    const int n = batch->n, kept = batch->cols.kept;
    if (!s_sparse_available ())
        return 0;
    const float *xc = batch->xc;
    int64_t nnz = 0;
    for (int64_t e = 0; e < (int64_t) n * kept; e++)
        nnz += xc [e] != 0.0f;      /* a NaN counts: it must reach the loss */
    if (nnz * 100 > (int64_t) S_SPARSE_MAX_PERCENT * n * kept || nnz > INT_MAX / 2)
        return 0;
    /*  One block: the int arrays, then the floats (both 4 bytes).  */
    size_t ints = (size_t) n + 1 + (size_t) kept + 1 + 2 * (size_t) nnz;
    int *block = malloc ((ints + 2 * (size_t) nnz) * sizeof (int));
    if (!block)
        return -1;
    s_sparse_t *sp = &batch->sparse;
    sp->row_ptr = block;
    sp->col_ptr = sp->row_ptr + n + 1;
    sp->row_col = sp->col_ptr + kept + 1;
    sp->col_row = sp->row_col + nnz;
    sp->row_val = (float *) (sp->col_row + nnz);
    sp->col_val = sp->row_val + nnz;
    int p = 0;
    memset (sp->col_ptr, 0, ((size_t) kept + 1) * sizeof (int));
    for (int i = 0; i < n; i++) {
        sp->row_ptr [i] = p;
        for (int c = 0; c < kept; c++) {
            float v = xc [(size_t) i * kept + c];
            if (v != 0.0f) {
                sp->row_col [p] = c;
                sp->row_val [p++] = v;
                sp->col_ptr [c + 1]++;
            }
        }
    }
    sp->row_ptr [n] = p;
    for (int c = 0; c < kept; c++)
        sp->col_ptr [c + 1] += sp->col_ptr [c];
    /*  By column, examples ascending: a pass over the rows in order.  */
    int *fill = malloc ((size_t) kept * sizeof *fill);
    if (!fill) {
        free (block);
        return -1;
    }
    memcpy (fill, sp->col_ptr, (size_t) kept * sizeof *fill);
    for (int i = 0; i < n; i++)
        for (int q = sp->row_ptr [i]; q < sp->row_ptr [i + 1]; q++) {
            int at = fill [sp->row_col [q]]++;
            sp->col_row [at] = i;
            sp->col_val [at] = sp->row_val [q];
        }
    free (fill);
    batch->sparse_block = block;
    batch->cols.sparse = sp;
    return 0;
}

fasgd_model_batch_t *
fasgd_model_batch_new (const fasgd_model_t *self, const float *x, const uint8_t *y, int n)
{
    if (n < 1) {
        fasgd_log_error ("model: a batch needs at least one example (got %d)", n);
        return NULL;
    }
    fasgd_model_batch_t *batch = calloc (1, sizeof *batch);
    if (!batch) {
        fasgd_log_error ("model: out of memory");
        return NULL;
    }
    batch->x = x;
    batch->y = y;
    batch->n = n;
    batch->cols = (s_cols_t) { .x = x };
    if (!s_compacts (self))
        return batch;
    const int fan_in = self->spec.sizes [0];
    uint32_t *inked = malloc ((size_t) fan_in * sizeof *inked);
    batch->runs = malloc ((size_t) (fan_in / 2 + 1) * 2 * sizeof *batch->runs);
    batch->xc = malloc ((size_t) n * (size_t) fan_in * sizeof (float));
    if (inked && batch->runs && batch->xc)
        batch->cols = s_find_columns (self, x, n, inked, batch->runs, batch->xc);
    free (inked);
    int ok = batch->runs && batch->xc;
    if (ok && !batch->cols.kept) {
        free (batch->xc);
        batch->xc = NULL;
    }
    else if (ok)
        ok = s_sparse_new (batch) == 0;
    if (!ok) {
        fasgd_log_error ("model: out of memory for a batch of %d", n);
        fasgd_model_batch_destroy (&batch);
        return NULL;
    }
    return batch;
}

void
fasgd_model_batch_destroy (fasgd_model_batch_t **self_p)
{
    if (self_p && *self_p) {
        free ((*self_p)->xc);
        free ((*self_p)->runs);
        free ((*self_p)->sparse_block);
        free (*self_p);
        *self_p = NULL;
    }
}

double
fasgd_model_batch_gradient (const fasgd_model_t *self, fasgd_model_ws_t *ws, const float *theta,
                            const fasgd_model_batch_t *batch, float *grad, int *nerrors)
{
    return s_gradient (self, ws, theta, batch->x, batch->y, batch->n, &batch->cols, grad,
                       nerrors);
}

double
fasgd_model_batch_loss (const fasgd_model_t *self, fasgd_model_ws_t *ws, const float *theta,
                        const fasgd_model_batch_t *batch, int *nerrors)
{
    return s_loss (self, ws, theta, batch->x, batch->y, batch->n, &batch->cols, nerrors);
}

void
fasgd_model_evaluate (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                      const float *theta, const float *x, const uint8_t *y,
                      size_t n, double *nll, double *error)
{
    /*  Labels are checked up front so that a NAN loss inside the loop can
        only mean NAN parameters, and the error count stays meaningful.  */
    if (n == 0 || !s_labels_valid (self, y, n)) {
        if (nll)
            *nll = NAN;
        if (error)
            *error = NAN;
        return;
    }
    const size_t dim = (size_t) fasgd_model_input_dim (self);
    double total = 0;
    size_t errors = 0;
    for (size_t done = 0; done < n; ) {
        size_t left = n - done;
        int chunk = left < (size_t) ws->max_batch ? (int) left : ws->max_batch;
        int e = 0;
        total += fasgd_model_loss (self, ws, theta, x + done * dim, y + done, chunk, &e)
               * chunk;
        errors += (size_t) e;
        done += (size_t) chunk;
    }
    if (nll)
        *nll = total / (double) n;
    if (error)
        *error = (double) errors / (double) n;
}
