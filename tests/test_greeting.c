/*  The books of the connections not yet heard from (server/greeting.c):
    above all which connection a request read on a descriptor belongs to
    (fasgd_srv_greeting_heard), when its accept was read late, its
    connection closed, or turned away at its accept.  */
#include "testutil.h"
#include "greeting.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define S_PEER_A 0x1111u
#define S_PEER_B 0x2222u

START_TEST (test_waited_for_then_heard)
{
    fasgd_srv_greeting_t *g = fasgd_srv_greeting_new ();
    ck_assert_ptr_nonnull (g);
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 7, S_PEER_A), -1);       /* no accept read yet */
    ck_assert_int_eq (fasgd_srv_greeting_begin (g, 7, 0, "127.0.0.2", 100), 0);
    ck_assert_int_eq (fasgd_srv_greeting_begin (g, 9, 1, "127.0.0.2", 200), 0);
    ck_assert_uint_eq (fasgd_srv_greeting_count (g), 2);
    ck_assert_uint_eq (fasgd_srv_greeting_from (g, "127.0.0.2"), 2);
    int64_t since;
    ck_assert_int_eq (fasgd_srv_greeting_oldest (g, &since), 7);
    ck_assert_int_eq (since, 100);
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 7, S_PEER_A), 1);
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 7, S_PEER_A), 0);        /* heard before */
    ck_assert_uint_eq (fasgd_srv_greeting_from (g, "127.0.0.2"), 1);
    ck_assert_int_eq (fasgd_srv_greeting_oldest (g, NULL), 9);
    fasgd_srv_greeting_destroy (&g);
    ck_assert_ptr_null (g);
}
END_TEST

START_TEST (test_closed_then_late_request)
{
    fasgd_srv_greeting_t *g = fasgd_srv_greeting_new ();
    ck_assert_int_eq (fasgd_srv_greeting_begin (g, 7, 0, "127.0.0.2", 100), 0);
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 7, S_PEER_A), 1);
    ck_assert_int_eq (fasgd_srv_greeting_end (g, 7, 1), 0);         /* another socket's event: not this one */
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 7, S_PEER_A), 0);
    ck_assert_int_eq (fasgd_srv_greeting_end (g, 7, 0), 0);         /* closed, no longer greeting */
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 7, S_PEER_A), -2);       /* the closed one's, late */
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 7, S_PEER_B), -1);       /* a newer one's, accept unread */
    fasgd_srv_greeting_destroy (&g);
}
END_TEST

/*  A connection turned away at its accept: a request read on its
    descriptor is its own until a newer connection's accept there.  */
START_TEST (test_refused_at_accept)
{
    fasgd_srv_greeting_t *g = fasgd_srv_greeting_new ();
    ck_assert_int_eq (fasgd_srv_greeting_begin (g, 5, 0, "127.0.0.2", 100), 0);  /* the holder */
    ck_assert_int_eq (fasgd_srv_greeting_refused (g, 6, 0), 0);     /* the next from there: turned away */
    ck_assert_uint_eq (fasgd_srv_greeting_count (g), 1);
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 6, S_PEER_A), -3);
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 6, S_PEER_B), -3);
    ck_assert_int_eq (fasgd_srv_greeting_end (g, 6, 0), 0);         /* its close, read later */
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 6, S_PEER_A), -3);
    ck_assert_int_eq (fasgd_srv_greeting_tag (g, 6), -1);           /* not waited for */
    /*  The descriptor reused by a newer connection: its request is its own.  */
    ck_assert_int_eq (fasgd_srv_greeting_begin (g, 6, 1, "127.0.0.3", 300), 0);
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 6, S_PEER_B), 1);
    ck_assert_uint_eq (fasgd_srv_greeting_count (g), 1);
    /*  Turned away on a descriptor whose older connection still waited
        (its close unread): that one leaves the books.  */
    ck_assert_int_eq (fasgd_srv_greeting_refused (g, 5, 1), 0);
    ck_assert_uint_eq (fasgd_srv_greeting_count (g), 0);
    ck_assert_uint_eq (fasgd_srv_greeting_from (g, "127.0.0.2"), 0);
    ck_assert_int_eq (fasgd_srv_greeting_oldest (g, NULL), -1);
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 5, S_PEER_A), -3);
    /*  Far beyond the descriptors seen so far: the books grow.  */
    ck_assert_int_eq (fasgd_srv_greeting_refused (g, 5000, 0), 0);
    ck_assert_int_eq (fasgd_srv_greeting_heard (g, 5000, S_PEER_A), -3);
    ck_assert_int_eq (fasgd_srv_greeting_refused (g, -1, 0), 0);
    fasgd_srv_greeting_destroy (&g);
}
END_TEST

/*  Where a connection comes from; -1 once it is gone (its accept read
    after its close: s_accepted then turns it away).  */
START_TEST (test_source)
{
    char addr [FASGD_SRV_ADDR_LEN];
    int l = socket (AF_INET, SOCK_STREAM, 0), c = socket (AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge (l, 0);
    ck_assert_int_ge (c, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t len = sizeof sa;
    ck_assert_int_eq (bind (l, (struct sockaddr *) &sa, sizeof sa), 0);
    ck_assert_int_eq (listen (l, 1), 0);
    ck_assert_int_eq (getsockname (l, (struct sockaddr *) &sa, &len), 0);
    ck_assert_int_eq (connect (c, (struct sockaddr *) &sa, sizeof sa), 0);
    int a = accept (l, NULL, NULL);
    ck_assert_int_ge (a, 0);
    ck_assert_int_eq (fasgd_srv_greeting_source (a, addr), 0);
    ck_assert_str_eq (addr, "127.0.0.1");
    close (a);
    ck_assert_int_eq (fasgd_srv_greeting_source (a, addr), -1);      /* closed */
    ck_assert_str_eq (addr, "?");
    int pair [2];
    ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM, 0, pair), 0);
    ck_assert_int_eq (fasgd_srv_greeting_source (pair [0], addr), 0);  /* no address to group by */
    ck_assert_str_eq (addr, "?");
    close (pair [0]);
    close (pair [1]);
    close (c);
    close (l);
}
END_TEST

static Suite *
greeting_suite (void)
{
    Suite *s = suite_create ("greeting");
    TCase *tc = tcase_create ("books");
    tcase_add_test (tc, test_waited_for_then_heard);
    tcase_add_test (tc, test_closed_then_late_request);
    tcase_add_test (tc, test_refused_at_accept);
    tcase_add_test (tc, test_source);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (greeting_suite)
