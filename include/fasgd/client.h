/*  libfasgd-client: join a fasgd-server, fetch parameters, push gradients.

    Any training loop becomes a fasgd client with a few calls:

        fasgd_client_t *c = fasgd_client_new ("tcp://host:5555", "tcp://host:5556");
        if (fasgd_client_join (c, "worker-3") != 0) ...   // learn D, the tensors, rule, gates
        uint64_t ts;
        fasgd_client_fetch (c, theta, &ts, 0);             // θ and its timestamp
        for (;;) {
            compute grad on theta;
            fasgd_client_step_gated (c, grad, theta, &ts, NULL);   // push, then fetch: gated
        }
        fasgd_client_leave (c);
        fasgd_client_destroy (&c);

    Heartbeats are sent by the library's own thread while the client is
    joined. Every call returns 0 (or a documented positive value) or a
    negative FASGD_CLIENT_E* code; fasgd_client_strerror names it. Nothing
    a server sends can make the library abort.

    A client object is used from one thread at a time.  */
#ifndef FASGD_CLIENT_H_INCLUDED
#define FASGD_CLIENT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define FASGD_CLIENT_ETIMEOUT    -1   /* no reply within the timeout: is the server there? */
#define FASGD_CLIENT_EPROTO      -2   /* the server's reply was malformed */
#define FASGD_CLIENT_EREFUSED    -3   /* the server refused: see fasgd_client_last_status */
#define FASGD_CLIENT_ENOTJOINED  -4   /* call fasgd_client_join first (or again: 401) */
#define FASGD_CLIENT_EINVAL      -5   /* bad argument: NULL buffer, wrong size */
#define FASGD_CLIENT_ENOMEM      -6
#define FASGD_CLIENT_ESOCKET     -7   /* an endpoint could not be connected */
#define FASGD_CLIENT_EVERSION    -8   /* the server speaks another protocol version */
#define FASGD_CLIENT_ESECURITY   -9   /* the CURVE handshake failed: fasgd_client_last_reason says why */

typedef struct fasgd_client_t fasgd_client_t;

/*  A client of the server at these push and fetch endpoints
    (tcp://HOST:PORT, ipc://PATH or inproc://NAME); nothing is connected
    before the first request. NULL on a malformed endpoint or out of
    memory. For a model sharded across S servers, each is a list of the
    S shards' endpoints separated by commas: every call then works on
    the whole θ, each shard's part with that shard (fasgd_client(3)).  */
fasgd_client_t *fasgd_client_new (const char *push_endpoint, const char *fetch_endpoint);
void fasgd_client_destroy (fasgd_client_t **self_p);
/*  The servers of this client: 1, or S for a model sharded across S
    servers (endpoint lists of S comma-separated endpoints).  */
size_t fasgd_client_shards (const fasgd_client_t *self);

/*  Milliseconds to wait for each reply (default 5000).  */
void fasgd_client_set_timeout (fasgd_client_t *self, int timeout_ms);
/*  Speaks CURVE to the server (encrypted and authenticated), before
    fasgd_client_join: server_key is the server's public certificate file
    (fasgd-ctl keygen's NAME.key) or its public key in 40 Z85 characters;
    cert_file this client's secret certificate (NAME.key_secret), or NULL
    for a key of this process's own (accepted only by servers with
    security.curve.allow_any). server_key NULL goes back to plain.
    FASGD_CLIENT_EINVAL with the reason in fasgd_client_last_reason.  */
int fasgd_client_set_curve (fasgd_client_t *self, const char *server_key, const char *cert_file);
/*  This client's CURVE public key (Z85), "" without CURVE. Borrowed.  */
const char *fasgd_client_public_key (const fasgd_client_t *self);
/*  Seed of the gates' random draws (default: from the client id).  */
void fasgd_client_set_seed (fasgd_client_t *self, uint64_t seed);

/*  Joins; name may be NULL. Afterwards the description, id and D are
    known. Joining again (after a server restart) starts a new session on
    fresh sockets.  */
int fasgd_client_join (fasgd_client_t *self, const char *name);
const fasgd_proto_desc_t *fasgd_client_desc (const fasgd_client_t *self);   /* borrowed */
uint32_t fasgd_client_id (const fasgd_client_t *self);
size_t fasgd_client_nparams (const fasgd_client_t *self);

/*  Fetches θ into theta (nparams floats) and its timestamp. With
    if_newer, returns 1 and leaves theta alone when *timestamp is current.  */
int fasgd_client_fetch (fasgd_client_t *self, float *theta, uint64_t *timestamp, int if_newer);

/*  Pushes a gradient (nparams floats) computed on parameters of
    `timestamp`. Returns 0, or FASGD_STATUS_BUFFERED's 1 when softsync holds
    it for its group.  */
int fasgd_client_push (fasgd_client_t *self, const float *grad, uint64_t timestamp);
/*  The same, stating how many floats grad holds: a caller whose model does
    not match the server's gets FASGD_CLIENT_EINVAL before anything is
    sent (bindings from other languages should use this one).  */
int fasgd_client_push_n (fasgd_client_t *self, const float *grad, size_t n, uint64_t timestamp);
/*  B-FASGD resend-last: asks the server to re-apply the last gradient.  */
int fasgd_client_push_repeat (fasgd_client_t *self);

/*  The gates, decided from the last v̄ the server sent and the seeded
    draws: 1 to transmit. Each call is one opportunity.  */
int fasgd_client_want_fetch (fasgd_client_t *self);
int fasgd_client_want_push (fasgd_client_t *self);

/*  Push through the push gate: transmits (the first push always does),
    or sends PUSH_REPEAT (skip resend-last), or adds grad to a local sum
    sent with the next transmitted push (skip accumulate). Returns 0 on
    success whatever the gate chose.  */
int fasgd_client_push_gated (fasgd_client_t *self, const float *grad, uint64_t timestamp);
/*  Fetch through the fetch gate: returns 1 when theta was refreshed, 0
    when the gate skipped (or the parameters were current).  */
int fasgd_client_fetch_gated (fasgd_client_t *self, float *theta, uint64_t *timestamp);

/*  Pushes a gradient computed on parameters of `timestamp` and receives
    θ after it, in one round trip (PUSH with THEN_FETCH, answered with
    PARAMS on the push socket): theta and *new_timestamp are set. Returns
    0, or 1 when softsync buffered the push (θ is then the current one).  */
int fasgd_client_push_fetch (fasgd_client_t *self, const float *grad, uint64_t timestamp,
                             float *theta, uint64_t *new_timestamp);

/*  One step of the training loop: fasgd_client_push_gated (grad, computed
    on the parameters of *timestamp), then fasgd_client_fetch_gated (theta,
    timestamp), with the same gate draws and counts. When the fetch gate
    does not need the push's reply (gates "always" and "every"; not bfasgd,
    not with softsync) and something is transmitted, push and fetch travel
    in one round trip. Returns 1 when theta was refreshed, 0 when not. tau,
    when not NULL, gets the staleness of the gradient the server applied in
    this step (a PUSH_REPEAT's: of the repeated one), or -1 when none was
    applied at once (skipped, accumulated, buffered by softsync, an error).
    On an error nothing is fetched; the gates' draws for this step are
    spent.  */
int fasgd_client_step_gated (fasgd_client_t *self, const float *grad, float *theta,
                             uint64_t *timestamp, int64_t *tau);

/*  Reports a validation result the client measured (for external models).  */
int fasgd_client_eval (fasgd_client_t *self, double error, double nll, uint64_t examples);

int fasgd_client_leave (fasgd_client_t *self);

double fasgd_client_vbar (const fasgd_client_t *self);           /* last v̄ received */
uint64_t fasgd_client_server_timestamp (const fasgd_client_t *self);   /* last T received */
int fasgd_client_last_status (const fasgd_client_t *self);       /* last status code */
const char *fasgd_client_last_reason (const fasgd_client_t *self);   /* last ERROR text */

/*  Counts since join: pushes sent, repeats, skipped (accumulated),
    fetches, skipped fetches, bytes sent and received.  */
typedef struct {
    uint64_t pushes, repeats, accumulated, fetches, fetch_skips, bytes_out, bytes_in;
} fasgd_client_stats_t;
const fasgd_client_stats_t *fasgd_client_stats (const fasgd_client_t *self);

const char *fasgd_client_strerror (int err);

/*  What the library logs on standard error: "error", "warn", "notice"
    (the default), "info" or "debug". FASGD_CLIENT_EINVAL for anything
    else. The level is the process's, for every client object.  */
int fasgd_client_set_log_level (const char *level);

/*  The library's version, e.g. "0.1.0".  */
const char *fasgd_client_version (void);

/*  The size in bytes of a public struct as this library was built:
    "fasgd_proto_desc_t" or "fasgd_client_stats_t"; 0 for any other name.
    Bindings that mirror a struct (Python's ctypes) check their layout
    against it before reading one.  */
size_t fasgd_client_sizeof (const char *type);

#endif
