/*  sgemm-replica: the matrix products of one fasgd_model_gradient, with the
    same shapes, transposes, leading dimensions and betas, and nothing else
    around them. Its rate is the bound a gradient (and so the simulator)
    can approach; the benchmarks measure it in the same run as what they
    compare with it.  */
#ifndef FASGD_SGEMM_REPLICA_H_INCLUDED
#define FASGD_SGEMM_REPLICA_H_INCLUDED

#include "model.h"

typedef struct fasgd_sgemm_replica_t fasgd_sgemm_replica_t;

/*  Borrows the model, x (mu rows of `columns` floats) and theta/grad
    (nparams each; grad may be NULL for forward passes only). columns is
    the first layer's inner dimension: the model's input_dim for the full
    products, fewer for those that fasgd_model_gradient runs when it leaves
    out blank input columns (fasgd_model_ws_columns); the first `columns`
    rows of W_1 then stand in for the kept ones.  */
fasgd_sgemm_replica_t *fasgd_sgemm_replica_new (const fasgd_model_t *model, int mu, int columns,
                                                const float *x, const float *theta, float *grad);
void fasgd_sgemm_replica_destroy (fasgd_sgemm_replica_t **self_p);

/*  Runs the products of one gradient.  */
void fasgd_sgemm_replica_run (fasgd_sgemm_replica_t *self);

/*  Runs the forward products alone: those of evaluating mu examples.  */
void fasgd_sgemm_replica_forward (fasgd_sgemm_replica_t *self);

#endif
