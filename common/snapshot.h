/*  snapshot: images of θ shared by reference, and the copy-on-write update
    of the current one. fasgd-server and fasgd-sim both hand θ out without
    copying it: a fetch (a ZeroMQ reply, an evaluation, a simulated client)
    takes a reference to the current snapshot, and the rule updates θ in
    place while nobody else holds it, or else writes the new θ into a
    fresh snapshot (reading the old one once, no separate copy).

    Buffers come from a pool and go back to it when their last reference is
    released; the pool keeps a few of them (four, and an eighth as many as
    are in use) for the next snapshots and returns the others to the
    system at once. Reference counts are atomic and the pool is locked, so
    references may be released from any thread (ZeroMQ's I/O thread, an
    evaluation thread); taking them and updating are the owner's.  */
#ifndef FASGD_SNAPSHOT_H_INCLUDED
#define FASGD_SNAPSHOT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "rules.h"

typedef struct fasgd_snapshot_pool_t fasgd_snapshot_pool_t;

typedef struct fasgd_snapshot_t {
    float *theta;                       /* n floats */
    uint64_t ts;                        /* the timestamp it holds: the owner's to set */
    int refs;                           /* atomic */
    fasgd_snapshot_pool_t *pool;
    struct fasgd_snapshot_t *next_free;
} fasgd_snapshot_t;

/*  A pool of snapshots of n floats; NULL out of memory.  */
fasgd_snapshot_pool_t *fasgd_snapshot_pool_new (size_t n);
/*  Frees the pool and the snapshots in it. Snapshots still held (a
    ZeroMQ reply its I/O thread has not let go of when the server stops)
    keep the rest of the pool until the last of them is released.  */
void fasgd_snapshot_pool_destroy (fasgd_snapshot_pool_t **self_p);
/*  Snapshots out of the pool now (held by someone), and the most ever.  */
size_t fasgd_snapshot_pool_live (const fasgd_snapshot_pool_t *self);
size_t fasgd_snapshot_pool_peak (const fasgd_snapshot_pool_t *self);
/*  Snapshots the pool holds memory for: out of it, and kept free.  */
size_t fasgd_snapshot_pool_held (const fasgd_snapshot_pool_t *self);

/*  A snapshot with one reference (the caller's) and undefined contents;
    NULL out of memory.  */
fasgd_snapshot_t *fasgd_snapshot_new (fasgd_snapshot_pool_t *pool);
/*  Another reference to snap; returns it.  */
fasgd_snapshot_t *fasgd_snapshot_ref (fasgd_snapshot_t *snap);
/*  Drops a reference (NULL: nothing); the last one returns snap to its
    pool. Any thread.  */
void fasgd_snapshot_release (fasgd_snapshot_t *snap);

/*  Applies g to θ in *current, of which the caller holds one reference,
    with fasgd_rule_apply's arguments and results: in place when that
    reference is the only one, else into a fresh snapshot that takes the
    old one's place in *current (and its ts) only when the rule updated θ.
    -2 when a fresh snapshot was needed and memory ran out (nothing
    applied). Only the owner takes references, so a count of 1 cannot
    grow behind its back.  */
int fasgd_snapshot_apply (fasgd_snapshot_t **current, fasgd_rule_t *rule, const float *g,
                          uint64_t tau, const float *theta_used);

/*  As fasgd_snapshot_apply, but always into a fresh snapshot, which
    becomes current only when every parameter in it is finite: -3 (and
    nothing changed) when the update would have written a NaN or an
    infinity. For a rule with no state of its own (dcasgd), whose update
    has no useful bound in advance.  */
int fasgd_snapshot_apply_checked (fasgd_snapshot_t **current, fasgd_rule_t *rule, const float *g,
                                  uint64_t tau, const float *theta_used);

#endif
