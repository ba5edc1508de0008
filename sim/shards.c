/*  shards: the simulated server split into shards, as S fasgd-servers
    would each own a contiguous part of θ.

    Each shard has its own rule, with its own state and v̄ (the mean of its
    own parameters' statistic), and its own timestamp T_s, which advances
    by one with each update the shard applies. A client holds, per shard,
    the copy it last fetched and that copy's timestamp j_s, the v̄ of the
    shard's last answer, and a push gate and a fetch gate of its own that
    draw on that v̄: per-shard B-FASGD, the paper's "statistics per layer".
    A push of gradient g is one message per shard, carrying that shard's
    part, through that shard's gate; its staleness there is τ_s = T_s −
    j_s. The fetches likewise. With the `one` map none of this runs and the
    simulator is what it always was, bit for bit.

    Each shard's part of θ lives in snapshots of its own, as the whole θ
    does without shards: a fetch of the shard takes a reference, an update
    writes into a fresh copy of the part while a client holds the current
    one. So a client holds at most one copy of each part, D floats in all,
    however old its parts; the θ it computes on is put together from them
    in the computing thread's buffer, and the server's whole θ when it is
    validated.

    What the daemons do not have yet and so is refused here: events mode
    (link times per shard), softsync, the rules that need θ_used and the
    compact wire.  */
#include "simint.h"

#include "log.h"
#include "shardmap.h"

#include <stdlib.h>
#include <string.h>

/*  The shard map's parts: [off, off + n) for each, in order; -1 with the
    reason in err when split cannot split the model so.  */
static int
s_map (const fasgd_sim_t *self, size_t *off, size_t *len, int max, char *err, size_t errlen)
{
    int nt = fasgd_model_ntensors (self->model), ns = 0;
    if (self->cfg.shards == FASGD_SIM_SHARDS_SPLIT) {
        /*  The daemons' map (common/shardmap.c), so that a simulated split
            is the one fasgd-servers with this shard.count make.  */
        uint64_t sizes [2 * FASGD_MODEL_MAX_LAYERS];
        fasgd_model_tensor_sizes (self->model, sizes, 2 * FASGD_MODEL_MAX_LAYERS);
        for (int k = 0; k < self->cfg.shard_count && k < max; k++) {
            uint64_t o, l;
            if (fasgd_shardmap_part (sizes, nt, (uint32_t) self->cfg.shard_count, (uint32_t) k, &o, &l, err,
                                     errlen) != 0)
                return -1;
            off [k] = (size_t) o;
            len [k] = (size_t) l;
            ns++;
        }
        return ns;
    }
    for (int i = 0; i < nt && ns < max; i++) {
        const fasgd_tensor_t *t = fasgd_model_tensor (self->model, i);
        size_t end = t->offset + (size_t) t->rows * (size_t) t->cols;
        /*  layer: a weight tensor opens a shard, its bias joins it.  */
        if (self->cfg.shards == FASGD_SIM_SHARDS_LAYER && i % 2 == 1 && ns > 0) {
            len [ns - 1] = end - off [ns - 1];
            continue;
        }
        off [ns] = t->offset;
        len [ns] = end - t->offset;
        ns++;
    }
    return ns;
}

int
fasgd_simshards_init (fasgd_sim_t *self, char *err, size_t errlen)
{
    const fasgd_sim_cfg_t *cfg = &self->cfg;
    if (cfg->shards == FASGD_SIM_SHARDS_ONE)
        return 0;
    const char *why = cfg->mode == FASGD_SIM_EVENTS ? "events mode"
                      : self->sync ? "the softsync rule"
                      : self->needs_used ? "a rule that needs the parameters a gradient was computed on"
                      : cfg->wire_push || cfg->wire_params ? "a compact wire (wire.push, wire.params)"
                      : NULL;
    if (why) {
        snprintf (err, errlen, "%s cannot run sharded yet (shards: one)", why);
        return -1;
    }
    size_t off [FASGD_SHARDMAP_MAX], len [FASGD_SHARDMAP_MAX];
    int ns = s_map (self, off, len, FASGD_SHARDMAP_MAX, err, errlen);
    if (ns < 0)
        return -1;
    if (!(self->shards = calloc ((size_t) ns, sizeof *self->shards))) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    self->nshards = ns;
    fasgd_rule_params_t rp;
    fasgd_rule_cfg_to_params (&cfg->rule, cfg->clients, &rp);
    for (int s = 0; s < ns; s++) {
        s_shard_t *sh = &self->shards [s];
        sh->off = off [s];
        sh->n = len [s];
        char why_rule [200];
        if (!(sh->rule = fasgd_rule_new (&rp, sh->n, why_rule, sizeof why_rule))) {
            snprintf (err, errlen, "shard %d: %s", s, why_rule);
            return -1;
        }
        if (!(sh->pool = fasgd_snapshot_pool_new (sh->n)) || !(sh->current = fasgd_snapshot_new (sh->pool))) {
            snprintf (err, errlen, "out of memory");
            return -1;
        }
        memcpy (sh->current->theta, self->current->theta + sh->off, sh->n * sizeof (float));  /* θ at T = 0 */
    }
    for (int k = 0; k < cfg->clients; k++) {
        s_client_t *c = &self->clients [k];
        if (!(c->views = calloc ((size_t) ns, sizeof *c->views))) {
            snprintf (err, errlen, "out of memory");
            return -1;
        }
        for (int s = 0; s < ns; s++) {
            s_view_t *v = &c->views [s];
            fasgd_sim_gates_init (cfg, k, s, &v->gates);
            v->snap = fasgd_snapshot_ref (self->shards [s].current);
            v->vbar = fasgd_rule_vbar (self->shards [s].rule);
        }
        fasgd_snapshot_release (c->snap);
        c->snap = NULL;
    }
    return 0;
}

void
fasgd_simshards_destroy (fasgd_sim_t *self)
{
    if (!self->shards)
        return;
    for (int k = 0; self->clients && k < self->cfg.clients; k++) {
        s_view_t *views = self->clients [k].views;
        for (int s = 0; views && s < self->nshards; s++)
            fasgd_snapshot_release (views [s].snap);
        free (views);
        self->clients [k].views = NULL;
    }
    for (int s = 0; s < self->nshards; s++) {
        fasgd_rule_destroy (&self->shards [s].rule);
        fasgd_snapshot_release (self->shards [s].current);
        fasgd_snapshot_pool_destroy (&self->shards [s].pool);
    }
    free (self->shards);
    self->shards = NULL;
    self->nshards = 0;
}

const float *
fasgd_simshards_theta (const fasgd_sim_t *self, const s_client_t *c, float *buf)
{
    for (int s = 0; s < self->nshards; s++) {
        const s_shard_t *sh = &self->shards [s];
        memcpy (buf + sh->off, c->views [s].snap->theta, sh->n * sizeof (float));
    }
    return buf;
}

void
fasgd_simshards_sync (fasgd_sim_t *self)
{
    for (int s = 0; s < self->nshards; s++) {
        const s_shard_t *sh = &self->shards [s];
        memcpy (self->current->theta + sh->off, sh->current->theta, sh->n * sizeof (float));
    }
}

size_t
fasgd_simshards_peak (const fasgd_sim_t *self)
{
    size_t peak = 0;
    for (int s = 0; s < self->nshards; s++) {
        size_t p = fasgd_snapshot_pool_peak (self->shards [s].pool);
        peak = p > peak ? p : peak;
    }
    return peak;
}

/*  Shard s applies its part g of client k's gradient computed on its timestamp j:
    in place when nobody else holds its part, else into a fresh copy.  */
static int
s_apply (fasgd_sim_t *self, int s, int k, const float *g, uint64_t j)
{
    s_shard_t *sh = &self->shards [s];
    uint64_t tau = fasgd_simstale_tau (&sh->stale, sh->T, j);
    int rc = fasgd_simint_apply (self, &sh->current, sh->rule, g, tau, NULL);
    if (rc == 1)
        sh->T++;
    if (rc >= 0)
        fasgd_simstale_pushed (&sh->stale, sh->T, k, g, sh->n, rc == 1);
    return rc;
}

void
fasgd_simshards_turn (fasgd_sim_t *self, int k, const float *g)
{
    s_client_t *c = &self->clients [k];
    const int keep_last = self->cfg.gates.push_skip == FASGD_PUSH_SKIP_RESEND_LAST
                          && self->cfg.gates.push.kind != FASGD_GATE_ALWAYS;
    fasgd_tx_t act [2 * FASGD_MODEL_MAX_LAYERS];
    self->st.iterations++;
    for (int s = 0; s < self->nshards; s++) {
        self->st.potential_pushes++;
        act [s] = fasgd_gates_push (&c->views [s].gates, c->views [s].vbar);
    }
    if (keep_last && !c->last && !(c->last = malloc (self->n * sizeof (float)))) {
        fasgd_log_error ("sim: out of memory for the resend-last cache");
        abort ();
    }
    for (int s = 0; s < self->nshards; s++) {
        const s_shard_t *sh = &self->shards [s];
        s_view_t *v = &c->views [s];
        const float *part = g + sh->off;
        if (act [s] == FASGD_TX_KEEP) {
            /*  accumulate: the part stays with the client, summed.  */
            fasgd_simint_accumulate (self, c, sh->off, part, sh->n, &v->gates);
            continue;
        }
        if (act [s] == FASGD_TX_REPEAT) {
            self->st.repeats++;
            self->st.bytes += 2 * FASGD_SIM_HEADER_BYTES;
            if (v->has_last)
                s_apply (self, s, k, c->last + sh->off, v->last_ts);
            v->vbar = fasgd_rule_vbar (sh->rule);
            continue;
        }
        if (act [s] == FASGD_TX_PUSH_SUM) {
            fasgd_gates_sum (self->scratch + sh->off, c->accum + sh->off, part, sh->n);
            part = self->scratch + sh->off;
            v->gates.has_accum = 0;
        }
        self->st.pushes++;
        self->st.bytes += 2 * FASGD_SIM_HEADER_BYTES + sh->n * sizeof (float);
        v->gates.pushed = 1;
        if (s_apply (self, s, k, part, v->j) >= 0 && keep_last) {
            memcpy (c->last + sh->off, part, sh->n * sizeof (float));
            v->last_ts = v->j;
            v->has_last = 1;
        }
        v->vbar = fasgd_rule_vbar (sh->rule);
    }
    /*  The server's T, for validation and the CSV: its newest shard's.  */
    uint64_t T = self->T;
    for (int s = 0; s < self->nshards; s++)
        T = self->shards [s].T > T ? self->shards [s].T : T;
    if (T != self->T) {
        self->T = T;
        self->current->ts = T;
        if (T % (uint64_t) self->cfg.eval_every == 0) {
            fasgd_simshards_sync (self);
            fasgd_simint_row (self);
        }
    }
    for (int s = 0; s < self->nshards; s++) {
        const s_shard_t *sh = &self->shards [s];
        s_view_t *v = &c->views [s];
        self->st.potential_fetches++;
        if (!fasgd_gates_fetch (&v->gates, v->vbar))
            continue;
        self->st.fetches++;
        self->st.bytes += 2 * FASGD_SIM_HEADER_BYTES + sh->n * sizeof (float);
        fasgd_snapshot_release (v->snap);
        v->snap = fasgd_snapshot_ref (sh->current);
        v->j = sh->T;
        v->vbar = fasgd_rule_vbar (sh->rule);
    }
}
