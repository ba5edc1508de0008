/*  staleness: the τ a push is applied with (guard.staleness). By
    default the count of updates since the θ it was computed at, T − j,
    as in the simulator and the paper. With guard.staleness: movement,
    each update counts by how far it moved θ against an honest push,
    min(1, ‖g‖/ν) with ν the guard's honest norm (the norm bound's anchor:
    fasgd_srv_guard_honest_norm; docs/ALGORITHMS.md, "The staleness an update counts for"): pushes
    that move θ by next to nothing no longer divide the honest clients'
    steps. Written by the poll loop's thread only.  */
#ifndef FASGD_SERVER_STALENESS_H_INCLUDED
#define FASGD_SERVER_STALENESS_H_INCLUDED

#include <stdint.h>

typedef struct fasgd_srv_staleness_t fasgd_srv_staleness_t;

/*  A clock starting at timestamp T; movement 0: τ is the count. NULL
    out of memory.  */
fasgd_srv_staleness_t *fasgd_srv_staleness_new (int movement, uint64_t T);
void fasgd_srv_staleness_destroy (fasgd_srv_staleness_t **self_p);
/*  1 with guard.staleness: movement.  */
int fasgd_srv_staleness_movement (const fasgd_srv_staleness_t *self);
/*  The staleness of a push computed at timestamp j ≤ T: T − j, or with
    movement the updates since j each counted as it was (rounded to the
    nearest whole; never more than T − j). Updates older than the
    clock's window, or than its last start, count one each.  */
uint64_t fasgd_srv_staleness_tau (const fasgd_srv_staleness_t *self, uint64_t T, uint64_t j);
/*  T became the current timestamp by an update that counts `count`
    (in [0, 1]; a value outside is taken as 1). A T that is not the
    next one starts the clock anew there.  */
void fasgd_srv_staleness_advance (fasgd_srv_staleness_t *self, uint64_t T, double count);
/*  What an update of norm `norm` counts for against ν, the norm of
    an honest push: min(1, norm/ν); 1 when ν is not positive.  */
double fasgd_srv_staleness_count (double norm, double nu);

#endif
