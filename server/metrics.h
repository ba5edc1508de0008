/*  metrics: the server's counters in Prometheus's text format at
    metrics.endpoint (metrics.c). The poll loop renders them about once a
    second and hands the text to metrics/publish.c, whose own thread
    answers the scrapes: no scrape reads the server's state, and none
    can hold the loop for longer than one swap of the text.  */
#ifndef FASGD_SERVER_METRICS_H_INCLUDED
#define FASGD_SERVER_METRICS_H_INCLUDED

#include "checkpoint.h"
#include "connections.h"
#include "eval.h"
#include "guard.h"
#include "params.h"
#include "registry.h"
#include "server.h"
#include "stats.h"

#define FASGD_SRV_METRICS_MS 1000       /* the text is rendered again this often */

typedef struct fasgd_srv_metrics_t fasgd_srv_metrics_t;

/*  What metrics.c reads to render, all borrowed, and read only from the
    poll loop's thread.  */
typedef struct {
    const fasgd_server_cfg_t *cfg;
    const fasgd_srv_stats_t *st;
    const fasgd_srv_params_t *params;
    const fasgd_srv_registry_t *registry;
    fasgd_srv_eval_t *eval;
    const fasgd_srv_checkpoint_t *checkpoint;
    const fasgd_srv_conns_t *conns;
    const fasgd_srv_guard_t *guard;
} fasgd_srv_metrics_src_t;

/*  Serves the metrics at cfg's metrics.endpoint (which must not be
    empty), rendered from src. NULL after logging the cause (a bad
    endpoint, a failed bind, a build without libmicrohttpd).  */
fasgd_srv_metrics_t *fasgd_srv_metrics_new (const fasgd_srv_metrics_src_t *src);
void fasgd_srv_metrics_destroy (fasgd_srv_metrics_t **self_p);
/*  The endpoint bound, its port resolved.  */
const char *fasgd_srv_metrics_endpoint (const fasgd_srv_metrics_t *self);
/*  Renders and publishes the text now (ms on the loop's clock).  */
void fasgd_srv_metrics_publish (fasgd_srv_metrics_t *self, int64_t now);
/*  On the loop's clock: publishes when FASGD_SRV_METRICS_MS have passed.  */
void fasgd_srv_metrics_tick (fasgd_srv_metrics_t *self, int64_t now);

#endif
