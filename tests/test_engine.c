/*  The server engine's parts driven in-process, without a daemon: the
    guard's verdicts (non-finite, bounds, clipping, the median an attacker
    cannot move, forgetting after limits.refusals), the registry (ids,
    sessions, limits.clients, limits.cache_bytes, expiry, the guard's and
    the allowlist's verdicts acted on), and security (CURVE off, the
    allowlist and its reload, allow_any, the ZAP handler's decisions).  */
#include "testutil.h"

#include "codec.h"
#include "curve.h"
#include "guard.h"
#include "params.h"
#include "registry.h"
#include "rules.h"
#include "security.h"

#include <czmq.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 100                           /* values in θ and in a gradient */

/*  The server's defaults, then each "key=value" of sets (NULL-ended).  */
static void
s_cfg (fasgd_server_cfg_t *cfg, const char *const *sets)
{
    ck_assert_int_eq (fasgd_config_defaults (fasgd_server_cfg_keys, cfg, stderr), 0);
    for (int i = 0; sets && sets [i]; i++)
        ck_assert_int_eq (fasgd_config_set (fasgd_server_cfg_keys, cfg, sets [i], stderr), 0);
}

/*  θ of N values, all 0.01, with cfg's rule.  */
static fasgd_srv_params_t *
s_params (const fasgd_server_cfg_t *cfg)
{
    fasgd_rule_params_t rp;
    fasgd_rule_cfg_to_params (&cfg->rule, cfg->clients, &rp);
    char err [256];
    fasgd_rule_t *rule = fasgd_rule_new (&rp, N, err, sizeof err);
    ck_assert_ptr_nonnull (rule);
    fasgd_rule_gradients_checked (rule);
    fasgd_srv_params_t *p = fasgd_srv_params_new (&rule, N, N, 0, FASGD_WIRE_F32, 0);
    ck_assert_ptr_nonnull (p);
    for (size_t i = 0; i < N; i++)
        p->theta [i] = 0.01f;
    return p;
}

/*  A gradient of norm `norm`: every value norm/√N.  */
static void
s_grad (float g [N], double norm)
{
    for (int i = 0; i < N; i++)
        g [i] = (float) (norm / sqrt (N));
}

/*  What the server does with a push: judge it; apply it (only the
    guard's bookkeeping here) or refuse it. Returns the guard's status; a
    refusal's verdict in *verdict.  */
static int
s_push (fasgd_srv_guard_t *guard, fasgd_srv_client_t *c, double norm, fasgd_srv_guard_verdict_t *verdict)
{
    float g [N];
    s_grad (g, norm);
    const float *gp = g;
    double applied, weight;
    char why [256];
    int status = fasgd_srv_guard_check (guard, c, &gp, 0, 0, &weight, &applied, why, sizeof why);
    *verdict = FASGD_SRV_GUARD_KEEP;
    if (status == 0)
        fasgd_srv_guard_accepted (guard, c, gp, 0, applied, 0);
    else
        *verdict = fasgd_srv_guard_refused (guard, c);
    return status;
}

/*  A guard over θ of N values and a registry that tells it of clients
    gone, for cfg.  */
typedef struct {
    fasgd_server_cfg_t cfg;
    fasgd_srv_stats_t st;
    fasgd_srv_params_t *params;
    float scratch [N];
    fasgd_srv_guard_t *guard;
    fasgd_srv_registry_t *reg;
} s_engine_t;

static void
s_engine (s_engine_t *e, const char *const *sets, int cache_last)
{
    memset (e, 0, sizeof *e);
    s_cfg (&e->cfg, sets);
    e->params = s_params (&e->cfg);
    e->guard = fasgd_srv_guard_new (&e->cfg, e->params, e->scratch, &e->st);
    ck_assert_ptr_nonnull (e->guard);
    e->reg = fasgd_srv_registry_new (&e->cfg, N, cache_last, 0, e->guard, &e->st);
    ck_assert_ptr_nonnull (e->reg);
}

static void
s_engine_end (s_engine_t *e)
{
    fasgd_srv_registry_destroy (&e->reg);
    fasgd_srv_guard_destroy (&e->guard);
    fasgd_srv_params_destroy (&e->params);
    ck_assert_ptr_null (e->reg);
    ck_assert_ptr_null (e->guard);
}

static fasgd_srv_client_t *
s_join (s_engine_t *e, const char *name)
{
    char why [256] = "";
    fasgd_srv_client_t *c = fasgd_srv_registry_join (e->reg, name, strlen (name), NULL, NULL, 0, why, sizeof why);
    ck_assert_msg (c != NULL, "join refused: %s", why);
    return c;
}

/* ------------------------------------------------------------------ */
/*  The guard                                                           */

START_TEST (test_guard_nonfinite_bound_and_forgetting)
{
    const char *sets [] = { "limits.grad_norm=10", "limits.grad_norm_factor=0", "limits.refusals=3", NULL };
    s_engine_t e;
    s_engine (&e, sets, 0);
    fasgd_srv_client_t *c = s_join (&e, "c");
    float g [N];
    s_grad (g, 1);
    g [5] = NAN;
    const float *gp = g;
    double norm, weight;
    char why [256];
    ck_assert_int_eq (fasgd_srv_guard_check (e.guard, c, &gp, 0, 0, &weight, &norm, why, sizeof why), FASGD_STATUS_NONFINITE);
    ck_assert_ptr_nonnull (strstr (why, "NaN or Inf"));
    fasgd_srv_guard_verdict_t v;
    /*  Just under the bound passes, just over it does not.  */
    ck_assert_int_eq (s_push (e.guard, c, 9.99, &v), 0);
    ck_assert_int_eq (s_push (e.guard, c, 10.01, &v), FASGD_STATUS_NONFINITE);
    ck_assert_int_eq (v, FASGD_SRV_GUARD_KEEP);
    ck_assert_int_eq (s_push (e.guard, c, 20, &v), FASGD_STATUS_NONFINITE);
    ck_assert_int_eq (v, FASGD_SRV_GUARD_KEEP);
    /*  An accepted push starts the count again.  */
    ck_assert_int_eq (s_push (e.guard, c, 5, &v), 0);
    ck_assert_int_eq (s_push (e.guard, c, 20, &v), FASGD_STATUS_NONFINITE);
    ck_assert_int_eq (s_push (e.guard, c, 20, &v), FASGD_STATUS_NONFINITE);
    ck_assert_int_eq (v, FASGD_SRV_GUARD_KEEP);
    ck_assert_int_eq (s_push (e.guard, c, 20, &v), FASGD_STATUS_NONFINITE);
    /*  Three in a row: the verdict is to forget it, and only the
        registry frees it.  */
    ck_assert_int_eq (v, FASGD_SRV_GUARD_FORGET);
    ck_assert_ptr_eq (fasgd_srv_registry_lookup (e.reg, c->id), c);
    ck_assert_uint_eq (e.st.guarded, 5);
    ck_assert_uint_eq (e.st.forgotten, 1);
    uint32_t id = c->id;
    fasgd_srv_registry_free (e.reg, c);
    ck_assert_ptr_null (fasgd_srv_registry_lookup (e.reg, id));
    ck_assert_uint_eq (fasgd_srv_registry_live (e.reg), 0);
    s_engine_end (&e);
}
END_TEST

START_TEST (test_guard_clip_and_overflow)
{
    const char *sets [] = { "limits.grad_norm=1", "limits.grad_norm_action=clip", "limits.grad_norm_factor=0", NULL };
    s_engine_t e;
    s_engine (&e, sets, 0);
    fasgd_srv_client_t *c = s_join (&e, "c");
    float g [N];
    s_grad (g, 4);
    const float *gp = g;
    double norm, weight;
    char why [256];
    ck_assert_int_eq (fasgd_srv_guard_check (e.guard, c, &gp, 0, 0, &weight, &norm, why, sizeof why), 0);
    /*  The rule sees a copy scaled to the bound; the sender's buffer is
        untouched.  */
    ck_assert_ptr_eq (gp, e.scratch);
    ck_assert_double_eq_tol (norm, 1.0, 1e-9);
    ck_assert_float_eq_tol (e.scratch [0], (float) (1.0 / sqrt (N)), 1e-6f);
    ck_assert_float_eq_tol (g [0], (float) (4.0 / sqrt (N)), 1e-6f);
    ck_assert_uint_eq (e.st.clipped, 1);
    ck_assert_uint_eq (c->clipped, 1);
    s_engine_end (&e);

    /*  No bound on the norm: what a push could add to θ still has one.  */
    const char *open [] = { "limits.grad_norm=0", "limits.grad_norm_factor=0", NULL };
    s_engine (&e, open, 0);
    c = s_join (&e, "c");
    s_grad (g, 1e19);
    gp = g;
    ck_assert_int_eq (fasgd_srv_guard_check (e.guard, c, &gp, 0, 0, &weight, &norm, why, sizeof why), FASGD_STATUS_NONFINITE);
    ck_assert_ptr_nonnull (strstr (why, "could take the parameters"));
    s_grad (g, 1e3);
    gp = g;
    ck_assert_int_eq (fasgd_srv_guard_check (e.guard, c, &gp, 0, 0, &weight, &norm, why, sizeof why), 0);
    s_engine_end (&e);
}
END_TEST

/*  Five honest clients push norms of 1 to 2; an attacker that knows the
    median pushes just under the bound every time, hoping to raise it,
    then tiny norms, hoping to lower it below the honest ones. Its vote is
    one of seven: the bound stays near ten times the honest norms, and no
    honest push is ever refused.  */
START_TEST (test_guard_median_resists_one_client)
{
    const char *sets [] = { "limits.grad_norm_factor=10", "limits.grad_norm_action=refuse", "limits.refusals=0", NULL };
    s_engine_t e;
    s_engine (&e, sets, 0);
    fasgd_srv_client_t *honest [5];
    for (int i = 0; i < 5; i++)
        honest [i] = s_join (&e, "honest");
    fasgd_srv_client_t *bad = s_join (&e, "attacker");
    fasgd_srv_guard_verdict_t v;
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 5; i++)
            ck_assert_int_eq (s_push (e.guard, honest [i], 1.0 + 0.2 * i + 0.001 * (round % 7), &v), 0);
        double median = fasgd_srv_guard_median (e.guard);
        ck_assert_msg (median >= 1.0 && median <= 1.8, "round %d: the median moved to %g", round, median);
        /*  Just under the bound: accepted, and as high as its vote goes.  */
        ck_assert_int_eq (s_push (e.guard, bad, round < 100 ? 10 * median * 0.999 : 1e-6, &v), 0);
    }
    double median = fasgd_srv_guard_median (e.guard);
    ck_assert_msg (median >= 1.0 && median <= 1.8, "the median moved to %g", median);
    ck_assert_int_eq (s_push (e.guard, honest [0], 9 * median, &v), 0);
    ck_assert_int_eq (s_push (e.guard, bad, 11 * median, &v), FASGD_STATUS_NONFINITE);
    /*  Honest clients leave; their votes go with them (the registry tells
        the guard), and the median is taken from those that remain.  */
    for (int i = 0; i < 4; i++)
        fasgd_srv_registry_free (e.reg, honest [i]);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq (s_push (e.guard, honest [4], 1.8, &v), 0);
    ck_assert (fasgd_srv_guard_median (e.guard) > 0);
    s_engine_end (&e);
}
END_TEST

/*  A client joined from address addr (as dispatch records it).  */
static fasgd_srv_client_t *
s_join_from (s_engine_t *e, const char *name, const char *addr)
{
    fasgd_srv_client_t *c = s_join (e, name);
    snprintf (c->addr, sizeof c->addr, "%s", addr);
    return c;
}

/*  The median's groups follow voters that come and go (the guard sorts
    them by address only when that changes): three ids of one address
    pushing tiny norms beside one honest client own the median (their
    vote, and the history's, outweigh it); two honest clients that join
    from addresses of their own take it back; when they leave it is the
    tiny one's again, and when two of the three ids leave the last one
    weighs as much as a whole address.  */
START_TEST (test_guard_median_groups_follow_churn)
{
    const char *sets [] = { "limits.grad_norm_factor=10", "limits.refusals=0", NULL };
    s_engine_t e;
    s_engine (&e, sets, 0);
    fasgd_srv_guard_verdict_t v;
    fasgd_srv_client_t *flood [3], *honest [3];
    for (int i = 0; i < 3; i++)
        flood [i] = s_join_from (&e, "flood", "10.0.0.9");
    honest [0] = s_join_from (&e, "honest", "10.0.0.1");
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 3; i++)
            s_push (e.guard, flood [i], 1e-4, &v);
        s_push (e.guard, honest [0], 1.5, &v);
    }
    ck_assert_msg (fasgd_srv_guard_median (e.guard) < 1e-3, "one honest: median %g", fasgd_srv_guard_median (e.guard));
    honest [1] = s_join_from (&e, "honest", "10.0.0.2");
    honest [2] = s_join_from (&e, "honest", "10.0.0.3");
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 3; i++)
            s_push (e.guard, flood [i], 1e-4, &v);
        for (int i = 0; i < 3; i++)
            s_push (e.guard, honest [i], 1.5, &v);
    }
    /*  An honest vote: the first client's, pulled down by the bound its
        pushes met before, is climbing back.  */
    ck_assert_msg (fasgd_srv_guard_median (e.guard) > 0.1, "with three honest: median %g",
                   fasgd_srv_guard_median (e.guard));
    fasgd_srv_registry_free (e.reg, honest [1]);
    fasgd_srv_registry_free (e.reg, honest [2]);
    for (int i = 0; i < 3; i++)
        s_push (e.guard, flood [i], 1e-4, &v);
    ck_assert_msg (fasgd_srv_guard_median (e.guard) < 1e-3, "two honest gone: median %g",
                   fasgd_srv_guard_median (e.guard));
    /*  One id left of the three: its vote, the honest client's and the
        history's weigh one each, and two of the three are tiny.  */
    fasgd_srv_registry_free (e.reg, flood [1]);
    fasgd_srv_registry_free (e.reg, flood [2]);
    s_push (e.guard, flood [0], 1e-4, &v);
    ck_assert_msg (fasgd_srv_guard_median (e.guard) < 1e-3, "one id left: median %g", fasgd_srv_guard_median (e.guard));
    s_engine_end (&e);
}
END_TEST

/*  A gradient along a fixed direction (every value 1/√N, norm 1) plus
    noise of about the same norm, scaled by scale; *x is the noise's
    state.  */
static void
s_noisy (float g [N], double scale, uint32_t *x)
{
    for (int i = 0; i < N; i++) {
        *x = *x * 1664525u + 1013904223u;
        double u = ((double) (*x >> 8) / (double) (1u << 24) - 0.5) * 3.46;    /* variance 1 */
        g [i] = (float) (scale * (1.0 + u) / sqrt (N));
    }
}

/*  A push of g from c computed at θ of timestamp j: the guard's status,
    and the weight it is applied with in *weight (-1 refused).  */
static int
s_push_g (s_engine_t *e, fasgd_srv_client_t *c, const float g [N], uint64_t j, double *weight)
{
    const float *gp = g;
    double applied;
    char why [256];
    int status = fasgd_srv_guard_check (e->guard, c, &gp, 0, e->params->T - j, weight, &applied, why, sizeof why);
    if (status == 0 && *weight > 0)
        fasgd_srv_guard_accepted (e->guard, c, gp, j, applied, 0);
    if (status != 0) {
        *weight = -1;
        fasgd_srv_guard_refused (e->guard, c);
    }
    return status;
}

/*  Without a reference of its own, a trusted client's pushes are the
    reference: a client pushing its gradient negated at ten times the
    honest norm is ignored (or refused), an honest one is applied and
    never refused; before any trusted push, and once the last one is
    more than guard.trusted_age updates from a push's θ, pushes are
    checked for size only.  */
START_TEST (test_guard_trusted_reference)
{
    const char *sets [] = { "limits.refusals=0", "guard.trusted=/nonexistent", "guard.trusted_age=50", NULL };
    s_engine_t e;
    s_engine (&e, sets, 0);
    ck_assert_int_eq (fasgd_srv_guard_reference (e.guard, NULL, NULL), 0);
    ck_assert_str_eq (fasgd_srv_guard_direction (e.guard), "trusted");
    fasgd_srv_client_t *t = s_join (&e, "trusted"), *h = s_join (&e, "honest"), *a = s_join (&e, "attacker");
    t->trusted = 1;
    uint32_t x = 7;
    float g [N];
    double w;
    /*  No trusted push yet: the negation lands (size only).  */
    s_noisy (g, -9.9, &x);
    ck_assert_int_eq (s_push_g (&e, a, g, 0, &w), 0);
    ck_assert_double_eq (w, 1);
    int honest_applied = 0, hostile_applied = 0;
    for (int round = 0; round < 200; round++) {
        uint64_t T = (uint64_t) round * 3;
        fasgd_srv_params_set_T (e.params, T + 2);
        s_noisy (g, 1, &x);
        ck_assert_int_eq (s_push_g (&e, t, g, T, &w), 0);
        ck_assert_double_eq (w, 1);
        s_noisy (g, 1, &x);
        ck_assert_msg (s_push_g (&e, h, g, T + 1, &w) == 0, "round %d: the honest push was refused", round);
        honest_applied += w == 1;
        s_noisy (g, -9.9, &x);
        s_push_g (&e, a, g, T, &w);
        hostile_applied += w > 0;
    }
    /*  The honest client's pushes count in full after its probation, the
        attacker's not at all.  */
    ck_assert_int_ge (honest_applied, 200 - 16 - 5);
    ck_assert_int_eq (hostile_applied, 0);
    ck_assert_int_eq (h->refused, 0);
    ck_assert_uint_gt (e.st.references, 199);
    /*  The trusted client goes quiet: within guard.trusted_age the last
        of its pushes still judges; past it, sizes only.  */
    uint64_t last = 199 * 3;
    fasgd_srv_params_set_T (e.params, last + 50);
    s_noisy (g, -9.9, &x);
    s_push_g (&e, a, g, last + 50, &w);
    ck_assert_double_le (w, 0);
    fasgd_srv_params_set_T (e.params, last + 60);
    s_noisy (g, -9.9, &x);
    ck_assert_int_eq (s_push_g (&e, a, g, last + 60, &w), 0);
    ck_assert_double_eq (w, 1);
    s_engine_end (&e);
}
END_TEST

/*  The rule's state as a blob, to compare bit for bit.  */
static void *
s_state (const fasgd_srv_params_t *p, size_t *len)
{
    *len = fasgd_rule_state_size (p->rule);
    void *b = malloc (*len);
    ck_assert_ptr_nonnull (b);
    fasgd_rule_state_get (p->rule, b);
    return b;
}

/*  One push of g from c (computed at θ of timestamp j), judged and
    applied in two passes on e1 (the guard's check, then the rule) and in
    one on e2 (the guard's target, the rule's stage with the guard's sums,
    the verdict, then commit or drop: dispatch.c's s_guard and s_apply).
    The verdicts, norms and weights agree; θ and the rule's state are the
    same bits on both after it; and on e2 a push not applied (refused or
    ignored) left them as they were. Returns the status.  */
static int
s_push_folded (s_engine_t *e1, s_engine_t *e2, fasgd_srv_client_t *c1, fasgd_srv_client_t *c2, const float g [N],
               uint64_t j, const float *used, double *weight)
{
    const float *gp1 = g, *gp2 = g;
    double n1, n2, w2, sums [2];
    char why [256];
    uint64_t tau = e1->params->T - j;
    int s1 = fasgd_srv_guard_check (e1->guard, c1, &gp1, 0, tau, weight, &n1, why, sizeof why);
    float theta0 [N];
    memcpy (theta0, e2->params->theta, sizeof theta0);
    size_t l0;
    void *state0 = s_state (e2->params, &l0);
    fasgd_srv_guard_target_t t;
    fasgd_srv_guard_target (e2->guard, c2, 0, tau, &t);
    ck_assert_int_eq (t.read, 1);
    int rc2 = fasgd_srv_params_stage (e2->params, g, tau, used, t.r, t.spans, t.nspans, sums);
    /*  A rule with a state of its own takes the two passes (params.c).  */
    int staged = rc2 >= 0;
    ck_assert_int_eq (staged, fasgd_rule_stage_vectors (e2->params->rule) == 0);
    ck_assert (staged || rc2 == -5);
    int s2 = fasgd_srv_guard_judge (e2->guard, c2, &t, staged ? sums : NULL, &gp2, 0, tau, &w2, &n2, why,
                                    sizeof why);
    ck_assert_int_eq (s1, s2);
    ck_assert_msg (memcmp (&n1, &n2, sizeof n1) == 0 || (isnan (n1) && isnan (n2)), "norm %.17g and %.17g", n1, n2);
    ck_assert_double_eq (*weight, w2);
    if (s1 == 0 && *weight > 0) {
        int rc1 = fasgd_srv_params_update (e1->params, gp1, tau, used);
        if (staged && gp2 == g && n2 == sqrt (sums [0]))
            rc2 = fasgd_srv_params_commit (e2->params);
        else {
            /*  Clipped: the scaled copy is applied in two passes.  */
            fasgd_srv_params_drop (e2->params);
            rc2 = fasgd_srv_params_update (e2->params, gp2, tau, used);
        }
        ck_assert_int_eq (rc1, rc2);
        fasgd_srv_guard_accepted (e1->guard, c1, gp1, j, n1, 0);
        fasgd_srv_guard_accepted (e2->guard, c2, gp2, j, n2, 0);
    }
    else {
        fasgd_srv_params_drop (e2->params);
        if (s1 != 0) {
            fasgd_srv_guard_refused (e1->guard, c1);
            fasgd_srv_guard_refused (e2->guard, c2);
        }
        ck_assert_mem_eq (e2->params->theta, theta0, sizeof theta0);
        size_t l1;
        void *state1 = s_state (e2->params, &l1);
        ck_assert_mem_eq (state1, state0, l0);
        free (state1);
    }
    ck_assert_mem_eq (e1->params->theta, e2->params->theta, N * sizeof (float));
    size_t la, lb;
    void *a = s_state (e1->params, &la), *b = s_state (e2->params, &lb);
    ck_assert_mem_eq (a, b, la);
    ck_assert_double_eq (fasgd_rule_vbar (e1->params->rule), fasgd_rule_vbar (e2->params->rule));
    free (a);
    free (b);
    free (state0);
    return s1;
}

/*  The guard's pass folded into the rule's (params.c's stage, guard.c's
    target and judge): for the rules without a state (fasgd, which has
    one, takes the two passes), honest, trusted, hostile, outsized and
    NaN pushes against trusted clients' references give the verdicts
    and, once applied, the θ and rule state of the two passes, bit for
    bit; what is refused or ignored changes nothing.  */
START_TEST (test_guard_folded_pass)
{
    const char *rules [] = { "rule.name=asgd", "rule.name=sasgd", "rule.name=dcasgd", "rule.name=fasgd" };
    for (int k = 0; k < 4; k++) {
        const char *sets [] = { "limits.refusals=0", "guard.trusted=/nonexistent", "guard.trusted_age=50",
                                rules [k], NULL };
        s_engine_t e1, e2;
        s_engine (&e1, sets, 0);
        s_engine (&e2, sets, 0);
        ck_assert_int_eq (fasgd_srv_guard_reference (e1.guard, NULL, NULL), 0);
        ck_assert_int_eq (fasgd_srv_guard_reference (e2.guard, NULL, NULL), 0);
        fasgd_srv_client_t *t1 = s_join (&e1, "trusted"), *h1 = s_join (&e1, "honest"), *a1 = s_join (&e1, "attacker");
        fasgd_srv_client_t *t2 = s_join (&e2, "trusted"), *h2 = s_join (&e2, "honest"), *a2 = s_join (&e2, "attacker");
        t1->trusted = t2->trusted = 1;
        float used [N];
        for (int i = 0; i < N; i++)
            used [i] = 0.01f + 1e-4f * (float) (i % 7);
        uint32_t x = 11;
        float g [N];
        double w;
        int applied = 0, dropped = 0;
        for (int round = 0; round < 60; round++) {
            uint64_t T = (uint64_t) round * 4;
            fasgd_srv_params_set_T (e1.params, T + 3);
            fasgd_srv_params_set_T (e2.params, T + 3);
            s_noisy (g, 1, &x);
            ck_assert_int_eq (s_push_folded (&e1, &e2, t1, t2, g, T, used, &w), 0);
            /*  Now and then an honest spike, clipped to the bound.  */
            s_noisy (g, round % 6 == 5 ? 30 : 1, &x);
            if (s_push_folded (&e1, &e2, h1, h2, g, T + 1, used, &w) == 0 && w > 0)
                applied++;
            s_noisy (g, round % 3 ? -9.9 : 40, &x);
            if (round % 5 == 4)
                g [round % N] = NAN;
            if (s_push_folded (&e1, &e2, a1, a2, g, T + 2, used, &w) != 0 || w == 0)
                dropped++;
        }
        ck_assert_int_gt (applied, 30);
        ck_assert_int_gt (dropped, 30);
        ck_assert_uint_gt (e2.st.clipped, 0);
        ck_assert_uint_gt (e2.st.nonfinite + e2.st.guarded, 0);
        s_engine_end (&e1);
        s_engine_end (&e2);
    }
}
END_TEST

/*  Without a reference and without guard.trusted, direction is
    unchecked: a client marked trusted makes no reference, and a
    negation within the bound lands.  */
START_TEST (test_guard_unchecked_without_trusted)
{
    const char *sets [] = { "limits.refusals=0", NULL };
    s_engine_t e;
    s_engine (&e, sets, 0);
    ck_assert_int_eq (fasgd_srv_guard_reference (e.guard, NULL, NULL), 0);
    ck_assert_str_eq (fasgd_srv_guard_direction (e.guard), "unchecked");
    fasgd_srv_client_t *t = s_join (&e, "trusted"), *a = s_join (&e, "attacker");
    t->trusted = 1;
    uint32_t x = 7;
    float g [N];
    double w;
    for (int round = 0; round < 50; round++) {
        s_noisy (g, 1, &x);
        ck_assert_int_eq (s_push_g (&e, t, g, 0, &w), 0);
        s_noisy (g, -5, &x);
        ck_assert_int_eq (s_push_g (&e, a, g, 0, &w), 0);
        ck_assert_double_eq (w, 1);
    }
    ck_assert_uint_eq (e.st.references, 0);
    s_engine_end (&e);
}
END_TEST

/* ------------------------------------------------------------------ */
/*  The registry                                                        */

START_TEST (test_registry_join_ids_and_sessions)
{
    const char *sets [] = { "limits.clients=2", NULL };
    s_engine_t e;
    s_engine (&e, sets, 0);
    fasgd_srv_client_t *a = s_join (&e, "a\tb\x01");
    fasgd_srv_client_t *b = s_join (&e, "bob");
    ck_assert_uint_eq (a->id, 1);
    ck_assert_uint_eq (b->id, 2);
    ck_assert_str_eq (a->name, "a?b?");          /* a peer's bytes, made printable */
    ck_assert (a->session != 0 && b->session != 0 && a->session != b->session);
    ck_assert_ptr_eq (fasgd_srv_registry_lookup (e.reg, 2), b);
    ck_assert_ptr_null (fasgd_srv_registry_lookup (e.reg, 0));
    ck_assert_ptr_null (fasgd_srv_registry_lookup (e.reg, 3));
    ck_assert_ptr_null (fasgd_srv_registry_lookup (e.reg, UINT32_MAX));
    /*  limits.clients: the third is refused with the reason.  */
    char why [256] = "";
    ck_assert_ptr_null (fasgd_srv_registry_join (e.reg, "c", 1, NULL, NULL, 0, why, sizeof why));
    ck_assert_ptr_nonnull (strstr (why, "limits.clients (2)"));
    ck_assert_uint_eq (e.st.refused, 1);
    ck_assert_uint_eq (e.st.joins, 2);
    /*  One leaves: the next gets a new id; ids are never reused.  */
    fasgd_srv_registry_free (e.reg, a);
    fasgd_srv_client_t *c = s_join (&e, "c");
    ck_assert_uint_eq (c->id, 3);
    ck_assert_ptr_null (fasgd_srv_registry_lookup (e.reg, 1));
    ck_assert_uint_eq (fasgd_srv_registry_last_id (e.reg), 3);
    ck_assert_uint_eq (fasgd_srv_registry_live (e.reg), 2);
    s_engine_end (&e);
}
END_TEST

START_TEST (test_registry_cache_bytes_and_expiry)
{
    /*  Two resend-last caches of N floats fit exactly, a third does not.  */
    const char *sets [] = { "limits.cache_bytes=800", "heartbeat.interval_ms=10", "heartbeat.expiry_ms=20", NULL };
    s_engine_t e;
    s_engine (&e, sets, 1);
    fasgd_srv_client_t *a = s_join (&e, "a"), *b = s_join (&e, "b");
    ck_assert_int_eq (fasgd_srv_registry_cache (e.reg, a), 0);
    ck_assert_ptr_nonnull (a->last);
    ck_assert_int_eq (fasgd_srv_registry_cache (e.reg, b), 0);
    ck_assert_int_eq (fasgd_srv_registry_cache (e.reg, b), 0);      /* has one: counted once */
    char why [256] = "";
    ck_assert_ptr_null (fasgd_srv_registry_join (e.reg, "c", 1, NULL, NULL, 0, why, sizeof why));
    ck_assert_ptr_nonnull (strstr (why, "limits.cache_bytes"));
    fasgd_srv_registry_free (e.reg, a);
    fasgd_srv_client_t *c = s_join (&e, "c");
    /*  Expiry: silent past heartbeat.expiry_ms, gone; heard from, kept.  */
    int64_t now = b->last_seen_ms;
    uint32_t b_id = b->id;
    c->last_seen_ms = now + 100;
    fasgd_srv_registry_expire (e.reg, now + 20);
    ck_assert_uint_eq (fasgd_srv_registry_live (e.reg), 2);
    fasgd_srv_registry_expire (e.reg, now + 21);
    ck_assert_ptr_null (fasgd_srv_registry_lookup (e.reg, b_id));
    ck_assert_ptr_eq (fasgd_srv_registry_lookup (e.reg, c->id), c);
    ck_assert_uint_eq (e.st.expired, 1);
    s_engine_end (&e);
}
END_TEST

/* ------------------------------------------------------------------ */
/*  Security                                                            */

/*  A folder with the server's certificate (server.key, server.key_secret)
    and clients/ with alice.key and bob.key (and their secret halves,
    which the allowlist skips).  */
typedef struct {
    char dir [64], clients [96], cert [128];
    char server_key [41], alice [41], bob [41];
} s_keys_t;

static void
s_keygen (const char *path, char key [41])
{
    char err [256];
    ck_assert_msg (fasgd_curve_keygen (path, err, sizeof err) == 0, "%s", err);
    ck_assert_msg (fasgd_curve_public_key_load (path, key, err, sizeof err) == 0, "%s", err);
}

static void
s_keys (s_keys_t *k)
{
    snprintf (k->dir, sizeof k->dir, "/tmp/fasgd-test-engine-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (k->dir));
    snprintf (k->clients, sizeof k->clients, "%s/clients", k->dir);
    ck_assert_int_eq (mkdir (k->clients, 0700), 0);
    char path [256];
    snprintf (path, sizeof path, "%s/server.key", k->dir);
    s_keygen (path, k->server_key);
    snprintf (k->cert, sizeof k->cert, "%s/server.key_secret", k->dir);
    snprintf (path, sizeof path, "%s/alice.key", k->clients);
    s_keygen (path, k->alice);
    snprintf (path, sizeof path, "%s/bob.key", k->clients);
    s_keygen (path, k->bob);
}

static void
s_keys_remove (s_keys_t *k)
{
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", k->dir);
    ck_assert_int_eq (system (cmd), 0);
}

START_TEST (test_security_off)
{
    fasgd_server_cfg_t cfg;
    fasgd_srv_stats_t st = { 0 };
    char err [512] = "";
    s_cfg (&cfg, NULL);
    fasgd_srv_security_t *sec = fasgd_srv_security_new (&cfg, &st, err, sizeof err);
    ck_assert_ptr_nonnull (sec);
    ck_assert_int_eq (fasgd_srv_security_curve (sec), 0);
    ck_assert_ptr_null (fasgd_srv_security_zap_socket (sec));
    ck_assert_ptr_null (fasgd_srv_security_allowed (sec, "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"));
    ck_assert_int_eq (fasgd_srv_security_zap (sec), -1);
    ck_assert_int_eq (fasgd_srv_security_reload (sec, err, sizeof err), 1);
    ck_assert_ptr_nonnull (strstr (err, "CURVE is off"));
    fasgd_srv_security_destroy (&sec);
    ck_assert_ptr_null (sec);
    /*  An allowlist without a certificate is a configuration error.  */
    const char *sets [] = { "security.curve.allow_any=true", NULL };
    s_cfg (&cfg, sets);
    ck_assert_ptr_null (fasgd_srv_security_new (&cfg, &st, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "allow_any needs security.curve.server_cert"));
}
END_TEST

START_TEST (test_security_allowlist_reload_and_revocation)
{
    s_keys_t k;
    s_keys (&k);
    char set_cert [256], set_clients [256];
    snprintf (set_cert, sizeof set_cert, "security.curve.server_cert=%s", k.cert);
    snprintf (set_clients, sizeof set_clients, "security.curve.clients=%s", k.clients);
    const char *sets [] = { set_cert, set_clients, NULL };
    s_engine_t e;
    s_engine (&e, sets, 0);
    char err [512] = "";
    fasgd_srv_security_t *sec = fasgd_srv_security_new (&e.cfg, &e.st, err, sizeof err);
    ck_assert_msg (sec != NULL, "%s", err);
    ck_assert_int_eq (fasgd_srv_security_curve (sec), 1);
    ck_assert_int_eq (fasgd_srv_security_has_allowlist (sec), 1);
    ck_assert_uint_eq (fasgd_srv_security_nkeys (sec), 2);
    /*  The verdicts: each allowed key by its certificate's name, the
        server's own for fasgd-ctl, nothing else.  */
    ck_assert_str_eq (fasgd_srv_security_allowed (sec, k.alice), "alice");
    ck_assert_str_eq (fasgd_srv_security_allowed (sec, k.bob), "bob");
    ck_assert_str_eq (fasgd_srv_security_allowed (sec, k.server_key), "server");
    char other [41];
    memcpy (other, k.alice, sizeof other);
    other [0] = other [0] == 'a' ? 'b' : 'a';           /* one character off */
    ck_assert_ptr_null (fasgd_srv_security_allowed (sec, other));
    ck_assert_ptr_null (fasgd_srv_security_allowed (sec, NULL));
    char why [256];
    fasgd_srv_client_t *a = fasgd_srv_registry_join (e.reg, "a", 1, k.alice, "alice", 0, why, sizeof why);
    fasgd_srv_client_t *b = fasgd_srv_registry_join (e.reg, "b", 1, k.bob, "bob", 0, why, sizeof why);
    ck_assert (a && b);
    uint32_t bob_id = b->id;
    /*  bob's certificate leaves the folder: after a reload, security's
        verdict on his key changes and the registry forgets his client.  */
    char path [256];
    snprintf (path, sizeof path, "%s/bob.key", k.clients);
    ck_assert_int_eq (unlink (path), 0);
    ck_assert_uint_eq (fasgd_srv_registry_revoke (e.reg, sec), 0);      /* not reloaded yet */
    ck_assert_int_eq (fasgd_srv_security_reload (sec, err, sizeof err), 0);
    ck_assert_uint_eq (fasgd_srv_security_nkeys (sec), 1);
    ck_assert_ptr_null (fasgd_srv_security_allowed (sec, k.bob));
    ck_assert_uint_eq (fasgd_srv_registry_revoke (e.reg, sec), 1);
    ck_assert_ptr_null (fasgd_srv_registry_lookup (e.reg, bob_id));
    ck_assert_ptr_eq (fasgd_srv_registry_lookup (e.reg, a->id), a);
    ck_assert_uint_eq (e.st.revoked, 1);
    /*  A folder that cannot be read: -1 with the reason, the old list kept.  */
    s_keys_remove (&k);
    ck_assert_int_eq (fasgd_srv_security_reload (sec, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "cannot read"));
    ck_assert_str_eq (fasgd_srv_security_allowed (sec, k.alice), "alice");
    fasgd_srv_security_destroy (&sec);
    s_engine_end (&e);
}
END_TEST

/*  Files in the allowlist that are not certificates, or not quite: each
    is skipped with one bounded line that names the file and the line,
    never quoting the file (czmq's loader printed their bytes and leaked
    what it had read of each; under --enable-sanitizers ASan would report
    a leak here). The good certificates are still allowed.  */
#define S_LIT(x) x, sizeof x - 1          /* a literal and its length, NULs and all */

START_TEST (test_security_malformed_certificates)
{
    s_keys_t k;
    s_keys (&k);
    static const struct { const char *name, *text; size_t len; } bad [] = {
        { "binary.key", S_LIT ("\x7f" "ELF\x02\x01\x01\x00\x00\x00\x1b[31mEVIL-ESC\n") },
        { "nul.key", S_LIT ("metadata\n    name = \"EVIL-NUL\0\"\ncurve\n    public-key = \"x\"\n") },
        { "short.key", S_LIT ("curve\n    public-key = \"EVIL-SHORT\"\n") },
        { "unquoted.key", S_LIT ("curve\n    public-key = \"E6Eqzap*NUd+kn?T9ep{[pFH>)t]IqnWc%Ees7c$\n") },
        { "nokey.key", S_LIT ("metadata\n    name = \"EVIL-NOKEY\"\n") },
        { "section.key", S_LIT ("curve EVIL-SECTION\n") },
        { "ansi.key", S_LIT ("metadata\n    name = \"\x1b]0;EVIL-TITLE\x07\"\n") },
        { "empty.key", S_LIT ("") },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        char path [256];
        snprintf (path, sizeof path, "%s/%s", k.clients, bad [i].name);
        fasgd_test_write_file (path, bad [i].text, bad [i].len);
    }
    char set_cert [256], set_clients [256], logpath [128];
    snprintf (set_cert, sizeof set_cert, "security.curve.server_cert=%s", k.cert);
    snprintf (set_clients, sizeof set_clients, "security.curve.clients=%s", k.clients);
    snprintf (logpath, sizeof logpath, "%s/log", k.dir);
    const char *sets [] = { set_cert, set_clients, NULL };
    s_engine_t e;
    s_engine (&e, sets, 0);
    /*  The log of the load and of a reload, read back (standard output
        too, where czmq's own messages go).  */
    fflush (stdout);
    fflush (stderr);
    int saved_out = dup (1), saved_err = dup (2);
    FILE *log = fopen (logpath, "w");
    ck_assert_ptr_nonnull (log);
    dup2 (fileno (log), 1);
    dup2 (fileno (log), 2);
    char err [512] = "";
    fasgd_srv_security_t *sec = fasgd_srv_security_new (&e.cfg, &e.st, err, sizeof err);
    int reloaded = sec ? fasgd_srv_security_reload (sec, err, sizeof err) : -1;
    fflush (stdout);
    fflush (stderr);
    dup2 (saved_out, 1);
    dup2 (saved_err, 2);
    close (saved_out);
    close (saved_err);
    fclose (log);
    ck_assert_msg (sec != NULL, "%s", err);
    ck_assert_int_eq (reloaded, 0);
    ck_assert_uint_eq (fasgd_srv_security_nkeys (sec), 2);
    ck_assert_str_eq (fasgd_srv_security_allowed (sec, k.alice), "alice");
    ck_assert_str_eq (fasgd_srv_security_allowed (sec, k.bob), "bob");
    FILE *in = fopen (logpath, "r");
    ck_assert_ptr_nonnull (in);
    static char text [65536];
    size_t len = fread (text, 1, sizeof text - 1, in);
    fclose (in);
    text [len] = 0;
    for (size_t i = 0; i < len; i++)
        ck_assert_msg (text [i] == '\n' || (text [i] >= 32 && text [i] < 127), "byte 0x%02x in the log:\n%s",
                       (unsigned char) text [i], text);
    ck_assert_msg (!strstr (text, "EVIL"), "the log quotes a file:\n%s", text);
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        int lines = 0;
        for (const char *p = text; (p = strstr (p, bad [i].name)); p++)
            lines++;
        ck_assert_msg (lines == 2, "%s named %d times (once a load expected):\n%s", bad [i].name, lines, text);
    }
    ck_assert_ptr_nonnull (strstr (text, "nokey.key is not a certificate (no curve public-key); skipped"));
    ck_assert_ptr_nonnull (strstr (text, "short.key is not a certificate (line 2: public-key is not 40 Z85"));
    fasgd_srv_security_destroy (&sec);
    s_engine_end (&e);
    s_keys_remove (&k);
}
END_TEST

START_TEST (test_security_allow_any)
{
    s_keys_t k;
    s_keys (&k);
    char set_cert [256];
    snprintf (set_cert, sizeof set_cert, "security.curve.server_cert=%s", k.cert);
    const char *sets [] = { set_cert, "security.curve.allow_any=true", NULL };
    fasgd_server_cfg_t cfg;
    fasgd_srv_stats_t st = { 0 };
    s_cfg (&cfg, sets);
    char err [512] = "";
    fasgd_srv_security_t *sec = fasgd_srv_security_new (&cfg, &st, err, sizeof err);
    ck_assert_msg (sec != NULL, "%s", err);
    ck_assert_int_eq (fasgd_srv_security_has_allowlist (sec), 0);
    ck_assert_str_eq (fasgd_srv_security_allowed (sec, k.alice), "any");
    ck_assert_int_eq (fasgd_srv_security_reload (sec, err, sizeof err), 1);
    ck_assert_ptr_nonnull (strstr (err, "allow_any"));
    fasgd_srv_security_destroy (&sec);
    s_keys_remove (&k);
}
END_TEST

/*  Asks the ZAP handler as libzmq would (RFC 27) about a connection with
    mechanism and 32-byte key (NULL: no credentials); returns its status
    code, the user id in user.  */
static int
s_zap_ask (zsock_t *req, fasgd_srv_security_t *sec, const char *mechanism, const uint8_t *key, char user [64])
{
    zmsg_t *m = zmsg_new ();
    zmsg_addstr (m, "1.0");
    zmsg_addstr (m, "7");
    zmsg_addstr (m, "fasgd");
    zmsg_addstr (m, "127.0.0.1");
    zmsg_addstr (m, "");
    zmsg_addstr (m, mechanism);
    if (key)
        zmsg_addmem (m, key, 32);
    ck_assert_int_eq (zmsg_send (&m, req), 0);
    int served = -1;
    for (int i = 0; i < 200 && served != 0; i++) {
        served = fasgd_srv_security_zap (sec);
        if (served != 0)
            zclock_sleep (5);
    }
    ck_assert_int_eq (served, 0);
    zmsg_t *r = zmsg_recv (req);
    ck_assert_ptr_nonnull (r);
    ck_assert_uint_eq (zmsg_size (r), 6);
    char *version = zmsg_popstr (r), *id = zmsg_popstr (r), *code = zmsg_popstr (r), *text = zmsg_popstr (r);
    char *uid = zmsg_popstr (r);
    ck_assert_str_eq (version, "1.0");
    ck_assert_str_eq (id, "7");
    snprintf (user, 64, "%s", uid);
    int status = atoi (code);
    zstr_free (&version);
    zstr_free (&id);
    zstr_free (&code);
    zstr_free (&text);
    zstr_free (&uid);
    zmsg_destroy (&r);
    return status;
}

START_TEST (test_security_zap_decisions)
{
    s_keys_t k;
    s_keys (&k);
    char set_cert [256], set_clients [256];
    snprintf (set_cert, sizeof set_cert, "security.curve.server_cert=%s", k.cert);
    snprintf (set_clients, sizeof set_clients, "security.curve.clients=%s", k.clients);
    const char *sets [] = { set_cert, set_clients, NULL };
    fasgd_server_cfg_t cfg;
    fasgd_srv_stats_t st = { 0 };
    s_cfg (&cfg, sets);
    char err [512] = "";
    fasgd_srv_security_t *sec = fasgd_srv_security_new (&cfg, &st, err, sizeof err);
    ck_assert_msg (sec != NULL, "%s", err);
    ck_assert_ptr_nonnull (fasgd_srv_security_zap_socket (sec));
    zsock_t *req = zsock_new_req ("inproc://zeromq.zap.01");
    ck_assert_ptr_nonnull (req);
    zsock_set_rcvtimeo (req, 2000);
    uint8_t key [32];
    char user [64];
    ck_assert_ptr_nonnull (zmq_z85_decode (key, k.alice));
    ck_assert_int_eq (s_zap_ask (req, sec, "CURVE", key, user), 200);
    ck_assert_str_eq (user, k.alice);                 /* the User-Id of its messages */
    ck_assert_ptr_nonnull (zmq_z85_decode (key, k.server_key));
    ck_assert_int_eq (s_zap_ask (req, sec, "CURVE", key, user), 200);
    ck_assert_uint_eq (st.auth_refused, 0);
    /*  A key one bit off, and no CURVE at all: refused, and counted.  */
    ck_assert_ptr_nonnull (zmq_z85_decode (key, k.bob));
    key [31] ^= 1;
    ck_assert_int_eq (s_zap_ask (req, sec, "CURVE", key, user), 400);
    ck_assert_str_eq (user, "");
    ck_assert_int_eq (s_zap_ask (req, sec, "NULL", NULL, user), 400);
    ck_assert_uint_eq (st.auth_refused, 2);
    ck_assert_int_eq (fasgd_srv_security_zap (sec), -1);        /* nothing waits */
    zsock_destroy (&req);
    fasgd_srv_security_destroy (&sec);
    s_keys_remove (&k);
}
END_TEST

static Suite *
engine_suite (void)
{
    Suite *s = suite_create ("engine");
    TCase *tc = tcase_create ("guard");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_guard_nonfinite_bound_and_forgetting);
    tcase_add_test (tc, test_guard_median_groups_follow_churn);
    tcase_add_test (tc, test_guard_clip_and_overflow);
    tcase_add_test (tc, test_guard_median_resists_one_client);
    tcase_add_test (tc, test_guard_trusted_reference);
    tcase_add_test (tc, test_guard_unchecked_without_trusted);
    tcase_add_test (tc, test_guard_folded_pass);
    suite_add_tcase (s, tc);
    tc = tcase_create ("registry");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_registry_join_ids_and_sessions);
    tcase_add_test (tc, test_registry_cache_bytes_and_expiry);
    suite_add_tcase (s, tc);
    tc = tcase_create ("security");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_security_off);
    tcase_add_test (tc, test_security_allowlist_reload_and_revocation);
    tcase_add_test (tc, test_security_malformed_certificates);
    tcase_add_test (tc, test_security_allow_any);
    tcase_add_test (tc, test_security_zap_decisions);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (engine_suite)
