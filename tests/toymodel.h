/*  A toy model for the in-process tests of the server's engine: an MLP
    of 16 inputs (4x4 pixels), 8 hidden units and 3 classes, 64 examples
    for it, and a θ to start from.  */
#ifndef FASGD_TESTS_TOYMODEL_H_INCLUDED
#define FASGD_TESTS_TOYMODEL_H_INCLUDED

#include "testutil.h"

#include "data.h"
#include "model.h"

static inline fasgd_model_t *
toy_model (void)
{
    fasgd_model_spec_t spec;
    fasgd_model_spec_default (&spec);
    spec.nsizes = 3;
    spec.sizes [0] = 16;
    spec.sizes [1] = 8;
    spec.sizes [2] = 3;
    char err [256] = "";
    fasgd_model_t *model = fasgd_model_new (&spec, err, sizeof err);
    ck_assert_msg (model != NULL, "%s", err);
    return model;
}

/*  64 examples of 4x4 pixels, three classes, the same every time.  */
static inline fasgd_dataset_t *
toy_examples (void)
{
    fasgd_dataset_t *d = fasgd_dataset_new (64, 4, 4);
    ck_assert_ptr_nonnull (d);
    d->nclasses = 3;
    for (uint32_t i = 0; i < 64; i++) {
        d->y [i] = (uint8_t) (i % 3);
        for (uint32_t j = 0; j < 16; j++)
            d->x [i * 16 + j] = (float) ((i * 7 + j * 3 + (i % 3) * j) % 11) / 10.0f;
    }
    return d;
}

/*  θ (n values) to start from.  */
static inline void
toy_theta (float *theta, size_t n)
{
    for (size_t i = 0; i < n; i++)
        theta [i] = (float) ((int) (i % 9) - 4) * 0.05f;
}

#endif
