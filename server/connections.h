/*  connections: the TCP connections peers open to the push, fetch and
    control sockets, counted from socket monitors and held within
    limits.connections (connections.c says why and how). It owns the
    monitors; failed handshakes go to security.  */
#ifndef FASGD_SERVER_CONNECTIONS_H_INCLUDED
#define FASGD_SERVER_CONNECTIONS_H_INCLUDED

#include "security.h"
#include "server.h"
#include "stats.h"

#include <czmq.h>

#define FASGD_SRV_MONITORS 3            /* push, fetch, control: their connections and handshakes */

typedef struct fasgd_srv_conns_t fasgd_srv_conns_t;

/*  Raises the soft descriptor limit to the hard one and sets the most
    connections from cfg's limits.connections (or limits.clients) and the
    descriptors there are. cfg, security and st are borrowed. NULL out
    of memory.  */
fasgd_srv_conns_t *fasgd_srv_conn_new (const fasgd_server_cfg_t *cfg, fasgd_srv_security_t *security,
                                       fasgd_srv_stats_t *st);
/*  Stops the monitors: before the sockets are closed.  */
void fasgd_srv_conn_destroy (fasgd_srv_conns_t **self_p);
/*  Watches sock's connections and handshakes (sock bound, and closed only
    after fasgd_srv_conn_destroy); what names it in log lines, and
    "control" has its own few connections. -1 with errno set.  */
int fasgd_srv_conn_watch (fasgd_srv_conns_t *self, zsock_t *sock, const char *what);
/*  The monitors, for the poll: k from 0 to fasgd_srv_conn_monitors () - 1.  */
int fasgd_srv_conn_monitors (const fasgd_srv_conns_t *self);
zsock_t *fasgd_srv_conn_monitor (fasgd_srv_conns_t *self, int k);
/*  Handles the events of all the monitors that wait, a few of each in
    turn, and only a few in all (the rest on the next call, after the
    requests have been read: connections.c says why): counts connections
    and turns away those beyond the limits. Returns how many.  */
int fasgd_srv_conn_events (fasgd_srv_conns_t *self);
/*  A valid request came from the connection on descriptor fd (as
    fasgd_srv_recv_fd says), with routing_id (len bytes): it is no longer
    greeting. -1 when that connection was turned away at its accept, or
    was gone before its accept was read (the request got in before the
    accept was read): the request is not to be served.  */
int fasgd_srv_conn_heard (fasgd_srv_conns_t *self, int fd, const void *routing_id, size_t len);
/*  Closes the connections greeting for longer than limits.greeting_ms.  */
void fasgd_srv_conn_tick (fasgd_srv_conns_t *self, int64_t now_ms);
/*  Connections open now on the three sockets, and the most allowed on
    push and fetch.  */
uint64_t fasgd_srv_conn_open (const fasgd_srv_conns_t *self);
uint64_t fasgd_srv_conn_max (const fasgd_srv_conns_t *self);

#endif
