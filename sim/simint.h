/*  simint: the simulator's state, shared by the files of sim/ (sim.c:
    clients, iterations and events modes; shards.c: the model split across
    several servers). Not an interface: nothing outside sim/ includes it.  */
#ifndef FASGD_SIMINT_H_INCLUDED
#define FASGD_SIMINT_H_INCLUDED

#include "sim.h"

#include "gates.h"
#include "model.h"
#include "rng.h"
#include "rules.h"
#include "snapshot.h"
#include "staleness.h"
#include "verdict.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/*  Separate random streams of the one seed: the picks never depend on
    gates or rules, so runs that differ only there see the same clients in
    the same order, and picks can be known ahead.  */
#define S_STREAM_PICKS    1
#define S_STREAM_INIT     FASGD_SIM_STREAM_INIT
#define S_STREAM_SPEEDS   3
#define S_STREAM_GATES    0x1000        /* + 4 * client + {0 push, 1 fetch, 2 compute} */
/*  Streams of shard s > 0's gates: far above every stream of shard 0
    (S_STREAM_GATES + 4 · client + ...), so shard 0's are those of the
    unsharded simulator.  */
#define S_SHARD_STREAM_SHIFT 40

/*  Iterations whose gradients may be computed ahead of the server.  */
#define S_WINDOW 64
#define S_EVAL_CHUNK FASGD_SIM_EVAL_CHUNK

/*  Copies of θ are snapshots (common/snapshot.h), one per timestamp,
    shared by every client that holds it. The server's own θ is a snapshot
    too (`current`): a fetch only takes a reference, and an update writes
    the new θ into a fresh buffer while anyone else holds the old one, or
    in place when nobody does. So a copy is immutable once a client holds
    it, and no update copies θ.  */

/*  With shards (shards.c): what a client holds of shard s, a copy of the
    shard's part [off, off + n) of θ; the client computes on its views'
    parts put together.  */
typedef struct {
    fasgd_snapshot_t *snap;     /* of the shard's pool: n floats */
    uint64_t j;                 /* the shard's timestamp when it fetched */
    double vbar;                /* the shard's v̄ in its last answer */
    fasgd_gates_t gates;        /* accumulate: skipped parts summed in the client's accum */
    int has_last;               /* resend-last: the shard holds its last part */
    uint64_t last_ts;
} s_view_t;

/*  The staleness clock (staleness.c) and, with movement, what it
    counts against: each client's typical norm, and ν their median.  */
typedef struct {
    fasgd_staleness_clock_t *clock;
    double *typical;            /* per client */
    uint8_t *voted;             /* per client: it has pushed */
    fasgd_verdict_weighted_t *votes;    /* scratch for the median, weight 1 each */
    int nclients, nvoters, since_median;
    double nu;                  /* the lower median of the typical norms; 0 before any */
} s_stale_t;

/*  One shard of the server: its part of θ, its own rule (state and v̄) and
    its own timestamp. Its part lives in snapshots of its own (n floats),
    shared with the clients that fetched it as the whole θ is without
    shards; the server's whole θ (`current`) is put together from them
    when it is validated or asked for.  */
typedef struct {
    size_t off, n;
    fasgd_rule_t *rule;
    uint64_t T;
    fasgd_snapshot_pool_t *pool;
    fasgd_snapshot_t *current;
    s_stale_t stale;            /* its own staleness clock */
} s_shard_t;

typedef struct {
    fasgd_snapshot_t *snap;             /* the parameters it computes on (NULL with shards: views) */
    fasgd_snapshot_t *used;             /* wire.params rounded, θ_used rules: the server's float32 θ of its fetch */
    float *residual;                    /* wire.push rounded: what rounding left out of its pushes */
    double vbar;                /* the last v̄ the server sent it */
    fasgd_gates_t gates;
    fasgd_rng_t compute_rng;
    int blocked;                /* softsync: waiting for its group */
    float *last;                /* resend-last: the server's copy of its last gradient */
    uint64_t last_ts;
    float *accum;               /* accumulate: skipped gradients, summed */
    double speed;
    uint64_t iter;              /* events: the gradient it is computing */
    double vbar_in_flight;      /* events: v̄ on the ack travelling to it */
    s_view_t *views;            /* shards: one per shard */
} s_client_t;

typedef enum { S_EV_COMPUTE_DONE, S_EV_PUSH_ARRIVE, S_EV_ACK, S_EV_FETCH_REQ, S_EV_FETCH_DONE } s_ev_type_t;

typedef struct {
    double time;
    uint64_t seq;               /* ties go to the earlier event: deterministic */
    int client;
    int type;
    int repeat;                 /* a resend-last header rather than a gradient */
    fasgd_snapshot_t *snap;             /* the parameters a fetch reply carries */
    fasgd_snapshot_t *used;             /* ... and, rounded, the float32 θ they came from (θ_used rules) */
} s_event_t;

typedef struct {
    double free_at;
} s_link_t;

struct fasgd_sim_t;

/*  The thread pool: the main thread posts a batch of tasks and takes part
    in running them.  */
typedef struct {
    struct fasgd_sim_t *sim;
    int id;
    pthread_t thread;
    fasgd_model_ws_t *ws;
    float *theta;               /* shards: a client's views put together */
    double nll_part, err_part;
} s_worker_t;

/*  One iteration in the look-ahead window.  */
typedef enum { S_SLOT_PICKED, S_SLOT_COMPUTING, S_SLOT_READY } s_slot_state_t;
typedef struct {
    uint64_t iter;
    int client;
    int64_t prev;               /* the client's previous iteration, or -1 */
    int state;
    float *grad;
} s_slot_t;

struct fasgd_sim_t {
    fasgd_sim_cfg_t cfg;
    const fasgd_dataset_t *train, *valid;
    fasgd_model_t *model;
    fasgd_rule_t *rule;
    s_shard_t *shards;          /* shards other than `one`: nshards of them, else NULL */
    int nshards;
    size_t n;                   /* parameters */
    uint64_t T;
    uint64_t nbatches;          /* minibatches in the training set */
    fasgd_model_batch_t **batches;      /* each made ready once: nbatches, then nchunks */
    int needs_used;             /* rule wants θ_used */
    int sync;                   /* softsync: clients block */

    s_client_t *clients;
    double *speed_cum;          /* cumulative speeds for weighted picks, or NULL */
    fasgd_rng_t picks;

    fasgd_snapshot_t *current;          /* the server's θ at T; one reference is the server's */
    fasgd_snapshot_pool_t *snaps;

    float *grad;                /* one gradient (sequential path) */
    float *scratch;             /* accumulate: the sum to send */
    /*  The compact wire: θ at wire_snap->ts rounded as the server sends
        it; a push's bytes, what the server widens them to, and the
        residual a taken push leaves.  */
    fasgd_snapshot_t *wire_snap;
    uint8_t *wire_bytes;
    float *wire_grad, *wire_residual;

    s_stale_t stale;            /* the τ the rule divides by */

    /*  Stats and the interval since the last CSV row.  */
    fasgd_sim_stats_t st;
    double tau_sum;
    uint64_t tau_count;
    double row_tau_sum;
    uint64_t row_tau_count, row_tau_max;
    uint64_t last_row_T;
    FILE *csv;

    /*  Events mode.  */
    s_event_t *heap;
    size_t heap_n, heap_cap;
    uint64_t seq;
    s_link_t link_in, link_out;
    double now;
    uint64_t started;

    /*  Threads.  */
    int nthreads;
    s_worker_t *workers;
    pthread_mutex_t lock;
    pthread_cond_t wake, done_cond;
    uint64_t generation;
    int quit;
    int pending;                /* workers still running the current batch */
    int next_task;
    /*  The look-ahead window of iterations mode: slots [done, filled).  */
    int flow;                   /* workers take gradients from the window */
    s_slot_t slots [S_WINDOW];
    float *slot_grads;          /* S_WINDOW gradients */
    uint64_t done, filled;
    int64_t *last_iter;         /* per client: its latest picked iteration */
    double *chunk_nll, *chunk_err;
    int nchunks;
    /*  The test set, evaluated as chunks nchunks .. nchunks+ntest-1.  */
    const fasgd_dataset_t *test;
    fasgd_model_batch_t **test_batches;
    double *test_nll, *test_err;
    int ntest;

    /*  Progress.  */
    int show_progress;
    int progress_tty;           /* redraw one line rather than add lines */
    struct timespec t0, last_progress;
    volatile sig_atomic_t interrupted;
};


/*  sim.c's validation and CSV row, at the server's T.  */
void fasgd_simint_row (fasgd_sim_t *self);
/*  The server's rule applies g of staleness tau to the snapshot *current
    (in place, or into a fresh copy while a client holds it); a refusal is
    counted and the first one logged, an applied gradient's staleness
    counted in the run's and the row's statistics. Returns the rule's
    verdict; out of memory aborts.  */
int fasgd_simint_apply (fasgd_sim_t *self, fasgd_snapshot_t **current, fasgd_rule_t *rule, const float *g,
                        uint64_t tau, const float *used);
/*  accumulate: the part [off, off + len) of a skipped gradient, g, joins
    client c's local sum, whose part gates keeps (fasgd_gates_keep).  */
void fasgd_simint_accumulate (fasgd_sim_t *self, s_client_t *c, size_t off, const float *g, size_t len,
                              fasgd_gates_t *gates);

/*  staleness.c. init: the server's clock at T and each shard's at its
    own, once the shards are known (-1 logged: out of memory).  */
int fasgd_simstale_init (fasgd_sim_t *self);
void fasgd_simstale_destroy (fasgd_sim_t *self);
/*  The τ of a push computed at timestamp j ≤ T, T the clock's server's
    (or shard's) timestamp.  */
uint64_t fasgd_simstale_tau (const s_stale_t *s, uint64_t T, uint64_t j);
/*  Client k pushed g (n floats: the server's, or the shard's part),
    which the rule took (applied: T has just become the update's
    timestamp; 0: softsync buffered it).  */
void fasgd_simstale_pushed (s_stale_t *s, uint64_t T, int k, const float *g, size_t n, int applied);

/*  shards.c. init: after the clients hold θ at T = 0, splits the server by
    cfg.shards (a no-op for `one`); -1 with the reason in err when the
    settings cannot be run sharded.  */
int fasgd_simshards_init (fasgd_sim_t *self, char *err, size_t errlen);
void fasgd_simshards_destroy (fasgd_sim_t *self);
/*  The θ client c computes on: its views put together in buf (n floats),
    or one snapshot's θ when they are all the same.  */
const float *fasgd_simshards_theta (const fasgd_sim_t *self, const s_client_t *c, float *buf);
/*  Client k's turn with gradient g: a push to each shard through its
    push gate, then a fetch from each through its fetch gate.  */
void fasgd_simshards_turn (fasgd_sim_t *self, int k, const float *g);
/*  Puts the shards' parts together into the server's whole θ.  */
void fasgd_simshards_sync (fasgd_sim_t *self);
/*  The most copies of any one shard's part alive at once.  */
size_t fasgd_simshards_peak (const fasgd_sim_t *self);

#endif
