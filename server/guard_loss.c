/*  guard_loss: does the held-out loss rise after a client's pushes?

    The guard's score (common/verdict.h) is first order: it asks whether
    a push points along the reference gradient. Late in training that
    says nothing (the reference calls honest and negated minibatch
    gradients about neutral), while what a step does to the loss is
    mostly second order, and with fasgd's per-parameter normalisation a
    push applied at a third of its weight is a step of nearly full size.
    So the guard also watches the loss itself (Kardam's idea, Damaskinos
    et al. 2018, on held-out data):

    - At every reference gradient the server computes the model's loss
      at θ on a batch of guard.loss_examples examples of the guard's
      pool (validation data no client trains on), drawn once with the
      guard's secret seed and fixed for the run, so that two measures
      differ by what θ did, not by which examples were drawn.
    - The change d = ln (L/L_last) since the last measure is given to
      each client in proportion to its share of the weight applied: not
      its share of this interval alone, which swings from one to the
      next, but a moving average of them over about the last eight
      measures. A share that swings would make a client's sum of d's a
      random walk; a steady one makes it telescope, ln (L_now/L_then)
      times the share, so that what it holds is the rise of the loss
      over the client's recent pushes and not the noise of each
      interval (two honest clients: sums up to 0.42 with the share of
      each interval, within 0.1 with the average).
    - Each client's record, rise, the sum of what it was given, ages by
      keep = 1 − 1/256 at each of its pushes judged (applied or not).
    - Its pushes' weight is multiplied by (2b − rise)/b held to [0, 1]
      (b = guard.loss_rise): in full while the loss rose by less than a
      factor e^b after its pushes, by the least, 1/8, from e^2b (guard.c
      keeps that share, or the score's weight if lower: never none). A
      client cut to its least still moves θ, so that an honest client's
      record comes down when the loss does, and an attacker's goes on
      rising; each push ages the record too (256·ln 2 = 177 pushes halve
      it).
    - A jump: a loss more than guard.loss_jump (in log) above that of the
      θ last saved (at each measure at most a quarter of that above the
      saved one's, if clients in good standing applied at least half of
      the weight since the last measure: they earned the score's marks
      of trust and their record here is at most b; else an attacker's
      updates, each below a quarter, climb from save to save) makes
      fasgd_srv_guard_loss_rollback give the saved θ, which dispatch.c
      sets θ back to through params; the rise stays in
      the records. After S_ROLLBACKS jumps in a row without the loss
      coming back, θ is kept as it is.

    Staleness needs nothing of its own: what is measured is what the
    applied steps did to the loss, after the rule's α(τ). A checkpoint
    keeps the saved θ and the jumps in a row (guard.c keeps the records
    of CURVE keys' clients, which join again as new ids): after a
    restart the saved θ's loss is measured again on the new batch (the
    batch is drawn anew), so a θ that a jump had taken into the
    checkpoint is set back at the first reference, and the first measure
    only starts the series of changes. Its cost: one forward pass on the
    fixed batch per reference (guard.every pushes judged), prepared once.  */
#include "guard_loss.h"

#include "log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_KEEP (1 - 1.0 / 256)          /* what a record keeps of its past at each push judged */
#define S_SHARE_RATE 0.125              /* a client's share follows its shares of the last 8 measures or so */
#define S_ROLLBACKS 8                   /* jumps in a row set back; the next one is kept */
#define S_SHARE_MIN 1e-4                /* a client whose share is below this is no longer followed */

struct fasgd_srv_guard_loss_t {
    const fasgd_server_cfg_t *cfg;
    const fasgd_model_t *model;
    fasgd_srv_stats_t *st;
    fasgd_model_ws_t *ws;
    float *x;                           /* the fixed batch */
    uint8_t *y;
    fasgd_model_batch_t *batch;
    double last;                        /* the last loss measured; NAN before the first */
    fasgd_srv_client_t **pending;       /* clients with a share, npending of them */
    size_t npending, cap;
    double gone_w;                      /* the weight applied since of clients freed since */
    size_t n;                           /* θ's values */
    float *saved;                       /* θ at the last measure not far above the one before */
    double saved_loss;                  /* its loss; NAN: none saved */
    int rollback;                       /* θ is to go back to saved */
    int rollbacks_in_row;               /* jumps since the last θ saved */
};

fasgd_srv_guard_loss_t *
fasgd_srv_guard_loss_new (const fasgd_server_cfg_t *cfg, const fasgd_model_t *model, const fasgd_dataset_t *pool,
                          size_t nparams, fasgd_rng_t *rng, fasgd_srv_stats_t *st)
{
    int n = cfg->guard_loss_examples < (int) pool->n ? cfg->guard_loss_examples : (int) pool->n;
    if (n <= 0)
        return NULL;
    fasgd_srv_guard_loss_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = cfg;
    self->model = model;
    self->st = st;
    self->last = self->saved_loss = NAN;
    self->n = nparams;
    self->saved = cfg->guard_loss_jump > 0 ? malloc (nparams * sizeof (float)) : NULL;
    uint32_t *idx = malloc ((size_t) n * sizeof *idx);
    self->x = malloc ((size_t) n * pool->dim * sizeof (float));
    self->y = malloc ((size_t) n);
    self->ws = fasgd_model_ws_new (model, n);
    if (!idx || !self->x || !self->y || !self->ws || (cfg->guard_loss_jump > 0 && !self->saved)) {
        free (idx);
        fasgd_srv_guard_loss_destroy (&self);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        idx [i] = fasgd_rng_below (rng, pool->n);
    fasgd_dataset_gather (pool, idx, (uint32_t) n, self->x, self->y);
    free (idx);
    self->batch = fasgd_model_batch_new (model, self->x, self->y, n);
    if (!self->batch)
        fasgd_srv_guard_loss_destroy (&self);
    return self;
}

void
fasgd_srv_guard_loss_destroy (fasgd_srv_guard_loss_t **self_p)
{
    fasgd_srv_guard_loss_t *self = *self_p;
    if (!self)
        return;
    fasgd_model_batch_destroy (&self->batch);
    fasgd_model_ws_destroy (&self->ws);
    free (self->x);
    free (self->y);
    free (self->pending);
    free (self->saved);
    free (self);
    *self_p = NULL;
}

void
fasgd_srv_guard_loss_measure (fasgd_srv_guard_loss_t *self, const float *theta)
{
    double L = fasgd_model_batch_loss (self->model, self->ws, theta, self->batch, NULL);
    if (!isfinite (L))
        return;
    double W = self->gone_w;
    for (size_t i = 0; i < self->npending; i++)
        W += self->pending [i]->loss_pending_w;
    if (W <= 0) {                       /* nothing applied: θ is as it was */
        self->last = L;
        if (self->saved && !(self->saved_loss > 0)) {
            memcpy (self->saved, theta, self->n * sizeof (float));
            self->saved_loss = L;
        }
        if (self->saved_loss > 0 && log (L / self->saved_loss) <= self->cfg->guard_loss_jump / 4)
            self->rollbacks_in_row = 0;     /* set back, and nothing since */
        return;
    }
    double d = self->last > 0 && L > 0 ? log (L / self->last) : 0;
    /*  The weight applied by clients in good standing (their pushes
        earned the score's marks of trust and, before this measure, the
        loss had not risen after them): only θ that they carried most of
        the way is saved.  */
    double trusted = 0;
    for (size_t i = 0; i < self->npending;) {
        fasgd_srv_client_t *c = self->pending [i];
        if (fasgd_srv_guard_loss_standing (self, c))
            trusted += c->loss_pending_w;
        double s = c->loss_pending_w / W;
        c->loss_share = c->loss_share > 0 ? c->loss_share + S_SHARE_RATE * (s - c->loss_share) : s;
        c->loss_rise += d * c->loss_share;
        if (c->loss_pending_n > 0)
            fasgd_log_debug ("guard: loss %.6g (log change %+.4g) after client %u's %g pushes applied (weight %.3g "
                             "of %.3g, its share %.3g): its record %+.4g", L, d, c->id, c->loss_pending_n,
                             c->loss_pending_w, W, c->loss_share, c->loss_rise);
        c->loss_pending_w = c->loss_pending_n = 0;
        if (c->loss_share < S_SHARE_MIN) {
            c->loss_share = 0;
            c->loss_pending = 0;
            self->pending [i] = self->pending [--self->npending];
        }
        else
            i++;
    }
    self->gone_w = 0;
    self->last = L;
    self->st->loss_measures++;
    if (!self->saved)
        return;
    double up = self->saved_loss > 0 ? log (L / self->saved_loss) : 0;
    int kept = 0;                       /* θ kept as it is: saved, whoever carried it */
    if (up > self->cfg->guard_loss_jump && self->rollbacks_in_row >= S_ROLLBACKS) {
        fasgd_log_notice ("guard: the held-out loss is %.4g, still more than guard.loss_jump above %.4g after %d "
                          "rollbacks in a row: the parameters are kept as they are", L, self->saved_loss,
                          self->rollbacks_in_row);
        up = 0;
        kept = 1;
    }
    if (up > self->cfg->guard_loss_jump) {
        self->rollbacks_in_row++;
        fasgd_log_notice ("guard: the held-out loss jumped from %.4g to %.4g (log change %.3g above guard.loss_jump "
                          "%.3g): the parameters go back to where they were", self->saved_loss, L, up,
                          self->cfg->guard_loss_jump);
        self->rollback = 1;
        self->last = self->saved_loss;
        return;
    }
    /*  The first measure is saved whoever carried θ there: a check
        with nothing to go back to would hold nothing.  */
    if (up <= self->cfg->guard_loss_jump / 4 && (kept || !(self->saved_loss > 0) || 2 * trusted >= W)) {
        self->rollbacks_in_row = 0;
        memcpy (self->saved, theta, self->n * sizeof (float));
        self->saved_loss = L;
    }
}

const float *
fasgd_srv_guard_loss_rollback (fasgd_srv_guard_loss_t *self)
{
    if (!self->rollback)
        return NULL;
    self->rollback = 0;
    return self->saved;
}

int
fasgd_srv_guard_loss_standing (const fasgd_srv_guard_loss_t *self, const fasgd_srv_client_t *c)
{
    return c->verdict.earned && (!self || c->loss_rise <= self->cfg->guard_loss_rise);
}

double
fasgd_srv_guard_loss_factor (fasgd_srv_guard_loss_t *self, fasgd_srv_client_t *c)
{
    c->loss_rise *= S_KEEP;
    double b = self->cfg->guard_loss_rise;
    double f = (2 * b - c->loss_rise) / b;
    return f > 1 ? 1 : f > 0 ? f : 0;
}

void
fasgd_srv_guard_loss_applied (fasgd_srv_guard_loss_t *self, fasgd_srv_client_t *c, double w)
{
    if (!c->loss_pending) {
        c->loss_share = 0;
        if (self->npending == self->cap) {
            size_t cap = self->cap ? self->cap * 2 : 16;
            fasgd_srv_client_t **p = realloc (self->pending, cap * sizeof *p);
            if (!p)
                return;                 /* out of memory: this push is nobody's */
            self->pending = p;
            self->cap = cap;
        }
        self->pending [self->npending++] = c;
        c->loss_pending = 1;
    }
    c->loss_pending_w += w;
    c->loss_pending_n += 1;
}

const float *
fasgd_srv_guard_loss_saved (const fasgd_srv_guard_loss_t *self, int *rollbacks)
{
    *rollbacks = self->rollbacks_in_row;
    return self->saved && self->saved_loss > 0 ? self->saved : NULL;
}

void
fasgd_srv_guard_loss_restore (fasgd_srv_guard_loss_t *self, const float *saved, int rollbacks)
{
    if (!self->saved || !saved)
        return;
    double L = fasgd_model_batch_loss (self->model, self->ws, saved, self->batch, NULL);
    if (!(L > 0) || !isfinite (L))
        return;
    memcpy (self->saved, saved, self->n * sizeof (float));
    self->saved_loss = L;
    self->rollbacks_in_row = rollbacks < S_ROLLBACKS ? rollbacks : S_ROLLBACKS;
    fasgd_log_notice ("guard: the held-out loss check goes on from the parameters it had saved (loss %.4g on its "
                      "batch)", L);
}

fasgd_srv_client_t *const *
fasgd_srv_guard_loss_clients (const fasgd_srv_guard_loss_t *self, size_t *n)
{
    *n = self->npending;
    return self->pending;
}

double
fasgd_srv_guard_loss_last (const fasgd_srv_guard_loss_t *self)
{
    return self->last;
}

void
fasgd_srv_guard_loss_forget (fasgd_srv_guard_loss_t *self, fasgd_srv_client_t *c)
{
    if (!c->loss_pending)
        return;
    self->gone_w += c->loss_pending_w;
    c->loss_pending = 0;
    for (size_t i = 0; i < self->npending; i++)
        if (self->pending [i] == c) {
            self->pending [i] = self->pending [--self->npending];
            break;
        }
}
