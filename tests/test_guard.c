/*  The push guard (server/guard.c) against a live fasgd-server: no
    single push, however large, makes θ, v̄ or a rule's statistics
    non-finite or stops other clients from joining; a refused push is
    never repeated from the resend-last cache; gradients beyond
    limits.grad_norm or beyond limits.grad_norm_factor times the median
    of the clients' typical norms are refused (or clipped; without a
    reference one push above it from a client whose last push was
    applied is left out instead), the median
    follows honest norms that grow and no one client moves it, and a
    client refused limits.refusals times in a row is forgotten; dcasgd's update, which has no bound in
    advance, is refused when it would overflow. And the limits on what a
    peer can make the server hold or do: limits.clients, the STATUS
    table's length, CHECKPOINT and control requests a second.  */
#include "serverutil.h"

#include <float.h>
#include <math.h>
#include <sys/stat.h>

/*  Fetches θ with client id; its timestamp in *ts when ts is not NULL.  */
static void
s_fetch (zsock_t *fetch, uint32_t id, uint32_t seq, float theta [D], uint64_t *ts)
{
    fasgd_header_t h = s_req (FASGD_MSG_FETCH, id, seq, 0), r;
    s_send (fetch, &h, NULL, 0);
    ck_assert_uint_eq (s_recv (fetch, &r, theta, D * sizeof (float)), D * sizeof (float));
    ck_assert_int_eq (r.type, FASGD_MSG_PARAMS);
    ck_assert (isfinite (r.vbar));
    if (ts)
        *ts = r.timestamp;
}

/*  Pushes g at timestamp ts and returns the reply's status; the reply
    header must decode (a non-finite v̄ would not).  */
static int
s_push (zsock_t *push, uint32_t id, uint32_t seq, uint64_t ts, const float g [D])
{
    fasgd_header_t h = s_req (FASGD_MSG_PUSH, id, seq, ts), r;
    s_send (push, &h, g, D * sizeof (float));
    char body [300];
    s_recv (push, &r, body, sizeof body);
    ck_assert_uint_eq (r.seq, seq);
    ck_assert (isfinite (r.vbar));
    return r.status;
}

static void
s_fill (float g [D], float v)
{
    for (int i = 0; i < D; i++)
        g [i] = v;
}

START_TEST (test_huge_pushes_change_nothing)
{
    const char *sets [] = { "rule.name=fasgd", "limits.grad_norm_factor=0", "limits.refusals=0", NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push = s_connect (s.push), *fetch = s_connect (s.fetch);
    uint32_t id = s_join_rule (push, "fasgd");
    float before [D], after [D], g [D];
    uint64_t ts;
    s_fetch (fetch, id, 1, before, &ts);
    /*  1e20 everywhere, in one entry, FLT_MAX: each could overflow.  */
    s_fill (g, 1e20f);
    ck_assert_int_eq (s_push (push, id, 2, ts, g), FASGD_STATUS_NONFINITE);
    s_fill (g, 0);
    g [7] = 1e20f;
    ck_assert_int_eq (s_push (push, id, 3, ts, g), FASGD_STATUS_NONFINITE);
    s_fill (g, FLT_MAX);
    ck_assert_int_eq (s_push (push, id, 4, ts, g), FASGD_STATUS_NONFINITE);
    s_fetch (fetch, id, 5, after, &ts);
    ck_assert_mem_eq (before, after, sizeof before);
    ck_assert_uint_eq (ts, 0);
    /*  Training goes on, and a new client can join.  */
    s_fill (g, 0.01f);
    ck_assert_int_eq (s_push (push, id, 6, 0, g), FASGD_STATUS_OK);
    zsock_t *push2 = s_connect (s.push);
    ck_assert_uint_gt (s_join_rule (push2, "fasgd"), id);
    zsock_destroy (&push2);
    zsock_destroy (&push);
    zsock_destroy (&fetch);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_refused_push_is_not_repeated)
{
    server_t s;
    s_start (&s, NULL);                 /* asgd, push gate bfasgd: resend-last caches */
    zsock_t *push = s_connect (s.push), *fetch = s_connect (s.fetch);
    uint32_t id = s_join (push);
    float before [D], after [D], g [D];
    s_fetch (fetch, id, 1, before, NULL);
    s_fill (g, 1.0f);
    g [3] = NAN;
    ck_assert_int_eq (s_push (push, id, 2, 0, g), FASGD_STATUS_NONFINITE);
    fasgd_header_t h = s_req (FASGD_MSG_PUSH_REPEAT, id, 3, 0);
    s_send (push, &h, NULL, 0);
    s_expect_error (push, FASGD_STATUS_CONFLICT, 3);
    s_fetch (fetch, id, 4, after, NULL);
    ck_assert_mem_eq (before, after, sizeof before);
    zsock_destroy (&push);
    zsock_destroy (&fetch);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_norm_bound_and_forgetting)
{
    const char *sets [] = { "limits.grad_norm=10", "limits.refusals=3", NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push = s_connect (s.push);
    uint32_t id = s_join (push);
    float g [D];
    s_fill (g, 1.0f);                   /* norm √204 ≈ 14.3 */
    ck_assert_int_eq (s_push (push, id, 1, 0, g), FASGD_STATUS_NONFINITE);
    s_fill (g, 0.5f);                   /* 7.1 */
    ck_assert_int_eq (s_push (push, id, 2, 0, g), FASGD_STATUS_OK);
    s_fill (g, 2.0f);
    for (uint32_t k = 3; k < 6; k++)
        ck_assert_int_eq (s_push (push, id, k, 1, g), FASGD_STATUS_NONFINITE);
    /*  Three in a row: forgotten.  */
    fasgd_header_t h = s_req (FASGD_MSG_HEARTBEAT, id, 6, 0);
    s_send (push, &h, NULL, 0);
    s_expect_error (push, FASGD_STATUS_UNKNOWN_CLIENT, 6);
    char *status = s_control_cmd (s.control, "STATUS");
    ck_assert_ptr_nonnull (status);
    ck_assert_ptr_nonnull (strstr (status, "\nguard_refused=4\n"));
    ck_assert_ptr_nonnull (strstr (status, "\nguard_forgotten=1\n"));
    ck_assert_ptr_nonnull (strstr (status, "\nclients=0\n"));
    free (status);
    zsock_destroy (&push);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  guard.enabled false (for measuring the guard's cost): no bound is
    applied, and the rule's own pass still refuses NaN, changing nothing.  */
START_TEST (test_guard_off)
{
    const char *sets [] = { "guard.enabled=false", "limits.grad_norm=10", "limits.refusals=0", NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push = s_connect (s.push), *fetch = s_connect (s.fetch);
    uint32_t id = s_join (push);
    float before [D], after [D], g [D];
    uint64_t ts;
    s_fill (g, 1.0f);                   /* norm √204 ≈ 14.3, above the bound */
    ck_assert_int_eq (s_push (push, id, 1, 0, g), FASGD_STATUS_OK);
    s_fetch (fetch, id, 2, before, &ts);
    ck_assert_uint_eq (ts, 1);
    g [3] = NAN;
    ck_assert_int_eq (s_push (push, id, 3, ts, g), FASGD_STATUS_NONFINITE);
    s_fetch (fetch, id, 4, after, &ts);
    ck_assert_mem_eq (before, after, sizeof before);
    ck_assert_uint_eq (ts, 1);
    zsock_destroy (&push);
    zsock_destroy (&fetch);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_clip)
{
    const char *sets [] = { "limits.grad_norm=1", "limits.grad_norm_action=clip", NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push = s_connect (s.push), *fetch = s_connect (s.fetch);
    uint32_t id = s_join (push);
    float before [D], after [D], g [D];
    s_fetch (fetch, id, 1, before, NULL);
    s_fill (g, 3.0f);
    ck_assert_int_eq (s_push (push, id, 2, 0, g), FASGD_STATUS_OK);
    s_fetch (fetch, id, 3, after, NULL);
    /*  asgd at lr 0.5 moved θ by 0.5 · g/‖g‖: a step of norm 0.5.  */
    double d2 = 0;
    for (int i = 0; i < D; i++)
        d2 += ((double) after [i] - before [i]) * ((double) after [i] - before [i]);
    ck_assert_double_eq_tol (sqrt (d2), 0.5, 1e-4);
    zsock_destroy (&push);
    zsock_destroy (&fetch);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_median_factor)
{
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "limits.grad_norm_action=refuse", NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push = s_connect (s.push);
    uint32_t id = s_join (push);
    float g [D];
    uint32_t seq = 1;
    uint64_t ts = 0;
    /*  Norms between 1.4 and 2.9: the median is about 2.  */
    for (int k = 0; k < 128; k++, ts++) {
        s_fill (g, 0.1f + 0.1f * (float) (k % 2));
        ck_assert_int_eq (s_push (push, id, seq++, ts, g), FASGD_STATUS_OK);
    }
    s_fill (g, 1.0f);                   /* 14.3: within ten times */
    ck_assert_int_eq (s_push (push, id, seq++, ts++, g), FASGD_STATUS_OK);
    s_fill (g, 10.0f);                  /* 143: far beyond */
    ck_assert_int_eq (s_push (push, id, seq++, ts, g), FASGD_STATUS_NONFINITE);
    zsock_destroy (&push);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  Without a reference, under limits.grad_norm_action auto (the
    default), a push above the median's bound from a client whose last
    push was applied is left out: acknowledged, θ and T unchanged,
    counted as ignored, not refused (an honest gradient's spike); a
    second in a row is refused; after an applied push the next one is
    left out again; a new client's first push above the bound is refused
    (none of its pushes was applied).  */
START_TEST (test_one_spike_left_out)
{
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "limits.refusals=0", NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push = s_connect (s.push), *fetch = s_connect (s.fetch);
    uint32_t id = s_join (push), seq = 1;
    float g [D], before [D], after [D];
    uint64_t ts = 0, ts2;
    s_fill (g, 0.1f);                   /* 1.43: the median */
    for (int k = 0; k < 16; k++, ts++)
        ck_assert_int_eq (s_push (push, id, seq++, ts, g), FASGD_STATUS_OK);
    s_fetch (fetch, id, seq++, before, &ts);
    ck_assert_uint_eq (ts, 16);
    s_fill (g, 10.0f);                  /* 143: a hundred times */
    ck_assert_int_eq (s_push (push, id, seq++, ts, g), FASGD_STATUS_OK);
    s_fetch (fetch, id, seq++, after, &ts2);
    ck_assert_uint_eq (ts2, ts);
    ck_assert_mem_eq (before, after, sizeof before);
    ck_assert_int_eq (s_push (push, id, seq++, ts, g), FASGD_STATUS_NONFINITE);
    s_fill (g, 0.1f);
    ck_assert_int_eq (s_push (push, id, seq++, ts++, g), FASGD_STATUS_OK);
    s_fill (g, 10.0f);
    ck_assert_int_eq (s_push (push, id, seq++, ts, g), FASGD_STATUS_OK);
    s_fetch (fetch, id, seq++, after, &ts2);
    ck_assert_uint_eq (ts2, 17);
    zsock_t *push2 = s_connect (s.push);
    uint32_t id2 = s_join (push2);
    ck_assert_int_eq (s_push (push2, id2, 1, ts, g), FASGD_STATUS_NONFINITE);
    char *status = s_control_cmd (s.control, "STATUS");
    ck_assert_ptr_nonnull (status);
    ck_assert_ptr_nonnull (strstr (status, "\nguard_refused=2\n"));
    ck_assert_ptr_nonnull (strstr (status, "\nguard_ignored=2\n"));
    free (status);
    zsock_destroy (&push2);
    zsock_destroy (&push);
    zsock_destroy (&fetch);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  Honest norms that grow twentyfold at once (a network's first steps)
    are refused a few times while the clients' votes rise, never until
    the clients are forgotten.  */
START_TEST (test_median_follows_growing_norms)
{
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "limits.grad_norm_action=refuse",
                            "limits.refusals=10", NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push [2] = { s_connect (s.push), s_connect (s.push) };
    uint32_t id [2] = { s_join (push [0]), s_join (push [1]) };
    uint32_t seq [2] = { 1, 1 };
    float g [D];
    s_fill (g, 0.05f);                  /* 0.71 */
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq (s_push (push [k], id [k], seq [k]++, 0, g), FASGD_STATUS_OK);
    s_fill (g, 1.0f);                   /* 14.3: twenty times */
    int refused [2] = { 0, 0 }, accepted [2] = { 0, 0 };
    for (int round = 0; round < 30; round++)
        for (int k = 0; k < 2; k++) {
            int status = s_push (push [k], id [k], seq [k]++, 0, g);
            ck_assert_msg (status == FASGD_STATUS_OK || status == FASGD_STATUS_NONFINITE,
                           "client %d, round %d: status %d", k, round, status);
            if (status == FASGD_STATUS_OK)
                accepted [k]++;
            else {
                ck_assert_msg (accepted [k] == 0, "client %d refused after it was let in", k);
                refused [k]++;
            }
        }
    for (int k = 0; k < 2; k++) {
        ck_assert_int_le (refused [k], 3);
        zsock_destroy (&push [k]);
    }
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  One client among three honest ones, however many pushes it sends,
    moves only its own vote: outsized norms stay refused, and tiny ones
    do not lower the bound the honest clients meet.  */
START_TEST (test_one_client_cannot_move_the_bound)
{
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "limits.grad_norm_action=refuse",
                            "limits.refusals=0", "heartbeat.expiry_ms=600000", NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push [4];
    uint32_t id [4], seq [4];
    for (int k = 0; k < 4; k++) {
        push [k] = s_connect (s.push);
        id [k] = s_join (push [k]);
        seq [k] = 1;
    }
    float g [D];
    s_fill (g, 0.1f);                   /* 1.43 */
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq (s_push (push [k], id [k], seq [k]++, 0, g), FASGD_STATUS_OK);
    s_fill (g, 700.0f);                 /* 1e4 */
    for (int n = 0; n < 200; n++)
        ck_assert_int_eq (s_push (push [3], id [3], seq [3]++, 0, g), FASGD_STATUS_NONFINITE);
    s_fill (g, 1e-5f);                  /* 1.4e-4 */
    for (int n = 0; n < 200; n++)
        ck_assert_int_eq (s_push (push [3], id [3], seq [3]++, 0, g), FASGD_STATUS_OK);
    s_fill (g, 0.7f);                   /* 10: within ten times the honest 1.43 */
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq (s_push (push [k], id [k], seq [k]++, 0, g), FASGD_STATUS_OK);
    s_fill (g, 5.0f);                   /* 71: beyond ten times the honest votes, now 3.6 */
    ck_assert_int_eq (s_push (push [3], id [3], seq [3]++, 0, g), FASGD_STATUS_NONFINITE);
    for (int k = 0; k < 4; k++)
        zsock_destroy (&push [k]);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  More voters than the median is taken at every push for, some of them
    leaving: the median is still the clients' (checked in STATUS), and
    what is refused is still refused.  */
START_TEST (test_many_voters_come_and_go)
{
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "limits.grad_norm_action=refuse",
                            "limits.refusals=0", "heartbeat.expiry_ms=600000", NULL };
    server_t s;
    s_start_sets (&s, sets);
    enum { K = 150 };
    zsock_t *push = s_connect (s.push);
    uint32_t id [K];
    float g [D];
    s_fill (g, 0.1f);                   /* 1.43 */
    for (int k = 0; k < K; k++) {
        id [k] = s_join (push);
        ck_assert_int_eq (s_push (push, id [k], 2, 0, g), FASGD_STATUS_OK);
    }
    /*  The first 100 leave; the other 50 push norms of 2.9 twice.  */
    for (int k = 0; k < 100; k++) {
        fasgd_header_t h = s_req (FASGD_MSG_LEAVE, id [k], 3, 0), r;
        s_send (push, &h, NULL, 0);
        s_recv (push, &r, NULL, 0);
        ck_assert_int_eq (r.status, FASGD_STATUS_OK);
    }
    s_fill (g, 0.2f);
    for (int round = 0; round < 2; round++)
        for (int k = 100; k < K; k++)
            ck_assert_int_eq (s_push (push, id [k], (uint32_t) (4 + round), 0, g), FASGD_STATUS_OK);
    /*  50 votes that moved towards 2.9 and the history's 1.43 (most of the
        accepted norms): the median is a vote, between the two.  */
    char *st = s_control_cmd (s.control, "STATUS");
    ck_assert_ptr_nonnull (st);
    const char *m = strstr (st, "\ngrad_norm_median=");
    ck_assert_ptr_nonnull (m);
    double median = atof (m + strlen ("\ngrad_norm_median="));
    free (st);
    ck_assert_msg (median > 1.5 && median < 2.9, "median %g", median);
    s_fill (g, 5.0f);                   /* 71: beyond ten times */
    ck_assert_int_eq (s_push (push, id [K - 1], 6, 0, g), FASGD_STATUS_NONFINITE);
    zsock_destroy (&push);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  A DEALER to endpoint speaking CURVE to the server of public key
    server_key with cert.  */
static zsock_t *
s_connect_curve (const char *endpoint, const char *server_key, zcert_t *cert)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    ck_assert_ptr_nonnull (sock);
    zsock_set_rcvtimeo (sock, 3000);
    zsock_set_linger (sock, 0);
    zsock_set_curve_serverkey (sock, server_key);
    zcert_apply (cert, sock);
    ck_assert_int_eq (zsock_connect (sock, "%s", endpoint), 0);
    return sock;
}

/*  With CURVE, one key that joins ten client ids and pushes tiny norms
    through each has one vote: the three honest keys' clients still push
    norms ten times their own.  */
START_TEST (test_one_key_one_vote)
{
    char keys [64], path [128], clients [96];
    snprintf (keys, sizeof keys, "/tmp/fasgd-test-guard-keys-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (keys));
    snprintf (clients, sizeof clients, "%s/clients", keys);
    ck_assert_int_eq (mkdir (clients, 0700), 0);
    zcert_t *server = zcert_new (), *cert [4];
    snprintf (path, sizeof path, "%s/server.key", keys);
    ck_assert_int_eq (zcert_save (server, path), 0);
    for (int k = 0; k < 4; k++) {
        cert [k] = zcert_new ();
        snprintf (path, sizeof path, "%s/peer%d.key", clients, k);
        ck_assert_int_eq (zcert_save_public (cert [k], path), 0);
    }
    char cert_set [160], clients_set [160];
    snprintf (cert_set, sizeof cert_set, "security.curve.server_cert=%s/server.key_secret", keys);
    snprintf (clients_set, sizeof clients_set, "security.curve.clients=%s", clients);
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "limits.refusals=0",
                            cert_set, clients_set, NULL };
    server_t s;
    s_start_sets (&s, sets);
    enum { MANY = 10 };
    zsock_t *honest [3], *mallory [MANY];
    uint32_t hid [3], mid [MANY];
    float g [D];
    s_fill (g, 0.1f);                   /* 1.43 */
    for (int k = 0; k < 3; k++) {
        honest [k] = s_connect_curve (s.push, zcert_public_txt (server), cert [k]);
        hid [k] = s_join (honest [k]);
        ck_assert_int_eq (s_push (honest [k], hid [k], 2, 0, g), FASGD_STATUS_OK);
    }
    s_fill (g, 1e-5f);                  /* 1.4e-4 */
    for (int k = 0; k < MANY; k++) {
        mallory [k] = s_connect_curve (s.push, zcert_public_txt (server), cert [3]);
        mid [k] = s_join (mallory [k]);
        for (uint32_t n = 0; n < 4; n++)
            ck_assert_int_eq (s_push (mallory [k], mid [k], 2 + n, 0, g), FASGD_STATUS_OK);
    }
    s_fill (g, 0.7f);                   /* 10: within ten times the honest 1.43 */
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq (s_push (honest [k], hid [k], 3, 0, g), FASGD_STATUS_OK);
    for (int k = 0; k < 3; k++)
        zsock_destroy (&honest [k]);
    for (int k = 0; k < MANY; k++)
        zsock_destroy (&mallory [k]);
    ck_assert_int_eq (s_stop (&s), 0);
    zcert_destroy (&server);
    for (int k = 0; k < 4; k++)
        zcert_destroy (&cert [k]);
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", keys);
    ck_assert_int_eq (system (cmd), 0);
}
END_TEST

/*  A DEALER to endpoint ("tcp://HOST:PORT") from the source address
    from.  */
static zsock_t *
s_connect_from (const char *endpoint, const char *from)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    ck_assert_ptr_nonnull (sock);
    zsock_set_rcvtimeo (sock, 3000);
    zsock_set_linger (sock, 0);
    ck_assert (strncmp (endpoint, "tcp://", 6) == 0);
    ck_assert_int_eq (zsock_connect (sock, "tcp://%s:0;%s", from, endpoint + 6), 0);
    return sock;
}

/*  Without CURVE the ids that join from one address share one vote:
    twelve ids from 127.0.0.5 pushing tiny norms (the lock-out of issue
    24's Sybil ids) weigh as much as one honest client, and the three
    honest clients, each from an address of its own, still push norms
    ten times their own. The same ids from the honest clients' address
    (_i == 1: every peer at 127.0.0.1, as on one host), or from their own
    with every id a vote (_i == 2: guard.address_votes 0), drag the
    median down and the honest push is refused: the address is what
    counts.  */
START_TEST (test_one_address_one_vote)
{
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "limits.grad_norm_action=refuse",
                            "limits.refusals=0", "heartbeat.expiry_ms=600000", _i == 2 ? "guard.address_votes=0" : NULL, NULL };
    server_t s;
    s_start_sets (&s, sets);
    const int apart = _i != 1;          /* each on an address of its own */
    enum { MANY = 12 };
    const char *honest_from [3] = { "127.0.0.2", "127.0.0.3", "127.0.0.4" };
    zsock_t *honest [3], *mallory;
    uint32_t hid [3], mid [MANY];
    float g [D];
    s_fill (g, 0.1f);                   /* 1.43 */
    for (int k = 0; k < 3; k++) {
        honest [k] = apart ? s_connect_from (s.push, honest_from [k]) : s_connect (s.push);
        hid [k] = s_join (honest [k]);
        ck_assert_int_eq (s_push (honest [k], hid [k], 2, 0, g), FASGD_STATUS_OK);
    }
    mallory = apart ? s_connect_from (s.push, "127.0.0.5") : s_connect (s.push);
    s_fill (g, 1e-5f);                  /* 1.4e-4 */
    for (int k = 0; k < MANY; k++) {
        mid [k] = s_join (mallory);
        for (uint32_t n = 0; n < 4; n++)
            ck_assert_int_eq (s_push (mallory, mid [k], 2 + n, 0, g), FASGD_STATUS_OK);
    }
    char *st = s_control_cmd (s.control, "STATUS");
    ck_assert_ptr_nonnull (st);
    char want [64];
    snprintf (want, sizeof want, "\nclient.%u.address=%s\n", mid [MANY - 1], apart ? "127.0.0.5" : "127.0.0.1");
    ck_assert_msg (strstr (st, want), "no %s in STATUS", want + 1);
    snprintf (want, sizeof want, "\nclient.%u.address=%s\n", hid [0], apart ? "127.0.0.2" : "127.0.0.1");
    ck_assert_msg (strstr (st, want), "no %s in STATUS", want + 1);
    free (st);
    s_fill (g, 0.7f);                   /* 10: within ten times the honest 1.43 */
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq (s_push (honest [k], hid [k], 3, 0, g),
                          (_i == 0 ? FASGD_STATUS_OK : FASGD_STATUS_NONFINITE));
    if (_i == 0) {
        /*  Nor can they walk it up: ids pushing at the bound, over and
            over, leave it where the honest votes hold it.  */
        for (int round = 0; round < 8; round++) {
            s_fill (g, 0.99f);          /* 14.1: within the bound, 19.6 (the honest votes are 1.96) */
            for (int k = 0; k < MANY; k++)
                ck_assert_int_eq (s_push (mallory, mid [k], (uint32_t) (6 + round), 0, g), FASGD_STATUS_OK);
        }
        s_fill (g, 1.5f);               /* 21: beyond ten times the honest votes */
        ck_assert_int_eq (s_push (mallory, mid [0], 14, 0, g), FASGD_STATUS_NONFINITE);
    }
    for (int k = 0; k < 3; k++)
        zsock_destroy (&honest [k]);
    zsock_destroy (&mallory);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  The same flood from 127.0.0.5 first, alone for 48 pushes (the history
    all tiny norms): honest clients that join after it, each from an
    address of its own, are refused at most their first push (a
    newcomer's first push votes its norm as it came, not cut to the tiny
    bound it met), never forgotten (limits.refusals 2), and then push
    norms ten times their own.  */
START_TEST (test_flood_first_does_not_lock_out)
{
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "limits.refusals=2",
                            "heartbeat.expiry_ms=600000", NULL };
    server_t s;
    s_start_sets (&s, sets);
    enum { MANY = 12 };
    const char *honest_from [3] = { "127.0.0.2", "127.0.0.3", "127.0.0.4" };
    zsock_t *honest [3], *mallory = s_connect_from (s.push, "127.0.0.5");
    uint32_t hid [3], mid;
    float g [D];
    s_fill (g, 1e-5f);                  /* 1.4e-4 */
    for (int k = 0; k < MANY; k++) {
        mid = s_join (mallory);
        for (uint32_t n = 0; n < 4; n++)
            ck_assert_int_eq (s_push (mallory, mid, 2 + n, 0, g), FASGD_STATUS_OK);
    }
    s_fill (g, 0.1f);                   /* 1.43: ten thousand times the bound's median */
    int refused = 0;
    for (int k = 0; k < 3; k++) {
        honest [k] = s_connect_from (s.push, honest_from [k]);
        hid [k] = s_join (honest [k]);
        int st = s_push (honest [k], hid [k], 2, 0, g);
        ck_assert (st == FASGD_STATUS_OK || st == FASGD_STATUS_NONFINITE);
        refused += st != FASGD_STATUS_OK;
    }
    ck_assert_int_ge (refused, 1);      /* the first met the flood's bound */
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq (s_push (honest [k], hid [k], 3, 0, g), FASGD_STATUS_OK);
    s_fill (g, 0.7f);                   /* 10 */
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq (s_push (honest [k], hid [k], 4, 0, g), FASGD_STATUS_OK);
    for (int k = 0; k < 3; k++)
        zsock_destroy (&honest [k]);
    zsock_destroy (&mallory);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  The other side of one vote an address: four honest clients on one
    host (127.0.0.2) beside one hostile id on another (127.0.0.5) that
    pushes tiny norms fast, filling the history with them. With one vote
    an address (_i == 0) it is one against one, and the lower median
    takes the hostile one: the honest clients' push of 7 times their
    norm is refused. With guard.address_votes 4 (_i == 1: the clients an
    honest host runs) the host has four votes and it passes.  */
START_TEST (test_address_votes)
{
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "limits.grad_norm_action=refuse",
                            "limits.refusals=0", "heartbeat.expiry_ms=600000", _i == 1 ? "guard.address_votes=4" : NULL, NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *honest [4], *mallory = s_connect_from (s.push, "127.0.0.5");
    uint32_t hid [4], mid = s_join (mallory);
    float g [D];
    s_fill (g, 0.1f);                   /* 1.43 */
    for (int k = 0; k < 4; k++) {
        honest [k] = s_connect_from (s.push, "127.0.0.2");
        hid [k] = s_join (honest [k]);
        ck_assert_int_eq (s_push (honest [k], hid [k], 2, 0, g), FASGD_STATUS_OK);
    }
    s_fill (g, 1e-5f);                  /* 1.4e-4 */
    for (uint32_t n = 0; n < 64; n++)
        ck_assert_int_eq (s_push (mallory, mid, 2 + n, 0, g), FASGD_STATUS_OK);
    s_fill (g, 0.7f);                   /* 10 */
    ck_assert_int_eq (s_push (honest [0], hid [0], 3, 0, g), _i == 1 ? FASGD_STATUS_OK : FASGD_STATUS_NONFINITE);
    for (int k = 0; k < 4; k++)
        zsock_destroy (&honest [k]);
    zsock_destroy (&mallory);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_dcasgd_overflow_refused)
{
    const char *sets [] = { "rule.name=dcasgd", "limits.grad_norm_factor=0", "limits.refusals=0", NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push = s_connect (s.push), *fetch = s_connect (s.fetch);
    zsock_t *push2 = s_connect (s.push), *fetch2 = s_connect (s.fetch);
    uint32_t a = s_join_rule (push, "dcasgd"), b = s_join_rule (push2, "dcasgd");
    float theta [D], before [D], g [D];
    s_fetch (fetch, a, 1, theta, NULL);
    s_fetch (fetch2, b, 1, theta, NULL);
    /*  A moves θ far; B's θ_used is then far from θ, and its g² term
        overflows.  */
    s_fill (g, 1e15f);
    ck_assert_int_eq (s_push (push, a, 2, 0, g), FASGD_STATUS_OK);
    s_fetch (fetch, a, 3, before, NULL);
    ck_assert_int_eq (s_push (push2, b, 2, 0, g), FASGD_STATUS_NONFINITE);
    s_fetch (fetch, a, 4, theta, NULL);
    ck_assert_mem_eq (before, theta, sizeof theta);
    zsock_destroy (&push);
    zsock_destroy (&fetch);
    zsock_destroy (&push2);
    zsock_destroy (&fetch2);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  Stops the server, keeping its log in log (len bytes).  */
static int
s_stop_log (server_t *s, char *log, size_t len)
{
    char path [128];
    snprintf (path, sizeof path, "%s/log", s->dir);
    kill (s->pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 500 && waitpid (s->pid, &status, WNOHANG) == 0; i++)
        usleep (10000);
    FILE *f = fopen (path, "r");
    size_t got = f ? fread (log, 1, len - 1, f) : 0;
    log [got] = 0;
    if (f)
        fclose (f);
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    ck_assert_int_eq (system (cmd), 0);
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/*  The first push after a restart meets the bound the run had learnt:
    the guard's state is in the checkpoint. A fresh server (the same
    guard with nothing learnt) lets the same push land.  */
START_TEST (test_bound_survives_a_restart)
{
    char dir [64], file [128], log [16384];
    snprintf (dir, sizeof dir, "/tmp/fasgd-test-guard-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (file, sizeof file, "checkpoint.file=%s/ckpt", dir);
    const char *sets [] = { "rule.lr=1e-6", "limits.grad_norm_factor=10", "checkpoint.seconds=0", file, NULL };
    server_t s;
    s_start_sets (&s, sets);
    zsock_t *push = s_connect (s.push);
    uint32_t id = s_join (push);
    float g [D];
    s_fill (g, 0.1f);                   /* 1.43 */
    for (uint32_t k = 1; k <= 40; k++)
        ck_assert_int_eq (s_push (push, id, k, k - 1, g), FASGD_STATUS_OK);
    zsock_destroy (&push);
    ck_assert_int_eq (s_stop_log (&s, log, sizeof log), 0);
    ck_assert_msg (strstr (log, "final checkpoint written at T=40"), "%s", log);

    /*  Resumed: a new client's first push, of norm 1e16, is refused; one
        of an honest size lands.  */
    float huge [D];
    s_fill (huge, (float) (1e16 / sqrt (D)));
    s_start_opts (&s, sets, 1);
    push = s_connect (s.push);
    id = s_join (push);
    ck_assert_int_eq (s_push (push, id, 1, 40, huge), FASGD_STATUS_NONFINITE);
    ck_assert_int_eq (s_push (push, id, 2, 40, g), FASGD_STATUS_OK);
    zsock_destroy (&push);
    ck_assert_int_eq (s_stop_log (&s, log, sizeof log), 0);
    ck_assert_msg (strstr (log, "guard: resumed with the norms of the last 40 accepted pushes"), "%s", log);

    /*  Started fresh, the guard has no median yet: the same push lands.  */
    s_start_sets (&s, sets);
    push = s_connect (s.push);
    id = s_join (push);
    ck_assert_int_eq (s_push (push, id, 1, 0, huge), FASGD_STATUS_OK);
    zsock_destroy (&push);
    ck_assert_int_eq (s_stop (&s), 0);
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq (system (cmd), 0);
}
END_TEST

START_TEST (test_limits)
{
    server_t s;
    char ckpt [128];
    snprintf (ckpt, sizeof ckpt, "checkpoint.file=/tmp/fasgd-test-guard-%d.ckpt", (int) getpid ());
    const char *sets [] = { "limits.clients=2", "limits.status_clients=1", ckpt, NULL };
    s_start_sets (&s, sets);
    /*  One checkpoint a second on request: the second waits for the
        pause after the first (tests/test_server.c counts the writes),
        longer than a client's expiry here: so before they join.  */
    char *st = s_control_cmd (s.control, "CHECKPOINT");
    ck_assert_msg (!strncmp (st, "status=200\n", 11), "%s", st);
    free (st);
    int64_t asked = zclock_mono ();
    st = s_control_cmd (s.control, "CHECKPOINT");
    ck_assert_msg (!strncmp (st, "status=200\n", 11), "%s", st);
    ck_assert_int_ge (zclock_mono () - asked, 500);
    free (st);
    zsock_t *p1 = s_connect (s.push), *p2 = s_connect (s.push), *p3 = s_connect (s.push);
    uint32_t a = s_join (p1), b = s_join (p2);
    fasgd_header_t h = s_req (FASGD_MSG_JOIN, 0, 1, 0);
    s_send (p3, &h, NULL, 0);
    s_expect_error (p3, FASGD_STATUS_UNAVAILABLE, 1);
    /*  b pushes more: STATUS lists b alone, and says so.  */
    float g [D];
    s_fill (g, 0.01f);
    ck_assert_int_eq (s_push (p2, b, 2, 0, g), FASGD_STATUS_OK);
    st = s_control_cmd (s.control, "STATUS");
    ck_assert_ptr_nonnull (st);
    char key [64];
    snprintf (key, sizeof key, "\nclient.%u.name=", b);
    ck_assert_ptr_nonnull (strstr (st, key));
    snprintf (key, sizeof key, "\nclient.%u.name=", a);
    ck_assert_ptr_null (strstr (st, key));
    ck_assert_ptr_nonnull (strstr (st, "\nclients_listed=1\n"));
    free (st);
    /*  A burst of control requests: the server answers past 50 a second
        with 429, and the data sockets stay served.  */
    zsock_t *ctl = s_connect (s.control);
    int refused = 0;
    for (int batch = 0; batch < 12; batch++) {
        for (int k = 0; k < 10; k++)
            ck_assert_int_eq (zstr_send (ctl, "STATUS"), 0);
        for (int k = 0; k < 10; k++) {
            st = zstr_recv (ctl);
            ck_assert_ptr_nonnull (st);
            refused += !strncmp (st, "status=429\n", 11);
            zstr_free (&st);
        }
    }
    zsock_destroy (&ctl);
    ck_assert_int_gt (refused, 0);
    ck_assert_int_eq (s_push (p1, a, 3, 1, g), FASGD_STATUS_OK);
    zsock_destroy (&p1);
    zsock_destroy (&p2);
    zsock_destroy (&p3);
    ck_assert_int_eq (s_stop (&s), 0);
    unlink (ckpt + strlen ("checkpoint.file="));
}
END_TEST

static Suite *
guard_suite (void)
{
    Suite *s = suite_create ("guard");
    TCase *tc = tcase_create ("loopback");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_huge_pushes_change_nothing);
    tcase_add_test (tc, test_refused_push_is_not_repeated);
    tcase_add_test (tc, test_norm_bound_and_forgetting);
    tcase_add_test (tc, test_guard_off);
    tcase_add_test (tc, test_clip);
    tcase_add_test (tc, test_median_factor);
    tcase_add_test (tc, test_one_spike_left_out);
    tcase_add_test (tc, test_median_follows_growing_norms);
    tcase_add_test (tc, test_one_client_cannot_move_the_bound);
    tcase_add_test (tc, test_many_voters_come_and_go);
    tcase_add_test (tc, test_one_key_one_vote);
    tcase_add_loop_test (tc, test_one_address_one_vote, 0, 3);
    tcase_add_loop_test (tc, test_address_votes, 0, 2);
    tcase_add_test (tc, test_flood_first_does_not_lock_out);
    tcase_add_test (tc, test_dcasgd_overflow_refused);
    tcase_add_test (tc, test_limits);
    tcase_add_test (tc, test_bound_survives_a_restart);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (guard_suite)
