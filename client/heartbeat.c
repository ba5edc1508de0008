/*  heartbeat: the actor that keeps an idle client alive (heartbeat.h).  */
#include "heartbeat.h"

#include "curve.h"
#include "log.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define S_MIN_MS 10

/*  The actor's arguments; they outlive it.  */
struct fasgd_heartbeat_t {
    const char *endpoint;
    const fasgd_channel_curve_t *curve;
    uint32_t client_id;
    uint64_t session;
    int interval_ms;
    atomic_int_least64_t last_sent;     /* zclock_mono () of the caller's last request */
    zactor_t *actor;
};

int
fasgd_heartbeat_period (uint32_t heartbeat_ms, uint32_t expiry_ms)
{
    uint32_t ms = heartbeat_ms;
    if (ms == 0)
        ms = expiry_ms / 3;
    if (ms == 0)
        return 0;
    if (ms < S_MIN_MS)
        ms = S_MIN_MS;
    if (ms > INT32_MAX)
        ms = INT32_MAX;
    return (int) ms;
}

static void
s_actor (zsock_t *pipe, void *args)
{
    fasgd_heartbeat_t *hb = (fasgd_heartbeat_t *) args;
    /*  The host's SIGINT and SIGTERM belong to its own threads.  */
    sigset_t set;
    sigemptyset (&set);
    sigaddset (&set, SIGINT);
    sigaddset (&set, SIGTERM);
    pthread_sigmask (SIG_BLOCK, &set, NULL);

    zsock_t *sock = fasgd_channel_dealer_new ();
    zsock_t *monitor = NULL;
    if (sock) {
        zsock_set_linger (sock, 0);
        zsock_set_maxmsgsize (sock, FASGD_PROTO_HEADER_SIZE + FASGD_PROTO_TEXT_MAX + FASGD_CHANNEL_FRAME_SLACK);
        /*  Heartbeats are interchangeable: while the server is away a few
            queued ones are plenty.  */
        zsock_set_sndhwm (sock, 4);
        fasgd_channel_curve_apply (hb->curve, sock);
        /*  A beat on every new connection at once: a server closes a
            connection that sends no request within a few seconds
            (limits.greeting_ms), and while requests flow no beat is due.  */
        if (fasgd_curve_monitor (sock, ZMQ_EVENT_HANDSHAKE_SUCCEEDED, &monitor) != 0)
            monitor = NULL;
        if (zsock_connect (sock, "%s", hb->endpoint) != 0) {
            fasgd_curve_monitor_stop (sock, &monitor);
            zsock_destroy (&sock);
        }
    }
    if (!sock)
        fasgd_log_warn ("client: no heartbeat socket: the server may expire this client when idle");
    zpoller_t *poller = sock ? zpoller_new (pipe, sock, monitor, NULL) : zpoller_new (pipe, NULL);
    zsock_signal (pipe, 0);
    if (!poller) {
        /*  Without a poller all that is left is to wait for $TERM.  */
        char *cmd;
        while ((cmd = zstr_recv (pipe)) && strcmp (cmd, "$TERM") != 0)
            zstr_free (&cmd);
        zstr_free (&cmd);
        fasgd_curve_monitor_stop (sock, &monitor);
        zsock_destroy (&sock);
        return;
    }
    zpoller_set_nonstop (poller, true);

    uint32_t seq = 0;
    int64_t last_beat = zclock_mono ();
    int warned = 0, connected = 0;
    for (;;) {
        int64_t now = zclock_mono ();
        int64_t last = atomic_load (&hb->last_sent);
        if (last < last_beat)
            last = last_beat;
        int64_t due = last + hb->interval_ms;
        if (sock && (now >= due || connected)) {
            connected = 0;
            fasgd_header_t h = { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_HEARTBEAT,
                                 .client_id = hb->client_id, .seq = ++seq, .session = hb->session };
            uint8_t buf [FASGD_PROTO_HEADER_SIZE];
            fasgd_proto_header_encode (&h, buf);
            /*  A full queue (no server) drops the beat; the next is due
                one period later anyway.  */
            zmq_send (zsock_resolve (sock), buf, sizeof buf, ZMQ_DONTWAIT);
            last_beat = now;
            continue;
        }
        void *which = zpoller_wait (poller, sock ? (int) (due - now) : -1);
        if (which == pipe) {
            char *cmd = zstr_recv (pipe);
            int term = !cmd || strcmp (cmd, "$TERM") == 0;
            zstr_free (&cmd);
            if (term)
                break;
        }
        else if (monitor && which == monitor) {
            int event;
            uint32_t value;
            while (fasgd_curve_event_recv (monitor, &event, &value) == 0)
                connected |= event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
        }
        else if (sock && which == sock) {
            zframe_t *frame = zframe_recv (sock);
            fasgd_header_t h;
            if (frame && fasgd_proto_header_decode (zframe_data (frame), zframe_size (frame), &h) == FASGD_PROTO_OK
            &&  h.type == FASGD_MSG_ERROR && !warned) {
                fasgd_log_info ("client: heartbeat refused: %d %s", h.status, fasgd_proto_status_text (h.status));
                warned = 1;
            }
            zframe_destroy (&frame);
            while (zsock_rcvmore (sock)) {
                frame = zframe_recv (sock);
                if (!frame)
                    break;
                zframe_destroy (&frame);
            }
        }
    }
    zpoller_destroy (&poller);
    fasgd_curve_monitor_stop (sock, &monitor);
    zsock_destroy (&sock);
}

fasgd_heartbeat_t *
fasgd_heartbeat_new (const char *endpoint, const fasgd_channel_curve_t *curve,
                     uint32_t client_id, uint64_t session, int period_ms)
{
    fasgd_heartbeat_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->endpoint = endpoint;
    self->curve = curve;
    self->client_id = client_id;
    self->session = session;
    self->interval_ms = period_ms;
    atomic_init (&self->last_sent, zclock_mono ());
    /*  czmq set up the host's way first, so that the actor's pipe cannot
        touch the host's signals.  */
    fasgd_channel_zsys_init ();
    self->actor = zactor_new (s_actor, self);
    if (!self->actor) {
        free (self);
        return NULL;
    }
    return self;
}

void
fasgd_heartbeat_destroy (fasgd_heartbeat_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_heartbeat_t *self = *self_p;
    zactor_destroy (&self->actor);
    free (self);
    *self_p = NULL;
}

void
fasgd_heartbeat_sent (fasgd_heartbeat_t *self)
{
    if (self)
        atomic_store (&self->last_sent, zclock_mono ());
}
