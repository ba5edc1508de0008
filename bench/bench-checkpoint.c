/*  bench-checkpoint: what the staleness clock's running sums cost a
    checkpoint. fasgd-server writes, with θ, the rule's state, the guard's
    state and the loss check's saved θ, up to FASGD_CHECKPOINT_CLOCK_SUMS
    (65,536) of the clock's sums, 512 KiB (FASGDCK5). This writes a
    fasgd (std) checkpoint of D parameters as the server does
    (fasgd_checkpoint_write: a temporary file, fsync, rename, the folder
    synced) with no clock and with a full one, in turn, R rounds (the
    order alternating round by round), and prints each write's
    milliseconds, the paired ratio of every round and the medians.

    Usage: bench-checkpoint [--dim D] [--rounds R] [--dir DIR]
      --dim D     parameters (default 1000000)
      --rounds R  rounds of one write each way (default 9)
      --dir DIR   where the checkpoint is written (default a new folder
                  under $TMPDIR or /tmp, removed at the end): the disk
                  measured is the one under DIR  */
#include "bench-util.h"

#include "checkpoint.h"
#include "rules.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_ROUNDS_MAX 1000

static void
s_usage (FILE *f)
{
    fprintf (f, "usage: bench-checkpoint [--dim D] [--rounds R] [--dir DIR]\n"
             "  --dim D     parameters (default 1000000)\n"
             "  --rounds R  rounds of one write each way (default 9)\n"
             "  --dir DIR   where the checkpoint is written (default a new folder under\n"
             "              $TMPDIR or /tmp, removed at the end)\n");
}

/*  Milliseconds one checkpoint write takes, nclock sums of the clock
    with it; the file's size in *bytes. Exits 1 if the write fails.  */
static double
s_write (const char *path, const fasgd_checkpoint_desc_t *desc, uint64_t T, const float *theta, size_t n,
         const void *state, size_t state_len, const fasgd_checkpoint_guard_t *guard, const float *saved,
         const double *clock, size_t nclock, long long *bytes)
{
    char err [512];
    double t0 = fasgd_bench_now ();
    if (fasgd_checkpoint_write (path, desc, T, theta, n, state, state_len, guard, saved, clock, nclock, err,
                                sizeof err) != 0) {
        fprintf (stderr, "bench-checkpoint: %s\n", err);
        exit (1);
    }
    double ms = (fasgd_bench_now () - t0) * 1e3;
    struct stat st;
    *bytes = stat (path, &st) == 0 ? (long long) st.st_size : -1;
    return ms;
}

int
main (int argc, char *argv [])
{
    long dim = 1000000, rounds = 9;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "-h") == 0 || strcmp (argv [i], "--help") == 0) {
            s_usage (stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf (stderr, "bench-checkpoint: unknown or incomplete argument '%s'\n", argv [i]);
            s_usage (stderr);
            return 2;
        }
        if (strcmp (argv [i], "--dim") == 0)
            dim = fasgd_bench_int_arg ("bench-checkpoint", "--dim", argv [++i], 1, 1L << 28);
        else if (strcmp (argv [i], "--rounds") == 0)
            rounds = fasgd_bench_int_arg ("bench-checkpoint", "--rounds", argv [++i], 1, S_ROUNDS_MAX);
        else if (strcmp (argv [i], "--dir") == 0)
            dir = argv [++i];
        else {
            fprintf (stderr, "bench-checkpoint: unknown argument '%s'\n", argv [i]);
            s_usage (stderr);
            return 2;
        }
    }
    char made [4096] = "";
    if (!dir) {
        const char *tmp = getenv ("TMPDIR");
        snprintf (made, sizeof made, "%s/bench-checkpoint.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp (made)) {
            perror ("bench-checkpoint: mkdtemp");
            return 1;
        }
        dir = made;
    }
    char path [4200];
    snprintf (path, sizeof path, "%s/bench.ckpt", dir);

    /*  A fasgd (std) rule with statistics of its own, as a server's
        after two pushes; one tensor of D values.  */
    size_t n = (size_t) dim;
    fasgd_rule_params_t rp;
    fasgd_rule_params_default (&rp);
    char err [256];
    fasgd_rule_t *rule = fasgd_rule_new (&rp, n, err, sizeof err);
    float *theta = malloc (n * sizeof *theta), *g = malloc (n * sizeof *g), *saved = malloc (n * sizeof *saved);
    if (!rule || !theta || !g || !saved) {
        fprintf (stderr, "bench-checkpoint: %s\n", rule ? "out of memory" : err);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        theta [i] = (float) (i % 17) * 0.125f - 1.0f;
        g [i] = (float) (i % 5) * 0.01f - 0.02f;
    }
    fasgd_rule_apply (rule, theta, g, 0, NULL);
    fasgd_rule_apply (rule, theta, g, 1, NULL);
    memcpy (saved, theta, n * sizeof *saved);
    size_t state_len = fasgd_rule_state_size (rule);
    void *state = malloc (state_len);
    fasgd_checkpoint_desc_t desc;
    memset (&desc, 0, sizeof desc);
    desc.rule = FASGD_RULE_FASGD;
    desc.params = n;
    desc.state_len = state_len;
    desc.ntensors = 1;
    snprintf (desc.tensors [0].name, sizeof desc.tensors [0].name, "theta");
    desc.tensors [0].ndim = 1;
    desc.tensors [0].dims [0] = n;
    /*  The clock at T = 10^6, every update counted one: W[T − n + 1 .. T].  */
    const uint64_t T = 1000000;
    size_t nclock = FASGD_CHECKPOINT_CLOCK_SUMS;
    double *clock = malloc (nclock * sizeof *clock);
    if (!state || !clock) {
        fprintf (stderr, "bench-checkpoint: out of memory\n");
        return 1;
    }
    fasgd_rule_state_get (rule, state);
    for (size_t i = 0; i < nclock; i++)
        clock [i] = (double) (T - nclock + 1 + i);
    fasgd_checkpoint_guard_t guard;
    memset (&guard, 0, sizeof guard);

    char cpu [256];
    fasgd_bench_cpu_model (cpu, sizeof cpu);
    printf ("bench-checkpoint: D = %ld (fasgd std), %ld rounds, written under %s; %s, %ld CPUs\n", dim, rounds,
            dir, cpu, sysconf (_SC_NPROCESSORS_ONLN));
    printf ("round  no clock (ms)  clock (ms)  ratio\n");
    double *a = malloc ((size_t) rounds * sizeof *a), *b = malloc ((size_t) rounds * sizeof *b),
           *r = malloc ((size_t) rounds * sizeof *r);
    long long bytes_a = 0, bytes_b = 0;
    if (!a || !b || !r) {
        fprintf (stderr, "bench-checkpoint: out of memory\n");
        return 1;
    }
    /*  One write each way first, unmeasured: the page cache and the file
        system's blocks as they will be.  */
    s_write (path, &desc, T, theta, n, state, state_len, &guard, saved, clock, nclock, &bytes_b);
    s_write (path, &desc, T, theta, n, state, state_len, &guard, saved, NULL, 0, &bytes_a);
    for (long k = 0; k < rounds; k++) {
        if (k % 2 == 0) {
            a [k] = s_write (path, &desc, T, theta, n, state, state_len, &guard, saved, NULL, 0, &bytes_a);
            b [k] = s_write (path, &desc, T, theta, n, state, state_len, &guard, saved, clock, nclock, &bytes_b);
        }
        else {
            b [k] = s_write (path, &desc, T, theta, n, state, state_len, &guard, saved, clock, nclock, &bytes_b);
            a [k] = s_write (path, &desc, T, theta, n, state, state_len, &guard, saved, NULL, 0, &bytes_a);
        }
        r [k] = b [k] / a [k];
        printf ("%5ld  %13.2f  %10.2f  %5.3f\n", k + 1, a [k], b [k], r [k]);
    }
    double lo_r, hi_r;
    double ma = fasgd_bench_median (a, (int) rounds), mb = fasgd_bench_median (b, (int) rounds),
           mr = fasgd_bench_median_range (r, (int) rounds, &lo_r, &hi_r);
    printf ("median %13.2f  %10.2f  %5.3f (paired ratios %.3f to %.3f)\n", ma, mb, mr, lo_r, hi_r);
    printf ("file: %lld bytes without the clock, %lld with it (+%.1f%%)\n", bytes_a, bytes_b,
            100.0 * (double) (bytes_b - bytes_a) / (double) bytes_a);
    unlink (path);
    if (*made)
        rmdir (made);
    free (a);
    free (b);
    free (r);
    free (clock);
    free (state);
    free (theta);
    free (g);
    free (saved);
    fasgd_rule_destroy (&rule);
    return 0;
}
