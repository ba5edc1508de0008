/*  turn_hold: how long a θ reply's turn may hold the next before it is
    cut (turns.h). A fixed bound alone must be set above the time θ
    takes on the link, and a client that reads each reply just within
    it holds the others that long at each of its turns. Here the bound
    follows the link: factor times F, the shortest turn lately that
    ended by itself, kept within [min_ms, max_ms]; max_ms alone until a
    turn has ended by itself, or with a factor of 0. Where θ takes far
    less than min_ms on the link the bound is min_ms, which must leave
    room: with both directions of a link full, an honest turn can take
    many times the fastest (likely its ACKs queued behind the other
    direction's data; experiments/turns-testbed.md).
    F falls at once to a shorter turn and rises by at most 1/128 with
    each longer one, so turns made slow on purpose lift it little: 64 in
    a row, from as many ids, by 1.65 times at most, and the next turn of
    an honest client brings it back down; a turn that was cut does not
    move it. A client whose turns take longer than the bound, honest or
    not (a slower path than the fastest client's), is cut, and its
    replies then go side by side with the others' for a while (turns.h).  */
#ifndef FASGD_SERVER_TURN_HOLD_H_INCLUDED
#define FASGD_SERVER_TURN_HOLD_H_INCLUDED

#include <stdint.h>

typedef struct {
    int64_t fastest_us;                 /* F; 0 until a turn has ended by itself */
    int64_t min_us, max_us;
    double factor;
} fasgd_srv_turn_hold_t;

/*  The bound factor × F within [min_ms, max_ms] (max_ms when min_ms is
    above it); max_ms alone with factor 0.  */
void fasgd_srv_turn_hold_init (fasgd_srv_turn_hold_t *self, int max_ms, int min_ms, double factor);
/*  The bound of a turn that starts now, in µs.  */
int64_t fasgd_srv_turn_hold_us (const fasgd_srv_turn_hold_t *self);
/*  A turn ended by itself after took_us.  */
void fasgd_srv_turn_hold_ended (fasgd_srv_turn_hold_t *self, int64_t took_us);

#endif
