/*  serverutil: the shell of a fasgd-server test, shared by the Check
    suites that speak to a live server with raw ZeroMQ sockets
    (test_server.c, test_guard.c, test_turns.c): start one on ephemeral
    ports with a 20-8-4 MLP, connect, send and receive requests, ask its
    control socket.  */
#ifndef FASGD_SERVERUTIL_H_INCLUDED
#define FASGD_SERVERUTIL_H_INCLUDED

#include "codec.h"
#include "testutil.h"

#include <czmq.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*  A 20-8-4 model: D = 20*8 + 8 + 8*4 + 4 = 204.  */
#define D 204

typedef struct {
    pid_t pid;
    char dir [64];
    char push [256], fetch [256], control [256];
} server_t;

/*  Starts the server with --set for each of sets (NULL-terminated; may
    be NULL), and --resume when resume is 1.  */
static inline void
s_start_opts (server_t *s, const char *const *sets, int resume)
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
           "control_endpoint: tcp://127.0.0.1:*\n"
           "model: {sizes: [20, 8, 4]}\n"
           "rule: {name: asgd, lr: 0.5}\n"
           "gates: {push: {gate: bfasgd, c: 0.1}}\n"
           "eval: {enabled: false}\n"
           "heartbeat: {interval_ms: 100, expiry_ms: 400}\n"
           "log: {status_seconds: 0, level: info}\n", f);
    fclose (f);
    const char *build = getenv ("FASGD_TOP_BUILDDIR");
    char exe [512];
    snprintf (exe, sizeof exe, "%s/server/fasgd-server", build ? build : ".");
    s->pid = fork ();
    ck_assert_int_ge (s->pid, 0);
    if (s->pid == 0) {
        freopen (log, "w", stderr);
        const char *argv [32] = { "fasgd-server", "-c", cfg, "--port-file", port };
        int argc = 5;
        if (resume)
            argv [argc++] = "--resume";
        for (int i = 0; sets && sets [i] && argc < 29; i++) {
            argv [argc++] = "--set";
            argv [argc++] = sets [i];
        }
        argv [argc] = NULL;
        execv (exe, (char *const *) argv);
        _exit (127);
    }
    /*  Wait for the port file, never for a fixed sleep.  */
    for (int i = 0; i < 1000; i++) {
        FILE *p = fopen (port, "r");
        if (p) {
            int got = fscanf (p, "push=%255s\nfetch=%255s\ncontrol=%255s\n", s->push, s->fetch, s->control);
            fclose (p);
            if (got == 3)
                return;
        }
        int status;
        ck_assert_msg (waitpid (s->pid, &status, WNOHANG) == 0, "the server exited early");
        usleep (10000);
    }
    ck_abort_msg ("no port file from the server");
}

static inline void
s_start_sets (server_t *s, const char *const *sets)
{
    s_start_opts (s, sets, 0);
}

static inline void
s_start (server_t *s, const char *extra_set)
{
    const char *sets [] = { extra_set, NULL };
    s_start_sets (s, sets);
}

/*  Stops the server with SIGTERM; returns its exit status.  */
static inline int
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

static inline zsock_t *
s_connect (const char *endpoint)
{
    zsock_t *sock = zsock_new_dealer (endpoint);
    ck_assert_ptr_nonnull (sock);
    zsock_set_rcvtimeo (sock, 3000);
    zsock_set_linger (sock, 0);
    return sock;
}

static inline void
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
static inline size_t
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

/*  The session each id's WELCOME gave (ids count from 1 in each test's
    server), which s_req puts in every request but JOIN, as a client does;
    a test that plays a stranger overwrites h.session.  */
#define S_MAX_SESSIONS 4096
static uint64_t s_sessions [S_MAX_SESSIONS];

static inline uint64_t
s_session_of (uint32_t id)
{
    return id < S_MAX_SESSIONS ? s_sessions [id] : 0;
}

static inline fasgd_header_t
s_req (int type, uint32_t id, uint32_t seq, uint64_t ts)
{
    fasgd_header_t h = { .version = FASGD_PROTO_VERSION, .type = (uint8_t) type, .client_id = id,
                         .seq = seq, .timestamp = ts,
                         .session = type == FASGD_MSG_JOIN ? 0 : s_session_of (id) };
    return h;
}

/*  A request with the THEN_FETCH flag.  */
static inline fasgd_header_t
s_req_then_fetch (int type, uint32_t id, uint32_t seq, uint64_t ts)
{
    fasgd_header_t h = s_req (type, id, seq, ts);
    h.flags = FASGD_PROTO_FLAG_THEN_FETCH;
    return h;
}

/*  Joins as "tester" and reads the WELCOME's description into d,
    remembering its session for s_req; returns the client id.  */
static inline uint32_t
s_join_desc (zsock_t *push, fasgd_proto_desc_t *d)
{
    fasgd_header_t h = s_req (FASGD_MSG_JOIN, 0, 1, 0), r;
    s_send (push, &h, "tester", 6);
    char desc [FASGD_PROTO_DESC_MAX];
    size_t len = s_recv (push, &r, desc, sizeof desc);
    ck_assert_int_eq (r.type, FASGD_MSG_WELCOME);
    ck_assert_int_eq (r.status, FASGD_STATUS_OK);
    char err [128];
    ck_assert_int_eq (fasgd_proto_desc_decode (desc, len, d, err, sizeof err), 0);
    ck_assert_uint_gt (r.client_id, 0);
    ck_assert_uint_ne (d->session, 0);
    if (r.client_id < S_MAX_SESSIONS)
        s_sessions [r.client_id] = d->session;
    return r.client_id;
}

/*  Joins a server of the given rule; returns the client id.  */
static inline uint32_t
s_join_rule (zsock_t *push, const char *rule)
{
    fasgd_proto_desc_t d;
    uint32_t id = s_join_desc (push, &d);
    ck_assert_uint_eq (d.params, D);
    ck_assert_str_eq (d.rule, rule);
    ck_assert_str_eq (d.push_gate, "bfasgd");
    return id;
}

static inline uint32_t
s_join (zsock_t *push)
{
    return s_join_rule (push, "asgd");
}

/*  Expects an ERROR of that status for request seq; its reason into
    reason [size] when given.  */
static inline void
s_expect_error_reason (zsock_t *sock, int status, uint32_t seq, char *out, size_t size)
{
    fasgd_header_t r;
    char reason [300] = "";
    size_t n = s_recv (sock, &r, reason, sizeof reason - 1);
    reason [n < sizeof reason ? n : 0] = 0;
    ck_assert_int_eq (r.type, FASGD_MSG_ERROR);
    ck_assert_msg (r.status == status, "status %d, expected %d (%s)", r.status, status, reason);
    ck_assert_uint_eq (r.seq, seq);
    ck_assert_int_gt ((int) strlen (reason), 5);
    if (out)
        snprintf (out, size, "%s", reason);
}

static inline void
s_expect_error (zsock_t *sock, int status, uint32_t seq)
{
    s_expect_error_reason (sock, status, seq, NULL, 0);
}

/*  Sends a control request of nframes frames (after REQ's delimiter when
    req is set) and returns the reply text (the caller frees it), or NULL
    when none came within 2 s.  */
static inline char *
s_control (const char *endpoint, int req, const char *const *frames, const size_t *lens, int nframes)
{
    zsock_t *sock = zsock_new (req ? ZMQ_REQ : ZMQ_DEALER);
    ck_assert_ptr_nonnull (sock);
    zsock_set_linger (sock, 0);
    zsock_set_rcvtimeo (sock, 2000);
    ck_assert_int_eq (zsock_connect (sock, "%s", endpoint), 0);
    zmsg_t *m = zmsg_new ();
    for (int i = 0; i < nframes; i++)
        zmsg_addmem (m, frames [i], lens [i]);
    ck_assert_int_eq (zmsg_send (&m, sock), 0);
    zmsg_t *r = zmsg_recv (sock);
    char *text = NULL;
    if (r) {
        ck_assert_int_eq ((int) zmsg_size (r), 1);
        text = zmsg_popstr (r);
        zmsg_destroy (&r);
    }
    zsock_destroy (&sock);
    return text;
}

static inline char *
s_control_cmd (const char *endpoint, const char *cmd)
{
    size_t len = strlen (cmd);
    return s_control (endpoint, 0, &cmd, &len, 1);
}

/*  STATUS's value of key as a number (0 when absent).  */
static inline unsigned long long
s_status_num (const char *text, const char *key)
{
    char want [64];
    snprintf (want, sizeof want, "\n%s=", key);
    const char *at = strstr (text, want);
    return at ? strtoull (at + strlen (want), NULL, 10) : 0;
}

#endif
