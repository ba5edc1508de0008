/*  staleness: the τ a push is applied with (fasgd-server's
    guard.staleness, fasgd-sim's staleness). By default the count of
    updates since the θ it was computed at, T − j, as in the paper. With
    movement, each update counts by how far it moved θ against an honest
    push, min(1, ‖g‖/ν): in the daemon ν is the guard's honest norm (the
    norm bound's anchor: fasgd_srv_guard_honest_norm), in the simulator
    the lower median of its clients' typical norms (common/verdict.h);
    docs/ALGORITHMS.md, "The staleness an update counts for". Pushes that
    move θ by next to nothing no longer divide the honest clients' steps.
    One thread's: the daemon's poll loop, the simulator's server.  */
#ifndef FASGD_STALENESS_H_INCLUDED
#define FASGD_STALENESS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/*  What τ counts (the daemon's guard.staleness, the simulator's
    staleness).  */
typedef enum {
    FASGD_STALENESS_COUNT,              /* the updates since the push's θ */
    FASGD_STALENESS_MOVEMENT            /* each by its norm over an honest push's, at most 1 */
} fasgd_staleness_kind_t;

/*  "count", "movement": the configuration's names, NULL-terminated.  */
extern const char *const fasgd_staleness_names [];

typedef struct fasgd_staleness_clock_t fasgd_staleness_clock_t;

/*  A clock starting at timestamp T; movement 0: τ is the count. NULL
    out of memory.  */
fasgd_staleness_clock_t *fasgd_staleness_new (int movement, uint64_t T);
void fasgd_staleness_destroy (fasgd_staleness_clock_t **self_p);
/*  1 with guard.staleness: movement.  */
int fasgd_staleness_movement (const fasgd_staleness_clock_t *self);
/*  The staleness of a push computed at timestamp j ≤ T: T − j, or with
    movement the updates since j each counted as it was (rounded to the
    nearest whole; never more than T − j). Updates older than the
    clock's window, or than its last start, count one each.  */
uint64_t fasgd_staleness_tau (const fasgd_staleness_clock_t *self, uint64_t T, uint64_t j);
/*  T became the current timestamp by an update that counts `count`
    (in [0, 1]; a value outside is taken as 1). A T that is not the
    next one starts the clock anew there.  */
void fasgd_staleness_advance (fasgd_staleness_clock_t *self, uint64_t T, double count);
/*  The running sums a checkpoint keeps (FASGD_STALENESS_WINDOW at
    most): W[T − n + 1 .. T] into out, oldest first, as the clock holds
    them, n = min(T − start + 1, window, cap). Returns n; 0 without
    movement.  */
#define FASGD_STALENESS_WINDOW 65536
size_t fasgd_staleness_sums (const fasgd_staleness_clock_t *self, double *out, size_t cap);
/*  Takes back what fasgd_staleness_sums gave at T (n sums, oldest first):
    the clock then knows W from T − n + 1 on and continues as the one
    that gave them. Nothing without movement or with n 0; with n above
    the window or T + 1, only the last sums it can hold. The sums are the
    caller's to check (common/checkpoint.c does).  */
void fasgd_staleness_restore (fasgd_staleness_clock_t *self, uint64_t T, const double *w, size_t n);
/*  What an update of norm `norm` counts for against ν, the norm of
    an honest push: min(1, norm/ν); 1 when ν is not positive.  */
double fasgd_staleness_count (double norm, double nu);

#endif
