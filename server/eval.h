/*  eval: the evaluation thread and the validation CSV (eval.c). It owns
    the thread, the validation set, the CSV and the last result, behind
    its own lock; the poll loop hands it snapshots of θ from params and
    the counters of the moment.  */
#ifndef FASGD_SERVER_EVAL_H_INCLUDED
#define FASGD_SERVER_EVAL_H_INCLUDED

#include "affinity.h"
#include "data.h"
#include "model.h"
#include "params.h"
#include "registry.h"
#include "server.h"
#include "stats.h"

typedef struct fasgd_srv_eval_t fasgd_srv_eval_t;

/*  The evaluator of model (NULL for an external model) on *valid_p,
    which it takes over (NULL: no validation set of its own; the clients'
    EVAL reports stand in), and on *test_p beside it (taken over too; NULL
    for none), appending rows to cfg's eval.csv (opened here, its header
    written when new, refused when an existing file's header has other
    columns). cfg, params, model, st and
    registry (for the clients counted in a row) are borrowed. NULL after
    logging the cause.  */
fasgd_srv_eval_t *fasgd_srv_eval_new (const fasgd_server_cfg_t *cfg, fasgd_srv_params_t *params,
                                      const fasgd_model_t *model, fasgd_dataset_t **valid_p,
                                      fasgd_dataset_t **test_p, const fasgd_srv_stats_t *st,
                                      const fasgd_srv_registry_t *registry);
/*  Stops the thread (after the evaluation it is running), closes the CSV.  */
void fasgd_srv_eval_destroy (fasgd_srv_eval_t **self_p);
/*  Starts the thread when there is a validation set, on cpus (the CPUs
    allowed before the loop was pinned; NULL: unchanged); the CSV's wall
    clock counts from started_ms. -1 after logging the cause.  */
int fasgd_srv_eval_start (fasgd_srv_eval_t *self, const fasgd_cpus_t *cpus, int64_t started_ms);
/*  1 when it evaluates θ itself (it has a validation set).  */
int fasgd_srv_eval_validates (const fasgd_srv_eval_t *self);
/*  Hands θ at T to the evaluator unless it is still busy with the last.  */
void fasgd_srv_eval_maybe (fasgd_srv_eval_t *self);
/*  Blocks until the evaluator has finished what it was handed.  */
void fasgd_srv_eval_wait (fasgd_srv_eval_t *self);
/*  A gradient of staleness tau was applied: the next row's max_tau.  */
void fasgd_srv_eval_note_tau (fasgd_srv_eval_t *self, uint64_t tau);
/*  An EVAL request's body from client c: logged, and without a
    validation set of its own, the validation row. NULL when taken; else
    the reason it was refused (an error outside [0, 1], an nll negative,
    either not a finite number, no error), written in why [size].  */
const char *fasgd_srv_eval_report (fasgd_srv_eval_t *self, const fasgd_srv_client_t *c, const char *body,
                                   size_t len, char *why, size_t size);
/*  The last result: 1 with its error, NLL, timestamp and when (ms); 0
    before the first (*error then NaN).  */
int fasgd_srv_eval_result (fasgd_srv_eval_t *self, double *error, double *nll, uint64_t *T, int64_t *ms);

#endif
