/*  params: θ and its snapshots (params.h). A fetch is answered from a
    shared immutable snapshot of θ, one per timestamp, reference-counted
    and recycled (ZeroMQ's I/O thread drops its reference when the frame
    has gone), so a fetch costs no copy beyond the first at each timestamp
    and never faults in fresh pages. With wire.params other than f32 the
    replies carry a wire image instead: θ rounded for the wire, made once
    per timestamp.  */
#include "params.h"

#include "codec.h"
#include "floats.h"

#include <stdlib.h>
#include <string.h>

fasgd_srv_params_t *
fasgd_srv_params_new (fasgd_rule_t **rule_p, size_t n, size_t total, size_t offset, int wire_params, int checked)
{
    fasgd_srv_params_t *self = calloc (1, sizeof *self);
    if (!self) {
        fasgd_rule_destroy (rule_p);
        return NULL;
    }
    self->rule = *rule_p;
    *rule_p = NULL;
    self->n = n;
    self->total = total;
    self->offset = offset;
    self->wire_params = wire_params;
    self->checked = checked;
    if (!(self->snaps = fasgd_snapshot_pool_new (n))
        || (wire_params != FASGD_WIRE_F32 && !(self->wire_imgs = fasgd_snapshot_pool_new (n))))
        goto fail;
#if FASGD_SRV_SHARED_THETA
    if (!(self->current = fasgd_snapshot_new (self->snaps)))
        goto fail;
    self->theta = self->current->theta;
    self->current->ts = 0;
#else
    if (!(self->theta = malloc (n * sizeof (float))))
        goto fail;
#endif
    return self;
fail:
    fasgd_srv_params_destroy (&self);
    return NULL;
}

void
fasgd_srv_params_destroy (fasgd_srv_params_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_srv_params_t *self = *self_p;
    fasgd_srv_params_drop (self);
    fasgd_snapshot_release (self->current);
    fasgd_snapshot_pool_destroy (&self->snaps);
    fasgd_snapshot_release (self->wire_img);
    fasgd_snapshot_pool_destroy (&self->wire_imgs);
#if !FASGD_SRV_SHARED_THETA
    free (self->theta);                 /* otherwise the current snapshot's */
#endif
    fasgd_rule_destroy (&self->rule);
    free (self);
    *self_p = NULL;
}

fasgd_snapshot_t *
fasgd_srv_params_snapshot (fasgd_srv_params_t *self)
{
#if FASGD_SRV_SHARED_THETA
    return fasgd_snapshot_ref (self->current);
#else
    if (self->current && self->current->ts == self->T)
        return fasgd_snapshot_ref (self->current);
    fasgd_snapshot_t *snap = fasgd_snapshot_new (self->snaps);
    if (!snap)
        return NULL;
    fasgd_proto_floats_encode (self->theta, self->n, snap->theta);
    snap->ts = self->T;
    fasgd_snapshot_t *old = self->current;
    self->current = fasgd_snapshot_ref (snap);      /* the caller's and current's */
    fasgd_snapshot_release (old);
    return snap;
#endif
}

/*  With shared snapshots, when a reply being sent, the evaluator or a
    client's θ_used still holds the current buffer, the rule writes the
    new θ into a fresh one, which becomes current only if the rule updated
    θ; otherwise θ is updated in place.  */
int
fasgd_srv_params_update (fasgd_srv_params_t *self, const float *g, uint64_t tau, const float *used)
{
    fasgd_srv_params_drop (self);
#if FASGD_SRV_SHARED_THETA
    /*  dcasgd's step has no bound in advance: its θ is checked before it
        is taken (guard.c).  */
    int rc = self->checked
           ? fasgd_snapshot_apply_checked (&self->current, self->rule, g, tau, used)
           : fasgd_snapshot_apply (&self->current, self->rule, g, tau, used);
    self->theta = self->current->theta;
    return rc;
#else
    return fasgd_rule_apply (self->rule, self->theta, g, tau, used);
#endif
}

int
fasgd_srv_params_stage (fasgd_srv_params_t *self, const float *g, uint64_t tau, const float *used, const float *r,
                        const size_t *spans, size_t nspans, double *sums)
{
    fasgd_srv_params_drop (self);
#if FASGD_SRV_SHARED_THETA
    /*  Where the rule keeps a state, the pass writes it aside too: fasgd
        std reads and writes 3 vectors of n floats in place, but reads
        them, reads the second set (a write to memory first reads the
        line) and writes it when staged, which costs at least the read
        of g it saves (at D = 1M, the one pass 2.27 times the kernel's
        copies of a push in perf, the two 2.22; bench/guard.md, "The loss
        check's cost, and one pass that judges and applies"), for
        12 MB more at 1M. Those rules take the two passes.  */
    if (fasgd_rule_stage_vectors (self->rule) > 0)
        return -5;
    fasgd_snapshot_t *fresh = fasgd_snapshot_new (self->snaps);
    if (!fresh)
        return -2;
    int rc = fasgd_rule_stage (self->rule, fresh->theta, self->theta, g, tau, used, r, spans, nspans, &sums [0],
                               &sums [1]);
    if (rc < 0) {
        fasgd_snapshot_release (fresh);
        return rc == -4 ? -2 : rc;
    }
    self->staged = fresh;
    self->staged_rc = rc;
    return rc;
#else
    (void) g, (void) tau, (void) used, (void) r, (void) spans, (void) nspans, (void) sums;
    return -5;
#endif
}

int
fasgd_srv_params_commit (fasgd_srv_params_t *self)
{
    fasgd_snapshot_t *fresh = self->staged;
    int rc = self->staged_rc;
    self->staged = NULL;
    if (rc == 1 && self->checked && fasgd_floats_any_nonfinite (fresh->theta, self->n)) {
        fasgd_snapshot_release (fresh);
        return -3;
    }
    fasgd_rule_commit (self->rule);
    if (rc == 1) {
        fresh->ts = self->current->ts;
        fasgd_snapshot_t *old = self->current;
        self->current = fresh;
        self->theta = fresh->theta;
        fasgd_snapshot_release (old);
    }
    else
        fasgd_snapshot_release (fresh);
    return rc;
}

void
fasgd_srv_params_drop (fasgd_srv_params_t *self)
{
    fasgd_snapshot_release (self->staged);
    self->staged = NULL;
}

int
fasgd_srv_params_restore (fasgd_srv_params_t *self, const float *theta)
{
#if FASGD_SRV_SHARED_THETA
    fasgd_snapshot_t *cur = self->current;
    /*  Copy on write, as an update: a reply may still hold θ's buffer.  */
    if (__atomic_load_n (&cur->refs, __ATOMIC_ACQUIRE) != 1) {
        fasgd_snapshot_t *fresh = fasgd_snapshot_new (cur->pool);
        if (!fresh)
            return -2;
        fresh->ts = cur->ts;
        self->current = fresh;
        fasgd_snapshot_release (cur);
    }
    self->theta = self->current->theta;
#endif
    memcpy (self->theta, theta, self->n * sizeof (float));
    return 0;
}

void
fasgd_srv_params_advance (fasgd_srv_params_t *self)
{
    fasgd_srv_params_set_T (self, self->T + 1);
}

void
fasgd_srv_params_set_T (fasgd_srv_params_t *self, uint64_t T)
{
    self->T = T;
#if FASGD_SRV_SHARED_THETA
    self->current->ts = T;
#endif
}

/*  From the pool of wire images (the first 2·D bytes of a snapshot's
    buffer): made when T moved since the last one.  */
fasgd_snapshot_t *
fasgd_srv_params_wire_image (fasgd_srv_params_t *self, const fasgd_snapshot_t *snap)
{
    if (!self->wire_img || self->wire_img->ts != snap->ts) {
        fasgd_snapshot_t *img = fasgd_snapshot_new (self->wire_imgs);
        if (!img)
            return NULL;
        fasgd_proto_wire_encode (self->wire_params, self->theta, self->n, img->theta);
        img->ts = snap->ts;
        fasgd_snapshot_release (self->wire_img);
        self->wire_img = img;
    }
    return fasgd_snapshot_ref (self->wire_img);
}
