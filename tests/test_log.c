/*  log: level names, the threshold, and the one-line format on stderr.  */
#include "log.h"
#include "testutil.h"

#include <string.h>
#include <unistd.h>

/*  Runs fn with stderr captured into buf.  */
static void
s_capture (void (*fn) (void), char *buf, size_t len)
{
    char path [] = "/tmp/fasgd-test-log-XXXXXX";
    int fd = mkstemp (path);
    ck_assert_int_ge (fd, 0);
    fflush (stderr);
    int saved = dup (2);
    dup2 (fd, 2);
    fn ();
    fflush (stderr);
    dup2 (saved, 2);
    close (saved);
    ssize_t n = pread (fd, buf, len - 1, 0);
    buf [n > 0 ? n : 0] = 0;
    close (fd);
    unlink (path);
}

static void
s_emit (void)
{
    fasgd_log_open ("/usr/sbin/fasgd-test", 0, FASGD_LOG_NOTICE);
    fasgd_log_error ("bad %d", 42);
    fasgd_log_warn ("two\nlines");
    fasgd_log_notice ("shown");
    fasgd_log_info ("hidden info");
    fasgd_log_debug ("hidden debug");
    fasgd_log_set_level (FASGD_LOG_DEBUG);
    fasgd_log_debug ("now shown");
}

START_TEST (test_levels_and_format)
{
    char buf [4096];
    s_capture (s_emit, buf, sizeof buf);
    char expect [64];
    snprintf (expect, sizeof expect, " fasgd-test[%d]: error: bad 42\n", (int) getpid ());
    ck_assert_msg (strstr (buf, expect), "got '%s'", buf);
    ck_assert_ptr_nonnull (strstr (buf, ": warn: two lines\n"));      /* one event, one line */
    ck_assert_ptr_nonnull (strstr (buf, ": notice: shown\n"));
    ck_assert_ptr_null (strstr (buf, "hidden"));
    ck_assert_ptr_nonnull (strstr (buf, ": debug: now shown\n"));
    /*  Every line starts with an ISO 8601 UTC time stamp.  */
    int lines = 0;
    for (char *p = buf; *p; p = strchr (p, '\n') + 1, lines++) {
        ck_assert_msg (p [4] == '-' && p [10] == 'T' && p [23] == 'Z', "line '%.40s'", p);
        if (!strchr (p, '\n'))
            break;
    }
    ck_assert_int_eq (lines, 4);
}
END_TEST

START_TEST (test_level_names)
{
    ck_assert_int_eq (fasgd_log_level_parse ("error"), FASGD_LOG_ERROR);
    ck_assert_int_eq (fasgd_log_level_parse ("warn"), FASGD_LOG_WARN);
    ck_assert_int_eq (fasgd_log_level_parse ("warning"), FASGD_LOG_WARN);
    ck_assert_int_eq (fasgd_log_level_parse ("notice"), FASGD_LOG_NOTICE);
    ck_assert_int_eq (fasgd_log_level_parse ("info"), FASGD_LOG_INFO);
    ck_assert_int_eq (fasgd_log_level_parse ("debug"), FASGD_LOG_DEBUG);
    ck_assert_int_eq (fasgd_log_level_parse ("loud"), -1);
    ck_assert_int_eq (fasgd_log_level_parse (NULL), -1);
    ck_assert_str_eq (fasgd_log_level_name (FASGD_LOG_INFO), "info");
    ck_assert_str_eq (fasgd_log_level_name ((fasgd_log_level_t) 99), "?");
}
END_TEST

static void
s_emit_long (void)
{
    fasgd_log_open ("t", 0, FASGD_LOG_NOTICE);
    char big [3000];
    memset (big, 'x', sizeof big - 1);
    big [sizeof big - 1] = 0;
    fasgd_log_error ("%s", big);
}

START_TEST (test_long_message_truncated_to_one_line)
{
    char buf [4096];
    s_capture (s_emit_long, buf, sizeof buf);
    ck_assert_int_lt ((int) strlen (buf), 1200);
    ck_assert_ptr_eq (strchr (buf, '\n'), buf + strlen (buf) - 1);
}
END_TEST

static Suite *
log_suite (void)
{
    Suite *s = suite_create ("log");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_levels_and_format);
    tcase_add_test (tc, test_level_names);
    tcase_add_test (tc, test_long_message_truncated_to_one_line);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (log_suite)
