/*  The staleness clock (common/staleness.c): the τ the rule divides by.
    Counting, it is T − j. With movement, each update counts min(1,
    ‖g‖/ν): tiny updates add next to nothing, honest ones one each, and
    it is never more than the count; updates before its start (a resume)
    or older than its window count one each.  */
#include "testutil.h"

#include "staleness.h"

#include <stdint.h>

START_TEST (test_count)
{
    fasgd_staleness_clock_t *s = fasgd_staleness_new (0, 10);
    ck_assert_ptr_nonnull (s);
    ck_assert_int_eq (fasgd_staleness_movement (s), 0);
    for (uint64_t T = 11; T <= 20; T++)
        fasgd_staleness_advance (s, T, 0);
    ck_assert_uint_eq (fasgd_staleness_tau (s, 20, 12), 8);
    ck_assert_uint_eq (fasgd_staleness_tau (s, 20, 20), 0);
    fasgd_staleness_destroy (&s);
    ck_assert_ptr_null (s);
}
END_TEST

START_TEST (test_count_of_an_update)
{
    ck_assert (fasgd_staleness_count (1e-4, 1) == 1e-4);
    ck_assert (fasgd_staleness_count (0.5, 2) == 0.25);
    ck_assert (fasgd_staleness_count (3, 2) == 1);
    ck_assert (fasgd_staleness_count (0, 2) == 0);
    /*  No honest norm yet (the first pushes): every update counts one.  */
    ck_assert (fasgd_staleness_count (1e-4, 0) == 1);
    ck_assert (fasgd_staleness_count (1e-4, -1) == 1);
}
END_TEST

/*  Three honest updates and many tiny ones between: a push computed
    before them all sees the honest ones alone.  */
START_TEST (test_tiny_updates_add_nothing)
{
    fasgd_staleness_clock_t *s = fasgd_staleness_new (1, 0);
    uint64_t T = 0;
    for (int h = 0; h < 3; h++) {
        fasgd_staleness_advance (s, ++T, fasgd_staleness_count (1.3, 1));
        for (int k = 0; k < 16; k++)
            fasgd_staleness_advance (s, ++T, fasgd_staleness_count (1e-4, 1));
    }
    ck_assert_uint_eq (T, 51);
    ck_assert_uint_eq (fasgd_staleness_tau (s, T, 0), 3);
    /*  From just after the first honest one: two.  */
    ck_assert_uint_eq (fasgd_staleness_tau (s, T, 1), 2);
    /*  Halves count as halves, rounded to the nearest: 4 × 0.5 = 2.  */
    for (int k = 0; k < 4; k++)
        fasgd_staleness_advance (s, ++T, 0.5);
    ck_assert_uint_eq (fasgd_staleness_tau (s, T, T - 4), 2);
    /*  A count outside [0, 1] counts one.  */
    fasgd_staleness_advance (s, ++T, 7);
    fasgd_staleness_advance (s, ++T, -1);
    ck_assert_uint_eq (fasgd_staleness_tau (s, T, T - 2), 2);
    fasgd_staleness_destroy (&s);
}
END_TEST

/*  Never more than the count, whatever the updates counted.  */
START_TEST (test_never_above_the_count)
{
    fasgd_staleness_clock_t *s = fasgd_staleness_new (1, 100);
    for (uint64_t T = 101; T <= 200; T++)
        fasgd_staleness_advance (s, T, 1);
    for (uint64_t j = 100; j <= 200; j++)
        ck_assert_uint_eq (fasgd_staleness_tau (s, 200, j), 200 - j);
    fasgd_staleness_destroy (&s);
}
END_TEST

/*  A resume (a timestamp that is not the next) starts the clock anew:
    what came before counts one each, and so do updates older than the
    window; a timestamp the clock has not reached is counted.  */
START_TEST (test_start_and_window)
{
    fasgd_staleness_clock_t *s = fasgd_staleness_new (1, 0);
    for (uint64_t T = 1; T <= 10; T++)
        fasgd_staleness_advance (s, T, 0);
    ck_assert_uint_eq (fasgd_staleness_tau (s, 10, 0), 0);
    fasgd_staleness_advance (s, 1000, 0);
    for (uint64_t T = 1001; T <= 1010; T++)
        fasgd_staleness_advance (s, T, 0);
    ck_assert_uint_eq (fasgd_staleness_tau (s, 1010, 1000), 0);
    ck_assert_uint_eq (fasgd_staleness_tau (s, 1010, 990), 10);
    ck_assert_uint_eq (fasgd_staleness_tau (s, 1011, 1000), 11);
    /*  Past the window: 200,000 tiny updates, of which the oldest beyond
        the ring's 65,536 count one each.  */
    uint64_t T0 = 1010;
    for (uint64_t T = T0 + 1; T <= T0 + 200000; T++)
        fasgd_staleness_advance (s, T, 0);
    uint64_t T = T0 + 200000;
    ck_assert_uint_eq (fasgd_staleness_tau (s, T, T - 1000), 0);
    ck_assert_uint_eq (fasgd_staleness_tau (s, T, T - 65535), 0);
    ck_assert_uint_eq (fasgd_staleness_tau (s, T, T - 65536), 1);
    ck_assert_uint_eq (fasgd_staleness_tau (s, T, T0), 200000 - 65535);
    fasgd_staleness_destroy (&s);
}
END_TEST

/*  A varied count for the i-th update: 0, tiny, halves, whole ones.  */
static double
s_count (uint64_t i)
{
    static const double counts [] = { 0, 1e-4, 0.5, 1, 0.25, 0.999, 0.03, 1 };
    return counts [(i * 7 + i / 3) % 8] * (i % 11 ? 1 : 0.5);
}

/*  a and b, both at T, give every push from j = 0 on the same τ.  */
static void
s_same_tau (const fasgd_staleness_clock_t *a, const fasgd_staleness_clock_t *b, uint64_t T)
{
    for (uint64_t j = 0; j <= T; j++)
        ck_assert_msg (fasgd_staleness_tau (a, T, j) == fasgd_staleness_tau (b, T, j),
                       "T=%llu j=%llu: tau %llu and %llu", (unsigned long long) T, (unsigned long long) j,
                       (unsigned long long) fasgd_staleness_tau (a, T, j),
                       (unsigned long long) fasgd_staleness_tau (b, T, j));
}

/*  The clock's sums, exported at T and restored into a new clock, give
    the same τ and continue as the original (what a checkpoint and a
    resume do); within the window and past it.  */
START_TEST (test_sums_restore)
{
    static double w [FASGD_STALENESS_WINDOW + 1];
    fasgd_staleness_clock_t *s = fasgd_staleness_new (1, 40);
    uint64_t T = 40;
    for (int i = 0; i < 300; i++, T++)
        fasgd_staleness_advance (s, T + 1, s_count ((uint64_t) i));
    size_t n = fasgd_staleness_sums (s, w, FASGD_STALENESS_WINDOW);
    ck_assert_uint_eq (n, 301);
    ck_assert (w [0] == 0);
    for (size_t i = 1; i < n; i++)
        ck_assert (w [i] >= w [i - 1] && w [i] <= w [i - 1] + 1);
    ck_assert_uint_eq (fasgd_staleness_sums (s, w, 10), 10);
    ck_assert_uint_eq (fasgd_staleness_sums (s, w, 0), 0);
    n = fasgd_staleness_sums (s, w, FASGD_STALENESS_WINDOW);
    fasgd_staleness_clock_t *r = fasgd_staleness_new (1, T);
    fasgd_staleness_restore (r, T, w, n);
    s_same_tau (s, r, T);
    /*  A fresh clock tells those updates one each: the test tells.  */
    fasgd_staleness_clock_t *fresh = fasgd_staleness_new (1, T);
    ck_assert_uint_eq (fasgd_staleness_tau (fresh, T, 40), 300);
    ck_assert_uint_lt (fasgd_staleness_tau (r, T, 40), 300);
    fasgd_staleness_destroy (&fresh);
    for (int i = 0; i < 200; i++, T++) {
        fasgd_staleness_advance (s, T + 1, s_count ((uint64_t) i + 999));
        fasgd_staleness_advance (r, T + 1, s_count ((uint64_t) i + 999));
    }
    s_same_tau (s, r, T);
    fasgd_staleness_destroy (&r);
    /*  Past the window: 65,536 sums, oldest first, and the same τ for
        every j, those beyond the window counting one each in both.  */
    for (int i = 0; i < 70000; i++, T++)
        fasgd_staleness_advance (s, T + 1, s_count ((uint64_t) i * 3));
    n = fasgd_staleness_sums (s, w, FASGD_STALENESS_WINDOW + 1);
    ck_assert_uint_eq (n, FASGD_STALENESS_WINDOW);
    r = fasgd_staleness_new (1, 0);
    fasgd_staleness_restore (r, T, w, n);
    s_same_tau (s, r, T);
    for (int i = 0; i < 1000; i++, T++) {
        fasgd_staleness_advance (s, T + 1, s_count ((uint64_t) i + 5));
        fasgd_staleness_advance (r, T + 1, s_count ((uint64_t) i + 5));
    }
    s_same_tau (s, r, T);
    fasgd_staleness_destroy (&r);
    /*  A clock that restarted (a T that was not the next) exports from
        its start; a fresh one its one sum.  */
    fasgd_staleness_advance (s, T + 10, 1);
    fasgd_staleness_advance (s, T + 11, 0.5);
    ck_assert_uint_eq (fasgd_staleness_sums (s, w, FASGD_STALENESS_WINDOW), 2);
    ck_assert (w [0] == 0 && w [1] == 0.5);
    fasgd_staleness_destroy (&s);
    s = fasgd_staleness_new (1, 7);
    ck_assert_uint_eq (fasgd_staleness_sums (s, w, FASGD_STALENESS_WINDOW), 1);
    fasgd_staleness_destroy (&s);
}
END_TEST

/*  Without movement there is nothing to export, and nothing restored;
    a restore with no sums leaves the clock as it started.  */
START_TEST (test_sums_count_clock)
{
    double w [4] = { 0, 0, 0, 0 };
    fasgd_staleness_clock_t *s = fasgd_staleness_new (0, 10);
    fasgd_staleness_advance (s, 11, 0);
    ck_assert_uint_eq (fasgd_staleness_sums (s, w, 4), 0);
    fasgd_staleness_restore (s, 13, w, 4);
    ck_assert_uint_eq (fasgd_staleness_tau (s, 13, 10), 3);
    fasgd_staleness_destroy (&s);
    s = fasgd_staleness_new (1, 10);
    fasgd_staleness_restore (s, 10, w, 0);
    ck_assert_uint_eq (fasgd_staleness_tau (s, 10, 4), 6);
    /*  Four sums of no movement at T = 3: the clock knows W from 0.  */
    fasgd_staleness_restore (s, 3, w, 4);
    ck_assert_uint_eq (fasgd_staleness_tau (s, 3, 0), 0);
    fasgd_staleness_destroy (&s);
}
END_TEST

static Suite *
staleness_suite (void)
{
    Suite *s = suite_create ("staleness");
    TCase *tc = tcase_create ("staleness");
    tcase_add_test (tc, test_count);
    tcase_add_test (tc, test_count_of_an_update);
    tcase_add_test (tc, test_tiny_updates_add_nothing);
    tcase_add_test (tc, test_never_above_the_count);
    tcase_add_test (tc, test_start_and_window);
    tcase_add_test (tc, test_sums_restore);
    tcase_add_test (tc, test_sums_count_clock);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (staleness_suite)
