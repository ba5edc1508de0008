/*  checkpoint: the checkpoint file of fasgd-server, written and read
    without a server, so that it can be tested and fuzzed on its own.

    A checkpoint holds θ, the timestamp T, the rule's mutable state
    (fasgd_rule_state_get), the guard's (the norms that bound the next
    pushes) and the staleness clock's (common/staleness.h: what the
    updates before T count for in τ), and the description of the model it belongs to: every
    tensor's name and shape, θ's length D, the rule and the state's
    length. A reader is given the description it expects and refuses a
    file that is truncated, carries trailing bytes, fails its checksum,
    describes another model or rule, or holds a non-finite value, an
    impossible T, an impossible guard state or an impossible clock;
    nothing of a refused file
    is handed out.

    The format, FASGDCK5, all integers little-endian:

        offset      bytes       field
        0           8           magic "FASGDCK5"
        8           4           H: the header's length, its checksum included
        12          4           rule kind (fasgd_rule_kind_t)
        16          8           T
        24          8           D: θ's length in floats
        32          8           S: the rule state's length in bytes
        40          4           k: the number of tensors, 1..64
        44          104·k       per tensor: name (32 bytes, NUL-padded),
                                ndim (4), 4 zero bytes, dims (8 × 8, unused 0)
        H − 4       4           crc32 of bytes 0 .. H − 4
        H           4·D         θ, float32
        H + 4·D     S           the rule state, in the writer's byte order
        H+4·D+S     G           the guard's state (G = 8232 bytes):
                                  4  m: accepted norms kept, 0..1024
                                  4  r: reference norms kept, 0..4
                                  8·1024  the m norms, oldest first,
                                          float64; the rest 0
                                  8·4     the r reference norms; the rest 0
        H+4·D+S+G   Q           the loss check's state and the keys'
                                records (Q = 16 + 88·1024 + 4·D):
                                  4  n: keys kept, 0..1024
                                  4  flags: 1 when a saved θ follows
                                  4  the check's rollbacks in a row, 0..64
                                  4  zero
                                  88·1024  per key: its CURVE key (40
                                     Z85 characters, NUL-padded to 48),
                                     then float64: its loss record, its
                                     verdict record's sum, count and
                                     pushes, its typical norm (0: none);
                                     the slots past n all 0
                                  4·D  the θ the loss check sets θ back
                                     to, float32 (all 0 without one)
        H+4·D+S+G+Q C           the staleness clock's state
                                (C = 8 + 8·c):
                                  4  c: running sums kept, 0..65,536
                                     (0 with guard.staleness: count)
                                  4  zero
                                  8·c  the running sums W[T − c + 1]
                                     .. W[T], oldest first, float64:
                                     finite, at least 0, each at least
                                     the one before and at most one
                                     above it, the last at most T;
                                     c at most T + 1
        H+4·D+S+G+Q+C  4        crc32 of every byte before it

    H = 48 + 104·k. The file's length follows from the header and c: at
    most 524,288 bytes of sums, which a reader allocates only once c and
    the file's length agree. The header has a checksum of its own so that its
    lengths are trusted before anything is allocated from them. crc32
    finds accidental damage (a torn write, a flipped bit); it is not a
    signature: whoever can write the file can forge it.

    The formats before are still read: FASGDCK4 is FASGDCK5 without C
    (the checkpoint then holds no clock: it starts anew at T, the updates
    before counting one each); FASGDCK3 is FASGDCK4 without Q
    (the checkpoint then holds no key's record and no saved θ: the keys'
    clients start anew); FASGDCK2 is FASGDCK3 without the guard's state
    (the server's guard then starts fresh).  */
#ifndef FASGD_CHECKPOINT_H_INCLUDED
#define FASGD_CHECKPOINT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define FASGD_CHECKPOINT_MAGIC "FASGDCK5"
#define FASGD_CHECKPOINT_MAX_TENSORS 64
#define FASGD_CHECKPOINT_MAX_DIMS 8
#define FASGD_CHECKPOINT_NAME_LEN 32
/*  The header without its tensors (its checksum included), and a tensor.  */
#define FASGD_CHECKPOINT_HEADER_FIXED 48
#define FASGD_CHECKPOINT_TENSOR_SIZE 104
/*  T counts updates: at a billion a second, 2^62 takes 146 years. A
    larger T is damage or forgery, and would soon wrap.  */
#define FASGD_CHECKPOINT_T_MAX ((uint64_t) 1 << 62)

/*  The guard's state (server/guard.c says what it is for): what bounds
    the first pushes after a restart.  */
#define FASGD_CHECKPOINT_GUARD_NORMS 1024
#define FASGD_CHECKPOINT_GUARD_REFS 4
#define FASGD_CHECKPOINT_GUARD_SIZE (8 + 8 * (FASGD_CHECKPOINT_GUARD_NORMS + FASGD_CHECKPOINT_GUARD_REFS))
/*  The largest norm a guard keeps: larger pushes are refused before
    they are counted.  */
#define FASGD_CHECKPOINT_GUARD_MAX 1e18

/*  The records of CURVE keys a checkpoint keeps (FASGDCK4), a key's
    length (Z85), the bytes one takes, and the loss check's part of the
    file without its saved θ.  */
#define FASGD_CHECKPOINT_GUARD_KEYS 1024
#define FASGD_CHECKPOINT_KEY_LEN 40
#define FASGD_CHECKPOINT_KEY_SIZE 88
#define FASGD_CHECKPOINT_LOSS_SIZE (16 + FASGD_CHECKPOINT_KEY_SIZE * FASGD_CHECKPOINT_GUARD_KEYS)
/*  The largest loss record (log) and rollbacks in a row kept.  */
#define FASGD_CHECKPOINT_RISE_MAX 1e6
#define FASGD_CHECKPOINT_ROLLBACKS_MAX 64

/*  The staleness clock's running sums a checkpoint keeps at most
    (FASGDCK5): common/staleness.h's window.  */
#define FASGD_CHECKPOINT_CLOCK_SUMS 65536

/*  What the guard knows of the clients of one CURVE key (server/guard.c):
    a client that joins with it again, after a restart too, starts from
    it and not anew.  */
typedef struct {
    char key [FASGD_CHECKPOINT_KEY_LEN + 1];    /* Z85, NUL-terminated */
    double rise;                                /* the loss check's record (log), |rise| ≤ 1e6 */
    double sum, count, pushes;                  /* the verdict's record (common/verdict.h) */
    double typical;                             /* its vote in the norm bound; 0: none */
} fasgd_checkpoint_key_t;

typedef struct {
    uint32_t nnorms;                                    /* accepted pushes' norms, */
    double norms [FASGD_CHECKPOINT_GUARD_NORMS];        /* oldest first */
    uint32_t nrefs;                                     /* the last reference gradients' norms */
    double refs [FASGD_CHECKPOINT_GUARD_REFS];
    /*  FASGDCK4: the keys' records, and the loss check's rollbacks in a
        row (its saved θ is fasgd_checkpoint_t's saved).  */
    uint32_t nkeys;
    fasgd_checkpoint_key_t keys [FASGD_CHECKPOINT_GUARD_KEYS];
    uint32_t rollbacks;
} fasgd_checkpoint_guard_t;

typedef struct {
    char name [FASGD_CHECKPOINT_NAME_LEN];      /* [A-Za-z0-9_.-], NUL-terminated */
    uint32_t ndim;                              /* 1..FASGD_CHECKPOINT_MAX_DIMS */
    uint64_t dims [FASGD_CHECKPOINT_MAX_DIMS];  /* each >= 1; unused ones 0 */
} fasgd_checkpoint_tensor_t;

/*  What a checkpoint belongs to. The server builds it from its model (or
    external.tensors) and its rule; the tensors' sizes add up to params.  */
typedef struct {
    int rule;                   /* fasgd_rule_kind_t */
    uint64_t params;            /* D */
    uint64_t state_len;         /* fasgd_rule_state_size of the rule */
    int ntensors;
    fasgd_checkpoint_tensor_t tensors [FASGD_CHECKPOINT_MAX_TENSORS];
} fasgd_checkpoint_desc_t;

/*  A checkpoint read back and checked.  */
typedef struct {
    uint64_t T;
    float *theta;               /* params floats, finite */
    size_t n;
    void *state;                /* state_len bytes, accepted by fasgd_rule_state_check */
    size_t state_len;
    int has_guard;              /* 0: a FASGDCK2 file, which has no guard state */
    int has_keys;               /* 0: a FASGDCK3 or FASGDCK2 file: no keys' records, no saved θ */
    fasgd_checkpoint_guard_t guard;     /* accepted by fasgd_checkpoint_guard_check */
    float *saved;               /* the loss check's saved θ (n floats, finite); NULL: none */
    int has_clock;              /* 0: a file before FASGDCK5, which holds no staleness clock */
    size_t nclock;              /* the clock's running sums, 0..FASGD_CHECKPOINT_CLOCK_SUMS */
    double *clock;              /* W[T − nclock + 1 .. T], accepted by fasgd_checkpoint_clock_check;
                                   NULL when nclock is 0 */
} fasgd_checkpoint_t;

/*  Checks that desc is well formed (names, shapes, sizes adding up to
    params). Returns 0, or -1 with the reason in err.  */
int fasgd_checkpoint_desc_check (const fasgd_checkpoint_desc_t *desc, char *err, size_t errlen);

/*  Checks a guard state: counts within their arrays, every norm kept
    finite and in [0, FASGD_CHECKPOINT_GUARD_MAX], every key 40 Z85
    characters with finite records (pushes and count not negative, the
    typical norm a norm, the rise within ±FASGD_CHECKPOINT_RISE_MAX),
    rollbacks at most FASGD_CHECKPOINT_ROLLBACKS_MAX, every slot past the
    counts 0. Returns 0, or -1 with the reason in err.  */
int fasgd_checkpoint_guard_check (const fasgd_checkpoint_guard_t *guard, char *err, size_t errlen);

/*  Checks the staleness clock's n running sums at T (W[T − n + 1 .. T],
    fasgd_staleness_sums): n at most FASGD_CHECKPOINT_CLOCK_SUMS and T + 1,
    every sum finite and not negative, each at least the one before and
    at most one above it (an update counts at most one), the last at most
    T. Returns 0, or -1 with the reason in err.  */
int fasgd_checkpoint_clock_check (uint64_t T, const double *w, size_t n, char *err, size_t errlen);

/*  Writes a checkpoint to path, safely against crashes and planted
    files: path.tmp is unlinked (unlink never follows a link), created
    with O_EXCL and O_NOFOLLOW, written, fsync'd, renamed over path, and
    the folder fsync'd; on any failure path is left as it was and path.tmp
    removed. theta holds n = desc->params floats and state state_len =
    desc->state_len bytes, guard the guard's state (NULL: an empty
    one), saved the loss check's saved θ (n floats; NULL: none) and clock
    the staleness clock's nclock running sums (NULL and 0: none); a
    non-finite θ, saved θ or state, a guard state that
    fasgd_checkpoint_guard_check refuses, a clock that
    fasgd_checkpoint_clock_check refuses, or T above
    FASGD_CHECKPOINT_T_MAX, is refused rather than written (a reader would
    refuse it). Returns 0, or -1 with the cause, naming the file, in err.  */
int fasgd_checkpoint_write (const char *path, const fasgd_checkpoint_desc_t *desc, uint64_t T,
                            const float *theta, size_t n, const void *state, size_t state_len,
                            const fasgd_checkpoint_guard_t *guard, const float *saved, const double *clock,
                            size_t nclock, char *err, size_t errlen);

/*  Reads the checkpoint at path, expecting the model and rule of expect.
    Returns a new checkpoint (the caller destroys it), or NULL with the
    cause in err (which does not repeat the path).  */
fasgd_checkpoint_t *fasgd_checkpoint_read (const char *path, const fasgd_checkpoint_desc_t *expect,
                                           char *err, size_t errlen);

/*  As fasgd_checkpoint_read, from len bytes at data and without touching
    the disk: for tests and fuzzers. data need not be aligned, and may be
    NULL when len is 0. Whatever data holds, this allocates at most what
    expect describes (θ, the state, a saved θ) and the clock's sums (at
    most 512 KiB), and only once the header's checksum and its lengths
    agree with expect, and the clock's count with the length.  */
fasgd_checkpoint_t *fasgd_checkpoint_parse (const void *data, size_t len, const fasgd_checkpoint_desc_t *expect,
                                            char *err, size_t errlen);

/*  Frees the checkpoint; accepts NULL and a pointer to NULL, nulls *self_p.  */
void fasgd_checkpoint_destroy (fasgd_checkpoint_t **self_p);

#endif
