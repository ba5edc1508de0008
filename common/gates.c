/*  gates: always, every-k and B-FASGD transmission decisions, and a
    client's push and fetch policy around them.  */
#include "gates.h"
#include "log.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const fasgd_gate_kind_names [] = { "always", "every", "bfasgd", NULL };
#define S_NKINDS ((int) (sizeof fasgd_gate_kind_names / sizeof fasgd_gate_kind_names [0]) - 1)

void
fasgd_gate_params_default (fasgd_gate_params_t *p)
{
    memset (p, 0, sizeof *p);
    p->kind = FASGD_GATE_ALWAYS;
    p->every = 1;
    p->c = 0.0;
    p->eps = 1e-4;
}

int
fasgd_gate_params_check (const fasgd_gate_params_t *p, char *err, size_t errlen)
{
    if (p->kind < 0 || p->kind >= S_NKINDS)
        return fasgd_errbuf (err, errlen, "unknown gate kind %d", p->kind);
    if (p->every < 1)
        return fasgd_errbuf (err, errlen, "every must be >= 1 (got %d)", p->every);
    if (!(p->c >= 0.0 && isfinite (p->c)))
        return fasgd_errbuf (err, errlen, "c must be >= 0 and finite (got %g)", p->c);
    if (!(p->eps > 0.0 && isfinite (p->eps)))
        return fasgd_errbuf (err, errlen, "eps must be > 0 and finite (got %g)", p->eps);
    return 0;
}

const char *
fasgd_gate_kind_name (int kind)
{
    if (kind < 0 || kind >= S_NKINDS)
        return "?";
    return fasgd_gate_kind_names [kind];
}

int
fasgd_gate_kind_parse (const char *name)
{
    for (int i = 0; name && i < S_NKINDS; i++)
        if (strcmp (name, fasgd_gate_kind_names [i]) == 0)
            return i;
    return -1;
}

double
fasgd_gate_probability (const fasgd_gate_params_t *p, double vbar)
{
    switch (p->kind) {
        case FASGD_GATE_EVERY:
            return p->every > 1 ? 1.0 / p->every : 1.0;
        case FASGD_GATE_BFASGD: {
            /*  v̄ travels from the server: a NaN, an Inf or a negative value
                (none of which a correct server sends) must not make the
                probability leave [0, 1].  */
            if (!(isfinite (vbar) && vbar >= 0.0))
                vbar = 0.0;
            /*  Odena's form 1/(1 + c/(v̄+ε_g)): exactly 1 at c = 0, and a
                huge c/(v̄+ε_g) goes to +Inf and gives 0, never NaN.  */
            return 1.0 / (1.0 + p->c / (vbar + p->eps));
        }
        default:
            return 1.0;
    }
}

void
fasgd_gate_init (fasgd_gate_t *self, const fasgd_gate_params_t *p,
                 uint64_t seed, uint64_t stream)
{
    memset (self, 0, sizeof *self);
    self->p = *p;
    fasgd_rng_seed (&self->rng, seed, stream);
}

int
fasgd_gate_decide (fasgd_gate_t *self, double vbar)
{
    self->opportunities++;
    int send;
    switch (self->p.kind) {
        case FASGD_GATE_EVERY: {
            uint64_t k = self->p.every > 1 ? (uint64_t) self->p.every : 1;
            send = self->opportunities % k == 0;
            break;
        }
        case FASGD_GATE_BFASGD: {
            /*  Exactly one draw per opportunity, even when the outcome is
                certain, so the stream's position depends only on how many
                opportunities there were.  */
            double r = fasgd_rng_uniform (&self->rng);
            send = r < fasgd_gate_probability (&self->p, vbar);
            break;
        }
        default:
            send = 1;
            break;
    }
    self->transmissions += (uint64_t) send;
    return send;
}

void
fasgd_gate_force (fasgd_gate_t *self)
{
    self->opportunities++;
    self->transmissions++;
}

const char *const fasgd_push_skip_names [] = { "resend-last", "accumulate", NULL };

int
fasgd_push_skip_parse (const char *name)
{
    for (int i = 0; name && fasgd_push_skip_names [i]; i++)
        if (strcmp (name, fasgd_push_skip_names [i]) == 0)
            return i;
    return -1;
}

void
fasgd_gates_init (fasgd_gates_t *self, const fasgd_gate_params_t *push,
                  const fasgd_gate_params_t *fetch, int skip, uint64_t seed,
                  uint64_t push_stream, uint64_t fetch_stream)
{
    memset (self, 0, sizeof *self);
    fasgd_gate_init (&self->push, push, seed, push_stream);
    fasgd_gate_init (&self->fetch, fetch, seed, fetch_stream);
    self->skip = skip;
}

fasgd_tx_t
fasgd_gates_push (fasgd_gates_t *self, double vbar)
{
    int send;
    if (!self->pushed) {
        /*  The server has nothing of ours to repeat yet (a PUSH_REPEAT
            would get 409): the first push carries a gradient.  */
        fasgd_gate_force (&self->push);
        send = 1;
    }
    else
        send = fasgd_gate_decide (&self->push, vbar);
    if (send)
        return self->has_accum ? FASGD_TX_PUSH_SUM : FASGD_TX_PUSH;
    return self->skip == FASGD_PUSH_SKIP_RESEND_LAST ? FASGD_TX_REPEAT : FASGD_TX_KEEP;
}

int
fasgd_gates_fetch (fasgd_gates_t *self, double vbar)
{
    if (!self->fetched) {
        /*  Nothing to compute on yet: the first fetch is not optional.  */
        fasgd_gate_force (&self->fetch);
        return 1;
    }
    return fasgd_gate_decide (&self->fetch, vbar);
}

void
fasgd_gates_keep (fasgd_gates_t *self, float *sum, const float *g, size_t n)
{
    if (self->has_accum)
        for (size_t i = 0; i < n; i++)
            sum [i] += g [i];
    else
        memcpy (sum, g, n * sizeof (float));
    self->has_accum = 1;
}

void
fasgd_gates_sum (float *out, const float *sum, const float *g, size_t n)
{
    /*  The skipped gradients and this one, stamped with the timestamp of
        the parameters the newest was computed on.  */
    for (size_t i = 0; i < n; i++)
        out [i] = sum [i] + g [i];
}
