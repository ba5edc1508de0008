/*  rules: the server-side update rules that apply one pushed gradient to θ.

    asgd, sasgd, softsync (hardsync is softsync with c = λ), fasgd (std and
    abs statistics), dcasgd and gap-aware, exactly as ALGORITHMS.md
    ("Update rules") states them. The server and the simulator both call
    fasgd_rule_apply, so a simulated run and a networked run apply the same
    update, bit for bit.

    Arithmetic. θ, g and every per-parameter state vector are float32 and
    each element is updated with float32 arithmetic; the scalar factors
    (α/τ, 1−γ, ...) are computed once per call in double and rounded to
    float. v̄ is summed in double in a fixed order that does not depend on
    vectorisation, so it is reproducible. A rule object is not thread-safe
    and starts no threads: the server holds its lock around apply.

    Exact float order per element, for anyone reproducing an update
    elsewhere (the simulator's hardsync identity):
      asgd, sasgd   θ −= a·g                       a = (float) α(τ)
      softsync      s = a₁·g₁;  s = s + a_l·g_l;  θ −= s / (float) c
                    (c = 1 takes the sasgd line itself, so it equals sasgd)
      fasgd std     n = γ·n + (1−γ)·(g·g);  b = γ·b + (1−γ)·g;
                    n, b = 0 where |n|, |b| < FLT_MIN;
                    σ = sqrtf (max (n − b·b, 0) + ε);  v = β·v + (1−β)/σ;
                    θ −= (a·v)·g                   a = (float) (α / max (τ,1))
      fasgd abs     m = d·m + (1−d)·|g|;  m = 0 where m < FLT_MIN;
                    θ −= (a·g) / (m + floor)       a = (float) (α / (τ+1))
      dcasgd        θ −= a·(g + ((λ·g)·g)·(θ − θ_used))
      gap-aware     G = C > 0 ? 1 + |θ − θ_used| / C : 1;  Δ = (a·g) / G;
                    θ −= Δ;  C = γ_C·C + (1−γ_C)·|Δ|
    The flush to zero keeps fasgd's moving averages out of the slow
    subnormal range; it changes neither θ nor v̄ except in contrived
    settings (rules.c, s_flush, gives the argument).
    A compiler that contracts a·b + c into a fused multiply-add (gcc does
    by default when the target has FMA, e.g. with -march=native) changes
    the last bit; build with -ffp-contract=off where bitwise agreement
    across machines matters.
*/
#ifndef FASGD_RULES_H_INCLUDED
#define FASGD_RULES_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef enum {
    FASGD_RULE_ASGD = 0,
    FASGD_RULE_SASGD,
    FASGD_RULE_SOFTSYNC,
    FASGD_RULE_FASGD,
    FASGD_RULE_DCASGD,
    FASGD_RULE_GAPAWARE
} fasgd_rule_kind_t;

/*  α(τ) of sasgd and softsync: Zhang et al.'s published α/τ (α at τ = 0),
    or α/(τ+1) as in the paper's reference simulator.  */
typedef enum {
    FASGD_SASGD_DIV_TAU = 0,
    FASGD_SASGD_PLUS_ONE
} fasgd_sasgd_form_t;

/*  fasgd's per-parameter statistic: moving std of g, or moving mean of |g|
    (the reference code's simpler form).  */
typedef enum {
    FASGD_STAT_STD = 0,
    FASGD_STAT_ABS
} fasgd_statistic_t;

/*  fasgd's staleness term: divide the step by τ (the rule), or ignore τ
    (an ablation: the per-parameter normalisation alone).  */
typedef enum {
    FASGD_STALENESS_DIVIDE = 0,
    FASGD_STALENESS_IGNORE
} fasgd_staleness_t;

typedef struct {
    int    kind;            /* fasgd_rule_kind_t */
    double lr;              /* α > 0 */
    int    sasgd_form;      /* α(τ) of sasgd and softsync */
    int    softsync_group;  /* c ≥ 1: gradients buffered per update (the caller
                               computes c = floor(λ/n)); hardsync is c = λ */
    int    statistic;       /* fasgd: std (default) or abs */
    double gamma, beta;     /* fasgd std: moving-average decays, default 0.9,
                               0.9, each in [0,1) */
    double epsilon;         /* fasgd std: ε > 0 inside the sqrt; default 1e-4 */
    double abs_decay;       /* fasgd abs: 0.9 */
    double abs_floor;       /* fasgd abs: 0.001 */
    int    staleness;       /* fasgd: fasgd_staleness_t, default divide */
    double dc_lambda;       /* dcasgd λ_dc, default 0.04 */
    int    dc_adaptive;     /* dcasgd: 1 for DC-ASGD-a, λ_dc/sqrt(MS + 1e-7) */
    double dc_momentum;     /* DC-ASGD-a: decay m of the mean square MS of g,
                               default 0.95, in [0,1) */
    double gap_decay;       /* gap-aware: decay of the moving average C of
                               |Δθ|, default 0.9 */
} fasgd_rule_params_t;

/*  Largest softsync group: c must be exact as a float divisor.  */
#define FASGD_RULE_GROUP_MAX 16777216

/*  Kind fasgd (std), lr 0.005, the defaults above, group 1, form div-tau.  */
void fasgd_rule_params_default (fasgd_rule_params_t *p);

/*  Checks every field, whatever the kind, so a bad value never lies dormant
    until the rule is switched. Returns 0, or -1 with a message naming the
    field and the value in err (err may be NULL).  */
int fasgd_rule_params_check (const fasgd_rule_params_t *p, char *err, size_t errlen);

/*  "asgd", "sasgd", "softsync", "fasgd", "dcasgd", "gap-aware"; "?" for an
    unknown kind. Static strings.  */
const char *fasgd_rule_kind_name (int kind);

/*  The kind named by name (as fasgd_rule_kind_name spells it), -1 if
    unknown or NULL.  */
int fasgd_rule_kind_parse (const char *name);
/*  The names, indexed by kind, NULL-terminated (for configuration tables).  */
extern const char *const fasgd_rule_kind_names [];

typedef struct fasgd_rule_t fasgd_rule_t;

/*  A rule for n parameters, its statistics and buffers zeroed. Copies p.
    NULL with a message in err (which may be NULL) on invalid params (see
    fasgd_rule_params_check), n = 0, or out of memory.  */
fasgd_rule_t *fasgd_rule_new (const fasgd_rule_params_t *p, size_t n, char *err, size_t errlen);

/*  Frees the rule; accepts NULL and a pointer to NULL, nulls *self_p.  */
void fasgd_rule_destroy (fasgd_rule_t **self_p);

/*  The caller has checked that every gradient it applies is finite (the
    server's guard sums g² over each first): apply then skips its own pass
    over g, and a NaN or Inf given anyway is the caller's bug.  */
void fasgd_rule_gradients_checked (fasgd_rule_t *self);

/*  1 for dcasgd and gap-aware, which need theta_used in apply.  */
int fasgd_rule_needs_theta_used (const fasgd_rule_t *self);

/*  Applies one pushed gradient g (n floats, the minibatch mean) with
    staleness tau to theta (n floats).
    Returns 1 when theta changed (the caller advances T), 0 when the
    gradient was buffered (softsync waiting for its group), -1 when g holds
    a NaN or Inf (nothing touched: theta, statistics, buffers and v̄ all
    unchanged), -2 when the rule needs theta_used (the n parameters the
    client computed on) and got NULL (nothing touched either).
    theta_used is ignored by the other rules and may then be NULL. The
    caller guarantees that theta_used, when given, is finite (it is the
    server's own snapshot, not peer data) and that g and theta_used do not
    overlap theta.  */
int fasgd_rule_apply (fasgd_rule_t *self, float *theta, const float *g,
                      uint64_t tau, const float *theta_used);

/*  As fasgd_rule_apply, but θ is read from theta and the new θ written to
    theta_new, all n floats of it, while theta is left as it was: the same
    bits as applying in place to a copy, without the copy (the simulator
    writes the update straight into the next shared snapshot). theta_new
    may be theta itself (then this is fasgd_rule_apply); otherwise it must
    not overlap theta, g or theta_used. theta_used may be theta. Returns
    as fasgd_rule_apply; theta_new is written only when it returns 1.  */
int fasgd_rule_apply_into (fasgd_rule_t *self, float *theta_new, const float *theta,
                           const float *g, uint64_t tau, const float *theta_used);

/*  A push judged and applied in one pass over g (the server's guard,
    server/dispatch.c): as fasgd_rule_apply_into (θ read from theta, the
    new θ written to theta_new, which must overlap none of the others),
    and in the same pass over g its sum of squares into *sumsq (the bits
    of fasgd_floats_sumsq) and, with r, its dot product with r within
    r's nspans spans into *dot (the bits of fasgd_floats_sumsq_dot_spans;
    0 without r). Nothing of the rule changes: the state's new values go
    into a second set of vectors (as many as the state has: 3·n floats
    for fasgd std, n for abs, gap-aware, DC-ASGD-a and softsync with
    c > 1, none for the others; allocated at the first call), which
    fasgd_rule_commit makes the rule's state; anything else that changes
    the rule (an apply, a state set, the next stage) drops it. g is not
    checked: a NaN or Inf in it makes *sumsq NaN or +Inf, and the caller
    then does not commit. Once committed, theta_new and the rule are the
    same bits as fasgd_rule_apply_into would have made. Returns 1 when
    theta_new was written, 0 when softsync would buffer g (theta_new not
    written), -2 as fasgd_rule_apply, -4 out of memory (nothing staged).  */
int fasgd_rule_stage (fasgd_rule_t *self, float *theta_new, const float *theta, const float *g, uint64_t tau,
                      const float *theta_used, const float *r, const size_t *spans, size_t nspans, double *sumsq,
                      double *dot);
/*  The vectors of n floats a stage writes aside (see above): 0 for
    asgd, sasgd, softsync with c = 1 and dcasgd; 1 or 3 for the rules
    with a per-parameter state.  */
int fasgd_rule_stage_vectors (const fasgd_rule_t *self);
/*  The state of the last fasgd_rule_stage becomes the rule's (its
    statistics, softsync's buffer and count, v̄): after it returned 0 or
    1, with nothing in between that changed the rule.  */
void fasgd_rule_commit (fasgd_rule_t *self);
/*  v̄: the mean over all parameters of the moving statistic after the last
    accepted gradient (σ for std, m for abs), which the server sends to
    clients for their B-FASGD gates; 1.0 for rules without statistics; 0
    for fasgd before any gradient.  */
double fasgd_rule_vbar (const fasgd_rule_t *self);

/*  Number of parameters.  */
size_t fasgd_rule_size (const fasgd_rule_t *self);

/*  Gradients buffered towards softsync's next update (0 ≤ pending < c);
    always 0 for the other rules.  */
uint64_t fasgd_rule_pending (const fasgd_rule_t *self);

/*  The rule's parameters. Borrowed: valid until the rule is destroyed.  */
const fasgd_rule_params_t *fasgd_rule_params (const fasgd_rule_t *self);

/*  Checkpointing: the complete mutable state (statistics, softsync buffer
    and count, v̄) as an opaque blob in native byte order, for a checkpoint
    written and read on the same kind of machine. Its header records kind,
    statistic, softsync group and n, so a blob from another rule or size is
    refused. The parameters themselves (α, γ, ...) are not in the blob: a
    restart may change them.  */
size_t fasgd_rule_state_size (const fasgd_rule_t *self);

/*  The largest magnitude in the rule's per-parameter state vectors (0
    when it keeps none): a bound for the server's push guard.  */
double fasgd_rule_state_max_abs (const fasgd_rule_t *self);

/*  Writes exactly fasgd_rule_state_size (self) bytes to buf (any
    alignment).  */
void fasgd_rule_state_get (const fasgd_rule_t *self, void *buf);

/*  Checks a blob as read from a file, without a rule: the magic and
    version, a length that holds the header and whole vectors of n floats
    (at most three), and that v̄ and every float are finite, so that a
    poisoned state is refused before it reaches a rule. Returns 0, or -1
    with the reason in err (which may be NULL).  */
int fasgd_rule_state_check (const void *buf, size_t len, uint64_t n, char *err, size_t errlen);

/*  Restores a blob from fasgd_rule_state_get. Returns 0, or -1 (and logs
    why) when len, the magic, the version, kind, statistic, group or n do
    not match this rule or the blob is inconsistent; the rule is then
    unchanged. A blob fasgd_rule_state_check refuses is refused too.  */
int fasgd_rule_state_set (fasgd_rule_t *self, const void *buf, size_t len);

#endif
