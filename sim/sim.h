/*  sim: the deterministic single-machine simulator of asynchronous SGD.

    λ simulated clients each hold a (possibly stale) copy of θ with its
    timestamp. In `iterations` mode each iteration picks one non-blocked
    client with a seeded generator (uniform, or weighted by per-client
    speeds); the client computes a minibatch gradient on its copy, pushes
    it through its push gate, the server applies the rule, and the client
    fetches through its fetch gate (ALGORITHMS.md, "Simulation order"). In
    `events` mode clients have compute times and share the server's link
    of a given bandwidth and latency, so the run also yields simulated wall
    time and bytes moved.

    Both modes are deterministic: the client picks, each client's gates and
    its compute times draw from separate streams of the seed, and gradients
    computed ahead on several threads are applied in the same order as on
    one, so the output is byte-identical whatever the thread count.

    Copies of θ are shared: every client holding timestamp T points at one
    reference-counted snapshot of it, and the server's θ is that snapshot
    until the next update, which writes the new θ into a fresh one rather
    than copying θ at each fetch.  */
#ifndef FASGD_SIM_H_INCLUDED
#define FASGD_SIM_H_INCLUDED

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "settings.h"

typedef enum { FASGD_SIM_ITERATIONS = 0, FASGD_SIM_EVENTS } fasgd_sim_mode_t;
typedef enum { FASGD_SIM_SPEED_EQUAL = 0, FASGD_SIM_SPEED_LOGNORMAL } fasgd_sim_speed_t;
typedef enum { FASGD_SIM_TIME_FIXED = 0, FASGD_SIM_TIME_EXPONENTIAL, FASGD_SIM_TIME_LOGNORMAL } fasgd_sim_time_t;
/*  How the model is split across servers: one server, a shard per weight
    layer (its weights and bias), or a shard per tensor.  */
typedef enum { FASGD_SIM_SHARDS_ONE = 0, FASGD_SIM_SHARDS_LAYER, FASGD_SIM_SHARDS_TENSOR,
               FASGD_SIM_SHARDS_SPLIT } fasgd_sim_shards_t;

/*  The random stream of the seed that draws the initial parameters.  */
#define FASGD_SIM_STREAM_INIT 2

/*  Validation runs in chunks of this many examples, whatever the thread
    count, so its sums are the same on any number of threads.  */
#define FASGD_SIM_EVAL_CHUNK 500

/*  Nominal size of a message header on the wire, for byte counts.  */
#define FASGD_SIM_HEADER_BYTES 32

typedef struct {
    uint64_t seed;
    uint64_t iterations;            /* gradients computed in the whole run */
    int clients;                    /* λ */
    int batch;                      /* μ */
    int threads;                    /* 0: all cores */
    int mode;                       /* fasgd_sim_mode_t */
    int speed;                      /* fasgd_sim_speed_t: per-client speed weights */
    double speed_sigma;
    double compute_time;            /* events: seconds per gradient at speed 1 */
    int compute_dist;               /* fasgd_sim_time_t */
    double compute_sigma;
    double bandwidth;               /* events: bytes/s of the server's link; 0 unlimited */
    double latency;                 /* events: one-way seconds */
    int eval_every;                 /* validate every this many timestamps */
    char csv [FASGD_PATH_LEN];      /* "" : no CSV; "-": stdout */
    int progress;                   /* 0 off, 1 on a terminal, 2 always */
    fasgd_model_cfg_t model;
    fasgd_rule_cfg_t rule;
    fasgd_gates_cfg_t gates;
    int wire_push, wire_params;     /* fasgd_wire_t (common/wire.h) */
    int shards;                     /* fasgd_sim_shards_t */
    int shard_count;                /* split: the daemons' shard.count */
    int staleness;                  /* fasgd_staleness_kind_t: what τ counts */
    fasgd_data_cfg_t data;
} fasgd_sim_cfg_t;

extern const fasgd_cfg_key_t fasgd_sim_cfg_keys [];

typedef struct {
    uint64_t iterations;            /* gradients computed */
    uint64_t timestamp;             /* T */
    double sim_time;                /* events mode, seconds */
    uint64_t fetches, potential_fetches;
    uint64_t pushes, potential_pushes;  /* full gradients sent, opportunities */
    uint64_t repeats;               /* resend-last headers sent */
    uint64_t rejected;              /* non-finite gradients refused by the rule */
    uint64_t bytes;                 /* both directions */
    double tau_mean;
    uint64_t tau_max;
    double val_error, val_nll;      /* last evaluation */
    double test_error, test_nll;    /* the same θ on the test set, if any */
    double best_error;
    uint64_t evaluations;
    size_t peak_snapshots;          /* most θ copies alive at once, the
                                       server's own included */
} fasgd_sim_stats_t;

typedef struct fasgd_sim_t fasgd_sim_t;

/*  Builds a simulation over borrowed data sets (they must outlive it).
    Returns NULL after logging the cause.  */
fasgd_sim_t *fasgd_sim_new (const fasgd_sim_cfg_t *cfg, const fasgd_dataset_t *train,
                            const fasgd_dataset_t *valid);
void fasgd_sim_destroy (fasgd_sim_t **self_p);

/*  Gives the simulation a test set (borrowed, like the others), evaluated
    beside the validation set at every row: the CSV gets test_error and
    test_nll columns. Call before fasgd_sim_run. Returns -1 after logging
    the cause (its images do not fit the model, out of memory).  */
int fasgd_sim_set_test (fasgd_sim_t *self, const fasgd_dataset_t *test);

/*  Runs to the end. Writes the CSV header and a row per evaluation to csv
    (may be NULL); progress, if enabled, goes to stderr. 0 on success.  */
int fasgd_sim_run (fasgd_sim_t *self, FILE *csv);

const fasgd_sim_stats_t *fasgd_sim_stats (const fasgd_sim_t *self);
/*  The server's θ (borrowed).  */
const float *fasgd_sim_theta (const fasgd_sim_t *self);
size_t fasgd_sim_nparams (const fasgd_sim_t *self);

/*  The gates of client k's view of shard s (0 without shards) as the
    simulator sets them up from cfg: each gate on a stream of its own, the
    client holding θ at T = 0 (so its first fetch is gated, not forced).  */
void fasgd_sim_gates_init (const fasgd_sim_cfg_t *cfg, int k, int s, fasgd_gates_t *gates);

/*  Asks a running fasgd_sim_run to stop after the current iteration (from a
    signal handler).  */
void fasgd_sim_interrupt (fasgd_sim_t *self);

#endif
