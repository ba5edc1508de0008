/*  The guard's reference cadence, in-process (server/guard.c, s_every):
    with a model of its own the guard computes a reference gradient (and
    measures the held-out loss) every guard.every pushes judged while
    each push judged since the last one was applied in full from a
    client in good standing, and every guard.every / 2 once one was not
    (a newcomer on probation, a push left out or weighted), until the
    next reference.  */
#include "testutil.h"
#include "toymodel.h"

#include "guard.h"
#include "params.h"
#include "registry.h"

#include <string.h>

/*  A server's engine with a model of its own: a reference, the loss
    check.  */
typedef struct {
    fasgd_server_cfg_t cfg;
    fasgd_srv_stats_t st;
    fasgd_model_t *model;
    fasgd_dataset_t *valid;
    fasgd_srv_params_t *params;
    float *scratch, *g;
    fasgd_srv_guard_t *guard;
    fasgd_srv_registry_t *reg;
} s_server_t;

static void
s_server (s_server_t *s, const char *every)
{
    memset (s, 0, sizeof *s);
    ck_assert_int_eq (fasgd_config_defaults (fasgd_server_cfg_keys, &s->cfg, stderr), 0);
    const char *sets [] = { "guard.examples=64", "guard.loss_examples=32", every, NULL };
    for (int i = 0; sets [i]; i++)
        ck_assert_int_eq (fasgd_config_set (fasgd_server_cfg_keys, &s->cfg, sets [i], stderr), 0);
    char err [256] = "";
    s->model = toy_model ();
    size_t n = fasgd_model_nparams (s->model);
    s->valid = toy_examples ();
    fasgd_rule_params_t rp;
    fasgd_rule_cfg_to_params (&s->cfg.rule, s->cfg.clients, &rp);
    fasgd_rule_t *rule = fasgd_rule_new (&rp, n, err, sizeof err);
    ck_assert_msg (rule != NULL, "%s", err);
    fasgd_rule_gradients_checked (rule);
    s->params = fasgd_srv_params_new (&rule, n, n, 0, FASGD_WIRE_F32, 0);
    ck_assert_ptr_nonnull (s->params);
    toy_theta (s->params->theta, n);
    s->scratch = calloc (n, sizeof (float));
    s->g = calloc (n, sizeof (float));
    ck_assert (s->scratch && s->g);
    s->guard = fasgd_srv_guard_new (&s->cfg, s->params, s->scratch, &s->st);
    ck_assert_ptr_nonnull (s->guard);
    s->reg = fasgd_srv_registry_new (&s->cfg, n, 0, 0, s->guard, &s->st);
    ck_assert_ptr_nonnull (s->reg);
    ck_assert_int_eq (fasgd_srv_guard_reference (s->guard, s->model, s->valid), 0);
    ck_assert_str_eq (fasgd_srv_guard_direction (s->guard), "reference");
    /*  The model's own gradient at θ on all 64 examples, of which each
        reference draws 64 at random: a push that predicts descent (θ
        stays as it is: the guard's bookkeeping only).  */
    fasgd_model_ws_t *ws = fasgd_model_ws_new (s->model, 64);
    ck_assert_ptr_nonnull (ws);
    fasgd_model_gradient (s->model, ws, s->params->theta, s->valid->x, s->valid->y, 64, s->g, NULL);
    fasgd_model_ws_destroy (&ws);
}

static void
s_server_end (s_server_t *s)
{
    fasgd_srv_registry_destroy (&s->reg);
    fasgd_srv_guard_destroy (&s->guard);
    fasgd_srv_params_destroy (&s->params);
    fasgd_dataset_destroy (&s->valid);
    fasgd_model_destroy (&s->model);
    free (s->scratch);
    free (s->g);
}

static fasgd_srv_client_t *
s_join (s_server_t *s)
{
    char why [256] = "";
    fasgd_srv_client_t *c = fasgd_srv_registry_join (s->reg, "c", 1, NULL, NULL, 0, why, sizeof why);
    ck_assert_msg (c != NULL, "%s", why);
    return c;
}

/*  A client in good standing: past probation, its record earned, its
    mean score 1 over a full record (256 pushes: the toy references,
    drawn at random, can score the pushes below 0 for a while).  */
static fasgd_srv_client_t *
s_join_standing (s_server_t *s)
{
    fasgd_srv_client_t *c = s_join (s);
    c->verdict.pushes = 1000;
    c->verdict.sum = 256;
    c->verdict.count = 256;
    c->verdict.earned = 1;
    return c;
}

/*  c pushes the descent gradient (negated: sign −1), judged; applied
    as the guard says. Its weight.  */
static double
s_push (s_server_t *s, fasgd_srv_client_t *c, float sign)
{
    size_t n = s->params->n;
    for (size_t i = 0; i < n; i++)
        s->scratch [i] = sign * s->g [i];
    float *g = malloc (n * sizeof (float));
    ck_assert_ptr_nonnull (g);
    memcpy (g, s->scratch, n * sizeof (float));
    const float *gp = g;
    double weight = 0, norm = 0;
    char why [256] = "";
    int status = fasgd_srv_guard_check (s->guard, c, &gp, 0, 0, &weight, &norm, why, sizeof why);
    ck_assert_msg (status == 0, "refused: %s", why);
    if (weight > 0)
        fasgd_srv_guard_accepted (s->guard, c, gp, s->params->T, norm, 0);
    free (g);
    return weight;
}

/*  Pushes of c until the next reference, at most limit: how many.  */
static int
s_until_reference (s_server_t *s, fasgd_srv_client_t *c, int limit)
{
    uint64_t refs = s->st.references;
    for (int k = 1; k <= limit; k++) {
        ck_assert_double_eq (s_push (s, c, 1), 1);
        if (s->st.references > refs)
            return k;
    }
    return limit + 1;
}

START_TEST (test_calm_every_and_doubt_half)
{
    s_server_t s;
    s_server (&s, "guard.every=16");
    fasgd_srv_client_t *c = s_join_standing (&s);
    /*  The first push meets the first reference; then one every 16
        pushes judged, all applied in full.  */
    ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_uint_eq (s.st.references, 1);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq (s_until_reference (&s, c, 40), 16);
    ck_assert_uint_eq (s.st.references, 5);
    /*  A newcomer's push, on probation (ignored): the next reference is
        due 8 pushes judged after the last, the newcomer's counted.  */
    fasgd_srv_client_t *fresh = s_join (&s);
    ck_assert_double_eq (s_push (&s, fresh, 1), 0);
    ck_assert_int_eq (s_until_reference (&s, c, 40), 7);
    /*  After it, calm again: 16.  */
    ck_assert_int_eq (s_until_reference (&s, c, 40), 16);
    /*  A push of the client in good standing itself, not applied in
        full (its gradient negated, a thousand times over: clipped, and
        scoring far below −refuse, left out): due 8 after the last.  */
    for (int i = 0; i < 4; i++)
        ck_assert_double_eq (s_push (&s, c, 1), 1);
    double w = s_push (&s, c, -1e3f);
    ck_assert_msg (w < 1, "a push 1000 times the gradient, negated, applied with weight %g", w);
    ck_assert_int_eq (s_until_reference (&s, c, 40), 3);
    ck_assert_uint_eq (c->refused, 0);
    s_server_end (&s);
}
END_TEST

/*  A push of a client not in good standing meets a reference at most 7
    pushes judged old: one is drawn for it when 8 or more were judged
    since the last, however calm they were.  */
START_TEST (test_doubtful_client_meets_a_fresh_reference)
{
    s_server_t s;
    s_server (&s, "guard.every=16");
    fasgd_srv_client_t *c = s_join_standing (&s);
    fasgd_srv_client_t *fresh = s_join (&s), *cut = s_join_standing (&s);
    cut->loss_rise = 3 * s.cfg.guard_loss_rise;
    ck_assert_double_eq (s_push (&s, c, 1), 1);
    uint64_t refs = s.st.references;
    /*  Seven calm pushes after the reference: the newcomer's does not
        bring one; after three more, the next newcomer's push does.  */
    for (int i = 0; i < 6; i++)
        ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_double_eq (s_push (&s, fresh, 1), 0);
    ck_assert_uint_eq (s.st.references, refs);
    ck_assert_int_eq (s_until_reference (&s, c, 40), 1);
    refs = s.st.references;
    for (int i = 0; i < 9; i++)
        ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_uint_eq (s.st.references, refs);
    ck_assert_double_eq (s_push (&s, fresh, 1), 0);
    ck_assert_uint_eq (s.st.references, refs + 1);
    /*  A client the loss check cuts is not in good standing either.  */
    for (int i = 0; i < 15; i++)
        ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_uint_eq (s.st.references, refs + 2);
    for (int i = 0; i < 7; i++)
        ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_uint_eq (s.st.references, refs + 2);
    ck_assert_double_lt (s_push (&s, cut, 1), 1);
    ck_assert_uint_eq (s.st.references, refs + 3);
    s_server_end (&s);
}
END_TEST

/*  guard.every 1 stays 1 in doubt; 8 becomes 4.  */
START_TEST (test_small_every)
{
    s_server_t s;
    s_server (&s, "guard.every=1");
    fasgd_srv_client_t *fresh = s_join (&s);
    for (int i = 0; i < 5; i++)
        ck_assert_double_eq (s_push (&s, fresh, 1), 0);
    ck_assert_uint_eq (s.st.references, 5);
    s_server_end (&s);
    s_server (&s, "guard.every=8");
    fresh = s_join (&s);
    fasgd_srv_client_t *c = s_join_standing (&s);
    ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_int_eq (s_until_reference (&s, c, 40), 8);
    ck_assert_double_eq (s_push (&s, fresh, 1), 0);
    ck_assert_int_eq (s_until_reference (&s, c, 40), 3);
    s_server_end (&s);
}
END_TEST

static Suite *
guard_cadence_suite (void)
{
    Suite *s = suite_create ("guard_cadence");
    TCase *tc = tcase_create ("cadence");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_calm_every_and_doubt_half);
    tcase_add_test (tc, test_small_every);
    tcase_add_test (tc, test_doubtful_client_meets_a_fresh_reference);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (guard_cadence_suite)
