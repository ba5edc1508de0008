/*  rng: fixed sequences (the platform-independence contract), ranges and
    moments.  */
#include "rng.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

START_TEST (test_reference_sequence)
{
    /*  pcg32_srandom_r (42, 54) from the PCG reference implementation
        (pcg32-demo) prints these first six outputs.  */
    fasgd_rng_t r;
    fasgd_rng_seed (&r, 42u, 54u);
    const uint32_t expect [] = {
        0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect [0]; i++)
        ck_assert_uint_eq (fasgd_rng_u32 (&r), expect [i]);
}
END_TEST

START_TEST (test_streams_differ)
{
    fasgd_rng_t a, b;
    fasgd_rng_seed (&a, 7, 1);
    fasgd_rng_seed (&b, 7, 2);
    int same = 0;
    for (int i = 0; i < 64; i++)
        same += fasgd_rng_u32 (&a) == fasgd_rng_u32 (&b);
    ck_assert_int_lt (same, 2);
}
END_TEST

START_TEST (test_uniform_range_and_mean)
{
    fasgd_rng_t r;
    fasgd_rng_seed (&r, 1, 0);
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double u = fasgd_rng_uniform (&r);
        ck_assert (u >= 0.0 && u < 1.0);
        sum += u;
    }
    /*  The standard error of the mean is sqrt(1/12/n) ~ 6.5e-4.  */
    ck_assert_double_eq_tol (sum / n, 0.5, 0.004);
}
END_TEST

START_TEST (test_below_bounds_and_balance)
{
    fasgd_rng_t r;
    fasgd_rng_seed (&r, 3, 0);
    int count [7] = { 0 };
    const int n = 70000;
    for (int i = 0; i < n; i++) {
        uint32_t v = fasgd_rng_below (&r, 7);
        ck_assert_uint_lt (v, 7);
        count [v]++;
    }
    for (int k = 0; k < 7; k++)   /*  expected 10000, sd ~ 93  */
        ck_assert_int_lt (abs (count [k] - 10000), 500);
    ck_assert_uint_eq (fasgd_rng_below (&r, 1), 0);
}
END_TEST

START_TEST (test_normal_moments)
{
    fasgd_rng_t r;
    fasgd_rng_seed (&r, 11, 5);
    const int n = 200000;
    double s1 = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        double z = fasgd_rng_normal (&r);
        s1 += z;
        s2 += z * z;
    }
    ck_assert_double_eq_tol (s1 / n, 0.0, 0.01);
    ck_assert_double_eq_tol (s2 / n, 1.0, 0.02);
}
END_TEST

START_TEST (test_shuffle_is_permutation_and_reproducible)
{
    uint32_t a [100], b [100];
    for (uint32_t i = 0; i < 100; i++)
        a [i] = b [i] = i;
    fasgd_rng_t r1, r2;
    fasgd_rng_seed (&r1, 99, 0);
    fasgd_rng_seed (&r2, 99, 0);
    fasgd_rng_shuffle (&r1, a, 100);
    fasgd_rng_shuffle (&r2, b, 100);
    ck_assert_mem_eq (a, b, sizeof a);
    int seen [100] = { 0 }, moved = 0;
    for (uint32_t i = 0; i < 100; i++) {
        seen [a [i]]++;
        moved += a [i] != i;
    }
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq (seen [i], 1);
    ck_assert_int_gt (moved, 80);
}
END_TEST

static Suite *
rng_suite (void)
{
    Suite *s = suite_create ("rng");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_reference_sequence);
    tcase_add_test (tc, test_streams_differ);
    tcase_add_test (tc, test_uniform_range_and_mean);
    tcase_add_test (tc, test_below_bounds_and_balance);
    tcase_add_test (tc, test_normal_moments);
    tcase_add_test (tc, test_shuffle_is_permutation_and_reproducible);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (rng_suite)
