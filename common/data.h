/*  data: labelled image sets in memory, the IDX loader that fills them, and
    the minibatch order a client walks through its share.

    IDX is the format of LeCun's MNIST files and of every drop-in
    replacement (Fashion-MNIST, KMNIST): a big-endian header (magic
    0x00000803 for ubyte images with 3 dimensions, 0x00000801 for ubyte
    labels with 1) followed by the raw bytes. The loader trusts nothing in
    the header: it reads the header alone (through zlib, so a .gz and a
    plain file are the same to it), and checks what it claims (magic,
    dimensions, and the bytes they add up to) against FASGD_DATA_MAX_BYTES
    and, for a plain file, against the file's size, before reading a byte
    of the body. A gzip stream is read into a buffer that grows with what
    it yields, never past the claim, and is refused as soon as it goes
    beyond it; anything but a regular file (a FIFO, /dev/zero) is refused
    at once. A lying or corrupt file is an error message, never a huge
    allocation, a long read or a crash.

    Shuffles draw from common/rng.h, so a given seed gives the same order on
    every platform, which keeps simulator runs and networked runs
    comparable.
*/
#ifndef FASGD_DATA_H_INCLUDED
#define FASGD_DATA_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/*  Debian's dataset-fashion-mnist installs the four .gz files here.  */
#define FASGD_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

/*  Cap on one decompressed file, header included: MNIST-sized sets are
    tens of megabytes, the largest IDX sets (EMNIST) about 550 MB; the cap
    bounds what a header can make us read and allocate (four times as much
    again as floats).  */
#define FASGD_DATA_MAX_BYTES ((uint64_t) 1 << 30)

/*  Largest accepted image side; real sets use 28, anything past this is a
    corrupt header rather than a picture.  */
#define FASGD_DATA_MAX_SIDE 4096

/*  rng streams (PCG increments) used with the caller's seed, so that a
    client which seeds both its data shuffle and its batcher from one
    number gets two unrelated permutations.  */
#define FASGD_DATA_SHUFFLE_STREAM  0x64617461u     /* "data" */
#define FASGD_DATA_BATCHER_STREAM  0x62617463u     /* "batc" */

typedef struct {
    uint32_t n;          /* examples */
    uint32_t rows, cols; /* image shape */
    uint32_t dim;        /* rows * cols */
    uint32_t nclasses;   /* max label + 1 */
    float   *x;          /* n * dim floats, row-major, pixels scaled to [0, 1] (byte / 255) */
    uint8_t *y;          /* n labels */
} fasgd_dataset_t;

/*  Loads an IDX image file (magic 0x00000803, ubyte, 3 dims) and an IDX
    label file (0x00000801), each plain or gzip. max_examples = 0 means all,
    else the first max_examples. nclasses is max label + 1 over the whole
    label file, so a truncated training set keeps the problem's class
    count. On failure returns NULL and writes a one-line message naming the
    file and the cause into err (errlen bytes; err may be NULL).  */
fasgd_dataset_t *
    fasgd_dataset_load_idx (const char *images, const char *labels,
                            uint32_t max_examples, char *err, size_t errlen);

/*  Looks in dir for {prefix}-images-idx3-ubyte[.gz] and
    {prefix}-labels-idx1-ubyte[.gz] (also the '{prefix}-images.idx3-ubyte'
    spelling some mirrors use); prefix is e.g. "train" or "t10k". The plain
    name wins over .gz, the dash spelling over the dot. Errors as
    fasgd_dataset_load_idx, plus one naming the names tried when a file is
    not found.  */
fasgd_dataset_t *
    fasgd_dataset_load_dir (const char *dir, const char *prefix,
                            uint32_t max_examples, char *err, size_t errlen);

/*  A zeroed set of n images of rows x cols, nclasses 0. NULL when any
    argument is 0, rows or cols exceed FASGD_DATA_MAX_SIDE, or memory runs
    out.  */
fasgd_dataset_t *
    fasgd_dataset_new (uint32_t n, uint32_t rows, uint32_t cols);

/*  A copy of examples [start, start + count), keeping src's nclasses. NULL
    if count is 0, the range is out of bounds, or memory runs out.  */
fasgd_dataset_t *
    fasgd_dataset_slice (const fasgd_dataset_t *src, uint32_t start, uint32_t count);

/*  Permutes examples in place, deterministic given seed: afterwards
    example k is the old example a [k], where a is an identity array put
    through fasgd_rng_shuffle seeded with (seed, FASGD_DATA_SHUFFLE_STREAM).
    Swaps rows without allocating, so it cannot fail on a set that already
    fills most of memory.  */
void fasgd_dataset_shuffle (fasgd_dataset_t *self, uint64_t seed);

/*  Copies examples idx [0..n) into x (n * dim floats) and y (n labels);
    either output may be NULL. Every index must be < self->n.  */
void fasgd_dataset_gather (const fasgd_dataset_t *self, const uint32_t *idx,
                           uint32_t n, float *x, uint8_t *y);

void fasgd_dataset_destroy (fasgd_dataset_t **self_p);

/*  Minibatch order for a client walking its own data.  */
typedef struct fasgd_batcher_t fasgd_batcher_t;

/*  shuffle = 0: batches in order, batch k = examples [k*batch, (k+1)*batch)
    with floor(n/batch) batches per epoch, wrapping; shuffle != 0: a fresh
    permutation each epoch drawn from seed, floor(n/batch) full batches per
    epoch (the remainder, different each epoch, is skipped). NULL if
    batch == 0 or batch > n.  */
fasgd_batcher_t *
    fasgd_batcher_new (uint32_t n, uint32_t batch, uint64_t seed, int shuffle);

/*  Borrowed: `batch` indices, valid until the next call.  */
const uint32_t *
    fasgd_batcher_next (fasgd_batcher_t *self);

/*  Epoch of the batch the last fasgd_batcher_next returned, counting from
    0 (also 0 before the first call).  */
uint64_t fasgd_batcher_epoch (const fasgd_batcher_t *self);

/*  Batches per epoch, floor(n / batch).  */
uint32_t fasgd_batcher_per_epoch (const fasgd_batcher_t *self);

void fasgd_batcher_destroy (fasgd_batcher_t **self_p);

#endif
