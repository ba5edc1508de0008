/*  control: the control socket (proto/PROTOCOL.md, "The control
    protocol"), spoken by fasgd-ctl. It answers STATUS, built from
    counters the poll loop keeps anyway, so asking costs the updates
    nothing but its own formatting, and CHECKPOINT. Served from the poll
    loop after the training traffic of each wake-up, a few at a time.  */
#include "internal.h"

#include "log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define S_PER_SECOND 50                 /* control requests answered in full a second */
#define S_CHECKPOINT_INTERVAL_MS 1000   /* between checkpoints asked for, at least, */
#define S_CHECKPOINT_SHARE 10           /* and at least this many times the last one's writing */
#define S_CHECKPOINT_INTERVAL_MAX_MS 2000   /* but at most (fasgd-ctl waits 3 s by default) */

/*  A growing text buffer for replies. On out of memory it keeps what it
    has and says so in failed.  */
typedef struct {
    char *data;
    size_t len, cap;
    int failed;
} s_text_t;

static void
s_text_add (s_text_t *t, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_text_add (s_text_t *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start (ap, fmt);
        int k = t->data ? vsnprintf (t->data + t->len, t->cap - t->len, fmt, ap) : 0;
        va_end (ap);
        if (k < 0) {
            t->failed = 1;
            return;
        }
        if (t->data && t->len + (size_t) k < t->cap) {
            t->len += (size_t) k;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 4096;
        while (cap < t->len + (size_t) k + 1)
            cap *= 2;
        char *grown = realloc (t->data, cap);
        if (!grown) {
            t->failed = 1;
            return;
        }
        t->data = grown;
        t->cap = cap;
    }
}

void
fasgd_srv_control_sample (fasgd_server_t *self, int64_t now)
{
    fasgd_srv_sample_t *s = &self->window [self->window_next];
    s->ms = now;
    s->T = self->params->T;
    s->st = self->st;
    self->window_next = (self->window_next + 1) % FASGD_SRV_WINDOW_SAMPLES;
    if (self->window_count < FASGD_SRV_WINDOW_SAMPLES)
        self->window_count++;
    self->last_sample_ms = now;
}

static const fasgd_srv_sample_t *
s_window_oldest (const fasgd_server_t *self)
{
    return &self->window [self->window_count < FASGD_SRV_WINDOW_SAMPLES ? 0 : self->window_next];
}

static double
s_ratio (uint64_t part, uint64_t whole)
{
    return whole ? (double) part / (double) whole : 0.0;
}

static double
s_wall_seconds (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/*  Control requests answered in full this second, at most S_PER_SECOND;
    1 when this one is past that.  */
static int
s_over_budget (fasgd_server_t *self)
{
    int64_t now = fasgd_srv_now_ms ();
    if (now - self->ctl_second_ms >= 1000) {
        self->ctl_second_ms = now;
        self->ctl_in_second = 0;
    }
    return ++self->ctl_in_second > S_PER_SECOND;
}

static int
s_by_pushes (const void *a, const void *b)
{
    const fasgd_srv_client_t *x = *(const fasgd_srv_client_t *const *) a, *y = *(const fasgd_srv_client_t *const *) b;
    return x->pushes > y->pushes ? -1 : x->pushes < y->pushes ? 1 : (x->id > y->id) - (x->id < y->id);
}

static int
s_by_id (const void *a, const void *b)
{
    const fasgd_srv_client_t *x = *(const fasgd_srv_client_t *const *) a, *y = *(const fasgd_srv_client_t *const *) b;
    return (x->id > y->id) - (x->id < y->id);
}

/*  The STATUS reply's clients: with more than limits.status_clients, the
    busiest, so that the reply stays bounded however many join.  */
static void
s_status_clients (fasgd_server_t *self, s_text_t *t, int64_t now)
{
    const fasgd_srv_registry_t *reg = self->registry;
    size_t live = fasgd_srv_registry_live (reg);
    uint32_t last_id = fasgd_srv_registry_last_id (reg);
    size_t listed = live < (size_t) self->cfg.status_clients ? live : (size_t) self->cfg.status_clients;
    s_text_add (t, "clients_listed=%zu\n", listed);
    const fasgd_srv_client_t **list = listed < live ? malloc (live * sizeof *list) : NULL;
    if (list) {
        size_t k = 0;
        for (uint32_t id = 1; id <= last_id && k < live; id++)
            if (fasgd_srv_registry_lookup (reg, id))
                list [k++] = fasgd_srv_registry_lookup (reg, id);
        qsort (list, k, sizeof *list, s_by_pushes);
        qsort (list, listed, sizeof *list, s_by_id);
    }
    else if (listed < live)
        listed = 0;                     /* out of memory: the counts alone */
    size_t shown = 0;
    for (uint32_t i = 0; shown < listed && (list || i < last_id); i++) {
        const fasgd_srv_client_t *c = list ? list [i] : fasgd_srv_registry_lookup (reg, i + 1);
        if (!c)
            continue;
        shown++;
        s_text_add (t, "client.%u.name=%s\nclient.%u.address=%s\nclient.%u.connected_s=%.3f\n"
                    "client.%u.idle_s=%.3f\n"
                    "client.%u.pushes=%llu\nclient.%u.repeats=%llu\nclient.%u.fetches=%llu\n"
                    "client.%u.not_modified=%llu\n",
                    c->id, c->name, c->id, c->addr, c->id, (double) (now - c->joined_ms) / 1000.0,
                    c->id, (double) (now - c->last_seen_ms) / 1000.0,
                    c->id, (unsigned long long) c->pushes, c->id, (unsigned long long) c->repeats,
                    c->id, (unsigned long long) c->fetches, c->id, (unsigned long long) c->not_modified);
        if (c->has_pushed)
            s_text_add (t, "client.%u.last_tau=%llu\n", c->id, (unsigned long long) c->last_tau);
        if (c->refused || c->clipped)
            s_text_add (t, "client.%u.guard_refused=%llu\nclient.%u.guard_clipped=%llu\n", c->id,
                        (unsigned long long) c->refused, c->id, (unsigned long long) c->clipped);
        if (c->ignored || c->weighted)
            s_text_add (t, "client.%u.guard_ignored=%llu\nclient.%u.guard_weighted=%llu\n", c->id,
                        (unsigned long long) c->ignored, c->id, (unsigned long long) c->weighted);
        if (c->loss_cut)
            s_text_add (t, "client.%u.guard_loss_cut=%llu\n", c->id, (unsigned long long) c->loss_cut);
        if (fasgd_srv_guard_has_reference (self->guard) && c->has_pushed)
            s_text_add (t, "client.%u.guard_mean_score=%.4g\n", c->id,
                        fasgd_srv_guard_client_mean (self->guard, c));
        if (*c->key)
            s_text_add (t, "client.%u.key=%s\nclient.%u.key_name=%s\n", c->id, c->key, c->id, c->key_name);
    }
    free (list);
}

/*  The STATUS reply: every key is specified in PROTOCOL.md.  */
static void
s_control_status (fasgd_server_t *self, s_text_t *t)
{
    int64_t now = fasgd_srv_now_ms ();
    const fasgd_srv_stats_t *a = &self->st;
    const fasgd_srv_sample_t *old = s_window_oldest (self);
    const fasgd_srv_stats_t *b = &old->st;
    double secs = (double) (now - old->ms) / 1000.0;
    double per_s = secs > 0 ? 1.0 / secs : 0.0;
    uint64_t d_push = a->pushes - b->pushes, d_rep = a->repeats - b->repeats;
    uint64_t d_fetch = a->fetches - b->fetches, d_nm = a->not_modified - b->not_modified;
    uint64_t d_taus = a->tau_count - b->tau_count;
    double in_rate = (double) (a->bytes_in - b->bytes_in) * per_s;
    double out_rate = (double) (a->bytes_out - b->bytes_out) * per_s;
    size_t live = fasgd_srv_registry_live (self->registry);
    s_text_add (t, "status=200\nprotocol=%u\nversion=%s\ntime=%.3f\nuptime_s=%.3f\nT=%llu\nrule=%s\nvbar=%.9g\n",
                FASGD_PROTO_VERSION, PACKAGE_VERSION, s_wall_seconds (),
                (double) (now - self->started_ms) / 1000.0, (unsigned long long) self->params->T,
                fasgd_rule_kind_name (self->cfg.rule.name), fasgd_rule_vbar (self->params->rule));
    s_text_add (t, "wire_push=%s\nwire_params=%s\n", fasgd_proto_wire_name (self->cfg.wire_push),
                fasgd_proto_wire_name (self->cfg.wire_params));
    s_text_add (t, "params=%zu\nshard=%d\nshards=%d\noffset=%zu\nlength=%zu\n", self->params->total,
                self->cfg.shard_index, self->cfg.shard_count, self->params->offset, self->params->n);
    s_text_add (t, "clients=%zu\njoins=%llu\nleaves=%llu\nexpired=%llu\nrefused=%llu\nforbidden=%llu\n", live,
                (unsigned long long) a->joins, (unsigned long long) a->leaves,
                (unsigned long long) a->expired,
                (unsigned long long) (a->malformed + a->unknown + a->conflict + a->nonfinite + a->version
                                      + a->refused + a->forbidden),
                (unsigned long long) a->forbidden);
    s_text_add (t, "connections=%llu\nconnections_max=%llu\nconnections_shed=%llu\naccept_failed=%llu\n",
                (unsigned long long) fasgd_srv_conn_open (self->conns),
                (unsigned long long) fasgd_srv_conn_max (self->conns),
                (unsigned long long) a->conn_shed, (unsigned long long) a->accept_failed);
    s_text_add (t, "guard_refused=%llu\nguard_clipped=%llu\nguard_forgotten=%llu\ngrad_norm_median=%.6g\n",
                (unsigned long long) a->guarded, (unsigned long long) a->clipped,
                (unsigned long long) a->forgotten, fasgd_srv_guard_median (self->guard));
    s_text_add (t, "guard_direction=%s\nguard_reference_norm=%.6g\nguard_references=%llu\nguard_ignored=%llu\n"
                "guard_weighted=%llu\n", fasgd_srv_guard_direction (self->guard),
                fasgd_srv_guard_reference_norm (self->guard), (unsigned long long) a->references,
                (unsigned long long) a->ignored, (unsigned long long) a->weighted);
    s_text_add (t, "guard_loss_measures=%llu\nguard_loss_cut=%llu\nguard_loss_ignored=%llu\nguard_loss_rollbacks=%llu\n",
                (unsigned long long) a->loss_measures, (unsigned long long) a->loss_cut,
                (unsigned long long) a->loss_ignored, (unsigned long long) a->loss_rollbacks);
    s_text_add (t, "security=%s\n", fasgd_srv_security_curve (self->security) ? "curve" : "off");
    if (fasgd_srv_security_curve (self->security)) {
        if (fasgd_srv_security_has_allowlist (self->security))
            s_text_add (t, "allowed_keys=%zu\n", fasgd_srv_security_nkeys (self->security));
        s_text_add (t, "auth_refused=%llu\nhandshake_failed=%llu\nrevoked=%llu\n",
                    (unsigned long long) a->auth_refused, (unsigned long long) a->handshake_failed,
                    (unsigned long long) a->revoked);
    }
    s_text_add (t, "window_s=%.3f\nupdate_rate=%.3f\npush_rate=%.3f\nrepeat_rate=%.3f\nfetch_rate=%.3f\n"
                "not_modified_rate=%.3f\n", secs, (double) (self->params->T - old->T) * per_s,
                (double) d_push * per_s, (double) d_rep * per_s, (double) d_fetch * per_s,
                (double) d_nm * per_s);
    s_text_add (t, "late_heartbeats=%llu\n", (unsigned long long) a->late_heartbeats);
    s_text_add (t, "pushes=%llu\nrepeats=%llu\nbuffered=%llu\nfetches=%llu\nnot_modified=%llu\nheartbeats=%llu\n",
                (unsigned long long) a->pushes, (unsigned long long) a->repeats,
                (unsigned long long) a->buffered, (unsigned long long) a->fetches,
                (unsigned long long) a->not_modified, (unsigned long long) a->heartbeats);
    s_text_add (t, "push_repeat_ratio=%.4f\nfetch_not_modified_ratio=%.4f\n", s_ratio (d_rep, d_push + d_rep),
                s_ratio (d_nm, d_fetch + d_nm));
    s_text_add (t, "bytes_in_rate=%.0f\nbytes_out_rate=%.0f\nbytes_in=%llu\nbytes_out=%llu\nreplies_dropped=%llu\n",
                in_rate, out_rate, (unsigned long long) a->bytes_in, (unsigned long long) a->bytes_out,
                (unsigned long long) self->st.replies_dropped);
    if (self->turns)
        s_text_add (t, "turns_waiting=%d\nturns_waited=%llu\nturns_cut=%llu\nturns_skipped=%llu\n"
                    "turns_hold_ms=%d\nturns_slower=%llu\nturns_typical_us=%lld\n",
                    fasgd_srv_turns_waiting (self->turns), (unsigned long long) self->st.turns_waited,
                    (unsigned long long) self->st.turns_cut, (unsigned long long) self->st.turns_skipped,
                    fasgd_srv_turns_hold_ms (self->turns), (unsigned long long) self->st.turns_slower,
                    (long long) fasgd_srv_turns_typical_us (self->turns));
    /*  Images of θ held: the current one, those replies and clients hold
        (θ_used), and the free ones kept for reuse.  */
    s_text_add (t, "snapshots=%zu\nsnapshots_held=%zu\nsnapshot_bytes=%llu\n",
                fasgd_snapshot_pool_live (self->params->snaps), fasgd_snapshot_pool_held (self->params->snaps),
                (unsigned long long) (fasgd_snapshot_pool_held (self->params->snaps) * self->params->n
                                      * sizeof (float)));
    s_text_add (t, "tau_mean=%.3f\ntau_max=%llu\n", d_taus ? (a->tau_sum - b->tau_sum) / (double) d_taus : 0.0,
                (unsigned long long) a->tau_max);
    s_text_add (t, "staleness=%s\ntau_rule_mean=%.3f\n",
                fasgd_staleness_movement (self->staleness) ? "movement" : "count",
                d_taus ? (a->rule_tau_sum - b->rule_tau_sum) / (double) d_taus : 0.0);
    for (int k = 0; k < FASGD_SRV_TAU_BUCKETS; k++) {
        unsigned long long lo = k ? 1ull << (k - 1) : 0;
        if (k == 0 || k == 1)
            s_text_add (t, "tau.%llu=", lo);
        else if (k == FASGD_SRV_TAU_BUCKETS - 1)
            s_text_add (t, "tau.%llu+=", lo);
        else
            s_text_add (t, "tau.%llu-%llu=", lo, 2 * lo - 1);
        s_text_add (t, "%llu\n", (unsigned long long) a->tau_hist [k]);
    }
    double err, nll;
    uint64_t eval_T;
    int64_t eval_ms;
    if (fasgd_srv_eval_result (self->eval, &err, &nll, &eval_T, &eval_ms))
        s_text_add (t, "val_error=%.6g\nval_nll=%.6g\nval_T=%llu\nval_age_s=%.3f\n", err, nll,
                    (unsigned long long) eval_T, (double) (now - eval_ms) / 1000.0);
    if (*self->cfg.checkpoint) {
        s_text_add (t, "checkpoint_file=%s\n", self->cfg.checkpoint);
        uint64_t ckpt_T;
        int64_t ckpt_ms;
        if (fasgd_srv_checkpoint_last (self->checkpoint, &ckpt_T, &ckpt_ms))
            s_text_add (t, "checkpoint_T=%llu\ncheckpoint_age_s=%.3f\n", (unsigned long long) ckpt_T,
                        (double) (now - ckpt_ms) / 1000.0);
        s_text_add (t, "checkpoint_requests=%llu\ncheckpoint_request_writes=%llu\n",
                    (unsigned long long) self->ctl_ckpt_asked, (unsigned long long) self->ctl_ckpt_writes);
    }
    if (self->cfg.bandwidth > 0) {
        double used = in_rate + out_rate;
        s_text_add (t, "bandwidth_budget=%.0f\nbandwidth_used=%.0f\nbandwidth_used_ratio=%.4f\n",
                    self->cfg.bandwidth, used, used / self->cfg.bandwidth);
        if (live > 0 && used > 0) {
            double per_client = used / (double) live;
            double room = used >= self->cfg.bandwidth ? 0.0 : floor ((self->cfg.bandwidth - used) / per_client);
            s_text_add (t, "bandwidth_per_client=%.0f\nmore_clients=%.0f\n", per_client, room);
        }
    }
    s_status_clients (self, t, now);
}

/*  RELOAD: the allowlist read again; clients whose key left it are
    forgotten.  */
static void
s_control_reload (fasgd_server_t *self, s_text_t *t)
{
    char err [FASGD_PATH_LEN + 128];
    int rc = fasgd_srv_security_reload (self->security, err, sizeof err);
    if (rc != 0) {
        s_text_add (t, "status=%d\nerror=%s\n", rc > 0 ? 409 : 500, err);
        return;
    }
    size_t revoked = fasgd_srv_registry_revoke (self->registry, self->security);
    size_t keys = fasgd_srv_security_nkeys (self->security), trusted = fasgd_srv_security_ntrusted (self->security);
    fasgd_log_notice ("allowlist reloaded from %s: %zu keys, %zu clients revoked; %zu keys trusted (guard.trusted)",
                      *self->cfg.curve_clients ? self->cfg.curve_clients : "(allow_any)", keys, revoked, trusted);
    s_text_add (t, "status=200\nallowed_keys=%zu\nrevoked=%zu\ntrusted_keys=%zu\n", keys, revoked, trusted);
}

/*  Sends one control reply to the peer whose routing id is id (after an
    empty delimiter when its request had one); dropped, with a debug
    line, when the peer is gone or its queue is full.  */
static void
s_send (void *sock, zmq_msg_t *id_src, int delimited, const char *body, size_t body_len)
{
    zmq_msg_t id, delim, reply;
    zmq_msg_init (&id);
    zmq_msg_copy (&id, id_src);
    zmq_msg_init (&delim);
    zmq_msg_init_size (&reply, body_len);
    memcpy (zmq_msg_data (&reply), body, body_len);
    if (zmq_msg_send (&id, sock, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0
        || (delimited && zmq_msg_send (&delim, sock, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        || zmq_msg_send (&reply, sock, ZMQ_DONTWAIT) < 0)
        fasgd_log_debug ("control: reply dropped: %s", zmq_strerror (zmq_errno ()));
    zmq_msg_close (&id);
    zmq_msg_close (&delim);
    zmq_msg_close (&reply);
}

/*  The pause after a checkpoint written on request before the next: a
    second, or S_CHECKPOINT_SHARE times what the last took when that is
    longer (so that requests stop the updates for at most a tenth of the
    time), up to S_CHECKPOINT_INTERVAL_MAX_MS.  */
static int64_t
s_checkpoint_gap (const fasgd_server_t *self)
{
    int64_t gap = S_CHECKPOINT_SHARE * self->ctl_ckpt_cost_ms;
    if (gap < S_CHECKPOINT_INTERVAL_MS)
        gap = S_CHECKPOINT_INTERVAL_MS;
    return gap < S_CHECKPOINT_INTERVAL_MAX_MS ? gap : S_CHECKPOINT_INTERVAL_MAX_MS;
}

/*  Writes the checkpoint asked for and puts the reply in t: the requests
    of count waiting ones, which it answers together.  */
static void
s_checkpoint_now (fasgd_server_t *self, s_text_t *t, int count)
{
    char err [FASGD_PATH_LEN + 128];
    int64_t t0 = fasgd_srv_now_ms ();
    self->ctl_ckpt_ms = t0;
    if (fasgd_srv_checkpoint_write (self->checkpoint, err, sizeof err) != 0) {
        s_text_add (t, "status=500\nerror=%s\n", err);
        return;
    }
    self->ctl_ckpt_cost_ms = fasgd_srv_now_ms () - t0;
    self->ctl_ckpt_writes++;
    fasgd_log_notice ("checkpoint written to %s at T=%llu on request%s", self->cfg.checkpoint,
                      (unsigned long long) self->params->T, count > 1 ? "s coalesced" : "");
    s_text_add (t, "status=200\nfile=%s\nT=%llu\ntime=%.3f\nseconds=%.3f\ncoalesced=%d\n", self->cfg.checkpoint,
                (unsigned long long) self->params->T, s_wall_seconds (),
                (double) self->ctl_ckpt_cost_ms / 1000.0, count);
}

/*  A CHECKPOINT: written at once when the last one asked for is older
    than the gap; otherwise the request waits (reply 0) and every request
    that came within the gap is answered by one checkpoint at its end
    (fasgd_srv_control_tick), written after all of them arrived. A burst
    of requests costs one write.  */
static int
s_control_checkpoint (fasgd_server_t *self, s_text_t *t, zmq_msg_t *id, int delimited)
{
    if (!*self->cfg.checkpoint) {
        s_text_add (t, "status=409\nerror=checkpoint.file is empty: this server writes no checkpoints\n");
        return 1;
    }
    self->ctl_ckpt_asked++;
    if (!self->ctl_ckpt_ms || fasgd_srv_now_ms () - self->ctl_ckpt_ms >= s_checkpoint_gap (self)) {
        s_checkpoint_now (self, t, 1);
        return 1;
    }
    if (self->ctl_nwaiting == FASGD_SRV_CKPT_WAITING) {
        s_text_add (t, "status=429\nerror=%d requests already wait for the next checkpoint: try again\n",
                    FASGD_SRV_CKPT_WAITING);
        return 1;
    }
    fasgd_srv_ckpt_waiter_t *w = &self->ctl_waiting [self->ctl_nwaiting++];
    zmq_msg_init (&w->id);
    zmq_msg_copy (&w->id, id);
    w->delimited = delimited;
    return 0;
}

void
fasgd_srv_control_tick (fasgd_server_t *self, int64_t now, int stopping)
{
    if (!self->ctl_nwaiting || (!stopping && now - self->ctl_ckpt_ms < s_checkpoint_gap (self)))
        return;
    s_text_t t = { NULL, 0, 0, 0 };
    if (stopping)
        s_text_add (&t, "status=503\nerror=the server is stopping: its final checkpoint follows\n");
    else
        s_checkpoint_now (self, &t, self->ctl_nwaiting);
    const char *body = t.failed || !t.data ? "status=500\nerror=out of memory\n" : t.data;
    for (int i = 0; i < self->ctl_nwaiting; i++) {
        fasgd_srv_ckpt_waiter_t *w = &self->ctl_waiting [i];
        s_send (zsock_resolve (self->control), &w->id, w->delimited, body, strlen (body));
        zmq_msg_close (&w->id);
    }
    self->ctl_nwaiting = 0;
    free (t.data);
}

/*  Reads one control request and answers it. Returns 0, or -1 when there
    was nothing to read. Whatever arrives gets a reply or is dropped:
    nothing a peer sends here can stop the server.  */
int
fasgd_srv_control_handle (fasgd_server_t *self)
{
    void *sock = zsock_resolve (self->control);
    zmq_msg_t parts [3];
    int nparts, extra;
    size_t total;
    if (fasgd_srv_recv_parts (sock, parts, &nparts, &extra, &total) != 0)
        return -1;
    /*  REQ puts an empty delimiter before its request; DEALER need not.
        A lone empty frame is an empty request, not an envelope.  */
    int delimited = nparts >= 3 && zmq_msg_size (&parts [1]) == 0;
    int at = delimited ? 2 : 1;
    s_text_t t = { NULL, 0, 0, 0 };
    if (nparts < 1)
        goto done;
    /*  A key revoked since its handshake keeps its connection, not its
        say.  */
    const char *key = nparts >= 2 ? fasgd_srv_security_key (self->security, &parts [1]) : NULL;
    if (fasgd_srv_security_curve (self->security) && !fasgd_srv_security_allowed (self->security, key)) {
        self->st.forbidden++;
        s_text_add (&t, "status=403\nerror=this CURVE key is no longer allowed\n");
    }
    else if (s_over_budget (self))
        s_text_add (&t, "status=429\nerror=more than %d control requests a second: try again\n", S_PER_SECOND);
    else if (extra || nparts != at + 1)
        s_text_add (&t, "status=400\nerror=a request is one frame: STATUS, CHECKPOINT or RELOAD\n");
    else {
        const char *cmd = zmq_msg_data (&parts [at]);
        size_t len = zmq_msg_size (&parts [at]);
        while (len > 0 && (cmd [len - 1] == '\n' || cmd [len - 1] == '\r' || cmd [len - 1] == ' '
                           || cmd [len - 1] == '\t'))
            len--;
        if (len == 6 && strncasecmp (cmd, "STATUS", 6) == 0)
            s_control_status (self, &t);
        else if (len == 10 && strncasecmp (cmd, "CHECKPOINT", 10) == 0) {
            if (!s_control_checkpoint (self, &t, &parts [0], delimited))
                goto done;              /* answered with the next checkpoint */
        }
        else if (len == 6 && strncasecmp (cmd, "RELOAD", 6) == 0)
            s_control_reload (self, &t);
        else if (len == 0)
            s_text_add (&t, "status=400\nerror=empty request: STATUS, CHECKPOINT or RELOAD\n");
        else {
            char shown [40];
            size_t k = 0;
            for (size_t i = 0; i < len && k < 32; i++)
                shown [k++] = (cmd [i] >= 32 && cmd [i] < 127) ? cmd [i] : '?';
            shown [k] = 0;
            s_text_add (&t, "status=400\nerror=unknown command '%s%s': STATUS, CHECKPOINT or RELOAD\n", shown,
                        len > k ? "..." : "");
        }
    }
    const char *body = t.data;
    size_t body_len = t.len;
    if (t.failed || !body) {
        body = "status=500\nerror=out of memory\n";
        body_len = strlen (body);
    }
    s_send (sock, &parts [0], delimited, body, body_len);
done:
    free (t.data);
    for (int i = 0; i < nparts; i++)
        zmq_msg_close (&parts [i]);
    return 0;
}

