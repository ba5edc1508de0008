/*  publish: the text at an HTTP endpoint, served by libmicrohttpd on a
    thread of its own (publish.h).  */
#include "publish.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
fasgd_metrics_endpoint_parse (const char *text, fasgd_metrics_endpoint_t *ep, char *err, size_t errlen)
{
    memset (ep, 0, sizeof *ep);
    const char *p = text;
    if (strncasecmp (p, "https://", 8) == 0) {
        snprintf (err, errlen, "'%s': https is not served here: give an http:// endpoint (and a TLS proxy "
                  "in front of it, if it must leave the machine)", text);
        return -1;
    }
    if (strncasecmp (p, "http://", 7) != 0) {
        snprintf (err, errlen, "'%s' is not an http:// endpoint (e.g. http://127.0.0.1:9464/metrics)", text);
        return -1;
    }
    p += 7;
    const char *host = p, *host_end;
    if (*p == '[') {
        host = ++p;
        while (*p && *p != ']')
            p++;
        if (*p != ']') {
            snprintf (err, errlen, "'%s': an IPv6 address must end with ]", text);
            return -1;
        }
        host_end = p++;
    }
    else {
        while (*p && *p != ':' && *p != '/')
            p++;
        host_end = p;
    }
    if (host_end == host || (size_t) (host_end - host) >= sizeof ep->host) {
        snprintf (err, errlen, "'%s': %s host", text, host_end == host ? "no" : "too long a");
        return -1;
    }
    memcpy (ep->host, host, (size_t) (host_end - host));
    if (*p != ':') {
        snprintf (err, errlen, "'%s': no port (http://HOST:PORT/PATH; port 0 or * for a free one)", text);
        return -1;
    }
    p++;
    if (*p == '*') {
        ep->port = 0;
        p++;
    }
    else {
        if (!isdigit ((unsigned char) *p)) {
            snprintf (err, errlen, "'%s': the port must be a number from 0 to 65535, or *", text);
            return -1;
        }
        long port = 0;
        while (isdigit ((unsigned char) *p) && port <= 65535)
            port = port * 10 + (*p++ - '0');
        if (port > 65535 || isdigit ((unsigned char) *p)) {
            snprintf (err, errlen, "'%s': the port must be a number from 0 to 65535, or *", text);
            return -1;
        }
        ep->port = (int) port;
    }
    if (!*p)
        p = "/metrics";
    if (*p != '/') {
        snprintf (err, errlen, "'%s': after the port comes the path, beginning with /", text);
        return -1;
    }
    if (strlen (p) >= sizeof ep->path) {
        snprintf (err, errlen, "'%s': too long a path", text);
        return -1;
    }
    for (const char *q = p; *q; q++)
        if (*q <= ' ' || *q == '?' || *q == '#' || *q == 127) {
            snprintf (err, errlen, "'%s': the path may hold no space, control character, ? or #", text);
            return -1;
        }
    snprintf (ep->path, sizeof ep->path, "%s", p);
    return 0;
}

#ifndef HAVE_MICROHTTPD

int
fasgd_metrics_available (void)
{
    return 0;
}

fasgd_metrics_pub_t *
fasgd_metrics_pub_new (const char *endpoint, char *err, size_t errlen)
{
    snprintf (err, errlen, "cannot serve metrics at %s: this build has no libmicrohttpd (configured "
              "--without-microhttpd, or without libmicrohttpd-dev installed)", endpoint);
    return NULL;
}

void
fasgd_metrics_pub_destroy (fasgd_metrics_pub_t **self_p)
{
    if (self_p)
        *self_p = NULL;
}

const char *
fasgd_metrics_pub_endpoint (const fasgd_metrics_pub_t *self)
{
    (void) self;
    return "";
}

int
fasgd_metrics_pub_set (fasgd_metrics_pub_t *self, const char *text, size_t len)
{
    (void) self, (void) text, (void) len;
    return -1;
}

uint64_t
fasgd_metrics_pub_scrapes (fasgd_metrics_pub_t *self)
{
    (void) self;
    return 0;
}

#else

#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#define S_BACKLOG 64
#define S_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct fasgd_metrics_pub_t {
    struct MHD_Daemon *daemon;
    char path [96];
    char endpoint [FASGD_METRICS_ENDPOINT_LEN];
    pthread_mutex_t lock;               /* guards text, len, scrapes */
    char *text;
    size_t len;
    uint64_t scrapes;
};

int
fasgd_metrics_available (void)
{
    return 1;
}

static enum MHD_Result
s_reply (struct MHD_Connection *conn, unsigned int status, const char *body, const char *allow)
{
    struct MHD_Response *r = MHD_create_response_from_buffer (strlen (body), (void *) body,
                                                              MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (allow)
        MHD_add_response_header (r, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result rc = MHD_queue_response (conn, status, r);
    MHD_destroy_response (r);
    return rc;
}

/*  libmicrohttpd's thread: GET or HEAD of the path gets a copy of the
    text, anything else a short refusal. It reads only the text, under
    the lock.  */
static enum MHD_Result
s_answer (void *cls, struct MHD_Connection *conn, const char *url, const char *method, const char *version,
          const char *upload, size_t *upload_size, void **con_cls)
{
    (void) version, (void) upload, (void) upload_size, (void) con_cls;
    fasgd_metrics_pub_t *self = cls;
    if (strcmp (method, MHD_HTTP_METHOD_GET) != 0 && strcmp (method, MHD_HTTP_METHOD_HEAD) != 0)
        return s_reply (conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n", "GET, HEAD");
    if (strcmp (url, self->path) != 0)
        return s_reply (conn, MHD_HTTP_NOT_FOUND, "not found: the metrics have a path of their own\n", NULL);
    pthread_mutex_lock (&self->lock);
    size_t len = self->len;
    char *copy = malloc (len ? len : 1);
    if (copy) {
        memcpy (copy, self->text ? self->text : "", len);
        self->scrapes++;
    }
    pthread_mutex_unlock (&self->lock);
    if (!copy)
        return s_reply (conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
    struct MHD_Response *r = MHD_create_response_from_buffer (len, copy, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free (copy);
        return MHD_NO;
    }
    MHD_add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, S_CONTENT_TYPE);
    enum MHD_Result rc = MHD_queue_response (conn, MHD_HTTP_OK, r);
    MHD_destroy_response (r);
    return rc;
}

/*  A listening socket on ep, bound here so that a failure names its
    cause; *resolved the endpoint with the port bound. -1 with err.  */
static int
s_listen (const fasgd_metrics_endpoint_t *ep, const char *text, int *ipv6, char *resolved, size_t rlen,
          char *err, size_t errlen)
{
    struct addrinfo hints, *ai = NULL;
    memset (&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int any = strcmp (ep->host, "*") == 0;
    if (any)
        hints.ai_family = AF_INET;
    char port [16];
    snprintf (port, sizeof port, "%d", ep->port);
    int rc = getaddrinfo (any ? NULL : ep->host, port, &hints, &ai);
    if (rc != 0) {
        snprintf (err, errlen, "%s: cannot resolve '%s': %s", text, ep->host, gai_strerror (rc));
        return -1;
    }
    int fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    int one = 1;
    if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
        || bind (fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen (fd, S_BACKLOG) != 0) {
        snprintf (err, errlen, "%s: cannot bind: %s", text, strerror (errno));
        if (fd >= 0)
            close (fd);
        freeaddrinfo (ai);
        return -1;
    }
    *ipv6 = ai->ai_family == AF_INET6;
    freeaddrinfo (ai);
    struct sockaddr_storage sa;
    socklen_t salen = sizeof sa;
    int bound = ep->port;
    if (getsockname (fd, (struct sockaddr *) &sa, &salen) == 0)
        bound = ntohs (sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *) &sa)->sin6_port
                                                : ((struct sockaddr_in *) &sa)->sin_port);
    snprintf (resolved, rlen, "http://%s%s%s:%d%s", *ipv6 ? "[" : "", any ? "0.0.0.0" : ep->host,
              *ipv6 ? "]" : "", bound, ep->path);
    return fd;
}

fasgd_metrics_pub_t *
fasgd_metrics_pub_new (const char *endpoint, char *err, size_t errlen)
{
    fasgd_metrics_endpoint_t ep;
    if (fasgd_metrics_endpoint_parse (endpoint, &ep, err, errlen) != 0)
        return NULL;
    fasgd_metrics_pub_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    snprintf (self->path, sizeof self->path, "%s", ep.path);
    pthread_mutex_init (&self->lock, NULL);
    int ipv6 = 0;
    int fd = s_listen (&ep, endpoint, &ipv6, self->endpoint, sizeof self->endpoint, err, errlen);
    if (fd < 0) {
        fasgd_metrics_pub_destroy (&self);
        return NULL;
    }
    /*  One thread polls every connection: a slow peer holds none of the
        others, and none of the program's.  */
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (ipv6 ? MHD_USE_IPv6 : 0);
    self->daemon = MHD_start_daemon (flags, 0, NULL, NULL, s_answer, self,
                                     MHD_OPTION_LISTEN_SOCKET, (MHD_socket) fd,
                                     MHD_OPTION_CONNECTION_LIMIT, (unsigned int) FASGD_METRICS_CONNECTIONS,
                                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) FASGD_METRICS_TIMEOUT_S,
                                     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) 16384,
                                     MHD_OPTION_END);
    if (!self->daemon) {
        close (fd);
        snprintf (err, errlen, "%s: libmicrohttpd would not start serving", endpoint);
        fasgd_metrics_pub_destroy (&self);
        return NULL;
    }
    return self;
}

void
fasgd_metrics_pub_destroy (fasgd_metrics_pub_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_metrics_pub_t *self = *self_p;
    if (self->daemon)
        MHD_stop_daemon (self->daemon);
    pthread_mutex_destroy (&self->lock);
    free (self->text);
    free (self);
    *self_p = NULL;
}

const char *
fasgd_metrics_pub_endpoint (const fasgd_metrics_pub_t *self)
{
    return self->endpoint;
}

int
fasgd_metrics_pub_set (fasgd_metrics_pub_t *self, const char *text, size_t len)
{
    char *copy = malloc (len ? len : 1);
    if (!copy)
        return -1;
    memcpy (copy, text, len);
    pthread_mutex_lock (&self->lock);
    char *old = self->text;
    self->text = copy;
    self->len = len;
    pthread_mutex_unlock (&self->lock);
    free (old);
    return 0;
}

uint64_t
fasgd_metrics_pub_scrapes (fasgd_metrics_pub_t *self)
{
    pthread_mutex_lock (&self->lock);
    uint64_t n = self->scrapes;
    pthread_mutex_unlock (&self->lock);
    return n;
}

#endif
