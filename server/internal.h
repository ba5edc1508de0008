/*  internal: what the files of fasgd-server share, and nothing else
    includes. The engine is one struct, fasgd_server_t, owned by the
    thread that runs the poll loop (server.c); each concern works on it
    from a file of its own. Every server/ file, and what it calls in the
    others (a test checks that this map names every .c file of server/):

        main.c         the daemon's options, signals, port file  → server.c
        config.c       the configuration's key table (fasgd-ctl links it too)
        server.c       life cycle: build, bind, the poll loop, tear down
                       → dispatch, control, registry, eval, checkpoint,
                       connections, guard, security
        dispatch.c     the data sockets' router: each request to its
                       handler  → registry, guard, params, reply, eval,
                       checkpoint, security
        control.c      the control socket: STATUS, CHECKPOINT, RELOAD
                       → registry, security, checkpoint, guard, reply
        registry.c     clients: join, lookup, expiry, revocation; the only
                       owner of client records  → guard, security
        eval.c         the evaluation thread and the validation CSV
                       → params
        checkpoint.c   writing and resuming checkpoints
        connections.c  connection counts and limits, from socket monitors
                       → security
        guard.c        what a gradient must pass; its verdicts
        security.c     CURVE: certificate, allowlist, ZAP, refusal log lines
        params.c       θ's snapshots and wire images
        reply.c        frames in and out: below every handler

    Calls go only down this list's arrows: no file calls one that calls
    it. A check (guard.c, security.c) returns a verdict and the file that
    asked it acts on it through the registry, which alone frees a client.
    Functions here are named fasgd_srv_*, most after their file;
    file-local ones s_*.  */
#ifndef FASGD_SERVER_INTERNAL_H_INCLUDED
#define FASGD_SERVER_INTERNAL_H_INCLUDED

#include "server.h"

#include "affinity.h"
#include "codec.h"
#include "snapshot.h"

#include <czmq.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>

#define FASGD_SRV_TAU_BUCKETS 12        /* 0, 1, 2-3, 4-7, ..., 512-1023, 1024+ */
#define FASGD_SRV_WINDOW_SAMPLES 11     /* a sample a second: rates over the last 10 s */
#define FASGD_SRV_NORM_WINDOW 1024      /* accepted gradient norms the history's median is taken over */
#define FASGD_SRV_MONITORS 3            /* push, fetch, control: their connections and handshakes */

/*  An immutable image of θ at one timestamp, in wire byte order. On a
    little-endian host θ is its own wire image, so the current snapshot is
    θ's own buffer, shared by every fetch of its timestamp and updated in
    place when nobody else holds it (copy on write: s_theta_update);
    elsewhere a snapshot is an encoded copy made at the first fetch.
    Snapshots come from common/snapshot.h, as the simulator's do.  */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FASGD_SRV_SHARED_THETA 1
#else
#define FASGD_SRV_SHARED_THETA 0
#endif

typedef struct {
    uint32_t id;
    uint64_t session;                   /* the WELCOME's token, which its requests must carry */
    char name [64];
    int64_t joined_ms, last_seen_ms;
    uint64_t pushes, repeats, fetches, not_modified;
    uint64_t last_tau;
    int has_pushed;
    float *last;                        /* resend-last cache */
    int has_last;                       /* it holds an accepted gradient */
    uint64_t last_ts;
    double last_norm;                   /* its norm */
    uint64_t refused, clipped;          /* gradients the guard refused, clipped */
    uint64_t refused_in_row;
    double norm_typical;                /* its vote in the guard's median (guard.c) */
    int has_typical;                    /* it votes: guard.voters [vote_slot] is it */
    size_t vote_slot;
    fasgd_snapshot_t *snap;                     /* θ_used, for the rules that need it */
    char key [41];                      /* CURVE: the public key (Z85) it joined with; "" off */
    char key_name [64];                 /* that key's name in the allowlist */
} fasgd_srv_client_t;

typedef struct {
    uint64_t pushes, buffered, repeats, fetches, not_modified, joins, leaves, expired, heartbeats, evals;
    uint64_t malformed, unknown, conflict, nonfinite, version, refused;
    uint64_t forbidden;                 /* requests from a key other than the client's, or revoked */
    uint64_t guarded, clipped, forgotten;   /* the guard: refused, clipped, clients forgotten */
    uint64_t auth_refused, handshake_failed, revoked;   /* CURVE: connections refused, keys revoked */
    uint64_t conn_shed, accept_failed;  /* connections turned away at limits.connections; accept () failed */
    uint64_t bytes_in, bytes_out;
    double tau_sum;
    uint64_t tau_count, tau_max;
    uint64_t tau_hist [FASGD_SRV_TAU_BUCKETS];  /* applied gradients by τ, bucket k ≥ 1: 2^(k-1) ≤ τ < 2^k */
} fasgd_srv_stats_t;

/*  The counters at one moment, for rates over a recent window.  */
typedef struct {
    int64_t ms;
    uint64_t T;
    fasgd_srv_stats_t st;
} fasgd_srv_sample_t;

/*  The push guard's bounds and its median of the clients' typical norms
    and the history's (guard.c).  */
typedef struct {
    double theta_bound;                 /* ≥ max|θ| */
    double state_bound;                 /* ≥ every magnitude in the rule's state */
    uint64_t since_measure;
    double norms [FASGD_SRV_NORM_WINDOW];   /* a ring of accepted norms */
    int norm_next, norm_count;
    double history;                     /* their lower median */
    int since_history;
    double median;
    int since_median;
    fasgd_srv_client_t **voters;        /* the clients that vote, nvoters of them */
    size_t nvoters, voters_cap;
    double *votes;                      /* scratch for the median, voters_cap + 1 long */
    fasgd_srv_client_t **by_key;        /* scratch: the CURVE clients by key, voters_cap long */
} fasgd_srv_guard_t;

struct fasgd_server_t {
    fasgd_server_cfg_t cfg;
    zsock_t *push, *fetch, *control;   /* control: NULL when disabled */
    char push_ep [256], fetch_ep [256], control_ep [256];
    fasgd_model_t *model;               /* NULL for an external model */
    fasgd_proto_tensor_t ext_tensors [FASGD_PROTO_MAX_TENSORS];
    int ext_ntensors;
    fasgd_rule_t *rule;
    size_t n;                           /* θ's values this server holds: its shard's, or all D */
    size_t total;                       /* D */
    size_t offset;                      /* where its part starts in the D */
    float *theta;
    float *grad;                        /* receive buffer for non-aligned bodies */
    uint64_t T;
    int needs_used, cache_last;
    fasgd_dataset_t *valid;
    fasgd_proto_desc_t desc;            /* WELCOME's, but for each client's session */

    fasgd_srv_client_t **clients;               /* by id - 1 */
    uint32_t next_id;
    size_t live;
    uint64_t cache_bytes;

    fasgd_snapshot_t *current;
    fasgd_snapshot_pool_t *snaps;
    /*  wire.params other than f32: θ rounded for the wire, at wire_img->ts.  */
    fasgd_snapshot_t *wire_img;
    fasgd_snapshot_pool_t *wire_imgs;

    fasgd_srv_stats_t st, st_last;              /* st_last: at the last status line */
    int64_t started_ms, last_status_ms, last_ckpt_ms, last_expiry_ms;
    uint64_t last_ckpt_T;
    int ckpt_written;                   /* one written by this process */
    uint64_t ckpt_failures;             /* failed checkpoint writes in a row */
    int64_t ckpt_backoff_ms;            /* the pause after the last of them, */
    int64_t ckpt_retry_ms;              /* and when it ends */
    fasgd_srv_sample_t window [FASGD_SRV_WINDOW_SAMPLES];   /* a ring, oldest at window_next once full */
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
    fasgd_srv_stats_t eval_st;
    size_t eval_clients;
    /*  The CSV's staleness columns cover the gradients applied between two
        rows: the largest τ since the last hand-off (the main thread's,
        then the handed-over one's), and the counters of the last row.  */
    uint64_t iv_tau_max, eval_tau_max;
    fasgd_srv_stats_t csv_prev;
    int eval_quit;
    double last_error, last_nll;
    int eval_done;                      /* last_error and last_nll hold a result */
    uint64_t eval_done_T;               /* the timestamp of the parameters evaluated */
    int64_t eval_done_ms;
    FILE *csv;

    fasgd_srv_guard_t guard;
    int64_t ctl_second_ms, ctl_ckpt_ms;     /* control: this second's start, the last CHECKPOINT asked */
    int ctl_in_second;

    /*  Connections (connections.c): a monitor on each bound socket.  */
    zsock_t *monitors [FASGD_SRV_MONITORS];
    zsock_t *watched [FASGD_SRV_MONITORS];     /* the sockets they watch */
    const char *monitor_names [FASGD_SRV_MONITORS];
    int nmonitors;
    uint64_t conns, conn_max;           /* on push and fetch: open now, and the most allowed */
    uint64_t conns_control;             /* on the control socket */
    int control_monitor;                /* its monitor's index; -1 none */
    uint64_t nofile;                    /* RLIMIT_NOFILE */

    /*  CURVE (security.c): cert NULL when off.  */
    zcert_t *cert;
    zsock_t *zap;                       /* the ZAP handler */
    zhashx_t *allowed;                  /* public key (Z85) → name; NULL with allow_any */
    int64_t sec_log_ms;                 /* refusal log lines: this second's start, */
    int sec_log_count;                  /* lines in it, */
    uint64_t sec_log_dropped;           /* and those left out */
};


static inline int64_t
fasgd_srv_now_ms (void)
{
    return zclock_mono ();
}

/*  dispatch.c  */

/*  Reads one request from sock (a data socket; is_fetch for the fetch
    socket) and answers it. Returns 0, or -1 when there was nothing to
    read.  */
int fasgd_srv_handle (fasgd_server_t *self, void *sock, int is_fetch);

/*  reply.c  */

/*  Receives one message of any number of frames without waiting for its
    first: the first three frames into parts (the caller closes them),
    *extra set when there were more (closed here), *total the bytes of
    all. Returns -1 when no message was waiting.  */
int fasgd_srv_recv_parts (void *sock, zmq_msg_t parts [3], int *nparts, int *extra, size_t *total);
/*  Sends [identity][header][body]; body_snap, when given, is sent without
    a copy and released once ZeroMQ is done with it.  */
void fasgd_srv_reply (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *h,
                      const void *body, size_t body_len, fasgd_snapshot_t *body_snap);
/*  A reply's header: its type and status, the request's client id and
    seq (0 without a request), and the server's T and v̄.  */
fasgd_header_t fasgd_srv_reply_header (fasgd_server_t *self, const fasgd_header_t *req, int type, int status);
/*  An ERROR reply with a one-line reason, logged.  */
void fasgd_srv_reply_error (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
                            int status, const char *fmt, ...) __attribute__ ((format (printf, 6, 7)));
void fasgd_srv_reply_ack (fasgd_server_t *self, void *sock, zmq_msg_t *identity, const fasgd_header_t *req,
                          int status);

/*  params.c  */

/*  The snapshot of θ at T, with a reference for the caller; NULL out of
    memory.  */
fasgd_snapshot_t *fasgd_srv_params_snapshot (fasgd_server_t *self);
/*  Applies g to θ with the rule; returns as fasgd_rule_apply, or -2 out
    of memory.  */
int fasgd_srv_params_update (fasgd_server_t *self, const float *g, uint64_t tau, const float *used);
/*  A reference to θ of snap (at T) as wire.params; NULL out of memory.  */
fasgd_snapshot_t *fasgd_srv_params_wire_image (fasgd_server_t *self, const fasgd_snapshot_t *snap);

/*  registry.c  */

/*  The client with this id; NULL when unknown (never joined, left,
    expired). Borrowed.  */
fasgd_srv_client_t *fasgd_srv_registry_lookup (fasgd_server_t *self, uint32_t id);
/*  Frees c, which the registry owns: after this, c is gone.  */
void fasgd_srv_registry_free (fasgd_server_t *self, fasgd_srv_client_t *c);
/*  Frees every client.  */
void fasgd_srv_registry_clear (fasgd_server_t *self);
/*  Expires every client silent for longer than expiry_ms.  */
void fasgd_srv_registry_expire (fasgd_server_t *self, int64_t now);
/*  Forgets every client whose key the allowlist no longer allows (after
    a reload); returns how many.  */
size_t fasgd_srv_registry_revoke (fasgd_server_t *self);
/*  Registers a client named by body (len bytes, sanitised), bound to a
    new session token and to key (NULL without CURVE) allowed under
    key_name. Returns it, borrowed, or NULL with the reason to refuse the
    JOIN with (503) in why.  */
fasgd_srv_client_t *fasgd_srv_registry_join (fasgd_server_t *self, const char *body, size_t len, const char *key,
                                             const char *key_name, char *why, size_t whylen);

/*  eval.c  */

void *fasgd_srv_eval_main (void *arg);
/*  Hands θ at T to the evaluator unless it is still busy with the last.  */
void fasgd_srv_eval_maybe (fasgd_server_t *self);
/*  Blocks until the evaluator has finished what it was handed.  */
void fasgd_srv_eval_wait (fasgd_server_t *self);
/*  An EVAL request's body from client c: logged, and for an external
    model, the validation row.  */
void fasgd_srv_eval_report (fasgd_server_t *self, const fasgd_srv_client_t *c, const char *body, size_t len);

/*  checkpoint.c  */

/*  Writes θ, T and the rule's state (common/checkpoint.h): to a temporary
    file, fsync, rename, so a crash or a failure leaves the previous
    checkpoint whole. On failure returns -1 with the cause in err (when
    given), after logging it and doubling the pause before the next
    periodic attempt; the first success after failures logs the recovery.  */
int fasgd_srv_checkpoint_write (fasgd_server_t *self, char *err, size_t errlen);
/*  A checkpoint when checkpoint.file names one; 0 when it names none.  */
int fasgd_srv_checkpoint (fasgd_server_t *self);
/*  The same, for checkpoint.seconds and checkpoint.updates: after a
    failure, nothing (-1) until the pause is over.  */
int fasgd_srv_checkpoint_periodic (fasgd_server_t *self);
/*  Loads θ, T and the rule's state from checkpoint.file, all or nothing;
    -1 logged with the file and the cause.  */
int fasgd_srv_resume (fasgd_server_t *self);

/*  control.c  */

/*  Keeps the counters of now in the window's ring, a sample a second.  */
void fasgd_srv_window_sample (fasgd_server_t *self, int64_t now);
/*  Reads one control request and answers it. Returns 0, or -1 when there
    was nothing to read.  */
int fasgd_srv_control_handle (fasgd_server_t *self);

/*  guard.c  */

/*  After θ and the rule's state are in place (and after a resume).  */
void fasgd_srv_guard_init (fasgd_server_t *self);
/*  Judges the gradient *gp from client c (repeat: its cached last one,
    judged already): 0 to apply it (*gp then points at the clipped copy
    when it was clipped), else the status to refuse it with (422) and the
    reason in why. *norm_p: its norm, as applied.  */
int fasgd_srv_guard_check (fasgd_server_t *self, fasgd_srv_client_t *c, const float **gp, int repeat,
                           double *norm_p, char *why, size_t whylen);
/*  After the rule applied (or buffered) a gradient of this norm; a
    repeat does not count in the history.  */
void fasgd_srv_guard_accepted (fasgd_server_t *self, fasgd_srv_client_t *c, double norm, int repeat);
/*  The guard's verdict on a client after a refusal.  */
typedef enum {
    FASGD_SRV_GUARD_KEEP,               /* serve it on */
    FASGD_SRV_GUARD_FORGET              /* refused limits.refusals times in a row: free it */
} fasgd_srv_guard_verdict_t;

/*  After a refusal: counts it, and says whether c is to be forgotten
    (the caller asks the registry to free it).  */
fasgd_srv_guard_verdict_t fasgd_srv_guard_refused (fasgd_server_t *self, fasgd_srv_client_t *c);
/*  The median the factor multiplies; 0 before the first push.  */
double fasgd_srv_guard_median (const fasgd_server_t *self);
/*  Before c is freed (by the registry): its vote leaves the median's.  */
void fasgd_srv_guard_forget (fasgd_server_t *self, fasgd_srv_client_t *c);
/*  Frees what the guard holds.  */
void fasgd_srv_guard_destroy (fasgd_server_t *self);

/*  security.c  */

/*  Loads the server's certificate and the allowlist, and binds the ZAP
    handler, when security.curve.server_cert is set; 0 and nothing when
    it is not. -1 with the reason in err.  */
int fasgd_srv_security_new (fasgd_server_t *self, char *err, size_t errlen);
/*  Makes sock (not yet bound) a CURVE server; nothing when CURVE is off.  */
void fasgd_srv_security_apply (fasgd_server_t *self, zsock_t *sock);
/*  Before the sockets are closed.  */
void fasgd_srv_security_destroy (fasgd_server_t *self);
/*  Warns that endpoint is bound without CURVE where other hosts reach it.  */
void fasgd_srv_security_warn_plain (fasgd_server_t *self, const char *endpoint);
/*  Serves one ZAP request; -1 when none waited.  */
int fasgd_srv_security_zap (fasgd_server_t *self);
/*  Counts and logs a failed handshake (a ZMQ_EVENT_HANDSHAKE_FAILED_*
    event) on the socket named what; nothing without CURVE.  */
void fasgd_srv_security_handshake_failed (fasgd_server_t *self, const char *what, int event, uint32_t value);
/*  A log line about a refusal, unless this second's five are spent; the
    count of those left out comes with the next line logged.  */
void fasgd_srv_refusal_log (fasgd_server_t *self, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/*  The CURVE key (Z85) msg's connection was allowed with; NULL when
    CURVE is off.  */
const char *fasgd_srv_security_key (fasgd_server_t *self, zmq_msg_t *msg);
/*  The name under which key is allowed now; NULL when it is not (or
    CURVE is off): the verdict on a key. Borrowed.  */
const char *fasgd_srv_security_allowed (fasgd_server_t *self, const char *key);
/*  Re-reads the allowlist. 0 done (the caller then asks the registry to
    forget the clients whose key left it); 1 nothing to reload (CURVE off
    or allow_any) and -1 unreadable, with the reason in err (the old list
    then stays).  */
int fasgd_srv_security_reload (fasgd_server_t *self, char *err, size_t errlen);
size_t fasgd_srv_security_nkeys (const fasgd_server_t *self);

/*  connections.c  */

/*  Raises the soft descriptor limit to the hard one and sets conn_max
    from limits.connections and the descriptors there are.  */
void fasgd_srv_conn_limits (fasgd_server_t *self);
/*  Watches sock's connections and handshakes (sock bound, and closed only
    after fasgd_srv_conn_destroy); what names it in log lines. -1 with
    errno set.  */
int fasgd_srv_conn_watch (fasgd_server_t *self, zsock_t *sock, const char *what);
/*  Handles one event of monitor k: counts connections and turns away
    those beyond conn_max. -1 when none waited.  */
int fasgd_srv_conn_event (fasgd_server_t *self, int k);
/*  Before the sockets are closed.  */
void fasgd_srv_conn_destroy (fasgd_server_t *self);

#endif
