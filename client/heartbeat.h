/*  heartbeat: keeps a joined client alive on a server while its caller is
    idle (proto/PROTOCOL.md, HEARTBEAT).

    An actor (a czmq thread) with a DEALER socket of its own sends one
    HEARTBEAT whenever neither it nor the caller has sent anything to the
    server for a period, so a busy client sends none and an idle one sends
    one per period. Heartbeats are interchangeable: a full queue (no
    server) drops one, and the replies are read and dropped (the first
    refusal is logged). Nothing the server sends back reaches the caller.  */
#ifndef FASGD_HEARTBEAT_H_INCLUDED
#define FASGD_HEARTBEAT_H_INCLUDED

#include "channel.h"

#include <stdint.h>

typedef struct fasgd_heartbeat_t fasgd_heartbeat_t;

/*  The period for a server's description: its heartbeat_ms, or with 0
    (an older server or a missing key) a third of its expiry_ms, which
    keeps the client alive; at least 10 ms, since the period comes from a
    peer and must not make the client spin. 0 when neither is known: no
    heartbeats.  */
int fasgd_heartbeat_period (uint32_t heartbeat_ms, uint32_t expiry_ms);

/*  Starts beating to endpoint with curve (both borrowed: they outlive the
    heartbeat) as client_id of session, every period_ms (> 0) of silence,
    the first a period from now. NULL when the thread cannot start. A
    failure to make or connect its socket is logged, and it then sends
    nothing.  */
fasgd_heartbeat_t *fasgd_heartbeat_new (const char *endpoint, const fasgd_channel_curve_t *curve,
                                        uint32_t client_id, uint64_t session, int period_ms);

/*  Stops the thread; no heartbeat follows. NULL accepted.  */
void fasgd_heartbeat_destroy (fasgd_heartbeat_t **self_p);

/*  The caller sent a request now: the next heartbeat is due a period
    later. Safe from the caller's thread while the actor runs; NULL
    accepted.  */
void fasgd_heartbeat_sent (fasgd_heartbeat_t *self);

#endif
