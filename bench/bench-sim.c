/*  bench-sim: simulated iterations per second of fasgd-sim in the paper's
    Fig. 2 setting (784-100-10, mu = 128, lambda = 1000, validation every 100
    timestamps), next to the bound set by the setting's matrix products,
    measured in the same run.

    The bound is the rate of an sgemm replica of what one simulated
    iteration must multiply: one gradient's products, and a hundredth of a
    validation's forward products. It is measured in two shapes:

      full   the model's products as written, 784 input columns: the bound
             the simulation is held to;
      kept   sgemm on the input columns that are inked somewhere in the
             batch (fasgd_model_ws_columns), the mean over the run's batches
             and over the validation chunks: what the model's products on
             kept columns alone would allow. The simulation's minibatches
             and validation chunks are prepared batches sparse enough for
             the model's sparse first layer (fasgd_model_ws_sparse, on
             processors with AVX-512), which multiplies the nonzero inputs
             alone, so on such processors it can run faster than either
             bound.

    For each round it times, on one thread: both bounds; the simulation
    with the asgd rule; both bounds again; the simulation with the fasgd
    rule; both bounds a third time. Then the same on every core, with the
    bounds measured as that many threads running the replica at once (what
    the machine's cores really give to concurrent sgemm). Each
    simulation's ratio is taken against the mean of the bounds measured
    just before and just after it, so that other jobs coming and going on a
    shared machine hit both sides of a ratio alike. Medians over rounds: of
    the rates, of all the bounds, and of the ratios.

    Both sides are also timed in CPU seconds (the replica threads' own, the
    whole process's for the simulation), which other jobs on a shared
    machine disturb less than the wall clock: a process that waits for a
    core loses wall time, not CPU time. The CPU ratio (against the full
    bound) compares work per CPU second; it does not show threads that
    wait for each other.

    With --numpy SCRIPT (bench/numpy-sim.py) each simulation run is
    followed by the same setting in a vectorised numpy simulator, with
    OpenBLAS on as many threads, and a second table gives the two rates
    and the median of the rounds' ratios: the yardstick "twice the numpy
    simulator's rate", measured in the same run rather than taken from
    elsewhere.

    Usage: bench-sim [--data DIR] [--iterations N] [--clients L] [--batch MU]
                     [--rounds R] [--threads T] [--numpy SCRIPT]  */
#include "bench-util.h"
#include "log.h"
#include "sgemm-replica.h"
#include "sim.h"

#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_MAX_ROUNDS 15
#define S_MAX_THREADS 64

#define S_EVAL_EVERY 100

/*  The first layer's inner dimension in a gradient and in a validation
    chunk.  */
typedef struct {
    int columns, eval_columns;
    int batches, sparse_batches;    /* minibatches, and those the sparse layer takes */
    int chunks, sparse_chunks;      /* validation chunks, likewise */
} s_shape_t;

typedef struct {
    const fasgd_model_t *model;
    int mu;
    s_shape_t shape;
    const float *x, *valid_x;
    int eval_chunks, eval_rest;     /* validation: full chunks, and the last one's size */
    const float *theta;
    long reps;
    double seconds, cpu;
} s_replica_job_t;

/*  CPU seconds of the calling thread, or of the whole process.  */
static double
s_cpu_now (clockid_t clock)
{
    struct timespec ts;
    clock_gettime (clock, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/*  A rate on the wall clock and per CPU second.  */
typedef struct {
    double wall, cpu;
} s_rate_t;

/*  reps iterations' products: a gradient each, and the validation's
    forward products every S_EVAL_EVERY.  */
static void *
s_replica_thread (void *arg)
{
    s_replica_job_t *job = arg;
    size_t n = fasgd_model_nparams (job->model);
    float *grad = malloc (n * sizeof (float));
    fasgd_sgemm_replica_t *rep = NULL, *eval = NULL, *rest = NULL;
    if (grad) {
        rep = fasgd_sgemm_replica_new (job->model, job->mu, job->shape.columns, job->x,
                                       job->theta, grad);
        eval = fasgd_sgemm_replica_new (job->model, FASGD_SIM_EVAL_CHUNK, job->shape.eval_columns,
                                        job->valid_x, job->theta, NULL);
        if (job->eval_rest)
            rest = fasgd_sgemm_replica_new (job->model, job->eval_rest, job->shape.eval_columns,
                                            job->valid_x, job->theta, NULL);
    }
    if (!rep || !eval || (job->eval_rest && !rest)) {
        fprintf (stderr, "bench-sim: out of memory\n");
        exit (1);
    }
    fasgd_sgemm_replica_run (rep);          /* warm */
    fasgd_sgemm_replica_forward (eval);
    double t0 = fasgd_bench_now (), c0 = s_cpu_now (CLOCK_THREAD_CPUTIME_ID);
    for (long r = 0; r < job->reps; r++) {
        fasgd_sgemm_replica_run (rep);
        if ((r + 1) % S_EVAL_EVERY == 0) {
            for (int c = 0; c < job->eval_chunks; c++)
                fasgd_sgemm_replica_forward (eval);
            if (rest)
                fasgd_sgemm_replica_forward (rest);
        }
    }
    job->seconds = fasgd_bench_now () - t0;
    job->cpu = s_cpu_now (CLOCK_THREAD_CPUTIME_ID) - c0;
    fasgd_sgemm_replica_destroy (&rep);
    fasgd_sgemm_replica_destroy (&eval);
    fasgd_sgemm_replica_destroy (&rest);
    free (grad);
    return NULL;
}

/*  Iterations/s of `threads` replicas running at once, and iterations per
    CPU second of one replica thread.  */
static s_rate_t
s_bound (const s_replica_job_t *proto, int threads)
{
    pthread_t tid [S_MAX_THREADS];
    s_replica_job_t jobs [S_MAX_THREADS];
    for (int i = 0; i < threads; i++) {
        jobs [i] = *proto;
        pthread_create (&tid [i], NULL, s_replica_thread, &jobs [i]);
    }
    double slowest = 0, cpu = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join (tid [i], NULL);
        if (jobs [i].seconds > slowest)
            slowest = jobs [i].seconds;
        cpu += jobs [i].cpu;
    }
    return (s_rate_t) { (double) proto->reps * threads / slowest,
                        (double) proto->reps * threads / cpu };
}

/*  The input columns a forward pass multiplies when these n examples are
    prepared as the simulation prepares them (fasgd_model_ws_columns);
    *sparse is 1 if the pass took the sparse first layer.  */
static int
s_prepared_columns (const fasgd_model_t *model, fasgd_model_ws_t *ws, const float *theta,
                    const float *x, const uint8_t *y, int n, int *sparse)
{
    fasgd_model_batch_t *batch = fasgd_model_batch_new (model, x, y, n);
    if (!batch)
        exit (1);
    fasgd_model_batch_loss (model, ws, theta, batch, NULL);
    fasgd_model_batch_destroy (&batch);
    *sparse = fasgd_model_ws_sparse (ws);
    return fasgd_model_ws_columns (ws);
}

/*  The kept shape: the mean of fasgd_model_ws_columns over
    the batches of its iterations (iteration i takes batch i mod batches)
    and over the validation chunks, prepared as the simulation prepares
    them; and how many of each take the sparse first layer.  */
static s_shape_t
s_kept_shape (const fasgd_model_t *model, int mu, long iterations, const fasgd_dataset_t *train,
             const fasgd_dataset_t *valid, const float *theta)
{
    const size_t dim = train->dim;
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, mu > FASGD_SIM_EVAL_CHUNK ? mu : FASGD_SIM_EVAL_CHUNK);
    if (!ws)
        exit (1);
    s_shape_t shape = { 0 };
    long nbatches = (long) (train->n / (size_t) mu);
    double sum = 0;
    for (long b = 0; b < nbatches; b++) {
        int sparse;
        int columns = s_prepared_columns (model, ws, theta, train->x + (size_t) b * mu * dim,
                                          train->y + (size_t) b * mu, mu, &sparse);
        /*  Batch b serves iterations b, b + nbatches, ...  */
        long uses = iterations / nbatches + (b < iterations % nbatches);
        sum += (double) columns * (double) uses;
        shape.batches++;
        shape.sparse_batches += sparse;
    }
    double eval_sum = 0;
    for (size_t start = 0; start < valid->n; start += FASGD_SIM_EVAL_CHUNK) {
        size_t len = valid->n - start < FASGD_SIM_EVAL_CHUNK ? valid->n - start : FASGD_SIM_EVAL_CHUNK;
        int sparse;
        int columns = s_prepared_columns (model, ws, theta, valid->x + start * dim,
                                          valid->y + start, (int) len, &sparse);
        eval_sum += (double) columns * (double) len;
        shape.chunks++;
        shape.sparse_chunks += sparse;
    }
    fasgd_model_ws_destroy (&ws);
    shape.columns = (int) (sum / (double) iterations + 0.5);
    shape.eval_columns = (int) (eval_sum / (double) valid->n + 0.5);
    return shape;
}

static s_rate_t
s_sim_rate (const fasgd_sim_cfg_t *base, const char *rule, const char *lr, int threads,
            const fasgd_dataset_t *train, const fasgd_dataset_t *valid)
{
    fasgd_sim_cfg_t cfg = *base;
    char kv [64];
    snprintf (kv, sizeof kv, "rule.name=%s", rule);
    fasgd_config_set (fasgd_sim_cfg_keys, &cfg, kv, stderr);
    snprintf (kv, sizeof kv, "rule.lr=%s", lr);
    fasgd_config_set (fasgd_sim_cfg_keys, &cfg, kv, stderr);
    cfg.threads = threads;
    fasgd_sim_t *sim = fasgd_sim_new (&cfg, train, valid);
    if (!sim)
        exit (1);
    double t0 = fasgd_bench_now (), c0 = s_cpu_now (CLOCK_PROCESS_CPUTIME_ID);
    fasgd_sim_run (sim, NULL);
    double secs = fasgd_bench_now () - t0, cpu = s_cpu_now (CLOCK_PROCESS_CPUTIME_ID) - c0;
    double its = (double) fasgd_sim_stats (sim)->iterations;
    fasgd_sim_destroy (&sim);
    return (s_rate_t) { its / secs, its / cpu };
}

/*  Iterations/s of the numpy simulator SCRIPT in the same setting: the
    rate on its last line, "numpy-sim: ... in S s: R it/s, ...".  */
static double
s_numpy_rate (const char *script, const char *data, const char *rule, long iterations,
              long clients, long batch, int threads)
{
    char its [24], lam [24], mu [24], thr [24];
    snprintf (its, sizeof its, "%ld", iterations);
    snprintf (lam, sizeof lam, "%ld", clients);
    snprintf (mu, sizeof mu, "%ld", batch);
    snprintf (thr, sizeof thr, "%d", threads);
    char *const args [] = { (char *) script, "--data", (char *) data, "--rule", (char *) rule,
                            "--iterations", its, "--clients", lam, "--batch", mu, "--threads",
                            thr, NULL };
    int fd [2];
    if (pipe (fd) != 0) {
        perror ("bench-sim: pipe");
        exit (1);
    }
    fflush (stdout);
    pid_t pid = fork ();
    if (pid < 0) {
        perror ("bench-sim: fork");
        exit (1);
    }
    if (pid == 0) {
        dup2 (fd [1], STDOUT_FILENO);
        close (fd [0]);
        close (fd [1]);
        execv (script, args);
        fprintf (stderr, "bench-sim: cannot run %s: %s\n", script, strerror (errno));
        _exit (127);
    }
    close (fd [1]);
    char out [4096];
    size_t len = 0;
    ssize_t got;
    while ((got = read (fd [0], out + len, sizeof out - 1 - len)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        len += (size_t) got;
        if (len == sizeof out - 1) {        /* keep the tail: the rate is on the last line */
            memmove (out, out + len - 1024, 1024);
            len = 1024;
        }
    }
    out [len] = '\0';
    close (fd [0]);
    int status;
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    const char *line = strstr (out, "numpy-sim: ");
    const char *rate = line ? strstr (line, " s: ") : NULL;
    double r = rate ? strtod (rate + 4, NULL) : 0;
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0 || !(r > 0)) {
        fprintf (stderr, "bench-sim: %s --rule %s gave no rate (output: '%s')\n", script, rule, out);
        exit (1);
    }
    return r;
}

/*  What the command line asks.  */
typedef struct {
    const char *data, *numpy;
    long iterations, clients, batch, rounds, threads;
    long cores;                         /* the machine's */
} s_args_t;

/*  The command line into a: -1 to go on, else the exit status.  */
static int
s_options (s_args_t *a, int argc, char **argv)
{
    static const struct option longopts [] = {
        { "data", required_argument, NULL, 'd' },
        { "iterations", required_argument, NULL, 'i' },
        { "clients", required_argument, NULL, 'l' },
        { "batch", required_argument, NULL, 'b' },
        { "rounds", required_argument, NULL, 'r' },
        { "threads", required_argument, NULL, 't' },
        { "numpy", required_argument, NULL, 'n' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    int opt;
    while ((opt = getopt_long (argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
            case 'd': a->data = optarg; break;
            case 'n': a->numpy = optarg; break;
            case 'i': a->iterations = fasgd_bench_int_arg ("bench-sim", "--iterations", optarg, 100, 100000000); break;
            case 'l': a->clients = fasgd_bench_int_arg ("bench-sim", "--clients", optarg, 1, 1000000); break;
            case 'b': a->batch = fasgd_bench_int_arg ("bench-sim", "--batch", optarg, 1, 100000); break;
            case 'r': a->rounds = fasgd_bench_int_arg ("bench-sim", "--rounds", optarg, 1, S_MAX_ROUNDS); break;
            case 't': a->threads = fasgd_bench_int_arg ("bench-sim", "--threads", optarg, 1, S_MAX_THREADS); break;
            case 'h':
                puts ("usage: bench-sim [--data DIR] [--iterations N] [--clients L] [--batch MU]\n"
                      "                 [--rounds R] [--threads T] [--numpy SCRIPT]\n"
                      "Defaults: data/mnist, 5000 iterations, 1000 clients, batch 128, 3 rounds,\n"
                      "T = every core. Prints simulated iterations/s next to the sgemm bound;\n"
                      "with --numpy bench/numpy-sim.py, also next to a numpy simulator's rate.");
                return 0;
            default:
                return 2;
        }
    }
    return -1;
}

/*  The simulator's configuration for the command line, and its data: 0,
    or -1 after saying why.  */
static int
s_sim_setup (const s_args_t *a, fasgd_sim_cfg_t *cfg, fasgd_dataset_t **train, fasgd_dataset_t **valid)
{
    if (fasgd_config_defaults (fasgd_sim_cfg_keys, cfg, stderr) != 0)
        return -1;
    char kv [FASGD_PATH_LEN + 32];
    snprintf (kv, sizeof kv, "data.dir=\"%s\"", a->data);
    fasgd_config_set (fasgd_sim_cfg_keys, cfg, kv, stderr);
    cfg->iterations = (uint64_t) a->iterations;
    cfg->clients = (int) a->clients;
    cfg->batch = (int) a->batch;
    cfg->eval_every = S_EVAL_EVERY;
    cfg->progress = 0;
    if (fasgd_data_cfg_load (&cfg->data, &cfg->model, cfg->seed, train, valid) != 0) {
        fprintf (stderr, "bench-sim: run scripts/get-mnist, or give --data DIR\n");
        return -1;
    }
    return 0;
}

/*  The bounds' jobs: the model's products in sgemm over every input
    column (full) and over the columns the gradient keeps (kept).  */
typedef struct {
    fasgd_model_t *model;
    float *theta;
    s_replica_job_t full, kept;
} s_bounds_t;

static void
s_bounds_setup (const s_args_t *a, const fasgd_sim_cfg_t *cfg, const fasgd_dataset_t *train,
                const fasgd_dataset_t *valid, s_bounds_t *b)
{
    fasgd_model_spec_t spec;
    fasgd_model_cfg_to_spec (&cfg->model, &spec);
    b->model = fasgd_model_new (&spec, NULL, 0);
    size_t n = fasgd_model_nparams (b->model);
    b->theta = malloc (n * sizeof (float));
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, 1, 0);
    fasgd_model_init_params (b->model, b->theta, &rng);
    long reps = 2000;
    const int dim = (int) train->dim;
    b->full = (s_replica_job_t) {
        .model = b->model, .mu = (int) a->batch, .shape = { dim, dim }, .x = train->x,
        .valid_x = valid->x, .eval_chunks = (int) (valid->n / FASGD_SIM_EVAL_CHUNK),
        .eval_rest = (int) (valid->n % FASGD_SIM_EVAL_CHUNK), .theta = b->theta, .reps = reps
    };
    b->kept = b->full;
    b->kept.shape = s_kept_shape (b->model, (int) a->batch, a->iterations, train, valid, b->theta);
}

static void
s_print_header (const s_args_t *a, const fasgd_dataset_t *valid, const s_bounds_t *b)
{
    printf ("# bench-sim: 784-100-10, batch %ld, %ld clients, %ld iterations per run, validation "
            "every %d timestamps on %u examples, %ld rounds (medians)\n",
            a->batch, a->clients, a->iterations, S_EVAL_EVERY, valid->n, a->rounds);
    printf ("# bounds: an iteration's products in sgemm, full (%d input columns) and kept (mean %d "
            "columns a batch, %d a validation chunk)\n",
            b->full.shape.columns, b->kept.shape.columns, b->kept.shape.eval_columns);
    printf ("# first layer: sparse (nonzero inputs alone) on %d of %d minibatches and %d of %d "
            "validation chunks\n", b->kept.shape.sparse_batches, b->kept.shape.batches,
            b->kept.shape.sparse_chunks, b->kept.shape.chunks);
    printf ("# machine: %ld cores; OpenBLAS %s\n", a->cores, openblas_get_config ());
    printf ("%-6s %7s %9s %12s %7s %12s %7s %10s %11s %11s %9s\n", "rule", "threads", "iter/s",
            "full bound/s", "ratio", "kept bound/s", "ratio", "vs 1 thread", "iter/cpu-s",
            "full/cpu-s", "cpu ratio");
}

static const char *const s_rules [2] = { "asgd", "fasgd" }, *const s_lrs [2] = { "0.05", "0.005" };

/*  numpy's rounds beside the simulator's: by thread count, rule, round.  */
typedef struct {
    double sim [2][2][S_MAX_ROUNDS], rate [2][2][S_MAX_ROUNDS], ratio [2][2][S_MAX_ROUNDS];
} s_numpy_t;

/*  The rows of c-th thread count t: every round, each rule's simulation
    between two measures of the bounds (and numpy's run after it), then
    the medians; rate1 holds the one-thread rates the later rows are
    compared with.  */
static void
s_rows (const s_args_t *a, const fasgd_sim_cfg_t *cfg, const fasgd_dataset_t *train,
        const fasgd_dataset_t *valid, const s_bounds_t *b, int c, int t, double rate1 [2], s_numpy_t *np)
{
    int nb = 0, rounds = (int) a->rounds;
    double bound [5 * S_MAX_ROUNDS], bound_cpu [5 * S_MAX_ROUNDS], bound_kept [5 * S_MAX_ROUNDS];
    double sim [2][S_MAX_ROUNDS], sim_cpu [2][S_MAX_ROUNDS];
    double ratio [2][S_MAX_ROUNDS], ratio_cpu [2][S_MAX_ROUNDS], ratio_kept [2][S_MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        s_rate_t before = s_bound (&b->full, t), before_kept = s_bound (&b->kept, t);
        bound [nb] = before.wall;
        bound_cpu [nb] = before.cpu;
        bound_kept [nb++] = before_kept.wall;
        for (int k = 0; k < 2; k++) {
            s_rate_t sr = s_sim_rate (cfg, s_rules [k], s_lrs [k], t, train, valid);
            s_rate_t after = s_bound (&b->full, t), after_kept = s_bound (&b->kept, t);
            bound [nb] = after.wall;
            bound_cpu [nb] = after.cpu;
            bound_kept [nb++] = after_kept.wall;
            sim [k][r] = sr.wall;
            sim_cpu [k][r] = sr.cpu;
            ratio [k][r] = sr.wall / (0.5 * (before.wall + after.wall));
            ratio_cpu [k][r] = sr.cpu / (0.5 * (before.cpu + after.cpu));
            ratio_kept [k][r] = sr.wall / (0.5 * (before_kept.wall + after_kept.wall));
            before = after;
            before_kept = after_kept;
            if (a->numpy) {
                double nr = s_numpy_rate (a->numpy, a->data, s_rules [k], a->iterations, a->clients, a->batch, t);
                np->sim [c][k][r] = sr.wall;
                np->rate [c][k][r] = nr;
                np->ratio [c][k][r] = sr.wall / nr;
                /*  The next simulation's bound before it, after numpy's run.  */
                before = s_bound (&b->full, t);
                before_kept = s_bound (&b->kept, t);
                bound [nb] = before.wall;
                bound_cpu [nb] = before.cpu;
                bound_kept [nb++] = before_kept.wall;
            }
        }
    }
    double bf = fasgd_bench_median (bound, nb);
    double bc = fasgd_bench_median (bound_cpu, nb);
    double br = fasgd_bench_median (bound_kept, nb);
    for (int k = 0; k < 2; k++) {
        double s = fasgd_bench_median (sim [k], rounds);
        double sc = fasgd_bench_median (sim_cpu [k], rounds);
        double q = fasgd_bench_median (ratio [k], rounds);
        double qc = fasgd_bench_median (ratio_cpu [k], rounds);
        double qr = fasgd_bench_median (ratio_kept [k], rounds);
        if (c == 0)
            rate1 [k] = s;
        printf ("%-6s %7d %9.0f %12.0f %6.1f%% %12.0f %6.1f%% %9.2fx %11.0f %11.0f %8.1f%%\n",
                s_rules [k], t, s, bf, 100.0 * q, br, 100.0 * qr, s / rate1 [k], sc, bc, 100.0 * qc);
        fflush (stdout);
    }
}

/*  --numpy: the table of the simulator beside numpy.  */
static void
s_print_numpy (const s_args_t *a, const long *tcounts, int ncounts, s_numpy_t *np)
{
    printf ("# against %s, the same setting in numpy, run after each simulation with OpenBLAS "
            "on as many threads\n", a->numpy);
    printf ("%-6s %7s %9s %9s %7s\n", "rule", "threads", "iter/s", "numpy/s", "ratio");
    for (int c = 0; c < ncounts; c++)
        for (int k = 0; k < 2; k++)
            printf ("%-6s %7ld %9.0f %9.0f %6.2fx\n", s_rules [k], tcounts [c],
                    fasgd_bench_median (np->sim [c][k], (int) a->rounds),
                    fasgd_bench_median (np->rate [c][k], (int) a->rounds),
                    fasgd_bench_median (np->ratio [c][k], (int) a->rounds));
}

int
main (int argc, char **argv)
{
    long cores = sysconf (_SC_NPROCESSORS_ONLN);
    s_args_t a = {
        .data = "data/mnist", .iterations = 5000, .clients = 1000, .batch = 128, .rounds = 3,
        .threads = cores > 0 ? (cores > S_MAX_THREADS ? S_MAX_THREADS : cores) : 1, .cores = cores,
    };
    int status = s_options (&a, argc, argv);
    if (status >= 0)
        return status;
    fasgd_log_open ("bench-sim", 0, FASGD_LOG_WARN);
    openblas_set_num_threads (1);

    fasgd_sim_cfg_t cfg;
    fasgd_dataset_t *train, *valid;
    if (s_sim_setup (&a, &cfg, &train, &valid) != 0)
        return 1;
    s_bounds_t b;
    s_bounds_setup (&a, &cfg, train, valid, &b);
    s_print_header (&a, valid, &b);
    long tcounts [2] = { 1, a.threads };
    int ncounts = a.threads > 1 ? 2 : 1;
    double rate1 [2] = { 0, 0 };
    static s_numpy_t np;
    for (int c = 0; c < ncounts; c++)
        s_rows (&a, &cfg, train, valid, &b, c, (int) tcounts [c], rate1, &np);
    if (a.numpy)
        s_print_numpy (&a, tcounts, ncounts, &np);
    free (b.theta);
    fasgd_model_destroy (&b.model);
    fasgd_dataset_destroy (&train);
    fasgd_dataset_destroy (&valid);
    return 0;
}
