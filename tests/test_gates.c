/*  gates: probabilities worked out by hand, the every-k pattern, always,
    forced transmissions, counters, reproducibility, the observed
    B-FASGD transmit rate against (v̄+ε_g)/(v̄+ε_g+c), and a client's
    push and fetch policy (fasgd_gates_t) step by step.  */
#include "gates.h"
#include "settings.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <string.h>

static fasgd_gate_params_t
s_params (int kind, int every, double c)
{
    fasgd_gate_params_t p;
    fasgd_gate_params_default (&p);
    p.kind = kind;
    p.every = every;
    p.c = c;
    return p;
}

/*  1 when the generator has not moved since fasgd_rng_seed (seed, stream).  */
static int
s_rng_untouched (const fasgd_rng_t *r, uint64_t seed, uint64_t stream)
{
    fasgd_rng_t fresh;
    fasgd_rng_seed (&fresh, seed, stream);
    return r->state == fresh.state && r->inc == fresh.inc;
}

START_TEST (test_names_and_defaults)
{
    const char *names [] = { "always", "every", "bfasgd" };
    for (int k = 0; k < 3; k++) {
        ck_assert_str_eq (fasgd_gate_kind_name (k), names [k]);
        ck_assert_int_eq (fasgd_gate_kind_parse (names [k]), k);
    }
    ck_assert_str_eq (fasgd_gate_kind_name (3), "?");
    ck_assert_str_eq (fasgd_gate_kind_name (-1), "?");
    ck_assert_int_eq (fasgd_gate_kind_parse ("b-fasgd"), -1);
    ck_assert_int_eq (fasgd_gate_kind_parse (NULL), -1);

    fasgd_gate_params_t p;
    memset (&p, 0xff, sizeof p);
    fasgd_gate_params_default (&p);
    ck_assert_int_eq (p.kind, FASGD_GATE_ALWAYS);
    ck_assert_int_eq (p.every, 1);
    ck_assert_double_eq (p.c, 0.0);
    ck_assert_double_eq (p.eps, 1e-4);
    ck_assert_int_eq (fasgd_gate_params_check (&p, NULL, 0), 0);
}
END_TEST

START_TEST (test_params_check)
{
    char err [128];
    fasgd_gate_params_t p = s_params (FASGD_GATE_BFASGD, 1, 0.5);
    ck_assert_int_eq (fasgd_gate_params_check (&p, err, sizeof err), 0);
    p.kind = 3;
    ck_assert_int_eq (fasgd_gate_params_check (&p, err, sizeof err), -1);
    ck_assert_str_eq (err, "unknown gate kind 3");
    p = s_params (FASGD_GATE_EVERY, 0, 0);
    ck_assert_int_eq (fasgd_gate_params_check (&p, err, sizeof err), -1);
    ck_assert_str_eq (err, "every must be >= 1 (got 0)");
    p = s_params (FASGD_GATE_BFASGD, 1, -0.5);
    ck_assert_int_eq (fasgd_gate_params_check (&p, err, sizeof err), -1);
    ck_assert_str_eq (err, "c must be >= 0 and finite (got -0.5)");
    p.c = NAN;
    ck_assert_int_eq (fasgd_gate_params_check (&p, err, sizeof err), -1);
    p.c = INFINITY;
    ck_assert_int_eq (fasgd_gate_params_check (&p, NULL, 0), -1);
    p = s_params (FASGD_GATE_BFASGD, 1, 0.5);
    p.eps = 0;
    ck_assert_int_eq (fasgd_gate_params_check (&p, err, sizeof err), -1);
    ck_assert_str_eq (err, "eps must be > 0 and finite (got 0)");
    p.eps = NAN;
    ck_assert_int_eq (fasgd_gate_params_check (&p, err, sizeof err), -1);
}
END_TEST

START_TEST (test_probability_by_hand)
{
    /*  always: 1 whatever v̄.  */
    fasgd_gate_params_t p = s_params (FASGD_GATE_ALWAYS, 1, 5.0);
    ck_assert_double_eq (fasgd_gate_probability (&p, 0.0), 1.0);
    ck_assert_double_eq (fasgd_gate_probability (&p, NAN), 1.0);
    /*  every: 1/k.  */
    p = s_params (FASGD_GATE_EVERY, 4, 0);
    ck_assert_double_eq (fasgd_gate_probability (&p, 0.3), 0.25);
    p.every = 1;
    ck_assert_double_eq (fasgd_gate_probability (&p, 0.3), 1.0);

    /*  bfasgd, ε_g = 1e-4.  */
    p = s_params (FASGD_GATE_BFASGD, 1, 0.1);
    /*  v̄ = 0.0999: (0.0999 + 0.0001)/(0.1 + 0.1) = 0.5  */
    ck_assert_double_eq_tol (fasgd_gate_probability (&p, 0.0999), 0.5, 1e-15);
    /*  v̄ = 0.3: 0.3001/0.4001 = 0.7500624844  */
    ck_assert_double_eq_tol (fasgd_gate_probability (&p, 0.3), 0.3001 / 0.4001, 1e-15);
    ck_assert_double_eq_tol (fasgd_gate_probability (&p, 0.3), 0.7500624844, 1e-10);
    /*  It rises with v̄.  */
    ck_assert (fasgd_gate_probability (&p, 0.31) > fasgd_gate_probability (&p, 0.3));
    /*  c = 1e-4, v̄ = 0: ε/(ε + c) = 0.5, and so for every v̄ a peer could
        send that is not a number ≥ 0.  */
    p.c = 1e-4;
    const double junk [] = { 0.0, NAN, INFINITY, -INFINITY, -1.0, -0.0 };
    for (size_t i = 0; i < sizeof junk / sizeof junk [0]; i++)
        ck_assert_double_eq_tol (fasgd_gate_probability (&p, junk [i]), 0.5, 1e-15);
    /*  c = 0: exactly 1.  */
    p.c = 0;
    ck_assert_double_eq (fasgd_gate_probability (&p, 0.0), 1.0);
    ck_assert_double_eq (fasgd_gate_probability (&p, 123.0), 1.0);
    /*  A huge c: c/ε overflows to Inf and the probability to 0, not NaN.  */
    p.c = DBL_MAX;
    ck_assert_double_eq (fasgd_gate_probability (&p, 0.0), 0.0);
    /*  A huge v̄: 1/(1 + 1/DBL_MAX) rounds to 1.  */
    p.c = 1.0;
    ck_assert_double_eq (fasgd_gate_probability (&p, DBL_MAX), 1.0);
    /*  ε_g counts: v̄ = 0.001, c = 0.01, ε = 0.001: 0.002/0.012.  */
    p.c = 0.01;
    p.eps = 0.001;
    ck_assert_double_eq_tol (fasgd_gate_probability (&p, 0.001), 0.002 / 0.012, 1e-15);
}
END_TEST

START_TEST (test_always)
{
    fasgd_gate_params_t p = s_params (FASGD_GATE_ALWAYS, 1, 0);
    fasgd_gate_t g;
    fasgd_gate_init (&g, &p, 7, 3);
    ck_assert_uint_eq (g.opportunities, 0);
    ck_assert_uint_eq (g.transmissions, 0);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq (fasgd_gate_decide (&g, i % 2 ? NAN : 0.0), 1);
    ck_assert_uint_eq (g.opportunities, 100);
    ck_assert_uint_eq (g.transmissions, 100);
    ck_assert (s_rng_untouched (&g.rng, 7, 3));
}
END_TEST

START_TEST (test_every_pattern)
{
    /*  k = 3: opportunities 3, 6, 9, 12 transmit.  */
    fasgd_gate_params_t p = s_params (FASGD_GATE_EVERY, 3, 0);
    fasgd_gate_t g;
    fasgd_gate_init (&g, &p, 1, 1);
    const int want [12] = { 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1 };
    for (int i = 0; i < 12; i++)
        ck_assert_int_eq (fasgd_gate_decide (&g, 0.5), want [i]);
    ck_assert_uint_eq (g.opportunities, 12);
    ck_assert_uint_eq (g.transmissions, 4);
    ck_assert (s_rng_untouched (&g.rng, 1, 1));

    /*  A forced first push is opportunity 1; then 3, 6, ... as before.  */
    fasgd_gate_init (&g, &p, 1, 1);
    fasgd_gate_force (&g);
    const int after [8] = { 0, 1, 0, 0, 1, 0, 0, 1 };     /* opportunities 2..9 */
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq (fasgd_gate_decide (&g, 0.5), after [i]);
    ck_assert_uint_eq (g.opportunities, 9);
    ck_assert_uint_eq (g.transmissions, 4);

    /*  k = 1 transmits every time.  */
    p.every = 1;
    fasgd_gate_init (&g, &p, 1, 1);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (fasgd_gate_decide (&g, 0.0), 1);
    ck_assert_uint_eq (g.transmissions, 10);
}
END_TEST

START_TEST (test_force)
{
    /*  A forced transmission counts both and draws nothing, in every kind;
        a bfasgd gate's later draws are those of a fresh stream.  */
    for (int kind = FASGD_GATE_ALWAYS; kind <= FASGD_GATE_BFASGD; kind++) {
        fasgd_gate_params_t p = s_params (kind, 2, 0.5);
        fasgd_gate_t g;
        fasgd_gate_init (&g, &p, 99, 4);
        fasgd_gate_force (&g);
        fasgd_gate_force (&g);
        ck_assert_uint_eq (g.opportunities, 2);
        ck_assert_uint_eq (g.transmissions, 2);
        ck_assert (s_rng_untouched (&g.rng, 99, 4));
    }
    fasgd_gate_params_t p = s_params (FASGD_GATE_BFASGD, 1, 0.5);
    fasgd_gate_t g;
    fasgd_gate_init (&g, &p, 99, 4);
    fasgd_gate_force (&g);
    fasgd_rng_t ref;
    fasgd_rng_seed (&ref, 99, 4);
    double prob = fasgd_gate_probability (&p, 0.2);
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq (fasgd_gate_decide (&g, 0.2), fasgd_rng_uniform (&ref) < prob);
}
END_TEST

START_TEST (test_bfasgd_one_draw_per_opportunity)
{
    /*  Against a reference generator on the same (seed, stream): exactly
        one uniform per opportunity, transmit iff r < probability, also when
        the outcome is certain (c = 0) or v̄ changes between calls.  */
    const double cs [] = { 0.0, 0.05, 1.0, 1e300 };
    for (size_t ci = 0; ci < 4; ci++) {
        fasgd_gate_params_t p = s_params (FASGD_GATE_BFASGD, 1, cs [ci]);
        fasgd_gate_t g;
        fasgd_gate_init (&g, &p, 2024, 17);
        fasgd_rng_t ref;
        fasgd_rng_seed (&ref, 2024, 17);
        uint64_t sent = 0;
        for (int i = 0; i < 1000; i++) {
            double vbar = 0.001 * (i % 37);
            int want = fasgd_rng_uniform (&ref) < fasgd_gate_probability (&p, vbar);
            int got = fasgd_gate_decide (&g, vbar);
            ck_assert_int_eq (got, want);
            sent += (uint64_t) got;
        }
        ck_assert_uint_eq (g.opportunities, 1000);
        ck_assert_uint_eq (g.transmissions, sent);
        ck_assert_uint_eq (g.rng.state, ref.state);
        if (cs [ci] == 0.0)
            ck_assert_uint_eq (sent, 1000);
        if (cs [ci] == 1e300)
            ck_assert_uint_eq (sent, 0);
    }
}
END_TEST

START_TEST (test_reproducible)
{
    fasgd_gate_params_t p = s_params (FASGD_GATE_BFASGD, 1, 0.3);
    fasgd_gate_t a, b, other;
    fasgd_gate_init (&a, &p, 5, 1);
    fasgd_gate_init (&b, &p, 5, 1);
    fasgd_gate_init (&other, &p, 5, 2);
    int differ = 0;
    for (int i = 0; i < 2000; i++) {
        int x = fasgd_gate_decide (&a, 0.3);
        ck_assert_int_eq (fasgd_gate_decide (&b, 0.3), x);
        differ += fasgd_gate_decide (&other, 0.3) != x;
    }
    ck_assert_uint_eq (a.transmissions, b.transmissions);
    /*  p ≈ 0.5: independent streams disagree about half the time.  */
    ck_assert_int_gt (differ, 800);
    ck_assert_int_lt (differ, 1200);
    /*  Copying the value type forks the stream.  */
    fasgd_gate_t copy = a;
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq (fasgd_gate_decide (&copy, 0.1), fasgd_gate_decide (&a, 0.1));
}
END_TEST

START_TEST (test_bfasgd_rate)
{
    /*  200,000 opportunities per (v̄, c), seeded: the observed rate lies
        within 5 standard errors sqrt(p(1−p)/N) of p = (v̄+ε)/(v̄+ε+c). The
        first three pairs have small v̄, where forgetting ε (v̄/(v̄+c))
        moves p by more than 10 standard errors: the test would catch it.  */
    const struct { double vbar, c; int small; } pairs [] = {
        { 0.0,    1e-4, 1 },        /* p = 0.5       (wrong: 0) */
        { 1e-4,   1e-3, 1 },        /* p = 0.1667    (wrong: 0.0909) */
        { 1e-5,   1e-4, 1 },        /* p = 0.5238    (wrong: 0.0909) */
        { 0.5,    0.5,  0 },        /* p = 0.50005 */
        { 2.0,    0.1,  0 },        /* p = 0.95239 */
        { 0.01,   1.0,  0 },        /* p = 0.01010 */
        { NAN,    1e-4, 1 },        /* a peer's NaN counts as 0: p = 0.5 */
    };
    const int n = 200000;
    const double eps = 1e-4;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs [0]; i++) {
        fasgd_gate_params_t p = s_params (FASGD_GATE_BFASGD, 1, pairs [i].c);
        fasgd_gate_t g;
        fasgd_gate_init (&g, &p, 12345, 100 + i);
        double v = isnan (pairs [i].vbar) ? 0.0 : pairs [i].vbar;
        double want = (v + eps) / (v + eps + pairs [i].c);
        double se = sqrt (want * (1.0 - want) / n);
        for (int k = 0; k < n; k++)
            fasgd_gate_decide (&g, pairs [i].vbar);
        ck_assert_uint_eq (g.opportunities, (uint64_t) n);
        double rate = (double) g.transmissions / n;
        ck_assert_msg (fabs (rate - want) <= 5 * se,
                       "v̄ %g c %g: rate %.5f, want %.5f ± %.5f",
                       pairs [i].vbar, pairs [i].c, rate, want, 5 * se);
        if (pairs [i].small) {
            double wrong = v / (v + pairs [i].c);
            ck_assert (fabs (wrong - want) > 10 * se);
            ck_assert (fabs (rate - wrong) > 5 * se);
        }
    }
}
END_TEST

START_TEST (test_every_rate_and_counters)
{
    /*  Mixed forced and decided opportunities: the counters add up.  */
    fasgd_gate_params_t p = s_params (FASGD_GATE_EVERY, 7, 0);
    fasgd_gate_t g;
    fasgd_gate_init (&g, &p, 0, 0);
    fasgd_gate_force (&g);
    uint64_t sent = 1;
    for (int i = 0; i < 699; i++)
        sent += (uint64_t) fasgd_gate_decide (&g, 1.0);
    ck_assert_uint_eq (g.opportunities, 700);
    ck_assert_uint_eq (g.transmissions, sent);
    ck_assert_uint_eq (sent, 1 + 100);          /* the forced one + 7, 14, ..., 700 */
}
END_TEST

/*  The configuration refuses eps_g = 0 (with c = 0 and vbar = 0 the
    probability would be 0/0), naming the key and its bounds.  */
START_TEST (test_config_refuses_zero_eps)
{
    fasgd_gates_cfg_t cfg;
    char *buf = NULL;
    size_t len = 0;
    FILE *errs = open_memstream (&buf, &len);
    ck_assert_int_eq (fasgd_config_defaults (fasgd_gates_cfg_keys, &cfg, errs), 0);
    ck_assert_double_eq (cfg.eps, 1e-4);
    ck_assert_int_eq (fasgd_config_set (fasgd_gates_cfg_keys, &cfg, "eps=0", errs), 1);
    ck_assert_int_eq (fasgd_config_set (fasgd_gates_cfg_keys, &cfg, "eps=1e-12", errs), 0);
    fclose (errs);
    ck_assert_msg (strstr (buf, "eps must be") && strstr (buf, "(got 0)"), "%s", buf);
    ck_assert_double_eq (cfg.eps, 1e-12);
    free (buf);
}
END_TEST

/*  Every-3 pushes with accumulate: the first forced, then two skips kept
    and the third sent with their sum; with resend-last the skips are
    repeats. Until the caller marks pushed, every push is forced.  */
START_TEST (test_policy_push)
{
    static const int want_acc [] = { FASGD_TX_PUSH, FASGD_TX_KEEP, FASGD_TX_PUSH_SUM,
                                     FASGD_TX_KEEP, FASGD_TX_KEEP, FASGD_TX_PUSH_SUM, FASGD_TX_KEEP };
    static const int want_rl [] = { FASGD_TX_PUSH, FASGD_TX_REPEAT, FASGD_TX_PUSH,
                                    FASGD_TX_REPEAT, FASGD_TX_REPEAT, FASGD_TX_PUSH, FASGD_TX_REPEAT };
    fasgd_gate_params_t push = s_params (FASGD_GATE_EVERY, 3, 0), fetch = s_params (FASGD_GATE_ALWAYS, 1, 0);
    for (int skip = 0; skip < 2; skip++) {
        const int *want = skip == FASGD_PUSH_SKIP_ACCUMULATE ? want_acc : want_rl;
        fasgd_gates_t g;
        fasgd_gates_init (&g, &push, &fetch, skip, 1, 2, 3);
        float sum [2] = { -1, -1 }, out [2];
        for (int i = 0; i < 7; i++) {
            float grad [2] = { (float) i, 10.0f * (float) i };
            fasgd_tx_t tx = fasgd_gates_push (&g, 0.0);
            ck_assert_msg ((int) tx == want [i], "skip %d, opportunity %d: %d, not %d", skip, i + 1, tx, want [i]);
            if (tx == FASGD_TX_KEEP)
                fasgd_gates_keep (&g, sum, grad, 2);
            else if (tx == FASGD_TX_PUSH_SUM) {
                fasgd_gates_sum (out, sum, grad, 2);
                /*  Opportunities 2, 3, then 4, 5, 6 (grad i at i + 1).  */
                ck_assert_float_eq (out [0], i == 2 ? 3.0f : 12.0f);
                ck_assert_float_eq (out [1], i == 2 ? 30.0f : 120.0f);
                g.has_accum = 0;
            }
            if (tx == FASGD_TX_PUSH || tx == FASGD_TX_PUSH_SUM)
                g.pushed = 1;
        }
        ck_assert_uint_eq (g.push.opportunities, 7);
        ck_assert_uint_eq (g.push.transmissions, 3);
    }
    /*  Never marked pushed (each push refused): each one forced.  */
    fasgd_gate_params_t never = s_params (FASGD_GATE_BFASGD, 1, 1e12);
    fasgd_gates_t g;
    fasgd_gates_init (&g, &never, &fetch, FASGD_PUSH_SKIP_RESEND_LAST, 1, 2, 3);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq (fasgd_gates_push (&g, 0.0), FASGD_TX_PUSH);
    ck_assert (s_rng_untouched (&g.push.rng, 1, 2));
    ck_assert_int_eq (fasgd_push_skip_parse ("resend-last"), FASGD_PUSH_SKIP_RESEND_LAST);
    ck_assert_int_eq (fasgd_push_skip_parse ("accumulate"), FASGD_PUSH_SKIP_ACCUMULATE);
    ck_assert_int_eq (fasgd_push_skip_parse ("Accumulate"), -1);
    ck_assert_int_eq (fasgd_push_skip_parse (NULL), -1);
}
END_TEST

/*  The fetch gate: forced (no draw) until the caller marks fetched.  */
START_TEST (test_policy_fetch)
{
    fasgd_gate_params_t push = s_params (FASGD_GATE_ALWAYS, 1, 0), fetch = s_params (FASGD_GATE_EVERY, 2, 0);
    fasgd_gates_t g;
    fasgd_gates_init (&g, &push, &fetch, FASGD_PUSH_SKIP_RESEND_LAST, 1, 2, 3);
    ck_assert_int_eq (fasgd_gates_fetch (&g, 0.0), 1);
    ck_assert_int_eq (fasgd_gates_fetch (&g, 0.0), 1);     /* opportunity 2: forced, every 2 agrees */
    ck_assert_int_eq (fasgd_gates_fetch (&g, 0.0), 1);     /* 3: forced */
    g.fetched = 1;
    ck_assert_int_eq (fasgd_gates_fetch (&g, 0.0), 1);     /* 4 */
    ck_assert_int_eq (fasgd_gates_fetch (&g, 0.0), 0);     /* 5 */
    ck_assert_int_eq (fasgd_gates_fetch (&g, 0.0), 1);     /* 6 */
    ck_assert_uint_eq (g.fetch.opportunities, 6);
    ck_assert_uint_eq (g.fetch.transmissions, 5);
    fasgd_gate_params_t never = s_params (FASGD_GATE_BFASGD, 1, 1e12);
    fasgd_gates_init (&g, &push, &never, FASGD_PUSH_SKIP_RESEND_LAST, 1, 2, 3);
    ck_assert_int_eq (fasgd_gates_fetch (&g, 0.0), 1);
    ck_assert (s_rng_untouched (&g.fetch.rng, 1, 3));
    g.fetched = 1;
    ck_assert_int_eq (fasgd_gates_fetch (&g, 0.0), 0);
}
END_TEST

static Suite *
gates_suite (void)
{
    Suite *s = suite_create ("gates");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_names_and_defaults);
    tcase_add_test (tc, test_params_check);
    tcase_add_test (tc, test_probability_by_hand);
    tcase_add_test (tc, test_always);
    tcase_add_test (tc, test_every_pattern);
    tcase_add_test (tc, test_force);
    tcase_add_test (tc, test_bfasgd_one_draw_per_opportunity);
    tcase_add_test (tc, test_reproducible);
    tcase_add_test (tc, test_every_rate_and_counters);
    tcase_add_test (tc, test_policy_push);
    tcase_add_test (tc, test_policy_fetch);
    suite_add_tcase (s, tc);

    tc = tcase_create ("statistics");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_bfasgd_rate);
    tcase_add_test (tc, test_config_refuses_zero_eps);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (gates_suite)
