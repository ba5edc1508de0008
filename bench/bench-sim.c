/*  bench-sim: simulated iterations per second of fasgd-sim in the paper's
    Fig. 2 setting (784-100-10, mu = 128, lambda = 1000, validation every 100
    timestamps), next to the bound set by the gradients' matrix products,
    measured in the same run.

    For each round it times, on one thread: the sgemm replica of one
    gradient (the bound, in gradients/s); the simulation with the asgd
    rule; the bound again; the simulation with the fasgd rule; the bound a
    third time. Then the same on every core, with the bound measured as
    that many threads running the replica at once (what the machine's
    cores really give to concurrent sgemm). Each simulation's ratio is
    taken against the mean of the bounds measured just before and just
    after it, so that other jobs coming and going on a shared machine hit
    both sides of a ratio alike. Medians over rounds: of the rates, of all
    the bounds, and of the ratios.

    Both sides are also timed in CPU seconds (the replica threads' own, the
    whole process's for the simulation), which other jobs on a shared
    machine disturb less than the wall clock: a process that waits for a
    core loses wall time, not CPU time. The CPU ratio compares work per
    CPU second; it does not show threads that wait for each other.

    Usage: bench-sim [--data DIR] [--iterations N] [--clients L] [--batch MU]
                     [--rounds R] [--threads T]  */
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
#include <time.h>
#include <unistd.h>

#define S_MAX_ROUNDS 15
#define S_MAX_THREADS 64

typedef struct {
    const fasgd_model_t *model;
    int mu;
    const float *x;
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

static void *
s_replica_thread (void *arg)
{
    s_replica_job_t *job = arg;
    size_t n = fasgd_model_nparams (job->model);
    float *grad = malloc (n * sizeof (float));
    fasgd_sgemm_replica_t *rep = grad ? fasgd_sgemm_replica_new (job->model, job->mu, job->x,
                                                                 job->theta, grad) : NULL;
    if (!rep) {
        fprintf (stderr, "bench-sim: out of memory\n");
        exit (1);
    }
    fasgd_sgemm_replica_run (rep);          /* warm */
    double t0 = fasgd_bench_now (), c0 = s_cpu_now (CLOCK_THREAD_CPUTIME_ID);
    for (long r = 0; r < job->reps; r++)
        fasgd_sgemm_replica_run (rep);
    job->seconds = fasgd_bench_now () - t0;
    job->cpu = s_cpu_now (CLOCK_THREAD_CPUTIME_ID) - c0;
    fasgd_sgemm_replica_destroy (&rep);
    free (grad);
    return NULL;
}

/*  Gradients/s of `threads` replicas running at once, and gradients per
    CPU second of one replica thread.  */
static s_rate_t
s_bound (const fasgd_model_t *model, int mu, const float *x, const float *theta, int threads,
         long reps)
{
    pthread_t tid [S_MAX_THREADS];
    s_replica_job_t jobs [S_MAX_THREADS];
    for (int i = 0; i < threads; i++) {
        jobs [i] = (s_replica_job_t) { .model = model, .mu = mu, .x = x, .theta = theta, .reps = reps };
        pthread_create (&tid [i], NULL, s_replica_thread, &jobs [i]);
    }
    double slowest = 0, cpu = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join (tid [i], NULL);
        if (jobs [i].seconds > slowest)
            slowest = jobs [i].seconds;
        cpu += jobs [i].cpu;
    }
    return (s_rate_t) { (double) reps * threads / slowest, (double) reps * threads / cpu };
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

int
main (int argc, char **argv)
{
    static const struct option longopts [] = {
        { "data", required_argument, NULL, 'd' },
        { "iterations", required_argument, NULL, 'i' },
        { "clients", required_argument, NULL, 'l' },
        { "batch", required_argument, NULL, 'b' },
        { "rounds", required_argument, NULL, 'r' },
        { "threads", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *data = "data/mnist";
    long iterations = 5000, clients = 1000, batch = 128, rounds = 3;
    long cores = sysconf (_SC_NPROCESSORS_ONLN);
    long threads = cores > 0 ? (cores > S_MAX_THREADS ? S_MAX_THREADS : cores) : 1;
    int opt;
    while ((opt = getopt_long (argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
            case 'd': data = optarg; break;
            case 'i': iterations = fasgd_bench_int_arg ("bench-sim", "--iterations", optarg, 100, 100000000); break;
            case 'l': clients = fasgd_bench_int_arg ("bench-sim", "--clients", optarg, 1, 1000000); break;
            case 'b': batch = fasgd_bench_int_arg ("bench-sim", "--batch", optarg, 1, 100000); break;
            case 'r': rounds = fasgd_bench_int_arg ("bench-sim", "--rounds", optarg, 1, S_MAX_ROUNDS); break;
            case 't': threads = fasgd_bench_int_arg ("bench-sim", "--threads", optarg, 1, S_MAX_THREADS); break;
            case 'h':
                puts ("usage: bench-sim [--data DIR] [--iterations N] [--clients L] [--batch MU]\n"
                      "                 [--rounds R] [--threads T]\n"
                      "Defaults: data/mnist, 5000 iterations, 1000 clients, batch 128, 3 rounds,\n"
                      "T = every core. Prints simulated iterations/s next to the sgemm bound.");
                return 0;
            default:
                return 2;
        }
    }
    fasgd_log_open ("bench-sim", 0, FASGD_LOG_WARN);
    openblas_set_num_threads (1);

    fasgd_sim_cfg_t cfg;
    if (fasgd_config_defaults (fasgd_sim_cfg_keys, &cfg, stderr) != 0)
        return 1;
    char kv [FASGD_PATH_LEN + 32];
    snprintf (kv, sizeof kv, "data.dir=\"%s\"", data);
    fasgd_config_set (fasgd_sim_cfg_keys, &cfg, kv, stderr);
    cfg.iterations = (uint64_t) iterations;
    cfg.clients = (int) clients;
    cfg.batch = (int) batch;
    cfg.eval_every = 100;
    cfg.progress = 0;

    fasgd_model_spec_t spec;
    fasgd_model_cfg_to_spec (&cfg.model, &spec);
    fasgd_dataset_t *train, *valid;
    if (fasgd_data_cfg_load (&cfg.data, &spec, cfg.seed, &train, &valid) != 0) {
        fprintf (stderr, "bench-sim: run scripts/get-mnist, or give --data DIR\n");
        return 1;
    }
    fasgd_model_t *model = fasgd_model_new (&spec, NULL, 0);
    size_t n = fasgd_model_nparams (model);
    float *theta = malloc (n * sizeof (float));
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, 1, 0);
    fasgd_model_init_params (model, theta, &rng);
    long reps = 2000;

    printf ("# bench-sim: 784-100-10, batch %ld, %ld clients, %ld iterations per run, validation "
            "every 100 timestamps on %u examples, %ld rounds (medians)\n",
            batch, clients, iterations, valid->n, rounds);
    printf ("# machine: %ld cores; OpenBLAS %s\n", cores, openblas_get_config ());
    const char *rules [2] = { "asgd", "fasgd" }, *lrs [2] = { "0.05", "0.005" };
    long tcounts [2] = { 1, threads };
    int ncounts = threads > 1 ? 2 : 1;
    double rate1 [2] = { 0, 0 };
    printf ("%-6s %7s %12s %14s %7s %10s %12s %12s %9s\n", "rule", "threads", "iter/s",
            "sgemm bound/s", "ratio", "vs 1 thread", "iter/cpu-s", "bound/cpu-s", "cpu ratio");
    for (int c = 0; c < ncounts; c++) {
        int t = (int) tcounts [c], nb = 0;
        double bound [3 * S_MAX_ROUNDS], bound_cpu [3 * S_MAX_ROUNDS];
        double sim [2][S_MAX_ROUNDS], sim_cpu [2][S_MAX_ROUNDS];
        double ratio [2][S_MAX_ROUNDS], ratio_cpu [2][S_MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            s_rate_t before = s_bound (model, (int) batch, train->x, theta, t, reps);
            bound [nb] = before.wall;
            bound_cpu [nb++] = before.cpu;
            for (int k = 0; k < 2; k++) {
                s_rate_t sr = s_sim_rate (&cfg, rules [k], lrs [k], t, train, valid);
                s_rate_t after = s_bound (model, (int) batch, train->x, theta, t, reps);
                bound [nb] = after.wall;
                bound_cpu [nb++] = after.cpu;
                sim [k][r] = sr.wall;
                sim_cpu [k][r] = sr.cpu;
                ratio [k][r] = sr.wall / (0.5 * (before.wall + after.wall));
                ratio_cpu [k][r] = sr.cpu / (0.5 * (before.cpu + after.cpu));
                before = after;
            }
        }
        double b = fasgd_bench_median (bound, nb);
        double bc = fasgd_bench_median (bound_cpu, nb);
        for (int k = 0; k < 2; k++) {
            double s = fasgd_bench_median (sim [k], (int) rounds);
            double sc = fasgd_bench_median (sim_cpu [k], (int) rounds);
            double q = fasgd_bench_median (ratio [k], (int) rounds);
            double qc = fasgd_bench_median (ratio_cpu [k], (int) rounds);
            if (c == 0)
                rate1 [k] = s;
            printf ("%-6s %7ld %12.0f %14.0f %6.1f%% %9.2fx %12.0f %12.0f %8.1f%%\n", rules [k],
                    tcounts [c], s, b, 100.0 * q, s / rate1 [k], sc, bc, 100.0 * qc);
            fflush (stdout);
        }
    }
    free (theta);
    fasgd_model_destroy (&model);
    fasgd_dataset_destroy (&train);
    fasgd_dataset_destroy (&valid);
    return 0;
}
