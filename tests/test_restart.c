/*  The guard's state across a restart, in-process: a server's params,
    guard (with a model of its own, so a reference and the held-out loss
    check), registry and checkpoint; then another set of them resumed
    from that checkpoint, as fasgd-server --resume builds them. A CURVE
    key whose client the loss check had cut is cut again when it joins
    the resumed server, and past its probation; another key starts anew;
    the loss check's saved θ and the norm bound come back too; so does
    the staleness clock, which goes on as if there had been no restart.  */
#include "testutil.h"
#include "toyserver.h"

#include "../common/checkpoint.h"
#include "staleness.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

/*  Two CURVE keys (Z85).  */
#define S_KEY_CUT "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
#define S_KEY_NEW "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"

/*  A fresh folder (dir) for a test's checkpoint, at path in it.  */
static void
s_folder (char dir [64], char path [128])
{
    snprintf (dir, 64, "/tmp/fasgd-test-restart-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (path, 128, "%s/ckpt", dir);
}

/*  Removes that folder and what it holds.  */
static void
s_folder_end (const char *dir)
{
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq (system (cmd), 0);
}

/*  Builds a server on checkpoint file path; resumes from it when resume.  */
static void
s_server (toy_server_t *s, const char *path, int resume)
{
    char file [256];
    snprintf (file, sizeof file, "checkpoint.file=%s", path);
    const char *sets [] = { file, "guard.examples=32", "guard.every=1", "guard.loss_examples=32", NULL };
    toy_server (s, sets, 1, resume);
}

/*  The description the server's checkpoints carry (its model's
    tensors, its rule), as server/checkpoint.c builds it.  */
static void
s_desc (const toy_server_t *s, fasgd_checkpoint_desc_t *d)
{
    memset (d, 0, sizeof *d);
    d->rule = s->cfg.rule.name;
    d->params = s->params->n;
    d->state_len = fasgd_rule_state_size (s->params->rule);
    d->ntensors = fasgd_model_ntensors (s->model);
    for (int i = 0; i < d->ntensors; i++) {
        const fasgd_tensor_t *t = fasgd_model_tensor (s->model, i);
        snprintf (d->tensors [i].name, sizeof d->tensors [i].name, "%s", t->name);
        d->tensors [i].ndim = 2;
        d->tensors [i].dims [0] = (uint64_t) t->rows;
        d->tensors [i].dims [1] = (uint64_t) t->cols;
    }
}

/*  A push of c: the model's own gradient at θ on the validation set's
    first 32 examples (a push that predicts descent), judged and, when
    the guard says so, applied (the guard's bookkeeping only). Its weight.  */
static double
s_push (toy_server_t *s, fasgd_srv_client_t *c)
{
    size_t n = s->params->n;
    float *g = calloc (n, sizeof (float));
    ck_assert_ptr_nonnull (g);
    fasgd_model_ws_t *ws = fasgd_model_ws_new (s->model, 32);
    ck_assert_ptr_nonnull (ws);
    fasgd_model_gradient (s->model, ws, s->params->theta, s->valid->x, s->valid->y, 32, g, NULL);
    fasgd_model_ws_destroy (&ws);
    double weight = toy_push (s, c, g);
    free (g);
    return weight;
}

START_TEST (test_cut_key_stays_cut_after_a_restart)
{
    char dir [64], path [128];
    s_folder (dir, path);
    toy_server_t s;
    s_server (&s, path, 0);
    /*  A client past its probation, with a good mean score, whose record
        with the loss check is as the check leaves a client after whose
        pushes the held-out loss rose by e^(3b): it is cut.  */
    fasgd_srv_client_t *c = toy_join (&s, S_KEY_CUT);
    double b = s.cfg.guard_loss_rise;
    c->verdict.pushes = 100;
    c->verdict.sum = 10;
    c->verdict.count = 10;
    c->loss_rise = 3 * b;
    s_push (&s, c);
    ck_assert_uint_eq (c->loss_cut, 1);
    ck_assert_uint_eq (s.st.loss_cut, 1);
    double rise = c->loss_rise;
    ck_assert (rise > 2.9 * b);
    /*  A client without a key, past its probation, whose push is applied
        in full: its norm bounds the next pushes.  */
    fasgd_srv_client_t *plain = toy_join (&s, NULL);
    plain->verdict.pushes = 100;
    plain->verdict.sum = 10;
    plain->verdict.count = 10;
    ck_assert_double_eq (s_push (&s, plain), 1);
    double median = fasgd_srv_guard_median (s.guard);
    ck_assert (median > 0);
    /*  θ moves on after the loss check saved it at that reference.  */
    float *saved = malloc (s.params->n * sizeof (float));
    ck_assert_ptr_nonnull (saved);
    memcpy (saved, s.params->theta, s.params->n * sizeof (float));
    for (size_t i = 0; i < s.params->n; i++)
        s.params->theta [i] += 0.01f;
    ck_assert_int_eq (fasgd_srv_checkpoint_write (s.ck, NULL, 0), 0);
    toy_server_end (&s);

    /*  Resumed: the key's client that joins again is cut at its first
        push, out of probation; a client of another key starts anew.  */
    s_server (&s, path, 1);
    ck_assert_double_eq (fasgd_srv_guard_median (s.guard), median);
    fasgd_srv_client_t *again = toy_join (&s, S_KEY_CUT), *fresh = toy_join (&s, S_KEY_NEW);
    ck_assert_double_eq_tol (again->loss_rise, rise, 1e-12);
    ck_assert (again->verdict.pushes >= 101);
    ck_assert (again->typical_kept && again->norm_typical > 0);     /* its key's vote */
    ck_assert_double_eq (fresh->loss_rise, 0);
    ck_assert_double_eq (fresh->verdict.pushes, 0);
    /*  The loss check's saved θ came back: a checkpoint written now holds
        it, not θ.  */
    char err [256] = "";
    ck_assert_int_eq (fasgd_srv_checkpoint_write (s.ck, err, sizeof err), 0);
    fasgd_checkpoint_desc_t desc;
    s_desc (&s, &desc);
    fasgd_checkpoint_t *ck = fasgd_checkpoint_read (path, &desc, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s", err);
    ck_assert_ptr_nonnull (ck->saved);
    ck_assert_int_eq (memcmp (ck->saved, saved, s.params->n * sizeof (float)), 0);
    /*  One key's record: the other key's client has not pushed yet.  */
    ck_assert_uint_eq (ck->guard.nkeys, 1);
    ck_assert_str_eq (ck->guard.keys [0].key, S_KEY_CUT);
    ck_assert (ck->guard.nnorms >= 1);
    fasgd_checkpoint_destroy (&ck);
    s_push (&s, again);
    ck_assert_uint_eq (again->loss_cut, 1);
    ck_assert_uint_eq (s.st.loss_cut, 1);
    s_push (&s, fresh);
    ck_assert_uint_eq (fresh->loss_cut, 0);
    /*  And it leaves and comes back within the same run: cut still.  */
    fasgd_srv_registry_free (s.reg, again);
    again = toy_join (&s, S_KEY_CUT);
    ck_assert (again->loss_rise > 2.9 * b);
    s_push (&s, again);
    ck_assert_uint_eq (again->loss_cut, 1);
    toy_server_end (&s);
    free (saved);
    s_folder_end (dir);
}
END_TEST

/*  The staleness clock across a restart, as fasgd-server builds it
    (server.c): a clock that counts movement, whose updates were mostly
    tiny, is in the checkpoint; resumed, a push computed at a θ from
    before the restart gets the τ it would have had without the restart
    (not the count of the updates since), and the clock goes on as the
    one before. A count clock takes nothing from the checkpoint.  */
START_TEST (test_staleness_clock_continues_after_a_restart)
{
    char dir [64], path [128];
    s_folder (dir, path);
    toy_server_t s;
    s_server (&s, path, 0);
    fasgd_staleness_clock_t *before = fasgd_staleness_new (1, s.params->T);
    ck_assert_ptr_nonnull (before);
    fasgd_srv_checkpoint_staleness (s.ck, before);
    /*  300 updates as dispatch.c counts them against an honest norm of
        1: nine in ten of norm 0.01, one in ten larger than an honest push.  */
    uint64_t T0 = s.params->T;
    for (int i = 0; i < 300; i++) {
        fasgd_srv_params_set_T (s.params, s.params->T + 1);
        fasgd_staleness_advance (before, s.params->T, fasgd_staleness_count (i % 10 ? 0.01 : 2.5, 1));
    }
    uint64_t T = s.params->T;
    uint64_t tau = fasgd_staleness_tau (before, T, T0);
    ck_assert_uint_eq (tau, 33);                        /* 30 + 270 · 0.01 */
    ck_assert_int_eq (fasgd_srv_checkpoint_write (s.ck, NULL, 0), 0);
    toy_server_end (&s);

    s_server (&s, path, 1);
    ck_assert_uint_eq (s.params->T, T);
    fasgd_staleness_clock_t *after = fasgd_staleness_new (1, s.params->T);
    ck_assert_ptr_nonnull (after);
    fasgd_srv_checkpoint_staleness (s.ck, after);
    ck_assert_uint_eq (fasgd_staleness_tau (after, T, T0), tau);
    for (uint64_t j = 0; j <= T; j++)
        ck_assert_uint_eq (fasgd_staleness_tau (after, T, j), fasgd_staleness_tau (before, T, j));
    for (int i = 0; i < 50; i++) {
        fasgd_srv_params_set_T (s.params, s.params->T + 1);
        double count = fasgd_staleness_count (i % 3 ? 0.2 : 1, 1);
        fasgd_staleness_advance (before, s.params->T, count);
        fasgd_staleness_advance (after, s.params->T, count);
    }
    T = s.params->T;
    for (uint64_t j = 0; j <= T; j++)
        ck_assert_uint_eq (fasgd_staleness_tau (after, T, j), fasgd_staleness_tau (before, T, j));
    /*  The resumed server's checkpoint holds the clock it goes on with.  */
    ck_assert_int_eq (fasgd_srv_checkpoint_write (s.ck, NULL, 0), 0);
    toy_server_end (&s);
    fasgd_checkpoint_desc_t desc;
    s_server (&s, path, 0);
    s_desc (&s, &desc);
    char err [256] = "";
    fasgd_checkpoint_t *ck = fasgd_checkpoint_read (path, &desc, err, sizeof err);
    ck_assert_msg (ck != NULL, "%s", err);
    static double sums [FASGD_STALENESS_WINDOW];
    size_t n = fasgd_staleness_sums (before, sums, FASGD_STALENESS_WINDOW);
    ck_assert_uint_eq (n, 351);
    ck_assert_uint_eq (ck->nclock, n);
    ck_assert_int_eq (memcmp (ck->clock, sums, n * sizeof *sums), 0);
    fasgd_checkpoint_destroy (&ck);
    toy_server_end (&s);
    /*  With guard.staleness count: τ is the count, the sums unused.  */
    s_server (&s, path, 1);
    fasgd_staleness_clock_t *count = fasgd_staleness_new (0, s.params->T);
    ck_assert_ptr_nonnull (count);
    fasgd_srv_checkpoint_staleness (s.ck, count);
    ck_assert_uint_eq (fasgd_staleness_tau (count, T, T0), T - T0);
    toy_server_end (&s);
    fasgd_staleness_destroy (&count);
    fasgd_staleness_destroy (&after);
    fasgd_staleness_destroy (&before);
    s_folder_end (dir);
}
END_TEST

static Suite *
restart_suite (void)
{
    Suite *s = suite_create ("restart");
    TCase *tc = tcase_create ("guard");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_cut_key_stays_cut_after_a_restart);
    tcase_add_test (tc, test_staleness_clock_continues_after_a_restart);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (restart_suite)
