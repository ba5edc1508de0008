/*  link: libfasgd-client's connection to one server, or to one shard of
    a sharded model: the calls of <fasgd/client.h> on the part of θ that
    server holds (fasgd_link_nparams values, from the description's
    offset), with that server's timestamps, v̄ and gates. client.c
    builds the public fasgd_client_t from one link per server; each
    fasgd_link_X does what fasgd_client_X documents, for its server.  */
#ifndef FASGD_LINK_H_INCLUDED
#define FASGD_LINK_H_INCLUDED

#include "client.h"
#include "gates.h"

typedef struct fasgd_link_t fasgd_link_t;

fasgd_link_t *fasgd_link_new (const char *push_endpoint, const char *fetch_endpoint);
void fasgd_link_destroy (fasgd_link_t **self_p);
void fasgd_link_set_timeout (fasgd_link_t *self, int timeout_ms);
int fasgd_link_set_curve (fasgd_link_t *self, const char *server_key, const char *cert_file);
const char *fasgd_link_public_key (const fasgd_link_t *self);
void fasgd_link_set_seed (fasgd_link_t *self, uint64_t seed);

int fasgd_link_join (fasgd_link_t *self, const char *name);
/*  1 while joined: from a JOIN's WELCOME to LEAVE, a 401 or a new JOIN.  */
int fasgd_link_joined (const fasgd_link_t *self);
/*  1 once θ was received (and taken) in this session.  */
int fasgd_link_fetched (const fasgd_link_t *self);
/*  PARAMS refused since θ was last taken from this server (in any
    session): values no server holds (NaN, Inf, beyond ±1e19).  */
uint64_t fasgd_link_theta_refused (const fasgd_link_t *self);
const fasgd_proto_desc_t *fasgd_link_desc (const fasgd_link_t *self);
uint32_t fasgd_link_id (const fasgd_link_t *self);
size_t fasgd_link_nparams (const fasgd_link_t *self);

int fasgd_link_fetch (fasgd_link_t *self, float *theta, uint64_t *timestamp, int if_newer);
int fasgd_link_push (fasgd_link_t *self, const float *grad, uint64_t timestamp);
int fasgd_link_push_n (fasgd_link_t *self, const float *grad, size_t n, uint64_t timestamp);
int fasgd_link_push_repeat (fasgd_link_t *self);
int fasgd_link_want_fetch (fasgd_link_t *self);
int fasgd_link_want_push (fasgd_link_t *self);
int fasgd_link_push_gated (fasgd_link_t *self, const float *grad, uint64_t timestamp);
int fasgd_link_fetch_gated (fasgd_link_t *self, float *theta, uint64_t *timestamp);
int fasgd_link_push_fetch (fasgd_link_t *self, const float *grad, uint64_t timestamp,
                           float *theta, uint64_t *new_timestamp);
int fasgd_link_step_gated (fasgd_link_t *self, const float *grad, float *theta,
                           uint64_t *timestamp, int64_t *tau);
int fasgd_link_eval (fasgd_link_t *self, double error, double nll, uint64_t examples);
int fasgd_link_leave (fasgd_link_t *self);

double fasgd_link_vbar (const fasgd_link_t *self);
uint64_t fasgd_link_server_timestamp (const fasgd_link_t *self);
int fasgd_link_last_status (const fasgd_link_t *self);
const char *fasgd_link_last_reason (const fasgd_link_t *self);
const fasgd_client_stats_t *fasgd_link_stats (const fasgd_link_t *self);

/*  The gates a server's description d names, seeded with seed, as a
    session sets them up; -1 with the reason in err when d names gates
    this client does not know.  */
int fasgd_link_gates_from_desc (const fasgd_proto_desc_t *d, uint64_t seed, fasgd_gates_t *gates,
                                char *err, size_t errlen);

#endif
