/*  External models: initial parameters from .npy and raw float32 files
    (common/floats.c), and a fasgd-server that holds a model it does not
    know — tensors of any rank from its configuration, θ0 from a file,
    validation reported by clients — spoken to through the client API.  */
#include "client.h"
#include "floats.h"
#include "testutil.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_dir [64];

static void
s_setup (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/fasgd-test-external-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
}

static void
s_teardown (void)
{
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    ck_assert_int_eq (system (cmd), 0);
}

static const char *
s_path (const char *name)
{
    static char paths [4][256];
    static int next;
    char *p = paths [next++ % 4];
    snprintf (p, 256, "%s/%s", s_dir, name);
    return p;
}

/*  A .npy file as numpy.save writes it: magic, version, header padded
    with spaces to a multiple of 64 bytes and ended by a newline.  */
static void
s_write_npy (const char *path, int major, const char *dict, const float *v, size_t n)
{
    size_t prefix = major == 1 ? 10 : 12;
    size_t dlen = strlen (dict), hlen = dlen + 1;
    while ((prefix + hlen) % 64)
        hlen++;
    unsigned char *buf = calloc (1, prefix + hlen + n * 4);
    ck_assert_ptr_nonnull (buf);
    memcpy (buf, "\x93NUMPY", 6);
    buf [6] = (unsigned char) major;
    if (major == 1) {
        buf [8] = (unsigned char) (hlen & 0xFF);
        buf [9] = (unsigned char) (hlen >> 8);
    }
    else
        for (int i = 0; i < 4; i++)
            buf [8 + i] = (unsigned char) (hlen >> (8 * i));
    memset (buf + prefix, ' ', hlen);
    memcpy (buf + prefix, dict, dlen);
    buf [prefix + hlen - 1] = '\n';
    memcpy (buf + prefix + hlen, v, n * 4);     /* the tests run on little-endian hosts */
    fasgd_test_write_file (path, buf, prefix + hlen + n * 4);
    free (buf);
}

START_TEST (test_floats_npy_and_raw)
{
    float v [24], out [24];
    for (int i = 0; i < 24; i++)
        v [i] = (float) i * 0.5f - 3.0f;
    char err [256];
    s_write_npy (s_path ("a.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }", v, 24);
    ck_assert_msg (fasgd_floats_load (s_path ("a.npy"), out, 24, err, sizeof err) == 0, "%s", err);
    ck_assert_mem_eq (out, v, sizeof v);
    s_write_npy (s_path ("b.npy"), 2, "{\"descr\": \"<f4\", \"fortran_order\": True, \"shape\": (24,)}", v, 24);
    memset (out, 0, sizeof out);
    ck_assert_msg (fasgd_floats_load (s_path ("b.npy"), out, 24, err, sizeof err) == 0, "%s", err);
    ck_assert_mem_eq (out, v, sizeof v);
    fasgd_test_write_file (s_path ("c.f32"), v, sizeof v);
    memset (out, 0, sizeof out);
    ck_assert_msg (fasgd_floats_load (s_path ("c.f32"), out, 24, err, sizeof err) == 0, "%s", err);
    ck_assert_mem_eq (out, v, sizeof v);
}
END_TEST

/*  Every refusal names the file and the cause.  */
START_TEST (test_floats_refusals)
{
    float v [24] = { 0 }, out [24];
    char err [4096];
    static const struct { int major; const char *dict; size_t n; const char *why; } npy [] = {
        { 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (24,), }", 24, "little-endian float32" },
        { 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (24,), }", 24, "little-endian float32" },
        { 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (4, 6), }", 24, "Fortran order" },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (25,), }", 24, "holds 25 values, the model 24" },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (24,), }", 20, "holds 24 values, the model 20" },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [24], }", 24, "no shape tuple" },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", 24, "not a tuple of sizes" },
        { 1, "{'descr': '<f4', 'shape': (24,), }", 24, "no fortran_order" },
        { 1, "{'fortran_order': False, 'shape': (24,), }", 24, "no 'descr'" },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", 24, "2^64" },
        { 4, "{'descr': '<f4', 'fortran_order': False, 'shape': (24,), }", 24, "version 4" },
    };
    for (size_t i = 0; i < sizeof npy / sizeof npy [0]; i++) {
        s_write_npy (s_path ("x.npy"), npy [i].major, npy [i].dict, v, 24);
        err [0] = '\0';
        ck_assert_int_eq (fasgd_floats_load (s_path ("x.npy"), out, npy [i].n, err, sizeof err), -1);
        ck_assert_msg (strstr (err, npy [i].why) && strstr (err, "x.npy"), "case %zu: %s", i, err);
    }
    /*  A relative file not there: the absolute path tried, and the
        working directory.  */
    char cwd [1024], want [2200];
    ck_assert_ptr_nonnull (getcwd (cwd, sizeof cwd));
    ck_assert_int_eq (fasgd_floats_load ("no-such-theta0.npy", out, 24, err, sizeof err), -1);
    snprintf (want, sizeof want, "no-such-theta0.npy (%s%sno-such-theta0.npy: relative to the working directory %s)",
              cwd, strcmp (cwd, "/") ? "/" : "", cwd);
    ck_assert_msg (strstr (err, want), "%s", err);
    /*  Data shorter than the header promises.  */
    s_write_npy (s_path ("short.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (24,), }", v, 20);
    ck_assert_int_eq (fasgd_floats_load (s_path ("short.npy"), out, 24, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "80 bytes of data after the .npy header, 24 values need 96"), "%s", err);
    /*  A header cut short, and one claiming more bytes than there are.  */
    fasgd_test_write_file (s_path ("cut.npy"), "\x93NUMPY\x01\x00", 8);
    ck_assert_int_eq (fasgd_floats_load (s_path ("cut.npy"), out, 24, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "truncated .npy header"), "%s", err);
    fasgd_test_write_file (s_path ("long.npy"), "\x93NUMPY\x01\x00\xff\x7f{'descr'", 17);
    ck_assert_int_eq (fasgd_floats_load (s_path ("long.npy"), out, 24, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "truncated .npy header"), "%s", err);
    /*  Raw: the size must be exact; values finite.  */
    fasgd_test_write_file (s_path ("raw.f32"), v, 95);
    ck_assert_int_eq (fasgd_floats_load (s_path ("raw.f32"), out, 24, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "95 bytes, but 24 parameters as raw little-endian float32 are 96"), "%s", err);
    v [7] = NAN;
    fasgd_test_write_file (s_path ("nan.f32"), v, sizeof v);
    ck_assert_int_eq (fasgd_floats_load (s_path ("nan.f32"), out, 24, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "value 7 is not finite"), "%s", err);
    ck_assert_int_eq (fasgd_floats_load (s_path ("absent"), out, 24, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "No such file"), "%s", err);
}
END_TEST

/*  Runs fasgd-server -c cfg with extra arguments; with port_file, waits
    until it is listening and returns its pid, else waits for its exit and
    returns the exit status. stderr goes to dir/log.  */
static int
s_server (const char *cfg, const char *port_file, const char *extra)
{
    const char *build = getenv ("FASGD_TOP_BUILDDIR");
    char exe [512];
    snprintf (exe, sizeof exe, "%s/server/fasgd-server", build ? build : ".");
    pid_t pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0) {
        if (!freopen (s_path ("log"), "w", stderr))
            _exit (126);
        if (port_file)
            execl (exe, "fasgd-server", "-c", cfg, "--port-file", port_file, (char *) NULL);
        else
            execl (exe, "fasgd-server", "-c", cfg, extra, (char *) NULL);
        _exit (127);
    }
    int status;
    if (!port_file) {
        ck_assert_int_eq (waitpid (pid, &status, 0), pid);
        return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
    }
    for (int i = 0; i < 1000; i++) {
        if (access (port_file, R_OK) == 0)
            return pid;
        ck_assert_msg (waitpid (pid, &status, WNOHANG) == 0, "the server exited early");
        usleep (10000);
    }
    ck_abort_msg ("no port file from the server");
    return -1;
}

static char *
s_slurp (const char *path)
{
    FILE *f = fopen (path, "r");
    ck_assert_ptr_nonnull (f);
    static char buf [16384];
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    buf [n] = '\0';
    fclose (f);
    return buf;
}

#define S_D (16 * 1 * 3 * 3 + 16 + 10 * 16 + 10)

#define S_CONFIG \
    "push_endpoint: tcp://127.0.0.1:*\n" \
    "fetch_endpoint: tcp://127.0.0.1:*\n" \
    "control_endpoint: ''\n" \
    "external:\n" \
    "  tensors: conv.weight:16x1x3x3,conv.bias:16,fc.weight:10x16,fc.bias:10\n" \
    "  init: %s\n" \
    "rule: {name: asgd, lr: 0.5}\n" \
    "eval: {csv: %s}\n" \
    "log: {status_seconds: 0}\n"

START_TEST (test_server_external_model)
{
    float theta0 [S_D];
    for (int i = 0; i < S_D; i++)
        theta0 [i] = 0.01f * (float) (i % 97) - 0.3f;
    s_write_npy (s_path ("theta0.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (330,), }",
                 theta0, S_D);
    char cfg [1024];
    snprintf (cfg, sizeof cfg, S_CONFIG, s_path ("theta0.npy"), s_path ("eval.csv"));
    fasgd_test_write_file (s_path ("server.yaml"), cfg, strlen (cfg));
    /*  -n checks it without data: an external model needs none.  */
    ck_assert_int_eq (s_server (s_path ("server.yaml"), NULL, "-n"), 0);

    pid_t pid = s_server (s_path ("server.yaml"), s_path ("ports"), NULL);
    char push [256], fetch [256];
    FILE *p = fopen (s_path ("ports"), "r");
    ck_assert_ptr_nonnull (p);
    ck_assert_int_eq (fscanf (p, "push=%255s\nfetch=%255s\n", push, fetch), 2);
    fclose (p);

    fasgd_client_t *c = fasgd_client_new (push, fetch);
    ck_assert_ptr_nonnull (c);
    ck_assert_int_eq (fasgd_client_join (c, "external-test"), 0);
    const fasgd_proto_desc_t *d = fasgd_client_desc (c);
    ck_assert_str_eq (d->model, "external");
    ck_assert_uint_eq (d->params, S_D);
    ck_assert_int_eq (d->ntensors, 4);
    ck_assert_str_eq (d->tensors [0].name, "conv.weight");
    ck_assert_uint_eq (d->tensors [0].ndim, 4);
    ck_assert_uint_eq (d->tensors [0].dims [0], 16);
    ck_assert_uint_eq (d->tensors [0].dims [3], 3);
    ck_assert_uint_eq (d->tensors [1].ndim, 1);
    ck_assert_str_eq (d->tensors [3].name, "fc.bias");

    float theta [S_D], grad [S_D];
    uint64_t ts;
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);
    ck_assert_uint_eq (ts, 0);
    ck_assert_mem_eq (theta, theta0, sizeof theta);
    for (int i = 0; i < S_D; i++)
        grad [i] = (float) (i % 5) - 2.0f;
    ck_assert_int_eq (fasgd_client_push (c, grad, ts), 0);
    ck_assert_int_eq (fasgd_client_fetch (c, theta, &ts, 0), 0);
    ck_assert_uint_eq (ts, 1);
    for (int i = 0; i < S_D; i++)
        ck_assert_float_eq (theta [i], theta0 [i] - 0.5f * grad [i]);

    /*  Validation comes from the clients and lands in the CSV, with the
        staleness of the gradients applied since the previous row: τ = 0
        for the push above; then 1 and 2 for two pushes computed on θ at
        0; then none.  */
    ck_assert_int_eq (fasgd_client_eval (c, 0.125, 0.5, 2000), 0);
    ck_assert_int_eq (fasgd_client_push (c, grad, 0), 0);
    ck_assert_int_eq (fasgd_client_push (c, grad, 0), 0);
    /*  Results that cannot be an error rate or a likelihood are refused
        (400) and make no row: had one made a row, it would have taken the
        staleness of the two pushes above from the next.  */
    const double bad [][2] = { { 5, 0.5 }, { -5, 0.5 }, { 1e308, 0.5 }, { NAN, 0.5 }, { 0.25, -1 },
                               { 0.25, NAN }, { 0.25, INFINITY } };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        ck_assert_msg (fasgd_client_eval (c, bad [i][0], bad [i][1], 2000) == FASGD_CLIENT_EREFUSED,
                       "error %g nll %g taken", bad [i][0], bad [i][1]);
        ck_assert_int_eq (fasgd_client_last_status (c), FASGD_STATUS_MALFORMED);
    }
    ck_assert_int_eq (fasgd_client_eval (c, 0.25, 0.75, 2000), 0);
    ck_assert_int_eq (fasgd_client_eval (c, 0.375, 1.0, 2000), 0);
    ck_assert_int_eq (fasgd_client_leave (c), 0);
    fasgd_client_destroy (&c);
    kill (pid, SIGTERM);
    int status;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    char *csv = s_slurp (s_path ("eval.csv"));
    ck_assert_msg (strstr (csv, "\n1,") && strstr (csv, ",0.125000,0.500000,"), "%s", csv);
    int lines = 0;
    for (const char *q = csv; *q; q++)
        lines += *q == '\n';
    ck_assert_msg (lines == 4, "a header and 3 rows expected:\n%s", csv);
    /*  mean_tau and max_tau end each row.  */
    const char *want [3][2] = { { ",0.125000,", ",0.0000,0\n" }, { ",0.250000,", ",1.5000,2\n" },
                                { ",0.375000,", ",0.0000,0\n" } };
    for (int r = 0; r < 3; r++) {
        const char *row = strstr (csv, want [r][0]);
        ck_assert_msg (row, "no row with %s in\n%s", want [r][0], csv);
        const char *end = strchr (row, '\n');
        ck_assert_ptr_nonnull (end);
        size_t tail = strlen (want [r][1]);
        ck_assert_msg ((size_t) (end + 1 - row) >= tail && !strncmp (end + 1 - tail, want [r][1], tail),
                       "row %d does not end in %s:\n%s", r + 1, want [r][1], csv);
    }
}
END_TEST

/*  Bad external configurations stop the server at start, saying why.  */
START_TEST (test_server_external_refusals)
{
    static const struct { const char *tensors, *init, *extra, *why; } bad [] = {
        { "a:2x0", "''", "", "external.tensors: \"2x0\" must be a SHAPE" },
        { "a:2,a:3", "''", "", "external.tensors: \"a\" appears twice" },
        { "a b:2", "''", "", "external.tensors: name \"a b\"" },
        { "a:268435456", "''", "", "external.tensors: 268435456 parameters, more than the limit of 268435455" },
        { "a:10", "/nonexistent/theta.npy", "", "external.init: /nonexistent/theta.npy: No such file" },
        { "a:10", "WRONG", "", "40 bytes" },
        { "a:10", "''", "heartbeat: {interval_ms: 500, expiry_ms: 500}\n",
          "heartbeat.interval_ms (500) must be less than heartbeat.expiry_ms (500)" },
    };
    float v [11] = { 0 };
    fasgd_test_write_file (s_path ("wrong.f32"), v, sizeof v);
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        char cfg [1024];
        char yaml [512];
        snprintf (yaml, sizeof yaml,
                  "push_endpoint: tcp://127.0.0.1:*\nfetch_endpoint: tcp://127.0.0.1:*\n"
                  "control_endpoint: ''\nexternal: {tensors: '%s', init: %s}\n%s",
                  bad [i].tensors, strcmp (bad [i].init, "WRONG") == 0 ? s_path ("wrong.f32") : bad [i].init,
                  bad [i].extra);
        snprintf (cfg, sizeof cfg, "%s", yaml);
        fasgd_test_write_file (s_path ("bad.yaml"), cfg, strlen (cfg));
        ck_assert_int_eq (s_server (s_path ("bad.yaml"), NULL, "-n"), 1);
        char *log = s_slurp (s_path ("log"));
        ck_assert_msg (strstr (log, bad [i].why), "case %zu: %s", i, log);
    }
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("external");
    TCase *tc = tcase_create ("floats");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_floats_npy_and_raw);
    tcase_add_test (tc, test_floats_refusals);
    suite_add_tcase (s, tc);
    tc = tcase_create ("server");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_server_external_model);
    tcase_add_test (tc, test_server_external_refusals);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (s_suite)
