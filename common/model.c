/*  model: fully connected softmax network, forward and backward on a
    minibatch with cblas_sgemm.

    Conventions inside this file: layer l = 1..L maps width sizes[l-1] (fan
    in) to sizes[l] (fan out); A_0 is the caller's input x and A_l (n rows
    of sizes[l]) lives in the workspace. The backward pass reuses A_l to
    hold dZ_l, the gradient of the mean NLL with respect to layer l's
    pre-activation, once A_l's values are no longer needed.  */
#include "model.h"
#include "log.h"

#include <assert.h>
#include <cblas.h>
#include <errno.h>
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

struct fasgd_model_ws_t {
    /*  The widths the buffers were sized for: a workspace fits any model
        with the same shapes.  */
    int nsizes;
    int sizes [FASGD_MODEL_MAX_LAYERS + 1];
    int max_batch;
    float *act [FASGD_MODEL_MAX_LAYERS + 1];    /* act [l], l = 1..L */
    float *delta;                   /* dZ_l · W_lᵀ, before act' is applied */
    void *block;                    /* one allocation holds every buffer */
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
        for the sum. The 2^31 limit keeps every offset and every count on
        the wire in an int32 and θ itself under 8 GiB.  */
    uint64_t total = 0;
    for (int l = 1; l < spec->nsizes; l++)
        total += (uint64_t) spec->sizes [l - 1] * (uint64_t) spec->sizes [l]
               + (uint64_t) spec->sizes [l];
    if (total >= (1ULL << 31)) {
        fasgd_errbuf (err, errlen, "model has %llu parameters, the limit is %llu",
                 (unsigned long long) total, (unsigned long long) (1ULL << 31) - 1);
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
    /*  At most 9 buffers of max_batch · 10^6 floats: 64-bit arithmetic
        cannot overflow, and the bound below keeps byte counts in size_t on
        any platform.  */
    uint64_t floats = 0;
    for (int l = 1; l <= L; l++)
        floats += s_buffer_floats (max_batch, self->spec.sizes [l]);
    floats += s_buffer_floats (max_batch, widest_hidden);
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

/*  A_l = act (A_{l-1} · W_l + b_l) for every layer; A_L holds the logits.  */
static void
s_forward (const fasgd_model_t *self, fasgd_model_ws_t *ws, const float *theta,
           const float *x, int n)
{
    const int L = self->nlayers;
    const float *in = x;
    for (int l = 1; l <= L; l++) {
        const int fan_in = self->spec.sizes [l - 1];
        const int fan_out = self->spec.sizes [l];
        const float *w = theta + self->tensors [2 * (l - 1)].offset;
        const float *b = theta + self->tensors [2 * (l - 1) + 1].offset;
        float *z = ws->act [l];
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

double
fasgd_model_gradient (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                      const float *theta, const float *x, const uint8_t *y,
                      int n, float *grad, int *nerrors)
{
    if (!s_batch_ok (self, ws, n) || !s_labels_valid (self, y, (size_t) n))
        return NAN;
    const int L = self->nlayers;
    s_forward (self, ws, theta, x, n);
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
fasgd_model_loss (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                  const float *theta, const float *x, const uint8_t *y,
                  int n, int *nerrors)
{
    if (!s_batch_ok (self, ws, n) || !s_labels_valid (self, y, (size_t) n))
        return NAN;
    s_forward (self, ws, theta, x, n);
    return s_softmax_nll (ws->act [self->nlayers], y, n,
                          self->spec.sizes [self->nlayers], NULL, nerrors);
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
