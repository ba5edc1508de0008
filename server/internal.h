/*  internal: the engine's struct, which only the files that wire the
    concerns together see (server.c, dispatch.c, control.c). Each concern
    with state is an object of its own, with its header; it is handed the
    few things it needs (the configuration, params, the stats, another
    object) and sees nothing else of the server.

    Every server/ file, and what it calls in the others (a test checks
    that this map names every .c file of server/, and that its arrows
    are the calls in the code):

        main.c         the daemon's options, signals, port file  → server
        config.c       the configuration's key table (fasgd-ctl links it too)
        server.c       life cycle: build, bind, the poll loop, tear down
                       → dispatch, control, registry, eval, checkpoint,
                       connections, guard, security, params, metrics,
                       turns
        dispatch.c     the data sockets' router: each request to its
                       handler  → registry, guard, params, reply, eval,
                       checkpoint, security, connections, greeting,
                       turns
        control.c      the control socket: STATUS, CHECKPOINT, RELOAD
                       → registry, security, checkpoint, guard, eval,
                       connections, reply, turns
        metrics.c      the counters as Prometheus text, published to
                       metrics/'s HTTP thread  → registry, eval,
                       checkpoint, connections, guard
        registry.c     clients: join, lookup, expiry, revocation; the only
                       owner of client records  → guard, security
        eval.c         the evaluation thread and the validation CSV
                       → params, registry
        checkpoint.c   writing and resuming checkpoints  → params, guard
        connections.c  connection counts and limits, from socket monitors
                       → security, greeting, tcp_info
        greeting.c     the connections not yet heard from, by age and
                       source address
        turns.c        θ replies one connection at a time: which may go
                       → reply, tcp_info, turn_hold, turn_slow
        turn_hold.c    how long a turn may hold the next: a multiple of
                       the fastest turns lately
        turn_slow.c    which clients' paths are slower than the others':
                       their turns against the others' lately
        tcp_info.c     the bytes the kernel has received on a
                       connection, and those it has not sent
        guard.c        what a gradient must pass; its verdicts
                       → guard_loss
        guard_loss.c   the held-out loss after clients' pushes: weight
                       cut, θ to set back
        security.c     CURVE: certificate, allowlist, ZAP, refusal log lines
        params.c       θ, T, the rule; θ's snapshots and wire images
        reply.c        frames in and out: below every handler

    Calls go only down this list's arrows: no file calls one that calls
    it. A check (guard.c, security.c) returns a verdict and the file that
    asked it acts on it through the registry, which alone frees a client.
    Headers without a file of their own: stats.h (the counters), clock.h.
    The τ the rule divides by (guard.staleness) is common/staleness.c's
    clock, which the simulator runs too.
    Functions are named fasgd_srv_<file>_* (connections.c's
    fasgd_srv_conn_*); file-local ones s_*.  */
#ifndef FASGD_SERVER_INTERNAL_H_INCLUDED
#define FASGD_SERVER_INTERNAL_H_INCLUDED

#include "server.h"

#include "checkpoint.h"
#include "clock.h"
#include "codec.h"
#include "connections.h"
#include "eval.h"
#include "guard.h"
#include "metrics.h"
#include "model.h"
#include "params.h"
#include "staleness.h"
#include "registry.h"
#include "reply.h"
#include "security.h"
#include "stats.h"
#include "turns.h"

#include <czmq.h>
#include <signal.h>
#include <stdint.h>

#define FASGD_SRV_WINDOW_SAMPLES 11     /* a sample a second: rates over the last 10 s */

/*  The counters at one moment, for rates over a recent window.  */
typedef struct {
    int64_t ms;
    uint64_t T;
    fasgd_srv_stats_t st;
} fasgd_srv_sample_t;

#define FASGD_SRV_CKPT_WAITING 32       /* CHECKPOINT requests waiting for the next checkpoint */
#define FASGD_SRV_LEFT_KEPT 64          /* the last clients that left, whose late HEARTBEATs are no refusals */

/*  A CHECKPOINT request waiting for its reply (control.c).  */
typedef struct {
    zmq_msg_t id;                       /* the peer's routing id */
    int delimited;                      /* its request had REQ's empty delimiter */
} fasgd_srv_ckpt_waiter_t;

struct fasgd_server_t {
    fasgd_server_cfg_t cfg;
    zsock_t *push, *fetch, *control;   /* control: NULL when disabled */
    char push_ep [256], fetch_ep [256], control_ep [256];
    fasgd_model_t *model;               /* NULL for an external model */
    fasgd_proto_tensor_t ext_tensors [FASGD_PROTO_MAX_TENSORS];
    int ext_ntensors;
    fasgd_srv_params_t *params;         /* θ, T, the rule, θ's snapshots */
    float *grad;                        /* receive buffer for non-aligned bodies, and the guard's clipping */
    int needs_used, cache_last;
    fasgd_proto_desc_t desc;            /* WELCOME's, but for each client's session */
    fasgd_srv_stats_t st, st_last;      /* st_last: at the last status line */

    fasgd_srv_security_t *security;
    fasgd_srv_conns_t *conns;
    fasgd_srv_guard_t *guard;
    fasgd_staleness_clock_t *staleness; /* the tau the rule divides by */
    fasgd_srv_registry_t *registry;
    fasgd_srv_checkpoint_t *checkpoint;
    fasgd_srv_eval_t *eval;
    fasgd_srv_metrics_t *metrics;       /* NULL when metrics.endpoint is empty */
    fasgd_srv_turns_t *turns;           /* NULL unless turns.enabled */
    fasgd_cpus_t eval_cpus;             /* where the evaluator runs when cpu pins the rest */

    int64_t started_ms, last_status_ms, last_expiry_ms;
    volatile sig_atomic_t stopping;

    /*  The control socket's (control.c).  */
    fasgd_srv_sample_t window [FASGD_SRV_WINDOW_SAMPLES];   /* a ring, oldest at window_next once full */
    int window_next, window_count;
    int64_t last_sample_ms;
    int64_t ctl_second_ms, ctl_ckpt_ms;     /* this second's start, the last CHECKPOINT written on request */
    int64_t ctl_ckpt_cost_ms;               /* how long that took */
    uint64_t ctl_ckpt_asked, ctl_ckpt_writes;   /* CHECKPOINT requests, and the writes they made */
    int ctl_in_second;
    fasgd_srv_ckpt_waiter_t ctl_waiting [FASGD_SRV_CKPT_WAITING];  /* for the next checkpoint */
    int ctl_nwaiting;

    /*  The last FASGD_SRV_LEFT_KEPT clients that left (dispatch.c): a
        HEARTBEAT already on its way when its client sent LEAVE (the two
        travel on connections of their own) still gets 401, but is
        counted in late_heartbeats, not as a refusal.  */
    struct { uint32_t id; uint64_t session; } left [FASGD_SRV_LEFT_KEPT];
    int left_next;
};

/*  dispatch.c  */

/*  Reads one request from sock (a data socket; is_fetch for the fetch
    socket) and answers it. Returns 0, or -1 when there was nothing to
    read.  */
int fasgd_srv_dispatch (fasgd_server_t *self, void *sock, int is_fetch);
/*  Sends the θ replies whose turn has come (all: every one waiting, at
    once), and stops giving turns to a client whose turn was cut.  */
void fasgd_srv_dispatch_turns (fasgd_server_t *self, int all);
/*  θ set back to back (the guard's loss check found a jump), at a new
    timestamp, and counted.  */
void fasgd_srv_set_back (fasgd_server_t *self, const float *back);

/*  control.c  */

/*  Keeps the counters of now in the window's ring, a sample a second.  */
void fasgd_srv_control_sample (fasgd_server_t *self, int64_t now);
/*  Reads one control request and answers it (a CHECKPOINT may wait for
    fasgd_srv_control_tick). Returns 0, or -1 when there was nothing to
    read.  */
int fasgd_srv_control_handle (fasgd_server_t *self);
/*  Writes the checkpoint that waiting CHECKPOINT requests asked for once
    the pause after the last is over, and answers them all; stopping:
    answers them 503 at once (the final checkpoint follows).  */
void fasgd_srv_control_tick (fasgd_server_t *self, int64_t now, int stopping);

#endif
