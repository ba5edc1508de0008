/*  Which clients' paths are slower than the others' (server/turn_slow.c),
    in-process, with the turns' lengths made up. Honest turns drawn from
    the turns of two test-bed runs of a server built to log each (32
    clients behind 104.63 Mbit/s, 3,065 turns: a third within 2 ms, the
    rest mostly 20-70 ms, the longest 283 ms) never get a client judged,
    in 20,000 turns; a client whose turns take ten times their median
    (a path of its own at a tenth of the link) is judged at every turn
    from its fourth; one whose turns take 4 times the others' never is,
    one at 5 times is; a client whose path becomes as fast as the
    others' keeps its turns again within a few. Against an attacker that
    knows it: the judgement only ever takes turns away; ids whose turns
    take no time at all cannot get an honest client judged until they
    take three turns in four (the others' mean then about a quarter of
    its).  */
#include "testutil.h"

#include "turn_slow.h"

#define S_MS 1000                       /* µs */

/*  The honest turns of two test-bed runs (experiments/data/turn-lengths/,
    whose report.py prints this table; the slow client's left out), at
    these fractions of them, in ms: turns between are drawn on the lines
    between.  */
static const double s_frac [] = { 0, .05, .1, .15, .2, .25, .3, .35, .4, .45, .5, .55, .6, .65, .7, .75, .8, .85,
                                  .9, .95, .975, .99, .995, .999, 1 };
static const double s_ms [] = { 0.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 2.2, 19.9, 23.5, 25.1, 25.9, 28.6, 33.0, 37.7,
                                43.3, 49.1, 51.1, 57.0, 67.3, 75.2, 86.7, 94.0, 120.3, 283.1 };

static uint64_t s_rng = 88172645463325252ULL;

/*  In [0, 1).  */
static double
s_uniform (void)
{
    s_rng ^= s_rng << 13;
    s_rng ^= s_rng >> 7;
    s_rng ^= s_rng << 17;
    return (double) (s_rng >> 11) / 9007199254740992.0;
}

/*  An honest turn, in µs.  */
static int64_t
s_honest (void)
{
    double u = s_uniform ();
    size_t i = 0;
    while (i + 2 < sizeof s_frac / sizeof s_frac [0] && u >= s_frac [i + 1])
        i++;
    double f = (u - s_frac [i]) / (s_frac [i + 1] - s_frac [i]);
    return (int64_t) ((s_ms [i] + f * (s_ms [i + 1] - s_ms [i])) * S_MS);
}

/*  A turn of c's of took µs: whether it judged c slower.  */
static int
s_turn (fasgd_srv_turn_slow_t *t, fasgd_srv_turn_pace_t *c, int64_t took)
{
    fasgd_srv_turn_slow_ended (t, took);
    return fasgd_srv_turn_slow_client (t, c, took);
}

START_TEST (test_slow_needs_history)
{
    fasgd_srv_turn_slow_t t;
    fasgd_srv_turn_pace_t c = { 0, 0 }, h = { 0, 0 };
    fasgd_srv_turn_slow_init (&t, 4, 10);
    /*  Judged from its fourth turn, not before.  */
    for (int i = 0; i < 40; i++)
        s_turn (&t, &h, 25 * S_MS);
    for (int i = 1; i <= 3; i++)
        ck_assert_int_eq (s_turn (&t, &c, 250 * S_MS), 0);
    ck_assert_int_eq (s_turn (&t, &c, 250 * S_MS), 1);
    /*  Never under turns.slow_min_ms, however many times the others'.  */
    fasgd_srv_turn_slow_init (&t, 4, 10);
    c = (fasgd_srv_turn_pace_t) { 0, 0 };
    for (int i = 0; i < 40; i++)
        s_turn (&t, &h, 1 * S_MS);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (s_turn (&t, &c, 9 * S_MS), 0);
    /*  Factor 0: never.  */
    fasgd_srv_turn_slow_init (&t, 0, 10);
    c = (fasgd_srv_turn_pace_t) { 0, 0 };
    for (int i = 0; i < 40; i++)
        s_turn (&t, &h, 25 * S_MS);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (s_turn (&t, &c, 2500 * S_MS), 0);
}
END_TEST

START_TEST (test_slow_honest_and_a_slow_path)
{
    enum { S_CLIENTS = 33, S_TURNS = 20000 };
    fasgd_srv_turn_slow_t t;
    fasgd_srv_turn_pace_t c [S_CLIENTS];
    memset (c, 0, sizeof c);
    fasgd_srv_turn_slow_init (&t, 4, 10);
    int honest_judged = 0, slow_judged = 0, slow_turns = 0;
    for (int i = 0; i < S_TURNS; i++) {
        int k = (int) (s_uniform () * S_CLIENTS);
        if (k < S_CLIENTS - 1)
            honest_judged += s_turn (&t, &c [k], s_honest ());
        else {
            /*  Ten times the median: a path of its own at a tenth.  */
            int judged = s_turn (&t, &c [k], 250 * S_MS);
            if (c [k].n >= 4) {
                slow_judged += judged;
                slow_turns++;
            }
        }
    }
    ck_assert_int_eq (honest_judged, 0);
    ck_assert_int_gt (slow_turns, 400);
    ck_assert_int_eq (slow_judged, slow_turns);
}
END_TEST

START_TEST (test_slow_at_the_factor)
{
    for (int over = 0; over <= 1; over++) {
        fasgd_srv_turn_slow_t t;
        fasgd_srv_turn_pace_t h [31], c = { 0, 0 };
        memset (h, 0, sizeof h);
        fasgd_srv_turn_slow_init (&t, 4, 10);
        int judged = 0;
        for (int round = 0; round < 200; round++) {
            for (int k = 0; k < 31; k++)
                ck_assert_int_eq (s_turn (&t, &h [k], 25 * S_MS), 0);
            /*  Its own turns lift the others' mean (each weighs a 32nd,
                and counts at once): 4 times the honest ones stays
                under, 5 goes over.  */
            judged += s_turn (&t, &c, over ? 125 * S_MS : 100 * S_MS);
        }
        if (over)
            ck_assert_int_eq (judged, 200 - 3);
        else
            ck_assert_int_eq (judged, 0);
    }
}
END_TEST

START_TEST (test_slow_path_becomes_fast)
{
    fasgd_srv_turn_slow_t t;
    fasgd_srv_turn_pace_t h = { 0, 0 }, c = { 0, 0 };
    fasgd_srv_turn_slow_init (&t, 4, 10);
    /*  Its turns and eight of others' in turn.  */
    int judged = 0;
    for (int i = 0; i < 20; i++) {
        for (int k = 0; k < 8; k++)
            s_turn (&t, &h, 25 * S_MS);
        judged = s_turn (&t, &c, 250 * S_MS);
    }
    ck_assert_int_eq (judged, 1);
    /*  As fast as the others now: judged slower for a few turns more
        (its mean falling by a quarter of the gap each), then not.  */
    int i = 0;
    for (judged = 1; judged && i < 100; i++) {
        for (int k = 0; k < 8; k++)
            s_turn (&t, &h, 25 * S_MS);
        judged = s_turn (&t, &c, 25 * S_MS);
    }
    ck_assert_int_le (i, 6);
    for (int j = 0; j < 100; j++) {
        for (int k = 0; k < 8; k++)
            s_turn (&t, &h, 25 * S_MS);
        ck_assert_int_eq (s_turn (&t, &c, 25 * S_MS), 0);
    }
}
END_TEST

START_TEST (test_slow_fast_ids_against_an_honest_client)
{
    /*  Ids whose turns take no time (1 µs) take n of every n + 1 turns,
        an honest client with turns of 25 ms the rest: n = 1 and 2
        cannot get it judged; n = 3 gets the others' mean to about a
        quarter of its, n = 8 well under, and it goes without turns, as
        with turns off.  */
    const int n_of [] = { 1, 2, 3, 8 };
    const int judged_of [] = { 0, 0, -1, 1 };         /* -1: either */
    for (size_t m = 0; m < sizeof n_of / sizeof n_of [0]; m++) {
        fasgd_srv_turn_slow_t t;
        fasgd_srv_turn_pace_t c = { 0, 0 }, fast = { 0, 0 };
        fasgd_srv_turn_slow_init (&t, 4, 10);
        int judged = 0;
        for (int round = 0; round < 2000; round++) {
            for (int k = 0; k < n_of [m]; k++)
                s_turn (&t, &fast, 1);
            judged = s_turn (&t, &c, 25 * S_MS);
        }
        if (judged_of [m] >= 0)
            ck_assert_msg (judged == judged_of [m], "%d fast ids' turns to one honest: judged %d", n_of [m],
                           judged);
    }
}
END_TEST

static Suite *
turn_slow_suite (void)
{
    Suite *s = suite_create ("turn_slow");
    TCase *tc = tcase_create ("turn_slow");
    tcase_add_test (tc, test_slow_needs_history);
    tcase_add_test (tc, test_slow_honest_and_a_slow_path);
    tcase_add_test (tc, test_slow_at_the_factor);
    tcase_add_test (tc, test_slow_path_becomes_fast);
    tcase_add_test (tc, test_slow_fast_ids_against_an_honest_client);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (turn_slow_suite)
