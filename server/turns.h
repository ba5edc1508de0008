/*  turns: the parameters' replies sent one connection at a time
    (turns.enabled). A link that shares itself among connections serves
    equal messages side by side, so the clients that asked together get
    θ together, compute together and push together, and the link idles
    between (bench/link.md, "The clients' phases"). Here a θ reply
    waits while the one before it is still being handed to its
    connection: until libzmq has given all its body to the kernel and
    the kernel's unsent bytes are down to turns.lead_bytes, or for the
    turn's bound at most (turn_hold.h: a multiple of the fastest turns
    lately, within turns.hold_min_ms and turns.hold_ms), or until TCP
    has been held up turns.reader_ms by the client's full receive window
    (it does not read, or reads slowly: the network's own slowness never
    shows there), after which the turn is cut and that client's next
    replies go without a turn: 16
    after its first cut, twice as many after each one more (a client
    that does not read holds the others once, then once in its next 17
    replies, once in the 33 after, ...; one the scheduler stalled once
    takes turns again soon). A client whose turns take, on average, many
    times the others' (turn_slow.h: its path slower than theirs) goes
    without a turn for its next 16 replies, and takes one with the 17th
    to be measured again. Replies wait in the order they were asked
    for; a client's second reply while its first waits or is under way
    goes without a turn too. A reply without a turn still waits its
    order like the others; when its order comes it goes and holds no
    one (a cut, a slow path or a second request is no way past the
    replies that wait). A reply while turns.queue wait goes at once
    without a turn.  */
#ifndef FASGD_SERVER_TURNS_H_INCLUDED
#define FASGD_SERVER_TURNS_H_INCLUDED

#include "codec.h"
#include "reply.h"
#include "stats.h"
#include "turn_slow.h"

#include <stdint.h>
#include <zmq.h>

typedef struct fasgd_srv_turns_t fasgd_srv_turns_t;

/*  A reply waiting for its turn: the request it answers, and the status
    the reply will carry (the parameters are those of its sending).  */
typedef struct {
    void *sock;
    zmq_msg_t id;                       /* the peer's routing id: the caller of _next closes it */
    int fd;
    fasgd_header_t req;
    int status;
    int holds;                          /* it takes the turn when it goes (0: it goes without one) */
} fasgd_srv_turn_t;

/*  What becomes of a reply that asks for a turn.  */
typedef enum {
    FASGD_SRV_TURN_TAKEN,               /* it has the turn: send it now, with the mark in r->sent */
    FASGD_SRV_TURN_QUEUED,              /* it waits: _next gives it back when its turn comes */
    FASGD_SRV_TURN_NONE                 /* it goes now without a turn (holding no one) */
} fasgd_srv_turn_verdict_t;

/*  The turns' settings: the turns.* keys of fasgd.yaml(5).  */
typedef struct {
    int queue;                          /* replies waiting at most */
    int hold_ms, hold_min_ms;           /* turn_hold.h's max_ms and min_ms */
    double hold_factor;                 /* ... and factor */
    int reader_ms;                      /* held up this long by the client's receive window: cut; 0: never */
    size_t lead_bytes;                  /* a turn is over with this many bytes or fewer unsent */
    double slow_factor;                 /* turn_slow.h's factor */
    int slow_min_ms;                    /* ... and min_ms */
} fasgd_srv_turns_cfg_t;

/*  Turns of replies as cfg says; st counts turns_waited, turns_cut and
    turns_skipped. NULL out of memory.  */
fasgd_srv_turns_t *fasgd_srv_turns_new (const fasgd_srv_turns_cfg_t *cfg, fasgd_srv_stats_t *st);
/*  Closes the waiting replies' ids (they are not sent), then frees.  */
void fasgd_srv_turns_destroy (fasgd_srv_turns_t **self_p);
/*  The reply to r (its connection r->fd, its client client_id) with
    status asks for its order, and for a turn when holds (and client_id
    has no reply waiting or under way already): taken when none is
    under way and none waits (r->sent is then the mark to send it with;
    without a turn: none, it goes now), queued when it must wait, none
    when the queue is full or the mark cannot be made.  */
fasgd_srv_turn_verdict_t fasgd_srv_turns_ask (fasgd_srv_turns_t *self, fasgd_srv_request_t *r, uint32_t client_id,
                                              int status, int holds);
/*  The first waiting reply, when the turn is free (all: whether it is or
    not): 0 and *t filled, -1 when none may go. One with t->holds takes
    the turn (_take); one without goes holding no one, and the next may
    follow at once.  */
int fasgd_srv_turns_next (fasgd_srv_turns_t *self, int all, fasgd_srv_turn_t *t);
/*  The reply just given by _next takes the turn: the mark to send it
    with (r->sent); NULL out of memory (it is then sent untracked).  */
fasgd_srv_sent_t *fasgd_srv_turns_take (fasgd_srv_turns_t *self, const fasgd_srv_turn_t *t);
/*  The replies that go without a turn after a client's cuts-th cut.  */
int64_t fasgd_srv_turns_skips (int cuts);
/*  Why a turn was cut.  */
typedef enum {
    FASGD_SRV_TURN_CUT_BOUND,           /* it lasted its bound */
    FASGD_SRV_TURN_CUT_READER           /* the client's receive window held TCP up turns.reader_ms */
} fasgd_srv_turn_cut_t;

/*  The client whose turn was cut since the last call, 0 when none;
    *held_ms how long that turn held the next, *why why it was cut.  */
uint32_t fasgd_srv_turns_cut (fasgd_srv_turns_t *self, int *held_ms, fasgd_srv_turn_cut_t *why);
/*  The client whose turn ended by itself while others waited, since the
    last call (the oldest first; of many, the last 16), 0 when none;
    *took_us how long it took.  */
uint32_t fasgd_srv_turns_ended (fasgd_srv_turns_t *self, int64_t *took_us);
/*  That turn folded into its client's (*pace, from its registry entry):
    whether the client's turns are now slower than the others'
    (turn_slow.h), and its next replies are to go without a turn.  */
int fasgd_srv_turns_slower (const fasgd_srv_turns_t *self, fasgd_srv_turn_pace_t *pace, int64_t took_us);
/*  The others' turns lately, in µs; 0 until one has ended by itself.  */
int64_t fasgd_srv_turns_typical_us (const fasgd_srv_turns_t *self);
/*  The replies waiting.  */
int fasgd_srv_turns_waiting (const fasgd_srv_turns_t *self);
/*  The bound of a turn that starts now, in ms (rounded up).  */
int fasgd_srv_turns_hold_ms (const fasgd_srv_turns_t *self);

#endif
