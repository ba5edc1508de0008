/*  staleness: the τ a push is applied with; staleness.h says what it
    counts. With movement, the running sums W of the counts over the
    last S_WINDOW timestamps are kept in a ring: the staleness of a push
    computed at j is W[T] − W[j], and an update older than the ring (or
    than the clock's start: a new run, a resume without the sums) counts
    one. fasgd_staleness_sums and fasgd_staleness_restore carry the ring
    through a checkpoint.  */
#include "staleness.h"

#include <math.h>
#include <stdlib.h>

#define S_WINDOW FASGD_STALENESS_WINDOW  /* timestamps whose running sums are kept */

const char *const fasgd_staleness_names [] = { "count", "movement", NULL };

struct fasgd_staleness_clock_t {
    int movement;
    uint64_t start;                     /* W is known from here on (W[start] = 0) */
    uint64_t T;                         /* the last timestamp it knows */
    double *w;                          /* W[t] at w[t % S_WINDOW]; NULL without movement */
};

fasgd_staleness_clock_t *
fasgd_staleness_new (int movement, uint64_t T)
{
    fasgd_staleness_clock_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->movement = movement != 0;
    self->start = self->T = T;
    if (self->movement && !(self->w = calloc (S_WINDOW, sizeof *self->w))) {
        free (self);
        return NULL;
    }
    return self;
}

void
fasgd_staleness_destroy (fasgd_staleness_clock_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->w);
    free (*self_p);
    *self_p = NULL;
}

int
fasgd_staleness_movement (const fasgd_staleness_clock_t *self)
{
    return self->movement;
}

double
fasgd_staleness_count (double norm, double nu)
{
    if (!(nu > 0) || !isfinite (nu) || !(norm < nu))
        return 1;
    return norm > 0 ? norm / nu : 0;
}

uint64_t
fasgd_staleness_tau (const fasgd_staleness_clock_t *self, uint64_t T, uint64_t j)
{
    if (j >= T)
        return 0;
    if (!self->movement || T != self->T)
        return T - j;
    /*  The oldest timestamp whose running sum the ring still holds.  */
    uint64_t oldest = T - self->start < S_WINDOW ? self->start : T - (S_WINDOW - 1);
    uint64_t from = j > oldest ? j : oldest;
    double tau = self->w [T % S_WINDOW] - self->w [from % S_WINDOW] + (double) (from - j);
    uint64_t r = tau > 0 ? (uint64_t) llround (tau) : 0;
    return r < T - j ? r : T - j;
}

void
fasgd_staleness_advance (fasgd_staleness_clock_t *self, uint64_t T, double count)
{
    if (!self->movement || T == self->T) {
        self->T = T;
        return;
    }
    if (T != self->T + 1) {
        self->start = self->T = T;
        self->w [T % S_WINDOW] = 0;
        return;
    }
    if (!(count >= 0 && count <= 1))
        count = 1;
    self->w [T % S_WINDOW] = self->w [self->T % S_WINDOW] + count;
    self->T = T;
}

size_t
fasgd_staleness_sums (const fasgd_staleness_clock_t *self, double *out, size_t cap)
{
    if (!self->movement || cap == 0)
        return 0;
    uint64_t known = self->T - self->start + 1;
    size_t n = known < S_WINDOW ? (size_t) known : S_WINDOW;
    if (n > cap)
        n = cap;
    uint64_t from = self->T - (n - 1);
    for (size_t i = 0; i < n; i++)
        out [i] = self->w [(from + i) % S_WINDOW];
    return n;
}

void
fasgd_staleness_restore (fasgd_staleness_clock_t *self, uint64_t T, const double *w, size_t n)
{
    if (!self->movement || n == 0)
        return;
    if (n > S_WINDOW || n - 1 > T) {
        size_t keep = n > S_WINDOW ? S_WINDOW : n;
        if (keep - 1 > T)
            keep = (size_t) T + 1;
        w += n - keep;
        n = keep;
    }
    self->T = T;
    self->start = T - (n - 1);
    for (size_t i = 0; i < n; i++)
        self->w [(self->start + i) % S_WINDOW] = w [i];
}
