/*  model: parameter layout, spec validation, initialisation statistics,
    the gradient against finite differences of an independent
    double-precision forward pass, hand-checked losses, chunked evaluation,
    and a short training run that must actually learn.  */
#include "model.h"
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static fasgd_model_spec_t
s_spec (int activation, int init, int nsizes, const int *sizes)
{
    fasgd_model_spec_t spec;
    memset (&spec, 0, sizeof spec);
    spec.nsizes = nsizes;
    memcpy (spec.sizes, sizes, (size_t) nsizes * sizeof sizes [0]);
    spec.activation = activation;
    spec.init = init;
    return spec;
}

static fasgd_model_t *
s_model (int activation, int init, int nsizes, const int *sizes)
{
    fasgd_model_spec_t spec = s_spec (activation, init, nsizes, sizes);
    char err [256] = "";
    fasgd_model_t *model = fasgd_model_new (&spec, err, sizeof err);
    ck_assert_msg (model != NULL, "fasgd_model_new: %s", err);
    return model;
}

static float *
s_floats (size_t n, float fill)
{
    float *v = malloc (n * sizeof *v);
    ck_assert_ptr_nonnull (v);
    for (size_t i = 0; i < n; i++)
        v [i] = fill;
    return v;
}

/*  ---- layout ----------------------------------------------------------  */

START_TEST (test_default_layout)
{
    fasgd_model_spec_t spec;
    fasgd_model_spec_default (&spec);
    ck_assert_int_eq (spec.nsizes, 3);
    ck_assert_int_eq (spec.activation, FASGD_ACT_RELU);
    ck_assert_int_eq (spec.init, FASGD_INIT_HE);
    fasgd_model_t *model = fasgd_model_new (&spec, NULL, 0);
    ck_assert_ptr_nonnull (model);
    ck_assert_uint_eq (fasgd_model_nparams (model), 79510);
    ck_assert_int_eq (fasgd_model_ntensors (model), 4);
    ck_assert_int_eq (fasgd_model_input_dim (model), 784);
    ck_assert_int_eq (fasgd_model_nclasses (model), 10);

    const struct { const char *name; size_t offset; int rows, cols; } expect [] = {
        { "w1", 0, 784, 100 },
        { "b1", 78400, 1, 100 },
        { "w2", 78500, 100, 10 },
        { "b2", 79500, 1, 10 },
    };
    for (int i = 0; i < 4; i++) {
        const fasgd_tensor_t *t = fasgd_model_tensor (model, i);
        ck_assert_ptr_nonnull (t);
        ck_assert_str_eq (t->name, expect [i].name);
        ck_assert_uint_eq (t->offset, expect [i].offset);
        ck_assert_int_eq (t->rows, expect [i].rows);
        ck_assert_int_eq (t->cols, expect [i].cols);
    }
    ck_assert_ptr_null (fasgd_model_tensor (model, 4));
    ck_assert_ptr_null (fasgd_model_tensor (model, -1));
    ck_assert_int_eq (fasgd_model_spec (model)->sizes [1], 100);
    /*  2·128·(784·100 + 100·10) forward, the same for dW, 2·128·100·10 for
        dH1.  */
    ck_assert_double_eq (fasgd_model_gradient_flops (model, 128), 40908800.0);
    fasgd_model_destroy (&model);
    ck_assert_ptr_null (model);
    fasgd_model_destroy (&model);
    fasgd_model_destroy (NULL);
}
END_TEST

START_TEST (test_deep_layout)
{
    const int sizes [] = { 32, 30, 28, 26, 24, 22, 20, 18, 16 };
    fasgd_model_t *model = s_model (FASGD_ACT_TANH, FASGD_INIT_GLOROT, 9, sizes);
    ck_assert_int_eq (fasgd_model_ntensors (model), 16);
    size_t offset = 0;
    for (int l = 1; l <= 8; l++) {
        char name [16];
        const fasgd_tensor_t *w = fasgd_model_tensor (model, 2 * (l - 1));
        const fasgd_tensor_t *b = fasgd_model_tensor (model, 2 * (l - 1) + 1);
        snprintf (name, sizeof name, "w%d", l);
        ck_assert_str_eq (w->name, name);
        ck_assert_uint_eq (w->offset, offset);
        ck_assert_int_eq (w->rows, sizes [l - 1]);
        ck_assert_int_eq (w->cols, sizes [l]);
        offset += (size_t) sizes [l - 1] * sizes [l];
        snprintf (name, sizeof name, "b%d", l);
        ck_assert_str_eq (b->name, name);
        ck_assert_uint_eq (b->offset, offset);
        ck_assert_int_eq (b->rows, 1);
        ck_assert_int_eq (b->cols, sizes [l]);
        offset += (size_t) sizes [l];
    }
    ck_assert_uint_eq (fasgd_model_nparams (model), offset);
    ck_assert_int_eq (fasgd_model_input_dim (model), 32);
    ck_assert_int_eq (fasgd_model_nclasses (model), 16);
    fasgd_model_destroy (&model);
}
END_TEST

/*  ---- validation ------------------------------------------------------  */

static void
s_expect_refused (fasgd_model_spec_t spec, const char *needle)
{
    char err [256] = "";
    fasgd_model_t *model = fasgd_model_new (&spec, err, sizeof err);
    ck_assert_ptr_null (model);
    ck_assert_msg (strstr (err, needle) != NULL, "\"%s\" lacks \"%s\"", err, needle);
    /*  A NULL buffer is allowed.  */
    ck_assert_ptr_null (fasgd_model_new (&spec, NULL, 0));
}

START_TEST (test_spec_validation)
{
    fasgd_model_spec_t spec;
    fasgd_model_spec_default (&spec);

    fasgd_model_spec_t s = spec;
    s.nsizes = 1;
    s_expect_refused (s, "needs 2..9 layer sizes, input to output (got 1)");
    s.nsizes = 10;
    s_expect_refused (s, "(got 10)");
    s.nsizes = -3;
    s_expect_refused (s, "(got -3)");

    s = spec;
    s.sizes [1] = 0;
    s_expect_refused (s, "layer size 2 of 3 is 0, must be 1..1000000");
    s.sizes [1] = 1000001;
    s_expect_refused (s, "layer size 2 of 3 is 1000001");
    s = spec;
    s.sizes [0] = -784;
    s_expect_refused (s, "layer size 1 of 3 is -784");

    s = spec;
    s.activation = 7;
    s_expect_refused (s, "unknown activation 7 (relu = 0, tanh = 1)");
    s = spec;
    s.init = -1;
    s_expect_refused (s, "unknown init -1 (he = 0, glorot = 1, normal = 2)");

    /*  1000000·269 + 269 = 269,000,269 > 2^28 - 1; 268 columns fit.  */
    const int big [] = { 1000000, 269 };
    s_expect_refused (s_spec (FASGD_ACT_RELU, FASGD_INIT_HE, 2, big),
                      "model has 269000269 parameters, the limit is 268435455");
    /*  784, 10^6, 10: the 795,000,010 parameters that once passed for a
        server's -n after allocating 3 GB.  */
    const int wide [] = { 784, 1000000, 10 };
    s_expect_refused (s_spec (FASGD_ACT_RELU, FASGD_INIT_HE, 3, wide),
                      "model has 795000010 parameters, the limit is 268435455");
    const int fits [] = { 1000000, 268 };
    fasgd_model_t *model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 2, fits);
    ck_assert_uint_eq (fasgd_model_nparams (model), 268000268u);
    fasgd_model_destroy (&model);
    /*  Products of widths at the limit must not wrap.  */
    const int huge [] = { 1000000, 1000000, 1000000 };
    s_expect_refused (s_spec (FASGD_ACT_RELU, FASGD_INIT_HE, 3, huge),
                      "model has 2000002000000 parameters");

    /*  A small buffer truncates, still terminated.  */
    char err [8];
    s = spec;
    s.nsizes = 0;
    ck_assert_ptr_null (fasgd_model_new (&s, err, sizeof err));
    ck_assert_uint_eq (strlen (err), 7);
}
END_TEST

START_TEST (test_parse_sizes_and_names)
{
    fasgd_model_spec_t spec;
    fasgd_model_spec_default (&spec);
    char err [256];
    ck_assert_int_eq (fasgd_model_spec_parse_sizes (&spec, "20,16,12,3", err, sizeof err), 0);
    ck_assert_int_eq (spec.nsizes, 4);
    ck_assert_int_eq (spec.sizes [0], 20);
    ck_assert_int_eq (spec.sizes [3], 3);
    ck_assert_int_eq (spec.activation, FASGD_ACT_RELU);

    const struct { const char *text, *needle; } bad [] = {
        { "", "expected a number at \"\"" },
        { "784", "need at least an input and an output width" },
        { "784,,10", "expected a number at \",10\"" },
        { "784,0,10", "width 0 must be 1..1000000" },
        { "784,-5,10", "width -5 must be 1..1000000" },
        { "99999999999999999999,10", "width 99999999999999999999 must be" },
        { "784,100,10x", "unexpected \"x\"" },
        { "784 100 10", "unexpected \" \"" },
        { "1,2,3,4,5,6,7,8,9,10", "more than 9 widths" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        err [0] = '\0';
        ck_assert_int_eq (fasgd_model_spec_parse_sizes (&spec, bad [i].text, err, sizeof err), -1);
        ck_assert_msg (strstr (err, bad [i].needle) != NULL,
                       "\"%s\": \"%s\" lacks \"%s\"", bad [i].text, err, bad [i].needle);
        ck_assert_int_eq (spec.nsizes, 4);      /* untouched */
    }
    ck_assert_int_eq (fasgd_model_spec_parse_sizes (&spec, "x", NULL, 0), -1);

    ck_assert_int_eq (fasgd_model_activation_parse ("relu"), FASGD_ACT_RELU);
    ck_assert_int_eq (fasgd_model_activation_parse ("tanh"), FASGD_ACT_TANH);
    ck_assert_int_eq (fasgd_model_activation_parse ("sigmoid"), -1);
    ck_assert_int_eq (fasgd_model_activation_parse (NULL), -1);
    ck_assert_str_eq (fasgd_model_activation_name (FASGD_ACT_TANH), "tanh");
    ck_assert_ptr_null (fasgd_model_activation_name (2));
    ck_assert_int_eq (fasgd_model_init_parse ("he"), FASGD_INIT_HE);
    ck_assert_int_eq (fasgd_model_init_parse ("glorot"), FASGD_INIT_GLOROT);
    ck_assert_int_eq (fasgd_model_init_parse ("normal"), FASGD_INIT_NORMAL);
    ck_assert_int_eq (fasgd_model_init_parse ("xavier"), -1);
    ck_assert_str_eq (fasgd_model_init_name (FASGD_INIT_NORMAL), "normal");
    ck_assert_ptr_null (fasgd_model_init_name (-1));
}
END_TEST

START_TEST (test_workspace)
{
    const int sizes [] = { 5, 4, 3 };
    fasgd_model_t *model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 3, sizes);
    ck_assert_ptr_null (fasgd_model_ws_new (model, 0));
    ck_assert_ptr_null (fasgd_model_ws_new (model, -1));
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 3);
    ck_assert_ptr_nonnull (ws);
    ck_assert_int_eq (fasgd_model_ws_max_batch (ws), 3);
    fasgd_model_ws_destroy (&ws);
    ck_assert_ptr_null (ws);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_ws_destroy (NULL);
    fasgd_model_destroy (&model);
}
END_TEST

/*  ---- gradient against finite differences ----------------------------  */

/*  The forward pass written again, naively and in double, from the layout
    in model.h alone: an independent oracle for the library's loss, and
    smooth enough in double for a central difference with a tiny step.  */
static double
s_ref_loss (const fasgd_model_spec_t *spec, const double *theta,
            const float *x, const uint8_t *y, int n, int *nerrors)
{
    double nll = 0;
    int errors = 0;
    double a [64] = { 0 }, z [64];
    for (int e = 0; e < n; e++) {
        int width = spec->sizes [0];
        for (int i = 0; i < width; i++)
            a [i] = x [(size_t) e * width + i];
        size_t off = 0;
        for (int l = 1; l < spec->nsizes; l++) {
            int fin = spec->sizes [l - 1], fout = spec->sizes [l];
            const double *w = theta + off;
            const double *b = w + (size_t) fin * fout;
            off += (size_t) fin * fout + fout;
            for (int j = 0; j < fout; j++) {
                z [j] = b [j];
                for (int i = 0; i < fin; i++)
                    z [j] += a [i] * w [(size_t) i * fout + j];
            }
            int hidden = l < spec->nsizes - 1;
            for (int j = 0; j < fout; j++)
                a [j] = !hidden ? z [j]
                      : spec->activation == FASGD_ACT_RELU ? (z [j] > 0 ? z [j] : 0)
                      : tanh (z [j]);
            width = fout;
        }
        double m = a [0];
        int arg = 0;
        for (int j = 1; j < width; j++)
            if (a [j] > m) {
                m = a [j];
                arg = j;
            }
        double s = 0;
        for (int j = 0; j < width; j++)
            s += exp (a [j] - m);
        nll += log (s) + m - a [y [e]];
        errors += arg != y [e];
    }
    if (nerrors)
        *nerrors = errors;
    return nll / n;
}

static void
s_random_batch (fasgd_rng_t *rng, int n, int dim, int k, float *x, uint8_t *y)
{
    for (int i = 0; i < n * dim; i++)
        x [i] = (float) fasgd_rng_normal (rng);
    for (int i = 0; i < n; i++)
        y [i] = (uint8_t) fasgd_rng_below (rng, (uint32_t) k);
}

static void
s_check_gradient (int activation, int nsizes, const int *sizes, int n, uint64_t seed)
{
    fasgd_model_spec_t spec = s_spec (activation, FASGD_INIT_HE, nsizes, sizes);
    fasgd_model_t *model = s_model (activation, FASGD_INIT_HE, nsizes, sizes);
    const size_t np = fasgd_model_nparams (model);
    const int dim = sizes [0], k = sizes [nsizes - 1];
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, seed, 1);

    /*  Random biases too, so that every bias gradient is exercised and no
        hidden unit sits at relu's kink.  */
    float *theta = s_floats (np, 0);
    for (size_t i = 0; i < np; i++)
        theta [i] = (float) (0.7 * fasgd_rng_normal (&rng));
    float x [8 * 16];
    uint8_t y [8];
    ck_assert_int_le (n, 8);
    s_random_batch (&rng, n, dim, k, x, y);

    /*  The workspace is larger than the batch: the gradient must use n,
        not max_batch, for the mean. NAN in grad checks it is overwritten,
        not accumulated into.  */
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 8);
    float *grad = s_floats (np, NAN);
    int nerrors = -1;
    double loss = fasgd_model_gradient (model, ws, theta, x, y, n, grad, &nerrors);

    double *td = malloc (np * sizeof *td);
    ck_assert_ptr_nonnull (td);
    for (size_t i = 0; i < np; i++)
        td [i] = theta [i];
    int ref_errors = -1;
    double ref = s_ref_loss (&spec, td, x, y, n, &ref_errors);
    ck_assert_double_eq_tol (loss, ref, 1e-5 * (1 + fabs (ref)));
    ck_assert_int_eq (nerrors, ref_errors);
    ck_assert_double_eq_tol (fasgd_model_loss (model, ws, theta, x, y, n, NULL), loss, 1e-6);

    /*  Central differences in double with h = 1e-6 have truncation and
        rounding errors near 1e-10, far below float's 1e-7 relative
        precision of the analytic gradient; a transposed weight or a
        missing 1/n is wrong by O(1).  */
    const double h = 1e-6;
    for (size_t p = 0; p < np; p++) {
        double keep = td [p];
        td [p] = keep + h;
        double up = s_ref_loss (&spec, td, x, y, n, NULL);
        td [p] = keep - h;
        double down = s_ref_loss (&spec, td, x, y, n, NULL);
        td [p] = keep;
        double fd = (up - down) / (2 * h);
        double diff = fabs (fd - grad [p]);
        ck_assert_msg (diff <= 2e-5 + 1e-3 * fabs (fd),
                       "param %zu: analytic %.8g, finite difference %.8g", p, grad [p], fd);
    }
    free (td);
    free (grad);
    free (theta);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);
}

START_TEST (test_gradient_fd)
{
    const int small [] = { 5, 4, 3 };
    const int deeper [] = { 6, 5, 4, 3 };
    const int deepest [] = { 7, 6, 5, 4, 3 };
    const int linear [] = { 4, 3 };
    for (int act = FASGD_ACT_RELU; act <= FASGD_ACT_TANH; act++) {
        s_check_gradient (act, 3, small, 4, 11);
        s_check_gradient (act, 3, small, 1, 12);
        s_check_gradient (act, 4, deeper, 5, 13);
        s_check_gradient (act, 5, deepest, 3, 14);
        s_check_gradient (act, 2, linear, 6, 15);
    }
}
END_TEST

/*  The library's own float loss, differenced with a step large enough
    for float: a check that does not rest on the test's reference. tanh
    keeps the loss smooth.  */
START_TEST (test_gradient_fd_float)
{
    const int sizes [] = { 6, 5, 4, 3 };
    fasgd_model_t *model = s_model (FASGD_ACT_TANH, FASGD_INIT_GLOROT, 4, sizes);
    const size_t np = fasgd_model_nparams (model);
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, 21, 0);
    float *theta = s_floats (np, 0);
    for (size_t i = 0; i < np; i++)
        theta [i] = (float) (0.5 * fasgd_rng_normal (&rng));
    float x [4 * 6];
    uint8_t y [4];
    s_random_batch (&rng, 4, 6, 3, x, y);
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 4);
    float *grad = s_floats (np, 0);
    double loss = fasgd_model_gradient (model, ws, theta, x, y, 4, grad, NULL);
    ck_assert (isfinite (loss));
    for (size_t p = 0; p < np; p++) {
        float keep = theta [p];
        float up = keep + 1e-2f, down = keep - 1e-2f;
        theta [p] = up;
        double lu = fasgd_model_loss (model, ws, theta, x, y, 4, NULL);
        theta [p] = down;
        double ld = fasgd_model_loss (model, ws, theta, x, y, 4, NULL);
        theta [p] = keep;
        /*  The step actually taken, after rounding to float.  */
        double fd = (lu - ld) / ((double) up - (double) down);
        ck_assert_msg (fabs (fd - grad [p]) <= 5e-4 + 1e-2 * fabs (fd),
                       "param %zu: analytic %.8g, finite difference %.8g", p, grad [p], fd);
    }
    free (grad);
    free (theta);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);
}
END_TEST

/*  ---- hand-checked cases ----------------------------------------------  */

START_TEST (test_zero_weights)
{
    const int sizes [] = { 5, 4, 3 };
    fasgd_model_t *model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 3, sizes);
    const size_t np = fasgd_model_nparams (model);
    float *theta = s_floats (np, 0);
    float *grad = s_floats (np, NAN);
    float x [4 * 5];
    for (int i = 0; i < 20; i++)
        x [i] = (float) (i % 7) - 3;
    const uint8_t y [4] = { 0, 1, 2, 2 };
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 4);
    int nerrors = -1;

    /*  Equal logits: softmax is uniform, and argmax ties go to class 0.  */
    double loss = fasgd_model_gradient (model, ws, theta, x, y, 4, grad, &nerrors);
    ck_assert_double_eq_tol (loss, log (3.0), 1e-7);
    ck_assert_int_eq (nerrors, 3);

    /*  Hidden units are relu (0) = 0, so only b2 has a gradient:
        mean (1/3 - onehot).  */
    const fasgd_tensor_t *b2 = fasgd_model_tensor (model, 3);
    const float expect [3] = { 1.0f/3 - 0.25f, 1.0f/3 - 0.25f, 1.0f/3 - 0.5f };
    for (size_t p = 0; p < np; p++) {
        float want = p >= b2->offset ? expect [p - b2->offset] : 0.0f;
        ck_assert_float_eq_tol (grad [p], want, 1e-7f);
    }
    nerrors = -1;
    ck_assert_double_eq_tol (fasgd_model_loss (model, ws, theta, x, y, 4, &nerrors),
                             log (3.0), 1e-7);
    ck_assert_int_eq (nerrors, 3);
    free (grad);
    free (theta);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);
}
END_TEST

START_TEST (test_hand_cases)
{
    /*  2-2 softmax regression. w1 is fan_in x fan_out: w [0][1] = 3 links
        input 0 to class 1, so a transposed product would miss it.  */
    const int linear [] = { 2, 2 };
    fasgd_model_t *model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 2, linear);
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 4);
    float theta [6] = { 0, 3, 0, 0,  0, 0 };
    float x [4] = { 1, 0,  1, 0 };
    uint8_t y [2] = { 1, 0 };
    int nerrors = -1;
    const double small = log1p (exp (-3.0));
    ck_assert_double_eq_tol (fasgd_model_loss (model, ws, theta, x, y, 1, &nerrors), small, 1e-7);
    ck_assert_int_eq (nerrors, 0);
    ck_assert_double_eq_tol (fasgd_model_loss (model, ws, theta, x, y + 1, 1, &nerrors),
                             3 + small, 1e-6);
    ck_assert_int_eq (nerrors, 1);
    ck_assert_double_eq_tol (fasgd_model_loss (model, ws, theta, x, y, 2, &nerrors),
                             (3 + 2 * small) / 2, 1e-6);
    ck_assert_int_eq (nerrors, 1);

    /*  The bias alone: z = (2, 0).  */
    float bias_only [6] = { 0, 0, 0, 0,  2, 0 };
    ck_assert_double_eq_tol (fasgd_model_loss (model, ws, bias_only, x, y + 1, 1, NULL),
                             log1p (exp (-2.0)), 1e-7);

    /*  Huge logits: log-sum-exp keeps the loss exact and finite where a
        naive softmax would give inf.  */
    float huge [6] = { 0, 1000, 0, 0,  0, 0 };
    double loss = fasgd_model_loss (model, ws, huge, x, y + 1, 1, &nerrors);
    ck_assert (isfinite (loss));
    ck_assert_double_eq_tol (loss, 1000.0, 1e-9);
    float *grad = s_floats (6, NAN);
    loss = fasgd_model_gradient (model, ws, huge, x, y + 1, 1, grad, NULL);
    ck_assert_double_eq_tol (loss, 1000.0, 1e-9);
    /*  softmax = (0, 1), target class 0: dz = (-1, 1), times x = (1, 0).  */
    const float want [6] = { -1, 1, 0, 0,  -1, 1 };
    for (int p = 0; p < 6; p++)
        ck_assert_float_eq_tol (grad [p], want [p], 1e-6f);
    free (grad);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);

    /*  2-2-2 relu. w1 = [[1, -1], [0, 2]], b1 = 0; w2 = I, b2 = (0.5, 0).
        x = (1, 2): hidden (1, 3), logits (1.5, 3).
        x = (-1, 0.5): hidden pre (-1, 2), relu (0, 2), logits (0.5, 2).  */
    const int mlp [] = { 2, 2, 2 };
    model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 3, mlp);
    ws = fasgd_model_ws_new (model, 2);
    float t2 [12] = { 1, -1, 0, 2,  0, 0,  1, 0, 0, 1,  0.5f, 0 };
    float x2 [4] = { 1, 2,  -1, 0.5f };
    uint8_t y2 [2] = { 0, 1 };
    double l0 = log (exp (1.5) + exp (3.0)) - 1.5;
    double l1 = log (exp (0.5) + exp (2.0)) - 2.0;
    ck_assert_double_eq_tol (fasgd_model_loss (model, ws, t2, x2, y2, 2, &nerrors),
                             (l0 + l1) / 2, 1e-6);
    ck_assert_int_eq (nerrors, 1);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);
}
END_TEST

/*  The hidden tanh against tanh in double, across its whole range: a 1-1-2
    net with w1 = 1, b1 = 0, w2 = (1, -1), b2 = 0 has logits (h, -h) for
    h = tanh (x), so the NLL of class 0 is log (1 + e^-2h), whose slope
    in h is at most 2.  */
START_TEST (test_tanh_accuracy)
{
    const int sizes [] = { 1, 1, 2 };
    fasgd_model_t *model = s_model (FASGD_ACT_TANH, FASGD_INIT_GLOROT, 3, sizes);
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 1);
    const float theta [6] = { 1,  0,  1, -1,  0, 0 };
    const uint8_t y = 0;
    for (int i = -4000; i <= 4000; i++) {
        float x = (float) i * 0.005f;
        double h = tanh ((double) x);
        double want = log1p (exp (-2 * h));
        double got = fasgd_model_loss (model, ws, theta, &x, &y, 1, NULL);
        ck_assert_msg (fabs (got - want) <= 1e-6, "x = %g: nll %.9g, want %.9g", x, got, want);
    }
    /*  Saturation far out, and an exact 0 at 0.  */
    const float far [3] = { -1e30f, 1e30f, 0.0f };
    for (int i = 0; i < 3; i++) {
        double h = i == 0 ? -1 : i == 1 ? 1 : 0;
        ck_assert_double_eq_tol (fasgd_model_loss (model, ws, theta, &far [i], &y, 1, NULL),
                                 log1p (exp (-2 * h)), 1e-7);
    }
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);
}
END_TEST

/*  A NAN in θ must show in the loss: relu must not map it to 0.  */
START_TEST (test_nan_propagates)
{
    const int sizes [] = { 5, 4, 3 };
    for (int act = FASGD_ACT_RELU; act <= FASGD_ACT_TANH; act++) {
        fasgd_model_t *model = s_model (act, FASGD_INIT_HE, 3, sizes);
        fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 2);
        float *theta = s_floats (fasgd_model_nparams (model), 0.1f);
        const float x [10] = { 1, 2, 3, 4, 5,  -1, -2, -3, -4, -5 };
        const uint8_t y [2] = { 0, 1 };
        ck_assert (isfinite (fasgd_model_loss (model, ws, theta, x, y, 2, NULL)));
        theta [0] = NAN;        /* w1 [0][0] */
        ck_assert (isnan (fasgd_model_loss (model, ws, theta, x, y, 2, NULL)));
        free (theta);
        fasgd_model_ws_destroy (&ws);
        fasgd_model_destroy (&model);
    }
}
END_TEST

/*  ---- blank input columns --------------------------------------------  */

/*  A batch of n rows of 40 inputs, normal, except the columns for which
    blank (k) is nonzero, which are 0 in every row (-0 in odd rows).  */
static void
s_blank_batch (fasgd_rng_t *rng, int n, const char *blank, float *x, uint8_t *y)
{
    s_random_batch (rng, n, 40, 3, x, y);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 40; k++)
            if (blank [k])
                x [i * 40 + k] = i % 2 ? -0.0f : 0.0f;
}

/*  grad (np floats) against central finite differences of the
    double-precision oracle at td, on n examples; td is restored.  */
static void
s_check_fd (const fasgd_model_spec_t *spec, double *td, size_t np, const float *x,
            const uint8_t *y, int n, const float *grad)
{
    const double h = 1e-6;
    for (size_t p = 0; p < np; p++) {
        double keep = td [p];
        td [p] = keep + h;
        double up = s_ref_loss (spec, td, x, y, n, NULL);
        td [p] = keep - h;
        double down = s_ref_loss (spec, td, x, y, n, NULL);
        td [p] = keep;
        double fd = (up - down) / (2 * h);
        ck_assert_msg (fabs (fd - grad [p]) <= 2e-5 + 1e-3 * fabs (fd),
                       "param %zu: analytic %.8g, finite difference %.8g", p, grad [p], fd);
    }
}

/*  The first layer on the inked columns alone: the same loss as the
    double-precision oracle, the same gradient as its finite differences,
    and dW_1's rows of blank columns written as exact zeros.  */
START_TEST (test_blank_columns)
{
    const int sizes [] = { 40, 20, 3 };
    /*  14 blank columns in runs at both ends and inside, as a digit's
        border leaves them.  */
    char blank [40] = { 0 };
    const int blanks [] = { 0, 1, 2, 3, 4, 10, 17, 18, 19, 35, 36, 37, 38, 39 };
    for (size_t b = 0; b < sizeof blanks / sizeof blanks [0]; b++)
        blank [blanks [b]] = 1;
    for (int act = FASGD_ACT_RELU; act <= FASGD_ACT_TANH; act++) {
        fasgd_model_spec_t spec = s_spec (act, FASGD_INIT_HE, 3, sizes);
        fasgd_model_t *model = s_model (act, FASGD_INIT_HE, 3, sizes);
        const size_t np = fasgd_model_nparams (model);
        fasgd_rng_t rng;
        fasgd_rng_seed (&rng, 31 + (uint64_t) act, 0);
        float *theta = s_floats (np, 0);
        for (size_t i = 0; i < np; i++)
            theta [i] = (float) (0.3 * fasgd_rng_normal (&rng));
        float x [9 * 40];
        uint8_t y [9];
        s_blank_batch (&rng, 9, blank, x, y);
        fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 10);
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 0);
        float *grad = s_floats (np, NAN);
        int nerrors = -1;
        double loss = fasgd_model_gradient (model, ws, theta, x, y, 9, grad, &nerrors);
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 40 - 14);
        /*  Its first 7 examples alone, fewer than 8: the full product.  */
        ck_assert (isfinite (fasgd_model_gradient (model, ws, theta, x, y, 7, grad, NULL)));
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 40);
        ck_assert (isfinite (fasgd_model_gradient (model, ws, theta, x, y, 9, grad, NULL)));
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 40 - 14);

        double *td = malloc (np * sizeof *td);
        ck_assert_ptr_nonnull (td);
        for (size_t i = 0; i < np; i++)
            td [i] = theta [i];
        int ref_errors = -1;
        double ref = s_ref_loss (&spec, td, x, y, 9, &ref_errors);
        ck_assert_double_eq_tol (loss, ref, 1e-5 * (1 + fabs (ref)));
        ck_assert_int_eq (nerrors, ref_errors);
        s_check_fd (&spec, td, np, x, y, 9, grad);
        for (int k = 0; k < 40; k++)
            for (int j = 0; j < 20; j++)
                if (blank [k]) {
                    uint32_t bits;
                    memcpy (&bits, &grad [k * 20 + j], sizeof bits);
                    ck_assert_msg (bits == 0, "dW1 [%d][%d] of a blank column is %g", k, j,
                                   grad [k * 20 + j]);
                }

        /*  Forward only, and one row at a time: the same losses.  */
        ck_assert_double_eq_tol (fasgd_model_loss (model, ws, theta, x, y, 9, NULL), loss, 1e-6);
        double rows = 0;
        for (int i = 0; i < 9; i++)
            rows += fasgd_model_loss (model, ws, theta, x + i * 40, y + i, 1, NULL) / 9;
        ck_assert_double_eq_tol (rows, loss, 1e-5);

        /*  A weight of a blank column that is NaN or infinite still reaches
            the loss (0 · w), as the full product would take it there.  */
        theta [10 * 20 + 7] = INFINITY;
        ck_assert (isnan (fasgd_model_loss (model, ws, theta, x, y, 9, NULL)));
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 40);
        theta [10 * 20 + 7] = NAN;
        ck_assert (isnan (fasgd_model_gradient (model, ws, theta, x, y, 9, grad, NULL)));
        theta [10 * 20 + 7] = 0.5f;

        /*  Fewer than an eighth blank (4 of 40): the full product.  */
        char few [40] = { 0 };
        few [0] = few [1] = few [20] = few [39] = 1;
        s_blank_batch (&rng, 9, few, x, y);
        ck_assert (isfinite (fasgd_model_gradient (model, ws, theta, x, y, 9, grad, NULL)));
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 40);
        /*  Exactly an eighth (5 of 40): compacted.  */
        few [21] = 1;
        s_blank_batch (&rng, 9, few, x, y);
        ck_assert (isfinite (fasgd_model_gradient (model, ws, theta, x, y, 9, grad, NULL)));
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 35);
        /*  A batch with nothing inked at all: the full product.  */
        memset (x, 0, sizeof x);
        ck_assert (isfinite (fasgd_model_gradient (model, ws, theta, x, y, 9, grad, NULL)));
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 40);
        for (int p = 0; p < 40 * 20; p++)
            ck_assert (grad [p] == 0);
        /*  A NaN input keeps its column, so it reaches the loss.  */
        few [22] = 1;
        s_blank_batch (&rng, 9, few, x, y);
        x [3 * 40 + 20] = NAN;
        ck_assert (isnan (fasgd_model_loss (model, ws, theta, x, y, 9, NULL)));
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 35);

        free (td);
        free (grad);
        free (theta);
        fasgd_model_ws_destroy (&ws);
        fasgd_model_destroy (&model);
    }
}
END_TEST

/*  A prepared batch gives the same bits as the plain calls on the same
    data, whether its columns were compacted or not, and a blank column's
    NaN weight still reaches the loss through it.  */
START_TEST (test_prepared_batch)
{
    const int sizes [] = { 40, 20, 3 };
    fasgd_model_t *model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 3, sizes);
    const size_t np = fasgd_model_nparams (model);
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, 41, 0);
    float *theta = s_floats (np, 0);
    fasgd_model_init_params (model, theta, &rng);
    char blank [40] = { 0 }, none [40] = { 0 };
    for (int k = 0; k < 40; k += 3)
        blank [k] = 1;
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 8);
    float *g1 = s_floats (np, NAN), *g2 = s_floats (np, NAN);
    for (int round = 0; round < 2; round++) {
        float x [8 * 40];
        uint8_t y [8];
        s_blank_batch (&rng, 8, round == 0 ? blank : none, x, y);
        fasgd_model_batch_t *batch = fasgd_model_batch_new (model, x, y, 8);
        ck_assert_ptr_nonnull (batch);
        int e1 = -1, e2 = -2;
        double l1 = fasgd_model_gradient (model, ws, theta, x, y, 8, g1, &e1);
        int columns = fasgd_model_ws_columns (ws);
        ck_assert_int_eq (columns, round == 0 ? 40 - 14 : 40);
        double l2 = fasgd_model_batch_gradient (model, ws, theta, batch, g2, &e2);
        ck_assert_int_eq (fasgd_model_ws_columns (ws), columns);
        ck_assert (l1 == l2);
        ck_assert_int_eq (e1, e2);
        ck_assert_mem_eq (g1, g2, np * sizeof (float));
        ck_assert (fasgd_model_batch_loss (model, ws, theta, batch, &e2)
                   == fasgd_model_loss (model, ws, theta, x, y, 8, &e1));
        ck_assert_int_eq (e1, e2);
        theta [0] = NAN;        /* w1 [0][0]: column 0 is blank in round 0 */
        ck_assert (isnan (fasgd_model_batch_loss (model, ws, theta, batch, NULL)));
        ck_assert (isnan (fasgd_model_batch_gradient (model, ws, theta, batch, g2, NULL)));
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 40);
        theta [0] = 0.25f;
        fasgd_model_batch_destroy (&batch);
        ck_assert_ptr_null (batch);
    }
    fasgd_model_batch_destroy (NULL);
    ck_assert_ptr_null (fasgd_model_batch_new (model, theta, NULL, 0));
    free (g1);
    free (g2);
    free (theta);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);
}
END_TEST

/*  Whether this processor runs the sparse first layer (AVX-512).  */
static int
s_sparse_expected (void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports ("avx512f") != 0;
#else
    return 0;
#endif
}

/*  A batch of n digit-like rows of 40: columns 0-5 and 33-39 blank, and
    in the others about one entry in `every` inked, the rest ±0.  */
static void
s_sparse_batch (fasgd_rng_t *rng, int n, int every, float *x, uint8_t *y)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 40; k++) {
            int inked = k > 5 && k < 33 && fasgd_rng_below (rng, (uint32_t) every) == 0;
            x [i * 40 + k] = inked ? (float) fasgd_rng_uniform (rng) + 0.01f
                                   : (i + k) % 2 ? -0.0f : 0.0f;
        }
        /*  Column 6 inked in every example, 7 in example 0 alone.  */
        x [i * 40 + 6] = 0.5f;
        x [i * 40 + 7] = i == 0 ? 0.75f : 0.0f;
        y [i] = (uint8_t) fasgd_rng_below (rng, 3);
    }
}

/*  A prepared batch of mostly zero inputs: its first layer runs on the
    nonzeros alone (where the processor has AVX-512), at every width the
    vector code handles in its own way (one vector, a partial one, seven
    and a part, eight, more than eight). Against the plain calls' product
    on the kept columns: the same loss and gradient up to rounding, the
    same error count; against the double-precision oracle's finite
    differences at one width; the same bits at every call; exact zero rows
    of dW_1 for blank columns; and a NaN or infinity anywhere in W_1 or x
    reaches the loss and every example, as through the full product.  */
START_TEST (test_sparse_batch)
{
    const int widths [] = { 16, 20, 100, 128, 130, 300 };
    for (size_t t = 0; t < sizeof widths / sizeof widths [0]; t++) {
        const int sizes [] = { 40, widths [t], 3 };
        fasgd_model_spec_t spec = s_spec (FASGD_ACT_RELU, FASGD_INIT_HE, 3, sizes);
        fasgd_model_t *model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 3, sizes);
        const size_t np = fasgd_model_nparams (model);
        fasgd_rng_t rng;
        fasgd_rng_seed (&rng, 53 + t, 0);
        float *theta = s_floats (np, 0);
        for (size_t i = 0; i < np; i++)
            theta [i] = (float) (0.3 * fasgd_rng_normal (&rng));
        float x [12 * 40];
        uint8_t y [12];
        s_sparse_batch (&rng, 12, 5, x, y);
        fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 12);
        fasgd_model_batch_t *batch = fasgd_model_batch_new (model, x, y, 12);
        ck_assert_ptr_nonnull (batch);
        float *g1 = s_floats (np, NAN), *g2 = s_floats (np, NAN), *g3 = s_floats (np, NAN);
        int e1 = -1, e2 = -2, e3 = -3;
        int inked = 0;
        for (int k = 0; k < 40; k++) {
            int any = 0;
            for (int i = 0; i < 12; i++)
                any |= x [i * 40 + k] != 0;
            inked += any;
        }
        double l1 = fasgd_model_gradient (model, ws, theta, x, y, 12, g1, &e1);
        ck_assert_int_eq (fasgd_model_ws_sparse (ws), 0);
        ck_assert_int_eq (fasgd_model_ws_columns (ws), inked);
        double l2 = fasgd_model_batch_gradient (model, ws, theta, batch, g2, &e2);
        ck_assert_int_eq (fasgd_model_ws_sparse (ws), s_sparse_expected ());
        ck_assert_int_eq (fasgd_model_ws_columns (ws), inked);
        ck_assert_double_eq_tol (l2, l1, 1e-6 * (1 + fabs (l1)));
        ck_assert_int_eq (e2, e1);
        for (size_t p = 0; p < np; p++)
            ck_assert_msg (fabsf (g2 [p] - g1 [p]) <= 1e-5f * (1 + fabsf (g1 [p])),
                           "width %d param %zu: %.9g sparse, %.9g dense", widths [t], p,
                           g2 [p], g1 [p]);
        for (int k = 0; k < 40; k++)
            if (k <= 5 || k >= 33)
                for (int j = 0; j < widths [t]; j++) {
                    uint32_t bits;
                    memcpy (&bits, &g2 [(size_t) k * widths [t] + j], sizeof bits);
                    ck_assert_uint_eq (bits, 0);
                }
        /*  The same bits every time, gradient and loss.  */
        ck_assert (fasgd_model_batch_gradient (model, ws, theta, batch, g3, &e3) == l2);
        ck_assert_mem_eq (g3, g2, np * sizeof (float));
        ck_assert (fasgd_model_batch_loss (model, ws, theta, batch, &e3) == l2);
        ck_assert_int_eq (e3, e2);

        if (widths [t] == 20) {
            double *td = malloc (np * sizeof *td);
            ck_assert_ptr_nonnull (td);
            for (size_t i = 0; i < np; i++)
                td [i] = theta [i];
            ck_assert_double_eq_tol (l2, s_ref_loss (&spec, td, x, y, 12, NULL), 1e-5 * (1 + fabs (l2)));
            s_check_fd (&spec, td, np, x, y, 12, g2);
            free (td);
        }

        /*  W_1 [7][j] is multiplied by example 0's input alone: a NaN or
            infinity there reaches the loss and, as through the full
            product (0 · inf is NaN), every example's logits: every
            example then counts as an error, in the plain call and the
            prepared batch alike.  */
        for (int bad = 0; bad < 2; bad++) {
            theta [7 * widths [t] + widths [t] - 1] = bad ? INFINITY : NAN;
            ck_assert (isnan (fasgd_model_batch_loss (model, ws, theta, batch, &e2)));
            ck_assert_int_eq (fasgd_model_ws_sparse (ws), 0);
            ck_assert (isnan (fasgd_model_loss (model, ws, theta, x, y, 12, &e1)));
            ck_assert_int_eq (e2, e1);
            ck_assert (isnan (fasgd_model_batch_gradient (model, ws, theta, batch, g2, NULL)));
        }
        theta [7 * widths [t] + widths [t] - 1] = 0.5f;
        /*  And in a blank column's weights.  */
        theta [2 * widths [t]] = NAN;
        ck_assert (isnan (fasgd_model_batch_loss (model, ws, theta, batch, NULL)));
        ck_assert_int_eq (fasgd_model_ws_sparse (ws), 0);
        theta [2 * widths [t]] = 0.5f;
        ck_assert (isfinite (fasgd_model_batch_loss (model, ws, theta, batch, NULL)));
        ck_assert_int_eq (fasgd_model_ws_sparse (ws), s_sparse_expected ());
        fasgd_model_batch_destroy (&batch);

        /*  An infinite input.  */
        x [3 * 40 + 20] = INFINITY;
        batch = fasgd_model_batch_new (model, x, y, 12);
        ck_assert_ptr_nonnull (batch);
        ck_assert (isnan (fasgd_model_batch_loss (model, ws, theta, batch, NULL)));
        fasgd_model_batch_destroy (&batch);

        /*  Denser than 40% in the kept columns: sgemm on them.  */
        s_sparse_batch (&rng, 12, 1, x, y);
        batch = fasgd_model_batch_new (model, x, y, 12);
        ck_assert (isfinite (fasgd_model_batch_gradient (model, ws, theta, batch, g2, NULL)));
        ck_assert_int_eq (fasgd_model_ws_sparse (ws), 0);
        ck_assert_int_eq (fasgd_model_ws_columns (ws), 27);
        fasgd_model_batch_destroy (&batch);
        free (g1);
        free (g2);
        free (g3);
        free (theta);
        fasgd_model_ws_destroy (&ws);
        fasgd_model_destroy (&model);
    }
}
END_TEST

/*  A first layer narrower than 16 never compacts: the copies would cost
    more than the multiplies they save.  */
START_TEST (test_blank_columns_narrow)
{
    const int sizes [] = { 40, 10 };
    fasgd_model_t *model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 2, sizes);
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 4);
    float *theta = s_floats (fasgd_model_nparams (model), 0.1f);
    float x [4 * 40] = { 0 };
    x [5] = 1;
    const uint8_t y [4] = { 0, 1, 2, 3 };
    ck_assert (isfinite (fasgd_model_loss (model, ws, theta, x, y, 4, NULL)));
    ck_assert_int_eq (fasgd_model_ws_columns (ws), 40);
    free (theta);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);
}
END_TEST

/*  ---- initialisation --------------------------------------------------  */

static void
s_moments (const float *v, size_t n, double *mean, double *var, double *maxabs)
{
    double s1 = 0, s2 = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        s1 += v [i];
        s2 += (double) v [i] * v [i];
        if (fabs (v [i]) > mx)
            mx = fabs (v [i]);
    }
    *mean = s1 / n;
    *var = s2 / n - *mean * *mean;
    *maxabs = mx;
}

START_TEST (test_init_statistics)
{
    const int sizes [] = { 1000, 500, 250 };
    for (int init = FASGD_INIT_HE; init <= FASGD_INIT_NORMAL; init++) {
        fasgd_model_t *model = s_model (FASGD_ACT_RELU, init, 3, sizes);
        const size_t np = fasgd_model_nparams (model);
        float *theta = s_floats (np, NAN);
        fasgd_rng_t rng;
        fasgd_rng_seed (&rng, 5, 0);
        fasgd_model_init_params (model, theta, &rng);
        for (int l = 1; l <= 2; l++) {
            const fasgd_tensor_t *w = fasgd_model_tensor (model, 2 * (l - 1));
            const fasgd_tensor_t *b = fasgd_model_tensor (model, 2 * (l - 1) + 1);
            size_t count = (size_t) w->rows * w->cols;
            double mean, var, maxabs;
            s_moments (theta + w->offset, count, &mean, &var, &maxabs);
            /*  The sample variance of m normal draws has relative
                standard error sqrt (2/m): 0.2% for w1, 0.4% for w2;
                uniform draws are tighter.  */
            if (init == FASGD_INIT_HE) {
                ck_assert_double_eq_tol (var, 2.0 / w->rows, 0.02 * 2.0 / w->rows);
                ck_assert_double_eq_tol (mean, 0, 0.01 * sqrt (2.0 / w->rows));
            }
            else if (init == FASGD_INIT_GLOROT) {
                double a = sqrt (6.0 / (w->rows + w->cols));
                ck_assert (maxabs <= (float) a);
                ck_assert (maxabs > 0.999 * a);
                ck_assert_double_eq_tol (var, a * a / 3, 0.02 * a * a / 3);
                ck_assert_double_eq_tol (mean, 0, 0.01 * a);
            }
            else {
                ck_assert_double_eq_tol (var, 1.0, 0.02);
                ck_assert_double_eq_tol (mean, 0, 0.01);
            }
            for (int j = 0; j < b->cols; j++)
                ck_assert_float_eq (theta [b->offset + j], 0.0f);
        }

        /*  Deterministic given the seed, different for another seed.  */
        float *again = s_floats (np, NAN);
        fasgd_rng_seed (&rng, 5, 0);
        fasgd_model_init_params (model, again, &rng);
        ck_assert_mem_eq (theta, again, np * sizeof (float));
        fasgd_rng_seed (&rng, 6, 0);
        fasgd_model_init_params (model, again, &rng);
        ck_assert (memcmp (theta, again, np * sizeof (float)) != 0);
        free (again);
        free (theta);
        fasgd_model_destroy (&model);
    }
}
END_TEST

/*  ---- bad input -------------------------------------------------------  */

START_TEST (test_bad_labels_and_sizes)
{
    const int sizes [] = { 5, 4, 3 };
    fasgd_model_t *model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 3, sizes);
    const size_t np = fasgd_model_nparams (model);
    float *theta = s_floats (np, 0.1f);
    float *grad = s_floats (np, 7.0f);
    float x [4 * 5] = { 0 };
    const uint8_t y [4] = { 0, 2, 3, 1 };
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, 4);
    int nerrors = -5;

    ck_assert (isnan (fasgd_model_gradient (model, ws, theta, x, y, 4, grad, &nerrors)));
    ck_assert (isnan (fasgd_model_loss (model, ws, theta, x, y, 4, &nerrors)));
    ck_assert_int_eq (nerrors, -5);
    for (size_t p = 0; p < np; p++)
        ck_assert_float_eq (grad [p], 7.0f);
    double nll = 0, error = 0;
    fasgd_model_evaluate (model, ws, theta, x, y, 4, &nll, &error);
    ck_assert (isnan (nll) && isnan (error));

    /*  The first two labels are fine.  */
    ck_assert (isfinite (fasgd_model_loss (model, ws, theta, x, y, 2, &nerrors)));

    /*  Batch sizes outside 1..max_batch.  */
    ck_assert (isnan (fasgd_model_gradient (model, ws, theta, x, y, 0, grad, NULL)));
    ck_assert (isnan (fasgd_model_gradient (model, ws, theta, x, y, 5, grad, NULL)));
    ck_assert (isnan (fasgd_model_loss (model, ws, theta, x, y, -1, NULL)));
    for (size_t p = 0; p < np; p++)
        ck_assert_float_eq (grad [p], 7.0f);
    fasgd_model_evaluate (model, ws, theta, x, y, 0, &nll, &error);
    ck_assert (isnan (nll) && isnan (error));
    free (grad);
    free (theta);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);

    /*  With more than 256 classes every uint8_t label is in range.  */
    const int wide [] = { 2, 300 };
    model = s_model (FASGD_ACT_RELU, FASGD_INIT_HE, 2, wide);
    theta = s_floats (fasgd_model_nparams (model), 0);
    ws = fasgd_model_ws_new (model, 1);
    const uint8_t top = 255;
    ck_assert_double_eq_tol (fasgd_model_loss (model, ws, theta, x, &top, 1, NULL),
                             log (300.0), 1e-6);
    free (theta);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);
}
END_TEST

/*  ---- evaluation ------------------------------------------------------  */

START_TEST (test_evaluate_chunks)
{
    const int sizes [] = { 4, 6, 3 };
    fasgd_model_t *model = s_model (FASGD_ACT_TANH, FASGD_INIT_GLOROT, 3, sizes);
    const size_t np = fasgd_model_nparams (model);
    float *theta = s_floats (np, 0);
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, 8, 0);
    fasgd_model_init_params (model, theta, &rng);
    for (size_t p = 0; p < np; p++)
        theta [p] += (float) (0.5 * fasgd_rng_normal (&rng));
    enum { N = 30, MU = 7 };
    float x [N * 4];
    uint8_t y [N];
    s_random_batch (&rng, N, 4, 3, x, y);

    /*  30 = 4 chunks of 7 and one of 2.  */
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, MU);
    double nll = 0, error = 0;
    fasgd_model_evaluate (model, ws, theta, x, y, N, &nll, &error);
    double sum = 0;
    int errors = 0;
    for (int start = 0; start < N; start += MU) {
        int chunk = N - start < MU ? N - start : MU;
        int e = -1;
        sum += fasgd_model_loss (model, ws, theta, x + start * 4, y + start, chunk, &e) * chunk;
        errors += e;
    }
    ck_assert_double_eq_tol (nll, sum / N, 1e-12);
    ck_assert_double_eq (error, (double) errors / N);
    ck_assert (errors > 0 && errors < N);

    /*  One batch of all 30 agrees up to float rounding.  */
    fasgd_model_ws_t *whole = fasgd_model_ws_new (model, N);
    int e = -1;
    double one = fasgd_model_loss (model, whole, theta, x, y, N, &e);
    ck_assert_double_eq_tol (nll, one, 1e-6);
    ck_assert_int_eq (e, errors);
    /*  Either output pointer may be NULL.  */
    double again = 0;
    fasgd_model_evaluate (model, whole, theta, x, y, N, &again, NULL);
    ck_assert_double_eq_tol (again, one, 1e-12);
    fasgd_model_evaluate (model, whole, theta, x, y, N, NULL, NULL);
    fasgd_model_ws_destroy (&whole);
    fasgd_model_ws_destroy (&ws);
    free (theta);
    fasgd_model_destroy (&model);
}
END_TEST

/*  ---- training --------------------------------------------------------  */

/*  Three Gaussian blobs in 4-d, centres 3 apart, unit-ish noise: nearly
    separable, so plain SGD must bring the loss well below log 3.  */
static void
s_blobs (fasgd_rng_t *rng, int n, float *x, uint8_t *y)
{
    for (int i = 0; i < n; i++) {
        int c = (int) fasgd_rng_below (rng, 3);
        y [i] = (uint8_t) c;
        for (int d = 0; d < 4; d++)
            x [i * 4 + d] = (float) ((d == c ? 3.0 : 0.0) + 0.6 * fasgd_rng_normal (rng));
    }
}

static void
s_train (int activation, int init, int nsizes, const int *sizes)
{
    fasgd_model_t *model = s_model (activation, init, nsizes, sizes);
    const size_t np = fasgd_model_nparams (model);
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, 2024, 3);
    float *theta = s_floats (np, 0), *grad = s_floats (np, 0);
    fasgd_model_init_params (model, theta, &rng);
    enum { NTEST = 300, MU = 16, STEPS = 400 };
    static float xt [NTEST * 4], xb [MU * 4];
    static uint8_t yt [NTEST], yb [MU];
    s_blobs (&rng, NTEST, xt, yt);
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, MU);

    double nll0, err0, nll1, err1;
    fasgd_model_evaluate (model, ws, theta, xt, yt, NTEST, &nll0, &err0);
    for (int step = 0; step < STEPS; step++) {
        s_blobs (&rng, MU, xb, yb);
        double loss = fasgd_model_gradient (model, ws, theta, xb, yb, MU, grad, NULL);
        ck_assert (isfinite (loss));
        for (size_t p = 0; p < np; p++)
            theta [p] -= 0.1f * grad [p];
    }
    fasgd_model_evaluate (model, ws, theta, xt, yt, NTEST, &nll1, &err1);
    ck_assert_msg (nll1 < 0.25 * nll0 && nll1 < 0.15, "%s, %d layers: nll %.4f -> %.4f",
                   fasgd_model_activation_name (activation), nsizes - 1, nll0, nll1);
    ck_assert_msg (err1 < 0.03, "%s, %d layers: error %.3f -> %.3f",
                   fasgd_model_activation_name (activation), nsizes - 1, err0, err1);
    fasgd_model_ws_destroy (&ws);
    free (grad);
    free (theta);
    fasgd_model_destroy (&model);
}

START_TEST (test_sgd_learns)
{
    const int mlp [] = { 4, 8, 3 };
    const int deep [] = { 4, 16, 16, 16, 3 };
    s_train (FASGD_ACT_RELU, FASGD_INIT_HE, 3, mlp);
    s_train (FASGD_ACT_TANH, FASGD_INIT_GLOROT, 3, mlp);
    s_train (FASGD_ACT_RELU, FASGD_INIT_HE, 5, deep);
    s_train (FASGD_ACT_TANH, FASGD_INIT_GLOROT, 5, deep);
}
END_TEST

static Suite *
model_suite (void)
{
    Suite *s = suite_create ("model");

    TCase *tc = tcase_create ("layout");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_default_layout);
    tcase_add_test (tc, test_deep_layout);
    tcase_add_test (tc, test_spec_validation);
    tcase_add_test (tc, test_parse_sizes_and_names);
    tcase_add_test (tc, test_workspace);
    suite_add_tcase (s, tc);

    tc = tcase_create ("gradient");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_gradient_fd);
    tcase_add_test (tc, test_gradient_fd_float);
    tcase_add_test (tc, test_zero_weights);
    tcase_add_test (tc, test_hand_cases);
    tcase_add_test (tc, test_tanh_accuracy);
    tcase_add_test (tc, test_nan_propagates);
    tcase_add_test (tc, test_bad_labels_and_sizes);
    tcase_add_test (tc, test_evaluate_chunks);
    tcase_add_test (tc, test_blank_columns);
    tcase_add_test (tc, test_blank_columns_narrow);
    tcase_add_test (tc, test_prepared_batch);
    tcase_add_test (tc, test_sparse_batch);
    suite_add_tcase (s, tc);

    tc = tcase_create ("init");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_init_statistics);
    suite_add_tcase (s, tc);

    tc = tcase_create ("training");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_sgd_learns);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (model_suite)
