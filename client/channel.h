/*  channel: one DEALER connection of libfasgd-client to a server's
    endpoint, the transport under link.c's requests. It moves messages;
    what they mean is the link's.

    A channel is a value its owner embeds (no allocation). It is closed
    until fasgd_channel_open, and closes itself when its connection can no
    longer be trusted (a send that fails, a handshake that cannot succeed,
    a broken poller); the owner closes it after a timeout, so that a late
    reply lands on a closed socket instead of being taken for the answer
    to the next request, and reopens it before the next request.

    Every socket is made with the host program's SIGINT and SIGTERM
    dispositions kept (fasgd_channel_dealer_new), never sends blocking,
    and accepts no frame larger than maxmsgsize (plus what CURVE adds), so
    a server cannot make the client allocate more than it expects. With
    CURVE, a monitor reports the handshake's failures, so that a wrong key
    fails fast with its reason instead of a timeout.  */
#ifndef FASGD_CHANNEL_H_INCLUDED
#define FASGD_CHANNEL_H_INCLUDED

#include "client.h"
#include "codec.h"

#include <czmq.h>
#include <stddef.h>
#include <stdint.h>

/*  What a frame may hold beyond its payload on the wire: ZeroMQ applies
    ZMQ_MAXMSGSIZE to the frame as it arrives, which CURVE makes 33 bytes
    longer (command name, nonce, MAC).  */
#define FASGD_CHANNEL_FRAME_SLACK 64

/*  CURVE, when set: the server's public key and this client's
    certificate (both halves).  */
typedef struct {
    char server_key [41];           /* Z85; "" when CURVE is off */
    zcert_t *cert;
} fasgd_channel_curve_t;

typedef struct {
    const char *endpoint;                   /* borrowed from the owner */
    const fasgd_channel_curve_t *curve;     /* borrowed from the owner */
    int64_t maxmsgsize;                     /* largest frame accepted; read at open */
    /*  Private.  */
    zsock_t *sock;                          /* NULL when closed */
    zsock_t *monitor;                       /* PAIR: the socket's handshake events */
    zpoller_t *poller;
    int handshake_drops;                    /* fasgd_curve_judge's count, since the last send */
    int turned_away;                        /* connections the server reset mid-handshake, since then */
} fasgd_channel_t;

/*  A closed channel to endpoint with curve (both borrowed: they outlive
    the channel).  */
void fasgd_channel_init (fasgd_channel_t *ch, const char *endpoint, const fasgd_channel_curve_t *curve,
                         int64_t maxmsgsize);

/*  Connects a fresh socket (closing the old one). 0, or -1 after logging
    the cause.  */
int fasgd_channel_open (fasgd_channel_t *ch);

/*  Whether a tcp:// endpoint's host name resolves: -1 with the reason in
    why when the resolver says the name does not exist (ZeroMQ would
    retry it in silence for ever), 0 otherwise, a resolver that cannot
    answer now included.  */
int fasgd_channel_resolves (const char *endpoint, char *why, size_t whylen);

/*  Closes the socket, if any; the channel may be opened again.  */
void fasgd_channel_close (fasgd_channel_t *ch);

int fasgd_channel_is_open (const fasgd_channel_t *ch);

/*  Sends h (encoded here) and the body frame, whose ownership it takes
    (body_p may be NULL, *body_p NULL), without blocking. 0 with the bytes
    sent added to *bytes; or, the channel closed, FASGD_CLIENT_ETIMEOUT
    when the queue to the server is full, FASGD_CLIENT_ESOCKET otherwise.  */
int fasgd_channel_send (fasgd_channel_t *ch, const fasgd_header_t *h, zframe_t **body_p, size_t *bytes);

/*  Waits until deadline (zclock_mono ()) for one whole message: 1 with
    its first frame in *header_p, its second (or NULL) in *body_p (both
    the caller's to destroy), its frame count in *nframes (frames beyond
    the second are counted, not kept) and its bytes added to *bytes; 0
    when the deadline passed. After a handshake that cannot succeed,
    FASGD_CLIENT_ESECURITY with the reason in why; after a broken socket,
    FASGD_CLIENT_ESOCKET; the channel is then closed. The host's signals
    interrupt a wait, they do not end it.  */
int fasgd_channel_recv (fasgd_channel_t *ch, int64_t deadline, zframe_t **header_p, zframe_t **body_p,
                        int *nframes, size_t *bytes, char *why, size_t whylen);

/*  Sets czmq up once per process, with the host's SIGINT and SIGTERM
    dispositions saved and put back: before any czmq object is made here
    (a socket, an actor's pipe). Safe from several threads at once.  */
void fasgd_channel_zsys_init (void);

/*  A new DEALER socket, made with the host's SIGINT and SIGTERM
    dispositions saved and put back (czmq's first socket would install
    handlers of its own). NULL on failure.  */
zsock_t *fasgd_channel_dealer_new (void);

/*  Makes sock (not yet connected) a CURVE client when curve is set.  */
void fasgd_channel_curve_apply (const fasgd_channel_curve_t *curve, zsock_t *sock);

#endif
