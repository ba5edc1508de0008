/*  client: libfasgd-client's public calls (<fasgd/client.h>). A client is
    one link (link.c) per server it trains with: one for an ordinary
    server, S for a model sharded across S servers (proto/PROTOCOL.md,
    "Shards").

    With one link every call is that link's, unchanged. With S links each
    holds the part of θ its shard's WELCOME describes (offset, length) and
    works on the caller's θ and gradient buffers at that offset: its own
    timestamp j_s, its own v̄ and gates (per-shard B-FASGD), its own session
    and heartbeats. A call runs on every link at once, link 0 in the
    caller's thread and each other link in a thread of its own, and returns
    when all have answered: a step costs the slowest shard's round trip,
    not the sum of them.

    A link that fails in a way that ends its session (timeout, 401,
    malformed reply, failed handshake, θ that no server holds) is lost:
    the calls go on with the other links (the lost part of θ stays as
    last fetched, its part of each gradient is dropped), and try to join
    it again at most once a second, waiting S_PROBE_MS; joined again, it
    fetches its part before it pushes. The other links keep their
    sessions throughout. A call fails when no link answered it, or when a
    link lost in it (or sitting it out) has never put its part into the
    caller's θ since the client joined: there is no last fetched part to
    go on with, and a gradient on such a θ would be garbage to every
    shard. fasgd_client_join then joins the lost links again; when some
    do not answer and every link that does last sent θ the client refused,
    it says that no honest shard is left (FASGD_CLIENT_EPROTO).  */
#include "link.h"
#include "codec.h"

#include "log.h"
#include "shardmap.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*  Gate seeds of links after the first, when the caller sets one: each
    shard's gates draw their own numbers.  */
#define S_SEED_MIX 0x9E3779B97F4A7C15ull
/*  A lost shard is tried again at most this often, each try waiting at
    most S_PROBE_MS for its WELCOME, while the other shards train on.  */
#define S_RETRY_MS 1000
#define S_PROBE_MS 300
/*  A link's result in a call it sat out (lost, or waiting for a fetch).  */
#define S_SKIPPED 1000

static int s_fail (fasgd_client_t *self, int rc, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static int64_t
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*  One call on every link: link i's result goes to rcs [i].  */
typedef int (*s_op_t) (fasgd_client_t *self, int i, void *arg);

/*  One server of the client, and what the client keeps of it.  */
typedef struct {
    fasgd_link_t *link;
    size_t off, len;                /* its part of θ, from its WELCOME */
    uint64_t held;                  /* the timestamp of the part it holds */
    int rc;                         /* its result in the last call */
    int64_t tau;                    /* the staleness it reported in the last step */
    int lost;                       /* its session ended or may have: join it again */
    int needs_fetch;                /* joined again: its part of θ comes before its pushes */
    int have;                       /* its part is in the caller's θ, taken since the client joined */
    int64_t last_try;               /* when it was last tried while lost (s_now_ms) */
    fasgd_client_stats_t base;      /* its counts at the client's last join (0 if it joined then) */
} s_part_t;

struct fasgd_client_t {
    int nlinks;
    s_part_t *parts;
    char name [FASGD_PROTO_TEXT_MAX + 1];   /* the name of the last join, for the tries */
    int timeout_ms;
    int err_link;                   /* whose last_status and last_reason are the client's; -1 its own */
    char reason [FASGD_PROTO_TEXT_MAX + 1];
    size_t nparams;                 /* D once joined */
    fasgd_proto_desc_t desc;        /* the whole model's */
    fasgd_client_stats_t stats;

    /*  The threads of links 1 .. nlinks - 1, started at the first call
        that needs them. A call bumps gen; each thread runs op for its
        link and counts itself in finished.  */
    pthread_t *threads;
    int nthreads;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    uint64_t gen;
    int finished, quit;
    s_op_t op;
    void *arg;
};

typedef struct {
    fasgd_client_t *self;
    int index;
    uint64_t gen;                   /* the last call it is not to run */
} s_worker_arg_t;

static void *
s_worker (void *p)
{
    s_worker_arg_t a = *(s_worker_arg_t *) p;
    free (p);
    fasgd_client_t *self = a.self;
    pthread_mutex_lock (&self->lock);
    uint64_t seen = a.gen;
    for (;;) {
        while (self->gen == seen && !self->quit)
            pthread_cond_wait (&self->wake, &self->lock);
        if (self->quit)
            break;
        seen = self->gen;
        s_op_t op = self->op;
        void *arg = self->arg;
        pthread_mutex_unlock (&self->lock);
        int rc = op (self, a.index, arg);
        pthread_mutex_lock (&self->lock);
        self->parts [a.index].rc = rc;
        if (++self->finished == self->nthreads)
            pthread_cond_signal (&self->done);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

/*  Starts the threads of links 1 .. nlinks - 1, with every signal blocked
    so that the host program's handlers run in its own threads. 0, or -1
    when a thread cannot be started (the calls then run one link after
    the other).  */
static int
s_workers_start (fasgd_client_t *self)
{
    if (self->nthreads == self->nlinks - 1)
        return 0;
    if (!self->threads && !(self->threads = calloc ((size_t) self->nlinks, sizeof *self->threads)))
        return -1;
    sigset_t all, old;
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    int rc = 0;
    while (self->nthreads < self->nlinks - 1) {
        s_worker_arg_t *a = malloc (sizeof *a);
        if (!a) {
            rc = -1;
            break;
        }
        a->self = self;
        a->index = self->nthreads + 1;
        /*  It runs the calls after the current one, whenever it gets
            the lock: the next may be posted before it does.  */
        a->gen = self->gen;
        if (pthread_create (&self->threads [self->nthreads], NULL, s_worker, a) != 0) {
            free (a);
            rc = -1;
            break;
        }
        self->nthreads++;
    }
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    return rc;
}

static void
s_workers_stop (fasgd_client_t *self)
{
    if (!self->nthreads)
        return;
    pthread_mutex_lock (&self->lock);
    self->quit = 1;
    pthread_cond_broadcast (&self->wake);
    pthread_mutex_unlock (&self->lock);
    for (int i = 0; i < self->nthreads; i++)
        pthread_join (self->threads [i], NULL);
    self->nthreads = 0;
}

/*  Runs op on every link, all at once; the results in parts [i].rc.  */
static void
s_all (fasgd_client_t *self, s_op_t op, void *arg)
{
    if (self->nlinks == 1 || s_workers_start (self) != 0) {
        for (int i = 0; i < self->nlinks; i++)
            self->parts [i].rc = op (self, i, arg);
        return;
    }
    pthread_mutex_lock (&self->lock);
    self->op = op;
    self->arg = arg;
    self->finished = 0;
    self->gen++;
    pthread_cond_broadcast (&self->wake);
    pthread_mutex_unlock (&self->lock);
    self->parts [0].rc = op (self, 0, arg);
    pthread_mutex_lock (&self->lock);
    while (self->finished < self->nthreads)
        pthread_cond_wait (&self->done, &self->lock);
    pthread_mutex_unlock (&self->lock);
}

/*  An error that may have ended the link's session, or left its socket
    unusable: the link is lost, to be joined again.  */
static int
s_lost_error (int rc)
{
    return rc == FASGD_CLIENT_ETIMEOUT || rc == FASGD_CLIENT_EPROTO || rc == FASGD_CLIENT_ENOTJOINED
        || rc == FASGD_CLIENT_ESOCKET || rc == FASGD_CLIENT_EVERSION || rc == FASGD_CLIENT_ESECURITY;
}

/*  The first error among the links' results (its link's status and
    reason become the client's), else the largest result (1: one of them
    refreshed θ or was buffered).  */
static int
s_result (fasgd_client_t *self)
{
    int best = 0, err = 0;
    for (int i = 0; i < self->nlinks; i++) {
        int rc = self->parts [i].rc;
        if (s_lost_error (rc))
            self->parts [i].lost = 1;     /* the next join joins it again */
        if (rc < 0 && err == 0) {
            self->err_link = i;
            err = rc;
        }
        else
        if (rc > best)
            best = rc;
    }
    return err ? err : best;
}

/*  The result of a training call on S links: a shard lost in it (or
    before) does not fail the call while another shard answered: it is
    marked lost, said once in the log, and tried again by later calls
    (s_guarded). Other errors are the call's, as in s_result; so is a lost
    shard's when no shard answered. Links that sat the call out count for
    nothing.  */
static int
s_result_sharded (fasgd_client_t *self)
{
    int best = 0, answered = 0, err = 0, lost_err = 0, missing = -1;
    for (int i = 0; i < self->nlinks; i++) {
        int rc = self->parts [i].rc;
        if (fasgd_link_fetched (self->parts [i].link))
            self->parts [i].have = 1;
        if (rc == S_SKIPPED) {
            if (!self->parts [i].have && missing < 0)
                missing = i;
            continue;
        }
        if (rc >= 0) {
            answered++;
            best = rc > best ? rc : best;
        }
        else
        if (s_lost_error (rc)) {
            if (!self->parts [i].have)
                fasgd_log_warn ("client: the shard at endpoint %d: %s (%s); no part of θ from it since the "
                                "client joined, so no step", i + 1, fasgd_client_strerror (rc),
                                fasgd_link_last_reason (self->parts [i].link));
            else
            if (!self->parts [i].lost)
                fasgd_log_warn ("client: the shard at endpoint %d: %s (%s); the other shards train on, "
                                "and it is tried again every %d ms", i + 1, fasgd_client_strerror (rc),
                                fasgd_link_last_reason (self->parts [i].link), S_RETRY_MS);
            self->parts [i].lost = 1;
            self->parts [i].last_try = s_now_ms ();
            if (!self->parts [i].have && missing < 0) {
                missing = i;
                if (!err) {
                    err = rc;
                    self->err_link = i;
                }
            }
            if (!lost_err) {
                lost_err = rc;
                if (!err)
                    self->err_link = i;
            }
        }
        else
        if (!err) {
            err = rc;
            self->err_link = i;
        }
    }
    if (err)
        return err;
    if (missing >= 0)
        return s_fail (self, FASGD_CLIENT_ENOTJOINED, "the shard at endpoint %d has not sent its part of θ "
                       "since the client joined: no step without the whole θ", missing + 1);
    if (answered)
        return best;
    /*  No shard answered: the caller's way back (fasgd_client_join).  */
    if (lost_err)
        return lost_err;
    return s_fail (self, FASGD_CLIENT_ENOTJOINED, "every shard is lost: join again");
}

/*  A comma-separated list's n-th item into a fresh string.  */
static char *
s_item (const char *list, int n)
{
    const char *p = list;
    for (int i = 0; i < n; i++)
        p = strchr (p, ',') + 1;
    const char *end = strchr (p, ',');
    size_t len = end ? (size_t) (end - p) : strlen (p);
    char *s = malloc (len + 1);
    if (s) {
        memcpy (s, p, len);
        s [len] = '\0';
    }
    return s;
}

static int
s_count (const char *list)
{
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    return n;
}

fasgd_client_t *
fasgd_client_new (const char *push_endpoint, const char *fetch_endpoint)
{
    if (!push_endpoint || !fetch_endpoint)
        return NULL;
    int n = s_count (push_endpoint);
    if (n != s_count (fetch_endpoint) || n > FASGD_SHARDMAP_MAX)
        return NULL;
    fasgd_client_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->nlinks = n;
    self->err_link = -1;
    self->timeout_ms = 5000;
    pthread_mutex_init (&self->lock, NULL);
    pthread_cond_init (&self->wake, NULL);
    pthread_cond_init (&self->done, NULL);
    if (!(self->parts = calloc ((size_t) n, sizeof *self->parts)))
        goto fail;
    for (int i = 0; i < n; i++) {
        char *push = s_item (push_endpoint, i), *fetch = s_item (fetch_endpoint, i);
        self->parts [i].link = push && fetch ? fasgd_link_new (push, fetch) : NULL;
        free (push);
        free (fetch);
        if (!self->parts [i].link)
            goto fail;
    }
    return self;
fail:
    fasgd_client_destroy (&self);
    return NULL;
}

void
fasgd_client_destroy (fasgd_client_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_client_t *self = *self_p;
    s_workers_stop (self);
    for (int i = 0; self->parts && i < self->nlinks; i++)
        fasgd_link_destroy (&self->parts [i].link);
    free (self->parts);
    free (self->threads);
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->wake);
    pthread_cond_destroy (&self->done);
    free (self);
    *self_p = NULL;
}

size_t
fasgd_client_shards (const fasgd_client_t *self)
{
    return self ? (size_t) self->nlinks : 0;
}

void
fasgd_client_set_timeout (fasgd_client_t *self, int timeout_ms)
{
    if (self && timeout_ms >= 1)
        self->timeout_ms = timeout_ms;
    for (int i = 0; self && i < self->nlinks; i++)
        fasgd_link_set_timeout (self->parts [i].link, timeout_ms);
}

int
fasgd_client_set_curve (fasgd_client_t *self, const char *server_key, const char *cert_file)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    /*  Shards with keys of their own: one key (or certificate file) per
        endpoint, in their order, separated by commas (Z85 has none).  */
    int listed = server_key && strchr (server_key, ',');
    if (listed && s_count (server_key) != self->nlinks)
        return s_fail (self, FASGD_CLIENT_EINVAL, "%d server keys for %d shards: give one, or one per shard",
                       s_count (server_key), self->nlinks);
    for (int i = 0; i < self->nlinks; i++) {
        char *key = listed ? s_item (server_key, i) : NULL;
        if (listed && !key)
            return s_fail (self, FASGD_CLIENT_ENOMEM, "out of memory");
        int rc = fasgd_link_set_curve (self->parts [i].link, listed ? key : server_key, cert_file);
        free (key);
        if (rc != 0) {
            self->err_link = i;
            return rc;
        }
    }
    return 0;
}

const char *
fasgd_client_public_key (const fasgd_client_t *self)
{
    return self ? fasgd_link_public_key (self->parts [0].link) : "";
}

void
fasgd_client_set_seed (fasgd_client_t *self, uint64_t seed)
{
    if (!self)
        return;
    for (int i = 0; i < self->nlinks; i++)
        fasgd_link_set_seed (self->parts [i].link, seed ^ ((uint64_t) i * S_SEED_MIX));
}

/*  The client's failure with a reason of its own (not a link's).  */
static int
s_fail (fasgd_client_t *self, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (self->reason, sizeof self->reason, fmt, ap);
    va_end (ap);
    self->err_link = -1;
    fasgd_log_warn ("client: %s", self->reason);
    return rc;
}

static int s_leave_op (fasgd_client_t *self, int i, void *arg);

static int
s_join_op (fasgd_client_t *self, int i, void *arg)
{
    s_part_t *p = &self->parts [i];
    if (fasgd_link_joined (p->link) && !p->lost) {
        /*  A join starts the client's counts afresh, as it does a
            link's.  */
        p->base = *fasgd_link_stats (p->link);
        return 0;
    }
    memset (&p->base, 0, sizeof p->base);
    int rc = fasgd_link_join (p->link, (const char *) arg);
    if (rc == 0) {
        p->lost = 0;
        p->needs_fetch = 0;
        p->held = 0;
    }
    return rc;
}

/*  The shards' descriptions fit together: the same model, S shards for
    the S endpoints, each once, their parts covering θ end to end.  */
static int
s_shards_check (fasgd_client_t *self)
{
    const fasgd_proto_desc_t *first = fasgd_link_desc (self->parts [0].link);
    uint64_t covered = 0;
    char *seen = calloc ((size_t) self->nlinks, 1);
    if (!seen)
        return s_fail (self, FASGD_CLIENT_ENOMEM, "out of memory");
    int rc = 0;
    for (int i = 0; i < self->nlinks && rc == 0; i++) {
        const fasgd_proto_desc_t *d = fasgd_link_desc (self->parts [i].link);
        if (d->shards != (uint32_t) self->nlinks)
            rc = s_fail (self, FASGD_CLIENT_EPROTO, "endpoint %d of %d is a server of %" PRIu32 " shard%s",
                         i + 1, self->nlinks, d->shards, d->shards == 1 ? "" : "s");
        else
        if (seen [d->shard])
            rc = s_fail (self, FASGD_CLIENT_EPROTO, "endpoints %d and another are both shard %" PRIu32,
                         i + 1, d->shard);
        else
        if (d->params != first->params || d->ntensors != first->ntensors
            || memcmp (d->tensors, first->tensors, sizeof d->tensors) != 0
            || strcmp (d->model, first->model) != 0)
            rc = s_fail (self, FASGD_CLIENT_EPROTO, "endpoint %d describes another model than endpoint 1",
                         i + 1);
        else {
            seen [d->shard] = 1;
            /*  Another part at this endpoint: what the caller's θ holds
                there is not its.  */
            if (self->parts [i].off != (size_t) d->offset || self->parts [i].len != (size_t) d->length)
                self->parts [i].have = 0;
            self->parts [i].off = (size_t) d->offset;
            self->parts [i].len = (size_t) d->length;
            covered += d->length;
        }
    }
    free (seen);
    if (rc == 0 && covered != first->params)
        rc = s_fail (self, FASGD_CLIENT_EPROTO, "the shards hold %" PRIu64 " of %" PRIu64 " parameters",
                     covered, first->params);
    /*  Parts that cover D with distinct shards of one map may still
        overlap if a server lies: every value must be someone's once.  */
    for (int i = 0; rc == 0 && i < self->nlinks; i++)
        for (int j = i + 1; j < self->nlinks; j++) {
            const s_part_t *a = &self->parts [i], *b = &self->parts [j];
            if (a->off < b->off + b->len && b->off < a->off + a->len) {
                rc = s_fail (self, FASGD_CLIENT_EPROTO, "shards %" PRIu32 " and %" PRIu32 " overlap",
                             fasgd_link_desc (a->link)->shard, fasgd_link_desc (b->link)->shard);
                break;
            }
        }
    if (rc == 0) {
        self->desc = *first;
        self->desc.shard = 0;
        self->desc.shards = 1;
        self->desc.offset = 0;
        self->desc.length = first->params;
        self->nparams = (size_t) first->params;
    }
    return rc;
}

/*  A join of S links that failed with rc, a lost link's error: when
    every shard that answered it last sent θ no server holds (refused,
    and none taken from it since), and the others do not answer, no shard
    is left whose θ the client can take; said, as FASGD_CLIENT_EPROTO.
    Else rc.  */
static int
s_no_honest_shard (fasgd_client_t *self, int rc)
{
    char bad [128] = "";
    size_t len = 0;
    for (int i = 0; i < self->nlinks; i++) {
        if (self->parts [i].rc != 0)
            continue;
        if (fasgd_link_theta_refused (self->parts [i].link) == 0)
            return rc;
        if (len < sizeof bad)
            len += (size_t) snprintf (bad + len, sizeof bad - len, "%s%d", len ? ", " : "", i + 1);
    }
    if (!len)
        return rc;
    char reason [sizeof self->reason];
    snprintf (reason, sizeof reason, "%s", fasgd_client_last_reason (self));
    return s_fail (self, FASGD_CLIENT_EPROTO, "no honest shard left: endpoint %s answers but sent θ no server "
                   "holds, and the others do not (%s)", bad, reason);
}

int
fasgd_client_join (fasgd_client_t *self, const char *name)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        int rc = fasgd_link_join (self->parts [0].link, name);
        const fasgd_proto_desc_t *d = rc == 0 ? fasgd_link_desc (self->parts [0].link) : NULL;
        if (d && d->shards > 1) {
            /*  One part of θ is not θ: the caller's buffers are D long.  */
            uint32_t shard = d->shard, shards = d->shards;
            fasgd_link_leave (self->parts [0].link);
            return s_fail (self, FASGD_CLIENT_EPROTO, "the server is shard %" PRIu32 " of %" PRIu32
                           ": give the push and fetch endpoints of all %" PRIu32 " shards",
                           shard, shards, shards);
        }
        return rc;
    }
    snprintf (self->name, sizeof self->name, "%s", name ? name : "");
    /*  A first join (or one after a leave): the caller's θ holds nothing
        of the shards yet.  */
    for (int i = 0; !self->nparams && i < self->nlinks; i++)
        self->parts [i].have = 0;
    /*  The links still joined keep their sessions: only those that lost
        theirs join again (all of them the first time).  */
    s_all (self, s_join_op, (void *) name);
    int rc = s_result (self);
    if (s_lost_error (rc))
        rc = s_no_honest_shard (self, rc);
    if (rc == 0 && (rc = s_shards_check (self)) != 0) {
        /*  Servers that do not fit together: none of them keeps us.  */
        int keep = self->err_link;
        char reason [sizeof self->reason];
        memcpy (reason, self->reason, sizeof reason);
        s_all (self, s_leave_op, NULL);
        for (int i = 0; i < self->nlinks; i++)
            self->parts [i].lost = 1;
        self->err_link = keep;
        memcpy (self->reason, reason, sizeof reason);
    }
    if (rc != 0) {
        self->nparams = 0;
        return rc;
    }
    fasgd_log_debug ("client: joined %d shards, %zu parameters", self->nlinks, self->nparams);
    return 0;
}

const fasgd_proto_desc_t *
fasgd_client_desc (const fasgd_client_t *self)
{
    if (!self)
        return NULL;
    if (self->nlinks == 1)
        return fasgd_link_desc (self->parts [0].link);
    return self->nparams ? &self->desc : NULL;
}

uint32_t
fasgd_client_id (const fasgd_client_t *self)
{
    return self ? fasgd_link_id (self->parts [0].link) : 0;
}

size_t
fasgd_client_nparams (const fasgd_client_t *self)
{
    if (!self)
        return 0;
    return self->nlinks == 1 ? fasgd_link_nparams (self->parts [0].link) : self->nparams;
}

/*  The arguments of one call, for its links: on S links, op is the
    link's call (run by s_guarded), fetches says it fetches the link's
    part itself.  */
typedef struct {
    s_op_t op;
    int fetches;
    const float *grad;
    float *theta;
    int if_newer;
    double error, nll;
    uint64_t examples;
} s_call_t;

/*  The shards' timestamps as one number: their sum, which grows with
    every update of any shard.  */
static uint64_t
s_held_sum (const fasgd_client_t *self)
{
    uint64_t sum = 0;
    for (int i = 0; i < self->nlinks; i++)
        sum += self->parts [i].held;
    return sum;
}

/*  Calls on S links need the shards' map: joined, and the caller's buffer
    checks done.  */
static int
s_ready (fasgd_client_t *self)
{
    if (!self->nparams)
        return s_fail (self, FASGD_CLIENT_ENOTJOINED, "not joined to every shard");
    return 0;
}

/*  A lost link's try, at most every S_RETRY_MS and waiting at most
    S_PROBE_MS: 1 when it joined again, as the same shard of the same
    model (its part must be the one the client holds), else 0.  */
static int
s_probe (fasgd_client_t *self, int i)
{
    s_part_t *p = &self->parts [i];
    int64_t now = s_now_ms ();
    if (now - p->last_try < S_RETRY_MS)
        return 0;
    p->last_try = now;
    fasgd_link_t *l = p->link;
    fasgd_link_set_timeout (l, self->timeout_ms < S_PROBE_MS ? self->timeout_ms : S_PROBE_MS);
    int rc = fasgd_link_join (l, *self->name ? self->name : NULL);
    fasgd_link_set_timeout (l, self->timeout_ms);
    if (rc != 0)
        return 0;
    const fasgd_proto_desc_t *d = fasgd_link_desc (l);
    if (d->shards != (uint32_t) self->nlinks || d->params != self->nparams || d->offset != p->off
        || d->length != p->len) {
        fasgd_log_warn ("client: the shard at endpoint %d came back holding another part of the model; "
                        "left alone", i + 1);
        fasgd_link_leave (l);
        return 0;
    }
    memset (&p->base, 0, sizeof p->base);
    p->lost = 0;
    p->needs_fetch = 1;
    p->held = 0;
    fasgd_log_notice ("client: joined the shard at endpoint %d again", i + 1);
    return 1;
}

/*  Link i's part in a training call: a lost link is tried again first
    (and sits the call out if it is still lost); a link joined again gets
    its part of θ before it pushes: the call's own fetch when it has one,
    else a fetch here when the call carries θ (it sits out a call without
    θ). Then the link's call, c->op.  */
static int
s_guarded (fasgd_client_t *self, int i, void *arg)
{
    s_call_t *c = arg;
    s_part_t *p = &self->parts [i];
    p->tau = -1;
    if (p->lost && !s_probe (self, i))
        return S_SKIPPED;
    int rc;
    if (p->needs_fetch && !c->fetches) {
        if (!c->theta)
            return S_SKIPPED;
        rc = fasgd_link_fetch (p->link, c->theta + p->off, &p->held, 0);
        if (rc >= 0)
            p->needs_fetch = 0;
        return rc < 0 ? rc : 1;
    }
    rc = c->op (self, i, c);
    if (c->fetches && rc >= 0)
        p->needs_fetch = 0;
    return rc;
}

/*  One call on S links: op on every link with c, the result, and the
    shards' summed timestamp in *ts when ts is not NULL.  */
static int
s_sharded (fasgd_client_t *self, s_op_t op, s_call_t *c, uint64_t *ts)
{
    int rc = s_ready (self);
    if (rc != 0)
        return rc;
    c->op = op;
    s_all (self, s_guarded, c);
    rc = s_result_sharded (self);
    if (ts)
        *ts = s_held_sum (self);
    return rc;
}

static int
s_fetch_op (fasgd_client_t *self, int i, void *arg)
{
    s_call_t *c = arg;
    s_part_t *p = &self->parts [i];
    /*  A link joined again fetches whatever the caller's timestamp.  */
    return fasgd_link_fetch (p->link, c->theta + p->off, &p->held, c->if_newer && !p->needs_fetch);
}

int
fasgd_client_fetch (fasgd_client_t *self, float *theta, uint64_t *timestamp, int if_newer)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_fetch (self->parts [0].link, theta, timestamp, if_newer);
    }
    if (!theta || !timestamp)
        return FASGD_CLIENT_EINVAL;
    s_call_t c = { .fetches = 1, .theta = theta, .if_newer = if_newer };
    int rc = s_sharded (self, s_fetch_op, &c, timestamp);
    if (rc < 0)
        return rc;
    /*  1 (not modified) only when no shard sent anything.  */
    for (int i = 0; i < self->nlinks; i++)
        if (self->parts [i].rc == 0)
            return 0;
    return 1;
}

static int
s_push_op (fasgd_client_t *self, int i, void *arg)
{
    s_call_t *c = arg;
    s_part_t *p = &self->parts [i];
    return fasgd_link_push (p->link, c->grad + p->off, p->held);
}

int
fasgd_client_push (fasgd_client_t *self, const float *grad, uint64_t timestamp)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_push (self->parts [0].link, grad, timestamp);
    }
    if (!grad)
        return FASGD_CLIENT_EINVAL;
    s_call_t c = { .grad = grad };
    return s_sharded (self, s_push_op, &c, NULL);
}

int
fasgd_client_push_n (fasgd_client_t *self, const float *grad, size_t n, uint64_t timestamp)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_push_n (self->parts [0].link, grad, n, timestamp);
    }
    int rc = s_ready (self);
    if (rc != 0)
        return rc;
    if (n != self->nparams)
        return FASGD_CLIENT_EINVAL;
    return fasgd_client_push (self, grad, timestamp);
}

static int
s_repeat_op (fasgd_client_t *self, int i, void *arg)
{
    (void) arg;
    return fasgd_link_push_repeat (self->parts [i].link);
}

int
fasgd_client_push_repeat (fasgd_client_t *self)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_push_repeat (self->parts [0].link);
    }
    s_call_t c = { 0 };
    return s_sharded (self, s_repeat_op, &c, NULL);
}

/*  Every link's gate draws; 1 when any would transmit.  */
static int
s_want (fasgd_client_t *self, int (*want) (fasgd_link_t *))
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    int any = 0;
    for (int i = 0; i < self->nlinks; i++) {
        int rc = want (self->parts [i].link);
        if (rc < 0)
            return rc;
        any |= rc > 0;
    }
    return any;
}

int
fasgd_client_want_fetch (fasgd_client_t *self)
{
    return s_want (self, fasgd_link_want_fetch);
}

int
fasgd_client_want_push (fasgd_client_t *self)
{
    return s_want (self, fasgd_link_want_push);
}

static int
s_push_gated_op (fasgd_client_t *self, int i, void *arg)
{
    s_call_t *c = arg;
    s_part_t *p = &self->parts [i];
    return fasgd_link_push_gated (p->link, c->grad + p->off, p->held);
}

int
fasgd_client_push_gated (fasgd_client_t *self, const float *grad, uint64_t timestamp)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_push_gated (self->parts [0].link, grad, timestamp);
    }
    if (!grad)
        return FASGD_CLIENT_EINVAL;
    s_call_t c = { .grad = grad };
    return s_sharded (self, s_push_gated_op, &c, NULL);
}

static int
s_fetch_gated_op (fasgd_client_t *self, int i, void *arg)
{
    s_call_t *c = arg;
    s_part_t *p = &self->parts [i];
    /*  A link joined again always fetches: its gate's first decision.  */
    return fasgd_link_fetch_gated (p->link, c->theta + p->off, &p->held);
}

int
fasgd_client_fetch_gated (fasgd_client_t *self, float *theta, uint64_t *timestamp)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_fetch_gated (self->parts [0].link, theta, timestamp);
    }
    if (!theta || !timestamp)
        return FASGD_CLIENT_EINVAL;
    s_call_t c = { .fetches = 1, .theta = theta };
    return s_sharded (self, s_fetch_gated_op, &c, timestamp);
}

static int
s_push_fetch_op (fasgd_client_t *self, int i, void *arg)
{
    s_call_t *c = arg;
    s_part_t *p = &self->parts [i];
    return fasgd_link_push_fetch (p->link, c->grad + p->off, p->held,
                                  c->theta + p->off, &p->held);
}

int
fasgd_client_push_fetch (fasgd_client_t *self, const float *grad, uint64_t timestamp,
                         float *theta, uint64_t *new_timestamp)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_push_fetch (self->parts [0].link, grad, timestamp, theta, new_timestamp);
    }
    if (!grad || !theta || !new_timestamp)
        return FASGD_CLIENT_EINVAL;
    s_call_t c = { .grad = grad, .theta = theta };
    return s_sharded (self, s_push_fetch_op, &c, new_timestamp);
}

static int
s_step_op (fasgd_client_t *self, int i, void *arg)
{
    s_call_t *c = arg;
    s_part_t *p = &self->parts [i];
    return fasgd_link_step_gated (p->link, c->grad + p->off, c->theta + p->off,
                                  &p->held, &p->tau);
}

int
fasgd_client_step_gated (fasgd_client_t *self, const float *grad, float *theta,
                         uint64_t *timestamp, int64_t *tau)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_step_gated (self->parts [0].link, grad, theta, timestamp, tau);
    }
    if (tau)
        *tau = -1;
    if (!grad || !theta || !timestamp)
        return FASGD_CLIENT_EINVAL;
    s_call_t c = { .grad = grad, .theta = theta };
    int rc = s_sharded (self, s_step_op, &c, timestamp);
    /*  The staleness of the step: the largest of the shards'.  */
    for (int i = 0; tau && rc >= 0 && i < self->nlinks; i++)
        if (self->parts [i].tau > *tau)
            *tau = self->parts [i].tau;
    return rc;
}

static int
s_eval_op (fasgd_client_t *self, int i, void *arg)
{
    s_call_t *c = arg;
    return fasgd_link_eval (self->parts [i].link, c->error, c->nll, c->examples);
}

int
fasgd_client_eval (fasgd_client_t *self, double error, double nll, uint64_t examples)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_eval (self->parts [0].link, error, nll, examples);
    }
    s_call_t c = { .error = error, .nll = nll, .examples = examples };
    s_all (self, s_eval_op, &c);
    return s_result (self);
}

static int
s_leave_op (fasgd_client_t *self, int i, void *arg)
{
    (void) arg;
    return fasgd_link_leave (self->parts [i].link);
}

int
fasgd_client_leave (fasgd_client_t *self)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (self->nlinks == 1) {
        self->err_link = 0;
        return fasgd_link_leave (self->parts [0].link);
    }
    s_all (self, s_leave_op, NULL);
    self->nparams = 0;
    return s_result (self);
}

double
fasgd_client_vbar (const fasgd_client_t *self)
{
    if (!self)
        return 0;
    double sum = 0;
    for (int i = 0; i < self->nlinks; i++)
        sum += fasgd_link_vbar (self->parts [i].link);
    return sum / self->nlinks;
}

uint64_t
fasgd_client_server_timestamp (const fasgd_client_t *self)
{
    uint64_t sum = 0;
    for (int i = 0; self && i < self->nlinks; i++)
        sum += fasgd_link_server_timestamp (self->parts [i].link);
    return sum;
}

int
fasgd_client_last_status (const fasgd_client_t *self)
{
    if (!self)
        return 0;
    return self->err_link >= 0 ? fasgd_link_last_status (self->parts [self->err_link].link) : 0;
}

const char *
fasgd_client_last_reason (const fasgd_client_t *self)
{
    if (!self)
        return "";
    if (self->err_link < 0)
        return self->reason;
    if (self->nlinks == 1)
        return fasgd_link_last_reason (self->parts [0].link);
    /*  Which shard said it.  */
    fasgd_client_t *m = (fasgd_client_t *) self;
    snprintf (m->reason, sizeof m->reason, "shard at endpoint %d: %s", self->err_link + 1,
              fasgd_link_last_reason (self->parts [self->err_link].link));
    return m->reason;
}

const fasgd_client_stats_t *
fasgd_client_stats (const fasgd_client_t *self)
{
    if (!self)
        return NULL;
    if (self->nlinks == 1)
        return fasgd_link_stats (self->parts [0].link);
    /*  The links' counts summed, into the client's own copy.  */
    fasgd_client_t *m = (fasgd_client_t *) self;
    memset (&m->stats, 0, sizeof m->stats);
    for (int i = 0; i < self->nlinks; i++) {
        const fasgd_client_stats_t *s = fasgd_link_stats (self->parts [i].link), *b = &self->parts [i].base;
        m->stats.pushes += s->pushes - b->pushes;
        m->stats.repeats += s->repeats - b->repeats;
        m->stats.accumulated += s->accumulated - b->accumulated;
        m->stats.fetches += s->fetches - b->fetches;
        m->stats.fetch_skips += s->fetch_skips - b->fetch_skips;
        m->stats.bytes_out += s->bytes_out - b->bytes_out;
        m->stats.bytes_in += s->bytes_in - b->bytes_in;
    }
    return &m->stats;
}

const char *
fasgd_client_strerror (int err)
{
    switch (err) {
        case 0:                         return "success";
        case FASGD_CLIENT_ETIMEOUT:     return "no reply from the server within the timeout";
        case FASGD_CLIENT_EPROTO:       return "malformed reply from the server";
        case FASGD_CLIENT_EREFUSED:     return "the server refused the request";
        case FASGD_CLIENT_ENOTJOINED:   return "not joined (or no longer known to the server)";
        case FASGD_CLIENT_EINVAL:       return "invalid argument";
        case FASGD_CLIENT_ENOMEM:       return "out of memory";
        case FASGD_CLIENT_ESOCKET:      return "cannot create or connect a socket";
        case FASGD_CLIENT_EVERSION:     return "the server speaks another protocol version";
        case FASGD_CLIENT_ESECURITY:    return "the secure handshake with the server failed";
        default:                        return "unknown error";
    }
}

int
fasgd_client_set_log_level (const char *level)
{
    int parsed = level ? fasgd_log_level_parse (level) : -1;
    if (parsed < 0)
        return FASGD_CLIENT_EINVAL;
    fasgd_log_set_level ((fasgd_log_level_t) parsed);
    return 0;
}

const char *
fasgd_client_version (void)
{
    return PACKAGE_VERSION;
}

size_t
fasgd_client_sizeof (const char *type)
{
    if (!type)
        return 0;
    if (strcmp (type, "fasgd_proto_desc_t") == 0)
        return sizeof (fasgd_proto_desc_t);
    if (strcmp (type, "fasgd_client_stats_t") == 0)
        return sizeof (fasgd_client_stats_t);
    return 0;
}
