/*  connections: the TCP connections peers open to the push, fetch and
    control sockets, and the file descriptors they take.

    libzmq accepts connections in its I/O thread, and when accept () fails
    for want of descriptors (EMFILE, ENFILE) it leaves the listening
    socket readable and tries again at once: a core spins for as long as
    the descriptors stay taken, and every new peer, honest or not, is
    refused. So the server never lets it come to that. At start it raises
    its soft RLIMIT_NOFILE to the hard limit; then a socket monitor on
    each bound socket reports every connection accepted and closed, and a
    connection accepted beyond limits.connections (by default well below
    the descriptor limit) is shut down at once: libzmq sees it close and
    frees its descriptor. Peers beyond the limit are turned away, those
    within it are served, and nothing spins (but for the moment it takes
    to turn away a burst of connections larger than the reserve of
    descriptors). The control socket has its own few connections, so that
    peers holding every data connection do not lock out fasgd-ctl.

    Until it has sent a valid request a connection is nobody's: a peer
    that opens connections and never greets (or greets by halves, or
    completes a plain handshake and says nothing) must not fill
    limits.connections and lock out the clients that would speak. A
    connection is "greeting" from its accept until the first request
    from it that dispatch.c finds well formed (fasgd_srv_conn_heard).
    One still greeting after limits.greeting_ms is closed (libzmq closes
    those not through the ZMTP and CURVE handshake by then:
    ZMQ_HANDSHAKE_IVL, set where the sockets are bound; this file, those
    through it and silent), unless its first request is still arriving:
    one that has received at least S_GREETING_RATE bytes a second since
    is waited for afresh (the kernel's count, TCP_INFO), for a client's
    first push of a large model crosses a slow or shared link in more
    than limits.greeting_ms, and closing it would lose that push and
    the next. Greeting connections may hold only
    limits.greeting_connections of the push and fetch connections (half
    of them by default), the rest being kept for peers that spoke; and
    one source address only limits.greeting_per_address of those. A new
    connection past its address's share is turned away; one past
    limits.greeting_connections closes the oldest greeting instead, so
    that a flood of fresh connections from many addresses cannot keep an
    honest newcomer out: it is closed only if as many connections arrive
    after it as there are places, before it has sent its first request,
    which takes a client milliseconds.

    A connection turned away is reset (an RST, not a FIN): the client's
    libzmq then reports ECONNRESET, which it can tell from a server that
    closes a CURVE handshake it cannot decrypt (the wrong server key), so
    that a full server is retried and not taken for a wrong key.

    The monitors also carry the failed handshakes that security.c counts.  */
#include "connections.h"

#include "curve.h"
#include "clock.h"
#include "greeting.h"
#include "log.h"
#include "tcp_info.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

/*  Descriptors kept for everything but peers' connections: ZeroMQ's
    own, the log, checkpoints, the CSV, fasgd-ctl on the control socket
    when the peers are at their limit.  */
#define S_RESERVE_FIXED 32
#define S_RESERVE_SHARE 8               /* and one descriptor in 8 */
/*  The control socket's own connections, within the reserve: peers that
    hold every data connection do not lock the operator out.  */
#define S_CONTROL_CONNECTIONS 16
#define S_GREETING_RATE 1000            /* bytes a second that keep a connection's first request waited for */
#define S_EVENTS_IN_TURN 4              /* a monitor's events read before the next monitor's */
#define S_EVENTS_SHARE 8                /* events read per wake-up: a share of the greeting places, */
#define S_EVENTS_MIN 8                  /* at least this many */
#define S_EVENTS_CATCH_UP 65536         /* events read at most to find a request's accept */

struct fasgd_srv_conns_t {
    const fasgd_server_cfg_t *cfg;
    fasgd_srv_security_t *security;     /* told of failed handshakes; logs the refusals */
    fasgd_srv_stats_t *st;              /* conn_shed, accept_failed */
    zsock_t *monitors [FASGD_SRV_MONITORS];
    zsock_t *watched [FASGD_SRV_MONITORS];     /* the sockets they watch */
    const char *monitor_names [FASGD_SRV_MONITORS];
    int nmonitors;
    uint64_t conns, conn_max;           /* on push and fetch: open now, and the most allowed */
    fasgd_srv_greeting_t *greeting;     /* those of conns not yet heard from */
    uint64_t greeting_max;              /* the most of them */
    uint64_t conns_control;             /* on the control socket */
    int control_monitor;                /* its monitor's index; -1 none */
    uint64_t nofile;                    /* RLIMIT_NOFILE */
};

fasgd_srv_conns_t *
fasgd_srv_conn_new (const fasgd_server_cfg_t *cfg, fasgd_srv_security_t *security, fasgd_srv_stats_t *st)
{
    fasgd_srv_conns_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = cfg;
    self->security = security;
    self->st = st;
    self->control_monitor = -1;
    struct rlimit lim;
    uint64_t nofile = 1024;
    if (getrlimit (RLIMIT_NOFILE, &lim) == 0) {
        if (lim.rlim_cur < lim.rlim_max) {
            rlim_t was = lim.rlim_cur;
            lim.rlim_cur = lim.rlim_max;
            if (setrlimit (RLIMIT_NOFILE, &lim) == 0)
                fasgd_log_info ("file descriptors: raised the soft limit from %llu to %llu",
                                (unsigned long long) was, (unsigned long long) lim.rlim_max);
            else
                getrlimit (RLIMIT_NOFILE, &lim);
        }
        nofile = lim.rlim_cur == RLIM_INFINITY ? UINT64_C (1) << 20 : (uint64_t) lim.rlim_cur;
    }
    uint64_t reserve = S_RESERVE_FIXED + nofile / S_RESERVE_SHARE;
    uint64_t room = nofile > reserve + 8 ? nofile - reserve : 8;
    /*  A client opens three connections (push, fetch, heartbeats).  */
    uint64_t want = self->cfg->max_connections > 0 ? (uint64_t) self->cfg->max_connections
                                                  : 4 * (uint64_t) self->cfg->max_clients + 64;
    if (want > room) {
        if (self->cfg->max_connections > 0)
            fasgd_log_warn ("limits.connections is %d, but %llu file descriptors leave room for %llu: "
                            "using %llu (raise the limit: ulimit -n, or LimitNOFILE= in the unit)",
                            self->cfg->max_connections, (unsigned long long) nofile,
                            (unsigned long long) room, (unsigned long long) room);
        want = room;
    }
    self->conn_max = want;
    self->nofile = nofile;
    self->greeting_max = self->cfg->max_greeting > 0 ? (uint64_t) self->cfg->max_greeting : want / 2;
    if (self->greeting_max > want)
        self->greeting_max = want;
    if (self->greeting_max < 1)
        self->greeting_max = 1;
    self->greeting = fasgd_srv_greeting_new ();
    if (!self->greeting) {
        free (self);
        return NULL;
    }
    fasgd_log_info ("connections: at most %llu open (%llu file descriptors), %llu of them greeting, "
                    "%d from one address", (unsigned long long) want, (unsigned long long) nofile,
                    (unsigned long long) self->greeting_max, self->cfg->greeting_per_address);
    return self;
}

int
fasgd_srv_conn_watch (fasgd_srv_conns_t *self, zsock_t *sock, const char *what)
{
    if (self->nmonitors >= FASGD_SRV_MONITORS) {
        errno = ENOSPC;
        return -1;
    }
    zsock_t *mon;
    if (fasgd_curve_monitor (sock, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_ACCEPT_FAILED,
                             &mon) != 0)
        return -1;
    self->monitors [self->nmonitors] = mon;
    self->watched [self->nmonitors] = sock;
    self->monitor_names [self->nmonitors] = what;
    if (!strcmp (what, "control"))
        self->control_monitor = self->nmonitors;
    self->nmonitors++;
    return 0;
}

void
fasgd_srv_conn_destroy (fasgd_srv_conns_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_srv_conns_t *self = *self_p;
    for (int i = 0; i < self->nmonitors; i++)
        fasgd_curve_monitor_stop (self->watched [i], &self->monitors [i]);
    fasgd_srv_greeting_destroy (&self->greeting);
    free (self);
    *self_p = NULL;
}

int
fasgd_srv_conn_monitors (const fasgd_srv_conns_t *self)
{
    return self->nmonitors;
}

zsock_t *
fasgd_srv_conn_monitor (fasgd_srv_conns_t *self, int k)
{
    return self->monitors [k];
}

uint64_t
fasgd_srv_conn_open (const fasgd_srv_conns_t *self)
{
    return self->conns + self->conns_control;
}

uint64_t
fasgd_srv_conn_max (const fasgd_srv_conns_t *self)
{
    return self->conn_max;
}

/*  Turns the connection on fd away (tag: its socket's monitor, -1 for
    the control socket's). The descriptor is still libzmq's: shut down,
    not closed, so that libzmq sees the peer go and closes it itself;
    for reading only, and with no linger, so that its close resets the
    connection (the peer reads ECONNRESET, not an orderly end).  */
static void
s_turn_away (fasgd_srv_conns_t *self, int fd, int tag)
{
    struct linger no_linger = { 1, 0 };
    setsockopt (fd, SOL_SOCKET, SO_LINGER, &no_linger, sizeof no_linger);
    shutdown (fd, SHUT_RD);
    if (tag >= 0)
        fasgd_srv_greeting_end (self->greeting, fd, tag);
    self->st->conn_shed++;
}

/*  Turns away the connection just accepted on fd, on data socket k,
    before it is waited for. Its handshake and first request can be
    through before its accept is read (the events are read a few at a
    time, fasgd_srv_conn_events, and not at all while the loop is
    busy): such a request is dropped (fasgd_srv_conn_heard), not served
    from a connection turned away.  */
static void
s_refuse (fasgd_srv_conns_t *self, int fd, int k)
{
    s_turn_away (self, fd, k);
    fasgd_srv_greeting_refused (self->greeting, fd, k);
}

/*  A connection accepted on data socket k: within the limits it is
    waited for; past them it, or the oldest greeting, is turned away.  */
static void
s_accepted (fasgd_srv_conns_t *self, int fd, int k)
{
    const char *what = self->monitor_names [k];
    char addr [FASGD_SRV_ADDR_LEN];
    self->conns++;
    if (fasgd_srv_greeting_source (fd, addr) != 0) {
        /*  Gone before its accept was read (its close is among the
            events to come): nothing to wait for, and a request of its
            read later is not served.  */
        fasgd_srv_greeting_refused (self->greeting, fd, k);
        return;
    }
    if (fasgd_srv_greeting_from (self->greeting, addr) >= (size_t) self->cfg->greeting_per_address) {
        s_refuse (self, fd, k);
        fasgd_srv_security_refusal_log (self->security, "turned away a connection from %s on the %s socket: "
                                        "limits.greeting_per_address (%d) from there have not sent a "
                                        "request yet", addr, what, self->cfg->greeting_per_address);
        return;
    }
    if (fasgd_srv_greeting_count (self->greeting) >= self->greeting_max) {
        int oldest = fasgd_srv_greeting_oldest (self->greeting, NULL);
        s_turn_away (self, oldest, fasgd_srv_greeting_tag (self->greeting, oldest));
        fasgd_srv_security_refusal_log (self->security, "closed the oldest connection that has not sent a "
                                        "request: limits.greeting_connections (%llu) have not",
                                        (unsigned long long) self->greeting_max);
    }
    else if (self->conns > self->conn_max) {
        s_refuse (self, fd, k);
        fasgd_srv_security_refusal_log (self->security, "turned away a connection on the %s socket: "
                                        "limits.connections (%llu) are open", what,
                                        (unsigned long long) self->conn_max);
        return;
    }
    if (fasgd_srv_greeting_begin (self->greeting, fd, k, addr, fasgd_srv_now_ms ()) < 0)
        s_refuse (self, fd, k);         /* out of memory: not followed, not kept */
}

/*  Handles one event of monitor k: counts connections, and turns away
    those beyond the limits. -1 when none waited.  */
static int
s_event (fasgd_srv_conns_t *self, int k)
{
    int event;
    uint32_t value;
    if (fasgd_curve_event_recv (self->monitors [k], &event, &value) != 0)
        return -1;
    const char *what = self->monitor_names [k];
    int control = k == self->control_monitor;
    switch (event) {
        case ZMQ_EVENT_ACCEPTED:
            if (!control) {
                s_accepted (self, (int) value, k);
                break;
            }
            if (++self->conns_control <= S_CONTROL_CONNECTIONS)
                break;
            s_turn_away (self, (int) value, -1);
            fasgd_srv_security_refusal_log (self->security, "turned away a connection on the control socket: "
                                            "%d are open", S_CONTROL_CONNECTIONS);
            break;
        case ZMQ_EVENT_DISCONNECTED: {
            uint64_t *held = control ? &self->conns_control : &self->conns;
            if (*held > 0)
                (*held)--;
            if (!control)
                fasgd_srv_greeting_end (self->greeting, (int) value, k);
            break;
        }
        case ZMQ_EVENT_ACCEPT_FAILED:
            self->st->accept_failed++;
            fasgd_srv_security_refusal_log (self->security, "cannot accept a connection on the %s socket: %s "
                                            "(%llu open)", what, strerror ((int) value),
                                            (unsigned long long) self->conns);
            break;
        default:
            fasgd_srv_security_handshake_failed (self->security, what, event, value);
            break;
    }
    return 0;
}

int
fasgd_srv_conn_heard (fasgd_srv_conns_t *self, int fd, const void *routing_id, size_t len)
{
    /*  FNV-1a: the routing id tells a late request of a closed
        connection from a newer one's on the same descriptor.  */
    uint64_t peer = UINT64_C (14695981039346656037);
    for (size_t i = 0; i < len; i++)
        peer = (peer ^ ((const uint8_t *) routing_id) [i]) * UINT64_C (1099511628211);
    if (fd < 0)
        return 0;
    int heard = fasgd_srv_greeting_heard (self->greeting, fd, peer);
    /*  The request was read before its connection's accept: libzmq
        reports the accept before any request can arrive, so the accept
        is among the events waiting. Read them until it is (older
        connections only are closed meanwhile: this one is the newest),
        then take the request as heard. A request read after its
        connection's close counts for nothing here. Where the last
        connection on fd was turned away at its accept (s_refuse), the
        request is that one's unless a newer connection's accept on fd
        is among the events: read them all first, so that an honest
        client's request on a reused descriptor is never dropped.  */
    for (int n = 0, any = 1; (heard == -1 || heard == -3) && any && n < S_EVENTS_CATCH_UP;
         heard = fasgd_srv_greeting_heard (self->greeting, fd, peer)) {
        any = 0;
        for (int k = 0; k < self->nmonitors; k++)
            if (s_event (self, k) == 0) {
                any = 1;
                n++;
            }
    }
    return heard == -3 ? -1 : 0;
}

void
fasgd_srv_conn_tick (fasgd_srv_conns_t *self, int64_t now_ms)
{
    /*  Bounded: a few at a time, the rest on the next wake-up.  */
    for (int k = 0; k < 256; k++) {
        int64_t since;
        int fd = fasgd_srv_greeting_oldest (self->greeting, &since);
        if (fd < 0 || now_ms - since < self->cfg->greeting_ms)
            break;
        /*  Still receiving its first request (a push of a large model
            on a slow link, or behind other clients' on a shared one):
            waited for afresh, as long as it keeps coming at
            S_GREETING_RATE. One that trickles holds a greeting place no
            longer than its message takes at that rate, and its address
            no more than its share of them.  */
        uint64_t got, before = fasgd_srv_greeting_received (self->greeting, fd);
        uint64_t need = (uint64_t) self->cfg->greeting_ms * S_GREETING_RATE / 1000;
        if (fasgd_srv_tcp_info_received (fd, &got) == 0 && got >= before && got - before >= need) {
            fasgd_srv_greeting_renew (self->greeting, fd, now_ms, got);
            fasgd_log_debug ("connections: %llu bytes of a first request in %lld ms on descriptor %d: "
                             "waited for afresh", (unsigned long long) (got - before),
                             (long long) (now_ms - since), fd);
            continue;
        }
        s_turn_away (self, fd, fasgd_srv_greeting_tag (self->greeting, fd));
        fasgd_srv_security_refusal_log (self->security, "closed a connection that sent no valid request "
                                        "within limits.greeting_ms (%d ms)", self->cfg->greeting_ms);
    }
}

int
fasgd_srv_conn_events (fasgd_srv_conns_t *self)
{
    /*  Few at a time, between reads of the requests (fasgd_srv_conn_heard):
        a connection must not be closed as still greeting because a
        flood's events were read before the request it sent in time.  */
    int most = (int) (self->greeting_max / S_EVENTS_SHARE);
    if (most < S_EVENTS_MIN)
        most = S_EVENTS_MIN;
    int done = 0, any = 1;
    while (any && done < most) {
        any = 0;
        for (int k = 0; k < self->nmonitors; k++)
            for (int j = 0; j < S_EVENTS_IN_TURN && done < most && s_event (self, k) == 0; j++) {
                any = 1;
                done++;
            }
    }
    return done;
}
