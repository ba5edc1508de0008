/*  sim: the deterministic simulator. See sim.h for the model it runs.  */
#include "sim.h"
#include "simint.h"

#include "halves.h"
#include "log.h"
#include "rng.h"
#include "shardmap.h"
#include "snapshot.h"

#include <assert.h>
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const s_modes [] = { "iterations", "events", NULL };
static const char *const s_speeds [] = { "equal", "lognormal", NULL };
static const char *const s_time_dists [] = { "fixed", "exponential", "lognormal", NULL };
static const char *const s_progress_modes [] = { "off", "auto", "on", NULL };
static const char *const s_shard_maps [] = { "one", "layer", "tensor", "split", NULL };

const fasgd_cfg_key_t fasgd_sim_cfg_keys [] = {
    FASGD_CFG_KEY_U64 ("seed", fasgd_sim_cfg_t, seed, 0, 0, "1",
        "seed of every random stream (picks, gates, initial weights, compute times)"),
    FASGD_CFG_KEY_U64 ("iterations", fasgd_sim_cfg_t, iterations, 1, 1e15, "100000",
        "client minibatch gradients in the run"),
    FASGD_CFG_KEY_INT ("clients", fasgd_sim_cfg_t, clients, 1, 1000000, "128", "lambda: simulated clients"),
    FASGD_CFG_KEY_INT ("batch", fasgd_sim_cfg_t, batch, 1, 1000000, "1", "mu: minibatch size of each client"),
    FASGD_CFG_KEY_INT ("threads", fasgd_sim_cfg_t, threads, 0, 1024, "0",
        "threads computing gradients ahead (0: all cores); results do not depend on it"),
    FASGD_CFG_KEY_ENUM ("mode", fasgd_sim_cfg_t, mode, s_modes, "iterations",
        "iterations: pick a client per iteration; events: compute times and a shared link"),
    FASGD_CFG_KEY_ENUM ("speed.dist", fasgd_sim_cfg_t, speed, s_speeds, "equal",
        "per-client speeds: equal, or lognormal (heterogeneous machines); weights the picks"),
    FASGD_CFG_KEY_DOUBLE ("speed.sigma", fasgd_sim_cfg_t, speed_sigma, 0, 10, 0, "0.5",
        "lognormal speeds: sigma of log(speed)"),
    FASGD_CFG_KEY_DOUBLE ("events.compute_time", fasgd_sim_cfg_t, compute_time, 0, 1e6,
        FASGD_CFG_MIN_OPEN, "0.01", "events: mean seconds per gradient of a speed-1 client"),
    FASGD_CFG_KEY_ENUM ("events.compute_dist", fasgd_sim_cfg_t, compute_dist, s_time_dists, "fixed",
        "events: each gradient's compute time is fixed, exponential or lognormal around the mean"),
    FASGD_CFG_KEY_DOUBLE ("events.compute_sigma", fasgd_sim_cfg_t, compute_sigma, 0, 10, 0, "0.5",
        "events: sigma of the lognormal compute time"),
    FASGD_CFG_KEY_DOUBLE ("events.bandwidth", fasgd_sim_cfg_t, bandwidth, 0, 1e15, 0, "125000000",
        "events: bytes/s of the server's link, each direction (0: unlimited)"),
    FASGD_CFG_KEY_DOUBLE ("events.latency", fasgd_sim_cfg_t, latency, 0, 1e3, 0, "0.0001",
        "events: one-way latency in seconds"),
    FASGD_CFG_KEY_INT ("eval.every", fasgd_sim_cfg_t, eval_every, 1, 1000000000, "100",
        "validate every this many server timestamps"),
    FASGD_CFG_KEY_STRING ("output.csv", fasgd_sim_cfg_t, csv, 0, "",
        "CSV file, a row per validation (empty: none; -: standard output)"),
    FASGD_CFG_KEY_ENUM ("output.progress", fasgd_sim_cfg_t, progress, s_progress_modes, "on",
        "progress on standard error: off, auto (on a terminal only), on (redrawn on a terminal, "
        "a line every 5 s otherwise)"),
    FASGD_CFG_KEY_INCLUDE ("model", fasgd_sim_cfg_t, model, fasgd_model_cfg_keys),
    FASGD_CFG_KEY_INCLUDE ("rule", fasgd_sim_cfg_t, rule, fasgd_rule_cfg_keys),
    FASGD_CFG_KEY_INCLUDE ("gates", fasgd_sim_cfg_t, gates, fasgd_gates_cfg_keys),
    FASGD_CFG_KEY_ENUM ("wire.push", fasgd_sim_cfg_t, wire_push, fasgd_wire_names, "f32",
        "gradients as fasgd-server's wire.push sends them: f32, or bf16 or f16 with each client's "
        "rounding error carried into its next push"),
    FASGD_CFG_KEY_ENUM ("wire.params", fasgd_sim_cfg_t, wire_params, fasgd_wire_names, "f32",
        "parameters as fasgd-server's wire.params sends them: f32, or rounded to bf16 or f16"),
    FASGD_CFG_KEY_ENUM ("shards", fasgd_sim_cfg_t, shards, s_shard_maps, "one",
        "the model split across servers: one, layer (a shard per weight layer and its bias), tensor, or "
        "split (shard_count parts, as fasgd-servers with that shard.count split it); each shard has its "
        "own timestamp, rule state and v-bar, which gates pushes and fetches of it"),
    FASGD_CFG_KEY_INT ("shard_count", fasgd_sim_cfg_t, shard_count, 1, FASGD_SHARDMAP_MAX, "2",
        "shards: split: the number of parts (fasgd-server's shard.count)"),
    FASGD_CFG_KEY_ENUM ("staleness", fasgd_sim_cfg_t, staleness, fasgd_staleness_names, "count",
        "the staleness tau the rule divides by: count (the updates since the gradient's parameters, as in "
        "the paper) or movement (each update counted by its norm over the lower median of the clients' "
        "typical norms, at most 1: fasgd-server's guard.staleness; with shards, each shard's own)"),
    FASGD_CFG_KEY_INCLUDE ("data", fasgd_sim_cfg_t, data, fasgd_data_cfg_keys),
    FASGD_CFG_KEY_END
};

/* ------------------------------------------------------------------ */
/*  Gradients and evaluation, possibly on several threads               */

static void
s_compute_gradient (fasgd_sim_t *self, s_worker_t *w, const s_client_t *c, uint64_t iter, float *grad)
{
    const float *theta = c->views ? fasgd_simshards_theta (self, c, w->theta) : c->snap->theta;
    /*  The minibatch of iteration i is number (i mod number-of-minibatches)
        of the training set, in order.  */
    fasgd_model_batch_gradient (self->model, w->ws, theta, self->batches [iter % self->nbatches], grad, NULL);
}

/*  Examples in chunk k of a set of n.  */
static size_t
s_set_chunk_len (size_t n, int k)
{
    size_t start = (size_t) k * S_EVAL_CHUNK;
    return n - start < S_EVAL_CHUNK ? n - start : S_EVAL_CHUNK;
}

/*  Examples in validation chunk k.  */
static size_t
s_chunk_len (const fasgd_sim_t *self, int k)
{
    return s_set_chunk_len (self->valid->n, k);
}

/*  len examples of `set` from `start`, made ready for many passes.  */
static fasgd_model_batch_t *
s_batch_new (const fasgd_sim_t *self, const fasgd_dataset_t *set, size_t start, size_t len)
{
    return fasgd_model_batch_new (self->model, set->x + start * set->dim, set->y + start, (int) len);
}

/*  Task k: validation chunk k, then the test set's chunks.  */
static void
s_eval_chunk (fasgd_sim_t *self, fasgd_model_ws_t *ws, int k)
{
    if (k >= self->nchunks) {
        int t = k - self->nchunks, nerr = 0;
        size_t len = s_set_chunk_len (self->test->n, t);
        double nll = fasgd_model_batch_loss (self->model, ws, self->current->theta,
                                             self->test_batches [t], &nerr);
        self->test_nll [t] = nll * (double) len;
        self->test_err [t] = nerr;
        return;
    }
    size_t len = s_chunk_len (self, k);
    int nerr = 0;
    double nll = fasgd_model_batch_loss (self->model, ws, self->current->theta,
                                         self->batches [self->nbatches + (uint64_t) k], &nerr);
    self->chunk_nll [k] = nll * (double) len;
    self->chunk_err [k] = nerr;
}

static void
s_run_tasks (fasgd_sim_t *self, s_worker_t *w)
{
    for (;;) {
        int k = __atomic_fetch_add (&self->next_task, 1, __ATOMIC_RELAXED);
        if (k >= self->nchunks + self->ntest)
            break;
        s_eval_chunk (self, w->ws, k);
    }
}

/*  The first slot whose gradient can be computed now: its client's previous
    turn is over, so the parameters it holds are final. Under the lock.  */
static s_slot_t *
s_flow_claim (fasgd_sim_t *self)
{
    for (uint64_t j = self->done; j < self->filled; j++) {
        s_slot_t *slot = &self->slots [j % S_WINDOW];
        if (slot->state == S_SLOT_PICKED && (slot->prev < 0 || (uint64_t) slot->prev < self->done)) {
            slot->state = S_SLOT_COMPUTING;
            return slot;
        }
    }
    return NULL;
}

/*  Computes a claimed slot's gradient outside the lock.  */
static void
s_flow_compute (fasgd_sim_t *self, s_worker_t *w, s_slot_t *slot)
{
    pthread_mutex_unlock (&self->lock);
    s_compute_gradient (self, w, &self->clients [slot->client], slot->iter, slot->grad);
    pthread_mutex_lock (&self->lock);
    slot->state = S_SLOT_READY;
    pthread_cond_broadcast (&self->done_cond);
}

static void *
s_worker_main (void *arg)
{
    s_worker_t *w = arg;
    fasgd_sim_t *self = w->sim;
    uint64_t seen = 0;
    pthread_mutex_lock (&self->lock);
    while (!self->quit) {
        if (self->generation != seen) {
            seen = self->generation;
            pthread_mutex_unlock (&self->lock);
            s_run_tasks (self, w);
            pthread_mutex_lock (&self->lock);
            if (--self->pending == 0)
                pthread_cond_broadcast (&self->done_cond);
            continue;
        }
        s_slot_t *slot = self->flow ? s_flow_claim (self) : NULL;
        if (slot)
            s_flow_compute (self, w, slot);
        else
            pthread_cond_wait (&self->wake, &self->lock);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

/*  Runs the posted tasks on every thread, the caller's included.  */
static void
s_run_batch (fasgd_sim_t *self)
{
    self->next_task = 0;
    if (self->nthreads > 1) {
        pthread_mutex_lock (&self->lock);
        self->pending = self->nthreads - 1;
        self->generation++;
        pthread_cond_broadcast (&self->wake);
        pthread_mutex_unlock (&self->lock);
    }
    s_run_tasks (self, &self->workers [0]);
    if (self->nthreads > 1) {
        pthread_mutex_lock (&self->lock);
        while (self->pending > 0)
            pthread_cond_wait (&self->done_cond, &self->lock);
        pthread_mutex_unlock (&self->lock);
    }
}

static void
s_evaluate (fasgd_sim_t *self)
{
    s_run_batch (self);
    double nll = 0, err = 0;
    for (int k = 0; k < self->nchunks; k++) {       /* fixed order: same sums on any thread count */
        nll += self->chunk_nll [k];
        err += self->chunk_err [k];
    }
    self->st.val_nll = nll / self->valid->n;
    self->st.val_error = err / self->valid->n;
    if (self->test) {
        nll = err = 0;
        for (int k = 0; k < self->ntest; k++) {
            nll += self->test_nll [k];
            err += self->test_err [k];
        }
        self->st.test_nll = nll / self->test->n;
        self->st.test_error = err / self->test->n;
    }
    if (self->st.evaluations == 0 || self->st.val_error < self->st.best_error)
        self->st.best_error = self->st.val_error;
    self->st.evaluations++;
}

/* ------------------------------------------------------------------ */
/*  Output                                                              */

/*  The test columns come last, and only with a test set, so that readers
    of the validation columns see the same file either way.  */
static void
s_csv_header (const fasgd_sim_t *self, FILE *csv)
{
    fputs ("iteration,timestamp,sim_time,val_error,val_nll,fetches,potential_fetches,"
           "pushes,potential_pushes,repeats,bytes,mean_tau,max_tau", csv);
    fputs (self->test ? ",test_error,test_nll\n" : "\n", csv);
}

static void
s_row (fasgd_sim_t *self)
{
    s_evaluate (self);
    if (self->csv) {
        double mean_tau = self->row_tau_count ? self->row_tau_sum / (double) self->row_tau_count : 0;
        fprintf (self->csv, "%llu,%llu,%.6f,%.6f,%.6f,%llu,%llu,%llu,%llu,%llu,%llu,%.4f,%llu",
                 (unsigned long long) self->st.iterations, (unsigned long long) self->T,
                 self->now, self->st.val_error, self->st.val_nll,
                 (unsigned long long) self->st.fetches, (unsigned long long) self->st.potential_fetches,
                 (unsigned long long) self->st.pushes, (unsigned long long) self->st.potential_pushes,
                 (unsigned long long) self->st.repeats, (unsigned long long) self->st.bytes,
                 mean_tau, (unsigned long long) self->row_tau_max);
        if (self->test)
            fprintf (self->csv, ",%.6f,%.6f", self->st.test_error, self->st.test_nll);
        fputc ('\n', self->csv);
    }
    self->row_tau_sum = 0;
    self->row_tau_count = 0;
    self->row_tau_max = 0;
    self->last_row_T = self->T;
}

void
fasgd_simint_row (fasgd_sim_t *self)
{
    s_row (self);
}

int
fasgd_simint_apply (fasgd_sim_t *self, fasgd_snapshot_t **current, fasgd_rule_t *rule, const float *g,
                    uint64_t tau, const float *used)
{
    /*  In place when nobody else holds θ (so neither is it θ_used); while
        clients hold it, into a fresh buffer that the next fetch shares.  */
    int rc = fasgd_snapshot_apply (current, rule, g, tau, used);
    if (rc == -2) {
        fasgd_log_error ("sim: out of memory for a copy of the parameters (%zu live)",
                         fasgd_snapshot_pool_live ((*current)->pool));
        abort ();
    }
    if (rc < 0) {
        self->st.rejected++;
        if (self->st.rejected == 1)
            fasgd_log_warn ("sim: a gradient with NaN or Inf was refused at iteration %llu "
                            "(the learning rate may be too large)",
                            (unsigned long long) self->st.iterations);
        return rc;
    }
    self->tau_sum += (double) tau;
    self->tau_count++;
    self->row_tau_sum += (double) tau;
    self->row_tau_count++;
    if (tau > self->row_tau_max)
        self->row_tau_max = tau;
    if (tau > self->st.tau_max)
        self->st.tau_max = tau;
    return rc;
}

void
fasgd_simint_accumulate (fasgd_sim_t *self, s_client_t *c, size_t off, const float *g, size_t len,
                         fasgd_gates_t *gates)
{
    if (!c->accum && !(c->accum = malloc (self->n * sizeof (float)))) {
        fasgd_log_error ("sim: out of memory for an accumulation buffer");
        abort ();
    }
    fasgd_gates_keep (gates, c->accum + off, g, len);
}

static double
s_elapsed (const struct timespec *a, const struct timespec *b)
{
    return (double) (b->tv_sec - a->tv_sec) + (double) (b->tv_nsec - a->tv_nsec) * 1e-9;
}

static void
s_progress (fasgd_sim_t *self, int final)
{
    if (!self->show_progress)
        return;
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    /*  A terminal gets one line redrawn twice a second; a log file or a
        pipe a new line every five seconds.  */
    if (!final && s_elapsed (&self->last_progress, &now) < (self->progress_tty ? 0.5 : 5.0))
        return;
    self->last_progress = now;
    double secs = s_elapsed (&self->t0, &now);
    double rate = secs > 0 ? (double) self->st.iterations / secs : 0;
    double left = rate > 0 ? (double) (self->cfg.iterations - self->st.iterations) / rate : 0;
    fprintf (stderr, "%s%llu/%llu it  %.0f it/s  ETA %.0fs  T %llu  val error %.4f%s",
             self->progress_tty ? "\r" : "",
             (unsigned long long) self->st.iterations, (unsigned long long) self->cfg.iterations,
             rate, left, (unsigned long long) self->T, self->st.val_error,
             self->progress_tty && !final ? " " : "\n");
    fflush (stderr);
}

/* ------------------------------------------------------------------ */
/*  The server                                                          */

/*  Applies one gradient from client c computed at timestamp j. Returns the
    rule's verdict (1 applied, 0 buffered, < 0 refused).  */
static int
s_server_apply (fasgd_sim_t *self, s_client_t *c, const float *g, uint64_t j)
{
    uint64_t tau = fasgd_simstale_tau (&self->stale, self->T, j);
    const float *used = !self->needs_used ? NULL : c->used ? c->used->theta : c->snap->theta;
    int rc = fasgd_simint_apply (self, &self->current, self->rule, g, tau, used);
    if (rc == 1) {
        self->T++;
        self->current->ts = self->T;
    }
    /*  The clock counts the push once T is the update's (a softsync
        push the rule buffered still votes).  */
    if (rc >= 0)
        fasgd_simstale_pushed (&self->stale, self->T, (int) (c - self->clients), g, self->n, rc == 1);
    if (rc == 1 && self->T % (uint64_t) self->cfg.eval_every == 0)
        s_row (self);
    return rc;
}

/*  resend-last: the server keeps a copy of the gradient it applied, to
    re-apply when the client next skips. Only gated pushes can skip.  */
static void
s_cache_last (fasgd_sim_t *self, s_client_t *c, const float *g, uint64_t j)
{
    if (self->cfg.gates.push_skip != FASGD_PUSH_SKIP_RESEND_LAST
        || self->cfg.gates.push.kind == FASGD_GATE_ALWAYS)
        return;
    if (!c->last && !(c->last = malloc (self->n * sizeof (float)))) {
        fasgd_log_error ("sim: out of memory for the resend-last cache");
        abort ();
    }
    memcpy (c->last, g, self->n * sizeof (float));
    c->last_ts = j;
}

void
fasgd_sim_gates_init (const fasgd_sim_cfg_t *cfg, int k, int s, fasgd_gates_t *gates)
{
    fasgd_gate_params_t push, fetch;
    fasgd_gate_cfg_to_params (&cfg->gates.push, cfg->gates.eps, &push);
    fasgd_gate_cfg_to_params (&cfg->gates.fetch, cfg->gates.eps, &fetch);
    uint64_t stream = ((uint64_t) s << S_SHARD_STREAM_SHIFT) + S_STREAM_GATES + 4 * (uint64_t) k;
    fasgd_gates_init (gates, &push, &fetch, cfg->gates.push_skip, cfg->seed, stream, stream + 1);
    gates->fetched = 1;
}

/*  accumulate: a skipped gradient joins the client's local sum.  */
static void
s_accumulate (fasgd_sim_t *self, s_client_t *c, const float *g)
{
    fasgd_simint_accumulate (self, c, 0, g, self->n, &c->gates);
}

/*  Bytes of a gradient and of θ on the wire.  */
static size_t
s_push_bytes (const fasgd_sim_t *self)
{
    return self->n * (self->cfg.wire_push ? 2 : sizeof (float));
}

static size_t
s_params_bytes (const fasgd_sim_t *self)
{
    return self->n * (self->cfg.wire_params ? 2 : sizeof (float));
}

/*  What a fetch hands a client: θ at T as the server sends it (rounded
    with wire.params, once per timestamp), and in *used, for the rules
    that need θ_used, the float32 θ that fasgd-server keeps for that
    fetch (NULL when it is the first).  */
static fasgd_snapshot_t *
s_fetched (fasgd_sim_t *self, fasgd_snapshot_t **used)
{
    *used = NULL;
    if (!self->cfg.wire_params)
        return fasgd_snapshot_ref (self->current);
    if (!self->wire_snap || self->wire_snap->ts != self->T) {
        fasgd_snapshot_t *img = fasgd_snapshot_new (self->snaps);
        if (!img) {
            fasgd_log_error ("sim: out of memory for the rounded parameters");
            abort ();
        }
        fasgd_halves_encode (self->cfg.wire_params, self->current->theta, self->n, self->wire_bytes);
        fasgd_halves_decode (self->cfg.wire_params, self->wire_bytes, self->n, img->theta);
        img->ts = self->T;
        fasgd_snapshot_release (self->wire_snap);
        self->wire_snap = img;
    }
    if (self->needs_used)
        *used = fasgd_snapshot_ref (self->current);
    return fasgd_snapshot_ref (self->wire_snap);
}

/*  A gradient as the server receives it with wire.push rounded: g plus
    the client's residual, rounded and widened again, the new residual
    waiting in wire_residual until s_wire_taken; g itself with f32.  */
static const float *
s_wire_round (fasgd_sim_t *self, s_client_t *c, const float *g)
{
    if (!self->cfg.wire_push)
        return g;
    if (!c->residual && !(c->residual = calloc (self->n, sizeof (float)))) {
        fasgd_log_error ("sim: out of memory for a client's rounding residual");
        abort ();
    }
    fasgd_halves_feedback (self->cfg.wire_push, g, c->residual, self->wire_residual, self->n, self->wire_bytes);
    fasgd_halves_decode (self->cfg.wire_push, self->wire_bytes, self->n, self->wire_grad);
    return self->wire_grad;
}

/*  The push was taken: its residual is the client's now.  */
static void
s_wire_taken (fasgd_sim_t *self, s_client_t *c)
{
    if (!self->cfg.wire_push)
        return;
    float *t = c->residual;
    c->residual = self->wire_residual;
    self->wire_residual = t;
}

/*  The push half of a client's turn. Returns 1 when the server was
    reached (its v̄ comes back), 0 when an accumulate-skip kept the gradient
    local. *rc_out receives the rule's verdict (1 applied, 0 buffered by
    softsync, < 0 refused).  */
static int
s_push (fasgd_sim_t *self, s_client_t *c, const float *g, int *rc_out)
{
    *rc_out = -1;
    self->st.potential_pushes++;
    fasgd_tx_t tx = fasgd_gates_push (&c->gates, c->vbar);
    int rc;
    if (tx == FASGD_TX_PUSH || tx == FASGD_TX_PUSH_SUM) {
        const float *out = g;
        uint64_t j = c->snap->ts;
        if (tx == FASGD_TX_PUSH_SUM) {
            fasgd_gates_sum (self->scratch, c->accum, g, self->n);
            out = self->scratch;
            c->gates.has_accum = 0;
        }
        self->st.pushes++;
        self->st.bytes += FASGD_SIM_HEADER_BYTES + s_push_bytes (self) + FASGD_SIM_HEADER_BYTES;
        c->gates.pushed = 1;
        out = s_wire_round (self, c, out);
        rc = s_server_apply (self, c, out, j);
        if (rc >= 0) {
            s_wire_taken (self, c);
            s_cache_last (self, c, out, j);
        }
    }
    else if (tx == FASGD_TX_REPEAT) {
        /*  The server re-applies the client's last gradient with its
            original timestamp; only a header crossed the network.  */
        self->st.repeats++;
        self->st.bytes += 2 * FASGD_SIM_HEADER_BYTES;
        rc = c->last ? s_server_apply (self, c, c->last, c->last_ts) : -1;
    }
    else {
        s_accumulate (self, c, g);
        return 0;
    }
    *rc_out = rc;
    return 1;
}

/*  A fetch opportunity: through the gate, the client replaces its copy
    with the server's current θ.  */
static void
s_fetch (fasgd_sim_t *self, s_client_t *c)
{
    self->st.potential_fetches++;
    if (!fasgd_gates_fetch (&c->gates, c->vbar))
        return;
    self->st.fetches++;
    self->st.bytes += FASGD_SIM_HEADER_BYTES + FASGD_SIM_HEADER_BYTES + s_params_bytes (self);
    fasgd_snapshot_t *used, *snap = s_fetched (self, &used);
    fasgd_snapshot_release (c->snap);
    fasgd_snapshot_release (c->used);
    c->snap = snap;
    c->used = used;
    c->vbar = fasgd_rule_vbar (self->rule);
}

/* ------------------------------------------------------------------ */
/*  Iterations mode                                                     */

static int
s_pick (fasgd_sim_t *self)
{
    for (;;) {
        int k;
        if (self->speed_cum) {
            double r = fasgd_rng_uniform (&self->picks) * self->speed_cum [self->cfg.clients - 1];
            int lo = 0, hi = self->cfg.clients - 1;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (self->speed_cum [mid] > r)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            k = lo;
        }
        else
            k = (int) fasgd_rng_below (&self->picks, (uint32_t) self->cfg.clients);
        if (!self->clients [k].blocked)
            return k;
    }
}

/*  One client's turn after its gradient g is known.  */
static void
s_turn (fasgd_sim_t *self, int k, const float *g)
{
    if (self->shards) {
        fasgd_simshards_turn (self, k, g);
        return;
    }
    s_client_t *c = &self->clients [k];
    self->st.iterations++;
    int rc;
    if (s_push (self, c, g, &rc))
        c->vbar = fasgd_rule_vbar (self->rule);
    if (rc == 0) {
        c->blocked = 1;
        return;
    }
    if (self->sync && rc == 1) {
        /*  The group's update went through: every client waiting on it
            gets its answer and fetches, in client order.  */
        for (int i = 0; i < self->cfg.clients; i++)
            if (self->clients [i].blocked) {
                self->clients [i].blocked = 0;
                self->clients [i].vbar = fasgd_rule_vbar (self->rule);
                s_fetch (self, &self->clients [i]);
            }
    }
    s_fetch (self, c);
}

/*  Picks clients for the window up to `done + S_WINDOW`. Under the lock;
    the picks are the same sequence as one at a time.  */
static void
s_flow_fill (fasgd_sim_t *self)
{
    while (self->filled < self->cfg.iterations && self->filled < self->done + S_WINDOW) {
        s_slot_t *slot = &self->slots [self->filled % S_WINDOW];
        int k = s_pick (self);
        slot->iter = self->filled;
        slot->client = k;
        slot->prev = self->last_iter [k];
        slot->state = S_SLOT_PICKED;
        self->last_iter [k] = (int64_t) self->filled;
        self->filled++;
    }
}

static void
s_run_iterations (fasgd_sim_t *self)
{
    if (self->nthreads == 1 || self->sync) {
        /*  One at a time. Softsync blocks clients depending on pushes, so
            its picks cannot be known ahead.  */
        while (self->st.iterations < self->cfg.iterations && !self->interrupted) {
            int k = s_pick (self);
            s_compute_gradient (self, &self->workers [0], &self->clients [k], self->st.iterations,
                                self->grad);
            s_turn (self, k, self->grad);
            s_progress (self, 0);
        }
        return;
    }
    /*  A gradient depends only on the parameters its client holds and on
        its minibatch; the former are final once the client's previous turn
        is over. So every thread computes gradients of upcoming iterations
        as soon as that holds, while this thread applies the turns in
        order: the same sums in the same order as one thread.  */
    pthread_mutex_lock (&self->lock);
    self->flow = 1;
    while (self->done < self->cfg.iterations && !self->interrupted) {
        s_flow_fill (self);
        pthread_cond_broadcast (&self->wake);
        s_slot_t *slot = &self->slots [self->done % S_WINDOW];
        if (slot->state == S_SLOT_READY) {
            pthread_mutex_unlock (&self->lock);
            s_turn (self, slot->client, slot->grad);
            s_progress (self, 0);
            pthread_mutex_lock (&self->lock);
            self->done++;
            continue;
        }
        /*  This thread computes the gradient the next turn needs if nobody
            has taken it. If another thread is computing it, this one takes
            the next free gradient rather than wait: workers claim the
            earliest free slot, so the next turn's gradient is usually
            theirs, and waiting for it would leave this thread idle for
            most of each gradient's time (two threads then run little
            faster than one). The turns then wait for at most one
            gradient, and are applied in order all the same.  */
        if (slot->state == S_SLOT_PICKED && (slot->prev < 0 || (uint64_t) slot->prev < self->done)) {
            slot->state = S_SLOT_COMPUTING;
            s_flow_compute (self, &self->workers [0], slot);
            continue;
        }
        s_slot_t *ahead = s_flow_claim (self);
        if (ahead)
            s_flow_compute (self, &self->workers [0], ahead);
        else
            pthread_cond_wait (&self->done_cond, &self->lock);
    }
    self->flow = 0;
    /*  Let computing workers finish before the window's buffers go.  */
    for (uint64_t j = self->done; j < self->filled; j++)
        while (self->slots [j % S_WINDOW].state == S_SLOT_COMPUTING)
            pthread_cond_wait (&self->done_cond, &self->lock);
    pthread_mutex_unlock (&self->lock);
}

/* ------------------------------------------------------------------ */
/*  Events mode                                                         */

static int
s_ev_less (const s_event_t *a, const s_event_t *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void
s_ev_insert (fasgd_sim_t *self, s_event_t ev)
{
    if (self->heap_n == self->heap_cap) {
        size_t cap = self->heap_cap ? self->heap_cap * 2 : 1024;
        s_event_t *heap = realloc (self->heap, cap * sizeof *heap);
        if (!heap) {
            fasgd_log_error ("sim: out of memory for events");
            abort ();
        }
        self->heap = heap;
        self->heap_cap = cap;
    }
    ev.seq = self->seq++;
    size_t i = self->heap_n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!s_ev_less (&ev, &self->heap [parent]))
            break;
        self->heap [i] = self->heap [parent];
        i = parent;
    }
    self->heap [i] = ev;
}

static void
s_ev_push (fasgd_sim_t *self, double time, int client, int type, int repeat, fasgd_snapshot_t *snap)
{
    s_ev_insert (self, (s_event_t) { .time = time, .client = client, .type = type, .repeat = repeat,
                                     .snap = snap });
}

static s_event_t
s_ev_pop (fasgd_sim_t *self)
{
    s_event_t top = self->heap [0];
    s_event_t last = self->heap [--self->heap_n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const s_event_t *best = &last;
        if (l < self->heap_n && s_ev_less (&self->heap [l], best)) {
            m = l;
            best = &self->heap [l];
        }
        if (r < self->heap_n && s_ev_less (&self->heap [r], best))
            m = r;
        if (m == i)
            break;
        self->heap [i] = self->heap [m];
        i = m;
    }
    if (self->heap_n)
        self->heap [i] = last;
    return top;
}

/*  When a message of `bytes` handed to the link at `t` is delivered: the
    link sends one message at a time, first come first served.  */
static double
s_link_send (fasgd_sim_t *self, s_link_t *link, double t, size_t bytes)
{
    double start = t > link->free_at ? t : link->free_at;
    double dur = self->cfg.bandwidth > 0 ? (double) bytes / self->cfg.bandwidth : 0;
    link->free_at = start + dur;
    return start + dur + self->cfg.latency;
}

static double
s_compute_time (fasgd_sim_t *self, s_client_t *c)
{
    double base = self->cfg.compute_time / c->speed;
    switch (self->cfg.compute_dist) {
        case FASGD_SIM_TIME_EXPONENTIAL:
            return base * -log (1.0 - fasgd_rng_uniform (&c->compute_rng));
        case FASGD_SIM_TIME_LOGNORMAL: {
            double s = self->cfg.compute_sigma;
            return base * exp (s * fasgd_rng_normal (&c->compute_rng) - 0.5 * s * s);
        }
        default:
            return base;
    }
}

static void
s_ev_start (fasgd_sim_t *self, int k, double t)
{
    if (self->started >= self->cfg.iterations || self->interrupted)
        return;
    s_client_t *c = &self->clients [k];
    c->iter = self->started++;
    s_ev_push (self, t + s_compute_time (self, c), k, S_EV_COMPUTE_DONE, 0, NULL);
}

static void
s_ev_fetch_opportunity (fasgd_sim_t *self, int k, double t)
{
    s_client_t *c = &self->clients [k];
    self->st.potential_fetches++;
    if (fasgd_gates_fetch (&c->gates, c->vbar)) {
        self->st.fetches++;
        self->st.bytes += FASGD_SIM_HEADER_BYTES;
        s_ev_push (self, s_link_send (self, &self->link_in, t, FASGD_SIM_HEADER_BYTES), k,
                   S_EV_FETCH_REQ, 0, NULL);
    }
    else
        s_ev_start (self, k, t);
}

static void
s_ev_ack (fasgd_sim_t *self, int k, double t)
{
    s_client_t *c = &self->clients [k];
    c->vbar_in_flight = fasgd_rule_vbar (self->rule);
    self->st.bytes += FASGD_SIM_HEADER_BYTES;
    s_ev_push (self, s_link_send (self, &self->link_out, t, FASGD_SIM_HEADER_BYTES), k, S_EV_ACK, 0, NULL);
}

static void
s_ev_handle (fasgd_sim_t *self, const s_event_t *ev)
{
    s_client_t *c = &self->clients [ev->client];
    double t = ev->time;
    switch (ev->type) {
        case S_EV_COMPUTE_DONE: {
            self->st.iterations++;
            self->st.potential_pushes++;
            fasgd_tx_t tx = fasgd_gates_push (&c->gates, c->vbar);
            if (tx == FASGD_TX_PUSH || tx == FASGD_TX_PUSH_SUM) {
                /*  The sum, if any, is made on arrival.  */
                self->st.pushes++;
                self->st.bytes += FASGD_SIM_HEADER_BYTES + s_push_bytes (self);
                c->gates.pushed = 1;
                s_ev_push (self, s_link_send (self, &self->link_in, t, FASGD_SIM_HEADER_BYTES + s_push_bytes (self)),
                           ev->client, S_EV_PUSH_ARRIVE, 0, NULL);
            }
            else if (tx == FASGD_TX_REPEAT) {
                self->st.repeats++;
                self->st.bytes += FASGD_SIM_HEADER_BYTES;
                s_ev_push (self, s_link_send (self, &self->link_in, t, FASGD_SIM_HEADER_BYTES),
                           ev->client, S_EV_PUSH_ARRIVE, 1, NULL);
            }
            else {
                /*  Accumulate: the gradient stays with the client.  */
                s_compute_gradient (self, &self->workers [0], c, c->iter, self->grad);
                s_accumulate (self, c, self->grad);
                s_ev_fetch_opportunity (self, ev->client, t);
            }
            s_progress (self, 0);
            break;
        }
        case S_EV_PUSH_ARRIVE: {
            int rc;
            if (ev->repeat)
                rc = c->last ? s_server_apply (self, c, c->last, c->last_ts) : -1;
            else {
                /*  The client's copy has not changed since it started this
                    gradient (it fetches only after the answer), so computing
                    it on arrival gives the same gradient.  */
                s_compute_gradient (self, &self->workers [0], c, c->iter, self->grad);
                const float *out = self->grad;
                if (c->gates.has_accum) {
                    fasgd_gates_sum (c->accum, c->accum, self->grad, self->n);
                    out = c->accum;
                    c->gates.has_accum = 0;
                }
                uint64_t j = c->snap->ts;
                out = s_wire_round (self, c, out);
                rc = s_server_apply (self, c, out, j);
                if (rc >= 0) {
                    s_wire_taken (self, c);
                    s_cache_last (self, c, out, j);
                }
            }
            if (rc == 0) {
                c->blocked = 1;
                break;
            }
            if (self->sync && rc == 1)
                for (int i = 0; i < self->cfg.clients; i++)
                    if (self->clients [i].blocked) {
                        self->clients [i].blocked = 0;
                        s_ev_ack (self, i, t);
                    }
            s_ev_ack (self, ev->client, t);
            break;
        }
        case S_EV_ACK:
            c->vbar = c->vbar_in_flight;
            s_ev_fetch_opportunity (self, ev->client, t);
            break;
        case S_EV_FETCH_REQ: {
            fasgd_snapshot_t *used, *snap = s_fetched (self, &used);
            size_t bytes = FASGD_SIM_HEADER_BYTES + s_params_bytes (self);
            self->st.bytes += bytes;
            s_ev_insert (self, (s_event_t) { .time = s_link_send (self, &self->link_out, t, bytes),
                                             .client = ev->client, .type = S_EV_FETCH_DONE, .snap = snap,
                                             .used = used });
            c->vbar_in_flight = fasgd_rule_vbar (self->rule);
            break;
        }
        case S_EV_FETCH_DONE:
            fasgd_snapshot_release (c->snap);
            fasgd_snapshot_release (c->used);
            c->snap = ev->snap;
            c->used = ev->used;
            c->vbar = c->vbar_in_flight;
            s_ev_start (self, ev->client, t);
            break;
        default:
            break;
    }
}

static void
s_run_events (fasgd_sim_t *self)
{
    for (int k = 0; k < self->cfg.clients; k++)
        s_ev_start (self, k, 0.0);
    while (self->heap_n > 0) {
        s_event_t ev = s_ev_pop (self);
        self->now = ev.time;
        if (self->interrupted && ev.snap) {
            fasgd_snapshot_release (ev.snap);
            fasgd_snapshot_release (ev.used);
            continue;
        }
        s_ev_handle (self, &ev);
    }
}

/* ------------------------------------------------------------------ */
/*  Life cycle                                                          */

/*  fasgd_sim_new's steps, in order (each draws from its own streams, so
    the order is the runs' order too); each returns 0, or -1 after
    logging the cause.  */

/*  The model, the server's rule, and the data sets checked against the
    batch.  */
static int
s_new_model_rule (fasgd_sim_t *self)
{
    const fasgd_sim_cfg_t *cfg = &self->cfg;
    char err [256];
    fasgd_model_spec_t spec;
    fasgd_model_cfg_to_spec (&cfg->model, &spec);
    self->model = fasgd_model_new (&spec, err, sizeof err);
    if (!self->model) {
        fasgd_log_error ("sim: model: %s", err);
        return -1;
    }
    self->n = fasgd_model_nparams (self->model);
    fasgd_rule_params_t rp;
    fasgd_rule_cfg_to_params (&cfg->rule, cfg->clients, &rp);
    self->rule = fasgd_rule_new (&rp, self->n, err, sizeof err);
    if (!self->rule) {
        fasgd_log_error ("sim: rule: %s", err);
        return -1;
    }
    self->needs_used = fasgd_rule_needs_theta_used (self->rule);
    self->sync = cfg->rule.name == FASGD_RULE_SOFTSYNC;
    if (self->train->n < (uint32_t) cfg->batch) {
        fasgd_log_error ("sim: the batch (%d) is larger than the training set (%u examples)",
                         cfg->batch, self->train->n);
        return -1;
    }
    if (self->valid->n == 0) {
        fasgd_log_error ("sim: the validation set is empty");
        return -1;
    }
    self->nbatches = self->train->n / (uint32_t) cfg->batch;
    return 0;
}

/*  One gradient, the accumulate sum, the clients, the compact wire's
    buffers.  */
static int
s_new_buffers (fasgd_sim_t *self)
{
    const fasgd_sim_cfg_t *cfg = &self->cfg;
    self->grad = malloc (self->n * sizeof (float));
    self->scratch = malloc (self->n * sizeof (float));
    self->clients = calloc ((size_t) cfg->clients, sizeof *self->clients);
    if (cfg->wire_push || cfg->wire_params)
        self->wire_bytes = malloc (self->n * 2);
    if (cfg->wire_push) {
        self->wire_grad = malloc (self->n * sizeof (float));
        self->wire_residual = malloc (self->n * sizeof (float));
    }
    if (!self->grad || !self->scratch || !self->clients || ((cfg->wire_push || cfg->wire_params) && !self->wire_bytes)
        || (cfg->wire_push && (!self->wire_grad || !self->wire_residual))) {
        fasgd_log_error ("sim: out of memory");
        return -1;
    }
    return 0;
}

/*  The server's θ at T = 0 (every client starts on it), and the picks'
    stream.  */
static int
s_new_theta (fasgd_sim_t *self)
{
    if (!(self->snaps = fasgd_snapshot_pool_new (self->n))
        || !(self->current = fasgd_snapshot_new (self->snaps))) {
        fasgd_log_error ("sim: out of memory");
        return -1;
    }
    self->current->ts = 0;
    fasgd_rng_t init;
    fasgd_rng_seed (&init, self->cfg.seed, S_STREAM_INIT);
    fasgd_model_init_params (self->model, self->current->theta, &init);
    fasgd_rng_seed (&self->picks, self->cfg.seed, S_STREAM_PICKS);
    return 0;
}

/*  Each client: its gates, its compute times' stream, θ at T = 0 as its
    first fetch gives it, and its speed.  */
static int
s_new_clients (fasgd_sim_t *self)
{
    const fasgd_sim_cfg_t *cfg = &self->cfg;
    fasgd_rng_t speeds;
    fasgd_rng_seed (&speeds, cfg->seed, S_STREAM_SPEEDS);
    if (cfg->speed == FASGD_SIM_SPEED_LOGNORMAL) {
        self->speed_cum = malloc ((size_t) cfg->clients * sizeof (double));
        if (!self->speed_cum)
            return -1;
    }
    double cum = 0;
    for (int k = 0; k < cfg->clients; k++) {
        s_client_t *c = &self->clients [k];
        fasgd_sim_gates_init (cfg, k, 0, &c->gates);
        fasgd_rng_seed (&c->compute_rng, cfg->seed, S_STREAM_GATES + 4 * (uint64_t) k + 2);
        c->snap = s_fetched (self, &c->used);   /* as its first fetch gives it */
        c->vbar = fasgd_rule_vbar (self->rule);
        c->speed = 1.0;
        if (self->speed_cum) {
            double s = cfg->speed_sigma;
            c->speed = exp (s * fasgd_rng_normal (&speeds) - 0.5 * s * s);
            cum += c->speed;
            self->speed_cum [k] = cum;
        }
    }
    return 0;
}

static int
s_new_shards (fasgd_sim_t *self)
{
    char err [256];
    if (fasgd_simshards_init (self, err, sizeof err) != 0) {
        fasgd_log_error ("sim: shards: %s", err);
        return -1;
    }
    return 0;
}

/*  The workers (threads not started yet), the look-ahead window, the
    validation chunks' sums.  */
static int
s_new_workers (fasgd_sim_t *self)
{
    const fasgd_sim_cfg_t *cfg = &self->cfg;
    int nthreads = cfg->threads;
    if (nthreads <= 0) {
        long cores = sysconf (_SC_NPROCESSORS_ONLN);
        nthreads = cores > 0 ? (int) cores : 1;
    }
    /*  Events mode computes gradients one at a time; its validation
        still runs on every thread.  */
    self->nthreads = nthreads;
    self->workers = calloc ((size_t) nthreads, sizeof *self->workers);
    if (nthreads > 1) {
        self->slot_grads = malloc ((size_t) S_WINDOW * self->n * sizeof (float));
        self->last_iter = malloc ((size_t) cfg->clients * sizeof (int64_t));
        for (int j = 0; self->slot_grads && j < S_WINDOW; j++)
            self->slots [j].grad = self->slot_grads + (size_t) j * self->n;
        for (int k = 0; self->last_iter && k < cfg->clients; k++)
            self->last_iter [k] = -1;
    }
    self->nchunks = (int) ((self->valid->n + S_EVAL_CHUNK - 1) / S_EVAL_CHUNK);
    self->chunk_nll = calloc ((size_t) self->nchunks, sizeof (double));
    self->chunk_err = calloc ((size_t) self->nchunks, sizeof (double));
    if (!self->workers || (nthreads > 1 && (!self->slot_grads || !self->last_iter))
        || !self->chunk_nll || !self->chunk_err) {
        fasgd_log_error ("sim: out of memory");
        return -1;
    }
    return 0;
}

/*  Minibatch b is number b of the training set, in order; validation
    chunk k follows them.  */
static int
s_new_batches (fasgd_sim_t *self)
{
    const size_t batch = (size_t) self->cfg.batch;
    if (!(self->batches = calloc ((size_t) self->nbatches + (size_t) self->nchunks,
                                  sizeof *self->batches))) {
        fasgd_log_error ("sim: out of memory");
        return -1;
    }
    for (uint64_t b = 0; b < self->nbatches; b++)
        if (!(self->batches [b] = s_batch_new (self, self->train, b * batch, batch)))
            return -1;
    for (int k = 0; k < self->nchunks; k++)
        if (!(self->batches [self->nbatches + (uint64_t) k]
              = s_batch_new (self, self->valid, (size_t) k * S_EVAL_CHUNK, s_chunk_len (self, k))))
            return -1;
    return 0;
}

/*  Each worker's workspace (and with shards its parameters), then every
    thread but the caller's.  */
static int
s_start_workers (fasgd_sim_t *self)
{
    const int nthreads = self->nthreads;
    int max_batch = self->cfg.batch > S_EVAL_CHUNK ? self->cfg.batch : S_EVAL_CHUNK;
    for (int i = 0; i < nthreads; i++) {
        self->workers [i].sim = self;
        self->workers [i].id = i;
        self->workers [i].ws = fasgd_model_ws_new (self->model, max_batch);
        if (self->shards && !(self->workers [i].theta = malloc (self->n * sizeof (float)))) {
            fasgd_log_error ("sim: out of memory for a client's parameters");
            return -1;
        }
        if (!self->workers [i].ws) {
            fasgd_log_error ("sim: out of memory for a model workspace");
            return -1;
        }
    }
    for (int i = 1; i < nthreads; i++)
        if (pthread_create (&self->workers [i].thread, NULL, s_worker_main, &self->workers [i]) != 0) {
            fasgd_log_error ("sim: cannot start thread %d", i);
            self->nthreads = i;
            return -1;
        }
    return 0;
}

fasgd_sim_t *
fasgd_sim_new (const fasgd_sim_cfg_t *cfg, const fasgd_dataset_t *train, const fasgd_dataset_t *valid)
{
    fasgd_sim_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = *cfg;
    self->train = train;
    self->valid = valid;
    pthread_mutex_init (&self->lock, NULL);
    pthread_cond_init (&self->wake, NULL);
    pthread_cond_init (&self->done_cond, NULL);
    if (s_new_model_rule (self) != 0
        || s_new_buffers (self) != 0
        || s_new_theta (self) != 0
        || s_new_clients (self) != 0
        || s_new_shards (self) != 0
        || fasgd_simstale_init (self) != 0
        || s_new_workers (self) != 0
        || s_new_batches (self) != 0
        || s_start_workers (self) != 0)
        fasgd_sim_destroy (&self);
    return self;
}

void
fasgd_sim_destroy (fasgd_sim_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_sim_t *self = *self_p;
    if (self->workers) {
        pthread_mutex_lock (&self->lock);
        self->quit = 1;
        pthread_cond_broadcast (&self->wake);
        pthread_mutex_unlock (&self->lock);
        for (int i = 1; i < self->nthreads; i++)
            if (self->workers [i].thread)
                pthread_join (self->workers [i].thread, NULL);
        for (int i = 0; i < self->nthreads; i++) {
            fasgd_model_ws_destroy (&self->workers [i].ws);
            free (self->workers [i].theta);
        }
        free (self->workers);
    }
    /*  Every snapshot is on the free list or held by a client, an event or
        the server (`current`); once all let go, all are on the free list.  */
    fasgd_simstale_destroy (self);
    fasgd_simshards_destroy (self);
    if (self->clients) {
        for (int k = 0; k < self->cfg.clients; k++) {
            fasgd_snapshot_release (self->clients [k].snap);
            fasgd_snapshot_release (self->clients [k].used);
            free (self->clients [k].residual);
            free (self->clients [k].last);
            free (self->clients [k].accum);
        }
    }
    for (size_t i = 0; i < self->heap_n; i++) {
        fasgd_snapshot_release (self->heap [i].snap);
        fasgd_snapshot_release (self->heap [i].used);
    }
    fasgd_snapshot_release (self->wire_snap);
    fasgd_snapshot_release (self->current);
    fasgd_snapshot_pool_destroy (&self->snaps);
    free (self->heap);
    free (self->clients);
    free (self->speed_cum);
    free (self->slot_grads);
    free (self->last_iter);
    free (self->chunk_nll);
    for (int k = 0; self->test_batches && k < self->ntest; k++)
        fasgd_model_batch_destroy (&self->test_batches [k]);
    free (self->test_batches);
    free (self->test_nll);
    free (self->test_err);
    free (self->chunk_err);
    for (size_t i = 0; self->batches && i < self->nbatches + (size_t) self->nchunks; i++)
        fasgd_model_batch_destroy (&self->batches [i]);
    free (self->batches);
    free (self->grad);
    free (self->scratch);
    free (self->wire_bytes);
    free (self->wire_grad);
    free (self->wire_residual);
    fasgd_rule_destroy (&self->rule);
    fasgd_model_destroy (&self->model);
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->wake);
    pthread_cond_destroy (&self->done_cond);
    free (self);
    *self_p = NULL;
}

int
fasgd_sim_set_test (fasgd_sim_t *self, const fasgd_dataset_t *test)
{
    assert (!self->test && test);
    const fasgd_model_spec_t *spec = fasgd_model_spec (self->model);
    if ((int) test->dim != spec->sizes [0] || (int) test->nclasses > spec->sizes [spec->nsizes - 1]) {
        fasgd_log_error ("sim: the test set's examples do not fit the model");
        return -1;
    }
    if (test->n == 0) {
        fasgd_log_error ("sim: the test set is empty");
        return -1;
    }
    int n = (int) ((test->n + S_EVAL_CHUNK - 1) / S_EVAL_CHUNK);
    self->test_batches = calloc ((size_t) n, sizeof *self->test_batches);
    self->test_nll = calloc ((size_t) n, sizeof (double));
    self->test_err = calloc ((size_t) n, sizeof (double));
    if (!self->test_batches || !self->test_nll || !self->test_err) {
        fasgd_log_error ("sim: out of memory for the test set");
        return -1;
    }
    for (int k = 0; k < n; k++)
        if (!(self->test_batches [k] = s_batch_new (self, test, (size_t) k * S_EVAL_CHUNK,
                                                    s_set_chunk_len (test->n, k)))) {
            fasgd_log_error ("sim: out of memory for the test set");
            for (int j = 0; j < k; j++)
                fasgd_model_batch_destroy (&self->test_batches [j]);
            return -1;
        }
    self->ntest = n;
    self->test = test;
    return 0;
}

int
fasgd_sim_run (fasgd_sim_t *self, FILE *csv)
{
    self->csv = csv;
    self->progress_tty = isatty (2);
    self->show_progress = self->cfg.progress == 2 || (self->cfg.progress == 1 && self->progress_tty);
    clock_gettime (CLOCK_MONOTONIC, &self->t0);
    self->last_progress = self->t0;
    if (csv)
        s_csv_header (self, csv);
    s_row (self);                        /* the starting point, at T = 0 */
    if (self->cfg.mode == FASGD_SIM_EVENTS)
        s_run_events (self);
    else
        s_run_iterations (self);
    if (self->shards)
        fasgd_simshards_sync (self);
    if (self->last_row_T != self->T || self->st.evaluations == 1)
        s_row (self);
    s_progress (self, 1);
    if (csv)
        fflush (csv);
    self->st.timestamp = self->T;
    self->st.sim_time = self->now;
    self->st.tau_mean = self->tau_count ? self->tau_sum / (double) self->tau_count : 0;
    self->st.peak_snapshots = self->shards ? fasgd_simshards_peak (self) : fasgd_snapshot_pool_peak (self->snaps);
    return self->interrupted ? 1 : 0;
}

const fasgd_sim_stats_t *
fasgd_sim_stats (const fasgd_sim_t *self)
{
    return &self->st;
}

const float *
fasgd_sim_theta (const fasgd_sim_t *self)
{
    return self->current->theta;
}

size_t
fasgd_sim_nparams (const fasgd_sim_t *self)
{
    return self->n;
}

void
fasgd_sim_interrupt (fasgd_sim_t *self)
{
    self->interrupted = 1;
}
