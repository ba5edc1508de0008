/*  verdict: what one pushed gradient g is worth, judged against a
    reference gradient r that the judge computed itself on data no client
    trains on (docs/ALGORITHMS.md, "The guard"). No sockets, no state but
    the caller's: the server's guard calls it, and its tests (with the
    simulator's staleness clock, the typical norms below).

    A push's score is the descent it predicts, with a (the anchor: the
    norm an honest push has, the reference's or what honest clients
    push, within bounds the reference sets):

        s = ⟨r, g⟩ / (‖r‖·min(‖g‖, a)) − κ·max(0, (‖g‖/a)² − 1)

    a push no larger than an honest one is judged by its direction
    alone (its cosine with r); a larger one by its length along r in
    units of a, less a cost of its size beyond an honest one's (Zeno++'s
    magnitude term). One push of a minibatch says little: late in
    training nearly half of honest pushes point away from r, and half of
    a sign flipper's point towards it. What a client pushes on average
    says much (on MNIST, early, honest clients' mean score stays above
    0.01, a sign flipper's below −0.07). So each client has a record:
    the mean of its scores over about its last 1/(1 − keep) pushes,
    counted from `prior` pushes of score −trust/2, and the standard
    error e of that mean, from the spread of its cosines (at least
    trust/4). Every push, its own score counted in first, is applied
    with a weight held to [0, 1], linear in the mean between 0 at −4e
    and 1 at −2e once earned (the mean past probation has reached trust
    and 3e once), else between 0 at −trust/2 and 1 at trust: in full unless the client's pushes predict ascent beyond
    the noise of its record, not at all (0: acknowledged, not applied)
    once they clearly do. Late in training one reference batch is mostly
    noise (its two halves' gradients have a cosine of 0.06 to 0.09, and
    the noise they disagree on is nearly all of a push's cosine's spread
    of 0.12), and an honest push's mean cosine is 0.001 to 0.03: a mean
    over 64 pushes asked to reach trust (0.01) left a third of a lone
    honest client's pushes out or in part. A push that predicts much
    ascent takes its own weight away, and a new client (a new id: Sybil
    ids) starts with none.
    Its first `probation` pushes are judged and counted but not applied
    at all: one push's score is noisy (the more so the larger the push),
    and without it ids replaced every 16 pushes, each spending the weight
    one lucky push had given it (a negation at ten times an honest norm
    whose score happened to be positive), took a run from 0.04 to 0.1–0.77
    final error. A push whose score alone is below
    −refuse·(1 + τ/stale) is refused outright (422), a stale one being
    allowed further; from a client in good standing (its record earned)
    it is left out instead (ignored, its record untouched): an honest
    client's loss spike late in a run can score that low.  */
#ifndef FASGD_VERDICT_H_INCLUDED
#define FASGD_VERDICT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double factor;          /* ‖g‖ above factor·a is refused (or clipped) */
    int clip;               /* clip to factor·a instead of refusing */
    double cost;            /* κ */
    double trust;           /* a client's pushes count in full at a mean score of trust, not at all at −trust/2 */
    double keep;            /* what a client's record keeps of its past at each push */
    double prior;           /* pushes of score −trust/2 a record starts with */
    double refuse;          /* a score below −refuse·(1 + τ/stale) is refused */
    double stale;           /* τ at which that threshold doubles */
    double span;            /* the anchor stays within [‖r‖/2, span·‖r‖] */
    double probation;       /* a client's first pushes, judged and counted but not applied */
} fasgd_verdict_params_t;

/*  A client's record: zeroed, a client with no pushes.  */
typedef struct {
    double sum, count;      /* its scores and pushes, each decayed by keep */
    double cossum, cossq;   /* its cosines with the reference and their squares, decayed by keep */
    double count2;          /* its pushes decayed by keep², for the mean's standard error */
    double pushes;          /* its pushes judged, not decayed */
    double earned;          /* 1 once its mean reached trust past probation: the marks of its noise apply */
} fasgd_verdict_record_t;

typedef enum {
    FASGD_VERDICT_APPLY,            /* apply weight·g (weight in (0, 1]) */
    FASGD_VERDICT_IGNORE,           /* weight 0: acknowledged, not applied */
    FASGD_VERDICT_REFUSE            /* refused (422): why says why */
} fasgd_verdict_kind_t;

typedef struct {
    fasgd_verdict_kind_t kind;
    double weight;                  /* applied: weight·g; clipping included */
    double score;                   /* s, after clipping */
    double mean;                    /* the client's mean score, s counted in */
    double margin;                  /* the mean score at which it counts in full (fasgd_verdict_margin) */
    double cosine;                  /* ⟨r, g⟩ / (‖r‖·‖g‖) */
    double bound;                   /* factor·a */
} fasgd_verdict_t;

/*  factor 10, refuse, κ 0.01, trust 0.01, keep 1 − 1/256, prior 8,
    refuse 4, stale 16, span 4, probation 16.  */
void fasgd_verdict_params_default (fasgd_verdict_params_t *p);

/*  The anchor: what honest clients push (median, their typical norm; 0
    when unknown) held within [ref_norm/2, span·ref_norm]. Peers,
    however many ids they hold, move the bound within that; and late in training, when minibatch gradients are a tenth of
    the held-out one's, the bound follows them down, so that a gradient
    scaled up a hundredfold does not pass.  */
double fasgd_verdict_anchor (const fasgd_verdict_params_t *p, double ref_norm, double median);

/*  What an honest push's norm is, from the clients' typical norms:
    each client's is a moving average of the norms it pushed, a push
    weighing FASGD_VERDICT_VOTE_WEIGHT (its first push's norm to start),
    and the lower median of them all is taken again at every push while
    at most FASGD_VERDICT_MEDIAN_EVERY vote, else every that many
    pushes. The guard's median (its votes; with CURVE one a key) and the
    simulator's ν (staleness: movement) both.  */
#define FASGD_VERDICT_VOTE_WEIGHT 0.0625
#define FASGD_VERDICT_MEDIAN_EVERY 64
/*  After a push, whether the median is due again, n voting: at every
    push while n ≤ FASGD_VERDICT_MEDIAN_EVERY, else once that many
    pushes have been counted in *since (set back to 0 when due).  */
int fasgd_verdict_median_due (size_t n, int *since);
/*  A typical norm after a push of norm x; first: the client's first.  */
double fasgd_verdict_vote (double typical, int first, double x);
/*  A vote and its weight (> 0).  */
typedef struct {
    double value, weight;
} fasgd_verdict_weighted_t;
/*  The lower weighted median of v [0..n), reordering v: the smallest
    value at which the weight of the values up to it reaches half the
    whole (counted within 1e-12 of it). With equal weights, exactly
    the plain lower median, the value of rank (n − 1)/2 (0 the
    smallest): the guard's history of norms and the simulator's ν give
    every value weight 1. 0 when n is 0.  */
double fasgd_verdict_weighted_lower_median (fasgd_verdict_weighted_t *v, size_t n);

/*  rec's mean score (its prior counted).  */
double fasgd_verdict_mean (const fasgd_verdict_params_t *p, const fasgd_verdict_record_t *rec);

/*  1 while rec's pushes are its first p->probation: judged and counted,
    never applied.  */
int fasgd_verdict_on_probation (const fasgd_verdict_params_t *p, const fasgd_verdict_record_t *rec);

/*  The standard error of rec's mean score (its own scores' spread),
    at least trust/4; 0 until probation is over.  */
double fasgd_verdict_noise (const fasgd_verdict_params_t *p, const fasgd_verdict_record_t *rec);

/*  Judges g of norm `norm` (finite) whose dot product with r is dot,
    against r's norm ref_norm (> 0) and the anchor; tau: g's staleness
    (from the reference's θ). Counts s in rec unless refused; the
    reason of a refusal in why (whylen bytes, may be 0).  */
void fasgd_verdict_judge (const fasgd_verdict_params_t *p, fasgd_verdict_record_t *rec, double dot,
                          double norm, double ref_norm, double anchor, uint64_t tau, fasgd_verdict_t *v,
                          char *why, size_t whylen);

#endif
