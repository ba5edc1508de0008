/*  flood_peer: a client that never reads its replies, for the shell tests
    (tests/test_hostile_peers.sh). Joins the server at ENDPOINT (its push
    socket), then for SECONDS sends PUSH requests with THEN_FETCH (each
    asks for the whole of θ back) carrying a zero gradient, as fast as its
    socket takes them, and reads nothing more. Prints "sent N" and exits 0;
    2 when it cannot join.  */
#include "codec.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
    if (argc != 3) {
        fprintf (stderr, "usage: flood_peer ENDPOINT SECONDS\n");
        return 2;
    }
    zsys_handler_set (NULL);
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    if (!sock || zsock_connect (sock, "%s", argv [1]) != 0) {
        fprintf (stderr, "flood_peer: cannot connect to %s\n", argv [1]);
        return 2;
    }
    zsock_set_linger (sock, 0);
    void *raw = zsock_resolve (sock);
    fasgd_header_t h = { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_JOIN, .seq = 1 };
    uint8_t head [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (&h, head);
    zmq_send (raw, head, sizeof head, 0);
    zsock_set_rcvtimeo (sock, 5000);
    zmsg_t *welcome = zmsg_recv (sock);
    zframe_t *rh = welcome ? zmsg_first (welcome) : NULL, *body = welcome ? zmsg_next (welcome) : NULL;
    fasgd_header_t r;
    fasgd_proto_desc_t d;
    char err [128] = "no reply";
    if (!rh || !body || fasgd_proto_header_decode (zframe_data (rh), zframe_size (rh), &r) != FASGD_PROTO_OK
        || r.type != FASGD_MSG_WELCOME
        || fasgd_proto_desc_decode ((const char *) zframe_data (body), zframe_size (body), &d, err,
                                    sizeof err) != 0) {
        fprintf (stderr, "flood_peer: cannot join: %s\n", err);
        return 2;
    }
    zmsg_destroy (&welcome);
    size_t bytes = (size_t) d.params * sizeof (float);
    void *zeros = calloc (1, bytes);
    if (!zeros)
        return 2;
    h = (fasgd_header_t) { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_PUSH,
                           .flags = FASGD_PROTO_FLAG_THEN_FETCH, .client_id = r.client_id,
                           .session = d.session };
    uint64_t sent = 0;
    int64_t end = zclock_mono () + (int64_t) (atof (argv [2]) * 1000);
    while (zclock_mono () < end) {
        h.seq++;
        fasgd_proto_header_encode (&h, head);
        /*  A full queue (the server stopped reading us): wait a little.  */
        if (zmq_send (raw, head, sizeof head, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
            zclock_sleep (1);
            continue;
        }
        zmq_send (raw, zeros, bytes, 0);
        sent++;
    }
    printf ("sent %llu\n", (unsigned long long) sent);
    free (zeros);
    zsock_destroy (&sock);
    return 0;
}
