/*  bench-model: throughput of fasgd_model_gradient against the bound set
    by its matrix products alone.

    The simulator's speed is the number of minibatch gradients per second,
    and nearly all of a gradient's arithmetic is in cblas_sgemm. So the
    useful figure is not GFLOP/s in isolation but how close the gradient
    comes to the same sgemm calls run with nothing around them: the gap is
    what the bias copies, activations, softmax and bias sums cost.

    Both are measured in one process, interleaved over several rounds and
    within each round in short alternating slices, and the medians
    reported, so a noisy neighbour on a shared machine hits both sides
    alike. The measurement is repeated with OpenBLAS using every core.

    Usage: bench-model [--reps N] [--threads T] [--batch MU]
                       [--sizes 784,100,10] [--rounds R]
                       [--activation relu|tanh]  */
#include "bench-util.h"
#include "model.h"
#include "sgemm-replica.h"
#include "rng.h"

#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S_MAX_ROUNDS 99
/*  Calibration aims each measurement at this many seconds.  */
#define S_TARGET_SECONDS 1.0
/*  Slices per measurement, alternating between the two sides.  */
#define S_SLICES 50

typedef struct {
    fasgd_model_t *model;           /* owned */
    fasgd_model_ws_t *ws;
    int mu;
    float *theta, *grad, *x;
    uint8_t *y;
    fasgd_sgemm_replica_t *replica;
} bench_t;

static void
s_usage (FILE *out)
{
    fprintf (out,
        "usage: bench-model [--reps N] [--threads T] [--batch MU] [--sizes 784,100,10]\n"
        "                   [--rounds R] [--activation relu|tanh]\n"
        "  --reps N      gradients per measurement (default: about %.0f s worth)\n"
        "  --threads T   OpenBLAS threads for the first row (default 1); a second\n"
        "                row always uses every core\n"
        "  --batch MU    minibatch size (default 128)\n"
        "  --sizes LIST  layer widths, input to output (default 784,100,10)\n"
        "  --rounds R    interleaved rounds, medians reported (default 5)\n"
        "  --activation  relu or tanh for the hidden layers (default relu)\n",
        S_TARGET_SECONDS);
}

static int
s_parse_int (const char *opt, const char *text, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol (text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        fprintf (stderr, "bench-model: %s must be an integer in %ld..%ld (got \"%s\")\n",
                 opt, lo, hi, text);
        return -1;
    }
    *out = (int) v;
    return 0;
}

static int
s_gradient (bench_t *b)
{
    double loss = fasgd_model_gradient (b->model, b->ws, b->theta, b->x, b->y, b->mu,
                                        b->grad, NULL);
    return loss == loss ? 0 : -1;
}

/*  Seconds for reps calls of the gradient (which == 0) or of the sgemm
    replica (which == 1).  */
static double
s_time (bench_t *b, int which, long reps)
{
    double t0 = fasgd_bench_now ();
    for (long r = 0; r < reps; r++) {
        if (which == 0) {
            if (s_gradient (b) != 0) {
                fprintf (stderr, "bench-model: the gradient returned NAN\n");
                exit (EXIT_FAILURE);
            }
        }
        else
            fasgd_sgemm_replica_run (b->replica);
    }
    return fasgd_bench_now () - t0;
}

/*  Repetitions that make one measurement last about the target time.  */
static long
s_calibrate (bench_t *b, int which)
{
    long reps = 1;
    for (;;) {
        double t = s_time (b, which, reps);
        if (t >= 0.1 || reps >= (1L << 30)) {
            double per = t / (double) reps;
            long want = (long) (S_TARGET_SECONDS / per);
            return want < 1 ? 1 : want;
        }
        reps *= 4;
    }
}

/*  One measurement of each side, taken as S_SLICES slices in turn
    (gradient then sgemm, then sgemm then gradient, ...), so that both
    sides see the same machine load even when a neighbour comes and goes
    within the second.  */
static void
s_measure_pair (bench_t *b, const long reps [2], double secs [2])
{
    secs [0] = secs [1] = 0;
    for (int s = 0; s < S_SLICES; s++)
        for (int k = 0; k < 2; k++) {
            int which = (s % 2) ? 1 - k : k;
            long count = reps [which] * (s + 1) / S_SLICES - reps [which] * s / S_SLICES;
            secs [which] += s_time (b, which, count);
        }
}

static void
s_run (bench_t *b, int threads, int rounds, int fixed_reps, double flops)
{
    openblas_set_num_threads (threads);
    /*  Warm-up: OpenBLAS starts its threads and sizes its buffers on the
        first calls; page faults in the workspace happen here too.  */
    s_time (b, 0, 3);
    s_time (b, 1, 3);
    long reps [2];
    reps [0] = fixed_reps > 0 ? fixed_reps : s_calibrate (b, 0);
    reps [1] = fixed_reps > 0 ? fixed_reps : s_calibrate (b, 1);

    double grad_rate [S_MAX_ROUNDS] = { 0 }, gemm_rate [S_MAX_ROUNDS] = { 0 };
    double ratio [S_MAX_ROUNDS] = { 0 };
    for (int r = 0; r < rounds; r++) {
        double secs [2];
        s_measure_pair (b, reps, secs);
        grad_rate [r] = (double) reps [0] / secs [0];
        gemm_rate [r] = (double) reps [1] / secs [1];
        ratio [r] = grad_rate [r] / gemm_rate [r];
    }
    /*  The ratio is the median of each round's paired ratio, which is
        steadier than the ratio of the two medians on a loaded machine.  */
    double g = fasgd_bench_median (grad_rate, rounds);
    double s = fasgd_bench_median (gemm_rate, rounds);
    double q = fasgd_bench_median (ratio, rounds);
    printf ("%7d  %11.0f  %11.3f  %9.2f  %13.2f  %5.1f%%  %9ld %9ld\n",
            threads, g * b->mu, 1e3 / g,
            g * flops * 1e-9, s * flops * 1e-9, 100.0 * q, reps [0], reps [1]);
    fflush (stdout);
}

/*  Frees everything a bench_t holds, the model included; NULL members
    are fine.  */
static void
s_bench_free (bench_t *b)
{
    fasgd_sgemm_replica_destroy (&b->replica);
    free (b->y);
    free (b->x);
    free (b->grad);
    free (b->theta);
    fasgd_model_ws_destroy (&b->ws);
    fasgd_model_destroy (&b->model);
    memset (b, 0, sizeof *b);
}

/*  What the command line asks.  */
typedef struct {
    int fixed_reps, threads, mu, rounds;
    fasgd_model_spec_t spec;
} s_args_t;

/*  One option into a: -1 to go on, else the exit status.  */
static int
s_option (s_args_t *a, int c)
{
    char err [256];
    switch (c) {
        case 'r': return s_parse_int ("--reps", optarg, 1, INT_MAX, &a->fixed_reps) ? 2 : -1;
        case 't': return s_parse_int ("--threads", optarg, 1, 1024, &a->threads) ? 2 : -1;
        case 'b': return s_parse_int ("--batch", optarg, 1, 1 << 20, &a->mu) ? 2 : -1;
        case 'R': return s_parse_int ("--rounds", optarg, 1, S_MAX_ROUNDS, &a->rounds) ? 2 : -1;
        case 's':
            if (fasgd_model_spec_parse_sizes (&a->spec, optarg, err, sizeof err)) {
                fprintf (stderr, "bench-model: %s\n", err);
                return 2;
            }
            return -1;
        case 'a':
            a->spec.activation = fasgd_model_activation_parse (optarg);
            if (a->spec.activation < 0) {
                fprintf (stderr, "bench-model: --activation must be relu or tanh (got \"%s\")\n", optarg);
                return 2;
            }
            a->spec.init = a->spec.activation == FASGD_ACT_TANH ? FASGD_INIT_GLOROT : FASGD_INIT_HE;
            return -1;
        case 'h':
            s_usage (stdout);
            return 0;
        default:
            s_usage (stderr);
            return 2;
    }
}

/*  The command line into a: -1 to go on, else the exit status.  */
static int
s_options (s_args_t *a, int argc, char **argv)
{
    static const struct option options [] = {
        { "reps", required_argument, NULL, 'r' },
        { "threads", required_argument, NULL, 't' },
        { "batch", required_argument, NULL, 'b' },
        { "sizes", required_argument, NULL, 's' },
        { "rounds", required_argument, NULL, 'R' },
        { "activation", required_argument, NULL, 'a' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    int c, status;
    while ((c = getopt_long (argc, argv, "r:t:b:s:R:a:h", options, NULL)) != -1)
        if ((status = s_option (a, c)) >= 0)
            return status;
    if (optind != argc) {
        s_usage (stderr);
        return 2;
    }
    return -1;
}

/*  The model, its buffers and a synthetic batch into b: -1 to go on,
    else the exit status after saying why.  */
static int
s_bench_new (bench_t *b, const s_args_t *a)
{
    char err [256];
    fasgd_model_t *model = fasgd_model_new (&a->spec, err, sizeof err);
    if (!model) {
        fprintf (stderr, "bench-model: %s\n", err);
        return 2;
    }
    int mu = a->mu;
    *b = (bench_t) { .model = model, .mu = mu };
    b->ws = fasgd_model_ws_new (model, mu);
    const size_t np = fasgd_model_nparams (model);
    const int dim = fasgd_model_input_dim (model), k = fasgd_model_nclasses (model);
    b->theta = malloc (np * sizeof (float));
    b->grad = malloc (np * sizeof (float));
    b->x = malloc ((size_t) mu * dim * sizeof (float));
    b->y = malloc ((size_t) mu);
    if (b->theta && b->grad && b->x)
        b->replica = fasgd_sgemm_replica_new (model, mu, dim, b->x, b->theta, b->grad);
    if (!b->ws || !b->theta || !b->grad || !b->x || !b->y || !b->replica) {
        fprintf (stderr, "bench-model: out of memory\n");
        s_bench_free (b);
        return 1;
    }
    /*  Synthetic data: inputs like MNIST's scaled pixels in [0, 1), he
        initialisation so the relu units are about half active.  */
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, 1, 0);
    fasgd_model_init_params (model, b->theta, &rng);
    for (size_t i = 0; i < (size_t) mu * dim; i++)
        b->x [i] = (float) fasgd_rng_uniform (&rng);
    for (int i = 0; i < mu; i++)
        b->y [i] = (uint8_t) fasgd_rng_below (&rng, (uint32_t) (k < 256 ? k : 256));
    return -1;
}

/*  The machine, the library and the model, then the columns' names.  */
static void
s_print_header (const s_args_t *a, const bench_t *b, long ncores, double flops)
{
    char cpu [256];
    fasgd_bench_cpu_model (cpu, sizeof cpu);
    printf ("# cpu: %s; nproc %ld\n", cpu, ncores);
    printf ("# openblas: %s; core %s\n", openblas_get_config (), openblas_get_corename ());
    printf ("# model:");
    for (int l = 0; l < a->spec.nsizes; l++)
        printf ("%s%d", l ? "-" : " ", a->spec.sizes [l]);
    printf (" %s, %zu parameters; batch %d; %.2f MFLOP of sgemm per gradient;"
            " medians of %d rounds\n",
            fasgd_model_activation_name (a->spec.activation), fasgd_model_nparams (b->model), a->mu,
            flops * 1e-6, a->rounds);
    printf ("%7s  %11s  %11s  %9s  %13s  %6s  %9s %9s\n", "threads", "examples/s",
            "ms/gradient", "GFLOP/s", "sgemm GFLOP/s", "ratio", "reps", "sgemm reps");
    fflush (stdout);
}

int
main (int argc, char **argv)
{
    s_args_t a = { .threads = 1, .mu = 128, .rounds = 5 };
    fasgd_model_spec_default (&a.spec);
    int status = s_options (&a, argc, argv);
    if (status >= 0)
        return status;
    bench_t b;
    if ((status = s_bench_new (&b, &a)) >= 0)
        return status;
    long ncores = sysconf (_SC_NPROCESSORS_ONLN);
    if (ncores < 1)
        ncores = 1;
    const double flops = fasgd_model_gradient_flops (b.model, a.mu);
    s_print_header (&a, &b, ncores, flops);
    s_run (&b, a.threads, a.rounds, a.fixed_reps, flops);
    if (ncores != a.threads)
        s_run (&b, (int) ncores, a.rounds, a.fixed_reps, flops);
    s_bench_free (&b);
    return 0;
}
