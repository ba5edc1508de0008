/*  A turn's bound (server/turn_hold.c), in-process, with the turns'
    lengths made up: it is turns.hold_ms until a turn has ended by
    itself, then four times the shortest lately, within its least and
    most. Against attackers that know it: any number of ids whose turns
    each end just within the bound, in a row, lift it by 1.65 times at
    most, and an honest turn brings it back; one that alternates with
    honest turns for ever lifts it by 1/128 at most; turns that end fast
    lower it only as far as turns.hold_min_ms. Honest turns that slow
    down little by little (0.5% a turn, to five times), or at once by
    almost the factor, are never cut.  */
#include "testutil.h"

#include "turn_hold.h"

#define S_MS 1000                       /* µs */

/*  A turn of took µs, cut when it held its bound: whether it was.  */
static int
s_turn (fasgd_srv_turn_hold_t *h, int64_t took)
{
    if (took >= fasgd_srv_turn_hold_us (h))
        return 1;
    fasgd_srv_turn_hold_ended (h, took);
    return 0;
}

START_TEST (test_hold_before_any_turn)
{
    fasgd_srv_turn_hold_t h;
    fasgd_srv_turn_hold_init (&h, 2000, 100, 4);
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 2000 * S_MS);
    ck_assert_int_eq (s_turn (&h, 300 * S_MS), 0);
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 1200 * S_MS);
    /*  Factor 0: turns.hold_ms alone.  */
    fasgd_srv_turn_hold_init (&h, 500, 100, 0);
    ck_assert_int_eq (s_turn (&h, 10 * S_MS), 0);
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 500 * S_MS);
}
END_TEST

START_TEST (test_hold_within_its_bounds)
{
    fasgd_srv_turn_hold_t h;
    fasgd_srv_turn_hold_init (&h, 2000, 100, 4);
    ck_assert_int_eq (s_turn (&h, 10 * S_MS), 0);
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 100 * S_MS);        /* not 40 ms */
    ck_assert_int_eq (s_turn (&h, 0), 0);                               /* a turn of no time */
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 100 * S_MS);
    fasgd_srv_turn_hold_init (&h, 2000, 100, 4);
    ck_assert_int_eq (s_turn (&h, 1900 * S_MS), 0);
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 2000 * S_MS);       /* not 7.6 s */
    fasgd_srv_turn_hold_init (&h, 50, 100, 4);                          /* the least above the most */
    ck_assert_int_eq (s_turn (&h, 1 * S_MS), 0);
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 50 * S_MS);
}
END_TEST

START_TEST (test_hold_many_ids_in_a_row)
{
    fasgd_srv_turn_hold_t h;
    fasgd_srv_turn_hold_init (&h, 100000, 1, 4);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (s_turn (&h, 50 * S_MS), 0);
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 200 * S_MS);
    /*  64 ids, each turn just within the bound of its start.  */
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq (s_turn (&h, fasgd_srv_turn_hold_us (&h) - 1), 0);
    int64_t lifted = fasgd_srv_turn_hold_us (&h);
    ck_assert_msg (lifted <= 200 * S_MS * 165 / 100, "64 slow turns lifted the bound to %lld µs", (long long) lifted);
    ck_assert_int_eq (s_turn (&h, 50 * S_MS), 0);
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 200 * S_MS);
    /*  Slow turns alternating with honest ones, a thousand times.  */
    for (int i = 0; i < 1000; i++) {
        ck_assert_int_eq (s_turn (&h, fasgd_srv_turn_hold_us (&h) - 1), 0);
        ck_assert_int_le (fasgd_srv_turn_hold_us (&h), 200 * S_MS * 129 / 128 + 8);
        ck_assert_int_eq (s_turn (&h, 50 * S_MS), 0);
    }
    /*  Turns that end fast (a client near the server) lower it only to
        the least.  */
    fasgd_srv_turn_hold_init (&h, 2000, 100, 4);
    ck_assert_int_eq (s_turn (&h, 1), 0);
    ck_assert_int_eq (fasgd_srv_turn_hold_us (&h), 100 * S_MS);
}
END_TEST

START_TEST (test_hold_honest_slowdown)
{
    fasgd_srv_turn_hold_t h;
    fasgd_srv_turn_hold_init (&h, 100000, 1, 4);
    double took = 50 * S_MS;
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (s_turn (&h, (int64_t) took), 0);
    /*  0.5% slower each turn, to five times.  */
    int turns = 0;
    for (; took < 250 * S_MS; took *= 1.005, turns++)
        ck_assert_msg (s_turn (&h, (int64_t) took) == 0, "cut after %d turns, at %.0f µs", turns, took);
    /*  Then 3.9 times slower at once.  */
    ck_assert_int_eq (s_turn (&h, (int64_t) (took * 3.9)), 0);
    /*  A turn 4.1 times the fastest is cut.  */
    ck_assert_int_eq (s_turn (&h, (int64_t) (fasgd_srv_turn_hold_us (&h) / 4 * 4.1)), 1);
}
END_TEST

static Suite *
turn_hold_suite (void)
{
    Suite *s = suite_create ("turn_hold");
    TCase *tc = tcase_create ("turn_hold");
    tcase_add_test (tc, test_hold_before_any_turn);
    tcase_add_test (tc, test_hold_within_its_bounds);
    tcase_add_test (tc, test_hold_many_ids_in_a_row);
    tcase_add_test (tc, test_hold_honest_slowdown);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (turn_hold_suite)
