/*  The guard's held-out loss check (server/guard_loss.c), in-process: the
    θ a jump sets θ back to. A client pushing θ up the loss by a factor
    below 1.28 a measure, each step too small to be a jump, climbs until
    the loss is a factor e above the saved one and θ is set back. Where it
    is set back to is the point: a client not in good standing (the
    score's marks not earned, or its loss record above guard.loss_rise)
    cannot move it, so θ goes back to where the climb began; one in good
    standing moves it while the loss has not risen after its pushes.
    And how many jumps in a row it sets back before it keeps θ: a measure
    of the set-back θ itself (the server's next reference, nothing
    applied since) does not end the row; the loss coming back after
    applied pushes does.  */
#include "testutil.h"
#include "toymodel.h"

#include "guard_loss.h"
#include "registry.h"

#include <math.h>
#include <string.h>

#define S_STEPS 400

typedef struct {
    fasgd_server_cfg_t cfg;
    fasgd_srv_stats_t st;
    fasgd_model_t *model;
    fasgd_dataset_t *pool;
    fasgd_rng_t rng;
    fasgd_srv_guard_loss_t *loss;
    size_t n;
    float *theta0, *up;                 /* where the climb starts, and its direction */
} s_check_t;

static void
s_check (s_check_t *s)
{
    memset (s, 0, sizeof *s);
    ck_assert_int_eq (fasgd_config_defaults (fasgd_server_cfg_keys, &s->cfg, stderr), 0);
    ck_assert_int_eq (fasgd_config_set (fasgd_server_cfg_keys, &s->cfg, "guard.loss_examples=32", stderr), 0);
    s->model = toy_model ();
    s->n = fasgd_model_nparams (s->model);
    s->pool = toy_examples ();
    fasgd_rng_seed (&s->rng, 7, 0);
    s->loss = fasgd_srv_guard_loss_new (&s->cfg, s->model, s->pool, s->n, &s->rng, &s->st);
    ck_assert_ptr_nonnull (s->loss);
    /*  The climb goes up the gradient of the whole pool at θ0.  */
    s->theta0 = malloc (s->n * sizeof (float));
    s->up = malloc (s->n * sizeof (float));
    ck_assert_ptr_nonnull (s->theta0);
    ck_assert_ptr_nonnull (s->up);
    toy_theta (s->theta0, s->n);
    fasgd_model_ws_t *ws = fasgd_model_ws_new (s->model, 64);
    ck_assert_ptr_nonnull (ws);
    double L = fasgd_model_gradient (s->model, ws, s->theta0, s->pool->x, s->pool->y, 64, s->up, NULL);
    ck_assert (isfinite (L));
    fasgd_model_ws_destroy (&ws);
}

static void
s_check_end (s_check_t *s)
{
    fasgd_srv_guard_loss_destroy (&s->loss);
    fasgd_dataset_destroy (&s->pool);
    fasgd_model_destroy (&s->model);
    free (s->theta0);
    free (s->up);
}

/*  c pushes θ0 + k·h·up, k = 1, 2, ..., one push applied a measure,
    until the check sets θ back; returns the k it was set back at (0:
    never), and in *back_k the step that θ went back to (0: θ0), found
    among the steps taken. Each measure's rise stays below a quarter of
    guard.loss_jump: a climb, never a jump of its own.  */
static int
s_climb (s_check_t *s, fasgd_srv_client_t *c, int *back_k)
{
    const double h = 0.2;
    float *theta = malloc (s->n * sizeof (float));
    ck_assert_ptr_nonnull (theta);
    memcpy (theta, s->theta0, s->n * sizeof (float));
    fasgd_srv_guard_loss_measure (s->loss, theta);    /* the first measure: saved */
    double last = fasgd_srv_guard_loss_last (s->loss);
    int at = 0;
    for (int k = 1; k <= S_STEPS && !at; k++) {
        for (size_t i = 0; i < s->n; i++)
            theta [i] = s->theta0 [i] + (float) (k * h) * s->up [i];
        fasgd_srv_guard_loss_applied (s->loss, c, 1);
        fasgd_srv_guard_loss_measure (s->loss, theta);
        const float *back = fasgd_srv_guard_loss_rollback (s->loss);
        if (back) {
            at = k;
            *back_k = -1;
            for (int j = 0; j < k && *back_k < 0; j++) {
                int same = 1;
                for (size_t i = 0; i < s->n && same; i++)
                    same = back [i] == s->theta0 [i] + (float) (j * h) * s->up [i];
                if (same)
                    *back_k = j;
            }
            break;
        }
        double L = fasgd_srv_guard_loss_last (s->loss);
        ck_assert_msg (log (L / last) <= s->cfg.guard_loss_jump / 4, "step %d rose %g, not a climb", k,
                       log (L / last));
        last = L;
    }
    free (theta);
    return at;
}

/*  θ0 + k·h·up into theta.  */
static void
s_at (const s_check_t *s, float *theta, double k)
{
    for (size_t i = 0; i < s->n; i++)
        theta [i] = s->theta0 [i] + (float) k * s->up [i];
}

/*  The least k (a multiple of 0.2) at which θ0 + k·up is a jump above
    θ0 by half as much again as guard.loss_jump, on the batch of a check
    made as s's (the same seed: the same batch).  */
static double
s_jump_k (const s_check_t *s)
{
    s_check_t probe;
    s_check (&probe);
    float *theta = malloc (s->n * sizeof (float));
    ck_assert_ptr_nonnull (theta);
    s_at (s, theta, 0);
    fasgd_srv_guard_loss_measure (probe.loss, theta);
    double L0 = fasgd_srv_guard_loss_last (probe.loss), k;
    for (k = 0.2; k < 100; k += 0.2) {
        s_at (s, theta, k);
        fasgd_srv_guard_loss_measure (probe.loss, theta);
        if (log (fasgd_srv_guard_loss_last (probe.loss) / L0) > 1.5 * s->cfg.guard_loss_jump)
            break;
    }
    ck_assert_msg (k < 100, "no jump along up");
    free (theta);
    s_check_end (&probe);
    return k;
}

/*  One push of c applied, then a measure at theta: 1 when the check set
    θ back (and then, as the server does, a measure of the θ it went
    back to with nothing applied since, when quiet), else 0.  */
static int
s_push_measure (s_check_t *s, fasgd_srv_client_t *c, const float *theta, int quiet)
{
    fasgd_srv_guard_loss_applied (s->loss, c, 1);
    fasgd_srv_guard_loss_measure (s->loss, theta);
    const float *back = fasgd_srv_guard_loss_rollback (s->loss);
    if (back && quiet)
        fasgd_srv_guard_loss_measure (s->loss, back);
    return back != NULL;
}

START_TEST (test_jumps_in_a_row_end_in_keeping)
{
    /*  A client (honest training whose loss swings, or an attacker)
        whose every applied push leaves θ a jump above the saved one, each
        set-back θ measured at once with nothing applied: eight are set
        back, the ninth kept, and from it the saved point, not before.  */
    for (int quiet = 0; quiet < 2; quiet++) {
        s_check_t s;
        s_check (&s);
        fasgd_srv_client_t c;
        memset (&c, 0, sizeof c);
        c.id = 1;
        float *theta = malloc (s.n * sizeof (float));
        ck_assert_ptr_nonnull (theta);
        s_at (&s, theta, 0);
        fasgd_srv_guard_loss_measure (s.loss, theta);       /* saved */
        double L0 = fasgd_srv_guard_loss_last (s.loss);
        s_at (&s, theta, s_jump_k (&s));
        int back = 0, k;
        for (k = 1; k <= 20 && s_push_measure (&s, &c, theta, quiet); k++)
            back++;
        ck_assert_msg (back == 8, "quiet %d: %d set back before θ was kept", quiet, back);
        int rollbacks;
        const float *saved = fasgd_srv_guard_loss_saved (s.loss, &rollbacks);
        ck_assert_ptr_nonnull (saved);
        ck_assert_mem_eq (saved, theta, s.n * sizeof (float));
        ck_assert_int_eq (rollbacks, 0);
        ck_assert_msg (log (fasgd_srv_guard_loss_last (s.loss) / L0) > s.cfg.guard_loss_jump,
                       "the θ kept is to be a jump above θ0");
        ck_assert_int_eq ((int) s.st.loss_measures, 9);
        free (theta);
        s_check_end (&s);
    }
}
END_TEST

START_TEST (test_loss_coming_back_starts_a_new_row)
{
    /*  Between jumps, the loss comes back near the saved one after
        applied pushes (of a client the check does not trust, so nothing
        is saved): each such return starts the row anew, and θ is set
        back at every jump, 12 of them.  */
    s_check_t s;
    s_check (&s);
    fasgd_srv_client_t c;
    memset (&c, 0, sizeof c);
    c.id = 1;
    float *theta = malloc (s.n * sizeof (float)), *near = malloc (s.n * sizeof (float));
    ck_assert_ptr_nonnull (theta);
    ck_assert_ptr_nonnull (near);
    s_at (&s, theta, 0);
    fasgd_srv_guard_loss_measure (s.loss, theta);
    s_at (&s, theta, s_jump_k (&s));
    s_at (&s, near, 0.2);
    for (int j = 0; j < 12; j++) {
        ck_assert_msg (s_push_measure (&s, &c, theta, 1), "jump %d kept", j + 1);
        ck_assert_int_eq (s_push_measure (&s, &c, near, 1), 0);
    }
    int rollbacks;
    fasgd_srv_guard_loss_saved (s.loss, &rollbacks);
    ck_assert_int_eq (rollbacks, 0);
    free (theta);
    free (near);
    s_check_end (&s);
}
END_TEST

START_TEST (test_untrusted_climb_goes_back_to_its_start)
{
    s_check_t s;
    s_check (&s);
    /*  A client that has not earned the score's marks.  */
    fasgd_srv_client_t c;
    memset (&c, 0, sizeof c);
    c.id = 1;
    int back_k = -2;
    int at = s_climb (&s, &c, &back_k);
    ck_assert_msg (at > 4, "set back at step %d: the climb is to take several measures", at);
    ck_assert_int_eq (back_k, 0);
    ck_assert_int_eq ((int) s.st.loss_measures, at);
    s_check_end (&s);
}
END_TEST

START_TEST (test_trusted_climb_moves_the_saved_point_until_its_record_rises)
{
    s_check_t s;
    s_check (&s);
    /*  A client in good standing at first: its record rises with the
        loss after its pushes, and past guard.loss_rise it no longer moves
        the saved θ.  */
    fasgd_srv_client_t c;
    memset (&c, 0, sizeof c);
    c.id = 1;
    c.verdict.earned = 1;
    int back_k = -2;
    int at = s_climb (&s, &c, &back_k);
    ck_assert_msg (at > 4, "set back at step %d: the climb is to take several measures", at);
    ck_assert_msg (back_k > 0 && back_k < at, "set back to step %d of %d", back_k, at);
    ck_assert (c.loss_rise > s.cfg.guard_loss_rise);
    s_check_end (&s);
}
END_TEST

static Suite *
guard_loss_suite (void)
{
    Suite *s = suite_create ("guard_loss");
    TCase *tc = tcase_create ("saved");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_untrusted_climb_goes_back_to_its_start);
    tcase_add_test (tc, test_trusted_climb_moves_the_saved_point_until_its_record_rises);
    tcase_add_test (tc, test_jumps_in_a_row_end_in_keeping);
    tcase_add_test (tc, test_loss_coming_back_starts_a_new_row);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (guard_loss_suite)
