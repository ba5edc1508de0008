/*  server: the fasgd-server engine's life cycle (see server.h, and
    internal.h for how its files divide the work).

    One thread owns θ, the rule and the registry, and serves both ROUTER
    data sockets from a poll loop: updates are applied atomically, one at
    a time, in arrival order (the paper's async protocol). A second
    thread evaluates snapshots on the validation set. A third ROUTER
    socket, the control socket, is served from the same loop.  */
#include "internal.h"

#include "floats.h"
#include "log.h"
#include "publish.h"
#include "rng.h"
#include "shardmap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_STREAM_INIT 2                 /* the simulator's: same seed, same θ0 */
/*  An external model's size: the MLP's limit, so that a gradient message
    of 4·D bytes and every copy of θ stay within 1 GiB.  */
#define S_EXTERNAL_MAX_PARAMS ((uint64_t) FASGD_MODEL_MAX_PARAMS)
/*  Copies of θ's size the server holds at most: θ, a second snapshot
    while a fetch holds the first, the gradient, and up to three vectors
    of the rule's statistics.  */
#define S_THETA_COPIES 6
#define S_BATCH_PER_WAKE 256            /* messages handled per poll wake-up */
#define S_CONTROL_MAXMSG 4096           /* a control request is one short word */
#define S_CONTROL_PER_WAKE 8            /* control requests handled per poll wake-up */
#define S_CONTROL_HWM 16                /* control messages queued per peer and direction */

int
fasgd_server_cfg_validate (const fasgd_server_cfg_t *cfg, const char *name, FILE *errs)
{
    char err [512];
    fasgd_metrics_endpoint_t ep;
    if (*cfg->metrics_endpoint && fasgd_metrics_endpoint_parse (cfg->metrics_endpoint, &ep, err, sizeof err) != 0) {
        fprintf (errs, "%s: error: metrics.endpoint: %s\n", name, err);
        return 1;
    }
    if (*cfg->metrics_endpoint && !fasgd_metrics_available ()) {
        fprintf (errs, "%s: error: metrics.endpoint: this fasgd-server was built without libmicrohttpd "
                 "(configure --without-microhttpd): it cannot serve metrics\n", name);
        return 1;
    }
    return 0;
}

static void
s_status (fasgd_server_t *self, int64_t now)
{
    double secs = (double) (now - self->last_status_ms) / 1000.0;
    if (secs <= 0)
        return;
    double error, nll;
    uint64_t eval_T;
    int64_t eval_ms;
    fasgd_srv_eval_result (self->eval, &error, &nll, &eval_T, &eval_ms);
    const fasgd_srv_stats_t *a = &self->st, *b = &self->st_last;
    uint64_t taus = a->tau_count - b->tau_count;
    fasgd_log_notice ("T=%llu clients=%zu push/s=%.1f repeat/s=%.1f fetch/s=%.1f 304/s=%.1f "
                      "in=%.2f MB/s out=%.2f MB/s mean-tau=%.2f vbar=%.4g val-error=%.4f",
                      (unsigned long long) self->params->T, fasgd_srv_registry_live (self->registry),
                      (double) (a->pushes - b->pushes) / secs,
                      (double) (a->repeats - b->repeats) / secs,
                      (double) (a->fetches - b->fetches) / secs,
                      (double) (a->not_modified - b->not_modified) / secs,
                      (double) (a->bytes_in - b->bytes_in) / secs / 1e6,
                      (double) (a->bytes_out - b->bytes_out) / secs / 1e6,
                      taus ? (a->tau_sum - b->tau_sum) / (double) taus : 0.0,
                      fasgd_rule_vbar (self->params->rule), error);
    self->st_last = self->st;
    self->last_status_ms = now;
}

void
fasgd_server_desc_gates (const fasgd_gates_cfg_t *g, fasgd_proto_desc_t *d)
{
    snprintf (d->fetch_gate, sizeof d->fetch_gate, "%s", fasgd_gate_kind_name (g->fetch.kind));
    snprintf (d->push_gate, sizeof d->push_gate, "%s", fasgd_gate_kind_name (g->push.kind));
    snprintf (d->push_skip, sizeof d->push_skip, "%s", fasgd_push_skip_names [g->push_skip]);
    d->fetch_every = g->fetch.every;
    d->push_every = g->push.every;
    d->fetch_c = g->fetch.c;
    d->push_c = g->push.c;
    d->gate_eps = g->eps;
}

static int
s_build_desc (fasgd_server_t *self)
{
    fasgd_proto_desc_t d;
    memset (&d, 0, sizeof d);
    d.protocol = FASGD_PROTO_VERSION;
    d.params = self->params->total;
    d.shard = (uint32_t) self->cfg.shard_index;
    d.shards = (uint32_t) self->cfg.shard_count;
    d.offset = self->params->offset;
    d.length = self->params->n;
    if (!self->model) {
        d.ntensors = self->ext_ntensors;
        memcpy (d.tensors, self->ext_tensors, sizeof d.tensors);
        snprintf (d.model, sizeof d.model, "external");
    }
    else
        d.ntensors = fasgd_model_ntensors (self->model);
    for (int i = 0; self->model && i < d.ntensors && i < FASGD_PROTO_MAX_TENSORS; i++) {
        const fasgd_tensor_t *t = fasgd_model_tensor (self->model, i);
        snprintf (d.tensors [i].name, sizeof d.tensors [i].name, "%s", t->name);
        d.tensors [i].ndim = 2;
        d.tensors [i].dims [0] = (uint32_t) t->rows;
        d.tensors [i].dims [1] = (uint32_t) t->cols;
    }
    if (self->model) {
        snprintf (d.model, sizeof d.model, "mlp");
        size_t used = 0;
        for (int i = 0; i < self->cfg.model.sizes.n; i++)
            used += (size_t) snprintf (d.model_sizes + used, sizeof d.model_sizes - used, "%s%d",
                                       i ? "," : "", self->cfg.model.sizes.v [i]);
        snprintf (d.model_activation, sizeof d.model_activation, "%s",
                  fasgd_model_activation_names [self->cfg.model.activation]);
    }
    snprintf (d.rule, sizeof d.rule, "%s", fasgd_rule_kind_name (self->cfg.rule.name));
    d.lr = self->cfg.rule.lr;
    fasgd_server_desc_gates (&self->cfg.gates, &d);
    d.heartbeat_ms = (uint32_t) self->cfg.heartbeat_ms;
    d.expiry_ms = (uint32_t) self->cfg.expiry_ms;
    snprintf (d.wire_push, sizeof d.wire_push, "%s", fasgd_proto_wire_name (self->cfg.wire_push));
    snprintf (d.wire_params, sizeof d.wire_params, "%s", fasgd_proto_wire_name (self->cfg.wire_params));
    self->desc = d;
    /*  Every WELCOME is this with a session: the longest must fit.  */
    d.session = UINT64_MAX;
    char text [FASGD_PROTO_DESC_MAX];
    return fasgd_proto_desc_encode (&d, text, sizeof text) < 0 ? -1 : 0;
}

/*  Which part of θ's total values this server holds (shardmap.h): *offset
    and *n, from the model's tensors and shard.index of shard.count.  */
static int
s_shard (fasgd_server_t *self, size_t total, size_t *offset, size_t *n, char *err, size_t errlen)
{
    const fasgd_server_cfg_t *cfg = &self->cfg;
    *offset = 0;
    *n = total;
    if (cfg->shard_count <= 1 && cfg->shard_index == 0)
        return 0;
    uint64_t sizes [FASGD_PROTO_MAX_TENSORS];
    int nt = self->ext_ntensors;
    if (self->model)
        nt = fasgd_model_tensor_sizes (self->model, sizes, FASGD_PROTO_MAX_TENSORS);
    else
        for (int i = 0; i < nt; i++)
            sizes [i] = fasgd_proto_tensor_size (&self->ext_tensors [i]);
    uint64_t off, len;
    if (fasgd_shardmap_part (sizes, nt, (uint32_t) cfg->shard_count, (uint32_t) cfg->shard_index, &off, &len,
                             err, errlen) != 0)
        return -1;
    *offset = (size_t) off;
    *n = (size_t) len;
    return 0;
}

/*  θ at T = 0, or this shard's part of it: the model's initialisation
    from the seed (the same θ on every shard, as in the simulator), the
    external model's file, or zeros.  */
static int
s_theta_init (fasgd_server_t *self)
{
    const fasgd_server_cfg_t *cfg = &self->cfg;
    const fasgd_srv_params_t *p = self->params;
    char err [256];
    if (!self->model && !*cfg->external_init) {
        memset (p->theta, 0, p->n * sizeof (float));
        return 0;
    }
    float *all = p->n == p->total ? p->theta : malloc (p->total * sizeof (float));
    if (!all) {
        fasgd_log_error ("out of memory for the %zu initial parameters", p->total);
        return -1;
    }
    int rc = 0;
    if (self->model) {
        fasgd_rng_t rng;
        fasgd_rng_seed (&rng, cfg->seed, S_STREAM_INIT);
        fasgd_model_init_params (self->model, all, &rng);
    }
    else
    if (fasgd_floats_load (cfg->external_init, all, p->total, err, sizeof err) != 0) {
        fasgd_log_error ("external.init: %s", err);
        rc = -1;
    }
    if (all != p->theta) {
        memcpy (p->theta, all + p->offset, p->n * sizeof (float));
        free (all);
    }
    return rc;
}

/*  A ROUTER socket bound to endpoint (CURVE-secured when configured),
    its bound endpoint in bound; NULL after logging the cause.  */
static zsock_t *
s_bind (fasgd_server_t *self, const char *what, const char *endpoint, size_t maxmsg, char *bound, size_t len)
{
    zsock_t *sock = zsock_new (ZMQ_ROUTER);
    if (!sock)
        return NULL;
    fasgd_srv_security_apply (self->security, sock);
    zsock_set_maxmsgsize (sock, (int) maxmsg);
    zsock_set_linger (sock, 0);
    /*  A connection not through its handshake by then is closed by
        libzmq; one through it but silent, by connections.c (which says
        why).  */
    zsock_set_handshake_ivl (sock, self->cfg.greeting_ms);
    /*  Per peer and direction: a peer that sends without reading gets its
        replies dropped, and its requests wait in TCP, past a few
        messages, not the server's memory (about 16 MiB a peer each way,
        at least 8 messages).  */
    int hwm = (int) (((size_t) 16 << 20) / (self->params->n * sizeof (float) + 64));
    hwm = hwm < 8 ? 8 : hwm > 1000 ? 1000 : hwm;
    zsock_set_sndhwm (sock, hwm);
    zsock_set_rcvhwm (sock, hwm);
    /*  A reply that cannot be queued fails its send (rather than ZeroMQ
        dropping it unseen), so that the server counts it: STATUS's
        replies_dropped.  */
    zsock_set_router_mandatory (sock, 1);
    if (zsock_bind (sock, "%s", endpoint) < 0) {
        fasgd_log_error ("cannot bind %s: %s", endpoint, zmq_strerror (zmq_errno ()));
        zsock_destroy (&sock);
        return NULL;
    }
    /*  czmq resolves tcp://HOST:* (and !) to the port bound, but keeps
        :0 as given, though libzmq binds an ephemeral port for it too:
        then the socket's last endpoint names the port.  */
    const char *ep = zsock_endpoint (sock);
    size_t eplen = ep ? strlen (ep) : 0;
    char *last = eplen > 2 && strcmp (ep + eplen - 2, ":0") == 0 ? zsock_last_endpoint (sock) : NULL;
    snprintf (bound, len, "%s", last ? last : ep ? ep : endpoint);
    zstr_free (&last);
    fasgd_srv_security_warn_plain (self->security, bound);
    if (fasgd_srv_conn_watch (self->conns, sock, what) != 0) {
        fasgd_log_error ("cannot watch the %s socket's connections: %s", what, zmq_strerror (zmq_errno ()));
        zsock_destroy (&sock);
        return NULL;
    }
    return sock;
}

/*  The model: the MLP of model.*, or an external model's tensors; its
    size in *total.  */
static int
s_model (fasgd_server_t *self, size_t *total)
{
    const fasgd_server_cfg_t *cfg = &self->cfg;
    char err [256];
    if (*cfg->external_tensors) {
        uint64_t params;
        if (fasgd_proto_tensors_parse (cfg->external_tensors, "external.tensors", self->ext_tensors,
                                       &self->ext_ntensors, &params, err, sizeof err) != 0) {
            fasgd_log_error ("%s", err);
            return -1;
        }
        if (params > S_EXTERNAL_MAX_PARAMS) {
            fasgd_log_error ("external.tensors: %" PRIu64 " parameters, more than the limit of %llu",
                             params, (unsigned long long) S_EXTERNAL_MAX_PARAMS);
            return -1;
        }
        *total = (size_t) params;
        return 0;
    }
    fasgd_model_spec_t spec;
    fasgd_model_cfg_to_spec (&cfg->model, &spec);
    if (!(self->model = fasgd_model_new (&spec, err, sizeof err))) {
        fasgd_log_error ("model.sizes: %s", err);
        return -1;
    }
    *total = fasgd_model_nparams (self->model);
    return 0;
}

/*  Before anything of θ's size is allocated: a model that fits the limit
    may still not fit this machine.  */
static int
s_fits_memory (fasgd_server_t *self, size_t n)
{
    long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
    uint64_t need = (uint64_t) n * sizeof (float) * S_THETA_COPIES;
    if (pages > 0 && page > 0 && need > (uint64_t) pages * (uint64_t) page) {
        fasgd_log_error ("%s: %zu parameters need about %llu MiB (theta, its snapshots, the gradient "
                         "and the rule's statistics), more than this machine's %llu MiB of memory",
                         self->model ? "model.sizes" : "external.tensors", n,
                         (unsigned long long) (need >> 20),
                         (unsigned long long) (((uint64_t) pages * (uint64_t) page) >> 20));
        return -1;
    }
    return 0;
}

/*  θ of n values (part offset of total), the rule and the receive
    buffer.  */
static int
s_params (fasgd_server_t *self, size_t n, size_t total, size_t offset)
{
    const fasgd_server_cfg_t *cfg = &self->cfg;
    char err [256];
    fasgd_rule_params_t rp;
    fasgd_rule_cfg_to_params (&cfg->rule, cfg->clients, &rp);
    fasgd_rule_t *rule = fasgd_rule_new (&rp, n, err, sizeof err);
    if (!rule) {
        fasgd_log_error ("rule: %s", err);
        return -1;
    }
    /*  guard.c checks every gradient before the rule sees it (unless
        guard.enabled is false: the rule's own pass then refuses NaN).  */
    if (cfg->guard_enabled)
        fasgd_rule_gradients_checked (rule);
    self->needs_used = fasgd_rule_needs_theta_used (rule);
    self->cache_last = cfg->gates.push.kind != FASGD_GATE_ALWAYS
                       && cfg->gates.push_skip == FASGD_PUSH_SKIP_RESEND_LAST;
    self->params = fasgd_srv_params_new (&rule, n, total, offset, cfg->wire_params,
                                         cfg->rule.name == FASGD_RULE_DCASGD);
    self->grad = malloc (n * sizeof (float));
    if (!self->params || !self->grad) {
        fasgd_log_error ("out of memory for %zu parameters", n);
        return -1;
    }
    return 0;
}

/*  The validation set and the test set (NULL if none), when the server
    evaluates θ itself: the MLP's, holding all of θ. Both NULL otherwise.  */
static int
s_validation (fasgd_server_t *self, fasgd_dataset_t **valid_p, fasgd_dataset_t **test_p)
{
    const fasgd_server_cfg_t *cfg = &self->cfg;
    const fasgd_srv_params_t *p = self->params;
    *valid_p = *test_p = NULL;
    if (!self->model && cfg->validate)
        fasgd_log_info ("external model: the server does not evaluate; clients report "
                        "validation results with EVAL");
    else
    if (p->n != p->total && cfg->validate)
        fasgd_log_info ("shard %d of %d: the server holds part of the parameters and does not "
                        "evaluate; clients report validation results with EVAL",
                        cfg->shard_index, cfg->shard_count);
    if (!self->model || !cfg->validate || p->n != p->total)
        return 0;
    fasgd_dataset_t *train = NULL;
    if (fasgd_data_cfg_load (&cfg->data, &cfg->model, cfg->seed, &train, valid_p) != 0)
        return -1;
    fasgd_dataset_destroy (&train);
    if (fasgd_data_cfg_load_test (&cfg->data, &cfg->model, valid_p, test_p) != 0) {
        fasgd_dataset_destroy (valid_p);
        return -1;
    }
    return 0;
}

/*  θ and what holds and guards it: params, θ0 or a resume, checkpoints,
    the guard, the registry.  */
static int
s_state (fasgd_server_t *self, int resume)
{
    const fasgd_server_cfg_t *cfg = &self->cfg;
    char err [256];
    size_t total, n, offset;
    if (s_model (self, &total) != 0)
        return -1;
    if (s_shard (self, total, &offset, &n, err, sizeof err) != 0) {
        fasgd_log_error ("shard: %s", err);
        return -1;
    }
    if (s_fits_memory (self, n) != 0 || s_params (self, n, total, offset) != 0 || s_theta_init (self) != 0)
        return -1;
    if (!(self->checkpoint = fasgd_srv_checkpoint_new (cfg, self->params, self->model, self->ext_tensors,
                                                       self->ext_ntensors))) {
        fasgd_log_error ("out of memory");
        return -1;
    }
    if (resume && fasgd_srv_checkpoint_resume (self->checkpoint) != 0)
        return -1;
    /*  The guard's bounds start from θ and the rule's state as they are now.  */
    if (!(self->guard = fasgd_srv_guard_new (cfg, self->params, self->grad, &self->st))
        || !(self->registry = fasgd_srv_registry_new (cfg, n, self->cache_last, self->needs_used, self->guard,
                                                      &self->st))) {
        fasgd_log_error ("out of memory");
        return -1;
    }
    fasgd_srv_turns_cfg_t turns = { cfg->turns_queue, cfg->turns_hold_ms, cfg->turns_hold_min_ms,
                                    cfg->turns_hold_factor, cfg->turns_reader_ms, (size_t) cfg->turns_lead_bytes,
                                    cfg->turns_slow_factor, cfg->turns_slow_min_ms };
    if (cfg->turns && !(self->turns = fasgd_srv_turns_new (&turns, &self->st))) {
        fasgd_log_error ("out of memory");
        return -1;
    }
    /*  It takes back what a resumed checkpoint kept of it.  */
    fasgd_srv_checkpoint_guard (self->checkpoint, self->guard);
    /*  The staleness clock starts at θ's timestamp; after a resume, it
        takes back the running sums the checkpoint kept (a file before
        FASGDCK5 has none: the updates before T count one each).  */
    if (!(self->staleness = fasgd_staleness_new (cfg->guard_enabled
                                                 && cfg->guard_staleness == FASGD_STALENESS_MOVEMENT,
                                                 self->params->T))) {
        fasgd_log_error ("out of memory");
        return -1;
    }
    fasgd_srv_checkpoint_staleness (self->checkpoint, self->staleness);
    return 0;
}

/*  The evaluator with its validation set and CSV, and the WELCOME's
    description of the model.  */
static int
s_service (fasgd_server_t *self)
{
    fasgd_dataset_t *valid, *test;
    if (s_validation (self, &valid, &test) != 0)
        return -1;
    /*  The guard's reference gradients come from a part of it.  */
    if (fasgd_srv_guard_reference (self->guard, self->model, valid) != 0) {
        fasgd_dataset_destroy (&valid);
        fasgd_log_error ("out of memory");
        return -1;
    }
    if (s_build_desc (self) != 0) {
        fasgd_dataset_destroy (&valid);
        fasgd_dataset_destroy (&test);
        fasgd_log_error ("the model description does not fit in a message");
        return -1;
    }
    self->eval = fasgd_srv_eval_new (&self->cfg, self->params, self->model, &valid, &test,
                                     &self->st, self->registry);
    return self->eval ? 0 : -1;
}

/*  Before the first socket: ZeroMQ's I/O thread starts with it and
    inherits the pin; the evaluator runs where the loop ran before.  */
static int
s_pin (fasgd_server_t *self)
{
    char err [256];
    if (self->cfg.cpu < 0)
        return 0;
    if (fasgd_affinity_pin (self->cfg.cpu, &self->eval_cpus, err, sizeof err) != 0) {
        fasgd_log_error ("cpu: %s", err);
        return -1;
    }
    zsys_thread_affinity_cpu_add (self->cfg.cpu);
    fasgd_log_info ("pinned to CPU %d", self->cfg.cpu);
    return 0;
}

/*  CURVE, the connection limits, and the three sockets bound.  */
static int
s_sockets (fasgd_server_t *self)
{
    const fasgd_server_cfg_t *cfg = &self->cfg;
    char err [256];
    if (!(self->security = fasgd_srv_security_new (cfg, &self->st, err, sizeof err))) {
        fasgd_log_error ("%s", err);
        return -1;
    }
    if (!(self->conns = fasgd_srv_conn_new (cfg, self->security, &self->st))) {
        fasgd_log_error ("out of memory");
        return -1;
    }
    /*  The largest request is a gradient, or a JOIN name or EVAL text for
        a tiny model.  */
    size_t maxmsg = self->params->n * sizeof (float) + 64;
    if (maxmsg < FASGD_PROTO_HEADER_SIZE + FASGD_PROTO_TEXT_MAX + 64)
        maxmsg = FASGD_PROTO_HEADER_SIZE + FASGD_PROTO_TEXT_MAX + 64;
    if (!(self->push = s_bind (self, "push", cfg->push_endpoint, maxmsg, self->push_ep, sizeof self->push_ep))
        || !(self->fetch = s_bind (self, "fetch", cfg->fetch_endpoint, 4096, self->fetch_ep,
                                   sizeof self->fetch_ep)))
        return -1;
    if (*cfg->control_endpoint) {
        if (!(self->control = s_bind (self, "control", cfg->control_endpoint, S_CONTROL_MAXMSG,
                                      self->control_ep, sizeof self->control_ep)))
            return -1;
        /*  A peer that asks and never reads must not pile up replies:
            each STATUS may be large (a line per client).  */
        zsock_set_sndhwm (self->control, S_CONTROL_HWM);
        zsock_set_rcvhwm (self->control, S_CONTROL_HWM);
    }
    return 0;
}

/*  The metrics endpoint, when metrics.endpoint names one, with its first
    text.  */
static int
s_metrics (fasgd_server_t *self)
{
    if (!*self->cfg.metrics_endpoint)
        return 0;
    fasgd_srv_metrics_src_t src = { &self->cfg, &self->st, self->params, self->registry, self->eval,
                                    self->checkpoint, self->conns, self->guard };
    if (!(self->metrics = fasgd_srv_metrics_new (&src)))
        return -1;
    fasgd_srv_metrics_publish (self->metrics, fasgd_srv_now_ms ());
    return 0;
}

fasgd_server_t *
fasgd_server_new (const fasgd_server_cfg_t *cfg, int resume)
{
    fasgd_server_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = *cfg;
    if (cfg->heartbeat_ms >= cfg->expiry_ms) {
        fasgd_log_error ("heartbeat.interval_ms (%d) must be less than heartbeat.expiry_ms (%d), "
                         "or quiet clients expire between their heartbeats", cfg->heartbeat_ms, cfg->expiry_ms);
        goto fail;
    }
    if (s_state (self, resume) != 0 || s_service (self) != 0 || s_pin (self) != 0 || s_sockets (self) != 0
        || s_metrics (self) != 0)
        goto fail;
    self->started_ms = self->last_status_ms = self->last_expiry_ms = fasgd_srv_now_ms ();
    fasgd_srv_checkpoint_start (self->checkpoint, self->started_ms);
    if (fasgd_srv_eval_start (self->eval, cfg->cpu >= 0 ? &self->eval_cpus : NULL, self->started_ms) != 0)
        goto fail;
    fasgd_srv_control_sample (self, self->started_ms);
    return self;
fail:
    fasgd_server_destroy (&self);
    return NULL;
}

void
fasgd_server_destroy (fasgd_server_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_server_t *self = *self_p;
    /*  First: its thread's scrapes stop before what they describe goes.  */
    fasgd_srv_metrics_destroy (&self->metrics);
    fasgd_srv_eval_destroy (&self->eval);
    fasgd_srv_registry_destroy (&self->registry);
    fasgd_srv_conn_destroy (&self->conns);
    fasgd_srv_security_destroy (&self->security);
    fasgd_srv_turns_destroy (&self->turns);
    /*  Closing the sockets lets ZeroMQ release the snapshots of unsent replies.  */
    zsock_destroy (&self->push);
    zsock_destroy (&self->fetch);
    zsock_destroy (&self->control);
    fasgd_srv_checkpoint_destroy (&self->checkpoint);
    fasgd_srv_guard_destroy (&self->guard);
    fasgd_staleness_destroy (&self->staleness);
    fasgd_srv_params_destroy (&self->params);
    free (self->grad);
    fasgd_model_destroy (&self->model);
    free (self);
    *self_p = NULL;
}

const char *
fasgd_server_push_endpoint (const fasgd_server_t *self)
{
    return self->push_ep;
}

const char *
fasgd_server_fetch_endpoint (const fasgd_server_t *self)
{
    return self->fetch_ep;
}

const char *
fasgd_server_control_endpoint (const fasgd_server_t *self)
{
    return self->control ? self->control_ep : "";
}

const char *
fasgd_server_metrics_endpoint (const fasgd_server_t *self)
{
    return self->metrics ? fasgd_srv_metrics_endpoint (self->metrics) : "";
}

void
fasgd_server_stop (fasgd_server_t *self)
{
    self->stopping = 1;
}

/*  The poll items: both data sockets, then the control socket, the ZAP
    handler and the monitors that there are. Returns how many.  */
static int
s_poll_items (fasgd_server_t *self, zmq_pollitem_t *items)
{
    int nitems = 0;
    items [nitems++] = (zmq_pollitem_t) { zsock_resolve (self->push), 0, ZMQ_POLLIN, 0 };
    items [nitems++] = (zmq_pollitem_t) { zsock_resolve (self->fetch), 0, ZMQ_POLLIN, 0 };
    if (self->control)
        items [nitems++] = (zmq_pollitem_t) { zsock_resolve (self->control), 0, ZMQ_POLLIN, 0 };
    zsock_t *zap = fasgd_srv_security_zap_socket (self->security);
    if (zap)
        items [nitems++] = (zmq_pollitem_t) { zsock_resolve (zap), 0, ZMQ_POLLIN, 0 };
    for (int k = 0; k < fasgd_srv_conn_monitors (self->conns); k++)
        items [nitems++] = (zmq_pollitem_t) { zsock_resolve (fasgd_srv_conn_monitor (self->conns, k)), 0,
                                              ZMQ_POLLIN, 0 };
    return nitems;
}

/*  One wake-up's work: handshakes, connections, fetches, pushes, then
    the clock's chores and a few control requests.  */
static void
s_serve (fasgd_server_t *self, void *push, void *fetch)
{
    /*  Connections, then handshakes: a connection waits for its ZAP reply,
        and one to be turned away is turned away before it is through.  */
    fasgd_srv_conn_events (self->conns);
    for (int k = 0; k < S_BATCH_PER_WAKE && fasgd_srv_security_zap (self->security) == 0; k++)
        ;
    fasgd_srv_conn_tick (self->conns, fasgd_srv_now_ms ());
    /*  Fetches first: they are cheap and unblock clients.  */
    for (int k = 0; k < S_BATCH_PER_WAKE && fasgd_srv_dispatch (self, fetch, 1) == 0; k++)
        ;
    for (int k = 0; k < S_BATCH_PER_WAKE && fasgd_srv_dispatch (self, push, 0) == 0; k++)
        ;
    if (self->turns)
        fasgd_srv_dispatch_turns (self, 0);
    int64_t now = fasgd_srv_now_ms ();
    if (now - self->last_sample_ms >= 1000)
        fasgd_srv_control_sample (self, now);
    /*  Control last and few at a time: training traffic comes first.  */
    for (int k = 0; self->control && k < S_CONTROL_PER_WAKE && fasgd_srv_control_handle (self) == 0; k++)
        ;
    fasgd_srv_control_tick (self, now, 0);
    if (now - self->last_expiry_ms >= 250) {
        fasgd_srv_registry_expire (self->registry, now);
        self->last_expiry_ms = now;
    }
    if (self->cfg.status_seconds > 0 && now - self->last_status_ms >= self->cfg.status_seconds * 1000)
        s_status (self, now);
    fasgd_srv_checkpoint_tick (self->checkpoint, now);
    if (self->metrics)
        fasgd_srv_metrics_tick (self->metrics, now);
}

int
fasgd_server_run (fasgd_server_t *self)
{
    const fasgd_srv_params_t *p = self->params;
    zmq_pollitem_t items [4 + FASGD_SRV_MONITORS];
    int nitems = s_poll_items (self, items);
    if (p->n != p->total)
        fasgd_log_notice ("shard %d of %d: parameters %zu to %zu of %zu", self->cfg.shard_index,
                          self->cfg.shard_count, p->offset, p->offset + p->n - 1, p->total);
    fasgd_log_notice ("serving %zu parameters with %s: push %s, fetch %s, control %s, metrics %s%s%s", p->n,
                      fasgd_rule_kind_name (self->cfg.rule.name), self->push_ep, self->fetch_ep,
                      self->control ? self->control_ep : "off",
                      self->metrics ? fasgd_srv_metrics_endpoint (self->metrics) : "off",
                      fasgd_srv_security_curve (self->security) ? ", CURVE on" : "",
                      self->turns ? ", replies in turn" : "");
    int validates = fasgd_srv_eval_validates (self->eval);
    if (validates)
        fasgd_srv_eval_maybe (self->eval);      /* the starting point */
    while (!self->stopping) {
        /*  Replies waiting for their turn: looked at every millisecond.  */
        int rc = zmq_poll (items, nitems, self->turns && fasgd_srv_turns_waiting (self->turns) ? 1 : 100);
        if (rc < 0 && zmq_errno () != EINTR) {
            fasgd_log_error ("poll: %s", zmq_strerror (zmq_errno ()));
            break;
        }
        s_serve (self, items [0].socket, items [1].socket);
    }
    fasgd_log_notice ("stopping at T=%llu", (unsigned long long) p->T);
    if (self->turns)
        fasgd_srv_dispatch_turns (self, 1);     /* the replies still waiting, at once */
    /*  The pushes applied since the held-out loss was last measured meet
        the check before the final row and checkpoint keep them.  */
    const float *back = fasgd_srv_guard_settle (self->guard);
    if (back)
        fasgd_srv_set_back (self, back);
    fasgd_srv_control_tick (self, fasgd_srv_now_ms (), 1);
    /*  A last validation row for the final parameters, unless it has one
        (T a multiple of eval.every, evaluated as it came), and the final
        error said either way.  */
    if (validates) {
        double error, nll;
        uint64_t eval_T;
        int64_t eval_ms;
        fasgd_srv_eval_wait (self->eval);
        if (!fasgd_srv_eval_result (self->eval, &error, &nll, &eval_T, &eval_ms) || eval_T != p->T) {
            fasgd_srv_eval_maybe (self->eval);
            fasgd_srv_eval_wait (self->eval);
            fasgd_srv_eval_result (self->eval, &error, &nll, &eval_T, &eval_ms);
        }
        fasgd_log_notice ("final validation error %.4f (nll %.4f) at T=%llu", error, nll,
                          (unsigned long long) p->T);
    }
    return fasgd_srv_checkpoint_final (self->checkpoint) == 0 ? 0 : 1;
}
