/*  fasgd-client: one asynchronous worker. Joins a fasgd-server, trains the
    server's MLP on a local training set, and pushes its gradients and
    fetches parameters through the B-FASGD gates the server describes.  */
#include "affinity.h"
#include "client.h"
#include "codec.h"

#include "cli.h"

#include "data.h"
#include "heap.h"
#include "log.h"
#include "model.h"

#include "exposition.h"
#include "publish.h"
#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S_EXIT_OK           0
#define S_EXIT_CONFIG       1       /* bad data, description or model mismatch */
#define S_EXIT_USAGE        2
#define S_EXIT_UNREACHABLE  3       /* no WELCOME at start */

/*  Between two JOINs after a lost server: doubling from the first to the
    last, so a restarted server is found within a second of coming back.  */
#define S_BACKOFF_FIRST_MS  50
#define S_BACKOFF_MAX_MS    1000
/*  How long a sharded client tries to join again while every shard that
    answers sends θ no server holds.  */
#define S_NO_HONEST_SHARD_S 20
/*  After gradients refused (422) in a row: the first refusal is followed
    at once (an honest client meets one now and then), each later one by
    a wait twice the last, from S_REFUSED_FIRST_MS to S_REFUSED_MAX_MS.
    The first push the server takes ends it.  */
#define S_REFUSED_FIRST_MS  10
#define S_REFUSED_MAX_MS    1000

static volatile sig_atomic_t s_stop;

/*  The first signal stops the run after its step, leaving the server;
    a second exits at once (a reply or a LEAVE may take the whole reply
    timeout when the server is gone).  */
static void
s_on_signal (int sig)
{
    if (s_stop)
        _exit (128 + sig);
    s_stop = 1;
}

typedef struct {
    const char *push_ep, *fetch_ep, *data, *name;
    const char *server_key, *cert;  /* CURVE: --server-key, --cert */
    const char *metrics;            /* --metrics: a Prometheus endpoint; NULL none */
    double gradient_scale;          /* --gradient-scale: 1 but in robustness experiments */
    uint64_t batch, steps, seed, threads, delay_ms, timeout_ms, cpu;
    uint64_t eval_every;            /* --eval-every: steps between validations; 0 none */
    int seed_set, cpu_set, quiet;
} s_opts_t;

/*  --metrics: why steps failed, and the round trips' histogram (seconds).  */
#define S_CAUSES 7
static const char *const s_causes [S_CAUSES] = { "gradient", "unavailable", "refused", "timeout",
                                                 "not_joined", "protocol", "other" };
#define S_RTT_BUCKETS 14
static const double s_rtt_upper [S_RTT_BUCKETS] = { 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2,
                                                    0.5, 1, 2, 5, 0 /* +Inf */ };

/*  The state of a run.  */
typedef struct {
    const s_opts_t *o;
    char name [FASGD_PROTO_TEXT_MAX + 1];
    fasgd_client_t *client;
    fasgd_dataset_t *train;
    fasgd_dataset_t *valid;         /* --eval-every: the data directory's t10k set */
    fasgd_model_ws_t *eval_ws;
    double val_error;               /* the last validation's, NAN before one */
    fasgd_model_t *model;
    fasgd_model_ws_t *ws;
    fasgd_batcher_t *batcher;
    float *theta, *grad, *x;
    uint8_t *y;
    size_t nparams;
    uint32_t id;                    /* the last id the server assigned */
    uint64_t ts;                    /* timestamp of the parameters held */
    fasgd_client_stats_t past;      /* sessions before the current one */
    uint64_t steps, rejoins, nan_steps;
    int revoked;                    /* the server refused our key (403): no LEAVE */
    /*  Refused gradients (422) in a row since the server last took a
        push, the wait before the next push, and the waits so far.  */
    uint64_t refused_run, refused_wait_ms, waits;
    double waited;                  /* seconds */
    uint64_t pushes_seen;           /* pushes taken, at the last step */
    uint64_t tau;
    int tau_known;
    struct timespec t0, last_progress;
    int progress, progressed;
    int progress_tty;               /* redraw one line rather than add lines */
    /*  --metrics: the publisher, its text, and what only it counts.  */
    fasgd_metrics_pub_t *metrics;
    fasgd_metrics_text_t *mtext;
    struct timespec last_metrics;
    uint64_t failures [S_CAUSES];   /* failed steps by cause, --metrics or not */
    uint64_t rtt_hist [S_RTT_BUCKETS];
    double rtt_sum;
} s_run_t;

static void
s_usage (FILE *out)
{
    fputs (
        "Usage: fasgd-client -s ENDPOINT -f ENDPOINT --data DIR [OPTION]...\n"
        "Train the server's model on local data as one asynchronous fasgd worker.\n"
        "\n"
        "  -s, --server ENDPOINT  the server's push endpoint, e.g. tcp://host:5555 (required);\n"
        "                         for a model sharded across S servers, their S push\n"
        "                         endpoints separated by commas\n"
        "  -f, --fetch ENDPOINT   the server's fetch endpoint, e.g. tcp://host:5556 (required);\n"
        "                         for shards, their fetch endpoints in the same order\n"
        "  -d, --data DIR         directory holding train-images-idx3-ubyte[.gz] and\n"
        "                         train-labels-idx1-ubyte[.gz] (required)\n"
        "  -b, --batch MU         examples per gradient (default 32)\n"
        "  -n, --steps N          stop after N steps, each one gradient through the push\n"
        "                         gate (default 0: until SIGINT or SIGTERM)\n"
        "      --seed S           seed of the minibatch order and the gates' draws\n"
        "                         (default: the client id the server assigns)\n"
        "  -t, --threads T        OpenBLAS threads for the gradient (default 1)\n"
        "      --delay-ms D       sleep D ms after each gradient (emulates a slow machine)\n"
        "      --eval-every N     every N steps, evaluate the parameters held on DIR's\n"
        "                         t10k-images/t10k-labels and report the result to the\n"
        "                         server (EVAL), which logs it and writes it to its\n"
        "                         eval.csv: the validation of a sharded model, which no\n"
        "                         shard can evaluate (default 0: never)\n"
        "      --gradient-scale X multiply every gradient by X before pushing it: a faulty\n"
        "                         or hostile client, for robustness experiments (default 1)\n"
        "      --cpu N            run on CPU N, with ZeroMQ's I/O thread (default: anywhere)\n"
        "      --name NAME        the name the server logs (default hostname:pid)\n"
        "      --timeout-ms MS    wait for each reply (default 5000)\n"
        "      --server-key FILE  speak CURVE (encrypted, authenticated) to a server whose\n"
        "                         public certificate is FILE (fasgd-ctl keygen's NAME.key)\n"
        "      --cert FILE        this client's secret certificate (NAME.key_secret), as\n"
        "                         allowed by the server (default with --server-key: a key\n"
        "                         of this process's own, for servers that allow any)\n"
        "      --log-level LEVEL  error, warn, notice (default), info or debug\n"
        "      --metrics URL      serve Prometheus metrics (steps, refusals, round-trip\n"
        "                         latency) at URL, e.g. http://127.0.0.1:9465/metrics\n"
        "                         (port 0: a free one, logged)\n"
        "  -q, --quiet            no progress line\n"
        "  -h, --help             this help\n"
        "  -V, --version          the version\n"
        "\n"
        "The server describes the model (it must be model=mlp), the gates and the\n"
        "heartbeat period. If the server goes away or forgets this client, the client\n"
        "joins again, waiting at most a second between tries, until it is signalled.\n"
        "SIGINT or SIGTERM finishes the current step, leaves the server and exits.\n"
        "Prints one summary line on standard output at exit.\n"
        "Exit status: 0 success, 1 bad data or a model that does not match the\n"
        "server's, 2 bad usage, 3 no answer from the server at start (3 timeouts).\n"
        "The wire protocol: proto/PROTOCOL.md in the source tree.\n", out);
}

/*  An integer option in [min, max]; prints the error and returns -1.  */
static int
s_parse_u64 (const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull (text, &end, 10);
    if (errno == ERANGE || end == text || *end != '\0' || strchr (text, '-') || v < min || v > max) {
        fprintf (stderr, "fasgd-client: %s must be an integer in [%" PRIu64 ", %" PRIu64 "] (got '%s')\n",
                 opt, min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

static double
s_elapsed (const struct timespec *a, const struct timespec *b)
{
    return (double) (b->tv_sec - a->tv_sec) + (double) (b->tv_nsec - a->tv_nsec) * 1e-9;
}

/*  Sleeps ms milliseconds in slices, so a signal that lands on another
    thread still ends the wait within a tenth of a second.  */
static void
s_sleep_ms (uint64_t ms)
{
    while (ms > 0 && !s_stop) {
        uint64_t slice = ms < 100 ? ms : 100;
        struct timespec ts = { (time_t) (slice / 1000), (long) (slice % 1000) * 1000000L };
        nanosleep (&ts, NULL);
        ms -= slice;
    }
}

static void
s_stats_add (fasgd_client_stats_t *sum, const fasgd_client_stats_t *s)
{
    sum->pushes += s->pushes;
    sum->repeats += s->repeats;
    sum->accumulated += s->accumulated;
    sum->fetches += s->fetches;
    sum->fetch_skips += s->fetch_skips;
    sum->bytes_out += s->bytes_out;
    sum->bytes_in += s->bytes_in;
}

/*  All sessions so far.  */
static fasgd_client_stats_t
s_stats_total (const s_run_t *r)
{
    fasgd_client_stats_t t = r->past;
    s_stats_add (&t, fasgd_client_stats (r->client));
    return t;
}

/*  The model the server's description names, checked against it and
    against the training set; NULL with a logged reason.  */
static fasgd_model_t *
s_model_from_desc (const fasgd_proto_desc_t *d, const fasgd_dataset_t *train)
{
    if (strcmp (d->model, "mlp") != 0) {
        fasgd_log_error ("the server trains model '%s': fasgd-client computes gradients only for "
                         "the server's mlp; an external model needs a client of its own "
                         "(built on libfasgd-client)", d->model);
        return NULL;
    }
    fasgd_model_spec_t spec;
    fasgd_model_spec_default (&spec);
    char err [256];
    if (fasgd_model_spec_parse_sizes (&spec, d->model_sizes, err, sizeof err) != 0) {
        fasgd_log_error ("the server's model.sizes '%s': %s", d->model_sizes, err);
        return NULL;
    }
    int act = fasgd_model_activation_parse (d->model_activation);
    if (act < 0) {
        fasgd_log_error ("the server's model.activation '%s' is not one this client knows",
                         d->model_activation);
        return NULL;
    }
    spec.activation = act;
    fasgd_model_t *model = fasgd_model_new (&spec, err, sizeof err);
    if (!model) {
        fasgd_log_error ("the server's model (sizes %s): %s", d->model_sizes, err);
        return NULL;
    }
    const char *why = NULL;
    size_t n = fasgd_model_nparams (model);
    if ((uint64_t) n != d->params)
        why = "parameter count";
    else if (fasgd_model_ntensors (model) != d->ntensors)
        why = "tensor count";
    for (int i = 0; !why && i < d->ntensors; i++) {
        const fasgd_tensor_t *t = fasgd_model_tensor (model, i);
        if (strcmp (t->name, d->tensors [i].name) != 0
            || d->tensors [i].ndim != 2
            || (uint32_t) t->rows != d->tensors [i].dims [0] || (uint32_t) t->cols != d->tensors [i].dims [1])
            why = "tensor layout";
    }
    if (why) {
        fasgd_log_error ("model mismatch (%s): sizes %s give %zu parameters, the server has %" PRIu64,
                         why, d->model_sizes, n, d->params);
        fasgd_model_destroy (&model);
        return NULL;
    }
    int in = fasgd_model_input_dim (model), classes = fasgd_model_nclasses (model);
    if ((int) train->dim != in) {
        fasgd_log_error ("data: images have %u pixels but the server's model takes %d inputs",
                         train->dim, in);
        fasgd_model_destroy (&model);
        return NULL;
    }
    if ((int) train->nclasses > classes) {
        fasgd_log_error ("data: labels go up to %u but the server's model has %d outputs",
                         train->nclasses - 1, classes);
        fasgd_model_destroy (&model);
        return NULL;
    }
    return model;
}

/*  After a (re)join: the description must still fit this run's buffers.
    The first join allocates them.  */
static int
s_adopt_desc (s_run_t *r)
{
    const fasgd_proto_desc_t *d = fasgd_client_desc (r->client);
    fasgd_model_t *model = s_model_from_desc (d, r->train);
    if (!model)
        return -1;
    if (r->model) {
        const fasgd_model_spec_t *a = fasgd_model_spec (r->model), *b = fasgd_model_spec (model);
        if (a->nsizes != b->nsizes || memcmp (a->sizes, b->sizes, sizeof a->sizes [0] * (size_t) a->nsizes) != 0) {
            fasgd_log_error ("the server came back with another model (sizes %s)", d->model_sizes);
            fasgd_model_destroy (&model);
            return -1;
        }
        /*  Same shapes: the workspace and buffers serve the new model.  */
        fasgd_model_destroy (&r->model);
        r->model = model;
        return 0;
    }
    r->model = model;
    r->nparams = fasgd_model_nparams (model);
    r->ws = fasgd_model_ws_new (model, (int) r->o->batch);
    if (r->valid && !(r->eval_ws = fasgd_model_ws_new (model, 500))) {
        fasgd_log_error ("out of memory for the validation's workspace");
        return -1;
    }
    r->theta = malloc (r->nparams * sizeof (float));
    r->grad = malloc (r->nparams * sizeof (float));
    r->x = malloc ((size_t) r->o->batch * r->train->dim * sizeof (float));
    r->y = malloc ((size_t) r->o->batch);
    if (!r->ws || !r->theta || !r->grad || !r->x || !r->y) {
        fasgd_log_error ("out of memory for a model of %zu parameters and batches of %" PRIu64,
                         r->nparams, r->o->batch);
        return -1;
    }
    uint64_t seed = r->o->seed_set ? r->o->seed : fasgd_client_id (r->client);
    r->batcher = fasgd_batcher_new (r->train->n, (uint32_t) r->o->batch, seed, 1);
    if (!r->batcher) {
        fasgd_log_error ("data: a batch of %" PRIu64 " is more than the %u training examples",
                         r->o->batch, r->train->n);
        return -1;
    }
    return 0;
}

static void
s_log_failure (const s_run_t *r, const char *what, int rc)
{
    int status = fasgd_client_last_status (r->client);
    if (rc == FASGD_CLIENT_ESECURITY)
        fasgd_log_warn ("%s: %s (%s)", what, fasgd_client_strerror (rc), fasgd_client_last_reason (r->client));
    else if (rc == FASGD_CLIENT_EREFUSED || rc == FASGD_CLIENT_ENOTJOINED || rc == FASGD_CLIENT_EVERSION
             || rc == FASGD_CLIENT_EPROTO)
        fasgd_log_warn ("%s: %s (%d %s)", what, fasgd_client_strerror (rc), status,
                        fasgd_client_last_reason (r->client));
    else
        fasgd_log_warn ("%s: %s", what, fasgd_client_strerror (rc));
}

/*  The next wait of a series: first, then twice the last, up to max.  */
static uint64_t
s_next_wait (uint64_t last_ms, uint64_t first_ms, uint64_t max_ms)
{
    uint64_t ms = last_ms ? last_ms * 2 : first_ms;
    return ms > max_ms ? max_ms : ms;
}

/*  Joins again after the server went away, until it answers or the run
    is signalled: 0 joined and holding θ, 1 signalled, -1 fatal. A
    sharded client whose shards that answer all send θ no server holds
    (the library says so as FASGD_CLIENT_EPROTO) tries for
    S_NO_HONEST_SHARD_S, in case the others come back, then gives up.  */
static int
s_rejoin (s_run_t *r)
{
    uint64_t backoff = 0;
    uint64_t tries = 0;
    int said = 0;
    struct timespec t0, now;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    while (!s_stop) {
        /*  join starts the counters afresh: keep what they hold.  */
        s_stats_add (&r->past, fasgd_client_stats (r->client));
        int rc = fasgd_client_join (r->client, r->name);
        tries++;
        if (rc == 0) {
            if (s_adopt_desc (r) != 0)
                return -1;
            rc = fasgd_client_fetch_gated (r->client, r->theta, &r->ts);
            if (rc >= 0) {
                r->rejoins++;
                r->id = fasgd_client_id (r->client);
                fasgd_log_notice ("joined again as client %" PRIu32 " after %" PRIu64 " tr%s; T=%" PRIu64,
                                  fasgd_client_id (r->client), tries, tries == 1 ? "y" : "ies", r->ts);
                return 0;
            }
        }
        int status = fasgd_client_last_status (r->client);
        int retry = rc == FASGD_CLIENT_ETIMEOUT || rc == FASGD_CLIENT_ENOTJOINED
                 || (rc == FASGD_CLIENT_EREFUSED && status == FASGD_STATUS_UNAVAILABLE);
        if (rc == FASGD_CLIENT_EPROTO && fasgd_client_shards (r->client) > 1) {
            clock_gettime (CLOCK_MONOTONIC, &now);
            double spent = s_elapsed (&t0, &now);
            if (spent >= S_NO_HONEST_SHARD_S) {
                fasgd_log_error ("cannot join again: %s; still so after %" PRIu64 " tries in %.0f s: giving up",
                                 fasgd_client_last_reason (r->client), tries, spent);
                return -1;
            }
            if (!said++)
                fasgd_log_warn ("cannot join again: %s; trying for %d s before giving up",
                                fasgd_client_last_reason (r->client), S_NO_HONEST_SHARD_S);
            retry = 1;
        }
        if (!retry) {
            s_log_failure (r, "cannot join again", rc);
            return -1;
        }
        /*  One line at the first failure, then one a minute or so.  */
        if (tries == 1 || tries % 60 == 0)
            fasgd_log_notice ("server %s not answering (%s); still trying",
                              r->o->push_ep, fasgd_client_strerror (rc));
        backoff = s_next_wait (backoff, S_BACKOFF_FIRST_MS, S_BACKOFF_MAX_MS);
        s_sleep_ms (backoff);
    }
    return 1;
}

/*  A gradient refused (422): after the first in a row, wait before the
    next push (S_REFUSED_FIRST_MS doubling to S_REFUSED_MAX_MS), so that a
    server that refuses everything is not pushed to as fast as the client
    computes.  */
static void
s_refused_wait (s_run_t *r)
{
    if (r->refused_run++ == 0)
        return;
    r->refused_wait_ms = s_next_wait (r->refused_wait_ms, S_REFUSED_FIRST_MS, S_REFUSED_MAX_MS);
    if (r->refused_run == 2)
        fasgd_log_notice ("2 gradients refused in a row: waiting %" PRIu64 " ms before the next push, "
                          "doubling to %d ms, until the server takes one", r->refused_wait_ms, S_REFUSED_MAX_MS);
    else
    if (r->refused_wait_ms == S_REFUSED_MAX_MS && r->refused_run % 60 == 0)
        fasgd_log_notice ("%" PRIu64 " gradients refused in a row: waiting %d ms before each push",
                          r->refused_run, S_REFUSED_MAX_MS);
    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    s_sleep_ms (r->refused_wait_ms);
    clock_gettime (CLOCK_MONOTONIC, &t1);
    r->waits++;
    r->waited += s_elapsed (&t0, &t1);
}

/*  After a step: a push the server took (pushes grew) ends a run of
    refusals, and its waits.  */
static void
s_refused_reset (s_run_t *r)
{
    uint64_t pushes = s_stats_total (r).pushes;
    if (pushes == r->pushes_seen)
        return;
    r->pushes_seen = pushes;
    if (r->refused_run > 1)
        fasgd_log_notice ("the server took a push again, after %" PRIu64 " refused in a row: no more waits",
                          r->refused_run);
    r->refused_run = 0;
    r->refused_wait_ms = 0;
}

/*  What a failed push or fetch means for the run: 0 go on, 1 join again,
    -1 stop with an error.  */
static int
s_on_failure (s_run_t *r, const char *what, int rc)
{
    int status = fasgd_client_last_status (r->client);
    switch (rc) {
        case FASGD_CLIENT_ETIMEOUT:
            fasgd_log_warn ("%s: no reply within %" PRIu64 " ms: the server may have restarted; joining again",
                            what, r->o->timeout_ms);
            return 1;
        case FASGD_CLIENT_ENOTJOINED:
            fasgd_log_warn ("%s: the server no longer knows client %" PRIu32 " (%d: restarted, or "
                            "expired us); joining again", what, fasgd_client_id (r->client), status);
            return 1;
        case FASGD_CLIENT_EPROTO:
            s_log_failure (r, what, rc);
            return 1;
        case FASGD_CLIENT_EREFUSED:
            if (status == FASGD_STATUS_UNAVAILABLE) {
                fasgd_log_warn ("%s: the server is shutting down; joining again", what);
                return 1;
            }
            if (status == FASGD_STATUS_FORBIDDEN) {
                fasgd_log_error ("%s: the server no longer allows this client's CURVE key (%d %s): stopping",
                                 what, status, fasgd_client_last_reason (r->client));
                r->revoked = 1;
                return -1;
            }
            if (status == FASGD_STATUS_NONFINITE || status == FASGD_STATUS_CONFLICT) {
                /*  Nothing was applied; fresh parameters give the next
                    gradient its best chance.  */
                s_log_failure (r, what, rc);
                if (status == FASGD_STATUS_NONFINITE)
                    s_refused_wait (r);
                int f = fasgd_client_fetch (r->client, r->theta, &r->ts, 0);
                return f < 0 ? s_on_failure (r, "fetch", f) : 0;
            }
            s_log_failure (r, what, rc);
            return -1;
        default:
            s_log_failure (r, what, rc);
            return -1;
    }
}

static void
s_progress (s_run_t *r, int final)
{
    /*  Off a terminal a run shorter than one interval prints no line.  */
    if (!r->progress || (final && !r->progress_tty && !r->progressed))
        return;
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    /*  A terminal gets one line redrawn twice a second; a log file or a
        pipe a new line every five seconds.  */
    if (!final && s_elapsed (&r->last_progress, &now) < (r->progress_tty ? 0.5 : 5.0))
        return;
    r->last_progress = now;
    double secs = s_elapsed (&r->t0, &now);
    double rate = secs > 0 ? (double) r->steps / secs : 0.0;
    fasgd_client_stats_t t = s_stats_total (r);
    char tau [32] = "", eta [32] = "";
    if (r->tau_known)
        snprintf (tau, sizeof tau, "  tau %" PRIu64, r->tau);
    if (r->o->steps > 0 && rate > 0 && r->steps <= r->o->steps)
        snprintf (eta, sizeof eta, "  ETA %.0fs", (double) (r->o->steps - r->steps) / rate);
    fprintf (stderr, "%s%" PRIu64 " steps  %.1f steps/s%s%s  fetch %.1f/s  push %.1f/s  T %" PRIu64 "%s",
             r->progress_tty ? "\r" : "", r->steps, rate, eta, tau,
             secs > 0 ? (double) t.fetches / secs : 0.0,
             secs > 0 ? (double) t.pushes / secs : 0.0,
             fasgd_client_server_timestamp (r->client), r->progress_tty ? "  " : "\n");
    fflush (stderr);
    r->progressed = 1;
}

/*  A step's round trip of rtt seconds (for --metrics) and its result rc:
    a failed step is counted by cause whether or not --metrics is given,
    since the summary line says how many gradients were refused.  */
static void
s_metrics_count (s_run_t *r, double rtt, int rc)
{
    if (rc >= 0) {
        if (!r->metrics)
            return;
        int k = 0;
        while (k < S_RTT_BUCKETS - 1 && rtt > s_rtt_upper [k])
            k++;
        r->rtt_hist [k]++;
        r->rtt_sum += rtt;
        return;
    }
    int status = fasgd_client_last_status (r->client);
    int cause = rc == FASGD_CLIENT_EREFUSED ? (status == FASGD_STATUS_NONFINITE ? 0
                                               : status == FASGD_STATUS_UNAVAILABLE ? 1 : 2)
                : rc == FASGD_CLIENT_ETIMEOUT ? 3 : rc == FASGD_CLIENT_ENOTJOINED ? 4
                : rc == FASGD_CLIENT_EPROTO ? 5 : 6;
    r->failures [cause]++;
}

/*  --metrics: the run's counters as Prometheus text, handed to the
    publisher's thread at most once a second (final: now).  */
static void
s_metrics_publish (s_run_t *r, int final)
{
    if (!r->metrics)
        return;
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    if (!final && s_elapsed (&r->last_metrics, &now) < 1.0)
        return;
    r->last_metrics = now;
    fasgd_metrics_text_t *t = r->mtext;
    fasgd_client_stats_t st = s_stats_total (r);
    char labels [FASGD_PROTO_TEXT_MAX + 64], id [16];
    snprintf (id, sizeof id, "%" PRIu32, r->id);
    fasgd_metrics_text_reset (t);
    fasgd_metrics_text_family (t, "fasgd_client_info", "gauge", "the client's name and id (the value is 1)");
    fasgd_metrics_text_sample (t, "fasgd_client_info",
                               fasgd_metrics_labels (labels, sizeof labels, "name", r->name, "id", id,
                                                     "version", PACKAGE_VERSION, NULL), 1);
    fasgd_metrics_text_counter (t, "fasgd_client_steps_total", "steps done: gradients through the push gate",
                                r->steps);
    fasgd_metrics_text_counter (t, "fasgd_client_pushes_total", "gradients pushed (summed over shards)",
                                st.pushes);
    fasgd_metrics_text_counter (t, "fasgd_client_repeats_total", "pushes that resent the last gradient",
                                st.repeats);
    fasgd_metrics_text_counter (t, "fasgd_client_accumulated_total", "gradients the push gate held back",
                                st.accumulated);
    fasgd_metrics_text_counter (t, "fasgd_client_fetches_total", "parameters fetched (summed over shards)",
                                st.fetches);
    fasgd_metrics_text_counter (t, "fasgd_client_fetch_skips_total", "fetches the fetch gate skipped",
                                st.fetch_skips);
    fasgd_metrics_text_counter (t, "fasgd_client_sent_bytes_total", "bytes sent", st.bytes_out);
    fasgd_metrics_text_counter (t, "fasgd_client_received_bytes_total", "bytes received", st.bytes_in);
    fasgd_metrics_text_counter (t, "fasgd_client_rejoins_total", "joins after the server went away or forgot "
                                "this client", r->rejoins);
    fasgd_metrics_text_counter (t, "fasgd_client_refusal_waits_total", "waits before a push after gradients "
                                "refused (422) in a row", r->waits);
    fasgd_metrics_text_family (t, "fasgd_client_refusals_total", "counter",
                               "steps that failed, by cause: gradient (422), unavailable (503), refused (other "
                               "statuses), timeout, not_joined (401), protocol, other");
    for (int k = 0; k < S_CAUSES; k++)
        fasgd_metrics_text_sample_u64 (t, "fasgd_client_refusals_total",
                                       fasgd_metrics_labels (labels, sizeof labels, "cause", s_causes [k], NULL),
                                       r->failures [k]);
    fasgd_metrics_text_histogram (t, "fasgd_client_round_trip_seconds",
                                  "a step's exchange with the server: push, and fetch when the gate allows",
                                  s_rtt_upper, r->rtt_hist, S_RTT_BUCKETS, r->rtt_sum);
    fasgd_metrics_text_gauge (t, "fasgd_client_server_timestamp", "the last T the server sent",
                              (double) fasgd_client_server_timestamp (r->client));
    if (r->tau_known)
        fasgd_metrics_text_gauge (t, "fasgd_client_staleness", "tau of the last gradient applied", (double) r->tau);
    if (!isnan (r->val_error))
        fasgd_metrics_text_gauge (t, "fasgd_client_validation_error", "the last --eval-every validation error",
                                  r->val_error);
    if (!fasgd_metrics_text_failed (t))
        fasgd_metrics_pub_set (r->metrics, fasgd_metrics_text_data (t), fasgd_metrics_text_len (t));
}

/*  --eval-every: the validation error of the parameters held, reported
    to the server (every shard with a sharded model).  */
static void
s_validate (s_run_t *r)
{
    double nll, error;
    fasgd_model_evaluate (r->model, r->eval_ws, r->theta, r->valid->x, r->valid->y, r->valid->n, &nll, &error);
    r->val_error = error;
    fasgd_log_notice ("validation after %" PRIu64 " steps: error %.4f, nll %.4f on %u examples", r->steps,
                      error, nll, r->valid->n);
    int rc = fasgd_client_eval (r->client, error, nll, r->valid->n);
    if (rc < 0)
        s_log_failure (r, "eval", rc);
}

/*  The training loop: 0 done or signalled, -1 an error.  */
static int
s_train (s_run_t *r)
{
    int batch = (int) r->o->batch;
    while (!s_stop && (r->o->steps == 0 || r->steps < r->o->steps)) {
        const uint32_t *idx = fasgd_batcher_next (r->batcher);
        fasgd_dataset_gather (r->train, idx, (uint32_t) batch, r->x, r->y);
        double loss = fasgd_model_gradient (r->model, r->ws, r->theta, r->x, r->y, batch, r->grad, NULL);
        if (isnan (loss) && r->nan_steps++ == 0)
            fasgd_log_warn ("the loss is NaN: the parameters may have diverged");
        if (r->o->gradient_scale != 1.0)
            for (size_t i = 0; i < r->nparams; i++)
                r->grad [i] *= (float) r->o->gradient_scale;
        s_sleep_ms (r->o->delay_ms);

        /*  Push, then fetch, through the gates: one round trip when the
            fetch gate allows it.  */
        int64_t tau;
        struct timespec sent, back;
        clock_gettime (CLOCK_MONOTONIC, &sent);
        int rc = fasgd_client_step_gated (r->client, r->grad, r->theta, &r->ts, &tau);
        clock_gettime (CLOCK_MONOTONIC, &back);
        s_metrics_count (r, s_elapsed (&sent, &back), rc);
        int action = rc < 0 ? s_on_failure (r, "push and fetch", rc) : 0;
        if (rc >= 0) {
            s_refused_reset (r);
            r->steps++;
            if (tau >= 0) {
                r->tau = (uint64_t) tau;
                r->tau_known = 1;
            }
            if (r->o->eval_every && r->steps % r->o->eval_every == 0)
                s_validate (r);
        }
        if (action < 0)
            return -1;
        if (action > 0) {
            int j = s_rejoin (r);
            if (j < 0)
                return -1;
            if (j > 0)
                break;
        }
        s_progress (r, 0);
        s_metrics_publish (r, 0);
    }
    return 0;
}

/*  The first JOIN: retried on timeouts until 3 timeouts' worth of time
    has passed. Returns an exit status, or -1 when joined.  */
static int
s_join_first (s_run_t *r)
{
    struct timespec t0, now;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    double limit = 3.0 * (double) r->o->timeout_ms / 1000.0;
    for (;;) {
        int rc = fasgd_client_join (r->client, r->name);
        if (rc == 0) {
            r->id = fasgd_client_id (r->client);
            return -1;
        }
        if (s_stop)
            return S_EXIT_OK;
        int status = fasgd_client_last_status (r->client);
        int retry = rc == FASGD_CLIENT_ETIMEOUT
                 || (rc == FASGD_CLIENT_EREFUSED && status == FASGD_STATUS_UNAVAILABLE);
        if (!retry) {
            if (rc == FASGD_CLIENT_EREFUSED || rc == FASGD_CLIENT_EPROTO || rc == FASGD_CLIENT_EVERSION
                || rc == FASGD_CLIENT_ESECURITY || (rc == FASGD_CLIENT_ESOCKET && *fasgd_client_last_reason (r->client)))
                fasgd_log_error ("%s: cannot join: %s (%s)", r->o->push_ep, fasgd_client_strerror (rc),
                                 fasgd_client_last_reason (r->client));
            else
                fasgd_log_error ("%s: cannot join: %s", r->o->push_ep, fasgd_client_strerror (rc));
            return S_EXIT_CONFIG;
        }
        clock_gettime (CLOCK_MONOTONIC, &now);
        if (s_elapsed (&t0, &now) >= limit) {
            const char *why = fasgd_client_last_reason (r->client);
            if (strstr (why, "turned the connection away"))
                /*  It is running, and has no room for this client now.  */
                fasgd_log_error ("%s: no WELCOME within %.1f s: %s", r->o->push_ep, limit, why);
            else
                fasgd_log_error ("%s: no WELCOME within %.1f s: is fasgd-server running there?",
                                 r->o->push_ep, limit);
            return S_EXIT_UNREACHABLE;
        }
        fasgd_log_info ("%s: %s; trying again", r->o->push_ep, fasgd_client_strerror (rc));
        s_sleep_ms (100);
        if (s_stop)
            return S_EXIT_OK;
    }
}

static void
s_run_free (s_run_t *r)
{
    fasgd_batcher_destroy (&r->batcher);
    fasgd_model_ws_destroy (&r->ws);
    fasgd_model_destroy (&r->model);
    fasgd_client_destroy (&r->client);
    fasgd_dataset_destroy (&r->train);
    fasgd_dataset_destroy (&r->valid);
    fasgd_model_ws_destroy (&r->eval_ws);
    free (r->theta);
    free (r->grad);
    free (r->x);
    free (r->y);
    fasgd_metrics_pub_destroy (&r->metrics);
    fasgd_metrics_text_destroy (&r->mtext);
}

/*  One option of the command line into o: -1 to go on, else the exit
    status after saying what is wrong.  */
static int
s_option (const fasgd_cli_t *cli, s_opts_t *o, int opt, const char *arg)
{
    int bad = 0;
    switch (opt) {
        case 's': o->push_ep = arg; break;
        case 'f': o->fetch_ep = arg; break;
        case 'K': o->server_key = arg; break;
        case 'c': o->cert = arg; break;
        case 'G': {
            char *end;
            errno = 0;
            o->gradient_scale = strtod (arg, &end);
            if (errno || end == arg || *end || !isfinite (o->gradient_scale)) {
                fprintf (stderr, "fasgd-client: --gradient-scale takes a finite number (got '%s')\n", arg);
                return S_EXIT_USAGE;
            }
            break;
        }
        case 'd': o->data = arg; break;
        case 'b': bad = s_parse_u64 ("--batch", arg, 1, FASGD_MODEL_MAX_WIDTH, &o->batch); break;
        case 'n': bad = s_parse_u64 ("--steps", arg, 0, UINT64_MAX, &o->steps); break;
        case 'S': bad = s_parse_u64 ("--seed", arg, 0, UINT64_MAX, &o->seed); o->seed_set = 1; break;
        case 't': bad = s_parse_u64 ("--threads", arg, 1, 1024, &o->threads); break;
        case 'D': bad = s_parse_u64 ("--delay-ms", arg, 0, 3600000, &o->delay_ms); break;
        case 'E': bad = s_parse_u64 ("--eval-every", arg, 0, UINT64_MAX, &o->eval_every); break;
        case 'C': bad = s_parse_u64 ("--cpu", arg, 0, FASGD_CPU_MAX, &o->cpu); o->cpu_set = 1; break;
        case 'T': bad = s_parse_u64 ("--timeout-ms", arg, 1, INT_MAX / 3, &o->timeout_ms); break;
        case 'N':
            if (strlen (arg) > FASGD_PROTO_TEXT_MAX) {
                fprintf (stderr, "fasgd-client: --name is at most %u bytes\n", FASGD_PROTO_TEXT_MAX);
                return S_EXIT_USAGE;
            }
            o->name = arg;
            break;
        case 'L':
            if (fasgd_cli_log_level_set (cli, arg) != 0)
                return S_EXIT_USAGE;
            break;
        case 'M': o->metrics = arg; break;
        case 'q': o->quiet = 1; break;
        case 'h': s_usage (stdout); return S_EXIT_OK;
        case 'V': return fasgd_cli_version (cli);
        default:
            return fasgd_cli_bad_option (cli);
    }
    return bad ? S_EXIT_USAGE : -1;
}

/*  The command line into o: -1 to go on, else the exit status (--help,
    --version, or bad usage after saying why).  */
static int
s_options (s_opts_t *o, int argc, char **argv)
{
    static const struct option longopts [] = {
        { "server", required_argument, NULL, 's' },
        { "fetch", required_argument, NULL, 'f' },
        { "data", required_argument, NULL, 'd' },
        { "batch", required_argument, NULL, 'b' },
        { "steps", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 'S' },
        { "threads", required_argument, NULL, 't' },
        { "delay-ms", required_argument, NULL, 'D' },
        { "eval-every", required_argument, NULL, 'E' },
        { "cpu", required_argument, NULL, 'C' },
        { "name", required_argument, NULL, 'N' },
        { "timeout-ms", required_argument, NULL, 'T' },
        { "server-key", required_argument, NULL, 'K' },
        { "gradient-scale", required_argument, NULL, 'G' },
        { "cert", required_argument, NULL, 'c' },
        { "log-level", required_argument, NULL, 'L' },
        { "metrics", required_argument, NULL, 'M' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    /*  No configuration file: of fasgd_cli only the messages and --version.  */
    static const fasgd_cli_t cli = { .prog = "fasgd-client" };
    int opt, status;
    while ((opt = getopt_long (argc, argv, "s:f:d:b:n:t:qhV", longopts, NULL)) != -1)
        if ((status = s_option (&cli, o, opt, optarg)) >= 0)
            return status;
    if (fasgd_cli_operands (&cli, argc, argv, optind) != 0)
        return S_EXIT_USAGE;
    if (!o->push_ep || !o->fetch_ep || !o->data) {
        fprintf (stderr, "fasgd-client: %s is required\nTry 'fasgd-client --help'.\n",
                 !o->push_ep ? "the server's push endpoint (-s ENDPOINT)"
                 : !o->fetch_ep ? "the server's fetch endpoint (-f ENDPOINT)"
                 : "a training set (--data DIR)");
        return S_EXIT_USAGE;
    }
    return -1;
}

/*  The run's name: --name, else hostname:pid.  */
static void
s_run_name (s_run_t *r)
{
    if (r->o->name) {
        snprintf (r->name, sizeof r->name, "%s", r->o->name);
        return;
    }
    char host [128];
    if (gethostname (host, sizeof host) != 0)
        snprintf (host, sizeof host, "localhost");
    host [sizeof host - 1] = '\0';
    snprintf (r->name, sizeof r->name, "%s:%ld", host, (long) getpid ());
}

/*  The client and what it speaks through: the CPU pin, the sockets,
    CURVE, the metrics endpoint. -1 to go on, else S_EXIT_USAGE after
    saying why.  */
static int
s_connect (s_run_t *r)
{
    const s_opts_t *o = r->o;
    /*  Before the client's first socket, whose ZeroMQ I/O thread inherits
        the pin.  */
    if (o->cpu_set) {
        char why [256];
        if (fasgd_affinity_pin ((int) o->cpu, NULL, why, sizeof why) != 0) {
            fprintf (stderr, "fasgd-client: --cpu: %s\n", why);
            return S_EXIT_USAGE;
        }
    }
    r->client = fasgd_client_new (o->push_ep, o->fetch_ep);
    if (!r->client) {
        fprintf (stderr, "fasgd-client: cannot connect to '%s' and '%s': not ZeroMQ endpoints "
                 "such as tcp://host:5555 (for shards: the same number of push and fetch "
                 "endpoints, separated by commas)\n", o->push_ep, o->fetch_ep);
        return S_EXIT_USAGE;
    }
    if ((o->server_key || o->cert) && fasgd_client_set_curve (r->client, o->server_key, o->cert) != 0) {
        fprintf (stderr, "fasgd-client: %s\n", fasgd_client_last_reason (r->client));
        return S_EXIT_USAGE;
    }
    if (o->metrics) {
        char why [512];
        r->mtext = fasgd_metrics_text_new (NULL);
        if (!r->mtext || !(r->metrics = fasgd_metrics_pub_new (o->metrics, why, sizeof why))) {
            fprintf (stderr, "fasgd-client: --metrics: %s\n", r->mtext ? why : "out of memory");
            return S_EXIT_USAGE;
        }
        fasgd_log_notice ("metrics at %s", fasgd_metrics_pub_endpoint (r->metrics));
    }
    fasgd_client_set_timeout (r->client, (int) o->timeout_ms);
    if (o->seed_set)
        fasgd_client_set_seed (r->client, o->seed);
    return -1;
}

/*  The training set (and --eval-every's validation set), before the
    server: a wrong directory is found at once, and a long load does not
    count against the server's patience. -1 to go on, else S_EXIT_CONFIG
    after saying why.  */
static int
s_load_data (s_run_t *r)
{
    const s_opts_t *o = r->o;
    char err [512];
    r->train = fasgd_dataset_load_dir (o->data, "train", 0, err, sizeof err);
    if (!r->train) {
        fasgd_log_error ("data: %s", err);
        return S_EXIT_CONFIG;
    }
    if (o->eval_every && !(r->valid = fasgd_dataset_load_dir (o->data, "t10k", 0, err, sizeof err))) {
        fasgd_log_error ("data: --eval-every: %s", err);
        return S_EXIT_CONFIG;
    }
    if (o->batch > r->train->n) {
        fasgd_log_error ("data: a batch of %" PRIu64 " is more than the %u training examples in %s",
                         o->batch, r->train->n, o->data);
        return S_EXIT_CONFIG;
    }
    return -1;
}

/*  The process around the run: BLAS threads, the heap, the signals.  */
static void
s_process_setup (const s_opts_t *o)
{
    openblas_set_num_threads ((int) o->threads);
    fasgd_heap_keep_large_blocks ();     /* every fetch is a ZeroMQ malloc */
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
}

/*  The first JOIN and the model the server describes: -1 to go on, else
    the exit status after saying why (leaving a server that did not fit).  */
static int
s_join (s_run_t *r)
{
    int status = s_join_first (r);
    if (status >= 0)
        return status;
    const fasgd_proto_desc_t *d = fasgd_client_desc (r->client);
    fasgd_log_info ("joined %s as client %" PRIu32 " (%s): %s %s, rule %s, fetch gate %s, push gate %s",
                    r->o->push_ep, fasgd_client_id (r->client), r->name, d->model, d->model_sizes, d->rule,
                    d->fetch_gate, d->push_gate);
    if (s_adopt_desc (r) != 0) {
        fasgd_client_leave (r->client);
        return S_EXIT_CONFIG;
    }
    return -1;
}

/*  The first fetch, then the training loop until --steps or a signal,
    then the last progress line: the exit status.  */
static int
s_session (s_run_t *r)
{
    r->progress = !r->o->quiet;
    r->progress_tty = isatty (2);
    clock_gettime (CLOCK_MONOTONIC, &r->t0);
    r->last_progress = r->t0;
    s_metrics_publish (r, 1);
    int status = S_EXIT_OK;
    int rc = fasgd_client_fetch_gated (r->client, r->theta, &r->ts);
    int action = rc < 0 ? s_on_failure (r, "fetch", rc) : 0;
    if (action > 0) {
        int j = s_rejoin (r);
        action = j < 0 ? -1 : 0;
    }
    if (action < 0 || s_train (r) != 0)
        status = S_EXIT_CONFIG;
    s_progress (r, 1);
    if (r->progressed && r->progress_tty)
        fputc ('\n', stderr);
    return status;
}

/*  LEAVE (not to a server that revoked our key: it refuses that too,
    and a warning about it would follow the error that said why), then
    the summary line on stdout.  */
static void
s_finish (s_run_t *r)
{
    struct timespec t1;
    clock_gettime (CLOCK_MONOTONIC, &t1);
    double secs = s_elapsed (&r->t0, &t1);
    fasgd_client_stats_t t = s_stats_total (r);
    int rc = r->revoked ? 0 : fasgd_client_leave (r->client);
    if (rc < 0 && rc != FASGD_CLIENT_ENOTJOINED)
        fasgd_log_warn ("leave: %s", fasgd_client_strerror (rc));
    printf ("fasgd-client: client %" PRIu32 " (%s): %" PRIu64 " steps in %.1f s (%.1f steps/s), "
            "%" PRIu64 " pushes, %" PRIu64 " repeats, %" PRIu64 " accumulated, "
            "%" PRIu64 " fetches, %" PRIu64 " skipped, %" PRIu64 " bytes out, %" PRIu64 " bytes in, "
            "%" PRIu64 " rejoins, %" PRIu64 " gradients refused (422), %" PRIu64 " waits after refusals "
            "(%.1f s)",
            r->id, r->name, r->steps, secs, secs > 0 ? (double) r->steps / secs : 0.0,
            t.pushes, t.repeats, t.accumulated, t.fetches, t.fetch_skips, t.bytes_out, t.bytes_in,
            r->rejoins, r->failures [0], r->waits, r->waited);
    /*  A step pushes to every shard: the message counts are the
        shards' sum, and say so.  */
    if (fasgd_client_shards (r->client) > 1)
        printf (" (messages and bytes summed over %zu shards)", fasgd_client_shards (r->client));
    if (!isnan (r->val_error))
        printf (", validation error %.4f", r->val_error);
    printf ("\n");
    fflush (stdout);
}

/*  Each step returns -1 to go on, or the exit status it ends the run with.  */
int
main (int argc, char **argv)
{
    s_opts_t o = { .batch = 32, .threads = 1, .timeout_ms = 5000, .gradient_scale = 1.0 };
    fasgd_log_open (argv [0], 0, FASGD_LOG_NOTICE);
    int status = s_options (&o, argc, argv);
    if (status >= 0)
        return status;

    s_run_t r;
    memset (&r, 0, sizeof r);
    r.o = &o;
    r.val_error = NAN;
    s_run_name (&r);
    status = s_connect (&r);
    if (status < 0)
        status = s_load_data (&r);
    if (status < 0) {
        s_process_setup (&o);
        status = s_join (&r);
    }
    if (status < 0) {
        status = s_session (&r);
        s_finish (&r);
    }
    s_run_free (&r);
    return status;
}
