/*  guard: what a gradient must pass before the rule touches anything
    (guard.c says how it judges). It owns its bounds and its median, reads
    θ and the rule through params, and counts in the stats; it gives
    verdicts on clients and frees none.  */
#ifndef FASGD_SERVER_GUARD_H_INCLUDED
#define FASGD_SERVER_GUARD_H_INCLUDED

#include "../common/checkpoint.h"
#include "data.h"
#include "model.h"
#include "params.h"
#include "registry.h"
#include "server.h"
#include "stats.h"

/*  The guard's verdict on a client after a refusal.  */
typedef enum {
    FASGD_SRV_GUARD_KEEP,               /* serve it on */
    FASGD_SRV_GUARD_FORGET              /* refused limits.refusals times in a row: free it */
} fasgd_srv_guard_verdict_t;

/*  A guard for cfg's limits.grad_norm, limits.grad_norm_factor,
    limits.grad_norm_action and limits.refusals, once θ and the rule's
    state are in place (after a resume too). A clipped gradient is
    written into scratch (params->n floats). cfg, params, scratch and st
    are borrowed. NULL out of memory.  */
fasgd_srv_guard_t *fasgd_srv_guard_new (const fasgd_server_cfg_t *cfg, const fasgd_srv_params_t *params,
                                        float *scratch, fasgd_srv_stats_t *st);
/*  Gives the guard a reference: model's gradient at θ, on guard.examples
    drawn at random from the first guard.pool examples of valid (copied;
    data no client trains on), every guard.every pushes judged (half as
    many in doubt: guard.c, s_every); the
    guard then judges direction (common/verdict.h). Without one (an
    external model, a shard, no validation set), the pushes of the
    clients whose key guard.trusted names (c->trusted) are the reference when guard.trusted is set; else it
    judges sizes only. It logs which. model and valid are borrowed;
    valid may be NULL. -1 out of memory.  */
int fasgd_srv_guard_reference (fasgd_srv_guard_t *self, const fasgd_model_t *model, const fasgd_dataset_t *valid);
/*  After fasgd_srv_guard_check: θ (params->n values, the guard's) that
    the caller is to set θ back to (fasgd_srv_params_restore, then a new
    timestamp), when the held-out loss jumped since the last reference
    (guard_loss.c); NULL mostly. Once for each jump.  */
const float *fasgd_srv_guard_rollback (fasgd_srv_guard_t *self);
/*  As the server stops: the held-out loss measured once more if pushes
    were applied since the last measure, so that they meet the check
    too; what to set θ back to as fasgd_srv_guard_rollback, or NULL.  */
const float *fasgd_srv_guard_settle (fasgd_srv_guard_t *self);
/*  1 when it judges direction against a reference (computed, or a
    trusted client's push).  */
int fasgd_srv_guard_has_reference (const fasgd_srv_guard_t *self);
/*  What the direction is judged against: "reference" (computed on
    held-out data), "trusted" (trusted clients' pushes) or "unchecked".  */
const char *fasgd_srv_guard_direction (const fasgd_srv_guard_t *self);
/*  The last reference gradient's norm (0 without one).  */
double fasgd_srv_guard_reference_norm (const fasgd_srv_guard_t *self);
/*  c's mean score with the guard (common/verdict.h).  */
double fasgd_srv_guard_client_mean (const fasgd_srv_guard_t *self, const fasgd_srv_client_t *c);
/*  The clients that still vote stop voting.  */
void fasgd_srv_guard_destroy (fasgd_srv_guard_t **self_p);
/*  Judges the gradient *gp from client c computed tau updates ago
    (repeat: its cached last one, whose size was judged already): 0 to
    apply it, else the status to refuse it with (422) and the reason in
    why. *weight_p: 1, or the weight it is applied with ((0, 1): *gp
    then points at the scaled copy; 0: it is not applied, but not
    refused either). *norm_p: its norm, as applied.  */
int fasgd_srv_guard_check (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, const float **gp, int repeat,
                           uint64_t tau, double *weight_p, double *norm_p, char *why, size_t whylen);
/*  What the guard reads a push against, chosen before its pass over g:
    its sum of squares always, and its dot product with r (NULL: none)
    within r's spans. read 0: the guard reads nothing of g (it is off, or
    a repeat whose direction is not judged).  */
typedef struct {
    int read;
    const float *r;
    const size_t *spans;
    size_t nspans;
    int judge, k;                       /* the guard's own: the reference judged against */
} fasgd_srv_guard_target_t;
/*  fasgd_srv_guard_check in two halves, so that its pass over g can be
    one that also applies it (params.c's stage: dispatch.c): the target,
    after the reference gradient due (if any: a rollback may then be
    waiting, fasgd_srv_guard_rollback); then the verdict, from g's sum of
    squares and dot product with t->r (sums [0] and [1], as
    fasgd_floats_sumsq_dot_spans gives them), or, with sums NULL, from
    the guard's own pass. Both as fasgd_srv_guard_check, which is the two
    in a row.  */
void fasgd_srv_guard_target (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, int repeat, uint64_t tau,
                             fasgd_srv_guard_target_t *t);
int fasgd_srv_guard_judge (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, const fasgd_srv_guard_target_t *t,
                           const double *sums, const float **gp, int repeat, uint64_t tau, double *weight_p,
                           double *norm_p, char *why, size_t whylen);
/*  After the rule applied (or buffered) g, computed at θ of timestamp
    j, of this norm (as applied); a repeat does not count in the
    history. A trusted client's g becomes the reference (copied).  */
void fasgd_srv_guard_accepted (fasgd_srv_guard_t *self, fasgd_srv_client_t *c, const float *g, uint64_t j,
                               double norm, int repeat);
/*  After a refusal: counts it, and says whether c is to be forgotten
    (the caller then asks the registry to free it).  */
fasgd_srv_guard_verdict_t fasgd_srv_guard_refused (fasgd_srv_guard_t *self, fasgd_srv_client_t *c);
/*  What bounds the next pushes, for a checkpoint: the last accepted
    norms (the history's), the last references' norms, each CURVE key's
    record (its clients' with the verdict and the loss check, its vote),
    the loss check's rollbacks in a row; *saved: the θ the loss check
    would set θ back to (params->n values, the guard's), or NULL.  */
void fasgd_srv_guard_save (fasgd_srv_guard_t *self, fasgd_checkpoint_guard_t *out, const float **saved);
/*  Takes back what a checkpoint kept (in checked by common/checkpoint.c;
    saved: the loss check's θ, copied, or NULL): before the first push,
    so that the first pushes after a restart meet the bound the run had
    learnt, not none, and a key's clients the record it had.  */
void fasgd_srv_guard_restore (fasgd_srv_guard_t *self, const fasgd_checkpoint_guard_t *in, const float *saved);
/*  c joined (registry.c): with a CURVE key the guard holds a record of,
    it starts from that record (its verdict, its loss check's, its vote),
    not anew.  */
void fasgd_srv_guard_joined (fasgd_srv_guard_t *self, fasgd_srv_client_t *c);
/*  The median the factor multiplies; 0 before the first push.  */
double fasgd_srv_guard_median (const fasgd_srv_guard_t *self);
/*  What an honest push's norm is taken to be: with a reference (4., 5.)
    the anchor the factor multiplies, which the median moves only within
    [‖r‖/2, guard.span·‖r‖], so that no number of ids pushing tiny norms
    takes it lower; without one the median. 0 before the first push.  */
double fasgd_srv_guard_honest_norm (const fasgd_srv_guard_t *self);
/*  Before c is freed (by the registry): its vote leaves the median's.  */
void fasgd_srv_guard_forget (fasgd_srv_guard_t *self, fasgd_srv_client_t *c);

#endif
