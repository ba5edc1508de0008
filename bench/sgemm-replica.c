/*  sgemm-replica: a gradient's matrix products alone.  */
#include "sgemm-replica.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

struct fasgd_sgemm_replica_t {
    const fasgd_model_t *model;
    int mu, columns;
    const float *x, *theta;
    float *grad;
    float *act [FASGD_MODEL_MAX_LAYERS + 1];    /* act [l] is mu x sizes [l] */
    float *delta;
    unsigned long runs;
};

fasgd_sgemm_replica_t *
fasgd_sgemm_replica_new (const fasgd_model_t *model, int mu, int columns, const float *x,
                         const float *theta, float *grad)
{
    fasgd_sgemm_replica_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    const fasgd_model_spec_t *spec = fasgd_model_spec (model);
    self->model = model;
    self->mu = mu;
    self->columns = columns;
    self->x = x;
    self->theta = theta;
    self->grad = grad;
    int widest = 1;
    for (int l = 1; l < spec->nsizes - 1; l++)
        if (spec->sizes [l] > widest)
            widest = spec->sizes [l];
    int ok = (self->delta = calloc ((size_t) mu * widest, sizeof (float))) != NULL;
    for (int l = 1; l < spec->nsizes && ok; l++)
        ok = (self->act [l] = calloc ((size_t) mu * spec->sizes [l], sizeof (float))) != NULL;
    if (!ok)
        fasgd_sgemm_replica_destroy (&self);
    return self;
}

/*  The forward products accumulate into act (beta = 1, as the gradient's
    bias trick does) and the backward ones feed on them, so values grow
    with every run; a clear every 256 runs (well under 0.1% of the time)
    keeps them far from overflow.  */
static void
s_clear_now_and_then (fasgd_sgemm_replica_t *self)
{
    const fasgd_model_spec_t *spec = fasgd_model_spec (self->model);
    if ((++self->runs & 255) == 0)
        for (int l = 1; l < spec->nsizes; l++)
            memset (self->act [l], 0, (size_t) self->mu * spec->sizes [l] * sizeof (float));
}

void
fasgd_sgemm_replica_destroy (fasgd_sgemm_replica_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_sgemm_replica_t *self = *self_p;
    for (int l = 0; l <= FASGD_MODEL_MAX_LAYERS; l++)
        free (self->act [l]);
    free (self->delta);
    free (self);
    *self_p = NULL;
}

/*  The first layer's inner dimension is `columns`.  */
static int
s_fan_in (const fasgd_sgemm_replica_t *self, const fasgd_model_spec_t *spec, int l)
{
    return l == 1 ? self->columns : spec->sizes [l - 1];
}

/*  The forward products, into act.  */
static void
s_forward_products (fasgd_sgemm_replica_t *self)
{
    const fasgd_model_spec_t *spec = fasgd_model_spec (self->model);
    const int L = spec->nsizes - 1, n = self->mu;
    for (int l = 1; l <= L; l++) {
        const int fan_in = s_fan_in (self, spec, l), fan_out = spec->sizes [l];
        const float *in = l > 1 ? self->act [l - 1] : self->x;
        const float *w = self->theta + fasgd_model_tensor (self->model, 2 * (l - 1))->offset;
        cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, n, fan_out, fan_in,
                     1.0f, in, fan_in, w, fan_out, 1.0f, self->act [l], fan_out);
    }
}

void
fasgd_sgemm_replica_forward (fasgd_sgemm_replica_t *self)
{
    s_forward_products (self);
    s_clear_now_and_then (self);
}

void
fasgd_sgemm_replica_run (fasgd_sgemm_replica_t *self)
{
    const fasgd_model_spec_t *spec = fasgd_model_spec (self->model);
    const int L = spec->nsizes - 1, n = self->mu;
    s_forward_products (self);
    for (int l = L; l >= 1; l--) {
        const int fan_in = s_fan_in (self, spec, l), fan_out = spec->sizes [l];
        const float *in = l > 1 ? self->act [l - 1] : self->x;
        const float *w = self->theta + fasgd_model_tensor (self->model, 2 * (l - 1))->offset;
        float *dw = self->grad + fasgd_model_tensor (self->model, 2 * (l - 1))->offset;
        cblas_sgemm (CblasRowMajor, CblasTrans, CblasNoTrans, fan_in, fan_out, n,
                     1.0f, in, fan_in, self->act [l], fan_out, 0.0f, dw, fan_out);
        if (l > 1)
            cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, n, fan_in, fan_out,
                         1.0f, self->act [l], fan_out, w, fan_out, 0.0f, self->delta, fan_in);
    }
    s_clear_now_and_then (self);
}
