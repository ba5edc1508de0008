/*  reply: the frames of the data and control sockets, below every
    handler (as redis keeps addReply* under its commands): a request's
    frames read, a reply's header made and sent. A handler decides what
    to answer; only this file touches the frames.  */
#ifndef FASGD_SERVER_REPLY_H_INCLUDED
#define FASGD_SERVER_REPLY_H_INCLUDED

#include "codec.h"
#include "params.h"
#include "stats.h"

#include <zmq.h>

/*  A mark that libzmq has handed a reply's body to the kernel (turns.c
    waits for it): set from libzmq's I/O thread, shared by the reply and
    whoever waits, freed by the last of them to release it.  */
typedef struct fasgd_srv_sent_t fasgd_srv_sent_t;

/*  A new mark, not set, held once by the caller; NULL out of memory.  */
fasgd_srv_sent_t *fasgd_srv_sent_new (void);
/*  Whether the body it marks is the kernel's (or was dropped).  */
int fasgd_srv_sent_done (fasgd_srv_sent_t *self);
/*  Lets go of the caller's hold; *self_p NULL after.  */
void fasgd_srv_sent_release (fasgd_srv_sent_t **self_p);

/*  A request being answered: where the reply goes, and what its header
    carries (the request's client id and seq, the server's T and v̄).  */
typedef struct {
    void *sock;                         /* the ROUTER socket it came on */
    zmq_msg_t *identity;                /* its peer's routing id */
    const fasgd_header_t *req;          /* NULL when no header could be read */
    const fasgd_srv_params_t *params;   /* T and v̄ for every header */
    fasgd_srv_stats_t *st;              /* bytes_out counted */
    int fd;                             /* the descriptor of its connection, -1 unknown */
    fasgd_srv_sent_t *sent;             /* when set: marked once the reply's body is the kernel's */
} fasgd_srv_request_t;

/*  Receives one message of any number of frames without waiting for its
    first: the first three frames into parts (the caller closes them),
    *extra set when there were more (closed here), *total the bytes of
    all. Returns -1 when no message was waiting.  */
int fasgd_srv_recv_parts (void *sock, zmq_msg_t parts [3], int *nparts, int *extra, size_t *total);
/*  The descriptor of the connection a message's frame came on (not the
    routing id's, the frames after it), -1 when libzmq does not say.  */
int fasgd_srv_recv_fd (zmq_msg_t *part);
/*  Sends [identity][header][body]; body_snap, when given, is sent without
    a copy and released once ZeroMQ is done with it. r->sent, when set, is
    marked then (at once when the reply is dropped or has no snapshot).  */
void fasgd_srv_reply (const fasgd_srv_request_t *r, const fasgd_header_t *h, const void *body, size_t body_len,
                      fasgd_snapshot_t *body_snap);
/*  A reply's header: its type and status, the request's client id and
    seq (0 without a request), and the server's T and v̄.  */
fasgd_header_t fasgd_srv_reply_header (const fasgd_srv_request_t *r, int type, int status);
/*  An ERROR reply with a one-line reason, logged.  */
void fasgd_srv_reply_error (const fasgd_srv_request_t *r, int status, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void fasgd_srv_reply_ack (const fasgd_srv_request_t *r, int status);

#endif
