/*  The guard's reference cadence, in-process (server/guard.c, s_every):
    with a model of its own the guard computes a reference gradient (and
    measures the held-out loss) every guard.every pushes judged while
    each push judged since the last one was applied in full from a
    client in good standing and the push to be judged is one's too;
    every guard.every / 2 otherwise (a newcomer on probation, a client
    the loss check cuts, a push left out, weighted or clipped).  */
#include "testutil.h"
#include "toyserver.h"

/*  A server's engine with a model of its own (a reference, the loss
    check), guard.every as `every` says, and g, the model's own gradient
    at θ on all 64 examples, of which each reference draws 64 at random:
    a push that predicts descent (θ stays as it is: the guard's
    bookkeeping only).  */
typedef struct {
    toy_server_t e;
    float *g;
} s_server_t;

static void
s_server (s_server_t *s, const char *every)
{
    const char *sets [] = { "guard.examples=64", "guard.loss_examples=32", every, NULL };
    toy_server (&s->e, sets, 0, 0);
    size_t n = s->e.params->n;
    s->g = calloc (n, sizeof (float));
    ck_assert_ptr_nonnull (s->g);
    fasgd_model_ws_t *ws = fasgd_model_ws_new (s->e.model, 64);
    ck_assert_ptr_nonnull (ws);
    fasgd_model_gradient (s->e.model, ws, s->e.params->theta, s->e.valid->x, s->e.valid->y, 64, s->g, NULL);
    fasgd_model_ws_destroy (&ws);
}

static void
s_server_end (s_server_t *s)
{
    toy_server_end (&s->e);
    free (s->g);
}

static fasgd_srv_client_t *
s_join (s_server_t *s)
{
    return toy_join (&s->e, NULL);
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
    size_t n = s->e.params->n;
    float *g = malloc (n * sizeof (float));
    ck_assert_ptr_nonnull (g);
    for (size_t i = 0; i < n; i++)
        g [i] = sign * s->g [i];
    double weight = toy_push (&s->e, c, g);
    free (g);
    return weight;
}

/*  Pushes of c until the next reference, at most limit: how many.  */
static int
s_until_reference (s_server_t *s, fasgd_srv_client_t *c, int limit)
{
    uint64_t refs = s->e.st.references;
    for (int k = 1; k <= limit; k++) {
        ck_assert_double_eq (s_push (s, c, 1), 1);
        if (s->e.st.references > refs)
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
    ck_assert_uint_eq (s.e.st.references, 1);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq (s_until_reference (&s, c, 40), 16);
    ck_assert_uint_eq (s.e.st.references, 5);
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
    cut->loss_rise = 3 * s.e.cfg.guard_loss_rise;
    ck_assert_double_eq (s_push (&s, c, 1), 1);
    uint64_t refs = s.e.st.references;
    /*  Seven calm pushes after the reference: the newcomer's does not
        bring one; after three more, the next newcomer's push does.  */
    for (int i = 0; i < 6; i++)
        ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_double_eq (s_push (&s, fresh, 1), 0);
    ck_assert_uint_eq (s.e.st.references, refs);
    ck_assert_int_eq (s_until_reference (&s, c, 40), 1);
    refs = s.e.st.references;
    for (int i = 0; i < 9; i++)
        ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_uint_eq (s.e.st.references, refs);
    ck_assert_double_eq (s_push (&s, fresh, 1), 0);
    ck_assert_uint_eq (s.e.st.references, refs + 1);
    /*  A client the loss check cuts is not in good standing either.  */
    for (int i = 0; i < 15; i++)
        ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_uint_eq (s.e.st.references, refs + 2);
    for (int i = 0; i < 7; i++)
        ck_assert_double_eq (s_push (&s, c, 1), 1);
    ck_assert_uint_eq (s.e.st.references, refs + 2);
    ck_assert_double_lt (s_push (&s, cut, 1), 1);
    ck_assert_uint_eq (s.e.st.references, refs + 3);
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
    ck_assert_uint_eq (s.e.st.references, 5);
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
