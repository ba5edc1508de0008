/*  guard: what a gradient must pass before the rule touches anything.

    1. Finite: one pass sums g² in double, which is finite exactly when
       every value is; its root is the gradient's L2 norm ‖g‖.
    2. Bounded: ‖g‖ above limits.grad_norm, or above limits.grad_norm_factor
       times the guard's median, is refused, or scaled down to that bound
       when limits.grad_norm_action is clip (or auto, the default, while
       direction is judged: 4.; a spike of an honest client is then
       clipped, not refused, and what is judged is the clipped push). The median is the lower one
       of these votes (weighted without CURVE: s_median_update):
       - one for each client that has pushed: its typical norm, a moving
         average of the norms it pushed, its first as it came (a newcomer
         votes its own norm at once, however low the bound it meets: a
         lone-address flood of tiny norms that came first cannot keep
         honest clients refused until they are forgotten), each later one
         counted at most at the bound it met;
       - one for the run's history: the lower median of the last 1024
         accepted norms.
       However fast a client pushes, whatever norms it sends (outsized or
       tiny), it moves only its own vote, so while most clients are honest
       the median is an honest one. With CURVE the clients of one key
       share one vote (the mean of theirs): a key that joins many client
       ids still has one; without CURVE the ids of one source address
       share guard.address_votes votes' weight (1). Honest norms that
       grow past the bound (a network's gradients grow tenfold in its
       first steps) raise their votes with every refused push, and the
       median follows within a few pushes: a median of accepted norms alone could not follow, since
       only what passed the bound entered it, and the smallest accepted
       norm that once stood in for it until 64 were in could only fall (4
       PyTorch workers' norms grow from 0.56 to 6–10 in 20 steps: a bound
       of 5.6 refused them until they were forgotten). The history's vote
       keeps what the clients that left knew: a poisoner left alone with
       it cannot raise the bound. The history (and the references'
       norms) are in the checkpoint (fasgd_srv_guard_save), so that after
       a restart the first pushes meet the bound the run had learnt: a
       guard starting fresh has no median, and one push of norm 1e16
       landed.
       A client refused limits.refusals times in a row is forgotten (its
       next request gets 401) and logged: one client cannot keep pushing
       poison. The guard gives that verdict; the registry, which owns the
       client, frees it.
    3. Cannot overflow: the guard keeps upper bounds on max|θ| and on the
       magnitudes in the rule's state, and from ‖g‖ (which bounds every
       |g_i|) bounds what this push can add to each (ALGORITHMS.md's exact
       update of each rule). A push whose worst case could take θ, v̄ or
       the statistics past 1e37 is refused, so nothing non-finite is ever
       written and nothing a refused push sent changes anything. The
       bounds only grow with accepted pushes; max|θ| is measured again
       every S_REMEASURE accepted pushes, so they stay close. dcasgd's
       term g²·(θ − θ_used) has no useful bound: its update goes into a
       fresh buffer that is checked before it becomes θ (params.c).

    In practice (3) refuses only gradients of about 1e18 and more; (1)
    and (2) are the guards a run meets.

    4. Direction, with a reference (fasgd_srv_guard_reference: a built-in
       model holding all of θ, with a validation set): every guard.every
       pushes judged (half as many in doubt: s_every) the guard computes
       the model's gradient r at θ
       on guard.examples drawn at random (from a seed of its own, which
       no peer knows) among the first guard.pool validation examples,
       which no client trains on. Then (2)'s bound is limits.grad_norm_
       factor times an anchor that the clients' median moves only within
       [‖r‖/2, guard.span·‖r‖] (‖r‖: the largest of the last four
       references' norms), so neither tiny nor huge votes, from however
       many ids, take it out of the reference's reach, and the first push
       of a run is bounded too; and each push is scored and weighted by
       common/verdict.c (its header says how): applied in full, in part,
       not at all (0: acknowledged, not applied), or refused (422).
       Without a reference the guard logs at start that it judges sizes
       only.

    5. Direction, against trusted clients' pushes: where the server
       computes no reference (an external model, a shard, no validation
       set) and guard.trusted names CURVE keys (security.c loads them;
       the registry marks their clients trusted), every push of a trusted
       client that is applied goes into the ring of references instead,
       computed at the θ its client fetched. A trusted push is checked
       as in 1.-3. only. Every other push is judged as in 4. against the
       trusted push of the nearest θ (the last one computed at its θ or
       before), as long as that one is within guard.trusted_age updates
       of it; when none is (no trusted client has pushed yet, or none
       for that long), it is checked for size only, and that is logged
       when it starts and ends. Without CURVE, guard.trusted is refused
       at start: a push's key would not be known.

    6. A key's record. With CURVE, what the guard knows of a key's
       clients is the key's: each client's verdict record (its mean
       score, its pushes judged: probation), its loss check's record and
       its vote are copied to its key's record at each push judged, when
       it goes and at each checkpoint, and a client that joins with that
       key (again, or after a restart: the records are in the
       checkpoint, up to FASGD_CHECKPOINT_GUARD_KEYS keys) starts from
       them, not anew. A client the loss check had cut is cut as much
       when it comes back; an honest one does not go through probation
       again. When a key has several clients, its record is that of the
       one judged last: no more than any of them had. Without CURVE a
       client has no name the server can believe, and a new id starts
       anew (probation, no record).

    guard.enabled false turns all of this off, to measure what it costs:
    every push goes to the rule as it came, and the rule's own first pass
    (common/rules.c) refuses NaN and Inf; nothing else is checked.  */
#include "guard.h"
#include "guard_loss.h"

#include "clock.h"
#include "codec.h"
#include "floats.h"
#include "log.h"
#include "rng.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_LIMIT 1e37                    /* largest bound accepted for θ and the state */
#define S_MAX_NORM 1e18                 /* ‖g‖ beyond this: its square nears FLT_MAX */
#define S_REMEASURE 4096                /* accepted pushes between measures of max|θ| */
/*  Accepted gradient norms the history's median is taken over, and the
    reference gradients kept (the last ones): as many as a checkpoint
    holds.  */
#define S_NORM_WINDOW FASGD_CHECKPOINT_GUARD_NORMS
#define S_REFS FASGD_CHECKPOINT_GUARD_REFS
#define S_REF_STREAM 0x72656667u        /* "refg": the reference batches' rng stream */
#define S_IGNORED_NOTICE 1000           /* pushes ignored in a row that are logged */
/*  A reference's spans where it is not zero (common/floats.h): at most
    S_SPANS, zero runs of S_SPAN_GAP floats and more left out.  */
#define S_SPANS 1024
#define S_SPAN_GAP 256

/*  The bounds, and the median of the clients' typical norms and the
    history's.  */
struct fasgd_srv_guard_t {
    const fasgd_server_cfg_t *cfg;
    const fasgd_srv_params_t *params;   /* θ and the rule */
    float *scratch;                     /* where a clipped gradient goes */
    fasgd_srv_stats_t *st;
    double theta_bound;                 /* ≥ max|θ| */
    double state_bound;                 /* ≥ every magnitude in the rule's state */
    uint64_t since_measure;
    double norms [S_NORM_WINDOW];       /* a ring of accepted norms */
    int norm_next, norm_count;
    double history;                     /* their lower median */
    int since_history;
    double median;
    int since_median;
    fasgd_srv_client_t **voters;        /* the clients that vote, nvoters of them */
    size_t nvoters, voters_cap;
    fasgd_verdict_weighted_t *votes;    /* scratch for the median, voters_cap + 1 long */
    fasgd_srv_client_t **by_group;      /* the voters by key or address, voters_cap long, */
    size_t *group_len;                  /* the length of each group in it, voters_cap long, */
    size_t ngroups;
    int groups_stale;                   /* both to be made again: a voter came or went */
    /*  The reference (4.): NULL pool without one.  */
    const fasgd_model_t *model;
    fasgd_dataset_t *pool;              /* validation examples it draws from */
    fasgd_model_ws_t *ws;
    float *ref [S_REFS];                /* a ring of r, params->n floats each */
    double ref_norms [S_REFS];          /* their norms; 0: none there yet */
    uint64_t ref_Ts [S_REFS];           /* the timestamps of θ they were computed at */
    size_t ref_spans [S_REFS][2 * S_SPANS];     /* where each is not zero */
    size_t ref_nspans [S_REFS];
    int ref_next;                       /* the slot of the next */
    int ref_last;                       /* the slot of the last; -1 before the first */
    float *ref_x;                       /* a batch: guard.examples rows */
    uint8_t *ref_y;
    uint32_t *ref_idx;
    int ref_due;                        /* compute one before the next judgement */
    int trusted_refs;                   /* the ring holds trusted clients' pushes (5.), not computed ones */
    int trusted_near;                   /* the last push judged had a trusted one near enough */
    double resumed_refs [S_REFS];       /* the norms of the references a checkpoint kept, */
    int fresh_refs;                     /* counted in the anchor until S_REFS new ones are */
    uint64_t since_ref;                 /* pushes judged since */
    int doubt;                          /* one of them was not applied in full from a client in good standing */
    uint64_t ignored_in_row;            /* pushes ignored (weight 0) in a row, of all clients, */
    uint64_t probation_in_row;          /* of them from clients on probation */
    fasgd_rng_t rng;
    fasgd_verdict_params_t vp;
    fasgd_srv_guard_loss_t *loss;       /* the held-out loss's check (guard_loss.c); NULL: none */
    fasgd_checkpoint_key_t *keys;       /* the CURVE keys' records (6.), nkeys of them */
    size_t nkeys, keys_cap;
    int keys_full_logged;
    float *resumed_saved;               /* a checkpoint's saved θ for the loss check, until it is made; */
    int resumed_rollbacks;              /* and its jumps in a row */
};

fasgd_srv_guard_t *
fasgd_srv_guard_new (const fasgd_server_cfg_t *cfg, const fasgd_srv_params_t *params, float *scratch,
                     fasgd_srv_stats_t *st)
{
    fasgd_srv_guard_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = cfg;
    self->params = params;
    self->scratch = scratch;
    self->st = st;
    self->theta_bound = fasgd_floats_max_abs (params->theta, params->n);
    self->state_bound = fasgd_rule_state_max_abs (params->rule);
    const fasgd_rule_params_t *p = fasgd_rule_params (params->rule);
    /*  fasgd std: v ← βv + (1−β)/σ with σ ≥ √ε never exceeds 1/√ε.  */
    if (p->kind == FASGD_RULE_FASGD && p->statistic == FASGD_STAT_STD && 1.0 / sqrt (p->epsilon) > self->state_bound)
        self->state_bound = 1.0 / sqrt (p->epsilon);
    return self;
}

/*  What one push of norm at most g can add to max|θ|, and the state's
    bound after it (ALGORITHMS.md, "Update rules"; α(τ) ≤ α for every
    rule).  */
static double
s_step_bound (const fasgd_srv_guard_t *self, double g, double *state)
{
    const fasgd_rule_params_t *p = fasgd_rule_params (self->params->rule);
    double s = self->state_bound;
    *state = s;
    switch (p->kind) {
        case FASGD_RULE_FASGD:
            if (p->statistic == FASGD_STAT_STD) {
                /*  n ≤ max (n, g²), |b| ≤ max (|b|, g), v ≤ max (v, 1/√ε).  */
                *state = fmax (s, fmax (g * g, g));
                return p->lr * s * g;
            }
            /*  m ≤ max (m, g); the step divides by m + floor ≥ floor.  */
            *state = fmax (s, g);
            return p->lr * g / p->abs_floor;
        case FASGD_RULE_GAPAWARE:
            /*  Δ = α·g/G with G ≥ 1; C ≤ max (C, |Δ|).  */
            *state = fmax (s, p->lr * g);
            return p->lr * g;
        case FASGD_RULE_DCASGD:
            /*  θ is checked after the fact (below); DC-ASGD-a's MS ≤
                max (MS, g²).  */
            if (p->dc_adaptive)
                *state = fmax (s, g * g);
            return p->lr * g;
        case FASGD_RULE_SOFTSYNC:
            /*  The buffer sums up to c steps of α·g, applied divided by c.  */
            *state = s + p->lr * g;
            return p->lr * g;
        default:
            /*  asgd, sasgd (α(τ) ≤ α), and dcasgd, whose θ is checked
                after the fact (the file's comment): α·g.  */
            return p->lr * g;
    }
}

void
fasgd_srv_guard_destroy (fasgd_srv_guard_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_srv_guard_t *self = *self_p;
    for (size_t i = 0; i < self->nvoters; i++)
        self->voters [i]->has_typical = 0;
    free (self->voters);
    free (self->votes);
    free (self->by_group);
    free (self->group_len);
    fasgd_dataset_destroy (&self->pool);
    fasgd_model_ws_destroy (&self->ws);
    for (int i = 0; i < S_REFS; i++)
        free (self->ref [i]);
    free (self->ref_x);
    free (self->ref_y);
    free (self->ref_idx);
    fasgd_srv_guard_loss_destroy (&self->loss);
    free (self->keys);
    free (self->resumed_saved);
    free (self);
    *self_p = NULL;
}

/*  The verdict's parameters from the configuration (common/verdict.h).  */
static void
s_verdict_params (fasgd_srv_guard_t *self)
{
    const fasgd_server_cfg_t *cfg = self->cfg;
    fasgd_verdict_params_default (&self->vp);
    self->vp.factor = cfg->grad_norm_factor > 0 ? cfg->grad_norm_factor : INFINITY;
    self->vp.clip = cfg->grad_norm_action != FASGD_SRV_NORM_REFUSE;
    self->vp.cost = cfg->guard_cost;
    self->vp.trust = cfg->guard_trust;
    self->vp.refuse = cfg->guard_refuse;
    self->vp.stale = cfg->guard_stale;
    self->vp.span = cfg->guard_span;
    self->vp.probation = cfg->guard_probation;
}

/*  The ring of references; -1 out of memory.  */
static int
s_ring (fasgd_srv_guard_t *self)
{
    for (int i = 0; i < S_REFS; i++)
        if (!(self->ref [i] = malloc (self->params->n * sizeof (float))))
            return -1;
    self->ref_last = -1;
    return 0;
}

/*  Pushes judged between two references while one is in doubt
    (s_every): half of guard.every, at least one.  */
static int
s_every_in_doubt (int every)
{
    return every > 1 ? every / 2 : every;
}

int
fasgd_srv_guard_reference (fasgd_srv_guard_t *self, const fasgd_model_t *model, const fasgd_dataset_t *valid)
{
    const fasgd_server_cfg_t *cfg = self->cfg;
    if (!cfg->guard_enabled) {
        fasgd_log_warn ("guard: off (guard.enabled false): pushes reach the rule unjudged, which refuses NaN "
                        "and Inf only; no size, direction or overflow is checked");
        return 0;
    }
    if (!model || !valid || cfg->guard_examples <= 0 || self->params->n != self->params->total) {
        const char *why = !model ? "an external model" : self->params->n != self->params->total
                          ? "a shard holds part of the parameters" : cfg->guard_examples <= 0
                          ? "guard.examples is 0" : "no validation set: eval.enabled is false";
        if (!*cfg->guard_trusted) {
            fasgd_log_notice ("guard: no reference gradient (%s): pushes are checked for NaN, Inf and size only; "
                              "their direction is not, so a client pushing a negated or otherwise harmful "
                              "gradient within the size bound is not stopped (guard.trusted, with CURVE, names "
                              "client keys whose pushes would serve as the reference)", why);
            return 0;
        }
        /*  5.: trusted clients' pushes are the reference.  */
        if (s_ring (self) != 0)
            return -1;
        s_verdict_params (self);
        self->trusted_refs = 1;
        fasgd_log_notice ("guard: no reference gradient of its own (%s): the pushes of the keys of "
                          "guard.trusted serve as the reference, each judging the direction of the pushes "
                          "computed within %d updates of its parameters (guard.trusted_age); the trusted "
                          "pushes themselves are checked for NaN, Inf and size only, and so are all pushes "
                          "until a trusted one comes and while none is that near", why, cfg->guard_trusted_age);
        return 0;
    }
    uint32_t n = valid->n < (uint32_t) cfg->guard_pool ? valid->n : (uint32_t) cfg->guard_pool;
    int batch = cfg->guard_examples < (int) n ? cfg->guard_examples : (int) n;
    self->model = model;
    self->pool = fasgd_dataset_slice (valid, 0, n);
    self->ws = fasgd_model_ws_new (model, batch);
    if (s_ring (self) != 0)
        return -1;
    self->ref_x = malloc ((size_t) batch * valid->dim * sizeof (float));
    self->ref_y = malloc ((size_t) batch);
    self->ref_idx = malloc ((size_t) batch * sizeof (uint32_t));
    if (!self->pool || !self->ws || !self->ref_x || !self->ref_y || !self->ref_idx) {
        fasgd_dataset_destroy (&self->pool);
        return -1;
    }
    /*  A seed of its own, that no peer can guess: the batches are not
        known in advance to anyone who would shape a push to them.  */
    uint64_t seed = (uint64_t) fasgd_srv_now_ms () ^ ((uint64_t) getpid () << 32);
    FILE *f = fopen ("/dev/urandom", "rb");
    if (f) {
        if (fread (&seed, sizeof seed, 1, f) != 1)
            seed ^= (uint64_t) (uintptr_t) self;
        fclose (f);
    }
    fasgd_rng_seed (&self->rng, seed, S_REF_STREAM);
    if (cfg->guard_loss_examples > 0
        && !(self->loss = fasgd_srv_guard_loss_new (cfg, model, self->pool, self->params->n, &self->rng,
                                                  self->st)))
        return -1;
    if (self->loss && self->resumed_saved) {
        fasgd_srv_guard_loss_restore (self->loss, self->resumed_saved, self->resumed_rollbacks);
        free (self->resumed_saved);
        self->resumed_saved = NULL;
    }
    s_verdict_params (self);
    self->ref_due = 1;
    fasgd_log_notice ("guard: judging each push's direction against a reference gradient on %d of %u "
                      "validation examples, every %d pushes judged (%d while one is in doubt)%s", batch, n,
                      cfg->guard_every, s_every_in_doubt (cfg->guard_every), *cfg->guard_trusted
                      ? " (guard.trusted is not used: the trusted keys' pushes are judged like the others')" : "");
    return 0;
}

const float *
fasgd_srv_guard_rollback (fasgd_srv_guard_t *self)
{
    const float *theta = self->loss ? fasgd_srv_guard_loss_rollback (self->loss) : NULL;
    if (theta)
        self->ref_due = 1;              /* the next push meets a reference at θ as it will be */
    return theta;
}

const float *
fasgd_srv_guard_settle (fasgd_srv_guard_t *self)
{
    if (!self->loss)
        return NULL;
    fasgd_srv_guard_loss_measure (self->loss, self->params->theta);
    return fasgd_srv_guard_rollback (self);
}

int
fasgd_srv_guard_has_reference (const fasgd_srv_guard_t *self)
{
    return self->pool != NULL || self->trusted_refs;
}

const char *
fasgd_srv_guard_direction (const fasgd_srv_guard_t *self)
{
    return self->pool ? "reference" : self->trusted_refs ? "trusted" : "unchecked";
}

double
fasgd_srv_guard_reference_norm (const fasgd_srv_guard_t *self)
{
    return self->ref_last >= 0 ? self->ref_norms [self->ref_last] : 0;
}

double
fasgd_srv_guard_client_mean (const fasgd_srv_guard_t *self, const fasgd_srv_client_t *c)
{
    return fasgd_verdict_mean (&self->vp, &c->verdict);
}

/*  The reference just written at the ring's next slot, of norm `norm`
    and computed at θ of timestamp T, becomes the last one, with the
    spans where it is not zero: the pushes' dot products with it read
    those alone (the first-layer weights of pixels that no example of
    its batch inks are zero in it: a third of them on MNIST at 128
    examples), the same bits as over all of it.  */
static void
s_ring_add (fasgd_srv_guard_t *self, double norm, uint64_t T)
{
    int k = self->ref_next;
    self->ref_norms [k] = norm;
    self->ref_Ts [k] = T;
    self->ref_nspans [k] = fasgd_floats_nonzero_spans (self->ref [k], self->params->n, S_SPAN_GAP,
                                                       self->ref_spans [k], S_SPANS);
    size_t read = 0;
    for (size_t i = 0; i < self->ref_nspans [k]; i++)
        read += self->ref_spans [k][2 * i + 1] - self->ref_spans [k][2 * i];
    fasgd_log_debug ("guard: reference at T %llu: norm %.4g, not zero in %zu spans of %zu floats in all (of %zu)",
                     (unsigned long long) T, norm, self->ref_nspans [k], read, self->params->n);
    if (self->fresh_refs < S_REFS)
        self->fresh_refs++;
    self->ref_last = k;
    self->ref_next = (k + 1) % S_REFS;
}

/*  r at θ now, on a fresh batch, into the ring. A reference that is
    not finite or zero (θ where the batch's gradient vanishes) is not
    kept.  */
static void
s_reference (fasgd_srv_guard_t *self)
{
    int batch = fasgd_model_ws_max_batch (self->ws);
    for (int i = 0; i < batch; i++)
        self->ref_idx [i] = fasgd_rng_below (&self->rng, self->pool->n);
    fasgd_dataset_gather (self->pool, self->ref_idx, (uint32_t) batch, self->ref_x, self->ref_y);
    int k = self->ref_next;
    /*  A prepared batch: its first layer runs on the inked pixels alone
        (common/model.h), a third of the products on MNIST's digits.  */
    fasgd_model_batch_t *b = fasgd_model_batch_new (self->model, self->ref_x, self->ref_y, batch);
    double loss = b ? fasgd_model_batch_gradient (self->model, self->ws, self->params->theta, b, self->ref [k], NULL)
                : fasgd_model_gradient (self->model, self->ws, self->params->theta, self->ref_x, self->ref_y,
                                        batch, self->ref [k], NULL);
    fasgd_model_batch_destroy (&b);
    double norm = sqrt (fasgd_floats_sumsq (self->ref [k], self->params->n));
    self->ref_due = 0;
    self->since_ref = 0;
    self->doubt = 0;
    self->st->references++;
    if (self->loss)
        fasgd_srv_guard_loss_measure (self->loss, self->params->theta);
    if (!isfinite (loss) || !isfinite (norm) || norm <= 0) {
        /*  Slot k no longer holds the reference its norm and T describe:
            no push may be judged against it.  */
        self->ref_norms [k] = 0;
        self->ref_nspans [k] = 0;
        self->ref_due = self->ref_last < 0;     /* none yet: try again at the next push */
        return;
    }
    s_ring_add (self, norm, self->params->T);
}

/*  The reference a gradient computed at θ of timestamp j is judged
    against: the last computed at j or before (so an honest stale
    gradient meets the reference of its own θ, or nearly), else the
    oldest kept.  */
static int
s_ref_for (const fasgd_srv_guard_t *self, uint64_t j)
{
    int best = -1, oldest = self->ref_last;
    for (int i = 0; i < S_REFS; i++) {
        if (self->ref_norms [i] <= 0)
            continue;
        if (self->ref_Ts [i] <= j && (best < 0 || self->ref_Ts [i] > self->ref_Ts [best]))
            best = i;
        if (self->ref_Ts [i] < self->ref_Ts [oldest])
            oldest = i;
    }
    return best >= 0 ? best : oldest;
}

/*  5.: whether reference k, from a trusted push, is near enough to a
    push computed at θ of timestamp j to judge it (within
    guard.trusted_age updates); logged when that changes.  */
static int
s_trusted_near (fasgd_srv_guard_t *self, int k, uint64_t j)
{
    uint64_t rT = self->ref_Ts [k], d = j > rT ? j - rT : rT - j;
    int near = d <= (uint64_t) self->cfg->guard_trusted_age;
    if (near != self->trusted_near)
        fasgd_log_notice (near ? "guard: a trusted push (T=%llu) judges the pushes' direction again"
                               : "guard: no trusted push within guard.trusted_age of a push's parameters (the last "
                                 "one at T=%llu): pushes are checked for size only until one comes",
                          (unsigned long long) rT);
    self->trusted_near = near;
    return near;
}

/*  5.: an applied push of a trusted client, g of norm `norm` computed at
    θ of timestamp j, into the ring. A zero or non-finite one is not kept.  */
static void
s_trusted_keep (fasgd_srv_guard_t *self, const float *g, uint64_t j, double norm)
{
    if (!g || !(norm > 0) || !isfinite (norm))
        return;
    memcpy (self->ref [self->ref_next], g, self->params->n * sizeof (float));
    s_ring_add (self, norm, j);
    self->st->references++;
}

/*  The largest norm of the references kept: the anchor's floor.  */
static double
s_ref_scale (const fasgd_srv_guard_t *self)
{
    double m = 0;
    for (int i = 0; i < S_REFS; i++) {
        if (self->ref_norms [i] > m)
            m = self->ref_norms [i];
        if (self->fresh_refs < S_REFS && self->resumed_refs [i] > m)
            m = self->resumed_refs [i];
    }
    return m;
}

/*  4.: the anchor the norm bound's factor multiplies: the clients'
    median, held by the references' norms (common/verdict.h).  */
static double
s_anchor (const fasgd_srv_guard_t *self)
{
    return fasgd_verdict_anchor (&self->vp, s_ref_scale (self), self->median);
}

/*  6.: the record of key (NULL when it has none and add is 0, or when
    FASGD_CHECKPOINT_GUARD_KEYS are kept: logged once).  */
static fasgd_checkpoint_key_t *
s_key_find (fasgd_srv_guard_t *self, const char *key, int add)
{
    for (size_t i = 0; i < self->nkeys; i++)
        if (!strcmp (self->keys [i].key, key))
            return &self->keys [i];
    if (!add || strlen (key) != FASGD_CHECKPOINT_KEY_LEN)
        return NULL;
    if (self->nkeys == FASGD_CHECKPOINT_GUARD_KEYS) {
        if (!self->keys_full_logged++)
            fasgd_log_warn ("guard: the records of %d keys are kept, no more: key %s's clients start anew when "
                            "they join again", FASGD_CHECKPOINT_GUARD_KEYS, key);
        return NULL;
    }
    if (self->nkeys == self->keys_cap) {
        size_t cap = self->keys_cap ? self->keys_cap * 2 : 16;
        fasgd_checkpoint_key_t *k = realloc (self->keys, cap * sizeof *k);
        if (!k)
            return NULL;
        self->keys = k;
        self->keys_cap = cap;
    }
    fasgd_checkpoint_key_t *k = &self->keys [self->nkeys++];
    memset (k, 0, sizeof *k);
    snprintf (k->key, sizeof k->key, "%s", key);
    return k;
}

/*  6.: c's records into its key's.  */
static void
s_key_keep (fasgd_srv_guard_t *self, fasgd_srv_client_t *c)
{
    if (!c->key [0])
        return;
    if (!c->key_slot) {
        fasgd_checkpoint_key_t *k = s_key_find (self, c->key, 1);
        if (!k)
            return;
        c->key_slot = (size_t) (k - self->keys) + 1;
    }
    fasgd_checkpoint_key_t *k = &self->keys [c->key_slot - 1];
    k->rise = fmax (-FASGD_CHECKPOINT_RISE_MAX, fmin (FASGD_CHECKPOINT_RISE_MAX, c->loss_rise));
    k->sum = c->verdict.sum;
    k->count = c->verdict.count;
    k->pushes = c->verdict.pushes;
    if (c->has_typical || c->typical_kept)
        k->typical = c->norm_typical;
}

void
fasgd_srv_guard_joined (fasgd_srv_guard_t *self, fasgd_srv_client_t *c)
{
    if (!c->key [0])
        return;
    fasgd_checkpoint_key_t *k = s_key_find (self, c->key, 0);
    if (!k)
        return;
    c->key_slot = (size_t) (k - self->keys) + 1;
    c->loss_rise = k->rise;
    c->verdict.sum = k->sum;
    c->verdict.count = k->count;
    c->verdict.pushes = k->pushes;
    c->norm_typical = k->typical;
    c->typical_kept = k->typical > 0;
    fasgd_log_info ("guard: client %u (%s) takes its key's record: %.0f pushes judged, mean score %.3g, loss "
                    "record %+.3g", c->id, c->name, k->pushes, fasgd_verdict_mean (&self->vp, &c->verdict), k->rise);
}

void
fasgd_srv_guard_forget (fasgd_srv_guard_t *self, fasgd_srv_client_t *c)
{
    s_key_keep (self, c);
    if (self->loss)
        fasgd_srv_guard_loss_forget (self->loss, c);
    if (!c->has_typical)
        return;
    fasgd_srv_client_t *last = self->voters [--self->nvoters];
    self->voters [c->vote_slot] = last;
    last->vote_slot = c->vote_slot;
    c->has_typical = 0;
    self->groups_stale = 1;
}

/*  Makes c a voter; -1 without memory for it (it then does not vote).  */
static int
s_voter_add (fasgd_srv_guard_t *self, fasgd_srv_client_t *c)
{
    if (self->nvoters == self->voters_cap) {
        size_t cap = self->voters_cap ? self->voters_cap * 2 : 64;
        fasgd_srv_client_t **v = realloc (self->voters, cap * sizeof *v);
        if (!v)
            return -1;
        self->voters = v;
        fasgd_verdict_weighted_t *w = realloc (self->votes, (cap + 1) * sizeof *w);
        if (!w)
            return -1;
        self->votes = w;
        fasgd_srv_client_t **k = realloc (self->by_group, cap * sizeof *k);
        if (!k)
            return -1;
        self->by_group = k;
        size_t *l = realloc (self->group_len, cap * sizeof *l);
        if (!l)
            return -1;
        self->group_len = l;
        self->voters_cap = cap;
    }
    c->vote_slot = self->nvoters;
    self->voters [self->nvoters++] = c;
    c->has_typical = 1;
    self->groups_stale = 1;
    return 0;
}

/*  A voter's group: its CURVE key; without one, the address it joined
    from.  */
static const char *
s_group (const fasgd_srv_client_t *c)
{
    return c->key [0] ? c->key : c->addr;
}

/*  Orders voters by group, those with a key first.  */
static int
s_cmp_group (const void *a, const void *b)
{
    const fasgd_srv_client_t *x = *(fasgd_srv_client_t *const *) a, *y = *(fasgd_srv_client_t *const *) b;
    if (!x->key [0] != !y->key [0])
        return x->key [0] ? -1 : 1;
    return strcmp (s_group (x), s_group (y));
}

/*  The weight of each of m ids of one address: they share
    guard.address_votes votes (all of them: 0), at most one each.  */
static double
s_id_weight (const fasgd_srv_guard_t *self, size_t m)
{
    int votes = self->cfg->guard_address_votes;
    return votes == 0 || m <= (size_t) votes ? 1 : (double) votes / (double) m;
}

/*  Orders the voters by group (by_group) and measures each group
    (group_len): when a voter came or went since, not at every median
    (a client's key and address do not change).  */
static void
s_groups_update (fasgd_srv_guard_t *self)
{
    if (!self->groups_stale)
        return;
    self->groups_stale = 0;
    self->ngroups = 0;
    if (self->nvoters == 0)
        return;
    memcpy (self->by_group, self->voters, self->nvoters * sizeof *self->voters);
    qsort (self->by_group, self->nvoters, sizeof *self->by_group, s_cmp_group);
    for (size_t i = 0, j; i < self->nvoters; i = j) {
        for (j = i + 1; j < self->nvoters && !s_cmp_group (&self->by_group [j], &self->by_group [i]); j++)
            ;
        self->group_len [self->ngroups++] = j - i;
    }
}

/*  The history: the lower median of the last n accepted norms.  */
static double
s_history (const double *norms, int n)
{
    fasgd_verdict_weighted_t tmp [S_NORM_WINDOW];
    for (int i = 0; i < n; i++)
        tmp [i] = (fasgd_verdict_weighted_t) { norms [i], 1 };
    return fasgd_verdict_weighted_lower_median (tmp, (size_t) n);
}

/*  The lower weighted median of the votes: a CURVE key's, the mean of
    its clients' typical norms, weighing 1; without CURVE each client's
    own, the m clients that joined from one address sharing
    guard.address_votes (1 by default: m weigh 1/m each, however many,
    as much as one client from an address of its own); and the
    history's, weighing as one client of the address with the most (1
    with CURVE). When every address has as many clients (one host, or
    one client a host) the weights are equal and this is the lower
    median of the votes.  */
static void
s_median_update (fasgd_srv_guard_t *self)
{
    s_groups_update (self);
    size_t n = 0, most = 1;
    for (size_t g = 0, i = 0; g < self->ngroups; i += self->group_len [g++]) {
        size_t m = self->group_len [g];
        if (self->by_group [i]->key [0]) {
            double sum = 0;
            for (size_t k = i; k < i + m; k++)
                sum += self->by_group [k]->norm_typical;
            self->votes [n++] = (fasgd_verdict_weighted_t) { sum / (double) m, 1 };
        }
        else {
            double w = s_id_weight (self, m);
            for (size_t k = i; k < i + m; k++)
                self->votes [n++] = (fasgd_verdict_weighted_t) { self->by_group [k]->norm_typical, w };
            if (m > most)
                most = m;
        }
    }
    if (self->norm_count > 0) {
        if (!self->votes)
            return;
        self->votes [n++] = (fasgd_verdict_weighted_t) { self->history, s_id_weight (self, most) };
    }
    self->median = fasgd_verdict_weighted_lower_median (self->votes, n);
}

/*  Counts a push of norm `norm` that met `bound` in c's vote, and takes
    the median again: at every push while few clients vote, else every
    FASGD_VERDICT_MEDIAN_EVERY pushes.  */
static void
s_vote (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, double norm, double bound)
{
    int first = !(c->has_typical || c->typical_kept);
    double x = first || norm < bound ? norm : bound;
    c->norm_typical = fasgd_verdict_vote (c->norm_typical, first, x);
    if (!c->has_typical && s_voter_add (self, c) != 0)
        return;
    if (fasgd_verdict_median_due (self->nvoters, &self->since_median))
        s_median_update (self);
}

/*  Scales *gp by w into the scratch buffer.  */
static void
s_scale (fasgd_srv_guard_t *self, const float **gp, double w)
{
    const float *g = *gp;
    float scale = (float) w;
    for (size_t i = 0; i < self->params->n; i++)
        self->scratch [i] = g [i] * scale;
    *gp = self->scratch;
}

/*  4.: what the held-out loss did after c's applied pushes takes weight
    away from its push (guard_loss.c); logged when it first does.  */
static void
s_loss_cut (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, fasgd_verdict_t *v)
{
    double f = fasgd_srv_guard_loss_factor (self->loss, c);
    if (v->kind != FASGD_VERDICT_APPLY || f >= 1)
        return;
    if (c->loss_cut++ == 0)
        fasgd_log_notice ("guard: client %u (%s): the held-out loss rose by a factor %.3g after its applied "
                          "pushes (above guard.loss_rise, %.3g in log): its pushes' weight is cut while that lasts",
                          c->id, c->name, exp (c->loss_rise), self->cfg->guard_loss_rise);
    self->st->loss_cut++;
    /*  Never below the least share (or the score's weight, if lower): a
        client whose pushes were all ignored would leave θ where the loss
        stood, and its record could never come down with it.  */
    double least = v->weight < FASGD_SRV_GUARD_LOSS_LEAST ? v->weight : FASGD_SRV_GUARD_LOSS_LEAST;
    v->weight *= f;
    if (v->weight <= least) {
        v->weight = least;
        self->st->loss_ignored++;
    }
}

/*  The notice of S_IGNORED_NOTICE more pushes ignored in a row, c's the
    last (its mean score `mean`): why they were, those of clients on
    probation apart.  */
static void
s_ignored_notice (const fasgd_srv_guard_t *self, const fasgd_srv_client_t *c, double mean)
{
    unsigned long long n = self->ignored_in_row, on = self->probation_in_row;
    const char *why = self->pool ? "predicted no descent of the held-out loss"
                                 : "did not point along the trusted clients'";
    if (on == n)
        fasgd_log_notice ("guard: the last %llu pushes were all ignored (T=%llu), every one a client's first "
                          "guard.probation (%g), which are judged but never applied", n,
                          (unsigned long long) self->params->T, self->vp.probation);
    else
        fasgd_log_notice ("guard: the last %llu pushes were all ignored (T=%llu; the last one's mean score %.3g, "
                          "from client %u): %llu of them %s%s", n, (unsigned long long) self->params->T, mean, c->id,
                          n - on, why, on ? "; the others were clients' first guard.probation pushes" : "");
}

/*  4.: the verdict on *gp, of norm `norm` and dot product dot with r,
    against the anchor; 0 or the status to refuse it with.  */
static int
s_judge (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, const float **gp, int repeat, uint64_t tau, int k,
         double dot, double *weight_p, double *norm_p, char *why, size_t whylen)
{
    double anchor = s_anchor (self);
    if (self->cfg->grad_norm_factor > 0 && !repeat)
        s_vote (self, c, *norm_p, self->vp.factor * anchor);
    /*  How far g's θ and the reference's are apart, in updates.  */
    uint64_t j = self->params->T - tau, rT = self->ref_Ts [k];
    fasgd_verdict_t v;
    fasgd_verdict_judge (&self->vp, &c->verdict, dot, *norm_p, self->ref_norms [k], anchor, j > rT ? j - rT : rT - j,
                         &v, why, whylen);
    fasgd_log_debug ("guard: T %llu tau %llu ref %llu client %u: norm %.4g, anchor %.4g, cosine %.3f, score %.3g: weight %.3g, mean %.3g, "
                     "margin %.3g", (unsigned long long) self->params->T, (unsigned long long) tau,
                     (unsigned long long) rT, c->id,
                     *norm_p, anchor, v.cosine, v.score, v.kind == FASGD_VERDICT_REFUSE ? -1 : v.weight, v.mean, v.margin);
    if (v.kind == FASGD_VERDICT_REFUSE)
        return FASGD_STATUS_NONFINITE;
    if (self->loss)
        s_loss_cut (self, c, &v);
    s_key_keep (self, c);
    if (v.kind == FASGD_VERDICT_IGNORE) {
        *weight_p = 0;
        self->st->ignored++;
        c->ignored++;
        /*  Many clients joining at once (a load test, a cluster
            starting) have their first guard.probation pushes ignored by
            design: said as such, not as pushes that predict ascent.  */
        if (fasgd_verdict_on_probation (&self->vp, &c->verdict))
            self->probation_in_row++;
        if (++self->ignored_in_row % S_IGNORED_NOTICE == 0)
            s_ignored_notice (self, c, v.mean);
        return 0;
    }
    if (self->ignored_in_row >= S_IGNORED_NOTICE)
        fasgd_log_notice ("guard: pushes are applied again after %llu ignored in a row (T=%llu)",
                          (unsigned long long) self->ignored_in_row, (unsigned long long) self->params->T);
    self->ignored_in_row = self->probation_in_row = 0;
    /*  A weight w below 1 applies a share w of the client's pushes, each
        as it came (its credit), not each push scaled by w: fasgd divides
        each parameter's step by the pushes' own spread, which pushes
        scaled down shrink, so that the next pushes' steps grow. A client
        left alone whose weight went from 0.06 to 0.9 in 12 pushes took
        the held-out loss from 0.27 to 1.29 with them.  */
    double clip = *norm_p > v.bound ? v.bound / *norm_p : 1;
    double w = v.weight / clip;
    if (w < 1) {
        self->st->weighted++;
        c->weighted++;
        c->credit += w;
        if (c->credit < 1) {
            *weight_p = 0;
            return 0;
        }
        c->credit -= 1;
    }
    if (clip < 1) {
        s_scale (self, gp, clip);
        *norm_p *= clip;
        *weight_p = clip;
        self->st->clipped++;
        c->clipped++;
    }
    return 0;
}

/*  Pushes judged between two references, before c's push is judged:
    guard.every while every push judged since the last reference was
    applied in full (weight 1, not clipped, not cut by the loss check)
    from a client in good standing, and c is in good standing; half as
    many (at least one) otherwise. A push of a client not in good
    standing, and every push after one the guard did not apply in full,
    meets a reference as fresh as at a fixed cadence of guard.every / 2;
    while all is calm, references and the loss check's measures come
    half as often (docs/ALGORITHMS.md, "The guard").  */
static uint64_t
s_every (const fasgd_srv_guard_t *self, const fasgd_srv_client_t *c)
{
    int every = self->cfg->guard_every;
    int doubt = self->doubt || !fasgd_srv_guard_loss_standing (self->loss, c);
    return (uint64_t) (doubt ? s_every_in_doubt (every) : every);
}

void
fasgd_srv_guard_target (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, int repeat, uint64_t tau,
                        fasgd_srv_guard_target_t *t)
{
    const fasgd_server_cfg_t *cfg = self->cfg;
    memset (t, 0, sizeof *t);
    t->k = -1;
    if (!cfg->guard_enabled)
        return;
    int builtin = self->pool != NULL;
    if (builtin && (self->ref_due || self->since_ref >= s_every (self, c)))
        s_reference (self);
    /*  A trusted client's push is not judged against another's: it is
        one (5.).  */
    int judge = self->ref_last >= 0 && (builtin || (self->trusted_refs && !c->trusted));
    int k = judge ? s_ref_for (self, self->params->T - tau) : -1;
    if (judge && self->trusted_refs)
        judge = s_trusted_near (self, k, self->params->T - tau);
    /*  Pushes judged, not updates applied, count towards the next
        reference: were every push ignored, θ and a reference that an
        unlucky batch made point away from every client's pushes would
        otherwise stay as they are for good.  */
    if (judge && builtin)
        self->since_ref++;
    t->judge = judge;
    t->k = k;
    /*  A repeat's size was judged when it came: only what it may add
        is, and its direction against today's reference.  */
    t->read = judge || !repeat;
    if (judge) {
        t->r = self->ref [k];
        t->spans = self->ref_spans [k];
        t->nspans = self->ref_nspans [k];
    }
}

static int
s_check (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, const fasgd_srv_guard_target_t *t, const double *sums,
         const float **gp, int repeat, uint64_t tau, double *weight_p, double *norm_p, char *why, size_t whylen)
{
    const fasgd_server_cfg_t *cfg = self->cfg;
    const float *g = *gp;
    *weight_p = 1;
    if (!cfg->guard_enabled) {
        *norm_p = 0;
        return 0;
    }
    int judge = t->judge, k = t->k;
    double dot = 0, norm;
    if (!t->read)
        norm = c->last_norm;
    else if (sums) {
        norm = sqrt (sums [0]);
        dot = judge ? sums [1] : 0;
    }
    else
        norm = judge ? sqrt (fasgd_floats_sumsq_dot_spans (g, t->r, self->params->n, t->spans, t->nspans, &dot))
                     : sqrt (fasgd_floats_sumsq (g, self->params->n));
    *norm_p = norm;
    if (repeat && !judge)
        goto overflow;
    if (!isfinite (norm)) {
        snprintf (why, whylen, "the gradient holds NaN or Inf");
        return FASGD_STATUS_NONFINITE;
    }
    /*  The bound the norm is held to: the fixed one, the median's multiple.  */
    double bound = cfg->grad_norm > 0 ? cfg->grad_norm : INFINITY;
    const char *which = "limits.grad_norm";
    int median_bound = 0;
    /*  A median of 0 (clients pushing zeros) bounds nothing.  */
    if (!judge && cfg->grad_norm_factor > 0 && self->median > 0 && cfg->grad_norm_factor * self->median < bound) {
        bound = cfg->grad_norm_factor * self->median;
        median_bound = 1;
        which = "limits.grad_norm_factor times the median of the clients' typical norms";
    }
    if (!judge && cfg->grad_norm_factor > 0)
        s_vote (self, c, norm, bound);
    if (norm > bound) {
        if (cfg->grad_norm_action == FASGD_SRV_NORM_REFUSE || (cfg->grad_norm_action == FASGD_SRV_NORM_AUTO && !judge)) {
            /*  Without a reference the bound is the median's multiple
                alone, and an honest client's minibatch gradient now and
                then spikes past it (on MNIST 20 to 60 times its typical
                norm; a lone client of the README's shards example, once
                in 3,000 steps). Such a push from a client whose last push
                was applied is left out, acknowledged and not applied, as
                a push the score gives weight 0 is; a second in a row is
                refused. Nothing left out moves θ, so an attacker gains
                nothing by it but not being forgotten, which costs the
                server what a refusal does.  */
            if (median_bound && cfg->grad_norm_action == FASGD_SRV_NORM_AUTO && c->has_pushed && !c->over_left_out) {
                c->over_left_out = 1;
                self->st->ignored++;
                c->ignored++;
                fasgd_log_info ("guard: a push of client %u (%s) of norm %.4g above %.4g (%s) is left out; "
                                "a second in a row is refused", c->id, c->name, norm, bound, which);
                *weight_p = 0;
                return 0;
            }
            snprintf (why, whylen, "gradient norm %.4g is above %.4g (%s)", norm, bound, which);
            return FASGD_STATUS_NONFINITE;
        }
        /*  Clipped into the server's own buffer: the rule sees g·bound/‖g‖.  */
        s_scale (self, gp, bound / norm);
        dot *= bound / norm;
        norm = bound;
        *norm_p = norm;
        self->st->clipped++;
        c->clipped++;
    }
    if (judge) {
        int status = s_judge (self, c, gp, repeat, tau, k, dot, weight_p, norm_p, why, whylen);
        if (status != 0 || *weight_p == 0)
            return status;
        norm = *norm_p;
    }
overflow:;
    double state;
    double step = s_step_bound (self, norm, &state);
    if (norm > S_MAX_NORM || !(self->theta_bound + step <= S_LIMIT) || !(state <= S_LIMIT)) {
        snprintf (why, whylen, "gradient norm %.4g could take the parameters or the rule's statistics "
                  "past %g", norm, S_LIMIT);
        return FASGD_STATUS_NONFINITE;
    }
    c->loss_weight = *weight_p;
    return 0;
}

int
fasgd_srv_guard_judge (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, const fasgd_srv_guard_target_t *t,
                       const double *sums, const float **gp, int repeat, uint64_t tau, double *weight_p,
                       double *norm_p, char *why, size_t whylen)
{
    uint64_t marks = c->clipped + c->weighted + c->ignored;
    int status = s_check (self, c, t, sums, gp, repeat, tau, weight_p, norm_p, why, whylen);
    /*  Anything but a push applied in full from a client in good
        standing brings the next reference nearer (s_every). Every
        weight below 1 that s_check gives comes with one of c's clipped,
        weighted or ignored counts raised.  */
    if (t->judge && (status != 0 || c->clipped + c->weighted + c->ignored != marks
                     || !fasgd_srv_guard_loss_standing (self->loss, c)))
        self->doubt = 1;
    return status;
}

int
fasgd_srv_guard_check (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, const float **gp, int repeat, uint64_t tau,
                       double *weight_p, double *norm_p, char *why, size_t whylen)
{
    fasgd_srv_guard_target_t t;
    fasgd_srv_guard_target (self, c, repeat, tau, &t);
    return fasgd_srv_guard_judge (self, c, &t, NULL, gp, repeat, tau, weight_p, norm_p, why, whylen);
}

void
fasgd_srv_guard_accepted (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, const float *g, uint64_t j, double norm,
                          int repeat)
{
    c->refused_in_row = 0;
    c->over_left_out = 0;
    if (!self->cfg->guard_enabled)
        return;
    if (self->trusted_refs && c->trusted && !repeat)
        s_trusted_keep (self, g, j, norm);
    if (self->loss && c->loss_weight > 0)
        fasgd_srv_guard_loss_applied (self->loss, c, c->loss_weight);
    double state;
    self->theta_bound += s_step_bound (self, norm, &state);
    self->state_bound = state;
    if (++self->since_measure >= S_REMEASURE && !fasgd_rule_needs_theta_used (self->params->rule)) {
        /*  θ_used rules keep the bound of every θ a client may still hold.  */
        self->theta_bound = fasgd_floats_max_abs (self->params->theta, self->params->n);
        self->since_measure = 0;
    }
    if (repeat || self->cfg->grad_norm_factor <= 0)
        return;
    self->norms [self->norm_next] = norm;
    self->norm_next = (self->norm_next + 1) % S_NORM_WINDOW;
    if (self->norm_count < S_NORM_WINDOW)
        self->norm_count++;
    if (fasgd_verdict_median_due ((size_t) self->norm_count, &self->since_history)) {
        self->history = s_history (self->norms, self->norm_count);
        s_median_update (self);
    }
}

fasgd_srv_guard_verdict_t
fasgd_srv_guard_refused (fasgd_srv_guard_t *self, fasgd_srv_client_t *c)
{
    self->st->guarded++;
    c->refused++;
    if (self->cfg->max_refusals <= 0 || ++c->refused_in_row < (uint64_t) self->cfg->max_refusals)
        return FASGD_SRV_GUARD_KEEP;
    fasgd_log_warn ("client %u (%s) forgotten: %llu gradients in a row refused (limits.refusals)", c->id,
                    c->name, (unsigned long long) c->refused_in_row);
    self->st->forgotten++;
    return FASGD_SRV_GUARD_FORGET;
}

double
fasgd_srv_guard_median (const fasgd_srv_guard_t *self)
{
    return self->median;
}

double
fasgd_srv_guard_honest_norm (const fasgd_srv_guard_t *self)
{
    return s_ref_scale (self) > 0 ? s_anchor (self) : self->median;
}

void
fasgd_srv_guard_save (fasgd_srv_guard_t *self, fasgd_checkpoint_guard_t *out, const float **saved)
{
    memset (out, 0, sizeof *out);
    /*  The records a measure or a vote changed since their client's last
        push: into their keys' first.  */
    for (size_t i = 0; i < self->nvoters; i++)
        s_key_keep (self, self->voters [i]);
    size_t np = 0;
    fasgd_srv_client_t *const *pending = self->loss ? fasgd_srv_guard_loss_clients (self->loss, &np) : NULL;
    for (size_t i = 0; i < np; i++)
        s_key_keep (self, pending [i]);
    out->nkeys = (uint32_t) self->nkeys;
    if (self->nkeys > 0)                /* none kept yet: keys is NULL */
        memcpy (out->keys, self->keys, self->nkeys * sizeof *self->keys);
    int rollbacks = self->resumed_rollbacks;
    *saved = self->loss ? fasgd_srv_guard_loss_saved (self->loss, &rollbacks) : self->resumed_saved;
    out->rollbacks = (uint32_t) rollbacks;
    /*  The ring from its oldest: at 0 until it is full, then at the next slot.  */
    int start = self->norm_count < S_NORM_WINDOW ? 0 : self->norm_next;
    for (int i = 0; i < self->norm_count; i++)
        out->norms [i] = self->norms [(start + i) % S_NORM_WINDOW];
    out->nnorms = (uint32_t) self->norm_count;
    for (int i = 0; i < S_REFS; i++)
        if (self->ref_norms [i] > 0)
            out->refs [out->nrefs++] = self->ref_norms [i];
    for (int i = 0; i < S_REFS && out->nrefs < S_REFS && self->fresh_refs < S_REFS; i++)
        if (self->resumed_refs [i] > 0)
            out->refs [out->nrefs++] = self->resumed_refs [i];
}

void
fasgd_srv_guard_restore (fasgd_srv_guard_t *self, const fasgd_checkpoint_guard_t *in, const float *saved)
{
    free (self->keys);
    self->keys = NULL;
    self->nkeys = self->keys_cap = 0;
    if (in->nkeys > 0 && (self->keys = malloc (in->nkeys * sizeof *self->keys))) {
        memcpy (self->keys, in->keys, in->nkeys * sizeof *self->keys);
        self->nkeys = self->keys_cap = in->nkeys;
    }
    self->resumed_rollbacks = (int) in->rollbacks;
    free (self->resumed_saved);
    self->resumed_saved = saved ? malloc (self->params->n * sizeof (float)) : NULL;
    if (self->resumed_saved)
        memcpy (self->resumed_saved, saved, self->params->n * sizeof (float));
    int n = in->nnorms < S_NORM_WINDOW ? (int) in->nnorms : S_NORM_WINDOW;
    memcpy (self->norms, in->norms, (size_t) n * sizeof (double));
    self->norm_count = n;
    self->norm_next = n % S_NORM_WINDOW;
    self->history = s_history (self->norms, n);
    self->since_history = 0;
    /*  No client votes yet: the history's vote is the median.  */
    self->median = self->history;
    memset (self->resumed_refs, 0, sizeof self->resumed_refs);
    for (uint32_t i = 0; i < in->nrefs && i < S_REFS; i++)
        self->resumed_refs [i] = in->refs [i];
    self->fresh_refs = 0;
    fasgd_log_notice ("guard: resumed with the norms of the last %d accepted pushes (their median %.4g bounds the "
                      "first pushes) and of %u reference gradients, the records of %zu keys%s", n, self->history,
                      (unsigned) in->nrefs, self->nkeys, saved ? " and the loss check's saved parameters" : "");
}
