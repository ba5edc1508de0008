/*  rules: asgd, sasgd, softsync, fasgd (std, abs), dcasgd (and DC-ASGD-a),
    gap-aware.

    Every per-parameter loop runs over spans of S_LANES elements: the main
    loop passes a constant length, so after inlining gcc -O2 (whose default
    "very cheap" cost model refuses loops of unknown trip count) vectorises
    the span's body, and a final call handles the n mod S_LANES tail with
    the same code. The loops have no data-dependent branches (gap-aware's
    select is on the bits: s_gap_span).  */
#include "rules.h"
#include "floats.h"
#include "log.h"
#include "multiversion.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__NO_MATH_ERRNO__)
    /*  sqrtf vectorises by itself.  */
#elif defined(__SSE__)
#   include <xmmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#   include <arm_neon.h>
#endif

#define S_LANES 16
/*  fasgd std's pass takes S_STD_SPANS spans at once (s_std_span): each
    span's square roots wait on its statistics and its divisions on the
    roots, and four chains side by side keep the divider busy (1.32 →
    0.99–1.04 ns a parameter at D = 1M on AVX2, bench-rules). Its sums of
    σ still go span by span into the S_LANES lanes, in the same order.  */
#define S_STD_SPANS 4
_Static_assert (S_STD_SPANS == 4, "s_std_span sums four spans' σ in one expression");

/*  The kernels are inlined into each clone of the apply functions below:
    one left out of line (gcc does that to a large function called twice)
    would be compiled once, for the baseline target.  */
#if defined(__GNUC__)
#   define S_KERNEL static inline __attribute__ ((always_inline))
#else
#   define S_KERNEL static inline
#endif

/*  On x86-64 the apply loop is compiled for AVX-512, AVX2 and the baseline,
    and the loader picks the widest the processor has. Every instruction
    involved (add, multiply, divide, square root, no fused multiply-add) is
    correctly rounded in each, so all three give the same bits.  */
#define S_MULTIVERSION FASGD_MULTIVERSION

/*  "FRST" and the blob layout version.  */
#define S_STATE_MAGIC   0x46525354u
#define S_STATE_VERSION 1u

struct fasgd_rule_t {
    fasgd_rule_params_t p;
    size_t   n;
    /*  Per-parameter float32 state, NULL when the rule has none:
        std: vec[0] = n, vec[1] = b, vec[2] = v (moving g², g, 1/σ);
        abs: vec[0] = m (moving |g|); softsync, c > 1: vec[0] = the buffer
        Σ α(τ_l)·g_l; gap-aware: vec[0] = C (moving |Δθ|); DC-ASGD-a:
        vec[0] = MS (moving g²).  */
    float   *vec [3];
    int      nvec;
    uint64_t pending;           /* softsync: gradients in vec[0] */
    double   vbar;
    int      checked;           /* the caller checks g's finiteness */
    /*  fasgd_rule_stage: where a staged pass writes the state (allocated
        at the first, nvec of them), and the rule after it, until
        fasgd_rule_commit takes it.  */
    float   *stage [3];
    int      staged;            /* a stage waits for its commit */
    int      stage_vectors;     /* its vectors are the new state */
    double   stage_vbar;
    uint64_t stage_pending;
};

/*  The blob header; the vectors follow it, nvec × n floats.  */
typedef struct {
    uint32_t magic;
    uint32_t version;
    uint32_t kind;
    uint32_t variant;           /* statistic (fasgd), group (softsync), else 0 */
    uint64_t n;
    uint64_t pending;
    double   vbar;
} s_state_header_t;

const char *const fasgd_rule_kind_names [] = {
    "asgd", "sasgd", "softsync", "fasgd", "dcasgd", "gap-aware", NULL
};
#define S_NKINDS ((int) (sizeof fasgd_rule_kind_names / sizeof fasgd_rule_kind_names [0]) - 1)

void
fasgd_rule_params_default (fasgd_rule_params_t *p)
{
    memset (p, 0, sizeof *p);
    p->kind = FASGD_RULE_FASGD;
    p->lr = 0.005;
    p->sasgd_form = FASGD_SASGD_DIV_TAU;
    p->softsync_group = 1;
    p->statistic = FASGD_STAT_STD;
    p->gamma = 0.9;
    p->beta = 0.9;
    p->epsilon = 1e-4;
    p->abs_decay = 0.9;
    p->abs_floor = 0.001;
    p->staleness = FASGD_STALENESS_DIVIDE;
    p->dc_lambda = 0.04;
    p->dc_adaptive = 0;
    p->dc_momentum = 0.95;
    p->gap_decay = 0.9;
}

const char *
fasgd_rule_kind_name (int kind)
{
    if (kind < 0 || kind >= S_NKINDS)
        return "?";
    return fasgd_rule_kind_names [kind];
}

int
fasgd_rule_kind_parse (const char *name)
{
    for (int i = 0; name && i < S_NKINDS; i++)
        if (strcmp (name, fasgd_rule_kind_names [i]) == 0)
            return i;
    return -1;
}

/*  A decay used as float: [0, 1) keeps every moving average a convex
    combination, so it stays bounded by the values it averages.  */
static int
s_is_decay (double x)
{
    return x >= 0.0 && x < 1.0;
}

/*  Positive, finite, and still positive and finite once rounded to float
    (ε = 1e-50 would become 0 and 1/σ infinite).  */
static int
s_is_positive_float (double x)
{
    return x > 0.0 && x <= FLT_MAX && (float) x > 0.0f;
}

int
fasgd_rule_params_check (const fasgd_rule_params_t *p, char *err, size_t errlen)
{
    if (p->kind < 0 || p->kind >= S_NKINDS)
        return fasgd_errbuf (err, errlen, "unknown rule kind %d", p->kind);
    if (!s_is_positive_float (p->lr))
        return fasgd_errbuf (err, errlen, "lr must be > 0 and finite (got %g)", p->lr);
    if (p->sasgd_form != FASGD_SASGD_DIV_TAU && p->sasgd_form != FASGD_SASGD_PLUS_ONE)
        return fasgd_errbuf (err, errlen, "unknown sasgd form %d", p->sasgd_form);
    if (p->softsync_group < 1 || p->softsync_group > FASGD_RULE_GROUP_MAX)
        return fasgd_errbuf (err, errlen, "softsync group must be in [1, %d] (got %d)",
                       FASGD_RULE_GROUP_MAX, p->softsync_group);
    if (p->statistic != FASGD_STAT_STD && p->statistic != FASGD_STAT_ABS)
        return fasgd_errbuf (err, errlen, "unknown fasgd statistic %d", p->statistic);
    if (!s_is_decay (p->gamma))
        return fasgd_errbuf (err, errlen, "gamma must be in [0, 1) (got %g)", p->gamma);
    if (!s_is_decay (p->beta))
        return fasgd_errbuf (err, errlen, "beta must be in [0, 1) (got %g)", p->beta);
    if (!s_is_positive_float (p->epsilon))
        return fasgd_errbuf (err, errlen, "epsilon must be > 0 and finite (got %g)", p->epsilon);
    if (!s_is_decay (p->abs_decay))
        return fasgd_errbuf (err, errlen, "abs decay must be in [0, 1) (got %g)", p->abs_decay);
    if (!s_is_positive_float (p->abs_floor))
        return fasgd_errbuf (err, errlen, "abs floor must be > 0 and finite (got %g)", p->abs_floor);
    if (p->staleness != FASGD_STALENESS_DIVIDE && p->staleness != FASGD_STALENESS_IGNORE)
        return fasgd_errbuf (err, errlen, "unknown fasgd staleness %d", p->staleness);
    if (!(p->dc_lambda >= 0.0 && p->dc_lambda <= FLT_MAX))
        return fasgd_errbuf (err, errlen, "dc lambda must be >= 0 and finite (got %g)", p->dc_lambda);
    if (p->dc_adaptive != 0 && p->dc_adaptive != 1)
        return fasgd_errbuf (err, errlen, "dc adaptive must be 0 or 1 (got %d)", p->dc_adaptive);
    if (!s_is_decay (p->dc_momentum))
        return fasgd_errbuf (err, errlen, "dc momentum must be in [0, 1) (got %g)", p->dc_momentum);
    if (!s_is_decay (p->gap_decay))
        return fasgd_errbuf (err, errlen, "gap decay must be in [0, 1) (got %g)", p->gap_decay);
    return 0;
}

static int
s_nvec (const fasgd_rule_params_t *p)
{
    switch (p->kind) {
        case FASGD_RULE_FASGD:
            return p->statistic == FASGD_STAT_STD ? 3 : 1;
        case FASGD_RULE_SOFTSYNC:
            return p->softsync_group > 1 ? 1 : 0;   /* c = 1 never buffers */
        case FASGD_RULE_GAPAWARE:
            return 1;
        case FASGD_RULE_DCASGD:
            return p->dc_adaptive ? 1 : 0;
        default:
            return 0;
    }
}

fasgd_rule_t *
fasgd_rule_new (const fasgd_rule_params_t *p, size_t n, char *err, size_t errlen)
{
    if (fasgd_rule_params_check (p, err, errlen))
        return NULL;
    if (n == 0) {
        fasgd_errbuf (err, errlen, "a rule needs at least one parameter (got 0)");
        return NULL;
    }
    /*  The state blob holds up to 3 vectors of n floats behind its header.  */
    if (n > (SIZE_MAX - sizeof (s_state_header_t)) / (3 * sizeof (float))) {
        fasgd_errbuf (err, errlen, "too many parameters (%zu)", n);
        return NULL;
    }
    fasgd_rule_t *self = calloc (1, sizeof *self);
    if (!self) {
        fasgd_errbuf (err, errlen, "out of memory (%zu parameters)", n);
        return NULL;
    }
    self->p = *p;
    self->n = n;
    self->nvec = s_nvec (p);
    for (int k = 0; k < self->nvec; k++) {
        self->vec [k] = calloc (n, sizeof (float));
        if (!self->vec [k]) {
            fasgd_errbuf (err, errlen, "out of memory (%zu parameters)", n);
            fasgd_rule_destroy (&self);
            return NULL;
        }
    }
    /*  Rules without a statistic report 1 so a B-FASGD gate still works.  */
    self->vbar = p->kind == FASGD_RULE_FASGD ? 0.0 : 1.0;
    return self;
}

void
fasgd_rule_destroy (fasgd_rule_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_rule_t *self = *self_p;
    for (int k = 0; k < 3; k++) {
        free (self->vec [k]);
        free (self->stage [k]);
    }
    free (self);
    *self_p = NULL;
}

int
fasgd_rule_needs_theta_used (const fasgd_rule_t *self)
{
    return self->p.kind == FASGD_RULE_DCASGD || self->p.kind == FASGD_RULE_GAPAWARE;
}

double
fasgd_rule_vbar (const fasgd_rule_t *self)
{
    return self->vbar;
}

size_t
fasgd_rule_size (const fasgd_rule_t *self)
{
    return self->n;
}

uint64_t
fasgd_rule_pending (const fasgd_rule_t *self)
{
    return self->pending;
}

const fasgd_rule_params_t *
fasgd_rule_params (const fasgd_rule_t *self)
{
    return &self->p;
}

/*  ---- kernels: one span of len ≤ S_LANES parameters ------------------  */

/*  Square roots of S_LANES floats in place. sqrtf under gcc's default
    -fmath-errno keeps a loop from vectorising; the vector instructions are
    correctly rounded like sqrtf (IEEE 754), so the span and the scalar
    tail give identical bits.  */
static inline void
s_sqrt_lanes (float *x)
{
#if defined(__NO_MATH_ERRNO__)
    for (int k = 0; k < S_LANES; k++)
        x [k] = sqrtf (x [k]);
#elif defined(__SSE__)
    for (int k = 0; k < S_LANES; k += 4)
        _mm_storeu_ps (x + k, _mm_sqrt_ps (_mm_loadu_ps (x + k)));
#elif defined(__ARM_NEON) && defined(__aarch64__)
    for (int k = 0; k < S_LANES; k += 4)
        vst1q_f32 (x + k, vsqrtq_f32 (vld1q_f32 (x + k)));
#else
    for (int k = 0; k < S_LANES; k++)
        x [k] = sqrtf (x [k]);
#endif
}

/*  ---- kernels: one span of len ≤ S_LANES parameters ------------------

    Each kernel computes the span's step d (θ_new = θ − d) and updates the
    rule's state; s_write then applies d either in place or from one buffer
    into another, each through restrict pointers of its own, so that gcc
    vectorises both. The element arithmetic is the same code either way,
    and θ − d is the operation the rule's θ −= ... always was, so in place
    and into give the same bits.  */

/*  θ ← θ − d in place, or θ_new = θ − d into another buffer.  */
S_KERNEL void
s_write_inplace (float *restrict theta, const float *restrict d, size_t len)
{
    for (size_t k = 0; k < len; k++)
        theta [k] -= d [k];
}

S_KERNEL void
s_write_into (const float *restrict tin, float *restrict tout, const float *restrict d,
              size_t len)
{
    for (size_t k = 0; k < len; k++)
        tout [k] = tin [k] - d [k];
}

/*  tout is tin (in place) or a buffer that does not overlap it.  */
S_KERNEL void
s_write (const float *tin, float *tout, const float *d, size_t len)
{
    if (tout == tin)
        s_write_inplace (tout, d, len);
    else
        s_write_into (tin, tout, d, len);
}

/*  asgd and sasgd: θ ← θ − α(τ)·g.  */
S_KERNEL void
s_step_span (const float *restrict g, float a, float *restrict d, size_t len)
{
    for (size_t k = 0; k < len; k++)
        d [k] = a * g [k];
}

/*  softsync, first gradient of a group: s = α(τ₁)·g₁.  */
S_KERNEL void
s_buffer_first_span (float *restrict buf, const float *restrict g, float a, size_t len)
{
    for (size_t k = 0; k < len; k++)
        buf [k] = a * g [k];
}

/*  softsync, later gradients: s ← s + α(τ_l)·g_l.  */
S_KERNEL void
s_buffer_add_span (float *restrict buf, const float *restrict g, float a, size_t len)
{
    for (size_t k = 0; k < len; k++)
        buf [k] += a * g [k];
}

/*  softsync, the c-th gradient: θ ← θ − (1/c)·(s + α(τ_c)·g_c).  */
S_KERNEL void
s_buffer_apply_span (const float *restrict buf, const float *restrict g, float a, float c,
                     float *restrict d, size_t len)
{
    for (size_t k = 0; k < len; k++)
        d [k] = (buf [k] + a * g [k]) / c;
}

/*  Moving averages flushed to zero. A parameter whose gradient has become
    exactly 0 for good (on MNIST, mostly first-layer weights of pixels
    inked in only a handful of images) sees its n and b (std) or m (abs)
    decay geometrically, into the subnormal range after several hundred
    updates at γ = 0.9, and stay there: for the smallest subnormals γ·x
    rounds back to x. Arithmetic on subnormals costs a microcode assist per
    element on x86, which made fasgd's update about three times as slow in
    long runs, so a value that falls below FLT_MIN in magnitude is set to 0
    here, in the rule, rather than by the processor's flush-to-zero mode,
    which would change the gradient's arithmetic as well.

    Why θ, v and v̄ do not change: a flushed value is below 2^-126, less
    than half an ulp of any float of magnitude 2^-101 or more, so adding it
    to such a number rounds it away. n and b reach θ only through
    σ = sqrt(max(n − b², 0) + ε), where an n − b² below FLT_MIN vanishes
    next to ε (for any ε ≥ 2^-100; the default is 1e-4), flushed or not;
    m reaches θ only through m + floor (same argument; 0.001 by default)
    and v̄ through a sum in double, where it vanishes next to any partial
    sum above 2^-73. The next update of a just-flushed value,
    γ·x + (1−γ)·g² (or g, or |g|), equals the unflushed one as soon as the
    new term is 2^-101 or more. While the gradients stay smaller, both
    stay far below half an ulp of ε and may drift an ulp apart; such a
    difference can reach σ only through a rounding tie-break one ulp wide,
    so only contrived settings (ε or the floor near 2^-100, a gradient
    that stays below about 1e-15 and then grows) could see it, and the
    simulator's runs in the paper's settings write byte-identical CSVs
    with and without the flush. v is not flushed: after its first update
    it is at least (1−β)/σ, a normal number, and it multiplies the step,
    so flushing it would not be harmless; nor is gap-aware's C, where
    C = 0 means G = 1.

    It is written on the bits, |x| < FLT_MIN being an exponent field of
    zero: the same result as fabsf (x) < FLT_MIN ? 0 : x for each of the
    2^32 floats, NaNs and −0 included, but a select gcc vectorises with
    AVX2 and SSE too, where the comparison of floats left each span's
    statistics loop scalar (control flow), at 3.2 ns a parameter against
    1.3 vectorised (bench/rules.md, "The rules' update pass").  */
S_KERNEL float
s_flush (float x)
{
    uint32_t u;
    memcpy (&u, &x, sizeof u);
    u &= (u & 0x7fffffffu) < 0x00800000u ? 0u : 0xffffffffu;
    memcpy (&x, &u, sizeof x);
    return x;
}

typedef struct {
    float gam, omg;             /* γ, 1−γ */
    float bet, omb;             /* β, 1−β */
    float eps;                  /* ε */
    float step;                 /* α / max(τ,1) */
} s_std_coef_t;

/*  fasgd std (Odena, ALGORITHMS.md "fasgd"): the statistics take g first,
    then θ ← θ − (α/max(τ,1))·v·g. acc [k] sums σ of lane k in double,
    span after span. Each element's state is read and written once. len
    is S_STD_SPANS·S_LANES, S_LANES, or the tail's, less.  */
S_KERNEL void
s_std_span (const s_std_coef_t *c, const float *restrict g, float *restrict nn,
            float *restrict bb, float *restrict vv, double *restrict acc,
            float *restrict d, size_t len)
{
    float sig [S_STD_SPANS * S_LANES];
    for (size_t k = 0; k < len; k++) {
        float gk = g [k];
        float nk = s_flush (c->gam * nn [k] + c->omg * (gk * gk));  /* n ← γn + (1−γ)g² */
        float bk = s_flush (c->gam * bb [k] + c->omg * gk);         /* b ← γb + (1−γ)g */
        float var = nk - bk * bk;
        /*  n − b² ≥ 0 in exact arithmetic but float rounding can make it
            slightly negative; max(·, 0) (NaN-safe as written) keeps σ real.  */
        var = var > 0.0f ? var : 0.0f;
        nn [k] = nk;
        bb [k] = bk;
        sig [k] = var + c->eps;
    }
    if (len % S_LANES == 0)
        for (size_t q = 0; q < len; q += S_LANES)
            s_sqrt_lanes (sig + q);                          /* σ = sqrt(max(n−b²,0)+ε) */
    else
        for (size_t k = 0; k < len; k++)
            sig [k] = sqrtf (sig [k]);
    for (size_t k = 0; k < len; k++) {
        float vk = c->bet * vv [k] + c->omb / sig [k];       /* v ← βv + (1−β)/σ */
        vv [k] = vk;
        d [k] = c->step * vk * g [k];                        /* θ ← θ − (α/max(τ,1))·v·g */
    }
    /*  Four spans' σ into each lane in one expression: the same adds in
        the same order as span by span, with acc loaded and stored once
        rather than stored and loaded again between spans.  */
    if (len == S_STD_SPANS * S_LANES)
        for (size_t k = 0; k < S_LANES; k++)
            acc [k] = (((acc [k] + sig [k]) + sig [S_LANES + k]) + sig [2 * S_LANES + k]) + sig [3 * S_LANES + k];
    else if (len % S_LANES == 0)
        for (size_t q = 0; q < len; q += S_LANES)
            for (size_t k = 0; k < S_LANES; k++)
                acc [k] += sig [q + k];
    else
        for (size_t k = 0; k < len; k++)
            acc [k] += sig [k];
}

typedef struct {
    float dec, omd;             /* decay, 1−decay */
    float mfloor;               /* 0.001: bounds 1/(m + floor) */
    float step;                 /* α / (τ+1) */
} s_abs_coef_t;

/*  fasgd abs (the reference code): m ← 0.9m + 0.1|g| first (flushed, see
    s_flush), then θ ← θ − α·g / ((τ+1)·(m + 0.001)). The flush has a loop
    of its own: with the quotient and the double sum in the same loop gcc
    left the span scalar, at more than twice the time of the vectorised
    fasgd std.  */
S_KERNEL void
s_abs_span (const s_abs_coef_t *c, const float *restrict g, float *restrict mm,
            double *restrict acc, float *restrict d, size_t len)
{
    for (size_t k = 0; k < len; k++)
        mm [k] = s_flush (c->dec * mm [k] + c->omd * fabsf (g [k]));
    for (size_t k = 0; k < len; k++) {
        d [k] = c->step * g [k] / (mm [k] + c->mfloor);
        acc [k] += mm [k];
    }
}

/*  dcasgd (Zheng et al.): g̃ = g + λ_dc·g⊙g⊙(θ − θ_used); θ ← θ − α·g̃.  */
S_KERNEL void
s_dc_span (const float *restrict theta, const float *restrict g, const float *restrict used,
           float a, float lam, float *restrict d, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        float gk = g [k];
        float gt = gk + lam * gk * gk * (theta [k] - used [k]);
        d [k] = a * gt;
    }
}

/*  ε under DC-ASGD-a's square root: λ_t stays finite where MS is 0.  */
#define S_DCA_EPSILON 1e-7f

typedef struct {
    float dec, omd;             /* m, 1−m */
    float lam;                  /* λ_0 */
    float step;                 /* α */
} s_dca_coef_t;

/*  DC-ASGD-a (Zheng et al., the adaptive variant): MS ← m·MS + (1−m)·g²
    first, then λ_t = λ_0/sqrt(MS + ε) per parameter and dcasgd's step
    with λ_t: θ ← θ − α·(g + λ_t·g⊙g⊙(θ − θ_used)).  */
S_KERNEL void
s_dca_span (const s_dca_coef_t *c, const float *restrict theta, const float *restrict g,
            const float *restrict used, float *restrict ms, float *restrict d, size_t len)
{
    float root [S_LANES];
    for (size_t k = 0; k < len; k++) {
        float mk = s_flush (c->dec * ms [k] + c->omd * (g [k] * g [k]));
        ms [k] = mk;
        root [k] = mk + S_DCA_EPSILON;
    }
    if (len == S_LANES)
        s_sqrt_lanes (root);
    else
        for (size_t k = 0; k < len; k++)
            root [k] = sqrtf (root [k]);
    for (size_t k = 0; k < len; k++) {
        float gk = g [k];
        float gt = gk + (c->lam / root [k]) * gk * gk * (theta [k] - used [k]);
        d [k] = c->step * gt;
    }
}

typedef struct {
    float dec, omd;             /* γ_C, 1−γ_C */
    float step;                 /* α */
} s_gap_coef_t;

/*  take_a ? a : b, on the bits: no branch for gcc to thread back.  */
S_KERNEL float
s_select (int take_a, float a, float b)
{
    uint32_t ua, ub, m = 0u - (uint32_t) take_a;
    memcpy (&ua, &a, sizeof ua);
    memcpy (&ub, &b, sizeof ub);
    ua = (ua & m) | (ub & ~m);
    memcpy (&a, &ua, sizeof a);
    return a;
}

/*  gap-aware (Barkai et al.): G = 1 + |θ − θ_used|/C, or 1 while C is 0
    (the parameter has not moved yet: there is no step size to measure the
    gap in), Δ = α·g/G, θ ← θ − Δ, then C ← γ_C·C + (1−γ_C)·|Δ|.  */
S_KERNEL void
s_gap_span (const s_gap_coef_t *c, const float *restrict theta, const float *restrict g,
            const float *restrict used, float *restrict cc, float *restrict d, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        float ck = cc [k];
        float gap = fabsf (theta [k] - used [k]);
        /*  The quotient exists only for C > 0. Written as the ternary,
            gcc's default -ftrapping-math keeps the loop scalar (rewrites
            of floats that hide the condition get threaded back into a
            branch), at 4.5 ns a parameter; selected on the bits
            (s_select), the quotient by 1 where C is not above 0 is made
            and dropped, and the loop is vectorised, at 0.65 (D = 1M,
            AVX2, bench-rules): the same G.  */
        int moved = ck > 0.0f;
        float big = s_select (moved, 1.0f + gap / s_select (moved, ck, 1.0f), 1.0f);
        float delta = c->step * g [k] / big;
        d [k] = delta;
        cc [k] = c->dec * ck + c->omd * fabsf (delta);
    }
}

/*  ---- apply ----------------------------------------------------------  */

/*  α(τ) of sasgd and softsync.  */
static double
s_sasgd_alpha (const fasgd_rule_params_t *p, uint64_t tau)
{
    if (p->sasgd_form == FASGD_SASGD_PLUS_ONE)
        return p->lr / ((double) tau + 1.0);         /* α/(τ+1), in double: τ+1 may wrap */
    return tau == 0 ? p->lr : p->lr / (double) tau;  /* α/τ, and α at τ = 0 */
}

/*  Sums the S_LANES lane accumulators in a fixed order, divides by n.  */
static double
s_lanes_mean (const double *acc, size_t n)
{
    double sum = 0.0;
    for (int k = 0; k < S_LANES; k++)
        sum += acc [k];
    return sum / (double) n;
}

/*  What a staged pass (fasgd_rule_stage) sums of g as it reads it: its
    squares and, in r's spans, its products with r, a block of S_LANES at
    a time in the order of fasgd_floats_sumsq_dot_spans (whose spans
    start at multiples of 16 and end at one, or at n), so the same bits
    (common/floats.h). NULL where nothing is summed (fasgd_rule_apply).  */
typedef struct {
    const float *r;             /* NULL: the squares alone */
    const size_t *spans;
    size_t nspans;
    size_t s;                   /* the first span that does not end before the block */
    double sq [S_LANES], dt [S_LANES];
} s_score_t;

S_KERNEL void
s_score (s_score_t *sc, const float *g, size_t i, size_t len)
{
    if (!sc)
        return;
    if (sc->r) {
        while (sc->s < sc->nspans && sc->spans [2 * sc->s + 1] <= i)
            sc->s++;
        if (sc->s < sc->nspans && sc->spans [2 * sc->s] <= i) {
            fasgd_floats_sumsq_dot_block (g + i, sc->r + i, sc->sq, sc->dt, len);
            return;
        }
    }
    fasgd_floats_sumsq_block (g + i, sc->sq, len);
}

/*  Where a pass writes the rule's state: in place (out is the rule's
    vectors, copy 0), or into the stage's vectors (copy 1), into which
    each span of the state is copied first and then updated there by the
    same kernel: the same bits as in place, and the state itself is only
    read.  */
S_KERNEL void
s_state_copy (float *const *out, float *const *in, int nvec, int copy, size_t i, size_t len)
{
    if (copy)
        for (int k = 0; k < nvec; k++)
            memcpy (out [k] + i, in [k] + i, len * sizeof (float));
}

/*  Each s_*_loop reads θ from tin and writes it to tout, which is either
    tin itself or a buffer that does not overlap it, the state into out
    (s_state_copy), and sums g into sc (s_score). d holds one span's
    step. Each is compiled twice, always inlined into a clone that
    applies (fasgd_rule_apply: the rule's vectors, no sums) and one that
    stages (fasgd_rule_stage), so that neither pays for the other.  */

/*  fasgd std; returns v̄.  */
S_KERNEL double
s_std_loop (fasgd_rule_t *self, float *tout, const float *tin, const float *g, uint64_t tau,
            float *const *out, int copy, s_score_t *sc)
{
    const fasgd_rule_params_t *p = &self->p;
    s_std_coef_t c = {
        .gam = (float) p->gamma, .omg = (float) (1.0 - p->gamma),
        .bet = (float) p->beta,  .omb = (float) (1.0 - p->beta),
        .eps = (float) p->epsilon,
        .step = (float) (p->staleness == FASGD_STALENESS_IGNORE || tau <= 1
                         ? p->lr : p->lr / (double) tau)
    };
    float *nn = out [0], *bb = out [1], *vv = out [2];
    double acc [S_LANES] = { 0 };
    float d [S_STD_SPANS * S_LANES];
    size_t i = 0;
    const size_t wide = S_STD_SPANS * S_LANES;
    for (; i + wide <= self->n; i += wide) {
        s_state_copy (out, self->vec, 3, copy, i, wide);
        s_std_span (&c, g + i, nn + i, bb + i, vv + i, acc, d, wide);
        s_write (tin + i, tout + i, d, wide);
        for (size_t q = 0; q < wide; q += S_LANES)
            s_score (sc, g, i + q, S_LANES);
    }
    for (; i + S_LANES <= self->n; i += S_LANES) {
        s_state_copy (out, self->vec, 3, copy, i, S_LANES);
        s_std_span (&c, g + i, nn + i, bb + i, vv + i, acc, d, S_LANES);
        s_write (tin + i, tout + i, d, S_LANES);
        s_score (sc, g, i, S_LANES);
    }
    s_state_copy (out, self->vec, 3, copy, i, self->n - i);
    s_std_span (&c, g + i, nn + i, bb + i, vv + i, acc, d, self->n - i);
    s_write (tin + i, tout + i, d, self->n - i);
    s_score (sc, g, i, self->n - i);
    return s_lanes_mean (acc, self->n);
}

/*  fasgd abs; returns v̄.  */
S_KERNEL double
s_abs_loop (fasgd_rule_t *self, float *tout, const float *tin, const float *g, uint64_t tau,
            float *const *out, int copy, s_score_t *sc)
{
    const fasgd_rule_params_t *p = &self->p;
    s_abs_coef_t c = {
        .dec = (float) p->abs_decay, .omd = (float) (1.0 - p->abs_decay),
        .mfloor = (float) p->abs_floor,
        .step = (float) (p->staleness == FASGD_STALENESS_IGNORE
                         ? p->lr : p->lr / ((double) tau + 1.0))
    };
    float *mm = out [0];
    double acc [S_LANES] = { 0 };
    float d [S_LANES];
    size_t i = 0;
    for (; i + S_LANES <= self->n; i += S_LANES) {
        s_state_copy (out, self->vec, 1, copy, i, S_LANES);
        s_abs_span (&c, g + i, mm + i, acc, d, S_LANES);
        s_write (tin + i, tout + i, d, S_LANES);
        s_score (sc, g, i, S_LANES);
    }
    s_state_copy (out, self->vec, 1, copy, i, self->n - i);
    s_abs_span (&c, g + i, mm + i, acc, d, self->n - i);
    s_write (tin + i, tout + i, d, self->n - i);
    s_score (sc, g, i, self->n - i);
    return s_lanes_mean (acc, self->n);
}

S_KERNEL void
s_step_loop (fasgd_rule_t *self, float *tout, const float *tin, const float *g, float a, s_score_t *sc)
{
    float d [S_LANES];
    size_t i = 0;
    for (; i + S_LANES <= self->n; i += S_LANES) {
        s_step_span (g + i, a, d, S_LANES);
        s_write (tin + i, tout + i, d, S_LANES);
        s_score (sc, g, i, S_LANES);
    }
    s_step_span (g + i, a, d, self->n - i);
    s_write (tin + i, tout + i, d, self->n - i);
    s_score (sc, g, i, self->n - i);
}

/*  Zhang et al.'s n-softsync: buffer α(τ_l)·g_l, apply the mean of c.
    *pending: the gradients buffered, before and after; returns 1 when θ
    was written, 0 when g went into the buffer (out [0]).  */
S_KERNEL int
s_softsync_loop (fasgd_rule_t *self, float *tout, const float *tin, const float *g, uint64_t tau,
                 float *const *out, int copy, s_score_t *sc, uint64_t *pending)
{
    float a = (float) s_sasgd_alpha (&self->p, tau);
    uint64_t group = (uint64_t) self->p.softsync_group;
    if (group == 1) {
        /*  (1/1)·α(τ)·g is sasgd's step; taking its code path makes the
            two bitwise equal even where the compiler fuses a·g + θ.  */
        s_step_loop (self, tout, tin, g, a, sc);
        return 1;
    }
    float *buf = out [0];
    size_t n = self->n, i = 0;
    if (*pending + 1 < group) {
        if (*pending == 0) {
            for (; i + S_LANES <= n; i += S_LANES) {
                s_buffer_first_span (buf + i, g + i, a, S_LANES);
                s_score (sc, g, i, S_LANES);
            }
            s_buffer_first_span (buf + i, g + i, a, n - i);
            s_score (sc, g, i, n - i);
        }
        else {
            for (; i + S_LANES <= n; i += S_LANES) {
                s_state_copy (out, self->vec, 1, copy, i, S_LANES);
                s_buffer_add_span (buf + i, g + i, a, S_LANES);
                s_score (sc, g, i, S_LANES);
            }
            s_state_copy (out, self->vec, 1, copy, i, n - i);
            s_buffer_add_span (buf + i, g + i, a, n - i);
            s_score (sc, g, i, n - i);
        }
        ++*pending;
        return 0;
    }
    /*  The c-th gradient is added and the sum applied in one pass; the
        buffer is then logically empty (pending = 0), its contents stale.
        It is only read: the rule's own, staged or not.  */
    const float *full = self->vec [0];
    float cf = (float) group, d [S_LANES];
    for (; i + S_LANES <= n; i += S_LANES) {
        s_buffer_apply_span (full + i, g + i, a, cf, d, S_LANES);
        s_write (tin + i, tout + i, d, S_LANES);
        s_score (sc, g, i, S_LANES);
    }
    s_buffer_apply_span (full + i, g + i, a, cf, d, n - i);
    s_write (tin + i, tout + i, d, n - i);
    s_score (sc, g, i, n - i);
    *pending = 0;
    return 1;
}

S_KERNEL void
s_dc_loop (fasgd_rule_t *self, float *tout, const float *tin, const float *g, const float *used, s_score_t *sc)
{
    float a = (float) self->p.lr, lam = (float) self->p.dc_lambda, d [S_LANES];
    size_t i = 0;
    for (; i + S_LANES <= self->n; i += S_LANES) {
        s_dc_span (tin + i, g + i, used + i, a, lam, d, S_LANES);
        s_write (tin + i, tout + i, d, S_LANES);
        s_score (sc, g, i, S_LANES);
    }
    s_dc_span (tin + i, g + i, used + i, a, lam, d, self->n - i);
    s_write (tin + i, tout + i, d, self->n - i);
    s_score (sc, g, i, self->n - i);
}

S_KERNEL void
s_dca_loop (fasgd_rule_t *self, float *tout, const float *tin, const float *g, const float *used,
            float *const *out, int copy, s_score_t *sc)
{
    s_dca_coef_t c = {
        .dec = (float) self->p.dc_momentum, .omd = (float) (1.0 - self->p.dc_momentum),
        .lam = (float) self->p.dc_lambda, .step = (float) self->p.lr
    };
    float *ms = out [0], d [S_LANES];
    size_t i = 0;
    for (; i + S_LANES <= self->n; i += S_LANES) {
        s_state_copy (out, self->vec, 1, copy, i, S_LANES);
        s_dca_span (&c, tin + i, g + i, used + i, ms + i, d, S_LANES);
        s_write (tin + i, tout + i, d, S_LANES);
        s_score (sc, g, i, S_LANES);
    }
    s_state_copy (out, self->vec, 1, copy, i, self->n - i);
    s_dca_span (&c, tin + i, g + i, used + i, ms + i, d, self->n - i);
    s_write (tin + i, tout + i, d, self->n - i);
    s_score (sc, g, i, self->n - i);
}

S_KERNEL void
s_gap_loop (fasgd_rule_t *self, float *tout, const float *tin, const float *g, const float *used,
            float *const *out, int copy, s_score_t *sc)
{
    s_gap_coef_t c = {
        .dec = (float) self->p.gap_decay, .omd = (float) (1.0 - self->p.gap_decay),
        .step = (float) self->p.lr
    };
    float *cc = out [0], d [S_LANES];
    size_t i = 0;
    for (; i + S_LANES <= self->n; i += S_LANES) {
        s_state_copy (out, self->vec, 1, copy, i, S_LANES);
        s_gap_span (&c, tin + i, g + i, used + i, cc + i, d, S_LANES);
        s_write (tin + i, tout + i, d, S_LANES);
        s_score (sc, g, i, S_LANES);
    }
    s_state_copy (out, self->vec, 1, copy, i, self->n - i);
    s_gap_span (&c, tin + i, g + i, used + i, cc + i, d, self->n - i);
    s_write (tin + i, tout + i, d, self->n - i);
    s_score (sc, g, i, self->n - i);
}

/*  One pass of the rule: in place into its own state (stage 0: its
    vectors, no sums), or staged (stage 1: into self->stage, summing g
    into sc). Returns 1 when θ was written, 0 when softsync buffered g;
    sets *vbar and *pending to the rule's after the pass.  */
S_KERNEL int
s_pass (fasgd_rule_t *self, float *tout, const float *tin, const float *g, uint64_t tau, const float *used,
        int stage, s_score_t *sc, double *vbar, uint64_t *pending)
{
    float *const *out = stage ? self->stage : self->vec;
    *vbar = self->vbar;
    *pending = self->pending;
    switch (self->p.kind) {
        case FASGD_RULE_ASGD:
            s_step_loop (self, tout, tin, g, (float) self->p.lr, sc);
            return 1;
        case FASGD_RULE_SASGD:
            s_step_loop (self, tout, tin, g, (float) s_sasgd_alpha (&self->p, tau), sc);
            return 1;
        case FASGD_RULE_SOFTSYNC:
            return s_softsync_loop (self, tout, tin, g, tau, out, stage, sc, pending);
        case FASGD_RULE_FASGD:
            *vbar = self->p.statistic == FASGD_STAT_STD ? s_std_loop (self, tout, tin, g, tau, out, stage, sc)
                                                         : s_abs_loop (self, tout, tin, g, tau, out, stage, sc);
            return 1;
        case FASGD_RULE_DCASGD:
            if (self->p.dc_adaptive)
                s_dca_loop (self, tout, tin, g, used, out, stage, sc);
            else
                s_dc_loop (self, tout, tin, g, used, sc);
            return 1;
        case FASGD_RULE_GAPAWARE:
            s_gap_loop (self, tout, tin, g, used, out, stage, sc);
            return 1;
        default:
            assert (0 && "kind checked in fasgd_rule_new");
            return 1;
    }
}

S_MULTIVERSION static int
s_pass_apply (fasgd_rule_t *self, float *tout, const float *tin, const float *g, uint64_t tau, const float *used)
{
    double vbar;
    uint64_t pending;
    int rc = s_pass (self, tout, tin, g, tau, used, 0, NULL, &vbar, &pending);
    self->vbar = vbar;
    self->pending = pending;
    return rc;
}

/*  The sums are this function's own (sc does not escape it), so that
    gcc keeps them in registers, as fasgd_floats_sumsq_dot_spans does:
    summed through a pointer from outside, every block's sums went
    through memory, and the pass was a quarter slower than the two it
    replaces.  */
S_MULTIVERSION static int
s_pass_stage (fasgd_rule_t *self, float *tout, const float *tin, const float *g, uint64_t tau, const float *used,
              const float *r, const size_t *spans, size_t nspans, double *sumsq, double *dot)
{
    s_score_t sc = { .r = r, .spans = spans, .nspans = r ? nspans : 0 };
    int rc = s_pass (self, tout, tin, g, tau, used, 1, &sc, &self->stage_vbar, &self->stage_pending);
    double sq = 0, dt = 0;
    for (int k = 0; k < S_LANES; k++) {
        sq += sc.sq [k];
        dt += sc.dt [k];
    }
    *sumsq = sq;
    *dot = dt;
    return rc;
}

/*  1 when [a, a+n) and [b, b+n) share a float.  */
static int
s_overlap (const float *a, const float *b, size_t n)
{
    uintptr_t x = (uintptr_t) a, y = (uintptr_t) b, len = n * sizeof (float);
    return x < y + len && y < x + len;
}

static int
s_apply (fasgd_rule_t *self, float *tout, const float *tin, const float *g, uint64_t tau,
         const float *theta_used)
{
    size_t n = self->n;
    int needs_used = fasgd_rule_needs_theta_used (self);
    if (needs_used && !theta_used)
        return -2;
    /*  The kernels take restrict pointers: overlap is the caller's bug.
        θ_used may be θ itself when θ is not written (τ = 0, into).  */
    assert (!s_overlap (tout, g, n));
    assert (!needs_used || !s_overlap (tout, theta_used, n));
    assert (tout == tin || !s_overlap (tout, tin, n));

    /*  A first pass so that a bad gradient (a peer's NaN) touches nothing.  */
    if (!self->checked && fasgd_floats_any_nonfinite (g, n))
        return -1;
    /*  The state changes under a stage not yet committed.  */
    self->staged = 0;
    return s_pass_apply (self, tout, tin, g, tau, theta_used);
}

void
fasgd_rule_gradients_checked (fasgd_rule_t *self)
{
    self->checked = 1;
}

int
fasgd_rule_apply (fasgd_rule_t *self, float *theta, const float *g, uint64_t tau,
                  const float *theta_used)
{
    assert (self && theta && g);
    return s_apply (self, theta, theta, g, tau, theta_used);
}

int
fasgd_rule_apply_into (fasgd_rule_t *self, float *theta_new, const float *theta,
                       const float *g, uint64_t tau, const float *theta_used)
{
    assert (self && theta_new && theta && g);
    return s_apply (self, theta_new, theta, g, tau, theta_used);
}

int
fasgd_rule_stage (fasgd_rule_t *self, float *theta_new, const float *theta, const float *g, uint64_t tau,
                  const float *theta_used, const float *r, const size_t *spans, size_t nspans, double *sumsq,
                  double *dot)
{
    assert (self && theta_new && theta && g && sumsq && dot);
    size_t n = self->n;
    self->staged = 0;
    int needs_used = fasgd_rule_needs_theta_used (self);
    if (needs_used && !theta_used)
        return -2;
    assert (!s_overlap (theta_new, g, n));
    assert (!s_overlap (theta_new, theta, n));
    assert (!needs_used || !s_overlap (theta_new, theta_used, n));
    for (int k = 0; k < self->nvec; k++)
        if (!self->stage [k] && !(self->stage [k] = malloc (n * sizeof (float))))
            return -4;
    int rc = s_pass_stage (self, theta_new, theta, g, tau, theta_used, r, spans, nspans, sumsq, dot);
    /*  What the pass wrote of the state: every vector, but the buffer of
        softsync's c-th gradient, which is only read.  */
    self->stage_vectors = self->p.kind != FASGD_RULE_SOFTSYNC || rc == 0;
    self->staged = 1;
    return rc;
}

int
fasgd_rule_stage_vectors (const fasgd_rule_t *self)
{
    return self->nvec;
}

void
fasgd_rule_commit (fasgd_rule_t *self)
{
    assert (self->staged);
    if (self->stage_vectors)
        for (int k = 0; k < self->nvec; k++) {
            float *v = self->vec [k];
            self->vec [k] = self->stage [k];
            self->stage [k] = v;
        }
    self->vbar = self->stage_vbar;
    self->pending = self->stage_pending;
    self->staged = 0;
}

/*  ---- checkpoint state -----------------------------------------------  */

static uint32_t
s_variant (const fasgd_rule_t *self)
{
    if (self->p.kind == FASGD_RULE_FASGD)
        return (uint32_t) self->p.statistic;
    if (self->p.kind == FASGD_RULE_SOFTSYNC)
        return (uint32_t) self->p.softsync_group;
    if (self->p.kind == FASGD_RULE_DCASGD)
        return (uint32_t) self->p.dc_adaptive;
    return 0;
}

size_t
fasgd_rule_state_size (const fasgd_rule_t *self)
{
    return sizeof (s_state_header_t) + (size_t) self->nvec * self->n * sizeof (float);
}

double
fasgd_rule_state_max_abs (const fasgd_rule_t *self)
{
    double m = 0;
    for (int k = 0; k < self->nvec; k++) {
        double x = fasgd_floats_max_abs (self->vec [k], self->n);
        m = x > m || x != x ? x : m;
    }
    return m;
}

void
fasgd_rule_state_get (const fasgd_rule_t *self, void *buf)
{
    s_state_header_t h;
    memset (&h, 0, sizeof h);
    h.magic = S_STATE_MAGIC;
    h.version = S_STATE_VERSION;
    h.kind = (uint32_t) self->p.kind;
    h.variant = s_variant (self);
    h.n = self->n;
    h.pending = self->pending;
    h.vbar = self->vbar;
    unsigned char *out = buf;
    memcpy (out, &h, sizeof h);
    out += sizeof h;
    size_t bytes = self->n * sizeof (float);
    for (int k = 0; k < self->nvec; k++, out += bytes) {
        /*  An empty softsync buffer holds stale sums: write zeros so equal
            states give equal blobs.  */
        if (self->p.kind == FASGD_RULE_SOFTSYNC && self->pending == 0)
            memset (out, 0, bytes);
        else
            memcpy (out, self->vec [k], bytes);
    }
}

int
fasgd_rule_state_check (const void *buf, size_t len, uint64_t n, char *err, size_t errlen)
{
    s_state_header_t h;
    if (!buf || len < sizeof h)
        return fasgd_errbuf (err, errlen, "rule state of %zu bytes, shorter than its %zu-byte header",
                             len, sizeof h);
    memcpy (&h, buf, sizeof h);
    if (h.magic != S_STATE_MAGIC || h.version != S_STATE_VERSION)
        return fasgd_errbuf (err, errlen, "rule state: magic %08x version %u, expected %08x version %u "
                             "(another format or byte order)", (unsigned) h.magic, (unsigned) h.version,
                             S_STATE_MAGIC, S_STATE_VERSION);
    if (h.n != n)
        return fasgd_errbuf (err, errlen, "rule state for %llu parameters, expected %llu",
                             (unsigned long long) h.n, (unsigned long long) n);
    size_t floats = (len - sizeof h) / sizeof (float);
    if ((len - sizeof h) % sizeof (float) != 0 || n == 0 || floats % n != 0 || floats / n > 3)
        return fasgd_errbuf (err, errlen, "rule state of %zu bytes is not a header and whole "
                             "vectors of %llu floats", len, (unsigned long long) n);
    if (!isfinite (h.vbar) || h.vbar < 0.0)
        return fasgd_errbuf (err, errlen, "rule state: v-bar is %g", h.vbar);
    /*  The vectors follow the header at any alignment: check them a span
        at a time through an aligned copy.  */
    const unsigned char *in = (const unsigned char *) buf + sizeof h;
    float span [256];
    for (size_t i = 0; i < floats; ) {
        size_t k = floats - i < 256 ? floats - i : 256;
        memcpy (span, in + i * sizeof (float), k * sizeof (float));
        if (fasgd_floats_any_nonfinite (span, k)) {
            for (size_t j = 0; j < k; j++)
                if (!isfinite (span [j]))
                    return fasgd_errbuf (err, errlen, "rule state: element %zu of vector %zu is %g",
                                         (size_t) ((i + j) % n), (size_t) ((i + j) / n), (double) span [j]);
        }
        i += k;
    }
    return 0;
}

int
fasgd_rule_state_set (fasgd_rule_t *self, const void *buf, size_t len)
{
    s_state_header_t h;
    if (!buf) {
        fasgd_log_error ("rule state: no buffer");
        return -1;
    }
    if (len != fasgd_rule_state_size (self)) {
        fasgd_log_error ("rule state: %zu bytes, expected %zu for %s with %zu parameters",
                         len, fasgd_rule_state_size (self),
                         fasgd_rule_kind_name (self->p.kind), self->n);
        return -1;
    }
    memcpy (&h, buf, sizeof h);
    if (h.magic != S_STATE_MAGIC || h.version != S_STATE_VERSION) {
        fasgd_log_error ("rule state: magic %08x version %u, expected %08x version %u "
                         "(another format or byte order)", (unsigned) h.magic,
                         (unsigned) h.version, S_STATE_MAGIC, S_STATE_VERSION);
        return -1;
    }
    if (h.kind != (uint32_t) self->p.kind || h.variant != s_variant (self) || h.n != self->n) {
        fasgd_log_error ("rule state: saved for %s (variant %u, %llu parameters), "
                         "this rule is %s (variant %u, %zu parameters)",
                         fasgd_rule_kind_name ((int) h.kind), (unsigned) h.variant,
                         (unsigned long long) h.n, fasgd_rule_kind_name (self->p.kind),
                         (unsigned) s_variant (self), self->n);
        return -1;
    }
    uint64_t group = self->p.kind == FASGD_RULE_SOFTSYNC ? (uint64_t) self->p.softsync_group : 1;
    if (h.pending >= group || !isfinite (h.vbar) || h.vbar < 0.0) {
        fasgd_log_error ("rule state: inconsistent (pending %llu, v-bar %g)",
                         (unsigned long long) h.pending, h.vbar);
        return -1;
    }
    char err [160];
    if (fasgd_rule_state_check (buf, len, self->n, err, sizeof err) != 0) {
        fasgd_log_error ("%s", err);
        return -1;
    }
    const unsigned char *in = (const unsigned char *) buf + sizeof h;
    size_t bytes = self->n * sizeof (float);
    for (int k = 0; k < self->nvec; k++, in += bytes)
        memcpy (self->vec [k], in, bytes);
    self->staged = 0;
    self->pending = h.pending;
    self->vbar = h.vbar;
    return 0;
}
