/*  turns: the parameters' replies sent one connection at a time
    (turns.h).  */
#include "turns.h"

#include "clock.h"
#include "tcp_info.h"
#include "turn_hold.h"
#include "turn_slow.h"

#include <stdlib.h>

#define S_ENDED 16                      /* turns ended, not yet told */

struct fasgd_srv_turns_t {
    fasgd_srv_turn_t *queue;            /* a ring of cap, the first at head */
    int cap, head, len;
    fasgd_srv_turn_hold_t hold;
    fasgd_srv_turn_slow_t slow;
    int64_t reader_us;
    size_t lead;
    fasgd_srv_stats_t *st;
    /*  The turn under way: its mark (NULL: none), connection, client
        and start.  */
    fasgd_srv_sent_t *sent;
    int fd;
    uint32_t client_id;
    int64_t started_us, hold_us;        /* its start, and its bound */
    uint64_t rwnd_us;                   /* the connection's time held up by the peer's window then */
    int rwnd_known;
    uint32_t cut;                       /* the client whose turn was cut, not yet told */
    int cut_ms;                         /* how long that turn held */
    fasgd_srv_turn_cut_t cut_why;
    /*  Turns that ended by themselves, to tell (_ended): a ring.  */
    struct {
        uint32_t client_id;
        int64_t took_us;
    } ended [S_ENDED];
    int ended_head, ended_len;
};

fasgd_srv_turns_t *
fasgd_srv_turns_new (const fasgd_srv_turns_cfg_t *cfg, fasgd_srv_stats_t *st)
{
    fasgd_srv_turns_t *self = calloc (1, sizeof *self);
    if (!self || cfg->queue < 1 || !(self->queue = calloc ((size_t) cfg->queue, sizeof *self->queue))) {
        free (self);
        return NULL;
    }
    self->cap = cfg->queue;
    fasgd_srv_turn_hold_init (&self->hold, cfg->hold_ms, cfg->hold_min_ms, cfg->hold_factor);
    fasgd_srv_turn_slow_init (&self->slow, cfg->slow_factor, cfg->slow_min_ms);
    self->reader_us = (int64_t) cfg->reader_ms * 1000;
    self->lead = cfg->lead_bytes;
    self->st = st;
    self->fd = -1;
    return self;
}

void
fasgd_srv_turns_destroy (fasgd_srv_turns_t **self_p)
{
    fasgd_srv_turns_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->len; i++)
        zmq_msg_close (&self->queue [(self->head + i) % self->cap].id);
    fasgd_srv_sent_release (&self->sent);
    free (self->queue);
    free (self);
    *self_p = NULL;
}

/*  Whether the client of the turn under way has held TCP up reader_us
    with its full receive window since the turn began.  */
static int
s_not_reading (fasgd_srv_turns_t *self)
{
    uint64_t rwnd;
    return self->reader_us > 0 && self->rwnd_known && fasgd_srv_tcp_info_rwnd_limited (self->fd, &rwnd) == 0
           && rwnd >= self->rwnd_us && (int64_t) (rwnd - self->rwnd_us) >= self->reader_us;
}

/*  A turn of client_id ended by itself after took_us: turn_hold and
    turn_slow learn how long, and _ended will tell (the oldest is
    forgotten when S_ENDED are untold).  */
static void
s_ended (fasgd_srv_turns_t *self, uint32_t client_id, int64_t took_us)
{
    fasgd_srv_turn_hold_ended (&self->hold, took_us);
    fasgd_srv_turn_slow_ended (&self->slow, took_us);
    if (self->ended_len == S_ENDED) {
        self->ended_head = (self->ended_head + 1) % S_ENDED;
        self->ended_len--;
    }
    int i = (self->ended_head + self->ended_len++) % S_ENDED;
    self->ended [i].client_id = client_id;
    self->ended [i].took_us = took_us;
}

/*  Ends the turn under way when it is over: its body the kernel's with
    at most lead bytes unsent (or its descriptor no longer counting
    them); or held its bound, or its client not reading (s_not_reading),
    either of which cuts it. A turn that ends by itself while replies
    wait (and the loop looks every millisecond) is told how long it
    took (s_ended), unless its connection closed (a client that hangs
    up at once must not make turns look short). Returns whether one is
    still under way.  */
static int
s_under_way (fasgd_srv_turns_t *self)
{
    if (!self->sent)
        return 0;
    size_t unsent;
    int64_t took = fasgd_srv_now_us () - self->started_us;
    if (fasgd_srv_sent_done (self->sent)) {
        int counted = fasgd_srv_tcp_info_unsent (self->fd, &unsent) == 0;
        if (!counted || unsent <= self->lead) {
            if (counted && self->len > 0)
                s_ended (self, self->client_id, took);
            fasgd_srv_sent_release (&self->sent);
            return 0;
        }
    }
    if (took < self->hold_us && !s_not_reading (self))
        return 1;
    self->cut = self->client_id;
    self->cut_why = took < self->hold_us ? FASGD_SRV_TURN_CUT_READER : FASGD_SRV_TURN_CUT_BOUND;
    self->cut_ms = (int) (((self->cut_why == FASGD_SRV_TURN_CUT_BOUND ? self->hold_us : took) + 999) / 1000);
    self->st->turns_cut++;
    fasgd_srv_sent_release (&self->sent);
    return 0;
}

/*  Whether client_id has a reply waiting or under way (under_way: what
    s_under_way said of the turn).  */
static int
s_holds (const fasgd_srv_turns_t *self, int under_way, uint32_t client_id)
{
    if (under_way && self->client_id == client_id)
        return 1;
    for (int i = 0; i < self->len; i++)
        if (self->queue [(self->head + i) % self->cap].req.client_id == client_id)
            return 1;
    return 0;
}

/*  Starts the turn of a reply on fd to client_id: its mark, NULL out of
    memory (no turn is then under way).  */
static fasgd_srv_sent_t *
s_take (fasgd_srv_turns_t *self, int fd, uint32_t client_id)
{
    fasgd_srv_sent_release (&self->sent);
    self->sent = fasgd_srv_sent_new ();
    self->fd = fd;
    self->client_id = client_id;
    self->started_us = fasgd_srv_now_us ();
    self->hold_us = fasgd_srv_turn_hold_us (&self->hold);
    self->rwnd_known = fasgd_srv_tcp_info_rwnd_limited (fd, &self->rwnd_us) == 0;
    return self->sent;
}

fasgd_srv_turn_verdict_t
fasgd_srv_turns_ask (fasgd_srv_turns_t *self, fasgd_srv_request_t *r, uint32_t client_id, int status, int holds)
{
    int under_way = s_under_way (self);
    if (!r->req || self->len == self->cap) {
        self->st->turns_skipped++;
        return FASGD_SRV_TURN_NONE;
    }
    /*  A client's second reply while its first waits or is under way
        waits its order too, holding no one: one client holds the
        others at most one turn at a time.  */
    if (s_holds (self, under_way, client_id))
        holds = 0;
    if (!under_way && self->len == 0) {
        if (!holds)
            return FASGD_SRV_TURN_NONE;
        return (r->sent = s_take (self, r->fd, client_id)) ? FASGD_SRV_TURN_TAKEN : FASGD_SRV_TURN_NONE;
    }
    fasgd_srv_turn_t *t = &self->queue [(self->head + self->len) % self->cap];
    zmq_msg_init (&t->id);
    if (zmq_msg_copy (&t->id, r->identity) != 0) {
        zmq_msg_close (&t->id);
        self->st->turns_skipped++;
        return FASGD_SRV_TURN_NONE;
    }
    t->sock = r->sock;
    t->fd = r->fd;
    t->req = *r->req;
    t->status = status;
    t->holds = holds;
    self->len++;
    self->st->turns_waited++;
    return FASGD_SRV_TURN_QUEUED;
}

int
fasgd_srv_turns_next (fasgd_srv_turns_t *self, int all, fasgd_srv_turn_t *t)
{
    if (self->len == 0 || (s_under_way (self) && !all))
        return -1;
    fasgd_srv_turn_t *first = &self->queue [self->head];
    *t = *first;
    zmq_msg_init (&t->id);
    zmq_msg_move (&t->id, &first->id);  /* the id moves to the caller */
    zmq_msg_close (&first->id);
    self->head = (self->head + 1) % self->cap;
    self->len--;
    return 0;
}

fasgd_srv_sent_t *
fasgd_srv_turns_take (fasgd_srv_turns_t *self, const fasgd_srv_turn_t *t)
{
    return s_take (self, t->fd, t->req.client_id);
}

int64_t
fasgd_srv_turns_skips (int cuts)
{
    return (int64_t) 16 << (cuts < 1 ? 0 : cuts > 30 ? 29 : cuts - 1);
}

uint32_t
fasgd_srv_turns_cut (fasgd_srv_turns_t *self, int *held_ms, fasgd_srv_turn_cut_t *why)
{
    uint32_t id = self->cut;
    *held_ms = self->cut_ms;
    *why = self->cut_why;
    self->cut = 0;
    return id;
}

uint32_t
fasgd_srv_turns_ended (fasgd_srv_turns_t *self, int64_t *took_us)
{
    if (self->ended_len == 0)
        return 0;
    uint32_t id = self->ended [self->ended_head].client_id;
    *took_us = self->ended [self->ended_head].took_us;
    self->ended_head = (self->ended_head + 1) % S_ENDED;
    self->ended_len--;
    return id;
}

int
fasgd_srv_turns_slower (const fasgd_srv_turns_t *self, fasgd_srv_turn_pace_t *pace, int64_t took_us)
{
    return fasgd_srv_turn_slow_client (&self->slow, pace, took_us);
}

int64_t
fasgd_srv_turns_typical_us (const fasgd_srv_turns_t *self)
{
    return (int64_t) self->slow.typical_us;
}

int
fasgd_srv_turns_waiting (const fasgd_srv_turns_t *self)
{
    return self->len;
}

int
fasgd_srv_turns_hold_ms (const fasgd_srv_turns_t *self)
{
    return (int) ((fasgd_srv_turn_hold_us (&self->hold) + 999) / 1000);
}
