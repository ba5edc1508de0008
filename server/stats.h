/*  stats: the counters the server keeps, one struct written by the files
    that count (each object is handed a pointer to it) and read by STATUS,
    the status line and the validation CSV.  */
#ifndef FASGD_SERVER_STATS_H_INCLUDED
#define FASGD_SERVER_STATS_H_INCLUDED

#include <stdint.h>

#define FASGD_SRV_TAU_BUCKETS 12        /* 0, 1, 2-3, 4-7, ..., 512-1023, 1024+ */

typedef struct {
    uint64_t pushes, buffered, repeats, fetches, not_modified, joins, leaves, expired, heartbeats, evals;
    uint64_t malformed, unknown, conflict, nonfinite, version, refused;
    uint64_t forbidden;                 /* requests from a key other than the client's, or revoked */
    uint64_t late_heartbeats;           /* HEARTBEATs of a client that had left (LEAVE): 401, not refusals */
    uint64_t guarded, clipped, forgotten;   /* the guard: refused, clipped, clients forgotten */
    uint64_t ignored, weighted;         /* the guard: pushes applied with weight 0, with less than 1 */
    uint64_t references;                /* reference gradients computed */
    uint64_t loss_measures;             /* the held-out loss measured on the fixed batch (guard_loss.c) */
    uint64_t loss_cut, loss_ignored;    /* pushes whose weight the loss check cut; of them, to its least (1/8) */
    uint64_t loss_rollbacks;            /* θ set back after the held-out loss jumped */
    uint64_t auth_refused, handshake_failed, revoked;   /* CURVE: connections refused, keys revoked */
    uint64_t conn_shed, accept_failed;  /* connections turned away at limits.connections; accept () failed */
    uint64_t bytes_in, bytes_out;
    uint64_t replies_dropped;           /* replies to a peer whose send queue was full, or gone */
    uint64_t turns_waited, turns_cut, turns_skipped;    /* turns.c: replies that waited, turns cut, replies without a turn */
    uint64_t turns_slower;              /* dispatch.c: turns that found their client's path slower than the others' */
    double tau_sum;
    double rule_tau_sum;                /* the τ the rule divided by (guard.staleness), over the same gradients */
    uint64_t tau_count, tau_max;
    uint64_t tau_hist [FASGD_SRV_TAU_BUCKETS];  /* applied gradients by τ, bucket k ≥ 1: 2^(k-1) ≤ τ < 2^k */
} fasgd_srv_stats_t;

#endif
