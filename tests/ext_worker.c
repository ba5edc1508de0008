/*  ext_worker: a client of an external model (the server holds θ and
    no model of its own), for tests/test_trusted.sh. Its model is the
    quadratic ½‖θ − 1‖²: an honest gradient at θ is θ − 1 plus noise of
    --noise per value (a minibatch's), seeded by --seed. It pushes what
    --mode makes of it:

      honest      the gradient
      negate      the gradient negated and scaled by --factor (9.9): just
                  under the guard's bound of ten times an honest norm

    Each step fetches θ, computes, pushes; a refused push (422) is
    counted and the worker goes on. After --steps pushes it prints

      ext_worker: NAME: pushes P refused R distance D0 -> D

    (D: ‖θ − 1‖ at the first fetch and the last) and, with --hold, waits
    for SIGTERM or SIGINT before leaving; exits 0, 1 on an error other
    than a refusal, 2 when it cannot start. With --server-key and --cert
    it speaks CURVE with that certificate's key.

    Usage: ext_worker -s PUSH -f FETCH [--mode MODE] [--steps N]
           [--seed S] [--noise X] [--factor F] [--delay-ms D] [--name NAME]
           [--hold] [--server-key FILE --cert FILE]  */
#include "client.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t s_stop;

static void
s_on_signal (int sig)
{
    (void) sig;
    s_stop = 1;
}

/*  A normal draw (Box-Muller) from the state *x (xorshift64).  */
static double
s_normal (uint64_t *x)
{
    double u [2];
    for (int k = 0; k < 2; k++) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        u [k] = ((double) (*x >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt (-2 * log (u [0])) * cos (6.283185307179586 * u [1]);
}

static double
s_distance (const float *theta, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++)
        d += ((double) theta [i] - 1) * ((double) theta [i] - 1);
    return sqrt (d);
}

int
main (int argc, char **argv)
{
    const char *push = NULL, *fetch = NULL, *mode = "honest", *name = "ext", *server_key = NULL, *cert = NULL;
    long steps = 100, delay_ms = 0;
    uint64_t seed = 1;
    double noise = 1, factor = 9.9;
    int hold = 0;
    static const struct option opts [] = {
        { "push", required_argument, NULL, 's' }, { "fetch", required_argument, NULL, 'f' },
        { "mode", required_argument, NULL, 'm' }, { "steps", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 'S' }, { "noise", required_argument, NULL, 'x' },
        { "factor", required_argument, NULL, 'F' }, { "delay-ms", required_argument, NULL, 'd' },
        { "name", required_argument, NULL, 'N' }, { "hold", no_argument, NULL, 'H' },
        { "server-key", required_argument, NULL, 'k' }, { "cert", required_argument, NULL, 'c' },
        { NULL, 0, NULL, 0 }
    };
    int o;
    while ((o = getopt_long (argc, argv, "s:f:", opts, NULL)) != -1) {
        switch (o) {
            case 's': push = optarg; break;
            case 'f': fetch = optarg; break;
            case 'm': mode = optarg; break;
            case 'n': steps = strtol (optarg, NULL, 10); break;
            case 'S': seed = strtoull (optarg, NULL, 10); break;
            case 'x': noise = strtod (optarg, NULL); break;
            case 'F': factor = strtod (optarg, NULL); break;
            case 'd': delay_ms = strtol (optarg, NULL, 10); break;
            case 'N': name = optarg; break;
            case 'H': hold = 1; break;
            case 'k': server_key = optarg; break;
            case 'c': cert = optarg; break;
            default: return 2;
        }
    }
    int negate = strcmp (mode, "negate") == 0;
    if (!push || !fetch || (!negate && strcmp (mode, "honest") != 0) || steps < 1) {
        fprintf (stderr, "usage: ext_worker -s PUSH -f FETCH [--mode honest|negate] [--steps N] ...\n");
        return 2;
    }
    signal (SIGINT, s_on_signal);
    signal (SIGTERM, s_on_signal);
    fasgd_client_t *c = fasgd_client_new (push, fetch);
    if (!c)
        return 2;
    fasgd_client_set_timeout (c, 10000);
    if (server_key && fasgd_client_set_curve (c, server_key, cert) != 0) {
        fprintf (stderr, "ext_worker: %s: %s\n", name, fasgd_client_last_reason (c));
        fasgd_client_destroy (&c);
        return 2;
    }
    int rc = fasgd_client_join (c, name);
    if (rc != 0) {
        fprintf (stderr, "ext_worker: %s: join: %s (%s)\n", name, fasgd_client_strerror (rc),
                 fasgd_client_last_reason (c));
        fasgd_client_destroy (&c);
        return 2;
    }
    size_t n = fasgd_client_nparams (c);
    float *theta = malloc (n * sizeof (float)), *grad = malloc (n * sizeof (float));
    uint64_t ts = 0, x = 0x9e3779b97f4a7c15ull ^ (seed * 0xbf58476d1ce4e5b9ull);
    long pushes = 0, refused = 0;
    double d0 = -1;
    rc = theta && grad ? 0 : FASGD_CLIENT_ENOMEM;
    while (rc >= 0 && !s_stop && pushes + refused < steps) {
        if ((rc = fasgd_client_fetch (c, theta, &ts, 0)) < 0)
            break;
        if (d0 < 0)
            d0 = s_distance (theta, n);
        for (size_t i = 0; i < n; i++) {
            double g = (double) theta [i] - 1 + noise * s_normal (&x);
            grad [i] = (float) (negate ? -factor * g : g);
        }
        rc = fasgd_client_push (c, grad, ts);
        if (rc >= 0)
            pushes++;
        else if (rc == FASGD_CLIENT_EREFUSED && fasgd_client_last_status (c) == FASGD_STATUS_NONFINITE) {
            refused++;
            rc = 0;
        }
        if (delay_ms > 0)
            usleep ((useconds_t) delay_ms * 1000);
    }
    if (rc >= 0)
        rc = fasgd_client_fetch (c, theta, &ts, 0);
    if (rc < 0 && !s_stop)
        fprintf (stderr, "ext_worker: %s: %s (%s)\n", name, fasgd_client_strerror (rc), fasgd_client_last_reason (c));
    printf ("ext_worker: %s: pushes %ld refused %ld distance %.4g -> %.4g\n", name, pushes, refused, d0,
            rc >= 0 ? s_distance (theta, n) : -1.0);
    fflush (stdout);
    while (hold && !s_stop)
        usleep (20000);
    fasgd_client_leave (c);
    fasgd_client_destroy (&c);
    free (theta);
    free (grad);
    return rc < 0 && !s_stop ? 1 : 0;
}
