/*  fasgd-server with turns.enabled (server/turns.h) on loopback, spoken
    to with raw ZeroMQ sockets as in test_server.c. Honest clients, one
    request at a time each, get every reply, some after waiting their
    turn, none without one, and no turn of theirs is cut; their turns
    set the bound of a turn (turn_hold.h) to turns.hold_min_ms. With a
    fixed bound (turns.hold_factor 0), a client that does not read holds
    the others once, for turns.hold_ms, and its next 16 replies go
    without a turn; the 17th holds them once more, and then 32 go
    without; eight such ids hold them at most once each in 20 rounds,
    and replies beyond turns.queue go at once. A client that reads
    slowly, a reply at a time, holds another client's reply at most one
    turn: its own later requests wait their order but hold no one. A
    reply whose client left while it waited is dropped and counted. With
    the bound that follows the link, ids that do not read hold an honest
    client's replies for turns.hold_min_ms each, not turns.hold_ms. A
    client whose turns each hold the others 100 ms, below any bound (a
    slow path, or one that holds them on purpose), is found slower at
    its fourth turn, and its next 16 replies go without one. A reply
    without a turn (its client cut, or its client's second request)
    waits behind the replies that waited before it, and holds no one
    when it goes. Each test starts its own server.  */
#include "serverutil.h"

#include <pthread.h>
#include <stdarg.h>

#define S_N 79510                       /* model.sizes [784, 100, 10]: a reply of 318 KB */

/*  STATUS's value of key.  */
static unsigned long long
s_stat (const server_t *s, const char *key)
{
    char *text = s_control_cmd (s->control, "STATUS");
    ck_assert_ptr_nonnull (text);
    unsigned long long v = s_status_num (text, key);
    free (text);
    return v;
}

/*  Waits up to 10 s for STATUS's key to reach at least min; its value.  */
static unsigned long long
s_wait_stat (const server_t *s, const char *key, unsigned long long min)
{
    unsigned long long v = 0;
    for (int i = 0; i < 500 && (v = s_stat (s, key)) < min; i++)
        usleep (20000);
    return v;
}

/*  Joins on a push socket of its own (*push); the client's id.  */
static uint32_t
s_join_big (const server_t *s, zsock_t **push)
{
    fasgd_proto_desc_t d;
    *push = s_connect (s->push);
    uint32_t id = s_join_desc (*push, &d);
    ck_assert_uint_eq (d.params, S_N);
    return id;
}

/*  A fetch socket that does not read: a high-water mark of one message
    and a small kernel buffer, so that what it leaves unread stays at
    the server.  */
static zsock_t *
s_non_reader (const server_t *s)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    ck_assert_ptr_nonnull (sock);
    zsock_set_linger (sock, 0);
    zsock_set_rcvhwm (sock, 1);
    zsock_set_rcvbuf (sock, 4096);
    zsock_set_rcvtimeo (sock, 3000);
    ck_assert_int_eq (zsock_connect (sock, "%s", s->fetch), 0);
    return sock;
}

/*  n FETCHes of client id on sock, seqs from seq.  */
static void
s_fetches (zsock_t *sock, uint32_t id, uint32_t seq, int n)
{
    for (int i = 0; i < n; i++) {
        fasgd_header_t h = s_req (FASGD_MSG_FETCH, id, seq + (uint32_t) i, 0);
        s_send (sock, &h, NULL, 0);
    }
}

/*  The PARAMS reply to seq, status 200, with the whole of θ.  */
static void
s_expect_params (zsock_t *sock, uint32_t seq)
{
    static float theta [S_N];
    fasgd_header_t r;
    ck_assert_uint_eq (s_recv (sock, &r, theta, sizeof theta), sizeof theta);
    ck_assert_int_eq (r.type, FASGD_MSG_PARAMS);
    ck_assert_int_eq (r.status, FASGD_STATUS_OK);
    ck_assert_uint_eq (r.seq, seq);
}

/*  A client stuck in its turn. The kernel counts a connection's unsent
    bytes, not a reply's, and the socket takes one reply whole into its
    queue: a first client's forty FETCHes fill what the socket and the
    kernel take (its turn, which ends once the first is taken, and 39
    replies without one, in their order behind it); then a second
    client on the same connection asks and takes the next turn, behind
    them, held for its bound. The fetch socket; *push, *id the second
    client's.  */
static zsock_t *
s_stuck (const server_t *s, zsock_t **push, uint32_t *id)
{
    fasgd_proto_desc_t d;
    uint32_t filler = s_join_big (s, push);
    *id = s_join_desc (*push, &d);
    zsock_t *sock = s_non_reader (s);
    unsigned long long fetches = s_stat (s, "fetches");
    s_fetches (sock, filler, 1, 40);
    ck_assert_uint_ge (s_wait_stat (s, "fetches", fetches + 40), fetches + 40);
    s_fetches (sock, *id, 1, 1);
    ck_assert_uint_ge (s_wait_stat (s, "fetches", fetches + 41), fetches + 41);
    return sock;
}

/*  A client stuck in its turn (a, s_stuck's second) and an honest one
    (b) on sockets of their own.  */
typedef struct {
    zsock_t *a_fetch, *a_push, *b_fetch, *b_push;
    uint32_t a, b;
} s_pair_t;

static void
s_pair_start (const server_t *s, s_pair_t *p)
{
    p->a_fetch = s_stuck (s, &p->a_push, &p->a);
    p->b = s_join_big (s, &p->b_push);
    p->b_fetch = s_connect (s->fetch);
}

/*  Closes the pair's sockets and stops the server, which must exit 0.  */
static void
s_pair_end (server_t *s, s_pair_t *p)
{
    zsock_destroy (&p->a_fetch);
    zsock_destroy (&p->b_fetch);
    zsock_destroy (&p->a_push);
    zsock_destroy (&p->b_push);
    ck_assert_int_eq (s_stop (s), 0);
}

/*  Whether the server's log has a line grep's pattern (made from fmt as
    by printf) matches.  */
static int s_logged (const server_t *s, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static int
s_logged (const server_t *s, const char *fmt, ...)
{
    char pattern [256], cmd [sizeof pattern + sizeof s->dir + 32];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (pattern, sizeof pattern, fmt, ap);
    va_end (ap);
    snprintf (cmd, sizeof cmd, "grep -q '%s' %s/log", pattern, s->dir);
    return system (cmd) == 0;
}

/*  Starts a server with turns of a fixed bound, hold_ms (no bound that
    follows the link, no cut by the receive window).  */
static void
s_start_fixed (server_t *s, int hold_ms)
{
    char hold [32];
    snprintf (hold, sizeof hold, "turns.hold_ms=%d", hold_ms);
    const char *sets [] = { "model.sizes=[784,100,10]", "turns.enabled=true", hold, "turns.hold_factor=0",
                            "turns.reader_ms=0", "heartbeat.expiry_ms=60000", NULL };
    s_start_sets (s, sets);
}

START_TEST (test_turns_honest_clients)
{
    server_t s;
    const char *sets [] = { "model.sizes=[784,100,10]", "turns.enabled=true", "heartbeat.expiry_ms=60000", NULL };
    s_start_sets (&s, sets);
    enum { S_CLIENTS = 4, S_ROUNDS = 20 };
    zsock_t *push [S_CLIENTS], *fetch [S_CLIENTS];
    uint32_t id [S_CLIENTS];
    for (int k = 0; k < S_CLIENTS; k++) {
        id [k] = s_join_big (&s, &push [k]);
        fetch [k] = s_connect (s.fetch);
    }
    /*  Each asks, all at once, and reads its reply before asking again.  */
    for (uint32_t seq = 1; seq <= S_ROUNDS; seq++) {
        for (int k = 0; k < S_CLIENTS; k++)
            s_fetches (fetch [k], id [k], seq, 1);
        for (int k = 0; k < S_CLIENTS; k++)
            s_expect_params (fetch [k], seq);
    }
    char *text = s_control_cmd (s.control, "STATUS");
    ck_assert_ptr_nonnull (text);
    ck_assert_msg (s_status_num (text, "fetches") == S_CLIENTS * S_ROUNDS && s_status_num (text, "turns_waited") > 0
                   && s_status_num (text, "turns_skipped") == 0 && s_status_num (text, "turns_cut") == 0
                   && s_status_num (text, "turns_waiting") == 0 && s_status_num (text, "replies_dropped") == 0
                   && s_status_num (text, "turns_hold_ms") == 500 && s_status_num (text, "turns_slower") == 0,
                   "%s", text);
    free (text);
    for (int k = 0; k < S_CLIENTS; k++) {
        zsock_destroy (&fetch [k]);
        zsock_destroy (&push [k]);
    }
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_turns_non_reader_holds_once_a_while)
{
    server_t s;
    s_start_fixed (&s, 300);
    s_pair_t p;
    s_pair_start (&s, &p);
    /*  b waits for a's turn, which is cut; then not while a's next 16
        replies go without a turn.  */
    for (uint32_t seq = 1; seq <= 20; seq++) {
        s_fetches (p.b_fetch, p.b, seq, 1);
        s_expect_params (p.b_fetch, seq);
    }
    /*  (The filler's turn may have been cut too, on a loaded machine.)  */
    unsigned long long cut = s_stat (&s, "turns_cut"), fetches = s_stat (&s, "fetches");
    ck_assert_uint_ge (cut, 1);
    s_fetches (p.a_fetch, p.a, 100, 16);
    ck_assert_uint_ge (s_wait_stat (&s, "fetches", fetches + 16), fetches + 16);
    for (uint32_t seq = 21; seq <= 40; seq++) {
        s_fetches (p.b_fetch, p.b, seq, 1);
        s_expect_params (p.b_fetch, seq);
    }
    ck_assert_uint_eq (s_stat (&s, "turns_cut"), cut);
    /*  Its 17th takes a turn again, holds b once more, and is cut: the
        next 32 go without.  */
    s_fetches (p.a_fetch, p.a, 116, 1);
    ck_assert_uint_ge (s_wait_stat (&s, "fetches", fetches + 17), fetches + 17);
    s_fetches (p.b_fetch, p.b, 41, 1);
    s_expect_params (p.b_fetch, 41);
    ck_assert_uint_eq (s_stat (&s, "turns_cut"), cut + 1);
    ck_assert_msg (s_logged (&s, "client %u (tester): a reply to it held the next one 300 ms; its next 16 replies "
                             "go without a turn", p.a), "no line of the first cut in the log");
    ck_assert_msg (s_logged (&s, "client %u (tester): .* 300 ms; its next 32 replies", p.a),
                   "no line of the second cut in the log");
    s_pair_end (&s, &p);
}
END_TEST

/*  A reply without a turn waits its order: a client cut once (a) asks
    while another client's turn is under way and b waits; a's reply
    waits behind b's, and when it goes it holds no one.  */
START_TEST (test_turns_cut_client_waits_its_order)
{
    server_t s;
    s_start_fixed (&s, 3000);
    s_pair_t p;
    s_pair_start (&s, &p);
    zsock_set_rcvtimeo (p.b_fetch, 8000);
    s_fetches (p.b_fetch, p.b, 1, 1);
    s_expect_params (p.b_fetch, 1);
    /*  x's turn under way, stuck for 3 s: b asks, then a, whose next
        16 replies go without a turn.  */
    zsock_t *x_push;
    uint32_t x;
    zsock_t *x_fetch = s_stuck (&s, &x_push, &x);
    ck_assert_msg (s_logged (&s, "client %u (tester): a reply to it held the next one 3000 ms; its next 16 replies",
                             p.a), "a's turn was not cut");
    unsigned long long fetches = s_stat (&s, "fetches"), skipped = s_stat (&s, "turns_skipped");
    s_fetches (p.b_fetch, p.b, 2, 1);
    ck_assert_uint_eq (s_wait_stat (&s, "turns_waiting", 1), 1);
    s_fetches (p.a_fetch, p.a, 200, 1);
    ck_assert_uint_eq (s_wait_stat (&s, "turns_waiting", 2), 2);
    ck_assert_uint_eq (s_stat (&s, "fetches"), fetches);
    s_expect_params (p.b_fetch, 2);
    ck_assert_uint_ge (s_wait_stat (&s, "fetches", fetches + 2), fetches + 2);
    /*  a's reply, unread, holds b's next one no turn.  */
    zsock_set_rcvtimeo (p.b_fetch, 1000);
    s_fetches (p.b_fetch, p.b, 3, 1);
    s_expect_params (p.b_fetch, 3);
    ck_assert_uint_eq (s_stat (&s, "turns_skipped"), skipped);
    zsock_destroy (&x_fetch);
    zsock_destroy (&x_push);
    s_pair_end (&s, &p);
}
END_TEST

/*  A client's second request while its first waits waits its order
    too: a's turn under way, b asks, then c twice; c's second reply
    goes after b's and its own first, not at once.  */
START_TEST (test_turns_second_request_waits_its_order)
{
    server_t s;
    s_start_fixed (&s, 3000);
    s_pair_t p;
    s_pair_start (&s, &p);
    zsock_t *c_push;
    uint32_t c = s_join_big (&s, &c_push);
    zsock_t *c_fetch = s_connect (s.fetch);
    zsock_set_rcvtimeo (p.b_fetch, 8000);
    zsock_set_rcvtimeo (c_fetch, 8000);
    unsigned long long fetches = s_stat (&s, "fetches"), skipped = s_stat (&s, "turns_skipped");
    s_fetches (p.b_fetch, p.b, 1, 1);
    ck_assert_uint_eq (s_wait_stat (&s, "turns_waiting", 1), 1);
    s_fetches (c_fetch, c, 1, 2);
    ck_assert_uint_eq (s_wait_stat (&s, "turns_waiting", 3), 3);
    ck_assert_uint_eq (s_stat (&s, "fetches"), fetches);
    s_expect_params (p.b_fetch, 1);
    s_expect_params (c_fetch, 1);
    s_expect_params (c_fetch, 2);
    ck_assert_uint_eq (s_stat (&s, "turns_skipped"), skipped);
    zsock_destroy (&c_fetch);
    zsock_destroy (&c_push);
    s_pair_end (&s, &p);
}
END_TEST

START_TEST (test_turns_many_non_readers)
{
    server_t s;
    const char *sets [] = { "model.sizes=[784,100,10]", "turns.enabled=true", "turns.hold_ms=200",
                            "turns.hold_factor=0", "turns.reader_ms=0", "turns.queue=4",
                            "heartbeat.expiry_ms=60000", NULL };
    s_start_sets (&s, sets);
    enum { S_IDS = 8 };
    zsock_t *push [S_IDS], *fetch [S_IDS], *b_push;
    uint32_t id [S_IDS];
    for (int k = 0; k < S_IDS; k++)
        fetch [k] = s_stuck (&s, &push [k], &id [k]);
    uint32_t b = s_join_big (&s, &b_push);
    zsock_t *b_fetch = s_connect (s.fetch);
    /*  Each stuck id holds b at most once, 200 ms, at any of b's
        fetches (1.6 s in all); once more at its 17th request after its
        cut.  */
    zsock_set_rcvtimeo (b_fetch, 5000);
    for (uint32_t seq = 1; seq <= 20; seq++) {
        s_fetches (b_fetch, b, seq, 1);
        s_expect_params (b_fetch, seq);
        /*  They ask again, each time.  */
        for (int k = 0; k < S_IDS; k++)
            s_fetches (fetch [k], id [k], 100 + seq, 1);
    }
    char *text = s_control_cmd (s.control, "STATUS");
    ck_assert_ptr_nonnull (text);
    ck_assert_msg (s_status_num (text, "turns_cut") >= S_IDS && s_status_num (text, "turns_cut") <= 3 * S_IDS
                   && s_status_num (text, "turns_skipped") > 0, "%s", text);
    free (text);
    for (int k = 0; k < S_IDS; k++) {
        zsock_destroy (&fetch [k]);
        zsock_destroy (&push [k]);
    }
    zsock_destroy (&b_fetch);
    zsock_destroy (&b_push);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

/*  A client that reads one reply every 150 ms.  */
typedef struct {
    zsock_t *sock;
    int want, got;
} s_slow_t;

static void *
s_slow_reader (void *arg)
{
    s_slow_t *r = arg;
    for (int i = 0; i < r->want; i++) {
        zmsg_t *m = zmsg_recv (r->sock);
        if (!m)
            break;
        zmsg_destroy (&m);
        r->got++;
        usleep (150000);
    }
    return NULL;
}

START_TEST (test_turns_slow_reader)
{
    server_t s;
    s_start_fixed (&s, 400);
    zsock_t *a_push, *b_push;
    uint32_t a = s_join_big (&s, &a_push), b = s_join_big (&s, &b_push);
    s_slow_t slow = { s_non_reader (&s), 20, 0 };
    zsock_t *b_fetch = s_connect (s.fetch);
    /*  a's later replies wait their order behind its first and hold
        no one: were each to hold the turn, b's replies would wait for
        all of them, 3 s; a holds b's reply at most one turn, cut at
        400 ms.  */
    zsock_set_rcvtimeo (b_fetch, 2000);
    s_fetches (slow.sock, a, 1, 20);
    ck_assert_uint_ge (s_wait_stat (&s, "fetches", 20), 20);
    pthread_t reader;
    ck_assert_int_eq (pthread_create (&reader, NULL, s_slow_reader, &slow), 0);
    for (uint32_t seq = 1; seq <= 10; seq++) {
        s_fetches (b_fetch, b, seq, 1);
        s_expect_params (b_fetch, seq);
    }
    pthread_join (reader, NULL);
    ck_assert_int_eq (slow.got, 20);
    char *text = s_control_cmd (s.control, "STATUS");
    ck_assert_ptr_nonnull (text);
    ck_assert_msg (s_status_num (text, "turns_waited") >= 19 && s_status_num (text, "turns_skipped") == 0
                   && s_status_num (text, "replies_dropped") == 0, "%s", text);
    free (text);
    zsock_destroy (&slow.sock);
    zsock_destroy (&b_fetch);
    zsock_destroy (&a_push);
    zsock_destroy (&b_push);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_turns_client_left_while_waiting)
{
    server_t s;
    s_start_fixed (&s, 1000);
    s_pair_t p;
    s_pair_start (&s, &p);
    s_fetches (p.b_fetch, p.b, 1, 1);
    ck_assert_uint_eq (s_wait_stat (&s, "turns_waiting", 1), 1);
    fasgd_header_t h = s_req (FASGD_MSG_LEAVE, p.b, 2, 0), r;
    s_send (p.b_push, &h, NULL, 0);
    s_recv (p.b_push, &r, NULL, 0);
    ck_assert_int_eq (r.status, FASGD_STATUS_OK);
    /*  a's turn cut, b's reply has nobody to go to.  */
    ck_assert_uint_ge (s_wait_stat (&s, "turns_cut", 1), 1);
    ck_assert_uint_eq (s_wait_stat (&s, "replies_dropped", 1), 1);
    ck_assert_uint_eq (s_stat (&s, "turns_waiting"), 0);
    zsock_set_rcvtimeo (p.b_fetch, 300);
    zmsg_t *m = zmsg_recv (p.b_fetch);
    ck_assert_msg (m == NULL, "a reply came to a client that had left");
    s_pair_end (&s, &p);
}
END_TEST

START_TEST (test_turns_hold_follows_the_link)
{
    server_t s;
    const char *sets [] = { "model.sizes=[784,100,10]", "turns.enabled=true", "turns.hold_ms=3000",
                            "turns.hold_min_ms=100", "turns.reader_ms=0", "heartbeat.expiry_ms=60000", NULL };
    s_start_sets (&s, sets);
    zsock_t *push [2], *fetch [2];
    uint32_t id [2];
    for (int k = 0; k < 2; k++) {
        id [k] = s_join_big (&s, &push [k]);
        fetch [k] = s_connect (s.fetch);
    }
    /*  Until a turn has ended by itself, turns.hold_ms; then honest
        turns on loopback, each much less than 25 ms, set the least.  */
    ck_assert_uint_eq (s_stat (&s, "turns_hold_ms"), 3000);
    for (uint32_t seq = 1; seq <= 10; seq++) {
        for (int k = 0; k < 2; k++)
            s_fetches (fetch [k], id [k], seq, 1);
        for (int k = 0; k < 2; k++)
            s_expect_params (fetch [k], seq);
    }
    ck_assert_uint_eq (s_stat (&s, "turns_hold_ms"), 100);
    /*  Four ids that do not read, which with turns.hold_ms alone would
        hold client 0 for 3 s each.  */
    enum { S_IDS = 4 };
    zsock_t *s_push [S_IDS], *s_fetch [S_IDS];
    uint32_t s_id [S_IDS];
    for (int k = 0; k < S_IDS; k++)
        s_fetch [k] = s_stuck (&s, &s_push [k], &s_id [k]);
    zsock_set_rcvtimeo (fetch [0], 2000);
    for (uint32_t seq = 11; seq <= 30; seq++) {
        s_fetches (fetch [0], id [0], seq, 1);
        s_expect_params (fetch [0], seq);
        for (int k = 0; k < S_IDS; k++)
            s_fetches (s_fetch [k], s_id [k], 100 + seq, 1);
    }
    ck_assert_uint_ge (s_stat (&s, "turns_cut"), S_IDS);
    ck_assert_msg (s_logged (&s, "client %u (tester): a reply to it held the next one 100 ms", s_id [0]),
                   "no line of the cut, at 100 ms, in the log");
    for (int k = 0; k < S_IDS; k++) {
        zsock_destroy (&s_fetch [k]);
        zsock_destroy (&s_push [k]);
    }
    for (int k = 0; k < 2; k++) {
        zsock_destroy (&fetch [k]);
        zsock_destroy (&push [k]);
    }
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

START_TEST (test_turns_non_reader_cut_by_its_window)
{
    server_t s;
    const char *sets [] = { "model.sizes=[784,100,10]", "turns.enabled=true", "turns.hold_ms=3000",
                            "turns.hold_min_ms=3000", "heartbeat.expiry_ms=60000", NULL };
    s_start_sets (&s, sets);
    /*  Its turn's bound is 3 s, but TCP cannot send to it for its full
        window: cut at turns.reader_ms (200), and again when its 17th
        reply after takes a turn.  */
    s_pair_t p;
    s_pair_start (&s, &p);
    zsock_set_rcvtimeo (p.b_fetch, 1500);
    for (uint32_t seq = 1; seq <= 20; seq++) {
        s_fetches (p.b_fetch, p.b, seq, 1);
        s_expect_params (p.b_fetch, seq);
        s_fetches (p.a_fetch, p.a, 100 + seq, 1);
    }
    ck_assert_uint_ge (s_stat (&s, "turns_cut"), 2);
    ck_assert_msg (s_logged (&s, "client %u (tester): a reply to it held the next one [0-9]* ms, its receive window "
                             "full (it does not read); its next 16 replies", p.a),
                   "no line of the cut, by the window, in the log");
    s_pair_end (&s, &p);
}
END_TEST

START_TEST (test_turns_slower_path)
{
    server_t s;
    const char *sets [] = { "model.sizes=[784,100,10]", "turns.enabled=true", "turns.hold_ms=3000",
                            "turns.hold_min_ms=3000", "turns.reader_ms=0", "heartbeat.expiry_ms=60000", NULL };
    s_start_sets (&s, sets);
    zsock_t *a_push, *b_push, *c_push, *b_fetch, *c_fetch;
    uint32_t a = s_join_big (&s, &a_push), b = s_join_big (&s, &b_push), c = s_join_big (&s, &c_push);
    b_fetch = s_connect (s.fetch);
    c_fetch = s_connect (s.fetch);
    zsock_t *a_fetch = s_non_reader (&s);
    fasgd_proto_desc_t d;
    uint32_t filler = s_join_desc (a_push, &d);
    uint32_t b_seq = 1, a_seq = 1, f_seq = 1;
    for (int round = 1; round <= 4; round++) {
        /*  b and c take turns on loopback, far shorter than 10 ms.  */
        for (int k = 0; k < 8; k++, b_seq++) {
            s_fetches (b_fetch, b, b_seq, 1);
            s_fetches (c_fetch, c, b_seq, 1);
            s_expect_params (b_fetch, b_seq);
            s_expect_params (c_fetch, b_seq);
        }
        /*  a's turn lasts until it reads, 100 ms after b asked: as a
            slow path would hold it. A filler on its connection fills
            what the socket and the kernel take first (s_stuck).  */
        unsigned long long fetches = s_stat (&s, "fetches");
        s_fetches (a_fetch, filler, f_seq, 7);
        ck_assert_uint_ge (s_wait_stat (&s, "fetches", fetches + 7), fetches + 7);
        s_fetches (a_fetch, a, a_seq, 1);
        ck_assert_uint_ge (s_wait_stat (&s, "fetches", fetches + 8), fetches + 8);
        s_fetches (b_fetch, b, b_seq, 1);
        ck_assert_uint_eq (s_wait_stat (&s, "turns_waiting", 1), 1);
        usleep (100000);
        for (int k = 0; k < 7; k++, f_seq++)
            s_expect_params (a_fetch, f_seq);
        s_expect_params (a_fetch, a_seq++);
        s_expect_params (b_fetch, b_seq++);
    }
    ck_assert_uint_ge (s_stat (&s, "turns_slower"), 1);
    ck_assert_msg (s_logged (&s, "client %u (tester): its turns take [0-9.]* ms, the others. [0-9.]* ms: its path is "
                             "slower than theirs; its replies go without a turn, one in 17", a),
                   "no line of the judgement in the log");
    /*  Judged at its fourth turn: its next 16 replies go without a
        turn (the first, taking one, would hold b's reply 3 s), and
        none goes at once past the queue.  */
    unsigned long long skipped = s_stat (&s, "turns_skipped"), fetches = s_stat (&s, "fetches");
    s_fetches (a_fetch, a, a_seq, 16);
    ck_assert_uint_ge (s_wait_stat (&s, "fetches", fetches + 16), fetches + 16);
    zsock_set_rcvtimeo (b_fetch, 1000);
    s_fetches (b_fetch, b, b_seq, 1);
    s_expect_params (b_fetch, b_seq++);
    ck_assert_uint_eq (s_stat (&s, "turns_skipped"), skipped);
    for (int k = 0; k < 16; k++, a_seq++)
        s_expect_params (a_fetch, a_seq);
    zsock_destroy (&a_fetch);
    zsock_destroy (&b_fetch);
    zsock_destroy (&c_fetch);
    zsock_destroy (&a_push);
    zsock_destroy (&b_push);
    zsock_destroy (&c_push);
    ck_assert_int_eq (s_stop (&s), 0);
}
END_TEST

static Suite *
turns_suite (void)
{
    Suite *s = suite_create ("turns");
    TCase *tc = tcase_create ("turns");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_turns_honest_clients);
    tcase_add_test (tc, test_turns_non_reader_holds_once_a_while);
    tcase_add_test (tc, test_turns_cut_client_waits_its_order);
    tcase_add_test (tc, test_turns_second_request_waits_its_order);
    tcase_add_test (tc, test_turns_many_non_readers);
    tcase_add_test (tc, test_turns_slow_reader);
    tcase_add_test (tc, test_turns_client_left_while_waiting);
    tcase_add_test (tc, test_turns_hold_follows_the_link);
    tcase_add_test (tc, test_turns_non_reader_cut_by_its_window);
    tcase_add_test (tc, test_turns_slower_path);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (turns_suite)
