/*  channel: one DEALER connection to a server's endpoint (channel.h).  */
#include "channel.h"
#include "curve.h"

#include "log.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

/*  czmq's first socket installs SIGINT and SIGTERM handlers that only set
    zsys_interrupted (unless ZSYS_SIGHANDLER=false). A library must not take
    the host program's Ctrl-C away, so every socket made here is made with
    the host's dispositions saved and put back. czmq's set-up (zsys_init)
    is not safe to run from two threads at once, as the links of a sharded
    client would at their first sockets: it runs once, before any of them.  */
static pthread_once_t s_zsys_once = PTHREAD_ONCE_INIT;

static void
s_zsys_init (void)
{
    struct sigaction old_int, old_term;
    sigaction (SIGINT, NULL, &old_int);
    sigaction (SIGTERM, NULL, &old_term);
    zsys_init ();
    sigaction (SIGINT, &old_int, NULL);
    sigaction (SIGTERM, &old_term, NULL);
}

void
fasgd_channel_zsys_init (void)
{
    pthread_once (&s_zsys_once, s_zsys_init);
}

zsock_t *
fasgd_channel_dealer_new (void)
{
    fasgd_channel_zsys_init ();
    struct sigaction old_int, old_term;
    sigaction (SIGINT, NULL, &old_int);
    sigaction (SIGTERM, NULL, &old_term);
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    sigaction (SIGINT, &old_int, NULL);
    sigaction (SIGTERM, &old_term, NULL);
    return sock;
}

void
fasgd_channel_curve_apply (const fasgd_channel_curve_t *curve, zsock_t *sock)
{
    if (!*curve->server_key)
        return;
    zcert_apply (curve->cert, sock);
    zsock_set_curve_serverkey (sock, curve->server_key);
}

void
fasgd_channel_init (fasgd_channel_t *ch, const char *endpoint, const fasgd_channel_curve_t *curve,
                    int64_t maxmsgsize)
{
    memset (ch, 0, sizeof *ch);
    ch->endpoint = endpoint;
    ch->curve = curve;
    ch->maxmsgsize = maxmsgsize;
}

void
fasgd_channel_close (fasgd_channel_t *ch)
{
    zpoller_destroy (&ch->poller);
    fasgd_curve_monitor_stop (ch->sock, &ch->monitor);
    zsock_destroy (&ch->sock);
}

int
fasgd_channel_is_open (const fasgd_channel_t *ch)
{
    return ch->sock != NULL;
}

int
fasgd_channel_open (fasgd_channel_t *ch)
{
    fasgd_channel_close (ch);
    ch->sock = fasgd_channel_dealer_new ();
    if (!ch->sock) {
        fasgd_log_error ("client: cannot create a socket: %s", zmq_strerror (errno));
        return -1;
    }
    /*  No linger: a request the server never took must not keep the
        process alive at exit.  */
    zsock_set_linger (ch->sock, 0);
    /*  ZeroMQ drops (and reconnects) a peer that sends a larger frame, so
        a server cannot make the client allocate more than θ.  */
    int64_t limit = ch->maxmsgsize + FASGD_CHANNEL_FRAME_SLACK;
    zmq_setsockopt (zsock_resolve (ch->sock), ZMQ_MAXMSGSIZE, &limit, sizeof limit);
    fasgd_channel_curve_apply (ch->curve, ch->sock);
    if (fasgd_curve_monitor (ch->sock, ZMQ_EVENT_HANDSHAKE_SUCCEEDED, &ch->monitor) != 0) {
        fasgd_log_error ("client: cannot watch the connection to %s: %s", ch->endpoint, zmq_strerror (errno));
        fasgd_channel_close (ch);
        return -1;
    }
    if (zsock_connect (ch->sock, "%s", ch->endpoint) != 0) {
        fasgd_log_error ("client: cannot connect to %s: %s", ch->endpoint, zmq_strerror (errno));
        fasgd_channel_close (ch);
        return -1;
    }
    ch->poller = zpoller_new (ch->sock, ch->monitor, NULL);
    if (!ch->poller) {
        fasgd_channel_close (ch);
        return -1;
    }
    /*  The host's signals interrupt a wait; they do not end it (the
        caller finishes its step, then looks at its own flag).  */
    zpoller_set_nonstop (ch->poller, true);
    return 0;
}

int
fasgd_channel_resolves (const char *endpoint, char *why, size_t whylen)
{
    if (!endpoint || strncmp (endpoint, "tcp://", 6) != 0)
        return 0;
    /*  tcp://[SOURCE;]HOST:PORT; a bracketed IPv6 address or * needs no
        resolver.  */
    const char *host = endpoint + 6;
    const char *semi = strrchr (host, ';');
    if (semi)
        host = semi + 1;
    const char *colon = strrchr (host, ':');
    size_t len = colon ? (size_t) (colon - host) : strlen (host);
    char name [256];
    if (len == 0 || len >= sizeof name || host [0] == '[' || (len == 1 && host [0] == '*'))
        return 0;
    memcpy (name, host, len);
    name [len] = 0;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    int rc = getaddrinfo (name, NULL, &hints, &res);
    if (res)
        freeaddrinfo (res);
    if (rc == EAI_NONAME
#ifdef EAI_NODATA
        || rc == EAI_NODATA
#endif
       )
        return fasgd_errbuf (why, whylen, "%s: the host name %s does not resolve (%s)", endpoint, name,
                             gai_strerror (rc));
    return 0;
}

int
fasgd_channel_send (fasgd_channel_t *ch, const fasgd_header_t *h, zframe_t **body_p, size_t *bytes)
{
    zframe_t *body = body_p ? *body_p : NULL;
    if (body_p)
        *body_p = NULL;
    uint8_t hbuf [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (h, hbuf);
    size_t out = sizeof hbuf + (body ? zframe_size (body) : 0);
    ch->handshake_drops = 0;
    ch->turned_away = 0;

    /*  Never block on a send: a DEALER queues for a peer that is not
        there yet, and a full queue means the server is not reading.  */
    int rc = zmq_send (zsock_resolve (ch->sock), hbuf, sizeof hbuf,
                       ZMQ_DONTWAIT | (body ? ZMQ_SNDMORE : 0));
    if (rc >= 0 && body)
        rc = zframe_send (&body, ch->sock, ZFRAME_DONTWAIT);
    zframe_destroy (&body);         /* whether or not zframe_send took it */
    if (rc < 0) {
        int err = errno;
        fasgd_channel_close (ch);
        fasgd_log_debug ("client: cannot send %s to %s: %s", fasgd_proto_type_name (h->type),
                         ch->endpoint, zmq_strerror (err));
        return err == EAGAIN ? FASGD_CLIENT_ETIMEOUT : FASGD_CLIENT_ESOCKET;
    }
    *bytes += out;
    return 0;
}

/*  Reads one whole message; frames beyond the second are counted, not
    kept. Returns the number of frames, 0 when nothing could be read.  */
static int
s_recv (zsock_t *sock, zframe_t **header_p, zframe_t **body_p, size_t *bytes)
{
    *header_p = *body_p = NULL;
    int nframes = 0;
    do {
        zframe_t *frame = zframe_recv (sock);
        if (!frame)
            break;
        *bytes += zframe_size (frame);
        if (nframes == 0)
            *header_p = frame;
        else if (nframes == 1)
            *body_p = frame;
        else
            zframe_destroy (&frame);
        nframes++;
    } while (zsock_rcvmore (sock));
    return nframes;
}

/*  Reads one event of the monitor. A failed handshake that cannot
    succeed on retrying (fasgd_curve_judge) returns -1 with the reason
    in why.  */
static int
s_handshake_check (fasgd_channel_t *ch, char *why, size_t whylen)
{
    int event;
    uint32_t value;
    if (fasgd_curve_event_recv (ch->monitor, &event, &value) != 0)
        return 0;
    if (fasgd_curve_turned_away (event, value))
        ch->turned_away++;
    const char *verdict = fasgd_curve_judge (event, value, *ch->curve->server_key != 0, &ch->handshake_drops);
    if (!verdict)
        return 0;
    snprintf (why, whylen, "%s: %s", ch->endpoint, verdict);
    return -1;
}

int
fasgd_channel_recv (fasgd_channel_t *ch, int64_t deadline, zframe_t **header_p, zframe_t **body_p,
                    int *nframes, size_t *bytes, char *why, size_t whylen)
{
    *header_p = *body_p = NULL;
    *nframes = 0;
    for (;;) {
        int64_t left = deadline - zclock_mono ();
        if (left <= 0)
            return 0;
        void *which = zpoller_wait (ch->poller, left > INT32_MAX ? INT32_MAX : (int) left);
        if (which && which == ch->monitor) {
            if (s_handshake_check (ch, why, whylen) != 0) {
                fasgd_channel_close (ch);
                return FASGD_CLIENT_ESECURITY;
            }
            continue;
        }
        if (which != ch->sock) {
            if (zpoller_terminated (ch->poller) && errno != EINTR) {
                fasgd_channel_close (ch);
                return FASGD_CLIENT_ESOCKET;
            }
            continue;                   /* expired or interrupted: check the time */
        }
        size_t in = 0;
        int n = s_recv (ch->sock, header_p, body_p, &in);
        if (n == 0)
            continue;
        *nframes = n;
        *bytes += in;
        return 1;
    }
}
