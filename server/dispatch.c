/*  dispatch: the data sockets (proto/PROTOCOL.md). Every request on the
    push and fetch sockets is read here, checked, and answered: JOIN
    registers a client (registry.c), PUSH and PUSH_REPEAT apply a gradient
    with the rule (common/rules.c, the same code the simulator runs) once
    the guard let it through (guard.c), FETCH is answered from a shared
    immutable snapshot of θ (params.c). The router of the data sockets:
    the only file that knows every request's handler; the frames go out
    through reply.c, below every handler.  */
#include "internal.h"

#include "log.h"
#include "wire.h"

#include <math.h>
#include <string.h>

/*  The histogram bucket of τ: 0 for 0, k for 2^(k-1) ≤ τ < 2^k, the
    last for everything from 1024 on.  */
static int
s_tau_bucket (uint64_t tau)
{
    int k = tau ? 64 - __builtin_clzll (tau) : 0;
    return k < FASGD_SRV_TAU_BUCKETS - 1 ? k : FASGD_SRV_TAU_BUCKETS - 1;
}

/*  PARAMS with θ at T, sent from the shared snapshot without a copy:
    the answer to a FETCH (status 200), or to a PUSH or PUSH_REPEAT with
    THEN_FETCH (the push's status: 200, or 202 when softsync buffered it).
    Counted as a fetch.  */
static void
s_send_params (fasgd_server_t *self, const fasgd_srv_request_t *r, fasgd_srv_client_t *c, int status)
{
    fasgd_header_t h = fasgd_srv_reply_header (r, FASGD_MSG_PARAMS, status);
    /*  With a shared θ (little-endian hosts) this cannot fail; elsewhere
        a PUSH with THEN_FETCH may have been applied already, and the
        reason says so.  */
    fasgd_snapshot_t *snap = fasgd_srv_params_snapshot (self->params);
    if (!snap) {
        fasgd_srv_reply_error (r, FASGD_STATUS_UNAVAILABLE, "out of memory%s",
                               r->req->type == FASGD_MSG_FETCH ? "" : " for the parameters (the push was applied)");
        return;
    }
    if (self->needs_used) {
        fasgd_snapshot_release (c->snap);
        c->snap = fasgd_snapshot_ref (snap);
    }
    c->fetches++;
    self->st.fetches++;
    if (self->cfg.wire_params != FASGD_WIRE_F32) {
        /*  The image of θ rounded for the wire, made once per timestamp
            and shared by the replies that carry it.  */
        fasgd_snapshot_t *img = fasgd_srv_params_wire_image (self->params, snap);
        fasgd_snapshot_release (snap);
        if (!img) {
            fasgd_srv_reply_error (r, FASGD_STATUS_UNAVAILABLE, "out of memory");
            return;
        }
        snap = img;
    }
    fasgd_srv_reply (r, &h, NULL, self->params->n * fasgd_proto_wire_size (self->cfg.wire_params), snap);
}

/*  The PARAMS reply of s_send_params, with turns.enabled in its order
    (turns.h): now when the turn is free (taking it), else queued, to go
    with the θ of then; now without a turn when turns.c says so. A
    client with replies still to go without a turn (since its last cut,
    or its path found slower) waits its order and holds no one; a
    connection whose descriptor is not known takes no turn.  */
static void
s_reply_params (fasgd_server_t *self, const fasgd_srv_request_t *r, fasgd_srv_client_t *c, int status)
{
    fasgd_srv_request_t asked = *r;
    if (self->turns && r->fd >= 0) {
        int holds = c->turn_skips <= 0;
        if (!holds)
            c->turn_skips--;
        if (fasgd_srv_turns_ask (self->turns, &asked, c->id, status, holds) == FASGD_SRV_TURN_QUEUED)
            return;
    }
    s_send_params (self, &asked, c, status);
}

/*  Each turn that ended by itself judges its client's path (turns.h):
    one slower than the others' has its next 16 replies go without a
    turn (more when a cut said so), the judgement logged when it
    changes.  */
static void
s_turns_ended (fasgd_server_t *self)
{
    uint32_t id;
    int64_t took_us;
    fasgd_srv_client_t *c;
    while ((id = fasgd_srv_turns_ended (self->turns, &took_us)))
        if ((c = fasgd_srv_registry_lookup (self->registry, id))) {
            int slower = fasgd_srv_turns_slower (self->turns, &c->turn_pace, took_us);
            double typical_ms = (double) fasgd_srv_turns_typical_us (self->turns) / 1000;
            if (slower) {
                self->st.turns_slower++;
                if (c->turn_skips < fasgd_srv_turns_skips (1))
                    c->turn_skips = fasgd_srv_turns_skips (1);
            }
            if (slower && !c->turn_slower)
                fasgd_log_notice ("client %u (%s): its turns take %.1f ms, the others' %.1f ms: its path is slower "
                                  "than theirs; its replies go without a turn, one in %lld taking one to measure "
                                  "it again", c->id, c->name, c->turn_pace.mean_us / 1000, typical_ms,
                                  (long long) fasgd_srv_turns_skips (1) + 1);
            else if (!slower && c->turn_slower)
                fasgd_log_info ("client %u (%s): its turns take %.1f ms, the others' %.1f ms: it takes turns again",
                                c->id, c->name, c->turn_pace.mean_us / 1000, typical_ms);
            c->turn_slower = slower;
        }
}

void
fasgd_srv_dispatch_turns (fasgd_server_t *self, int all)
{
    fasgd_srv_turn_t t;
    fasgd_srv_client_t *c;
    uint32_t cut;
    int held_ms;
    fasgd_srv_turn_cut_t why;
    while (fasgd_srv_turns_next (self->turns, all, &t) == 0) {
        fasgd_srv_request_t r = { t.sock, &t.id, &t.req, self->params, &self->st, t.fd, NULL };
        c = fasgd_srv_registry_lookup (self->registry, t.req.client_id);
        /*  Its client gone (it left, expired or was forgotten) while the
            reply waited: nobody to send it to.  */
        if (!c || c->session != t.req.session)
            self->st.replies_dropped++;
        else {
            if (!all && t.holds)
                r.sent = fasgd_srv_turns_take (self->turns, &t);
            s_send_params (self, &r, c, t.status);
        }
        zmq_msg_close (&t.id);
    }
    s_turns_ended (self);
    if ((cut = fasgd_srv_turns_cut (self->turns, &held_ms, &why))
        && (c = fasgd_srv_registry_lookup (self->registry, cut))) {
        c->turn_skips = fasgd_srv_turns_skips (++c->turn_cuts);
        fasgd_log_notice ("client %u (%s): a reply to it held the next one %d ms%s; its next %lld replies go "
                          "without a turn", c->id, c->name, held_ms,
                          why == FASGD_SRV_TURN_CUT_READER ? ", its receive window full (it does not read)" : "",
                          (long long) c->turn_skips);
    }
}

/*  Counts a refusal of c's gradient with the guard, and forgets c when
    the guard's verdict is that it was refused too often.  */
static void
s_guard_refused (fasgd_server_t *self, fasgd_srv_client_t *c)
{
    if (fasgd_srv_guard_refused (self->guard, c) == FASGD_SRV_GUARD_FORGET)
        fasgd_srv_registry_free (self->registry, c);
}

/*  θ_used of a push computed at timestamp j (a repeat: the client's
    current copy) for the rules that need it, NULL for the others; -1
    when this server no longer holds it.  */
static int
s_used (fasgd_server_t *self, fasgd_srv_client_t *c, uint64_t j, int repeat, const float **used)
{
    *used = NULL;
    if (!self->needs_used)
        return 0;
    if (!c->snap || (!repeat && c->snap->ts != j))
        return -1;
    *used = c->snap->theta;
    return 0;
}

void
fasgd_srv_set_back (fasgd_server_t *self, const float *back)
{
    if (fasgd_srv_params_restore (self->params, back) == 0) {
        fasgd_srv_params_advance (self->params);
        fasgd_staleness_advance (self->staleness, self->params->T, 1);
        self->st.loss_rollbacks++;
    }
}

/*  Runs the guard on *gp from c, computed at timestamp j (guard.c); on
    a refusal replies 422 with the reason and returns -1, after which c
    may have been forgotten. A push the guard gives weight 0 is
    acknowledged as taken and not applied (1 is returned). The guard's
    pass over g is the rule's too where it can be (params.c's stage):
    *staged is then 1, and s_apply commits what it wrote aside instead
    of reading g again; a push refused, ignored or clipped drops it.  */
static int
s_guard (fasgd_server_t *self, const fasgd_srv_request_t *r, fasgd_srv_client_t *c, const float **gp, int repeat,
         uint64_t j, double *norm, int *staged)
{
    char why [FASGD_PROTO_TEXT_MAX + 1];
    double weight;
    const float *g = *gp, *used;
    /*  The guard judges g at its count of updates; the rule divides by
        the staleness clock's (staleness.h).  */
    uint64_t tau = self->params->T - j, rule_tau = fasgd_staleness_tau (self->staleness, self->params->T, j);
    fasgd_srv_guard_target_t t;
    fasgd_srv_guard_target (self->guard, c, repeat, tau, &t);
    /*  A jump of the held-out loss that the reference just computed found
        sets θ back after the verdict, as ever; the update is then made
        from there, in two passes.  */
    const float *back = fasgd_srv_guard_rollback (self->guard);
    double sums [2];
    *staged = t.read && !back && s_used (self, c, j, repeat, &used) == 0
              && fasgd_srv_params_stage (self->params, g, rule_tau, used, t.r, t.spans, t.nspans, sums) >= 0;
    int status = fasgd_srv_guard_judge (self->guard, c, &t, *staged ? sums : NULL, gp, repeat, tau, &weight, norm,
                                        why, sizeof why);
    /*  A clipped push (scaled into the guard's scratch, which may be
        where g was decoded: the pointer need not change) is applied at
        a norm below its own.  */
    if (*staged && (status != 0 || weight == 0 || *gp != g || *norm != sqrt (sums [0]))) {
        fasgd_srv_params_drop (self->params);
        *staged = 0;
    }
    if (back)
        fasgd_srv_set_back (self, back);
    if (status == 0 && weight == 0) {
        c->refused_in_row = 0;
        if (r->req->flags & FASGD_PROTO_FLAG_THEN_FETCH)
            s_reply_params (self, r, c, FASGD_STATUS_OK);
        else
            fasgd_srv_reply_ack (r, FASGD_STATUS_OK);
        return 1;
    }
    if (status == 0)
        return 0;
    self->st.nonfinite++;
    fasgd_srv_reply_error (r, status, "%s", why);
    s_guard_refused (self, c);
    return -1;
}

/*  An applied gradient's staleness, in the counters and the histogram.  */
static void
s_count_tau (fasgd_server_t *self, fasgd_srv_client_t *c, uint64_t tau, uint64_t rule_tau)
{
    c->last_tau = tau;
    self->st.tau_sum += (double) tau;
    self->st.rule_tau_sum += (double) rule_tau;
    self->st.tau_count++;
    if (tau > self->st.tau_max)
        self->st.tau_max = tau;
    fasgd_srv_eval_note_tau (self->eval, tau);
    self->st.tau_hist [s_tau_bucket (tau)]++;
}

/*  Applies g of norm `norm` from client c computed at timestamp j;
    replies. Returns 0 when the rule took it, -1 when it was refused. A
    repeat (resend-last) re-applies the cached gradient: for the rules
    that need θ_used, that is the client's current copy, as in the
    simulator (ALGORITHMS.md, "Notes from the implementation"). staged:
    the guard's pass wrote the update aside (s_guard), to be committed.  */
static int
s_apply (fasgd_server_t *self, const fasgd_srv_request_t *r, fasgd_srv_client_t *c, const float *g, uint64_t j,
         int repeat, double norm, int staged)
{
    fasgd_srv_params_t *p = self->params;
    const float *used;
    if (s_used (self, c, j, repeat, &used) != 0) {
        self->st.conflict++;
        fasgd_srv_reply_error (r, FASGD_STATUS_CONFLICT,
                               "rule %s needs the parameters of timestamp %llu, which this server no longer holds",
                               fasgd_rule_kind_name (self->cfg.rule.name), (unsigned long long) j);
        return -1;
    }
    uint64_t tau = p->T - j, rule_tau = fasgd_staleness_tau (self->staleness, p->T, j);
    int rc = staged ? fasgd_srv_params_commit (p) : fasgd_srv_params_update (p, g, rule_tau, used);
    if (rc == -2) {
        fasgd_srv_reply_error (r, FASGD_STATUS_UNAVAILABLE, "out of memory");
        return -1;
    }
    if (rc < 0) {
        self->st.nonfinite++;
        fasgd_srv_reply_error (r, FASGD_STATUS_NONFINITE, rc == -3
                               ? "the update would make the parameters NaN or Inf" : "the gradient holds NaN or Inf");
        s_guard_refused (self, c);
        return -1;
    }
    fasgd_srv_guard_accepted (self->guard, c, g, j, norm, repeat);
    s_count_tau (self, c, tau, rule_tau);
    if (rc == 1) {
        fasgd_srv_params_advance (p);
        fasgd_staleness_advance (self->staleness, p->T,
                                 fasgd_staleness_count (norm, fasgd_srv_guard_honest_norm (self->guard)));
        if (p->T % (uint64_t) self->cfg.eval_every == 0)
            fasgd_srv_eval_maybe (self->eval);
        fasgd_srv_checkpoint_updated (self->checkpoint);
    }
    else
        self->st.buffered++;
    int status = rc == 1 ? FASGD_STATUS_OK : FASGD_STATUS_BUFFERED;
    if (r->req->flags & FASGD_PROTO_FLAG_THEN_FETCH)
        s_reply_params (self, r, c, status);
    else
        fasgd_srv_reply_ack (r, status);
    return 0;
}

static void
s_on_push (fasgd_server_t *self, const fasgd_srv_request_t *r, fasgd_srv_client_t *c, zmq_msg_t *body)
{
    const fasgd_header_t *req = r->req;
    const size_t n = self->params->n;
    if (req->timestamp > self->params->T) {
        self->st.conflict++;
        fasgd_srv_reply_error (r, FASGD_STATUS_CONFLICT, "timestamp %llu is from the future (the server is at %llu)",
                               (unsigned long long) req->timestamp, (unsigned long long) self->params->T);
        return;
    }
    const void *data = zmq_msg_data (body);
    /*  On a little-endian host an aligned float32 body is used in place.  */
    const float *g;
#if FASGD_HOST_IS_LE
    if (self->cfg.wire_push == FASGD_WIRE_F32 && ((uintptr_t) data & (sizeof (float) - 1)) == 0)
        g = data;
    else
#endif
    {
        fasgd_proto_wire_decode (self->cfg.wire_push, data, n, self->grad);
        g = self->grad;
    }
    /*  NaN, Inf, too large a norm: refused before anything is touched.  */
    double norm;
    int staged;
    if (s_guard (self, r, c, &g, 0, req->timestamp, &norm, &staged) != 0)
        return;
    if (self->cache_last && fasgd_srv_registry_cache (self->registry, c) != 0) {
        fasgd_srv_params_drop (self->params);
        fasgd_srv_reply_error (r, FASGD_STATUS_UNAVAILABLE, "out of memory");
        return;
    }
    if (s_apply (self, r, c, g, req->timestamp, 0, norm, staged) != 0)
        return;
    c->pushes++;
    c->has_pushed = 1;
    self->st.pushes++;
    /*  Only an accepted gradient is worth repeating, as it was applied.  */
    if (self->cache_last) {
        memcpy (c->last, g, n * sizeof (float));
        c->last_ts = req->timestamp;
        c->last_norm = norm;
        c->has_last = 1;
    }
}

static void
s_on_repeat (fasgd_server_t *self, const fasgd_srv_request_t *r, fasgd_srv_client_t *c)
{
    if (!c->has_last) {
        self->st.conflict++;
        fasgd_srv_reply_error (r, FASGD_STATUS_CONFLICT, "no gradient cached: push one first%s",
                               self->cache_last ? "" : " (the push gate is always: nothing is cached)");
        return;
    }
    const float *g = c->last;
    double norm;
    int staged;
    if (s_guard (self, r, c, &g, 1, c->last_ts, &norm, &staged) != 0)
        return;
    c->repeats++;
    self->st.repeats++;
    s_apply (self, r, c, g, c->last_ts, 1, norm, staged);
}

static void
s_on_fetch (fasgd_server_t *self, const fasgd_srv_request_t *r, fasgd_srv_client_t *c)
{
    if ((r->req->flags & FASGD_PROTO_FLAG_IF_NEWER) && r->req->timestamp == self->params->T) {
        fasgd_header_t h = fasgd_srv_reply_header (r, FASGD_MSG_PARAMS, FASGD_STATUS_NOT_MODIFIED);
        self->st.not_modified++;
        c->not_modified++;
        fasgd_srv_reply (r, &h, NULL, 0, NULL);
        return;
    }
    s_reply_params (self, r, c, FASGD_STATUS_OK);
}

/*  JOIN: with CURVE the handshake let the key in, and a key revoked since
    keeps its connection but cannot join on it; the registry registers
    the client or says why not, and the WELCOME carries its session.  */
static void
s_on_join (fasgd_server_t *self, const fasgd_srv_request_t *r, const char *body, size_t len, const char *key,
           int fd)
{
    const char *key_name = fasgd_srv_security_allowed (self->security, key);
    if (fasgd_srv_security_curve (self->security) && !key_name) {
        self->st.forbidden++;
        fasgd_srv_reply_error (r, FASGD_STATUS_FORBIDDEN, "CURVE key %s is no longer allowed", key ? key : "(none)");
        return;
    }
    char why [FASGD_PROTO_TEXT_MAX + 1];
    fasgd_srv_client_t *c = fasgd_srv_registry_join (self->registry, body, len, key, key_name,
                                                     fasgd_srv_security_trusted (self->security, key), why,
                                                     sizeof why);
    if (!c) {
        fasgd_srv_reply_error (r, FASGD_STATUS_UNAVAILABLE, "%s", why);
        return;
    }
    fasgd_srv_greeting_source (fd, c->addr);
    fasgd_header_t h = fasgd_srv_reply_header (r, FASGD_MSG_WELCOME, FASGD_STATUS_OK);
    h.client_id = c->id;
    fasgd_proto_desc_t d = self->desc;
    d.session = c->session;
    char text [FASGD_PROTO_DESC_MAX];
    int n = fasgd_proto_desc_encode (&d, text, sizeof text);   /* it fits: fasgd_server_new checked */
    fasgd_srv_reply (r, &h, text, (size_t) (n > 0 ? n : 0), NULL);
}

/*  The request in parts, checked: its frames, its header, its body's size
    and its socket. Returns 0 with *req decoded, or -1 after refusing it.  */
static int
s_check_request (fasgd_server_t *self, fasgd_srv_request_t *r, zmq_msg_t parts [3], int nparts, int extra,
                 fasgd_header_t *req, int is_fetch)
{
    if (nparts < 2 || extra) {
        self->st.malformed++;
        if (nparts >= 1)
            fasgd_srv_reply_error (r, FASGD_STATUS_MALFORMED, "a message is a header frame and at most one body frame");
        return -1;
    }
    int rc = fasgd_proto_header_decode (zmq_msg_data (&parts [1]), zmq_msg_size (&parts [1]), req);
    if (rc == FASGD_PROTO_VERSION_MISMATCH) {
        self->st.version++;
        r->req = req;
        fasgd_srv_reply_error (r, FASGD_STATUS_VERSION, "this server speaks protocol version %u", FASGD_PROTO_VERSION);
        return -1;
    }
    size_t body_len = nparts == 3 ? zmq_msg_size (&parts [2]) : 0;
    if (rc == FASGD_PROTO_OK)
        r->req = req;
    if (rc != FASGD_PROTO_OK
        || fasgd_proto_body_check_wire (req, body_len, self->params->n, self->cfg.wire_push, self->cfg.wire_params)
           != FASGD_PROTO_OK) {
        self->st.malformed++;
        fasgd_srv_reply_error (r, FASGD_STATUS_MALFORMED, "malformed %s (%zu-byte header, %zu-byte body)",
                               rc == FASGD_PROTO_OK ? fasgd_proto_type_name (req->type) : "message",
                               zmq_msg_size (&parts [1]), body_len);
        return -1;
    }
    int fetch_type = req->type == FASGD_MSG_FETCH;
    if (fetch_type != is_fetch) {
        self->st.malformed++;
        fasgd_srv_reply_error (r, FASGD_STATUS_MALFORMED, "%s belongs on the %s socket",
                               fasgd_proto_type_name (req->type), fetch_type ? "fetch" : "push");
        return -1;
    }
    return 0;
}

/*  The client a request names, when it is the one that joined with that
    id: its session token, and with CURVE its key. Anything else gets the
    same answer as an id never seen, and changes nothing. NULL after
    refusing the request.  */
/*  Whether client id of this session was among the last that left.  */
static int
s_left (const fasgd_server_t *self, uint32_t id, uint64_t session)
{
    for (int i = 0; i < FASGD_SRV_LEFT_KEPT; i++)
        if (self->left [i].id == id && self->left [i].session == session && session != 0)
            return 1;
    return 0;
}

static fasgd_srv_client_t *
s_client (fasgd_server_t *self, const fasgd_srv_request_t *r, const char *key)
{
    const fasgd_header_t *req = r->req;
    /*  A key revoked since its handshake: told so, not taken for an
        unknown id that would only make its client join again.  */
    if (fasgd_srv_security_curve (self->security) && !fasgd_srv_security_allowed (self->security, key)) {
        self->st.forbidden++;
        fasgd_srv_reply_error (r, FASGD_STATUS_FORBIDDEN, "CURVE key %s is no longer allowed", key ? key : "(none)");
        return NULL;
    }
    /*  One reason on the wire for the three cases, so that a peer cannot
        tell a live id from one never given out; the log says which.  */
    fasgd_srv_client_t *c = fasgd_srv_registry_lookup (self->registry, req->client_id);
    const char *why = !c ? NULL
                    : req->session != c->session ? "another session"
                    : fasgd_srv_security_curve (self->security) && (!key || strcmp (key, c->key) != 0)
                      ? "another CURVE key" : NULL;
    if (!c || why) {
        if (why) {
            self->st.forbidden++;
            fasgd_log_info ("client %u named with %s than its JOIN's: refused as unknown", req->client_id, why);
        }
        else if (req->type == FASGD_MSG_HEARTBEAT && s_left (self, req->client_id, req->session))
            self->st.late_heartbeats++;
        else
            self->st.unknown++;
        fasgd_srv_reply_error (r, FASGD_STATUS_UNKNOWN_CLIENT, "unknown client %u: join first", req->client_id);
        return NULL;
    }
    if (self->stopping) {
        fasgd_srv_reply_error (r, FASGD_STATUS_UNAVAILABLE, "shutting down");
        return NULL;
    }
    return c;
}

/*  A checked request from client c to its handler.  */
static void
s_route (fasgd_server_t *self, const fasgd_srv_request_t *r, fasgd_srv_client_t *c, zmq_msg_t *body,
         size_t body_len)
{
    c->last_seen_ms = fasgd_srv_now_ms ();
    switch (r->req->type) {
        case FASGD_MSG_PUSH:
            s_on_push (self, r, c, body);
            break;
        case FASGD_MSG_PUSH_REPEAT:
            s_on_repeat (self, r, c);
            break;
        case FASGD_MSG_FETCH:
            s_on_fetch (self, r, c);
            break;
        case FASGD_MSG_HEARTBEAT:
            self->st.heartbeats++;
            fasgd_srv_reply_ack (r, FASGD_STATUS_OK);
            break;
        case FASGD_MSG_LEAVE:
            fasgd_log_notice ("client %u (%s) left after %llu pushes; %zu connected", c->id, c->name,
                              (unsigned long long) c->pushes, fasgd_srv_registry_live (self->registry) - 1);
            self->st.leaves++;
            self->left [self->left_next].id = c->id;
            self->left [self->left_next].session = c->session;
            self->left_next = (self->left_next + 1) % FASGD_SRV_LEFT_KEPT;
            fasgd_srv_reply_ack (r, FASGD_STATUS_OK);
            fasgd_srv_registry_free (self->registry, c);
            break;
        case FASGD_MSG_EVAL: {
            char why [128];
            if (fasgd_srv_eval_report (self->eval, c, body_len ? zmq_msg_data (body) : "", body_len, why,
                                       sizeof why)) {
                self->st.malformed++;
                fasgd_srv_reply_error (r, FASGD_STATUS_MALFORMED, "EVAL refused: %s", why);
                break;
            }
            self->st.evals++;
            fasgd_srv_reply_ack (r, FASGD_STATUS_OK);
            break;
        }
        default:
            self->st.malformed++;
            fasgd_srv_reply_error (r, FASGD_STATUS_MALFORMED, "%s is a reply, not a request",
                                   fasgd_proto_type_name (r->req->type));
            break;
    }
}

int
fasgd_srv_dispatch (fasgd_server_t *self, void *sock, int is_fetch)
{
    zmq_msg_t parts [3];
    int nparts, extra;
    size_t total;
    if (fasgd_srv_recv_parts (sock, parts, &nparts, &extra, &total) != 0)
        return -1;
    self->st.bytes_in += total;
    fasgd_header_t req;
    memset (&req, 0, sizeof req);
    fasgd_srv_request_t r = { sock, &parts [0], NULL, self->params, &self->st,
                              nparts >= 2 ? fasgd_srv_recv_fd (&parts [1]) : -1, NULL };
    /*  A well-formed request: its connection is no longer greeting. One
        from a connection turned away at its accept, or gone before the
        accept was read, is dropped unanswered (connections.h).  */
    if (s_check_request (self, &r, parts, nparts, extra, &req, is_fetch) == 0
        && (nparts < 2
            || fasgd_srv_conn_heard (self->conns, r.fd, zmq_msg_data (&parts [0]), zmq_msg_size (&parts [0])) == 0)) {
        size_t body_len = nparts == 3 ? zmq_msg_size (&parts [2]) : 0;
        const char *key = fasgd_srv_security_key (self->security, &parts [1]);
        fasgd_srv_client_t *c;
        if (req.type == FASGD_MSG_JOIN)
            s_on_join (self, &r, body_len ? zmq_msg_data (&parts [2]) : "", body_len, key, r.fd);
        else if ((c = s_client (self, &r, key)))
            s_route (self, &r, c, &parts [2], body_len);
    }
    for (int i = 0; i < nparts; i++)
        zmq_msg_close (&parts [i]);
    return 0;
}
