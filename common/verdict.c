/*  verdict: a pushed gradient's score against a reference gradient, and
    the client's mean score that turns it into a weight (verdict.h).  */
#include "verdict.h"

#include <math.h>
#include <stdio.h>

/*  A weight below this is not worth an update: the push is ignored.  */
#define S_MIN_WEIGHT 0.01

void
fasgd_verdict_params_default (fasgd_verdict_params_t *p)
{
    p->factor = 10;
    p->clip = 0;
    p->cost = 0.01;
    p->trust = 0.01;
    p->keep = 1 - 1.0 / 64;
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
    double rho = norm / anchor;
    v->score = dot / (ref_norm * anchor) - p->cost * rho * rho;
    double floor = -p->refuse * (1 + (double) tau / p->stale);
    v->mean = NAN;
    if (v->score < floor) {
        v->kind = FASGD_VERDICT_REFUSE;
        if (whylen)
            snprintf (why, whylen, "the gradient predicts ascent: score %.3g (cosine %.3f with the server's "
                      "reference, norm %.3g times an honest one) is below %.3g", v->score, v->cosine, rho,
                      floor);
        return;
    }
    rec->sum = rec->sum * p->keep + v->score;
    rec->count = rec->count * p->keep + 1;
    rec->pushes++;
    v->mean = fasgd_verdict_mean (p, rec);
    double w = (v->mean + p->trust / 2) / (1.5 * p->trust);
    if (w > 1)
        w = 1;
    if (!(w >= S_MIN_WEIGHT) || rec->pushes <= p->probation) {
        v->kind = FASGD_VERDICT_IGNORE;
        v->weight = 0;
        return;
    }
    v->weight *= w;
    v->kind = FASGD_VERDICT_APPLY;
}
