/*  rules: every update rule against values worked out by hand, the ε and
    rounding edge cases of fasgd and its flush to zero, rejection of
    non-finite gradients, applying into another buffer, parameter
    validation and checkpoint state.  */
#include "floats.h"
#include "rules.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <string.h>

/*  Float32 arithmetic against double hand values: a few ulps of relative
    error accumulate over three applies.  */
#define ASSERT_NEAR(got, want)                                              \
    ck_assert_msg (fabs ((double) (got) - (double) (want))                  \
                   <= 1e-5 * fabs ((double) (want)) + 1e-9,                 \
                   "%s = %.9g, want %.9g", #got, (double) (got), (double) (want))

static fasgd_rule_params_t
s_params (int kind, double lr)
{
    fasgd_rule_params_t p;
    fasgd_rule_params_default (&p);
    p.kind = kind;
    p.lr = lr;
    return p;
}

static fasgd_rule_t *
s_rule (const fasgd_rule_params_t *p, size_t n)
{
    char err [256] = "";
    fasgd_rule_t *r = fasgd_rule_new (p, n, err, sizeof err);
    ck_assert_msg (r != NULL, "fasgd_rule_new: %s", err);
    return r;
}

/*  The rule's state blob in a fresh allocation (the caller frees it).  */
static void *
s_blob (const fasgd_rule_t *r, size_t *len)
{
    *len = fasgd_rule_state_size (r);
    void *b = malloc (*len);
    ck_assert_ptr_nonnull (b);
    fasgd_rule_state_get (r, b);
    return b;
}

/*  ---- names, defaults, validation ------------------------------------  */

START_TEST (test_kind_names)
{
    const char *names [] = { "asgd", "sasgd", "softsync", "fasgd", "dcasgd", "gap-aware" };
    for (int k = 0; k < 6; k++) {
        ck_assert_str_eq (fasgd_rule_kind_name (k), names [k]);
        ck_assert_int_eq (fasgd_rule_kind_parse (names [k]), k);
    }
    ck_assert_int_eq (FASGD_RULE_GAPAWARE, 5);
    ck_assert_str_eq (fasgd_rule_kind_name (6), "?");
    ck_assert_str_eq (fasgd_rule_kind_name (-1), "?");
    ck_assert_int_eq (fasgd_rule_kind_parse ("gap_aware"), -1);
    ck_assert_int_eq (fasgd_rule_kind_parse ("FASGD"), -1);
    ck_assert_int_eq (fasgd_rule_kind_parse (""), -1);
    ck_assert_int_eq (fasgd_rule_kind_parse (NULL), -1);
}
END_TEST

START_TEST (test_defaults)
{
    fasgd_rule_params_t p;
    memset (&p, 0xff, sizeof p);
    fasgd_rule_params_default (&p);
    ck_assert_int_eq (p.kind, FASGD_RULE_FASGD);
    ck_assert_double_eq (p.lr, 0.005);
    ck_assert_int_eq (p.sasgd_form, FASGD_SASGD_DIV_TAU);
    ck_assert_int_eq (p.softsync_group, 1);
    ck_assert_int_eq (p.statistic, FASGD_STAT_STD);
    ck_assert_double_eq (p.gamma, 0.9);
    ck_assert_double_eq (p.beta, 0.9);
    ck_assert_double_eq (p.epsilon, 1e-4);
    ck_assert_double_eq (p.abs_decay, 0.9);
    ck_assert_double_eq (p.abs_floor, 0.001);
    ck_assert_int_eq (p.staleness, FASGD_STALENESS_DIVIDE);
    ck_assert_double_eq (p.dc_lambda, 0.04);
    ck_assert_int_eq (p.dc_adaptive, 0);
    ck_assert_double_eq (p.dc_momentum, 0.95);
    ck_assert_double_eq (p.gap_decay, 0.9);
    ck_assert_int_eq (fasgd_rule_params_check (&p, NULL, 0), 0);

    fasgd_rule_t *r = s_rule (&p, 5);
    ck_assert_uint_eq (fasgd_rule_size (r), 5);
    ck_assert_int_eq (fasgd_rule_params (r)->kind, FASGD_RULE_FASGD);
    ck_assert_double_eq (fasgd_rule_params (r)->lr, 0.005);
    fasgd_rule_destroy (&r);
    ck_assert_ptr_null (r);
    fasgd_rule_destroy (&r);            /* a pointer to NULL */
    fasgd_rule_destroy (NULL);
}
END_TEST

typedef struct {
    const char *field;                  /* expected at the start of the message */
    void (*mutate) (fasgd_rule_params_t *p);
} s_bad_t;

static void s_lr_zero (fasgd_rule_params_t *p)       { p->lr = 0; }
static void s_lr_neg (fasgd_rule_params_t *p)        { p->lr = -1; }
static void s_lr_nan (fasgd_rule_params_t *p)        { p->lr = NAN; }
static void s_lr_inf (fasgd_rule_params_t *p)        { p->lr = INFINITY; }
static void s_lr_huge (fasgd_rule_params_t *p)       { p->lr = 1e39; }   /* Inf as float */
static void s_eps_zero (fasgd_rule_params_t *p)      { p->epsilon = 0; }
static void s_eps_neg (fasgd_rule_params_t *p)       { p->epsilon = -1e-4; }
static void s_eps_tiny (fasgd_rule_params_t *p)      { p->epsilon = 1e-50; } /* 0 as float */
static void s_eps_nan (fasgd_rule_params_t *p)       { p->epsilon = NAN; }
static void s_gamma_one (fasgd_rule_params_t *p)     { p->gamma = 1.0; }
static void s_gamma_neg (fasgd_rule_params_t *p)     { p->gamma = -0.1; }
static void s_gamma_nan (fasgd_rule_params_t *p)     { p->gamma = NAN; }
static void s_beta_one (fasgd_rule_params_t *p)      { p->beta = 1.0; }
static void s_beta_big (fasgd_rule_params_t *p)      { p->beta = 1.5; }
static void s_absdec_one (fasgd_rule_params_t *p)    { p->abs_decay = 1.0; }
static void s_absfloor_zero (fasgd_rule_params_t *p) { p->abs_floor = 0; }
static void s_dc_neg (fasgd_rule_params_t *p)        { p->dc_lambda = -0.04; }
static void s_dc_nan (fasgd_rule_params_t *p)        { p->dc_lambda = NAN; }
static void s_dcm_one (fasgd_rule_params_t *p)       { p->dc_momentum = 1.0; }
static void s_dcm_nan (fasgd_rule_params_t *p)       { p->dc_momentum = NAN; }
static void s_dca_bad (fasgd_rule_params_t *p)       { p->dc_adaptive = 2; }
static void s_stale_bad (fasgd_rule_params_t *p)     { p->staleness = 2; }
static void s_gap_one (fasgd_rule_params_t *p)       { p->gap_decay = 1.0; }
static void s_group_zero (fasgd_rule_params_t *p)    { p->softsync_group = 0; }
static void s_group_neg (fasgd_rule_params_t *p)     { p->softsync_group = -3; }
static void s_group_big (fasgd_rule_params_t *p)     { p->softsync_group = FASGD_RULE_GROUP_MAX + 1; }
static void s_kind_big (fasgd_rule_params_t *p)      { p->kind = 6; }
static void s_kind_neg (fasgd_rule_params_t *p)      { p->kind = -1; }
static void s_form_bad (fasgd_rule_params_t *p)      { p->sasgd_form = 2; }
static void s_stat_bad (fasgd_rule_params_t *p)      { p->statistic = 2; }

START_TEST (test_validation)
{
    const s_bad_t bad [] = {
        { "lr must be > 0", s_lr_zero }, { "lr must be > 0", s_lr_neg },
        { "lr must be > 0", s_lr_nan }, { "lr must be > 0", s_lr_inf },
        { "lr must be > 0", s_lr_huge },
        { "epsilon must be > 0", s_eps_zero }, { "epsilon must be > 0", s_eps_neg },
        { "epsilon must be > 0", s_eps_tiny }, { "epsilon must be > 0", s_eps_nan },
        { "gamma must be in [0, 1)", s_gamma_one }, { "gamma must be in [0, 1)", s_gamma_neg },
        { "gamma must be in [0, 1)", s_gamma_nan },
        { "beta must be in [0, 1)", s_beta_one }, { "beta must be in [0, 1)", s_beta_big },
        { "abs decay must be in [0, 1)", s_absdec_one },
        { "abs floor must be > 0", s_absfloor_zero },
        { "dc lambda must be >= 0", s_dc_neg }, { "dc lambda must be >= 0", s_dc_nan },
        { "dc momentum must be in [0, 1)", s_dcm_one }, { "dc momentum must be in [0, 1)", s_dcm_nan },
        { "dc adaptive must be 0 or 1 (got 2)", s_dca_bad },
        { "unknown fasgd staleness 2", s_stale_bad },
        { "gap decay must be in [0, 1)", s_gap_one },
        { "softsync group must be in [1, 16777216]", s_group_zero },
        { "softsync group must be in [1, 16777216]", s_group_neg },
        { "softsync group must be in [1, 16777216]", s_group_big },
        { "unknown rule kind 6", s_kind_big }, { "unknown rule kind -1", s_kind_neg },
        { "unknown sasgd form 2", s_form_bad }, { "unknown fasgd statistic 2", s_stat_bad },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        /*  Every field is checked whatever the kind: asgd with a bad γ too.  */
        for (int kind = FASGD_RULE_ASGD; kind <= FASGD_RULE_GAPAWARE; kind++) {
            fasgd_rule_params_t p = s_params (kind, 0.01);
            bad [i].mutate (&p);
            char err [256] = "";
            ck_assert_ptr_null (fasgd_rule_new (&p, 4, err, sizeof err));
            ck_assert_msg (strncmp (err, bad [i].field, strlen (bad [i].field)) == 0,
                           "case %zu: \"%s\" does not start with \"%s\"", i, err, bad [i].field);
            ck_assert_int_eq (fasgd_rule_params_check (&p, NULL, 0), -1);
            ck_assert_ptr_null (fasgd_rule_new (&p, 4, NULL, 0));   /* err is optional */
        }
    }
    /*  The message carries the offending value.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_ASGD, -1);
    char err [256];
    ck_assert_ptr_null (fasgd_rule_new (&p, 4, err, sizeof err));
    ck_assert_str_eq (err, "lr must be > 0 and finite (got -1)");
    /*  A short buffer truncates instead of overflowing.  */
    char tiny [6];
    ck_assert_ptr_null (fasgd_rule_new (&p, 4, tiny, sizeof tiny));
    ck_assert_str_eq (tiny, "lr mu");
    /*  No parameters.  */
    p = s_params (FASGD_RULE_ASGD, 0.01);
    ck_assert_ptr_null (fasgd_rule_new (&p, 0, err, sizeof err));
    ck_assert_str_eq (err, "a rule needs at least one parameter (got 0)");
    /*  The edges that are valid.  */
    p = s_params (FASGD_RULE_SOFTSYNC, 0.01);
    p.gamma = p.beta = p.abs_decay = p.gap_decay = 0.0;
    p.dc_lambda = 0.0;
    p.softsync_group = FASGD_RULE_GROUP_MAX;
    fasgd_rule_t *r = s_rule (&p, 1);
    fasgd_rule_destroy (&r);
}
END_TEST

/*  ---- asgd, sasgd -----------------------------------------------------  */

START_TEST (test_asgd)
{
    /*  α = 0.5; every value below is exact in binary.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_ASGD, 0.5);
    fasgd_rule_t *r = s_rule (&p, 4);
    ck_assert_int_eq (fasgd_rule_needs_theta_used (r), 0);
    float theta [4] = { 1, 2, 3, 4 };
    /*  θ − 0.5·g = {1−0.25, 2+0.5, 3−1, 4−0}  */
    const float g1 [4] = { 0.5f, -1, 2, 0 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 0, NULL), 1);
    const float want1 [4] = { 0.75f, 2.5f, 2, 4 };
    ck_assert_mem_eq (theta, want1, sizeof theta);
    /*  τ = 5 does not matter: {0.75−0.5, 2.5−0.5, 2+1, 4−0.125}  */
    const float g2 [4] = { 1, 1, -2, 0.25f };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, 5, NULL), 1);
    const float want2 [4] = { 0.25f, 2, 3, 3.875f };
    ck_assert_mem_eq (theta, want2, sizeof theta);
    ck_assert_double_eq (fasgd_rule_vbar (r), 1.0);
    ck_assert_uint_eq (fasgd_rule_pending (r), 0);
    fasgd_rule_destroy (&r);
}
END_TEST

START_TEST (test_sasgd_div_tau)
{
    /*  α(τ) = α/τ, α at τ = 0; α = 0.75.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_SASGD, 0.75);
    fasgd_rule_t *r = s_rule (&p, 3);
    float theta [3] = { 1, 1, 1 };
    /*  τ = 0: α(0) = 0.75: {1−0.75, 1−1.5, 1+0.75}  */
    const float g1 [3] = { 1, 2, -1 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 0, NULL), 1);
    const float want1 [3] = { 0.25f, -0.5f, 1.75f };
    ck_assert_mem_eq (theta, want1, sizeof theta);
    /*  τ = 3: α(3) = 0.25: {0.25−0.5, −0.5−0.25, 1.75−0.125}  */
    const float g2 [3] = { 2, 1, 0.5f };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, 3, NULL), 1);
    const float want2 [3] = { -0.25f, -0.75f, 1.625f };
    ck_assert_mem_eq (theta, want2, sizeof theta);
    /*  τ = 1: α(1) = 0.75 = α(0): {−0.25−0.75, −0.75, 1.625+1.5}  */
    const float g3 [3] = { 1, 0, -2 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g3, 1, NULL), 1);
    const float want3 [3] = { -1, -0.75f, 3.125f };
    ck_assert_mem_eq (theta, want3, sizeof theta);
    fasgd_rule_destroy (&r);
}
END_TEST

START_TEST (test_sasgd_plus_one)
{
    /*  α(τ) = α/(τ+1); α = 0.75.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_SASGD, 0.75);
    p.sasgd_form = FASGD_SASGD_PLUS_ONE;
    fasgd_rule_t *r = s_rule (&p, 3);
    float theta [3] = { 1, 1, 1 };
    /*  τ = 0: 0.75/1 = 0.75: {1−0.75, 1−1.5, 1+0.75}  */
    const float g1 [3] = { 1, 2, -1 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 0, NULL), 1);
    const float want1 [3] = { 0.25f, -0.5f, 1.75f };
    ck_assert_mem_eq (theta, want1, sizeof theta);
    /*  τ = 2: 0.75/3 = 0.25 (div-tau would take 0.375):
        {0.25−0.5, −0.5−0.25, 1.75−0.125}  */
    const float g2 [3] = { 2, 1, 0.5f };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, 2, NULL), 1);
    const float want2 [3] = { -0.25f, -0.75f, 1.625f };
    ck_assert_mem_eq (theta, want2, sizeof theta);
    /*  τ = 5: 0.75/6 = 0.125: {−0.25−0.5, −0.75−1, 1.625+1}  */
    const float g3 [3] = { 4, 8, -8 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g3, 5, NULL), 1);
    const float want3 [3] = { -0.75f, -1.75f, 2.625f };
    ck_assert_mem_eq (theta, want3, sizeof theta);
    /*  τ+1 would wrap to 0 in uint64: α/(2^64) is a vanishing step, not
        an infinite one.  */
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g3, UINT64_MAX, NULL), 1);
    ck_assert_mem_eq (theta, want3, sizeof theta);
    fasgd_rule_destroy (&r);
}
END_TEST

/*  ---- softsync --------------------------------------------------------  */

START_TEST (test_softsync_group1_is_sasgd)
{
    /*  c = 1 with div-tau is sasgd, bit for bit, on unround numbers.  */
    const size_t n = 11;
    fasgd_rule_params_t ps = s_params (FASGD_RULE_SASGD, 0.013);
    fasgd_rule_params_t pc = s_params (FASGD_RULE_SOFTSYNC, 0.013);
    pc.softsync_group = 1;
    fasgd_rule_t *rs = s_rule (&ps, n), *rc = s_rule (&pc, n);
    float ts [11], tc [11], g [11];
    for (size_t i = 0; i < n; i++)
        ts [i] = tc [i] = 0.1f * (float) i - 0.37f;
    const uint64_t taus [] = { 0, 1, 3, 7, 2 };
    for (int s = 0; s < 5; s++) {
        for (size_t i = 0; i < n; i++)
            g [i] = 0.77f * (float) ((i * 7 + (size_t) s * 3) % 11) - 3.3f;
        ck_assert_int_eq (fasgd_rule_apply (rs, ts, g, taus [s], NULL), 1);
        ck_assert_int_eq (fasgd_rule_apply (rc, tc, g, taus [s], NULL), 1);
        ck_assert_mem_eq (ts, tc, sizeof ts);
        ck_assert_uint_eq (fasgd_rule_pending (rc), 0);
    }
    fasgd_rule_destroy (&rs);
    fasgd_rule_destroy (&rc);
}
END_TEST

START_TEST (test_softsync_group3)
{
    /*  c = 3, div-tau, α = 0.75.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_SOFTSYNC, 0.75);
    p.softsync_group = 3;
    fasgd_rule_t *r = s_rule (&p, 3);
    float theta [3] = { 1, 2, 3 };
    const float start [3] = { 1, 2, 3 };
    /*  τ = 0, α(0) = 0.75: s = 0.75·{3, 0, 3} = {2.25, 0, 2.25}; buffered.  */
    const float g1 [3] = { 3, 0, 3 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 0, NULL), 0);
    ck_assert_mem_eq (theta, start, sizeof theta);
    ck_assert_uint_eq (fasgd_rule_pending (r), 1);
    /*  τ = 3, α(3) = 0.25: s = {2.25+0.25, 0+0.25, 2.25+0.25} = {2.5, 0.25, 2.5}.  */
    const float g2 [3] = { 1, 1, 1 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, 3, NULL), 0);
    ck_assert_mem_eq (theta, start, sizeof theta);
    ck_assert_uint_eq (fasgd_rule_pending (r), 2);
    /*  τ = 1, α(1) = 0.75: s = {2.5+0.375, 0.25+0.75, 2.5−1.875}
        = {2.875, 1, 0.625}; θ − s/3 = {1−0.958333, 2−0.333333, 3−0.208333}.  */
    const float g3 [3] = { 0.5f, 1, -2.5f };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g3, 1, NULL), 1);
    ck_assert_uint_eq (fasgd_rule_pending (r), 0);
    ASSERT_NEAR (theta [0], 0.0416666667);
    ASSERT_NEAR (theta [1], 1.6666666667);
    ASSERT_NEAR (theta [2], 2.7916666667);
    /*  And bit for bit in the documented float order, θ −= s / c.  */
    ck_assert_float_eq (theta [0], 1.0f - 2.875f / 3.0f);
    ck_assert_float_eq (theta [1], 2.0f - 1.0f / 3.0f);
    ck_assert_float_eq (theta [2], 3.0f - 0.625f / 3.0f);
    ck_assert_double_eq (fasgd_rule_vbar (r), 1.0);
    /*  The next group starts from an empty sum: s = 0.75·{1.5, 0, 0},
        then two zero gradients; θ₀ −= 1.125/3 = 0.375 and θ₁, θ₂ do not
        see the previous group's {1, 0.625} again.  */
    float after [3];
    memcpy (after, theta, sizeof after);
    const float g4 [3] = { 1.5f, 0, 0 }, zero [3] = { 0, 0, 0 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g4, 0, NULL), 0);
    ck_assert_int_eq (fasgd_rule_apply (r, theta, zero, 1, NULL), 0);
    ck_assert_mem_eq (theta, after, sizeof theta);
    ck_assert_int_eq (fasgd_rule_apply (r, theta, zero, 2, NULL), 1);
    ASSERT_NEAR (theta [0], 0.0416666667 - 0.375);
    ck_assert_float_eq (theta [1], after [1]);
    ck_assert_float_eq (theta [2], after [2]);
    fasgd_rule_destroy (&r);
}
END_TEST

START_TEST (test_softsync_plus_one)
{
    /*  c = 2, plus-one, α = 0.75: τ = 0 → 0.75, τ = 2 → 0.25.
        s = 0.75·1 + 0.25·2 = 1.25; θ = 0 − 1.25/2.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_SOFTSYNC, 0.75);
    p.softsync_group = 2;
    p.sasgd_form = FASGD_SASGD_PLUS_ONE;
    fasgd_rule_t *r = s_rule (&p, 1);
    float theta [1] = { 0 };
    const float g1 [1] = { 1 }, g2 [1] = { 2 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 0, NULL), 0);
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, 2, NULL), 1);
    ck_assert_float_eq (theta [0], -0.625f);
    fasgd_rule_destroy (&r);
}
END_TEST

/*  ---- fasgd std --------------------------------------------------------  */

START_TEST (test_fasgd_std)
{
    /*  γ = β = 0.9, ε = 1e-4, α = 0.1; n, b, v start at 0.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_FASGD, 0.1);
    fasgd_rule_t *r = s_rule (&p, 3);
    ck_assert_double_eq (fasgd_rule_vbar (r), 0.0);      /* before any gradient */
    float theta [3] = { 0, 0, 0 };

    /*  Apply 1, g = {1, −2, 0}, τ = 0 → α/max(τ,1) = 0.1.
        θ₀: n = 0.1·1 = 0.1, b = 0.1, n−b² = 0.09, σ = sqrt(0.0901) =
            0.3001666204, v = 0.1/σ = 0.3331483023, θ = −0.1·v·1 = −0.0333148302
        θ₁: n = 0.4, b = −0.2, n−b² = 0.36, σ = sqrt(0.3601) = 0.6000833275,
            v = 0.1666435233, θ = −0.1·v·(−2) = 0.0333287047
        θ₂: n = b = 0, σ = sqrt(ε) = 0.01, v = 0.1/0.01 = 10, θ = 0
        v̄ = (0.3001666204 + 0.6000833275 + 0.01)/3 = 0.3034166493  */
    const float g1 [3] = { 1, -2, 0 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 0, NULL), 1);
    ASSERT_NEAR (theta [0], -0.0333148302);
    ASSERT_NEAR (theta [1], 0.0333287047);
    ck_assert_float_eq (theta [2], 0.0f);
    ASSERT_NEAR (fasgd_rule_vbar (r), 0.3034166493);

    /*  Apply 2, g = {1, 0, 0.5}, τ = 4 → 0.1/4 = 0.025; state carried over.
        θ₀: n = 0.9·0.1 + 0.1·1 = 0.19, b = 0.9·0.1 + 0.1 = 0.19,
            n−b² = 0.1539, σ = sqrt(0.154) = 0.3924283374,
            v = 0.9·0.3331483023 + 0.1/σ = 0.5546570678,
            θ = −0.0333148302 − 0.025·v = −0.0471812569
        θ₁: g = 0: n = 0.36, b = −0.18, n−b² = 0.3276, σ = 0.5724508713,
            v = 0.9·0.1666435233 + 0.1/σ = 0.3246666508, θ unchanged
        θ₂: the first non-zero gradient: n = 0.025, b = 0.05, n−b² = 0.0225,
            σ = sqrt(0.0226) = 0.1503329638, v = 0.9·10 + 0.1/σ = 9.665190105,
            θ = −0.025·v·0.5 = −0.1208148763
        v̄ = (0.3924283374 + 0.5724508713 + 0.1503329638)/3 = 0.3717373908  */
    const float g2 [3] = { 1, 0, 0.5f };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, 4, NULL), 1);
    ASSERT_NEAR (theta [0], -0.0471812569);
    ASSERT_NEAR (theta [1], 0.0333287047);
    ASSERT_NEAR (theta [2], -0.1208148763);
    ASSERT_NEAR (fasgd_rule_vbar (r), 0.3717373908);

    /*  Apply 3, g = {−1, 3, 0.5}, τ = 1 → 0.1.
        θ₀: n = 0.271, b = 0.071, n−b² = 0.265959, σ = 0.5158090732,
            v = 0.6930615452, θ = −0.0471812569 + 0.1·v = 0.0221248976
        θ₁: n = 1.224, b = 0.138, n−b² = 1.204956, σ = 1.097750427,
            v = 0.3832953727, θ = 0.0333287047 − 0.3·v = −0.0816599072
        θ₂: n = 0.0475, b = 0.095, n−b² = 0.038475, σ = 0.1964051934,
            v = 9.207822601, θ = −0.1208148763 − 0.05·v = −0.5812060063
        v̄ = 0.6033215645  */
    const float g3 [3] = { -1, 3, 0.5f };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g3, 1, NULL), 1);
    ASSERT_NEAR (theta [0], 0.0221248976);
    ASSERT_NEAR (theta [1], -0.0816599072);
    ASSERT_NEAR (theta [2], -0.5812060063);
    ASSERT_NEAR (fasgd_rule_vbar (r), 0.6033215645);
    fasgd_rule_destroy (&r);
}
END_TEST

START_TEST (test_fasgd_std_epsilon_bound)
{
    /*  ε = 1e-4, α = 0.1, γ = β = 0.9, one parameter.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_FASGD, 0.1);
    const float zero [1] = { 0 }, small [1] = { 0.001f };

    /*  First-ever gradient g = 0.001: v = (1−β)/σ with σ ≥ sqrt(ε), so the
        step is at most α·(1−β)/sqrt(ε)·|g| = 0.001.
        n = 1e-7, b = 1e-4, n−b² = 9e-8, σ = sqrt(1.0009e-4) = 0.010004499,
        v = 0.1/σ = 9.995503035, step = 0.1·v·0.001 = 0.000999550304.  */
    fasgd_rule_t *r = s_rule (&p, 1);
    float theta [1] = { 0 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, small, 0, NULL), 1);
    ASSERT_NEAR (-theta [0], 0.000999550304);
    ck_assert (-theta [0] <= 0.1 * 0.1 / 0.01 * 0.001);
    fasgd_rule_destroy (&r);

    /*  Five zero gradients: σ = sqrt(0 + ε) exactly, v = (1 − 0.9⁵)/0.01 =
        40.951, θ does not move. Then g = 0.001: σ = 0.010004499,
        v = 0.9·40.951 + 0.1/σ = 46.85140304, step = 0.1·v·0.001 =
        0.0046851403. The moving average v carries the 1/sqrt(ε) of the
        zero gradients, so the (1−β) factor of the first-ever bound no
        longer applies: the bound is α·|g|/sqrt(ε) = 0.01 (v ≤ 1/sqrt(ε)).  */
    r = s_rule (&p, 1);
    theta [0] = 0;
    for (int k = 0; k < 5; k++) {
        ck_assert_int_eq (fasgd_rule_apply (r, theta, zero, 0, NULL), 1);
        ck_assert_double_eq (fasgd_rule_vbar (r), (double) sqrtf (1e-4f));
        ck_assert_float_eq (theta [0], 0.0f);
    }
    ck_assert_int_eq (fasgd_rule_apply (r, theta, small, 0, NULL), 1);
    ASSERT_NEAR (-theta [0], 0.0046851403);
    ck_assert (-theta [0] <= 0.1 * 0.001 / 0.01);
    ck_assert (-theta [0] > 0.1 * 0.1 * 0.001 / 0.01);
    fasgd_rule_destroy (&r);

    /*  After many zeros v → 1/sqrt(ε) = 100; a large gradient g = 5:
        σ = sqrt(0.09·25 + ε) ≈ 1.5, step ≈ 0.1·(0.9·100 + 0.1/1.5)·5
        ≈ 45.03 < α·|g|/sqrt(ε) = 50.  */
    r = s_rule (&p, 1);
    theta [0] = 0;
    for (int k = 0; k < 300; k++)
        fasgd_rule_apply (r, theta, zero, 0, NULL);
    const float big [1] = { 5 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, big, 0, NULL), 1);
    ck_assert (-theta [0] <= 0.1 * 5 / 0.01);
    ck_assert_double_eq_tol (-theta [0], 0.1 * (90.0 + 0.1 / sqrt (2.25 + 1e-4)) * 5, 1e-3);
    fasgd_rule_destroy (&r);
}
END_TEST

START_TEST (test_fasgd_std_clamp)
{
    /*  A constant gradient 777: exactly n − b² = (1−γᵏ)γᵏ·g² > 0, but in
        float32 n and b² round apart, and at k = 139 n − b² = −0.125,
        far below −ε, so sqrt(n − b² + ε) would be NaN without the clamp.
        A float replica of the recurrence finds those steps; there σ must
        be exactly sqrt(ε). Nine parameters: eight go through the vector
        span, the ninth through the scalar tail, and they must agree.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_FASGD, 1e-3);
    enum { N = 9 };
    fasgd_rule_t *r = s_rule (&p, N);
    float theta [N] = { 0 }, g [N];
    for (int i = 0; i < N; i++)
        g [i] = 777.0f;
    const float gam = 0.9f, omg = (float) (1.0 - 0.9), eps = 1e-4f;
    float n = 0, b = 0;
    int negatives = 0;
    for (int k = 1; k <= 200; k++) {
        volatile float gg = 777.0f * 777.0f, t1 = gam * n, t2 = omg * gg;
        n = t1 + t2;
        volatile float u1 = gam * b, u2 = omg * 777.0f;
        b = u1 + u2;
        volatile float bb = b * b;
        float var = n - bb;
        ck_assert_int_eq (fasgd_rule_apply (r, theta, g, 0, NULL), 1);
        float sigma = var > 0 ? sqrtf (var + eps) : sqrtf (eps);
        if (var < -eps)
            negatives++;
        double vbar = fasgd_rule_vbar (r);
        ck_assert (isfinite (vbar) && vbar >= (double) sqrtf (eps) * (1 - 1e-6));
#ifndef FP_FAST_FMAF
        /*  Where the compiler may fuse a·b + c (FMA targets) the library's
            rounding differs from the replica's; elsewhere it is the same.  */
        ck_assert_double_eq_tol (vbar, (double) sigma, 1e-12);
#else
        (void) sigma;
#endif
        ck_assert (isfinite (theta [0]));
        ck_assert_mem_eq (&theta [0], &theta [N - 1], sizeof (float));
    }
    ck_assert_int_gt (negatives, 0);
    fasgd_rule_destroy (&r);
}
END_TEST

/*  ---- fasgd abs --------------------------------------------------------  */

START_TEST (test_fasgd_abs)
{
    /*  m ← 0.9m + 0.1|g|, θ ← θ − α·g/((τ+1)(m + 0.001)); α = 0.1.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_FASGD, 0.1);
    p.statistic = FASGD_STAT_ABS;
    fasgd_rule_t *r = s_rule (&p, 3);
    ck_assert_double_eq (fasgd_rule_vbar (r), 0.0);
    float theta [3] = { 0, 0, 0 };
    /*  g = {1, −0.5, 0}, τ = 0: m = {0.1, 0.05, 0};
        θ = {−0.1/0.101, 0.05/0.051, 0} = {−0.9900990099, 0.9803921569, 0};
        v̄ = (0.1 + 0.05 + 0)/3 = 0.05  */
    const float g1 [3] = { 1, -0.5f, 0 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 0, NULL), 1);
    ASSERT_NEAR (theta [0], -0.9900990099);
    ASSERT_NEAR (theta [1], 0.9803921569);
    ck_assert_float_eq (theta [2], 0.0f);
    ASSERT_NEAR (fasgd_rule_vbar (r), 0.05);
    /*  g = {1, 0, 2}, τ = 3 → α/(τ+1) = 0.025: m = {0.19, 0.045, 0.2};
        θ₀ = −0.9900990099 − 0.025/0.191 = −1.120989062
        θ₁ unchanged; θ₂ = −0.025·2/0.201 = −0.2487562189
        v̄ = (0.19 + 0.045 + 0.2)/3 = 0.145  */
    const float g2 [3] = { 1, 0, 2 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, 3, NULL), 1);
    ASSERT_NEAR (theta [0], -1.120989062);
    ASSERT_NEAR (theta [1], 0.9803921569);
    ASSERT_NEAR (theta [2], -0.2487562189);
    ASSERT_NEAR (fasgd_rule_vbar (r), 0.145);
    /*  τ+1 must not wrap to 0 at τ = 2^64 − 1.  */
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, UINT64_MAX, NULL), 1);
    ck_assert (isfinite (theta [0]) && isfinite (theta [2]));
    ASSERT_NEAR (theta [0], -1.120989062);
    fasgd_rule_destroy (&r);
}
END_TEST

/*  ---- fasgd: moving averages flushed to zero ---------------------------  */

/*  Float k·n + i of the rule's state blob (vector k of nvec, parameter i).  */
static size_t
s_state_offset (const fasgd_rule_t *r, int nvec, int k, size_t i)
{
    size_t n = fasgd_rule_size (r);
    return fasgd_rule_state_size (r) - (size_t) nvec * n * sizeof (float)
           + ((size_t) k * n + i) * sizeof (float);
}

static float
s_state_get (const fasgd_rule_t *r, int nvec, int k, size_t i)
{
    size_t len;
    unsigned char *b = s_blob (r, &len);
    float x;
    memcpy (&x, b + s_state_offset (r, nvec, k, i), sizeof x);
    free (b);
    return x;
}

static void
s_state_put (fasgd_rule_t *r, int nvec, int k, size_t i, float x)
{
    size_t len;
    unsigned char *b = s_blob (r, &len);
    memcpy (b + s_state_offset (r, nvec, k, i), &x, sizeof x);
    ck_assert_int_eq (fasgd_rule_state_set (r, b, len), 0);
    free (b);
}

/*  Bitwise +0.0f (not −0, not a subnormal).  */
static int
s_is_plus_zero (float x)
{
    uint32_t bits;
    memcpy (&bits, &x, sizeof bits);
    return bits == 0;
}

START_TEST (test_fasgd_flush_to_zero)
{
    /*  n and b just above FLT_MIN: one more zero gradient takes them to
        0.9·1.05·FLT_MIN, a subnormal, which the rule stores as +0; n at
        2·FLT_MIN decays to a normal 1.8·FLT_MIN and is kept. Over S_N
        parameters, so the vector spans and the scalar tail both flush.  */
    enum { N = 19 };
    fasgd_rule_params_t p = s_params (FASGD_RULE_FASGD, 0.1);
    fasgd_rule_t *r = s_rule (&p, N);
    const float low = 1.05f * FLT_MIN, high = 2.0f * FLT_MIN;
    for (size_t i = 0; i < N; i++) {
        s_state_put (r, 3, 0, i, i % 3 == 2 ? high : low);     /* n */
        s_state_put (r, 3, 1, i, i % 2 ? -low : low);          /* b */
        s_state_put (r, 3, 2, i, 3.0f);                        /* v */
    }
    float theta [N], before [N];
    const float zero [N] = { 0 };
    for (size_t i = 0; i < N; i++)
        theta [i] = before [i] = 0.25f * (float) i - 1;
    ck_assert_int_eq (fasgd_rule_apply (r, theta, zero, 0, NULL), 1);
    volatile float kept = 0.9f, h = high;
    kept = kept * h;                                            /* γ·n: the rule's product */
    ck_assert (kept >= FLT_MIN);
    for (size_t i = 0; i < N; i++) {
        float n = s_state_get (r, 3, 0, i), b = s_state_get (r, 3, 1, i);
        if (i % 3 == 2)
            ck_assert_float_eq (n, kept);
        else
            ck_assert_msg (s_is_plus_zero (n), "n [%zu] = %a, want +0", i, (double) n);
        ck_assert_msg (s_is_plus_zero (b), "b [%zu] = %a, want +0", i, (double) b);
    }
    /*  g = 0 moves nothing; every σ is sqrt(ε) exactly.  */
    ck_assert_mem_eq (theta, before, sizeof theta);
    ck_assert_double_eq (fasgd_rule_vbar (r), (double) sqrtf (1e-4f));
    fasgd_rule_destroy (&r);

    /*  abs: m = 0.9·1.05·FLT_MIN becomes +0 too.  */
    p.statistic = FASGD_STAT_ABS;
    r = s_rule (&p, N);
    for (size_t i = 0; i < N; i++)
        s_state_put (r, 1, 0, i, i % 3 == 2 ? high : low);
    ck_assert_int_eq (fasgd_rule_apply (r, theta, zero, 0, NULL), 1);
    for (size_t i = 0; i < N; i++) {
        float m = s_state_get (r, 1, 0, i);
        if (i % 3 == 2)
            ck_assert_float_eq (m, kept);
        else
            ck_assert_msg (s_is_plus_zero (m), "m [%zu] = %a, want +0", i, (double) m);
    }
    ck_assert_mem_eq (theta, before, sizeof theta);
    fasgd_rule_destroy (&r);
}
END_TEST

START_TEST (test_fasgd_flush_invisible)
{
    /*  One gradient and then only zeros, the dead-unit pattern: without
        the flush n and b would sink into the subnormals and stick there
        (0.9·x rounds back to x for the smallest). A float replica of the
        recurrence without the flush shows that they do, and that θ and v̄
        are nevertheless the same bits with it, also once a gradient comes
        back.  */
    const float gam = 0.9f, omg = (float) (1.0 - 0.9), eps = 1e-4f;
    const float bet = 0.9f, omb = (float) (1.0 - 0.9), step = 0.01f;
    fasgd_rule_params_t p = s_params (FASGD_RULE_FASGD, 0.01);
    fasgd_rule_t *r = s_rule (&p, 1);
    float theta [1] = { 0.5f };
    volatile float n = 0, b = 0, v = 0, th = 0.5f;
    for (int k = 0; k < 1500; k++) {
        float gk = k == 0 ? 1e-3f : k == 1499 ? 0.5f : 0.0f;
        volatile float t1 = gk * gk, t2 = gam * n, t3 = omg * t1;
        n = t2 + t3;
        volatile float u1 = gam * b, u2 = omg * gk;
        b = u1 + u2;
        volatile float bb = b * b, var = n - bb;
        volatile float sig = sqrtf ((var > 0 ? var : 0) + eps);
        volatile float w1 = bet * v, w2 = omb / sig;
        v = w1 + w2;
        volatile float d1 = step * v, d2 = d1 * gk;
        th = th - d2;
        ck_assert_int_eq (fasgd_rule_apply (r, theta, &gk, 0, NULL), 1);
        if (k == 1498) {
            /*  The replica is stuck in the subnormals, the rule at +0.  */
            ck_assert (n > 0 && n < FLT_MIN && b > 0 && b < FLT_MIN);
            ck_assert (s_is_plus_zero (s_state_get (r, 3, 0, 0)));
            ck_assert (s_is_plus_zero (s_state_get (r, 3, 1, 0)));
        }
#ifndef FP_FAST_FMAF
        ck_assert_float_eq (theta [0], th);
        ck_assert_double_eq (fasgd_rule_vbar (r), (double) sig);
#endif
    }
    ck_assert_float_ne (theta [0], 0.5f);           /* the last gradient moved it */
    ck_assert_float_eq (s_state_get (r, 3, 2, 0), v);
    fasgd_rule_destroy (&r);
}
END_TEST

/*  ---- dcasgd, gap-aware ------------------------------------------------  */

START_TEST (test_dcasgd)
{
    /*  g̃ = g + λ·g·g·(θ − θ_used), θ ← θ − α·g̃; α = 0.5, λ = 0.5.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_DCASGD, 0.5);
    p.dc_lambda = 0.5;
    fasgd_rule_t *r = s_rule (&p, 3);
    ck_assert_int_eq (fasgd_rule_needs_theta_used (r), 1);
    float theta [3] = { 1, 2, 3 };
    /*  θ − θ_used = {0.5, 0, −1}; g = {2, 1, −1}:
        g̃ = {2 + 0.5·4·0.5, 1 + 0, −1 + 0.5·1·(−1)} = {3, 1, −1.5}
        θ = {1 − 1.5, 2 − 0.5, 3 + 0.75}  */
    const float used1 [3] = { 0.5f, 2, 4 }, g1 [3] = { 2, 1, -1 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 3, used1), 1);
    const float want1 [3] = { -0.5f, 1.5f, 3.75f };
    ck_assert_mem_eq (theta, want1, sizeof theta);
    /*  θ − θ_used = {0, 0.5, 0}; g = {1, 2, 0}: g̃ = {1, 2 + 0.5·4·0.5, 0}
        = {1, 3, 0}; θ = {−0.5 − 0.5, 1.5 − 1.5, 3.75}  */
    const float used2 [3] = { -0.5f, 1, 3.75f }, g2 [3] = { 1, 2, 0 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, 1, used2), 1);
    const float want2 [3] = { -1, 0, 3.75f };
    ck_assert_mem_eq (theta, want2, sizeof theta);
    ck_assert_double_eq (fasgd_rule_vbar (r), 1.0);
    /*  Without θ_used: −2, nothing touched.  */
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 0, NULL), -2);
    ck_assert_mem_eq (theta, want2, sizeof theta);
    fasgd_rule_destroy (&r);
}
END_TEST

START_TEST (test_dcasgd_adaptive)
{
    /*  MS ← m·MS + (1−m)·g², λ_t = λ_0/sqrt(MS + 1e-7),
        g̃ = g + λ_t·g·g·(θ − θ_used), θ ← θ − α·g̃; α = 0.5, λ_0 = 0.5,
        m = 0.75, checked against the same arithmetic in double.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_DCASGD, 0.5);
    p.dc_lambda = 0.5;
    p.dc_adaptive = 1;
    p.dc_momentum = 0.75;
    fasgd_rule_t *r = s_rule (&p, 3);
    ck_assert_int_eq (fasgd_rule_needs_theta_used (r), 1);
    float theta [3] = { 1, 2, 3 };
    double want [3] = { 1, 2, 3 }, ms [3] = { 0, 0, 0 };
    const float used [2][3] = { { 0.5f, 2, 4 }, { -0.5f, 1, 3.5f } };
    const float g [2][3] = { { 2, 1, -1 }, { 1, 4, 0 } };
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < 3; k++) {
            ms [k] = 0.75 * ms [k] + 0.25 * g [s][k] * g [s][k];
            double lam = 0.5 / sqrt (ms [k] + 1e-7);
            double gt = g [s][k] + lam * g [s][k] * g [s][k] * (want [k] - used [s][k]);
            want [k] -= 0.5 * gt;
        }
        ck_assert_int_eq (fasgd_rule_apply (r, theta, g [s], 2, used [s]), 1);
        for (int k = 0; k < 3; k++)
            ck_assert_double_eq_tol (theta [k], want [k], 1e-5);
    }
    /*  The state is MS, one vector; without θ_used −2, nothing touched.  */
    ck_assert_uint_eq (fasgd_rule_state_size (r) > 3 * sizeof (float), 1);
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g [0], 0, NULL), -2);
    fasgd_rule_destroy (&r);
}
END_TEST

/*  fasgd.staleness: ignore divides by no τ: a step at τ = 7 equals the
    rule's own step at τ = 1 bit for bit, for both statistics.  */
START_TEST (test_fasgd_staleness_ignore)
{
    for (int stat = FASGD_STAT_STD; stat <= FASGD_STAT_ABS; stat++) {
        fasgd_rule_params_t pi = s_params (FASGD_RULE_FASGD, 0.0173);
        pi.statistic = stat;
        pi.staleness = FASGD_STALENESS_IGNORE;
        fasgd_rule_params_t pd = pi;
        pd.staleness = FASGD_STALENESS_DIVIDE;
        fasgd_rule_t *ri = s_rule (&pi, 19), *rd = s_rule (&pd, 19);
        float ti [19], td [19], g [19];
        for (int k = 0; k < 19; k++) {
            ti [k] = td [k] = 0.1f * (float) k - 0.7f;
            g [k] = 0.31f * (float) ((k * 5) % 13) - 1.7f;
        }
        /*  abs divides by τ + 1: its τ = 0 step is the undivided one.  */
        uint64_t same = stat == FASGD_STAT_STD ? 1 : 0;
        ck_assert_int_eq (fasgd_rule_apply (ri, ti, g, 7, NULL), 1);
        ck_assert_int_eq (fasgd_rule_apply (rd, td, g, same, NULL), 1);
        ck_assert_mem_eq (ti, td, sizeof ti);
        /*  ... and differs from the divided step at τ = 7.  */
        float t7 [19];
        fasgd_rule_t *r7 = s_rule (&pd, 19);
        for (int k = 0; k < 19; k++)
            t7 [k] = 0.1f * (float) k - 0.7f;
        ck_assert_int_eq (fasgd_rule_apply (r7, t7, g, 7, NULL), 1);
        ck_assert_int_ne (memcmp (t7, ti, sizeof ti), 0);
        fasgd_rule_destroy (&ri);
        fasgd_rule_destroy (&rd);
        fasgd_rule_destroy (&r7);
    }
}
END_TEST

START_TEST (test_gap_aware)
{
    /*  G = 1 + |θ − θ_used|/C (1 while C = 0), Δ = α·g/G, θ ← θ − Δ,
        C ← γ_C·C + (1−γ_C)·|Δ|; α = 0.5, γ_C = 0.5.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_GAPAWARE, 0.5);
    p.gap_decay = 0.5;
    fasgd_rule_t *r = s_rule (&p, 3);
    ck_assert_int_eq (fasgd_rule_needs_theta_used (r), 1);
    float theta [3] = { 1, 1, 1 };
    const float used1 [3] = { 1, 1, 1 };
    /*  C = 0 → G = 1: Δ = 0.5·{1, 2, 0} = {0.5, 1, 0}; θ = {0.5, 0, 1};
        C = 0.5·|Δ| = {0.25, 0.5, 0}  */
    const float g1 [3] = { 1, 2, 0 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g1, 0, used1), 1);
    const float want1 [3] = { 0.5f, 0, 1 };
    ck_assert_mem_eq (theta, want1, sizeof theta);
    /*  Stale θ_used = {1, 1, 1}: gap = {0.5, 1, 0};
        G = {1 + 0.5/0.25, 1 + 1/0.5, 1 (C = 0)} = {3, 3, 1};
        g = {3, 3, 2}: Δ = 0.5·g/G = {0.5, 0.5, 1}; θ = {0, −0.5, 0};
        C = {0.125 + 0.25, 0.25 + 0.25, 0 + 0.5} = {0.375, 0.5, 0.5}  */
    const float g2 [3] = { 3, 3, 2 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g2, 1, used1), 1);
    const float want2 [3] = { 0, -0.5f, 0 };
    ck_assert_mem_eq (theta, want2, sizeof theta);
    /*  θ_used = {0.375, 0, 0}: gap = {0.375, 0.5, 0}; with C from above
        G = {1 + 1, 1 + 1, 1 + 0} = {2, 2, 1}; g = {2, 2, 2}:
        Δ = {0.5, 0.5, 1}; θ = {−0.5, −1, −1}  */
    const float used3 [3] = { 0.375f, 0, 0 }, g3 [3] = { 2, 2, 2 };
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g3, 2, used3), 1);
    const float want3 [3] = { -0.5f, -1, -1 };
    ck_assert_mem_eq (theta, want3, sizeof theta);
    ck_assert_double_eq (fasgd_rule_vbar (r), 1.0);

    size_t len;
    void *before = s_blob (r, &len);
    ck_assert_int_eq (fasgd_rule_apply (r, theta, g3, 0, NULL), -2);
    ck_assert_mem_eq (theta, want3, sizeof theta);
    void *after = s_blob (r, &len);
    ck_assert_mem_eq (before, after, len);
    free (before);
    free (after);
    fasgd_rule_destroy (&r);
}
END_TEST

/*  ---- every rule: rejection, spans, state -------------------------------  */

enum { S_NCONF = 11, S_N = 19 };          /* 19 = two vector spans + a tail of 3 */

/*  Every rule and variant, with unround parameters.  */
static fasgd_rule_params_t
s_conf (int which)
{
    fasgd_rule_params_t p;
    fasgd_rule_params_default (&p);
    p.lr = 0.0173;
    switch (which) {
        case 0: p.kind = FASGD_RULE_ASGD; break;
        case 1: p.kind = FASGD_RULE_SASGD; break;
        case 2: p.kind = FASGD_RULE_SASGD; p.sasgd_form = FASGD_SASGD_PLUS_ONE; break;
        case 3: p.kind = FASGD_RULE_SOFTSYNC; p.softsync_group = 3; break;
        case 4: p.kind = FASGD_RULE_SOFTSYNC; p.softsync_group = 1; break;
        case 5: p.kind = FASGD_RULE_FASGD; break;
        case 6: p.kind = FASGD_RULE_FASGD; p.statistic = FASGD_STAT_ABS; break;
        case 7: p.kind = FASGD_RULE_DCASGD; p.dc_lambda = 0.3; break;
        case 8: p.kind = FASGD_RULE_DCASGD; p.dc_lambda = 0.3; p.dc_adaptive = 1; p.dc_momentum = 0.6; break;
        case 9: p.kind = FASGD_RULE_FASGD; p.staleness = FASGD_STALENESS_IGNORE; break;
        default: p.kind = FASGD_RULE_GAPAWARE; p.gap_decay = 0.7; break;
    }
    return p;
}

/*  Deterministic unround inputs for step s.  */
static void
s_fill (float *g, float *used, const float *theta, size_t n, int s)
{
    for (size_t i = 0; i < n; i++) {
        g [i] = 0.31f * (float) ((i * 5 + (size_t) s * 7) % 13) - 1.7f;
        used [i] = theta [i] + 0.01f * (float) ((i + (size_t) s) % 4) - 0.013f;
    }
}

/*  The scan behind the refusal: any position of any length, in the
    vector loop and in the tail; the extremes of the finite floats pass.  */
START_TEST (test_any_nonfinite)
{
    const float bad [] = { NAN, -NAN, INFINITY, -INFINITY };
    float v [41] = { 0 };
    for (size_t n = 0; n <= 41; n++) {
        for (size_t i = 0; i < n; i++)
            v [i] = i % 4 == 0 ? FLT_MAX : i % 4 == 1 ? -FLT_TRUE_MIN : i % 4 == 2 ? -0.0f : 1.5f;
        ck_assert_int_eq (fasgd_floats_any_nonfinite (v, n), 0);
        for (size_t i = 0; i < n; i++)
            for (int b = 0; b < 4; b++) {
                float keep = v [i];
                v [i] = bad [b];
                ck_assert_msg (fasgd_floats_any_nonfinite (v, n) == 1, "length %zu, position %zu", n, i);
                ck_assert_int_eq (fasgd_floats_any_nonfinite (v, i), 0);
                v [i] = keep;
            }
    }
}
END_TEST

START_TEST (test_nonfinite_rejected)
{
    const float bad [] = { NAN, INFINITY, -INFINITY };
    const size_t where [] = { 0, 5, S_N - 1 };     /* first span, inside, the tail */
    for (int c = 0; c < S_NCONF; c++) {
        fasgd_rule_params_t p = s_conf (c);
        fasgd_rule_t *r = s_rule (&p, S_N);
        float theta [S_N], g [S_N], used [S_N];
        for (size_t i = 0; i < S_N; i++)
            theta [i] = 0.05f * (float) i;
        /*  Four accepted gradients first, so statistics are non-zero and
            softsync c = 3 holds one buffered gradient.  */
        for (int s = 0; s < 4; s++) {
            s_fill (g, used, theta, S_N, s);
            ck_assert_int_ge (fasgd_rule_apply (r, theta, g, (uint64_t) s, used), 0);
        }
        size_t len;
        void *before = s_blob (r, &len);
        float theta0 [S_N];
        memcpy (theta0, theta, sizeof theta);
        double vbar0 = fasgd_rule_vbar (r);
        uint64_t pending0 = fasgd_rule_pending (r);
        for (size_t b = 0; b < 3; b++)
            for (size_t w = 0; w < 3; w++) {
                s_fill (g, used, theta, S_N, 9);
                g [where [w]] = bad [b];
                ck_assert_int_eq (fasgd_rule_apply (r, theta, g, 2, used), -1);
                ck_assert_mem_eq (theta, theta0, sizeof theta);
                void *after = s_blob (r, &len);
                ck_assert_mem_eq (before, after, len);
                free (after);
                ck_assert_double_eq (fasgd_rule_vbar (r), vbar0);
                ck_assert_uint_eq (fasgd_rule_pending (r), pending0);
            }
        free (before);
        fasgd_rule_destroy (&r);
    }
}
END_TEST

START_TEST (test_needs_theta_used)
{
    for (int c = 0; c < S_NCONF; c++) {
        fasgd_rule_params_t p = s_conf (c);
        fasgd_rule_t *r = s_rule (&p, S_N);
        int needs = p.kind == FASGD_RULE_DCASGD || p.kind == FASGD_RULE_GAPAWARE;
        ck_assert_int_eq (fasgd_rule_needs_theta_used (r), needs);
        float theta [S_N] = { 0 }, g [S_N], used [S_N];
        s_fill (g, used, theta, S_N, 1);
        int ret = fasgd_rule_apply (r, theta, g, 1, NULL);
        ck_assert_int_eq (ret, needs ? -2 : (c == 3 ? 0 : 1));
        fasgd_rule_destroy (&r);
    }
}
END_TEST

START_TEST (test_span_equals_tail)
{
    /*  Each parameter's update depends on that parameter only: a rule over
        19 parameters (vector spans and a scalar tail) and 19 rules over
        one parameter (the tail code alone) give the same bits.  */
    for (int c = 0; c < S_NCONF; c++) {
        fasgd_rule_params_t p = s_conf (c);
        fasgd_rule_t *whole = s_rule (&p, S_N), *one [S_N];
        float theta [S_N], single [S_N], g [S_N], used [S_N];
        for (size_t i = 0; i < S_N; i++) {
            one [i] = s_rule (&p, 1);
            theta [i] = single [i] = 0.05f * (float) i;
        }
        for (int s = 0; s < 7; s++) {
            s_fill (g, used, theta, S_N, s);
            int ret = fasgd_rule_apply (whole, theta, g, (uint64_t) s, used);
            for (size_t i = 0; i < S_N; i++)
                ck_assert_int_eq (fasgd_rule_apply (one [i], &single [i], &g [i],
                                                    (uint64_t) s, &used [i]), ret);
            ck_assert_mem_eq (theta, single, sizeof theta);
        }
        for (size_t i = 0; i < S_N; i++)
            fasgd_rule_destroy (&one [i]);
        fasgd_rule_destroy (&whole);
    }
}
END_TEST

START_TEST (test_apply_into_equals_in_place)
{
    /*  Every rule: applying into a second buffer gives the bits of applying
        in place, leaves the input θ alone, and writes nothing unless the
        update went through (softsync buffering, a NaN gradient). θ_used
        may be θ itself.  */
    for (int c = 0; c < S_NCONF; c++) {
        fasgd_rule_params_t p = s_conf (c);
        fasgd_rule_t *a = s_rule (&p, S_N), *b = s_rule (&p, S_N);
        float ta [S_N], tb [S_N], tb0 [S_N], out [S_N], fill [S_N], g [S_N], used [S_N];
        for (size_t i = 0; i < S_N; i++) {
            ta [i] = tb [i] = 0.05f * (float) i;
            fill [i] = 7.0f;
        }
        for (int s = 0; s < 9; s++) {
            s_fill (g, used, ta, S_N, s);
            if (s == 7)
                g [3] = NAN;
            /*  At s = 8 the rules get θ itself as θ_used (a copy for the
                in-place one, where it may not overlap).  */
            const float *used_b = s == 8 ? tb : used;
            if (s == 8)
                memcpy (used, ta, sizeof used);
            memcpy (tb0, tb, sizeof tb0);
            memcpy (out, fill, sizeof out);
            int ra = fasgd_rule_apply (a, ta, g, (uint64_t) s, used);
            int rb = fasgd_rule_apply_into (b, out, tb, g, (uint64_t) s, used_b);
            ck_assert_int_eq (ra, rb);
            ck_assert_mem_eq (tb, tb0, sizeof tb);
            if (rb == 1) {
                ck_assert_mem_eq (out, ta, sizeof out);
                memcpy (tb, out, sizeof tb);
            }
            else
                ck_assert_mem_eq (out, fill, sizeof out);
            ck_assert_mem_eq (ta, tb, sizeof ta);
            ck_assert_double_eq (fasgd_rule_vbar (a), fasgd_rule_vbar (b));
            size_t la, lb;
            void *ba = s_blob (a, &la), *bb = s_blob (b, &lb);
            ck_assert_uint_eq (la, lb);
            ck_assert_mem_eq (ba, bb, la);
            free (ba);
            free (bb);
        }
        /*  theta_new = theta is the in-place apply.  */
        s_fill (g, used, ta, S_N, 11);
        ck_assert_int_eq (fasgd_rule_apply (a, ta, g, 1, used),
                          fasgd_rule_apply_into (b, tb, tb, g, 1, used));
        ck_assert_mem_eq (ta, tb, sizeof ta);
        fasgd_rule_destroy (&a);
        fasgd_rule_destroy (&b);
    }
}
END_TEST

/*  A pseudo-random float in [-1, 1) from *x (xorshift), and now and then
    a larger or a tiny one, for the staged pass's tests.  */
static float
s_rand (uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    float u = (float) (*x >> 40) / (float) (1 << 24) * 2.0f - 1.0f;
    switch (*x % 29) {
        case 0: return u * 1e3f;
        case 1: return u * 1e-20f;
        default: return u;
    }
}

START_TEST (test_stage_equals_two_passes)
{
    /*  Every rule, on random data (2,007 values: vector blocks and a tail
        of 7), 24 pushes each: the staged pass (g read once: its sums and the update
        into a second θ and a second state) gives, once committed, the
        bits of the two passes it replaces (fasgd_floats_sumsq_dot_spans
        or fasgd_floats_sumsq, then fasgd_rule_apply_into); and a stage
        not committed (a refusal, an ignored push, a NaN) leaves θ and the
        rule's state, v̄ and count bit for bit as they were.  */
    enum { N = 2000 + 7 };
    static float ta [N], tb [N], out [N], t0 [N], g [N], used [N], r [N];
    size_t spans [2 * 64];
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int c = 0; c < S_NCONF; c++) {
        fasgd_rule_params_t p = s_conf (c);
        fasgd_rule_t *a = s_rule (&p, N), *b = s_rule (&p, N);
        for (size_t i = 0; i < N; i++)
            ta [i] = tb [i] = s_rand (&x);
        for (int s = 0; s < 24; s++) {
            for (size_t i = 0; i < N; i++) {
                g [i] = s_rand (&x);
                used [i] = ta [i] + 0.01f * s_rand (&x);
                /*  A reference with runs of zeros (long ones, left out of
                    its spans, and short ones, kept in), and one ending in
                    zeros.  */
                size_t blk = i / 16;
                r [i] = (blk % 23 < 17 && blk % 5 != 2) || (s % 3 == 2 && i + 16 >= N) ? s_rand (&x) : 0.0f;
                if (s % 3 == 1 && i + 40 >= N)
                    r [i] = 0.0f;
            }
            if (s == 9)
                g [N - 2] = NAN;
            if (s == 10)
                g [17] = -INFINITY;
            size_t nspans = fasgd_floats_nonzero_spans (r, N, 48, spans, s == 5 ? 1 : 64);
            const float *rr = s % 4 == 3 ? NULL : r;
            /*  The two passes.  */
            double dot2 = 0, sq2 = rr ? fasgd_floats_sumsq_dot_spans (g, r, N, spans, nspans, &dot2)
                                      : fasgd_floats_sumsq (g, N);
            /*  The one.  */
            double sq1 = -1, dot1 = -1;
            memcpy (t0, tb, sizeof t0);
            size_t l0;
            void *before = s_blob (b, &l0);
            double vbar0 = fasgd_rule_vbar (b);
            uint64_t pending0 = fasgd_rule_pending (b);
            int rb = fasgd_rule_stage (b, out, tb, g, (uint64_t) (s % 5), used, rr, spans, nspans, &sq1, &dot1);
            ck_assert_int_ge (rb, 0);
            ck_assert_mem_eq (&sq1, &sq2, sizeof sq1);
            ck_assert_msg (memcmp (&dot1, &dot2, sizeof dot1) == 0, "rule %d step %d: dot %.17g, want %.17g", c, s,
                           dot1, dot2);
            /*  Nothing changed before the commit.  */
            ck_assert_mem_eq (tb, t0, sizeof tb);
            size_t l1;
            void *mid = s_blob (b, &l1);
            ck_assert_mem_eq (mid, before, l0);
            ck_assert_double_eq (fasgd_rule_vbar (b), vbar0);
            ck_assert_uint_eq (fasgd_rule_pending (b), pending0);
            free (mid);
            /*  Steps 3, 7, ... are refused (and NaN ones always).  */
            if (!isfinite (sq1) || s % 4 == 3) {
                free (before);
                continue;
            }
            int ra = fasgd_rule_apply_into (a, t0, ta, g, (uint64_t) (s % 5), used);
            ck_assert_int_eq (ra, rb);
            fasgd_rule_commit (b);
            if (rb == 1) {
                memcpy (ta, t0, sizeof ta);
                memcpy (tb, out, sizeof tb);
            }
            ck_assert_mem_eq (ta, tb, sizeof ta);
            ck_assert_double_eq (fasgd_rule_vbar (a), fasgd_rule_vbar (b));
            ck_assert_uint_eq (fasgd_rule_pending (a), fasgd_rule_pending (b));
            size_t la, lb;
            void *ba = s_blob (a, &la), *bb = s_blob (b, &lb);
            ck_assert_uint_eq (la, lb);
            ck_assert_msg (memcmp (ba, bb, la) == 0, "rule %d step %d: the committed state differs", c, s);
            free (ba);
            free (bb);
            free (before);
        }
        fasgd_rule_destroy (&a);
        fasgd_rule_destroy (&b);
    }
}
END_TEST

START_TEST (test_state_round_trip)
{
    for (int c = 0; c < S_NCONF; c++) {
        for (int warm = 1; warm <= 2; warm++) {
            /*  softsync c = 3 is checkpointed with 1 and with 2 gradients
                buffered.  */
            fasgd_rule_params_t p = s_conf (c);
            fasgd_rule_t *a = s_rule (&p, S_N);
            float theta [S_N], g [S_N], used [S_N];
            for (size_t i = 0; i < S_N; i++)
                theta [i] = 0.05f * (float) i;
            for (int s = 0; s < 3 + warm; s++) {
                s_fill (g, used, theta, S_N, s);
                ck_assert_int_ge (fasgd_rule_apply (a, theta, g, (uint64_t) s, used), 0);
            }
            size_t len;
            void *blob = s_blob (a, &len);
            fasgd_rule_t *b = s_rule (&p, S_N);
            ck_assert_uint_eq (fasgd_rule_state_size (b), len);
            ck_assert_int_eq (fasgd_rule_state_set (b, blob, len), 0);
            ck_assert_double_eq (fasgd_rule_vbar (b), fasgd_rule_vbar (a));
            ck_assert_uint_eq (fasgd_rule_pending (b), fasgd_rule_pending (a));
            void *copy = s_blob (b, &len);
            ck_assert_mem_eq (blob, copy, len);
            free (copy);
            /*  The restored rule continues exactly like the original.  */
            float ta [S_N], tb [S_N];
            memcpy (ta, theta, sizeof ta);
            memcpy (tb, theta, sizeof tb);
            for (int s = 10; s < 14; s++) {
                s_fill (g, used, ta, S_N, s);
                int ra = fasgd_rule_apply (a, ta, g, (uint64_t) (s % 4), used);
                int rb = fasgd_rule_apply (b, tb, g, (uint64_t) (s % 4), used);
                ck_assert_int_eq (ra, rb);
                ck_assert_mem_eq (ta, tb, sizeof ta);
                ck_assert_double_eq (fasgd_rule_vbar (a), fasgd_rule_vbar (b));
            }
            free (blob);
            fasgd_rule_destroy (&a);
            fasgd_rule_destroy (&b);
        }
    }
}
END_TEST

START_TEST (test_state_mismatch_refused)
{
    fasgd_rule_t *r [S_NCONF];
    void *blob [S_NCONF];
    size_t len [S_NCONF];
    float theta [S_N] = { 0 }, g [S_N], used [S_N];
    for (int c = 0; c < S_NCONF; c++) {
        fasgd_rule_params_t p = s_conf (c);
        r [c] = s_rule (&p, S_N);
        s_fill (g, used, theta, S_N, c);
        fasgd_rule_apply (r [c], theta, g, 1, used);
        blob [c] = s_blob (r [c], &len [c]);
    }
    /*  Every blob is refused by every other configuration (another kind,
        statistic, group or form of the same size), and the refusing rule
        is unchanged.  */
    for (int c = 0; c < S_NCONF; c++)
        for (int d = 0; d < S_NCONF; d++) {
            fasgd_rule_params_t pc = s_conf (c), pd = s_conf (d);
            int compatible = pc.kind == pd.kind && pc.statistic == pd.statistic
                             && (pc.kind != FASGD_RULE_SOFTSYNC
                                 || pc.softsync_group == pd.softsync_group)
                             && (pc.kind != FASGD_RULE_DCASGD
                                 || pc.dc_adaptive == pd.dc_adaptive);
            if (compatible)
                continue;
            ck_assert_int_eq (fasgd_rule_state_set (r [d], blob [c], len [c]), -1);
            size_t l;
            void *now = s_blob (r [d], &l);
            ck_assert_mem_eq (now, blob [d], l);
            free (now);
        }
    /*  sasgd's two forms share the (empty) state.  */
    ck_assert_int_eq (fasgd_rule_state_set (r [2], blob [1], len [1]), 0);

    /*  Another size, a short or long buffer, a damaged magic, NULL.  */
    fasgd_rule_params_t p = s_conf (5);
    fasgd_rule_t *small = s_rule (&p, S_N - 1);
    ck_assert_int_eq (fasgd_rule_state_set (small, blob [5], len [5]), -1);
    ck_assert_int_eq (fasgd_rule_state_set (r [5], blob [5], len [5] - 1), -1);
    unsigned char *longer = calloc (1, len [5] + 4);
    memcpy (longer, blob [5], len [5]);
    ck_assert_int_eq (fasgd_rule_state_set (r [5], longer, len [5] + 4), -1);
    longer [0] ^= 0x40;
    ck_assert_int_eq (fasgd_rule_state_set (r [5], longer, len [5]), -1);
    ck_assert_int_eq (fasgd_rule_state_set (r [5], NULL, len [5]), -1);
    free (longer);
    /*  A statistic that is NaN or infinite: it would poison θ at the
        first update after a resume.  */
    for (int c = 0; c < S_NCONF; c++) {
        /*  The last float of the blob is a statistic when there are any
            (a stateless rule's blob is its 40-byte header alone).  */
        if (len [c] <= 40)
            continue;
        unsigned char *bad = malloc (len [c]), *saved = malloc (len [c]), *after = malloc (len [c]);
        memcpy (bad, blob [c], len [c]);
        fasgd_rule_state_get (r [c], saved);
        const float nonfinite [] = { NAN, -INFINITY };
        for (int k = 0; k < 2; k++) {
            memcpy (bad + len [c] - sizeof (float), &nonfinite [k], sizeof (float));
            ck_assert_int_eq (fasgd_rule_state_set (r [c], bad, len [c]), -1);
        }
        fasgd_rule_state_get (r [c], after);
        ck_assert_mem_eq (after, saved, len [c]);
        free (bad);
        free (saved);
        free (after);
    }
    ck_assert_int_eq (fasgd_rule_state_set (r [5], blob [5], len [5]), 0);
    fasgd_rule_destroy (&small);

    /*  A NaN or an infinity in any vector of a blob with state, and in
        v-bar: refused by the check and by set, the rule unchanged.  */
    for (int c = 0; c < S_NCONF; c++) {
        size_t vecs = (len [c] - 40) / sizeof (float);
        char err [160];
        ck_assert_int_eq (fasgd_rule_state_check (blob [c], len [c], S_N, err, sizeof err), 0);
        for (size_t at = 0; at < vecs; at += 7) {
            unsigned char *bad = malloc (len [c]);
            memcpy (bad, blob [c], len [c]);
            const float nan = at % 2 ? NAN : -INFINITY;
            memcpy (bad + 40 + at * sizeof (float), &nan, sizeof nan);
            ck_assert_int_eq (fasgd_rule_state_check (bad, len [c], S_N, err, sizeof err), -1);
            ck_assert_msg (strstr (err, "is nan") || strstr (err, "is -inf"), "%s", err);
            ck_assert_int_eq (fasgd_rule_state_set (r [c], bad, len [c]), -1);
            free (bad);
        }
        ck_assert_int_eq (fasgd_rule_state_check (blob [c], len [c], S_N + 1, err, sizeof err), -1);
        ck_assert_int_eq (fasgd_rule_state_check (blob [c], len [c] - 1, S_N, err, sizeof err), -1);
        ck_assert_int_eq (fasgd_rule_state_check (blob [c], 39, S_N, err, sizeof err), -1);
        size_t l;
        void *now = s_blob (r [c], &l);
        ck_assert_mem_eq (now, blob [c], l);
        free (now);
    }
    for (int c = 0; c < S_NCONF; c++) {
        free (blob [c]);
        fasgd_rule_destroy (&r [c]);
    }
}
END_TEST

START_TEST (test_state_size)
{
    /*  Stateless rules still carry a header (kind, n); softsync's empty
        buffer gives the same blob whatever it held before.  */
    fasgd_rule_params_t p = s_params (FASGD_RULE_ASGD, 0.1);
    fasgd_rule_t *a = s_rule (&p, 10);
    p = s_params (FASGD_RULE_FASGD, 0.1);
    fasgd_rule_t *f = s_rule (&p, 10);
    ck_assert_uint_gt (fasgd_rule_state_size (a), 0);
    ck_assert_uint_eq (fasgd_rule_state_size (f),
                       fasgd_rule_state_size (a) + 3 * 10 * sizeof (float));
    fasgd_rule_destroy (&a);
    fasgd_rule_destroy (&f);

    p = s_params (FASGD_RULE_SOFTSYNC, 0.1);
    p.softsync_group = 2;
    fasgd_rule_t *s1 = s_rule (&p, 3), *s2 = s_rule (&p, 3);
    float theta [3] = { 0 };
    const float g [3] = { 1, 2, 3 };
    fasgd_rule_apply (s1, theta, g, 0, NULL);
    fasgd_rule_apply (s1, theta, g, 0, NULL);
    size_t l1, l2;
    void *b1 = s_blob (s1, &l1), *b2 = s_blob (s2, &l2);
    ck_assert_uint_eq (l1, l2);
    ck_assert_mem_eq (b1, b2, l1);
    free (b1);
    free (b2);
    fasgd_rule_destroy (&s1);
    fasgd_rule_destroy (&s2);
}
END_TEST

static Suite *
rules_suite (void)
{
    Suite *s = suite_create ("rules");
    TCase *tc = tcase_create ("params");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_kind_names);
    tcase_add_test (tc, test_defaults);
    tcase_add_test (tc, test_validation);
    suite_add_tcase (s, tc);

    tc = tcase_create ("by-hand");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_asgd);
    tcase_add_test (tc, test_sasgd_div_tau);
    tcase_add_test (tc, test_sasgd_plus_one);
    tcase_add_test (tc, test_softsync_group1_is_sasgd);
    tcase_add_test (tc, test_softsync_group3);
    tcase_add_test (tc, test_softsync_plus_one);
    tcase_add_test (tc, test_fasgd_std);
    tcase_add_test (tc, test_fasgd_std_epsilon_bound);
    tcase_add_test (tc, test_fasgd_std_clamp);
    tcase_add_test (tc, test_fasgd_abs);
    tcase_add_test (tc, test_fasgd_flush_to_zero);
    tcase_add_test (tc, test_fasgd_flush_invisible);
    tcase_add_test (tc, test_dcasgd);
    tcase_add_test (tc, test_dcasgd_adaptive);
    tcase_add_test (tc, test_fasgd_staleness_ignore);
    tcase_add_test (tc, test_gap_aware);
    suite_add_tcase (s, tc);

    tc = tcase_create ("all-rules");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_any_nonfinite);
    tcase_add_test (tc, test_nonfinite_rejected);
    tcase_add_test (tc, test_needs_theta_used);
    tcase_add_test (tc, test_span_equals_tail);
    tcase_add_test (tc, test_apply_into_equals_in_place);
    tcase_add_test (tc, test_stage_equals_two_passes);
    tcase_add_test (tc, test_state_round_trip);
    tcase_add_test (tc, test_state_mismatch_refused);
    tcase_add_test (tc, test_state_size);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (rules_suite)
