/*  checkpoint: θ, T, the rule's state, the guard's and the staleness
    clock's on disk, written periodically, on request and at exit, and
    read back by --resume (checkpoint.c). It owns when to write and what
    to do when writing fails; the file format is common/checkpoint.c's.  */
#ifndef FASGD_SERVER_CHECKPOINT_H_INCLUDED
#define FASGD_SERVER_CHECKPOINT_H_INCLUDED

#include "codec.h"
#include "guard.h"
#include "model.h"
#include "params.h"
#include "server.h"
#include "staleness.h"

typedef struct fasgd_srv_checkpoint_t fasgd_srv_checkpoint_t;

/*  Checkpoints of params to cfg's checkpoint.file (none when empty), on
    cfg's checkpoint.seconds and checkpoint.updates, describing θ as the
    model's tensors (model, or the external tensors ext [0..next) when
    model is NULL; a shard's part of them). Everything is borrowed. NULL
    out of memory.  */
fasgd_srv_checkpoint_t *fasgd_srv_checkpoint_new (const fasgd_server_cfg_t *cfg, fasgd_srv_params_t *params,
                                                  const fasgd_model_t *model, const fasgd_proto_tensor_t *ext,
                                                  int next);
void fasgd_srv_checkpoint_destroy (fasgd_srv_checkpoint_t **self_p);
/*  checkpoint.seconds count from now (ms): when the server starts serving.  */
void fasgd_srv_checkpoint_start (fasgd_srv_checkpoint_t *self, int64_t now);
/*  Writes θ, T, the rule's state and the guard's (common/checkpoint.h): to a temporary
    file, fsync, rename, so a crash or a failure leaves the previous
    checkpoint whole. On failure returns -1 with the cause in err (when
    given), after logging it and doubling the pause before the next
    periodic attempt; the first success after failures logs the recovery.  */
int fasgd_srv_checkpoint_write (fasgd_srv_checkpoint_t *self, char *err, size_t errlen);
/*  A checkpoint when checkpoint.file names one (at exit); 0 when it
    names none.  */
int fasgd_srv_checkpoint_final (fasgd_srv_checkpoint_t *self);
/*  After T moved: a checkpoint when checkpoint.updates timestamps have
    passed since the last (after a failure, not until its pause is over).  */
void fasgd_srv_checkpoint_updated (fasgd_srv_checkpoint_t *self);
/*  On the loop's clock: a checkpoint when checkpoint.seconds have passed
    since the last and T moved (after a failure, not until its pause is
    over).  */
void fasgd_srv_checkpoint_tick (fasgd_srv_checkpoint_t *self, int64_t now);
/*  Loads θ, T and the rule's state from checkpoint.file, all or nothing,
    and keeps the guard's state (with the keys' records and the loss
    check's saved θ) for fasgd_srv_checkpoint_guard and the staleness
    clock's sums for fasgd_srv_checkpoint_staleness (a file of a format
    before holds less or none: logged); -1 logged with the file and the
    cause.  */
int fasgd_srv_checkpoint_resume (fasgd_srv_checkpoint_t *self);
/*  The guard whose state the checkpoints written from now on hold
    (borrowed); after a resume, it takes the state the checkpoint held.  */
void fasgd_srv_checkpoint_guard (fasgd_srv_checkpoint_t *self, fasgd_srv_guard_t *guard);
/*  The staleness clock whose running sums the checkpoints written from
    now on hold (borrowed); after a resume, it takes back the sums the
    checkpoint held, when it counts movement (a count clock has none to
    take; a file of a format before holds none: the clock starts anew).  */
void fasgd_srv_checkpoint_staleness (fasgd_srv_checkpoint_t *self, fasgd_staleness_clock_t *clock);
/*  1 when this process wrote one, with its T and when (ms); else 0.  */
int fasgd_srv_checkpoint_last (const fasgd_srv_checkpoint_t *self, uint64_t *T, int64_t *ms);

#endif
