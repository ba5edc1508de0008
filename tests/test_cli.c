/*  cli: the programs' common opening says what is wrong in the words and
    with the exit statuses the manual pages give: --set's limit, an
    unknown log level, a refused option, stray operands, a missing -c,
    the configuration's error count; --version; the configuration loaded
    as defaults, file, then --set in order; --dump-config only when asked.  */
#include "cli.h"
#include "log.h"
#include "testutil.h"

#include <string.h>
#include <unistd.h>

typedef struct {
    int workers;
    double lr;
} cfg_t;

static const fasgd_cfg_key_t s_keys [] = {
    FASGD_CFG_KEY_INT ("workers", cfg_t, workers, 1, 10000, "4", "clients"),
    FASGD_CFG_KEY_DOUBLE ("lr", cfg_t, lr, 0, 10, FASGD_CFG_MIN_OPEN, "0.005", "learning rate"),
    FASGD_CFG_KEY_END
};

/*  What fd 1 or 2 receives while a call runs: the capture starts with
    s_capture_start and ends with s_capture_end, which returns the text.  */
static int s_saved = -1, s_fd = -1;
static char s_path [64];
static char s_text [4096];

static void
s_capture_start (int fd)
{
    fflush (stdout);
    fflush (stderr);
    snprintf (s_path, sizeof s_path, "/tmp/fasgd-test-cli-XXXXXX");
    int tmp = mkstemp (s_path);
    ck_assert_int_ge (tmp, 0);
    s_saved = dup (fd);
    s_fd = fd;
    dup2 (tmp, fd);
    close (tmp);
}

static const char *
s_capture_end (void)
{
    fflush (stdout);
    fflush (stderr);
    dup2 (s_saved, s_fd);
    close (s_saved);
    FILE *f = fopen (s_path, "r");
    ck_assert_ptr_nonnull (f);
    size_t n = fread (s_text, 1, sizeof s_text - 1, f);
    s_text [n] = 0;
    fclose (f);
    unlink (s_path);
    return s_text;
}

START_TEST (test_set_limit)
{
    static fasgd_cli_t cli = { .prog = "prog" };
    for (int i = 0; i < FASGD_CLI_MAX_SETS; i++)
        ck_assert_int_eq (fasgd_cli_add_set (&cli, "workers=2"), 0);
    s_capture_start (2);
    int rc = fasgd_cli_add_set (&cli, "workers=3");
    const char *err = s_capture_end ();
    ck_assert_int_eq (rc, FASGD_CLI_EXIT_USAGE);
    ck_assert_int_eq (cli.nsets, FASGD_CLI_MAX_SETS);
    ck_assert_str_eq (err, "prog: at most 256 --set options\n");
}
END_TEST

START_TEST (test_log_level)
{
    fasgd_cli_t cli = { .prog = "prog" };
    ck_assert_int_eq (fasgd_cli_log_level_set (&cli, "debug"), 0);
    ck_assert_int_eq (fasgd_log_get_level (), FASGD_LOG_DEBUG);
    ck_assert_int_eq (fasgd_cli_log_level_set (&cli, "error"), 0);
    ck_assert_int_eq (fasgd_log_get_level (), FASGD_LOG_ERROR);
    s_capture_start (2);
    int rc = fasgd_cli_log_level_set (&cli, "loud");
    const char *err = s_capture_end ();
    ck_assert_int_eq (rc, FASGD_CLI_EXIT_USAGE);
    ck_assert_str_eq (err, "prog: unknown log level 'loud' (error, warn, notice, info, debug)\n");
    ck_assert_int_eq (fasgd_log_get_level (), FASGD_LOG_ERROR);    /* unchanged */
}
END_TEST

START_TEST (test_usage_errors)
{
    fasgd_cli_t cli = { .prog = "prog" };
    char *argv [] = { "prog", "-c", "a.yaml", "stray", NULL };
    s_capture_start (2);
    int bad = fasgd_cli_bad_option (&cli);
    int stray = fasgd_cli_operands (&cli, 4, argv, 3);
    int none = fasgd_cli_operands (&cli, 3, argv, 3);
    int no_config = fasgd_cli_finish (&cli, 3, argv, 3);
    cli.config = "a.yaml";
    int ok = fasgd_cli_finish (&cli, 3, argv, 3);
    int stray_too = fasgd_cli_finish (&cli, 4, argv, 3);
    const char *err = s_capture_end ();
    ck_assert_int_eq (bad, FASGD_CLI_EXIT_USAGE);
    ck_assert_int_eq (stray, FASGD_CLI_EXIT_USAGE);
    ck_assert_int_eq (none, 0);
    ck_assert_int_eq (no_config, FASGD_CLI_EXIT_USAGE);
    ck_assert_int_eq (ok, 0);
    ck_assert_int_eq (stray_too, FASGD_CLI_EXIT_USAGE);
    ck_assert_str_eq (err, "Try 'prog --help'.\n"
                           "prog: unexpected argument 'stray'\nTry 'prog --help'.\n"
                           "prog: a configuration file is required (-c FILE)\nTry 'prog --help'.\n"
                           "prog: unexpected argument 'stray'\nTry 'prog --help'.\n");
}
END_TEST

START_TEST (test_version)
{
    fasgd_cli_t cli = { .prog = "prog" };
    s_capture_start (1);
    int rc = fasgd_cli_version (&cli);
    const char *out = s_capture_end ();
    ck_assert_int_eq (rc, 0);
    ck_assert_str_eq (out, "prog " PACKAGE_VERSION "\n");
}
END_TEST

START_TEST (test_config_errors)
{
    fasgd_cli_t cli = { .prog = "prog" };
    s_capture_start (2);
    int zero = fasgd_cli_config_errors (&cli, 0);
    int one = fasgd_cli_config_errors (&cli, 1);
    int three = fasgd_cli_config_errors (&cli, 3);
    const char *err = s_capture_end ();
    ck_assert_int_eq (zero, 0);
    ck_assert_int_eq (one, FASGD_CLI_EXIT_CONFIG);
    ck_assert_int_eq (three, FASGD_CLI_EXIT_CONFIG);
    ck_assert_str_eq (err, "prog: 1 error in the configuration\nprog: 3 errors in the configuration\n");
}
END_TEST

START_TEST (test_config_load_and_dump)
{
    char path [] = "/tmp/fasgd-test-cli-XXXXXX";
    int fd = mkstemp (path);
    ck_assert_int_ge (fd, 0);
    close (fd);
    fasgd_test_write_file (path, "workers: 7\nlr: 0.5\n", 19);
    static fasgd_cli_t cli = { .prog = "prog" };
    cli.config = path;
    ck_assert_int_eq (fasgd_cli_add_set (&cli, "lr=0.25"), 0);
    ck_assert_int_eq (fasgd_cli_add_set (&cli, "lr=0.125"), 0);
    cfg_t cfg;
    ck_assert_int_eq (fasgd_cli_config_load (&cli, s_keys, &cfg), 0);
    ck_assert_int_eq (cfg.workers, 7);              /* the file over the default */
    ck_assert (cfg.lr == 0.125);                    /* the last --set over the file */
    ck_assert_int_eq (fasgd_cli_add_set (&cli, "lr=-1"), 0);
    ck_assert_int_eq (fasgd_cli_add_set (&cli, "nosuch=1"), 0);
    s_capture_start (2);
    int errors = fasgd_cli_config_load (&cli, s_keys, &cfg);
    s_capture_end ();
    ck_assert_int_eq (errors, 2);

    /*  --dump-config: nothing unless asked; then the YAML, and 1.  */
    cfg.lr = 0.125;
    s_capture_start (1);
    int dumped = fasgd_cli_dump (&cli, s_keys, &cfg);
    const char *out = s_capture_end ();
    ck_assert_int_eq (dumped, 0);
    ck_assert_str_eq (out, "");
    cli.dump = 1;
    s_capture_start (1);
    dumped = fasgd_cli_dump (&cli, s_keys, &cfg);
    out = s_capture_end ();
    ck_assert_int_eq (dumped, 1);
    ck_assert_msg (strstr (out, "workers: 7") && strstr (out, "lr: 0.125"), "%s", out);
    unlink (path);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("cli");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_set_limit);
    tcase_add_test (tc, test_log_level);
    tcase_add_test (tc, test_usage_errors);
    tcase_add_test (tc, test_version);
    tcase_add_test (tc, test_config_errors);
    tcase_add_test (tc, test_config_load_and_dump);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (s_suite)
