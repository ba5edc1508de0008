/*  verdict: a pushed gradient's score against a reference gradient, and
    the client's mean score that turns it into a weight (verdict.h).  */
#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/*  A weight below this is not worth an update: the push is ignored.  */
#define S_MIN_WEIGHT 0.01
/*  Once a record knows its own noise (its standard error e, at least
    S_NOISE_LEAST of guard.trust), its pushes count in full down to a
    mean of −S_FULL_SE·e and not at all from −S_NONE_SE·e.  */
#define S_NOISE_LEAST 0.25
#define S_FULL_SE 2
#define S_NONE_SE 4
/*  Standard errors above zero a mean must once reach to earn those marks.  */
#define S_EARN_SE 3

void
fasgd_verdict_params_default (fasgd_verdict_params_t *p)
{
    p->factor = 10;
    p->clip = 0;
    p->cost = 0.01;
    p->trust = 0.01;
    p->keep = 1 - 1.0 / 256;
    p->prior = 8;
    p->refuse = 4;
    p->stale = 16;
    p->span = 4;
    p->probation = 16;
}

double
fasgd_verdict_anchor (const fasgd_verdict_params_t *p, double ref_norm, double median)
{
    double lo = ref_norm / 2, hi = ref_norm * p->span;
    if (!(median > lo))
        return lo;
    return median < hi ? median : hi;
}

double
fasgd_verdict_mean (const fasgd_verdict_params_t *p, const fasgd_verdict_record_t *rec)
{
    return (rec->sum - p->prior * p->trust / 2) / (rec->count + p->prior);
}

int
fasgd_verdict_on_probation (const fasgd_verdict_params_t *p, const fasgd_verdict_record_t *rec)
{
    return !(rec->pushes > p->probation);
}

double
fasgd_verdict_noise (const fasgd_verdict_params_t *p, const fasgd_verdict_record_t *rec)
{
    /*  The standard error of a mean weighted keep^i: the spread of the
        cosines times √(Σ keep^2i) / Σ keep^i. The cosines', not the
        scores': a score grows with a push's size beyond an honest
        one's, which would widen the margin; a cosine's spread is that
        of the reference's noise along the push, which no client can
        raise much above an honest one's without knowing the
        reference. Before probation is over the spread of so few is
        not known.  */
    if (fasgd_verdict_on_probation (p, rec) || !(rec->count > 0))
        return 0;
    double mean = rec->cossum / rec->count, var = rec->cossq / rec->count - mean * mean;
    double se = var > 0 ? sqrt (var * rec->count2) / rec->count : 0;
    return se > p->trust * S_NOISE_LEAST ? se : p->trust * S_NOISE_LEAST;
}

void
fasgd_verdict_judge (const fasgd_verdict_params_t *p, fasgd_verdict_record_t *rec, double dot, double norm,
                     double ref_norm, double anchor, uint64_t tau, fasgd_verdict_t *v, char *why, size_t whylen)
{
    v->weight = 1;
    v->cosine = norm > 0 ? dot / (ref_norm * norm) : 0;
    v->bound = p->factor * anchor;
    if (norm > v->bound) {
        if (!p->clip) {
            v->kind = FASGD_VERDICT_REFUSE;
            v->score = v->mean = NAN;
            if (whylen)
                snprintf (why, whylen, "gradient norm %.4g is above %.4g (limits.grad_norm_factor times "
                          "the norm of an honest gradient, from the server's reference)", norm, v->bound);
            return;
        }
        /*  Clipped: what is judged is what would be applied.  */
        v->weight = v->bound / norm;
        dot *= v->weight;
        norm = v->bound;
    }
    /*  A push no larger than an honest one is scored by its direction
        alone (its cosine): its size says nothing of it, and a cost of
        κ·ρ² or a length in units of a took most of what late honest
        pushes, a quarter of the reference's norm, predict (a mean of
        0.003 of a score, against 0.02 of a cosine).  */
    double rho = norm / anchor;
    double unit = rho < 1 ? norm : anchor;
    v->score = unit > 0 ? dot / (ref_norm * unit) : 0;
    if (rho > 1)
        v->score -= p->cost * (rho * rho - 1);
    double floor = -p->refuse * (1 + (double) tau / p->stale);
    v->mean = NAN;
    if (v->score < floor && rec->earned) {
        /*  A client in good standing is not refused for one push (an
            honest one's loss spike, late in a run, once scored −5.27
            against a floor of −5.25): the push is left out, neither
            applied nor counted in its record, as a refused one is.  */
        v->kind = FASGD_VERDICT_IGNORE;
        v->weight = 0;
        v->margin = NAN;
        return;
    }
    if (v->score < floor) {
        v->kind = FASGD_VERDICT_REFUSE;
        if (whylen)
            snprintf (why, whylen, "the gradient predicts ascent: score %.3g (cosine %.3f with the server's "
                      "reference, norm %.3g times an honest one) is below %.3g", v->score, v->cosine, rho,
                      floor);
        return;
    }
    rec->sum = rec->sum * p->keep + v->score;
    rec->cossum = rec->cossum * p->keep + v->cosine;
    rec->cossq = rec->cossq * p->keep + v->cosine * v->cosine;
    rec->count = rec->count * p->keep + 1;
    rec->count2 = rec->count2 * p->keep * p->keep + 1;
    rec->pushes++;
    v->mean = fasgd_verdict_mean (p, rec);
    /*  The marks its own noise sets only once the client has earned
        them: its mean has once reached trust and three standard errors
        (an honest client's does early in training). Before, the marks
        of trust: a new id, or a client whose pushes never predicted
        descent (a thin attacker's, half negated, average to nothing),
        has to earn its weight as before; with trust alone, a thin
        attacker's mean over its first pushes reached it by chance.  */
    double e = fasgd_verdict_noise (p, rec), none;
    if (e > 0 && !rec->earned && v->mean >= p->trust && v->mean >= S_EARN_SE * e)
        rec->earned = 1;
    if (e > 0 && rec->earned) {
        v->margin = -S_FULL_SE * e;
        none = -S_NONE_SE * e;
    } else {
        v->margin = p->trust;
        none = -p->trust / 2;
    }
    double w = (v->mean - none) / (v->margin - none);
    if (w > 1)
        w = 1;
    if (!(w >= S_MIN_WEIGHT) || fasgd_verdict_on_probation (p, rec)) {
        v->kind = FASGD_VERDICT_IGNORE;
        v->weight = 0;
        return;
    }
    v->weight *= w;
    v->kind = FASGD_VERDICT_APPLY;
}

double
fasgd_verdict_vote (double typical, int first, double x)
{
    return first ? x : typical + FASGD_VERDICT_VOTE_WEIGHT * (x - typical);
}

int
fasgd_verdict_median_due (size_t n, int *since)
{
    if (n > FASGD_VERDICT_MEDIAN_EVERY && ++*since < FASGD_VERDICT_MEDIAN_EVERY)
        return 0;
    *since = 0;
    return 1;
}

static int
s_cmp_weighted (const void *a, const void *b)
{
    double x = ((const fasgd_verdict_weighted_t *) a)->value, y = ((const fasgd_verdict_weighted_t *) b)->value;
    return x < y ? -1 : x > y;
}

/*  The middle one of three values.  */
static double
s_median3 (double x, double y, double z)
{
    if (x > y) {
        double t = x;
        x = y;
        y = t;
    }
    return z < x ? x : z > y ? y : z;
}

/*  Orders v [lo..hi) around p: the values below it, then those equal to
    it, then those above; the first two end at *a and *b.  */
static void
s_partition (fasgd_verdict_weighted_t *v, size_t lo, size_t hi, double p, size_t *a, size_t *b)
{
    size_t lt = lo, i = lo, gt = hi;
    while (i < gt) {
        fasgd_verdict_weighted_t t = v [i];
        if (t.value < p) {
            v [i++] = v [lt];
            v [lt++] = t;
        }
        else if (t.value > p) {
            v [i] = v [--gt];
            v [gt] = t;
        }
        else
            i++;
    }
    *a = lt;
    *b = gt;
}

/*  A selection rather than a sort: the guard takes the median of one
    vote a client every FASGD_VERDICT_MEDIAN_EVERY pushes, and with
    10,000 clients a sort of the votes cost twice what the rest of the
    guard costs a push (bench/bench-guard-votes). Each pass partitions
    the part of v that holds the median around the middle of three of
    its values and keeps the side where the weight reaches half; after
    2·log2(n) + 8 passes (values a peer chose could make every pivot a
    bad one) the rest is sorted, so it is never worse than a sort.  */
double
fasgd_verdict_weighted_lower_median (fasgd_verdict_weighted_t *v, size_t n)
{
    if (n == 0)
        return 0;
    int equal = 1;
    double whole = 0;
    for (size_t i = 0; i < n; i++) {
        whole += v [i].weight;
        equal &= v [i].weight == v [0].weight;
    }
    /*  Equal weights: the value of rank k, counted, so that it is the
        plain lower median exactly; else the first value at which the
        weight up to it, acc and what is below it in v [lo..hi), reaches
        target.  */
    size_t k = (n - 1) / 2, lo = 0, hi = n;
    double target = whole / 2 - whole * 1e-12, acc = 0;
    int passes = 8;
    for (size_t m = n; m > 1; m >>= 1)
        passes += 2;
    while (hi - lo > 16 && passes-- > 0) {
        double p = s_median3 (v [lo].value, v [lo + (hi - lo) / 2].value, v [hi - 1].value);
        size_t a, b;
        s_partition (v, lo, hi, p, &a, &b);
        if (equal) {
            if (k < a)
                hi = a;
            else if (k < b)
                return p;
            else
                lo = b;
            continue;
        }
        double below = 0, at = 0;
        for (size_t i = lo; i < a; i++)
            below += v [i].weight;
        for (size_t i = a; i < b; i++)
            at += v [i].weight;
        if (acc + below >= target)
            hi = a;
        else if (acc + below + at >= target || b == hi)     /* b == hi: only by rounding */
            return p;
        else {
            acc += below + at;
            lo = b;
        }
    }
    qsort (v + lo, hi - lo, sizeof *v, s_cmp_weighted);
    if (equal)
        return v [k].value;
    size_t i = lo;
    for (; i + 1 < hi; i++) {
        acc += v [i].weight;
        if (acc >= target)
            break;
    }
    return v [i].value;
}
