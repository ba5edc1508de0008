/*  cache: the largest data cache read from a tree laid out as Linux's
    /sys/devices/system/cpu/cpu0/cache, and what is not a size in it.  */
#include "cache.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*  dir/indexK/{type,size}; a NULL type or size leaves that file out.  */
static void
s_index (const char *dir, int k, const char *type, const char *size)
{
    char path [512];
    snprintf (path, sizeof path, "%s/index%d", dir, k);
    ck_assert_int_eq (mkdir (path, 0700), 0);
    const char *names [2] = { "type", "size" }, *text [2] = { type, size };
    for (int f = 0; f < 2; f++) {
        if (!text [f])
            continue;
        snprintf (path, sizeof path, "%s/index%d/%s", dir, k, names [f]);
        FILE *fp = fopen (path, "w");
        ck_assert_ptr_nonnull (fp);
        fprintf (fp, "%s\n", text [f]);
        fclose (fp);
    }
}

static void
s_remove (const char *dir)
{
    char cmd [600];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq (system (cmd), 0);
}

START_TEST (test_cache_largest_data_cache)
{
    char dir [] = "/tmp/fasgd-cache-XXXXXX";
    ck_assert_ptr_nonnull (mkdtemp (dir));
    s_index (dir, 0, "Data", "48K");
    s_index (dir, 1, "Instruction", "65536K");      /* larger, but not for data */
    s_index (dir, 2, "Unified", "1024K");
    s_index (dir, 3, "Unified", "32768K");
    ck_assert_uint_eq (fasgd_cache_bytes_at (dir), 32u << 20);
    s_remove (dir);
}
END_TEST

START_TEST (test_cache_units)
{
    const char *sizes [] = { "3M", "1G", "65536" };
    const size_t bytes [] = { 3u << 20, 1u << 30, 65536 };
    for (int i = 0; i < 3; i++) {
        char dir [] = "/tmp/fasgd-cache-XXXXXX";
        ck_assert_ptr_nonnull (mkdtemp (dir));
        s_index (dir, 0, "Data", "32K");
        s_index (dir, 1, "Unified", sizes [i]);
        ck_assert_uint_eq (fasgd_cache_bytes_at (dir), bytes [i]);
        s_remove (dir);
    }
}
END_TEST

START_TEST (test_cache_not_sizes)
{
    /*  Nothing that is not a size counts, whatever it would parse as in
        part; an index without its files is passed over; no tree, 0.  */
    const char *bad [] = { "", "K", "-1K", "32768KB", "32 K", "0x20M", "18446744073709551615K", "1T", "abc" };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        char dir [] = "/tmp/fasgd-cache-XXXXXX";
        ck_assert_ptr_nonnull (mkdtemp (dir));
        s_index (dir, 0, "Data", "48K");
        s_index (dir, 1, "Unified", bad [i]);
        s_index (dir, 2, "Unified", NULL);
        s_index (dir, 3, NULL, "1G");
        ck_assert_msg (fasgd_cache_bytes_at (dir) == 48u << 10, "size \"%s\"", bad [i]);
        s_remove (dir);
    }
    ck_assert_uint_eq (fasgd_cache_bytes_at ("/nonexistent/fasgd-cache"), 0);
}
END_TEST

START_TEST (test_cache_this_machine)
{
    /*  The machine's, read twice, is the same; it is the tree's where the
        tree is there.  */
    size_t b = fasgd_cache_bytes ();
    ck_assert_uint_eq (fasgd_cache_bytes (), b);
    ck_assert_uint_eq (b, fasgd_cache_bytes_at ("/sys/devices/system/cpu/cpu0/cache"));
}
END_TEST

static Suite *
cache_suite (void)
{
    Suite *s = suite_create ("cache");
    TCase *tc = tcase_create ("cache");
    tcase_add_test (tc, test_cache_largest_data_cache);
    tcase_add_test (tc, test_cache_units);
    tcase_add_test (tc, test_cache_not_sizes);
    tcase_add_test (tc, test_cache_this_machine);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (cache_suite)
