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

    The monitors also carry the failed handshakes that security.c counts.  */
#include "connections.h"

#include "curve.h"
#include "log.h"

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

struct fasgd_srv_conns_t {
    const fasgd_server_cfg_t *cfg;
    fasgd_srv_security_t *security;     /* told of failed handshakes; logs the refusals */
    fasgd_srv_stats_t *st;              /* conn_shed, accept_failed */
    zsock_t *monitors [FASGD_SRV_MONITORS];
    zsock_t *watched [FASGD_SRV_MONITORS];     /* the sockets they watch */
    const char *monitor_names [FASGD_SRV_MONITORS];
    int nmonitors;
    uint64_t conns, conn_max;           /* on push and fetch: open now, and the most allowed */
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
    fasgd_log_info ("connections: at most %llu open (%llu file descriptors)", (unsigned long long) want,
                    (unsigned long long) nofile);
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

int
fasgd_srv_conn_event (fasgd_srv_conns_t *self, int k)
{
    int event;
    uint32_t value;
    if (fasgd_curve_event_recv (self->monitors [k], &event, &value) != 0)
        return -1;
    const char *what = self->monitor_names [k];
    switch (event) {
        case ZMQ_EVENT_ACCEPTED: {
            int control = k == self->control_monitor;
            uint64_t *held = control ? &self->conns_control : &self->conns;
            uint64_t most = control ? S_CONTROL_CONNECTIONS : self->conn_max;
            if (++*held <= most)
                break;
            /*  The value is the connection's descriptor, still libzmq's:
                shut down, not closed, so that libzmq sees the peer go and
                closes it itself.  */
            self->st->conn_shed++;
            shutdown ((int) value, SHUT_RDWR);
            if (control)
                fasgd_srv_security_refusal_log (self->security, "turned away a connection on the control socket: "
                                                "%d are open", S_CONTROL_CONNECTIONS);
            else
                fasgd_srv_security_refusal_log (self->security, "turned away a connection on the %s socket: "
                                                "limits.connections (%llu) are open", what,
                                                (unsigned long long) self->conn_max);
            break;
        }
        case ZMQ_EVENT_DISCONNECTED: {
            uint64_t *held = k == self->control_monitor ? &self->conns_control : &self->conns;
            if (*held > 0)
                (*held)--;
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
