/*  model: a fully connected network with softmax output, its parameter
    layout, initialisation, and the minibatch gradient of the mean negative
    log likelihood.

    The parameters θ are one contiguous float vector that the caller owns
    (the server's θ, a client's copy, the simulator's stale snapshots), so a
    model is only a description of shapes: it holds no parameters and no
    scratch, and one model is shared read-only by every thread. Each thread
    that computes gradients brings its own fasgd_model_ws_t.

    Layout of θ, for each weight layer l = 1..L in order:
        "w<l>"  rows = fan_in, cols = fan_out, row-major, so the layer
                computes X (n x fan_in) · W (fan_in x fan_out);
        "b<l>"  rows = 1, cols = fan_out.
    For 784-100-10 that is 784·100 + 100 + 100·10 + 10 = 79,510 floats.
    Hidden layers apply the spec's activation; the output layer is softmax.

    Calls go through cblas_sgemm on the whole minibatch. The library never
    sets OpenBLAS's thread count: the program decides (the simulator runs
    one gradient per thread with OPENBLAS_NUM_THREADS=1, a lone client may
    want all cores).
*/
#ifndef FASGD_MODEL_H_INCLUDED
#define FASGD_MODEL_H_INCLUDED

#include "rng.h"

#include <stddef.h>
#include <stdint.h>

#define FASGD_MODEL_MAX_LAYERS 8            /* weight layers */
#define FASGD_MODEL_MAX_WIDTH  1000000      /* units in any one layer */
/*  Most parameters of a model, all layers together: 2^28 - 1 floats, 1 GiB
    per copy of θ, of which a server holds several (θ and its snapshots,
    the gradient, the rule's statistics) and a client a few. The widths
    alone would allow 8·10^12; anything past this is refused before a byte
    is allocated, by fasgd_model_new and, for an external model, by the
    server.  */
#define FASGD_MODEL_MAX_PARAMS ((1ULL << 28) - 1)

typedef enum { FASGD_ACT_RELU = 0, FASGD_ACT_TANH } fasgd_activation_t;
typedef enum { FASGD_INIT_HE = 0, FASGD_INIT_GLOROT, FASGD_INIT_NORMAL } fasgd_init_t;

typedef struct {
    int nsizes;                     /* layer widths including input and
                                       output: 784-100-10 is 3 */
    int sizes [FASGD_MODEL_MAX_LAYERS + 1];
    int activation;                 /* fasgd_activation_t, hidden layers */
    int init;                       /* fasgd_init_t */
} fasgd_model_spec_t;

/*  A view into θ; biases have rows = 1.  */
typedef struct {
    char   name [16];
    size_t offset;                  /* in floats from the start of θ */
    int    rows, cols;
} fasgd_tensor_t;

typedef struct fasgd_model_t fasgd_model_t;
/*  Per-thread scratch for up to max_batch examples.  */
typedef struct fasgd_model_ws_t fasgd_model_ws_t;

/*  784-100-10, relu, he: the MNIST network of the experiments.  */
void fasgd_model_spec_default (fasgd_model_spec_t *spec);

/*  Parses a width list such as "784,100,10" into spec->sizes and
    spec->nsizes, leaving the other fields alone. Returns 0, or -1 with a
    message in err (which may be NULL) and spec untouched. Bounds are those
    of fasgd_model_new.  */
int fasgd_model_spec_parse_sizes (fasgd_model_spec_t *spec, const char *text,
                                  char *err, size_t errlen);

/*  "relu" / "tanh" and "he" / "glorot" / "normal"; parse returns -1 for
    anything else, name returns NULL for a value out of range.  */
/*  The names, indexed by value, NULL-terminated (for configuration tables).  */
extern const char *const fasgd_model_activation_names [];
extern const char *const fasgd_model_init_names [];
int fasgd_model_activation_parse (const char *name);
const char *fasgd_model_activation_name (int activation);
int fasgd_model_init_parse (const char *name);
const char *fasgd_model_init_name (int init);

/*  Validates the spec (2..FASGD_MODEL_MAX_LAYERS + 1 sizes, each
    1..FASGD_MODEL_MAX_WIDTH, known activation and init, at most
    FASGD_MODEL_MAX_PARAMS parameters) and returns a model, or NULL with the reason in err (which
    may be NULL).  */
fasgd_model_t *fasgd_model_new (const fasgd_model_spec_t *spec, char *err, size_t errlen);
void fasgd_model_destroy (fasgd_model_t **self_p);

/*  The spec the model was built from (borrowed).  */
const fasgd_model_spec_t *fasgd_model_spec (const fasgd_model_t *self);
size_t fasgd_model_nparams (const fasgd_model_t *self);
/*  Two per weight layer: w1, b1, w2, b2, ...  */
int fasgd_model_ntensors (const fasgd_model_t *self);
/*  Borrowed; NULL when i is out of range.  */
const fasgd_tensor_t *fasgd_model_tensor (const fasgd_model_t *self, int i);
/*  The tensors' sizes in floats, in θ's order, into sizes (at most max of
    them); returns how many tensors the model has.  */
int fasgd_model_tensor_sizes (const fasgd_model_t *self, uint64_t *sizes, int max);
int fasgd_model_input_dim (const fasgd_model_t *self);
int fasgd_model_nclasses (const fasgd_model_t *self);

/*  Floating-point operations of the matrix products in one call of
    fasgd_model_gradient on n examples: forward 2·n·in·out per layer,
    backward 2·n·in·out for every dW and for every dH but the input
    layer's. Elementwise work is not counted.  */
double fasgd_model_gradient_flops (const fasgd_model_t *self, int n);

/*  Fills θ (nparams floats). Weights:
        he      N(0, 2/fan_in)                  (relu)
        glorot  U(-a, a), a = sqrt(6/(fan_in + fan_out))   (tanh)
        normal  N(0, 1), unscaled: what the paper's reference code used.
    Biases are zero. Draws in layout order, so θ is a function of the
    rng's state alone.  */
void fasgd_model_init_params (const fasgd_model_t *self, float *theta, fasgd_rng_t *rng);

/*  Scratch for batches of up to max_batch examples: every activation and
    the backward pass's deltas, so a gradient allocates nothing. NULL (and
    a logged error) if max_batch < 1, the buffers would not fit in memory,
    or allocation fails. A workspace serves any model with the same sizes,
    one thread at a time.  */
fasgd_model_ws_t *fasgd_model_ws_new (const fasgd_model_t *self, int max_batch);
void fasgd_model_ws_destroy (fasgd_model_ws_t **self_p);
int fasgd_model_ws_max_batch (const fasgd_model_ws_t *self);

/*  Input columns that the last forward pass through this workspace
    multiplied. Columns that are ±0 in every example of a batch add nothing
    to the first layer, so when at least an eighth of them are (but not
    all), the first layer is at least 16 wide and the batch holds at least
    8 examples, its products run on the others alone (on MNIST at a batch of 128, about 527 of 784 pixels);
    the result is the same up to rounding. input_dim otherwise, and 0
    before any pass.  */
int fasgd_model_ws_columns (const fasgd_model_ws_t *self);

/*  1 if the last forward pass through this workspace ran its first layer
    on the nonzero inputs alone: a prepared batch (fasgd_model_batch_new)
    whose kept columns are at most 40% nonzero, on a processor with
    AVX-512, with no NaN or infinity in W_1 (docs/ALGORITHMS.md, "Sparse
    first layer"); the result is the same up to rounding. 0 otherwise.  */
int fasgd_model_ws_sparse (const fasgd_model_ws_t *self);

/*  Mean negative log likelihood of the batch (x: n rows of input_dim
    floats, y: n labels) under softmax, computed in double; grad (nparams
    floats) is overwritten with the gradient of that mean. *nerrors (may be
    NULL) receives the 0/1 error count: argmax != label, ties going to the
    lowest index. Returns NAN, touching nothing, when a label is
    >= nclasses or n is not in 1..max_batch.  */
double fasgd_model_gradient (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                             const float *theta, const float *x, const uint8_t *y,
                             int n, float *grad, int *nerrors);

/*  Forward only: mean NLL and error count, as fasgd_model_gradient.  */
double fasgd_model_loss (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                         const float *theta, const float *x, const uint8_t *y,
                         int n, int *nerrors);

/*  A batch made ready for many passes, for data that stay fixed (the
    simulator's minibatches and validation chunks): the search for blank
    input columns (fasgd_model_ws_columns), and the copy of the others, are
    done once here rather than at every pass. Borrows x (n rows of
    input_dim) and y (n labels), which must outlive it unchanged. NULL (and
    a logged error) if n < 1 or memory runs out. The passes give the same
    results as fasgd_model_gradient and fasgd_model_loss on x and y, up to
    rounding when the batch is sparse enough for fasgd_model_ws_sparse;
    either way the same bits every time.  */
typedef struct fasgd_model_batch_t fasgd_model_batch_t;
fasgd_model_batch_t *fasgd_model_batch_new (const fasgd_model_t *self, const float *x,
                                            const uint8_t *y, int n);
void fasgd_model_batch_destroy (fasgd_model_batch_t **self_p);
double fasgd_model_batch_gradient (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                                   const float *theta, const fasgd_model_batch_t *batch,
                                   float *grad, int *nerrors);
double fasgd_model_batch_loss (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                               const float *theta, const fasgd_model_batch_t *batch,
                               int *nerrors);

/*  Over n examples in chunks of the workspace's max_batch: mean NLL and
    error fraction (either pointer may be NULL). Both are NAN when n is 0
    or a label is >= nclasses.  */
void fasgd_model_evaluate (const fasgd_model_t *self, fasgd_model_ws_t *ws,
                           const float *theta, const float *x, const uint8_t *y,
                           size_t n, double *nll, double *error);

#endif
