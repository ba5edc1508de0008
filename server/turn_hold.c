/*  turn_hold: how long a θ reply's turn may hold the next before it is
    cut (turn_hold.h).  */
#include "turn_hold.h"

void
fasgd_srv_turn_hold_init (fasgd_srv_turn_hold_t *self, int max_ms, int min_ms, double factor)
{
    self->fastest_us = 0;
    self->max_us = (int64_t) max_ms * 1000;
    self->min_us = (int64_t) min_ms * 1000;
    self->factor = factor;
}

int64_t
fasgd_srv_turn_hold_us (const fasgd_srv_turn_hold_t *self)
{
    if (self->factor <= 0 || self->fastest_us == 0)
        return self->max_us;
    double bound = self->factor * (double) self->fastest_us;
    if (bound < (double) self->min_us)
        bound = (double) self->min_us;
    return bound < (double) self->max_us ? (int64_t) bound : self->max_us;
}

void
fasgd_srv_turn_hold_ended (fasgd_srv_turn_hold_t *self, int64_t took_us)
{
    if (took_us < 1)
        took_us = 1;
    int64_t risen = self->fastest_us + self->fastest_us / 128 + 1;
    self->fastest_us = self->fastest_us == 0 || took_us < risen ? took_us : risen;
}
