/*  client library: every call against a fake server, a czmq actor in the
    test process with two ROUTER sockets on ephemeral loopback ports that
    speaks the protocol through proto/codec.h, records what it received,
    and can be told to misbehave (stay silent, refuse, send garbage, answer
    late or out of turn).  */
#include "client.h"
#include "codec.h"
#include "log.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#define S_D         16          /* w1 3x4 + b1 1x4 */
#define S_ID        7
#define S_SESSION   UINT64_C (0x5E55105E55105E55)   /* the WELCOME's token */
#define S_MAX_RECS  4096

typedef enum {
    S_FAKE_NORMAL = 0,
    S_FAKE_SILENT,              /* no reply */
    S_FAKE_ERROR,               /* ERROR with err_status and err_reason */
    S_FAKE_GARBAGE,             /* a frame that is no header */
    S_FAKE_STALE,               /* a reply with the wrong seq, then the right one */
    S_FAKE_DELAY,               /* the right reply after delay_ms */
    S_FAKE_VERSION,             /* a reply in the next protocol version */
    S_FAKE_BAD_DESC             /* JOIN: a WELCOME whose tensors do not add up */
} s_fake_mode_t;

typedef struct {
    fasgd_header_t h;
    int on_fetch;               /* which socket it came in on */
    uint8_t peer [256];         /* the ROUTER's routing id: which connection */
    size_t peer_len;
    uint8_t *body;
    size_t body_len;
    int64_t when;               /* zclock_mono () */
} s_rec_t;

typedef struct {
    /*  Set before the actor starts.  */
    fasgd_proto_desc_t desc;
    uint32_t id;
    float theta [S_D];
    /*  Shared with the actor, under lock.  */
    pthread_mutex_t lock;
    int mode;                   /* s_fake_mode_t */
    int mode_type;              /* the request type the mode applies to; 0 any but HEARTBEAT */
    int err_status;
    char err_reason [64];
    int delay_ms;
    double vbar;
    uint64_t T;
    s_rec_t recs [S_MAX_RECS];
    int nrecs;
    /*  Filled by the actor before it signals.  */
    char push_ep [256], fetch_ep [256];
    zactor_t *actor;
} s_fake_t;

static void
s_send_reply (zsock_t *sock, zframe_t *routing, const fasgd_header_t *h,
              const void *body, size_t body_len)
{
    uint8_t buf [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (h, buf);
    zmsg_t *msg = zmsg_new ();
    zmsg_append (msg, &(zframe_t *) { zframe_dup (routing) });
    zmsg_addmem (msg, buf, sizeof buf);
    if (body)
        zmsg_addmem (msg, body, body_len);
    zmsg_send (&msg, sock);
}

static void
s_fake_handle (s_fake_t *f, zsock_t *sock, int on_fetch, zmsg_t *msg)
{
    zframe_t *routing = zmsg_pop (msg);
    zframe_t *hframe = zmsg_pop (msg);
    zframe_t *body = zmsg_pop (msg);
    fasgd_header_t req;
    if (!routing || !hframe
        || fasgd_proto_header_decode (zframe_data (hframe), zframe_size (hframe), &req) != FASGD_PROTO_OK) {
        zframe_destroy (&routing);
        zframe_destroy (&hframe);
        zframe_destroy (&body);
        return;
    }
    pthread_mutex_lock (&f->lock);
    if (f->nrecs < S_MAX_RECS) {
        s_rec_t *r = &f->recs [f->nrecs++];
        r->h = req;
        r->on_fetch = on_fetch;
        r->peer_len = zframe_size (routing) < sizeof r->peer ? zframe_size (routing) : sizeof r->peer;
        memcpy (r->peer, zframe_data (routing), r->peer_len);
        r->when = zclock_mono ();
        r->body_len = body ? zframe_size (body) : 0;
        r->body = r->body_len ? malloc (r->body_len) : NULL;
        if (r->body)
            memcpy (r->body, zframe_data (body), r->body_len);
    }
    int mode = f->mode;
    if (req.type == FASGD_MSG_HEARTBEAT || (f->mode_type && f->mode_type != req.type))
        mode = S_FAKE_NORMAL;
    int err_status = f->err_status;
    char reason [64];
    snprintf (reason, sizeof reason, "%s", f->err_reason);
    int delay_ms = f->delay_ms;
    if (mode != S_FAKE_SILENT && mode != S_FAKE_ERROR
        && (req.type == FASGD_MSG_PUSH || req.type == FASGD_MSG_PUSH_REPEAT))
        f->T++;
    fasgd_header_t rep = { .version = FASGD_PROTO_VERSION, .status = FASGD_STATUS_OK,
                           .client_id = req.client_id, .seq = req.seq,
                           .timestamp = f->T, .vbar = f->vbar };
    float theta [S_D];
    memcpy (theta, f->theta, sizeof theta);
    pthread_mutex_unlock (&f->lock);

    const void *rbody = NULL;
    size_t rbody_len = 0;
    char desc [4096];
    uint8_t params [S_D * sizeof (float)];
    /*  θ travels as the description says (float32 when it says nothing).  */
    int params_wire = *f->desc.wire_params ? fasgd_proto_wire_parse (f->desc.wire_params) : FASGD_WIRE_F32;
    switch (req.type) {
        case FASGD_MSG_JOIN: {
            rep.type = FASGD_MSG_WELCOME;
            rep.client_id = f->id;
            /*  A description the codec will not write goes out empty,
                which the client must refuse (no Check assertion here: this
                is the actor's thread).  */
            int len = fasgd_proto_desc_encode (&f->desc, desc, sizeof desc);
            if (len < 0)
                len = 0;
            if (mode == S_FAKE_BAD_DESC)
                len = snprintf (desc, sizeof desc, "protocol=1\nparams=17\ntensors=w1:3x4,b1:1x4\n");
            rbody = desc;
            rbody_len = (size_t) len;
            break;
        }
        case FASGD_MSG_FETCH:
            rep.type = FASGD_MSG_PARAMS;
            if ((req.flags & FASGD_PROTO_FLAG_IF_NEWER) && req.timestamp == rep.timestamp)
                rep.status = FASGD_STATUS_NOT_MODIFIED;
            else {
                fasgd_proto_wire_encode (params_wire, theta, S_D, params);
                rbody = params;
                rbody_len = S_D * fasgd_proto_wire_size (params_wire);
            }
            break;
        case FASGD_MSG_PUSH:
        case FASGD_MSG_PUSH_REPEAT:
            rep.type = FASGD_MSG_ACK;
            if (req.flags & FASGD_PROTO_FLAG_THEN_FETCH) {
                rep.type = FASGD_MSG_PARAMS;
                fasgd_proto_wire_encode (params_wire, theta, S_D, params);
                rbody = params;
                rbody_len = S_D * fasgd_proto_wire_size (params_wire);
            }
            break;
        default:
            rep.type = FASGD_MSG_ACK;
            break;
    }
    switch (mode) {
        case S_FAKE_SILENT:
            break;
        case S_FAKE_ERROR: {
            fasgd_header_t e = rep;
            e.type = FASGD_MSG_ERROR;
            e.status = (uint16_t) err_status;
            s_send_reply (sock, routing, &e, reason, strlen (reason));
            break;
        }
        case S_FAKE_GARBAGE: {
            zmsg_t *m = zmsg_new ();
            zmsg_append (m, &(zframe_t *) { zframe_dup (routing) });
            zmsg_addstr (m, "garbage!");
            zmsg_send (&m, sock);
            break;
        }
        case S_FAKE_STALE: {
            fasgd_header_t old = rep;
            old.seq = req.seq - 1;
            old.timestamp = 999;
            s_send_reply (sock, routing, &old, rbody, rbody_len);
            s_send_reply (sock, routing, &rep, rbody, rbody_len);
            break;
        }
        case S_FAKE_DELAY:
            zclock_sleep (delay_ms);
            s_send_reply (sock, routing, &rep, rbody, rbody_len);
            break;
        case S_FAKE_VERSION: {
            fasgd_header_t v = rep;
            v.version = FASGD_PROTO_VERSION + 1;
            v.type = FASGD_MSG_ERROR;
            v.status = FASGD_STATUS_VERSION;
            s_send_reply (sock, routing, &v, NULL, 0);
            break;
        }
        default:
            s_send_reply (sock, routing, &rep, rbody, rbody_len);
            break;
    }
    zframe_destroy (&routing);
    zframe_destroy (&hframe);
    zframe_destroy (&body);
}

static void
s_fake_actor (zsock_t *pipe, void *args)
{
    s_fake_t *f = args;
    zsock_t *push = zsock_new_router ("tcp://127.0.0.1:*");
    zsock_t *fetch = zsock_new_router ("tcp://127.0.0.1:*");
    /*  The test checks the endpoints once the actor has signalled.  */
    snprintf (f->push_ep, sizeof f->push_ep, "%s", push ? zsock_endpoint (push) : "");
    snprintf (f->fetch_ep, sizeof f->fetch_ep, "%s", fetch ? zsock_endpoint (fetch) : "");
    zpoller_t *poller = zpoller_new (pipe, push, fetch, NULL);
    zpoller_set_nonstop (poller, true);
    zsock_signal (pipe, 0);
    for (;;) {
        void *which = zpoller_wait (poller, -1);
        if (which == pipe) {
            char *cmd = zstr_recv (pipe);
            int term = !cmd || streq (cmd, "$TERM");
            zstr_free (&cmd);
            if (term)
                break;
            continue;
        }
        if (!which)
            continue;
        zmsg_t *msg = zmsg_recv (which);
        if (msg)
            s_fake_handle (f, which, which == fetch, msg);
        zmsg_destroy (&msg);
    }
    zpoller_destroy (&poller);
    zsock_destroy (&push);
    zsock_destroy (&fetch);
}

static void
s_desc_default (fasgd_proto_desc_t *d)
{
    memset (d, 0, sizeof *d);
    d->protocol = FASGD_PROTO_VERSION;
    d->params = S_D;
    d->session = S_SESSION;
    d->ntensors = 2;
    snprintf (d->tensors [0].name, sizeof d->tensors [0].name, "w1");
    d->tensors [0].ndim = 2;
    d->tensors [0].dims [0] = 3;
    d->tensors [0].dims [1] = 4;
    snprintf (d->tensors [1].name, sizeof d->tensors [1].name, "b1");
    d->tensors [1].ndim = 1;
    d->tensors [1].dims [0] = 4;
    snprintf (d->model, sizeof d->model, "mlp");
    snprintf (d->model_sizes, sizeof d->model_sizes, "3,4");
    snprintf (d->model_activation, sizeof d->model_activation, "relu");
    snprintf (d->rule, sizeof d->rule, "fasgd");
    d->lr = 0.005;
    snprintf (d->fetch_gate, sizeof d->fetch_gate, "always");
    snprintf (d->push_gate, sizeof d->push_gate, "always");
    snprintf (d->push_skip, sizeof d->push_skip, "resend-last");
    d->fetch_every = d->push_every = 1;
    d->gate_eps = 1e-4;
    d->heartbeat_ms = 1000;
    d->expiry_ms = 10000;
}

/*  A fake server with the given description (NULL: the default).  */
static s_fake_t *
s_fake_start (const fasgd_proto_desc_t *desc)
{
    s_fake_t *f = calloc (1, sizeof *f);
    ck_assert_ptr_nonnull (f);
    if (desc)
        f->desc = *desc;
    else
        s_desc_default (&f->desc);
    f->id = S_ID;
    f->vbar = 0.25;
    f->T = 10;
    for (int i = 0; i < S_D; i++)
        f->theta [i] = 0.5f * (float) i - 3.0f;
    pthread_mutex_init (&f->lock, NULL);
    f->actor = zactor_new (s_fake_actor, f);
    ck_assert_ptr_nonnull (f->actor);
    ck_assert_str_ne (f->push_ep, "");
    ck_assert_str_ne (f->fetch_ep, "");
    return f;
}

static void
s_fake_stop (s_fake_t **f_p)
{
    s_fake_t *f = *f_p;
    zactor_destroy (&f->actor);
    for (int i = 0; i < f->nrecs; i++)
        free (f->recs [i].body);
    pthread_mutex_destroy (&f->lock);
    free (f);
    *f_p = NULL;
}

static void
s_fake_mode (s_fake_t *f, int mode, int type)
{
    pthread_mutex_lock (&f->lock);
    f->mode = mode;
    f->mode_type = type;
    pthread_mutex_unlock (&f->lock);
}

/*  Requests of a type received so far (0: all but heartbeats).  */
static int
s_fake_count (s_fake_t *f, int type)
{
    pthread_mutex_lock (&f->lock);
    int n = 0;
    for (int i = 0; i < f->nrecs; i++)
        if (type ? f->recs [i].h.type == type : f->recs [i].h.type != FASGD_MSG_HEARTBEAT)
            n++;
    pthread_mutex_unlock (&f->lock);
    return n;
}

/*  A copy of the k-th request of a type (0: all but heartbeats).  */
static s_rec_t
s_fake_rec (s_fake_t *f, int type, int k)
{
    s_rec_t out;
    memset (&out, 0, sizeof out);
    pthread_mutex_lock (&f->lock);
    for (int i = 0; i < f->nrecs; i++)
        if ((type ? f->recs [i].h.type == type : f->recs [i].h.type != FASGD_MSG_HEARTBEAT) && k-- == 0) {
            out = f->recs [i];
            break;
        }
    pthread_mutex_unlock (&f->lock);
    return out;
}

static fasgd_client_t *
s_client (s_fake_t *f, int join)
{
    fasgd_client_t *c = fasgd_client_new (f->push_ep, f->fetch_ep);
    ck_assert_ptr_nonnull (c);
    fasgd_client_set_timeout (c, 2000);
    if (join)
        ck_assert_int_eq (fasgd_client_join (c, "test-worker"), 0);
    return c;
}

/*  Whether a recorded body holds exactly these floats, little-endian.  */
static int
s_body_is (const s_rec_t *r, const float *v, size_t n)
{
    uint8_t expect [S_D * sizeof (float)];
    ck_assert_uint_le (n, S_D);
    fasgd_proto_floats_encode (v, n, expect);
    return r->body_len == n * sizeof (float) && memcmp (r->body, expect, r->body_len) == 0;
}

static volatile sig_atomic_t s_got_signal;

static void
s_on_signal (int sig)
{
    (void) sig;
    s_got_signal = 1;
}

/*  Signals the waiting thread (not any thread: ZeroMQ's and czmq's
    would do) 100 ms into its request.  */
static void *
s_poke (void *arg)
{
    zclock_sleep (100);
    pthread_kill (*(pthread_t *) arg, SIGALRM);
    return NULL;
}

START_TEST (test_signals_left_alone)
{
    /*  czmq's first socket would take SIGINT and SIGTERM over; the
        library puts the host's handlers back.  */
    struct sigaction sa, now;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    /*  First, before anything else in this process uses czmq (this test
        comes first in the suite, also when Check does not fork).  */
    fasgd_client_t *c = fasgd_client_new ("tcp://127.0.0.1:9", "tcp://127.0.0.1:9");
    ck_assert_ptr_nonnull (c);
    sigaction (SIGINT, NULL, &now);
    ck_assert (now.sa_handler == s_on_signal);
    sigaction (SIGTERM, NULL, &now);
    ck_assert (now.sa_handler == s_on_signal);
    raise (SIGINT);
    ck_assert_int_eq (s_got_signal, 1);
    fasgd_client_destroy (&c);

    s_fake_t *f = s_fake_start (NULL);
    c = s_client (f, 1);
    /*  And a signal during a request does not cut it short.  */
    float theta [S_D];
    uint64_t ts;
    pthread_mutex_lock (&f->lock);
    f->delay_ms = 300;
    pthread_mutex_unlock (&f->lock);
    s_fake_mode (f, S_FAKE_DELAY, FASGD_MSG_FETCH);
    s_got_signal = 0;
    sigaction (SIGALRM, &sa, NULL);
    pthread_t me = pthread_self (), poker;
    ck_assert_int_eq (pthread_create (&poker, NULL, s_poke, &me), 0);
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);
    ck_assert_int_eq (s_got_signal, 1);
    ck_assert_uint_eq (ts, 10);
    pthread_join (poker, NULL);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
    signal (SIGINT, SIG_DFL);
    signal (SIGTERM, SIG_DFL);
    signal (SIGALRM, SIG_DFL);
}
END_TEST

START_TEST (test_join_desc)
{
    s_fake_t *f = s_fake_start (NULL);
    fasgd_client_t *c = s_client (f, 0);
    ck_assert_ptr_null (fasgd_client_desc (c));
    ck_assert_uint_eq (fasgd_client_nparams (c), 0);
    ck_assert_int_eq (fasgd_client_join (c, "test-worker"), 0);
    const fasgd_proto_desc_t *d = fasgd_client_desc (c);
    ck_assert_ptr_nonnull (d);
    ck_assert_uint_eq (d->params, S_D);
    ck_assert_int_eq (d->ntensors, 2);
    ck_assert_str_eq (d->tensors [0].name, "w1");
    ck_assert_uint_eq (d->tensors [0].dims [0], 3);
    ck_assert_uint_eq (d->tensors [1].ndim, 1);
    ck_assert_str_eq (d->model, "mlp");
    ck_assert_str_eq (d->model_sizes, "3,4");
    ck_assert_str_eq (d->rule, "fasgd");
    ck_assert_double_eq (d->lr, 0.005);
    ck_assert_uint_eq (d->heartbeat_ms, 1000);
    ck_assert_uint_eq (fasgd_client_id (c), S_ID);
    ck_assert_uint_eq (fasgd_client_nparams (c), S_D);
    ck_assert_uint_eq (fasgd_client_server_timestamp (c), 10);
    ck_assert_double_eq (fasgd_client_vbar (c), 0.25);
    ck_assert_int_eq (fasgd_client_last_status (c), 200);

    /*  The JOIN as the server saw it: id 0, no session, the name as the
        body.  */
    s_rec_t r = s_fake_rec (f, FASGD_MSG_JOIN, 0);
    ck_assert_uint_eq (r.h.client_id, 0);
    ck_assert_uint_eq (r.h.session, 0);
    ck_assert_uint_eq (r.body_len, strlen ("test-worker"));
    ck_assert (memcmp (r.body, "test-worker", r.body_len) == 0);
    ck_assert_uint_eq (fasgd_client_stats (c)->bytes_out, 32 + strlen ("test-worker"));
    ck_assert_uint_gt (fasgd_client_stats (c)->bytes_in, 32);

    /*  A name longer than the protocol allows is refused locally.  */
    char longname [300];
    memset (longname, 'x', sizeof longname - 1);
    longname [sizeof longname - 1] = '\0';
    ck_assert_int_eq (fasgd_client_join (c, longname), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_JOIN), 1);

    /*  Joining again starts a new session; a NULL name sends no body.  */
    ck_assert_int_eq (fasgd_client_join (c, NULL), 0);
    r = s_fake_rec (f, FASGD_MSG_JOIN, 1);
    ck_assert_uint_eq (r.body_len, 0);
    ck_assert_int_eq (fasgd_client_leave (c), 0);
    fasgd_client_destroy (&c);
    ck_assert_ptr_null (c);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

START_TEST (test_fetch_push_round_trip)
{
    s_fake_t *f = s_fake_start (NULL);
    fasgd_client_t *c = s_client (f, 1);
    float theta [S_D];
    uint64_t ts = 12345;
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);
    ck_assert_uint_eq (ts, 10);
    for (int i = 0; i < S_D; i++)
        ck_assert_float_eq (theta [i], 0.5f * (float) i - 3.0f);
    s_rec_t r = s_fake_rec (f, FASGD_MSG_FETCH, 0);
    ck_assert (r.on_fetch);
    ck_assert_uint_eq (r.h.session, S_SESSION);      /* the WELCOME's token */
    ck_assert_uint_eq (r.h.client_id, S_ID);
    ck_assert_uint_eq (r.h.flags, 0);
    ck_assert_uint_eq (r.h.timestamp, 0);

    /*  if_newer with the current timestamp: 304, theta untouched.  */
    float sentinel [S_D];
    for (int i = 0; i < S_D; i++)
        theta [i] = sentinel [i] = 42.0f;
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 1), 1);
    ck_assert_uint_eq (ts, 10);
    ck_assert (memcmp (theta, sentinel, sizeof theta) == 0);
    ck_assert_int_eq (fasgd_client_last_status (c), 304);
    r = s_fake_rec (f, FASGD_MSG_FETCH, 1);
    ck_assert_uint_eq (r.h.flags, FASGD_PROTO_FLAG_IF_NEWER);
    ck_assert_uint_eq (r.h.timestamp, 10);

    /*  A push: its seq echoed, the gradient's bytes and j as sent.  */
    float grad [S_D];
    for (int i = 0; i < S_D; i++)
        grad [i] = (float) i * 0.125f - 1.0f;
    ck_assert_int_eq (fasgd_client_push (c, grad, ts), 0);
    ck_assert_uint_eq (fasgd_client_server_timestamp (c), 11);
    r = s_fake_rec (f, FASGD_MSG_PUSH, 0);
    ck_assert (!r.on_fetch);
    ck_assert_uint_eq (r.h.timestamp, 10);
    ck_assert_uint_eq (r.h.client_id, S_ID);
    ck_assert_uint_eq (r.h.session, S_SESSION);
    ck_assert (s_body_is (&r, grad, S_D));

    /*  Now θ is newer than what the client holds.  */
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 1), 0);
    ck_assert_uint_eq (ts, 11);
    ck_assert_float_eq (theta [0], -3.0f);

    /*  Every request carried a new seq.  */
    int n = s_fake_count (f, 0);
    for (int i = 1; i < n; i++)
        ck_assert_uint_gt (s_fake_rec (f, 0, i).h.seq, s_fake_rec (f, 0, i - 1).h.seq);

    const fasgd_client_stats_t *st = fasgd_client_stats (c);
    ck_assert_uint_eq (st->pushes, 1);
    ck_assert_uint_eq (st->fetches, 3);
    ck_assert_int_eq (fasgd_client_eval (c, 0.125, 0.5, 1000), 0);
    r = s_fake_rec (f, FASGD_MSG_EVAL, 0);
    char text [FASGD_PROTO_TEXT_MAX + 1];
    ck_assert_uint_gt (r.body_len, 0);
    ck_assert_uint_lt (r.body_len, sizeof text);
    memcpy (text, r.body, r.body_len);
    text [r.body_len] = '\0';
    ck_assert_str_eq (text, "error=0.125\nnll=0.5\nexamples=1000\n");
    ck_assert_int_eq (fasgd_client_leave (c), 0);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_LEAVE), 1);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

/*  A new client connects nothing before its first request: its sockets
    are made then, CURVE and all, so a secured client never greets a
    CURVE server in plain first.  */
START_TEST (test_new_connects_nothing)
{
    /*  On a loopback address of this process's own, not 127.0.0.1: a
        client another test left behind, still reconnecting to a port it
        once had there, would otherwise be counted when the port comes
        round again.  */
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    unsigned pid = (unsigned) getpid ();
    ck_assert_int_ge (zsock_bind (router, "tcp://127.%u.%u.%u:*", 1 + (pid >> 16) % 254, (pid >> 8) & 255,
                                  1 + (pid & 255) % 254), 0);
    zsock_t *mon = zsock_new (ZMQ_PAIR);
    ck_assert_int_eq (zmq_socket_monitor (zsock_resolve (router), "inproc://new-connects-nothing",
                                          ZMQ_EVENT_ACCEPTED), 0);
    ck_assert_int_eq (zsock_connect (mon, "inproc://new-connects-nothing"), 0);
    zsock_set_rcvtimeo (mon, 300);
    const char *ep = zsock_endpoint (router);
    fasgd_client_t *c = fasgd_client_new (ep, ep);
    ck_assert_ptr_nonnull (c);
    zmsg_t *ev = zmsg_recv (mon);
    ck_assert_msg (ev == NULL, "the client connected before its first request");
    /*  Its first request does connect.  */
    fasgd_client_set_timeout (c, 100);
    ck_assert_int_ne (fasgd_client_join (c, "x"), 0);
    ev = zmsg_recv (mon);
    ck_assert_ptr_nonnull (ev);
    zmsg_destroy (&ev);
    fasgd_client_destroy (&c);
    zmq_socket_monitor (zsock_resolve (router), NULL, 0);
    zsock_destroy (&mon);
    zsock_destroy (&router);
}
END_TEST

/*  A compact wire: pushes go as bf16 with their rounding error carried
    into the next accepted push (not into a refused one's), and θ comes as
    f16.  */
START_TEST (test_compact_wire)
{
    fasgd_proto_desc_t d;
    s_desc_default (&d);
    snprintf (d.wire_push, sizeof d.wire_push, "bf16");
    snprintf (d.wire_params, sizeof d.wire_params, "f16");
    s_fake_t *f = s_fake_start (&d);
    fasgd_client_t *c = s_client (f, 1);
    float theta [S_D], want [S_D];
    uint64_t ts;
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);
    uint8_t buf [2 * S_D];
    fasgd_proto_wire_encode (FASGD_WIRE_F16, f->theta, S_D, buf);
    fasgd_proto_wire_decode (FASGD_WIRE_F16, buf, S_D, want);
    ck_assert_mem_eq (theta, want, sizeof theta);

    float g [S_D], zero [S_D] = { 0 }, r1 [S_D], r2 [S_D];
    for (int i = 0; i < S_D; i++)
        g [i] = 0.1f + 0.0123f * (float) i;
    uint8_t first [2 * S_D], second [2 * S_D];
    fasgd_proto_wire_encode_feedback (FASGD_WIRE_BF16, g, zero, r1, S_D, first);
    fasgd_proto_wire_encode_feedback (FASGD_WIRE_BF16, g, r1, r2, S_D, second);
    ck_assert_int_eq (fasgd_client_push (c, g, ts), 0);
    s_rec_t r = s_fake_rec (f, FASGD_MSG_PUSH, 0);
    ck_assert_uint_eq (r.body_len, 2 * S_D);
    ck_assert_mem_eq (r.body, first, 2 * S_D);
    /*  Refused: its residual is not kept.  */
    s_fake_mode (f, S_FAKE_ERROR, FASGD_MSG_PUSH);
    ck_assert_int_ne (fasgd_client_push (c, g, ts), 0);
    s_fake_mode (f, S_FAKE_NORMAL, 0);
    ck_assert_int_eq (fasgd_client_push (c, g, ts), 0);
    r = s_fake_rec (f, FASGD_MSG_PUSH, 2);
    ck_assert_mem_eq (r.body, second, 2 * S_D);
    ck_assert_int_eq (fasgd_client_leave (c), 0);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

START_TEST (test_bad_arguments)
{
    s_fake_t *f = s_fake_start (NULL);
    ck_assert_ptr_null (fasgd_client_new ("not an endpoint", f->fetch_ep));
    ck_assert_ptr_null (fasgd_client_new (f->push_ep, NULL));
    const char *bad [] = { "tcp://host", "tcp://:5555", "tcp://host:55x5", "tcp://host:", "ipc://", "inproc://",
                           "udp://host:5555", "tcp://ho st:5555", "" };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++)
        ck_assert_msg (fasgd_client_new (bad [i], f->fetch_ep) == NULL, "%s was taken", bad [i]);
    const char *good [] = { "tcp://localhost:5555", "tcp://[::1]:5555", "tcp://10.0.0.1:1", "ipc:///tmp/x",
                            "inproc://x", "tcp://eth0;10.0.0.1:5555" };
    for (size_t i = 0; i < sizeof good / sizeof good [0]; i++) {
        fasgd_client_t *ok = fasgd_client_new (good [i], good [i]);
        ck_assert_msg (ok != NULL, "%s was refused", good [i]);
        fasgd_client_destroy (&ok);
    }
    fasgd_client_t *c = s_client (f, 0);
    float grad [S_D] = { 0 }, theta [S_D];
    uint64_t ts = 0;
    /*  Before JOIN nothing is sent.  */
    ck_assert_int_eq (fasgd_client_push (c, grad, 0), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (fasgd_client_push_gated (c, grad, 0), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (fasgd_client_push_repeat (c), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (fasgd_client_fetch_gated (c, theta, &ts), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (fasgd_client_want_push (c), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (fasgd_client_want_fetch (c), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (fasgd_client_eval (c, 0, 0, 0), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (fasgd_client_leave (c), FASGD_CLIENT_ENOTJOINED);
    zclock_sleep (100);
    ck_assert_int_eq (s_fake_count (f, 0), 0);

    ck_assert_int_eq (fasgd_client_join (c, "w"), 0);
    ck_assert_int_eq (fasgd_client_push (c, NULL, 0), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_push_n (c, grad, S_D - 1, 0), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_push_n (c, grad, S_D + 1, 0), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_fetch (c, NULL, &ts, 0), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_fetch (c, theta, NULL, 0), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_push_gated (c, NULL, 0), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_fetch_gated (c, NULL, &ts), FASGD_CLIENT_EINVAL);
    zclock_sleep (100);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 0);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_FETCH), 0);
    /*  The right size goes through.  */
    ck_assert_int_eq (fasgd_client_push_n (c, grad, S_D, 0), 0);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 1);

    ck_assert_int_eq (fasgd_client_join (NULL, "w"), FASGD_CLIENT_EINVAL);
    ck_assert_str_eq (fasgd_client_strerror (FASGD_CLIENT_ETIMEOUT), "no reply from the server within the timeout");
    for (int e = FASGD_CLIENT_EVERSION; e <= 0; e++)
        ck_assert_str_ne (fasgd_client_strerror (e), "unknown error");
    ck_assert_str_eq (fasgd_client_strerror (-99), "unknown error");
    ck_assert_int_eq (fasgd_client_set_log_level ("loud"), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_set_log_level (NULL), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_set_log_level ("debug"), 0);
    ck_assert_int_eq (fasgd_log_get_level (), FASGD_LOG_DEBUG);
    ck_assert_int_eq (fasgd_client_set_log_level ("notice"), 0);
    ck_assert_str_eq (fasgd_client_version (), PACKAGE_VERSION);
    ck_assert_uint_eq (fasgd_client_sizeof ("fasgd_proto_desc_t"), sizeof (fasgd_proto_desc_t));
    ck_assert_uint_eq (fasgd_client_sizeof ("fasgd_client_stats_t"), sizeof (fasgd_client_stats_t));
    ck_assert_uint_eq (fasgd_client_sizeof ("fasgd_client_t"), 0);
    ck_assert_uint_eq (fasgd_client_sizeof (""), 0);
    ck_assert_uint_eq (fasgd_client_sizeof (NULL), 0);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

START_TEST (test_no_server_times_out)
{
    /*  A port that is bound but not listening: every connection is
        refused, and while the test holds it no other test can take it.  */
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge (fd, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    ck_assert_int_eq (bind (fd, (struct sockaddr *) &addr, sizeof addr), 0);
    socklen_t alen = sizeof addr;
    ck_assert_int_eq (getsockname (fd, (struct sockaddr *) &addr, &alen), 0);
    char ep [64];
    snprintf (ep, sizeof ep, "tcp://127.0.0.1:%u", (unsigned) ntohs (addr.sin_port));

    fasgd_client_t *c = fasgd_client_new (ep, ep);
    ck_assert_ptr_nonnull (c);
    fasgd_client_set_timeout (c, 200);
    int64_t t0 = zclock_mono ();
    ck_assert_int_eq (fasgd_client_join (c, "w"), FASGD_CLIENT_ETIMEOUT);
    int64_t elapsed = zclock_mono () - t0;
    ck_assert_int_ge (elapsed, 190);
    ck_assert_int_lt (elapsed, 1500);
    ck_assert_int_eq (fasgd_client_last_status (c), 0);
    ck_assert (strstr (fasgd_client_last_reason (c), "no reply to JOIN") != NULL);
    /*  Again, on the fresh socket: the same, not a hang.  */
    t0 = zclock_mono ();
    ck_assert_int_eq (fasgd_client_join (c, "w"), FASGD_CLIENT_ETIMEOUT);
    ck_assert_int_lt (zclock_mono () - t0, 1500);
    fasgd_client_destroy (&c);
    close (fd);
}
END_TEST

/*  A host name that does not resolve is said at once, not taken for a
    server that does not answer (.invalid never resolves: RFC 6761).  */
START_TEST (test_unresolvable_host)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    int gai = getaddrinfo ("no-such-host.invalid", NULL, &hints, &res);
    if (res)
        freeaddrinfo (res);
    if (gai != EAI_NONAME) {
        fprintf (stderr, "# the resolver cannot say a name does not exist here (%s): not checked\n",
                 gai_strerror (gai));
        return;
    }
    fasgd_client_t *c = fasgd_client_new ("tcp://no-such-host.invalid:5555", "tcp://no-such-host.invalid:5556");
    ck_assert_ptr_nonnull (c);
    fasgd_client_set_timeout (c, 5000);
    int64_t t0 = zclock_mono ();
    ck_assert_int_eq (fasgd_client_join (c, "w"), FASGD_CLIENT_ESOCKET);
    ck_assert_int_lt (zclock_mono () - t0, 2000);
    const char *why = fasgd_client_last_reason (c);
    ck_assert_msg (strstr (why, "no-such-host.invalid does not resolve"), "%s", why);
    fasgd_client_destroy (&c);
}
END_TEST

START_TEST (test_silent_and_late_replies)
{
    s_fake_t *f = s_fake_start (NULL);
    fasgd_client_t *c = s_client (f, 1);
    float grad [S_D] = { 1 }, theta [S_D];
    uint64_t ts;

    /*  A server that takes the request and never answers.  */
    fasgd_client_set_timeout (c, 200);
    s_fake_mode (f, S_FAKE_SILENT, FASGD_MSG_FETCH);
    int64_t t0 = zclock_mono ();
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), FASGD_CLIENT_ETIMEOUT);
    ck_assert_int_lt (zclock_mono () - t0, 1500);
    s_fake_mode (f, S_FAKE_NORMAL, 0);
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);
    /*  ... and the request after the timeout came on a new connection.  */
    s_rec_t a = s_fake_rec (f, FASGD_MSG_FETCH, 0), b = s_fake_rec (f, FASGD_MSG_FETCH, 1);
    ck_assert (a.peer_len != b.peer_len || memcmp (a.peer, b.peer, a.peer_len) != 0);
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);
    a = s_fake_rec (f, FASGD_MSG_FETCH, 2);
    ck_assert (a.peer_len == b.peer_len && memcmp (a.peer, b.peer, a.peer_len) == 0);

    /*  A reply that comes after the timeout is not taken for the answer
        to the next request: the next push sees its own T.  */
    pthread_mutex_lock (&f->lock);
    f->delay_ms = 500;
    pthread_mutex_unlock (&f->lock);
    s_fake_mode (f, S_FAKE_DELAY, FASGD_MSG_PUSH);
    ck_assert_int_eq (fasgd_client_push (c, grad, 10), FASGD_CLIENT_ETIMEOUT);
    s_fake_mode (f, S_FAKE_NORMAL, 0);
    fasgd_client_set_timeout (c, 3000);
    ck_assert_int_eq (fasgd_client_push (c, grad, 10), 0);
    ck_assert_uint_eq (fasgd_client_server_timestamp (c), 12);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 2);
    /*  And the socket keeps working afterwards.  */
    ck_assert_int_eq (fasgd_client_push (c, grad, 12), 0);
    ck_assert_uint_eq (fasgd_client_server_timestamp (c), 13);

    /*  A reply with another seq on the same socket is discarded.  */
    s_fake_mode (f, S_FAKE_STALE, FASGD_MSG_PUSH);
    ck_assert_int_eq (fasgd_client_push (c, grad, 13), 0);
    ck_assert_uint_eq (fasgd_client_server_timestamp (c), 14);
    s_fake_mode (f, S_FAKE_STALE, FASGD_MSG_FETCH);
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);
    ck_assert_uint_eq (ts, 14);
    s_fake_mode (f, S_FAKE_NORMAL, 0);
    ck_assert_int_eq (fasgd_client_leave (c), 0);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

/*  ERROR replies, one a row: the status and reason the fake server sends
    (or, for S_FAKE_VERSION, a reply in another protocol version) to one
    request, what the call returns and the reason as the client keeps it
    (made printable), and what follows: still joined (the next push goes
    out), or not joined (a push is refused before it is sent, and a JOIN
    starts again).  */
typedef enum { S_CALL_PUSH, S_CALL_PUSH_REPEAT, S_CALL_FETCH, S_CALL_JOIN } s_call_t;
typedef enum { S_AFTER_NOTHING, S_AFTER_JOINED, S_AFTER_NOT_JOINED } s_after_t;

static const struct {
    int mode, msg;
    s_call_t call;
    int status;
    const char *reason, *kept;
    int rc;
    s_after_t after;
} s_error_cases [] = {
    { S_FAKE_ERROR, FASGD_MSG_PUSH, S_CALL_PUSH, 422, "gradient holds NaN at 3", "gradient holds NaN at 3",
      FASGD_CLIENT_EREFUSED, S_AFTER_JOINED },
    /*  A reason with control characters is made printable.  */
    { S_FAKE_ERROR, FASGD_MSG_PUSH_REPEAT, S_CALL_PUSH_REPEAT, 409, "bad\nline\033", "bad?line?",
      FASGD_CLIENT_EREFUSED, S_AFTER_NOTHING },
    /*  401: the server does not know the client; the session is over.  */
    { S_FAKE_ERROR, FASGD_MSG_FETCH, S_CALL_FETCH, 401, "unknown client 7", NULL,
      FASGD_CLIENT_ENOTJOINED, S_AFTER_NOT_JOINED },
    /*  An ERROR to JOIN (the server is shutting down).  */
    { S_FAKE_ERROR, FASGD_MSG_JOIN, S_CALL_JOIN, 503, "shutting down", NULL,
      FASGD_CLIENT_EREFUSED, S_AFTER_NOT_JOINED },
    /*  Another protocol version.  */
    { S_FAKE_VERSION, FASGD_MSG_JOIN, S_CALL_JOIN, 426, NULL, NULL, FASGD_CLIENT_EVERSION, S_AFTER_NOTHING },
};
#define S_ERROR_CASES ((int) (sizeof s_error_cases / sizeof s_error_cases [0]))

START_TEST (test_error_replies)
{
    s_fake_t *f = s_fake_start (NULL);
    fasgd_client_t *c = s_client (f, 1);
    float grad [S_D] = { 0 }, theta [S_D];
    uint64_t ts;
    int rc = 0;

    if (s_error_cases [_i].reason) {
        pthread_mutex_lock (&f->lock);
        f->err_status = s_error_cases [_i].status;
        snprintf (f->err_reason, sizeof f->err_reason, "%s", s_error_cases [_i].reason);
        pthread_mutex_unlock (&f->lock);
    }
    s_fake_mode (f, s_error_cases [_i].mode, s_error_cases [_i].msg);
    switch (s_error_cases [_i].call) {
        case S_CALL_PUSH: rc = fasgd_client_push (c, grad, 10); break;
        case S_CALL_PUSH_REPEAT: rc = fasgd_client_push_repeat (c); break;
        case S_CALL_FETCH: rc = fasgd_client_fetch (c, theta, &ts, 0); break;
        case S_CALL_JOIN: rc = fasgd_client_join (c, "w"); break;
    }
    ck_assert_int_eq (rc, s_error_cases [_i].rc);
    ck_assert_int_eq (fasgd_client_last_status (c), s_error_cases [_i].status);
    if (s_error_cases [_i].kept)
        ck_assert_str_eq (fasgd_client_last_reason (c), s_error_cases [_i].kept);
    s_fake_mode (f, S_FAKE_NORMAL, 0);
    if (s_error_cases [_i].after == S_AFTER_JOINED) {
        ck_assert_int_eq (fasgd_client_push (c, grad, 10), 0);
        ck_assert_int_eq (fasgd_client_last_status (c), 200);
    }
    else if (s_error_cases [_i].after == S_AFTER_NOT_JOINED) {
        int pushes = s_fake_count (f, FASGD_MSG_PUSH);
        ck_assert_int_eq (fasgd_client_push (c, grad, 10), FASGD_CLIENT_ENOTJOINED);
        ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), pushes);
        ck_assert_int_eq (fasgd_client_join (c, "again"), 0);
        ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);
    }
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

START_TEST (test_malformed_replies)
{
    s_fake_t *f = s_fake_start (NULL);
    fasgd_client_t *c = s_client (f, 1);
    float grad [S_D] = { 0 }, theta [S_D];
    uint64_t ts;

    s_fake_mode (f, S_FAKE_GARBAGE, FASGD_MSG_PUSH);
    ck_assert_int_eq (fasgd_client_push (c, grad, 10), FASGD_CLIENT_EPROTO);
    s_fake_mode (f, S_FAKE_GARBAGE, FASGD_MSG_FETCH);
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), FASGD_CLIENT_EPROTO);
    ck_assert (strstr (fasgd_client_last_reason (c), "malformed") != NULL);
    /*  The connection is replaced and the client goes on.  */
    s_fake_mode (f, S_FAKE_NORMAL, 0);
    ck_assert_int_eq (fasgd_client_push (c, grad, 10), 0);
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);

    /*  A WELCOME whose description does not add up.  */
    s_fake_mode (f, S_FAKE_BAD_DESC, FASGD_MSG_JOIN);
    ck_assert_int_eq (fasgd_client_join (c, "w"), FASGD_CLIENT_EPROTO);
    ck_assert (strstr (fasgd_client_last_reason (c), "params=17") != NULL);
    ck_assert_int_eq (fasgd_client_push (c, grad, 0), FASGD_CLIENT_ENOTJOINED);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);

    /*  Gates this client does not know.  */
    fasgd_proto_desc_t d;
    s_desc_default (&d);
    snprintf (d.push_gate, sizeof d.push_gate, "sometimes");
    f = s_fake_start (&d);
    c = s_client (f, 0);
    ck_assert_int_eq (fasgd_client_join (c, "w"), FASGD_CLIENT_EPROTO);
    ck_assert_str_eq (fasgd_client_last_reason (c), "unknown push gate 'sometimes'");
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

START_TEST (test_heartbeats)
{
    fasgd_proto_desc_t d;
    s_desc_default (&d);
    /*  An idle client beats every heartbeat_ms: 4 beats come, and no
        more than the time taken allows beside the one that greets its
        push connection (timed, not slept for, so that a loaded machine
        delays the beats without failing the test).  */
    d.heartbeat_ms = 100;
    s_fake_t *f = s_fake_start (&d);
    int64_t t0 = zclock_mono ();
    fasgd_client_t *c = s_client (f, 1);
    int beats = 0;
    for (int i = 0; i < 1000 && beats < 4; i++) {
        zclock_sleep (10);
        beats = s_fake_count (f, FASGD_MSG_HEARTBEAT);
    }
    int64_t took = zclock_mono () - t0;
    ck_assert_int_ge (beats, 4);
    ck_assert_int_le (beats, took / 100 + 2);
    s_rec_t r = s_fake_rec (f, FASGD_MSG_HEARTBEAT, 0);
    ck_assert_uint_eq (r.h.client_id, S_ID);
    ck_assert_uint_eq (r.h.session, S_SESSION);
    ck_assert_uint_eq (r.body_len, 0);
    /*  Heartbeats are not the caller's traffic.  */
    ck_assert_uint_eq (fasgd_client_stats (c)->bytes_out, 32 + strlen ("test-worker"));

    /*  A busy client (a push every 5 ms or so, for 40) needs none.  */
    float grad [S_D] = { 0 };
    int before = s_fake_count (f, FASGD_MSG_HEARTBEAT);
    for (int i = 0; i < 40; i++) {
        ck_assert_int_eq (fasgd_client_push (c, grad, 10), 0);
        zclock_sleep (5);
    }
    ck_assert_int_le (s_fake_count (f, FASGD_MSG_HEARTBEAT) - before, 1);

    /*  None after LEAVE.  */
    ck_assert_int_eq (fasgd_client_leave (c), 0);
    zclock_sleep (150);
    beats = s_fake_count (f, FASGD_MSG_HEARTBEAT);
    zclock_sleep (400);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_HEARTBEAT), beats);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

START_TEST (test_gates_resend_last)
{
    /*  c huge: after the forced first transmission the gates (almost
        surely: probability 1e-12 each) skip.  */
    fasgd_proto_desc_t d;
    s_desc_default (&d);
    snprintf (d.fetch_gate, sizeof d.fetch_gate, "bfasgd");
    snprintf (d.push_gate, sizeof d.push_gate, "bfasgd");
    d.fetch_c = d.push_c = 1e12;
    s_fake_t *f = s_fake_start (&d);
    fasgd_client_t *c = s_client (f, 1);
    fasgd_client_set_seed (c, 99);
    float theta [S_D], grad [S_D];
    uint64_t ts = 0;
    ck_assert_int_eq (fasgd_client_fetch_gated (c, theta, &ts), 1);
    ck_assert_uint_eq (ts, 10);
    for (int i = 0; i < S_D; i++)
        grad [i] = (float) i;
    for (int k = 0; k < 5; k++) {
        ck_assert_int_eq (fasgd_client_push_gated (c, grad, ts), 0);
        ck_assert_int_eq (fasgd_client_fetch_gated (c, theta, &ts), 0);
    }
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 1);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH_REPEAT), 4);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_FETCH), 1);
    s_rec_t r = s_fake_rec (f, FASGD_MSG_PUSH, 0);
    ck_assert (s_body_is (&r, grad, S_D));
    r = s_fake_rec (f, FASGD_MSG_PUSH_REPEAT, 0);
    ck_assert_uint_eq (r.body_len, 0);
    ck_assert_uint_eq (r.h.client_id, S_ID);
    const fasgd_client_stats_t *st = fasgd_client_stats (c);
    ck_assert_uint_eq (st->pushes, 1);
    ck_assert_uint_eq (st->repeats, 4);
    ck_assert_uint_eq (st->accumulated, 0);
    ck_assert_uint_eq (st->fetches, 1);
    ck_assert_uint_eq (st->fetch_skips, 5);
    ck_assert_int_eq (fasgd_client_want_push (c), 0);
    ck_assert_int_eq (fasgd_client_want_fetch (c), 0);

    /*  409 to a repeat (the server lost our gradient): the next gated
        push carries a gradient again.  */
    pthread_mutex_lock (&f->lock);
    f->err_status = 409;
    snprintf (f->err_reason, sizeof f->err_reason, "no gradient cached");
    pthread_mutex_unlock (&f->lock);
    s_fake_mode (f, S_FAKE_ERROR, FASGD_MSG_PUSH_REPEAT);
    ck_assert_int_eq (fasgd_client_push_gated (c, grad, ts), FASGD_CLIENT_EREFUSED);
    s_fake_mode (f, S_FAKE_NORMAL, 0);
    ck_assert_int_eq (fasgd_client_push_gated (c, grad, ts), 0);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 2);
    ck_assert_int_eq (fasgd_client_push_gated (c, grad, ts), 0);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH_REPEAT), 6);
    ck_assert_int_eq (fasgd_client_leave (c), 0);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);

    /*  c = 0: every opportunity transmits.  */
    d.fetch_c = d.push_c = 0;
    f = s_fake_start (&d);
    c = s_client (f, 1);
    ck_assert_int_eq (fasgd_client_fetch_gated (c, theta, &ts), 1);
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq (fasgd_client_push_gated (c, grad, ts), 0);
        ck_assert_int_eq (fasgd_client_fetch_gated (c, theta, &ts), 1);
    }
    /*  Current already: if-newer gives 304 and the call says "not refreshed".  */
    ck_assert_int_eq (fasgd_client_fetch_gated (c, theta, &ts), 0);
    ck_assert_int_eq (fasgd_client_last_status (c), 304);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 3);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH_REPEAT), 0);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_FETCH), 5);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

/*  The k-th recorded request of a type carried THEN_FETCH.  */
static int
s_then_fetch (s_fake_t *f, int type, int k)
{
    s_rec_t r = s_fake_rec (f, type, k);
    return r.h.type == type && (r.h.flags & FASGD_PROTO_FLAG_THEN_FETCH) && !r.on_fetch;
}

START_TEST (test_step_gated)
{
    float theta [S_D], grad [S_D];
    for (int i = 0; i < S_D; i++)
        grad [i] = 0.125f * (float) i;
    uint64_t ts = 0;
    int64_t tau;

    /*  Gates always: push and fetch in one round trip, on the push socket.  */
    s_fake_t *f = s_fake_start (NULL);
    fasgd_client_t *c = s_client (f, 0);
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (tau, -1);
    ck_assert_int_eq (fasgd_client_push_fetch (c, grad, 0, theta, &ts), FASGD_CLIENT_ENOTJOINED);
    ck_assert_int_eq (fasgd_client_join (c, "step"), 0);
    ck_assert_int_eq (fasgd_client_step_gated (c, NULL, theta, &ts, &tau), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, NULL, NULL), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_push_fetch (c, grad, 0, NULL, &ts), FASGD_CLIENT_EINVAL);
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 1);
    ck_assert_uint_eq (ts, 11);
    ck_assert_int_eq (tau, 10);                    /* T 11 after a gradient of timestamp 0 */
    for (int i = 0; i < S_D; i++)
        ck_assert_float_eq (theta [i], f->theta [i]);
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 1);
    ck_assert_uint_eq (ts, 12);
    ck_assert_int_eq (tau, 0);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 2);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_FETCH), 0);
    ck_assert (s_then_fetch (f, FASGD_MSG_PUSH, 0) && s_then_fetch (f, FASGD_MSG_PUSH, 1));
    s_rec_t r = s_fake_rec (f, FASGD_MSG_PUSH, 1);
    ck_assert_uint_eq (r.h.timestamp, 11);
    ck_assert (s_body_is (&r, grad, S_D));
    ck_assert_int_eq (fasgd_client_push_fetch (c, grad, 12, theta, &ts), 0);
    ck_assert_uint_eq (ts, 13);
    const fasgd_client_stats_t *st = fasgd_client_stats (c);
    ck_assert_uint_eq (st->pushes, 3);
    ck_assert_uint_eq (st->fetches, 3);
    /*  A refused push: its error, and nothing fetched.  */
    pthread_mutex_lock (&f->lock);
    f->err_status = 422;
    snprintf (f->err_reason, sizeof f->err_reason, "NaN");
    pthread_mutex_unlock (&f->lock);
    s_fake_mode (f, S_FAKE_ERROR, FASGD_MSG_PUSH);
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), FASGD_CLIENT_EREFUSED);
    ck_assert_int_eq (tau, -1);
    ck_assert_uint_eq (ts, 13);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_FETCH), 0);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);

    /*  Fetch every 2nd opportunity (the first forced): combined, combined,
        then a plain PUSH with its ACK.  */
    fasgd_proto_desc_t d;
    s_desc_default (&d);
    snprintf (d.fetch_gate, sizeof d.fetch_gate, "every");
    d.fetch_every = 2;
    f = s_fake_start (&d);
    c = s_client (f, 1);
    ts = 0;
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 1);
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 1);
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 0);
    ck_assert_uint_eq (ts, 12);                    /* kept: the fetch was skipped */
    ck_assert_int_eq (tau, 0);                     /* T 13 after a gradient of 12 */
    ck_assert (s_then_fetch (f, FASGD_MSG_PUSH, 1) && !s_then_fetch (f, FASGD_MSG_PUSH, 2));
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_FETCH), 0);
    st = fasgd_client_stats (c);
    ck_assert_uint_eq (st->fetches, 2);
    ck_assert_uint_eq (st->fetch_skips, 1);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);

    /*  bfasgd's fetch gate needs the push's v̄, and softsync may buffer:
        two round trips, the FETCH on the fetch socket.  */
    for (int k = 0; k < 2; k++) {
        s_desc_default (&d);
        if (k == 0)
            snprintf (d.fetch_gate, sizeof d.fetch_gate, "bfasgd");
        else
            snprintf (d.rule, sizeof d.rule, "softsync");
        f = s_fake_start (&d);
        c = s_client (f, 1);
        ts = 0;
        ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 1);
        ck_assert_int_eq (tau, 10);
        ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 1);
        ck_assert_int_eq (s_fake_count (f, FASGD_MSG_FETCH), 1);
        ck_assert (!s_then_fetch (f, FASGD_MSG_PUSH, 0));
        ck_assert (s_fake_rec (f, FASGD_MSG_FETCH, 0).on_fetch);
        fasgd_client_destroy (&c);
        s_fake_stop (&f);
    }

    /*  Pushes skipped (c huge): resend-last repeats with THEN_FETCH, and
        τ is the repeated gradient's; accumulate sends nothing, so the
        fetch goes alone (if-newer: 304, not refreshed).  */
    s_desc_default (&d);
    snprintf (d.push_gate, sizeof d.push_gate, "bfasgd");
    d.push_c = 1e12;
    f = s_fake_start (&d);
    c = s_client (f, 1);
    ts = 0;
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 1);
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 1);
    ck_assert_uint_eq (ts, 12);
    ck_assert_int_eq (tau, 11);                    /* T 12 after the repeat of a gradient of 0 */
    ck_assert (s_then_fetch (f, FASGD_MSG_PUSH_REPEAT, 0));
    ck_assert_uint_eq (s_fake_rec (f, FASGD_MSG_PUSH_REPEAT, 0).body_len, 0);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
    snprintf (d.push_skip, sizeof d.push_skip, "accumulate");
    f = s_fake_start (&d);
    c = s_client (f, 1);
    ts = 0;
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 1);
    ck_assert_int_eq (fasgd_client_step_gated (c, grad, theta, &ts, &tau), 0);
    ck_assert_int_eq (tau, -1);
    ck_assert_int_eq (fasgd_client_last_status (c), 304);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 1);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_FETCH), 1);
    ck_assert_uint_eq (fasgd_client_stats (c)->accumulated, 1);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

START_TEST (test_gates_accumulate)
{
    /*  Push every 3rd opportunity, the first forced: transmissions at
        opportunities 1, 3 and 6 carry g1, g2+g3 and g4+g5+g6.  */
    fasgd_proto_desc_t d;
    s_desc_default (&d);
    snprintf (d.push_gate, sizeof d.push_gate, "every");
    d.push_every = 3;
    snprintf (d.push_skip, sizeof d.push_skip, "accumulate");
    s_fake_t *f = s_fake_start (&d);
    fasgd_client_t *c = s_client (f, 1);
    float g [7][S_D];
    for (int k = 1; k <= 6; k++)
        for (int i = 0; i < S_D; i++)
            g [k][i] = 0.1f * (float) k + 0.01f * (float) i - 0.05f * (float) (i % 3);
    for (int k = 1; k <= 6; k++)
        ck_assert_int_eq (fasgd_client_push_gated (c, g [k], (uint64_t) (100 + k)), 0);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 3);
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH_REPEAT), 0);

    float s23 [S_D], s456 [S_D];
    for (int i = 0; i < S_D; i++) {
        s23 [i] = g [2][i] + g [3][i];
        float a = g [4][i];
        a += g [5][i];
        s456 [i] = a + g [6][i];
    }
    s_rec_t r = s_fake_rec (f, FASGD_MSG_PUSH, 0);
    ck_assert (s_body_is (&r, g [1], S_D));
    ck_assert_uint_eq (r.h.timestamp, 101);
    r = s_fake_rec (f, FASGD_MSG_PUSH, 1);
    ck_assert (s_body_is (&r, s23, S_D));
    ck_assert_uint_eq (r.h.timestamp, 103);
    r = s_fake_rec (f, FASGD_MSG_PUSH, 2);
    ck_assert (s_body_is (&r, s456, S_D));
    ck_assert_uint_eq (r.h.timestamp, 106);
    const fasgd_client_stats_t *st = fasgd_client_stats (c);
    ck_assert_uint_eq (st->pushes, 3);
    ck_assert_uint_eq (st->accumulated, 3);
    ck_assert_uint_eq (st->repeats, 0);
    ck_assert_uint_eq (st->bytes_out, 32 + strlen ("test-worker") + 3 * (32 + 4 * S_D));

    /*  A failed transmission keeps the sum for the next one.  */
    ck_assert_int_eq (fasgd_client_push_gated (c, g [1], 107), 0);     /* accumulated */
    ck_assert_int_eq (fasgd_client_push_gated (c, g [2], 108), 0);     /* accumulated */
    pthread_mutex_lock (&f->lock);
    f->err_status = 422;
    snprintf (f->err_reason, sizeof f->err_reason, "nope");
    pthread_mutex_unlock (&f->lock);
    s_fake_mode (f, S_FAKE_ERROR, FASGD_MSG_PUSH);
    ck_assert_int_eq (fasgd_client_push_gated (c, g [3], 109), FASGD_CLIENT_EREFUSED);
    s_fake_mode (f, S_FAKE_NORMAL, 0);
    ck_assert_int_eq (fasgd_client_push_gated (c, g [4], 110), 0);     /* accumulated */
    ck_assert_int_eq (fasgd_client_push_gated (c, g [5], 111), 0);     /* accumulated */
    ck_assert_int_eq (fasgd_client_push_gated (c, g [6], 112), 0);     /* sent */
    float all [S_D];
    for (int i = 0; i < S_D; i++) {
        float a = g [1][i];
        a += g [2][i];
        a += g [4][i];
        a += g [5][i];
        all [i] = a + g [6][i];
    }
    ck_assert_int_eq (s_fake_count (f, FASGD_MSG_PUSH), 5);
    r = s_fake_rec (f, FASGD_MSG_PUSH, 4);
    ck_assert (s_body_is (&r, all, S_D));
    ck_assert_uint_eq (r.h.timestamp, 112);
    fasgd_client_destroy (&c);
    s_fake_stop (&f);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("client_api");
    TCase *tc = tcase_create ("protocol");
    tcase_add_test (tc, test_signals_left_alone);
    tcase_add_test (tc, test_join_desc);
    tcase_add_test (tc, test_fetch_push_round_trip);
    tcase_add_test (tc, test_bad_arguments);
    tcase_add_test (tc, test_new_connects_nothing);
    tcase_add_test (tc, test_compact_wire);
    tcase_add_test (tc, test_no_server_times_out);
    tcase_add_test (tc, test_unresolvable_host);
    tcase_add_test (tc, test_silent_and_late_replies);
    tcase_add_loop_test (tc, test_error_replies, 0, S_ERROR_CASES);
    tcase_add_test (tc, test_malformed_replies);
    tcase_add_test (tc, test_heartbeats);
    tcase_set_timeout (tc, 30);
    suite_add_tcase (s, tc);
    tc = tcase_create ("gates");
    tcase_add_test (tc, test_gates_resend_last);
    tcase_add_test (tc, test_gates_accumulate);
    tcase_add_test (tc, test_step_gated);
    tcase_set_timeout (tc, 30);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (s_suite)
