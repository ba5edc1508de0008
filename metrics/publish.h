/*  publish: serves one text, the latest a program handed it, at an HTTP
    endpoint such as http://127.0.0.1:9464/metrics, for Prometheus to
    scrape. libmicrohttpd answers on a thread of its own; the program's
    loop only swaps the text under a mutex (fasgd_metrics_pub_set), so a
    scraper, however slow or hostile, never touches the program's state
    and never holds its loop for longer than one copy of the text.
    Connections are bounded in number and in time.  */
#ifndef FASGD_METRICS_PUBLISH_H_INCLUDED
#define FASGD_METRICS_PUBLISH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define FASGD_METRICS_ENDPOINT_LEN 256
#define FASGD_METRICS_CONNECTIONS 64    /* scrapers connected at once; more wait in the backlog */
#define FASGD_METRICS_TIMEOUT_S 5       /* a connection idle this long is closed */

typedef struct {
    char host [96];                     /* an IPv4 or IPv6 address, a name, or * (every address) */
    int port;                           /* 0: a free port, chosen at bind */
    char path [96];                     /* begins with / */
} fasgd_metrics_endpoint_t;

/*  Parses http://HOST:PORT/PATH (HOST an address, a name, [IPv6] or *;
    PORT 0 to 65535, 0 or * for a free one; PATH /metrics when absent).
    -1 with the cause in err.  */
int fasgd_metrics_endpoint_parse (const char *text, fasgd_metrics_endpoint_t *ep, char *err, size_t errlen);

/*  1 when this build can serve metrics (configure found libmicrohttpd).  */
int fasgd_metrics_available (void);

typedef struct fasgd_metrics_pub_t fasgd_metrics_pub_t;

/*  Binds endpoint and starts serving (an empty text until the first
    fasgd_metrics_pub_set). NULL with the cause in err: a bad endpoint, a
    failed bind, or a build without libmicrohttpd.  */
fasgd_metrics_pub_t *fasgd_metrics_pub_new (const char *endpoint, char *err, size_t errlen);
/*  Stops the thread, closes every connection.  */
void fasgd_metrics_pub_destroy (fasgd_metrics_pub_t **self_p);
/*  The endpoint bound, its port resolved (http://127.0.0.1:40123/metrics).  */
const char *fasgd_metrics_pub_endpoint (const fasgd_metrics_pub_t *self);
/*  What the next scrapes get: text [0..len) is copied. -1 out of memory
    (the last text stays).  */
int fasgd_metrics_pub_set (fasgd_metrics_pub_t *self, const char *text, size_t len);
/*  Scrapes answered with the text so far.  */
uint64_t fasgd_metrics_pub_scrapes (fasgd_metrics_pub_t *self);

#endif
