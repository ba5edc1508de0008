/*  reply: the frames in and out (reply.h).  */
#include "reply.h"

#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
fasgd_srv_recv_parts (void *sock, zmq_msg_t parts [3], int *nparts, int *extra, size_t *total)
{
    int more = 1;
    *nparts = *extra = 0;
    *total = 0;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init (&m);
        if (zmq_msg_recv (&m, sock, *nparts == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close (&m);
            if (*nparts == 0)
                return -1;
            break;
        }
        more = zmq_msg_more (&m);
        *total += zmq_msg_size (&m);
        if (*nparts < 3)
            parts [(*nparts)++] = m;
        else {
            zmq_msg_close (&m);
            *extra = 1;
        }
    }
    return 0;
}

int
fasgd_srv_recv_fd (zmq_msg_t *part)
{
    return zmq_msg_get (part, ZMQ_SRCFD);
}

struct fasgd_srv_sent_t {
    int holds;                          /* the caller's, and the body's while libzmq has it */
    int done;
    fasgd_snapshot_t *snap;             /* the body, released with it */
};

fasgd_srv_sent_t *
fasgd_srv_sent_new (void)
{
    fasgd_srv_sent_t *self = calloc (1, sizeof *self);
    if (self)
        self->holds = 1;
    return self;
}

int
fasgd_srv_sent_done (fasgd_srv_sent_t *self)
{
    return __atomic_load_n (&self->done, __ATOMIC_ACQUIRE);
}

void
fasgd_srv_sent_release (fasgd_srv_sent_t **self_p)
{
    fasgd_srv_sent_t *self = *self_p;
    *self_p = NULL;
    if (self && __atomic_sub_fetch (&self->holds, 1, __ATOMIC_ACQ_REL) == 0)
        free (self);
}

/*  Marks self done: the kernel has its body, or it will never be sent.  */
static void
s_sent_mark (fasgd_srv_sent_t *self)
{
    __atomic_store_n (&self->done, 1, __ATOMIC_RELEASE);
}

static void
s_snap_zmq_free (void *data, void *hint)
{
    (void) data;
    fasgd_snapshot_release (hint);
}

/*  A marked body, let go by libzmq's I/O thread once the kernel has it.  */
static void
s_sent_zmq_free (void *data, void *hint)
{
    (void) data;
    fasgd_srv_sent_t *sent = hint;
    fasgd_snapshot_release (sent->snap);
    s_sent_mark (sent);
    fasgd_srv_sent_release (&sent);
}

void
fasgd_srv_reply (const fasgd_srv_request_t *r, const fasgd_header_t *h, const void *body, size_t body_len,
                 fasgd_snapshot_t *body_snap)
{
    void *sock = r->sock;
    /*  Without a snapshot no one waits for the kernel: marked at once.  */
    if (r->sent && !body_snap)
        s_sent_mark (r->sent);
    uint8_t head [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (h, head);
    zmq_msg_t id, hm;
    zmq_msg_init (&id);
    zmq_msg_copy (&id, r->identity);
    int more = body || body_snap ? ZMQ_SNDMORE : 0;
    zmq_msg_init_size (&hm, sizeof head);
    memcpy (zmq_msg_data (&hm), head, sizeof head);
    if (zmq_msg_send (&id, sock, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0
        || zmq_msg_send (&hm, sock, more | ZMQ_DONTWAIT) < 0) {
        zmq_msg_close (&id);
        zmq_msg_close (&hm);
        fasgd_snapshot_release (body_snap);
        if (r->sent)
            s_sent_mark (r->sent);
        r->st->replies_dropped++;       /* the peer is gone, or has a full queue unread: drop */
        return;
    }
    r->st->bytes_out += sizeof head;
    if (!more)
        return;
    zmq_msg_t bm;
    if (body_snap && r->sent) {
        __atomic_add_fetch (&r->sent->holds, 1, __ATOMIC_ACQ_REL);
        r->sent->snap = body_snap;
        zmq_msg_init_data (&bm, body_snap->theta, body_len, s_sent_zmq_free, r->sent);
    }
    else if (body_snap)
        zmq_msg_init_data (&bm, body_snap->theta, body_len, s_snap_zmq_free, body_snap);
    else {
        zmq_msg_init_size (&bm, body_len);
        memcpy (zmq_msg_data (&bm), body, body_len);
    }
    if (zmq_msg_send (&bm, sock, ZMQ_DONTWAIT) < 0)
        zmq_msg_close (&bm);            /* releases the snapshot, marks r->sent */
    else
        r->st->bytes_out += body_len;
}

fasgd_header_t
fasgd_srv_reply_header (const fasgd_srv_request_t *r, int type, int status)
{
    const fasgd_header_t *req = r->req;
    fasgd_header_t h = {
        .version = FASGD_PROTO_VERSION, .type = (uint8_t) type, .status = (uint16_t) status,
        .client_id = req ? req->client_id : 0, .seq = req ? req->seq : 0, .timestamp = r->params->T,
        .vbar = fasgd_rule_vbar (r->params->rule)
    };
    return h;
}

void
fasgd_srv_reply_error (const fasgd_srv_request_t *r, int status, const char *fmt, ...)
{
    char reason [FASGD_PROTO_TEXT_MAX + 1];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (reason, sizeof reason, fmt, ap);
    va_end (ap);
    fasgd_header_t h = fasgd_srv_reply_header (r, FASGD_MSG_ERROR, status);
    fasgd_log_info ("refused %s from client %u: %d %s", r->req ? fasgd_proto_type_name (r->req->type) : "?",
                    h.client_id, status, reason);
    fasgd_srv_reply (r, &h, reason, strlen (reason), NULL);
}

void
fasgd_srv_reply_ack (const fasgd_srv_request_t *r, int status)
{
    fasgd_header_t h = fasgd_srv_reply_header (r, FASGD_MSG_ACK, status);
    fasgd_srv_reply (r, &h, NULL, 0, NULL);
}
