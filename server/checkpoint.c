/*  checkpoint: θ, T and the rule's state on disk, written periodically,
    on request and at exit, and read back by --resume. The file format,
    its checks and the safe write are common/checkpoint.c's; here is when
    to write, what to do when writing fails, and what a resume applies.  */
#include "internal.h"

#include "checkpoint.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

/*  A failing periodic checkpoint (a full disk, a folder gone read-only)
    is tried again after a pause that doubles, from checkpoint.seconds
    but at least a second, up to ten minutes: not on every pass of the
    loop, and with a log line per attempt rather than a hundred a second.  */
#define S_BACKOFF_MIN_MS 1000
#define S_BACKOFF_MAX_MS 600000

static uint64_t
s_tensor_size (const fasgd_checkpoint_tensor_t *t)
{
    uint64_t size = 1;
    for (uint32_t k = 0; k < t->ndim && k < FASGD_CHECKPOINT_MAX_DIMS; k++)
        size *= t->dims [k];
    return size;
}

/*  A shard's checkpoint describes its part: the tensors within it with
    their shapes, and a tensor it holds only part of as a vector named
    NAME.START (START: the part's first value within the tensor), so that
    resuming with another model, another shard.count or another
    shard.index finds other tensors.  */
static void
s_desc_shard (fasgd_server_t *self, fasgd_checkpoint_desc_t *d)
{
    fasgd_checkpoint_desc_t all = *d;
    d->ntensors = 0;
    uint64_t lo = self->offset, hi = self->offset + self->n, at = 0;
    for (int i = 0; i < all.ntensors; i++) {
        const fasgd_checkpoint_tensor_t *t = &all.tensors [i];
        uint64_t size = s_tensor_size (t), a = at > lo ? at : lo, b = at + size < hi ? at + size : hi;
        if (a < b) {
            fasgd_checkpoint_tensor_t *o = &d->tensors [d->ntensors++];
            if (a == at && b == at + size)
                *o = *t;
            else {
                memset (o, 0, sizeof *o);
                char start [24];
                int slen = snprintf (start, sizeof start, ".%llu", (unsigned long long) (a - at));
                snprintf (o->name, sizeof o->name, "%.*s%s", (int) (sizeof o->name - 1 - (size_t) slen),
                          t->name, start);
                o->ndim = 1;
                o->dims [0] = b - a;
            }
        }
        at += size;
    }
}

/*  The description a checkpoint of this server carries and must match:
    its tensors (the MLP's or external.tensors; a shard's, its part of
    them), the values it holds, the rule and the size of its state.  */
static void
s_desc (fasgd_server_t *self, fasgd_checkpoint_desc_t *d)
{
    memset (d, 0, sizeof *d);
    d->rule = self->cfg.rule.name;
    d->params = self->n;
    d->state_len = fasgd_rule_state_size (self->rule);
    if (self->model) {
        d->ntensors = fasgd_model_ntensors (self->model);
        for (int i = 0; i < d->ntensors && i < FASGD_CHECKPOINT_MAX_TENSORS; i++) {
            const fasgd_tensor_t *t = fasgd_model_tensor (self->model, i);
            snprintf (d->tensors [i].name, sizeof d->tensors [i].name, "%s", t->name);
            d->tensors [i].ndim = 2;
            d->tensors [i].dims [0] = (uint64_t) t->rows;
            d->tensors [i].dims [1] = (uint64_t) t->cols;
        }
    }
    else {
        d->ntensors = self->ext_ntensors;
        for (int i = 0; i < d->ntensors && i < FASGD_CHECKPOINT_MAX_TENSORS; i++) {
            const fasgd_proto_tensor_t *t = &self->ext_tensors [i];
            snprintf (d->tensors [i].name, sizeof d->tensors [i].name, "%s", t->name);
            d->tensors [i].ndim = t->ndim;
            for (uint32_t k = 0; k < t->ndim && k < FASGD_CHECKPOINT_MAX_DIMS; k++)
                d->tensors [i].dims [k] = t->dims [k];
        }
    }
    if (self->n != self->total)
        s_desc_shard (self, d);
}

/*  Writes θ, T and the rule's state (common/checkpoint.c: a temporary
    file created exclusively, fsync, rename, the folder synced), so a
    crash or a failure leaves the previous checkpoint whole. On failure
    returns -1 with the cause in err (when given), after logging it and
    lengthening the pause before the next periodic attempt.  */
int
fasgd_srv_checkpoint_write (fasgd_server_t *self, char *err, size_t errlen)
{
    char why [FASGD_PATH_LEN * 2 + 256];
    fasgd_checkpoint_desc_t desc;
    s_desc (self, &desc);
    size_t state_len = (size_t) desc.state_len;
    void *state = malloc (state_len ? state_len : 1);
    int rc = -1;
    if (!state)
        snprintf (why, sizeof why, "writing %s failed: out of memory for the rule's state", self->cfg.checkpoint);
    else {
        fasgd_rule_state_get (self->rule, state);
        rc = fasgd_checkpoint_write (self->cfg.checkpoint, &desc, self->T, self->theta, self->n, state, state_len,
                                     why, sizeof why);
    }
    free (state);
    int64_t now = fasgd_srv_now_ms ();
    if (rc != 0) {
        /*  The pause doubles with each failure in a row.  */
        int64_t base = (int64_t) (self->cfg.checkpoint_seconds * 1000);
        if (base < S_BACKOFF_MIN_MS)
            base = S_BACKOFF_MIN_MS;
        if (base > S_BACKOFF_MAX_MS)
            base = S_BACKOFF_MAX_MS;
        self->ckpt_backoff_ms = self->ckpt_failures == 0 ? base : self->ckpt_backoff_ms * 2;
        if (self->ckpt_backoff_ms > S_BACKOFF_MAX_MS)
            self->ckpt_backoff_ms = S_BACKOFF_MAX_MS;
        self->ckpt_failures++;
        self->ckpt_retry_ms = now + self->ckpt_backoff_ms;
        fasgd_log_error ("checkpoint: %s (failure %llu in a row; the previous checkpoint is kept; "
                         "the next periodic attempt in %.0f s)", why, (unsigned long long) self->ckpt_failures,
                         (double) self->ckpt_backoff_ms / 1000.0);
        if (err)
            snprintf (err, errlen, "%s", why);
        return -1;
    }
    if (self->ckpt_failures) {
        fasgd_log_notice ("checkpoint: checkpoints work again after %llu failed attempts",
                          (unsigned long long) self->ckpt_failures);
        self->ckpt_failures = 0;
        self->ckpt_backoff_ms = 0;
    }
    self->last_ckpt_T = self->T;
    self->last_ckpt_ms = now;
    self->ckpt_written = 1;
    fasgd_log_info ("checkpoint written at T=%llu", (unsigned long long) self->T);
    return 0;
}

/*  A checkpoint when checkpoint.file names one; 0 when it names none.  */
int
fasgd_srv_checkpoint (fasgd_server_t *self)
{
    if (!*self->cfg.checkpoint)
        return 0;
    return fasgd_srv_checkpoint_write (self, NULL, 0);
}

/*  A periodic checkpoint: as fasgd_srv_checkpoint, but after a failure
    nothing until its pause is over.  */
int
fasgd_srv_checkpoint_periodic (fasgd_server_t *self)
{
    if (!*self->cfg.checkpoint)
        return 0;
    if (self->ckpt_failures && fasgd_srv_now_ms () < self->ckpt_retry_ms)
        return -1;
    return fasgd_srv_checkpoint_write (self, NULL, 0);
}

/*  Loads θ, T and the rule's state from checkpoint.file, all or nothing:
    a checkpoint that fails any check leaves θ, T and the rule as they
    were. -1 logged, naming the file and the cause.  */
int
fasgd_srv_resume (fasgd_server_t *self)
{
    const char *path = self->cfg.checkpoint;
    fasgd_checkpoint_desc_t desc;
    s_desc (self, &desc);
    char err [512];
    fasgd_checkpoint_t *ck = fasgd_checkpoint_read (path, &desc, err, sizeof err);
    if (!ck) {
        fasgd_log_error ("resume: cannot resume from %s: %s", path, err);
        return -1;
    }
    /*  The rule takes its state or leaves its own; θ only after that.  */
    if (fasgd_rule_state_set (self->rule, ck->state, ck->state_len) != 0) {
        fasgd_log_error ("resume: cannot resume from %s: its rule state does not fit the configuration", path);
        fasgd_checkpoint_destroy (&ck);
        return -1;
    }
    memcpy (self->theta, ck->theta, self->n * sizeof (float));
    self->T = ck->T;
    self->last_ckpt_T = self->T;
    fasgd_checkpoint_destroy (&ck);
    fasgd_log_notice ("resumed from %s at T=%llu", path, (unsigned long long) self->T);
    return 0;
}
