/*  fake_shard: a hostile shard for tests/test_hostile_shard.sh. It takes
    the description of a real shard (a JOIN to REAL_PUSH, then a LEAVE),
    binds a push and a fetch endpoint of its own on loopback (ephemeral
    ports, written to --port-file PORTFILE as push=ENDPOINT and
    fetch=ENDPOINT lines, atomically, as fasgd-server does), and answers clients as that shard would (proto/PROTOCOL.md):
    WELCOME with the real description, ACK to every PUSH, PUSH_REPEAT,
    HEARTBEAT, LEAVE and EVAL, and PARAMS to every FETCH (and THEN_FETCH).
    The first GOOD PARAMS it sends are zeros, a θ a server could hold; every
    later one is zeros but for one value, which is VALUE (nan, inf, or a
    number such as 3e38). Runs until SIGTERM or SIGINT, then prints
    "params N pushes M" (PARAMS sent, gradients received).  */
#include "codec.h"

#include <czmq.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t s_stop;

static void
s_on_signal (int sig)
{
    (void) sig;
    s_stop = 1;
}

static int
s_send (zsock_t *sock, zframe_t *identity, const fasgd_header_t *h, const void *body, size_t len)
{
    uint8_t hb [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (h, hb);
    zmsg_t *m = zmsg_new ();
    zmsg_append (m, &identity);
    zmsg_addmem (m, hb, sizeof hb);
    if (body)
        zmsg_addmem (m, body, len);
    return zmsg_send (&m, sock);
}

/*  The real shard's description, by a JOIN and a LEAVE: 0 or -1.  */
static int
s_describe (const char *endpoint, fasgd_proto_desc_t *d)
{
    zsock_t *s = zsock_new_dealer (endpoint);
    if (!s)
        return -1;
    zsock_set_rcvtimeo (s, 5000);
    fasgd_header_t h = { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_JOIN, .seq = 1 }, rep;
    uint8_t hb [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (&h, hb);
    zsock_send (s, "b", hb, sizeof hb);
    zmsg_t *m = zmsg_recv (s);
    int rc = -1;
    zframe_t *hf = m ? zmsg_first (m) : NULL, *body = m ? zmsg_next (m) : NULL;
    char err [256] = "no reply";
    if (hf && body && fasgd_proto_header_decode (zframe_data (hf), zframe_size (hf), &rep) == FASGD_PROTO_OK
        && rep.type == FASGD_MSG_WELCOME
        && fasgd_proto_desc_decode ((const char *) zframe_data (body), zframe_size (body), d, err, sizeof err) == 0)
        rc = 0;
    zmsg_destroy (&m);
    if (rc == 0) {
        fasgd_header_t leave = { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_LEAVE, .seq = 2,
                                 .client_id = rep.client_id, .session = d->session };
        fasgd_proto_header_encode (&leave, hb);
        zsock_send (s, "b", hb, sizeof hb);
        m = zmsg_recv (s);
        zmsg_destroy (&m);
    }
    else
        fprintf (stderr, "fake_shard: no description from %s: %s\n", endpoint, err);
    zsock_destroy (&s);
    return rc;
}

int
main (int argc, char **argv)
{
    if (argc != 6 || strcmp (argv [4], "--port-file") != 0) {
        fprintf (stderr, "usage: fake_shard VALUE GOOD REAL_PUSH_ENDPOINT --port-file PORTFILE\n");
        return 2;
    }
    char *end;
    float value = strtof (argv [1], &end);
    long good = strtol (argv [2], NULL, 10);
    if (end == argv [1] || *end || good < 0) {
        fprintf (stderr, "fake_shard: VALUE is a float (nan, inf, 3e38), GOOD a count\n");
        return 2;
    }
    zsys_handler_set (NULL);
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGINT, &sa, NULL);

    fasgd_proto_desc_t d;
    if (s_describe (argv [3], &d) != 0)
        return 1;
    d.session = 0x5eed5eed5eed5eedull;
    static char text [FASGD_PROTO_DESC_MAX];
    int tlen = fasgd_proto_desc_encode (&d, text, sizeof text);
    size_t n = (size_t) d.length;
    float *zeros = calloc (n, sizeof (float)), *bad = calloc (n, sizeof (float));
    if (tlen < 0 || !zeros || !bad)
        return 1;
    bad [n / 2] = value;
    void *zeros_le = malloc (4 * n), *bad_le = malloc (4 * n);
    if (!zeros_le || !bad_le)
        return 1;
    fasgd_proto_floats_encode (zeros, n, zeros_le);
    fasgd_proto_floats_encode (bad, n, bad_le);

    zsock_t *router = zsock_new (ZMQ_ROUTER);
    zsock_set_linger (router, 0);
    int pport = zsock_bind (router, "tcp://127.0.0.1:*");
    int fport = zsock_bind (router, "tcp://127.0.0.1:*");
    if (pport < 0 || fport < 0)
        return 1;
    char tmpname [4096];
    snprintf (tmpname, sizeof tmpname, "%s.tmp", argv [5]);
    FILE *f = fopen (tmpname, "w");
    if (!f)
        return 1;
    fprintf (f, "push=tcp://127.0.0.1:%d\nfetch=tcp://127.0.0.1:%d\n", pport, fport);
    fflush (stdout);
    if (fclose (f) != 0 || rename (tmpname, argv [5]) != 0)
        return 1;

    zpoller_t *poller = zpoller_new (router, NULL);
    uint64_t T = 0, ids = 0;
    long params = 0, pushes = 0;
    while (!s_stop) {
        if (!zpoller_wait (poller, 100))
            continue;
        zmsg_t *m = zmsg_recv (router);
        if (!m)
            continue;
        zframe_t *identity = zmsg_pop (m), *hf = zmsg_first (m);
        fasgd_header_t q, r;
        if (!identity || !hf || fasgd_proto_header_decode (zframe_data (hf), zframe_size (hf), &q) != FASGD_PROTO_OK) {
            zframe_destroy (&identity);
            zmsg_destroy (&m);
            continue;
        }
        memset (&r, 0, sizeof r);
        r.version = FASGD_PROTO_VERSION;
        r.status = FASGD_STATUS_OK;
        r.seq = q.seq;
        r.client_id = q.client_id;
        const void *body = NULL;
        size_t len = 0;
        int then_fetch = (q.flags & FASGD_PROTO_FLAG_THEN_FETCH) != 0;
        switch (q.type) {
            case FASGD_MSG_JOIN:
                r.type = FASGD_MSG_WELCOME;
                r.client_id = (uint32_t) ++ids;
                body = text;
                len = (size_t) tlen;
                break;
            case FASGD_MSG_PUSH:
            case FASGD_MSG_PUSH_REPEAT:
                T++;
                pushes++;
                r.type = then_fetch ? FASGD_MSG_PARAMS : FASGD_MSG_ACK;
                break;
            case FASGD_MSG_FETCH:
                r.type = FASGD_MSG_PARAMS;
                break;
            default:
                r.type = FASGD_MSG_ACK;
                break;
        }
        if (r.type == FASGD_MSG_PARAMS) {
            body = params++ < good ? zeros_le : bad_le;
            len = 4 * n;
        }
        r.timestamp = T;
        s_send (router, identity, &r, body, len);
        zmsg_destroy (&m);
    }
    printf ("params %ld pushes %ld\n", params, pushes);
    zpoller_destroy (&poller);
    zsock_destroy (&router);
    free (zeros);
    free (bad);
    free (zeros_le);
    free (bad_le);
    return 0;
}
