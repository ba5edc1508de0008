/*  shardmap: the split of θ across shards: parts that cover θ end to end,
    boundaries moved to tensor boundaries only within the slack, and the
    refusals.  */
#include "shardmap.h"
#include "testutil.h"

#include <string.h>

/*  The S parts of these tensors, checked to tile [0, D) in order.  */
static void
s_parts (const uint64_t *sizes, int nt, uint32_t S, uint64_t *off, uint64_t *len)
{
    uint64_t D = 0, at = 0;
    for (int i = 0; i < nt; i++)
        D += sizes [i];
    for (uint32_t k = 0; k < S; k++) {
        char err [128] = "";
        ck_assert_msg (fasgd_shardmap_part (sizes, nt, S, k, &off [k], &len [k], err, sizeof err) == 0,
                       "%u of %u: %s", k, S, err);
        ck_assert_uint_eq (off [k], at);
        ck_assert_uint_gt (len [k], 0);
        at += len [k];
    }
    ck_assert_uint_eq (at, D);
}

START_TEST (test_mlp_splits)
{
    /*  784-100-10: w1 holds 98.6% of θ, so it is cut where equal parts
        fall; the small tensors stay whole with the last part.  */
    const uint64_t mlp [] = { 78400, 100, 1000, 10 };
    uint64_t off [8], len [8];
    s_parts (mlp, 4, 1, off, len);
    ck_assert_uint_eq (len [0], 79510);
    s_parts (mlp, 4, 2, off, len);
    ck_assert_uint_eq (off [1], 39755);
    s_parts (mlp, 4, 4, off, len);
    ck_assert_uint_eq (off [1], 19877);
    ck_assert_uint_eq (off [2], 39755);
    /*  79510 · 3 / 4 = 59632, nowhere near a tensor boundary.  */
    ck_assert_uint_eq (off [3], 59632);
}
END_TEST

START_TEST (test_snaps_within_slack)
{
    uint64_t off [4], len [4];
    /*  Equal split at 1000, slack 2000 / 40 = 50: a boundary 40 away is
        taken, one 60 away is not.  */
    const uint64_t near [] = { 1040, 960 };
    s_parts (near, 2, 2, off, len);
    ck_assert_uint_eq (off [1], 1040);
    const uint64_t far [] = { 1060, 940 };
    s_parts (far, 2, 2, off, len);
    ck_assert_uint_eq (off [1], 1000);
    /*  Of two boundaries within the slack, the nearer.  */
    const uint64_t two [] = { 970, 20, 1010 };
    s_parts (two, 3, 2, off, len);
    ck_assert_uint_eq (off [1], 990);
    /*  Equal tensors, a shard each.  */
    const uint64_t four [] = { 7, 7, 7, 7 };
    s_parts (four, 4, 4, off, len);
    for (int k = 0; k < 4; k++)
        ck_assert_uint_eq (len [k], 7);
}
END_TEST

START_TEST (test_every_count_tiles)
{
    /*  Many tensors of uneven sizes, every S up to D: parts always tile θ
        and are never empty.  */
    const uint64_t sizes [] = { 3, 1, 40, 2, 2, 17, 1, 90, 5, 1 };
    uint64_t off [162], len [162];
    for (uint32_t S = 1; S <= 162; S++)
        s_parts (sizes, 10, S, off, len);
}
END_TEST

START_TEST (test_refused)
{
    const uint64_t sizes [] = { 10, 5 };
    uint64_t off = 77, len = 77;
    char err [128];
    ck_assert_int_eq (fasgd_shardmap_part (sizes, 2, 0, 0, &off, &len, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "0 shards"));
    ck_assert_int_eq (fasgd_shardmap_part (sizes, 2, 3, 3, &off, &len, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "does not exist"));
    ck_assert_int_eq (fasgd_shardmap_part (sizes, 2, 16, 0, &off, &len, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "16 shards for 15 parameters"));
    ck_assert_int_eq (fasgd_shardmap_part (sizes, 2, FASGD_SHARDMAP_MAX + 1, 0, &off, &len, err, sizeof err), -1);
    const uint64_t empty [] = { 10, 0 };
    ck_assert_int_eq (fasgd_shardmap_part (empty, 2, 1, 0, &off, &len, NULL, 0), -1);
    ck_assert_uint_eq (off, 77);
    ck_assert_uint_eq (len, 77);
}
END_TEST

static Suite *
shardmap_suite (void)
{
    Suite *s = suite_create ("shardmap");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_mlp_splits);
    tcase_add_test (tc, test_snaps_within_slack);
    tcase_add_test (tc, test_every_count_tiles);
    tcase_add_test (tc, test_refused);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (shardmap_suite)
