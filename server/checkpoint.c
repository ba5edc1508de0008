/*  checkpoint: θ, T, the rule's state, the guard's and the staleness
    clock's on disk, written periodically, on request and at exit, and
    read back by --resume. The file format, its checks and the safe write
    are common/checkpoint.c's; here is when to write, what to do when
    writing fails, and what a resume applies.  */
#include "checkpoint.h"

#include "../common/checkpoint.h"
#include "clock.h"
#include "guard.h"
#include "log.h"
#include "staleness.h"

#include <stdlib.h>
#include <string.h>

/*  A failing periodic checkpoint (a full disk, a folder gone read-only)
    is tried again after a pause that doubles, from checkpoint.seconds
    but at least a second, up to ten minutes: not on every pass of the
    loop, and with a log line per attempt rather than a hundred a second.  */
#define S_BACKOFF_MIN_MS 1000
#define S_BACKOFF_MAX_MS 600000

_Static_assert (FASGD_CHECKPOINT_CLOCK_SUMS == FASGD_STALENESS_WINDOW, "a checkpoint keeps the clock's whole window");

struct fasgd_srv_checkpoint_t {
    const fasgd_server_cfg_t *cfg;      /* checkpoint.file, .seconds, .updates */
    fasgd_srv_params_t *params;
    fasgd_checkpoint_desc_t desc;       /* what a checkpoint of this server holds */
    uint64_t last_T;                    /* of the last written or resumed */
    int64_t last_ms;
    int written;                        /* one written by this process */
    uint64_t failures;                  /* failed writes in a row */
    int64_t backoff_ms;                 /* the pause after the last of them, */
    int64_t retry_ms;                   /* and when it ends */
    fasgd_srv_guard_t *guard;           /* whose state checkpoints hold; NULL: none */
    int resumed;                        /* a resume's guard state waits for the guard */
    fasgd_checkpoint_guard_t guard_state;   /* that state; the guard's at each write */
    float *resumed_saved;               /* the loss check's saved θ a resume found, for the guard; NULL: none */
    fasgd_staleness_clock_t *staleness; /* whose sums checkpoints hold; NULL: none */
    double *resumed_clock;              /* the staleness clock's sums a resume found, for the clock; */
    size_t resumed_nclock;              /* NULL and 0: none */
};

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
s_desc_shard (const fasgd_srv_params_t *params, fasgd_checkpoint_desc_t *d)
{
    fasgd_checkpoint_desc_t all = *d;
    d->ntensors = 0;
    uint64_t lo = params->offset, hi = params->offset + params->n, at = 0;
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
s_desc (const fasgd_server_cfg_t *cfg, const fasgd_srv_params_t *params, const fasgd_model_t *model,
        const fasgd_proto_tensor_t *ext, int next, fasgd_checkpoint_desc_t *d)
{
    memset (d, 0, sizeof *d);
    d->rule = cfg->rule.name;
    d->params = params->n;
    d->state_len = fasgd_rule_state_size (params->rule);
    if (model) {
        d->ntensors = fasgd_model_ntensors (model);
        for (int i = 0; i < d->ntensors && i < FASGD_CHECKPOINT_MAX_TENSORS; i++) {
            const fasgd_tensor_t *t = fasgd_model_tensor (model, i);
            snprintf (d->tensors [i].name, sizeof d->tensors [i].name, "%s", t->name);
            d->tensors [i].ndim = 2;
            d->tensors [i].dims [0] = (uint64_t) t->rows;
            d->tensors [i].dims [1] = (uint64_t) t->cols;
        }
    }
    else {
        d->ntensors = next;
        for (int i = 0; i < d->ntensors && i < FASGD_CHECKPOINT_MAX_TENSORS; i++) {
            const fasgd_proto_tensor_t *t = &ext [i];
            snprintf (d->tensors [i].name, sizeof d->tensors [i].name, "%s", t->name);
            d->tensors [i].ndim = t->ndim;
            for (uint32_t k = 0; k < t->ndim && k < FASGD_CHECKPOINT_MAX_DIMS; k++)
                d->tensors [i].dims [k] = t->dims [k];
        }
    }
    if (params->n != params->total)
        s_desc_shard (params, d);
}

fasgd_srv_checkpoint_t *
fasgd_srv_checkpoint_new (const fasgd_server_cfg_t *cfg, fasgd_srv_params_t *params, const fasgd_model_t *model,
                          const fasgd_proto_tensor_t *ext, int next)
{
    fasgd_srv_checkpoint_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = cfg;
    self->params = params;
    s_desc (cfg, params, model, ext, next, &self->desc);
    self->last_T = params->T;
    self->last_ms = fasgd_srv_now_ms ();
    return self;
}

void
fasgd_srv_checkpoint_start (fasgd_srv_checkpoint_t *self, int64_t now)
{
    self->last_ms = now;
}

void
fasgd_srv_checkpoint_destroy (fasgd_srv_checkpoint_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->resumed_saved);
    free ((*self_p)->resumed_clock);
    free (*self_p);
    *self_p = NULL;
}

/*  Writes θ, T, the rule's state, the guard's and the staleness clock's
    running sums (common/checkpoint.c: a temporary file created
    exclusively, fsync, rename, the folder synced), so a crash or a
    failure leaves the previous checkpoint whole. On failure
    returns -1 with the cause in err (when given), after logging it and
    lengthening the pause before the next periodic attempt.  */
int
fasgd_srv_checkpoint_write (fasgd_srv_checkpoint_t *self, char *err, size_t errlen)
{
    char why [FASGD_PATH_LEN * 2 + 256];
    const fasgd_srv_params_t *p = self->params;
    size_t state_len = (size_t) self->desc.state_len;
    void *state = malloc (state_len ? state_len : 1);
    double *clock = self->staleness ? malloc (FASGD_CHECKPOINT_CLOCK_SUMS * sizeof *clock) : NULL;
    int rc = -1;
    if (!state || (self->staleness && !clock))
        snprintf (why, sizeof why, "writing %s failed: out of memory for the rule's state or the staleness clock",
                  self->cfg->checkpoint);
    else {
        fasgd_rule_state_get (p->rule, state);
        const float *saved = NULL;
        if (self->guard)
            fasgd_srv_guard_save (self->guard, &self->guard_state, &saved);
        size_t nclock = clock ? fasgd_staleness_sums (self->staleness, clock, FASGD_CHECKPOINT_CLOCK_SUMS) : 0;
        rc = fasgd_checkpoint_write (self->cfg->checkpoint, &self->desc, p->T, p->theta, p->n, state, state_len,
                                     self->guard ? &self->guard_state : NULL, saved, clock, nclock, why, sizeof why);
    }
    free (state);
    free (clock);
    int64_t now = fasgd_srv_now_ms ();
    if (rc != 0) {
        /*  The pause doubles with each failure in a row.  */
        int64_t base = (int64_t) (self->cfg->checkpoint_seconds * 1000);
        if (base < S_BACKOFF_MIN_MS)
            base = S_BACKOFF_MIN_MS;
        if (base > S_BACKOFF_MAX_MS)
            base = S_BACKOFF_MAX_MS;
        self->backoff_ms = self->failures == 0 ? base : self->backoff_ms * 2;
        if (self->backoff_ms > S_BACKOFF_MAX_MS)
            self->backoff_ms = S_BACKOFF_MAX_MS;
        self->failures++;
        self->retry_ms = now + self->backoff_ms;
        fasgd_log_error ("checkpoint: %s (failure %llu in a row; the previous checkpoint is kept; "
                         "the next periodic attempt in %.0f s)", why, (unsigned long long) self->failures,
                         (double) self->backoff_ms / 1000.0);
        if (err)
            snprintf (err, errlen, "%s", why);
        return -1;
    }
    if (self->failures) {
        fasgd_log_notice ("checkpoint: checkpoints work again after %llu failed attempts",
                          (unsigned long long) self->failures);
        self->failures = 0;
        self->backoff_ms = 0;
    }
    self->last_T = p->T;
    self->last_ms = now;
    self->written = 1;
    fasgd_log_info ("checkpoint written at T=%llu", (unsigned long long) p->T);
    return 0;
}

int
fasgd_srv_checkpoint_final (fasgd_srv_checkpoint_t *self)
{
    if (!*self->cfg->checkpoint) {
        fasgd_log_notice ("no final checkpoint: checkpoint.file is empty");
        return 0;
    }
    if (fasgd_srv_checkpoint_write (self, NULL, 0) != 0)
        return -1;
    char shown [8192];
    fasgd_log_notice ("final checkpoint written at T=%llu to %s", (unsigned long long) self->last_T,
                      fasgd_path_shown (self->cfg->checkpoint, shown, sizeof shown));
    return 0;
}

/*  A periodic checkpoint: as fasgd_srv_checkpoint_final, but after a
    failure nothing until its pause is over.  */
static int
s_periodic (fasgd_srv_checkpoint_t *self)
{
    if (!*self->cfg->checkpoint)
        return 0;
    if (self->failures && fasgd_srv_now_ms () < self->retry_ms)
        return -1;
    return fasgd_srv_checkpoint_write (self, NULL, 0);
}

void
fasgd_srv_checkpoint_updated (fasgd_srv_checkpoint_t *self)
{
    if (self->cfg->checkpoint_updates && self->params->T - self->last_T >= self->cfg->checkpoint_updates)
        s_periodic (self);
}

void
fasgd_srv_checkpoint_tick (fasgd_srv_checkpoint_t *self, int64_t now)
{
    if (self->cfg->checkpoint_seconds > 0 && self->params->T != self->last_T
        && now - self->last_ms >= self->cfg->checkpoint_seconds * 1000)
        s_periodic (self);
}

int
fasgd_srv_checkpoint_last (const fasgd_srv_checkpoint_t *self, uint64_t *T, int64_t *ms)
{
    *T = self->last_T;
    *ms = self->last_ms;
    return self->written;
}

/*  Loads θ, T and the rule's state from checkpoint.file, all or nothing:
    a checkpoint that fails any check leaves θ, T and the rule as they
    were. -1 logged, naming the file and the cause.  */
int
fasgd_srv_checkpoint_resume (fasgd_srv_checkpoint_t *self)
{
    fasgd_srv_params_t *p = self->params;
    const char *path = self->cfg->checkpoint;
    char err [512];
    fasgd_checkpoint_t *ck = fasgd_checkpoint_read (path, &self->desc, err, sizeof err);
    if (!ck) {
        char shown [8192];
        fasgd_log_error ("resume: cannot resume from %s: %s", fasgd_path_shown (path, shown, sizeof shown), err);
        return -1;
    }
    /*  The rule takes its state or leaves its own; θ only after that.  */
    if (fasgd_rule_state_set (p->rule, ck->state, ck->state_len) != 0) {
        fasgd_log_error ("resume: cannot resume from %s: its rule state does not fit the configuration", path);
        fasgd_checkpoint_destroy (&ck);
        return -1;
    }
    memcpy (p->theta, ck->theta, p->n * sizeof (float));
    fasgd_srv_params_set_T (p, ck->T);
    self->last_T = p->T;
    self->resumed = ck->has_guard;
    if (ck->has_guard)
        self->guard_state = ck->guard;
    free (self->resumed_saved);
    self->resumed_saved = ck->saved;    /* taken from the checkpoint */
    ck->saved = NULL;
    free (self->resumed_clock);
    self->resumed_clock = ck->clock;    /* taken too */
    self->resumed_nclock = ck->nclock;
    ck->clock = NULL;
    int has_keys = ck->has_keys, has_clock = ck->has_clock;
    fasgd_checkpoint_destroy (&ck);
    fasgd_log_notice ("resumed from %s at T=%llu", path, (unsigned long long) p->T);
    if (!self->resumed)
        fasgd_log_notice ("resume: %s is of a format before (FASGDCK2), which does not hold the guard's "
                          "state: the guard starts fresh, and its size bound learns again from the first "
                          "pushes", path);
    else if (!has_keys)
        fasgd_log_notice ("resume: %s is of a format before (FASGDCK3), which holds neither the records of "
                          "the clients' keys nor the loss check's saved parameters: the keys' clients start "
                          "anew (probation, no loss record)", path);
    else if (!has_clock)
        fasgd_log_notice ("resume: %s is of a format before (FASGDCK4), which does not hold the staleness "
                          "clock: with guard.staleness movement, the updates before T=%llu count one each in "
                          "tau", path, (unsigned long long) p->T);
    return 0;
}

void
fasgd_srv_checkpoint_staleness (fasgd_srv_checkpoint_t *self, fasgd_staleness_clock_t *clock)
{
    self->staleness = clock;
    if (self->resumed_nclock && fasgd_staleness_movement (clock)) {
        fasgd_staleness_restore (clock, self->params->T, self->resumed_clock, self->resumed_nclock);
        fasgd_log_info ("resume: the staleness clock continues from the last %zu timestamps' running sums",
                        self->resumed_nclock);
    }
    else if (self->resumed_nclock)
        fasgd_log_debug ("resume: the checkpoint's staleness clock (%zu running sums) is not used: "
                         "guard.staleness is count", self->resumed_nclock);
    free (self->resumed_clock);
    self->resumed_clock = NULL;
    self->resumed_nclock = 0;
}

void
fasgd_srv_checkpoint_guard (fasgd_srv_checkpoint_t *self, fasgd_srv_guard_t *guard)
{
    self->guard = guard;
    if (self->resumed)
        fasgd_srv_guard_restore (guard, &self->guard_state, self->resumed_saved);
    self->resumed = 0;
    free (self->resumed_saved);
    self->resumed_saved = NULL;
}
