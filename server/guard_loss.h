/*  guard_loss: the guard's check of the held-out loss itself (guard_loss.c
    says how). The guard (guard.c) owns one when it computes references
    of its own; it measures at each reference, is told of every push it
    judges and every push the rule applied, and gives back what a
    client's weight is to be multiplied by.  */
#ifndef FASGD_SERVER_GUARD_LOSS_H_INCLUDED
#define FASGD_SERVER_GUARD_LOSS_H_INCLUDED

#include "data.h"
#include "model.h"
#include "registry.h"
#include "rng.h"
#include "server.h"
#include "stats.h"

typedef struct fasgd_srv_guard_loss_t fasgd_srv_guard_loss_t;

/*  A loss check on guard.loss_examples examples of pool drawn once with
    rng (data no client trains on), fixed for the run; with
    guard.loss_jump, a copy of θ (nparams values) at the last measure
    that was not a jump. model, pool, cfg and st are borrowed. NULL out of memory or with guard.loss_examples
    0 (no check).  */
fasgd_srv_guard_loss_t *fasgd_srv_guard_loss_new (const fasgd_server_cfg_t *cfg, const fasgd_model_t *model,
                                                  const fasgd_dataset_t *pool, size_t nparams, fasgd_rng_t *rng,
                                                  fasgd_srv_stats_t *st);
void fasgd_srv_guard_loss_destroy (fasgd_srv_guard_loss_t **self_p);
/*  At a reference: the loss at θ on the fixed batch; its relative change
    since the last measure is shared among the clients whose pushes were
    applied in between, by applied weight.  */
void fasgd_srv_guard_loss_measure (fasgd_srv_guard_loss_t *self, const float *theta);
/*  After a measure whose change was a jump (above guard.loss_jump): θ as
    it was at the measure before (nparams values, owned by the check),
    once; else NULL.  */
const float *fasgd_srv_guard_loss_rollback (fasgd_srv_guard_loss_t *self);
/*  The least share of its pushes the check leaves a client it cuts.  */
#define FASGD_SRV_GUARD_LOSS_LEAST 0.125
/*  c is in good standing: its pushes earned the score's marks of trust
    (common/verdict.h: past probation) and, if self (the check; NULL:
    none), the held-out loss has not risen after them by more than
    guard.loss_rise. Its pushes are never refused for their score (left
    out instead); the check saves θ that such clients carried, and the
    guard draws its references further apart while all pushes are
    theirs (guard.c).  */
int fasgd_srv_guard_loss_standing (const fasgd_srv_guard_loss_t *self, const fasgd_srv_client_t *c);
/*  A push of c judged (not refused): its record ages by one push; the
    factor in [0, 1] its weight is multiplied by (guard.c keeps it at
    FASGD_SRV_GUARD_LOSS_LEAST at least).  */
double fasgd_srv_guard_loss_factor (fasgd_srv_guard_loss_t *self, fasgd_srv_client_t *c);
/*  The rule applied a push of c with weight w (> 0).  */
void fasgd_srv_guard_loss_applied (fasgd_srv_guard_loss_t *self, fasgd_srv_client_t *c, double w);
/*  The last loss measured (NAN before the first).  */
double fasgd_srv_guard_loss_last (const fasgd_srv_guard_loss_t *self);
/*  For a checkpoint: the θ a jump would set θ back to (nparams values,
    the check's), or NULL; the jumps in a row in *rollbacks.  */
const float *fasgd_srv_guard_loss_saved (const fasgd_srv_guard_loss_t *self, int *rollbacks);
/*  After a restart: saved (nparams values, copied) becomes the θ a jump
    sets θ back to, its loss measured on this check's batch; the jumps
    in a row are rollbacks.  */
void fasgd_srv_guard_loss_restore (fasgd_srv_guard_loss_t *self, const float *saved, int rollbacks);
/*  The clients with a share of the next change (n of them, the check's
    list): the records a measure changes.  */
fasgd_srv_client_t *const *fasgd_srv_guard_loss_clients (const fasgd_srv_guard_loss_t *self, size_t *n);
/*  Before c is freed: its share of the next change is nobody's.  */
void fasgd_srv_guard_loss_forget (fasgd_srv_guard_loss_t *self, fasgd_srv_client_t *c);

#endif
