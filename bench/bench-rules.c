/*  bench-rules: what each update rule's pass costs the server and the
    simulator, in nanoseconds a parameter. For each rule it applies one
    gradient of D small values (1e-3 to 2e-3, either sign) over and over
    to θ, two ways: in place (fasgd_rule_apply, as the simulator and a
    server without the push guard do) and staged (fasgd_rule_stage into
    a second θ with the gradient's sum of squares, then
    fasgd_rule_commit, as the guarded server does for the rules without
    a state: server/params.c), the rules taking
    turns within each of R rounds so that a drift in the machine's load
    falls on all alike. It prints each rule's median (least–greatest)
    over the rounds, the multiple of asgd's median, and which of the
    kernels' builds (common/multiversion.h) the processor runs; and, timed
    in the same rounds, what fasgd std cannot do without: one square
    root and one division a parameter (y = 1/sqrt(x), compiled as the
    rules are), the floor of its pass where arithmetic bounds it, and its
    bytes without the arithmetic (three statistics and θ read and
    written, g read), the floor where memory does.

    Usage: bench-rules [--dim D] [--rounds R] [--rules LIST]
      --dim D       parameters (default 1000000)
      --rounds R    rounds (default 7)
      --rules LIST  rules, comma-separated (default
                    asgd,sasgd,fasgd,fasgd-abs,dcasgd,gap-aware; fasgd is
                    its std statistic, fasgd-abs the abs one)  */
#include "bench-util.h"

#include "multiversion.h"
#include "rules.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_RULES_MAX 16
#define S_ROUNDS_MAX 1000
#define S_WORK 200000000.0      /* parameters a round's timing covers, per rule and way */

static void
s_usage (FILE *f)
{
    fprintf (f, "usage: bench-rules [--dim D] [--rounds R] [--rules LIST]\n"
             "  --dim D       parameters (default 1000000)\n"
             "  --rounds R    rounds, the rules taking turns in each (default 7)\n"
             "  --rules LIST  comma-separated (default asgd,sasgd,fasgd,fasgd-abs,dcasgd,gap-aware;\n"
             "                fasgd is its std statistic, fasgd-abs the abs one)\n");
}

/*  The build of the kernels the loader picks here, as target_clones
    does: the widest the processor has.  */
static const char *
s_kernels (void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init ();
    if (__builtin_cpu_supports ("avx512f"))
        return "avx512f";
    if (__builtin_cpu_supports ("avx2"))
        return "avx2";
#endif
    return "default";
}

/*  fasgd std's σ and 1/σ alone: y = 1/sqrt(x), correctly rounded, in
    spans of 16 as the rules' kernels (a plain loop of both is left
    scalar by gcc).  */
FASGD_MULTIVERSION static void
s_root_div (float *restrict y, const float *restrict x, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        float r [16];
        for (int k = 0; k < 16; k++)
            r [k] = sqrtf (x [i + k]);
        for (int k = 0; k < 16; k++)
            y [i + k] = 1.0f / r [k];
    }
    for (; i < n; i++)
        y [i] = 1.0f / sqrtf (x [i]);
}

/*  fasgd std's bytes without its arithmetic: the three statistics and θ
    read and written, g read, with a multiply-add each, in spans of 16.  */
FASGD_MULTIVERSION static void
s_five_streams (float *restrict th, const float *restrict g, float *restrict a, float *restrict b,
                float *restrict c, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++) {
            float t = g [i + k];
            float x = 0.9f * a [i + k] + 0.1f * t * t, y = 0.9f * b [i + k] + 0.1f * t;
            float z = 0.9f * c [i + k] + 0.1f * (x - y);
            a [i + k] = x;
            b [i + k] = y;
            c [i + k] = z;
            th [i + k] -= 1e-3f * z * t;
        }
    for (; i < n; i++)
        th [i] -= 1e-3f * g [i];
}

/*  Nanoseconds a parameter of reps passes of each of fasgd std's floors,
    in turn: ns [0] the square roots and divisions (into y, from x), ns [1]
    the five streams (θ in y, g, the statistics a, b, c).  */
static void
s_time_floors (float *y, const float *x, const float *g, float *a, float *b, float *c, size_t n, int reps,
               double ns [2])
{
    for (int which = 0; which < 2; which++) {
        double t0 = fasgd_bench_now ();
        for (int i = 0; i < reps; i++) {
            if (which == 0)
                s_root_div (y, x, n);
            else
                s_five_streams (y, g, a, b, c, n);
        }
        ns [which] = (fasgd_bench_now () - t0) * 1e9 / ((double) reps * (double) n);
    }
}

/*  Nanoseconds a parameter one pass of rule costs, staged or in place,
    over reps passes.  */
static double
s_time (fasgd_rule_t *rule, int staged, float *theta, float *theta_new, const float *g, const float *used,
        size_t n, int reps)
{
    double sumsq, dot;
    double t0 = fasgd_bench_now ();
    for (int i = 0; i < reps; i++) {
        uint64_t tau = 1 + (uint64_t) (i & 3);
        int rc;
        if (staged) {
            rc = fasgd_rule_stage (rule, theta_new, theta, g, tau, used, NULL, NULL, 0, &sumsq, &dot);
            if (rc >= 0)
                fasgd_rule_commit (rule);
            float *t = theta;       /* the new θ is the next pass's θ */
            theta = theta_new;
            theta_new = t;
        }
        else
            rc = fasgd_rule_apply (rule, theta, g, tau, used);
        if (rc < 0) {
            fprintf (stderr, "bench-rules: the rule returned %d\n", rc);
            exit (1);
        }
    }
    return (fasgd_bench_now () - t0) * 1e9 / ((double) reps * (double) n);
}

int
main (int argc, char **argv)
{
    size_t n = 1000000;
    int rounds = 7;
    char list [512] = "asgd,sasgd,fasgd,fasgd-abs,dcasgd,gap-aware";
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--help") == 0 || strcmp (argv [i], "-h") == 0) {
            s_usage (stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            s_usage (stderr);
            return 2;
        }
        if (strcmp (argv [i], "--dim") == 0)
            n = (size_t) fasgd_bench_int_arg ("bench-rules", "--dim", argv [++i], 16, 100000000);
        else if (strcmp (argv [i], "--rounds") == 0)
            rounds = (int) fasgd_bench_int_arg ("bench-rules", "--rounds", argv [++i], 1, S_ROUNDS_MAX);
        else if (strcmp (argv [i], "--rules") == 0) {
            if (strlen (argv [++i]) >= sizeof list) {
                fprintf (stderr, "bench-rules: --rules: too long\n");
                return 2;
            }
            strcpy (list, argv [i]);
        }
        else {
            s_usage (stderr);
            return 2;
        }
    }
    const char *names [S_RULES_MAX];
    fasgd_rule_t *rules [S_RULES_MAX];
    int nrules = 0;
    char err [256];
    for (char *save = NULL, *tok = strtok_r (list, ",", &save); tok; tok = strtok_r (NULL, ",", &save)) {
        if (nrules == S_RULES_MAX) {
            fprintf (stderr, "bench-rules: --rules: at most %d\n", S_RULES_MAX);
            return 2;
        }
        fasgd_rule_params_t p;
        fasgd_rule_params_default (&p);
        p.lr = 0.001;
        int abs = strcmp (tok, "fasgd-abs") == 0;
        p.kind = fasgd_rule_kind_parse (abs ? "fasgd" : tok);
        p.statistic = abs ? FASGD_STAT_ABS : FASGD_STAT_STD;
        if (p.kind < 0) {
            fprintf (stderr, "bench-rules: --rules: unknown rule '%s'\n", tok);
            return 2;
        }
        if (!(rules [nrules] = fasgd_rule_new (&p, n, err, sizeof err))) {
            fprintf (stderr, "bench-rules: %s: %s\n", tok, err);
            return 1;
        }
        fasgd_rule_gradients_checked (rules [nrules]);      /* as the server, whose guard sums g² first */
        names [nrules++] = tok;
    }
    float *theta = calloc (n, sizeof (float)), *theta_new = calloc (n, sizeof (float));
    float *g = malloc (n * sizeof (float)), *used = calloc (n, sizeof (float));
    double (*ns) [2][S_ROUNDS_MAX] = calloc ((size_t) nrules, sizeof *ns);
    double floor_ns [2][S_ROUNDS_MAX], one [2];
    float *x = malloc (n * sizeof (float));
    float *sa = calloc (n, sizeof (float)), *sb = calloc (n, sizeof (float)), *sc = calloc (n, sizeof (float));
    if (!theta || !theta_new || !g || !used || !ns || !x || !sa || !sb || !sc) {
        fprintf (stderr, "bench-rules: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        g [i] = (i & 1 ? -1.0f : 1.0f) * (1e-3f + 1e-3f * (float) (i % 997) / 997.0f);
    for (size_t i = 0; i < n; i++)
        x [i] = g [i] * g [i] + 1e-4f;
    int reps = (int) (S_WORK / (double) n);
    reps = reps < 3 ? 3 : reps;
    char cpu [256];
    fasgd_bench_cpu_model (cpu, sizeof cpu);
    printf ("# bench-rules: D = %zu, %d rounds of %d passes a rule and way; CPU %s; kernels %s\n", n, rounds,
            reps, cpu, s_kernels ());
    /*  One untimed pass each: the state's pages and the stage's vectors
        are touched before the first round.  */
    for (int k = 0; k < nrules; k++) {
        s_time (rules [k], 0, theta, theta_new, g, used, n, 1);
        s_time (rules [k], 1, theta, theta_new, g, used, n, 1);
    }
    s_time_floors (theta_new, x, g, sa, sb, sc, n, 1, one);
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < nrules; k++)
            for (int way = 0; way < 2; way++)
                ns [k][way][r] = s_time (rules [k], way, theta, theta_new, g, used, n, reps);
        s_time_floors (theta_new, x, g, sa, sb, sc, n, reps, one);
        floor_ns [0][r] = one [0];
        floor_ns [1][r] = one [1];
    }
    printf ("%-10s %26s %26s %9s %9s\n", "rule", "in place ns/param (range)", "staged ns/param (range)",
            "x asgd", "x asgd");
    double (*med) [2] = calloc ((size_t) nrules, sizeof *med), (*lo) [2] = calloc ((size_t) nrules, sizeof *lo),
           (*hi) [2] = calloc ((size_t) nrules, sizeof *hi), base [2] = { 0, 0 };
    if (!med || !lo || !hi) {
        fprintf (stderr, "bench-rules: out of memory\n");
        return 1;
    }
    /*  asgd's medians first, wherever it is in the list.  */
    for (int k = 0; k < nrules; k++)
        for (int way = 0; way < 2; way++) {
            med [k][way] = fasgd_bench_median_range (ns [k][way], rounds, &lo [k][way], &hi [k][way]);
            if (strcmp (names [k], "asgd") == 0)
                base [way] = med [k][way];
        }
    for (int k = 0; k < nrules; k++) {
        char a [64], b [64], xa [16] = "-", xb [16] = "-";
        snprintf (a, sizeof a, "%.3f (%.3f-%.3f)", med [k][0], lo [k][0], hi [k][0]);
        snprintf (b, sizeof b, "%.3f (%.3f-%.3f)", med [k][1], lo [k][1], hi [k][1]);
        if (base [0] > 0) {
            snprintf (xa, sizeof xa, "%.2f", med [k][0] / base [0]);
            snprintf (xb, sizeof xb, "%.2f", med [k][1] / base [1]);
        }
        printf ("%-10s %26s %26s %9s %9s\n", names [k], a, b, xa, xb);
    }
    double flo, fhi, fmed = fasgd_bench_median_range (floor_ns [0], rounds, &flo, &fhi);
    printf ("# one square root and one division a parameter (fasgd std's floor): %.3f (%.3f-%.3f) ns/param\n", fmed,
            flo, fhi);
    fmed = fasgd_bench_median_range (floor_ns [1], rounds, &flo, &fhi);
    printf ("# five vectors streamed, fasgd std's bytes without its arithmetic (its other floor): "
            "%.3f (%.3f-%.3f) ns/param\n", fmed, flo, fhi);
    for (int k = 0; k < nrules; k++)
        fasgd_rule_destroy (&rules [k]);
    free (ns);
    free (med);
    free (lo);
    free (hi);
    free (theta);
    free (theta_new);
    free (g);
    free (used);
    free (x);
    free (sa);
    free (sb);
    free (sc);
    return 0;
}
