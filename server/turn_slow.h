/*  turn_slow: which clients' paths are slower than the others' (turns.h).
    A θ reply's turn lasts as long as its client's path takes to carry
    it; a client behind a slower path than the others' (a link of its
    own at a tenth of the server's, say) holds them that long at each of
    its turns, below any bound that honest turns on the server's link
    need (experiments/turns-testbed.md: one client behind 10 Mbit/s of
    32 cost the others 0.88-0.94 of their updates a second). Its reply
    shares the server's link with the next one's at little cost to it,
    since its own path is the bottleneck: so a client whose turns, on
    average, take more than factor times the others' lately, and more
    than min_ms, goes without a turn for a while.
    The others' turns lately: the mean of every turn that ended by
    itself, each new one weighing 1/32. A client's: the mean of its own,
    each new one weighing 1/4, judged from its fourth on, so that one
    turn an honest client's ACKs were queued in (many times the
    typical, at times) does not count against it. Replayed on the turns
    of two test-bed runs (experiments/data/turn-lengths/: 32 clients
    behind 104.63 Mbit/s, one of them behind its own 10 Mbit/s), it
    judged the slow client slower at 32 and 34 of its 36 and 37 turns,
    the others at none of 3,065; in runs with it, the updates came
    1.11-1.15 times as fast as with that client's turns holding the
    others (experiments/turns-testbed.md).
    Against attackers that know it: it only ever takes turns away, so no
    client can hold the others longer by it. Many ids whose turns are
    fast (on the server's own host) lower the others' mean until honest
    clients go without turns, as with turns off; many whose turns are
    slow raise it until a slow client keeps its turns, as without this
    judgement; neither is worse than those.  */
#ifndef FASGD_SERVER_TURN_SLOW_H_INCLUDED
#define FASGD_SERVER_TURN_SLOW_H_INCLUDED

#include <stdint.h>

/*  The others' turns lately.  */
typedef struct {
    double typical_us;                  /* 0 until a turn has ended by itself */
    double factor;                      /* 0: no client is judged slower */
    double min_us;
} fasgd_srv_turn_slow_t;

/*  A client's turns, in its registry entry: all 0 at first.  */
typedef struct {
    double mean_us;
    int n;
} fasgd_srv_turn_pace_t;

void fasgd_srv_turn_slow_init (fasgd_srv_turn_slow_t *self, double factor, int min_ms);
/*  A turn ended by itself after took_us (its client's, known or not).  */
void fasgd_srv_turn_slow_ended (fasgd_srv_turn_slow_t *self, int64_t took_us);
/*  The same turn, folded into its client's (*c); whether that client's
    turns are now slower than the others'.  */
int fasgd_srv_turn_slow_client (const fasgd_srv_turn_slow_t *self, fasgd_srv_turn_pace_t *c, int64_t took_us);

#endif
