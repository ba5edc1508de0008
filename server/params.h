/*  params: θ, its timestamp T and the rule that updates them, and θ's
    snapshots. One object, written only by the poll loop's thread; the
    files that read θ or T (replies, the guard, checkpoints, the
    evaluator) are handed a pointer to it.

    A snapshot is an immutable image of θ at one timestamp, in wire byte
    order. On a little-endian host θ is its own wire image, so the current
    snapshot is θ's own buffer, shared by every fetch of its timestamp and
    updated in place when nobody else holds it (copy on write:
    fasgd_srv_params_update); elsewhere a snapshot is an encoded copy made
    at the first fetch. Snapshots come from common/snapshot.h, as the
    simulator's do.  */
#ifndef FASGD_SERVER_PARAMS_H_INCLUDED
#define FASGD_SERVER_PARAMS_H_INCLUDED

#include "rules.h"
#include "snapshot.h"
#include "wire.h"

#include <stddef.h>
#include <stdint.h>

#if FASGD_HOST_IS_LE
#define FASGD_SRV_SHARED_THETA 1
#else
#define FASGD_SRV_SHARED_THETA 0
#endif

/*  Read its fields freely; only params.c (and a resume) writes them.  */
typedef struct {
    fasgd_rule_t *rule;
    size_t n;                           /* θ's values this server holds: its shard's, or all D */
    size_t total;                       /* D */
    size_t offset;                      /* where its part starts in the D */
    float *theta;                       /* n values; with a shared θ, the current snapshot's */
    uint64_t T;
    int wire_params;                    /* fasgd_wire_t of the replies' parameters */
    int checked;                        /* the rule's θ is checked before it is taken (dcasgd) */
    fasgd_snapshot_t *current;
    fasgd_snapshot_pool_t *snaps;
    /*  wire.params other than f32: θ rounded for the wire, at wire_img->ts.  */
    fasgd_snapshot_t *wire_img;
    fasgd_snapshot_pool_t *wire_imgs;
    /*  fasgd_srv_params_stage: the new θ, until it is committed or dropped.  */
    fasgd_snapshot_t *staged;
    int staged_rc;
} fasgd_srv_params_t;

/*  θ of n values (part offset of total) and the rule, which it takes
    over (*rule_p is then NULL, also on failure); θ's values are zeros
    until the caller writes them. checked: dcasgd's θ, whose step has no
    bound in advance, is checked before it is taken. NULL out of memory.  */
fasgd_srv_params_t *fasgd_srv_params_new (fasgd_rule_t **rule_p, size_t n, size_t total, size_t offset,
                                          int wire_params, int checked);
/*  With the rule; snapshots still held elsewhere (by replies ZeroMQ has
    not sent) are freed when they are released.  */
void fasgd_srv_params_destroy (fasgd_srv_params_t **self_p);
/*  The snapshot of θ at T, with a reference for the caller; NULL out of
    memory.  */
fasgd_snapshot_t *fasgd_srv_params_snapshot (fasgd_srv_params_t *self);
/*  Applies g to θ with the rule; returns as fasgd_rule_apply, or -2 out
    of memory.  */
int fasgd_srv_params_update (fasgd_srv_params_t *self, const float *g, uint64_t tau, const float *used);
/*  The update of g (as fasgd_srv_params_update would make it) written
    aside, in the pass over g that also sums g's squares and its dot
    product with r within spans (fasgd_rule_stage: the guard's sums, in
    sums [0] and [1]), so that g is read once: the new θ goes into a
    fresh snapshot (one more buffer of θ in the pool); nothing changes until
    fasgd_srv_params_commit. Returns 1 (θ written aside), 0 (softsync
    would buffer g), -2 out of memory, or -5 where it does not pay (a
    rule with a per-parameter state: fasgd, gap-aware, DC-ASGD-a,
    softsync with c > 1; params.c says why) or θ is not its own
    snapshot (a big-endian host): nothing staged, the caller then takes
    the two passes.  */
int fasgd_srv_params_stage (fasgd_srv_params_t *self, const float *g, uint64_t tau, const float *used,
                            const float *r, const size_t *spans, size_t nspans, double *sums);
/*  What was staged becomes θ and the rule's state, with the same bits
    and result as fasgd_srv_params_update: 1 (θ changed), 0 (buffered),
    or -3 when the rule's θ is checked (dcasgd) and the new one holds a
    NaN or Inf (nothing changed).  */
int fasgd_srv_params_commit (fasgd_srv_params_t *self);
/*  What was staged is forgotten (nothing: nothing happens).  */
void fasgd_srv_params_drop (fasgd_srv_params_t *self);
/*  θ set back to theta (n values; the guard's rollback, guard_loss.c),
    copied on write as an update; the rule's state is not touched. The
    caller then advances T. -2 out of memory (θ unchanged).  */
int fasgd_srv_params_restore (fasgd_srv_params_t *self, const float *theta);
/*  T moved on (after an update returned 1).  */
void fasgd_srv_params_advance (fasgd_srv_params_t *self);
/*  T set (a resume): the current snapshot is stamped with it.  */
void fasgd_srv_params_set_T (fasgd_srv_params_t *self, uint64_t T);
/*  A reference to θ of snap (at T) as wire.params; NULL out of memory.  */
fasgd_snapshot_t *fasgd_srv_params_wire_image (fasgd_srv_params_t *self, const fasgd_snapshot_t *snap);

#endif
