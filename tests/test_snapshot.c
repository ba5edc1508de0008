/*  common/snapshot.c: the pool recycles buffers and counts what is out;
    references are counted atomically, released from any thread, also
    after the pool was destroyed (a reply ZeroMQ lets go of after the
    server stopped), the last of them freeing what is left of it; an
    update goes in place for a sole holder and copies on write when
    another holds θ, leaving the holder's image as it was; a buffered
    update (softsync) and a refused checked update (dcasgd's overflow)
    change nothing.  */
#include "testutil.h"

#include "snapshot.h"

#include <math.h>
#include <pthread.h>

#define N 8

static fasgd_rule_t *
s_rule (int kind, int group)
{
    fasgd_rule_params_t p;
    fasgd_rule_params_default (&p);
    p.kind = kind;
    p.lr = 0.5;
    p.softsync_group = group;
    char err [256];
    fasgd_rule_t *r = fasgd_rule_new (&p, N, err, sizeof err);
    ck_assert_msg (r != NULL, "fasgd_rule_new: %s", err);
    return r;
}

/*  A snapshot of θ = 1, 2, ..., N at timestamp ts.  */
static fasgd_snapshot_t *
s_theta (fasgd_snapshot_pool_t *pool, uint64_t ts)
{
    fasgd_snapshot_t *s = fasgd_snapshot_new (pool);
    ck_assert_ptr_nonnull (s);
    for (int i = 0; i < N; i++)
        s->theta [i] = (float) (i + 1);
    s->ts = ts;
    return s;
}

START_TEST (test_pool_recycles_and_counts)
{
    fasgd_snapshot_pool_t *pool = fasgd_snapshot_pool_new (N);
    ck_assert_ptr_nonnull (pool);
    fasgd_snapshot_t *a = fasgd_snapshot_new (pool), *b = fasgd_snapshot_new (pool);
    ck_assert (a && b && a->theta != b->theta);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 2);
    ck_assert_ptr_eq (fasgd_snapshot_ref (a), a);
    ck_assert_int_eq (a->refs, 2);
    fasgd_snapshot_release (a);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 2);     /* still held once */
    fasgd_snapshot_release (a);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 1);
    fasgd_snapshot_release (NULL);
    /*  The next one is a's buffer again, not a new allocation.  */
    float *was = a->theta;
    fasgd_snapshot_t *c = fasgd_snapshot_new (pool);
    ck_assert_ptr_eq (c->theta, was);
    ck_assert_int_eq (c->refs, 1);
    ck_assert_uint_eq (fasgd_snapshot_pool_peak (pool), 2);
    fasgd_snapshot_release (b);
    fasgd_snapshot_release (c);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 0);
    fasgd_snapshot_pool_destroy (&pool);
    ck_assert_ptr_null (pool);
    fasgd_snapshot_pool_destroy (&pool);
}
END_TEST

START_TEST (test_update_in_place_or_copy_on_write)
{
    fasgd_snapshot_pool_t *pool = fasgd_snapshot_pool_new (N);
    fasgd_rule_t *rule = s_rule (FASGD_RULE_ASGD, 1);
    fasgd_snapshot_t *cur = s_theta (pool, 7), *first = cur;
    float g [N];
    for (int i = 0; i < N; i++)
        g [i] = 1.0f;
    /*  Sole holder: θ changes in place.  */
    ck_assert_int_eq (fasgd_snapshot_apply (&cur, rule, g, 0, NULL), 1);
    ck_assert_ptr_eq (cur, first);
    ck_assert_float_eq (cur->theta [0], 0.5f);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 1);
    /*  A reader holds it (a reply being sent): the update goes into a
        fresh snapshot with the same ts, and the reader's image stays.  */
    fasgd_snapshot_t *reader = fasgd_snapshot_ref (cur);
    ck_assert_int_eq (fasgd_snapshot_apply (&cur, rule, g, 0, NULL), 1);
    ck_assert_ptr_ne (cur, reader);
    ck_assert_uint_eq (cur->ts, 7);
    ck_assert_float_eq (reader->theta [0], 0.5f);
    ck_assert_float_eq (reader->theta [N - 1], (float) N - 0.5f);
    ck_assert_float_eq (cur->theta [0], 0.0f);
    ck_assert_float_eq (cur->theta [N - 1], (float) N - 1.0f);
    ck_assert_int_eq (reader->refs, 1);                 /* the current one's reference went with it */
    ck_assert_int_eq (cur->refs, 1);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 2);
    fasgd_snapshot_release (reader);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 1);
    fasgd_snapshot_release (cur);
    fasgd_rule_destroy (&rule);
    fasgd_snapshot_pool_destroy (&pool);
}
END_TEST

START_TEST (test_buffered_update_changes_nothing)
{
    /*  softsync with c = 2: the first gradient is buffered (rc 0).  */
    fasgd_snapshot_pool_t *pool = fasgd_snapshot_pool_new (N);
    fasgd_rule_t *rule = s_rule (FASGD_RULE_SOFTSYNC, 2);
    fasgd_snapshot_t *cur = s_theta (pool, 3), *first = cur;
    fasgd_snapshot_t *reader = fasgd_snapshot_ref (cur);
    float g [N];
    for (int i = 0; i < N; i++)
        g [i] = 1.0f;
    ck_assert_int_eq (fasgd_snapshot_apply (&cur, rule, g, 0, NULL), 0);
    ck_assert_ptr_eq (cur, first);
    ck_assert_float_eq (cur->theta [0], 1.0f);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 1);     /* the fresh one went back */
    /*  The second completes the group: a fresh snapshot, as a reader holds θ.  */
    ck_assert_int_eq (fasgd_snapshot_apply (&cur, rule, g, 0, NULL), 1);
    ck_assert_ptr_ne (cur, first);
    ck_assert_float_eq (reader->theta [0], 1.0f);
    ck_assert_float_lt (cur->theta [0], 1.0f);
    fasgd_snapshot_release (reader);
    fasgd_snapshot_release (cur);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 0);
    fasgd_rule_destroy (&rule);
    fasgd_snapshot_pool_destroy (&pool);
}
END_TEST

START_TEST (test_checked_update)
{
    fasgd_snapshot_pool_t *pool = fasgd_snapshot_pool_new (N);
    fasgd_rule_t *rule = s_rule (FASGD_RULE_DCASGD, 1);
    fasgd_snapshot_t *cur = s_theta (pool, 5), *first = cur;
    float used [N], g [N];
    for (int i = 0; i < N; i++) {
        used [i] = -1e30f;              /* θ − θ_used ≈ 1e30: g²·(θ − θ_used) overflows */
        g [i] = 1e10f;
    }
    ck_assert_int_eq (fasgd_snapshot_apply_checked (&cur, rule, g, 1, used), -3);
    ck_assert_ptr_eq (cur, first);
    ck_assert_float_eq (cur->theta [0], 1.0f);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 1);
    /*  A finite update: always a fresh snapshot, even for a sole holder.  */
    for (int i = 0; i < N; i++) {
        used [i] = cur->theta [i];
        g [i] = 1.0f;
    }
    ck_assert_int_eq (fasgd_snapshot_apply_checked (&cur, rule, g, 0, used), 1);
    ck_assert_ptr_ne (cur, first);
    ck_assert_uint_eq (cur->ts, 5);
    ck_assert_float_eq (cur->theta [0], 0.5f);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 1);
    fasgd_snapshot_release (cur);
    fasgd_rule_destroy (&rule);
    fasgd_snapshot_pool_destroy (&pool);
}
END_TEST

#define S_THREADS 4
#define S_RELEASES 100000

static void *
s_releaser (void *arg)
{
    for (int i = 0; i < S_RELEASES; i++)
        fasgd_snapshot_release (arg);
    return NULL;
}

/*  References taken by the owner and released by four threads at once
    (as ZeroMQ's I/O thread and the evaluator do): none lost, none twice.  */
START_TEST (test_release_from_threads)
{
    fasgd_snapshot_pool_t *pool = fasgd_snapshot_pool_new (N);
    fasgd_snapshot_t *s = s_theta (pool, 0);
    for (int i = 0; i < S_THREADS * S_RELEASES; i++)
        fasgd_snapshot_ref (s);
    pthread_t t [S_THREADS];
    for (int k = 0; k < S_THREADS; k++)
        ck_assert_int_eq (pthread_create (&t [k], NULL, s_releaser, s), 0);
    for (int k = 0; k < S_THREADS; k++)
        pthread_join (t [k], NULL);
    ck_assert_int_eq (s->refs, 1);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 1);
    fasgd_snapshot_release (s);
    ck_assert_uint_eq (fasgd_snapshot_pool_live (pool), 0);
    fasgd_snapshot_pool_destroy (&pool);
}
END_TEST

static void *
s_releaser_once (void *snap)
{
    fasgd_snapshot_release (snap);
    return NULL;
}

/*  A pool destroyed while snapshots are out (one free, two held, one
    twice): they stay whole until released, from another thread too,
    and the last release frees the rest of the pool (under AddressSanitizer
    a use after free or a leak fails the test).  */
START_TEST (test_release_after_pool_destroyed)
{
    fasgd_snapshot_pool_t *pool = fasgd_snapshot_pool_new (N);
    fasgd_snapshot_t *a = s_theta (pool, 1), *b = s_theta (pool, 2), *c = s_theta (pool, 3);
    fasgd_snapshot_release (c);
    fasgd_snapshot_ref (b);
    fasgd_snapshot_pool_destroy (&pool);
    ck_assert_ptr_null (pool);
    for (int i = 0; i < N; i++)
        ck_assert_float_eq (a->theta [i] + b->theta [i], 2.0f * (float) (i + 1));
    fasgd_snapshot_release (a);
    fasgd_snapshot_release (b);
    ck_assert_float_eq (b->theta [N - 1], (float) N);
    pthread_t t;
    ck_assert_int_eq (pthread_create (&t, NULL, s_releaser_once, b), 0);
    pthread_join (t, NULL);
}
END_TEST

static Suite *
snapshot_suite (void)
{
    Suite *s = suite_create ("snapshot");
    TCase *tc = tcase_create ("snapshot");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_pool_recycles_and_counts);
    tcase_add_test (tc, test_update_in_place_or_copy_on_write);
    tcase_add_test (tc, test_buffered_update_changes_nothing);
    tcase_add_test (tc, test_checked_update);
    tcase_add_test (tc, test_release_from_threads);
    tcase_add_test (tc, test_release_after_pool_destroyed);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (snapshot_suite)
