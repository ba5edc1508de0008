/*  staleness: the simulator's τ (the setting `staleness`), the same clock
    as the daemon's guard.staleness (common/staleness.h). With count, τ is
    T − j. With movement, each update counts min(1, ‖g‖/ν); where the
    daemon takes ν from its guard (the norm bound's anchor), the
    simulator, which has no guard and whose clients are all honest, takes
    the guard's vote without it: the lower median of the clients' typical
    norms (common/verdict.h), one vote per client that has pushed. The
    server's turn only (one thread), so runs stay bit for bit.  */
#include "simint.h"

#include "floats.h"
#include "log.h"
#include "verdict.h"

#include <math.h>
#include <stdlib.h>

int
fasgd_simstale_init (fasgd_sim_t *self)
{
    s_stale_t *s = &self->stale;
    int movement = self->cfg.staleness == FASGD_STALENESS_MOVEMENT;
    if (movement && self->shards) {
        fasgd_log_error ("sim: staleness: movement runs with shards: one only (each shard has its own T)");
        return -1;
    }
    s->clock = fasgd_staleness_new (movement, self->T);
    s->nclients = self->cfg.clients;
    if (movement) {
        size_t k = (size_t) self->cfg.clients;
        s->typical = calloc (k, sizeof *s->typical);
        s->voted = calloc (k, sizeof *s->voted);
        s->votes = calloc (k, sizeof *s->votes);
    }
    if (!s->clock || (movement && (!s->typical || !s->voted || !s->votes))) {
        fasgd_log_error ("sim: out of memory for the staleness clock");
        return -1;
    }
    return 0;
}

void
fasgd_simstale_destroy (fasgd_sim_t *self)
{
    s_stale_t *s = &self->stale;
    fasgd_staleness_destroy (&s->clock);
    free (s->typical);
    free (s->voted);
    free (s->votes);
    s->typical = s->votes = NULL;
    s->voted = NULL;
}

uint64_t
fasgd_simstale_tau (const fasgd_sim_t *self, uint64_t j)
{
    return fasgd_staleness_tau (self->stale.clock, self->T, j);
}

/*  Client k's vote, a push of norm x; the median again at every push
    while few vote, else every FASGD_VERDICT_MEDIAN_EVERY pushes.  */
static void
s_vote (s_stale_t *s, int k, double x)
{
    s->typical [k] = fasgd_verdict_vote (s->typical [k], !s->voted [k], x);
    if (!s->voted [k]) {
        s->voted [k] = 1;
        s->nvoters++;
    }
    if (s->nvoters <= FASGD_VERDICT_MEDIAN_EVERY || ++s->since_median >= FASGD_VERDICT_MEDIAN_EVERY) {
        size_t n = 0;
        for (size_t i = 0; i < (size_t) s->nclients; i++)
            if (s->voted [i])
                s->votes [n++] = s->typical [i];
        s->nu = fasgd_verdict_lower_median (s->votes, n);
        s->since_median = 0;
    }
}

void
fasgd_simstale_pushed (fasgd_sim_t *self, int k, const float *g, int applied)
{
    s_stale_t *s = &self->stale;
    double count = 1;
    if (fasgd_staleness_movement (s->clock)) {
        double norm = sqrt (fasgd_floats_sumsq (g, self->n));
        s_vote (s, k, norm);
        count = fasgd_staleness_count (norm, s->nu);
    }
    if (applied)
        fasgd_staleness_advance (s->clock, self->T, count);
}
