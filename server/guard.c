/*  guard: what a gradient must pass before the rule touches anything.

    1. Finite: one pass sums g² in double, which is finite exactly when
       every value is; its root is the gradient's L2 norm ‖g‖.
    2. Bounded: ‖g‖ above limits.grad_norm, or above limits.grad_norm_factor
       times the median norm of the last accepted gradients, is refused,
       or scaled down to that bound when limits.grad_norm_action is clip.
       Until 64 have been accepted the smallest of them stands in for the
       median: a poisoning client's first pushes, which a median of a few
       norms would let in, do the most harm (measured: ×1e3 pushes let in
       while the first medians formed took the final error from 0.05 to
       0.1–0.4). A client refused
       limits.refusals times in a row is forgotten (its next request gets
       401) and logged: one client cannot keep pushing poison.
    3. Cannot overflow: the guard keeps upper bounds on max|θ| and on the
       magnitudes in the rule's state, and from ‖g‖ (which bounds every
       |g_i|) bounds what this push can add to each (ALGORITHMS.md's exact
       update of each rule). A push whose worst case could take θ, v̄ or
       the statistics past 1e37 is refused, so nothing non-finite is ever
       written and nothing a refused push sent changes anything. The
       bounds only grow with accepted pushes; max|θ| is measured again
       every S_REMEASURE accepted pushes, so they stay close. dcasgd's
       term g²·(θ − θ_used) has no useful bound: its update goes into a
       fresh buffer that is checked before it becomes θ (dispatch.c).

    In practice (3) refuses only gradients of about 1e18 and more; (1)
    and (2) are the guards a run meets.  */
#include "internal.h"

#include "floats.h"
#include "log.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_LIMIT 1e37                    /* largest bound accepted for θ and the state */
#define S_MAX_NORM 1e18                 /* ‖g‖ beyond this: its square nears FLT_MAX */
#define S_REMEASURE 4096                /* accepted pushes between measures of max|θ| */
#define S_MEDIAN_EARLY 64               /* below this many accepted norms, the smallest stands in */
#define S_MEDIAN_EVERY 64               /* accepted pushes between medians */

void
fasgd_srv_guard_init (fasgd_server_t *self)
{
    fasgd_srv_guard_t *gd = &self->guard;
    memset (gd, 0, sizeof *gd);
    gd->theta_bound = fasgd_floats_max_abs (self->theta, self->n);
    gd->state_bound = fasgd_rule_state_max_abs (self->rule);
    const fasgd_rule_params_t *p = fasgd_rule_params (self->rule);
    /*  fasgd std: v ← βv + (1−β)/σ with σ ≥ √ε never exceeds 1/√ε.  */
    if (p->kind == FASGD_RULE_FASGD && p->statistic == FASGD_STAT_STD && 1.0 / sqrt (p->epsilon) > gd->state_bound)
        gd->state_bound = 1.0 / sqrt (p->epsilon);
}

/*  What one push of norm at most g can add to max|θ|, and the state's
    bound after it (ALGORITHMS.md, "Update rules"; α(τ) ≤ α for every
    rule).  */
static double
s_step_bound (const fasgd_server_t *self, double g, double *state)
{
    const fasgd_rule_params_t *p = fasgd_rule_params (self->rule);
    double s = self->guard.state_bound;
    *state = s;
    switch (p->kind) {
        case FASGD_RULE_FASGD:
            if (p->statistic == FASGD_STAT_STD) {
                /*  n ≤ max (n, g²), |b| ≤ max (|b|, g), v ≤ max (v, 1/√ε).  */
                *state = fmax (s, fmax (g * g, g));
                return p->lr * s * g;
            }
            /*  m ≤ max (m, g); the step divides by m + floor ≥ floor.  */
            *state = fmax (s, g);
            return p->lr * g / p->abs_floor;
        case FASGD_RULE_GAPAWARE:
            /*  Δ = α·g/G with G ≥ 1; C ≤ max (C, |Δ|).  */
            *state = fmax (s, p->lr * g);
            return p->lr * g;
        case FASGD_RULE_SOFTSYNC:
            /*  The buffer sums up to c steps of α·g, applied divided by c.  */
            *state = s + p->lr * g;
            return p->lr * g;
        default:
            /*  asgd, sasgd (α(τ) ≤ α), and dcasgd, whose θ is checked
                after the fact (the file's comment): α·g.  */
            return p->lr * g;
    }
}

/*  The median of the window's norms, recomputed now and then.  */
static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void
s_median_update (fasgd_srv_guard_t *gd)
{
    if (gd->norm_count < S_MEDIAN_EARLY) {
        double m = gd->norms [0];
        for (int i = 1; i < gd->norm_count; i++)
            m = gd->norms [i] < m ? gd->norms [i] : m;
        gd->median = m;
        return;
    }
    double tmp [FASGD_SRV_NORM_WINDOW];
    memcpy (tmp, gd->norms, (size_t) gd->norm_count * sizeof (double));
    qsort (tmp, (size_t) gd->norm_count, sizeof (double), s_cmp);
    gd->median = tmp [gd->norm_count / 2];
}

int
fasgd_srv_guard_check (fasgd_server_t *self, fasgd_srv_client_t *c, const float **gp, int repeat,
                       double *norm_p, char *why, size_t whylen)
{
    fasgd_srv_guard_t *gd = &self->guard;
    const fasgd_server_cfg_t *cfg = &self->cfg;
    const float *g = *gp;
    /*  A repeat was judged when it came: only what it may add is.  */
    double norm = repeat ? c->last_norm : sqrt (fasgd_floats_sumsq (g, self->n));
    *norm_p = norm;
    if (repeat)
        goto overflow;
    if (!isfinite (norm)) {
        snprintf (why, whylen, "the gradient holds NaN or Inf");
        return FASGD_STATUS_NONFINITE;
    }
    /*  The bound the norm is held to: the fixed one, the median's multiple.  */
    double bound = cfg->grad_norm > 0 ? cfg->grad_norm : INFINITY;
    const char *which = "limits.grad_norm";
    /*  A median of 0 (clients pushing zeros) bounds nothing.  */
    if (cfg->grad_norm_factor > 0 && gd->median > 0 && cfg->grad_norm_factor * gd->median < bound) {
        bound = cfg->grad_norm_factor * gd->median;
        which = "limits.grad_norm_factor times the median of accepted norms";
    }
    if (norm > bound) {
        if (!cfg->grad_norm_clip) {
            snprintf (why, whylen, "gradient norm %.4g is above %.4g (%s)", norm, bound, which);
            return FASGD_STATUS_NONFINITE;
        }
        /*  Clipped into the server's own buffer: the rule sees g·bound/‖g‖.  */
        float scale = (float) (bound / norm);
        for (size_t i = 0; i < self->n; i++)
            self->grad [i] = g [i] * scale;
        *gp = self->grad;
        norm = bound;
        *norm_p = norm;
        self->st.clipped++;
        c->clipped++;
    }
overflow:;
    double state;
    double step = s_step_bound (self, norm, &state);
    if (norm > S_MAX_NORM || !(gd->theta_bound + step <= S_LIMIT) || !(state <= S_LIMIT)) {
        snprintf (why, whylen, "gradient norm %.4g could take the parameters or the rule's statistics "
                  "past %g", norm, S_LIMIT);
        return FASGD_STATUS_NONFINITE;
    }
    return 0;
}

void
fasgd_srv_guard_accepted (fasgd_server_t *self, fasgd_srv_client_t *c, double norm, int repeat)
{
    fasgd_srv_guard_t *gd = &self->guard;
    double state;
    gd->theta_bound += s_step_bound (self, norm, &state);
    gd->state_bound = state;
    if (++gd->since_measure >= S_REMEASURE && !fasgd_rule_needs_theta_used (self->rule)) {
        /*  θ_used rules keep the bound of every θ a client may still hold.  */
        gd->theta_bound = fasgd_floats_max_abs (self->theta, self->n);
        gd->since_measure = 0;
    }
    c->refused_in_row = 0;
    if (repeat)
        return;
    gd->norms [gd->norm_next] = norm;
    gd->norm_next = (gd->norm_next + 1) % FASGD_SRV_NORM_WINDOW;
    if (gd->norm_count < FASGD_SRV_NORM_WINDOW)
        gd->norm_count++;
    if (gd->norm_count <= S_MEDIAN_EARLY || ++gd->since_median >= S_MEDIAN_EVERY) {
        s_median_update (gd);
        gd->since_median = 0;
    }
}

int
fasgd_srv_guard_refused (fasgd_server_t *self, fasgd_srv_client_t *c)
{
    self->st.guarded++;
    c->refused++;
    if (self->cfg.max_refusals <= 0 || ++c->refused_in_row < (uint64_t) self->cfg.max_refusals)
        return 0;
    fasgd_log_warn ("client %u (%s) forgotten: %llu gradients in a row refused (limits.refusals)", c->id,
                    c->name, (unsigned long long) c->refused_in_row);
    self->st.forgotten++;
    fasgd_srv_client_free (self, c);
    return 1;
}

double
fasgd_srv_guard_median (const fasgd_server_t *self)
{
    return self->guard.median;
}
