/*  server: the fasgd-server engine (see server.h and proto/PROTOCOL.md).

    One thread owns θ, the rule and the registry, and serves both ROUTER
    sockets from a poll loop: updates are applied atomically, one at a
    time, in arrival order (the paper's async protocol). Fetch replies
    point ZeroMQ at a shared immutable snapshot of θ, one per timestamp,
    reference-counted and recycled (ZeroMQ's I/O thread drops its
    reference when the frame has gone), so a fetch costs no copy beyond
    the first at each timestamp and never faults in fresh pages. A second
    thread evaluates snapshots on the validation set. A third ROUTER
    socket, the control socket, answers STATUS and CHECKPOINT from the
    same loop: a STATUS reply is built from counters the loop keeps
    anyway, so asking costs the updates nothing but its own formatting.  */
#include "server.h"

#include "affinity.h"
#include "codec.h"
#include "floats.h"
#include "log.h"
#include "rng.h"
#include "snapshot.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define S_STREAM_INIT 2                 /* the simulator's: same seed, same θ0 */
/*  An external model's size: a gradient message of 4·D bytes stays
    within what one ZeroMQ message and a size_t comfortably hold.  */
#define S_EXTERNAL_MAX_PARAMS ((uint64_t) 1 << 30)
#define S_BATCH_PER_WAKE 256            /* messages handled per poll wake-up */
#define S_CKPT_MAGIC "FASGDCK1"
#define S_CONTROL_MAXMSG 4096           /* a control request is one short word */
#define S_CONTROL_PER_WAKE 8            /* control requests handled per poll wake-up */
#define S_CONTROL_HWM 16                /* control messages queued per peer and direction */
#define S_TAU_BUCKETS 12                /* 0, 1, 2-3, 4-7, ..., 512-1023, 1024+ */
#define S_WINDOW_SAMPLES 11             /* a sample a second: rates over the last 10 s */


/*  An immutable image of θ at one timestamp, in wire byte order. On a
    little-endian host θ is its own wire image, so the current snapshot is
    θ's own buffer, shared by every fetch of its timestamp and updated in
    place when nobody else holds it (copy on write: s_theta_update);
    elsewhere a snapshot is an encoded copy made at the first fetch.
    Snapshots come from common/snapshot.h, as the simulator's do.  */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define S_SHARED_THETA 1
#else
#define S_SHARED_THETA 0
#endif

typedef struct {
    uint32_t id;
    char name [64];
    int64_t joined_ms, last_seen_ms;
    uint64_t pushes, repeats, fetches, not_modified;
    uint64_t last_tau;
    int has_pushed;
    float *last;                        /* resend-last cache */
    uint64_t last_ts;
    fasgd_snapshot_t *snap;                     /* θ_used, for the rules that need it */
} s_client_t;

typedef struct {
    uint64_t pushes, buffered, repeats, fetches, not_modified, joins, leaves, expired, heartbeats, evals;
    uint64_t malformed, unknown, conflict, nonfinite, version, refused;
    uint64_t bytes_in, bytes_out;
    double tau_sum;
    uint64_t tau_count, tau_max;
    uint64_t tau_hist [S_TAU_BUCKETS];  /* applied gradients by τ, bucket k ≥ 1: 2^(k-1) ≤ τ < 2^k */
} s_stats_t;

/*  The counters at one moment, for rates over a recent window.  */
typedef struct {
    int64_t ms;
    uint64_t T;
    s_stats_t st;
} s_sample_t;

struct fasgd_server_t {
    fasgd_server_cfg_t cfg;
    zsock_t *push, *fetch, *control;   /* control: NULL when disabled */
    char push_ep [256], fetch_ep [256], control_ep [256];
    fasgd_model_t *model;               /* NULL for an external model */
    fasgd_proto_tensor_t ext_tensors [FASGD_PROTO_MAX_TENSORS];
    int ext_ntensors;
    fasgd_rule_t *rule;
    size_t n;
    float *theta;
    float *grad;                        /* receive buffer for non-aligned bodies */
    uint64_t T;
    int needs_used, cache_last;
    fasgd_dataset_t *valid;
    char desc [FASGD_PROTO_DESC_MAX];
    int desc_len;

    s_client_t **clients;               /* by id - 1 */
    uint32_t next_id;
    size_t live;
    uint64_t cache_bytes;

    fasgd_snapshot_t *current;
    fasgd_snapshot_pool_t *snaps;

    s_stats_t st, st_last;              /* st_last: at the last status line */
    int64_t started_ms, last_status_ms, last_ckpt_ms, last_expiry_ms;
    uint64_t last_ckpt_T;
    int ckpt_written;                   /* one written by this process */
    s_sample_t window [S_WINDOW_SAMPLES];   /* a ring, oldest at window_next once full */
    int window_next, window_count;
    int64_t last_sample_ms;
    volatile sig_atomic_t stopping;

    /*  The evaluator.  */
    pthread_t eval_thread;
    int eval_running;
    pthread_mutex_t eval_lock;
    pthread_cond_t eval_wake;
    fasgd_snapshot_t *eval_snap;                /* handed over, not yet taken */
    fasgd_cpus_t eval_cpus;             /* where it runs when cpu pins the rest */
    s_stats_t eval_st;
    size_t eval_clients;
    /*  The CSV's staleness columns cover the gradients applied between two
        rows: the largest τ since the last hand-off (the main thread's,
        then the handed-over one's), and the counters of the last row.  */
    uint64_t iv_tau_max, eval_tau_max;
    s_stats_t csv_prev;
    int eval_quit;
    double last_error, last_nll;
    int eval_done;                      /* last_error and last_nll hold a result */
    uint64_t eval_done_T;               /* the timestamp of the parameters evaluated */
    int64_t eval_done_ms;
    FILE *csv;
};

/* ------------------------------------------------------------------ */
/*  Snapshots                                                           */

/*  The snapshot of θ at T, with a reference for the caller; NULL out of
    memory.  */
static fasgd_snapshot_t *
s_snapshot_take (fasgd_server_t *self)
{
#if S_SHARED_THETA
    return fasgd_snapshot_ref (self->current);
#else
    if (self->current && self->current->ts == self->T)
        return fasgd_snapshot_ref (self->current);
    fasgd_snapshot_t *snap = fasgd_snapshot_new (self->snaps);
    if (!snap)
        return NULL;
    fasgd_proto_floats_encode (self->theta, self->n, snap->theta);
    snap->ts = self->T;
    fasgd_snapshot_t *old = self->current;
    self->current = fasgd_snapshot_ref (snap);      /* the caller's and current's */
    fasgd_snapshot_release (old);
    return snap;
#endif
}

/*  Applies g to θ with the rule; returns as fasgd_rule_apply, or -2 out
    of memory. With shared snapshots, when a reply being sent, the
    evaluator or a client's θ_used still holds the current buffer, the
    rule writes the new θ into a fresh one, which becomes current only if
    the rule updated θ; otherwise θ is updated in place.  */
static int
s_theta_update (fasgd_server_t *self, const float *g, uint64_t tau, const float *used)
{
#if S_SHARED_THETA
    int rc = fasgd_snapshot_apply (&self->current, self->rule, g, tau, used);
    self->theta = self->current->theta;
    return rc;
#else
    return fasgd_rule_apply (self->rule, self->theta, g, tau, used);
#endif
}

static void
s_snap_zmq_free (void *data, void *hint)
{
    (void) data;
    fasgd_snapshot_release (hint);
}

/* ------------------------------------------------------------------ */
/*  Replies                                                             */

static int64_t
s_now_ms (void)
{
    return zclock_mono ();
}

/*  Sends [identity][header][body]; body_snap, when given, is sent without
    a copy and released once ZeroMQ is done with it.  */
static void
s_reply (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *h,
         const void *body, size_t body_len, fasgd_snapshot_t *body_snap)
{
    uint8_t head [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (h, head);
    zmq_msg_t id, hm;
    zmq_msg_init (&id);
    zmq_msg_copy (&id, identity);
    int more = body || body_snap ? ZMQ_SNDMORE : 0;
    zmq_msg_init_size (&hm, sizeof head);
    memcpy (zmq_msg_data (&hm), head, sizeof head);
    if (zmq_msg_send (&id, sock, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0
        || zmq_msg_send (&hm, sock, more | ZMQ_DONTWAIT) < 0) {
        zmq_msg_close (&id);
        zmq_msg_close (&hm);
        fasgd_snapshot_release (body_snap);
        return;                         /* the peer is gone or too slow: drop */
    }
    self->st.bytes_out += sizeof head;
    if (!more)
        return;
    zmq_msg_t bm;
    if (body_snap)
        zmq_msg_init_data (&bm, body_snap->theta, body_len, s_snap_zmq_free, body_snap);
    else {
        zmq_msg_init_size (&bm, body_len);
        memcpy (zmq_msg_data (&bm), body, body_len);
    }
    if (zmq_msg_send (&bm, sock, ZMQ_DONTWAIT) < 0)
        zmq_msg_close (&bm);            /* releases the snapshot */
    else
        self->st.bytes_out += body_len;
}

/*  A reply's header: its type and status, the request's client id and
    seq (0 without a request), and the server's T and v̄.  */
static fasgd_header_t
s_reply_header (fasgd_server_t *self, const fasgd_header_t *req, int type, int status)
{
    fasgd_header_t h = {
        .version = FASGD_PROTO_VERSION, .type = (uint8_t) type, .status = (uint16_t) status,
        .client_id = req ? req->client_id : 0, .seq = req ? req->seq : 0, .timestamp = self->T,
        .vbar = fasgd_rule_vbar (self->rule)
    };
    return h;
}

static void
s_reply_error (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
               int status, const char *fmt, ...) __attribute__ ((format (printf, 6, 7)));

static void
s_reply_error (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
               int status, const char *fmt, ...)
{
    char reason [FASGD_PROTO_TEXT_MAX + 1];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (reason, sizeof reason, fmt, ap);
    va_end (ap);
    fasgd_header_t h = s_reply_header (self, req, FASGD_MSG_ERROR, status);
    fasgd_log_info ("refused %s from client %u: %d %s", req ? fasgd_proto_type_name (req->type) : "?",
                    h.client_id, status, reason);
    s_reply (self, sock, identity, &h, reason, strlen (reason), NULL);
}

static void
s_reply_ack (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
             int status)
{
    fasgd_header_t h = s_reply_header (self, req, FASGD_MSG_ACK, status);
    s_reply (self, sock, identity, &h, NULL, 0, NULL);
}

/*  The histogram bucket of τ: 0 for 0, k for 2^(k-1) ≤ τ < 2^k, the
    last for everything from 1024 on.  */
static int
s_tau_bucket (uint64_t tau)
{
    int k = tau ? 64 - __builtin_clzll (tau) : 0;
    return k < S_TAU_BUCKETS - 1 ? k : S_TAU_BUCKETS - 1;
}

/* ------------------------------------------------------------------ */
/*  Registry                                                            */

static s_client_t *
s_client (fasgd_server_t *self, uint32_t id)
{
    if (id == 0 || id > self->next_id)
        return NULL;
    return self->clients [id - 1];
}

static void
s_client_free (fasgd_server_t *self, s_client_t *c)
{
    self->clients [c->id - 1] = NULL;
    self->live--;
    if (c->last)
        self->cache_bytes -= self->n * sizeof (float);
    free (c->last);
    fasgd_snapshot_release (c->snap);
    free (c);
}

static void
s_expire (fasgd_server_t *self, int64_t now)
{
    for (uint32_t i = 0; i < self->next_id; i++) {
        s_client_t *c = self->clients [i];
        if (c && now - c->last_seen_ms > self->cfg.expiry_ms) {
            fasgd_log_notice ("client %u (%s) expired after %d ms of silence", c->id, c->name,
                              self->cfg.expiry_ms);
            self->st.expired++;
            s_client_free (self, c);
        }
    }
}

/* ------------------------------------------------------------------ */
/*  The evaluator thread                                                */

static void
s_csv_row (fasgd_server_t *self, uint64_t ts, double err, double nll)
{
    if (!self->csv)
        return;
    const s_stats_t *s = &self->eval_st;
    uint64_t taus = s->tau_count - self->csv_prev.tau_count;
    fprintf (self->csv, "%llu,%.3f,%.6f,%.6f,%zu,%llu,%llu,%llu,%llu,%llu,%llu,%.4f,%llu\n",
             (unsigned long long) ts, (double) (s_now_ms () - self->started_ms) / 1000.0, err, nll,
             self->eval_clients, (unsigned long long) s->pushes, (unsigned long long) s->repeats,
             (unsigned long long) s->fetches, (unsigned long long) s->not_modified,
             (unsigned long long) s->bytes_in, (unsigned long long) s->bytes_out,
             taus ? (s->tau_sum - self->csv_prev.tau_sum) / (double) taus : 0.0,
             (unsigned long long) self->eval_tau_max);
    fflush (self->csv);
    self->csv_prev = *s;
}

/*  The `error=` and `nll=` lines of an EVAL body (PROTOCOL.md); nll is NaN
    when absent. -1 unless error is there and both are finite numbers.  */
static int
s_eval_parse (const char *body, size_t len, double *error, double *nll)
{
    char text [FASGD_PROTO_TEXT_MAX + 1];
    if (len >= sizeof text)
        return -1;
    memcpy (text, body, len);
    text [len] = '\0';
    int have_error = 0;
    *nll = NAN;
    char *save = NULL;
    for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save)) {
        double *slot = strncmp (line, "error=", 6) == 0 ? error
                     : strncmp (line, "nll=", 4) == 0 ? nll : NULL;
        if (!slot)
            continue;
        const char *v = strchr (line, '=') + 1;
        char *end;
        errno = 0;
        double x = strtod (v, &end);
        if (end == v || *end != '\0' || errno == ERANGE || !isfinite (x))
            return -1;
        *slot = x;
        have_error |= slot == error;
    }
    return have_error ? 0 : -1;
}

static void *
s_eval_main (void *arg)
{
    fasgd_server_t *self = arg;
    prctl (PR_SET_NAME, "fasgd-eval");          /* for top -H and ps -L */
    /*  Validation is the heavy part: it must not take the pinned CPU.  */
    if (self->cfg.cpu >= 0 && fasgd_affinity_set (&self->eval_cpus) != 0)
        fasgd_log_warn ("the evaluation thread stays on CPU %d: %s", self->cfg.cpu, strerror (errno));
    fasgd_model_ws_t *ws = fasgd_model_ws_new (self->model, 500);
    float *native = NULL;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    native = malloc (self->n * sizeof (float));
#endif
    pthread_mutex_lock (&self->eval_lock);
    for (;;) {
        while (!self->eval_quit && !self->eval_snap)
            pthread_cond_wait (&self->eval_wake, &self->eval_lock);
        if (!self->eval_snap)
            break;
        fasgd_snapshot_t *snap = self->eval_snap;
        pthread_mutex_unlock (&self->eval_lock);
        const float *theta = snap->theta;
        if (native) {
            fasgd_proto_floats_decode (snap->theta, self->n, native);
            theta = native;
        }
        double nll = NAN, err = NAN;
        if (ws)
            fasgd_model_evaluate (self->model, ws, theta, self->valid->x, self->valid->y,
                                  self->valid->n, &nll, &err);
        pthread_mutex_lock (&self->eval_lock);
        self->last_error = err;
        self->last_nll = nll;
        self->eval_done = 1;
        self->eval_done_T = snap->ts;
        self->eval_done_ms = s_now_ms ();
        s_csv_row (self, snap->ts, err, nll);
        fasgd_log_info ("T=%llu validation error %.4f nll %.4f", (unsigned long long) snap->ts, err, nll);
        self->eval_snap = NULL;
        self->eval_running = 0;
        fasgd_snapshot_release (snap);
    }
    pthread_mutex_unlock (&self->eval_lock);
    free (native);
    fasgd_model_ws_destroy (&ws);
    return NULL;
}

/*  The counters a validation row reports, taken when its θ is. Under
    eval_lock.  */
static void
s_eval_take_stats (fasgd_server_t *self)
{
    self->eval_st = self->st;
    self->eval_clients = self->live;
    self->eval_tau_max = self->iv_tau_max;
    self->iv_tau_max = 0;
}

/*  Hands θ at T to the evaluator unless it is still busy with the last.  */
static void
s_eval_maybe (fasgd_server_t *self)
{
    if (!self->valid)
        return;
    pthread_mutex_lock (&self->eval_lock);
    if (!self->eval_running) {
        fasgd_snapshot_t *snap = s_snapshot_take (self);
        if (snap) {
            self->eval_snap = snap;
            self->eval_running = 1;
            s_eval_take_stats (self);
            pthread_cond_signal (&self->eval_wake);
        }
    }
    else
        fasgd_log_debug ("T=%llu: evaluation skipped, the last is still running",
                         (unsigned long long) self->T);
    pthread_mutex_unlock (&self->eval_lock);
}

/* ------------------------------------------------------------------ */
/*  Checkpoints                                                         */

static int
s_write_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write (fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t) w;
    }
    return 0;
}

/*  Writes θ, T and the rule's state: to a temporary file, fsync, rename,
    so a crash leaves the previous checkpoint whole. On failure returns -1
    with the cause in err (when given), after logging it.  */
static int
s_checkpoint_write (fasgd_server_t *self, char *err, size_t errlen)
{
    char tmp [FASGD_PATH_LEN + 16];
    snprintf (tmp, sizeof tmp, "%s.tmp", self->cfg.checkpoint);
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        int e = errno;
        fasgd_log_error ("checkpoint: cannot write %s: %s", tmp, strerror (e));
        if (err)
            snprintf (err, errlen, "cannot write %s: %s", tmp, strerror (e));
        return -1;
    }
    size_t state_len = fasgd_rule_state_size (self->rule);
    void *state = malloc (state_len ? state_len : 1);
    uint64_t head [4] = { self->T, self->n, state_len, (uint64_t) self->cfg.rule.name };
    int e = state ? 0 : ENOMEM;
    if (e == 0) {
        fasgd_rule_state_get (self->rule, state);
        errno = 0;
        if (s_write_all (fd, S_CKPT_MAGIC, 8) || s_write_all (fd, head, sizeof head)
            || s_write_all (fd, self->theta, self->n * sizeof (float))
            || s_write_all (fd, state, state_len) || fsync (fd))
            e = errno ? errno : EIO;
    }
    free (state);
    if (close (fd) != 0 && e == 0)
        e = errno;
    if (e == 0 && rename (tmp, self->cfg.checkpoint) != 0)
        e = errno;
    if (e != 0) {
        fasgd_log_error ("checkpoint: writing %s failed: %s", self->cfg.checkpoint, strerror (e));
        if (err)
            snprintf (err, errlen, "writing %s failed: %s", self->cfg.checkpoint, strerror (e));
        unlink (tmp);
        return -1;
    }
    self->last_ckpt_T = self->T;
    self->last_ckpt_ms = s_now_ms ();
    self->ckpt_written = 1;
    fasgd_log_info ("checkpoint written at T=%llu", (unsigned long long) self->T);
    return 0;
}

/*  A checkpoint when checkpoint.file names one; 0 when it names none.  */
static int
s_checkpoint (fasgd_server_t *self)
{
    if (!*self->cfg.checkpoint)
        return 0;
    return s_checkpoint_write (self, NULL, 0);
}

static int
s_resume (fasgd_server_t *self)
{
    const char *path = self->cfg.checkpoint;
    FILE *f = fopen (path, "rb");
    if (!f) {
        fasgd_log_error ("resume: cannot open %s: %s", path, strerror (errno));
        return -1;
    }
    char magic [8];
    uint64_t head [4];
    int rc = -1;
    void *state = NULL;
    if (fread (magic, 1, 8, f) != 8 || memcmp (magic, S_CKPT_MAGIC, 8) != 0
        || fread (head, sizeof head, 1, f) != 1)
        fasgd_log_error ("resume: %s is not a fasgd checkpoint", path);
    else if (head [1] != self->n || head [3] != (uint64_t) self->cfg.rule.name)
        fasgd_log_error ("resume: %s holds %llu parameters of rule %s; the configuration has %zu of %s",
                         path, (unsigned long long) head [1], fasgd_rule_kind_name ((int) head [3]),
                         self->n, fasgd_rule_kind_name (self->cfg.rule.name));
    else if (head [2] > ((uint64_t) 1 << 36) || !(state = malloc (head [2] ? head [2] : 1))
             || fread (self->theta, sizeof (float), self->n, f) != self->n
             || fread (state, 1, head [2], f) != head [2])
        fasgd_log_error ("resume: %s is truncated", path);
    else if (fasgd_rule_state_set (self->rule, state, head [2]) != 0)
        fasgd_log_error ("resume: the rule state in %s does not fit the configuration", path);
    else {
        self->T = head [0];
        self->last_ckpt_T = self->T;
        fasgd_log_notice ("resumed from %s at T=%llu", path, (unsigned long long) self->T);
        rc = 0;
    }
    free (state);
    fclose (f);
    return rc;
}

/* ------------------------------------------------------------------ */
/*  Requests                                                            */

static void
s_on_join (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
           const char *body, size_t len)
{
    if (self->cache_last && self->cache_bytes + self->n * sizeof (float) > self->cfg.max_cache_bytes) {
        self->st.refused++;
        s_reply_error (self, sock, identity, req, FASGD_STATUS_UNAVAILABLE,
                       "resend-last caches are at limits.cache_bytes (%llu bytes)",
                       (unsigned long long) self->cfg.max_cache_bytes);
        return;
    }
    s_client_t *c = calloc (1, sizeof *c);
    if (c && self->next_id % 1024 == 0) {
        /*  Ids are never reused, so the table only grows, 1024 at a time.  */
        s_client_t **grown = realloc (self->clients, (self->next_id + 1024) * sizeof *grown);
        if (grown)
            self->clients = grown;
        else {
            free (c);
            c = NULL;
        }
    }
    if (!c || self->next_id == UINT32_MAX) {
        free (c);
        s_reply_error (self, sock, identity, req, FASGD_STATUS_UNAVAILABLE, "out of memory");
        return;
    }
    c->id = ++self->next_id;
    self->clients [c->id - 1] = c;
    self->live++;
    size_t k = 0;
    for (size_t i = 0; i < len && k < sizeof c->name - 1; i++)
        c->name [k++] = (body [i] >= 32 && body [i] < 127) ? body [i] : '?';
    c->name [k] = 0;
    c->joined_ms = c->last_seen_ms = s_now_ms ();
    self->st.joins++;
    fasgd_log_notice ("client %u (%s) joined; %zu connected", c->id, *c->name ? c->name : "-", self->live);
    fasgd_header_t h = s_reply_header (self, req, FASGD_MSG_WELCOME, FASGD_STATUS_OK);
    h.client_id = c->id;
    s_reply (self, sock, identity, &h, self->desc, (size_t) self->desc_len, NULL);
}

/*  PARAMS with θ at T, sent from the shared snapshot without a copy:
    the answer to a FETCH (status 200), or to a PUSH or PUSH_REPEAT with
    THEN_FETCH (the push's status: 200, or 202 when softsync buffered it).
    Counted as a fetch.  */
static void
s_reply_params (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
                s_client_t *c, int status)
{
    fasgd_header_t h = s_reply_header (self, req, FASGD_MSG_PARAMS, status);
    /*  With a shared θ (little-endian hosts) this cannot fail; elsewhere
        a PUSH with THEN_FETCH may have been applied already, and the
        reason says so.  */
    fasgd_snapshot_t *snap = s_snapshot_take (self);
    if (!snap) {
        s_reply_error (self, sock, identity, req, FASGD_STATUS_UNAVAILABLE, "out of memory%s",
                       req->type == FASGD_MSG_FETCH ? "" : " for the parameters (the push was applied)");
        return;
    }
    if (self->needs_used) {
        fasgd_snapshot_release (c->snap);
        c->snap = fasgd_snapshot_ref (snap);
    }
    c->fetches++;
    self->st.fetches++;
    s_reply (self, sock, identity, &h, NULL, self->n * sizeof (float), snap);
}

/*  Applies g from client c computed at timestamp j; replies. Returns 0
    when the rule took it, -1 when it was refused. A repeat (resend-last)
    re-applies the cached gradient: for the rules that need θ_used, that
    is the client's current copy, as in the simulator (ALGORITHMS.md,
    "Notes from the implementation").  */
static int
s_apply (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
         s_client_t *c, const float *g, uint64_t j, int repeat)
{
    const float *used = NULL;
    if (self->needs_used) {
        if (!c->snap || (!repeat && c->snap->ts != j)) {
            self->st.conflict++;
            s_reply_error (self, sock, identity, req, FASGD_STATUS_CONFLICT,
                           "rule %s needs the parameters of timestamp %llu, which this server no longer holds",
                           fasgd_rule_kind_name (self->cfg.rule.name), (unsigned long long) j);
            return -1;
        }
        used = c->snap->theta;
    }
    uint64_t tau = self->T - j;
    int rc = s_theta_update (self, g, tau, used);
    if (rc == -2) {
        s_reply_error (self, sock, identity, req, FASGD_STATUS_UNAVAILABLE, "out of memory");
        return -1;
    }
    if (rc < 0) {
        self->st.nonfinite++;
        s_reply_error (self, sock, identity, req, FASGD_STATUS_NONFINITE, "the gradient holds NaN or Inf");
        return -1;
    }
    c->last_tau = tau;
    self->st.tau_sum += (double) tau;
    self->st.tau_count++;
    if (tau > self->st.tau_max)
        self->st.tau_max = tau;
    if (tau > self->iv_tau_max)
        self->iv_tau_max = tau;
    self->st.tau_hist [s_tau_bucket (tau)]++;
    if (rc == 1) {
        self->T++;
#if S_SHARED_THETA
        self->current->ts = self->T;
#endif
        if (self->T % (uint64_t) self->cfg.eval_every == 0)
            s_eval_maybe (self);
        if (self->cfg.checkpoint_updates && self->T - self->last_ckpt_T >= self->cfg.checkpoint_updates)
            s_checkpoint (self);
    }
    else
        self->st.buffered++;
    int status = rc == 1 ? FASGD_STATUS_OK : FASGD_STATUS_BUFFERED;
    if (req->flags & FASGD_PROTO_FLAG_THEN_FETCH)
        s_reply_params (self, sock, identity, req, c, status);
    else
        s_reply_ack (self, sock, identity, req, status);
    return 0;
}

static void
s_on_push (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
           s_client_t *c, zmq_msg_t *body)
{
    const size_t bytes = self->n * sizeof (float);
    if (req->timestamp > self->T) {
        self->st.conflict++;
        s_reply_error (self, sock, identity, req, FASGD_STATUS_CONFLICT,
                       "timestamp %llu is from the future (the server is at %llu)",
                       (unsigned long long) req->timestamp, (unsigned long long) self->T);
        return;
    }
    /*  Non-finite values are refused by the rule itself, in its first,
        vectorised pass, before anything is touched.  */
    const void *data = zmq_msg_data (body);
    /*  On a little-endian host an aligned body is used in place.  */
    const float *g;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (((uintptr_t) data & (sizeof (float) - 1)) == 0)
        g = data;
    else
#endif
    {
        fasgd_proto_floats_decode (data, self->n, self->grad);
        g = self->grad;
    }
    if (self->cache_last && !c->last) {
        if (!(c->last = malloc (bytes))) {
            s_reply_error (self, sock, identity, req, FASGD_STATUS_UNAVAILABLE, "out of memory");
            return;
        }
        self->cache_bytes += bytes;
    }
    if (s_apply (self, sock, identity, req, c, g, req->timestamp, 0) != 0)
        return;
    c->pushes++;
    c->has_pushed = 1;
    self->st.pushes++;
    /*  Only an accepted gradient is worth repeating.  */
    if (self->cache_last) {
        memcpy (c->last, g, bytes);
        c->last_ts = req->timestamp;
    }
}

static void
s_on_fetch (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
            s_client_t *c)
{
    if ((req->flags & FASGD_PROTO_FLAG_IF_NEWER) && req->timestamp == self->T) {
        fasgd_header_t h = s_reply_header (self, req, FASGD_MSG_PARAMS, FASGD_STATUS_NOT_MODIFIED);
        self->st.not_modified++;
        c->not_modified++;
        s_reply (self, sock, identity, &h, NULL, 0, NULL);
        return;
    }
    s_reply_params (self, sock, identity, req, c, FASGD_STATUS_OK);
}

/*  Receives one message of any number of frames without waiting for its
    first: the first three frames into parts (the caller closes them),
    *extra set when there were more (closed here), *total the bytes of
    all. Returns -1 when no message was waiting.  */
static int
s_recv_parts (void *sock, zmq_msg_t parts [3], int *nparts, int *extra, size_t *total)
{
    int more = 1;
    *nparts = *extra = 0;
    *total = 0;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init (&m);
        if (zmq_msg_recv (&m, sock, *nparts == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close (&m);
            if (*nparts == 0)
                return -1;
            break;
        }
        more = zmq_msg_more (&m);
        *total += zmq_msg_size (&m);
        if (*nparts < 3)
            parts [(*nparts)++] = m;
        else {
            zmq_msg_close (&m);
            *extra = 1;
        }
    }
    return 0;
}

/*  Reads one request from sock (its frames into parts) and answers it.
    Returns 0, or -1 when there was nothing to read.  */
static int
s_handle (fasgd_server_t *self, void *sock, int is_fetch)
{
    zmq_msg_t parts [3];
    int nparts, extra;
    size_t total;
    if (s_recv_parts (sock, parts, &nparts, &extra, &total) != 0)
        return -1;
    self->st.bytes_in += total;
    fasgd_header_t req;
    memset (&req, 0, sizeof req);
    if (nparts < 2 || extra) {
        self->st.malformed++;
        if (nparts >= 1)
            s_reply_error (self, sock, &parts [0], NULL, FASGD_STATUS_MALFORMED,
                           "a message is a header frame and at most one body frame");
        goto done;
    }
    int rc = fasgd_proto_header_decode (zmq_msg_data (&parts [1]), zmq_msg_size (&parts [1]), &req);
    if (rc == FASGD_PROTO_VERSION_MISMATCH) {
        self->st.version++;
        s_reply_error (self, sock, &parts [0], &req, FASGD_STATUS_VERSION,
                       "this server speaks protocol version %u", FASGD_PROTO_VERSION);
        goto done;
    }
    size_t body_len = nparts == 3 ? zmq_msg_size (&parts [2]) : 0;
    if (rc != FASGD_PROTO_OK || fasgd_proto_body_check (&req, body_len, self->n) != FASGD_PROTO_OK) {
        self->st.malformed++;
        s_reply_error (self, sock, &parts [0], rc == FASGD_PROTO_OK ? &req : NULL, FASGD_STATUS_MALFORMED,
                       "malformed %s (%zu-byte header, %zu-byte body)",
                       rc == FASGD_PROTO_OK ? fasgd_proto_type_name (req.type) : "message",
                       zmq_msg_size (&parts [1]), body_len);
        goto done;
    }
    int fetch_type = req.type == FASGD_MSG_FETCH;
    if (fetch_type != is_fetch) {
        self->st.malformed++;
        s_reply_error (self, sock, &parts [0], &req, FASGD_STATUS_MALFORMED,
                       "%s belongs on the %s socket", fasgd_proto_type_name (req.type),
                       fetch_type ? "fetch" : "push");
        goto done;
    }
    if (req.type == FASGD_MSG_JOIN) {
        s_on_join (self, sock, &parts [0], &req, body_len ? zmq_msg_data (&parts [2]) : "", body_len);
        goto done;
    }
    s_client_t *c = s_client (self, req.client_id);
    if (!c) {
        self->st.unknown++;
        s_reply_error (self, sock, &parts [0], &req, FASGD_STATUS_UNKNOWN_CLIENT,
                       "unknown client %u: join first", req.client_id);
        goto done;
    }
    if (self->stopping) {
        s_reply_error (self, sock, &parts [0], &req, FASGD_STATUS_UNAVAILABLE, "shutting down");
        goto done;
    }
    c->last_seen_ms = s_now_ms ();
    switch (req.type) {
        case FASGD_MSG_PUSH:
            s_on_push (self, sock, &parts [0], &req, c, &parts [2]);
            break;
        case FASGD_MSG_PUSH_REPEAT:
            if (!c->last) {
                self->st.conflict++;
                s_reply_error (self, sock, &parts [0], &req, FASGD_STATUS_CONFLICT,
                               "no gradient cached: push one first%s",
                               self->cache_last ? "" : " (the push gate is always: nothing is cached)");
                break;
            }
            c->repeats++;
            self->st.repeats++;
            s_apply (self, sock, &parts [0], &req, c, c->last, c->last_ts, 1);
            break;
        case FASGD_MSG_FETCH:
            s_on_fetch (self, sock, &parts [0], &req, c);
            break;
        case FASGD_MSG_HEARTBEAT:
            self->st.heartbeats++;
            s_reply_ack (self, sock, &parts [0], &req, FASGD_STATUS_OK);
            break;
        case FASGD_MSG_LEAVE:
            fasgd_log_notice ("client %u (%s) left after %llu pushes; %zu connected", c->id, c->name,
                              (unsigned long long) c->pushes, self->live - 1);
            self->st.leaves++;
            s_reply_ack (self, sock, &parts [0], &req, FASGD_STATUS_OK);
            s_client_free (self, c);
            break;
        case FASGD_MSG_EVAL: {
            char text [FASGD_PROTO_TEXT_MAX + 1];
            size_t k = 0;
            const char *b = zmq_msg_data (&parts [2]);
            for (size_t i = 0; i < body_len && k < sizeof text - 1; i++)
                text [k++] = (b [i] >= 32 && b [i] < 127) ? b [i] : ' ';
            text [k] = 0;
            self->st.evals++;
            fasgd_log_notice ("client %u reports at T=%llu: %s", c->id, (unsigned long long) self->T, text);
            /*  An external model's validation comes from its clients: it
                goes where the server's own would (the CSV, STATUS).  */
            double error, nll;
            if (!self->model && s_eval_parse (zmq_msg_data (&parts [2]), body_len, &error, &nll) == 0) {
                pthread_mutex_lock (&self->eval_lock);
                self->last_error = error;
                self->last_nll = nll;
                self->eval_done = 1;
                self->eval_done_T = self->T;
                self->eval_done_ms = s_now_ms ();
                s_eval_take_stats (self);
                s_csv_row (self, self->T, error, nll);
                pthread_mutex_unlock (&self->eval_lock);
            }
            s_reply_ack (self, sock, &parts [0], &req, FASGD_STATUS_OK);
            break;
        }
        default:
            self->st.malformed++;
            s_reply_error (self, sock, &parts [0], &req, FASGD_STATUS_MALFORMED,
                           "%s is a reply, not a request", fasgd_proto_type_name (req.type));
            break;
    }
done:
    for (int i = 0; i < nparts; i++)
        zmq_msg_close (&parts [i]);
    return 0;
}

/* ------------------------------------------------------------------ */
/*  The control socket (PROTOCOL.md, "The control protocol")            */

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

/*  Keeps the counters of now in the window's ring, a sample a second.  */
static void
s_window_sample (fasgd_server_t *self, int64_t now)
{
    s_sample_t *s = &self->window [self->window_next];
    s->ms = now;
    s->T = self->T;
    s->st = self->st;
    self->window_next = (self->window_next + 1) % S_WINDOW_SAMPLES;
    if (self->window_count < S_WINDOW_SAMPLES)
        self->window_count++;
    self->last_sample_ms = now;
}

static const s_sample_t *
s_window_oldest (const fasgd_server_t *self)
{
    return &self->window [self->window_count < S_WINDOW_SAMPLES ? 0 : self->window_next];
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

/*  The STATUS reply: every key is specified in PROTOCOL.md.  */
static void
s_control_status (fasgd_server_t *self, s_text_t *t)
{
    int64_t now = s_now_ms ();
    const s_stats_t *a = &self->st;
    const s_sample_t *old = s_window_oldest (self);
    const s_stats_t *b = &old->st;
    double secs = (double) (now - old->ms) / 1000.0;
    double per_s = secs > 0 ? 1.0 / secs : 0.0;
    uint64_t d_push = a->pushes - b->pushes, d_rep = a->repeats - b->repeats;
    uint64_t d_fetch = a->fetches - b->fetches, d_nm = a->not_modified - b->not_modified;
    uint64_t d_taus = a->tau_count - b->tau_count;
    double in_rate = (double) (a->bytes_in - b->bytes_in) * per_s;
    double out_rate = (double) (a->bytes_out - b->bytes_out) * per_s;
    s_text_add (t, "status=200\nprotocol=%u\nversion=%s\ntime=%.3f\nuptime_s=%.3f\nT=%llu\nrule=%s\nvbar=%.9g\n",
                FASGD_PROTO_VERSION, PACKAGE_VERSION, s_wall_seconds (),
                (double) (now - self->started_ms) / 1000.0, (unsigned long long) self->T,
                fasgd_rule_kind_name (self->cfg.rule.name), fasgd_rule_vbar (self->rule));
    s_text_add (t, "clients=%zu\njoins=%llu\nleaves=%llu\nexpired=%llu\nrefused=%llu\n", self->live,
                (unsigned long long) a->joins, (unsigned long long) a->leaves,
                (unsigned long long) a->expired,
                (unsigned long long) (a->malformed + a->unknown + a->conflict + a->nonfinite + a->version
                                      + a->refused));
    s_text_add (t, "window_s=%.3f\nupdate_rate=%.3f\npush_rate=%.3f\nrepeat_rate=%.3f\nfetch_rate=%.3f\n"
                "not_modified_rate=%.3f\n", secs, (double) (self->T - old->T) * per_s,
                (double) d_push * per_s, (double) d_rep * per_s, (double) d_fetch * per_s,
                (double) d_nm * per_s);
    s_text_add (t, "pushes=%llu\nrepeats=%llu\nbuffered=%llu\nfetches=%llu\nnot_modified=%llu\nheartbeats=%llu\n",
                (unsigned long long) a->pushes, (unsigned long long) a->repeats,
                (unsigned long long) a->buffered, (unsigned long long) a->fetches,
                (unsigned long long) a->not_modified, (unsigned long long) a->heartbeats);
    s_text_add (t, "push_repeat_ratio=%.4f\nfetch_not_modified_ratio=%.4f\n", s_ratio (d_rep, d_push + d_rep),
                s_ratio (d_nm, d_fetch + d_nm));
    s_text_add (t, "bytes_in_rate=%.0f\nbytes_out_rate=%.0f\nbytes_in=%llu\nbytes_out=%llu\n", in_rate, out_rate,
                (unsigned long long) a->bytes_in, (unsigned long long) a->bytes_out);
    s_text_add (t, "tau_mean=%.3f\ntau_max=%llu\n", d_taus ? (a->tau_sum - b->tau_sum) / (double) d_taus : 0.0,
                (unsigned long long) a->tau_max);
    for (int k = 0; k < S_TAU_BUCKETS; k++) {
        unsigned long long lo = k ? 1ull << (k - 1) : 0;
        if (k == 0 || k == 1)
            s_text_add (t, "tau.%llu=", lo);
        else if (k == S_TAU_BUCKETS - 1)
            s_text_add (t, "tau.%llu+=", lo);
        else
            s_text_add (t, "tau.%llu-%llu=", lo, 2 * lo - 1);
        s_text_add (t, "%llu\n", (unsigned long long) a->tau_hist [k]);
    }
    pthread_mutex_lock (&self->eval_lock);
    int have_eval = self->eval_done;
    double err = self->last_error, nll = self->last_nll;
    uint64_t eval_T = self->eval_done_T;
    int64_t eval_ms = self->eval_done_ms;
    pthread_mutex_unlock (&self->eval_lock);
    if (have_eval)
        s_text_add (t, "val_error=%.6g\nval_nll=%.6g\nval_T=%llu\nval_age_s=%.3f\n", err, nll,
                    (unsigned long long) eval_T, (double) (now - eval_ms) / 1000.0);
    if (*self->cfg.checkpoint) {
        s_text_add (t, "checkpoint_file=%s\n", self->cfg.checkpoint);
        if (self->ckpt_written)
            s_text_add (t, "checkpoint_T=%llu\ncheckpoint_age_s=%.3f\n", (unsigned long long) self->last_ckpt_T,
                        (double) (now - self->last_ckpt_ms) / 1000.0);
    }
    if (self->cfg.bandwidth > 0) {
        double used = in_rate + out_rate;
        s_text_add (t, "bandwidth_budget=%.0f\nbandwidth_used=%.0f\nbandwidth_used_ratio=%.4f\n",
                    self->cfg.bandwidth, used, used / self->cfg.bandwidth);
        if (self->live > 0 && used > 0) {
            double per_client = used / (double) self->live;
            double room = used >= self->cfg.bandwidth ? 0.0 : floor ((self->cfg.bandwidth - used) / per_client);
            s_text_add (t, "bandwidth_per_client=%.0f\nmore_clients=%.0f\n", per_client, room);
        }
    }
    for (uint32_t i = 0; i < self->next_id; i++) {
        const s_client_t *c = self->clients [i];
        if (!c)
            continue;
        s_text_add (t, "client.%u.name=%s\nclient.%u.connected_s=%.3f\nclient.%u.idle_s=%.3f\n"
                    "client.%u.pushes=%llu\nclient.%u.repeats=%llu\nclient.%u.fetches=%llu\n"
                    "client.%u.not_modified=%llu\n",
                    c->id, c->name, c->id, (double) (now - c->joined_ms) / 1000.0,
                    c->id, (double) (now - c->last_seen_ms) / 1000.0,
                    c->id, (unsigned long long) c->pushes, c->id, (unsigned long long) c->repeats,
                    c->id, (unsigned long long) c->fetches, c->id, (unsigned long long) c->not_modified);
        if (c->has_pushed)
            s_text_add (t, "client.%u.last_tau=%llu\n", c->id, (unsigned long long) c->last_tau);
    }
}

static void
s_control_checkpoint (fasgd_server_t *self, s_text_t *t)
{
    if (!*self->cfg.checkpoint) {
        s_text_add (t, "status=409\nerror=checkpoint.file is empty: this server writes no checkpoints\n");
        return;
    }
    char err [FASGD_PATH_LEN + 128];
    int64_t t0 = s_now_ms ();
    if (s_checkpoint_write (self, err, sizeof err) != 0) {
        s_text_add (t, "status=500\nerror=%s\n", err);
        return;
    }
    fasgd_log_notice ("checkpoint written to %s at T=%llu on request", self->cfg.checkpoint,
                      (unsigned long long) self->T);
    s_text_add (t, "status=200\nfile=%s\nT=%llu\ntime=%.3f\nseconds=%.3f\n", self->cfg.checkpoint,
                (unsigned long long) self->T, s_wall_seconds (), (double) (s_now_ms () - t0) / 1000.0);
}

/*  Reads one control request and answers it. Returns 0, or -1 when there
    was nothing to read. Whatever arrives gets a reply or is dropped:
    nothing a peer sends here can stop the server.  */
static int
s_control_handle (fasgd_server_t *self)
{
    void *sock = zsock_resolve (self->control);
    zmq_msg_t parts [3];
    int nparts, extra;
    size_t total;
    if (s_recv_parts (sock, parts, &nparts, &extra, &total) != 0)
        return -1;
    /*  REQ puts an empty delimiter before its request; DEALER need not.
        A lone empty frame is an empty request, not an envelope.  */
    int delimited = nparts >= 3 && zmq_msg_size (&parts [1]) == 0;
    int at = delimited ? 2 : 1;
    s_text_t t = { NULL, 0, 0, 0 };
    if (nparts < 1)
        goto done;
    if (extra || nparts != at + 1)
        s_text_add (&t, "status=400\nerror=a request is one frame: STATUS or CHECKPOINT\n");
    else {
        const char *cmd = zmq_msg_data (&parts [at]);
        size_t len = zmq_msg_size (&parts [at]);
        while (len > 0 && (cmd [len - 1] == '\n' || cmd [len - 1] == '\r' || cmd [len - 1] == ' '
                           || cmd [len - 1] == '\t'))
            len--;
        if (len == 6 && strncasecmp (cmd, "STATUS", 6) == 0)
            s_control_status (self, &t);
        else if (len == 10 && strncasecmp (cmd, "CHECKPOINT", 10) == 0)
            s_control_checkpoint (self, &t);
        else if (len == 0)
            s_text_add (&t, "status=400\nerror=empty request: STATUS or CHECKPOINT\n");
        else {
            char shown [40];
            size_t k = 0;
            for (size_t i = 0; i < len && k < 32; i++)
                shown [k++] = (cmd [i] >= 32 && cmd [i] < 127) ? cmd [i] : '?';
            shown [k] = 0;
            s_text_add (&t, "status=400\nerror=unknown command '%s%s': STATUS or CHECKPOINT\n", shown,
                        len > k ? "..." : "");
        }
    }
    const char *body = t.data;
    size_t body_len = t.len;
    if (t.failed || !body) {
        body = "status=500\nerror=out of memory\n";
        body_len = strlen (body);
    }
    zmq_msg_t id, delim, reply;
    zmq_msg_init (&id);
    zmq_msg_copy (&id, &parts [0]);
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
done:
    free (t.data);
    for (int i = 0; i < nparts; i++)
        zmq_msg_close (&parts [i]);
    return 0;
}

/* ------------------------------------------------------------------ */
/*  Life cycle                                                          */

static void
s_status (fasgd_server_t *self, int64_t now)
{
    double secs = (double) (now - self->last_status_ms) / 1000.0;
    if (secs <= 0)
        return;
    const s_stats_t *a = &self->st, *b = &self->st_last;
    uint64_t taus = a->tau_count - b->tau_count;
    fasgd_log_notice ("T=%llu clients=%zu push/s=%.1f repeat/s=%.1f fetch/s=%.1f 304/s=%.1f "
                      "in=%.2f MB/s out=%.2f MB/s mean-tau=%.2f vbar=%.4g val-error=%.4f",
                      (unsigned long long) self->T, self->live, (double) (a->pushes - b->pushes) / secs,
                      (double) (a->repeats - b->repeats) / secs,
                      (double) (a->fetches - b->fetches) / secs,
                      (double) (a->not_modified - b->not_modified) / secs,
                      (double) (a->bytes_in - b->bytes_in) / secs / 1e6,
                      (double) (a->bytes_out - b->bytes_out) / secs / 1e6,
                      taus ? (a->tau_sum - b->tau_sum) / (double) taus : 0.0,
                      fasgd_rule_vbar (self->rule), self->last_error);
    self->st_last = self->st;
    self->last_status_ms = now;
}

static int
s_build_desc (fasgd_server_t *self)
{
    fasgd_proto_desc_t d;
    memset (&d, 0, sizeof d);
    d.protocol = FASGD_PROTO_VERSION;
    d.params = self->n;
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
    snprintf (d.fetch_gate, sizeof d.fetch_gate, "%s", fasgd_gate_kind_name (self->cfg.gates.fetch.kind));
    snprintf (d.push_gate, sizeof d.push_gate, "%s", fasgd_gate_kind_name (self->cfg.gates.push.kind));
    snprintf (d.push_skip, sizeof d.push_skip, "%s",
              self->cfg.gates.push_skip == FASGD_PUSH_SKIP_ACCUMULATE ? "accumulate" : "resend-last");
    d.fetch_every = self->cfg.gates.fetch.every;
    d.push_every = self->cfg.gates.push.every;
    d.fetch_c = self->cfg.gates.fetch.c;
    d.push_c = self->cfg.gates.push.c;
    d.gate_eps = self->cfg.gates.eps;
    d.heartbeat_ms = (uint32_t) self->cfg.heartbeat_ms;
    d.expiry_ms = (uint32_t) self->cfg.expiry_ms;
    self->desc_len = fasgd_proto_desc_encode (&d, self->desc, sizeof self->desc);
    return self->desc_len < 0 ? -1 : 0;
}

static zsock_t *
s_bind (const char *endpoint, size_t maxmsg, char *bound, size_t len)
{
    zsock_t *sock = zsock_new (ZMQ_ROUTER);
    if (!sock)
        return NULL;
    zsock_set_maxmsgsize (sock, (int) maxmsg);
    zsock_set_linger (sock, 0);
    zsock_set_sndhwm (sock, 10000);
    zsock_set_rcvhwm (sock, 10000);
    if (zsock_bind (sock, "%s", endpoint) < 0) {
        fasgd_log_error ("cannot bind %s: %s", endpoint, zmq_strerror (zmq_errno ()));
        zsock_destroy (&sock);
        return NULL;
    }
    const char *ep = zsock_endpoint (sock);
    snprintf (bound, len, "%s", ep ? ep : endpoint);
    return sock;
}

fasgd_server_t *
fasgd_server_new (const fasgd_server_cfg_t *cfg, int resume)
{
    fasgd_server_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = *cfg;
    self->last_error = self->last_nll = NAN;
    pthread_mutex_init (&self->eval_lock, NULL);
    pthread_cond_init (&self->eval_wake, NULL);
    char err [256];
    if (cfg->heartbeat_ms >= cfg->expiry_ms) {
        fasgd_log_error ("heartbeat.interval_ms (%d) must be less than heartbeat.expiry_ms (%d), "
                         "or quiet clients expire between their heartbeats", cfg->heartbeat_ms, cfg->expiry_ms);
        goto fail;
    }
    fasgd_model_spec_t spec;
    fasgd_model_cfg_to_spec (&cfg->model, &spec);
    if (*cfg->external_tensors) {
        uint64_t params;
        if (fasgd_proto_tensors_parse (cfg->external_tensors, "external.tensors", self->ext_tensors,
                                       &self->ext_ntensors, &params, err, sizeof err) != 0) {
            fasgd_log_error ("%s", err);
            goto fail;
        }
        if (params > S_EXTERNAL_MAX_PARAMS) {
            fasgd_log_error ("external.tensors: %" PRIu64 " parameters, more than the %llu a "
                             "gradient message may carry", params, (unsigned long long) S_EXTERNAL_MAX_PARAMS);
            goto fail;
        }
        self->n = (size_t) params;
    }
    else {
        if (!(self->model = fasgd_model_new (&spec, err, sizeof err))) {
            fasgd_log_error ("model: %s", err);
            goto fail;
        }
        self->n = fasgd_model_nparams (self->model);
    }
    fasgd_rule_params_t rp;
    fasgd_rule_cfg_to_params (&cfg->rule, cfg->clients, &rp);
    if (!(self->rule = fasgd_rule_new (&rp, self->n, err, sizeof err))) {
        fasgd_log_error ("rule: %s", err);
        goto fail;
    }
    self->needs_used = fasgd_rule_needs_theta_used (self->rule);
    self->cache_last = cfg->gates.push.kind != FASGD_GATE_ALWAYS
                       && cfg->gates.push_skip == FASGD_PUSH_SKIP_RESEND_LAST;
    if (!(self->snaps = fasgd_snapshot_pool_new (self->n))) {
        fasgd_log_error ("out of memory");
        goto fail;
    }
#if S_SHARED_THETA
    if ((self->current = fasgd_snapshot_new (self->snaps)))
        self->theta = self->current->theta;
#else
    self->theta = malloc (self->n * sizeof (float));
#endif
    self->grad = malloc (self->n * sizeof (float));
    if (!self->theta || !self->grad) {
        fasgd_log_error ("out of memory for %zu parameters", self->n);
        goto fail;
    }
    if (self->model) {
        fasgd_rng_t rng;
        fasgd_rng_seed (&rng, cfg->seed, S_STREAM_INIT);
        fasgd_model_init_params (self->model, self->theta, &rng);
    }
    else if (*cfg->external_init) {
        if (fasgd_floats_load (cfg->external_init, self->theta, self->n, err, sizeof err) != 0) {
            fasgd_log_error ("external.init: %s", err);
            goto fail;
        }
    }
    else
        memset (self->theta, 0, self->n * sizeof (float));
    if (resume && s_resume (self) != 0)
        goto fail;
#if S_SHARED_THETA
    self->current->ts = self->T;
#endif
    if (!self->model && cfg->validate)
        fasgd_log_info ("external model: the server does not evaluate; clients report "
                        "validation results with EVAL");
    if (self->model && cfg->validate) {
        fasgd_dataset_t *train = NULL;
        if (fasgd_data_cfg_load (&cfg->data, &spec, cfg->seed, &train, &self->valid) != 0)
            goto fail;
        fasgd_dataset_destroy (&train);
    }
    if (s_build_desc (self) != 0) {
        fasgd_log_error ("the model description does not fit in a message");
        goto fail;
    }
    if (*cfg->csv) {
        int exists = access (cfg->csv, F_OK) == 0;
        if (!(self->csv = fopen (cfg->csv, "a"))) {
            fasgd_log_error ("cannot write %s: %s", cfg->csv, strerror (errno));
            goto fail;
        }
        if (!exists)
            fputs ("timestamp,wall_s,val_error,val_nll,clients,pushes,repeats,fetches,not_modified,"
                   "bytes_in,bytes_out,mean_tau,max_tau\n", self->csv);
    }
    /*  The largest request is a gradient, or a JOIN name or EVAL text for
        a tiny model.  */
    size_t maxmsg = self->n * sizeof (float) + 64;
    if (maxmsg < FASGD_PROTO_HEADER_SIZE + FASGD_PROTO_TEXT_MAX + 64)
        maxmsg = FASGD_PROTO_HEADER_SIZE + FASGD_PROTO_TEXT_MAX + 64;
    /*  Before the first socket: ZeroMQ's I/O thread starts with it and
        inherits the pin.  */
    if (cfg->cpu >= 0) {
        if (fasgd_affinity_pin (cfg->cpu, &self->eval_cpus, err, sizeof err) != 0) {
            fasgd_log_error ("cpu: %s", err);
            goto fail;
        }
        zsys_thread_affinity_cpu_add (cfg->cpu);
        fasgd_log_info ("pinned to CPU %d", cfg->cpu);
    }
    if (!(self->push = s_bind (cfg->push_endpoint, maxmsg, self->push_ep, sizeof self->push_ep))
        || !(self->fetch = s_bind (cfg->fetch_endpoint, 4096, self->fetch_ep, sizeof self->fetch_ep)))
        goto fail;
    if (*cfg->control_endpoint) {
        if (!(self->control = s_bind (cfg->control_endpoint, S_CONTROL_MAXMSG, self->control_ep,
                                      sizeof self->control_ep)))
            goto fail;
        /*  A peer that asks and never reads must not pile up replies:
            each STATUS may be large (a line per client).  */
        zsock_set_sndhwm (self->control, S_CONTROL_HWM);
        zsock_set_rcvhwm (self->control, S_CONTROL_HWM);
    }
    if (self->valid) {
        if (pthread_create (&self->eval_thread, NULL, s_eval_main, self) != 0) {
            fasgd_log_error ("cannot start the evaluation thread");
            goto fail;
        }
        self->eval_quit = 0;
    }
    self->started_ms = self->last_status_ms = self->last_ckpt_ms = self->last_expiry_ms = s_now_ms ();
    s_window_sample (self, self->started_ms);
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
    if (self->eval_thread) {
        pthread_mutex_lock (&self->eval_lock);
        self->eval_quit = 1;
        pthread_cond_signal (&self->eval_wake);
        pthread_mutex_unlock (&self->eval_lock);
        pthread_join (self->eval_thread, NULL);
    }
    for (uint32_t i = 0; i < self->next_id; i++)
        if (self->clients [i])
            s_client_free (self, self->clients [i]);
    free (self->clients);
    /*  Closing the sockets lets ZeroMQ release the snapshots of unsent replies.  */
    zsock_destroy (&self->push);
    zsock_destroy (&self->fetch);
    zsock_destroy (&self->control);
    fasgd_snapshot_release (self->current);
    fasgd_snapshot_pool_destroy (&self->snaps);
    if (self->csv)
        fclose (self->csv);
    fasgd_dataset_destroy (&self->valid);
#if !S_SHARED_THETA
    free (self->theta);                 /* otherwise the current snapshot's */
#endif
    free (self->grad);
    fasgd_rule_destroy (&self->rule);
    fasgd_model_destroy (&self->model);
    pthread_mutex_destroy (&self->eval_lock);
    pthread_cond_destroy (&self->eval_wake);
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

void
fasgd_server_stop (fasgd_server_t *self)
{
    self->stopping = 1;
}

int
fasgd_server_run (fasgd_server_t *self)
{
    void *push = zsock_resolve (self->push), *fetch = zsock_resolve (self->fetch);
    zmq_pollitem_t items [3] = {
        { push, 0, ZMQ_POLLIN, 0 },
        { fetch, 0, ZMQ_POLLIN, 0 },
        { self->control ? zsock_resolve (self->control) : NULL, 0, ZMQ_POLLIN, 0 }
    };
    int nitems = self->control ? 3 : 2;
    fasgd_log_notice ("serving %zu parameters with %s: push %s, fetch %s, control %s", self->n,
                      fasgd_rule_kind_name (self->cfg.rule.name), self->push_ep, self->fetch_ep,
                      self->control ? self->control_ep : "off");
    if (self->valid)
        s_eval_maybe (self);            /* the starting point */
    while (!self->stopping) {
        int rc = zmq_poll (items, nitems, 100);
        if (rc < 0 && zmq_errno () != EINTR) {
            fasgd_log_error ("poll: %s", zmq_strerror (zmq_errno ()));
            break;
        }
        /*  Fetches first: they are cheap and unblock clients.  */
        for (int k = 0; k < S_BATCH_PER_WAKE && s_handle (self, fetch, 1) == 0; k++)
            ;
        for (int k = 0; k < S_BATCH_PER_WAKE && s_handle (self, push, 0) == 0; k++)
            ;
        int64_t now = s_now_ms ();
        if (now - self->last_sample_ms >= 1000)
            s_window_sample (self, now);
        /*  Control last and few at a time: training traffic comes first.  */
        for (int k = 0; self->control && k < S_CONTROL_PER_WAKE && s_control_handle (self) == 0; k++)
            ;
        if (now - self->last_expiry_ms >= 250) {
            s_expire (self, now);
            self->last_expiry_ms = now;
        }
        if (self->cfg.status_seconds > 0 && now - self->last_status_ms >= self->cfg.status_seconds * 1000)
            s_status (self, now);
        if (self->cfg.checkpoint_seconds > 0 && self->T != self->last_ckpt_T
            && now - self->last_ckpt_ms >= self->cfg.checkpoint_seconds * 1000)
            s_checkpoint (self);
    }
    fasgd_log_notice ("stopping at T=%llu", (unsigned long long) self->T);
    /*  A last validation row for the final parameters, unless it has one.  */
    if (self->valid && self->T % (uint64_t) self->cfg.eval_every != 0) {
        for (int busy = 1; busy; zclock_sleep (10)) {
            pthread_mutex_lock (&self->eval_lock);
            busy = self->eval_running;
            pthread_mutex_unlock (&self->eval_lock);
        }
        s_eval_maybe (self);
        for (int busy = 1; busy; zclock_sleep (10)) {
            pthread_mutex_lock (&self->eval_lock);
            busy = self->eval_running;
            pthread_mutex_unlock (&self->eval_lock);
        }
        fasgd_log_notice ("final validation error %.4f (nll %.4f) at T=%llu", self->last_error,
                          self->last_nll, (unsigned long long) self->T);
    }
    return s_checkpoint (self) == 0 ? 0 : 1;
}
