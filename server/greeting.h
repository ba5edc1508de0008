/*  greeting: the connections that have not yet sent a valid request
    (accepted, maybe through the ZMTP and CURVE handshake, not yet
    heard from), oldest first, with when each was accepted and how many
    each source address holds. connections.c decides what to close;
    this file only keeps the books.  */
#ifndef FASGD_SERVER_GREETING_H_INCLUDED
#define FASGD_SERVER_GREETING_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define FASGD_SRV_ADDR_LEN 56           /* an address as text (IPv6: its /64) */

typedef struct fasgd_srv_greeting_t fasgd_srv_greeting_t;

/*  NULL out of memory.  */
fasgd_srv_greeting_t *fasgd_srv_greeting_new (void);
void fasgd_srv_greeting_destroy (fasgd_srv_greeting_t **self_p);
/*  The source of the connection on descriptor fd, as the text that
    groups it: an IPv4 address, an IPv6 address's /64, "?" for another
    kind. -1 (and "?") when the connection is gone: it has no peer.  */
int fasgd_srv_greeting_source (int fd, char addr [FASGD_SRV_ADDR_LEN]);
/*  The connection on fd, from addr on the socket tagged tag, accepted
    at now_ms, has yet to be heard from (one that fd had is forgotten
    first). -1 out of memory.  */
int fasgd_srv_greeting_begin (fasgd_srv_greeting_t *self, int fd, int tag, const char *addr, int64_t now_ms);
/*  A valid request came from the connection on fd, with a routing id
    whose hash is peer: 1 when it was greeting and is no longer, 0 when
    it was heard from before; -1 when fd has no connection yet (its
    accept is not read yet); -2 when it came from the connection that
    closed last on fd, no other accepted since (read after the close: a
    newer connection's accept must not take it as its own); -3 when the
    last connection accepted on fd was turned away at its accept
    (fasgd_srv_greeting_refused): the request is that one's.  */
int fasgd_srv_greeting_heard (fasgd_srv_greeting_t *self, int fd, uint64_t peer);
/*  The connection just accepted on fd, on the socket tagged tag, was
    turned away at once, never waited for: until fd's next accept, a
    request read from fd is that connection's (it reached the server
    before the accept was read). -1 out of memory.  */
int fasgd_srv_greeting_refused (fasgd_srv_greeting_t *self, int fd, int tag);
/*  The connection on fd (on the socket tagged tag; -1 any) closed, or
    was closed: 1 when it was greeting. The tag keeps an event of one
    socket's monitor, read late, from ending another socket's newer
    connection on the same descriptor.  */
int fasgd_srv_greeting_end (fasgd_srv_greeting_t *self, int fd, int tag);
/*  The tag of the connection on fd, -1 when it is not waited for.  */
int fasgd_srv_greeting_tag (const fasgd_srv_greeting_t *self, int fd);
/*  The bytes the connection on fd had received when its wait began or
    was last renewed (0 at its accept; 0 when it is not waited for).  */
uint64_t fasgd_srv_greeting_received (const fasgd_srv_greeting_t *self, int fd);
/*  The connection on fd, still waited for, waits afresh from now_ms (the
    newest of the list), having received that many bytes by then.  */
void fasgd_srv_greeting_renew (fasgd_srv_greeting_t *self, int fd, int64_t now_ms, uint64_t received);
/*  Connections waited for: all of them, and those from addr.  */
size_t fasgd_srv_greeting_count (const fasgd_srv_greeting_t *self);
size_t fasgd_srv_greeting_from (const fasgd_srv_greeting_t *self, const char *addr);
/*  The descriptor of the oldest waited for, -1 when none, and when it
    was accepted.  */
int fasgd_srv_greeting_oldest (const fasgd_srv_greeting_t *self, int64_t *since_ms);

#endif
