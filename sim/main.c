/*  fasgd-sim: runs a configured simulation and prints its summary.  */
#include "sim.h"

#include "cli.h"
#include "log.h"

#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static fasgd_sim_t *s_running;

static void
s_on_signal (int sig)
{
    (void) sig;
    if (s_running)
        fasgd_sim_interrupt (s_running);
}

static void
s_usage (FILE *out)
{
    fputs (
        "Usage: fasgd-sim -c FILE [OPTION]...\n"
        "Simulate asynchronous SGD with many clients on one machine, deterministically.\n"
        "\n"
        "  -c, --config FILE      the simulation's YAML configuration (required)\n"
        "  -s, --set KEY=VALUE    override one configuration key (repeatable), e.g.\n"
        "                         --set rule.name=sasgd --set clients=1000\n"
        "  -o, --output FILE      CSV of validation rows (overrides output.csv; - for stdout)\n"
        "  -t, --threads N        threads computing gradients (overrides threads; 0 all cores)\n"
        "  -n, --check            check the configuration and the data, then exit\n"
        "  -q, --quiet            no progress line\n"
        "      --dump-config      print the effective configuration as YAML and exit\n"
        "      --keys             list every configuration key with its default and exit\n"
        "      --log-level LEVEL  error, warn, notice (default), info or debug\n"
        "  -h, --help             this help\n"
        "  -V, --version          the version\n"
        "\n"
        "Prints one summary line on standard output when the run ends.\n"
        "Exit status: 0 success, 1 bad configuration or data, 2 bad usage,\n"
        "3 the run failed, 130 interrupted (the CSV holds the rows so far).\n"
        "Every configuration key, its default and bounds: fasgd-sim --keys.\n", out);
}

/*  The CSV at path: stdout for "-"; a file is written under a temporary
    name (left in tmp) and renamed at the end, so a finished CSV is never
    half-written; anything else that exists (/dev/null, a FIFO) is
    written in place, never replaced. NULL after logging the cause.  */
static FILE *
s_csv_open (const char *path, char *tmp, size_t tmplen)
{
    if (strcmp (path, "-") == 0)
        return stdout;
    FILE *csv;
    struct stat st;
    if (stat (path, &st) == 0 && !S_ISREG (st.st_mode))
        csv = fopen (path, "w");
    else {
        snprintf (tmp, tmplen, "%s.tmp", path);
        csv = fopen (tmp, "w");
    }
    if (!csv)
        fasgd_log_error ("cannot write %s: %s", *tmp ? tmp : path, strerror (errno));
    return csv;
}

/*  The configuration: the file, the --set options, then -o, -t and -q.
    Returns the count of errors, each said on stderr.  */
static int
s_config_load (const fasgd_cli_t *cli, const char *output, const char *threads, int quiet,
               fasgd_sim_cfg_t *cfg)
{
    int errors = fasgd_cli_config_load (cli, fasgd_sim_cfg_keys, cfg);
    if (output) {
        char kv [FASGD_PATH_LEN + 16];
        snprintf (kv, sizeof kv, "output.csv=\"%s\"", output);
        errors += fasgd_config_set (fasgd_sim_cfg_keys, cfg, kv, stderr);
    }
    if (threads) {
        char kv [64];
        snprintf (kv, sizeof kv, "threads=%s", threads);
        errors += fasgd_config_set (fasgd_sim_cfg_keys, cfg, kv, stderr);
    }
    if (quiet)
        cfg->progress = 0;
    return errors;
}

/*  The summary lines of a finished (or interrupted) run.  */
static void
s_summary (FILE *out, const fasgd_sim_cfg_t *cfg, const fasgd_sim_stats_t *st, const fasgd_dataset_t *test,
           double wall)
{
    fprintf (out,
             "fasgd-sim: %s clients=%d batch=%d lr=%g: %llu iterations, T=%llu, "
             "validation error %.4f (best %.4f), nll %.4f, fetches %llu/%llu, pushes %llu/%llu, "
             "%.1f MB moved, mean tau %.2f, max tau %llu, %.1f s wall (%.0f it/s), peak %zu copies of theta\n",
             fasgd_rule_kind_name (cfg->rule.name), cfg->clients, cfg->batch, cfg->rule.lr,
             (unsigned long long) st->iterations, (unsigned long long) st->timestamp,
             st->val_error, st->best_error, st->val_nll,
             (unsigned long long) st->fetches, (unsigned long long) st->potential_fetches,
             (unsigned long long) st->pushes, (unsigned long long) st->potential_pushes,
             (double) st->bytes / 1e6, st->tau_mean, (unsigned long long) st->tau_max, wall, wall > 0 ? (double) st->iterations / wall : 0,
             st->peak_snapshots);
    if (test)
        fprintf (out, "fasgd-sim: test error %.4f, nll %.4f (%u examples)\n",
                 st->test_error, st->test_nll, test->n);
    if (cfg->mode == FASGD_SIM_EVENTS)
        fprintf (out, "fasgd-sim: simulated time %.3f s\n", st->sim_time);
    if (st->rejected)
        fprintf (out, "fasgd-sim: %llu gradients with NaN or Inf were refused\n",
                 (unsigned long long) st->rejected);
}

/*  What the command line asks beyond fasgd_cli's part.  */
typedef struct {
    const char *output, *threads;   /* -o, -t: NULL when not given */
    int check, quiet;
} s_opts_t;

/*  The command line into cli and o: -1 to go on, else the exit status
    (--help, --version, --keys, or bad usage after saying why).  */
static int
s_options (fasgd_cli_t *cli, s_opts_t *o, int argc, char **argv)
{
    static const struct option longopts [] = {
        { "config", required_argument, NULL, 'c' },
        { "set", required_argument, NULL, 's' },
        { "output", required_argument, NULL, 'o' },
        { "threads", required_argument, NULL, 't' },
        { "check", no_argument, NULL, 'n' },
        { "quiet", no_argument, NULL, 'q' },
        { "dump-config", no_argument, NULL, 'D' },
        { "keys", no_argument, NULL, 'K' },
        { "log-level", required_argument, NULL, 'L' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    int opt, rc;
    while ((opt = getopt_long (argc, argv, "c:s:o:t:nqhV", longopts, NULL)) != -1) {
        switch (opt) {
            case 'c': cli->config = optarg; break;
            case 's':
                if ((rc = fasgd_cli_add_set (cli, optarg)) != 0)
                    return rc;
                break;
            case 'o': o->output = optarg; break;
            case 't': o->threads = optarg; break;
            case 'n': o->check = 1; break;
            case 'q': o->quiet = 1; break;
            case 'D': cli->dump = 1; break;
            case 'K':
                fasgd_config_describe (fasgd_sim_cfg_keys, stdout);
                return 0;
            case 'L':
                if ((rc = fasgd_cli_log_level_set (cli, optarg)) != 0)
                    return rc;
                break;
            case 'h': s_usage (stdout); return 0;
            case 'V': return fasgd_cli_version (cli);
            default:
                return fasgd_cli_bad_option (cli);
        }
    }
    if ((rc = fasgd_cli_finish (cli, argc, argv, optind)) != 0)
        return rc;
    return -1;
}

/*  A run's data and simulator, freed together.  */
typedef struct {
    fasgd_dataset_t *train, *valid, *test;
    fasgd_sim_t *sim;
} s_run_t;

static void
s_run_free (s_run_t *r)
{
    fasgd_sim_destroy (&r->sim);
    fasgd_dataset_destroy (&r->train);
    fasgd_dataset_destroy (&r->valid);
    fasgd_dataset_destroy (&r->test);
}

/*  The data sets and the simulator over them: 0, or -1 after saying why.  */
static int
s_run_open (s_run_t *r, const fasgd_sim_cfg_t *cfg)
{
    if (fasgd_data_cfg_load (&cfg->data, &cfg->model, cfg->seed, &r->train, &r->valid) != 0
        || fasgd_data_cfg_load_test (&cfg->data, &cfg->model, &r->valid, &r->test) != 0)
        return -1;
    /*  The simulator's own threads do the parallel work; BLAS inside each
        gradient stays on one core, which also keeps results independent of
        the thread count.  */
    openblas_set_num_threads (1);
    r->sim = fasgd_sim_new (cfg, r->train, r->valid);
    if (r->sim && r->test && fasgd_sim_set_test (r->sim, r->test) != 0)
        fasgd_sim_destroy (&r->sim);
    return r->sim ? 0 : -1;
}

/*  -n: what was checked, on stdout.  */
static void
s_check_report (const char *config, const s_run_t *r)
{
    char tests [48] = "";
    if (r->test)
        snprintf (tests, sizeof tests, " and %u test", r->test->n);
    printf ("fasgd-sim: %s: configuration OK (%u training%s %u validation%s examples, %zu parameters)\n",
            config, r->train->n, r->test ? "," : " and", r->valid->n, tests, fasgd_sim_nparams (r->sim));
}

/*  The run, its CSV and its summary, stopped early by SIGINT or SIGTERM:
    the exit status (0, 1 no CSV, 3 the CSV not written, 130 interrupted).  */
static int
s_simulate (s_run_t *r, const fasgd_sim_cfg_t *cfg)
{
    FILE *csv = NULL;
    char tmp [FASGD_PATH_LEN + 16] = "";
    if (*cfg->csv && !(csv = s_csv_open (cfg->csv, tmp, sizeof tmp)))
        return 1;
    s_running = r->sim;
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);

    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    int rc = fasgd_sim_run (r->sim, csv);
    clock_gettime (CLOCK_MONOTONIC, &t1);
    double wall = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    int status = rc == 0 ? 0 : 130;
    if (csv && csv != stdout) {
        if (fclose (csv) != 0 || (*tmp && rename (tmp, cfg->csv) != 0)) {
            fasgd_log_error ("cannot write %s: %s", cfg->csv, strerror (errno));
            status = 3;
        }
    }
    s_summary (csv == stdout ? stderr : stdout, cfg, fasgd_sim_stats (r->sim), r->test, wall);
    s_running = NULL;
    return status;
}

/*  The options, the configuration, the data and the simulator, then
    -n's report or the run.  */
int
main (int argc, char **argv)
{
    static fasgd_cli_t cli = { .prog = "fasgd-sim" };
    s_opts_t o = { 0 };
    fasgd_log_open (argv [0], 0, FASGD_LOG_NOTICE);
    int status = s_options (&cli, &o, argc, argv);
    if (status >= 0)
        return status;

    fasgd_sim_cfg_t cfg;
    status = fasgd_cli_config_errors (&cli, s_config_load (&cli, o.output, o.threads, o.quiet, &cfg));
    if (status != 0)
        return status;
    if (fasgd_cli_dump (&cli, fasgd_sim_cfg_keys, &cfg))
        return 0;
    s_run_t r = { 0 };
    if (s_run_open (&r, &cfg) != 0)
        status = 1;
    else if (o.check)
        s_check_report (cli.config, &r);
    else
        status = s_simulate (&r, &cfg);
    s_run_free (&r);
    return status;
}
