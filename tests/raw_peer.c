/*  raw_peer: one request with any client id and session, as a hostile
    peer would send it, for the shell tests (tests/test_curve.sh). Connects
    a DEALER to ENDPOINT (with CURVE when SERVER_KEY is not "-": the
    server's public certificate, and CERT this peer's secret one), sends a
    header of TYPE (JOIN, HEARTBEAT, LEAVE or FETCH) naming CLIENT_ID and
    SESSION (default 0), and prints the reply's status ("status 200"; after
    a JOIN also "id N session S" from the WELCOME), or "timeout" after 3 s.
    Exit 0 when a reply came.  */
#include "codec.h"
#include "curve.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        fprintf (stderr, "usage: raw_peer ENDPOINT SERVER_KEY|- CERT TYPE CLIENT_ID [SESSION]\n");
        return 2;
    }
    int type = !strcmp (argv [4], "JOIN") ? FASGD_MSG_JOIN
             : !strcmp (argv [4], "HEARTBEAT") ? FASGD_MSG_HEARTBEAT
             : !strcmp (argv [4], "LEAVE") ? FASGD_MSG_LEAVE
             : !strcmp (argv [4], "FETCH") ? FASGD_MSG_FETCH : 0;
    if (!type) {
        fprintf (stderr, "raw_peer: TYPE is JOIN, HEARTBEAT, LEAVE or FETCH\n");
        return 2;
    }
    zsys_handler_set (NULL);
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    if (!sock)
        return 2;
    zsock_set_linger (sock, 0);
    char err [512];
    zcert_t *cert = NULL;
    if (strcmp (argv [2], "-") != 0) {
        char key [FASGD_CURVE_KEY_LEN + 1];
        if (fasgd_curve_public_key_load (argv [2], key, err, sizeof err) != 0
            || !(cert = fasgd_curve_secret_cert_load (argv [3], err, sizeof err))) {
            fprintf (stderr, "raw_peer: %s\n", err);
            return 2;
        }
        zcert_apply (cert, sock);
        zsock_set_curve_serverkey (sock, key);
    }
    if (zsock_connect (sock, "%s", argv [1]) != 0) {
        fprintf (stderr, "raw_peer: cannot connect to %s\n", argv [1]);
        return 2;
    }
    fasgd_header_t h = { .version = FASGD_PROTO_VERSION, .type = (uint8_t) type,
                         .client_id = (uint32_t) strtoul (argv [5], NULL, 10), .seq = 1,
                         .session = argc == 7 ? strtoull (argv [6], NULL, 10) : 0 };
    uint8_t buf [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (&h, buf);
    zmq_send (zsock_resolve (sock), buf, sizeof buf, 0);
    zsock_set_rcvtimeo (sock, 3000);
    zmsg_t *reply = zmsg_recv (sock);
    int rc = 1;
    fasgd_header_t r;
    zframe_t *head = reply ? zmsg_first (reply) : NULL;
    if (head && fasgd_proto_header_decode (zframe_data (head), zframe_size (head), &r) == FASGD_PROTO_OK) {
        printf ("status %d\n", r.status);
        zframe_t *body = zmsg_next (reply);
        fasgd_proto_desc_t d;
        if (r.type == FASGD_MSG_WELCOME && body
            && fasgd_proto_desc_decode ((const char *) zframe_data (body), zframe_size (body), &d, err,
                                        sizeof err) == 0)
            printf ("id %u session %llu\n", r.client_id, (unsigned long long) d.session);
        rc = 0;
    }
    else
        printf ("timeout\n");
    zmsg_destroy (&reply);
    zsock_destroy (&sock);
    zcert_destroy (&cert);
    return rc;
}
