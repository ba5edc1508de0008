/*  The guard's held-out loss check (server/guard_loss.c), in-process: the
    θ a jump sets θ back to. A client pushing θ up the loss by a factor
    below 1.28 a measure, each step too small to be a jump, climbs until
    the loss is a factor e above the saved one and θ is set back. Where it
    is set back to is the point: a client not in good standing (the
    score's marks not earned, or its loss record above guard.loss_rise)
    cannot move it, so θ goes back to where the climb began; one in good
    standing moves it while the loss has not risen after its pushes.  */
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
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (guard_loss_suite)
