/*  server: the fasgd-server engine. Holds θ, applies pushed gradients with
    the configured rule (common/rules.c, the same code the simulator runs),
    answers fetches from shared immutable snapshots, keeps the client
    registry, evaluates on a validation set in its own thread, checkpoints,
    and answers STATUS and CHECKPOINT on its control socket (the control
    protocol of proto/PROTOCOL.md, spoken by fasgd-ctl).  */
#ifndef FASGD_SERVER_H_INCLUDED
#define FASGD_SERVER_H_INCLUDED

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "settings.h"
#include "staleness.h"
#include "types.h"

/*  What becomes of a gradient above a norm bound (limits.grad_norm_action).  */
typedef enum {
    FASGD_SRV_NORM_REFUSE,          /* 422 */
    FASGD_SRV_NORM_CLIP,            /* scaled down to the bound */
    FASGD_SRV_NORM_AUTO             /* clipped while direction is judged, else refused */
} fasgd_srv_norm_action_t;

typedef struct {
    char push_endpoint [256];
    char fetch_endpoint [256];
    char control_endpoint [256];    /* STATUS and CHECKPOINT; empty: none */
    char metrics_endpoint [256];    /* Prometheus metrics over HTTP; empty: none */
    uint64_t seed;
    int clients;                    /* λ expected: softsync's group size */
    fasgd_model_cfg_t model;
    int shard_index, shard_count;   /* this server holds part shard_index of shard_count (shardmap.h) */
    char external_tensors [4096];   /* non-empty: an external model, "name:SHAPE,..." */
    char external_init [FASGD_PATH_LEN];    /* its initial θ (.npy or raw float32); empty: zeros */
    fasgd_rule_cfg_t rule;
    fasgd_gates_cfg_t gates;
    fasgd_data_cfg_t data;
    int validate;                   /* evaluate on the validation set */
    int eval_every;                 /* timestamps */
    char csv [FASGD_PATH_LEN];
    char checkpoint [FASGD_PATH_LEN];
    double checkpoint_seconds;
    uint64_t checkpoint_updates;
    int heartbeat_ms;
    int expiry_ms;
    double status_seconds;          /* a status log line this often; 0 off */
    uint64_t max_cache_bytes;       /* resend-last caches, all clients together */
    uint64_t max_snapshot_bytes;    /* θ_used copies (dcasgd, gap-aware), all clients together */
    double grad_norm;               /* refuse (or clip) gradients of a larger L2 norm; 0 off */
    double grad_norm_factor;        /* ... or larger than this times the recent median; 0 off */
    int grad_norm_action;           /* fasgd_srv_norm_action_t: above a bound */
    int wire_push, wire_params;     /* fasgd_wire_t: how gradients and parameters travel */
    int max_refusals;               /* refusals in a row that make the server forget a client; 0 never */
    int guard_enabled;              /* 0: pushes reach the rule unjudged (measuring the guard's cost) */
    int guard_examples;             /* the reference gradient's examples; 0: no reference */
    int guard_every;                /* pushes judged between reference gradients (guard.c, s_every) */
    int guard_pool;                 /* validation examples the reference draws from */
    double guard_cost, guard_trust, guard_refuse, guard_stale, guard_span, guard_probation;   /* common/verdict.h */
    char guard_trusted [FASGD_PATH_LEN];    /* a directory of trusted client certificates; empty: none */
    int guard_trusted_age;          /* updates within which a trusted push judges others */
    int guard_staleness;            /* fasgd_staleness_kind_t: what tau counts */
    int guard_address_votes;        /* without CURVE, the votes one address's ids share in the median; 0: one an id */
    int guard_loss_examples;        /* the held-out loss's fixed batch (guard_loss.c); 0: no loss check */
    double guard_loss_rise;         /* the rise of the held-out loss (log) after a client's pushes that cuts its weight */
    double guard_loss_jump;         /* a rise (log) between two references that sets θ back; 0: never */
    int max_clients;                /* clients joined at once; JOIN beyond: 503 */
    int status_clients;             /* clients STATUS lists, the busiest first */
    int max_connections;            /* TCP connections open at once; 0: from the clients and descriptors */
    int greeting_ms;                /* a connection without a valid request by then is closed */
    int max_greeting;               /* connections without one yet, at once; 0: half of the above */
    int greeting_per_address;       /* ... from one source address (IPv6: one /64) */
    double bandwidth;               /* bytes/s the server's link may carry; 0: no budget */
    int turns;                      /* θ replies one connection at a time (turns.h) */
    int turns_hold_ms, turns_hold_min_ms, turns_queue, turns_reader_ms, turns_slow_min_ms;
    double turns_hold_factor;       /* a turn's bound: this times the fastest lately (turn_hold.h) */
    double turns_slow_factor;       /* a client whose turns take this times the others' goes without (turn_slow.h) */
    uint64_t turns_lead_bytes;
    char curve_cert [FASGD_PATH_LEN];       /* the server's secret certificate; empty: no CURVE */
    char curve_clients [FASGD_PATH_LEN];    /* a directory of allowed client certificates */
    int curve_allow_any;                    /* CURVE without an allowlist */
    int cpu;                        /* pin the update loop and ZeroMQ's I/O thread; -1: no */
    int log_level;
    int log_syslog;
} fasgd_server_cfg_t;

extern const fasgd_cfg_key_t fasgd_server_cfg_keys [];

/*  What the key table cannot check: metrics.endpoint's form. Returns the
    number of errors, each reported on errs after "name: ".  */
int fasgd_server_cfg_validate (const fasgd_server_cfg_t *cfg, const char *name, FILE *errs);

typedef struct fasgd_server_t fasgd_server_t;

/*  The gates' part of the description every WELCOME carries (the
    client sets its gates up from it: fasgd_link_gates_from_desc).  */
void fasgd_server_desc_gates (const fasgd_gates_cfg_t *g, fasgd_proto_desc_t *d);

/*  Builds the server: model, rule, data, and binds both sockets. NULL
    after logging the cause (a failed bind included).  */
fasgd_server_t *fasgd_server_new (const fasgd_server_cfg_t *cfg, int resume);
void fasgd_server_destroy (fasgd_server_t **self_p);

/*  The endpoints actually bound (ephemeral ports resolved).  */
const char *fasgd_server_push_endpoint (const fasgd_server_t *self);
const char *fasgd_server_fetch_endpoint (const fasgd_server_t *self);
/*  "" when control_endpoint is empty (no control socket).  */
const char *fasgd_server_control_endpoint (const fasgd_server_t *self);
/*  "" when metrics.endpoint is empty; else its URL, the port resolved.  */
const char *fasgd_server_metrics_endpoint (const fasgd_server_t *self);

/*  Serves until fasgd_server_stop (from a signal handler: it only sets a
    flag), then checkpoints and returns 0.  */
int fasgd_server_run (fasgd_server_t *self);
void fasgd_server_stop (fasgd_server_t *self);

#endif
