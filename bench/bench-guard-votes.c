/*  bench-guard-votes: what the guard's median of votes costs a push when
    many clients vote. fasgd-server's guard (server/guard.c) keeps one
    vote a client (their typical norms) and takes their weighted lower
    median again every FASGD_VERDICT_MEDIAN_EVERY pushes once more than
    that many vote, grouping the voters by CURVE key or source address
    first (s_median_update). This drives the guard in-process, as the
    server's poll loop does (fasgd_srv_guard_check, then _accepted), with
    gradients of D values and no reference (the guard judges sizes only,
    as for an external model or a shard, where the votes bound the
    pushes), and times pushes from one client against pushes from N
    clients in turn, in alternating slices of each round; the difference
    is what the votes cost. The N clients come from A addresses (as
    guard.address_votes groups them), or each from its own.

    Usage: bench-guard-votes [--clients N] [--addresses A] [--dim D]
                             [--pushes P] [--rounds R]

    Prints, per round and as medians: microseconds a push with one
    client and with N, their difference, and the pushes accepted (every
    one should be: the bench pushes honest-looking norms).  */
#include "bench-util.h"

#include "guard.h"
#include "params.h"
#include "registry.h"
#include "rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_GRADS 8                       /* gradients pushed in turn, of norms 0.9 to 1.1 */

typedef struct {
    fasgd_server_cfg_t cfg;
    fasgd_srv_stats_t st;
    fasgd_srv_params_t *params;
    float *scratch;
    fasgd_srv_guard_t *guard;
    fasgd_srv_registry_t *reg;
    fasgd_srv_client_t **clients;
    size_t nclients;
    float *grads [S_GRADS];
    size_t dim;
    unsigned long accepted, pushed;
} s_engine_t;

static void
s_die (const char *what)
{
    fprintf (stderr, "bench-guard-votes: %s\n", what);
    exit (1);
}

static void
s_set (fasgd_server_cfg_t *cfg, const char *kv)
{
    if (fasgd_config_set (fasgd_server_cfg_keys, cfg, kv, stderr) != 0)
        s_die ("a configuration key was refused");
}

/*  A guard over θ of dim values (asgd), and n clients joined from
    `addresses` addresses (0: each its own).  */
static void
s_engine (s_engine_t *e, size_t dim, size_t n, size_t addresses)
{
    memset (e, 0, sizeof *e);
    e->dim = dim;
    if (fasgd_config_defaults (fasgd_server_cfg_keys, &e->cfg, stderr) != 0)
        s_die ("no defaults");
    char kv [64];
    snprintf (kv, sizeof kv, "limits.clients=%zu", n + 1);
    s_set (&e->cfg, kv);
    s_set (&e->cfg, "rule.name=asgd");
    fasgd_rule_params_t rp;
    fasgd_rule_cfg_to_params (&e->cfg.rule, e->cfg.clients, &rp);
    char err [256];
    fasgd_rule_t *rule = fasgd_rule_new (&rp, dim, err, sizeof err);
    if (!rule)
        s_die (err);
    fasgd_rule_gradients_checked (rule);
    e->params = fasgd_srv_params_new (&rule, dim, dim, 0, FASGD_WIRE_F32, 0);
    e->scratch = calloc (dim, sizeof (float));
    if (!e->params || !e->scratch)
        s_die ("out of memory");
    for (size_t i = 0; i < dim; i++)
        e->params->theta [i] = 0.01f;
    e->guard = fasgd_srv_guard_new (&e->cfg, e->params, e->scratch, &e->st);
    e->reg = e->guard ? fasgd_srv_registry_new (&e->cfg, dim, 0, 0, e->guard, &e->st) : NULL;
    e->clients = calloc (n, sizeof *e->clients);
    if (!e->reg || !e->clients)
        s_die ("out of memory");
    for (size_t k = 0; k < n; k++) {
        char name [32], why [256] = "";
        snprintf (name, sizeof name, "bench-%zu", k);
        fasgd_srv_client_t *c = fasgd_srv_registry_join (e->reg, name, strlen (name), NULL, NULL, 0, why, sizeof why);
        if (!c)
            s_die (why);
        size_t a = addresses ? k % addresses : k;
        snprintf (c->addr, sizeof c->addr, "10.%zu.%zu.%zu", (a >> 16) & 255, (a >> 8) & 255, a & 255);
        e->clients [k] = c;
    }
    e->nclients = n;
    for (int j = 0; j < S_GRADS; j++) {
        if (!(e->grads [j] = malloc (dim * sizeof (float))))
            s_die ("out of memory");
        double norm = 0.9 + 0.2 * j / (S_GRADS - 1);
        for (size_t i = 0; i < dim; i++)
            e->grads [j] [i] = (float) (norm / sqrt ((double) dim) * (i % 2 ? 1 : -1));
    }
}

static void
s_engine_end (s_engine_t *e)
{
    fasgd_srv_registry_destroy (&e->reg);
    fasgd_srv_guard_destroy (&e->guard);
    fasgd_srv_params_destroy (&e->params);
    free (e->scratch);
    free (e->clients);
    for (int j = 0; j < S_GRADS; j++)
        free (e->grads [j]);
}

/*  Pushes `pushes` gradients from the first m clients in turn, as the
    server does (judged, then accepted or refused); seconds taken.  */
static double
s_push (s_engine_t *e, size_t m, long pushes, unsigned long *turn)
{
    double t0 = fasgd_bench_now ();
    for (long p = 0; p < pushes; p++) {
        fasgd_srv_client_t *c = e->clients [*turn % m];
        const float *g = e->grads [*turn % S_GRADS];
        (*turn)++;
        double weight, norm;
        char why [256];
        e->pushed++;
        if (fasgd_srv_guard_check (e->guard, c, &g, 0, 0, &weight, &norm, why, sizeof why) == 0) {
            fasgd_srv_guard_accepted (e->guard, c, g, 0, norm, 0);
            e->accepted++;
        }
        else
            fasgd_srv_guard_refused (e->guard, c);
    }
    return fasgd_bench_now () - t0;
}

int
main (int argc, char **argv)
{
    long clients = 10000, addresses = 0, dim = 79510, pushes = 20000, rounds = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv [i];
        if (!strcmp (a, "-h") || !strcmp (a, "--help")) {
            printf ("usage: bench-guard-votes [--clients N] [--addresses A] [--dim D] [--pushes P] [--rounds R]\n"
                    "  --clients N    clients that vote (default 10000)\n"
                    "  --addresses A  addresses they join from (default 0: each its own)\n"
                    "  --dim D        values in a gradient (default 79510, the MNIST MLP's)\n"
                    "  --pushes P     pushes a slice, from each side (default 20000)\n"
                    "  --rounds R     rounds, medians reported (default 5)\n");
            return 0;
        }
        if (strcmp (a, "--clients") && strcmp (a, "--addresses") && strcmp (a, "--dim") && strcmp (a, "--pushes")
            && strcmp (a, "--rounds")) {
            fprintf (stderr, "bench-guard-votes: unknown argument '%s' (see --help)\n", a);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf (stderr, "bench-guard-votes: %s needs a value (see --help)\n", a);
            return 2;
        }
        const char *v = argv [++i];
        if (!strcmp (a, "--clients"))
            clients = fasgd_bench_int_arg ("bench-guard-votes", a, v, 2, 1000000);
        else if (!strcmp (a, "--addresses"))
            addresses = fasgd_bench_int_arg ("bench-guard-votes", a, v, 0, 1000000);
        else if (!strcmp (a, "--dim"))
            dim = fasgd_bench_int_arg ("bench-guard-votes", a, v, 1, 100000000);
        else if (!strcmp (a, "--pushes"))
            pushes = fasgd_bench_int_arg ("bench-guard-votes", a, v, 1, 100000000);
        else
            rounds = fasgd_bench_int_arg ("bench-guard-votes", a, v, 1, 1000);
    }
    /*  Two guards: one with a single client, one with N, so that the
        single client's pushes meet no other votes.  */
    s_engine_t one, many;
    s_engine (&one, (size_t) dim, 1, 0);
    s_engine (&many, (size_t) dim, (size_t) clients, (size_t) addresses);
    unsigned long turn_one = 0, turn_many = 0;
    /*  Warm-up: every client votes once.  */
    s_push (&one, 1, 64, &turn_one);
    s_push (&many, (size_t) clients, clients, &turn_many);
    double *us1 = calloc ((size_t) rounds, sizeof (double)), *usn = calloc ((size_t) rounds, sizeof (double));
    double *diff = calloc ((size_t) rounds, sizeof (double));
    if (!us1 || !usn || !diff)
        s_die ("out of memory");
    char cpu [256];
    fasgd_bench_cpu_model (cpu, sizeof cpu);
    printf ("# %s, %ld CPUs online\n", cpu, sysconf (_SC_NPROCESSORS_ONLN));
    printf ("# %ld clients from %s, gradients of %ld values, %ld pushes a side a round\n", clients,
            addresses ? "A addresses" : "an address each", dim, pushes);
    if (addresses)
        printf ("# A = %ld\n", addresses);
    printf ("%-6s %12s %12s %12s\n", "round", "us/push 1", "us/push N", "N - 1");
    for (long r = 0; r < rounds; r++) {
        /*  Alternating slices, a tenth of the pushes each.  */
        double t1 = 0, tn = 0;
        long slice = pushes / 10 > 0 ? pushes / 10 : 1;
        for (long done = 0; done < pushes; done += slice) {
            long k = pushes - done < slice ? pushes - done : slice;
            t1 += s_push (&one, 1, k, &turn_one);
            tn += s_push (&many, (size_t) clients, k, &turn_many);
        }
        us1 [r] = 1e6 * t1 / (double) pushes;
        usn [r] = 1e6 * tn / (double) pushes;
        diff [r] = usn [r] - us1 [r];
        printf ("%-6ld %12.3f %12.3f %12.3f\n", r + 1, us1 [r], usn [r], diff [r]);
    }
    printf ("%-6s %12.3f %12.3f %12.3f\n", "median", fasgd_bench_median (us1, (int) rounds),
            fasgd_bench_median (usn, (int) rounds), fasgd_bench_median (diff, (int) rounds));
    printf ("accepted: %lu of %lu pushes with 1 client, %lu of %lu with %ld\n", one.accepted, one.pushed,
            many.accepted, many.pushed, clients);
    int ok = one.accepted == one.pushed && many.accepted == many.pushed;
    free (us1);
    free (usn);
    free (diff);
    s_engine_end (&one);
    s_engine_end (&many);
    if (!ok)
        fprintf (stderr, "bench-guard-votes: pushes were refused: the figures time refusals too\n");
    return ok ? 0 : 1;
}
