/*  turn_slow: which clients' paths are slower than the others'
    (turn_slow.h).  */
#include "turn_slow.h"

#define S_TYPICAL_WEIGHT (1.0 / 32)
#define S_CLIENT_WEIGHT (1.0 / 4)
#define S_JUDGED_FROM 4                 /* a client's turns */

void
fasgd_srv_turn_slow_init (fasgd_srv_turn_slow_t *self, double factor, int min_ms)
{
    self->typical_us = 0;
    self->factor = factor;
    self->min_us = (double) min_ms * 1000;
}

/*  mean with a turn of took_us folded in at weight w: the turn alone
    when mean is 0 (none yet), so a turn counts as 1 µs at least.  */
static double
s_fold (double mean, int64_t took_us, double w)
{
    double x = took_us < 1 ? 1 : (double) took_us;
    return mean == 0 ? x : mean + w * (x - mean);
}

void
fasgd_srv_turn_slow_ended (fasgd_srv_turn_slow_t *self, int64_t took_us)
{
    self->typical_us = s_fold (self->typical_us, took_us, S_TYPICAL_WEIGHT);
}

int
fasgd_srv_turn_slow_client (const fasgd_srv_turn_slow_t *self, fasgd_srv_turn_pace_t *c, int64_t took_us)
{
    c->mean_us = s_fold (c->mean_us, took_us, S_CLIENT_WEIGHT);
    if (c->n < S_JUDGED_FROM)
        c->n++;
    return self->factor > 0 && self->typical_us > 0 && c->n >= S_JUDGED_FROM && c->mean_us > self->min_us
           && c->mean_us > self->factor * self->typical_us;
}
