/*  staleness: the simulator's τ (the setting `staleness`), the same clock
    as the daemon's guard.staleness (common/staleness.h). With count, τ is
    T − j. With movement, each update counts min(1, ‖g‖/ν); where the
    daemon takes ν from its guard (the norm bound's anchor), the
    simulator, which has no guard and whose clients are all honest, takes
    the guard's vote without it: the lower median of the clients' typical
    norms (common/verdict.h), one vote per client that has pushed. With
    shards each shard has a clock of its own, over its own timestamps and
    the norms of its parts, as each shard daemon has. The server's turn
    only (one thread), so runs stay bit for bit.  */
#include "simint.h"

#include "floats.h"
#include "log.h"
#include "verdict.h"

#include <math.h>
#include <stdlib.h>

/*  One clock starting at T for nclients clients.  */
static int
s_init (s_stale_t *s, int movement, uint64_t T, int nclients)
{
    s->clock = fasgd_staleness_new (movement, T);
    s->nclients = nclients;
    if (movement) {
        s->typical = calloc ((size_t) nclients, sizeof *s->typical);
        s->voted = calloc ((size_t) nclients, sizeof *s->voted);
        s->votes = calloc ((size_t) nclients, sizeof *s->votes);
    }
    return s->clock && (!movement || (s->typical && s->voted && s->votes)) ? 0 : -1;
}

static void
s_destroy (s_stale_t *s)
{
    fasgd_staleness_destroy (&s->clock);
    free (s->typical);
    free (s->voted);
    free (s->votes);
    s->typical = NULL;
    s->voted = NULL;
    s->votes = NULL;
}

int
fasgd_simstale_init (fasgd_sim_t *self)
{
    int movement = self->cfg.staleness == FASGD_STALENESS_MOVEMENT;
    int rc = s_init (&self->stale, movement, self->T, self->cfg.clients);
    for (int s = 0; rc == 0 && s < self->nshards; s++)
        rc = s_init (&self->shards [s].stale, movement, self->shards [s].T, self->cfg.clients);
    if (rc != 0)
        fasgd_log_error ("sim: out of memory for the staleness clock");
    return rc;
}

void
fasgd_simstale_destroy (fasgd_sim_t *self)
{
    s_destroy (&self->stale);
    for (int s = 0; self->shards && s < self->nshards; s++)
        s_destroy (&self->shards [s].stale);
}

uint64_t
fasgd_simstale_tau (const s_stale_t *s, uint64_t T, uint64_t j)
{
    return fasgd_staleness_tau (s->clock, T, j);
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
    if (fasgd_verdict_median_due ((size_t) s->nvoters, &s->since_median)) {
        size_t n = 0;
        for (size_t i = 0; i < (size_t) s->nclients; i++)
            if (s->voted [i])
                s->votes [n++] = (fasgd_verdict_weighted_t) { s->typical [i], 1 };
        s->nu = fasgd_verdict_weighted_lower_median (s->votes, n);
    }
}

void
fasgd_simstale_pushed (s_stale_t *s, uint64_t T, int k, const float *g, size_t n, int applied)
{
    double count = 1;
    if (fasgd_staleness_movement (s->clock)) {
        double norm = sqrt (fasgd_floats_sumsq (g, n));
        s_vote (s, k, norm);
        count = fasgd_staleness_count (norm, s->nu);
    }
    if (applied)
        fasgd_staleness_advance (s->clock, T, count);
}
