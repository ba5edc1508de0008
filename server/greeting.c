/*  greeting: the connections not yet heard from (greeting.h).

    Indexed by descriptor (libzmq's monitor names a connection by it), in
    an array that grows to the largest descriptor seen; a list through it
    keeps them oldest first, so that the oldest (to close when there is
    no room, or when its time is up) is found at once, and a flood of new
    connections costs a constant time each. The count per
    source address is a hash of the address's text.  */
#include "greeting.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/*  A descriptor's connection: none known, accepted and greeting (in the
    list), or heard from.  */
enum { S_NONE, S_GREETING, S_HEARD };

typedef struct {
    int state;                          /* S_NONE, S_GREETING, S_HEARD */
    int closed;                         /* S_NONE since its connection closed, no accept since */
    int refused;                        /* ... and that one was turned away at its accept */
    uint64_t peer;                      /* a hash of the routing id its requests came with */
    int tag;                            /* its socket's */
    int64_t since_ms;                   /* accepted then, or its wait renewed */
    uint64_t received;                  /* the bytes it had received then */
    int prev, next;                     /* the list, oldest first; -1 ends it */
    char addr [FASGD_SRV_ADDR_LEN];
} s_entry_t;

struct fasgd_srv_greeting_t {
    s_entry_t *entries;                 /* by descriptor */
    int nentries;
    int head, tail;                     /* oldest, newest; -1 when none */
    size_t count;
    zhashx_t *per_addr;                 /* address → count, stored as a pointer */
};

fasgd_srv_greeting_t *
fasgd_srv_greeting_new (void)
{
    fasgd_srv_greeting_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->head = self->tail = -1;
    self->per_addr = zhashx_new ();
    if (!self->per_addr) {
        free (self);
        return NULL;
    }
    return self;
}

void
fasgd_srv_greeting_destroy (fasgd_srv_greeting_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_srv_greeting_t *self = *self_p;
    zhashx_destroy (&self->per_addr);
    free (self->entries);
    free (self);
    *self_p = NULL;
}

int
fasgd_srv_greeting_source (int fd, char addr [FASGD_SRV_ADDR_LEN])
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    snprintf (addr, FASGD_SRV_ADDR_LEN, "?");
    if (getpeername (fd, (struct sockaddr *) &ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        inet_ntop (AF_INET, &((struct sockaddr_in *) &ss)->sin_addr, addr, FASGD_SRV_ADDR_LEN);
    else if (ss.ss_family == AF_INET6) {
        /*  One host commonly has a whole /64: its addresses count as one,
            as IPv4-mapped addresses count as their IPv4 address.  */
        struct in6_addr a = ((struct sockaddr_in6 *) &ss)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED (&a))
            inet_ntop (AF_INET, &a.s6_addr [12], addr, FASGD_SRV_ADDR_LEN);
        else {
            memset (&a.s6_addr [8], 0, 8);
            char text [INET6_ADDRSTRLEN];
            if (inet_ntop (AF_INET6, &a, text, sizeof text))
                snprintf (addr, FASGD_SRV_ADDR_LEN, "%s/64", text);
        }
    }
    return 0;
}

static void
s_addr_add (fasgd_srv_greeting_t *self, const char *addr, int delta)
{
    uintptr_t n = (uintptr_t) zhashx_lookup (self->per_addr, addr);
    n = delta > 0 ? n + 1 : n > 0 ? n - 1 : 0;
    if (n == 0)
        zhashx_delete (self->per_addr, addr);
    else
        zhashx_update (self->per_addr, addr, (void *) n);
}

int
fasgd_srv_greeting_tag (const fasgd_srv_greeting_t *self, int fd)
{
    if (fd < 0 || fd >= self->nentries || self->entries [fd].state != S_GREETING)
        return -1;
    return self->entries [fd].tag;
}

/*  fd's entry, the table grown to hold it; NULL out of memory.  */
static s_entry_t *
s_entry (fasgd_srv_greeting_t *self, int fd)
{
    if (fd >= self->nentries) {
        int n = self->nentries ? self->nentries : 256;
        while (n <= fd)
            n *= 2;
        s_entry_t *grown = realloc (self->entries, (size_t) n * sizeof *grown);
        if (!grown)
            return NULL;
        memset (grown + self->nentries, 0, (size_t) (n - self->nentries) * sizeof *grown);
        self->entries = grown;
        self->nentries = n;
    }
    return &self->entries [fd];
}

/*  Takes a greeting entry out of the list and the counts.  */
static void
s_unlink (fasgd_srv_greeting_t *self, int fd)
{
    s_entry_t *e = &self->entries [fd];
    if (e->prev >= 0)
        self->entries [e->prev].next = e->next;
    else
        self->head = e->next;
    if (e->next >= 0)
        self->entries [e->next].prev = e->prev;
    else
        self->tail = e->prev;
    self->count--;
    s_addr_add (self, e->addr, -1);
}

int
fasgd_srv_greeting_end (fasgd_srv_greeting_t *self, int fd, int tag)
{
    if (fd < 0 || fd >= self->nentries)
        return 0;
    s_entry_t *e = &self->entries [fd];
    if (e->state == S_NONE || (tag >= 0 && tag != e->tag))
        return 0;
    int was = e->state == S_GREETING;
    if (was)
        s_unlink (self, fd);
    e->state = S_NONE;
    e->closed = 1;
    return was;
}

/*  fd's entry for the connection just accepted on the socket tagged
    tag, the one fd had forgotten; NULL out of memory.  */
static s_entry_t *
s_accept (fasgd_srv_greeting_t *self, int fd, int tag)
{
    s_entry_t *e = s_entry (self, fd);
    if (!e)
        return NULL;
    if (e->state == S_GREETING)
        s_unlink (self, fd);
    e->tag = tag;
    return e;
}

int
fasgd_srv_greeting_refused (fasgd_srv_greeting_t *self, int fd, int tag)
{
    if (fd < 0)
        return 0;
    s_entry_t *e = s_accept (self, fd, tag);
    if (!e)
        return -1;
    e->state = S_NONE;
    e->closed = 1;
    e->refused = 1;
    return 0;
}

int
fasgd_srv_greeting_heard (fasgd_srv_greeting_t *self, int fd, uint64_t peer)
{
    if (fd < 0 || fd >= self->nentries)
        return -1;
    s_entry_t *e = &self->entries [fd];
    /*  After a close, a request with the closed connection's routing id
        was read late; any other is a newer connection's.  */
    if (e->state == S_NONE)
        return e->refused ? -3 : e->closed && e->peer == peer ? -2 : -1;
    e->peer = peer;
    if (e->state != S_GREETING)
        return 0;
    s_unlink (self, fd);
    e->state = S_HEARD;
    return 1;
}

int
fasgd_srv_greeting_begin (fasgd_srv_greeting_t *self, int fd, int tag, const char *addr, int64_t now_ms)
{
    if (fd < 0)
        return 0;
    s_entry_t *e = s_accept (self, fd, tag);
    if (!e)
        return -1;
    e->state = S_GREETING;
    e->closed = 0;
    e->refused = 0;
    e->since_ms = now_ms;
    e->received = 0;
    snprintf (e->addr, sizeof e->addr, "%s", addr);
    e->prev = self->tail;
    e->next = -1;
    if (self->tail >= 0)
        self->entries [self->tail].next = fd;
    else
        self->head = fd;
    self->tail = fd;
    self->count++;
    s_addr_add (self, e->addr, +1);
    return 0;
}

uint64_t
fasgd_srv_greeting_received (const fasgd_srv_greeting_t *self, int fd)
{
    if (fd < 0 || fd >= self->nentries || self->entries [fd].state != S_GREETING)
        return 0;
    return self->entries [fd].received;
}

void
fasgd_srv_greeting_renew (fasgd_srv_greeting_t *self, int fd, int64_t now_ms, uint64_t received)
{
    if (fd < 0 || fd >= self->nentries || self->entries [fd].state != S_GREETING)
        return;
    s_entry_t *e = &self->entries [fd];
    char addr [FASGD_SRV_ADDR_LEN];
    snprintf (addr, sizeof addr, "%s", e->addr);
    int tag = e->tag;
    fasgd_srv_greeting_begin (self, fd, tag, addr, now_ms);
    e->received = received;
}

size_t
fasgd_srv_greeting_count (const fasgd_srv_greeting_t *self)
{
    return self->count;
}

size_t
fasgd_srv_greeting_from (const fasgd_srv_greeting_t *self, const char *addr)
{
    return (size_t) (uintptr_t) zhashx_lookup (self->per_addr, addr);
}

int
fasgd_srv_greeting_oldest (const fasgd_srv_greeting_t *self, int64_t *since_ms)
{
    if (self->head >= 0 && since_ms)
        *since_ms = self->entries [self->head].since_ms;
    return self->head;
}
