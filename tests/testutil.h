/*  Shared scaffolding for the Check suites: each test program builds one
    suite and reports TAP on stdout for automake's tap-driver.  */
#ifndef FASGD_TESTUTIL_H_INCLUDED
#define FASGD_TESTUTIL_H_INCLUDED

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

/*  Defines main () running `suite_fn ()` with TAP output.  */
#define FASGD_TEST_MAIN(suite_fn)                                   \
    int main (void)                                                 \
    {                                                               \
        SRunner *sr = srunner_create (suite_fn ());                 \
        srunner_set_tap (sr, "-");                                  \
        srunner_run_all (sr, CK_SILENT);                            \
        int failed = srunner_ntests_failed (sr);                    \
        srunner_free (sr);                                          \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;           \
    }

/*  Writes len bytes of data to path, replacing it.  */
static inline void
fasgd_test_write_file (const char *path, const void *data, size_t len)
{
    FILE *f = fopen (path, "wb");
    ck_assert_ptr_nonnull (f);
    ck_assert_uint_eq (fwrite (data, 1, len, f), len);
    ck_assert_int_eq (fclose (f), 0);
}

/*  Path of a file in the source tree (tests run from the build tree).  */
static inline const char *
fasgd_test_srcpath (const char *rel, char *buf, size_t len)
{
    const char *top = getenv ("FASGD_TOP_SRCDIR");
    snprintf (buf, len, "%s/%s", top ? top : ".", rel);
    return buf;
}

/*  Path of a data set the tests read: FASGD_DATA_DIR (which `make check`
    sets), else the source tree's data/.  */
static inline const char *
fasgd_test_datapath (const char *rel, char *buf, size_t len)
{
    const char *dir = getenv ("FASGD_DATA_DIR");
    const char *top = getenv ("FASGD_TOP_SRCDIR");
    if (dir && *dir)
        snprintf (buf, len, "%s/%s", dir, rel);
    else
        snprintf (buf, len, "%s/data/%s", top ? top : ".", rel);
    return buf;
}

#endif
