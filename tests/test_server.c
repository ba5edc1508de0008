/*  fasgd-server on loopback, spoken to with raw ZeroMQ sockets: every
    request type, every refusal class (malformed, unknown client, future
    timestamp, non-finite gradient, wrong version, oversized frame), and
    the server still answering correctly afterwards. The server runs as a
    child process on ephemeral ports; each test starts its own.  */
#include "codec.h"
#include "testutil.h"

#include <czmq.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*  A 20-8-4 model: D = 20*8 + 8 + 8*4 + 4 = 204.  */
#define D 204

typedef struct {
    pid_t pid;
    char dir [64];
    char push [256], fetch [256];
} server_t;

static void
s_start (server_t *s, const char *extra_set)
{
    snprintf (s->dir, sizeof s->dir, "/tmp/fasgd-test-server-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (s->dir));
    char cfg [128], port [128], log [128];
    snprintf (cfg, sizeof cfg, "%s/server.yaml", s->dir);
    snprintf (port, sizeof port, "%s/ports", s->dir);
    snprintf (log, sizeof log, "%s/log", s->dir);
    FILE *f = fopen (cfg, "w");
    ck_assert_ptr_nonnull (f);
    fputs ("push_endpoint: tcp://127.0.0.1:*\n"
           "fetch_endpoint: tcp://127.0.0.1:*\n"
           "model: {sizes: [20, 8, 4]}\n"
           "rule: {name: asgd, lr: 0.5}\n"
           "gates: {push: {gate: bfasgd, c: 0.1}}\n"
           "eval: {enabled: false}\n"
           "heartbeat: {expiry_ms: 400}\n"
           "log: {status_seconds: 0, level: info}\n", f);
    fclose (f);
    const char *build = getenv ("FASGD_TOP_BUILDDIR");
    char exe [512];
    snprintf (exe, sizeof exe, "%s/server/fasgd-server", build ? build : ".");
    s->pid = fork ();
    ck_assert_int_ge (s->pid, 0);
    if (s->pid == 0) {
        freopen (log, "w", stderr);
        if (extra_set)
            execl (exe, "fasgd-server", "-c", cfg, "--port-file", port, "--set", extra_set, (char *) NULL);
        else
            execl (exe, "fasgd-server", "-c", cfg, "--port-file", port, (char *) NULL);
        _exit (127);
    }
    /*  Wait for the port file, never for a fixed sleep.  */
    for (int i = 0; i < 1000; i++) {
        FILE *p = fopen (port, "r");
        if (p) {
            int got = fscanf (p, "push=%255s\nfetch=%255s\n", s->push, s->fetch);
            fclose (p);
            if (got == 2)
                return;
        }
        int status;
        ck_assert_msg (waitpid (s->pid, &status, WNOHANG) == 0, "the server exited early");
        usleep (10000);
    }
    ck_abort_msg ("no port file from the server");
}

/*  Stops the server with SIGTERM; returns its exit status.  */
static int
s_stop (server_t *s)
{
    kill (s->pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 500 && waitpid (s->pid, &status, WNOHANG) == 0; i++)
        usleep (10000);
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    ck_assert_int_eq (system (cmd), 0);
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static zsock_t *
s_connect (const char *endpoint)
{
    zsock_t *sock = zsock_new_dealer (endpoint);
    ck_assert_ptr_nonnull (sock);
    zsock_set_rcvtimeo (sock, 3000);
    zsock_set_linger (sock, 0);
    return sock;
}

static void
s_send (zsock_t *sock, const fasgd_header_t *h, const void *body, size_t len)
{
    uint8_t head [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (h, head);
    zmsg_t *m = zmsg_new ();
    zmsg_addmem (m, head, sizeof head);
    if (body)
        zmsg_addmem (m, body, len);
    ck_assert_int_eq (zmsg_send (&m, sock), 0);
}

/*  Receives a reply: its header, and its body into body (len bytes max).  */
static size_t
s_recv (zsock_t *sock, fasgd_header_t *h, void *body, size_t len)
{
    zmsg_t *m = zmsg_recv (sock);
    ck_assert_msg (m != NULL, "no reply");
    zframe_t *head = zmsg_pop (m);
    ck_assert_int_eq (fasgd_proto_header_decode (zframe_data (head), zframe_size (head), h), FASGD_PROTO_OK);
    zframe_destroy (&head);
    size_t got = 0;
    zframe_t *b = zmsg_pop (m);
    if (b) {
        got = zframe_size (b);
        if (body && got <= len)
            memcpy (body, zframe_data (b), got);
        zframe_destroy (&b);
    }
    zmsg_destroy (&m);
    return got;
}

static fasgd_header_t
s_req (int type, uint32_t id, uint32_t seq, uint64_t ts)
{
    fasgd_header_t h = { .version = FASGD_PROTO_VERSION, .type = (uint8_t) type, .client_id = id,
                         .seq = seq, .timestamp = ts };
    return h;
}

/*  Joins; returns the client id.  */
static uint32_t
s_join (zsock_t *push)
{
    fasgd_header_t h = s_req (FASGD_MSG_JOIN, 0, 1, 0), r;
    s_send (push, &h, "tester", 6);
    char desc [FASGD_PROTO_DESC_MAX];
    size_t len = s_recv (push, &r, desc, sizeof desc);
    ck_assert_int_eq (r.type, FASGD_MSG_WELCOME);
    ck_assert_int_eq (r.status, FASGD_STATUS_OK);
    fasgd_proto_desc_t d;
    char err [128];
    ck_assert_int_eq (fasgd_proto_desc_decode (desc, len, &d, err, sizeof err), 0);
    ck_assert_uint_eq (d.params, D);
    ck_assert_str_eq (d.rule, "asgd");
    ck_assert_str_eq (d.push_gate, "bfasgd");
    ck_assert_uint_gt (r.client_id, 0);
    return r.client_id;
}

static void
s_expect_error (zsock_t *sock, int status, uint32_t seq)
{
    fasgd_header_t r;
    char reason [300] = "";
    size_t n = s_recv (sock, &r, reason, sizeof reason - 1);
    reason [n < sizeof reason ? n : 0] = 0;
    ck_assert_int_eq (r.type, FASGD_MSG_ERROR);
    ck_assert_msg (r.status == status, "status %d, expected %d (%s)", r.status, status, reason);
    ck_assert_uint_eq (r.seq, seq);
    ck_assert_int_gt ((int) strlen (reason), 5);
}

START_TEST (test_push_fetch_round_trip)
{
    server_t s;
    s_start (&s, NULL);
    zsock_t *push = s_connect (s.push), *fetch = s_connect (s.fetch);
    uint32_t id = s_join (push);

    float theta0 [D], theta1 [D], g [D];
    fasgd_header_t h = s_req (FASGD_MSG_FETCH, id, 2, 0), r;
    s_send (fetch, &h, NULL, 0);
    ck_assert_uint_eq (s_recv (fetch, &r, theta0, sizeof theta0), sizeof theta0);
    ck_assert_int_eq (r.type, FASGD_MSG_PARAMS);
    ck_assert_uint_eq (r.timestamp, 0);
    ck_assert_uint_eq (r.seq, 2);

    for (int i = 0; i < D; i++)
        g [i] = (float) (i % 7) * 0.01f;
    h = s_req (FASGD_MSG_PUSH, id, 3, 0);
    s_send (push, &h, g, sizeof g);
    s_recv (push, &r, NULL, 0);
    ck_assert_int_eq (r.type, FASGD_MSG_ACK);
    ck_assert_int_eq (r.status, FASGD_STATUS_OK);
    ck_assert_uint_eq (r.timestamp, 1);
    ck_assert_double_eq (r.vbar, 1.0);             /* asgd has no statistic */

    h = s_req (FASGD_MSG_FETCH, id, 4, 0);
    s_send (fetch, &h, NULL, 0);
    ck_assert_uint_eq (s_recv (fetch, &r, theta1, sizeof theta1), sizeof theta1);
    ck_assert_uint_eq (r.timestamp, 1);
    for (int i = 0; i < D; i++)                    /* θ ← θ − 0.5·g */
        ck_assert_float_eq (theta1 [i], theta0 [i] - 0.5f * g [i]);

    /*  Current already: 304 and no body.  */
    h = s_req (FASGD_MSG_FETCH, id, 5, 1);
    h.flags = FASGD_PROTO_FLAG_IF_NEWER;
    s_send (fetch, &h, NULL, 0);
    ck_assert_uint_eq (s_recv (fetch, &r, NULL, 0), 0);
    ck_assert_int_eq (r.status, FASGD_STATUS_NOT_MODIFIED);

    /*  resend-last: the same gradient again, with its original timestamp.  */
    h = s_req (FASGD_MSG_PUSH_REPEAT, id, 6, 0);
    s_send (push, &h, NULL, 0);
    s_recv (push, &r, NULL, 0);
    ck_assert_int_eq (r.status, FASGD_STATUS_OK);
    ck_assert_uint_eq (r.timestamp, 2);

    h = s_req (FASGD_MSG_HEARTBEAT, id, 7, 0);
    s_send (push, &h, NULL, 0);
    s_recv (push, &r, NULL, 0);
    ck_assert_int_eq (r.type, FASGD_MSG_ACK);

    h = s_req (FASGD_MSG_EVAL, id, 8, 0);
    s_send (push, &h, "error=0.05\nnll=0.2\n", 19);
    s_recv (push, &r, NULL, 0);
    ck_assert_int_eq (r.type, FASGD_MSG_ACK);

    h = s_req (FASGD_MSG_LEAVE, id, 9, 0);
    s_send (push, &h, NULL, 0);
    s_recv (push, &r, NULL, 0);
    ck_assert_int_eq (r.type, FASGD_MSG_ACK);
    h = s_req (FASGD_MSG_HEARTBEAT, id, 10, 0);
    s_send (push, &h, NULL, 0);
    s_expect_error (push, FASGD_STATUS_UNKNOWN_CLIENT, 10);

    zsock_destroy (&push);
    zsock_destroy (&fetch);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_refusals_leave_the_server_working)
{
    server_t s;
    s_start (&s, NULL);
    zsock_t *push = s_connect (s.push), *fetch = s_connect (s.fetch);
    uint32_t id = s_join (push);
    float g [D];
    memset (g, 0, sizeof g);
    fasgd_header_t h, r;

    /*  A repeat before any push: nothing cached.  */
    h = s_req (FASGD_MSG_PUSH_REPEAT, id, 20, 0);
    s_send (push, &h, NULL, 0);
    s_expect_error (push, FASGD_STATUS_CONFLICT, 20);
    /*  A gradient of the wrong length.  */
    h = s_req (FASGD_MSG_PUSH, id, 21, 0);
    s_send (push, &h, g, sizeof g - 4);
    s_expect_error (push, FASGD_STATUS_MALFORMED, 21);
    /*  NaN and Inf.  */
    g [17] = NAN;
    h = s_req (FASGD_MSG_PUSH, id, 22, 0);
    s_send (push, &h, g, sizeof g);
    s_expect_error (push, FASGD_STATUS_NONFINITE, 22);
    g [17] = -INFINITY;
    h.seq = 23;
    s_send (push, &h, g, sizeof g);
    s_expect_error (push, FASGD_STATUS_NONFINITE, 23);
    g [17] = 0;
    /*  A timestamp from the future.  */
    h = s_req (FASGD_MSG_PUSH, id, 24, 99);
    s_send (push, &h, g, sizeof g);
    s_expect_error (push, FASGD_STATUS_CONFLICT, 24);
    /*  An unknown client.  */
    h = s_req (FASGD_MSG_PUSH, id + 1000, 25, 0);
    s_send (push, &h, g, sizeof g);
    s_expect_error (push, FASGD_STATUS_UNKNOWN_CLIENT, 25);
    /*  Another protocol version.  */
    h = s_req (FASGD_MSG_HEARTBEAT, id, 26, 0);
    uint8_t head [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (&h, head);
    head [2] = 2;
    zsock_send (push, "b", head, sizeof head);
    s_expect_error (push, FASGD_STATUS_VERSION, 26);
    /*  Garbage of every shape.  */
    zsock_send (push, "b", "hello", (size_t) 5);
    s_expect_error (push, FASGD_STATUS_MALFORMED, 0);
    memset (head, 0xff, sizeof head);
    zsock_send (push, "b", head, sizeof head);
    s_expect_error (push, FASGD_STATUS_MALFORMED, 0);
    h = s_req (FASGD_MSG_HEARTBEAT, id, 27, 0);
    fasgd_proto_header_encode (&h, head);
    zsock_send (push, "bbb", head, sizeof head, "x", (size_t) 1, "y", (size_t) 1);
    s_expect_error (push, FASGD_STATUS_MALFORMED, 0);
    /*  A fetch on the push socket, a push on the fetch socket.  */
    h = s_req (FASGD_MSG_FETCH, id, 28, 0);
    s_send (push, &h, NULL, 0);
    s_expect_error (push, FASGD_STATUS_MALFORMED, 28);
    /*  A reply type sent as a request (its status 0 is no reply's: the
        header itself is malformed, so nothing is echoed).  */
    h = s_req (FASGD_MSG_ACK, id, 29, 0);
    s_send (push, &h, NULL, 0);
    s_expect_error (push, FASGD_STATUS_MALFORMED, 0);

    /*  An oversized frame: ZeroMQ drops that connection without a reply.  */
    zsock_t *rogue = s_connect (s.push);
    size_t big_len = 4 * D + 1000;
    char *big = calloc (1, big_len);
    h = s_req (FASGD_MSG_PUSH, id, 30, 0);
    fasgd_proto_header_encode (&h, head);
    zsock_send (rogue, "bb", head, sizeof head, big, big_len);
    free (big);
    zsock_set_rcvtimeo (rogue, 300);
    zmsg_t *none = zmsg_recv (rogue);
    ck_assert_ptr_null (none);
    zsock_destroy (&rogue);

    /*  After all that, a correct push and fetch still work.  */
    h = s_req (FASGD_MSG_PUSH, id, 31, 0);
    s_send (push, &h, g, sizeof g);
    s_recv (push, &r, NULL, 0);
    ck_assert_int_eq (r.type, FASGD_MSG_ACK);
    ck_assert_uint_eq (r.timestamp, 1);
    float theta [D];
    h = s_req (FASGD_MSG_FETCH, id, 32, 0);
    s_send (fetch, &h, NULL, 0);
    ck_assert_uint_eq (s_recv (fetch, &r, theta, sizeof theta), sizeof theta);
    ck_assert_uint_eq (r.timestamp, 1);

    zsock_destroy (&push);
    zsock_destroy (&fetch);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_silent_client_expires)
{
    server_t s;
    s_start (&s, NULL);
    zsock_t *push = s_connect (s.push);
    uint32_t id = s_join (push);
    fasgd_header_t h = s_req (FASGD_MSG_HEARTBEAT, id, 2, 0), r;
    s_send (push, &h, NULL, 0);
    s_recv (push, &r, NULL, 0);
    ck_assert_int_eq (r.type, FASGD_MSG_ACK);
    zclock_sleep (1000);                           /* expiry is 400 ms */
    h.seq = 3;
    s_send (push, &h, NULL, 0);
    s_expect_error (push, FASGD_STATUS_UNKNOWN_CLIENT, 3);
    zsock_destroy (&push);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_bad_config_and_bind)
{
    /*  A port that is already taken: the server says so and exits 1.  */
    zsock_t *squatter = zsock_new_router ("tcp://127.0.0.1:*");
    ck_assert_ptr_nonnull (squatter);
    const char *build = getenv ("FASGD_TOP_BUILDDIR");
    char cmd [1024];
    snprintf (cmd, sizeof cmd,
              "printf 'push_endpoint: %s\\neval: {enabled: false}\\n' > /tmp/fasgd-test-bind.yaml; "
              "'%s/server/fasgd-server' -c /tmp/fasgd-test-bind.yaml 2> /tmp/fasgd-test-bind.err; "
              "rc=$?; grep -q 'cannot bind %s: Address already in use' /tmp/fasgd-test-bind.err || rc=99; "
              "rm -f /tmp/fasgd-test-bind.yaml /tmp/fasgd-test-bind.err; exit $rc",
              zsock_endpoint (squatter), build ? build : ".", zsock_endpoint (squatter));
    int st = system (cmd);
    ck_assert_int_eq (WEXITSTATUS (st), 1);
    /*  And a configuration error: exit 1 with file:line:col.  */
    snprintf (cmd, sizeof cmd,
              "printf 'rule: {lr: -1}\\n' > /tmp/fasgd-test-cfg.yaml; "
              "'%s/server/fasgd-server' -c /tmp/fasgd-test-cfg.yaml 2> /tmp/fasgd-test-cfg.err; "
              "rc=$?; grep -q '^/tmp/fasgd-test-cfg.yaml:1:12: error: rule.lr must be in' /tmp/fasgd-test-cfg.err || rc=99; "
              "rm -f /tmp/fasgd-test-cfg.yaml /tmp/fasgd-test-cfg.err; exit $rc", build ? build : ".");
    st = system (cmd);
    ck_assert_int_eq (WEXITSTATUS (st), 1);
    zsock_destroy (&squatter);
}
END_TEST

static Suite *
server_suite (void)
{
    Suite *s = suite_create ("server");
    TCase *tc = tcase_create ("loopback");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_push_fetch_round_trip);
    tcase_add_test (tc, test_refusals_leave_the_server_working);
    tcase_add_test (tc, test_silent_client_expires);
    tcase_add_test (tc, test_bad_config_and_bind);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (server_suite)
