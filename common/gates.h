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

    fasgd_gates_t is a client's pair of gates with the policy around them,
    the one copy that the simulator (both modes, every shard) and the
    client library follow: a push is forced until the server holds a
    gradient of the client's (it has nothing to repeat before), a fetch
    until the client holds θ; a push the gate skips becomes a request to
    re-apply the last gradient (resend-last) or joins the client's local
    sum, sent with its next push (accumulate).
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

/*  A skipped push: re-applied by the server, or kept by the client.  */
typedef enum { FASGD_PUSH_SKIP_RESEND_LAST = 0, FASGD_PUSH_SKIP_ACCUMULATE } fasgd_push_skip_t;

/*  "resend-last", "accumulate", indexed by fasgd_push_skip_t,
    NULL-terminated (the configuration's and the WELCOME's spelling).  */
extern const char *const fasgd_push_skip_names [];

/*  The skip named by name, -1 if unknown or NULL.  */
int fasgd_push_skip_parse (const char *name);

/*  What one push opportunity sends.  */
typedef enum {
    FASGD_TX_PUSH = 0,          /* this gradient */
    FASGD_TX_PUSH_SUM,          /* the kept sum plus this gradient (accumulate) */
    FASGD_TX_REPEAT,            /* a request to re-apply the last one (resend-last) */
    FASGD_TX_KEEP               /* nothing: the gradient joins the kept sum (accumulate) */
} fasgd_tx_t;

typedef struct {
    fasgd_gate_t push, fetch;
    int skip;                   /* fasgd_push_skip_t */
    int pushed;                 /* the server holds a gradient of ours (the caller sets it) */
    int fetched;                /* the client holds θ (the caller sets it) */
    int has_accum;              /* the kept sum holds skipped gradients */
} fasgd_gates_t;

/*  Both gates (fasgd_gate_init), on streams of their own, pushed, fetched
    and the kept sum cleared.  */
void fasgd_gates_init (fasgd_gates_t *self, const fasgd_gate_params_t *push,
                       const fasgd_gate_params_t *fetch, int skip, uint64_t seed,
                       uint64_t push_stream, uint64_t fetch_stream);

/*  One push opportunity, the server's last v̄ given: forced (no draw)
    until pushed, else through the push gate; a transmission is
    FASGD_TX_PUSH_SUM when the kept sum holds gradients, a skip is
    FASGD_TX_REPEAT or FASGD_TX_KEEP by the skip policy. The caller sends
    it (fasgd_gates_sum makes the sum), sets pushed once the server has a
    gradient of its, and clears has_accum once the server took the sum.  */
fasgd_tx_t fasgd_gates_push (fasgd_gates_t *self, double vbar);

/*  One fetch opportunity: 1 to fetch, forced (no draw) until fetched.  */
int fasgd_gates_fetch (fasgd_gates_t *self, double vbar);

/*  FASGD_TX_KEEP: g's n values join the kept sum (copied into it when it
    holds none), has_accum set.  */
void fasgd_gates_keep (fasgd_gates_t *self, float *sum, const float *g, size_t n);

/*  FASGD_TX_PUSH_SUM: out = sum + g, n values (out may be sum).  */
void fasgd_gates_sum (float *out, const float *sum, const float *g, size_t n);

#endif
