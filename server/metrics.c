/*  metrics: the server's counters in Prometheus's text exposition
    format (metrics.h). Names follow Prometheus's conventions: counters
    end in _total, durations are in _seconds, sizes in _bytes; a shard's
    every series carries shard and shards labels.  */
#include "metrics.h"

#include "exposition.h"
#include "log.h"
#include "publish.h"
#include "rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct fasgd_srv_metrics_t {
    fasgd_srv_metrics_src_t src;
    fasgd_metrics_pub_t *pub;
    fasgd_metrics_text_t *text;
    double start_time;                  /* the wall clock at start, in seconds */
    int64_t last_ms;                    /* when the text was last published */
};

fasgd_srv_metrics_t *
fasgd_srv_metrics_new (const fasgd_srv_metrics_src_t *src)
{
    char err [512], labels [128] = "", index [16], count [16];
    if (src->cfg->shard_count > 1) {
        snprintf (index, sizeof index, "%d", src->cfg->shard_index);
        snprintf (count, sizeof count, "%d", src->cfg->shard_count);
        fasgd_metrics_labels (labels, sizeof labels, "shard", index, "shards", count, NULL);
    }
    fasgd_srv_metrics_t *self = calloc (1, sizeof *self);
    if (!self || !(self->text = fasgd_metrics_text_new (labels))) {
        fasgd_log_error ("out of memory");
        fasgd_srv_metrics_destroy (&self);
        return NULL;
    }
    self->src = *src;
    if (!(self->pub = fasgd_metrics_pub_new (src->cfg->metrics_endpoint, err, sizeof err))) {
        fasgd_log_error ("metrics.endpoint: %s", err);
        fasgd_srv_metrics_destroy (&self);
        return NULL;
    }
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    self->start_time = (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
    return self;
}

void
fasgd_srv_metrics_destroy (fasgd_srv_metrics_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_metrics_pub_destroy (&(*self_p)->pub);
    fasgd_metrics_text_destroy (&(*self_p)->text);
    free (*self_p);
    *self_p = NULL;
}

const char *
fasgd_srv_metrics_endpoint (const fasgd_srv_metrics_t *self)
{
    return fasgd_metrics_pub_endpoint (self->pub);
}

/*  What the server is: one series of value 1 whose labels say it.  */
static void
s_info (fasgd_srv_metrics_t *self)
{
    const fasgd_server_cfg_t *cfg = self->src.cfg;
    char labels [512];
    fasgd_metrics_text_family (self->text, "fasgd_server_info", "gauge",
                               "the server's version, rule and wire formats (the value is 1)");
    fasgd_metrics_labels (labels, sizeof labels, "version", PACKAGE_VERSION,
                          "rule", fasgd_rule_kind_name (cfg->rule.name),
                          "wire_push", fasgd_proto_wire_name (cfg->wire_push),
                          "wire_params", fasgd_proto_wire_name (cfg->wire_params), NULL);
    fasgd_metrics_text_sample (self->text, "fasgd_server_info", labels, 1);
    fasgd_metrics_text_gauge (self->text, "fasgd_server_start_time_seconds",
                              "when the server started, in seconds since the Unix epoch", self->start_time);
}

/*  Requests: what was served and what was refused, by cause.  */
static void
s_requests (fasgd_srv_metrics_t *self)
{
    const fasgd_srv_stats_t *st = self->src.st;
    fasgd_metrics_text_t *t = self->text;
    fasgd_metrics_text_counter (t, "fasgd_server_pushes_total", "gradients pushed and accepted (PUSH)", st->pushes);
    fasgd_metrics_text_counter (t, "fasgd_server_repeats_total",
                                "pushes that resent the client's last gradient (PUSH_REPEAT)", st->repeats);
    fasgd_metrics_text_counter (t, "fasgd_server_buffered_total",
                                "gradients buffered for a later update (softsync)", st->buffered);
    fasgd_metrics_text_counter (t, "fasgd_server_fetches_total", "parameters sent (FETCH answered with 200)",
                                st->fetches);
    fasgd_metrics_text_counter (t, "fasgd_server_not_modified_total",
                                "fetches answered 304: the client's copy was current", st->not_modified);
    fasgd_metrics_text_counter (t, "fasgd_server_heartbeats_total", "heartbeats received", st->heartbeats);
    fasgd_metrics_text_counter (t, "fasgd_server_evals_total", "validation reports received from clients (EVAL)",
                                st->evals);
    /*  gradient: 422, the guard's (NaN, Inf, too large a norm) or the
        rule's (the update would not be finite).  */
    static const char *const causes [] = { "malformed", "unknown_client", "conflict", "gradient", "version",
                                           "forbidden" };
    const uint64_t counts [] = { st->malformed, st->unknown, st->conflict, st->nonfinite, st->version,
                                 st->forbidden };
    fasgd_metrics_text_family (t, "fasgd_server_refusals_total", "counter",
                               "requests refused, by cause: malformed (400), unknown_client (401), conflict (409), "
                               "gradient (422: not finite, or past the norm bound), version (426), forbidden "
                               "(403); JOINs refused: fasgd_server_clients_refused_total");
    for (size_t k = 0; k < sizeof counts / sizeof counts [0]; k++) {
        char labels [64];
        fasgd_metrics_text_sample_u64 (t, "fasgd_server_refusals_total",
                                       fasgd_metrics_labels (labels, sizeof labels, "cause", causes [k], NULL),
                                       counts [k]);
    }
    fasgd_metrics_text_counter (t, "fasgd_server_clipped_total", "gradients the guard scaled down to its bound",
                                st->clipped);
    fasgd_metrics_text_counter (t, "fasgd_server_guard_ignored_total",
                                "pushes the guard's direction check applied with weight 0", st->ignored);
    fasgd_metrics_text_counter (t, "fasgd_server_guard_weighted_total",
                                "pushes the guard's direction check applied with a weight below 1", st->weighted);
    fasgd_metrics_text_counter (t, "fasgd_server_guard_loss_cut_total",
                                "pushes whose weight the guard's held-out loss check cut", st->loss_cut);
    fasgd_metrics_text_counter (t, "fasgd_server_guard_loss_ignored_total",
                                "pushes the guard's held-out loss check cut to its least share (1/8)", st->loss_ignored);
    fasgd_metrics_text_counter (t, "fasgd_server_guard_loss_rollbacks_total",
                                "times the guard set the parameters back after the held-out loss jumped",
                                st->loss_rollbacks);
    fasgd_metrics_text_counter (t, "fasgd_server_guard_references_total",
                                "reference gradients the guard computed on held-out data, or took from trusted clients' pushes",
                                st->references);
    fasgd_metrics_text_counter (t, "fasgd_server_received_bytes_total", "bytes received on the data sockets",
                                st->bytes_in);
    fasgd_metrics_text_counter (t, "fasgd_server_sent_bytes_total", "bytes sent on the data sockets",
                                st->bytes_out);
    fasgd_metrics_text_counter (t, "fasgd_server_turns_waited_total",
                                "parameter replies that waited for their turn (turns.enabled)", st->turns_waited);
    fasgd_metrics_text_counter (t, "fasgd_server_turns_cut_total",
                                "turns cut after their bound: a client that reads slowly or not at all, or whose "
                                "path is slower than the others'",
                                st->turns_cut);
    fasgd_metrics_text_counter (t, "fasgd_server_turns_slower_total",
                                "turns that found their client's path slower than the others' (its next replies "
                                "go without a turn)", st->turns_slower);
    fasgd_metrics_text_counter (t, "fasgd_server_turns_skipped_total",
                                "parameter replies sent at once without a turn: turns.queue were waiting",
                                st->turns_skipped);
}

/*  Clients and connections.  */
static void
s_clients (fasgd_srv_metrics_t *self)
{
    const fasgd_srv_stats_t *st = self->src.st;
    fasgd_metrics_text_t *t = self->text;
    fasgd_metrics_text_gauge (t, "fasgd_server_clients", "clients joined now",
                              (double) fasgd_srv_registry_live (self->src.registry));
    fasgd_metrics_text_counter (t, "fasgd_server_clients_joined_total", "JOINs accepted", st->joins);
    fasgd_metrics_text_counter (t, "fasgd_server_clients_left_total", "clients that said LEAVE", st->leaves);
    fasgd_metrics_text_counter (t, "fasgd_server_clients_expired_total",
                                "clients silent past heartbeat.expiry_ms, forgotten", st->expired);
    fasgd_metrics_text_counter (t, "fasgd_server_clients_refused_total",
                                "JOINs refused (limits.clients, limits.cache_bytes)", st->refused);
    fasgd_metrics_text_counter (t, "fasgd_server_clients_forgotten_total",
                                "clients forgotten after limits.refusals gradients refused in a row", st->forgotten);
    fasgd_metrics_text_gauge (t, "fasgd_server_connections", "TCP connections open on the three sockets",
                              (double) fasgd_srv_conn_open (self->src.conns));
    fasgd_metrics_text_counter (t, "fasgd_server_connections_shed_total",
                                "connections turned away: past limits.connections, or silent past limits.greeting_*",
                                st->conn_shed);
    fasgd_metrics_text_counter (t, "fasgd_server_accept_failures_total", "accept () failures", st->accept_failed);
    fasgd_metrics_text_counter (t, "fasgd_server_auth_refused_total", "CURVE handshakes refused: key not allowed",
                                st->auth_refused);
    fasgd_metrics_text_counter (t, "fasgd_server_handshakes_failed_total", "CURVE handshakes that failed",
                                st->handshake_failed);
    fasgd_metrics_text_counter (t, "fasgd_server_revoked_total", "clients whose key a RELOAD revoked",
                                st->revoked);
}

/*  θ: T, staleness, the rule's v̄, validation and checkpoints.  */
static void
s_training (fasgd_srv_metrics_t *self, int64_t now)
{
    const fasgd_srv_stats_t *st = self->src.st;
    const fasgd_srv_params_t *p = self->src.params;
    fasgd_metrics_text_t *t = self->text;
    fasgd_metrics_text_gauge (t, "fasgd_server_timestamp", "T: the updates applied to the parameters",
                              (double) p->T);
    fasgd_metrics_text_gauge (t, "fasgd_server_parameters", "parameters this server holds", (double) p->n);
    /*  Bucket 0 holds τ = 0, bucket k ≥ 1 2^(k-1) ≤ τ < 2^k, the last
        τ ≥ 1024: upper bounds 0, 1, 3, 7, ..., 1023, +Inf.  */
    double upper [FASGD_SRV_TAU_BUCKETS];
    for (int k = 0; k < FASGD_SRV_TAU_BUCKETS; k++)
        upper [k] = (double) ((1ull << k) - 1);
    fasgd_metrics_text_histogram (t, "fasgd_server_staleness",
                                  "the staleness tau of applied gradients, in timestamps", upper, st->tau_hist,
                                  FASGD_SRV_TAU_BUCKETS, st->tau_sum);
    fasgd_metrics_text_gauge (t, "fasgd_server_staleness_max", "the largest tau applied", (double) st->tau_max);
    fasgd_metrics_text_gauge (t, "fasgd_server_vbar", "v-bar: the mean of the rule's moving statistic "
                              "(sigma for std, m for abs; 1 for rules without one), sent to the clients' gates", fasgd_rule_vbar (p->rule));
    fasgd_metrics_text_gauge (t, "fasgd_server_gradient_norm_median",
                              "the guard's median of the clients' typical gradient norms",
                              fasgd_srv_guard_median (self->src.guard));
    double error, nll;
    uint64_t eval_T;
    int64_t eval_ms;
    if (fasgd_srv_eval_result (self->src.eval, &error, &nll, &eval_T, &eval_ms)) {
        fasgd_metrics_text_gauge (t, "fasgd_server_validation_error", "the last validation error rate", error);
        fasgd_metrics_text_gauge (t, "fasgd_server_validation_nll", "the last validation negative log-likelihood",
                                  nll);
        fasgd_metrics_text_gauge (t, "fasgd_server_validation_timestamp", "T of the last validation",
                                  (double) eval_T);
        fasgd_metrics_text_gauge (t, "fasgd_server_validation_age_seconds", "seconds since the last validation",
                                  (double) (now - eval_ms) / 1000.0);
    }
    uint64_t ckpt_T;
    int64_t ckpt_ms;
    if (fasgd_srv_checkpoint_last (self->src.checkpoint, &ckpt_T, &ckpt_ms)) {
        fasgd_metrics_text_gauge (t, "fasgd_server_checkpoint_age_seconds", "seconds since the last checkpoint",
                                  (double) (now - ckpt_ms) / 1000.0);
        fasgd_metrics_text_gauge (t, "fasgd_server_checkpoint_timestamp", "T of the last checkpoint",
                                  (double) ckpt_T);
    }
}

void
fasgd_srv_metrics_publish (fasgd_srv_metrics_t *self, int64_t now)
{
    fasgd_metrics_text_reset (self->text);
    s_info (self);
    s_training (self, now);
    s_requests (self);
    s_clients (self);
    self->last_ms = now;
    if (fasgd_metrics_text_failed (self->text))
        fasgd_log_warn ("metrics: out of memory rendering the text; the last one stays");
    else if (fasgd_metrics_pub_set (self->pub, fasgd_metrics_text_data (self->text),
                                    fasgd_metrics_text_len (self->text)) != 0)
        fasgd_log_warn ("metrics: out of memory publishing the text; the last one stays");
}

void
fasgd_srv_metrics_tick (fasgd_srv_metrics_t *self, int64_t now)
{
    if (now - self->last_ms >= FASGD_SRV_METRICS_MS)
        fasgd_srv_metrics_publish (self, now);
}
