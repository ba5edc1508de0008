/*  gates: a client's decision, at each opportunity, whether to fetch the
    parameters or push its gradient (ALGORITHMS.md, "Bandwidth-aware
    fasgd").

    always    transmits at every opportunity (plain asgd / fasgd).
    every     transmits on opportunities k, 2k, 3k, ... (Dean et al.'s
              DistBelief: fetch every k_fetch, push every k_push).
    bfasgd    transmits iff r < 1 / (1 + c / (v̄ + ε_g)), r ~ U[0,1) drawn
              from the gate's own stream: the noisier the gradients (the
              larger the server's v̄), the more often.

    A client keeps one gate for fetches (c_fetch, k_fetch) and one for
    pushes (c_push, k_push), each seeded on its own stream, so no gate
    draw ever shifts the simulator's client picks or another gate's draws.
    fasgd_gate_t is a value type: embed it, no allocation. The counters
    are the bandwidth report (actual vs potential copies).
*/
#ifndef FASGD_GATES_H_INCLUDED
#define FASGD_GATES_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

typedef enum {
    FASGD_GATE_ALWAYS = 0,
    FASGD_GATE_EVERY,
    FASGD_GATE_BFASGD
} fasgd_gate_kind_t;

typedef struct {
    int    kind;                /* fasgd_gate_kind_t */
    int    every;               /* k ≥ 1 */
    double c;                   /* ≥ 0 */
    double eps;                 /* ε_g > 0, default 1e-4 */
} fasgd_gate_params_t;

typedef struct {
    fasgd_gate_params_t p;
    fasgd_rng_t rng;
    uint64_t opportunities, transmissions;
} fasgd_gate_t;

/*  always, every 1, c 0, eps 1e-4.  */
void fasgd_gate_params_default (fasgd_gate_params_t *p);

/*  Checks every field whatever the kind: kind known, every ≥ 1, c ≥ 0 and
    finite, eps > 0 and finite (so a bfasgd gate's probability stays
    above 0 even when v̄ = 0). Returns 0, or -1 with a message in err
    (which may be NULL).  */
int fasgd_gate_params_check (const fasgd_gate_params_t *p, char *err, size_t errlen);

/*  "always", "every", "bfasgd"; "?" for an unknown kind. Static strings.  */
const char *fasgd_gate_kind_name (int kind);

/*  The kind named by name, -1 if unknown or NULL.  */
int fasgd_gate_kind_parse (const char *name);
/*  The names, indexed by kind, NULL-terminated (for configuration tables).  */
extern const char *const fasgd_gate_kind_names [];

/*  Probability that an opportunity transmits: 1 for always; 1/k for every
    (the long-run rate); for bfasgd 1 / (1 + c / (v̄ + ε_g)) =
    (v̄+ε_g)/(v̄+ε_g+c), where a v̄ that is non-finite or negative (it comes
    from a peer) counts as 0. Always in [0, 1] for checked params.  */
double fasgd_gate_probability (const fasgd_gate_params_t *p, double vbar);

/*  Copies p (checked by the caller), seeds the gate's generator with
    (seed, stream) and zeroes the counters.  */
void fasgd_gate_init (fasgd_gate_t *self, const fasgd_gate_params_t *p,
                      uint64_t seed, uint64_t stream);

/*  One opportunity: counts it, returns 1 to transmit (and counts the
    transmission), 0 to skip. bfasgd draws exactly one r ~ U[0,1) per
    opportunity, whatever the probability, and transmits iff
    r < probability; every transmits when the opportunity count (forced
    ones included) is a multiple of k; always always. vbar is used by
    bfasgd only.  */
int fasgd_gate_decide (fasgd_gate_t *self, double vbar);

/*  A transmission the protocol forces (a client's first push): counts one
    opportunity and one transmission, draws nothing.  */
void fasgd_gate_force (fasgd_gate_t *self);

#endif
