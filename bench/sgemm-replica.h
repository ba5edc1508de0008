/*  sgemm-replica: the matrix products of one fasgd_model_gradient, with the
    same shapes, transposes, leading dimensions and betas, and nothing else
    around them. Its rate is the bound a gradient (and so the simulator)
    can approach; the benchmarks measure it in the same run as what they
    compare with it.  */
#ifndef FASGD_SGEMM_REPLICA_H_INCLUDED
#define FASGD_SGEMM_REPLICA_H_INCLUDED

#include "model.h"

typedef struct fasgd_sgemm_replica_t fasgd_sgemm_replica_t;

/*  Borrows the model, x (mu rows of input) and theta/grad (nparams each).  */
fasgd_sgemm_replica_t *fasgd_sgemm_replica_new (const fasgd_model_t *model, int mu, const float *x,
                                                const float *theta, float *grad);
void fasgd_sgemm_replica_destroy (fasgd_sgemm_replica_t **self_p);

/*  Runs the products of one gradient.  */
void fasgd_sgemm_replica_run (fasgd_sgemm_replica_t *self);

#endif
