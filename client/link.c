/*  link: one server (or one shard) of libfasgd-client: the client side of
    the wire protocol (proto/PROTOCOL.md) and the B-FASGD gates
    (ALGORITHMS.md) on the part of θ that server holds. client.c puts the
    links of a client together.

    A link's session: JOIN makes one (the WELCOME's description, the
    gates it names, two channels and a heartbeat), LEAVE, a 401 or a new
    JOIN ends it. Its requests go over two channels (channel.h), one to
    the server's push endpoint and one to its fetch endpoint; every
    request waits for its one reply, matched by the seq it echoes. After a
    timeout the channel is closed and a fresh one opened before the next
    request: a reply that arrives late then lands on a closed socket
    instead of being taken for the answer to the next request. A reply
    whose seq is not the one awaited (a stale reply) is discarded whatever
    socket it came on.

    While joined, a heartbeat (heartbeat.h) keeps an idle client alive.
    Heartbeats and their replies are not in the byte counts of
    fasgd_link_stats, which count what the caller's own calls moved.

    Nothing a server sends is trusted: every reply goes through the codec's
    checks, its size is bounded by the channel, and a reply that does not
    fit what was asked is FASGD_CLIENT_EPROTO.  */
#include "link.h"
#include "channel.h"
#include "codec.h"
#include "curve.h"
#include "heartbeat.h"

#include "floats.h"
#include "gates.h"
#include "log.h"

#include <czmq.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_DEFAULT_TIMEOUT_MS 5000
/*  PCG streams of the two gates (ALGORITHMS.md: each gate draws from a
    stream of its own, so a fetch decision never shifts a push draw).  */
#define S_FETCH_GATE_STREAM  0x66657463u    /* "fetc" */
#define S_PUSH_GATE_STREAM   0x70757368u    /* "push" */
/*  The largest reply frame that is not θ: a WELCOME body.  */
#define S_CONTROL_MAXMSG     ((int64_t) FASGD_PROTO_DESC_MAX)
/*  Bounds D so that 4·D bytes and two float copies stay addressable.  */
#define S_MAX_PARAMS         ((uint64_t) SIZE_MAX / 16)
/*  The largest |θ_i| a client takes from a server: beyond about 1.8e19
    (the square root of FLT_MAX) a float32 square overflows, so no float32
    training step on such a value stays finite (a norm, weight decay, two
    layers of a forward pass), and honest θ stays many orders of magnitude
    below it (MNIST's MLP: |θ_i| < 10; a run poisoned at its first push
    reached 3.5e11). A relative bound (against the θ last held) would
    refuse honest θ after a long absence, or at the first fetch.  */
#define S_THETA_MAX          1e19f
/*  Values checked per slice of s_params_plausible (on the stack). At
    D = 1M the check costs about what the decode does (0.9 ms).  */
#define S_CHECK_SLICE        1024

/*  s_request's verdict on a reply that answers an earlier request.  */
#define S_STALE 1

struct fasgd_link_t {
    char *push_endpoint, *fetch_endpoint;
    fasgd_channel_curve_t curve;
    fasgd_channel_t push, fetch;
    int timeout_ms;
    uint64_t seed;
    int seed_set;
    uint32_t seq;                   /* the last seq used on push or fetch */

    int joined;
    uint32_t id;
    fasgd_proto_desc_t desc;
    size_t nparams;
    double vbar;
    uint64_t server_ts;
    int last_status;
    char last_reason [FASGD_PROTO_TEXT_MAX + 1];

    /*  pushed: this session's first PUSH went through; fetched: θ was
        received in this session.  */
    fasgd_gates_t gates;
    uint64_t theta_refused;         /* PARAMS refused since θ was last taken, in any session */
    int resolved;                   /* the endpoints' host names resolved once */
    uint64_t last_push_ts;          /* the timestamp the last PUSH carried */
    int then_fetch;                 /* a request with THEN_FETCH is waiting */
    int wire_push, wire_params;     /* fasgd_wire_t, from the WELCOME */
    float *residual;                /* compact pushes: the rounding error not yet sent */
    float *residual_next;           /* ... and what it becomes if this push is taken */
    float *accum;                   /* accumulate: skipped gradients, summed */
    float *sum;                     /* accumulate: the sum being sent */

    fasgd_client_stats_t stats;
    fasgd_heartbeat_t *heartbeat;   /* while joined */
};

/*  A copy of a peer's text fit for a log line: printable ASCII and UTF-8
    bytes pass, control characters become '?'.  */
static void
s_text_copy (char *dst, size_t dstlen, const void *src, size_t len)
{
    const unsigned char *s = src;
    if (len > dstlen - 1)
        len = dstlen - 1;
    for (size_t i = 0; i < len; i++)
        dst [i] = (char) (s [i] < 0x20 || s [i] == 0x7f ? '?' : s [i]);
    dst [len] = '\0';
}

/*  Heartbeats                                                               */

static void
s_heartbeat_stop (fasgd_link_t *self)
{
    fasgd_heartbeat_destroy (&self->heartbeat);
}

static int
s_heartbeat_start (fasgd_link_t *self)
{
    s_heartbeat_stop (self);
    int ms = fasgd_heartbeat_period (self->desc.heartbeat_ms, self->desc.expiry_ms);
    if (ms == 0)
        return 0;
    self->heartbeat = fasgd_heartbeat_new (self->push_endpoint, &self->curve, self->id, self->desc.session, ms);
    return self->heartbeat ? 0 : -1;
}

/*  Requests                                                                 */

static int
s_refused (fasgd_link_t *self, const fasgd_header_t *h, const zframe_t *body)
{
    self->last_status = h->status;
    if (body)
        s_text_copy (self->last_reason, sizeof self->last_reason,
                     zframe_data ((zframe_t *) body), zframe_size ((zframe_t *) body));
    else
        snprintf (self->last_reason, sizeof self->last_reason, "%s", fasgd_proto_status_text (h->status));
    fasgd_log_debug ("client: server refused: %d %s", h->status, self->last_reason);
    if (h->status == FASGD_STATUS_UNKNOWN_CLIENT) {
        /*  The server does not know us (it restarted, or expired us):
            the session is over; the caller joins again.  */
        self->joined = 0;
        s_heartbeat_stop (self);
        return FASGD_CLIENT_ENOTJOINED;
    }
    if (h->status == FASGD_STATUS_VERSION)
        return FASGD_CLIENT_EVERSION;
    return FASGD_CLIENT_EREFUSED;
}

static int
s_malformed (fasgd_link_t *self, const char *what)
{
    self->last_status = 0;
    snprintf (self->last_reason, sizeof self->last_reason, "malformed reply: %s", what);
    fasgd_log_warn ("client: %s", self->last_reason);
    return FASGD_CLIENT_EPROTO;
}

/*  Checks a reply against the request: S_STALE when it answers another
    one, 0 when it is the expected type, else an error code.  */
static int
s_reply_check (fasgd_link_t *self, uint32_t seq, int expect, int nframes,
               zframe_t *hframe, zframe_t *body, fasgd_header_t *rep)
{
    if (!hframe)
        return s_malformed (self, "no header");
    int rc = fasgd_proto_header_decode (zframe_data (hframe), zframe_size (hframe), rep);
    if (rc == FASGD_PROTO_VERSION_MISMATCH) {
        self->last_status = FASGD_STATUS_VERSION;
        snprintf (self->last_reason, sizeof self->last_reason,
                  "the server speaks protocol version %u, this client %u",
                  (unsigned) rep->version, FASGD_PROTO_VERSION);
        return FASGD_CLIENT_EVERSION;
    }
    if (rc != FASGD_PROTO_OK)
        return s_malformed (self, "bad header");
    if (rep->seq != seq) {
        fasgd_log_debug ("client: discarding a stale %s reply (seq %" PRIu32 ", waiting for %" PRIu32 ")",
                         fasgd_proto_type_name (rep->type), rep->seq, seq);
        return S_STALE;
    }
    if (nframes > 2)
        return s_malformed (self, "more than two frames");
    size_t body_len = body ? zframe_size (body) : 0;
    if (fasgd_proto_body_check_wire (rep, body_len, self->nparams, self->wire_push, self->wire_params)
        != FASGD_PROTO_OK)
        return s_malformed (self, "body of the wrong length for its type");
    if (rep->type == FASGD_MSG_ERROR) {
        if (rep->status < 400 || rep->status > 599)
            return s_malformed (self, "ERROR without an error status");
        return s_refused (self, rep, body);
    }
    if (rep->type != expect)
        return s_malformed (self, "reply of the wrong type");
    int ok = rep->status == FASGD_STATUS_OK
          || (rep->status == FASGD_STATUS_BUFFERED && (expect == FASGD_MSG_ACK || self->then_fetch))
          || (rep->status == FASGD_STATUS_NOT_MODIFIED && expect == FASGD_MSG_PARAMS && !self->then_fetch);
    if (!ok)
        return s_malformed (self, "unexpected status");
    self->last_status = rep->status;
    self->vbar = rep->vbar;
    self->server_ts = rep->timestamp;
    return 0;
}

/*  Sends req (and the body frame, whose ownership it takes) on ch, waits
    up to the timeout for the reply with the same seq, and checks it. On
    0, *rep holds the reply's header and *reply_body_p (when not NULL) the
    body frame or NULL, the caller's to destroy.  */
static int
s_request (fasgd_link_t *self, fasgd_channel_t *ch, fasgd_header_t *req, zframe_t **body_p,
           int expect, fasgd_header_t *rep, zframe_t **reply_body_p)
{
    if (reply_body_p)
        *reply_body_p = NULL;
    if (!fasgd_channel_is_open (ch) && fasgd_channel_open (ch) != 0) {
        if (body_p)
            zframe_destroy (body_p);
        return FASGD_CLIENT_ESOCKET;
    }
    req->version = FASGD_PROTO_VERSION;
    req->seq = ++self->seq;
    req->session = req->type == FASGD_MSG_JOIN ? 0 : self->desc.session;
    int rc = fasgd_channel_send (ch, req, body_p, &self->stats.bytes_out);
    if (rc != 0)
        return rc;
    fasgd_heartbeat_sent (self->heartbeat);

    int64_t deadline = zclock_mono () + self->timeout_ms;
    for (;;) {
        zframe_t *hframe, *rbody;
        int nframes;
        size_t in = 0;
        char why [sizeof self->last_reason];
        rc = fasgd_channel_recv (ch, deadline, &hframe, &rbody, &nframes, &in, why, sizeof why);
        if (rc == 0)
            break;
        if (rc == FASGD_CLIENT_ESECURITY) {
            self->last_status = 0;
            snprintf (self->last_reason, sizeof self->last_reason, "%s", why);
            fasgd_log_debug ("client: %s", self->last_reason);
        }
        if (rc < 0)
            return rc;
        self->stats.bytes_in += in;
        rc = s_reply_check (self, req->seq, expect, nframes, hframe, rbody, rep);
        zframe_destroy (&hframe);
        if (rc == S_STALE) {
            zframe_destroy (&rbody);
            continue;
        }
        if (rc == FASGD_CLIENT_EPROTO || rc == FASGD_CLIENT_EVERSION)
            /*  After nonsense, trust nothing more on this connection.  */
            fasgd_channel_close (ch);
        if (rc == 0 && reply_body_p)
            *reply_body_p = rbody;
        else
            zframe_destroy (&rbody);
        return rc;
    }
    /*  The reply may still come: on a fresh socket it cannot be mistaken
        for the answer to the next request.  */
    fasgd_channel_close (ch);
    self->last_status = 0;
    if (ch->turned_away > 0)
        snprintf (self->last_reason, sizeof self->last_reason, "no reply to %s from %s within %d ms: it turned "
                  "the connection away %d times (it is full: limits.connections, or flooded with connections)",
                  fasgd_proto_type_name (req->type), ch->endpoint, self->timeout_ms, ch->turned_away);
    else
        snprintf (self->last_reason, sizeof self->last_reason, "no reply to %s from %s within %d ms",
                  fasgd_proto_type_name (req->type), ch->endpoint, self->timeout_ms);
    fasgd_log_debug ("client: %s", self->last_reason);
    return FASGD_CLIENT_ETIMEOUT;
}

/*  Ends the session on this side: no heartbeats, fresh sockets next time,
    no leftover gradients.  */
static void
s_session_end (fasgd_link_t *self)
{
    s_heartbeat_stop (self);
    fasgd_channel_close (&self->push);
    fasgd_channel_close (&self->fetch);
    self->joined = 0;
    self->gates.has_accum = 0;
    free (self->accum);
    free (self->sum);
    self->accum = self->sum = NULL;
    free (self->residual);
    free (self->residual_next);
    self->residual = self->residual_next = NULL;
}

int
fasgd_link_gates_from_desc (const fasgd_proto_desc_t *d, uint64_t seed, fasgd_gates_t *gates,
                            char *err, size_t errlen)
{
    fasgd_gate_params_t fp, pp;
    fasgd_gate_params_default (&fp);
    fasgd_gate_params_default (&pp);
    /*  An absent key leaves its field empty or zero: the defaults then
        stand (always, every 1, ε_g 1e-4, resend-last).  */
    if (*d->fetch_gate && (fp.kind = fasgd_gate_kind_parse (d->fetch_gate)) < 0)
        return fasgd_errbuf (err, errlen, "unknown fetch gate '%s'", d->fetch_gate);
    if (*d->push_gate && (pp.kind = fasgd_gate_kind_parse (d->push_gate)) < 0)
        return fasgd_errbuf (err, errlen, "unknown push gate '%s'", d->push_gate);
    if (d->fetch_every != 0)
        fp.every = d->fetch_every;
    if (d->push_every != 0)
        pp.every = d->push_every;
    fp.c = d->fetch_c;
    pp.c = d->push_c;
    if (d->gate_eps != 0)
        fp.eps = pp.eps = d->gate_eps;
    char why [128];
    if (fasgd_gate_params_check (&fp, why, sizeof why) != 0)
        return fasgd_errbuf (err, errlen, "fetch gate: %s", why);
    if (fasgd_gate_params_check (&pp, why, sizeof why) != 0)
        return fasgd_errbuf (err, errlen, "push gate: %s", why);
    int skip = *d->push_skip ? fasgd_push_skip_parse (d->push_skip) : FASGD_PUSH_SKIP_RESEND_LAST;
    if (skip < 0)
        return fasgd_errbuf (err, errlen, "unknown push skip '%s'", d->push_skip);
    fasgd_gates_init (gates, &pp, &fp, skip, seed, S_PUSH_GATE_STREAM, S_FETCH_GATE_STREAM);
    return 0;
}

/*  An endpoint a DEALER can connect to, by the checks ZeroMQ itself makes
    at connect time: tcp://HOST:PORT (HOST a name, an IPv4 address or an
    IPv6 one in brackets, PORT digits), ipc://PATH or inproc://NAME. Said
    here rather than by connecting: a socket connected before
    fasgd_link_set_curve would greet a CURVE server in plain.  */
static int
s_endpoint_ok (const char *ep)
{
    if (!strncmp (ep, "ipc://", 6) || !strncmp (ep, "inproc://", 9))
        return strstr (ep, "://") [3] != '\0';
    if (strncmp (ep, "tcp://", 6) != 0)
        return 0;
    const char *host = ep + 6, *colon = strrchr (host, ':');
    if (!colon || colon == host || !colon [1])
        return 0;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    for (const char *p = host; p < colon; p++)
        if (!isalnum ((unsigned char) *p) && !strchr ("-._:[]%;", *p))
            return 0;
    return 1;
}

/*  API                                                                      */

fasgd_link_t *
fasgd_link_new (const char *push_endpoint, const char *fetch_endpoint)
{
    if (!push_endpoint || !fetch_endpoint || !s_endpoint_ok (push_endpoint) || !s_endpoint_ok (fetch_endpoint))
        return NULL;
    fasgd_link_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->push_endpoint = strdup (push_endpoint);
    self->fetch_endpoint = strdup (fetch_endpoint);
    if (!self->push_endpoint || !self->fetch_endpoint) {
        fasgd_link_destroy (&self);
        return NULL;
    }
    self->timeout_ms = S_DEFAULT_TIMEOUT_MS;
    fasgd_channel_init (&self->push, self->push_endpoint, &self->curve, S_CONTROL_MAXMSG);
    fasgd_channel_init (&self->fetch, self->fetch_endpoint, &self->curve, S_CONTROL_MAXMSG);
    /*  The sockets open with the first request, made as set by then.  */
    return self;
}

void
fasgd_link_destroy (fasgd_link_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_link_t *self = *self_p;
    s_session_end (self);
    zcert_destroy (&self->curve.cert);
    free (self->push_endpoint);
    free (self->fetch_endpoint);
    free (self);
    *self_p = NULL;
}

int
fasgd_link_set_curve (fasgd_link_t *self, const char *server_key, const char *cert_file)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    self->last_status = 0;
    if (self->joined) {
        fasgd_errbuf (self->last_reason, sizeof self->last_reason, "CURVE is set before joining, not after");
        return FASGD_CLIENT_EINVAL;
    }
    char key [41] = "";
    zcert_t *cert = NULL;
    if (!server_key || !*server_key) {
        if (cert_file && *cert_file) {
            fasgd_errbuf (self->last_reason, sizeof self->last_reason,
                          "a client certificate needs the server's key too");
            return FASGD_CLIENT_EINVAL;
        }
    }
    else if (fasgd_curve_public_key_load (server_key, key, self->last_reason, sizeof self->last_reason) != 0)
        return FASGD_CLIENT_EINVAL;
    else if (cert_file && *cert_file) {
        if (!(cert = fasgd_curve_secret_cert_load (cert_file, self->last_reason, sizeof self->last_reason)))
            return FASGD_CLIENT_EINVAL;
    }
    /*  No certificate: a key of this process's own, for servers that
        allow any.  */
    else if (!(cert = zcert_new ()))
        return FASGD_CLIENT_ENOMEM;
    zcert_destroy (&self->curve.cert);
    self->curve.cert = cert;
    memcpy (self->curve.server_key, key, sizeof key);
    /*  The next requests go out on sockets made the new way.  */
    fasgd_channel_close (&self->push);
    fasgd_channel_close (&self->fetch);
    return 0;
}

const char *
fasgd_link_public_key (const fasgd_link_t *self)
{
    return self && self->curve.cert ? zcert_public_txt (self->curve.cert) : "";
}

void
fasgd_link_set_timeout (fasgd_link_t *self, int timeout_ms)
{
    if (self && timeout_ms > 0)
        self->timeout_ms = timeout_ms;
}

void
fasgd_link_set_seed (fasgd_link_t *self, uint64_t seed)
{
    if (!self)
        return;
    self->seed = seed;
    self->seed_set = 1;
    if (self->joined) {
        /*  Reseeds the draws, keeps the counters.  */
        fasgd_rng_seed (&self->gates.fetch.rng, seed, S_FETCH_GATE_STREAM);
        fasgd_rng_seed (&self->gates.push.rng, seed, S_PUSH_GATE_STREAM);
    }
}

int
fasgd_link_join (fasgd_link_t *self, const char *name)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    size_t name_len = name ? strlen (name) : 0;
    if (name_len > FASGD_PROTO_TEXT_MAX)
        return FASGD_CLIENT_EINVAL;
    s_session_end (self);
    memset (&self->stats, 0, sizeof self->stats);
    self->id = 0;
    self->nparams = 0;
    self->gates.pushed = self->gates.fetched = 0;
    self->push.maxmsgsize = S_CONTROL_MAXMSG;

    /*  A name that does not resolve is said at once, not taken for a
        server that does not answer; once resolved, a resolver's hiccup
        later is left to the timeouts.  */
    if (!self->resolved) {
        if (fasgd_channel_resolves (self->push_endpoint, self->last_reason, sizeof self->last_reason) != 0
            || fasgd_channel_resolves (self->fetch_endpoint, self->last_reason, sizeof self->last_reason) != 0) {
            self->last_status = 0;
            fasgd_log_debug ("client: %s", self->last_reason);
            return FASGD_CLIENT_ESOCKET;
        }
        self->resolved = 1;
    }
    zframe_t *body = NULL;
    if (name_len > 0 && !(body = zframe_new (name, name_len)))
        return FASGD_CLIENT_ENOMEM;
    fasgd_header_t req = { .type = FASGD_MSG_JOIN }, rep;
    zframe_t *welcome;
    int rc = s_request (self, &self->push, &req, &body, FASGD_MSG_WELCOME, &rep, &welcome);
    if (rc != 0)
        return rc;

    fasgd_proto_desc_t desc;
    char err [160];
    rc = fasgd_proto_desc_decode ((const char *) zframe_data (welcome), zframe_size (welcome),
                                  &desc, err, sizeof err);
    zframe_destroy (&welcome);
    if (rc != 0) {
        fasgd_channel_close (&self->push);
        return s_malformed (self, err);
    }
    if (desc.protocol != 0 && desc.protocol != FASGD_PROTO_VERSION) {
        fasgd_channel_close (&self->push);
        self->last_status = FASGD_STATUS_VERSION;
        snprintf (self->last_reason, sizeof self->last_reason,
                  "the server describes protocol %" PRIu32 ", this client speaks %u",
                  desc.protocol, FASGD_PROTO_VERSION);
        return FASGD_CLIENT_EVERSION;
    }
    if (desc.params == 0 || desc.params > S_MAX_PARAMS) {
        fasgd_channel_close (&self->push);
        return s_malformed (self, "params out of range");
    }
    self->desc = desc;
    self->id = rep.client_id;
    self->nparams = (size_t) desc.length;     /* the values of its part: all D unsharded */
    uint64_t seed = self->seed_set ? self->seed : self->id;
    if (fasgd_link_gates_from_desc (&desc, seed, &self->gates, self->last_reason, sizeof self->last_reason) != 0) {
        fasgd_channel_close (&self->push);
        self->last_status = 0;
        fasgd_log_warn ("client: %s", self->last_reason);
        return FASGD_CLIENT_EPROTO;
    }
    /*  An absent wire key is float32, as before it existed.  */
    self->wire_push = *desc.wire_push ? fasgd_proto_wire_parse (desc.wire_push) : FASGD_WIRE_F32;
    self->wire_params = *desc.wire_params ? fasgd_proto_wire_parse (desc.wire_params) : FASGD_WIRE_F32;
    if (self->wire_push < 0 || self->wire_params < 0) {
        fasgd_channel_close (&self->push);
        self->last_status = 0;
        fasgd_errbuf (self->last_reason, sizeof self->last_reason, "unknown wire format '%s' / '%s'",
                      desc.wire_push, desc.wire_params);
        fasgd_log_warn ("client: %s", self->last_reason);
        return FASGD_CLIENT_EPROTO;
    }
    if (self->wire_push != FASGD_WIRE_F32) {
        self->residual = calloc (self->nparams, sizeof (float));
        self->residual_next = malloc (self->nparams * sizeof (float));
        if (!self->residual || !self->residual_next) {
            s_session_end (self);
            return FASGD_CLIENT_ENOMEM;
        }
    }
    if (self->gates.skip == FASGD_PUSH_SKIP_ACCUMULATE) {
        self->accum = malloc (self->nparams * sizeof (float));
        self->sum = malloc (self->nparams * sizeof (float));
        if (!self->accum || !self->sum) {
            s_session_end (self);
            return FASGD_CLIENT_ENOMEM;
        }
    }
    /*  The fetch socket accepts θ and nothing larger. It is opened fresh
        for the session: nothing from an earlier one can be waiting in it.  */
    int64_t theta_bytes = (int64_t) self->nparams * (int64_t) sizeof (float);
    self->fetch.maxmsgsize = theta_bytes > S_CONTROL_MAXMSG ? theta_bytes : S_CONTROL_MAXMSG;
    if (fasgd_channel_open (&self->fetch) != 0) {
        s_session_end (self);
        return FASGD_CLIENT_ESOCKET;
    }
    /*  θ may come on the push socket too (PUSH with THEN_FETCH): it is
        reopened with the same limit. The server knows us by id, not by
        connection.  */
    self->push.maxmsgsize = self->fetch.maxmsgsize;
    if (fasgd_channel_open (&self->push) != 0) {
        s_session_end (self);
        return FASGD_CLIENT_ESOCKET;
    }
    /*  Heard from at once on the new connection: the server closes one
        still silent after limits.greeting_ms, and the first push may
        come later than that (a first gradient slow to compute). A beat
        unanswered is no failure of the join: the first push will say.
        Like the heartbeat thread's, it is not the caller's traffic.  */
    fasgd_header_t beat = { .type = FASGD_MSG_HEARTBEAT, .client_id = self->id }, beat_rep;
    uint64_t out = self->stats.bytes_out, in = self->stats.bytes_in;
    if (s_request (self, &self->push, &beat, NULL, FASGD_MSG_ACK, &beat_rep, NULL) != 0)
        fasgd_log_debug ("client: no answer to the new push connection's first beat: %s", self->last_reason);
    self->stats.bytes_out = out;
    self->stats.bytes_in = in;
    self->joined = 1;
    if (s_heartbeat_start (self) != 0) {
        s_session_end (self);
        snprintf (self->last_reason, sizeof self->last_reason, "cannot start the heartbeat thread");
        return FASGD_CLIENT_ESOCKET;
    }
    fasgd_log_debug ("client: joined %s as client %" PRIu32 ": %zu parameters, T=%" PRIu64,
                     self->push_endpoint, self->id, self->nparams, self->server_ts);
    return 0;
}

const fasgd_proto_desc_t *
fasgd_link_desc (const fasgd_link_t *self)
{
    return self && self->nparams ? &self->desc : NULL;
}

uint32_t
fasgd_link_id (const fasgd_link_t *self)
{
    return self ? self->id : 0;
}

size_t
fasgd_link_nparams (const fasgd_link_t *self)
{
    return self ? self->nparams : 0;
}

/*  Whether the n values of a PARAMS body (as wire) can be a server's θ:
    finite, and none beyond ±S_THETA_MAX. Decoded a slice at a time on
    the stack, so that the caller's θ is written only once the whole body
    passed. 0, or FASGD_CLIENT_EPROTO naming the first value refused.  */
static int
s_params_plausible (fasgd_link_t *self, const uint8_t *src, size_t n)
{
    float slice [S_CHECK_SLICE];
    size_t size = fasgd_proto_wire_size (self->wire_params);
    for (size_t at = 0; at < n; at += S_CHECK_SLICE) {
        size_t k = n - at < S_CHECK_SLICE ? n - at : S_CHECK_SLICE;
        fasgd_proto_wire_decode (self->wire_params, src + at * size, k, slice);
        /*  The slice's largest |value| (vectorised; NaN when one is NaN),
            then the first value refused, to name it. Written so that a
            NaN fails the test.  */
        if (fasgd_floats_max_abs (slice, k) <= S_THETA_MAX)
            continue;
        for (size_t i = 0; i < k; i++) {
            if (fabsf (slice [i]) <= S_THETA_MAX)
                continue;
            char what [200];        /* with "malformed reply: ", a last_reason */
            snprintf (what, sizeof what, "parameters from %s that no server holds: value %zu of %zu is %g "
                      "(θ is finite and within ±%g); refused, none of them used",
                      self->fetch_endpoint, (size_t) self->desc.offset + at + i, (size_t) self->desc.params,
                      (double) slice [i], (double) S_THETA_MAX);
            return s_malformed (self, what);
        }
    }
    return 0;
}

/*  θ from a PARAMS body (which it destroys) into theta, its timestamp
    into *ts. 0, or FASGD_CLIENT_EPROTO for a body of the wrong size or
    values no server holds (s_params_plausible), theta then untouched.  */
static int
s_params_take (fasgd_link_t *self, zframe_t **body_p, const fasgd_header_t *rep,
               float *theta, uint64_t *ts)
{
    zframe_t *body = *body_p;
    *body_p = NULL;
    if (!body || zframe_size (body) != self->nparams * fasgd_proto_wire_size (self->wire_params)) {
        zframe_destroy (&body);
        return s_malformed (self, "PARAMS of the wrong size");
    }
    if (s_params_plausible (self, zframe_data (body), self->nparams) != 0) {
        zframe_destroy (&body);
        self->theta_refused++;
        return FASGD_CLIENT_EPROTO;
    }
    fasgd_proto_wire_decode (self->wire_params, zframe_data (body), self->nparams, theta);
    zframe_destroy (&body);
    self->theta_refused = 0;
    *ts = rep->timestamp;
    self->gates.fetched = 1;
    return 0;
}

int
fasgd_link_fetch (fasgd_link_t *self, float *theta, uint64_t *timestamp, int if_newer)
{
    if (!self || !theta || !timestamp)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    /*  *timestamp is only an input with if_newer: otherwise it may be
        anything, and "none held" is 0.  */
    fasgd_header_t req = { .type = FASGD_MSG_FETCH,
                           .flags = if_newer ? FASGD_PROTO_FLAG_IF_NEWER : 0,
                           .client_id = self->id,
                           .timestamp = if_newer ? *timestamp : 0 }, rep;
    zframe_t *body;
    int rc = s_request (self, &self->fetch, &req, NULL, FASGD_MSG_PARAMS, &rep, &body);
    if (rc != 0)
        return rc;
    if (rep.status == FASGD_STATUS_NOT_MODIFIED) {
        zframe_destroy (&body);
        if (!if_newer)
            return s_malformed (self, "304 to a FETCH without if-newer");
        self->stats.fetches++;
        return 1;
    }
    /*  θ refused is not a fetch.  */
    if ((rc = s_params_take (self, &body, &rep, theta, timestamp)) != 0)
        return rc;
    self->stats.fetches++;
    return 0;
}

/*  A PUSH of src, computed on the parameters of timestamp, or with src
    NULL a PUSH_REPEAT. With theta, THEN_FETCH: θ after the push goes to
    theta and its timestamp to *ts, in the same round trip. 1 when
    softsync buffered the push.  */
static int
s_push_request (fasgd_link_t *self, const float *src, uint64_t timestamp, float *theta, uint64_t *ts)
{
    zframe_t *body = NULL;
    if (src) {
        if (!(body = zframe_new (NULL, self->nparams * fasgd_proto_wire_size (self->wire_push))))
            return FASGD_CLIENT_ENOMEM;
        if (self->wire_push == FASGD_WIRE_F32)
            fasgd_proto_floats_encode (src, self->nparams, zframe_data (body));
        else {
            /*  Error feedback: what rounding leaves out of this push goes
                into the next, once this one is taken.  */
            fasgd_proto_wire_encode_feedback (self->wire_push, src, self->residual, self->residual_next,
                                              self->nparams, zframe_data (body));
        }
    }
    fasgd_header_t req = { .type = src ? FASGD_MSG_PUSH : FASGD_MSG_PUSH_REPEAT,
                           .flags = theta ? FASGD_PROTO_FLAG_THEN_FETCH : 0, .client_id = self->id,
                           .timestamp = src ? timestamp : 0 }, rep;
    zframe_t *params = NULL;
    self->then_fetch = theta != NULL;
    int rc = s_request (self, &self->push, &req, src ? &body : NULL,
                        theta ? FASGD_MSG_PARAMS : FASGD_MSG_ACK, &rep, theta ? &params : NULL);
    self->then_fetch = 0;
    if (rc == FASGD_CLIENT_EREFUSED && !src && self->last_status == FASGD_STATUS_CONFLICT)
        /*  The server holds no gradient of ours to repeat: the next gated
            push carries one again.  */
        self->gates.pushed = 0;
    if (rc != 0)
        return rc;
    if (src) {
        self->stats.pushes++;
        self->gates.pushed = 1;
        self->last_push_ts = timestamp;
        if (self->residual) {
            float *t = self->residual;
            self->residual = self->residual_next;
            self->residual_next = t;
        }
    }
    else
        self->stats.repeats++;
    if (theta) {
        if ((rc = s_params_take (self, &params, &rep, theta, ts)) != 0)
            return rc;
        self->stats.fetches++;
    }
    return rep.status == FASGD_STATUS_BUFFERED ? 1 : 0;
}

int
fasgd_link_push_fetch (fasgd_link_t *self, const float *grad, uint64_t timestamp,
                         float *theta, uint64_t *new_timestamp)
{
    if (!self || !grad || !theta || !new_timestamp)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    return s_push_request (self, grad, timestamp, theta, new_timestamp);
}

int
fasgd_link_push (fasgd_link_t *self, const float *grad, uint64_t timestamp)
{
    if (!self || !grad)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    return s_push_request (self, grad, timestamp, NULL, NULL);
}

int
fasgd_link_push_n (fasgd_link_t *self, const float *grad, size_t n, uint64_t timestamp)
{
    if (!self || !grad)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    if (n != self->nparams)
        return FASGD_CLIENT_EINVAL;
    return s_push_request (self, grad, timestamp, NULL, NULL);
}

int
fasgd_link_push_repeat (fasgd_link_t *self)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    return s_push_request (self, NULL, 0, NULL, NULL);
}

int
fasgd_link_want_fetch (fasgd_link_t *self)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    return fasgd_gate_decide (&self->gates.fetch, self->vbar);
}

int
fasgd_link_want_push (fasgd_link_t *self)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    return fasgd_gate_decide (&self->gates.push, self->vbar);
}

/*  What the push gate chose for one opportunity.  */
typedef enum { S_TX_PUSH, S_TX_REPEAT, S_TX_NONE } s_tx_t;

/*  One opportunity of the push gate for grad (fasgd_gates_push):
    S_TX_PUSH with *out the gradient to send (grad, or with skip
    accumulate the sum of the skipped ones and grad), S_TX_REPEAT for a
    PUSH_REPEAT, or S_TX_NONE when grad was added to the local sum. The
    sum is kept until a push of it is taken (s_push_tx).  */
static s_tx_t
s_push_gate (fasgd_link_t *self, const float *grad, const float **out)
{
    *out = grad;
    switch (fasgd_gates_push (&self->gates, self->vbar)) {
        case FASGD_TX_PUSH_SUM:
            fasgd_gates_sum (self->sum, self->accum, grad, self->nparams);
            *out = self->sum;
            return S_TX_PUSH;
        case FASGD_TX_PUSH:
            return S_TX_PUSH;
        case FASGD_TX_REPEAT:
            return S_TX_REPEAT;
        default:
            fasgd_gates_keep (&self->gates, self->accum, grad, self->nparams);
            self->stats.accumulated++;
            return S_TX_NONE;
    }
}

/*  Sends what the push gate chose (S_TX_PUSH: a PUSH of out, computed
    on the parameters of j; S_TX_REPEAT: a PUSH_REPEAT) and waits for the
    ACK. Returns as fasgd_link_push; *tau (when not NULL) gets the
    staleness of the gradient applied, when it was applied at once.  */
static int
s_push_tx (fasgd_link_t *self, s_tx_t tx, const float *out, uint64_t j, int64_t *tau)
{
    uint64_t pj = tx == S_TX_PUSH ? j : self->last_push_ts;
    int rc = s_push_request (self, tx == S_TX_PUSH ? out : NULL, j, NULL, NULL);
    if (rc < 0)
        return rc;                      /* an accumulated sum stays for the next try */
    if (tx == S_TX_PUSH)
        self->gates.has_accum = 0;
    if (rc == 0 && tau)
        *tau = (int64_t) (self->server_ts - 1 - pj);
    return rc;
}

int
fasgd_link_push_gated (fasgd_link_t *self, const float *grad, uint64_t timestamp)
{
    if (!self || !grad)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    const float *out;
    s_tx_t tx = s_push_gate (self, grad, &out);
    int rc = tx == S_TX_NONE ? 0 : s_push_tx (self, tx, out, timestamp, NULL);
    return rc < 0 ? rc : 0;
}

int
fasgd_link_fetch_gated (fasgd_link_t *self, float *theta, uint64_t *timestamp)
{
    if (!self || !theta || !timestamp)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    int have = self->gates.fetched;
    if (!fasgd_gates_fetch (&self->gates, self->vbar)) {
        self->stats.fetch_skips++;
        return 0;
    }
    int rc = fasgd_link_fetch (self, theta, timestamp, have);
    if (rc < 0)
        return rc;
    return rc == 1 ? 0 : 1;
}

int
fasgd_link_step_gated (fasgd_link_t *self, const float *grad, float *theta,
                         uint64_t *timestamp, int64_t *tau)
{
    if (tau)
        *tau = -1;
    if (!self || !grad || !theta || !timestamp)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    const uint64_t j = *timestamp;
    const float *out;
    s_tx_t tx = s_push_gate (self, grad, &out);
    /*  The fetch gate can be asked before the push's reply unless it is
        B-FASGD's, whose draw is compared with the v̄ that reply brings.
        softsync's buffered pushes leave θ as it was: its fetches stay
        separate, with if-newer.  */
    int early = tx != S_TX_NONE && self->gates.fetch.p.kind != FASGD_GATE_BFASGD
                && strcmp (self->desc.rule, "softsync") != 0;
    if (early && fasgd_gates_fetch (&self->gates, self->vbar)) {
        uint64_t pj = tx == S_TX_PUSH ? j : self->last_push_ts;
        int rc = s_push_request (self, tx == S_TX_PUSH ? out : NULL, j, theta, timestamp);
        if (rc < 0)
            return rc;
        if (tx == S_TX_PUSH)
            self->gates.has_accum = 0;
        if (rc == 0 && tau)
            *tau = (int64_t) (*timestamp - 1 - pj);
        return 1;
    }
    /*  Otherwise the push (if any) on its own, then the fetch: skipped
        when the gate was asked already, else through the gate.  */
    if (tx != S_TX_NONE) {
        int rc = s_push_tx (self, tx, out, j, tau);
        if (rc < 0)
            return rc;
    }
    if (early) {
        self->stats.fetch_skips++;
        return 0;
    }
    return fasgd_link_fetch_gated (self, theta, timestamp);
}

int
fasgd_link_eval (fasgd_link_t *self, double error, double nll, uint64_t examples)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    char text [FASGD_PROTO_TEXT_MAX + 1];
    int len = snprintf (text, sizeof text, "error=%.9g\nnll=%.9g\nexamples=%" PRIu64 "\n",
                        error, nll, examples);
    if (len < 0 || (size_t) len >= sizeof text)
        return FASGD_CLIENT_EINVAL;
    zframe_t *body = zframe_new (text, (size_t) len);
    if (!body)
        return FASGD_CLIENT_ENOMEM;
    fasgd_header_t req = { .type = FASGD_MSG_EVAL, .client_id = self->id }, rep;
    return s_request (self, &self->push, &req, &body, FASGD_MSG_ACK, &rep, NULL);
}

int
fasgd_link_leave (fasgd_link_t *self)
{
    if (!self)
        return FASGD_CLIENT_EINVAL;
    if (!self->joined)
        return FASGD_CLIENT_ENOTJOINED;
    /*  No heartbeat may follow the LEAVE.  */
    s_heartbeat_stop (self);
    fasgd_header_t req = { .type = FASGD_MSG_LEAVE, .client_id = self->id }, rep;
    int rc = s_request (self, &self->push, &req, NULL, FASGD_MSG_ACK, &rep, NULL);
    s_session_end (self);
    return rc;
}

double
fasgd_link_vbar (const fasgd_link_t *self)
{
    return self ? self->vbar : 0.0;
}

uint64_t
fasgd_link_server_timestamp (const fasgd_link_t *self)
{
    return self ? self->server_ts : 0;
}

int
fasgd_link_last_status (const fasgd_link_t *self)
{
    return self ? self->last_status : 0;
}

const char *
fasgd_link_last_reason (const fasgd_link_t *self)
{
    return self ? self->last_reason : "";
}

const fasgd_client_stats_t *
fasgd_link_stats (const fasgd_link_t *self)
{
    return self ? &self->stats : NULL;
}

int
fasgd_link_joined (const fasgd_link_t *self)
{
    return self && self->joined;
}

int
fasgd_link_fetched (const fasgd_link_t *self)
{
    return self && self->gates.fetched;
}

uint64_t
fasgd_link_theta_refused (const fasgd_link_t *self)
{
    return self ? self->theta_refused : 0;
}
